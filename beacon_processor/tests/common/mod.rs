//! Fake work for the processor's tests: handlers that record what ran, in which order and on
//! which thread, and count the threads busy with handler work.

#![allow(dead_code, unreachable_pub)]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a poisoned lock fails the test"
)]

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use beacon_processor::{
    BatchHandlers, BatchItem, BeaconProcessor, BeaconProcessorConfig, DropReason, Task, WorkKind,
    WorkerContext,
};

/// A test item: an id and a payload (so a flood holds real memory).
#[derive(Debug)]
pub struct Item {
    pub id: u64,
    pub payload: Vec<u8>,
    /// Panic when handled.
    pub panic: bool,
}

impl Item {
    pub fn new(id: u64) -> Self {
        Self {
            id,
            payload: Vec::new(),
            panic: false,
        }
    }

    pub fn with_payload(id: u64, bytes: usize) -> Self {
        Self {
            id,
            payload: vec![id as u8; bytes],
            panic: false,
        }
    }
}

/// What ran: the kind and the ids, one entry per task or batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub kind: WorkKind,
    pub ids: Vec<u64>,
}

/// Counts threads inside handler work: a thread counts once however deeply it nests.
#[derive(Default)]
pub struct BusyThreads {
    now: AtomicUsize,
    max: AtomicUsize,
}

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

impl BusyThreads {
    pub fn enter(&self) -> BusyGuard<'_> {
        DEPTH.with(|d| {
            if d.get() == 0 {
                let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
                self.max.fetch_max(now, Ordering::SeqCst);
            }
            d.set(d.get() + 1);
        });
        BusyGuard(self)
    }

    pub fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

pub struct BusyGuard<'a>(&'a BusyThreads);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        DEPTH.with(|d| {
            d.set(d.get() - 1);
            if d.get() == 0 {
                self.0.now.fetch_sub(1, Ordering::SeqCst);
            }
        });
    }
}

/// Spins for about `iterations` rounds of cheap arithmetic (CPU work, not a sleep).
pub fn spin(iterations: u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..iterations {
        x = std::hint::black_box(x.rotate_left(7) ^ i).wrapping_mul(0x2545_f491_4f6c_dd1d);
    }
    x
}

/// Handlers that record every batch, every drop, and the threads they ran on.
#[derive(Default)]
pub struct Recorder {
    pub ran: Mutex<Vec<Ran>>,
    pub dropped: Mutex<Vec<(WorkKind, u64, DropReason)>>,
    pub busy: BusyThreads,
    /// Spin rounds per item, split across the pool (0: none).
    pub work_per_item: u64,
    /// Names of threads handler code ran on.
    pub threads: Mutex<std::collections::BTreeSet<String>>,
}

impl Recorder {
    pub fn with_work(work_per_item: u64) -> Self {
        Self {
            work_per_item,
            ..Self::default()
        }
    }

    fn handle(&self, kind: WorkKind, batch: Vec<Item>, ctx: &WorkerContext<'_>) {
        let _busy = self.busy.enter();
        self.note_thread();
        if self.work_per_item > 0 {
            use rayon::prelude::*;
            let work = self.work_per_item;
            ctx.pool().install(|| {
                batch.par_iter().for_each(|_| {
                    let _busy = self.busy.enter();
                    self.note_thread();
                    std::hint::black_box(spin(work));
                })
            });
        }
        let ids = batch.iter().map(|i| i.id).collect();
        self.ran.lock().unwrap().push(Ran { kind, ids });
        if batch.iter().any(|i| i.panic) {
            panic!("item asked to panic");
        }
    }

    pub fn note_thread(&self) {
        let name = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_owned();
        self.threads.lock().unwrap().insert(name);
    }

    pub fn record(&self, kind: WorkKind, id: u64) {
        self.ran.lock().unwrap().push(Ran {
            kind,
            ids: vec![id],
        });
    }

    pub fn ran(&self) -> Vec<Ran> {
        self.ran.lock().unwrap().clone()
    }

    pub fn dropped_count(&self) -> usize {
        self.dropped.lock().unwrap().len()
    }
}

/// The processor's handlers: an `Arc<Recorder>` so tasks can record into the same place.
#[derive(Clone, Default)]
pub struct Handlers(pub Arc<Recorder>);

