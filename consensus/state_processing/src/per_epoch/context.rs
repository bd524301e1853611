//! One walk over the registry that summarises what every epoch step needs to know about the
//! validators.

use types::{ChainSpec, Epoch, EthSpec, FAR_FUTURE_EPOCH, Gwei, ValidatorIndex};

use super::EpochProcessingError;
use crate::{
    Error,
    common::{
        TIMELY_TARGET_FLAG_INDEX, get_current_epoch, get_previous_epoch,
        has_compounding_withdrawal_credential, has_flag, is_active_validator,
    },
    view::StateRef,
};

/// Active in the previous epoch.
pub(crate) const ACTIVE_PREVIOUS: u8 = 1 << 0;
/// Active in the current epoch.
pub(crate) const ACTIVE_CURRENT: u8 = 1 << 1;
/// Active in the next epoch.
pub(crate) const ACTIVE_NEXT: u8 = 1 << 2;
/// Active in the last epoch of the proposer lookahead (`current + MIN_SEED_LOOKAHEAD + 1`).
pub(crate) const ACTIVE_LOOKAHEAD: u8 = 1 << 3;
/// Slashed.
pub(crate) const SLASHED: u8 = 1 << 4;
/// In `get_eligible_validator_indices`: active in the previous epoch, or slashed and not yet
/// withdrawable.
pub(crate) const ELIGIBLE: u8 = 1 << 5;
/// Has a compounding (`0x02`) withdrawal credential.
pub(crate) const COMPOUNDING: u8 = 1 << 6;

/// What the epoch steps need to know about the registry, gathered in one walk at the start of
/// the epoch transition.
#[derive(Debug, Clone)]
pub struct EpochContext {
    /// `get_current_epoch(state)`.
    pub current_epoch: Epoch,
    /// `get_previous_epoch(state)`.
    pub previous_epoch: Epoch,
    /// Per validator, a set of the status bits defined in this module.
    pub(crate) status: Vec<u8>,
    /// Per validator, the effective balance (kept current by effective-balance updates).
    pub(crate) effective_balances: Vec<Gwei>,
    /// `get_total_active_balance(state)`: at least one increment.
    pub total_active_balance: Gwei,
    /// Per participation flag, the raw sum of the effective balances of the unslashed validators
    /// active in the previous epoch with that flag set.
    pub previous_flag_balances: [Gwei; 3],
    /// The raw sum of the effective balances of the unslashed validators active in the current
    /// epoch with the timely-target flag set.
    pub current_target_balance: Gwei,
    /// Validators that `process_registry_updates` may change, ascending.
    pub(crate) registry_candidates: Vec<ValidatorIndex>,
    /// Slashed validators, ascending.
    pub(crate) slashed: Vec<ValidatorIndex>,
}

fn check_len(
    list: &'static str,
    len: usize,
    validators: usize,
) -> Result<(), EpochProcessingError> {
    if len == validators {
        Ok(())
    } else {
        Err(EpochProcessingError::ListLengthMismatch {
            list,
            len,
            validators,
        })
    }
}

fn to_gwei(sum: u128, what: &'static str) -> Result<Gwei, EpochProcessingError> {
    Gwei::try_from(sum).map_err(|_| EpochProcessingError::Step {
        step: "process_epoch",
        source: Error::ArithmeticOverflow(what),
    })
}

impl EpochContext {
    /// Walks the registry of `state` once.
    pub fn new<E: EthSpec>(
        state: &StateRef<'_, E>,
        spec: &ChainSpec,
    ) -> Result<Self, EpochProcessingError> {
        let n = state.validators.len();
        check_len("balances", state.balances.len(), n)?;
        check_len(
            "previous_epoch_participation",
            state.previous_epoch_participation.len(),
            n,
        )?;
        check_len(
            "current_epoch_participation",
            state.current_epoch_participation.len(),
            n,
        )?;
        check_len("inactivity_scores", state.inactivity_scores.len(), n)?;

        let epochs = Epochs {
            previous: get_previous_epoch(state),
            current: get_current_epoch(state),
            next: get_current_epoch(state).saturating_add(1),
            lookahead: get_current_epoch(state).saturating_add(E::MIN_SEED_LOOKAHEAD + 1),
        };
        // The walk is bound by memory latency (every validator is its own tree leaf), so the
        // registry is split in ranges walked in parallel, then joined in order.
        let threads = crate::parallel::SECTIONS.threads();
        let chunk = n.div_ceil(threads).max(MIN_PARALLEL_RANGE);
        let ranges: Vec<(usize, usize)> = (0..n)
            .step_by(chunk.max(1))
            .map(|start| (start, (start + chunk).min(n)))
            .collect();
        let parts: Vec<Result<Partial, EpochProcessingError>> = crate::parallel::SECTIONS
            .map_collect(ranges, |(start, end)| {
                Partial::walk(state, start, end, &epochs, spec)
            });

        let mut ctx = Self {
            current_epoch: epochs.current,
            previous_epoch: epochs.previous,
            status: Vec::with_capacity(n),
            effective_balances: Vec::with_capacity(n),
            total_active_balance: 0,
            previous_flag_balances: [0; 3],
            current_target_balance: 0,
            registry_candidates: Vec::new(),
            slashed: Vec::new(),
        };
        let mut total_active: u128 = 0;
        let mut flag_sums = [0u128; 3];
        let mut current_target: u128 = 0;
        for part in parts {
            let part = part?;
            ctx.status.extend_from_slice(&part.status);
            ctx.effective_balances
                .extend_from_slice(&part.effective_balances);
            ctx.registry_candidates
                .extend_from_slice(&part.registry_candidates);
            ctx.slashed.extend_from_slice(&part.slashed);
            total_active += part.total_active;
            for (sum, add) in flag_sums.iter_mut().zip(part.flag_sums) {
                *sum += add;
            }
            current_target += part.current_target;
        }
        let [source, target, head] = flag_sums;
        ctx.total_active_balance =
            to_gwei(total_active, "total active balance")?.max(E::EFFECTIVE_BALANCE_INCREMENT);
        ctx.previous_flag_balances = [
            to_gwei(source, "participating balance")?,
            to_gwei(target, "participating balance")?,
            to_gwei(head, "participating balance")?,
        ];
        ctx.current_target_balance = to_gwei(current_target, "participating balance")?;
        Ok(ctx)
    }

