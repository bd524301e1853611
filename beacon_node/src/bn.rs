//! `arbor bn`: the beacon node, with the flags a Lighthouse user already knows.
//!
//! A wrong or missing value is a one-line error naming the flag; the node starts from the
//! datadir's chain, a checkpoint-sync URL, or a Fulu genesis in `--testnet-dir`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use client::{Anchor, Client, ClientConfig, ExecutionConfig, NetworkOptions};
use execution_layer::{JwtSecret, Timeouts};
use networking::NetworkConfig;
use types::{
    Address, BeaconState, Bytes32, ChainSpec, EthSpec, MainnetEthSpec, MinimalEthSpec, Network,
};

/// The options of `arbor bn`.
#[derive(Debug, Args)]
pub(crate) struct BnArgs {
    /// A built-in network: mainnet, sepolia or hoodi.
    #[arg(long, default_value = "mainnet", conflicts_with = "testnet_dir")]
    network: Network,
    /// A directory with a network's `config.yaml` and, for a network whose genesis is at Fulu,
    /// its `genesis.ssz`.
    #[arg(long, value_name = "DIR")]
    testnet_dir: Option<PathBuf>,
    /// Data directory (default: `~/.arbor/<network>`).
    #[arg(long, value_name = "PATH")]
    datadir: Option<PathBuf>,
    /// The execution client's authenticated engine API, e.g. http://127.0.0.1:8551.
    #[arg(long, value_name = "URL")]
    execution_endpoint: Option<String>,
    /// The file holding the hex JWT secret shared with the execution client.
    #[arg(long, value_name = "PATH")]
    execution_jwt: Option<PathBuf>,
    /// A beacon node's Beacon API to fetch the finalized state and block from when the
    /// datadir is empty.
    #[arg(long, value_name = "URL")]
    checkpoint_sync_url: Option<String>,
    /// The root of a block the operator trusts (a weak-subjectivity checkpoint): checkpoint
    /// sync fetches this block and its state instead of the serving node's finalized ones, and
    /// refuses a served block with another root.
    #[arg(long, value_name = "ROOT", requires = "checkpoint_sync_url")]
    checkpoint_block_root: Option<types::Root>,
    /// Backfill blocks to genesis after a checkpoint sync (not only the data availability
    /// window).
    #[arg(long)]
    genesis_backfill: bool,
    /// Serve the Beacon API.
    #[arg(long)]
    http: bool,
    /// Address of the Beacon API.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    http_address: IpAddr,
    /// Port of the Beacon API.
    #[arg(long, default_value_t = 5052)]
    http_port: u16,
    /// Serve Prometheus metrics (also on the Beacon API's `/metrics`).
    #[arg(long)]
    metrics: bool,
    /// Address of the metrics server.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    metrics_address: IpAddr,
    /// Port of the metrics server.
    #[arg(long, default_value_t = 5054)]
    metrics_port: u16,
    /// Address to listen on for peers.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::UNSPECIFIED))]
    listen_address: IpAddr,
    /// TCP port for peers.
    #[arg(long, default_value_t = 9000)]
    port: u16,
    /// UDP port for QUIC (default: --port + 1).
    #[arg(long, conflicts_with = "disable_quic")]
    quic_port: Option<u16>,
    /// Do not listen on or dial QUIC (TCP only).
    #[arg(long)]
    disable_quic: bool,
    /// UDP port for discovery (default: --port).
    #[arg(long)]
    discovery_port: Option<u16>,
    /// The address to advertise in the ENR.
    #[arg(long)]
    enr_address: Option<IpAddr>,
    /// Boot nodes' ENRs, comma-separated.
    #[arg(long, value_delimiter = ',')]
    boot_nodes: Vec<String>,
    /// Peers to keep connected.
    #[arg(long, default_value_t = 100)]
    target_peers: usize,
    /// Custody and serve every data column.
    #[arg(long)]
    supernode: bool,
    /// The fee recipient of proposals whose validator client registered none.
    #[arg(long, value_name = "ADDRESS")]
    suggested_fee_recipient: Option<String>,
    /// Delete the database before starting.
    #[arg(long)]
    purge_db: bool,
    /// A builder relay's URL (builder-specs; `http://0xPUBKEY@host:port` pins the builder's
    /// key): validators that registered get blinded blocks when its bid wins, and the local
    /// payload on any builder failure.
    #[arg(long, value_name = "URL")]
    builder: Option<String>,
    /// Milliseconds the relay has to answer `getHeader`.
    #[arg(long, value_name = "MS", default_value_t = 1000, requires = "builder")]
    builder_timeout: u64,
    /// Milliseconds the relay has to answer `submitBlindedBlock`.
    #[arg(long, value_name = "MS", default_value_t = 3000, requires = "builder")]
    builder_submit_timeout: u64,
    /// Unblind with `submitBlindedBlock` v1 (the relay returns the payload and this node
    /// publishes) instead of Fulu's v2 (the relay publishes).
    #[arg(long, requires = "builder")]
    builder_unblind_v1: bool,
    /// Talk JSON to the relay instead of SSZ.
    #[arg(long, requires = "builder")]
    builder_json: bool,
    /// Do not derive, store or serve light-client bootstraps and updates (on by default).
    #[arg(long)]
    disable_light_client_server: bool,
    /// The database's page cache in MiB (redb's, in the node's memory): what the node keeps
    /// of the stored chain in memory; a smaller one costs reads of cold states and blocks.
    #[arg(long, value_name = "MIB", default_value_t = (client::DEFAULT_DB_CACHE_BYTES >> 20) as u64, value_parser = clap::value_parser!(u64).range(16..=65536))]
    db_cache_mib: u64,
    /// The memory in MiB the beacon states the node holds may take together (fork choice's
    /// block post-states, checkpoint and advanced states; what they share counted once),
    /// measured once per epoch: beyond it the oldest block post-states are let go of and
    /// loaded back from the database when needed.
    #[arg(long, value_name = "MIB", default_value_t = (beacon_chain::DEFAULT_MAX_STATES_BYTES >> 20) as u64, value_parser = clap::value_parser!(u64).range(64..=1048576))]
    state_cache_mib: u64,
    /// Threads for the node's CPU work: the beacon processor's main pool, which runs every
    /// kind of work but backfill (gossip, imports, requests, the API's, block production's and
    /// the timers' CPU work) and the chain's data-parallel work (state transitions' parallel
    /// sections, KZG and BLS batches, column building). Backfill has one thread more. Default:
    /// the machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    worker_threads: Option<u16>,
    /// Log level: error, warn, info, debug or trace.
    #[arg(long, default_value = "info")]
    debug_level: tracing::Level,
}

