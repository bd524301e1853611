//! Gossip blocks imported end to end on one long-lived chain over a synthetic mainnet state
//! (1,000,000 validators by default; `ARBOR_BENCH_VALIDATORS` to change), each sample the next
//! block of a pre-built chain: gossip validation (proposer signature and the rules),
//! availability (no blobs), the state transition with the block's signatures as one batch, the
//! post-state root, fork choice with the block's attestations, the store write and the head.
//! Beside it, in the same run and over the same blocks, the bare state transition
//! (signatures batched, root checked) as the baseline. Then the same import with a stand-in
//! execution client answering `engine_newPayload` after 40 ms: asked before the import, and
//! asked beside it (the import waits for the verdict after its state transition).
//!
//! Then a range-sync segment: 32 blocks (full attestations and sync aggregate, 48 blobs each)
//! with the 8 custody columns of each, imported into a fresh chain as range sync does
//! (`import_chain_segment`: each block's state transition with the columns' KZG batch beside
//! it in fork choice's availability hook, the whole segment's signatures in one batch, then
//! the store writes and the head), against the same work done bare (`state_transition` and
//! `verify_data_column_sidecars` of each block's columns), and against the blocks imported
//! one `import_block` at a time (each block's signatures its own batch).
//!
//! Then a supernode's 128 columns of a 48-blob block in random order to availability, in CPU
//! time, against the raw KZG batch of the same columns.
//!
//! Then a block at an epoch's first slot (at the anchor's slot, on the last state of the epoch
//! before, with a full slot of attestations and a full sync aggregate): its state transition on
//! the parent's post-state (the epoch transition and the hashing on the import path), against
//! the same block on the parent's
//! post-state advanced ahead to the block's slot as the node's slot timer leaves it
//! (`state_transition_from_advanced`), and what that advance itself costs the timer.
//!
//! Every chain is the test harness's (`beacon_chain::harness`) from the fixture's anchor, on a
//! store under `target/`, with no execution client attached (the harness's mock runs idle).
//! Every timed import and transition runs on a rayon pool of the machine's size (the chain's
//! pool, or one like it for the bare baselines), as the node runs them on the beacon
//! processor's workers: their parallel sections (the signature batch, the epoch transition) use
//! the pool they run on, and would run sequentially on the bench's main thread.
//!
//! `ARBOR_BENCH_SEGMENT=0` leaves the segment and the availability benchmarks out.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use ssz::Encode;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use beacon_chain::harness::{ChainHarness, ChainStart, HarnessConfig};
use beacon_chain::{
    BlockPayloadVerdict, BlockProcessed, ChainConfig, ExecutionStatus,
    data_column_sidecars::get_data_column_sidecars_from_block,
};
use criterion::{Criterion, SamplingMode};
use fork_choice::ThreadPoolBuilder;
use rayon::prelude::*;
use state_harness::{
    AttestationSpec, BlockContents, SyncParticipation, build_block,
    keys::interop_pubkeys_cached,
    synthetic::{SyntheticParams, build_state, warm_caches},
};
use state_processing::{
    CachedBeaconState, StateRef,
    per_block::{AlwaysValid, VerifySignatures},
    per_slot::process_slots,
    state_transition::{state_transition, state_transition_from_advanced},
};
use types::{
    BeaconState, BlobScheduleEntry, ChainSpec, DataColumnSidecar, EthSpec, ForkName, KZGCommitment,
    MainnetEthSpec, SignedBeaconBlock, Slot,
};

type E = MainnetEthSpec;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Blocks imported per measurement run (each sample imports one block on the long-lived chain).
const BLOCKS: usize = 14;
/// Blocks of the range-sync segment.
const SEGMENT: usize = 32;
/// Blobs of each segment block.
const SEGMENT_BLOBS: usize = 48;
/// Custody columns of the syncing node (the columns `0..CUSTODY` of each block).
const CUSTODY: u64 = 8;

struct Fixture {
    spec: Arc<ChainSpec>,
    /// The anchor: a block at an epoch's first slot and its post-state.
    anchor_state: CachedBeaconState<E>,
    anchor_block: SignedBeaconBlock<E>,
    /// The anchor block's parent state: the last slot of the epoch before, caches warm.
    boundary_parent: CachedBeaconState<E>,
    /// A block at the anchor's slot (an epoch's first) on `boundary_parent`, with a full slot
    /// of attestations and a full sync aggregate.
    boundary_block: SignedBeaconBlock<E>,
    /// A chain of blocks on the anchor, each with a full slot of attestations for its parent's
    /// slot and a full sync aggregate, with the pre-state of each.
    blocks: Vec<(CachedBeaconState<E>, SignedBeaconBlock<E>)>,
    genesis_time: u64,
}

/// Mainnet's presets with every fork through Fulu at genesis and room for the segment's blobs.
fn bench_spec() -> ChainSpec {
    let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    spec.blob_schedule = vec![BlobScheduleEntry {
        epoch: 0,
        max_blobs_per_block: SEGMENT_BLOBS as u64,
    }];
    spec
}

