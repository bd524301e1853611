//! What the network tells the application: [`NetworkEvent`]s on the [`NetworkEvents`] stream,
//! the request ids they carry, and the [`Validation`] verdicts the application answers gossip with.

use libp2p::gossipsub::MessageId;
use libp2p::{Multiaddr, PeerId};
use tokio::sync::mpsc;
use types::EthSpec;

use super::RpcError;
use crate::gossip::PubsubMessage;
use crate::peer_manager::ConnectionDirection;
use crate::rpc::{MetaData, Request, Response};
use crate::topics::GossipTopic;

/// Identifies a request we sent, in [`NetworkEvent::ResponseReceived`] and
/// [`NetworkEvent::RequestFailed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutboundRequestId(pub u64);

/// Identifies a request a peer sent us; answer it with [`NetworkHandle::send_response`].
///
/// [`NetworkHandle::send_response`]: super::NetworkHandle::send_response
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InboundRequestId(pub u64);

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
    ///
    /// [`NetworkHandle::send_response`]: super::NetworkHandle::send_response
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
    ///
    /// [`NetworkHandle::report_validation`]: super::NetworkHandle::report_validation
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
    pub(super) rx: mpsc::Receiver<NetworkEvent<E>>,
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
