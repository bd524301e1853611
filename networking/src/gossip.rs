//! Gossipsub as the consensus p2p spec configures it: the message id, snappy block compression
//! with a decompressed-size cap, typed messages per topic, mesh parameters and peer scoring.
//!
//! [spec]: phase0/p2p-interface.md#the-gossip-domain-gossipsub, altair/p2p-interface.md#the-gossip-domain-gossipsub

use std::sync::Arc;
use std::time::Duration;

use libp2p::gossipsub::{
    self, AllowAllSubscriptionFilter, ConfigBuilder, MaxCountSubscriptionFilter, MessageId,
    PeerScoreParams, PeerScoreThresholds, TopicHash, TopicScoreParams, ValidationMode,
};
use sha2::{Digest, Sha256};
use ssz::{Decode, Encode};
use types::{
    BlobSidecar, ChainSpec, DataColumnSidecar, EthSpec, ForkName, LightClientFinalityUpdate,
    LightClientOptimisticUpdate, SignedBeaconBlock, altair, capella, electra, gloas, phase0,
};

use crate::fork_context::ForkContext;
use crate::rpc::codec::max_compressed_len;
use crate::topics::{GossipKind, GossipTopic};

/// Room for gossipsub's own framing on top of one maximal message.
///
/// [spec]: phase0/p2p-interface.md#why-is-the-message-size-defined-in-terms-of-application-payload
pub const GOSSIP_FRAME_OVERHEAD: usize = 1024;

/// `max_compressed_len(MAX_PAYLOAD_SIZE) + 1024`: the largest gossipsub frame accepted.
pub fn max_gossip_transmit_size(spec: &ChainSpec) -> usize {
    max_compressed_len(spec.max_payload_size as usize) + GOSSIP_FRAME_OVERHEAD
}

/// Why a gossip payload could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum GossipDecodeError {
    /// The data is not a valid snappy block.
    #[error("invalid snappy block: {0}")]
    InvalidSnappy(String),
    /// The decompressed size exceeds `MAX_PAYLOAD_SIZE`.
    #[error("decompressed size {len} exceeds the limit of {max}")]
    TooLarge {
        /// The decompressed length the snappy header declares.
        len: usize,
        /// The largest decompressed size allowed.
        max: usize,
    },
    /// The topic string is not an eth2 topic.
    #[error(transparent)]
    Topic(#[from] crate::topics::TopicParseError),
    /// The topic's fork digest is not one of this chain's.
    #[error("unknown fork digest in topic")]
    UnknownDigest,
    /// The topic does not exist at the fork its digest names, or Arbor does not decode it there.
    #[error("topic {0} is not supported at fork {1}")]
    UnsupportedAtFork(GossipKind, ForkName),
    /// The payload is larger than the spec's bound for the topic's type (Gloas's type-specific
    /// SSZ bounds, for types whose progressive lists have no list limit to bound them).
    ///
    /// [spec]: gloas/p2p-interface.md#type-specific-ssz-bounds
    #[error("{kind} message of {len} bytes exceeds the type's bound of {max}")]
    TooLargeForType {
        /// The topic.
        kind: GossipKind,
        /// The decompressed length.
        len: usize,
        /// The type's bound.
        max: u64,
    },
    /// The payload is not valid SSZ of the topic's type.
    #[error("invalid ssz: {0:?}")]
    Ssz(ssz::DecodeError),
}

impl From<ssz::DecodeError> for GossipDecodeError {
    fn from(e: ssz::DecodeError) -> Self {
        GossipDecodeError::Ssz(e)
    }
}

/// Decompresses a snappy block, refusing before allocation anything larger than `max`.
pub fn decompress_snappy(data: &[u8], max: usize) -> Result<Vec<u8>, GossipDecodeError> {
    let len = snap::raw::decompress_len(data)
        .map_err(|e| GossipDecodeError::InvalidSnappy(e.to_string()))?;
    if len > max {
        return Err(GossipDecodeError::TooLarge { len, max });
    }
    snap::raw::Decoder::new()
        .decompress_vec(data)
        .map_err(|e| GossipDecodeError::InvalidSnappy(e.to_string()))
}

/// Compresses a payload into one snappy block.
pub fn compress_snappy(data: &[u8]) -> Vec<u8> {
    snap::raw::Encoder::new()
        .compress_vec(data)
        .expect("snappy compresses any input shorter than 2^32 - 1 bytes")
}

