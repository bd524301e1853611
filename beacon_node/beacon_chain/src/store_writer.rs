//! The store's slow writes, in order on a thread of their own, off the import path: the epoch
//! snapshots imports deferred, and the finalization migrations. The thread only orders them:
//! each write's work (the encode, the cold diff, the disk) runs on the chain's pool (the beacon
//! processor's main pool: the node's one thread budget) while the thread waits.
//!
//! **Epoch snapshots.** The import of the block that reaches an epoch boundary stores its
//! post-state as a pending snapshot (`StoreBatch::put_state_deferring_snapshot`): a summary
//! naming the snapshot before it, so the state loads by replaying the blocks since. The whole
//! state (~135 MiB of SSZ at 1,000,000 validators: the encode, the file, its fsync) is then
//! written here, with fork choice as it was after that import, while imports go on. Until it
//! lands, and if the node stops first, nothing is lost: the state still loads by replay, the
//! finalization migration stores a checkpoint state that is still pending whole before it
//! moves the split, and a restart replays the blocks after the fork choice persisted last,
//! then hands the snapshots still pending to this writer, which loads each by replay and
//! writes it whole.
//!
//! **Execution payload envelopes** (Gloas) go through here too, so that each lands after every
//! write queued before it (a finalization that pruned its block refuses it rather than leave an
//! envelope without a block) and before the fork choice bytes queued after it (queued under fork
//! choice's lock, as the envelope's FULL node was recorded: a persisted fork choice never holds
//! a FULL node whose envelope a crash lost). Whoever queues one waits for its answer.
//!
//! **Finalization migrations.** When fork choice finalizes a new checkpoint, the chain prunes
//! its memory at once and queues the store's part here (`BeaconChain::on_finalized`): the
//! checkpoint state stored whole, then `Store::migrate_to_finalized`, which copies the newly
//! finalized blocks and states to the cold database (it reads whole states and computes a
//! cold diff: seconds at mainnet scale, per the store's benchmark) and deletes what finality
//! abandoned. Until it runs, the newly finalized blocks and
//! states are served from the hot database, where they still are. A migration follows the
//! snapshot writes queued before it, so its checkpoint state is usually whole already. A
//! migration with a later one queued behind it is skipped (the later one moves the split over
//! both); one whose checkpoint the split has reached already does nothing. One that fails is
//! logged and counted, and the next finalization migrates over both; a node that stops before
//! a migration ran queues it again when it reopens (`BeaconChain::open`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rayon::ThreadPool;
use state_processing::CachedBeaconState;
use store::{MigrationSummary, Store, StoreError};
use types::{
    BeaconState, ChainSpec, DataColumnSidecar, EthSpec, Root,
    gloas::SignedExecutionPayloadEnvelope, phase0::Checkpoint,
};

use crate::chain::ChainError;
use crate::state_advance::ImportMetrics;

enum Job<E: EthSpec> {
    Write {
        state_root: Root,
        state: BeaconState<E>,
        fork_choice: Vec<u8>,
    },
    /// Fork choice's persisted bytes, written alone (no state to write beside them), after
    /// the jobs queued before, so that a snapshot's older bytes never land over them.
    ForkChoice(Vec<u8>),
    /// A Gloas execution payload envelope for the envelope table (its block stored before),
    /// with its block's custody columns (one batch), and where to answer once it is committed
    /// or refused.
    Envelope {
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        columns: Vec<Arc<DataColumnSidecar<E>>>,
        done: SyncSender<Result<(), StoreError>>,
    },
    /// A snapshot left pending by a node that stopped before writing it: loaded by replay,
    /// then written whole (fork choice as persisted).
    Materialize(Root),
    /// The store's migration to a new finalized checkpoint, with the checkpoint's state.
    Finalize {
        checkpoint: Checkpoint,
        state: Box<CachedBeaconState<E>>,
    },
    /// Answered once every job queued before it is done.
    Flush(SyncSender<()>),
    /// Holds the thread until the sender is dropped, for [`HOLD_LIMIT`] at most.
    Hold(Receiver<()>),
}

/// The longest [`StoreWriter::hold`] keeps the writer waiting.
const HOLD_LIMIT: Duration = Duration::from_secs(60);

/// Keeps the store writer waiting until dropped ([`StoreWriter::hold`]).
#[derive(Debug)]
pub struct StoreWritesHeld {
    _release: SyncSender<()>,
}

/// The writer thread and its queue. Dropping it waits for the queued jobs.
pub(crate) struct StoreWriter<E: EthSpec> {
    sender: Option<Sender<Job<E>>>,
    thread: Option<JoinHandle<()>>,
}

