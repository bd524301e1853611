//! Reading a consensus `config.yaml` into a [`ChainSpec`].
//!
//! Config files write hex values unquoted (`GENESIS_FORK_VERSION: 0x00000000`), which a YAML
//! 1.2 reader resolves to an integer, dropping the leading zeros that give a `Version` its
//! width. So every scalar is read as the text written, and only then parsed as what its key
//! holds. Sequences and mappings (`BLOB_SCHEDULE`, `GAS_LIMIT_SCHEDULE`) are read as YAML values.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use alloy_primitives::{Address, FixedBytes, U256};
use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_yaml::Value;

use super::{
    BlobScheduleEntry, ChainSpec, ConfigError, FAR_FUTURE_EPOCH, GasLimitScheduleEntry,
    GloasConfigDefaults,
};
use crate::primitives::{Gwei, Version};

/// `NUMBER_OF_COLUMNS`, a preset value that is 128 in both presets; only used to default the
/// derived `MAX_REQUEST_DATA_COLUMN_SIDECARS` that newer configs no longer write.
const NUMBER_OF_COLUMNS: u64 = 128;

/// `TTFB_TIMEOUT` (seconds) as phase0 defined it, before the spec dropped it from the config.
const DEFAULT_TTFB_TIMEOUT: u64 = 5;
/// `RESP_TIMEOUT` (seconds) as phase0 defined it, before the spec dropped it from the config.
const DEFAULT_RESP_TIMEOUT: u64 = 10;

const EXPECTED_U64: &str = "a decimal unsigned 64-bit integer";
const EXPECTED_U256: &str = "a decimal unsigned 256-bit integer";
const EXPECTED_VERSION: &str = "0x followed by 8 hex digits";
const EXPECTED_HASH32: &str = "0x followed by 64 hex digits";
const EXPECTED_ADDRESS: &str = "0x followed by 40 hex digits";
const EXPECTED_SCALAR: &str = "a single value, not a list or mapping";
const EXPECTED_BLOB_SCHEDULE: &str = "a list of {EPOCH, MAX_BLOBS_PER_BLOCK} entries";
const EXPECTED_BLOB_SCHEDULE_ENTRY: &str = "a mapping with EPOCH and MAX_BLOBS_PER_BLOCK";
const EXPECTED_GAS_LIMIT_SCHEDULE: &str = "a list of {EPOCH, GAS_LIMIT} entries";
const EXPECTED_GAS_LIMIT_SCHEDULE_ENTRY: &str = "a mapping with EPOCH and GAS_LIMIT";

/// The keys of one config file: scalars as the text written, other values as parsed YAML.
#[derive(Debug, Default, Clone)]
pub(super) struct RawConfig {
    scalars: BTreeMap<String, String>,
    structured: BTreeMap<String, Value>,
}

impl RawConfig {
    /// Reads `yaml`, which must be a mapping from string keys to values (or empty).
    pub(super) fn parse(yaml: &str) -> Result<Self, ConfigError> {
        // First pass: check the document's shape (this also rejects duplicate keys and
        // multi-document input) and keep the values that are not scalars.
        let structured = match serde_yaml::from_str(yaml).map_err(yaml_error)? {
            TopLevel::Mapping(structured) => structured,
            TopLevel::Other(what) => return Err(ConfigError::NotAMapping(what)),
        };
        // Second pass: the text of every scalar as written.
        let scalars = ScalarsSeed {
            structured: &structured,
        }
        .deserialize(serde_yaml::Deserializer::from_str(yaml))
        .map_err(yaml_error)?;
        Ok(Self {
            scalars,
            structured,
        })
    }

    /// Replaces this config's values with those `overrides` sets.
    pub(super) fn apply(&mut self, overrides: RawConfig) {
        for (key, value) in overrides.scalars {
            self.structured.remove(&key);
            self.scalars.insert(key, value);
        }
        for (key, value) in overrides.structured {
            self.scalars.remove(&key);
            self.structured.insert(key, value);
        }
    }