/// The gossipsub `message-id` of a message on `topic` carrying `data` (snappy-compressed).
///
/// From Altair on the topic is hashed in; messages on phase0-digest topics use the phase0 id.
///
/// [spec]: altair/p2p-interface.md#topics-and-messages, phase0/p2p-interface.md#topics-and-messages
pub fn compute_message_id(spec: &ChainSpec, fork: ForkName, topic: &str, data: &[u8]) -> [u8; 20] {
    let max = spec.max_payload_size as usize;
    let (domain, payload) = match decompress_snappy(data, max) {
        Ok(decompressed) => (
            spec.message_domain_valid_snappy,
            std::borrow::Cow::Owned(decompressed),
        ),
        Err(_) => (
            spec.message_domain_invalid_snappy,
            std::borrow::Cow::Borrowed(data),
        ),
    };
    let mut hasher = Sha256::new();
    hasher.update(domain.as_slice());
    if fork.altair_enabled() {
        hasher.update((topic.len() as u64).to_le_bytes());
        hasher.update(topic.as_bytes());
    }
    hasher.update(payload.as_ref());
    let digest = hasher.finalize();
    let mut id = [0u8; 20];
    id.copy_from_slice(&digest[..20]);
    id
}

/// A decoded gossip message of a Fulu or Gloas topic.
#[derive(Debug, Clone, PartialEq)]
pub enum PubsubMessage<E: EthSpec> {
    /// `beacon_block`.
    BeaconBlock(Arc<SignedBeaconBlock<E>>),
    /// `beacon_aggregate_and_proof` (Electra layout: Electra and Fulu digests).
    AggregateAndProof(Box<electra::SignedAggregateAndProof<E>>),
    /// `beacon_aggregate_and_proof` at a Gloas digest (its attestation's progressive bits).
    GloasAggregateAndProof(Box<gloas::SignedAggregateAndProof<E>>),
    /// `beacon_attestation_{subnet_id}` (Electra `SingleAttestation`).
    Attestation(u64, Box<electra::SingleAttestation>),
    /// `voluntary_exit`.
    VoluntaryExit(Box<phase0::SignedVoluntaryExit>),
    /// `proposer_slashing`.
    ProposerSlashing(Box<phase0::ProposerSlashing>),
    /// `attester_slashing` (Electra layout: Electra and Fulu digests).
    AttesterSlashing(Box<electra::AttesterSlashing<E>>),
    /// `attester_slashing` at a Gloas digest (progressive attesting indices).
    GloasAttesterSlashing(Box<gloas::AttesterSlashing>),
    /// `sync_committee_contribution_and_proof`.
    SyncCommitteeContribution(Box<altair::SignedContributionAndProof<E>>),
    /// `sync_committee_{subnet_id}`.
    SyncCommitteeMessage(u64, Box<altair::SyncCommitteeMessage>),
    /// `bls_to_execution_change`.
    BlsToExecutionChange(Box<capella::SignedBLSToExecutionChange>),
    /// `blob_sidecar_{subnet_id}`.
    BlobSidecar(u64, Arc<BlobSidecar<E>>),
    /// `data_column_sidecar_{subnet_id}`.
    DataColumnSidecar(u64, Arc<DataColumnSidecar<E>>),
    /// `light_client_finality_update`.
    LightClientFinalityUpdate(Arc<LightClientFinalityUpdate<E>>),
    /// `light_client_optimistic_update`.
    LightClientOptimisticUpdate(Arc<LightClientOptimisticUpdate<E>>),
    /// `execution_payload_bid` (Gloas).
    ExecutionPayloadBid(Arc<gloas::SignedExecutionPayloadBid>),
    /// `execution_payload` (Gloas): a signed execution payload envelope.
    ExecutionPayload(Arc<gloas::SignedExecutionPayloadEnvelope<E>>),
    /// `payload_attestation_message` (Gloas).
    PayloadAttestationMessage(Box<gloas::PayloadAttestationMessage>),
    /// `proposer_preferences` (Gloas).
    ProposerPreferences(Arc<gloas::SignedProposerPreferences>),
}

impl<E: EthSpec> PubsubMessage<E> {
    /// The slot whose epoch names the digest of the topic this message is published on, for
    /// the messages whose digest need not be the current one: a light-client update's
    /// `attested_header.beacon.slot`, and the slot of a block, a data column or an aggregate,
    /// whose container is of that slot's fork (the receiver decodes by the topic's digest).
    ///
    /// [spec]: altair/light-client/p2p-interface.md#light_client_finality_update
    pub fn topic_slot(&self) -> Option<types::Slot> {
        match self {
            PubsubMessage::LightClientFinalityUpdate(update) => Some(
                crate::rpc::light_client_finality_update_attested_slot(update),
            ),
            PubsubMessage::LightClientOptimisticUpdate(update) => Some(
                crate::rpc::light_client_optimistic_update_attested_slot(update),
            ),
            // Containers whose type is their slot's fork's: a Fulu block's columns
            // reconstructed, or an Electra aggregate made, just after the Gloas boundary go
            // out on Fulu's digest, whose topic decodes them as what they are (on Gloas's they
            // were undecodable, and the sender was scored down for it).
            PubsubMessage::BeaconBlock(block) => Some(block.slot()),
            PubsubMessage::DataColumnSidecar(_, sidecar) => Some(sidecar.slot()),
            PubsubMessage::AggregateAndProof(aggregate) => {
                Some(aggregate.message.aggregate.data.slot)
            }
            PubsubMessage::GloasAggregateAndProof(aggregate) => {
                Some(aggregate.message.aggregate.data.slot)
            }
            _ => None,
        }
    }

