//! Withdrawals: the pending partial withdrawals that are due, then a bounded sweep of the
//! registry from `next_withdrawal_validator_index`.
//!
//! [spec]: electra/beacon-chain.md#withdrawals

use typenum::Unsigned;
use types::{
    EthSpec, ExecutionAddress, FAR_FUTURE_EPOCH, Gwei, ValidatorIndex, WithdrawalIndex,
    electra::{ExecutionPayload, Validator, Withdrawal},
};

use super::WithdrawalsInvalid;
use crate::{
    Error,
    common::{
        balance, decrease_balance, get_current_epoch, get_max_effective_balance,
        is_fully_withdrawable_validator, is_partially_withdrawable_validator,
    },
    view::{StateMut, StateRef},
};

/// `ExpectedWithdrawals`: the withdrawals the next payload must carry, and how far they advance
/// the partial withdrawal queue and the sweep.
///
/// [spec]: electra/beacon-chain.md#new-expectedwithdrawals
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedWithdrawals {
    /// The withdrawals, in payload order.
    pub withdrawals: Vec<Withdrawal>,
    /// How many entries of `pending_partial_withdrawals` were processed.
    pub processed_partial_withdrawals_count: u64,
    /// How many validators the sweep visited.
    pub processed_validators_sweep_count: u64,
}

/// The execution address of `0x01`/`0x02` credentials.
pub(crate) fn withdrawal_address(validator: &Validator) -> ExecutionAddress {
    ExecutionAddress::from_slice(&validator.withdrawal_credentials[12..])
}

/// `get_balance_after_withdrawals(state, validator_index, withdrawals)`.
pub(crate) fn get_balance_after_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    validator_index: ValidatorIndex,
    withdrawals: &[Withdrawal],
) -> Result<Gwei, Error> {
    let withdrawn: Gwei = withdrawals
        .iter()
        .filter(|w| w.validator_index == validator_index)
        .map(|w| w.amount)
        .sum();
    balance(state, validator_index)?
        .checked_sub(withdrawn)
        .ok_or(Error::ArithmeticOverflow("balance after withdrawals"))
}

/// `is_eligible_for_partial_withdrawals(validator, balance)`.
fn is_eligible_for_partial_withdrawals<E: EthSpec>(validator: &Validator, balance: Gwei) -> bool {
    validator.exit_epoch == FAR_FUTURE_EPOCH
        && validator.effective_balance >= E::MIN_ACTIVATION_BALANCE
        && balance > E::MIN_ACTIVATION_BALANCE
}

/// `get_expected_withdrawals(state)`.
///
/// [spec]: electra/beacon-chain.md#modified-get_expected_withdrawals
pub fn get_expected_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
) -> Result<ExpectedWithdrawals, Error> {
    let max_withdrawals = E::MaxWithdrawalsPerPayload::to_usize();
    let mut withdrawal_index: WithdrawalIndex = *state.next_withdrawal_index;
    let mut withdrawals: Vec<Withdrawal> = Vec::with_capacity(max_withdrawals);
    let processed_partial_withdrawals_count =
        get_pending_partial_withdrawals(state, &mut withdrawal_index, &mut withdrawals)?;
    let processed_validators_sweep_count =
        get_validators_sweep_withdrawals(state, &mut withdrawal_index, &mut withdrawals)?;
    Ok(ExpectedWithdrawals {
        withdrawals,
        processed_partial_withdrawals_count,
        processed_validators_sweep_count,
    })
}

/// `get_pending_partial_withdrawals(state, withdrawal_index, prior_withdrawals)`: appends the
/// due pending partial withdrawals to `withdrawals` (which holds the prior ones) and returns how
/// many queue entries were processed.
///
/// [spec]: electra/beacon-chain.md#new-get_pending_partial_withdrawals
pub(crate) fn get_pending_partial_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    withdrawal_index: &mut WithdrawalIndex,
    withdrawals: &mut Vec<Withdrawal>,
) -> Result<u64, Error> {
    let epoch = get_current_epoch(state);
    let max_withdrawals = E::MaxWithdrawalsPerPayload::to_usize();
    let partials_limit = (withdrawals.len()
        + E::MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP as usize)
        .min(max_withdrawals.saturating_sub(1));
    let mut processed_partial_withdrawals_count = 0u64;
    // [New in Electra:EIP7251]; a Deneb state has no pending partial withdrawals.
    if !state.fork_name.electra_enabled() {
        return Ok(0);
    }
    let pending_partial_withdrawals = crate::view::electra_field(
        state.pending_partial_withdrawals,
        "pending_partial_withdrawals",
        state.fork_name,
    )?;
    for pending in pending_partial_withdrawals.iter() {
        if pending.withdrawable_epoch > epoch || withdrawals.len() >= partials_limit {
            break;
        }
        let index = pending.validator_index;
        let validator = crate::common::validator(state, index)?;
        let balance = get_balance_after_withdrawals(state, index, withdrawals)?;
        if is_eligible_for_partial_withdrawals::<E>(validator, balance) {
            withdrawals.push(Withdrawal {
                index: *withdrawal_index,
                validator_index: index,
                address: withdrawal_address(validator),
                amount: (balance - E::MIN_ACTIVATION_BALANCE).min(pending.amount),
            });
            *withdrawal_index += 1;
        }
        processed_partial_withdrawals_count += 1;
    }
    Ok(processed_partial_withdrawals_count)
}

