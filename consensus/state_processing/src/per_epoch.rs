//! Epoch processing: every step of the spec's `process_epoch` in its Fulu form.
//!
//! Each step is public under the spec's name and can run alone (the spec tests call them one by
//! one). [`process_epoch`] runs them in the spec's order but reads the registry once: a single
//! walk over the validators ([`EpochContext::new`]) gathers everything the steps need about
//! them — activity in the previous, current, next and lookahead epochs, slashing, eligibility,
//! effective balances, participating balances per flag, and the few validators that registry
//! updates and slashings can touch — and the steps then work from that summary:
//!
//! - justification and finalization read only totals;
//! - inactivity updates and rewards are one pass over flat arrays, writing each balance and
//!   each changed inactivity score once;
//! - registry updates and slashings visit only the validators the walk flagged;
//! - effective-balance updates are one pass over the balances, writing only the validators whose
//!   effective balance changes (hysteresis makes these few);
//! - the next sync committee and the proposer lookahead take their active indices from the walk.
//!
//! Why the summary stays valid from step to step: nothing before
//! `process_effective_balance_updates` changes an effective balance, and no step changes who is
//! active in the previous, current, next or lookahead epoch (activations and exits land at
//! `compute_activation_exit_epoch`, beyond all of them; deposits add inactive validators).
//!
//! [spec]: fulu/beacon-chain.md#epoch-processing

pub(crate) mod context;
mod effective_balance_updates;
mod justification_and_finalization;
mod registry_updates;
mod resets;
mod rewards_and_penalties;
mod slashings;
mod sync_committee;

pub use crate::common::{
    add_validator_to_registry, get_validator_from_deposit, is_valid_deposit_signature,
};
pub use crate::electra::pending_deposits::{
    apply_pending_deposit, process_pending_consolidations, process_pending_deposits,
};
pub use crate::fulu::proposer_lookahead::{
    compute_proposer_indices, get_beacon_proposer_indices, initialize_proposer_lookahead,
    process_proposer_lookahead,
};
pub use context::EpochContext;
pub use effective_balance_updates::process_effective_balance_updates;
pub use justification_and_finalization::{
    process_justification_and_finalization, process_justification_and_finalization_progressive,
    weigh_justification_and_finalization,
};
pub use registry_updates::process_registry_updates;
pub use resets::{
    process_eth1_data_reset, process_historical_summaries_update,
    process_participation_flag_updates, process_randao_mixes_reset, process_slashings_reset,
};
pub use rewards_and_penalties::{
    get_flag_index_deltas, get_inactivity_penalty_deltas, is_in_inactivity_leak,
    process_inactivity_updates, process_rewards_and_penalties,
};
pub use slashings::process_slashings;
pub use sync_committee::{
    get_next_sync_committee, get_next_sync_committee_indices, process_sync_committee_updates,
};

use crate::electra::pending_deposits::process_pending_deposits_with_total;
use crate::fulu::proposer_lookahead::process_proposer_lookahead_with_context;
pub use crate::gloas::per_epoch::{process_builder_pending_payments, process_ptc_window};
use crate::gloas::per_epoch::{
    process_builder_pending_payments_with_total, process_ptc_window_with_context,
};
use effective_balance_updates::process_effective_balance_updates_with_context;
pub(crate) use effective_balance_updates::updated_effective_balance;
use justification_and_finalization::process_justification_and_finalization_with_context;
use registry_updates::process_registry_updates_with_context;
use rewards_and_penalties::{
    FusedSteps, process_inactivity_updates_and_rewards_and_penalties_with_context,
};
use slashings::process_slashings_with_context;
use sync_committee::process_sync_committee_updates_with_context;
use types::{ChainSpec, EthSpec, Gwei};

use crate::{Caches, Error, progressive_balances::ProgressiveBalances, view::StateMut};

/// Why epoch processing failed: the step, and what went wrong in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EpochProcessingError {
    /// A helper or a state-tree operation failed inside `step`.
    #[error("{step}: {source}")]
    Step {
        /// The spec function that was running.
        step: &'static str,
        /// The failure.
        #[source]
        source: Error,
    },
    /// A per-validator list of the state does not have one entry per validator.
    #[error("state list `{list}` has {len} entries but the registry has {validators} validators")]
    ListLengthMismatch {
        /// The list.
        list: &'static str,
        /// Its length.
        len: usize,
        /// The number of validators.
        validators: usize,
    },
    /// `process_proposer_lookahead` on a state without a proposer lookahead (before Fulu).
    #[error("the state has no proposer lookahead (fork {0})")]
    NoProposerLookahead(types::ForkName),
}