    /// The topic kind this message is published on.
    pub fn kind(&self) -> GossipKind {
        match self {
            PubsubMessage::BeaconBlock(_) => GossipKind::BeaconBlock,
            PubsubMessage::AggregateAndProof(_) | PubsubMessage::GloasAggregateAndProof(_) => {
                GossipKind::BeaconAggregateAndProof
            }
            PubsubMessage::Attestation(subnet, _) => GossipKind::Attestation(*subnet),
            PubsubMessage::VoluntaryExit(_) => GossipKind::VoluntaryExit,
            PubsubMessage::ProposerSlashing(_) => GossipKind::ProposerSlashing,
            PubsubMessage::AttesterSlashing(_) | PubsubMessage::GloasAttesterSlashing(_) => {
                GossipKind::AttesterSlashing
            }
            PubsubMessage::SyncCommitteeContribution(_) => {
                GossipKind::SyncCommitteeContributionAndProof
            }
            PubsubMessage::SyncCommitteeMessage(subnet, _) => {
                GossipKind::SyncCommitteeMessage(*subnet)
            }
            PubsubMessage::BlsToExecutionChange(_) => GossipKind::BlsToExecutionChange,
            PubsubMessage::BlobSidecar(subnet, _) => GossipKind::BlobSidecar(*subnet),
            PubsubMessage::DataColumnSidecar(subnet, _) => GossipKind::DataColumnSidecar(*subnet),
            PubsubMessage::LightClientFinalityUpdate(_) => GossipKind::LightClientFinalityUpdate,
            PubsubMessage::LightClientOptimisticUpdate(_) => {
                GossipKind::LightClientOptimisticUpdate
            }
            PubsubMessage::ExecutionPayloadBid(_) => GossipKind::ExecutionPayloadBid,
            PubsubMessage::ExecutionPayload(_) => GossipKind::ExecutionPayload,
            PubsubMessage::PayloadAttestationMessage(_) => GossipKind::PayloadAttestationMessage,
            PubsubMessage::ProposerPreferences(_) => GossipKind::ProposerPreferences,
        }
    }

    /// The SSZ bytes of the message (before compression).
    pub fn as_ssz_bytes(&self) -> Vec<u8> {
        match self {
            PubsubMessage::BeaconBlock(m) => m.as_ssz_bytes(),
            PubsubMessage::AggregateAndProof(m) => m.as_ssz_bytes(),
            PubsubMessage::GloasAggregateAndProof(m) => m.as_ssz_bytes(),
            PubsubMessage::Attestation(_, m) => m.as_ssz_bytes(),
            PubsubMessage::VoluntaryExit(m) => m.as_ssz_bytes(),
            PubsubMessage::ProposerSlashing(m) => m.as_ssz_bytes(),
            PubsubMessage::AttesterSlashing(m) => m.as_ssz_bytes(),
            PubsubMessage::GloasAttesterSlashing(m) => m.as_ssz_bytes(),
            PubsubMessage::SyncCommitteeContribution(m) => m.as_ssz_bytes(),
            PubsubMessage::SyncCommitteeMessage(_, m) => m.as_ssz_bytes(),
            PubsubMessage::BlsToExecutionChange(m) => m.as_ssz_bytes(),
            PubsubMessage::BlobSidecar(_, m) => m.as_ssz_bytes(),
            PubsubMessage::DataColumnSidecar(_, m) => m.as_ssz_bytes(),
            PubsubMessage::LightClientFinalityUpdate(m) => m.as_ssz_bytes(),
            PubsubMessage::LightClientOptimisticUpdate(m) => m.as_ssz_bytes(),
            PubsubMessage::ExecutionPayloadBid(m) => m.as_ssz_bytes(),
            PubsubMessage::ExecutionPayload(m) => m.as_ssz_bytes(),
            PubsubMessage::PayloadAttestationMessage(m) => m.as_ssz_bytes(),
            PubsubMessage::ProposerPreferences(m) => m.as_ssz_bytes(),
        }
    }

    /// The compressed payload published on the wire.
    pub fn encode(&self) -> Vec<u8> {
        compress_snappy(&self.as_ssz_bytes())
    }

