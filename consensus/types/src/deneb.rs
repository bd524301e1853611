//! Deneb containers: blob KZG commitments and blob sidecars.
//!
//! [spec]: deneb/beacon-chain.md#containers

use packed_list::PackedList;
use ssz_derive::{Decode, Encode};
#[allow(unused_imports)]
use ssz_types::{BitList, BitVector, FixedVector, VariableList, typenum};
use tree_hash_derive::TreeHash;

#[allow(unused_imports)]
use crate::{EthSpec, primitives::*};

pub use crate::altair::{
    ContributionAndProof, SignedContributionAndProof, SyncAggregate, SyncAggregatorSelectionData,
    SyncCommittee, SyncCommitteeContribution, SyncCommitteeMessage,
};
pub use crate::bellatrix::PowBlock;
pub use crate::capella::{
    BLSToExecutionChange, HistoricalSummary, SignedBLSToExecutionChange, Withdrawal,
};
pub use crate::capella::{
    CurrentSyncCommitteeBranch, ExecutionBranch, FinalityBranch, NextSyncCommitteeBranch,
};
pub use crate::phase0::{
    AggregateAndProof, Attestation, AttestationData, AttesterSlashing, BeaconBlockHeader,
    Checkpoint, Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data, Fork, ForkData,
    IndexedAttestation, ProposerSlashing, SignedAggregateAndProof, SignedBeaconBlockHeader,
    SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
};

/// `ExecutionPayloadHeader`: an execution payload with its lists replaced by their roots.
///
/// [spec]: deneb/beacon-chain.md#executionpayloadheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct ExecutionPayloadHeader<E: EthSpec> {
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
    /// The beacon chain's RANDAO mix before this block, exposed to the EVM as `PREVRANDAO`.
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
    /// Hash tree root of the payload's `transactions`.
    pub transactions_root: Root,
    /// Hash tree root of the payload's `withdrawals`.
    pub withdrawals_root: Root,
    /// Blob gas consumed by the block's blob transactions.
    /// [New in Deneb:EIP4844]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub blob_gas_used: u64,
    /// Running excess of blob gas over the target, which sets the blob base fee.
    /// [New in Deneb:EIP4844]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub excess_blob_gas: u64,
}

/// `ExecutionPayload`: the execution-layer block a beacon block carries.
///
/// [spec]: deneb/beacon-chain.md#executionpayload
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
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
    /// The beacon chain's RANDAO mix before this block, exposed to the EVM as `PREVRANDAO`.
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
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::list_of_hex_var_list")
    )]
    pub transactions: VariableList<Transaction<E>, E::MaxTransactionsPerPayload>,
    /// Withdrawals the block pays out.
    pub withdrawals: VariableList<Withdrawal, E::MaxWithdrawalsPerPayload>,
    /// Blob gas consumed by the block's blob transactions.
    /// [New in Deneb:EIP4844]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub blob_gas_used: u64,
    /// Running excess of blob gas over the target, which sets the blob base fee.
    /// [New in Deneb:EIP4844]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub excess_blob_gas: u64,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: deneb/beacon-chain.md#beaconstate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct BeaconState<E: EthSpec> {
    /// Unix time of genesis, in seconds.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub genesis_time: u64,
    /// Root of the genesis validator registry; mixed into domains so signatures are chain-specific.
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
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub validators: crate::phase0::ValidatorRegistry<E>,
    /// Each validator's actual balance, by registry index.
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u64_packed_list")
    )]
    pub balances: PackedList<Gwei, E::ValidatorRegistryLimit>,
    /// Ring buffer of the RANDAO mixes of the last `EPOCHS_PER_HISTORICAL_VECTOR` epochs.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_state::vector"))]
    pub randao_mixes: milhouse::Vector<Bytes32, E::EpochsPerHistoricalVector>,
    /// Total effective balance slashed in each of the last `EPOCHS_PER_SLASHINGS_VECTOR` epochs.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u64_vector")
    )]
    pub slashings: milhouse::Vector<Gwei, E::EpochsPerSlashingsVector>,
    /// Each validator's participation flags for the previous epoch.
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u8_packed_list")
    )]
    pub previous_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    /// Each validator's participation flags for the current epoch.
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u8_packed_list")
    )]
    pub current_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    /// Which of the last four epochs are justified, bit 0 the most recent.
    pub justification_bits: BitVector<typenum::U4>,
    /// The justified checkpoint before the latest justification update.
    pub previous_justified_checkpoint: Checkpoint,
    /// The latest justified checkpoint.
    pub current_justified_checkpoint: Checkpoint,
    /// The latest finalized checkpoint.
    pub finalized_checkpoint: Checkpoint,
    /// Each validator's inactivity score: raised by missed target votes, it scales leak penalties.
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u64_packed_list")
    )]
    pub inactivity_scores: PackedList<u64, E::ValidatorRegistryLimit>,
    /// The sync committee of the current sync committee period.
    pub current_sync_committee: SyncCommittee<E>,
    /// The sync committee of the next period, fixed one period ahead.
    pub next_sync_committee: SyncCommittee<E>,
    /// Header of the latest execution payload applied.
    /// [Modified in Deneb:EIP4844]
    pub latest_execution_payload_header: ExecutionPayloadHeader<E>,
    /// The index the next withdrawal will be given.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub next_withdrawal_index: WithdrawalIndex,
    /// The validator at which the next withdrawal sweep starts.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub next_withdrawal_validator_index: ValidatorIndex,
    /// Block and state summary roots of each period completed since Capella.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub historical_summaries: milhouse::List<HistoricalSummary, E::HistoricalRootsLimit>,
}

