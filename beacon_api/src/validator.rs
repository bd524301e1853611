//! Types of the `/eth/v1/validator/*` endpoints and the validator-side pool submissions.
//!
//! [spec]: types/duty.yaml, apis/validator/*.yaml, types/registration.yaml,
//! types/*/block_contents.yaml

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ssz_derive::{Decode, Encode};
use tree_hash_derive::TreeHash;
use types::{
    BLSPubkey, BLSSignature, CommitteeIndex, Epoch, ExecutionAddress, Slot, U256, ValidatorIndex,
};

use crate::beacon::serde_via_str;
use crate::envelope::{
    CONSENSUS_BLOCK_VALUE_HEADER, CONSENSUS_VERSION_HEADER, EXECUTION_PAYLOAD_BLINDED_HEADER,
    EXECUTION_PAYLOAD_VALUE_HEADER,
};

/// `AttesterDuty`: where and when a validator attests in an epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttesterDuty {
    /// The validator's public key.
    pub pubkey: BLSPubkey,
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The committee's index within the slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub committee_index: CommitteeIndex,
    /// The number of validators in the committee.
    #[serde(with = "crate::json::quoted_u64")]
    pub committee_length: u64,
    /// The number of committees in the slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub committees_at_slot: u64,
    /// The validator's position within the committee.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_committee_index: u64,
    /// The slot to attest at.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
}

/// `ProposerDuty`: a slot a validator proposes at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposerDuty {
    /// The proposer's public key.
    pub pubkey: BLSPubkey,
    /// The proposer's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The slot to propose at.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
}

/// `PtcDuty`: the slot of an epoch at which a validator sits in the payload timeliness
/// committee (`get_ptc_assignment`).
///
/// [spec]: gloas/validator.md#payload-timeliness-committee
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtcDuty {
    /// The validator's public key.
    pub pubkey: BLSPubkey,
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The slot whose payload the validator votes on.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
}

/// `Altair.SyncDuty`: a validator's seats in the sync committee of a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncDuty {
    /// The validator's public key.
    pub pubkey: BLSPubkey,
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The validator's positions in the sync committee (one validator may sit more than once).
    #[serde(with = "crate::json::quoted_u64_vec")]
    pub validator_sync_committee_indices: Vec<u64>,
}

/// `GET /eth/v1/validator/sync_committee_duties` answer: no `dependent_root` (sync committees
/// are fixed a period ahead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncDutiesResponse {
    /// True if the data references an unverified execution payload.
    pub execution_optimistic: bool,
    /// The duties.
    pub data: Vec<SyncDuty>,
}

/// One entry of `POST /eth/v1/validator/beacon_committee_subscriptions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeaconCommitteeSubscription {
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The committee's index within the slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub committee_index: CommitteeIndex,
    /// The number of committees in the slot (it fixes the subnet).
    #[serde(with = "crate::json::quoted_u64")]
    pub committees_at_slot: u64,
    /// The slot of the duty.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// True if the validator aggregates, so the node must subscribe to the subnet.
    pub is_aggregator: bool,
}

/// `Altair.SyncCommitteeSubscription`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncCommitteeSubscription {
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The validator's positions in the sync committee.
    #[serde(with = "crate::json::quoted_u64_vec")]
    pub sync_committee_indices: Vec<u64>,
    /// The first epoch the subscription is no longer needed (exclusive).
    #[serde(with = "crate::json::quoted_u64")]
    pub until_epoch: Epoch,
}

/// One entry of `POST /eth/v1/validator/prepare_beacon_proposer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposerPreparationData {
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// Where the validator's execution rewards go.
    pub fee_recipient: ExecutionAddress,
}