    /// Decodes a message received on `topic` at `fork` from its decompressed SSZ bytes.
    pub fn decode(kind: GossipKind, fork: ForkName, ssz: &[u8]) -> Result<Self, GossipDecodeError> {
        if !kind.exists_at(fork) {
            return Err(GossipDecodeError::UnsupportedAtFork(kind, fork));
        }
        let electra_only = |kind| {
            if fork.electra_enabled() {
                Ok(())
            } else {
                Err(GossipDecodeError::UnsupportedAtFork(kind, fork))
            }
        };
        // Gloas's type-specific bounds, for types whose progressive lists have no list limit.
        let bounded = |max: u64| {
            if ssz.len() as u64 > max {
                Err(GossipDecodeError::TooLargeForType {
                    kind,
                    len: ssz.len(),
                    max,
                })
            } else {
                Ok(())
            }
        };
        Ok(match kind {
            GossipKind::BeaconBlock => PubsubMessage::BeaconBlock(Arc::new(
                SignedBeaconBlock::from_ssz_bytes_by_fork(ssz, fork)?,
            )),
            GossipKind::BeaconAggregateAndProof if fork.gloas_enabled() => {
                bounded(E::MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE)?;
                PubsubMessage::GloasAggregateAndProof(Box::new(
                    gloas::SignedAggregateAndProof::from_ssz_bytes(ssz)?,
                ))
            }
            GossipKind::BeaconAggregateAndProof => {
                electra_only(kind)?;
                PubsubMessage::AggregateAndProof(Box::new(
                    electra::SignedAggregateAndProof::from_ssz_bytes(ssz)?,
                ))
            }
            GossipKind::Attestation(subnet) => {
                electra_only(kind)?;
                PubsubMessage::Attestation(
                    subnet,
                    Box::new(electra::SingleAttestation::from_ssz_bytes(ssz)?),
                )
            }
            GossipKind::VoluntaryExit => PubsubMessage::VoluntaryExit(Box::new(
                phase0::SignedVoluntaryExit::from_ssz_bytes(ssz)?,
            )),
            GossipKind::ProposerSlashing => PubsubMessage::ProposerSlashing(Box::new(
                phase0::ProposerSlashing::from_ssz_bytes(ssz)?,
            )),
            GossipKind::AttesterSlashing if fork.gloas_enabled() => {
                bounded(E::MAX_ATTESTER_SLASHING_SIZE)?;
                PubsubMessage::GloasAttesterSlashing(Box::new(
                    gloas::AttesterSlashing::from_ssz_bytes(ssz)?,
                ))
            }
            GossipKind::AttesterSlashing => {
                electra_only(kind)?;
                PubsubMessage::AttesterSlashing(Box::new(
                    electra::AttesterSlashing::from_ssz_bytes(ssz)?,
                ))
            }
            GossipKind::SyncCommitteeContributionAndProof => {
                PubsubMessage::SyncCommitteeContribution(Box::new(
                    altair::SignedContributionAndProof::from_ssz_bytes(ssz)?,
                ))
            }
            GossipKind::SyncCommitteeMessage(subnet) => PubsubMessage::SyncCommitteeMessage(
                subnet,
                Box::new(altair::SyncCommitteeMessage::from_ssz_bytes(ssz)?),
            ),
            GossipKind::BlsToExecutionChange => PubsubMessage::BlsToExecutionChange(Box::new(
                capella::SignedBLSToExecutionChange::from_ssz_bytes(ssz)?,
            )),
            GossipKind::BlobSidecar(subnet) => PubsubMessage::BlobSidecar(
                subnet,
                Arc::new(BlobSidecar::from_ssz_bytes_by_fork(ssz, fork)?),
            ),
            GossipKind::DataColumnSidecar(subnet) => PubsubMessage::DataColumnSidecar(
                subnet,
                Arc::new(DataColumnSidecar::from_ssz_bytes_by_fork(ssz, fork)?),
            ),
            GossipKind::LightClientFinalityUpdate => {
                PubsubMessage::LightClientFinalityUpdate(Arc::new(
                    LightClientFinalityUpdate::from_ssz_bytes_by_fork(ssz, fork)?,
                ))
            }
            GossipKind::LightClientOptimisticUpdate => {
                PubsubMessage::LightClientOptimisticUpdate(Arc::new(
                    LightClientOptimisticUpdate::from_ssz_bytes_by_fork(ssz, fork)?,
                ))
            }
            // `exists_at` above admits these at Gloas digests only.
            GossipKind::ExecutionPayloadBid => {
                bounded(E::MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE)?;
                PubsubMessage::ExecutionPayloadBid(Arc::new(
                    gloas::SignedExecutionPayloadBid::from_ssz_bytes(ssz)?,
                ))
            }
            GossipKind::ExecutionPayload => PubsubMessage::ExecutionPayload(Arc::new(
                gloas::SignedExecutionPayloadEnvelope::from_ssz_bytes(ssz)?,
            )),
            GossipKind::PayloadAttestationMessage => PubsubMessage::PayloadAttestationMessage(
                Box::new(gloas::PayloadAttestationMessage::from_ssz_bytes(ssz)?),
            ),
            GossipKind::ProposerPreferences => PubsubMessage::ProposerPreferences(Arc::new(
                gloas::SignedProposerPreferences::from_ssz_bytes(ssz)?,
            )),
        })
    }

