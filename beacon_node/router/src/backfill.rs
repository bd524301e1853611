//! Backfill: after a checkpoint sync, the finalized blocks before the anchor, fetched newest
//! first down to the spec's block-request horizon (or genesis), with the node's custody columns
//! inside the column-request window.
//!
//! Backfill runs while range sync is idle (the head synced) and downloads batches of
//! `BeaconBlocksByRange` (and `DataColumnSidecarsByRange` for the custody columns of slots in
//! the window) from peers whose Status says they hold the slots, several batches ahead, and
//! processes them newest first on the processor's backfill pool, where the chain imports each
//! (`BeaconChain::import_historical_block_batch`: hash chain, proposer signatures, custody
//! columns, one store batch). A peer whose batch does not chain or verify is penalised and the
//! batch fetched from another; a failure of ours (the store, the head state) blames nobody.
//!
//! A peer may leave out blocks at the old end of its range (slots it claims empty); the next
//! batch then does not chain to the expected parent through no fault of its own peer. Such a
//! batch is not blamed: it is fetched again with its range reaching up to the oldest stored
//! block, and blamed only when it still does not chain. A gap longer than one request can
//! carry is fetched as batches of its own, processed before the batch.
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyrange, fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1,
//! phase0/weak-subjectivity.md

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use beacon_chain::InternalError;
use beacon_chain::historical_blocks::{HistoricalBatch, HistoricalBlockError, HistoricalFault};
use beacon_processor::{Task, WorkKind};
use networking::rpc::{
    BlocksByRangeRequest, DataColumnsByRangeRequest, Request, Response, StatusMessage,
};
use networking::{OutboundRequestId, PeerAction, PeerId, RpcError};
use store::OldestBlock;
use tokio::sync::watch;
use types::{ChainSpec, DataColumnSidecar, Epoch, EthSpec, ForkName, SignedBeaconBlock, Slot};

use crate::gossip::submit;
use crate::sync::{SyncError, check_blocks, check_columns};
use crate::{Internal, Processor, Router, RouterConfig, SyncState};

/// The first slot backfill fetches blocks for: genesis with `genesis_backfill`, else the start
/// of the oldest epoch peers must serve blocks of,
/// `max(GENESIS_EPOCH, current_epoch - MIN_EPOCHS_FOR_BLOCK_REQUESTS)`.
///
/// [spec]: phase0/p2p-interface.md#beaconblocksbyrange
pub fn backfill_target_slot<E: EthSpec>(
    spec: &ChainSpec,
    current_epoch: Epoch,
    genesis_backfill: bool,
) -> Slot {
    if genesis_backfill {
        return 0;
    }
    current_epoch
        .saturating_sub(spec.min_epochs_for_block_requests)
        .saturating_mul(E::slots_per_epoch())
}

/// The first slot whose data columns backfill fetches: the start of
/// `max(FULU_FORK_EPOCH, current_epoch - MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS)`;
/// `None` when Fulu is not scheduled.
///
/// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1
pub fn column_window_start_slot<E: EthSpec>(
    spec: &ChainSpec,
    current_epoch: Epoch,
) -> Option<Slot> {
    let fulu = spec.fork_epoch(ForkName::Fulu)?;
    let epoch = current_epoch
        .saturating_sub(spec.min_epochs_for_data_column_sidecars_requests)
        .max(fulu);
    Some(epoch.saturating_mul(E::slots_per_epoch()))
}

