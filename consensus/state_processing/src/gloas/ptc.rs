//! The payload timeliness committee (PTC) [New in Gloas:EIP7732]: `get_ptc`, which reads the
//! state's `ptc_window`, and `compute_ptc`, which draws a slot's committee by effective balance
//! from the slot's beacon committees.
//!
//! [spec]: gloas/beacon-chain.md#new-get_ptc

use ethereum_hashing::hash_fixed;
use types::{
    Epoch, EthSpec, Gwei, Root, Slot, ValidatorIndex,
    signing::{DOMAIN_BEACON_ATTESTER, DOMAIN_PTC_ATTESTER},
    typenum::Unsigned,
};

use crate::{
    Caches, Error,
    common::{
        bytes_to_uint64, compute_epoch_at_slot, compute_start_slot_at_epoch,
        get_active_validator_indices, get_committee_count_per_slot_from_active_count,
        get_current_epoch, get_seed, sample_by_effective_balance, validator,
    },
    view::StateRef,
};

/// `get_ptc(state, slot)` [New in Gloas:EIP7732]: the payload timeliness committee of `slot`,
/// read from `state.ptc_window`, which holds the previous, the current and the next
/// `MIN_SEED_LOOKAHEAD` epochs. A slot outside that window is [`Error::EpochOutOfRange`] (the
/// spec's asserts), a slot before the Gloas fork [`Error::PtcBeforeFork`].
///
/// [spec]: gloas/beacon-chain.md#new-get_ptc
pub fn get_ptc<E: EthSpec>(
    state: &StateRef<'_, E>,
    slot: Slot,
) -> Result<Vec<ValidatorIndex>, Error> {
    let window = state.gloas()?.ptc_window;
    let epoch = compute_epoch_at_slot::<E>(slot);
    let state_epoch = get_current_epoch(state);
    let slots = E::slots_per_epoch();
    let out_of_range = Error::EpochOutOfRange {
        epoch,
        current: state_epoch,
    };
    // The previous epoch's PTCs are zeros right after `upgrade_to_gloas` (validator 0 would
    // be the whole committee of every pre-fork slot): no slot before the fork has a PTC. A
    // Gloas state's `fork.epoch` is the Gloas fork's epoch (consensus-specs #5652, in the
    // 1.7.0b4 vectors as `transition_rejects_pre_gloas_payload_attestation`).
    if epoch < state.fork.epoch {
        return Err(Error::PtcBeforeFork {
            epoch,
            fork_epoch: state.fork.epoch,
        });
    }
    let position = if epoch < state_epoch {
        // assert epoch + 1 == state_epoch
        if epoch + 1 != state_epoch {
            return Err(out_of_range);
        }
        slot % slots
    } else {
        // assert epoch <= state_epoch + MIN_SEED_LOOKAHEAD
        if epoch > state_epoch.saturating_add(E::MIN_SEED_LOOKAHEAD) {
            return Err(out_of_range);
        }
        (epoch - state_epoch + 1) * slots + slot % slots
    };
    let committee = window
        .get(position as usize)
        .ok_or(Error::Tree("ptc_window shorter than its slots".into()))?;
    Ok(committee.iter().copied().collect())
}

/// `MAX_RANDOM_VALUE` of the balance-weighted draws: `2**16 - 1`.
const MAX_RANDOM_VALUE: u64 = (1 << 16) - 1;

/// `compute_balance_weighted_acceptance`: whether the `i`-th draw of a balance-weighted
/// selection under `seed` accepts a candidate of `effective_balance`: the two bytes at
/// `i % 16 * 2` of `hash(seed + uint_to_bytes(i // 16))`, as a value up to `MAX_RANDOM_VALUE`,
/// against the candidate's share of `MAX_EFFECTIVE_BALANCE_ELECTRA`.
///
/// The selection loops below hash once per 16 draws and test with
/// [`accepts_with_random_value`]; this is the one-draw form.
///
/// [spec]: gloas/beacon-chain.md#new-compute_balance_weighted_selection
pub fn compute_balance_weighted_acceptance<E: EthSpec>(
    effective_balance: Gwei,
    seed: &Root,
    i: u64,
) -> bool {
    let random_bytes = random_bytes_at(seed, i / 16);
    let offset = (i % 16 * 2) as usize;
    accepts_with_random_value::<E>(
        effective_balance,
        bytes_to_uint64(&random_bytes[offset..offset + 2]),
    )
}

