//! The chain end to end on a small interop network: blocks built with real signatures and full
//! attestations go through gossip validation and import, the head follows, finality advances,
//! events are published, and the gossip rules refuse repeats, bad signatures and unknown
//! parents with the verdicts the spec gives.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{
    AnchorError, BeaconChain, BlockPayloadVerdict, BlockProcessed, ChainConfig, ChainError,
    ExecutionStatus, ManualSlotClock, PendingPayloadVerdict, SegmentBlock, SegmentError,
    UnimportedBlock, Verdict, events::ChainEvent, gossip::BlockGossipError,
};
use fork_choice::ThreadPoolBuilder;
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use state_processing::{CachedBeaconState, genesis::interop_genesis_state, per_block::AlwaysValid};
use store::{Store, StoreConfig};
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
/// The anchor: a block at the first slot of epoch 2 on the interop genesis.
const ANCHOR_SLOT: Slot = 16;

struct Harness {
    spec: Arc<ChainSpec>,
    clock: Arc<ManualSlotClock>,
    chain: BeaconChain<E>,
    anchor: BuiltBlock<E>,
    dir: tempfile::TempDir,
}

fn harness() -> Harness {
    harness_at(ANCHOR_SLOT)
}

/// A chain anchored at a block at `anchor_slot` on the interop genesis (its post-state).
fn harness_at(anchor_slot: Slot) -> Harness {
    harness_with(anchor_slot, ChainConfig::default())
}

/// As [`harness_at`], with the chain configured by `config`.
fn harness_with(anchor_slot: Slot, config: ChainConfig) -> Harness {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis =
        interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
    let anchor = build_block(
        &CachedBeaconState::new(genesis),
        anchor_slot,
        &BlockContents::default(),
        &spec,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    let clock = Arc::new(ManualSlotClock::new(time_ms(&spec, anchor_slot)));
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let chain = BeaconChain::from_anchor(
        Arc::new(store),
        anchor.post.clone(),
        anchor.block.clone(),
        spec.clone(),
        clock.clone(),
        pool,
        config,
    )
    .unwrap();
    Harness {
        spec,
        clock,
        chain,
        anchor,
        dir,
    }
}

fn pool() -> Arc<fork_choice::ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap())
}

/// Drops `h`'s chain and reopens its store as a restarting node would.
fn reopen(h: Harness) -> Harness {
    let Harness {
        spec,
        clock,
        chain,
        anchor,
        dir,
    } = h;
    drop(chain);
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    let chain = BeaconChain::open(
        Arc::new(store),
        spec.clone(),
        clock.clone(),
        pool(),
        ChainConfig::default(),
    )
    .unwrap();
    Harness {
        spec,
        clock,
        chain,
        anchor,
        dir,
    }
}

/// One second into `slot`, in milliseconds since the UNIX epoch.
fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 1000
}

/// A block at `slot` on `parent` attesting (every committee) to the slot before.
fn next_block(h: &Harness, parent: &BuiltBlock<E>, slot: Slot) -> BuiltBlock<E> {
    let contents = BlockContents {
        attestations: vec![AttestationSpec::whole_slot(slot - 1)],
        ..BlockContents::default()
    };
    build_block(&parent.post, slot, &contents, &h.spec).unwrap()
}

/// Gossip-validates `block` at one second into its slot (the clock set there).
fn gossip_verify(
    h: &Harness,
    block: &SignedBeaconBlock<E>,
) -> Result<beacon_chain::gossip::GossipVerifiedBlock<E>, BlockGossipError> {
    let now = time_ms(&h.spec, block.slot());
    h.clock.set_ms(now);
    h.chain
        .verify_block_for_gossip(Arc::new(block.clone()), now)
}

/// Gossip-validates and imports `block` at one second into its slot.
fn gossip_and_import(h: &Harness, block: &SignedBeaconBlock<E>) -> Root {
    let verified = gossip_verify(h, block).unwrap();
    h.chain
        .import_block(verified.block, &[], &AlwaysValid, ExecutionStatus::Valid)
        .unwrap()
}

/// Gossip-validates `block` at one second into its slot, expecting a refusal.
fn gossip_refusal(h: &Harness, block: &SignedBeaconBlock<E>) -> BlockGossipError {
    gossip_verify(h, block).unwrap_err()
}

#[test]
fn a_chain_of_four_epochs_imports_through_gossip_and_finalizes() {
    let h = harness();
    let mut events = h.chain.events().subscribe();
    let mut parent = h.anchor.clone();
    let last = ANCHOR_SLOT + 4 * E::slots_per_epoch();
    for slot in ANCHOR_SLOT + 1..=last {
        let built = next_block(&h, &parent, slot);
        let root = gossip_and_import(&h, &built.block);
        let head = h.chain.head();
        assert_eq!(
            head.block_root, root,
            "slot {slot}: the new block is the head"
        );
        assert_eq!(head.state_root, built.state_root);
        parent = built;
    }
    let head = h.chain.head();
    assert_eq!(head.slot, last);
    assert!(
        head.finalized_checkpoint.epoch > ANCHOR_SLOT / E::slots_per_epoch(),
        "finality advanced past the anchor: {:?}",
        head.finalized_checkpoint
    );
    assert!(head.justified_checkpoint.epoch > head.finalized_checkpoint.epoch);

    let mut blocks = 0;
    let mut gossip = 0;
    let mut heads = 0;
    let mut finalized = 0;
    while let Ok(event) = events.try_recv() {
        match event {
            ChainEvent::Block { .. } => blocks += 1,
            ChainEvent::BlockGossip { .. } => gossip += 1,
            ChainEvent::Head { .. } => heads += 1,
            ChainEvent::FinalizedCheckpoint { .. } => finalized += 1,
            ChainEvent::ChainReorg { .. } => panic!("a straight chain does not reorg"),
            _ => {}
        }
    }
    assert_eq!((blocks, gossip, heads), (32, 32, 32));
    assert!(finalized >= 1);
    // The store recorded the head and every block.
    let stored = h.chain.store().head().unwrap().unwrap();
    assert_eq!(stored.block_root, head.block_root);
    assert!(
        h.chain
            .store()
            .get_block(&head.block_root)
            .unwrap()
            .is_some()
    );
}

