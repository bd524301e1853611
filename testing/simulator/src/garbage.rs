//! A peer that sends garbage on every gossip topic and req/resp protocol: a raw libp2p node
//! (TCP, noise, yamux, gossipsub) that learns the target's topics from its subscriptions,
//! publishes bytes that are no valid message on each, and opens a stream of every eth2
//! protocol with a malformed request, connection after connection, until the target refuses
//! it.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use libp2p::gossipsub::{self, MessageAuthenticity, ValidationMode};
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, StreamProtocol, Swarm, noise, tcp, yamux};
use networking::rpc::Protocol;

/// Bound on a round (connect, send, be disconnected).
const ROUND: Duration = Duration::from_secs(30);
/// Bound on one stream's exchange.
const STREAM: Duration = Duration::from_secs(5);

#[derive(NetworkBehaviour)]
struct GarbageBehaviour {
    gossipsub: networking::gossip::GossipBehaviour,
    stream: libp2p_stream::Behaviour,
}

/// What the garbage peer saw.
#[derive(Debug, Default, Clone)]
pub struct GarbageOutcome {
    /// Connections the target accepted (and served its subscriptions on).
    pub rounds_served: usize,
    /// Gossip messages published.
    pub published: usize,
    /// Req/resp streams opened.
    pub streams: usize,
    /// Whether the target refused a connection at the end (banned).
    pub refused: bool,
    /// Why each connection that was not served ended: the dial's error, the target closing it
    /// (with the cause libp2p gives), or no subscriptions in time.
    pub unserved: Vec<String>,
}

fn swarm(keypair: libp2p::identity::Keypair) -> Result<Swarm<GarbageBehaviour>, String> {
    Ok(libp2p::SwarmBuilder::with_existing_identity(keypair)
        .with_tokio()
        .with_tcp(
            tcp::Config::default(),
            noise::Config::new,
            yamux::Config::default,
        )
        .map_err(|e| e.to_string())?
        .with_behaviour(
            |_| -> Result<GarbageBehaviour, Box<dyn std::error::Error + Send + Sync>> {
                // The node's limits on a greeting: gossipsub's defaults (100 subscriptions,
                // 16 KiB of them) drop a supernode's whole greeting, and the peer would never
                // learn the node's topics.
                let config = gossipsub::ConfigBuilder::default()
                    .validation_mode(ValidationMode::Anonymous)
                    .max_control_message_size(networking::gossip::MAX_CONTROL_MESSAGE_SIZE)
                    .message_id_fn(|m: &gossipsub::Message| {
                        let mut h = DefaultHasher::new();
                        m.data.hash(&mut h);
                        gossipsub::MessageId::from(h.finish().to_le_bytes().to_vec())
                    })
                    .build()?;
                Ok(GarbageBehaviour {
                    gossipsub: networking::gossip::GossipBehaviour::new_with_subscription_filter(
                        MessageAuthenticity::Anonymous,
                        config,
                        networking::gossip::subscription_filter(),
                    )?,
                    stream: libp2p_stream::Behaviour::new(),
                })
            },
        )
        .map_err(|e| e.to_string())?
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
        .build())
}

/// A swarm event's kind, with what tells connections and protocols apart.
fn event_name(event: &SwarmEvent<GarbageBehaviourEvent>) -> String {
    match event {
        SwarmEvent::ConnectionEstablished { endpoint, .. } => {
            format!("connected ({})", endpoint.get_remote_address())
        }
        SwarmEvent::ConnectionClosed { cause, .. } => format!("a connection closed ({cause:?})"),
        SwarmEvent::Behaviour(GarbageBehaviourEvent::Gossipsub(e)) => format!("gossipsub {e:?}"),
        SwarmEvent::Dialing { .. } => "dialing".to_string(),
        SwarmEvent::NewListenAddr { .. } => "listening".to_string(),
        other => format!("{other:?}").chars().take(80).collect(),
    }
}

