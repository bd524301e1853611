//! Types of the `/eth/v1/beacon/*` endpoints a validator client and checkpoint sync use:
//! genesis, state and block identifiers, and the validators of a state.
//!
//! [spec]: apis/beacon/genesis.yaml, apis/beacon/states/validators.yaml, params/index.yaml,
//! types/api.yaml

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use types::phase0::{Checkpoint, SignedBeaconBlockHeader, Validator};
use types::{
    BLSPubkey, CommitteeIndex, Epoch, FAR_FUTURE_EPOCH, Gwei, Root, Slot, ValidatorIndex, Version,
};

/// A path or query value that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// A state id that is none of the spec's forms.
    #[error(
        "invalid state id {0:?}: expected head, genesis, finalized, justified, a slot or a 0x-prefixed root"
    )]
    StateId(String),
    /// A block id that is none of the spec's forms.
    #[error(
        "invalid block id {0:?}: expected head, genesis, finalized, a slot or a 0x-prefixed root"
    )]
    BlockId(String),
    /// A validator id that is neither an index nor a 48-byte public key.
    #[error("invalid validator id {0:?}: expected an index or a 0x-prefixed 48-byte public key")]
    ValidatorId(String),
    /// A validator status that the spec does not name.
    #[error("invalid validator status {0:?}")]
    ValidatorStatus(String),
}

/// Parses a decimal slot or a `0x`-prefixed 32-byte root, the forms ids share.
fn parse_slot_or_root(s: &str) -> Option<Result<Slot, Root>> {
    if let Some(hex) = s.strip_prefix("0x") {
        (hex.len() == 64)
            .then(|| s.parse::<Root>().ok())
            .flatten()
            .map(Err)
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<Slot>().ok().map(Ok)
    } else {
        None
    }
}

/// `state_id`: which state a request reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateId {
    /// The canonical head's state.
    Head,
    /// The genesis state.
    Genesis,
    /// The state of the finalized checkpoint.
    Finalized,
    /// The state of the justified checkpoint.
    Justified,
    /// The canonical state at a slot.
    Slot(Slot),
    /// The state with this state root.
    Root(Root),
}

impl FromStr for StateId {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "head" => Self::Head,
            "genesis" => Self::Genesis,
            "finalized" => Self::Finalized,
            "justified" => Self::Justified,
            _ => match parse_slot_or_root(s) {
                Some(Ok(slot)) => Self::Slot(slot),
                Some(Err(root)) => Self::Root(root),
                None => return Err(IdError::StateId(s.to_string())),
            },
        })
    }
}

impl fmt::Display for StateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Head => f.write_str("head"),
            Self::Genesis => f.write_str("genesis"),
            Self::Finalized => f.write_str("finalized"),
            Self::Justified => f.write_str("justified"),
            Self::Slot(slot) => write!(f, "{slot}"),
            Self::Root(root) => write!(f, "{root}"),
        }
    }
}

/// `block_id`: which block a request reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockId {
    /// The canonical head block.
    Head,
    /// The genesis block.
    Genesis,
    /// The finalized checkpoint's block.
    Finalized,
    /// The canonical block at a slot.
    Slot(Slot),
    /// The block with this root.
    Root(Root),
}

impl FromStr for BlockId {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "head" => Self::Head,
            "genesis" => Self::Genesis,
            "finalized" => Self::Finalized,
            _ => match parse_slot_or_root(s) {
                Some(Ok(slot)) => Self::Slot(slot),
                Some(Err(root)) => Self::Root(root),
                None => return Err(IdError::BlockId(s.to_string())),
            },
        })
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Head => f.write_str("head"),
            Self::Genesis => f.write_str("genesis"),
            Self::Finalized => f.write_str("finalized"),
            Self::Slot(slot) => write!(f, "{slot}"),
            Self::Root(root) => write!(f, "{root}"),
        }
    }
}

/// A validator named by registry index or by public key (the `id` query of
/// `states/{state_id}/validators` and the `ids` of its POST body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValidatorId {
    /// The validator's index in the registry.
    Index(ValidatorIndex),
    /// The validator's public key.
    PublicKey(BLSPubkey),
}

