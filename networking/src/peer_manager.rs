//! The peer manager: who is connected, how well each peer behaves, who is banned, whether more
//! peers are needed (overall and per subnet), and whom to prune when above the target.
//!
//! Scores live in `[-100, 100]` and decay towards 0 with a half-life; a peer below
//! [`DISCONNECT_THRESHOLD`] is disconnected, below [`BAN_THRESHOLD`] banned for
//! [`PeerManagerConfig::ban_duration`]. The gossipsub score is tracked separately by gossipsub;
//! the service feeds its graylisting back in as a penalty.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use libp2p::PeerId;
use libp2p::core::ConnectedPoint;

use crate::rpc::{MetaData, StatusMessage};

/// Below this score a peer is disconnected.
pub const DISCONNECT_THRESHOLD: f64 = -20.0;
/// Below this score a peer is banned.
pub const BAN_THRESHOLD: f64 = -50.0;
/// Scores are clamped to `[-MAX_SCORE, MAX_SCORE]`.
pub const MAX_SCORE: f64 = 100.0;

/// How bad a peer's fault was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerAction {
    /// Unforgivable (wrong network, invalid data that cannot be an accident): ban at once.
    Fatal,
    /// Tolerated a handful of times (-10).
    LowTolerance,
    /// Tolerated some tens of times (-5).
    MidTolerance,
    /// Tolerated many times (-1).
    HighTolerance,
}

impl PeerAction {
    fn penalty(self) -> f64 {
        match self {
            PeerAction::Fatal => 2.0 * MAX_SCORE,
            PeerAction::LowTolerance => 10.0,
            PeerAction::MidTolerance => 5.0,
            PeerAction::HighTolerance => 1.0,
        }
    }
}

/// What the swarm should do after a score change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreOutcome {
    /// Nothing.
    None,
    /// Disconnect the peer (it may reconnect later).
    Disconnect,
    /// Disconnect and refuse the peer until the ban expires.
    Ban,
}

/// Whether a new connection is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Keep it.
    Accept,
    /// The peer is banned.
    Banned,
    /// Above the peer limit.
    Full,
    /// A peer we disconnected on purpose, back inside its backoff.
    Backoff,
}

/// Tuning of the peer manager.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerManagerConfig {
    /// Peers wanted.
    pub target_peers: usize,
    /// Extra inbound peers tolerated above the target before new ones are refused (fraction of
    /// the target).
    pub excess_factor: f64,
    /// How long a ban lasts.
    pub ban_duration: Duration,
    /// Half-life of a score's decay towards 0.
    pub score_half_life: Duration,
    /// Peers wanted on each subscribed subnet.
    pub min_peers_per_subnet: usize,
}

impl Default for PeerManagerConfig {
    fn default() -> Self {
        Self {
            target_peers: 100,
            excess_factor: 0.1,
            ban_duration: Duration::from_secs(30 * 60),
            score_half_life: Duration::from_secs(600),
            min_peers_per_subnet: 2,
        }
    }
}

/// Why the last connection to a peer ended; each is counted (`network_disconnects_total{reason}`)
/// and sets how long the peer is not dialed again ([`redial_backoff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    /// The peer sent a Goodbye with this reason code.
    GoodbyeReceived(u64),
    /// The connection closed from the other side (or failed) without a Goodbye.
    Remote,
    /// Idle: no stream kept it open.
    Idle,
    /// Ours: its score fell below [`DISCONNECT_THRESHOLD`].
    Score,
    /// Ours: it is banned.
    Banned,
    /// Ours: above the peer target, pruned or refused.
    Excess,
    /// Ours: the application said Goodbye (irrelevant network, say).
    GoodbyeSent,
    /// Ours: it reconnected after a restart and is greeted afresh (dialed back at once).
    Restarted,
}

impl DisconnectReason {
    /// Every label, for the metric.
    pub const LABELS: [&'static str; 8] = [
        "goodbye_received",
        "remote",
        "idle",
        "score",
        "banned",
        "excess",
        "goodbye_sent",
        "restarted",
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        Self::LABELS[self.index()]
    }

    /// We sent the peer away (too many peers, a Goodbye of ours) and do not want it back before
    /// its backoff, so its inbound connections are refused until then too. Not a misbehaving
    /// peer (score, ban): its scoring goes on if it comes back, up to a ban, which refuses it
    /// everywhere. Not a restart (we dial it back ourselves and take its own dial).
    pub fn is_deliberate(self) -> bool {
        matches!(
            self,
            DisconnectReason::Excess | DisconnectReason::GoodbyeSent
        )
    }

