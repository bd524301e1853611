//! `sync_committee_{subnet_id}` and `sync_committee_contribution_and_proof`, checked against
//! the head state.
//!
//! [spec]: altair/p2p-interface.md#sync_committee_subnet_id,
//! altair/p2p-interface.md#sync_committee_contribution_and_proof

use std::sync::Arc;

use bls::PublicKey;
use state_processing::{CachedBeaconState, common::get_current_epoch};
use types::{
    BLSPubkey, EthSpec, ValidatorIndex,
    altair::{SignedContributionAndProof, SyncAggregatorSelectionData, SyncCommitteeMessage},
    signing, subnets,
};

use super::{Verdict, domain_at, is_sync_committee_aggregator, verify_one};
use crate::chain::BeaconChain;
use crate::events::{ChainEvent, PresetMessage};
use crate::internal_error::InternalError;

/// Why a sync committee message or contribution is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncCommitteeGossipError {
    /// [IGNORE] Not for the current slot.
    #[error("slot {0} is not the current slot")]
    NotCurrentSlot(u64),
    /// [REJECT] A validator index past the registry.
    #[error("validator index {0} out of range")]
    UnknownValidator(ValidatorIndex),
    /// [REJECT] The validator is not in the sync committee on this subnet.
    #[error("validator {validator} is not in the sync committee on subnet {subnet}")]
    WrongSubnet {
        /// The validator.
        validator: ValidatorIndex,
        /// The subnet it came on.
        subnet: u64,
    },
    /// [IGNORE] A message of this validator for this slot and subnet was seen.
    #[error("validator {0} already sent one for this slot and subnet")]
    AlreadySeen(ValidatorIndex),
    /// [REJECT] A signature is invalid.
    #[error("invalid signature")]
    InvalidSignature,
    /// [REJECT] The subcommittee index is out of range.
    #[error("subcommittee index {0} out of range")]
    SubcommitteeIndexOutOfRange(u64),
    /// [REJECT] A contribution without participants.
    #[error("contribution has no participants")]
    NoParticipants,
    /// [REJECT] The selection proof does not select the aggregator.
    #[error("validator {0} is not selected as sync aggregator")]
    NotAggregator(ValidatorIndex),
    /// [REJECT] The aggregator is not in the subcommittee.
    #[error("aggregator {0} is not in the subcommittee")]
    AggregatorNotInSubcommittee(ValidatorIndex),
    /// [IGNORE] A contribution whose bits cover these was seen.
    #[error("a superset of this contribution was seen")]
    ContributionKnown,
    /// [IGNORE] This aggregator's contribution for the slot and subcommittee was seen.
    #[error("aggregator {0} already contributed for this slot and subcommittee")]
    AggregatorAlreadyKnown(ValidatorIndex),
    /// [REJECT] The selection proof is invalid.
    #[error("invalid selection proof")]
    InvalidSelectionProof,
    /// [REJECT] The aggregator's signature is invalid.
    #[error("invalid aggregator signature")]
    InvalidAggregatorSignature,
    /// [IGNORE] The head state is of a sync committee period that does not know the committee
    /// signing at `slot` (a head more than a period behind, as while syncing).
    #[error("the head state at slot {state_slot} does not know the sync committee of slot {slot}")]
    PeriodUnknown {
        /// The message's slot.
        slot: u64,
        /// The head state's slot.
        state_slot: u64,
    },
    /// [IGNORE] The head state could not be read, or its sync committee does not fit the
    /// registry or the subnets (a state helper, a subnet computation, a
    /// [`SyncCommitteeStateError`]).
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

/// A sync committee of the head state that does not fit what the rules read from it: the
/// node's state, not the message, is at fault (a cause of [`SyncCommitteeGossipError::Internal`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncCommitteeStateError {
    /// A member's key is not the key of a validator of the registry.
    #[error("the key of sync committee member {position} is of no validator")]
    UnknownMemberKey {
        /// The member's position in the committee.
        position: usize,
    },
    /// The committee has fewer members than its subcommittees take.
    #[error("a sync committee of {members} members has no subcommittee {subcommittee}")]
    TooShort {
        /// The committee's members.
        members: usize,
        /// The subcommittee asked for.
        subcommittee: u64,
    },
}

