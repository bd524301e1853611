//! Several Arbor nodes on loopback, each a mock execution client, a beacon node and a validator
//! client as separate processes of the `arbor` binary with its share of the validators, from
//! one interop genesis (`arbor new-testnet`) with blobs in every block; scripted faults; and
//! the checks of a network that survives them:
//!
//! - finality keeps advancing outside the fault windows (the finalized epoch is at most
//!   [`MAX_FINALITY_LAG`] behind the clock's);
//! - the heads of the nodes outside a fault agree within a slot;
//! - no validator of a node outside a fault misses a duty: each is live (`liveness`, an
//!   attestation of it included) in every epoch, and each slot it proposes has its block
//!   (asserted with [`SimConfig::strict_duties`], reported otherwise);
//! - a node that joins by checkpoint sync, and one SIGKILLed again and again while it
//!   range-syncs from genesis, reach the head (the latter never restarting behind where it
//!   was killed);
//! - a peer sending garbage on every topic and protocol is banned;
//! - no beacon node's memory grows without bound (resident memory at the end against that
//!   after its first epochs).
//!
//! The faults: a beacon node SIGKILLed and restarted on its datadir; a beacon node offline
//! for some epochs, then back (it syncs); an execution client answering `SYNCING` for some
//! epochs. A fault's window runs from its start to [`RECOVERY_EPOCHS`] after its end; the
//! faulty node's duties and head are not judged inside it, nor the network's finality.
//!
//! [`run`] returns a [`Report`]; [`Report::violations`] lists what failed.

pub mod garbage;
pub mod http;
pub mod process;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use process::{NodeDirs, Proc, free_port};

/// Epochs after a fault ends before its node is judged again (sync, then a full epoch).
pub const RECOVERY_EPOCHS: u64 = 2;

/// How many epochs the finalized epoch may trail the clock's outside fault windows (2 is
/// normal: an epoch finalizes two epochs later; one more for a late block at the boundary).
pub const MAX_FINALITY_LAG: u64 = 3;

/// Epochs from an epoch's justification to the finalization it enables (a fault that cost
/// justifications delays finality by this much past the node's recovery).
pub const FINALITY_PIPELINE_EPOCHS: u64 = 2;

/// Slots per epoch of the minimal preset the simulator runs.
const SLOTS_PER_EPOCH: u64 = 8;

/// One scripted fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The node's beacon node is SIGKILLed and restarted a slot later on its datadir.
    KillAndRestart,
    /// The node's beacon node stops (SIGTERM) and comes back after `epochs`; it syncs.
    Offline {
        /// Epochs it is down.
        epochs: u64,
    },
    /// The node's execution client answers `SYNCING` to everything for `epochs`.
    ElSyncing {
        /// Epochs it answers `SYNCING`.
        epochs: u64,
    },
    /// A peer sends garbage to the node on every gossip topic and req/resp protocol, one
    /// connection after another (at most `rounds`): it must be banned, and the node is judged
    /// as usual meanwhile (no window).
    GarbagePeer {
        /// Connections the peer tries at most.
        rounds: u8,
    },
}

/// A fault on one node, starting at an epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The node (not node 0, the boot node).
    pub node: usize,
    /// The epoch it starts in (a slot into it).
    pub at_epoch: u64,
    /// What happens.
    pub kind: FaultKind,
}

impl Fault {
    /// The epochs it lasts (0 for a kill and restart, which takes a slot).
    fn duration(&self) -> u64 {
        match self.kind {
            FaultKind::KillAndRestart | FaultKind::GarbagePeer { .. } => 0,
            FaultKind::Offline { epochs } | FaultKind::ElSyncing { epochs } => epochs,
        }
    }

    /// The epochs `[start, end)` in which its node is not judged.
    pub fn window(&self) -> (u64, u64) {
        (
            self.at_epoch,
            self.at_epoch + self.duration() + 1 + RECOVERY_EPOCHS,
        )
    }

    fn covers(&self, epoch: u64) -> bool {
        if matches!(self.kind, FaultKind::GarbagePeer { .. }) {
            return false;
        }
        let (start, end) = self.window();
        (start..end).contains(&epoch)
    }

    /// Whether the network's finality is excused at `epoch`: the node's window and the two
    /// epochs justification takes to become finality again.
    fn covers_finality(&self, epoch: u64) -> bool {
        if matches!(self.kind, FaultKind::GarbagePeer { .. }) {
            return false;
        }
        let (start, end) = self.window();
        (start..end + FINALITY_PIPELINE_EPOCHS).contains(&epoch)
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The `arbor` binary.
    pub arbor: PathBuf,
    /// Where the network directory, datadirs and logs go (emptied first).
    pub dir: PathBuf,
    /// Nodes, each with `validators / nodes` validators.
    pub nodes: usize,
    /// Validators in the genesis state.
    pub validators: usize,
    /// Blobs in every payload.
    pub blobs: usize,
    /// Seconds per slot.
    pub seconds_per_slot: u64,
    /// Seconds from the start to genesis (the processes start meanwhile).
    pub genesis_delay: u64,
    /// Epochs to run.
    pub epochs: u64,
    /// The faults, in any order.
    pub faults: Vec<Fault>,
    /// Epochs at which a node without validators joins, checkpoint-synced from node 0's
    /// Beacon API (`--checkpoint-sync-url`); it must then follow the head like the others.
    pub checkpoint_joins: Vec<u64>,
    /// `(epoch, kills)`: at that epoch a node without validators starts from genesis and
    /// range-syncs, and is SIGKILLed and restarted `kills` times while it syncs; each restart
    /// must resume at least where it was (the store survives `kill -9`), and it must then
    /// reach the head.
    pub sync_kills: Option<(u64, usize)>,
    /// Whether a duty missed outside the fault windows fails the run (the long profile, on the
    /// release binary) or is only reported (the short one, on a debug build in `make test`, where
    /// a loaded machine makes late blocks and their lost votes likely).
    pub strict_duties: bool,
}

impl SimConfig {
    /// The short profile `make test` runs: three nodes, one SIGKILL and restart, a garbage peer,
    /// a fourth node joining by checkpoint sync (the SIGKILLs during sync are in the long one).
    pub fn short(arbor: PathBuf, dir: PathBuf) -> Self {
        Self {
            arbor,
            dir,
            nodes: 3,
            validators: 48,
            blobs: 2,
            seconds_per_slot: 3,
            // The three nodes' nine processes were up about 10 s after the start (debug binary,
            // 2 cores): 25 s leaves room without idling `make test`.
            genesis_delay: 25,
            epochs: 8,
            faults: vec![
                Fault {
                    node: 2,
                    at_epoch: 2,
                    kind: FaultKind::KillAndRestart,
                },
                Fault {
                    node: 1,
                    at_epoch: 5,
                    kind: FaultKind::GarbagePeer { rounds: 8 },
                },
            ],
            checkpoint_joins: vec![5],
            sync_kills: None,
            strict_duties: false,
        }
    }

