//! The batch downloader range sync and backfill share: batches of slots, each fetched from one
//! peer as `BeaconBlocksByRange` with the custody columns by `DataColumnSidecarsByRange` and,
//! for Gloas slots, the payload envelopes by `ExecutionPayloadEnvelopesByRange`, several
//! downloading at once; the responses checked against their batch; a failed batch
//! fetched again (from a peer that has not failed it first) with the serving peer penalised
//! only when the failure is its own. Each user says which peers serve a batch, which of its
//! slots have columns, how a failure counts, and what happens to a downloaded batch; lookups
//! reuse the penalty rule ([`BatchDownloader::report`]).
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyrange, fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1,
//! gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use networking::rpc::{
    BlocksByRangeRequest, DataColumnsByRangeRequest, ExecutionPayloadEnvelopesByRangeRequest,
    Request, Response, ResponseItem, StatusMessage,
};
use networking::{OutboundRequestId, PeerAction, PeerId, RpcError};
use prometheus::IntCounterVec;
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock, Slot};

use crate::{SyncConfig, SyncContext, SyncError};

/// A batch's blocks, in slot order.
pub(crate) type Blocks<E> = Vec<Arc<SignedBeaconBlock<E>>>;
/// A batch's columns.
pub(crate) type Columns<E> = Vec<Arc<DataColumnSidecar<E>>>;
/// A batch's payload envelopes (Gloas), in the order of their blocks.
pub(crate) type Envelopes<E> = Vec<Arc<SignedExecutionPayloadEnvelope<E>>>;

/// Which request of a batch a response answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// `BeaconBlocksByRange`.
    Blocks,
    /// `DataColumnSidecarsByRange`.
    Columns,
    /// `ExecutionPayloadEnvelopesByRange`.
    Envelopes,
}

/// A batch's download, complete: its blocks, columns and envelopes (each envelope of one of
/// the blocks).
pub(crate) struct Downloaded<E: EthSpec> {
    pub(crate) blocks: Blocks<E>,
    pub(crate) columns: Columns<E>,
    pub(crate) envelopes: Envelopes<E>,
}

/// Where a batch is.
pub(crate) enum BatchState<E: EthSpec> {
    /// Waiting for a peer.
    AwaitingDownload,
    /// Requested from `peer`: the parts that came back so far (a part not asked for is
    /// there, empty, from the start).
    Downloading {
        peer: PeerId,
        blocks: Option<Blocks<E>>,
        columns: Option<Columns<E>>,
        envelopes: Option<Envelopes<E>>,
    },
    /// Downloaded from `peer`, waiting for its turn.
    AwaitingProcessing {
        peer: PeerId,
        downloaded: Downloaded<E>,
    },
    /// Being imported; `peer` served it.
    Processing { peer: PeerId },
}

/// The slots `[start, end)`.
pub(crate) struct Batch<E: EthSpec> {
    pub(crate) id: u64,
    pub(crate) start: Slot,
    pub(crate) end: Slot,
    /// Failed downloads and imports that counted ([`BatchFailure::spends_attempt`]).
    pub(crate) attempts: u32,
    /// Peers that failed it: asked again only when no other peer serves it.
    pub(crate) failed_peers: HashSet<PeerId>,
    /// The first slot whose columns were asked for in the current download.
    pub(crate) columns_from: Option<Slot>,
    pub(crate) state: BatchState<E>,
}

/// The first slots a batch's columns and envelopes are asked for from (`None`: not asked for).
#[derive(Debug, Clone, Copy)]
struct RequestStarts {
    columns: Option<Slot>,
    envelopes: Option<Slot>,
}

/// A peer the downloader may ask: its Status and how many batches it is serving now.
pub(crate) struct SyncPeer {
    pub(crate) status: StatusMessage,
    pub(crate) downloads: usize,
}

