//! `beacon_attestation_{subnet_id}` (`SingleAttestation`) and `beacon_aggregate_and_proof`,
//! one by one or in batches whose signatures are verified together.
//!
//! **Gloas.** From the Gloas fork on (by the attestation's slot) `data.index` is no longer a
//! committee index but the payload status the vote supports: 0 (its block's EMPTY node, or
//! any vote of the block's own slot) or 1 (its FULL node). An index above 1 is REJECTed; after
//! the signature and the voted-block checks, `verify_attestation_payload_status`: a same-slot
//! vote with index 1 is REJECTed, and a vote with index 1 counts only for a payload the node
//! imported (IGNOREd while its envelope is not in, or while the execution client has not
//! validated it; REJECTed when it called it invalid). The verified votes go to whichever fork
//! choice the chain runs ([`ForkChoiceVote`], [`BeaconChain::apply_votes_to_fork_choice`]).
//!
//! [spec]: electra/p2p-interface.md#modified-beacon_attestation_subnet_id,
//! electra/p2p-interface.md#modified-beacon_aggregate_and_proof,
//! gloas/p2p-interface.md#modified-beacon_attestation_subnet_id,
//! gloas/p2p-interface.md#modified-beacon_aggregate_and_proof,
//! gloas/p2p-interface.md#new-verify_attestation_payload_status

use std::sync::Arc;

use bls::SignatureSet;
use state_processing::{
    CachedBeaconState, caches::CommitteeCache, common::get_committee_indices,
    per_block::signature_sets,
};
use tree_hash::TreeHash;
use types::{
    CommitteeIndex, Epoch, EthSpec, Root, Slot, ValidatorIndex,
    electra::{SignedAggregateAndProof, SingleAttestation},
    phase0::{AttestationData, Checkpoint},
    signing, subnets,
};

use super::{Verdict, domain_at, is_aggregator};
use crate::batch_metrics::{self, BlsBatchKind};
use crate::chain::{BeaconChain, ExecutionStatus, UnimportedBlock};
use crate::chain_fork_choice::ChainForkChoice;
use crate::events::{ChainEvent, PresetMessage};

