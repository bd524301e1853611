//! Choosing a block's attestations: a greedy weighted maximum coverage over the votes the state
//! has not yet counted.
//!
//! **What is covered.** `process_attestation` pays the proposer, for every attester, the weight
//! of each participation flag (timely source 14, target 26, head 14) the attestation newly sets,
//! times the attester's base reward (proportional to its effective balance in increments). So
//! the elements to cover are (validator, flag) pairs of the attestation's target epoch, each
//! worth `increments × flag weight`, and an element already set in the state's participation,
//! or by an attestation chosen before, is worth nothing. Two attestations of the same slot and
//! committee with different data (another head vote) cover the same validators, so a pair
//! covered by one is not counted for the other. The same walk of bits that pays rewards feeds
//! fork choice, so covering the most new weight also carries the most new fork-choice votes.
//!
//! **Where it is counted.** Committees of one epoch are disjoint, so a (validator, flag) pair is
//! a (slot, committee, position, flag) quadruple: coverage is kept as three bitsets per
//! committee (one per flag), shared by every data of that slot, and the gain of an aggregate is
//! a few word operations: `bits & !covered[flag]`, counted with `popcount` at the committee's
//! most common increment count plus corrections for the few members whose balance differs.
//!
//! **What is chosen.** An Electra block carries at most `MAX_ATTESTATIONS_ELECTRA` on-chain
//! aggregates, each one data over any committees of its slot, at most one network aggregate per
//! committee. The candidates are the data; the value of a data is the sum over its committees of
//! the best aggregate's gain. That value only falls as coverage grows (each committee's best
//! gain does), so the greedy can be lazy: keep the values as upper bounds in a max-heap,
//! recompute the top, and take it when it still beats the next bound. Taking a data picks each
//! committee's best aggregate, marks its pairs covered and builds the on-chain aggregate
//! (`compute_on_chain_aggregate`); the data goes back on the heap, since a second attestation of
//! the same data can cover what the first's overlapping aggregates left. Greedy maximum coverage
//! is within `1 - 1/e` of the optimum, and exact on the common case of one data per slot.
//!
//! Only attestations `process_attestation` accepts on the state are candidates: the target epoch
//! is the previous or current one, `data.slot + MIN_ATTESTATION_INCLUSION_DELAY <= state.slot`,
//! the source is the justified checkpoint the state expects, and the committees were read from
//! the state's own shuffling.
//!
//! **Gloas.** On a Gloas state the flags are Gloas's: the head flag also needs the vote's
//! payload signal (`data.index`) to match the parent's payload availability, and a vote of its
//! own block's slot with index 1 is invalid (skipped). Before Gloas an index other than 0 is
//! invalid (skipped).
//!
//! [spec]: electra/beacon-chain.md#modified-process_attestation, electra/validator.md#attestations,
//! gloas/beacon-chain.md#modified-get_attestation_participation_flag_indices

use std::{cmp::Reverse, collections::BinaryHeap};

use rustc_hash::FxHashMap;
use state_processing::{
    Caches, EffectiveBalances, StateRef,
    common::{PARTICIPATION_FLAG_WEIGHTS, get_current_epoch, get_previous_epoch, has_flag},
    gloas,
    per_block::{self, AttestationInvalid},
};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{CommitteeIndex, EthSpec, Slot, electra::Attestation};

use crate::{
    OpPoolError,
    attestation_storage::{AttestationStorage, CompactAggregate, DataEntry, on_chain_aggregate},
    bits::Bits,
};

/// The state's view of one committee: what each member is worth and which flags are covered.
struct CommitteeCoverage {
    /// The most common effective balance of the members, in increments (0 when the most
    /// common is outside what the snapshot's byte holds).
    base: u64,
    /// Members whose increments may differ from `base`.
    irregular: Bits,
    /// The increments of the irregular members, zero for the others (at most
    /// `MAX_EFFECTIVE_BALANCE_ELECTRA / EFFECTIVE_BALANCE_INCREMENT`, 2048).
    increments: Vec<u16>,
    /// Per flag index, the members whose flag is set (in the state or by a chosen attestation).
    covered: [Bits; 3],
}

impl CommitteeCoverage {
    /// The summed increments of the members in `mask` (one word at position `w`).
    #[inline]
    fn weight_of_word(&self, w: usize, mask: u64) -> u64 {
        let mut sum = self.base * u64::from(mask.count_ones());
        let mut odd = mask & self.irregular.words()[w];
        while odd != 0 {
            let p = w * 64 + odd.trailing_zeros() as usize;
            odd &= odd - 1;
            // `sum` already counts `base` for `p`; replace it with the member's own count.
            sum = sum - self.base + u64::from(self.increments[p]);
        }
        sum
    }