/// How a failed batch counts, by the error that failed it.
pub(crate) trait BatchFailure: std::fmt::Display {
    /// The `result` label of the user's batches metric.
    fn label(&self) -> &'static str;
    /// Whether the failure spends one of the batch's attempts.
    fn spends_attempt(&self) -> bool;
    /// Whether the serving peer is passed over for the batch's next download (`blamed`: it
    /// was penalised for the failure).
    fn marks_peer(&self, blamed: bool) -> bool;
}

/// Batch sizes and limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchLimits {
    /// Slots per batch.
    pub(crate) slots: u64,
    /// Batches downloading or downloaded ahead of the one being imported.
    pub(crate) ahead: usize,
    /// Attempts after which a batch waits for a peer that has not failed it.
    pub(crate) max_attempts: u32,
}

impl BatchLimits {
    /// The limits `config` sets (each at least one).
    pub(crate) fn of(config: &SyncConfig) -> Self {
        Self {
            slots: config.batch_slots.max(1),
            ahead: config.batches_ahead.max(1),
            max_attempts: config.max_batch_attempts.max(1),
        }
    }
}

/// What became of a request that failed.
pub(crate) enum RequestFailure {
    /// The request was not the downloader's.
    NotOurs,
    /// Our own rate limit for the peer: the batch waits for the next download, no attempt
    /// spent, nobody's fault.
    RateLimited,
    /// The batch `0` failed with `1` (networking penalised a timeout or malformed response).
    Failed(u64, SyncError),
}

/// A user of the downloader (range sync, backfill): what it does with a failed download and
/// how it moves on; the network's answers reach it through the provided methods.
pub(crate) trait BatchSync<E: EthSpec> {
    /// Its downloader.
    fn downloader(&mut self) -> &mut BatchDownloader<E>;

    /// The download of batch `batch_id` from `peer` failed: refused, or the request failed.
    fn download_failed(&mut self, batch_id: u64, peer: PeerId, error: SyncError);

    /// Creates, downloads and imports batches as far as it can go now.
    fn advance(&mut self);

    /// A response to a request: stored (the batch imported as soon as it is complete and
    /// first in line) or refused.
    fn on_response(&mut self, peer: PeerId, request_id: OutboundRequestId, response: Response<E>) {
        match self.downloader().on_response(peer, request_id, response) {
            None => return,
            Some(Ok(())) => {}
            Some(Err((batch_id, error))) => self.download_failed(batch_id, peer, error),
        }
        self.advance();
    }

    /// A request failed (timeout, stream refused, our own rate limit).
    fn on_request_failed(&mut self, peer: PeerId, request_id: OutboundRequestId, error: RpcError) {
        if let RequestFailure::Failed(batch_id, error) =
            self.downloader().on_request_failed(peer, request_id, error)
        {
            self.download_failed(batch_id, peer, error);
            self.advance();
        }
    }
}

/// The batches of one user (range sync or backfill), their requests and their peers.
pub(crate) struct BatchDownloader<E: EthSpec> {
    ctx: Arc<SyncContext<E>>,
    /// The user, for logs.
    what: &'static str,
    /// The user's batches metric, by result.
    results: IntCounterVec,
    pub(crate) limits: BatchLimits,
    /// The peers that may serve batches.
    pub(crate) peers: HashMap<PeerId, SyncPeer>,
    /// Each connected peer's custody group count, from its metadata.
    custody_groups: HashMap<PeerId, u64>,
    /// In processing order: the front is imported next.
    pub(crate) batches: VecDeque<Batch<E>>,
    next_batch_id: u64,
    /// Our outstanding requests: the batch and the part each asks for.
    requests: HashMap<OutboundRequestId, (u64, Part)>,
}

impl<E: EthSpec> BatchDownloader<E> {
    pub(crate) fn new(
        ctx: Arc<SyncContext<E>>,
        what: &'static str,
        results: IntCounterVec,
        limits: BatchLimits,
    ) -> Self {
        Self {
            ctx,
            what,
            results,
            limits,
            peers: HashMap::new(),
            custody_groups: HashMap::new(),
            batches: VecDeque::new(),
            next_batch_id: 0,
            requests: HashMap::new(),
        }
    }