    /// Builds the [`ChainSpec`], taking each known key out; what is left becomes `extra`.
    pub(super) fn into_chain_spec(mut self) -> Result<ChainSpec, ConfigError> {
        let preset_base = self.string("PRESET_BASE")?;
        let config_name = self.string("CONFIG_NAME")?;

        let terminal_total_difficulty = self.u256("TERMINAL_TOTAL_DIFFICULTY")?;
        let terminal_block_hash = self.bytes::<32>("TERMINAL_BLOCK_HASH", EXPECTED_HASH32)?;
        let terminal_block_hash_activation_epoch =
            self.u64("TERMINAL_BLOCK_HASH_ACTIVATION_EPOCH")?;

        let min_genesis_active_validator_count = self.u64("MIN_GENESIS_ACTIVE_VALIDATOR_COUNT")?;
        let min_genesis_time = self.u64("MIN_GENESIS_TIME")?;
        let genesis_fork_version = self.version("GENESIS_FORK_VERSION")?;
        let genesis_delay = self.u64("GENESIS_DELAY")?;

        let altair_fork_version = self.version("ALTAIR_FORK_VERSION")?;
        let altair_fork_epoch = self.u64("ALTAIR_FORK_EPOCH")?;
        let bellatrix_fork_version = self.version("BELLATRIX_FORK_VERSION")?;
        let bellatrix_fork_epoch = self.u64("BELLATRIX_FORK_EPOCH")?;
        let capella_fork_version = self.version("CAPELLA_FORK_VERSION")?;
        let capella_fork_epoch = self.u64("CAPELLA_FORK_EPOCH")?;
        let deneb_fork_version = self.version("DENEB_FORK_VERSION")?;
        let deneb_fork_epoch = self.u64("DENEB_FORK_EPOCH")?;
        let electra_fork_version = self.version("ELECTRA_FORK_VERSION")?;
        let electra_fork_epoch = self.u64("ELECTRA_FORK_EPOCH")?;
        let fulu_fork_version = self.version("FULU_FORK_VERSION")?;
        let fulu_fork_epoch = self.u64("FULU_FORK_EPOCH")?;
        // Gloas is not run, only scheduled (the light client verifies data across it); configs
        // written before Gloas do not have its keys.
        let gloas_fork_version = self.optional_version("GLOAS_FORK_VERSION")?;
        let gloas_fork_epoch = self
            .optional_u64("GLOAS_FORK_EPOCH")?
            .unwrap_or(FAR_FUTURE_EPOCH);
        if gloas_fork_epoch != FAR_FUTURE_EPOCH && gloas_fork_version.is_none() {
            return Err(ConfigError::MissingKey("GLOAS_FORK_VERSION".into()));
        }

        // Configs before v1.6 write SECONDS_PER_SLOT, later ones SLOT_DURATION_MS; some both.
        let (seconds_per_slot, slot_duration_ms) = match (
            self.optional_u64("SECONDS_PER_SLOT")?,
            self.optional_u64("SLOT_DURATION_MS")?,
        ) {
            (Some(seconds), Some(ms)) => {
                if seconds.checked_mul(1000) != Some(ms) {
                    return Err(ConfigError::Inconsistent(format!(
                        "SECONDS_PER_SLOT is {seconds} but SLOT_DURATION_MS is {ms}"
                    )));
                }
                (seconds, ms)
            }
            (Some(seconds), None) => {
                let ms = seconds
                    .checked_mul(1000)
                    .ok_or_else(|| invalid("SECONDS_PER_SLOT", seconds, "at most 2**64 / 1000"))?;
                (seconds, ms)
            }
            (None, Some(ms)) => (ms / 1000, ms),
            (None, None) => return Err(ConfigError::MissingKey("SLOT_DURATION_MS".into())),
        };
        let seconds_per_eth1_block = self.u64("SECONDS_PER_ETH1_BLOCK")?;
        let min_validator_withdrawability_delay =
            self.u64("MIN_VALIDATOR_WITHDRAWABILITY_DELAY")?;
        let shard_committee_period = self.u64("SHARD_COMMITTEE_PERIOD")?;
        let eth1_follow_distance = self.u64("ETH1_FOLLOW_DISTANCE")?;
        let proposer_reorg_cutoff_bps = self.u64("PROPOSER_REORG_CUTOFF_BPS")?;
        let attestation_due_bps = self.u64("ATTESTATION_DUE_BPS")?;
        let aggregate_due_bps = self.u64("AGGREGATE_DUE_BPS")?;
        let sync_message_due_bps = self.u64("SYNC_MESSAGE_DUE_BPS")?;
        let contribution_due_bps = self.u64("CONTRIBUTION_DUE_BPS")?;

        let inactivity_score_bias = self.u64("INACTIVITY_SCORE_BIAS")?;
        let inactivity_score_recovery_rate = self.u64("INACTIVITY_SCORE_RECOVERY_RATE")?;
        let ejection_balance: Gwei = self.u64("EJECTION_BALANCE")?;
        let min_per_epoch_churn_limit = self.u64("MIN_PER_EPOCH_CHURN_LIMIT")?;
        let churn_limit_quotient = self.u64("CHURN_LIMIT_QUOTIENT")?;
        let max_per_epoch_activation_churn_limit =
            self.u64("MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT")?;
        let min_per_epoch_churn_limit_electra: Gwei =
            self.u64("MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA")?;
        let max_per_epoch_activation_exit_churn_limit: Gwei =
            self.u64("MAX_PER_EPOCH_ACTIVATION_EXIT_CHURN_LIMIT")?;

        let proposer_score_boost = self.u64("PROPOSER_SCORE_BOOST")?;
        let reorg_head_weight_threshold = self.u64("REORG_HEAD_WEIGHT_THRESHOLD")?;
        let reorg_parent_weight_threshold = self.u64("REORG_PARENT_WEIGHT_THRESHOLD")?;
        let reorg_max_epochs_since_finalization =
            self.u64("REORG_MAX_EPOCHS_SINCE_FINALIZATION")?;

        let deposit_chain_id = self.u64("DEPOSIT_CHAIN_ID")?;
        let deposit_network_id = self.u64("DEPOSIT_NETWORK_ID")?;
        let deposit_contract_address =
            Address::from(self.bytes::<20>("DEPOSIT_CONTRACT_ADDRESS", EXPECTED_ADDRESS)?);

        let max_payload_size = self.u64("MAX_PAYLOAD_SIZE")?;
        let max_request_blocks = self.u64("MAX_REQUEST_BLOCKS")?;
        let epochs_per_subnet_subscription = self.u64("EPOCHS_PER_SUBNET_SUBSCRIPTION")?;
        // [spec]: phase0/p2p-interface.md#compute_min_epochs_for_block_requests
        let min_epochs_for_block_requests =
            match self.optional_u64("MIN_EPOCHS_FOR_BLOCK_REQUESTS")? {
                Some(value) => value,
                None => min_validator_withdrawability_delay
                    .checked_add(churn_limit_quotient / 2)
                    .ok_or_else(|| overflow("MIN_EPOCHS_FOR_BLOCK_REQUESTS"))?,
            };
        let ttfb_timeout = self
            .optional_u64("TTFB_TIMEOUT")?
            .unwrap_or(DEFAULT_TTFB_TIMEOUT);
        let resp_timeout = self
            .optional_u64("RESP_TIMEOUT")?
            .unwrap_or(DEFAULT_RESP_TIMEOUT);
        let attestation_propagation_slot_range = self.u64("ATTESTATION_PROPAGATION_SLOT_RANGE")?;
        let maximum_gossip_clock_disparity = self.u64("MAXIMUM_GOSSIP_CLOCK_DISPARITY")?;
        let message_domain_invalid_snappy = self.version("MESSAGE_DOMAIN_INVALID_SNAPPY")?;
        let message_domain_valid_snappy = self.version("MESSAGE_DOMAIN_VALID_SNAPPY")?;
        let subnets_per_node = self.u64("SUBNETS_PER_NODE")?;
        let attestation_subnet_count = self.nonzero_u64("ATTESTATION_SUBNET_COUNT")?;
        let attestation_subnet_extra_bits = self.u64("ATTESTATION_SUBNET_EXTRA_BITS")?;
        // [spec]: phase0/p2p-interface.md#compute_attestation_subnet_prefix_bits
        let attestation_subnet_prefix_bits =
            match self.optional_u64("ATTESTATION_SUBNET_PREFIX_BITS")? {
                Some(value) => value,
                None => ceillog2(attestation_subnet_count)
                    .checked_add(attestation_subnet_extra_bits)
                    .ok_or_else(|| overflow("ATTESTATION_SUBNET_PREFIX_BITS"))?,
            };

        let max_request_blocks_deneb = self.u64("MAX_REQUEST_BLOCKS_DENEB")?;
        let min_epochs_for_blob_sidecars_requests =
            self.u64("MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS")?;
        let blob_sidecar_subnet_count = self.nonzero_u64("BLOB_SIDECAR_SUBNET_COUNT")?;
        let max_blobs_per_block = self.u64("MAX_BLOBS_PER_BLOCK")?;
        // [spec]: deneb/p2p-interface.md#new-compute_max_request_blob_sidecars
        let max_request_blob_sidecars = self.derived_product(
            "MAX_REQUEST_BLOB_SIDECARS",
            max_request_blocks_deneb,
            max_blobs_per_block,
        )?;

        let blob_sidecar_subnet_count_electra =
            self.nonzero_u64("BLOB_SIDECAR_SUBNET_COUNT_ELECTRA")?;
        let max_blobs_per_block_electra = self.u64("MAX_BLOBS_PER_BLOCK_ELECTRA")?;
        // [spec]: electra/p2p-interface.md#modified-compute_max_request_blob_sidecars
        let max_request_blob_sidecars_electra = self.derived_product(
            "MAX_REQUEST_BLOB_SIDECARS_ELECTRA",
            max_request_blocks_deneb,
            max_blobs_per_block_electra,
        )?;

        let number_of_custody_groups = self.nonzero_u64("NUMBER_OF_CUSTODY_GROUPS")?;
        let data_column_sidecar_subnet_count =
            self.nonzero_u64("DATA_COLUMN_SIDECAR_SUBNET_COUNT")?;
        // [spec]: fulu/p2p-interface.md#compute_max_request_data_column_sidecars
        let max_request_data_column_sidecars = self.derived_product(
            "MAX_REQUEST_DATA_COLUMN_SIDECARS",
            max_request_blocks_deneb,
            NUMBER_OF_COLUMNS,
        )?;
        let samples_per_slot = self.u64("SAMPLES_PER_SLOT")?;
        let custody_requirement = self.u64("CUSTODY_REQUIREMENT")?;
        let validator_custody_requirement = self.u64("VALIDATOR_CUSTODY_REQUIREMENT")?;
        let balance_per_additional_custody_group: Gwei =
            self.nonzero_u64("BALANCE_PER_ADDITIONAL_CUSTODY_GROUP")?;
        let min_epochs_for_data_column_sidecars_requests =
            self.u64("MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS")?;

        // Gloas: a config written before Gloas lacks these keys and takes the spec's values
        // for its preset; a key that is present must hold a valid value.
        let gloas = GloasConfigDefaults::for_preset_base(&preset_base);
        let min_builder_withdrawability_delay = self.u64_or(
            "MIN_BUILDER_WITHDRAWABILITY_DELAY",
            gloas.min_builder_withdrawability_delay,
        )?;
        let attestation_due_bps_gloas =
            self.u64_or("ATTESTATION_DUE_BPS_GLOAS", gloas.attestation_due_bps_gloas)?;
        let aggregate_due_bps_gloas =
            self.u64_or("AGGREGATE_DUE_BPS_GLOAS", gloas.aggregate_due_bps_gloas)?;
        let sync_message_due_bps_gloas = self.u64_or(
            "SYNC_MESSAGE_DUE_BPS_GLOAS",
            gloas.sync_message_due_bps_gloas,
        )?;
        let contribution_due_bps_gloas = self.u64_or(
            "CONTRIBUTION_DUE_BPS_GLOAS",
            gloas.contribution_due_bps_gloas,
        )?;
        let payload_due_bps = self.u64_or("PAYLOAD_DUE_BPS", gloas.payload_due_bps)?;
        let payload_attestation_due_bps = self.u64_or(
            "PAYLOAD_ATTESTATION_DUE_BPS",
            gloas.payload_attestation_due_bps,
        )?;
        let churn_limit_quotient_gloas = self.nonzero_u64_or(
            "CHURN_LIMIT_QUOTIENT_GLOAS",
            gloas.churn_limit_quotient_gloas,
        )?;
        let consolidation_churn_limit_quotient = self.nonzero_u64_or(
            "CONSOLIDATION_CHURN_LIMIT_QUOTIENT",
            gloas.consolidation_churn_limit_quotient,
        )?;
        let max_per_epoch_activation_churn_limit_gloas: Gwei = self.u64_or(
            "MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT_GLOAS",
            gloas.max_per_epoch_activation_churn_limit_gloas,
        )?;
        let max_request_payloads =
            self.u64_or("MAX_REQUEST_PAYLOADS", gloas.max_request_payloads)?;

        let blob_schedule = self.blob_schedule()?;
        let gas_limit_schedule = self.gas_limit_schedule()?;

        if slot_duration_ms == 0 {
            return Err(invalid(
                "SLOT_DURATION_MS",
                0,
                "a positive number of milliseconds",
            ));
        }
        if churn_limit_quotient == 0 {
            return Err(invalid("CHURN_LIMIT_QUOTIENT", 0, "a positive integer"));
        }

        let extra = self.into_extra();
        let spec = ChainSpec {
            preset_base,
            config_name,
            terminal_total_difficulty,
            terminal_block_hash: terminal_block_hash.into(),
            terminal_block_hash_activation_epoch,
            min_genesis_active_validator_count,
            min_genesis_time,
            genesis_fork_version,
            genesis_delay,
            altair_fork_version,
            altair_fork_epoch,
            bellatrix_fork_version,
            bellatrix_fork_epoch,
            capella_fork_version,
            capella_fork_epoch,
            deneb_fork_version,
            deneb_fork_epoch,
            electra_fork_version,
            electra_fork_epoch,
            fulu_fork_version,
            fulu_fork_epoch,
            gloas_fork_version,
            gloas_fork_epoch,
            seconds_per_slot,
            slot_duration_ms,
            seconds_per_eth1_block,
            min_validator_withdrawability_delay,
            shard_committee_period,
            eth1_follow_distance,
            proposer_reorg_cutoff_bps,
            attestation_due_bps,
            aggregate_due_bps,
            sync_message_due_bps,
            contribution_due_bps,
            inactivity_score_bias,
            inactivity_score_recovery_rate,
            ejection_balance,
            min_per_epoch_churn_limit,
            churn_limit_quotient,
            max_per_epoch_activation_churn_limit,
            min_per_epoch_churn_limit_electra,
            max_per_epoch_activation_exit_churn_limit,
            proposer_score_boost,
            reorg_head_weight_threshold,
            reorg_parent_weight_threshold,
            reorg_max_epochs_since_finalization,
            deposit_chain_id,
            deposit_network_id,
            deposit_contract_address,
            max_payload_size,
            max_request_blocks,
            epochs_per_subnet_subscription,
            min_epochs_for_block_requests,
            ttfb_timeout,
            resp_timeout,
            attestation_propagation_slot_range,
            maximum_gossip_clock_disparity,
            message_domain_invalid_snappy,
            message_domain_valid_snappy,
            subnets_per_node,
            attestation_subnet_count,
            attestation_subnet_extra_bits,
            attestation_subnet_prefix_bits,
            max_request_blocks_deneb,
            max_request_blob_sidecars,
            min_epochs_for_blob_sidecars_requests,
            blob_sidecar_subnet_count,
            max_blobs_per_block,
            blob_sidecar_subnet_count_electra,
            max_blobs_per_block_electra,
            max_request_blob_sidecars_electra,
            number_of_custody_groups,
            data_column_sidecar_subnet_count,
            max_request_data_column_sidecars,
            samples_per_slot,
            custody_requirement,
            validator_custody_requirement,
            balance_per_additional_custody_group,
            min_epochs_for_data_column_sidecars_requests,
            min_builder_withdrawability_delay,
            attestation_due_bps_gloas,
            aggregate_due_bps_gloas,
            sync_message_due_bps_gloas,
            contribution_due_bps_gloas,
            payload_due_bps,
            payload_attestation_due_bps,
            churn_limit_quotient_gloas,
            consolidation_churn_limit_quotient,
            max_per_epoch_activation_churn_limit_gloas,
            max_request_payloads,
            blob_schedule,
            gas_limit_schedule,
            extra,
        };
        spec.check_fork_order()?;
        Ok(spec)
    }

