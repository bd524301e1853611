//! Range sync: when peers' Status shows a head beyond ours, the slots from our head to theirs
//! are fetched in batches (`BeaconBlocksByRange` with our custody columns by
//! `DataColumnSidecarsByRange` and, for Gloas slots, the payload envelopes by
//! `ExecutionPayloadEnvelopesByRange`, from one peer per batch, several batches ahead),
//! checked (slots in range and ascending, blocks linked, columns of their block by the
//! inclusion proof and covering our custody, envelopes each of a block of the batch and none
//! missing that a child block builds on), and imported in order as chain segments on the
//! processor: `engine_newPayload` per block, then the chain's import, which verifies every
//! signature of the block and the columns' KZG proofs; a Gloas block is followed by its
//! envelope with its columns before the next block (`segment`). The batches are
//! the shared `batch::BatchDownloader`'s: a bad batch is penalised on the peer that
//! served it and fetched again from another; a batch that keeps failing restarts sync from the
//! finalized checkpoint.
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyrange, fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1,
//! gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1

use std::sync::Arc;

use beacon_chain::InternalError;
use beacon_processor::WorkKind;
use networking::PeerId;
use networking::rpc::{ErrorResponse, StatusMessage};
use tokio::sync::watch;
use types::{EthSpec, ForkName, Root, Slot};

use crate::batch::{
    BatchDownloader, BatchFailure, BatchLimits, BatchSync, Progress, format_duration,
    with_separators,
};
use crate::segment::submit_segment;
use crate::{Outcome, SyncConfig, SyncContext};

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
    /// The peer answered with an error chunk (its code and message).
    #[error("the peer answered {}: {}", .0.code.0, .0.message)]
    ErrorResponse(ErrorResponse),
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
    /// An envelope of no Gloas block of the batch, or a second one of a block.
    #[error("envelope of block {block_root} was not asked for")]
    UnexpectedEnvelope {
        /// The envelope's `beacon_block_root`.
        block_root: Root,
    },
    /// The peer sent no envelope for a block of the batch whose child in the batch builds on
    /// its payload (the child's bid's `parent_block_hash` is the block's bid's `block_hash`).
    #[error(
        "block {block_root} at slot {slot}: its child builds on its payload, whose envelope was not sent"
    )]
    MissingEnvelope {
        /// The block whose envelope is missing.
        block_root: Root,
        /// Its slot.
        slot: Slot,
    },
    /// The batch's first block builds on the payload of a parent imported before (by an
    /// earlier batch or gossip) whose envelope the chain does not have: not this peer's
    /// fault (the parent's envelope was another batch's).
    #[error("block at slot {slot} builds on the payload of {parent}, which is not imported")]
    ParentPayloadUnknown {
        /// The block's slot.
        slot: Slot,
        /// Its parent, whose envelope is missing.
        parent: Root,
    },
    /// The chain refused a payload envelope (its checks against the block's post-state, its
    /// columns against the bid's commitments, or the execution client's INVALID).
    #[error("envelope of the block at slot {slot} invalid")]
    InvalidEnvelope {
        /// The envelope's block's slot.
        slot: Slot,
        /// What the chain said (an `EnvelopeError`).
        #[source]
        source: InternalError,
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
            // The missing envelope was an earlier batch's: no fault of this batch's peer.
            | SyncError::ParentPayloadUnknown { .. }
            | SyncError::ErrorResponse(_)
            | SyncError::RequestFailed(_) => Blame::Nobody,
            _ => Blame::Peer,
        }
    }

    /// The `result` label of `beacon_sync_batches_total`.
    fn result_label(&self) -> &'static str {
        match self {
            SyncError::ErrorResponse(_) => "error_response",
            SyncError::RequestFailed(_) => "request_failed",
            SyncError::BlockOutOfRange { .. }
            | SyncError::NotAscending { .. }
            | SyncError::UnexpectedColumn { .. }
            | SyncError::UnexpectedEnvelope { .. }
            | SyncError::WrongItem => "malformed",
            SyncError::MissingEnvelope { .. } | SyncError::ParentPayloadUnknown { .. } => {
                "missing_envelope"
            }
            SyncError::InvalidEnvelope { .. } => "invalid_envelope",
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

impl BatchFailure for SyncError {
    fn label(&self) -> &'static str {
        self.result_label()
    }

    /// Every failure counts towards the batch's restart from the finalized checkpoint, but a
    /// parent's missing payload: its envelope is looked up and the batch retried after it
    /// (a failed envelope lookup spends the attempt: [`RangeSync::on_envelope_lookup_done`]).
    fn spends_attempt(&self) -> bool {
        !matches!(self, SyncError::ParentPayloadUnknown { .. })
    }

    /// The next download goes to another peer first, whoever failed; but a parent's missing
    /// payload is no fault of the batch's data: any peer (the same one too) serves it again.
    fn marks_peer(&self, _blamed: bool) -> bool {
        !matches!(self, SyncError::ParentPayloadUnknown { .. })
    }
}