    /// Whether `request_id` is one of this downloader's.
    pub(crate) fn owns(&self, request_id: &OutboundRequestId) -> bool {
        self.requests.contains_key(request_id)
    }

    /// A batch of the slots `[start, end)` to download, with the next id.
    pub(crate) fn new_batch(&mut self, start: Slot, end: Slot) -> Batch<E> {
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

    /// Adds `peer` or updates its Status (its downloads kept).
    pub(crate) fn set_peer(&mut self, peer: PeerId, status: StatusMessage) {
        let downloads = self.peers.get(&peer).map_or(0, |p| p.downloads);
        self.peers.insert(peer, SyncPeer { status, downloads });
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
            .is_some_and(|&count| count >= self.ctx.chain.spec().number_of_custody_groups)
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

    /// Forgets every batch and request (a restart or the end).
    pub(crate) fn clear(&mut self) {
        self.batches.clear();
        self.requests.clear();
        for p in self.peers.values_mut() {
            p.downloads = 0;
        }
    }

    /// Sends the requests of every batch waiting for a download to the least busy peer that
    /// `serves` it, peers custodying every column first, one that has not failed the batch
    /// first; a batch that failed `max_attempts` times waits for a peer that has not. The
    /// columns are asked for from the slot `columns_from` gives, when it gives one, and the
    /// payload envelopes (Gloas) from the slot `envelopes_from` gives, when it gives one.
    pub(crate) fn download_waiting(
        &mut self,
        serves: impl Fn(&StatusMessage, &Batch<E>) -> bool,
        columns_from: impl Fn(Slot, Slot) -> Option<Slot>,
        envelopes_from: impl Fn(Slot, Slot) -> Option<Slot>,
    ) {
        for index in 0..self.batches.len() {
            if !matches!(self.batches[index].state, BatchState::AwaitingDownload) {
                continue;
            }
            let batch = &self.batches[index];
            let pick = |exclude_failed: bool| {
                self.peers
                    .iter()
                    .filter(|(_, p)| serves(&p.status, batch))
                    .filter(|(id, _)| !exclude_failed || !batch.failed_peers.contains(*id))
                    .min_by_key(|(id, p)| (!self.is_full_custody(id), p.downloads))
                    .map(|(id, _)| *id)
            };
            let picked = if batch.attempts >= self.limits.max_attempts {
                pick(true)
            } else {
                pick(true).or_else(|| pick(false))
            };
            let Some(peer) = picked else {
                continue;
            };
            let (id, start, end) = (batch.id, batch.start, batch.end);
            let from = RequestStarts {
                columns: columns_from(start, end),
                envelopes: envelopes_from(start, end),
            };
            self.send_requests(index, id, peer, start, end, from);
        }
    }

    fn send_requests(
        &mut self,
        index: usize,
        id: u64,
        peer: PeerId,
        start: Slot,
        end: Slot,
        from: RequestStarts,
    ) {
        let RequestStarts {
            columns: columns_from,
            envelopes: envelopes_from,
        } = from;
        let network = &self.ctx.network;
        let blocks_request = network.send_request(
            peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: start,
                count: end - start,
                step: 1,
            }),
        );
        let columns_request = columns_from.map(|from| {
            network.send_request(
                peer,
                Request::DataColumnsByRange(DataColumnsByRangeRequest {
                    start_slot: from,
                    count: end - from,
                    columns: self.ctx.custody.iter().copied().collect(),
                }),
            )
        });
        let envelopes_request = envelopes_from.filter(|from| *from < end).map(|from| {
            network.send_request(
                peer,
                Request::ExecutionPayloadEnvelopesByRange(
                    ExecutionPayloadEnvelopesByRangeRequest {
                        start_slot: from,
                        count: end - from,
                    },
                ),
            )
        });
        self.requests.insert(blocks_request, (id, Part::Blocks));
        if let Some(request) = columns_request {
            self.requests.insert(request, (id, Part::Columns));
        }
        if let Some(request) = envelopes_request {
            self.requests.insert(request, (id, Part::Envelopes));
        }
        if let Some(p) = self.peers.get_mut(&peer) {
            p.downloads += 1;
        }
        let batch = &mut self.batches[index];
        batch.columns_from = columns_from;
        batch.state = BatchState::Downloading {
            peer,
            blocks: None,
            columns: columns_request.is_none().then(Vec::new),
            envelopes: envelopes_request.is_none().then(Vec::new),
        };
    }

