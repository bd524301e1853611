//! `execution_payload` (Gloas): a builder's (or a self-building proposer's) signed execution
//! payload envelope, the payload a block's bid committed to, delivered after the block.
//!
//! The envelope is checked against its block: the block seen and valid, the payload's slot the
//! block's, the builder index, block hash and execution requests root those of the block's bid,
//! the requests and withdrawals within their limits, and the signature (the builder's key from
//! the block's post-state, or the proposer's for a self-build). The first valid envelope per
//! `(block root, builder index)` is recorded; a repeat is IGNOREd.
//!
//! A verified envelope is not imported here: its import (the custody columns available, the
//! execution client's verdict) is [`BeaconChain::verify_execution_payload_envelope`] and
//! [`BeaconChain::import_verified_envelope`].
//!
//! [spec]: gloas/p2p-interface.md#new-execution_payload

use std::sync::Arc;

use ssz_types::typenum::Unsigned;
use state_processing::gloas::envelope::verify_execution_payload_envelope_signature;
use tree_hash::TreeHash;
use types::{
    EthSpec, Hash32, Root, Slot,
    gloas::{BuilderIndex, ExecutionRequests, SignedExecutionPayloadEnvelope},
};

use super::Verdict;
use crate::chain::{BeaconChain, UnimportedBlock};
use crate::events::{ChainEvent, EnvelopeSummary};
use crate::internal_error::InternalError;

/// An execution request list longer than its limit (`verify_execution_requests_limits`).
///
/// [spec]: gloas/p2p-interface.md#new-verify_execution_requests_limits
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionRequestsLimitError {
    /// More than `MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD` withdrawal requests.
    #[error("{count} withdrawal requests, more than the limit of {max}")]
    WithdrawalRequests {
        /// Requests in the list.
        count: usize,
        /// The limit.
        max: u64,
    },
    /// More than `MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD` consolidation requests.
    #[error("{count} consolidation requests, more than the limit of {max}")]
    ConsolidationRequests {
        /// Requests in the list.
        count: usize,
        /// The limit.
        max: u64,
    },
    /// More than `MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD` builder deposit requests.
    #[error("{count} builder deposit requests, more than the limit of {max}")]
    BuilderDepositRequests {
        /// Requests in the list.
        count: usize,
        /// The limit.
        max: u64,
    },
    /// More than `MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD` builder exit requests.
    #[error("{count} builder exit requests, more than the limit of {max}")]
    BuilderExitRequests {
        /// Requests in the list.
        count: usize,
        /// The limit.
        max: u64,
    },
}

/// `verify_execution_requests_limits(execution_requests)`: each request list within its limit
/// (the lists are progressive, unbounded in SSZ; deposit requests have no limit).
///
/// [spec]: gloas/p2p-interface.md#new-verify_execution_requests_limits
pub fn verify_execution_requests_limits<E: EthSpec>(
    requests: &ExecutionRequests,
) -> Result<(), ExecutionRequestsLimitError> {
    let within = |count: usize, max: u64| count as u64 <= max;
    let max = E::MaxWithdrawalRequestsPerPayload::to_u64();
    if !within(requests.withdrawals.len(), max) {
        return Err(ExecutionRequestsLimitError::WithdrawalRequests {
            count: requests.withdrawals.len(),
            max,
        });
    }
    let max = E::MaxConsolidationRequestsPerPayload::to_u64();
    if !within(requests.consolidations.len(), max) {
        return Err(ExecutionRequestsLimitError::ConsolidationRequests {
            count: requests.consolidations.len(),
            max,
        });
    }
    let max = E::MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD;
    if !within(requests.builder_deposits.len(), max) {
        return Err(ExecutionRequestsLimitError::BuilderDepositRequests {
            count: requests.builder_deposits.len(),
            max,
        });
    }
    let max = E::MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD;
    if !within(requests.builder_exits.len(), max) {
        return Err(ExecutionRequestsLimitError::BuilderExitRequests {
            count: requests.builder_exits.len(),
            max,
        });
    }
    Ok(())
}

