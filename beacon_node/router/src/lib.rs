//! The router: the beacon node's network events turned into beacon processor work, and the
//! outcome of that work turned back into network commands.
//!
//! - **Gossip** ([`gossip`]): every topic's message goes to the chain's gossip validation on the
//!   processor (attestations, aggregates and data columns in batches through
//!   [`ChainHandlers`]); the ACCEPT / IGNORE / REJECT verdict goes back to gossipsub (networking
//!   penalises the forwarder of a REJECTed message). Accepted votes go to fork choice, accepted
//!   operations to the operation pool; a block gets `engine_newPayload` before its import;
//!   columns that complete half a block on a supernode schedule their reconstruction, whose
//!   columns are published. Work the processor drops is given IGNORE and counted.
//! - **Req/resp** ([`rpc`]): Status, BeaconBlocksByRange / ByRoot and DataColumnSidecarsByRange /
//!   ByRoot answered from the store on the processor's `rpc_*` kinds, within the spec's limits,
//!   and the light-client server's bootstraps and updates; every new peer is sent our Status,
//!   and a peer on another network (fork digest or a conflicting finalized checkpoint) is sent
//!   Goodbye(irrelevant network) and disconnected.
//! - **Sync** (the `sync` crate's [`sync::SyncManager`], owned by the event loop): the
//!   relevant peers' Status and metadata, the responses to sync's requests (range sync,
//!   backfill, lookups), the unknown parents and blocks gossip and attestations name, the
//!   gossip blocks whose parent's payload is missing (held while its envelope is looked up),
//!   and the outcomes of sync's imports are handed to it; it submits its imports to the router's
//!   processor.
//!
//! ```no_run
//! # async fn run<E: types::EthSpec>(
//! #     chain: std::sync::Arc<beacon_chain::BeaconChain<E>>,
//! #     pool: std::sync::Arc<operation_pool::OperationPool<E>>,
//! #     network: networking::NetworkHandle<E>,
//! #     events: networking::NetworkEvents<E>,
//! # ) -> Result<(), router::RouterError> {
//! let registry = prometheus::Registry::new();
//! let (stop, shutdown) = tokio::sync::watch::channel(false);
//! let router = router::spawn_router(
//!     chain, pool, network, events,
//!     router::RouterConfig::default(),
//!     beacon_processor::BeaconProcessorConfig::default(),
//!     &registry,
//!     shutdown,
//! )?;
//! // … later:
//! let _ = stop.send(true);
//! router.join().await;
//! # Ok(()) }
//! ```

pub mod gossip;
pub mod handlers;
mod metrics;
pub mod rpc;
pub mod status;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use beacon_chain::BeaconChain;
use beacon_processor::{BeaconProcessor, BeaconProcessorConfig, ShutdownMode};
use networking::rpc::{Request, Response, ResponseItem, StatusMessage};
use networking::{NetworkEvent, NetworkEvents, NetworkHandle, OutboundRequestId, PeerId};
use operation_pool::OperationPool;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use types::{EthSpec, Root, SignedBeaconBlock, Slot, typenum::Unsigned};

pub use handlers::{ChainHandlers, GossipAggregateMessage, GossipItem};
pub use status::{IrrelevantPeer, check_peer_status};
pub use sync::{SyncError, SyncState};

use crate::metrics::Metrics;

/// The processor the router submits to: its batch handlers are the chain's.
pub type Processor<E> = BeaconProcessor<ChainHandlers<E>>;

/// The Goodbye reason for a peer on another network or chain.
///
/// [spec]: phase0/p2p-interface.md#goodbye
pub const GOODBYE_IRRELEVANT_NETWORK: u64 = 2;