/// The caches a running node keeps warm on its anchor state: committees, the public-key index,
/// effective balances and every public key decompressed (a node does this once at start-up);
/// then the state is recorded as finalized.
fn warm_node_caches(state: &mut CachedBeaconState<E>) {
    let pool = ThreadPoolBuilder::new()
        .num_threads(machine_threads())
        .build()
        .unwrap();
    warm_caches(state).unwrap();
    let CachedBeaconState { state, caches } = state;
    let view = StateRef::new(state).unwrap();
    caches.decompress_all(&view, &pool).unwrap();
}

fn fixture() -> Fixture {
    let n: usize = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let spec = bench_spec();
    let keys = interop_pubkeys_cached(n, &target_dir().join("state-harness-keys")).unwrap();
    let spe = E::slots_per_epoch();
    let params = SyntheticParams {
        slot: 375_000 * spe - 1,
        ..SyntheticParams::default()
    };
    let start = Instant::now();
    let state = build_state::<E>(&keys, &params, &spec).unwrap();
    let mut pre = CachedBeaconState::new(BeaconState::Fulu(state));
    pre.hash_tree_root().unwrap();
    eprintln!("{n} validators: synthetic state in {:.2?}", start.elapsed());

    let anchor = build_block(&pre, params.slot + 1, &BlockContents::default(), &spec).unwrap();
    let mut anchor_state = anchor.post.clone();
    let start = Instant::now();
    warm_node_caches(&mut anchor_state);
    // The anchor is finalized (from_anchor records it so; the baseline runs before the chain
    // exists and shares the same key cache).
    anchor_state.set_finalized().unwrap();
    // The anchor block's parent state as a running node holds it: caches warm.
    let mut boundary_parent = pre;
    warm_caches(&mut boundary_parent).unwrap();
    let boundary_contents = BlockContents {
        attestations: AttestationSpec::slot_in_parts(params.slot, 8),
        sync_aggregate: SyncParticipation::Full,
        ..BlockContents::default()
    };
    let boundary_block = build_block(&boundary_parent, params.slot + 1, &boundary_contents, &spec)
        .unwrap()
        .block;
    eprintln!("caches warmed in {:.2?}", start.elapsed());

    let start = Instant::now();
    let mut blocks = Vec::with_capacity(BLOCKS);
    let mut parent = anchor_state.clone();
    for i in 0..BLOCKS as u64 {
        let slot = params.slot + 2 + i;
        let contents = BlockContents {
            attestations: AttestationSpec::slot_in_parts(slot - 1, 8),
            sync_aggregate: SyncParticipation::Full,
            ..BlockContents::default()
        };
        let built = build_block(&parent, slot, &contents, &spec).unwrap();
        blocks.push((parent, built.block));
        parent = built.post;
    }
    eprintln!("{BLOCKS} blocks built in {:.2?}", start.elapsed());
    let genesis_time = *anchor_state.state.genesis_time();
    Fixture {
        spec: Arc::new(spec),
        anchor_state,
        anchor_block: anchor.block,
        boundary_parent,
        boundary_block,
        blocks,
        genesis_time,
    }
}

