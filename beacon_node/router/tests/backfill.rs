//! Backfill between real networking instances on loopback: a node started from a checkpoint of
//! another's chain fetches every block before its anchor (with the custody columns of blob
//! blocks) down to genesis and then serves them by range; a peer serving a broken chain is
//! penalised and the backfill completes from an honest peer; a node restarted mid-backfill
//! resumes from its store's oldest-block record.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::sync::Arc;

use common::*;

use networking::rpc::{BlocksByRangeRequest, Request, Response, ResponseCode, ResponseItem};
use state_harness::BuiltBlock;
use types::{DataColumnSidecar, SignedBeaconBlock, Slot};

/// The chain's length: four epochs from genesis.
const SLOTS: Slot = 32;
/// The checkpoint the backfilling node starts from: the first slot of epoch 3.
const CHECKPOINT: Slot = 24;

/// The genesis and one block per slot `1..=SLOTS`; the blocks at `blob_slots` have one blob.
fn chain_from_genesis(
    spec: &types::ChainSpec,
    blob_slots: &[Slot],
) -> (BuiltBlock<E>, Vec<BlockAndColumns>) {
    let genesis = genesis_anchor(spec);
    let mut blocks: Vec<BlockAndColumns> = Vec::new();
    for slot in 1..=SLOTS {
        let parent = blocks.last().map_or(&genesis, |(b, _)| b);
        let blobs = u8::from(blob_slots.contains(&slot));
        blocks.push(next_block(spec, parent, slot, blobs));
    }
    (genesis, blocks)
}

/// The block at `slot` (one per slot after genesis).
fn at(blocks: &[BlockAndColumns], slot: Slot) -> &BlockAndColumns {
    &blocks[(slot - 1) as usize]
}

async fn serving_node(
    spec: &Arc<types::ChainSpec>,
    genesis: &BuiltBlock<E>,
    blocks: &[BlockAndColumns],
) -> Node {
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: genesis,
            blocks,
            current_slot: SLOTS,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    assert_eq!(a.chain.head().slot, SLOTS);
    assert_eq!(
        a.router
            .as_ref()
            .unwrap()
            .router()
            .earliest_available_slot(),
        0,
        "a node from genesis serves from genesis"
    );
    a
}

async fn checkpoint_node(
    spec: &Arc<types::ChainSpec>,
    blocks: &[BlockAndColumns],
    peers: Vec<networking::Multiaddr>,
    launch: Launch,
) -> Node {
    Node::launch(
        spec.clone(),
        NodeSpec {
            anchor: &at(blocks, CHECKPOINT).0,
            blocks: &[],
            current_slot: SLOTS,
            custody: None,
            static_peers: peers,
        },
        launch,
    )
    .await
}

/// The slot of the oldest block `node`'s store holds.
fn oldest_slot(node: &Node) -> Slot {
    node.chain.store().oldest_block().unwrap().unwrap().slot
}

/// Waits until the store's oldest block is at `slot` and the router has taken the batch that
/// moved it there in (its metrics and earliest available slot updated).
async fn wait_for_oldest_slot(node: &Node, slot: Slot) {
    let router = node.router.as_ref().unwrap().router();
    node.wait_until(&format!("the oldest stored block at slot {slot}"), || {
        let reached = oldest_slot(node) == slot && router.earliest_available_slot() == slot;
        async move { reached }
    })
    .await;
}

fn gauge(node: &Node, name: &str) -> f64 {
    node.registry
        .gather()
        .iter()
        .filter(|family| family.name() == name)
        .flat_map(|family| family.get_metric().to_vec())
        .map(|metric| metric.get_gauge().get_value())
        .sum()
}

/// `b` holds every block of the chain `chain` (genesis first) in `[from, below)` as the
/// canonical block of its slot, byte for byte as `a` holds it, and none before `from`.
fn assert_holds_the_chain(
    b: &Node,
    a: &Node,
    chain: &[Arc<SignedBeaconBlock<E>>],
    from: Slot,
    below: Slot,
) {
    let store = b.chain.store();
    for block in &chain[..below as usize] {
        let slot = block.slot();
        let root = block.canonical_root();
        if slot < from {
            assert_eq!(store.block_root_at_slot(slot).unwrap(), None, "slot {slot}");
            continue;
        }
        assert_eq!(
            store.block_root_at_slot(slot).unwrap(),
            Some(root),
            "slot {slot}"
        );
        let served = a.chain.store().get_block_ssz(&root).unwrap();
        assert!(served.is_some(), "the serving node holds slot {slot}");
        assert_eq!(
            store.get_block_ssz(&root).unwrap(),
            served,
            "block of slot {slot} byte for byte"
        );
        assert_eq!(store.get_block(&root).unwrap().as_ref(), Some(&**block));
    }
}

