//! The spec's beacon state mutators, in their Electra form: balances, the exit and
//! consolidation churn, exits, and adding a validator.
//!
//! [spec]: phase0/beacon-chain.md#beacon-state-mutators,
//! electra/beacon-chain.md#beacon-state-mutators

use types::{
    BLSPubkey, Bytes32, ChainSpec, Epoch, EthSpec, FAR_FUTURE_EPOCH, Gwei, ValidatorIndex,
};

use crate::{
    Caches, Error,
    common::{
        accessors::{
            get_activation_exit_churn_limit, get_consolidation_churn_limit_at_fork,
            get_current_epoch, get_exit_churn_limit, validator, validator_mut,
        },
        misc::{compute_activation_exit_epoch, get_validator_from_deposit, pubkey_bytes},
    },
    error::{add, div, mul},
    view::{StateMut, electra_field},
};

/// `increase_balance(state, index, delta)`.
#[inline]
pub fn increase_balance<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    delta: Gwei,
) -> Result<(), Error> {
    let len = state.balances.len();
    let current = state
        .balances
        .get(index as usize)
        .ok_or(Error::UnknownValidator { index, len })?;
    state
        .balances
        .set(index as usize, add(current, delta, "increase_balance")?)?;
    Ok(())
}

/// `decrease_balance(state, index, delta)`: saturating at zero.
#[inline]
pub fn decrease_balance<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    delta: Gwei,
) -> Result<(), Error> {
    let len = state.balances.len();
    let current = state
        .balances
        .get(index as usize)
        .ok_or(Error::UnknownValidator { index, len })?;
    state
        .balances
        .set(index as usize, current.saturating_sub(delta))?;
    Ok(())
}

/// `compute_exit_epoch_and_update_churn(state, exit_balance)` [New in Electra:EIP7251]
/// [Modified in Gloas:EIP8061] (the exit churn, `get_exit_churn_limit`, is uncapped).
///
/// [spec]: electra/beacon-chain.md#new-compute_exit_epoch_and_update_churn,
/// gloas/beacon-chain.md#modified-compute_exit_epoch_and_update_churn
pub fn compute_exit_epoch_and_update_churn<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    exit_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    compute_exit_epoch_and_update_churn_with_total(state, exit_balance, total_active_balance, spec)
}

/// [`compute_exit_epoch_and_update_churn`] with the current epoch's total active balance given
/// (epoch processing knows it from its registry walk; asking the committee cache could cost a
/// shuffle of the whole registry).
pub fn compute_exit_epoch_and_update_churn_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    exit_balance: Gwei,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let current = get_current_epoch(&state.as_ref());
    let fork = state.fork_name;
    let state_earliest_exit_epoch = electra_field(
        state.earliest_exit_epoch.as_deref_mut(),
        "earliest_exit_epoch",
        fork,
    )?;
    let state_exit_balance_to_consume = electra_field(
        state.exit_balance_to_consume.as_deref_mut(),
        "exit_balance_to_consume",
        fork,
    )?;
    let mut earliest_exit_epoch =
        (*state_earliest_exit_epoch).max(compute_activation_exit_epoch::<E>(current));
    // Exits take the uncapped exit churn from Gloas on [Modified in Gloas:EIP8061].
    let per_epoch_churn = if fork.gloas_enabled() {
        get_exit_churn_limit::<E>(total_active_balance, spec)
    } else {
        get_activation_exit_churn_limit::<E>(total_active_balance, spec)
    };
    // A new epoch for exits starts with a whole epoch's churn.
    let mut exit_balance_to_consume = if *state_earliest_exit_epoch < earliest_exit_epoch {
        per_epoch_churn
    } else {
        *state_exit_balance_to_consume
    };
    // The exit does not fit in the earliest epoch: push it back by whole epochs of churn.
    if exit_balance > exit_balance_to_consume {
        let balance_to_process = exit_balance - exit_balance_to_consume;
        let additional_epochs = div(balance_to_process - 1, per_epoch_churn, "exit churn")? + 1;
        earliest_exit_epoch = add(earliest_exit_epoch, additional_epochs, "exit epoch")?;
        exit_balance_to_consume = add(
            exit_balance_to_consume,
            mul(additional_epochs, per_epoch_churn, "exit churn")?,
            "exit churn",
        )?;
    }
    *state_exit_balance_to_consume = exit_balance_to_consume - exit_balance;
    *state_earliest_exit_epoch = earliest_exit_epoch;
    Ok(earliest_exit_epoch)
}

