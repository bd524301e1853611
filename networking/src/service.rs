//! The network service: builds the swarm (TCP with Noise and yamux/mplex, QUIC), runs
//! gossipsub, identify, eth2 req/resp over raw libp2p streams and discv5, and drives them from
//! one task. The application talks to it through a [`NetworkHandle`] (commands) and a
//! [`NetworkEvents`] stream.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use discv5::Enr;
use futures::StreamExt;
use libp2p::core::ConnectedPoint;
use libp2p::gossipsub::{self, MessageAcceptance, MessageAuthenticity, MessageId};
use libp2p::identity::Keypair;
use libp2p::multiaddr::Protocol as MaProtocol;
use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, PeerId, StreamProtocol, Swarm, identify, noise, tcp, yamux};
use prometheus::Registry;
use ssz_types::BitVector;
use ssz_types::typenum::{U4, U64};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use types::{ChainSpec, Epoch, EthSpec, ForkDigest, ForkName, Root};

use crate::dial_gate::DialGate;
use crate::discovery::{Discovery, DiscoveryEvent, eligible, free_udp_port};
use crate::enr::{
    ATTNETS_ENR_KEY, CGC_ENR_KEY, ETH2_ENR_KEY, EnrForkId, Eth2Enr, LocalEnrFields, NFD_ENR_KEY,
    SYNCNETS_ENR_KEY, advertised_ip, build_enr, enr_key_from_keypair,
};
use crate::fork_context::{FAR_FUTURE_EPOCH, ForkContext};
use crate::gossip::{
    GossipBehaviour, PubsubMessage, gossipsub_config, peer_score_params, peer_score_thresholds,
    topic_hash, topic_score_params,
};
use crate::metrics::{EventKind, Metrics};
use crate::peer_manager::{
    Admission, ConnectedPeer, ConnectionDirection, DisconnectReason, PeerAction, PeerManager,
    PeerManagerConfig, ScoreOutcome,
};
use crate::rate_limiter::{RateLimitError, RateLimiter, RateLimiterConfig};
use crate::rpc::codec::{
    RpcCodecError, encode_error_chunk, encode_request, read_request, read_response_chunk,
    write_and_close, write_response,
};
use crate::rpc::{MetaData, Protocol, Request, Response, ResponseCode, ResponseItem};
use crate::topics::{GossipKind, GossipTopic};

/// The stream multiplexers offered on TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Muxers {
    /// yamux preferred, mplex accepted (what mainnet peers negotiate).
    #[default]
    YamuxAndMplex,
    /// yamux only.
    Yamux,
    /// mplex only.
    Mplex,
}

/// How to run the network.
#[derive(Debug, Clone)]
pub struct NetworkConfig {
    /// Address to listen on (TCP, QUIC and discv5).
    pub listen_address: IpAddr,
    /// TCP port; 0 picks a free one; `None` disables TCP listening.
    pub tcp_port: Option<u16>,
    /// QUIC (UDP) port; 0 picks a free one; `None` disables QUIC listening.
    pub quic_port: Option<u16>,
    /// discv5 UDP port; 0 picks a free one; `None` disables discovery.
    pub discovery_port: Option<u16>,
    /// Address advertised in the ENR (defaults to the listen address, loopback if unspecified).
    pub enr_address: Option<IpAddr>,
    /// ENRs to bootstrap discovery from.
    pub boot_nodes: Vec<Enr>,
    /// Addresses dialed at start.
    pub static_peers: Vec<Multiaddr>,
    /// Muxers offered on TCP.
    pub muxers: Muxers,
    /// The node's secp256k1 identity; generated when `None`.
    pub keypair: Option<Keypair>,
    /// `genesis_validators_root`, for fork digests.
    pub genesis_validators_root: Root,
    /// The wall-clock epoch at start (the service is told of new epochs with
    /// [`NetworkHandle::update_epoch`]).
    pub current_epoch: Epoch,
    /// Gossip topic kinds to subscribe to at start (on the current digest).
    pub gossip_kinds: Vec<GossipKind>,
    /// The node's custody group count (`cgc` in the ENR and metadata).
    pub custody_group_count: u64,
    /// Long-lived attestation subnets advertised in `attnets`.
    pub attnets: Vec<u64>,
    /// Sync committee subnets advertised in `syncnets`.
    pub syncnets: Vec<u64>,
    /// Peer manager tuning.
    pub peer_manager: PeerManagerConfig,
    /// Req/resp quotas (applied to inbound requests and to our own outbound requests).
    pub rate_limits: RateLimiterConfig,
    /// How often the service runs its heartbeat (pruning, discovery, score checks).
    pub heartbeat_interval: Duration,
    /// Capacity of the event channel to the application. When it is full, a gossip message is
    /// dropped, given an IGNORE verdict at once and counted (`network_events_dropped_total`);
    /// every other event waits in the service's backlog (see `event_backlog_limit`).
    pub event_capacity: usize,
    /// Most control events (every event but gossip) the service holds while the event channel
    /// is full. At the limit it stops reading from peers (the swarm and the req/resp tasks) until
    /// the application catches up, so peers are slowed by the transports' flow control instead
    /// of events being lost or memory growing. Commands are still served meanwhile; events
    /// they cause (a refused request, a ban) may take the backlog past the limit, by as many
    /// commands as the application sends.
    pub event_backlog_limit: usize,
    /// Most inbound req/resp streams handled at once, all peers together.
    pub max_concurrent_inbound: usize,
    /// Whether the node's light-client server is on: only then are the four light-client
    /// req/resp protocols offered to peers.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#the-reqresp-domain
    pub light_client_server: bool,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            listen_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            tcp_port: Some(9000),
            quic_port: Some(9001),
            discovery_port: Some(9000),
            enr_address: None,
            boot_nodes: Vec::new(),
            static_peers: Vec::new(),
            muxers: Muxers::default(),
            keypair: None,
            genesis_validators_root: Root::ZERO,
            current_epoch: 0,
            gossip_kinds: Vec::new(),
            custody_group_count: 4,
            attnets: Vec::new(),
            syncnets: Vec::new(),
            peer_manager: PeerManagerConfig::default(),
            rate_limits: RateLimiterConfig::default(),
            heartbeat_interval: Duration::from_secs(5),
            event_capacity: 4096,
            event_backlog_limit: 4096,
            max_concurrent_inbound: 512,
            light_client_server: true,
        }
    }
}

/// How far apart two connections of one peer must have been established for the later one to
/// be taken for a restarted peer's (the earlier one dead), rather than for the other half of a
/// simultaneous dial from both sides, whose two connections come up within a handshake of each
/// other.
pub const STALE_CONNECTION_AGE: Duration = Duration::from_secs(2);

impl NetworkConfig {
    /// A configuration for tests and local devnets: loopback, every port picked by the OS.
    pub fn local(genesis_validators_root: Root) -> Self {
        Self {
            listen_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            tcp_port: Some(0),
            quic_port: Some(0),
            discovery_port: Some(0),
            genesis_validators_root,
            heartbeat_interval: Duration::from_millis(500),
            ..Self::default()
        }
    }
}

