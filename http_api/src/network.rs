//! What the API asks of the p2p side: publishing what validators submit, subscribing to the
//! subnets their duties need, and the node's peers, identity and sync state.
//!
//! [`NoNetwork`] is a node without peers (a single-node devnet, tests): every publication is
//! counted and goes nowhere, the peer lists are empty, the node is synced.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use beacon_api::{IdentityData, MetaData, PeerCountData, PeerData, SyncingData};
use beacon_chain::BlockBroadcaster;
use parking_lot::Mutex;
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::fulu::{
    AttesterSlashing, ProposerSlashing, SignedBLSToExecutionChange, SignedContributionAndProof,
    SignedVoluntaryExit, SyncCommitteeMessage,
};
use types::gloas::PayloadAttestationMessage;
use types::{DataColumnSidecar, Epoch, EthSpec, SignedBeaconBlock, Slot};

/// An operation for a global gossip topic.
#[derive(Debug, Clone)]
pub enum PublishedOperation<E: EthSpec> {
    /// `voluntary_exit`.
    VoluntaryExit(SignedVoluntaryExit),
    /// `proposer_slashing`.
    ProposerSlashing(ProposerSlashing),
    /// `attester_slashing`.
    AttesterSlashing(AttesterSlashing<E>),
    /// `bls_to_execution_change`.
    BlsToExecutionChange(SignedBLSToExecutionChange),
}

/// A subnet subscription a duty needs (from `beacon_committee_subscriptions` and
/// `sync_committee_subscriptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubnetSubscription {
    /// Attestation subnet `subnet` at `slot`; `aggregator`: the node must also collect the
    /// subnet's attestations to aggregate them.
    Attestation {
        /// `compute_subnet_for_attestation`.
        subnet: u64,
        /// The duty's slot.
        slot: Slot,
        /// Whether the validator aggregates.
        aggregator: bool,
    },
    /// Sync committee subnet `subnet` until `until_epoch`.
    SyncCommittee {
        /// `compute_subnets_for_sync_committee`.
        subnet: u64,
        /// The first epoch it is no longer needed.
        until_epoch: Epoch,
    },
}

/// What the status page shows of a connected peer beyond the standard `node/peers` fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerDetails {
    /// The peer's id.
    pub peer_id: String,
    /// Its identify agent version, once identify answered.
    pub agent_version: Option<String>,
    /// The client the agent version names: `Lighthouse`, `Teku`, `Prysm`, `Nimbus`,
    /// `Lodestar`, `Grandine`, `Arbor`, `Other`, or `Unknown` before identify answered.
    pub client: String,
    /// Its custody group count (its MetaData v3's, else its ENR's `cgc`), once known.
    pub custody_group_count: Option<u64>,
}

/// The p2p side as the API sees it. Publishing never blocks on the network: implementations
/// queue the message for the gossip worker.
pub trait NetworkApi<E: EthSpec>: BlockBroadcaster<E> {
    /// Gossips a `SingleAttestation` on `beacon_attestation_{subnet}`.
    fn publish_attestation(&self, attestation: SingleAttestation, subnet: u64);
    /// Gossips an aggregate on `beacon_aggregate_and_proof`.
    fn publish_aggregate(&self, aggregate: SignedAggregateAndProof<E>);
    /// Gossips an aggregate in Gloas's container on `beacon_aggregate_and_proof`.
    fn publish_gloas_aggregate(&self, aggregate: types::gloas::SignedAggregateAndProof<E>);
    /// Gossips a sync committee message on `sync_committee_{subnet}`.
    fn publish_sync_message(&self, message: SyncCommitteeMessage, subnet: u64);
    /// Gossips a contribution on `sync_committee_contribution_and_proof`.
    fn publish_contribution(&self, contribution: SignedContributionAndProof<E>);
    /// Gossips an exit, slashing or BLS change on its global topic.
    fn publish_operation(&self, operation: PublishedOperation<E>);
    /// Gossips a PTC member's vote on `payload_attestation_message` (Gloas).
    fn publish_payload_attestation(&self, message: PayloadAttestationMessage);
    /// Gossips a builder's signed bid on `execution_payload_bid` (Gloas).
    fn publish_execution_payload_bid(&self, bid: types::gloas::SignedExecutionPayloadBid);
    /// Subscribes to the subnets the validators' duties need.
    fn subscribe_subnets(&self, subscriptions: Vec<SubnetSubscription>);
    /// The known peers.
    fn peers(&self) -> Vec<PeerData>;
    /// The connected peers' clients and custody group counts (the status page).
    fn peer_details(&self) -> Vec<PeerDetails>;
    /// Peers by state.
    fn peer_count(&self) -> PeerCountData;
    /// The node's network identity.
    fn local_identity(&self) -> IdentityData;
    /// Whether the node is syncing and the slot it syncs to (`None`: synced); the API fills
    /// in the head and the distance.
    fn sync_target(&self) -> Option<Slot>;
}

