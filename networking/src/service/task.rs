//! The service task: the state of the one task that owns the swarm, its select loop, and event
//! delivery to the application.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use libp2p::{Multiaddr, PeerId, Swarm};
use tokio::sync::{mpsc, oneshot, watch};
use types::{Epoch, EthSpec, ForkDigest};

use super::event_sender::{EventSender, UndeliveredGossip};
use super::handle::Command;
use super::peers::DialsUnderWay;
use super::streams::Internal;
use super::{Behaviour, InboundRequestId, NetworkEvent, Validation};
use crate::discovery::{Discovery, DiscoveryEvent};
use crate::fork_context::ForkContext;
use crate::metrics::Metrics;
use crate::peer_manager::{DisconnectReason, PeerManager};
use crate::rate_limiter::RateLimiter;
use crate::rpc::{MetaData, Response};
use crate::topics::{GossipKind, GossipTopic};

pub(super) struct Service<E: EthSpec> {
    pub(super) swarm: Swarm<Behaviour>,
    pub(super) control: libp2p_stream::Control,
    pub(super) fork_context: Arc<ForkContext>,
    pub(super) discovery: Option<Discovery>,
    pub(super) peer_manager: PeerManager,
    pub(super) inbound_limiter: RateLimiter,
    pub(super) outbound_limiter: RateLimiter,
    pub(super) metadata: MetaData,
    pub(super) current_epoch: Epoch,
    pub(super) current_digest: ForkDigest,
    pub(super) subscribed_kinds: BTreeSet<GossipKind>,
    pub(super) subscribed_topics: HashSet<GossipTopic>,
    pub(super) pending_inbound: HashMap<InboundRequestId, oneshot::Sender<Response<E>>>,
    pub(super) next_inbound_id: u64,
    pub(super) internal_tx: mpsc::Sender<Internal<E>>,
    pub(super) events: EventSender<E>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) connection_addrs: HashMap<PeerId, Vec<Multiaddr>>,
    /// Each connected peer's connections and when they were established.
    pub(super) connection_ids: HashMap<PeerId, Vec<(libp2p::swarm::ConnectionId, Instant)>>,
    /// Restarted peers whose connections are being closed, with the addresses to dial them
    /// back at once the last one has closed (see the `ConnectionEstablished` arm).
    pub(super) redial_after_close: HashMap<PeerId, Vec<Multiaddr>>,
    /// Why we are closing a peer's connections, until the last one has closed.
    pub(super) pending_disconnects: HashMap<PeerId, DisconnectReason>,
    /// Our dials still under way, by peer.
    pub(super) dials_under_way: DialsUnderWay,
    /// Dials that were under way when their peer's last connection closed: started before
    /// that disconnect, they must not undo it (and its redial backoff) when they complete; a
    /// connection one of them establishes is closed at once, never announced.
    pub(super) stale_dials: HashSet<libp2p::swarm::ConnectionId>,
    /// See [`NetworkHandle::peer_table_changes`].
    ///
    /// [`NetworkHandle::peer_table_changes`]: super::NetworkHandle::peer_table_changes
    pub(super) peer_table: watch::Sender<u64>,
    pub(super) slot: Duration,
    pub(super) slots_per_epoch: u32,
}

impl<E: EthSpec> Service<E> {
    pub(super) async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command<E>>,
        mut internal: mpsc::Receiver<Internal<E>>,
        mut discovery: mpsc::Receiver<DiscoveryEvent>,
        heartbeat: Duration,
    ) {
        let mut heartbeat = tokio::time::interval(heartbeat);
        loop {
            // With the backlog at its limit, nothing more is read from peers until the
            // application makes room; commands and the heartbeat go on.
            let reading = !self.events.is_backpressured();
            let flushing = self.events.has_backlog();
            tokio::select! {
                event = self.swarm.select_next_some(), if reading => self.on_swarm_event(event),
                command = commands.recv() => match command {
                    Some(Command::Shutdown) | None => break,
                    Some(command) => self.on_command(command),
                },
                Some(message) = internal.recv(), if reading => self.on_internal(message),
                Some(event) = discovery.recv() => self.on_discovery(event),
                () = self.events.flush(), if flushing => {}
                _ = heartbeat.tick() => self.on_heartbeat(),
            }
        }
        tracing::debug!(
            backlog = self.events.backlog.len(),
            "network service stopped"
        );
    }

    /// Sends an event to the application. A gossip message that finds no room is given an
    /// IGNORE verdict here, so gossipsub neither waits for it nor forwards it.
    pub(super) fn emit(&mut self, event: NetworkEvent<E>) {
        if let Some(UndeliveredGossip { message_id, source }) = self.events.send(event) {
            tracing::debug!(
                %message_id,
                peer_id = %source,
                "event channel full: gossip message ignored"
            );
            self.apply_verdict(&message_id, &source, Validation::Ignore);
        }
    }
}