    /// Decodes a raw gossipsub message: parses the topic, maps its digest to a fork, caps and
    /// decompresses the payload and decodes it.
    pub fn decode_raw(
        topic: &str,
        data: &[u8],
        fork_context: &ForkContext,
    ) -> Result<(GossipTopic, Self), GossipDecodeError> {
        let topic: GossipTopic = topic.parse()?;
        let fork = fork_context
            .fork_of_digest(topic.digest())
            .ok_or(GossipDecodeError::UnknownDigest)?;
        let ssz = decompress_snappy(data, fork_context.spec().max_payload_size as usize)?;
        Ok((topic, Self::decode(topic.kind, fork, &ssz)?))
    }
}

/// Topics a peer may be subscribed to at once, and may announce in one RPC: every Fulu topic
/// (a supernode with every attestation subnet holds about 205) on several fork digests at once
/// (the two around a fork or BPO boundary), with room. gossipsub's own default (100 since
/// 0.50) drops the whole greeting of a supernode, whose 128 column subnets alone exceed it.
pub const MAX_SUBSCRIBED_TOPICS_PER_PEER: usize = 1024;

/// The most bytes of subscriptions and control messages one RPC may carry. gossipsub counts a
/// peer's subscriptions against this limit (16 KiB by default, about 280 topics) and drops an
/// RPC over it whole: a supernode's greeting on two digests (about 410 topics, 23 KiB) would be
/// lost and its topics never learned, and so would an IHAVE of a few thousand message ids
/// (gossipsub's `max_ihave_length` is 5000: 110 KiB of 20-byte ids) with the messages sent
/// beside it. Room for both: [`MAX_SUBSCRIBED_TOPICS_PER_PEER`] topics of the longest name
/// (`/eth2/{digest}/sync_committee_contribution_and_proof/ssz_snappy`, 64 bytes, with its
/// framing: under 96 KiB) or a full IHAVE. An RPC as a whole stays bounded by
/// [`max_gossip_transmit_size`].
pub const MAX_CONTROL_MESSAGE_SIZE: usize = 256 * 1024;

/// The node's gossipsub behaviour: messages as they come, subscriptions through
/// [`subscription_filter`].
pub type GossipBehaviour = gossipsub::Behaviour<
    gossipsub::IdentityTransform,
    MaxCountSubscriptionFilter<AllowAllSubscriptionFilter>,
>;

/// The subscriptions a peer may announce: any topic, at most [`MAX_SUBSCRIBED_TOPICS_PER_PEER`]
/// of them (at once, and per RPC).
pub fn subscription_filter() -> MaxCountSubscriptionFilter<AllowAllSubscriptionFilter> {
    MaxCountSubscriptionFilter {
        filter: AllowAllSubscriptionFilter {},
        max_subscribed_topics: MAX_SUBSCRIBED_TOPICS_PER_PEER,
        max_subscriptions_per_request: MAX_SUBSCRIBED_TOPICS_PER_PEER,
    }
}

/// The gossipsub configuration of the consensus p2p spec.
///
/// [spec]: phase0/p2p-interface.md#the-gossip-domain-gossipsub
pub fn gossipsub_config(
    fork_context: Arc<ForkContext>,
    slots_per_epoch: u64,
) -> Result<gossipsub::Config, String> {
    let spec = fork_context.spec();
    let seen_ttl_secs = spec.slot_duration_ms * slots_per_epoch * 2 / 1000;
    let id_context = fork_context.clone();
    ConfigBuilder::default()
        .mesh_n(8)
        .mesh_n_low(6)
        .mesh_n_high(12)
        .gossip_lazy(6)
        .heartbeat_interval(Duration::from_millis(700))
        .fanout_ttl(Duration::from_secs(60))
        .history_length(6)
        .history_gossip(3)
        .duplicate_cache_time(Duration::from_secs(seen_ttl_secs.max(1)))
        .max_transmit_size(max_gossip_transmit_size(spec))
        // StrictNoSign: no `from`, `seqno`, `signature` or `key`.
        .validation_mode(ValidationMode::Anonymous)
        .validate_messages()
        .idontwant_message_size_threshold(1000)
        .max_control_message_size(MAX_CONTROL_MESSAGE_SIZE)
        .message_id_fn(move |message: &gossipsub::Message| {
            let topic = message.topic.as_str();
            let fork = topic
                .parse::<GossipTopic>()
                .ok()
                .and_then(|t| id_context.fork_of_digest(t.digest()))
                .unwrap_or(ForkName::LATEST);
            MessageId::from(
                compute_message_id(id_context.spec(), fork, topic, &message.data).to_vec(),
            )
        })
        .build()
        .map_err(|e| e.to_string())
}

/// Peer-score thresholds: below `graylist` a peer's messages are ignored.
pub fn peer_score_thresholds() -> PeerScoreThresholds {
    PeerScoreThresholds {
        gossip_threshold: -4000.0,
        publish_threshold: -8000.0,
        graylist_threshold: -16000.0,
        accept_px_threshold: 100.0,
        opportunistic_graft_threshold: 5.0,
    }
}

