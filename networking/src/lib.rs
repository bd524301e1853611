//! Arbor's networking: libp2p swarm (QUIC and TCP), gossipsub, eth2 req/resp, discv5 and the
//! peer manager. Knows nothing of the chain beyond the types.

pub mod subnets;
