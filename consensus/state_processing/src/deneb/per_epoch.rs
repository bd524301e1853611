//! Epoch processing at Deneb: `process_epoch` without Electra's pending deposits and
//! consolidations, and the three steps whose Deneb form Electra modifies.
//!
//! These walk the registry themselves rather than sharing the fused walk of
//! [`crate::per_epoch::process_epoch`]: a Deneb epoch is processed at most a few times, on the
//! way to the Electra fork.
//!
//! [spec]: deneb/beacon-chain.md#epoch-processing (and capella/beacon-chain.md#epoch-processing)

use typenum::Unsigned as _;
use types::{ChainSpec, EthSpec, Gwei};

use super::helpers::{
    get_validator_activation_churn_limit, initiate_validator_exit, is_eligible_for_activation_queue,
};
use crate::{
    Caches, Error,
    common::{
        compute_activation_exit_epoch, decrease_balance, get_current_epoch, is_active_validator,
        is_eligible_for_activation, validator, validator_mut,
    },
    error::{add, div, mul},
    per_epoch::{
        EpochProcessingError, process_eth1_data_reset, process_historical_summaries_update,
        process_inactivity_updates, process_justification_and_finalization,
        process_participation_flag_updates, process_randao_mixes_reset,
        process_rewards_and_penalties, process_slashings_reset, process_sync_committee_updates,
        updated_effective_balance,
    },
    view::StateMut,
};

/// Attaches the step's name to a helper's error.
fn step(step: &'static str) -> impl FnOnce(Error) -> EpochProcessingError {
    move |source| EpochProcessingError::Step { step, source }
}

/// `process_epoch(state)` as Deneb has it (Capella's list of steps).
///
/// [spec]: capella/beacon-chain.md#epoch-processing
pub fn process_epoch<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    process_justification_and_finalization(state, spec)?;
    process_inactivity_updates(state, spec)?;
    process_rewards_and_penalties(state, spec)?;
    process_registry_updates(state, spec)?;
    process_slashings(state, caches)?;
    process_eth1_data_reset(state)?;
    process_effective_balance_updates(state, caches)?;
    process_slashings_reset(state)?;
    process_randao_mixes_reset(state)?;
    process_historical_summaries_update(state)?;
    process_participation_flag_updates(state)?;
    process_sync_committee_updates(state, caches)?;
    Ok(())
}

/// `process_registry_updates(state)` [Modified in Deneb:EIP7514]: validators with a full
/// balance join the activation queue, active validators at or below the ejection balance are
/// exited, and the queue's first `get_validator_activation_churn_limit` validators (by
/// eligibility epoch, then index) are activated.
///
/// [spec]: deneb/beacon-chain.md#registry-updates
pub fn process_registry_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    const STEP: &str = "process_registry_updates";
    let current_epoch = get_current_epoch(&state.as_ref());
    for index in 0..state.validators.len() as u64 {
        let v = validator(&state.as_ref(), index).map_err(step(STEP))?;
        if is_eligible_for_activation_queue::<E>(v) {
            validator_mut::<E>(&mut state.validators, index)
                .map_err(step(STEP))?
                .activation_eligibility_epoch =
                add(current_epoch, 1, "eligibility epoch").map_err(step(STEP))?;
        }
        let v = validator(&state.as_ref(), index).map_err(step(STEP))?;
        if is_active_validator(v, current_epoch) && v.effective_balance <= spec.ejection_balance {
            initiate_validator_exit(state, index, spec).map_err(step(STEP))?;
        }
    }

    // Queue for activation by eligibility epoch, then index.
    let mut activation_queue: Vec<(u64, u64)> = state
        .validators
        .iter()
        .enumerate()
        .filter(|(_, v)| is_eligible_for_activation(&state.as_ref(), v))
        .map(|(index, v)| (v.activation_eligibility_epoch, index as u64))
        .collect();
    activation_queue.sort_unstable();
    let churn = get_validator_activation_churn_limit(&state.as_ref(), spec);
    let activation_epoch = compute_activation_exit_epoch::<E>(current_epoch);
    for &(_, index) in activation_queue.iter().take(churn as usize) {
        validator_mut::<E>(&mut state.validators, index)
            .map_err(step(STEP))?
            .activation_epoch = activation_epoch;
    }
    Ok(())
}

