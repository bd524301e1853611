//! The chain configuration as the beacon node serves it (`GET /eth/v1/config/spec`), and the
//! check that it is the chain the client was configured for.

use beacon_api::ConfigSpec;
use types::{ChainSpec, ConfigError, EthSpec, ForkName};

/// The node's configuration differs from the client's where signatures or timing depend on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the beacon node's {key} is {node}, the validator client's is {client}")]
pub struct SpecMismatch {
    /// The config key.
    pub key: String,
    /// The node's value.
    pub node: String,
    /// The client's value.
    pub client: String,
}

/// Reads the node's `config/spec` map as a [`ChainSpec`], over the built-in config of the
/// preset `E` (so that a key the node does not serve keeps the preset's value). The map holds
/// the preset values too; they land in [`ChainSpec::extra`].
pub fn chain_spec_from_config_spec<E: EthSpec>(
    config: &ConfigSpec,
) -> Result<ChainSpec, ConfigError> {
    // Each value as JSON is valid YAML (a double-quoted scalar, or a flow sequence/mapping),
    // so the config parser reads the map as it reads a `config.yaml`.
    let mut yaml = String::new();
    for (key, value) in &config.0 {
        yaml.push_str(key);
        yaml.push_str(": ");
        yaml.push_str(&value.to_string());
        yaml.push('\n');
    }
    let base = match E::PRESET_BASE {
        "minimal" => types::chain_spec::MINIMAL_CONFIG_YAML,
        _ => types::chain_spec::MAINNET_CONFIG_YAML,
    };
    ChainSpec::from_config_yaml_with_overrides(base, &yaml)
}

/// Checks that the node's chain is the client's, reading the node's `config/spec` map
/// directly (so that a node serving keys this client does not parse still passes): the preset,
/// the slot duration, every fork's version and epoch, and the blob schedule (which the fork
/// digest mixes in from Fulu).
pub fn check_same_chain<E: EthSpec>(
    client: &ChainSpec,
    node: &ConfigSpec,
) -> Result<(), SpecMismatch> {
    let check = |key: &str, expected: String| -> Result<(), SpecMismatch> {
        let found = node.get_str(key);
        if found.is_some_and(|v| v.eq_ignore_ascii_case(&expected)) {
            Ok(())
        } else {
            Err(SpecMismatch {
                key: key.to_string(),
                node: found.unwrap_or("absent").to_string(),
                client: expected,
            })
        }
    };
    check("PRESET_BASE", E::PRESET_BASE.to_string())?;
    if node.get_str("SLOT_DURATION_MS").is_some() {
        check("SLOT_DURATION_MS", client.slot_duration_ms.to_string())?;
    } else {
        check("SECONDS_PER_SLOT", client.seconds_per_slot.to_string())?;
    }
    for fork in ForkName::ALL {
        let name = match fork {
            ForkName::Phase0 => "GENESIS".to_string(),
            ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Electra
            | ForkName::Fulu
            | ForkName::Gloas => fork.as_str().to_uppercase(),
        };
        // A config written before Gloas has no GLOAS_FORK_VERSION (and does not schedule it).
        let has_version = fork != ForkName::Gloas || client.gloas_fork_version.is_some();
        if has_version {
            check(
                &format!("{name}_FORK_VERSION"),
                client.fork_version(fork).to_string(),
            )?;
        }
        if fork != ForkName::Phase0 {
            let epoch = client.fork_epoch(fork).unwrap_or(u64::MAX);
            check(&format!("{name}_FORK_EPOCH"), epoch.to_string())?;
        }
    }
    let entries: Vec<(u64, u64)> = client
        .blob_schedule
        .iter()
        .map(|e| (e.epoch, e.max_blobs_per_block))
        .collect();
    let node_entries = node.0.get("BLOB_SCHEDULE").map(read_blob_schedule);
    if node_entries
        .as_ref()
        .is_some_and(|n| n.as_ref() != Some(&entries))
        || (node_entries.is_none() && !entries.is_empty())
    {
        return Err(SpecMismatch {
            key: "BLOB_SCHEDULE".into(),
            node: node
                .0
                .get("BLOB_SCHEDULE")
                .map_or("absent".into(), ToString::to_string),
            client: format!("{entries:?}"),
        });
    }
    Ok(())
}

/// The `(EPOCH, MAX_BLOBS_PER_BLOCK)` pairs of a served blob schedule (numbers or decimal
/// strings), `None` if it is not one.
fn read_blob_schedule(value: &serde_json::Value) -> Option<Vec<(u64, u64)>> {
    let number = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.parse().ok(),
        other => other.as_u64(),
    };
    value
        .as_array()?
        .iter()
        .map(|entry| {
            Some((
                number(entry.get("EPOCH")?)?,
                number(entry.get("MAX_BLOBS_PER_BLOCK")?)?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    /// A `config.yaml` as a node serves it: every scalar as its text in a JSON string,
    /// sequences (the blob schedule) as JSON arrays of string-valued objects.
    fn served(yaml: &str) -> ConfigSpec {
        let mut map = std::collections::BTreeMap::new();
        for line in yaml.lines() {
            let line = line.split('#').next().unwrap_or("").trim_end();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim().trim_matches('\'').trim_matches('"');
            let json = if value.starts_with('[') {
                serde_json::from_str(value).expect("an inline JSON list")
            } else {
                serde_json::Value::String(value.to_string())
            };
            map.insert(key.trim().to_string(), json);
        }
        ConfigSpec(map)
    }

    #[test]
    fn the_served_minimal_config_reads_back_and_matches() {
        let yaml = include_str!("../../consensus/types/configs/minimal.yaml");
        let spec = chain_spec_from_config_spec::<MinimalEthSpec>(&served(yaml)).expect("readable");
        let ours = ChainSpec::minimal();
        assert_eq!(
            spec,
            ChainSpec {
                extra: spec.extra.clone(),
                ..ours.clone()
            }
        );
        assert_eq!(spec.slot_duration_ms, ours.slot_duration_ms);
        let node = served(yaml);
        assert_eq!(check_same_chain::<MinimalEthSpec>(&ours, &node), Ok(()));
        let mut other = ours.clone();
        other.electra_fork_epoch = 7;
        let err = check_same_chain::<MinimalEthSpec>(&other, &node).expect_err("differs");
        assert_eq!(err.key, "ELECTRA_FORK_EPOCH");
        let mut other = ours.clone();
        other.blob_schedule.push(types::BlobScheduleEntry {
            epoch: 3,
            max_blobs_per_block: 9,
        });
        let err = check_same_chain::<MinimalEthSpec>(&other, &node).expect_err("differs");
        assert_eq!(err.key, "BLOB_SCHEDULE");
        let err = check_same_chain::<types::MainnetEthSpec>(&ours, &node).expect_err("preset");
        assert_eq!(err.key, "PRESET_BASE");

        // A node serving only some keys: the rest come from the preset's config.
        let mut partial = node.clone();
        partial
            .0
            .retain(|k, _| k.ends_with("_FORK_EPOCH") || k == "SLOT_DURATION_MS");
        partial
            .0
            .insert("SLOT_DURATION_MS".into(), serde_json::json!("2000"));
        let spec = chain_spec_from_config_spec::<MinimalEthSpec>(&partial).expect("readable");
        assert_eq!(spec.slot_duration_ms, 2_000);
        assert_eq!(spec.genesis_fork_version, ours.genesis_fork_version);
    }
}
