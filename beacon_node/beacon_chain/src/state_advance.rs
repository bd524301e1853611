//! The head state advanced ahead of the next slot.
//!
//! A block's state transition first runs the empty slots between its parent and itself: one
//! state root each, and at an epoch's first slot the epoch transition (at 1,000,000 validators
//! the costliest part of an import, seconds with its hashing). None of it depends on the block.
//! The node's slot timer therefore advances the head's post-state to the next slot before that
//! slot starts ([`BeaconChain::advance_head_state`]): the slots run, the state hashed (so the
//! block's post-state root rehashes only what the block changed) and the caches the block and
//! production read filled. The chain's state cache keeps the result
//! ([`crate::state_cache::StateCache::insert_advanced_state`]): a block on the head at or after
//! that slot starts from it, and block production takes it too.
//!
//! A block on another parent (a reorg, a late block of the slot) starts from its parent's
//! post-state as before. `beacon_block_import_pre_state_total{pre_state}` counts which pre-state
//! each import started from; `beacon_state_advance_seconds` times the advances. Beside them,
//! `beacon_block_import_store_write_seconds{state}` times each import's store batch (the epoch's
//! first block defers its snapshot, the largest write the node makes, to the store writer,
//! timed by `beacon_state_snapshot_write_seconds`).

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};
use state_processing::{CachedBeaconState, StateRef, common::get_current_epoch};
use types::{EthSpec, Root, Slot, ValidatorIndex};

use crate::chain::{BeaconChain, ChainError};

/// The most slots the slot timer advances the head state over
/// ([`BeaconChain::advance_head_state`]): a head further behind the clock belongs to a node
/// that is syncing, or to a chain that missed that many proposals in a row.
pub const MAX_ADVANCE_SLOTS: Slot = 4;

/// The import metrics of one chain: which pre-state each import started from, how long the
/// head state's advances took, how long each import's store batch took.
#[derive(Debug, Clone)]
pub(crate) struct ImportMetrics {
    pre_states: IntCounterVec,
    advance_seconds: Histogram,
    /// `beacon_block_import_store_write_seconds{state}`: an import's store batch, from its
    /// start to its commit, by whether it held a whole state (an epoch's first block).
    store_write_seconds: HistogramVec,
    /// `beacon_state_snapshot_write_seconds`: a deferred epoch snapshot written whole by the
    /// store writer.
    snapshot_write_seconds: Histogram,
    /// `beacon_finalization_migration_seconds`: the store's migration to a new finalized
    /// checkpoint, on the store writer.
    migration_seconds: Histogram,
    /// `beacon_finalization_migration_failures_total`.
    migration_failures: IntCounter,
    /// `beacon_state_cache_bytes`: the states the chain's state cache holds, as last measured.
    state_cache_bytes: IntGauge,
    /// `beacon_state_cache_block_states_limit`: the most block post-states held, by count and
    /// by the last memory measurement.
    state_cache_limit: IntGauge,
    /// `beacon_state_cache_loads_total{lock}`: block post-states loaded from the store because
    /// the state cache had let go of them (or never had them), always without a lock
    /// (`outside`; no state is loaded under a lock since fork choice holds none).
    state_loads: IntCounterVec,
}

/// Block post-states loaded from the store ([`BeaconChain::state_loads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLoads {
    /// Loaded by the chain without any lock.
    pub outside_lock: u64,
}

/// Which pre-state an import started from (the `pre_state` label).
const ADVANCED: &str = "advanced";
const PARENT: &str = "parent";
/// Whether an import's store batch held a whole state (the `state` label).
const WHOLE: &str = "whole";
const SUMMARY: &str = "summary";
const DEFERRED: &str = "deferred";
/// Where a block post-state was loaded from the store (the `lock` label): always without a
/// lock, the series kept for the dashboards that read it.
const OUTSIDE_LOCK: &str = "outside";

