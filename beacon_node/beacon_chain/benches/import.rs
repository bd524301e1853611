//! A gossip block imported end to end on a synthetic mainnet state (1,000,000 validators by
//! default; `ARBOR_BENCH_VALIDATORS` to change): gossip validation (proposer signature and the
//! rules), availability (no blobs), the state transition with the block's signatures as one
//! batch, the post-state root, fork choice and the store write, and the head. Beside it, in
//! the same run, the bare state transition of the same block (signatures batched, root
//! checked) as the baseline the import's overhead is measured against.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use beacon_chain::{BeaconChain, BlockProcessed, ChainConfig, ManualSlotClock, PayloadStatus};
use criterion::{BatchSize, Criterion, SamplingMode};
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

struct Fixture {
    spec: Arc<ChainSpec>,
    /// The anchor: a block at an epoch's first slot and its post-state.
    anchor_state: CachedBeaconState<E>,
    anchor_block: SignedBeaconBlock<E>,
    /// The benchmark block on the anchor: a full slot of attestations and a full sync aggregate.
    block: SignedBeaconBlock<E>,
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

    let start = Instant::now();
    let anchor = build_block(&pre, params.slot + 1, &BlockContents::default(), &spec).unwrap();
    let mut anchor_state = anchor.post.clone();
    {
        let CachedBeaconState { state, caches } = &mut anchor_state;
        let view = StateRef::new(state).unwrap();
        let epoch = get_current_epoch(&view);
        for e in [epoch - 1, epoch, epoch + 1] {
            caches.committees(&view, e).unwrap();
        }
        caches.index_pubkeys(&view);
        caches.effective_balances(&view);
    }
    let contents = BlockContents {
        attestations: AttestationSpec::slot_in_parts(params.slot + 1, 8),
        sync_aggregate: SyncParticipation::Full,
        ..BlockContents::default()
    };
    let built = build_block(&anchor_state, params.slot + 2, &contents, &spec).unwrap();
    eprintln!(
        "anchor at slot {} and block at slot {} ({} attestations) built in {:.2?}",
        params.slot + 1,
        params.slot + 2,
        match &built.block {
            SignedBeaconBlock::Fulu(b) => b.message.body.attestations.len(),
            _ => 0,
        },
        start.elapsed()
    );
    let genesis_time = *anchor_state.state.genesis_time();
    Fixture {
        spec: Arc::new(spec),
        anchor_state,
        anchor_block: anchor.block,
        block: built.block,
        genesis_time,
    }
}

/// A fresh chain on the anchor (its store in a temporary directory) and a clock one second
/// into the block's slot.
fn chain(f: &Fixture) -> (BeaconChain<E>, tempfile::TempDir, u64) {
    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*f.spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    let now = f.spec.compute_time_at_slot(f.genesis_time, f.block.slot()) * 1000 + 1000;
    let clock = Arc::new(ManualSlotClock::new(now));
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
        clock,
        pool,
        ChainConfig::default(),
    )
    .unwrap();
    (chain, dir, now)
}

fn main() {
    let f = fixture();
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("import");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);

    group.bench_function("stf_signatures_batched_baseline", |b| {
        b.iter_batched(
            || f.anchor_state.clone(),
            |mut state| {
                state_transition(
                    &mut state,
                    &f.block,
                    VerifySignatures::Batched,
                    true,
                    &AlwaysValid,
                    &f.spec,
                )
                .unwrap();
                black_box(state)
            },
            BatchSize::PerIteration,
        )
    });

    group.bench_function("gossip_block_end_to_end", |b| {
        b.iter_batched(
            || chain(&f),
            |(chain, dir, now)| {
                let verified = chain
                    .verify_block_for_gossip(Arc::new(f.block.clone()), now)
                    .unwrap();
                let outcome = chain
                    .process_gossip_block(verified, &AlwaysValid, PayloadStatus::Valid)
                    .unwrap();
                assert!(matches!(outcome, BlockProcessed::Imported(_)));
                (chain, dir)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
    c.final_summary();
}
