//! The router between real networking instances on loopback and chains from an interop
//! genesis: range sync to a peer's head (with a block's columns by range), gossip blocks
//! imported and invalid ones rejected with the sender penalised, req/resp served from the store,
//! and a peer of another network sent Goodbye.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::sync::Arc;

use common::*;

use networking::rpc::{
    BlocksByRangeRequest, DataColumnsByRangeRequest, Request, ResponseCode, ResponseItem,
    StatusMessage,
};
use networking::{GossipKind, GossipTopic, NetworkEvent, PubsubMessage};
use router::SyncState;
use types::fulu::DataColumnsByRootIdentifier;
use types::{EthSpec, ForkDigest, Root, SignedBeaconBlock};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_at_the_anchor_range_syncs_to_its_peers_head_with_columns() {
    let spec = spec();
    let anchor = anchor(&spec);
    let count = 28;
    let blob_slot = ANCHOR_SLOT + 4;
    let blocks = build_chain(&spec, &anchor, count, Some(blob_slot));
    let current = ANCHOR_SLOT + count;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let head = a.chain.head();
    assert_eq!(head.slot, current);
    assert!(
        head.finalized_checkpoint.epoch > ANCHOR_SLOT / E::slots_per_epoch(),
        "the served chain finalized past the anchor (some blocks are served from cold storage)"
    );
    let started = std::time::Instant::now();
    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: current,
            custody: None,
            static_peers: vec![a.tcp_addr()],
        },
    )
    .await;

    b.wait_for_head(head.block_root).await;
    let elapsed = started.elapsed();
    // Reported, not asserted: the speed of the machine is not the test's subject.
    eprintln!(
        "range sync: {count} blocks in {elapsed:.2?} ({:.1} blocks/s, node start included)",
        count as f64 / elapsed.as_secs_f64()
    );
    b.wait_for_sync_state("synced", |s| *s == SyncState::Synced)
        .await;
    let b_head = b.chain.head();
    assert_eq!(b_head.slot, head.slot);
    assert_eq!(b_head.finalized_checkpoint, head.finalized_checkpoint);
    assert_eq!(b_head.justified_checkpoint, head.justified_checkpoint);
    assert_eq!(
        b.counter("beacon_sync_blocks_imported_total", &[]),
        count as f64,
        "every block came by range sync"
    );
    // Batches of 8 slots: 4 batches for 28 slots.
    assert_eq!(
        b.counter("beacon_sync_batches_total", &[("result", "imported")]),
        4.0
    );
    let blob_root = blocks[(blob_slot - ANCHOR_SLOT - 1) as usize]
        .0
        .block
        .canonical_root();
    assert_eq!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .len(),
        128,
        "the blob block's custody columns came by range and were stored"
    );
    assert!(
        a.counter(
            "beacon_rpc_requests_served_total",
            &[
                ("protocol", "data_column_sidecars_by_range"),
                ("result", "success")
            ]
        ) >= 4.0
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gossip_block_is_imported_and_an_invalid_one_rejected_with_the_sender_penalised() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 4, None);
    let slot = ANCHOR_SLOT + 5;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: slot,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: slot,
            custody: None,
            static_peers: vec![a.tcp_addr()],
        },
    )
    .await;
    wait_for_mesh(&a, GossipKind::BeaconBlock, slot, "b in a's block mesh").await;

    let (next, _) = next_block(&spec, &blocks[3].0, slot, 0);
    // The same block with another block's (valid-looking) signature: REJECT.
    let mut forged = next.block.clone();
    let SignedBeaconBlock::Fulu(inner) = &mut forged else {
        panic!("a Fulu block");
    };
    inner.signature = blocks[0].0.block.signature();
    a.network
        .publish(PubsubMessage::BeaconBlock(Arc::new(forged)));
    let reject = [("topic", "beacon_block"), ("verdict", "reject")];
    b.wait_until("the forged block's reject", || {
        let n = b.counter("beacon_gossip_messages_total", &reject);
        async move { n >= 1.0 }
    })
    .await;
    let a_peer = a.network.local_peer_id();
    b.wait_until("a's score to drop", || {
        let network = b.network.clone();
        async move { network.peer_score(a_peer).await < 0.0 }
    })
    .await;
    // The forged copy has the genuine block's message, so its root: it was not imported.
    assert_ne!(b.chain.head().block_root, next.block.canonical_root());

    a.network
        .publish(PubsubMessage::BeaconBlock(Arc::new(next.block.clone())));
    b.wait_for_head(next.block.canonical_root()).await;
    assert_eq!(
        b.counter(
            "beacon_gossip_messages_total",
            &[("topic", "beacon_block"), ("verdict", "accept")]
        ),
        1.0
    );
    assert_eq!(b.counter("beacon_gossip_messages_total", &reject), 1.0);

    // A block whose payload b's execution client finds INVALID: the import's transition runs
    // while newPayload is asked, and the verdict keeps the block out of fork choice.
    let (bad, _) = next_block(&spec, &next, slot + 1, 0);
    let bad_root = bad.block.canonical_root();
    let SignedBeaconBlock::Fulu(inner) = &bad.block else {
        panic!("a Fulu block");
    };
    b.harness.mock.set_payload_status(
        inner.message.body.execution_payload.block_hash,
        mock_execution_layer::MockPayloadStatus::Invalid {
            latest_valid_hash: None,
        },
    );
    a.clock.set_ms(time_ms(&spec, slot + 1));
    b.clock.set_ms(time_ms(&spec, slot + 1));
    a.network
        .publish(PubsubMessage::BeaconBlock(Arc::new(bad.block.clone())));
    b.wait_until(
        "the block with an invalid payload recorded as failed",
        || {
            let failed = b.chain.unimported_block(&bad_root)
                == Some(beacon_chain::UnimportedBlock::Failed {
                    slot: slot + 1,
                    payload: beacon_chain::ExecutionStatus::Invalidated,
                });
            async move { failed }
        },
    )
    .await;
    assert_eq!(b.chain.head().block_root, next.block.canonical_root());
    assert_eq!(
        b.chain.payload_status(&bad_root),
        beacon_chain::ExecutionStatus::Invalidated
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_blocks_and_custody_columns_are_served_from_the_store() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blob_slot = ANCHOR_SLOT + 2;
    let blocks = build_chain(&spec, &anchor, 6, Some(blob_slot));
    let current = ANCHOR_SLOT + 6;
    let custody: std::collections::BTreeSet<u64> = (0..64).collect();
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: current,
            custody: Some(custody),
            static_peers: vec![],
        },
    )
    .await;
    let head = a.chain.head();
    let digest = a
        .network
        .fork_context()
        .digest_at_epoch(current / E::slots_per_epoch());
    let ours = StatusMessage {
        fork_digest: digest,
        finalized_root: head.finalized_checkpoint.root,
        finalized_epoch: head.finalized_checkpoint.epoch,
        head_root: anchor.block.canonical_root(),
        head_slot: ANCHOR_SLOT,
        earliest_available_slot: ANCHOR_SLOT,
    };
    let mut client = Client::start(&spec, current, ours, vec![a.tcp_addr()]).await;
    let a_peer = client.connected().await;

    let response = client.request(a_peer, Request::Status(ours)).await;
    let expected = StatusMessage {
        fork_digest: digest,
        finalized_root: head.finalized_checkpoint.root,
        finalized_epoch: head.finalized_checkpoint.epoch,
        head_root: head.block_root,
        head_slot: current,
        // The store holds no genesis block: the anchor is the earliest served.
        earliest_available_slot: ANCHOR_SLOT,
    };
    assert_eq!(response.items, vec![ResponseItem::Status(expected)]);

    let response = client
        .request(
            a_peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: ANCHOR_SLOT,
                count: 64,
                step: 1,
            }),
        )
        .await;
    let mut served = vec![ResponseItem::Block(Arc::new(anchor.block.clone()))];
    served.extend(
        blocks
            .iter()
            .map(|(b, _)| ResponseItem::Block(Arc::new(b.block.clone()))),
    );
    assert_eq!(
        response.items, served,
        "the anchor, then every block, in slot order"
    );

    let response = client
        .request(
            a_peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: ANCHOR_SLOT + 1,
                count: 0,
                step: 1,
            }),
        )
        .await;
    assert_eq!(
        response.error.map(|e| e.code),
        Some(ResponseCode::INVALID_REQUEST)
    );

    let third = blocks[2].0.block.clone();
    let response = client
        .request(
            a_peer,
            Request::BlocksByRoot(vec![Root::repeat_byte(0xee), third.canonical_root()]),
        )
        .await;
    assert_eq!(response.items, vec![ResponseItem::Block(Arc::new(third))]);

    let (blob_block, columns) = &blocks[(blob_slot - ANCHOR_SLOT - 1) as usize];
    let blob_root = blob_block.block.canonical_root();
    let ids = vec![DataColumnsByRootIdentifier::<E> {
        block_root: blob_root,
        columns: vec![1, 3, 100].try_into().unwrap(),
    }];
    let response = client
        .request(a_peer, Request::DataColumnsByRoot(ids))
        .await;
    assert_eq!(
        response.items,
        vec![
            ResponseItem::DataColumnSidecar(columns[1].clone()),
            ResponseItem::DataColumnSidecar(columns[3].clone()),
        ],
        "column 100 is not in the node's custody"
    );

    let response = client
        .request(
            a_peer,
            Request::DataColumnsByRange(DataColumnsByRangeRequest {
                start_slot: ANCHOR_SLOT + 1,
                count: 6,
                columns: vec![70, 5],
            }),
        )
        .await;
    assert_eq!(
        response.items,
        vec![ResponseItem::DataColumnSidecar(columns[5].clone())]
    );

    for (protocol, n) in [
        ("status", 1.0),
        ("beacon_blocks_by_range", 1.0),
        ("beacon_blocks_by_root", 1.0),
        ("data_column_sidecars_by_root", 1.0),
        ("data_column_sidecars_by_range", 1.0),
    ] {
        assert_eq!(
            a.counter(
                "beacon_rpc_requests_served_total",
                &[("protocol", protocol), ("result", "success")]
            ),
            n,
            "{protocol}"
        );
    }
    assert_eq!(
        a.counter(
            "beacon_rpc_requests_served_total",
            &[
                ("protocol", "beacon_blocks_by_range"),
                ("result", "invalid_request")
            ]
        ),
        1.0
    );

    // The router follows the global topics and its custody columns' subnets.
    let topics = a.network.subscribed_topics().await;
    let column_subnets: std::collections::BTreeSet<u64> = topics
        .iter()
        .filter_map(|t| match t.kind {
            GossipKind::DataColumnSidecar(subnet) => Some(subnet),
            _ => None,
        })
        .collect();
    let expected: std::collections::BTreeSet<u64> = (0..64)
        .map(|c| types::subnets::compute_subnet_for_data_column_sidecar(&spec, c).unwrap())
        .collect();
    assert_eq!(column_subnets, expected);
    for kind in [
        GossipKind::BeaconBlock,
        GossipKind::VoluntaryExit,
        GossipKind::SyncCommitteeContributionAndProof,
        GossipKind::BlsToExecutionChange,
    ] {
        assert!(topics.iter().any(|t| t.kind == kind), "{kind}");
    }
    // The light-client server is on by default: its topics are followed.
    for kind in [
        GossipKind::LightClientFinalityUpdate,
        GossipKind::LightClientOptimisticUpdate,
    ] {
        assert!(topics.iter().any(|t| t.kind == kind), "{kind}");
    }
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_of_another_network_is_sent_goodbye() {
    goodbye_for(|_| StatusMessage {
        fork_digest: ForkDigest::from([9, 9, 9, 9]),
        finalized_root: Root::ZERO,
        finalized_epoch: 0,
        head_root: Root::ZERO,
        head_slot: 0,
        earliest_available_slot: 0,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_finalized_on_another_chain_is_sent_goodbye() {
    // Our digest, but another block finalized at our finalized epoch.
    goodbye_for(|ours| StatusMessage {
        finalized_root: Root::repeat_byte(0xee),
        ..ours
    })
    .await;
}

/// A peer answering our Status with `status(ours)` is sent Goodbye(irrelevant network).
async fn goodbye_for(status: impl FnOnce(StatusMessage) -> StatusMessage) {
    let spec = spec();
    let anchor = anchor(&spec);
    let current = ANCHOR_SLOT + 1;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let ours = router::status::local_status(a.router.as_ref().unwrap().router());
    assert!(
        ours.finalized_epoch > 0,
        "the anchor's checkpoint is finalized"
    );
    let other = status(ours);
    let mut client = Client::start(&spec, current, other, vec![a.tcp_addr()]).await;
    let reason = client
        .wait_for("a goodbye", |event| match event {
            NetworkEvent::Goodbye { reason, .. } => Some(*reason),
            _ => None,
        })
        .await;
    assert_eq!(reason, router::GOODBYE_IRRELEVANT_NETWORK);
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_serving_a_bad_column_is_penalised_and_the_batch_fetched_from_another() {
    bad_columns_then_an_honest_peer(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_without_our_custody_columns_is_passed_over_unpenalised() {
    bad_columns_then_an_honest_peer(false).await;
}

/// A peer serving the honest chain's blocks with, if `forged`, column 7 bearing column 8's
/// proof (its fault), else no columns at all (not its fault: it custodies 4 groups, not ours):
/// the batch is refused, the peer penalised only in the first case; an honest peer joins and
/// the batch comes from it.
async fn bad_columns_then_an_honest_peer(forged: bool) {
    let spec = spec();
    let anchor = anchor(&spec);
    let count = 12;
    let blob_slot = ANCHOR_SLOT + 3;
    let blocks = build_chain(&spec, &anchor, count, Some(blob_slot));
    let current = ANCHOR_SLOT + count;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let head = a.chain.head();
    let (blob_block, columns) = &blocks[(blob_slot - ANCHOR_SLOT - 1) as usize];
    let blob_root = blob_block.block.canonical_root();

    // The bad peer has the honest chain; forged, column 7 carries column 8's proof: the
    // inclusion proof holds (proofs are not part of it), the KZG check does not.
    let served_blocks: Vec<Arc<SignedBeaconBlock<E>>> = blocks
        .iter()
        .map(|(b, _)| Arc::new(b.block.clone()))
        .collect();
    let bad_columns = if forged {
        let mut bad_columns = columns.clone();
        let mut bad = (*bad_columns[7]).clone();
        let types::DataColumnSidecar::Fulu(inner) = &mut bad else {
            panic!("the tests make Fulu sidecars");
        };
        let types::DataColumnSidecar::Fulu(donor) = &*columns[8] else {
            panic!("the tests make Fulu sidecars");
        };
        inner.kzg_proofs[0] = donor.kzg_proofs[0];
        bad_columns[7] = Arc::new(bad);
        bad_columns
    } else {
        Vec::new()
    };
    let serve: Server = Box::new(move |request| match request {
        Request::BlocksByRange(req) => Some(networking::rpc::Response::success(
            served_blocks
                .iter()
                .filter(|b| b.slot() >= req.start_slot && b.slot() < req.start_slot + req.count)
                .map(|b| ResponseItem::Block(b.clone()))
                .collect(),
        )),
        Request::DataColumnsByRange(req) => Some(networking::rpc::Response::success(
            bad_columns
                .iter()
                .filter(|c| {
                    let types::DataColumnSidecar::Fulu(c) = &***c else {
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
    });
    let status = router::status::local_status(a.router.as_ref().unwrap().router());
    let bad_peer = Client::serving(&spec, current, status, vec![], serve).await;
    let bad_peer_id = bad_peer.network.local_peer_id();

    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: current,
            custody: None,
            static_peers: vec![bad_peer.network.tcp_addr().unwrap()],
        },
    )
    .await;
    b.wait_until("a batch refused for its columns", || {
        let n = b.counter("beacon_sync_batches_total", &[("result", "bad_columns")]);
        async move { n >= 1.0 }
    })
    .await;
    let score = b.network.peer_score(bad_peer_id).await;
    if forged {
        assert!(score < 0.0, "penalised: {score}");
    } else {
        assert!(
            score >= 0.0,
            "not penalised for columns it does not custody: {score} (the nodes' logs: target/test-logs/router-tests/router.log)"
        );
    }
    assert!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .is_empty(),
        "nothing of the bad batch's blob block was stored"
    );

    // An honest peer joins: the batch is fetched from it and the chain completes.
    b.network.dial(a.tcp_addr());
    b.wait_for_head(head.block_root).await;
    assert_eq!(
        b.chain
            .store()
            .data_column_indices(&blob_root)
            .unwrap()
            .len(),
        128
    );
    assert!(
        a.counter(
            "beacon_rpc_requests_served_total",
            &[
                ("protocol", "data_column_sidecars_by_range"),
                ("result", "success")
            ]
        ) >= 1.0,
        "the batch came from the honest peer"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gossip_block_of_an_unknown_parent_is_looked_up_with_its_columns_and_imported() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 4, None);
    let current = ANCHOR_SLOT + 6;
    let start = |static_peers| {
        Node::start(
            spec.clone(),
            NodeSpec {
                anchor: &anchor,
                blocks: &blocks,
                current_slot: current,
                custody: None,
                static_peers,
            },
        )
    };
    let a = start(vec![]).await;
    let b = start(vec![a.tcp_addr()]).await;
    let digest = a
        .network
        .fork_context()
        .digest_at_epoch(current / E::slots_per_epoch());
    let topic = GossipTopic::new(GossipKind::BeaconBlock, digest);
    a.wait_until("b in a's block mesh", || {
        let network = a.network.clone();
        async move { !network.mesh_peers(topic).await.is_empty() }
    })
    .await;

    wait_for_status_exchange(&a, &b).await;
    // a learns two blocks, the first with a blob, and gossips only the second.
    let (parent, parent_columns) = next_block(&spec, &blocks[3].0, ANCHOR_SLOT + 5, 1);
    let (child, _) = next_block(&spec, &parent, ANCHOR_SLOT + 6, 0);
    let columns: Vec<_> = parent_columns.iter().map(|c| (**c).clone()).collect();
    a.chain
        .import_block(
            Arc::new(parent.block.clone()),
            &columns,
            &state_processing::per_block::AlwaysValid,
            beacon_chain::ExecutionStatus::Valid,
        )
        .unwrap();
    a.chain
        .import_block(
            Arc::new(child.block.clone()),
            &[],
            &state_processing::per_block::AlwaysValid,
            beacon_chain::ExecutionStatus::Valid,
        )
        .unwrap();
    a.network
        .publish(PubsubMessage::BeaconBlock(Arc::new(child.block.clone())));

    b.wait_for_head(child.block.canonical_root()).await;
    // The lookup's outcome is counted once its segment task reports back.
    b.wait_until("the lookup's outcome", || {
        let n = b.counter("beacon_sync_lookups_total", &[]);
        async move { n >= 1.0 }
    })
    .await;
    assert_eq!(
        b.counter("beacon_sync_lookups_total", &[("result", "imported")]),
        1.0
    );
    assert_eq!(
        b.counter("beacon_sync_blocks_imported_total", &[]),
        0.0,
        "not by range sync"
    );
    assert_eq!(
        b.counter(
            "beacon_gossip_messages_total",
            &[("topic", "beacon_block"), ("verdict", "ignore")]
        ),
        1.0,
        "the child was ignored on gossip (unknown parent), then imported by the lookup"
    );
    assert_eq!(
        b.chain
            .store()
            .data_column_indices(&parent.block.canonical_root())
            .unwrap()
            .len(),
        128
    );
    a.stop().await;
    b.stop().await;
}

/// A gossip sink counting the accepted attestations it is told of.
#[derive(Default)]
struct CountingSink {
    attestations: std::sync::atomic::AtomicUsize,
}

impl router::GossipSink<E> for CountingSink {
    fn accepted(&self, message: router::AcceptedGossip<'_, E>) {
        if let router::AcceptedGossip::SingleAttestation(_) = message {
            self.attestations
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Waits until each node has answered the other's Status (their Status handshake is over, so
/// a block one of them imports later does not show in a Status: lookups, not range sync, must
/// fetch it).
/// Waits until `a` has a peer in its mesh of `kind` at `slot`'s fork digest.
async fn wait_for_mesh(a: &Node, kind: GossipKind, slot: types::Slot, what: &str) {
    let digest = a
        .network
        .fork_context()
        .digest_at_epoch(slot / E::slots_per_epoch());
    let topic = GossipTopic::new(kind, digest);
    a.wait_until(what, || {
        let network = a.network.clone();
        async move { !network.mesh_peers(topic).await.is_empty() }
    })
    .await;
}

/// Two nodes on `blocks` with the clock at `slot`, `b` dialing `a`.
async fn connected_pair(
    spec: &Arc<types::ChainSpec>,
    anchor: &state_harness::BuiltBlock<E>,
    blocks: &[BlockAndColumns],
    slot: types::Slot,
) -> (Node, Node) {
    let start = |static_peers| {
        Node::start(
            spec.clone(),
            NodeSpec {
                anchor,
                blocks,
                current_slot: slot,
                custody: None,
                static_peers,
            },
        )
    };
    let a = start(vec![]).await;
    let b = start(vec![a.tcp_addr()]).await;
    (a, b)
}

async fn wait_for_status_exchange(a: &Node, b: &Node) {
    for (node, other) in [(a, "b"), (b, "a")] {
        node.wait_until(&format!("{other}'s status answered"), || {
            let n = node.counter(
                "beacon_rpc_requests_served_total",
                &[("protocol", "status"), ("result", "success")],
            );
            async move { n >= 1.0 }
        })
        .await;
    }
}

/// Slot `slot`'s first committee in `node`'s head state, voting for `block_root` with target
/// `target_root` (epoch of `slot`): the subnet, the committee, and a signer of
/// `SingleAttestation`s (`attester`'s vote signed by `signer`'s key).
fn committee_votes(
    node: &Node,
    slot: types::Slot,
    block_root: Root,
    target_root: Root,
) -> (
    u64,
    Vec<u64>,
    impl Fn(u64, u64) -> types::electra::SingleAttestation + use<>,
) {
    use types::electra::{AttestationData, SingleAttestation};
    use types::phase0::Checkpoint;
    use types::signing::{DOMAIN_BEACON_ATTESTER, compute_domain, compute_signing_root};

    let spec = node.spec.clone();
    let epoch = slot / E::slots_per_epoch();
    let mut state = node.chain.head().state.clone();
    let (committee, committees_per_slot) = {
        let (view, caches) = state.view_mut().unwrap();
        let committees = caches.committees(&view.as_ref(), epoch).unwrap();
        (
            committees.get_beacon_committee(slot, 0).unwrap().to_vec(),
            committees.committees_per_slot(),
        )
    };
    let data = AttestationData {
        slot,
        index: 0,
        beacon_block_root: block_root,
        source: state.state.current_justified_checkpoint().clone(),
        target: Checkpoint {
            epoch,
            root: target_root,
        },
    };
    let domain = compute_domain(
        DOMAIN_BEACON_ATTESTER,
        spec.compute_fork_version(epoch),
        node.chain.genesis_validators_root(),
    );
    let signing_root = compute_signing_root(&data, domain);
    let subnet =
        types::subnets::compute_subnet_for_attestation::<E>(&spec, committees_per_slot, slot, 0)
            .unwrap();
    let sign = move |attester: u64, signer: u64| {
        let signature =
            state_harness::interop_secret_key(signer as usize).sign(signing_root.as_slice());
        SingleAttestation {
            committee_index: 0,
            attester_index: attester,
            data: data.clone(),
            signature: types::BLSSignature::from(signature.serialize()),
        }
    };
    (subnet, committee, sign)
}

/// Subscribes both nodes to attestation subnet `subnet` and waits for `b` in `a`'s mesh.
async fn join_attestation_subnet(a: &Node, b: &Node, subnet: u64, epoch: types::Epoch) {
    let kind = GossipKind::Attestation(subnet);
    a.network.subscribe(kind);
    b.network.subscribe(kind);
    let digest = a.network.fork_context().digest_at_epoch(epoch);
    let topic = GossipTopic::new(kind, digest);
    a.wait_until("b in a's attestation-subnet mesh", || {
        let network = a.network.clone();
        async move { !network.mesh_peers(topic).await.is_empty() }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_attestations_are_batch_verified_pooled_and_a_bad_signature_rejected() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 4, None);
    let slot = ANCHOR_SLOT + 4;
    let (a, b) = connected_pair(&spec, &anchor, &blocks, slot).await;

    // Slot 20's first committee votes for the head (slot 20), target the anchor (epoch 2).
    let epoch = slot / E::slots_per_epoch();
    let (subnet, committee, attestation) = committee_votes(
        &b,
        slot,
        b.chain.head().block_root,
        anchor.block.canonical_root(),
    );
    assert!(committee.len() >= 2);
    let sink = Arc::new(CountingSink::default());
    assert!(b.router.as_ref().unwrap().set_gossip_sink(sink.clone()));
    assert!(
        !b.router.as_ref().unwrap().set_gossip_sink(sink.clone()),
        "set once"
    );
    join_attestation_subnet(&a, &b, subnet, epoch).await;

    // The first member's vote signed by the second: REJECT, the sender penalised.
    a.network.publish(PubsubMessage::Attestation(
        subnet,
        Box::new(attestation(committee[0], committee[1])),
    ));
    let reject = [("topic", "beacon_attestation"), ("verdict", "reject")];
    b.wait_until("the forged attestation's reject", || {
        let n = b.counter("beacon_gossip_messages_total", &reject);
        async move { n >= 1.0 }
    })
    .await;
    assert!(b.network.peer_score(a.network.local_peer_id()).await < 0.0);

    for &member in &committee {
        a.network.publish(PubsubMessage::Attestation(
            subnet,
            Box::new(attestation(member, member)),
        ));
    }
    let accept = [("topic", "beacon_attestation"), ("verdict", "accept")];
    let expected = committee.len() as f64;
    b.wait_until("every genuine attestation accepted", || {
        let n = b.counter("beacon_gossip_messages_total", &accept);
        async move { n >= expected }
    })
    .await;
    assert_eq!(b.counter("beacon_gossip_messages_total", &accept), expected);
    assert_eq!(b.counter("beacon_gossip_messages_total", &reject), 1.0);
    let counts = b.pool.counts();
    assert_eq!(
        counts.attestation_data, 1,
        "one vote, aggregated in the pool"
    );
    assert_eq!(
        sink.attestations.load(std::sync::atomic::Ordering::Relaxed),
        committee.len(),
        "the sink heard of each accepted attestation, not of the forged one"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attestation_for_an_unknown_block_has_the_block_looked_up() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 4, None);
    let slot = ANCHOR_SLOT + 5;
    let (a, b) = connected_pair(&spec, &anchor, &blocks, slot).await;

    wait_for_status_exchange(&a, &b).await;
    // a imports the slot's block; b never hears of it but for the votes.
    let (next, _) = next_block(&spec, &blocks[3].0, slot, 0);
    let root = next.block.canonical_root();
    a.chain
        .import_block(
            Arc::new(next.block.clone()),
            &[],
            &state_processing::per_block::AlwaysValid,
            beacon_chain::ExecutionStatus::Valid,
        )
        .unwrap();
    let (subnet, committee, attestation) =
        committee_votes(&b, slot, root, anchor.block.canonical_root());
    join_attestation_subnet(&a, &b, subnet, slot / E::slots_per_epoch()).await;
    a.network.publish(PubsubMessage::Attestation(
        subnet,
        Box::new(attestation(committee[0], committee[0])),
    ));

    b.wait_for_head(root).await;
    b.wait_until("the lookup's outcome", || {
        let n = b.counter("beacon_sync_lookups_total", &[]);
        async move { n >= 1.0 }
    })
    .await;
    assert_eq!(
        b.counter("beacon_sync_lookups_total", &[("result", "imported")]),
        1.0
    );
    assert_eq!(
        b.counter(
            "beacon_gossip_messages_total",
            &[("topic", "beacon_attestation"), ("verdict", "ignore")]
        ),
        1.0,
        "the vote for an unknown block is ignored, not rejected"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_the_processor_drops_is_ignored_counted_and_answered() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 4, None);
    let slot = ANCHOR_SLOT + 5;
    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: slot,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let status = router::status::local_status(b.router.as_ref().unwrap().router());
    let mut client = Client::start(&spec, slot, status, vec![b.tcp_addr()]).await;
    let b_peer = client.connected().await;
    let digest = b
        .network
        .fork_context()
        .digest_at_epoch(slot / E::slots_per_epoch());
    let topic = GossipTopic::new(GossipKind::BeaconBlock, digest);
    b.wait_until("b in the client's block mesh", || {
        let network = client.network.clone();
        async move { !network.mesh_peers(topic).await.is_empty() }
    })
    .await;

    // The processor stops taking work: everything submitted from now on is dropped.
    let processor = b.router.as_ref().unwrap().processor().clone();
    tokio::task::spawn_blocking(move || {
        processor.shutdown(beacon_processor::ShutdownMode::DropQueued)
    })
    .await
    .unwrap();

    let (next, _) = next_block(&spec, &blocks[3].0, slot, 0);
    client
        .network
        .publish(PubsubMessage::BeaconBlock(Arc::new(next.block.clone())));
    b.wait_until("the dropped block counted", || {
        let n = b.counter(
            "beacon_gossip_work_dropped_total",
            &[("topic", "beacon_block")],
        );
        async move { n >= 1.0 }
    })
    .await;
    assert_eq!(
        b.counter(
            "beacon_gossip_messages_total",
            &[("topic", "beacon_block"), ("verdict", "ignore")]
        ),
        1.0,
        "the dropped message got its IGNORE"
    );
    assert_ne!(b.chain.head().block_root, next.block.canonical_root());

    // A request the processor drops is answered, not left to time out.
    let response = client.request(b_peer, Request::Status(status)).await;
    assert_eq!(
        response.error.map(|e| e.code),
        Some(ResponseCode::SERVER_ERROR)
    );
    b.stop().await;
}

/// A node whose head is more than an epoch behind the clock (syncing) cannot judge a message
/// validated against its head state: an exit of a validator its registry does not have may be
/// one that joined since. The exit is IGNOREd, not REJECTed, and its sender keeps its score (a
/// syncing node penalised and banned its honest peers for messages newer than its head).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_behind_the_clock_ignores_what_its_head_state_cannot_judge() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 4, None);
    // The head is at ANCHOR_SLOT + 4; the clock two epochs later.
    let slot = ANCHOR_SLOT + 5 + 2 * E::slots_per_epoch();
    let (a, b) = connected_pair(&spec, &anchor, &blocks, slot).await;
    assert!(b.chain.head_is_behind(b.chain.now_ms()));
    wait_for_mesh(&a, GossipKind::VoluntaryExit, slot, "b in a's exit mesh").await;

    // A validator index past the registry: `UnknownValidator`, a REJECT for a head in time.
    let exit = types::phase0::SignedVoluntaryExit {
        message: types::phase0::VoluntaryExit {
            epoch: 0,
            validator_index: 1_000_000,
        },
        signature: types::BLSSignature::from([0u8; 96]),
    };
    a.network
        .publish(PubsubMessage::VoluntaryExit(Box::new(exit)));
    let ignore = [("topic", "voluntary_exit"), ("verdict", "ignore")];
    b.wait_until("the exit's verdict", || {
        let n = b.counter("beacon_gossip_messages_total", &ignore);
        async move { n >= 1.0 }
    })
    .await;
    assert_eq!(
        b.counter(
            "beacon_gossip_messages_total",
            &[("topic", "voluntary_exit"), ("verdict", "reject")]
        ),
        0.0
    );
    let a_peer = a.network.local_peer_id();
    assert!(b.network.peer_score(a_peer).await >= 0.0);
    a.stop().await;
    b.stop().await;
}
