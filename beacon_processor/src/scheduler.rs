//! Which work runs next: one bounded queue per kind, strict priority between kinds, and a
//! fairness turn so that no kind waits forever.
//!
//! **Priority.** The next item comes from the highest-priority non-empty queue
//! ([`WorkKind::ALL`] lists kinds highest first).
//!
//! **The fairness turn.** Under strict priority a steady stream of attestations would starve
//! RPC serving and the API for as long as it lasts. So every `fairness_interval`-th dispatch on
//! the main pool (16 by default) goes instead to the non-empty kind that has gone longest
//! without being served, unless a critical kind ([`WorkKind::is_critical`]: chain segments,
//! gossip and RPC blocks, API P0, Gloas envelopes) is waiting, which always runs first. Every
//! non-empty kind is therefore served at least once in every `fairness_interval × kinds`
//! dispatches (≤ 16 × 31 = 496), while the kinds above keep at least 15/16 of the dispatches.

use std::time::Instant;

use crate::kind::{Batching, KIND_COUNT, Pool, WorkKind};
use crate::queue::{BoundedQueue, Queued};
use crate::work::{BatchHandlers, BatchItem, Task, Work};

/// What a worker runs: one task, or a batch of one batchable kind.
pub(crate) enum Dispatch<H: BatchHandlers> {
    Task(Queued<Task>),
    GossipAttestations(Vec<Queued<H::Attestation>>),
    GossipAggregates(Vec<Queued<H::Aggregate>>),
    GossipDataColumns(Vec<Queued<H::DataColumn>>),
    GossipPayloadAttestations(Vec<Queued<H::PayloadAttestation>>),
}

impl<H: BatchHandlers> Dispatch<H> {
    pub(crate) fn kind(&self) -> WorkKind {
        match self {
            Dispatch::Task(task) => task.item.kind(),
            Dispatch::GossipAttestations(_) => WorkKind::GossipAttestation,
            Dispatch::GossipAggregates(_) => WorkKind::GossipAggregate,
            Dispatch::GossipDataColumns(_) => WorkKind::GossipDataColumn,
            Dispatch::GossipPayloadAttestations(_) => WorkKind::GossipPayloadAttestation,
        }
    }
}

/// The queues and the choice between them. Not thread-safe on its own: the processor keeps it
/// behind one lock, held only to push or pop.
pub(crate) struct Scheduler<H: BatchHandlers> {
    attestations: BoundedQueue<H::Attestation>,
    aggregates: BoundedQueue<H::Aggregate>,
    columns: BoundedQueue<H::DataColumn>,
    payload_attestations: BoundedQueue<H::PayloadAttestation>,
    /// Indexed by [`WorkKind::index`]; `None` for the batchable kinds, which have typed queues.
    tasks: Vec<Option<BoundedQueue<Task>>>,
    /// The main-pool dispatch count at which each kind was last served.
    last_served: [u64; KIND_COUNT],
    main_dispatches: u64,
    fairness_interval: u64,
    batching: bool,
}

impl<H: BatchHandlers> Scheduler<H> {
    /// `fairness_interval` of 0 turns the fairness turn off (strict priority only); `batching`
    /// false hands every batchable item alone.
    pub(crate) fn new(fairness_interval: u64, batching: bool) -> Self {
        Self {
            attestations: queue_for(WorkKind::GossipAttestation),
            aggregates: queue_for(WorkKind::GossipAggregate),
            columns: queue_for(WorkKind::GossipDataColumn),
            payload_attestations: queue_for(WorkKind::GossipPayloadAttestation),
            tasks: WorkKind::ALL
                .iter()
                .map(|&kind| (!kind.is_batchable()).then(|| queue_for(kind)))
                .collect(),
            last_served: [0; KIND_COUNT],
            main_dispatches: 0,
            fairness_interval,
            batching,
        }
    }

    /// Queues `work`; returns the item evicted to make room, if the queue was full.
    ///
    /// A task whose kind is batchable has no queue of its own: it is handed back as evicted and
    /// must be refused by the caller (the processor checks before calling).
    pub(crate) fn push(&mut self, work: Work<H>, now: Instant) -> Option<Work<H>> {
        match work {
            Work::Batch(BatchItem::GossipAttestation(a)) => self
                .attestations
                .push(a, now)
                .map(|a| Work::Batch(BatchItem::GossipAttestation(a))),
            Work::Batch(BatchItem::GossipAggregate(a)) => self
                .aggregates
                .push(a, now)
                .map(|a| Work::Batch(BatchItem::GossipAggregate(a))),
            Work::Batch(BatchItem::GossipDataColumn(c)) => self
                .columns
                .push(c, now)
                .map(|c| Work::Batch(BatchItem::GossipDataColumn(c))),
            Work::Batch(BatchItem::GossipPayloadAttestation(p)) => self
                .payload_attestations
                .push(p, now)
                .map(|p| Work::Batch(BatchItem::GossipPayloadAttestation(p))),
            Work::Task(task) => match &mut self.tasks[task.kind().index()] {
                Some(queue) => queue.push(task, now).map(Work::Task),
                None => Some(Work::Task(task)),
            },
        }
    }