/// Why the network could not start.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// The identity is not secp256k1.
    #[error("the node key must be secp256k1")]
    KeyType,
    /// Building the transport or behaviour failed.
    #[error("cannot build the swarm: {0}")]
    Build(String),
    /// Listening failed.
    #[error("cannot listen on {0}: {1}")]
    Listen(Multiaddr, String),
    /// The ENR could not be built.
    #[error(transparent)]
    Enr(#[from] crate::enr::EnrError),
    /// discv5 could not start.
    #[error(transparent)]
    Discovery(#[from] crate::discovery::DiscoveryError),
    /// A socket operation failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The service's metrics could not be created.
    #[error("cannot create the network metrics: {0}")]
    Metrics(#[from] prometheus::Error),
}

/// Identifies a request we sent, in [`NetworkEvent::ResponseReceived`] and
/// [`NetworkEvent::RequestFailed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutboundRequestId(pub u64);

/// Identifies a request a peer sent us; answer it with [`NetworkHandle::send_response`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InboundRequestId(pub u64);

/// Why an outbound request produced no response.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The stream could not be opened (not connected, protocol unsupported).
    #[error("cannot open stream: {0}")]
    OpenStream(String),
    /// The peer sent malformed data.
    #[error(transparent)]
    Codec(#[from] RpcCodecError),
    /// The peer did not answer in time.
    #[error("timed out")]
    Timeout,
    /// Our own quota for this peer and protocol is spent.
    #[error(transparent)]
    RateLimited(#[from] RateLimitError),
    /// The network service stopped.
    #[error("network service stopped")]
    Shutdown,
}

/// What the network tells the application.
#[derive(Debug)]
pub enum NetworkEvent<E: EthSpec> {
    /// A peer connected (first connection).
    PeerConnected {
        /// The peer.
        peer_id: PeerId,
        /// Who dialed whom.
        direction: ConnectionDirection,
        /// The peer's address on this connection.
        address: Multiaddr,
    },
    /// A peer's last connection closed.
    PeerDisconnected {
        /// The peer.
        peer_id: PeerId,
    },
    /// A peer was banned.
    PeerBanned {
        /// The peer.
        peer_id: PeerId,
    },
    /// A peer subscribed to a topic.
    PeerSubscribed {
        /// The peer.
        peer_id: PeerId,
        /// The topic it subscribed to.
        topic: GossipTopic,
    },
    /// A peer sent a Goodbye.
    Goodbye {
        /// The peer.
        peer_id: PeerId,
        /// The Goodbye reason code (1 client shut down, 2 irrelevant network, 3 fault/error).
        reason: u64,
    },
    /// A peer's metadata (fetched by the service on connection and on a higher Ping sequence).
    PeerMetaData {
        /// The peer.
        peer_id: PeerId,
        /// Its metadata as it answered.
        metadata: MetaData,
    },
    /// A request that needs the chain (Status, blocks, sidecars, light client). Answer with
    /// [`NetworkHandle::send_response`]; Ping, MetaData and Goodbye are answered by the service.
    RequestReceived {
        /// The peer that sent the request.
        peer_id: PeerId,
        /// The id to answer it under.
        request_id: InboundRequestId,
        /// The decoded request.
        request: Request<E>,
    },
    /// The full response to one of our requests.
    ResponseReceived {
        /// The peer that answered.
        peer_id: PeerId,
        /// The id our request was sent under.
        request_id: OutboundRequestId,
        /// Every response chunk, decoded.
        response: Response<E>,
    },
    /// One of our requests failed.
    RequestFailed {
        /// The peer the request was sent to.
        peer_id: PeerId,
        /// The id our request was sent under.
        request_id: OutboundRequestId,
        /// Why it failed.
        error: RpcError,
    },
    /// A decoded gossip message; report its validation result with
    /// [`NetworkHandle::report_validation`].
    GossipMessage {
        /// The peer that forwarded the message to us (not necessarily its author).
        source: PeerId,
        /// The gossipsub message id, to report validation under.
        message_id: MessageId,
        /// The topic it arrived on.
        topic: GossipTopic,
        /// The decoded message.
        message: PubsubMessage<E>,
    },
}

/// The receiving half of the event stream.
pub struct NetworkEvents<E: EthSpec> {
    rx: mpsc::Receiver<NetworkEvent<E>>,
}

impl<E: EthSpec> NetworkEvents<E> {
    /// The next event; `None` once the service stopped.
    pub async fn recv(&mut self) -> Option<NetworkEvent<E>> {
        self.rx.recv().await
    }
}

/// Gossip validation verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validation {
    /// Valid: forward it.
    Accept,
    /// Not forwarded, no penalty.
    Ignore,
    /// Invalid: not forwarded, the source is penalised.
    Reject,
}

enum Command<E: EthSpec> {
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

enum Query {
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
    tx: mpsc::UnboundedSender<Command<E>>,
    next_request_id: Arc<AtomicU64>,
    local_peer_id: PeerId,
    listen_addrs: Vec<Multiaddr>,
    local_enr: Option<Enr>,
    fork_context: Arc<ForkContext>,
    metrics: Arc<Metrics>,
    /// Bumped whenever a peer connects or leaves, or its identify or MetaData answer arrives.
    peer_table: watch::Receiver<u64>,
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

#[derive(NetworkBehaviour)]
struct Behaviour {
    gossipsub: GossipBehaviour,
    identify: identify::Behaviour,
    stream: libp2p_stream::Behaviour,
    dial_gate: DialGate,
}

/// Dials through the [`DialGate`]: the one way the service dials (any other dial to a named
/// peer is denied). A dial to a named peer is remembered in `dials` until it connects or fails.
fn dial(
    swarm: &mut Swarm<Behaviour>,
    dials: &mut DialsUnderWay,
    opts: DialOpts,
) -> Result<(), libp2p::swarm::DialError> {
    let peer = opts.get_peer_id();
    let connection_id = opts.connection_id();
    swarm.behaviour_mut().dial_gate.open_for(peer);
    let dialed = swarm.dial(opts);
    swarm.behaviour_mut().dial_gate.close();
    if let (Ok(()), Some(peer)) = (&dialed, peer) {
        dials.entry(peer).or_default().push(connection_id);
    }
    dialed
}

/// Our dials still under way, by peer.
type DialsUnderWay = HashMap<PeerId, Vec<libp2p::swarm::ConnectionId>>;

/// Messages from the spawned stream tasks to the service loop.
enum Internal<E: EthSpec> {
    InboundRequest {
        peer_id: PeerId,
        request: Request<E>,
        respond: oneshot::Sender<Response<E>>,
    },
    InboundError {
        peer_id: PeerId,
        protocol: Protocol,
        error: RpcCodecError,
    },
    OutboundDone {
        peer_id: PeerId,
        request_id: Option<OutboundRequestId>,
        result: Result<Response<E>, RpcError>,
    },
}

/// Starts the network: builds the swarm, listens, builds the ENR, starts discv5 and spawns the
/// service task on the current tokio runtime.
pub async fn start<E: EthSpec>(
    config: NetworkConfig,
    spec: ChainSpec,
) -> Result<(NetworkHandle<E>, NetworkEvents<E>), NetworkError> {
    let keypair = config
        .keypair
        .clone()
        .unwrap_or_else(Keypair::generate_secp256k1);
    let enr_key = enr_key_from_keypair(&keypair).map_err(|_| NetworkError::KeyType)?;
    let local_peer_id = keypair.public().to_peer_id();
    let fork_context = Arc::new(ForkContext::new(spec, config.genesis_validators_root));
    let slots_per_epoch = E::SlotsPerEpoch::to_u64();
    let slot = Duration::from_millis(fork_context.spec().slot_duration_ms.max(1));

    let behaviour = |key: &Keypair| -> Result<Behaviour, Box<dyn std::error::Error + Send + Sync>> {
        let gossip_config = gossipsub_config(fork_context.clone(), slots_per_epoch)?;
        let mut gossipsub = GossipBehaviour::new_with_subscription_filter(
            MessageAuthenticity::Anonymous,
            gossip_config,
            crate::gossip::subscription_filter(),
        )
        .map_err(String::from)?;
        gossipsub.with_peer_score(
            peer_score_params(slot, slots_per_epoch as u32),
            peer_score_thresholds(),
        )?;
        let identify = identify::Behaviour::new(
            identify::Config::new("eth2/1.0.0".into(), key.public())
                .with_agent_version(format!("arbor/{}", env!("CARGO_PKG_VERSION"))),
        );
        Ok(Behaviour {
            gossipsub,
            identify,
            stream: libp2p_stream::Behaviour::new(),
            dial_gate: DialGate::default(),
        })
    };

    macro_rules! build_swarm {
        ($muxer:expr) => {
            libp2p::SwarmBuilder::with_existing_identity(keypair.clone())
                .with_tokio()
                .with_tcp(
                    tcp::Config::default().nodelay(true),
                    noise::Config::new,
                    $muxer,
                )
                .map_err(|e| NetworkError::Build(e.to_string()))?
                .with_quic()
                .with_behaviour(|key| behaviour(key))
                .map_err(|e| NetworkError::Build(e.to_string()))?
                .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
                .build()
        };
    }
    let mut swarm: Swarm<Behaviour> = match config.muxers {
        Muxers::YamuxAndMplex => {
            build_swarm!((yamux::Config::default, libp2p_mplex::Config::default))
        }
        Muxers::Yamux => build_swarm!(yamux::Config::default),
        Muxers::Mplex => build_swarm!(libp2p_mplex::Config::default),
    };

    // Listen, then learn the ports the OS picked.
    let ip_proto = match config.listen_address {
        IpAddr::V4(ip) => MaProtocol::Ip4(ip),
        IpAddr::V6(ip) => MaProtocol::Ip6(ip),
    };
    let mut expected = 0;
    if let Some(port) = config.tcp_port {
        let addr = Multiaddr::empty()
            .with(ip_proto.clone())
            .with(MaProtocol::Tcp(port));
        swarm
            .listen_on(addr.clone())
            .map_err(|e| NetworkError::Listen(addr, e.to_string()))?;
        expected += 1;
    }
    if let Some(port) = config.quic_port {
        let addr = Multiaddr::empty()
            .with(ip_proto.clone())
            .with(MaProtocol::Udp(port))
            .with(MaProtocol::QuicV1);
        swarm
            .listen_on(addr.clone())
            .map_err(|e| NetworkError::Listen(addr, e.to_string()))?;
        expected += 1;
    }
    let mut listen_addrs: Vec<Multiaddr> = Vec::new();
    while listen_addrs.len() < expected {
        match tokio::time::timeout(Duration::from_secs(10), swarm.select_next_some()).await {
            Ok(SwarmEvent::NewListenAddr { address, .. }) => listen_addrs.push(address),
            Ok(SwarmEvent::ListenerError { error, .. }) => {
                return Err(NetworkError::Build(error.to_string()));
            }
            Ok(_) => {}
            Err(_) => return Err(NetworkError::Build("listeners did not start".into())),
        }
    }
    let port_of = |tcp: bool| {
        listen_addrs.iter().find_map(|a| {
            let mut port = None;
            let mut is_quic = false;
            for p in a.iter() {
                match p {
                    MaProtocol::Tcp(p) if tcp => port = Some(p),
                    MaProtocol::Udp(p) if !tcp => port = Some(p),
                    MaProtocol::QuicV1 => is_quic = true,
                    _ => {}
                }
            }
            if tcp != is_quic { port } else { None }
        })
    };
    let tcp_port = port_of(true);
    let quic_port = port_of(false);

    let metadata = MetaData {
        seq_number: 1,
        attnets: bits::<U64>(&config.attnets),
        syncnets: bits::<U4>(&config.syncnets),
        custody_group_count: config.custody_group_count,
    };

    let (internal_tx, internal_rx) = mpsc::channel(1024);
    let (discovery_tx, discovery_rx) = mpsc::channel(256);
    let mut discovery = None;
    let mut local_enr = None;
    let mut boot_dials = 0u64;
    let mut dials_under_way = DialsUnderWay::new();
    if let Some(port) = config.discovery_port {
        let port = if port == 0 {
            free_udp_port(config.listen_address)?
        } else {
            port
        };
        let ip = advertised_ip(config.enr_address.unwrap_or(config.listen_address));
        let fields = LocalEnrFields {
            ip,
            udp_port: Some(port),
            tcp_port,
            quic_port,
            fork_id: enr_fork_id(&fork_context, config.current_epoch),
            attnets: metadata.attnets.clone(),
            syncnets: metadata.syncnets.clone(),
            custody_group_count: fulu_scheduled(&fork_context)
                .then_some(metadata.custody_group_count),
            next_fork_digest: fulu_scheduled(&fork_context)
                .then(|| next_fork_digest(&fork_context, config.current_epoch)),
        };
        let enr = build_enr(&enr_key, &fields, 1)?;
        let disc = Discovery::start(
            enr.clone(),
            enr_key,
            SocketAddr::new(config.listen_address, port),
            &config.boot_nodes,
            discovery_tx.clone(),
        )
        .await?;
        local_enr = Some(enr);
        // Boot nodes that advertise a libp2p address are dialed at once.
        for boot in &config.boot_nodes {
            if let Ok(peer) = boot.peer_id() {
                let addrs = boot.multiaddrs();
                if !addrs.is_empty()
                    && dial(
                        &mut swarm,
                        &mut dials_under_way,
                        DialOpts::peer_id(peer).addresses(addrs).build(),
                    )
                    .is_ok()
                {
                    boot_dials += 1;
                }
            }
        }
        discovery = Some(disc);
    }
    for addr in &config.static_peers {
        match dial(&mut swarm, &mut dials_under_way, addr.clone().into()) {
            Ok(()) => boot_dials += 1,
            Err(e) => tracing::warn!(%addr, error = %e, "cannot dial static peer"),
        }
    }

    // One accept loop per req/resp protocol.
    let control = swarm.behaviour().stream.new_control();
    let inbound_permits = Arc::new(Semaphore::new(config.max_concurrent_inbound));
    for protocol in Protocol::ALL {
        if protocol.is_light_client() && !config.light_client_server {
            continue;
        }
        let mut accept_control = control.clone();
        let mut incoming = accept_control
            .accept(StreamProtocol::new(protocol.protocol_id()))
            .map_err(|e| NetworkError::Build(e.to_string()))?;
        let internal = internal_tx.clone();
        let fork_context = fork_context.clone();
        let permits = inbound_permits.clone();
        tokio::spawn(async move {
            while let Some((peer_id, stream)) = incoming.next().await {
                // Beyond the permit count, streams are dropped (reset) instead of queued.
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    continue;
                };
                let internal = internal.clone();
                let fork_context = fork_context.clone();
                tokio::spawn(async move {
                    handle_inbound_stream::<E>(peer_id, protocol, stream, internal, fork_context)
                        .await;
                    drop(permit);
                });
            }
        });
    }

    let metrics = Arc::new(Metrics::new()?);
    metrics
        .dials
        .with_label_values(&["boot"])
        .inc_by(boot_dials);
    let (event_tx, event_rx) = mpsc::channel(config.event_capacity.max(1));
    let (command_tx, command_rx) = mpsc::unbounded_channel();
    let (peer_table, peer_table_rx) = watch::channel(0);
    let handle = NetworkHandle {
        tx: command_tx,
        next_request_id: Arc::new(AtomicU64::new(1)),
        local_peer_id,
        listen_addrs,
        local_enr,
        fork_context: fork_context.clone(),
        metrics: metrics.clone(),
        peer_table: peer_table_rx,
    };

    let current_digest = fork_context.digest_at_epoch(config.current_epoch);
    let mut service = Service {
        swarm,
        control,
        fork_context,
        discovery,
        peer_manager: PeerManager::new(config.peer_manager.clone()),
        inbound_limiter: RateLimiter::new(config.rate_limits.clone()),
        outbound_limiter: RateLimiter::new(config.rate_limits.clone()),
        metadata,
        current_epoch: config.current_epoch,
        current_digest,
        subscribed_kinds: BTreeSet::new(),
        subscribed_topics: HashSet::new(),
        pending_inbound: HashMap::new(),
        next_inbound_id: 1,
        internal_tx,
        events: EventSender::new(event_tx, config.event_backlog_limit.max(1), metrics.clone()),
        metrics,
        connection_addrs: HashMap::new(),
        connection_ids: HashMap::new(),
        redial_after_close: HashMap::new(),
        pending_disconnects: HashMap::new(),
        dials_under_way,
        stale_dials: HashSet::new(),
        peer_table,
        slot,
        slots_per_epoch: slots_per_epoch as u32,
    };
    for kind in config.gossip_kinds {
        service.subscribed_kinds.insert(kind);
    }
    service.refresh_subscriptions();
    let heartbeat = config.heartbeat_interval;
    tokio::spawn(service.run(command_rx, internal_rx, discovery_rx, heartbeat));
    Ok((handle, NetworkEvents { rx: event_rx }))
}

use ssz_types::typenum::Unsigned;

fn bits<N: Unsigned + Clone>(indices: &[u64]) -> BitVector<N> {
    let mut bits = BitVector::<N>::new();
    for index in indices {
        // Indices beyond the vector are ignored: the caller's subnet ids come from the spec's
        // subnet counts.
        let _ = bits.set(*index as usize, true);
    }
    bits
}

fn fulu_scheduled(fork_context: &ForkContext) -> bool {
    fork_context.spec().fork_epoch(ForkName::Fulu).is_some()
}

/// `ENRForkID` at `epoch`.
///
/// [spec]: fulu/p2p-interface.md#eth2-field
pub fn enr_fork_id(fork_context: &ForkContext, epoch: Epoch) -> EnrForkId {
    let next = fork_context.next_boundary(epoch);
    EnrForkId {
        fork_digest: fork_context.digest_at_epoch(epoch),
        next_fork_version: fork_context.next_fork_version(epoch),
        next_fork_epoch: next.map(|b| b.epoch).unwrap_or(FAR_FUTURE_EPOCH),
    }
}

/// `nfd` at `epoch`: the next digest (regular or BPO fork), zero when none is scheduled.
///
/// [spec]: fulu/p2p-interface.md#next-fork-digest
pub fn next_fork_digest(fork_context: &ForkContext, epoch: Epoch) -> ForkDigest {
    fork_context
        .next_boundary(epoch)
        .map(|b| b.digest)
        .unwrap_or_default()
}

/// Reads a request, hands it to the service, waits for the answer and writes it.
async fn handle_inbound_stream<E: EthSpec>(
    peer_id: PeerId,
    protocol: Protocol,
    mut stream: libp2p::Stream,
    internal: mpsc::Sender<Internal<E>>,
    fork_context: Arc<ForkContext>,
) {
    let spec = fork_context.spec();
    let resp_timeout = Duration::from_secs(spec.resp_timeout.max(1));
    let read = tokio::time::timeout(
        resp_timeout,
        read_request::<E, _>(&mut stream, protocol, spec),
    )
    .await;
    let request = match read {
        Ok(Ok(request)) => request,
        // The stream failed under the request (the connection closed, most often as the peer
        // left): not malformed input, and no answer can reach the peer.
        Ok(Err(RpcCodecError::Io(error))) => {
            tracing::debug!(%peer_id, %protocol, %error, "inbound request stream failed");
            return;
        }
        Ok(Err(error)) => {
            let message = error.to_string();
            let _ = write_and_close(
                &mut stream,
                &encode_error_chunk(ResponseCode::INVALID_REQUEST, &message),
            )
            .await;
            let _ = internal
                .send(Internal::InboundError {
                    peer_id,
                    protocol,
                    error,
                })
                .await;
            return;
        }
        Err(_) => return,
    };
    let (respond, answer) = oneshot::channel();
    if internal
        .send(Internal::InboundRequest {
            peer_id,
            request,
            respond,
        })
        .await
        .is_err()
    {
        return;
    }
    let response = match tokio::time::timeout(resp_timeout, answer).await {
        Ok(Ok(response)) => response,
        // The application dropped or did not answer in time.
        _ => Response::error(ResponseCode::SERVER_ERROR, "no response"),
    };
    // Chunk by chunk, each flushed on its own (see `write_chunk`), within the response timeout
    // so that a peer that stops reading does not hold the stream's task.
    match tokio::time::timeout(
        resp_timeout,
        write_response(&mut stream, protocol, &response, &fork_context),
    )
    .await
    {
        Ok(Ok(())) => {}
        Ok(Err(RpcCodecError::WrongItem(protocol))) => {
            tracing::warn!(%peer_id, %protocol, "a response item of the wrong kind was answered with SERVER_ERROR");
        }
        Ok(Err(error)) => tracing::debug!(%peer_id, %protocol, %error, "writing a response failed"),
        Err(_) => tracing::debug!(%peer_id, %protocol, "writing a response timed out"),
    }
}

/// Attempts at opening an outbound stream when the transport loses the request.
const OPEN_STREAM_ATTEMPTS: u64 = 3;

/// Opens a stream, writes the request and reads the response within the spec's timeouts.
async fn run_outbound<E: EthSpec>(
    mut control: libp2p_stream::Control,
    peer_id: PeerId,
    request: Request<E>,
    fork_context: Arc<ForkContext>,
) -> Result<Response<E>, RpcError> {
    let spec = fork_context.spec();
    let ttfb = Duration::from_secs(spec.ttfb_timeout.max(1));
    let resp_timeout = Duration::from_secs(spec.resp_timeout.max(1));
    let protocol = request.protocol();
    // A stream request can be lost when the connection it was queued on closes (a duplicate
    // connection from a simultaneous dial, say); it is retried on the remaining connection.
    let mut attempt = 0;
    let mut stream = loop {
        attempt += 1;
        let opened = tokio::time::timeout(
            resp_timeout,
            control.open_stream(peer_id, StreamProtocol::new(protocol.protocol_id())),
        )
        .await
        .map_err(|_| RpcError::Timeout)?;
        match opened {
            Ok(stream) => break stream,
            Err(libp2p_stream::OpenStreamError::Io(e)) if attempt < OPEN_STREAM_ATTEMPTS => {
                tracing::debug!(%peer_id, error = %e, attempt, "stream open failed; retrying");
                tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
            }
            Err(e) => return Err(RpcError::OpenStream(e.to_string())),
        }
    };
    tokio::time::timeout(
        resp_timeout,
        write_and_close(&mut stream, &encode_request(&request)),
    )
    .await
    .map_err(|_| RpcError::Timeout)??;
    let max = request.max_response_chunks(spec);
    let mut response = Response::success(Vec::new());
    let mut first = true;
    loop {
        let limit = if first { ttfb } else { resp_timeout };
        first = false;
        let chunk = tokio::time::timeout(
            limit,
            read_response_chunk::<E, _>(&mut stream, protocol, &fork_context),
        )
        .await
        .map_err(|_| RpcError::Timeout)??;
        match chunk {
            None => break,
            Some(Ok(item)) => {
                if response.items.len() as u64 >= max {
                    return Err(RpcCodecError::TooManyChunks { max }.into());
                }
                response.items.push(item);
            }
            Some(Err(error)) => {
                response.error = Some(error);
                break;
            }
        }
    }
    Ok(response)
}

/// The kind of an event, for the drop counter.
fn event_kind<E: EthSpec>(event: &NetworkEvent<E>) -> EventKind {
    match event {
        NetworkEvent::PeerConnected { .. } => EventKind::PeerConnected,
        NetworkEvent::PeerDisconnected { .. } => EventKind::PeerDisconnected,
        NetworkEvent::PeerBanned { .. } => EventKind::PeerBanned,
        NetworkEvent::PeerSubscribed { .. } => EventKind::PeerSubscribed,
        NetworkEvent::Goodbye { .. } => EventKind::Goodbye,
        NetworkEvent::PeerMetaData { .. } => EventKind::PeerMetaData,
        NetworkEvent::RequestReceived { .. } => EventKind::RequestReceived,
        NetworkEvent::ResponseReceived { .. } => EventKind::ResponseReceived,
        NetworkEvent::RequestFailed { .. } => EventKind::RequestFailed,
        NetworkEvent::GossipMessage { .. } => EventKind::GossipMessage,
    }
}

/// A gossip message the application will not see: gossipsub still waits for its verdict.
#[derive(Debug, PartialEq, Eq)]
struct UndeliveredGossip {
    message_id: MessageId,
    source: PeerId,
}

/// The sending side of the event channel. Gossip is delivered when there is room and dropped
/// (counted, its verdict left to the caller) when there is none; every other event is
/// delivered in order, waiting in `backlog` while the channel is full. Only the closing of the
/// receiver loses a control event (counted too).
struct EventSender<E: EthSpec> {
    tx: mpsc::Sender<NetworkEvent<E>>,
    /// Control events, oldest first, waiting for room in the channel.
    backlog: VecDeque<NetworkEvent<E>>,
    /// From this many backlog entries on, the service reads nothing more from peers.
    backlog_limit: usize,
    metrics: Arc<Metrics>,
}

impl<E: EthSpec> EventSender<E> {
    fn new(tx: mpsc::Sender<NetworkEvent<E>>, backlog_limit: usize, metrics: Arc<Metrics>) -> Self {
        Self {
            tx,
            backlog: VecDeque::new(),
            backlog_limit,
            metrics,
        }
    }

    /// Delivers `event` or queues it; returns the gossip message it had to drop, if it did.
    fn send(&mut self, event: NetworkEvent<E>) -> Option<UndeliveredGossip> {
        match event {
            NetworkEvent::GossipMessage {
                source,
                message_id,
                topic,
                message,
            } => {
                // Behind a backlog the channel counts as full: gossip does not overtake the
                // control events queued before it.
                if self.backlog.is_empty()
                    && let Ok(permit) = self.tx.try_reserve()
                {
                    permit.send(NetworkEvent::GossipMessage {
                        source,
                        message_id,
                        topic,
                        message,
                    });
                    None
                } else {
                    self.metrics.event_dropped(EventKind::GossipMessage);
                    Some(UndeliveredGossip { message_id, source })
                }
            }
            event => {
                self.send_control(event);
                None
            }
        }
    }

    /// Delivers a control event, or queues it behind the backlog; never drops it while the
    /// receiver lives.
    fn send_control(&mut self, event: NetworkEvent<E>) {
        let reserved = if self.backlog.is_empty() {
            self.tx.try_reserve()
        } else if self.tx.is_closed() {
            Err(TrySendError::Closed(()))
        } else {
            Err(TrySendError::Full(()))
        };
        match reserved {
            Ok(permit) => permit.send(event),
            Err(TrySendError::Full(())) => self.backlog.push_back(event),
            Err(TrySendError::Closed(())) => self.metrics.event_dropped(event_kind(&event)),
        }
        self.update_backlog_gauge();
    }

    fn has_backlog(&self) -> bool {
        !self.backlog.is_empty()
    }

    fn is_backpressured(&self) -> bool {
        self.backlog.len() >= self.backlog_limit
    }

    /// Waits for room in the channel, then moves as much of the backlog as fits. Cancel-safe:
    /// nothing leaves the backlog before its slot is reserved.
    async fn flush(&mut self) {
        if self.backlog.is_empty() {
            return;
        }
        match self.tx.reserve().await {
            Ok(permit) => {
                if let Some(event) = self.backlog.pop_front() {
                    permit.send(event);
                }
                while !self.backlog.is_empty() {
                    let Ok(permit) = self.tx.try_reserve() else {
                        break;
                    };
                    if let Some(event) = self.backlog.pop_front() {
                        permit.send(event);
                    }
                }
            }
            // The application is gone: nobody will read these.
            Err(_) => {
                for event in self.backlog.drain(..) {
                    self.metrics.event_dropped(event_kind(&event));
                }
            }
        }
        self.update_backlog_gauge();
    }

    fn update_backlog_gauge(&self) {
        self.metrics.event_backlog.set(self.backlog.len() as i64);
    }
}

struct Service<E: EthSpec> {
    swarm: Swarm<Behaviour>,
    control: libp2p_stream::Control,
    fork_context: Arc<ForkContext>,
    discovery: Option<Discovery>,
    peer_manager: PeerManager,
    inbound_limiter: RateLimiter,
    outbound_limiter: RateLimiter,
    metadata: MetaData,
    current_epoch: Epoch,
    current_digest: ForkDigest,
    subscribed_kinds: BTreeSet<GossipKind>,
    subscribed_topics: HashSet<GossipTopic>,
    pending_inbound: HashMap<InboundRequestId, oneshot::Sender<Response<E>>>,
    next_inbound_id: u64,
    internal_tx: mpsc::Sender<Internal<E>>,
    events: EventSender<E>,
    metrics: Arc<Metrics>,
    connection_addrs: HashMap<PeerId, Vec<Multiaddr>>,
    /// Each connected peer's connections and when they were established.
    connection_ids: HashMap<PeerId, Vec<(libp2p::swarm::ConnectionId, Instant)>>,
    /// Restarted peers whose connections are being closed, with the addresses to dial them
    /// back at once the last one has closed (see the `ConnectionEstablished` arm).
    redial_after_close: HashMap<PeerId, Vec<Multiaddr>>,
    /// Why we are closing a peer's connections, until the last one has closed.
    pending_disconnects: HashMap<PeerId, DisconnectReason>,
    /// Our dials still under way, by peer.
    dials_under_way: DialsUnderWay,
    /// Dials that were under way when their peer's last connection closed: started before
    /// that disconnect, they must not undo it (and its redial backoff) when they complete; a
    /// connection one of them establishes is closed at once, never announced.
    stale_dials: HashSet<libp2p::swarm::ConnectionId>,
    /// See [`NetworkHandle::peer_table_changes`].
    peer_table: watch::Sender<u64>,
    slot: Duration,
    slots_per_epoch: u32,
}

impl<E: EthSpec> Service<E> {
    async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command<E>>,
        mut internal: mpsc::Receiver<Internal<E>>,
        mut discovery: mpsc::Receiver<DiscoveryEvent>,
        heartbeat: Duration,
    ) {
        let mut heartbeat = tokio::time::interval(heartbeat);
        loop {
            // With the backlog at its limit, nothing more is read from peers until the
            // application makes room; commands and the heartbeat go on.
            let reading = !self.events.is_backpressured();
            let flushing = self.events.has_backlog();
            tokio::select! {
                event = self.swarm.select_next_some(), if reading => self.on_swarm_event(event),
                command = commands.recv() => match command {
                    Some(Command::Shutdown) | None => break,
                    Some(command) => self.on_command(command),
                },
                Some(message) = internal.recv(), if reading => self.on_internal(message),
                Some(event) = discovery.recv() => self.on_discovery(event),
                () = self.events.flush(), if flushing => {}
                _ = heartbeat.tick() => self.on_heartbeat(),
            }
        }
        tracing::debug!(
            backlog = self.events.backlog.len(),
            "network service stopped"
        );
    }

    /// Sends an event to the application. A gossip message that finds no room is given an
    /// IGNORE verdict here, so gossipsub neither waits for it nor forwards it.
    fn emit(&mut self, event: NetworkEvent<E>) {
        if let Some(UndeliveredGossip { message_id, source }) = self.events.send(event) {
            tracing::debug!(
                %message_id,
                peer_id = %source,
                "event channel full: gossip message ignored"
            );
            self.apply_verdict(&message_id, &source, Validation::Ignore);
        }
    }

    /// Hands a verdict to gossipsub and counts it, as applied or as late (gossipsub no longer
    /// held the message).
    fn apply_verdict(&mut self, message_id: &MessageId, source: &PeerId, validation: Validation) {
        let acceptance = match validation {
            Validation::Accept => MessageAcceptance::Accept,
            Validation::Ignore => MessageAcceptance::Ignore,
            Validation::Reject => MessageAcceptance::Reject,
        };
        let applied = self
            .swarm
            .behaviour_mut()
            .gossipsub
            .report_message_validation_result(message_id, source, acceptance);
        self.metrics.verdict(validation, applied);
    }

    fn active_digests(&self) -> Vec<ForkDigest> {
        let ctx = &self.fork_context;
        let epoch = self.current_epoch;
        let mut digests = vec![ctx.digest_at_epoch(epoch)];
        // Subscribe to the next digest's topics one epoch before the boundary.
        if let Some(next) = ctx.next_boundary(epoch)
            && next.epoch <= epoch + 1
        {
            digests.push(next.digest);
        }
        // Keep the previous digest's topics for two epochs after the boundary.
        let current = ctx.boundary_at_epoch(epoch);
        if let Some(previous) = ctx.previous_boundary(epoch)
            && epoch < current.epoch + 2
        {
            digests.push(previous.digest);
        }
        digests
    }

    /// Subscribes to every wanted kind on every active digest and drops the rest.
    fn refresh_subscriptions(&mut self) {
        let mut wanted = HashSet::new();
        for digest in self.active_digests() {
            let Some(fork) = self.fork_context.fork_of_digest(digest) else {
                continue;
            };
            for kind in &self.subscribed_kinds {
                if kind.exists_at(fork) {
                    wanted.insert(GossipTopic::new(*kind, digest));
                }
            }
        }
        let stale: Vec<GossipTopic> = self
            .subscribed_topics
            .difference(&wanted)
            .copied()
            .collect();
        for topic in stale {
            let t = gossipsub::IdentTopic::new(topic.to_string());
            self.swarm.behaviour_mut().gossipsub.unsubscribe(&t);
            self.subscribed_topics.remove(&topic);
        }
        for topic in wanted {
            if self.subscribed_topics.contains(&topic) {
                continue;
            }
            let t = gossipsub::IdentTopic::new(topic.to_string());
            let gossipsub = &mut self.swarm.behaviour_mut().gossipsub;
            let _ = gossipsub.set_topic_params(
                t.clone(),
                topic_score_params(topic.kind, self.slot, self.slots_per_epoch),
            );
            match gossipsub.subscribe(&t) {
                Ok(_) => {
                    self.subscribed_topics.insert(topic);
                }
                Err(e) => tracing::warn!(%topic, error = ?e, "cannot subscribe"),
            }
        }
    }

    fn update_enr(&mut self) {
        let Some(discovery) = &self.discovery else {
            return;
        };
        let ctx = &self.fork_context;
        let fork_id = enr_fork_id(ctx, self.current_epoch);
        discovery.enr_insert(
            ETH2_ENR_KEY,
            &alloy_rlp::Bytes::from(ssz::Encode::as_ssz_bytes(&fork_id)),
        );
        discovery.enr_insert(
            ATTNETS_ENR_KEY,
            &alloy_rlp::Bytes::from(ssz::Encode::as_ssz_bytes(&self.metadata.attnets)),
        );
        discovery.enr_insert(
            SYNCNETS_ENR_KEY,
            &alloy_rlp::Bytes::from(ssz::Encode::as_ssz_bytes(&self.metadata.syncnets)),
        );
        if fulu_scheduled(ctx) {
            discovery.enr_insert(CGC_ENR_KEY, &self.metadata.custody_group_count);
            let nfd = next_fork_digest(ctx, self.current_epoch);
            discovery.enr_insert(NFD_ENR_KEY, &alloy_rlp::Bytes::from(nfd.to_vec()));
        }
    }

    fn on_command(&mut self, command: Command<E>) {
        let now = Instant::now();
        match command {
            Command::SendRequest {
                peer_id,
                request_id,
                request,
            } => self.send_request(peer_id, Some(request_id), request, now),
            Command::SendResponse {
                request_id,
                response,
            } => {
                if let Some(respond) = self.pending_inbound.remove(&request_id) {
                    let _ = respond.send(response);
                }
            }
            Command::Publish(message) => {
                // A light-client update goes out on the digest of its attested header's epoch
                // (the previous fork's, just after a boundary).
                let digest = message.topic_slot().map_or(self.current_digest, |slot| {
                    self.fork_context.digest_at_slot::<E>(slot)
                });
                let topic = GossipTopic::new(message.kind(), digest);
                let data = message.encode();
                if let Err(e) = self
                    .swarm
                    .behaviour_mut()
                    .gossipsub
                    .publish(topic_hash(&topic), data)
                {
                    tracing::debug!(%topic, error = ?e, "publish failed");
                }
            }
            Command::ReportValidation {
                message_id,
                source,
                validation,
            } => {
                self.apply_verdict(&message_id, &source, validation);
                if validation == Validation::Reject {
                    self.report(&source, PeerAction::LowTolerance, now);
                }
            }
            Command::Subscribe(kind) => {
                self.subscribed_kinds.insert(kind);
                self.refresh_subscriptions();
            }
            Command::Unsubscribe(kind) => {
                self.subscribed_kinds.remove(&kind);
                self.refresh_subscriptions();
            }
            Command::UpdateEpoch(epoch) => {
                self.current_epoch = epoch;
                let digest = self.fork_context.digest_at_epoch(epoch);
                let digest_changed = digest != self.current_digest;
                self.current_digest = digest;
                self.refresh_subscriptions();
                if digest_changed || self.fork_context.next_boundary(epoch).is_some() {
                    self.update_enr();
                }
            }
            Command::UpdateMetadata {
                attnets,
                syncnets,
                custody_group_count,
            } => {
                self.metadata.seq_number += 1;
                self.metadata.attnets = bits::<U64>(&attnets);
                self.metadata.syncnets = bits::<U4>(&syncnets);
                self.metadata.custody_group_count = custody_group_count;
                self.update_enr();
            }
            Command::ReportPeer { peer_id, action } => self.report(&peer_id, action, now),
            Command::Ban(peer_id) => {
                self.peer_manager.ban(&peer_id, now);
                self.ban_now(peer_id);
            }
            Command::Disconnect(peer_id) => self.disconnect(peer_id, DisconnectReason::GoodbyeSent),
            Command::Dial(address) => match dial(
                &mut self.swarm,
                &mut self.dials_under_way,
                address.clone().into(),
            ) {
                Ok(()) => self.metrics.dials.with_label_values(&["command"]).inc(),
                Err(e) => tracing::debug!(%address, error = %e, "dial failed"),
            },
            Command::Query(query) => self.on_query(query, now),
            Command::Shutdown => {}
        }
    }

    /// The peer gauges follow the table, and [`NetworkHandle::peer_table_changes`] ticks.
    fn peer_table_changed(&mut self) {
        self.metrics.observe_peers(&self.peer_manager);
        self.peer_table.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn on_query(&mut self, query: Query, now: Instant) {
        match query {
            Query::ConnectedPeers(tx) => {
                let _ = tx.send(self.peer_manager.connected_peers().copied().collect());
            }
            Query::ConnectedPeerDirections(tx) => {
                let _ = tx.send(self.peer_manager.connected_directions().collect());
            }
            Query::ConnectedPeerDetails(tx) => {
                let _ = tx.send(self.peer_manager.connected_peer_details());
            }
            Query::PeerScore(peer, tx) => {
                let _ = tx.send(self.peer_manager.score(&peer, now));
            }
            Query::IsBanned(peer, tx) => {
                let _ = tx.send(self.peer_manager.is_banned(&peer, now));
            }
            Query::MeshPeers(topic, tx) => {
                let peers = self
                    .swarm
                    .behaviour()
                    .gossipsub
                    .mesh_peers(&topic_hash(&topic))
                    .copied()
                    .collect();
                let _ = tx.send(peers);
            }
            Query::Connections(peer, tx) => {
                let _ = tx.send(
                    self.connection_addrs
                        .get(&peer)
                        .cloned()
                        .unwrap_or_default(),
                );
            }
            Query::LocalEnr(tx) => {
                let _ = tx.send(self.discovery.as_ref().map(Discovery::local_enr));
            }
            Query::SubscribedTopics(tx) => {
                let mut topics: Vec<GossipTopic> = self.subscribed_topics.iter().copied().collect();
                topics.sort();
                let _ = tx.send(topics);
            }
        }
    }

    fn send_request(
        &mut self,
        peer_id: PeerId,
        request_id: Option<OutboundRequestId>,
        request: Request<E>,
        now: Instant,
    ) {
        let cost = request.max_response_chunks(self.fork_context.spec());
        let label = protocol_label(request.protocol());
        if let Err(e) = self
            .outbound_limiter
            .allows(&peer_id, request.protocol(), cost, now)
        {
            self.metrics
                .requests_held_back
                .with_label_values(&[label])
                .inc();
            if let Some(request_id) = request_id {
                self.emit(NetworkEvent::RequestFailed {
                    peer_id,
                    request_id,
                    error: e.into(),
                });
            }
            return;
        }
        self.metrics.requests_sent.with_label_values(&[label]).inc();
        let control = self.control.clone();
        let fork_context = self.fork_context.clone();
        let internal = self.internal_tx.clone();
        tokio::spawn(async move {
            let result = run_outbound(control, peer_id, request, fork_context).await;
            let _ = internal
                .send(Internal::OutboundDone {
                    peer_id,
                    request_id,
                    result,
                })
                .await;
        });
    }

    fn report(&mut self, peer_id: &PeerId, action: PeerAction, now: Instant) {
        match self.peer_manager.report_peer(peer_id, action, now) {
            ScoreOutcome::None => {}
            ScoreOutcome::Disconnect => self.disconnect(*peer_id, DisconnectReason::Score),
            ScoreOutcome::Ban => self.ban_now(*peer_id),
        }
    }

    /// Closes every connection of `peer_id`, remembering why until the last has closed (the
    /// reason counts in `network_disconnects_total` and sets the peer's redial backoff). The
    /// first reason given stays.
    fn disconnect(&mut self, peer_id: PeerId, reason: DisconnectReason) {
        self.pending_disconnects.entry(peer_id).or_insert(reason);
        // Our dials of the peer still under way would reconnect it.
        if let Some(dials) = self.dials_under_way.remove(&peer_id) {
            self.stale_dials.extend(dials);
        }
        if self.swarm.disconnect_peer_id(peer_id).is_err() {
            // Not connected: no close will come to take the reason.
            self.pending_disconnects.remove(&peer_id);
        }
    }

    /// Forgets a dial that connected or failed.
    fn dial_ended(&mut self, peer_id: PeerId, connection_id: libp2p::swarm::ConnectionId) {
        if let Some(dials) = self.dials_under_way.get_mut(&peer_id) {
            dials.retain(|id| *id != connection_id);
            if dials.is_empty() {
                self.dials_under_way.remove(&peer_id);
            }
        }
    }

    fn ban_now(&mut self, peer_id: PeerId) {
        self.swarm
            .behaviour_mut()
            .gossipsub
            .blacklist_peer(&peer_id);
        self.disconnect(peer_id, DisconnectReason::Banned);
        self.emit(NetworkEvent::PeerBanned { peer_id });
    }

    fn on_internal(&mut self, message: Internal<E>) {
        let now = Instant::now();
        match message {
            Internal::InboundRequest {
                peer_id,
                request,
                respond,
            } => {
                if self.peer_manager.is_banned(&peer_id, now) {
                    return;
                }
                let protocol = request.protocol();
                let cost = request.max_response_chunks(self.fork_context.spec());
                if let Err(e) = self.inbound_limiter.allows(&peer_id, protocol, cost, now) {
                    self.metrics
                        .requests_rate_limited
                        .with_label_values(&[protocol_label(protocol)])
                        .inc();
                    let _ =
                        respond.send(Response::error(ResponseCode::RATE_LIMITED, e.to_string()));
                    self.report(&peer_id, PeerAction::MidTolerance, now);
                    return;
                }
                match request {
                    Request::Ping(seq) => {
                        let _ = respond.send(Response::success(vec![ResponseItem::Pong(
                            self.metadata.seq_number,
                        )]));
                        let known = self
                            .peer_manager
                            .peer(&peer_id)
                            .and_then(|p| p.metadata.as_ref())
                            .map(|m| m.seq_number);
                        if known.is_none_or(|known| seq > known) {
                            self.send_request(peer_id, None, Request::MetaData, now);
                        }
                    }
                    Request::MetaData => {
                        let _ = respond.send(Response::success(vec![ResponseItem::MetaData(
                            self.metadata.clone(),
                        )]));
                    }
                    Request::Goodbye(reason) => {
                        drop(respond);
                        self.emit(NetworkEvent::Goodbye { peer_id, reason });
                        self.disconnect(peer_id, DisconnectReason::GoodbyeReceived(reason));
                    }
                    request => {
                        let request_id = InboundRequestId(self.next_inbound_id);
                        self.next_inbound_id += 1;
                        self.pending_inbound.insert(request_id, respond);
                        // Drop answers the stream task already gave up on.
                        self.pending_inbound.retain(|_, tx| !tx.is_closed());
                        self.emit(NetworkEvent::RequestReceived {
                            peer_id,
                            request_id,
                            request,
                        });
                    }
                }
            }
            Internal::InboundError {
                peer_id,
                protocol,
                error,
            } => {
                tracing::debug!(%peer_id, %protocol, %error, "invalid inbound request");
                self.report(&peer_id, PeerAction::LowTolerance, now);
            }
            Internal::OutboundDone {
                peer_id,
                request_id,
                result,
            } => {
                match &result {
                    // A stream reset or a connection closed mid-response is not malformed data
                    // and carries no fault we can tell apart from a disconnect (every request in
                    // flight fails with it when the peer leaves, and a peer is never penalised
                    // for leaving): not penalised.
                    Err(RpcError::Codec(RpcCodecError::Io(error))) => {
                        tracing::debug!(%peer_id, %error, "request failed on the stream");
                    }
                    // A timeout of a peer still connected: its fault, lightly.
                    Err(RpcError::Timeout) => {
                        if self.swarm.is_connected(&peer_id) {
                            self.report(&peer_id, PeerAction::HighTolerance, now)
                        }
                    }
                    // A response we could not decode: the request ends at the first bad chunk,
                    // so this is one penalty per request, never one per chunk.
                    Err(RpcError::Codec(_)) => self.report(&peer_id, PeerAction::LowTolerance, now),
                    Ok(response) => {
                        if let Some(ResponseItem::MetaData(metadata)) = response.items.first()
                            && let Some(info) = self.peer_manager.peer_mut(&peer_id)
                        {
                            info.metadata = Some(metadata.clone());
                            self.peer_table_changed();
                            if request_id.is_none() {
                                self.emit(NetworkEvent::PeerMetaData {
                                    peer_id,
                                    metadata: metadata.clone(),
                                });
                            }
                        }
                    }
                    Err(_) => {}
                }
                if let Some(request_id) = request_id {
                    self.emit(match result {
                        Ok(response) => NetworkEvent::ResponseReceived {
                            peer_id,
                            request_id,
                            response,
                        },
                        Err(error) => NetworkEvent::RequestFailed {
                            peer_id,
                            request_id,
                            error,
                        },
                    });
                }
            }
        }
    }

    fn on_discovery(&mut self, event: DiscoveryEvent) {
        match event {
            DiscoveryEvent::QueryDone => {
                if let Some(discovery) = &mut self.discovery {
                    discovery.query_done();
                }
            }
            DiscoveryEvent::Found(enrs) => {
                let now = Instant::now();
                let digests = self.active_digests();
                for enr in enrs {
                    if !self.peer_manager.needs_more_peers() {
                        break;
                    }
                    if !eligible(&enr, &digests) {
                        continue;
                    }
                    let Ok(peer_id) = enr.peer_id() else { continue };
                    if peer_id == *self.swarm.local_peer_id()
                        || self.swarm.is_connected(&peer_id)
                        || self.peer_manager.is_banned(&peer_id, now)
                    {
                        continue;
                    }
                    // Not again before its backoff after the last disconnect: an immediate
                    // redial re-sends Status and MetaData (refused by the peer's rate limits)
                    // and re-GRAFTs inside its PRUNE backoff.
                    if !self.peer_manager.may_redial(&peer_id, now) {
                        self.metrics.redials_held_back.inc();
                        continue;
                    }
                    if let Ok(cgc) = enr.custody_group_count() {
                        self.peer_manager
                            .on_enr_custody_group_count(peer_id, cgc, now);
                    }
                    let opts = DialOpts::peer_id(peer_id)
                        .addresses(enr.multiaddrs())
                        .build();
                    match dial(&mut self.swarm, &mut self.dials_under_way, opts) {
                        Ok(()) => self.metrics.dials.with_label_values(&["discovery"]).inc(),
                        Err(e) => {
                            tracing::debug!(%peer_id, error = %e, "dial of discovered peer failed")
                        }
                    }
                }
            }
        }
    }

    fn on_heartbeat(&mut self) {
        let now = Instant::now();
        // Gossipsub's own score: a graylisted peer is a misbehaving peer.
        let graylist = peer_score_thresholds().graylist_threshold;
        let low: Vec<PeerId> = self
            .peer_manager
            .connected_peers()
            .copied()
            .filter(|peer| {
                self.swarm
                    .behaviour()
                    .gossipsub
                    .peer_score(peer)
                    .is_some_and(|score| score < graylist)
            })
            .collect();
        for peer in low {
            self.report(&peer, PeerAction::LowTolerance, now);
        }
        let protected: Vec<u64> = self
            .subscribed_kinds
            .iter()
            .filter_map(|k| match k {
                GossipKind::Attestation(subnet) => Some(*subnet),
                _ => None,
            })
            .collect();
        for peer in self.peer_manager.peers_to_prune(&protected, now) {
            self.disconnect(peer, DisconnectReason::Excess);
        }
        self.inbound_limiter.prune(now);
        self.outbound_limiter.prune(now);
        self.pending_inbound.retain(|_, tx| !tx.is_closed());
        if self.peer_manager.needs_more_peers() {
            let digest = self.current_digest;
            if let Some(discovery) = &mut self.discovery {
                discovery.start_query(digest);
            }
        }
    }

    fn on_swarm_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
        let now = Instant::now();
        match event {
            SwarmEvent::ConnectionEstablished {
                peer_id,
                connection_id,
                endpoint,
                num_established,
                ..
            } => {
                self.dial_ended(peer_id, connection_id);
                // A dial started before the peer's disconnect, or any connection that comes
                // up while we are closing the peer's connections: part of what the disconnect
                // closes (else it would keep the peer connected and undo the disconnect).
                if self.stale_dials.remove(&connection_id)
                    || self.pending_disconnects.contains_key(&peer_id)
                {
                    tracing::debug!(%peer_id, "a connection made during or after its disconnect: closed");
                    self.swarm.close_connection(connection_id);
                    return;
                }
                let address = endpoint_addr(&endpoint);
                self.connection_addrs
                    .entry(peer_id)
                    .or_default()
                    .push(address.clone());
                let connections = self.connection_ids.entry(peer_id).or_default();
                // A peer that connects again while an old connection of it has been up for a
                // while has restarted: the old connection is dead but, over QUIC after a
                // crash, looks alive until its idle timeout. Closing only the old one is not
                // enough: gossipsub greets a peer with our subscriptions on its first
                // connection only, so the restarted peer, which lost what it knew of us, would
                // learn none of our topics, publish nothing to us and graft no mesh with us
                // until we next changed a subscription. Every connection of the peer is
                // closed, and once the last has, the peer is dialed back: the new connection
                // is a first one on both sides. Two connections a moment old are a
                // simultaneous dial from both sides: both are kept (closing on both ends
                // could close both).
                let restarted = connections
                    .iter()
                    .any(|(_, since)| now.duration_since(*since) >= STALE_CONNECTION_AGE);
                connections.push((connection_id, now));
                if restarted {
                    tracing::debug!(%peer_id, "a restarted peer reconnected: closing its connections to greet it afresh");
                    let addrs = self
                        .connection_addrs
                        .get(&peer_id)
                        .cloned()
                        .unwrap_or_default();
                    self.redial_after_close.insert(peer_id, addrs);
                    self.disconnect(peer_id, DisconnectReason::Restarted);
                    return;
                }
                let direction = ConnectionDirection::from(&endpoint);
                if num_established.get() > 1 {
                    // A second connection (both sides dialed at once): the peer is already
                    // admitted and announced; only its direction may change (outbound wins).
                    let _ = self
                        .peer_manager
                        .on_connection_established(peer_id, direction, now);
                    return;
                }
                match self
                    .peer_manager
                    .on_connection_established(peer_id, direction, now)
                {
                    Admission::Accept => {
                        self.peer_table_changed();
                        self.emit(NetworkEvent::PeerConnected {
                            peer_id,
                            direction,
                            address,
                        });
                        self.send_request(peer_id, None, Request::MetaData, now);
                    }
                    Admission::Banned => self.disconnect(peer_id, DisconnectReason::Banned),
                    Admission::Full => self.disconnect(peer_id, DisconnectReason::Excess),
                    // Its backoff after we sent it away has not passed (or its dial crossed our
                    // disconnect): closed, not announced, not counted.
                    Admission::Backoff => {
                        tracing::debug!(%peer_id, "inbound connection inside the backoff of a deliberate disconnect: closed");
                        self.disconnect(peer_id, DisconnectReason::Excess)
                    }
                }
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                connection_id,
                endpoint,
                num_established,
                cause,
                ..
            } => {
                if let Some(connections) = self.connection_ids.get_mut(&peer_id) {
                    connections.retain(|(id, _)| *id != connection_id);
                    if connections.is_empty() {
                        self.connection_ids.remove(&peer_id);
                    }
                }
                let address = endpoint_addr(&endpoint);
                if let Some(addrs) = self.connection_addrs.get_mut(&peer_id) {
                    if let Some(i) = addrs.iter().position(|a| *a == address) {
                        addrs.swap_remove(i);
                    }
                    if addrs.is_empty() {
                        self.connection_addrs.remove(&peer_id);
                    }
                }
                if num_established == 0 {
                    if let Some(dials) = self.dials_under_way.remove(&peer_id) {
                        self.stale_dials.extend(dials);
                    }
                    if let Some(addrs) = self.redial_after_close.remove(&peer_id)
                        && !self.peer_manager.is_banned(&peer_id, now)
                    {
                        let opts = DialOpts::peer_id(peer_id)
                            .condition(PeerCondition::DisconnectedAndNotDialing)
                            .addresses(addrs)
                            .build();
                        match dial(&mut self.swarm, &mut self.dials_under_way, opts) {
                            Ok(()) => self.metrics.dials.with_label_values(&["restarted"]).inc(),
                            Err(e) => {
                                tracing::debug!(%peer_id, error = %e, "dial of a restarted peer failed")
                            }
                        }
                    }
                    let was_connected = self
                        .peer_manager
                        .peer(&peer_id)
                        .is_some_and(|p| p.connected.is_some());
                    let reason = self
                        .pending_disconnects
                        .remove(&peer_id)
                        .unwrap_or(match cause {
                            Some(libp2p::swarm::ConnectionError::KeepAliveTimeout) => {
                                DisconnectReason::Idle
                            }
                            _ => DisconnectReason::Remote,
                        });
                    if !was_connected {
                        // Refused at admission, or a stale dial's connection: nothing changed.
                        return;
                    }
                    self.metrics.disconnected(reason);
                    let backoff = self.peer_manager.on_disconnected(&peer_id, reason, now);
                    tracing::debug!(%peer_id, reason = reason.as_str(), ?backoff, "peer disconnected");
                    self.peer_table_changed();
                    // The rate limiters keep the peer's buckets (the heartbeat prunes full
                    // ones): a reconnection neither resets what the peer may ask of us nor lets
                    // us ask it for Status and MetaData again faster than we allow others.
                    self.emit(NetworkEvent::PeerDisconnected { peer_id });
                }
            }
            SwarmEvent::OutgoingConnectionError {
                peer_id: Some(peer_id),
                connection_id,
                ..
            } => {
                self.dial_ended(peer_id, connection_id);
                self.stale_dials.remove(&connection_id);
            }
            SwarmEvent::Behaviour(BehaviourEvent::Gossipsub(event)) => self.on_gossip(event, now),
            SwarmEvent::Behaviour(BehaviourEvent::Identify(identify::Event::Received {
                peer_id,
                info,
                ..
            })) => {
                if let Some(peer) = self.peer_manager.peer_mut(&peer_id) {
                    peer.agent_version = Some(info.agent_version);
                    self.peer_table_changed();
                }
            }
            _ => {}
        }
    }

    fn on_gossip(&mut self, event: gossipsub::Event, now: Instant) {
        match event {
            gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            } => {
                match PubsubMessage::<E>::decode_raw(
                    message.topic.as_str(),
                    &message.data,
                    &self.fork_context,
                ) {
                    Ok((topic, decoded)) => self.emit(NetworkEvent::GossipMessage {
                        source: propagation_source,
                        message_id,
                        topic,
                        message: decoded,
                    }),
                    Err(error) => {
                        tracing::debug!(peer_id = %propagation_source, %error, "invalid gossip");
                        self.apply_verdict(&message_id, &propagation_source, Validation::Reject);
                        self.report(&propagation_source, PeerAction::LowTolerance, now);
                    }
                }
            }
            gossipsub::Event::Subscribed { peer_id, topic } => {
                if let Ok(topic) = topic.as_str().parse::<GossipTopic>() {
                    self.emit(NetworkEvent::PeerSubscribed { peer_id, topic });
                }
            }
            _ => {}
        }
    }
}

/// A protocol's metric label: its message name and version (`status/2`).
fn protocol_label(protocol: Protocol) -> &'static str {
    let id = protocol.protocol_id();
    id.strip_prefix("/eth2/beacon_chain/req/")
        .and_then(|rest| rest.strip_suffix("/ssz_snappy"))
        .unwrap_or(id)
}