impl SyncCommitteeGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::NotCurrentSlot(_)
            | Self::AlreadySeen(_)
            | Self::ContributionKnown
            | Self::AggregatorAlreadyKnown(_)
            | Self::PeriodUnknown { .. }
            | Self::Internal(_) => Verdict::Ignore,
            _ => Verdict::Reject,
        }
    }
}

/// A sync committee message that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedSyncCommitteeMessage {
    /// The message.
    pub message: SyncCommitteeMessage,
    /// The subnet it was validated on.
    pub subnet_id: u64,
}

/// A sync committee contribution that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedSyncContribution<E: EthSpec> {
    /// The signed contribution.
    pub contribution: SignedContributionAndProof<E>,
}

fn internal(e: impl std::error::Error + Send + Sync + 'static) -> SyncCommitteeGossipError {
    SyncCommitteeGossipError::Internal(InternalError::new(e))
}

/// The sync committee whose members sign at `slot`, as validator indices in committee order.
///
/// Members assigned to a slot sign for the slot before it, so the committee signing at `slot`
/// is the one of `slot + 1`'s period: `state`'s current committee when that is `state`'s
/// period, its next committee when it is the period after. A state from any other period (a
/// head behind by more than a period, as while syncing) cannot say who is in the committee:
/// [`SyncCommitteeGossipError::PeriodUnknown`], an IGNORE, since a REJECT would have peers
/// that sent a valid message penalised, and a syncing node ban its honest peers.
///
/// [spec]: altair/p2p-interface.md#new-get_sync_subcommittee_pubkeys
fn sync_committee_members<E: EthSpec>(
    chain: &BeaconChain<E>,
    state: &CachedBeaconState<E>,
    slot: u64,
) -> Result<Arc<[ValidatorIndex]>, SyncCommitteeGossipError> {
    let view = state.view().map_err(internal)?;
    let period = |epoch: u64| epoch / E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
    let state_period = period(get_current_epoch(&view));
    let signing_period = period((slot + 1) / E::slots_per_epoch());
    let committee = if signing_period == state_period {
        view.current_sync_committee
    } else if signing_period == state_period + 1 {
        view.next_sync_committee
    } else {
        return Err(SyncCommitteeGossipError::PeriodUnknown {
            slot,
            state_slot: *view.slot,
        });
    };
    let keys: &[BLSPubkey] = &committee.pubkeys;
    let mut cache = chain.sync_committee_cache.lock();
    if let Some((cached_keys, indices)) = cache.as_ref()
        && **cached_keys == *keys
    {
        return Ok(indices.clone());
    }
    let mut caches = state.caches.clone();
    let indices: Arc<[ValidatorIndex]> = keys
        .iter()
        .enumerate()
        .map(|(position, k)| {
            caches
                .validator_index(&view, &bls::PublicKeyBytes(k.0))
                .ok_or_else(|| internal(SyncCommitteeStateError::UnknownMemberKey { position }))
        })
        .collect::<Result<Vec<_>, _>>()?
        .into();
    *cache = Some((keys.to_vec().into(), indices.clone()));
    Ok(indices)
}