/// Global peer-score parameters; per-topic parameters are added on subscription
/// ([`topic_score_params`]).
pub fn peer_score_params(slot: Duration, slots_per_epoch: u32) -> PeerScoreParams {
    let epoch = slot * slots_per_epoch;
    PeerScoreParams {
        topic_score_cap: 53.75,
        app_specific_weight: 1.0,
        ip_colocation_factor_weight: -53.75,
        ip_colocation_factor_threshold: 8.0,
        behaviour_penalty_weight: -15.9,
        behaviour_penalty_threshold: 6.0,
        behaviour_penalty_decay: decay_factor(10 * epoch, slot),
        decay_interval: slot,
        decay_to_zero: 0.01,
        retain_score: 100 * epoch,
        ..PeerScoreParams::default()
    }
}

/// The fraction left after one `interval` when a counter should decay to 1% over `half_life`-ish
/// `period`.
fn decay_factor(period: Duration, interval: Duration) -> f64 {
    let ticks = period.as_secs_f64() / interval.as_secs_f64().max(f64::EPSILON);
    0.01f64.powf(1.0 / ticks.max(1.0))
}

/// Per-topic score parameters: invalid messages are the dominant penalty (a garbage peer falls
/// below the graylist threshold after a handful), delivery rewards are kept small, and mesh
/// delivery penalties are off so small or quiet networks do not punish honest peers.
pub fn topic_score_params(
    kind: GossipKind,
    slot: Duration,
    slots_per_epoch: u32,
) -> TopicScoreParams {
    let epoch = slot * slots_per_epoch;
    let weight = match kind {
        GossipKind::BeaconBlock => 0.5,
        GossipKind::BeaconAggregateAndProof => 0.5,
        GossipKind::DataColumnSidecar(_) => 0.1,
        GossipKind::ExecutionPayload => 0.5,
        GossipKind::ExecutionPayloadBid | GossipKind::PayloadAttestationMessage => 0.1,
        GossipKind::Attestation(_) | GossipKind::SyncCommitteeMessage(_) => 0.05,
        _ => 0.05,
    };
    TopicScoreParams {
        topic_weight: weight,
        time_in_mesh_weight: 0.03,
        time_in_mesh_quantum: slot,
        time_in_mesh_cap: 300.0,
        first_message_deliveries_weight: 1.0,
        first_message_deliveries_decay: decay_factor(20 * epoch, slot),
        first_message_deliveries_cap: 20.0,
        mesh_message_deliveries_weight: 0.0,
        mesh_failure_penalty_weight: 0.0,
        invalid_message_deliveries_weight: -2000.0 / weight,
        invalid_message_deliveries_decay: decay_factor(50 * epoch, slot),
        ..TopicScoreParams::default()
    }
}