impl FromStr for ValidatorId {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(hex) = s.strip_prefix("0x") {
            if hex.len() == 96
                && let Ok(pubkey) = s.parse::<BLSPubkey>()
            {
                return Ok(Self::PublicKey(pubkey));
            }
        } else if !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && let Ok(index) = s.parse()
        {
            return Ok(Self::Index(index));
        }
        Err(IdError::ValidatorId(s.to_string()))
    }
}

impl fmt::Display for ValidatorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Index(index) => write!(f, "{index}"),
            Self::PublicKey(pubkey) => write!(f, "{pubkey}"),
        }
    }
}

/// Serde through `Display`/`FromStr`, for the string-valued enums of the API.
macro_rules! serde_via_str {
    ($($ty:ty),+) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    )+};
}
pub(crate) use serde_via_str;

serde_via_str!(
    StateId,
    BlockId,
    ValidatorId,
    ValidatorStatus,
    ValidatorStatusFilter
);

/// `GET /eth/v1/beacon/genesis` data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenesisData {
    /// Unix time of the genesis slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub genesis_time: u64,
    /// Root of the genesis validator registry; mixed into every signing domain.
    pub genesis_validators_root: Root,
    /// The fork version at genesis.
    pub genesis_fork_version: Version,
}

/// `ValidatorStatus`: a validator's place in its life cycle at an epoch.
///
/// [spec]: types/api.yaml#ValidatorStatus (the status specification it links)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValidatorStatus {
    /// Deposited, but not yet eligible for the activation queue.
    PendingInitialized,
    /// Eligible and waiting in the activation queue.
    PendingQueued,
    /// Active, with no exit initiated.
    ActiveOngoing,
    /// Active, with a voluntary exit scheduled.
    ActiveExiting,
    /// Active, slashed, and scheduled to exit.
    ActiveSlashed,
    /// Exited, not slashed, not yet withdrawable.
    ExitedUnslashed,
    /// Exited after a slashing, not yet withdrawable.
    ExitedSlashed,
    /// Withdrawable, with balance still to withdraw.
    WithdrawalPossible,
    /// Withdrawable, with nothing left.
    WithdrawalDone,
}

impl ValidatorStatus {
    /// Every status, in life-cycle order.
    pub const ALL: [ValidatorStatus; 9] = [
        Self::PendingInitialized,
        Self::PendingQueued,
        Self::ActiveOngoing,
        Self::ActiveExiting,
        Self::ActiveSlashed,
        Self::ExitedUnslashed,
        Self::ExitedSlashed,
        Self::WithdrawalPossible,
        Self::WithdrawalDone,
    ];

    /// The status of `validator` at `epoch`, as the status specification defines it from the
    /// validator's epochs, `slashed` flag and effective balance.
    pub fn from_validator(validator: &Validator, epoch: Epoch) -> Self {
        if epoch < validator.activation_epoch {
            if validator.activation_eligibility_epoch == FAR_FUTURE_EPOCH {
                Self::PendingInitialized
            } else {
                Self::PendingQueued
            }
        } else if epoch < validator.exit_epoch {
            if validator.slashed {
                Self::ActiveSlashed
            } else if validator.exit_epoch == FAR_FUTURE_EPOCH {
                Self::ActiveOngoing
            } else {
                Self::ActiveExiting
            }
        } else if epoch < validator.withdrawable_epoch {
            if validator.slashed {
                Self::ExitedSlashed
            } else {
                Self::ExitedUnslashed
            }
        } else if validator.effective_balance != 0 {
            Self::WithdrawalPossible
        } else {
            Self::WithdrawalDone
        }
    }

    /// The spec's name (`active_ongoing`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PendingInitialized => "pending_initialized",
            Self::PendingQueued => "pending_queued",
            Self::ActiveOngoing => "active_ongoing",
            Self::ActiveExiting => "active_exiting",
            Self::ActiveSlashed => "active_slashed",
            Self::ExitedUnslashed => "exited_unslashed",
            Self::ExitedSlashed => "exited_slashed",
            Self::WithdrawalPossible => "withdrawal_possible",
            Self::WithdrawalDone => "withdrawal_done",
        }
    }

    /// The general status this one belongs to.
    pub const fn general(self) -> GeneralStatus {
        match self {
            Self::PendingInitialized | Self::PendingQueued => GeneralStatus::Pending,
            Self::ActiveOngoing | Self::ActiveExiting | Self::ActiveSlashed => {
                GeneralStatus::Active
            }
            Self::ExitedUnslashed | Self::ExitedSlashed => GeneralStatus::Exited,
            Self::WithdrawalPossible | Self::WithdrawalDone => GeneralStatus::Withdrawal,
        }
    }
}

