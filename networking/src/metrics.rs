//! The network service's Prometheus metrics (`network_*`, and the connected peers by client and
//! by custody group count as `libp2p_peers_per_*`). Label children are resolved once at
//! start-up, so emitting an event never hashes a label.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};

use crate::peer_manager::{ClientKind, DisconnectReason, PeerManager};
use crate::service::Validation;

/// The `custody_group_count` label of peers whose custody is not known yet.
const UNKNOWN_CUSTODY: &str = "unknown";

/// The label values of `network_events_dropped_total{kind}`, one per [`EventKind`].
const EVENT_KINDS: [&str; EventKind::COUNT] = [
    "peer_connected",
    "peer_disconnected",
    "peer_banned",
    "peer_subscribed",
    "goodbye",
    "peer_metadata",
    "request_received",
    "response_received",
    "request_failed",
    "gossip_message",
];

/// The kind of a [`crate::NetworkEvent`], for the drop counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    PeerConnected,
    PeerDisconnected,
    PeerBanned,
    PeerSubscribed,
    Goodbye,
    PeerMetaData,
    RequestReceived,
    ResponseReceived,
    RequestFailed,
    GossipMessage,
}

impl EventKind {
    const COUNT: usize = 10;

    fn index(self) -> usize {
        self as usize
    }
}

/// The label values of the verdict counters, indexed by [`verdict_index`].
const VERDICTS: [&str; 3] = ["accept", "ignore", "reject"];

fn verdict_index(validation: Validation) -> usize {
    match validation {
        Validation::Accept => 0,
        Validation::Ignore => 1,
        Validation::Reject => 2,
    }
}

/// Every metric of the network service.
pub(crate) struct Metrics {
    /// Per [`EventKind`]: events the application never received.
    dropped: Vec<IntCounter>,
    /// Per verdict: verdicts gossipsub applied to a message it still held.
    verdicts: Vec<IntCounter>,
    /// Per verdict: verdicts for messages gossipsub no longer held (already judged, or
    /// expired from its cache before the verdict came).
    late_verdicts: Vec<IntCounter>,
    /// Control events waiting in the service for room in the event channel.
    pub(crate) event_backlog: IntGauge,
    dropped_vec: IntCounterVec,
    verdicts_vec: IntCounterVec,
    late_verdicts_vec: IntCounterVec,
    /// Per [`ClientKind`]: connected peers.
    peers_per_client: Vec<IntGauge>,
    peers_per_client_vec: IntGaugeVec,
    peers_per_custody_vec: IntGaugeVec,
    /// Dials started, by what asked for them.
    pub(crate) dials: IntCounterVec,
    /// Disconnects of a peer's last connection, by [`DisconnectReason`].
    disconnects: Vec<IntCounter>,
    disconnects_vec: IntCounterVec,
    /// Discovered peers not dialed because their redial backoff had not passed.
    pub(crate) redials_held_back: IntCounter,
    /// Req/resp requests sent, by protocol.
    pub(crate) requests_sent: IntCounterVec,
    /// Req/resp requests of ours held back by our own copy of the peer's rate limits.
    pub(crate) requests_held_back: IntCounterVec,
    /// Requests of peers answered `RATE_LIMITED`, by protocol.
    pub(crate) requests_rate_limited: IntCounterVec,
    /// The custody group counts seen so far (at most `NUMBER_OF_CUSTODY_GROUPS` + 1 labels):
    /// one no longer seen is set to 0, not removed, so its series ends at 0.
    custody_labels: Mutex<BTreeSet<Option<u64>>>,
}

