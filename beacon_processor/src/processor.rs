//! The processor: queues behind one lock, and workers that run on the processor's rayon pools.
//!
//! A worker is a job on a pool that pops and runs work until the pool's queues are empty. A
//! submission queues the item and, when the pool has fewer workers than threads, starts one, so
//! workers never wait on an empty queue and a submission never waits on a worker. Handlers' own
//! parallel work runs on the same pool (they are on one of its threads), which is what bounds
//! the busy threads: `main_threads + backfill_threads` at most, whatever the handlers do.
//!
//! The pools may be built before the processor ([`ProcessorPools`]) and shared: the chain runs
//! the data-parallel work it is handed outside a handler on the main pool, and the nodes of one
//! `arbor dev` process share one set of pools, each with its own queues.

use std::any::Any;
use std::cell::Cell;
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};
use prometheus::Registry;
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::kind::{Pool, WorkKind};
use crate::metrics::Metrics;
use crate::scheduler::{Dispatch, Scheduler};
use crate::work::{BatchHandlers, BatchItem, DropReason, Task, Work, WorkerContext};

/// How the processor is sized.
#[derive(Debug, Clone)]
pub struct BeaconProcessorConfig {
    /// Threads of the main pool (gossip, RPC, range sync, API, timers, and every handler's
    /// data-parallel work). Default: the machine's cores.
    pub main_threads: usize,
    /// Threads of the backfill pool. Default: 1.
    pub backfill_threads: usize,
    /// Every this many main-pool dispatches one goes to the kind waiting longest (the
    /// fairness turn, see the README); 0 for strict priority only. Default: 16.
    pub fairness_interval: u64,
    /// Whether batchable kinds are handed in batches. Default: true; false hands every item
    /// alone (for benchmarks and for debugging a batch handler).
    pub batching: bool,
    /// Pools built beforehand ([`ProcessorPools::new`]) to run on, shared with whoever else
    /// holds them; `main_threads` and `backfill_threads` are then not used. Default: `None`,
    /// the processor builds its own.
    pub pools: Option<ProcessorPools>,
}

impl Default for BeaconProcessorConfig {
    fn default() -> Self {
        Self {
            main_threads: std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
            backfill_threads: 1,
            fairness_interval: 16,
            batching: true,
            pools: None,
        }
    }
}

/// The stack of a pool thread: the chain's work runs there (KZG on 128 KiB blobs, copied on
/// the stack in an unoptimised build, and state transitions), more than a thread's default
/// 2 MiB holds. Address space only, until used.
const WORKER_STACK_BYTES: usize = 8 << 20;

/// The processor's two rayon pools, **main** (`bp-main-*`) and **backfill** (`bp-backfill-*`).
/// Built before the processor when others must share them (the chain's data-parallel work, the
/// other nodes of an `arbor dev` process): the threads of the pools are then the whole CPU
/// budget of everyone who holds them. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ProcessorPools {
    main: Arc<ThreadPool>,
    backfill: Arc<ThreadPool>,
}

impl ProcessorPools {
    /// Starts a main pool of `main_threads` and a backfill pool of `backfill_threads` threads
    /// (each at least one).
    pub fn new(main_threads: usize, backfill_threads: usize) -> Result<Self, BuildError> {
        let pool = |pool: Pool, threads: usize| {
            let name = pool_name(pool);
            if threads == 0 {
                return Err(BuildError::NoThreads { pool: name });
            }
            ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(move |i| format!("bp-{name}-{i}"))
                .stack_size(WORKER_STACK_BYTES)
                .build()
                .map(Arc::new)
                .map_err(|source| BuildError::Pool { pool: name, source })
        };
        Ok(Self {
            main: pool(Pool::Main, main_threads)?,
            backfill: pool(Pool::Backfill, backfill_threads)?,
        })
    }

    /// The main pool: every kind but backfill, and the chain's data-parallel work.
    pub fn main(&self) -> &Arc<ThreadPool> {
        &self.main
    }

    /// The backfill pool.
    pub fn backfill(&self) -> &Arc<ThreadPool> {
        &self.backfill
    }

    /// The pool `pool` names.
    pub fn get(&self, pool: Pool) -> &Arc<ThreadPool> {
        match pool {
            Pool::Main => &self.main,
            Pool::Backfill => &self.backfill,
        }
    }

    /// The threads of both pools: the most that can be busy on them at once.
    pub fn threads(&self) -> usize {
        self.main.current_num_threads() + self.backfill.current_num_threads()
    }
}

