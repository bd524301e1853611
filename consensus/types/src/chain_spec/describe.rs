//! A human-readable summary of a [`ChainSpec`], as `arbor config` prints it.

use std::fmt;
use std::str::FromStr;

use super::{ChainSpec, Network};
use crate::ForkName;
use crate::primitives::{Epoch, Root};

impl ChainSpec {
    /// A multi-line summary: name and preset, timing, the fork schedule, blob limits and the BPO
    /// schedule, and the fork digest from each activation on (for a zero genesis validators
    /// root, and for the network's real one when `CONFIG_NAME` is a built-in network).
    pub fn describe(&self) -> String {
        Description(self).to_string()
    }

    /// Every epoch at which the fork digest changes, with what changes there: each fork that is
    /// scheduled and not superseded by a later fork at the same epoch, then each blob schedule
    /// entry after `FULU_FORK_EPOCH`.
    fn digest_activations(&self) -> Vec<(Epoch, String)> {
        let mut activations: Vec<(Epoch, String)> = ForkName::ALL
            .into_iter()
            .filter_map(|fork| {
                let epoch = self.fork_epoch(fork)?;
                (self.fork_name_at_epoch(epoch) == fork).then(|| (epoch, fork.to_string()))
            })
            .collect();
        if let Some(fulu_epoch) = self.fork_epoch(ForkName::Fulu) {
            activations.extend(
                self.blob_schedule
                    .iter()
                    .filter(|entry| entry.epoch > fulu_epoch)
                    .map(|entry| {
                        let label = format!("BPO ({} blobs)", entry.max_blobs_per_block);
                        (entry.epoch, label)
                    }),
            );
        }
        activations.sort_by_key(|(epoch, _)| *epoch);
        activations
    }
}

/// Formats a [`ChainSpec`] for [`ChainSpec::describe`].
struct Description<'a>(&'a ChainSpec);

impl fmt::Display for Description<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = self.0;
        writeln!(f, "Chain configuration: {}", spec.config_name)?;
        writeln!(f, "  PRESET_BASE                 {}", spec.preset_base)?;
        writeln!(f, "  SLOT_DURATION_MS            {}", spec.slot_duration_ms)?;
        writeln!(f, "  MIN_GENESIS_TIME            {}", spec.min_genesis_time)?;
        writeln!(f, "  GENESIS_DELAY               {} s", spec.genesis_delay)?;
        writeln!(
            f,
            "  DEPOSIT_CONTRACT_ADDRESS    {} (chain id {})",
            spec.deposit_contract_address, spec.deposit_chain_id
        )?;
        writeln!(
            f,
            "  TERMINAL_TOTAL_DIFFICULTY   {}",
            spec.terminal_total_difficulty
        )?;
        writeln!(f)?;
        writeln!(f, "Fork schedule")?;
        writeln!(f, "  {:<10} {:<22} version", "fork", "epoch")?;
        for fork in ForkName::ALL {
            let epoch = match spec.fork_epoch(fork) {
                Some(epoch) => epoch.to_string(),
                None => "not scheduled".to_string(),
            };
            let name = fork.as_str();
            let version = spec.fork_version(fork);
            match (fork.is_implemented(), spec.fork_epoch(fork)) {
                (true, _) => writeln!(f, "  {name:<10} {epoch:<22} {version}")?,
                // A fork Arbor does not run shows only when the config schedules it.
                (false, Some(_)) => writeln!(
                    f,
                    "  {name:<10} {epoch:<22} {version}  (not implemented by this version of Arbor)"
                )?,
                (false, None) => {}
            }
        }

        writeln!(f)?;
        writeln!(f, "Blob limits")?;
        writeln!(
            f,
            "  deneb      MAX_BLOBS_PER_BLOCK           {}",
            spec.max_blobs_per_block
        )?;
        writeln!(
            f,
            "  electra    MAX_BLOBS_PER_BLOCK_ELECTRA   {}",
            spec.max_blobs_per_block_electra
        )?;
        if spec.blob_schedule.is_empty() {
            writeln!(f, "  fulu       BLOB_SCHEDULE                 empty")?;
        } else {
            writeln!(f, "  fulu       BLOB_SCHEDULE (BPO forks)")?;
            for entry in &spec.blob_schedule {
                writeln!(
                    f,
                    "               epoch {:<16} {} blobs per block",
                    entry.epoch, entry.max_blobs_per_block
                )?;
            }
        }

        let network = Network::from_str(&spec.config_name).ok();
        writeln!(f)?;
        writeln!(
            f,
            "Fork digests (compute_fork_digest) from each activation on"
        )?;
        match network {
            Some(network) => writeln!(
                f,
                "  {:<18} {:<22} {:<12} {network} genesis_validators_root {}",
                "activation",
                "epoch",
                "zero root",
                network.genesis_validators_root()
            )?,
            None => writeln!(f, "  {:<18} {:<22} zero root", "activation", "epoch")?,
        }
        for (epoch, label) in spec.digest_activations() {
            let zero = spec.compute_fork_digest(Root::ZERO, epoch);
            write!(f, "  {label:<18} {epoch:<22} {zero}")?;
            if let Some(network) = network {
                let real = spec.compute_fork_digest(network.genesis_validators_root(), epoch);
                write!(f, "   {real}")?;
            }
            writeln!(f)?;
        }

        if !spec.extra.is_empty() {
            writeln!(f)?;
            writeln!(f, "Keys not used by Arbor ({})", spec.extra.len())?;
            let mut line = String::new();
            for key in spec.extra.keys() {
                if !line.is_empty() && line.len() + key.len() > 96 {
                    writeln!(f, "  {line}")?;
                    line.clear();
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(key);
            }
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}
