//! The service's end of the event channel: control events delivered in order and never dropped
//! while the application reads, gossip delivered when there is room and otherwise handed back
//! for an IGNORE verdict, and a bounded backlog that turns into backpressure on peers.

use std::collections::VecDeque;
use std::sync::Arc;

use libp2p::PeerId;
use libp2p::gossipsub::MessageId;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use types::EthSpec;

use super::NetworkEvent;
use crate::metrics::{EventKind, Metrics};

/// The kind of an event, for the drop counter.
fn event_kind<E: EthSpec>(event: &NetworkEvent<E>) -> EventKind {
    match event {
        NetworkEvent::PeerConnected { .. } => EventKind::PeerConnected,
        NetworkEvent::PeerDisconnected { .. } => EventKind::PeerDisconnected,
        NetworkEvent::PeerBanned { .. } => EventKind::PeerBanned,
        NetworkEvent::PeerSubscribed { .. } => EventKind::PeerSubscribed,
        NetworkEvent::Goodbye { .. } => EventKind::Goodbye,
        NetworkEvent::PeerMetaData { .. } => EventKind::PeerMetaData,
        NetworkEvent::RequestReceived { .. } => EventKind::RequestReceived,
        NetworkEvent::ResponseReceived { .. } => EventKind::ResponseReceived,
        NetworkEvent::RequestFailed { .. } => EventKind::RequestFailed,
        NetworkEvent::GossipMessage { .. } => EventKind::GossipMessage,
    }
}

/// A gossip message the application will not see: gossipsub still waits for its verdict.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct UndeliveredGossip {
    pub(super) message_id: MessageId,
    pub(super) source: PeerId,
}

/// The sending side of the event channel. Gossip is delivered when there is room and dropped
/// (counted, its verdict left to the caller) when there is none; every other event is
/// delivered in order, waiting in `backlog` while the channel is full. Only the closing of the
/// receiver loses a control event (counted too).
pub(super) struct EventSender<E: EthSpec> {
    tx: mpsc::Sender<NetworkEvent<E>>,
    /// Control events, oldest first, waiting for room in the channel.
    pub(super) backlog: VecDeque<NetworkEvent<E>>,
    /// From this many backlog entries on, the service reads nothing more from peers.
    backlog_limit: usize,
    metrics: Arc<Metrics>,
}

