//! `process_effective_balance_updates`: effective balances follow balances, with hysteresis.
//!
//! [spec]: electra/beacon-chain.md#modified-process_effective_balance_updates

use types::{ChainSpec, EthSpec, Gwei};

use super::{
    EpochContext, EpochProcessingError, StepResult,
    context::{ACTIVE_CURRENT, ACTIVE_NEXT, COMPOUNDING},
};
use crate::{
    Caches, Error,
    common::{get_max_effective_balance, validator_mut},
    view::{PackedListRef, StateMut, ValidatorsMut},
};

const STEP: &str = "process_effective_balance_updates";

/// `process_effective_balance_updates(state)` [Modified in Electra:EIP7251].
///
/// [spec]: electra/beacon-chain.md#modified-process_effective_balance_updates
pub fn process_effective_balance_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let mut ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_effective_balance_updates_with_context(state, caches, &mut ctx)
}

/// The new effective balance of a validator with `balance` and `effective_balance`, if the
/// hysteresis thresholds are crossed.
#[inline]
pub(crate) fn updated_effective_balance<E: EthSpec>(
    balance: Gwei,
    effective_balance: Gwei,
    max_effective_balance: Gwei,
) -> Option<Gwei> {
    let hysteresis_increment = E::EFFECTIVE_BALANCE_INCREMENT / E::HYSTERESIS_QUOTIENT;
    let downward_threshold = hysteresis_increment * E::HYSTERESIS_DOWNWARD_MULTIPLIER;
    let upward_threshold = hysteresis_increment * E::HYSTERESIS_UPWARD_MULTIPLIER;
    // The sums cannot overflow for any real balance; saturating keeps a forged one from
    // panicking.
    if balance.saturating_add(downward_threshold) < effective_balance
        || effective_balance.saturating_add(upward_threshold) < balance
    {
        Some((balance - balance % E::EFFECTIVE_BALANCE_INCREMENT).min(max_effective_balance))
    } else {
        None
    }
}

/// The spec's `process_effective_balance_updates`, with the registry summary `ctx` already
/// gathered: one pass over the balances, writing only the validators whose effective balance
/// changes, keeping `ctx`'s effective balances current, and refreshing the committee caches'
/// total active balances (their shufflings do not depend on effective balances, their totals
/// do).
pub(super) fn process_effective_balance_updates_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    ctx: &mut EpochContext,
) -> Result<(), EpochProcessingError> {
    let len = state.validators.len();
    if state.balances.len() != len {
        return Err(EpochProcessingError::ListLengthMismatch {
            list: "balances",
            len: state.balances.len(),
            validators: len,
        });
    }
    // One match on the balances' kind for the whole walk, not one per value.
    let StateMut {
        balances,
        validators,
        ..
    } = state;
    let (total_current, total_next) = match balances.as_ref() {
        PackedListRef::Fixed(list) => update_effective_balances::<E>(list.iter(), validators, ctx)?,
        PackedListRef::Progressive(list) => {
            update_effective_balances::<E>(list.iter(), validators, ctx)?
        }
    };
    let to_gwei = |sum: u128| {
        Gwei::try_from(sum)
            .map_err(|_| Error::ArithmeticOverflow("total active balance"))
            .step(STEP)
    };
    let increment = E::EFFECTIVE_BALANCE_INCREMENT;
    ctx.total_active_balance = to_gwei(total_current)?.max(increment);
    caches.update_total_active_balance(ctx.current_epoch, ctx.total_active_balance);
    caches.update_total_active_balance(
        ctx.current_epoch.saturating_add(1),
        to_gwei(total_next)?.max(increment),
    );
    Ok(())
}

/// The walk of [`process_effective_balance_updates_with_context`] over the balances (of either
/// list kind): updates each validator's effective balance, in the registry and in `ctx`, and
/// returns the current and next epochs' total active balances.
#[inline]
fn update_effective_balances<E: EthSpec>(
    balances: impl Iterator<Item = Gwei>,
    validators: &mut ValidatorsMut<'_, E>,
    ctx: &mut EpochContext,
) -> Result<(u128, u128), EpochProcessingError> {
    let known = ctx.validator_count();
    let mut total_current: u128 = 0;
    let mut total_next: u128 = 0;
    for (index, balance) in balances.enumerate() {
        if index < known {
            let status = ctx.status[index];
            let effective_balance = ctx.effective_balances[index];
            let max_effective_balance = if status & COMPOUNDING != 0 {
                E::MAX_EFFECTIVE_BALANCE_ELECTRA
            } else {
                E::MIN_ACTIVATION_BALANCE
            };
            let new =
                updated_effective_balance::<E>(balance, effective_balance, max_effective_balance);
            if let Some(new) = new {
                validator_mut::<E>(validators, index as u64)
                    .step(STEP)?
                    .effective_balance = new;
                ctx.effective_balances[index] = new;
            }
            let effective_balance = new.unwrap_or(effective_balance);
            if status & ACTIVE_CURRENT != 0 {
                total_current += effective_balance as u128;
            }
            if status & ACTIVE_NEXT != 0 {
                total_next += effective_balance as u128;
            }
        } else {
            // Added by this epoch's deposits: never active yet, so outside every total.
            let v = validators
                .get(index)
                .ok_or(Error::UnknownValidator {
                    index: index as u64,
                    len: validators.len(),
                })
                .step(STEP)?;
            let max_effective_balance = get_max_effective_balance::<E>(v);
            if let Some(new) =
                updated_effective_balance::<E>(balance, v.effective_balance, max_effective_balance)
            {
                validator_mut::<E>(validators, index as u64)
                    .step(STEP)?
                    .effective_balance = new;
            }
        }
    }
    Ok((total_current, total_next))
}
