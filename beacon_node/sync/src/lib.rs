//! Sync: range sync towards peers ahead of us ([`range`]), backfill of the blocks before a
//! checkpoint-sync anchor ([`backfill`]), both on one batch downloader (request building,
//! retries with an attempt limit, custody-aware peer choice, blame of the serving peer only
//! for its own faults), lookups of blocks by root ([`lookup`]), which reuse its penalty
//! rule and the segment import of range sync, and lookups of Gloas payload envelopes by root
//! ([`envelope_lookup`]) for the blocks whose children build on a payload the chain lacks
//! (gossip blocks held on it, range-sync batches waiting for it).
//!
//! [`SyncManager`] is driven from one task (the router's event loop): the peers' Status and
//! metadata, the responses to sync's requests, the outcomes of its own work on the beacon
//! processor and a tick. It knows the node only through [`SyncServices`]: the chain, the
//! network handle, the custody columns, the earliest available slot it lowers as backfill
//! stores blocks, and a way to submit work to the processor.
//!
//! ```no_run
//! # fn run<E: types::EthSpec>(
//! #     chain: std::sync::Arc<beacon_chain::BeaconChain<E>>,
//! #     network: networking::NetworkHandle<E>,
//! #     processor: beacon_processor::BeaconProcessor<impl beacon_processor::BatchHandlers>,
//! # ) -> Result<(), prometheus::Error> {
//! let registry = prometheus::Registry::new();
//! let (mut sync, mut outcomes) = sync::SyncManager::new(
//!     sync::SyncServices {
//!         chain,
//!         network,
//!         custody_columns: (0..128).collect(),
//!         earliest_available_slot: Default::default(),
//!         submit: Box::new(move |task| drop(processor.submit(task))),
//!     },
//!     &sync::SyncConfig::default(),
//!     &registry,
//! )?;
//! // In the event loop: `sync.add_peer(peer, status)`, `sync.on_response(..)`,
//! // `sync.on_outcome(outcomes.recv().await?)`, `sync.on_tick()`.
//! # Ok(()) }
//! ```

pub mod backfill;
mod batch;
pub mod envelope_lookup;
pub mod lookup;
mod metrics;
pub mod range;
mod segment;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use beacon_chain::BeaconChain;
use beacon_processor::Task;
use networking::rpc::{Response, StatusMessage};
use networking::{NetworkHandle, OutboundRequestId, PeerId, RpcError};
use tokio::sync::{mpsc, watch};
use types::{Epoch, EthSpec, Root, SignedBeaconBlock, Slot};

pub use backfill::BackfillError;
pub use range::{SyncError, SyncState};

use crate::batch::BatchSync;
use crate::metrics::Metrics;

/// How sync runs.
#[derive(Debug, Clone)]
pub struct SyncConfig {
    /// Slots per range-sync and backfill batch.
    pub batch_slots: u64,
    /// A peer whose head is at most this many slots ahead of ours (and whose finalized
    /// checkpoint is not) is followed by gossip and lookups, not range sync.
    pub tolerance_slots: u64,
    /// Batches downloaded ahead of the one being imported.
    pub batches_ahead: usize,
    /// Downloads of one batch before range sync gives the batch up and starts again from the
    /// finalized checkpoint (backfill: waits for a peer that has not failed it).
    pub max_batch_attempts: u32,
    /// Backfill to genesis instead of the spec's block-request horizon
    /// (`MIN_EPOCHS_FOR_BLOCK_REQUESTS`).
    pub genesis_backfill: bool,
}

impl Default for SyncConfig {
    fn default() -> Self {
        Self {
            batch_slots: 32,
            tolerance_slots: 32,
            batches_ahead: 4,
            max_batch_attempts: 5,
            genesis_backfill: false,
        }
    }
}

/// Hands a task to the beacon processor (sync's imports run on its `chain_segment`,
/// `rpc_block` and `backfill_segment` kinds).
pub type SubmitTask = Box<dyn Fn(Task) + Send + Sync>;

/// What sync needs of the node.
pub struct SyncServices<E: EthSpec> {
    /// The chain imported into.
    pub chain: Arc<BeaconChain<E>>,
    /// Requests and penalties go through it.
    pub network: NetworkHandle<E>,
    /// The columns the node custodies (asked for by range and by root).
    pub custody_columns: BTreeSet<u64>,
    /// The earliest slot the node serves, shared with the req/resp server: backfill lowers
    /// it as it stores older blocks.
    pub earliest_available_slot: Arc<AtomicU64>,
    /// Submits sync's imports to the beacon processor.
    pub submit: SubmitTask,
}

