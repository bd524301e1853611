//! Attestations: `process_attestation` and the indexed-attestation helpers.
//!
//! A block of a full slot of attestations touches tens of thousands of validators on a large
//! registry, so the attesters are walked straight from the cached committees and the aggregation
//! bits, without building the spec's intermediate sets: committees of one slot are disjoint, so
//! the walk meets every attester once, and nothing is allocated per attester.
//!
//! [spec]: electra/beacon-chain.md#modified-process_attestation

use std::sync::Arc;

use typenum::Unsigned;
use types::{
    EthSpec, ValidatorIndex,
    electra::{Attestation, AttestationData, IndexedAttestation},
};

use super::{
    AttestationInvalid, IndexedAttestationInvalid, VerifySignatures,
    signature_sets::{self, SignatureSetError},
};
use crate::{
    Caches, CommitteeCache, Error,
    common::{
        PARTICIPATION_FLAG_WEIGHTS, PROPOSER_WEIGHT, TIMELY_HEAD_FLAG_INDEX,
        TIMELY_SOURCE_FLAG_INDEX, TIMELY_TARGET_FLAG_INDEX, WEIGHT_DENOMINATOR, add_flag,
        compute_epoch_at_slot, get_base_reward_per_increment, get_beacon_proposer_index,
        get_block_root, get_block_root_at_slot, get_current_epoch, get_previous_epoch, has_flag,
        increase_balance, integer_squareroot,
    },
    error::{add, mul},
    view::{PackedListMut, PackedValues, StateMut, StateRef},
};

/// The committees of the attestation's target epoch, after the checks on `data` that do not need
/// them: the target is the previous or current epoch, the slot is in the target epoch, and the
/// attestation is old enough to be included.
pub(crate) fn attestation_committees<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    data: &AttestationData,
) -> Result<Arc<CommitteeCache>, AttestationInvalid> {
    let current = get_current_epoch(state);
    let previous = get_previous_epoch(state);
    if data.target.epoch != previous && data.target.epoch != current {
        return Err(AttestationInvalid::TargetEpochOutOfRange {
            target: data.target.epoch,
            current,
        });
    }
    if data.target.epoch != compute_epoch_at_slot::<E>(data.slot) {
        return Err(AttestationInvalid::TargetEpochSlotMismatch {
            target: data.target.epoch,
            slot: data.slot,
        });
    }
    if data.slot.saturating_add(E::MIN_ATTESTATION_INCLUSION_DELAY) > *state.slot {
        return Err(AttestationInvalid::IncludedTooEarly {
            slot: data.slot,
            state_slot: *state.slot,
        });
    }
    // [New in Electra:EIP7549]; before, `data.index` is the committee.
    if state.fork_name.electra_enabled() && data.index != 0 {
        // [Modified in Gloas:EIP7732]: `data.index < 2` signals the payload's presence.
        if !state.fork_name.gloas_enabled() {
            return Err(AttestationInvalid::NonZeroDataIndex(data.index));
        }
        if data.index >= 2 {
            return Err(AttestationInvalid::DataIndexOutOfRange(data.index));
        }
    }
    Ok(caches.committees(state, data.target.epoch)?)
}

/// What the attester walk reads of an attestation: Electra's and Gloas's (a progressive
/// container with a progressive bitlist) have the same fields.
pub(crate) trait AggregateAttestation<E: EthSpec> {
    /// `attestation.data`.
    fn data(&self) -> &AttestationData;
    /// `len(attestation.aggregation_bits)`.
    fn aggregation_bits_len(&self) -> usize;
    /// The aggregation bits' bytes, without a delimiter bit.
    fn aggregation_bits_bytes(&self) -> &[u8];
    /// The committee bits' bytes.
    fn committee_bits_bytes(&self) -> &[u8];
    /// `attestation.signature`.
    fn signature(&self) -> &types::BLSSignature;
}

