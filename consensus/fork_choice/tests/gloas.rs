//! The Gloas store on a real chain (interop genesis at Gloas, minimal preset, blocks from
//! `state_harness` with real signatures): the head's payload status, a block on an unverified
//! FULL parent, the attestation and payload-attestation checks of Gloas — each rejection with
//! its error variant and the store unchanged.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use fork_choice::gloas::{GloasError, GloasHead, GloasSpecStore, PayloadStatus};
use ssz_types::BitVector;
use state_harness::{BuiltBlock, GloasBlockContents, ParentPayload, build_gloas_block};
use state_processing::CachedBeaconState;
use state_processing::genesis::{interop_genesis_block_of, interop_genesis_state};
use state_processing::gloas::ptc::get_ptc;
use state_processing::per_block::{AlwaysValid, VerifySignatures};
use types::gloas::{
    AggregationBits, Attestation, AttestationData, PayloadAttestationData,
    PayloadAttestationMessage,
};
use types::phase0::Checkpoint;
use types::{ChainSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;

struct Chain {
    spec: ChainSpec,
    genesis: BuiltBlock<E>,
    store: GloasSpecStore<E>,
}

fn chain() -> Chain {
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas);
    let state =
        interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
    let mut post = CachedBeaconState::new(state);
    let state_root = post.hash_tree_root().unwrap();
    let block = interop_genesis_block_of::<E>(&post.state, state_root);
    let SignedBeaconBlock::Gloas(anchor) = &block else {
        panic!("a Gloas genesis block");
    };
    let store = GloasSpecStore::new(
        post.clone(),
        &anchor.message,
        Arc::new(spec.clone()),
        VerifySignatures::Batched,
    )
    .unwrap();
    Chain {
        genesis: BuiltBlock {
            block,
            post,
            state_root,
        },
        spec,
        store,
    }
}

fn time_at(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot)
}

fn block_on(
    chain: &Chain,
    parent: &BuiltBlock<E>,
    slot: Slot,
    payload: ParentPayload,
) -> BuiltBlock<E> {
    let contents = GloasBlockContents {
        parent_payload: payload,
        ..GloasBlockContents::default()
    };
    build_gloas_block(&parent.post, slot, &contents, &chain.spec).unwrap()
}

/// What a rejected message must leave as it was.
#[derive(Debug, PartialEq)]
struct Snapshot {
    head: GloasHead,
    boost: Root,
    justified: Checkpoint,
    timeliness_votes: Vec<Option<bool>>,
}

fn snapshot(store: &mut GloasSpecStore<E>, root: &Root) -> Snapshot {
    Snapshot {
        head: store.get_head().unwrap(),
        boost: store.store().proposer_boost_root(),
        justified: store.store().justified_checkpoint().clone(),
        timeliness_votes: store
            .store()
            .payload_timeliness_vote(root)
            .unwrap()
            .to_vec(),
    }
}

fn attestation(slot: Slot, head: Root, index: u64, target: Root) -> Attestation<E> {
    let mut aggregation_bits = AggregationBits::new();
    aggregation_bits.push(true);
    let mut committee_bits = BitVector::new();
    committee_bits.set(0, true).unwrap();
    Attestation {
        aggregation_bits,
        data: AttestationData {
            slot,
            index,
            beacon_block_root: head,
            source: Checkpoint {
                epoch: 0,
                root: target,
            },
            target: Checkpoint {
                epoch: 0,
                root: target,
            },
        },
        signature: Default::default(),
        committee_bits,
    }
}

#[test]
fn a_block_is_the_empty_head_and_a_child_on_its_unverified_payload_is_refused() {
    let mut chain = chain();
    let genesis_root = chain.genesis.block.canonical_root();
    let head = chain.store.get_head().unwrap();
    assert_eq!(
        (head.root, head.slot, head.payload_status),
        (genesis_root, 0, PayloadStatus::Empty)
    );

    chain.store.on_tick(time_at(&chain.spec, 1));
    let one = block_on(&chain, &chain.genesis, 1, ParentPayload::Empty);
    let one_root = chain.store.on_block(&one.block, &AlwaysValid).unwrap();
    let head = chain.store.get_head().unwrap();
    assert_eq!(
        (head.root, head.slot, head.payload_status),
        (one_root, 1, PayloadStatus::Empty)
    );
    assert_eq!(chain.store.store().proposer_boost_root(), one_root);
    assert!(!chain.store.store().is_payload_verified(&one_root));
    // Without a verified payload, the proposer of the next slot builds on EMPTY.
    assert!(!chain.store.store().should_build_on_full(&head, 2).unwrap());

    chain.store.on_tick(time_at(&chain.spec, 2));
    let before = snapshot(&mut chain.store, &one_root);
    let two = block_on(&chain, &one, 2, ParentPayload::Full);
    let two_root = two.block.canonical_root();
    let err = chain.store.on_block(&two.block, &AlwaysValid).unwrap_err();
    assert!(
        matches!(err, GloasError::ParentPayloadNotVerified { block, parent }
            if block == two_root && parent == one_root),
        "{err}"
    );
    assert!(!chain.store.store().contains_block(&two_root));
    assert_eq!(snapshot(&mut chain.store, &one_root), before);

    // The same slot built beside the payload is accepted.
    let two_empty = block_on(&chain, &one, 2, ParentPayload::Empty);
    let two_empty_root = chain
        .store
        .on_block(&two_empty.block, &AlwaysValid)
        .unwrap();
    let head = chain.store.get_head().unwrap();
    assert_eq!(
        (head.root, head.payload_status),
        (two_empty_root, PayloadStatus::Empty)
    );
}