    /// The reward weight `bits` would newly earn with participation `flags`.
    fn gain(&self, bits: &Bits, flags: u8) -> u64 {
        let mut total = 0;
        for (flag, weight) in PARTICIPATION_FLAG_WEIGHTS.iter().enumerate() {
            if !has_flag(flags, flag) {
                continue;
            }
            let covered = self.covered[flag].words();
            let sum: u64 = bits
                .words()
                .iter()
                .zip(covered)
                .enumerate()
                .map(|(w, (b, c))| self.weight_of_word(w, b & !c))
                .sum();
            total += weight * sum;
        }
        total
    }

    fn cover(&mut self, bits: &Bits, flags: u8) {
        for (flag, covered) in self.covered.iter_mut().enumerate() {
            if has_flag(flags, flag) {
                covered.union_with(bits);
            }
        }
    }
}

/// One data that `process_attestation` accepts on the state, with its committees.
struct Candidate<'a> {
    entry: &'a DataEntry,
    /// The participation flags an attestation of this data earns at the block's slot.
    flags: u8,
    /// `(coverage index, committee index, stored aggregates)`, ascending committee index.
    committees: Vec<(usize, CommitteeIndex, &'a [CompactAggregate])>,
}

impl Candidate<'_> {
    /// `(committee position, aggregate position, gain)`: each committee's best aggregate, given
    /// the coverage, where it gains anything.
    fn best<'c>(
        &'c self,
        coverage: &'c [CommitteeCoverage],
    ) -> impl Iterator<Item = (usize, usize, u64)> + 'c {
        self.committees
            .iter()
            .enumerate()
            .filter_map(move |(k, (c, _, aggregates))| {
                let cov = &coverage[*c];
                aggregates
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (i, cov.gain(&a.bits, self.flags)))
                    .max_by_key(|&(i, gain)| (gain, Reverse(i)))
                    .filter(|&(_, gain)| gain > 0)
                    .map(|(i, gain)| (k, i, gain))
            })
    }

    fn value(&self, coverage: &[CommitteeCoverage]) -> u64 {
        self.best(coverage).map(|(_, _, gain)| gain).sum()
    }
}

/// Every validator's participation flags of one epoch and effective balance, one byte each, read
/// from the state in index order: the flags in the low 3 bits, in the high 5 the increments
/// minus [`INCREMENTS_OFFSET`], or [`LOOK_UP`] for a count outside `16..=46` (read again from
/// the effective balances: only compounding validators above 46 ETH, and validators too poor
/// to be active).
///
/// Committees are shuffled, so reading their members straight from the state's lists is one
/// random access into each of two registry-sized structures per member (a million of each on
/// mainnet, nearly all cache misses); one sequential pass builds this array, which at one byte
/// a validator stays in the second-level cache for the random reads.
struct ParticipationSnapshot {
    entries: Vec<u8>,
}

/// The increment count that the code 0 stands for (`EJECTION_BALANCE`: no active validator has
/// less).
const INCREMENTS_OFFSET: u64 = 16;
/// The code of an increment count outside the range the byte holds.
const LOOK_UP: u8 = 31;

impl ParticipationSnapshot {
    fn new<E: EthSpec>(
        state: &StateRef<'_, E>,
        effective_balances: &EffectiveBalances,
        is_current: bool,
    ) -> Result<Self, OpPoolError> {
        let participation = if is_current {
            state.current_epoch_participation
        } else {
            state.previous_epoch_participation
        };
        // The SSZ encoding of a list of `uint8` is the values: a copy of the list's pages.
        let mut entries = participation.as_ssz_bytes();
        for (i, entry) in entries.iter_mut().enumerate() {
            let balance = match effective_balances.get(i as u64) {
                Some(balance) => balance,
                None => effective_balance::<E>(state, effective_balances, i as u64)?,
            };
            let code =
                match (balance / E::EFFECTIVE_BALANCE_INCREMENT).checked_sub(INCREMENTS_OFFSET) {
                    Some(c) if c < u64::from(LOOK_UP) => c as u8,
                    _ => LOOK_UP,
                };
            *entry = code << 3 | (*entry & 0b111);
        }
        Ok(Self { entries })
    }
}