    /// Takes `key` out, as the text written; `None` when absent.
    fn take_scalar(&mut self, key: &'static str) -> Result<Option<String>, ConfigError> {
        if let Some(value) = self.structured.remove(key) {
            return Err(ConfigError::InvalidValue {
                key: key.into(),
                value: render(&value),
                expected: EXPECTED_SCALAR,
            });
        }
        Ok(self.scalars.remove(key))
    }

    fn required(&mut self, key: &'static str) -> Result<String, ConfigError> {
        self.take_scalar(key)?
            .ok_or_else(|| ConfigError::MissingKey(key.into()))
    }

    fn string(&mut self, key: &'static str) -> Result<String, ConfigError> {
        self.required(key)
    }

    fn u64(&mut self, key: &'static str) -> Result<u64, ConfigError> {
        let text = self.required(key)?;
        parse_u64(key, &text)
    }

    fn nonzero_u64(&mut self, key: &'static str) -> Result<u64, ConfigError> {
        match self.u64(key)? {
            0 => Err(invalid(key, 0, "a positive integer")),
            value => Ok(value),
        }
    }

    fn optional_u64(&mut self, key: &'static str) -> Result<Option<u64>, ConfigError> {
        self.take_scalar(key)?
            .map(|text| parse_u64(key, &text))
            .transpose()
    }