/// The gossipsub topic hash of an eth2 topic.
pub fn topic_hash(topic: &GossipTopic) -> TopicHash {
    TopicHash::from_raw(topic.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{MinimalEthSpec, Root};

    type E = MinimalEthSpec;

    #[test]
    fn light_client_updates_are_published_on_their_attested_headers_digest() {
        let bytes: Vec<u8> = (0..1u32 << 16).map(|i| (i * 7) as u8).collect();
        let mut u = arbitrary::Unstructured::new(&bytes);
        let mut update: electra::LightClientOptimisticUpdate<E> =
            arbitrary::Arbitrary::arbitrary(&mut u).unwrap();
        update.attested_header.beacon.slot = 15;
        update.signature_slot = 16;
        let message = PubsubMessage::LightClientOptimisticUpdate(Arc::new(
            LightClientOptimisticUpdate::Fulu(update.clone()),
        ));
        assert_eq!(message.topic_slot(), Some(15));
        // Round trip through the topic's decoder.
        let decoded = PubsubMessage::<E>::decode(
            GossipKind::LightClientOptimisticUpdate,
            ForkName::Fulu,
            &message.as_ssz_bytes(),
        )
        .unwrap();
        assert!(matches!(
            decoded,
            PubsubMessage::LightClientOptimisticUpdate(d)
                if *d == LightClientOptimisticUpdate::Fulu(update)
        ));
        let exit = PubsubMessage::<E>::VoluntaryExit(Box::new(phase0::SignedVoluntaryExit {
            message: phase0::VoluntaryExit {
                epoch: 1,
                validator_index: 2,
            },
            signature: Default::default(),
        }));
        assert_eq!(exit.topic_slot(), None, "the current digest");
    }

    /// A Fulu block's column published just after the Gloas boundary (a reconstruction, a
    /// late publish) goes out on its own slot's digest: Gloas's topic would decode it as a
    /// Gloas sidecar, fail, and score its sender down (a two-node devnet lost its peer so).
    #[test]
    fn a_fulu_column_is_published_on_its_slots_digest_not_the_current_one() {
        let bytes: Vec<u8> = (0..1u32 << 16).map(|i| (i * 13) as u8).collect();
        let mut u = arbitrary::Unstructured::new(&bytes);
        let mut column: types::fulu::DataColumnSidecar<E> =
            arbitrary::Arbitrary::arbitrary(&mut u).unwrap();
        column.signed_block_header.message.slot = 7;
        let message =
            PubsubMessage::DataColumnSidecar(3, Arc::new(DataColumnSidecar::Fulu(column)));
        assert_eq!(message.topic_slot(), Some(7));
        let ssz = message.as_ssz_bytes();
        assert!(
            PubsubMessage::<E>::decode(GossipKind::DataColumnSidecar(3), ForkName::Fulu, &ssz)
                .is_ok()
        );
        assert!(
            PubsubMessage::<E>::decode(GossipKind::DataColumnSidecar(3), ForkName::Gloas, &ssz)
                .is_err(),
            "a Fulu column reads as a Gloas one"
        );
    }

    #[test]
    fn message_id_uses_decompressed_data_and_topic() {
        let spec = ChainSpec::mainnet();
        let topic = "/eth2/00000000/beacon_block/ssz_snappy";
        let data = compress_snappy(b"hello");
        let id = compute_message_id(&spec, ForkName::Fulu, topic, &data);
        let mut expected = Sha256::new();
        expected.update(spec.message_domain_valid_snappy.as_slice());
        expected.update((topic.len() as u64).to_le_bytes());
        expected.update(topic.as_bytes());
        expected.update(b"hello");
        assert_eq!(id, expected.finalize()[..20]);
        // A different topic, same payload: a different id.
        let other = compute_message_id(
            &spec,
            ForkName::Fulu,
            "/eth2/00000000/voluntary_exit/ssz_snappy",
            &data,
        );
        assert_ne!(id, other);
        // Phase0 ignores the topic.
        let p0 = compute_message_id(&spec, ForkName::Phase0, topic, &data);
        let mut expected = Sha256::new();
        expected.update(spec.message_domain_valid_snappy.as_slice());
        expected.update(b"hello");
        assert_eq!(p0, expected.finalize()[..20]);
    }

    #[test]
    fn message_id_of_invalid_snappy_hashes_raw_data() {
        let spec = ChainSpec::mainnet();
        let topic = "/eth2/00000000/beacon_block/ssz_snappy";
        let data = [0xffu8, 0xff, 0xff, 0xff, 0x0f];
        let id = compute_message_id(&spec, ForkName::Fulu, topic, &data);
        let mut expected = Sha256::new();
        expected.update(spec.message_domain_invalid_snappy.as_slice());
        expected.update((topic.len() as u64).to_le_bytes());
        expected.update(topic.as_bytes());
        expected.update(data);
        assert_eq!(id, expected.finalize()[..20]);
    }

    #[test]
    fn decompression_is_capped_before_allocation() {
        // A snappy header claiming 100 MiB.
        let mut data = Vec::new();
        let mut len: u64 = 100 << 20;
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                data.push(byte);
                break;
            }
            data.push(byte | 0x80);
        }
        data.extend_from_slice(&[0u8; 16]);
        assert!(matches!(
            decompress_snappy(&data, 10 << 20),
            Err(GossipDecodeError::TooLarge { .. })
        ));
    }

    #[test]
    fn decode_raw_round_trips_an_exit_and_rejects_bad_input() {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        let ctx = ForkContext::new(spec, Root::repeat_byte(9));
        let exit = phase0::SignedVoluntaryExit {
            message: phase0::VoluntaryExit {
                epoch: 3,
                validator_index: 4,
            },
            signature: Default::default(),
        };
        let message = PubsubMessage::<E>::VoluntaryExit(Box::new(exit));
        let topic = GossipTopic::new(GossipKind::VoluntaryExit, ctx.digest_at_epoch(0));
        let (parsed, decoded) =
            PubsubMessage::<E>::decode_raw(&topic.to_string(), &message.encode(), &ctx).unwrap();
        assert_eq!(parsed, topic);
        assert_eq!(decoded, message);
        // Wrong digest.
        let foreign = GossipTopic::new(GossipKind::VoluntaryExit, [1, 2, 3, 4].into());
        assert!(matches!(
            PubsubMessage::<E>::decode_raw(&foreign.to_string(), &message.encode(), &ctx),
            Err(GossipDecodeError::UnknownDigest)
        ));
        // Garbage payload.
        assert!(matches!(
            PubsubMessage::<E>::decode_raw(&topic.to_string(), &[1, 2, 3], &ctx),
            Err(GossipDecodeError::InvalidSnappy(_)) | Err(GossipDecodeError::Ssz(_))
        ));
        // Blob topics do not exist at Fulu.
        let blob = GossipTopic::new(GossipKind::BlobSidecar(0), ctx.digest_at_epoch(0));
        assert!(matches!(
            PubsubMessage::<E>::decode_raw(&blob.to_string(), &compress_snappy(&[0; 8]), &ctx),
            Err(GossipDecodeError::UnsupportedAtFork(..))
        ));
    }

    fn arbitrary<T: for<'a> arbitrary::Arbitrary<'a>>(seed: u8) -> T {
        let bytes: Vec<u8> = (0..1u32 << 16)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect();
        arbitrary::Arbitrary::arbitrary(&mut arbitrary::Unstructured::new(&bytes)).unwrap()
    }

    #[test]
    fn gloas_digests_decode_the_gloas_types_of_the_changed_and_new_topics() {
        let aggregate: gloas::SignedAggregateAndProof<E> = arbitrary(1);
        let slashing: gloas::AttesterSlashing = arbitrary(2);
        let bid: gloas::SignedExecutionPayloadBid = arbitrary(3);
        let envelope: gloas::SignedExecutionPayloadEnvelope<E> = arbitrary(4);
        let vote: gloas::PayloadAttestationMessage = arbitrary(5);
        let preferences: gloas::SignedProposerPreferences = arbitrary(6);
        let messages = [
            PubsubMessage::<E>::GloasAggregateAndProof(Box::new(aggregate)),
            PubsubMessage::GloasAttesterSlashing(Box::new(slashing)),
            PubsubMessage::ExecutionPayloadBid(Arc::new(bid)),
            PubsubMessage::ExecutionPayload(Arc::new(envelope)),
            PubsubMessage::PayloadAttestationMessage(Box::new(vote)),
            PubsubMessage::ProposerPreferences(Arc::new(preferences)),
        ];
        for message in messages {
            let kind = message.kind();
            let ssz = message.as_ssz_bytes();
            match PubsubMessage::<E>::decode(kind, ForkName::Gloas, &ssz) {
                Ok(decoded) => assert_eq!(decoded, message, "{kind}"),
                // An arbitrary message may be larger than its type's bound; then the bound
                // is what refuses it.
                Err(GossipDecodeError::TooLargeForType { len, max, .. }) => {
                    assert!(len as u64 > max, "{kind}")
                }
                Err(e) => panic!("{kind}: {e}"),
            }
        }
        // The new topics do not exist before Gloas.
        for kind in GossipKind::GLOAS_GLOBAL {
            assert!(matches!(
                PubsubMessage::<E>::decode(kind, ForkName::Fulu, &[0; 64]),
                Err(GossipDecodeError::UnsupportedAtFork(_, ForkName::Fulu))
            ));
        }
    }

    #[test]
    fn gloas_type_bounds_refuse_larger_messages_before_decoding() {
        let bounds = [
            (
                GossipKind::BeaconAggregateAndProof,
                E::MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE,
            ),
            (GossipKind::AttesterSlashing, E::MAX_ATTESTER_SLASHING_SIZE),
            (
                GossipKind::ExecutionPayloadBid,
                E::MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE,
            ),
        ];
        for (kind, max) in bounds {
            let too_large = vec![0u8; max as usize + 1];
            assert!(
                matches!(
                    PubsubMessage::<E>::decode(kind, ForkName::Gloas, &too_large),
                    Err(GossipDecodeError::TooLargeForType { len, max: m, .. })
                        if len == max as usize + 1 && m == max
                ),
                "{kind}"
            );
            // At the bound the type's own decoding decides (zeros are not a valid message).
            assert!(matches!(
                PubsubMessage::<E>::decode(kind, ForkName::Gloas, &too_large[1..]),
                Err(GossipDecodeError::Ssz(_))
            ));
        }
        // A Fulu aggregate is still the Electra type, with no Gloas bound.
        let electra: electra::SignedAggregateAndProof<E> = arbitrary(7);
        let ssz = electra.as_ssz_bytes();
        assert_eq!(
            PubsubMessage::<E>::decode(GossipKind::BeaconAggregateAndProof, ForkName::Fulu, &ssz)
                .unwrap(),
            PubsubMessage::AggregateAndProof(Box::new(electra))
        );
    }

    #[test]
    fn config_follows_the_spec() {
        let spec = ChainSpec::mainnet();
        let ctx = Arc::new(ForkContext::new(spec.clone(), Root::ZERO));
        let config = gossipsub_config(ctx, 32).unwrap();
        assert_eq!(config.mesh_n(), 8);
        assert_eq!(config.mesh_n_low(), 6);
        assert_eq!(config.mesh_n_high(), 12);
        assert_eq!(config.gossip_lazy(), 6);
        assert_eq!(config.heartbeat_interval(), Duration::from_millis(700));
        assert_eq!(config.history_length(), 6);
        assert_eq!(config.history_gossip(), 3);
        // 12 s * 32 * 2
        assert_eq!(config.duplicate_cache_time(), Duration::from_secs(768));
        assert_eq!(
            config.max_transmit_size(),
            max_compressed_len(10 * 1024 * 1024) + 1024
        );
        assert!(
            peer_score_params(Duration::from_secs(12), 32)
                .validate()
                .is_ok()
        );
        assert!(
            topic_score_params(GossipKind::BeaconBlock, Duration::from_secs(12), 32)
                .validate()
                .is_ok()
        );
        assert!(peer_score_thresholds().validate().is_ok());
    }
}