/// How the router runs.
#[derive(Debug, Clone)]
pub struct RouterConfig {
    /// The columns the node custodies (the chain's `ChainConfig::custody_columns`); `None`:
    /// every column (a supernode). Served by root and by range, and asked for in range sync.
    pub custody_columns: Option<BTreeSet<u64>>,
    /// The slot of the earliest block the node serves (`earliest_available_slot` of Status)
    /// at start; `None`: the store's oldest block (genesis, the checkpoint anchor, or as far as
    /// backfill got). Backfill moves it back as it stores older blocks.
    pub earliest_available_slot: Option<Slot>,
    /// Backfill to genesis (`--genesis-backfill`) instead of the spec's block-request horizon
    /// (`MIN_EPOCHS_FOR_BLOCK_REQUESTS`).
    pub genesis_backfill: bool,
    /// Slots per range-sync batch.
    pub sync_batch_slots: u64,
    /// A peer whose head is at most this many slots ahead of ours (and whose finalized
    /// checkpoint is not) is followed by gossip and lookups, not range sync.
    pub sync_tolerance_slots: u64,
    /// Batches downloaded ahead of the one being imported.
    pub sync_batches_ahead: usize,
    /// Downloads of one batch before range sync gives the batch up and starts again from the
    /// head.
    pub sync_max_batch_attempts: u32,
    /// How often range sync checks its requests and peers, and every peer is re-sent Status
    /// once `status_interval` has passed.
    pub tick_interval: Duration,
    /// How often each peer is sent our Status again (its head moves).
    pub status_interval: Duration,
}

impl RouterConfig {
    /// Sync's share of the configuration.
    fn sync_config(&self) -> sync::SyncConfig {
        sync::SyncConfig {
            batch_slots: self.sync_batch_slots,
            tolerance_slots: self.sync_tolerance_slots,
            batches_ahead: self.sync_batches_ahead,
            max_batch_attempts: self.sync_max_batch_attempts,
            genesis_backfill: self.genesis_backfill,
        }
    }
}

impl Default for RouterConfig {
    fn default() -> Self {
        Self {
            custody_columns: None,
            earliest_available_slot: None,
            genesis_backfill: false,
            sync_batch_slots: 32,
            sync_tolerance_slots: 32,
            sync_batches_ahead: 4,
            sync_max_batch_attempts: 5,
            tick_interval: Duration::from_millis(500),
            status_interval: Duration::from_secs(300),
        }
    }
}

