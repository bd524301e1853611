//! `process_pending_deposits` and `process_pending_consolidations`, with the registry helpers
//! deposits need (`apply_pending_deposit`, `add_validator_to_registry`,
//! `get_validator_from_deposit`).
//!
//! [spec]: electra/beacon-chain.md#new-process_pending_deposits

use types::{ChainSpec, EthSpec, FAR_FUTURE_EPOCH, GENESIS_SLOT, Gwei, electra::PendingDeposit};

use crate::per_epoch::{EpochProcessingError, StepResult};
use crate::{
    Caches, Error,
    common::{
        add_validator_to_registry, compute_start_slot_at_epoch, decrease_balance,
        get_activation_churn_limit, get_activation_exit_churn_limit, get_current_epoch,
        increase_balance, is_valid_deposit_signature, pubkey_bytes, validator,
    },
    error::add,
    view::{StateMut, electra_field},
};

/// `process_pending_deposits(state)` [New in Electra:EIP7251]: applies the finalized pending
/// deposits that fit in the activation churn, postponing those of exiting validators.
///
/// [spec]: electra/beacon-chain.md#new-process_pending_deposits
pub fn process_pending_deposits<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let total_active_balance = caches
        .get_total_active_balance(&state.as_ref())
        .step("process_pending_deposits")?;
    process_pending_deposits_with_total(state, caches, total_active_balance, spec)
}

/// The spec's `process_pending_deposits`, with the current epoch's total active balance given
/// (epoch processing has it from its registry walk).
pub(crate) fn process_pending_deposits_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    const STEP: &str = "process_pending_deposits";
    let fork = state.fork_name;
    let next_epoch = get_current_epoch(&state.as_ref()).saturating_add(1);
    let deposit_balance_to_consume = *electra_field(
        state.deposit_balance_to_consume.as_deref(),
        "deposit_balance_to_consume",
        fork,
    )
    .step(STEP)?;
    // Electra holds deposit requests back until the eth1 bridge deposits before them are in;
    // Fulu, with the bridge gone, does not [Modified in Fulu].
    let eth1_bridge_pending = !fork.fulu_enabled()
        && *state.eth1_deposit_index
            < *electra_field(
                state.deposit_requests_start_index.as_deref(),
                "deposit_requests_start_index",
                fork,
            )
            .step(STEP)?;
    // Deposits take the activation-only churn from Gloas on [Modified in Gloas:EIP8061].
    let churn_limit = if fork.gloas_enabled() {
        get_activation_churn_limit::<E>(total_active_balance, spec)
    } else {
        get_activation_exit_churn_limit::<E>(total_active_balance, spec)
    };
    let available_for_processing = add(
        deposit_balance_to_consume,
        churn_limit,
        "available for processing",
    )
    .step(STEP)?;
    let mut processed_amount: Gwei = 0;
    let mut next_deposit_index: usize = 0;
    let mut deposits_to_postpone = Vec::new();
    let mut is_churn_limit_reached = false;
    let finalized_slot = compute_start_slot_at_epoch::<E>(state.finalized_checkpoint.epoch);

    while let Some(deposit) =
        electra_field(state.pending_deposits.as_ref(), "pending_deposits", fork)
            .step(STEP)?
            .get(next_deposit_index)
            .cloned()
    {
        // Do not process deposit requests while eth1 bridge deposits are not yet applied.
        if eth1_bridge_pending && deposit.slot > GENESIS_SLOT {
            break;
        }
        // Only finalized deposits are processed.
        if deposit.slot > finalized_slot {
            break;
        }
        // At most MAX_PENDING_DEPOSITS_PER_EPOCH per epoch.
        if next_deposit_index as u64 >= E::MAX_PENDING_DEPOSITS_PER_EPOCH {
            break;
        }
        // Read the validator's state.
        let (is_validator_exited, is_validator_withdrawn) =
            match caches.validator_index(&state.as_ref(), &pubkey_bytes(&deposit.pubkey)) {
                Some(index) => {
                    let v = validator(&state.as_ref(), index).step(STEP)?;
                    (
                        v.exit_epoch < FAR_FUTURE_EPOCH,
                        v.withdrawable_epoch < next_epoch,
                    )
                }
                None => (false, false),
            };

        if is_validator_withdrawn {
            // The deposited balance will never become active: credit it without consuming churn.
            apply_pending_deposit(state, caches, &deposit, spec).step(STEP)?;
        } else if is_validator_exited {
            // The validator is exiting: postpone the deposit until it is withdrawable.
            deposits_to_postpone.push(deposit);
        } else {
            // Stop at the first deposit that does not fit in the churn.
            is_churn_limit_reached =
                processed_amount.saturating_add(deposit.amount) > available_for_processing;
            if is_churn_limit_reached {
                break;
            }
            processed_amount += deposit.amount;
            apply_pending_deposit(state, caches, &deposit, spec).step(STEP)?;
        }
        // However the deposit was handled, the queue moves on.
        next_deposit_index += 1;
    }

    // `state.pending_deposits = state.pending_deposits[next_deposit_index:] + deposits_to_postpone`
    let pending_deposits =
        electra_field(state.pending_deposits.as_mut(), "pending_deposits", fork).step(STEP)?;
    if next_deposit_index > 0 {
        pending_deposits.pop_front(next_deposit_index).step(STEP)?;
    }
    for deposit in deposits_to_postpone {
        pending_deposits.push(deposit).step(STEP)?;
    }

    // Accumulate churn only if the churn limit was hit.
    *electra_field(
        state.deposit_balance_to_consume.as_deref_mut(),
        "deposit_balance_to_consume",
        fork,
    )
    .step(STEP)? = if is_churn_limit_reached {
        available_for_processing - processed_amount
    } else {
        0
    };
    Ok(())
}