/// Why a backfill batch was refused.
#[derive(Debug, thiserror::Error)]
pub enum BackfillError {
    /// The response itself was refused (range, order, item types, columns not asked for).
    #[error(transparent)]
    Response(#[from] SyncError),
    /// The chain did not import the batch: its blocks or columns do not verify (the peer's
    /// fault), or our store or head state failed (nobody's).
    #[error(transparent)]
    Import(#[from] HistoricalBlockError),
    /// The processor dropped the batch (shutting down, queue full).
    #[error("the processor dropped the batch")]
    Dropped,
}

impl BackfillError {
    /// Whether the peer that served the batch is at fault. A newest block that does not chain
    /// is its fault only when the batch reached up to the oldest stored block (`covers`);
    /// missing columns only when it custodies every column.
    fn blames(&self, covers: bool, full_custody: bool) -> bool {
        match self {
            BackfillError::Response(e) => e.blames(full_custody),
            BackfillError::Import(HistoricalBlockError::NotChained { newest, .. }) => {
                covers || !newest
            }
            BackfillError::Import(HistoricalBlockError::MissingColumns { .. }) => full_custody,
            BackfillError::Import(e) => e.fault() == HistoricalFault::Data,
            BackfillError::Dropped => false,
        }
    }

    fn label(&self) -> &'static str {
        use HistoricalBlockError as H;
        match self {
            BackfillError::Response(SyncError::ErrorResponse { .. }) => "error_response",
            BackfillError::Response(SyncError::RequestFailed(_)) => "request_failed",
            BackfillError::Response(_) => "malformed",
            BackfillError::Import(H::NotChained { .. } | H::MissingGenesis { .. }) => "not_chained",
            BackfillError::Import(
                H::UnknownProposer { .. } | H::MalformedSignature { .. } | H::BadSignatures { .. },
            ) => "bad_signature",
            BackfillError::Import(
                H::MissingColumns { .. } | H::UnexpectedColumn { .. } | H::BadColumn { .. },
            ) => "bad_columns",
            BackfillError::Import(H::HeadState(_) | H::Store(_)) => "internal",
            BackfillError::Dropped => "dropped",
        }
    }
}

/// A processed batch, back to the state machine: the blocks stored and the new oldest block.
#[derive(Debug)]
pub(crate) struct BatchOutcome {
    batch_id: u64,
    result: Result<(usize, OldestBlock), BackfillError>,
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
        covers: bool,
    },
}

/// The slots `[start, end)`.
struct Batch<E: EthSpec> {
    id: u64,
    start: Slot,
    end: Slot,
    attempts: u32,
    failed_peers: HashSet<PeerId>,
    /// The first slot whose columns were asked for in the current download.
    columns_from: Option<Slot>,
    state: BatchState<E>,
}

/// The backfill state machine, owned by the router's event loop.
pub(crate) struct BackfillSync<E: EthSpec> {
    router: Arc<Router<E>>,
    sync_state: watch::Receiver<SyncState>,
    /// Every relevant peer's Status.
    peers: HashMap<PeerId, (StatusMessage, usize)>,
    custody_groups: HashMap<PeerId, u64>,
    /// Newest first: the front is processed next.
    batches: VecDeque<Batch<E>>,
    /// The end of the next batch to create; `None` until backfill starts.
    next_end: Option<Slot>,
    next_batch_id: u64,
    requests: HashMap<OutboundRequestId, (u64, bool)>,
    /// The oldest block stored, as last read or written.
    oldest: Option<OldestBlock>,
    genesis_backfill: bool,
    batch_slots: u64,
    batches_ahead: usize,
    max_attempts: u32,
    complete: bool,
    /// When progress was last logged, and the oldest slot then.
    progress: Option<(std::time::Instant, Slot)>,
}

impl<E: EthSpec> BackfillSync<E> {
    pub(crate) fn new(
        router: Arc<Router<E>>,
        config: &RouterConfig,
        sync_state: watch::Receiver<SyncState>,
    ) -> Self {
        let oldest = match router.chain.store().oldest_block() {
            Ok(oldest) => oldest,
            Err(error) => {
                tracing::warn!(%error, "cannot read the oldest stored block: backfill off");
                None
            }
        };
        Self {
            router,
            sync_state,
            peers: HashMap::new(),
            custody_groups: HashMap::new(),
            batches: VecDeque::new(),
            next_end: None,
            next_batch_id: 0,
            requests: HashMap::new(),
            complete: oldest.is_none(),
            oldest,
            genesis_backfill: config.genesis_backfill,
            batch_slots: config.sync_batch_slots.max(1),
            batches_ahead: config.sync_batches_ahead.max(1),
            max_attempts: config.sync_max_batch_attempts.max(1),
            progress: None,
        }
    }

    /// Whether `request_id` is one of backfill's.
    pub(crate) fn owns(&self, request_id: &OutboundRequestId) -> bool {
        self.requests.contains_key(request_id)
    }

