//! Gloas containers: enshrined proposer-builder separation (EIP-7732: bids, payload envelopes,
//! payload attestations, the builder registry), progressive SSZ (EIP-7688: the state, block body,
//! payload and attestations become progressive containers, their lists progressive lists), the
//! block access list (EIP-7928), the payload's slot number (EIP-7843), builder requests
//! (EIP-8282), and the Gloas light-client containers.
//!
//! Arbor does not run Gloas yet (`ForkName::Gloas` exists, but it is after
//! `ForkName::LATEST_IMPLEMENTED`): these are the containers, checked against the spec tests'
//! `ssz_static` vectors, and the Gloas variants of the fork enums of `combined`.
//!
//! [spec]: gloas/beacon-chain.md#containers, gloas/p2p-interface.md#containers,
//! gloas/partial-columns/p2p-interface.md#containers, gloas/light-client/sync-protocol.md#containers

use progressive_ssz::{
    ProgressiveBitList, ProgressiveByteList, ProgressiveList, progressive_container,
};
pub use progressive_tree::{ProgressivePackedList, ProgressiveTreeList};
use ssz_derive::{Decode, Encode};
use ssz_types::{BitVector, FixedVector, VariableList, typenum};
use tree_hash_derive::TreeHash;

use crate::{EthSpec, primitives::*};

pub use crate::altair::{
    ContributionAndProof, SignedContributionAndProof, SyncAggregate, SyncAggregatorSelectionData,
    SyncCommittee, SyncCommitteeContribution, SyncCommitteeMessage,
};
pub use crate::bellatrix::PowBlock;
pub use crate::capella::{
    BLSToExecutionChange, HistoricalSummary, SignedBLSToExecutionChange, Withdrawal,
};
pub use crate::electra::{
    ConsolidationRequest, DepositRequest, PendingConsolidation, PendingDeposit,
    PendingPartialWithdrawal, SingleAttestation, WithdrawalRequest,
};
pub use crate::fulu::{DataColumnsByRootIdentifier, MatrixEntry};
pub use crate::phase0::{
    AttestationData, BeaconBlockHeader, Checkpoint, Deposit, DepositData, DepositMessage,
    Eth1Block, Eth1Data, Fork, ForkData, ProposerSlashing, SignedBeaconBlockHeader,
    SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
};

/// `BuilderIndex`: a builder's index in the state's builder registry.
/// [New in Gloas:EIP7732]
pub type BuilderIndex = u64;
/// `PayloadStatus`: a fork-choice node's payload status (`PAYLOAD_STATUS_*`).
/// [New in Gloas:EIP7732]
pub type PayloadStatus = u8;
/// `AggregationBits`: `ProgressiveBitList`. [Modified in Gloas:EIP7688]
pub type AggregationBits = ProgressiveBitList;
/// `AttestingIndices`: `ProgressiveList[ValidatorIndex]`. [Modified in Gloas:EIP7688]
pub type AttestingIndices = ProgressiveList<ValidatorIndex>;
/// `Transaction`: `ProgressiveByteList` (opaque RLP bytes). [Modified in Gloas:EIP7688]
pub type Transaction = ProgressiveByteList;
/// `BlockAccessList`: `ProgressiveByteList` (RLP-encoded EIP-7928 access list).
/// [New in Gloas:EIP7928]
pub type BlockAccessList = ProgressiveByteList;
/// `DepositRequests`: `ProgressiveList[DepositRequest]`. [Modified in Gloas:EIP7688]
pub type DepositRequests = ProgressiveList<DepositRequest>;
/// `WithdrawalRequests`: `ProgressiveList[WithdrawalRequest]`. [Modified in Gloas:EIP7688]
pub type WithdrawalRequests = ProgressiveList<WithdrawalRequest>;
/// `ConsolidationRequests`: `ProgressiveList[ConsolidationRequest]`. [Modified in Gloas:EIP7688]
pub type ConsolidationRequests = ProgressiveList<ConsolidationRequest>;
/// `BuilderDepositRequests`: `ProgressiveList[BuilderDepositRequest]`. [New in Gloas:EIP8282]
pub type BuilderDepositRequests = ProgressiveList<BuilderDepositRequest>;
/// `BuilderExitRequests`: `ProgressiveList[BuilderExitRequest]`. [New in Gloas:EIP8282]
pub type BuilderExitRequests = ProgressiveList<BuilderExitRequest>;

/// `BUILDER_INDEX_FLAG`: set in a `ValidatorIndex` (of a `Withdrawal`) that holds a builder index.
pub const BUILDER_INDEX_FLAG: u64 = 1 << 40;
/// `BUILDER_INDEX_SELF_BUILD`: the builder index of a bid the proposer builds itself.
pub const BUILDER_INDEX_SELF_BUILD: BuilderIndex = u64::MAX;
/// `BUILDER_PAYMENT_THRESHOLD_NUMERATOR`: a builder is paid once this many tenths of a slot's
/// attesting balance (with the denominator) voted for its block.
pub const BUILDER_PAYMENT_THRESHOLD_NUMERATOR: u64 = 6;
/// `BUILDER_PAYMENT_THRESHOLD_DENOMINATOR`: see `BUILDER_PAYMENT_THRESHOLD_NUMERATOR`.
pub const BUILDER_PAYMENT_THRESHOLD_DENOMINATOR: u64 = 10;
/// `BUILDER_WITHDRAWAL_PREFIX`: the withdrawal-credential prefix of a builder deposit.
pub const BUILDER_WITHDRAWAL_PREFIX: u8 = 0xB0;
/// `PAYLOAD_BUILDER_VERSION`: the only builder version Gloas accepts.
pub const PAYLOAD_BUILDER_VERSION: u8 = 0;
/// `BUILDER_DEPOSIT_REQUEST_TYPE`: the EIP-7685 type byte of builder deposit requests.
pub const BUILDER_DEPOSIT_REQUEST_TYPE: u8 = 0x03;
/// `BUILDER_EXIT_REQUEST_TYPE`: the EIP-7685 type byte of builder exit requests.
pub const BUILDER_EXIT_REQUEST_TYPE: u8 = 0x04;
/// `PAYLOAD_STATUS_EMPTY`: the block's payload did not arrive (fork choice).
pub const PAYLOAD_STATUS_EMPTY: PayloadStatus = 0;
/// `PAYLOAD_STATUS_FULL`: the block's payload arrived and was verified (fork choice).
pub const PAYLOAD_STATUS_FULL: PayloadStatus = 1;
/// `PAYLOAD_STATUS_PENDING`: the block itself, before its payload is decided (fork choice).
pub const PAYLOAD_STATUS_PENDING: PayloadStatus = 2;

