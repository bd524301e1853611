//! The builder registry (EIP-7732, EIP-8282): its predicates, accessors and mutators.
//!
//! Builders are not validators: they live in `state.builders`, have no effective balance and no
//! duties, and are paid from and withdraw to the execution layer. A `Withdrawal` names a builder
//! by its index with [`BUILDER_INDEX_FLAG`] set, so that one container serves both.
//!
//! [spec]: gloas/beacon-chain.md#helpers

use typenum::Unsigned;
use types::{
    BLSPubkey, Bytes32, EthSpec, ExecutionAddress, FAR_FUTURE_EPOCH, Gwei, Slot, ValidatorIndex,
    gloas::{
        BUILDER_INDEX_FLAG, BUILDER_PAYMENT_THRESHOLD_DENOMINATOR,
        BUILDER_PAYMENT_THRESHOLD_NUMERATOR, BUILDER_WITHDRAWAL_PREFIX, Builder, BuilderIndex,
        BuilderPendingPayment, BuilderPendingWithdrawal, Withdrawal,
    },
};

use crate::{
    Error,
    common::{compute_epoch_at_slot, get_current_epoch},
    error::{add, mul},
    view::{GloasRef, StateMut, StateRef},
};

/// `is_builder_index(validator_index)`: whether a withdrawal's `validator_index` names a
/// builder.
///
/// [spec]: gloas/beacon-chain.md#new-is_builder_index
#[inline]
pub fn is_builder_index(validator_index: ValidatorIndex) -> bool {
    validator_index & BUILDER_INDEX_FLAG != 0
}

/// `is_builder_withdrawal_credential(withdrawal_credentials)`: the `0xB0` prefix.
///
/// [spec]: gloas/beacon-chain.md#new-is_builder_withdrawal_credential
#[inline]
pub fn is_builder_withdrawal_credential(withdrawal_credentials: &Bytes32) -> bool {
    withdrawal_credentials[0] == BUILDER_WITHDRAWAL_PREFIX
}

/// `convert_builder_index_to_validator_index(builder_index)`.
///
/// [spec]: gloas/beacon-chain.md#new-convert_builder_index_to_validator_index
#[inline]
pub fn convert_builder_index_to_validator_index(builder_index: BuilderIndex) -> ValidatorIndex {
    builder_index | BUILDER_INDEX_FLAG
}

/// `convert_validator_index_to_builder_index(validator_index)`.
///
/// [spec]: gloas/beacon-chain.md#new-convert_validator_index_to_builder_index
#[inline]
pub fn convert_validator_index_to_builder_index(validator_index: ValidatorIndex) -> BuilderIndex {
    validator_index & !BUILDER_INDEX_FLAG
}

/// `state.builders[builder_index]`, or the error that there is no such builder.
pub fn builder<'a, E: EthSpec>(
    gloas: &GloasRef<'a, E>,
    builder_index: BuilderIndex,
) -> Result<&'a Builder, Error> {
    let builders: &'a types::gloas::ProgressiveTreeList<Builder> = gloas.builders;
    usize::try_from(builder_index)
        .ok()
        .and_then(|i| builders.get(i))
        .ok_or(Error::UnknownBuilder {
            index: builder_index,
            len: builders.len(),
        })
}

/// `state.builders[builder_index]`, mutably.
pub fn builder_mut<'a, E: EthSpec>(
    state: &'a mut StateMut<'_, E>,
    builder_index: BuilderIndex,
) -> Result<&'a mut Builder, Error> {
    let builders = &mut *state.gloas_mut()?.builders;
    let len = builders.len();
    usize::try_from(builder_index)
        .ok()
        .and_then(|i| builders.get_mut(i))
        .ok_or(Error::UnknownBuilder {
            index: builder_index,
            len,
        })
}

/// The index of the builder whose public key is `pubkey` (the first, as `list.index` finds it),
/// by a walk of the builder registry.
pub fn builder_index_of<E: EthSpec>(
    gloas: &GloasRef<'_, E>,
    pubkey: &BLSPubkey,
) -> Option<BuilderIndex> {
    gloas
        .builders
        .iter()
        .position(|b| b.pubkey == *pubkey)
        .map(|i| i as BuilderIndex)
}