/// Why a gossip execution payload envelope is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeGossipError {
    /// [IGNORE] The envelope's block has not been seen, or is still being imported (the
    /// envelope may be queued until it is).
    #[error("the envelope's block {0} has not been seen")]
    UnknownBlock(Root),
    /// [REJECT] The envelope's block failed validation.
    #[error("the envelope's block {0} failed validation")]
    InvalidBlock(Root),
    /// [IGNORE] A valid envelope for this block from this builder was seen already.
    #[error("an envelope of block {block_root} from builder {builder_index} was seen already")]
    AlreadySeen {
        /// The block.
        block_root: Root,
        /// The builder.
        builder_index: BuilderIndex,
    },
    /// [IGNORE] The payload is from a slot before the latest finalized slot.
    #[error("payload slot {slot} is before the finalized slot {finalized_slot}")]
    BeforeFinalizedSlot {
        /// `payload.slot_number`.
        slot: Slot,
        /// The finalized checkpoint's start slot.
        finalized_slot: Slot,
    },
    /// [REJECT] The envelope's block is a block before Gloas (its payload is inside it).
    #[error("block {0} is a block before Gloas: it has no bid")]
    PreGloasBlock(Root),
    /// [REJECT] The payload's slot number is not the block's slot.
    #[error("payload slot number {payload_slot} is not the block's slot {block_slot}")]
    SlotMismatch {
        /// `payload.slot_number`.
        payload_slot: Slot,
        /// `block.slot`.
        block_slot: Slot,
    },
    /// [REJECT] The envelope is not from the builder the block's bid names.
    #[error("envelope builder {envelope} is not the bid's builder {bid}")]
    BuilderIndexMismatch {
        /// `envelope.builder_index`.
        envelope: BuilderIndex,
        /// `bid.builder_index`.
        bid: BuilderIndex,
    },
    /// [REJECT] The payload's block hash is not the bid's.
    #[error("payload block hash {payload} is not the bid's {bid}")]
    BlockHashMismatch {
        /// `payload.block_hash`.
        payload: Hash32,
        /// `bid.block_hash`.
        bid: Hash32,
    },
    /// [REJECT] The root of the envelope's execution requests is not the bid's.
    #[error("execution requests root {envelope} is not the bid's {bid}")]
    ExecutionRequestsRootMismatch {
        /// `hash_tree_root(envelope.execution_requests)`.
        envelope: Root,
        /// `bid.execution_requests_root`.
        bid: Root,
    },
    /// [REJECT] An execution request list is longer than its limit.
    #[error(transparent)]
    TooManyRequests(#[from] ExecutionRequestsLimitError),
    /// [REJECT] More withdrawals than `MAX_WITHDRAWALS_PER_PAYLOAD`.
    #[error("{count} withdrawals, more than the limit of {max}")]
    TooManyWithdrawals {
        /// Withdrawals in the payload.
        count: usize,
        /// The limit.
        max: u64,
    },
    /// [REJECT] The envelope's signature is invalid.
    #[error("invalid envelope signature")]
    InvalidSignature,
    /// [IGNORE] The block's slot is beyond the first-seen cache's window (far ahead of the
    /// finalized slot): the envelope cannot be recorded, so it is not forwarded.
    #[error("block slot {0} is outside the envelope cache's window")]
    OutsideObservedWindow(Slot),
    /// [IGNORE] The node could not load what a rule needs (the block's post-state, a state
    /// helper failed): ours, not the sender's.
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl EnvelopeGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::UnknownBlock(_)
            | Self::AlreadySeen { .. }
            | Self::BeforeFinalizedSlot { .. }
            | Self::OutsideObservedWindow(_)
            | Self::Internal(_) => Verdict::Ignore,
            Self::InvalidBlock(_)
            | Self::PreGloasBlock(_)
            | Self::SlotMismatch { .. }
            | Self::BuilderIndexMismatch { .. }
            | Self::BlockHashMismatch { .. }
            | Self::ExecutionRequestsRootMismatch { .. }
            | Self::TooManyRequests(_)
            | Self::TooManyWithdrawals { .. }
            | Self::InvalidSignature => Verdict::Reject,
        }
    }
}

/// An execution payload envelope that passed gossip validation (recorded as seen).
#[derive(Debug, Clone, PartialEq)]
pub struct GossipVerifiedEnvelope<E: EthSpec> {
    /// The envelope's block.
    pub block_root: Root,
    /// The block's (and the payload's) slot.
    pub slot: Slot,
    /// The number of blob commitments of the block's bid (the custody columns the payload
    /// waits for have a cell per commitment; none when it has none).
    pub blobs: usize,
    /// The envelope.
    pub envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
}