/// What sync's work shares: the services, its metrics, the outcome sender.
pub(crate) struct SyncContext<E: EthSpec> {
    pub(crate) chain: Arc<BeaconChain<E>>,
    pub(crate) network: NetworkHandle<E>,
    pub(crate) custody: BTreeSet<u64>,
    earliest_available_slot: Arc<AtomicU64>,
    submit: SubmitTask,
    pub(crate) metrics: Metrics,
    outcomes: mpsc::UnboundedSender<SyncOutcome>,
}

impl<E: EthSpec> SyncContext<E> {
    /// The wall-clock epoch of the chain's clock.
    pub(crate) fn current_epoch(&self) -> Epoch {
        self.chain.slot_at_ms(self.chain.now_ms()) / E::slots_per_epoch()
    }

    /// Backfill stored blocks back to `slot`.
    pub(crate) fn lower_earliest_available_slot(&self, slot: Slot) {
        self.earliest_available_slot
            .fetch_min(slot, Ordering::Relaxed);
    }

    pub(crate) fn submit(&self, task: Task) {
        (self.submit)(task);
    }

    pub(crate) fn send_outcome(&self, outcome: Outcome) {
        // The receiver is gone only after shutdown: nothing is waiting for the outcome then.
        let _ = self.outcomes.send(SyncOutcome(outcome));
    }
}

/// The outcome of sync's work on the processor, for [`SyncManager::on_outcome`].
#[derive(Debug)]
pub struct SyncOutcome(Outcome);

#[derive(Debug)]
pub(crate) enum Outcome {
    Segment(range::SegmentOutcome),
    Backfill(backfill::BatchOutcome),
    Lookup(lookup::LookupOutcome),
    Envelope(envelope_lookup::EnvelopeOutcome),
}

/// Range sync, backfill and lookups, driven from one task (the router's event loop).
pub struct SyncManager<E: EthSpec> {
    range: range::RangeSync<E>,
    backfill: backfill::BackfillSync<E>,
    lookups: lookup::BlockLookups<E>,
    envelopes: envelope_lookup::EnvelopeLookups<E>,
    state: watch::Receiver<SyncState>,
}

