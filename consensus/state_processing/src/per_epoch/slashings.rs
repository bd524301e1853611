//! `process_slashings`: the correlation penalty of validators slashed half a slashings vector ago.
//!
//! [spec]: electra/beacon-chain.md#modified-process_slashings

use types::{ChainSpec, EthSpec, typenum::Unsigned};

use super::{EpochContext, EpochProcessingError, StepResult};
use crate::{
    common::{decrease_balance, get_current_epoch, validator},
    error::{add, div, mul},
    view::StateMut,
};

const STEP: &str = "process_slashings";

/// `process_slashings(state)` [Modified in Electra:EIP7251].
///
/// [spec]: electra/beacon-chain.md#modified-process_slashings
pub fn process_slashings<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_slashings_with_context(state, &ctx)
}

/// The spec's `process_slashings`, with the registry summary `ctx` already gathered: it visits
/// only the slashed validators the walk found.
pub(super) fn process_slashings_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ctx: &EpochContext,
) -> Result<(), EpochProcessingError> {
    let epoch = get_current_epoch(&state.as_ref());
    let total_balance = ctx.total_active_balance;
    let mut sum_slashings: u64 = 0;
    for amount in state.slashings.iter() {
        sum_slashings = add(sum_slashings, *amount, "sum of slashings").step(STEP)?;
    }
    let adjusted_total_slashing_balance = mul(
        sum_slashings,
        E::PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX,
        "adjusted total slashing balance",
    )
    .step(STEP)?
    .min(total_balance);
    // Factored out from the total balance to avoid `uint64` overflow.
    let increment = E::EFFECTIVE_BALANCE_INCREMENT;
    let penalty_per_effective_balance_increment = div(
        adjusted_total_slashing_balance,
        total_balance / increment,
        "slashing penalty per increment",
    )
    .step(STEP)?;
    let target_withdrawable_epoch = epoch.saturating_add(E::EpochsPerSlashingsVector::to_u64() / 2);
    for &index in &ctx.slashed {
        let v = validator(&state.as_ref(), index).step(STEP)?;
        if v.slashed && v.withdrawable_epoch == target_withdrawable_epoch {
            let effective_balance_increments = v.effective_balance / increment;
            let penalty = mul(
                penalty_per_effective_balance_increment,
                effective_balance_increments,
                "slashing penalty",
            )
            .step(STEP)?;
            decrease_balance(state, index, penalty).step(STEP)?;
        }
    }
    Ok(())
}