/// Why a gossip attestation or aggregate is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttestationGossipError {
    /// [REJECT] `data.index` is not zero (before Gloas).
    #[error("attestation data index {0} is not zero")]
    NonZeroDataIndex(u64),
    /// [REJECT] `data.index` is neither 0 nor 1 (from Gloas on).
    #[error("attestation data index {0} is neither 0 nor 1")]
    DataIndexAboveOne(u64),
    /// [REJECT] A vote of its block's own slot says the payload is present (from Gloas on).
    #[error("a vote of block {0}'s own slot must attest with index 0")]
    SameSlotPayloadVote(Root),
    /// [IGNORE] A vote for block `0`'s payload (index 1) whose envelope this node has not
    /// imported (from Gloas on; the envelope may be requested and the vote come again).
    #[error("the payload of block {0} has not been seen")]
    PayloadNotSeen(Root),
    /// [IGNORE] A vote for block `0`'s payload, which the execution client has not validated.
    #[error("the payload of block {0} is optimistic")]
    PayloadOptimistic(Root),
    /// [REJECT] A vote for block `0`'s payload, which the execution client called invalid.
    #[error("the payload of block {0} is invalid")]
    PayloadInvalid(Root),
    /// [REJECT] An aggregate's committee bits do not name exactly one committee.
    #[error("committee bits name {0} committees, not one")]
    NotOneCommittee(usize),
    /// [REJECT] The committee index is out of range.
    #[error("committee index {index} out of range ({count} per slot)")]
    CommitteeIndexOutOfRange {
        /// The index.
        index: CommitteeIndex,
        /// Committees per slot.
        count: u64,
    },
    /// [REJECT] Gossiped on the wrong subnet.
    #[error("attestation for subnet {expected} on subnet {found}")]
    WrongSubnet {
        /// The subnet of its committee.
        expected: u64,
        /// The subnet it came on.
        found: u64,
    },
    /// [IGNORE] The attestation's slot is in the future.
    #[error("attestation slot {0} is in the future")]
    FutureSlot(Slot),
    /// [IGNORE] The attestation's epoch is neither the current nor the previous one.
    #[error("attestation epoch {0} is not the current or previous epoch")]
    NotCurrentOrPreviousEpoch(Epoch),
    /// [REJECT] The target epoch is not the epoch of the slot.
    #[error("target epoch {target} but slot {slot}")]
    TargetEpochMismatch {
        /// The target epoch.
        target: Epoch,
        /// The slot.
        slot: Slot,
    },
    /// [REJECT] The attester is not in the committee.
    #[error("validator {0} is not in the committee")]
    AttesterNotInCommittee(ValidatorIndex),
    /// [IGNORE] An attestation of this validator for this target epoch was seen.
    #[error("validator {0} already attested for this target epoch")]
    PriorAttestationKnown(ValidatorIndex),
    /// [REJECT] The attestation (or aggregate) signature is invalid.
    #[error("invalid attestation signature")]
    InvalidSignature,
    /// [IGNORE] The block voted for was not seen.
    #[error("block {0} has not been seen")]
    UnknownHeadBlock(Root),
    /// [REJECT] The block voted for failed validation.
    #[error("block {0} failed validation")]
    InvalidHeadBlock(Root),
    /// [REJECT] The target is not the vote's checkpoint block.
    #[error("target {target} is not the checkpoint block {expected} of the voted block")]
    InconsistentTarget {
        /// The target root.
        target: Root,
        /// The checkpoint block of the voted block.
        expected: Root,
    },
    /// [IGNORE] The voted block does not descend from the finalized checkpoint.
    #[error("the finalized checkpoint is not an ancestor of the voted block")]
    NotFinalizedDescendant,
    /// [REJECT] Aggregation bits of the wrong length.
    #[error("{bits} aggregation bits for a committee of {committee}")]
    AggregationBitsLength {
        /// The bits' length.
        bits: usize,
        /// The committee's size.
        committee: usize,
    },
    /// [REJECT] An aggregate without participants.
    #[error("aggregate has no participants")]
    EmptyAggregate,
    /// [IGNORE] An aggregate whose bits are covered by one seen for the same data.
    #[error("a superset of this aggregate was seen")]
    AggregateKnown,
    /// [IGNORE] An aggregate of this aggregator for this target epoch was seen.
    #[error("aggregator {0} already aggregated for this target epoch")]
    AggregatorAlreadyKnown(ValidatorIndex),
    /// [REJECT] The selection proof does not select the aggregator.
    #[error("validator {0} is not selected as aggregator")]
    NotAggregator(ValidatorIndex),
    /// [REJECT] The aggregator is not in the committee.
    #[error("aggregator {0} is not in the committee")]
    AggregatorNotInCommittee(ValidatorIndex),
    /// [REJECT] The selection proof signature is invalid.
    #[error("invalid selection proof")]
    InvalidSelectionProof,
    /// [REJECT] The aggregator's signature is invalid.
    #[error("invalid aggregator signature")]
    InvalidAggregatorSignature,
    /// [IGNORE] The committees of the target epoch are not available to this node.
    #[error("no shuffling for the target of epoch {epoch} at {root}")]
    ShufflingUnavailable {
        /// The target epoch.
        epoch: Epoch,
        /// The target root.
        root: Root,
    },
}

impl AttestationGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::FutureSlot(_)
            | Self::NotCurrentOrPreviousEpoch(_)
            | Self::PriorAttestationKnown(_)
            | Self::UnknownHeadBlock(_)
            | Self::NotFinalizedDescendant
            | Self::AggregateKnown
            | Self::AggregatorAlreadyKnown(_)
            | Self::ShufflingUnavailable { .. }
            | Self::PayloadNotSeen(_)
            | Self::PayloadOptimistic(_) => Verdict::Ignore,
            _ => Verdict::Reject,
        }
    }
}

/// A single attestation that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedSingleAttestation {
    /// The attestation.
    pub attestation: SingleAttestation,
}

/// A verified attestation's vote for fork choice, whichever fork: `AttestationData` is the same
/// container in every fork (from Gloas on its `index` is the payload status the vote supports)
/// and the attesting indices were computed when it was verified.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkChoiceVote {
    /// What the attesters vote for.
    pub data: AttestationData,
    /// Who votes.
    pub attesting_indices: Vec<ValidatorIndex>,
}

