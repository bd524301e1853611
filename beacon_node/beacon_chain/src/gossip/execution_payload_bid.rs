//! `execution_payload_bid` (Gloas): a builder's signed bid for the payload of the next block.
//!
//! A bid is checked against its parent block's post-state (advanced to the bid's slot for the
//! builder's checks) and against what the node has seen on gossip: the proposer's preferences
//! for the slot (fee recipient, gas limit target), the parent payload (its gas limit), the
//! other bids. The caches the rules read and write are in [`ExecutionPayloadBidCaches`], under
//! the chain's own lock for them:
//!
//! - `seen.execution_payload_bids`: one valid bid per `(slot, parent hash, parent root,
//!   builder)`; `seen.best_execution_payload_bid`: the highest value per `(slot, parent hash,
//!   parent root)` — a bid that does not beat it is IGNOREd. Both hold only the current and
//!   next slots (bids for any other are IGNOREd), at most [`MAX_OBSERVED_BIDS`] keys; past that
//!   new bids are IGNOREd until the slot passes.
//! - `seen.execution_payloads`: the gas limit of each execution payload seen on gossip (its
//!   envelope valid), by block hash, at most [`MAX_SEEN_EXECUTION_PAYLOADS`] (the oldest slots
//!   go first) and none before the finalized slot. The envelope rules record it
//!   ([`BeaconChain::observe_execution_payload`]).
//!
//! The rules are those of the 1.7.0b4 vectors: the consensus-specs text of the time with a bid
//! whose block hash is its parent hash REJECTed, a parent with no post-state (still being
//! imported) IGNOREd, and a builder that the parent's payload may exit (a builder exit request
//! with its key and address, consensus-specs#5580) IGNOREd.
//!
//! [spec]: gloas/p2p-interface.md#new-execution_payload_bid

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use state_processing::{
    common::{get_current_epoch, get_randao_mix},
    gloas::{
        builders::{can_builder_cover_bid, is_active_builder},
        per_block::verify_execution_payload_bid_signature,
    },
};
use types::{
    EthSpec, Gwei, Hash32, Root, Slot,
    gloas::{BuilderIndex, SignedExecutionPayloadBid},
    phase0::Checkpoint,
};

use super::Verdict;
use super::envelope::GossipVerifiedEnvelope;
use super::proposer_preferences::compute_shuffling_dependent_slot;
use crate::chain::BeaconChain;
use crate::events::ChainEvent;
use crate::internal_error::InternalError;

/// The most `(slot, parent hash, parent root, builder)` keys of valid bids kept (the current
/// and next slots): a bound on the cache a flood of valid bids can grow.
pub const MAX_OBSERVED_BIDS: usize = 16_384;

/// The most execution payloads kept by block hash (a bid builds on a recent one).
pub const MAX_SEEN_EXECUTION_PAYLOADS: usize = 256;

/// `PAYLOAD_BUILDER_VERSION`: the builder version that may bid.
///
/// [spec]: gloas/beacon-chain.md#constants
pub const PAYLOAD_BUILDER_VERSION: u8 = 0;

