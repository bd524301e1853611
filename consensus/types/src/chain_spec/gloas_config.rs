//! The Gloas configuration keys' spec values (the defaults of a config written before Gloas)
//! and the EIP-8261 gas limit schedule.
//!
//! [spec]: configs/mainnet.yaml, configs/minimal.yaml, gloas/beacon-chain.md#configuration

use super::ChainSpec;
use crate::primitives::{Epoch, Gwei};

/// One `GAS_LIMIT_SCHEDULE` entry (EIP-8261): from `epoch` on, the default gas limit of a
/// validator that configures none, and the recommended maximum. Advisory: no block is invalid
/// for its gas limit.
///
/// [spec]: gloas/beacon-chain.md#gas-limit-schedule
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GasLimitScheduleEntry {
    /// `EPOCH`: the first epoch the gas limit applies to.
    pub epoch: Epoch,
    /// `GAS_LIMIT`.
    pub gas_limit: u64,
}

/// The values of the Gloas configuration keys, as the spec's `configs/mainnet.yaml` or
/// `configs/minimal.yaml` write them: what a config that lacks one of them (one written before
/// Gloas) takes. The fork's version and epoch are not here: a config without them does not
/// schedule Gloas.
///
/// [spec]: configs/mainnet.yaml
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GloasConfigDefaults {
    /// `MIN_BUILDER_WITHDRAWABILITY_DELAY`.
    pub min_builder_withdrawability_delay: Epoch,
    /// `ATTESTATION_DUE_BPS_GLOAS`.
    pub attestation_due_bps_gloas: u64,
    /// `AGGREGATE_DUE_BPS_GLOAS`.
    pub aggregate_due_bps_gloas: u64,
    /// `SYNC_MESSAGE_DUE_BPS_GLOAS`.
    pub sync_message_due_bps_gloas: u64,
    /// `CONTRIBUTION_DUE_BPS_GLOAS`.
    pub contribution_due_bps_gloas: u64,
    /// `PAYLOAD_DUE_BPS`.
    pub payload_due_bps: u64,
    /// `PAYLOAD_ATTESTATION_DUE_BPS`.
    pub payload_attestation_due_bps: u64,
    /// `CHURN_LIMIT_QUOTIENT_GLOAS`.
    pub churn_limit_quotient_gloas: u64,
    /// `CONSOLIDATION_CHURN_LIMIT_QUOTIENT`.
    pub consolidation_churn_limit_quotient: u64,
    /// `MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT_GLOAS`.
    pub max_per_epoch_activation_churn_limit_gloas: Gwei,
    /// `MAX_REQUEST_PAYLOADS`.
    pub max_request_payloads: u64,
}

impl GloasConfigDefaults {
    /// `configs/mainnet.yaml` (consensus-specs 1.7.0b4).
    pub const MAINNET: Self = Self {
        min_builder_withdrawability_delay: 64,
        attestation_due_bps_gloas: 2500,
        aggregate_due_bps_gloas: 5000,
        sync_message_due_bps_gloas: 2500,
        contribution_due_bps_gloas: 5000,
        payload_due_bps: 5000,
        payload_attestation_due_bps: 7500,
        churn_limit_quotient_gloas: 32_768,
        consolidation_churn_limit_quotient: 65_536,
        max_per_epoch_activation_churn_limit_gloas: 256_000_000_000,
        max_request_payloads: 128,
    };

    /// `configs/minimal.yaml` (consensus-specs 1.7.0b4): the mainnet values but for the
    /// `[customized]` delay and churn.
    pub const MINIMAL: Self = Self {
        min_builder_withdrawability_delay: 2,
        churn_limit_quotient_gloas: 16,
        consolidation_churn_limit_quotient: 32,
        max_per_epoch_activation_churn_limit_gloas: 128_000_000_000,
        ..Self::MAINNET
    };

    /// The defaults of a config whose `PRESET_BASE` is `preset_base`: minimal's for `minimal`,
    /// mainnet's for any other (mainnet and the public networks built on its preset).
    pub fn for_preset_base(preset_base: &str) -> Self {
        match preset_base {
            "minimal" => Self::MINIMAL,
            _ => Self::MAINNET,
        }
    }
}

impl ChainSpec {
    /// `get_scheduled_gas_limit(epoch)` (EIP-8261): the gas limit of the last
    /// `GAS_LIMIT_SCHEDULE` entry whose epoch is at or before `epoch`; `None` when the schedule
    /// is empty or starts later. Advisory: the default gas limit of a validator that sets none,
    /// and the recommended maximum.
    ///
    /// [spec]: gloas/beacon-chain.md#get_scheduled_gas_limit
    pub fn get_scheduled_gas_limit(&self, epoch: Epoch) -> Option<u64> {
        self.gas_limit_schedule
            .iter()
            .rev()
            .find(|entry| epoch >= entry.epoch)
            .map(|entry| entry.gas_limit)
    }
}
