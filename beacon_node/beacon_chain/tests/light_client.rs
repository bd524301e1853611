//! The light-client server end to end: a chain built with full sync committee participation
//! past finality and across a sync committee period; a light client started from the node's
//! bootstrap (`initialize_light_client_store`) follows the node's best updates and latest
//! finality update (the spec's `process_light_client_*`) to the chain's finalized block, and the
//! node serves the same data from its store after a restart. Bootstraps before the serving window
//! are pruned from the store.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{BeaconChain, ChainConfig, ExecutionStatus, ManualSlotClock};
use fork_choice::ThreadPoolBuilder;
use light_client::fork::{
    upgrade_lc_bootstrap_to_latest, upgrade_lc_finality_update_to_latest,
    upgrade_lc_update_to_latest,
};
use light_client::sync_protocol::compute_sync_committee_period_at_slot;
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use state_processing::{CachedBeaconState, genesis::interop_genesis_state, per_block::AlwaysValid};
use store::{Store, StoreConfig};
use tree_hash::TreeHash;
use types::{ChainSpec, ForkName, MinimalEthSpec, Root, Slot};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
/// The anchor: a block at the first slot of epoch 2 on the interop genesis.
const ANCHOR_SLOT: Slot = 16;

fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 1000
}

fn pool() -> Arc<fork_choice::ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap())
}

fn open_store(dir: &tempfile::TempDir, spec: &ChainSpec) -> Arc<Store<E>> {
    Arc::new(
        Store::<E>::open(&dir.path().join("db"), spec.clone(), StoreConfig::default()).unwrap(),
    )
}

/// (attested slot, signature slot, finalized slot, participants) of each update.
fn summary(updates: &[types::LightClientUpdate<E>]) -> Vec<(Slot, Slot, Slot, usize)> {
    updates
        .iter()
        .map(|u| {
            let u = upgrade_lc_update_to_latest(u).unwrap();
            (
                u.attested_header.beacon.slot,
                u.signature_slot,
                u.finalized_header.beacon.slot,
                u.sync_aggregate.sync_committee_bits.num_set_bits(),
            )
        })
        .collect()
}

/// A node's pieces besides its chain: the spec, the anchor (a block at `ANCHOR_SLOT` on the
/// interop genesis), the store's directory and the clock.
struct Node {
    spec: Arc<ChainSpec>,
    anchor: BuiltBlock<E>,
    dir: tempfile::TempDir,
    clock: Arc<ManualSlotClock>,
}

/// A chain from the anchor with `config`, the clock at the anchor's slot.
fn node(spec: ChainSpec, config: ChainConfig) -> (Node, BeaconChain<E>) {
    let spec = Arc::new(spec);
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
    let clock = Arc::new(ManualSlotClock::new(time_ms(&spec, ANCHOR_SLOT)));
    let chain = BeaconChain::from_anchor(
        open_store(&dir, &spec),
        anchor.post.clone(),
        anchor.block.clone(),
        spec.clone(),
        clock.clone(),
        pool(),
        config,
    )
    .unwrap();
    let node = Node {
        spec,
        anchor,
        dir,
        clock,
    };
    (node, chain)
}

fn fulu() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)
}

/// The chain reopened from its store, as a restarting node does.
fn reopen(n: &Node) -> BeaconChain<E> {
    BeaconChain::<E>::open(
        open_store(&n.dir, &n.spec),
        n.spec.clone(),
        n.clock.clone(),
        pool(),
        ChainConfig::default(),
    )
    .unwrap()
}

