//! `state_transition_from_advanced`: a block on its parent's post-state advanced ahead to the
//! block's slot reaches the same post-state as the spec's `state_transition` on the parent's
//! post-state, across epoch boundaries and skipped slots; a block on another parent, a second
//! block at the same slot, and a state past the block's slot are refused and leave the state as
//! it was; the strict `state_transition` still refuses a state at the block's slot.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use state_harness::{AttestationSpec, BlockContents, build_block};
use state_processing::{
    CachedBeaconState,
    genesis::interop_genesis_state,
    per_block::{AlwaysValid, BlockProcessingError, HeaderInvalid, VerifySignatures},
    per_slot::process_slots,
    state_transition::{state_transition, state_transition_from_advanced},
};
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};

type E = MinimalEthSpec;

/// `state_transition` or `state_transition_from_advanced`.
type Transition = fn(
    &mut CachedBeaconState<E>,
    &SignedBeaconBlock<E>,
    VerifySignatures,
    bool,
    &AlwaysValid,
    &ChainSpec,
) -> Result<(), BlockProcessingError>;

fn spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)
}

fn genesis(spec: &ChainSpec) -> CachedBeaconState<E> {
    CachedBeaconState::new(
        interop_genesis_state::<E>(64, 1_600_000_000, Root::repeat_byte(0x42), spec).unwrap(),
    )
}

fn contents(slot: Slot) -> BlockContents {
    BlockContents {
        attestations: if slot > 1 {
            vec![AttestationSpec::whole_slot(slot - 1)]
        } else {
            Vec::new()
        },
        ..BlockContents::default()
    }
}

/// `state` advanced through empty slots to `slot`, hashed (as a node's timer leaves it).
fn advanced(state: &CachedBeaconState<E>, slot: Slot, spec: &ChainSpec) -> CachedBeaconState<E> {
    let mut advanced = state.clone();
    process_slots(&mut advanced, slot, spec).unwrap();
    advanced.hash_tree_root().unwrap();
    advanced
}

#[test]
fn a_block_on_its_advanced_parent_state_reaches_the_spec_post_state() {
    let spec = spec();
    let spe = E::slots_per_epoch();
    let mut parent = genesis(&spec);
    // Every slot of three epochs but a few skipped, among them an epoch's first slot and a run
    // of slots over an epoch boundary: the advance then crosses it with empty slots.
    let skipped = [spe, 2 * spe - 1, 2 * spe, 2 * spe + 1];
    let mut checked_boundaries = 0;
    for slot in (1..=3 * spe).filter(|s| !skipped.contains(s)) {
        let built = build_block(&parent, slot, &contents(slot), &spec).unwrap();
        let block = built.block;
        let mut by_spec = parent.clone();
        state_transition(
            &mut by_spec,
            &block,
            VerifySignatures::Batched,
            true,
            &AlwaysValid,
            &spec,
        )
        .unwrap();
        // Advanced all the way, and only part of the way (the rest is run as the spec does).
        for advance_to in [slot, (*parent.state.slot() + 1).min(slot)] {
            let mut on_advanced = advanced(&parent, advance_to, &spec);
            state_transition_from_advanced(
                &mut on_advanced,
                &block,
                VerifySignatures::Batched,
                true,
                &AlwaysValid,
                &spec,
            )
            .unwrap();
            assert_eq!(
                on_advanced.hash_tree_root().unwrap(),
                by_spec.hash_tree_root().unwrap(),
                "slot {slot} on a state advanced to {advance_to}"
            );
        }
        if slot % spe == 0 || skipped.contains(&(slot - 1)) {
            checked_boundaries += 1;
        }
        parent = by_spec;
    }
    assert!(checked_boundaries >= 3, "{checked_boundaries} boundaries");
}

#[test]
fn an_advanced_state_takes_no_block_of_another_parent_or_slot() {
    let spec = spec();
    let mut chain = genesis(&spec);
    for slot in 1..=3 {
        chain = build_block(&chain, slot, &contents(slot), &spec)
            .unwrap()
            .post;
    }
    let parent = chain;
    // A block at slot 5 on a child of the parent: not on the advanced state's block.
    let child = build_block(&parent, 4, &contents(4), &spec).unwrap().post;
    let on_other = build_block(&child, 5, &contents(5), &spec).unwrap().block;
    let advanced_state = advanced(&parent, 5, &spec);

    // Signatures unchecked where a batched check would report first that the block's sync
    // aggregate signs another parent's root; the header's checks are what is tested here.
    let refuse = |transition: Transition, state: &CachedBeaconState<E>, block, verify| {
        let mut working = state.clone();
        let before = working.hash_tree_root().unwrap();
        let error = transition(&mut working, block, verify, true, &AlwaysValid, &spec).unwrap_err();
        assert_eq!(working.hash_tree_root().unwrap(), before, "{error:?}");
        error
    };

    // A block whose parent is not the advanced state's block.
    let error = refuse(
        state_transition_from_advanced,
        &advanced_state,
        &on_other,
        VerifySignatures::None,
    );
    assert!(
        matches!(
            error,
            BlockProcessingError::Header(HeaderInvalid::ParentRootMismatch { .. })
        ),
        "{error:?}"
    );

    // A block at a slot the state is already past.
    let early = build_block(&parent, 4, &contents(4), &spec).unwrap().block;
    let error = refuse(
        state_transition_from_advanced,
        &advanced_state,
        &early,
        VerifySignatures::None,
    );
    assert!(
        matches!(
            error,
            BlockProcessingError::SlotNotAfterState { block: 4, state: 5 }
        ),
        "{error:?}"
    );

    // The post-state of a block at slot 5 takes no second block at slot 5.
    let built = build_block(&parent, 5, &contents(5), &spec).unwrap();
    let error = refuse(
        state_transition_from_advanced,
        &built.post,
        &built.block,
        VerifySignatures::Batched,
    );
    assert!(
        matches!(
            error,
            BlockProcessingError::Header(HeaderInvalid::NotNewerThanLatestHeader { .. })
        ),
        "{error:?}"
    );

    // The spec's transition keeps its own rule: a state at the block's slot is refused.
    let error = refuse(
        state_transition,
        &advanced_state,
        &built.block,
        VerifySignatures::Batched,
    );
    assert!(
        matches!(
            error,
            BlockProcessingError::SlotNotAfterState { block: 5, state: 5 }
        ),
        "{error:?}"
    );
}
