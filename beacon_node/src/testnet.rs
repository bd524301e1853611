//! `arbor new-testnet`: writes the network directory of a fresh devnet — `config.yaml`, an
//! interop `genesis.ssz`, an empty `boot_enr.yaml` and `deposit_contract_block.txt` — for nodes
//! started as separate processes (`arbor bn --testnet-dir`, `arbor vc --interop-indices`), each
//! with its own `arbor mock-el --config-file <dir>/config.yaml --genesis-time <T>`.
//!
//! The genesis state's latest execution payload header is the mock execution client's genesis
//! block at the same genesis time, so every mock started with that time agrees with it.

use std::path::PathBuf;

use clap::Args;
use state_processing::genesis::interop_genesis_state;
use types::{ChainSpec, EthSpec, MainnetEthSpec, MinimalEthSpec};

use crate::Preset;
use crate::dev::{devnet_spec, parse_blob_schedule_entry, write_testnet_dir};

/// The options of `arbor new-testnet`.
#[derive(Debug, Args)]
pub(crate) struct NewTestnetArgs {
    /// The directory to write (created; its files are replaced).
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// Validators in the genesis state (interop keys 0..N).
    #[arg(long, default_value_t = 64)]
    validators: usize,
    /// The chain's preset.
    #[arg(long, value_enum, default_value_t = Preset::Minimal)]
    preset: Preset,
    /// Seconds per slot.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=60))]
    seconds_per_slot: u64,
    /// A BPO blob schedule, `EPOCH:MAX_BLOBS` entries separated by commas.
    #[arg(long, value_name = "EPOCH:MAX,...", value_parser = parse_blob_schedule_entry, value_delimiter = ',')]
    blob_schedule: Vec<types::BlobScheduleEntry>,
    /// Genesis time (Unix seconds); default: now plus `--genesis-delay`.
    #[arg(long, value_name = "UNIX_SECONDS", conflicts_with = "genesis_delay")]
    genesis_time: Option<u64>,
    /// Seconds from now to genesis, when no `--genesis-time`.
    #[arg(long, default_value_t = 30)]
    genesis_delay: u64,
}

/// Writes the network directory and prints its genesis time.
pub(crate) fn run(args: NewTestnetArgs) -> Result<(), String> {
    if args.validators == 0 {
        return Err("--validators: at least one validator is needed".into());
    }
    match args.preset {
        Preset::Minimal => write::<MinimalEthSpec>(&args, ChainSpec::minimal()),
        Preset::Mainnet => write::<MainnetEthSpec>(&args, ChainSpec::mainnet()),
    }
}

fn write<E: EthSpec>(args: &NewTestnetArgs, base: ChainSpec) -> Result<(), String> {
    let spec = devnet_spec(base, args.seconds_per_slot, &args.blob_schedule)?;
    let genesis_time = args
        .genesis_time
        .unwrap_or_else(|| execution_layer::jwt::unix_now() + args.genesis_delay);
    let el_genesis = mock_execution_layer::genesis_block_hash::<E>(genesis_time);
    let genesis = interop_genesis_state::<E>(args.validators, genesis_time, el_genesis, &spec)
        .map_err(|e| format!("genesis: {e}"))?;
    let dir = write_testnet_dir::<E>(&args.output, &spec, &genesis, &[])?;
    println!(
        "arbor new-testnet: {} validators, genesis at {genesis_time} (execution genesis block {el_genesis}); network directory {}",
        args.validators,
        dir.display()
    );
    Ok(())
}
