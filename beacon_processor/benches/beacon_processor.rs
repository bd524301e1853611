//! The processor's costs: scheduling overhead per item (paced at 100,000 items/s and
//! saturated), and with the real `bls` and `kzg` crates as handlers on the processor's pools,
//! batched against one-by-one for 64 attestations and for 128 columns at 48 blobs. Before the
//! criterion groups it prints the busy-thread count during a burst of both at once, read from
//! `/proc` (threads in state R).
//!
//! `cargo bench -p beacon_processor`

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a refused submission aborts the run"
)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use beacon_processor::{
    BatchHandlers, BatchItem, BeaconProcessor, BeaconProcessorConfig, DropReason, ShutdownMode,
    Task, WorkKind, WorkerContext,
};
use bls::{SecretKey, SignatureSet};
use criterion::{Criterion, criterion_group, criterion_main};
use kzg::{
    BYTES_PER_BLOB, BYTES_PER_FIELD_ELEMENT, Blob, CELLS_PER_EXT_BLOB, Cell, ColumnRef,
    KzgCommitment, KzgProof,
};

const BLOBS: usize = 48;
const ATTESTATIONS: usize = 64;
/// A task kind with a 16,384-item queue, so a stall of the (shared, noisy) machine during the
/// paced runs does not overflow it.
const PACED_KIND: WorkKind = WorkKind::GossipBlsToExecutionChange;

/// A data column as a node holds it: owned cells and proofs, the block's commitments shared.
struct Column {
    index: u64,
    cells: Vec<Cell>,
    proofs: Vec<KzgProof>,
    commitments: Arc<Vec<KzgCommitment>>,
}

/// Handlers that verify for real and count finished items.
#[derive(Clone, Default)]
struct Crypto {
    done: Arc<AtomicU64>,
}

impl BatchHandlers for Crypto {
    type Attestation = Arc<SignatureSet>;
    type Aggregate = ();
    type DataColumn = Arc<Column>;
    type PayloadAttestation = ();

    fn process_gossip_attestations(&self, batch: Vec<Arc<SignatureSet>>, ctx: &WorkerContext<'_>) {
        let valid = if let [one] = batch.as_slice() {
            one.verify()
        } else {
            let sets: Vec<SignatureSet> = batch.iter().map(|s| (**s).clone()).collect();
            bls::verify_signature_sets(&sets, ctx.pool())
        };
        assert!(valid);
        self.done.fetch_add(batch.len() as u64, Ordering::SeqCst);
    }

    fn process_gossip_aggregates(&self, _: Vec<()>, _: &WorkerContext<'_>) {}

    fn process_gossip_data_columns(&self, batch: Vec<Arc<Column>>, ctx: &WorkerContext<'_>) {
        kzg::verify_data_column_sidecar_kzg_proofs_batch(&column_refs(&batch), ctx.pool())
            .expect("valid columns");
        self.done.fetch_add(batch.len() as u64, Ordering::SeqCst);
    }

    fn process_gossip_payload_attestations(&self, _: Vec<()>, _: &WorkerContext<'_>) {}

    fn dropped(&self, item: BatchItem<Self>, reason: DropReason) {
        panic!(
            "{} dropped ({reason:?}) in a benchmark sized to fit",
            item.kind()
        );
    }
}

/// The columns as the KZG crate borrows them.
fn column_refs(columns: &[Arc<Column>]) -> Vec<ColumnRef<'_>> {
    columns
        .iter()
        .map(|c| ColumnRef {
            index: c.index,
            cells: &c.cells,
            commitments: &c.commitments,
            proofs: &c.proofs,
        })
        .collect()
}

fn blob(seed: u8) -> Blob {
    let mut bytes = vec![0u8; BYTES_PER_BLOB];
    for (i, fe) in bytes.chunks_exact_mut(BYTES_PER_FIELD_ELEMENT).enumerate() {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(13) ^ (j as u8).wrapping_mul(5) ^ seed;
        }
    }
    *kzg::blob_from_bytes(&bytes).expect("BYTES_PER_BLOB bytes")
}

