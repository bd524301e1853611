//! Bad input: a peer that sends garbage on every req/resp protocol and gossip topic is
//! penalised and banned while the node keeps serving an honest peer; a flood of oversized
//! messages does not grow the node's memory.

mod common;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use common::*;
use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use libp2p::gossipsub::{self, MessageAuthenticity, ValidationMode};
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, StreamProtocol, Swarm, noise, tcp, yamux};
use networking::rpc::{Protocol, Request, ResponseItem};
use networking::{GossipKind, GossipTopic, Muxers, NetworkEvent};

/// Bound on one attacker stream operation: the node may reset or ignore the stream.
const SHORT: Duration = Duration::from_secs(5);

#[derive(NetworkBehaviour)]
struct AttackerBehaviour {
    gossipsub: gossipsub::Behaviour,
    stream: libp2p_stream::Behaviour,
}

/// A raw libp2p peer that speaks the transport and muxer correctly and nothing above it.
struct Attacker {
    swarm: Swarm<AttackerBehaviour>,
}

impl Attacker {
    fn new() -> Self {
        Self::with_identity(libp2p::identity::Keypair::generate_secp256k1())
    }

    fn with_identity(keypair: libp2p::identity::Keypair) -> Self {
        let swarm = libp2p::SwarmBuilder::with_existing_identity(keypair)
            .with_tokio()
            .with_tcp(
                tcp::Config::default(),
                noise::Config::new,
                yamux::Config::default,
            )
            .expect("tcp transport")
            .with_behaviour(|_| {
                let config = gossipsub::ConfigBuilder::default()
                    .validation_mode(ValidationMode::Anonymous)
                    .max_transmit_size(16 << 20)
                    .message_id_fn(|m: &gossipsub::Message| {
                        let mut h = DefaultHasher::new();
                        m.data.hash(&mut h);
                        gossipsub::MessageId::from(h.finish().to_le_bytes().to_vec())
                    })
                    .build()
                    .expect("gossipsub config");
                AttackerBehaviour {
                    gossipsub: gossipsub::Behaviour::new(MessageAuthenticity::Anonymous, config)
                        .expect("gossipsub"),
                    stream: libp2p_stream::Behaviour::new(),
                }
            })
            .expect("behaviour")
            .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
            .build();
        Self { swarm }
    }

    /// Dials `addr` and drives the swarm until the target is connected and subscribed to
    /// `topic`.
    async fn connect_and_join(&mut self, addr: Multiaddr, topics: &[GossipTopic]) {
        for topic in topics {
            self.swarm
                .behaviour_mut()
                .gossipsub
                .subscribe(&gossipsub::IdentTopic::new(topic.to_string()))
                .expect("subscribe");
        }
        self.swarm.dial(addr).expect("dial");
        let wanted = topics[0].to_string();
        tokio::time::timeout(TIMEOUT, async {
            loop {
                if let SwarmEvent::Behaviour(AttackerBehaviourEvent::Gossipsub(
                    gossipsub::Event::Subscribed { topic, .. },
                )) = self.swarm.select_next_some().await
                    && topic.as_str() == wanted
                {
                    return;
                }
            }
        })
        .await
        .expect("target subscribed");
    }

    /// Like [`Self::connect_and_join`], but `false` when the node closes the connection first
    /// or does not serve it within the timeout.
    async fn try_connect_and_join(&mut self, addr: Multiaddr, topics: &[GossipTopic]) -> bool {
        for topic in topics {
            self.swarm
                .behaviour_mut()
                .gossipsub
                .subscribe(&gossipsub::IdentTopic::new(topic.to_string()))
                .expect("subscribe");
        }
        self.swarm.dial(addr).expect("dial");
        let wanted = topics[0].to_string();
        tokio::time::timeout(TIMEOUT, async {
            loop {
                match self.swarm.select_next_some().await {
                    SwarmEvent::Behaviour(AttackerBehaviourEvent::Gossipsub(
                        gossipsub::Event::Subscribed { topic, .. },
                    )) if topic.as_str() == wanted => return true,
                    SwarmEvent::ConnectionClosed {
                        num_established: 0, ..
                    }
                    | SwarmEvent::OutgoingConnectionError { .. } => return false,
                    _ => {}
                }
            }
        })
        .await
        // A node that neither serves the peer (its subscriptions never arrive) nor closes the
        // connection within the timeout has not accepted it either; under load the refusal
        // of a banned peer can stall in the handshake instead of closing cleanly.
        .unwrap_or(false)
    }

