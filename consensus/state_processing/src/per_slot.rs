//! Slot processing: `process_slots` and `process_slot`, with the epoch transition at each epoch
//! boundary (Deneb's or Electra's) and the upgrades to Electra at `ELECTRA_FORK_EPOCH`, to
//! Fulu at `FULU_FORK_EPOCH` and to Gloas at `GLOAS_FORK_EPOCH`.
//!
//! [spec]: fulu/fork.md#modified-process_slots (and electra/fork.md#upgrading-the-state,
//! phase0/beacon-chain.md#state-transition)

use types::{BeaconState, ChainSpec, EthSpec, ForkName, Root, Slot, typenum::Unsigned};

use crate::{
    CachedBeaconState, Error,
    common::compute_epoch_at_slot,
    deneb,
    per_epoch::{EpochProcessingError, process_epoch},
    upgrade::{upgrade_to_electra, upgrade_to_fulu, upgrade_to_gloas},
};

/// The last fork whose slots this state transition processes.
const LATEST_PROCESSED_FORK: ForkName = ForkName::Gloas;
use tree_hash::TreeHash;

/// Why slots could not be processed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlotProcessingError {
    /// `process_slots` asserts `state.slot < slot`.
    #[error("cannot process slots up to {target}: the state is already at slot {state_slot}")]
    SlotNotAfterState {
        /// The state's slot.
        state_slot: Slot,
        /// The slot asked for.
        target: Slot,
    },
    /// An epoch transition failed.
    #[error("epoch transition at slot {slot}: {source}")]
    Epoch {
        /// The last slot of the epoch being processed.
        slot: Slot,
        /// The failure.
        #[source]
        source: EpochProcessingError,
    },
    /// The upgrade to a new fork failed.
    #[error("upgrade to {fork} at slot {slot}: {source}")]
    Upgrade {
        /// The fork being entered.
        fork: ForkName,
        /// The first slot of the fork.
        slot: Slot,
        /// The failure.
        #[source]
        source: Error,
    },
    /// A state of a fork this crate does not process reached an epoch boundary, or the slots
    /// reach a fork this crate does not run (one after Gloas).
    #[error(
        "fork {0} is not implemented by this state transition (Deneb to Gloas states are \
         processed; slots of a later fork are refused)"
    )]
    UnsupportedFork(ForkName),
    /// Hashing or a state-tree operation failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// `process_slots(state, slot)`: advances `state` to `slot`, running `process_slot` for every
/// slot, `process_epoch` at the end of every epoch (Deneb's for a Deneb state),
/// `upgrade_to_electra` on entering `ELECTRA_FORK_EPOCH`, `upgrade_to_fulu` on entering
/// `FULU_FORK_EPOCH` and `upgrade_to_gloas` on entering `GLOAS_FORK_EPOCH`.
///
/// On error the state is left part-way; callers that need the state as it was work on a clone
/// (clones are cheap).
///
/// [spec]: fulu/fork.md#modified-process_slots
pub fn process_slots<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    slot: Slot,
    spec: &ChainSpec,
) -> Result<(), SlotProcessingError> {
    let state_slot = *state.state.slot();
    if state_slot >= slot {
        return Err(SlotProcessingError::SlotNotAfterState {
            state_slot,
            target: slot,
        });
    }
    // Crossing into a fork this state transition does not run fails before any slot is
    // processed, naming the fork (never an earlier fork's processing of a later fork's slot).
    let target_fork = spec.fork_name_at_slot::<E>(slot);
    if target_fork > LATEST_PROCESSED_FORK {
        return Err(SlotProcessingError::UnsupportedFork(target_fork));
    }
    let slots_per_epoch = E::SlotsPerEpoch::to_u64();
    while *state.state.slot() < slot {
        process_slot(state)?;
        let current = *state.state.slot();
        // Process the epoch on the start slot of the next epoch.
        if (current + 1).is_multiple_of(slots_per_epoch) {
            let (mut view, caches) = state.view_mut().map_err(|e| match e {
                Error::UnsupportedFork(fork) => SlotProcessingError::UnsupportedFork(fork),
                other => SlotProcessingError::State(other),
            })?;
            let processed = if view.fork_name.electra_enabled() {
                process_epoch(&mut view, caches, spec)
            } else {
                deneb::process_epoch(&mut view, caches, spec)
            };
            processed.map_err(|source| SlotProcessingError::Epoch {
                slot: current,
                source,
            })?;
        }
        let next = current + 1;
        *state.state.slot_mut() = next;
        if next.is_multiple_of(slots_per_epoch) {
            let epoch = compute_epoch_at_slot::<E>(next);
            if epoch == spec.electra_fork_epoch {
                upgrade_state_to_electra(state, spec)?;
            }
            if epoch == spec.fulu_fork_epoch {
                upgrade_state_to_fulu(state, spec)?;
            }
            if spec.fork_epoch(ForkName::Gloas) == Some(epoch) {
                upgrade_state_to_gloas(state, spec)?;
            }
        }
    }
    Ok(())
}