/// `effective_balance * MAX_RANDOM_VALUE >= MAX_EFFECTIVE_BALANCE_ELECTRA * random_value`.
#[inline]
fn accepts_with_random_value<E: EthSpec>(effective_balance: Gwei, random_value: u64) -> bool {
    effective_balance as u128 * MAX_RANDOM_VALUE as u128
        >= E::MAX_EFFECTIVE_BALANCE_ELECTRA as u128 * random_value as u128
}

/// `hash(seed + uint_to_bytes(block))`.
#[inline]
fn random_bytes_at(seed: &Root, block: u64) -> [u8; 32] {
    let mut input = [0u8; 40];
    input[..32].copy_from_slice(seed.as_slice());
    input[32..].copy_from_slice(&block.to_le_bytes());
    hash_fixed(&input)
}

/// `compute_balance_weighted_selection(state, indices, seed, size, shuffle_indices)` [New in
/// Gloas:EIP7732]: `size` indices of `indices` (repeats allowed) drawn by effective balance,
/// walking the candidates in order, or in the swap-or-not order of `seed` when
/// `shuffle_indices`. Effective balances are read through `effective_balance` (a flat array
/// in epoch processing, the registry otherwise). An empty `indices` is the spec's
/// `assert total > 0`: [`Error::NoCandidates`].
///
/// With `shuffle_indices` this is the draw of `compute_proposer_index` and
/// `get_next_sync_committee_indices` since Electra, which
/// [`crate::common::sample_by_effective_balance`] implements.
///
/// [spec]: gloas/beacon-chain.md#new-compute_balance_weighted_selection
pub fn compute_balance_weighted_selection<E: EthSpec>(
    indices: &[ValidatorIndex],
    seed: &Root,
    size: usize,
    shuffle_indices: bool,
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error>,
) -> Result<Vec<ValidatorIndex>, Error> {
    const WHAT: &str = "compute_balance_weighted_selection";
    if indices.is_empty() {
        return Err(Error::NoCandidates(WHAT));
    }
    if shuffle_indices {
        return sample_by_effective_balance::<E>(indices, seed, size, effective_balance);
    }
    let total = indices.len() as u64;
    let mut selected = Vec::with_capacity(size);
    let mut i: u64 = 0;
    let mut random_bytes = [0u8; 32];
    let mut next_index: u64 = 0;
    while selected.len() < size {
        let offset = (i % 16 * 2) as usize;
        if offset == 0 {
            random_bytes = random_bytes_at(seed, i / 16);
        }
        // `next_index = i % total`, kept without a division per draw.
        let candidate = indices[next_index as usize];
        let random_value = u16::from_le_bytes([random_bytes[offset], random_bytes[offset + 1]]);
        if accepts_with_random_value::<E>(effective_balance(candidate)?, random_value as u64) {
            selected.push(candidate);
        }
        i = i.checked_add(1).ok_or(Error::ArithmeticOverflow(WHAT))?;
        next_index += 1;
        if next_index == total {
            next_index = 0;
        }
    }
    Ok(selected)
}

/// The seed of `slot`'s PTC draw: `hash(get_seed(state, epoch, DOMAIN_PTC_ATTESTER) +
/// uint_to_bytes(slot))`, from the epoch's seed.
fn ptc_seed_at_slot(epoch_seed: &Root, slot: Slot) -> Root {
    Root::from(random_bytes_at(epoch_seed, slot))
}

