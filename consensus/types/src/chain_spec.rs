//! [`ChainSpec`]: the runtime chain configuration, read from a standard consensus `config.yaml`,
//! and the fork schedule, blob schedule and fork digests it defines.
//!
//! The preset (compile-time) half of the configuration is [`EthSpec`]; this is the half a
//! network chooses: fork epochs and versions, timing, churn, networking limits, the BPO blob
//! schedule.
//!
//! [spec]: configs/mainnet.yaml of the consensus specs, and the *Configuration* section of each
//! fork's beacon-chain.md and p2p-interface.md.

mod describe;
mod gloas_config;
mod network;
mod parse;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use alloy_primitives::U256;

pub use gloas_config::{GasLimitScheduleEntry, GloasConfigDefaults};
pub use network::{
    HOODI_CONFIG_YAML, MAINNET_CONFIG_YAML, MINIMAL_CONFIG_YAML, Network, SEPOLIA_CONFIG_YAML,
    UnknownNetwork,
};

use crate::phase0::Fork;
use crate::primitives::{
    Domain, DomainType, Epoch, ExecutionAddress, FAR_FUTURE_EPOCH, ForkDigest, GENESIS_EPOCH, Gwei,
    Hash32, Root, Slot, Version,
};
use crate::signing::compute_fork_data_root;
use crate::{EthSpec, ForkName};

/// The version [`ChainSpec::fork_version`] gives a fork the config has no version for (Gloas in
/// a config written before it): such a fork is never scheduled, so this version is never in
/// force.
pub const UNKNOWN_FORK_VERSION: Version = Version::new([0xff; 4]);
use parse::RawConfig;

/// Why a `config.yaml` could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        message: String,
    },
    /// The text is not YAML (or holds more than one document, or a key twice).
    #[error("malformed YAML: {0}")]
    Yaml(String),
    /// The document is YAML but not a mapping of keys to values.
    #[error("a config must be a mapping of keys to values, found {0:?}")]
    NotAMapping(String),
    /// A required key is absent.
    #[error("missing required key {0}")]
    MissingKey(String),
    /// A key's value is not what the key holds.
    #[error("invalid value {value:?} for {key}: expected {expected}")]
    InvalidValue {
        /// The key (for blob schedule entries, e.g. `BLOB_SCHEDULE[1].EPOCH`).
        key: String,
        /// The value as written.
        value: String,
        /// What the key holds.
        expected: &'static str,
    },
    /// Two `BLOB_SCHEDULE` entries share an epoch, which fulu/beacon-chain.md forbids.
    #[error("BLOB_SCHEDULE has more than one entry for epoch {0}")]
    DuplicateBlobScheduleEpoch(Epoch),
    /// A fork activates before the fork it follows.
    #[error(
        "{fork} activates at epoch {epoch}, before {previous} at epoch {previous_epoch}; \
         forks must activate in order"
    )]
    ForkOrder {
        /// The fork scheduled too early.
        fork: ForkName,
        /// Its `*_FORK_EPOCH`.
        epoch: Epoch,
        /// The fork before it.
        previous: ForkName,
        /// That fork's `*_FORK_EPOCH` (`FAR_FUTURE_EPOCH` when not scheduled).
        previous_epoch: Epoch,
    },
    /// Values that contradict each other, or a derived value that overflows.
    #[error("inconsistent config: {0}")]
    Inconsistent(String),
}

/// One `BLOB_SCHEDULE` entry: from `epoch` on, blocks carry at most `max_blobs_per_block` blobs.
///
/// [spec]: fulu/beacon-chain.md#blob-schedule
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobScheduleEntry {
    /// `EPOCH`: the first epoch the limit applies to.
    pub epoch: Epoch,
    /// `MAX_BLOBS_PER_BLOCK`.
    pub max_blobs_per_block: u64,
}

/// `BlobParameters`, what [`ChainSpec::get_blob_parameters`] returns: the schedule entry in force,
/// or the Electra parameters before the first one.
///
/// [spec]: fulu/beacon-chain.md#blobparameters
pub type BlobParameters = BlobScheduleEntry;