/// Why a gossip bid is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BidGossipError {
    /// [IGNORE] The bid's slot is neither the current nor the next slot.
    #[error("bid slot {0} is not the current or next slot")]
    NotCurrentOrNextSlot(Slot),
    /// [IGNORE] A valid bid of this builder for this slot and parent was seen already.
    #[error("a bid of builder {builder_index} for slot {slot} on this parent was seen already")]
    AlreadySeen {
        /// `bid.slot`.
        slot: Slot,
        /// `bid.builder_index`.
        builder_index: BuilderIndex,
    },
    /// [IGNORE] A bid of at least this value was seen for this slot and parent.
    #[error("bid value {value} does not beat the best value {best} seen")]
    NotHighestValue {
        /// `bid.value`.
        value: Gwei,
        /// The highest value seen.
        best: Gwei,
    },
    /// [REJECT] The bid promises an execution-layer payment (it must be zero on gossip).
    #[error("execution payment {0} is not zero")]
    NonZeroExecutionPayment(Gwei),
    /// [REJECT] The bid's block hash is its parent hash.
    #[error("the bid's block hash is its parent block hash {0}")]
    BlockHashIsParentHash(Hash32),
    /// [REJECT] More blob commitments than the bid's epoch allows.
    #[error("{count} blob commitments, more than the limit of {max}")]
    TooManyBlobCommitments {
        /// Commitments in the bid.
        count: usize,
        /// `get_blob_parameters(epoch).max_blobs_per_block`.
        max: u64,
    },
    /// [IGNORE] The parent block has not been seen (the bid may be queued until it is).
    #[error("parent block {0} has not been seen")]
    UnknownParentBlock(Root),
    /// [IGNORE] The parent block has no post-state (being imported, or failed).
    #[error("parent block {0} has no post-state")]
    ParentStateUnavailable(Root),
    /// [REJECT] The bid is not for a slot after its parent's.
    #[error("bid slot {slot} is not after its parent's slot {parent_slot}")]
    NotAfterParent {
        /// `bid.slot`.
        slot: Slot,
        /// The parent block's slot.
        parent_slot: Slot,
    },
    /// [IGNORE] The bid's slot is past the parent state's proposer lookahead.
    #[error("bid slot {0} is past the parent's proposer lookahead")]
    PastParentLookahead(Slot),
    /// [IGNORE] No proposer preferences for the slot on the parent's shuffling were seen.
    #[error("no proposer preferences seen for slot {slot} on dependent root {dependent_root}")]
    PreferencesNotSeen {
        /// `bid.slot`.
        slot: Slot,
        /// The shuffling's dependent root on the parent's chain.
        dependent_root: Root,
    },
    /// [IGNORE] The fee recipient is not the proposer's.
    #[error("the bid's fee recipient is not the proposer's preference")]
    FeeRecipientMismatch,
    /// [IGNORE] The parent block hash is not the hash of an execution payload seen.
    #[error("parent block hash {0} is not a known execution payload")]
    UnknownParentPayload(Hash32),
    /// [IGNORE] The gas limit does not move from the parent's towards the proposer's target
    /// as far as the EIP-1559 rule allows.
    #[error("gas limit {gas_limit} from {parent_gas_limit} is not compatible with target {target}")]
    IncompatibleGasLimit {
        /// `bid.gas_limit`.
        gas_limit: u64,
        /// The parent payload's gas limit.
        parent_gas_limit: u64,
        /// The proposer's `target_gas_limit`.
        target: u64,
    },
    /// [IGNORE] The bid is not compatible with the head (`is_bid_compatible_with_head`).
    #[error("the bid is not compatible with the head")]
    NotCompatibleWithHead,
    /// [REJECT] `prev_randao` is not the parent state's RANDAO mix.
    #[error("incorrect prev_randao")]
    IncorrectPrevRandao,
    /// [REJECT] The builder index is past the registry.
    #[error("builder index {0} out of range")]
    UnknownBuilder(BuilderIndex),
    /// [IGNORE] The parent's payload holds an exit request of the builder: it may have exited
    /// once the bid's block applies it.
    #[error("builder {0} may exit with the parent's payload")]
    BuilderMayExit(BuilderIndex),
    /// [IGNORE] The parent's payload envelope is not in the store (the exit check needs it).
    #[error("the envelope of parent {0} is not in the store")]
    ParentEnvelopeUnavailable(Root),
    /// [IGNORE] The builder cannot cover the bid's value.
    #[error("builder {0} cannot cover the bid")]
    CannotCoverBid(BuilderIndex),
    /// [REJECT] The builder is not active.
    #[error("builder {0} is not active")]
    InactiveBuilder(BuilderIndex),
    /// [REJECT] The builder's version is not `PAYLOAD_BUILDER_VERSION`.
    #[error("builder {builder_index} has version {version}, not a payload builder")]
    NotPayloadBuilder {
        /// The builder.
        builder_index: BuilderIndex,
        /// Its version.
        version: u8,
    },
    /// [REJECT] The builder's signature is invalid.
    #[error("invalid bid signature")]
    InvalidSignature,
    /// [IGNORE] The bid caches are full ([`MAX_OBSERVED_BIDS`]) until the slot passes.
    #[error("the bid caches are full")]
    CacheFull,
    /// [IGNORE] The node could not compute what a rule needs (a state, fork choice, the
    /// store): ours, not the sender's.
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl BidGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::NotCurrentOrNextSlot(_)
            | Self::AlreadySeen { .. }
            | Self::NotHighestValue { .. }
            | Self::UnknownParentBlock(_)
            | Self::ParentStateUnavailable(_)
            | Self::PastParentLookahead(_)
            | Self::PreferencesNotSeen { .. }
            | Self::FeeRecipientMismatch
            | Self::UnknownParentPayload(_)
            | Self::IncompatibleGasLimit { .. }
            | Self::NotCompatibleWithHead
            | Self::BuilderMayExit(_)
            | Self::ParentEnvelopeUnavailable(_)
            | Self::CannotCoverBid(_)
            | Self::CacheFull
            | Self::Internal(_) => Verdict::Ignore,
            Self::NonZeroExecutionPayment(_)
            | Self::BlockHashIsParentHash(_)
            | Self::TooManyBlobCommitments { .. }
            | Self::NotAfterParent { .. }
            | Self::IncorrectPrevRandao
            | Self::UnknownBuilder(_)
            | Self::InactiveBuilder(_)
            | Self::NotPayloadBuilder { .. }
            | Self::InvalidSignature => Verdict::Reject,
        }
    }
}

