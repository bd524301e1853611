//! Range sync: when peers' Status shows a head beyond ours, the slots from our head to theirs
//! are fetched in batches (`BeaconBlocksByRange` with our custody columns by
//! `DataColumnSidecarsByRange`, from one peer per batch, several batches ahead), checked
//! (slots in range and ascending, blocks linked, columns of their block by the inclusion
//! proof and covering our custody), and imported in order as chain segments on the
//! processor: `engine_newPayload` per block, then the chain's import, which verifies every
//! signature of the block and the columns' KZG proofs. A bad batch is penalised on the peer
//! that served it and fetched again from another; a batch that keeps failing restarts sync
//! from the head.
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyrange, fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use beacon_chain::timeline::SeenVia;
use beacon_chain::{
    BeaconChain, BlockPayloadVerdict, ChainError, InternalError, PayloadStatus,
    PendingPayloadVerdict, SegmentBlock, SegmentImport,
};
use beacon_processor::{Task, WorkKind};
use networking::rpc::{
    BlocksByRangeRequest, DataColumnsByRangeRequest, Request, Response, ResponseItem, StatusMessage,
};
use networking::{OutboundRequestId, PeerAction, PeerId, RpcError};
use tokio::sync::watch;
use tree_hash_root::block_root_of_column;
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock, Slot};

use crate::gossip::{ask_engine, submit};
use crate::{Internal, Processor, Router, RouterConfig};

/// Where the node stands against its peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncState {
    /// No peer is ahead of our head (or there are no peers): following by gossip.
    Synced,
    /// Range syncing towards `target_slot`, the highest head among the peers ahead.
    Syncing {
        /// The peers' highest head slot.
        target_slot: Slot,
    },
}

/// Why a range-sync batch was refused: what the peer sent, or why it could not be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The peer answered with an error chunk.
    #[error("the peer answered {code}: {message}")]
    ErrorResponse {
        /// The response code.
        code: u8,
        /// Its message.
        message: String,
    },
    /// A block outside the requested range.
    #[error("block at slot {slot} outside [{start}, {end})")]
    BlockOutOfRange {
        /// The block's slot.
        slot: Slot,
        /// The range's first slot.
        start: Slot,
        /// The slot after the range.
        end: Slot,
    },
    /// Blocks not in ascending slot order.
    #[error("block at slot {slot} after one at slot {previous}")]
    NotAscending {
        /// The block's slot.
        slot: Slot,
        /// The slot of the block before it.
        previous: Slot,
    },
    /// A column outside the range or not asked for.
    #[error("column {index} at slot {slot} was not asked for")]
    UnexpectedColumn {
        /// The column's slot.
        slot: Slot,
        /// Its index.
        index: u64,
    },
    /// A response item of the wrong type.
    #[error("a response item of the wrong type")]
    WrongItem,
    /// A block whose parent is not the block before it in the batch.
    #[error("block at slot {slot} has parent {parent}, the batch's previous block is {expected}")]
    NotLinked {
        /// The block's slot.
        slot: Slot,
        /// Its parent root.
        parent: Root,
        /// The root of the batch's previous block.
        expected: Root,
    },
    /// The batch's first block does not build on a block the chain holds.
    #[error("block at slot {slot}: parent {parent} unknown")]
    UnknownParent {
        /// The block's slot.
        slot: Slot,
        /// Its parent root.
        parent: Root,
    },
    /// A column whose commitments are not its block's (inclusion proof).
    #[error("column {index} of block {block_root}: inclusion proof fails")]
    BadInclusionProof {
        /// The block.
        block_root: Root,
        /// The column index.
        index: u64,
    },
    /// A block with blobs without all of our custody columns.
    #[error("block {block_root}: {missing} custody columns missing")]
    MissingColumns {
        /// The block.
        block_root: Root,
        /// How many custody columns were not sent.
        missing: usize,
    },
    /// The chain found a column invalid (KZG proofs, shape).
    #[error("block at slot {slot}: data unavailable")]
    DataUnavailable {
        /// The block's slot.
        slot: Slot,
        /// What the availability check said (fork choice's `AvailabilityError`).
        #[source]
        source: InternalError,
    },
    /// The chain refused the block (signatures, state transition, payload, finality).
    #[error("block at slot {slot} invalid")]
    InvalidBlock {
        /// The block's slot.
        slot: Slot,
        /// What the chain said (a `ChainError` or a `fork_choice::Error`).
        #[source]
        source: InternalError,
    },
    /// The request got no usable answer (timeout, stream failure, malformed response):
    /// networking penalised what was the peer's fault already.
    #[error("the request failed")]
    RequestFailed(#[source] InternalError),
    /// The import failed for a reason of ours (store, state helpers).
    #[error("internal")]
    Internal(#[source] InternalError),
    /// The processor dropped the segment (shutting down, queue full).
    #[error("the processor dropped the segment")]
    Dropped,
}

/// Who a failed batch is blamed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blame {
    /// The peer that served it: penalised, the batch fetched from another.
    Peer,
    /// Nobody: fetched again.
    Nobody,
}

