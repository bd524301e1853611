//! The Beacon API's view of the p2p side ([`http_api::NetworkApi`]) over the node's libp2p
//! service: what validators submit is gossiped, duty subscriptions join and leave subnets, and
//! peers, identity and sync state are read from the service and the router.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use beacon_api::{IdentityData, MetaData, PeerCountData, PeerData, PeerDirection, PeerState};
use beacon_chain::BlockBroadcaster;
use http_api::{NetworkApi, PeerDetails, PublishedOperation, SubnetSubscription};
use networking::peer_manager::ConnectionDirection;
use networking::{GossipKind, NetworkHandle, PubsubMessage};
use parking_lot::Mutex;
use router::SyncState;
use tokio::sync::watch;
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::fulu::{SignedContributionAndProof, SyncCommitteeMessage};
use types::gloas::PayloadAttestationMessage;
use types::{DataColumnSidecar, Epoch, EthSpec, SignedBeaconBlock, Slot};

/// How often the peer list the API serves is refreshed from the service.
const PEER_REFRESH: Duration = Duration::from_secs(2);

/// The node's p2p side as the API sees it.
pub struct P2pNetwork<E: EthSpec> {
    handle: NetworkHandle<E>,
    sync_state: watch::Receiver<SyncState>,
    /// The subnets the node keeps for good (its ENR's `attnets` and `syncnets`).
    long_lived_attnets: Vec<u64>,
    long_lived_syncnets: Vec<u64>,
    custody_group_count: u64,
    /// `DATA_COLUMN_SIDECAR_SUBNET_COUNT`.
    column_subnet_count: u64,
    /// Duty subscriptions: attestation subnet → the last slot it is needed for; sync committee
    /// subnet → the first epoch it is no longer needed.
    attestation_duties: Mutex<HashMap<u64, Slot>>,
    sync_duties: Mutex<HashMap<u64, Epoch>>,
    /// The connected peers, refreshed every [`PEER_REFRESH`].
    peers: Mutex<Vec<PeerData>>,
    /// Their clients and custody group counts, refreshed with them.
    peer_details: Mutex<Vec<PeerDetails>>,
    /// `libp2p_peers`.
    peers_gauge: prometheus::IntGauge,
}