impl<E: EthSpec> StoreWriter<E> {
    /// Starts the thread, whose writes run on `pool`; `metrics` times its snapshot writes and
    /// migrations.
    pub(crate) fn new(
        store: Arc<Store<E>>,
        spec: Arc<ChainSpec>,
        metrics: ImportMetrics,
        pool: Arc<ThreadPool>,
    ) -> Self {
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || run(&store, &spec, receiver, &metrics, &pool))
            .expect("the OS starts a thread");
        Self {
            sender: Some(sender),
            thread: Some(thread),
        }
    }

    /// Queues the whole state of the pending snapshot `state_root`, with fork choice's
    /// persisted bytes to store beside it.
    pub(crate) fn write(&self, state_root: Root, state: BeaconState<E>, fork_choice: Vec<u8>) {
        let job = Job::Write {
            state_root,
            state,
            fork_choice,
        };
        self.send_snapshot(state_root, job);
    }

    /// Queues fork choice's persisted bytes, to be written after every job queued before (a
    /// pending snapshot's fork choice, older, included). Queued under fork choice's lock, the
    /// bytes of two imports are written in the order fork choice took them.
    pub(crate) fn persist_fork_choice(&self, fork_choice: Vec<u8>) {
        if !self.send(Job::ForkChoice(fork_choice)) {
            tracing::error!("store writer stopped; fork choice not persisted");
        }
    }

    /// Queues `envelope` for the store's envelope table and `columns` (its block's custody
    /// columns) beside it in one batch, after every job queued before. The receiver answers
    /// once the write is committed (or refused: its block not stored, pruned by a finalization
    /// queued before); `None` when the writer thread stopped.
    pub(crate) fn put_execution_payload_envelope(
        &self,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        columns: Vec<Arc<DataColumnSidecar<E>>>,
    ) -> Option<Receiver<Result<(), StoreError>>> {
        let (done, answer) = mpsc::sync_channel(1);
        self.send(Job::Envelope {
            envelope,
            columns,
            done,
        })
        .then_some(answer)
    }

    /// Queues the pending snapshot `state_root`, which no import will hand over (the node
    /// stopped before writing it): the writer loads it by replay and writes it whole.
    pub(crate) fn materialize(&self, state_root: Root) {
        self.send_snapshot(state_root, Job::Materialize(state_root));
    }

    /// Queues `job`, which writes the snapshot `state_root`.
    fn send_snapshot(&self, state_root: Root, job: Job<E>) {
        if !self.send(job) {
            // The thread died (a panic, logged by the runtime): the state stays pending, which
            // costs replays, not data.
            tracing::error!(%state_root, "store writer stopped; the epoch snapshot stays pending");
        }
    }

    /// Records `state`, the state of the newly finalized `checkpoint`, as finalized in the
    /// public-key cache the chain's states share (at once), and queues the store's migration
    /// to the checkpoint.
    pub(crate) fn finalize(
        &self,
        checkpoint: Checkpoint,
        state: CachedBeaconState<E>,
    ) -> Result<(), ChainError> {
        state.set_finalized().map_err(ChainError::State)?;
        let epoch = checkpoint.epoch;
        let job = Job::Finalize {
            checkpoint,
            state: Box::new(state),
        };
        if !self.send(job) {
            // The hot database keeps what the migration would have moved; a restart queues it
            // again.
            tracing::error!(
                epoch,
                "store writer stopped; the finalization migration waits"
            );
        }
        Ok(())
    }

    /// Whether `job` was queued (the thread is alive).
    fn send(&self, job: Job<E>) -> bool {
        self.sender.as_ref().is_some_and(|s| s.send(job).is_ok())
    }

    /// Keeps the writer waiting, once the jobs queued so far are done, until the returned
    /// value is dropped (or for [`HOLD_LIMIT`]): later jobs queue meanwhile, as behind a slow
    /// disk.
    pub(crate) fn hold(&self) -> StoreWritesHeld {
        let (release, held) = mpsc::sync_channel(0);
        self.send(Job::Hold(held));
        StoreWritesHeld { _release: release }
    }

    /// Waits until every job queued so far is done.
    pub(crate) fn flush(&self) {
        let (done, wait) = mpsc::sync_channel(1);
        if self.send(Job::Flush(done)) {
            let _ = wait.recv();
        }
    }
}