    fn finish_download(&mut self, peer: &PeerId) {
        if let Some(p) = self.peers.get_mut(peer) {
            p.downloads = p.downloads.saturating_sub(1);
        }
    }

    /// A response to a request: `None` when it is not ours; else the batch's response stored
    /// (the batch awaits processing once both halves are in) or why it was refused.
    pub(crate) fn on_response(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        response: Response<E>,
    ) -> Option<Result<(), (u64, SyncError)>> {
        let (batch_id, part) = self.requests.remove(&request_id)?;
        Some(
            self.accept_response(batch_id, part, response)
                .map_err(|error| {
                    self.finish_download(&peer);
                    (batch_id, error)
                }),
        )
    }

    /// Checks a response against its batch and stores it; every part there, the envelopes
    /// matched to their blocks ([`match_envelopes`]), the batch waits for processing.
    fn accept_response(
        &mut self,
        batch_id: u64,
        part: Part,
        response: Response<E>,
    ) -> Result<(), SyncError> {
        let custody = &self.ctx.custody;
        let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) else {
            return Ok(());
        };
        let (start, end) = (batch.start, batch.end);
        let BatchState::Downloading {
            peer,
            blocks,
            columns,
            envelopes,
        } = &mut batch.state
        else {
            return Ok(());
        };
        let peer = *peer;
        if let Some(error) = response.error
            && response.items.is_empty()
        {
            return Err(SyncError::ErrorResponse(error));
        }
        match part {
            Part::Blocks => *blocks = Some(check_blocks(response.items, start, end)?),
            Part::Columns => *columns = Some(check_columns(response.items, start, end, custody)?),
            Part::Envelopes => *envelopes = Some(check_envelope_items(response.items)?),
        }
        if blocks.is_some() && columns.is_some() && envelopes.is_some() {
            let blocks = blocks.take().unwrap_or_default();
            let columns = columns.take().unwrap_or_default();
            let envelopes = match_envelopes(&blocks, envelopes.take().unwrap_or_default())?;
            batch.state = BatchState::AwaitingProcessing {
                peer,
                downloaded: Downloaded {
                    blocks,
                    columns,
                    envelopes,
                },
            };
            self.finish_download(&peer);
        }
        Ok(())
    }

    /// One of the requests failed (timeout, stream refused, our own rate limit).
    pub(crate) fn on_request_failed(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        error: RpcError,
    ) -> RequestFailure {
        let Some((batch_id, _)) = self.requests.remove(&request_id) else {
            return RequestFailure::NotOurs;
        };
        self.finish_download(&peer);
        tracing::debug!(%peer, batch = batch_id, %error, "{} request failed", self.what);
        self.requests.retain(|_, (id, _)| *id != batch_id);
        if matches!(error, RpcError::RateLimited(_)) {
            // Our own quota for the peer: asked again at the next tick, when the quota has
            // refilled some.
            if let Some(batch) = self.batches.iter_mut().find(|b| b.id == batch_id) {
                batch.state = BatchState::AwaitingDownload;
            }
            return RequestFailure::RateLimited;
        }
        RequestFailure::Failed(
            batch_id,
            SyncError::RequestFailed(beacon_chain::InternalError::new(error)),
        )
    }

    /// Penalises `peer` when `blamed`: the one rule of whom a failed batch or lookup costs.
    pub(crate) fn report(ctx: &SyncContext<E>, peer: PeerId, blamed: bool) {
        if blamed {
            ctx.network.report_peer(peer, PeerAction::LowTolerance);
        }
    }

    /// A batch failed: counted, the peer penalised when `blamed`, the attempt and the peer
    /// recorded as the error says, the batch back to waiting for a download. Returns the
    /// batch for the user's own follow-up.
    pub(crate) fn fail_batch(
        &mut self,
        batch_id: u64,
        peer: PeerId,
        error: &impl BatchFailure,
        blamed: bool,
    ) -> Option<&mut Batch<E>> {
        self.results.with_label_values(&[error.label()]).inc();
        tracing::debug!(%peer, batch = batch_id, %error, blamed, "{} batch failed", self.what);
        Self::report(&self.ctx, peer, blamed);
        self.requests.retain(|_, (id, _)| *id != batch_id);
        let batch = self.batches.iter_mut().find(|b| b.id == batch_id)?;
        if error.spends_attempt() {
            batch.attempts += 1;
        }
        if error.marks_peer(blamed) {
            batch.failed_peers.insert(peer);
        }
        batch.state = BatchState::AwaitingDownload;
        Some(batch)
    }

    /// The first batch, when it is downloaded and no batch is being imported: now being
    /// imported, with its blocks, columns and envelopes.
    pub(crate) fn start_processing(&mut self) -> Option<(&Batch<E>, Downloaded<E>)> {
        if self
            .batches
            .iter()
            .any(|b| matches!(b.state, BatchState::Processing { .. }))
        {
            return None;
        }
        let batch = self.batches.front_mut()?;
        if !matches!(batch.state, BatchState::AwaitingProcessing { .. }) {
            return None;
        }
        let BatchState::AwaitingProcessing { peer, downloaded } =
            std::mem::replace(&mut batch.state, BatchState::AwaitingDownload)
        else {
            return None;
        };
        batch.state = BatchState::Processing { peer };
        Some((batch, downloaded))
    }

    /// The batch `batch_id` being imported, and the peer that served it.
    pub(crate) fn processing(&self, batch_id: u64) -> Option<(&Batch<E>, PeerId)> {
        let batch = self.batches.iter().find(|b| b.id == batch_id)?;
        match batch.state {
            BatchState::Processing { peer } => Some((batch, peer)),
            _ => None,
        }
    }

    /// The batch `batch_id` was imported.
    pub(crate) fn imported(&mut self, batch_id: u64) {
        self.results.with_label_values(&["imported"]).inc();
        self.batches.retain(|b| b.id != batch_id);
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

/// The columns of a DataColumnSidecarsByRange response: in the range, of the columns asked
/// for (Fulu sidecars, whose slot is their header's, and Gloas sidecars, which name their
/// block's slot and root).
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
        let (slot, index) = (column.slot(), column.index());
        if slot < start || slot >= end || !custody.contains(&index) {
            return Err(SyncError::UnexpectedColumn { slot, index });
        }
        columns.push(column);
    }
    Ok(columns)
}

