//! Backfill: after a checkpoint sync, the finalized blocks before the anchor, fetched newest
//! first down to the spec's block-request horizon (or genesis), with the node's custody columns
//! inside the column-request window.
//!
//! Backfill runs while range sync is idle (the head synced) and downloads batches of
//! `BeaconBlocksByRange` (and `DataColumnSidecarsByRange` for the custody columns of slots in
//! the window) from peers whose Status says they hold the slots, several batches ahead, and
//! processes them newest first on the processor's backfill pool, where the chain imports each
//! (`BeaconChain::import_historical_block_batch`: hash chain, proposer signatures, custody
//! columns, one store batch). The batches are the shared `batch::BatchDownloader`'s:
//! a peer whose batch does not chain or verify is penalised and the batch fetched from another;
//! a failure of ours (the store, the head state) blames nobody and spends no attempt.
//!
//! A peer may leave out blocks at the old end of its range (slots it claims empty); the next
//! batch then does not chain to the expected parent through no fault of its own peer. Such a
//! batch is not blamed: it is fetched again with its range reaching up to the oldest stored
//! block, and blamed only when it still does not chain. A gap longer than one request can
//! carry is fetched as batches of its own, processed before the batch.
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyrange, fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1,
//! phase0/weak-subjectivity.md

use std::sync::Arc;

use beacon_chain::historical_blocks::{HistoricalBatch, HistoricalBlockError, HistoricalFault};
use beacon_processor::{Task, WorkKind};
use networking::rpc::StatusMessage;
use networking::{OutboundRequestId, PeerId};
use store::OldestBlock;
use tokio::sync::watch;
use types::{ChainSpec, Epoch, EthSpec, ForkName, Slot};