/// The validators of every committee of `slot`, concatenated in committee-index order: one
/// contiguous range of the epoch's `shuffling`, since `compute_committee` cuts it into
/// consecutive slices.
fn slot_committees<E: EthSpec>(shuffling: &[ValidatorIndex], slot: Slot) -> &[ValidatorIndex] {
    let committees_per_slot = get_committee_count_per_slot_from_active_count::<E>(shuffling.len());
    let count = committees_per_slot * E::slots_per_epoch();
    let first = (slot % E::slots_per_epoch()) * committees_per_slot;
    let n = shuffling.len() as u64;
    // `n * (first + committees_per_slot)` cannot overflow: `n` is at most 2^40 and `count`
    // at most 64 * 32.
    let start = (n * first / count) as usize;
    let end = (n * (first + committees_per_slot) / count) as usize;
    &shuffling[start..end]
}

/// `compute_ptc(state, slot)` for a slot whose epoch's committee `shuffling` (the active
/// validators in `compute_committee` order) and PTC seed are known: the balance-weighted draw
/// of `PTC_SIZE` members, in order and without shuffling, from the slot's committees.
fn compute_ptc_from_shuffling<E: EthSpec>(
    shuffling: &[ValidatorIndex],
    ptc_epoch_seed: &Root,
    slot: Slot,
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error>,
) -> Result<Vec<ValidatorIndex>, Error> {
    compute_balance_weighted_selection::<E>(
        slot_committees::<E>(shuffling, slot),
        &ptc_seed_at_slot(ptc_epoch_seed, slot),
        E::PtcSize::to_usize(),
        false,
        effective_balance,
    )
}

/// `compute_ptc(state, slot)` for every slot of `epoch`, from the epoch's committee
/// `shuffling` and every validator's effective balance (`effective_balances`, by index), drawn
/// in parallel (one slot per task).
///
/// The draws read the balances in the shuffled order, at random: where every balance is a
/// whole number of increments below 2^16 of them (always, in a state the spec produced), they
/// are read from a table of increments four times smaller than the balances, and compared
/// exactly as the spec does, scaled down by the increment.
pub(crate) fn compute_epoch_ptcs<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
    shuffling: &[ValidatorIndex],
    effective_balances: &[Gwei],
) -> Result<Vec<Vec<ValidatorIndex>>, Error> {
    if shuffling.is_empty() {
        return Err(Error::NoActiveValidators(epoch));
    }
    let seed = get_seed(state, epoch, DOMAIN_PTC_ATTESTER);
    let start_slot = compute_start_slot_at_epoch::<E>(epoch);
    let increments = balance_increments::<E>(effective_balances);
    crate::parallel::SECTIONS.map_collect(0..E::slots_per_epoch(), |i| {
        let slot = start_slot.saturating_add(i);
        match &increments {
            Some(increments) => select_ptc_by_increments::<E>(
                slot_committees::<E>(shuffling, slot),
                &ptc_seed_at_slot(&seed, slot),
                increments,
            ),
            None => compute_ptc_from_shuffling::<E>(shuffling, &seed, slot, |index| {
                effective_balances
                    .get(index as usize)
                    .copied()
                    .ok_or(Error::UnknownValidator {
                        index,
                        len: effective_balances.len(),
                    })
            }),
        }
    })
}

/// Every effective balance in increments, if each is a whole number of them below 2^16 and
/// `MAX_EFFECTIVE_BALANCE_ELECTRA` is too.
fn balance_increments<E: EthSpec>(effective_balances: &[Gwei]) -> Option<Vec<u16>> {
    let increment = E::EFFECTIVE_BALANCE_INCREMENT;
    if increment == 0 || !E::MAX_EFFECTIVE_BALANCE_ELECTRA.is_multiple_of(increment) {
        return None;
    }
    effective_balances
        .iter()
        .map(|&balance| {
            if balance.is_multiple_of(increment) {
                u16::try_from(balance / increment).ok()
            } else {
                None
            }
        })
        .collect()
}

