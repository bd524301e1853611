//! Range sync while our own store fails: the batches fail as ours (`internal`), the peer that
//! served them is not penalised, and once the store writes again the node syncs to the peer's
//! head.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_store_failing_during_range_sync_leaves_the_serving_peer_unpenalised() {
    let spec = spec();
    let anchor = anchor(&spec);
    let count = 12;
    let blocks = build_chain(&spec, &anchor, count, Some(ANCHOR_SLOT + 2));
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
    let b = Node::start(
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

    // Our disk fails before the first batch arrives: every import's store write fails.
    b.chain.store().refuse_writes(true);
    b.network.dial(a.tcp_addr());
    b.wait_until("batches failed on our store", || {
        let n = b.counter("beacon_sync_batches_total", &[("result", "internal")]);
        async move { n >= 2.0 }
    })
    .await;
    let a_peer = a.network.local_peer_id();
    let score = b.network.peer_score(a_peer).await;
    assert!(
        score >= 0.0,
        "the peer that served good batches is not blamed for our store: {score}"
    );
    assert_eq!(
        b.counter("beacon_sync_batches_total", &[("result", "invalid_block")]),
        0.0,
        "a failure of ours is not reported as the peer's bad block"
    );

    // The disk recovers: the same peer serves the rest and the node reaches its head.
    b.chain.store().refuse_writes(false);
    b.wait_for_head(head.block_root).await;
    let score = b.network.peer_score(a_peer).await;
    assert!(score >= 0.0, "still unpenalised: {score}");
    a.stop().await;
    b.stop().await;
}