impl<E: EthSpec> Drop for StoreWriter<E> {
    fn drop(&mut self) {
        drop(self.sender.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run<E: EthSpec>(
    store: &Store<E>,
    spec: &ChainSpec,
    jobs: Receiver<Job<E>>,
    metrics: &ImportMetrics,
    pool: &ThreadPool,
) {
    // Jobs taken off the channel early, to look for a later migration behind a migration.
    let mut queued = VecDeque::new();
    while let Some(job) = queued.pop_front().or_else(|| jobs.recv().ok()) {
        let started = Instant::now();
        match job {
            Job::Write {
                state_root,
                state,
                fork_choice,
            } => {
                let written = pool.install(|| {
                    store.write_pending_snapshot(state_root, &state, Some(&fork_choice))
                });
                observe_snapshot(metrics, state_root, started, written);
            }
            Job::ForkChoice(fork_choice) => {
                if let Err(error) = store.begin_batch().and_then(|mut batch| {
                    batch.put_fork_choice(&fork_choice)?;
                    batch.commit()
                }) {
                    tracing::error!(%error, "fork choice not persisted; a restart replays from the record before");
                }
            }
            Job::Envelope {
                envelope,
                columns,
                done,
            } => {
                let block_root = envelope.message.beacon_block_root;
                let written = store.begin_batch().and_then(|mut batch| {
                    batch.put_execution_payload_envelope(&envelope)?;
                    for column in &columns {
                        batch.put_data_column(block_root, column)?;
                    }
                    batch.commit()
                });
                // The waiter may be gone (its task cancelled): the write stands.
                let _ = done.send(written);
            }
            Job::Materialize(state_root) => {
                let written = pool.install(|| {
                    let mut replayer = store::StateTransitionReplayer::new(spec);
                    store
                        .get_state(&state_root, &mut replayer)
                        .and_then(|state| match state {
                            Some(state) => store.write_pending_snapshot(state_root, &state, None),
                            None => Ok(false),
                        })
                });
                observe_snapshot(metrics, state_root, started, written);
            }
            Job::Finalize { checkpoint, state } => {
                queued.extend(jobs.try_iter());
                if queued.iter().any(|job| matches!(job, Job::Finalize { .. })) {
                    // A later finalization is queued: its migration moves the split over this
                    // checkpoint too.
                    continue;
                }
                match pool.install(|| migrate_to_finalized(store, &checkpoint, *state)) {
                    Ok(None) => {}
                    Ok(Some(summary)) => {
                        metrics.observe_migration(started.elapsed().as_secs_f64());
                        tracing::debug!(
                            epoch = checkpoint.epoch,
                            root = %checkpoint.root,
                            ?summary,
                            "migrated to the finalized checkpoint"
                        );
                    }
                    Err(error) => {
                        metrics.count_migration_failure();
                        tracing::error!(
                            epoch = checkpoint.epoch,
                            root = %checkpoint.root,
                            %error,
                            "migrating the store to the finalized checkpoint failed; the hot \
                             database keeps its blocks and states until the next finalization \
                             migrates"
                        );
                    }
                }
            }
            Job::Flush(done) => {
                let _ = done.send(());
            }
            Job::Hold(held) => {
                let _ = held.recv_timeout(HOLD_LIMIT);
            }
        }
    }
}

/// Times a snapshot written whole and logs one that failed. `Ok(false)`: not pending any more
/// (pruned by a finalization, or stored whole by it as its checkpoint state).
fn observe_snapshot(
    metrics: &ImportMetrics,
    state_root: Root,
    started: Instant,
    written: Result<bool, StoreError>,
) {
    match written {
        Ok(true) => metrics.observe_snapshot_write(started.elapsed().as_secs_f64()),
        Ok(false) => {}
        Err(error) => tracing::error!(
            %state_root,
            %error,
            "writing an epoch snapshot failed; it stays pending (it loads by replay)"
        ),
    }
}

/// The store's part of a new finalized checkpoint: its state stored whole (written now if it
/// is an epoch snapshot still pending, its file outside the write transaction; else put in a
/// batch, which keeps a state stored already as it is), then the migration. `None` when the
/// split is at or past the checkpoint already (a migration over a later checkpoint ran).
fn migrate_to_finalized<E: EthSpec>(
    store: &Store<E>,
    checkpoint: &Checkpoint,
    mut state: CachedBeaconState<E>,
) -> Result<Option<MigrationSummary>, ChainError> {
    let slot = checkpoint.epoch * E::slots_per_epoch();
    if store.split()?.is_some_and(|split| split.slot >= slot) {
        return Ok(None);
    }
    let state_root = state.hash_tree_root().map_err(ChainError::State)?;
    store.write_pending_snapshot(state_root, &state.state, None)?;
    let mut batch = store.begin_batch()?;
    batch.put_state(state_root, &state.state)?;
    batch.commit()?;
    Ok(Some(store.migrate_to_finalized(checkpoint, state_root)?))
}