/// A processed segment, back to the sync state machine.
#[derive(Debug)]
pub(crate) struct SegmentOutcome {
    batch_id: u64,
    result: Result<usize, SyncError>,
}

/// The range-sync state machine: the peers ahead of us and the batches from our head to
/// theirs.
pub(crate) struct RangeSync<E: EthSpec> {
    ctx: Arc<SyncContext<E>>,
    downloader: BatchDownloader<E>,
    /// The first slot of the next batch to create; `None` while not syncing.
    next_start: Option<Slot>,
    /// Where the node stands, for the router's handle and for backfill.
    state: watch::Sender<SyncState>,
    /// The head slot when progress was last logged.
    progress: Progress,
    /// [`SyncConfig::tolerance_slots`].
    tolerance: u64,
    /// Whether the next start is from the finalized checkpoint instead of the head.
    from_finalized: bool,
    /// A batch failed on its parent's missing payload: the parent's envelope to look up, and
    /// the peer that served the batch (asked first), for the manager.
    wanted_envelope: Option<(Root, PeerId)>,
    /// The parent whose envelope lookup the batch `.1` waits for: no batch is imported
    /// until the lookup ends.
    awaiting_envelope: Option<(Root, u64)>,
}

impl<E: EthSpec> RangeSync<E> {
    pub(crate) fn new(
        ctx: Arc<SyncContext<E>>,
        config: &SyncConfig,
        state: watch::Sender<SyncState>,
    ) -> Self {
        let limits = BatchLimits::of(config);
        let results = ctx.metrics.sync_batches.clone();
        Self {
            downloader: BatchDownloader::new(ctx.clone(), "range sync", results, limits),
            ctx,
            next_start: None,
            state,
            tolerance: config.tolerance_slots,
            from_finalized: false,
            progress: Progress::default(),
            wanted_envelope: None,
            awaiting_envelope: None,
        }
    }

    fn local_head_slot(&self) -> Slot {
        self.ctx.chain.head().slot
    }

    /// The highest head among the peers.
    fn target_slot(&self) -> Slot {
        self.downloader
            .peers
            .values()
            .map(|p| p.status.head_slot)
            .max()
            .unwrap_or(0)
    }

    /// Whether a peer's chain is one range sync fetches: finalized beyond ours, or a head more
    /// than the tolerance ahead (a smaller gap is closed by gossip and lookups).
    fn is_ahead(&self, status: &StatusMessage) -> bool {
        let head = self.ctx.chain.head();
        status.finalized_epoch > head.finalized_checkpoint.epoch
            || status.head_slot > head.slot.saturating_add(self.tolerance)
    }

    fn count_peers(&self) {
        self.ctx
            .metrics
            .sync_peers
            .set(self.downloader.peers.len() as i64);
    }

    /// A relevant peer's Status: a peer ahead of us joins range sync.
    pub(crate) fn add_peer(&mut self, peer: PeerId, status: StatusMessage) {
        if self.is_ahead(&status) {
            self.downloader.set_peer(peer, status);
        } else {
            self.downloader.peers.remove(&peer);
        }
        self.count_peers();
        self.drive();
    }

    /// A peer's metadata told its custody group count.
    pub(crate) fn set_custody_group_count(&mut self, peer: PeerId, count: u64) {
        self.downloader.set_custody_group_count(peer, count);
    }

    /// Whether `peer` custodies every column (so it can serve all of ours).
    pub(crate) fn is_full_custody(&self, peer: &PeerId) -> bool {
        self.downloader.is_full_custody(peer)
    }

    /// A peer left: its downloads are fetched again elsewhere.
    pub(crate) fn remove_peer(&mut self, peer: &PeerId) {
        self.downloader.remove_peer(peer);
        self.count_peers();
    }

    pub(crate) fn on_tick(&mut self) {
        self.drive();
        self.log_progress();
    }