impl<E: EthSpec> AggregateAttestation<E> for Attestation<E> {
    #[inline]
    fn data(&self) -> &AttestationData {
        &self.data
    }
    #[inline]
    fn aggregation_bits_len(&self) -> usize {
        self.aggregation_bits.len()
    }
    #[inline]
    fn aggregation_bits_bytes(&self) -> &[u8] {
        self.aggregation_bits.as_slice()
    }
    #[inline]
    fn committee_bits_bytes(&self) -> &[u8] {
        self.committee_bits.as_slice()
    }
    #[inline]
    fn signature(&self) -> &types::BLSSignature {
        &self.signature
    }
}

impl<E: EthSpec> AggregateAttestation<E> for types::gloas::Attestation<E> {
    #[inline]
    fn data(&self) -> &AttestationData {
        &self.data
    }
    #[inline]
    fn aggregation_bits_len(&self) -> usize {
        self.aggregation_bits.len()
    }
    #[inline]
    fn aggregation_bits_bytes(&self) -> &[u8] {
        self.aggregation_bits.as_bytes()
    }
    #[inline]
    fn committee_bits_bytes(&self) -> &[u8] {
        self.committee_bits.as_slice()
    }
    #[inline]
    fn signature(&self) -> &types::BLSSignature {
        &self.signature
    }
}

/// Whether bit `i` of an SSZ bitfield's bytes is set.
#[inline]
fn bit(bytes: &[u8], i: usize) -> bool {
    bytes.get(i / 8).is_some_and(|b| (b >> (i % 8)) & 1 == 1)
}

/// Calls `f` with every attester of `attestation` (each once), after the spec's checks of its
/// committee bits and aggregation bits: every committee index is in range, every committee has
/// an attester, and the aggregation bits cover exactly the committees.
///
/// The attesters of one committee come in committee order, committees in index order: the order
/// of `get_attesting_indices`'s walk, not sorted.
pub(crate) fn for_each_attester<E: EthSpec, A: AggregateAttestation<E>>(
    committees: &CommitteeCache,
    attestation: &A,
    mut f: impl FnMut(ValidatorIndex),
) -> Result<(), AttestationInvalid> {
    let data = attestation.data();
    let bits_len = attestation.aggregation_bits_len();
    let bytes = attestation.aggregation_bits_bytes();
    let count = committees.committees_per_slot();
    // First pass: the checks, so that `f` only ever sees a valid attestation's attesters.
    let mut offset = 0usize;
    for committee_index in committee_indices::<E, A>(attestation) {
        if committee_index >= count {
            return Err(AttestationInvalid::CommitteeIndexOutOfRange {
                index: committee_index,
                count,
            });
        }
        let committee = committees.get_beacon_committee(data.slot, committee_index)?;
        let end = offset + committee.len();
        if end > bits_len || !(offset..end).any(|i| bit(bytes, i)) {
            // Past the end of the bits, the spec's `aggregation_bits[i]` raises: invalid either way.
            return Err(AttestationInvalid::EmptyCommitteeAttesters { committee_index });
        }
        offset = end;
    }
    if bits_len != offset {
        return Err(AttestationInvalid::AggregationBitsLength {
            expected: offset,
            got: bits_len,
        });
    }
    let mut offset = 0usize;
    for committee_index in committee_indices::<E, A>(attestation) {
        let committee = committees.get_beacon_committee(data.slot, committee_index)?;
        for (i, &index) in committee.iter().enumerate() {
            if bit(bytes, offset + i) {
                f(index);
            }
        }
        offset += committee.len();
    }
    Ok(())
}

/// `get_committee_indices(attestation.committee_bits)`, without allocating.
fn committee_indices<E: EthSpec, A: AggregateAttestation<E>>(
    attestation: &A,
) -> impl Iterator<Item = u64> + '_ {
    let bytes = attestation.committee_bits_bytes();
    (0..E::MaxCommitteesPerSlot::to_usize())
        .filter(move |&i| bit(bytes, i))
        .map(|i| i as u64)
}

/// `get_attesting_indices(state, attestation)`, sorted (the spec returns a set).
///
/// [spec]: electra/beacon-chain.md#modified-get_attesting_indices
pub fn get_attesting_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    attestation: &Attestation<E>,
) -> Result<Vec<ValidatorIndex>, AttestationInvalid> {
    get_attesting_indices_of(state, caches, attestation)
}