impl SyncError {
    /// Whether the peer that served the data is at fault. Missing custody columns are only
    /// the fault of a peer that custodies every column (`full_custody`): another serves the
    /// columns it custodies, which need not be ours.
    pub(crate) fn blames(&self, full_custody: bool) -> bool {
        match self {
            SyncError::MissingColumns { .. } => full_custody,
            _ => self.blame() == Blame::Peer,
        }
    }

    fn blame(&self) -> Blame {
        match self {
            SyncError::Internal(_)
            | SyncError::Dropped
            | SyncError::ErrorResponse { .. }
            | SyncError::RequestFailed(_) => Blame::Nobody,
            _ => Blame::Peer,
        }
    }

    fn label(&self) -> &'static str {
        match self {
            SyncError::ErrorResponse { .. } => "error_response",
            SyncError::RequestFailed(_) => "request_failed",
            SyncError::BlockOutOfRange { .. }
            | SyncError::NotAscending { .. }
            | SyncError::UnexpectedColumn { .. }
            | SyncError::WrongItem => "malformed",
            SyncError::NotLinked { .. } | SyncError::UnknownParent { .. } => "not_linked",
            SyncError::BadInclusionProof { .. }
            | SyncError::MissingColumns { .. }
            | SyncError::DataUnavailable { .. } => "bad_columns",
            SyncError::InvalidBlock { .. } => "invalid_block",
            SyncError::Internal(_) => "internal",
            SyncError::Dropped => "dropped",
        }
    }
}

/// A processed segment, back to the sync state machine.
#[derive(Debug)]
pub(crate) struct SegmentOutcome {
    batch_id: u64,
    result: Result<usize, SyncError>,
}

mod tree_hash_root {
    use tree_hash::TreeHash;
    use types::{DataColumnSidecar, EthSpec, Root};

    /// The root of the block a column belongs to (its signed header's message).
    pub(super) fn block_root_of_column<E: EthSpec>(column: &DataColumnSidecar<E>) -> Root {
        let DataColumnSidecar::Fulu(c) = column;
        c.signed_block_header.message.tree_hash_root()
    }
}

type Blocks<E> = Vec<Arc<SignedBeaconBlock<E>>>;
type Columns<E> = Vec<Arc<DataColumnSidecar<E>>>;

enum BatchState<E: EthSpec> {
    AwaitingDownload,
    Downloading {
        peer: PeerId,
        blocks: Option<Blocks<E>>,
        columns: Option<Columns<E>>,
    },
    AwaitingProcessing {
        peer: PeerId,
        blocks: Blocks<E>,
        columns: Columns<E>,
    },
    Processing {
        peer: PeerId,
    },
}

struct Batch<E: EthSpec> {
    id: u64,
    start: Slot,
    count: u64,
    attempts: u32,
    failed_peers: HashSet<PeerId>,
    state: BatchState<E>,
}

impl<E: EthSpec> Batch<E> {
    fn end(&self) -> Slot {
        self.start.saturating_add(self.count)
    }
}

struct SyncPeer {
    status: StatusMessage,
    downloads: usize,
}

/// The range-sync state machine, owned by the router's event loop.
pub(crate) struct RangeSync<E: EthSpec> {
    router: Arc<Router<E>>,
    peers: HashMap<PeerId, SyncPeer>,
    batches: VecDeque<Batch<E>>,
    /// The first slot of the next batch to create; `None` while not syncing.
    next_start: Option<Slot>,
    next_batch_id: u64,
    /// Our outstanding requests: the batch and whether it is the columns half.
    requests: HashMap<OutboundRequestId, (u64, bool)>,
    state: watch::Sender<SyncState>,
    batch_slots: u64,
    batches_ahead: usize,
    max_attempts: u32,
    tolerance: u64,
    /// Whether the next start is from the finalized checkpoint instead of the head.
    from_finalized: bool,
    /// When progress was last logged, and the head slot then.
    progress: Option<(std::time::Instant, Slot)>,
    /// Each connected peer's custody group count, from its metadata.
    custody_groups: HashMap<PeerId, u64>,
}

/// Whether the chain imported `root` (not merely saw it).
pub(crate) fn is_imported<E: EthSpec>(chain: &BeaconChain<E>, root: &Root) -> bool {
    chain.is_block_known(root) && chain.unimported_block(root).is_none()
}

pub(crate) use beacon_chain::historical_blocks::blob_count;