/// Why the processor could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A pool was configured with no threads.
    #[error("the {pool} pool needs at least one thread")]
    NoThreads {
        /// The pool's name.
        pool: &'static str,
    },
    /// The operating system refused a thread.
    #[error("could not start the {pool} pool: {source}")]
    Pool {
        /// The pool's name.
        pool: &'static str,
        /// Rayon's error.
        source: rayon::ThreadPoolBuildError,
    },
    /// A metric could not be created.
    #[error("could not create the processor's metrics: {0}")]
    Metrics(#[from] prometheus::Error),
}

/// Why a submission was refused.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The processor is shutting down; the item was dropped and its drop handler called.
    #[error("the beacon processor is shutting down; {0} work was dropped")]
    ShuttingDown(WorkKind),
    /// A task was submitted for a kind that goes to the batch handlers; it is handed back.
    #[error("{} work goes to the batch handlers, not a task", .0.kind())]
    BatchableKindAsTask(Task),
}

/// What [`BeaconProcessor::shutdown`] does with queued work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownMode {
    /// Run everything queued, then return.
    Drain,
    /// Drop everything queued (each item's drop handler is called with
    /// [`DropReason::ShuttingDown`]), wait for running work, then return.
    DropQueued,
}

thread_local! {
    /// Whether this thread is inside a worker already: a pool thread waiting for its handler's
    /// parallel pieces may be handed another worker job by rayon.
    static IN_WORKER: Cell<bool> = const { Cell::new(false) };
}

struct State<H: BatchHandlers> {
    scheduler: Scheduler<H>,
    /// Workers started and not yet finished, per pool ([`pool_index`]).
    workers: [usize; 2],
    accepting: bool,
}

struct Shared<H: BatchHandlers> {
    state: Mutex<State<H>>,
    /// Signalled when a pool's last worker finishes.
    idle: Condvar,
    handlers: H,
    metrics: Metrics,
    pools: ProcessorPools,
}

const fn pool_index(pool: Pool) -> usize {
    match pool {
        Pool::Main => 0,
        Pool::Backfill => 1,
    }
}

const fn pool_name(pool: Pool) -> &'static str {
    match pool {
        Pool::Main => "main",
        Pool::Backfill => "backfill",
    }
}

/// The node's work scheduler: bounded per-kind queues, strict priority with a fairness turn,
/// batching for attestations, aggregates and data columns, and the rayon pools every handler
/// runs on. Cheap to clone; every clone submits to the same queues.
pub struct BeaconProcessor<H: BatchHandlers> {
    shared: Arc<Shared<H>>,
}

impl<H: BatchHandlers> Clone for BeaconProcessor<H> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<H: BatchHandlers> BeaconProcessor<H> {
    /// Starts the pools (or takes `config.pools`). Nothing runs until work is submitted.
    pub fn new(config: BeaconProcessorConfig, handlers: H) -> Result<Self, BuildError> {
        let pools = match config.pools {
            Some(pools) => pools,
            None => ProcessorPools::new(config.main_threads, config.backfill_threads)?,
        };
        Ok(Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    scheduler: Scheduler::new(config.fairness_interval, config.batching),
                    workers: [0; 2],
                    accepting: true,
                }),
                idle: Condvar::new(),
                handlers,
                metrics: Metrics::new()?,
                pools,
            }),
        })
    }

    /// Registers the processor's metrics (`beacon_processor_*`).
    pub fn register_metrics(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        self.shared.metrics.register(registry)
    }

    /// Queues `work`. Never waits for a worker: the lock is held only to push. If the kind's
    /// queue is full its oldest item is dropped (and reported to its owner).
    pub fn submit(&self, work: impl Into<Work<H>>) -> Result<(), SubmitError> {
        self.shared.submit(work.into())
    }

    /// The number of items of `kind` waiting.
    pub fn queued(&self, kind: WorkKind) -> usize {
        self.shared.state.lock().scheduler.len(kind)
    }

    /// The pool that `kind`'s work runs on, for code outside a handler that must share it.
    pub fn pool(&self, kind: WorkKind) -> &ThreadPool {
        self.shared.pools.get(kind.pool())
    }

    /// Both pools.
    pub fn pools(&self) -> &ProcessorPools {
        &self.shared.pools
    }

    /// The batch handlers.
    pub fn handlers(&self) -> &H {
        &self.shared.handlers
    }

    /// Stops accepting work and returns once no worker runs: after the queues are empty
    /// ([`ShutdownMode::Drain`]) or after dropping what is queued ([`ShutdownMode::DropQueued`]).
    /// Called from inside a handler it does not wait (the caller is itself a worker).
    pub fn shutdown(&self, mode: ShutdownMode) {
        self.shared.shutdown(mode)
    }
}