/// [`compute_balance_weighted_selection`] of `PTC_SIZE` in order (no shuffling) with the
/// balances in increments: `eb * MAX_RANDOM_VALUE >= MAX_EFFECTIVE_BALANCE_ELECTRA *
/// random_value` divided through by the increment, which both sides are multiples of.
fn select_ptc_by_increments<E: EthSpec>(
    candidates: &[ValidatorIndex],
    seed: &Root,
    increments: &[u16],
) -> Result<Vec<ValidatorIndex>, Error> {
    const WHAT: &str = "compute_balance_weighted_selection";
    if candidates.is_empty() {
        return Err(Error::NoCandidates(WHAT));
    }
    let max_increments = E::MAX_EFFECTIVE_BALANCE_ELECTRA / E::EFFECTIVE_BALANCE_INCREMENT;
    let size = E::PtcSize::to_usize();
    let mut selected = Vec::with_capacity(size);
    let mut block: u64 = 0;
    'draws: loop {
        let random_bytes = random_bytes_at(seed, block);
        let first = (block as usize * 16) % candidates.len();
        for (offset, pair) in random_bytes.chunks_exact(2).enumerate() {
            // `next_index = i % total` with `i = block * 16 + offset`.
            let mut next = first + offset;
            if next >= candidates.len() {
                next %= candidates.len();
            }
            let candidate = candidates[next];
            let increments = *increments
                .get(candidate as usize)
                .ok_or(Error::UnknownValidator {
                    index: candidate,
                    len: increments.len(),
                })? as u64;
            let random_value = u16::from_le_bytes([pair[0], pair[1]]) as u64;
            if increments * MAX_RANDOM_VALUE >= max_increments * random_value {
                selected.push(candidate);
                if selected.len() == size {
                    break 'draws;
                }
            }
        }
        block = block
            .checked_add(1)
            .ok_or(Error::ArithmeticOverflow(WHAT))?;
    }
    Ok(selected)
}

/// The committee shuffling of `epoch`: `active_indices` (`get_active_validator_indices(state,
/// epoch)`) in `compute_committee` order under `get_seed(state, epoch, DOMAIN_BEACON_ATTESTER)`,
/// as [`crate::CommitteeCache`] holds it (`shuffling[i] == active_indices[
/// compute_shuffled_index(i, n, seed)]`).
///
/// Epoch processing needs the shuffling of an epoch no cache holds (two ahead) on every epoch,
/// so it is computed here with the rounds' swaps split across threads, on 32-bit indices.
pub(crate) fn compute_shuffling<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
    active_indices: &[ValidatorIndex],
) -> Result<Vec<ValidatorIndex>, Error> {
    let seed = get_seed(state, epoch, DOMAIN_BEACON_ATTESTER);
    shuffle_list_forwards::<E>(active_indices, &seed.0)
}

/// `active_indices` shuffled in the spec's order under `seed`: the parallel 32-bit shuffle
/// where every index fits in 32 bits, `swap_or_not_shuffle::shuffle_list` otherwise.
fn shuffle_list_forwards<E: EthSpec>(
    active_indices: &[ValidatorIndex],
    seed: &[u8; 32],
) -> Result<Vec<ValidatorIndex>, Error> {
    let narrow: Option<Vec<u32>> = active_indices
        .iter()
        .map(|&i| u32::try_from(i).ok())
        .collect();
    match narrow {
        Some(mut list) if (list.len() as u64) < (1 << 32) => {
            parallel_shuffle::shuffle_forwards(&mut list, seed, E::SHUFFLE_ROUND_COUNT);
            Ok(list.into_iter().map(ValidatorIndex::from).collect())
        }
        _ => Ok(swap_or_not_shuffle::shuffle_list(
            active_indices.iter().map(|&i| i as usize).collect(),
            E::SHUFFLE_ROUND_COUNT,
            seed,
            true,
        )
        .ok_or(Error::ArithmeticOverflow("shuffle_list"))?
        .into_iter()
        .map(|i| i as ValidatorIndex)
        .collect()),
    }
}

/// The swap-or-not list shuffle (`swap_or_not_shuffle::shuffle_list` with `forwards`), its
/// rounds run one after the other as the spec's composition requires, each round's swaps split
/// into ranges that threads take: round `r` swaps the pairs `(x, (pivot - x) mod n)` whose
/// source bit at the upper member is set, and the pairs of one round are disjoint.
mod parallel_shuffle {
    use ethereum_hashing::hash_fixed;
    use rayon::prelude::*;

    /// Pairs per task: large enough that a task's hashing and swaps outweigh rayon's overhead.
    const CHUNK: usize = 1 << 15;