    /// Once a slot while syncing: peers, distance to the target, speed and ETA.
    fn log_progress(&mut self) {
        let SyncState::Syncing { target_slot } = *self.state.borrow() else {
            self.progress.reset();
            return;
        };
        let head = self.local_head_slot();
        let slot_duration_ms = self.ctx.chain.spec().slot_duration_ms;
        let distance = target_slot.saturating_sub(head);
        let Some((speed, eta)) = self.progress.update(head, slot_duration_ms, distance) else {
            return;
        };
        tracing::info!(
            "Syncing  peers: {}  distance: {} slots ({})  speed: {:.1} slots/s  ETA: {}",
            self.downloader.peers.len(),
            with_separators(distance),
            format_duration((distance * slot_duration_ms) as f64 / 1000.0),
            speed,
            eta,
        );
    }

    fn set_state(&self, state: SyncState) {
        let metrics = &self.ctx.metrics;
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
    fn drive(&mut self) {
        let target = self.target_slot();
        if self.next_start.is_none() {
            let head = self.local_head_slot();
            if self.downloader.peers.is_empty() || target <= head {
                self.set_state(SyncState::Synced);
                return;
            }
            // From the head; after a batch kept failing (the peers' chain may fork from ours
            // below our head), from the finalized checkpoint, which every relevant peer shares.
            let start = if self.from_finalized {
                let finalized = self.ctx.chain.finalized_checkpoint().epoch;
                finalized.saturating_mul(E::slots_per_epoch()) + 1
            } else {
                head + 1
            };
            tracing::info!(
                from = start,
                to = target,
                peers = self.downloader.peers.len(),
                "range sync starts"
            );
            self.next_start = Some(start);
        }
        self.set_state(SyncState::Syncing {
            target_slot: target,
        });
        let slots = self.downloader.limits.slots;
        while self.downloader.batches.len() < self.downloader.limits.ahead {
            let Some(start) = self.next_start.filter(|s| *s <= target) else {
                break;
            };
            let batch = self
                .downloader
                .new_batch(start, start.saturating_add(slots));
            self.downloader.batches.push_back(batch);
            self.next_start = Some(start + slots);
        }
        // Any peer whose head reaches the batch serves it; the columns of a batch ending at
        // Fulu or later are asked for from its first slot, the envelopes of a batch ending at
        // Gloas or later from its first Gloas slot.
        let ctx = &self.ctx;
        self.downloader.download_waiting(
            |status, batch| status.head_slot >= batch.start,
            |start, end| {
                (ctx.chain
                    .spec()
                    .fork_name_at_slot::<E>(end.saturating_sub(1))
                    .fulu_enabled()
                    && !ctx.custody.is_empty())
                .then_some(start)
            },
            |start, end| envelopes_start::<E>(ctx.chain.spec(), start, end),
        );
        self.process_next();
        if self.downloader.batches.is_empty() && self.next_start.is_some_and(|s| s > target) {
            let head = self.local_head_slot();
            tracing::info!(head, target, "range sync done");
            self.next_start = None;
            self.from_finalized = false;
            // Peers not ahead of the new head are no longer sync peers.
            let statuses: Vec<(PeerId, StatusMessage)> = self
                .downloader
                .peers
                .iter()
                .map(|(id, p)| (*id, p.status))
                .collect();
            for (id, status) in statuses {
                if !self.is_ahead(&status) {
                    self.downloader.peers.remove(&id);
                }
            }
            self.count_peers();
            if self.downloader.peers.is_empty() {
                self.set_state(SyncState::Synced);
            } else {
                self.drive();
            }
        }
    }

    /// A batch failed: the peer penalised when at fault, the batch downloaded again (from
    /// another peer), or sync restarted from the finalized checkpoint after too many attempts.
    fn fail_batch(&mut self, batch_id: u64, peer: PeerId, error: &SyncError) {
        let blamed = error.blames(self.downloader.is_full_custody(&peer));
        let max_attempts = self.downloader.limits.max_attempts;
        let Some(batch) = self.downloader.fail_batch(batch_id, peer, error, blamed) else {
            return;
        };
        if batch.attempts >= max_attempts {
            tracing::warn!(
                start = batch.start,
                attempts = batch.attempts,
                "range sync batch keeps failing: restarting from the finalized checkpoint"
            );
            self.from_finalized = true;
            self.downloader.clear();
            self.next_start = None;
        }
    }

    /// Starts importing the first batch when it is downloaded and nothing is importing.
    fn process_next(&mut self) {
        if self.awaiting_envelope.is_some() {
            return;
        }
        let Some((batch, downloaded)) = self.downloader.start_processing() else {
            return;
        };
        let batch_id = batch.id;
        submit_segment(
            &self.ctx,
            WorkKind::ChainSegment,
            downloaded.blocks,
            downloaded.columns,
            downloaded.envelopes,
            move |result| Outcome::Segment(SegmentOutcome { batch_id, result }),
        );
    }

    /// A segment was imported or failed.
    pub(crate) fn on_segment_processed(&mut self, outcome: SegmentOutcome) {
        let Some((batch, peer)) = self.downloader.processing(outcome.batch_id) else {
            return;
        };
        match outcome.result {
            Ok(imported) => {
                tracing::debug!(
                    start = batch.start,
                    imported,
                    head = self.local_head_slot(),
                    "range sync batch imported"
                );
                self.ctx
                    .metrics
                    .sync_blocks_imported
                    .inc_by(imported as u64);
                self.downloader.imported(outcome.batch_id);
            }
            Err(error) => {
                self.fail_batch(outcome.batch_id, peer, &error);
                if let SyncError::ParentPayloadUnknown { parent, .. } = error {
                    tracing::debug!(%parent, "range sync batch waits for its parent's envelope");
                    self.wanted_envelope = Some((parent, peer));
                    self.awaiting_envelope = Some((parent, outcome.batch_id));
                }
            }
        }
        self.drive();
    }

    /// The envelope a failed batch's parent needs, to be looked up by root (once).
    pub(crate) fn take_wanted_envelope(&mut self) -> Option<(Root, PeerId)> {
        self.wanted_envelope.take()
    }

    /// The envelope lookup of `root` ended: the batch waiting for it is imported again; when
    /// the envelope could not be had the attempt counts (the peers' chain may not be ours).
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub(crate) fn on_envelope_lookup_done(&mut self, root: Root, imported: bool) {
        let Some((awaited, batch_id)) = self.awaiting_envelope else {
            return;
        };
        if awaited != root {
            return;
        }
        self.awaiting_envelope = None;
        if !imported {
            let max_attempts = self.downloader.limits.max_attempts;
            let restart = self
                .downloader
                .batches
                .iter_mut()
                .find(|b| b.id == batch_id)
                .is_some_and(|batch| {
                    batch.attempts += 1;
                    batch.attempts >= max_attempts
                });
            if restart {
                tracing::warn!(%root, "no peer serves the envelope range sync needs: restarting from the finalized checkpoint");
                self.from_finalized = true;
                self.downloader.clear();
                self.next_start = None;
            }
        }
        self.drive();
    }
}

/// The first slot of `[start, end)` whose payload envelopes are asked for: its first Gloas
/// slot, `None` when none is Gloas.
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1
pub(crate) fn envelopes_start<E: EthSpec>(
    spec: &types::ChainSpec,
    start: Slot,
    end: Slot,
) -> Option<Slot> {
    let fork_slot = spec
        .fork_epoch(ForkName::Gloas)?
        .saturating_mul(E::slots_per_epoch());
    let from = start.max(fork_slot);
    (from < end).then_some(from)
}

impl<E: EthSpec> BatchSync<E> for RangeSync<E> {
    fn downloader(&mut self) -> &mut BatchDownloader<E> {
        &mut self.downloader
    }

