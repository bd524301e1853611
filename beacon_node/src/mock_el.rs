//! `arbor mock-el`: the mock execution client of `mock_execution_layer` as a process, for local
//! devnets. Compiled only with the `mock-el` feature, so a node built without it links no mock.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use execution_layer::JwtSecret;
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use types::{EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Network};

/// The options of `arbor mock-el`.
#[derive(Debug, Args)]
pub(crate) struct MockElArgs {
    /// Address and port to serve the engine API on.
    #[arg(long, default_value = "127.0.0.1:8551")]
    listen_address: SocketAddr,
    /// Hex JWT secret file; generated when it does not exist.
    #[arg(long, value_name = "PATH", default_value = "jwt.hex")]
    jwt_secret: PathBuf,
    /// A built-in network whose fork schedule and blob limits to follow.
    #[arg(long, default_value = "mainnet", conflicts_with = "config_file")]
    network: Network,
    /// A standard consensus `config.yaml` to follow instead of a built-in network.
    #[arg(long, value_name = "PATH")]
    config_file: Option<PathBuf>,
    /// Activate every fork through Fulu at genesis (a fresh devnet).
    #[arg(long)]
    all_forks_at_genesis: bool,
    /// Genesis timestamp (default: now).
    #[arg(long)]
    genesis_time: Option<u64>,
    /// Blobs per built payload (capped at the fork's limit).
    #[arg(long, default_value_t = 0)]
    blobs_per_block: usize,
    /// Distinct blob sets to compute before serving (0: compute each payload's blobs when it
    /// is built). Payloads then cycle through them and build in milliseconds; a blob's cell
    /// proofs take hundreds.
    #[arg(long, default_value_t = 0)]
    blob_variety: u64,
    /// Seed of the generated blobs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Chain id written into the blob transactions.
    #[arg(long, default_value_t = 1337)]
    chain_id: u64,
}

/// Serves the mock until Ctrl-C.
pub(crate) fn run(args: MockElArgs) -> Result<(), String> {
    let mut spec = crate::load_spec(args.network, args.config_file)?;
    if args.all_forks_at_genesis {
        spec = spec.with_forks_at_genesis_through(ForkName::Fulu);
    }
    let secret = JwtSecret::load_or_generate(&args.jwt_secret).map_err(|e| e.to_string())?;
    let minimal = spec.preset_base == "minimal";
    let config = MockConfig {
        jwt_secret: secret,
        spec,
        genesis_time: args
            .genesis_time
            .unwrap_or_else(execution_layer::jwt::unix_now),
        seed: args.seed,
        chain_id: args.chain_id,
    };
    let listen = args.listen_address;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime
        .block_on(async {
            if minimal {
                serve::<MinimalEthSpec>(config, listen, args.blobs_per_block, args.blob_variety)
                    .await
            } else {
                serve::<MainnetEthSpec>(config, listen, args.blobs_per_block, args.blob_variety)
                    .await
            }
        })
        .map_err(|e| format!("{listen}: {e}"))
}

async fn serve<E: EthSpec>(
    config: MockConfig,
    listen: SocketAddr,
    blobs_per_block: usize,
    blob_variety: u64,
) -> std::io::Result<()> {
    let seed = config.seed;
    let blob_sets = if blob_variety > 0 && blobs_per_block > 0 {
        tokio::task::spawn_blocking(move || {
            mock_execution_layer::blobs::generate_blob_sets(seed, blob_variety, blobs_per_block)
        })
        .await
        .map_err(std::io::Error::other)?
        .map_err(|e| std::io::Error::other(format!("blob generation: {e}")))?
    } else {
        Vec::new()
    };
    let mock = MockExecutionLayer::<E>::start(config, listen).await?;
    mock.set_blobs_per_payload(blobs_per_block);
    if !blob_sets.is_empty() {
        mock.set_blob_sets(blob_sets);
    }
    println!(
        "mock execution layer listening on {} (genesis block {})",
        mock.url(),
        mock.genesis_block_hash()
    );
    mock.run_until(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