    /// Position in [`Self::LABELS`].
    pub fn index(self) -> usize {
        match self {
            DisconnectReason::GoodbyeReceived(_) => 0,
            DisconnectReason::Remote => 1,
            DisconnectReason::Idle => 2,
            DisconnectReason::Score => 3,
            DisconnectReason::Banned => 4,
            DisconnectReason::Excess => 5,
            DisconnectReason::GoodbyeSent => 6,
            DisconnectReason::Restarted => 7,
        }
    }
}

/// The first redial backoff after a disconnect: the gossipsub PRUNE backoff (one minute, the
/// libp2p default Arbor's gossipsub keeps), so that a reconnection of ours never GRAFTs inside a
/// backoff the peer may have recorded as the connection ended.
pub const REDIAL_BACKOFF_BASE: Duration = Duration::from_secs(60);
/// The longest redial backoff of repeated disconnects.
pub const REDIAL_BACKOFF_MAX: Duration = Duration::from_secs(30 * 60);
/// A connection that lasted this long was a good one: the next disconnect starts the backoff
/// from [`REDIAL_BACKOFF_BASE`] again.
pub const STABLE_CONNECTION: Duration = Duration::from_secs(10 * 60);

/// How long after its `disconnects`-th disconnect in a row (1 for the first) a peer is not
/// dialed by discovery: [`REDIAL_BACKOFF_BASE`] doubled with each further one, at most
/// [`REDIAL_BACKOFF_MAX`]; a Goodbye's reason sets a floor (the peer said when to come back:
/// too many peers 5 minutes, shutting down or a fault 10 minutes, an irrelevant network 4 hours,
/// Lodestar's cool-downs but for shutdown, whose restart dials us itself). Inbound connections
/// are refused for it only after we sent the peer away ([`DisconnectReason::is_deliberate`]);
/// operators' dials are not held back.
pub fn redial_backoff(disconnects: u32, reason: DisconnectReason) -> Duration {
    let doublings = disconnects.saturating_sub(1).min(16);
    let grown = REDIAL_BACKOFF_BASE
        .saturating_mul(1 << doublings)
        .min(REDIAL_BACKOFF_MAX);
    let floor = match reason {
        DisconnectReason::GoodbyeReceived(129) => Duration::from_secs(5 * 60),
        DisconnectReason::GoodbyeReceived(1 | 3) => Duration::from_secs(10 * 60),
        DisconnectReason::GoodbyeReceived(2) => Duration::from_secs(4 * 60 * 60),
        _ => Duration::ZERO,
    };
    grown.max(floor)
}

/// What is known of one peer.
#[derive(Debug, Clone)]
pub struct PeerInfo {
    score: f64,
    score_updated: Instant,
    /// Connected, and how.
    pub connected: Option<ConnectionDirection>,
    /// The last `Status` it sent or answered.
    pub status: Option<StatusMessage>,
    /// The last `MetaData` it answered.
    pub metadata: Option<MetaData>,
    /// Until when the peer is banned.
    pub banned_until: Option<Instant>,
    /// The agent version from identify.
    pub agent_version: Option<String>,
    /// The `cgc` of the peer's ENR, when discovery found it.
    pub enr_custody_group_count: Option<u64>,
    /// When its current connection came up.
    connected_since: Option<Instant>,
    /// Disconnects in a row, each after a connection shorter than [`STABLE_CONNECTION`].
    disconnects: u32,
    /// Discovery does not dial it before this.
    redial_not_before: Option<Instant>,
    /// Inbound connections are refused before this: set when we disconnected it on purpose.
    refuse_inbound_before: Option<Instant>,
}

impl PeerInfo {
    /// The client the peer runs, from its identify agent version.
    pub fn client(&self) -> ClientKind {
        ClientKind::from_agent_version(self.agent_version.as_deref())
    }

    /// The peer's custody group count: its `MetaData` v3's, else its ENR's `cgc`; `None` while
    /// neither is known.
    pub fn custody_group_count(&self) -> Option<u64> {
        self.metadata
            .as_ref()
            .map(|m| m.custody_group_count)
            .or(self.enr_custody_group_count)
    }
}

