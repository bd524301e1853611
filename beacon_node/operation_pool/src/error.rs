//! Why the pool refused an operation or could not pack a block.

use types::{CommitteeIndex, Epoch, Root, Slot, ValidatorIndex};

/// An operation the pool refused, or a failure reading the state it packs for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpPoolError {
    /// A helper of `state_processing` failed on the state (an unsupported fork, an index out
    /// of range).
    #[error("state: {0}")]
    State(#[from] state_processing::Error),
    /// A network aggregate must name exactly one committee (`committee_bits`).
    #[error("an aggregate names {count} committees, expected exactly one")]
    NotOneCommittee {
        /// Committee bits set.
        count: usize,
    },
    /// `data.index` must be 0 from Electra on, 0 or 1 (the payload signal) from Gloas on.
    #[error("attestation data index is {0}, must be 0 (or 1 from Gloas on)")]
    DataIndexOutOfRange(CommitteeIndex),
    /// The committees given are not the ones of the attestation's target epoch.
    #[error("committees of epoch {committees} given for an attestation of epoch {target}")]
    CommitteesEpochMismatch {
        /// The epoch of the committee cache.
        committees: Epoch,
        /// The attestation's target epoch.
        target: Epoch,
    },
    /// The attestation's target epoch is not the epoch of its slot.
    #[error("attestation of slot {slot} has target epoch {target}")]
    TargetEpochSlotMismatch {
        /// `data.slot`.
        slot: Slot,
        /// `data.target.epoch`.
        target: Epoch,
    },
    /// The aggregation bits do not have the committee's length.
    #[error("committee {committee_index} has {expected} members, aggregation bits have {got}")]
    AggregationBitsLength {
        /// The committee.
        committee_index: CommitteeIndex,
        /// Committee size.
        expected: usize,
        /// Aggregation bits length.
        got: usize,
    },
    /// An attestation with no attester.
    #[error("an attestation with no aggregation bit set")]
    NoAttesters,
    /// A single attestation's attester is not a member of the committee it names.
    #[error("validator {attester_index} is not in committee {committee_index}")]
    AttesterNotInCommittee {
        /// `attester_index`.
        attester_index: ValidatorIndex,
        /// `committee_index`.
        committee_index: CommitteeIndex,
    },
    /// The same attestation data was seen before with the committees of a different shuffling.
    #[error("attestation data {data_root} seen with two different shufflings")]
    ShufflingMismatch {
        /// `hash_tree_root(data)`.
        data_root: Root,
    },
    /// Network aggregates given to `compute_on_chain_aggregate` do not share one data.
    #[error("network aggregates of different attestation data")]
    DataMismatch,
    /// Two network aggregates given to `compute_on_chain_aggregate` name the same committee.
    #[error("two network aggregates of committee {0}")]
    DuplicateCommittee(CommitteeIndex),
    /// A signature does not decode to a point of the G2 subgroup.
    #[error("signature does not decode: {0}")]
    InvalidSignature(String),
    /// A sync committee contribution names a subcommittee past `SYNC_COMMITTEE_SUBNET_COUNT`.
    #[error("sync subcommittee index {0} out of range")]
    SubcommitteeIndexOutOfRange(u64),
    /// A proposer slashing whose headers do not conflict (`process_proposer_slashing`'s
    /// structural checks).
    #[error("proposer slashing is not slashable: {0}")]
    ProposerSlashingNotSlashable(&'static str),
    /// An attester slashing whose data are neither a double nor a surround vote, or whose
    /// attestations share no validator.
    #[error("attester slashing is not slashable: {0}")]
    AttesterSlashingNotSlashable(&'static str),
    /// A payload attestation's committee is not of `PTC_SIZE` members.
    #[error("a payload timeliness committee of {got} members given, expected {expected}")]
    PtcLength {
        /// `PTC_SIZE`.
        expected: usize,
        /// The length of the committee given.
        got: usize,
    },
    /// A payload attestation message's validator holds no position in the committee given.
    #[error("validator {validator} is not in the payload timeliness committee of slot {slot}")]
    NotInPtc {
        /// `message.validator_index`.
        validator: ValidatorIndex,
        /// `message.data.slot`.
        slot: Slot,
    },
    /// A list of the block would exceed its SSZ limit (a bug of the packing: it counts).
    #[error("block list `{0}` is full")]
    ListFull(&'static str),
}

impl From<bls::Error> for OpPoolError {
    fn from(e: bls::Error) -> Self {
        OpPoolError::InvalidSignature(e.to_string())
    }
}