    /// A key that configs written before its fork lack: `default` when absent.
    fn u64_or(&mut self, key: &'static str, default: u64) -> Result<u64, ConfigError> {
        Ok(self.optional_u64(key)?.unwrap_or(default))
    }

    /// As [`RawConfig::u64_or`], for a key that must not be 0 (a divisor).
    fn nonzero_u64_or(&mut self, key: &'static str, default: u64) -> Result<u64, ConfigError> {
        match self.u64_or(key, default)? {
            0 => Err(invalid(key, 0, "a positive integer")),
            value => Ok(value),
        }
    }

    /// A key newer configs omit because the spec now computes it as `a * b`.
    fn derived_product(&mut self, key: &'static str, a: u64, b: u64) -> Result<u64, ConfigError> {
        match self.optional_u64(key)? {
            Some(value) => Ok(value),
            None => a.checked_mul(b).ok_or_else(|| overflow(key)),
        }
    }

    fn u256(&mut self, key: &'static str) -> Result<U256, ConfigError> {
        let text = self.required(key)?;
        if !is_decimal(&text) {
            return Err(invalid(key, &text, EXPECTED_U256));
        }
        U256::from_str_radix(&text, 10).map_err(|_| invalid(key, &text, EXPECTED_U256))
    }

    fn version(&mut self, key: &'static str) -> Result<FixedBytes<4>, ConfigError> {
        self.bytes::<4>(key, EXPECTED_VERSION).map(FixedBytes::from)
    }

