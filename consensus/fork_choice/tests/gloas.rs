//! The Gloas store on a real chain (interop genesis at Gloas, minimal preset, blocks from
//! `state_harness` with real signatures): the head's payload status, a block on an unverified
//! FULL parent, the attestation and payload-attestation checks of Gloas — each rejection with
//! its error variant and the store unchanged.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use fork_choice::gloas::{GloasError, GloasForkChoice, GloasHead, GloasSpecStore, PayloadStatus};
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

/// A state-free store and the summaries it is fed (the node's path: no states at all).
mod results {
    use super::*;
    use fork_choice::JustifiedBalances;
    use fork_choice::gloas::{GloasArrival, GloasBlockSummary};
    use types::gloas::AttestationData;
    use types::phase0::Validator;
    use types::{EthSpec, Hash32};

    pub(crate) const VALIDATORS: u64 = 64;

    pub(crate) fn root(i: u8) -> Root {
        Root::repeat_byte(i)
    }

    pub(crate) fn checkpoint(epoch: u64, root: Root) -> Checkpoint {
        Checkpoint { epoch, root }
    }

    /// Block `i` at `slot` on `parent`, its bid building on the parent's payload when
    /// `on_full` (block hash `i`), with the given post-state checkpoints.
    pub(crate) fn summary(
        i: u8,
        slot: Slot,
        parent: u8,
        on_full: bool,
        justified: Checkpoint,
        finalized: Checkpoint,
    ) -> GloasBlockSummary {
        GloasBlockSummary {
            root: root(i),
            parent_root: root(parent),
            slot,
            proposer_index: u64::from(i),
            bid_block_hash: Hash32::repeat_byte(i),
            bid_parent_block_hash: Hash32::repeat_byte(if on_full { parent } else { 0xff }),
            justified: justified.clone(),
            finalized: finalized.clone(),
            unrealized_justified: justified,
            unrealized_finalized: finalized,
            arrival: GloasArrival {
                attestation_timely: false,
                ptc_timely: false,
            },
            ptc: (0..<E as EthSpec>::PtcSize::to_usize())
                .map(|i| i as u64)
                .collect(),
            slot_committee_members: Vec::new(),
            payload_attestations: Vec::new(),
        }
    }

    pub(crate) fn balances(epoch: u64) -> JustifiedBalances {
        let validator = Validator {
            pubkey: Default::default(),
            withdrawal_credentials: Default::default(),
            effective_balance: 32_000_000_000,
            slashed: false,
            activation_eligibility_epoch: 0,
            activation_epoch: 0,
            exit_epoch: u64::MAX,
            withdrawable_epoch: u64::MAX,
        };
        let validators = vec![validator; VALIDATORS as usize];
        JustifiedBalances::from_validators::<E>(epoch, validators.len(), validators.iter())
    }

    pub(crate) fn store() -> GloasForkChoice<E> {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas);
        let genesis = summary(
            0,
            0,
            0,
            false,
            checkpoint(0, root(0)),
            checkpoint(0, root(0)),
        );
        let mut store = GloasForkChoice::from_anchor(&genesis, GENESIS_TIME, Arc::new(spec));
        store.set_justified_balances(&checkpoint(0, root(0)), balances(0));
        store
    }

    pub(crate) fn vote(slot: Slot, head: u8, index: u64, target: Checkpoint) -> AttestationData {
        AttestationData {
            slot,
            index,
            beacon_block_root: root(head),
            source: checkpoint(0, root(0)),
            target,
        }
    }
}

