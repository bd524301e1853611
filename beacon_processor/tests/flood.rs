//! A flood of 1,000,000 items: every queue stays within its bound, every item either runs or is
//! dropped and reported, and the process's memory stays within a stated cap. Alone in its test
//! binary so the memory reading is this test's own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use beacon_processor::{
    BatchHandlers, BatchItem, BeaconProcessor, BeaconProcessorConfig, DropReason, ShutdownMode,
    Task, WorkKind, WorkerContext,
};
use prometheus::Registry;

const ITEMS: u64 = 1_000_000;
const PAYLOAD_BYTES: usize = 256;
/// Memory the flood may add to the process. Unbounded queues would hold the whole flood:
/// 1,000,000 × ~300 bytes ≈ 300 MiB. The bounded ones hold at most ~47,000 of these items
/// (~15 MiB); the rest of the cap is allocator slack and thread stacks.
const MEMORY_CAP_BYTES: u64 = 64 << 20;

#[derive(Default)]
struct Counts {
    ran: AtomicU64,
    dropped: AtomicU64,
}

struct Payload(#[allow(dead_code)] Vec<u8>);

fn payload(id: u64) -> Payload {
    Payload(vec![id as u8; PAYLOAD_BYTES])
}

fn cpu(items: usize) {
    let mut x = 1u64;
    for i in 0..items as u64 * 500 {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
}

#[derive(Clone, Default)]
struct Counting(Arc<Counts>);

impl Counting {
    fn ran(&self, n: usize) {
        cpu(n);
        self.0.ran.fetch_add(n as u64, Ordering::Relaxed);
    }
}

impl BatchHandlers for Counting {
    type Attestation = Payload;
    type Aggregate = Payload;
    type DataColumn = Payload;
    type PayloadAttestation = Payload;
    fn process_gossip_attestations(&self, batch: Vec<Payload>, _: &WorkerContext<'_>) {
        self.ran(batch.len())
    }
    fn process_gossip_aggregates(&self, batch: Vec<Payload>, _: &WorkerContext<'_>) {
        self.ran(batch.len())
    }
    fn process_gossip_data_columns(&self, batch: Vec<Payload>, _: &WorkerContext<'_>) {
        self.ran(batch.len())
    }
    fn process_gossip_payload_attestations(&self, batch: Vec<Payload>, _: &WorkerContext<'_>) {
        self.ran(batch.len())
    }
    fn dropped(&self, _: BatchItem<Self>, _: DropReason) {
        self.0.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// `VmRSS` or `VmHWM` of this process, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("a number of kB");
    kib * 1024
}

const KINDS: [WorkKind; 10] = [
    WorkKind::GossipAttestation,
    WorkKind::GossipAttestation,
    WorkKind::GossipAttestation,
    WorkKind::GossipDataColumn,
    WorkKind::GossipAggregate,
    WorkKind::GossipSyncCommitteeMessage,
    WorkKind::GossipBlsToExecutionChange,
    WorkKind::RpcStatus,
    WorkKind::RpcBlocksByRangeRequest,
    WorkKind::ApiRequestP1,
];

#[test]
fn a_flood_of_a_million_items_stays_bounded_and_every_item_is_accounted_for() {
    let handlers = Counting::default();
    let counts = Arc::clone(&handlers.0);
    let registry = Registry::new();
    let p = BeaconProcessor::new(BeaconProcessorConfig::default(), handlers).unwrap();
    p.register_metrics(&registry).unwrap();
    let rss_before = status_bytes("VmRSS:");

    std::thread::scope(|s| {
        for t in 0..4u64 {
            let p = p.clone();
            let counts = Arc::clone(&counts);
            s.spawn(move || {
                for i in 0..ITEMS / 4 {
                    let id = t * ITEMS + i;
                    let kind = KINDS[(id % KINDS.len() as u64) as usize];
                    let result = match kind {
                        WorkKind::GossipAttestation => {
                            p.submit(BatchItem::GossipAttestation(payload(id)))
                        }
                        WorkKind::GossipDataColumn => {
                            p.submit(BatchItem::GossipDataColumn(payload(id)))
                        }
                        WorkKind::GossipAggregate => {
                            p.submit(BatchItem::GossipAggregate(payload(id)))
                        }
                        kind => {
                            let data = payload(id);
                            let on_run = Arc::clone(&counts);
                            let on_drop = Arc::clone(&counts);
                            p.submit(
                                Task::new(kind, move |_| {
                                    drop(data);
                                    cpu(1);
                                    on_run.ran.fetch_add(1, Ordering::Relaxed);
                                })
                                .on_drop(move |_| {
                                    on_drop.dropped.fetch_add(1, Ordering::Relaxed);
                                }),
                            )
                        }
                    };
                    result.expect("accepted");
                    if i % 4096 == 0 {
                        for kind in KINDS {
                            assert!(p.queued(kind) <= kind.capacity(), "{kind} over its bound");
                        }
                    }
                }
            });
        }
    });
    let rss_peak = status_bytes("VmHWM:");
    p.shutdown(ShutdownMode::Drain);

    let ran = counts.ran.load(Ordering::Relaxed);
    let dropped = counts.dropped.load(Ordering::Relaxed);
    eprintln!(
        "flood: {ran} ran, {dropped} dropped, memory {:.1} MiB before, peak {:.1} MiB",
        rss_before as f64 / 1048576.0,
        rss_peak as f64 / 1048576.0
    );
    assert_eq!(
        ran + dropped,
        ITEMS,
        "every item ran or was reported dropped"
    );
    assert!(dropped > 0, "the flood outran the workers");

    let family = |name: &str| {
        registry
            .gather()
            .into_iter()
            .find(|f| f.name() == name)
            .unwrap()
    };
    let total = |name: &str| -> f64 {
        family(name)
            .get_metric()
            .iter()
            .map(|m| m.get_counter().get_value())
            .sum()
    };
    assert_eq!(
        total("beacon_processor_work_events_received_total"),
        ITEMS as f64
    );
    assert_eq!(
        total("beacon_processor_work_events_dropped_total"),
        dropped as f64
    );
    assert!(
        rss_peak.saturating_sub(rss_before) < MEMORY_CAP_BYTES,
        "the flood grew memory by {} MiB, over the {} MiB cap",
        (rss_peak - rss_before) >> 20,
        MEMORY_CAP_BYTES >> 20
    );
}