/// 128 columns of a block with 48 blobs.
fn columns(pool: &rayon::ThreadPool) -> Vec<Arc<Column>> {
    use rayon::prelude::*;
    let blobs: Vec<Blob> = (0..BLOBS as u8).map(blob).collect();
    let (commitments, extended): (Vec<_>, Vec<_>) = pool.install(|| {
        blobs
            .par_iter()
            .map(|b| {
                (
                    kzg::blob_to_kzg_commitment(b).expect("valid blob"),
                    kzg::compute_cells_and_kzg_proofs(b).expect("valid blob"),
                )
            })
            .unzip()
    });
    let commitments = Arc::new(commitments);
    (0..CELLS_PER_EXT_BLOB)
        .map(|j| {
            Arc::new(Column {
                index: j as u64,
                cells: extended.iter().map(|e| e.cells[j]).collect(),
                proofs: extended.iter().map(|e| e.proofs[j]).collect(),
                commitments: Arc::clone(&commitments),
            })
        })
        .collect()
}

fn signature_sets() -> Vec<Arc<SignatureSet>> {
    (0..ATTESTATIONS)
        .map(|i| {
            let sk = SecretKey::random();
            let message = [i as u8; 32];
            Arc::new(SignatureSet::new(
                sk.sign(&message),
                vec![sk.public_key()],
                message,
            ))
        })
        .collect()
}

fn processor(batching: bool) -> BeaconProcessor<Crypto> {
    BeaconProcessor::new(
        BeaconProcessorConfig {
            batching,
            ..BeaconProcessorConfig::default()
        },
        Crypto::default(),
    )
    .expect("the processor starts")
}

/// Submits `count` tasks made by `task` at 100,000 per second: bursts of 100, then a sleep to
/// the next millisecond's mark (the pacing is what the benchmark measures under, not a wait for
/// a result).
fn submit_paced(p: &BeaconProcessor<Crypto>, count: u64, mut task: impl FnMut() -> Task) {
    let start = Instant::now();
    let mut submitted = 0;
    while submitted < count {
        for _ in 0..100.min(count - submitted) {
            p.submit(task()).unwrap();
            submitted += 1;
        }
        let next = start + Duration::from_micros(submitted * 10);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// Waits until the handlers have finished `target` items in all.
fn wait_done(p: &BeaconProcessor<Crypto>, target: u64) {
    while p.handlers().done.load(Ordering::SeqCst) < target {
        std::thread::yield_now();
    }
}

/// The process's CPU time (user + system, all threads) from `/proc/self/stat`.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name (which is in parentheses and may hold spaces).
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a stat line") + 2..]
        .split_whitespace()
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // USER_HZ is 100 on every Linux this runs on.
    Duration::from_millis(ticks * 10)
}

/// Threads of this process whose name starts with `prefix` and that are running or runnable.
fn running_threads(prefix: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter(|stat| {
            let name = &stat[stat.find('(').map_or(0, |i| i + 1)..stat.rfind(')').unwrap_or(0)];
            let state = stat[stat.rfind(')').map_or(0, |i| i + 2)..].chars().next();
            name.starts_with(prefix) && state == Some('R')
        })
        .count()
}

/// A burst of 64 attestations and 128 columns at once (twice over, plus a backfill task that
/// also fans out), sampled every 200 µs for threads running handler work.
fn busy_threads_during_a_burst(sets: &[Arc<SignatureSet>], columns: &[Arc<Column>]) {
    let p = processor(true);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let (mut max, mut sum, mut samples) = (0, 0, 0);
            while !stop.load(Ordering::SeqCst) {
                let n = running_threads("bp-");
                max = max.max(n);
                sum += n;
                samples += 1;
                std::thread::sleep(Duration::from_micros(200));
            }
            (max, sum as f64 / samples.max(1) as f64, samples)
        })
    };
    let started = Instant::now();
    let extra = Arc::new(AtomicU64::new(0));
    for _ in 0..2 {
        for set in sets {
            p.submit(BatchItem::GossipAttestation(Arc::clone(set)))
                .unwrap();
        }
        for column in columns {
            p.submit(BatchItem::GossipDataColumn(Arc::clone(column)))
                .unwrap();
        }
    }
    let backfill_sets: Vec<SignatureSet> = sets.iter().map(|s| (**s).clone()).collect();
    let backfill_done = Arc::clone(&extra);
    p.submit(Task::new(WorkKind::BackfillSegment, move |ctx| {
        for _ in 0..8 {
            assert!(bls::verify_signature_sets(&backfill_sets, ctx.pool()));
        }
        backfill_done.store(1, Ordering::SeqCst);
    }))
    .unwrap();
    wait_done(&p, 2 * (sets.len() + columns.len()) as u64);
    while extra.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    let elapsed = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let (max, mean, samples) = sampler.join().expect("the sampler");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    eprintln!(
        "burst of 2 × (64 attestations + 128 columns at 48 blobs) + a backfill task: \
         {elapsed:.2?}; processor threads running: max {max}, mean {mean:.2} over {samples} \
         samples ({cores} cores; bound {})",
        cores + 1
    );
    p.shutdown(ShutdownMode::Drain);
}