/// [`get_attesting_indices`] for an attestation of any fork.
pub(crate) fn get_attesting_indices_of<E: EthSpec, A: AggregateAttestation<E>>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    attestation: &A,
) -> Result<Vec<ValidatorIndex>, AttestationInvalid> {
    let committees = caches.committees(state, attestation.data().target.epoch)?;
    let mut indices = Vec::new();
    for_each_attester(&committees, attestation, |index| indices.push(index))?;
    indices.sort_unstable();
    indices.dedup();
    Ok(indices)
}

/// `get_indexed_attestation(state, attestation)`.
///
/// [spec]: phase0/beacon-chain.md#get_indexed_attestation
pub fn get_indexed_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    attestation: &Attestation<E>,
) -> Result<IndexedAttestation<E>, AttestationInvalid> {
    let indices = get_attesting_indices(state, caches, attestation)?;
    Ok(IndexedAttestation {
        attesting_indices: ssz_types::VariableList::new(indices)
            .map_err(|_| Error::ListFull("attesting_indices"))?,
        data: attestation.data.clone(),
        signature: attestation.signature,
    })
}

/// The structural half of `is_valid_indexed_attestation`, on the indices of an indexed
/// attestation of any fork: they are non-empty, sorted and unique.
pub(crate) fn check_attesting_indices<E: EthSpec>(
    indices: &[ValidatorIndex],
) -> Result<(), IndexedAttestationInvalid> {
    if indices.is_empty() {
        return Err(IndexedAttestationInvalid::Empty);
    }
    // [New in Gloas:EIP7688]: the list is progressive. An Electra list's type bounds it to the
    // same maximum, so the check never fails there.
    let max = E::MaxValidatorsPerCommittee::to_u64() * E::MaxCommitteesPerSlot::to_u64();
    if indices.len() as u64 > max {
        return Err(IndexedAttestationInvalid::TooManyIndices {
            count: indices.len(),
            max,
        });
    }
    if let Some(position) = indices.windows(2).position(|w| w[0] >= w[1]) {
        return Err(IndexedAttestationInvalid::NotSortedUnique {
            position: position + 1,
        });
    }
    Ok(())
}

/// `is_valid_indexed_attestation(state, indexed_attestation)`: non-empty, sorted and unique
/// indices, and (unless `verify` is off) a valid aggregate signature.
///
/// [spec]: phase0/beacon-chain.md#is_valid_indexed_attestation
pub fn is_valid_indexed_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    indexed: &IndexedAttestation<E>,
    verify: VerifySignatures,
) -> Result<(), IndexedAttestationInvalid> {
    is_valid_indexed_attestation_parts(
        state,
        caches,
        &indexed.attesting_indices,
        &indexed.data,
        &indexed.signature,
        verify,
    )
}

/// [`is_valid_indexed_attestation`] on the fields of an indexed attestation of any fork.
pub(crate) fn is_valid_indexed_attestation_parts<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    attesting_indices: &[ValidatorIndex],
    data: &AttestationData,
    signature: &types::BLSSignature,
    verify: VerifySignatures,
) -> Result<(), IndexedAttestationInvalid> {
    check_attesting_indices::<E>(attesting_indices)?;
    if verify.is_enabled() {
        let set = signature_sets::indexed_attestation_signature_set(
            state,
            caches,
            attesting_indices.iter().copied(),
            data,
            signature,
        );
        let valid = match set {
            Ok(set) => set.verify(),
            Err(SignatureSetError::Malformed) => false,
            Err(SignatureSetError::State(e)) => return Err(e.into()),
        };
        if !valid {
            return Err(IndexedAttestationInvalid::InvalidSignature);
        }
    }
    Ok(())
}