fn endpoint_addr(endpoint: &ConnectedPoint) -> Multiaddr {
    match endpoint {
        ConnectedPoint::Dialer { address, .. } => address.clone(),
        ConnectedPoint::Listener { send_back_addr, .. } => send_back_addr.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    type E = MinimalEthSpec;

    fn sender(capacity: usize, backlog_limit: usize) -> (EventSender<E>, NetworkEvents<E>) {
        let (tx, rx) = mpsc::channel(capacity);
        let metrics = Arc::new(Metrics::new().unwrap());
        (
            EventSender::new(tx, backlog_limit, metrics),
            NetworkEvents { rx },
        )
    }

    fn gossip(id: u8) -> NetworkEvent<E> {
        NetworkEvent::GossipMessage {
            source: PeerId::random(),
            message_id: MessageId::new(&[id]),
            topic: GossipTopic::new(GossipKind::VoluntaryExit, ForkDigest::ZERO),
            message: PubsubMessage::VoluntaryExit(Box::new(types::phase0::SignedVoluntaryExit {
                message: types::phase0::VoluntaryExit {
                    epoch: 0,
                    validator_index: u64::from(id),
                },
                signature: Default::default(),
            })),
        }
    }

    fn connected(peer_id: PeerId) -> NetworkEvent<E> {
        NetworkEvent::PeerConnected {
            peer_id,
            direction: ConnectionDirection::Inbound,
            address: Multiaddr::empty(),
        }
    }

    fn dropped(sender: &EventSender<E>, kind: EventKind) -> u64 {
        sender.metrics.dropped_count(kind)
    }

    #[tokio::test]
    async fn gossip_finding_no_room_is_handed_back_for_its_verdict() {
        let (mut tx, mut rx) = sender(1, 8);
        assert_eq!(tx.send(gossip(1)), None);
        let undelivered = tx.send(gossip(2)).expect("the channel is full");
        assert_eq!(undelivered.message_id, MessageId::new(&[2]));
        assert_eq!(dropped(&tx, EventKind::GossipMessage), 1);
        assert!(matches!(
            rx.recv().await,
            Some(NetworkEvent::GossipMessage { message_id, .. }) if message_id == MessageId::new(&[1])
        ));
        // Room again: delivered.
        assert_eq!(tx.send(gossip(3)), None);
        assert_eq!(dropped(&tx, EventKind::GossipMessage), 1);
    }

    #[tokio::test]
    async fn control_events_wait_in_order_and_gossip_does_not_overtake_them() {
        let (mut tx, mut rx) = sender(1, 8);
        let peers: Vec<PeerId> = (0..3).map(|_| PeerId::random()).collect();
        for peer in &peers {
            assert_eq!(tx.send(connected(*peer)), None);
        }
        assert_eq!(tx.backlog.len(), 2);
        assert_eq!(tx.metrics.event_backlog.get(), 2);
        // The first is read: room for one, but the backlog goes first.
        assert!(
            matches!(rx.recv().await, Some(NetworkEvent::PeerConnected { peer_id, .. }) if peer_id == peers[0])
        );
        assert!(tx.send(gossip(1)).is_some());
        tx.flush().await;
        assert_eq!(tx.backlog.len(), 1);
        assert!(
            matches!(rx.recv().await, Some(NetworkEvent::PeerConnected { peer_id, .. }) if peer_id == peers[1])
        );
        tx.flush().await;
        assert!(!tx.has_backlog());
        assert_eq!(tx.metrics.event_backlog.get(), 0);
        assert!(
            matches!(rx.recv().await, Some(NetworkEvent::PeerConnected { peer_id, .. }) if peer_id == peers[2])
        );
        assert_eq!(dropped(&tx, EventKind::PeerConnected), 0);
    }

    #[tokio::test]
    async fn flush_moves_as_much_as_fits() {
        let (mut tx, mut rx) = sender(4, 16);
        for _ in 0..10 {
            tx.send(NetworkEvent::PeerDisconnected {
                peer_id: PeerId::random(),
            });
        }
        assert_eq!(tx.backlog.len(), 6);
        for _ in 0..4 {
            rx.recv().await.expect("an event");
        }
        tx.flush().await;
        assert_eq!(tx.backlog.len(), 2);
    }

    #[tokio::test]
    async fn backpressure_starts_at_the_backlog_limit() {
        let (mut tx, mut rx) = sender(1, 2);
        tx.send(connected(PeerId::random()));
        tx.send(connected(PeerId::random()));
        assert!(!tx.is_backpressured());
        tx.send(connected(PeerId::random()));
        assert!(tx.is_backpressured());
        rx.recv().await.expect("an event");
        tx.flush().await;
        assert!(!tx.is_backpressured());
    }

    #[tokio::test]
    async fn a_gone_receiver_counts_every_event_and_keeps_nothing() {
        let (mut tx, rx) = sender(1, 8);
        tx.send(connected(PeerId::random()));
        tx.send(connected(PeerId::random()));
        assert_eq!(tx.backlog.len(), 1);
        drop(rx);
        tx.flush().await;
        assert!(!tx.has_backlog());
        tx.send(NetworkEvent::PeerBanned {
            peer_id: PeerId::random(),
        });
        assert!(!tx.has_backlog());
        assert!(tx.send(gossip(1)).is_some());
        assert_eq!(dropped(&tx, EventKind::PeerConnected), 1);
        assert_eq!(dropped(&tx, EventKind::PeerBanned), 1);
        assert_eq!(dropped(&tx, EventKind::GossipMessage), 1);
    }
}
