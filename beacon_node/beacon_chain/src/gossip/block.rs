//! `beacon_block`: Electra and Fulu blocks with their payload inside, and Gloas blocks, whose
//! payload comes later in its envelope and whose body carries the builder's bid instead. A Gloas
//! block's checks replace the payload's with the bid's (its blob commitments within the epoch's
//! limit, its parent root the block's, its parent hash the parent's execution head when the
//! block builds on the parent's empty node), and add the body's operation counts (its lists
//! are progressive, unbounded in SSZ) and the parent's payload verified when the block builds
//! on it.
//!
//! [spec]: fulu/p2p-interface.md#modified-beacon_block,
//! gloas/p2p-interface.md#modified-beacon_block

use std::sync::Arc;

use ssz_types::typenum::Unsigned;
use state_processing::{
    CachedBeaconState, common::get_beacon_proposer_index, per_slot::process_slots,
};
use types::{EthSpec, Hash32, Root, SignedBeaconBlock, Slot, ValidatorIndex, signing};

use super::envelope::{ExecutionRequestsLimitError, verify_execution_requests_limits};
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
    /// [REJECT] Gloas: a list of the block body is longer than its limit, or the body holds
    /// deposits (`verify_block_body_operation_limits`).
    #[error(transparent)]
    TooManyOperations(#[from] BlockBodyLimitError),
    /// [REJECT] Gloas: a list of the parent's execution requests is longer than its limit.
    #[error("parent execution requests: {0}")]
    TooManyParentRequests(#[source] ExecutionRequestsLimitError),
    /// [IGNORE] Gloas: the block builds on its parent's payload (the parent's FULL node), whose
    /// envelope has not been verified yet (the block may be queued until it is).
    #[error("parent {parent}'s payload is not verified")]
    ParentPayloadNotVerified {
        /// The parent root.
        parent: Root,
    },
    /// [REJECT] Gloas: the bid's `parent_block_root` is not the block's parent.
    #[error("the bid's parent root {bid} is not the block's parent {block}")]
    BidParentRootMismatch {
        /// `bid.parent_block_root`.
        bid: Root,
        /// `block.parent_root`.
        block: Root,
    },
    /// [REJECT] Gloas: the parent failed validation (seen, with no post-state).
    #[error("parent {parent} failed validation")]
    ParentFailed {
        /// The parent root.
        parent: Root,
    },
    /// [REJECT] Gloas: the block builds on its parent's empty node, but the bid's
    /// `parent_block_hash` is not the parent state's `latest_block_hash`.
    #[error("the bid builds on {bid}, not the parent's execution head {expected}")]
    BidNotOnParentExecutionHead {
        /// The parent state's `latest_block_hash` (advanced to the block's slot).
        expected: Hash32,
        /// `bid.parent_block_hash`.
        bid: Hash32,
    },
    /// A block of a fork the chain does not process: [REJECT] one before Electra (no such block
    /// belongs on a current topic), [IGNORE] one of a fork this node does not implement (the
    /// peer is not at fault).
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
            | Self::ParentPayloadNotVerified { .. }
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
            | Self::TooManyOperations(_)
            | Self::TooManyParentRequests(_)
            | Self::BidParentRootMismatch { .. }
            | Self::ParentFailed { .. }
            | Self::BidNotOnParentExecutionHead { .. }
            | Self::UnsupportedFork(_) => Verdict::Reject,
        }
    }
}

/// A list of a Gloas block body that `verify_block_body_operation_limits` bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOperation {
    /// `proposer_slashings` (`MAX_PROPOSER_SLASHINGS`).
    ProposerSlashings,
    /// `attester_slashings` (`MAX_ATTESTER_SLASHINGS_ELECTRA`).
    AttesterSlashings,
    /// `attestations` (`MAX_ATTESTATIONS_ELECTRA`).
    Attestations,
    /// `voluntary_exits` (`MAX_VOLUNTARY_EXITS`).
    VoluntaryExits,
    /// `bls_to_execution_changes` (`MAX_BLS_TO_EXECUTION_CHANGES`).
    BlsToExecutionChanges,
    /// `payload_attestations` (`MAX_PAYLOAD_ATTESTATIONS`).
    PayloadAttestations,
}

/// Why `verify_block_body_operation_limits` refuses a Gloas block body.
///
/// [spec]: gloas/p2p-interface.md#new-verify_block_body_operation_limits
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BlockBodyLimitError {
    /// A list is longer than its limit.
    #[error("{count} {operation:?}, more than the limit of {max}")]
    TooMany {
        /// The list.
        operation: BlockOperation,
        /// Its length.
        count: usize,
        /// Its limit.
        max: u64,
    },
    /// The body holds deposits (none may be included since Electra's deposit requests).
    #[error("{0} deposits in a Gloas block")]
    Deposits(usize),
}