/// The runtime chain configuration: every key of a consensus `config.yaml` for phase0 to Gloas.
///
/// Fields are named after the keys in snake case. Epochs use `FAR_FUTURE_EPOCH` (`u64::MAX`)
/// for "not scheduled", as the config files do; [`ChainSpec::fork_epoch`] turns that into `None`.
///
/// [spec]: configs/mainnet.yaml
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainSpec {
    /// `PRESET_BASE`: the preset the config extends (`mainnet`, `minimal`).
    pub preset_base: String,
    /// `CONFIG_NAME`: the network's short name.
    pub config_name: String,

    /// `TERMINAL_TOTAL_DIFFICULTY`: the proof-of-work difficulty that ended the merge.
    pub terminal_total_difficulty: U256,
    /// `TERMINAL_BLOCK_HASH`: a terminal block override (zero when unused).
    pub terminal_block_hash: Hash32,
    /// `TERMINAL_BLOCK_HASH_ACTIVATION_EPOCH`.
    pub terminal_block_hash_activation_epoch: Epoch,

    /// `MIN_GENESIS_ACTIVE_VALIDATOR_COUNT`.
    pub min_genesis_active_validator_count: u64,
    /// `MIN_GENESIS_TIME` (Unix seconds).
    pub min_genesis_time: u64,
    /// `GENESIS_FORK_VERSION`: the phase0 fork version.
    pub genesis_fork_version: Version,
    /// `GENESIS_DELAY` (seconds).
    pub genesis_delay: u64,

    /// `ALTAIR_FORK_VERSION`.
    pub altair_fork_version: Version,
    /// `ALTAIR_FORK_EPOCH`.
    pub altair_fork_epoch: Epoch,
    /// `BELLATRIX_FORK_VERSION`.
    pub bellatrix_fork_version: Version,
    /// `BELLATRIX_FORK_EPOCH`.
    pub bellatrix_fork_epoch: Epoch,
    /// `CAPELLA_FORK_VERSION`.
    pub capella_fork_version: Version,
    /// `CAPELLA_FORK_EPOCH`.
    pub capella_fork_epoch: Epoch,
    /// `DENEB_FORK_VERSION`.
    pub deneb_fork_version: Version,
    /// `DENEB_FORK_EPOCH`.
    pub deneb_fork_epoch: Epoch,
    /// `ELECTRA_FORK_VERSION`.
    pub electra_fork_version: Version,
    /// `ELECTRA_FORK_EPOCH`.
    pub electra_fork_epoch: Epoch,
    /// `FULU_FORK_VERSION`.
    pub fulu_fork_version: Version,
    /// `FULU_FORK_EPOCH`.
    pub fulu_fork_epoch: Epoch,
    /// `GLOAS_FORK_VERSION`; `None` in a config written before Gloas (whose `GLOAS_FORK_EPOCH`
    /// is then `FAR_FUTURE_EPOCH`: parsing refuses an epoch without its version). The fork
    /// schedule ([`ChainSpec::fork_epoch`], [`ChainSpec::compute_fork_version`], the digests)
    /// includes Gloas when the config schedules it; Arbor does not run Gloas
    /// ([`ForkName::LATEST_IMPLEMENTED`]).
    pub gloas_fork_version: Option<Version>,
    /// `GLOAS_FORK_EPOCH`; `FAR_FUTURE_EPOCH` when the config does not have it.
    pub gloas_fork_epoch: Epoch,

    /// `SECONDS_PER_SLOT`; derived from `SLOT_DURATION_MS` (rounded down) when absent.
    pub seconds_per_slot: u64,
    /// `SLOT_DURATION_MS`; derived from `SECONDS_PER_SLOT` when absent.
    pub slot_duration_ms: u64,
    /// `SECONDS_PER_ETH1_BLOCK`.
    pub seconds_per_eth1_block: u64,
    /// `MIN_VALIDATOR_WITHDRAWABILITY_DELAY` (epochs).
    pub min_validator_withdrawability_delay: Epoch,
    /// `SHARD_COMMITTEE_PERIOD` (epochs).
    pub shard_committee_period: Epoch,
    /// `ETH1_FOLLOW_DISTANCE` (execution blocks).
    pub eth1_follow_distance: u64,
    /// `PROPOSER_REORG_CUTOFF_BPS` (basis points of a slot).
    pub proposer_reorg_cutoff_bps: u64,
    /// `ATTESTATION_DUE_BPS` (basis points of a slot).
    pub attestation_due_bps: u64,
    /// `AGGREGATE_DUE_BPS` (basis points of a slot).
    pub aggregate_due_bps: u64,
    /// `SYNC_MESSAGE_DUE_BPS` (basis points of a slot).
    pub sync_message_due_bps: u64,
    /// `CONTRIBUTION_DUE_BPS` (basis points of a slot).
    pub contribution_due_bps: u64,

    /// `INACTIVITY_SCORE_BIAS`.
    pub inactivity_score_bias: u64,
    /// `INACTIVITY_SCORE_RECOVERY_RATE`.
    pub inactivity_score_recovery_rate: u64,
    /// `EJECTION_BALANCE`.
    pub ejection_balance: Gwei,
    /// `MIN_PER_EPOCH_CHURN_LIMIT` (validators).
    pub min_per_epoch_churn_limit: u64,
    /// `CHURN_LIMIT_QUOTIENT`.
    pub churn_limit_quotient: u64,
    /// `MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT` (validators, Deneb).
    pub max_per_epoch_activation_churn_limit: u64,
    /// `MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA`.
    pub min_per_epoch_churn_limit_electra: Gwei,
    /// `MAX_PER_EPOCH_ACTIVATION_EXIT_CHURN_LIMIT`.
    pub max_per_epoch_activation_exit_churn_limit: Gwei,

    /// `PROPOSER_SCORE_BOOST` (percent of a committee's weight).
    pub proposer_score_boost: u64,
    /// `REORG_HEAD_WEIGHT_THRESHOLD` (percent).
    pub reorg_head_weight_threshold: u64,
    /// `REORG_PARENT_WEIGHT_THRESHOLD` (percent).
    pub reorg_parent_weight_threshold: u64,
    /// `REORG_MAX_EPOCHS_SINCE_FINALIZATION`.
    pub reorg_max_epochs_since_finalization: Epoch,

    /// `DEPOSIT_CHAIN_ID`.
    pub deposit_chain_id: u64,
    /// `DEPOSIT_NETWORK_ID`.
    pub deposit_network_id: u64,
    /// `DEPOSIT_CONTRACT_ADDRESS`.
    pub deposit_contract_address: ExecutionAddress,

    /// `MAX_PAYLOAD_SIZE` (bytes, gossip and req/resp).
    pub max_payload_size: u64,
    /// `MAX_REQUEST_BLOCKS`.
    pub max_request_blocks: u64,
    /// `EPOCHS_PER_SUBNET_SUBSCRIPTION`.
    pub epochs_per_subnet_subscription: Epoch,
    /// `MIN_EPOCHS_FOR_BLOCK_REQUESTS`; when absent, the spec's
    /// `compute_min_epochs_for_block_requests()`.
    pub min_epochs_for_block_requests: Epoch,
    /// `TTFB_TIMEOUT` (seconds); 5 when absent, as phase0 defined it.
    pub ttfb_timeout: u64,
    /// `RESP_TIMEOUT` (seconds); 10 when absent, as phase0 defined it.
    pub resp_timeout: u64,
    /// `ATTESTATION_PROPAGATION_SLOT_RANGE`.
    pub attestation_propagation_slot_range: Slot,
    /// `MAXIMUM_GOSSIP_CLOCK_DISPARITY` (milliseconds).
    pub maximum_gossip_clock_disparity: u64,
    /// `MESSAGE_DOMAIN_INVALID_SNAPPY`.
    pub message_domain_invalid_snappy: DomainType,
    /// `MESSAGE_DOMAIN_VALID_SNAPPY`.
    pub message_domain_valid_snappy: DomainType,
    /// `SUBNETS_PER_NODE`.
    pub subnets_per_node: u64,
    /// `ATTESTATION_SUBNET_COUNT`.
    pub attestation_subnet_count: u64,
    /// `ATTESTATION_SUBNET_EXTRA_BITS`.
    pub attestation_subnet_extra_bits: u64,
    /// `ATTESTATION_SUBNET_PREFIX_BITS`; when absent, the spec's
    /// `compute_attestation_subnet_prefix_bits()`.
    pub attestation_subnet_prefix_bits: u64,

    /// `MAX_REQUEST_BLOCKS_DENEB`.
    pub max_request_blocks_deneb: u64,
    /// `MAX_REQUEST_BLOB_SIDECARS`; when absent, `MAX_REQUEST_BLOCKS_DENEB * MAX_BLOBS_PER_BLOCK`.
    pub max_request_blob_sidecars: u64,
    /// `MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS`.
    pub min_epochs_for_blob_sidecars_requests: Epoch,
    /// `BLOB_SIDECAR_SUBNET_COUNT`.
    pub blob_sidecar_subnet_count: u64,
    /// `MAX_BLOBS_PER_BLOCK` (Deneb).
    pub max_blobs_per_block: u64,

    /// `BLOB_SIDECAR_SUBNET_COUNT_ELECTRA`.
    pub blob_sidecar_subnet_count_electra: u64,
    /// `MAX_BLOBS_PER_BLOCK_ELECTRA`.
    pub max_blobs_per_block_electra: u64,
    /// `MAX_REQUEST_BLOB_SIDECARS_ELECTRA`; when absent,
    /// `MAX_REQUEST_BLOCKS_DENEB * MAX_BLOBS_PER_BLOCK_ELECTRA`.
    pub max_request_blob_sidecars_electra: u64,

    /// `NUMBER_OF_CUSTODY_GROUPS`.
    pub number_of_custody_groups: u64,
    /// `DATA_COLUMN_SIDECAR_SUBNET_COUNT`.
    pub data_column_sidecar_subnet_count: u64,
    /// `MAX_REQUEST_DATA_COLUMN_SIDECARS`; when absent,
    /// `MAX_REQUEST_BLOCKS_DENEB * NUMBER_OF_COLUMNS`.
    pub max_request_data_column_sidecars: u64,
    /// `SAMPLES_PER_SLOT`.
    pub samples_per_slot: u64,
    /// `CUSTODY_REQUIREMENT` (custody groups).
    pub custody_requirement: u64,
    /// `VALIDATOR_CUSTODY_REQUIREMENT` (custody groups).
    pub validator_custody_requirement: u64,
    /// `BALANCE_PER_ADDITIONAL_CUSTODY_GROUP`.
    pub balance_per_additional_custody_group: Gwei,
    /// `MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS`.
    pub min_epochs_for_data_column_sidecars_requests: Epoch,

    // Gloas. A config written before Gloas lacks these keys; each then takes the value of the
    // spec's `configs/mainnet.yaml`, or of `configs/minimal.yaml` when `PRESET_BASE` is
    // `minimal` ([`GloasConfigDefaults::for_preset_base`]).
    /// `MIN_BUILDER_WITHDRAWABILITY_DELAY` (epochs): a builder's exit to its withdrawable epoch.
    pub min_builder_withdrawability_delay: Epoch,
    /// `ATTESTATION_DUE_BPS_GLOAS` (basis points of a slot).
    pub attestation_due_bps_gloas: u64,
    /// `AGGREGATE_DUE_BPS_GLOAS` (basis points of a slot).
    pub aggregate_due_bps_gloas: u64,
    /// `SYNC_MESSAGE_DUE_BPS_GLOAS` (basis points of a slot).
    pub sync_message_due_bps_gloas: u64,
    /// `CONTRIBUTION_DUE_BPS_GLOAS` (basis points of a slot).
    pub contribution_due_bps_gloas: u64,
    /// `PAYLOAD_DUE_BPS` (basis points of a slot): when the builder reveals the payload.
    pub payload_due_bps: u64,
    /// `PAYLOAD_ATTESTATION_DUE_BPS` (basis points of a slot): when the PTC votes.
    pub payload_attestation_due_bps: u64,
    /// `CHURN_LIMIT_QUOTIENT_GLOAS` (EIP-8061: the exit churn's quotient).
    pub churn_limit_quotient_gloas: u64,
    /// `CONSOLIDATION_CHURN_LIMIT_QUOTIENT` (EIP-8061).
    pub consolidation_churn_limit_quotient: u64,
    /// `MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT_GLOAS` (EIP-8061: the activation churn's cap).
    pub max_per_epoch_activation_churn_limit_gloas: Gwei,
    /// `MAX_REQUEST_PAYLOADS`: the most envelopes one req/resp request asks for.
    pub max_request_payloads: u64,

    /// `BLOB_SCHEDULE`, sorted by epoch (ascending), no two entries with the same epoch; empty
    /// when absent.
    pub blob_schedule: Vec<BlobScheduleEntry>,
    /// `GAS_LIMIT_SCHEDULE` (EIP-8261, advisory), sorted by epoch (ascending), no two entries
    /// with the same epoch; empty when absent.
    pub gas_limit_schedule: Vec<GasLimitScheduleEntry>,

    /// Every key Arbor does not read (later forks, feature branches, client extensions), with its
    /// value as written; lists and mappings re-rendered as YAML.
    pub extra: BTreeMap<String, String>,
}

static MAINNET: LazyLock<ChainSpec> = LazyLock::new(|| built_in("mainnet", MAINNET_CONFIG_YAML));
static MINIMAL: LazyLock<ChainSpec> = LazyLock::new(|| built_in("minimal", MINIMAL_CONFIG_YAML));
static SEPOLIA: LazyLock<ChainSpec> = LazyLock::new(|| built_in("sepolia", SEPOLIA_CONFIG_YAML));
static HOODI: LazyLock<ChainSpec> = LazyLock::new(|| built_in("hoodi", HOODI_CONFIG_YAML));

fn built_in(name: &str, yaml: &str) -> ChainSpec {
    ChainSpec::from_config_yaml(yaml)
        .unwrap_or_else(|e| panic!("the built-in {name} config is valid (unit-tested): {e}"))
}

impl ChainSpec {
    /// Reads a complete `config.yaml`. Unknown keys go to [`ChainSpec::extra`]; keys the spec now
    /// derives (e.g. `MAX_REQUEST_BLOB_SIDECARS`) take the derived value when absent.
    pub fn from_config_yaml(yaml: &str) -> Result<Self, ConfigError> {
        RawConfig::parse(yaml)?.into_chain_spec()
    }

    /// Reads `overrides_yaml` on top of `base_yaml`: keys in `overrides_yaml` win. This is how the
    /// spec tests' partial `config.yaml` files apply to the preset's config.
    pub fn from_config_yaml_with_overrides(
        base_yaml: &str,
        overrides_yaml: &str,
    ) -> Result<Self, ConfigError> {
        let mut raw = RawConfig::parse(base_yaml)?;
        raw.apply(RawConfig::parse(overrides_yaml)?);
        raw.into_chain_spec()
    }