    /// The number of items of `kind` waiting.
    pub(crate) fn len(&self, kind: WorkKind) -> usize {
        match kind {
            WorkKind::GossipAttestation => self.attestations.len(),
            WorkKind::GossipAggregate => self.aggregates.len(),
            WorkKind::GossipDataColumn => self.columns.len(),
            WorkKind::GossipPayloadAttestation => self.payload_attestations.len(),
            _ => self.tasks[kind.index()]
                .as_ref()
                .map_or(0, BoundedQueue::len),
        }
    }

    fn is_empty(&self, kind: WorkKind) -> bool {
        self.len(kind) == 0
    }

    /// The next work for a worker of `pool`, as the module documentation describes.
    pub(crate) fn pop_next(&mut self, pool: Pool) -> Option<Dispatch<H>> {
        let waiting = |kind: &WorkKind| kind.pool() == pool && !self.is_empty(*kind);
        let top = WorkKind::ALL.iter().copied().find(waiting)?;
        if pool != Pool::Main {
            return self.pop_kind(top);
        }

        let dispatch = self.main_dispatches + 1;
        let fairness_turn = self.fairness_interval != 0
            && dispatch.is_multiple_of(self.fairness_interval)
            && !top.is_critical();
        let chosen = if fairness_turn {
            // `min_by_key` keeps the first of equals: the higher priority among kinds never served.
            WorkKind::ALL
                .iter()
                .copied()
                .filter(|kind| *kind != top && waiting(kind))
                .min_by_key(|kind| self.last_served[kind.index()])
                .filter(|kind| self.last_served[kind.index()] < self.last_served[top.index()])
                .unwrap_or(top)
        } else {
            top
        };
        self.main_dispatches = dispatch;
        self.last_served[chosen.index()] = self.main_dispatches;
        self.pop_kind(chosen)
    }

    fn batch_size(&self, kind: WorkKind, queued: usize) -> usize {
        match kind.batching() {
            _ if !self.batching => 1,
            Batching::None => 1,
            Batching::UpTo(n) => n,
            Batching::All => queued,
        }
    }

    fn pop_kind(&mut self, kind: WorkKind) -> Option<Dispatch<H>> {
        let n = self.batch_size(kind, self.len(kind));
        match kind {
            WorkKind::GossipAttestation => {
                Some(Dispatch::GossipAttestations(self.attestations.pop_up_to(n)))
            }
            WorkKind::GossipAggregate => {
                Some(Dispatch::GossipAggregates(self.aggregates.pop_up_to(n)))
            }
            WorkKind::GossipDataColumn => {
                Some(Dispatch::GossipDataColumns(self.columns.pop_up_to(n)))
            }
            WorkKind::GossipPayloadAttestation => Some(Dispatch::GossipPayloadAttestations(
                self.payload_attestations.pop_up_to(n),
            )),
            _ => self.tasks[kind.index()]
                .as_mut()
                .and_then(BoundedQueue::pop)
                .map(Dispatch::Task),
        }
    }

    /// Empties every queue, oldest first within each kind.
    pub(crate) fn drain(&mut self) -> Vec<Work<H>> {
        let mut out = Vec::new();
        out.extend(
            self.attestations
                .drain()
                .map(|a| Work::Batch(BatchItem::GossipAttestation(a))),
        );
        out.extend(
            self.aggregates
                .drain()
                .map(|a| Work::Batch(BatchItem::GossipAggregate(a))),
        );
        out.extend(
            self.columns
                .drain()
                .map(|c| Work::Batch(BatchItem::GossipDataColumn(c))),
        );
        out.extend(
            self.payload_attestations
                .drain()
                .map(|p| Work::Batch(BatchItem::GossipPayloadAttestation(p))),
        );
        for queue in self.tasks.iter_mut().flatten() {
            out.extend(queue.drain().map(Work::Task));
        }
        out
    }
}

