//! Gossip blocks imported end to end on one long-lived chain over a synthetic mainnet state
//! (1,000,000 validators by default; `ARBOR_BENCH_VALIDATORS` to change), each sample the next
//! block of a pre-built chain: gossip validation (proposer signature and the rules),
//! availability (no blobs), the state transition with the block's signatures as one batch, the
//! post-state root, fork choice with the block's attestations, the store write and the head.
//! Beside it, in the same run and over the same blocks, the bare state transition
//! (signatures batched, root checked) as the baseline.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use beacon_chain::{BeaconChain, BlockProcessed, ChainConfig, ManualSlotClock, PayloadStatus};
use criterion::{Criterion, SamplingMode};
use fork_choice::ThreadPoolBuilder;
use state_harness::{
    AttestationSpec, BlockContents, SyncParticipation, build_block,
    keys::interop_pubkeys_cached,
    synthetic::{SyntheticParams, build_state},
};
use state_processing::{
    CachedBeaconState, StateRef,
    common::get_current_epoch,
    per_block::{AlwaysValid, VerifySignatures},
    state_transition::state_transition,
};
use store::{Store, StoreConfig};
use types::{BeaconState, ChainSpec, EthSpec, ForkName, MainnetEthSpec, SignedBeaconBlock};

type E = MainnetEthSpec;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Blocks imported per measurement run (each sample imports one block on the long-lived chain).
const BLOCKS: usize = 14;

struct Fixture {
    spec: Arc<ChainSpec>,
    /// The anchor: a block at an epoch's first slot and its post-state.
    anchor_state: CachedBeaconState<E>,
    anchor_block: SignedBeaconBlock<E>,
    /// A chain of blocks on the anchor, each with a full slot of attestations for its parent's
    /// slot and a full sync aggregate, with the pre-state of each.
    blocks: Vec<(CachedBeaconState<E>, SignedBeaconBlock<E>)>,
    genesis_time: u64,
}

fn fixture() -> Fixture {
    let n: usize = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
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
    // The caches a running node keeps warm: committees, the public-key index, effective
    // balances and every public key decompressed (a node does this once at start-up).
    let start = Instant::now();
    {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool = ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let CachedBeaconState { state, caches } = &mut anchor_state;
        let view = StateRef::new(state).unwrap();
        let epoch = get_current_epoch(&view);
        for e in [epoch - 1, epoch, epoch + 1] {
            caches.committees(&view, e).unwrap();
        }
        caches.index_pubkeys(&view);
        caches.effective_balances(&view);
        caches.decompress_all(&view, &pool).unwrap();
    }
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
        blocks,
        genesis_time,
    }
}

fn main() {
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

    let mut used = 0;
    group.bench_function("stf_signatures_batched_baseline", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in next(&mut used, iters) {
                let (pre, block) = &f.blocks[i];
                let mut state = pre.clone();
                let start = Instant::now();
                state_transition(
                    &mut state,
                    block,
                    VerifySignatures::Batched,
                    true,
                    &AlwaysValid,
                    &f.spec,
                )
                .unwrap();
                total += start.elapsed();
                black_box(state);
            }
            total
        })
    });

    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*f.spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    let clock = Arc::new(ManualSlotClock::new(0));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
    );
    let chain = BeaconChain::from_anchor(
        Arc::new(store),
        f.anchor_state.clone(),
        f.anchor_block.clone(),
        f.spec.clone(),
        clock.clone(),
        pool,
        ChainConfig::default(),
    )
    .unwrap();
    let mut used = 0;
    group.bench_function("gossip_block_end_to_end", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in next(&mut used, iters) {
                let block = &f.blocks[i].1;
                let now = f.spec.compute_time_at_slot(f.genesis_time, block.slot()) * 1000 + 1000;
                clock.set_ms(now);
                let start = Instant::now();
                let verified = chain
                    .verify_block_for_gossip(Arc::new(block.clone()), now)
                    .unwrap();
                let outcome = chain
                    .process_gossip_block(verified, &AlwaysValid, PayloadStatus::Valid)
                    .unwrap();
                total += start.elapsed();
                assert!(matches!(outcome, BlockProcessed::Imported(_)));
            }
            total
        })
    });
    group.finish();
    c.final_summary();
}