fn effective_balance<E: EthSpec>(
    state: &StateRef<'_, E>,
    effective_balances: &EffectiveBalances,
    index: u64,
) -> Result<u64, OpPoolError> {
    match effective_balances.get(index) {
        Some(balance) => Ok(balance),
        // Appended since the snapshot of effective balances was taken.
        None => Ok(state
            .validators
            .get(index as usize)
            .ok_or(state_processing::Error::UnknownValidator {
                index,
                len: state.validators.len(),
            })?
            .effective_balance),
    }
}

/// Reads what the state says about one committee's members.
fn committee_coverage<E: EthSpec>(
    state: &StateRef<'_, E>,
    effective_balances: &EffectiveBalances,
    snapshot: &ParticipationSnapshot,
    members: &[u64],
) -> Result<CommitteeCoverage, OpPoolError> {
    let n = members.len();
    // The reads first, in a loop of independent loads, so that their cache misses overlap.
    let entries = members
        .iter()
        .map(|&v| snapshot.entries.get(v as usize).copied())
        .collect::<Option<Vec<u8>>>()
        .ok_or(state_processing::Error::UnknownValidator {
            index: members.iter().copied().max().unwrap_or_default(),
            len: snapshot.entries.len(),
        })?;
    // Boyer–Moore majority vote over the balance codes: on a real registry nearly every member
    // has the same balance.
    let (mut base_code, mut votes) = (0u8, 0usize);
    for &entry in &entries {
        let code = entry >> 3;
        if votes == 0 {
            base_code = code;
        }
        votes = if code == base_code {
            votes + 1
        } else {
            votes - 1
        };
    }
    // A committee of mostly large compounding validators has no common code: every member is
    // then irregular, and `base` is zero.
    let base = if base_code == LOOK_UP {
        0
    } else {
        u64::from(base_code) + INCREMENTS_OFFSET
    };
    // The bitsets a word at a time, without branches.
    let words = n.div_ceil(64);
    let mut flag_words = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
    let mut irregular_words = vec![0u64; words];
    for (w, chunk) in entries.chunks(64).enumerate() {
        // Bit `f` of an entry is participation flag `f` (flag indices are bit positions).
        let mut flags = [0u64; 3];
        let mut odd = 0u64;
        for (i, &entry) in chunk.iter().enumerate() {
            let code = entry >> 3;
            for (f, word) in flags.iter_mut().enumerate() {
                *word |= u64::from((entry >> f) & 1) << i;
            }
            odd |= u64::from(code != base_code || code == LOOK_UP) << i;
        }
        for (f, word) in flags.into_iter().enumerate() {
            flag_words[f][w] = word;
        }
        irregular_words[w] = odd;
    }
    let irregular = Bits::from_words(irregular_words, n);
    // Only the irregular members' counts are ever read.
    let mut increments = vec![0u16; n];
    for p in irregular.iter_ones() {
        let code = entries[p] >> 3;
        let count = if code == LOOK_UP {
            effective_balance::<E>(state, effective_balances, members[p])?
                / E::EFFECTIVE_BALANCE_INCREMENT
        } else {
            u64::from(code) + INCREMENTS_OFFSET
        };
        increments[p] = u16::try_from(count).unwrap_or(u16::MAX);
    }
    let [source, target, head] = flag_words;
    let covered = [
        Bits::from_words(source, n),
        Bits::from_words(target, n),
        Bits::from_words(head, n),
    ];
    Ok(CommitteeCoverage {
        base,
        irregular,
        increments,
        covered,
    })
}

/// `get_attestation_participation_flag_indices` of the state's fork, for a block built on
/// `state`: Gloas's with the parent's slot (`latest_execution_payload_bid.slot`, the bid the
/// block replaces); before Gloas, Electra's, with a nonzero `data.index` invalid.
fn participation_flags<E: EthSpec>(
    state: &StateRef<'_, E>,
    data: &types::phase0::AttestationData,
    inclusion_delay: u64,
) -> Result<u8, AttestationInvalid> {
    if state.fork_name.gloas_enabled() {
        let parent_slot = state.gloas()?.latest_execution_payload_bid.slot;
        gloas::per_block::get_attestation_participation_flag_indices(
            state,
            data,
            inclusion_delay,
            parent_slot,
        )
    } else if data.index != 0 {
        Err(AttestationInvalid::NonZeroDataIndex(data.index))
    } else {
        per_block::get_attestation_participation_flag_indices(state, data, inclusion_delay)
    }
}