fn main() {
    if let Some(dir) = std::env::var_os(MEMORY_CHILD_ENV) {
        node_memory_child(std::path::Path::new(&dir));
        return;
    }
    let f = fixture();
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("import");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));

    // Each sample takes the next block of the chain: both benchmarks see the same blocks.
    let next = |used: &mut usize, iters: u64| {
        let first = *used;
        *used += iters as usize;
        assert!(
            *used <= BLOCKS,
            "the fixture has {BLOCKS} blocks; {} asked for",
            *used
        );
        first..*used
    };

    let pool = machine_pool();
    let mut used = 0;
    group.bench_function("stf_signatures_batched_baseline", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in next(&mut used, iters) {
                let (pre, block) = &f.blocks[i];
                let mut state = pre.clone();
                let start = Instant::now();
                pool.install(|| {
                    state_transition(
                        &mut state,
                        block,
                        VerifySignatures::Batched,
                        true,
                        &AlwaysValid,
                        &f.spec,
                    )
                    .unwrap()
                });
                total += start.elapsed();
                black_box(state);
            }
            total
        })
    });

    let (fresh, _dir) = fresh_chain(&f, ChainConfig::default());
    let (chain, clock) = (&fresh.chain, &fresh.clock);
    let mut used = 0;
    group.bench_function("gossip_block_end_to_end", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in next(&mut used, iters) {
                let block = &f.blocks[i].1;
                let now = f.spec.compute_time_at_slot(f.genesis_time, block.slot()) * 1000 + 1000;
                clock.set_ms(now);
                let start = Instant::now();
                let outcome = chain.pool().install(|| {
                    let verified = chain
                        .verify_block_for_gossip(Arc::new(block.clone()), now)
                        .unwrap();
                    chain
                        .process_gossip_block(verified, &AlwaysValid, ExecutionStatus::Valid)
                        .unwrap()
                });
                total += start.elapsed();
                assert!(matches!(outcome, BlockProcessed::Imported(_)));
            }
            total
        })
    });
    drop(fresh);

    // The execution client's `engine_newPayload` as a thread answering VALID after
    // `ENGINE_MS`: asked first and the import started on its answer (as the router did), or
    // asked beside the import, which waits for the answer after the state transition. Each on
    // a fresh chain over the same blocks.
    for beside in [false, true] {
        let (fresh, _dir) = fresh_chain(&f, ChainConfig::default());
        let (chain, clock) = (&fresh.chain, &fresh.clock);
        let name = if beside {
            format!("gossip_block_engine_{ENGINE_MS}ms_beside_import")
        } else {
            format!("gossip_block_engine_{ENGINE_MS}ms_then_import")
        };
        let mut used = 0;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in next(&mut used, iters) {
                    let block = &f.blocks[i].1;
                    let now =
                        f.spec.compute_time_at_slot(f.genesis_time, block.slot()) * 1000 + 1000;
                    clock.set_ms(now);
                    let start = Instant::now();
                    let verified = chain
                        .pool()
                        .install(|| chain.verify_block_for_gossip(Arc::new(block.clone()), now))
                        .unwrap();
                    let outcome = if beside {
                        let sender =
                            chain.expect_payload_verdict(verified.block_root, block.slot());
                        let verdict = chain.payload_verdict(&verified.block_root);
                        let engine = std::thread::spawn(move || {
                            std::thread::sleep(Duration::from_millis(ENGINE_MS));
                            sender.send(ExecutionStatus::Valid);
                        });
                        let outcome = chain
                            .pool()
                            .install(|| chain.process_gossip_block(verified, &verdict, &verdict))
                            .unwrap();
                        engine.join().unwrap();
                        outcome
                    } else {
                        std::thread::sleep(Duration::from_millis(ENGINE_MS));
                        chain
                            .pool()
                            .install(|| {
                                chain.process_gossip_block(
                                    verified,
                                    &AlwaysValid,
                                    ExecutionStatus::Valid,
                                )
                            })
                            .unwrap()
                    };
                    total += start.elapsed();
                    assert!(matches!(outcome, BlockProcessed::Imported(_)));
                }
                total
            })
        });
    }
    group.finish();

    epoch_boundary_benches(&mut c, &f);

    if std::env::var("ARBOR_BENCH_SEGMENT").as_deref() != Ok("0") {
        segment_benches(&mut c, &f);
    }
    c.final_summary();
}

/// The epoch's first block on its parent's post-state and on that state advanced ahead.
fn epoch_boundary_benches(c: &mut Criterion, f: &Fixture) {
    let pool = machine_pool();
    let mut group = c.benchmark_group("epoch_boundary");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));
    let block = &f.boundary_block;
    let slot = block.slot();
    let transition = |state: &mut CachedBeaconState<E>, advanced: bool| {
        let transition = if advanced {
            state_transition_from_advanced
        } else {
            state_transition
        };
        pool.install(|| {
            transition(
                state,
                block,
                VerifySignatures::Batched,
                true,
                &AlwaysValid,
                &f.spec,
            )
            .unwrap()
        });
    };
    group.bench_function("block_on_parent_state", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut state = f.boundary_parent.clone();
                let start = Instant::now();
                transition(&mut state, false);
                total += start.elapsed();
                black_box(state);
            }
            total
        })
    });
    // What the slot timer does ahead of the slot (`BeaconChain::advanced_state`): the slot,
    // the epoch transition, the hash and the caches.
    let advance = || {
        let mut state = f.boundary_parent.clone();
        pool.install(|| {
            process_slots(&mut state, slot, &f.spec).unwrap();
            state.hash_tree_root().unwrap();
            warm_caches(&mut state).unwrap();
        });
        state
    };
    group.bench_function("advance_ahead_of_the_block", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let state = advance();
                total += start.elapsed();
                black_box(state);
            }
            total
        })
    });
    let advanced = advance();
    group.bench_function("block_on_advanced_state", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut state = advanced.clone();
                let start = Instant::now();
                transition(&mut state, true);
                total += start.elapsed();
                black_box(state);
            }
            total
        })
    });
    group.finish();
}

/// How long the stand-in execution client takes to answer `engine_newPayload` (a mainnet
/// execution client takes tens to hundreds of milliseconds).
const ENGINE_MS: u64 = 40;

/// A pool with a thread per core, as the node's.
fn machine_pool() -> Arc<fork_choice::ThreadPool> {
    Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(machine_threads())
            .build()
            .unwrap(),
    )
}

/// A thread per core.
fn machine_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The runtime the harnesses' mock execution clients run on (the chains here are driven
/// without one: none is attached).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// The harness options of the benchmarks' chains: the bench spec, a pool with a thread per
/// core, no execution client attached, the store at `store_path`.
fn harness_config(
    spec: &ChainSpec,
    genesis_time: u64,
    chain: ChainConfig,
    store_path: PathBuf,
) -> HarnessConfig {
    HarnessConfig {
        spec: spec.clone(),
        genesis_time,
        chain,
        pool_threads: machine_threads(),
        attach_execution_layer: false,
        store_path: Some(store_path),
        ..HarnessConfig::default()
    }
}

