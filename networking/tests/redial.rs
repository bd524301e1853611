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

    // Several heartbeats (500 ms each) and discovery rounds: each side finds the other again and
    // holds the dial back.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while metric(&registry_a, HELD_BACK, None) < 1.0 || metric(&registry_b, HELD_BACK, None) < 1.0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "discovery never found the other node again: held back a {}, b {}",
            metric(&registry_a, HELD_BACK, None),
            metric(&registry_b, HELD_BACK, None)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
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