/// One connection's worth of garbage; `None` when the target refused the connection.
async fn round(
    keypair: libp2p::identity::Keypair,
    addr: &Multiaddr,
    round: u8,
    outcome: &mut GarbageOutcome,
) -> Result<Option<()>, String> {
    let mut swarm = swarm(keypair)?;
    swarm.dial(addr.clone()).map_err(|e| e.to_string())?;
    // The target's subscriptions tell its topics (with the fork digest); a moment after the
    // first one arrives, they are all in.
    let mut topics = BTreeSet::new();
    let mut target = None;
    let started = std::time::Instant::now();
    // What the round saw before its subscriptions, for the reason of an unserved connection.
    let mut seen: Vec<String> = Vec::new();
    let learned: Result<(), String> = tokio::time::timeout(ROUND, async {
        loop {
            let wait = if topics.is_empty() {
                ROUND
            } else {
                Duration::from_millis(500)
            };
            match tokio::time::timeout(wait, swarm.select_next_some()).await {
                Err(_) if topics.is_empty() => return Err(String::new()),
                Err(_) => return Ok(()),
                Ok(SwarmEvent::Behaviour(GarbageBehaviourEvent::Gossipsub(
                    gossipsub::Event::Subscribed { peer_id, topic },
                ))) => {
                    target = Some(peer_id);
                    topics.insert(topic.into_string());
                }
                Ok(SwarmEvent::ConnectionClosed {
                    num_established: 0,
                    cause,
                    ..
                }) => return Err(format!("closed by the target ({cause:?})")),
                Ok(SwarmEvent::OutgoingConnectionError { error, .. }) => {
                    return Err(format!("dial failed: {error}"));
                }
                Ok(event) => {
                    if seen.len() < 8 {
                        seen.push(format!(
                            "{:.1}s {}",
                            started.elapsed().as_secs_f64(),
                            event_name(&event)
                        ));
                    }
                }
            }
        }
    })
    .await
    .unwrap_or_else(|_| Err(String::new()));
    let learned = learned.map_err(|reason| {
        if reason.is_empty() {
            format!(
                "no subscriptions within {ROUND:?} (seen: {})",
                if seen.is_empty() {
                    "nothing".to_string()
                } else {
                    seen.join(", ")
                }
            )
        } else {
            reason
        }
    });
    let target = match learned.and_then(|()| target.ok_or_else(|| "no subscriptions".to_string())) {
        Ok(target) => target,
        Err(reason) => {
            outcome.unserved.push(format!("round {round}: {reason}"));
            return Ok(None);
        }
    };
    outcome.rounds_served += 1;
    for topic in &topics {
        let _ = swarm
            .behaviour_mut()
            .gossipsub
            .subscribe(&gossipsub::IdentTopic::new(topic.clone()));
    }
    let control = swarm.behaviour().stream.new_control();
    let driver = tokio::spawn(async move {
        let mut published = 0;
        let deadline = tokio::time::sleep(ROUND);
        tokio::pin!(deadline);
        let mut publish_at = tokio::time::interval(Duration::from_millis(300));
        loop {
            tokio::select! {
                event = swarm.select_next_some() => {
                    if let SwarmEvent::ConnectionClosed { num_established: 0, .. } = event {
                        return published;
                    }
                }
                _ = publish_at.tick() => {
                    for (i, topic) in topics.iter().enumerate() {
                        let garbage = vec![0xde, 0xad, round, i as u8, published as u8, 0xbe, 0xef];
                        if swarm
                            .behaviour_mut()
                            .gossipsub
                            .publish(gossipsub::IdentTopic::new(topic.clone()), garbage)
                            .is_ok()
                        {
                            published += 1;
                        }
                    }
                }
                () = &mut deadline => return published,
            }
        }
    });
    for protocol in Protocol::ALL {
        if driver.is_finished() {
            break;
        }
        let mut control = control.clone();
        let protocol = StreamProtocol::new(protocol.protocol_id());
        let Ok(Ok(mut stream)) =
            tokio::time::timeout(STREAM, control.open_stream(target, protocol)).await
        else {
            break;
        };
        outcome.streams += 1;
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(STREAM, async {
            stream
                .write_all(&[0xff, 0xff, 0xff, 0xff, 0x0f, round, 2, 3])
                .await?;
            stream.close().await?;
            stream.read_to_end(&mut reply).await
        })
        .await;
    }
    outcome.published += driver.await.map_err(|e| e.to_string())?;
    Ok(Some(()))
}

/// Sends garbage to the node listening on `addr` (a `/ip4/.../tcp/...` address), one
/// connection after another with the same identity, until the node refuses it or `rounds`
/// connections were served.
pub async fn run(addr: Multiaddr, rounds: u8) -> Result<GarbageOutcome, String> {
    let mut keypair = libp2p::identity::Keypair::generate_secp256k1();
    let mut outcome = GarbageOutcome::default();
    for r in 0..rounds {
        let mut served = round(keypair.clone(), &addr, r, &mut outcome).await?;
        // A first connection that is not served has nothing to do with the garbage (none was
        // sent yet): the node was busy or at its peer limit. Tried again a few times, each with
        // a fresh identity, so that nothing the node remembers of the last try's (a connection
        // it has not seen close yet) decides the next.
        let mut tries = 1;
        while served.is_none() && outcome.rounds_served == 0 && tries < 4 {
            tokio::time::sleep(Duration::from_secs(2)).await;
            keypair = libp2p::identity::Keypair::generate_secp256k1();
            served = round(keypair.clone(), &addr, r, &mut outcome).await?;
            tries += 1;
        }
        if served.is_none() {
            outcome.refused = true;
            break;
        }
    }
    Ok(outcome)
}