/// A chain from the fixture's anchor on a store of its own (in the returned directory, removed
/// with it), with a clock the benchmark sets.
fn fresh_chain(f: &Fixture, config: ChainConfig) -> (ChainHarness<E>, tempfile::TempDir) {
    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    let harness = runtime()
        .block_on(
            harness_config(&f.spec, f.genesis_time, config, dir.path().join("db")).build_from(
                ChainStart::Anchor {
                    state: f.anchor_state.clone(),
                    block: f.anchor_block.clone(),
                },
            ),
        )
        .unwrap();
    (harness, dir)
}

/// A segment block: its pre-state, the block and its custody columns.
type SegmentBlock = (
    CachedBeaconState<E>,
    Arc<SignedBeaconBlock<E>>,
    Vec<DataColumnSidecar<E>>,
);

/// A blob with field elements that vary with `seed` (each element's first byte zero, so it is
/// canonical).
fn blob(seed: u8) -> kzg::Blob {
    let mut bytes = vec![0u8; kzg::BYTES_PER_BLOB];
    for (i, fe) in bytes
        .chunks_exact_mut(kzg::BYTES_PER_FIELD_ELEMENT)
        .enumerate()
    {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(31) ^ (j as u8) ^ seed;
        }
    }
    *kzg::blob_from_bytes(&bytes).unwrap()
}

/// The segment on the fixture's anchor: every block commits to the same 48 blobs (their cells
/// and proofs computed once), so each block's columns differ only in their header and proofs
/// of inclusion.
fn segment(f: &Fixture) -> (Vec<SegmentBlock>, Vec<kzg::CellsAndProofs>) {
    let start = Instant::now();
    let blobs: Vec<kzg::Blob> = (0..SEGMENT_BLOBS as u8).map(blob).collect();
    let cells: Vec<kzg::CellsAndProofs> = blobs
        .par_iter()
        .map(|b| kzg::compute_cells_and_kzg_proofs(b).unwrap())
        .collect();
    let commitments: Vec<KZGCommitment> = blobs
        .iter()
        .map(|b| KZGCommitment::from(kzg::blob_to_kzg_commitment(b).unwrap().0))
        .collect();
    // One block more than the segment: the block imported after a reopen.
    let out = segment_blocks(
        f,
        f.anchor_state.clone(),
        f.anchor_block.slot() + 1,
        SEGMENT + 1,
        &commitments,
        &cells,
    );
    eprintln!(
        "segment: {SEGMENT} blocks with {SEGMENT_BLOBS} blobs and {CUSTODY} columns each built in {:.2?}",
        start.elapsed()
    );
    (out, cells)
}

/// `count` blocks from `first_slot` on `parent`, each with a full slot of attestations, a full
/// sync aggregate and the blobs of `commitments`, with their custody columns.
fn segment_blocks(
    f: &Fixture,
    mut parent: CachedBeaconState<E>,
    first_slot: Slot,
    count: usize,
    commitments: &[KZGCommitment],
    cells: &[kzg::CellsAndProofs],
) -> Vec<SegmentBlock> {
    let mut out = Vec::with_capacity(count);
    for i in 0..count as u64 {
        let slot = first_slot + i;
        let contents = BlockContents {
            attestations: AttestationSpec::slot_in_parts(slot - 1, 8),
            sync_aggregate: SyncParticipation::Full,
            blob_kzg_commitments: commitments.to_vec(),
            ..BlockContents::default()
        };
        let built = build_block(&parent, slot, &contents, &f.spec).unwrap();
        let columns: Vec<DataColumnSidecar<E>> =
            get_data_column_sidecars_from_block(&built.block, cells)
                .unwrap()
                .into_iter()
                .filter(|c| c.index() < CUSTODY)
                .collect();
        out.push((parent, Arc::new(built.block), columns));
        parent = built.post;
    }
    out
}

/// The resident set size of this process, in MiB (`VmRSS` of `/proc/self/status`).
fn rss_mib() -> Option<f64> {
    proc_status_mib("VmRSS:")
}