impl VerifiedSingleAttestation {
    /// The vote for fork choice: the data and the one attester.
    pub fn fork_choice_vote(&self) -> ForkChoiceVote {
        ForkChoiceVote {
            data: self.attestation.data.clone(),
            attesting_indices: vec![self.attestation.attester_index],
        }
    }
}

impl<E: EthSpec, A: GossipAggregate<E>> VerifiedAggregate<E, A> {
    /// The vote for fork choice: the data and the attesting indices.
    pub fn fork_choice_vote(&self) -> ForkChoiceVote {
        ForkChoiceVote {
            data: self.signed_aggregate.data().clone(),
            attesting_indices: self.attesting_indices.clone(),
        }
    }
}

/// An aggregate that passed gossip validation, with its attesting indices: Electra's
/// container, or (`VerifiedAggregate<E, gloas::SignedAggregateAndProof<E>>`) Gloas's.
#[derive(Debug, Clone)]
pub struct VerifiedAggregate<E: EthSpec, A = SignedAggregateAndProof<E>> {
    /// The signed aggregate.
    pub signed_aggregate: A,
    /// `get_attesting_indices(state, aggregate)`, sorted.
    pub attesting_indices: Vec<ValidatorIndex>,
    _eth_spec: std::marker::PhantomData<E>,
}

/// What `beacon_aggregate_and_proof` reads of a `SignedAggregateAndProof`, whose container
/// changed at Gloas (EIP-7688's progressive `Attestation`) while its rules did not.
pub trait GossipAggregate<E: EthSpec>: Clone {
    /// `aggregate.data`.
    fn data(&self) -> &AttestationData;
    /// `aggregate.committee_bits`.
    fn committee_bits(&self) -> &ssz_types::BitVector<E::MaxCommitteesPerSlot>;
    /// `len(aggregate.aggregation_bits)`.
    fn aggregation_bits_len(&self) -> usize;
    /// `aggregate.aggregation_bits`, bit by bit.
    fn aggregation_bits(&self) -> Vec<bool>;
    /// `aggregate.aggregation_bits` packed (the `Seen` cache's key of the bits).
    fn aggregation_bits_bytes(&self) -> &[u8];
    /// `aggregate_and_proof.aggregator_index`.
    fn aggregator_index(&self) -> ValidatorIndex;
    /// `aggregate_and_proof.selection_proof`.
    fn selection_proof(&self) -> &types::BLSSignature;
    /// `compute_signing_root(aggregate_and_proof, domain)`.
    fn message_signing_root(&self, domain: types::Domain) -> Root;
    /// `signed_aggregate_and_proof.signature`.
    fn signature(&self) -> &types::BLSSignature;
    /// `aggregate.signature`.
    fn aggregate_signature(&self) -> &types::BLSSignature;
    /// The event the chain publishes for an accepted aggregate (its aggregate in the fork's
    /// `Attestation` container).
    fn event(&self) -> Option<ChainEvent>;
}

/// The `attestation` event of an accepted aggregate: `aggregate` is the fork's `Attestation`.
fn aggregate_event(
    aggregator_index: ValidatorIndex,
    data: &AttestationData,
    aggregate: PresetMessage,
) -> ChainEvent {
    ChainEvent::Aggregate {
        aggregator_index,
        slot: data.slot,
        beacon_block_root: data.beacon_block_root,
        attestation: aggregate,
    }
}

impl<E: EthSpec> GossipAggregate<E> for SignedAggregateAndProof<E> {
    fn data(&self) -> &AttestationData {
        &self.message.aggregate.data
    }
    fn committee_bits(&self) -> &ssz_types::BitVector<E::MaxCommitteesPerSlot> {
        &self.message.aggregate.committee_bits
    }
    fn aggregation_bits_len(&self) -> usize {
        self.message.aggregate.aggregation_bits.len()
    }
    fn aggregation_bits(&self) -> Vec<bool> {
        self.message.aggregate.aggregation_bits.iter().collect()
    }
    fn aggregation_bits_bytes(&self) -> &[u8] {
        self.message.aggregate.aggregation_bits.as_slice()
    }
    fn aggregator_index(&self) -> ValidatorIndex {
        self.message.aggregator_index
    }
    fn selection_proof(&self) -> &types::BLSSignature {
        &self.message.selection_proof
    }
    fn message_signing_root(&self, domain: types::Domain) -> Root {
        signing::compute_signing_root(&self.message, domain)
    }
    fn signature(&self) -> &types::BLSSignature {
        &self.signature
    }
    fn aggregate_signature(&self) -> &types::BLSSignature {
        &self.message.aggregate.signature
    }
    fn event(&self) -> Option<ChainEvent> {
        Some(aggregate_event(
            self.message.aggregator_index,
            &self.message.aggregate.data,
            PresetMessage::new(self.message.aggregate.clone()),
        ))
    }
}

