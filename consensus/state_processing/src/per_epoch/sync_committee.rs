//! `process_sync_committee_updates` and the next sync committee's selection.
//!
//! [spec]: altair/beacon-chain.md#sync-committee-updates

use ssz_types::FixedVector;
use types::{
    BLSPubkey, EthSpec, Gwei, ValidatorIndex, altair::SyncCommittee,
    signing::DOMAIN_SYNC_COMMITTEE, typenum::Unsigned,
};

use super::{EpochContext, EpochProcessingError, StepResult, context::ACTIVE_NEXT};
use crate::{
    Caches, Error,
    common::{
        get_active_validator_indices, get_current_epoch, get_seed, sample_by_effective_balance,
        validator,
    },
    view::{StateMut, StateRef},
};

const STEP: &str = "process_sync_committee_updates";

/// `process_sync_committee_updates(state)`: at the end of a sync-committee period the next
/// committee becomes current and a new next committee is drawn.
///
/// [spec]: altair/beacon-chain.md#sync-committee-updates
pub fn process_sync_committee_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
) -> Result<(), EpochProcessingError> {
    let next_epoch = get_current_epoch(&state.as_ref()).saturating_add(1);
    if !next_epoch.is_multiple_of(E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD) {
        return Ok(());
    }
    let active = get_active_validator_indices(&state.as_ref(), next_epoch);
    update(state, caches, &active, None)
}

/// The spec's `process_sync_committee_updates`, with the next epoch's active validators taken
/// from the registry summary `ctx`.
pub(super) fn process_sync_committee_updates_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    ctx: &EpochContext,
) -> Result<(), EpochProcessingError> {
    let next_epoch = ctx.current_epoch.saturating_add(1);
    if !next_epoch.is_multiple_of(E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD) {
        return Ok(());
    }
    let active = ctx.indices_with(ACTIVE_NEXT);
    update(state, caches, &active, Some(&ctx.effective_balances))
}

fn update<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    active_next: &[ValidatorIndex],
    effective_balances: Option<&[Gwei]>,
) -> Result<(), EpochProcessingError> {
    let next =
        get_next_sync_committee_from(&state.as_ref(), caches, active_next, effective_balances)
            .step(STEP)?;
    *state.current_sync_committee = std::mem::replace(state.next_sync_committee, next);
    Ok(())
}

/// `get_next_sync_committee_indices(state)` [Modified in Electra]: `SYNC_COMMITTEE_SIZE`
/// validators of the next epoch drawn by effective balance, possibly with repeats.
///
/// [spec]: electra/beacon-chain.md#modified-get_next_sync_committee_indices
pub fn get_next_sync_committee_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
) -> Result<Vec<ValidatorIndex>, Error> {
    let epoch = get_current_epoch(state).saturating_add(1);
    let active = get_active_validator_indices(state, epoch);
    next_sync_committee_indices_from(state, &active, None)
}

/// The draw, with effective balances from `effective_balances` (the epoch walk's, current after
/// effective-balance updates) when given, else from the registry.
fn next_sync_committee_indices_from<E: EthSpec>(
    state: &StateRef<'_, E>,
    active_next: &[ValidatorIndex],
    effective_balances: Option<&[Gwei]>,
) -> Result<Vec<ValidatorIndex>, Error> {
    let epoch = get_current_epoch(state).saturating_add(1);
    if active_next.is_empty() {
        return Err(Error::NoActiveValidators(epoch));
    }
    let seed = get_seed(state, epoch, DOMAIN_SYNC_COMMITTEE);
    let effective_balance = |index| match effective_balances {
        // The walk saw every validator that can be active in the next epoch.
        Some(balances) => balances
            .get(index as usize)
            .copied()
            .ok_or(Error::UnknownValidator {
                index,
                len: balances.len(),
            }),
        None => Ok(validator(state, index)?.effective_balance),
    };
    if !state.fork_name.electra_enabled() {
        return crate::deneb::get_next_sync_committee_indices::<E>(
            active_next,
            &seed,
            effective_balance,
        );
    }
    sample_by_effective_balance::<E>(
        active_next,
        &seed,
        E::SyncCommitteeSize::to_usize(),
        effective_balance,
    )
}

/// `get_next_sync_committee(state)`: the next committee's keys and their aggregate.
///
/// [spec]: altair/beacon-chain.md#get_next_sync_committee
pub fn get_next_sync_committee<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
) -> Result<SyncCommittee<E>, Error> {
    let epoch = get_current_epoch(state).saturating_add(1);
    let active = get_active_validator_indices(state, epoch);
    get_next_sync_committee_from(state, caches, &active, None)
}

fn get_next_sync_committee_from<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    active_next: &[ValidatorIndex],
    effective_balances: Option<&[Gwei]>,
) -> Result<SyncCommittee<E>, Error> {
    let indices = next_sync_committee_indices_from(state, active_next, effective_balances)?;
    let mut pubkeys: Vec<BLSPubkey> = Vec::with_capacity(indices.len());
    let mut keys = Vec::with_capacity(indices.len());
    for &index in &indices {
        pubkeys.push(validator(state, index)?.pubkey);
        keys.push(caches.pubkey(state, index)?);
    }
    let aggregate_pubkey = bls::eth_aggregate_pubkeys(&keys)
        .map_err(|_| Error::InvalidPubkey(indices.first().copied().unwrap_or_default()))?;
    Ok(SyncCommittee {
        pubkeys: FixedVector::new(pubkeys)
            .map_err(|_| Error::Tree("sync committee of the wrong size".into()))?,
        aggregate_pubkey: BLSPubkey::from(aggregate_pubkey.0),
    })
}