impl ImportMetrics {
    /// The metrics of a chain whose state cache holds at most `max_block_states` post-states.
    pub(crate) fn new(max_block_states: usize) -> Self {
        let pre_states = IntCounterVec::new(
            Opts::new(
                "beacon_block_import_pre_state_total",
                "Blocks whose state transition started from the parent's post-state advanced \
                 ahead by the slot timer (advanced) or from the parent's post-state itself \
                 (parent)",
            ),
            &["pre_state"],
        )
        .expect("a valid counter name, help and label");
        let advance_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "beacon_state_advance_seconds",
                "Time to advance the head state to the next slot ahead of it (the slots, any \
                 epoch transition, the hashing and the caches)",
            )
            .buckets(vec![0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
        )
        .expect("a valid histogram name, help and buckets");
        let store_write_seconds = HistogramVec::new(
            HistogramOpts::new(
                "beacon_block_import_store_write_seconds",
                "Time of an import's store batch (block, columns, state, fork choice) from its \
                 start to its commit, by whether it stored a whole state (whole), deferred its \
                 epoch snapshot to the store writer (deferred) or stored a summary (summary)",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["state"],
        )
        .expect("a valid histogram name, help, buckets and label");
        // Every series exists from the start (a scrape shows zero, not nothing).
        for label in [ADVANCED, PARENT] {
            pre_states.with_label_values(&[label]);
        }
        for label in [WHOLE, SUMMARY, DEFERRED] {
            store_write_seconds.with_label_values(&[label]);
        }
        let snapshot_write_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "beacon_state_snapshot_write_seconds",
                "Time to write an epoch snapshot whole after its import deferred it (the \
                 encode, the file and its sync, the commit), off the import path",
            )
            .buckets(vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
        )
        .expect("a valid histogram name, help and buckets");
        let migration_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "beacon_finalization_migration_seconds",
                "Time of the store's migration to a new finalized checkpoint (its state stored \
                 whole, the finalized blocks and states moved to the cold database, abandoned \
                 forks deleted), off the import path",
            )
            .buckets(vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0]),
        )
        .expect("a valid histogram name, help and buckets");
        let migration_failures = IntCounter::new(
            "beacon_finalization_migration_failures_total",
            "Migrations of the store to a new finalized checkpoint that failed (logged; the \
             next finalization migrates over both)",
        )
        .expect("a valid counter name and help");
        let state_cache_bytes = IntGauge::new(
            "beacon_state_cache_bytes",
            "Bytes the states the chain's state cache holds take together (block post-states, \
             checkpoint and advanced states; what they share counted once), as measured once \
             per epoch",
        )
        .expect("a valid gauge name and help");
        let state_cache_limit = IntGauge::new(
            "beacon_state_cache_block_states_limit",
            "The most block post-states the chain's state cache holds: its count bound, lowered \
             when the last memory measurement found them over the byte bound",
        )
        .expect("a valid gauge name and help");
        state_cache_limit.set(i64::try_from(max_block_states).unwrap_or(i64::MAX));
        let state_loads = IntCounterVec::new(
            Opts::new(
                "beacon_state_cache_loads_total",
                "Block post-states loaded from the store (an epoch snapshot and the blocks \
                 since, replayed) because the chain's state cache had let go of them, always \
                 without a lock (outside)",
            ),
            &["lock"],
        )
        .expect("a valid counter name, help and label");
        state_loads.with_label_values(&[OUTSIDE_LOCK]);
        Self {
            pre_states,
            advance_seconds,
            store_write_seconds,
            snapshot_write_seconds,
            migration_seconds,
            migration_failures,
            state_cache_bytes,
            state_cache_limit,
            state_loads,
        }
    }

    pub(crate) fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.pre_states.clone()))?;
        registry.register(Box::new(self.advance_seconds.clone()))?;
        registry.register(Box::new(self.store_write_seconds.clone()))?;
        registry.register(Box::new(self.snapshot_write_seconds.clone()))?;
        registry.register(Box::new(self.migration_seconds.clone()))?;
        registry.register(Box::new(self.migration_failures.clone()))?;
        registry.register(Box::new(self.state_cache_bytes.clone()))?;
        registry.register(Box::new(self.state_cache_limit.clone()))?;
        registry.register(Box::new(self.state_loads.clone()))
    }

    /// Counts a block post-state the chain loaded from the store without any lock.
    pub(crate) fn observe_state_load_outside_lock(&self) {
        self.state_loads.with_label_values(&[OUTSIDE_LOCK]).inc();
    }

    /// Records an epoch snapshot written whole in `seconds`.
    pub(crate) fn observe_snapshot_write(&self, seconds: f64) {
        self.snapshot_write_seconds.observe(seconds);
    }

    /// Records a finalization migration of `seconds`.
    pub(crate) fn observe_migration(&self, seconds: f64) {
        self.migration_seconds.observe(seconds);
    }

    /// Counts a finalization migration that failed.
    pub(crate) fn count_migration_failure(&self) {
        self.migration_failures.inc();
    }

    /// Records an import's store batch of `seconds`, by how it stored the state.
    pub(crate) fn observe_store_write(&self, stored: store::StoredAs, seconds: f64) {
        let label = match stored {
            store::StoredAs::Whole => WHOLE,
            store::StoredAs::Summary => SUMMARY,
            store::StoredAs::PendingSnapshot => DEFERRED,
        };
        self.store_write_seconds
            .with_label_values(&[label])
            .observe(seconds);
    }

    /// Counts an import that started from an advanced pre-state or not.
    pub(crate) fn observe_import(&self, advanced: bool) {
        let label = if advanced { ADVANCED } else { PARENT };
        self.pre_states.with_label_values(&[label]).inc();
    }
}