/// A peer serving `blocks` and `columns` by range, from slot `from` on (an error below it).
fn serve_chain(
    blocks: Vec<Arc<SignedBeaconBlock<E>>>,
    columns: Vec<Arc<DataColumnSidecar<E>>>,
    from: Slot,
) -> Server {
    Box::new(move |request| match request {
        Request::BlocksByRange(req) if req.start_slot < from => Some(Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "not held",
        )),
        Request::BlocksByRange(req) => Some(Response::success(
            blocks
                .iter()
                .filter(|b| b.slot() >= req.start_slot && b.slot() < req.start_slot + req.count)
                .map(|b| ResponseItem::Block(b.clone()))
                .collect(),
        )),
        Request::DataColumnsByRange(req) if req.start_slot < from => Some(Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "not held",
        )),
        Request::DataColumnsByRange(req) => Some(Response::success(
            columns
                .iter()
                .filter(|c| {
                    let DataColumnSidecar::Fulu(c) = &***c else {
                        panic!("the tests make Fulu sidecars");
                    };
                    let slot = c.signed_block_header.message.slot;
                    slot >= req.start_slot
                        && slot < req.start_slot + req.count
                        && req.columns.contains(&c.index)
                })
                .map(|c| ResponseItem::DataColumnSidecar(c.clone()))
                .collect(),
        )),
        _ => None,
    })
}

fn all_blocks(
    genesis: &BuiltBlock<E>,
    blocks: &[BlockAndColumns],
) -> Vec<Arc<SignedBeaconBlock<E>>> {
    std::iter::once(Arc::new(genesis.block.clone()))
        .chain(blocks.iter().map(|(b, _)| Arc::new(b.block.clone())))
        .collect()
}

fn all_columns(blocks: &[BlockAndColumns]) -> Vec<Arc<DataColumnSidecar<E>>> {
    blocks.iter().flat_map(|(_, c)| c.iter().cloned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_synced_node_backfills_to_genesis_and_serves_blocks_from_slot_one() {
    let spec = spec();
    let blob_slot = 5;
    let (genesis, blocks) = chain_from_genesis(&spec, &[blob_slot, 28]);
    let a = serving_node(&spec, &genesis, &blocks).await;
    let b = checkpoint_node(
        &spec,
        &blocks,
        vec![a.tcp_addr()],
        Launch {
            genesis_backfill: true,
            ..Launch::default()
        },
    )
    .await;
    assert_eq!(
        b.router
            .as_ref()
            .unwrap()
            .router()
            .earliest_available_slot(),
        CHECKPOINT,
        "before backfill the node serves from its anchor"
    );

    b.wait_for_head(a.chain.head().block_root).await;
    wait_for_oldest_slot(&b, 0).await;
    assert_holds_the_chain(&b, &a, &all_blocks(&genesis, &blocks), 0, CHECKPOINT);
    let blob_root = at(&blocks, blob_slot).0.block.canonical_root();
    assert_eq!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .len(),
        128,
        "the custody columns of a backfilled blob block were stored"
    );
    // Batches of 8 slots: [16, 24), [8, 16), [0, 8).
    assert_eq!(
        b.counter(
            "beacon_sync_backfill_batches_total",
            &[("outcome", "imported")]
        ),
        3.0
    );
    let router = b.router.as_ref().unwrap().router();
    assert_eq!(
        router::status::local_status(router).earliest_available_slot,
        0,
        "Status tells peers the node serves from genesis"
    );
    b.wait_until("no backfill slots left", || {
        let left = gauge(&b, "beacon_sync_backfill_slots_remaining");
        async move { left == 0.0 }
    })
    .await;

    // A peer asks for blocks by range from slot 1: served from the backfilled store.
    let status = router::status::local_status(router);
    let mut client = Client::start(&spec, SLOTS, status, vec![b.tcp_addr()]).await;
    let peer = client.connected().await;
    let response = client
        .request(
            peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: 1,
                count: SLOTS,
                step: 1,
            }),
        )
        .await;
    assert!(response.error.is_none(), "{:?}", response.error);
    let served: Vec<Slot> = response
        .items
        .iter()
        .map(|item| match item {
            ResponseItem::Block(block) => block.slot(),
            other => panic!("not a block: {other:?}"),
        })
        .collect();
    assert_eq!(served, (1..=SLOTS).collect::<Vec<_>>());
    for item in &response.items {
        let ResponseItem::Block(block) = item else {
            unreachable!("checked above")
        };
        assert_eq!(**block, at(&blocks, block.slot()).0.block);
    }
    a.stop().await;
    b.stop().await;
}