/// A memory line of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in MiB.
fn proc_status_mib(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Where the node-memory child finds its anchor and blocks ([`node_memory_measurement`]).
const MEMORY_CHILD_ENV: &str = "ARBOR_BENCH_MEMORY_CHILD";

/// The node's resident memory after importing two epochs of blocks, measured in a process of
/// its own so that no fixture is counted: this process writes the anchor state and block and
/// 64 blocks with their custody columns (the segment, the block after it and 31 more, each
/// with 48 blobs) as SSZ files; the child (this binary with [`MEMORY_CHILD_ENV`] set) decodes
/// the anchor, warms its caches as a starting node does, builds the chain on a store of its
/// own and imports the blocks one by one as range sync hands them over, then reports its
/// memory. `ARBOR_BENCH_MEMORY=0` skips it.
fn node_memory_measurement(
    f: &Fixture,
    blocks: &[SegmentBlock],
    next: &SegmentBlock,
    cells: &[kzg::CellsAndProofs],
) {
    if std::env::var("ARBOR_BENCH_MEMORY").is_ok_and(|v| v == "0") {
        return;
    }
    let commitments: Vec<KZGCommitment> = (0..SEGMENT_BLOBS as u8)
        .map(|seed| KZGCommitment::from(kzg::blob_to_kzg_commitment(&blob(seed)).unwrap().0))
        .collect();
    let mut after_next = next.0.clone();
    state_transition(
        &mut after_next,
        &next.1,
        VerifySignatures::None,
        true,
        &AlwaysValid,
        &f.spec,
    )
    .unwrap();
    let more = segment_blocks(
        f,
        after_next,
        next.1.slot() + 1,
        2 * SEGMENT - blocks.len() - 1,
        &commitments,
        cells,
    );
    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    std::fs::write(
        dir.path().join("anchor_state.ssz"),
        f.anchor_state.state.as_ssz_bytes(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("anchor_block.ssz"),
        f.anchor_block.as_ssz_bytes(),
    )
    .unwrap();
    let all = blocks.iter().chain(std::iter::once(next)).chain(&more);
    for (i, (_, block, columns)) in all.enumerate() {
        std::fs::write(
            dir.path().join(format!("block-{i:03}.ssz")),
            block.as_ssz_bytes(),
        )
        .unwrap();
        for (j, column) in columns.iter().enumerate() {
            std::fs::write(
                dir.path().join(format!("block-{i:03}-column-{j}.ssz")),
                column.as_ssz_bytes(),
            )
            .unwrap();
        }
    }
    drop(more);
    // As a node runs by default (redb's page cache 256 MiB, `--db-cache-mib 256`), then with
    // redb's own default of 1 GiB: how much of the memory is the database's cache.
    for db_cache_mib in [None, Some(1024)] {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.env(MEMORY_CHILD_ENV, dir.path());
        if let Some(mib) = db_cache_mib {
            child.env(MEMORY_DB_CACHE_ENV, mib.to_string());
        }
        let output = child.output().unwrap();
        eprint!("{}", String::from_utf8_lossy(&output.stdout));
        assert!(
            output.status.success(),
            "the node-memory child failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The node-memory child's database page cache in MiB, when not redb's default.
const MEMORY_DB_CACHE_ENV: &str = "ARBOR_BENCH_MEMORY_DB_CACHE_MIB";

/// The child of [`node_memory_measurement`]: a node's chain on the anchor in `dir`, importing
/// the blocks there; prints its memory on stdout.
fn node_memory_child(dir: &std::path::Path) {
    let spec = Arc::new(bench_spec());
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let state = BeaconState::<E>::from_ssz_bytes(&read("anchor_state.ssz"), &spec).unwrap();
    let anchor_block =
        SignedBeaconBlock::<E>::from_ssz_bytes(&read("anchor_block.ssz"), &spec).unwrap();
    let mut anchor = CachedBeaconState::new(state);
    anchor.hash_tree_root().unwrap();
    warm_node_caches(&mut anchor);
    let genesis_time = *anchor.state.genesis_time();
    let store_dir = tempfile::tempdir_in(dir).unwrap();
    let db_cache_mib: Option<usize> = std::env::var(MEMORY_DB_CACHE_ENV)
        .ok()
        .map(|mib| mib.parse().unwrap());
    let mut config = harness_config(
        &spec,
        genesis_time,
        ChainConfig {
            custody_columns: Some((0..CUSTODY).collect()),
            ..ChainConfig::default()
        },
        store_dir.path().join("db"),
    );
    if let Some(mib) = db_cache_mib {
        config.store.cache_size_bytes = mib << 20;
    }
    let harness = runtime()
        .block_on(config.build_from(ChainStart::Anchor {
            state: anchor,
            block: anchor_block,
        }))
        .unwrap();
    let (chain, clock) = (&harness.chain, &harness.clock);
    let started = rss_mib().unwrap_or(f64::NAN);
    let started_peak = proc_status_mib("VmHWM:").unwrap_or(f64::NAN);
    let mut imported = 0;
    // The import whose end found the peak raised the most, and by how much.
    let mut peak_rise = (0.0, 0, 0);
    while let Ok(bytes) = std::fs::read(dir.join(format!("block-{imported:03}.ssz"))) {
        let peak_before = proc_status_mib("VmHWM:").unwrap_or(f64::NAN);
        let block = SignedBeaconBlock::<E>::from_ssz_bytes(&bytes, &spec).unwrap();
        let slot = block.slot();
        let columns: Vec<DataColumnSidecar<E>> = (0..CUSTODY)
            .map(|j| {
                DataColumnSidecar::from_ssz_bytes_by_fork(
                    &read(&format!("block-{imported:03}-column-{j}.ssz")),
                    ForkName::Fulu,
                )
                .unwrap()
            })
            .collect();
        clock.set_ms(spec.compute_time_at_slot(genesis_time, block.slot()) * 1000 + 1000);
        harness.import_valid(Arc::new(block), &columns).unwrap();
        let rise = proc_status_mib("VmHWM:").unwrap_or(f64::NAN) - peak_before;
        if rise > peak_rise.0 {
            peak_rise = (rise, imported, slot);
        }
        imported += 1;
    }
    chain.flush_store_writes();
    let (resident, peak_importing) = (
        rss_mib().unwrap_or(f64::NAN),
        proc_status_mib("VmHWM:").unwrap_or(f64::NAN),
    );
    let bound = chain.bound_state_memory();
    println!(
        "node memory (a process of its own, no fixture; database page cache {}): resident \
         {:.0} MiB with the chain built on its warmed anchor (peak {started_peak:.0} MiB so \
         far), {resident:.0} MiB after importing \
         {imported} blocks with 48 blobs and {CUSTODY} columns each (peak {peak_importing:.0} \
         MiB while importing, {:.0} MiB once fork choice's states were measured, {:.0} MiB \
         resident after; the peak rose most, by {:.0} MiB, while block {} at slot {} was \
         imported); fork choice holds {} block post-states, measured at {:.0} MiB",
        db_cache_mib.map_or(
            format!(
                "{} MiB (the default)",
                store::DEFAULT_CACHE_SIZE_BYTES >> 20
            ),
            |mib| format!("{mib} MiB")
        ),
        started,
        proc_status_mib("VmHWM:").unwrap_or(f64::NAN),
        rss_mib().unwrap_or(f64::NAN),
        peak_rise.0,
        peak_rise.1,
        peak_rise.2,
        bound.block_states,
        bound.measured_bytes as f64 / f64::from(1 << 20),
    );
}

fn segment_benches(c: &mut Criterion, f: &Fixture) {
    let (mut blocks, cells) = segment(f);
    let after_reopen = blocks.pop().expect("the segment has one block more");
    let pool = machine_pool();
    let mut group = c.benchmark_group("segment");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));

    group.bench_function("stf_and_kzg_baseline_32_blocks_48_blobs_8_columns", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for (pre, block, columns) in &blocks {
                    let mut state = pre.clone();
                    let refs: Vec<&DataColumnSidecar<E>> = columns.iter().collect();
                    let start = Instant::now();
                    pool.install(|| {
                        state_transition(
                            &mut state,
                            block,
                            VerifySignatures::Batched,
                            true,
                            &AlwaysValid,
                            &f.spec,
                        )
                        .unwrap();
                        fork_choice::data_availability::verify_data_column_sidecars(
                            &refs, &f.spec, &pool,
                        )
                        .unwrap();
                    });
                    total += start.elapsed();
                    black_box(state);
                }
            }
            total
        })
    });

    let last_slot = blocks.last().map_or(0, |(_, b, _)| b.slot());
    // The segment as range sync hands it to the chain (built once, not timed).
    let segment: Vec<beacon_chain::SegmentBlock<E>> = blocks
        .iter()
        .map(|(_, block, columns)| beacon_chain::SegmentBlock {
            block: block.clone(),
            columns: columns.clone(),
        })
        .collect();
    let valid = BlockPayloadVerdict::Known(ExecutionStatus::Valid);
    let verdicts = vec![&valid; segment.len()];

    // The blocks one `import_block` at a time (each block's signatures its own batch, beside
    // its transition): what range sync did before the segment-wide batch.
    group.bench_function("import_block_by_block_32_blocks_48_blobs_8_columns", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (fresh, _dir) = fresh_chain(
                    f,
                    ChainConfig {
                        custody_columns: Some((0..CUSTODY).collect()),
                        ..ChainConfig::default()
                    },
                );
                let (chain, clock) = (&fresh.chain, &fresh.clock);
                clock.set_ms(f.spec.compute_time_at_slot(f.genesis_time, last_slot) * 1000 + 1000);
                let start = Instant::now();
                for (_, block, columns) in &blocks {
                    chain
                        .import_block(block.clone(), columns, &AlwaysValid, ExecutionStatus::Valid)
                        .unwrap();
                }
                total += start.elapsed();
                assert_eq!(chain.head().slot, last_slot);
                chain.flush_store_writes();
            }
            total
        })
    });

    // Where the import's time beyond the baseline goes: its store batches.
    let mut writes = Vec::new();
    let mut flush_waits = Vec::new();
    let mut memory = Vec::new();
    let mut signature_batches = Vec::new();
    group.bench_function("range_sync_import_32_blocks_48_blobs_8_columns", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // A fresh chain per run (not timed): the segment imports on the anchor.
                let (fresh, _dir) = fresh_chain(
                    f,
                    ChainConfig {
                        custody_columns: Some((0..CUSTODY).collect()),
                        ..ChainConfig::default()
                    },
                );
                let (chain, clock) = (&fresh.chain, &fresh.clock);
                clock.set_ms(f.spec.compute_time_at_slot(f.genesis_time, last_slot) * 1000 + 1000);
                let start = Instant::now();
                let imported = chain.import_chain_segment(&segment, &verdicts);
                total += start.elapsed();
                assert!(imported.failed.is_none(), "{:?}", imported.failed);
                signature_batches.push(imported.signature_batches);
                assert_eq!(chain.head().slot, last_slot);
                // The epoch snapshot the segment deferred, still being written by the snapshot
                // writer (not timed: range sync imports the next segment meanwhile).
                let flush = Instant::now();
                chain.flush_store_writes();
                flush_waits.push(flush.elapsed());
                writes.push(chain.import_store_writes());
                // The slot timer's memory bound over the states the segment left in fork
                // choice (not timed with the import).
                let measuring = Instant::now();
                let bound = chain.bound_state_memory();
                memory.push((bound, measuring.elapsed()));
            }
            total
        })
    });
    group.finish();
    eprintln!(
        "the segment's signatures were verified in {signature_batches:?} batches (per run; \
         each batch every block whose transition ended while the one before was verified)"
    );
    if let Some(last) = writes.last() {
        flush_waits.sort();
        eprintln!(
            "store batches of a segment ({} runs; the last): {} with a whole state in {:.2} s, \
             {} deferring the epoch snapshot in {:.2} s, {} with a summary in {:.2} s; the \
             store writer wrote {} in {:.2} s off the import path; the wait for it after \
             the segment's last import: median {:.2?}, max {:.2?}",
            writes.len(),
            last.whole,
            last.whole_seconds,
            last.deferred,
            last.deferred_seconds,
            last.summary,
            last.summary_seconds,
            last.snapshots_written,
            last.snapshots_seconds,
            flush_waits[flush_waits.len() / 2],
            flush_waits[flush_waits.len() - 1],
        );
    }
    if let Some((bound, _)) = memory.last() {
        let mut times: Vec<Duration> = memory.iter().map(|(_, t)| *t).collect();
        times.sort();
        eprintln!(
            "fork choice's states after a segment ({} runs; the last): {} block post-states \
             and the anchor's checkpoint state take {:.0} MiB together (what they share counted \
             once); measuring them took median {:.2?}, max {:.2?} (the last: copies under \
             fork choice's lock {:.2?}, the walk without it {:.2?}); bound to {} block \
             post-states, {} held",
            memory.len(),
            bound.measured_states,
            bound.measured_bytes as f64 / f64::from(1 << 20),
            times[times.len() / 2],
            times[times.len() - 1],
            bound.copying,
            bound.measuring,
            bound.block_states_limit,
            bound.block_states,
        );
    }
    reopen_measurement(f, &blocks, &after_reopen);
    node_memory_measurement(f, &blocks, &after_reopen, &cells);
    availability_benches(c, f, &blocks, &cells, &pool);
}

