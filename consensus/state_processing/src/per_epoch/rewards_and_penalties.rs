//! `process_inactivity_updates` and `process_rewards_and_penalties`, fused into one pass over the
//! validators when run together, plus the spec's delta functions that the rewards tests check.
//!
//! [spec]: altair/beacon-chain.md#inactivity-scores, altair/beacon-chain.md#rewards-and-penalties

use types::{ChainSpec, EthSpec, GENESIS_EPOCH, Gwei};

use super::{
    EpochContext, EpochProcessingError, StepResult,
    context::{ACTIVE_PREVIOUS, ELIGIBLE, SLASHED},
};
use crate::{
    Error,
    common::{
        PARTICIPATION_FLAG_WEIGHTS, TIMELY_HEAD_FLAG_INDEX, TIMELY_TARGET_FLAG_INDEX,
        WEIGHT_DENOMINATOR, get_base_reward, get_base_reward_per_increment, get_current_epoch,
        get_previous_epoch, has_flag,
    },
    error::{add, div, mul},
    view::{PackedListMut, PackedListRef, PackedValues, StateMut, StateRef},
};

/// `is_in_inactivity_leak(state)`: finality has lagged more than
/// `MIN_EPOCHS_TO_INACTIVITY_PENALTY` epochs.
///
/// [spec]: phase0/beacon-chain.md#is_in_inactivity_leak
pub fn is_in_inactivity_leak<E: EthSpec>(state: &StateRef<'_, E>) -> bool {
    // `get_finality_delay`: the spec's `uint64` subtraction cannot underflow for a valid state.
    get_previous_epoch(state).saturating_sub(state.finalized_checkpoint.epoch)
        > E::MIN_EPOCHS_TO_INACTIVITY_PENALTY
}

/// The numbers every validator's rewards are computed from.
struct RewardParameters {
    is_leak: bool,
    base_reward_per_increment: Gwei,
    /// `unslashed_participating_increments` per flag.
    flag_increments: [u64; 3],
    /// `active_increments * WEIGHT_DENOMINATOR`.
    reward_denominator: u64,
    /// `INACTIVITY_SCORE_BIAS * INACTIVITY_PENALTY_QUOTIENT_BELLATRIX`.
    inactivity_penalty_denominator: u64,
}

impl RewardParameters {
    fn new<E: EthSpec>(
        state: &StateRef<'_, E>,
        ctx: &EpochContext,
        spec: &ChainSpec,
    ) -> Result<Self, Error> {
        let increment = E::EFFECTIVE_BALANCE_INCREMENT;
        let active_increments = ctx.total_active_balance / increment;
        Ok(Self {
            is_leak: is_in_inactivity_leak(state),
            base_reward_per_increment: get_base_reward_per_increment::<E>(
                ctx.total_active_balance,
            )?,
            // `get_total_balance` is at least one increment.
            flag_increments: ctx
                .previous_flag_balances
                .map(|balance| balance.max(increment) / increment),
            reward_denominator: mul(active_increments, WEIGHT_DENOMINATOR, "reward denominator")?,
            inactivity_penalty_denominator: mul(
                spec.inactivity_score_bias,
                E::INACTIVITY_PENALTY_QUOTIENT_BELLATRIX,
                "inactivity penalty denominator",
            )?,
        })
    }

    /// `get_flag_index_deltas` for one eligible validator and one flag: `(reward, penalty)`.
    fn flag_delta<E: EthSpec>(
        &self,
        status: u8,
        flags: u8,
        effective_balance: Gwei,
        flag_index: usize,
    ) -> Result<(Gwei, Gwei), Error> {
        let base_reward = get_base_reward::<E>(effective_balance, self.base_reward_per_increment)?;
        let weight = PARTICIPATION_FLAG_WEIGHTS[flag_index];
        if is_unslashed_participating(status, flags, flag_index) {
            if self.is_leak {
                return Ok((0, 0));
            }
            let numerator = mul(
                mul(base_reward, weight, "flag reward")?,
                self.flag_increments[flag_index],
                "flag reward",
            )?;
            Ok((div(numerator, self.reward_denominator, "flag reward")?, 0))
        } else if flag_index != TIMELY_HEAD_FLAG_INDEX {
            Ok((
                0,
                mul(base_reward, weight, "flag penalty")? / WEIGHT_DENOMINATOR,
            ))
        } else {
            Ok((0, 0))
        }
    }

    /// `get_inactivity_penalty_deltas` for one eligible validator: the penalty.
    fn inactivity_penalty(
        &self,
        status: u8,
        flags: u8,
        effective_balance: Gwei,
        inactivity_score: u64,
    ) -> Result<Gwei, Error> {
        if is_unslashed_participating(status, flags, TIMELY_TARGET_FLAG_INDEX) {
            return Ok(0);
        }
        div(
            mul(effective_balance, inactivity_score, "inactivity penalty")?,
            self.inactivity_penalty_denominator,
            "inactivity penalty",
        )
    }
}