impl<H: BatchHandlers> Shared<H> {
    fn submit(self: &Arc<Self>, work: Work<H>) -> Result<(), SubmitError> {
        let kind = work.kind();
        let metrics = self.metrics.kind(kind);
        metrics.received.inc();
        let work = match work {
            Work::Task(task) if kind.is_batchable() => {
                return Err(SubmitError::BatchableKindAsTask(task));
            }
            work => work,
        };
        let pool = kind.pool();
        let now = Instant::now();

        let mut state = self.state.lock();
        if !state.accepting {
            drop(state);
            self.drop_work(work, DropReason::ShuttingDown);
            return Err(SubmitError::ShuttingDown(kind));
        }
        let evicted = state.scheduler.push(work, now);
        metrics.queue_length.set(state.scheduler.len(kind) as i64);
        let threads = self.pools.get(pool).current_num_threads();
        let start_worker = state.workers[pool_index(pool)] < threads;
        if start_worker {
            state.workers[pool_index(pool)] += 1;
        }
        drop(state);

        if let Some(evicted) = evicted {
            self.drop_work(evicted, DropReason::QueueFull);
        }
        if start_worker {
            self.start_worker(pool);
        }
        Ok(())
    }

    /// Runs a worker on `pool`; the caller has counted it in `State::workers`.
    fn start_worker(self: &Arc<Self>, pool: Pool) {
        let shared = Arc::clone(self);
        self.pools.get(pool).spawn(move || shared.worker(pool));
    }

    /// Pops and runs work for `pool` until its queues are empty.
    ///
    /// Rayon may start this job on a thread that is waiting for a handler's parallel pieces
    /// (inside another worker). Such a nested worker runs one item and hands its place to a new
    /// job, so the waiting handler is delayed by at most one item, never by a whole queue.
    fn worker(self: &Arc<Self>, pool: Pool) {
        let nested = IN_WORKER.with(|w| w.replace(true));
        loop {
            let next = {
                let mut state = self.state.lock();
                match state.scheduler.pop_next(pool) {
                    Some(dispatch) => {
                        let kind = dispatch.kind();
                        self.metrics
                            .kind(kind)
                            .queue_length
                            .set(state.scheduler.len(kind) as i64);
                        Some(dispatch)
                    }
                    None => {
                        state.workers[pool_index(pool)] -= 1;
                        if state.workers[pool_index(pool)] == 0 {
                            self.idle.notify_all();
                        }
                        None
                    }
                }
            };
            let Some(dispatch) = next else { break };
            self.execute(dispatch, pool);
            if nested {
                self.start_worker(pool);
                break;
            }
            // Work handed to the pool from outside the processor (the chain's data-parallel
            // work called off the pools, the store writer's encodes) waits for a thread of the
            // pool, which a worker holds until the queues are empty: between items it gives
            // one pending job of the pool its turn, so such work waits one item, not a burst.
            rayon::yield_now();
        }
        IN_WORKER.with(|w| w.set(nested));
    }

