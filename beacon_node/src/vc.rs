//! `arbor vc`: the validator client against any beacon node's standard Beacon API.

use clap::Args;
use types::{MainnetEthSpec, MinimalEthSpec};

use crate::Preset;

/// The options of `arbor vc`.
#[derive(Debug, Args)]
pub(crate) struct VcCommand {
    /// The chain's preset (the beacon nodes' `PRESET_BASE`; checked against theirs at start).
    #[arg(long, value_enum, default_value_t = Preset::Mainnet)]
    preset: Preset,
    #[command(flatten)]
    args: validator_client::VcArgs,
}

/// Runs the validator client until SIGINT or SIGTERM.
pub(crate) fn run(command: VcCommand) -> Result<(), String> {
    let config = command.args.into_config()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let stop = crate::bn::wait_for_signal();
    let result = match command.preset {
        Preset::Minimal => runtime.block_on(validator_client::run::<MinimalEthSpec>(config, stop)),
        Preset::Mainnet => runtime.block_on(validator_client::run::<MainnetEthSpec>(config, stop)),
    };
    result.map_err(|e| e.to_string())
}