/// Blocks G(0) ← A(1) ← B(2, on A's payload) and G ← F(2), votes on each; then E(9) on B
/// justifies and finalizes (1, B). Pruning drops G, A (and its verified payload) and F: the pruned store has the same head
/// and the same viable leaves and weights as one that keeps every block, and later votes from
/// validators whose latest message was on the dropped F move the same weight in both.
#[test]
fn pruning_on_finalization_keeps_the_head_and_the_weights() {
    use results::*;
    let mut pruned = store();
    let mut kept = store();
    pruned.set_prune_threshold(0);
    kept.set_prune_threshold(usize::MAX);
    let genesis = checkpoint(0, root(0));
    let finalized = checkpoint(1, root(2));
    let a_payload_root = root(1);
    for store in [&mut pruned, &mut kept] {
        store.on_tick(time_at(&ChainSpec::minimal(), 2));
        for block in [
            summary(1, 1, 0, false, genesis.clone(), genesis.clone()),
            summary(3, 2, 0, false, genesis.clone(), genesis.clone()),
        ] {
            store.insert_block_summary(&block).unwrap();
        }
        store
            .on_verified_execution_payload(a_payload_root, Ok(()))
            .unwrap();
        store
            .insert_block_summary(&summary(2, 2, 1, true, genesis.clone(), genesis.clone()))
            .unwrap();
        store.on_tick(time_at(&ChainSpec::minimal(), 9));
        // Validators 0..8 on F, 8..16 on B, 16..20 on A's payload.
        let on_f: Vec<u64> = (0..8).collect();
        let on_b: Vec<u64> = (8..16).collect();
        let on_a_full: Vec<u64> = (16..20).collect();
        store
            .on_indexed_attestation(&results::vote(2, 3, 0, genesis.clone()), &on_f, false)
            .unwrap();
        store
            .on_indexed_attestation(&results::vote(2, 2, 0, genesis.clone()), &on_b, false)
            .unwrap();
        store
            .on_indexed_attestation(&results::vote(3, 1, 1, genesis.clone()), &on_a_full, false)
            .unwrap();
        store.get_head().unwrap();
        store.set_justified_balances(&finalized, balances(1));
        store
            .insert_block_summary(&summary(
                4,
                9,
                2,
                false,
                finalized.clone(),
                finalized.clone(),
            ))
            .unwrap();
        assert_eq!(store.finalized_checkpoint(), &finalized);
    }
    assert_eq!(pruned.block_count(), 2);
    assert_eq!(kept.block_count(), 5);
    assert!([0, 1, 3].iter().all(|&i| !pruned.contains_block(&root(i))));
    assert!(!pruned.is_payload_verified(&root(1)));
    assert!(pruned.payload_timeliness_vote(&root(3)).is_none());

    let compare = |pruned: &mut GloasForkChoice<E>, kept: &mut GloasForkChoice<E>| {
        let head = pruned.get_head().unwrap();
        assert_eq!(head, kept.get_head().unwrap());
        let mut leaves = pruned.viable_for_head_nodes().unwrap();
        let mut all_leaves = kept.viable_for_head_nodes().unwrap();
        leaves.sort();
        all_leaves.sort();
        assert_eq!(leaves, all_leaves);
        head
    };
    let head = compare(&mut pruned, &mut kept);
    assert_eq!((head.root, head.slot), (root(4), 9));

    // Validators whose latest message was on the dropped F vote for E: their weight moves as
    // in the store that kept F.
    for store in [&mut pruned, &mut kept] {
        store.on_tick(time_at(&ChainSpec::minimal(), 11));
        store
            .on_indexed_attestation(
                &results::vote(10, 4, 0, finalized.clone()),
                &[0, 1, 2],
                false,
            )
            .unwrap();
    }
    compare(&mut pruned, &mut kept);
}