impl<E: EthSpec> RangeSync<E> {
    pub(crate) fn new(
        router: Arc<Router<E>>,
        config: &RouterConfig,
        state: watch::Sender<SyncState>,
    ) -> Self {
        Self {
            router,
            peers: HashMap::new(),
            batches: VecDeque::new(),
            next_start: None,
            next_batch_id: 0,
            requests: HashMap::new(),
            state,
            batch_slots: config.sync_batch_slots.max(1),
            batches_ahead: config.sync_batches_ahead.max(1),
            max_attempts: config.sync_max_batch_attempts.max(1),
            tolerance: config.sync_tolerance_slots,
            from_finalized: false,
            progress: None,
            custody_groups: HashMap::new(),
        }
    }

    fn local_head_slot(&self) -> Slot {
        self.router.chain.head().slot
    }

    /// The highest head among the peers.
    fn target_slot(&self) -> Slot {
        self.peers
            .values()
            .map(|p| p.status.head_slot)
            .max()
            .unwrap_or(0)
    }

    /// Whether a peer's chain is one range sync fetches: finalized beyond ours, or a head more
    /// than the tolerance ahead (a smaller gap is closed by gossip and lookups).
    fn is_ahead(&self, status: &StatusMessage) -> bool {
        let head = self.router.chain.head();
        status.finalized_epoch > head.finalized_checkpoint.epoch
            || status.head_slot > head.slot.saturating_add(self.tolerance)
    }

    /// A relevant peer's Status: a peer ahead of us joins range sync.
    pub(crate) fn add_peer(
        &mut self,
        peer: PeerId,
        status: StatusMessage,
        processor: &Processor<E>,
    ) {
        if self.is_ahead(&status) {
            let downloads = self.peers.get(&peer).map_or(0, |p| p.downloads);
            self.peers.insert(peer, SyncPeer { status, downloads });
        } else {
            self.peers.remove(&peer);
        }
        self.router.metrics.sync_peers.set(self.peers.len() as i64);
        self.drive(processor);
    }

    /// A peer's metadata told its custody group count.
    pub(crate) fn set_custody_group_count(&mut self, peer: PeerId, count: u64) {
        self.custody_groups.insert(peer, count);
    }

    /// Whether `peer` custodies every column (so it can serve all of ours): until its
    /// metadata says so, it is not taken to.
    pub(crate) fn is_full_custody(&self, peer: &PeerId) -> bool {
        self.custody_groups
            .get(peer)
            .is_some_and(|&count| count >= self.router.chain.spec().number_of_custody_groups)
    }

    /// A peer left: its downloads are fetched again elsewhere.
    pub(crate) fn remove_peer(&mut self, peer: &PeerId) {
        self.peers.remove(peer);
        self.custody_groups.remove(peer);
        self.router.metrics.sync_peers.set(self.peers.len() as i64);
        for batch in &mut self.batches {
            if let BatchState::Downloading { peer: p, .. } = &batch.state
                && p == peer
            {
                batch.state = BatchState::AwaitingDownload;
            }
        }
        self.requests.retain(|_, (id, _)| {
            self.batches
                .iter()
                .any(|b| b.id == *id && matches!(b.state, BatchState::Downloading { .. }))
        });
    }

    pub(crate) fn on_tick(&mut self, processor: &Processor<E>) {
        self.drive(processor);
        self.log_progress();
    }

    /// Once a slot while syncing: peers, distance to the target, speed and ETA.
    fn log_progress(&mut self) {
        let SyncState::Syncing { target_slot } = *self.state.borrow() else {
            self.progress = None;
            return;
        };
        let now = std::time::Instant::now();
        let head = self.local_head_slot();
        let Some((since, from)) = self.progress else {
            self.progress = Some((now, head));
            return;
        };
        let slot_duration =
            std::time::Duration::from_millis(self.router.chain.spec().slot_duration_ms);
        let elapsed = now.duration_since(since);
        if elapsed < slot_duration {
            return;
        }
        self.progress = Some((now, head));
        let distance = target_slot.saturating_sub(head);
        let speed = head.saturating_sub(from) as f64 / elapsed.as_secs_f64();
        let eta = if speed > 0.0 {
            format_duration(distance as f64 / speed)
        } else {
            "unknown".to_owned()
        };
        tracing::info!(
            "Syncing  peers: {}  distance: {} slots ({})  speed: {:.1} slots/s  ETA: {}",
            self.peers.len(),
            with_separators(distance),
            format_duration((distance * self.router.chain.spec().slot_duration_ms) as f64 / 1000.0),
            speed,
            eta,
        );
    }

    fn set_state(&self, state: SyncState) {
        let metrics = &self.router.metrics;
        match state {
            SyncState::Synced => metrics.sync_state.set(0),
            SyncState::Syncing { target_slot } => {
                metrics.sync_state.set(1);
                metrics
                    .sync_target_slot
                    .set(i64::try_from(target_slot).unwrap_or(i64::MAX));
            }
        }
        self.state.send_if_modified(|current| {
            let changed = *current != state;
            *current = state;
            changed
        });
    }