impl<E: EthSpec> std::fmt::Debug for P2pNetwork<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("P2pNetwork")
            .field("peer_id", &self.handle.local_peer_id())
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> P2pNetwork<E> {
    /// The view over `handle`, with the router's sync state and the node's long-lived subnets;
    /// `peers_gauge` follows the number of connected peers.
    pub fn new(
        handle: NetworkHandle<E>,
        sync_state: watch::Receiver<SyncState>,
        long_lived_attnets: Vec<u64>,
        long_lived_syncnets: Vec<u64>,
        custody_group_count: u64,
        column_subnet_count: u64,
        peers_gauge: prometheus::IntGauge,
    ) -> Self {
        Self {
            handle,
            sync_state,
            long_lived_attnets,
            long_lived_syncnets,
            custody_group_count,
            column_subnet_count,
            attestation_duties: Mutex::new(HashMap::new()),
            sync_duties: Mutex::new(HashMap::new()),
            peers: Mutex::new(Vec::new()),
            peer_details: Mutex::new(Vec::new()),
            peers_gauge,
        }
    }

    /// Refreshes the peer list and leaves the duty subnets whose duties passed, every
    /// [`PEER_REFRESH`] until `shutdown`. `current_slot` reads the chain's clock.
    pub async fn maintain(
        self: Arc<Self>,
        current_slot: impl Fn() -> Slot + Send,
        mut shutdown: watch::Receiver<bool>,
    ) {
        loop {
            tokio::select! {
                () = tokio::time::sleep(PEER_REFRESH) => {}
                _ = shutdown.wait_for(|stop| *stop) => return,
            }
            self.refresh_peers().await;
            self.expire_duty_subnets(current_slot());
        }
    }

    async fn refresh_peers(&self) {
        let mut peers = Vec::new();
        let mut details = Vec::new();
        for peer in self.handle.connected_peer_details().await {
            let (peer_id, direction) = (peer.peer_id, peer.direction);
            details.push(PeerDetails {
                peer_id: peer_id.to_string(),
                agent_version: peer.agent_version,
                client: peer.client.as_str().to_string(),
                custody_group_count: peer.custody_group_count,
            });
            let address = self
                .handle
                .connections(peer_id)
                .await
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            peers.push(PeerData {
                peer_id: peer_id.to_string(),
                enr: None,
                last_seen_p2p_address: address,
                state: PeerState::Connected,
                direction: match direction {
                    ConnectionDirection::Inbound => PeerDirection::Inbound,
                    ConnectionDirection::Outbound => PeerDirection::Outbound,
                },
            });
        }
        self.peers_gauge
            .set(i64::try_from(peers.len()).unwrap_or(i64::MAX));
        *self.peers.lock() = peers;
        *self.peer_details.lock() = details;
    }

    fn expire_duty_subnets(&self, slot: Slot) {
        let epoch = slot / E::slots_per_epoch();
        self.attestation_duties.lock().retain(|subnet, last| {
            let keep = *last >= slot;
            if !keep && !self.long_lived_attnets.contains(subnet) {
                self.handle.unsubscribe(GossipKind::Attestation(*subnet));
            }
            keep
        });
        self.sync_duties.lock().retain(|subnet, until| {
            let keep = *until > epoch;
            if !keep && !self.long_lived_syncnets.contains(subnet) {
                self.handle
                    .unsubscribe(GossipKind::SyncCommitteeMessage(*subnet));
            }
            keep
        });
    }
}

impl<E: EthSpec> BlockBroadcaster<E> for P2pNetwork<E> {
    fn broadcast_block(&self, block: Arc<SignedBeaconBlock<E>>) {
        self.handle.publish(PubsubMessage::BeaconBlock(block));
    }

    fn broadcast_data_columns(&self, columns: Vec<Arc<DataColumnSidecar<E>>>) {
        for column in columns {
            // `compute_subnet_for_data_column_sidecar`.
            let subnet = column.index() % self.column_subnet_count.max(1);
            self.handle
                .publish(PubsubMessage::DataColumnSidecar(subnet, column));
        }
    }

    fn broadcast_execution_payload_envelope(
        &self,
        envelope: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    ) {
        self.handle
            .publish(PubsubMessage::ExecutionPayload(envelope));
    }
}

fn hex_bits(bits: impl IntoIterator<Item = u64>, bytes: usize) -> String {
    let mut out = vec![0u8; bytes];
    for bit in bits {
        if let Some(byte) = out.get_mut((bit / 8) as usize) {
            *byte |= 1 << (bit % 8);
        }
    }
    format!("0x{}", hex::encode(out))
}

impl<E: EthSpec> NetworkApi<E> for P2pNetwork<E> {
    fn publish_attestation(&self, attestation: SingleAttestation, subnet: u64) {
        self.handle
            .publish(PubsubMessage::Attestation(subnet, Box::new(attestation)));
    }

    fn publish_aggregate(&self, aggregate: SignedAggregateAndProof<E>) {
        self.handle
            .publish(PubsubMessage::AggregateAndProof(Box::new(aggregate)));
    }

    fn publish_gloas_aggregate(&self, aggregate: types::gloas::SignedAggregateAndProof<E>) {
        self.handle
            .publish(PubsubMessage::GloasAggregateAndProof(Box::new(aggregate)));
    }

    fn publish_sync_message(&self, message: SyncCommitteeMessage, subnet: u64) {
        self.handle.publish(PubsubMessage::SyncCommitteeMessage(
            subnet,
            Box::new(message),
        ));
    }

