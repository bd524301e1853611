//! The network service: builds the swarm (TCP with Noise and yamux/mplex, QUIC), runs
//! gossipsub, identify, eth2 req/resp over raw libp2p streams and discv5, and drives them from
//! one task. The application talks to it through a [`NetworkHandle`] (commands) and a
//! [`NetworkEvents`] stream.
//!
//! This file builds the swarm and spawns the task ([`start`]). The rest, one concern per file:
//! `config` and `errors`; `events` (what the application receives) and `event_sender` (how the
//! service delivers it); `handle` (the commands); `advertised` (ENR fields and subnet bitfields);
//! `streams` (the req/resp stream tasks); and the service task itself: `task` (its state and
//! loop), `swarm_events`, `commands`, `peers` (scores, disconnects, dials, discovery, heartbeat),
//! `reqresp` and `gossip`.

mod advertised;
mod commands;
mod config;
mod errors;
mod event_sender;
mod events;
mod gossip;
mod handle;
mod peers;
mod reqresp;
mod streams;
mod swarm_events;
mod task;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use futures::StreamExt;
use libp2p::gossipsub::MessageAuthenticity;
use libp2p::identity::Keypair;
use libp2p::multiaddr::Protocol as MaProtocol;
use libp2p::swarm::dial_opts::DialOpts;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, StreamProtocol, Swarm, identify, noise, tcp, yamux};
use ssz_types::typenum::{U4, U64, Unsigned};
use tokio::sync::{Semaphore, mpsc, watch};
use types::{ChainSpec, EthSpec};

pub use advertised::{enr_fork_id, next_fork_digest};
pub use config::{Muxers, NetworkConfig};
pub use errors::{NetworkError, RpcError};
pub use events::{InboundRequestId, NetworkEvent, NetworkEvents, OutboundRequestId, Validation};
pub use handle::NetworkHandle;
pub use swarm_events::STALE_CONNECTION_AGE;

use advertised::{bits, fulu_scheduled};
use event_sender::EventSender;
use peers::{DialsUnderWay, dial};
use streams::handle_inbound_stream;
use task::Service;

use crate::dial_gate::DialGate;
use crate::discovery::{Discovery, free_udp_port};
use crate::enr::{Eth2Enr, LocalEnrFields, advertised_ip, build_enr, enr_key_from_keypair};
use crate::fork_context::ForkContext;
use crate::gossip::{GossipBehaviour, gossipsub_config, peer_score_params, peer_score_thresholds};
use crate::metrics::Metrics;
use crate::peer_manager::PeerManager;
use crate::rate_limiter::RateLimiter;
use crate::rpc::{MetaData, Protocol};

#[derive(NetworkBehaviour)]
struct Behaviour {
    gossipsub: GossipBehaviour,
    identify: identify::Behaviour,
    stream: libp2p_stream::Behaviour,
    dial_gate: DialGate,
}