    fn execute(&self, dispatch: Dispatch<H>, pool: Pool) {
        let kind = dispatch.kind();
        let metrics = self.metrics.kind(kind);
        let ctx = WorkerContext::new(kind, self.pools.get(pool));
        let busy = &self.metrics.busy_workers[pool_index(pool)];
        busy.inc();
        let started = Instant::now();
        let (items, outcome) = match dispatch {
            Dispatch::Task(task) => {
                metrics
                    .queue_time
                    .observe(started.duration_since(task.queued_at).as_secs_f64());
                (1, catch_unwind(AssertUnwindSafe(|| task.item.run(&ctx))))
            }
            Dispatch::GossipAttestations(batch) => {
                let batch = self.unqueue(batch, started, kind);
                let n = batch.len();
                (
                    n,
                    catch_unwind(AssertUnwindSafe(|| {
                        self.handlers.process_gossip_attestations(batch, &ctx)
                    })),
                )
            }
            Dispatch::GossipAggregates(batch) => {
                let batch = self.unqueue(batch, started, kind);
                let n = batch.len();
                (
                    n,
                    catch_unwind(AssertUnwindSafe(|| {
                        self.handlers.process_gossip_aggregates(batch, &ctx)
                    })),
                )
            }
            Dispatch::GossipDataColumns(batch) => {
                let batch = self.unqueue(batch, started, kind);
                let n = batch.len();
                (
                    n,
                    catch_unwind(AssertUnwindSafe(|| {
                        self.handlers.process_gossip_data_columns(batch, &ctx)
                    })),
                )
            }
            Dispatch::GossipPayloadAttestations(batch) => {
                let batch = self.unqueue(batch, started, kind);
                let n = batch.len();
                (
                    n,
                    catch_unwind(AssertUnwindSafe(|| {
                        self.handlers
                            .process_gossip_payload_attestations(batch, &ctx)
                    })),
                )
            }
        };
        metrics.worker_time.observe(started.elapsed().as_secs_f64());
        busy.dec();
        if let Err(panic) = outcome {
            metrics.panicked.inc();
            tracing::error!(
                %kind,
                items,
                panic = panic_message(&*panic),
                "beacon processor work panicked; the worker goes on"
            );
        }
    }

    /// Records the batch's queue times and size, and strips the timestamps.
    fn unqueue<T>(
        &self,
        batch: Vec<crate::queue::Queued<T>>,
        now: Instant,
        kind: WorkKind,
    ) -> Vec<T> {
        let metrics = self.metrics.kind(kind);
        metrics.batch_size.observe(batch.len() as f64);
        batch
            .into_iter()
            .map(|q| {
                metrics
                    .queue_time
                    .observe(now.duration_since(q.queued_at).as_secs_f64());
                q.item
            })
            .collect()
    }

    /// Counts the drop and tells the item's owner. A panicking drop handler is caught: the
    /// submitter (a network or API task) must not be taken down by it.
    fn drop_work(&self, work: Work<H>, reason: DropReason) {
        let kind = work.kind();
        let metrics = self.metrics.kind(kind);
        metrics.dropped.inc();
        tracing::debug!(%kind, ?reason, "beacon processor dropped work");
        let outcome = catch_unwind(AssertUnwindSafe(|| match work {
            Work::Task(task) => task.dropped(reason),
            Work::Batch(item) => self.handlers.dropped(item, reason),
        }));
        if let Err(panic) = outcome {
            metrics.panicked.inc();
            tracing::error!(%kind, panic = panic_message(&*panic), "drop handler panicked");
        }
    }

    fn drain_queues(&self) {
        let dropped = {
            let mut state = self.state.lock();
            let dropped = state.scheduler.drain();
            for &kind in WorkKind::ALL {
                self.metrics.kind(kind).queue_length.set(0);
            }
            dropped
        };
        for work in dropped {
            self.drop_work(work, DropReason::ShuttingDown);
        }
    }

    fn shutdown(&self, mode: ShutdownMode) {
        self.state.lock().accepting = false;
        if mode == ShutdownMode::DropQueued {
            self.drain_queues();
        }
        if IN_WORKER.with(Cell::get) {
            return;
        }
        let mut state = self.state.lock();
        while state.workers.iter().any(|&w| w > 0) {
            self.idle.wait(&mut state);
        }
    }
}

impl<H: BatchHandlers> Drop for Shared<H> {
    /// The last handle is gone: whatever is still queued is dropped and reported, not lost.
    fn drop(&mut self) {
        self.state.get_mut().accepting = false;
        self.drain_queues();
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string panic payload)")
}

// Compile-time check that the handle can be shared with network and API tasks.
const _: fn() = || {
    fn check<T: Send + Sync>() {}
    struct NoBatches;
    impl BatchHandlers for NoBatches {
        type Attestation = ();
        type Aggregate = ();
        type DataColumn = ();
        type PayloadAttestation = ();
        fn process_gossip_attestations(&self, _: Vec<()>, _: &WorkerContext<'_>) {}
        fn process_gossip_aggregates(&self, _: Vec<()>, _: &WorkerContext<'_>) {}
        fn process_gossip_data_columns(&self, _: Vec<()>, _: &WorkerContext<'_>) {}
        fn process_gossip_payload_attestations(&self, _: Vec<()>, _: &WorkerContext<'_>) {}
        fn dropped(&self, _: BatchItem<Self>, _: DropReason) {}
    }
    check::<BeaconProcessor<NoBatches>>();
};
