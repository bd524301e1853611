//! Gloas withdrawals: builder pending withdrawals, then the validators' pending partial
//! withdrawals, then a sweep of the builders, then the validators' sweep. They are computed and
//! debited by the block (only when the parent's payload was delivered) and stored as
//! `payload_expected_withdrawals`, which the next payload must honour.
//!
//! [spec]: gloas/beacon-chain.md#withdrawals

use typenum::Unsigned;
use types::{
    EthSpec, WithdrawalIndex,
    gloas::{ProgressiveTreeList, Withdrawal},
};

use crate::{
    Error,
    common::{decrease_balance, get_current_epoch},
    gloas::builders::{
        builder_mut, convert_builder_index_to_validator_index,
        convert_validator_index_to_builder_index, get_builder_balance_after_withdrawals,
        is_builder_index,
    },
    per_block::{
        WithdrawalsInvalid,
        withdrawals::{
            get_pending_partial_withdrawals, get_validators_sweep_withdrawals,
            update_next_withdrawal_validator_index,
        },
    },
    view::{StateMut, StateRef, electra_field},
};

/// `ExpectedWithdrawals` [Modified in Gloas:EIP7732]: the withdrawals, and how far they advance
/// each queue and sweep.
///
/// [spec]: gloas/beacon-chain.md#expectedwithdrawals
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedWithdrawals {
    /// The withdrawals, in payload order.
    pub withdrawals: Vec<Withdrawal>,
    /// How many entries of `builder_pending_withdrawals` were processed.
    pub processed_builder_withdrawals_count: u64,
    /// How many entries of `pending_partial_withdrawals` were processed.
    pub processed_partial_withdrawals_count: u64,
    /// How many builders the builders' sweep visited.
    pub processed_builders_sweep_count: u64,
    /// How many validators the validators' sweep visited.
    pub processed_sweep_withdrawals_count: u64,
}

/// `get_builder_withdrawals(state, withdrawal_index, prior_withdrawals)`: the builder pending
/// withdrawals, in queue order, up to `MAX_WITHDRAWALS_PER_PAYLOAD - 1` withdrawals in all;
/// appended to `withdrawals` (the prior ones). Returns how many queue entries were processed.
///
/// [spec]: gloas/beacon-chain.md#new-get_builder_withdrawals
pub fn get_builder_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    withdrawal_index: &mut WithdrawalIndex,
    withdrawals: &mut Vec<Withdrawal>,
) -> Result<u64, Error> {
    let withdrawals_limit = E::MaxWithdrawalsPerPayload::to_usize().saturating_sub(1);
    let mut processed_count = 0u64;
    for withdrawal in state.gloas()?.builder_pending_withdrawals.iter() {
        if withdrawals.len() >= withdrawals_limit {
            break;
        }
        withdrawals.push(Withdrawal {
            index: *withdrawal_index,
            validator_index: convert_builder_index_to_validator_index(withdrawal.builder_index),
            address: withdrawal.fee_recipient,
            amount: withdrawal.amount,
        });
        *withdrawal_index += 1;
        processed_count += 1;
    }
    Ok(processed_count)
}

/// `get_builders_sweep_withdrawals(state, withdrawal_index, prior_withdrawals)`: at most
/// `MAX_BUILDERS_PER_WITHDRAWALS_SWEEP` builders from `next_withdrawal_builder_index`, wrapping
/// around; a withdrawable builder with a balance left (after the withdrawals before it)
/// withdraws all of it. Appended to `withdrawals`; returns how many builders were visited.
///
/// [spec]: gloas/beacon-chain.md#new-get_builders_sweep_withdrawals
pub fn get_builders_sweep_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    withdrawal_index: &mut WithdrawalIndex,
    withdrawals: &mut Vec<Withdrawal>,
) -> Result<u64, Error> {
    let epoch = get_current_epoch(state);
    let gloas = state.gloas()?;
    let len = gloas.builders.len();
    let builders_limit = len.min(E::MAX_BUILDERS_PER_WITHDRAWALS_SWEEP as usize);
    let withdrawals_limit = E::MaxWithdrawalsPerPayload::to_usize().saturating_sub(1);
    let mut processed_count = 0u64;
    let mut builder_index = *gloas.next_withdrawal_builder_index;
    for _ in 0..builders_limit {
        if withdrawals.len() >= withdrawals_limit {
            break;
        }
        let builder = crate::gloas::builders::builder(&gloas, builder_index)?;
        if builder.withdrawable_epoch <= epoch {
            // [Modified in 1.7.0b4]: the balance left after the withdrawals before it.
            let balance = get_builder_balance_after_withdrawals(state, builder_index, withdrawals)?;
            if balance > 0 {
                withdrawals.push(Withdrawal {
                    index: *withdrawal_index,
                    validator_index: convert_builder_index_to_validator_index(builder_index),
                    address: builder.execution_address,
                    amount: balance,
                });
                *withdrawal_index += 1;
            }
        }
        builder_index = (builder_index + 1) % len as u64;
        processed_count += 1;
    }
    Ok(processed_count)
}

