//! Arbor's networking: libp2p swarm (QUIC and TCP), gossipsub, eth2 req/resp, discv5 and the
//! peer manager. Knows nothing of the chain beyond the types.

pub mod enr;
pub mod fork_context;
pub mod gossip;
pub mod rpc;
pub mod subnets;
pub mod topics;