    /// The long profile (`make simulate`): four nodes and every fault, one after another. The
    /// SIGKILLs during sync hold the simulator's loop for about five epochs (from epoch 14), so
    /// no other fault is scheduled in them: an action due meanwhile would run late while its
    /// window was counted from when it was due.
    pub fn long(arbor: PathBuf, dir: PathBuf) -> Self {
        Self {
            arbor,
            dir,
            nodes: 4,
            validators: 64,
            blobs: 3,
            seconds_per_slot: 2,
            genesis_delay: 40,
            epochs: 26,
            faults: vec![
                Fault {
                    node: 1,
                    at_epoch: 2,
                    kind: FaultKind::KillAndRestart,
                },
                Fault {
                    node: 2,
                    at_epoch: 6,
                    kind: FaultKind::Offline { epochs: 2 },
                },
                Fault {
                    node: 3,
                    at_epoch: 12,
                    kind: FaultKind::ElSyncing { epochs: 2 },
                },
                Fault {
                    node: 1,
                    at_epoch: 10,
                    kind: FaultKind::GarbagePeer { rounds: 8 },
                },
            ],
            checkpoint_joins: vec![9],
            sync_kills: Some((14, 20)),
            strict_duties: true,
        }
    }

    fn share(&self, node: usize) -> (usize, usize) {
        (
            node * self.validators / self.nodes,
            (node + 1) * self.validators / self.nodes,
        )
    }

    fn node_of_validator(&self, index: usize) -> usize {
        (0..self.nodes)
            .find(|&n| {
                let (a, b) = self.share(n);
                (a..b).contains(&index)
            })
            .unwrap_or(0)
    }
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct Report {
    /// Epochs run.
    pub epochs_run: u64,
    /// The lowest finalized epoch of the nodes at the end.
    pub finalized_epoch: u64,
    /// `(epoch, finalized epoch)` at each epoch's sixth slot, lowest over the running nodes.
    pub finality: Vec<(u64, u64)>,
    /// Per fault: its description and the largest finality lag inside its window.
    pub fault_lags: Vec<(String, u64)>,
    /// Duties missed outside fault windows: `(epoch, node, what)`.
    pub missed_duties: Vec<(u64, usize, String)>,
    /// Duties missed inside fault windows (reported, not failed).
    pub missed_in_faults: usize,
    /// Slots at which heads outside fault windows still differed a slot later.
    pub head_disagreements: Vec<(u64, String)>,
    /// Per beacon node process (one per start): `(name, rss after its second epoch, rss at its
    /// end, peak)` in bytes.
    pub memory: Vec<(String, u64, u64, u64)>,
    /// Processes that exited on their own.
    pub exits: Vec<String>,
    /// Beacon nodes' log lines saying a lock was held too long (`beacon_chain::tracked_mutex`:
    /// the holder's thread and the place it locked), at most two per node.
    pub lock_stalls: Vec<String>,
    /// Checks that could not be made (a node that did not answer), with why.
    pub unchecked: Vec<String>,
    /// Checkpoint-synced nodes: `(node, epoch joined, first slot its head agreed with the
    /// others')`.
    pub joins: Vec<(usize, u64, Option<u64>)>,
    /// Garbage peers: `(target node, what it saw)`, or why it could not run.
    pub garbage: Vec<(usize, Result<garbage::GarbageOutcome, String>)>,
    /// The node SIGKILLed while syncing: per kill `(head slot before, head slot after the
    /// restart, clock slot at the kill)`.
    pub sync_kills: Vec<(u64, u64, u64)>,
    /// That node: the first slot its head agreed with node 0's after the last restart.
    pub sync_kill_node_synced: Option<(usize, Option<u64>)>,
}

impl Report {
    /// Everything that failed, one line each; empty when the run passed.
    pub fn violations(&self, config: &SimConfig) -> Vec<String> {
        let mut out = Vec::new();
        for (epoch, finalized) in &self.finality {
            let in_fault = config.faults.iter().any(|f| f.covers_finality(*epoch));
            if !in_fault && *epoch >= MAX_FINALITY_LAG && epoch - finalized > MAX_FINALITY_LAG {
                out.push(format!(
                    "epoch {epoch}: finalized epoch {finalized}, more than {MAX_FINALITY_LAG} behind"
                ));
            }
        }
        if self.finalized_epoch + MAX_FINALITY_LAG < self.epochs_run {
            out.push(format!(
                "finalized epoch {} after {} epochs",
                self.finalized_epoch, self.epochs_run
            ));
        }
        if config.strict_duties {
            for (epoch, node, what) in &self.missed_duties {
                out.push(format!("epoch {epoch}: node {node} missed {what}"));
            }
        }
        for (slot, heads) in &self.head_disagreements {
            out.push(format!(
                "slot {slot}: heads still differ a slot later: {heads}"
            ));
        }
        for (name, early, end, _) in &self.memory {
            if *early > 0 && *end > early * 2 + (256 << 20) {
                out.push(format!(
                    "{name}: resident memory grew from {} MiB to {} MiB",
                    early >> 20,
                    end >> 20
                ));
            }
        }
        for exit in &self.exits {
            out.push(format!("exited on its own: {exit}"));
        }
        for stall in &self.lock_stalls {
            out.push(format!("lock held too long: {stall}"));
        }
        for (i, (before, after, _)) in self.sync_kills.iter().enumerate() {
            if after < before {
                out.push(format!(
                    "SIGKILL {} during sync: the head went back from slot {before} to {after} on restart",
                    i + 1
                ));
            }
        }
        if let Some((node, synced)) = self.sync_kill_node_synced {
            if synced.is_none() {
                out.push(format!(
                    "node {node}, SIGKILLed while syncing, never reached the others' head"
                ));
            }
            if let Some((epoch, kills)) = config.sync_kills
                && self.sync_kills.len() < kills
            {
                out.push(format!(
                    "only {} of {kills} SIGKILLs during sync ran (from epoch {epoch})",
                    self.sync_kills.len()
                ));
            }
        }
        for (node, outcome) in &self.garbage {
            match outcome {
                Ok(o) if o.refused && o.rounds_served > 0 => {}
                Ok(o) if o.refused => out.push(format!(
                    "node {node} refused the garbage peer's first connection: nothing was tested ({})",
                    o.unserved.join("; ")
                )),
                Ok(o) => out.push(format!(
                    "node {node} served a garbage peer {} times without banning it",
                    o.rounds_served
                )),
                Err(e) => out.push(format!("the garbage peer of node {node} did not run: {e}")),
            }
        }
        for (node, epoch, agreed) in &self.joins {
            let deadline = (epoch + 1 + RECOVERY_EPOCHS) * SLOTS_PER_EPOCH;
            match agreed {
                Some(slot) if *slot <= deadline => {}
                Some(slot) => out.push(format!(
                    "node {node}, checkpoint-synced at epoch {epoch}, reached the head only at slot {slot}"
                )),
                None => out.push(format!(
                    "node {node}, checkpoint-synced at epoch {epoch}, never reached the others' head"
                )),
            }
        }
        out
    }