    fn optional_version(&mut self, key: &'static str) -> Result<Option<Version>, ConfigError> {
        if self.scalars.contains_key(key) || self.structured.contains_key(key) {
            self.version(key).map(Some)
        } else {
            Ok(None)
        }
    }

    fn bytes<const N: usize>(
        &mut self,
        key: &'static str,
        expected: &'static str,
    ) -> Result<[u8; N], ConfigError> {
        let text = self.required(key)?;
        text.strip_prefix("0x")
            .filter(|digits| digits.len() == 2 * N)
            .and_then(|digits| hex::decode(digits).ok())
            .and_then(|bytes| <[u8; N]>::try_from(bytes).ok())
            .ok_or_else(|| invalid(key, &text, expected))
    }

    /// `BLOB_SCHEDULE`, sorted by epoch; absent means empty.
    ///
    /// [spec]: fulu/beacon-chain.md#blob-schedule
    fn blob_schedule(&mut self) -> Result<Vec<BlobScheduleEntry>, ConfigError> {
        let entries = self.schedule(
            "BLOB_SCHEDULE",
            "MAX_BLOBS_PER_BLOCK",
            EXPECTED_BLOB_SCHEDULE,
            EXPECTED_BLOB_SCHEDULE_ENTRY,
        )?;
        if let Some(epoch) = first_repeated_epoch(&entries) {
            return Err(ConfigError::DuplicateBlobScheduleEpoch(epoch));
        }
        Ok(entries
            .into_iter()
            .map(|(epoch, max_blobs_per_block)| BlobScheduleEntry {
                epoch,
                max_blobs_per_block,
            })
            .collect())
    }