/// Whether the validator is in `get_unslashed_participating_indices(state, flag_index,
/// previous_epoch)`.
#[inline]
fn is_unslashed_participating(status: u8, flags: u8, flag_index: usize) -> bool {
    status & (ACTIVE_PREVIOUS | SLASHED) == ACTIVE_PREVIOUS && has_flag(flags, flag_index)
}

/// `process_inactivity_updates(state)`.
///
/// [spec]: altair/beacon-chain.md#inactivity-scores
pub fn process_inactivity_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    if get_current_epoch(&state.as_ref()) == GENESIS_EPOCH {
        return Ok(());
    }
    let ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_inactivity_updates_and_rewards_and_penalties_with_context(
        state,
        &ctx,
        FusedSteps::InactivityUpdates,
        spec,
    )
}

/// `process_rewards_and_penalties(state)`.
///
/// [spec]: altair/beacon-chain.md#rewards-and-penalties
pub fn process_rewards_and_penalties<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    if get_current_epoch(&state.as_ref()) == GENESIS_EPOCH {
        return Ok(());
    }
    let ctx = EpochContext::new(&state.as_ref(), spec)?;
    process_inactivity_updates_and_rewards_and_penalties_with_context(
        state,
        &ctx,
        FusedSteps::RewardsAndPenalties,
        spec,
    )
}

/// Which of the spec's two steps the fused pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FusedSteps {
    /// `process_inactivity_updates` alone.
    InactivityUpdates,
    /// `process_rewards_and_penalties` alone.
    RewardsAndPenalties,
    /// Both, in the spec's order (as `process_epoch` runs them).
    Both,
}

/// The spec's `process_inactivity_updates` and/or `process_rewards_and_penalties`, with the
/// registry summary `ctx` already gathered, in one pass over the eligible validators.
///
/// With both, each validator's inactivity score is updated first and its inactivity penalty
/// computed from the new score, exactly as running the two steps one after the other does; the
/// per-validator order of the spec's delta sets (source, target, head, inactivity; each an
/// increase then a saturating decrease) is kept, so the result is the same balance for balance.
pub(super) fn process_inactivity_updates_and_rewards_and_penalties_with_context<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    ctx: &EpochContext,
    steps: FusedSteps,
    spec: &ChainSpec,
) -> Result<(), EpochProcessingError> {
    let inactivity_updates = matches!(steps, FusedSteps::InactivityUpdates | FusedSteps::Both);
    let rewards = matches!(steps, FusedSteps::RewardsAndPenalties | FusedSteps::Both);
    // Neither step runs at the end of the genesis epoch.
    if ctx.current_epoch == GENESIS_EPOCH {
        return Ok(());
    }
    let step = match steps {
        FusedSteps::InactivityUpdates => "process_inactivity_updates",
        FusedSteps::RewardsAndPenalties | FusedSteps::Both => "process_rewards_and_penalties",
    };
    let params = RewardParameters::new(&state.as_ref(), ctx, spec).step(step)?;
    let bias = spec.inactivity_score_bias;
    let recovery_rate = spec.inactivity_score_recovery_rate;

    let walk = RewardsWalk {
        ctx,
        params: &params,
        step,
        inactivity_updates,
        rewards,
        bias,
        recovery_rate,
    };
    // One match on the lists' kind for the whole walk, not one per read and write.
    let StateMut {
        previous_epoch_participation,
        inactivity_scores,
        balances,
        ..
    } = state;
    match (
        previous_epoch_participation.as_ref(),
        inactivity_scores,
        balances,
    ) {
        (
            PackedListRef::Fixed(participation),
            PackedListMut::Fixed(scores),
            PackedListMut::Fixed(balances),
        ) => walk.run::<E>(participation.iter(), &mut **scores, &mut **balances),
        (
            PackedListRef::Progressive(participation),
            PackedListMut::Progressive(scores),
            PackedListMut::Progressive(balances),
        ) => walk.run::<E>(participation.iter(), &mut **scores, &mut **balances),
        (PackedListRef::Fixed(_) | PackedListRef::Progressive(_), _, _) => {
            Err(Error::ListKindsDiffer(step)).step(step)
        }
    }
}

/// The fused pass of [`process_inactivity_updates_and_rewards_and_penalties_with_context`] over
/// one kind of list: what it reads and the steps it runs.
struct RewardsWalk<'a> {
    ctx: &'a EpochContext,
    params: &'a RewardParameters,
    step: &'static str,
    inactivity_updates: bool,
    rewards: bool,
    bias: u64,
    recovery_rate: u64,
}