/// Why the router could not start.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    /// The beacon processor could not be built.
    #[error("beacon processor: {0}")]
    Processor(#[from] beacon_processor::BuildError),
    /// A metric could not be created or registered.
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    /// The store could not be read at start.
    #[error("store: {0}")]
    Store(#[from] store::StoreError),
    /// `spawn_router` was called outside a tokio runtime.
    #[error("the router needs a tokio runtime")]
    NoRuntime,
}

/// What the processor's work and the spawned tasks tell the router's event loop.
pub(crate) enum Internal<E: EthSpec> {
    /// A peer's Status, received as a request.
    PeerStatus {
        /// The peer.
        peer_id: PeerId,
        /// Its Status.
        status: StatusMessage,
    },
    /// A gossip block's parent is unknown: its ancestry is looked up from the peer that sent
    /// it.
    UnknownParent {
        /// The peer.
        peer_id: PeerId,
        /// The block.
        block: Arc<SignedBeaconBlock<E>>,
    },
    /// A gossip block (IGNOREd) builds on its parent's payload, which the chain has not
    /// verified: sync holds it and looks the parent's envelope up from the peer that sent it.
    ///
    /// [spec]: gloas/p2p-interface.md#beacon_block
    ParentPayloadUnknown {
        /// The peer.
        peer_id: PeerId,
        /// The block.
        block: Arc<SignedBeaconBlock<E>>,
    },
    /// An attestation voted for a block the chain has not imported: it is looked up from the
    /// peer that sent the attestation.
    UnknownBlock {
        /// The peer.
        peer_id: PeerId,
        /// The block root.
        root: Root,
    },
    /// A supernode holds half of a block's columns: reconstruct the rest.
    Reconstruct(Root),
}

/// An accepted gossip message, for what the node does with it beyond the chain and the pool.
#[derive(Debug, Clone, Copy)]
pub enum AcceptedGossip<'a, E: EthSpec> {
    /// `beacon_attestation_{subnet}`.
    SingleAttestation(&'a types::electra::SingleAttestation),
    /// `beacon_aggregate_and_proof`.
    Aggregate(&'a types::electra::SignedAggregateAndProof<E>),
    /// `sync_committee_{subnet}`.
    SyncCommitteeMessage {
        /// The message.
        message: &'a types::altair::SyncCommitteeMessage,
        /// The subnet it was validated on.
        subnet: u64,
    },
    /// `sync_committee_contribution_and_proof`.
    SyncContribution(&'a types::altair::SignedContributionAndProof<E>),
    /// `voluntary_exit`.
    VoluntaryExit(&'a types::phase0::SignedVoluntaryExit),
    /// `proposer_slashing`.
    ProposerSlashing(&'a types::phase0::ProposerSlashing),
    /// `attester_slashing`.
    AttesterSlashing(&'a types::electra::AttesterSlashing<E>),
    /// `bls_to_execution_change`.
    BlsToExecutionChange(&'a types::capella::SignedBLSToExecutionChange),
}

/// Told of every accepted gossip message of the kinds in [`AcceptedGossip`], on the worker
/// that accepted it (keep it cheap): the Beacon API's event stream and sync-message
/// aggregation, which the router does not know.
pub trait GossipSink<E: EthSpec>: Send + Sync + 'static {
    /// `message` passed gossip validation.
    fn accepted(&self, message: AcceptedGossip<'_, E>);
}

/// Everything the router's work shares: the chain, the pool, the engine, the network handle,
/// the metrics. Cheap to share (`Arc`).
pub struct Router<E: EthSpec> {
    chain: Arc<BeaconChain<E>>,
    pool: Arc<OperationPool<E>>,
    network: NetworkHandle<E>,
    metrics: Metrics,
    custody: BTreeSet<u64>,
    /// Shared with sync's backfill, which lowers it.
    earliest_available_slot: Arc<AtomicU64>,
    runtime: tokio::runtime::Handle,
    internal: mpsc::UnboundedSender<Internal<E>>,
    sink: std::sync::OnceLock<Arc<dyn GossipSink<E>>>,
}

impl<E: EthSpec> std::fmt::Debug for Router<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("peer_id", &self.network.local_peer_id())
            .field("custody", &self.custody.len())
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> Router<E> {
    /// The chain.
    pub fn chain(&self) -> &Arc<BeaconChain<E>> {
        &self.chain
    }

    /// The operation pool.
    pub fn pool(&self) -> &Arc<OperationPool<E>> {
        &self.pool
    }

    /// The network handle.
    pub fn network(&self) -> &NetworkHandle<E> {
        &self.network
    }

    /// The columns the node custodies.
    pub fn custody_columns(&self) -> &BTreeSet<u64> {
        &self.custody
    }

    /// The slot of the earliest block the node serves (Status, blocks and columns by range).
    pub fn earliest_available_slot(&self) -> Slot {
        self.earliest_available_slot.load(Ordering::Relaxed)
    }

    /// Tells the gossip sink (if any) of an accepted message.
    pub(crate) fn notify(&self, message: AcceptedGossip<'_, E>) {
        if let Some(sink) = self.sink.get() {
            sink.accepted(message);
        }
    }

    pub(crate) fn send_internal(&self, message: Internal<E>) {
        // The loop is gone only after shutdown: nothing is waiting for the message then.
        let _ = self.internal.send(message);
    }
}

/// The running router: its processor (the API and the slot timers submit to it too), the sync
/// state, and its task.
pub struct RouterHandle<E: EthSpec> {
    router: Arc<Router<E>>,
    processor: Processor<E>,
    sync_state: watch::Receiver<SyncState>,
    task: JoinHandle<()>,
}

impl<E: EthSpec> std::fmt::Debug for RouterHandle<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouterHandle")
            .field("router", &self.router)
            .field("sync_state", &*self.sync_state.borrow())
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> RouterHandle<E> {
    /// The beacon processor the router submits to.
    pub fn processor(&self) -> &Processor<E> {
        &self.processor
    }

    /// Sets the sink told of every accepted gossip operation (once; `false` when one was set
    /// already).
    pub fn set_gossip_sink(&self, sink: Arc<dyn GossipSink<E>>) -> bool {
        self.router.sink.set(sink).is_ok()
    }

    /// The router's shared context.
    pub fn router(&self) -> &Arc<Router<E>> {
        &self.router
    }

    /// The sync state, updated as range sync starts and ends.
    pub fn sync_state(&self) -> watch::Receiver<SyncState> {
        self.sync_state.clone()
    }

    /// Waits for the router's task to end (after the shutdown signal, or when the network's
    /// event stream ends), then stops the processor (queued work is dropped and every dropped
    /// gossip message given IGNORE).
    pub async fn join(self) {
        let _ = self.task.await;
        let processor = self.processor.clone();
        // `shutdown` waits for running work: off the async threads.
        let _ =
            tokio::task::spawn_blocking(move || processor.shutdown(ShutdownMode::DropQueued)).await;
    }
}

/// Starts the router on the current tokio runtime: builds the processor with the chain's batch
/// handlers, registers the router's and the processor's metrics, and spawns the event loop,
/// which runs until `shutdown` turns true or the network's event stream ends.
#[allow(
    clippy::too_many_arguments,
    reason = "the node's services, each built elsewhere, handed over once"
)]
pub fn spawn_router<E: EthSpec>(
    chain: Arc<BeaconChain<E>>,
    pool: Arc<OperationPool<E>>,
    network: NetworkHandle<E>,
    events: NetworkEvents<E>,
    config: RouterConfig,
    processor_config: BeaconProcessorConfig,
    registry: &prometheus::Registry,
    shutdown: watch::Receiver<bool>,
) -> Result<RouterHandle<E>, RouterError> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| RouterError::NoRuntime)?;
    let metrics = Metrics::new()?;
    metrics.register(registry)?;
    let custody = config
        .custody_columns
        .clone()
        .unwrap_or_else(|| (0..E::NumberOfColumns::to_u64()).collect());
    let earliest_available_slot = match config.earliest_available_slot {
        Some(slot) => slot,
        None => chain
            .store()
            .oldest_block()?
            .map_or(0, |oldest| oldest.slot),
    };
    let (internal_tx, internal_rx) = mpsc::unbounded_channel();
    let router = Arc::new(Router {
        chain,
        pool,
        network,
        metrics,
        custody,
        earliest_available_slot: Arc::new(AtomicU64::new(earliest_available_slot)),
        runtime,
        internal: internal_tx,
        sink: std::sync::OnceLock::new(),
    });
    subscribe(&router);
    let processor = BeaconProcessor::new(processor_config, ChainHandlers::new(router.clone()))?;
    processor.register_metrics(registry)?;
    let submit_to = processor.clone();
    let (sync, sync_outcomes) = sync::SyncManager::new(
        sync::SyncServices {
            chain: router.chain.clone(),
            network: router.network.clone(),
            custody_columns: router.custody.clone(),
            earliest_available_slot: router.earliest_available_slot.clone(),
            submit: Box::new(move |task| gossip::submit(&submit_to, task)),
        },
        &config.sync_config(),
        registry,
    )?;
    let sync_rx = sync.sync_state();
    let event_loop = EventLoop {
        router: router.clone(),
        processor: processor.clone(),
        sync,
        status_requests: HashMap::new(),
        goodbyes: HashMap::new(),
        last_status: HashMap::new(),
        epoch: status::current_epoch(&router),
        config,
    };
    if router.chain.light_client_server().is_running() {
        tokio::spawn(gossip::publish_light_client_updates(
            router.clone(),
            shutdown.clone(),
        ));
    }
    let task = tokio::spawn(event_loop.run(events, internal_rx, sync_outcomes, shutdown));
    Ok(RouterHandle {
        router,
        processor,
        sync_state: sync_rx,
        task,
    })
}

/// Subscribes to the topics every node follows at the current fork (blocks, aggregates,
/// operations, sync contributions; the light-client ones when the light-client server runs)
/// and to the subnets of the node's custody columns.
/// Attestation and sync-committee subnets follow the validators' duties (the network config's
/// long-lived subnets, and the API's subscriptions).
///
/// [spec]: fulu/p2p-interface.md#data_column_sidecar_subnet_id
fn subscribe<E: EthSpec>(router: &Router<E>) {
    let spec = router.chain.spec();
    let fork = spec.fork_name_at_epoch(status::current_epoch(router));
    let light_client_server = router.chain.light_client_server().is_running();
    for kind in networking::GossipKind::global_kinds(fork) {
        // Without a server there is no local update to check peers' updates against.
        if light_client_server
            || !matches!(
                kind,
                networking::GossipKind::LightClientFinalityUpdate
                    | networking::GossipKind::LightClientOptimisticUpdate
            )
        {
            router.network.subscribe(kind);
        }
    }
    if fork.fulu_enabled() {
        let subnets: BTreeSet<u64> = router
            .custody
            .iter()
            .filter_map(|&c| types::subnets::compute_subnet_for_data_column_sidecar(spec, c).ok())
            .collect();
        for subnet in subnets {
            router
                .network
                .subscribe(networking::GossipKind::DataColumnSidecar(subnet));
        }
    }
}

/// The router's task: owns the request bookkeeping and sync.
struct EventLoop<E: EthSpec> {
    router: Arc<Router<E>>,
    processor: Processor<E>,
    sync: sync::SyncManager<E>,
    /// Status requests we sent, by id.
    status_requests: HashMap<OutboundRequestId, PeerId>,
    /// Goodbyes we sent: the peer is disconnected when the request completes.
    goodbyes: HashMap<OutboundRequestId, PeerId>,
    /// When each connected peer was last sent our Status.
    last_status: HashMap<PeerId, tokio::time::Instant>,
    /// The wall-clock epoch the network was last told of.
    epoch: types::Epoch,
    config: RouterConfig,
}

impl<E: EthSpec> EventLoop<E> {
    async fn run(
        mut self,
        mut events: NetworkEvents<E>,
        mut internal: mpsc::UnboundedReceiver<Internal<E>>,
        mut sync_outcomes: mpsc::UnboundedReceiver<sync::SyncOutcome>,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let mut tick = tokio::time::interval(self.config.tick_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(event) => self.on_network_event(event),
                    None => break,
                },
                Some(message) = internal.recv() => self.on_internal(message),
                Some(outcome) = sync_outcomes.recv() => self.sync.on_outcome(outcome),
                _ = tick.tick() => self.on_tick(),
                changed = shutdown.changed() => {
                    if changed.is_err() || *shutdown.borrow() {
                        break;
                    }
                }
            }
        }
        tracing::debug!("router stopped");
    }

    fn on_network_event(&mut self, event: NetworkEvent<E>) {
        match event {
            NetworkEvent::PeerConnected { peer_id, .. } => self.send_status(peer_id),
            NetworkEvent::PeerDisconnected { peer_id } | NetworkEvent::PeerBanned { peer_id } => {
                self.last_status.remove(&peer_id);
                self.sync.remove_peer(&peer_id);
            }
            NetworkEvent::Goodbye { peer_id, reason } => {
                tracing::debug!(%peer_id, reason, "peer said goodbye");
                self.last_status.remove(&peer_id);
                self.sync.remove_peer(&peer_id);
            }
            NetworkEvent::PeerMetaData { peer_id, metadata } => {
                self.sync
                    .set_custody_group_count(peer_id, metadata.custody_group_count);
            }
            NetworkEvent::PeerSubscribed { .. } => {}
            NetworkEvent::GossipMessage {
                source,
                message_id,
                topic,
                message,
            } => gossip::route_gossip(
                &self.router,
                &self.processor,
                source,
                message_id,
                topic,
                message,
            ),
            NetworkEvent::RequestReceived {
                peer_id,
                request_id,
                request,
            } => rpc::route_request(&self.router, &self.processor, peer_id, request_id, request),
            NetworkEvent::ResponseReceived {
                peer_id,
                request_id,
                response,
            } => self.on_response(peer_id, request_id, response),
            NetworkEvent::RequestFailed {
                peer_id,
                request_id,
                error,
            } => {
                if self.goodbyes.remove(&request_id).is_some() {
                    self.router.network.disconnect(peer_id);
                } else if self.status_requests.remove(&request_id).is_some() {
                    tracing::debug!(%peer_id, %error, "status request failed");
                } else {
                    self.sync.on_request_failed(peer_id, request_id, error);
                }
            }
        }
    }

    fn on_response(
        &mut self,
        peer_id: PeerId,
        request_id: OutboundRequestId,
        response: Response<E>,
    ) {
        if self.goodbyes.remove(&request_id).is_some() {
            self.router.network.disconnect(peer_id);
            return;
        }
        if self.status_requests.remove(&request_id).is_some() {
            match response.items.as_slice() {
                [ResponseItem::Status(status)] => self.on_peer_status(peer_id, *status),
                _ => {
                    tracing::debug!(%peer_id, error = ?response.error, "no status in the answer");
                }
            }
            return;
        }
        self.sync.on_response(peer_id, request_id, response);
    }

    fn on_internal(&mut self, message: Internal<E>) {
        match message {
            Internal::PeerStatus { peer_id, status } => self.on_peer_status(peer_id, status),
            Internal::UnknownParent { peer_id, block } => {
                self.sync.on_unknown_parent(peer_id, block)
            }
            Internal::ParentPayloadUnknown { peer_id, block } => {
                self.sync.on_parent_payload_unknown(peer_id, block)
            }
            Internal::UnknownBlock { peer_id, root } => self.sync.on_unknown_block(peer_id, root),
            Internal::Reconstruct(root) => {
                gossip::schedule_reconstruction(&self.router, &self.processor, root)
            }
        }
    }

    fn on_tick(&mut self) {
        // The network moves its topics and ENR across fork boundaries by the epoch.
        let epoch = status::current_epoch(&self.router);
        if epoch != self.epoch {
            self.epoch = epoch;
            self.router.network.update_epoch(epoch);
        }
        let now = tokio::time::Instant::now();
        let due: Vec<PeerId> = self
            .last_status
            .iter()
            .filter(|(_, at)| now.duration_since(**at) >= self.config.status_interval)
            .map(|(peer, _)| *peer)
            .collect();
        for peer_id in due {
            self.send_status(peer_id);
        }
        self.sync.on_tick();
    }

    fn send_status(&mut self, peer_id: PeerId) {
        let status = status::local_status(&self.router);
        let id = self
            .router
            .network
            .send_request(peer_id, Request::Status(status));
        self.status_requests.insert(id, peer_id);
        self.last_status
            .insert(peer_id, tokio::time::Instant::now());
    }

    fn on_peer_status(&mut self, peer_id: PeerId, status: StatusMessage) {
        match check_peer_status(&self.router, &status) {
            Ok(()) => {
                self.sync.add_peer(peer_id, status);
            }
            Err(irrelevant) => {
                tracing::debug!(%peer_id, reason = %irrelevant, "irrelevant peer: goodbye");
                self.sync.remove_peer(&peer_id);
                self.last_status.remove(&peer_id);
                let id = self
                    .router
                    .network
                    .send_request(peer_id, Request::Goodbye(GOODBYE_IRRELEVANT_NETWORK));
                self.goodbyes.insert(id, peer_id);
            }
        }
    }
}
