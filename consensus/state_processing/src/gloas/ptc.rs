//! The payload timeliness committee (PTC) [New in Gloas:EIP7732]: `get_ptc`, which reads the
//! state's `ptc_window`, and `compute_ptc`, which draws a slot's committee by effective balance
//! from the slot's beacon committees.
//!
//! [spec]: gloas/beacon-chain.md#new-get_ptc

use types::{EthSpec, Slot, ValidatorIndex};

use crate::{
    Error,
    common::{compute_epoch_at_slot, get_current_epoch},
    view::StateRef,
};

/// `get_ptc(state, slot)` [New in Gloas:EIP7732]: the payload timeliness committee of `slot`,
/// read from `state.ptc_window`, which holds the previous, the current and the next
/// `MIN_SEED_LOOKAHEAD` epochs. A slot outside that window is [`Error::EpochOutOfRange`] (the
/// spec's asserts).
///
/// [spec]: gloas/beacon-chain.md#new-get_ptc
pub fn get_ptc<E: EthSpec>(
    state: &StateRef<'_, E>,
    slot: Slot,
) -> Result<Vec<ValidatorIndex>, Error> {
    let window = state.gloas()?.ptc_window;
    let epoch = compute_epoch_at_slot::<E>(slot);
    let state_epoch = get_current_epoch(state);
    let slots = E::slots_per_epoch();
    let out_of_range = Error::EpochOutOfRange {
        epoch,
        current: state_epoch,
    };
    let position = if epoch < state_epoch {
        // assert epoch + 1 == state_epoch
        if epoch + 1 != state_epoch {
            return Err(out_of_range);
        }
        slot % slots
    } else {
        // assert epoch <= state_epoch + MIN_SEED_LOOKAHEAD
        if epoch > state_epoch.saturating_add(E::MIN_SEED_LOOKAHEAD) {
            return Err(out_of_range);
        }
        (epoch - state_epoch + 1) * slots + slot % slots
    };
    let committee = window
        .get(position as usize)
        .ok_or(Error::Tree("ptc_window shorter than its slots".into()))?;
    Ok(committee.iter().copied().collect())
}