#[test]
fn gossip_refuses_a_repeat_a_bad_signature_and_an_unknown_parent() {
    let h = harness();
    let b1 = next_block(&h, &h.anchor, ANCHOR_SLOT + 1);
    gossip_and_import(&h, &b1.block);

    // The same block again: not the first of its proposer and slot.
    let now = time_ms(&h.spec, ANCHOR_SLOT + 1);
    let err = h
        .chain
        .verify_block_for_gossip(Arc::new(b1.block.clone()), now)
        .unwrap_err();
    assert!(
        matches!(err, BlockGossipError::RepeatProposal { .. }),
        "{err}"
    );
    assert_eq!(err.verdict(), Verdict::Ignore);

    // A block signed with another block's signature.
    let b2 = next_block(&h, &b1, ANCHOR_SLOT + 2);
    let mut forged = b2.block.clone();
    if let SignedBeaconBlock::Fulu(b) = &mut forged {
        b.signature = b1.block.signature();
    }
    let now = time_ms(&h.spec, ANCHOR_SLOT + 2);
    h.clock.set_ms(now);
    let err = h
        .chain
        .verify_block_for_gossip(Arc::new(forged), now)
        .unwrap_err();
    assert_eq!(err, BlockGossipError::InvalidSignature);
    assert_eq!(err.verdict(), Verdict::Reject);

    // A block whose parent (b2) was never seen.
    let b3 = next_block(&h, &b2, ANCHOR_SLOT + 3);
    let err = gossip_refusal(&h, &b3.block);
    assert!(
        matches!(err, BlockGossipError::ParentUnknown { .. }),
        "{err}"
    );
    assert_eq!(err.verdict(), Verdict::Ignore);

    // From the future: more than the clock disparity before its slot.
    let early = h.spec.compute_time_at_slot(GENESIS_TIME, ANCHOR_SLOT + 2) * 1000 - 501;
    let err = h
        .chain
        .verify_block_for_gossip(Arc::new(b2.block.clone()), early)
        .unwrap_err();
    assert!(matches!(err, BlockGossipError::FutureSlot { .. }), "{err}");

    // The real b2 passes, and then b3 does.
    gossip_and_import(&h, &b2.block);
    gossip_and_import(&h, &b3.block);
    assert_eq!(h.chain.head().slot, ANCHOR_SLOT + 3);
}