/// `compute_consolidation_epoch_and_update_churn(state, consolidation_balance)` [New in
/// Electra:EIP7251], with Gloas's consolidation churn on a Gloas state.
///
/// [spec]: electra/beacon-chain.md#new-compute_consolidation_epoch_and_update_churn
pub fn compute_consolidation_epoch_and_update_churn<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    consolidation_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let current = get_current_epoch(&state.as_ref());
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    let fork = state.fork_name;
    let state_earliest_consolidation_epoch = electra_field(
        state.earliest_consolidation_epoch.as_deref_mut(),
        "earliest_consolidation_epoch",
        fork,
    )?;
    let state_consolidation_balance_to_consume = electra_field(
        state.consolidation_balance_to_consume.as_deref_mut(),
        "consolidation_balance_to_consume",
        fork,
    )?;
    let mut earliest_consolidation_epoch =
        (*state_earliest_consolidation_epoch).max(compute_activation_exit_epoch::<E>(current));
    // [Modified in Gloas:EIP8061]: an independent consolidation churn.
    let per_epoch_consolidation_churn =
        get_consolidation_churn_limit_at_fork::<E>(fork, total_active_balance, spec);
    let mut consolidation_balance_to_consume =
        if *state_earliest_consolidation_epoch < earliest_consolidation_epoch {
            per_epoch_consolidation_churn
        } else {
            *state_consolidation_balance_to_consume
        };
    if consolidation_balance > consolidation_balance_to_consume {
        let balance_to_process = consolidation_balance - consolidation_balance_to_consume;
        let additional_epochs = div(
            balance_to_process - 1,
            per_epoch_consolidation_churn,
            "consolidation churn",
        )? + 1;
        earliest_consolidation_epoch = add(
            earliest_consolidation_epoch,
            additional_epochs,
            "consolidation epoch",
        )?;
        consolidation_balance_to_consume = add(
            consolidation_balance_to_consume,
            mul(
                additional_epochs,
                per_epoch_consolidation_churn,
                "consolidation churn",
            )?,
            "consolidation churn",
        )?;
    }
    *state_consolidation_balance_to_consume =
        consolidation_balance_to_consume - consolidation_balance;
    *state_earliest_consolidation_epoch = earliest_consolidation_epoch;
    Ok(earliest_consolidation_epoch)
}

/// `initiate_validator_exit(state, index)` [Modified in Electra:EIP7251]: schedules the exit
/// through the balance churn; a validator already exiting is left as it is.
///
/// [spec]: electra/beacon-chain.md#modified-initiate_validator_exit
pub fn initiate_validator_exit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    index: ValidatorIndex,
    spec: &ChainSpec,
) -> Result<(), Error> {
    if validator(&state.as_ref(), index)?.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    if !state.fork_name.electra_enabled() {
        return crate::deneb::initiate_validator_exit(state, index, spec);
    }
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    initiate_validator_exit_with_total(state, index, total_active_balance, spec)
}

/// [`initiate_validator_exit`] with the current epoch's total active balance given.
pub fn initiate_validator_exit_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let v = validator(&state.as_ref(), index)?;
    if v.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    if !state.fork_name.electra_enabled() {
        return crate::deneb::initiate_validator_exit(state, index, spec);
    }
    let exit_balance = v.effective_balance;
    let exit_queue_epoch = compute_exit_epoch_and_update_churn_with_total(
        state,
        exit_balance,
        total_active_balance,
        spec,
    )?;
    let v = validator_mut::<E>(&mut state.validators, index)?;
    v.exit_epoch = exit_queue_epoch;
    v.withdrawable_epoch = add(
        exit_queue_epoch,
        spec.min_validator_withdrawability_delay,
        "withdrawable epoch",
    )?;
    Ok(())
}

/// `add_validator_to_registry(state, pubkey, withdrawal_credentials, amount)` [Modified in
/// Electra:EIP7251]: appends the validator and its balance, participation and inactivity score,
/// and records its key in the public-key cache.
///
/// [spec]: electra/beacon-chain.md#modified-add_validator_to_registry
pub fn add_validator_to_registry<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    pubkey: BLSPubkey,
    withdrawal_credentials: Bytes32,
    amount: Gwei,
) -> Result<(), Error> {
    let index = state.validators.len() as u64;
    let validator = if state.fork_name.electra_enabled() {
        get_validator_from_deposit::<E>(pubkey, withdrawal_credentials, amount)
    } else {
        crate::deneb::get_validator_from_deposit::<E>(pubkey, withdrawal_credentials, amount)
    };
    state
        .validators
        .push(validator)
        .map_err(|_| Error::ListFull("validators"))?;
    state
        .balances
        .push(amount)
        .map_err(|_| Error::ListFull("balances"))?;
    state
        .previous_epoch_participation
        .push(0)
        .map_err(|_| Error::ListFull("previous_epoch_participation"))?;
    state
        .current_epoch_participation
        .push(0)
        .map_err(|_| Error::ListFull("current_epoch_participation"))?;
    state
        .inactivity_scores
        .push(0)
        .map_err(|_| Error::ListFull("inactivity_scores"))?;
    caches.push_validator(index, &pubkey_bytes(&pubkey));
    Ok(())
}
