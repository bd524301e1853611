//! Writes the epoch snapshots that imports deferred, on a thread of its own.
//!
//! The import of the block that reaches an epoch boundary stores its post-state as a pending
//! snapshot (`StoreBatch::put_state_deferring_snapshot`): a summary naming the snapshot
//! before it, so the state loads by replaying the blocks since. The whole state (~135 MiB of
//! SSZ at 1,000,000 validators: the encode, the file, its fsync) is then written here, with
//! fork choice as it was after that import, while imports go on. Until it lands, and if the
//! node stops first, nothing is lost: the state still loads by replay, the finalization
//! migration stores a checkpoint state that is still pending whole before it moves the split
//! (`BeaconChain::migrate_to_finalized`), and a restart replays the blocks after the
//! fork choice persisted last, then hands the snapshots still pending to this writer, which
//! loads each by replay and writes it whole.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::Instant;

use prometheus::Histogram;
use store::Store;
use types::{BeaconState, ChainSpec, EthSpec, Root};

enum Job<E: EthSpec> {
    Write {
        state_root: Root,
        state: BeaconState<E>,
        fork_choice: Vec<u8>,
    },
    /// A snapshot left pending by a node that stopped before writing it: loaded by replay,
    /// then written whole (fork choice as persisted).
    Materialize(Root),
    /// Answered once every write queued before it is done.
    Flush(SyncSender<()>),
}

/// The writer thread and its queue. Dropping it waits for the queued writes.
pub(crate) struct SnapshotWriter<E: EthSpec> {
    sender: Option<Sender<Job<E>>>,
    thread: Option<JoinHandle<()>>,
}

impl<E: EthSpec> SnapshotWriter<E> {
    /// Starts the thread; `seconds` observes each write (`beacon_state_snapshot_write_seconds`).
    pub(crate) fn new(store: Arc<Store<E>>, spec: Arc<ChainSpec>, seconds: Histogram) -> Self {
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("snapshot-writer".into())
            .spawn(move || run(&store, &spec, &receiver, &seconds))
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
        self.send(state_root, job);
    }

    /// Queues `job` for the snapshot of `state_root`.
    fn send(&self, state_root: Root, job: Job<E>) {
        if self.sender.as_ref().is_none_or(|s| s.send(job).is_err()) {
            // The thread died (a panic, logged by the runtime): the state stays pending, which
            // costs replays, not data.
            tracing::error!(%state_root, "snapshot writer stopped; the epoch snapshot stays pending");
        }
    }

    /// Queues the pending snapshot `state_root`, which no import will hand over (the node
    /// stopped before writing it): the writer loads it by replay and writes it whole.
    pub(crate) fn materialize(&self, state_root: Root) {
        self.send(state_root, Job::Materialize(state_root));
    }

    /// Waits until every write queued so far is done.
    pub(crate) fn flush(&self) {
        let (done, wait) = mpsc::sync_channel(1);
        if self
            .sender
            .as_ref()
            .is_some_and(|s| s.send(Job::Flush(done)).is_ok())
        {
            let _ = wait.recv();
        }
    }
}

impl<E: EthSpec> Drop for SnapshotWriter<E> {
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
    jobs: &Receiver<Job<E>>,
    seconds: &Histogram,
) {
    for job in jobs {
        let started = Instant::now();
        // `Ok(false)`: not pending any more (pruned by a finalization, or stored whole by it
        // as its checkpoint state).
        let (state_root, written) = match job {
            Job::Write {
                state_root,
                state,
                fork_choice,
            } => (
                state_root,
                store.write_pending_snapshot(state_root, &state, Some(&fork_choice)),
            ),
            Job::Materialize(state_root) => {
                let mut replayer = store::StateTransitionReplayer::new(spec);
                let written = store
                    .get_state(&state_root, &mut replayer)
                    .and_then(|state| match state {
                        Some(state) => store.write_pending_snapshot(state_root, &state, None),
                        None => Ok(false),
                    });
                (state_root, written)
            }
            Job::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        match written {
            Ok(true) => seconds.observe(started.elapsed().as_secs_f64()),
            Ok(false) => {}
            Err(error) => tracing::error!(
                %state_root,
                %error,
                "writing an epoch snapshot failed; it stays pending (it loads by replay)"
            ),
        }
    }
}