#[test]
fn a_heavier_fork_reorgs_the_head() {
    let h = harness();
    let mut events = h.chain.events().subscribe();
    // Fork A: one block at slot 17 with no attestations.
    let a = build_block(
        &h.anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    gossip_and_import(&h, &a.block);
    assert_eq!(h.chain.head().block_root, a.block.canonical_root());
    // Fork B: skips slot 17; its blocks carry the votes of the anchor's committees.
    let b1 = build_block(
        &h.anchor.post,
        ANCHOR_SLOT + 2,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    gossip_and_import(&h, &b1.block);
    let b2 = next_block(&h, &b1, ANCHOR_SLOT + 3);
    gossip_and_import(&h, &b2.block);
    let head = h.chain.head();
    assert_eq!(
        head.block_root,
        b2.block.canonical_root(),
        "the longer, attested fork wins"
    );
    let reorgs: Vec<_> = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|e| matches!(e, ChainEvent::ChainReorg { .. }))
        .collect();
    assert!(!reorgs.is_empty(), "moving off fork A is a reorg");
    // From A (slot 17) back to the anchor (slot 16) the two forks share: one slot deep.
    let ChainEvent::ChainReorg {
        depth,
        old_head_block,
        ..
    } = &reorgs[0]
    else {
        unreachable!("filtered to reorgs")
    };
    assert_eq!(*old_head_block, a.block.canonical_root());
    assert_eq!(*depth, 1);
}

#[test]
fn a_reopened_chain_has_the_same_head_and_finality_and_imports_on() {
    let h = harness();
    let mut parent = h.anchor.clone();
    let last = ANCHOR_SLOT + 5 * E::slots_per_epoch() + 3;
    for slot in ANCHOR_SLOT + 1..=last {
        let built = next_block(&h, &parent, slot);
        gossip_and_import(&h, &built.block);
        parent = built;
    }
    let before = h.chain.head();
    assert!(
        before.finalized_checkpoint.epoch >= 4,
        "{:?}",
        before.finalized_checkpoint
    );
    // The store migrated (on the store writer): its split is the finalized checkpoint.
    h.chain.flush_store_writes();
    let split = h.chain.store().split().unwrap().unwrap();
    assert_eq!(split.block_root, before.finalized_checkpoint.root);

    let h = reopen(h);
    // Fork choice came back from the store: only the blocks since the last whole state (the
    // first block of the head's epoch) ran their state transition again.
    let reopened = h.chain.reopened().expect("opened from the store");
    let since_boundary = last % E::slots_per_epoch();
    assert_eq!(reopened.replayed as u64, since_boundary, "{reopened:?}");
    assert_eq!(
        (reopened.restored + reopened.replayed) as u64,
        last - split.slot,
        "{reopened:?}"
    );
    let after = h.chain.head();
    assert_eq!(after.block_root, before.block_root);
    assert_eq!(after.state_root, before.state_root);
    assert_eq!(after.finalized_checkpoint, before.finalized_checkpoint);
    assert_eq!(after.justified_checkpoint, before.justified_checkpoint);
    // Payload statuses are not stored: the reopened head is optimistic until the execution
    // client calls it VALID (the start-up forkchoiceUpdated), which validates its ancestry.
    assert!(after.execution_optimistic);
    let ancestor = parent.block.parent_root();
    assert_eq!(
        h.chain.payload_status(&ancestor),
        beacon_chain::ExecutionStatus::NotValidated
    );
    h.chain.on_valid_execution_block(after.block_root);
    assert!(!h.chain.head().execution_optimistic);
    assert_eq!(
        h.chain.payload_status(&ancestor),
        beacon_chain::ExecutionStatus::Valid
    );

    let next = next_block(&h, &parent, last + 1);
    let root = gossip_and_import(&h, &next.block);
    assert_eq!(h.chain.head().block_root, root);
}

/// The import that finalizes does not wait for the store's migration: with the store writer
/// held (as behind a slow disk), blocks import through several finalizations while the split
/// stays where it was, and the newly finalized blocks and states are still served from the hot
/// database. Released, the writer runs one migration, to the latest checkpoint (the earlier
/// ones skipped). A copy of the database taken while the migration was still to run (what a
/// kill would leave) reopens with the migration queued again, and imports on.
#[test]
fn finalization_migrates_the_store_after_the_import_on_the_store_writer() {
    let h = harness();
    let spe = E::slots_per_epoch();
    let split_before = h.chain.store().split().unwrap().unwrap();
    let held = h.chain.hold_store_writes();
    let mut parent = h.anchor.clone();
    let last = ANCHOR_SLOT + 5 * spe + 3;
    for slot in ANCHOR_SLOT + 1..=last {
        let built = next_block(&h, &parent, slot);
        gossip_and_import(&h, &built.block);
        parent = built;
    }
    let head = h.chain.head();
    let finalized = head.finalized_checkpoint.clone();
    assert!(finalized.epoch >= 4, "{finalized:?}");
    let store = h.chain.store();
    assert_eq!(store.split().unwrap().unwrap(), split_before);
    assert_eq!(h.chain.import_store_writes().migrations, 0);
    // The finalized checkpoint's block and state, not migrated yet, load from the hot
    // database.
    let spec = h.spec.clone();
    let mut replayer = store::StateTransitionReplayer::new(&spec);
    let checkpoint_block = store.get_block(&finalized.root).unwrap().unwrap();
    let checkpoint_state = store
        .get_state(&checkpoint_block.state_root(), &mut replayer)
        .unwrap()
        .unwrap();
    assert_eq!(checkpoint_state.slot(), &checkpoint_block.slot());

    // What a kill now would leave on disk: nothing is being written while the writer is held
    // and no import runs.
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(h.dir.path().join("db"), copy.path().join("db")).unwrap();
    for (from, to) in [
        (
            store.state_files_dir(),
            Store::<E>::state_files_dir_for(&copy.path().join("db")),
        ),
        (
            store.cold_files_dir(),
            Store::<E>::cold_files_dir_for(&copy.path().join("db")),
        ),
    ] {
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }

    drop(held);
    h.chain.flush_store_writes();
    let split = store.split().unwrap().unwrap();
    assert_eq!(
        (split.slot, split.block_root),
        (finalized.epoch * spe, finalized.root)
    );
    let writes = h.chain.import_store_writes();
    assert_eq!(
        (writes.migrations, writes.migration_failures),
        (1, 0),
        "one migration, over every checkpoint finalized while held: {writes:?}"
    );

    let reopened = Store::<E>::open(
        &copy.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    assert_eq!(reopened.split().unwrap().unwrap(), split_before);
    let chain = BeaconChain::open(
        Arc::new(reopened),
        spec.clone(),
        h.clock.clone(),
        pool(),
        ChainConfig::default(),
    )
    .unwrap();
    assert!(chain.reopened().unwrap().migration_queued);
    assert_eq!(chain.head().block_root, head.block_root);
    chain.flush_store_writes();
    let split = chain.store().split().unwrap().unwrap();
    assert_eq!(
        (split.slot, split.block_root),
        (finalized.epoch * spe, finalized.root)
    );
    assert!(chain.store().pending_snapshots().unwrap().is_empty());
    let copied = Harness {
        spec,
        clock: h.clock.clone(),
        chain,
        anchor: h.anchor.clone(),
        dir: copy,
    };
    let next = next_block(&copied, &parent, last + 1);
    assert_eq!(
        gossip_and_import(&copied, &next.block),
        copied.chain.head().block_root
    );
}

#[test]
fn an_epoch_snapshot_left_pending_by_a_stop_is_written_after_the_restart() {
    let h = harness();
    let spe = E::slots_per_epoch();
    let boundary = (ANCHOR_SLOT / spe + 1) * spe;
    let mut parent = h.anchor.clone();
    for slot in ANCHOR_SLOT + 1..boundary {
        let built = next_block(&h, &parent, slot);
        gossip_and_import(&h, &built.block);
        parent = built;
    }
    // The epoch's first block stored as its import stores it, the node stopping before the
    // store writer got to its state.
    let built = next_block(&h, &parent, boundary);
    let block_root = built.block.canonical_root();
    {
        let mut batch = h.chain.store().begin_batch().unwrap();
        batch.put_block(block_root, &built.block).unwrap();
        assert_eq!(
            batch
                .put_state_deferring_snapshot(built.state_root, &built.post.state)
                .unwrap(),
            store::StoredAs::PendingSnapshot
        );
        batch.commit().unwrap();
    }

    // The restart replays the block on top of the persisted fork choice, loads nothing from
    // the pending snapshot, and hands it to the writer, which loads it by replay and writes
    // it whole.
    let h = reopen(h);
    assert_eq!(h.chain.head().block_root, block_root);
    h.chain.flush_store_writes();
    let store = h.chain.store();
    assert!(store.pending_snapshots().unwrap().is_empty());
    assert!(
        store
            .hot_snapshot_roots()
            .unwrap()
            .contains(&built.state_root)
    );
    assert_eq!(h.chain.import_store_writes().snapshots_written, 1);
    let next = next_block(&h, &built, boundary + 1);
    assert_eq!(
        gossip_and_import(&h, &next.block),
        h.chain.head().block_root
    );
}

/// Fork A at slot 17 and fork B at slot 18 (skipping 17), both on the anchor and imported:
/// B, timely in its slot, is boosted and the head.
fn two_forks(h: &Harness) -> (Root, Root) {
    let a = build_block(
        &h.anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    let a_root = gossip_and_import(h, &a.block);
    let b = build_block(
        &h.anchor.post,
        ANCHOR_SLOT + 2,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    let b_root = gossip_and_import(h, &b.block);
    assert_eq!(h.chain.head().block_root, b_root);
    (a_root, b_root)
}

/// The first committee of `slot` (epoch 2, target the anchor) and the data of a vote of it for
/// `head`.
fn committee_and_vote(
    h: &Harness,
    slot: Slot,
    head: Root,
) -> (Vec<u64>, u64, types::electra::AttestationData) {
    let epoch = slot / E::slots_per_epoch();
    let mut state = h.chain.head().state.clone();
    let (committee, committees_per_slot) = {
        let (view, caches) = state.view_mut().unwrap();
        let committees = caches.committees(&view.as_ref(), epoch).unwrap();
        (
            committees.get_beacon_committee(slot, 0).unwrap().to_vec(),
            committees.committees_per_slot(),
        )
    };
    let data = types::electra::AttestationData {
        slot,
        index: 0,
        beacon_block_root: head,
        source: state.state.current_justified_checkpoint().clone(),
        target: types::phase0::Checkpoint {
            epoch,
            root: h.anchor.block.canonical_root(),
        },
    };
    (committee, committees_per_slot, data)
}

/// The signing root of an attestation's `data`.
fn attestation_signing_root(h: &Harness, data: &types::electra::AttestationData) -> Root {
    use types::signing::{DOMAIN_BEACON_ATTESTER, compute_domain, compute_signing_root};
    let epoch = data.target.epoch;
    let domain = compute_domain(
        DOMAIN_BEACON_ATTESTER,
        h.spec.compute_fork_version(epoch),
        h.chain.genesis_validators_root(),
    );
    compute_signing_root(data, domain)
}

/// `voters` (of the first committee of `slot`) vote for `head` one second after `slot` starts
/// (the clock set there): gossip-verified and given to fork choice. Returns how many fork
/// choice took at once and how many wait for the next slot.
fn gossip_votes(h: &Harness, slot: Slot, head: Root, voters: usize) -> (usize, usize) {
    use types::electra::SingleAttestation;
    let (committee, committees_per_slot, data) = committee_and_vote(h, slot, head);
    let signing_root = attestation_signing_root(h, &data);
    let subnet =
        types::subnets::compute_subnet_for_attestation::<E>(&h.spec, committees_per_slot, slot, 0)
            .unwrap();
    let attestations: Vec<_> = committee
        .iter()
        .take(voters)
        .map(|&i| {
            let signature =
                state_harness::interop_secret_key(i as usize).sign(signing_root.as_slice());
            (
                SingleAttestation {
                    committee_index: 0,
                    attester_index: i,
                    data: data.clone(),
                    signature: types::BLSSignature::from(signature.serialize()),
                },
                subnet,
            )
        })
        .collect();
    let now = time_ms(&h.spec, slot) + 2000;
    h.clock.set_ms(now);
    let verified: Vec<_> = h
        .chain
        .verify_single_attestations_for_gossip(attestations, now)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(verified.len(), voters.min(committee.len()));
    let (applied, queued, refused) = h
        .chain
        .apply_votes_to_fork_choice(verified.iter().map(|v| v.fork_choice_vote()));
    assert_eq!(refused, 0);
    (applied, queued)
}

#[test]
fn gossip_attestations_move_the_head_once_their_slot_has_passed() {
    let h = harness();
    let (a_root, b_root) = two_forks(&h);

    // Slot 18's committee votes for A.
    let slot = ANCHOR_SLOT + 2;
    let committee = committee_and_vote(&h, slot, a_root).0.len();
    assert_eq!(
        gossip_votes(&h, slot, a_root, committee),
        (0, committee),
        "they wait for slot 19"
    );
    h.chain.recompute_head().unwrap();
    assert_eq!(h.chain.head().block_root, b_root);

    // Slot 19: the boost is gone and the votes count.
    h.clock.set_ms(time_ms(&h.spec, slot + 1));
    h.chain.on_tick();
    h.chain.recompute_head().unwrap();
    assert_eq!(h.chain.head().block_root, a_root);
}

/// Slot 18's committee carries fork A over fork B (which slot 19's committee, one voter short,
/// backs); a gossip attester slashing of slot 18's committee (a double vote: A and B at the
/// same target) takes their weight out of fork choice and B becomes the head at once.
#[test]
fn a_gossip_attester_slashing_takes_its_validators_weight_out_of_fork_choice() {
    use types::electra::{AttesterSlashing, IndexedAttestation};

    let h = harness();
    let (a_root, b_root) = two_forks(&h);
    let slot_a = ANCHOR_SLOT + 2;
    let (committee, _, vote_a) = committee_and_vote(&h, slot_a, a_root);
    gossip_votes(&h, slot_a, a_root, committee.len());
    let b_voters = committee_and_vote(&h, slot_a + 1, b_root).0.len() - 1;
    assert!(b_voters > 0 && b_voters < committee.len());
    gossip_votes(&h, slot_a + 1, b_root, b_voters);
    h.clock.set_ms(time_ms(&h.spec, slot_a + 2));
    h.chain.on_tick();
    h.chain.recompute_head().unwrap();
    assert_eq!(
        h.chain.head().block_root,
        a_root,
        "the larger committee wins"
    );

    let mut indices = committee.clone();
    indices.sort_unstable();
    let signed = |data: types::electra::AttestationData| {
        let root = attestation_signing_root(&h, &data);
        let key = state_harness::aggregate_interop_secret_key(indices.iter().copied()).unwrap();
        IndexedAttestation::<E> {
            attesting_indices: ssz_types::VariableList::new(indices.clone()).unwrap(),
            data,
            signature: types::BLSSignature::from(key.sign(root.as_slice()).serialize()),
        }
    };
    let vote_b = types::electra::AttestationData {
        beacon_block_root: b_root,
        ..vote_a.clone()
    };
    let slashing = AttesterSlashing {
        attestation_1: signed(vote_a),
        attestation_2: signed(vote_b),
    };
    let verified = h
        .chain
        .verify_attester_slashing_for_gossip(slashing)
        .unwrap();
    assert_eq!(verified.slashable_indices, indices);
    let head = h.chain.on_attester_slashing(&verified).unwrap();
    assert_eq!(head.block_root, b_root);
    assert_eq!(h.chain.head().block_root, b_root);
}

/// A finalized checkpoint whose epoch starts with missed slots names a block of the epoch before
/// (checkpoint sync hands over that block and its post-state): the chain anchors at the
/// checkpoint state, imports the next epochs on it, finalizes, and reopens.
#[test]
fn a_checkpoint_block_before_its_epoch_start_anchors_the_chain() {
    const BLOCK_SLOT: Slot = 13;
    let h = harness_at(BLOCK_SLOT);
    let spe = E::slots_per_epoch();
    let head = h.chain.head();
    assert_eq!(head.block_root, h.anchor.block.canonical_root());
    assert_eq!(head.slot, BLOCK_SLOT);
    assert_eq!(head.state_root, h.anchor.state_root);
    assert_eq!(head.finalized_checkpoint.epoch, 2, "the checkpoint's epoch");
    assert_eq!(head.finalized_checkpoint.root, head.block_root);
    assert_eq!(*head.state.state.slot(), 2 * spe, "the checkpoint state");
    let split = h.chain.store().split().unwrap().unwrap();
    assert_eq!((split.slot, split.block_root), (2 * spe, head.block_root));

    // Slots 14 to 16 are empty; blocks follow from slot 17 on the checkpoint state.
    let mut parent = h.anchor.clone();
    let last = 2 * spe + 5 * spe + 3;
    for slot in 2 * spe + 1..=last {
        let built = next_block(&h, &parent, slot);
        let root = gossip_and_import(&h, &built.block);
        assert_eq!(h.chain.head().block_root, root, "slot {slot}");
        parent = built;
    }
    let before = h.chain.head();
    assert!(
        before.finalized_checkpoint.epoch >= 5,
        "{:?}",
        before.finalized_checkpoint
    );
    let h = reopen(h);
    assert_eq!(h.chain.head().block_root, before.block_root);
    assert_eq!(
        h.chain.head().finalized_checkpoint,
        before.finalized_checkpoint
    );
    let next = next_block(&h, &parent, last + 1);
    assert_eq!(
        gossip_and_import(&h, &next.block),
        h.chain.head().block_root
    );
}

/// The anchor state must be its block's post-state or that state advanced through empty slots:
/// the state already advanced to the epoch start is taken, another block's state is refused.
#[test]
fn a_checkpoint_state_advanced_to_its_epoch_is_taken_and_another_blocks_is_refused() {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis =
        interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
    let genesis = CachedBeaconState::new(genesis);
    let block = build_block(&genesis, 13, &BlockContents::default(), &spec).unwrap();
    let other = build_block(&genesis, 12, &BlockContents::default(), &spec).unwrap();
    let open = |state: CachedBeaconState<E>, block: &SignedBeaconBlock<E>| {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::<E>::open(
            &dir.path().join("db"),
            (*spec).clone(),
            StoreConfig::default(),
        )
        .unwrap();
        let clock = Arc::new(ManualSlotClock::new(time_ms(&spec, 16)));
        BeaconChain::from_anchor(
            Arc::new(store),
            state,
            block.clone(),
            spec.clone(),
            clock,
            pool(),
            ChainConfig::default(),
        )
    };
    let mut advanced = block.post.clone();
    state_processing::per_slot::process_slots(&mut advanced, 16, &spec).unwrap();
    let chain = open(advanced, &block.block).unwrap();
    assert_eq!(chain.head().block_root, block.block.canonical_root());
    assert_eq!(chain.head().finalized_checkpoint.epoch, 2);

    let err = open(other.post.clone(), &block.block).unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::Anchor(AnchorError::StateBeforeBlock {
                state_slot: 12,
                block_slot: 13,
                ..
            })
        ),
        "{err:?}"
    );
    let mut other_advanced = other.post.clone();
    state_processing::per_slot::process_slots(&mut other_advanced, 16, &spec).unwrap();
    let err = open(other_advanced, &block.block).unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::Anchor(AnchorError::NotDescendant { state_slot: 16, block_root })
                if block_root == block.block.canonical_root()
        ),
        "{err:?}"
    );
    // The cause is kept as the error's source.
    let source = std::error::Error::source(&err).map(ToString::to_string);
    assert_eq!(
        source,
        Some(
            AnchorError::NotDescendant {
                state_slot: 16,
                block_root: block.block.canonical_root()
            }
            .to_string()
        )
    );
}