    /// Shuffles `list` in place in the spec's order (`output[i] == input[
    /// compute_shuffled_index(i, n, seed)]`): the rounds in descending order.
    pub(super) fn shuffle_forwards(list: &mut [u32], seed: &[u8; 32], rounds: u8) {
        let n = list.len();
        if n < 2 {
            return;
        }
        if n >= 2 * CHUNK {
            // On the caller's pool; sequentially off one (`parallel` false).
            crate::parallel::SECTIONS.run(|parallel| {
                for round in (0..rounds).rev() {
                    apply_round(list, seed, round, parallel);
                }
            });
        } else {
            for round in (0..rounds).rev() {
                apply_round(list, seed, round, false);
            }
        }
    }

    /// One round: the pairs of `[0, pivot]` (mirrored about `pivot / 2`) and those of
    /// `(pivot, n)` (mirrored about `(pivot + n) / 2`), each visited from its upper member `j`,
    /// whose source bit decides.
    fn apply_round(list: &mut [u32], seed: &[u8; 32], round: u8, parallel: bool) {
        let n = list.len();
        let pivot = compute_pivot(seed, round, n);
        // `j` in `[pivot / 2 + 1, pivot]`, `i = pivot - j`.
        let start = pivot / 2 + 1;
        let pairs = pivot + 1 - start;
        let (lower, upper) = list.split_at_mut(start);
        swap_mirrored(
            &mut lower[..pairs],
            &mut upper[..pairs],
            start,
            seed,
            round,
            parallel,
        );
        // `j` in `[(pivot + n) / 2 + 1, n)`, `i = pivot + n - j`.
        let mirror = pivot + n;
        let start = mirror / 2 + 1;
        if start < n {
            let pairs = n - start;
            let (lower, upper) = list.split_at_mut(start);
            let lower_start = mirror - (n - 1);
            swap_mirrored(
                &mut lower[lower_start..lower_start + pairs],
                &mut upper[..pairs],
                start,
                seed,
                round,
                parallel,
            );
        }
    }

    /// For every `k`, swaps `upper[k]` (position `j = first_upper + k`) with
    /// `lower[len - 1 - k]` (position `mirror - j`) when the round's source bit at `j` is set.
    fn swap_mirrored(
        lower: &mut [u32],
        upper: &mut [u32],
        first_upper: usize,
        seed: &[u8; 32],
        round: u8,
        parallel: bool,
    ) {
        debug_assert_eq!(lower.len(), upper.len());
        if parallel && upper.len() > CHUNK {
            upper
                .par_chunks_mut(CHUNK)
                .zip(lower.par_rchunks_mut(CHUNK))
                .enumerate()
                .for_each(|(t, (upper, lower))| {
                    swap_range(lower, upper, first_upper + t * CHUNK, seed, round)
                });
        } else {
            swap_range(lower, upper, first_upper, seed, round);
        }
    }

    /// The sequential body of [`swap_mirrored`] over one range: one hash per 256 positions,
    /// and swaps without branching on the (random) bit.
    fn swap_range(lower: &mut [u32], upper: &mut [u32], first: usize, seed: &[u8; 32], round: u8) {
        let end = first + upper.len();
        let mut position = first;
        let mut pairs = upper.iter_mut().zip(lower.iter_mut().rev());
        while position < end {
            // The positions up to the next multiple of 256 share one source hash.
            let block_end = (position / 256 + 1) * 256;
            let source = hash_fixed(&source_input(seed, round, position));
            for (b, a) in pairs.by_ref().take(block_end - position) {
                let bit = (source[(position % 256) / 8] >> (position % 8)) & 1;
                let mask = u32::from(bit).wrapping_neg();
                let swap = (*a ^ *b) & mask;
                *a ^= swap;
                *b ^= swap;
                position += 1;
            }
        }
    }

    /// `bytes_to_uint64(hash(seed + uint_to_bytes(uint8(round)))[0:8]) % index_count`.
    fn compute_pivot(seed: &[u8; 32], round: u8, index_count: usize) -> usize {
        let mut input = [0u8; 33];
        input[..32].copy_from_slice(seed);
        input[32] = round;
        let digest = hash_fixed(&input);
        let mut first_eight = [0u8; 8];
        first_eight.copy_from_slice(&digest[..8]);
        (u64::from_le_bytes(first_eight) % index_count as u64) as usize
    }