/// `get_validators_sweep_withdrawals(state, withdrawal_index, prior_withdrawals)`: at most
/// `MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP` validators from `next_withdrawal_validator_index`,
/// wrapping around the registry, appended to `withdrawals` (which holds the prior ones); returns
/// how many validators were visited.
///
/// [spec]: electra/beacon-chain.md#modified-get_validators_sweep_withdrawals
pub(crate) fn get_validators_sweep_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    withdrawal_index: &mut WithdrawalIndex,
    withdrawals: &mut Vec<Withdrawal>,
) -> Result<u64, Error> {
    let epoch = get_current_epoch(state);
    let max_withdrawals = E::MaxWithdrawalsPerPayload::to_usize();
    let electra = state.fork_name.electra_enabled();
    let len = state.validators.len();
    let validators_limit = len.min(E::MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP as usize);
    let start = *state.next_withdrawal_validator_index as usize;
    let mut processed_validators_sweep_count = 0u64;
    if validators_limit > 0 {
        let start = if start < len {
            start
        } else {
            return Err(Error::UnknownValidator {
                index: start as u64,
                len,
            });
        };
        let sweep = state
            .validators
            .iter_from(start)?
            .zip(start..)
            .chain(state.validators.iter().zip(0..))
            .take(validators_limit);
        for (validator, index) in sweep {
            if withdrawals.len() >= max_withdrawals {
                break;
            }
            let index = index as ValidatorIndex;
            let balance = get_balance_after_withdrawals(state, index, withdrawals)?;
            let (fully, partially, max_effective_balance) = if electra {
                (
                    is_fully_withdrawable_validator(validator, balance, epoch),
                    is_partially_withdrawable_validator::<E>(validator, balance),
                    get_max_effective_balance::<E>(validator),
                )
            } else {
                (
                    crate::deneb::is_fully_withdrawable_validator(validator, balance, epoch),
                    crate::deneb::is_partially_withdrawable_validator::<E>(validator, balance),
                    E::MAX_EFFECTIVE_BALANCE,
                )
            };
            if fully {
                withdrawals.push(Withdrawal {
                    index: *withdrawal_index,
                    validator_index: index,
                    address: withdrawal_address(validator),
                    amount: balance,
                });
                *withdrawal_index += 1;
            } else if partially {
                withdrawals.push(Withdrawal {
                    index: *withdrawal_index,
                    validator_index: index,
                    address: withdrawal_address(validator),
                    amount: balance - max_effective_balance,
                });
                *withdrawal_index += 1;
            }
            processed_validators_sweep_count += 1;
        }
    }
    Ok(processed_validators_sweep_count)
}

/// `process_withdrawals(state, payload)`: the payload's withdrawals must be exactly the expected
/// ones; they are debited, and the queue and the sweep advance.
///
/// [spec]: electra/beacon-chain.md#modified-process_withdrawals
pub fn process_withdrawals<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    payload: &ExecutionPayload<E>,
) -> Result<(), WithdrawalsInvalid> {
    let expected = get_expected_withdrawals(&state.as_ref())?;
    let withdrawals = &expected.withdrawals;
    if payload.withdrawals.len() != withdrawals.len() {
        return Err(WithdrawalsInvalid::CountMismatch {
            expected: withdrawals.len(),
            got: payload.withdrawals.len(),
        });
    }
    if let Some(index) = payload
        .withdrawals
        .iter()
        .zip(withdrawals)
        .position(|(got, expected)| got != expected)
    {
        return Err(WithdrawalsInvalid::WithdrawalMismatch { index });
    }

    // `apply_withdrawals`.
    for withdrawal in withdrawals {
        decrease_balance(state, withdrawal.validator_index, withdrawal.amount)?;
    }
    // `update_next_withdrawal_index`.
    if let Some(latest) = withdrawals.last() {
        *state.next_withdrawal_index = latest.index + 1;
    }
    // `update_pending_partial_withdrawals`.
    if expected.processed_partial_withdrawals_count > 0 {
        crate::view::electra_field(
            state.pending_partial_withdrawals.as_mut(),
            "pending_partial_withdrawals",
            state.fork_name,
        )?
        .pop_front(expected.processed_partial_withdrawals_count as usize)?;
    }
    update_next_withdrawal_validator_index(state, withdrawals);
    Ok(())
}

/// `update_next_withdrawal_validator_index(state, withdrawals)`: the next sweep starts after the
/// last withdrawal's validator when the payload is full, `MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP`
/// further otherwise.
///
/// [spec]: capella/beacon-chain.md#new-update_next_withdrawal_validator_index
#[inline]
pub(crate) fn update_next_withdrawal_validator_index<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    withdrawals: &[Withdrawal],
) {
    let len = state.validators.len() as u64;
    if len > 0 {
        *state.next_withdrawal_validator_index = match withdrawals.last() {
            // The next sweep starts after the last withdrawal's validator.
            Some(last) if withdrawals.len() == E::MaxWithdrawalsPerPayload::to_usize() => {
                (last.validator_index + 1) % len
            }
            _ => {
                (*state.next_withdrawal_validator_index + E::MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP)
                    % len
            }
        };
    }
}
