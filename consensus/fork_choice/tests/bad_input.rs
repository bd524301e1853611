//! Bad input returns typed errors and leaves the store unchanged: blocks with an unknown or
//! pre-finalized parent, from the future; attestations for unknown blocks, from the future,
//! with inconsistent checkpoints. A valid block and attestation are accepted, for contrast.

use std::sync::Arc;

use fork_choice::{
    AvailabilityError, Columns, Config, Error, ForkChoice, Head, SpecStore, ThreadPoolBuilder,
};
use ssz_types::{BitList, BitVector};
use state_harness::{AttestationSpec, BlockContents, build_block};
use state_processing::per_block::AlwaysValid;
use types::{
    EthSpec, Root, SignedBeaconBlock, Slot,
    electra::{Attestation, AttestationData},
    phase0::Checkpoint,
};

mod common;

use common::{ANCHOR_SLOT, E, Setup, electra_block, setup, time_at};

/// What a handler could change.
#[derive(Debug, PartialEq)]
struct Snapshot {
    time: u64,
    justified: Checkpoint,
    finalized: Checkpoint,
    boost: Root,
    blocks: usize,
    head: Head,
    latest: Vec<Option<(u64, Option<Root>)>>,
}

fn snapshot(store: &mut ForkChoice<E>) -> Snapshot {
    Snapshot {
        time: store.time(),
        justified: store.justified_checkpoint().clone(),
        finalized: store.finalized_checkpoint().clone(),
        boost: store.proposer_boost_root(),
        blocks: store.proto_array().len(),
        head: store.get_head().expect("head"),
        latest: (0..64).map(|i| store.latest_message(i)).collect(),
    }
}

fn anchor_root(setup: &Setup) -> Root {
    setup.anchor.block.canonical_root()
}

fn attestation(slot: Slot, head: Root, target: Checkpoint) -> Attestation<E> {
    let mut bits = BitList::with_capacity(1).expect("capacity 1");
    bits.set(0, true).expect("in range");
    let mut committee_bits = BitVector::new();
    committee_bits.set(0, true).expect("in range");
    Attestation {
        aggregation_bits: bits,
        data: AttestationData {
            slot,
            index: 0,
            beacon_block_root: head,
            source: target.clone(),
            target,
        },
        signature: Default::default(),
        committee_bits,
    }
}

fn with_parent(block: &SignedBeaconBlock<E>, parent: Root, slot: Slot) -> SignedBeaconBlock<E> {
    let mut inner = electra_block(block).clone();
    inner.message.parent_root = parent;
    inner.message.slot = slot;
    SignedBeaconBlock::Fulu(inner)
}

