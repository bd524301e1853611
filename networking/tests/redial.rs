//! Connection hygiene after a disconnect: two nodes that found each other through discv5 are
//! disconnected by one of them; discovery keeps finding the other, but neither dials it again
//! before its redial backoff (one minute for a first disconnect), neither bans the other, and the
//! counters say why (`network_disconnects_total{reason}`, `network_redials_held_back_total`).
//! Before the backoff, a disconnected peer was dialed again at the next discovery result, within
//! a second here, and sent Status and MetaData again at once.
//!
//! Nor does anything else dial it: a request to a peer that has just disconnected fails instead
//! of reconnecting it (the stream layer would dial it, past the backoff and any ban).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::time::Duration;

use common::*;
use networking::peer_manager::DisconnectReason;
use networking::rpc::Request;
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
    // b's ended from a's side, once or, when a dial of a's from before its disconnect
    // completed afterwards and a closed it at once, twice.
    let remote = metric(&registry_b, DISCONNECTS, Some(("reason", "remote")));
    assert!(
        (1.0..=2.0).contains(&remote),
        "b saw {remote} remote disconnects"
    );
    for reason in DisconnectReason::LABELS
        .into_iter()
        .filter(|r| *r != "remote")
    {
        assert_eq!(
            metric(&registry_b, DISCONNECTS, Some(("reason", reason))),
            0.0,
            "{reason}"
        );
    }
    a.handle.shutdown();
    b.handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_to_a_disconnected_peer_fails_without_dialing_it() {
    let no_discovery = || {
        let mut config = local_config();
        config.quic_port = None;
        config.discovery_port = None;
        config
    };
    let mut a = TestNode::start(no_discovery()).await;
    let mut config_b = no_discovery();
    config_b.static_peers = vec![a.handle.tcp_addr().unwrap()];
    let mut b = TestNode::start(config_b).await;
    let registry_a = Registry::new();
    a.handle.register_metrics(&registry_a).unwrap();

    let b_peer = wait_connected(&mut a).await;
    let a_peer = wait_connected(&mut b).await;
    // a learns b's listening address from identify, so a dial of b could succeed: waited for
    // on the peer table's change notifications (identify's answer is one).
    let mut table = a.handle.peer_table_changes();
    tokio::time::timeout(TIMEOUT, async {
        while !a
            .handle
            .connected_peer_details()
            .await
            .iter()
            .any(|p| p.peer_id == b_peer && p.agent_version.is_some())
        {
            table.changed().await.expect("the network service runs");
        }
    })
    .await
    .expect("identify answered");
    a.handle.disconnect(b_peer);
    wait_disconnected(&mut a, b_peer).await;
    wait_disconnected(&mut b, a_peer).await;

    let id = a
        .handle
        .send_request(b_peer, Request::Status(status(&spec(), 8)));
    let error = a
        .wait_for("the request's end", |event| match event {
            NetworkEvent::RequestFailed {
                request_id, error, ..
            } if *request_id == id => Some(error.to_string()),
            NetworkEvent::ResponseReceived { request_id, .. } if *request_id == id => {
                panic!("the request reached the disconnected peer")
            }
            _ => None,
        })
        .await;
    // The dial the stream layer asked for was denied (its error reads only "Dial error").
    assert!(error.contains("cannot open stream"), "{error}");
    assert!(a.handle.connected_peers().await.is_empty());
    assert!(b.handle.connected_peers().await.is_empty());
    assert_eq!(
        metric(&registry_a, "libp2p_dials_total", Some(("source", "boot"))),
        0.0
    );
    a.handle.shutdown();
    b.handle.shutdown();
}
