//! What the processor is handed: batchable items for the chain's batch handlers, and tasks
//! (closures) for everything else.

use std::fmt;

use rayon::ThreadPool;

use crate::kind::WorkKind;

/// Why an item was dropped without running. Every drop is counted in
/// `beacon_processor_work_events_dropped_total{kind}` and reported to the item's owner, so a
/// gossip message still gets its verdict (IGNORE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The kind's queue was full and this was its oldest item.
    QueueFull,
    /// The processor was shutting down.
    ShuttingDown,
}

/// What a running item is given: its kind and the pool it must use for data-parallel work.
///
/// Handlers run on a thread of that pool already; `pool().install(..)` and rayon's parallel
/// iterators inside it stay on it, so a burst never runs more threads than the pools own.
pub struct WorkerContext<'a> {
    kind: WorkKind,
    pool: &'a ThreadPool,
}

impl<'a> WorkerContext<'a> {
    pub(crate) fn new(kind: WorkKind, pool: &'a ThreadPool) -> Self {
        Self { kind, pool }
    }

    /// The kind of the running work.
    pub fn kind(&self) -> WorkKind {
        self.kind
    }

    /// The pool for data-parallel work (BLS and KZG batches, hashing). Never use rayon's global
    /// pool from a handler.
    pub fn pool(&self) -> &'a ThreadPool {
        self.pool
    }
}

type RunFn = Box<dyn FnOnce(&WorkerContext<'_>) + Send>;
type DropFn = Box<dyn FnOnce(DropReason) + Send>;

/// A unit of work of a non-batchable kind: a closure run once on a worker, and optionally what
/// to do if it is dropped instead (answer the peer, give the gossip verdict).
pub struct Task {
    kind: WorkKind,
    run: RunFn,
    on_drop: Option<DropFn>,
}

impl Task {
    /// A task of `kind` running `run`.
    pub fn new(kind: WorkKind, run: impl FnOnce(&WorkerContext<'_>) + Send + 'static) -> Self {
        Self {
            kind,
            run: Box::new(run),
            on_drop: None,
        }
    }

    /// Called with the reason if the task is dropped without running.
    pub fn on_drop(mut self, on_drop: impl FnOnce(DropReason) + Send + 'static) -> Self {
        self.on_drop = Some(Box::new(on_drop));
        self
    }

    /// The task's kind.
    pub fn kind(&self) -> WorkKind {
        self.kind
    }

    pub(crate) fn run(self, ctx: &WorkerContext<'_>) {
        (self.run)(ctx)
    }

    pub(crate) fn dropped(self, reason: DropReason) {
        if let Some(on_drop) = self.on_drop {
            on_drop(reason)
        }
    }
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("kind", &self.kind)
            .field("on_drop", &self.on_drop.is_some())
            .finish()
    }
}

/// The chain's handlers for the batchable kinds. The processor hands each call every item it
/// took at once: one item when only one was queued (verify it alone, no batch set-up), up to the
/// kind's batch size otherwise. The handler attributes failures to items: it verifies the batch,
/// and on failure each item individually, giving every item its own verdict.
pub trait BatchHandlers: Send + Sync + 'static {
    /// A gossip `SingleAttestation` with whatever the handler needs to answer for it.
    type Attestation: Send + 'static;
    /// A gossip `SignedAggregateAndProof`.
    type Aggregate: Send + 'static;
    /// A gossip `DataColumnSidecar`.
    type DataColumn: Send + 'static;
    /// A gossip `PayloadAttestationMessage` (Gloas).
    type PayloadAttestation: Send + 'static;

    /// Verifies and imports attestations (up to 64 at once).
    fn process_gossip_attestations(&self, batch: Vec<Self::Attestation>, ctx: &WorkerContext<'_>);

    /// Verifies and imports aggregates (up to 64 at once).
    fn process_gossip_aggregates(&self, batch: Vec<Self::Aggregate>, ctx: &WorkerContext<'_>);

    /// Verifies data columns (every queued one, across blocks, in one KZG batch).
    fn process_gossip_data_columns(&self, batch: Vec<Self::DataColumn>, ctx: &WorkerContext<'_>);

    /// Verifies and applies payload attestation messages (up to 64 at once, one BLS batch).
    fn process_gossip_payload_attestations(
        &self,
        batch: Vec<Self::PayloadAttestation>,
        ctx: &WorkerContext<'_>,
    );

    /// An item that will not run, and why: give its message the IGNORE verdict.
    fn dropped(&self, item: BatchItem<Self>, reason: DropReason);
}

/// One item of a batchable kind.
pub enum BatchItem<H: BatchHandlers + ?Sized> {
    /// A gossip attestation.
    GossipAttestation(H::Attestation),
    /// A gossip aggregate.
    GossipAggregate(H::Aggregate),
    /// A gossip data column.
    GossipDataColumn(H::DataColumn),
    /// A gossip payload attestation message.
    GossipPayloadAttestation(H::PayloadAttestation),
}

impl<H: BatchHandlers + ?Sized> BatchItem<H> {
    /// The item's kind.
    pub fn kind(&self) -> WorkKind {
        match self {
            BatchItem::GossipAttestation(_) => WorkKind::GossipAttestation,
            BatchItem::GossipAggregate(_) => WorkKind::GossipAggregate,
            BatchItem::GossipDataColumn(_) => WorkKind::GossipDataColumn,
            BatchItem::GossipPayloadAttestation(_) => WorkKind::GossipPayloadAttestation,
        }
    }
}

/// Anything the processor accepts.
pub enum Work<H: BatchHandlers + ?Sized> {
    /// An item for the batch handlers.
    Batch(BatchItem<H>),
    /// A closure of a non-batchable kind.
    Task(Task),
}

impl<H: BatchHandlers + ?Sized> Work<H> {
    /// The work's kind.
    pub fn kind(&self) -> WorkKind {
        match self {
            Work::Batch(item) => item.kind(),
            Work::Task(task) => task.kind(),
        }
    }
}

impl<H: BatchHandlers + ?Sized> From<Task> for Work<H> {
    fn from(task: Task) -> Self {
        Work::Task(task)
    }
}

impl<H: BatchHandlers + ?Sized> From<BatchItem<H>> for Work<H> {
    fn from(item: BatchItem<H>) -> Self {
        Work::Batch(item)
    }
}