impl<E: EthSpec> GossipAggregate<E> for types::gloas::SignedAggregateAndProof<E> {
    fn data(&self) -> &AttestationData {
        &self.message.aggregate.data
    }
    fn committee_bits(&self) -> &ssz_types::BitVector<E::MaxCommitteesPerSlot> {
        &self.message.aggregate.committee_bits
    }
    fn aggregation_bits_len(&self) -> usize {
        self.message.aggregate.aggregation_bits.len()
    }
    fn aggregation_bits(&self) -> Vec<bool> {
        self.message.aggregate.aggregation_bits.iter().collect()
    }
    fn aggregation_bits_bytes(&self) -> &[u8] {
        self.message.aggregate.aggregation_bits.as_bytes()
    }
    fn aggregator_index(&self) -> ValidatorIndex {
        self.message.aggregator_index
    }
    fn selection_proof(&self) -> &types::BLSSignature {
        &self.message.selection_proof
    }
    fn message_signing_root(&self, domain: types::Domain) -> Root {
        signing::compute_signing_root(&self.message, domain)
    }
    fn signature(&self) -> &types::BLSSignature {
        &self.signature
    }
    fn aggregate_signature(&self) -> &types::BLSSignature {
        &self.message.aggregate.signature
    }
    fn event(&self) -> Option<ChainEvent> {
        Some(aggregate_event(
            self.message.aggregator_index,
            &self.message.aggregate.data,
            PresetMessage::new(self.message.aggregate.clone()),
        ))
    }
}

/// The committees of the target epoch and the state they come from.
struct Shuffling<E: EthSpec> {
    committees: Arc<CommitteeCache>,
    state: CachedBeaconState<E>,
}

/// What survives the checks before the signature of one message (its signature sets go to
/// the batch by value: an aggregate's holds thousands of keys).
struct PendingSingle {
    attestation: SingleAttestation,
}

struct PendingAggregate<A> {
    signed: A,
    committee_index: CommitteeIndex,
    attesting_indices: Vec<ValidatorIndex>,
}

impl<E: EthSpec> BeaconChain<E> {
    /// The committees for `target`'s epoch: from the target checkpoint's state when the target
    /// block is known, otherwise from the head state (the spec's `state`).
    fn shuffling_for(&self, target: &Checkpoint) -> Result<Shuffling<E>, AttestationGossipError> {
        let unavailable = || AttestationGossipError::ShufflingUnavailable {
            epoch: target.epoch,
            root: target.root,
        };
        let known = self.fork_choice.lock().contains_block(&target.root);
        let mut state = if known {
            // Computed (loaded, advanced) without fork choice's lock when it holds none.
            self.checkpoint_state_outside_lock(target)
                .map_err(|_| unavailable())?
        } else {
            self.head().state.clone()
        };
        let committees = {
            let (view, caches) = state.view_mut().map_err(|_| unavailable())?;
            caches
                .committees(&view.as_ref(), target.epoch)
                .map_err(|_| unavailable())?
        };
        Ok(Shuffling { committees, state })
    }

