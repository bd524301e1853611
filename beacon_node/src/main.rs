//! `arbor`: the Arbor beacon node binary.
//!
//! For now the binary answers `--version` and `--help` and can describe the chain configuration
//! it would run with; the node's services are assembled here as the crates that provide them land.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use types::{ChainSpec, Network};

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
    }
}