/// Blocks imported while the execution client was syncing (not validated) become valid when a
/// descendant's payload is VALID: a payload is valid only on a valid chain.
#[test]
fn a_valid_payload_validates_its_optimistic_ancestors() {
    let h = harness();
    let mut parent = h.anchor.clone();
    let mut optimistic = Vec::new();
    for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + 3 {
        let built = next_block(&h, &parent, slot);
        let now = time_ms(&h.spec, slot);
        h.clock.set_ms(now);
        let verified = h
            .chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        let root = h
            .chain
            .import_block(
                verified.block,
                &[],
                &AlwaysValid,
                ExecutionStatus::NotValidated,
            )
            .unwrap();
        assert!(h.chain.head().execution_optimistic, "slot {slot}");
        optimistic.push(root);
        parent = built;
    }
    let next = next_block(&h, &parent, ANCHOR_SLOT + 4);
    let root = gossip_and_import(&h, &next.block);
    assert!(!h.chain.head().execution_optimistic);
    assert_eq!(h.chain.payload_status(&root), ExecutionStatus::Valid);
    for ancestor in &optimistic {
        assert_eq!(h.chain.payload_status(ancestor), ExecutionStatus::Valid);
    }
}

/// Waits (at most a minute, then fails) until an import of `pending`'s block has finished its
/// state transition and waits for the execution client's verdict.
fn wait_for_the_import_to_wait(pending: &PendingPayloadVerdict) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while pending.waiting() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the import never came to wait for the verdict"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Gossip-validates `block` at one second into its slot and registers its `engine_newPayload`
/// as in flight, as the router does: the checked block, the sender of the verdict and the
/// verdict its import reads.
fn gossip_with_verdict_in_flight(
    h: &Harness,
    block: &SignedBeaconBlock<E>,
) -> (
    beacon_chain::gossip::GossipVerifiedBlock<E>,
    beacon_chain::PayloadVerdictSender,
    BlockPayloadVerdict,
) {
    let verified = gossip_verify(h, block).unwrap();
    let sender = h
        .chain
        .expect_payload_verdict(verified.block_root, block.slot());
    let verdict = h.chain.payload_verdict(&verified.block_root);
    (verified, sender, verdict)
}