    /// A summary for the log and the closing note.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "simulator: {} epochs, finalized epoch {}; {} duties missed outside faults, {} inside; {} head disagreements",
            self.epochs_run,
            self.finalized_epoch,
            self.missed_duties.len(),
            self.missed_in_faults,
            self.head_disagreements.len()
        );
        let finality: Vec<String> = self
            .finality
            .iter()
            .map(|(e, f)| format!("{e}:{f}"))
            .collect();
        let _ = writeln!(
            s,
            "simulator: finality (epoch:finalized) {}",
            finality.join(" ")
        );
        let mut missed: std::collections::BTreeMap<(u64, usize), usize> = Default::default();
        for (epoch, node, _) in &self.missed_duties {
            *missed.entry((*epoch, *node)).or_default() += 1;
        }
        for ((epoch, node), count) in missed {
            let _ = writeln!(
                s,
                "simulator: epoch {epoch}: node {node} missed {count} duties outside fault windows"
            );
        }
        for (fault, lag) in &self.fault_lags {
            let _ = writeln!(s, "simulator: {fault}: largest finality lag {lag} epochs");
        }
        for (name, early, end, peak) in &self.memory {
            let _ = writeln!(
                s,
                "simulator: {name}: rss {} MiB after two epochs, {} MiB at the end, peak {} MiB",
                early >> 20,
                end >> 20,
                peak >> 20
            );
        }
        for (node, epoch, agreed) in &self.joins {
            let _ = writeln!(
                s,
                "simulator: node {node} joined by checkpoint sync at epoch {epoch}; its head first agreed with the others' at slot {}",
                agreed.map_or("-".to_string(), |a| a.to_string())
            );
        }
        if let Some((node, synced)) = self.sync_kill_node_synced {
            let behind = self
                .sync_kills
                .iter()
                .filter(|(before, _, clock)| before + 1 < *clock)
                .count();
            let kills: Vec<String> = self
                .sync_kills
                .iter()
                .map(|(b, a, c)| format!("{b}->{a}@{c}"))
                .collect();
            let _ = writeln!(
                s,
                "simulator: node {node} SIGKILLed {} times while range-syncing from genesis ({behind} of them behind the clock by 2+ slots), head before->after restart@clock: {}; at the head from slot {}",
                self.sync_kills.len(),
                kills.join(" "),
                synced.map_or("-".to_string(), |s| s.to_string())
            );
        }
        for (node, outcome) in &self.garbage {
            match outcome {
                Ok(o) => {
                    let _ = writeln!(
                        s,
                        "simulator: garbage peer against node {node}: served {} connection(s), {} gossip messages, {} req/resp streams; {}",
                        o.rounds_served,
                        o.published,
                        o.streams,
                        if o.refused {
                            format!("then refused (banned): {}", o.unserved.join("; "))
                        } else {
                            "never refused".to_string()
                        }
                    );
                }
                Err(e) => {
                    let _ = writeln!(s, "simulator: garbage peer against node {node}: {e}");
                }
            }
        }
        for u in &self.unchecked {
            let _ = writeln!(s, "simulator: unchecked: {u}");
        }
        s
    }
}