/// `is_active_builder(state, builder_index)`: the builder's placement is finalized and it has
/// not initiated its exit.
///
/// [spec]: gloas/beacon-chain.md#new-is_active_builder
pub fn is_active_builder<E: EthSpec>(
    state: &StateRef<'_, E>,
    builder_index: BuilderIndex,
) -> Result<bool, Error> {
    let b = builder(&state.gloas()?, builder_index)?;
    Ok(b.deposit_epoch < state.finalized_checkpoint.epoch
        && b.withdrawable_epoch == FAR_FUTURE_EPOCH)
}

/// `get_pending_balance_to_withdraw_for_builder(state, builder_index)`: what the builder owes in
/// pending withdrawals and pending payments.
///
/// [spec]: gloas/beacon-chain.md#new-get_pending_balance_to_withdraw_for_builder
pub fn get_pending_balance_to_withdraw_for_builder<E: EthSpec>(
    state: &StateRef<'_, E>,
    builder_index: BuilderIndex,
) -> Result<Gwei, Error> {
    let gloas = state.gloas()?;
    let mut total: Gwei = 0;
    for withdrawal in gloas.builder_pending_withdrawals.iter() {
        if withdrawal.builder_index == builder_index {
            total = add(total, withdrawal.amount, "builder pending withdrawals")?;
        }
    }
    for payment in gloas.builder_pending_payments.iter() {
        if payment.withdrawal.builder_index == builder_index {
            total = add(total, payment.withdrawal.amount, "builder pending payments")?;
        }
    }
    Ok(total)
}

/// `can_builder_cover_bid(state, builder_index, bid_amount)`: the builder's balance, less
/// `MIN_DEPOSIT_AMOUNT` and what it already owes, covers the bid.
///
/// [spec]: gloas/beacon-chain.md#new-can_builder_cover_bid
pub fn can_builder_cover_bid<E: EthSpec>(
    state: &StateRef<'_, E>,
    builder_index: BuilderIndex,
    bid_amount: Gwei,
) -> Result<bool, Error> {
    let builder_balance = builder(&state.gloas()?, builder_index)?.balance;
    let pending_withdrawals_amount =
        get_pending_balance_to_withdraw_for_builder(state, builder_index)?;
    let min_balance = add(
        E::MIN_DEPOSIT_AMOUNT,
        pending_withdrawals_amount,
        "builder minimum balance",
    )?;
    if builder_balance < min_balance {
        return Ok(false);
    }
    Ok(builder_balance - min_balance >= bid_amount)
}

/// `get_builder_payment_quorum_threshold(state)`, from `get_total_active_balance(state)`: the
/// attesting weight (six tenths of a slot's share of the active balance) that releases a
/// builder's payment.
///
/// [spec]: gloas/beacon-chain.md#new-get_builder_payment_quorum_threshold
pub fn get_builder_payment_quorum_threshold<E: EthSpec>(
    total_active_balance: Gwei,
) -> Result<u64, Error> {
    let per_slot_balance = total_active_balance / E::slots_per_epoch();
    let quorum = mul(
        per_slot_balance,
        BUILDER_PAYMENT_THRESHOLD_NUMERATOR,
        "builder payment quorum",
    )?;
    Ok(quorum / BUILDER_PAYMENT_THRESHOLD_DENOMINATOR)
}

/// `get_builder_balance_after_withdrawals(state, builder_index, withdrawals)`: the builder's
/// balance less what `withdrawals` already take from it (never below zero) [New in 1.7.0b4].
pub fn get_builder_balance_after_withdrawals<E: EthSpec>(
    state: &StateRef<'_, E>,
    builder_index: BuilderIndex,
    withdrawals: &[Withdrawal],
) -> Result<Gwei, Error> {
    let validator_index = convert_builder_index_to_validator_index(builder_index);
    let mut withdrawn: Gwei = 0;
    for w in withdrawals {
        if w.validator_index == validator_index {
            withdrawn = add(withdrawn, w.amount, "builder withdrawals")?;
        }
    }
    Ok(builder(&state.gloas()?, builder_index)?
        .balance
        .saturating_sub(withdrawn))
}