/// `FinalityBranch`: `Vector[Bytes32, floorlog2(FINALIZED_ROOT_GINDEX_GLOAS)]` (735: depth 9).
/// [Modified in Gloas:EIP7688]
pub type FinalityBranch = FixedVector<Bytes32, typenum::U9>;
/// `CurrentSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS)]`
/// (2945: depth 11).
/// [Modified in Gloas:EIP7688]
pub type CurrentSyncCommitteeBranch = FixedVector<Bytes32, typenum::U11>;
/// `NextSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(NEXT_SYNC_COMMITTEE_GINDEX_GLOAS)]`
/// (2946: depth 11).
/// [Modified in Gloas:EIP7688]
pub type NextSyncCommitteeBranch = FixedVector<Bytes32, typenum::U11>;
/// `ExecutionBranch`: `Vector[Bytes32, floorlog2(EXECUTION_BLOCK_HASH_GINDEX_GLOAS)]` (2856:
/// depth 11), proving an execution block hash within `BeaconBlockBody`.
/// [Modified in Gloas:EIP7732]
pub type ExecutionBranch = FixedVector<Bytes32, typenum::U11>;

/// `LightClientHeader`: the block header a light client tracks, with the execution block hash
/// in place of Deneb's whole execution payload header.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-lightclientheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LightClientHeader {
    /// The beacon block header.
    pub beacon: BeaconBlockHeader,
    /// Hash of the execution block the beacon block builds on.
    /// [New in Gloas:EIP7732]
    pub execution_block_hash: Hash32,
    /// Merkle branch of `execution_block_hash` against `beacon.body_root`.
    /// [Modified in Gloas:EIP7732]
    pub execution_branch: ExecutionBranch,
}

/// `LightClientBootstrap`: a light client's trusted starting point: header and current sync
/// committee.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientbootstrap (with Gloas's header and branch)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// Header matching the requested beacon block root.
    pub header: LightClientHeader,
    /// Current sync committee corresponding to `header.beacon.state_root`.
    pub current_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `current_sync_committee` against the header's state root.
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}

/// `LightClientUpdate`: an attested header with next sync committee and finality proofs.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientupdate (with Gloas's header and branches)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    pub attested_header: LightClientHeader,
    /// Next sync committee corresponding to `attested_header.beacon.state_root`.
    pub next_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `next_sync_committee` against the attested state root.
    pub next_sync_committee_branch: NextSyncCommitteeBranch,
    /// Finalized header corresponding to `attested_header.beacon.state_root`.
    pub finalized_header: LightClientHeader,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that
/// signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientfinalityupdate (with Gloas's header and branch)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientFinalityUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    pub attested_header: LightClientHeader,
    /// Finalized header corresponding to `attested_header.beacon.state_root`.
    pub finalized_header: LightClientHeader,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientOptimisticUpdate`: the latest attested header and the sync aggregate that
/// signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientoptimisticupdate (with Gloas's header)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientOptimisticUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    pub attested_header: LightClientHeader,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

// ---------------------------------------------------------------------------------------------
// Beacon chain: new containers
// ---------------------------------------------------------------------------------------------

/// `Builder`: an entry of the state's builder registry.
///
/// [spec]: gloas/beacon-chain.md#builder
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Builder {
    /// The builder's BLS public key.
    pub pubkey: BLSPubkey,
    /// The builder's version (`PAYLOAD_BUILDER_VERSION` for every builder Gloas accepts).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u8"))]
    pub version: u8,
    /// The execution address the builder's withdrawals go to.
    pub execution_address: ExecutionAddress,
    /// The builder's balance.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub balance: Gwei,
    /// The epoch of the builder's deposit; the builder is active once it is finalized.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub deposit_epoch: Epoch,
    /// The epoch from which the builder's balance can be withdrawn (`FAR_FUTURE_EPOCH` until
    /// it exits).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub withdrawable_epoch: Epoch,
}

/// `BuilderPendingWithdrawal`: a payment owed by a builder, waiting to be withdrawn.
///
/// [spec]: gloas/beacon-chain.md#builderpendingwithdrawal
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BuilderPendingWithdrawal {
    /// The execution address paid (the proposer's fee recipient).
    pub fee_recipient: ExecutionAddress,
    /// The amount paid.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
    /// The builder paying.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub builder_index: BuilderIndex,
}

/// `BuilderPendingPayment`: a bid's payment, waiting for enough attesting weight on its block.
///
/// [spec]: gloas/beacon-chain.md#builderpendingpayment
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BuilderPendingPayment {
    /// Effective balance of the same-slot attesters that voted for the block so far.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub weight: Gwei,
    /// The withdrawal made once `weight` reaches the quorum.
    pub withdrawal: BuilderPendingWithdrawal,
    /// The proposer of the block that carried the bid.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub proposer_index: ValidatorIndex,
}

/// `BuilderDepositRequest`: an execution-layer request creating or topping up a builder
/// (request type `0x03`).
///
/// [spec]: gloas/beacon-chain.md#builderdepositrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BuilderDepositRequest {
    /// The builder's BLS public key.
    pub pubkey: BLSPubkey,
    /// Withdrawal credentials (`BUILDER_WITHDRAWAL_PREFIX`, then the execution address).
    pub withdrawal_credentials: Bytes32,
    /// The amount deposited.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
    /// Proof of possession (`DOMAIN_BUILDER_DEPOSIT`), checked for a new builder.
    pub signature: BLSSignature,
}

/// `BuilderExitRequest`: an execution-layer request to exit a builder (request type `0x04`).
///
/// [spec]: gloas/beacon-chain.md#builderexitrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BuilderExitRequest {
    /// The execution address that sent the request; must be the builder's.
    pub source_address: ExecutionAddress,
    /// Public key of the builder to exit.
    pub pubkey: BLSPubkey,
}

/// `PayloadAttestationData`: what a payload timeliness committee member votes on.
///
/// [spec]: gloas/beacon-chain.md#payloadattestationdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PayloadAttestationData {
    /// Root of the block whose payload is voted on.
    pub beacon_block_root: Root,
    /// The block's slot.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// Whether the block's payload envelope arrived in time.
    pub payload_present: bool,
    /// Whether the block's blob data was available in time.
    pub blob_data_available: bool,
}

progressive_container! {
    active_fields: [1; 3],
    /// `PayloadAttestation`: the aggregated votes of a payload timeliness committee.
    ///
    /// [spec]: gloas/beacon-chain.md#payloadattestation
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct PayloadAttestation<E: EthSpec> {
        /// Which committee members signed, in committee order.
        pub aggregation_bits: BitVector<E::PtcSize>,
        /// What the members voted.
        pub data: PayloadAttestationData,
        /// Aggregate BLS signature of the signers over `data`.
        pub signature: BLSSignature,
    }
}

/// `PayloadAttestationMessage`: one payload timeliness committee member's vote (gossip).
///
/// [spec]: gloas/beacon-chain.md#payloadattestationmessage
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PayloadAttestationMessage {
    /// The voting committee member.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub validator_index: ValidatorIndex,
    /// The vote.
    pub data: PayloadAttestationData,
    /// The member's signature over `data`.
    pub signature: BLSSignature,
}

progressive_container! {
    active_fields: [1; 3],
    /// `IndexedPayloadAttestation`: a payload attestation with its signers as sorted indices.
    ///
    /// [spec]: gloas/beacon-chain.md#indexedpayloadattestation
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct IndexedPayloadAttestation<E: EthSpec> {
        /// Validator indices of the signers, sorted ascending.
        #[cfg_attr(
            feature = "serde",
            serde(with = "ssz_types::serde_utils::quoted_u64_var_list")
        )]
        pub attesting_indices: VariableList<ValidatorIndex, E::PtcSize>,
        /// What the signers voted.
        pub data: PayloadAttestationData,
        /// Aggregate BLS signature of the signers over `data`.
        pub signature: BLSSignature,
    }
}

progressive_container! {
    active_fields: [1; 12],
    /// `ExecutionPayloadBid`: a builder's commitment to the payload of a block (or the
    /// proposer's own, with `builder_index == BUILDER_INDEX_SELF_BUILD`).
    ///
    /// [spec]: gloas/beacon-chain.md#executionpayloadbid
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct ExecutionPayloadBid {
        /// Hash of the execution block the payload builds on.
        pub parent_block_hash: Hash32,
        /// Root of the beacon block the bid's block builds on.
        pub parent_block_root: Root,
        /// Hash of the promised execution block.
        pub block_hash: Hash32,
        /// The RANDAO mix the payload must use.
        pub prev_randao: Bytes32,
        /// The address the payload pays its fees to.
        pub fee_recipient: ExecutionAddress,
        /// The payload's gas limit.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub gas_limit: u64,
        /// The builder making the bid.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub builder_index: BuilderIndex,
        /// The slot of the block the bid is for.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub slot: Slot,
        /// What the builder pays the proposer on the beacon chain.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub value: Gwei,
        /// What the builder pays the proposer on the execution layer.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub execution_payment: Gwei,
        /// The KZG commitments of the payload's blobs.
        pub blob_kzg_commitments: ProgressiveList<KZGCommitment>,
        /// Root of the `ExecutionRequests` the payload will carry.
        pub execution_requests_root: Root,
    }
}

/// `SignedExecutionPayloadBid`: a bid signed by its builder (`DOMAIN_BEACON_BUILDER`).
///
/// [spec]: gloas/beacon-chain.md#signedexecutionpayloadbid
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SignedExecutionPayloadBid {
    /// The bid.
    pub message: ExecutionPayloadBid,
    /// The builder's signature over `message`.
    pub signature: BLSSignature,
}

progressive_container! {
    active_fields: [1; 5],
    /// `ExecutionPayloadEnvelope`: the payload of a block, delivered after it by the builder.
    ///
    /// [spec]: gloas/beacon-chain.md#executionpayloadenvelope
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct ExecutionPayloadEnvelope<E: EthSpec> {
        /// The execution payload.
        pub payload: ExecutionPayload<E>,
        /// The requests the payload emitted.
        pub execution_requests: ExecutionRequests,
        /// The builder delivering the payload.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub builder_index: BuilderIndex,
        /// Root of the beacon block whose bid the payload fulfils.
        pub beacon_block_root: Root,
        /// Root of that block's parent (EIP-4788).
        pub parent_beacon_block_root: Root,
    }
}

/// `SignedExecutionPayloadEnvelope`: an envelope signed by its builder (or by the proposer when
/// it built the payload itself).
///
/// [spec]: gloas/beacon-chain.md#signedexecutionpayloadenvelope
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SignedExecutionPayloadEnvelope<E: EthSpec> {
    /// The envelope.
    pub message: ExecutionPayloadEnvelope<E>,
    /// The builder's signature over `message`.
    pub signature: BLSSignature,
}

// ---------------------------------------------------------------------------------------------
// Beacon chain: modified containers
// ---------------------------------------------------------------------------------------------

progressive_container! {
    active_fields: [1; 4],
    /// `Attestation`: an aggregate vote over the committees named by `committee_bits`.
    ///
    /// [spec]: gloas/beacon-chain.md#attestation
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct Attestation<E: EthSpec> {
        /// Which validators signed, over the committees named by `committee_bits`.
        /// [Modified in Gloas:EIP7688]
        pub aggregation_bits: AggregationBits,
        /// What the attesters vote for; `data.index` now signals the payload (0 or 1).
        pub data: AttestationData,
        /// Aggregate BLS signature of the signers over `data`.
        pub signature: BLSSignature,
        /// Which of the slot's committees the attestation covers.
        pub committee_bits: BitVector<E::MaxCommitteesPerSlot>,
    }
}

progressive_container! {
    active_fields: [1; 3],
    /// `IndexedAttestation`: an attestation with its signers as sorted validator indices.
    ///
    /// [spec]: gloas/beacon-chain.md#indexedattestation
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct IndexedAttestation {
        /// Validator indices of the signers, sorted ascending.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "serde",
            serde(with = "progressive_ssz::serde_utils::quoted_u64_list")
        )]
        pub attesting_indices: AttestingIndices,
        /// What the attesters vote for.
        pub data: AttestationData,
        /// Aggregate BLS signature of the attesters over `data`.
        pub signature: BLSSignature,
    }
}

/// `AttesterSlashing`: two conflicting indexed attestations that slash their common signers.
///
/// [spec]: electra/beacon-chain.md#attesterslashing (with Gloas's `IndexedAttestation`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AttesterSlashing {
    /// The first of two conflicting attestations.
    pub attestation_1: IndexedAttestation,
    /// The second, a double or surround vote with respect to the first.
    pub attestation_2: IndexedAttestation,
}

/// `AggregateAndProof`: an aggregator's aggregate attestation with its selection proof.
///
/// [spec]: electra/validator.md#aggregateandproof (with Gloas's `Attestation`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct AggregateAndProof<E: EthSpec> {
    /// The aggregator's validator index.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub aggregator_index: ValidatorIndex,
    /// The aggregate attestation.
    pub aggregate: Attestation<E>,
    /// The aggregator's signature over the slot, proving it was selected to aggregate.
    pub selection_proof: BLSSignature,
}

/// `SignedAggregateAndProof`: a signed `AggregateAndProof`.
///
/// [spec]: electra/validator.md#signedaggregateandproof (with Gloas's `Attestation`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SignedAggregateAndProof<E: EthSpec> {
    /// The aggregate and its selection proof.
    pub message: AggregateAndProof<E>,
    /// The aggregator's signature over `message`.
    pub signature: BLSSignature,
}

progressive_container! {
    active_fields: [1; 19],
    /// `ExecutionPayload`: the execution-layer block, delivered in an `ExecutionPayloadEnvelope`.
    ///
    /// [spec]: gloas/beacon-chain.md#executionpayload
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct ExecutionPayload<E: EthSpec> {
        /// Hash of the parent execution block.
        pub parent_hash: Hash32,
        /// Address that receives the transactions' priority fees.
        pub fee_recipient: ExecutionAddress,
        /// Execution state root after the block.
        pub state_root: Bytes32,
        /// Root of the block's transaction receipts trie.
        pub receipts_root: Bytes32,
        /// Bloom filter over the logs the block's transactions emitted.
        #[cfg_attr(
            feature = "serde",
            serde(with = "ssz_types::serde_utils::hex_fixed_vec")
        )]
        pub logs_bloom: FixedVector<u8, E::BytesPerLogsBloom>,
        /// The beacon chain's RANDAO mix, exposed to the EVM as `PREVRANDAO`.
        pub prev_randao: Bytes32,
        /// The execution block number.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub block_number: u64,
        /// The block's gas limit.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub gas_limit: u64,
        /// Gas used by the block's transactions.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub gas_used: u64,
        /// Block time in Unix seconds; must equal the start of the beacon slot.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub timestamp: u64,
        /// Arbitrary bytes chosen by the block builder.
        #[cfg_attr(
            feature = "serde",
            serde(with = "ssz_types::serde_utils::hex_var_list")
        )]
        pub extra_data: VariableList<u8, E::MaxExtraDataBytes>,
        /// The EIP-1559 base fee per gas, in wei.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u256"))]
        pub base_fee_per_gas: U256,
        /// Hash of this execution block.
        pub block_hash: Hash32,
        /// The block's transactions, opaque to the consensus layer.
        /// [Modified in Gloas:EIP7688]
        pub transactions: ProgressiveList<Transaction>,
        /// Withdrawals the block pays out.
        /// [Modified in Gloas:EIP7688]
        pub withdrawals: ProgressiveList<Withdrawal>,
        /// Blob gas consumed by the block's blob transactions.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub blob_gas_used: u64,
        /// Running excess of blob gas over the target, which sets the blob base fee.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub excess_blob_gas: u64,
        /// The block's access list (RLP).
        /// [New in Gloas:EIP7928]
        pub block_access_list: BlockAccessList,
        /// The beacon slot of the payload.
        /// [New in Gloas:EIP7843]
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub slot_number: u64,
    }
}

progressive_container! {
    active_fields: [1; 5],
    /// `ExecutionRequests`: the requests an execution payload emits.
    ///
    /// [spec]: gloas/beacon-chain.md#executionrequests
    #[derive(Debug, Clone, PartialEq, Default)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct ExecutionRequests {
        /// Deposit requests (EIP-6110).
        pub deposits: DepositRequests,
        /// Withdrawal and exit requests (EIP-7002).
        pub withdrawals: WithdrawalRequests,
        /// Consolidation requests (EIP-7251).
        pub consolidations: ConsolidationRequests,
        /// Builder deposit requests.
        /// [New in Gloas:EIP8282]
        pub builder_deposits: BuilderDepositRequests,
        /// Builder exit requests.
        /// [New in Gloas:EIP8282]
        pub builder_exits: BuilderExitRequests,
    }
}

progressive_container! {
    active_fields: [1; 4],
    /// `NewPayloadRequest`: what the consensus layer hands the execution engine for an envelope.
    ///
    /// In 1.7.0b4 a progressive container whose `versioned_hashes` stays a bounded
    /// `List[VersionedHash, MAX_BLOB_COMMITMENTS_PER_BLOCK]` (the `ssz_static` roots say so;
    /// 1.7.0a13 still had it as a plain dataclass).
    ///
    /// [spec]: gloas/beacon-chain.md#newpayloadrequest
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct NewPayloadRequest<E: EthSpec> {
        /// The payload for the engine to execute.
        pub execution_payload: ExecutionPayload<E>,
        /// Versioned hashes of the bid's blob commitments.
        pub versioned_hashes: VariableList<VersionedHash, E::MaxBlobCommitmentsPerBlock>,
        /// Root of the parent beacon block (EIP-4788).
        pub parent_beacon_block_root: Root,
        /// The payload's execution requests.
        pub execution_requests: ExecutionRequests,
    }
}

progressive_container! {
    active_fields: [1; 13],
    /// `BeaconBlockBody`: the operations and votes a block carries, and the bid for its payload.
    ///
    /// [spec]: gloas/beacon-chain.md#beaconblockbody
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct BeaconBlockBody<E: EthSpec> {
        /// The proposer's signature over the epoch, mixed into the RANDAO mix.
        pub randao_reveal: BLSSignature,
        /// The proposer's eth1 data vote.
        pub eth1_data: Eth1Data,
        /// Arbitrary bytes chosen by the proposer.
        pub graffiti: Bytes32,
        /// Proposer slashings to process.
        /// [Modified in Gloas:EIP7688]
        pub proposer_slashings: ProgressiveList<ProposerSlashing>,
        /// Attester slashings to process.
        /// [Modified in Gloas:EIP7688]
        pub attester_slashings: ProgressiveList<AttesterSlashing>,
        /// Aggregate attestations to include.
        /// [Modified in Gloas:EIP7688]
        pub attestations: ProgressiveList<Attestation<E>>,
        /// Deposit contract deposits (none may be included since Gloas).
        /// [Modified in Gloas:EIP7688]
        pub deposits: ProgressiveList<Deposit>,
        /// Voluntary exits to process.
        /// [Modified in Gloas:EIP7688]
        pub voluntary_exits: ProgressiveList<SignedVoluntaryExit>,
        /// The sync committee's signature over the parent block root.
        pub sync_aggregate: SyncAggregate<E>,
        /// BLS-to-execution credential changes to process.
        /// [Modified in Gloas:EIP7688]
        pub bls_to_execution_changes: ProgressiveList<SignedBLSToExecutionChange>,
        /// The bid whose payload the block commits to.
        /// [New in Gloas:EIP7732]
        pub signed_execution_payload_bid: SignedExecutionPayloadBid,
        /// Payload timeliness votes on the parent block.
        /// [New in Gloas:EIP7732]
        pub payload_attestations: ProgressiveList<PayloadAttestation<E>>,
        /// The parent payload's execution requests, applied by this block.
        /// [New in Gloas:EIP7732]
        pub parent_execution_requests: ExecutionRequests,
    }
}

/// `BeaconBlock`: a block of the beacon chain.
///
/// [spec]: phase0/beacon-chain.md#beaconblock (with Gloas's `BeaconBlockBody`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct BeaconBlock<E: EthSpec> {
    /// The slot the block was proposed for.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// The proposer's validator index.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub proposer_index: ValidatorIndex,
    /// Root of the parent block.
    pub parent_root: Root,
    /// Root of the state after the block.
    pub state_root: Root,
    /// The block's operations, votes and bid.
    pub body: BeaconBlockBody<E>,
}

/// `SignedBeaconBlock`: a signed `BeaconBlock`.
///
/// [spec]: phase0/beacon-chain.md#signedbeaconblock (with Gloas's `BeaconBlockBody`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SignedBeaconBlock<E: EthSpec> {
    /// The block being signed.
    pub message: BeaconBlock<E>,
    /// The proposer's signature over `message`.
    pub signature: BLSSignature,
}

progressive_container! {
    active_fields: [1; 46],
    /// `BeaconState`: the whole consensus state at a slot.
    ///
    /// Its progressive lists are persistent trees (`progressive_tree`): container elements in
    /// [`ProgressiveTreeList`]s, basic values packed in [`ProgressivePackedList`]s. A clone
    /// shares them, a write copies one page (and, for containers, the branches above it), and
    /// a root re-hashes only what was written since the last one (large dirty parts in
    /// parallel), as milhouse's and `packed_list`'s trees do for the Fulu state. The vectors
    /// are milhouse trees, `builder_pending_payments` and `ptc_window` included, so that an
    /// unchanged field costs nothing in a state root. `ssz_write` writes the state in pieces
    /// and `memory::gloas_differential_sizes` measures states that share nodes.
    ///
    /// [spec]: gloas/beacon-chain.md#beaconstate
    #[derive(Debug, Clone, PartialEq)]
    #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
    #[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
    pub struct BeaconState<E: EthSpec> {
        /// Unix time of genesis, in seconds.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub genesis_time: u64,
        /// Root of the genesis validator registry; mixed into domains so signatures are
        /// chain-specific.
        pub genesis_validators_root: Root,
        /// The slot this state is at.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub slot: Slot,
        /// The current and previous fork versions and the epoch of the last fork.
        pub fork: Fork,
        /// Header of the latest block; its `state_root` is zero until the next slot fills it in.
        pub latest_block_header: BeaconBlockHeader,
        /// Ring buffer of the block roots of the last `SLOTS_PER_HISTORICAL_ROOT` slots.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::vector"))]
        pub block_roots: milhouse::Vector<Root, E::SlotsPerHistoricalRoot>,
        /// Ring buffer of the state roots of the last `SLOTS_PER_HISTORICAL_ROOT` slots.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::vector"))]
        pub state_roots: milhouse::Vector<Root, E::SlotsPerHistoricalRoot>,
        /// `HistoricalBatch` roots of the periods before Capella; `historical_summaries` follows.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
        pub historical_roots: milhouse::List<Root, E::HistoricalRootsLimit>,
        /// The deposit contract state the chain last agreed on by eth1 data vote.
        pub eth1_data: Eth1Data,
        /// Proposers' eth1 data votes in the current voting period.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
        pub eth1_data_votes: milhouse::List<Eth1Data, E::SlotsPerEth1VotingPeriod>,
        /// Index of the next deposit contract deposit to process.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub eth1_deposit_index: u64,
        /// Every validator ever deposited, by registry index; entries are never removed.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub validators: ProgressiveTreeList<Validator>,
        /// Each validator's actual balance, by registry index.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_packed_list)
        )]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u64_progressive_packed_list")
        )]
        pub balances: ProgressivePackedList<Gwei>,
        /// Ring buffer of the RANDAO mixes of the last `EPOCHS_PER_HISTORICAL_VECTOR` epochs.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::vector"))]
        pub randao_mixes: milhouse::Vector<Bytes32, E::EpochsPerHistoricalVector>,
        /// Total effective balance slashed in each of the last `EPOCHS_PER_SLASHINGS_VECTOR`
        /// epochs.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u64_vector")
        )]
        pub slashings: milhouse::Vector<Gwei, E::EpochsPerSlashingsVector>,
        /// Each validator's participation flags for the previous epoch.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_packed_list)
        )]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u8_progressive_packed_list")
        )]
        pub previous_epoch_participation: ProgressivePackedList<ParticipationFlags>,
        /// Each validator's participation flags for the current epoch.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_packed_list)
        )]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u8_progressive_packed_list")
        )]
        pub current_epoch_participation: ProgressivePackedList<ParticipationFlags>,
        /// Which of the last four epochs are justified, bit 0 the most recent.
        pub justification_bits: BitVector<typenum::U4>,
        /// The justified checkpoint before the latest justification update.
        pub previous_justified_checkpoint: Checkpoint,
        /// The latest justified checkpoint.
        pub current_justified_checkpoint: Checkpoint,
        /// The latest finalized checkpoint.
        pub finalized_checkpoint: Checkpoint,
        /// Each validator's inactivity score: raised by missed target votes, it scales leak
        /// penalties.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_packed_list)
        )]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u64_progressive_packed_list")
        )]
        pub inactivity_scores: ProgressivePackedList<u64>,
        /// The sync committee of the current sync committee period.
        pub current_sync_committee: SyncCommittee<E>,
        /// The sync committee of the next period, fixed one period ahead.
        pub next_sync_committee: SyncCommittee<E>,
        /// Hash of the latest execution block whose payload was applied (replaces
        /// `latest_execution_payload_header`).
        /// [New in Gloas:EIP7732]
        pub latest_block_hash: Hash32,
        /// The index the next withdrawal will be given.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub next_withdrawal_index: WithdrawalIndex,
        /// The validator at which the next withdrawal sweep starts.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub next_withdrawal_validator_index: ValidatorIndex,
        /// Block and state summary roots of each period completed since Capella.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
        pub historical_summaries: milhouse::List<HistoricalSummary, E::HistoricalRootsLimit>,
        /// Index of the first deposit request; `UNSET_DEPOSIT_REQUESTS_START_INDEX` until one
        /// arrives.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub deposit_requests_start_index: u64,
        /// Deposit churn left over from earlier epochs, still available to pending deposits.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub deposit_balance_to_consume: Gwei,
        /// Exit churn still available in `earliest_exit_epoch`.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub exit_balance_to_consume: Gwei,
        /// The earliest epoch an exit initiated now can be scheduled for.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub earliest_exit_epoch: Epoch,
        /// Consolidation churn still available in `earliest_consolidation_epoch`.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub consolidation_balance_to_consume: Gwei,
        /// The earliest epoch a consolidation initiated now can be scheduled for.
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub earliest_consolidation_epoch: Epoch,
        /// Deposits waiting for deposit churn, oldest first.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub pending_deposits: ProgressiveTreeList<PendingDeposit>,
        /// Execution-layer partial withdrawals waiting until they are withdrawable.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub pending_partial_withdrawals: ProgressiveTreeList<PendingPartialWithdrawal>,
        /// Consolidations waiting until their source validator is withdrawable.
        /// [Modified in Gloas:EIP7688]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub pending_consolidations: ProgressiveTreeList<PendingConsolidation>,
        /// Proposer of each slot of the current epoch and the next `MIN_SEED_LOOKAHEAD` epochs.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u64_vector")
        )]
        pub proposer_lookahead: milhouse::Vector<ValidatorIndex, E::ProposerLookaheadSlots>,
        /// The builder registry, by builder index; exited builders' slots are reused.
        /// [New in Gloas:EIP7732]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub builders: ProgressiveTreeList<Builder>,
        /// The builder at which the next builder withdrawal sweep starts.
        /// [New in Gloas:EIP7732]
        #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
        pub next_withdrawal_builder_index: BuilderIndex,
        /// One bit per slot of the last `SLOTS_PER_HISTORICAL_ROOT`: whether its payload was
        /// applied.
        /// [New in Gloas:EIP7732]
        pub execution_payload_availability: BitVector<E::SlotsPerHistoricalRoot>,
        /// Payments of the bids of the previous and current epoch, by slot, waiting for their
        /// quorum.
        /// [New in Gloas:EIP7732]
        ///
        /// A persistent tree with cached hashes (as the state's other vectors), so that a
        /// state root does not re-hash it whole.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::vector"))]
        pub builder_pending_payments:
            milhouse::Vector<BuilderPendingPayment, E::BuilderPendingPaymentsLength>,
        /// Builder payments that reached their quorum, waiting to be withdrawn.
        /// [New in Gloas:EIP7732]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub builder_pending_withdrawals: ProgressiveTreeList<BuilderPendingWithdrawal>,
        /// The bid of the latest block.
        /// [New in Gloas:EIP7732]
        pub latest_execution_payload_bid: ExecutionPayloadBid,
        /// The withdrawals the next payload must carry, fixed when the block was processed.
        /// [New in Gloas:EIP7732]
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::progressive_tree_list)
        )]
        #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::progressive_tree_list"))]
        pub payload_expected_withdrawals: ProgressiveTreeList<Withdrawal>,
        /// The payload timeliness committee of each slot of the previous, current and next
        /// `MIN_SEED_LOOKAHEAD` epochs.
        /// [New in Gloas:EIP7732]
        ///
        /// Persistent trees with cached hashes, outer and inner: hashed whole it is some 12,000
        /// hashes (2 ms) on every state root; cached, nothing until an epoch rotates it.
        #[cfg_attr(
            feature = "arbitrary",
            arbitrary(with = crate::arbitrary::milhouse_vector_of_vectors)
        )]
        #[cfg_attr(
            feature = "serde",
            serde(with = "crate::serde_state::quoted_u64_vector_of_vectors")
        )]
        pub ptc_window: milhouse::Vector<
            milhouse::Vector<ValidatorIndex, E::PtcSize>,
            E::PtcWindowSlots,
        >,
    }
}

// ---------------------------------------------------------------------------------------------
// P2P
// ---------------------------------------------------------------------------------------------

/// `DataColumnSidecar`: one column of the extended blob matrix, its cells and proofs; the
/// commitments are those of the block's bid.
///
/// [spec]: gloas/p2p-interface.md#modified-datacolumnsidecar
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct DataColumnSidecar<E: EthSpec> {
    /// The column's index.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub index: ColumnIndex,
    /// The column's cell of each blob of the block, in blob order.
    /// [Modified in Gloas:EIP7688]
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::hex_fixed_vec_progressive_list")
    )]
    pub column: ProgressiveList<Cell<E>>,
    /// The KZG proof of each cell in `column`.
    /// [Modified in Gloas:EIP7688]
    pub kzg_proofs: ProgressiveList<KZGProof>,
    /// The slot of the block the column belongs to.
    /// [New in Gloas:EIP7732]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// Root of the block the column belongs to.
    /// [New in Gloas:EIP7732]
    pub beacon_block_root: Root,
}

/// `ProposerPreferences`: the fee recipient and gas limit target a proposer wants bids for.
///
/// [spec]: gloas/p2p-interface.md#new-proposerpreferences
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ProposerPreferences {
    /// The dependent root of the proposer shuffling that assigned `proposal_slot`.
    pub dependent_root: Root,
    /// The slot the proposer will propose in.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub proposal_slot: Slot,
    /// The proposer.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub validator_index: ValidatorIndex,
    /// The address the payload must pay its fees to.
    pub fee_recipient: ExecutionAddress,
    /// The gas limit the proposer wants the payload to move towards.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub target_gas_limit: u64,
}

/// `SignedProposerPreferences`: proposer preferences signed by the proposer
/// (`DOMAIN_PROPOSER_PREFERENCES`).
///
/// [spec]: gloas/p2p-interface.md#new-signedproposerpreferences
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SignedProposerPreferences {
    /// The preferences.
    pub message: ProposerPreferences,
    /// The proposer's signature over `message`.
    pub signature: BLSSignature,
}

/// `PartialDataColumnSidecar`: some cells of one data column (the header is gone: the
/// commitments come from the block's bid).
///
/// [spec]: gloas/partial-columns/p2p-interface.md#modified-partialdatacolumnsidecar
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct PartialDataColumnSidecar<E: EthSpec> {
    /// One bit per blob of the block: which cells of the column this message carries.
    pub cells_present_bitmap: ProgressiveBitList,
    /// The cells present, in blob order.
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::hex_fixed_vec_progressive_list")
    )]
    pub partial_column: ProgressiveList<Cell<E>>,
    /// The KZG proof of each cell present, in the same order.
    pub kzg_proofs: ProgressiveList<KZGProof>,
}

/// `PartialDataColumnGroupID`: the group a partial data column message belongs to.
///
/// [spec]: gloas/partial-columns/p2p-interface.md#modified-partialdatacolumngroupid
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PartialDataColumnGroupID {
    /// Root of the block the column belongs to.
    pub beacon_block_root: Root,
    /// The block's slot.
    /// [New in Gloas:EIP7732]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
}

/// `PartialDataColumnPartsMetadata`: which cells of a column a peer has and which it requests.
///
/// Both bitlists are progressive in 1.7.0b4 (the `ssz_static` roots say so); the 1.7.0a13 text
/// left Fulu's `BitList[MAX_BLOB_COMMITMENTS_PER_BLOCK]` in place.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumnpartsmetadata (with
/// Gloas's progressive bitlists)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PartialDataColumnPartsMetadata {
    /// One bit per blob of the block: set where the peer holds that cell of the column.
    pub available: ProgressiveBitList,
    /// One bit per blob of the block: set where the peer wants that cell of the column.
    pub requests: ProgressiveBitList,
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;
    use crate::MinimalEthSpec;

    #[test]
    fn builder_json_quotes_integers_and_hexes_bytes() {
        let builder = Builder {
            pubkey: BLSPubkey::repeat_byte(0xaa),
            version: 0,
            execution_address: ExecutionAddress::repeat_byte(0x11),
            balance: 32_000_000_000,
            deposit_epoch: 5,
            withdrawable_epoch: u64::MAX,
        };
        let json = serde_json::to_value(&builder).expect("serializable");
        assert_eq!(
            json,
            serde_json::json!({
                "pubkey": format!("0x{}", "aa".repeat(48)),
                "version": "0",
                "execution_address": format!("0x{}", "11".repeat(20)),
                "balance": "32000000000",
                "deposit_epoch": "5",
                "withdrawable_epoch": "18446744073709551615",
            })
        );
        assert_eq!(
            serde_json::from_value::<Builder>(json).expect("own JSON"),
            builder
        );
    }

    #[test]
    fn progressive_fields_json_round_trips() {
        let attestation = IndexedAttestation {
            attesting_indices: ProgressiveList::new(vec![1, 5, 9]),
            data: AttestationData {
                slot: 3,
                index: 1,
                beacon_block_root: Root::repeat_byte(1),
                source: Checkpoint {
                    epoch: 0,
                    root: Root::ZERO,
                },
                target: Checkpoint {
                    epoch: 1,
                    root: Root::repeat_byte(2),
                },
            },
            signature: BLSSignature::repeat_byte(3),
        };
        let json = serde_json::to_value(&attestation).expect("serializable");
        assert_eq!(
            json["attesting_indices"],
            serde_json::json!(["1", "5", "9"])
        );
        assert_eq!(
            serde_json::from_value::<IndexedAttestation>(json).expect("own JSON"),
            attestation
        );

        let sidecar = DataColumnSidecar::<MinimalEthSpec> {
            index: 7,
            column: ProgressiveList::new(vec![
                Cell::<MinimalEthSpec>::new(vec![0xcd; 2048]).expect("a cell is 2048 bytes"),
            ]),
            kzg_proofs: ProgressiveList::new(vec![KZGProof::repeat_byte(0xef)]),
            slot: 9,
            beacon_block_root: Root::repeat_byte(4),
        };
        let json = serde_json::to_value(&sidecar).expect("serializable");
        assert_eq!(
            json["column"],
            serde_json::json!([format!("0x{}", "cd".repeat(2048))])
        );
        assert_eq!(json["slot"], serde_json::json!("9"));
        assert_eq!(
            serde_json::from_value::<DataColumnSidecar<MinimalEthSpec>>(json).expect("own JSON"),
            sidecar
        );
    }
}

/// Calls `$with! { ... }` with every Gloas container the spec's `ssz_static` tests cover, by its
/// name in this module (a preset-generic one followed by `<E>`), in the order of the vectors'
/// directories: the one list the Gloas SSZ tests (this crate's, `testing/lodestar_roots`) share.
#[macro_export]
macro_rules! for_each_gloas_ssz_static_type {
    ($with:ident) => {
        $with! {
            AggregateAndProof<E>,
            Attestation<E>,
            AttestationData,
            AttesterSlashing,
            BLSToExecutionChange,
            BeaconBlock<E>,
            BeaconBlockBody<E>,
            BeaconBlockHeader,
            BeaconState<E>,
            Builder,
            BuilderDepositRequest,
            BuilderExitRequest,
            BuilderPendingPayment,
            BuilderPendingWithdrawal,
            Checkpoint,
            ConsolidationRequest,
            ContributionAndProof<E>,
            DataColumnSidecar<E>,
            DataColumnsByRootIdentifier<E>,
            Deposit,
            DepositData,
            DepositMessage,
            DepositRequest,
            Eth1Block,
            Eth1Data,
            ExecutionPayload<E>,
            ExecutionPayloadBid,
            ExecutionPayloadEnvelope<E>,
            ExecutionRequests,
            Fork,
            ForkData,
            HistoricalSummary,
            IndexedAttestation,
            IndexedPayloadAttestation<E>,
            LightClientBootstrap<E>,
            LightClientFinalityUpdate<E>,
            LightClientHeader,
            LightClientOptimisticUpdate<E>,
            LightClientUpdate<E>,
            MatrixEntry<E>,
            NewPayloadRequest<E>,
            PartialDataColumnGroupID,
            PartialDataColumnPartsMetadata,
            PartialDataColumnSidecar<E>,
            PayloadAttestation<E>,
            PayloadAttestationData,
            PayloadAttestationMessage,
            PendingConsolidation,
            PendingDeposit,
            PendingPartialWithdrawal,
            PowBlock,
            ProposerPreferences,
            ProposerSlashing,
            SignedAggregateAndProof<E>,
            SignedBLSToExecutionChange,
            SignedBeaconBlock<E>,
            SignedBeaconBlockHeader,
            SignedContributionAndProof<E>,
            SignedExecutionPayloadBid,
            SignedExecutionPayloadEnvelope<E>,
            SignedProposerPreferences,
            SignedVoluntaryExit,
            SigningData,
            SingleAttestation,
            SyncAggregate<E>,
            SyncAggregatorSelectionData,
            SyncCommittee<E>,
            SyncCommitteeContribution<E>,
            SyncCommitteeMessage,
            Validator,
            VoluntaryExit,
            Withdrawal,
            WithdrawalRequest,
        }
    };
}
