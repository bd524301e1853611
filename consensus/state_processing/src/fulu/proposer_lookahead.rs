//! The Fulu proposer lookahead: `process_proposer_lookahead`, and the proposer computations it
//! and the Fulu upgrade share.
//!
//! [spec]: fulu/beacon-chain.md#new-process_proposer_lookahead

use types::{Epoch, EthSpec, Gwei, Root, ValidatorIndex, signing::DOMAIN_BEACON_PROPOSER};

use crate::per_epoch::{
    EpochContext, EpochProcessingError, StepResult,
    context::{ACTIVE_LOOKAHEAD, SLASHED},
};
use crate::{
    Error,
    common::{
        compute_proposer_index_with_balances, compute_start_slot_at_epoch,
        get_active_validator_indices, get_current_epoch, get_seed, proposer_seed_at_slot,
        validator,
    },
    view::{StateMut, StateRef},
};

const STEP: &str = "process_proposer_lookahead";

/// `process_proposer_lookahead(state)` [New in Fulu:EIP7917]: drops the epoch that ends and
/// appends the proposers of the epoch `MIN_SEED_LOOKAHEAD + 1` ahead.
///
/// [spec]: fulu/beacon-chain.md#new-process_proposer_lookahead
pub fn process_proposer_lookahead<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    let epoch = get_current_epoch(&state.as_ref()).saturating_add(E::MIN_SEED_LOOKAHEAD + 1);
    let proposers = get_beacon_proposer_indices(&state.as_ref(), epoch).step(STEP)?;
    shift_in(state, &proposers)
}

/// The spec's `process_proposer_lookahead`, with the lookahead epoch's active validators and
/// the (updated) effective balances taken from the registry summary `ctx`.
pub(crate) fn process_proposer_lookahead_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ctx: &EpochContext,
) -> Result<(), EpochProcessingError> {
    let epoch = ctx.current_epoch.saturating_add(E::MIN_SEED_LOOKAHEAD + 1);
    let mut active = ctx.indices_with(ACTIVE_LOOKAHEAD);
    // [Modified in Gloas:EIP8045]: slashed validators do not propose.
    if state.fork_name.gloas_enabled() {
        active.retain(|&index| ctx.status[index as usize] & SLASHED == 0);
    }
    let seed = get_seed(&state.as_ref(), epoch, DOMAIN_BEACON_PROPOSER);
    let balances = &ctx.effective_balances;
    let proposers = compute_proposer_indices_with_balances::<E>(epoch, &seed, &active, |index| {
        balances
            .get(index as usize)
            .copied()
            .ok_or(Error::UnknownValidator {
                index,
                len: balances.len(),
            })
    })
    .step(STEP)?;
    shift_in(state, &proposers)
}

/// `state.proposer_lookahead[:last_epoch_start] = state.proposer_lookahead[SLOTS_PER_EPOCH:]`,
/// then `state.proposer_lookahead[last_epoch_start:] = proposers`.
fn shift_in<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    proposers: &[ValidatorIndex],
) -> Result<(), EpochProcessingError> {
    let fork = state.fork_name;
    let lookahead = state
        .proposer_lookahead
        .as_mut()
        .ok_or(EpochProcessingError::NoProposerLookahead(fork))?;
    let slots = E::slots_per_epoch() as usize;
    let mut values: Vec<ValidatorIndex> = lookahead.iter().copied().collect();
    if values.len() < slots || proposers.len() != slots {
        return Err(Error::Tree(
            "proposer lookahead shorter than an epoch".into(),
        ))
        .step(STEP);
    }
    let last_epoch_start = values.len() - slots;
    values.copy_within(slots.., 0);
    values[last_epoch_start..].copy_from_slice(proposers);
    for (i, value) in values.into_iter().enumerate() {
        if lookahead.get(i) != Some(&value) {
            *lookahead
                .get_mut(i)
                .ok_or(Error::Tree("proposer lookahead index".into()))
                .step(STEP)? = value;
        }
    }
    Ok(())
}

/// `get_beacon_proposer_indices(state, epoch)` [New in Fulu:EIP7917]: the proposers of every
/// slot of `epoch`, drawn from the active validators, less the slashed ones on a Gloas state
/// [Modified in Gloas:EIP8045].
///
/// [spec]: fulu/beacon-chain.md#new-get_beacon_proposer_indices,
/// gloas/beacon-chain.md#modified-get_beacon_proposer_indices
pub fn get_beacon_proposer_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
) -> Result<Vec<ValidatorIndex>, Error> {
    let mut indices = get_active_validator_indices(state, epoch);
    if state.fork_name.gloas_enabled() {
        indices.retain(|&index| {
            state
                .validators
                .get(index as usize)
                .is_some_and(|v| !v.slashed)
        });
    }
    let seed = get_seed(state, epoch, DOMAIN_BEACON_PROPOSER);
    compute_proposer_indices(state, epoch, &seed, &indices)
}

/// `compute_proposer_indices(state, epoch, seed, indices)` [New in Fulu:EIP7917]: one
/// `compute_proposer_index` per slot of `epoch`, each with `hash(seed + uint_to_bytes(slot))`.
///
/// [spec]: fulu/beacon-chain.md#new-compute_proposer_indices
pub fn compute_proposer_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
    seed: &Root,
    indices: &[ValidatorIndex],
) -> Result<Vec<ValidatorIndex>, Error> {
    compute_proposer_indices_with_balances::<E>(epoch, seed, indices, |index| {
        Ok(validator(state, index)?.effective_balance)
    })
}

/// [`compute_proposer_indices`] with effective balances read through `effective_balance`; the
/// slots are drawn in parallel.
fn compute_proposer_indices_with_balances<E: EthSpec>(
    epoch: Epoch,
    seed: &Root,
    indices: &[ValidatorIndex],
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error> + Sync,
) -> Result<Vec<ValidatorIndex>, Error> {
    if indices.is_empty() {
        return Err(Error::NoActiveValidators(epoch));
    }
    let start_slot = compute_start_slot_at_epoch::<E>(epoch);
    crate::parallel::SECTIONS.map_collect(0..E::slots_per_epoch(), |i| {
        let slot_seed = proposer_seed_at_slot(seed, start_slot.saturating_add(i));
        compute_proposer_index_with_balances::<E>(indices, &slot_seed, &effective_balance)
    })
}

/// `initialize_proposer_lookahead(state)` [New in Fulu:EIP7917]: the proposers of the current
/// epoch and the `MIN_SEED_LOOKAHEAD` epochs after it, for a state that has no lookahead yet.
///
/// [spec]: fulu/fork.md#initialize_proposer_lookahead
pub fn initialize_proposer_lookahead<E: EthSpec>(
    state: &StateRef<'_, E>,
) -> Result<Vec<ValidatorIndex>, Error> {
    let current_epoch = get_current_epoch(state);
    let mut lookahead = Vec::new();
    for i in 0..=E::MIN_SEED_LOOKAHEAD {
        lookahead.extend(get_beacon_proposer_indices(
            state,
            current_epoch.saturating_add(i),
        )?);
    }
    Ok(lookahead)
}
