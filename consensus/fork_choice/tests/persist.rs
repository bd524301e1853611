//! Fork choice written to bytes and read back on a store anchored at the same block: the same
//! tree, checkpoints, latest messages, weights and head, without the blocks' post-states (their
//! owner hands over the justified balances the store asks for, as the chain does), and the same
//! answer to the next block, given as results. Damaged bytes are a typed error and change
//! nothing.

use std::{collections::HashMap, sync::Arc};

use fork_choice::{
    AnchorBlock, BlockSummary, Columns, Config, Error, ForkChoice, JustifiedBalances,
    PersistedDecodeError, SpecStore, ThreadPoolBuilder,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use state_processing::{
    CachedBeaconState,
    genesis::interop_genesis_state,
    per_block::{AlwaysValid, VerifySignatures, get_indexed_attestation},
    per_epoch::process_justification_and_finalization_progressive,
    per_slot::process_slots,
};
use types::{ChainSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};
use types::{EthSpec, phase0::Checkpoint};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const ANCHOR_SLOT: Slot = 16;
const VALIDATORS: u64 = 64;

/// `store_target_checkpoint_state` over post-states by block root, as their owner computes it.
fn checkpoint_state(
    states: &HashMap<Root, CachedBeaconState<E>>,
    checkpoint: &Checkpoint,
    spec: &ChainSpec,
) -> CachedBeaconState<E> {
    let mut state = states[&checkpoint.root].clone();
    let start = checkpoint.epoch * E::slots_per_epoch();
    if *state.state.slot() < start {
        process_slots(&mut state, start, spec).expect("empty slots");
    }
    state
}

/// Hands `store` the justified balances it asks for (`wanted_justified_balances`).
fn supply_balances(
    store: &mut ForkChoice<E>,
    states: &HashMap<Root, CachedBeaconState<E>>,
    spec: &ChainSpec,
) {
    for checkpoint in store.wanted_justified_balances() {
        let state = checkpoint_state(states, &checkpoint, spec);
        let balances = JustifiedBalances::from_state(&state).expect("balances");
        store.set_justified_balances(&checkpoint, balances);
    }
}

/// The results API's `on_block` and `on_attestation(is_from_block=True)`, as the chain runs
/// them for `built` (its transition run by the harness), with the states its owner holds.
fn import_results(
    store: &mut ForkChoice<E>,
    built: &BuiltBlock<E>,
    states: &HashMap<Root, CachedBeaconState<E>>,
    spec: &ChainSpec,
) {
    let block = electra_block(&built.block);
    let root = built.block.canonical_root();
    let arrival = store
        .check_block(root, block.message.parent_root, block.message.slot)
        .expect("checked")
        .expect("a new block");
    let mut post = built.post.clone();
    post.progressive_balances().expect("balances");
    let mut pulled_up = post.clone();
    process_justification_and_finalization_progressive(&mut pulled_up).expect("pulled up");
    let view = post.view().expect("view");
    let up = pulled_up.view().expect("view");
    let summary = BlockSummary {
        root,
        parent_root: block.message.parent_root,
        slot: block.message.slot,
        proposer_index: block.message.proposer_index,
        justified: view.current_justified_checkpoint.clone(),
        finalized: view.finalized_checkpoint.clone(),
        unrealized_justified: up.current_justified_checkpoint.clone(),
        unrealized_finalized: up.finalized_checkpoint.clone(),
        payload_hash: Some(block.message.body.execution_payload.block_hash),
        is_timely: arrival.is_timely,
    };
    for checkpoint in [&summary.justified, &summary.unrealized_justified] {
        let state = checkpoint_state(states, checkpoint, spec);
        let balances = JustifiedBalances::from_state(&state).expect("balances");
        store.set_justified_balances(checkpoint, balances);
    }
    assert_eq!(store.insert_block(&summary).expect("inserted"), root);
    for attestation in block.message.body.attestations.iter() {
        let mut state = checkpoint_state(states, &attestation.data.target, spec);
        let (view, caches) = state.view_mut().expect("view");
        let indexed =
            get_indexed_attestation(&view.as_ref(), caches, attestation).expect("indexed");
        store
            .on_indexed_attestation(&attestation.data, &indexed.attesting_indices, true)
            .expect("valid vote");
    }
}

fn electra_block(block: &SignedBeaconBlock<E>) -> &types::electra::SignedBeaconBlock<E> {
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

fn fresh(spec: &Arc<ChainSpec>, anchor: &BuiltBlock<E>) -> SpecStore<E> {
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool"),
    );
    let mut store = SpecStore::new(
        anchor.post.clone(),
        &electra_block(&anchor.block).message,
        spec.clone(),
        Config::default(),
        pool,
    )
    .expect("anchor block commits to its state");
    store.set_verify_signatures(VerifySignatures::None);
    store
}

/// A store on the results API alone, as the chain's: the anchor's checkpoint state read once.
fn fresh_results(spec: &Arc<ChainSpec>, anchor: &BuiltBlock<E>) -> ForkChoice<E> {
    let block = &electra_block(&anchor.block).message;
    let mut store = ForkChoice::new(
        &anchor.post,
        AnchorBlock {
            root: anchor.block.canonical_root(),
            slot: block.slot,
            proposer_index: block.proposer_index,
            parent_root: block.parent_root,
        },
        spec.clone(),
        Config::default(),
    )
    .expect("anchor state");
    store.set_verify_signatures(VerifySignatures::None);
    store
}

fn time_at(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot)
}