impl Metrics {
    pub(crate) fn new() -> Result<Self, prometheus::Error> {
        let dropped_vec = IntCounterVec::new(
            Opts::new(
                "network_events_dropped_total",
                "Network events the application never received, by kind: gossip when the event \
                 channel was full (each given an IGNORE verdict), any kind once the receiver \
                 was gone.",
            ),
            &["kind"],
        )?;
        let verdicts_vec = IntCounterVec::new(
            Opts::new(
                "network_gossip_verdicts_total",
                "Gossip validation verdicts applied by gossipsub, by verdict (from the \
                 application, for undecodable messages, and IGNORE for dropped ones).",
            ),
            &["verdict"],
        )?;
        let late_verdicts_vec = IntCounterVec::new(
            Opts::new(
                "network_gossip_late_verdicts_total",
                "Gossip validation verdicts for messages gossipsub no longer held, by verdict.",
            ),
            &["verdict"],
        )?;
        // Lighthouse's name and label: dashboards written for it read these too.
        let peers_per_client_vec = IntGaugeVec::new(
            Opts::new(
                "libp2p_peers_per_client",
                "Connected peers by the client their identify agent version names (Unknown: \
                 identify has not answered yet).",
            ),
            &["Client"],
        )?;
        let peers_per_custody_vec = IntGaugeVec::new(
            Opts::new(
                "libp2p_peers_per_custody_group_count",
                "Connected peers by custody group count (their MetaData's, else their ENR's \
                 `cgc`; unknown before either).",
            ),
            &["custody_group_count"],
        )?;
        let dials = IntCounterVec::new(
            Opts::new(
                "libp2p_dials_total",
                "Dials started, by what asked for them (boot: boot nodes and static peers at \
                 start; discovery; command: the application or an operator; restarted: a peer \
                 that restarted, dialed back to greet it afresh).",
            ),
            &["source"],
        )?;
        let disconnects_vec = IntCounterVec::new(
            Opts::new(
                "network_disconnects_total",
                "Peers whose last connection closed, by why (goodbye_received, remote, idle; \
                 ours: score, banned, excess, goodbye_sent, restarted).",
            ),
            &["reason"],
        )?;
        let redials_held_back = IntCounter::new(
            "network_redials_held_back_total",
            "Discovered peers not dialed because their redial backoff after a disconnect had \
             not passed.",
        )?;
        let requests_sent = IntCounterVec::new(
            Opts::new(
                "network_rpc_requests_sent_total",
                "Req/resp requests sent to peers, by protocol.",
            ),
            &["protocol"],
        )?;
        let requests_held_back = IntCounterVec::new(
            Opts::new(
                "network_rpc_requests_held_back_total",
                "Req/resp requests of ours not sent because they would exceed the rate the node \
                 itself allows a peer, by protocol.",
            ),
            &["protocol"],
        )?;
        let requests_rate_limited = IntCounterVec::new(
            Opts::new(
                "network_rpc_requests_rate_limited_total",
                "Requests of peers answered RATE_LIMITED, by protocol.",
            ),
            &["protocol"],
        )?;
        let event_backlog = IntGauge::new(
            "network_event_backlog",
            "Control events (never dropped) waiting for room in the event channel.",
        )?;
        Ok(Self {
            dropped: EVENT_KINDS
                .iter()
                .map(|kind| dropped_vec.with_label_values(&[*kind]))
                .collect(),
            verdicts: VERDICTS
                .iter()
                .map(|v| verdicts_vec.with_label_values(&[*v]))
                .collect(),
            late_verdicts: VERDICTS
                .iter()
                .map(|v| late_verdicts_vec.with_label_values(&[*v]))
                .collect(),
            event_backlog,
            dropped_vec,
            verdicts_vec,
            late_verdicts_vec,
            peers_per_client: ClientKind::ALL
                .iter()
                .map(|kind| peers_per_client_vec.with_label_values(&[kind.as_str()]))
                .collect(),
            peers_per_client_vec,
            peers_per_custody_vec,
            custody_labels: Mutex::new(BTreeSet::new()),
            dials,
            disconnects: DisconnectReason::LABELS
                .iter()
                .map(|reason| disconnects_vec.with_label_values(&[*reason]))
                .collect(),
            disconnects_vec,
            redials_held_back,
            requests_sent,
            requests_held_back,
            requests_rate_limited,
        })
    }