/// The attestations to put in a block built on `state` (a state at the block's slot), at most
/// `MAX_ATTESTATIONS_ELECTRA`, in the order chosen (largest gain first).
pub(crate) fn get_attestations_for_block<E: EthSpec>(
    storage: &AttestationStorage,
    state: &StateRef<'_, E>,
    caches: &mut Caches,
) -> Result<Vec<Attestation<E>>, OpPoolError> {
    let slot: Slot = *state.slot;
    let current = get_current_epoch(state);
    let previous = get_previous_epoch(state);
    let current_committees = caches.committees(state, current)?;
    let previous_committees = caches.committees(state, previous)?;
    let effective_balances = caches.effective_balances(state);
    // `[previous, current]`, built when a candidate of that epoch first needs it.
    let mut snapshots: [Option<ParticipationSnapshot>; 2] = [None, None];

    let mut coverage: Vec<CommitteeCoverage> = Vec::new();
    let mut coverage_index: FxHashMap<(Slot, CommitteeIndex), usize> = FxHashMap::default();
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    // Epoch by epoch (each reads its own participation snapshot, which then stays in cache), and
    // in a fixed order, so that equal gains are broken the same way on every node.
    let mut entries: Vec<&DataEntry> = storage.by_data.values().collect();
    entries.sort_by_key(|e| (e.data.target.epoch, e.data.slot, e.data.tree_hash_root()));
    for entry in entries {
        let data = &entry.data;
        let is_current = data.target.epoch == current;
        if !is_current && data.target.epoch != previous {
            continue;
        }
        if data.slot.saturating_add(E::MIN_ATTESTATION_INCLUSION_DELAY) > slot {
            continue;
        }
        let committees = if is_current {
            &current_committees
        } else {
            &previous_committees
        };
        if committees.seed() != entry.shuffling_seed {
            continue;
        }
        // A source the state does not expect makes the attestation invalid.
        let Ok(flags) = participation_flags(state, data, slot - data.slot) else {
            continue;
        };
        if flags == 0 {
            continue;
        }
        let mut chosen = Vec::with_capacity(entry.committees.len());
        for (&committee_index, aggregates) in &entry.committees {
            let Ok(members) = committees.get_beacon_committee(data.slot, committee_index) else {
                continue;
            };
            if aggregates.is_empty() || aggregates[0].bits.len() != members.len() {
                continue;
            }
            let c = match coverage_index.get(&(data.slot, committee_index)) {
                Some(&c) => c,
                None => {
                    let snapshot = match &mut snapshots[usize::from(is_current)] {
                        Some(snapshot) => snapshot,
                        empty => empty.insert(ParticipationSnapshot::new(
                            state,
                            &effective_balances,
                            is_current,
                        )?),
                    };
                    coverage.push(committee_coverage(
                        state,
                        &effective_balances,
                        snapshot,
                        members,
                    )?);
                    coverage_index.insert((data.slot, committee_index), coverage.len() - 1);
                    coverage.len() - 1
                }
            };
            chosen.push((c, committee_index, aggregates.as_slice()));
        }
        if !chosen.is_empty() {
            candidates.push(Candidate {
                entry,
                flags,
                committees: chosen,
            });
        }
    }

    let max = E::MaxAttestationsElectra::to_usize();
    let mut heap: BinaryHeap<(u64, Reverse<usize>)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.value(&coverage), Reverse(i)))
        .filter(|(value, _)| *value > 0)
        .collect();
    let mut out = Vec::with_capacity(max);
    while out.len() < max {
        let Some((_, Reverse(i))) = heap.pop() else {
            break;
        };
        let candidate = &candidates[i];
        let value = candidate.value(&coverage);
        if value == 0 {
            continue;
        }
        if let Some(&(next, _)) = heap.peek()
            && next > value
        {
            heap.push((value, Reverse(i)));
            continue;
        }
        let picks: Vec<(usize, usize)> =
            candidate.best(&coverage).map(|(k, a, _)| (k, a)).collect();
        let mut parts = Vec::with_capacity(picks.len());
        for &(k, a) in &picks {
            let (c, committee_index, aggregates) = candidate.committees[k];
            let aggregate = &aggregates[a];
            coverage[c].cover(&aggregate.bits, candidate.flags);
            parts.push((committee_index, &aggregate.bits, &aggregate.signature));
        }
        out.push(on_chain_aggregate::<E>(
            &candidate.entry.data,
            parts.into_iter(),
        )?);
        heap.push((value, Reverse(i)));
    }
    Ok(out)
}
