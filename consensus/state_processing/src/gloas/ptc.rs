//! The payload timeliness committee (PTC) [New in Gloas:EIP7732]: `get_ptc`, which reads the
//! state's `ptc_window`, and `compute_ptc`, which draws a slot's committee by effective balance
//! from the slot's beacon committees.
//!
//! [spec]: gloas/beacon-chain.md#new-get_ptc

use ethereum_hashing::hash_fixed;
use rayon::prelude::*;
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
/// spec's asserts).
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
/// `shuffling`, drawn in parallel (one slot per task).
pub(crate) fn compute_epoch_ptcs<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
    shuffling: &[ValidatorIndex],
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error> + Sync,
) -> Result<Vec<Vec<ValidatorIndex>>, Error> {
    if shuffling.is_empty() {
        return Err(Error::NoActiveValidators(epoch));
    }
    let seed = get_seed(state, epoch, DOMAIN_PTC_ATTESTER);
    let start_slot = compute_start_slot_at_epoch::<E>(epoch);
    crate::parallel::isolated(|| {
        (0..E::slots_per_epoch())
            .into_par_iter()
            .map(|i| {
                compute_ptc_from_shuffling::<E>(
                    shuffling,
                    &seed,
                    start_slot.saturating_add(i),
                    &effective_balance,
                )
            })
            .collect()
    })
}

/// The committee shuffling of `epoch`: `get_active_validator_indices(state, epoch)` in
/// `compute_committee` order under `get_seed(state, epoch, DOMAIN_BEACON_ATTESTER)`.
pub(crate) fn compute_shuffling<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
    active_indices: &[ValidatorIndex],
) -> Result<Vec<ValidatorIndex>, Error> {
    let seed = get_seed(state, epoch, DOMAIN_BEACON_ATTESTER);
    Ok(swap_or_not_shuffle::shuffle_list(
        active_indices.iter().map(|&i| i as usize).collect(),
        E::SHUFFLE_ROUND_COUNT,
        &seed.0,
        true,
    )
    .ok_or(Error::ArithmeticOverflow("shuffle_list"))?
    .into_iter()
    .map(|i| i as ValidatorIndex)
    .collect())
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
        ptcs.extend(compute_epoch_ptcs(state, epoch, &shuffling, |index| {
            balances
                .get(index as usize)
                .copied()
                .ok_or(Error::UnknownValidator {
                    index,
                    len: balances.len(),
                })
        })?);
    }
    Ok(ptcs)
}
