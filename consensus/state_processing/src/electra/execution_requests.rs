//! Execution-layer requests: deposits (EIP-6110), withdrawals and exits (EIP-7002) and
//! consolidations (EIP-7251).
//!
//! A request the spec cannot honour is skipped, never a reason to refuse the block (the
//! execution layer has already accepted it); these functions fail only on a broken state or a
//! full state list.
//!
//! [spec]: electra/beacon-chain.md#execution-layer-withdrawal-requests

use typenum::Unsigned;
use types::{
    ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ValidatorIndex,
    electra::{
        ConsolidationRequest, DepositRequest, PendingConsolidation, PendingDeposit,
        PendingPartialWithdrawal, WithdrawalRequest,
    },
};

use crate::per_block::switch_to_compounding_validator;
use crate::{
    Caches, Error,
    common::{
        FULL_EXIT_REQUEST_AMOUNT, UNSET_DEPOSIT_REQUESTS_START_INDEX, balance,
        compute_consolidation_epoch_and_update_churn, compute_exit_epoch_and_update_churn,
        get_consolidation_churn_limit_at_fork, get_current_epoch, get_pending_balance_to_withdraw,
        has_compounding_withdrawal_credential, has_eth1_withdrawal_credential,
        has_execution_withdrawal_credential, initiate_validator_exit, is_active_validator,
        pubkey_bytes, validator, validator_mut,
    },
    error::add,
    view::{StateMut, StateRef, electra_field},
};

/// `process_deposit_request(state, deposit_request)`: queues the deposit. In Electra the first
/// request also sets `deposit_requests_start_index` (which ends eth1 deposits); Fulu, with eth1
/// deposits gone, no longer does.
///
/// [spec]: electra/beacon-chain.md#new-process_deposit_request,
/// fulu/beacon-chain.md#modified-process_deposit_request
pub fn process_deposit_request<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    deposit_request: &DepositRequest,
) -> Result<(), Error> {
    let fork = state.fork_name;
    if !fork.fulu_enabled() {
        let start_index = electra_field(
            state.deposit_requests_start_index.as_deref_mut(),
            "deposit_requests_start_index",
            fork,
        )?;
        if *start_index == UNSET_DEPOSIT_REQUESTS_START_INDEX {
            *start_index = deposit_request.index;
        }
    }
    let slot = *state.slot;
    electra_field(state.pending_deposits.as_mut(), "pending_deposits", fork)?
        .push(PendingDeposit {
            pubkey: deposit_request.pubkey,
            withdrawal_credentials: deposit_request.withdrawal_credentials,
            amount: deposit_request.amount,
            signature: deposit_request.signature,
            slot,
        })
        .map_err(|_| Error::ListFull("pending_deposits"))?;
    Ok(())
}

/// The address bytes of execution withdrawal credentials (`withdrawal_credentials[12:]`).
fn credentials_address(credentials: &types::Bytes32) -> &[u8] {
    &credentials[12..]
}

/// `process_withdrawal_request(state, withdrawal_request)`: a full exit (amount 0) or a partial
/// withdrawal of a compounding validator's excess balance, if the request is authorised and the
/// validator eligible; otherwise nothing.
///
/// [spec]: electra/beacon-chain.md#new-process_withdrawal_request
pub fn process_withdrawal_request<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    withdrawal_request: &WithdrawalRequest,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let amount = withdrawal_request.amount;
    let is_full_exit_request = amount == FULL_EXIT_REQUEST_AMOUNT;
    let pending_partial_withdrawals = electra_field(
        state.pending_partial_withdrawals.as_ref(),
        "pending_partial_withdrawals",
        state.fork_name,
    )?;
    if pending_partial_withdrawals.len() == E::PendingPartialWithdrawalsLimit::to_usize()
        && !is_full_exit_request
    {
        return Ok(());
    }
    let Some(index) = caches.validator_index(
        &state.as_ref(),
        &pubkey_bytes(&withdrawal_request.validator_pubkey),
    ) else {
        return Ok(());
    };
    let v = validator(&state.as_ref(), index)?;
    let has_correct_credential = has_execution_withdrawal_credential(v);
    let is_correct_source_address = credentials_address(&v.withdrawal_credentials)
        == withdrawal_request.source_address.as_slice();
    if !(has_correct_credential && is_correct_source_address) {
        return Ok(());
    }
    let current = get_current_epoch(&state.as_ref());
    if !is_active_validator(v, current) {
        return Ok(());
    }
    if v.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    if current
        < v.activation_epoch
            .saturating_add(spec.shard_committee_period)
    {
        return Ok(());
    }

    let pending_balance_to_withdraw = get_pending_balance_to_withdraw(&state.as_ref(), index)?;
    if is_full_exit_request {
        if pending_balance_to_withdraw == 0 {
            initiate_validator_exit(state, caches, index, spec)?;
        }
        return Ok(());
    }

    let current_balance = balance(&state.as_ref(), index)?;
    let has_sufficient_effective_balance = v.effective_balance >= E::MIN_ACTIVATION_BALANCE;
    let reserved = add(
        E::MIN_ACTIVATION_BALANCE,
        pending_balance_to_withdraw,
        "withdrawal request",
    )?;
    let has_excess_balance = current_balance > reserved;
    if has_compounding_withdrawal_credential(v)
        && has_sufficient_effective_balance
        && has_excess_balance
    {
        let to_withdraw = (current_balance - reserved).min(amount);
        let exit_queue_epoch =
            compute_exit_epoch_and_update_churn(state, caches, to_withdraw, spec)?;
        let withdrawable_epoch = add(
            exit_queue_epoch,
            spec.min_validator_withdrawability_delay,
            "withdrawable epoch",
        )?;
        crate::view::electra_field(
            state.pending_partial_withdrawals.as_mut(),
            "pending_partial_withdrawals",
            state.fork_name,
        )?
        .push(PendingPartialWithdrawal {
            validator_index: index,
            amount: to_withdraw,
            withdrawable_epoch,
        })
        .map_err(|_| Error::ListFull("pending_partial_withdrawals"))?;
    }
    Ok(())
}