/// One node's processes and ports.
struct Node {
    index: usize,
    dirs: NodeDirs,
    el_port: u16,
    http_port: u16,
    metrics_port: u16,
    p2p_port: u16,
    el: Option<Proc>,
    bn: Option<Proc>,
    vc: Option<Proc>,
    /// The current beacon node process's memory samples (per epoch).
    rss: Vec<u64>,
    starts: usize,
}

struct Sim<'a> {
    config: &'a SimConfig,
    net: PathBuf,
    jwt: PathBuf,
    genesis_time: u64,
    boot_enr: String,
    nodes: Vec<Node>,
    report: Report,
    /// Proposer duties by epoch, fetched during the epoch.
    proposer_duties: std::collections::HashMap<u64, Vec<serde_json::Value>>,
    /// Running garbage peers, by target node.
    garbage_peers: Vec<(
        usize,
        std::thread::JoinHandle<Result<garbage::GarbageOutcome, String>>,
    )>,
}

fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Sim<'_> {
    fn slot_ms(&self) -> u64 {
        self.config.seconds_per_slot * 1000
    }

    fn time_of_slot_ms(&self, slot: u64) -> u64 {
        self.genesis_time * 1000 + slot * self.slot_ms()
    }

    /// Sleeps until `fraction` of `slot` has passed.
    fn wait_until(&self, slot: u64, fraction: f64) {
        let at = self.time_of_slot_ms(slot) + (self.slot_ms() as f64 * fraction) as u64;
        let now = unix_now_ms();
        if at > now {
            std::thread::sleep(Duration::from_millis(at - now));
        }
    }

    fn bn_args(&self, node: &Node) -> Vec<String> {
        let mut args: Vec<String> = [
            "bn",
            "--testnet-dir",
            &self.net.display().to_string(),
            "--datadir",
            &node.dirs.root.join("bn").display().to_string(),
            "--execution-endpoint",
            &format!("http://127.0.0.1:{}", node.el_port),
            "--execution-jwt",
            &self.jwt.display().to_string(),
            "--http",
            "--http-port",
            &node.http_port.to_string(),
            "--metrics",
            "--metrics-port",
            &node.metrics_port.to_string(),
            "--listen-address",
            "127.0.0.1",
            "--enr-address",
            "127.0.0.1",
            "--port",
            &node.p2p_port.to_string(),
            "--target-peers",
            // Room for every other node and a garbage peer.
            &(self.nodes.len() + 2).to_string(),
            "--supernode",
            // A small database page cache (256 MiB by default, fills as the database
            // grows): the memory check then sees the node's own growth, not the cache filling.
            "--db-cache-mib",
            "64",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if node.index > 0 {
            args.push("--boot-nodes".into());
            args.push(self.boot_enr.clone());
        }
        if node.index >= self.config.nodes
            && node.index < self.config.nodes + self.config.checkpoint_joins.len()
        {
            args.push("--checkpoint-sync-url".into());
            args.push(format!("http://127.0.0.1:{}", self.nodes[0].http_port));
            // The joiner trusts node 0's finalized block root as an operator would a
            // weak-subjectivity checkpoint (the block is fetched by that root and checked).
            if let Some(root) = http::get(
                self.nodes[0].http_port,
                "/eth/v1/beacon/blocks/finalized/root",
            )
            .ok()
            .and_then(|v| Some(v.pointer("/data/root")?.as_str()?.to_string()))
            {
                args.push("--checkpoint-block-root".into());
                args.push(root);
            }
        }
        args
    }

    fn start_bn(&mut self, i: usize) -> Result<(), String> {
        let args = self.bn_args(&self.nodes[i]);
        let node = &mut self.nodes[i];
        node.starts += 1;
        let name = format!("node-{i} bn (start {})", node.starts);
        node.bn = Some(Proc::spawn(
            &self.config.arbor,
            &args,
            &node.dirs.log("bn"),
            name,
        )?);
        node.rss.clear();
        Ok(())
    }

    /// Waits until node `i`'s Beacon API answers.
    fn wait_for_api(&self, i: usize, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            match http::get(self.nodes[i].http_port, "/eth/v1/node/version") {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() > deadline => {
                    return Err(format!(
                        "node {i}: the Beacon API did not come up within {within:?}: {e}; log {}",
                        self.nodes[i].dirs.log("bn").display()
                    ));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// Waits until node `i`'s execution client accepts connections.
    fn wait_for_el(&self, i: usize, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.nodes[i].el_port));
        while std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err() {
            if Instant::now() > deadline {
                return Err(format!(
                    "node {i}: the execution client did not listen within {within:?}; log {}",
                    self.nodes[i].dirs.log("el").display()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(())
    }

    /// Records the memory of the current beacon node process of `i` at its end.
    fn close_bn_memory(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let Some(bn) = &node.bn else { return };
        let early = node.rss.get(2).or(node.rss.last()).copied().unwrap_or(0);
        let end = node.rss.last().copied().unwrap_or(0);
        let peak = node.rss.iter().copied().max().unwrap_or(0);
        self.report.memory.push((bn.name.clone(), early, end, peak));
    }

    fn set_el_syncing(&self, i: usize, syncing: bool) -> Result<(), String> {
        let secret = std::fs::read_to_string(&self.jwt).map_err(|e| e.to_string())?;
        let secret =
            execution_layer::JwtSecret::from_hex(secret.trim()).map_err(|e| e.to_string())?;
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": mock_execution_layer::MOCK_SET_SYNCING,
            "params": [syncing],
        });
        http::post_authorized(self.nodes[i].el_port, "/", &body, &secret.token())
            .map(|_| ())
            .map_err(|e| format!("node {i}: arbor_mockSetSyncing: {e}"))
    }

    /// Nodes judged in `epoch`: not in one of their faults' windows.
    fn healthy(&self, epoch: u64) -> Vec<usize> {
        (0..self.nodes.len())
            // The node SIGKILLed while syncing is judged from the epoch after it reached the
            // head (its sync from genesis takes as long as the chain is).
            .filter(|&n| {
                Some(n) != self.sync_kill_node()
                    || matches!(
                        self.report.sync_kill_node_synced,
                        Some((_, Some(slot))) if epoch > slot / SLOTS_PER_EPOCH
                    )
            })
            .filter(|&n| match self.join_epoch(n) {
                Some(joined) => epoch >= joined + 1 + RECOVERY_EPOCHS,
                None => true,
            })
            .filter(|&n| {
                !self
                    .config
                    .faults
                    .iter()
                    .any(|f| f.node == n && f.covers(epoch))
            })
            .collect()
    }

    fn head_of(&self, i: usize) -> Option<(u64, String)> {
        let head = http::get(self.nodes[i].http_port, "/eth/v1/beacon/headers/head").ok()?;
        let data = head.get("data")?;
        let slot = http::as_u64(data.pointer("/header/message/slot")?)?;
        let root = data.get("root")?.as_str()?.to_string();
        Some((slot, root))
    }

    fn finalized_of(&self, i: usize) -> Option<u64> {
        let checkpoints = http::get(
            self.nodes[i].http_port,
            "/eth/v1/beacon/states/head/finality_checkpoints",
        )
        .ok()?;
        http::as_u64(checkpoints.pointer("/data/finalized/epoch")?)
    }

    /// The heads of `nodes`, `None` where one did not answer.
    fn heads(&self, nodes: &[usize]) -> Vec<(usize, Option<(u64, String)>)> {
        nodes.iter().map(|&n| (n, self.head_of(n))).collect()
    }

    /// Epoch `epoch`'s duties, judged from a healthy node during the next epoch: every
    /// validator of a healthy node is live, every slot whose proposer is on a healthy node has
    /// a block.
    fn check_duties(&mut self, epoch: u64) {
        let healthy = self.healthy(epoch);
        let Some(&judge) = healthy.first() else {
            return;
        };
        let port = self.nodes[judge].http_port;
        let indices: Vec<String> = (0..self.config.validators).map(|i| i.to_string()).collect();
        match http::post(
            port,
            &format!("/eth/v1/validator/liveness/{epoch}"),
            &serde_json::json!(indices),
        ) {
            Ok(answer) => {
                let entries = answer
                    .get("data")
                    .and_then(|d| d.as_array())
                    .cloned()
                    .unwrap_or_default();
                for entry in entries {
                    let index = entry.get("index").and_then(http::as_u64).unwrap_or(0) as usize;
                    let live = entry
                        .get("is_live")
                        .and_then(|v| v.as_bool())
                        .unwrap_or(false);
                    if !live {
                        let node = self.config.node_of_validator(index);
                        if healthy.contains(&node) {
                            self.report.missed_duties.push((
                                epoch,
                                node,
                                format!("the attestation of validator {index}"),
                            ));
                        } else {
                            self.report.missed_in_faults += 1;
                        }
                    }
                }
            }
            Err(e) => self
                .report
                .unchecked
                .push(format!("epoch {epoch}: liveness from node {judge}: {e}")),
        }
        match self.proposer_duties.remove(&epoch) {
            Some(duties) => {
                for duty in duties {
                    let slot = duty.get("slot").and_then(http::as_u64).unwrap_or(0);
                    let index = duty
                        .get("validator_index")
                        .and_then(http::as_u64)
                        .unwrap_or(0) as usize;
                    if slot == 0 {
                        continue;
                    }
                    let node = self.config.node_of_validator(index);
                    let has_block = match http::get(port, &format!("/eth/v1/beacon/headers/{slot}"))
                    {
                        Ok(_) => true,
                        Err(http::HttpError::Status { status: 404, .. }) => false,
                        Err(e) => {
                            self.report
                                .unchecked
                                .push(format!("slot {slot}: header from node {judge}: {e}"));
                            true
                        }
                    };
                    if !has_block {
                        if healthy.contains(&node) {
                            self.report.missed_duties.push((
                                epoch,
                                node,
                                format!("the proposal of slot {slot} (validator {index})"),
                            ));
                        } else {
                            self.report.missed_in_faults += 1;
                        }
                    }
                }
            }
            None => self
                .report
                .unchecked
                .push(format!("epoch {epoch}: no proposer duties were fetched")),
        }
    }

    /// Fetches `epoch`'s proposer duties (during the epoch, from a healthy node) for
    /// [`Self::check_duties`] in the next one.
    fn fetch_proposer_duties(&mut self, epoch: u64) {
        let Some(&from) = self.healthy(epoch).first() else {
            return;
        };
        match http::get(
            self.nodes[from].http_port,
            &format!("/eth/v1/validator/duties/proposer/{epoch}"),
        ) {
            Ok(duties) => {
                let duties = duties
                    .get("data")
                    .and_then(|d| d.as_array())
                    .cloned()
                    .unwrap_or_default();
                self.proposer_duties.insert(epoch, duties);
            }
            Err(e) => self.report.unchecked.push(format!(
                "epoch {epoch}: proposer duties from node {from}: {e}"
            )),
        }
    }

    /// The epoch node `n` joins at by checkpoint sync (`None` for a node from genesis).
    fn join_epoch(&self, n: usize) -> Option<u64> {
        let k = n.checked_sub(self.config.nodes)?;
        match self.config.checkpoint_joins.get(k) {
            Some(epoch) => Some(*epoch),
            // The node SIGKILLed while it syncs: judged once it had time to finish.
            None => self
                .config
                .sync_kills
                .filter(|_| k == self.config.checkpoint_joins.len())
                .map(|(epoch, _)| epoch + 1),
        }
    }

    /// The node SIGKILLed while syncing, if any.
    fn sync_kill_node(&self) -> Option<usize> {
        self.config
            .sync_kills
            .map(|_| self.config.nodes + self.config.checkpoint_joins.len())
    }

    /// Starts the sync-kill node from genesis and SIGKILLs it `kills` times while it syncs,
    /// restarting it each time; records its head before each kill and after each restart.
    fn run_sync_kills(&mut self, n: usize, kills: usize) -> Result<(), String> {
        self.start_bn(n)?;
        let mut last = 0;
        for k in 0..kills {
            self.wait_for_api(n, Duration::from_secs(60))?;
            // Mid-sync: once it has imported something since the last kill (it first finds
            // its peers and starts a batch; bounded by 30 s), then 0 to 400 ms more.
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline && self.head_of(n).map_or(0, |(slot, _)| slot) <= last {
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(Duration::from_millis((k as u64 * 173) % 400));
            let before = self.head_of(n).map_or(0, |(slot, _)| slot);
            last = before;
            let clock = (unix_now_ms().saturating_sub(self.genesis_time * 1000)) / self.slot_ms();
            if let Some(bn) = self.nodes[n].bn.take() {
                bn.kill();
            }
            self.start_bn(n)?;
            self.wait_for_api(n, Duration::from_secs(60))?;
            let after = self.head_of(n).map_or(0, |(slot, _)| slot);
            self.report.sync_kills.push((before, after, clock));
        }
        self.report.sync_kill_node_synced = Some((n, None));
        Ok(())
    }

    /// Runs the fault actions due at `slot`'s start. The SIGKILLs during sync come last: they
    /// hold the loop for minutes, and an action due at the same slot (the end of another
    /// fault) must not wait for them.
    fn apply_faults(&mut self, slot: u64) -> Result<(), String> {
        let epoch = slot / SLOTS_PER_EPOCH;
        let in_epoch = slot % SLOTS_PER_EPOCH;
        for n in self.config.nodes..self.config.nodes + self.config.checkpoint_joins.len() {
            if self.join_epoch(n) == Some(epoch) && in_epoch == 1 {
                println!("simulator: slot {slot}: node {n} joins, checkpoint-synced from node 0");
                self.start_bn(n)?;
                self.report.joins.push((n, epoch, None));
            }
        }
        for fault in self.config.faults.clone() {
            let i = fault.node;
            match fault.kind {
                FaultKind::KillAndRestart if epoch == fault.at_epoch && in_epoch == 1 => {
                    println!("simulator: slot {slot}: SIGKILL node {i}'s beacon node");
                    self.close_bn_memory(i);
                    if let Some(bn) = self.nodes[i].bn.take() {
                        bn.kill();
                    }
                }
                FaultKind::KillAndRestart if epoch == fault.at_epoch && in_epoch == 2 => {
                    println!("simulator: slot {slot}: restart node {i}'s beacon node");
                    self.start_bn(i)?;
                }
                FaultKind::Offline { epochs } if epoch == fault.at_epoch && in_epoch == 1 => {
                    println!(
                        "simulator: slot {slot}: node {i}'s beacon node goes offline for {epochs} epochs"
                    );
                    self.close_bn_memory(i);
                    if let Some(bn) = self.nodes[i].bn.take() {
                        bn.terminate(Duration::from_secs(20));
                    }
                }
                FaultKind::Offline { epochs }
                    if epoch == fault.at_epoch + epochs && in_epoch == 1 =>
                {
                    println!("simulator: slot {slot}: node {i}'s beacon node comes back");
                    self.start_bn(i)?;
                }
                FaultKind::GarbagePeer { rounds } if epoch == fault.at_epoch && in_epoch == 1 => {
                    println!("simulator: slot {slot}: a garbage peer connects to node {i}");
                    let addr: libp2p::Multiaddr =
                        format!("/ip4/127.0.0.1/tcp/{}", self.nodes[i].p2p_port)
                            .parse()
                            .map_err(|e| format!("garbage peer address: {e}"))?;
                    let handle = std::thread::spawn(move || {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .map_err(|e| e.to_string())?
                            .block_on(garbage::run(addr, rounds))
                    });
                    self.garbage_peers.push((i, handle));
                }
                FaultKind::ElSyncing { epochs } if epoch == fault.at_epoch && in_epoch == 1 => {
                    println!(
                        "simulator: slot {slot}: node {i}'s execution client answers SYNCING for {epochs} epochs"
                    );
                    self.set_el_syncing(i, true)?;
                }
                FaultKind::ElSyncing { epochs }
                    if epoch == fault.at_epoch + epochs && in_epoch == 1 =>
                {
                    println!("simulator: slot {slot}: node {i}'s execution client is synced again");
                    self.set_el_syncing(i, false)?;
                }
                _ => {}
            }
        }
        if let (Some(n), Some((at, kills))) = (self.sync_kill_node(), self.config.sync_kills)
            && epoch == at
            && in_epoch == 1
        {
            println!(
                "simulator: slot {slot}: node {n} starts from genesis and is SIGKILLed {kills} times while it syncs"
            );
            self.run_sync_kills(n, kills)?;
        }
        Ok(())
    }

    fn check_exits(&mut self) {
        for node in &mut self.nodes {
            for proc in [&mut node.el, &mut node.bn, &mut node.vc]
                .into_iter()
                .flatten()
            {
                if let Some(status) = proc.exited() {
                    let line = format!("{} ({status})", proc.name);
                    if !self.report.exits.contains(&line) {
                        self.report.exits.push(line);
                    }
                }
            }
        }
    }
}

/// Runs the simulation: starts the nodes, runs the epochs with the faults, stops everything.
pub fn run(config: &SimConfig) -> Result<Report, String> {
    if config.nodes < 2 || config.validators < config.nodes {
        return Err("the simulator needs two nodes or more, each with a validator".into());
    }
    if config
        .faults
        .iter()
        .any(|f| f.node == 0 || f.node >= config.nodes)
    {
        return Err("faults are for nodes 1.. (node 0 is the boot node)".into());
    }
    let _ = std::fs::remove_dir_all(&config.dir);
    std::fs::create_dir_all(&config.dir).map_err(|e| format!("{}: {e}", config.dir.display()))?;
    let net = config.dir.join("testnet");
    let jwt = config.dir.join("jwt.hex");
    std::fs::write(&jwt, jwt_hex()).map_err(|e| e.to_string())?;
    let genesis_time = unix_now_ms() / 1000 + config.genesis_delay;
    let status = std::process::Command::new(&config.arbor)
        .args([
            "new-testnet",
            "--output",
            &net.display().to_string(),
            "--validators",
            &config.validators.to_string(),
            "--seconds-per-slot",
            &config.seconds_per_slot.to_string(),
            "--genesis-time",
            &genesis_time.to_string(),
        ])
        .status()
        .map_err(|e| format!("arbor new-testnet: {e}"))?;
    if !status.success() {
        return Err(format!("arbor new-testnet: {status}"));
    }
    let total =
        config.nodes + config.checkpoint_joins.len() + usize::from(config.sync_kills.is_some());
    let mut nodes = Vec::with_capacity(total);
    for index in 0..total {
        nodes.push(Node {
            index,
            dirs: NodeDirs {
                root: config.dir.join(format!("node-{index}")),
            },
            el_port: free_port()?,
            http_port: free_port()?,
            metrics_port: free_port()?,
            p2p_port: free_port()?,
            el: None,
            bn: None,
            vc: None,
            rss: Vec::new(),
            starts: 0,
        });
    }
    let mut sim = Sim {
        config,
        net: net.clone(),
        jwt: jwt.clone(),
        genesis_time,
        boot_enr: String::new(),
        nodes,
        report: Report::default(),
        proposer_duties: std::collections::HashMap::new(),
        garbage_peers: Vec::new(),
    };
    // Execution clients first (their blobs take a moment), then node 0 (the boot node), then
    // the others with its ENR, then the validator clients.
    for i in 0..total {
        let args: Vec<String> = [
            "mock-el",
            "--config-file",
            &net.join("config.yaml").display().to_string(),
            "--genesis-time",
            &genesis_time.to_string(),
            "--blobs-per-block",
            &config.blobs.to_string(),
            "--blob-variety",
            "2",
            "--listen-address",
            &format!("127.0.0.1:{}", sim.nodes[i].el_port),
            "--jwt-secret",
            &jwt.display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let log = sim.nodes[i].dirs.log("el");
        sim.nodes[i].el = Some(Proc::spawn(
            &config.arbor,
            &args,
            &log,
            format!("node-{i} el"),
        )?);
    }
    // A beacon node that starts before its execution client listens logs errors until it
    // does; the mocks compute their blobs first.
    for i in 0..total {
        sim.wait_for_el(i, Duration::from_secs(120))?;
    }
    sim.start_bn(0)?;
    sim.wait_for_api(0, Duration::from_secs(60))?;
    let identity = http::get(sim.nodes[0].http_port, "/eth/v1/node/identity")
        .map_err(|e| format!("node 0 identity: {e}"))?;
    sim.boot_enr = identity
        .pointer("/data/enr")
        .and_then(|e| e.as_str())
        .ok_or("node 0 identity: no ENR")?
        .to_string();
    for i in 1..config.nodes {
        sim.start_bn(i)?;
    }
    for i in 1..config.nodes {
        sim.wait_for_api(i, Duration::from_secs(60))?;
    }
    for i in 0..config.nodes {
        let (a, b) = config.share(i);
        let args: Vec<String> = [
            "vc",
            "--preset",
            "minimal",
            "--beacon-nodes",
            &format!("http://127.0.0.1:{}", sim.nodes[i].http_port),
            "--datadir",
            &sim.nodes[i].dirs.root.join("vc").display().to_string(),
            "--interop-indices",
            &format!("{a}..{b}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let log = sim.nodes[i].dirs.log("vc");
        sim.nodes[i].vc = Some(Proc::spawn(
            &config.arbor,
            &args,
            &log,
            format!("node-{i} vc"),
        )?);
    }
    if unix_now_ms() > genesis_time * 1000 {
        println!(
            "simulator: the nodes came up {} s after genesis; raise genesis_delay",
            (unix_now_ms() - genesis_time * 1000) / 1000
        );
    }
    println!(
        "simulator: {} nodes, {} validators, {} blobs, {} s slots, {} epochs; genesis at {genesis_time}; files under {}",
        config.nodes,
        config.validators,
        config.blobs,
        config.seconds_per_slot,
        config.epochs,
        config.dir.display()
    );

    let last_slot = config.epochs * SLOTS_PER_EPOCH;
    let mut pending_disagreement: Option<u64> = None;
    for slot in 1..=last_slot {
        sim.wait_until(slot, 0.0);
        sim.apply_faults(slot)?;
        let epoch = slot / SLOTS_PER_EPOCH;
        // A fault action that took longer than the slot: no head check for slots gone by.
        let late = unix_now_ms() > sim.time_of_slot_ms(slot + 1);
        if late {
            pending_disagreement = None;
        } else {
            sim.wait_until(slot, 0.75);
            // Heads: the healthy, running nodes agree, or do a slot later.
            let healthy: Vec<usize> = sim
                .healthy(epoch)
                .into_iter()
                .filter(|&n| sim.nodes[n].bn.is_some())
                .collect();
            let heads = sim.heads(&healthy);
            // A checkpoint-synced node has caught up when its head is node 0's.
            let reference = sim.head_of(0);
            for k in 0..sim.report.joins.len() {
                let (n, _, agreed) = sim.report.joins[k];
                if agreed.is_none() && reference.is_some() && sim.head_of(n) == reference {
                    println!("simulator: slot {slot}: node {n} (checkpoint-synced) is at the head");
                    sim.report.joins[k].2 = Some(slot);
                }
            }
            if let Some((n, None)) = sim.report.sync_kill_node_synced
                && reference.is_some()
                && sim.head_of(n) == reference
            {
                println!(
                    "simulator: slot {slot}: node {n} (SIGKILLed while syncing) is at the head"
                );
                sim.report.sync_kill_node_synced = Some((n, Some(slot)));
            }
            let distinct: std::collections::BTreeSet<_> =
                heads.iter().filter_map(|(_, h)| h.clone()).collect();
            // Epoch 0 is start-up: the nodes find each other.
            if distinct.len() > 1 && epoch > 0 {
                match pending_disagreement {
                    Some(first) if first + 1 == slot => {
                        let listed: Vec<String> = heads
                            .iter()
                            .map(|(n, h)| match h {
                                Some((s, r)) => format!("node {n} {s} {}", &r[..r.len().min(12)]),
                                None => format!("node {n} -"),
                            })
                            .collect();
                        sim.report
                            .head_disagreements
                            .push((slot, listed.join(", ")));
                        pending_disagreement = None;
                    }
                    _ => pending_disagreement = Some(slot),
                }
            } else {
                pending_disagreement = None;
            }
            let summary: Vec<String> = heads
                .iter()
                .map(|(n, h)| match h {
                    Some((s, _)) => format!("{n}:{s}"),
                    None => format!("{n}:-"),
                })
                .collect();
            println!("simulator: slot {slot} heads {}", summary.join(" "));
        }
        // The epoch's checks read "now" (finality, liveness of the previous epoch): a slot
        // gone by while a fault action blocked the loop would record them under the wrong
        // epoch, so they are left out (and reported as unchecked).
        if late && slot % SLOTS_PER_EPOCH == 6 {
            sim.report.unchecked.push(format!(
                "epoch {epoch}: a fault action blocked the loop past slot {slot}"
            ));
        }
        if !late && slot % SLOTS_PER_EPOCH == 6 {
            // Memory, finality, and the previous epoch's duties.
            for node in &mut sim.nodes {
                if let Some(rss) = node.bn.as_ref().and_then(Proc::rss_bytes) {
                    node.rss.push(rss);
                }
            }
            let finalized = sim
                .healthy(epoch)
                .into_iter()
                .filter(|&n| sim.nodes[n].bn.is_some())
                .filter_map(|n| sim.finalized_of(n))
                .min()
                .unwrap_or(0);
            sim.report.finality.push((epoch, finalized));
            println!("simulator: epoch {epoch}: finalized epoch {finalized}");
            sim.fetch_proposer_duties(epoch);
            if epoch >= 2 {
                sim.check_duties(epoch - 1);
            }
            sim.check_exits();
        }
    }
    sim.report.epochs_run = config.epochs;
    sim.report.finalized_epoch = (0..total)
        .filter(|&n| sim.nodes[n].bn.is_some())
        .filter_map(|n| sim.finalized_of(n))
        .min()
        .unwrap_or(0);
    for fault in &config.faults {
        let (start, end) = fault.window();
        let end = end + FINALITY_PIPELINE_EPOCHS;
        let lag = sim
            .report
            .finality
            .iter()
            .filter(|(e, _)| (start..end).contains(e))
            .map(|(e, f)| e.saturating_sub(*f))
            .max()
            .unwrap_or(0);
        sim.report.fault_lags.push((
            format!(
                "{:?} of node {} at epoch {}",
                fault.kind, fault.node, fault.at_epoch
            ),
            lag,
        ));
    }
    sim.check_exits();
    for (node, handle) in std::mem::take(&mut sim.garbage_peers) {
        let outcome = handle
            .join()
            .unwrap_or_else(|_| Err("the garbage peer's thread panicked".into()));
        sim.report.garbage.push((node, outcome));
    }
    for i in 0..total {
        sim.close_bn_memory(i);
    }
    // Stop everything by PID: validator clients, beacon nodes (gracefully), execution clients.
    for node in &mut sim.nodes {
        if let Some(vc) = node.vc.take() {
            vc.terminate(Duration::from_secs(10));
        }
    }
    for node in &mut sim.nodes {
        if let Some(bn) = node.bn.take() {
            bn.terminate(Duration::from_secs(20));
        }
        if let Some(el) = node.el.take() {
            el.kill();
        }
    }
    for (i, node) in sim.nodes.iter().enumerate() {
        let log = std::fs::read_to_string(node.dirs.log("bn")).unwrap_or_default();
        let stalls = log
            .lines()
            .filter(|l| l.contains("lock held too long"))
            .map(|l| format!("node {i}: {}", strip_ansi(l)))
            .take(2);
        sim.report.lock_stalls.extend(stalls);
    }
    Ok(sim.report)
}

/// `line` without its terminal colour codes (`ESC [ … m`).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A fresh JWT secret, hex.
fn jwt_hex() -> String {
    execution_layer::JwtSecret::random().to_hex()
}

#[cfg(test)]
mod tests {
    use super::strip_ansi;

    #[test]
    fn colour_codes_are_stripped_from_log_lines() {
        let line =
            "\u{1b}[2m2026-12-02T04:14:21Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m lock held too long";
        assert_eq!(
            strip_ansi(line),
            "2026-12-02T04:14:21Z ERROR lock held too long"
        );
    }
}
