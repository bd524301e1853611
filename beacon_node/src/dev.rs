//! `arbor dev`: a local Fulu devnet in one process — an interop genesis with every fork through
//! Fulu at epoch 0, the mock execution client with blobs in every payload, a supernode beacon
//! node and a validator client that drives it over the Beacon API on loopback.
//!
//! Compiled with the `mock-el` feature (the default), as it runs the mock execution client.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::Preset;
use beacon_chain::events::ChainEvent;
use clap::Args;
use client::{Anchor, Client, ClientConfig, ExecutionConfig, NetworkOptions};
use execution_layer::{JwtSecret, Timeouts};
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use networking::{Multiaddr, NetworkConfig};
use state_processing::genesis::interop_genesis_state;
use tokio::sync::broadcast::error::RecvError;
use types::{
    Address, Bytes32, ChainSpec, EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Root,
    SignedBeaconBlock,
};

/// Distinct blob sets the mock execution client cycles through.
const BLOB_VARIETY: u64 = 4;

/// The options of `arbor dev`.
#[derive(Debug, Args)]
pub(crate) struct DevArgs {
    /// Validators in the genesis state, all run by the built-in validator client.
    #[arg(long, default_value_t = 64)]
    validators: usize,
    /// Blobs in every execution payload (at most the fork's maximum per block).
    #[arg(long, default_value_t = 6)]
    blobs: usize,
    /// The chain's preset.
    #[arg(long, value_enum, default_value_t = Preset::Minimal)]
    preset: Preset,
    /// Seconds per slot.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=60))]
    seconds_per_slot: u64,
    /// Beacon nodes, each with its own validator client and share of the validators,
    /// connected to each other over libp2p on 127.0.0.1 (one node: no p2p at all).
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Data directory (default: a fresh temporary directory, deleted on exit).
    #[arg(long, value_name = "PATH")]
    datadir: Option<PathBuf>,
    /// Keep the temporary data directory on exit (and print its path).
    #[arg(long)]
    keep_datadir: bool,
    /// Port of the Beacon API on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 5052)]
    http_port: u16,
    /// Seconds between start-up and genesis.
    #[arg(long, default_value_t = 3)]
    genesis_delay: u64,
    /// Exit (successfully) once this epoch is finalized.
    #[arg(long, value_name = "EPOCH")]
    until_finalized_epoch: Option<u64>,
    /// Exit with an error if `--until-finalized-epoch` is not reached by this slot.
    #[arg(long, value_name = "SLOT", requires = "until_finalized_epoch")]
    max_slots: Option<u64>,
}