/// How a bad peer breaks the chain it serves.
#[derive(Debug, Clone, Copy)]
enum Broken {
    /// The block at slot 20 names another parent (so its root is not the one its child names).
    Parent,
    /// The block at slot 20 carries the signature of the block before it.
    Signature,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_serving_a_block_with_a_wrong_parent_is_penalised_and_backfill_completes() {
    broken_chain_then_an_honest_peer(Broken::Parent).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_serving_a_block_with_a_bad_signature_is_penalised_and_backfill_completes() {
    broken_chain_then_an_honest_peer(Broken::Signature).await;
}

async fn broken_chain_then_an_honest_peer(broken: Broken) {
    let spec = spec();
    let (genesis, blocks) = chain_from_genesis(&spec, &[]);
    let a = serving_node(&spec, &genesis, &blocks).await;

    let mut served = all_blocks(&genesis, &blocks);
    let mut bad = (*served[20]).clone();
    let SignedBeaconBlock::Fulu(inner) = &mut bad else {
        panic!("a Fulu chain")
    };
    match broken {
        Broken::Parent => inner.message.parent_root = served[18].canonical_root(),
        Broken::Signature => inner.signature = served[19].signature(),
    }
    served[20] = Arc::new(bad);
    let status = router::status::local_status(a.router.as_ref().unwrap().router());
    let bad_peer =
        Client::serving(&spec, SLOTS, status, vec![], serve_chain(served, vec![], 0)).await;
    let bad_peer_id = bad_peer.network.local_peer_id();

    let b = checkpoint_node(
        &spec,
        &blocks,
        vec![bad_peer.network.tcp_addr().unwrap()],
        Launch::default(),
    )
    .await;
    let outcome = match broken {
        Broken::Parent => "not_chained",
        Broken::Signature => "bad_signature",
    };
    b.wait_until(&format!("a backfill batch refused as {outcome}"), || {
        let n = b.counter(
            "beacon_sync_backfill_batches_total",
            &[("outcome", outcome)],
        );
        async move { n >= 1.0 }
    })
    .await;
    let score = b.network.peer_score(bad_peer_id).await;
    let banned = b.network.is_banned(bad_peer_id).await;
    assert!(score < 0.0 || banned, "penalised: score {score}");
    assert_eq!(
        oldest_slot(&b),
        CHECKPOINT,
        "nothing of the broken batch was stored"
    );
    assert_eq!(
        b.chain.store().block_root_at_slot(CHECKPOINT - 1).unwrap(),
        None
    );

    // An honest peer joins: the backfill completes from it.
    b.network.dial(a.tcp_addr());
    wait_for_oldest_slot(&b, 0).await;
    assert_holds_the_chain(&b, &a, &all_blocks(&genesis, &blocks), 0, CHECKPOINT);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_restarted_mid_backfill_resumes_from_its_oldest_block() {
    let spec = spec();
    let blob_slot = 3;
    let (genesis, blocks) = chain_from_genesis(&spec, &[blob_slot]);
    let a = serving_node(&spec, &genesis, &blocks).await;

    // A peer that holds the chain from slot 8 only: backfill stops there.
    let status = router::status::local_status(a.router.as_ref().unwrap().router());
    let partial = Client::serving(
        &spec,
        SLOTS,
        status,
        vec![],
        serve_chain(all_blocks(&genesis, &blocks), all_columns(&blocks), 8),
    )
    .await;
    let b = checkpoint_node(
        &spec,
        &blocks,
        vec![partial.network.tcp_addr().unwrap()],
        Launch::default(),
    )
    .await;
    wait_for_oldest_slot(&b, 8).await;
    assert_eq!(
        b.counter(
            "beacon_sync_backfill_batches_total",
            &[("outcome", "imported")]
        ),
        2.0
    );
    assert_holds_the_chain(&b, &a, &all_blocks(&genesis, &blocks), 8, CHECKPOINT);
    let dir = b.stop_keeping_store().await;
    partial.network.shutdown();

    // Reopened with the honest peer: only the batch below slot 8 is fetched.
    let b = checkpoint_node(
        &spec,
        &blocks,
        vec![a.tcp_addr()],
        Launch {
            reopen: Some(dir),
            ..Launch::default()
        },
    )
    .await;
    assert_eq!(oldest_slot(&b), 8, "the record survived the restart");
    assert_eq!(
        b.router
            .as_ref()
            .unwrap()
            .router()
            .earliest_available_slot(),
        8,
        "the reopened node serves from its oldest block"
    );
    wait_for_oldest_slot(&b, 0).await;
    assert_eq!(
        b.counter(
            "beacon_sync_backfill_batches_total",
            &[("outcome", "imported")]
        ),
        1.0,
        "resumed from the record, not from the anchor"
    );
    assert_holds_the_chain(&b, &a, &all_blocks(&genesis, &blocks), 0, CHECKPOINT);
    let blob_root = at(&blocks, blob_slot).0.block.canonical_root();
    assert_eq!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .len(),
        128
    );
    a.stop().await;
    b.stop().await;
}

/// Backfill past blocks a peer left out: a peer that holds the chain from slot `from` but
/// leaves out the blocks of the slots `withheld` (as if they were empty) serves the
/// checkpoint node alone until its oldest block is the one after them; then an honest node
/// joins, backfill completes to genesis and the honest node is not penalised. Returns how
/// many batches did not chain.
async fn backfill_past_withheld_blocks(
    spec: Arc<types::ChainSpec>,
    from: Slot,
    withheld: std::ops::RangeInclusive<Slot>,
) -> f64 {
    let (genesis, blocks) = chain_from_genesis(&spec, &[]);
    let a = serving_node(&spec, &genesis, &blocks).await;
    let mut status = router::status::local_status(a.router.as_ref().unwrap().router());
    status.earliest_available_slot = from;
    let served: Vec<Arc<SignedBeaconBlock<E>>> = all_blocks(&genesis, &blocks)
        .into_iter()
        .filter(|b| !withheld.contains(&b.slot()))
        .collect();
    let short = Client::serving(
        &spec,
        SLOTS,
        status,
        vec![],
        serve_chain(served, vec![], from),
    )
    .await;
    let b = checkpoint_node(
        &spec,
        &blocks,
        vec![short.network.tcp_addr().unwrap()],
        Launch::default(),
    )
    .await;
    wait_for_oldest_slot(&b, withheld.end() + 1).await;

    b.network.dial(a.tcp_addr());
    wait_for_oldest_slot(&b, 0).await;
    assert_holds_the_chain(&b, &a, &all_blocks(&genesis, &blocks), 0, CHECKPOINT);
    let not_chained = b.counter(
        "beacon_sync_backfill_batches_total",
        &[("outcome", "not_chained")],
    );
    let a_id = a.network.local_peer_id();
    let score = b.network.peer_score(a_id).await;
    assert!(score >= 0.0, "the honest peer was not penalised: {score}");
    assert!(!b.network.is_banned(a_id).await);
    a.stop().await;
    b.stop().await;
    short.network.shutdown();
    not_chained
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_left_short_by_the_previous_peer_is_fetched_again_without_blame() {
    // The short peer's batch [16, 24) ends at slot 19. The honest node's batch [8, 16) does
    // not reach the block the chain expects (slot 18): not its fault; fetched again up to
    // slot 19, it chains.
    let not_chained = backfill_past_withheld_blocks(spec(), 16, 16..=18).await;
    assert_eq!(not_chained, 1.0, "one short batch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_longer_than_one_request_left_by_a_peer_is_fetched_as_batches_of_its_own() {
    // One request carries at most 8 blocks here (a batch's length). The short peer's batches
    // [16, 24) and [8, 16) leave the oldest block at 19; the honest node's batch [0, 8) does
    // not reach the block the chain expects (slot 18) and cannot be stretched up to slot 19:
    // the gap [8, 19) is fetched as batches of its own, then the batch chains.
    let mut spec = (*spec()).clone();
    spec.max_request_blocks_deneb = 8;
    let not_chained = backfill_past_withheld_blocks(Arc::new(spec), 8, 8..=18).await;
    assert!(not_chained >= 1.0, "{not_chained}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_serving_a_backfilled_column_with_a_bad_proof_is_penalised() {
    let spec = spec();
    let blob_slot = 12;
    let (genesis, blocks) = chain_from_genesis(&spec, &[blob_slot]);
    let a = serving_node(&spec, &genesis, &blocks).await;

    // The honest chain with column 7 of the blob block bearing column 8's proof: its
    // inclusion proof holds, its KZG proof does not.
    let mut columns = all_columns(&blocks);
    let mut bad = (*columns[7]).clone();
    let DataColumnSidecar::Fulu(inner) = &mut bad else {
        panic!("the tests make Fulu sidecars");
    };
    let DataColumnSidecar::Fulu(donor) = &*columns[8] else {
        panic!("the tests make Fulu sidecars");
    };
    inner.kzg_proofs[0] = donor.kzg_proofs[0];
    columns[7] = Arc::new(bad);
    let status = router::status::local_status(a.router.as_ref().unwrap().router());
    let bad_peer = Client::serving(
        &spec,
        SLOTS,
        status,
        vec![],
        serve_chain(all_blocks(&genesis, &blocks), columns, 0),
    )
    .await;
    let bad_peer_id = bad_peer.network.local_peer_id();
    let b = checkpoint_node(
        &spec,
        &blocks,
        vec![bad_peer.network.tcp_addr().unwrap()],
        Launch::default(),
    )
    .await;
    b.wait_until("a backfill batch refused for its columns", || {
        let n = b.counter(
            "beacon_sync_backfill_batches_total",
            &[("outcome", "bad_columns")],
        );
        async move { n >= 1.0 }
    })
    .await;
    let score = b.network.peer_score(bad_peer_id).await;
    let banned = b.network.is_banned(bad_peer_id).await;
    assert!(score < 0.0 || banned, "penalised: score {score}");
    let blob_root = at(&blocks, blob_slot).0.block.canonical_root();
    assert!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .is_empty()
    );
    assert_eq!(b.chain.store().block_root_at_slot(blob_slot).unwrap(), None);

    b.network.dial(a.tcp_addr());
    wait_for_oldest_slot(&b, 0).await;
    assert_eq!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .len(),
        128,
        "the columns came from the honest peer"
    );
    a.stop().await;
    b.stop().await;
    bad_peer.network.shutdown();
}

/// A finalized checkpoint whose epoch starts with missed slots: the checkpoint block is the last
/// one before them (slot 21, slots 22 to 24 empty), handed over with its post-state. The node
/// anchors at the epoch-3 checkpoint state, range-syncs to the head and backfills to genesis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_before_missed_slots_syncs_to_the_head_and_backfills_to_genesis() {
    let spec = spec();
    let genesis = genesis_anchor(&spec);
    let mut blocks: Vec<BlockAndColumns> = Vec::new();
    for slot in (1..=SLOTS).filter(|s| !(22..=24).contains(s)) {
        let parent = blocks.last().map_or(&genesis, |(b, _)| b);
        blocks.push(next_block(&spec, parent, slot, u8::from(slot == 26)));
    }
    let a = serving_node(&spec, &genesis, &blocks).await;
    let checkpoint = blocks.iter().find(|(b, _)| b.block.slot() == 21).unwrap();
    let b = Node::launch(
        spec.clone(),
        NodeSpec {
            anchor: &checkpoint.0,
            blocks: &[],
            current_slot: SLOTS,
            custody: None,
            static_peers: vec![a.tcp_addr()],
        },
        Launch {
            genesis_backfill: true,
            ..Launch::default()
        },
    )
    .await;
    let head = b.chain.head();
    assert_eq!(head.finalized_checkpoint.epoch, 3, "the checkpoint's epoch");
    assert_eq!(
        head.finalized_checkpoint.root,
        checkpoint.0.block.canonical_root()
    );

    b.wait_for_head(a.chain.head().block_root).await;
    wait_for_oldest_slot(&b, 0).await;
    let store = b.chain.store();
    // Backfilled and anchor blocks are canonical by slot; every block is stored.
    for block in all_blocks(&genesis, &blocks) {
        let slot = block.slot();
        if slot <= 21 {
            assert_eq!(
                store.block_root_at_slot(slot).unwrap(),
                Some(block.canonical_root()),
                "slot {slot}"
            );
        }
        assert_eq!(
            store.get_block(&block.canonical_root()).unwrap().as_ref(),
            Some(&*block)
        );
    }
    for slot in 22..=24 {
        assert_eq!(store.block_root_at_slot(slot).unwrap(), None, "slot {slot}");
    }
    let blob_root = blocks
        .iter()
        .find(|(b, _)| b.block.slot() == 26)
        .unwrap()
        .0
        .block
        .canonical_root();
    assert_eq!(store.data_column_indices(&blob_root).unwrap().len(), 128);
    a.stop().await;
    b.stop().await;
}