/// The consensus client a peer runs, as its identify `agent_version` names it (the first
/// `/`-separated part, any case: `Lighthouse/v7.0.0/x86_64-linux`, `teku/teku/v25.1.0/…`,
/// `Prysm/v6.0.0/…`, `nimbus`, `lodestar/v1.30.0/…`, `Grandine/1.1.0/…`, `arbor/0.1.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientKind {
    /// Sigma Prime's Lighthouse.
    Lighthouse,
    /// Consensys' Teku.
    Teku,
    /// Offchain Labs' Prysm.
    Prysm,
    /// Status' Nimbus.
    Nimbus,
    /// ChainSafe's Lodestar.
    Lodestar,
    /// Grandine.
    Grandine,
    /// Arbor.
    Arbor,
    /// An agent version naming none of the above.
    Other,
    /// No agent version yet (identify has not answered).
    Unknown,
}

impl ClientKind {
    /// How many kinds there are.
    pub const COUNT: usize = 9;

    /// Every kind, in [`ClientKind::index`] order.
    pub const ALL: [ClientKind; Self::COUNT] = [
        ClientKind::Lighthouse,
        ClientKind::Teku,
        ClientKind::Prysm,
        ClientKind::Nimbus,
        ClientKind::Lodestar,
        ClientKind::Grandine,
        ClientKind::Arbor,
        ClientKind::Other,
        ClientKind::Unknown,
    ];

    /// The client an identify agent version names; [`ClientKind::Unknown`] for none.
    pub fn from_agent_version(agent_version: Option<&str>) -> Self {
        let Some(agent) = agent_version else {
            return ClientKind::Unknown;
        };
        let name = agent.split('/').next().unwrap_or_default().trim();
        Self::ALL
            .into_iter()
            .filter(|kind| !matches!(kind, ClientKind::Other | ClientKind::Unknown))
            .find(|kind| name.eq_ignore_ascii_case(kind.as_str()))
            .unwrap_or(ClientKind::Other)
    }

    /// The name shown on the status page and in `libp2p_peers_per_client{Client}`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Lighthouse => "Lighthouse",
            ClientKind::Teku => "Teku",
            ClientKind::Prysm => "Prysm",
            ClientKind::Nimbus => "Nimbus",
            ClientKind::Lodestar => "Lodestar",
            ClientKind::Grandine => "Grandine",
            ClientKind::Arbor => "Arbor",
            ClientKind::Other => "Other",
            ClientKind::Unknown => "Unknown",
        }
    }

    /// The kind's position in [`ClientKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for ClientKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A connected peer as the node's operators see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedPeer {
    /// The peer.
    pub peer_id: PeerId,
    /// Who dialed.
    pub direction: ConnectionDirection,
    /// Its identify agent version, once identify answered.
    pub agent_version: Option<String>,
    /// The client the agent version names.
    pub client: ClientKind,
    /// [`PeerInfo::custody_group_count`].
    pub custody_group_count: Option<u64>,
}

/// Who dialed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionDirection {
    /// The peer dialed us.
    Inbound,
    /// We dialed the peer.
    Outbound,
}

impl From<&ConnectedPoint> for ConnectionDirection {
    fn from(point: &ConnectedPoint) -> Self {
        if point.is_dialer() {
            ConnectionDirection::Outbound
        } else {
            ConnectionDirection::Inbound
        }
    }
}

/// The peer table.
#[derive(Debug, Clone)]
pub struct PeerManager {
    config: PeerManagerConfig,
    peers: HashMap<PeerId, PeerInfo>,
}

/// Disconnected, unbanned peers kept in the table at most; the rest are forgotten.
const MAX_DISCONNECTED_PEERS: usize = 1000;

