//! `beacon_block`.
//!
//! [spec]: fulu/p2p-interface.md#modified-beacon_block

use std::sync::Arc;

use state_processing::{
    CachedBeaconState, common::get_beacon_proposer_index, per_slot::process_slots,
};
use types::{EthSpec, Root, SignedBeaconBlock, Slot, ValidatorIndex, signing};

use super::{Verdict, domain_at, head_pubkey, validator_count, verify_one};
use crate::chain::{BeaconChain, ExecutionStatus, UnimportedBlock, electra_message};
use crate::events::ChainEvent;
use crate::internal_error::InternalError;

/// Why a gossip block is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockGossipError {
    /// [IGNORE] The block is from a future slot.
    #[error("block slot {slot} is in the future")]
    FutureSlot {
        /// The block's slot.
        slot: Slot,
    },
    /// [IGNORE] The block is not after the finalized slot.
    #[error("block slot {slot} is not after the finalized slot {finalized_slot}")]
    NotAfterFinalizedSlot {
        /// The block's slot.
        slot: Slot,
        /// The finalized slot.
        finalized_slot: Slot,
    },
    /// [IGNORE] A block of this proposer for this slot was seen already.
    #[error("a block of proposer {proposer} at slot {slot} was seen already")]
    RepeatProposal {
        /// The slot.
        slot: Slot,
        /// The proposer.
        proposer: ValidatorIndex,
    },
    /// [REJECT] The proposer index is not a validator.
    #[error("proposer index {index} is out of range")]
    ProposerIndexOutOfRange {
        /// The index.
        index: ValidatorIndex,
    },
    /// [REJECT] The proposer signature is invalid.
    #[error("invalid proposer signature")]
    InvalidSignature,
    /// [IGNORE] The parent was not seen.
    #[error("parent {parent} has not been seen")]
    ParentUnknown {
        /// The parent root.
        parent: Root,
    },
    /// [REJECT] The payload's timestamp does not match the slot.
    #[error("payload timestamp {found}, expected {expected}")]
    IncorrectTimestamp {
        /// `compute_time_at_slot(state, block.slot)`.
        expected: u64,
        /// The payload's timestamp.
        found: u64,
    },
    /// [REJECT] The parent failed validation and its payload was not validated.
    #[error("parent {parent} failed validation (payload not validated)")]
    ParentInvalidOptimistic {
        /// The parent root.
        parent: Root,
    },
    /// [IGNORE] The parent failed validation and its payload was processed.
    #[error("parent {parent} failed validation (payload processed)")]
    ParentInvalidProcessed {
        /// The parent root.
        parent: Root,
    },
    /// [IGNORE] The parent passed validation but its payload is invalid.
    #[error("parent {parent}'s payload is invalid")]
    ParentPayloadInvalid {
        /// The parent root.
        parent: Root,
    },
    /// [REJECT] The block is not after its parent.
    #[error("block slot {slot} is not after its parent's slot {parent_slot}")]
    NotAfterParent {
        /// The block's slot.
        slot: Slot,
        /// The parent's slot.
        parent_slot: Slot,
    },
    /// [REJECT] The finalized checkpoint is not an ancestor.
    #[error("the finalized checkpoint {finalized} is not an ancestor of the block")]
    NotFinalizedDescendant {
        /// The finalized root.
        finalized: Root,
    },
    /// [REJECT] More blob commitments than the block's epoch allows.
    #[error("{count} blob commitments, more than the limit of {max}")]
    TooManyBlobCommitments {
        /// Commitments in the block.
        count: usize,
        /// `get_blob_parameters(epoch).max_blobs_per_block`.
        max: u64,
    },
    /// [REJECT] Not the expected proposer of the slot.
    #[error("proposer {found}, expected {expected}")]
    WrongProposer {
        /// The expected proposer.
        expected: ValidatorIndex,
        /// The block's proposer.
        found: ValidatorIndex,
    },
    /// A block of a fork the chain does not process: [REJECT] one before Electra (no such block
    /// belongs on a current topic), [IGNORE] one of a fork this node does not run yet (Gloas:
    /// the peer is not at fault).
    #[error("a {0} block")]
    UnsupportedFork(types::ForkName),
    /// [IGNORE] The node could not compute what a rule needs (fork choice could not give the
    /// parent's post-state or checkpoint block, a state helper failed).
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl BlockGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::FutureSlot { .. }
            | Self::NotAfterFinalizedSlot { .. }
            | Self::RepeatProposal { .. }
            | Self::ParentUnknown { .. }
            | Self::ParentInvalidProcessed { .. }
            | Self::ParentPayloadInvalid { .. }
            | Self::Internal(_) => Verdict::Ignore,
            Self::UnsupportedFork(fork) if !fork.is_implemented() => Verdict::Ignore,
            Self::ProposerIndexOutOfRange { .. }
            | Self::InvalidSignature
            | Self::IncorrectTimestamp { .. }
            | Self::ParentInvalidOptimistic { .. }
            | Self::NotAfterParent { .. }
            | Self::NotFinalizedDescendant { .. }
            | Self::TooManyBlobCommitments { .. }
            | Self::WrongProposer { .. }
            | Self::UnsupportedFork(_) => Verdict::Reject,
        }
    }
}

