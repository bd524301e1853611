//! Test nodes: `beacon_chain`'s harness (a chain from an interop genesis anchored at a block of
//! slot 16, the mock execution client), real networking on loopback and the router; and a bare
//! networking client for checking what a node serves.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "test helpers: each test uses some; a failed setup is a failed test"
)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use beacon_chain::events::ChainEvent;
use beacon_chain::harness::{ChainHarness, ChainStart, HarnessConfig, interop_genesis};
use beacon_chain::{BeaconChain, ChainConfig, ManualSlotClock};
use execution_layer::Timeouts;
use networking::rate_limiter::Quota;
use networking::rpc::{Protocol, Request, Response};
use networking::{GossipKind, NetworkConfig, NetworkEvent, NetworkHandle, PeerId};
use operation_pool::OperationPool;
use router::{RouterConfig, RouterHandle, SyncState};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use store::{Store, StoreConfig};
use tokio::sync::{mpsc, watch};
use types::{
    ChainSpec, DataColumnSidecar, EthSpec, ForkName, KZGCommitment, MinimalEthSpec, Root, Slot,
};

pub(crate) type E = MinimalEthSpec;

/// The bound on every wait in these tests.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) const GENESIS_TIME: u64 = 1_600_000_000;
/// The anchor: a block at the first slot of epoch 2 on the interop genesis.
pub(crate) const ANCHOR_SLOT: Slot = 16;

pub(crate) fn spec() -> Arc<ChainSpec> {
    Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu))
}

/// The shared start of every node's chain.
pub(crate) fn anchor(spec: &ChainSpec) -> BuiltBlock<E> {
    let (genesis, _) =
        interop_genesis::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), spec).unwrap();
    build_block(&genesis, ANCHOR_SLOT, &BlockContents::default(), spec).unwrap()
}

/// Half a second into `slot`, in milliseconds since the UNIX epoch.
pub(crate) fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 500
}

pub(crate) fn blob(seed: u8) -> kzg::Blob {
    let mut bytes = vec![0u8; kzg::BYTES_PER_BLOB];
    for (i, fe) in bytes
        .chunks_exact_mut(kzg::BYTES_PER_FIELD_ELEMENT)
        .enumerate()
    {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(7) ^ (j as u8) ^ seed;
        }
    }
    *kzg::blob_from_bytes(&bytes).unwrap()
}

/// A block at `slot` on `parent` attesting to the slot before (every committee), with `blobs`
/// blobs, and its 128 column sidecars.
pub(crate) fn next_block(
    spec: &ChainSpec,
    parent: &BuiltBlock<E>,
    slot: Slot,
    blobs: u8,
) -> (BuiltBlock<E>, Vec<Arc<DataColumnSidecar<E>>>) {
    let blobs: Vec<kzg::Blob> = (0..blobs).map(|i| blob(i ^ slot as u8)).collect();
    let commitments = blobs
        .iter()
        .map(|b| KZGCommitment::from(kzg::blob_to_kzg_commitment(b).unwrap().0))
        .collect();
    let attestations = if slot > ANCHOR_SLOT + 1 {
        vec![AttestationSpec::whole_slot(slot - 1)]
    } else {
        Vec::new()
    };
    let contents = BlockContents {
        attestations,
        blob_kzg_commitments: commitments,
        ..BlockContents::default()
    };
    let built = build_block(&parent.post, slot, &contents, spec).unwrap();
    let sidecars = if blobs.is_empty() {
        Vec::new()
    } else {
        let cells: Vec<kzg::CellsAndProofs> = blobs
            .iter()
            .map(|b| kzg::compute_cells_and_kzg_proofs(b).unwrap())
            .collect();
        beacon_chain::data_column_sidecars::get_data_column_sidecars_from_block(
            &built.block,
            &cells,
        )
        .unwrap()
        .into_iter()
        .map(Arc::new)
        .collect()
    };
    (built, sidecars)
}

