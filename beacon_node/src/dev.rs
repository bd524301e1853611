//! `arbor dev`: a local Fulu devnet in one process — an interop genesis with every fork through
//! Fulu at epoch 0, the mock execution client with blobs in every payload, a supernode beacon
//! node and a validator client that drives it over the Beacon API on loopback. With
//! `--builder-mock`, the mock relay runs beside the mock execution client: every node asks it
//! for bids and the validator clients register with it and sign blinded blocks.
//!
//! Compiled with the `mock-el` feature (the default), as it runs the mock execution client.
//!
//! **Threads.** The nodes hold to one thread budget together: one set of beacon processor pools
//! (`--worker-threads` main threads, `bp-main-*`, and one backfill thread) runs every node's CPU
//! work, and the nodes' async side (networking, the Beacon APIs, the timers, the engine
//! clients) runs on the process's main thread, a current-thread runtime. The validator
//! clients, the mock execution client and the mock relay are not the nodes (on a real network
//! they are programs of their own): they run on a runtime of their own, `dev-tools` threads.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use std::sync::Arc;
use std::time::Duration;

use crate::Preset;
use beacon_chain::events::ChainEvent;
use beacon_chain::execution::forkchoice_state_of;
use beacon_chain::{BeaconChain, HeadSnapshot};
use builder_client::mock_relay::MockRelay;
use builder_client::{BuilderConfig, SubmitVersion};
use clap::Args;
use client::{Anchor, Client, ClientConfig, ExecutionConfig, NetworkOptions};
use execution_layer::{EngineApiClient, JwtSecret, PayloadAttributes, Timeouts};
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use networking::{Multiaddr, NetworkConfig};
use state_processing::{
    common::{get_current_epoch, get_randao_mix},
    genesis::interop_genesis_state,
    per_block::get_expected_withdrawals,
    per_slot::process_slots,
};
use tokio::sync::broadcast::error::RecvError;
use types::typenum::Unsigned;
use types::{
    Address, ChainSpec, EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Root, SignedBeaconBlock,
    Slot, U256,
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
    /// A BPO blob schedule, `EPOCH:MAX_BLOBS` entries separated by commas (e.g. `2:12,4:15`):
    /// the blob limit changes at those epochs (each a new fork digest). `--blobs` must fit every
    /// limit.
    #[arg(long, value_name = "EPOCH:MAX,...", value_parser = parse_blob_schedule_entry, value_delimiter = ',')]
    blob_schedule: Vec<types::BlobScheduleEntry>,
    /// The chain's preset.
    #[arg(long, value_enum, default_value_t = Preset::Minimal)]
    preset: Preset,
    /// The epoch the devnet forks into Gloas (EIP-7732: blocks carry a bid, payloads come in
    /// envelopes; 0: a Gloas genesis). Without it the devnet stays in Fulu. The mock execution
    /// client speaks the Amsterdam engine API from that epoch's time on.
    #[arg(long, value_name = "EPOCH")]
    gloas_epoch: Option<u64>,
    /// A fault for Gloas devnets: at these slots the proposer publishes its block and withholds
    /// its payload envelope (a self-building proposer that never reveals its payload): the
    /// block stays EMPTY and the next one builds on its parent's payload.
    #[arg(
        long,
        value_name = "SLOT,...",
        value_delimiter = ',',
        requires = "gloas_epoch"
    )]
    withhold_envelope_slots: Vec<u64>,
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
    /// Port of the first node's Prometheus metrics on 127.0.0.1 (node `i` uses this + `i`;
    /// 0: any free port).
    #[arg(long, default_value_t = 5054)]
    metrics_port: u16,
    /// Seconds between start-up and genesis.
    #[arg(long, default_value_t = 3)]
    genesis_delay: u64,
    /// Exit (successfully) once this epoch is finalized.
    #[arg(long, value_name = "EPOCH")]
    until_finalized_epoch: Option<u64>,
    /// Exit with an error if `--until-finalized-epoch` is not reached by this slot.
    #[arg(long, value_name = "SLOT", requires = "until_finalized_epoch")]
    max_slots: Option<u64>,
    /// Run the mock relay (builder API) beside the mock execution client: it builds a payload
    /// for every slot (paying 0xb1…b1) and bids 1 ETH for it, the nodes ask it for headers and
    /// unblind through it (submitBlindedBlock v1), the validator clients register and sign
    /// blinded blocks. `beacon_builder_bids_total` on the metrics endpoint tells the outcomes.
    #[arg(long)]
    builder_mock: bool,
    /// Threads for the nodes' CPU work: the beacon processor main pool every node of the devnet
    /// shares (gossip, imports, requests, the API's, block production's and the timers' CPU
    /// work, and the chain's data-parallel work), beside one backfill thread. The nodes' async
    /// side runs on the main thread. Default: the machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    worker_threads: Option<u16>,
    /// Each node's database page cache in MiB (as `arbor bn --db-cache-mib`).
    #[arg(long, value_name = "MIB", default_value_t = (client::DEFAULT_DB_CACHE_BYTES >> 20) as u64, value_parser = clap::value_parser!(u64).range(16..=65536))]
    db_cache_mib: u64,
}