    /// The checks after the signature, shared by attestations and aggregates: the voted block
    /// is known and valid, the target is its checkpoint block, the finalized checkpoint is an
    /// ancestor; from Gloas on, `verify_attestation_payload_status`.
    fn check_voted_block(&self, data: &AttestationData) -> Result<(), AttestationGossipError> {
        let block_root = data.beacon_block_root;
        let target = &data.target;
        let fc = self.fork_choice.lock();
        if !fc.contains_block(&block_root) {
            drop(fc);
            return Err(match self.unimported_block(&block_root) {
                Some(UnimportedBlock::Failed { .. }) => {
                    AttestationGossipError::InvalidHeadBlock(block_root)
                }
                _ => AttestationGossipError::UnknownHeadBlock(block_root),
            });
        }
        let expected = fc
            .get_checkpoint_block(&block_root, target.epoch)
            .map_err(|_| AttestationGossipError::UnknownHeadBlock(block_root))?;
        if expected != target.root {
            return Err(AttestationGossipError::InconsistentTarget {
                target: target.root,
                expected,
            });
        }
        let finalized = fc.finalized_checkpoint().clone();
        let checkpoint_block = fc
            .get_checkpoint_block(&block_root, finalized.epoch)
            .map_err(|_| AttestationGossipError::NotFinalizedDescendant)?;
        if checkpoint_block != finalized.root {
            return Err(AttestationGossipError::NotFinalizedDescendant);
        }
        if self
            .spec()
            .fork_name_at_slot::<E>(data.slot)
            .gloas_enabled()
        {
            verify_attestation_payload_status(&fc, data)?;
        }
        Ok(())
    }

    /// `data.index`: 0 before Gloas; 0 or 1 from Gloas on (by the vote's slot).
    fn check_data_index(&self, data: &AttestationData) -> Result<(), AttestationGossipError> {
        if self
            .spec()
            .fork_name_at_slot::<E>(data.slot)
            .gloas_enabled()
        {
            if data.index > 1 {
                return Err(AttestationGossipError::DataIndexAboveOne(data.index));
            }
        } else if data.index != 0 {
            return Err(AttestationGossipError::NonZeroDataIndex(data.index));
        }
        Ok(())
    }

    /// The slot and epoch checks shared by attestations and aggregates.
    fn check_attestation_timing(
        &self,
        slot: Slot,
        target_epoch: Epoch,
        current_time_ms: u64,
    ) -> Result<(), AttestationGossipError> {
        if self.is_future_slot(slot, current_time_ms) {
            return Err(AttestationGossipError::FutureSlot(slot));
        }
        let epoch = slot / E::slots_per_epoch();
        if !self.is_current_or_previous_epoch(epoch, current_time_ms) {
            return Err(AttestationGossipError::NotCurrentOrPreviousEpoch(epoch));
        }
        if target_epoch != epoch {
            return Err(AttestationGossipError::TargetEpochMismatch {
                target: target_epoch,
                slot,
            });
        }
        Ok(())
    }

    fn single_before_signature(
        &self,
        attestation: SingleAttestation,
        subnet_id: u64,
        current_time_ms: u64,
    ) -> Result<(PendingSingle, SignatureSet), AttestationGossipError> {
        let data = &attestation.data;
        self.check_data_index(data)?;
        let shuffling = self.shuffling_for(&data.target)?;
        let count = shuffling.committees.committees_per_slot();
        if attestation.committee_index >= count {
            return Err(AttestationGossipError::CommitteeIndexOutOfRange {
                index: attestation.committee_index,
                count,
            });
        }
        let expected = subnets::compute_subnet_for_attestation::<E>(
            self.spec(),
            count,
            data.slot,
            attestation.committee_index,
        )
        .map_err(|_| unavailable(&data.target))?;
        if expected != subnet_id {
            return Err(AttestationGossipError::WrongSubnet {
                expected,
                found: subnet_id,
            });
        }
        self.check_attestation_timing(data.slot, data.target.epoch, current_time_ms)?;
        let committee = shuffling
            .committees
            .get_beacon_committee(data.slot, attestation.committee_index)
            .map_err(|_| unavailable(&data.target))?;
        if !committee.contains(&attestation.attester_index) {
            return Err(AttestationGossipError::AttesterNotInCommittee(
                attestation.attester_index,
            ));
        }
        if self
            .observed
            .lock()
            .attesters
            .is_known(data.target.epoch, attestation.attester_index)
            .unwrap_or(false)
        {
            return Err(AttestationGossipError::PriorAttestationKnown(
                attestation.attester_index,
            ));
        }
        let view = shuffling
            .state
            .view()
            .map_err(|_| unavailable(&data.target))?;
        let set = signature_sets::indexed_attestation_signature_set(
            &view,
            &shuffling.state.caches,
            [attestation.attester_index],
            data,
            &attestation.signature,
        )
        .map_err(|_| AttestationGossipError::InvalidSignature)?;
        Ok((PendingSingle { attestation }, set))
    }