    /// `GAS_LIMIT_SCHEDULE` (EIP-8261), sorted by epoch; absent means empty. Two entries for
    /// one epoch would make the scheduled gas limit ambiguous, so they are rejected as in
    /// `BLOB_SCHEDULE`.
    ///
    /// [spec]: gloas/beacon-chain.md#gas-limit-schedule
    fn gas_limit_schedule(&mut self) -> Result<Vec<GasLimitScheduleEntry>, ConfigError> {
        const KEY: &str = "GAS_LIMIT_SCHEDULE";
        let entries = self.schedule(
            KEY,
            "GAS_LIMIT",
            EXPECTED_GAS_LIMIT_SCHEDULE,
            EXPECTED_GAS_LIMIT_SCHEDULE_ENTRY,
        )?;
        if let Some(epoch) = first_repeated_epoch(&entries) {
            return Err(ConfigError::Inconsistent(format!(
                "{KEY} has more than one entry for epoch {epoch}"
            )));
        }
        Ok(entries
            .into_iter()
            .map(|(epoch, gas_limit)| GasLimitScheduleEntry { epoch, gas_limit })
            .collect())
    }

    /// A list of `{EPOCH, <value>}` records under `key`, as `(epoch, value)` sorted by epoch;
    /// absent means empty. Errors name the entry and field (`KEY[1].EPOCH`).
    fn schedule(
        &mut self,
        key: &'static str,
        value: &'static str,
        expected: &'static str,
        expected_entry: &'static str,
    ) -> Result<Vec<(u64, u64)>, ConfigError> {
        if let Some(text) = self.scalars.remove(key) {
            return Err(invalid(key, text, expected));
        }
        let entries = match self.structured.remove(key) {
            None => return Ok(Vec::new()),
            Some(Value::Sequence(entries)) => entries,
            Some(other) => return Err(invalid(key, render(&other), expected)),
        };
        let mut schedule = Vec::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let Value::Mapping(fields) = entry else {
                return Err(invalid(
                    format!("{key}[{index}]"),
                    render(entry),
                    expected_entry,
                ));
            };
            let field = |name: &str| -> Result<u64, ConfigError> {
                let key = format!("{key}[{index}].{name}");
                match fields.get(name) {
                    None => Err(ConfigError::MissingKey(key)),
                    Some(Value::Number(n)) => {
                        n.as_u64().ok_or_else(|| invalid(key, n, EXPECTED_U64))
                    }
                    Some(Value::String(text)) => parse_u64(&key, text),
                    Some(other) => Err(invalid(key, render(other), EXPECTED_U64)),
                }
            };
            schedule.push((field("EPOCH")?, field(value)?));
        }
        schedule.sort_by_key(|(epoch, _)| *epoch);
        Ok(schedule)
    }

    /// The keys nobody took, each as written (structured values re-rendered as YAML).
    fn into_extra(self) -> BTreeMap<String, String> {
        let mut extra = self.scalars;
        extra.extend(
            self.structured
                .into_iter()
                .map(|(key, value)| (key, render(&value))),
        );
        extra
    }
}