    /// A relevant peer's Status.
    pub(crate) fn add_peer(
        &mut self,
        peer: PeerId,
        status: StatusMessage,
        processor: &Processor<E>,
    ) {
        let downloads = self.peers.get(&peer).map_or(0, |(_, d)| *d);
        self.peers.insert(peer, (status, downloads));
        self.drive(processor);
    }

    /// A peer's metadata told its custody group count.
    pub(crate) fn set_custody_group_count(&mut self, peer: PeerId, count: u64) {
        self.custody_groups.insert(peer, count);
    }

    fn is_full_custody(&self, peer: &PeerId) -> bool {
        self.custody_groups
            .get(peer)
            .is_some_and(|&count| count >= self.router.chain.spec().number_of_custody_groups)
    }

    /// A peer left: its downloads are fetched again elsewhere.
    pub(crate) fn remove_peer(&mut self, peer: &PeerId) {
        self.peers.remove(peer);
        self.custody_groups.remove(peer);
        let mut dropped = HashSet::new();
        for batch in &mut self.batches {
            if let BatchState::Downloading { peer: p, .. } = &batch.state
                && p == peer
            {
                batch.state = BatchState::AwaitingDownload;
                dropped.insert(batch.id);
            }
        }
        self.requests.retain(|_, (id, _)| !dropped.contains(id));
    }

    pub(crate) fn on_tick(&mut self, processor: &Processor<E>) {
        self.drive(processor);
        self.log_progress();
    }

    fn target_slot(&self) -> Slot {
        backfill_target_slot::<E>(
            self.router.chain.spec(),
            crate::status::current_epoch(&self.router),
            self.genesis_backfill,
        )
    }

    /// Once a slot while backfilling: peers, slots left, speed.
    fn log_progress(&mut self) {
        let running = !self.complete && *self.sync_state.borrow() == SyncState::Synced;
        let Some(oldest) = self.oldest.filter(|_| running) else {
            self.progress = None;
            return;
        };
        let now = std::time::Instant::now();
        let Some((since, from)) = self.progress else {
            self.progress = Some((now, oldest.slot));
            return;
        };
        let slot_duration =
            std::time::Duration::from_millis(self.router.chain.spec().slot_duration_ms);
        let elapsed = now.duration_since(since);
        if elapsed < slot_duration {
            return;
        }
        self.progress = Some((now, oldest.slot));
        let remaining = oldest.slot.saturating_sub(self.target_slot());
        let speed = from.saturating_sub(oldest.slot) as f64 / elapsed.as_secs_f64();
        let eta = if speed > 0.0 {
            crate::sync::format_duration(remaining as f64 / speed)
        } else {
            "unknown".to_owned()
        };
        tracing::info!(
            "Backfilling  peers: {}  remaining: {} slots  speed: {:.1} slots/s  ETA: {}",
            self.peers.len(),
            crate::sync::with_separators(remaining),
            speed,
            eta,
        );
    }

    /// Creates, downloads and processes batches as far as it can go now; notes completion.
    fn drive(&mut self, processor: &Processor<E>) {
        if self.complete {
            return;
        }
        let Some(oldest) = self.oldest else {
            return;
        };
        let target = self.target_slot();
        let metrics = &self.router.metrics;
        if oldest.is_genesis() || oldest.slot <= target {
            self.finish(oldest);
            return;
        }
        metrics
            .backfill_slots_remaining
            .set(i64::try_from(oldest.slot - target).unwrap_or(i64::MAX));
        // Paused while the head is behind: range sync has the peers' bandwidth.
        if *self.sync_state.borrow() != SyncState::Synced {
            return;
        }
        if self.next_end.is_none() {
            tracing::info!(from = oldest.slot, to = target, "backfill starts");
            self.next_end = Some(oldest.slot);
        }
        while self.batches.len() < self.batches_ahead {
            let Some(end) = self.next_end.filter(|end| *end > target) else {
                break;
            };
            let start = end.saturating_sub(self.batch_slots).max(target);
            let batch = self.new_batch(start, end);
            self.batches.push_back(batch);
            self.next_end = Some(start);
        }
        for index in 0..self.batches.len() {
            if matches!(self.batches[index].state, BatchState::AwaitingDownload) {
                self.download(index);
            }
        }
        self.process_next(processor);
        if self.batches.is_empty() && self.next_end.is_some_and(|end| end <= target) {
            // Every range down to the target was processed; the slots between it and the
            // oldest block were claimed empty by the peer of a batch that reached them.
            self.finish(oldest);
        }
    }