use crate::batch::{
    BatchDownloader, BatchFailure, BatchLimits, BatchSync, Progress, with_separators,
};
use crate::{Outcome, SyncConfig, SyncContext, SyncError, SyncState};

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
    pub(crate) fn blames(&self, covers: bool, full_custody: bool) -> bool {
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

    /// The `outcome` label of `beacon_sync_backfill_batches_total`.
    fn outcome_label(&self) -> &'static str {
        use HistoricalBlockError as H;
        match self {
            BackfillError::Response(SyncError::ErrorResponse(_)) => "error_response",
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

impl BatchFailure for BackfillError {
    fn label(&self) -> &'static str {
        self.outcome_label()
    }

    /// Our own failures (store, head state, the processor dropping the batch) spend no
    /// attempt.
    fn spends_attempt(&self) -> bool {
        match self {
            BackfillError::Import(e) => e.fault() != HistoricalFault::Local,
            BackfillError::Dropped => false,
            BackfillError::Response(_) => true,
        }
    }

    /// A peer is passed over when it was blamed or its response was refused; never for a
    /// failure of ours.
    fn marks_peer(&self, blamed: bool) -> bool {
        self.spends_attempt() && (blamed || matches!(self, BackfillError::Response(_)))
    }
}

/// A processed batch, back to the state machine: the blocks stored and the new oldest block.
#[derive(Debug)]
pub(crate) struct BatchOutcome {
    batch_id: u64,
    /// Whether the batch reached up to the oldest stored block when it was processed.
    covers: bool,
    result: Result<(usize, OldestBlock), BackfillError>,
}

/// The backfill state machine: every relevant peer, the batches from the oldest stored block
/// down to the target.
pub(crate) struct BackfillSync<E: EthSpec> {
    ctx: Arc<SyncContext<E>>,
    downloader: BatchDownloader<E>,
    /// Range sync's state: backfill waits while the head is behind.
    sync_state: watch::Receiver<SyncState>,
    /// The end of the next batch to create; `None` until backfill starts.
    next_end: Option<Slot>,
    /// The oldest block stored, as last read or written.
    oldest: Option<OldestBlock>,
    /// [`SyncConfig::genesis_backfill`].
    genesis_backfill: bool,
    /// The target was reached (or there is nothing to backfill).
    complete: bool,
    /// The oldest slot when progress was last logged.
    progress: Progress,
}

impl<E: EthSpec> BackfillSync<E> {
    pub(crate) fn new(
        ctx: Arc<SyncContext<E>>,
        config: &SyncConfig,
        sync_state: watch::Receiver<SyncState>,
    ) -> Self {
        let oldest = match ctx.chain.store().oldest_block() {
            Ok(oldest) => oldest,
            Err(error) => {
                tracing::warn!(%error, "cannot read the oldest stored block: backfill off");
                None
            }
        };
        let limits = BatchLimits::of(config);
        let results = ctx.metrics.backfill_batches.clone();
        Self {
            downloader: BatchDownloader::new(ctx.clone(), "backfill", results, limits),
            ctx,
            sync_state,
            next_end: None,
            complete: oldest.is_none(),
            oldest,
            genesis_backfill: config.genesis_backfill,
            progress: Progress::default(),
        }
    }

    /// Whether `request_id` is one of backfill's.
    pub(crate) fn owns(&self, request_id: &OutboundRequestId) -> bool {
        self.downloader.owns(request_id)
    }

    /// A relevant peer's Status.
    pub(crate) fn add_peer(&mut self, peer: PeerId, status: StatusMessage) {
        self.downloader.set_peer(peer, status);
        self.drive();
    }

    /// A peer's metadata told its custody group count.
    pub(crate) fn set_custody_group_count(&mut self, peer: PeerId, count: u64) {
        self.downloader.set_custody_group_count(peer, count);
    }

    /// A peer left: its downloads are fetched again elsewhere.
    pub(crate) fn remove_peer(&mut self, peer: &PeerId) {
        self.downloader.remove_peer(peer);
    }

    pub(crate) fn on_tick(&mut self) {
        self.drive();
        self.log_progress();
    }

    fn target_slot(&self) -> Slot {
        backfill_target_slot::<E>(
            self.ctx.chain.spec(),
            self.ctx.current_epoch(),
            self.genesis_backfill,
        )
    }

    /// Once a slot while backfilling: peers, slots left, speed.
    fn log_progress(&mut self) {
        let running = !self.complete && *self.sync_state.borrow() == SyncState::Synced;
        let Some(oldest) = self.oldest.filter(|_| running) else {
            self.progress.reset();
            return;
        };
        let remaining = oldest.slot.saturating_sub(self.target_slot());
        let slot_duration_ms = self.ctx.chain.spec().slot_duration_ms;
        let Some((speed, eta)) = self
            .progress
            .update(oldest.slot, slot_duration_ms, remaining)
        else {
            return;
        };
        tracing::info!(
            "Backfilling  peers: {}  remaining: {} slots  speed: {:.1} slots/s  ETA: {}",
            self.downloader.peers.len(),
            with_separators(remaining),
            speed,
            eta,
        );
    }

    /// Creates, downloads and processes batches as far as it can go now; notes completion.
    fn drive(&mut self) {
        if self.complete {
            return;
        }
        let Some(oldest) = self.oldest else {
            return;
        };
        let target = self.target_slot();
        if oldest.is_genesis() || oldest.slot <= target {
            self.finish(oldest);
            return;
        }
        self.ctx
            .metrics
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
        let slots = self.downloader.limits.slots;
        while self.downloader.batches.len() < self.downloader.limits.ahead {
            let Some(end) = self.next_end.filter(|end| *end > target) else {
                break;
            };
            let start = end.saturating_sub(slots).max(target);
            let batch = self.downloader.new_batch(start, end);
            self.downloader.batches.push_back(batch);
            self.next_end = Some(start);
        }
        // A peer serves a batch when its Status says it holds all of the batch's slots.
        let ctx = &self.ctx;
        self.downloader.download_waiting(
            |status, batch| {
                status.earliest_available_slot <= batch.start && status.head_slot >= batch.end
            },
            |start, end| columns_start(ctx, start, end),
            // Backfill across the Gloas fork (envelopes of historical blocks) is not done yet:
            // a Gloas batch's payloads are not asked for.
            |_, _| None,
        );
        self.process_next();
        if self.downloader.batches.is_empty() && self.next_end.is_some_and(|end| end <= target) {
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
        self.ctx.metrics.backfill_slots_remaining.set(0);
        self.downloader.clear();
    }

    /// A batch failed: the peer penalised when at fault, the batch fetched again.
    fn fail_batch(&mut self, batch_id: u64, peer: PeerId, covers: bool, error: &BackfillError) {
        let blamed = error.blames(covers, self.downloader.is_full_custody(&peer));
        let oldest_slot = self.oldest.map(|o| o.slot);
        let max = self.ctx.chain.spec().max_request_blocks_deneb.max(1);
        let Some(batch) = self.downloader.fail_batch(batch_id, peer, error, blamed) else {
            return;
        };
        // Not chained through a gap the batch did not reach: it reaches it next time (within
        // one request's block limit). A gap longer than that (a peer claimed more slots empty
        // than one request covers) is fetched as batches of its own, processed first: then
        // the batch chains to their oldest block.
        if !blamed
            && matches!(
                error,
                BackfillError::Import(HistoricalBlockError::NotChained { .. })
            )
            && let Some(oldest_slot) = oldest_slot
        {
            batch.end = oldest_slot.min(batch.start.saturating_add(max));
            if batch.end < oldest_slot {
                let start = batch.end;
                self.refetch_gap(start, oldest_slot);
            }
        }
    }

    /// Puts batches for the slots `[start, end)` (between a batch and the oldest stored block)
    /// at the front, newest first.
    fn refetch_gap(&mut self, start: Slot, mut end: Slot) {
        tracing::debug!(start, end, "backfill refetches a gap no batch covers");
        let mut gap = Vec::new();
        while end > start {
            let batch_start = end.saturating_sub(self.downloader.limits.slots).max(start);
            gap.push(self.downloader.new_batch(batch_start, end));
            end = batch_start;
        }
        for batch in gap.into_iter().rev() {
            self.downloader.batches.push_front(batch);
        }
    }

    /// Starts processing the newest batch when it is downloaded and nothing is processing.
    fn process_next(&mut self) {
        let Some(oldest) = self.oldest else {
            return;
        };
        let Some((batch, downloaded)) = self.downloader.start_processing() else {
            return;
        };
        let (blocks, columns) = (downloaded.blocks, downloaded.columns);
        let covers = batch.end >= oldest.slot;
        let batch_id = batch.id;
        let input = HistoricalBatch {
            blocks,
            columns,
            oldest,
            start: batch.start,
            columns_from: batch.columns_from,
        };
        let on_run = self.ctx.clone();
        let on_drop = self.ctx.clone();
        let task = Task::new(WorkKind::BackfillSegment, move |worker| {
            // The chain imports it (hash chain, proposer signatures, custody columns, one
            // store batch); its error says whom to blame.
            let result = on_run
                .chain
                .import_historical_block_batch(input, &on_run.custody, worker.pool())
                .map_err(BackfillError::Import);
            on_run.send_outcome(Outcome::Backfill(BatchOutcome {
                batch_id,
                covers,
                result,
            }));
        })
        .on_drop(move |_| {
            on_drop.send_outcome(Outcome::Backfill(BatchOutcome {
                batch_id,
                covers,
                result: Err(BackfillError::Dropped),
            }));
        });
        self.ctx.submit(task);
    }

    /// A batch was stored or refused.
    pub(crate) fn on_batch_processed(&mut self, outcome: BatchOutcome) {
        let Some((batch, peer)) = self.downloader.processing(outcome.batch_id) else {
            return;
        };
        match outcome.result {
            Ok((stored, oldest)) => {
                tracing::debug!(
                    start = batch.start,
                    end = batch.end,
                    stored,
                    oldest = oldest.slot,
                    "backfill batch stored"
                );
                self.oldest = Some(oldest);
                self.ctx.lower_earliest_available_slot(oldest.slot);
                self.downloader.imported(outcome.batch_id);
            }
            Err(error) => self.fail_batch(outcome.batch_id, peer, outcome.covers, &error),
        }
        self.drive();
    }
}

impl<E: EthSpec> BatchSync<E> for BackfillSync<E> {
    fn downloader(&mut self) -> &mut BatchDownloader<E> {
        &mut self.downloader
    }

    fn download_failed(&mut self, batch_id: u64, peer: PeerId, error: SyncError) {
        self.fail_batch(batch_id, peer, false, &BackfillError::Response(error));
    }

    fn advance(&mut self) {
        self.drive();
    }
}

/// The first slot of `[start, end)` whose columns are fetched (in the column window, at Fulu
/// or later, with custody columns); `None` when none are.
fn columns_start<E: EthSpec>(ctx: &SyncContext<E>, start: Slot, end: Slot) -> Option<Slot> {
    if ctx.custody.is_empty() {
        return None;
    }
    let window = column_window_start_slot::<E>(ctx.chain.spec(), ctx.current_epoch())?;
    let from = start.max(window);
    (from < end).then_some(from)
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
    fn our_failures_spend_no_attempt_and_pass_over_no_peer() {
        let ours = [
            BackfillError::Import(HistoricalBlockError::Store(
                store::StoreError::MissingBlock(Root::ZERO),
            )),
            BackfillError::Dropped,
        ];
        for error in &ours {
            assert!(!error.blames(true, true), "{error}");
            assert!(!error.spends_attempt(), "{error}");
            assert!(!error.marks_peer(false), "{error}");
        }
        let refused = BackfillError::Response(SyncError::WrongItem);
        assert!(refused.spends_attempt() && refused.marks_peer(true));
        let gap = BackfillError::Import(HistoricalBlockError::NotChained {
            slot: 7,
            root: Root::ZERO,
            expected: Root::repeat_byte(1),
            newest: true,
        });
        assert!(
            gap.spends_attempt() && !gap.marks_peer(false),
            "a gap it did not reach: counted, but the same peer may serve the longer range"
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