/// The fee recipient of the mock relay's payloads.
const RELAY_FEE_RECIPIENT: Address = Address::repeat_byte(0xb1);

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
    let worker_threads = args.worker_threads.map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get()),
        usize::from,
    );
    // The nodes' CPU threads, one set for them all (see the module's docs).
    let pools =
        client::ProcessorPools::new(worker_threads, 1).map_err(|e| format!("worker pools: {e}"))?;
    // The nodes' async side on this thread.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    // The validator clients', the mock execution client's and the mock relay's.
    let tools = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("dev-tools")
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let handle = tools.handle().clone();
    let outcome = match args.preset {
        Preset::Minimal => runtime.block_on(run_devnet::<MinimalEthSpec>(
            args,
            ChainSpec::minimal(),
            pools,
            handle,
        )),
        Preset::Mainnet => runtime.block_on(run_devnet::<MainnetEthSpec>(
            args,
            ChainSpec::mainnet(),
            pools,
            handle,
        )),
    };
    drop(runtime);
    tools.shutdown_timeout(Duration::from_secs(5));
    outcome
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

/// Runs the devnet: its nodes on `pools` and the calling runtime, the validator clients, the
/// mock execution client and the mock relay on `tools`.
async fn run_devnet<E: EthSpec>(
    args: DevArgs,
    base: ChainSpec,
    pools: client::ProcessorPools,
    tools: tokio::runtime::Handle,
) -> Result<(), String> {
    let mut spec = devnet_spec(base, args.seconds_per_slot, &args.blob_schedule)?;
    if let Some(epoch) = args.gloas_epoch {
        spec.gloas_fork_epoch = epoch;
    }
    // The lowest limit the chain will have: at genesis and at every scheduled epoch.
    let max_blobs = std::iter::once(0)
        .chain(spec.blob_schedule.iter().map(|e| e.epoch))
        .map(|epoch| spec.get_max_blobs_per_block(epoch))
        .min()
        .unwrap_or(0);
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
    // On the nodes' pool (the generation fans out on the caller's rayon pool): not on rayon's
    // global pool, a second set of threads.
    let blobs = args.blobs;
    let pool = pools.main().clone();
    let blob_sets = tokio::task::spawn_blocking(move || {
        pool.install(|| mock_execution_layer::blobs::generate_blob_sets(0, BLOB_VARIETY, blobs))
    })
    .await
    .map_err(|e| format!("blob generation: {e}"))?
    .map_err(|e| format!("blob generation: {e}"))?;
    let genesis_time = execution_layer::jwt::unix_now() + args.genesis_delay;

    let jwt_secret = JwtSecret::random();
    let mock = tools
        .spawn(MockExecutionLayer::<E>::start(
            MockConfig {
                jwt_secret: jwt_secret.clone(),
                spec: (*spec).clone(),
                genesis_time,
                seed: 0,
                chain_id: 1337,
            },
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        ))
        .await
        .map_err(|e| format!("mock execution client: {e}"))?
        .map_err(|e| format!("mock execution client: {e}"))?;
    mock.set_blobs_per_payload(args.blobs);
    mock.set_blob_sets(blob_sets);
    let relay = if args.builder_mock {
        let engine = EngineApiClient::new(mock.url(), jwt_secret.clone(), Timeouts::default())
            .map_err(|e| format!("mock relay's engine client: {e}"))?;
        let relay = tools
            .spawn(MockRelay::<E>::start(
                (*spec).clone(),
                bls::SecretKey::random(),
                Arc::new(engine),
            ))
            .await
            .map_err(|e| format!("mock relay: {e}"))?
            .map_err(|e| format!("mock relay: {e}"))?;
        relay.set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));
        Some(Arc::new(relay))
    } else {
        None
    };

    // On the pool: hashing the state fans out on the caller's rayon pool.
    let genesis = pools
        .main()
        .install(|| {
            interop_genesis_state::<E>(
                args.validators,
                genesis_time,
                mock.genesis_block_hash(),
                &spec,
            )
        })
        .map_err(|e| format!("genesis: {e}"))?;
    let mut nodes: Vec<Client<E>> = Vec::with_capacity(args.nodes);
    let mut peer_addrs: Vec<Multiaddr> = Vec::new();
    for i in 0..args.nodes {
        // A node of several dials every node started before it, on loopback.
        let network = (args.nodes > 1).then(|| {
            // TCP and discv5 on loopback (QUIC off: one transport is enough here); the ENRs
            // go into the network directory's boot_enr.yaml for nodes that join later.
            let mut config = NetworkConfig::local(Root::ZERO);
            config.quic_port = None;
            config.static_peers = peer_addrs.clone();
            NetworkOptions {
                config,
                supernode: true,
                genesis_backfill: false,
            }
        });
        let http_port = match args.http_port {
            0 => 0,
            port => port
                .checked_add(i as u16)
                .ok_or_else(|| format!("--http-port {port}: no room for {} nodes", args.nodes))?,
        };
        let metrics_port = match args.metrics_port {
            0 => 0,
            port => port.checked_add(i as u16).ok_or_else(|| {
                format!("--metrics-port {port}: no room for {} nodes", args.nodes)
            })?,
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
            metrics_listen: Some(SocketAddr::from((Ipv4Addr::LOCALHOST, metrics_port))),
            suggested_fee_recipient: Address::repeat_byte(0xfe),
            graffiti: validator_client::config::parse_graffiti(&format!("arbor dev {i}"))?,
            chain: beacon_chain::ChainConfig::default(),
            worker_threads: pools.main().current_num_threads(),
            pools: Some(pools.clone()),
            builder: relay.as_ref().map(|relay| BuilderConfig {
                // The mock relay's v2 records the block without publishing it.
                submit: SubmitVersion::V1,
                ..BuilderConfig::new(relay.url_with_pubkey())
            }),
            store: client::StoreConfig {
                cache_size_bytes: usize::try_from(args.db_cache_mib << 20).unwrap_or(usize::MAX),
                ..client::StoreConfig::default()
            },
            // The devnet runs the forks it schedules (`--gloas-epoch`), from genesis too.
            unreleased_forks: true,
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
    let urls = |addrs: &[SocketAddr], path: &str| {
        addrs
            .iter()
            .map(|a| format!("http://{a}{path}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let metrics: Vec<SocketAddr> = nodes.iter().filter_map(Client::metrics_addr).collect();
    let enrs: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            n.network()
                .and_then(|h| h.local_enr().map(|e| e.to_base64()))
        })
        .collect();
    let testnet = write_testnet_dir::<E>(&datadir.path().join("testnet"), &spec, &genesis, &enrs)?;
    println!(
        "arbor dev: {} validators, {} blobs per block, {} s slots, genesis at {genesis_time}; Beacon API on {}; metrics on {}; datadir {}; network directory {}",
        args.validators,
        args.blobs,
        args.seconds_per_slot,
        urls(&apis, ""),
        urls(&metrics, "/metrics"),
        datadir.path().display(),
        testnet.display()
    );

    // One validator client per node, each with its share of the validators.
    let (stop_vc, vc_stop) = tokio::sync::watch::channel(false);
    let mut vcs = Vec::with_capacity(nodes.len());
    let mut vc_registries = Vec::with_capacity(nodes.len());
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
        vc_config.withhold_envelope_slots = args.withhold_envelope_slots.iter().copied().collect();
        if args.builder_mock {
            // Registrations name a fee recipient: the validator client sends none without one.
            vc_config.fee_recipient = Some(Address::repeat_byte(0xfe));
            vc_config.builder_proposals = true;
        }
        let registry = prometheus::Registry::new();
        vc_config.metrics = Some(registry.clone());
        vc_registries.push(registry);
        let mut rx = vc_stop.clone();
        vcs.push(tools.spawn(async move {
            validator_client::run::<E>(vc_config, async move {
                let _ = rx.wait_for(|stop| *stop).await;
            })
            .await
        }));
    }

    let feeder = match (&relay, nodes.first()) {
        (Some(relay), Some(node)) => {
            println!("arbor dev: mock relay on {}", relay.url());
            Some(tools.spawn(feed_relay(relay.clone(), node.chain().clone())))
        }
        _ => None,
    };

    let outcome = watch_devnet(&nodes, &vc_registries, &args).await;
    if let Some(feeder) = feeder {
        feeder.abort();
    }

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

/// The mock relay's feed (`--builder-mock`): half-way through each slot, a payload for the
/// next slot on the head of `chain`, as a real relay learns the attributes from its beacon
/// node's `payload_attributes` events. A failure costs only that slot's bid (the nodes then
/// propose their local payload).
async fn feed_relay<E: EthSpec>(relay: Arc<MockRelay<E>>, chain: Arc<BeaconChain<E>>) {
    let slot_ms = chain.spec().slot_duration_ms;
    let mut next = chain.slot_at_ms(chain.now_ms()) + 1;
    loop {
        let at = chain.compute_time_at_slot_ms(next.saturating_sub(1)) + slot_ms / 2;
        tokio::time::sleep(Duration::from_millis(at.saturating_sub(chain.now_ms()))).await;
        if let Err(error) = prepare_relay_payload(&relay, &chain, next).await {
            tracing::debug!(slot = next, %error, "mock relay: no payload for the slot");
        }
        next = (chain.slot_at_ms(chain.now_ms()) + 1).max(next + 1);
    }
}

/// Has the relay build its payload for `slot` on the head: the attributes a proposer's node
/// would send (the slot's time, RANDAO mix, expected withdrawals, the head as parent).
async fn prepare_relay_payload<E: EthSpec>(
    relay: &MockRelay<E>,
    chain: &BeaconChain<E>,
    slot: u64,
) -> Result<(), String> {
    let head = chain.head();
    if head.slot >= slot {
        return Ok(());
    }
    let mut state = head.state.clone();
    process_slots(&mut state, slot, chain.spec()).map_err(|e| format!("{e:?}"))?;
    let view = state.view().map_err(|e| e.to_string())?;
    let attributes = PayloadAttributes {
        timestamp: chain
            .spec()
            .compute_time_at_slot(chain.genesis_time(), slot),
        prev_randao: get_randao_mix(&view, get_current_epoch(&view)),
        suggested_fee_recipient: RELAY_FEE_RECIPIENT,
        withdrawals: get_expected_withdrawals(&view)
            .map_err(|e| e.to_string())?
            .withdrawals
            .iter()
            .map(Into::into)
            .collect(),
        parent_beacon_block_root: head.block_root,
    };
    let forkchoice = forkchoice_state_of(chain, &head).map_err(|e| e.to_string())?;
    relay
        .prepare_payload(slot, forkchoice, &attributes)
        .await
        .map(|_| ())
}

/// A devnet's chain spec: every fork through Fulu at epoch 0, `seconds_per_slot`, and the BPO
/// `blob_schedule` when one is given.
pub(crate) fn devnet_spec(
    base: ChainSpec,
    seconds_per_slot: u64,
    blob_schedule: &[types::BlobScheduleEntry],
) -> Result<ChainSpec, String> {
    let mut spec = base.with_forks_at_genesis_through(ForkName::Fulu);
    spec.seconds_per_slot = seconds_per_slot;
    spec.slot_duration_ms = seconds_per_slot * 1000;
    if !blob_schedule.is_empty() {
        let mut schedule = blob_schedule.to_vec();
        schedule.sort_by_key(|e| e.epoch);
        if schedule.windows(2).any(|w| w[0].epoch == w[1].epoch) {
            return Err("--blob-schedule: two entries for one epoch".into());
        }
        spec.blob_schedule = schedule;
    }
    Ok(spec)
}

/// One `--blob-schedule` entry, `EPOCH:MAX_BLOBS`.
pub(crate) fn parse_blob_schedule_entry(text: &str) -> Result<types::BlobScheduleEntry, String> {
    let (epoch, max) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?}: expected EPOCH:MAX_BLOBS"))?;
    Ok(types::BlobScheduleEntry {
        epoch: epoch
            .trim()
            .parse()
            .map_err(|e| format!("{text:?}: epoch: {e}"))?,
        max_blobs_per_block: max
            .trim()
            .parse()
            .map_err(|e| format!("{text:?}: blob limit: {e}"))?,
    })
}

/// Writes a devnet's network directory: `config.yaml` (every config value, as
/// `/eth/v1/config/spec` serves it), `genesis.ssz`, `boot_enr.yaml` (`enrs`, base64) and
/// `deposit_contract_block.txt`, so that another node (`arbor bn --testnet-dir`, another
/// client) can join.
pub(crate) fn write_testnet_dir<E: EthSpec>(
    dir: &std::path::Path,
    spec: &ChainSpec,
    genesis: &types::BeaconState<E>,
    enrs: &[String],
) -> Result<PathBuf, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{}/{what}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| fail("", &e))?;
    std::fs::write(dir.join("config.yaml"), config_yaml::<E>(spec))
        .map_err(|e| fail("config.yaml", &e))?;
    let mut state = state_processing::CachedBeaconState::new(genesis.clone());
    state.apply_updates().map_err(|e| fail("genesis.ssz", &e))?;
    std::fs::write(
        dir.join("genesis.ssz"),
        ssz::Encode::as_ssz_bytes(&state.state),
    )
    .map_err(|e| fail("genesis.ssz", &e))?;
    let enrs: String = enrs.iter().map(|enr| format!("- {enr}\n")).collect();
    std::fs::write(
        dir.join("boot_enr.yaml"),
        if enrs.is_empty() {
            "[]\n".to_string()
        } else {
            enrs
        },
    )
    .map_err(|e| fail("boot_enr.yaml", &e))?;
    std::fs::write(dir.join("deposit_contract_block.txt"), "0\n")
        .map_err(|e| fail("deposit_contract_block.txt", &e))?;
    Ok(dir.to_path_buf())
}