/// Attaches the name of the running step to a helper's error.
pub(crate) trait StepResult<T> {
    /// `Err(e)` becomes [`EpochProcessingError::Step`] naming `step`.
    fn step(self, step: &'static str) -> Result<T, EpochProcessingError>;
}

impl<T, E2: Into<Error>> StepResult<T> for Result<T, E2> {
    fn step(self, step: &'static str) -> Result<T, EpochProcessingError> {
        self.map_err(|e| EpochProcessingError::Step {
            step,
            source: e.into(),
        })
    }
}

/// `process_epoch(state)`: every epoch step in the spec's order, from one walk of the registry;
/// a Gloas state also runs `process_builder_pending_payments` after the pending
/// consolidations and ends with `process_ptc_window` [Modified in Gloas].
///
/// [spec]: fulu/beacon-chain.md#modified-process_epoch,
/// gloas/beacon-chain.md#modified-process_epoch
pub fn process_epoch<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let mut ctx = EpochContext::new(&state.as_ref(), spec)?;

    process_justification_and_finalization_with_context(state, &ctx)?;
    process_inactivity_updates_and_rewards_and_penalties_with_context(
        state,
        &ctx,
        FusedSteps::Both,
        spec,
    )?;
    process_registry_updates_with_context(state, &ctx, spec)?;
    process_slashings_with_context(state, &ctx)?;
    process_eth1_data_reset(state)?;
    process_pending_deposits_with_total(state, caches, ctx.total_active_balance, spec)?;
    process_pending_consolidations(state)?;
    // [New in Gloas:EIP7732]
    if state.gloas.is_some() {
        process_builder_pending_payments_with_total(state, ctx.total_active_balance)?;
    }
    process_effective_balance_updates_with_context(state, caches, &mut ctx)?;
    process_slashings_reset(state)?;
    process_randao_mixes_reset(state)?;
    process_historical_summaries_update(state)?;
    process_participation_flag_updates(state)?;
    process_sync_committee_updates_with_context(state, caches, &ctx)?;
    if state.proposer_lookahead.is_some() {
        process_proposer_lookahead_with_context(state, &ctx)?;
    }
    // [New in Gloas:EIP7732]
    if state.gloas.is_some() {
        process_ptc_window_with_context(state, caches, &ctx)?;
    }
    // Hand the walk's effective balances (current after the updates) to the next epoch's
    // blocks, which would otherwise walk the registry again for them. Validators that deposits
    // added during this epoch are not in it; readers take those from the registry.
    // And the target balances of the epoch entered: its previous epoch's flags (the ones
    // just rotated) weigh with the updated effective balances; the current epoch has none yet.
    let previous_target = new_previous_target_balance(state, &ctx)?;
    caches.set_progressive_balances(ProgressiveBalances::for_new_epoch(
        ctx.current_epoch.saturating_add(1),
        previous_target,
        std::mem::take(&mut ctx.slashed),
    ));
    caches.set_effective_balances(
        ctx.current_epoch.saturating_add(1),
        std::mem::take(&mut ctx.effective_balances),
    );
    Ok(())
}

/// After `process_participation_flag_updates`: the unslashed target balance of the epoch just
/// ended (the new previous epoch), with the effective balances `ctx` carries after their
/// updates. Validators added during the transition have no flags.
fn new_previous_target_balance<E: EthSpec>(
    state: &StateMut<'_, E>,
    ctx: &EpochContext,
) -> Result<Gwei, EpochProcessingError> {
    // One match on the list's kind for the whole walk, not one per value.
    let sum = match state.previous_epoch_participation.as_ref() {
        crate::view::PackedListRef::Fixed(list) => target_balance_sum(list.iter(), ctx),
        crate::view::PackedListRef::Progressive(list) => target_balance_sum(list.iter(), ctx),
    };
    Gwei::try_from(sum).map_err(|_| EpochProcessingError::Step {
        step: "process_epoch",
        source: Error::ArithmeticOverflow("target balance"),
    })
}

/// The unslashed target balance of [`new_previous_target_balance`], over the participation
/// flags of either list kind.
#[inline]
fn target_balance_sum(flags: impl Iterator<Item = u8>, ctx: &EpochContext) -> u128 {
    let mut sum: u128 = 0;
    for ((flags, status), balance) in flags.zip(&ctx.status).zip(&ctx.effective_balances) {
        if status & context::ACTIVE_CURRENT != 0
            && status & context::SLASHED == 0
            && crate::common::has_flag(flags, crate::common::TIMELY_TARGET_FLAG_INDEX)
        {
            sum += *balance as u128;
        }
    }
    sum
}