    /// Starts, extends, downloads, processes and ends range sync as far as it can go now.
    fn drive(&mut self, processor: &Processor<E>) {
        let target = self.target_slot();
        if self.next_start.is_none() {
            let head = self.local_head_slot();
            if self.peers.is_empty() || target <= head {
                self.set_state(SyncState::Synced);
                return;
            }
            // From the head; after a batch kept failing (the peers' chain may fork from ours
            // below our head), from the finalized checkpoint, which every relevant peer shares.
            let start = if self.from_finalized {
                let finalized = self.router.chain.finalized_checkpoint().epoch;
                finalized.saturating_mul(E::slots_per_epoch()) + 1
            } else {
                head + 1
            };
            tracing::info!(
                from = start,
                to = target,
                peers = self.peers.len(),
                "range sync starts"
            );
            self.next_start = Some(start);
        }
        self.set_state(SyncState::Syncing {
            target_slot: target,
        });
        while self.batches.len() < self.batches_ahead {
            let Some(start) = self.next_start.filter(|s| *s <= target) else {
                break;
            };
            self.batches.push_back(Batch {
                id: self.next_batch_id,
                start,
                count: self.batch_slots,
                attempts: 0,
                failed_peers: HashSet::new(),
                state: BatchState::AwaitingDownload,
            });
            self.next_batch_id += 1;
            self.next_start = Some(start + self.batch_slots);
        }
        for index in 0..self.batches.len() {
            if matches!(self.batches[index].state, BatchState::AwaitingDownload) {
                self.download(index);
            }
        }
        self.process_next(processor);
        if self.batches.is_empty() && self.next_start.is_some_and(|s| s > target) {
            let head = self.local_head_slot();
            tracing::info!(head, target, "range sync done");
            self.next_start = None;
            self.from_finalized = false;
            // Peers not ahead of the new head are no longer sync peers.
            let statuses: Vec<(PeerId, StatusMessage)> =
                self.peers.iter().map(|(id, p)| (*id, p.status)).collect();
            for (id, status) in statuses {
                if !self.is_ahead(&status) {
                    self.peers.remove(&id);
                }
            }
            self.router.metrics.sync_peers.set(self.peers.len() as i64);
            if self.peers.is_empty() {
                self.set_state(SyncState::Synced);
            } else {
                self.drive(processor);
            }
        }
    }