    fn single_after_signature(
        &self,
        pending: PendingSingle,
    ) -> Result<VerifiedSingleAttestation, AttestationGossipError> {
        let attestation = pending.attestation;
        let data = &attestation.data;
        self.check_voted_block(data)?;
        if self
            .observed
            .lock()
            .attesters
            .observe(data.target.epoch, attestation.attester_index)
            .unwrap_or(false)
        {
            return Err(AttestationGossipError::PriorAttestationKnown(
                attestation.attester_index,
            ));
        }
        self.events().publish(ChainEvent::SingleAttestation {
            attester_index: attestation.attester_index,
            slot: data.slot,
            beacon_block_root: data.beacon_block_root,
            attestation: Arc::new(attestation.clone()),
        });
        Ok(VerifiedSingleAttestation { attestation })
    }

    /// `validate_beacon_attestation_gossip(seen, store, state, attestation, current_time_ms,
    /// subnet_id)`.
    ///
    /// [spec]: electra/p2p-interface.md#modified-beacon_attestation_subnet_id
    pub fn verify_single_attestation_for_gossip(
        &self,
        attestation: SingleAttestation,
        subnet_id: u64,
        current_time_ms: u64,
    ) -> Result<VerifiedSingleAttestation, AttestationGossipError> {
        self.verify_single_attestations_for_gossip(vec![(attestation, subnet_id)], current_time_ms)
            .pop()
            .expect("one result per attestation")
    }

