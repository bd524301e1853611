//! Arbor's networking: a libp2p swarm (TCP with Noise and yamux or mplex, QUIC), gossipsub
//! configured as the consensus p2p spec says, eth2 req/resp (`ssz_snappy`), discv5 with the eth2
//! ENR fields, a peer manager and req/resp rate limits. Knows nothing of the chain beyond the
//! types: the application answers chain requests and validates gossip.
//!
//! # Running a node
//!
//! ```no_run
//! # async fn run() -> Result<(), networking::NetworkError> {
//! use networking::{NetworkConfig, NetworkEvent, Validation, GossipKind};
//! use types::{ChainSpec, ForkName, MinimalEthSpec, Root};
//!
//! let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
//! let mut config = NetworkConfig::local(Root::ZERO); // loopback, OS-chosen ports
//! config.gossip_kinds = vec![GossipKind::BeaconBlock, GossipKind::DataColumnSidecar(0)];
//! let (handle, mut events) = networking::start::<MinimalEthSpec>(config, spec).await?;
//!
//! // Where it listens and how to find it:
//! println!("{} {:?}", handle.local_peer_id(), handle.listen_addrs());
//! println!("{}", handle.local_enr().expect("discovery enabled").to_base64());
//!
//! while let Some(event) = events.recv().await {
//!     match event {
//!         NetworkEvent::GossipMessage { source, message_id, .. } => {
//!             handle.report_validation(message_id, source, Validation::Accept);
//!         }
//!         NetworkEvent::RequestReceived { request_id, .. } => {
//!             // Look the request up in the chain, then:
//!             handle.send_response(request_id, networking::rpc::Response::success(vec![]));
//!         }
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! * Commands: [`NetworkHandle`] (`send_request`, `send_response`, `publish`,
//!   `report_validation`, `subscribe`, `update_epoch`, `update_metadata`, `report_peer`,
//!   `ban_peer`, `dial`, queries such as `connected_peers` and `connected_peer_details` (each
//!   peer's [`ClientKind`] from identify and custody group count from its MetaData or ENR)).
//! * Events: [`NetworkEvents::recv`] yields [`NetworkEvent`]s.
//! * Ping, MetaData and Goodbye are answered by the service; Status and every data request are
//!   handed to the application as [`NetworkEvent::RequestReceived`].
//! * Another libp2p implementation can reach the node over TCP (`/ip4/…/tcp/…`, Noise, yamux or
//!   mplex) or QUIC (`/ip4/…/udp/…/quic-v1`), gossipsub `/meshsub/1.1.0` and `/meshsub/1.2.0`, and
//!   the req/resp protocol ids of [`rpc::Protocol::protocol_id`].

pub mod dial_gate;
pub mod discovery;
pub mod enr;
pub mod fork_context;
pub mod gossip;
mod metrics;
pub mod peer_manager;
pub mod rate_limiter;
pub mod rpc;
pub mod service;
pub mod subnets;
pub mod topics;

pub use discv5::Enr;
pub use fork_context::ForkContext;
pub use gossip::PubsubMessage;
pub use libp2p::{Multiaddr, PeerId, identity::Keypair};
pub use peer_manager::{ClientKind, ConnectedPeer, PeerAction, PeerManagerConfig};
pub use service::{
    InboundRequestId, Muxers, NetworkConfig, NetworkError, NetworkEvent, NetworkEvents,
    NetworkHandle, OutboundRequestId, RpcError, Validation, start,
};
pub use topics::{GossipKind, GossipTopic};
