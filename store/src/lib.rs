//! Arbor's database: blocks, states, blobs, data columns and (Gloas) execution payload envelopes
//! over [redb], an embedded, pure-Rust, ACID key-value store.
//!
//! The layout is described in [`schema`], the hot/cold split and the finalization migration in
//! [`Store`], the cold state diffs in [`state_diff`]. Replaying blocks onto a stored state goes
//! through a [`StateReplayer`]: the store finds the nearest stored state and the blocks to apply,
//! the replayer applies them; [`StateTransitionReplayer`] is the one that runs the state
//! transition.

mod codec;
mod error;
mod replay;
pub mod schema;
pub mod state_diff;
mod state_files;
mod store;

pub use error::StoreError;
pub use replay::StateTransitionReplayer;
pub use store::{
    DEFAULT_CACHE_SIZE_BYTES, Head, MigrationSummary, OldestBlock, Split, Store, StoreBatch,
    StoreConfig, StoredAs,
};

use types::{BeaconState, EthSpec, SignedBeaconBlock, Slot};

/// An error of a [`StateReplayer`], kept opaque to the store.
pub type ReplayError = Box<dyn std::error::Error + Send + Sync>;

/// Applies blocks to a state, for states the store keeps as "a stored state plus blocks".
///
/// [`StateTransitionReplayer`] implements it with the state transition (tests use stand-ins);
/// the store calls it with the blocks between the nearest stored state and the one asked for,
/// oldest first.
///
/// [spec]: phase0/beacon-chain.md#beacon-chain-state-transition-function
pub trait StateReplayer<E: EthSpec> {
    /// `state_transition(state, block)` without signature or state-root checks (the blocks
    /// were verified when imported): process slots up to the block's slot, then the block.
    fn apply_block(
        &mut self,
        state: &mut BeaconState<E>,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), ReplayError>;

    /// `process_slots(state, slot)`: advance through empty slots to `slot` (a no-op if the
    /// state is already there).
    fn advance_to_slot(
        &mut self,
        state: &mut BeaconState<E>,
        slot: Slot,
    ) -> Result<(), ReplayError>;
}