    /// [`Self::verify_single_attestation_for_gossip`] for a batch: one BLS batch for every
    /// signature, the bad ones found in parallel when it fails. One result per attestation,
    /// in order.
    pub fn verify_single_attestations_for_gossip(
        &self,
        attestations: Vec<(SingleAttestation, u64)>,
        current_time_ms: u64,
    ) -> Vec<Result<VerifiedSingleAttestation, AttestationGossipError>> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let mut sets = Vec::with_capacity(attestations.len());
        let pending: Vec<_> = attestations
            .into_iter()
            .map(|(a, subnet)| {
                self.single_before_signature(a, subnet, current_time_ms)
                    .map(|(pending, set)| {
                        sets.push(set);
                        pending
                    })
            })
            .collect();
        let failed = bls_failures(BlsBatchKind::Attestation, &sets, self.pool());
        let mut set_index = 0;
        pending
            .into_iter()
            .map(|p| {
                let p = p?;
                let bad = failed.contains(&set_index);
                set_index += 1;
                if bad {
                    return Err(AttestationGossipError::InvalidSignature);
                }
                self.single_after_signature(p)
            })
            .collect()
    }

    fn aggregate_before_signature<A: GossipAggregate<E>>(
        &self,
        signed: A,
        current_time_ms: u64,
    ) -> Result<(PendingAggregate<A>, [SignatureSet; 3]), AttestationGossipError> {
        let data = signed.data();
        let aggregator_index = signed.aggregator_index();
        self.check_data_index(data)?;
        let committee_indices = get_committee_indices(signed.committee_bits());
        if committee_indices.len() != 1 {
            return Err(AttestationGossipError::NotOneCommittee(
                committee_indices.len(),
            ));
        }
        let index = committee_indices[0];
        let shuffling = self.shuffling_for(&data.target)?;
        let count = shuffling.committees.committees_per_slot();
        if index >= count {
            return Err(AttestationGossipError::CommitteeIndexOutOfRange { index, count });
        }
        self.check_attestation_timing(data.slot, data.target.epoch, current_time_ms)?;
        let committee = shuffling
            .committees
            .get_beacon_committee(data.slot, index)
            .map_err(|_| unavailable(&data.target))?;
        if signed.aggregation_bits_len() != committee.len() {
            return Err(AttestationGossipError::AggregationBitsLength {
                bits: signed.aggregation_bits_len(),
                committee: committee.len(),
            });
        }
        let mut attesting_indices: Vec<ValidatorIndex> = committee
            .iter()
            .zip(signed.aggregation_bits())
            .filter(|(_, bit)| *bit)
            .map(|(&i, _)| i)
            .collect();
        attesting_indices.sort_unstable();
        attesting_indices.dedup();
        if attesting_indices.is_empty() {
            return Err(AttestationGossipError::EmptyAggregate);
        }
        let bits_key = aggregate_key(data.tree_hash_root(), index);
        let bits = signed.aggregation_bits_bytes().to_vec();
        {
            let observed = self.observed.lock();
            if observed
                .aggregate_bits
                .is_known_subset(data.slot, &bits_key, &bits)
                .unwrap_or(false)
            {
                return Err(AttestationGossipError::AggregateKnown);
            }
            if observed
                .aggregators
                .is_known(data.target.epoch, aggregator_index)
                .unwrap_or(false)
            {
                return Err(AttestationGossipError::AggregatorAlreadyKnown(
                    aggregator_index,
                ));
            }
        }
        if !is_aggregator(committee.len(), signed.selection_proof()) {
            return Err(AttestationGossipError::NotAggregator(aggregator_index));
        }
        if !committee.contains(&aggregator_index) {
            return Err(AttestationGossipError::AggregatorNotInCommittee(
                aggregator_index,
            ));
        }
        let state = &shuffling.state;
        let view = state.view().map_err(|_| unavailable(&data.target))?;
        let key = state
            .caches
            .pubkey(&view, aggregator_index)
            .map_err(|_| AttestationGossipError::InvalidSelectionProof)?;
        let epoch = data.target.epoch;
        let gvr = self.genesis_validators_root();
        let selection = single_set(
            signed.selection_proof(),
            key,
            signing::compute_signing_root(
                &data.slot,
                domain_at(self.spec(), gvr, signing::DOMAIN_SELECTION_PROOF, epoch),
            ),
        )
        .ok_or(AttestationGossipError::InvalidSelectionProof)?;
        let aggregator = single_set(
            signed.signature(),
            key,
            signed.message_signing_root(domain_at(
                self.spec(),
                gvr,
                signing::DOMAIN_AGGREGATE_AND_PROOF,
                epoch,
            )),
        )
        .ok_or(AttestationGossipError::InvalidAggregatorSignature)?;
        let aggregate_set = signature_sets::indexed_attestation_signature_set(
            &view,
            &state.caches,
            attesting_indices.iter().copied(),
            data,
            signed.aggregate_signature(),
        )
        .map_err(|_| AttestationGossipError::InvalidSignature)?;
        Ok((
            PendingAggregate {
                committee_index: index,
                attesting_indices,
                signed,
            },
            [selection, aggregator, aggregate_set],
        ))
    }

    fn aggregate_after_signature<A: GossipAggregate<E>>(
        &self,
        pending: PendingAggregate<A>,
    ) -> Result<VerifiedAggregate<E, A>, AttestationGossipError> {
        let signed = &pending.signed;
        let data = signed.data();
        let aggregator_index = signed.aggregator_index();
        self.check_voted_block(data)?;
        {
            let mut observed = self.observed.lock();
            if observed
                .aggregators
                .observe(data.target.epoch, aggregator_index)
                .unwrap_or(false)
            {
                return Err(AttestationGossipError::AggregatorAlreadyKnown(
                    aggregator_index,
                ));
            }
            let key = aggregate_key(data.tree_hash_root(), pending.committee_index);
            // A superset seen in the meantime does not undo this one's validity.
            let _ =
                observed
                    .aggregate_bits
                    .observe(data.slot, key, signed.aggregation_bits_bytes());
        }
        if let Some(event) = signed.event() {
            self.events().publish(event);
        }
        Ok(VerifiedAggregate {
            attesting_indices: pending.attesting_indices,
            signed_aggregate: pending.signed,
            _eth_spec: std::marker::PhantomData,
        })
    }

    /// `validate_beacon_aggregate_and_proof_gossip(seen, store, state,
    /// signed_aggregate_and_proof, current_time_ms)`, for Electra's container or Gloas's
    /// (`types::gloas::SignedAggregateAndProof`, whose `data.index` may be 1).
    ///
    /// [spec]: electra/p2p-interface.md#modified-beacon_aggregate_and_proof,
    /// gloas/p2p-interface.md#modified-beacon_aggregate_and_proof
    pub fn verify_aggregate_for_gossip<A: GossipAggregate<E>>(
        &self,
        signed: A,
        current_time_ms: u64,
    ) -> Result<VerifiedAggregate<E, A>, AttestationGossipError> {
        self.verify_aggregates_for_gossip(vec![signed], current_time_ms)
            .pop()
            .expect("one result per aggregate")
    }

    /// [`Self::verify_aggregate_for_gossip`] for a batch: the three signatures of every
    /// aggregate in one BLS batch. One result per aggregate, in order.
    pub fn verify_aggregates_for_gossip<A: GossipAggregate<E>>(
        &self,
        aggregates: Vec<A>,
        current_time_ms: u64,
    ) -> Vec<Result<VerifiedAggregate<E, A>, AttestationGossipError>> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let mut sets = Vec::with_capacity(3 * aggregates.len());
        let pending: Vec<_> = aggregates
            .into_iter()
            .map(|a| {
                self.aggregate_before_signature(a, current_time_ms)
                    .map(|(pending, three)| {
                        sets.extend(three);
                        pending
                    })
            })
            .collect();
        let failed = bls_failures(BlsBatchKind::Aggregate, &sets, self.pool());
        let mut first_set = 0;
        pending
            .into_iter()
            .map(|p| {
                let p = p?;
                let base = first_set;
                first_set += 3;
                // The spec's order: selection proof, aggregator signature, aggregate signature.
                if failed.contains(&base) {
                    return Err(AttestationGossipError::InvalidSelectionProof);
                }
                if failed.contains(&(base + 1)) {
                    return Err(AttestationGossipError::InvalidAggregatorSignature);
                }
                if failed.contains(&(base + 2)) {
                    return Err(AttestationGossipError::InvalidSignature);
                }
                self.aggregate_after_signature(p)
            })
            .collect()
    }
}