impl<E: EthSpec> BeaconChain<E> {
    /// `validate_sync_committee_message_gossip(seen, store, state, sync_committee_message,
    /// current_time_ms, subnet_id)`.
    ///
    /// [spec]: altair/p2p-interface.md#sync_committee_subnet_id
    pub fn verify_sync_committee_message_for_gossip(
        &self,
        message: SyncCommitteeMessage,
        subnet_id: u64,
        current_time_ms: u64,
    ) -> Result<VerifiedSyncCommitteeMessage, SyncCommitteeGossipError> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        if !self.is_within_slot_range(message.slot, 0, current_time_ms) {
            return Err(SyncCommitteeGossipError::NotCurrentSlot(message.slot));
        }
        let head = self.head();
        let index = message.validator_index;
        let members = sync_committee_members(self, &head.state, message.slot)?;
        if index >= crate::gossip::validator_count(&head.state) {
            return Err(SyncCommitteeGossipError::UnknownValidator(index));
        }
        let positions = members
            .iter()
            .enumerate()
            .filter(|(_, m)| **m == index)
            .map(|(i, _)| i as u64);
        let valid_subnets =
            subnets::compute_subnets_for_sync_committee::<E>(positions).map_err(internal)?;
        if !valid_subnets.contains(&subnet_id) {
            return Err(SyncCommitteeGossipError::WrongSubnet {
                validator: index,
                subnet: subnet_id,
            });
        }
        let key = (index, subnet_id);
        if self
            .observed
            .lock()
            .sync_messages
            .is_known(message.slot, &key)
            .unwrap_or(false)
        {
            return Err(SyncCommitteeGossipError::AlreadySeen(index));
        }
        let pubkey = self.sync_pubkey(&head.state, index)?;
        let domain = domain_at(
            self.spec(),
            self.genesis_validators_root(),
            signing::DOMAIN_SYNC_COMMITTEE,
            message.slot / E::slots_per_epoch(),
        );
        let root = signing::compute_signing_root(&message.beacon_block_root, domain);
        if !verify_one(&pubkey, root, &message.signature) {
            return Err(SyncCommitteeGossipError::InvalidSignature);
        }
        if self
            .observed
            .lock()
            .sync_messages
            .observe(message.slot, key)
            .unwrap_or(false)
        {
            return Err(SyncCommitteeGossipError::AlreadySeen(index));
        }
        Ok(VerifiedSyncCommitteeMessage { message, subnet_id })
    }

    fn sync_pubkey(
        &self,
        state: &CachedBeaconState<E>,
        index: ValidatorIndex,
    ) -> Result<PublicKey, SyncCommitteeGossipError> {
        let view = state.view().map_err(internal)?;
        state
            .caches
            .pubkey(&view, index)
            .map_err(|_| SyncCommitteeGossipError::InvalidSignature)
    }

    /// `validate_sync_committee_contribution_and_proof_gossip(seen, store, state,
    /// signed_contribution_and_proof, current_time_ms)`.
    ///
    /// [spec]: altair/p2p-interface.md#sync_committee_contribution_and_proof
    pub fn verify_sync_contribution_for_gossip(
        &self,
        signed: SignedContributionAndProof<E>,
        current_time_ms: u64,
    ) -> Result<VerifiedSyncContribution<E>, SyncCommitteeGossipError> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let message = &signed.message;
        let contribution = &message.contribution;
        let slot = contribution.slot;
        if !self.is_within_slot_range(slot, 0, current_time_ms) {
            return Err(SyncCommitteeGossipError::NotCurrentSlot(slot));
        }
        let subcommittee = contribution.subcommittee_index;
        if subcommittee >= subnets::SYNC_COMMITTEE_SUBNET_COUNT {
            return Err(SyncCommitteeGossipError::SubcommitteeIndexOutOfRange(
                subcommittee,
            ));
        }
        if contribution.aggregation_bits.num_set_bits() == 0 {
            return Err(SyncCommitteeGossipError::NoParticipants);
        }
        let aggregator = message.aggregator_index;
        if !is_sync_committee_aggregator::<E>(&message.selection_proof) {
            return Err(SyncCommitteeGossipError::NotAggregator(aggregator));
        }
        let head = self.head();
        let members = sync_committee_members(self, &head.state, slot)?;
        if aggregator >= crate::gossip::validator_count(&head.state) {
            return Err(SyncCommitteeGossipError::UnknownValidator(aggregator));
        }
        let size = members.len() / subnets::SYNC_COMMITTEE_SUBNET_COUNT as usize;
        let start = subcommittee as usize * size;
        let subcommittee_members = members.get(start..start + size).ok_or_else(|| {
            internal(SyncCommitteeStateError::TooShort {
                members: members.len(),
                subcommittee,
            })
        })?;
        if !subcommittee_members.contains(&aggregator) {
            return Err(SyncCommitteeGossipError::AggregatorNotInSubcommittee(
                aggregator,
            ));
        }
        let bits_key = contribution_key(contribution.beacon_block_root, subcommittee);
        let bits = contribution.aggregation_bits.as_slice().to_vec();
        {
            let observed = self.observed.lock();
            if observed
                .sync_contribution_bits
                .is_known_subset(slot, &bits_key, &bits)
                .unwrap_or(false)
            {
                return Err(SyncCommitteeGossipError::ContributionKnown);
            }
            if observed
                .sync_aggregators
                .is_known(slot, &(aggregator, subcommittee))
                .unwrap_or(false)
            {
                return Err(SyncCommitteeGossipError::AggregatorAlreadyKnown(aggregator));
            }
        }
        let epoch = slot / E::slots_per_epoch();
        let gvr = self.genesis_validators_root();
        let key = self.sync_pubkey(&head.state, aggregator)?;
        let selection = SyncAggregatorSelectionData {
            slot,
            subcommittee_index: subcommittee,
        };
        let domain = domain_at(
            self.spec(),
            gvr,
            signing::DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
            epoch,
        );
        if !verify_one(
            &key,
            signing::compute_signing_root(&selection, domain),
            &message.selection_proof,
        ) {
            return Err(SyncCommitteeGossipError::InvalidSelectionProof);
        }
        let domain = domain_at(
            self.spec(),
            gvr,
            signing::DOMAIN_CONTRIBUTION_AND_PROOF,
            epoch,
        );
        if !verify_one(
            &key,
            signing::compute_signing_root(message, domain),
            &signed.signature,
        ) {
            return Err(SyncCommitteeGossipError::InvalidAggregatorSignature);
        }
        let participants = subcommittee_members
            .iter()
            .zip(contribution.aggregation_bits.iter())
            .filter(|(_, bit)| *bit)
            .map(|(&i, _)| self.sync_pubkey(&head.state, i))
            .collect::<Result<Vec<_>, _>>()?;
        let domain = domain_at(self.spec(), gvr, signing::DOMAIN_SYNC_COMMITTEE, epoch);
        let root = signing::compute_signing_root(&contribution.beacon_block_root, domain);
        let valid = bls::Signature::deserialize(contribution.signature.as_slice())
            .is_ok_and(|s| bls::eth_fast_aggregate_verify(&participants, root.as_slice(), &s));
        if !valid {
            return Err(SyncCommitteeGossipError::InvalidSignature);
        }
        {
            let mut observed = self.observed.lock();
            if observed
                .sync_aggregators
                .observe(slot, (aggregator, subcommittee))
                .unwrap_or(false)
            {
                return Err(SyncCommitteeGossipError::AggregatorAlreadyKnown(aggregator));
            }
            let _ = observed
                .sync_contribution_bits
                .observe(slot, bits_key, &bits);
        }
        self.events().publish(ChainEvent::ContributionAndProof {
            aggregator_index: aggregator,
            slot,
            contribution: PresetMessage::new(signed.clone()),
        });
        Ok(VerifiedSyncContribution {
            contribution: signed,
        })
    }
}

/// The `sync_contribution_data` key `(slot, beacon_block_root, subcommittee_index)` without the
/// slot (the cache is per slot) as one root.
fn contribution_key(block_root: types::Root, subcommittee: u64) -> types::Root {
    let mut bytes = [0u8; 40];
    bytes[..32].copy_from_slice(block_root.as_slice());
    bytes[32..].copy_from_slice(&subcommittee.to_le_bytes());
    types::Root::from(ethereum_hashing::hash_fixed(&bytes))
}