/// A store with a pruned fork, a verified payload, PTC votes, an equivocator, the proposer
/// boost and latest messages on dropped and kept nodes, written and read back: the same head
/// (root and payload status), the same viable leaves and weights, the same bytes again; and
/// truncated or extended bytes are refused.
#[test]
fn a_persisted_store_restores_to_the_same_head() {
    use fork_choice::gloas::{GloasPersistedError, PayloadStatus};
    use results::*;
    use types::gloas::{PayloadAttestationData, PayloadAttestationMessage};
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas);
    let genesis = checkpoint(0, root(0));
    let finalized = checkpoint(1, root(2));
    let mut store = store();
    store.set_prune_threshold(0);
    store.on_tick(time_at(&spec, 2));
    store
        .insert_block_summary(&summary(1, 1, 0, false, genesis.clone(), genesis.clone()))
        .unwrap();
    store
        .insert_block_summary(&summary(3, 2, 0, false, genesis.clone(), genesis.clone()))
        .unwrap();
    store
        .on_verified_execution_payload(root(1), Ok(()))
        .unwrap();
    store
        .insert_block_summary(&summary(2, 2, 1, true, genesis.clone(), genesis.clone()))
        .unwrap();
    store.on_tick(time_at(&spec, 9));
    let on = |range: std::ops::Range<u64>| range.collect::<Vec<u64>>();
    store
        .on_indexed_attestation(&results::vote(2, 3, 0, genesis.clone()), &on(0..4), false)
        .unwrap();
    store
        .on_indexed_attestation(&results::vote(2, 1, 1, genesis.clone()), &on(8..12), false)
        .unwrap();
    store
        .on_indexed_attestation(&results::vote(2, 2, 0, genesis.clone()), &on(12..16), false)
        .unwrap();
    store.get_head().unwrap();
    store.set_justified_balances(&finalized, balances(1));
    let mut e = summary(4, 9, 2, false, finalized.clone(), finalized.clone());
    e.arrival.attestation_timely = true;
    e.slot_committee_members = on(0..8);
    store.insert_block_summary(&e).unwrap();
    assert_eq!(store.block_count(), 2);
    assert_eq!(store.proposer_boost_root(), root(4));
    store
        .on_verified_execution_payload(root(4), Ok(()))
        .unwrap();
    store
        .on_payload_attestation_message(
            &PayloadAttestationMessage {
                validator_index: 1,
                data: PayloadAttestationData {
                    beacon_block_root: root(4),
                    slot: 9,
                    payload_present: true,
                    blob_data_available: false,
                },
                signature: Default::default(),
            },
            true,
        )
        .unwrap();
    store.on_verified_attester_slashing(&[13]).unwrap();
    let round_trip = |store: &mut GloasForkChoice<E>| {
        let bytes = store.to_persisted_bytes();
        let mut restored =
            GloasForkChoice::<E>::from_persisted_bytes(&bytes, Arc::new(spec.clone())).unwrap();
        assert_eq!(restored.to_persisted_bytes(), bytes);
        assert_eq!(
            restored.wanted_justified_balances(),
            vec![finalized.clone()]
        );
        restored.set_justified_balances(&finalized, balances(1));
        let head = store.get_head().unwrap();
        assert_eq!(restored.get_head().unwrap(), head);
        let mut leaves = store.viable_for_head_nodes().unwrap();
        let mut restored_leaves = restored.viable_for_head_nodes().unwrap();
        leaves.sort();
        restored_leaves.sort();
        assert_eq!(restored_leaves, leaves);
        assert_eq!(restored.proposer_boost_root(), store.proposer_boost_root());
        assert_eq!(restored.finalized_checkpoint(), &finalized);
        assert_eq!(restored.time(), store.time());
        assert_eq!(
            restored.payload_timeliness_vote(&root(4)),
            store.payload_timeliness_vote(&root(4))
        );
        assert!(restored.is_payload_verified(&root(4)));
        (head, bytes)
    };
    // In E's slot, boosted; its payload verified and no votes on either variant: FULL wins
    // the tie (`payload_status`).
    let (head, _) = round_trip(&mut store);
    assert_eq!(store.proposer_boost_root(), root(4));
    assert_eq!(
        (head.root, head.payload_status),
        (root(4), PayloadStatus::Full)
    );

    // Later, unboosted: votes for E of its own slot and for its payload.
    store.on_tick(time_at(&spec, 11));
    store
        .on_indexed_attestation(
            &results::vote(9, 4, 0, finalized.clone()),
            &on(20..30),
            false,
        )
        .unwrap();
    store
        .on_indexed_attestation(
            &results::vote(10, 4, 1, finalized.clone()),
            &on(30..33),
            false,
        )
        .unwrap();
    let (head, bytes) = round_trip(&mut store);
    assert_eq!(
        (head.root, head.payload_status),
        (root(4), PayloadStatus::Full)
    );

    for corrupt in [
        &bytes[..bytes.len() - 1],
        &[bytes.as_slice(), &[0]].concat(),
    ] {
        let err = GloasForkChoice::<E>::from_persisted_bytes(corrupt, Arc::new(spec.clone()))
            .err()
            .unwrap();
        assert!(
            matches!(
                err,
                GloasError::CorruptPersisted(GloasPersistedError::Layout(_))
            ),
            "{err}"
        );
    }
}

use ssz_types::typenum::Unsigned;