/// Runs the devnet until Ctrl-C (or until `--until-finalized-epoch` is reached).
pub(crate) fn run(args: DevArgs) -> Result<(), String> {
    if args.nodes == 0 || args.nodes > args.validators.max(1) {
        return Err(format!(
            "--nodes {}: between 1 and the number of validators ({})",
            args.nodes, args.validators
        ));
    }
    if args.validators == 0 {
        return Err("--validators: at least one validator is needed".into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    match args.preset {
        Preset::Minimal => {
            runtime.block_on(run_devnet::<MinimalEthSpec>(args, ChainSpec::minimal()))
        }
        Preset::Mainnet => {
            runtime.block_on(run_devnet::<MainnetEthSpec>(args, ChainSpec::mainnet()))
        }
    }
}

/// The devnet's data directory: the one asked for, or a temporary one.
enum Datadir {
    Given(PathBuf),
    Temporary(tempfile::TempDir),
}

impl Datadir {
    fn path(&self) -> PathBuf {
        match self {
            Self::Given(p) => p.clone(),
            Self::Temporary(t) => t.path().to_path_buf(),
        }
    }
}

async fn run_devnet<E: EthSpec>(args: DevArgs, base: ChainSpec) -> Result<(), String> {
    let mut spec = base.with_forks_at_genesis_through(ForkName::Fulu);
    spec.seconds_per_slot = args.seconds_per_slot;
    spec.slot_duration_ms = args.seconds_per_slot * 1000;
    let max_blobs = spec.get_max_blobs_per_block(0);
    if args.blobs as u64 > max_blobs {
        return Err(format!(
            "--blobs {}: the fork allows at most {max_blobs} blobs per block",
            args.blobs
        ));
    }
    let spec = Arc::new(spec);

    let datadir = match &args.datadir {
        Some(p) => Datadir::Given(p.clone()),
        None => Datadir::Temporary(
            tempfile::Builder::new()
                .prefix("arbor-dev-")
                .tempdir()
                .map_err(|e| format!("temporary datadir: {e}"))?,
        ),
    };
    // Blobs repeat every few blocks and are computed before genesis: payloads then build in
    // milliseconds (a blob's cell proofs take hundreds).
    let blobs = args.blobs;
    let blob_sets = tokio::task::spawn_blocking(move || {
        mock_execution_layer::blobs::generate_blob_sets(0, BLOB_VARIETY, blobs)
    })
    .await
    .map_err(|e| format!("blob generation: {e}"))?
    .map_err(|e| format!("blob generation: {e}"))?;
    let genesis_time = execution_layer::jwt::unix_now() + args.genesis_delay;

    let jwt_secret = JwtSecret::random();
    let mock = MockExecutionLayer::<E>::start(
        MockConfig {
            jwt_secret: jwt_secret.clone(),
            spec: (*spec).clone(),
            genesis_time,
            seed: 0,
            chain_id: 1337,
        },
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .await
    .map_err(|e| format!("mock execution client: {e}"))?;
    mock.set_blobs_per_payload(args.blobs);
    mock.set_blob_sets(blob_sets);

    let genesis = interop_genesis_state::<E>(
        args.validators,
        genesis_time,
        mock.genesis_block_hash(),
        &spec,
    )
    .map_err(|e| format!("genesis: {e}"))?;
    let mut nodes: Vec<Client<E>> = Vec::with_capacity(args.nodes);
    let mut peer_addrs: Vec<Multiaddr> = Vec::new();
    for i in 0..args.nodes {
        // A node of several dials every node started before it, on loopback.
        let network = (args.nodes > 1).then(|| {
            let mut config = NetworkConfig::local(Root::ZERO);
            config.quic_port = None;
            config.discovery_port = None;
            config.static_peers = peer_addrs.clone();
            NetworkOptions {
                config,
                supernode: true,
            }
        });
        let http_port = match args.http_port {
            0 => 0,
            port => port
                .checked_add(i as u16)
                .ok_or_else(|| format!("--http-port {port}: no room for {} nodes", args.nodes))?,
        };
        let node_dir = if args.nodes > 1 {
            datadir.path().join(format!("node-{i}"))
        } else {
            datadir.path()
        };
        let config = ClientConfig {
            datadir: node_dir,
            spec: spec.clone(),
            anchor: Anchor::Genesis(Box::new(genesis.clone())),
            execution: ExecutionConfig {
                url: mock.url(),
                jwt_secret: jwt_secret.clone(),
                timeouts: Timeouts::default(),
            },
            network,
            http_listen: Some(SocketAddr::from((Ipv4Addr::LOCALHOST, http_port))),
            metrics_listen: None,
            suggested_fee_recipient: Address::repeat_byte(0xfe),
            graffiti: graffiti(&format!("arbor dev {i}")),
            chain: beacon_chain::ChainConfig::default(),
            worker_threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        };
        let node = Client::start(config)
            .await
            .map_err(|e| format!("node {i}: {e}"))?;
        if let Some(addr) = node.network().and_then(|n| n.tcp_addr()) {
            peer_addrs.push(addr);
        }
        nodes.push(node);
    }
    let mut apis = Vec::with_capacity(nodes.len());
    for node in &nodes {
        apis.push(
            node.http_addr()
                .ok_or("the devnet's node serves no Beacon API")?,
        );
    }
    println!(
        "arbor dev: {} validators, {} blobs per block, {} s slots, genesis at {genesis_time}; Beacon API on {}; datadir {}",
        args.validators,
        args.blobs,
        args.seconds_per_slot,
        apis.iter()
            .map(|a| format!("http://{a}"))
            .collect::<Vec<_>>()
            .join(", "),
        datadir.path().display()
    );

    // One validator client per node, each with its share of the validators.
    let (stop_vc, vc_stop) = tokio::sync::watch::channel(false);
    let mut vcs = Vec::with_capacity(nodes.len());
    let count = args.validators as u64;
    let share = |i: u64| i * count / args.nodes as u64;
    for (i, api) in apis.iter().enumerate() {
        let i = i as u64;
        let mut vc_config = validator_client::ValidatorClientConfig::new(
            validator_client::KeySource::Interop {
                indices: share(i)..share(i + 1),
            },
            datadir.path().join(format!("validators-{i}")),
        );
        vc_config.beacon_nodes = vec![format!("http://{api}")];
        vc_config.spec = Some((*spec).clone());
        let mut rx = vc_stop.clone();
        vcs.push(tokio::spawn(async move {
            validator_client::run::<E>(vc_config, async move {
                let _ = rx.wait_for(|stop| *stop).await;
            })
            .await
        }));
    }

    let outcome = watch_devnet(&nodes, &args).await;

    let _ = stop_vc.send(true);
    for vc in vcs {
        match vc.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("validator client: {e}"),
            Err(e) => eprintln!("validator client task: {e}"),
        }
    }
    for node in nodes {
        node.shutdown().await;
    }
    mock.go_offline().await;
    match datadir {
        Datadir::Temporary(dir) if args.keep_datadir => {
            println!("arbor dev: datadir kept at {}", dir.keep().display());
        }
        _ => {}
    }
    outcome
}

/// Follows the devnet's head until Ctrl-C or the finality target; one line per head.
async fn watch_devnet<E: EthSpec>(nodes: &[Client<E>], args: &DevArgs) -> Result<(), String> {
    let chain = nodes.first().ok_or("a devnet of no nodes")?.chain();
    let mut events = chain.events().subscribe();
    let mut blocks = 0u64;
    let mut blobs = 0u64;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut tick = tokio::time::interval(Duration::from_millis(chain.spec().slot_duration_ms));
    loop {
        tokio::select! {
            _ = &mut ctrl_c => {
                println!("arbor dev: stopping");
                return Ok(());
            }
            event = events.recv() => match event {
                Ok(ChainEvent::Head { slot, block, .. }) => {
                    let head = chain.head();
                    let commitments = match chain.store().get_block(&block) {
                        Ok(Some(b)) => blob_count(&b),
                        _ => 0,
                    };
                    blocks += 1;
                    blobs += commitments as u64;
                    println!(
                        "arbor dev: head slot {slot} block {block} blobs {commitments} justified {} finalized {}",
                        head.justified_checkpoint.epoch, head.finalized_checkpoint.epoch
                    );
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return Err("the chain's event bus closed".into()),
            },
            _ = tick.tick() => {}
        }
        // The devnet's finality is the lowest any node has reached.
        let finalized = nodes
            .iter()
            .map(|n| n.chain().head().finalized_checkpoint.epoch)
            .min()
            .unwrap_or(0);
        if let Some(target) = args.until_finalized_epoch {
            if finalized >= target {
                let heads: std::collections::BTreeSet<_> =
                    nodes.iter().map(|n| n.chain().head().block_root).collect();
                println!(
                    "arbor dev: finalized epoch {finalized} reached at slot {} on {} node(s): {blocks} heads, {blobs} blobs; {} distinct head(s)",
                    chain.slot_at_ms(chain.now_ms()),
                    nodes.len(),
                    heads.len()
                );
                return Ok(());
            }
            let slot = chain.slot_at_ms(chain.now_ms());
            if let Some(max) = args.max_slots
                && slot > max
            {
                return Err(format!(
                    "finalized epoch {finalized} at slot {slot}: epoch {target} not reached by slot {max}"
                ));
            }
        }
    }
}

fn blob_count<E: EthSpec>(block: &SignedBeaconBlock<E>) -> usize {
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => {
            b.message.body.blob_kzg_commitments.len()
        }
        _ => 0,
    }
}

fn graffiti(text: &str) -> Bytes32 {
    let mut bytes = [0u8; 32];
    let n = text.len().min(32);
    bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
    Bytes32::from(bytes)
}
