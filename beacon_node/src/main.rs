//! `arbor`: the Arbor beacon node binary.
//!
//! `arbor config` describes a chain configuration, `arbor dev` runs a local devnet in one
//! process, `arbor mock-el` a mock execution client.

mod bn;
#[cfg(feature = "mock-el")]
mod dev;
#[cfg(feature = "mock-el")]
mod mock_el;
#[cfg(feature = "mock-el")]
mod testnet;
mod vc;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use types::{ChainSpec, Network};

/// The preset of a chain (`PRESET_BASE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Preset {
    /// 8-slot epochs, small committees (devnets, tests).
    Minimal,
    /// The mainnet preset (32-slot epochs).
    Mainnet,
}

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
    /// Run the beacon node.
    Bn(Box<bn::BnArgs>),
    /// Run the validator client against beacon nodes' standard Beacon API.
    Vc(Box<vc::VcCommand>),
    /// Run a mock execution client: the engine API (JWT-authenticated JSON-RPC) with payloads
    /// that chain and, on request, carry blob transactions with real KZG proofs. For local
    /// devnets and tests; it executes nothing.
    #[cfg(feature = "mock-el")]
    MockEl(mock_el::MockElArgs),
    /// Run a local Fulu devnet in one process: an interop genesis with every fork at epoch 0,
    /// the mock execution client with blobs in every block, a supernode beacon node and a
    /// validator client driving it over the Beacon API on 127.0.0.1.
    #[cfg(feature = "mock-el")]
    Dev(dev::DevArgs),
    /// Write the network directory of a fresh devnet (config.yaml, an interop genesis.ssz for
    /// the mock execution client's genesis block, boot_enr.yaml) for nodes run as separate
    /// processes: `arbor bn --testnet-dir`, `arbor vc --interop-indices`, `arbor mock-el`.
    #[cfg(feature = "mock-el")]
    NewTestnet(testnet::NewTestnetArgs),
}

/// Logs to stderr at `level` (`ARBOR_LOG` overrides it: error, warn, info, debug, trace).
///
/// Below debug, gossipsub's own warnings are left out: they describe peers' behaviour and
/// gossipsub's caches message by message (a peer grafting too soon, a verdict for a message its
/// cache no longer holds, a publication of a message it has seen), thousands an hour on a busy
/// node, none of which an operator can act on; the node's metrics count what matters (verdicts,
/// penalties, drops). `--debug-level debug` shows them.
fn init_logging(level: tracing::Level) {
    use tracing_subscriber::{filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};
    let from_env = std::env::var("ARBOR_LOG").ok();
    let level = from_env
        .as_deref()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(level);
    let gossipsub = if level >= tracing::Level::DEBUG {
        level
    } else {
        tracing::Level::ERROR
    };
    let mut filter = Targets::new()
        .with_default(level)
        .with_target("libp2p_gossipsub", gossipsub);
    // `ARBOR_LOG=info,router=debug`: per-crate levels over the default (a plain level is the
    // default's level, as above); a directive list that does not parse is reported, not ignored.
    if let Some(directives) = from_env.filter(|l| l.parse::<tracing::Level>().is_err()) {
        match directives.parse::<Targets>() {
            Ok(targets) if directives.contains("libp2p_gossipsub") => filter = targets,
            Ok(targets) => {
                filter = targets.with_target("libp2p_gossipsub", tracing::Level::ERROR);
            }
            Err(e) => eprintln!("ARBOR_LOG={directives}: {e}; using the level {level}"),
        }
    }
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(false),
        )
        .with(filter)
        .init();
}

/// The chain spec of a built-in network, or of a `config.yaml` when one is given.
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
            let from_file = config_file.is_some();
            let spec = match load_spec(network, config_file) {
                Ok(spec) => spec,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            print!("{}", spec.describe());
            if !from_file {
                match networking::enr::built_in_boot_nodes(network) {
                    Ok(enrs) => {
                        println!("boot nodes ({}):", enrs.len());
                        for enr in &enrs {
                            println!("  {}", networking::enr::boot_node_summary(enr));
                        }
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            ExitCode::SUCCESS
        }
        Command::Bn(args) => {
            init_logging(args.log_level());
            match bn::run(*args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Vc(command) => {
            init_logging(tracing::Level::INFO);
            match vc::run(*command) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        #[cfg(feature = "mock-el")]
        Command::Dev(args) => {
            init_logging(tracing::Level::INFO);
            match dev::run(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        #[cfg(feature = "mock-el")]
        Command::NewTestnet(args) => match testnet::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        #[cfg(feature = "mock-el")]
        Command::MockEl(args) => match mock_el::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
