//! How to run the network: [`NetworkConfig`] and the stream [`Muxers`] offered on TCP.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use discv5::Enr;
use libp2p::Multiaddr;
use libp2p::identity::Keypair;
use types::{Epoch, Root};

use crate::peer_manager::PeerManagerConfig;
use crate::rate_limiter::RateLimiterConfig;
use crate::topics::GossipKind;

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
    ///
    /// [`NetworkHandle::update_epoch`]: super::NetworkHandle::update_epoch
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