/// The block at `slot` on `parent` with the attestations of the slot before (and the harness's
/// full sync aggregate), imported at its slot.
fn import_next(
    n: &Node,
    chain: &BeaconChain<E>,
    parent: &BuiltBlock<E>,
    slot: Slot,
) -> BuiltBlock<E> {
    let contents = BlockContents {
        attestations: vec![AttestationSpec::whole_slot(slot - 1)],
        ..BlockContents::default()
    };
    let built = build_block(&parent.post, slot, &contents, &n.spec).unwrap();
    n.clock.set_ms(time_ms(&n.spec, slot));
    chain
        .import_block(
            Arc::new(built.block.clone()),
            &[],
            &AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap();
    built
}

#[test]
fn a_light_client_follows_the_node_to_its_finalized_block() {
    let (n, chain) = node(fulu(), ChainConfig::default());
    let (spec, anchor) = (n.spec.clone(), n.anchor.clone());
    let anchor_root = anchor.block.canonical_root();
    assert!(chain.light_client_server().is_running());

    // Past the period boundary (slot 64) and two slots into an epoch, so that the head's and
    // its parent's states agree on the finalized checkpoint. Every block carries a full sync
    // aggregate (the harness's default) and attestations of the slot before.
    let last = 74;
    let mut parent: BuiltBlock<E> = anchor.clone();
    for slot in ANCHOR_SLOT + 1..=last {
        parent = import_next(&n, &chain, &parent, slot);
    }
    assert_eq!(chain.light_client_server().last_error(), None);
    let head = chain.head();
    assert_eq!(head.slot, last);
    let finalized = head.finalized_checkpoint.clone();
    assert!(finalized.epoch >= 6, "finality advanced: {finalized:?}");

    // The light client: bootstrap from the anchor, then the best update of each period, then
    // the latest finality update.
    let gvr = chain.genesis_validators_root();
    let bootstrap = chain.light_client_bootstrap(&anchor_root).unwrap().unwrap();
    let mut store = light_client::initialize_light_client_store(
        &spec,
        anchor_root,
        &upgrade_lc_bootstrap_to_latest(&bootstrap).unwrap(),
    )
    .unwrap();
    // Ranges: from the first period with an update, consecutive, empty past the head.
    assert_eq!(chain.light_client_updates_by_range(1, 8).unwrap().len(), 1);
    assert_eq!(chain.light_client_updates_by_range(0, 1).unwrap().len(), 1);
    assert!(
        chain
            .light_client_updates_by_range(2, 8)
            .unwrap()
            .is_empty()
    );
    assert!(
        chain
            .light_client_updates_by_range(u64::MAX, 8)
            .unwrap()
            .is_empty()
    );
    let current_slot = last + 1;
    let start = compute_sync_committee_period_at_slot::<E>(ANCHOR_SLOT);
    let updates = chain.light_client_updates_by_range(start, 8).unwrap();
    assert_eq!(updates.len(), 2, "periods 0 and 1 have best updates");
    for update in &updates {
        let update = upgrade_lc_update_to_latest(update).unwrap();
        assert!(light_client::is_sync_committee_update(&update));
        light_client::process_light_client_update(&spec, &mut store, &update, current_slot, gvr)
            .unwrap();
    }
    let finality = chain.light_client_finality_update().unwrap().unwrap();
    let finality = upgrade_lc_finality_update_to_latest(&finality).unwrap();
    assert_eq!(finality.signature_slot, last);
    light_client::process_light_client_finality_update(
        &spec,
        &mut store,
        &finality,
        current_slot,
        gvr,
    )
    .unwrap();
    let optimistic = chain.light_client_optimistic_update().unwrap().unwrap();
    assert_eq!(optimistic.signature_slot(), last);

    let finalized_block = chain.store().get_block(&finalized.root).unwrap().unwrap();
    assert_eq!(
        store.finalized_header.beacon,
        finalized_block.signed_block_header().message,
        "the light client's finalized header is the chain's finalized block"
    );
    assert_eq!(
        store.finalized_header.beacon.tree_hash_root(),
        finalized.root
    );
    assert_eq!(store.optimistic_header.beacon.slot, last - 1);

    // A newly finalized epoch boundary block has a bootstrap that starts a light client too.
    let boundary = chain
        .light_client_bootstrap(&finalized.root)
        .unwrap()
        .unwrap();
    light_client::initialize_light_client_store(
        &spec,
        finalized.root,
        &upgrade_lc_bootstrap_to_latest(&boundary).unwrap(),
    )
    .unwrap();

    // After a restart the node serves the persisted updates and bootstraps.
    drop(chain);
    let chain = reopen(&n);
    let reopened = chain.light_client_updates_by_range(start, 8).unwrap();
    assert_eq!(summary(&reopened), summary(&updates));
    assert_eq!(reopened, updates);
    assert_eq!(
        chain.light_client_bootstrap(&anchor_root).unwrap(),
        Some(bootstrap)
    );
    assert!(chain.light_client_finality_update().unwrap().is_some());

    // The reopened chain replayed the blocks since its last whole state into the server (the
    // others restored with fork choice): the next block extends the same data (period 1 keeps a
    // best update, the stored one where it is better; the latest one moves to it).
    import_next(&n, &chain, &parent, last + 1);
    assert_eq!(chain.light_client_server().last_error(), None);
    let after = chain.light_client_updates_by_range(start, 8).unwrap();
    assert_eq!(after.len(), 2);
    assert_eq!(after[0], updates[0], "the finalized period's update stays");
    let latest = chain.light_client_finality_update().unwrap().unwrap();
    assert_eq!(latest.signature_slot(), last + 1);
}

#[test]
fn a_disabled_server_collects_nothing() {
    let (n, chain) = node(
        fulu(),
        ChainConfig {
            disable_light_client_server: true,
            ..ChainConfig::default()
        },
    );
    let (spec, anchor) = (n.spec.clone(), n.anchor.clone());
    n.clock.set_ms(time_ms(&spec, ANCHOR_SLOT + 1));
    let built = build_block(
        &anchor.post,
        ANCHOR_SLOT + 1,
        &BlockContents::default(),
        &spec,
    )
    .unwrap();
    chain
        .import_block(
            Arc::new(built.block),
            &[],
            &AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap();
    assert!(!chain.light_client_server().is_running());
    assert_eq!(
        chain
            .light_client_bootstrap(&anchor.block.canonical_root())
            .unwrap(),
        None
    );
    assert!(chain.light_client_finality_update().unwrap().is_none());
}

#[test]
fn bootstraps_before_the_serving_window_are_pruned_from_the_store() {
    // A serving window of two epochs: finality at epoch F keeps the bootstraps from epoch F - 2
    // on.
    let mut spec = fulu();
    spec.min_epochs_for_block_requests = 2;
    let (n, chain) = node(spec, ChainConfig::default());
    let anchor = n.anchor.clone();
    let anchor_root = anchor.block.canonical_root();
    // Every slot has a block: the epoch boundary blocks are the first blocks of their epochs.
    let mut boundary_roots = vec![(ANCHOR_SLOT, anchor_root)];
    let mut parent: BuiltBlock<E> = anchor;
    for slot in ANCHOR_SLOT + 1..=66 {
        let built = import_next(&n, &chain, &parent, slot);
        if slot % 8 == 0 {
            boundary_roots.push((slot, built.block.canonical_root()));
        }
        parent = built;
    }
    assert_eq!(chain.light_client_server().last_error(), None);
    let finalized = chain.head().finalized_checkpoint.clone();
    // Past the anchor's epoch and the next, so that some bootstraps fall out of the window.
    assert!(finalized.epoch >= 5, "{finalized:?}");
    let finalized_slot = finalized.epoch * 8;
    assert!(boundary_roots.contains(&(finalized_slot, finalized.root)));
    let keep_from = (finalized.epoch - 2) * 8;

    // Served: the finalized epoch boundary blocks in the window; the anchor's and the older
    // boundary blocks' are pruned (and the later blocks are not finalized).
    let check = |chain: &BeaconChain<E>| {
        for (slot, root) in &boundary_roots {
            let served = chain.light_client_bootstrap(root).unwrap();
            assert_eq!(
                served.is_some(),
                (keep_from..=finalized_slot).contains(slot),
                "the bootstrap of the epoch boundary block at slot {slot} (finalized epoch {})",
                finalized.epoch
            );
        }
    };
    check(&chain);
    // From the store after a restart too: the pruned records are gone, the kept ones served.
    drop(chain);
    let chain = reopen(&n);
    check(&chain);
}

/// A restart right after an epoch's first block: fork choice comes back whole from the store and
/// no block is imported again, so the light-client server is given the restored head itself.
/// The next block's updates attest to it.
#[test]
fn after_a_restart_with_nothing_replayed_the_next_block_attests_to_the_restored_head() {
    let (n, chain) = node(fulu(), ChainConfig::default());
    // The last block is the first of epoch 5: its state is stored whole, with fork choice.
    let last = 40;
    let mut parent = n.anchor.clone();
    for slot in ANCHOR_SLOT + 1..=last {
        parent = import_next(&n, &chain, &parent, slot);
    }
    drop(chain);

    let chain = reopen(&n);
    let reopened = chain.reopened().unwrap();
    assert_eq!(reopened.replayed, 0, "{reopened:?}");
    assert_eq!(chain.head().slot, last);

    import_next(&n, &chain, &parent, last + 1);
    assert_eq!(chain.light_client_server().last_error(), None);
    let optimistic = chain.light_client_optimistic_update().unwrap().unwrap();
    assert_eq!(optimistic.signature_slot(), last + 1);
    let finality = chain.light_client_finality_update().unwrap().unwrap();
    let finality = upgrade_lc_finality_update_to_latest(&finality).unwrap();
    assert_eq!(finality.signature_slot, last + 1);
    assert_eq!(finality.attested_header.beacon.slot, last);
}

/// A restart a slot after an epoch's first block: fork choice comes back from the store without
/// the blocks before that block, so the collector never sees the boundary blocks between the
/// split and it. Those that finality reaches after the restart are served a bootstrap derived
/// from their stored post-state (and stored), the one their post-state gives; one before the
/// serving window, or not finalized, is not.
#[test]
fn a_boundary_block_finalized_after_a_restart_gets_its_bootstrap_from_its_stored_state() {
    let mut spec = fulu();
    spec.min_epochs_for_block_requests = 2;
    let (n, chain) = node(spec, ChainConfig::default());
    let mut parent = n.anchor.clone();
    let mut boundaries: Vec<BuiltBlock<E>> = Vec::new();
    for slot in ANCHOR_SLOT + 1..=41 {
        parent = import_next(&n, &chain, &parent, slot);
        if slot % 8 == 0 {
            boundaries.push(parent.clone());
        }
    }
    let finalized_before = chain.head().finalized_checkpoint.epoch;
    drop(chain);

    let chain = reopen(&n);
    let reopened = chain.reopened().unwrap();
    assert_eq!(reopened.replayed, 1, "{reopened:?}");
    for slot in 42..=66 {
        parent = import_next(&n, &chain, &parent, slot);
        if slot % 8 == 0 {
            boundaries.push(parent.clone());
        }
    }
    assert_eq!(chain.light_client_server().last_error(), None);
    let finalized = chain.head().finalized_checkpoint.clone();
    assert!(finalized.epoch >= 6, "{finalized:?}");
    let keep_from = (finalized.epoch - 2) * 8;
    let mut derived = 0;
    for built in &boundaries {
        let slot = built.block.slot();
        let root = built.block.canonical_root();
        let served = chain.light_client_bootstrap(&root).unwrap();
        let expected = (keep_from..=finalized.epoch * 8).contains(&slot);
        assert_eq!(served.is_some(), expected, "slot {slot}");
        let Some(served) = served else { continue };
        let made = light_client::full_node::create_light_client_bootstrap(
            &n.spec,
            &built.post.state,
            &built.block,
        )
        .unwrap();
        assert_eq!(upgrade_lc_bootstrap_to_latest(&served).unwrap(), made);
        // Between the split at the restart and the restored block: not collected.
        if slot > finalized_before * 8 && slot < 40 {
            derived += 1;
        }
    }
    assert!(
        derived >= 1,
        "no boundary block needed deriving: {finalized_before}"
    );
    // Stored once derived: served again after the next restart.
    drop(chain);
    let chain = reopen(&n);
    for built in &boundaries {
        let slot = built.block.slot();
        let served = chain
            .light_client_bootstrap(&built.block.canonical_root())
            .unwrap();
        assert_eq!(
            served.is_some(),
            (keep_from..=finalized.epoch * 8).contains(&slot),
            "slot {slot} after the second restart"
        );
    }
}