impl FromStr for ValidatorStatus {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| IdError::ValidatorStatus(s.to_string()))
    }
}

impl fmt::Display for ValidatorStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The four general statuses a `status` filter may name instead of an exact one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeneralStatus {
    /// `pending`: `pending_initialized` or `pending_queued`.
    Pending,
    /// `active`: `active_ongoing`, `active_exiting` or `active_slashed`.
    Active,
    /// `exited`: `exited_unslashed` or `exited_slashed`.
    Exited,
    /// `withdrawal`: `withdrawal_possible` or `withdrawal_done`.
    Withdrawal,
}

/// One entry of the `status` filter of `states/{state_id}/validators`: an exact status or a
/// general one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValidatorStatusFilter {
    /// Exactly this status.
    Exact(ValidatorStatus),
    /// Any status of this general kind.
    General(GeneralStatus),
}

impl ValidatorStatusFilter {
    /// Whether a validator with `status` passes this filter.
    pub fn matches(self, status: ValidatorStatus) -> bool {
        match self {
            Self::Exact(exact) => exact == status,
            Self::General(general) => status.general() == general,
        }
    }
}

impl FromStr for ValidatorStatusFilter {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "pending" => Self::General(GeneralStatus::Pending),
            "active" => Self::General(GeneralStatus::Active),
            "exited" => Self::General(GeneralStatus::Exited),
            "withdrawal" => Self::General(GeneralStatus::Withdrawal),
            exact => Self::Exact(exact.parse()?),
        })
    }
}

impl fmt::Display for ValidatorStatusFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Exact(status) => status.as_str(),
            Self::General(GeneralStatus::Pending) => "pending",
            Self::General(GeneralStatus::Active) => "active",
            Self::General(GeneralStatus::Exited) => "exited",
            Self::General(GeneralStatus::Withdrawal) => "withdrawal",
        })
    }
}

/// `ValidatorResponse`: one validator of a state with its index, balance and status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidatorData {
    /// The validator's index in the registry.
    #[serde(with = "crate::json::quoted_u64")]
    pub index: ValidatorIndex,
    /// The validator's current balance in Gwei.
    #[serde(with = "crate::json::quoted_u64")]
    pub balance: Gwei,
    /// The validator's status at the state's epoch.
    pub status: ValidatorStatus,
    /// The registry record.
    pub validator: Validator,
}

/// `ValidatorBalanceResponse`: one validator's index and balance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidatorBalanceData {
    /// The validator's index in the registry.
    #[serde(with = "crate::json::quoted_u64")]
    pub index: ValidatorIndex,
    /// The validator's current balance in Gwei.
    #[serde(with = "crate::json::quoted_u64")]
    pub balance: Gwei,
}

/// The body of `POST /eth/v1/beacon/states/{state_id}/validators`: an absent or empty list
/// means no filter on that attribute.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidatorsRequestBody {
    /// Validators to return, by index or public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<ValidatorId>>,
    /// Statuses to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statuses: Option<Vec<ValidatorStatusFilter>>,
}

/// `GET /eth/v1/beacon/states/{state_id}/finality_checkpoints` data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalityCheckpointsData {
    /// The previous justified checkpoint.
    pub previous_justified: Checkpoint,
    /// The current justified checkpoint.
    pub current_justified: Checkpoint,
    /// The finalized checkpoint.
    pub finalized: Checkpoint,
}

/// `{ "root": ... }`: the data of the state root and block root endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootData {
    /// The root.
    pub root: Root,
}

/// `Committee`: one beacon committee of a slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitteeData {
    /// The committee's index within the slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub index: CommitteeIndex,
    /// The slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The members, in committee order.
    #[serde(with = "crate::json::quoted_u64_vec")]
    pub validators: Vec<ValidatorIndex>,
}

/// `SyncCommitteeByValidatorIndices`: the sync committee of a period by validator index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncCommitteeByValidatorIndices {
    /// The members, in committee order.
    #[serde(with = "crate::json::quoted_u64_vec")]
    pub validators: Vec<ValidatorIndex>,
    /// The members of each subcommittee.
    pub validator_aggregates: Vec<QuotedIndices>,
}