/// Hands `block` to the chain with its `engine_newPayload` verdict in flight, as the router
/// does; `answer` runs once the import has transitioned the block and waits for the verdict,
/// and gives it (or drops the sender). Returns the import's result.
fn import_with_verdict_in_flight(
    h: &Harness,
    block: &SignedBeaconBlock<E>,
    answer: impl FnOnce(beacon_chain::PayloadVerdictSender),
) -> Result<BlockProcessed, ChainError> {
    let (verified, sender, verdict) = gossip_with_verdict_in_flight(h, block);
    let root = verified.block_root;
    let BlockPayloadVerdict::Pending(pending) = &verdict else {
        panic!("the verdict is not in flight: {verdict:?}");
    };
    let pending = pending.clone();
    std::thread::scope(|scope| {
        let import = scope.spawn(|| h.chain.process_gossip_block(verified, &verdict, &verdict));
        wait_for_the_import_to_wait(&pending);
        // Transitioned, not yet in fork choice: the verdict decides.
        assert!(!h.chain.is_block_known(&root));
        assert_ne!(h.chain.head().block_root, root);
        answer(sender);
        import.join().unwrap()
    })
}

/// The router sends `engine_newPayload` and starts the import at once: the block's state
/// transition runs while the execution client checks the payload, and the import waits for
/// the verdict before fork choice. VALID imports it validated; INVALID keeps it out (and its
/// descendants, as a failed block); a verdict never given (its task cancelled) imports it
/// optimistically rather than leaving the import waiting.
#[test]
fn a_gossip_block_is_transitioned_while_its_payload_verdict_is_in_flight() {
    // Waits as long as the test needs: this test is not about the bound.
    let h = harness_with(
        ANCHOR_SLOT,
        ChainConfig {
            payload_verdict_wait: std::time::Duration::from_secs(600),
            ..ChainConfig::default()
        },
    );
    let first = next_block(&h, &h.anchor, ANCHOR_SLOT + 1);
    let outcome = import_with_verdict_in_flight(&h, &first.block, |sender| {
        sender.send(ExecutionStatus::Valid)
    })
    .unwrap();
    let BlockProcessed::Imported(first_root) = outcome else {
        panic!("not imported: {outcome:?}");
    };
    assert_eq!(h.chain.head().block_root, first_root);
    assert!(!h.chain.head().execution_optimistic);
    assert_eq!(h.chain.payload_status(&first_root), ExecutionStatus::Valid);
    // The verdict is forgotten once its block is imported.
    assert!(matches!(
        h.chain.payload_verdict(&first_root),
        BlockPayloadVerdict::Known(ExecutionStatus::Valid)
    ));

    let invalid = next_block(&h, &first, ANCHOR_SLOT + 2);
    let invalid_root = invalid.block.canonical_root();
    let err = import_with_verdict_in_flight(&h, &invalid.block, |sender| {
        sender.send(ExecutionStatus::Invalidated)
    })
    .unwrap_err();
    assert!(
        matches!(err, ChainError::InvalidPayload(root) if root == invalid_root),
        "{err}"
    );
    assert_eq!(h.chain.head().block_root, first_root);
    assert_eq!(
        h.chain.unimported_block(&invalid_root),
        Some(UnimportedBlock::Failed {
            slot: ANCHOR_SLOT + 2,
            payload: ExecutionStatus::Invalidated,
        })
    );
    let child = next_block(&h, &invalid, ANCHOR_SLOT + 3);
    let refused = gossip_refusal(&h, &child.block);
    // The parent's payload was processed (found invalid): the spec's IGNORE.
    assert!(
        matches!(refused, BlockGossipError::ParentInvalidProcessed { parent } if parent == invalid_root),
        "{refused}"
    );
    assert_eq!(refused.verdict(), Verdict::Ignore);

    let sibling = next_block(&h, &first, ANCHOR_SLOT + 3);
    let outcome = import_with_verdict_in_flight(&h, &sibling.block, drop).unwrap();
    let BlockProcessed::Imported(sibling_root) = outcome else {
        panic!("not imported: {outcome:?}");
    };
    assert_eq!(h.chain.head().block_root, sibling_root);
    assert!(h.chain.head().execution_optimistic);
    assert_eq!(
        h.chain.payload_status(&sibling_root),
        ExecutionStatus::NotValidated
    );
}