/// The commitments of `blobs` blobs (seeded by `seed`) and a function making their Gloas
/// column sidecars for the block whose bid carries the commitments (its root and slot).
pub(crate) fn gloas_blobs(
    blobs: u8,
    seed: u8,
) -> (
    Vec<KZGCommitment>,
    impl Fn(Root, Slot) -> Vec<DataColumnSidecar<E>>,
) {
    let blobs: Vec<kzg::Blob> = (0..blobs).map(|i| blob(i ^ seed)).collect();
    let commitments = blobs
        .iter()
        .map(|b| KZGCommitment::from(kzg::blob_to_kzg_commitment(b).unwrap().0))
        .collect();
    let cells: Vec<kzg::CellsAndProofs> = blobs
        .iter()
        .map(|b| kzg::compute_cells_and_kzg_proofs(b).unwrap())
        .collect();
    let columns = move |root: Root, slot: Slot| {
        beacon_chain::data_column_sidecars::get_gloas_data_column_sidecars::<E>(root, slot, &cells)
            .unwrap()
    };
    (commitments, columns)
}

/// A block with its column sidecars (none without blobs).
pub(crate) type BlockAndColumns = (BuiltBlock<E>, Vec<Arc<DataColumnSidecar<E>>>);

/// `count` blocks on the anchor, one per slot; the block at `blob_slot` (if any) has one blob.
pub(crate) fn build_chain(
    spec: &ChainSpec,
    anchor: &BuiltBlock<E>,
    count: u64,
    blob_slot: Option<Slot>,
) -> Vec<BlockAndColumns> {
    let mut out: Vec<BlockAndColumns> = Vec::new();
    for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + count {
        let parent = out.last().map_or(anchor, |(b, _)| b);
        let blobs = u8::from(blob_slot == Some(slot));
        out.push(next_block(spec, parent, slot, blobs));
    }
    out
}

fn local_network_config(spec: &ChainSpec, current_slot: Slot) -> NetworkConfig {
    let mut config = NetworkConfig::local(Root::repeat_byte(0x42));
    // The interop genesis's validators root is what the digests use.
    config.genesis_validators_root = anchor_validators_root(spec);
    config.current_epoch = current_slot / E::slots_per_epoch();
    config.quic_port = None;
    config.discovery_port = None;
    config.gossip_kinds = vec![GossipKind::BeaconBlock, GossipKind::BeaconAggregateAndProof];
    config.rate_limits = config
        .rate_limits
        .with_quota(Protocol::MetaDataV3, Quota::n_every(16, 5))
        .with_quota(Protocol::StatusV2, Quota::n_every(64, 5));
    config
}

fn anchor_validators_root(spec: &ChainSpec) -> Root {
    let (genesis, _) =
        interop_genesis::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), spec).unwrap();
    *genesis.state.genesis_validators_root()
}

/// A node: the chain harness (chain, mock execution client), networking, router.
pub(crate) struct Node {
    pub(crate) spec: Arc<ChainSpec>,
    pub(crate) clock: Arc<ManualSlotClock>,
    pub(crate) chain: Arc<BeaconChain<E>>,
    pub(crate) pool: Arc<OperationPool<E>>,
    pub(crate) network: NetworkHandle<E>,
    pub(crate) router: Option<RouterHandle<E>>,
    pub(crate) registry: prometheus::Registry,
    /// The chain, its mock execution client (`harness.mock`) and the producer's pool.
    pub(crate) harness: ChainHarness<E>,
    stop: watch::Sender<bool>,
    /// The directory of the harness's store (kept by the node, so that a stopped node's store
    /// can be reopened).
    _dir: tempfile::TempDir,
}

/// How to start a node.
pub(crate) struct NodeSpec<'a> {
    pub(crate) anchor: &'a BuiltBlock<E>,
    /// Blocks (with their columns) imported before the node starts.
    pub(crate) blocks: &'a [BlockAndColumns],
    /// The wall-clock slot.
    pub(crate) current_slot: Slot,
    /// The columns the node custodies (`None`: all).
    pub(crate) custody: Option<BTreeSet<u64>>,
    /// Addresses to dial at start.
    pub(crate) static_peers: Vec<networking::Multiaddr>,
}

