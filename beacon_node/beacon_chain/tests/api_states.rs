//! The states and blocks the Beacon API reads from the chain (`beacon_chain::api_states`): an
//! empty slot's state advanced from its block's post-state, the duty states advanced when the
//! head is behind, blocks by slot and root, the justified source of a later epoch, a block
//! replayed for its rewards, and the request's errors for what the node does not hold.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{
    BeaconChain, ChainConfig, ExecutionStatus, ManualSlotClock, StateQueryError,
    latest_block_root_of,
};
use fork_choice::ThreadPoolBuilder;
use state_harness::{BlockContents, BuiltBlock, build_block};
use state_processing::per_slot::process_slots;
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
    _dir: tempfile::TempDir,
}

/// A chain anchored at a block at [`ANCHOR_SLOT`] on the interop genesis (its post-state).
fn harness() -> Harness {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis =
        interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
    let anchor = build_block(
        &CachedBeaconState::new(genesis),
        ANCHOR_SLOT,
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
    let clock = Arc::new(ManualSlotClock::new(time_ms(&spec, ANCHOR_SLOT)));
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let chain = BeaconChain::from_anchor(
        Arc::new(store),
        anchor.post.clone(),
        anchor.block.clone(),
        spec.clone(),
        clock.clone(),
        pool,
        ChainConfig::default(),
    )
    .unwrap();
    Harness {
        spec,
        clock,
        chain,
        anchor,
        _dir: dir,
    }
}

/// One second into `slot`, in milliseconds since the UNIX epoch.
fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 1000
}