    /// Reads a complete `config.yaml` file.
    pub fn from_config_file(path: &Path) -> Result<Self, ConfigError> {
        let yaml = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::from_config_yaml(&yaml)
    }

    /// The configuration of a built-in network.
    pub fn for_network(network: Network) -> Self {
        match network {
            Network::Mainnet => MAINNET.clone(),
            Network::Sepolia => SEPOLIA.clone(),
            Network::Hoodi => HOODI.clone(),
        }
    }

    /// The consensus-specs mainnet config (`configs/mainnet.yaml`).
    pub fn mainnet() -> Self {
        MAINNET.clone()
    }

    /// The consensus-specs minimal config (`configs/minimal.yaml`), the spec tests' base.
    pub fn minimal() -> Self {
        MINIMAL.clone()
    }

    /// The `*_FORK_EPOCH` of `fork`, `None` when it is `FAR_FUTURE_EPOCH`; phase0 is at genesis.
    pub fn fork_epoch(&self, fork: ForkName) -> Option<Epoch> {
        let epoch = match fork {
            ForkName::Phase0 => GENESIS_EPOCH,
            ForkName::Altair => self.altair_fork_epoch,
            ForkName::Bellatrix => self.bellatrix_fork_epoch,
            ForkName::Capella => self.capella_fork_epoch,
            ForkName::Deneb => self.deneb_fork_epoch,
            ForkName::Electra => self.electra_fork_epoch,
            ForkName::Fulu => self.fulu_fork_epoch,
            // A config without `GLOAS_FORK_VERSION` cannot schedule Gloas.
            ForkName::Gloas if self.gloas_fork_version.is_none() => FAR_FUTURE_EPOCH,
            ForkName::Gloas => self.gloas_fork_epoch,
        };
        (epoch != FAR_FUTURE_EPOCH).then_some(epoch)
    }

    /// The first fork the config schedules that Arbor does not run (after
    /// [`ForkName::LATEST_IMPLEMENTED`]), with its epoch: the node cannot follow the chain from
    /// that epoch on.
    pub fn first_unimplemented_fork(&self) -> Option<(ForkName, Epoch)> {
        ForkName::ALL
            .into_iter()
            .filter(|fork| !fork.is_implemented())
            .find_map(|fork| self.fork_epoch(fork).map(|epoch| (fork, epoch)))
    }

    /// This spec with every fork up to and including `last` active from genesis and every later
    /// fork unscheduled: how devnets and the spec tests' per-fork runs are configured.
    pub fn with_forks_at_genesis_through(mut self, last: ForkName) -> Self {
        for fork in ForkName::ALL {
            let epoch = if fork <= last {
                GENESIS_EPOCH
            } else {
                FAR_FUTURE_EPOCH
            };
            match fork {
                ForkName::Phase0 => {}
                ForkName::Altair => self.altair_fork_epoch = epoch,
                ForkName::Bellatrix => self.bellatrix_fork_epoch = epoch,
                ForkName::Capella => self.capella_fork_epoch = epoch,
                ForkName::Deneb => self.deneb_fork_epoch = epoch,
                ForkName::Electra => self.electra_fork_epoch = epoch,
                ForkName::Fulu => self.fulu_fork_epoch = epoch,
                ForkName::Gloas => self.gloas_fork_epoch = epoch,
            }
        }
        self
    }

    /// The `*_FORK_VERSION` of `fork` (`GENESIS_FORK_VERSION` for phase0). A config without
    /// `GLOAS_FORK_VERSION` (which then never schedules Gloas) gives [`UNKNOWN_FORK_VERSION`]
    /// for Gloas.
    pub fn fork_version(&self, fork: ForkName) -> Version {
        match fork {
            ForkName::Phase0 => self.genesis_fork_version,
            ForkName::Altair => self.altair_fork_version,
            ForkName::Bellatrix => self.bellatrix_fork_version,
            ForkName::Capella => self.capella_fork_version,
            ForkName::Deneb => self.deneb_fork_version,
            ForkName::Electra => self.electra_fork_version,
            ForkName::Fulu => self.fulu_fork_version,
            ForkName::Gloas => self.gloas_fork_version.unwrap_or(UNKNOWN_FORK_VERSION),
        }
    }

    /// The fork in force at `epoch`: the newest one scheduled at or before it.
    pub fn fork_name_at_epoch(&self, epoch: Epoch) -> ForkName {
        ForkName::ALL
            .into_iter()
            .rev()
            .find(|&fork| self.fork_epoch(fork).is_some_and(|start| epoch >= start))
            .unwrap_or(ForkName::Phase0)
    }

    /// The fork in force at `slot`.
    pub fn fork_name_at_slot<E: EthSpec>(&self, slot: Slot) -> ForkName {
        self.fork_name_at_epoch(slot / E::slots_per_epoch())
    }

    /// `compute_time_at_slot(state, slot)`, given the state's `genesis_time`:
    /// `genesis_time + slot * SLOT_DURATION_MS // 1000` (saturating). Every slot-to-time
    /// conversion in Arbor goes through this one.
    ///
    /// [spec]: bellatrix/beacon-chain.md#compute_time_at_slot
    pub fn compute_time_at_slot(&self, genesis_time: u64, slot: Slot) -> u64 {
        genesis_time.saturating_add(slot.saturating_mul(self.slot_duration_ms) / 1000)
    }

    /// `get_slots_since_genesis(store)` for a clock reading `time`:
    /// `(time - genesis_time) * 1000 // SLOT_DURATION_MS`, 0 before genesis. The inverse of
    /// [`ChainSpec::compute_time_at_slot`] (it rounds down to the slot's start).
    ///
    /// [spec]: phase0/fork-choice.md#get_slots_since_genesis
    pub fn get_slots_since_genesis(&self, genesis_time: u64, time: u64) -> Slot {
        time.saturating_sub(genesis_time).saturating_mul(1000) / self.slot_duration_ms.max(1)
    }

    /// `compute_fork_version(epoch)`: the version of the fork in force at `epoch`.
    ///
    /// [spec]: gloas/beacon-chain.md#modified-compute_fork_version
    pub fn compute_fork_version(&self, epoch: Epoch) -> Version {
        self.fork_version(self.fork_name_at_epoch(epoch))
    }

    /// The `Fork` a state at `epoch` holds: the version in force, the one before it, and the
    /// epoch the fork in force activated.
    ///
    /// [spec]: phase0/beacon-chain.md#fork and each fork's `upgrade_to_*`
    pub fn fork_at_epoch(&self, epoch: Epoch) -> Fork {
        let fork = self.fork_name_at_epoch(epoch);
        Fork {
            previous_version: self.fork_version(fork.previous().unwrap_or(fork)),
            current_version: self.fork_version(fork),
            epoch: self.fork_epoch(fork).unwrap_or(GENESIS_EPOCH),
        }
    }

    /// `get_blob_parameters(epoch)`: the newest `BLOB_SCHEDULE` entry at or before `epoch`,
    /// else `ELECTRA_FORK_EPOCH` with `MAX_BLOBS_PER_BLOCK_ELECTRA`.
    ///
    /// [spec]: fulu/beacon-chain.md#new-get_blob_parameters
    pub fn get_blob_parameters(&self, epoch: Epoch) -> BlobParameters {
        self.blob_schedule
            .iter()
            .rev()
            .find(|entry| epoch >= entry.epoch)
            .copied()
            .unwrap_or(BlobParameters {
                epoch: self.electra_fork_epoch,
                max_blobs_per_block: self.max_blobs_per_block_electra,
            })
    }

    /// `get_max_blobs_per_block(epoch)` [New in Fulu] (later spec text reads it as
    /// `get_blob_parameters(epoch).max_blobs_per_block`), extended to every fork: 0 before Deneb,
    /// `MAX_BLOBS_PER_BLOCK` in Deneb, `MAX_BLOBS_PER_BLOCK_ELECTRA` in Electra, and the blob
    /// schedule's limit from Fulu on.
    ///
    /// [spec]: fulu/beacon-chain.md#new-get_max_blobs_per_block
    pub fn get_max_blobs_per_block(&self, epoch: Epoch) -> u64 {
        match self.fork_name_at_epoch(epoch) {
            ForkName::Phase0 | ForkName::Altair | ForkName::Bellatrix | ForkName::Capella => 0,
            ForkName::Deneb => self.max_blobs_per_block,
            ForkName::Electra => self.max_blobs_per_block_electra,
            ForkName::Fulu | ForkName::Gloas => self.get_blob_parameters(epoch).max_blobs_per_block,
        }
    }

    /// `compute_min_epochs_for_block_requests()` from Gloas on (EIP-8061 splits the churn):
    /// `MIN_VALIDATOR_WITHDRAWABILITY_DELAY + (3·Q·C / (2·C + 3·Q)) // 2` with
    /// `Q = CHURN_LIMIT_QUOTIENT_GLOAS` and `C = CONSOLIDATION_CHURN_LIMIT_QUOTIENT`: the epochs
    /// over which a node serves blocks and execution payload envelopes (14,299 on mainnet,
    /// against the 33,024 of [`ChainSpec::min_epochs_for_block_requests`] before Gloas).
    ///
    /// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1 (1.7.0b4)
    pub fn compute_min_epochs_for_block_requests_gloas(&self) -> Epoch {
        let q = u128::from(self.churn_limit_quotient_gloas);
        let c = u128::from(self.consolidation_churn_limit_quotient);
        let churn = 3u128
            .saturating_mul(q)
            .saturating_mul(c)
            .checked_div(2 * c + 3 * q)
            .unwrap_or(0);
        let epochs = u64::try_from(churn / 2).unwrap_or(u64::MAX);
        self.min_validator_withdrawability_delay
            .saturating_add(epochs)
    }