    /// `seed + uint_to_bytes(uint8(round)) + uint_to_bytes(uint32(position // 256))`.
    fn source_input(seed: &[u8; 32], round: u8, position: usize) -> [u8; 37] {
        let mut input = [0u8; 37];
        input[..32].copy_from_slice(seed);
        input[32] = round;
        input[33..].copy_from_slice(&((position / 256) as u32).to_le_bytes());
        input
    }
}

/// `compute_ptc(state, slot)` [New in Gloas:EIP7732]: the payload timeliness committee of
/// `slot`, with possible duplicates: `PTC_SIZE` validators drawn by effective balance from the
/// slot's beacon committees, concatenated in order, with the seed
/// `hash(get_seed(state, epoch, DOMAIN_PTC_ATTESTER) + uint_to_bytes(slot))`.
///
/// The committees come from `caches` for the state's previous, current and next epoch, and
/// are computed here for a later epoch (epoch processing and the upgrade look two ahead).
///
/// [spec]: gloas/beacon-chain.md#new-compute_ptc
pub fn compute_ptc<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    slot: Slot,
) -> Result<Vec<ValidatorIndex>, Error> {
    let epoch = compute_epoch_at_slot::<E>(slot);
    let current = get_current_epoch(state);
    let computed;
    let cached;
    let shuffling: &[ValidatorIndex] = if epoch + 1 >= current && epoch <= current + 1 {
        cached = caches.committees(state, epoch)?;
        cached.shuffling()
    } else {
        computed = compute_shuffling(state, epoch, &get_active_validator_indices(state, epoch))?;
        &computed
    };
    if shuffling.is_empty() {
        return Err(Error::NoActiveValidators(epoch));
    }
    let seed = get_seed(state, epoch, DOMAIN_PTC_ATTESTER);
    compute_ptc_from_shuffling::<E>(shuffling, &seed, slot, |index| {
        Ok(validator(state, index)?.effective_balance)
    })
}

/// `compute_ptc` for every slot of the epochs `first..first + count`, as the Gloas upgrade and
/// genesis fill `ptc_window` (`initialize_ptc_window`), with one shuffling per epoch.
pub(crate) fn compute_ptcs_of_epochs<E: EthSpec>(
    state: &StateRef<'_, E>,
    first: Epoch,
    count: u64,
) -> Result<Vec<Vec<ValidatorIndex>>, Error> {
    // One walk of the registry for the effective balances, read by every draw.
    let balances: Vec<Gwei> = state
        .validators
        .iter()
        .map(|v| v.effective_balance)
        .collect();
    let mut ptcs = Vec::with_capacity((count * E::slots_per_epoch()) as usize);
    for epoch in first..first.saturating_add(count) {
        let active = get_active_validator_indices(state, epoch);
        let shuffling = compute_shuffling(state, epoch, &active)?;
        ptcs.extend(compute_epoch_ptcs(state, epoch, &shuffling, &balances)?);
    }
    Ok(ptcs)
}

#[cfg(test)]
mod tests {
    use types::{MainnetEthSpec, MinimalEthSpec};

    use super::*;

    #[test]
    fn parallel_shuffle_matches_shuffle_list() {
        // On a pool (the rounds' ranges in parallel) and off one (sequentially).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a pool builds");
        for n in [0usize, 1, 2, 3, 7, 100, 257, 1000, 70_001, 200_003] {
            for rounds in [10u8, 90] {
                let seed = [n as u8 ^ rounds; 32];
                let input: Vec<usize> = (0..n).map(|i| i * 3 + 1).collect();
                let expected =
                    swap_or_not_shuffle::shuffle_list(input.clone(), rounds, &seed, true)
                        .expect("a short list");
                for on_a_pool in [true, false] {
                    let mut list: Vec<u32> = input.iter().map(|&i| i as u32).collect();
                    if on_a_pool {
                        pool.install(|| {
                            parallel_shuffle::shuffle_forwards(&mut list, &seed, rounds)
                        });
                    } else {
                        parallel_shuffle::shuffle_forwards(&mut list, &seed, rounds);
                    }
                    let got: Vec<usize> = list.into_iter().map(|i| i as usize).collect();
                    assert_eq!(
                        got, expected,
                        "n {n}, rounds {rounds}, on a pool {on_a_pool}"
                    );
                }
            }
        }
    }

