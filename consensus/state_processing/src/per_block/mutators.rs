//! The state mutators that only block processing calls: slashing, and the switch to compounding
//! credentials with its excess-balance deposit.
//!
//! [spec]: electra/beacon-chain.md#beacon-state-mutators

use typenum::Unsigned;
use types::{ChainSpec, EthSpec, GENESIS_SLOT, ValidatorIndex, electra::PendingDeposit};

use crate::{
    Caches, Error,
    common::{
        COMPOUNDING_WITHDRAWAL_PREFIX, PROPOSER_WEIGHT, TIMELY_TARGET_FLAG_INDEX,
        WEIGHT_DENOMINATOR, balance, decrease_balance, get_beacon_proposer_index,
        get_current_epoch, get_previous_epoch, has_flag, increase_balance, initiate_validator_exit,
        is_active_validator, validator_mut,
    },
    error::add,
    view::StateMut,
};

/// `slash_validator(state, slashed_index, whistleblower_index)`: exits and slashes the
/// validator, records its effective balance for the correlation penalty, and rewards the
/// proposer and the whistleblower (the proposer when `None`).
///
/// [spec]: electra/beacon-chain.md#modified-slash_validator
pub fn slash_validator<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    slashed_index: ValidatorIndex,
    whistleblower_index: Option<ValidatorIndex>,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let epoch = get_current_epoch(&state.as_ref());
    let previous_epoch = get_previous_epoch(&state.as_ref());
    initiate_validator_exit(state, caches, slashed_index, spec)?;
    let v = validator_mut::<E>(&mut state.validators, slashed_index)?;
    // The target balances lose the validator where it counted (the exit just initiated is
    // beyond the next epoch, so its activity in these two is as it was).
    if let Some(mut progressive) = caches.take_progressive_balances(epoch) {
        let i = slashed_index as usize;
        let previous_flags = state.previous_epoch_participation.get(i).unwrap_or(0);
        let current_flags = state.current_epoch_participation.get(i).unwrap_or(0);
        progressive.on_slashing(
            slashed_index,
            v.effective_balance,
            is_active_validator(v, previous_epoch)
                && has_flag(previous_flags, TIMELY_TARGET_FLAG_INDEX),
            is_active_validator(v, epoch) && has_flag(current_flags, TIMELY_TARGET_FLAG_INDEX),
        );
        caches.set_progressive_balances(progressive);
    }
    v.slashed = true;
    v.withdrawable_epoch = v
        .withdrawable_epoch
        .max(epoch.saturating_add(E::EpochsPerSlashingsVector::to_u64()));
    let effective_balance = v.effective_balance;
    let i = (epoch % E::EpochsPerSlashingsVector::to_u64()) as usize;
    let slashings = state
        .slashings
        .get_mut(i)
        .ok_or(Error::Tree("slashings shorter than its length".into()))?;
    *slashings = add(*slashings, effective_balance, "slashings")?;
    // Deneb keeps Bellatrix's penalty quotient and phase0's reward quotient.
    let (min_slashing_penalty_quotient, whistleblower_reward_quotient) =
        if state.fork_name.electra_enabled() {
            (
                E::MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA,
                E::WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA,
            )
        } else {
            (
                E::MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX,
                E::WHISTLEBLOWER_REWARD_QUOTIENT,
            )
        };
    decrease_balance(
        state,
        slashed_index,
        effective_balance / min_slashing_penalty_quotient,
    )?;

    let proposer_index = get_beacon_proposer_index(&state.as_ref(), caches)?;
    let whistleblower_index = whistleblower_index.unwrap_or(proposer_index);
    let whistleblower_reward = effective_balance / whistleblower_reward_quotient;
    let proposer_reward = whistleblower_reward * PROPOSER_WEIGHT / WEIGHT_DENOMINATOR;
    increase_balance(state, proposer_index, proposer_reward)?;
    increase_balance(
        state,
        whistleblower_index,
        whistleblower_reward - proposer_reward,
    )?;
    // [New in Gloas:EIP7732] (1.7.0b4): the builder payments of the slashed validator's
    // proposals are dropped.
    if let Some(gloas) = state.gloas.as_mut() {
        let payments = &mut *gloas.builder_pending_payments;
        let proposed: Vec<usize> = payments
            .iter()
            .enumerate()
            .filter(|(_, p)| p.proposer_index == slashed_index)
            .map(|(i, _)| i)
            .collect();
        for i in proposed {
            if let Some(payment) = payments.get_mut(i) {
                *payment = crate::gloas::builders::empty_payment();
            }
        }
    }
    Ok(())
}

/// `switch_to_compounding_validator(state, index)`: `0x02` credentials, and the balance above
/// `MIN_ACTIVATION_BALANCE` queued as a deposit.
///
/// [spec]: electra/beacon-chain.md#new-switch_to_compounding_validator
pub fn switch_to_compounding_validator<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
) -> Result<(), Error> {
    let v = validator_mut::<E>(&mut state.validators, index)?;
    v.withdrawal_credentials.0[0] = COMPOUNDING_WITHDRAWAL_PREFIX;
    queue_excess_active_balance(state, index)
}

/// `queue_excess_active_balance(state, index)`: moves the balance above
/// `MIN_ACTIVATION_BALANCE` into a pending deposit (signature at infinity, `GENESIS_SLOT`).
///
/// [spec]: electra/beacon-chain.md#new-queue_excess_active_balance
pub fn queue_excess_active_balance<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
) -> Result<(), Error> {
    let current = balance(&state.as_ref(), index)?;
    if current > E::MIN_ACTIVATION_BALANCE {
        let excess_balance = current - E::MIN_ACTIVATION_BALANCE;
        state
            .balances
            .set(index as usize, E::MIN_ACTIVATION_BALANCE)?;
        let v = crate::common::validator(&state.as_ref(), index)?;
        let deposit = PendingDeposit {
            pubkey: v.pubkey,
            withdrawal_credentials: v.withdrawal_credentials,
            amount: excess_balance,
            signature: bls::Signature::INFINITY_BYTES.into(),
            slot: GENESIS_SLOT,
        };
        crate::view::electra_field(
            state.pending_deposits.as_mut(),
            "pending_deposits",
            state.fork_name,
        )?
        .push(deposit)
        .map_err(|_| Error::ListFull("pending_deposits"))?;
    }
    Ok(())
}