impl PeerManager {
    /// An empty table.
    pub fn new(config: PeerManagerConfig) -> Self {
        Self {
            config,
            peers: HashMap::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &PeerManagerConfig {
        &self.config
    }

    /// The most connected peers allowed.
    pub fn max_peers(&self) -> usize {
        let target = self.config.target_peers as f64;
        (target * (1.0 + self.config.excess_factor)).ceil() as usize
    }

    fn entry(&mut self, peer: PeerId, now: Instant) -> &mut PeerInfo {
        self.peers.entry(peer).or_insert(PeerInfo {
            score: 0.0,
            score_updated: now,
            connected: None,
            status: None,
            metadata: None,
            banned_until: None,
            agent_version: None,
            enr_custody_group_count: None,
            connected_since: None,
            disconnects: 0,
            redial_not_before: None,
            refuse_inbound_before: None,
        })
    }

    /// Information on a peer.
    pub fn peer(&self, peer: &PeerId) -> Option<&PeerInfo> {
        self.peers.get(peer)
    }

    /// Mutable information on a peer (status, metadata, agent).
    pub fn peer_mut(&mut self, peer: &PeerId) -> Option<&mut PeerInfo> {
        self.peers.get_mut(peer)
    }

    /// The peer's score at `now`, after decay.
    pub fn score(&self, peer: &PeerId, now: Instant) -> f64 {
        self.peers
            .get(peer)
            .map(|info| self.decayed(info, now))
            .unwrap_or(0.0)
    }

    fn decayed(&self, info: &PeerInfo, now: Instant) -> f64 {
        let elapsed = now
            .saturating_duration_since(info.score_updated)
            .as_secs_f64();
        let half_life = self.config.score_half_life.as_secs_f64().max(f64::EPSILON);
        info.score * 0.5f64.powf(elapsed / half_life)
    }

    /// Whether `peer` is banned at `now`.
    pub fn is_banned(&self, peer: &PeerId, now: Instant) -> bool {
        self.peers
            .get(peer)
            .and_then(|info| info.banned_until)
            .is_some_and(|until| until > now)
    }

    /// The connected peers.
    pub fn connected_peers(&self) -> impl Iterator<Item = &PeerId> {
        self.peers
            .iter()
            .filter(|(_, info)| info.connected.is_some())
            .map(|(peer, _)| peer)
    }

    /// The connected peers and who dialed whom.
    pub fn connected_directions(&self) -> impl Iterator<Item = (PeerId, ConnectionDirection)> + '_ {
        self.peers
            .iter()
            .filter_map(|(peer, info)| info.connected.map(|d| (*peer, d)))
    }

    /// The connected peers with their direction, client and custody group count.
    pub fn connected_peer_details(&self) -> Vec<ConnectedPeer> {
        self.peers
            .iter()
            .filter_map(|(peer, info)| {
                Some(ConnectedPeer {
                    peer_id: *peer,
                    direction: info.connected?,
                    agent_version: info.agent_version.clone(),
                    client: info.client(),
                    custody_group_count: info.custody_group_count(),
                })
            })
            .collect()
    }

    /// Connected peers per client, indexed by [`ClientKind::index`].
    pub fn connected_per_client(&self) -> [usize; ClientKind::COUNT] {
        let mut counts = [0; ClientKind::COUNT];
        for info in self.peers.values().filter(|i| i.connected.is_some()) {
            counts[info.client().index()] += 1;
        }
        counts
    }

    /// Connected peers per custody group count (`None`: not known yet).
    pub fn connected_per_custody_group_count(&self) -> BTreeMap<Option<u64>, usize> {
        let mut counts = BTreeMap::new();
        for info in self.peers.values().filter(|i| i.connected.is_some()) {
            *counts.entry(info.custody_group_count()).or_insert(0) += 1;
        }
        counts
    }

    /// Records the `cgc` of a peer's ENR (discovery found it; the peer may not be connected
    /// yet). Its `MetaData` takes precedence once it answers.
    pub fn on_enr_custody_group_count(&mut self, peer: PeerId, cgc: u64, now: Instant) {
        self.entry(peer, now).enr_custody_group_count = Some(cgc);
        self.prune_table(now);
    }

    /// How many peers are connected.
    pub fn connected_count(&self) -> usize {
        self.connected_peers().count()
    }

    /// Whether discovery should look for more peers.
    pub fn needs_more_peers(&self) -> bool {
        self.connected_count() < self.config.target_peers
    }

    /// Records a new connection and says whether to keep it.
    pub fn on_connection_established(
        &mut self,
        peer: PeerId,
        direction: ConnectionDirection,
        now: Instant,
    ) -> Admission {
        if self.is_banned(&peer, now) {
            return Admission::Banned;
        }
        let already_connected = self.peers.get(&peer).is_some_and(|i| i.connected.is_some());
        if direction == ConnectionDirection::Inbound
            && !already_connected
            && self
                .peers
                .get(&peer)
                .and_then(|i| i.refuse_inbound_before)
                .is_some_and(|until| until > now)
        {
            return Admission::Backoff;
        }
        let already = self.peers.get(&peer).is_some_and(|i| i.connected.is_some());
        if !already && self.connected_count() >= self.max_peers() {
            return Admission::Full;
        }
        let info = self.entry(peer, now);
        // A peer both sides dialed at once has a connection each way: it counts as outbound
        // (a peer this node chose, which pruning keeps longest) whichever connection came first.
        if info.connected.is_none() || direction == ConnectionDirection::Outbound {
            info.connected = Some(direction);
        }
        info.connected_since.get_or_insert(now);
        Admission::Accept
    }

    /// Records that the last connection to `peer` closed, and why: the peer is not dialed
    /// again before its [`redial_backoff`]. Returns that backoff.
    pub fn on_disconnected(
        &mut self,
        peer: &PeerId,
        reason: DisconnectReason,
        now: Instant,
    ) -> Duration {
        // Peers refused at admission never entered the table: nothing to remember of them.
        let Some(info) = self.peers.get_mut(peer) else {
            return Duration::ZERO;
        };
        let stable = info
            .connected_since
            .is_some_and(|since| now.saturating_duration_since(since) >= STABLE_CONNECTION);
        info.disconnects = if stable {
            1
        } else {
            info.disconnects.saturating_add(1)
        };
        let backoff = redial_backoff(info.disconnects, reason);
        info.redial_not_before = Some(now + backoff);
        info.refuse_inbound_before = reason.is_deliberate().then_some(now + backoff);
        info.connected = None;
        info.connected_since = None;
        info.status = None;
        info.metadata = None;
        self.prune_table(now);
        backoff
    }

    /// Whether `peer`'s redial backoff has passed at `now` (a ban is checked apart).
    pub fn may_redial(&self, peer: &PeerId, now: Instant) -> bool {
        self.peers
            .get(peer)
            .and_then(|info| info.redial_not_before)
            .is_none_or(|at| at <= now)
    }

    fn prune_table(&mut self, now: Instant) {
        let disconnected = self
            .peers
            .values()
            .filter(|i| i.connected.is_none())
            .count();
        if disconnected <= MAX_DISCONNECTED_PEERS {
            return;
        }
        // Forget disconnected peers whose ban and redial backoff have expired.
        self.peers.retain(|_, info| {
            info.connected.is_some()
                || info.banned_until.is_some_and(|until| until > now)
                || info.redial_not_before.is_some_and(|at| at > now)
        });
        // Still too many (a churn of more than the bound within a backoff): the backoffs that
        // end first are forgotten (discovery may dial those a little sooner); bans are kept.
        let mut backing_off: Vec<(Instant, PeerId)> = self
            .peers
            .iter()
            .filter(|(_, i)| {
                i.connected.is_none() && i.banned_until.is_none_or(|until| until <= now)
            })
            .map(|(peer, i)| (i.redial_not_before.unwrap_or(now), *peer))
            .collect();
        if backing_off.len() > MAX_DISCONNECTED_PEERS {
            backing_off.sort_unstable();
            let excess = backing_off.len() - MAX_DISCONNECTED_PEERS;
            for (_, peer) in &backing_off[..excess] {
                self.peers.remove(peer);
            }
        }
    }

    /// Penalises `peer` for `action` and says what to do with it.
    pub fn report_peer(&mut self, peer: &PeerId, action: PeerAction, now: Instant) -> ScoreOutcome {
        let ban_duration = self.config.ban_duration;
        let current = self.score(peer, now);
        let info = self.entry(*peer, now);
        info.score = (current - action.penalty()).clamp(-MAX_SCORE, MAX_SCORE);
        info.score_updated = now;
        if info.score <= BAN_THRESHOLD {
            info.banned_until = Some(now + ban_duration);
            ScoreOutcome::Ban
        } else if info.score <= DISCONNECT_THRESHOLD && info.connected.is_some() {
            ScoreOutcome::Disconnect
        } else {
            ScoreOutcome::None
        }
    }

    /// Bans `peer` outright (for example after a Goodbye for a fault, or by operator).
    pub fn ban(&mut self, peer: &PeerId, now: Instant) {
        let until = now + self.config.ban_duration;
        let info = self.entry(*peer, now);
        info.banned_until = Some(until);
        info.score = BAN_THRESHOLD;
        info.score_updated = now;
    }

    /// Lifts a ban.
    pub fn unban(&mut self, peer: &PeerId) {
        if let Some(info) = self.peers.get_mut(peer) {
            info.banned_until = None;
            info.score = info.score.max(DISCONNECT_THRESHOLD / 2.0);
        }
    }

    /// The attestation subnets (of `wanted`) with fewer than `min_peers_per_subnet` connected
    /// peers advertising them in their metadata.
    pub fn attestation_subnets_needing_peers(&self, wanted: &[u64]) -> Vec<u64> {
        wanted
            .iter()
            .copied()
            .filter(|subnet| {
                self.peers
                    .values()
                    .filter(|i| i.connected.is_some())
                    .filter(|i| {
                        i.metadata
                            .as_ref()
                            .and_then(|m| m.attnets.get(*subnet as usize).ok())
                            .unwrap_or(false)
                    })
                    .count()
                    < self.config.min_peers_per_subnet
            })
            .collect()
    }

    /// Connected peers to drop to get back to the target: lowest score first, outbound peers and
    /// peers carrying a subnet in `protected_attnets` kept longest.
    pub fn peers_to_prune(&self, protected_attnets: &[u64], now: Instant) -> Vec<PeerId> {
        let connected = self.connected_count();
        if connected <= self.config.target_peers {
            return Vec::new();
        }
        let mut candidates: Vec<(bool, bool, f64, PeerId)> = self
            .peers
            .iter()
            .filter(|(_, i)| i.connected.is_some())
            .map(|(peer, info)| {
                let useful = info.metadata.as_ref().is_some_and(|m| {
                    protected_attnets
                        .iter()
                        .any(|s| m.attnets.get(*s as usize).unwrap_or(false))
                });
                let outbound = info.connected == Some(ConnectionDirection::Outbound);
                (useful, outbound, self.decayed(info, now), *peer)
            })
            .collect();
        candidates.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
        candidates
            .into_iter()
            .take(connected - self.config.target_peers)
            .map(|(_, _, _, peer)| peer)
            .collect()
    }

    /// Number of peers in the table (connected or remembered).
    pub fn known_count(&self) -> usize {
        self.peers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager(target: usize) -> PeerManager {
        PeerManager::new(PeerManagerConfig {
            target_peers: target,
            ..PeerManagerConfig::default()
        })
    }

    #[test]
    fn repeated_faults_disconnect_then_ban() {
        let mut pm = manager(10);
        let now = Instant::now();
        let peer = PeerId::random();
        assert_eq!(
            pm.on_connection_established(peer, ConnectionDirection::Inbound, now),
            Admission::Accept
        );
        assert_eq!(
            pm.report_peer(&peer, PeerAction::LowTolerance, now),
            ScoreOutcome::None
        );
        assert_eq!(
            pm.report_peer(&peer, PeerAction::LowTolerance, now),
            ScoreOutcome::Disconnect
        );
        for _ in 0..2 {
            pm.report_peer(&peer, PeerAction::LowTolerance, now);
        }
        assert_eq!(
            pm.report_peer(&peer, PeerAction::LowTolerance, now),
            ScoreOutcome::Ban
        );
        assert!(pm.is_banned(&peer, now));
        pm.on_disconnected(&peer, DisconnectReason::Banned, now);
        assert_eq!(
            pm.on_connection_established(peer, ConnectionDirection::Inbound, now),
            Admission::Banned
        );
        // The ban expires.
        let later = now + PeerManagerConfig::default().ban_duration + Duration::from_secs(1);
        assert!(!pm.is_banned(&peer, later));
    }

    #[test]
    fn a_peer_dialed_both_ways_counts_as_outbound_whichever_connection_came_first() {
        let mut pm = manager(10);
        let now = Instant::now();
        let peer = PeerId::random();
        for direction in [ConnectionDirection::Inbound, ConnectionDirection::Outbound] {
            assert_eq!(
                pm.on_connection_established(peer, direction, now),
                Admission::Accept
            );
        }
        let outbound = Some(ConnectionDirection::Outbound);
        assert_eq!(pm.peer(&peer).unwrap().connected, outbound);
        // A later inbound connection does not undo it.
        pm.on_connection_established(peer, ConnectionDirection::Inbound, now);
        assert_eq!(pm.peer(&peer).unwrap().connected, outbound);
        assert_eq!(pm.connected_count(), 1);
    }

    #[test]
    fn fatal_bans_at_once() {
        let mut pm = manager(10);
        let now = Instant::now();
        let peer = PeerId::random();
        pm.on_connection_established(peer, ConnectionDirection::Outbound, now);
        assert_eq!(
            pm.report_peer(&peer, PeerAction::Fatal, now),
            ScoreOutcome::Ban
        );
    }

    #[test]
    fn scores_decay_towards_zero() {
        let mut pm = manager(10);
        let now = Instant::now();
        let peer = PeerId::random();
        pm.report_peer(&peer, PeerAction::LowTolerance, now);
        let half_life = pm.config().score_half_life;
        let score = pm.score(&peer, now + half_life);
        assert!((score + 5.0).abs() < 1e-9, "{score}");
    }

    #[test]
    fn refuses_connections_above_the_limit_and_prunes_to_target() {
        let mut pm = manager(10);
        let now = Instant::now();
        let peers: Vec<PeerId> = (0..11).map(|_| PeerId::random()).collect();
        for peer in &peers {
            assert_eq!(
                pm.on_connection_established(*peer, ConnectionDirection::Inbound, now),
                Admission::Accept
            );
        }
        assert_eq!(pm.max_peers(), 11);
        assert_eq!(
            pm.on_connection_established(PeerId::random(), ConnectionDirection::Inbound, now),
            Admission::Full
        );
        // The worst-scored peer goes first; a peer on a protected subnet stays.
        pm.report_peer(&peers[3], PeerAction::HighTolerance, now);
        let mut metadata = MetaData::default();
        metadata.attnets.set(7, true).unwrap();
        pm.peer_mut(&peers[3]).unwrap().metadata = Some(metadata);
        pm.report_peer(&peers[5], PeerAction::HighTolerance, now);
        assert_eq!(pm.peers_to_prune(&[7], now), vec![peers[5]]);
        assert_eq!(pm.attestation_subnets_needing_peers(&[7, 8]), vec![7, 8]);
    }

    #[test]
    fn agent_versions_name_their_client() {
        let cases = [
            (
                "Lighthouse/v7.0.1-e42406d/x86_64-linux",
                ClientKind::Lighthouse,
            ),
            (
                "teku/teku/v25.4.1/linux-x86_64/-eclipseadoptium-openjdk64bitservervm-java-21",
                ClientKind::Teku,
            ),
            ("Prysm/v6.0.0/9a8b7c6d", ClientKind::Prysm),
            ("nimbus", ClientKind::Nimbus),
            ("lodestar/v1.29.0/1a2b3c4", ClientKind::Lodestar),
            ("Grandine/1.1.0-1a2b3c4/x86_64-linux", ClientKind::Grandine),
            ("arbor/0.1.0", ClientKind::Arbor),
            ("js-libp2p/2.8.0 UserAgent=v22.14.0", ClientKind::Other),
            ("", ClientKind::Other),
            ("lighthousex/v1", ClientKind::Other),
        ];
        for (agent, kind) in cases {
            assert_eq!(ClientKind::from_agent_version(Some(agent)), kind, "{agent}");
        }
        assert_eq!(ClientKind::from_agent_version(None), ClientKind::Unknown);
        for (i, kind) in ClientKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
    }

    #[test]
    fn custody_comes_from_metadata_else_the_enr() {
        let mut pm = manager(10);
        let now = Instant::now();
        let (a, b, c) = (PeerId::random(), PeerId::random(), PeerId::random());
        // `a` was discovered with `cgc` 8 and answered MetaData with 128; `b` only discovered;
        // `c` neither.
        pm.on_enr_custody_group_count(a, 8, now);
        pm.on_enr_custody_group_count(b, 4, now);
        for peer in [a, b, c] {
            pm.on_connection_established(peer, ConnectionDirection::Outbound, now);
        }
        pm.peer_mut(&a).unwrap().metadata = Some(MetaData {
            custody_group_count: 128,
            ..MetaData::default()
        });
        pm.peer_mut(&a).unwrap().agent_version = Some("Lighthouse/v7.0.1".into());
        pm.peer_mut(&b).unwrap().agent_version = Some("arbor/0.1.0".into());
        let per_cgc = pm.connected_per_custody_group_count();
        assert_eq!(
            per_cgc.into_iter().collect::<Vec<_>>(),
            vec![(None, 1), (Some(4), 1), (Some(128), 1)]
        );
        let per_client = pm.connected_per_client();
        assert_eq!(per_client[ClientKind::Lighthouse.index()], 1);
        assert_eq!(per_client[ClientKind::Arbor.index()], 1);
        assert_eq!(per_client[ClientKind::Unknown.index()], 1);
        assert_eq!(per_client.iter().sum::<usize>(), 3);
        let details = pm.connected_peer_details();
        let of_a = details.iter().find(|d| d.peer_id == a).unwrap();
        assert_eq!(of_a.client, ClientKind::Lighthouse);
        assert_eq!(of_a.custody_group_count, Some(128));
        // A disconnected peer is counted nowhere; its metadata is forgotten, its ENR's `cgc` kept.
        pm.on_disconnected(&a, DisconnectReason::Remote, now);
        assert_eq!(pm.connected_per_client().iter().sum::<usize>(), 2);
        assert_eq!(pm.peer(&a).unwrap().custody_group_count(), Some(8));
    }

    #[test]
    fn a_peer_we_disconnected_on_purpose_is_refused_inbound_until_its_backoff_passes() {
        let mut pm = manager(10);
        let now = Instant::now();
        for reason in [DisconnectReason::GoodbyeSent, DisconnectReason::Excess] {
            let peer = PeerId::random();
            pm.on_connection_established(peer, ConnectionDirection::Inbound, now);
            let backoff = pm.on_disconnected(&peer, reason, now);
            assert_eq!(
                pm.on_connection_established(peer, ConnectionDirection::Inbound, now),
                Admission::Backoff,
                "{reason:?}"
            );
            let later = now + backoff;
            assert_eq!(
                pm.on_connection_established(peer, ConnectionDirection::Inbound, later),
                Admission::Accept
            );
        }
        // A peer that left us, or restarted, may come back at once; one disconnected for its
        // score too (to be scored on, up to a ban).
        for reason in [
            DisconnectReason::Score,
            DisconnectReason::Remote,
            DisconnectReason::GoodbyeReceived(1),
            DisconnectReason::Idle,
            DisconnectReason::Restarted,
        ] {
            let peer = PeerId::random();
            pm.on_connection_established(peer, ConnectionDirection::Outbound, now);
            pm.on_disconnected(&peer, reason, now);
            assert_eq!(
                pm.on_connection_established(peer, ConnectionDirection::Inbound, now),
                Admission::Accept,
                "{reason:?}"
            );
        }
    }

    #[test]
    fn redial_backoff_grows_with_repeated_disconnects_and_restarts_after_a_stable_connection() {
        let mut pm = manager(10);
        let peer = PeerId::random();
        let mut now = Instant::now();
        let mut backoffs = Vec::new();
        for _ in 0..8 {
            pm.on_connection_established(peer, ConnectionDirection::Outbound, now);
            assert!(
                pm.may_redial(&peer, now),
                "connected peers are not held back"
            );
            now += Duration::from_secs(5);
            let backoff = pm.on_disconnected(&peer, DisconnectReason::Remote, now);
            assert!(!pm.may_redial(&peer, now));
            assert!(!pm.may_redial(&peer, now + backoff - Duration::from_millis(1)));
            assert!(pm.may_redial(&peer, now + backoff));
            // Never banned for it: it may connect to us at once.
            assert!(!pm.is_banned(&peer, now));
            backoffs.push(backoff.as_secs());
            now += backoff;
        }
        assert_eq!(backoffs, [60, 120, 240, 480, 960, 1800, 1800, 1800]);
        // A connection that lasted starts the backoff again from the base.
        pm.on_connection_established(peer, ConnectionDirection::Inbound, now);
        now += STABLE_CONNECTION;
        assert_eq!(
            pm.on_disconnected(&peer, DisconnectReason::Remote, now),
            REDIAL_BACKOFF_BASE
        );
        // Goodbye reasons set floors.
        assert_eq!(
            redial_backoff(1, DisconnectReason::GoodbyeReceived(129)),
            Duration::from_secs(300)
        );
        assert_eq!(
            redial_backoff(1, DisconnectReason::GoodbyeReceived(2)),
            Duration::from_secs(4 * 3600)
        );
        assert_eq!(
            redial_backoff(1, DisconnectReason::GoodbyeReceived(1)),
            Duration::from_secs(600)
        );
        assert_eq!(
            redial_backoff(6, DisconnectReason::GoodbyeReceived(129)),
            REDIAL_BACKOFF_MAX
        );
        // A peer never admitted leaves nothing behind.
        let stranger = PeerId::random();
        assert_eq!(
            pm.on_disconnected(&stranger, DisconnectReason::Remote, now),
            Duration::ZERO
        );
        assert!(pm.peer(&stranger).is_none());
    }

    #[test]
    fn table_of_disconnected_peers_is_bounded() {
        let mut pm = manager(10);
        let now = Instant::now();
        for _ in 0..(MAX_DISCONNECTED_PEERS + 50) {
            let peer = PeerId::random();
            pm.on_connection_established(peer, ConnectionDirection::Inbound, now);
            pm.on_disconnected(&peer, DisconnectReason::Remote, now);
        }
        assert!(pm.known_count() <= MAX_DISCONNECTED_PEERS + 1);
    }
}
