//! `process_justification_and_finalization`.
//!
//! [spec]: altair/beacon-chain.md#justification-and-finalization

use types::{ChainSpec, EthSpec, GENESIS_EPOCH, Gwei, electra::Checkpoint};

use super::{EpochContext, EpochProcessingError, StepResult};
use crate::{
    common::{get_block_root, get_current_epoch, get_previous_epoch},
    view::StateMut,
};

const STEP: &str = "process_justification_and_finalization";

/// `process_justification_and_finalization(state)`.
///
/// [spec]: altair/beacon-chain.md#justification-and-finalization
pub fn process_justification_and_finalization<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    if get_current_epoch(&state.as_ref()) <= GENESIS_EPOCH + 1 {
        return Ok(());
    }
    let ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_justification_and_finalization_with_context(state, &ctx)
}

/// `process_justification_and_finalization` on a state with its caches, weighing the target
/// balances the caches keep block by block ([`crate::progressive_balances`]) instead of walking
/// the registry: what fork choice's `compute_pulled_up_tip` runs on every block's post-state.
/// The result is the spec function's.
pub fn process_justification_and_finalization_progressive<E: EthSpec>(
    state: &mut crate::CachedBeaconState<E>,
) -> Result<(), EpochProcessingError> {
    let (mut view, caches) = state.view_mut().step(STEP)?;
    if get_current_epoch(&view.as_ref()) <= GENESIS_EPOCH + 1 {
        return Ok(());
    }
    let total_active_balance = caches.get_total_active_balance(&view.as_ref()).step(STEP)?;
    let balances = caches.progressive_balances(&view.as_ref()).step(STEP)?;
    let (previous, current) = (balances.previous_target(), balances.current_target());
    // `get_total_balance` is at least one increment.
    let increment = E::EFFECTIVE_BALANCE_INCREMENT;
    weigh_justification_and_finalization(
        &mut view,
        total_active_balance,
        previous.max(increment),
        current.max(increment),
    )
}

/// The spec's `process_justification_and_finalization`, with the registry summary `ctx`
/// already gathered (it supplies the totals the step weighs).
pub(super) fn process_justification_and_finalization_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ctx: &EpochContext,
) -> Result<(), EpochProcessingError> {
    // Initial FFG checkpoints have a zero root: skip the first two epochs so they stay as they are.
    if ctx.current_epoch <= GENESIS_EPOCH + 1 {
        return Ok(());
    }
    // `get_total_balance` is at least one increment.
    let increment = E::EFFECTIVE_BALANCE_INCREMENT;
    weigh_justification_and_finalization(
        state,
        ctx.total_active_balance,
        ctx.previous_flag_balances[crate::common::TIMELY_TARGET_FLAG_INDEX].max(increment),
        ctx.current_target_balance.max(increment),
    )
}

/// `weigh_justification_and_finalization(state, total_active_balance,
/// previous_epoch_target_balance, current_epoch_target_balance)`.
///
/// [spec]: phase0/beacon-chain.md#justification-and-finalization
pub fn weigh_justification_and_finalization<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    total_active_balance: Gwei,
    previous_epoch_target_balance: Gwei,
    current_epoch_target_balance: Gwei,
) -> Result<(), EpochProcessingError> {
    let previous_epoch = get_previous_epoch(&state.as_ref());
    let current_epoch = get_current_epoch(&state.as_ref());
    let old_previous_justified_checkpoint = state.previous_justified_checkpoint.clone();
    let old_current_justified_checkpoint = state.current_justified_checkpoint.clone();

    // Process justifications.
    *state.previous_justified_checkpoint = state.current_justified_checkpoint.clone();
    let mut bits = [false; 4];
    for (i, bit) in bits.iter_mut().enumerate().skip(1) {
        *bit = state.justification_bits.get(i - 1).unwrap_or(false);
    }
    let two_thirds = |balance: Gwei| -> Result<bool, EpochProcessingError> {
        let lhs = (balance as u128) * 3;
        let rhs = (total_active_balance as u128) * 2;
        // The spec's `uint64` products overflow only for absurd balances; refuse them as it would.
        if lhs > u64::MAX as u128 || rhs > u64::MAX as u128 {
            return Err(crate::Error::ArithmeticOverflow("justification threshold")).step(STEP);
        }
        Ok(lhs >= rhs)
    };
    if two_thirds(previous_epoch_target_balance)? {
        *state.current_justified_checkpoint = Checkpoint {
            epoch: previous_epoch,
            root: get_block_root(&state.as_ref(), previous_epoch).step(STEP)?,
        };
        bits[1] = true;
    }
    if two_thirds(current_epoch_target_balance)? {
        *state.current_justified_checkpoint = Checkpoint {
            epoch: current_epoch,
            root: get_block_root(&state.as_ref(), current_epoch).step(STEP)?,
        };
        bits[0] = true;
    }
    for (i, bit) in bits.iter().enumerate() {
        state
            .justification_bits
            .set(i, *bit)
            .map_err(|e| crate::Error::Tree(format!("justification bits: {e:?}")))
            .step(STEP)?;
    }

    // Process finalizations.
    let old_previous = old_previous_justified_checkpoint.epoch;
    let old_current = old_current_justified_checkpoint.epoch;
    // The 2nd/3rd/4th most recent epochs are justified, the 2nd using the 4th as source.
    if bits[1..4].iter().all(|b| *b) && old_previous.saturating_add(3) == current_epoch {
        *state.finalized_checkpoint = old_previous_justified_checkpoint.clone();
    }
    // The 2nd/3rd most recent epochs are justified, the 2nd using the 3rd as source.
    if bits[1..3].iter().all(|b| *b) && old_previous.saturating_add(2) == current_epoch {
        *state.finalized_checkpoint = old_previous_justified_checkpoint;
    }
    // The 1st/2nd/3rd most recent epochs are justified, the 1st using the 3rd as source.
    if bits[0..3].iter().all(|b| *b) && old_current.saturating_add(2) == current_epoch {
        *state.finalized_checkpoint = old_current_justified_checkpoint.clone();
    }
    // The 1st/2nd most recent epochs are justified, the 1st using the 2nd as source.
    if bits[0..2].iter().all(|b| *b) && old_current.saturating_add(1) == current_epoch {
        *state.finalized_checkpoint = old_current_justified_checkpoint;
    }
    Ok(())
}
