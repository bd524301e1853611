//! Fork choice fed results instead of states: a block inserted from its summary (checked on
//! arrival, its transition and pulled-up tip computed outside) lands exactly as `on_block` puts
//! it; votes given as attesting indices move the head as `on_attestation` does and are refused
//! alike; the justified balances read of a state keep the effective balance of a validator
//! whose vote weighs nothing.

mod common;

use common::{ANCHOR_SLOT, E, electra_block, setup, time_at};
use fork_choice::{
    Arrival, BlockSummary, Columns, Error, ForkChoice, JustifiedBalances, slashable_indices,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use state_processing::{
    CachedBeaconState,
    per_block::{AlwaysValid, VerifySignatures, get_indexed_attestation},
    per_epoch::process_justification_and_finalization_progressive,
};
use types::{EthSpec, Root, phase0::Checkpoint};

/// What the owner of the states computes for fork choice after a block's transition.
fn summary(built: &BuiltBlock<E>, arrival: Arrival) -> BlockSummary {
    let block = electra_block(&built.block);
    let mut post = built.post.clone();
    post.progressive_balances().expect("balances");
    let mut pulled_up = post.clone();
    process_justification_and_finalization_progressive(&mut pulled_up).expect("pulled up");
    let view = post.view().expect("view");
    let up = pulled_up.view().expect("view");
    BlockSummary {
        root: built.block.canonical_root(),
        parent_root: block.message.parent_root,
        slot: block.message.slot,
        proposer_index: block.message.proposer_index,
        justified: view.current_justified_checkpoint.clone(),
        finalized: view.finalized_checkpoint.clone(),
        unrealized_justified: up.current_justified_checkpoint.clone(),
        unrealized_finalized: up.finalized_checkpoint.clone(),
        payload_hash: Some(block.message.body.execution_payload.block_hash),
        is_timely: arrival.is_timely,
    }
}

/// The attesting indices of `built`'s attestations, by the state they target (here the
/// parent's, in the same epoch).
fn votes(
    target_state: &CachedBeaconState<E>,
    built: &BuiltBlock<E>,
) -> Vec<(types::electra::AttestationData, Vec<u64>)> {
    let mut state = target_state.clone();
    electra_block(&built.block)
        .message
        .body
        .attestations
        .iter()
        .map(|attestation| {
            let (view, caches) = state.view_mut().expect("view");
            let indexed =
                get_indexed_attestation(&view.as_ref(), caches, attestation).expect("indexed");
            (attestation.data.clone(), indexed.attesting_indices.to_vec())
        })
        .collect()
}

#[test]
fn a_summary_inserts_the_block_as_on_block_does_and_indexed_votes_move_the_head_alike() {
    let mut by_state = setup();
    let mut by_results = setup();
    for s in [&mut by_state.store, &mut by_results.store] {
        s.set_verify_signatures(VerifySignatures::None);
    }
    let spec = by_state.spec.clone();
    let anchor = by_state.anchor.clone();
    // Two children of the anchor, then a block voting for the first.
    let a = build_block(
        &anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents::default(),
        &spec,
    )
    .expect("block");
    let b = build_block(
        &anchor.post,
        ANCHOR_SLOT + 2,
        &BlockContents {
            graffiti: Root::repeat_byte(3),
            ..Default::default()
        },
        &spec,
    )
    .expect("block");
    let voter = build_block(
        &a.post,
        ANCHOR_SLOT + 3,
        &BlockContents {
            attestations: vec![AttestationSpec::whole_slot(ANCHOR_SLOT + 1)],
            ..Default::default()
        },
        &spec,
    )
    .expect("block with votes");
    for (built, parent) in [(&a, &anchor), (&b, &anchor), (&voter, &a)] {
        let slot = built.block.slot();
        for s in [&mut by_state.store, &mut by_results.store] {
            s.on_tick(time_at(&spec, slot));
        }
        by_state
            .store
            .on_block(&built.block, Columns::Retrieved(&[]), &AlwaysValid)
            .expect("valid");
        for attestation in electra_block(&built.block).message.body.attestations.iter() {
            by_state
                .store
                .on_attestation(attestation, true)
                .expect("valid vote");
        }
        let root = built.block.canonical_root();
        let arrival = by_results
            .store
            .check_block(root, built.block.parent_root(), slot)
            .expect("checked")
            .expect("a new block");
        assert_eq!(
            by_results
                .store
                .insert_block(&summary(built, arrival))
                .expect("inserted"),
            root
        );
        for (data, indices) in votes(&parent.post, built) {
            by_results
                .store
                .on_indexed_attestation(&data, &indices, true)
                .expect("valid vote");
        }
        // Known now: nothing to check again.
        assert_eq!(
            by_results
                .store
                .check_block(root, built.block.parent_root(), slot)
                .expect("checked"),
            None
        );
    }
    let view = |s: &mut ForkChoice<E>| {
        let head = s.get_head().expect("head");
        let nodes: Vec<_> = s
            .proto_array()
            .nodes()
            .iter()
            .map(|n| (n.root, n.weight, n.timely, n.unrealized_justified.clone()))
            .collect();
        (head, nodes, s.proposer_boost_root())
    };
    let expected = view(&mut by_state.store);
    assert_eq!(view(&mut by_results.store), expected);
    assert_eq!(expected.0.root, voter.block.canonical_root());

    // A vote for an unknown block is refused as `on_attestation` refuses it, and changes
    // nothing.
    let (mut data, indices) = votes(&anchor.post, &voter).remove(0);
    data.beacon_block_root = Root::repeat_byte(0x55);
    let err = by_results
        .store
        .on_indexed_attestation(&data, &indices, false);
    assert!(matches!(err, Err(Error::UnknownHeadBlock(_))), "{err:?}");
    assert_eq!(view(&mut by_results.store), expected);
}

#[test]
fn justified_balances_keep_the_effective_balance_of_a_slashed_validator() {
    let s = setup();
    let state = s.anchor.post.clone();
    let balances = JustifiedBalances::from_state(&state).expect("balances");
    let full = balances.vote_weights()[0];
    assert!(full > 0);
    assert_eq!(balances.vote_weights().len(), 64);
    assert!(balances.vote_weights().iter().all(|b| *b == full));
    assert_eq!(balances.total_active(), 64 * full);
    // Validator 5 slashed: its vote weighs nothing, its effective balance is still there
    // (`is_head_weak` counts it for an equivocator).
    let view = state.view().expect("view");
    let mut validators: Vec<types::phase0::Validator> = view.validators.iter().cloned().collect();
    validators[5].slashed = true;
    let epoch = ANCHOR_SLOT / <E as EthSpec>::slots_per_epoch();
    let balances =
        JustifiedBalances::from_validators::<E>(epoch, validators.len(), validators.iter());
    assert_eq!(balances.vote_weights()[5], 0);
    assert_eq!(balances.effective_balance(5), full);
    assert_eq!(balances.effective_balance(6), full);
    assert_eq!(balances.effective_balance(1000), 0);
    // Slashed validators stay active: the total counts them.
    assert_eq!(balances.total_active(), 64 * full);
}

#[test]
fn only_slashable_pairs_give_equivocating_indices() {
    let s = setup();
    let spec = s.spec.clone();
    let a = build_block(
        &s.anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents {
            attestations: vec![],
            ..Default::default()
        },
        &spec,
    )
    .expect("block");
    let target = Checkpoint {
        epoch: ANCHOR_SLOT / <E as EthSpec>::slots_per_epoch(),
        root: a.block.canonical_root(),
    };
    let data = types::electra::AttestationData {
        slot: ANCHOR_SLOT + 1,
        index: 0,
        beacon_block_root: target.root,
        source: target.clone(),
        target,
    };
    let indexed = |indices: &[u64], root: Root| {
        let mut data = data.clone();
        data.beacon_block_root = root;
        types::electra::IndexedAttestation::<E> {
            attesting_indices: indices.to_vec().try_into().expect("within the limit"),
            data,
            signature: Default::default(),
        }
    };
    // Two attestations of the same target with different data: a double vote.
    let double = types::electra::AttesterSlashing {
        attestation_1: indexed(&[1, 2, 3], Root::repeat_byte(1)),
        attestation_2: indexed(&[2, 3, 4], Root::repeat_byte(2)),
    };
    assert_eq!(slashable_indices(&double).expect("slashable"), vec![2, 3]);
    let same = types::electra::AttesterSlashing {
        attestation_1: indexed(&[1, 2], Root::repeat_byte(1)),
        attestation_2: indexed(&[1, 2], Root::repeat_byte(1)),
    };
    assert!(matches!(slashable_indices(&same), Err(Error::NotSlashable)));
}