/// What a node starts from beyond [`NodeSpec`], and router options the tests vary.
#[derive(Default)]
pub(crate) struct Launch {
    /// The data directory of a stopped node: its store is reopened (`ChainStart::Stored`) and
    /// `NodeSpec::anchor` is not used.
    pub(crate) reopen: Option<tempfile::TempDir>,
    /// `RouterConfig::genesis_backfill`.
    pub(crate) genesis_backfill: bool,
    /// `ChainConfig::disable_light_client_server` (and the network offers no light-client
    /// protocols).
    pub(crate) disable_light_client_server: bool,
}

/// The genesis of the interop chain as an anchor: the genesis state and block.
pub(crate) fn genesis_anchor(spec: &ChainSpec) -> BuiltBlock<E> {
    let (post, block) =
        interop_genesis::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), spec).unwrap();
    BuiltBlock {
        state_root: block.state_root(),
        block,
        post,
    }
}

/// Sends the tracing events of this test binary's nodes (router and sync at debug, networking at
/// debug, the rest at info) to `target/test-logs/router-tests/<binary>.log`, so that a failing
/// test leaves its nodes' account behind. Tests of one binary run in parallel and share the file:
/// lines name their peers and block roots.
pub(crate) fn init_logs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use tracing::Level;
        use tracing_subscriber::filter::Targets;
        use tracing_subscriber::layer::SubscriberExt;

        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/test-logs/router-tests");
        let binary = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .map(|stem| stem.split('-').next().unwrap_or("router").to_owned())
            .unwrap_or_else(|| "router".to_owned());
        let file = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::File::create(dir.join(format!("{binary}.log"))));
        let Ok(file) = file else {
            return;
        };
        let targets = Targets::new()
            .with_target("router", Level::DEBUG)
            .with_target("networking", Level::DEBUG)
            .with_default(Level::INFO);
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_max_level(Level::DEBUG)
            .finish()
            .with(targets);
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

impl Node {
    pub(crate) async fn start(spec: Arc<ChainSpec>, how: NodeSpec<'_>) -> Node {
        Self::launch(spec, how, Launch::default()).await
    }

    pub(crate) async fn launch(spec: Arc<ChainSpec>, how: NodeSpec<'_>, launch: Launch) -> Node {
        init_logs();
        let reopen = launch.reopen.is_some();
        let dir = launch
            .reopen
            .unwrap_or_else(|| tempfile::tempdir().unwrap());
        let start = if reopen {
            ChainStart::Stored
        } else {
            ChainStart::Anchor {
                state: how.anchor.post.clone(),
                block: how.anchor.block.clone(),
            }
        };
        let harness = HarnessConfig {
            spec: (*spec).clone(),
            genesis_time: GENESIS_TIME,
            seed: 1,
            chain: ChainConfig {
                custody_columns: how.custody.clone(),
                disable_light_client_server: launch.disable_light_client_server,
                ..ChainConfig::default()
            },
            pool_threads: 2,
            store_path: Some(dir.path().join("db")),
            clock_slot: Some(how.current_slot),
            // Half a second into the slot (`time_ms`).
            ms_into_slot: 500,
            engine_timeouts: Timeouts::default(),
            ..HarnessConfig::default()
        }
        .build_from::<E>(start)
        .await
        .unwrap();
        // The harness's payloads are not an execution chain the mock knows: it answers SYNCING
        // and blocks are imported optimistically, as behind a syncing execution client.
        harness.mock.set_syncing(true);
        for (built, columns) in how.blocks {
            let columns: Vec<DataColumnSidecar<E>> =
                columns.iter().map(|c| (**c).clone()).collect();
            harness
                .import_valid(Arc::new(built.block.clone()), &columns)
                .unwrap();
        }
        let (clock, chain) = (harness.clock.clone(), harness.chain.clone());

        let mut config = local_network_config(&spec, how.current_slot);
        config.static_peers = how.static_peers;
        config.light_client_server = !launch.disable_light_client_server;
        // Advertised custody: every group for a supernode (minimal: one column per group).
        config.custody_group_count = how
            .custody
            .as_ref()
            .map_or(spec.number_of_custody_groups, |c| c.len() as u64);
        let (network, events) = networking::start::<E>(config, (*spec).clone())
            .await
            .unwrap();
        let registry = prometheus::Registry::new();
        let (stop, shutdown) = watch::channel(false);
        let pool = harness.op_pool.clone();
        let router = router::spawn_router(
            chain.clone(),
            pool.clone(),
            network.clone(),
            events,
            RouterConfig {
                custody_columns: how.custody,
                tick_interval: Duration::from_millis(100),
                // Several batches for the few epochs of a test chain.
                sync_batch_slots: 8,
                // Range sync for any gap, however small (the tests' chains are short).
                sync_tolerance_slots: 0,
                genesis_backfill: launch.genesis_backfill,
                ..RouterConfig::default()
            },
            beacon_processor::BeaconProcessorConfig {
                main_threads: 2,
                ..beacon_processor::BeaconProcessorConfig::default()
            },
            &registry,
            shutdown,
        )
        .unwrap();
        Node {
            spec,
            clock,
            chain,
            pool,
            network,
            router: Some(router),
            registry,
            harness,
            stop,
            _dir: dir,
        }
    }