/// `apply_pending_deposit(state, deposit)` [New in Electra:EIP7251]: tops up an existing
/// validator, or adds a new one if the deposit's signature proves possession of its key.
///
/// [spec]: electra/beacon-chain.md#new-apply_pending_deposit
pub fn apply_pending_deposit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    deposit: &PendingDeposit,
    spec: &ChainSpec,
) -> Result<(), Error> {
    match caches.validator_index(&state.as_ref(), &pubkey_bytes(&deposit.pubkey)) {
        Some(index) => increase_balance(state, index, deposit.amount),
        None => {
            if is_valid_deposit_signature(
                &deposit.pubkey,
                &deposit.withdrawal_credentials,
                deposit.amount,
                &deposit.signature,
                spec,
            ) {
                add_validator_to_registry(
                    state,
                    caches,
                    deposit.pubkey,
                    deposit.withdrawal_credentials,
                    deposit.amount,
                )?;
            }
            Ok(())
        }
    }
}

/// `process_pending_consolidations(state)` [New in Electra:EIP7251]: moves the active balance
/// of each withdrawable consolidation source to its target, in queue order.
///
/// [spec]: electra/beacon-chain.md#new-process_pending_consolidations
pub fn process_pending_consolidations<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    const STEP: &str = "process_pending_consolidations";
    let next_epoch = get_current_epoch(&state.as_ref()).saturating_add(1);
    let mut next_pending_consolidation = 0;
    let fork = state.fork_name;
    while let Some(pending) = electra_field(
        state.pending_consolidations.as_ref(),
        "pending_consolidations",
        fork,
    )
    .step(STEP)?
    .get(next_pending_consolidation)
    .cloned()
    {
        let source = validator(&state.as_ref(), pending.source_index).step(STEP)?;
        if source.slashed {
            next_pending_consolidation += 1;
            continue;
        }
        if source.withdrawable_epoch > next_epoch {
            break;
        }
        // The consolidated balance: the source's active balance; any excess stays withdrawable.
        let source_balance = state
            .balances
            .get(pending.source_index as usize)
            .ok_or(Error::UnknownValidator {
                index: pending.source_index,
                len: state.balances.len(),
            })
            .step(STEP)?;
        let source_effective_balance = source_balance.min(source.effective_balance);
        decrease_balance(state, pending.source_index, source_effective_balance).step(STEP)?;
        increase_balance(state, pending.target_index, source_effective_balance).step(STEP)?;
        next_pending_consolidation += 1;
    }
    if next_pending_consolidation > 0 {
        electra_field(
            state.pending_consolidations.as_mut(),
            "pending_consolidations",
            fork,
        )
        .step(STEP)?
        .pop_front(next_pending_consolidation)
        .step(STEP)?;
    }
    Ok(())
}