/// A block that passed gossip validation: its proposer signature is valid and it extends a
/// block the chain holds.
#[derive(Debug, Clone)]
pub struct GossipVerifiedBlock<E: EthSpec> {
    /// The block.
    pub block: Arc<SignedBeaconBlock<E>>,
    /// Its root.
    pub block_root: Root,
}

/// `get_beacon_proposer_index` of the parent's post-state advanced to `slot`: read from the
/// Fulu `proposer_lookahead` when `slot` is within the two epochs it covers, otherwise by
/// advancing a copy.
pub(crate) fn expected_proposer<E: EthSpec>(
    parent_state: &CachedBeaconState<E>,
    slot: Slot,
    spec: &types::ChainSpec,
) -> Result<ValidatorIndex, InternalError> {
    let spe = E::slots_per_epoch();
    let state_slot = *parent_state.state.slot();
    let state_epoch = state_slot / spe;
    if let types::BeaconState::Fulu(s) = &parent_state.state
        && slot / spe <= state_epoch + 1
        && slot >= state_epoch * spe
    {
        let i = (slot - state_epoch * spe) as usize;
        if let Some(&index) = s.proposer_lookahead.get(i) {
            return Ok(index);
        }
    }
    let mut state = parent_state.clone();
    if slot > state_slot {
        process_slots(&mut state, slot, spec).map_err(InternalError::new)?;
    }
    let (view, caches) = state.view_mut().map_err(InternalError::new)?;
    get_beacon_proposer_index(&view.as_ref(), caches).map_err(InternalError::new)
}

