//! Peer management in the service: penalties, disconnects and bans, dials (every one through
//! the dial gate), discovery results and the heartbeat.

use std::collections::HashMap;
use std::time::Instant;

use libp2p::swarm::dial_opts::DialOpts;
use libp2p::{PeerId, Swarm};
use types::EthSpec;

use super::task::Service;
use super::{Behaviour, NetworkEvent};
use crate::discovery::{DiscoveryEvent, eligible};
use crate::enr::Eth2Enr;
use crate::gossip::peer_score_thresholds;
use crate::peer_manager::{DisconnectReason, PeerAction, ScoreOutcome};
use crate::topics::GossipKind;

/// Dials through the [`DialGate`]: the one way the service dials (any other dial to a named
/// peer is denied). A dial to a named peer is remembered in `dials` until it connects or fails.
///
/// [`DialGate`]: crate::dial_gate::DialGate
pub(super) fn dial(
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
pub(super) type DialsUnderWay = HashMap<PeerId, Vec<libp2p::swarm::ConnectionId>>;

impl<E: EthSpec> Service<E> {
    /// The peer gauges follow the table, and [`NetworkHandle::peer_table_changes`] ticks.
    ///
    /// [`NetworkHandle::peer_table_changes`]: super::NetworkHandle::peer_table_changes
    pub(super) fn peer_table_changed(&mut self) {
        self.metrics.observe_peers(&self.peer_manager);
        self.peer_table.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(super) fn report(&mut self, peer_id: &PeerId, action: PeerAction, now: Instant) {
        match self.peer_manager.report_peer(peer_id, action, now) {
            ScoreOutcome::None => {}
            ScoreOutcome::Disconnect => self.disconnect(*peer_id, DisconnectReason::Score),
            ScoreOutcome::Ban => self.ban_now(*peer_id),
        }
    }

    /// Closes every connection of `peer_id`, remembering why until the last has closed (the
    /// reason counts in `network_disconnects_total` and sets the peer's redial backoff). The
    /// first reason given stays.
    pub(super) fn disconnect(&mut self, peer_id: PeerId, reason: DisconnectReason) {
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
    pub(super) fn dial_ended(
        &mut self,
        peer_id: PeerId,
        connection_id: libp2p::swarm::ConnectionId,
    ) {
        if let Some(dials) = self.dials_under_way.get_mut(&peer_id) {
            dials.retain(|id| *id != connection_id);
            if dials.is_empty() {
                self.dials_under_way.remove(&peer_id);
            }
        }
    }

    pub(super) fn ban_now(&mut self, peer_id: PeerId) {
        self.swarm
            .behaviour_mut()
            .gossipsub
            .blacklist_peer(&peer_id);
        self.disconnect(peer_id, DisconnectReason::Banned);
        self.emit(NetworkEvent::PeerBanned { peer_id });
    }

    pub(super) fn on_discovery(&mut self, event: DiscoveryEvent) {
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

    pub(super) fn on_heartbeat(&mut self) {
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
}