/// An execution client slower than `payload_verdict_wait`: the import goes on optimistically
/// once the wait is over, and the verdict is applied when it comes (`on_payload_verdict`):
/// VALID validates the head, INVALID invalidates the block and the head goes back to its
/// parent.
#[test]
fn a_verdict_slower_than_the_wait_is_applied_after_an_optimistic_import() {
    let h = harness_with(
        ANCHOR_SLOT,
        ChainConfig {
            payload_verdict_wait: std::time::Duration::ZERO,
            ..ChainConfig::default()
        },
    );
    let import = |block: &SignedBeaconBlock<E>| {
        let (verified, sender, verdict) = gossip_with_verdict_in_flight(&h, block);
        let root = verified.block_root;
        let outcome = h
            .chain
            .process_gossip_block(verified, &verdict, &verdict)
            .unwrap();
        assert_eq!(outcome, BlockProcessed::Imported(root));
        (root, sender)
    };
    let first = next_block(&h, &h.anchor, ANCHOR_SLOT + 1);
    let (first_root, sender) = import(&first.block);
    assert!(h.chain.head().execution_optimistic);
    assert_eq!(
        h.chain.payload_status(&first_root),
        ExecutionStatus::NotValidated
    );
    sender.send(ExecutionStatus::Valid);
    h.chain
        .on_payload_verdict(
            first_root,
            first.block.parent_root(),
            ExecutionStatus::Valid,
            None,
        )
        .unwrap();
    assert_eq!(h.chain.payload_status(&first_root), ExecutionStatus::Valid);
    assert!(!h.chain.head().execution_optimistic);

    let second = next_block(&h, &first, ANCHOR_SLOT + 2);
    let (second_root, sender) = import(&second.block);
    assert_eq!(h.chain.head().block_root, second_root);
    sender.send(ExecutionStatus::Invalidated);
    h.chain
        .on_payload_verdict(second_root, first_root, ExecutionStatus::Invalidated, None)
        .unwrap();
    assert_eq!(
        h.chain.payload_status(&second_root),
        ExecutionStatus::Invalidated
    );
    assert_eq!(h.chain.head().block_root, first_root);
}

/// A sync committee message is checked against the committee of its slot's period: the head
/// state's current (or next) committee. A head more than a period behind (syncing) cannot say
/// who signs: IGNORE, not the REJECT the head's own committee would give a validator outside
/// it (honest peers were penalised and banned by a syncing node for that).
#[test]
fn a_sync_committee_message_of_a_period_the_head_does_not_know_is_ignored() {
    use beacon_chain::gossip::SyncCommitteeGossipError;
    use types::altair::SyncCommitteeMessage;
    use types::signing::{DOMAIN_SYNC_COMMITTEE, compute_domain, compute_signing_root};

    let h = harness();
    let head = h.chain.head();
    let members: Vec<u64> = {
        let view = head.state.view().unwrap();
        let mut caches = head.state.caches.clone();
        view.current_sync_committee
            .pubkeys
            .iter()
            .map(|k| {
                caches
                    .validator_index(&view, &bls::PublicKeyBytes(k.0))
                    .unwrap()
            })
            .collect()
    };
    let outsider = (0..64u64).find(|i| !members.contains(i)).unwrap();
    let member = members[0];
    let subnet_of = |index: u64| {
        let position = members.iter().position(|&m| m == index).unwrap() as u64;
        types::subnets::compute_subnets_for_sync_committee::<E>([position])
            .unwrap()
            .into_iter()
            .next()
            .unwrap()
    };
    let message = |slot: Slot, validator_index: u64| {
        let domain = compute_domain(
            DOMAIN_SYNC_COMMITTEE,
            h.spec.compute_fork_version(slot / E::slots_per_epoch()),
            h.chain.genesis_validators_root(),
        );
        let root = compute_signing_root(&head.block_root, domain);
        SyncCommitteeMessage {
            slot,
            beacon_block_root: head.block_root,
            validator_index,
            signature: types::BLSSignature::from(
                state_harness::interop_secret_key(validator_index as usize)
                    .sign(root.as_slice())
                    .serialize(),
            ),
        }
    };

    // In the head's period: a member on its subnet is accepted, an outsider rejected.
    let now = time_ms(&h.spec, ANCHOR_SLOT);
    h.chain
        .verify_sync_committee_message_for_gossip(
            message(ANCHOR_SLOT, member),
            subnet_of(member),
            now,
        )
        .unwrap();
    let e = h
        .chain
        .verify_sync_committee_message_for_gossip(message(ANCHOR_SLOT, outsider), 0, now)
        .unwrap_err();
    assert!(
        matches!(e, SyncCommitteeGossipError::WrongSubnet { .. }),
        "{e}"
    );
    assert_eq!(e.verdict(), Verdict::Reject);

    // Two periods later, with the head still at the anchor: the committee is unknown.
    let later = 2 * E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD * E::slots_per_epoch();
    let now = time_ms(&h.spec, later);
    h.clock.set_ms(now);
    assert!(h.chain.head_is_behind(now));
    let e = h
        .chain
        .verify_sync_committee_message_for_gossip(message(later, outsider), 0, now)
        .unwrap_err();
    assert!(
        matches!(e, SyncCommitteeGossipError::PeriodUnknown { slot, .. } if slot == later),
        "{e}"
    );
    assert_eq!(e.verdict(), Verdict::Ignore);
    assert!(!h.chain.head_is_behind(time_ms(&h.spec, ANCHOR_SLOT + 8)));
}

