//! The processor's Prometheus metrics. Per-kind children are resolved once at start-up, so the
//! hot path never hashes a label.

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry,
};

use crate::kind::{KIND_COUNT, WorkKind};

/// Queue time: ~10 µs when a worker is idle, up to seconds for low kinds behind a burst.
const QUEUE_TIME_BUCKETS: &[f64] = &[
    1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0,
];

/// Worker time: a status answer takes microseconds, one attestation ~1 ms, a 64-attestation
/// batch ~20 ms and 128 columns at 48 blobs ~0.35 s on two cores (the bench), a chain segment
/// seconds.
const WORKER_TIME_BUCKETS: &[f64] = &[
    1e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// Batch sizes: 1 to 64 for attestations and aggregates, up to the column queue's 1,024.
const BATCH_SIZE_BUCKETS: &[f64] = &[
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// One kind's metric children.
pub(crate) struct KindMetrics {
    pub(crate) queue_length: IntGauge,
    pub(crate) received: IntCounter,
    pub(crate) dropped: IntCounter,
    pub(crate) panicked: IntCounter,
    pub(crate) queue_time: Histogram,
    pub(crate) worker_time: Histogram,
    pub(crate) batch_size: Histogram,
}

/// Every metric of the processor.
pub(crate) struct Metrics {
    kinds: Vec<KindMetrics>,
    /// Busy workers of the main and the backfill pool.
    pub(crate) busy_workers: [IntGauge; 2],
    busy_workers_vec: IntGaugeVec,
    queue_length: IntGaugeVec,
    received: IntCounterVec,
    dropped: IntCounterVec,
    panicked: IntCounterVec,
    queue_time: HistogramVec,
    worker_time: HistogramVec,
    batch_size: HistogramVec,
}

impl Metrics {
    pub(crate) fn new() -> Result<Self, prometheus::Error> {
        let kind = &["kind"];
        let queue_length = IntGaugeVec::new(
            Opts::new(
                "beacon_processor_queue_length",
                "Items waiting in the queue of each kind.",
            ),
            kind,
        )?;
        let received = IntCounterVec::new(
            Opts::new(
                "beacon_processor_work_events_received_total",
                "Items submitted to the processor, by kind.",
            ),
            kind,
        )?;
        let dropped = IntCounterVec::new(
            Opts::new(
                "beacon_processor_work_events_dropped_total",
                "Items dropped without running (queue full or shutting down), by kind.",
            ),
            kind,
        )?;
        let panicked = IntCounterVec::new(
            Opts::new(
                "beacon_processor_work_panics_total",
                "Work items (tasks or batches) whose handler panicked, by kind.",
            ),
            kind,
        )?;
        let queue_time = HistogramVec::new(
            HistogramOpts::new(
                "beacon_processor_queue_time_seconds",
                "Time from submission until a worker took the item, by kind.",
            )
            .buckets(QUEUE_TIME_BUCKETS.to_vec()),
            kind,
        )?;
        let worker_time = HistogramVec::new(
            HistogramOpts::new(
                "beacon_processor_worker_time_seconds",
                "Time a worker spent on one task or batch, by kind.",
            )
            .buckets(WORKER_TIME_BUCKETS.to_vec()),
            kind,
        )?;
        let batch_size = HistogramVec::new(
            HistogramOpts::new(
                "beacon_processor_batch_size",
                "Items handed to a handler at once, by kind.",
            )
            .buckets(BATCH_SIZE_BUCKETS.to_vec()),
            kind,
        )?;
        let busy_workers = IntGaugeVec::new(
            Opts::new(
                "beacon_processor_busy_workers",
                "Workers running a task or batch, by pool.",
            ),
            &["pool"],
        )?;

        let kinds = WorkKind::ALL
            .iter()
            .map(|k| {
                let label = &[k.as_str()];
                KindMetrics {
                    queue_length: queue_length.with_label_values(label),
                    received: received.with_label_values(label),
                    dropped: dropped.with_label_values(label),
                    panicked: panicked.with_label_values(label),
                    queue_time: queue_time.with_label_values(label),
                    worker_time: worker_time.with_label_values(label),
                    batch_size: batch_size.with_label_values(label),
                }
            })
            .collect::<Vec<_>>();
        debug_assert_eq!(kinds.len(), KIND_COUNT);

        Ok(Self {
            kinds,
            busy_workers: [
                busy_workers.with_label_values(&["main"]),
                busy_workers.with_label_values(&["backfill"]),
            ],
            busy_workers_vec: busy_workers,
            queue_length,
            received,
            dropped,
            panicked,
            queue_time,
            worker_time,
            batch_size,
        })
    }

    pub(crate) fn kind(&self, kind: WorkKind) -> &KindMetrics {
        &self.kinds[kind.index()]
    }

    pub(crate) fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.queue_length.clone()))?;
        registry.register(Box::new(self.received.clone()))?;
        registry.register(Box::new(self.dropped.clone()))?;
        registry.register(Box::new(self.panicked.clone()))?;
        registry.register(Box::new(self.queue_time.clone()))?;
        registry.register(Box::new(self.worker_time.clone()))?;
        registry.register(Box::new(self.batch_size.clone()))?;
        registry.register(Box::new(self.busy_workers_vec.clone()))?;
        Ok(())
    }
}
