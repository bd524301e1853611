//! The light-client req/resp protocols between real networking instances on loopback: a peer
//! asks a node with light-client data for a bootstrap, updates by range and the latest finality
//! and optimistic updates, and decodes exactly the server's data; a node without data answers
//! ResourceUnavailable; a node whose server is off does not offer the protocols nor follows the
//! topics; gossip updates are IGNOREd until due and ACCEPTed when equal to the node's own, and a
//! node publishes its new update once due.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::sync::Arc;

use common::*;

use networking::rpc::{
    LightClientUpdatesByRangeRequest, Request, Response, ResponseCode, ResponseItem, StatusMessage,
};
use networking::{GossipKind, GossipTopic, PeerId, PubsubMessage};
use types::{EthSpec, Root};

/// A client connected to `node`, with a Status consistent with the node's chain.
async fn client_of(node: &Node, current: types::Slot) -> (Client, PeerId) {
    let head = node.chain.head();
    let digest = node
        .network
        .fork_context()
        .digest_at_epoch(current / E::slots_per_epoch());
    let status = StatusMessage {
        fork_digest: digest,
        finalized_root: head.finalized_checkpoint.root,
        finalized_epoch: head.finalized_checkpoint.epoch,
        head_root: head.block_root,
        head_slot: head.slot,
        earliest_available_slot: 0,
    };
    let mut client = Client::start(&node.spec, current, status, vec![node.tcp_addr()]).await;
    let peer = client.connected().await;
    (client, peer)
}

