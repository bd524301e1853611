//! `on_fast_confirmation` at mainnet scale: a synthetic state of 1,000,000 validators
//! (`ARBOR_BENCH_VALIDATORS` to change), an anchor at an epoch's first slot and a block in each
//! of the epoch's 31 other slots, every committee's latest message on its slot's block. Measured
//! at the next epoch's first slot, the heaviest slot of the rule: both confirmation loops walk
//! all 31 blocks (`is_one_confirmed` each, with the adversarial weight and equivocation score of
//! its slot range), the FFG helpers weigh every latest message, and the reconfirmation runs. The
//! shufflings are kept between calls, as a node running the rule every slot keeps them.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use fork_choice::{Columns, Config, SpecStore, ThreadPoolBuilder, get_fast_confirmation_store};
use state_harness::{
    BlockContents, build_block,
    synthetic::{SyntheticParams, build_state_with_placeholder_keys},
};
use state_processing::{
    CachedBeaconState, StateRef,
    common::compute_epoch_at_slot,
    per_block::{AlwaysValid, VerifySignatures},
};
use types::{BeaconState, ChainSpec, EthSpec, ForkName, MainnetEthSpec, SignedBeaconBlock};

type E = MainnetEthSpec;

fn electra_block(block: &SignedBeaconBlock<E>) -> &types::electra::SignedBeaconBlock<E> {
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => b,
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Gloas(_)) => {
            panic!("the harness builds Fulu blocks, not {}", other.fork_name())
        }
    }
}

fn benches(c: &mut Criterion) {
    let n: u64 = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let spec = Arc::new(ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu));
    let spe = E::slots_per_epoch();
    let params = SyntheticParams {
        slot: 375_000 * spe - 1,
        ..SyntheticParams::default()
    };
    let start = Instant::now();
    let state = build_state_with_placeholder_keys::<E>(n, &params, &spec).unwrap();
    let pre = CachedBeaconState::new(BeaconState::Fulu(state));
    let anchor = build_block(&pre, params.slot + 1, &BlockContents::default(), &spec).unwrap();
    let anchor_slot = params.slot + 1;
    eprintln!(
        "{n} validators: state and anchor in {:.2?}",
        start.elapsed()
    );

    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
    let anchor_block = &electra_block(&anchor.block).message;
    let mut store = SpecStore::new(
        anchor.post.clone(),
        anchor_block,
        spec.clone(),
        Config {
            verify_signatures: VerifySignatures::None,
            prune_threshold: usize::MAX,
        },
        pool,
    )
    .unwrap();
    let genesis_time = store.genesis_time();
    let mut fcr =
        get_fast_confirmation_store(&store, anchor_block.body.execution_payload.block_hash);

    // A block in every other slot of the epoch; each slot's committees vote for its block.
    let start = Instant::now();
    let mut parent = anchor.post.clone();
    let mut parent_root = anchor.block.canonical_root();
    for slot in anchor_slot..anchor_slot + spe {
        if slot > anchor_slot {
            let built = build_block(&parent, slot, &BlockContents::default(), &spec).unwrap();
            store.on_tick(spec.compute_time_at_slot(genesis_time, slot));
            parent_root = store
                .on_block(&built.block, Columns::Retrieved(&[]), &AlwaysValid)
                .unwrap();
            parent = built.post;
        }
        let members: Vec<u64> = {
            let CachedBeaconState { state, caches } = &mut parent;
            let view = StateRef::new(state).unwrap();
            let committees = caches.committees_at_slot(&view, slot).unwrap();
            committees
                .get_beacon_committees_at_slot(slot)
                .unwrap()
                .concat()
        };
        let node = store.proto_array().index_of(&parent_root).unwrap() as u32;
        store
            .update_latest_messages(&members, node, compute_epoch_at_slot::<E>(slot))
            .unwrap();
    }
    let head = parent_root;
    store.on_tick(spec.compute_time_at_slot(genesis_time, anchor_slot + spe));
    assert_eq!(store.get_head().unwrap().root, head);
    eprintln!(
        "{} blocks and their votes in {:.2?}",
        spe - 1,
        start.elapsed()
    );

    // The first call computes the shufflings; it confirms the whole epoch.
    let start = Instant::now();
    store.on_fast_confirmation(&mut fcr).unwrap();
    eprintln!(
        "first call (shufflings computed) in {:.2?}",
        start.elapsed()
    );
    assert_eq!(
        fcr.confirmed_root, head,
        "the fully voted epoch is confirmed"
    );

    let mut group = c.benchmark_group("fast_confirmation");
    group.sample_size(10);
    group.bench_function("on_fast_confirmation/epoch_start_31_blocks", |b| {
        b.iter(|| {
            let mut f = fcr.clone();
            store.on_fast_confirmation(&mut f).unwrap();
            f.confirmed_root
        })
    });
    group.finish();
}

criterion_group!(bench_group, benches);
criterion_main!(bench_group);