    fn publish_contribution(&self, contribution: SignedContributionAndProof<E>) {
        self.handle
            .publish(PubsubMessage::SyncCommitteeContribution(Box::new(
                contribution,
            )));
    }

    fn publish_operation(&self, operation: PublishedOperation<E>) {
        let message = match operation {
            PublishedOperation::VoluntaryExit(exit) => PubsubMessage::VoluntaryExit(Box::new(exit)),
            PublishedOperation::ProposerSlashing(slashing) => {
                PubsubMessage::ProposerSlashing(Box::new(slashing))
            }
            PublishedOperation::AttesterSlashing(slashing) => {
                PubsubMessage::AttesterSlashing(Box::new(slashing))
            }
            PublishedOperation::BlsToExecutionChange(change) => {
                PubsubMessage::BlsToExecutionChange(Box::new(change))
            }
        };
        self.handle.publish(message);
    }

    fn publish_payload_attestation(&self, message: PayloadAttestationMessage) {
        self.handle
            .publish(PubsubMessage::PayloadAttestationMessage(Box::new(message)));
    }

    fn publish_execution_payload_bid(&self, bid: types::gloas::SignedExecutionPayloadBid) {
        self.handle
            .publish(PubsubMessage::ExecutionPayloadBid(Arc::new(bid)));
    }

    fn subscribe_subnets(&self, subscriptions: Vec<SubnetSubscription>) {
        for subscription in subscriptions {
            match subscription {
                // Only an aggregator needs the subnet's messages; a plain attester publishes
                // to it through the mesh's fanout.
                SubnetSubscription::Attestation {
                    subnet,
                    slot,
                    aggregator: true,
                } => {
                    let mut duties = self.attestation_duties.lock();
                    let last = duties.entry(subnet).or_insert(slot);
                    *last = (*last).max(slot);
                    self.handle.subscribe(GossipKind::Attestation(subnet));
                }
                SubnetSubscription::Attestation { .. } => {}
                SubnetSubscription::SyncCommittee {
                    subnet,
                    until_epoch,
                } => {
                    let mut duties = self.sync_duties.lock();
                    let until = duties.entry(subnet).or_insert(until_epoch);
                    *until = (*until).max(until_epoch);
                    self.handle
                        .subscribe(GossipKind::SyncCommitteeMessage(subnet));
                }
            }
        }
    }

    fn peers(&self) -> Vec<PeerData> {
        self.peers.lock().clone()
    }

    fn peer_details(&self) -> Vec<PeerDetails> {
        self.peer_details.lock().clone()
    }

    fn peer_count(&self) -> PeerCountData {
        PeerCountData {
            disconnected: 0,
            connecting: 0,
            connected: self.peers.lock().len() as u64,
            disconnecting: 0,
        }
    }

    fn local_identity(&self) -> IdentityData {
        let enr = self.handle.local_enr();
        IdentityData {
            peer_id: self.handle.local_peer_id().to_string(),
            enr: enr.map(|e| e.to_base64()).unwrap_or_default(),
            p2p_addresses: self
                .handle
                .listen_addrs()
                .iter()
                .map(|a| format!("{a}/p2p/{}", self.handle.local_peer_id()))
                .collect(),
            discovery_addresses: enr
                .and_then(|e| e.udp4_socket())
                .map(|s| vec![format!("/ip4/{}/udp/{}", s.ip(), s.port())])
                .unwrap_or_default(),
            metadata: MetaData {
                seq_number: enr.map_or(0, |e| e.seq()),
                attnets: hex_bits(self.long_lived_attnets.iter().copied(), 8),
                syncnets: Some(hex_bits(self.long_lived_syncnets.iter().copied(), 1)),
                custody_group_count: Some(self.custody_group_count),
            },
        }
    }

    fn sync_target(&self) -> Option<Slot> {
        match *self.sync_state.borrow() {
            SyncState::Synced => None,
            SyncState::Syncing { target_slot } => Some(target_slot),
        }
    }
}
