//! The epoch steps Gloas adds (EIP-7732): `process_builder_pending_payments` and
//! `process_ptc_window`. Gloas's modifications of shared steps (`process_pending_deposits`'s
//! activation churn, EIP-8061; the proposer lookahead without slashed validators, EIP-8045;
//! the order in `process_epoch`) stay in those steps, marked `[Modified in Gloas]`.
//!
//! [spec]: gloas/beacon-chain.md#epoch-processing

use types::{EthSpec, Gwei, ValidatorIndex, signing::DOMAIN_BEACON_ATTESTER, typenum::Unsigned};

use crate::{
    Caches, CommitteeCache, Error,
    common::{get_active_validator_indices, get_current_epoch, get_seed},
    gloas::{
        builders::{empty_payment, get_builder_payment_quorum_threshold},
        ptc::{compute_epoch_ptcs, compute_shuffling},
    },
    per_epoch::{EpochContext, EpochProcessingError, StepResult, context::ACTIVE_LOOKAHEAD},
    view::StateMut,
};

/// `process_builder_pending_payments(state)` [New in Gloas:EIP7732]: the payments of the
/// previous epoch's slots whose attesting weight reached the quorum become builder pending
/// withdrawals, and the window moves on by an epoch.
///
/// [spec]: gloas/beacon-chain.md#new-process_builder_pending_payments
pub fn process_builder_pending_payments<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
) -> Result<(), EpochProcessingError> {
    let total_active_balance = caches
        .get_total_active_balance(&state.as_ref())
        .step(BUILDER_PAYMENTS)?;
    process_builder_pending_payments_with_total(state, total_active_balance)
}

const BUILDER_PAYMENTS: &str = "process_builder_pending_payments";
const PTC_WINDOW: &str = "process_ptc_window";

/// The spec's `process_builder_pending_payments`, with `get_total_active_balance(state)` given
/// (epoch processing has it from its registry walk).
pub(crate) fn process_builder_pending_payments_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    total_active_balance: Gwei,
) -> Result<(), EpochProcessingError> {
    let quorum =
        get_builder_payment_quorum_threshold::<E>(total_active_balance).step(BUILDER_PAYMENTS)?;
    let gloas = state.gloas_mut().step(BUILDER_PAYMENTS)?;
    let slots = E::slots_per_epoch() as usize;
    let len = E::BuilderPendingPaymentsLength::to_usize();
    let payments: Vec<_> = gloas.builder_pending_payments.iter().cloned().collect();
    if payments.len() != len || len < slots {
        return Err(Error::Tree(
            "builder_pending_payments has the wrong length".into(),
        ))
        .step(BUILDER_PAYMENTS);
    }
    for payment in &payments[..slots] {
        if payment.weight >= quorum {
            gloas
                .builder_pending_withdrawals
                .push(payment.withdrawal.clone());
        }
    }
    // `state.builder_pending_payments = old_payments + new_payments`.
    let empty = empty_payment();
    for (i, new) in payments[slots..]
        .iter()
        .chain(std::iter::repeat_n(&empty, slots))
        .enumerate()
    {
        if payments[i] != *new {
            *gloas
                .builder_pending_payments
                .get_mut(i)
                .ok_or(Error::Tree("builder_pending_payments index".into()))
                .step(BUILDER_PAYMENTS)? = new.clone();
        }
    }
    Ok(())
}

/// `process_ptc_window(state)` [New in Gloas:EIP7732]: drops the epoch that ends from
/// `ptc_window` and appends the PTCs of epoch `current + MIN_SEED_LOOKAHEAD + 1`.
///
/// [spec]: gloas/beacon-chain.md#new-process_ptc_window
pub fn process_ptc_window<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    let view = state.as_ref();
    let epoch = get_current_epoch(&view).saturating_add(E::MIN_SEED_LOOKAHEAD + 1);
    let active = get_active_validator_indices(&view, epoch);
    let shuffling = compute_shuffling(&view, epoch, &active).step(PTC_WINDOW)?;
    let balances: Vec<Gwei> = view
        .validators
        .iter()
        .map(|v| v.effective_balance)
        .collect();
    let ptcs = compute_epoch_ptcs(&view, epoch, &shuffling, &balances).step(PTC_WINDOW)?;
    shift_in(state, ptcs)
}

/// The spec's `process_ptc_window`, with the lookahead epoch's active validators and the
/// (updated) effective balances taken from the registry summary `ctx`.
///
/// The epoch's committee shuffling, which this computes anyway, is kept in `caches` for the
/// blocks of that epoch: no block has to shuffle the registry again. Its active validators are
/// those of that epoch already (activations and exits decided from now on land later), and its
/// total active balance is brought up to date by the next epoch's effective-balance updates.
pub(crate) fn process_ptc_window_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    ctx: &EpochContext,
) -> Result<(), EpochProcessingError> {
    let view = state.as_ref();
    let epoch = ctx.current_epoch.saturating_add(E::MIN_SEED_LOOKAHEAD + 1);
    let active = ctx.indices_with(ACTIVE_LOOKAHEAD);
    let shuffling = compute_shuffling(&view, epoch, &active).step(PTC_WINDOW)?;
    let ptcs =
        compute_epoch_ptcs(&view, epoch, &shuffling, &ctx.effective_balances).step(PTC_WINDOW)?;
    let total_active_balance = active
        .iter()
        .map(|&index| {
            ctx.effective_balances
                .get(index as usize)
                .copied()
                .unwrap_or(0)
        })
        .fold(0u64, u64::saturating_add);
    let seed = get_seed(&view, epoch, DOMAIN_BEACON_ATTESTER);
    caches.keep_committees(
        std::sync::Arc::new(CommitteeCache::from_shuffling::<E>(
            epoch,
            seed,
            active,
            shuffling,
            total_active_balance,
        )),
        ctx.current_epoch,
    );
    shift_in(state, ptcs)
}

/// `state.ptc_window[:len - SLOTS_PER_EPOCH] = state.ptc_window[SLOTS_PER_EPOCH:]`, then
/// `state.ptc_window[len - SLOTS_PER_EPOCH:] = ptcs`.
fn shift_in<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ptcs: Vec<Vec<ValidatorIndex>>,
) -> Result<(), EpochProcessingError> {
    let window = &mut *state.gloas_mut().step(PTC_WINDOW)?.ptc_window;
    let slots = E::slots_per_epoch() as usize;
    let len = window.len();
    if len < slots || ptcs.len() != slots {
        return Err(Error::Tree("ptc_window shorter than an epoch".into())).step(PTC_WINDOW);
    }
    let missing = || Error::Tree("ptc_window index".into());
    for i in 0..len - slots {
        let moved = window
            .get(i + slots)
            .ok_or_else(missing)
            .step(PTC_WINDOW)?
            .clone();
        *window.get_mut(i).ok_or_else(missing).step(PTC_WINDOW)? = moved;
    }
    for (i, ptc) in (len - slots..).zip(ptcs) {
        let ptc = milhouse::Vector::new(ptc)
            .map_err(|e| Error::Tree(format!("a PTC of the wrong size: {e:?}")))
            .step(PTC_WINDOW)?;
        *window.get_mut(i).ok_or_else(missing).step(PTC_WINDOW)? = ptc;
    }
    Ok(())
}