/// `get_attestation_participation_flag_indices(state, data, inclusion_delay)`, as a bit mask of
/// flag indices (bit `i` set when flag `i` applies). Fails when the source does not match.
///
/// [spec]: deneb/beacon-chain.md#modified-get_attestation_participation_flag_indices
pub fn get_attestation_participation_flag_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    data: &AttestationData,
    inclusion_delay: u64,
) -> Result<u8, AttestationInvalid> {
    let justified_checkpoint = if data.target.epoch == get_current_epoch(state) {
        state.current_justified_checkpoint
    } else {
        state.previous_justified_checkpoint
    };
    let is_matching_source = data.source == *justified_checkpoint;
    if !is_matching_source {
        return Err(AttestationInvalid::SourceMismatch {
            epoch: data.source.epoch,
        });
    }
    let is_matching_target = data.target.root == get_block_root(state, data.target.epoch)?;
    let is_matching_head =
        is_matching_target && data.beacon_block_root == get_block_root_at_slot(state, data.slot)?;

    let mut flags = 0u8;
    if inclusion_delay <= integer_squareroot(E::slots_per_epoch()) {
        flags = add_flag(flags, TIMELY_SOURCE_FLAG_INDEX);
    }
    if is_matching_target {
        flags = add_flag(flags, TIMELY_TARGET_FLAG_INDEX);
    }
    if is_matching_head && inclusion_delay == E::MIN_ATTESTATION_INCLUSION_DELAY {
        flags = add_flag(flags, TIMELY_HEAD_FLAG_INDEX);
    }
    Ok(flags)
}

/// `process_attestation(state, attestation)`: checks the attestation, sets its attesters'
/// participation flags and rewards the proposer for the flags newly set.
///
/// [spec]: electra/beacon-chain.md#modified-process_attestation
pub fn process_attestation<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    attestation: &Attestation<E>,
    verify: VerifySignatures,
) -> Result<(), AttestationInvalid> {
    let data = &attestation.data;
    let committees = attestation_committees(&state.as_ref(), caches, data)?;
    // The structural checks, with no side effect.
    for_each_attester(&committees, attestation, |_| {})?;

    let flags =
        get_attestation_participation_flag_indices(&state.as_ref(), data, *state.slot - data.slot)?;

    if verify.is_enabled() {
        let set = signature_sets::attestation_signature_set(&state.as_ref(), caches, attestation)?;
        if !set.verify() {
            return Err(AttestationInvalid::IndexedAttestation(
                IndexedAttestationInvalid::InvalidSignature,
            ));
        }
    }

    apply_participation(state, caches, data, flags, |f| {
        for_each_attester(&committees, attestation, f)
    })
}

/// The second half of `process_attestation`, shared by the forks: sets the flags `flags` of
/// each attester `for_each_attester` yields (once each) in the target epoch's participation,
/// and rewards the proposer for the flags newly set.
///
/// [spec]: deneb/beacon-chain.md#modified-process_attestation
#[inline]
pub(crate) fn apply_participation<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    data: &AttestationData,
    flags: u8,
    for_each_attester: impl FnOnce(&mut dyn FnMut(ValidatorIndex)) -> Result<(), AttestationInvalid>,
) -> Result<(), AttestationInvalid> {
    apply_participation_with(state, caches, data, flags, for_each_attester, |_, _| {})
}

