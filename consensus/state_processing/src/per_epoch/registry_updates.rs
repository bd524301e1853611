//! `process_registry_updates` and `process_slashings`' sibling: activation eligibility,
//! ejections and activations.
//!
//! [spec]: electra/beacon-chain.md#modified-process_registry_updates

use types::{ChainSpec, Epoch, EthSpec, FAR_FUTURE_EPOCH, Gwei, ValidatorIndex};

use super::{EpochContext, EpochProcessingError, StepResult};
use crate::{
    Caches, Error,
    common::{
        compute_activation_exit_epoch, get_activation_exit_churn_limit, get_current_epoch,
        is_active_validator, is_eligible_for_activation, is_eligible_for_activation_queue,
        validator, validator_mut,
    },
    error::{add, div, mul},
    view::StateMut,
};

const STEP: &str = "process_registry_updates";

/// `process_registry_updates(state)` [Modified in Electra:EIP7251]: every validator eligible
/// for the activation queue joins it, active validators at or below the ejection balance are
/// exited, and every validator eligible for activation is activated (no activation churn).
///
/// [spec]: electra/beacon-chain.md#modified-process_registry_updates
pub fn process_registry_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let _ = caches;
    let ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_with_context(state, &ctx, spec)
}

/// The step over the validators the registry walk flagged (every other validator satisfies
/// none of the three conditions).
pub(super) fn process_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ctx: &EpochContext,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let current_epoch = get_current_epoch(&state.as_ref());
    let activation_epoch = compute_activation_exit_epoch::<E>(current_epoch);
    for &index in &ctx.registry_candidates {
        let v = validator(&state.as_ref(), index).step(STEP)?;
        if is_eligible_for_activation_queue::<E>(v) {
            validator_mut::<E>(state.validators, index)
                .step(STEP)?
                .activation_eligibility_epoch =
                add(current_epoch, 1, "eligibility epoch").step(STEP)?;
        } else if is_active_validator(v, current_epoch)
            && v.effective_balance <= spec.ejection_balance
        {
            initiate_validator_exit_with_total(state, index, ctx.total_active_balance, spec)
                .step(STEP)?;
        } else if is_eligible_for_activation(&state.as_ref(), v) {
            validator_mut::<E>(state.validators, index)
                .step(STEP)?
                .activation_epoch = activation_epoch;
        }
    }
    Ok(())
}

/// `initiate_validator_exit(state, index)` [Modified in Electra:EIP7251] with the current
/// epoch's total active balance given: epoch processing knows it from its registry walk, and
/// asking the committee cache could cost a shuffle of the whole registry.
///
/// [spec]: electra/beacon-chain.md#modified-initiate_validator_exit
pub(crate) fn initiate_validator_exit_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let v = validator(&state.as_ref(), index)?;
    if v.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    let exit_balance = v.effective_balance;
    let exit_queue_epoch = compute_exit_epoch_and_update_churn_with_total(
        state,
        exit_balance,
        total_active_balance,
        spec,
    )?;
    let v = validator_mut::<E>(state.validators, index)?;
    v.exit_epoch = exit_queue_epoch;
    v.withdrawable_epoch = add(
        exit_queue_epoch,
        spec.min_validator_withdrawability_delay,
        "withdrawable epoch",
    )?;
    Ok(())
}

/// `compute_exit_epoch_and_update_churn(state, exit_balance)` [New in Electra:EIP7251], with
/// the total active balance given.
///
/// [spec]: electra/beacon-chain.md#new-compute_exit_epoch_and_update_churn
fn compute_exit_epoch_and_update_churn_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    exit_balance: Gwei,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let current = get_current_epoch(&state.as_ref());
    let mut earliest_exit_epoch =
        (*state.earliest_exit_epoch).max(compute_activation_exit_epoch::<E>(current));
    let per_epoch_churn = get_activation_exit_churn_limit::<E>(total_active_balance, spec);
    // New epoch for exits.
    let mut exit_balance_to_consume = if *state.earliest_exit_epoch < earliest_exit_epoch {
        per_epoch_churn
    } else {
        *state.exit_balance_to_consume
    };
    // Exit doesn't fit in the current earliest epoch.
    if exit_balance > exit_balance_to_consume {
        let balance_to_process = exit_balance - exit_balance_to_consume;
        let additional_epochs = add(
            div(balance_to_process - 1, per_epoch_churn, "exit churn")?,
            1,
            "exit churn",
        )?;
        earliest_exit_epoch = add(earliest_exit_epoch, additional_epochs, "exit epoch")?;
        exit_balance_to_consume = add(
            exit_balance_to_consume,
            mul(additional_epochs, per_epoch_churn, "exit churn")?,
            "exit churn",
        )?;
    }
    // Consume the balance and update state variables.
    *state.exit_balance_to_consume = exit_balance_to_consume - exit_balance;
    *state.earliest_exit_epoch = earliest_exit_epoch;
    Ok(earliest_exit_epoch)
}
