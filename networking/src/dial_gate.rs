//! Only the service dials.
//!
//! `libp2p-stream` dials a peer it is asked to open a stream to when no connection to it is up.
//! A request queued just before its peer disconnected (a MetaData after a connection, a retried
//! stream) would then reconnect a peer we just said Goodbye to, or banned, or whose redial
//! backoff has not passed, and no counter would say so. [`DialGate`] denies every dial that
//! names a peer unless the service opened the gate for it: such a stream fails at once (the
//! request ends with an error) instead of reconnecting. Dials by address alone are the
//! operator's or the boot list's and always pass.

use std::convert::Infallible;
use std::task::{Context, Poll};

use libp2p::core::Endpoint;
use libp2p::core::transport::PortUse;
use libp2p::swarm::{
    ConnectionDenied, ConnectionId, FromSwarm, NetworkBehaviour, THandler, THandlerInEvent,
    THandlerOutEvent, ToSwarm, dummy,
};
use libp2p::{Multiaddr, PeerId};

/// A dial by a behaviour rather than by the service.
#[derive(Debug, thiserror::Error)]
#[error("only the network service dials peers (a stream was opened to a disconnected peer)")]
pub struct NotOurDial;

/// Denies dials to a named peer that the service did not start.
#[derive(Debug, Default)]
pub struct DialGate {
    /// The peer the service is dialing now (set for the span of one `Swarm::dial` call).
    open_for: Option<PeerId>,
}

impl DialGate {
    /// Lets the next dial to `peer` through (the service calls this right before dialing it).
    pub fn open_for(&mut self, peer: Option<PeerId>) {
        self.open_for = peer;
    }

    /// Closes the gate again after the service's dial.
    pub fn close(&mut self) {
        self.open_for = None;
    }
}

impl NetworkBehaviour for DialGate {
    type ConnectionHandler = dummy::ConnectionHandler;
    type ToSwarm = Infallible;

    fn handle_pending_outbound_connection(
        &mut self,
        _connection_id: ConnectionId,
        maybe_peer: Option<PeerId>,
        _addresses: &[Multiaddr],
        _effective_role: Endpoint,
    ) -> Result<Vec<Multiaddr>, ConnectionDenied> {
        match maybe_peer {
            Some(peer) if self.open_for != Some(peer) => Err(ConnectionDenied::new(NotOurDial)),
            _ => Ok(Vec::new()),
        }
    }

    fn handle_established_inbound_connection(
        &mut self,
        _connection_id: ConnectionId,
        _peer: PeerId,
        _local_addr: &Multiaddr,
        _remote_addr: &Multiaddr,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        Ok(dummy::ConnectionHandler)
    }

    fn handle_established_outbound_connection(
        &mut self,
        _connection_id: ConnectionId,
        _peer: PeerId,
        _addr: &Multiaddr,
        _role_override: Endpoint,
        _port_use: PortUse,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        Ok(dummy::ConnectionHandler)
    }

    fn on_swarm_event(&mut self, _event: FromSwarm<'_>) {}

    fn on_connection_handler_event(
        &mut self,
        _peer_id: PeerId,
        _connection_id: ConnectionId,
        event: THandlerOutEvent<Self>,
    ) {
        match event {}
    }

    fn poll(&mut self, _cx: &mut Context<'_>) -> Poll<ToSwarm<Infallible, THandlerInEvent<Self>>> {
        Poll::Pending
    }
}