/// The envelopes of an ExecutionPayloadEnvelopesByRange response (matched to the batch's
/// blocks once those are in: [`match_envelopes`]).
pub(crate) fn check_envelope_items<E: EthSpec>(
    items: Vec<ResponseItem<E>>,
) -> Result<Envelopes<E>, SyncError> {
    items
        .into_iter()
        .map(|item| match item {
            ResponseItem::ExecutionPayloadEnvelope(envelope) => Ok(envelope),
            _ => Err(SyncError::WrongItem),
        })
        .collect()
}

/// The batch's envelopes matched to its blocks by `beacon_block_root`, in block order: each
/// of a Gloas block of the batch, at most one per block. A block may have none (its payload
/// was withheld: its child builds on its EMPTY variant), unless its child in the batch builds
/// on its payload (the child's bid's `parent_block_hash` is the block's bid's `block_hash`):
/// the peer then withheld an envelope its own chain proves it has
/// ([`SyncError::MissingEnvelope`]).
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1, gloas/fork-choice.md#modified-on_block
pub(crate) fn match_envelopes<E: EthSpec>(
    blocks: &[Arc<SignedBeaconBlock<E>>],
    envelopes: Envelopes<E>,
) -> Result<Envelopes<E>, SyncError> {
    let roots: Vec<Root> = blocks.iter().map(|b| b.canonical_root()).collect();
    let gloas_roots: HashSet<Root> = roots
        .iter()
        .zip(blocks)
        .filter(|(_, block)| block.signed_execution_payload_bid().is_some())
        .map(|(root, _)| *root)
        .collect();
    let mut by_block: HashMap<Root, Arc<SignedExecutionPayloadEnvelope<E>>> = HashMap::new();
    for envelope in envelopes {
        let block_root = envelope.message.beacon_block_root;
        if !gloas_roots.contains(&block_root) || by_block.contains_key(&block_root) {
            return Err(SyncError::UnexpectedEnvelope { block_root });
        }
        by_block.insert(block_root, envelope);
    }
    for (i, pair) in blocks.windows(2).enumerate() {
        let [parent, child] = pair else {
            continue;
        };
        let (Some(parent_bid), Some(child_bid)) = (
            parent.signed_execution_payload_bid(),
            child.signed_execution_payload_bid(),
        ) else {
            continue;
        };
        let parent_root = roots[i];
        if child.parent_root() == parent_root
            && child_bid.message.parent_block_hash == parent_bid.message.block_hash
            && !by_block.contains_key(&parent_root)
        {
            return Err(SyncError::MissingEnvelope {
                block_root: parent_root,
                slot: parent.slot(),
            });
        }
    }
    Ok(roots
        .iter()
        .filter_map(|root| by_block.remove(root))
        .collect())
}

