//! Capella containers: withdrawals and BLS-to-execution changes.
//!
//! [spec]: capella/beacon-chain.md#containers

use packed_list::PackedList;
use ssz_derive::{Decode, Encode};
#[allow(unused_imports)]
use ssz_types::{BitList, BitVector, FixedVector, VariableList, typenum};
use tree_hash_derive::TreeHash;

#[allow(unused_imports)]
use crate::{EthSpec, primitives::*};

pub use crate::altair::{CurrentSyncCommitteeBranch, FinalityBranch, NextSyncCommitteeBranch};

/// `ExecutionBranch`: `Vector[Bytes32, floorlog2(EXECUTION_PAYLOAD_GINDEX)]`.
pub type ExecutionBranch = FixedVector<Bytes32, typenum::U4>;
pub use crate::altair::{
    ContributionAndProof, SignedContributionAndProof, SyncAggregate, SyncAggregatorSelectionData,
    SyncCommittee, SyncCommitteeContribution, SyncCommitteeMessage,
};
pub use crate::bellatrix::PowBlock;
pub use crate::phase0::{
    AggregateAndProof, Attestation, AttestationData, AttesterSlashing, BeaconBlockHeader,
    Checkpoint, Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data, Fork, ForkData,
    IndexedAttestation, ProposerSlashing, SignedAggregateAndProof, SignedBeaconBlockHeader,
    SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
};

/// `HistoricalSummary`: the roots of one historical period's block and state roots (replaces HistoricalBatch roots).
///
/// [spec]: capella/beacon-chain.md#historicalsummary
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct HistoricalSummary {
    pub block_summary_root: Root,
    pub state_summary_root: Root,
}

/// `ExecutionPayloadHeader`: an execution payload with its lists replaced by their roots.
///
/// [spec]: capella/beacon-chain.md#executionpayloadheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct ExecutionPayloadHeader<E: EthSpec> {
    pub parent_hash: Hash32,
    pub fee_recipient: ExecutionAddress,
    pub state_root: Bytes32,
    pub receipts_root: Bytes32,
    pub logs_bloom: FixedVector<u8, E::BytesPerLogsBloom>,
    pub prev_randao: Bytes32,
    pub block_number: u64,
    pub gas_limit: u64,
    pub gas_used: u64,
    pub timestamp: u64,
    pub extra_data: VariableList<u8, E::MaxExtraDataBytes>,
    pub base_fee_per_gas: U256,
    pub block_hash: Hash32,
    pub transactions_root: Root,
    /// [New in Capella]
    pub withdrawals_root: Root,
}

/// `BLSToExecutionChange`: a request to change a validator's BLS withdrawal credentials to an execution address.
///
/// [spec]: capella/beacon-chain.md#blstoexecutionchange
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct BLSToExecutionChange {
    pub validator_index: ValidatorIndex,
    pub from_bls_pubkey: BLSPubkey,
    pub to_execution_address: ExecutionAddress,
}

/// `SignedBLSToExecutionChange`: a signed `BLSToExecutionChange`.
///
/// [spec]: capella/beacon-chain.md#signedblstoexecutionchange
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SignedBLSToExecutionChange {
    pub message: BLSToExecutionChange,
    pub signature: BLSSignature,
}

/// `Withdrawal`: a withdrawal the execution payload pays out.
///
/// [spec]: capella/beacon-chain.md#withdrawal
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Withdrawal {
    pub index: WithdrawalIndex,
    pub validator_index: ValidatorIndex,
    pub address: ExecutionAddress,
    pub amount: Gwei,
}

/// `ExecutionPayload`: the execution-layer block a beacon block carries.
///
/// [spec]: capella/beacon-chain.md#executionpayload
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct ExecutionPayload<E: EthSpec> {
    pub parent_hash: Hash32,
    pub fee_recipient: ExecutionAddress,
    pub state_root: Bytes32,
    pub receipts_root: Bytes32,
    pub logs_bloom: FixedVector<u8, E::BytesPerLogsBloom>,
    pub prev_randao: Bytes32,
    pub block_number: u64,
    pub gas_limit: u64,
    pub gas_used: u64,
    pub timestamp: u64,
    pub extra_data: VariableList<u8, E::MaxExtraDataBytes>,
    pub base_fee_per_gas: U256,
    pub block_hash: Hash32,
    pub transactions: VariableList<Transaction<E>, E::MaxTransactionsPerPayload>,
    /// [New in Capella]
    pub withdrawals: VariableList<Withdrawal, E::MaxWithdrawalsPerPayload>,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: capella/beacon-chain.md#beaconblockbody
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct BeaconBlockBody<E: EthSpec> {
    pub randao_reveal: BLSSignature,
    pub eth1_data: Eth1Data,
    pub graffiti: Bytes32,
    pub proposer_slashings: VariableList<ProposerSlashing, E::MaxProposerSlashings>,
    pub attester_slashings: VariableList<AttesterSlashing<E>, E::MaxAttesterSlashings>,
    pub attestations: VariableList<Attestation<E>, E::MaxAttestations>,
    pub deposits: VariableList<Deposit, E::MaxDeposits>,
    pub voluntary_exits: VariableList<SignedVoluntaryExit, E::MaxVoluntaryExits>,
    pub sync_aggregate: SyncAggregate<E>,
    pub execution_payload: ExecutionPayload<E>,
    /// [New in Capella]
    pub bls_to_execution_changes:
        VariableList<SignedBLSToExecutionChange, E::MaxBlsToExecutionChanges>,
}

/// `BeaconBlock`: a block: slot, proposer, parent and post-state roots, and the body.
///
/// [spec]: phase0/beacon-chain.md#beaconblock (with this fork's `BeaconBlockBody`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct BeaconBlock<E: EthSpec> {
    pub slot: Slot,
    pub proposer_index: ValidatorIndex,
    pub parent_root: Root,
    pub state_root: Root,
    pub body: BeaconBlockBody<E>,
}