/// How many imports started from each kind of pre-state
/// ([`BeaconChain::import_pre_states`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportPreStates {
    /// From the parent's post-state advanced ahead by the node.
    pub advanced: u64,
    /// From the parent's post-state itself.
    pub parent: u64,
}

/// One memory bound of the states the state cache holds ([`BeaconChain::bound_state_memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateMemoryBound {
    /// The bytes the states took together when measured.
    pub measured_bytes: usize,
    /// The block post-states measured.
    pub measured_states: usize,
    /// The most block post-states held from now on (by count and by memory).
    pub block_states_limit: usize,
    /// The block post-states held after the bound.
    pub block_states: usize,
    /// How long the states' copies took, under the state cache's lock.
    pub copying: std::time::Duration,
    /// How long measuring them and applying the bound took, without the lock but for the
    /// bound's evictions.
    pub measuring: std::time::Duration,
}

/// The imports' store batches ([`BeaconChain::import_store_writes`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ImportStoreWrites {
    /// Batches that stored a whole state (an epoch's first block).
    pub whole: u64,
    /// Their seconds in all.
    pub whole_seconds: f64,
    /// The other batches (the state as a summary).
    pub summary: u64,
    /// Their seconds in all.
    pub summary_seconds: f64,
    /// Batches of epoch snapshots deferred to the store writer (a summary for now).
    pub deferred: u64,
    /// Their seconds in all.
    pub deferred_seconds: f64,
    /// Deferred snapshots the writer has written whole since.
    pub snapshots_written: u64,
    /// Their seconds in all, off the import path.
    pub snapshots_seconds: f64,
    /// Finalization migrations the store writer ran.
    pub migrations: u64,
    /// Their seconds in all, off the import path.
    pub migrations_seconds: f64,
    /// Finalization migrations that failed.
    pub migration_failures: u64,
}