/// What the first pass finds at the top of the document.
enum TopLevel {
    /// A mapping (or an empty document), with the values that are not scalars.
    Mapping(BTreeMap<String, Value>),
    /// Anything else, described for the error message.
    Other(String),
}

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopLevelVisitor)
    }
}

struct TopLevelVisitor;

impl<'de> Visitor<'de> for TopLevelVisitor {
    type Value = TopLevel;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of config keys to values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = BTreeSet::new();
        let mut structured = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            let Shape(value) = map.next_value()?;
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate key {key}")));
            }
            if let Some(value) = value {
                structured.insert(key, value);
            }
        }
        Ok(TopLevel::Mapping(structured))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(TopLevel::Mapping(BTreeMap::new()))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Other("a list".into()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(TopLevel::Other(v.to_string()))
    }
}

/// A value's shape: `None` for a scalar (of any size; read again as text in the second pass),
/// the parsed value for a list or mapping.
struct Shape(Option<Value>);

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar, a list or a mapping")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(|value| Shape(Some(value)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(|value| Shape(Some(value)))
    }

    fn visit_some<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        Shape::deserialize(deserializer)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Shape(None))
    }
}

/// Reads a top-level mapping, keeping each scalar value's text and skipping structured values.
struct ScalarsSeed<'a> {
    structured: &'a BTreeMap<String, Value>,
}