/// `ValidatorRegistrationV1` (builder-specs): what a validator asks builders to build with.
/// An SSZ container because its hash tree root is what the registration signs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Encode, Decode, TreeHash)]
pub struct ValidatorRegistrationV1 {
    /// Where the validator's execution rewards go.
    pub fee_recipient: ExecutionAddress,
    /// The gas limit the validator wants.
    #[serde(with = "crate::json::quoted_u64")]
    pub gas_limit: u64,
    /// Unix time of the registration; a later one replaces an earlier one.
    #[serde(with = "crate::json::quoted_u64")]
    pub timestamp: u64,
    /// The validator's public key.
    pub pubkey: BLSPubkey,
}

/// `SignedValidatorRegistrationV1`, the entries of `POST /eth/v1/validator/register_validator`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Encode, Decode, TreeHash)]
pub struct SignedValidatorRegistrationV1 {
    /// The registration.
    pub message: ValidatorRegistrationV1,
    /// Signature over the registration with `DOMAIN_APPLICATION_BUILDER`.
    pub signature: BLSSignature,
}

/// One entry of the `POST /eth/v1/validator/liveness/{epoch}` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LivenessResponseData {
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub index: ValidatorIndex,
    /// True if the validator was seen active (attesting or proposing) in the epoch.
    pub is_live: bool,
}

/// `BeaconCommitteeSelection` (DVT): a validator's partial selection proof for a slot, sent to
/// a middleware that combines the partials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeaconCommitteeSelection {
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The slot of the duty.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The (partial or combined) selection proof.
    pub selection_proof: BLSSignature,
}

/// `SyncCommitteeSelection` (DVT).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncCommitteeSelection {
    /// The validator's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub validator_index: ValidatorIndex,
    /// The slot of the duty.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The sync subcommittee.
    #[serde(with = "crate::json::quoted_u64")]
    pub subcommittee_index: u64,
    /// The (partial or combined) selection proof.
    pub selection_proof: BLSSignature,
}

/// `broadcast_validation`: how much a node checks a published block before it gossips it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum BroadcastValidation {
    /// Gossip validation only (the default).
    #[default]
    Gossip,
    /// Full consensus validation (the state transition) too.
    Consensus,
    /// Consensus validation, and no equivocation by the proposer.
    ConsensusAndEquivocation,
}

impl BroadcastValidation {
    /// The spec's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Gossip => "gossip",
            Self::Consensus => "consensus",
            Self::ConsensusAndEquivocation => "consensus_and_equivocation",
        }
    }
}

/// A value that is none of the spec's `broadcast_validation` names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid broadcast_validation {0:?}: expected gossip, consensus or consensus_and_equivocation"
)]
pub struct InvalidBroadcastValidation(pub String);

impl FromStr for BroadcastValidation {
    type Err = InvalidBroadcastValidation;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gossip" => Ok(Self::Gossip),
            "consensus" => Ok(Self::Consensus),
            "consensus_and_equivocation" => Ok(Self::ConsensusAndEquivocation),
            other => Err(InvalidBroadcastValidation(other.to_string())),
        }
    }
}

impl fmt::Display for BroadcastValidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

serde_via_str!(BroadcastValidation);

/// The metadata of a produceBlockV3 answer, carried both in headers and (for JSON) in the body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProduceBlockV3Metadata {
    /// The fork of the block (`Eth-Consensus-Version`, `version`).
    #[serde(rename = "version", with = "crate::json::fork_name")]
    pub consensus_version: types::ForkName,
    /// True if the block is blinded (`Eth-Execution-Payload-Blinded`).
    pub execution_payload_blinded: bool,
    /// The payload's value in wei (`Eth-Execution-Payload-Value`).
    #[serde(with = "crate::json::quoted_u256")]
    pub execution_payload_value: U256,
    /// The proposer's consensus rewards in wei (`Eth-Consensus-Block-Value`).
    #[serde(with = "crate::json::quoted_u256")]
    pub consensus_block_value: U256,
}

/// A produceBlockV3 header that is missing or malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataHeaderError {
    /// A required header is absent.
    #[error("missing header {0}")]
    Missing(&'static str),
    /// A header's value does not parse.
    #[error("invalid header {name}: {value:?}")]
    Invalid {
        /// The header.
        name: &'static str,
        /// Its value.
        value: String,
    },
}

