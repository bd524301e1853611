//! The service's gossip: topic subscriptions on every active fork digest, incoming messages, and
//! the verdicts handed to gossipsub.

use std::collections::HashSet;
use std::time::Instant;

use libp2p::PeerId;
use libp2p::gossipsub::{self, MessageAcceptance, MessageId};
use types::{EthSpec, ForkDigest};

use super::task::Service;
use super::{NetworkEvent, Validation};
use crate::gossip::{PubsubMessage, topic_score_params};
use crate::peer_manager::PeerAction;
use crate::topics::GossipTopic;

impl<E: EthSpec> Service<E> {
    /// Hands a verdict to gossipsub and counts it, as applied or as late (gossipsub no longer
    /// held the message).
    pub(super) fn apply_verdict(
        &mut self,
        message_id: &MessageId,
        source: &PeerId,
        validation: Validation,
    ) {
        let acceptance = match validation {
            Validation::Accept => MessageAcceptance::Accept,
            Validation::Ignore => MessageAcceptance::Ignore,
            Validation::Reject => MessageAcceptance::Reject,
        };
        let applied = self
            .swarm
            .behaviour_mut()
            .gossipsub
            .report_message_validation_result(message_id, source, acceptance);
        self.metrics.verdict(validation, applied);
    }

    pub(super) fn active_digests(&self) -> Vec<ForkDigest> {
        let ctx = &self.fork_context;
        let epoch = self.current_epoch;
        let mut digests = vec![ctx.digest_at_epoch(epoch)];
        // Subscribe to the next digest's topics one epoch before the boundary.
        if let Some(next) = ctx.next_boundary(epoch)
            && next.epoch <= epoch + 1
        {
            digests.push(next.digest);
        }
        // Keep the previous digest's topics for two epochs after the boundary.
        let current = ctx.boundary_at_epoch(epoch);
        if let Some(previous) = ctx.previous_boundary(epoch)
            && epoch < current.epoch + 2
        {
            digests.push(previous.digest);
        }
        digests
    }

    /// Subscribes to every wanted kind on every active digest and drops the rest.
    pub(super) fn refresh_subscriptions(&mut self) {
        let mut wanted = HashSet::new();
        for digest in self.active_digests() {
            let Some(fork) = self.fork_context.fork_of_digest(digest) else {
                continue;
            };
            for kind in &self.subscribed_kinds {
                if kind.exists_at(fork) {
                    wanted.insert(GossipTopic::new(*kind, digest));
                }
            }
        }
        let stale: Vec<GossipTopic> = self
            .subscribed_topics
            .difference(&wanted)
            .copied()
            .collect();
        for topic in stale {
            let t = gossipsub::IdentTopic::new(topic.to_string());
            self.swarm.behaviour_mut().gossipsub.unsubscribe(&t);
            self.subscribed_topics.remove(&topic);
        }
        for topic in wanted {
            if self.subscribed_topics.contains(&topic) {
                continue;
            }
            let t = gossipsub::IdentTopic::new(topic.to_string());
            let gossipsub = &mut self.swarm.behaviour_mut().gossipsub;
            let _ = gossipsub.set_topic_params(
                t.clone(),
                topic_score_params(topic.kind, self.slot, self.slots_per_epoch),
            );
            match gossipsub.subscribe(&t) {
                Ok(_) => {
                    self.subscribed_topics.insert(topic);
                }
                Err(e) => tracing::warn!(%topic, error = ?e, "cannot subscribe"),
            }
        }
    }

    pub(super) fn on_gossip(&mut self, event: gossipsub::Event, now: Instant) {
        match event {
            gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            } => {
                match PubsubMessage::<E>::decode_raw(
                    message.topic.as_str(),
                    &message.data,
                    &self.fork_context,
                ) {
                    Ok((topic, decoded)) => self.emit(NetworkEvent::GossipMessage {
                        source: propagation_source,
                        message_id,
                        topic,
                        message: decoded,
                    }),
                    Err(error) => {
                        tracing::debug!(peer_id = %propagation_source, %error, "invalid gossip");
                        self.apply_verdict(&message_id, &propagation_source, Validation::Reject);
                        self.report(&propagation_source, PeerAction::LowTolerance, now);
                    }
                }
            }
            gossipsub::Event::Subscribed { peer_id, topic } => {
                if let Ok(topic) = topic.as_str().parse::<GossipTopic>() {
                    self.emit(NetworkEvent::PeerSubscribed { peer_id, topic });
                }
            }
            _ => {}
        }
    }
}
