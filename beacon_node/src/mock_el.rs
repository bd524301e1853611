//! `arbor mock-el`: the mock execution client of `mock_execution_layer` as a process, for local
//! devnets. Compiled only with the `mock-el` feature, so a node built without it links no mock.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use execution_layer::JwtSecret;
use mock_execution_layer::{MockConfig, MockExecutionLayer, SlotFault};
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
    /// Slots (comma-separated) whose payload is built and served by getPayload as usual but
    /// never validated: newPayload answers SYNCING and the mock does not take the block.
    #[arg(long, value_name = "SLOTS", value_delimiter = ',')]
    syncing_payload_slots: Vec<u64>,
    /// Slots (comma-separated) whose payload is never revealed: getPayload answers -38001
    /// (unknown payload), so no envelope can carry it (an EMPTY head in Gloas).
    #[arg(long, value_name = "SLOTS", value_delimiter = ',')]
    withhold_payload_slots: Vec<u64>,
    /// Slots (comma-separated) whose payload getPayload serves late, after
    /// `--payload-delay-ms`.
    #[arg(long, value_name = "SLOTS", value_delimiter = ',')]
    delay_payload_slots: Vec<u64>,
    /// How late `--delay-payload-slots` payloads are served, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 4000)]
    payload_delay_ms: u64,
}

impl MockElArgs {
    /// The slot faults the flags ask for; a slot named by two flags is an error.
    fn slot_faults(&self) -> Result<BTreeMap<u64, SlotFault>, String> {
        let delay = SlotFault::Delay(Duration::from_millis(self.payload_delay_ms));
        let mut faults = BTreeMap::new();
        for (slots, fault) in [
            (&self.syncing_payload_slots, SlotFault::NewPayloadSyncing),
            (&self.withhold_payload_slots, SlotFault::Withhold),
            (&self.delay_payload_slots, delay),
        ] {
            for &slot in slots {
                if let Some(previous) = faults.insert(slot, fault)
                    && previous != fault
                {
                    return Err(format!(
                        "slot {slot} is given two payload faults ({previous:?} and {fault:?})"
                    ));
                }
            }
        }
        Ok(faults)
    }
}

/// Serves the mock until Ctrl-C.
pub(crate) fn run(args: MockElArgs) -> Result<(), String> {
    let slot_faults = args.slot_faults()?;
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
            let blobs = (args.blobs_per_block, args.blob_variety);
            if minimal {
                serve::<MinimalEthSpec>(config, listen, blobs, slot_faults).await
            } else {
                serve::<MainnetEthSpec>(config, listen, blobs, slot_faults).await
            }
        })
        .map_err(|e| format!("{listen}: {e}"))
}

async fn serve<E: EthSpec>(
    config: MockConfig,
    listen: SocketAddr,
    (blobs_per_block, blob_variety): (usize, u64),
    slot_faults: BTreeMap<u64, SlotFault>,
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
    if !slot_faults.is_empty() {
        println!("payload faults by slot: {slot_faults:?}");
    }
    mock.set_slot_faults(slot_faults);
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: MockElArgs,
    }

    #[test]
    fn payload_fault_flags_become_slot_faults() {
        let cli = Cli::try_parse_from([
            "mock-el",
            "--syncing-payload-slots",
            "3,5",
            "--withhold-payload-slots",
            "4",
            "--delay-payload-slots",
            "6",
            "--payload-delay-ms",
            "250",
        ])
        .expect("the flags parse");
        assert_eq!(
            cli.args.slot_faults(),
            Ok(BTreeMap::from([
                (3, SlotFault::NewPayloadSyncing),
                (4, SlotFault::Withhold),
                (5, SlotFault::NewPayloadSyncing),
                (6, SlotFault::Delay(Duration::from_millis(250))),
            ]))
        );
        let clash = Cli::try_parse_from([
            "mock-el",
            "--withhold-payload-slots",
            "4",
            "--delay-payload-slots",
            "4",
        ])
        .expect("the flags parse");
        assert!(clash.args.slot_faults().is_err(), "one fault per slot");
        let none = Cli::try_parse_from(["mock-el"]).expect("the flags parse");
        assert_eq!(none.args.slot_faults(), Ok(BTreeMap::new()));
    }
}
