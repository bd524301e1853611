//! The target balances of the current and the previous epoch, kept up to date block by block, so
//! that `compute_pulled_up_tip` (fork choice runs `process_justification_and_finalization` on
//! every block's post-state) costs no walk of the registry.
//!
//! `process_justification_and_finalization` weighs
//! `get_total_balance(get_unslashed_participating_indices(TIMELY_TARGET, epoch))` for the
//! previous and the current epoch. Within an epoch those sums change only when
//! `process_attestation` sets a validator's target flag (its effective balance joins the sum
//! unless it is slashed) and when `slash_validator` slashes a validator that has the flag (its
//! balance leaves). Effective balances change only in epoch processing, which hands the next
//! epoch its starting sums from the walk it makes anyway. A state whose sums were never
//! computed (decoded from bytes, an anchor) builds them with one walk on first use.
//!
//! [spec]: phase0/beacon-chain.md#justification-and-finalization

use types::{Epoch, EthSpec, Gwei, ValidatorIndex};

use crate::Error;
use crate::common::{
    TIMELY_TARGET_FLAG_INDEX, get_current_epoch, get_previous_epoch, has_flag, is_active_validator,
};
use crate::view::StateRef;

/// The unslashed target-participating balances of a state's previous and current epoch (raw
/// sums: the justification rule applies its one-increment floor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressiveBalances {
    /// The state's current epoch when the sums hold.
    epoch: Epoch,
    /// `get_total_balance` without the floor, of the previous epoch's unslashed target
    /// attesters.
    previous_target: Gwei,
    /// The same for the current epoch.
    current_target: Gwei,
    /// Slashed validators, ascending (few: a lookup per attester must be cheap).
    slashed: Vec<ValidatorIndex>,
}

impl ProgressiveBalances {
    /// The sums of `state`, from one walk of its registry and participation.
    pub fn build<E: EthSpec>(state: &StateRef<'_, E>) -> Result<Self, Error> {
        let current = get_current_epoch(state);
        let previous = get_previous_epoch(state);
        let mut previous_target: u128 = 0;
        let mut current_target: u128 = 0;
        let mut slashed = Vec::new();
        let previous_flags = state.previous_epoch_participation.iter();
        let current_flags = state.current_epoch_participation.iter();
        for (index, ((validator, previous_flags), current_flags)) in state
            .validators
            .iter()
            .zip(previous_flags)
            .zip(current_flags)
            .enumerate()
        {
            if validator.slashed {
                slashed.push(index as ValidatorIndex);
                continue;
            }
            let balance = validator.effective_balance as u128;
            if is_active_validator(validator, previous)
                && has_flag(previous_flags, TIMELY_TARGET_FLAG_INDEX)
            {
                previous_target += balance;
            }
            if is_active_validator(validator, current)
                && has_flag(current_flags, TIMELY_TARGET_FLAG_INDEX)
            {
                current_target += balance;
            }
        }
        let gwei = |sum: u128| {
            Gwei::try_from(sum).map_err(|_| Error::ArithmeticOverflow("target balance"))
        };
        Ok(Self {
            epoch: current,
            previous_target: gwei(previous_target)?,
            current_target: gwei(current_target)?,
            slashed,
        })
    }

    /// Sums handed over by epoch processing for the epoch the state enters: the previous
    /// epoch's target balance as it weighs with the new effective balances, nothing yet for the
    /// new current epoch.
    pub(crate) fn for_new_epoch(
        epoch: Epoch,
        previous_target: Gwei,
        slashed: Vec<ValidatorIndex>,
    ) -> Self {
        Self {
            epoch,
            previous_target,
            current_target: 0,
            slashed,
        }
    }

    /// The state's current epoch when the sums hold.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The previous epoch's unslashed target balance (raw).
    pub fn previous_target(&self) -> Gwei {
        self.previous_target
    }

    /// The current epoch's unslashed target balance (raw).
    pub fn current_target(&self) -> Gwei {
        self.current_target
    }

    fn is_slashed(&self, index: ValidatorIndex) -> bool {
        self.slashed.binary_search(&index).is_ok()
    }

    /// `process_attestation` set validator `index`'s target flag (it had none) in the current
    /// epoch's participation (`is_current`) or the previous one's.
    pub(crate) fn on_target_flag_set(
        &mut self,
        index: ValidatorIndex,
        effective_balance: Gwei,
        is_current: bool,
    ) -> Result<(), Error> {
        if self.is_slashed(index) {
            return Ok(());
        }
        let sum = if is_current {
            &mut self.current_target
        } else {
            &mut self.previous_target
        };
        *sum = sum
            .checked_add(effective_balance)
            .ok_or(Error::ArithmeticOverflow("target balance"))?;
        Ok(())
    }

    /// `slash_validator` slashed validator `index`; `previous_target` / `current_target` say
    /// whether it counted in those sums (active in that epoch with the target flag set).
    pub(crate) fn on_slashing(
        &mut self,
        index: ValidatorIndex,
        effective_balance: Gwei,
        previous_target: bool,
        current_target: bool,
    ) {
        if let Err(at) = self.slashed.binary_search(&index) {
            self.slashed.insert(at, index);
            if previous_target {
                self.previous_target = self.previous_target.saturating_sub(effective_balance);
            }
            if current_target {
                self.current_target = self.current_target.saturating_sub(effective_balance);
            }
        }
    }
}