    /// `compute_fork_digest(genesis_validators_root, epoch)`: the first 4 bytes of the fork data
    /// root of the version at `epoch`, from Fulu on XOR-ed with the hash of the blob parameters.
    ///
    /// [spec]: fulu/beacon-chain.md#modified-compute_fork_digest
    pub fn compute_fork_digest(&self, genesis_validators_root: Root, epoch: Epoch) -> ForkDigest {
        self.compute_fork_digest_of_version(
            self.compute_fork_version(epoch),
            genesis_validators_root,
            epoch,
        )
    }

    /// [`ChainSpec::compute_fork_digest`] with `fork_version` in place of the version in force
    /// at `epoch` (Gloas keeps Fulu's blob-parameter mask).
    pub fn compute_fork_digest_of_version(
        &self,
        fork_version: Version,
        genesis_validators_root: Root,
        epoch: Epoch,
    ) -> ForkDigest {
        let base_digest = compute_fork_data_root(fork_version, genesis_validators_root);
        let mut digest = ForkDigest::from_slice(&base_digest[..4]);
        if self.fork_name_at_epoch(epoch).fulu_enabled() {
            let blob_parameters = self.get_blob_parameters(epoch);
            let mut preimage = [0u8; 16];
            preimage[..8].copy_from_slice(&blob_parameters.epoch.to_le_bytes());
            preimage[8..].copy_from_slice(&blob_parameters.max_blobs_per_block.to_le_bytes());
            let mask = ethereum_hashing::hash_fixed(&preimage);
            for (byte, mask) in digest.iter_mut().zip(mask) {
                *byte ^= mask;
            }
        }
        digest
    }

    /// `compute_domain(domain_type, fork_version, genesis_validators_root)` with the spec's
    /// defaults for the optional arguments: `GENESIS_FORK_VERSION` and a zero root (deposits).
    ///
    /// [spec]: phase0/beacon-chain.md#compute_domain
    pub fn compute_genesis_domain(&self, domain_type: DomainType) -> Domain {
        crate::signing::compute_domain(domain_type, self.genesis_fork_version, Root::ZERO)
    }