    fn download_failed(&mut self, batch_id: u64, peer: PeerId, error: SyncError) {
        self.fail_batch(batch_id, peer, &error);
    }

    fn advance(&mut self) {
        self.drive();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{check_blocks, check_columns, check_envelope_items, match_envelopes};
    use arbitrary::{Arbitrary, Unstructured};
    use beacon_chain::ChainError;
    use networking::RpcError;
    use networking::rpc::ResponseItem;
    use std::collections::BTreeSet;
    use types::Hash32;
    use types::MinimalEthSpec as E;
    use types::gloas::SignedExecutionPayloadEnvelope;
    use types::{DataColumnSidecar, SignedBeaconBlock};

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

    fn arbitrary<T: for<'a> Arbitrary<'a>>(seed: u8) -> T {
        let bytes: Vec<u8> = (0..1u32 << 16)
            .map(|i| (i.wrapping_mul(31) as u8) ^ seed)
            .collect();
        T::arbitrary(&mut Unstructured::new(&bytes)).expect("arbitrary value")
    }

    /// A Gloas block at `slot` on `parent` whose bid promises the execution block
    /// `block_hash` on `parent_block_hash`.
    fn gloas_block(
        slot: Slot,
        parent: Root,
        parent_block_hash: u8,
        block_hash: u8,
    ) -> Arc<SignedBeaconBlock<E>> {
        let mut block: types::gloas::SignedBeaconBlock<E> = arbitrary(slot as u8);
        block.message.slot = slot;
        block.message.parent_root = parent;
        let bid = &mut block.message.body.signed_execution_payload_bid.message;
        bid.parent_block_hash = Hash32::repeat_byte(parent_block_hash);
        bid.block_hash = Hash32::repeat_byte(block_hash);
        Arc::new(SignedBeaconBlock::Gloas(block))
    }

    /// Three linked Gloas blocks at slots 10, 11, 13: 11 builds on 10's payload (hash 1), 13
    /// on the payload before 11's (11's withheld: 13's bid builds on hash 1 too).
    fn gloas_chain() -> Vec<Arc<SignedBeaconBlock<E>>> {
        let a = gloas_block(10, Root::repeat_byte(0xaa), 0, 1);
        let b = gloas_block(11, a.canonical_root(), 1, 2);
        let c = gloas_block(13, b.canonical_root(), 1, 3);
        vec![a, b, c]
    }

    fn envelope_of(block: &SignedBeaconBlock<E>) -> Arc<SignedExecutionPayloadEnvelope<E>> {
        let mut envelope: SignedExecutionPayloadEnvelope<E> = arbitrary(block.slot() as u8);
        envelope.message.beacon_block_root = block.canonical_root();
        envelope.message.payload.slot_number = block.slot();
        Arc::new(envelope)
    }

    fn gloas_column(slot: Slot, index: u64) -> Arc<DataColumnSidecar<E>> {
        let mut sidecar: types::gloas::DataColumnSidecar<E> = arbitrary(index as u8);
        sidecar.index = index;
        sidecar.slot = slot;
        Arc::new(DataColumnSidecar::Gloas(sidecar))
    }

    #[test]
    fn a_parents_missing_payload_spends_no_attempt_marks_no_peer_and_blames_nobody() {
        use crate::batch::BatchFailure;
        let waiting = SyncError::ParentPayloadUnknown {
            slot: 11,
            parent: Root::repeat_byte(1),
        };
        assert!(
            !waiting.spends_attempt(),
            "retried after the envelope lookup"
        );
        assert!(!waiting.marks_peer(false));
        assert!(!waiting.blames(true));
        // The batch's own missing envelope is the peer's: it counts.
        let withheld = SyncError::MissingEnvelope {
            block_root: Root::repeat_byte(1),
            slot: 10,
        };
        assert!(withheld.spends_attempt());
        assert!(withheld.marks_peer(true));
    }

    #[test]
    fn a_child_builds_on_its_parents_payload_when_its_bid_names_the_parents_block_hash() {
        let blocks = gloas_chain();
        assert!(crate::batch::builds_on_payload(&blocks[0], &blocks[1]));
        assert!(
            !crate::batch::builds_on_payload(&blocks[1], &blocks[2]),
            "13 builds on the payload before 11's"
        );
        assert!(
            !crate::batch::builds_on_payload(&block(9), &blocks[0]),
            "pre-Gloas parent"
        );
    }

    #[test]
    fn envelopes_are_matched_to_their_blocks_in_block_order() {
        let blocks = gloas_chain();
        // Sent out of order, 11's withheld (13 builds on its EMPTY variant).
        let sent = vec![envelope_of(&blocks[2]), envelope_of(&blocks[0])];
        let matched = match_envelopes(&blocks, sent).expect("a consistent batch");
        let roots: Vec<Root> = matched
            .iter()
            .map(|e| e.message.beacon_block_root)
            .collect();
        assert_eq!(
            roots,
            [blocks[0].canonical_root(), blocks[2].canonical_root()]
        );
        // No envelope at all for the last block (nothing in the batch builds on it).
        assert_eq!(
            match_envelopes(&blocks, vec![envelope_of(&blocks[0])]).map(|e| e.len()),
            Ok(1)
        );
    }

    #[test]
    fn an_envelope_the_next_block_builds_on_must_be_sent() {
        let blocks = gloas_chain();
        // 11 builds on 10's payload: without 10's envelope the peer withheld what its own
        // chain proves it has.
        assert_eq!(
            match_envelopes(&blocks, vec![envelope_of(&blocks[2])]).map(|_| ()),
            Err(SyncError::MissingEnvelope {
                block_root: blocks[0].canonical_root(),
                slot: 10,
            })
        );
        assert!(
            SyncError::MissingEnvelope {
                block_root: Root::ZERO,
                slot: 10
            }
            .blames(false),
            "every peer serves every envelope: whatever its custody"
        );
    }

    #[test]
    fn refuses_envelopes_of_no_block_of_the_batch_or_twice() {
        let blocks = gloas_chain();
        let other = gloas_block(12, Root::repeat_byte(0xbb), 7, 8);
        assert_eq!(
            match_envelopes(&blocks, vec![envelope_of(&blocks[0]), envelope_of(&other)])
                .map(|_| ()),
            Err(SyncError::UnexpectedEnvelope {
                block_root: other.canonical_root()
            })
        );
        assert_eq!(
            match_envelopes(
                &blocks,
                vec![envelope_of(&blocks[0]), envelope_of(&blocks[0])]
            )
            .map(|_| ()),
            Err(SyncError::UnexpectedEnvelope {
                block_root: blocks[0].canonical_root()
            })
        );
        // A pre-Gloas block has no envelope.
        let fulu = block(12);
        assert_eq!(
            match_envelopes(std::slice::from_ref(&fulu), vec![envelope_of(&fulu)]).map(|_| ()),
            Err(SyncError::UnexpectedEnvelope {
                block_root: fulu.canonical_root()
            })
        );
        assert_eq!(
            check_envelope_items::<E>(vec![ResponseItem::Block(block(1))]).map(|_| ()),
            Err(SyncError::WrongItem)
        );
    }

    #[test]
    fn gloas_columns_are_checked_by_their_own_slot() {
        let custody: BTreeSet<u64> = [1, 5].into_iter().collect();
        let ok = vec![
            ResponseItem::DataColumnSidecar(gloas_column(10, 1)),
            ResponseItem::DataColumnSidecar(column(11, 5)),
        ];
        assert_eq!(check_columns(ok, 10, 12, &custody).map(|c| c.len()), Ok(2));
        let out_of_range = vec![ResponseItem::DataColumnSidecar(gloas_column(12, 1))];
        assert_eq!(
            check_columns(out_of_range, 10, 12, &custody).map(|_| ()),
            Err(SyncError::UnexpectedColumn { slot: 12, index: 1 })
        );
        let other_index = vec![ResponseItem::DataColumnSidecar(gloas_column(10, 2))];
        assert_eq!(
            check_columns(other_index, 10, 12, &custody).map(|_| ()),
            Err(SyncError::UnexpectedColumn { slot: 10, index: 2 })
        );
    }

    #[test]
    fn envelopes_are_asked_for_from_the_first_gloas_slot_of_a_batch() {
        let mut spec = types::ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        spec.gloas_fork_epoch = 2;
        let fork_slot = 2 * E::slots_per_epoch();
        assert_eq!(envelopes_start::<E>(&spec, 0, fork_slot), None);
        assert_eq!(
            envelopes_start::<E>(&spec, fork_slot - 4, fork_slot + 4),
            Some(fork_slot)
        );
        assert_eq!(
            envelopes_start::<E>(&spec, fork_slot + 8, fork_slot + 16),
            Some(fork_slot + 8)
        );
        spec.gloas_fork_epoch = types::FAR_FUTURE_EPOCH;
        assert_eq!(envelopes_start::<E>(&spec, 0, 1_000), None);
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
            SyncError::UnexpectedEnvelope {
                block_root: Root::ZERO,
            },
            SyncError::InvalidEnvelope {
                slot: 1,
                source: InternalError::new(ChainError::InvalidPayload(Root::ZERO)),
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
            // The parent's envelope was an earlier batch's to send.
            SyncError::ParentPayloadUnknown {
                slot: 1,
                parent: Root::ZERO,
            },
            SyncError::ErrorResponse(ErrorResponse {
                code: networking::rpc::ResponseCode::RESOURCE_UNAVAILABLE,
                message: "unavailable".into(),
            }),
        ];
        assert!(!not_the_peers.iter().any(|e| e.blames(true)));
    }
}