/// `on_block`, then the block's attestations (as the chain applies a block's body).
fn import(store: &mut SpecStore<E>, block: &SignedBeaconBlock<E>) -> Root {
    let root = store
        .on_block(block, Columns::Retrieved(&[]), &AlwaysValid)
        .expect("valid block");
    for attestation in electra_block(block).message.body.attestations.iter() {
        store.on_attestation(attestation, true).expect("valid");
    }
    root
}

/// Everything the restored store must agree on.
#[derive(Debug, PartialEq)]
struct View {
    justified: types::phase0::Checkpoint,
    finalized: types::phase0::Checkpoint,
    unrealized_justified: types::phase0::Checkpoint,
    unrealized_finalized: types::phase0::Checkpoint,
    blocks: Vec<(Root, Slot)>,
    weights: Vec<u64>,
    latest: Vec<Option<(u64, Option<Root>)>>,
    head: fork_choice::Head,
}

fn view(store: &mut ForkChoice<E>) -> View {
    let head = store.get_head().expect("head");
    let nodes = store.proto_array().nodes();
    View {
        justified: store.justified_checkpoint().clone(),
        finalized: store.finalized_checkpoint().clone(),
        unrealized_justified: store.unrealized_justified_checkpoint().clone(),
        unrealized_finalized: store.unrealized_finalized_checkpoint().clone(),
        blocks: nodes.iter().map(|n| (n.root, n.slot)).collect(),
        weights: nodes.iter().map(|n| n.weight).collect(),
        latest: (0..VALIDATORS).map(|i| store.latest_message(i)).collect(),
        head,
    }
}

struct Chain {
    spec: Arc<ChainSpec>,
    anchor: BuiltBlock<E>,
    store: SpecStore<E>,
    states: HashMap<Root, CachedBeaconState<E>>,
    head: BuiltBlock<E>,
}

/// Three epochs of blocks with every slot's attestations (justifying past the anchor), and a
/// one-block fork off the middle.
fn chain() -> Chain {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis = interop_genesis_state::<E>(
        VALIDATORS as usize,
        GENESIS_TIME,
        Root::repeat_byte(0x42),
        &spec,
    )
    .expect("interop genesis");
    let genesis = CachedBeaconState::new(genesis);
    let anchor = build_block(&genesis, ANCHOR_SLOT, &BlockContents::default(), &spec)
        .expect("block on genesis");
    let mut store = fresh(&spec, &anchor);
    let mut states = HashMap::new();
    states.insert(anchor.block.canonical_root(), anchor.post.clone());
    let mut parent = anchor.clone();
    let last = ANCHOR_SLOT + 3 * 8;
    for slot in ANCHOR_SLOT + 1..=last {
        let contents = BlockContents {
            attestations: if slot > ANCHOR_SLOT + 1 {
                vec![AttestationSpec::whole_slot(slot - 1)]
            } else {
                vec![]
            },
            ..BlockContents::default()
        };
        let built = build_block(&parent.post, slot, &contents, &spec).expect("block");
        store.on_tick(time_at(&spec, slot));
        let root = import(&mut store, &built.block);
        states.insert(root, built.post.clone());
        if slot == ANCHOR_SLOT + 12 {
            // A fork: an empty block at the next slot on the same parent.
            let fork = build_block(&parent.post, slot + 1, &BlockContents::default(), &spec)
                .expect("fork block");
            store.on_tick(time_at(&spec, slot + 1));
            let fork_root = import(&mut store, &fork.block);
            states.insert(fork_root, fork.post.clone());
        }
        parent = built;
    }
    Chain {
        spec,
        anchor,
        store,
        states,
        head: parent,
    }
}