impl BnArgs {
    /// The log level asked for.
    pub(crate) fn log_level(&self) -> tracing::Level {
        self.debug_level
    }
}

/// Runs the node until SIGINT or SIGTERM (a second signal exits at once).
pub(crate) fn run(args: BnArgs) -> Result<(), String> {
    let spec = match &args.testnet_dir {
        Some(dir) => ChainSpec::from_config_file(&dir.join("config.yaml"))
            .map_err(|e| format!("--testnet-dir {}: config.yaml: {e}", dir.display()))?,
        None => ChainSpec::for_network(args.network),
    };
    let genesis_time = match &args.testnet_dir {
        Some(dir) => genesis_time_of(&dir.join("genesis.ssz")),
        None => Some(args.network.genesis_time()),
    };
    if let Some(genesis_time) = genesis_time {
        refuse_unimplemented_fork(&spec, genesis_time, unix_now())?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    if spec.preset_base == "minimal" {
        runtime.block_on(run_node::<MinimalEthSpec>(args, spec))
    } else {
        runtime.block_on(run_node::<MainnetEthSpec>(args, spec))
    }
}

/// Seconds since the UNIX epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The `genesis_time` of a `genesis.ssz` (a `BeaconState` begins with it), if the file is there.
fn genesis_time_of(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open(path)
        .ok()?
        .read_exact(&mut bytes)
        .ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// Refuses to start on a chain whose clock is past a fork this node does not implement (Gloas):
/// it could follow nothing from that fork on. A fork still ahead is a warning at start.
pub(crate) fn refuse_unimplemented_fork(
    spec: &ChainSpec,
    genesis_time: u64,
    now: u64,
) -> Result<(), String> {
    let Some((fork, epoch)) = spec.first_unimplemented_fork() else {
        return Ok(());
    };
    let version = spec.fork_version(fork);
    let slots_per_epoch = if spec.preset_base == "minimal" {
        MinimalEthSpec::slots_per_epoch()
    } else {
        MainnetEthSpec::slots_per_epoch()
    };
    let fork_time = spec.compute_time_at_slot(genesis_time, epoch.saturating_mul(slots_per_epoch));
    if now < fork_time {
        return Ok(());
    }
    Err(format!(
        "the {} chain forked to {fork:?} at epoch {epoch} (fork version {version}, UNIX time {fork_time}), and this version of Arbor does not implement {fork:?}: it cannot follow the chain",
        spec.config_name
    ))
}

fn default_datadir(name: &str) -> Result<PathBuf, String> {
    let home =
        std::env::var_os("HOME").ok_or("--datadir: no HOME to put ~/.arbor in; pass --datadir")?;
    Ok(PathBuf::from(home).join(".arbor").join(name))
}

fn parse_address(text: &str) -> Result<Address, String> {
    text.parse::<Address>()
        .map_err(|e| format!("--suggested-fee-recipient {text}: not an address: {e}"))
}

async fn run_node<E: EthSpec>(args: BnArgs, spec: ChainSpec) -> Result<(), String> {
    let endpoint = args
        .execution_endpoint
        .clone()
        .ok_or("--execution-endpoint: required (the execution client's engine API URL)")?;
    let jwt_path = args.execution_jwt.clone().ok_or(
        "--execution-jwt: required (the JWT secret file shared with the execution client)",
    )?;
    let jwt_text = std::fs::read_to_string(&jwt_path)
        .map_err(|e| format!("--execution-jwt {}: {e}", jwt_path.display()))?;
    let jwt_secret = JwtSecret::from_hex(jwt_text.trim())
        .map_err(|e| format!("--execution-jwt {}: {e}", jwt_path.display()))?;
    let fee_recipient = match &args.suggested_fee_recipient {
        Some(text) => parse_address(text)?,
        None => Address::ZERO,
    };
    let network_name = match &args.testnet_dir {
        Some(_) => spec.config_name.clone(),
        None => args.network.as_str().to_string(),
    };
    let datadir = match &args.datadir {
        Some(p) => p.clone(),
        None => default_datadir(&network_name)?,
    };
    let db_dir = datadir.join("beacon");
    if args.purge_db && db_dir.exists() {
        std::fs::remove_dir_all(&db_dir)
            .map_err(|e| format!("--purge-db {}: {e}", db_dir.display()))?;
        tracing::info!(path = %db_dir.display(), "database purged");
    }
    let network = network_options(&args)?;
    let spec = Arc::new(spec);
    let anchor = choose_anchor::<E>(&args, &spec, &db_dir).await?;

    let config = ClientConfig {
        datadir: datadir.clone(),
        spec: spec.clone(),
        anchor,
        execution: ExecutionConfig {
            url: endpoint,
            jwt_secret,
            timeouts: Timeouts::default(),
        },
        network: Some(network),
        http_listen: args
            .http
            .then_some(SocketAddr::new(args.http_address, args.http_port)),
        metrics_listen: args
            .metrics
            .then_some(SocketAddr::new(args.metrics_address, args.metrics_port)),
        suggested_fee_recipient: fee_recipient,
        graffiti: Bytes32::ZERO,
        chain: beacon_chain::ChainConfig {
            disable_light_client_server: args.disable_light_client_server,
            state_cache: beacon_chain::StateCacheConfig {
                max_states_bytes: usize::try_from(args.state_cache_mib << 20).unwrap_or(usize::MAX),
                ..beacon_chain::StateCacheConfig::default()
            },
            ..beacon_chain::ChainConfig::default()
        },
        worker_threads: args.worker_threads.map_or_else(
            || std::thread::available_parallelism().map_or(2, |n| n.get()),
            usize::from,
        ),
        pools: None,
        builder: builder_config(&args),
        store: client::StoreConfig {
            cache_size_bytes: usize::try_from(args.db_cache_mib << 20).unwrap_or(usize::MAX),
            ..client::StoreConfig::default()
        },
        // A public network (or a testnet's files): only the forks this version implements.
        unreleased_forks: false,
    };
    let no_boot_nodes = config
        .network
        .as_ref()
        .is_some_and(|n| n.config.boot_nodes.is_empty());
    let node = Client::start(config).await.map_err(|e| e.to_string())?;
    tracing::info!(network = %network_name, datadir = %datadir.display(), "arbor beacon node started");
    if no_boot_nodes {
        // A network directory without a boot_enr.yaml: discovery has no one to ask, and the
        // node has peers only when others dial it.
        tracing::warn!(
            network = %network_name,
            "no boot nodes: pass --boot-nodes with the network's bootstrap ENRs (or a boot_enr.yaml in the --testnet-dir), or the node may find no peers"
        );
    }
    wait_for_signal().await;
    tracing::info!("shutting down (a second signal exits at once)");
    tokio::select! {
        () = node.shutdown() => Ok(()),
        () = wait_for_signal() => {
            eprintln!("second signal: exiting at once");
            std::process::exit(130);
        }
    }
}

/// The builder relay's settings from the flags.
fn builder_config(args: &BnArgs) -> Option<builder_client::BuilderConfig> {
    let url = args.builder.clone()?;
    let mut config = builder_client::BuilderConfig::new(url);
    config.timeouts.get_header = std::time::Duration::from_millis(args.builder_timeout);
    config.timeouts.submit_blinded_block =
        std::time::Duration::from_millis(args.builder_submit_timeout);
    if args.builder_unblind_v1 {
        config.submit = builder_client::SubmitVersion::V1;
    }
    config.ssz = !args.builder_json;
    Some(config)
}

/// The peer-to-peer options from the flags.
fn network_options(args: &BnArgs) -> Result<NetworkOptions, String> {
    let mut texts = args.boot_nodes.clone();
    // The built-in network's boot nodes when no --boot-nodes and no network directory.
    if texts.is_empty() && args.testnet_dir.is_none() {
        texts = args
            .network
            .boot_enrs()
            .iter()
            .map(|t| t.to_string())
            .collect();
    }
    // A network directory's `boot_enr.yaml` (a YAML list of ENRs) when no --boot-nodes.
    if texts.is_empty()
        && let Some(dir) = &args.testnet_dir
    {
        let path = dir.join("boot_enr.yaml");
        if path.exists() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("--testnet-dir {}: {e}", path.display()))?;
            texts = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("- "))
                .map(|l| l.trim().trim_matches(['"', '\'']).to_string())
                .collect();
        }
    }
    let mut boot_nodes = Vec::with_capacity(texts.len());
    for text in &texts {
        let enr = text
            .trim()
            .parse::<networking::Enr>()
            .map_err(|e| format!("--boot-nodes {text}: not an ENR: {e}"))?;
        boot_nodes.push(enr);
    }
    let quic_port = match (args.disable_quic, args.quic_port) {
        (true, _) => None,
        (false, Some(port)) => Some(port),
        (false, None) => Some(args.port.checked_add(1).ok_or(
            "--quic-port: --port 65535 leaves no default QUIC port; pass --quic-port or --disable-quic",
        )?),
    };
    let mut config = NetworkConfig {
        listen_address: args.listen_address,
        tcp_port: Some(args.port),
        quic_port,
        discovery_port: Some(args.discovery_port.unwrap_or(args.port)),
        enr_address: args.enr_address,
        boot_nodes,
        // The four light-client protocols are offered only while the server derives their data.
        light_client_server: !args.disable_light_client_server,
        ..NetworkConfig::default()
    };
    config.peer_manager.target_peers = args.target_peers;
    Ok(NetworkOptions {
        config,
        supernode: args.supernode,
        genesis_backfill: args.genesis_backfill,
    })
}