/// The state cache's states are bounded by memory: measured, a chain's post-states take far less
/// together than one state each (they share what their blocks did not write); with a byte
/// bound of half what ten blocks' states took, the oldest go, the count bound stays lowered
/// for the imports that follow, the states then measured fit, and a block on a post-state let
/// go of imports with it loaded from the store.
#[test]
fn the_states_the_state_cache_holds_are_bounded_by_their_memory() {
    let blocks = |h: &Harness| {
        let mut chain = vec![h.anchor.clone()];
        for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + 10 {
            let block = next_block(h, chain.last().unwrap(), slot);
            gossip_and_import(h, &block.block);
            chain.push(block);
        }
        chain
    };
    let h = harness();
    let chain = blocks(&h);
    let all = h.chain.bound_state_memory();
    assert_eq!((all.measured_states, all.block_states), (11, 11), "{all:?}");
    assert_eq!(
        all.block_states_limit,
        beacon_chain::StateCacheConfig::default().max_block_states,
        "{all:?}"
    );
    let one_state = types::memory::differential_sizes([&chain[10].post.state])[0];
    // Eleven post-states and the anchor's checkpoint state: less than half of twelve states
    // counted one by one.
    assert!(
        all.measured_bytes > one_state && all.measured_bytes * 2 < 12 * one_state,
        "eleven post-states and a checkpoint state take {} bytes, one alone {one_state}",
        all.measured_bytes
    );

    let budget = all.measured_bytes / 2;
    let config = ChainConfig {
        state_cache: beacon_chain::StateCacheConfig {
            max_states_bytes: budget,
            ..beacon_chain::StateCacheConfig::default()
        },
        ..ChainConfig::default()
    };
    let h = harness_with(ANCHOR_SLOT, config);
    let chain = blocks(&h);
    let bounded = h.chain.bound_state_memory();
    assert_eq!(bounded.measured_bytes, all.measured_bytes);
    assert!(bounded.block_states_limit < 11, "{bounded:?}");
    assert!(
        bounded.block_states <= bounded.block_states_limit,
        "{bounded:?}"
    );
    let mut parent = chain[10].clone();
    for slot in ANCHOR_SLOT + 11..=ANCHOR_SLOT + 13 {
        let block = next_block(&h, &parent, slot);
        gossip_and_import(&h, &block.block);
        parent = block;
        assert!(h.chain.state_cache_block_states() <= bounded.block_states_limit);
    }
    let again = h.chain.bound_state_memory();
    assert!(again.measured_bytes <= budget, "{again:?} over {budget}");

    // A block on the second block, whose post-state the bound let go of, imports on that
    // state loaded from the store.
    let fork = build_block(
        &chain[2].post,
        ANCHOR_SLOT + 14,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    assert_eq!(
        gossip_and_import(&h, &fork.block),
        fork.block.canonical_root()
    );
}

#[test]
fn a_fork_on_a_block_whose_state_the_cache_let_go_of_imports_with_the_state_from_the_store() {
    const MAX: usize = 4;
    let config = ChainConfig {
        state_cache: beacon_chain::StateCacheConfig {
            max_block_states: MAX,
            ..beacon_chain::StateCacheConfig::default()
        },
        ..ChainConfig::default()
    };
    let h = harness_with(ANCHOR_SLOT, config);
    // Ten blocks, no finality beyond the anchor within them: without the bound the state
    // cache would hold eleven post-states.
    let mut chain = vec![h.anchor.clone()];
    for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + 10 {
        let block = next_block(&h, chain.last().unwrap(), slot);
        gossip_and_import(&h, &block.block);
        chain.push(block);
        // The bound, plus the checkpoints' blocks it never lets go of (here the anchor).
        assert!(h.chain.state_cache_block_states() <= MAX + 1);
    }
    assert_eq!(h.chain.head().block_root, chain[10].block.canonical_root());

    // A block on the second block, whose post-state is long gone from memory: gossip checks
    // its proposer on that state, and import runs the state transition on it; both load it
    // from the store.
    let fork_parent = &chain[2];
    let fork = build_block(
        &fork_parent.post,
        ANCHOR_SLOT + 11,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    let loads = h.chain.state_loads();
    let root = gossip_and_import(&h, &fork.block);
    assert_eq!(root, fork.block.canonical_root());
    // The load ran without any lock (gossip's proposer check loaded the state and kept it in
    // the state cache; the import found it in memory).
    let after = h.chain.state_loads();
    assert!(
        after.outside_lock > loads.outside_lock,
        "{loads:?} -> {after:?}"
    );
    let dump = h.chain.fork_choice_dump();
    let node = dump
        .nodes
        .iter()
        .find(|n| n.block_root == root)
        .expect("the fork block is in fork choice");
    assert_eq!(node.parent_root, fork_parent.block.canonical_root());
    assert!(h.chain.state_cache_block_states() <= MAX + 1);
    // The canonical chain (attested, longer) stays the head.
    assert_eq!(h.chain.head().block_root, chain[10].block.canonical_root());

    // A child of the fork block imports on the fork block's state, kept as the latest import.
    let child = build_block(
        &fork.post,
        ANCHOR_SLOT + 12,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    gossip_and_import(&h, &child.block);
}

/// The slot timer's advance: the head state advanced ahead of each slot is the pre-state of
/// the slot's block, across epoch boundaries (a missed first slot of an epoch included: the
/// block after it starts from the state advanced to the boundary); a block on the previous head
/// starts from that head's advanced state, kept beside the head's; a block on an older block
/// starts from its parent's post-state. Every block reaches the state root it names (the
/// transition checks it) and becomes the head; the counts say which pre-state each import
/// started from.
#[test]
fn the_head_state_advanced_ahead_of_a_slot_is_the_pre_state_of_its_block() {
    let h = harness();
    let spe = E::slots_per_epoch();
    let slot_ms = h.spec.slot_duration_ms;
    let mut parent = h.anchor.clone();
    // The blocks before the parent, newest last.
    let mut ancestors = vec![h.anchor.clone()];
    let missed = ANCHOR_SLOT + spe;
    let last = ANCHOR_SLOT + 2 * spe + 1;
    let counts = |advanced, parent| beacon_chain::ImportPreStates { advanced, parent };
    let mut advanced = 0;
    for slot in (ANCHOR_SLOT + 1..=last).filter(|s| *s != missed) {
        // Two thirds into the slot before (for the block after the missed slot: the missed
        // slot's advance, then no block came).
        let advance_to = if slot == missed + 1 { missed } else { slot };
        h.clock
            .set_ms(time_ms(&h.spec, advance_to - 1) - 1000 + slot_ms * 2 / 3);
        let (head_root, state) = h.chain.advance_head_state(advance_to).unwrap().unwrap();
        assert_eq!(head_root, parent.block.canonical_root());
        assert_eq!(*state.state.slot(), advance_to);
        // Asked again (production does): the same state, not a second advance.
        let again = h
            .chain
            .advanced_state(head_root, &parent.post, advance_to)
            .unwrap();
        assert_eq!(*again.state.slot(), advance_to);

        let built = next_block(&h, &parent, slot);
        let root = gossip_and_import(&h, &built.block);
        advanced += 1;
        let head = h.chain.head();
        assert_eq!(head.block_root, root, "slot {slot}: the block is the head");
        assert_eq!(head.state_root, built.state_root);
        assert_eq!(
            h.chain.import_pre_states(),
            counts(advanced, 0),
            "slot {slot}"
        );
        ancestors.push(std::mem::replace(&mut parent, built));
    }
    let head = h.chain.head();
    assert!(
        head.justified_checkpoint.epoch > ANCHOR_SLOT / spe,
        "the chain justified on: {:?}",
        head.justified_checkpoint
    );
    // Every import wrote one store batch: the two epochs' first blocks (the second after
    // the missed slot) deferred their epoch snapshots, the others stored summaries; the
    // store writer then wrote both snapshots whole, and none is left pending.
    h.chain.flush_store_writes();
    let writes = h.chain.import_store_writes();
    assert_eq!(
        (writes.whole, writes.deferred, writes.summary),
        (0, 2, advanced - 2),
        "{writes:?}"
    );
    assert_eq!(writes.snapshots_written, 2, "{writes:?}");
    assert!(h.chain.store().pending_snapshots().unwrap().is_empty());

    // The head advanced to the next slot, but that slot's block builds on the head's parent,
    // whose own advance (when it was head) is still kept: it starts from that one. A block on
    // an older block starts from that block's post-state. Both import.
    let slot = last + 1;
    h.chain.advance_head_state(slot).unwrap().unwrap();
    let grandparent = &ancestors[ancestors.len() - 1];
    let great_grandparent = &ancestors[ancestors.len() - 2];
    assert_eq!(grandparent.block.slot(), last - 1);
    let fork = build_block(&grandparent.post, slot, &BlockContents::default(), &h.spec).unwrap();
    gossip_and_import(&h, &fork.block);
    assert_eq!(h.chain.import_pre_states(), counts(advanced + 1, 0));
    let slot = slot + 1;
    let fork = build_block(
        &great_grandparent.post,
        slot,
        &BlockContents::default(),
        &h.spec,
    )
    .unwrap();
    gossip_and_import(&h, &fork.block);
    assert_eq!(h.chain.import_pre_states(), counts(advanced + 1, 1));

    // An advance to a slot not after the head's is refused; a head too far behind the clock
    // (a syncing node) is not advanced.
    let head = h.chain.head();
    let err = h.chain.advance_head_state(head.slot).unwrap_err();
    assert!(
        matches!(err, ChainError::NotAfterHead { slot, head_slot } if slot == head.slot && head_slot == head.slot),
        "{err:?}"
    );
    let far = head.slot + beacon_chain::state_advance::MAX_ADVANCE_SLOTS + 1;
    assert!(h.chain.advance_head_state(far).unwrap().is_none());
    assert!(h.chain.advance_head_state(far - 1).unwrap().is_some());
}

/// `blocks` as a segment without columns (the harness's blocks have no blobs).
fn segment_of(blocks: &[SignedBeaconBlock<E>]) -> Vec<SegmentBlock<E>> {
    blocks
        .iter()
        .map(|block| SegmentBlock {
            block: Arc::new(block.clone()),
            columns: Vec::new(),
        })
        .collect()
}

/// `block` with its signature replaced by `signature`.
fn resigned(block: &SignedBeaconBlock<E>, signature: types::BLSSignature) -> SignedBeaconBlock<E> {
    let mut block = block.clone();
    if let SignedBeaconBlock::Fulu(b) = &mut block {
        b.signature = signature;
    }
    block
}

#[test]
fn a_segment_imports_with_one_signature_batch_and_a_bad_signature_stops_it_at_its_block() {
    let h = harness();
    let mut built: Vec<BuiltBlock<E>> = Vec::new();
    for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + 10 {
        let block = next_block(&h, built.last().unwrap_or(&h.anchor), slot);
        built.push(block);
    }
    let genuine: Vec<SignedBeaconBlock<E>> = built.iter().map(|b| b.block.clone()).collect();
    h.clock.set_ms(time_ms(&h.spec, ANCHOR_SLOT + 10));
    let valid = BlockPayloadVerdict::Known(ExecutionStatus::Valid);
    let verdicts = |n: usize| vec![&valid; n];

    // Block 6 carries block 5's signature (a valid point, the wrong signer's message) and
    // block 8 a signature that is no point at all: the batch fails, and the first of them in
    // chain order is named; the six blocks before it are imported.
    let mut blocks = genuine.clone();
    blocks[6] = resigned(&genuine[6], genuine[5].signature());
    blocks[8] = resigned(&genuine[8], types::BLSSignature::from([0xff; 96]));
    let forged_root = blocks[6].canonical_root();
    let result = h
        .chain
        .import_chain_segment(&segment_of(&blocks), &verdicts(blocks.len()));
    assert_eq!(result.imported.len(), 6);
    assert_eq!(
        result.imported,
        genuine[..6]
            .iter()
            .map(|b| b.canonical_root())
            .collect::<Vec<_>>()
    );
    let (at, error) = result.failed.expect("a forged signature fails the segment");
    assert_eq!(at, 6);
    assert!(
        matches!(
            &error,
            ChainError::ForkChoice(fork_choice::Error::InvalidBlock {
                block,
                source: state_processing::per_block::BlockProcessingError::ProposerSignature,
            }) if *block == forged_root
        ),
        "{error}"
    );
    assert_eq!(h.chain.head().slot, ANCHOR_SLOT + 6);
    assert!(matches!(
        h.chain.unimported_block(&forged_root),
        Some(UnimportedBlock::Failed { .. })
    ));

    // From the genuine block 6 on: the malformed signature of block 8 is named, 6 and 7 import.
    let rest = &blocks[6..];
    let mut rest = rest.to_vec();
    rest[0] = genuine[6].clone();
    let result = h
        .chain
        .import_chain_segment(&segment_of(&rest), &verdicts(rest.len()));
    assert_eq!(result.imported.len(), 2);
    let (at, error) = result
        .failed
        .expect("a malformed signature fails the segment");
    assert_eq!(at, 2);
    assert!(
        matches!(
            &error,
            ChainError::ForkChoice(fork_choice::Error::InvalidBlock {
                source: state_processing::per_block::BlockProcessingError::ProposerSignature,
                ..
            })
        ),
        "{error}"
    );
    assert_eq!(h.chain.head().slot, ANCHOR_SLOT + 8);

    // The whole genuine segment: the eight blocks known are passed over, the last two import,
    // and the head is the same as the gossip path reaches on its own.
    let result = h
        .chain
        .import_chain_segment(&segment_of(&genuine), &verdicts(genuine.len()));
    assert!(result.failed.is_none(), "{:?}", result.failed);
    assert_eq!(result.imported.len(), 10);
    // The two new blocks' sets in one batch or two (as the verifier kept up).
    assert!((1..=2).contains(&result.signature_batches));
    assert_eq!(h.chain.head().slot, ANCHOR_SLOT + 10);
    assert_eq!(h.chain.head().block_root, genuine[9].canonical_root());
    let other = harness();
    for block in &genuine {
        gossip_and_import(&other, block);
    }
    assert_eq!(other.chain.head().block_root, h.chain.head().block_root);
    assert_eq!(other.chain.head().state_root, h.chain.head().state_root);

    // Blocks that do not follow one another: the second's parent is unknown to fork choice
    // and to the segment.
    let h = harness();
    h.clock.set_ms(time_ms(&h.spec, ANCHOR_SLOT + 10));
    let gapped = [genuine[0].clone(), genuine[2].clone()];
    let result = h
        .chain
        .import_chain_segment(&segment_of(&gapped), &verdicts(2));
    assert_eq!(result.imported.len(), 1);
    assert!(
        matches!(
            result.failed,
            Some((
                1,
                ChainError::ForkChoice(fork_choice::Error::UnknownParent { .. })
            ))
        ),
        "{:?}",
        result.failed
    );

    // A verdict missing: nothing is tried, the counts are named.
    let result = h
        .chain
        .import_chain_segment(&segment_of(&gapped), &verdicts(1));
    assert!(result.imported.is_empty());
    assert!(
        matches!(
            result.failed,
            Some((
                0,
                ChainError::Segment(SegmentError::VerdictCount {
                    blocks: 2,
                    verdicts: 1
                })
            ))
        ),
        "{:?}",
        result.failed
    );
}