    fn finish(&mut self, oldest: OldestBlock) {
        if !self.complete {
            tracing::info!(oldest = oldest.slot, "backfill complete");
        }
        self.complete = true;
        self.router.metrics.backfill_slots_remaining.set(0);
        self.batches.clear();
        self.requests.clear();
    }

    /// Sends batch `index`'s requests to the least busy peer holding its slots, preferring
    /// peers that have not failed it and custody every column.
    fn download(&mut self, index: usize) {
        let batch = &self.batches[index];
        let exhausted = batch.attempts >= self.max_attempts;
        let pick = |exclude_failed: bool| {
            self.peers
                .iter()
                .filter(|(_, (status, _))| {
                    status.earliest_available_slot <= batch.start && status.head_slot >= batch.end
                })
                .filter(|(id, _)| !exclude_failed || !batch.failed_peers.contains(*id))
                .min_by_key(|(id, (_, downloads))| (!self.is_full_custody(id), *downloads))
                .map(|(id, _)| *id)
        };
        // A batch that failed too often waits for a peer that has not failed it.
        let picked = if exhausted {
            pick(true)
        } else {
            pick(true).or_else(|| pick(false))
        };
        let Some(peer) = picked else {
            return;
        };
        let (start, end) = (batch.start, batch.end);
        let network = &self.router.network;
        let blocks_request = network.send_request(
            peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: start,
                count: end - start,
                step: 1,
            }),
        );
        let columns_start = self.columns_start(start, end);
        let columns_request = columns_start.map(|from| {
            network.send_request(
                peer,
                Request::DataColumnsByRange(DataColumnsByRangeRequest {
                    start_slot: from,
                    count: end - from,
                    columns: self.router.custody.iter().copied().collect(),
                }),
            )
        });
        let id = batch.id;
        self.requests.insert(blocks_request, (id, false));
        if let Some(request) = columns_request {
            self.requests.insert(request, (id, true));
        }
        if let Some((_, downloads)) = self.peers.get_mut(&peer) {
            *downloads += 1;
        }
        self.batches[index].columns_from = columns_start;
        self.batches[index].state = BatchState::Downloading {
            peer,
            blocks: None,
            columns: columns_request.is_none().then(Vec::new),
        };
    }

    /// The first slot of `[start, end)` whose columns are fetched (in the column window, at
    /// Fulu or later, with custody columns); `None` when none are.
    fn columns_start(&self, start: Slot, end: Slot) -> Option<Slot> {
        if self.router.custody.is_empty() {
            return None;
        }
        let window = column_window_start_slot::<E>(
            self.router.chain.spec(),
            crate::status::current_epoch(&self.router),
        )?;
        let from = start.max(window);
        (from < end).then_some(from)
    }

    fn finish_download(&mut self, peer: &PeerId) {
        if let Some((_, downloads)) = self.peers.get_mut(peer) {
            *downloads = downloads.saturating_sub(1);
        }
    }

    /// A batch failed: the peer penalised when at fault, the batch fetched again.
    fn fail_batch(&mut self, batch_id: u64, peer: PeerId, covers: bool, error: &BackfillError) {
        self.router
            .metrics
            .backfill_batches
            .with_label_values(&[error.label()])
            .inc();
        let blamed = error.blames(covers, self.is_full_custody(&peer));
        tracing::debug!(%peer, batch = batch_id, %error, blamed, "backfill batch failed");
        if blamed {
            self.router
                .network
                .report_peer(peer, PeerAction::LowTolerance);
        }
        let oldest_slot = self.oldest.map(|o| o.slot);
        let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) else {
            return;
        };
        // Our own failures spend no attempt and mark no peer.
        let ours = match &error {
            BackfillError::Import(e) => e.fault() == HistoricalFault::Local,
            BackfillError::Dropped => true,
            BackfillError::Response(_) => false,
        };
        if !ours {
            batch.attempts += 1;
            if blamed || matches!(error, BackfillError::Response(_)) {
                batch.failed_peers.insert(peer);
            }
        }
        // Not chained through a gap the batch did not reach: it reaches it next time (within
        // one request's block limit). A gap longer than that (a peer claimed more slots empty
        // than one request covers) is fetched as batches of its own, processed first: then
        // the batch chains to their oldest block.
        let mut gap = None;
        if !blamed
            && matches!(
                error,
                BackfillError::Import(HistoricalBlockError::NotChained { .. })
            )
            && let Some(oldest_slot) = oldest_slot
        {
            let max = self.router.chain.spec().max_request_blocks_deneb.max(1);
            batch.end = oldest_slot.min(batch.start.saturating_add(max));
            gap = (batch.end < oldest_slot).then_some((batch.end, oldest_slot));
        }
        batch.state = BatchState::AwaitingDownload;
        self.requests.retain(|_, (id, _)| *id != batch_id);
        if let Some((start, end)) = gap {
            self.refetch_gap(start, end);
        }
    }

    /// A batch of the slots `[start, end)` to download, with the next id.
    fn new_batch(&mut self, start: Slot, end: Slot) -> Batch<E> {
        let id = self.next_batch_id;
        self.next_batch_id += 1;
        Batch {
            id,
            start,
            end,
            attempts: 0,
            failed_peers: HashSet::new(),
            columns_from: None,
            state: BatchState::AwaitingDownload,
        }
    }

    /// Puts batches for the slots `[start, end)` (between a batch and the oldest stored block)
    /// at the front, newest first.
    fn refetch_gap(&mut self, start: Slot, mut end: Slot) {
        tracing::debug!(start, end, "backfill refetches a gap no batch covers");
        let mut gap = Vec::new();
        while end > start {
            let batch_start = end.saturating_sub(self.batch_slots).max(start);
            gap.push(self.new_batch(batch_start, end));
            end = batch_start;
        }
        for batch in gap.into_iter().rev() {
            self.batches.push_front(batch);
        }
    }

    /// A response to one of backfill's requests.
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
            self.fail_batch(batch_id, peer, false, &error);
        }
        self.drive(processor);
    }

    fn accept_response(
        &mut self,
        batch_id: u64,
        is_columns: bool,
        response: Response<E>,
    ) -> Result<(), BackfillError> {
        let custody = self.router.custody.clone();
        let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) else {
            return Ok(());
        };
        let (start, end) = (batch.start, batch.end);
        let BatchState::Downloading {
            peer,
            blocks,
            columns,
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
            }
            .into());
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

    /// One of backfill's requests failed (timeout, refused, our own rate limit).
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
        self.requests.retain(|_, (id, _)| *id != batch_id);
        if matches!(error, RpcError::RateLimited(_)) {
            // Our own quota: nobody's fault, no attempt spent; asked again at the next tick.
            if let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) {
                batch.state = BatchState::AwaitingDownload;
            }
            return;
        }
        let error = BackfillError::Response(SyncError::RequestFailed(InternalError::new(error)));
        self.fail_batch(batch_id, peer, false, &error);
        self.drive(processor);
    }

    /// Starts processing the newest batch when it is downloaded and nothing is processing.
    fn process_next(&mut self, processor: &Processor<E>) {
        let Some(oldest) = self.oldest else {
            return;
        };
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
        let covers = batch.end >= oldest.slot;
        batch.state = BatchState::Processing { peer, covers };
        let batch_id = batch.id;
        let input = HistoricalBatch {
            blocks,
            columns,
            oldest,
            start: batch.start,
            columns_from: batch.columns_from,
        };
        let on_run = self.router.clone();
        let on_drop = self.router.clone();
        let task = Task::new(WorkKind::BackfillSegment, move |ctx| {
            // The chain imports it (hash chain, proposer signatures, custody columns, one
            // store batch); its error says whom to blame.
            let result = on_run
                .chain
                .import_historical_block_batch(input, &on_run.custody, ctx.pool())
                .map_err(BackfillError::Import);
            on_run.send_internal(Internal::BackfillProcessed(BatchOutcome {
                batch_id,
                result,
            }));
        })
        .on_drop(move |_| {
            on_drop.send_internal(Internal::BackfillProcessed(BatchOutcome {
                batch_id,
                result: Err(BackfillError::Dropped),
            }));
        });
        submit(processor, task);
    }

    /// A batch was stored or refused.
    pub(crate) fn on_batch_processed(&mut self, outcome: BatchOutcome, processor: &Processor<E>) {
        let Some(batch) = self.batches.iter().find(|b| b.id == outcome.batch_id) else {
            return;
        };
        let BatchState::Processing { peer, covers } = batch.state else {
            return;
        };
        match outcome.result {
            Ok((stored, oldest)) => {
                self.router
                    .metrics
                    .backfill_batches
                    .with_label_values(&["imported"])
                    .inc();
                tracing::debug!(
                    start = batch.start,
                    end = batch.end,
                    stored,
                    oldest = oldest.slot,
                    "backfill batch stored"
                );
                self.oldest = Some(oldest);
                self.router.lower_earliest_available_slot(oldest.slot);
                self.batches.retain(|b| b.id != outcome.batch_id);
            }
            Err(error) => self.fail_batch(outcome.batch_id, peer, covers, &error),
        }
        self.drive(processor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec as E;
    use types::Root;

    #[test]
    fn the_target_is_the_block_request_horizon_or_genesis() {
        let spec = ChainSpec::mainnet();
        let horizon = spec.min_epochs_for_block_requests;
        assert_eq!(horizon, 33_024);
        let spe = <types::MainnetEthSpec as EthSpec>::slots_per_epoch();
        let epoch = horizon + 100;
        assert_eq!(
            backfill_target_slot::<types::MainnetEthSpec>(&spec, epoch, false),
            100 * spe
        );
        assert_eq!(
            backfill_target_slot::<types::MainnetEthSpec>(&spec, epoch, true),
            0
        );
        assert_eq!(
            backfill_target_slot::<types::MainnetEthSpec>(&spec, horizon - 1, false),
            0,
            "a chain younger than the horizon is backfilled to genesis"
        );
    }

    #[test]
    fn columns_are_fetched_inside_their_window_from_fulu_on() {
        let mut spec = ChainSpec::minimal();
        spec.fulu_fork_epoch = 10;
        let window = spec.min_epochs_for_data_column_sidecars_requests;
        let spe = E::slots_per_epoch();
        assert_eq!(
            column_window_start_slot::<E>(&spec, 12),
            Some(10 * spe),
            "not before Fulu"
        );
        assert_eq!(
            column_window_start_slot::<E>(&spec, window + 50),
            Some(50 * spe)
        );
        spec.fulu_fork_epoch = u64::MAX;
        assert_eq!(
            column_window_start_slot::<E>(&spec, 12),
            None,
            "Fulu not scheduled"
        );
    }

    #[test]
    fn a_gap_left_by_the_next_batch_is_not_blamed_until_the_batch_reaches_it() {
        let newest = BackfillError::Import(HistoricalBlockError::NotChained {
            slot: 7,
            root: Root::ZERO,
            expected: Root::repeat_byte(1),
            newest: true,
        });
        assert!(
            !newest.blames(false, true),
            "through a gap it did not reach"
        );
        assert!(
            newest.blames(true, true),
            "its range reached the oldest block"
        );
        let inner = BackfillError::Import(HistoricalBlockError::NotChained {
            slot: 6,
            root: Root::ZERO,
            expected: Root::repeat_byte(1),
            newest: false,
        });
        assert!(inner.blames(false, true), "its own blocks do not link");
        let missing = BackfillError::Import(HistoricalBlockError::MissingColumns {
            block_root: Root::ZERO,
            missing: 3,
        });
        assert!(missing.blames(true, true));
        assert!(!missing.blames(true, false));
        let store = store::StoreError::MissingBlock(Root::ZERO);
        assert!(!BackfillError::Import(HistoricalBlockError::Store(store)).blames(true, true));
        let signatures = HistoricalBlockError::BadSignatures {
            count: 2,
            from_slot: 5,
        };
        assert!(BackfillError::Import(signatures).blames(false, false));
    }
}