impl<E: EthSpec> EventSender<E> {
    pub(super) fn new(
        tx: mpsc::Sender<NetworkEvent<E>>,
        backlog_limit: usize,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            tx,
            backlog: VecDeque::new(),
            backlog_limit,
            metrics,
        }
    }

    /// Delivers `event` or queues it; returns the gossip message it had to drop, if it did.
    pub(super) fn send(&mut self, event: NetworkEvent<E>) -> Option<UndeliveredGossip> {
        match event {
            NetworkEvent::GossipMessage {
                source,
                message_id,
                topic,
                message,
            } => {
                // Behind a backlog the channel counts as full: gossip does not overtake the
                // control events queued before it.
                if self.backlog.is_empty()
                    && let Ok(permit) = self.tx.try_reserve()
                {
                    permit.send(NetworkEvent::GossipMessage {
                        source,
                        message_id,
                        topic,
                        message,
                    });
                    None
                } else {
                    self.metrics.event_dropped(EventKind::GossipMessage);
                    Some(UndeliveredGossip { message_id, source })
                }
            }
            event => {
                self.send_control(event);
                None
            }
        }
    }

    /// Delivers a control event, or queues it behind the backlog; never drops it while the
    /// receiver lives.
    fn send_control(&mut self, event: NetworkEvent<E>) {
        let reserved = if self.backlog.is_empty() {
            self.tx.try_reserve()
        } else if self.tx.is_closed() {
            Err(TrySendError::Closed(()))
        } else {
            Err(TrySendError::Full(()))
        };
        match reserved {
            Ok(permit) => permit.send(event),
            Err(TrySendError::Full(())) => self.backlog.push_back(event),
            Err(TrySendError::Closed(())) => self.metrics.event_dropped(event_kind(&event)),
        }
        self.update_backlog_gauge();
    }

    pub(super) fn has_backlog(&self) -> bool {
        !self.backlog.is_empty()
    }

    pub(super) fn is_backpressured(&self) -> bool {
        self.backlog.len() >= self.backlog_limit
    }

    /// Waits for room in the channel, then moves as much of the backlog as fits. Cancel-safe:
    /// nothing leaves the backlog before its slot is reserved.
    pub(super) async fn flush(&mut self) {
        if self.backlog.is_empty() {
            return;
        }
        match self.tx.reserve().await {
            Ok(permit) => {
                if let Some(event) = self.backlog.pop_front() {
                    permit.send(event);
                }
                while !self.backlog.is_empty() {
                    let Ok(permit) = self.tx.try_reserve() else {
                        break;
                    };
                    if let Some(event) = self.backlog.pop_front() {
                        permit.send(event);
                    }
                }
            }
            // The application is gone: nobody will read these.
            Err(_) => {
                for event in self.backlog.drain(..) {
                    self.metrics.event_dropped(event_kind(&event));
                }
            }
        }
        self.update_backlog_gauge();
    }

    fn update_backlog_gauge(&self) {
        self.metrics.event_backlog.set(self.backlog.len() as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libp2p::Multiaddr;
    use types::{ForkDigest, MinimalEthSpec};

    use super::super::NetworkEvents;
    use crate::gossip::PubsubMessage;
    use crate::peer_manager::ConnectionDirection;
    use crate::topics::{GossipKind, GossipTopic};

    type E = MinimalEthSpec;

    fn sender(capacity: usize, backlog_limit: usize) -> (EventSender<E>, NetworkEvents<E>) {
        let (tx, rx) = mpsc::channel(capacity);
        let metrics = Arc::new(Metrics::new().unwrap());
        (
            EventSender::new(tx, backlog_limit, metrics),
            NetworkEvents { rx },
        )
    }

    fn gossip(id: u8) -> NetworkEvent<E> {
        NetworkEvent::GossipMessage {
            source: PeerId::random(),
            message_id: MessageId::new(&[id]),
            topic: GossipTopic::new(GossipKind::VoluntaryExit, ForkDigest::ZERO),
            message: PubsubMessage::VoluntaryExit(Box::new(types::phase0::SignedVoluntaryExit {
                message: types::phase0::VoluntaryExit {
                    epoch: 0,
                    validator_index: u64::from(id),
                },
                signature: Default::default(),
            })),
        }
    }

    fn connected(peer_id: PeerId) -> NetworkEvent<E> {
        NetworkEvent::PeerConnected {
            peer_id,
            direction: ConnectionDirection::Inbound,
            address: Multiaddr::empty(),
        }
    }

    fn dropped(sender: &EventSender<E>, kind: EventKind) -> u64 {
        sender.metrics.dropped_count(kind)
    }

    #[tokio::test]
    async fn gossip_finding_no_room_is_handed_back_for_its_verdict() {
        let (mut tx, mut rx) = sender(1, 8);
        assert_eq!(tx.send(gossip(1)), None);
        let undelivered = tx.send(gossip(2)).expect("the channel is full");
        assert_eq!(undelivered.message_id, MessageId::new(&[2]));
        assert_eq!(dropped(&tx, EventKind::GossipMessage), 1);
        assert!(matches!(
            rx.recv().await,
            Some(NetworkEvent::GossipMessage { message_id, .. }) if message_id == MessageId::new(&[1])
        ));
        // Room again: delivered.
        assert_eq!(tx.send(gossip(3)), None);
        assert_eq!(dropped(&tx, EventKind::GossipMessage), 1);
    }

    #[tokio::test]
    async fn control_events_wait_in_order_and_gossip_does_not_overtake_them() {
        let (mut tx, mut rx) = sender(1, 8);
        let peers: Vec<PeerId> = (0..3).map(|_| PeerId::random()).collect();
        for peer in &peers {
            assert_eq!(tx.send(connected(*peer)), None);
        }
        assert_eq!(tx.backlog.len(), 2);
        assert_eq!(tx.metrics.event_backlog.get(), 2);
        // The first is read: room for one, but the backlog goes first.
        assert!(
            matches!(rx.recv().await, Some(NetworkEvent::PeerConnected { peer_id, .. }) if peer_id == peers[0])
        );
        assert!(tx.send(gossip(1)).is_some());
        tx.flush().await;
        assert_eq!(tx.backlog.len(), 1);
        assert!(
            matches!(rx.recv().await, Some(NetworkEvent::PeerConnected { peer_id, .. }) if peer_id == peers[1])
        );
        tx.flush().await;
        assert!(!tx.has_backlog());
        assert_eq!(tx.metrics.event_backlog.get(), 0);
        assert!(
            matches!(rx.recv().await, Some(NetworkEvent::PeerConnected { peer_id, .. }) if peer_id == peers[2])
        );
        assert_eq!(dropped(&tx, EventKind::PeerConnected), 0);
    }

    #[tokio::test]
    async fn flush_moves_as_much_as_fits() {
        let (mut tx, mut rx) = sender(4, 16);
        for _ in 0..10 {
            tx.send(NetworkEvent::PeerDisconnected {
                peer_id: PeerId::random(),
            });
        }
        assert_eq!(tx.backlog.len(), 6);
        for _ in 0..4 {
            rx.recv().await.expect("an event");
        }
        tx.flush().await;
        assert_eq!(tx.backlog.len(), 2);
    }

    #[tokio::test]
    async fn backpressure_starts_at_the_backlog_limit() {
        let (mut tx, mut rx) = sender(1, 2);
        tx.send(connected(PeerId::random()));
        tx.send(connected(PeerId::random()));
        assert!(!tx.is_backpressured());
        tx.send(connected(PeerId::random()));
        assert!(tx.is_backpressured());
        rx.recv().await.expect("an event");
        tx.flush().await;
        assert!(!tx.is_backpressured());
    }

    #[tokio::test]
    async fn a_gone_receiver_counts_every_event_and_keeps_nothing() {
        let (mut tx, rx) = sender(1, 8);
        tx.send(connected(PeerId::random()));
        tx.send(connected(PeerId::random()));
        assert_eq!(tx.backlog.len(), 1);
        drop(rx);
        tx.flush().await;
        assert!(!tx.has_backlog());
        tx.send(NetworkEvent::PeerBanned {
            peer_id: PeerId::random(),
        });
        assert!(!tx.has_backlog());
        assert!(tx.send(gossip(1)).is_some());
        assert_eq!(dropped(&tx, EventKind::PeerConnected), 1);
        assert_eq!(dropped(&tx, EventKind::PeerBanned), 1);
        assert_eq!(dropped(&tx, EventKind::GossipMessage), 1);
    }
}
