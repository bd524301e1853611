//! `arbor`: the Arbor beacon node binary.
//!
//! For now the binary answers `--version` and `--help` and can describe the chain configuration
//! it would run with; the node's services are assembled here as the crates that provide them land.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use execution_layer::JwtSecret;
use execution_layer::mock::{MockConfig, MockExecutionLayer};
use types::{ChainSpec, EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Network};

/// Arbor, an Ethereum consensus-layer client.
#[derive(Debug, Parser)]
#[command(name = "arbor", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the chain configuration (fork schedule, BPO blob schedule, fork digests) of a
    /// built-in network or of a `config.yaml`.
    Config {
        /// A built-in network: mainnet, sepolia or hoodi.
        #[arg(long, default_value = "mainnet", conflicts_with = "config_file")]
        network: Network,
        /// A standard consensus `config.yaml` to load instead of a built-in network.
        #[arg(long, value_name = "PATH")]
        config_file: Option<PathBuf>,
    },
    /// Run a mock execution client: the engine API (JWT-authenticated JSON-RPC) with payloads
    /// that chain and, on request, carry blob transactions with real KZG proofs. For local
    /// devnets and tests; it executes nothing.
    MockEl {
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
        /// Seed of the generated blobs.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Chain id written into the blob transactions.
        #[arg(long, default_value_t = 1337)]
        chain_id: u64,
    },
}

async fn run_mock_el<E: EthSpec>(
    config: MockConfig,
    listen: SocketAddr,
    blobs_per_block: usize,
) -> std::io::Result<()> {
    let mock = MockExecutionLayer::<E>::start(config, listen).await?;
    mock.set_blobs_per_payload(blobs_per_block);
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

fn load_spec(network: Network, config_file: Option<PathBuf>) -> Result<ChainSpec, String> {
    match config_file {
        Some(path) => ChainSpec::from_config_file(&path).map_err(|e| e.to_string()),
        None => Ok(ChainSpec::for_network(network)),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Config {
            network,
            config_file,
        } => {
            let spec = match config_file {
                Some(path) => match ChainSpec::from_config_file(&path) {
                    Ok(spec) => spec,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                },
                None => ChainSpec::for_network(network),
            };
            print!("{}", spec.describe());
            ExitCode::SUCCESS
        }
        Command::MockEl {
            listen_address,
            jwt_secret,
            network,
            config_file,
            all_forks_at_genesis,
            genesis_time,
            blobs_per_block,
            seed,
            chain_id,
        } => {
            let result = (|| {
                let mut spec = load_spec(network, config_file)?;
                if all_forks_at_genesis {
                    spec = spec.with_forks_at_genesis_through(ForkName::Fulu);
                }
                let secret = JwtSecret::load_or_generate(&jwt_secret).map_err(|e| e.to_string())?;
                let minimal = spec.preset_base == "minimal";
                let config = MockConfig {
                    jwt_secret: secret,
                    spec,
                    genesis_time: genesis_time.unwrap_or_else(execution_layer::jwt::unix_now),
                    seed,
                    chain_id,
                };
                let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
                runtime
                    .block_on(async {
                        if minimal {
                            run_mock_el::<MinimalEthSpec>(config, listen_address, blobs_per_block)
                                .await
                        } else {
                            run_mock_el::<MainnetEthSpec>(config, listen_address, blobs_per_block)
                                .await
                        }
                    })
                    .map_err(|e| format!("{listen_address}: {e}"))
            })();
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
