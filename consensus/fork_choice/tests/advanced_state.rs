//! A block's post-state advanced ahead (`keep_advanced_state`): the pre-state of the next block
//! on that block at or after the state's slot, not of a block on another parent; an advance to
//! an epoch's first slot is that checkpoint's state; nothing is kept for a block fork choice does
//! not know or a state not after its block; the two latest blocks' advanced states are kept.

mod common;

use common::{E, GENESIS_TIME, Setup, setup};
use fork_choice::Columns;
use state_harness::{BlockContents, build_block};
use state_processing::{CachedBeaconState, per_block::AlwaysValid, per_slot::process_slots};
use types::{ChainSpec, EthSpec, Root, SignedBeaconBlock, Slot};

const ANCHOR_SLOT: Slot = common::ANCHOR_SLOT;

fn advanced(state: &CachedBeaconState<E>, slot: Slot, spec: &ChainSpec) -> CachedBeaconState<E> {
    let mut state = state.clone();
    process_slots(&mut state, slot, spec).expect("empty slots");
    state
}

fn root_of(state: &CachedBeaconState<E>) -> Root {
    state.clone().hash_tree_root().expect("hashable")
}

/// Imports `block` with the clock at its slot; whether its pre-state was the advanced one.
fn import(s: &mut Setup, block: &SignedBeaconBlock<E>) -> bool {
    s.store
        .on_tick(s.spec.compute_time_at_slot(GENESIS_TIME, block.slot()));
    let prepared = s
        .store
        .prepare_block(block)
        .expect("the block is checked")
        .expect("a new block");
    let advanced = prepared.pre_state_advanced();
    let processed = s
        .store
        .block_processor()
        .process(prepared, block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("the block transitions");
    s.store.insert_block(processed).expect("inserted");
    advanced
}

#[test]
fn the_advanced_state_is_the_next_blocks_pre_state_on_its_block_only() {
    let mut s = setup();
    let spe = E::slots_per_epoch();
    let anchor_root = s.anchor.block.canonical_root();
    let a = build_block(
        &s.anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents::default(),
        &s.spec,
    )
    .expect("block");
    assert!(!import(&mut s, &a.block), "nothing was advanced yet");
    let a_root = a.block.canonical_root();

    // Not kept: a block fork choice does not know, a state not after its block.
    s.store
        .keep_advanced_state(Root::repeat_byte(0x99), advanced(&a.post, 20, &s.spec));
    assert!(
        s.store
            .advanced_state(&Root::repeat_byte(0x99), 20)
            .is_none()
    );
    s.store.keep_advanced_state(a_root, a.post.clone());
    assert!(s.store.advanced_state(&a_root, ANCHOR_SLOT + 1).is_none());

    // A's state advanced to the next epoch's first slot: asked for at that slot or later, not
    // before it, not for another block; and the checkpoint state of (epoch 3, A).
    let boundary = ANCHOR_SLOT + spe;
    let a_advanced = advanced(&a.post, boundary, &s.spec);
    s.store.keep_advanced_state(a_root, a_advanced.clone());
    let kept = s.store.advanced_state(&a_root, boundary).expect("kept");
    assert_eq!(root_of(&kept), root_of(&a_advanced));
    assert!(s.store.advanced_state(&a_root, boundary + 3).is_some());
    assert!(s.store.advanced_state(&a_root, boundary - 1).is_none());
    assert!(s.store.advanced_state(&anchor_root, boundary).is_none());
    let checkpoint = types::phase0::Checkpoint {
        epoch: boundary / spe,
        root: a_root,
    };
    let checkpoint_state = s.store.checkpoint_state(&checkpoint).expect("known");
    assert_eq!(root_of(checkpoint_state), root_of(&a_advanced));

    // A block on the anchor (A's sibling) does not start from A's advanced state.
    let sibling =
        build_block(&s.anchor.post, boundary, &BlockContents::default(), &s.spec).expect("block");
    assert!(!import(&mut s, &sibling.block));

    // A block on A two slots after the advance starts from it (and runs the two slots).
    let b =
        build_block(&a.post, boundary + 2, &BlockContents::default(), &s.spec).expect("block on A");
    assert!(import(&mut s, &b.block));
    let b_root = b.block.canonical_root();
    let b_state = s.store.load_block_state(&b_root).expect("B's post-state");
    assert_eq!(root_of(&b_state), b.state_root);

    // Two are kept (a late head's and the head's before it); a third lets the oldest go.
    let next = boundary + 3;
    s.store
        .keep_advanced_state(a_root, advanced(&a.post, next, &s.spec));
    s.store
        .keep_advanced_state(b_root, advanced(&b_state, next, &s.spec));
    assert!(s.store.advanced_state(&a_root, next).is_some());
    assert!(s.store.advanced_state(&b_root, next).is_some());
    let sibling_root = sibling.block.canonical_root();
    s.store
        .keep_advanced_state(sibling_root, advanced(&sibling.post, next, &s.spec));
    assert!(s.store.advanced_state(&a_root, next).is_none());
    assert!(s.store.advanced_state(&b_root, next).is_some());
    assert!(s.store.advanced_state(&sibling_root, next).is_some());
}