    /// Sets the per-client and per-custody peer gauges from the peer table.
    pub(crate) fn observe_peers(&self, peers: &PeerManager) {
        for (gauge, count) in self
            .peers_per_client
            .iter()
            .zip(peers.connected_per_client())
        {
            gauge.set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        let counts = peers.connected_per_custody_group_count();
        let mut labels = self
            .custody_labels
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        labels.extend(counts.keys().copied());
        for cgc in labels.iter() {
            let label = cgc.map_or_else(|| UNKNOWN_CUSTODY.to_string(), |c| c.to_string());
            let count = counts.get(cgc).copied().unwrap_or(0);
            self.peers_per_custody_vec
                .with_label_values(&[&label])
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    /// Counts the end of a peer's last connection.
    pub(crate) fn disconnected(&self, reason: DisconnectReason) {
        self.disconnects[reason.index()].inc();
    }

    /// Counts one event of `kind` the application will never see.
    pub(crate) fn event_dropped(&self, kind: EventKind) {
        self.dropped[kind.index()].inc();
    }

    /// Events of `kind` dropped so far.
    #[cfg(test)]
    pub(crate) fn dropped_count(&self, kind: EventKind) -> u64 {
        self.dropped[kind.index()].get()
    }

    /// Counts a verdict; `applied` is what gossipsub answered (whether it still held the
    /// message).
    pub(crate) fn verdict(&self, validation: Validation, applied: bool) {
        let counters = if applied {
            &self.verdicts
        } else {
            &self.late_verdicts
        };
        counters[verdict_index(validation)].inc();
    }

    pub(crate) fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.dropped_vec.clone()))?;
        registry.register(Box::new(self.verdicts_vec.clone()))?;
        registry.register(Box::new(self.late_verdicts_vec.clone()))?;
        registry.register(Box::new(self.event_backlog.clone()))?;
        registry.register(Box::new(self.peers_per_client_vec.clone()))?;
        registry.register(Box::new(self.peers_per_custody_vec.clone()))?;
        registry.register(Box::new(self.dials.clone()))?;
        registry.register(Box::new(self.disconnects_vec.clone()))?;
        registry.register(Box::new(self.redials_held_back.clone()))?;
        registry.register(Box::new(self.requests_sent.clone()))?;
        registry.register(Box::new(self.requests_held_back.clone()))?;
        registry.register(Box::new(self.requests_rate_limited.clone()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_and_verdict_has_its_own_label() {
        let metrics = Metrics::new().unwrap();
        let registry = Registry::new();
        metrics.register(&registry).unwrap();
        metrics.event_dropped(EventKind::GossipMessage);
        metrics.event_dropped(EventKind::GossipMessage);
        metrics.event_dropped(EventKind::PeerConnected);
        metrics.verdict(Validation::Ignore, true);
        metrics.verdict(Validation::Reject, false);

        assert_eq!(
            metrics
                .dropped_vec
                .with_label_values(&["gossip_message"])
                .get(),
            2
        );
        assert_eq!(
            metrics
                .dropped_vec
                .with_label_values(&["peer_connected"])
                .get(),
            1
        );
        assert_eq!(
            metrics
                .dropped_vec
                .with_label_values(&["request_failed"])
                .get(),
            0
        );
        assert_eq!(metrics.verdicts_vec.with_label_values(&["ignore"]).get(), 1);
        assert_eq!(metrics.verdicts_vec.with_label_values(&["reject"]).get(), 0);
        assert_eq!(
            metrics
                .late_verdicts_vec
                .with_label_values(&["reject"])
                .get(),
            1
        );
        // Every label child exists from the start, so a dashboard sees zeros, not gaps.
        let families = registry.gather();
        let dropped = families
            .iter()
            .find(|f| f.name() == "network_events_dropped_total")
            .unwrap();
        assert_eq!(dropped.get_metric().len(), EventKind::COUNT);
    }

    #[test]
    fn peer_gauges_follow_the_table() {
        use crate::peer_manager::{ConnectionDirection, PeerManagerConfig};
        use libp2p::PeerId;
        use std::time::Instant;

        let metrics = Metrics::new().unwrap();
        let mut pm = PeerManager::new(PeerManagerConfig::default());
        let now = Instant::now();
        let (a, b) = (PeerId::random(), PeerId::random());
        pm.on_enr_custody_group_count(a, 4, now);
        for peer in [a, b] {
            pm.on_connection_established(peer, ConnectionDirection::Inbound, now);
        }
        pm.peer_mut(&a).unwrap().agent_version = Some("Teku/teku/v25.4.1".into());
        metrics.observe_peers(&pm);
        let client = |name: &str| {
            metrics
                .peers_per_client_vec
                .with_label_values(&[name])
                .get()
        };
        let custody = |label: &str| {
            metrics
                .peers_per_custody_vec
                .with_label_values(&[label])
                .get()
        };
        assert_eq!(
            (client("Teku"), client("Unknown"), client("Prysm")),
            (1, 1, 0)
        );
        assert_eq!((custody("4"), custody("unknown")), (1, 1));
        // `a` leaves: its custody's series drops to 0 instead of vanishing.
        pm.on_disconnected(&a, crate::peer_manager::DisconnectReason::Remote, now);
        metrics.observe_peers(&pm);
        assert_eq!(
            (client("Teku"), custody("4"), custody("unknown")),
            (0, 0, 1)
        );
    }
}
