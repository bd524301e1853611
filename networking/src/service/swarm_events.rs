//! The service's handling of swarm events: connections established (stale dials, restarted
//! peers, admission) and closed (disconnect reasons, dial-back of restarted peers), failed
//! dials, gossipsub and identify events.

use std::time::{Duration, Instant};

use libp2p::Multiaddr;
use libp2p::core::ConnectedPoint;
use libp2p::identify;
use libp2p::swarm::SwarmEvent;
use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
use types::EthSpec;

use super::BehaviourEvent;
use super::NetworkEvent;
use super::peers::dial;
use super::task::Service;
use crate::peer_manager::{Admission, ConnectionDirection, DisconnectReason};
use crate::rpc::Request;

/// How far apart two connections of one peer must have been established for the later one to
/// be taken for a restarted peer's (the earlier one dead), rather than for the other half of a
/// simultaneous dial from both sides, whose two connections come up within a handshake of each
/// other.
pub const STALE_CONNECTION_AGE: Duration = Duration::from_secs(2);

impl<E: EthSpec> Service<E> {
    pub(super) fn on_swarm_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
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
}

fn endpoint_addr(endpoint: &ConnectedPoint) -> Multiaddr {
    match endpoint {
        ConnectedPoint::Dialer { address, .. } => address.clone(),
        ConnectedPoint::Listener { send_back_addr, .. } => send_back_addr.clone(),
    }
}