impl<E: EthSpec> BeaconChain<E> {
    /// `validate_beacon_block_gossip(seen, store, state, signed_beacon_block, current_time_ms,
    /// block_payload_statuses)`.
    ///
    /// [spec]: fulu/p2p-interface.md#modified-beacon_block
    pub fn verify_block_for_gossip(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        current_time_ms: u64,
    ) -> Result<GossipVerifiedBlock<E>, BlockGossipError> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let message = electra_message(&block).map_err(BlockGossipError::UnsupportedFork)?;
        let slot = message.slot;
        let proposer = message.proposer_index;
        if self.is_future_slot(slot, current_time_ms) {
            return Err(BlockGossipError::FutureSlot { slot });
        }
        let finalized = self.finalized_checkpoint();
        let finalized_slot = finalized.epoch * E::slots_per_epoch();
        if slot <= finalized_slot {
            return Err(BlockGossipError::NotAfterFinalizedSlot {
                slot,
                finalized_slot,
            });
        }
        if self
            .observed
            .lock()
            .block_producers
            .proposer_has_been_observed(slot, proposer)
            .unwrap_or(false)
        {
            return Err(BlockGossipError::RepeatProposal { slot, proposer });
        }
        let head = self.head();
        if proposer >= validator_count(&head.state) {
            // A head behind the block's parent (syncing) may not have its proposer yet: the
            // parent unknown is an IGNORE and a lookup, not a REJECT of a valid block.
            if !self.is_block_known(&message.parent_root) {
                return Err(BlockGossipError::ParentUnknown {
                    parent: message.parent_root,
                });
            }
            return Err(BlockGossipError::ProposerIndexOutOfRange { index: proposer });
        }
        let key = head_pubkey(&head.state, proposer).ok_or(BlockGossipError::InvalidSignature)?;
        let block_root = block.canonical_root();
        let domain = domain_at(
            self.spec(),
            self.genesis_validators_root(),
            signing::DOMAIN_BEACON_PROPOSER,
            slot / E::slots_per_epoch(),
        );
        if !verify_one(
            &key,
            signing::compute_signing_root(&block_root, domain),
            &block.signature(),
        ) {
            return Err(BlockGossipError::InvalidSignature);
        }
        let parent = message.parent_root;
        if !self.is_block_known(&parent) {
            return Err(BlockGossipError::ParentUnknown { parent });
        }
        let expected = self.spec().compute_time_at_slot(self.genesis_time(), slot);
        let found = message.body.execution_payload.timestamp;
        if found != expected {
            return Err(BlockGossipError::IncorrectTimestamp { expected, found });
        }
        let parent_status = self.payload_status(&parent);
        let place = {
            let fc = self.fork_choice.lock();
            if fc.contains_block(&parent) {
                let parent_slot = fc
                    .block_slot(&parent)
                    .ok_or(BlockGossipError::ParentUnknown { parent })?;
                let checkpoint_block = fc
                    .get_checkpoint_block(&parent, finalized.epoch)
                    .map_err(|e| BlockGossipError::Internal(InternalError::new(e)))?;
                Some((parent_slot, checkpoint_block))
            } else {
                None
            }
        };
        let Some((parent_slot, checkpoint_block)) = place else {
            return Err(match (parent_status, self.unimported_block(&parent)) {
                (_, Some(UnimportedBlock::Pending { .. })) => {
                    BlockGossipError::ParentUnknown { parent }
                }
                (ExecutionStatus::NotValidated, _) => {
                    BlockGossipError::ParentInvalidOptimistic { parent }
                }
                _ => BlockGossipError::ParentInvalidProcessed { parent },
            });
        };
        // A parent whose post-state fork choice let go of is loaded back from the store,
        // without fork choice's lock.
        let parent_state = self
            .block_state_outside_lock(&parent)
            .map_err(|e| BlockGossipError::Internal(InternalError::new(e)))?;
        if parent_status == ExecutionStatus::Invalidated {
            return Err(BlockGossipError::ParentPayloadInvalid { parent });
        }
        if slot <= parent_slot {
            return Err(BlockGossipError::NotAfterParent { slot, parent_slot });
        }
        if checkpoint_block != finalized.root {
            return Err(BlockGossipError::NotFinalizedDescendant {
                finalized: finalized.root,
            });
        }
        let max = self
            .spec()
            .get_blob_parameters(slot / E::slots_per_epoch())
            .max_blobs_per_block;
        let count = message.body.blob_kzg_commitments.len();
        if count as u64 > max {
            return Err(BlockGossipError::TooManyBlobCommitments { count, max });
        }
        let expected = expected_proposer(&parent_state, slot, self.spec())
            .map_err(BlockGossipError::Internal)?;
        if proposer != expected {
            return Err(BlockGossipError::WrongProposer {
                expected,
                found: proposer,
            });
        }
        // Mark the block as seen; a concurrent copy that got here first wins.
        let first = self
            .observed
            .lock()
            .block_producers
            .observe(slot, proposer, block_root)
            .map_or(true, |o| o == crate::observed::ProposalObservation::New);
        if !first {
            return Err(BlockGossipError::RepeatProposal { slot, proposer });
        }
        self.events().publish(ChainEvent::BlockGossip {
            slot,
            block: block_root,
        });
        Ok(GossipVerifiedBlock { block, block_root })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_of_a_fork_not_run_is_ignored_and_one_before_electra_rejected() {
        assert_eq!(
            BlockGossipError::UnsupportedFork(types::ForkName::Gloas).verdict(),
            Verdict::Ignore
        );
        assert_eq!(
            BlockGossipError::UnsupportedFork(types::ForkName::Deneb).verdict(),
            Verdict::Reject
        );
    }
}