/// Builds an empty block at `slot` on `parent` and imports it through gossip at one second
/// into its slot.
fn import_at(h: &Harness, parent: &BuiltBlock<E>, slot: Slot) -> BuiltBlock<E> {
    let built = build_block(&parent.post, slot, &BlockContents::default(), &h.spec).unwrap();
    let now = time_ms(&h.spec, slot);
    h.clock.set_ms(now);
    let verified = h
        .chain
        .verify_block_for_gossip(Arc::new(built.block.clone()), now)
        .unwrap();
    h.chain
        .import_block(verified.block, &[], &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();
    built
}

/// `state` advanced through empty slots to `slot`, with its root.
fn advanced(state: &CachedBeaconState<E>, slot: Slot, spec: &ChainSpec) -> (Slot, Root) {
    let mut state = state.clone();
    process_slots(&mut state, slot, spec).unwrap();
    (slot, state.hash_tree_root().unwrap())
}

#[test]
fn the_state_at_an_empty_slot_is_its_block_post_state_advanced() {
    let h = harness();
    let first = import_at(&h, &h.anchor, ANCHOR_SLOT + 1);
    // Slot 18 is empty.
    let empty = ANCHOR_SLOT + 2;
    let last = import_at(&h, &first, ANCHOR_SLOT + 3);
    assert_eq!(h.chain.head().block_root, last.block.canonical_root());

    let mut at = h.chain.state_at_slot(empty).unwrap();
    assert_eq!((at.slot(), at.root), advanced(&first.post, empty, &h.spec));
    assert_eq!(at.state.hash_tree_root().unwrap(), at.root);
    assert_eq!(at.latest_block_root, first.block.canonical_root());
    assert!(!at.execution_optimistic);
    assert!(!at.finalized);

    // A block's own slot: its post-state, as stored.
    let at = h.chain.state_at_slot(ANCHOR_SLOT + 1).unwrap();
    assert_eq!(at.root, first.state_root);
    assert_eq!(at.latest_block_root, first.block.canonical_root());
    // The same state by its root; the head's slot is the head's state.
    let by_root = h.chain.state_by_root(first.state_root).unwrap();
    assert_eq!(by_root.slot(), ANCHOR_SLOT + 1);
    assert_eq!(by_root.latest_block_root, first.block.canonical_root());
    let head = h.chain.state_at_slot(ANCHOR_SLOT + 3).unwrap();
    assert_eq!(head.root, last.state_root);
    assert_eq!(
        latest_block_root_of(&head.state.state, head.root),
        last.block.canonical_root()
    );
}

#[test]
fn blocks_are_found_by_slot_and_root_with_their_flags() {
    let h = harness();
    let first = import_at(&h, &h.anchor, ANCHOR_SLOT + 1);
    let last = import_at(&h, &first, ANCHOR_SLOT + 3);
    let first_root = first.block.canonical_root();
    let at = h.chain.block_at_slot(ANCHOR_SLOT + 1).unwrap().unwrap();
    assert_eq!(at.root, first_root);
    assert!(at.canonical && !at.finalized && !at.execution_optimistic);
    assert_eq!(h.chain.block_by_root(first_root).unwrap(), Some(at));
    // The empty slot between, a slot after the head, a block not held: none.
    assert_eq!(h.chain.block_at_slot(ANCHOR_SLOT + 2).unwrap(), None);
    assert_eq!(h.chain.block_at_slot(ANCHOR_SLOT + 4).unwrap(), None);
    assert_eq!(
        h.chain.block_by_root(Root::repeat_byte(0x55)).unwrap(),
        None
    );
    let head = h.chain.head_block().unwrap().unwrap();
    assert_eq!(head.root, last.block.canonical_root());
    // The block after the first, over the empty slot; the one leaf of the tree is the head.
    let head_snapshot = h.chain.head();
    assert_eq!(
        h.chain.canonical_child(&head_snapshot, first_root).unwrap(),
        Some(head.root)
    );
    assert_eq!(
        h.chain.canonical_child(&head_snapshot, head.root).unwrap(),
        None
    );
    let leaves = h.chain.block_tree_leaves().unwrap();
    assert_eq!(
        leaves.iter().map(|l| l.root).collect::<Vec<_>>(),
        vec![head.root]
    );
    // The anchor is the finalized block.
    let finalized = h.chain.finalized_block().unwrap().unwrap();
    assert_eq!(finalized.root, h.anchor.block.canonical_root());
    assert!(finalized.canonical && finalized.finalized);
}

#[test]
fn a_state_beyond_the_head_or_not_held_is_the_request_s_fault() {
    let h = harness();
    let head_slot = h.chain.head().slot;
    let err = h.chain.state_at_slot(head_slot + 1).unwrap_err();
    assert!(
        matches!(err, StateQueryError::SlotAfterHead { slot, head_slot: s } if slot == head_slot + 1 && s == head_slot),
        "{err:?}"
    );
    let root = Root::repeat_byte(0x17);
    let err = h.chain.state_by_root(root).unwrap_err();
    assert!(
        matches!(err, StateQueryError::NoStateWithRoot { root: r } if r == root),
        "{err:?}"
    );
    // Before the anchor: the state of the empty slot would come from the genesis block's,
    // which the node does not hold.
    let slot = ANCHOR_SLOT - 1;
    let err = h.chain.state_at_slot(slot).unwrap_err();
    assert!(
        matches!(err, StateQueryError::NoBlockForSlot { slot: s, .. } if s == slot),
        "{err:?}"
    );
}

#[test]
fn the_duty_state_of_an_epoch_far_past_the_head_is_the_head_state_advanced() {
    let h = harness();
    let spe = E::slots_per_epoch();
    let head_epoch = ANCHOR_SLOT / spe;
    let anchor_root = h.anchor.block.canonical_root();

    // Within one epoch of the head: the head's state itself.
    for epoch in [head_epoch - 1, head_epoch, head_epoch + 1] {
        let at = h.chain.duty_state(epoch).unwrap();
        assert_eq!(at.slot(), ANCHOR_SLOT, "epoch {epoch}");
        assert_eq!(at.root, h.anchor.state_root, "epoch {epoch}");
    }
    // Two epochs ahead: advanced to the epoch before, whose next-epoch committees are the
    // epoch's; the latest block is still the head's.
    let epoch = head_epoch + 2;
    let at = h.chain.duty_state(epoch).unwrap();
    assert_eq!(
        (at.slot(), at.root),
        advanced(&h.anchor.post, (epoch - 1) * spe, &h.spec)
    );
    assert_eq!(at.latest_block_root, anchor_root);

    // Sync duties: a period beyond the clock's next is refused; with the clock two periods
    // on, the head (in period 0) is advanced to the first slot of the period before.
    let period_slots = E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD * spe;
    let far = 2 * E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
    let err = h.chain.sync_duty_state(far).unwrap_err();
    assert!(
        matches!(err, StateQueryError::BeyondNextSyncPeriod { epoch, clock_period: 0 } if epoch == far),
        "{err:?}"
    );
    h.clock.set_ms(time_ms(&h.spec, 2 * period_slots));
    let at = h.chain.sync_duty_state(far).unwrap();
    assert_eq!(
        (at.slot(), at.root),
        advanced(&h.anchor.post, period_slots, &h.spec)
    );
    assert_eq!(at.latest_block_root, anchor_root);
    // The head's own period: the head's state.
    assert_eq!(
        h.chain.sync_duty_state(head_epoch).unwrap().slot(),
        ANCHOR_SLOT
    );
}

#[test]
fn the_justified_source_of_a_later_epoch_is_the_head_state_s_at_that_epoch() {
    let h = harness();
    let spe = E::slots_per_epoch();
    let head = h.chain.head_state();
    let own = h
        .chain
        .justified_source_at(&head, ANCHOR_SLOT / spe)
        .unwrap();
    assert_eq!(&own, head.state.state.current_justified_checkpoint());
    let epoch = ANCHOR_SLOT / spe + 1;
    let mut later = head.state.clone();
    process_slots(&mut later, epoch * spe, &h.spec).unwrap();
    let source = h.chain.justified_source_at(&head, epoch).unwrap();
    assert_eq!(&source, later.state.current_justified_checkpoint());
    // Asked again: the kept answer.
    assert_eq!(h.chain.justified_source_at(&head, epoch).unwrap(), source);
}

#[test]
fn a_replayed_block_reaches_its_post_state() {
    let h = harness();
    let first = import_at(&h, &h.anchor, ANCHOR_SLOT + 1);
    // After an empty slot: the pre-state is advanced over it.
    let second = import_at(&h, &first, ANCHOR_SLOT + 3);
    let SignedBeaconBlock::Fulu(signed) = &second.block else {
        panic!("a Fulu block");
    };
    let replay = h
        .chain
        .replay_block(second.block.canonical_root(), &signed.message)
        .unwrap();
    assert_eq!(*replay.pre_state.state.slot(), ANCHOR_SLOT + 3);
    let mut post = replay.post_state;
    assert_eq!(post.hash_tree_root().unwrap(), second.state_root);

    // A block whose parent the node does not hold.
    let mut orphan = signed.message.clone();
    orphan.parent_root = Root::repeat_byte(0x99);
    let err = h.chain.block_pre_state(&orphan).unwrap_err();
    assert!(
        matches!(err, StateQueryError::NoBlock { block_root } if block_root == orphan.parent_root),
        "{err:?}"
    );
}
