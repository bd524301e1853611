//! What the light-client server adds to each block import at mainnet scale: a block and its
//! post-state through the data collector (the block's light-client header with its execution
//! branch, the state's field roots and its sync committee and finality branches), over a
//! synthetic Fulu state of 1,000,000 validators (`ARBOR_BENCH_VALIDATORS` to change) whose tree
//! hashes are warm, as they are after the state transition.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;

use criterion::Criterion;
use light_client::LightClientDataCollector;
use state_harness::synthetic::{SyntheticParams, build_state_with_placeholder_keys};
use state_processing::CachedBeaconState;
use tree_hash::TreeHash;
use types::{BeaconState, ChainSpec, ForkName, MainnetEthSpec, Root, SignedBeaconBlock};

type E = MainnetEthSpec;

fn main() {
    let n: u64 = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    let mut inner =
        build_state_with_placeholder_keys::<E>(n, &SyntheticParams::default(), &spec).unwrap();
    // An empty-bodied block at the state's slot that the state is the post-state of.
    let SignedBeaconBlock::Fulu(mut block) =
        state_processing::genesis::interop_genesis_block::<E>(Root::ZERO)
    else {
        unreachable!("interop_genesis_block is a Fulu block")
    };
    block.message.slot = inner.slot;
    block.message.parent_root = Root::repeat_byte(7);
    inner.latest_block_header = types::phase0::BeaconBlockHeader {
        slot: inner.slot,
        proposer_index: 0,
        parent_root: block.message.parent_root,
        state_root: Root::ZERO,
        body_root: block.message.body.tree_hash_root(),
    };
    let mut state = CachedBeaconState::new(BeaconState::Fulu(inner));
    block.message.state_root = state.hash_tree_root().unwrap();
    let block = SignedBeaconBlock::Fulu(block);
    eprintln!("{n} validators");

    let mut c = Criterion::default().configure_from_args().sample_size(20);
    c.bench_function("light_client/collect_block_and_post_state", |b| {
        b.iter(|| {
            black_box(LightClientDataCollector::new(spec.clone(), &state.state, &block).unwrap())
        })
    });
    c.final_summary();
}