fn queue_for<T>(kind: WorkKind) -> BoundedQueue<T> {
    BoundedQueue::new(kind.capacity(), kind.order())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::{DropReason, WorkerContext};

    /// Batch items are plain numbers; handlers are never called by the scheduler.
    struct Numbers;

    impl BatchHandlers for Numbers {
        type Attestation = u32;
        type Aggregate = u32;
        type DataColumn = u32;
        type PayloadAttestation = u32;
        fn process_gossip_attestations(&self, _: Vec<u32>, _: &WorkerContext<'_>) {}
        fn process_gossip_aggregates(&self, _: Vec<u32>, _: &WorkerContext<'_>) {}
        fn process_gossip_data_columns(&self, _: Vec<u32>, _: &WorkerContext<'_>) {}
        fn process_gossip_payload_attestations(&self, _: Vec<u32>, _: &WorkerContext<'_>) {}
        fn dropped(&self, _: BatchItem<Self>, _: DropReason) {}
    }

    fn task(kind: WorkKind) -> Work<Numbers> {
        Work::Task(Task::new(kind, |_| {}))
    }

    fn attestation(n: u32) -> Work<Numbers> {
        Work::Batch(BatchItem::GossipAttestation(n))
    }

    fn column(n: u32) -> Work<Numbers> {
        Work::Batch(BatchItem::GossipDataColumn(n))
    }

    fn next_kind(s: &mut Scheduler<Numbers>) -> Option<WorkKind> {
        s.pop_next(Pool::Main).map(|d| d.kind())
    }

    #[test]
    fn a_block_behind_attestations_and_columns_runs_next() {
        let mut s = Scheduler::new(16, true);
        let now = Instant::now();
        for i in 0..10_000 {
            assert!(s.push(attestation(i), now).is_none());
        }
        for i in 0..1_000 {
            assert!(s.push(column(i), now).is_none());
        }
        // Fifteen dispatches, so the sixteenth is a fairness turn but for the block.
        for _ in 0..15 {
            s.pop_next(Pool::Main);
        }
        assert!(s.push(task(WorkKind::GossipBlock), now).is_none());
        assert_eq!(next_kind(&mut s), Some(WorkKind::GossipBlock));
    }

    #[test]
    fn strict_priority_without_the_fairness_turn() {
        let mut s = Scheduler::new(0, true);
        let now = Instant::now();
        for &kind in WorkKind::ALL.iter().rev() {
            if !kind.is_batchable() && kind.pool() == Pool::Main {
                s.push(task(kind), now);
            }
        }
        let order: Vec<_> = std::iter::from_fn(|| next_kind(&mut s)).collect();
        let expected: Vec<_> = WorkKind::ALL
            .iter()
            .copied()
            .filter(|k| !k.is_batchable() && k.pool() == Pool::Main)
            .collect();
        assert_eq!(order, expected);
    }

    #[test]
    fn the_fairness_turn_serves_the_kind_waiting_longest() {
        let mut s = Scheduler::new(16, false);
        let now = Instant::now();
        for i in 0..1_000 {
            s.push(attestation(i), now);
        }
        s.push(task(WorkKind::ApiRequestP1), now);
        s.push(task(WorkKind::RpcStatus), now);
        let order: Vec<_> = (0..40).filter_map(|_| next_kind(&mut s)).collect();
        // Turns 16 and 32 are fairness turns: the RPC status (higher of two never served), then
        // the API request.
        assert_eq!(order[15], WorkKind::RpcStatus);
        assert_eq!(order[31], WorkKind::ApiRequestP1);
        assert_eq!(
            order
                .iter()
                .filter(|&&k| k == WorkKind::GossipAttestation)
                .count(),
            38
        );
    }

    #[test]
    fn a_critical_kind_is_never_displaced_by_the_fairness_turn() {
        let mut s = Scheduler::new(2, false);
        let now = Instant::now();
        for _ in 0..10 {
            s.push(task(WorkKind::GossipBlock), now);
        }
        s.push(task(WorkKind::ApiRequestP1), now);
        let order: Vec<_> = std::iter::from_fn(|| next_kind(&mut s)).collect();
        assert_eq!(order.len(), 11);
        assert_eq!(order[10], WorkKind::ApiRequestP1);
    }

    #[test]
    fn batches_take_up_to_the_kinds_size_and_columns_take_everything() {
        let mut s = Scheduler::new(0, true);
        let now = Instant::now();
        for i in 0..100 {
            s.push(attestation(i), now);
        }
        for i in 0..300 {
            s.push(column(i), now);
        }
        let sizes: Vec<_> = std::iter::from_fn(|| s.pop_next(Pool::Main))
            .map(|d| match d {
                Dispatch::GossipAttestations(v) => (WorkKind::GossipAttestation, v.len()),
                Dispatch::GossipDataColumns(v) => (WorkKind::GossipDataColumn, v.len()),
                other => (other.kind(), 1),
            })
            .collect();
        assert_eq!(
            sizes,
            [
                (WorkKind::GossipDataColumn, 300),
                (WorkKind::GossipAttestation, 64),
                (WorkKind::GossipAttestation, 36)
            ]
        );
    }

    #[test]
    fn backfill_is_only_served_to_the_backfill_pool() {
        let mut s = Scheduler::new(16, true);
        s.push(task(WorkKind::BackfillSegment), Instant::now());
        assert!(s.pop_next(Pool::Main).is_none());
        assert_eq!(s.len(WorkKind::BackfillSegment), 1);
        assert_eq!(
            s.pop_next(Pool::Backfill).map(|d| d.kind()),
            Some(WorkKind::BackfillSegment)
        );
    }

    #[test]
    fn a_task_of_a_batchable_kind_is_handed_back() {
        let mut s = Scheduler::<Numbers>::new(16, true);
        let back = s.push(task(WorkKind::GossipAttestation), Instant::now());
        assert!(matches!(back, Some(Work::Task(_))));
        assert_eq!(s.len(WorkKind::GossipAttestation), 0);
    }
}