    /// Sends batch `index`'s requests to the least busy peer that has its slots, preferring one
    /// that has not failed it.
    fn download(&mut self, index: usize) {
        let batch = &self.batches[index];
        // Peers that custody every column first (they can serve all of ours), then the least
        // busy.
        let pick = |exclude_failed: bool| {
            self.peers
                .iter()
                .filter(|(_, p)| p.status.head_slot >= batch.start)
                .filter(|(id, _)| !exclude_failed || !batch.failed_peers.contains(*id))
                .min_by_key(|(id, p)| (!self.is_full_custody(id), p.downloads))
                .map(|(id, _)| *id)
        };
        let Some(peer) = pick(true).or_else(|| pick(false)) else {
            return;
        };
        let network = &self.router.network;
        let blocks_request = network.send_request(
            peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: batch.start,
                count: batch.count,
                step: 1,
            }),
        );
        let spec = self.router.chain.spec();
        let columns_request = (spec
            .fork_name_at_slot::<E>(batch.end().saturating_sub(1))
            .fulu_enabled()
            && !self.router.custody.is_empty())
        .then(|| {
            network.send_request(
                peer,
                Request::DataColumnsByRange(DataColumnsByRangeRequest {
                    start_slot: batch.start,
                    count: batch.count,
                    columns: self.router.custody.iter().copied().collect(),
                }),
            )
        });
        let id = batch.id;
        self.requests.insert(blocks_request, (id, false));
        if let Some(columns_request) = columns_request {
            self.requests.insert(columns_request, (id, true));
        }
        if let Some(p) = self.peers.get_mut(&peer) {
            p.downloads += 1;
        }
        self.batches[index].state = BatchState::Downloading {
            peer,
            blocks: None,
            columns: columns_request.is_none().then(Vec::new),
        };
    }

    fn finish_download(&mut self, peer: &PeerId) {
        if let Some(p) = self.peers.get_mut(peer) {
            p.downloads = p.downloads.saturating_sub(1);
        }
    }

    /// A batch failed: the peer penalised when at fault, the batch downloaded again (from
    /// another peer), or sync restarted from the head after too many attempts.
    fn fail_batch(&mut self, batch_id: u64, peer: PeerId, error: &SyncError) {
        self.router
            .metrics
            .sync_batches
            .with_label_values(&[error.label()])
            .inc();
        tracing::debug!(%peer, batch = batch_id, %error, "range sync batch failed");
        if error.blames(self.is_full_custody(&peer)) {
            self.router
                .network
                .report_peer(peer, PeerAction::LowTolerance);
        }
        let max_attempts = self.max_attempts;
        let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) else {
            return;
        };
        batch.attempts += 1;
        batch.failed_peers.insert(peer);
        batch.state = BatchState::AwaitingDownload;
        self.requests.retain(|_, (id, _)| *id != batch_id);
        if batch.attempts >= max_attempts {
            tracing::warn!(
                start = batch.start,
                attempts = batch.attempts,
                "range sync batch keeps failing: restarting from the finalized checkpoint"
            );
            self.from_finalized = true;
            self.batches.clear();
            self.requests.clear();
            for p in self.peers.values_mut() {
                p.downloads = 0;
            }
            self.next_start = None;
        }
    }

    /// A response to one of our requests: stored (the batch imported as soon as it is
    /// complete and first in line) or refused.
    pub(crate) fn on_response(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        response: Response<E>,
        processor: &Processor<E>,
    ) {
        let Some((batch_id, is_columns)) = self.requests.remove(&request_id) else {
            return;
        };
        if let Err(error) = self.accept_response(batch_id, is_columns, response) {
            self.finish_download(&peer);
            self.fail_batch(batch_id, peer, &error);
        }
        self.drive(processor);
    }

    /// Checks a response against its batch and stores it; both halves there, the batch waits
    /// for processing.
    fn accept_response(
        &mut self,
        batch_id: u64,
        is_columns: bool,
        response: Response<E>,
    ) -> Result<(), SyncError> {
        let custody = self.router.custody.clone();
        let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) else {
            return Ok(());
        };
        let (start, end) = (batch.start, batch.end());
        let BatchState::Downloading {
            peer,
            blocks,
            columns,
            ..
        } = &mut batch.state
        else {
            return Ok(());
        };
        let peer = *peer;
        if let Some(error) = response.error
            && response.items.is_empty()
        {
            return Err(SyncError::ErrorResponse {
                code: error.code.0,
                message: error.message,
            });
        }
        if is_columns {
            *columns = Some(check_columns(response.items, start, end, &custody)?);
        } else {
            *blocks = Some(check_blocks(response.items, start, end)?);
        }
        if blocks.is_some() && columns.is_some() {
            let blocks = blocks.take().unwrap_or_default();
            let columns = columns.take().unwrap_or_default();
            batch.state = BatchState::AwaitingProcessing {
                peer,
                blocks,
                columns,
            };
            self.finish_download(&peer);
        }
        Ok(())
    }

    /// One of our requests failed (timeout, stream refused, our own rate limit).
    pub(crate) fn on_request_failed(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        error: RpcError,
        processor: &Processor<E>,
    ) {
        let Some((batch_id, _)) = self.requests.remove(&request_id) else {
            return;
        };
        self.finish_download(&peer);
        tracing::debug!(%peer, batch = batch_id, %error, "range sync request failed");
        if matches!(error, RpcError::RateLimited(_)) {
            // Our own quota for the peer: nobody's fault and no attempt spent; the batch is
            // asked for again at the next tick, when the quota has refilled some.
            self.requests.retain(|_, (id, _)| *id != batch_id);
            if let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) {
                batch.state = BatchState::AwaitingDownload;
            }
            return;
        }
        // Networking penalised a timeout or a malformed response already.
        self.fail_batch(
            batch_id,
            peer,
            &SyncError::RequestFailed(InternalError::new(error)),
        );
        self.drive(processor);
    }

    /// Starts importing the first batch when it is downloaded and nothing is importing.
    fn process_next(&mut self, processor: &Processor<E>) {
        if self
            .batches
            .iter()
            .any(|b| matches!(b.state, BatchState::Processing { .. }))
        {
            return;
        }
        let Some(batch) = self.batches.front_mut() else {
            return;
        };
        if !matches!(batch.state, BatchState::AwaitingProcessing { .. }) {
            return;
        }
        let BatchState::AwaitingProcessing {
            peer,
            blocks,
            columns,
        } = std::mem::replace(&mut batch.state, BatchState::AwaitingDownload)
        else {
            return;
        };
        batch.state = BatchState::Processing { peer };
        let batch_id = batch.id;
        let router = self.router.clone();
        let blocks = Arc::new(blocks);
        let verdicts = ask_engine_beside_import(&router, &blocks);
        let on_run = router.clone();
        let on_drop = router;
        let task = Task::new(WorkKind::ChainSegment, move |_| {
            let result = process_chain_segment(&on_run, &blocks, columns, &verdicts);
            on_run.send_internal(Internal::SegmentProcessed(SegmentOutcome {
                batch_id,
                result,
            }));
        })
        .on_drop(move |_| {
            on_drop.send_internal(Internal::SegmentProcessed(SegmentOutcome {
                batch_id,
                result: Err(SyncError::Dropped),
            }));
        });
        submit(processor, task);
    }

    /// A segment was imported or failed.
    pub(crate) fn on_segment_processed(
        &mut self,
        outcome: SegmentOutcome,
        processor: &Processor<E>,
    ) {
        let Some(batch) = self.batches.iter().find(|b| b.id == outcome.batch_id) else {
            return;
        };
        let BatchState::Processing { peer } = batch.state else {
            return;
        };
        match outcome.result {
            Ok(imported) => {
                let metrics = &self.router.metrics;
                metrics.sync_blocks_imported.inc_by(imported as u64);
                metrics.sync_batches.with_label_values(&["imported"]).inc();
                tracing::debug!(
                    start = batch.start,
                    imported,
                    head = self.local_head_slot(),
                    "range sync batch imported"
                );
                self.batches.retain(|b| b.id != outcome.batch_id);
            }
            Err(error) => self.fail_batch(outcome.batch_id, peer, &error),
        }
        self.drive(processor);
    }
}