/// `verify_block_body_operation_limits(body)`.
///
/// [spec]: gloas/p2p-interface.md#new-verify_block_body_operation_limits
pub fn verify_block_body_operation_limits<E: EthSpec>(
    body: &types::gloas::BeaconBlockBody<E>,
) -> Result<(), BlockBodyLimitError> {
    let limits = [
        (
            BlockOperation::ProposerSlashings,
            body.proposer_slashings.len(),
            E::MaxProposerSlashings::to_u64(),
        ),
        (
            BlockOperation::AttesterSlashings,
            body.attester_slashings.len(),
            E::MaxAttesterSlashingsElectra::to_u64(),
        ),
        (
            BlockOperation::Attestations,
            body.attestations.len(),
            E::MaxAttestationsElectra::to_u64(),
        ),
    ];
    for (operation, count, max) in limits {
        if count as u64 > max {
            return Err(BlockBodyLimitError::TooMany {
                operation,
                count,
                max,
            });
        }
    }
    if !body.deposits.is_empty() {
        return Err(BlockBodyLimitError::Deposits(body.deposits.len()));
    }
    let limits = [
        (
            BlockOperation::VoluntaryExits,
            body.voluntary_exits.len(),
            E::MaxVoluntaryExits::to_u64(),
        ),
        (
            BlockOperation::BlsToExecutionChanges,
            body.bls_to_execution_changes.len(),
            E::MaxBlsToExecutionChanges::to_u64(),
        ),
        (
            BlockOperation::PayloadAttestations,
            body.payload_attestations.len(),
            E::MAX_PAYLOAD_ATTESTATIONS,
        ),
    ];
    for (operation, count, max) in limits {
        if count as u64 > max {
            return Err(BlockBodyLimitError::TooMany {
                operation,
                count,
                max,
            });
        }
    }
    Ok(())
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
    if slot / spe <= state_epoch + 1 && slot >= state_epoch * spe {
        let i = (slot - state_epoch * spe) as usize;
        let view = parent_state.view().map_err(InternalError::new)?;
        if let Some(index) = view.proposer_lookahead.and_then(|l| l.get(i)) {
            return Ok(*index);
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
        if let SignedBeaconBlock::Gloas(signed) = &*block {
            let block_root =
                self.verify_gloas_block_for_gossip(&block, &signed.message, current_time_ms)?;
            return Ok(GossipVerifiedBlock { block, block_root });
        }
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
        let block_root =
            self.verify_proposer_signature(&block, slot, proposer, message.parent_root)?;
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
        self.observe_block_proposal(slot, proposer, block_root)?;
        Ok(GossipVerifiedBlock { block, block_root })
    }

    /// The Gloas `validate_beacon_block_gossip`: the Fulu rules with the payload's replaced by
    /// the bid's, in the spec's order.
    ///
    /// [spec]: gloas/p2p-interface.md#modified-beacon_block
    /// Returns the block's root.
    fn verify_gloas_block_for_gossip(
        &self,
        block: &SignedBeaconBlock<E>,
        message: &types::gloas::BeaconBlock<E>,
        current_time_ms: u64,
    ) -> Result<Root, BlockGossipError> {
        let slot = message.slot;
        let proposer = message.proposer_index;
        let parent = message.parent_root;
        let bid = &message.body.signed_execution_payload_bid.message;
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
        verify_block_body_operation_limits(&message.body)?;
        verify_execution_requests_limits::<E>(&message.body.parent_execution_requests)
            .map_err(BlockGossipError::TooManyParentRequests)?;
        let block_root = self.verify_proposer_signature(block, slot, proposer, parent)?;
        if !self.is_block_known(&parent) {
            return Err(BlockGossipError::ParentUnknown { parent });
        }
        // What the rules read of the parent: its slot, whether the block builds on its payload
        // (`is_parent_node_full`: the bid's parent hash is the parent's bid's block hash; a
        // pre-Gloas parent's payload is in it), whether that payload was verified, and the
        // finalized checkpoint's block on its chain.
        let place = {
            let fc = self.fork_choice.lock();
            let node = match fc.gloas_chain() {
                Some(g) => g.store.block_info(&parent).map(|info| {
                    (
                        info.slot,
                        bid.parent_block_hash == info.bid_block_hash,
                        info.payload_verified,
                    )
                }),
                None => fc.block_slot(&parent).map(|parent_slot| {
                    let full = fc
                        .checkpoint_execution_hash(&parent)
                        .is_some_and(|hash| hash == bid.parent_block_hash);
                    (parent_slot, full, true)
                }),
            };
            match node {
                Some((parent_slot, full, verified)) => {
                    let checkpoint_block = fc
                        .get_checkpoint_block(&parent, finalized.epoch)
                        .map_err(|e| BlockGossipError::Internal(InternalError::new(e)))?;
                    Some((parent_slot, full, verified, checkpoint_block))
                }
                None => None,
            }
        };
        // A parent seen but not in fork choice has no post-state: still being imported (its
        // children wait), or failed (they are invalid).
        let Some((parent_slot, parent_full, parent_payload_verified, checkpoint_block)) = place
        else {
            return Err(match self.unimported_block(&parent) {
                Some(UnimportedBlock::Failed { .. }) => BlockGossipError::ParentFailed { parent },
                Some(UnimportedBlock::Pending { .. }) | None => {
                    BlockGossipError::ParentUnknown { parent }
                }
            });
        };
        if parent_full && !parent_payload_verified {
            return Err(BlockGossipError::ParentPayloadNotVerified { parent });
        }
        if slot <= parent_slot {
            return Err(BlockGossipError::NotAfterParent { slot, parent_slot });
        }
        if checkpoint_block != finalized.root {
            return Err(BlockGossipError::NotFinalizedDescendant {
                finalized: finalized.root,
            });
        }
        // The limit of the block's epoch (a block at an epoch's first slot already has the
        // new epoch's blob parameters).
        let max = self
            .spec()
            .get_blob_parameters(slot / E::slots_per_epoch())
            .max_blobs_per_block;
        let count = bid.blob_kzg_commitments.len();
        if count as u64 > max {
            return Err(BlockGossipError::TooManyBlobCommitments { count, max });
        }
        if bid.parent_block_root != parent {
            return Err(BlockGossipError::BidParentRootMismatch {
                bid: bid.parent_block_root,
                block: parent,
            });
        }
        let parent_state = self
            .block_state_outside_lock(&parent)
            .map_err(|e| BlockGossipError::Internal(InternalError::new(e)))?;
        let expected = expected_proposer(&parent_state, slot, self.spec())
            .map_err(BlockGossipError::Internal)?;
        if proposer != expected {
            return Err(BlockGossipError::WrongProposer {
                expected,
                found: proposer,
            });
        }
        if !parent_full {
            // `process_slots` leaves `latest_block_hash` as it is (a pre-Gloas parent's state
            // is upgraded with its payload header's hash), so the parent's post-state has it.
            let view = parent_state
                .view()
                .map_err(|e| BlockGossipError::Internal(InternalError::new(e)))?;
            let expected = match view.gloas() {
                Ok(gloas) => *gloas.latest_block_hash,
                Err(_) => {
                    view.payload_header()
                        .map_err(|e| BlockGossipError::Internal(InternalError::new(e)))?
                        .block_hash
                }
            };
            if bid.parent_block_hash != expected {
                return Err(BlockGossipError::BidNotOnParentExecutionHead {
                    expected,
                    bid: bid.parent_block_hash,
                });
            }
        }
        self.observe_block_proposal(slot, proposer, block_root)?;
        Ok(block_root)
    }

    /// The proposer's signature of `block` against the head state's key (`[REJECT]` an index
    /// past the registry, unless the parent is unknown: a head behind the parent may not have
    /// the proposer yet). Returns the block's root.
    fn verify_proposer_signature(
        &self,
        block: &SignedBeaconBlock<E>,
        slot: Slot,
        proposer: ValidatorIndex,
        parent: Root,
    ) -> Result<Root, BlockGossipError> {
        let head = self.head();
        if proposer >= validator_count(&head.state) {
            if !self.is_block_known(&parent) {
                return Err(BlockGossipError::ParentUnknown { parent });
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
        Ok(block_root)
    }

    /// Marks the block as seen (`seen.proposer_slots`) and announces it; a concurrent copy
    /// that got here first wins.
    fn observe_block_proposal(
        &self,
        slot: Slot,
        proposer: ValidatorIndex,
        block_root: Root,
    ) -> Result<(), BlockGossipError> {
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
        Ok(())
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

    #[test]
    fn a_gloas_block_on_an_unverified_parent_payload_is_ignored_and_a_bad_bid_rejected() {
        let parent = Root::repeat_byte(1);
        assert_eq!(
            BlockGossipError::ParentPayloadNotVerified { parent }.verdict(),
            Verdict::Ignore
        );
        for refused in [
            BlockGossipError::BidParentRootMismatch {
                bid: parent,
                block: Root::repeat_byte(2),
            },
            BlockGossipError::BidNotOnParentExecutionHead {
                expected: Hash32::repeat_byte(3),
                bid: Hash32::repeat_byte(4),
            },
            BlockGossipError::ParentFailed { parent },
            BlockGossipError::TooManyOperations(BlockBodyLimitError::Deposits(1)),
            BlockGossipError::TooManyParentRequests(
                ExecutionRequestsLimitError::BuilderExitRequests { count: 17, max: 16 },
            ),
        ] {
            assert_eq!(refused.verdict(), Verdict::Reject, "{refused}");
        }
    }
}