impl<E: EthSpec> std::fmt::Debug for SyncManager<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncManager")
            .field("state", &*self.state.borrow())
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> SyncManager<E> {
    /// Sync over `services`, its metrics registered in `registry`; the outcomes of its work
    /// come back on the receiver, for [`Self::on_outcome`].
    pub fn new(
        services: SyncServices<E>,
        config: &SyncConfig,
        registry: &prometheus::Registry,
    ) -> Result<(Self, mpsc::UnboundedReceiver<SyncOutcome>), prometheus::Error> {
        let metrics = Metrics::new()?;
        metrics.register(registry)?;
        let (outcomes, receiver) = mpsc::unbounded_channel();
        let ctx = Arc::new(SyncContext {
            chain: services.chain,
            network: services.network,
            custody: services.custody_columns,
            earliest_available_slot: services.earliest_available_slot,
            submit: services.submit,
            metrics,
            outcomes,
        });
        let (state_tx, state) = watch::channel(SyncState::Synced);
        let manager = Self {
            backfill: backfill::BackfillSync::new(ctx.clone(), config, state.clone()),
            range: range::RangeSync::new(ctx.clone(), config, state_tx),
            lookups: lookup::BlockLookups::new(ctx.clone()),
            envelopes: envelope_lookup::EnvelopeLookups::new(ctx),
            state,
        };
        Ok((manager, receiver))
    }

    /// The sync state, updated as range sync starts and ends.
    pub fn sync_state(&self) -> watch::Receiver<SyncState> {
        self.state.clone()
    }

    /// A relevant peer's Status: a peer ahead of us joins range sync, every one may serve
    /// backfill.
    pub fn add_peer(&mut self, peer: PeerId, status: StatusMessage) {
        self.range.add_peer(peer, status);
        self.backfill.add_peer(peer, status);
        self.envelopes.add_peer(peer);
    }

    /// A peer left, said goodbye or is on another chain: its downloads go elsewhere.
    pub fn remove_peer(&mut self, peer: &PeerId) {
        self.range.remove_peer(peer);
        self.backfill.remove_peer(peer);
        self.lookups.remove_peer(peer);
        self.envelopes.remove_peer(peer);
        self.after_envelope_lookups();
    }

    /// A peer's metadata told its custody group count.
    pub fn set_custody_group_count(&mut self, peer: PeerId, count: u64) {
        self.range.set_custody_group_count(peer, count);
        self.backfill.set_custody_group_count(peer, count);
    }

    /// A gossip block of `peer` whose parent is unknown: its ancestry is looked up.
    pub fn on_unknown_parent(&mut self, peer: PeerId, block: Arc<SignedBeaconBlock<E>>) {
        self.lookups.on_unknown_parent(peer, block);
    }

    /// A gossip block of `peer` whose parent's payload the chain has not verified (IGNOREd by
    /// gossip): held while the parent's envelope is looked up, then imported.
    ///
    /// [spec]: gloas/p2p-interface.md#beacon_block
    pub fn on_parent_payload_unknown(&mut self, peer: PeerId, block: Arc<SignedBeaconBlock<E>>) {
        if let Some((peer, block)) = self.envelopes.hold(peer, block) {
            self.lookups.on_parent_imported(peer, block);
        }
        self.after_envelope_lookups();
    }

    /// A block root `peer` referred to that the chain has not imported: it is looked up.
    pub fn on_unknown_block(&mut self, peer: PeerId, root: Root) {
        self.lookups.on_unknown_block(peer, root);
    }

    /// A response to one of sync's requests (others are ignored).
    pub fn on_response(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        response: Response<E>,
    ) {
        if self.envelopes.owns(&request_id) {
            self.envelopes.on_response(peer, request_id, response);
            self.after_envelope_lookups();
        } else if self.lookups.owns(&request_id) {
            self.lookups.on_response(peer, request_id, response);
        } else if self.backfill.owns(&request_id) {
            self.backfill.on_response(peer, request_id, response);
        } else {
            self.range.on_response(peer, request_id, response);
        }
    }

    /// One of sync's requests failed (others are ignored).
    pub fn on_request_failed(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        error: RpcError,
    ) {
        if self.envelopes.owns(&request_id) {
            self.envelopes.on_request_failed(peer, request_id, &error);
            self.after_envelope_lookups();
        } else if self.lookups.owns(&request_id) {
            self.lookups.on_request_failed(peer, request_id, &error);
        } else if self.backfill.owns(&request_id) {
            self.backfill.on_request_failed(peer, request_id, error);
        } else {
            self.range.on_request_failed(peer, request_id, error);
        }
    }

    /// A segment, backfill batch or lookup was imported or failed.
    pub fn on_outcome(&mut self, outcome: SyncOutcome) {
        match outcome.0 {
            Outcome::Segment(outcome) => {
                self.range.on_segment_processed(outcome);
                if let Some((parent, peer)) = self.range.take_wanted_envelope()
                    && !self.envelopes.look_up_for_range(parent, peer)
                {
                    self.range.on_envelope_lookup_done(parent, false);
                }
                self.after_envelope_lookups();
            }
            Outcome::Backfill(outcome) => self.backfill.on_batch_processed(outcome),
            Outcome::Lookup(outcome) => {
                let range = &self.range;
                self.lookups
                    .on_processed(outcome, |peer| range.is_full_custody(peer))
            }
            Outcome::Envelope(outcome) => {
                let range = &self.range;
                self.envelopes
                    .on_processed(outcome, |peer| range.is_full_custody(peer));
                self.after_envelope_lookups();
            }
        }
    }

    /// The envelope lookups that ended: their held gossip blocks imported (when the payload
    /// was) or dropped, range sync's waiting batch resumed.
    fn after_envelope_lookups(&mut self) {
        for done in self.envelopes.take_done() {
            if done.imported {
                for (peer, block) in done.held {
                    self.lookups.on_parent_imported(peer, block);
                }
            }
            if done.for_range {
                self.range.on_envelope_lookup_done(done.root, done.imported);
            }
        }
    }

    /// Downloads and imports what can go now; logs progress once a slot.
    pub fn on_tick(&mut self) {
        self.range.on_tick();
        self.backfill.on_tick();
    }
}
