//! The one error type of the crate: which check of the spec failed, with the values involved.

use types::merkle_proof::MerkleProofError;
use types::{ForkName, Root, Slot};

/// A light-client check of the spec that failed, or data a full node cannot derive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LightClientError {
    /// `is_valid_light_client_header` rejects a header.
    #[error("invalid light-client header ({which}) at slot {slot}")]
    InvalidHeader {
        /// Which header: `bootstrap`, `attested`, `finalized`.
        which: &'static str,
        /// The header's slot.
        slot: Slot,
    },
    /// The bootstrap's header is not the trusted block root.
    #[error("bootstrap header root {got} is not the trusted block root {expected}")]
    UntrustedBootstrap {
        /// The trusted block root.
        expected: Root,
        /// `hash_tree_root(bootstrap.header.beacon)`.
        got: Root,
    },
    /// A Merkle branch does not prove its leaf against the state or body root.
    #[error("the {which} branch does not verify")]
    InvalidBranch {
        /// `current_sync_committee`, `next_sync_committee`, `finality`.
        which: &'static str,
    },
    /// Fewer sync committee participants than `MIN_SYNC_COMMITTEE_PARTICIPANTS`.
    #[error("{participants} sync committee participants, fewer than the minimum")]
    TooFewParticipants {
        /// The participants counted.
        participants: u64,
    },
    /// `current_slot >= signature_slot > attested_slot >= finalized_slot` does not hold.
    #[error(
        "slots out of order: current {current}, signature {signature}, attested {attested}, \
         finalized {finalized}"
    )]
    SlotsOutOfOrder {
        /// The current slot.
        current: Slot,
        /// `signature_slot`.
        signature: Slot,
        /// The attested header's slot.
        attested: Slot,
        /// The finalized header's slot.
        finalized: Slot,
    },
    /// The update is signed in a period the store cannot verify.
    #[error(
        "signature period {signature_period} is not verifiable from store period {store_period}"
    )]
    UnverifiablePeriod {
        /// The store's finalized period.
        store_period: u64,
        /// The update's signature period.
        signature_period: u64,
    },
    /// The update neither advances the store nor supplies its next sync committee.
    #[error("the update at attested slot {attested} is not relevant to the store")]
    IrrelevantUpdate {
        /// The attested header's slot.
        attested: Slot,
    },
    /// A field that must be empty without its branch is not.
    #[error("{which} is set without its branch")]
    UnexpectedField {
        /// `finalized_header`, `next_sync_committee`.
        which: &'static str,
    },
    /// The update's next sync committee differs from the one the store knows.
    #[error("the update's next sync committee differs from the store's")]
    NextSyncCommitteeMismatch,
    /// A participant's public key does not decode.
    #[error("sync committee member {index} has an invalid public key")]
    InvalidPublicKey {
        /// The member's position in the committee.
        index: usize,
    },
    /// The sync aggregate's signature does not verify.
    #[error("the sync aggregate signature does not verify")]
    InvalidSignature,
    /// `apply_light_client_update` on an update finalized outside the store's period while the
    /// next sync committee is unknown.
    #[error("update finalized in period {update_period}, the store is in {store_period}")]
    FinalizedPeriodMismatch {
        /// The store's finalized period.
        store_period: u64,
        /// The update's finalized period.
        update_period: u64,
    },
    /// The full node side covers this fork's blocks and states only (Electra's format: Electra
    /// and Fulu; Gloas's format: from Electra on), and the Electra-format store takes no Gloas
    /// data (`gloas.rs` has Gloas's own).
    #[error("light-client data of fork {0} is not supported here")]
    UnsupportedFork(ForkName),
    /// The state is not the post-state of the block.
    #[error("the state at slot {state_slot} is not the post-state of block {block_root}")]
    StateNotOfBlock {
        /// The state's slot.
        state_slot: Slot,
        /// The block's root.
        block_root: Root,
    },
    /// The attested block is not the signature block's parent.
    #[error("attested block {attested} is not the parent {parent} of the signature block")]
    NotParent {
        /// The attested block's root.
        attested: Root,
        /// The signature block's parent root.
        parent: Root,
    },
    /// The finalized block is not the attested state's finalized checkpoint.
    #[error("finalized block {got} is not the attested state's finalized root {expected}")]
    FinalizedRootMismatch {
        /// The attested state's finalized checkpoint root.
        expected: Root,
        /// The finalized block's root.
        got: Root,
    },
    /// Light-client data of a block the collector needs is not at hand (pruned or never seen).
    #[error("no light-client data for block {root}")]
    MissingBlockData {
        /// The block's root.
        root: Root,
    },
    /// A branch does not have the length its container's type fixes.
    #[error("a branch of {got} nodes where {expected} belong")]
    BranchLength {
        /// The type's length.
        expected: usize,
        /// The branch's length.
        got: usize,
    },
    /// A Merkle proof could not be computed.
    #[error("merkle proof: {0}")]
    Proof(#[from] MerkleProofError),
}