/// `process_slashings(state)` (Bellatrix's, as Deneb has it): the correlation penalty, with the
/// effective balance in increments multiplied before the division by the total.
///
/// [spec]: bellatrix/beacon-chain.md#slashings
pub fn process_slashings<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
) -> Result<(), EpochProcessingError> {
    const STEP: &str = "process_slashings";
    let epoch = get_current_epoch(&state.as_ref());
    let total_balance = caches
        .get_total_active_balance(&state.as_ref())
        .map_err(step(STEP))?;
    let mut sum_slashings: Gwei = 0;
    for amount in state.slashings.iter() {
        sum_slashings = add(sum_slashings, *amount, "sum of slashings").map_err(step(STEP))?;
    }
    let adjusted_total_slashing_balance = mul(
        sum_slashings,
        E::PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX,
        "adjusted total slashing balance",
    )
    .map_err(step(STEP))?
    .min(total_balance);
    let increment = E::EFFECTIVE_BALANCE_INCREMENT;
    let target_withdrawable_epoch = epoch.saturating_add(E::EpochsPerSlashingsVector::to_u64() / 2);
    for index in 0..state.validators.len() as u64 {
        let v = validator(&state.as_ref(), index).map_err(step(STEP))?;
        if v.slashed && v.withdrawable_epoch == target_withdrawable_epoch {
            let penalty_numerator = mul(
                v.effective_balance / increment,
                adjusted_total_slashing_balance,
                "slashing penalty numerator",
            )
            .map_err(step(STEP))?;
            let penalty = mul(
                div(penalty_numerator, total_balance, "slashing penalty").map_err(step(STEP))?,
                increment,
                "slashing penalty",
            )
            .map_err(step(STEP))?;
            decrease_balance(state, index, penalty).map_err(step(STEP))?;
        }
    }
    Ok(())
}

/// `process_effective_balance_updates(state)` (phase0's, as Deneb has it): effective balances
/// follow balances with hysteresis, up to `MAX_EFFECTIVE_BALANCE`. The cached total active
/// balances of the current and next epoch are brought up to date.
///
/// [spec]: phase0/beacon-chain.md#effective-balances-updates
pub fn process_effective_balance_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
) -> Result<(), EpochProcessingError> {
    const STEP: &str = "process_effective_balance_updates";
    let len = state.validators.len();
    if state.balances.len() != len {
        return Err(EpochProcessingError::ListLengthMismatch {
            list: "balances",
            len: state.balances.len(),
            validators: len,
        });
    }
    let current_epoch = get_current_epoch(&state.as_ref());
    let next_epoch = current_epoch.saturating_add(1);
    let (mut total_current, mut total_next) = (0u128, 0u128);
    for (index, balance) in state.balances.iter().enumerate() {
        let v = validator_mut::<E>(&mut state.validators, index as u64).map_err(step(STEP))?;
        if let Some(new) =
            updated_effective_balance::<E>(balance, v.effective_balance, E::MAX_EFFECTIVE_BALANCE)
        {
            v.effective_balance = new;
        }
        if is_active_validator(v, current_epoch) {
            total_current += v.effective_balance as u128;
        }
        if is_active_validator(v, next_epoch) {
            total_next += v.effective_balance as u128;
        }
    }
    let to_gwei = |sum: u128| {
        Gwei::try_from(sum)
            .map(|total| total.max(E::EFFECTIVE_BALANCE_INCREMENT))
            .map_err(|_| Error::ArithmeticOverflow("total active balance"))
            .map_err(step(STEP))
    };
    caches.update_total_active_balance(current_epoch, to_gwei(total_current)?);
    caches.update_total_active_balance(next_epoch, to_gwei(total_next)?);
    Ok(())
}
