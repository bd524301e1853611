//! [`NetworkHandle`]: the application's side of the service, and the commands and queries it
//! sends to the service task.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use discv5::Enr;
use libp2p::gossipsub::MessageId;
use libp2p::multiaddr::Protocol as MaProtocol;
use libp2p::{Multiaddr, PeerId};
use prometheus::Registry;
use tokio::sync::{mpsc, oneshot, watch};
use types::{Epoch, EthSpec};

use super::{InboundRequestId, OutboundRequestId, Validation};
use crate::fork_context::ForkContext;
use crate::gossip::PubsubMessage;
use crate::metrics::Metrics;
use crate::peer_manager::{ConnectedPeer, ConnectionDirection, PeerAction};
use crate::rpc::{Request, Response};
use crate::topics::{GossipKind, GossipTopic};

pub(super) enum Command<E: EthSpec> {
    SendRequest {
        peer_id: PeerId,
        request_id: OutboundRequestId,
        request: Request<E>,
    },
    SendResponse {
        request_id: InboundRequestId,
        response: Response<E>,
    },
    Publish(PubsubMessage<E>),
    ReportValidation {
        message_id: MessageId,
        source: PeerId,
        validation: Validation,
    },
    Subscribe(GossipKind),
    Unsubscribe(GossipKind),
    UpdateEpoch(Epoch),
    UpdateMetadata {
        attnets: Vec<u64>,
        syncnets: Vec<u64>,
        custody_group_count: u64,
    },
    ReportPeer {
        peer_id: PeerId,
        action: PeerAction,
    },
    Ban(PeerId),
    Disconnect(PeerId),
    Dial(Multiaddr),
    Query(Query),
    Shutdown,
}

pub(super) enum Query {
    ConnectedPeers(oneshot::Sender<Vec<PeerId>>),
    ConnectedPeerDirections(oneshot::Sender<Vec<(PeerId, ConnectionDirection)>>),
    ConnectedPeerDetails(oneshot::Sender<Vec<ConnectedPeer>>),
    PeerScore(PeerId, oneshot::Sender<f64>),
    IsBanned(PeerId, oneshot::Sender<bool>),
    MeshPeers(GossipTopic, oneshot::Sender<Vec<PeerId>>),
    Connections(PeerId, oneshot::Sender<Vec<Multiaddr>>),
    LocalEnr(oneshot::Sender<Option<Enr>>),
    SubscribedTopics(oneshot::Sender<Vec<GossipTopic>>),
}

/// Sends commands to the network service. Cheap to clone.
pub struct NetworkHandle<E: EthSpec> {
    pub(super) tx: mpsc::UnboundedSender<Command<E>>,
    pub(super) next_request_id: Arc<AtomicU64>,
    pub(super) local_peer_id: PeerId,
    pub(super) listen_addrs: Vec<Multiaddr>,
    pub(super) local_enr: Option<Enr>,
    pub(super) fork_context: Arc<ForkContext>,
    pub(super) metrics: Arc<Metrics>,
    /// Bumped whenever a peer connects or leaves, or its identify or MetaData answer arrives.
    pub(super) peer_table: watch::Receiver<u64>,
}

impl<E: EthSpec> Clone for NetworkHandle<E> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            next_request_id: self.next_request_id.clone(),
            local_peer_id: self.local_peer_id,
            listen_addrs: self.listen_addrs.clone(),
            local_enr: self.local_enr.clone(),
            fork_context: self.fork_context.clone(),
            metrics: self.metrics.clone(),
            peer_table: self.peer_table.clone(),
        }
    }
}

impl<E: EthSpec> NetworkHandle<E> {
    /// This node's peer id.
    pub fn local_peer_id(&self) -> PeerId {
        self.local_peer_id
    }

    /// The addresses the swarm listens on (with the OS-chosen ports).
    pub fn listen_addrs(&self) -> &[Multiaddr] {
        &self.listen_addrs
    }

    /// The TCP listen address, if any.
    pub fn tcp_addr(&self) -> Option<Multiaddr> {
        self.listen_addrs
            .iter()
            .find(|a| a.iter().any(|p| matches!(p, MaProtocol::Tcp(_))))
            .cloned()
    }

    /// The QUIC listen address, if any.
    pub fn quic_addr(&self) -> Option<Multiaddr> {
        self.listen_addrs
            .iter()
            .find(|a| a.iter().any(|p| matches!(p, MaProtocol::QuicV1)))
            .cloned()
    }

    /// The ENR at start (`None` when discovery is disabled); see [`Self::current_enr`].
    pub fn local_enr(&self) -> Option<&Enr> {
        self.local_enr.as_ref()
    }

    /// The fork digests of the chain.
    pub fn fork_context(&self) -> &Arc<ForkContext> {
        &self.fork_context
    }

    /// Registers the service's metrics (`network_*`).
    pub fn register_metrics(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        self.metrics.register(registry)
    }

    fn send(&self, command: Command<E>) {
        // A send error means the service stopped; every later query reports that.
        let _ = self.tx.send(command);
    }

    /// Sends `request` to `peer_id`; the answer arrives as [`NetworkEvent::ResponseReceived`]
    /// or [`NetworkEvent::RequestFailed`] with the returned id.
    ///
    /// [`NetworkEvent::ResponseReceived`]: super::NetworkEvent::ResponseReceived
    /// [`NetworkEvent::RequestFailed`]: super::NetworkEvent::RequestFailed
    pub fn send_request(&self, peer_id: PeerId, request: Request<E>) -> OutboundRequestId {
        let request_id = OutboundRequestId(self.next_request_id.fetch_add(1, Ordering::Relaxed));
        self.send(Command::SendRequest {
            peer_id,
            request_id,
            request,
        });
        request_id
    }