    /// Rejects a schedule where a fork activates before the fork it follows: every client's
    /// upgrade logic assumes the forks come in order.
    fn check_fork_order(&self) -> Result<(), ConfigError> {
        let epoch = |fork| self.fork_epoch(fork).unwrap_or(FAR_FUTURE_EPOCH);
        for (previous, fork) in ForkName::ALL
            .into_iter()
            .zip(ForkName::ALL.into_iter().skip(1))
        {
            if epoch(fork) < epoch(previous) {
                return Err(ConfigError::ForkOrder {
                    fork,
                    epoch: epoch(fork),
                    previous,
                    previous_epoch: epoch(previous),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use alloy_primitives::{Address, b256, fixed_bytes};
    use proptest::prelude::*;

    use super::*;
    use crate::signing::DOMAIN_APPLICATION_BUILDER;
    use crate::{MainnetEthSpec, MinimalEthSpec};

    fn shared_config_path(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/spec-tests/configs")
            .join(name)
    }

    /// `yaml` with the line that sets `key` replaced by `line` (or removed when `None`).
    fn replace_key(yaml: &str, key: &str, line: Option<&str>) -> String {
        let prefix = format!("{key}:");
        let mut found = false;
        let lines: Vec<&str> = yaml
            .lines()
            .filter_map(|l| {
                if l.starts_with(&prefix) {
                    found = true;
                    line
                } else {
                    Some(l)
                }
            })
            .collect();
        assert!(found, "{key} is not in the config");
        lines.join("\n")
    }

    fn mainnet_with(key: &str, value: &str) -> Result<ChainSpec, ConfigError> {
        let line = format!("{key}: {value}");
        ChainSpec::from_config_yaml(&replace_key(MAINNET_CONFIG_YAML, key, Some(&line)))
    }

    #[test]
    fn loads_the_shared_spec_test_configs() {
        let mainnet = ChainSpec::from_config_file(&shared_config_path("mainnet.yaml")).unwrap();
        assert_eq!(mainnet.preset_base, "mainnet");
        assert_eq!(mainnet.config_name, "mainnet");
        assert_eq!(
            mainnet.terminal_total_difficulty,
            U256::from(58_750_000_000_000_000_000_000u128)
        );
        assert_eq!(mainnet.genesis_fork_version, fixed_bytes!("0x00000000"));
        assert_eq!(mainnet.fulu_fork_version, fixed_bytes!("0x06000000"));
        assert_eq!(mainnet.slot_duration_ms, 12_000);
        assert_eq!(mainnet.seconds_per_slot, 12);
        assert_eq!(
            mainnet.deposit_contract_address,
            Address::from(fixed_bytes!("0x00000000219ab540356cBB839Cbe05303d7705Fa"))
        );
        assert_eq!(
            mainnet.message_domain_valid_snappy,
            fixed_bytes!("0x01000000")
        );

        let minimal = ChainSpec::from_config_file(&shared_config_path("minimal.yaml")).unwrap();
        assert_eq!(minimal.preset_base, "minimal");
        assert_eq!(minimal.genesis_fork_version, fixed_bytes!("0x00000001"));
        assert_eq!(
            minimal.terminal_total_difficulty,
            U256::MAX - U256::from(1023u64)
        );
        assert_eq!(minimal.slot_duration_ms, 6_000);
        assert_eq!(minimal.seconds_per_slot, 6);
        assert_eq!(minimal.fork_epoch(ForkName::Altair), None);
        assert!(minimal.blob_schedule.is_empty());
    }

    #[test]
    fn built_in_configs_equal_the_shared_spec_test_configs() {
        let mainnet = ChainSpec::from_config_file(&shared_config_path("mainnet.yaml")).unwrap();
        assert_eq!(ChainSpec::mainnet(), mainnet);
        assert_eq!(ChainSpec::for_network(Network::Mainnet), mainnet);
        let minimal = ChainSpec::from_config_file(&shared_config_path("minimal.yaml")).unwrap();
        assert_eq!(ChainSpec::minimal(), minimal);
    }

    #[test]
    fn every_built_in_network_loads_under_its_own_name() {
        for network in Network::ALL {
            let spec = ChainSpec::for_network(network);
            assert_eq!(spec.config_name, network.as_str());
            assert_eq!(spec.preset_base, "mainnet");
            assert!(spec.fork_epoch(ForkName::Fulu).is_some(), "{network}");
        }
    }

    #[test]
    fn sepolia_and_hoodi_schedule_fulu_and_two_bpo_forks() {
        let sepolia = ChainSpec::for_network(Network::Sepolia);
        assert_eq!(sepolia.fork_epoch(ForkName::Electra), Some(222_464));
        assert_eq!(sepolia.fork_epoch(ForkName::Fulu), Some(272_640));
        assert_eq!(sepolia.fulu_fork_version, fixed_bytes!("0x90000075"));
        // Sepolia forked to Gloas on 2026-10-06 13:53:36 UTC.
        assert_eq!(sepolia.fork_epoch(ForkName::Gloas), Some(353_024));
        assert_eq!(
            sepolia.fork_version(ForkName::Gloas),
            fixed_bytes!("0x90000076")
        );
        assert_eq!(
            sepolia.first_unimplemented_fork(),
            Some((ForkName::Gloas, 353_024))
        );
        assert_eq!(
            sepolia.compute_fork_version(353_024),
            fixed_bytes!("0x90000076")
        );
        assert_eq!(
            sepolia.compute_fork_version(353_023),
            sepolia.fulu_fork_version
        );
        let gloas_fork = sepolia.fork_at_epoch(353_024);
        assert_eq!(gloas_fork.previous_version, sepolia.fulu_fork_version);
        assert_eq!(gloas_fork.epoch, 353_024);
        assert_eq!(
            sepolia.compute_time_at_slot(Network::Sepolia.genesis_time(), 353_024 * 32),
            1_791_294_816
        );
        assert_eq!(
            sepolia.blob_schedule,
            [
                BlobScheduleEntry {
                    epoch: 274_176,
                    max_blobs_per_block: 15
                },
                BlobScheduleEntry {
                    epoch: 275_712,
                    max_blobs_per_block: 21
                },
            ]
        );
        assert_eq!(sepolia.deposit_chain_id, 11_155_111);

        let hoodi = ChainSpec::for_network(Network::Hoodi);
        assert_eq!(hoodi.fork_epoch(ForkName::Deneb), Some(0));
        assert_eq!(hoodi.fork_epoch(ForkName::Electra), Some(2048));
        assert_eq!(hoodi.fork_epoch(ForkName::Fulu), Some(50_688));
        assert_eq!(hoodi.fulu_fork_version, fixed_bytes!("0x70000910"));
        assert_eq!(
            hoodi.blob_schedule,
            [
                BlobScheduleEntry {
                    epoch: 52_480,
                    max_blobs_per_block: 15
                },
                BlobScheduleEntry {
                    epoch: 54_016,
                    max_blobs_per_block: 21
                },
            ]
        );
        assert_eq!(hoodi.deposit_chain_id, 560_048);
    }

    #[test]
    fn unknown_keys_are_kept_as_written() {
        let mainnet = ChainSpec::mainnet();
        let extra = |key: &str| mainnet.extra.get(key).map(String::as_str);
        assert_eq!(mainnet.gloas_fork_version, Some(fixed_bytes!("0x07000000")));
        assert_eq!(mainnet.fork_epoch(ForkName::Gloas), None);
        assert_eq!(mainnet.first_unimplemented_fork(), None);
        assert_eq!(extra("EIP8321_FORK_VERSION"), Some("0xe8321000"));
        assert_eq!(extra("HEZE_FORK_EPOCH"), Some("18446744073709551615"));
        assert_eq!(extra("CONFIRMATION_BYZANTINE_THRESHOLD"), Some("25"));
        for known in [
            "FULU_FORK_EPOCH",
            "GLOAS_FORK_VERSION",
            "GLOAS_FORK_EPOCH",
            "BLOB_SCHEDULE",
            "GAS_LIMIT_SCHEDULE",
            "MAX_REQUEST_PAYLOADS",
            "SLOT_DURATION_MS",
            "PRESET_BASE",
        ] {
            assert_eq!(extra(known), None, "{known} is read, not extra");
        }
        let hoodi = ChainSpec::for_network(Network::Hoodi);
        assert_eq!(hoodi.extra.get("MAX_REQUEST_PAYLOADS"), None);
        assert_eq!(hoodi.max_request_payloads, 128);
    }

    /// The keys of the spec config `yaml` that Gloas adds: those under a `# Gloas` heading
    /// (up to the next heading or blank line) and `GAS_LIMIT_SCHEDULE` (under *Scheduling*, EIP-8261).
    fn gloas_keys_of(yaml: &str) -> Vec<String> {
        let mut keys = Vec::new();
        let mut in_gloas = false;
        for line in yaml.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                in_gloas = false;
            } else if let Some(comment) = line.strip_prefix('#') {
                // A heading names a fork or section; other comments describe a value.
                // (minimal.yaml marks its own values `[customized]`, headings included).
                let comment = comment.trim_start();
                let comment = comment.strip_prefix("[customized] ").unwrap_or(comment);
                if comment.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    in_gloas = comment.starts_with("Gloas");
                }
            } else if let Some((key, _)) = line.split_once(':')
                && !line.starts_with(' ')
                && (in_gloas || key == "GAS_LIMIT_SCHEDULE")
            {
                keys.push(key.to_string());
            }
        }
        keys
    }

    /// Every Gloas key of the spec's configs is read into a typed field (none lands in
    /// `extra`), with the values `configs/mainnet.yaml` and `configs/minimal.yaml` write.
    #[test]
    fn reads_every_gloas_key_of_the_spec_configs() {
        for file in ["mainnet.yaml", "minimal.yaml"] {
            let yaml = std::fs::read_to_string(shared_config_path(file)).unwrap();
            let keys = gloas_keys_of(&yaml);
            assert_eq!(keys.len(), 14, "{file}: {keys:?}");
            let spec = ChainSpec::from_config_yaml(&yaml).unwrap();
            for key in &keys {
                assert!(!spec.extra.contains_key(key), "{file}: {key} is not read");
            }
        }

        let mainnet = ChainSpec::from_config_file(&shared_config_path("mainnet.yaml")).unwrap();
        assert_eq!(mainnet.min_builder_withdrawability_delay, 64);
        assert_eq!(mainnet.attestation_due_bps_gloas, 2500);
        assert_eq!(mainnet.aggregate_due_bps_gloas, 5000);
        assert_eq!(mainnet.sync_message_due_bps_gloas, 2500);
        assert_eq!(mainnet.contribution_due_bps_gloas, 5000);
        assert_eq!(mainnet.payload_due_bps, 5000);
        assert_eq!(mainnet.payload_attestation_due_bps, 7500);
        assert_eq!(mainnet.churn_limit_quotient_gloas, 32_768);
        assert_eq!(mainnet.consolidation_churn_limit_quotient, 65_536);
        assert_eq!(
            mainnet.max_per_epoch_activation_churn_limit_gloas,
            256_000_000_000
        );
        assert_eq!(mainnet.max_request_payloads, 128);
        assert_eq!(mainnet.gas_limit_schedule, []);

        let minimal = ChainSpec::from_config_file(&shared_config_path("minimal.yaml")).unwrap();
        assert_eq!(minimal.min_builder_withdrawability_delay, 2);
        assert_eq!(minimal.attestation_due_bps_gloas, 2500);
        assert_eq!(minimal.aggregate_due_bps_gloas, 5000);
        assert_eq!(minimal.sync_message_due_bps_gloas, 2500);
        assert_eq!(minimal.contribution_due_bps_gloas, 5000);
        assert_eq!(minimal.payload_due_bps, 5000);
        assert_eq!(minimal.payload_attestation_due_bps, 7500);
        assert_eq!(minimal.churn_limit_quotient_gloas, 16);
        assert_eq!(minimal.consolidation_churn_limit_quotient, 32);
        assert_eq!(
            minimal.max_per_epoch_activation_churn_limit_gloas,
            128_000_000_000
        );
        assert_eq!(minimal.max_request_payloads, 128);
        assert_eq!(minimal.gas_limit_schedule, []);
    }

    /// A config written before Gloas (no Gloas keys but the fork's, as Sepolia's and Hoodi's)
    /// takes the spec's values for its preset: without its Gloas keys, each spec config reads
    /// as itself.
    #[test]
    fn absent_gloas_keys_take_the_spec_values_of_the_preset() {
        for (yaml, built_in, defaults) in [
            (
                MAINNET_CONFIG_YAML,
                ChainSpec::mainnet(),
                GloasConfigDefaults::MAINNET,
            ),
            (
                MINIMAL_CONFIG_YAML,
                ChainSpec::minimal(),
                GloasConfigDefaults::MINIMAL,
            ),
        ] {
            let mut without = yaml.to_string();
            for key in gloas_keys_of(yaml) {
                if !key.starts_with("GLOAS_FORK_") {
                    without = replace_key(&without, &key, None);
                }
            }
            let old = ChainSpec::from_config_yaml(&without).unwrap();
            assert_eq!(old, built_in, "{}", built_in.config_name);
            assert_eq!(
                GloasConfigDefaults::for_preset_base(&built_in.preset_base),
                defaults
            );
        }
        for network in [Network::Sepolia, Network::Hoodi] {
            let spec = ChainSpec::for_network(network);
            let mainnet = ChainSpec::mainnet();
            assert_eq!(spec.payload_attestation_due_bps, 7500, "{network}");
            assert_eq!(
                spec.churn_limit_quotient_gloas, mainnet.churn_limit_quotient_gloas,
                "{network}"
            );
            assert_eq!(
                spec.min_builder_withdrawability_delay,
                mainnet.min_builder_withdrawability_delay
            );
        }
    }

    #[test]
    fn rejects_a_bad_gloas_value_naming_the_key() {
        let scalar_keys: Vec<String> = gloas_keys_of(MAINNET_CONFIG_YAML)
            .into_iter()
            .filter(|key| !key.starts_with("GLOAS_FORK_") && key != "GAS_LIMIT_SCHEDULE")
            .collect();
        assert_eq!(scalar_keys.len(), 11, "{scalar_keys:?}");
        for key in &scalar_keys {
            for value in ["-1", "0x40", "2.5", "18446744073709551616", "many"] {
                match mainnet_with(key, value) {
                    Err(ConfigError::InvalidValue {
                        key: k, value: v, ..
                    }) => {
                        assert_eq!((k.as_str(), v.as_str()), (key.as_str(), value));
                    }
                    other => panic!("{key}: {value} gave {other:?}"),
                }
            }
            assert!(
                matches!(
                    mainnet_with(key, "[1]"),
                    Err(ConfigError::InvalidValue { key: k, .. }) if k == *key
                ),
                "{key}: a list"
            );
        }
        for divisor in [
            "CHURN_LIMIT_QUOTIENT_GLOAS",
            "CONSOLIDATION_CHURN_LIMIT_QUOTIENT",
        ] {
            assert_eq!(
                mainnet_with(divisor, "0").unwrap_err().to_string(),
                format!("invalid value \"0\" for {divisor}: expected a positive integer")
            );
        }
        // A key that is present wins over the default, also in a config that lacks the others.
        let spec = mainnet_with("PAYLOAD_ATTESTATION_DUE_BPS", "8000").unwrap();
        assert_eq!(spec.payload_attestation_due_bps, 8000);
        let old = ChainSpec::from_config_yaml(&replace_key(
            MINIMAL_CONFIG_YAML,
            "MAX_REQUEST_PAYLOADS",
            None,
        ))
        .unwrap();
        assert_eq!(
            old.max_request_payloads,
            GloasConfigDefaults::MINIMAL.max_request_payloads
        );
    }

    #[test]
    fn reads_the_gas_limit_schedule_and_rejects_bad_ones() {
        let with_schedule = |schedule: &str| {
            let start = MAINNET_CONFIG_YAML.find("GAS_LIMIT_SCHEDULE:").unwrap();
            let end = MAINNET_CONFIG_YAML[start..].find('\n').unwrap() + start;
            let yaml = format!(
                "{}GAS_LIMIT_SCHEDULE:{schedule}\n{}",
                &MAINNET_CONFIG_YAML[..start],
                &MAINNET_CONFIG_YAML[end..]
            );
            ChainSpec::from_config_yaml(&yaml)
        };
        let spec = with_schedule(
            "\n  - EPOCH: 512\n    GAS_LIMIT: 150000000\n  - EPOCH: 256\n    GAS_LIMIT: '100000000'",
        )
        .unwrap();
        assert_eq!(
            spec.gas_limit_schedule,
            [
                GasLimitScheduleEntry {
                    epoch: 256,
                    gas_limit: 100_000_000
                },
                GasLimitScheduleEntry {
                    epoch: 512,
                    gas_limit: 150_000_000
                },
            ]
        );
        assert_eq!(spec.get_scheduled_gas_limit(255), None);
        assert_eq!(spec.get_scheduled_gas_limit(256), Some(100_000_000));
        assert_eq!(spec.get_scheduled_gas_limit(511), Some(100_000_000));
        assert_eq!(spec.get_scheduled_gas_limit(u64::MAX), Some(150_000_000));
        assert_eq!(ChainSpec::mainnet().get_scheduled_gas_limit(0), None);

        // Absent: empty.
        let without = replace_key(MAINNET_CONFIG_YAML, "GAS_LIMIT_SCHEDULE", None);
        assert_eq!(
            ChainSpec::from_config_yaml(&without)
                .unwrap()
                .gas_limit_schedule,
            []
        );
        assert!(matches!(
            with_schedule("\n  - EPOCH: 1\n    GAS_LIMIT: 2\n  - EPOCH: 1\n    GAS_LIMIT: 3"),
            Err(ConfigError::Inconsistent(message))
                if message == "GAS_LIMIT_SCHEDULE has more than one entry for epoch 1"
        ));
        assert_eq!(
            with_schedule("\n  - EPOCH: 1"),
            Err(ConfigError::MissingKey(
                "GAS_LIMIT_SCHEDULE[0].GAS_LIMIT".into()
            ))
        );
        for (schedule, key) in [
            (
                "\n  - EPOCH: 1\n    GAS_LIMIT: -2",
                "GAS_LIMIT_SCHEDULE[0].GAS_LIMIT",
            ),
            (
                "\n  - EPOCH: x\n    GAS_LIMIT: 2",
                "GAS_LIMIT_SCHEDULE[0].EPOCH",
            ),
            ("\n  - 7", "GAS_LIMIT_SCHEDULE[0]"),
            (" 7", "GAS_LIMIT_SCHEDULE"),
            (" {EPOCH: 1}", "GAS_LIMIT_SCHEDULE"),
        ] {
            assert!(
                matches!(
                    with_schedule(schedule),
                    Err(ConfigError::InvalidValue { key: k, .. }) if k == key
                ),
                "{schedule:?}"
            );
        }
    }

    #[test]
    fn omitted_derived_keys_equal_the_values_older_configs_write() {
        // mainnet.yaml (v1.7) omits these; sepolia and hoodi still write them.
        let mainnet = ChainSpec::mainnet();
        for network in [Network::Sepolia, Network::Hoodi] {
            let explicit = ChainSpec::for_network(network);
            assert_eq!(
                mainnet.min_epochs_for_block_requests,
                explicit.min_epochs_for_block_requests
            );
            assert_eq!(
                mainnet.attestation_subnet_prefix_bits,
                explicit.attestation_subnet_prefix_bits
            );
            assert_eq!(
                mainnet.max_request_blob_sidecars,
                explicit.max_request_blob_sidecars
            );
            assert_eq!(
                mainnet.max_request_blob_sidecars_electra,
                explicit.max_request_blob_sidecars_electra
            );
            assert_eq!(
                mainnet.max_request_data_column_sidecars,
                explicit.max_request_data_column_sidecars
            );
            assert_eq!(mainnet.ttfb_timeout, explicit.ttfb_timeout);
            assert_eq!(mainnet.resp_timeout, explicit.resp_timeout);
        }
        assert_eq!(mainnet.min_epochs_for_block_requests, 33_024);
        assert_eq!(
            mainnet.compute_min_epochs_for_block_requests_gloas(),
            14_299
        );
        // Minimal: 256 + (3·16·32 / (2·32 + 3·16)) // 2 = 256 + 13 // 2.
        let minimal = ChainSpec::minimal();
        assert_eq!(minimal.min_validator_withdrawability_delay, 256);
        assert_eq!(minimal.compute_min_epochs_for_block_requests_gloas(), 262);
        assert_eq!(mainnet.max_request_blob_sidecars, 768);
        assert_eq!(mainnet.max_request_blob_sidecars_electra, 1152);
        assert_eq!(mainnet.max_request_data_column_sidecars, 16_384);
        assert_eq!(mainnet.attestation_subnet_prefix_bits, 6);
    }

    #[test]
    fn slot_duration_comes_from_either_key() {
        let sepolia = SEPOLIA_CONFIG_YAML;
        let seconds_only = replace_key(sepolia, "SLOT_DURATION_MS", None);
        let spec = ChainSpec::from_config_yaml(&seconds_only).unwrap();
        assert_eq!((spec.seconds_per_slot, spec.slot_duration_ms), (12, 12_000));

        let ms_only = replace_key(sepolia, "SECONDS_PER_SLOT", None);
        let spec = ChainSpec::from_config_yaml(&ms_only).unwrap();
        assert_eq!((spec.seconds_per_slot, spec.slot_duration_ms), (12, 12_000));

        let neither = replace_key(&ms_only, "SLOT_DURATION_MS", None);
        assert_eq!(
            ChainSpec::from_config_yaml(&neither),
            Err(ConfigError::MissingKey("SLOT_DURATION_MS".into()))
        );

        let inconsistent = replace_key(sepolia, "SECONDS_PER_SLOT", Some("SECONDS_PER_SLOT: 6"));
        assert!(matches!(
            ChainSpec::from_config_yaml(&inconsistent),
            Err(ConfigError::Inconsistent(_))
        ));
        assert!(matches!(
            mainnet_with("SLOT_DURATION_MS", "0"),
            Err(ConfigError::InvalidValue { .. })
        ));
    }

    #[test]
    fn fork_name_at_epoch_switches_at_each_fork_epoch() {
        let mainnet = ChainSpec::mainnet();
        let boundaries = [
            (74_240, ForkName::Altair),
            (144_896, ForkName::Bellatrix),
            (194_048, ForkName::Capella),
            (269_568, ForkName::Deneb),
            (364_032, ForkName::Electra),
            (411_392, ForkName::Fulu),
        ];
        assert_eq!(mainnet.fork_name_at_epoch(0), ForkName::Phase0);
        for (epoch, fork) in boundaries {
            let previous = fork.previous().unwrap();
            assert_eq!(mainnet.fork_name_at_epoch(epoch - 1), previous);
            assert_eq!(mainnet.fork_name_at_epoch(epoch), fork);
            assert_eq!(mainnet.fork_epoch(fork), Some(epoch));
            assert_eq!(
                mainnet.compute_fork_version(epoch),
                mainnet.fork_version(fork)
            );
        }
        assert_eq!(mainnet.fork_name_at_epoch(FAR_FUTURE_EPOCH), ForkName::Fulu);

        // Forks scheduled at the same epoch: the newest one is in force.
        let hoodi = ChainSpec::for_network(Network::Hoodi);
        assert_eq!(hoodi.fork_name_at_epoch(0), ForkName::Deneb);
        assert_eq!(hoodi.fork_name_at_epoch(2047), ForkName::Deneb);
        assert_eq!(hoodi.fork_name_at_epoch(2048), ForkName::Electra);

        let minimal = ChainSpec::minimal();
        assert_eq!(
            minimal.fork_name_at_epoch(FAR_FUTURE_EPOCH - 1),
            ForkName::Phase0
        );
        assert_eq!(minimal.fork_epoch(ForkName::Phase0), Some(GENESIS_EPOCH));
        assert_eq!(minimal.fork_epoch(ForkName::Fulu), None);
    }

    #[test]
    fn fork_name_at_slot_uses_the_presets_slots_per_epoch() {
        let mainnet = ChainSpec::mainnet();
        let altair_slot = 74_240 * 32;
        assert_eq!(
            mainnet.fork_name_at_slot::<MainnetEthSpec>(altair_slot - 1),
            ForkName::Phase0
        );
        assert_eq!(
            mainnet.fork_name_at_slot::<MainnetEthSpec>(altair_slot),
            ForkName::Altair
        );

        let minimal =
            ChainSpec::from_config_yaml_with_overrides(MINIMAL_CONFIG_YAML, "ALTAIR_FORK_EPOCH: 2")
                .unwrap();
        assert_eq!(
            minimal.fork_name_at_slot::<MinimalEthSpec>(15),
            ForkName::Phase0
        );
        assert_eq!(
            minimal.fork_name_at_slot::<MinimalEthSpec>(16),
            ForkName::Altair
        );
    }

    #[test]
    fn fork_at_epoch_is_the_states_fork_field() {
        let mainnet = ChainSpec::mainnet();
        assert_eq!(
            mainnet.fork_at_epoch(0),
            Fork {
                previous_version: fixed_bytes!("0x00000000"),
                current_version: fixed_bytes!("0x00000000"),
                epoch: 0,
            }
        );
        assert_eq!(
            mainnet.fork_at_epoch(419_072),
            Fork {
                previous_version: fixed_bytes!("0x05000000"),
                current_version: fixed_bytes!("0x06000000"),
                epoch: 411_392,
            }
        );
        let hoodi = ChainSpec::for_network(Network::Hoodi);
        assert_eq!(
            hoodi.fork_at_epoch(10),
            Fork {
                previous_version: fixed_bytes!("0x40000910"),
                current_version: fixed_bytes!("0x50000910"),
                epoch: 0,
            }
        );
    }

    #[test]
    fn get_blob_parameters_follows_the_schedule_then_falls_back_to_electra() {
        let mainnet = ChainSpec::mainnet();
        let params = |epoch| {
            let p = mainnet.get_blob_parameters(epoch);
            (p.epoch, p.max_blobs_per_block)
        };
        assert_eq!(params(0), (364_032, 9));
        assert_eq!(params(411_392), (364_032, 9));
        assert_eq!(params(412_671), (364_032, 9));
        assert_eq!(params(412_672), (412_672, 15));
        assert_eq!(params(419_071), (412_672, 15));
        assert_eq!(params(419_072), (419_072, 21));
        assert_eq!(params(FAR_FUTURE_EPOCH), (419_072, 21));

        // The order entries are written in does not matter.
        let unsorted = replace_key(
            MAINNET_CONFIG_YAML,
            "GAS_LIMIT_SCHEDULE",
            Some("GAS_LIMIT_SCHEDULE: []"),
        )
        .replace(
            "  - EPOCH: 412672  # December 9, 2025, 02:21:11pm UTC\n    MAX_BLOBS_PER_BLOCK: 15\n  - EPOCH: 419072  # January 7, 2026, 01:01:11am UTC\n    MAX_BLOBS_PER_BLOCK: 21",
            "  - EPOCH: 419072\n    MAX_BLOBS_PER_BLOCK: 21\n  - EPOCH: 412672\n    MAX_BLOBS_PER_BLOCK: 15",
        );
        let unsorted = ChainSpec::from_config_yaml(&unsorted).unwrap();
        assert_eq!(unsorted.blob_schedule, mainnet.blob_schedule);
        assert_eq!(
            unsorted.get_blob_parameters(419_000).max_blobs_per_block,
            15
        );
    }

    #[test]
    fn time_at_slot_and_slots_since_genesis_invert_each_other() {
        let mainnet = ChainSpec::mainnet();
        let genesis = 1_606_824_023;
        assert_eq!(mainnet.compute_time_at_slot(genesis, 0), genesis);
        assert_eq!(mainnet.compute_time_at_slot(genesis, 10), genesis + 120);
        // Saturates instead of overflowing.
        assert!(mainnet.compute_time_at_slot(genesis, u64::MAX) > genesis);
        assert_eq!(mainnet.get_slots_since_genesis(genesis, genesis - 1), 0);
        assert_eq!(mainnet.get_slots_since_genesis(genesis, genesis + 131), 10);
        for slot in [0, 1, 7, 1_000_000] {
            let time = mainnet.compute_time_at_slot(genesis, slot);
            assert_eq!(mainnet.get_slots_since_genesis(genesis, time), slot);
        }
    }

    #[test]
    fn get_max_blobs_per_block_is_fork_aware() {
        let mainnet = ChainSpec::mainnet();
        assert_eq!(mainnet.get_max_blobs_per_block(269_567), 0);
        assert_eq!(mainnet.get_max_blobs_per_block(269_568), 6);
        assert_eq!(mainnet.get_max_blobs_per_block(364_032), 9);
        assert_eq!(mainnet.get_max_blobs_per_block(411_392), 9);
        assert_eq!(mainnet.get_max_blobs_per_block(412_672), 15);
        assert_eq!(mainnet.get_max_blobs_per_block(500_000), 21);
    }

    #[test]
    fn compute_fork_digest_matches_mainnet_digests() {
        let mainnet = ChainSpec::mainnet();
        let gvr = Network::Mainnet.genesis_validators_root();
        let digests = [
            (0, fixed_bytes!("0xb5303f2a")),
            (74_240, fixed_bytes!("0xafcaaba0")),
            (144_896, fixed_bytes!("0x4a26c58b")),
            (194_048, fixed_bytes!("0xbba4da96")),
            (269_568, fixed_bytes!("0x6a95a1a9")),
            (364_032, fixed_bytes!("0xad532ceb")),
            // Fulu before the first BPO fork: the Electra blob parameters.
            (411_392, fixed_bytes!("0xcc2c5cdb")),
            (412_671, fixed_bytes!("0xcc2c5cdb")),
            (412_672, fixed_bytes!("0xcb0d1acc")),
            (419_072, fixed_bytes!("0x8c9f62fe")),
            (500_000, fixed_bytes!("0x8c9f62fe")),
        ];
        for (epoch, digest) in digests {
            assert_eq!(
                mainnet.compute_fork_digest(gvr, epoch),
                digest,
                "epoch {epoch}"
            );
        }
        // Before Fulu the digest is the fork data root's prefix, blob parameters play no part.
        assert_eq!(
            mainnet.compute_fork_digest(gvr, 411_391).as_slice(),
            &compute_fork_data_root(fixed_bytes!("0x05000000"), gvr)[..4]
        );
    }

    /// Fork digests of the spec tests' minimal/fulu/light_client/sync/pyspec_tests/
    /// light_client_sync vectors (`bootstrap_fork_digest`, `update_fork_digest`), with that
    /// case's config overrides and `genesis_validators_root`. The vectors have no
    /// `compute_fork_digest` handler of their own.
    #[test]
    fn compute_fork_digest_matches_spec_test_vectors() {
        const OVERRIDES: &str = "
ALTAIR_FORK_EPOCH: 0
BELLATRIX_FORK_EPOCH: 0
CAPELLA_FORK_EPOCH: 0
DENEB_FORK_EPOCH: 0
ELECTRA_FORK_EPOCH: 0
FULU_FORK_EPOCH: 0
BLOB_SCHEDULE:
  - EPOCH: 5
    MAX_BLOBS_PER_BLOCK: 9
  - EPOCH: 10
    MAX_BLOBS_PER_BLOCK: 100
  - EPOCH: 15
    MAX_BLOBS_PER_BLOCK: 175
  - EPOCH: 20
    MAX_BLOBS_PER_BLOCK: 200
  - EPOCH: 25
    MAX_BLOBS_PER_BLOCK: 275
  - EPOCH: 30
    MAX_BLOBS_PER_BLOCK: 300
";
        let spec =
            ChainSpec::from_config_yaml_with_overrides(MINIMAL_CONFIG_YAML, OVERRIDES).unwrap();
        let gvr = b256!("0x0a08c27fe4ece2483f9e581f78c66379a06f96e9c24cd1390594ff939b26f95b");
        let vectors = [
            (0, fixed_bytes!("0xfdb20282")),
            (4, fixed_bytes!("0xfdb20282")),
            (5, fixed_bytes!("0xc5fd825b")),
            (11, fixed_bytes!("0x34b5ddf1")),
            (16, fixed_bytes!("0x3b67877d")),
            (24, fixed_bytes!("0x56d1e2c5")),
            (35, fixed_bytes!("0x923a4f48")),
        ];
        for (epoch, digest) in vectors {
            assert_eq!(
                spec.compute_fork_digest(gvr, epoch),
                digest,
                "epoch {epoch}"
            );
        }
    }

    #[test]
    fn compute_genesis_domain_uses_the_genesis_fork_version_and_a_zero_root() {
        assert_eq!(
            ChainSpec::mainnet().compute_genesis_domain(DOMAIN_APPLICATION_BUILDER),
            b256!("0x00000001f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a9")
        );
    }

    #[test]
    fn rejects_malformed_yaml() {
        assert!(matches!(
            ChainSpec::from_config_yaml("PRESET_BASE: [unclosed"),
            Err(ConfigError::Yaml(_))
        ));
        assert!(matches!(
            ChainSpec::from_config_yaml("- a\n- b\n"),
            Err(ConfigError::NotAMapping(_))
        ));
        assert!(matches!(
            ChainSpec::from_config_yaml("[1]: 2\n"),
            Err(ConfigError::Yaml(_))
        ));
        assert!(matches!(
            ChainSpec::from_config_yaml("just text"),
            Err(ConfigError::NotAMapping(_))
        ));
        assert!(matches!(
            ChainSpec::from_config_yaml("A: 1\n---\nB: 2\n"),
            Err(ConfigError::Yaml(_))
        ));
        let twice = format!("{MAINNET_CONFIG_YAML}\nALTAIR_FORK_EPOCH: 1\n");
        assert!(matches!(
            ChainSpec::from_config_yaml(&twice),
            Err(ConfigError::Yaml(_))
        ));
    }

    #[test]
    fn rejects_a_missing_key_naming_it() {
        for key in [
            "FULU_FORK_EPOCH",
            "GENESIS_FORK_VERSION",
            "TERMINAL_TOTAL_DIFFICULTY",
        ] {
            let yaml = replace_key(MAINNET_CONFIG_YAML, key, None);
            assert_eq!(
                ChainSpec::from_config_yaml(&yaml),
                Err(ConfigError::MissingKey(key.into()))
            );
        }
        assert_eq!(
            ChainSpec::from_config_yaml(""),
            Err(ConfigError::MissingKey("PRESET_BASE".into()))
        );
    }

    #[test]
    fn rejects_a_malformed_value_naming_key_and_value() {
        let cases = [
            ("GENESIS_FORK_VERSION", "0x0000"),
            ("GENESIS_FORK_VERSION", "0x0000000000"),
            ("GENESIS_FORK_VERSION", "0xzz000000"),
            ("GENESIS_FORK_VERSION", "00000000"),
            ("TERMINAL_BLOCK_HASH", "0x00"),
            (
                "DEPOSIT_CONTRACT_ADDRESS",
                "0x00000000219ab540356cBB839Cbe05303d7705",
            ),
            ("ALTAIR_FORK_EPOCH", "-1"),
            ("ALTAIR_FORK_EPOCH", "18446744073709551616"),
            ("ALTAIR_FORK_EPOCH", "0x10"),
            ("ALTAIR_FORK_EPOCH", "1e5"),
            ("ALTAIR_FORK_EPOCH", "''"),
            ("TERMINAL_TOTAL_DIFFICULTY", "5.5"),
            (
                "TERMINAL_TOTAL_DIFFICULTY",
                "115792089237316195423570985008687907853269984665640564039457584007913129639936",
            ),
            ("ATTESTATION_SUBNET_COUNT", "0"),
        ];
        for (key, value) in cases {
            match mainnet_with(key, value) {
                Err(ConfigError::InvalidValue {
                    key: k, value: v, ..
                }) => {
                    assert_eq!(k, key);
                    assert_eq!(v, value.trim_matches('\''));
                }
                other => panic!("{key}: {value} gave {other:?}"),
            }
        }
        assert!(matches!(
            mainnet_with("ALTAIR_FORK_EPOCH", "[1, 2]"),
            Err(ConfigError::InvalidValue { .. })
        ));
        let error = mainnet_with("GENESIS_FORK_VERSION", "0x0000").unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid value \"0x0000\" for GENESIS_FORK_VERSION: expected 0x followed by 8 hex digits"
        );
    }

    #[test]
    fn rejects_bad_blob_schedules() {
        let with_schedule = |schedule: &str| {
            let start = MAINNET_CONFIG_YAML.find("BLOB_SCHEDULE:").unwrap();
            let end = MAINNET_CONFIG_YAML.find("GAS_LIMIT_SCHEDULE:").unwrap();
            let yaml = format!(
                "{}BLOB_SCHEDULE:{schedule}\n{}",
                &MAINNET_CONFIG_YAML[..start],
                &MAINNET_CONFIG_YAML[end..]
            );
            ChainSpec::from_config_yaml(&yaml)
        };
        assert_eq!(
            with_schedule(
                "\n  - EPOCH: 412672\n    MAX_BLOBS_PER_BLOCK: 15\n  - EPOCH: 412672\n    MAX_BLOBS_PER_BLOCK: 21"
            ),
            Err(ConfigError::DuplicateBlobScheduleEpoch(412_672))
        );
        assert_eq!(
            with_schedule("\n  - EPOCH: 412672"),
            Err(ConfigError::MissingKey(
                "BLOB_SCHEDULE[0].MAX_BLOBS_PER_BLOCK".into()
            ))
        );
        assert!(matches!(
            with_schedule("\n  - EPOCH: -5\n    MAX_BLOBS_PER_BLOCK: 15"),
            Err(ConfigError::InvalidValue { key, .. }) if key == "BLOB_SCHEDULE[0].EPOCH"
        ));
        assert!(matches!(
            with_schedule(" 7"),
            Err(ConfigError::InvalidValue { key, .. }) if key == "BLOB_SCHEDULE"
        ));
        assert!(matches!(
            with_schedule("\n  - 7"),
            Err(ConfigError::InvalidValue { key, .. }) if key == "BLOB_SCHEDULE[0]"
        ));
        assert_eq!(with_schedule(" []").unwrap().blob_schedule, []);
    }

    #[test]
    fn rejects_forks_out_of_order() {
        assert_eq!(
            mainnet_with("CAPELLA_FORK_EPOCH", "100"),
            Err(ConfigError::ForkOrder {
                fork: ForkName::Capella,
                epoch: 100,
                previous: ForkName::Bellatrix,
                previous_epoch: 144_896,
            })
        );
        // A fork scheduled after one that is not.
        assert!(matches!(
            ChainSpec::from_config_yaml_with_overrides(
                MINIMAL_CONFIG_YAML,
                "BELLATRIX_FORK_EPOCH: 3"
            ),
            Err(ConfigError::ForkOrder {
                fork: ForkName::Bellatrix,
                ..
            })
        ));
    }

    #[test]
    fn reads_gloas_scheduled_after_fulu_or_absent() {
        let minimal = ChainSpec::minimal();
        let version = minimal.gloas_fork_version.expect("minimal.yaml has it");
        assert_eq!(minimal.fork_epoch(ForkName::Gloas), None);
        let forks = "ALTAIR_FORK_EPOCH: 0\nBELLATRIX_FORK_EPOCH: 0\nCAPELLA_FORK_EPOCH: 0\n\
                     DENEB_FORK_EPOCH: 0\nELECTRA_FORK_EPOCH: 0\nFULU_FORK_EPOCH: 1\n";
        let with = |gloas: &str| {
            ChainSpec::from_config_yaml_with_overrides(
                MINIMAL_CONFIG_YAML,
                &format!("{forks}{gloas}"),
            )
        };
        let spec = with("GLOAS_FORK_EPOCH: 3").unwrap();
        assert_eq!(spec.fork_epoch(ForkName::Gloas), Some(3));
        assert_eq!(spec.fork_version(ForkName::Gloas), version);
        assert_eq!(spec.fork_name_at_epoch(2), ForkName::Fulu);
        assert_eq!(spec.fork_name_at_epoch(3), ForkName::Gloas);
        assert_eq!(spec.compute_fork_version(3), version);
        assert!(matches!(
            with("GLOAS_FORK_EPOCH: 0"),
            Err(ConfigError::ForkOrder {
                fork: ForkName::Gloas,
                epoch: 0,
                previous: ForkName::Fulu,
                previous_epoch: 1,
            })
        ));
        // A config written before Gloas: not scheduled, and an epoch needs its version.
        let without: String = MINIMAL_CONFIG_YAML
            .lines()
            .filter(|line| !line.starts_with("GLOAS_FORK_"))
            .map(|line| format!("{line}\n"))
            .collect();
        let old = ChainSpec::from_config_yaml(&without).unwrap();
        assert_eq!(old.gloas_fork_version, None);
        assert_eq!(old.gloas_fork_epoch, FAR_FUTURE_EPOCH);
        assert_eq!(old.fork_epoch(ForkName::Gloas), None);
        assert_eq!(old.fork_version(ForkName::Gloas), UNKNOWN_FORK_VERSION);
        assert!(matches!(
            ChainSpec::from_config_yaml_with_overrides(
                &without,
                &format!("{forks}GLOAS_FORK_EPOCH: 3")
            ),
            Err(ConfigError::MissingKey(key)) if key == "GLOAS_FORK_VERSION"
        ));
    }

    /// The configs of the consensus-specs v1.6.1 release (the Fulu mainnet release, the key
    /// set released clients and network directories write, `../shared/devnet-configs`) read as
    /// the same chains as the built-in ones, which follow the newer spec: the keys v1.6.1
    /// still writes and the spec now derives (`SECONDS_PER_SLOT`, `MAX_REQUEST_BLOB_SIDECARS`,
    /// `MIN_EPOCHS_FOR_BLOCK_REQUESTS`, ...) agree with the derived values, and the keys of
    /// later forks it lacks take their unscheduled defaults.
    #[test]
    fn the_released_v1_6_1_configs_read_as_the_built_in_chains() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/devnet-configs");
        for (file, built_in) in [
            ("mainnet-v1.6.1.yaml", ChainSpec::mainnet()),
            ("minimal-v1.6.1.yaml", ChainSpec::minimal()),
        ] {
            let mut released = ChainSpec::from_config_file(&dir.join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut built_in = built_in;
            // Keys Arbor does not read (other forks' and proposals' values) are kept as
            // written; they are what the two key sets differ in.
            released.extra.clear();
            built_in.extra.clear();
            assert_eq!(released, built_in, "{file}");
        }
    }

    #[test]
    fn reports_an_unreadable_file() {
        let missing = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/no-such-network.yaml");
        assert!(matches!(
            ChainSpec::from_config_file(&missing),
            Err(ConfigError::Io { path, .. }) if path == missing
        ));
    }

    #[test]
    fn describe_lists_forks_blob_schedule_and_digests() {
        let text = ChainSpec::for_network(Network::Hoodi).describe();
        for needle in [
            "hoodi",
            "fulu",
            "50688",
            "0x70000910",
            "52480",
            "54016",
            "21 blobs per block",
            "BPO (15 blobs)",
            "0x212f13fc",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
        // Phase0 to Capella are superseded by Deneb at epoch 0, so only Deneb gets a digest row.
        assert!(!text.lines().any(|l| l.trim_start().starts_with("capella")
            && l.contains("0x")
            && l.split_whitespace().count() > 3));

        let mainnet = ChainSpec::mainnet().describe();
        for digest in ["0xb5303f2a", "0xcc2c5cdb", "0xcb0d1acc", "0x8c9f62fe"] {
            assert!(mainnet.contains(digest), "{digest} missing from\n{mainnet}");
        }
        let minimal = ChainSpec::minimal().describe();
        assert!(minimal.contains("not scheduled"));
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(yaml in "\\PC{0,200}") {
            let _ = ChainSpec::from_config_yaml(&yaml);
        }

        #[test]
        fn never_panics_on_an_arbitrary_value(line in 0usize..200, value in "\\PC{0,40}") {
            let keyed: Vec<&str> = MAINNET_CONFIG_YAML
                .lines()
                .filter(|l| l.contains(':') && !l.starts_with([' ', '#']))
                .collect();
            let target = keyed[line % keyed.len()];
            let key = target.split(':').next().unwrap_or_default();
            let yaml = MAINNET_CONFIG_YAML.replace(target, &format!("{key}: {value}"));
            let _ = ChainSpec::from_config_yaml(&yaml);
        }
    }

    #[test]
    fn network_names_parse_case_insensitively() {
        assert_eq!(Network::from_str("HOODI"), Ok(Network::Hoodi));
        assert_eq!("Sepolia".parse::<Network>(), Ok(Network::Sepolia));
        for network in Network::ALL {
            assert_eq!(network.to_string().parse::<Network>(), Ok(network));
        }
        let error = "holesky".parse::<Network>().unwrap_err().to_string();
        assert_eq!(
            error,
            "unknown network \"holesky\"; expected one of: mainnet, sepolia, hoodi"
        );
    }
}
