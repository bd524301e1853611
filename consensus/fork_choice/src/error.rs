//! Why the fork choice rejected a message or could not answer.

use state_processing::{
    per_block::{AttestationInvalid, BlockProcessingError, IndexedAttestationInvalid},
    per_epoch::EpochProcessingError,
    per_slot::SlotProcessingError,
};
use types::{Epoch, Root, Slot, ValidatorIndex};

use crate::data_availability::AvailabilityError;
use crate::persist::PersistedDecodeError;

/// Every way fork choice rejects input or fails; a rejected message leaves the store unchanged.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `on_block`: the parent block (and its post-state) is not in the store.
    #[error("block {block:?}: parent {parent:?} is unknown")]
    UnknownParent {
        /// Root of the rejected block.
        block: Root,
        /// Its `parent_root`, absent from the store.
        parent: Root,
    },
    /// `on_block`: the parent's execution payload (or an ancestor's) was found invalid by the
    /// execution client: nothing may build on it.
    #[error("block {block:?}: parent {parent:?} has an invalidated payload")]
    InvalidatedParent {
        /// Root of the rejected block.
        block: Root,
        /// Its `parent_root`, invalidated.
        parent: Root,
    },
    /// `on_block`: the block's slot is after the store's current slot.
    #[error("block at slot {block_slot} is from the future (current slot {current_slot})")]
    FutureBlock {
        /// The block's slot.
        block_slot: Slot,
        /// The store's current slot.
        current_slot: Slot,
    },
    /// `on_block`: the block is not after the finalized checkpoint's start slot.
    #[error("block at slot {block_slot} is not after the finalized slot {finalized_slot}")]
    NotAfterFinalizedSlot {
        /// The block's slot.
        block_slot: Slot,
        /// The start slot of the finalized checkpoint's epoch.
        finalized_slot: Slot,
    },
    /// `on_block`: the block does not descend from the finalized block.
    #[error("block {block:?} does not descend from the finalized block {finalized:?}")]
    NotFinalizedDescendant {
        /// Root of the rejected block.
        block: Root,
        /// Root of the finalized checkpoint's block.
        finalized: Root,
    },
    /// `on_block`: `is_data_available` failed.
    #[error("block {block:?}: data not available: {source}")]
    DataUnavailable {
        /// Root of the rejected block.
        block: Root,
        /// What the availability check reported.
        #[source]
        source: AvailabilityError,
    },
    /// `on_block`: the state transition rejected the block.
    #[error("block {block:?}: invalid: {source}")]
    InvalidBlock {
        /// Root of the rejected block.
        block: Root,
        /// The state transition's error.
        #[source]
        source: BlockProcessingError,
    },
    /// `on_attestation`: the target epoch is neither the current nor the previous epoch.
    #[error(
        "attestation target epoch {target} is not the current epoch {current} or the one before"
    )]
    TargetEpochOutOfRange {
        /// The attestation's target epoch.
        target: Epoch,
        /// The store's current epoch.
        current: Epoch,
    },
    /// `on_attestation`: the target epoch is not the epoch of the attestation's slot.
    #[error("attestation target epoch {target} is not the epoch of its slot {slot}")]
    TargetEpochSlotMismatch {
        /// The attestation's target epoch.
        target: Epoch,
        /// The attestation's slot.
        slot: Slot,
    },
    /// `on_attestation`: the target block is unknown.
    #[error("attestation target block {0:?} is unknown")]
    UnknownTargetBlock(Root),
    /// `on_attestation`: the head block voted for is unknown.
    #[error("attestation head block {0:?} is unknown")]
    UnknownHeadBlock(Root),
    /// `on_attestation`: the head block voted for is newer than the attestation.
    #[error("attestation at slot {attestation_slot} votes for a block at slot {block_slot}")]
    AttestsToFutureBlock {
        /// The attestation's slot.
        attestation_slot: Slot,
        /// The slot of the head block it votes for.
        block_slot: Slot,
    },
    /// `on_attestation`: the target is not the checkpoint block of the head vote's chain.
    #[error(
        "attestation target {target:?} is not the checkpoint block {expected:?} of its head vote"
    )]
    InconsistentTarget {
        /// The attestation's target root.
        target: Root,
        /// The checkpoint block of the head vote's chain at the target epoch.
        expected: Root,
    },
    /// `on_attestation`: the attestation's slot is not yet in the past.
    #[error("attestation at slot {attestation_slot} is not before the current slot {current_slot}")]
    FutureAttestation {
        /// The attestation's slot.
        attestation_slot: Slot,
        /// The store's current slot.
        current_slot: Slot,
    },
    /// `on_attestation` / `on_attester_slashing`: the attestation is not valid in its state.
    #[error("invalid attestation: {0}")]
    InvalidAttestation(#[source] AttestationInvalid),
    /// `on_attestation` / `on_attester_slashing`: the indexed attestation is not valid.
    #[error("invalid indexed attestation: {0}")]
    InvalidIndexedAttestation(#[from] IndexedAttestationInvalid),
    /// `on_attester_slashing`: the two attestations are not slashable together.
    #[error("the attester slashing's attestations are not slashable")]
    NotSlashable,
    /// `get_proposer_head`: the proposer boost is still on the head.
    #[error("the proposer boost is still on the head {0:?}")]
    BoostOnHead(Root),
    /// The anchor block does not commit to the anchor state.
    #[error("anchor block state root {block:?} is not the anchor state's root {state:?}")]
    AnchorStateMismatch {
        /// The anchor block's `state_root`.
        block: Root,
        /// The hash tree root of the anchor state.
        state: Root,
    },
    /// No block with this root is in the store.
    #[error("block {0:?} is unknown")]
    UnknownBlock(Root),
    /// The justified checkpoint's block is not in the tree.
    #[error("justified block {0:?} is unknown")]
    UnknownJustifiedBlock(Root),
    /// The finalized checkpoint's block is not in the tree.
    #[error("finalized block {0:?} is unknown")]
    UnknownFinalizedBlock(Root),
    /// Persisted fork choice that cannot be read back.
    #[error("persisted fork choice: {0}")]
    CorruptPersisted(#[from] PersistedDecodeError),
    /// A block was inserted twice into the proto-array.
    #[error("block {0:?} is already in the tree")]
    DuplicateNode(Root),
    /// A vote points past the end of the tree.
    #[error("vote for node {0} beyond the tree")]
    VoteNodeOutOfRange(u32),
    /// A validator index too large for the vote vector.
    #[error("validator index {0} is too large")]
    ValidatorIndexTooLarge(ValidatorIndex),
    /// One delta per node was expected.
    #[error("{deltas} deltas for {nodes} nodes")]
    DeltaCount {
        /// Number of deltas given.
        deltas: usize,
        /// Number of nodes in the tree.
        nodes: usize,
    },
    /// A node weight would become negative or overflow.
    #[error("weight {weight} of {root:?} cannot take delta {delta}")]
    InvalidWeight {
        /// Root of the node.
        root: Root,
        /// Its weight before the delta.
        weight: u64,
        /// The delta that could not be applied.
        delta: i64,
    },
    /// A delta overflowed.
    #[error("delta overflow")]
    DeltaOverflow,
    /// A block or state of a fork whose fork choice Arbor does not run (Gloas: its payload
    /// status per block comes with issue 43).
    #[error("fork choice does not support fork {0}")]
    UnsupportedFork(types::ForkName),
    /// A state-processing helper failed on a state held by the store.
    #[error("state processing: {0}")]
    State(#[source] state_processing::Error),
    /// Advancing a state held by the store through empty slots failed.
    #[error("slot processing: {0}")]
    SlotProcessing(#[source] SlotProcessingError),
    /// Epoch processing (the pulled-up checkpoints) failed on a state held by the store.
    #[error("epoch processing: {0}")]
    EpochProcessing(#[source] EpochProcessingError),
    /// A block of the tree has no post-state in the [`crate::SpecStore`] (pruned, or a
    /// restored block's).
    #[error("block {0:?} has no post-state in the store")]
    MissingBlockState(Root),
    /// Fast confirmation: `Slot(slot - 1)` below genesis, where the spec's `uint64` underflows.
    #[error("slot {0} has no previous slot")]
    NoPreviousSlot(Slot),
    /// Fast confirmation: the shuffling of an epoch could not be computed.
    #[error("cannot shuffle {0} active validators")]
    Shuffle(usize),
    /// The head cannot be weighed: the balances of the justified checkpoint were not handed
    /// over ([`crate::ForkChoice::set_justified_balances`]).
    #[error("the balances of the justified checkpoint {0:?} are not held")]
    JustifiedBalancesMissing(types::phase0::Checkpoint),
    /// Fast confirmation: the states given are of another head than the store's.
    #[error("fast confirmation inputs are of head {given:?}, the store's head is {head:?}")]
    StaleInputs {
        /// The store's head.
        head: Root,
        /// The head the inputs were computed for.
        given: Root,
    },
    /// Fast confirmation: the state of a balance-source checkpoint was not given.
    #[error("no state given for checkpoint {0:?}")]
    MissingCheckpointState(types::phase0::Checkpoint),
    /// Fast confirmation: a `CONFIRMATION_BYZANTINE_THRESHOLD` above its maximum value, 25.
    #[error("confirmation byzantine threshold {0} is above its maximum of 25")]
    ByzantineThresholdTooHigh(u64),
}

/// Whose fault an [`Error`] is: the message fork choice was given (a peer that sent it is to
/// blame), or the node itself (its store, its states, its own arithmetic: no peer is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The block, attestation or slashing is invalid, or does not fit the chain.
    Message,
    /// A failure of ours; the same message may import once it is fixed.
    Local,
}

impl Error {
    /// Whose fault this error is.
    pub fn fault(&self) -> Fault {
        match self {
            // The execution engine gave no verdict: ours, whatever the block is.
            Error::InvalidBlock { source, .. } if source.is_local_failure() => Fault::Local,
            Error::UnknownParent { .. }
            | Error::InvalidatedParent { .. }
            | Error::FutureBlock { .. }
            | Error::NotAfterFinalizedSlot { .. }
            | Error::NotFinalizedDescendant { .. }
            | Error::DataUnavailable { .. }
            | Error::InvalidBlock { .. }
            | Error::TargetEpochOutOfRange { .. }
            | Error::TargetEpochSlotMismatch { .. }
            | Error::UnknownTargetBlock(_)
            | Error::UnknownHeadBlock(_)
            | Error::AttestsToFutureBlock { .. }
            | Error::InconsistentTarget { .. }
            | Error::FutureAttestation { .. }
            | Error::InvalidAttestation(_)
            | Error::InvalidIndexedAttestation(_)
            | Error::NotSlashable => Fault::Message,
            Error::BoostOnHead(_)
            | Error::AnchorStateMismatch { .. }
            | Error::UnknownBlock(_)
            | Error::UnknownJustifiedBlock(_)
            | Error::UnknownFinalizedBlock(_)
            | Error::CorruptPersisted(_)
            | Error::DuplicateNode(_)
            | Error::VoteNodeOutOfRange(_)
            | Error::ValidatorIndexTooLarge(_)
            | Error::DeltaCount { .. }
            | Error::InvalidWeight { .. }
            | Error::DeltaOverflow
            | Error::State(_)
            | Error::SlotProcessing(_)
            | Error::EpochProcessing(_)
            | Error::MissingBlockState(_)
            | Error::JustifiedBalancesMissing(_)
            | Error::StaleInputs { .. }
            | Error::MissingCheckpointState(_)
            | Error::NoPreviousSlot(_)
            | Error::Shuffle(_)
            | Error::ByzantineThresholdTooHigh(_)
            // A fork this node does not run: not the peer's fault.
            | Error::UnsupportedFork(_) => Fault::Local,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use state_processing::per_block::{EngineError, ExecutionPayloadInvalid};

    #[test]
    fn the_stores_and_states_failures_are_ours_and_an_invalid_block_is_the_messages() {
        let ours = [
            Error::MissingBlockState(Root::ZERO),
            Error::State(state_processing::Error::ArithmeticOverflow(
                "slot processing",
            )),
            Error::SlotProcessing(SlotProcessingError::SlotNotAfterState {
                state_slot: 2,
                target: 1,
            }),
            Error::EpochProcessing(EpochProcessingError::NoProposerLookahead(
                types::ForkName::Deneb,
            )),
            Error::CorruptPersisted(PersistedDecodeError::TrailingBytes(1)),
            Error::DeltaOverflow,
            // The engine gave no verdict on the block's payload: not the block's fault.
            Error::InvalidBlock {
                block: Root::ZERO,
                source: BlockProcessingError::ExecutionPayload(
                    ExecutionPayloadInvalid::EngineFailed(EngineError::TooManyVersionedHashes {
                        count: 7,
                    }),
                ),
            },
        ];
        for e in ours {
            assert_eq!(e.fault(), Fault::Local, "{e}");
        }
        // A source error stays the source.
        let slots = Error::SlotProcessing(SlotProcessingError::SlotNotAfterState {
            state_slot: 2,
            target: 1,
        });
        assert!(std::error::Error::source(&slots).is_some());
        let theirs = [
            // The engine found the payload invalid: the block's fault.
            Error::InvalidBlock {
                block: Root::ZERO,
                source: BlockProcessingError::ExecutionPayload(
                    ExecutionPayloadInvalid::RejectedByEngine,
                ),
            },
            Error::NotFinalizedDescendant {
                block: Root::ZERO,
                finalized: Root::ZERO,
            },
            Error::FutureBlock {
                block_slot: 9,
                current_slot: 1,
            },
            Error::InvalidatedParent {
                block: Root::ZERO,
                parent: Root::ZERO,
            },
            Error::DataUnavailable {
                block: Root::ZERO,
                source: AvailabilityError::NotRetrieved,
            },
            Error::InvalidAttestation(AttestationInvalid::NonZeroDataIndex(1)),
        ];
        for e in theirs {
            assert_eq!(e.fault(), Fault::Message, "{e}");
        }
    }
}