/// `is_valid_switch_to_compounding_request(state, consolidation_request)`, with the source's
/// index when it is valid.
///
/// [spec]: electra/beacon-chain.md#new-is_valid_switch_to_compounding_request
pub fn is_valid_switch_to_compounding_request<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    consolidation_request: &ConsolidationRequest,
) -> Result<Option<ValidatorIndex>, Error> {
    if consolidation_request.source_pubkey != consolidation_request.target_pubkey {
        return Ok(None);
    }
    let Some(index) =
        caches.validator_index(state, &pubkey_bytes(&consolidation_request.source_pubkey))
    else {
        return Ok(None);
    };
    let source = validator(state, index)?;
    if credentials_address(&source.withdrawal_credentials)
        != consolidation_request.source_address.as_slice()
    {
        return Ok(None);
    }
    if !has_eth1_withdrawal_credential(source) {
        return Ok(None);
    }
    if !is_active_validator(source, get_current_epoch(state)) {
        return Ok(None);
    }
    if source.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(None);
    }
    Ok(Some(index))
}

/// `process_consolidation_request(state, consolidation_request)`: a switch to compounding
/// credentials (source equals target), or a consolidation of the source into the target, if
/// authorised and eligible; otherwise nothing.
///
/// [spec]: electra/beacon-chain.md#new-process_consolidation_request
pub fn process_consolidation_request<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    consolidation_request: &ConsolidationRequest,
    spec: &ChainSpec,
) -> Result<(), Error> {
    if let Some(source_index) =
        is_valid_switch_to_compounding_request(&state.as_ref(), caches, consolidation_request)?
    {
        return switch_to_compounding_validator(state, source_index);
    }
    if consolidation_request.source_pubkey == consolidation_request.target_pubkey {
        return Ok(());
    }
    let pending_consolidations = electra_field(
        state.pending_consolidations.as_ref(),
        "pending_consolidations",
        state.fork_name,
    )?;
    if pending_consolidations.len() == E::PendingConsolidationsLimit::to_usize() {
        return Ok(());
    }
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    // [Modified in Gloas:EIP8061]: the consolidation churn is independent of the others.
    if get_consolidation_churn_limit_at_fork::<E>(state.fork_name, total_active_balance, spec)
        <= E::MIN_ACTIVATION_BALANCE
    {
        return Ok(());
    }
    let state_ref = state.as_ref();
    let Some(source_index) = caches.validator_index(
        &state_ref,
        &pubkey_bytes(&consolidation_request.source_pubkey),
    ) else {
        return Ok(());
    };
    let Some(target_index) = caches.validator_index(
        &state_ref,
        &pubkey_bytes(&consolidation_request.target_pubkey),
    ) else {
        return Ok(());
    };
    let source = validator(&state_ref, source_index)?;
    let target = validator(&state_ref, target_index)?;
    let has_correct_credential = has_execution_withdrawal_credential(source);
    let is_correct_source_address = credentials_address(&source.withdrawal_credentials)
        == consolidation_request.source_address.as_slice();
    if !(has_correct_credential && is_correct_source_address) {
        return Ok(());
    }
    if !has_compounding_withdrawal_credential(target) {
        return Ok(());
    }
    let current = get_current_epoch(&state_ref);
    if !is_active_validator(source, current) || !is_active_validator(target, current) {
        return Ok(());
    }
    if source.exit_epoch != FAR_FUTURE_EPOCH || target.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    if current
        < source
            .activation_epoch
            .saturating_add(spec.shard_committee_period)
    {
        return Ok(());
    }
    if get_pending_balance_to_withdraw(&state_ref, source_index)? > 0 {
        return Ok(());
    }

    let source_effective_balance = source.effective_balance;
    let exit_epoch = compute_consolidation_epoch_and_update_churn(
        state,
        caches,
        source_effective_balance,
        spec,
    )?;
    let source = validator_mut::<E>(&mut state.validators, source_index)?;
    source.exit_epoch = exit_epoch;
    source.withdrawable_epoch = add(
        exit_epoch,
        spec.min_validator_withdrawability_delay,
        "withdrawable epoch",
    )?;
    crate::view::electra_field(
        state.pending_consolidations.as_mut(),
        "pending_consolidations",
        state.fork_name,
    )?
    .push(PendingConsolidation {
        source_index,
        target_index,
    })
    .map_err(|_| Error::ListFull("pending_consolidations"))?;
    Ok(())
}
