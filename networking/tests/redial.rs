//! Connection hygiene after a disconnect: two nodes that found each other through discv5 are
//! disconnected by one of them; discovery keeps finding the other, but neither dials it again
//! before its redial backoff (one minute for a first disconnect), neither bans the other, and the
//! counters say why (`network_disconnects_total{reason}`, `network_redials_held_back_total`).
//! Before the backoff, a disconnected peer was dialed again at the next discovery result, within
//! a second here, and sent Status and MetaData again at once.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::time::Duration;

use common::*;
use networking::{NetworkEvent, PeerId};
use prometheus::Registry;

const HELD_BACK: &str = "network_redials_held_back_total";
const DISCONNECTS: &str = "network_disconnects_total";

async fn wait_disconnected(node: &mut TestNode, peer: PeerId) {
    node.wait_for("a disconnection", |event| match event {
        NetworkEvent::PeerDisconnected { peer_id } if *peer_id == peer => Some(()),
        _ => None,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnected_peer_is_not_redialed_before_its_backoff() {
    let tcp_only = || {
        let mut config = local_config();
        config.quic_port = None;
        config
    };
    let mut a = TestNode::start(tcp_only()).await;
    let mut config_b = tcp_only();
    config_b.boot_nodes = vec![a.handle.local_enr().expect("discovery is on").clone()];
    let mut b = TestNode::start(config_b).await;
    let registry_a = Registry::new();
    a.handle.register_metrics(&registry_a).unwrap();
    let registry_b = Registry::new();
    b.handle.register_metrics(&registry_b).unwrap();

    let b_peer = wait_connected(&mut a).await;
    let a_peer = wait_connected(&mut b).await;
    // Both found each other through discv5 (and keep finding each other: a target of 100 peers
    // wants more at every heartbeat).
    a.handle.disconnect(b_peer);
    wait_disconnected(&mut a, b_peer).await;
    wait_disconnected(&mut b, a_peer).await;

    // Discovery rounds (one per 500 ms heartbeat): each side finds the other again and holds
    // the dial back, three times over (each of them an immediate redial before the backoff),
    // polled until then within the bound.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let held_back = |r: &Registry| metric(r, HELD_BACK, None);
    while held_back(&registry_a) < 3.0 || held_back(&registry_b) < 3.0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "discovery did not find the other node again: held back a {}, b {}",
            held_back(&registry_a),
            held_back(&registry_b)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for (node, other) in [(&mut a, b_peer), (&mut b, a_peer)] {
        assert!(
            node.handle.connected_peers().await.is_empty(),
            "redialed within the backoff"
        );
        // Disconnecting is nobody's fault.
        assert!(!node.handle.is_banned(other).await);
        assert!(node.handle.peer_score(other).await >= 0.0);
    }
    // Why each side's connection ended.
    assert_eq!(
        metric(&registry_a, DISCONNECTS, Some(("reason", "goodbye_sent"))),
        1.0
    );
    assert_eq!(
        metric(&registry_b, DISCONNECTS, Some(("reason", "remote"))),
        1.0
    );
    a.handle.shutdown();
    b.handle.shutdown();
}