/// `2304` as `2,304`.
pub(crate) fn with_separators(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds as the log shows them: `56 s`, `12 min`, `7.7 h`, `3.2 d`.
pub(crate) fn format_duration(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.0} s")
    } else if seconds < 3600.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 86_400.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} d", seconds / 86_400.0)
    }
}

/// The blocks of a BlocksByRange response: in the range, ascending, at most one per slot.
pub(crate) fn check_blocks<E: EthSpec>(
    items: Vec<ResponseItem<E>>,
    start: Slot,
    end: Slot,
) -> Result<Blocks<E>, SyncError> {
    let mut blocks = Vec::with_capacity(items.len());
    let mut previous: Option<Slot> = None;
    for item in items {
        let ResponseItem::Block(block) = item else {
            return Err(SyncError::WrongItem);
        };
        let slot = block.slot();
        if slot < start || slot >= end {
            return Err(SyncError::BlockOutOfRange { slot, start, end });
        }
        if let Some(previous) = previous
            && slot <= previous
        {
            return Err(SyncError::NotAscending { slot, previous });
        }
        previous = Some(slot);
        blocks.push(block);
    }
    Ok(blocks)
}

/// The columns of a DataColumnSidecarsByRange response: in the range, of the columns asked for.
pub(crate) fn check_columns<E: EthSpec>(
    items: Vec<ResponseItem<E>>,
    start: Slot,
    end: Slot,
    custody: &BTreeSet<u64>,
) -> Result<Columns<E>, SyncError> {
    let mut columns = Vec::with_capacity(items.len());
    for item in items {
        let ResponseItem::DataColumnSidecar(column) = item else {
            return Err(SyncError::WrongItem);
        };
        let DataColumnSidecar::Fulu(c) = &*column;
        let slot = c.signed_block_header.message.slot;
        if slot < start || slot >= end || !custody.contains(&c.index) {
            return Err(SyncError::UnexpectedColumn {
                slot,
                index: c.index,
            });
        }
        columns.push(column);
    }
    Ok(columns)
}

/// Imports a downloaded batch in order: each block linked to the one before, with its custody
/// columns (inclusion proofs checked here, KZG proofs by the import), through the chain's
/// import with the engine's verdict. Blocks imported already (by gossip meanwhile) are skipped.
/// Returns how many blocks were imported.
/// Sends `engine_newPayload` for each of `blocks` not imported yet, in chain order, on the
/// runtime, and returns their verdicts in flight: the segment's import starts at once and
/// each block waits for its verdict after its state transition, so that the execution client
/// and the state transitions work at the same time.
pub(crate) fn ask_engine_beside_import<E: EthSpec>(
    router: &Arc<Router<E>>,
    blocks: &Arc<Vec<Arc<SignedBeaconBlock<E>>>>,
) -> Vec<BlockPayloadVerdict> {
    let mut verdicts = Vec::with_capacity(blocks.len());
    let mut senders = Vec::with_capacity(blocks.len());
    for (index, block) in blocks.iter().enumerate() {
        let root = block.canonical_root();
        if is_imported(&router.chain, &root) {
            verdicts.push(BlockPayloadVerdict::Known(PayloadStatus::Valid));
        } else {
            let (sender, pending) = PendingPayloadVerdict::channel();
            senders.push((index, root, sender));
            verdicts.push(BlockPayloadVerdict::Pending(pending));
        }
    }
    let router = router.clone();
    let blocks = blocks.clone();
    router.clone().runtime.spawn(async move {
        for (index, root, sender) in senders {
            ask_engine(&router, root, &blocks[index], sender).await;
        }
    });
    verdicts
}