/// Starts the network: builds the swarm, listens, builds the ENR, starts discv5 and spawns the
/// service task on the current tokio runtime.
pub async fn start<E: EthSpec>(
    config: NetworkConfig,
    spec: ChainSpec,
) -> Result<(NetworkHandle<E>, NetworkEvents<E>), NetworkError> {
    let keypair = config
        .keypair
        .clone()
        .unwrap_or_else(Keypair::generate_secp256k1);
    let enr_key = enr_key_from_keypair(&keypair).map_err(|_| NetworkError::KeyType)?;
    let local_peer_id = keypair.public().to_peer_id();
    let fork_context = Arc::new(ForkContext::new(spec, config.genesis_validators_root));
    let slots_per_epoch = E::SlotsPerEpoch::to_u64();
    let slot = Duration::from_millis(fork_context.spec().slot_duration_ms.max(1));

    let behaviour = |key: &Keypair| -> Result<Behaviour, Box<dyn std::error::Error + Send + Sync>> {
        let gossip_config = gossipsub_config(fork_context.clone(), slots_per_epoch)?;
        let mut gossipsub = GossipBehaviour::new_with_subscription_filter(
            MessageAuthenticity::Anonymous,
            gossip_config,
            crate::gossip::subscription_filter(),
        )
        .map_err(String::from)?;
        gossipsub.with_peer_score(
            peer_score_params(slot, slots_per_epoch as u32),
            peer_score_thresholds(),
        )?;
        let identify = identify::Behaviour::new(
            identify::Config::new("eth2/1.0.0".into(), key.public())
                .with_agent_version(format!("arbor/{}", env!("CARGO_PKG_VERSION"))),
        );
        Ok(Behaviour {
            gossipsub,
            identify,
            stream: libp2p_stream::Behaviour::new(),
            dial_gate: DialGate::default(),
        })
    };

    macro_rules! build_swarm {
        ($muxer:expr) => {
            libp2p::SwarmBuilder::with_existing_identity(keypair.clone())
                .with_tokio()
                .with_tcp(
                    tcp::Config::default().nodelay(true),
                    noise::Config::new,
                    $muxer,
                )
                .map_err(|e| NetworkError::Build(e.to_string()))?
                .with_quic()
                .with_behaviour(|key| behaviour(key))
                .map_err(|e| NetworkError::Build(e.to_string()))?
                .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
                .build()
        };
    }
    let mut swarm: Swarm<Behaviour> = match config.muxers {
        Muxers::YamuxAndMplex => {
            build_swarm!((yamux::Config::default, libp2p_mplex::Config::default))
        }
        Muxers::Yamux => build_swarm!(yamux::Config::default),
        Muxers::Mplex => build_swarm!(libp2p_mplex::Config::default),
    };

    // Listen, then learn the ports the OS picked.
    let ip_proto = match config.listen_address {
        IpAddr::V4(ip) => MaProtocol::Ip4(ip),
        IpAddr::V6(ip) => MaProtocol::Ip6(ip),
    };
    let mut expected = 0;
    if let Some(port) = config.tcp_port {
        let addr = Multiaddr::empty()
            .with(ip_proto.clone())
            .with(MaProtocol::Tcp(port));
        swarm
            .listen_on(addr.clone())
            .map_err(|e| NetworkError::Listen(addr, e.to_string()))?;
        expected += 1;
    }
    if let Some(port) = config.quic_port {
        let addr = Multiaddr::empty()
            .with(ip_proto.clone())
            .with(MaProtocol::Udp(port))
            .with(MaProtocol::QuicV1);
        swarm
            .listen_on(addr.clone())
            .map_err(|e| NetworkError::Listen(addr, e.to_string()))?;
        expected += 1;
    }
    let mut listen_addrs: Vec<Multiaddr> = Vec::new();
    while listen_addrs.len() < expected {
        match tokio::time::timeout(Duration::from_secs(10), swarm.select_next_some()).await {
            Ok(SwarmEvent::NewListenAddr { address, .. }) => listen_addrs.push(address),
            Ok(SwarmEvent::ListenerError { error, .. }) => {
                return Err(NetworkError::Build(error.to_string()));
            }
            Ok(_) => {}
            Err(_) => return Err(NetworkError::Build("listeners did not start".into())),
        }
    }
    let port_of = |tcp: bool| {
        listen_addrs.iter().find_map(|a| {
            let mut port = None;
            let mut is_quic = false;
            for p in a.iter() {
                match p {
                    MaProtocol::Tcp(p) if tcp => port = Some(p),
                    MaProtocol::Udp(p) if !tcp => port = Some(p),
                    MaProtocol::QuicV1 => is_quic = true,
                    _ => {}
                }
            }
            if tcp != is_quic { port } else { None }
        })
    };
    let tcp_port = port_of(true);
    let quic_port = port_of(false);

    let metadata = MetaData {
        seq_number: 1,
        attnets: bits::<U64>(&config.attnets),
        syncnets: bits::<U4>(&config.syncnets),
        custody_group_count: config.custody_group_count,
    };

    let (internal_tx, internal_rx) = mpsc::channel(1024);
    let (discovery_tx, discovery_rx) = mpsc::channel(256);
    let mut discovery = None;
    let mut local_enr = None;
    let mut boot_dials = 0u64;
    let mut dials_under_way = DialsUnderWay::new();
    if let Some(port) = config.discovery_port {
        let port = if port == 0 {
            free_udp_port(config.listen_address)?
        } else {
            port
        };
        let ip = advertised_ip(config.enr_address.unwrap_or(config.listen_address));
        let fields = LocalEnrFields {
            ip,
            udp_port: Some(port),
            tcp_port,
            quic_port,
            fork_id: enr_fork_id(&fork_context, config.current_epoch),
            attnets: metadata.attnets.clone(),
            syncnets: metadata.syncnets.clone(),
            custody_group_count: fulu_scheduled(&fork_context)
                .then_some(metadata.custody_group_count),
            next_fork_digest: fulu_scheduled(&fork_context)
                .then(|| next_fork_digest(&fork_context, config.current_epoch)),
        };
        let enr = build_enr(&enr_key, &fields, 1)?;
        let disc = Discovery::start(
            enr.clone(),
            enr_key,
            SocketAddr::new(config.listen_address, port),
            &config.boot_nodes,
            discovery_tx.clone(),
        )
        .await?;
        local_enr = Some(enr);
        // Boot nodes that advertise a libp2p address are dialed at once.
        for boot in &config.boot_nodes {
            if let Ok(peer) = boot.peer_id() {
                let addrs = boot.multiaddrs();
                if !addrs.is_empty()
                    && dial(
                        &mut swarm,
                        &mut dials_under_way,
                        DialOpts::peer_id(peer).addresses(addrs).build(),
                    )
                    .is_ok()
                {
                    boot_dials += 1;
                }
            }
        }
        discovery = Some(disc);
    }
    for addr in &config.static_peers {
        match dial(&mut swarm, &mut dials_under_way, addr.clone().into()) {
            Ok(()) => boot_dials += 1,
            Err(e) => tracing::warn!(%addr, error = %e, "cannot dial static peer"),
        }
    }

    // One accept loop per req/resp protocol.
    let control = swarm.behaviour().stream.new_control();
    let inbound_permits = Arc::new(Semaphore::new(config.max_concurrent_inbound));
    for protocol in Protocol::ALL {
        if protocol.is_light_client() && !config.light_client_server {
            continue;
        }
        let mut accept_control = control.clone();
        let mut incoming = accept_control
            .accept(StreamProtocol::new(protocol.protocol_id()))
            .map_err(|e| NetworkError::Build(e.to_string()))?;
        let internal = internal_tx.clone();
        let fork_context = fork_context.clone();
        let permits = inbound_permits.clone();
        tokio::spawn(async move {
            while let Some((peer_id, stream)) = incoming.next().await {
                // Beyond the permit count, streams are dropped (reset) instead of queued.
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    continue;
                };
                let internal = internal.clone();
                let fork_context = fork_context.clone();
                tokio::spawn(async move {
                    handle_inbound_stream::<E>(peer_id, protocol, stream, internal, fork_context)
                        .await;
                    drop(permit);
                });
            }
        });
    }

    let metrics = Arc::new(Metrics::new()?);
    metrics
        .dials
        .with_label_values(&["boot"])
        .inc_by(boot_dials);
    let (event_tx, event_rx) = mpsc::channel(config.event_capacity.max(1));
    let (command_tx, command_rx) = mpsc::unbounded_channel();
    let (peer_table, peer_table_rx) = watch::channel(0);
    let handle = NetworkHandle {
        tx: command_tx,
        next_request_id: Arc::new(AtomicU64::new(1)),
        local_peer_id,
        listen_addrs,
        local_enr,
        fork_context: fork_context.clone(),
        metrics: metrics.clone(),
        peer_table: peer_table_rx,
    };

    let current_digest = fork_context.digest_at_epoch(config.current_epoch);
    let mut service = Service {
        swarm,
        control,
        fork_context,
        discovery,
        peer_manager: PeerManager::new(config.peer_manager.clone()),
        inbound_limiter: RateLimiter::new(config.rate_limits.clone()),
        outbound_limiter: RateLimiter::new(config.rate_limits.clone()),
        metadata,
        current_epoch: config.current_epoch,
        current_digest,
        subscribed_kinds: BTreeSet::new(),
        subscribed_topics: HashSet::new(),
        pending_inbound: HashMap::new(),
        next_inbound_id: 1,
        internal_tx,
        events: EventSender::new(event_tx, config.event_backlog_limit.max(1), metrics.clone()),
        metrics,
        connection_addrs: HashMap::new(),
        connection_ids: HashMap::new(),
        redial_after_close: HashMap::new(),
        pending_disconnects: HashMap::new(),
        dials_under_way,
        stale_dials: HashSet::new(),
        peer_table,
        slot,
        slots_per_epoch: slots_per_epoch as u32,
    };
    for kind in config.gossip_kinds {
        service.subscribed_kinds.insert(kind);
    }
    service.refresh_subscriptions();
    let heartbeat = config.heartbeat_interval;
    tokio::spawn(service.run(command_rx, internal_rx, discovery_rx, heartbeat));
    Ok((handle, NetworkEvents { rx: event_rx }))
}