    /// Drives the swarm until the connection to the target closes.
    async fn wait_disconnected(&mut self) {
        tokio::time::timeout(TIMEOUT, async {
            loop {
                if let SwarmEvent::ConnectionClosed {
                    num_established: 0, ..
                } = self.swarm.select_next_some().await
                {
                    return;
                }
            }
        })
        .await
        .expect("the node disconnects the attacker");
    }
}

/// Keeps an attacker's swarm polled (connection upkeep) while streams are used from tasks.
fn drive(mut attacker: Attacker) -> tokio::task::JoinHandle<Attacker> {
    tokio::spawn(async move {
        // Runs until the node drops the connection.
        attacker.wait_disconnected().await;
        attacker
    })
}

fn honest_config() -> networking::NetworkConfig {
    let mut config = local_config();
    config.quic_port = None;
    config.discovery_port = None;
    config.muxers = Muxers::YamuxAndMplex;
    config.gossip_kinds = vec![GossipKind::BeaconBlock, GossipKind::DataColumnSidecar(3)];
    config
}

/// One connection's worth of garbage: every req/resp protocol, then every topic, until the node
/// drops the connection. Returns how many streams the node answered with `InvalidRequest`.
async fn garbage_round(
    keypair: libp2p::identity::Keypair,
    addr: Multiaddr,
    topics: &[GossipTopic],
    node_peer: libp2p::PeerId,
) -> usize {
    let mut attacker = Attacker::with_identity(keypair);
    if !attacker.try_connect_and_join(addr, topics).await {
        // Refused: the node no longer accepts this peer.
        return 0;
    }
    // Streams are opened from this task while a second task polls the swarm.
    let control = attacker.swarm.behaviour().stream.new_control();
    let gossip_topics = topics.to_vec();
    let (publish_tx, mut publish_rx) = tokio::sync::oneshot::channel::<()>();
    let driver = tokio::spawn(async move {
        let mut published = false;
        tokio::time::timeout(TIMEOUT, async {
            loop {
                tokio::select! {
                    event = attacker.swarm.select_next_some() => {
                        if let SwarmEvent::ConnectionClosed { num_established: 0, .. } = event {
                            return;
                        }
                    }
                    Ok(()) = &mut publish_rx, if !published => {
                        published = true;
                        for (i, topic) in gossip_topics.iter().enumerate() {
                            for j in 0..3u8 {
                                let garbage = vec![0xde, 0xad, i as u8, j, 0xbe, 0xef];
                                let topic = gossipsub::IdentTopic::new(topic.to_string());
                                let _ = attacker.swarm.behaviour_mut().gossipsub.publish(topic, garbage);
                            }
                        }
                    }
                }
            }
        })
        .await
        .expect("the node disconnects the attacker");
    });
    let mut answered_with_error = 0;
    for protocol in Protocol::ALL {
        if driver.is_finished() {
            break;
        }
        let mut control = control.clone();
        let protocol = StreamProtocol::new(protocol.protocol_id());
        let Ok(Ok(mut stream)) =
            tokio::time::timeout(SHORT, control.open_stream(node_peer, protocol)).await
        else {
            break;
        };
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(SHORT, async {
            stream
                .write_all(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3])
                .await?;
            stream.close().await?;
            stream.read_to_end(&mut reply).await
        })
        .await;
        if reply.first() == Some(&1) {
            answered_with_error += 1;
        }
    }
    let _ = publish_tx.send(());
    tokio::time::timeout(TIMEOUT, driver)
        .await
        .expect("attacker disconnected")
        .expect("driver task");
    answered_with_error
}