impl<E: EthSpec> BeaconChain<E> {
    /// Advances the head's post-state through empty slots to `slot` (the slots, any epoch
    /// transition, the state's hash and the caches a block and production read), and keeps it
    /// in the state cache as the pre-state of the head's next block: the slot timer calls this
    /// late in the slot before `slot`. Returns the head's root and its advanced state; one
    /// advanced already for the same head and slot is returned as it is. An error when `slot`
    /// is not after the head's.
    ///
    /// `None`, with nothing done, when the head is more than [`MAX_ADVANCE_SLOTS`] behind
    /// `slot`: the node is syncing (or the chain has stalled), the next block is not expected
    /// on this head, and an advance over many slots would cost epoch transitions for nothing.
    ///
    /// The work runs without fork choice's lock: imports and gossip go on meanwhile. If the
    /// head changes during it, the result is still kept for the old head (a block on that
    /// block may still come) until the next advance replaces it.
    pub fn advance_head_state(
        &self,
        slot: Slot,
    ) -> Result<Option<(Root, CachedBeaconState<E>)>, ChainError> {
        let head = self.head();
        if slot <= head.slot {
            return Err(ChainError::NotAfterHead {
                slot,
                head_slot: head.slot,
            });
        }
        if slot - head.slot > MAX_ADVANCE_SLOTS {
            return Ok(None);
        }
        let state = self.advanced_state(head.block_root, &head.state, slot)?;
        Ok(Some((head.block_root, state)))
    }

    /// The post-state `block_state` of block `block_root` advanced to `slot`: the state
    /// cache's advanced state of the block when it is at `slot` (else advanced on from it, or from
    /// `block_state`), then kept there for the next caller and the block's next child.
    /// `block_state` itself when it is at `slot` already; an error when it is past it.
    pub fn advanced_state(
        &self,
        block_root: Root,
        block_state: &CachedBeaconState<E>,
        slot: Slot,
    ) -> Result<CachedBeaconState<E>, ChainError> {
        let state_slot = *block_state.state.slot();
        if slot < state_slot {
            return Err(ChainError::StatePastSlot {
                block_root,
                state_slot,
                slot,
            });
        }
        // A state at the slot already (an anchor state advanced past its block): as it is.
        if slot == state_slot {
            return Ok(block_state.clone());
        }
        let kept = self.state_cache.advanced_state(&block_root, slot);
        if let Some(kept) = &kept
            && *kept.state.slot() == slot
        {
            return Ok(kept.clone());
        }
        let started = std::time::Instant::now();
        let mut state = kept.unwrap_or_else(|| block_state.clone());
        state_processing::per_slot::process_slots(&mut state, slot, self.spec())
            .map_err(|source| ChainError::SlotProcessing { slot, source })?;
        state.hash_tree_root().map_err(ChainError::State)?;
        warm_caches(&mut state)?;
        let block_slot = block_state.state.latest_block_header().slot;
        self.state_cache
            .insert_advanced_state(block_root, block_slot, state.clone());
        self.import_metrics
            .advance_seconds
            .observe(started.elapsed().as_secs_f64());
        Ok(state)
    }

    /// Measures the memory of the states the state cache holds and bounds its block
    /// post-states by `state_cache.max_states_bytes` (the oldest go, loaded back from the store
    /// when a block needs one). The copies are taken under the cache's lock; the walk, hundreds of
    /// milliseconds at 1,000,000 validators, runs without it. The slot timer calls this once
    /// per epoch, on a blocking thread. Sets `beacon_state_cache_bytes` and
    /// `beacon_state_cache_block_states_limit`.
    pub fn bound_state_memory(&self) -> StateMemoryBound {
        let started = std::time::Instant::now();
        let states = self.state_cache.states_in_memory();
        let copied = started.elapsed();
        let memory = states.measure();
        drop(states);
        let (limit, block_states) = self.state_cache.bound(&memory);
        let bytes = memory.total_bytes();
        let gauge = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
        self.import_metrics.state_cache_bytes.set(gauge(bytes));
        self.import_metrics.state_cache_limit.set(gauge(limit));
        StateMemoryBound {
            measured_bytes: bytes,
            measured_states: memory.kept_block_states + memory.block_state_bytes.len(),
            block_states_limit: limit,
            block_states,
            copying: copied,
            measuring: started.elapsed() - copied,
        }
    }