impl BatchHandlers for Handlers {
    type Attestation = Item;
    type Aggregate = Item;
    type DataColumn = Item;
    type PayloadAttestation = Item;

    fn process_gossip_attestations(&self, batch: Vec<Item>, ctx: &WorkerContext<'_>) {
        self.0.handle(WorkKind::GossipAttestation, batch, ctx)
    }
    fn process_gossip_aggregates(&self, batch: Vec<Item>, ctx: &WorkerContext<'_>) {
        self.0.handle(WorkKind::GossipAggregate, batch, ctx)
    }
    fn process_gossip_data_columns(&self, batch: Vec<Item>, ctx: &WorkerContext<'_>) {
        self.0.handle(WorkKind::GossipDataColumn, batch, ctx)
    }
    fn process_gossip_payload_attestations(&self, batch: Vec<Item>, ctx: &WorkerContext<'_>) {
        self.0
            .handle(WorkKind::GossipPayloadAttestation, batch, ctx)
    }
    fn dropped(&self, item: BatchItem<Self>, reason: DropReason) {
        let kind = item.kind();
        let (BatchItem::GossipAttestation(i)
        | BatchItem::GossipAggregate(i)
        | BatchItem::GossipDataColumn(i)
        | BatchItem::GossipPayloadAttestation(i)) = item;
        self.0.dropped.lock().unwrap().push((kind, i.id, reason));
    }
}

pub type Processor = BeaconProcessor<Handlers>;

pub fn processor(config: BeaconProcessorConfig, recorder: Arc<Recorder>) -> Processor {
    BeaconProcessor::new(config, Handlers(recorder)).expect("the processor starts")
}

pub fn one_thread() -> BeaconProcessorConfig {
    BeaconProcessorConfig {
        main_threads: 1,
        ..BeaconProcessorConfig::default()
    }
}

/// A task of `kind` that records `id` when it runs and when it is dropped.
pub fn task(recorder: &Arc<Recorder>, kind: WorkKind, id: u64) -> Task {
    let on_run = Arc::clone(recorder);
    let on_drop = Arc::clone(recorder);
    Task::new(kind, move |ctx| {
        let _busy = on_run.busy.enter();
        on_run.note_thread();
        if on_run.work_per_item > 0 {
            use rayon::prelude::*;
            let work = on_run.work_per_item;
            ctx.pool().install(|| {
                (0..4).into_par_iter().for_each(|_| {
                    let _busy = on_run.busy.enter();
                    on_run.note_thread();
                    std::hint::black_box(spin(work / 4));
                })
            });
        }
        on_run.record(kind, id);
    })
    .on_drop(move |reason| on_drop.dropped.lock().unwrap().push((kind, id, reason)))
}

/// Holds the main pool's only worker until released, so that work can be queued behind it.
pub struct Blocker {
    release: mpsc::Sender<()>,
}

impl Blocker {
    /// Submits the blocking task and returns once it runs.
    pub fn start(processor: &Processor) -> Self {
        Self::start_as(processor, WorkKind::ApiRequestP0)
    }

    pub fn start_as(processor: &Processor, kind: WorkKind) -> Self {
        let (started_tx, started_rx) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        processor
            .submit(Task::new(kind, move |_| {
                started_tx.send(()).expect("the test waits for the start");
                // A dropped sender releases too, so a failing test never hangs here.
                let _ = release_rx.recv_timeout(Duration::from_secs(60));
            }))
            .expect("the processor accepts work");
        started_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the blocking task starts");
        Self { release }
    }

    pub fn release(self) {
        let _ = self.release.send(());
    }
}

pub fn attestation(id: u64) -> BatchItem<Handlers> {
    BatchItem::GossipAttestation(Item::new(id))
}

pub fn aggregate(id: u64) -> BatchItem<Handlers> {
    BatchItem::GossipAggregate(Item::new(id))
}

pub fn column(id: u64) -> BatchItem<Handlers> {
    BatchItem::GossipDataColumn(Item::new(id))
}

/// Waits for `condition`, failing the test after 30 s.
pub fn wait_for(condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "condition not met in 30 s"
        );
        std::thread::yield_now();
    }
}