/// `initiate_builder_exit(state, builder_index)`: the builder becomes withdrawable
/// `MIN_BUILDER_WITHDRAWABILITY_DELAY` epochs from now.
///
/// [spec]: gloas/beacon-chain.md#new-initiate_builder_exit
pub fn initiate_builder_exit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    builder_index: BuilderIndex,
    spec: &types::ChainSpec,
) -> Result<(), Error> {
    let epoch = get_current_epoch(&state.as_ref());
    let withdrawable_epoch = add(
        epoch,
        spec.min_builder_withdrawability_delay,
        "builder withdrawable epoch",
    )?;
    builder_mut(state, builder_index)?.withdrawable_epoch = withdrawable_epoch;
    Ok(())
}

/// `settle_builder_payment(state, payment_index)`: the payment's withdrawal (if any amount) is
/// queued and the entry reset.
///
/// [spec]: gloas/beacon-chain.md#new-settle_builder_payment
pub fn settle_builder_payment<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    payment_index: u64,
) -> Result<(), Error> {
    let gloas = state.gloas_mut()?;
    let len = E::BuilderPendingPaymentsLength::to_usize();
    let i = usize::try_from(payment_index)
        .ok()
        .filter(|&i| i < len)
        .ok_or(Error::Tree(format!(
            "builder payment index {payment_index} out of range ({len})"
        )))?;
    let payment = gloas
        .builder_pending_payments
        .get_mut(i)
        .ok_or(Error::Tree(
            "builder_pending_payments shorter than its length".into(),
        ))?;
    let withdrawal = std::mem::replace(payment, empty_payment()).withdrawal;
    if withdrawal.amount > 0 {
        gloas.builder_pending_withdrawals.push(withdrawal);
    }
    Ok(())
}

/// `BuilderPendingPayment()`: the default (zero) entry.
pub fn empty_payment() -> BuilderPendingPayment {
    BuilderPendingPayment {
        weight: 0,
        withdrawal: BuilderPendingWithdrawal {
            fee_recipient: ExecutionAddress::ZERO,
            amount: 0,
            builder_index: 0,
        },
        proposer_index: 0,
    }
}

/// `get_index_for_new_builder(state)`: the first exited builder with nothing left, whose index
/// is reused, or the end of the registry.
///
/// [spec]: gloas/beacon-chain.md#new-get_index_for_new_builder
pub fn get_index_for_new_builder<E: EthSpec>(
    state: &StateRef<'_, E>,
) -> Result<BuilderIndex, Error> {
    let epoch = get_current_epoch(state);
    let builders = state.gloas()?.builders;
    Ok(builders
        .iter()
        .position(|b| b.withdrawable_epoch <= epoch && b.balance == 0)
        .unwrap_or(builders.len()) as BuilderIndex)
}

/// `add_builder_to_registry(state, pubkey, version, execution_address, amount, slot)`.
///
/// [spec]: gloas/beacon-chain.md#new-add_builder_to_registry
pub fn add_builder_to_registry<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    pubkey: BLSPubkey,
    version: u8,
    execution_address: ExecutionAddress,
    amount: Gwei,
    slot: Slot,
) -> Result<(), Error> {
    let index = get_index_for_new_builder(&state.as_ref())? as usize;
    let new = Builder {
        pubkey,
        version,
        execution_address,
        balance: amount,
        deposit_epoch: compute_epoch_at_slot::<E>(slot),
        withdrawable_epoch: FAR_FUTURE_EPOCH,
    };
    // `set_or_append_list`.
    let builders = &mut *state.gloas_mut()?.builders;
    if index == builders.len() {
        builders.push(new);
    } else {
        let len = builders.len();
        *builders.get_mut(index).ok_or(Error::UnknownBuilder {
            index: index as u64,
            len,
        })? = new;
    }
    Ok(())
}
