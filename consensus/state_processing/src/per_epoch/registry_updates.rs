//! `process_registry_updates` and `process_slashings`' sibling: activation eligibility,
//! ejections and activations.
//!
//! [spec]: electra/beacon-chain.md#modified-process_registry_updates

use types::{ChainSpec, EthSpec};

use super::{EpochContext, EpochProcessingError, StepResult};
use crate::{
    common::{
        compute_activation_exit_epoch, get_current_epoch, initiate_validator_exit_with_total,
        is_active_validator, is_eligible_for_activation, is_eligible_for_activation_queue,
        validator, validator_mut,
    },
    error::add,
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
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_registry_updates_with_context(state, &ctx, spec)
}

/// The spec's `process_registry_updates`, with the registry summary `ctx` already gathered: it
/// visits only the validators the walk flagged (every other validator satisfies none of the
/// three conditions).
pub(super) fn process_registry_updates_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ctx: &EpochContext,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let current_epoch = get_current_epoch(&state.as_ref());
    let activation_epoch = compute_activation_exit_epoch::<E>(current_epoch);
    for &index in &ctx.registry_candidates {
        let v = validator(&state.as_ref(), index).step(STEP)?;
        if is_eligible_for_activation_queue::<E>(v) {
            validator_mut::<E>(&mut state.validators, index)
                .step(STEP)?
                .activation_eligibility_epoch =
                add(current_epoch, 1, "eligibility epoch").step(STEP)?;
        } else if is_active_validator(v, current_epoch)
            && v.effective_balance <= spec.ejection_balance
        {
            initiate_validator_exit_with_total(state, index, ctx.total_active_balance, spec)
                .step(STEP)?;
        } else if is_eligible_for_activation(&state.as_ref(), v) {
            validator_mut::<E>(&mut state.validators, index)
                .step(STEP)?
                .activation_epoch = activation_epoch;
        }
    }
    Ok(())
}