/// Replaces a Deneb state by its Electra upgrade; a state already at Electra or later is left
/// alone.
fn upgrade_state_to_electra<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    spec: &ChainSpec,
) -> Result<(), SlotProcessingError> {
    let slot = *state.state.slot();
    let pre = match &state.state {
        BeaconState::Deneb(pre) => pre.clone(),
        BeaconState::Electra(_) | BeaconState::Fulu(_) | BeaconState::Gloas(_) => return Ok(()),
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)) => {
            return Err(SlotProcessingError::UnsupportedFork(other.fork_name()));
        }
    };
    let post = upgrade_to_electra(pre, spec).map_err(|source| SlotProcessingError::Upgrade {
        fork: ForkName::Electra,
        slot,
        source,
    })?;
    state.state = BeaconState::Electra(post);
    // The upgrade zeroes the balances of validators not yet activated (queued as pending
    // deposits): the caches derived from effective balances start afresh; the keys stay.
    state.caches = crate::Caches::with_pubkeys(state.caches.pubkey_cache());
    Ok(())
}

/// Replaces an Electra state by its Fulu upgrade; a state already at Fulu or later is left
/// alone.
fn upgrade_state_to_fulu<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    spec: &ChainSpec,
) -> Result<(), SlotProcessingError> {
    let slot = *state.state.slot();
    let pre = match &state.state {
        BeaconState::Electra(pre) => pre.clone(),
        BeaconState::Fulu(_) | BeaconState::Gloas(_) => return Ok(()),
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)) => {
            return Err(SlotProcessingError::UnsupportedFork(other.fork_name()));
        }
    };
    let post = upgrade_to_fulu(pre, spec).map_err(|source| SlotProcessingError::Upgrade {
        fork: ForkName::Fulu,
        slot,
        source,
    })?;
    // The registry, the RANDAO mixes and so every committee are unchanged: the caches stay.
    state.state = BeaconState::Fulu(post);
    Ok(())
}

/// Replaces a Fulu state by its Gloas upgrade; a state already at Gloas is left alone.
fn upgrade_state_to_gloas<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    spec: &ChainSpec,
) -> Result<(), SlotProcessingError> {
    let slot = *state.state.slot();
    let pre = match &state.state {
        BeaconState::Fulu(pre) => pre.clone(),
        BeaconState::Gloas(_) => return Ok(()),
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)
        | BeaconState::Electra(_)) => {
            return Err(SlotProcessingError::UnsupportedFork(other.fork_name()));
        }
    };
    let post = upgrade_to_gloas(pre, spec).map_err(|source| SlotProcessingError::Upgrade {
        fork: ForkName::Gloas,
        slot,
        source,
    })?;
    // The registry (now a progressive list, with the same validators), the RANDAO mixes and
    // so every committee and effective balance are unchanged: the caches stay.
    state.state = BeaconState::Gloas(post);
    Ok(())
}

/// `process_slot(state)`: records the root of the state (and of the latest block header) for
/// the slot that ends; from Gloas on, also clears the next slot's bit of
/// `execution_payload_availability` [Modified in Gloas:EIP7732].
///
/// [spec]: phase0/beacon-chain.md#process_slot, gloas/beacon-chain.md#modified-process_slot
pub fn process_slot<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
) -> Result<(), SlotProcessingError> {
    // Cache the state root.
    let previous_state_root = state.hash_tree_root()?;
    let n = E::SlotsPerHistoricalRoot::to_u64();
    let index = (*state.state.slot() % n) as usize;
    set_root(state.state.state_roots_mut(), index, previous_state_root)?;
    // Cache the latest block header's state root.
    let header = state.state.latest_block_header_mut();
    if header.state_root == Root::ZERO {
        header.state_root = previous_state_root;
    }
    // Cache the block root.
    let previous_block_root = state.state.latest_block_header().tree_hash_root();
    set_root(state.state.block_roots_mut(), index, previous_block_root)?;
    // [New in Gloas:EIP7732] Unset the next payload availability.
    if let BeaconState::Gloas(s) = &mut state.state {
        let next = (crate::error::add(s.slot, 1, "slot")? % n) as usize;
        s.execution_payload_availability
            .set(next, false)
            .map_err(|e| Error::Tree(format!("execution_payload_availability: {e:?}")))?;
    }
    Ok(())
}

fn set_root<N: Unsigned>(
    roots: &mut milhouse::Vector<Root, N>,
    index: usize,
    root: Root,
) -> Result<(), Error> {
    let len = roots.len();
    *roots.get_mut(index).ok_or(Error::SlotOutOfRange {
        slot: index as u64,
        state_slot: len as u64,
    })? = root;
    // Fold the write in at once: states of forks without a mutable view are hashed as they are.
    roots.apply_updates()?;
    Ok(())
}