impl<E: EthSpec> GossipVerifiedEnvelope<E> {
    /// What the `execution_payload_gossip` event says of it.
    pub fn summary(&self) -> EnvelopeSummary {
        EnvelopeSummary {
            slot: self.slot,
            builder_index: self.envelope.message.builder_index,
            block_hash: self.envelope.message.payload.block_hash,
            block_root: self.block_root,
        }
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// `validate_execution_payload_envelope_gossip(seen, store, state, envelope)`: the rules in
    /// the spec's order; the signature is checked against the block's post-state (the builder
    /// registry, and for a self-build the block's proposer). On success the envelope's
    /// `(block root, builder index)` is recorded, so a second copy is IGNOREd.
    ///
    /// [spec]: gloas/p2p-interface.md#new-execution_payload
    pub fn verify_execution_payload_envelope_for_gossip(
        &self,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        current_time_ms: u64,
    ) -> Result<GossipVerifiedEnvelope<E>, EnvelopeGossipError> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let message = &envelope.message;
        let payload = &message.payload;
        let block_root = message.beacon_block_root;
        let builder_index = message.builder_index;

        // `block_root in store.blocks`, then `in store.block_states`: a block seen but failed
        // is invalid; one still being imported has no post-state yet and is waited for.
        let block_slot = self.fork_choice.lock().block_slot(&block_root);
        let Some(block_slot) = block_slot else {
            return Err(match self.unimported_block(&block_root) {
                Some(UnimportedBlock::Failed { .. }) => {
                    EnvelopeGossipError::InvalidBlock(block_root)
                }
                Some(UnimportedBlock::Pending { .. }) | None => {
                    EnvelopeGossipError::UnknownBlock(block_root)
                }
            });
        };

        // Keyed by the block's slot (one per root): a key outside the window is not seen, and
        // the rules below decide.
        if self
            .observed
            .lock()
            .execution_payload_envelopes
            .is_known(block_slot, &(block_root, builder_index))
            .unwrap_or(false)
        {
            return Err(EnvelopeGossipError::AlreadySeen {
                block_root,
                builder_index,
            });
        }

        let finalized_slot = self.finalized_checkpoint().epoch * E::slots_per_epoch();
        if payload.slot_number < finalized_slot {
            return Err(EnvelopeGossipError::BeforeFinalizedSlot {
                slot: payload.slot_number,
                finalized_slot,
            });
        }

        let state = self
            .block_state_outside_lock(&block_root)
            .map_err(|e| EnvelopeGossipError::Internal(InternalError::new(e)))?;
        let view = state
            .view()
            .map_err(|e| EnvelopeGossipError::Internal(InternalError::new(e)))?;
        // The post-state's bid is the block's (`process_execution_payload_bid`).
        let Ok(gloas) = view.gloas() else {
            return Err(EnvelopeGossipError::PreGloasBlock(block_root));
        };
        let bid = &gloas.latest_execution_payload_bid;
        let blobs = bid.blob_kzg_commitments.len();

        if block_slot != payload.slot_number {
            return Err(EnvelopeGossipError::SlotMismatch {
                payload_slot: payload.slot_number,
                block_slot,
            });
        }
        if builder_index != bid.builder_index {
            return Err(EnvelopeGossipError::BuilderIndexMismatch {
                envelope: builder_index,
                bid: bid.builder_index,
            });
        }
        if payload.block_hash != bid.block_hash {
            return Err(EnvelopeGossipError::BlockHashMismatch {
                payload: payload.block_hash,
                bid: bid.block_hash,
            });
        }
        let requests_root = message.execution_requests.tree_hash_root();
        if requests_root != bid.execution_requests_root {
            return Err(EnvelopeGossipError::ExecutionRequestsRootMismatch {
                envelope: requests_root,
                bid: bid.execution_requests_root,
            });
        }
        verify_execution_requests_limits::<E>(&message.execution_requests)?;
        let max = E::MaxWithdrawalsPerPayload::to_u64();
        if payload.withdrawals.len() as u64 > max {
            return Err(EnvelopeGossipError::TooManyWithdrawals {
                count: payload.withdrawals.len(),
                max,
            });
        }
        let signed = self.pool().install(|| {
            verify_execution_payload_envelope_signature(&view, &state.caches, &envelope)
        });
        match signed {
            Ok(true) => {}
            Ok(false) => return Err(EnvelopeGossipError::InvalidSignature),
            // An unknown builder index (past the registry) is the sender's: no key signs.
            Err(state_processing::Error::UnknownBuilder { .. }) => {
                return Err(EnvelopeGossipError::InvalidSignature);
            }
            Err(e) => return Err(EnvelopeGossipError::Internal(InternalError::new(e))),
        }

        match self
            .observed
            .lock()
            .execution_payload_envelopes
            .observe(block_slot, (block_root, builder_index))
        {
            Ok(false) => {
                let verified = GossipVerifiedEnvelope {
                    block_root,
                    slot: block_slot,
                    blobs,
                    envelope,
                };
                // Bids building on this payload now find their parent payload seen.
                self.observe_execution_payload(&verified);
                self.events()
                    .publish(ChainEvent::ExecutionPayloadGossip(verified.summary()));
                Ok(verified)
            }
            Ok(true) => Err(EnvelopeGossipError::AlreadySeen {
                block_root,
                builder_index,
            }),
            Err(_) => Err(EnvelopeGossipError::OutsideObservedWindow(block_slot)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{MinimalEthSpec, electra::ConsolidationRequest};

    fn consolidations(n: usize) -> ExecutionRequests {
        let request = ConsolidationRequest {
            source_address: Default::default(),
            source_pubkey: Default::default(),
            target_pubkey: Default::default(),
        };
        ExecutionRequests {
            consolidations: vec![request; n].into(),
            ..Default::default()
        }
    }

    #[test]
    fn request_lists_at_their_limit_pass_and_one_more_is_refused() {
        let max = <MinimalEthSpec as EthSpec>::MaxConsolidationRequestsPerPayload::to_u64();
        assert_eq!(
            verify_execution_requests_limits::<MinimalEthSpec>(&consolidations(max as usize)),
            Ok(())
        );
        let refused =
            verify_execution_requests_limits::<MinimalEthSpec>(&consolidations(max as usize + 1));
        assert_eq!(
            refused,
            Err(ExecutionRequestsLimitError::ConsolidationRequests {
                count: max as usize + 1,
                max,
            })
        );
        let error = EnvelopeGossipError::from(refused.unwrap_err());
        assert_eq!(error.verdict(), Verdict::Reject);
    }
}
