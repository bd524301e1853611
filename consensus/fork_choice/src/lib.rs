//! Fork choice: LMD-GHOST with Casper FFG, as the consensus spec's `Store` and its handlers
//! (`on_tick`, `on_block`, `on_attestation`, `on_attester_slashing`, `get_head`,
//! `get_proposer_head`, `should_override_forkchoice_update`), over a proto-array whose weights
//! move by vote deltas.
//!
//! - [`ForkChoice`]: the store without its states, spec-exact, fed what its caller read of
//!   states (the results API: [`BlockSummary`], attesting indices, [`JustifiedBalances`]); one
//!   owner (`&mut self`), every handler checks before it writes, so a rejected message leaves
//!   it unchanged.
//! - [`SpecStore`]: the spec's `Store` with its states (block and checkpoint states, the KZG
//!   pool): the state-reading handlers, composed from [`ForkChoice`]'s results API. The spec
//!   tests run on it; the node's chain feeds the same API from its own state cache.
//! - [`ForkChoice::to_persisted_bytes`] / [`ForkChoice::restore_persisted`]: the store as the
//!   database keeps it, so that a restart does not replay every block since finality.
//! - [`ProtoArray`]: the block tree, weights and the viability filter.
//! - [`VoteTracker`]: latest messages, one dense entry per validator, and the deltas they imply.
//! - [`fast_confirmation`]: the fast confirmation rule (`on_fast_confirmation`) over the store.
//! - [`gloas`]: the Gloas (EIP-7732) store, three nodes per block (PENDING, EMPTY, FULL),
//!   with the payload envelope and PTC handlers.
//! - [`data_availability`]: the `is_data_available` hook of `on_block` (Fulu's columns, or
//!   Deneb's blobs and proofs before Fulu).
//!
//! [spec]: phase0/fork-choice.md, fulu/fork-choice.md

pub mod data_availability;
mod error;
pub mod fast_confirmation;
mod fork_choice;
pub mod gloas;
pub mod persist;
pub mod proto_array;
mod spec_store;
pub mod votes;

pub use data_availability::{
    AvailabilityError, BlobsError, Columns, SidecarError, is_data_available,
    verify_blobs_available, verify_data_column_sidecar, verify_data_column_sidecars,
};
pub use error::{Error, Fault};
pub use fast_confirmation::{
    FastConfirmationInputs, FastConfirmationStore, get_fast_confirmation_store,
};
pub use fork_choice::{
    AnchorBlock, Arrival, BlockSummary, Config, ForkChoice, Head, JustifiedBalances,
    PostStateCheckpoints, post_state_checkpoints, slashable_indices,
};
pub use gloas::{GloasError, GloasForkChoice, GloasHead, PayloadStatus};
pub use persist::{PersistedDecodeError, Restored};
pub use proto_array::{ExecutionStatus, ProtoArray, ProtoNode};
pub use spec_store::SpecStore;
pub use votes::VoteTracker;

/// The pool type `on_block`'s KZG verification runs on.
pub use rayon::{ThreadPool, ThreadPoolBuilder};
