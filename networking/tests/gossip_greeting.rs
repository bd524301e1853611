//! A peer's greeting (its subscriptions, sent in one RPC when a connection opens) is understood
//! whole when the peer is a supernode on two fork digests: every Fulu topic, every attestation
//! subnet and every column subnet around a BPO boundary. gossipsub's defaults drop such an RPC
//! (more than 100 subscriptions, more than 16 KiB of them) and the peer's topics are never
//! learned; the node's own configuration ([`networking::gossip::gossipsub_config`] and
//! [`networking::gossip::subscription_filter`]) must not.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use libp2p::gossipsub::{self, MessageAuthenticity};
use libp2p::swarm::SwarmEvent;
use libp2p::{Multiaddr, Swarm, noise, tcp, yamux};
use networking::gossip::{GossipBehaviour, gossipsub_config, subscription_filter};
use networking::{ForkContext, GossipKind, GossipTopic};
use types::{EthSpec, ForkName};

/// A swarm with the node's gossipsub behaviour (its configuration and subscription filter).
fn swarm(fork_context: Arc<ForkContext>) -> Swarm<GossipBehaviour> {
    libp2p::SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(
            tcp::Config::default(),
            noise::Config::new,
            yamux::Config::default,
        )
        .expect("tcp")
        .with_behaviour(|_| {
            let config = gossipsub_config(fork_context, E::slots_per_epoch()).expect("config");
            GossipBehaviour::new_with_subscription_filter(
                MessageAuthenticity::Anonymous,
                config,
                subscription_filter(),
            )
            .expect("gossipsub")
        })
        .expect("behaviour")
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
        .build()
}

#[tokio::test]
async fn a_supernode_greeting_on_two_digests_is_understood_whole() {
    let spec = bpo_spec();
    let digests = [
        spec.compute_fork_digest(GENESIS_VALIDATORS_ROOT, 0),
        spec.compute_fork_digest(GENESIS_VALIDATORS_ROOT, 5),
    ];
    assert_ne!(digests[0], digests[1]);
    // Every subnet of every subnet topic, with the light-client topics.
    let kinds = GossipKind::all_kinds(ForkName::Fulu, &spec);
    let topics: BTreeSet<String> = digests
        .iter()
        .flat_map(|d| kinds.iter().map(|k| GossipTopic::new(*k, *d).to_string()))
        .collect();
    // Past both of gossipsub's defaults: 100 subscriptions, 16 KiB of them.
    let bytes: usize = topics.iter().map(|t| t.len() + 6).sum();
    assert!(
        topics.len() > 300 && bytes > 16 * 1024,
        "{} topics, {bytes} bytes",
        topics.len()
    );

    let fork_context = Arc::new(ForkContext::new(spec, GENESIS_VALIDATORS_ROOT));
    let mut supernode = swarm(fork_context.clone());
    for topic in &topics {
        supernode
            .behaviour_mut()
            .subscribe(&gossipsub::IdentTopic::new(topic.clone()))
            .expect("subscribe");
    }
    supernode
        .listen_on("/ip4/127.0.0.1/tcp/0".parse().expect("address"))
        .expect("listen");
    let address: Multiaddr = tokio::time::timeout(TIMEOUT, async {
        loop {
            if let SwarmEvent::NewListenAddr { address, .. } = supernode.select_next_some().await {
                return address;
            }
        }
    })
    .await
    .expect("the supernode listens");
    let supernode_task = tokio::spawn(async move {
        loop {
            supernode.select_next_some().await;
        }
    });

    // The peer subscribes to nothing: it can learn the topics only from the greeting.
    let mut peer = swarm(fork_context);
    peer.dial(address).expect("dial");
    let mut learned = BTreeSet::new();
    let outcome = tokio::time::timeout(TIMEOUT, async {
        while learned.len() < topics.len() {
            match peer.select_next_some().await {
                SwarmEvent::Behaviour(gossipsub::Event::Subscribed { topic, .. }) => {
                    learned.insert(topic.into_string());
                }
                SwarmEvent::ConnectionClosed { cause, .. } => {
                    return Err(format!("the connection closed: {cause:?}"));
                }
                SwarmEvent::OutgoingConnectionError { error, .. } => {
                    return Err(format!("the dial failed: {error}"));
                }
                _ => {}
            }
        }
        Ok(())
    })
    .await;
    supernode_task.abort();
    assert_eq!(
        outcome,
        Ok(Ok(())),
        "learned {} of {} topics",
        learned.len(),
        topics.len()
    );
    assert_eq!(learned, topics);
}
