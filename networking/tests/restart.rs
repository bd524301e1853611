//! A peer that crashes and comes back with the same identity over QUIC: its old connection
//! looks alive to us until QUIC's idle timeout, so its new one is not the first gossipsub
//! sees. The restarted peer must still learn our subscriptions and reach us by gossip.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::*;
use networking::{GossipKind, Keypair, NetworkConfig, NetworkEvent, PubsubMessage};

const COLUMN_SUBNET: u64 = 3;

fn quic_only(keypair: Option<Keypair>, quic_port: u16) -> NetworkConfig {
    let mut config = local_config();
    config.gossip_kinds = vec![
        GossipKind::BeaconBlock,
        GossipKind::DataColumnSidecar(COLUMN_SUBNET),
    ];
    config.tcp_port = None;
    config.quic_port = Some(quic_port);
    config.keypair = keypair;
    config
}

async fn wait_subscribed(node: &mut TestNode, kind: GossipKind) {
    node.wait_for("a subscription", |event| match event {
        NetworkEvent::PeerSubscribed { topic, .. } if topic.kind == kind => Some(()),
        _ => None,
    })
    .await
}

async fn wait_for_column(node: &mut TestNode, slot: u64) {
    let got = node
        .wait_for("a gossiped column", |event| match event {
            NetworkEvent::GossipMessage {
                message: PubsubMessage::DataColumnSidecar(COLUMN_SUBNET, c),
                ..
            } => Some(c.clone()),
            _ => None,
        })
        .await;
    assert_eq!(got, column(slot, COLUMN_SUBNET));
}

/// B connects to A, crashes `life` after learning A's subscriptions, and comes back with the
/// same identity and port: it must learn A's subscriptions again and gossip to A.
async fn crash_and_restart(life: Duration) {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mut a = TestNode::start(quic_only(
        None,
        networking::discovery::free_udp_port(loopback).unwrap(),
    ))
    .await;
    let enr_a = a.handle.local_enr().expect("discovery is on").clone();

    // B's first life runs on a runtime of its own, so that it can die without a goodbye: a
    // dropped runtime sends no QUIC close, as a SIGKILLed process does not.
    let keypair = Keypair::generate_secp256k1();
    // Each life on its own port (the crashed one's socket need not be waited for): A tells a
    // restart by the identity, not the address.
    let config_b = {
        let keypair = keypair.clone();
        let enr_a = enr_a.clone();
        move || {
            let port = networking::discovery::free_udp_port(loopback).unwrap();
            let mut config = quic_only(Some(keypair.clone()), port);
            config.boot_nodes = vec![enr_a.clone()];
            config
        }
    };
    let first_config = config_b();
    let (runtime_b, mut b) = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let node = runtime.block_on(TestNode::start(first_config));
        (runtime, node)
    })
    .join()
    .unwrap();
    wait_subscribed(&mut b, GossipKind::DataColumnSidecar(COLUMN_SUBNET)).await;
    wait_subscribed(&mut a, GossipKind::DataColumnSidecar(COLUMN_SUBNET)).await;

    tokio::time::sleep(life).await;
    runtime_b.shutdown_background();
    drop(b);

    // B's second life, same identity: it must learn A's subscriptions (gossipsub
    // tells them to a peer on its first connection only) and its gossip must reach A.
    let mut b = TestNode::start(config_b()).await;
    wait_subscribed(&mut b, GossipKind::DataColumnSidecar(COLUMN_SUBNET)).await;
    // Publishing before the mesh forms goes to the subscribed peers, which is what a
    // restarted proposer does.
    b.handle.publish(PubsubMessage::DataColumnSidecar(
        COLUMN_SUBNET,
        column(9, COLUMN_SUBNET),
    ));
    wait_for_column(&mut a, 9).await;
    a.handle.shutdown();
    b.handle.shutdown();
}

/// B's old connection is old enough that A takes the new one for a restart at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_restarted_after_a_crash_learns_our_subscriptions_and_gossips_to_us() {
    crash_and_restart(networking::service::STALE_CONNECTION_AGE + Duration::from_secs(1)).await;
}