    /// Answers a [`NetworkEvent::RequestReceived`].
    ///
    /// [`NetworkEvent::RequestReceived`]: super::NetworkEvent::RequestReceived
    pub fn send_response(&self, request_id: InboundRequestId, response: Response<E>) {
        self.send(Command::SendResponse {
            request_id,
            response,
        });
    }

    /// Publishes a gossip message on the current fork digest's topic.
    pub fn publish(&self, message: PubsubMessage<E>) {
        self.send(Command::Publish(message));
    }

    /// Reports the validation result of a [`NetworkEvent::GossipMessage`].
    ///
    /// [`NetworkEvent::GossipMessage`]: super::NetworkEvent::GossipMessage
    pub fn report_validation(&self, message_id: MessageId, source: PeerId, validation: Validation) {
        self.send(Command::ReportValidation {
            message_id,
            source,
            validation,
        });
    }

    /// Subscribes to a topic kind (on every active fork digest).
    pub fn subscribe(&self, kind: GossipKind) {
        self.send(Command::Subscribe(kind));
    }

    /// Unsubscribes from a topic kind.
    pub fn unsubscribe(&self, kind: GossipKind) {
        self.send(Command::Unsubscribe(kind));
    }

    /// Tells the service the wall-clock epoch: at fork boundaries (regular or BPO) it
    /// subscribes to the next digest's topics one epoch ahead, drops the old digest's two
    /// epochs after, and updates the ENR.
    pub fn update_epoch(&self, epoch: Epoch) {
        self.send(Command::UpdateEpoch(epoch));
    }

    /// Changes the advertised subnets and custody group count (metadata sequence number and
    /// ENR updated).
    pub fn update_metadata(&self, attnets: Vec<u64>, syncnets: Vec<u64>, custody_group_count: u64) {
        self.send(Command::UpdateMetadata {
            attnets,
            syncnets,
            custody_group_count,
        });
    }

    /// Penalises a peer (for example for an invalid block found later).
    pub fn report_peer(&self, peer_id: PeerId, action: PeerAction) {
        self.send(Command::ReportPeer { peer_id, action });
    }

    /// Bans and disconnects a peer.
    pub fn ban_peer(&self, peer_id: PeerId) {
        self.send(Command::Ban(peer_id));
    }

    /// Disconnects a peer (after a Goodbye).
    pub fn disconnect(&self, peer_id: PeerId) {
        self.send(Command::Disconnect(peer_id));
    }

    /// Dials an address.
    pub fn dial(&self, address: Multiaddr) {
        self.send(Command::Dial(address));
    }

    /// Stops the service.
    pub fn shutdown(&self) {
        self.send(Command::Shutdown);
    }

    async fn query<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Query) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Query(make(tx)));
        rx.await.ok()
    }

    /// The connected peers.
    pub async fn connected_peers(&self) -> Vec<PeerId> {
        self.query(Query::ConnectedPeers).await.unwrap_or_default()
    }

    /// The connected peers with who dialed whom (the Beacon API's `node/peers`).
    pub async fn connected_peer_directions(&self) -> Vec<(PeerId, ConnectionDirection)> {
        self.query(Query::ConnectedPeerDirections)
            .await
            .unwrap_or_default()
    }

    /// The connected peers with who dialed whom, their client (from identify) and custody
    /// group count (from their MetaData or ENR).
    pub async fn connected_peer_details(&self) -> Vec<ConnectedPeer> {
        self.query(Query::ConnectedPeerDetails)
            .await
            .unwrap_or_default()
    }

    /// A counter bumped whenever a peer connects or leaves, or its identify or MetaData answer
    /// arrives: wait on it (`changed`) to read [`Self::connected_peer_details`] again.
    pub fn peer_table_changes(&self) -> watch::Receiver<u64> {
        self.peer_table.clone()
    }

    /// The peer manager's score of a peer.
    pub async fn peer_score(&self, peer_id: PeerId) -> f64 {
        self.query(|tx| Query::PeerScore(peer_id, tx))
            .await
            .unwrap_or(0.0)
    }

    /// Whether a peer is banned.
    pub async fn is_banned(&self, peer_id: PeerId) -> bool {
        self.query(|tx| Query::IsBanned(peer_id, tx))
            .await
            .unwrap_or(false)
    }

    /// Peers in our gossipsub mesh of a topic.
    pub async fn mesh_peers(&self, topic: GossipTopic) -> Vec<PeerId> {
        self.query(|tx| Query::MeshPeers(topic, tx))
            .await
            .unwrap_or_default()
    }

    /// The remote addresses of our connections to a peer.
    pub async fn connections(&self, peer_id: PeerId) -> Vec<Multiaddr> {
        self.query(|tx| Query::Connections(peer_id, tx))
            .await
            .unwrap_or_default()
    }

    /// The gossip topics subscribed to now (every active fork digest).
    pub async fn subscribed_topics(&self) -> Vec<GossipTopic> {
        self.query(Query::SubscribedTopics)
            .await
            .unwrap_or_default()
    }

    /// The ENR as it is now (after epoch or metadata updates).
    pub async fn current_enr(&self) -> Option<Enr> {
        self.query(Query::LocalEnr).await.flatten()
    }
}