/// A bid that passed gossip validation (recorded as seen and as the best for its parent).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedExecutionPayloadBid(pub SignedExecutionPayloadBid);

/// `(slot, parent_block_hash, parent_block_root)`.
type BestBidKey = (Slot, Hash32, Root);

/// An execution payload seen on gossip: its slot and gas limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SeenPayload {
    slot: Slot,
    gas_limit: u64,
}

/// The bid rules' caches (`seen.execution_payload_bids`, `seen.best_execution_payload_bid`,
/// `seen.execution_payloads`), bounded as the module says.
#[derive(Debug, Default)]
pub struct ExecutionPayloadBidCaches {
    bids: HashSet<(BestBidKey, BuilderIndex)>,
    best: HashMap<BestBidKey, Gwei>,
    payloads: HashMap<Hash32, SeenPayload>,
}

impl ExecutionPayloadBidCaches {
    /// Whether a valid bid of `builder_index` was seen for `key`.
    fn is_seen(&self, key: &BestBidKey, builder_index: BuilderIndex) -> bool {
        self.bids.contains(&(*key, builder_index))
    }

    /// The highest value seen for `key`.
    fn best(&self, key: &BestBidKey) -> Option<Gwei> {
        self.best.get(key).copied()
    }

    /// Records a valid bid, re-checking the rules a concurrent copy may have won.
    fn observe(
        &mut self,
        key: BestBidKey,
        builder_index: BuilderIndex,
        value: Gwei,
    ) -> Result<(), BidGossipError> {
        if self.is_seen(&key, builder_index) {
            return Err(BidGossipError::AlreadySeen {
                slot: key.0,
                builder_index,
            });
        }
        if let Some(best) = self.best(&key)
            && value <= best
        {
            return Err(BidGossipError::NotHighestValue { value, best });
        }
        if self.bids.len() >= MAX_OBSERVED_BIDS {
            return Err(BidGossipError::CacheFull);
        }
        self.bids.insert((key, builder_index));
        self.best.insert(key, value);
        Ok(())
    }