/// `get_expected_withdrawals(state)` [Modified in Gloas:EIP7732].
///
/// [spec]: gloas/beacon-chain.md#modified-get_expected_withdrawals
pub fn get_expected_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
) -> Result<ExpectedWithdrawals, Error> {
    let mut withdrawal_index: WithdrawalIndex = *state.next_withdrawal_index;
    let mut withdrawals = Vec::with_capacity(E::MaxWithdrawalsPerPayload::to_usize());
    let processed_builder_withdrawals_count =
        get_builder_withdrawals(state, &mut withdrawal_index, &mut withdrawals)?;
    let processed_partial_withdrawals_count =
        get_pending_partial_withdrawals(state, &mut withdrawal_index, &mut withdrawals)?;
    let processed_builders_sweep_count =
        get_builders_sweep_withdrawals(state, &mut withdrawal_index, &mut withdrawals)?;
    let processed_sweep_withdrawals_count =
        get_validators_sweep_withdrawals(state, &mut withdrawal_index, &mut withdrawals)?;
    Ok(ExpectedWithdrawals {
        withdrawals,
        processed_builder_withdrawals_count,
        processed_partial_withdrawals_count,
        processed_builders_sweep_count,
        processed_sweep_withdrawals_count,
    })
}

/// `apply_withdrawals(state, withdrawals)` [Modified in Gloas:EIP7732]: a builder's withdrawal
/// (a flagged index) is debited from its builder balance, down to zero at most.
///
/// [spec]: gloas/beacon-chain.md#modified-apply_withdrawals
pub fn apply_withdrawals<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    withdrawals: &[Withdrawal],
) -> Result<(), Error> {
    for withdrawal in withdrawals {
        if is_builder_index(withdrawal.validator_index) {
            let builder_index =
                convert_validator_index_to_builder_index(withdrawal.validator_index);
            let builder = builder_mut(state, builder_index)?;
            builder.balance -= withdrawal.amount.min(builder.balance);
        } else {
            decrease_balance(state, withdrawal.validator_index, withdrawal.amount)?;
        }
    }
    Ok(())
}

/// `process_withdrawals(state)` [Modified in Gloas:EIP7732]: nothing when the parent's payload
/// is empty; otherwise the expected withdrawals are debited now (before the payload that pays
/// them out is seen), stored as `payload_expected_withdrawals`, and the queues and sweeps
/// advance.
///
/// [spec]: gloas/beacon-chain.md#modified-process_withdrawals
pub fn process_withdrawals<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), WithdrawalsInvalid> {
    let gloas = state.gloas_mut()?;
    // Return early if the parent block is empty.
    if *gloas.latest_block_hash != gloas.latest_execution_payload_bid.block_hash {
        return Ok(());
    }
    let expected = get_expected_withdrawals(&state.as_ref())?;
    let withdrawals = &expected.withdrawals;
    apply_withdrawals(state, withdrawals)?;
    // `update_next_withdrawal_index`.
    if let Some(latest) = withdrawals.last() {
        *state.next_withdrawal_index = latest.index + 1;
    }
    let gloas = state.gloas_mut()?;
    // `update_payload_expected_withdrawals`.
    *gloas.payload_expected_withdrawals = ProgressiveTreeList::from(withdrawals.clone());
    // `update_builder_pending_withdrawals`.
    if expected.processed_builder_withdrawals_count > 0 {
        gloas
            .builder_pending_withdrawals
            .pop_front(expected.processed_builder_withdrawals_count as usize)
            .map_err(Error::from)?;
    }
    // `update_pending_partial_withdrawals`.
    if expected.processed_partial_withdrawals_count > 0 {
        electra_field(
            state.pending_partial_withdrawals.as_mut(),
            "pending_partial_withdrawals",
            state.fork_name,
        )?
        .pop_front(expected.processed_partial_withdrawals_count as usize)?;
    }
    // `update_next_withdrawal_builder_index`.
    let gloas = state.gloas_mut()?;
    let builders = gloas.builders.len() as u64;
    if builders > 0 {
        *gloas.next_withdrawal_builder_index = (*gloas.next_withdrawal_builder_index
            + expected.processed_builders_sweep_count)
            % builders;
    }
    update_next_withdrawal_validator_index(state, withdrawals);
    Ok(())
}