#[test]
fn rejects_bad_blocks_without_changing_the_store() {
    let mut s = setup();
    let next = build_block(
        &s.anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents::default(),
        &s.spec,
    )
    .expect("block on the anchor");
    s.store.on_tick(time_at(&s.spec, ANCHOR_SLOT));
    let before = snapshot(&mut s.store);

    // From the future: the clock is still at the anchor's slot.
    let err = s
        .store
        .on_block(&next.block, Columns::Retrieved(&[]), &AlwaysValid);
    assert!(matches!(err, Err(Error::FutureBlock { .. })), "{err:?}");
    assert_eq!(snapshot(&mut s.store), before);

    s.store.on_tick(time_at(&s.spec, ANCHOR_SLOT + 1));
    let before = snapshot(&mut s.store);

    // Unknown parent.
    let orphan = with_parent(&next.block, Root::repeat_byte(0x77), ANCHOR_SLOT + 1);
    let err = s
        .store
        .on_block(&orphan, Columns::Retrieved(&[]), &AlwaysValid);
    assert!(matches!(err, Err(Error::UnknownParent { .. })), "{err:?}");
    assert_eq!(snapshot(&mut s.store), before);

    // Not after the finalized slot (the anchor finalizes epoch 2, which starts at its slot).
    let stale = with_parent(&next.block, anchor_root(&s), ANCHOR_SLOT);
    let err = s
        .store
        .on_block(&stale, Columns::Retrieved(&[]), &AlwaysValid);
    assert!(
        matches!(err, Err(Error::NotAfterFinalizedSlot { .. })),
        "{err:?}"
    );
    assert_eq!(snapshot(&mut s.store), before);

    // Columns not retrieved.
    let err = s
        .store
        .on_block(&next.block, Columns::Missing, &AlwaysValid);
    assert!(
        matches!(
            err,
            Err(Error::DataUnavailable {
                source: AvailabilityError::NotRetrieved,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(snapshot(&mut s.store), before);

    // Invalid: a state root that is not the post-state's.
    let mut bad_root = electra_block(&next.block).clone();
    bad_root.message.state_root = Root::repeat_byte(0x13);
    let err = s.store.on_block(
        &SignedBeaconBlock::Fulu(bad_root),
        Columns::Retrieved(&[]),
        &AlwaysValid,
    );
    assert!(matches!(err, Err(Error::InvalidBlock { .. })), "{err:?}");
    assert_eq!(snapshot(&mut s.store), before);

    // The valid block is taken and becomes the head, with the proposer boost.
    let root = s
        .store
        .on_block(&next.block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid block");
    assert_eq!(
        s.store.get_head().expect("head"),
        Head {
            root,
            slot: ANCHOR_SLOT + 1
        }
    );
    assert_eq!(s.store.proposer_boost_root(), root);
}

/// Which error a case expects.
type ErrorCheck = fn(&Error) -> bool;

#[test]
fn rejects_bad_attestations_without_changing_the_store() {
    let mut s = setup();
    let anchor = anchor_root(&s);
    let target = Checkpoint {
        epoch: 2,
        root: anchor,
    };
    s.store.on_tick(time_at(&s.spec, ANCHOR_SLOT + 1));
    let before = snapshot(&mut s.store);

    let cases: Vec<(Attestation<E>, ErrorCheck)> = vec![
        // Unknown head block.
        (
            attestation(ANCHOR_SLOT, Root::repeat_byte(0x55), target.clone()),
            |e| matches!(e, Error::UnknownHeadBlock(_)),
        ),
        // Unknown target block.
        (
            attestation(
                ANCHOR_SLOT,
                anchor,
                Checkpoint {
                    epoch: 2,
                    root: Root::repeat_byte(0x66),
                },
            ),
            |e| matches!(e, Error::UnknownTargetBlock(_)),
        ),
        // From the future: its slot is the current slot.
        (attestation(ANCHOR_SLOT + 1, anchor, target.clone()), |e| {
            matches!(e, Error::FutureAttestation { .. })
        }),
        // From a future epoch.
        (
            attestation(
                3 * <E as EthSpec>::slots_per_epoch(),
                anchor,
                Checkpoint {
                    epoch: 3,
                    root: anchor,
                },
            ),
            |e| matches!(e, Error::TargetEpochOutOfRange { .. }),
        ),
        // Target epoch not the epoch of the slot.
        (
            attestation(
                ANCHOR_SLOT,
                anchor,
                Checkpoint {
                    epoch: 1,
                    root: anchor,
                },
            ),
            |e| matches!(e, Error::TargetEpochSlotMismatch { .. }),
        ),
    ];
    for (i, (att, expected)) in cases.into_iter().enumerate() {
        let err = s
            .store
            .on_attestation(&att, false)
            .expect_err("bad attestation");
        assert!(expected(&err), "case {i}: {err:?}");
        assert_eq!(snapshot(&mut s.store), before, "case {i}");
    }
}

#[test]
fn rejects_a_target_that_is_not_the_checkpoint_block_of_the_head_vote() {
    let mut s = setup();
    // Two blocks in epoch 3 on the anchor.
    let spe = <E as EthSpec>::slots_per_epoch();
    let b1 =
        build_block(&s.anchor.post, 3 * spe, &BlockContents::default(), &s.spec).expect("block");
    let b2 = build_block(&b1.post, 3 * spe + 1, &BlockContents::default(), &s.spec).expect("block");
    s.store.on_tick(time_at(&s.spec, 3 * spe + 2));
    let r1 = s
        .store
        .on_block(&b1.block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid");
    let r2 = s
        .store
        .on_block(&b2.block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid");
    let before = snapshot(&mut s.store);
    // The checkpoint block of epoch 3 on r2's chain is r1, not the anchor.
    let att = attestation(
        3 * spe + 1,
        r2,
        Checkpoint {
            epoch: 3,
            root: anchor_root(&s),
        },
    );
    let err = s.store.on_attestation(&att, false);
    assert!(
        matches!(err, Err(Error::InconsistentTarget { expected, .. }) if expected == r1),
        "{err:?}"
    );
    assert_eq!(snapshot(&mut s.store), before);
}

#[test]
fn valid_votes_from_a_block_move_the_head() {
    let mut s = setup();
    let spe = <E as EthSpec>::slots_per_epoch();
    // Two competing children of the anchor; a third block votes for the lighter.
    let first = ANCHOR_SLOT + 1;
    assert!(first + 3 < 3 * spe);
    let a = build_block(&s.anchor.post, first, &BlockContents::default(), &s.spec).expect("block");
    let b = build_block(
        &s.anchor.post,
        first + 1,
        &BlockContents::default(),
        &s.spec,
    )
    .expect("block");
    s.store.on_tick(time_at(&s.spec, first + 3));
    let ra = s
        .store
        .on_block(&a.block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid");
    let rb = s
        .store
        .on_block(&b.block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid");
    // Without votes (and no boost: both are late) the greater root wins the tie.
    assert_eq!(s.store.proposer_boost_root(), Root::ZERO);
    assert_eq!(s.store.get_head().expect("head").root, ra.max(rb));
    let (lighter, lighter_state, lighter_slot) = if ra < rb {
        (ra, &a.post, first)
    } else {
        (rb, &b.post, first + 1)
    };
    let voter = build_block(
        lighter_state,
        first + 2,
        &BlockContents {
            attestations: vec![AttestationSpec::whole_slot(lighter_slot)],
            ..Default::default()
        },
        &s.spec,
    )
    .expect("block with attestations");
    let inner = electra_block(&voter.block);
    assert!(!inner.message.body.attestations.is_empty());
    for att in inner.message.body.attestations.iter() {
        s.store
            .on_attestation(att, true)
            .expect("valid attestation");
    }
    assert_eq!(s.store.get_head().expect("head").root, lighter);
    let voters = (0..64)
        .filter(|&i| s.store.latest_message(i) == Some((2, Some(lighter))))
        .count();
    assert!(
        voters > 0,
        "the slot's committee members hold latest messages"
    );
}

#[test]
fn finality_prunes_branches_that_do_not_descend_from_the_finalized_block() {
    let mut s = setup();
    let spe = <E as EthSpec>::slots_per_epoch();
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool"),
    );
    s.store = SpecStore::new(
        s.anchor.post.clone(),
        &electra_block(&s.anchor.block).message,
        s.spec.clone(),
        Config {
            prune_threshold: 1,
            ..Config::default()
        },
        pool,
    )
    .expect("anchor");
    // A side branch off the anchor, then a fully attested main chain for three epochs.
    let side = build_block(
        &s.anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents {
            graffiti: Root::repeat_byte(9),
            ..Default::default()
        },
        &s.spec,
    )
    .expect("side block");
    s.store.on_tick(time_at(&s.spec, ANCHOR_SLOT + 1));
    let side_root = s
        .store
        .on_block(&side.block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid side block");
    let mut parent = s.anchor.post.clone();
    for slot in ANCHOR_SLOT + 2..=ANCHOR_SLOT + 3 * spe + 1 {
        let built = build_block(
            &parent,
            slot,
            &BlockContents {
                attestations: vec![AttestationSpec::whole_slot(slot - 1)],
                ..Default::default()
            },
            &s.spec,
        )
        .expect("attested block");
        s.store.on_tick(time_at(&s.spec, slot));
        s.store
            .on_block(&built.block, Columns::Retrieved(&[]), &AlwaysValid)
            .expect("valid main-chain block");
        parent = built.post;
    }
    assert!(
        s.store.finalized_checkpoint().epoch > 2,
        "the chain finalizes"
    );
    assert!(
        !s.store.contains_block(&side_root),
        "the side branch is pruned"
    );
    assert!(s.store.block_state(&side_root).is_none());
    let finalized = s.store.finalized_checkpoint().root;
    let nodes = s.store.proto_array().nodes();
    assert_eq!(nodes[0].root, finalized);
    assert!(nodes.iter().skip(1).all(|n| n.parent.is_some()));
    // A child of the pruned branch is now an orphan.
    let late = build_block(
        &side.post,
        ANCHOR_SLOT + 3 * spe + 1,
        &BlockContents::default(),
        &s.spec,
    )
    .expect("block on the side branch");
    let err = s
        .store
        .on_block(&late.block, Columns::Retrieved(&[]), &AlwaysValid);
    assert!(matches!(err, Err(Error::UnknownParent { .. })), "{err:?}");
    let head = s.store.get_head().expect("head after pruning");
    assert_eq!(head.slot, ANCHOR_SLOT + 3 * spe + 1);
}
