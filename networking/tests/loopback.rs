//! Two Arbor network instances on loopback: discovery, QUIC and TCP (yamux, mplex), the
//! handshake protocols, block and column serving, and gossip in both directions.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::*;
use networking::rpc::{BlocksByRangeRequest, Request, ResponseItem};
use networking::{GossipKind, Muxers, NetworkEvent, PubsubMessage};
use types::fulu::DataColumnsByRootIdentifier;
use types::{ForkName, Root};

fn gossip_kinds() -> Vec<GossipKind> {
    vec![GossipKind::BeaconBlock, GossipKind::DataColumnSidecar(3)]
}

async fn wait_subscribed(node: &mut TestNode, kind: GossipKind) {
    node.wait_for("a subscription", |event| match event {
        NetworkEvent::PeerSubscribed { topic, .. } if topic.kind == kind => Some(()),
        _ => None,
    })
    .await
}

/// Status, Ping, MetaData, BlocksByRange and DataColumnSidecarsByRoot from `a` to `b`.
async fn exchange_req_resp(a: &mut TestNode, b_peer: networking::PeerId) {
    let spec = spec();
    let response = a.request(b_peer, Request::Status(status(&spec, 0))).await;
    assert_eq!(response.items, vec![ResponseItem::Status(status(&spec, 8))]);

    let response = a.request(b_peer, Request::Ping(1)).await;
    assert!(matches!(response.items.as_slice(), [ResponseItem::Pong(_)]));

    let response = a.request(b_peer, Request::MetaData).await;
    let [ResponseItem::MetaData(metadata)] = response.items.as_slice() else {
        panic!("metadata response: {response:?}");
    };
    assert_eq!(metadata.custody_group_count, 4);

    let response = a
        .request(
            b_peer,
            Request::BlocksByRange(BlocksByRangeRequest {
                start_slot: 2,
                count: 3,
                step: 1,
            }),
        )
        .await;
    let expected: Vec<_> = (2..5).map(|s| ResponseItem::Block(block(s))).collect();
    assert_eq!(response.items, expected);

    let ids = vec![DataColumnsByRootIdentifier::<E> {
        block_root: Root::repeat_byte(5),
        columns: vec![1, 3, 100].try_into().unwrap(),
    }];
    let response = a.request(b_peer, Request::DataColumnsByRoot(ids)).await;
    assert_eq!(
        response.items,
        vec![
            ResponseItem::DataColumnSidecar(column(5, 1)),
            ResponseItem::DataColumnSidecar(column(5, 3)),
        ]
    );
}

/// `from` publishes a block and a column; `to` receives both.
async fn gossip(from: &TestNode, to: &mut TestNode, slot: u64) {
    from.handle.publish(PubsubMessage::BeaconBlock(block(slot)));
    from.handle
        .publish(PubsubMessage::DataColumnSidecar(3, column(slot, 3)));
    let got_block = to
        .wait_for("a gossiped block", |event| match event {
            NetworkEvent::GossipMessage {
                message: PubsubMessage::BeaconBlock(b),
                ..
            } => Some(b.clone()),
            _ => None,
        })
        .await;
    assert_eq!(got_block, block(slot));
    let got_column = to
        .wait_for("a gossiped column", |event| match event {
            NetworkEvent::GossipMessage {
                message: PubsubMessage::DataColumnSidecar(3, c),
                ..
            } => Some(c.clone()),
            _ => None,
        })
        .await;
    assert_eq!(got_column, column(slot, 3));
}

