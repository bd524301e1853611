//! The service's errors: why the network could not start ([`NetworkError`]) and why one of our
//! requests produced no response ([`RpcError`]).

use libp2p::Multiaddr;

use crate::rate_limiter::RateLimitError;
use crate::rpc::codec::RpcCodecError;

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