    /// The spec's loop, one hash per draw, as a reference for the in-order selection.
    fn naive_selection(
        indices: &[ValidatorIndex],
        seed: &Root,
        size: usize,
        balance: impl Fn(ValidatorIndex) -> Gwei,
    ) -> Vec<ValidatorIndex> {
        let mut selected = Vec::new();
        let mut i = 0u64;
        while selected.len() < size {
            let candidate = indices[(i % indices.len() as u64) as usize];
            if compute_balance_weighted_acceptance::<MinimalEthSpec>(balance(candidate), seed, i) {
                selected.push(candidate);
            }
            i += 1;
        }
        selected
    }

    #[test]
    fn in_order_selection_matches_the_spec_loop() {
        let balance = |index: ValidatorIndex| (1 + index % 7 * 300) * 1_000_000_000;
        let indices: Vec<ValidatorIndex> = (0..300).map(|i| i * 5 + 2).collect();
        for s in 0..4u8 {
            let seed = Root::repeat_byte(s * 17 + 1);
            for size in [1, 16, 512] {
                let got = compute_balance_weighted_selection::<MinimalEthSpec>(
                    &indices,
                    &seed,
                    size,
                    false,
                    |i| Ok(balance(i)),
                )
                .expect("candidates");
                assert_eq!(got, naive_selection(&indices, &seed, size, balance));
            }
        }
        assert_eq!(
            compute_balance_weighted_selection::<MinimalEthSpec>(
                &[],
                &Root::ZERO,
                1,
                false,
                |_| { Ok(0) }
            ),
            Err(Error::NoCandidates("compute_balance_weighted_selection"))
        );
    }

    /// The draws by increments are the draws by balances.
    #[test]
    fn selection_by_increments_matches_selection_by_balances() {
        let balances: Vec<Gwei> = (0..5000)
            .map(|i| (1 + i % 9 * 250) * 1_000_000_000)
            .collect();
        let increments = balance_increments::<MinimalEthSpec>(&balances).expect("whole");
        let candidates: Vec<ValidatorIndex> = (0..5000).rev().step_by(3).collect();
        for s in 0..8u8 {
            let seed = Root::repeat_byte(s);
            let by_balances = compute_balance_weighted_selection::<MinimalEthSpec>(
                &candidates,
                &seed,
                <MinimalEthSpec as EthSpec>::PtcSize::to_usize(),
                false,
                |i| Ok(balances[i as usize]),
            )
            .expect("candidates");
            let by_increments =
                select_ptc_by_increments::<MinimalEthSpec>(&candidates, &seed, &increments)
                    .expect("candidates");
            assert_eq!(by_balances, by_increments);
        }
        // A balance that is not a whole number of increments takes the exact path.
        assert!(balance_increments::<MinimalEthSpec>(&[1_500_000_000]).is_none());
    }

    /// The slot's committees, concatenated, are one range of the shuffling.
    #[test]
    fn slot_committees_concatenate_the_committees_of_the_slot() {
        let shuffling: Vec<ValidatorIndex> = (0..10_000).collect();
        let cps = get_committee_count_per_slot_from_active_count::<MainnetEthSpec>(10_000);
        let count = cps * 32;
        let n = 10_000u64;
        for slot in [0u64, 5, 31, 32 + 7] {
            let mut expected = Vec::new();
            for index in 0..cps {
                let i = (slot % 32) * cps + index;
                expected.extend_from_slice(
                    &shuffling[(n * i / count) as usize..(n * (i + 1) / count) as usize],
                );
            }
            assert_eq!(
                slot_committees::<MainnetEthSpec>(&shuffling, slot),
                &expected[..]
            );
        }
    }
}
