//! Gloas's execution payload envelopes served by req/resp from the store, through the chain's
//! reads: by root in request order (unknown roots and those before the serving window left out),
//! by range only those of the canonical chain's payloads (FULL on the head's chain: EMPTY
//! blocks, empty slots and forks passed over), a range before the serving window
//! `ResourceUnavailable`, one before the Gloas fork empty, `count` 0 an invalid request.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::sync::Arc;

use common::*;
use fork_choice::PayloadStatus;
use networking::rpc::{
    ExecutionPayloadEnvelopesByRangeRequest, Request, Response, ResponseCode, ResponseItem,
    StatusMessage,
};
use state_harness::gloas::{
    GloasBlockContents, ParentPayload, build_gloas_block, self_built_envelope,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock};
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{ChainSpec, EthSpec, ForkName, Root, Slot};

/// The serving window of the minimal preset from Gloas on
/// (`compute_min_epochs_for_block_requests_gloas`), in epochs.
const WINDOW_EPOCHS: u64 = 262;

/// A client connected to `node`, whose status is the node's head.
async fn client_of(node: &Node, spec: &ChainSpec, current: Slot) -> (Client, networking::PeerId) {
    let head = node.chain.head();
    let ours = StatusMessage {
        fork_digest: node
            .network
            .fork_context()
            .digest_at_epoch(current / E::slots_per_epoch()),
        finalized_root: head.finalized_checkpoint.root,
        finalized_epoch: head.finalized_checkpoint.epoch,
        head_root: head.block_root,
        head_slot: head.slot,
        earliest_available_slot: 0,
    };
    let mut client = Client::start(spec, current, ours, vec![node.tcp_addr()]).await;
    let peer = client.connected().await;
    (client, peer)
}

fn by_range(start_slot: Slot, count: u64) -> Request<E> {
    Request::ExecutionPayloadEnvelopesByRange(ExecutionPayloadEnvelopesByRangeRequest {
        start_slot,
        count,
    })
}

fn envelopes(items: &[&SignedExecutionPayloadEnvelope<E>]) -> Vec<ResponseItem<E>> {
    items
        .iter()
        .map(|e| ResponseItem::ExecutionPayloadEnvelope(Arc::new((*e).clone())))
        .collect()
}

fn code(response: &Response<E>) -> Option<ResponseCode> {
    response.error.as_ref().map(|e| e.code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelopes_are_served_by_root_and_by_range_only_on_the_canonical_chain() {
    // A Gloas chain from genesis; the clock far enough on that the serving window starts at
    // slot 16 (epoch 2).
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas));
    let anchor = genesis_anchor(&spec);
    let window_start: Slot = 2 * E::slots_per_epoch();
    let current = (WINDOW_EPOCHS + 2) * E::slots_per_epoch() + 1;
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
    assert_eq!(a.chain.envelope_serving_start_slot(), window_start);

    // Slot 9 (before the window) FULL; 17 FULL; 18 with its envelope, but slot 20's block
    // builds on its EMPTY variant; 19 empty; 20 FULL; 21 FULL, the head (its body's votes for
    // slot 20's block make the branch on 18's EMPTY variant the heavier).
    let mut chain: Vec<(BuiltBlock<E>, SignedExecutionPayloadEnvelope<E>)> = Vec::new();
    let mut parent = anchor.post.clone();
    for (slot, parent_payload) in [
        (9, ParentPayload::Empty),
        (17, ParentPayload::Full),
        (18, ParentPayload::Full),
        (20, ParentPayload::Empty),
        (21, ParentPayload::Full),
    ] {
        let attestations = if slot == 21 {
            vec![AttestationSpec::whole_slot(20)]
        } else {
            Vec::new()
        };
        let contents = GloasBlockContents {
            base: BlockContents {
                attestations,
                ..Default::default()
            },
            parent_payload,
            ..Default::default()
        };
        let built = build_gloas_block(&parent, slot, &contents, &spec).unwrap();
        a.harness
            .import_valid(Arc::new(built.block.clone()), &[])
            .unwrap();
        let envelope = self_built_envelope(&built, &spec).unwrap();
        a.chain
            .import_execution_payload_envelope(Arc::new(envelope.clone()), Vec::new())
            .await
            .unwrap();
        parent = built.post.clone();
        chain.push((built, envelope));
    }
    let root = |i: usize| chain[i].0.block.canonical_root();
    let env = |i: usize| &chain[i].1;
    let head = a.chain.head();
    assert_eq!(
        (head.block_root, head.payload_status),
        (root(4), Some(PayloadStatus::Full))
    );
    let (mut client, a_peer) = client_of(&a, &spec, current).await;

    // By root: in request order, the unknown root and the one before the window left out.
    let response = client
        .request(
            a_peer,
            Request::ExecutionPayloadEnvelopesByRoot(vec![
                Root::repeat_byte(0xee),
                root(2),
                root(0),
                root(4),
            ]),
        )
        .await;
    assert_eq!(response.items, envelopes(&[env(2), env(4)]));

    // By range: the canonical payloads only (not slot 18's, which slot 20 built beside), the
    // head's because the head is FULL.
    let response = client.request(a_peer, by_range(window_start, 16)).await;
    assert_eq!(response.items, envelopes(&[env(1), env(3), env(4)]));
    // A range ending before the block that decides: the next canonical block is looked up
    // past it.
    let response = client.request(a_peer, by_range(8, 10)).await;
    assert_eq!(response.items, envelopes(&[env(1)]), "from slot 16 to 18");
    let response = client.request(a_peer, by_range(18, 1)).await;
    assert_eq!(response.items, vec![], "slot 18's payload is not canonical");
    // Wholly before the window: not served.
    let response = client.request(a_peer, by_range(8, 8)).await;
    assert_eq!(code(&response), Some(ResponseCode::RESOURCE_UNAVAILABLE));
    let response = client.request(a_peer, by_range(window_start, 0)).await;
    assert_eq!(code(&response), Some(ResponseCode::INVALID_REQUEST));

    for (protocol, result, n) in [
        ("execution_payload_envelopes_by_root", "success", 1.0),
        ("execution_payload_envelopes_by_range", "success", 3.0),
        (
            "execution_payload_envelopes_by_range",
            "resource_unavailable",
            1.0,
        ),
        (
            "execution_payload_envelopes_by_range",
            "invalid_request",
            1.0,
        ),
    ] {
        assert_eq!(
            a.counter(
                "beacon_rpc_requests_served_total",
                &[("protocol", protocol), ("result", result)]
            ),
            n,
            "{protocol} {result}"
        );
    }
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_before_the_gloas_fork_has_no_envelopes() {
    // Gloas scheduled ahead: the chain runs Fulu.
    let mut spec = (*spec()).clone();
    spec.gloas_fork_epoch = 100;
    let spec = Arc::new(spec);
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 2, None);
    let current = ANCHOR_SLOT + 2;
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
    let (mut client, a_peer) = client_of(&a, &spec, current).await;
    let response = client.request(a_peer, by_range(ANCHOR_SLOT, 64)).await;
    assert_eq!((code(&response), response.items), (None, vec![]));
    let fulu_block = blocks[0].0.block.canonical_root();
    let response = client
        .request(
            a_peer,
            Request::ExecutionPayloadEnvelopesByRoot(vec![fulu_block]),
        )
        .await;
    assert_eq!((code(&response), response.items), (None, vec![]));
    a.stop().await;
}