    pub(crate) fn tcp_addr(&self) -> networking::Multiaddr {
        self.network.tcp_addr().unwrap()
    }

    /// Waits until the chain's head is `root` (already, or by a head event).
    pub(crate) async fn wait_for_head(&self, root: Root) {
        let mut events = self.chain.events().subscribe();
        if self.chain.head().block_root == root {
            return;
        }
        let wait = async {
            loop {
                match events.recv().await {
                    Ok(ChainEvent::Head { block, .. }) if block == root => return,
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if self.chain.head().block_root == root {
                            return;
                        }
                    }
                    Err(e) => panic!("chain events ended: {e}"),
                }
            }
        };
        tokio::time::timeout(TIMEOUT, wait)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "timed out waiting for head {root}; head is {} at slot {}",
                    self.chain.head().block_root,
                    self.chain.head().slot
                )
            });
    }

    /// Waits until the sync state satisfies `pick`.
    pub(crate) async fn wait_for_sync_state(&self, what: &str, pick: impl Fn(&SyncState) -> bool) {
        let mut rx = self.router.as_ref().unwrap().sync_state();
        tokio::time::timeout(TIMEOUT, rx.wait_for(|s| pick(s)))
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for sync state {what}"))
            .unwrap();
    }

    /// The value of counter `name` with `labels`, 0 when absent.
    pub(crate) fn counter(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.registry
            .gather()
            .iter()
            .filter(|family| family.name() == name)
            .flat_map(|family| family.get_metric().to_vec())
            .filter(|metric| {
                labels.iter().all(|(k, v)| {
                    metric
                        .get_label()
                        .iter()
                        .any(|l| l.name() == *k && l.value() == *v)
                })
            })
            .map(|metric| metric.get_counter().get_value())
            .sum()
    }

    /// Waits until `probe` holds, re-checking every 20 ms (for state with no event to wait on,
    /// such as peer scores and gossip meshes), failing after [`TIMEOUT`].
    pub(crate) async fn wait_until<F: std::future::Future<Output = bool>>(
        &self,
        what: &str,
        mut probe: impl FnMut() -> F,
    ) {
        let wait = async {
            while !probe().await {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(TIMEOUT, wait)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
    }

    /// Stops the router and the network.
    pub(crate) async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(router) = self.router.take() {
            tokio::time::timeout(TIMEOUT, router.join()).await.unwrap();
        }
        self.network.shutdown();
    }

    /// Stops the node and hands back its data directory once every handle on its store is
    /// gone (the database closed), for [`Launch::reopen`].
    pub(crate) async fn stop_keeping_store(mut self) -> tempfile::TempDir {
        let _ = self.stop.send(true);
        if let Some(router) = self.router.take() {
            tokio::time::timeout(TIMEOUT, router.join()).await.unwrap();
        }
        self.network.shutdown();
        let store = Arc::downgrade(self.chain.store());
        let spec = self.spec.clone();
        let dir = std::mem::replace(&mut self._dir, tempfile::tempdir().unwrap());
        drop(self);
        // The count falls to zero before the last handle's destructor has closed the database
        // (on whichever thread dropped it last): wait until the database opens again.
        let path = dir.path().join("db");
        let closed = async {
            while store.strong_count() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            loop {
                match Store::<E>::open(&path, (*spec).clone(), StoreConfig::default()) {
                    Ok(reopened) => break drop(reopened),
                    Err(e) => {
                        tracing::debug!(error = %e, "the stopped node's database is still closing");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        };
        tokio::time::timeout(TIMEOUT, closed)
            .await
            .unwrap_or_else(|_| panic!("the store of the stopped node is still open"));
        dir
    }
}

/// What a [`Client`] answers to a request other than Status (`None`: not answered).
pub(crate) type Server = Box<dyn Fn(&Request<E>) -> Option<Response<E>> + Send + Sync>;

/// A bare networking instance driven by the test: it answers Status with `status` and records
/// every other event.
pub(crate) struct Client {
    pub(crate) network: NetworkHandle<E>,
    events: mpsc::UnboundedReceiver<NetworkEvent<E>>,
    backlog: Vec<NetworkEvent<E>>,
}

impl Client {
    pub(crate) async fn start(
        spec: &ChainSpec,
        current_slot: Slot,
        status: networking::rpc::StatusMessage,
        static_peers: Vec<networking::Multiaddr>,
    ) -> Client {
        Self::serving(spec, current_slot, status, static_peers, Box::new(|_| None)).await
    }

    /// A client that also answers the requests `serve` has an answer for (a peer serving
    /// data, honestly or not).
    pub(crate) async fn serving(
        spec: &ChainSpec,
        current_slot: Slot,
        status: networking::rpc::StatusMessage,
        static_peers: Vec<networking::Multiaddr>,
        serve: Server,
    ) -> Client {
        init_logs();
        let mut config = local_network_config(spec, current_slot);
        config.static_peers = static_peers;
        let (network, mut raw) = networking::start::<E>(config, spec.clone()).await.unwrap();
        let (tx, events) = mpsc::unbounded_channel();
        let handle = network.clone();
        tokio::spawn(async move {
            while let Some(event) = raw.recv().await {
                if let NetworkEvent::RequestReceived {
                    request_id,
                    request,
                    ..
                } = &event
                {
                    let response = match request {
                        Request::Status(_) => Some(Response::success(vec![
                            networking::rpc::ResponseItem::Status(status),
                        ])),
                        other => serve(other),
                    };
                    if let Some(response) = response {
                        handle.send_response(*request_id, response);
                    }
                }
                if tx.send(event).is_err() {
                    break;
                }
            }
        });
        Client {
            network,
            events,
            backlog: Vec::new(),
        }
    }

    /// The first event `pick` accepts (earlier ones kept for later waits).
    pub(crate) async fn wait_for<T>(
        &mut self,
        what: &str,
        mut pick: impl FnMut(&NetworkEvent<E>) -> Option<T>,
    ) -> T {
        if let Some(i) = self.backlog.iter().position(|e| pick(e).is_some()) {
            let event = self.backlog.remove(i);
            return pick(&event).unwrap();
        }
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(event)) => {
                    if let Some(found) = pick(&event) {
                        return found;
                    }
                    self.backlog.push(event);
                }
                Ok(None) => panic!("event stream ended while waiting for {what}"),
                Err(_) => panic!("timed out waiting for {what}"),
            }
        }
    }

    pub(crate) async fn connected(&mut self) -> PeerId {
        self.wait_for("a connection", |e| match e {
            NetworkEvent::PeerConnected { peer_id, .. } => Some(*peer_id),
            _ => None,
        })
        .await
    }

    /// Sends `request` and waits for its response.
    pub(crate) async fn request(&mut self, peer: PeerId, request: Request<E>) -> Response<E> {
        self.try_request(peer, request)
            .await
            .unwrap_or_else(|e| panic!("request failed: {e}"))
    }

    /// Sends `request` and waits for its response, or for the reason it failed.
    pub(crate) async fn try_request(
        &mut self,
        peer: PeerId,
        request: Request<E>,
    ) -> Result<Response<E>, String> {
        let id = self.network.send_request(peer, request);
        self.wait_for("a response", |event| match event {
            NetworkEvent::ResponseReceived {
                request_id,
                response,
                ..
            } if *request_id == id => Some(Ok(response.clone())),
            NetworkEvent::RequestFailed {
                request_id, error, ..
            } if *request_id == id => Some(Err(error.to_string())),
            _ => None,
        })
        .await
    }
}