/// `LightClientHeader`: the block header a light client tracks.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientheader (with this fork's `LightClientHeader`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientHeader<E: EthSpec> {
    /// The beacon block header.
    pub beacon: BeaconBlockHeader,
    /// Header of the block's execution payload.
    /// [New in Capella]
    pub execution: ExecutionPayloadHeader<E>,
    /// Merkle branch of `execution` against `beacon.body_root`.
    /// [New in Capella]
    pub execution_branch: ExecutionBranch,
}

/// `LightClientOptimisticUpdate`: the latest attested header and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientoptimisticupdate (with this fork's `LightClientHeader`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientOptimisticUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    /// [Modified in Capella]
    pub attested_header: LightClientHeader<E>,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientfinalityupdate (with this fork's `LightClientHeader`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientFinalityUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    /// [Modified in Capella]
    pub attested_header: LightClientHeader<E>,
    /// Finalized header corresponding to `attested_header.beacon.state_root`.
    /// [Modified in Capella]
    pub finalized_header: LightClientHeader<E>,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientUpdate`: an attested header with next sync committee and finality proofs.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientupdate (with this fork's `LightClientHeader`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    /// [Modified in Capella]
    pub attested_header: LightClientHeader<E>,
    /// Next sync committee corresponding to `attested_header.beacon.state_root`.
    pub next_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `next_sync_committee` against the attested state root.
    pub next_sync_committee_branch: NextSyncCommitteeBranch,
    /// Finalized header corresponding to `attested_header.beacon.state_root`.
    /// [Modified in Capella]
    pub finalized_header: LightClientHeader<E>,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientBootstrap`: a light client's trusted starting point: header and current sync committee.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientbootstrap (with this fork's `LightClientHeader`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// Header matching the requested beacon block root.
    /// [Modified in Capella]
    pub header: LightClientHeader<E>,
    /// Current sync committee corresponding to `header.beacon.state_root`.
    pub current_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `current_sync_committee` against the header's state root.
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}

/// `BlobIdentifier`: a blob sidecar named by block root and index (req/resp).
///
/// [spec]: deneb/p2p-interface.md#new-blobidentifier
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BlobIdentifier {
    /// Root of the block the blob belongs to.
    pub block_root: Root,
    /// The blob's index within that block.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub index: BlobIndex,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: deneb/beacon-chain.md#beaconblockbody
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
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
    pub proposer_slashings: VariableList<ProposerSlashing, E::MaxProposerSlashings>,
    /// Attester slashings to process.
    pub attester_slashings: VariableList<AttesterSlashing<E>, E::MaxAttesterSlashings>,
    /// Aggregate attestations to include.
    pub attestations: VariableList<Attestation<E>, E::MaxAttestations>,
    /// Deposit contract deposits, in contract order.
    pub deposits: VariableList<Deposit, E::MaxDeposits>,
    /// Voluntary exits to process.
    pub voluntary_exits: VariableList<SignedVoluntaryExit, E::MaxVoluntaryExits>,
    /// The sync committee's signature over the parent block root.
    pub sync_aggregate: SyncAggregate<E>,
    /// The execution-layer block.
    /// [Modified in Deneb:EIP4844]
    pub execution_payload: ExecutionPayload<E>,
    /// Changes of withdrawal credentials from BLS keys to execution addresses.
    pub bls_to_execution_changes:
        VariableList<SignedBLSToExecutionChange, E::MaxBlsToExecutionChanges>,
    /// KZG commitments to the block's blobs, in blob order.
    /// [New in Deneb:EIP4844]
    pub blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
}

/// `BeaconBlock`: a block: slot, proposer, parent and post-state roots, and the body.
///
/// [spec]: phase0/beacon-chain.md#beaconblock (with this fork's `BeaconBlockBody`)
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
    /// The block's operations, votes and payload.
    pub body: BeaconBlockBody<E>,
}

/// `SignedBeaconBlock`: a signed `BeaconBlock`.
///
/// [spec]: phase0/beacon-chain.md#signedbeaconblock (with this fork's `BeaconBlockBody`)
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

/// `BlobSidecar`: one blob with its KZG commitment, proof and inclusion proof against the block header.
///
/// [spec]: deneb/p2p-interface.md#new-blobsidecar
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct BlobSidecar<E: EthSpec> {
    /// The blob's index among the block's blob KZG commitments.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub index: BlobIndex,
    /// The blob.
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::hex_fixed_vec")
    )]
    pub blob: Blob<E>,
    /// The block's commitment to this blob.
    pub kzg_commitment: KZGCommitment,
    /// KZG proof that the blob matches `kzg_commitment`.
    pub kzg_proof: KZGProof,
    /// The signed header of the block the blob belongs to.
    pub signed_block_header: SignedBeaconBlockHeader,
    /// Merkle branch of `kzg_commitment` against the header's body root.
    pub kzg_commitment_inclusion_proof: FixedVector<Bytes32, E::KzgCommitmentInclusionProofDepth>,
}