async fn discover_and_exchange(quic: bool) {
    // Both nodes offer only the one transport: each discovers the other, and whichever dials
    // first must use it (with TCP left on at b, a could dial b over TCP before b dials a).
    let one_transport = |mut config: networking::NetworkConfig| {
        config.gossip_kinds = gossip_kinds();
        if quic {
            config.tcp_port = None;
        } else {
            config.quic_port = None;
        }
        config
    };
    let mut a = TestNode::start(one_transport(local_config())).await;
    let enr_a = a.handle.local_enr().expect("discovery is on").clone();

    let mut config_b = one_transport(local_config());
    config_b.boot_nodes = vec![enr_a];
    let mut b = TestNode::start(config_b).await;

    let a_peer = wait_connected(&mut b).await;
    assert_eq!(a_peer, a.handle.local_peer_id());
    let b_peer = wait_connected(&mut a).await;
    let addrs = b.handle.connections(a_peer).await;
    let transport = if quic { "/quic-v1" } else { "/tcp/" };
    assert!(
        addrs.iter().any(|a| a.to_string().contains(transport)),
        "{addrs:?}"
    );

    exchange_req_resp(&mut b, a_peer).await;
    exchange_req_resp(&mut a, b_peer).await;

    wait_subscribed(&mut a, GossipKind::DataColumnSidecar(3)).await;
    wait_subscribed(&mut b, GossipKind::DataColumnSidecar(3)).await;
    gossip(&a, &mut b, 6).await;
    gossip(&b, &mut a, 7).await;
    a.handle.shutdown();
    b.handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovered_over_discv5_and_connected_over_quic() {
    discover_and_exchange(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovered_over_discv5_and_connected_over_tcp_yamux() {
    discover_and_exchange(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_with_mplex_only() {
    let mut config_a = local_config();
    config_a.muxers = Muxers::Mplex;
    config_a.quic_port = None;
    config_a.discovery_port = None;
    config_a.gossip_kinds = gossip_kinds();
    let mut a = TestNode::start(config_a).await;
    let mut config_b = local_config();
    config_b.muxers = Muxers::Mplex;
    config_b.quic_port = None;
    config_b.discovery_port = None;
    config_b.gossip_kinds = gossip_kinds();
    config_b.static_peers = vec![a.handle.tcp_addr().expect("tcp listener")];
    let mut b = TestNode::start(config_b).await;
    let a_peer = wait_connected(&mut b).await;
    let b_peer = wait_connected(&mut a).await;
    exchange_req_resp(&mut b, a_peer).await;
    exchange_req_resp(&mut a, b_peer).await;
    wait_subscribed(&mut a, GossipKind::DataColumnSidecar(3)).await;
    wait_subscribed(&mut b, GossipKind::DataColumnSidecar(3)).await;
    gossip(&b, &mut a, 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yamux_node_accepts_a_mplex_only_peer() {
    // The default node offers both muxers; a mplex-only dialer must still get in.
    let mut config_a = local_config();
    config_a.quic_port = None;
    config_a.discovery_port = None;
    let mut a = TestNode::start(config_a).await;
    let mut config_b = local_config();
    config_b.muxers = Muxers::Mplex;
    config_b.quic_port = None;
    config_b.discovery_port = None;
    config_b.static_peers = vec![a.handle.tcp_addr().expect("tcp listener")];
    let mut b = TestNode::start(config_b).await;
    let a_peer = wait_connected(&mut b).await;
    wait_connected(&mut a).await;
    let response = b.request(a_peer, Request::Ping(3)).await;
    assert!(matches!(response.items.as_slice(), [ResponseItem::Pong(_)]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enr_carries_the_eth2_fields() {
    use networking::enr::Eth2Enr;
    let mut config = local_config();
    config.custody_group_count = 8;
    config.attnets = vec![3, 60];
    config.syncnets = vec![1];
    let node = TestNode::start(config).await;
    let enr = node.handle.local_enr().unwrap();
    let spec = spec();
    assert_eq!(
        enr.eth2().unwrap().fork_digest,
        spec.compute_fork_digest(GENESIS_VALIDATORS_ROOT, 0)
    );
    assert_eq!(enr.eth2().unwrap().next_fork_epoch, u64::MAX);
    assert_eq!(
        enr.eth2().unwrap().next_fork_version,
        spec.fork_version(ForkName::Fulu)
    );
    assert_eq!(enr.custody_group_count().unwrap(), 8);
    assert!(enr.attnets().unwrap().get(60).unwrap());
    assert!(enr.syncnets().unwrap().get(1).unwrap());
    assert_eq!(enr.next_fork_digest().unwrap(), types::ForkDigest::ZERO);
    assert_eq!(enr.peer_id().unwrap(), node.handle.local_peer_id());

    node.handle.update_metadata(vec![5], vec![], 16);
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let enr = node.handle.current_enr().await.unwrap();
        if enr.custody_group_count().unwrap() == 16 {
            assert!(enr.attnets().unwrap().get(5).unwrap());
            assert!(!enr.attnets().unwrap().get(60).unwrap());
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "ENR not updated");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn third_node_is_found_through_a_discv5_query() {
    // B and C only know A. B learns C's ENR from A through discv5 and dials it.
    let a = TestNode::start(local_config()).await;
    let enr_a = a.handle.local_enr().unwrap().clone();
    let mut config_c = local_config();
    config_c.boot_nodes = vec![enr_a.clone()];
    let c = TestNode::start(config_c).await;
    let c_peer = c.handle.local_peer_id();
    let mut config_b = local_config();
    config_b.boot_nodes = vec![enr_a];
    let mut b = TestNode::start(config_b).await;
    b.wait_for("a connection to the third node", |event| match event {
        NetworkEvent::PeerConnected { peer_id, .. } if *peer_id == c_peer => Some(()),
        _ => None,
    })
    .await;
}