/// Whether `child` (a block on `parent`) builds on `parent`'s payload: both Gloas, the
/// child's bid's `parent_block_hash` the parent's bid's `block_hash` (the parent must then be
/// FULL before the child is imported).
///
/// [spec]: gloas/fork-choice.md#modified-on_block
pub(crate) fn builds_on_payload<E: EthSpec>(
    parent: &SignedBeaconBlock<E>,
    child: &SignedBeaconBlock<E>,
) -> bool {
    match (
        parent.signed_execution_payload_bid(),
        child.signed_execution_payload_bid(),
    ) {
        (Some(parent_bid), Some(child_bid)) => {
            child_bid.message.parent_block_hash == parent_bid.message.block_hash
        }
        _ => false,
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

/// Progress for the once-a-slot log line: where sync stood (a head or an oldest slot) when
/// the last line was logged.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    last: Option<(std::time::Instant, Slot)>,
}

impl Progress {
    /// Not syncing: the next line starts afresh.
    pub(crate) fn reset(&mut self) {
        self.last = None;
    }

    /// Sync stands at `slot` with `slots_left` to go: once a slot (`slot_duration_ms`) has
    /// passed since the last line, the speed in slots per second since then and the time left
    /// at that speed.
    pub(crate) fn update(
        &mut self,
        slot: Slot,
        slot_duration_ms: u64,
        slots_left: u64,
    ) -> Option<(f64, String)> {
        let now = std::time::Instant::now();
        let Some((since, from)) = self.last else {
            self.last = Some((now, slot));
            return None;
        };
        let elapsed = now.duration_since(since);
        if elapsed < std::time::Duration::from_millis(slot_duration_ms) {
            return None;
        }
        self.last = Some((now, slot));
        let speed = slot.abs_diff(from) as f64 / elapsed.as_secs_f64();
        let eta = if speed > 0.0 {
            format_duration(slots_left as f64 / speed)
        } else {
            "unknown".to_owned()
        };
        Some((speed, eta))
    }
}
