//! The store both test files start from: anchored at a block at the first slot of epoch 2 on
//! the interop genesis (64 validators, minimal preset, every fork through Fulu at genesis).
#![allow(dead_code, reason = "each test file uses its own part of the set-up")]

use std::sync::Arc;

use fork_choice::{Config, SpecStore, ThreadPoolBuilder};
use state_harness::{BlockContents, BuiltBlock, build_block};
use state_processing::{CachedBeaconState, genesis::interop_genesis_state};
use types::{ChainSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};

pub(crate) type E = MinimalEthSpec;

pub(crate) const GENESIS_TIME: u64 = 1_600_000_000;
/// The anchor's slot: the first of epoch 2, so the anchor is the finalized checkpoint of
/// epoch 2 and the checkpoint block of that epoch for its descendants.
pub(crate) const ANCHOR_SLOT: Slot = 16;

pub(crate) struct Setup {
    pub(crate) spec: Arc<ChainSpec>,
    pub(crate) anchor: BuiltBlock<E>,
    pub(crate) store: SpecStore<E>,
}

pub(crate) fn electra_block(block: &SignedBeaconBlock<E>) -> &types::electra::SignedBeaconBlock<E> {
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

pub(crate) fn setup() -> Setup {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis = interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec)
        .expect("interop genesis");
    let genesis = CachedBeaconState::new(genesis);
    let anchor = build_block(&genesis, ANCHOR_SLOT, &BlockContents::default(), &spec)
        .expect("block on genesis");
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool"),
    );
    let store = SpecStore::new(
        anchor.post.clone(),
        &electra_block(&anchor.block).message,
        spec.clone(),
        Config::default(),
        pool,
    )
    .expect("anchor block commits to its state");
    Setup {
        spec,
        anchor,
        store,
    }
}

pub(crate) fn time_at(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot)
}