pub(crate) fn process_chain_segment<E: EthSpec>(
    router: &Router<E>,
    blocks: &[Arc<SignedBeaconBlock<E>>],
    columns: Columns<E>,
    verdicts: &[BlockPayloadVerdict],
) -> Result<usize, SyncError> {
    let chain = &router.chain;
    let mut by_block: HashMap<Root, Columns<E>> = HashMap::new();
    for column in columns {
        by_block
            .entry(block_root_of_column(&column))
            .or_default()
            .push(column);
    }
    // The segment's checks block by block (linked, columns present with their inclusion
    // proofs); the blocks up to the first that fails them are imported as one segment, with
    // their signatures in one batch, and that failure is the answer.
    let mut segment: Vec<SegmentBlock<E>> = Vec::with_capacity(blocks.len());
    let mut segment_verdicts: Vec<&BlockPayloadVerdict> = Vec::with_capacity(blocks.len());
    let mut refused: Option<SyncError> = None;
    let mut previous: Option<Root> = None;
    for (block, status) in blocks.iter().zip(verdicts) {
        let root = block.canonical_root();
        let slot = block.slot();
        if let Some(expected) = previous
            && block.parent_root() != expected
        {
            refused = Some(SyncError::NotLinked {
                slot,
                parent: block.parent_root(),
                expected,
            });
            break;
        }
        previous = Some(root);
        if is_imported(chain, &root) {
            continue;
        }
        chain.record_block_seen(root, slot, SeenVia::Rpc);
        let columns = if blob_count(block) > 0 {
            match segment_columns(router, &mut by_block, root) {
                Ok(columns) => columns,
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        } else {
            Vec::new()
        };
        segment.push(SegmentBlock {
            block: block.clone(),
            columns,
        });
        segment_verdicts.push(status);
    }
    let mut imported = 0;
    let mut start = 0;
    loop {
        let SegmentImport {
            imported: done,
            failed,
            ..
        } = chain.import_chain_segment(&segment[start..], &segment_verdicts[start..]);
        imported += done.len();
        let Some((at, error)) = failed else {
            return match refused {
                Some(e) => Err(e),
                None => Ok(imported),
            };
        };
        let at = start + at;
        let slot = segment[at].block.slot();
        return match error {
            e @ ChainError::InvalidPayload(_) => Err(SyncError::InvalidBlock {
                slot,
                source: InternalError::new(e),
            }),
            ChainError::ForkChoice(e) => {
                use fork_choice::Error as F;
                match e {
                    // Finalized meanwhile (by other blocks): nothing to import; the blocks
                    // after it may still be new.
                    F::NotAfterFinalizedSlot { .. } => {
                        start = at + 1;
                        continue;
                    }
                    F::UnknownParent { parent, .. } => {
                        Err(SyncError::UnknownParent { slot, parent })
                    }
                    F::DataUnavailable { source, .. } => Err(SyncError::DataUnavailable {
                        slot,
                        source: InternalError::new(source),
                    }),
                    // Our store or states failed: not the peer's fault, and the same
                    // blocks may import on a retry.
                    other if other.fault() == fork_choice::Fault::Local => {
                        Err(SyncError::Internal(InternalError::new(other)))
                    }
                    other => Err(SyncError::InvalidBlock {
                        slot,
                        source: InternalError::new(other),
                    }),
                }
            }
            other => Err(SyncError::Internal(InternalError::new(other))),
        };
    }
}

/// The custody columns sent for the block `root` of a segment, each with a valid inclusion
/// proof, none missing.
fn segment_columns<E: EthSpec>(
    router: &Router<E>,
    by_block: &mut HashMap<Root, Columns<E>>,
    root: Root,
) -> Result<Vec<DataColumnSidecar<E>>, SyncError> {
    let sent = by_block.remove(&root).unwrap_or_default();
    let mut have = BTreeSet::new();
    for column in &sent {
        let DataColumnSidecar::Fulu(c) = &**column;
        if !beacon_chain::data_column_sidecars::verify_data_column_sidecar_inclusion_proof(column) {
            return Err(SyncError::BadInclusionProof {
                block_root: root,
                index: c.index,
            });
        }
        have.insert(c.index);
    }
    let missing = router.custody.difference(&have).count();
    if missing > 0 {
        return Err(SyncError::MissingColumns {
            block_root: root,
            missing,
        });
    }
    Ok(sent.iter().map(|c| (**c).clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use types::MinimalEthSpec as E;

    fn block(slot: Slot) -> Arc<SignedBeaconBlock<E>> {
        let bytes = vec![slot as u8; 4096];
        let mut block =
            types::fulu::SignedBeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes))
                .expect("arbitrary block");
        block.message.slot = slot;
        Arc::new(SignedBeaconBlock::Fulu(block))
    }

    fn column(slot: Slot, index: u64) -> Arc<DataColumnSidecar<E>> {
        let bytes = vec![index as u8; 4096];
        let mut sidecar =
            types::fulu::DataColumnSidecar::<E>::arbitrary(&mut Unstructured::new(&bytes))
                .expect("arbitrary sidecar");
        sidecar.index = index;
        sidecar.signed_block_header.message.slot = slot;
        Arc::new(DataColumnSidecar::Fulu(sidecar))
    }

    fn items(blocks: &[Slot]) -> Vec<ResponseItem<E>> {
        blocks
            .iter()
            .map(|s| ResponseItem::Block(block(*s)))
            .collect()
    }

    #[test]
    fn progress_numbers_read_as_the_log_shows_them() {
        assert_eq!(with_separators(0), "0");
        assert_eq!(with_separators(999), "999");
        assert_eq!(with_separators(2304), "2,304");
        assert_eq!(with_separators(1_234_567), "1,234,567");
        assert_eq!(format_duration(56.2), "56 s");
        assert_eq!(format_duration(720.0), "12 min");
        assert_eq!(format_duration(2304.0 * 12.0), "7.7 h");
        assert_eq!(format_duration(3.0 * 86_400.0), "3.0 d");
    }

    #[test]
    fn accepts_ascending_blocks_within_the_range_with_gaps() {
        let blocks = check_blocks(items(&[10, 12, 17]), 10, 18).expect("in range");
        let slots: Vec<_> = blocks.iter().map(|b| b.slot()).collect();
        assert_eq!(slots, [10, 12, 17]);
    }

    #[test]
    fn refuses_blocks_outside_the_range_or_out_of_order() {
        assert_eq!(
            check_blocks(items(&[10, 18]), 10, 18).map(|_| ()),
            Err(SyncError::BlockOutOfRange {
                slot: 18,
                start: 10,
                end: 18
            })
        );
        assert_eq!(
            check_blocks(items(&[9]), 10, 18).map(|_| ()),
            Err(SyncError::BlockOutOfRange {
                slot: 9,
                start: 10,
                end: 18
            })
        );
        assert_eq!(
            check_blocks(items(&[12, 12]), 10, 18).map(|_| ()),
            Err(SyncError::NotAscending {
                slot: 12,
                previous: 12
            })
        );
        assert_eq!(
            check_blocks(items(&[13, 11]), 10, 18).map(|_| ()),
            Err(SyncError::NotAscending {
                slot: 11,
                previous: 13
            })
        );
        assert_eq!(
            check_blocks(vec![ResponseItem::<E>::Pong(1)], 10, 18).map(|_| ()),
            Err(SyncError::WrongItem)
        );
    }

    #[test]
    fn refuses_columns_not_asked_for() {
        let custody: BTreeSet<u64> = [1, 5].into_iter().collect();
        let ok = vec![
            ResponseItem::DataColumnSidecar(column(10, 1)),
            ResponseItem::DataColumnSidecar(column(11, 5)),
        ];
        assert_eq!(check_columns(ok, 10, 12, &custody).map(|c| c.len()), Ok(2));
        let other_index = vec![ResponseItem::DataColumnSidecar(column(10, 2))];
        assert_eq!(
            check_columns(other_index, 10, 12, &custody).map(|_| ()),
            Err(SyncError::UnexpectedColumn { slot: 10, index: 2 })
        );
        let out_of_range = vec![ResponseItem::DataColumnSidecar(column(12, 1))];
        assert_eq!(
            check_columns(out_of_range, 10, 12, &custody).map(|_| ()),
            Err(SyncError::UnexpectedColumn { slot: 12, index: 1 })
        );
    }

    #[test]
    fn bad_data_is_the_peers_fault_and_our_failures_are_not() {
        let peers_fault = [
            SyncError::WrongItem,
            SyncError::MissingColumns {
                block_root: Root::ZERO,
                missing: 1,
            },
            SyncError::DataUnavailable {
                slot: 1,
                source: InternalError::new(fork_choice::AvailabilityError::NotRetrieved),
            },
            SyncError::InvalidBlock {
                slot: 1,
                source: InternalError::new(ChainError::InvalidPayload(Root::ZERO)),
            },
            SyncError::UnknownParent {
                slot: 1,
                parent: Root::ZERO,
            },
        ];
        assert!(peers_fault.iter().all(|e| e.blames(true)));
        let missing = SyncError::MissingColumns {
            block_root: Root::ZERO,
            missing: 1,
        };
        assert!(
            !missing.blames(false),
            "a peer that does not custody every column is not blamed for missing ones"
        );
        let not_the_peers = [
            SyncError::Internal(InternalError::new(ChainError::EmptyStore)),
            SyncError::RequestFailed(InternalError::new(RpcError::Timeout)),
            SyncError::Dropped,
            SyncError::ErrorResponse {
                code: 3,
                message: "unavailable".into(),
            },
        ];
        assert!(!not_the_peers.iter().any(|e| e.blames(true)));
    }
}