/// Samples of the availability benchmarks.
const AVAILABILITY_SAMPLES: usize = 10;
/// Blocks whose 128 columns the availability benchmarks verify (one block a sample, and the
/// warm-up's).
const AVAILABILITY_BLOCKS: usize = 14;
/// Columns a gossip batch holds in the availability benchmark by default (the processor hands
/// a worker every column queued: a burst of 128 arrives as a handful of batches);
/// `ARBOR_BENCH_COLUMN_BATCH` to change.
const COLUMN_BATCH: usize = 16;

/// The process's CPU time (user and system, all threads) from `/proc/self/stat`, in the
/// kernel's 10 ms ticks.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command name (in parentheses, possibly with spaces).
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a stat line") + 2..]
        .split_whitespace()
        .collect();
    let ticks =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

/// A supernode's 128 columns of a 48-blob block, arriving in a random order in gossip batches,
/// to availability: process CPU time of `verify_data_columns_for_gossip` (the rules, the
/// header's proposer signature once, one KZG batch per gossip batch) and
/// `process_gossip_data_columns` (into the availability checker), against the raw batched KZG
/// verification of the same 128 columns (`verify_data_column_sidecars`), both on the chain's
/// pool. Each sample takes the next block of the segment; its columns come before it, and the
/// block then imports (not measured) so that the next block's parent is known.
fn availability_benches(
    c: &mut Criterion,
    f: &Fixture,
    blocks: &[SegmentBlock],
    cells: &[kzg::CellsAndProofs],
    pool: &Arc<fork_choice::ThreadPool>,
) {
    let columns_of = |block: &SignedBeaconBlock<E>| -> Vec<Arc<DataColumnSidecar<E>>> {
        get_data_column_sidecars_from_block(block, cells)
            .unwrap()
            .into_iter()
            .map(Arc::new)
            .collect()
    };
    let mut group = c.benchmark_group("availability");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(AVAILABILITY_SAMPLES)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));

    let mut used = 0;
    group.bench_function("raw_kzg_batch_128_columns_48_blobs_cpu", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let columns = columns_of(&blocks[used % AVAILABILITY_BLOCKS].1);
                used += 1;
                let refs: Vec<&DataColumnSidecar<E>> = columns.iter().map(|c| &**c).collect();
                let before = cpu_time();
                fork_choice::data_availability::verify_data_column_sidecars(&refs, &f.spec, pool)
                    .unwrap();
                total += cpu_time().saturating_sub(before);
            }
            total
        })
    });

    let (fresh, _dir) = fresh_chain(
        f,
        ChainConfig {
            custody_columns: Some((0..128).collect()),
            ..ChainConfig::default()
        },
    );
    let (chain, clock) = (&fresh.chain, &fresh.clock);
    let column_batch = std::env::var("ARBOR_BENCH_COLUMN_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(COLUMN_BATCH);
    eprintln!("availability: gossip batches of {column_batch} columns");
    let mut next_block = 0;
    let mut rng = splitmix::SplitMix64::new(0x0c01);
    group.bench_function("gossip_128_columns_48_blobs_to_availability_cpu", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                assert!(
                    next_block < AVAILABILITY_BLOCKS,
                    "the availability benchmark has {AVAILABILITY_BLOCKS} blocks"
                );
                let block = blocks[next_block].1.clone();
                next_block += 1;
                let now = f.spec.compute_time_at_slot(f.genesis_time, block.slot()) * 1000 + 1000;
                clock.set_ms(now);
                let mut columns = columns_of(&block);
                // Fisher-Yates with the fixed-seed generator: a random arrival order.
                for i in (1..columns.len()).rev() {
                    let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                    columns.swap(i, j);
                }
                let batches: Vec<Vec<(Arc<DataColumnSidecar<E>>, u64)>> = columns
                    .chunks(column_batch)
                    .map(|batch| {
                        batch
                            .iter()
                            .map(|c| {
                                let subnet =
                                    types::subnets::compute_subnet_for_data_column_sidecar(
                                        &f.spec,
                                        c.index(),
                                    )
                                    .unwrap();
                                (c.clone(), subnet)
                            })
                            .collect()
                    })
                    .collect();
                let before = cpu_time();
                for batch in batches {
                    let verified: Vec<_> = chain
                        .verify_data_columns_for_gossip(batch, now)
                        .into_iter()
                        .map(|r| r.unwrap())
                        .collect();
                    let outcomes = chain
                        .process_gossip_data_columns(verified, &AlwaysValid, ExecutionStatus::Valid)
                        .unwrap();
                    assert!(
                        outcomes
                            .iter()
                            .all(|o| matches!(o, BlockProcessed::Pending(_))),
                        "the block has not come yet"
                    );
                }
                total += cpu_time().saturating_sub(before);
                // The block completes its columns: available at once, then imported.
                let verified = chain.verify_block_for_gossip(block, now).unwrap();
                let outcome = chain
                    .process_gossip_block(verified, &AlwaysValid, ExecutionStatus::Valid)
                    .unwrap();
                assert!(
                    matches!(outcome, BlockProcessed::Imported(_)),
                    "{outcome:?}"
                );
            }
            total
        })
    });
    group.finish();
}

