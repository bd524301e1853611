//! A node whose application stops reading its events: the gossip that finds the channel full
//! is dropped with an IGNORE verdict handed to gossipsub at once and counted, while connection
//! events wait and all arrive, in order, once the application reads again.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::future::Future;
use std::time::Duration;

use common::*;
use libp2p::gossipsub::MessageId;
use networking::gossip::compute_message_id;
use networking::{GossipKind, GossipTopic, NetworkEvent, NetworkEvents, PubsubMessage, Validation};
use prometheus::Registry;
use types::ForkName;

/// Waits until `condition` holds, failing the test after [`TIMEOUT`]. The condition is a state
/// of another task (a counter, the peer table) that no event announces, so it is re-read at
/// a short interval.
async fn wait_until<F: Future<Output = bool>>(what: &str, mut condition: impl FnMut() -> F) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    loop {
        tick.tick().await;
        if condition().await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
    }
}

/// Receives events until `pick` accepts one, failing the test after [`TIMEOUT`]; returns every
/// event received, the accepted one last.
async fn drain_until(
    events: &mut NetworkEvents<E>,
    what: &str,
    pick: impl Fn(&NetworkEvent<E>) -> bool,
) -> Vec<NetworkEvent<E>> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(event)) => {
                let done = pick(&event);
                seen.push(event);
                if done {
                    return seen;
                }
            }
            Ok(None) => panic!("event stream ended while waiting for {what}"),
            Err(_) => panic!("timed out waiting for {what}; received {seen:?}"),
        }
    }
}

const DROPPED: &str = "network_events_dropped_total";
const VERDICTS: &str = "network_gossip_verdicts_total";
const LATE_VERDICTS: &str = "network_gossip_late_verdicts_total";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_event_channel_ignores_gossip_and_keeps_connection_events() {
    const MESSAGES: u64 = 8;
    let kinds = vec![GossipKind::BeaconBlock];

    // The node under test: a channel of one event, and an application that does not read yet.
    let mut config_b = local_config();
    config_b.quic_port = None;
    config_b.discovery_port = None;
    config_b.gossip_kinds = kinds.clone();
    config_b.event_capacity = 1;
    let (b, mut b_events) = networking::start::<E>(config_b, spec()).await.unwrap();
    let registry = Registry::new();
    b.register_metrics(&registry).unwrap();
    let b_addr = b.tcp_addr().unwrap();

    let mut config_a = local_config();
    config_a.quic_port = None;
    config_a.discovery_port = None;
    config_a.gossip_kinds = kinds.clone();
    config_a.static_peers = vec![b_addr.clone()];
    let mut a = TestNode::start(config_a).await;
    let a_peer = a.handle.local_peer_id();
    a.wait_for("b's subscription", |event| match event {
        NetworkEvent::PeerSubscribed { topic, .. } if topic.kind == GossipKind::BeaconBlock => {
            Some(())
        }
        _ => None,
    })
    .await;

    // b's channel already holds the connection event of a, so every message is dropped.
    for slot in 1..=MESSAGES {
        a.handle.publish(PubsubMessage::BeaconBlock(block(slot)));
    }
    let gossip_dropped = Some(("kind", "gossip_message"));
    wait_until("b dropped every message", || async {
        metric(&registry, DROPPED, gossip_dropped) >= MESSAGES as f64
    })
    .await;
    assert_eq!(metric(&registry, DROPPED, gossip_dropped), MESSAGES as f64);
    // Each got its IGNORE while gossipsub still held it.
    assert_eq!(
        metric(&registry, VERDICTS, Some(("verdict", "ignore"))),
        MESSAGES as f64
    );

    // A verdict the application sends later for a dropped message finds it already judged.
    let digest = b.fork_context().digest_at_epoch(0);
    let topic = GossipTopic::new(GossipKind::BeaconBlock, digest).to_string();
    let data = PubsubMessage::BeaconBlock(block(1)).encode();
    let id = compute_message_id(&spec(), ForkName::Fulu, &topic, &data);
    b.report_validation(MessageId::new(&id), a_peer, Validation::Accept);
    wait_until("the late verdict is counted", || async {
        metric(&registry, LATE_VERDICTS, Some(("verdict", "accept"))) == 1.0
    })
    .await;
    assert_eq!(
        metric(&registry, VERDICTS, Some(("verdict", "accept"))),
        0.0
    );

    // A third peer connects and leaves while the channel is still full.
    let mut config_c = local_config();
    config_c.quic_port = None;
    config_c.discovery_port = None;
    config_c.static_peers = vec![b_addr];
    let mut c = TestNode::start(config_c).await;
    let c_peer = c.handle.local_peer_id();
    c.wait_for("the connection to b", |event| match event {
        NetworkEvent::PeerConnected { .. } => Some(()),
        _ => None,
    })
    .await;
    wait_until("b counts c as connected", || async {
        b.connected_peers().await.contains(&c_peer)
    })
    .await;
    c.handle.shutdown();
    wait_until("b saw c leave", || async {
        !b.connected_peers().await.contains(&c_peer)
    })
    .await;
    assert!(metric(&registry, "network_event_backlog", None) >= 2.0);

    // Reading again: every connection event arrives, in order, and no gossip.
    let seen = drain_until(
        &mut b_events,
        "c's disconnection",
        |event| matches!(event, NetworkEvent::PeerDisconnected { peer_id } if *peer_id == c_peer),
    )
    .await;
    let position = |want: &dyn Fn(&NetworkEvent<E>) -> bool| seen.iter().position(want);
    let a_connected = position(
        &|e| matches!(e, NetworkEvent::PeerConnected { peer_id, .. } if *peer_id == a_peer),
    )
    .expect("a's connection event arrived");
    let c_connected = position(
        &|e| matches!(e, NetworkEvent::PeerConnected { peer_id, .. } if *peer_id == c_peer),
    )
    .expect("c's connection event arrived");
    assert!(a_connected < c_connected && c_connected < seen.len() - 1);
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, NetworkEvent::GossipMessage { .. })),
        "{seen:?}"
    );
    for kind in ["peer_connected", "peer_disconnected", "peer_subscribed"] {
        assert_eq!(
            metric(&registry, DROPPED, Some(("kind", kind))),
            0.0,
            "{kind}"
        );
    }

    // With room again, gossip is delivered and judged by the application.
    a.handle
        .publish(PubsubMessage::BeaconBlock(block(MESSAGES + 1)));
    let seen = drain_until(&mut b_events, "the next gossip message", |event| {
        matches!(event, NetworkEvent::GossipMessage { .. })
    })
    .await;
    let Some(NetworkEvent::GossipMessage {
        source,
        message_id,
        message,
        ..
    }) = seen.last()
    else {
        unreachable!("drain_until ends on the event it waited for");
    };
    assert_eq!(*message, PubsubMessage::BeaconBlock(block(MESSAGES + 1)));
    b.report_validation(message_id.clone(), *source, Validation::Accept);
    wait_until("the verdict is applied", || async {
        metric(&registry, VERDICTS, Some(("verdict", "accept"))) == 1.0
    })
    .await;
    assert_eq!(metric(&registry, DROPPED, gossip_dropped), MESSAGES as f64);

    a.handle.shutdown();
    b.shutdown();
}