/// A list of validator indices as quoted decimals (an element of a list of lists).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct QuotedIndices(#[serde(with = "crate::json::quoted_u64_vec")] pub Vec<ValidatorIndex>);

/// `GET /eth/v1/beacon/headers/{block_id}` data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockHeaderData {
    /// The block's root.
    pub root: Root,
    /// True if the block is on the canonical chain.
    pub canonical: bool,
    /// The signed header.
    pub header: SignedBeaconBlockHeader,
}

/// `GET /eth/v1/beacon/states/{state_id}/randao` data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RandaoData {
    /// The RANDAO mix of the epoch asked for.
    pub randao: Root,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validator(
        activation_eligibility: Epoch,
        activation: Epoch,
        exit: Epoch,
        withdrawable: Epoch,
    ) -> Validator {
        Validator {
            pubkey: BLSPubkey::ZERO,
            withdrawal_credentials: Root::ZERO,
            effective_balance: 32_000_000_000,
            slashed: false,
            activation_eligibility_epoch: activation_eligibility,
            activation_epoch: activation,
            exit_epoch: exit,
            withdrawable_epoch: withdrawable,
        }
    }

    #[test]
    fn status_follows_the_life_cycle() {
        const F: Epoch = FAR_FUTURE_EPOCH;
        let cases = [
            (
                validator(F, F, F, F),
                0,
                ValidatorStatus::PendingInitialized,
            ),
            (validator(3, F, F, F), 5, ValidatorStatus::PendingQueued),
            (validator(3, 10, F, F), 9, ValidatorStatus::PendingQueued),
            (validator(3, 10, F, F), 10, ValidatorStatus::ActiveOngoing),
            (
                validator(3, 10, 20, 276),
                19,
                ValidatorStatus::ActiveExiting,
            ),
            (
                validator(3, 10, 20, 276),
                20,
                ValidatorStatus::ExitedUnslashed,
            ),
            (
                validator(3, 10, 20, 276),
                275,
                ValidatorStatus::ExitedUnslashed,
            ),
            (
                validator(3, 10, 20, 276),
                276,
                ValidatorStatus::WithdrawalPossible,
            ),
        ];
        for (v, epoch, expected) in cases {
            assert_eq!(
                ValidatorStatus::from_validator(&v, epoch),
                expected,
                "{v:?} at {epoch}"
            );
        }
        let mut slashed = validator(3, 10, 20, 8192);
        slashed.slashed = true;
        assert_eq!(
            ValidatorStatus::from_validator(&slashed, 15),
            ValidatorStatus::ActiveSlashed
        );
        assert_eq!(
            ValidatorStatus::from_validator(&slashed, 20),
            ValidatorStatus::ExitedSlashed
        );
        slashed.effective_balance = 0;
        assert_eq!(
            ValidatorStatus::from_validator(&slashed, 8192),
            ValidatorStatus::WithdrawalDone
        );
    }

    #[test]
    fn status_names_round_trip_and_filters_match() {
        for status in ValidatorStatus::ALL {
            assert_eq!(status.as_str().parse::<ValidatorStatus>(), Ok(status));
            let json = serde_json::to_string(&status).expect("encodes");
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
        let active: ValidatorStatusFilter = "active".parse().expect("general status");
        assert!(active.matches(ValidatorStatus::ActiveSlashed));
        assert!(!active.matches(ValidatorStatus::PendingQueued));
        let exact: ValidatorStatusFilter = "exited_slashed".parse().expect("exact status");
        assert!(exact.matches(ValidatorStatus::ExitedSlashed));
        assert!(!exact.matches(ValidatorStatus::ExitedUnslashed));
        assert!("retired".parse::<ValidatorStatusFilter>().is_err());
    }

    #[test]
    fn ids_parse_every_spec_form_and_refuse_the_rest() {
        let root = "0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2";
        assert_eq!("head".parse(), Ok(StateId::Head));
        assert_eq!("justified".parse(), Ok(StateId::Justified));
        assert_eq!("12".parse(), Ok(StateId::Slot(12)));
        assert_eq!(root.parse::<StateId>().expect("root").to_string(), root);
        assert_eq!("finalized".parse(), Ok(BlockId::Finalized));
        assert_eq!(root.parse::<BlockId>().expect("root").to_string(), root);
        for bad in ["current", "", "-1", "0x12", "1e3", "18446744073709551616"] {
            assert!(bad.parse::<StateId>().is_err(), "{bad}");
            assert!(bad.parse::<BlockId>().is_err(), "{bad}");
        }
        assert!("justified".parse::<BlockId>().is_err());

        let pubkey = "0x93247f2209abcacf57b75a51dafae777f9dd38bc7053d1af526f220a7489a6d3a2753e5f3e8b1cfe39b56f43611df74a";
        assert_eq!(
            pubkey.parse::<ValidatorId>().expect("pubkey").to_string(),
            pubkey
        );
        assert_eq!("7".parse(), Ok(ValidatorId::Index(7)));
        for bad in ["0x93", "seven", "", &pubkey[..90]] {
            assert!(bad.parse::<ValidatorId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn genesis_and_validator_data_round_trip_the_spec_shape() {
        let genesis = r#"{"genesis_time":"1590832934","genesis_validators_root":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","genesis_fork_version":"0x00000000"}"#;
        let parsed: GenesisData = serde_json::from_str(genesis).expect("decodes");
        assert_eq!(parsed.genesis_time, 1_590_832_934);
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), genesis);

        let item = r#"{"index":"1","balance":"32000000000","status":"active_ongoing","validator":{"pubkey":"0x93247f2209abcacf57b75a51dafae777f9dd38bc7053d1af526f220a7489a6d3a2753e5f3e8b1cfe39b56f43611df74a","withdrawal_credentials":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","effective_balance":"32000000000","slashed":false,"activation_eligibility_epoch":"0","activation_epoch":"0","exit_epoch":"18446744073709551615","withdrawable_epoch":"18446744073709551615"}}"#;
        let parsed: ValidatorData = serde_json::from_str(item).expect("decodes");
        assert_eq!(parsed.status, ValidatorStatus::ActiveOngoing);
        assert_eq!(parsed.validator.exit_epoch, FAR_FUTURE_EPOCH);
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), item);

        let body = r#"{"ids":["1","0x93247f2209abcacf57b75a51dafae777f9dd38bc7053d1af526f220a7489a6d3a2753e5f3e8b1cfe39b56f43611df74a"],"statuses":["active","withdrawal_done"]}"#;
        let parsed: ValidatorsRequestBody = serde_json::from_str(body).expect("decodes");
        assert_eq!(parsed.ids.as_ref().map(Vec::len), Some(2));
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), body);
        assert_eq!(
            serde_json::from_str::<ValidatorsRequestBody>("{}").expect("decodes"),
            ValidatorsRequestBody::default()
        );
    }

    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(json: &str) -> T {
        let parsed: T = serde_json::from_str(json).expect("decodes");
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), json);
        parsed
    }

    #[test]
    fn state_and_block_data_round_trip_the_spec_shape() {
        let root = "0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2";
        let checkpoint = format!(r#"{{"epoch":"1","root":"{root}"}}"#);
        let finality: FinalityCheckpointsData = round_trip(&format!(
            r#"{{"previous_justified":{checkpoint},"current_justified":{checkpoint},"finalized":{checkpoint}}}"#
        ));
        assert_eq!(finality.finalized.epoch, 1);
        let _: RootData = round_trip(&format!(r#"{{"root":"{root}"}}"#));
        let committee: CommitteeData =
            round_trip(r#"{"index":"1","slot":"1","validators":["1","5"]}"#);
        assert_eq!(committee.validators, [1, 5]);
        let sync: SyncCommitteeByValidatorIndices =
            round_trip(r#"{"validators":["1","2","3"],"validator_aggregates":[["1","2"],["3"]]}"#);
        assert_eq!(sync.validator_aggregates[1].0, [3]);
        let signature = format!("0x{}", "1b".repeat(96));
        let header: BlockHeaderData = round_trip(&format!(
            r#"{{"root":"{root}","canonical":true,"header":{{"message":{{"slot":"1","proposer_index":"1","parent_root":"{root}","state_root":"{root}","body_root":"{root}"}},"signature":"{signature}"}}}}"#
        ));
        assert!(header.canonical);
        let _: RandaoData = round_trip(&format!(r#"{{"randao":"{root}"}}"#));
    }
}