/// The two tests run one after the other: the flood would otherwise starve the ban test's
/// handshakes on a 2-core machine (and its RSS measurement would include the other test).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_peer_is_banned_while_honest_peer_is_served() {
    let _serial = SERIAL.lock().await;
    let mut node = TestNode::start(honest_config()).await;
    let addr = node.handle.tcp_addr().unwrap();
    let mut honest_config = honest_config();
    honest_config.static_peers = vec![addr.clone()];
    let mut honest = TestNode::start(honest_config).await;
    let node_peer = node.handle.local_peer_id();
    honest
        .wait_for("the honest connection", |e| match e {
            NetworkEvent::PeerConnected { peer_id, .. } if *peer_id == node_peer => Some(()),
            _ => None,
        })
        .await;

    let digest = node.handle.fork_context().digest_at_epoch(0);
    let topics: Vec<GossipTopic> = [GossipKind::BeaconBlock, GossipKind::DataColumnSidecar(3)]
        .into_iter()
        .map(|k| GossipTopic::new(k, digest))
        .collect();
    let keypair = libp2p::identity::Keypair::generate_secp256k1();
    let attacker_peer = keypair.public().to_peer_id();

    // The first round gets the attacker penalised and disconnected.
    let answered = garbage_round(keypair.clone(), addr.clone(), &topics, node_peer).await;
    assert!(answered > 0, "the node answers InvalidRequest");
    node.wait_for("the disconnection", |e| match e {
        NetworkEvent::PeerDisconnected { peer_id } if *peer_id == attacker_peer => Some(()),
        _ => None,
    })
    .await;
    assert!(node.handle.peer_score(attacker_peer).await < 0.0);

    // Coming back with more garbage ends in a ban.
    for _ in 0..5 {
        if node.handle.is_banned(attacker_peer).await {
            break;
        }
        garbage_round(keypair.clone(), addr.clone(), &topics, node_peer).await;
    }
    node.wait_for("the ban", |e| match e {
        NetworkEvent::PeerBanned { peer_id } if *peer_id == attacker_peer => Some(()),
        _ => None,
    })
    .await;
    assert!(node.handle.is_banned(attacker_peer).await);
    assert!(node.handle.peer_score(attacker_peer).await <= networking::peer_manager::BAN_THRESHOLD);
    // A banned peer that comes back is dropped at once.
    assert_eq!(garbage_round(keypair, addr, &topics, node_peer).await, 0);

    // The honest peer is still connected and served.
    let response = honest.request(node_peer, Request::Ping(7)).await;
    assert!(matches!(response.items.as_slice(), [ResponseItem::Pong(_)]));
    assert!(
        node.handle
            .connected_peers()
            .await
            .contains(&honest.handle.local_peer_id())
    );
}

/// Resident set size of this process, in bytes.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("linux /proc");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("statm resident field");
    pages * 4096
}

/// The cap this test states: a flood claiming 2000 × 1 GiB of decompressed gossip and
/// 200 × 1 GiB req/resp payloads may grow the process by at most 64 MiB.
const MEMORY_GROWTH_CAP: u64 = 64 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_bounded_under_a_flood_of_oversized_messages() {
    let _serial = SERIAL.lock().await;
    let node = TestNode::start(honest_config()).await;
    let addr = node.handle.tcp_addr().unwrap();
    let node_peer = node.handle.local_peer_id();
    let digest = node.handle.fork_context().digest_at_epoch(0);
    let topic = GossipTopic::new(GossipKind::BeaconBlock, digest);
    let before = rss_bytes();

    // Several identities in turn, each flooding until the node bans it.
    let mut sent = 0;
    for _ in 0..4 {
        let mut attacker = Attacker::new();
        attacker.connect_and_join(addr.clone(), &[topic]).await;
        for i in 0..500u32 {
            // A snappy block header claiming 1 GiB, then 1 KiB of junk.
            let mut bomb = vec![0x80, 0x80, 0x80, 0x80, 0x04];
            bomb.extend(i.to_le_bytes());
            bomb.extend(vec![0u8; 1024]);
            if attacker
                .swarm
                .behaviour_mut()
                .gossipsub
                .publish(gossipsub::IdentTopic::new(topic.to_string()), bomb)
                .is_ok()
            {
                sent += 1;
            }
        }
        let control = attacker.swarm.behaviour().stream.new_control();
        let driver = drive(attacker);
        for _ in 0..50 {
            // Once the node dropped the attacker, its swarm is no longer polled: stop.
            if driver.is_finished() {
                break;
            }
            let mut control = control.clone();
            let protocol = StreamProtocol::new(Protocol::BlocksByRootV2.protocol_id());
            let Ok(Ok(mut stream)) =
                tokio::time::timeout(SHORT, control.open_stream(node_peer, protocol)).await
            else {
                break;
            };
            // varint(1 GiB) and a first frame of 64 KiB.
            let mut payload = vec![0x80, 0x80, 0x80, 0x80, 0x04];
            payload.extend(vec![0u8; 64 << 10]);
            let _ = tokio::time::timeout(SHORT, stream.write_all(&payload)).await;
        }
        let _ = tokio::time::timeout(TIMEOUT, driver).await;
    }
    assert!(sent > 0);
    let after = rss_bytes();
    let growth = after.saturating_sub(before);
    assert!(
        growth < MEMORY_GROWTH_CAP,
        "RSS grew by {} MiB (cap {} MiB)",
        growth >> 20,
        MEMORY_GROWTH_CAP >> 20
    );
}