impl<'de> DeserializeSeed<'de> for ScalarsSeed<'_> {
    type Value = BTreeMap<String, String>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ScalarsSeed<'_> {
    type Value = BTreeMap<String, String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of config keys to values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut scalars = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.structured.contains_key(&key) {
                map.next_value::<IgnoredAny>()?;
            } else {
                // Deserializing a scalar as a string yields its text, unresolved.
                scalars.insert(key, map.next_value::<String>()?);
            }
        }
        Ok(scalars)
    }
}

/// The first epoch that two entries of a sorted schedule share.
fn first_repeated_epoch(schedule: &[(u64, u64)]) -> Option<u64> {
    schedule.windows(2).find_map(|pair| match pair {
        [(a, _), (b, _)] if a == b => Some(*a),
        _ => None,
    })
}

/// A decimal `u64`: ASCII digits only (no sign, no separators, no hex).
fn parse_u64(key: &str, text: &str) -> Result<u64, ConfigError> {
    if !is_decimal(text) {
        return Err(invalid(key, text, EXPECTED_U64));
    }
    text.parse().map_err(|_| invalid(key, text, EXPECTED_U64))
}

fn is_decimal(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The spec's `ceillog2`: the smallest `n` with `2**n >= x` (0 for `x <= 1`).
fn ceillog2(x: u64) -> u64 {
    match x.checked_sub(1) {
        None | Some(0) => 0,
        Some(below) => u64::from(64 - below.leading_zeros()),
    }
}

fn invalid(
    key: impl Into<String>,
    value: impl fmt::Display,
    expected: &'static str,
) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.into(),
        value: value.to_string(),
        expected,
    }
}

fn overflow(key: &'static str) -> ConfigError {
    ConfigError::Inconsistent(format!(
        "{key} is absent and the value derived for it overflows a u64"
    ))
}

fn yaml_error(error: serde_yaml::Error) -> ConfigError {
    ConfigError::Yaml(error.to_string())
}

/// A YAML value as text: a string as is, anything else as YAML (for errors and `extra`).
fn render(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_yaml::to_string(other)
            .map(|text| text.trim_end().to_string())
            .unwrap_or_else(|_| format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceillog2_matches_the_spec() {
        let cases = [
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (64, 6),
            (65, 7),
            (u64::MAX, 64),
        ];
        for (x, expected) in cases {
            assert_eq!(ceillog2(x), expected, "ceillog2({x})");
        }
    }

    #[test]
    fn scalars_keep_their_text_and_structures_their_shape() {
        let raw =
            RawConfig::parse("A: 0x00000001\nB: '0x00'\nC: 007\nD: [1, 2]\nE:\n  - X: 1\nF:\n")
                .unwrap();
        let scalar = |key: &str| raw.scalars.get(key).map(String::as_str);
        assert_eq!(scalar("A"), Some("0x00000001"));
        assert_eq!(scalar("B"), Some("0x00"));
        assert_eq!(scalar("C"), Some("007"));
        assert_eq!(scalar("F"), Some(""));
        assert!(raw.structured.contains_key("D"));
        assert!(raw.structured.contains_key("E"));
    }

    #[test]
    fn overrides_replace_values_of_either_shape() {
        let mut raw = RawConfig::parse("A: 1\nB: [1]\n").unwrap();
        raw.apply(RawConfig::parse("A: [2]\nB: 3\nC: 4\n").unwrap());
        assert_eq!(raw.scalars.get("B").map(String::as_str), Some("3"));
        assert_eq!(raw.scalars.get("C").map(String::as_str), Some("4"));
        assert!(raw.structured.contains_key("A"));
        assert!(!raw.scalars.contains_key("A"));
    }
}
