//! `GET /eth/v1/config/spec`: every config value (the chain spec), preset value (the `EthSpec`)
//! and constant a validator client reads, by the spec's upper-case name, as strings.
//!
//! [spec]: apis/config/spec.yaml, configs/*.yaml, presets/*/*.yaml

use beacon_api::ConfigSpec;
use serde_json::Value;
use ssz_types::typenum::Unsigned;
use types::{ChainSpec, EthSpec, signing};

/// `0x`-hex of `bytes`, lower case.
pub(crate) fn hex0x(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 + 2 * bytes.len());
    out.push_str("0x");
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The `config/spec` map of `spec` with the preset `E`.
pub fn config_spec<E: EthSpec>(spec: &ChainSpec) -> ConfigSpec {
    let mut map = std::collections::BTreeMap::new();
    let mut put = |name: &str, value: String| {
        map.insert(name.to_string(), Value::String(value));
    };
    macro_rules! decimal {
        ($($name:literal => $value:expr),+ $(,)?) => {$(put($name, ($value).to_string());)+};
    }
    macro_rules! bytes {
        ($($name:literal => $value:expr),+ $(,)?) => {$(put($name, hex0x(($value).as_slice()));)+};
    }

    // Config (configs/*.yaml).
    put("PRESET_BASE", spec.preset_base.clone());
    put("CONFIG_NAME", spec.config_name.clone());
    decimal! {
        "TERMINAL_TOTAL_DIFFICULTY" => spec.terminal_total_difficulty,
        "TERMINAL_BLOCK_HASH_ACTIVATION_EPOCH" => spec.terminal_block_hash_activation_epoch,
        "MIN_GENESIS_ACTIVE_VALIDATOR_COUNT" => spec.min_genesis_active_validator_count,
        "MIN_GENESIS_TIME" => spec.min_genesis_time,
        "GENESIS_DELAY" => spec.genesis_delay,
        "ALTAIR_FORK_EPOCH" => spec.altair_fork_epoch,
        "BELLATRIX_FORK_EPOCH" => spec.bellatrix_fork_epoch,
        "CAPELLA_FORK_EPOCH" => spec.capella_fork_epoch,
        "DENEB_FORK_EPOCH" => spec.deneb_fork_epoch,
        "ELECTRA_FORK_EPOCH" => spec.electra_fork_epoch,
        "FULU_FORK_EPOCH" => spec.fulu_fork_epoch,
        "GLOAS_FORK_EPOCH" => spec.gloas_fork_epoch,
        "SECONDS_PER_SLOT" => spec.seconds_per_slot,
        "SLOT_DURATION_MS" => spec.slot_duration_ms,
        "SECONDS_PER_ETH1_BLOCK" => spec.seconds_per_eth1_block,
        "MIN_VALIDATOR_WITHDRAWABILITY_DELAY" => spec.min_validator_withdrawability_delay,
        "SHARD_COMMITTEE_PERIOD" => spec.shard_committee_period,
        "ETH1_FOLLOW_DISTANCE" => spec.eth1_follow_distance,
        "PROPOSER_REORG_CUTOFF_BPS" => spec.proposer_reorg_cutoff_bps,
        "ATTESTATION_DUE_BPS" => spec.attestation_due_bps,
        "AGGREGATE_DUE_BPS" => spec.aggregate_due_bps,
        "SYNC_MESSAGE_DUE_BPS" => spec.sync_message_due_bps,
        "CONTRIBUTION_DUE_BPS" => spec.contribution_due_bps,
        "INACTIVITY_SCORE_BIAS" => spec.inactivity_score_bias,
        "INACTIVITY_SCORE_RECOVERY_RATE" => spec.inactivity_score_recovery_rate,
        "EJECTION_BALANCE" => spec.ejection_balance,
        "MIN_PER_EPOCH_CHURN_LIMIT" => spec.min_per_epoch_churn_limit,
        "CHURN_LIMIT_QUOTIENT" => spec.churn_limit_quotient,
        "MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT" => spec.max_per_epoch_activation_churn_limit,
        "MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA" => spec.min_per_epoch_churn_limit_electra,
        "MAX_PER_EPOCH_ACTIVATION_EXIT_CHURN_LIMIT" => spec.max_per_epoch_activation_exit_churn_limit,
        "PROPOSER_SCORE_BOOST" => spec.proposer_score_boost,
        "REORG_HEAD_WEIGHT_THRESHOLD" => spec.reorg_head_weight_threshold,
        "REORG_PARENT_WEIGHT_THRESHOLD" => spec.reorg_parent_weight_threshold,
        "REORG_MAX_EPOCHS_SINCE_FINALIZATION" => spec.reorg_max_epochs_since_finalization,
        "DEPOSIT_CHAIN_ID" => spec.deposit_chain_id,
        "DEPOSIT_NETWORK_ID" => spec.deposit_network_id,
        "MAX_PAYLOAD_SIZE" => spec.max_payload_size,
        "MAX_REQUEST_BLOCKS" => spec.max_request_blocks,
        "EPOCHS_PER_SUBNET_SUBSCRIPTION" => spec.epochs_per_subnet_subscription,
        "MIN_EPOCHS_FOR_BLOCK_REQUESTS" => spec.min_epochs_for_block_requests,
        "TTFB_TIMEOUT" => spec.ttfb_timeout,
        "RESP_TIMEOUT" => spec.resp_timeout,
        "ATTESTATION_PROPAGATION_SLOT_RANGE" => spec.attestation_propagation_slot_range,
        "MAXIMUM_GOSSIP_CLOCK_DISPARITY" => spec.maximum_gossip_clock_disparity,
        "SUBNETS_PER_NODE" => spec.subnets_per_node,
        "ATTESTATION_SUBNET_COUNT" => spec.attestation_subnet_count,
        "ATTESTATION_SUBNET_EXTRA_BITS" => spec.attestation_subnet_extra_bits,
        "ATTESTATION_SUBNET_PREFIX_BITS" => spec.attestation_subnet_prefix_bits,
        "MAX_REQUEST_BLOCKS_DENEB" => spec.max_request_blocks_deneb,
        "MAX_REQUEST_BLOB_SIDECARS" => spec.max_request_blob_sidecars,
        "MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS" => spec.min_epochs_for_blob_sidecars_requests,
        "BLOB_SIDECAR_SUBNET_COUNT" => spec.blob_sidecar_subnet_count,
        "MAX_BLOBS_PER_BLOCK" => spec.max_blobs_per_block,
        "BLOB_SIDECAR_SUBNET_COUNT_ELECTRA" => spec.blob_sidecar_subnet_count_electra,
        "MAX_BLOBS_PER_BLOCK_ELECTRA" => spec.max_blobs_per_block_electra,
        "MAX_REQUEST_BLOB_SIDECARS_ELECTRA" => spec.max_request_blob_sidecars_electra,
        "NUMBER_OF_CUSTODY_GROUPS" => spec.number_of_custody_groups,
        "DATA_COLUMN_SIDECAR_SUBNET_COUNT" => spec.data_column_sidecar_subnet_count,
        "MAX_REQUEST_DATA_COLUMN_SIDECARS" => spec.max_request_data_column_sidecars,
        "SAMPLES_PER_SLOT" => spec.samples_per_slot,
        "CUSTODY_REQUIREMENT" => spec.custody_requirement,
        "VALIDATOR_CUSTODY_REQUIREMENT" => spec.validator_custody_requirement,
        "BALANCE_PER_ADDITIONAL_CUSTODY_GROUP" => spec.balance_per_additional_custody_group,
        "MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS" => spec.min_epochs_for_data_column_sidecars_requests,
        "MIN_BUILDER_WITHDRAWABILITY_DELAY" => spec.min_builder_withdrawability_delay,
        "ATTESTATION_DUE_BPS_GLOAS" => spec.attestation_due_bps_gloas,
        "AGGREGATE_DUE_BPS_GLOAS" => spec.aggregate_due_bps_gloas,
        "SYNC_MESSAGE_DUE_BPS_GLOAS" => spec.sync_message_due_bps_gloas,
        "CONTRIBUTION_DUE_BPS_GLOAS" => spec.contribution_due_bps_gloas,
        "PAYLOAD_DUE_BPS" => spec.payload_due_bps,
        "PAYLOAD_ATTESTATION_DUE_BPS" => spec.payload_attestation_due_bps,
        "CHURN_LIMIT_QUOTIENT_GLOAS" => spec.churn_limit_quotient_gloas,
        "CONSOLIDATION_CHURN_LIMIT_QUOTIENT" => spec.consolidation_churn_limit_quotient,
        "MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT_GLOAS" => spec.max_per_epoch_activation_churn_limit_gloas,
        "MAX_REQUEST_PAYLOADS" => spec.max_request_payloads,
    }
    bytes! {
        "TERMINAL_BLOCK_HASH" => spec.terminal_block_hash,
        "GENESIS_FORK_VERSION" => spec.genesis_fork_version,
        "ALTAIR_FORK_VERSION" => spec.altair_fork_version,
        "BELLATRIX_FORK_VERSION" => spec.bellatrix_fork_version,
        "CAPELLA_FORK_VERSION" => spec.capella_fork_version,
        "DENEB_FORK_VERSION" => spec.deneb_fork_version,
        "ELECTRA_FORK_VERSION" => spec.electra_fork_version,
        "FULU_FORK_VERSION" => spec.fulu_fork_version,
        "DEPOSIT_CONTRACT_ADDRESS" => spec.deposit_contract_address,
        "MESSAGE_DOMAIN_INVALID_SNAPPY" => spec.message_domain_invalid_snappy,
        "MESSAGE_DOMAIN_VALID_SNAPPY" => spec.message_domain_valid_snappy,
    }
    if let Some(version) = spec.gloas_fork_version {
        put("GLOAS_FORK_VERSION", hex0x(version.as_slice()));
    }

    // Preset (presets/*/*.yaml).
    decimal! {
        "MAX_COMMITTEES_PER_SLOT" => E::MaxCommitteesPerSlot::to_u64(),
        "TARGET_COMMITTEE_SIZE" => E::TARGET_COMMITTEE_SIZE,
        "MAX_VALIDATORS_PER_COMMITTEE" => E::MaxValidatorsPerCommittee::to_u64(),
        "SHUFFLE_ROUND_COUNT" => E::SHUFFLE_ROUND_COUNT,
        "HYSTERESIS_QUOTIENT" => E::HYSTERESIS_QUOTIENT,
        "HYSTERESIS_DOWNWARD_MULTIPLIER" => E::HYSTERESIS_DOWNWARD_MULTIPLIER,
        "HYSTERESIS_UPWARD_MULTIPLIER" => E::HYSTERESIS_UPWARD_MULTIPLIER,
        "MIN_DEPOSIT_AMOUNT" => E::MIN_DEPOSIT_AMOUNT,
        "MAX_EFFECTIVE_BALANCE" => E::MAX_EFFECTIVE_BALANCE,
        "EFFECTIVE_BALANCE_INCREMENT" => E::EFFECTIVE_BALANCE_INCREMENT,
        "MIN_ATTESTATION_INCLUSION_DELAY" => E::MIN_ATTESTATION_INCLUSION_DELAY,
        "SLOTS_PER_EPOCH" => E::SlotsPerEpoch::to_u64(),
        "MIN_SEED_LOOKAHEAD" => E::MIN_SEED_LOOKAHEAD,
        "MAX_SEED_LOOKAHEAD" => E::MAX_SEED_LOOKAHEAD,
        "EPOCHS_PER_ETH1_VOTING_PERIOD" => E::EPOCHS_PER_ETH1_VOTING_PERIOD,
        "SLOTS_PER_HISTORICAL_ROOT" => E::SlotsPerHistoricalRoot::to_u64(),
        "MIN_EPOCHS_TO_INACTIVITY_PENALTY" => E::MIN_EPOCHS_TO_INACTIVITY_PENALTY,
        "EPOCHS_PER_HISTORICAL_VECTOR" => E::EpochsPerHistoricalVector::to_u64(),
        "EPOCHS_PER_SLASHINGS_VECTOR" => E::EpochsPerSlashingsVector::to_u64(),
        "HISTORICAL_ROOTS_LIMIT" => E::HistoricalRootsLimit::to_u64(),
        "VALIDATOR_REGISTRY_LIMIT" => E::ValidatorRegistryLimit::to_u64(),
        "BASE_REWARD_FACTOR" => E::BASE_REWARD_FACTOR,
        "WHISTLEBLOWER_REWARD_QUOTIENT" => E::WHISTLEBLOWER_REWARD_QUOTIENT,
        "PROPOSER_REWARD_QUOTIENT" => E::PROPOSER_REWARD_QUOTIENT,
        "INACTIVITY_PENALTY_QUOTIENT" => E::INACTIVITY_PENALTY_QUOTIENT,
        "MIN_SLASHING_PENALTY_QUOTIENT" => E::MIN_SLASHING_PENALTY_QUOTIENT,
        "PROPORTIONAL_SLASHING_MULTIPLIER" => E::PROPORTIONAL_SLASHING_MULTIPLIER,
        "MAX_PROPOSER_SLASHINGS" => E::MaxProposerSlashings::to_u64(),
        "MAX_ATTESTER_SLASHINGS" => E::MaxAttesterSlashings::to_u64(),
        "MAX_ATTESTATIONS" => E::MaxAttestations::to_u64(),
        "MAX_DEPOSITS" => E::MaxDeposits::to_u64(),
        "MAX_VOLUNTARY_EXITS" => E::MaxVoluntaryExits::to_u64(),
        "INACTIVITY_PENALTY_QUOTIENT_ALTAIR" => E::INACTIVITY_PENALTY_QUOTIENT_ALTAIR,
        "MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR" => E::MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR,
        "PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR" => E::PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR,
        "SYNC_COMMITTEE_SIZE" => E::SyncCommitteeSize::to_u64(),
        "EPOCHS_PER_SYNC_COMMITTEE_PERIOD" => E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD,
        "MIN_SYNC_COMMITTEE_PARTICIPANTS" => E::MIN_SYNC_COMMITTEE_PARTICIPANTS,
        "UPDATE_TIMEOUT" => E::UPDATE_TIMEOUT,
        "INACTIVITY_PENALTY_QUOTIENT_BELLATRIX" => E::INACTIVITY_PENALTY_QUOTIENT_BELLATRIX,
        "MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX" => E::MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX,
        "PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX" => E::PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX,
        "MAX_BYTES_PER_TRANSACTION" => E::MaxBytesPerTransaction::to_u64(),
        "MAX_TRANSACTIONS_PER_PAYLOAD" => E::MaxTransactionsPerPayload::to_u64(),
        "BYTES_PER_LOGS_BLOOM" => E::BytesPerLogsBloom::to_u64(),
        "MAX_EXTRA_DATA_BYTES" => E::MaxExtraDataBytes::to_u64(),
        "MAX_BLS_TO_EXECUTION_CHANGES" => E::MaxBlsToExecutionChanges::to_u64(),
        "MAX_WITHDRAWALS_PER_PAYLOAD" => E::MaxWithdrawalsPerPayload::to_u64(),
        "MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP" => E::MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP,
        "MAX_BLOB_COMMITMENTS_PER_BLOCK" => E::MaxBlobCommitmentsPerBlock::to_u64(),
        "KZG_COMMITMENT_INCLUSION_PROOF_DEPTH" => E::KzgCommitmentInclusionProofDepth::to_u64(),
        "FIELD_ELEMENTS_PER_BLOB" => E::FieldElementsPerBlob::to_u64(),
        "MIN_ACTIVATION_BALANCE" => E::MIN_ACTIVATION_BALANCE,
        "MAX_EFFECTIVE_BALANCE_ELECTRA" => E::MAX_EFFECTIVE_BALANCE_ELECTRA,
        "MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA" => E::MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA,
        "WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA" => E::WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA,
        "PENDING_DEPOSITS_LIMIT" => E::PendingDepositsLimit::to_u64(),
        "PENDING_PARTIAL_WITHDRAWALS_LIMIT" => E::PendingPartialWithdrawalsLimit::to_u64(),
        "PENDING_CONSOLIDATIONS_LIMIT" => E::PendingConsolidationsLimit::to_u64(),
        "MAX_ATTESTER_SLASHINGS_ELECTRA" => E::MaxAttesterSlashingsElectra::to_u64(),
        "MAX_ATTESTATIONS_ELECTRA" => E::MaxAttestationsElectra::to_u64(),
        "MAX_DEPOSIT_REQUESTS_PER_PAYLOAD" => E::MaxDepositRequestsPerPayload::to_u64(),
        "MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD" => E::MaxWithdrawalRequestsPerPayload::to_u64(),
        "MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD" => E::MaxConsolidationRequestsPerPayload::to_u64(),
        "MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP" => E::MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP,
        "MAX_PENDING_DEPOSITS_PER_EPOCH" => E::MAX_PENDING_DEPOSITS_PER_EPOCH,
        "FIELD_ELEMENTS_PER_CELL" => E::FieldElementsPerCell::to_u64(),
        "FIELD_ELEMENTS_PER_EXT_BLOB" => E::FieldElementsPerExtBlob::to_u64(),
        "KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH" => E::KzgCommitmentsInclusionProofDepth::to_u64(),
        "CELLS_PER_EXT_BLOB" => E::CellsPerExtBlob::to_u64(),
        "NUMBER_OF_COLUMNS" => E::NumberOfColumns::to_u64(),
        "PTC_SIZE" => E::PtcSize::to_u64(),
        "MAX_PAYLOAD_ATTESTATIONS" => E::MAX_PAYLOAD_ATTESTATIONS,
        "MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD" => E::MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD,
        "MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD" => E::MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD,
        "MAX_BUILDERS_PER_WITHDRAWALS_SWEEP" => E::MAX_BUILDERS_PER_WITHDRAWALS_SWEEP,
        "MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE" => E::MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE,
        "MAX_ATTESTER_SLASHING_SIZE" => E::MAX_ATTESTER_SLASHING_SIZE,
        "MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE" => E::MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE,
        // Constants of the validator guide and the p2p spec.
        "TARGET_AGGREGATORS_PER_COMMITTEE" => beacon_chain::gossip::TARGET_AGGREGATORS_PER_COMMITTEE,
        "TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE" => beacon_chain::gossip::TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE,
        "SYNC_COMMITTEE_SUBNET_COUNT" => types::subnets::SYNC_COMMITTEE_SUBNET_COUNT,
    }
    bytes! {
        "DOMAIN_BEACON_PROPOSER" => signing::DOMAIN_BEACON_PROPOSER,
        "DOMAIN_BEACON_ATTESTER" => signing::DOMAIN_BEACON_ATTESTER,
        "DOMAIN_RANDAO" => signing::DOMAIN_RANDAO,
        "DOMAIN_DEPOSIT" => signing::DOMAIN_DEPOSIT,
        "DOMAIN_VOLUNTARY_EXIT" => signing::DOMAIN_VOLUNTARY_EXIT,
        "DOMAIN_SELECTION_PROOF" => signing::DOMAIN_SELECTION_PROOF,
        "DOMAIN_AGGREGATE_AND_PROOF" => signing::DOMAIN_AGGREGATE_AND_PROOF,
        "DOMAIN_SYNC_COMMITTEE" => signing::DOMAIN_SYNC_COMMITTEE,
        "DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF" => signing::DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
        "DOMAIN_CONTRIBUTION_AND_PROOF" => signing::DOMAIN_CONTRIBUTION_AND_PROOF,
        "DOMAIN_BLS_TO_EXECUTION_CHANGE" => signing::DOMAIN_BLS_TO_EXECUTION_CHANGE,
        "DOMAIN_BEACON_BUILDER" => signing::DOMAIN_BEACON_BUILDER,
        "DOMAIN_PTC_ATTESTER" => signing::DOMAIN_PTC_ATTESTER,
        "DOMAIN_PROPOSER_PREFERENCES" => signing::DOMAIN_PROPOSER_PREFERENCES,
        "DOMAIN_BUILDER_DEPOSIT" => signing::DOMAIN_BUILDER_DEPOSIT,
        "DOMAIN_APPLICATION_MASK" => signing::DOMAIN_APPLICATION_MASK,
        "BLS_WITHDRAWAL_PREFIX" => [0x00u8],
        "ETH1_ADDRESS_WITHDRAWAL_PREFIX" => [0x01u8],
        "COMPOUNDING_WITHDRAWAL_PREFIX" => [0x02u8],
        "BUILDER_WITHDRAWAL_PREFIX" => [types::gloas::BUILDER_WITHDRAWAL_PREFIX],
    }
    let schedule: Vec<Value> = spec
        .blob_schedule
        .iter()
        .map(|entry| {
            serde_json::json!({
                "EPOCH": entry.epoch.to_string(),
                "MAX_BLOBS_PER_BLOCK": entry.max_blobs_per_block.to_string(),
            })
        })
        .collect();
    map.insert("BLOB_SCHEDULE".into(), Value::Array(schedule));
    let gas_limits: Vec<Value> = spec
        .gas_limit_schedule
        .iter()
        .map(|entry| {
            serde_json::json!({
                "EPOCH": entry.epoch.to_string(),
                "GAS_LIMIT": entry.gas_limit.to_string(),
            })
        })
        .collect();
    map.insert("GAS_LIMIT_SCHEDULE".into(), Value::Array(gas_limits));
    ConfigSpec(map)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use super::*;
    use types::{MainnetEthSpec, MinimalEthSpec};

    /// The consensus-specs 1.7.0b4 configs and presets the spec tests were made with.
    fn spec_tests_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec-tests")
    }

    /// Keys of `configs/*.yaml` that `config/spec` leaves out: forks and features after Gloas
    /// (Heze, EIP-8321, EIP-8198), and the optional fast confirmation rule, whose threshold
    /// Arbor fixes at the spec's value (`fork_choice::fast_confirmation`). The loader keeps them,
    /// as written, in `ChainSpec::extra`.
    const NOT_SERVED: [&str; 13] = [
        "HEZE_FORK_VERSION",
        "HEZE_FORK_EPOCH",
        "INCLUSION_LIST_DUE_BPS",
        "MAX_REQUEST_INCLUSION_LIST",
        "MIN_SLOTS_FOR_INCLUSION_LISTS_REQUESTS",
        "MAX_TRANSACTIONS_BYTES_PER_INCLUSION_LIST",
        "EIP8321_FORK_VERSION",
        "EIP8321_FORK_EPOCH",
        "EIP8198_FORK_VERSION",
        "EIP8198_FORK_EPOCH",
        "SLOT_DURATION_MS_EIP8198",
        "MIN_BLOB_DATA_RETENTION_MS",
        "CONFIRMATION_BYZANTINE_THRESHOLD",
    ];

    /// A value of a config or preset file as `config/spec` serves it: a scalar as its text
    /// (comment, quotes and hex case dropped), a list of records as records of texts.
    #[derive(Debug, PartialEq, Eq)]
    enum FileValue {
        Scalar(String),
        Records(Vec<BTreeMap<String, String>>),
    }

    /// The top-level keys of a spec config or preset file with their values, in file order.
    /// The files write one `KEY: value` a line, and lists of records (`BLOB_SCHEDULE`,
    /// `GAS_LIMIT_SCHEDULE`) as `- FIELD: value` lines indented below their key, or `[]`.
    fn read_spec_file(path: &Path) -> Vec<(String, FileValue)> {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let clean = |value: &str| {
            let value = value.split(" #").next().unwrap_or_default().trim();
            value.trim_matches('\'').trim_matches('"').to_lowercase()
        };
        let mut entries: Vec<(String, FileValue)> = Vec::new();
        for line in text.lines() {
            let content = line.split('#').next().unwrap_or_default().trim_end();
            if content.trim().is_empty() {
                continue;
            }
            let (key, value) = content
                .trim_start()
                .trim_start_matches("- ")
                .split_once(':')
                .unwrap_or_else(|| panic!("{}: {line:?}", path.display()));
            if !line.starts_with(' ') {
                let value = clean(value);
                let value = match value.as_str() {
                    "" | "[]" => FileValue::Records(Vec::new()),
                    _ => FileValue::Scalar(value),
                };
                entries.push((key.to_string(), value));
                continue;
            }
            let Some((_, FileValue::Records(records))) = entries.last_mut() else {
                panic!(
                    "{}: an indented line outside a list: {line:?}",
                    path.display()
                );
            };
            if content.trim_start().starts_with("- ") {
                records.push(BTreeMap::new());
            }
            let record = records.last_mut().expect("a record starts with '- '");
            record.insert(key.trim().to_string(), clean(value));
        }
        entries
    }

    /// `served` as a [`FileValue`], for comparing with a file's.
    fn served_value(served: &Value) -> FileValue {
        match served {
            Value::String(text) => FileValue::Scalar(text.to_lowercase()),
            Value::Array(records) => FileValue::Records(
                records
                    .iter()
                    .map(|record| {
                        record
                            .as_object()
                            .expect("a record")
                            .iter()
                            .map(|(k, v)| (k.clone(), v.as_str().expect("text").to_lowercase()))
                            .collect()
                    })
                    .collect(),
            ),
            other => panic!("config/spec serves {other}"),
        }
    }

    /// Checks that `served` has every key of `file` (but `skip`) with the file's value.
    fn assert_serves_file(served: &ConfigSpec, file: &Path, skip: &[&str]) -> usize {
        let mut checked = 0;
        for (key, value) in read_spec_file(file) {
            if skip.contains(&key.as_str()) {
                assert!(
                    !served.0.contains_key(&key),
                    "{key} is served now: drop it from NOT_SERVED"
                );
                continue;
            }
            let Some(got) = served.0.get(&key) else {
                panic!("{}: {key} is not served", file.display());
            };
            assert_eq!(served_value(got), value, "{}: {key}", file.display());
            checked += 1;
        }
        checked
    }

    /// `config/spec` of the spec's mainnet and minimal configs serves every key of the config
    /// file (phase0 to Gloas, `NOT_SERVED` aside) and of each fork's preset file, phase0 to
    /// Gloas, with the files' values.
    #[test]
    fn serves_every_key_of_the_spec_config_and_presets_with_their_values() {
        let dir = spec_tests_dir();
        for preset in ["mainnet", "minimal"] {
            let config = dir.join(format!("configs/{preset}.yaml"));
            let spec = ChainSpec::from_config_file(&config).expect("the spec's config loads");
            let served = match preset {
                "mainnet" => config_spec::<MainnetEthSpec>(&spec),
                _ => config_spec::<MinimalEthSpec>(&spec),
            };
            let file_keys = read_spec_file(&config);
            for key in NOT_SERVED {
                assert!(
                    file_keys.iter().any(|(k, _)| k == key),
                    "{key} is not in {preset}.yaml any more: drop it from NOT_SERVED"
                );
            }
            let checked = assert_serves_file(&served, &config, &NOT_SERVED);
            assert_eq!(checked + NOT_SERVED.len(), file_keys.len());
            for key in [
                "MAX_REQUEST_PAYLOADS",
                "PAYLOAD_ATTESTATION_DUE_BPS",
                "GAS_LIMIT_SCHEDULE",
            ] {
                assert!(served.0.contains_key(key), "{preset}: {key}");
            }

            for fork in [
                "phase0",
                "altair",
                "bellatrix",
                "capella",
                "deneb",
                "electra",
                "fulu",
                "gloas",
            ] {
                let file = dir.join(format!("presets/{preset}/{fork}.yaml"));
                let checked = assert_serves_file(&served, &file, &[]);
                assert!(checked > 0, "{}: no keys read", file.display());
            }
        }
    }

    #[test]
    fn serves_the_gloas_config_and_preset_values() {
        let minimal = config_spec::<MinimalEthSpec>(&ChainSpec::minimal());
        for (key, value) in [
            ("MIN_BUILDER_WITHDRAWABILITY_DELAY", 2),
            ("ATTESTATION_DUE_BPS_GLOAS", 2500),
            ("AGGREGATE_DUE_BPS_GLOAS", 5000),
            ("SYNC_MESSAGE_DUE_BPS_GLOAS", 2500),
            ("CONTRIBUTION_DUE_BPS_GLOAS", 5000),
            ("PAYLOAD_DUE_BPS", 5000),
            ("PAYLOAD_ATTESTATION_DUE_BPS", 7500),
            ("CHURN_LIMIT_QUOTIENT_GLOAS", 16),
            ("CONSOLIDATION_CHURN_LIMIT_QUOTIENT", 32),
            (
                "MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT_GLOAS",
                128_000_000_000,
            ),
            ("MAX_REQUEST_PAYLOADS", 128),
            ("PTC_SIZE", 16),
            ("MAX_BUILDERS_PER_WITHDRAWALS_SWEEP", 16),
            ("MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE", 1462),
        ] {
            assert_eq!(minimal.get_u64(key), Some(value), "{key}");
        }
        assert_eq!(minimal.get_str("DOMAIN_PTC_ATTESTER"), Some("0x0c000000"));
        assert_eq!(minimal.get_str("BUILDER_WITHDRAWAL_PREFIX"), Some("0xb0"));

        let mut spec = ChainSpec::mainnet();
        spec.gas_limit_schedule = vec![types::chain_spec::GasLimitScheduleEntry {
            epoch: 500_000,
            gas_limit: 60_000_000,
        }];
        let mainnet = config_spec::<MainnetEthSpec>(&spec);
        assert_eq!(mainnet.get_u64("PTC_SIZE"), Some(512));
        assert_eq!(mainnet.get_u64("CHURN_LIMIT_QUOTIENT_GLOAS"), Some(32_768));
        assert_eq!(
            mainnet.0.get("GAS_LIMIT_SCHEDULE"),
            Some(&serde_json::json!([{"EPOCH": "500000", "GAS_LIMIT": "60000000"}]))
        );
    }
}
