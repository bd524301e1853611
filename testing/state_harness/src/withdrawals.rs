//! `get_expected_withdrawals`, written here from the spec so that the payloads the builder makes
//! do not depend on the implementation they test (a disagreement shows up as a rejected block).

use state_processing::{
    StateRef,
    common::{
        get_current_epoch, get_max_effective_balance, is_fully_withdrawable_validator,
        is_partially_withdrawable_validator, validator,
    },
};
use types::{EthSpec, FAR_FUTURE_EPOCH, Gwei, ValidatorIndex, electra::Withdrawal};

use crate::HarnessError;

fn execution_address(v: &types::electra::Validator) -> types::Address {
    types::Address::from_slice(&v.withdrawal_credentials[12..])
}

fn balance_after_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    index: ValidatorIndex,
    withdrawals: &[Withdrawal],
) -> Result<Gwei, HarnessError> {
    let withdrawn: Gwei = withdrawals
        .iter()
        .filter(|w| w.validator_index == index)
        .map(|w| w.amount)
        .sum();
    let balance = state_processing::common::balance(state, index)?;
    Ok(balance.saturating_sub(withdrawn))
}

/// `get_expected_withdrawals(state).withdrawals` [Modified in Electra:EIP7251]: the pending
/// partial withdrawals that are due, then the validator sweep.
///
/// [spec]: electra/beacon-chain.md#modified-get_expected_withdrawals
pub fn get_expected_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
) -> Result<Vec<Withdrawal>, HarnessError> {
    let epoch = get_current_epoch(state);
    let max_withdrawals = <E::MaxWithdrawalsPerPayload as typenum::Unsigned>::to_usize();
    let mut withdrawal_index = *state.next_withdrawal_index;
    let mut withdrawals: Vec<Withdrawal> = Vec::new();

    // get_pending_partial_withdrawals
    let partials_limit =
        (E::MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP as usize).min(max_withdrawals - 1);
    for pending in state
        .pending_partial_withdrawals
        .into_iter()
        .flat_map(|l| l.iter())
    {
        if pending.withdrawable_epoch > epoch || withdrawals.len() >= partials_limit {
            break;
        }
        let index = pending.validator_index;
        let v = validator(state, index)?;
        let balance = balance_after_withdrawals(state, index, &withdrawals)?;
        if v.exit_epoch == FAR_FUTURE_EPOCH
            && v.effective_balance >= E::MIN_ACTIVATION_BALANCE
            && balance > E::MIN_ACTIVATION_BALANCE
        {
            withdrawals.push(Withdrawal {
                index: withdrawal_index,
                validator_index: index,
                address: execution_address(v),
                amount: (balance - E::MIN_ACTIVATION_BALANCE).min(pending.amount),
            });
            withdrawal_index += 1;
        }
    }

    // get_validators_sweep_withdrawals
    let len = state.validators.len() as u64;
    if len == 0 {
        return Ok(withdrawals);
    }
    let bound = len.min(E::MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP);
    let mut index = *state.next_withdrawal_validator_index;
    for _ in 0..bound {
        if withdrawals.len() >= max_withdrawals {
            break;
        }
        let v = validator(state, index)?;
        let balance = balance_after_withdrawals(state, index, &withdrawals)?;
        if is_fully_withdrawable_validator(v, balance, epoch) {
            withdrawals.push(Withdrawal {
                index: withdrawal_index,
                validator_index: index,
                address: execution_address(v),
                amount: balance,
            });
            withdrawal_index += 1;
        } else if is_partially_withdrawable_validator::<E>(v, balance) {
            withdrawals.push(Withdrawal {
                index: withdrawal_index,
                validator_index: index,
                address: execution_address(v),
                amount: balance - get_max_effective_balance::<E>(v),
            });
            withdrawal_index += 1;
        }
        index = (index + 1) % len;
    }
    Ok(withdrawals)
}