    /// How many block post-states the chain's state cache holds in memory
    /// (`max_block_states` bounds them, beside fork choice's checkpoints' blocks).
    pub fn state_cache_block_states(&self) -> usize {
        self.state_cache.block_states_len()
    }

    /// The imports' store batches so far, with and without a whole state
    /// (`beacon_block_import_store_write_seconds`).
    pub fn import_store_writes(&self) -> ImportStoreWrites {
        let of = |label| {
            let h = self
                .import_metrics
                .store_write_seconds
                .with_label_values(&[label]);
            (h.get_sample_count(), h.get_sample_sum())
        };
        let (whole, whole_seconds) = of(WHOLE);
        let (summary, summary_seconds) = of(SUMMARY);
        let (deferred, deferred_seconds) = of(DEFERRED);
        let snapshots = &self.import_metrics.snapshot_write_seconds;
        ImportStoreWrites {
            whole,
            whole_seconds,
            summary,
            summary_seconds,
            deferred,
            deferred_seconds,
            snapshots_written: snapshots.get_sample_count(),
            snapshots_seconds: snapshots.get_sample_sum(),
            migrations: self.import_metrics.migration_seconds.get_sample_count(),
            migrations_seconds: self.import_metrics.migration_seconds.get_sample_sum(),
            migration_failures: self.import_metrics.migration_failures.get(),
        }
    }

    /// How many block post-states this chain loaded from the store, without fork choice's lock
    /// and under it (`beacon_state_cache_loads_total`).
    pub fn state_loads(&self) -> StateLoads {
        let count = |label| {
            self.import_metrics
                .state_loads
                .with_label_values(&[label])
                .get()
        };
        StateLoads {
            outside_lock: count(OUTSIDE_LOCK),
        }
    }

    /// How many blocks this chain imported from an advanced pre-state and how many from their
    /// parent's post-state (`beacon_block_import_pre_state_total`).
    pub fn import_pre_states(&self) -> ImportPreStates {
        let count = |label| {
            self.import_metrics
                .pre_states
                .with_label_values(&[label])
                .get()
        };
        ImportPreStates {
            advanced: count(ADVANCED),
            parent: count(PARENT),
        }
    }
}

/// Fills the caches a block's transition and production read (committees of the previous,
/// current and next epoch, effective balances, the target balances, the public-key index, the
/// sync committee's indices) on an advanced state once, so that every copy of it shares them
/// instead of rebuilding them (at 1,000,000 validators they cost about a second).
pub(crate) fn warm_caches<E: EthSpec>(state: &mut CachedBeaconState<E>) -> Result<(), ChainError> {
    let CachedBeaconState { state, caches } = state;
    let view = StateRef::new(state).map_err(ChainError::StateCaches)?;
    let epoch = get_current_epoch(&view);
    caches
        .committees(&view, epoch)
        .map_err(ChainError::StateCaches)?;
    caches
        .committees(&view, epoch.saturating_sub(1))
        .map_err(ChainError::StateCaches)?;
    // The next epoch's committees need its seed, known one epoch ahead: best effort.
    let _ = caches.committees(&view, epoch + 1);
    caches.effective_balances(&view);
    caches
        .progressive_balances(&view)
        .map_err(ChainError::StateCaches)?;
    caches.index_pubkeys(&view);
    let members: Vec<types::BLSPubkey> = view.current_sync_committee.pubkeys.to_vec();
    if caches.sync_committee_indices(&members).is_none() {
        let indices: Option<Vec<ValidatorIndex>> = members
            .iter()
            .map(|key| caches.validator_index(&view, &bls::PublicKeyBytes(key.0)))
            .collect();
        if let Some(indices) = indices {
            caches.set_sync_committee_indices(&members, indices.into());
        }
    }
    Ok(())
}