    /// Records an execution payload seen on gossip (its envelope valid); the oldest go first
    /// past [`MAX_SEEN_EXECUTION_PAYLOADS`].
    pub fn observe_payload(&mut self, block_hash: Hash32, slot: Slot, gas_limit: u64) {
        if !self.payloads.contains_key(&block_hash)
            && self.payloads.len() >= MAX_SEEN_EXECUTION_PAYLOADS
            && let Some(oldest) = self
                .payloads
                .iter()
                .min_by_key(|(_, seen)| seen.slot)
                .map(|(hash, _)| *hash)
        {
            self.payloads.remove(&oldest);
        }
        self.payloads
            .insert(block_hash, SeenPayload { slot, gas_limit });
    }

    /// The gas limit of the execution payload `block_hash`, if it was seen.
    pub fn payload_gas_limit(&self, block_hash: &Hash32) -> Option<u64> {
        self.payloads.get(block_hash).map(|seen| seen.gas_limit)
    }

    /// Forgets bids before `current_slot` and payloads before `finalized_slot`.
    pub fn prune(&mut self, current_slot: Slot, finalized_slot: Slot) {
        self.bids.retain(|((slot, _, _), _)| *slot >= current_slot);
        self.best.retain(|(slot, _, _), _| *slot >= current_slot);
        self.payloads.retain(|_, seen| seen.slot >= finalized_slot);
    }
}

