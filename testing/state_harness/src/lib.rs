//! A test harness for the state transition: interop keys, a block builder that produces valid
//! signed Electra/Fulu blocks against a [`CachedBeaconState`], a synthetic mainnet-scale state,
//! and a driver for the Lodestar state-transition oracle (`shared/oracles/lodestar`).
//!
//! - [`keys`]: the standard interop secret keys and the sum-of-secret-keys trick that signs an
//!   aggregate of thousands of attesters with one signing.
//! - [`builder`]: [`builder::build_block`] advances a clone of the state to the block's slot,
//!   picks the proposer, fills the body from a [`builder::BlockContents`] (attestations for
//!   whole slots of committees, a sync aggregate, exits, slashings, BLS-to-execution changes,
//!   deposit, withdrawal and consolidation requests, a payload that matches the state), runs the
//!   block through `state_processing` to get the post-state root, and signs it.
//! - [`gloas`]: [`gloas::build_gloas_block`], the same for a Gloas block: a self-build bid, the
//!   parent payload's execution requests, Gloas attestations and payload attestations.
//! - [`synthetic`]: a Fulu state with any number of validators (1,000,000 for the benches) whose
//!   public keys are real interop keys, so signatures over it verify.
//! - [`oracle`]: runs `stf.mjs` / `genesis.mjs` of the Lodestar oracle and reads their JSON lines.

pub mod builder;
pub mod gloas;
pub mod keys;
pub mod oracle;
pub mod synthetic;
mod withdrawals;

pub use builder::{
    AttestationSpec, BlockContents, BuiltBlock, DepositRequestSpec, SyncParticipation, build_block,
};
pub use gloas::{
    GloasBlockContents, ParentPayload, build_gloas_block, gloas_parent_execution_requests,
};
pub use keys::{aggregate_interop_secret_key, interop_pubkey, interop_secret_key};
pub use withdrawals::get_expected_withdrawals;

/// Why the harness could not build what was asked.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A helper of `state_processing` failed (an index out of range, an unsupported fork, …).
    #[error("state processing helper: {0}")]
    State(#[from] state_processing::Error),
    /// `process_slots` refused to advance the state.
    #[error("process_slots to slot {slot}: {error}")]
    Slots {
        /// The slot asked for.
        slot: u64,
        /// What `process_slots` said.
        error: String,
    },
    /// The block built does not pass Arbor's own `process_block` (the contents asked for are
    /// invalid for this state, or the state transition has a bug).
    #[error("process_block at slot {slot}: {error}")]
    Block {
        /// The block's slot.
        slot: u64,
        /// What `process_block` said.
        error: String,
    },
    /// The block's slot is not after the state's.
    #[error("cannot build a block at slot {slot} on a state at slot {state_slot}")]
    SlotNotAfterState {
        /// The block's slot.
        slot: u64,
        /// The state's slot.
        state_slot: u64,
    },
    /// A list of the block would exceed its SSZ limit.
    #[error("too many {what} for one block ({count}, limit {limit})")]
    TooMany {
        /// The list ("attestations", "voluntary exits", …).
        what: &'static str,
        /// Items asked for.
        count: usize,
        /// The list's SSZ limit.
        limit: usize,
    },
    /// A sync committee member is not in the registry.
    #[error("sync committee member {0} is not a validator")]
    UnknownSyncCommitteeMember(usize),
    /// A validator has no execution withdrawal credentials where a request needs its address.
    #[error("validator {0} has no execution withdrawal credentials")]
    NoExecutionAddress(u64),
    /// Signers' secret keys summed to zero (negligible odds; a different signer set works).
    #[error("the signers' secret keys sum to zero")]
    ZeroAggregateKey,
    /// Reading or writing a file.
    #[error("i/o: {0}")]
    Io(String),
    /// The oracle could not be run or its output not read.
    #[error("oracle: {0}")]
    Oracle(String),
}

impl From<milhouse::Error> for HarnessError {
    fn from(e: milhouse::Error) -> Self {
        HarnessError::State(e.into())
    }
}

impl From<packed_list::Error> for HarnessError {
    fn from(e: packed_list::Error) -> Self {
        HarnessError::State(e.into())
    }
}
