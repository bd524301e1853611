//! Two Arbor network instances on loopback see each other's client (from identify) and custody
//! group count (from MetaData v3 and the ENR's `cgc`), in the peer table and in the
//! `libp2p_peers_per_*` gauges.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::*;
use networking::{ClientKind, ConnectedPeer, PeerId};

/// Waits (on [`networking::NetworkHandle::peer_table_changes`], bounded by [`TIMEOUT`]) until
/// `node` knows `peer`'s agent version and custody group count.
async fn wait_identified(node: &TestNode, peer: PeerId) -> ConnectedPeer {
    let mut changes = node.handle.peer_table_changes();
    tokio::time::timeout(TIMEOUT, async {
        loop {
            // Marked seen before the read: a change while reading wakes the wait below.
            changes.borrow_and_update();
            let known = node
                .handle
                .connected_peer_details()
                .await
                .into_iter()
                .find(|p| {
                    p.peer_id == peer
                        && p.agent_version.is_some()
                        && p.custody_group_count.is_some()
                });
            if let Some(details) = known {
                return details;
            }
            changes.changed().await.expect("the service runs");
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{peer} not identified within {TIMEOUT:?}"))
}

/// The value of gauge `name` with label `label` = `value` in `registry`.
fn gauge(registry: &prometheus::Registry, name: &str, label: &str, value: &str) -> Option<f64> {
    registry
        .gather()
        .iter()
        .find(|f| f.name() == name)?
        .get_metric()
        .iter()
        .find(|m| {
            m.get_label()
                .iter()
                .any(|l| l.name() == label && l.value() == value)
        })
        .map(|m| m.get_gauge().get_value())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_see_each_others_client_and_custody() {
    let mut config_a = local_config();
    config_a.quic_port = None;
    config_a.custody_group_count = 8;
    let a = TestNode::start(config_a).await;
    let registry_a = prometheus::Registry::new();
    a.handle.register_metrics(&registry_a).unwrap();

    // `b` finds `a` over discv5 (so it has `a`'s ENR and its `cgc` before `a` answers MetaData).
    let mut config_b = local_config();
    config_b.quic_port = None;
    config_b.custody_group_count = 128;
    config_b.boot_nodes = vec![a.handle.local_enr().expect("discovery is on").clone()];
    let b = TestNode::start(config_b).await;

    let a_seen_by_b = wait_identified(&b, a.handle.local_peer_id()).await;
    let b_seen_by_a = wait_identified(&a, b.handle.local_peer_id()).await;
    let agent = format!("arbor/{}", env!("CARGO_PKG_VERSION"));
    for (details, cgc) in [(&a_seen_by_b, 8), (&b_seen_by_a, 128)] {
        assert_eq!(details.agent_version.as_deref(), Some(agent.as_str()));
        assert_eq!(details.client, ClientKind::Arbor);
        assert_eq!(details.custody_group_count, Some(cgc), "{details:?}");
    }
    // `b` dialed `a`; `a` may also have dialed `b` once `b`'s discv5 contact put `b` in its
    // table. A side whose own dial connected records the peer as outbound, whichever connection
    // came first; a dialer's connection is up before its listener's, so by the time both are
    // identified at least one side holds an outbound connection.
    use networking::peer_manager::ConnectionDirection::Outbound;
    assert!(
        a_seen_by_b.direction == Outbound || b_seen_by_a.direction == Outbound,
        "neither side recorded an outbound connection: {a_seen_by_b:?} {b_seen_by_a:?}"
    );

    // `a`'s gauges: one Arbor peer, custodying 128 groups, none of any other client.
    assert_eq!(
        gauge(&registry_a, "libp2p_peers_per_client", "Client", "Arbor"),
        Some(1.0)
    );
    assert_eq!(
        gauge(
            &registry_a,
            "libp2p_peers_per_client",
            "Client",
            "Lighthouse"
        ),
        Some(0.0)
    );
    assert_eq!(
        gauge(
            &registry_a,
            "libp2p_peers_per_custody_group_count",
            "custody_group_count",
            "128"
        ),
        Some(1.0)
    );
    a.handle.shutdown();
    b.handle.shutdown();
}