/// `SignedBeaconBlock`: a signed `BeaconBlock`.
///
/// [spec]: phase0/beacon-chain.md#signedbeaconblock (with this fork's `BeaconBlockBody`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SignedBeaconBlock<E: EthSpec> {
    pub message: BeaconBlock<E>,
    pub signature: BLSSignature,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: capella/beacon-chain.md#beaconstate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct BeaconState<E: EthSpec> {
    pub genesis_time: u64,
    pub genesis_validators_root: Root,
    pub slot: Slot,
    pub fork: Fork,
    pub latest_block_header: BeaconBlockHeader,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    pub block_roots: milhouse::Vector<Root, E::SlotsPerHistoricalRoot>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    pub state_roots: milhouse::Vector<Root, E::SlotsPerHistoricalRoot>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub historical_roots: milhouse::List<Root, E::HistoricalRootsLimit>,
    pub eth1_data: Eth1Data,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub eth1_data_votes: milhouse::List<Eth1Data, E::SlotsPerEth1VotingPeriod>,
    pub eth1_deposit_index: u64,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub validators: crate::phase0::ValidatorRegistry<E>,
    pub balances: PackedList<Gwei, E::ValidatorRegistryLimit>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    pub randao_mixes: milhouse::Vector<Bytes32, E::EpochsPerHistoricalVector>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    pub slashings: milhouse::Vector<Gwei, E::EpochsPerSlashingsVector>,
    pub previous_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    pub current_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    pub justification_bits: BitVector<typenum::U4>,
    pub previous_justified_checkpoint: Checkpoint,
    pub current_justified_checkpoint: Checkpoint,
    pub finalized_checkpoint: Checkpoint,
    pub inactivity_scores: PackedList<u64, E::ValidatorRegistryLimit>,
    pub current_sync_committee: SyncCommittee<E>,
    pub next_sync_committee: SyncCommittee<E>,
    /// [Modified in Capella]
    pub latest_execution_payload_header: ExecutionPayloadHeader<E>,
    /// [New in Capella]
    pub next_withdrawal_index: WithdrawalIndex,
    /// [New in Capella]
    pub next_withdrawal_validator_index: ValidatorIndex,
    /// [New in Capella]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub historical_summaries: milhouse::List<HistoricalSummary, E::HistoricalRootsLimit>,
}

/// `LightClientHeader`: the block header a light client tracks.
///
/// [spec]: capella/light-client/sync-protocol.md#modified-lightclientheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientHeader<E: EthSpec> {
    pub beacon: BeaconBlockHeader,
    /// [New in Capella]
    pub execution: ExecutionPayloadHeader<E>,
    /// [New in Capella]
    pub execution_branch: ExecutionBranch,
}

/// `LightClientOptimisticUpdate`: the latest attested header and the sync aggregate that signed it.
///
/// [spec]: capella/light-client/sync-protocol.md#modified-lightclientoptimisticupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientOptimisticUpdate<E: EthSpec> {
    /// [Modified in Capella]
    pub attested_header: LightClientHeader<E>,
    pub sync_aggregate: SyncAggregate<E>,
    pub signature_slot: Slot,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that signed it.
///
/// [spec]: capella/light-client/sync-protocol.md#modified-lightclientfinalityupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientFinalityUpdate<E: EthSpec> {
    /// [Modified in Capella]
    pub attested_header: LightClientHeader<E>,
    /// [Modified in Capella]
    pub finalized_header: LightClientHeader<E>,
    pub finality_branch: FinalityBranch,
    pub sync_aggregate: SyncAggregate<E>,
    pub signature_slot: Slot,
}

/// `LightClientUpdate`: an attested header with next sync committee and finality proofs.
///
/// [spec]: capella/light-client/sync-protocol.md#modified-lightclientupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientUpdate<E: EthSpec> {
    /// [Modified in Capella]
    pub attested_header: LightClientHeader<E>,
    pub next_sync_committee: SyncCommittee<E>,
    pub next_sync_committee_branch: NextSyncCommitteeBranch,
    /// [Modified in Capella]
    pub finalized_header: LightClientHeader<E>,
    pub finality_branch: FinalityBranch,
    pub sync_aggregate: SyncAggregate<E>,
    pub signature_slot: Slot,
}

/// `LightClientBootstrap`: a light client's trusted starting point: header and current sync committee.
///
/// [spec]: capella/light-client/sync-protocol.md#modified-lightclientbootstrap
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// [Modified in Capella]
    pub header: LightClientHeader<E>,
    pub current_sync_committee: SyncCommittee<E>,
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}