/// `is_gas_limit_target_compatible(parent_gas_limit, gas_limit, target_gas_limit)`: whether
/// `gas_limit` is the step from `parent_gas_limit` towards `target_gas_limit` that EIP-1559
/// allows (the target itself when within reach).
///
/// [spec]: gloas/p2p-interface.md#new-is_gas_limit_target_compatible
pub fn is_gas_limit_target_compatible(
    parent_gas_limit: u64,
    gas_limit: u64,
    target_gas_limit: u64,
) -> bool {
    let max_difference = (parent_gas_limit / 1024).max(1) - 1;
    let min_gas_limit = parent_gas_limit - max_difference;
    let max_gas_limit = parent_gas_limit.saturating_add(max_difference);
    if target_gas_limit < min_gas_limit {
        gas_limit == min_gas_limit
    } else if target_gas_limit > max_gas_limit {
        gas_limit == max_gas_limit
    } else {
        gas_limit == target_gas_limit
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// Records the payload of an envelope that passed gossip validation as seen
    /// (`seen.execution_payloads`), for the bids that build on it. The envelope rules call it
    /// once the envelope is accepted.
    pub fn observe_execution_payload(&self, envelope: &GossipVerifiedEnvelope<E>) {
        let payload = &envelope.envelope.message.payload;
        self.bid_caches.lock().observe_payload(
            payload.block_hash,
            envelope.slot,
            payload.gas_limit,
        );
    }

    /// `validate_execution_payload_bid_gossip(seen, store, state, signed_execution_payload_bid,
    /// current_time_ms)` (see the module for the order and the 1.7.0b4 rules); the state is
    /// the parent block's post-state, advanced to the bid's epoch for the builder's checks.
    ///
    /// [spec]: gloas/p2p-interface.md#new-execution_payload_bid
    pub fn verify_execution_payload_bid_for_gossip(
        &self,
        signed: SignedExecutionPayloadBid,
        current_time_ms: u64,
    ) -> Result<VerifiedExecutionPayloadBid, BidGossipError> {
        let current_slot = self.slot_at_ms(current_time_ms);
        let finalized = self.finalized_checkpoint();
        let spe = E::slots_per_epoch();
        self.bid_caches
            .lock()
            .prune(current_slot.saturating_sub(1), finalized.epoch * spe);
        let bid = &signed.message;
        let slot = bid.slot;
        let parent_root = bid.parent_block_root;
        let is_current = |s: Slot| self.is_within_slot_range(s, 0, current_time_ms);
        if !(is_current(slot) || slot.checked_sub(1).is_some_and(is_current)) {
            return Err(BidGossipError::NotCurrentOrNextSlot(slot));
        }
        let key = (slot, bid.parent_block_hash, parent_root);
        {
            let caches = self.bid_caches.lock();
            if caches.is_seen(&key, bid.builder_index) {
                return Err(BidGossipError::AlreadySeen {
                    slot,
                    builder_index: bid.builder_index,
                });
            }
            if let Some(best) = caches.best(&key)
                && bid.value <= best
            {
                return Err(BidGossipError::NotHighestValue {
                    value: bid.value,
                    best,
                });
            }
        }
        if bid.execution_payment != 0 {
            return Err(BidGossipError::NonZeroExecutionPayment(
                bid.execution_payment,
            ));
        }
        if bid.block_hash == bid.parent_block_hash {
            return Err(BidGossipError::BlockHashIsParentHash(bid.block_hash));
        }
        let proposal_epoch = slot / spe;
        let max = self
            .spec()
            .get_blob_parameters(proposal_epoch)
            .max_blobs_per_block;
        let count = bid.blob_kzg_commitments.len();
        if count as u64 > max {
            return Err(BidGossipError::TooManyBlobCommitments { count, max });
        }
        if !self.is_block_known(&parent_root) {
            return Err(BidGossipError::UnknownParentBlock(parent_root));
        }
        let internal = |e: crate::ChainError| BidGossipError::Internal(InternalError::new(e));
        let dependent_slot = compute_shuffling_dependent_slot::<E>(proposal_epoch);
        // A parent seen but not in fork choice (pending or failed) has no post-state. (Read
        // before fork choice's lock: no other lock is taken under it here.)
        let unimported = self.unimported_block(&parent_root).is_some();
        let (parent_slot, dependent_root) = {
            let fc = self.fork_choice.lock();
            let parent_slot = if unimported {
                None
            } else {
                fc.block_slot(&parent_root)
            };
            let Some(parent_slot) = parent_slot else {
                return Err(BidGossipError::ParentStateUnavailable(parent_root));
            };
            // `get_shuffling_dependent_root(store, parent_root, proposal_epoch)`.
            let dependent_root = fc
                .get_ancestor(&parent_root, dependent_slot)
                .map_err(internal)?;
            (parent_slot, dependent_root)
        };
        if slot <= parent_slot {
            return Err(BidGossipError::NotAfterParent { slot, parent_slot });
        }
        let parent_state = self
            .block_state_outside_lock(&parent_root)
            .map_err(internal)?;
        let view_error =
            |e: state_processing::Error| BidGossipError::Internal(InternalError::new(e));
        // The hash of the parent's payload: its bid's for a Gloas parent; for the last block
        // before the fork, the payload inside it (whose requests hold no builder exit).
        let (parent_epoch, randao_mix, parent_payload_hash, parent_is_gloas) = {
            let view = parent_state.view().map_err(view_error)?;
            let epoch = get_current_epoch(&view);
            let (hash, is_gloas) = match view.gloas() {
                Ok(gloas) => (gloas.latest_execution_payload_bid.block_hash, true),
                Err(_) => (view.payload_header().map_err(view_error)?.block_hash, false),
            };
            (epoch, get_randao_mix(&view, epoch), hash, is_gloas)
        };
        if proposal_epoch > parent_epoch + E::MIN_SEED_LOOKAHEAD {
            return Err(BidGossipError::PastParentLookahead(slot));
        }
        let Some(preferences) = self.proposer_preferences(&dependent_root, slot) else {
            return Err(BidGossipError::PreferencesNotSeen {
                slot,
                dependent_root,
            });
        };
        if bid.fee_recipient != preferences.fee_recipient {
            return Err(BidGossipError::FeeRecipientMismatch);
        }
        let Some(parent_gas_limit) = self
            .bid_caches
            .lock()
            .payload_gas_limit(&bid.parent_block_hash)
        else {
            return Err(BidGossipError::UnknownParentPayload(bid.parent_block_hash));
        };
        if !is_gas_limit_target_compatible(
            parent_gas_limit,
            bid.gas_limit,
            preferences.target_gas_limit,
        ) {
            return Err(BidGossipError::IncompatibleGasLimit {
                gas_limit: bid.gas_limit,
                parent_gas_limit,
                target: preferences.target_gas_limit,
            });
        }
        if !self.is_bid_compatible_with_head(bid)? {
            return Err(BidGossipError::NotCompatibleWithHead);
        }
        if bid.prev_randao != randao_mix {
            return Err(BidGossipError::IncorrectPrevRandao);
        }
        // `process_slots(state, bid.slot)`: within the parent's epoch nothing the builder's
        // checks read changes; a later epoch's first slot is the checkpoint state (cached).
        let state = if proposal_epoch > parent_epoch {
            self.checkpoint_state_outside_lock(&Checkpoint {
                epoch: proposal_epoch,
                root: parent_root,
            })
            .map_err(internal)?
        } else {
            parent_state
        };
        let view = state.view().map_err(view_error)?;
        let builder_index = bid.builder_index;
        let builder = view
            .gloas()
            .map_err(view_error)?
            .builders
            .get(usize::try_from(builder_index).unwrap_or(usize::MAX))
            .cloned()
            .ok_or(BidGossipError::UnknownBuilder(builder_index))?;
        if parent_is_gloas && bid.parent_block_hash == parent_payload_hash {
            // The bid builds on the parent's payload, whose requests the bid's block applies
            // before it checks the bid: an exit request of the builder may make it inactive.
            let envelope = self
                .store()
                .get_execution_payload_envelope(&parent_root)
                .map_err(|e| BidGossipError::Internal(InternalError::new(e)))?
                .ok_or(BidGossipError::ParentEnvelopeUnavailable(parent_root))?;
            let may_exit = envelope
                .message
                .execution_requests
                .builder_exits
                .iter()
                .any(|exit| {
                    exit.pubkey == builder.pubkey
                        && exit.source_address == builder.execution_address
                });
            if may_exit {
                return Err(BidGossipError::BuilderMayExit(builder_index));
            }
        }
        if !can_builder_cover_bid(&view, builder_index, bid.value).map_err(view_error)? {
            return Err(BidGossipError::CannotCoverBid(builder_index));
        }
        // `is_active_builder`, its deposit finalized by the store's checkpoint when the state's
        // is behind it (the vectors finalize the deposit in the store only).
        let deposit_finalized = builder.deposit_epoch < finalized.epoch;
        if !(is_active_builder(&view, builder_index).map_err(view_error)?
            || deposit_finalized && builder.withdrawable_epoch == types::FAR_FUTURE_EPOCH)
        {
            return Err(BidGossipError::InactiveBuilder(builder_index));
        }
        if builder.version != PAYLOAD_BUILDER_VERSION {
            return Err(BidGossipError::NotPayloadBuilder {
                builder_index,
                version: builder.version,
            });
        }
        let signed_ok = self
            .pool()
            .install(|| verify_execution_payload_bid_signature(&view, &signed))
            .map_err(view_error)?;
        if !signed_ok {
            return Err(BidGossipError::InvalidSignature);
        }
        self.bid_caches
            .lock()
            .observe(key, builder_index, bid.value)?;
        self.events()
            .publish(ChainEvent::ExecutionPayloadBid(Arc::new(signed.clone())));
        Ok(VerifiedExecutionPayloadBid(signed))
    }

    /// `is_bid_compatible_with_head(store, bid)`: the bid builds on the head's parent block and
    /// payload (as the head block's own bid does), or on the head block and the payload its
    /// next proposer builds on (`should_build_on_full`). Before Gloas (a chain whose fork
    /// choice has not crossed yet) the head's payload is in its block: the bid must build on
    /// the head and its payload.
    ///
    /// [spec]: gloas/p2p-interface.md#new-is_bid_compatible_with_head
    fn is_bid_compatible_with_head(
        &self,
        bid: &types::gloas::ExecutionPayloadBid,
    ) -> Result<bool, BidGossipError> {
        let head = self.head();
        let fc = self.fork_choice.lock();
        let Some(g) = fc.gloas_chain() else {
            return Ok(bid.parent_block_root == head.block_root
                && fc.checkpoint_execution_hash(&head.block_root) == Some(bid.parent_block_hash));
        };
        let Some(head_block) = g.store.block_info(&head.block_root) else {
            return Ok(false);
        };
        let builds_on_parent_block = bid.parent_block_root == head_block.parent_root;
        let builds_on_parent_payload = bid.parent_block_hash == head_block.bid_parent_block_hash;
        if builds_on_parent_block && builds_on_parent_payload {
            return Ok(true);
        }
        if bid.parent_block_root != head.block_root {
            return Ok(false);
        }
        let payload_status = head
            .payload_status
            .unwrap_or(fork_choice::PayloadStatus::Empty);
        let head_node = fork_choice::gloas::GloasHead {
            root: head.block_root,
            slot: head.slot,
            payload_status,
        };
        let on_full = g
            .store
            .should_build_on_full(&head_node, bid.slot)
            .map_err(|e| BidGossipError::Internal(InternalError::new(e)))?;
        Ok(if on_full {
            bid.parent_block_hash == head_block.bid_block_hash
        } else {
            builds_on_parent_payload
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gas_limit_moves_towards_the_target_by_at_most_the_eip_1559_step() {
        let parent = 30_000_000;
        let step = parent / 1024 - 1;
        assert!(is_gas_limit_target_compatible(parent, parent, parent));
        assert!(is_gas_limit_target_compatible(
            parent,
            parent + step,
            parent * 2
        ));
        assert!(!is_gas_limit_target_compatible(
            parent,
            parent + step + 1,
            parent * 2
        ));
        assert!(is_gas_limit_target_compatible(parent, parent - step, 0));
        assert!(!is_gas_limit_target_compatible(
            parent,
            parent - step - 1,
            0
        ));
        assert!(is_gas_limit_target_compatible(
            parent,
            parent + 5,
            parent + 5
        ));
        assert!(!is_gas_limit_target_compatible(parent, parent, parent + 5));
        // A parent under 2048 gas cannot move at all.
        assert!(is_gas_limit_target_compatible(1000, 1000, 5000));
    }

    #[test]
    fn the_caches_keep_one_bid_per_builder_the_best_value_and_forget_past_slots() {
        let mut caches = ExecutionPayloadBidCaches::default();
        let key = (10, Hash32::repeat_byte(1), Root::repeat_byte(2));
        assert_eq!(caches.observe(key, 1, 5), Ok(()));
        assert_eq!(
            caches.observe(key, 1, 9),
            Err(BidGossipError::AlreadySeen {
                slot: 10,
                builder_index: 1
            })
        );
        assert_eq!(
            caches.observe(key, 2, 5),
            Err(BidGossipError::NotHighestValue { value: 5, best: 5 })
        );
        assert_eq!(caches.observe(key, 2, 6), Ok(()));
        assert_eq!(caches.best(&key), Some(6));
        caches.observe_payload(Hash32::repeat_byte(3), 9, 30_000_000);
        caches.prune(11, 9);
        assert!(!caches.is_seen(&key, 1));
        assert_eq!(caches.best(&key), None);
        assert_eq!(
            caches.payload_gas_limit(&Hash32::repeat_byte(3)),
            Some(30_000_000)
        );
        caches.prune(11, 10);
        assert_eq!(caches.payload_gas_limit(&Hash32::repeat_byte(3)), None);
    }

    #[test]
    fn the_payload_cache_drops_its_oldest_payload_when_full() {
        let mut caches = ExecutionPayloadBidCaches::default();
        for i in 0..MAX_SEEN_EXECUTION_PAYLOADS as u64 {
            let mut hash = [0u8; 32];
            hash[..8].copy_from_slice(&i.to_le_bytes());
            caches.observe_payload(Hash32::from(hash), 100 + i, i);
        }
        caches.observe_payload(Hash32::repeat_byte(0xff), 1_000, 7);
        assert_eq!(caches.payloads.len(), MAX_SEEN_EXECUTION_PAYLOADS);
        assert_eq!(caches.payload_gas_limit(&Hash32::from([0u8; 32])), None);
        assert_eq!(
            caches.payload_gas_limit(&Hash32::repeat_byte(0xff)),
            Some(7)
        );
    }
}