/// `verify_attestation_payload_status(store, data, block_payload_statuses)` on a store that
/// holds the voted block: the payload statuses are the execution client's verdicts fork choice
/// keeps beside it.
///
/// [spec]: gloas/p2p-interface.md#new-verify_attestation_payload_status
fn verify_attestation_payload_status<E: EthSpec>(
    fc: &ChainForkChoice<E>,
    data: &AttestationData,
) -> Result<(), AttestationGossipError> {
    let block_root = data.beacon_block_root;
    if fc.block_slot(&block_root) == Some(data.slot) && data.index != 0 {
        return Err(AttestationGossipError::SameSlotPayloadVote(block_root));
    }
    if data.index != 1 {
        return Ok(());
    }
    if !fc.is_payload_verified(&block_root) {
        return Err(AttestationGossipError::PayloadNotSeen(block_root));
    }
    match fc
        .execution_status(&block_root)
        .unwrap_or(ExecutionStatus::NotValidated)
    {
        ExecutionStatus::Valid => Ok(()),
        ExecutionStatus::NotValidated => Err(AttestationGossipError::PayloadOptimistic(block_root)),
        ExecutionStatus::Invalidated => Err(AttestationGossipError::PayloadInvalid(block_root)),
    }
}

fn unavailable(target: &Checkpoint) -> AttestationGossipError {
    AttestationGossipError::ShufflingUnavailable {
        epoch: target.epoch,
        root: target.root,
    }
}

/// The `aggregate_data_roots` key `(hash_tree_root(data), committee_index)` as one root.
fn aggregate_key(data_root: Root, committee_index: CommitteeIndex) -> Root {
    let mut bytes = [0u8; 40];
    bytes[..32].copy_from_slice(data_root.as_slice());
    bytes[32..].copy_from_slice(&committee_index.to_le_bytes());
    Root::from(ethereum_hashing::hash_fixed(&bytes))
}

/// A one-key signature set, `None` when the signature does not decode.
pub(crate) fn single_set(
    signature: &types::BLSSignature,
    key: bls::PublicKey,
    signing_root: Root,
) -> Option<SignatureSet> {
    let signature = bls::Signature::deserialize(signature.as_slice()).ok()?;
    Some(SignatureSet::new(signature, vec![key], signing_root.0))
}

/// The positions of the sets that fail: none when the batch holds, found one by one in
/// parallel when it does not. Timed as a BLS batch of `kind`.
pub(crate) fn bls_failures(
    kind: BlsBatchKind,
    sets: &[SignatureSet],
    pool: &rayon::ThreadPool,
) -> Vec<usize> {
    if sets.is_empty() {
        return Vec::new();
    }
    batch_metrics::timed(Some(kind), sets.len(), || {
        bls::verify_signature_sets_attributed(sets, pool)
            .err()
            .unwrap_or_default()
    })
}