impl RewardsWalk<'_> {
    /// Runs the pass: each eligible validator's inactivity score, then its flag rewards and
    /// penalties and its inactivity penalty.
    #[inline]
    fn run<E: EthSpec>(
        &self,
        previous_participation: impl Iterator<Item = u8>,
        inactivity_scores: &mut impl PackedValues<u64>,
        balances: &mut impl PackedValues<Gwei>,
    ) -> Result<(), EpochProcessingError> {
        let Self {
            ctx,
            params,
            step,
            inactivity_updates,
            rewards,
            bias,
            recovery_rate,
        } = *self;
        for (index, (&status, flags)) in ctx.status.iter().zip(previous_participation).enumerate() {
            if status & ELIGIBLE == 0 {
                continue;
            }
            let mut score = inactivity_scores.value(index).unwrap_or_default();
            if inactivity_updates {
                let old = score;
                if is_unslashed_participating(status, flags, TIMELY_TARGET_FLAG_INDEX) {
                    score -= score.min(1);
                } else {
                    score = add(score, bias, "inactivity score").step(step)?;
                }
                if !params.is_leak {
                    score -= score.min(recovery_rate);
                }
                if score != old {
                    inactivity_scores
                        .set_value(index, score)
                        .step("process_inactivity_updates")?;
                }
            }
            if rewards {
                let effective_balance = ctx.effective_balances[index];
                let mut balance = balances.value(index).unwrap_or_default();
                for flag_index in 0..PARTICIPATION_FLAG_WEIGHTS.len() {
                    let (reward, penalty) = params
                        .flag_delta::<E>(status, flags, effective_balance, flag_index)
                        .step(step)?;
                    balance = add(balance, reward, "increase_balance").step(step)?;
                    balance = balance.saturating_sub(penalty);
                }
                let penalty = params
                    .inactivity_penalty(status, flags, effective_balance, score)
                    .step(step)?;
                balance = balance.saturating_sub(penalty);
                balances.set_value(index, balance).step(step)?;
            }
        }
        Ok(())
    }
}

/// `get_flag_index_deltas(state, flag_index)`: per validator, the reward and the penalty for
/// the previous epoch's participation flag `flag_index`.
///
/// [spec]: altair/beacon-chain.md#get_flag_index_deltas
pub fn get_flag_index_deltas<E: EthSpec>(
    state: &StateRef<'_, E>,
    flag_index: usize,
    spec: &ChainSpec,
) -> Result<(Vec<Gwei>, Vec<Gwei>), EpochProcessingError> {
    const STEP: &str = "get_flag_index_deltas";
    if flag_index >= PARTICIPATION_FLAG_WEIGHTS.len() {
        return Err(Error::ArithmeticOverflow("participation flag index")).step(STEP);
    }
    let ctx = EpochContext::new(state, spec)?;
    let params = RewardParameters::new(state, &ctx, spec).step(STEP)?;
    let n = ctx.validator_count();
    let mut rewards = vec![0; n];
    let mut penalties = vec![0; n];
    for (index, (&status, flags)) in ctx
        .status
        .iter()
        .zip(state.previous_epoch_participation.iter())
        .enumerate()
    {
        if status & ELIGIBLE == 0 {
            continue;
        }
        let (reward, penalty) = params
            .flag_delta::<E>(status, flags, ctx.effective_balances[index], flag_index)
            .step(STEP)?;
        rewards[index] = reward;
        penalties[index] = penalty;
    }
    Ok((rewards, penalties))
}

/// `get_inactivity_penalty_deltas(state)`: per validator, zero rewards and the inactivity
/// penalty of validators that missed the previous epoch's target.
///
/// [spec]: bellatrix/beacon-chain.md#modified-get_inactivity_penalty_deltas
pub fn get_inactivity_penalty_deltas<E: EthSpec>(
    state: &StateRef<'_, E>,
    spec: &ChainSpec,
) -> Result<(Vec<Gwei>, Vec<Gwei>), EpochProcessingError> {
    const STEP: &str = "get_inactivity_penalty_deltas";
    let ctx = EpochContext::new(state, spec)?;
    let params = RewardParameters::new(state, &ctx, spec).step(STEP)?;
    let n = ctx.validator_count();
    let mut penalties = vec![0; n];
    for (index, ((&status, flags), score)) in ctx
        .status
        .iter()
        .zip(state.previous_epoch_participation.iter())
        .zip(state.inactivity_scores.iter())
        .enumerate()
    {
        if status & ELIGIBLE == 0 {
            continue;
        }
        penalties[index] = params
            .inactivity_penalty(status, flags, ctx.effective_balances[index], score)
            .step(STEP)?;
    }
    Ok((vec![0; n], penalties))
}