fn unavailable(response: &Response<E>) -> bool {
    response.items.is_empty()
        && response.error.as_ref().map(|e| e.code) == Some(ResponseCode::RESOURCE_UNAVAILABLE)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_four_light_client_protocols_serve_the_servers_data() {
    let spec = spec();
    // From genesis, so that the finalized checkpoint (genesis) has a known header and the
    // first update with a sync aggregate is also a finality update.
    let genesis = genesis_anchor(&spec);
    let blocks = build_chain(&spec, &genesis, 6, None);
    let current = ANCHOR_SLOT + 6;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &genesis,
            blocks: &blocks,
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    assert!(a.chain.light_client_server().is_running());
    let (mut client, peer) = client_of(&a, current).await;

    let genesis_root = genesis.block.canonical_root();
    let bootstrap = a
        .chain
        .light_client_bootstrap(&genesis_root)
        .unwrap()
        .unwrap();
    let response = client
        .request(peer, Request::LightClientBootstrap(genesis_root))
        .await;
    assert_eq!(
        response,
        Response::success(vec![ResponseItem::LightClientBootstrap(Arc::new(
            bootstrap
        ))])
    );
    // (One bootstrap per 10 s is the protocol's quota: the unknown root is asked of the node
    // without data below.)

    let updates = a.chain.light_client_updates_by_range(0, 4).unwrap();
    assert_eq!(updates.len(), 1, "one period so far");
    let response = client
        .request(
            peer,
            Request::LightClientUpdatesByRange(LightClientUpdatesByRangeRequest {
                start_period: 0,
                count: 4,
            }),
        )
        .await;
    assert_eq!(
        response,
        Response::success(
            updates
                .into_iter()
                .map(|u| ResponseItem::LightClientUpdate(Arc::new(u)))
                .collect()
        )
    );

    let finality = a.chain.light_client_finality_update().unwrap().unwrap();
    assert_eq!(finality.signature_slot(), current);
    let response = client
        .request(peer, Request::LightClientFinalityUpdate)
        .await;
    assert_eq!(
        response,
        Response::success(vec![ResponseItem::LightClientFinalityUpdate(Arc::new(
            finality
        ))])
    );

    let optimistic = a.chain.light_client_optimistic_update().unwrap().unwrap();
    let response = client
        .request(peer, Request::LightClientOptimisticUpdate)
        .await;
    assert_eq!(
        response,
        Response::success(vec![ResponseItem::LightClientOptimisticUpdate(Arc::new(
            optimistic
        ))])
    );
    assert_eq!(
        a.counter(
            "beacon_rpc_requests_served_total",
            &[
                ("protocol", "light_client_bootstrap"),
                ("result", "success")
            ]
        ),
        1.0
    );
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_light_client_data_answers_resource_unavailable() {
    let spec = spec();
    // The anchor alone: no block with a sync aggregate, so no updates.
    let anchor = anchor(&spec);
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: ANCHOR_SLOT,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let (mut client, peer) = client_of(&a, ANCHOR_SLOT).await;
    for request in [
        Request::LightClientBootstrap(Root::repeat_byte(0xee)),
        Request::LightClientFinalityUpdate,
        Request::LightClientOptimisticUpdate,
    ] {
        let response = client.request(peer, request.clone()).await;
        assert!(unavailable(&response), "{request:?}: {response:?}");
    }
    // By range, the spec's answer to a range without updates is no chunk at all.
    let response = client
        .request(
            peer,
            Request::LightClientUpdatesByRange(LightClientUpdatesByRangeRequest {
                start_period: 0,
                count: 4,
            }),
        )
        .await;
    assert_eq!(response, Response::success(Vec::new()));
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_server_is_off_neither_offers_the_protocols_nor_follows_the_topics() {
    let spec = spec();
    let anchor = anchor(&spec);
    let blocks = build_chain(&spec, &anchor, 2, None);
    let current = ANCHOR_SLOT + 2;
    let a = Node::launch(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &blocks,
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
        Launch {
            disable_light_client_server: true,
            ..Launch::default()
        },
    )
    .await;
    assert!(!a.chain.light_client_server().is_running());
    let (mut client, peer) = client_of(&a, current).await;
    let result = client
        .try_request(peer, Request::LightClientOptimisticUpdate)
        .await;
    assert!(result.is_err(), "the protocol is not offered: {result:?}");
    // Other protocols are still served.
    let response = client.request(peer, Request::MetaData).await;
    assert_eq!(response.items.len(), 1);
    let topics = a.network.subscribed_topics().await;
    assert!(!topics.is_empty());
    for kind in [
        GossipKind::LightClientFinalityUpdate,
        GossipKind::LightClientOptimisticUpdate,
    ] {
        assert!(!topics.iter().any(|t| t.kind == kind), "{kind}");
    }
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_updates_equal_to_ours_are_accepted_and_our_new_ones_published_once_due() {
    let spec = spec();
    let genesis = genesis_anchor(&spec);
    let blocks = build_chain(&spec, &genesis, 6, None);
    let current = ANCHOR_SLOT + 6;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &genesis,
            blocks: &blocks,
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &genesis,
            blocks: &blocks,
            current_slot: current,
            custody: None,
            static_peers: vec![a.tcp_addr()],
        },
    )
    .await;
    let digest = a
        .network
        .fork_context()
        .digest_at_epoch(current / E::slots_per_epoch());
    let topic = GossipTopic::new(GossipKind::LightClientOptimisticUpdate, digest);
    for (node, name) in [(&a, "b in a's mesh"), (&b, "a in b's mesh")] {
        node.wait_until(name, || {
            let network = node.network.clone();
            async move { !network.mesh_peers(topic).await.is_empty() }
        })
        .await;
    }
    let label = |verdict| {
        [
            ("topic", "light_client_optimistic_update"),
            ("verdict", verdict),
        ]
    };
    // Slot start plus `ms`, in milliseconds since the UNIX epoch.
    let at = |slot, ms| spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + ms;

    // Before it is due at b (a third into the signature slot): IGNORE.
    let update = b.chain.light_client_optimistic_update().unwrap().unwrap();
    assert_eq!(update.signature_slot(), current);
    let mut resigned = update.clone();
    match &mut resigned {
        types::LightClientOptimisticUpdate::Fulu(u) => {
            u.sync_aggregate.sync_committee_bits.set(1, false).unwrap();
        }
        fork @ (types::LightClientOptimisticUpdate::Altair(_)
        | types::LightClientOptimisticUpdate::Bellatrix(_)
        | types::LightClientOptimisticUpdate::Capella(_)
        | types::LightClientOptimisticUpdate::Deneb(_)
        | types::LightClientOptimisticUpdate::Electra(_)
        | types::LightClientOptimisticUpdate::Gloas(_)) => {
            panic!("a Fulu chain's update is Fulu: {fork:?}")
        }
    }
    a.network
        .publish(PubsubMessage::LightClientOptimisticUpdate(Arc::new(
            resigned.clone(),
        )));
    b.wait_until("the early update's ignore", || {
        let n = b.counter("beacon_gossip_messages_total", &label("ignore"));
        async move { n >= 1.0 }
    })
    .await;

    // Once due, b's own update is accepted (forwarded) and recorded.
    b.clock.set_ms(at(current, 2500));
    a.network
        .publish(PubsubMessage::LightClientOptimisticUpdate(Arc::new(update)));
    b.wait_until("the update's accept", || {
        let n = b.counter("beacon_gossip_messages_total", &label("accept"));
        async move { n >= 1.0 }
    })
    .await;

    // A new block at b: its new optimistic update (attested at the old head) is published
    // at once, the slot being a third gone; a, a slot behind, has no such update: IGNORE.
    let (next, _) = next_block(&spec, &blocks[5].0, current + 1, 0);
    b.clock.set_ms(at(current + 1, 2500));
    b.chain
        .import_block(
            Arc::new(next.block.clone()),
            &[],
            &state_processing::per_block::AlwaysValid,
            beacon_chain::ExecutionStatus::Valid,
        )
        .unwrap();
    a.wait_until("b's published update, ignored by a", || {
        let n = a.counter("beacon_gossip_messages_total", &label("ignore"));
        async move { n >= 1.0 }
    })
    .await;
    assert_eq!(
        a.counter("beacon_gossip_messages_total", &label("accept")),
        0.0
    );
    a.stop().await;
    b.stop().await;
}