fn bench(c: &mut Criterion) {
    let fixture_pool = rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a rayon pool");
    let sets = signature_sets();
    let columns = columns(&fixture_pool);
    drop(fixture_pool);
    busy_threads_during_a_burst(&sets, &columns);

    let mut group = c.benchmark_group("dispatch");
    group.sample_size(10);
    // One iteration is one item: CPU time of the whole process (submitter and workers) per
    // no-op task, submitted in bursts of 100 every millisecond (100,000 items/s).
    group.bench_function("cpu_per_item_at_100k_per_s", |b| {
        b.iter_custom(|iters| {
            let p = processor(true);
            let ran = Arc::new(AtomicU64::new(0));
            let cpu_before = cpu_time();
            submit_paced(&p, iters, || {
                let ran = Arc::clone(&ran);
                Task::new(PACED_KIND, move |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                })
            });
            p.shutdown(ShutdownMode::Drain);
            assert_eq!(ran.load(Ordering::Relaxed), iters);
            cpu_time().saturating_sub(cpu_before)
        })
    });
    // One iteration is one item: mean time from `submit` to the task starting, same pacing.
    group.bench_function("submit_to_start_at_100k_per_s", |b| {
        b.iter_custom(|iters| {
            let p = processor(true);
            let waited = Arc::new(AtomicU64::new(0));
            submit_paced(&p, iters, || {
                let waited = Arc::clone(&waited);
                let at = Instant::now();
                Task::new(PACED_KIND, move |_| {
                    waited.fetch_add(at.elapsed().as_nanos() as u64, Ordering::Relaxed);
                })
            });
            p.shutdown(ShutdownMode::Drain);
            Duration::from_nanos(waited.load(Ordering::Relaxed))
        })
    });
    // One iteration is one item: wall time per no-op task submitted as fast as one thread can,
    // in rounds of 10,000 (within the 16,384-item queue of the kind used).
    group.bench_function("wall_per_item_saturated", |b| {
        b.iter_custom(|iters| {
            let p = processor(true);
            let ran = Arc::new(AtomicU64::new(0));
            let start = Instant::now();
            let mut submitted = 0;
            while submitted < iters {
                let round = 10_000.min(iters - submitted);
                for _ in 0..round {
                    let ran = Arc::clone(&ran);
                    p.submit(Task::new(PACED_KIND, move |_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    }))
                    .unwrap();
                }
                submitted += round;
                while ran.load(Ordering::Relaxed) < submitted {
                    std::thread::yield_now();
                }
            }
            let elapsed = start.elapsed();
            p.shutdown(ShutdownMode::Drain);
            elapsed
        })
    });
    group.finish();

    // The raw batches on a pool of the processor's size, as the baseline of each group.
    let raw_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(BeaconProcessorConfig::default().main_threads)
        .build()
        .expect("a rayon pool");
    let raw_sets: Vec<SignatureSet> = sets.iter().map(|s| (**s).clone()).collect();

    let mut group = c.benchmark_group("bls_64_attestations");
    group.sample_size(10);
    group.bench_function("raw_batch", |b| {
        b.iter(|| assert!(bls::verify_signature_sets(black_box(&raw_sets), &raw_pool)))
    });
    through_the_processor(&mut group, &sets, BatchItem::GossipAttestation);
    group.finish();

    let mut group = c.benchmark_group("kzg_128_columns_48_blobs");
    group.sample_size(10);
    let raw_refs = column_refs(&columns);
    group.bench_function("raw_batch", |b| {
        b.iter(|| {
            kzg::verify_data_column_sidecar_kzg_proofs_batch(black_box(&raw_refs), &raw_pool)
                .expect("valid")
        })
    });
    through_the_processor(&mut group, &columns, BatchItem::GossipDataColumn);
    group.finish();
}

/// `items` submitted one after another to a processor that batches them (`batched`) and to one
/// that hands each alone (`one_by_one`), until the handlers have finished them all.
fn through_the_processor<T>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    items: &[Arc<T>],
    work: fn(Arc<T>) -> BatchItem<Crypto>,
) {
    for (name, batching) in [("batched", true), ("one_by_one", false)] {
        let p = processor(batching);
        let mut target = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                for item in items {
                    p.submit(work(Arc::clone(black_box(item)))).unwrap();
                }
                target += items.len() as u64;
                wait_done(&p, target);
            })
        });
        p.shutdown(ShutdownMode::Drain);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