impl ProduceBlockV3Metadata {
    /// Reads the metadata from the four response headers; `get` looks a header up by name
    /// (case-insensitively, as HTTP header maps do).
    pub fn from_headers<'a>(
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<Self, MetadataHeaderError> {
        let header = |name: &'static str| get(name).ok_or(MetadataHeaderError::Missing(name));
        let invalid = |name: &'static str, value: &str| MetadataHeaderError::Invalid {
            name,
            value: value.to_string(),
        };
        let version = header(CONSENSUS_VERSION_HEADER)?;
        let blinded = header(EXECUTION_PAYLOAD_BLINDED_HEADER)?;
        let payload_value = header(EXECUTION_PAYLOAD_VALUE_HEADER)?;
        let block_value = header(CONSENSUS_BLOCK_VALUE_HEADER)?;
        Ok(Self {
            consensus_version: version
                .parse()
                .map_err(|_| invalid(CONSENSUS_VERSION_HEADER, version))?,
            execution_payload_blinded: match blinded.to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(invalid(EXECUTION_PAYLOAD_BLINDED_HEADER, blinded)),
            },
            execution_payload_value: U256::from_str_radix(payload_value, 10)
                .map_err(|_| invalid(EXECUTION_PAYLOAD_VALUE_HEADER, payload_value))?,
            consensus_block_value: U256::from_str_radix(block_value, 10)
                .map_err(|_| invalid(CONSENSUS_BLOCK_VALUE_HEADER, block_value))?,
        })
    }

    /// The four headers as name/value pairs, for a server to send.
    pub fn to_headers(&self) -> [(&'static str, String); 4] {
        [
            (CONSENSUS_VERSION_HEADER, self.consensus_version.to_string()),
            (
                EXECUTION_PAYLOAD_BLINDED_HEADER,
                self.execution_payload_blinded.to_string(),
            ),
            (
                EXECUTION_PAYLOAD_VALUE_HEADER,
                self.execution_payload_value.to_string(),
            ),
            (
                CONSENSUS_BLOCK_VALUE_HEADER,
                self.consensus_block_value.to_string(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const PUBKEY: &str = "0x93247f2209abcacf57b75a51dafae777f9dd38bc7053d1af526f220a7489a6d3a2753e5f3e8b1cfe39b56f43611df74a";

    fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + fmt::Debug>(
        json: &str,
    ) -> T {
        let parsed: T = serde_json::from_str(json).expect("decodes");
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), json);
        parsed
    }

    #[test]
    fn duties_round_trip_the_spec_shape() {
        let attester = format!(
            r#"{{"pubkey":"{PUBKEY}","validator_index":"1","committee_index":"2","committee_length":"128","committees_at_slot":"64","validator_committee_index":"17","slot":"33"}}"#
        );
        let duty: AttesterDuty = round_trip(&attester);
        assert_eq!(
            (duty.committee_length, duty.validator_committee_index),
            (128, 17)
        );

        let proposer = format!(r#"{{"pubkey":"{PUBKEY}","validator_index":"9","slot":"40"}}"#);
        let duty: ProposerDuty = round_trip(&proposer);
        assert_eq!(duty.slot, 40);

        let sync = format!(
            r#"{{"execution_optimistic":false,"data":[{{"pubkey":"{PUBKEY}","validator_index":"1","validator_sync_committee_indices":["0","511"]}}]}}"#
        );
        let duties: SyncDutiesResponse = round_trip(&sync);
        assert_eq!(duties.data[0].validator_sync_committee_indices, [0, 511]);

        let wrapped = format!(
            r#"{{"dependent_root":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","execution_optimistic":true,"data":[{proposer}]}}"#
        );
        let response: crate::DutiesResponse<Vec<ProposerDuty>> = round_trip(&wrapped);
        assert!(response.execution_optimistic);
    }

    #[test]
    fn subscriptions_and_registrations_round_trip_the_spec_shape() {
        let _: BeaconCommitteeSubscription = round_trip(
            r#"{"validator_index":"1","committee_index":"3","committees_at_slot":"64","slot":"100","is_aggregator":true}"#,
        );
        let _: SyncCommitteeSubscription = round_trip(
            r#"{"validator_index":"1","sync_committee_indices":["0","12"],"until_epoch":"256"}"#,
        );
        let _: ProposerPreparationData = round_trip(
            r#"{"validator_index":"1","fee_recipient":"0xabcf8e0d4e9587369b2301d0790347320302cc09"}"#,
        );
        let signature = format!("0x{}", "1b".repeat(96));
        let registration = format!(
            r#"{{"message":{{"fee_recipient":"0xabcf8e0d4e9587369b2301d0790347320302cc09","gas_limit":"30000000","timestamp":"1700000000","pubkey":"{PUBKEY}"}},"signature":"{signature}"}}"#
        );
        let parsed: SignedValidatorRegistrationV1 = round_trip(&registration);
        assert_eq!(parsed.message.gas_limit, 30_000_000);
        let _: Vec<LivenessResponseData> =
            round_trip(r#"[{"index":"1","is_live":true},{"index":"2","is_live":false}]"#);
    }

    #[test]
    fn broadcast_validation_names() {
        for v in [
            BroadcastValidation::Gossip,
            BroadcastValidation::Consensus,
            BroadcastValidation::ConsensusAndEquivocation,
        ] {
            assert_eq!(v.as_str().parse(), Ok(v));
            assert_eq!(
                serde_json::to_string(&v).expect("encodes"),
                format!("\"{v}\"")
            );
        }
        assert!("full".parse::<BroadcastValidation>().is_err());
        assert_eq!(BroadcastValidation::default(), BroadcastValidation::Gossip);
    }

    #[test]
    fn block_v3_metadata_from_and_to_headers() {
        let headers: HashMap<String, String> = [
            ("eth-consensus-version", "fulu"),
            ("eth-execution-payload-blinded", "false"),
            ("eth-execution-payload-value", "12345678901234567890"),
            ("eth-consensus-block-value", "7"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let get = |name: &str| headers.get(&name.to_ascii_lowercase()).map(String::as_str);
        let metadata = ProduceBlockV3Metadata::from_headers(get).expect("all headers valid");
        assert_eq!(metadata.consensus_version, types::ForkName::Fulu);
        assert!(!metadata.execution_payload_blinded);
        assert_eq!(
            metadata.execution_payload_value,
            U256::from(12_345_678_901_234_567_890_u128)
        );
        let sent: HashMap<String, String> = metadata
            .to_headers()
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        assert_eq!(sent, headers);

        let mut broken = headers.clone();
        broken.insert("eth-execution-payload-value".into(), "0x10".into());
        let get = |name: &str| broken.get(&name.to_ascii_lowercase()).map(String::as_str);
        assert!(matches!(
            ProduceBlockV3Metadata::from_headers(get),
            Err(MetadataHeaderError::Invalid {
                name: EXECUTION_PAYLOAD_VALUE_HEADER,
                ..
            })
        ));
        broken.remove("eth-consensus-version");
        let get = |name: &str| broken.get(&name.to_ascii_lowercase()).map(String::as_str);
        assert_eq!(
            ProduceBlockV3Metadata::from_headers(get),
            Err(MetadataHeaderError::Missing(CONSENSUS_VERSION_HEADER))
        );
    }

    #[test]
    fn dvt_selections_round_trip_the_spec_shape() {
        let signature = format!("0x{}", "1b".repeat(96));
        let selection: BeaconCommitteeSelection = round_trip(&format!(
            r#"{{"validator_index":"1","slot":"2","selection_proof":"{signature}"}}"#
        ));
        assert_eq!(selection.slot, 2);
        let selection: SyncCommitteeSelection = round_trip(&format!(
            r#"{{"validator_index":"1","slot":"2","subcommittee_index":"3","selection_proof":"{signature}"}}"#
        ));
        assert_eq!(selection.subcommittee_index, 3);
    }
}