#[test]
fn a_restored_store_has_the_same_tree_votes_and_head_and_takes_the_next_block_alike() {
    let mut c = chain();
    // The proposer boost is not persisted: it belongs to the slot the node stopped in.
    let next_slot = c.head.block.slot() + 1;
    c.store.on_tick(time_at(&c.spec, next_slot));
    let before = view(&mut c.store);
    assert!(
        before.justified.epoch > ANCHOR_SLOT / 8,
        "the chain justified past the anchor: {:?}",
        before.justified
    );
    assert!(before.latest.iter().all(Option::is_some));
    let bytes = c.store.to_persisted_bytes();

    let mut restored = fresh_results(&c.spec, &c.anchor);
    restored.on_tick(c.store.time());
    let outcome = restored
        .restore_persisted(&bytes, |_| true)
        .expect("bytes just written");
    assert_eq!(outcome.blocks.len(), before.blocks.len() - 1);
    assert_eq!(outcome.latest_messages, VALIDATORS as usize);
    // The justified checkpoint moved past the anchor: its balances are asked for.
    assert!(!restored.wanted_justified_balances().is_empty());
    supply_balances(&mut restored, &c.states, &c.spec);
    assert_eq!(view(&mut restored), before);

    // The next block, with the last slot's attestations, lands alike on both.
    let slot = next_slot;
    let contents = BlockContents {
        attestations: vec![AttestationSpec::whole_slot(slot - 1)],
        ..BlockContents::default()
    };
    let next = build_block(&c.head.post, slot, &contents, &c.spec).expect("next block");
    for store in [&mut c.store, &mut restored] {
        store.on_tick(time_at(&c.spec, slot));
    }
    import(&mut c.store, &next.block);
    import_results(&mut restored, &next, &c.states, &c.spec);
    assert_eq!(view(&mut restored), view(&mut c.store));
}

#[test]
fn blocks_the_database_does_not_hold_are_left_out_with_their_descendants() {
    let c = chain();
    let bytes = c.store.to_persisted_bytes();
    let nodes = c.store.proto_array().nodes().to_vec();
    // The block at the anchor's slot + 20 never reached the database.
    let missing = nodes
        .iter()
        .find(|n| n.slot == ANCHOR_SLOT + 20)
        .expect("held")
        .root;
    let mut restored = fresh_results(&c.spec, &c.anchor);
    restored.on_tick(c.store.time());
    let outcome = restored
        .restore_persisted(&bytes, |root| *root != missing)
        .expect("bytes just written");
    supply_balances(&mut restored, &c.states, &c.spec);
    assert!(outcome.blocks.iter().all(|r| {
        let n = nodes.iter().find(|n| n.root == *r).expect("persisted");
        n.slot < ANCHOR_SLOT + 20
    }));
    assert!(!restored.contains_block(&missing));
    let head = restored.get_head().expect("head");
    assert!(head.slot < ANCHOR_SLOT + 20, "{head:?}");
    // The votes for the blocks left out keep their epochs, with no block.
    assert!((0..VALIDATORS).all(|i| restored.latest_message(i).is_some()));
}

#[test]
fn damaged_bytes_are_a_typed_error_and_change_nothing() {
    let c = chain();
    let bytes = c.store.to_persisted_bytes();
    let mut store = fresh(&c.spec, &c.anchor);
    store.on_tick(c.store.time());
    let before = view(&mut store);
    // Every cut, a changed version, a trailing byte, an out-of-range vote reference.
    let mut damaged: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
    let mut version = bytes.clone();
    version[0] = 9;
    damaged.push(version);
    let mut trailing = bytes.clone();
    trailing.push(0);
    damaged.push(trailing);
    let mut reference = bytes.clone();
    *reference.last_mut().expect("votes") = 0xff;
    damaged.push(reference);
    for (i, bad) in damaged.iter().enumerate() {
        let err = store.restore_persisted(bad, |_| true);
        assert!(
            matches!(err, Err(Error::CorruptPersisted(_))),
            "case {i}: {err:?}"
        );
    }
    // The cause is kept, typed: the last three cases.
    let last = damaged.len() - 3;
    assert!(matches!(
        store.restore_persisted(&damaged[last], |_| true),
        Err(Error::CorruptPersisted(PersistedDecodeError::Version {
            found: 9,
            expected: 1
        }))
    ));
    assert!(matches!(
        store.restore_persisted(&damaged[last + 1], |_| true),
        Err(Error::CorruptPersisted(
            PersistedDecodeError::TrailingBytes(1)
        ))
    ));
    assert!(matches!(
        store.restore_persisted(&damaged[last + 2], |_| true),
        Err(Error::CorruptPersisted(
            PersistedDecodeError::ReferenceOutOfRange { .. }
        ))
    ));
    assert_eq!(view(&mut store), before);
}