/// [`apply_participation`], calling `on_new_flag` with the previous flags and the effective
/// balance of each attester that gets a new flag (Gloas adds it to the builder payment's weight;
/// a no-op before).
pub(crate) fn apply_participation_with<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    data: &AttestationData,
    flags: u8,
    for_each_attester: impl FnOnce(&mut dyn FnMut(ValidatorIndex)) -> Result<(), AttestationInvalid>,
    mut on_new_flag: impl FnMut(u8, u64),
) -> Result<(), AttestationInvalid> {
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    let base_reward_per_increment = get_base_reward_per_increment::<E>(total_active_balance)?;
    let current_epoch = get_current_epoch(&state.as_ref());
    let is_current = data.target.epoch == current_epoch;
    let effective_balances = caches.effective_balances(&state.as_ref());

    // The participation list and the registry are separate fields of the view, so the walk reads
    // one while it writes the other.
    let StateMut {
        validators,
        current_epoch_participation,
        previous_epoch_participation,
        ..
    } = state;
    let participation = if is_current {
        current_epoch_participation
    } else {
        previous_epoch_participation
    };
    let mut proposer_reward_numerator: u64 = 0;
    // The target balances follow the flags set here (`compute_pulled_up_tip` reads them).
    let mut progressive = caches.take_progressive_balances(current_epoch);
    let sets_target = has_flag(flags, TIMELY_TARGET_FLAG_INDEX);
    let on_set = |index: ValidatorIndex, old: u8, weight_sum: u64| -> Result<(), Error> {
        let effective_balance = match effective_balances.get(index) {
            Some(balance) => balance,
            None => {
                validators
                    .get(index as usize)
                    .ok_or(Error::UnknownValidator {
                        index,
                        len: validators.len(),
                    })?
                    .effective_balance
            }
        };
        // [New in Gloas:EIP7732]: the attester's weight for the builder's payment.
        on_new_flag(old, effective_balance);
        if sets_target
            && !has_flag(old, TIMELY_TARGET_FLAG_INDEX)
            && let Some(p) = progressive.as_mut()
        {
            p.on_target_flag_set(index, effective_balance, is_current)?;
        }
        let base_reward = mul(
            effective_balance / E::EFFECTIVE_BALANCE_INCREMENT,
            base_reward_per_increment,
            "base reward",
        )?;
        proposer_reward_numerator = add(
            proposer_reward_numerator,
            mul(base_reward, weight_sum, "proposer reward numerator")?,
            "proposer reward numerator",
        )?;
        Ok(())
    };
    // One match on the list's kind for the whole walk, rather than one per read and write.
    match participation {
        PackedListMut::Fixed(list) => {
            set_participation_flags(&mut **list, flags, for_each_attester, on_set)?
        }
        PackedListMut::Progressive(list) => {
            set_participation_flags(&mut **list, flags, for_each_attester, on_set)?
        }
    }
    if let Some(p) = progressive {
        caches.set_progressive_balances(p);
    }

    let proposer_reward_denominator =
        (WEIGHT_DENOMINATOR - PROPOSER_WEIGHT) * WEIGHT_DENOMINATOR / PROPOSER_WEIGHT;
    let proposer_reward = proposer_reward_numerator / proposer_reward_denominator;
    let proposer = get_beacon_proposer_index(&state.as_ref(), caches)?;
    increase_balance(state, proposer, proposer_reward)?;
    Ok(())
}

/// The attester walk of [`apply_participation_with`] over one kind of participation list: adds
/// `flags` to each attester `for_each_attester` yields, and calls `on_set` with the attester, its
/// previous flags and the summed weights of the flags it newly got. The first error stops the
/// walk's effects and is returned.
#[inline]
fn set_participation_flags<L: PackedValues<u8>>(
    participation: &mut L,
    flags: u8,
    for_each_attester: impl FnOnce(&mut dyn FnMut(ValidatorIndex)) -> Result<(), AttestationInvalid>,
    mut on_set: impl FnMut(ValidatorIndex, u8, u64) -> Result<(), Error>,
) -> Result<(), AttestationInvalid> {
    let mut failure: Option<Error> = None;
    for_each_attester(&mut |index| {
        if failure.is_some() {
            return;
        }
        let result = (|| -> Result<(), Error> {
            let i = index as usize;
            let old = participation.value(i).ok_or(Error::UnknownValidator {
                index,
                len: participation.value_count(),
            })?;
            let mut new = old;
            let mut weight_sum = 0u64;
            for (flag_index, weight) in PARTICIPATION_FLAG_WEIGHTS.iter().enumerate() {
                if has_flag(flags, flag_index) && !has_flag(old, flag_index) {
                    new = add_flag(new, flag_index);
                    weight_sum += weight;
                }
            }
            if new != old {
                participation.set_value(i, new)?;
                on_set(index, old, weight_sum)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            failure = Some(e);
        }
    })?;
    match failure {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