/// Once, printed: the process's resident memory before and after a chain imports the segment,
/// and the time from reopening its store to the head being ready for the next block (open, and
/// that block imported with its signatures, its public keys decompressed on the way).
fn reopen_measurement(f: &Fixture, blocks: &[SegmentBlock], next: &SegmentBlock) {
    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    // The clock in the next block's slot.
    let config = || HarnessConfig {
        clock_slot: Some(next.1.slot()),
        ..harness_config(
            &f.spec,
            f.genesis_time,
            ChainConfig {
                custody_columns: Some((0..CUSTODY).collect()),
                ..ChainConfig::default()
            },
            dir.path().join("db"),
        )
    };
    let before = rss_mib();
    let harness = runtime()
        .block_on(config().build_from(ChainStart::Anchor {
            state: f.anchor_state.clone(),
            block: f.anchor_block.clone(),
        }))
        .unwrap();
    for (_, block, columns) in blocks {
        harness.import_valid(block.clone(), columns).unwrap();
    }
    let after = rss_mib();
    let head = harness.chain.head().block_root;
    drop(harness);
    // The mock execution client first: the time is the store's open and the chain's.
    let started = runtime()
        .block_on(config().start_execution_layer::<E>())
        .unwrap();
    let start = Instant::now();
    let harness = started.build(ChainStart::Stored).unwrap();
    let chain = &harness.chain;
    let opened = start.elapsed();
    assert_eq!(chain.head().block_root, head);
    harness.import_valid(next.1.clone(), &next.2).unwrap();
    let ready = start.elapsed();
    eprintln!(
        "memory: resident {:.0} MiB before the chain, {:.0} MiB after it imported {} blocks \
         (the fixture's states included)",
        before.unwrap_or(f64::NAN),
        after.unwrap_or(f64::NAN),
        blocks.len()
    );
    let reopened = chain.reopened().expect("opened from the store");
    eprintln!(
        "reopen: store opened to a head in {opened:.2?}; the next block imported {ready:.2?} \
         after the open began ({} hot blocks: {} restored from the persisted fork choice, {} \
         replayed)",
        blocks.len(),
        reopened.restored,
        reopened.replayed
    );
}