/// SIGINT or SIGTERM.
pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Where the chain starts: the datadir's chain when it has one, else the checkpoint-sync URL's
/// finalized block and state, else a Fulu genesis from `--testnet-dir`.
async fn choose_anchor<E: EthSpec>(
    args: &BnArgs,
    spec: &ChainSpec,
    db_dir: &Path,
) -> Result<Anchor<E>, String> {
    if db_dir.join("db").exists() {
        return Ok(match genesis_from_testnet_dir::<E>(args, spec)? {
            Some(genesis) => Anchor::Genesis(Box::new(genesis)),
            None => Anchor::Resume,
        });
    }
    if let Some(url) = &args.checkpoint_sync_url {
        // A built-in network's genesis validators root is known: a URL serving another
        // network's chain is refused before anything is written.
        let expected = args
            .testnet_dir
            .is_none()
            .then(|| args.network.genesis_validators_root());
        return checkpoint_anchor::<E>(url, expected, args.checkpoint_block_root).await;
    }
    match genesis_from_testnet_dir::<E>(args, spec)? {
        Some(genesis) => Ok(Anchor::Genesis(Box::new(genesis))),
        None => Err(format!(
            "--checkpoint-sync-url: required to start an empty datadir on {} (arbor starts from a finalized checkpoint, not from a pre-Fulu genesis)",
            spec.config_name
        )),
    }
}