    /// Number of validators the walk saw.
    pub fn validator_count(&self) -> usize {
        self.status.len()
    }

    /// The indices of the validators whose status has all of `bits`, ascending.
    pub(crate) fn indices_with(&self, bits: u8) -> Vec<ValidatorIndex> {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, s)| **s & bits == bits)
            .map(|(i, _)| i as ValidatorIndex)
            .collect()
    }
}

/// Below this many validators a range is not split further: rayon's overhead would dominate.
const MIN_PARALLEL_RANGE: usize = 1 << 15;

/// The epochs whose activity the walk records.
struct Epochs {
    previous: Epoch,
    current: Epoch,
    next: Epoch,
    lookahead: Epoch,
}

/// The summary of one range of the registry.
#[derive(Default)]
struct Partial {
    status: Vec<u8>,
    effective_balances: Vec<Gwei>,
    registry_candidates: Vec<ValidatorIndex>,
    slashed: Vec<ValidatorIndex>,
    total_active: u128,
    flag_sums: [u128; 3],
    current_target: u128,
}

impl Partial {
    fn walk<E: EthSpec>(
        state: &StateRef<'_, E>,
        start: usize,
        end: usize,
        epochs: &Epochs,
        spec: &ChainSpec,
    ) -> Result<Self, EpochProcessingError> {
        let mut part = Partial {
            status: Vec::with_capacity(end - start),
            effective_balances: Vec::with_capacity(end - start),
            ..Partial::default()
        };
        let validators = state
            .validators
            .iter_from(start)
            .map_err(|e| EpochProcessingError::Step {
                step: "process_epoch",
                source: e,
            })?
            .take(end - start);
        for (index, validator) in (start..end).zip(validators) {
            // Lengths were checked against the registry's: `get` cannot miss.
            let previous = state.previous_epoch_participation.get(index).unwrap_or(0);
            let current = state.current_epoch_participation.get(index).unwrap_or(0);
            let eb = validator.effective_balance;
            let mut bits = 0u8;
            let active_previous = is_active_validator(validator, epochs.previous);
            let active_current = is_active_validator(validator, epochs.current);
            if active_previous {
                bits |= ACTIVE_PREVIOUS;
            }
            if active_current {
                bits |= ACTIVE_CURRENT;
                part.total_active += eb as u128;
            }
            if is_active_validator(validator, epochs.next) {
                bits |= ACTIVE_NEXT;
            }
            if is_active_validator(validator, epochs.lookahead) {
                bits |= ACTIVE_LOOKAHEAD;
            }
            if validator.slashed {
                bits |= SLASHED;
                part.slashed.push(index as ValidatorIndex);
            } else {
                if active_previous {
                    for (flag, sum) in part.flag_sums.iter_mut().enumerate() {
                        if has_flag(previous, flag) {
                            *sum += eb as u128;
                        }
                    }
                }
                if active_current && has_flag(current, TIMELY_TARGET_FLAG_INDEX) {
                    part.current_target += eb as u128;
                }
            }
            if active_previous
                || (validator.slashed
                    && epochs.previous.saturating_add(1) < validator.withdrawable_epoch)
            {
                bits |= ELIGIBLE;
            }
            if has_compounding_withdrawal_credential(validator) {
                bits |= COMPOUNDING;
            }
            // The three branches of `process_registry_updates`; the last one also needs the
            // finalized checkpoint, which justification may still move, so it is checked then.
            if (validator.activation_eligibility_epoch == FAR_FUTURE_EPOCH
                && eb >= E::MIN_ACTIVATION_BALANCE)
                || (active_current && eb <= spec.ejection_balance)
                || (validator.activation_epoch == FAR_FUTURE_EPOCH
                    && validator.activation_eligibility_epoch != FAR_FUTURE_EPOCH)
            {
                part.registry_candidates.push(index as ValidatorIndex);
            }
            part.status.push(bits);
            part.effective_balances.push(eb);
        }
        Ok(part)
    }
}