/// `config.yaml` of `spec`: every value of `/eth/v1/config/spec`, one `KEY: value` line each,
/// the blob schedule as the standard configs write it.
pub(crate) fn config_yaml<E: EthSpec>(spec: &ChainSpec) -> String {
    let mut out = String::new();
    let values = http_api::config_spec::<E>(spec).0;
    // Keys of the base config Arbor does not use (later forks' epochs and versions, …) are
    // kept as they were, for clients that read them.
    for (key, value) in &spec.extra {
        if values.contains_key(key) {
            continue;
        }
        if value.contains('\n') {
            // A list or mapping, re-rendered as YAML: nested under its key.
            out.push_str(&format!("{key}:\n"));
            for line in value.lines() {
                out.push_str(&format!("  {line}\n"));
            }
        } else {
            out.push_str(&format!("{key}: {value}\n"));
        }
    }
    for (key, value) in values {
        match value {
            serde_json::Value::String(text) => out.push_str(&format!("{key}: {text}\n")),
            serde_json::Value::Array(entries) if entries.is_empty() => {
                out.push_str(&format!("{key}: []\n"));
            }
            serde_json::Value::Array(entries) => {
                out.push_str(&format!("{key}:\n"));
                for entry in entries {
                    if let serde_json::Value::Object(fields) = entry {
                        let mut first = true;
                        for (name, v) in fields {
                            let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                            let lead = if first { "  - " } else { "    " };
                            out.push_str(&format!("{lead}{name}: {text}\n"));
                            first = false;
                        }
                    }
                }
            }
            other => out.push_str(&format!("{key}: {other}\n")),
        }
    }
    out
}