/// An attestation's slot and index, and the rejection expected.
type Case = (Slot, u64, fn(&GloasError) -> bool);

#[test]
fn gloas_attestation_checks_refuse_payload_votes_that_cannot_hold() {
    let mut chain = chain();
    let genesis_root = chain.genesis.block.canonical_root();
    chain.store.on_tick(time_at(&chain.spec, 1));
    let one = block_on(&chain, &chain.genesis, 1, ParentPayload::Empty);
    let one_root = chain.store.on_block(&one.block, &AlwaysValid).unwrap();
    chain.store.on_tick(time_at(&chain.spec, 3));
    let before = snapshot(&mut chain.store, &one_root);

    let cases: [Case; 3] = [
        // A vote of the block's own slot cannot claim the payload.
        (1, 1, |e| matches!(e, GloasError::SameSlotPayloadVote(_))),
        // A later vote for a payload that was never verified.
        (2, 1, |e| matches!(e, GloasError::UnverifiedPayloadVote(_))),
        // Index 2 means nothing.
        (2, 2, |e| {
            matches!(e, GloasError::AttestationIndexOutOfRange(2))
        }),
    ];
    for (slot, index, expected) in cases {
        let err = chain
            .store
            .on_attestation(&attestation(slot, one_root, index, genesis_root), false)
            .unwrap_err();
        assert!(expected(&err), "slot {slot} index {index}: {err}");
        assert_eq!(snapshot(&mut chain.store, &one_root), before);
    }
}

#[test]
fn payload_attestation_messages_from_outside_the_ptc_or_slot_are_refused_or_ignored() {
    let mut chain = chain();
    chain.store.on_tick(time_at(&chain.spec, 1));
    let one = block_on(&chain, &chain.genesis, 1, ParentPayload::Empty);
    let one_root = chain.store.on_block(&one.block, &AlwaysValid).unwrap();
    let before = snapshot(&mut chain.store, &one_root);
    let ptc = get_ptc(&one.post.view().unwrap(), 1).unwrap();
    let outsider = (0..64).find(|i| !ptc.contains(i)).unwrap();
    let message = |validator_index, slot| PayloadAttestationMessage {
        validator_index,
        data: PayloadAttestationData {
            beacon_block_root: one_root,
            slot,
            payload_present: true,
            blob_data_available: true,
        },
        signature: Default::default(),
    };

    let err = chain
        .store
        .on_payload_attestation_message(&message(outsider, 1), false)
        .unwrap_err();
    assert!(matches!(err, GloasError::NotInPtc { .. }), "{err}");
    // A member's message with a signature that does not verify.
    let err = chain
        .store
        .on_payload_attestation_message(&message(ptc[0], 1), false)
        .unwrap_err();
    assert!(
        matches!(err, GloasError::InvalidPayloadAttestation(_)),
        "{err}"
    );
    // For another slot than its block's: nothing changes, and it is not an error.
    chain
        .store
        .on_payload_attestation_message(&message(ptc[0], 2), false)
        .unwrap();
    assert_eq!(snapshot(&mut chain.store, &one_root), before);

    // From the wire, a later slot's message is refused.
    chain.store.on_tick(time_at(&chain.spec, 2));
    let err = chain
        .store
        .on_payload_attestation_message(&message(ptc[0], 1), false)
        .unwrap_err();
    assert!(
        matches!(err, GloasError::PayloadAttestationNotCurrent { .. }),
        "{err}"
    );
    // From a block, it counts (signatures were the block's to check).
    chain
        .store
        .on_payload_attestation_message(&message(ptc[0], 1), true)
        .unwrap();
    let votes = chain
        .store
        .store()
        .payload_timeliness_vote(&one_root)
        .unwrap();
    let position = ptc.iter().position(|i| *i == ptc[0]).unwrap();
    assert_eq!(votes[position], Some(true));
    // The payload is not verified here: the PTC's votes do not make it timely.
    assert!(!chain.store.store().payload_timeliness(&one_root, true));
}