/// How many messages of each kind a [`NoNetwork`] was asked to publish.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PublishCounts {
    /// Blocks.
    pub blocks: u64,
    /// Data column sidecars.
    pub data_columns: u64,
    /// Execution payload envelopes (Gloas).
    pub envelopes: u64,
    /// Single attestations.
    pub attestations: u64,
    /// Aggregates.
    pub aggregates: u64,
    /// Sync committee messages.
    pub sync_messages: u64,
    /// Contributions.
    pub contributions: u64,
    /// Exits, slashings and BLS changes.
    pub operations: u64,
    /// Payload attestation messages (Gloas).
    pub payload_attestations: u64,
    /// Execution payload bids (Gloas).
    pub bids: u64,
}

/// A node without peers: publications are counted and go nowhere, subscriptions are kept.
#[derive(Debug, Default)]
pub struct NoNetwork {
    blocks: AtomicU64,
    data_columns: AtomicU64,
    envelopes: AtomicU64,
    attestations: AtomicU64,
    aggregates: AtomicU64,
    sync_messages: AtomicU64,
    contributions: AtomicU64,
    operations: AtomicU64,
    payload_attestations: AtomicU64,
    bids: AtomicU64,
    subscriptions: Mutex<Vec<SubnetSubscription>>,
}

impl NoNetwork {
    /// A node without peers.
    pub fn new() -> Self {
        Self::default()
    }

    /// What was published so far.
    pub fn counts(&self) -> PublishCounts {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        PublishCounts {
            blocks: get(&self.blocks),
            data_columns: get(&self.data_columns),
            envelopes: get(&self.envelopes),
            attestations: get(&self.attestations),
            aggregates: get(&self.aggregates),
            sync_messages: get(&self.sync_messages),
            contributions: get(&self.contributions),
            operations: get(&self.operations),
            payload_attestations: get(&self.payload_attestations),
            bids: get(&self.bids),
        }
    }

    /// Every subnet subscription asked for so far.
    pub fn subscriptions(&self) -> Vec<SubnetSubscription> {
        self.subscriptions.lock().clone()
    }
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

impl<E: EthSpec> BlockBroadcaster<E> for NoNetwork {
    fn broadcast_block(&self, _: Arc<SignedBeaconBlock<E>>) {
        bump(&self.blocks, 1);
    }

    fn broadcast_data_columns(&self, columns: Vec<Arc<DataColumnSidecar<E>>>) {
        bump(&self.data_columns, columns.len() as u64);
    }

    fn broadcast_execution_payload_envelope(
        &self,
        _: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    ) {
        bump(&self.envelopes, 1);
    }
}

impl<E: EthSpec> NetworkApi<E> for NoNetwork {
    fn publish_attestation(&self, _: SingleAttestation, _: u64) {
        bump(&self.attestations, 1);
    }

    fn publish_aggregate(&self, _: SignedAggregateAndProof<E>) {
        bump(&self.aggregates, 1);
    }

    fn publish_gloas_aggregate(&self, _: types::gloas::SignedAggregateAndProof<E>) {
        bump(&self.aggregates, 1);
    }

    fn publish_sync_message(&self, _: SyncCommitteeMessage, _: u64) {
        bump(&self.sync_messages, 1);
    }

    fn publish_contribution(&self, _: SignedContributionAndProof<E>) {
        bump(&self.contributions, 1);
    }

    fn publish_operation(&self, _: PublishedOperation<E>) {
        bump(&self.operations, 1);
    }

    fn publish_payload_attestation(&self, _: PayloadAttestationMessage) {
        bump(&self.payload_attestations, 1);
    }

    fn publish_execution_payload_bid(&self, _: types::gloas::SignedExecutionPayloadBid) {
        bump(&self.bids, 1);
    }

    fn subscribe_subnets(&self, subscriptions: Vec<SubnetSubscription>) {
        let mut kept = self.subscriptions.lock();
        kept.extend(subscriptions);
        // A long-running devnet subscribes every epoch: keep the recent ones.
        let excess = kept.len().saturating_sub(4096);
        kept.drain(..excess);
    }

    fn peers(&self) -> Vec<PeerData> {
        Vec::new()
    }

    fn peer_details(&self) -> Vec<PeerDetails> {
        Vec::new()
    }

    fn peer_count(&self) -> PeerCountData {
        PeerCountData {
            disconnected: 0,
            connecting: 0,
            connected: 0,
            disconnecting: 0,
        }
    }

    fn local_identity(&self) -> IdentityData {
        IdentityData {
            peer_id: String::new(),
            enr: String::new(),
            p2p_addresses: Vec::new(),
            discovery_addresses: Vec::new(),
            metadata: MetaData {
                seq_number: 0,
                attnets: "0x0000000000000000".into(),
                syncnets: Some("0x00".into()),
                custody_group_count: None,
            },
        }
    }

    fn sync_target(&self) -> Option<Slot> {
        None
    }
}

/// The `node/syncing` data from the head and the network's sync target.
pub(crate) fn syncing_data(head_slot: Slot, target: Option<Slot>, optimistic: bool) -> SyncingData {
    let target = target.unwrap_or(head_slot).max(head_slot);
    SyncingData {
        head_slot,
        sync_distance: target - head_slot,
        is_syncing: target > head_slot,
        is_optimistic: optimistic,
        el_offline: false,
    }
}