/// The sum of the samples of `name` in `registry` (counters and gauges; 0 when absent).
fn metric_sum(registry: &prometheus::Registry, name: &str) -> f64 {
    registry
        .gather()
        .iter()
        .filter(|family| family.name() == name)
        .flat_map(|family| {
            let counter = family.get_field_type() == prometheus::proto::MetricType::COUNTER;
            family.get_metric().iter().map(move |m| {
                if counter {
                    m.get_counter().get_value()
                } else {
                    m.get_gauge().get_value()
                }
            })
        })
        .sum()
}

/// Follows the devnet until Ctrl-C or the finality target: one status line per slot (head,
/// blobs, peers, checkpoints, missed duties), a summary at the end.
async fn watch_devnet<E: EthSpec>(
    nodes: &[Client<E>],
    vc_registries: &[prometheus::Registry],
    args: &DevArgs,
) -> Result<(), String> {
    let chain = nodes.first().ok_or("a devnet of no nodes")?.chain();
    let mut events = chain.events().subscribe();
    let mut blocks = 0u64;
    let mut short_blocks = 0u64;
    let mut gloas = GloasTally::default();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let missed = || -> u64 {
        let sum: f64 = vc_registries
            .iter()
            .map(|r| metric_sum(r, "vc_duties_missed_total"))
            .sum();
        sum as u64
    };
    // Duties missed before the second epoch (start-up) are reported apart.
    let mut missed_at_epoch_1: Option<u64> = None;
    let slot_ms = chain.spec().slot_duration_ms;
    let mut next_status =
        chain.compute_time_at_slot_ms(chain.slot_at_ms(chain.now_ms()) + 1) + slot_ms / 2;
    loop {
        let wait = Duration::from_millis(next_status.saturating_sub(chain.now_ms()));
        tokio::select! {
            _ = &mut ctrl_c => {
                println!("arbor dev: stopping");
                return Ok(());
            }
            event = events.recv() => match event {
                Ok(ChainEvent::Block { block, .. }) => {
                    if let Ok(Some(b)) = chain.store().get_block(&block) {
                        blocks += 1;
                        if blob_count(&b) < args.blobs {
                            short_blocks += 1;
                        }
                        gloas.count_block(chain, &b);
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return Err("the chain's event bus closed".into()),
            },
            () = tokio::time::sleep(wait) => {
                next_status += slot_ms;
                let slot = chain.slot_at_ms(chain.now_ms());
                let head = chain.head();
                let head_blobs = match chain.store().get_block(&head.block_root) {
                    Ok(Some(b)) => blob_count(&b),
                    _ => 0,
                };
                let peers = metric_sum(nodes[0].registry(), "libp2p_peers") as u64;
                let missed_now = missed();
                if slot >= E::slots_per_epoch() && missed_at_epoch_1.is_none() {
                    missed_at_epoch_1 = Some(missed_now);
                }
                println!(
                    "arbor dev: slot {slot} head {} {} blobs {head_blobs} peers {peers} justified {} finalized {} missed duties {missed_now}",
                    head.slot,
                    head.block_root,
                    head.justified_checkpoint.epoch,
                    head.finalized_checkpoint.epoch,
                );
            }
        }
        // The devnet's finality is the lowest any node has reached.
        let finalized = nodes
            .iter()
            .map(|n| n.chain().head().finalized_checkpoint.epoch)
            .min()
            .unwrap_or(0);
        if let Some(target) = args.until_finalized_epoch {
            if finalized >= target {
                let heads = agreed_heads(nodes, slot_ms).await;
                if heads.len() > 1 {
                    let listed: Vec<String> = nodes
                        .iter()
                        .map(|n| {
                            let head = n.chain().head();
                            format!("{} {}", head.slot, head.block_root)
                        })
                        .collect();
                    println!(
                        "arbor dev: the nodes' heads after a slot: {}",
                        listed.join(", ")
                    );
                }
                let missed_after = missed().saturating_sub(missed_at_epoch_1.unwrap_or(0));
                println!(
                    "arbor dev: finalized epoch {finalized} reached at slot {} on {} node(s): {blocks} blocks, {short_blocks} with fewer than {} blobs; {} distinct head(s); {missed_after} duties missed after the first epoch",
                    chain.slot_at_ms(chain.now_ms()),
                    nodes.len(),
                    args.blobs,
                    heads.len()
                );
                if gloas.blocks > 0 {
                    gloas.print(&chain.head());
                }
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

/// The nodes' distinct heads, given up to one slot to agree: a node that has just
/// imported a block is ahead of one whose copy is still on the wire or being imported, and
/// honest nodes agree within a slot, not at every instant.
async fn agreed_heads<E: EthSpec>(
    nodes: &[Client<E>],
    slot_ms: u64,
) -> std::collections::BTreeSet<types::Hash256> {
    let heads = || -> std::collections::BTreeSet<_> {
        nodes.iter().map(|n| n.chain().head().block_root).collect()
    };
    // Subscribed before the first look, so a head change after it is not missed.
    let mut events: Vec<_> = nodes
        .iter()
        .map(|n| n.chain().events().subscribe())
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(slot_ms);
    loop {
        let now = heads();
        if now.len() <= 1 {
            return now;
        }
        if events.is_empty() {
            return now;
        }
        // Looked at again on any node's next chain event, until the slot is over.
        let next = futures::future::select_all(events.iter_mut().map(|rx| Box::pin(rx.recv())));
        let closed = match tokio::time::timeout_at(deadline, next).await {
            Err(_) => return heads(),
            Ok((Err(RecvError::Closed), index, _)) => Some(index),
            Ok(_) => None,
        };
        if let Some(index) = closed {
            events.swap_remove(index);
        }
    }
}

/// How many blobs `block` commits to (a Gloas block through its bid), Electra's included: the
/// devnet counts the blobs it made, whatever carries them.
/// What the devnet's Gloas blocks say of their payloads and of the payload timeliness
/// committee: the blocks seen, and the PTC votes they packed on their parents (a block packs
/// only the votes of the slot right before its own, so only parents there count).
#[derive(Debug, Default)]
struct GloasTally {
    /// Gloas blocks imported.
    blocks: u64,
    /// The first Gloas block's slot.
    first_slot: Option<Slot>,
    /// PTC positions that could have voted on a Gloas parent of the slot before.
    ptc_positions: u64,
    /// Of those, the positions with a vote in the child block.
    ptc_votes: u64,
}

impl GloasTally {
    fn count_block<E: EthSpec>(&mut self, chain: &BeaconChain<E>, block: &SignedBeaconBlock<E>) {
        let SignedBeaconBlock::Gloas(signed) = block else {
            return;
        };
        let message = &signed.message;
        self.blocks += 1;
        self.first_slot = Some(
            self.first_slot
                .map_or(message.slot, |s| s.min(message.slot)),
        );
        let parent_is_gloas_and_previous = matches!(
            chain.store().get_block(&message.parent_root),
            Ok(Some(SignedBeaconBlock::Gloas(parent))) if parent.message.slot + 1 == message.slot
        );
        if parent_is_gloas_and_previous {
            self.ptc_positions += E::PtcSize::to_u64();
            let mut voted = vec![false; E::PtcSize::to_usize()];
            for attestation in message.body.payload_attestations.iter() {
                for (i, bit) in attestation.aggregation_bits.iter().enumerate() {
                    if bit && let Some(v) = voted.get_mut(i) {
                        *v = true;
                    }
                }
            }
            self.ptc_votes += voted.iter().filter(|v| **v).count() as u64;
        }
    }

    /// `arbor dev: Gloas: B blocks, F of D block slots FULL on the head's chain; PTC
    /// participation P% (V of N positions); EMPTY block slots [S, ...]`. A slot's payload is FULL when the head's chain built on it (the
    /// head state's `execution_payload_availability`); the head's own slot is not decided yet
    /// and is left out.
    fn print<E: EthSpec>(&self, head: &HeadSnapshot<E>) {
        let n = E::SlotsPerHistoricalRoot::to_u64();
        let (mut full, mut decided) = (0u64, 0u64);
        let mut empty = Vec::new();
        if let (Some(first), Ok(view)) = (self.first_slot, head.state.view())
            && let Ok(g) = view.gloas()
        {
            let roots = view.block_roots;
            for slot in first.max(head.slot.saturating_sub(n))..head.slot {
                let i = (slot % n) as usize;
                // A slot with a block of its own (not a skipped slot's repeated root).
                let own_block = slot == 0 || roots.get(i) != roots.get(((slot - 1) % n) as usize);
                if own_block {
                    decided += 1;
                    if g.execution_payload_availability.get(i).unwrap_or(false) {
                        full += 1;
                    } else {
                        empty.push(slot);
                    }
                }
            }
        }
        let participation = if self.ptc_positions == 0 {
            0.0
        } else {
            100.0 * self.ptc_votes as f64 / self.ptc_positions as f64
        };
        println!(
            "arbor dev: Gloas: {} blocks, {full} of {decided} block slots FULL on the head's chain; PTC participation {participation:.1}% ({} of {} positions); EMPTY block slots {empty:?}",
            self.blocks, self.ptc_votes, self.ptc_positions
        );
    }
}

fn blob_count<E: EthSpec>(block: &SignedBeaconBlock<E>) -> usize {
    block.committed_blob_kzg_commitments().map_or(0, <[_]>::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The network directory's `config.yaml` reads back as the devnet's chain spec (another
    /// node joining with `--testnet-dir` runs the same chain).
    #[test]
    fn config_yaml_reads_back_as_the_same_spec() {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        spec.seconds_per_slot = 2;
        spec.slot_duration_ms = 2000;
        let yaml = config_yaml::<MinimalEthSpec>(&spec);
        let back = ChainSpec::from_config_yaml(&yaml).expect("config.yaml parses");
        // Everything Arbor reads is the same (the list of keys it does not use differs: the
        // file also carries the preset's values, as `config/spec` serves them).
        let used = |s: &ChainSpec| {
            let text = s.describe();
            text.split("Keys not used")
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(used(&back), used(&spec));
        for key in spec.extra.keys() {
            assert!(back.extra.contains_key(key), "{key} kept");
        }
        assert_eq!(back.slot_duration_ms, 2000);
        assert_eq!(back.fulu_fork_epoch, 0);
        assert_eq!(back.blob_schedule, spec.blob_schedule);
        assert_eq!(back.genesis_fork_version, spec.genesis_fork_version);
    }
}
