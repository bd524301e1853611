//! The service's handling of the commands and queries a [`NetworkHandle`] sends.
//!
//! [`NetworkHandle`]: super::NetworkHandle

use std::time::Instant;

use ssz_types::typenum::{U4, U64};
use types::EthSpec;

use super::Validation;
use super::advertised::bits;
use super::handle::{Command, Query};
use super::peers::dial;
use super::task::Service;
use crate::discovery::Discovery;
use crate::gossip::topic_hash;
use crate::peer_manager::{DisconnectReason, PeerAction};
use crate::topics::GossipTopic;

impl<E: EthSpec> Service<E> {
    pub(super) fn on_command(&mut self, command: Command<E>) {
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
}