fn genesis_from_testnet_dir<E: EthSpec>(
    args: &BnArgs,
    spec: &ChainSpec,
) -> Result<Option<BeaconState<E>>, String> {
    let Some(dir) = &args.testnet_dir else {
        return Ok(None);
    };
    let path = dir.join("genesis.ssz");
    if !path.exists() {
        return Ok(None);
    }
    let bytes =
        std::fs::read(&path).map_err(|e| format!("--testnet-dir {}: {e}", path.display()))?;
    let fork = spec.fork_name_at_epoch(0);
    BeaconState::from_ssz_bytes_by_fork(&bytes, fork)
        .map(Some)
        .map_err(|e| {
            format!(
                "--testnet-dir {}: not a {fork} state: {e:?}",
                path.display()
            )
        })
}

/// The finalized block (or the trusted block `trusted_root`) and its post-state from another
/// node's Beacon API.
async fn checkpoint_anchor<E: EthSpec>(
    url: &str,
    expected_genesis_validators_root: Option<types::Root>,
    trusted_root: Option<types::Root>,
) -> Result<Anchor<E>, String> {
    use beacon_api::{BeaconNodeHttpClient, BlockId, StateId};
    let client = BeaconNodeHttpClient::from_url_str(url, beacon_api::Timeouts::default())
        .map_err(|e| format!("--checkpoint-sync-url {url}: {e}"))?;
    let (id, what) = match trusted_root {
        Some(root) => (BlockId::Root(root), format!("block {root}")),
        None => (BlockId::Finalized, "finalized block".to_string()),
    };
    let block = client
        .get_beacon_blocks_ssz::<E>(id)
        .await
        .map_err(|e| format!("--checkpoint-sync-url {url}: {what}: {e}"))?
        .ok_or_else(|| format!("--checkpoint-sync-url {url}: the node has no {what}"))?;
    if let Some(root) = trusted_root
        && block.canonical_root() != root
    {
        return Err(format!(
            "--checkpoint-block-root {root}: the node at {url} served block {} instead",
            block.canonical_root()
        ));
    }
    let state_root = block.state_root();
    let (fork, bytes) = client
        .get_debug_beacon_states_ssz(StateId::Root(state_root))
        .await
        .map_err(|e| format!("--checkpoint-sync-url {url}: finalized state: {e}"))?
        .ok_or_else(|| {
            format!("--checkpoint-sync-url {url}: the node does not serve state {state_root}")
        })?;
    let state = BeaconState::<E>::from_ssz_bytes_by_fork(&bytes, fork)
        .map_err(|e| format!("--checkpoint-sync-url {url}: state SSZ: {e:?}"))?;
    if let Some(expected) = expected_genesis_validators_root
        && *state.genesis_validators_root() != expected
    {
        return Err(format!(
            "--checkpoint-sync-url {url}: the state belongs to another network (genesis validators root {}, not {expected})",
            state.genesis_validators_root()
        ));
    }
    if block.state_root() != state_root_of(&state)? {
        return Err(format!(
            "--checkpoint-sync-url {url}: the served state is not the finalized block's post-state"
        ));
    }
    tracing::info!(
        slot = block.slot(),
        root = %block.canonical_root(),
        trusted_root = trusted_root.is_some(),
        "checkpoint fetched"
    );
    Ok(Anchor::Checkpoint {
        state: Box::new(state),
        block: Box::new(block),
    })
}

fn state_root_of<E: EthSpec>(state: &BeaconState<E>) -> Result<types::Root, String> {
    let mut cached = state_processing::CachedBeaconState::new(state.clone());
    cached
        .hash_tree_root()
        .map_err(|e| format!("checkpoint state: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain past a scheduled fork Arbor does not run is refused with an error naming the
    /// fork; one before it starts (the client then warns that it will stop at that epoch).
    #[test]
    fn a_chain_past_gloas_is_refused_and_one_before_it_starts() {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(types::ForkName::Fulu);
        assert_eq!(refuse_unimplemented_fork(&spec, 0, u64::MAX), Ok(()));
        spec.gloas_fork_epoch = 10;
        let fork_time = spec.compute_time_at_slot(1_000, 10 * MinimalEthSpec::slots_per_epoch());
        assert_eq!(
            refuse_unimplemented_fork(&spec, 1_000, fork_time - 1),
            Ok(())
        );
        let err = refuse_unimplemented_fork(&spec, 1_000, fork_time).unwrap_err();
        assert!(err.contains("forked to Gloas at epoch 10"), "{err}");
        assert!(err.contains("does not implement Gloas"), "{err}");
    }
}
