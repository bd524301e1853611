//! Fulu containers: PeerDAS data columns and the proposer lookahead.
//!
//! [spec]: fulu/beacon-chain.md#containers, fulu/das-core.md, fulu/p2p-interface.md

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
pub use crate::deneb::{
    ExecutionPayload, ExecutionPayloadHeader, LightClientHeader, LightClientOptimisticUpdate,
};
pub use crate::electra::{
    AggregateAndProof, Attestation, AttesterSlashing, BeaconBlock, BeaconBlockBody,
    ConsolidationRequest, DepositRequest, ExecutionRequests, IndexedAttestation,
    LightClientBootstrap, LightClientFinalityUpdate, LightClientUpdate, NewPayloadRequest,
    PendingConsolidation, PendingDeposit, PendingPartialWithdrawal, SignedAggregateAndProof,
    SignedBeaconBlock, SingleAttestation, WithdrawalRequest,
};
pub use crate::electra::{
    CurrentSyncCommitteeBranch, ExecutionBranch, FinalityBranch, NextSyncCommitteeBranch,
};
pub use crate::phase0::{
    AttestationData, BeaconBlockHeader, Checkpoint, Deposit, DepositData, DepositMessage,
    Eth1Block, Eth1Data, Fork, ForkData, ProposerSlashing, SignedBeaconBlockHeader,
    SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
};

/// `PartialDataColumnPartsMetadata`: which cells of a column a peer has and which it requests.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumnpartsmetadata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct PartialDataColumnPartsMetadata<E: EthSpec> {
    pub available: BitList<E::MaxBlobCommitmentsPerBlock>,
    pub requests: BitList<E::MaxBlobCommitmentsPerBlock>,
}

/// `PartialDataColumnGroupID`: the group a partial data column message belongs to (a block root).
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumngroupid
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PartialDataColumnGroupID {
    pub beacon_block_root: Root,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: fulu/beacon-chain.md#beaconstate
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
    pub latest_execution_payload_header: ExecutionPayloadHeader<E>,
    pub next_withdrawal_index: WithdrawalIndex,
    pub next_withdrawal_validator_index: ValidatorIndex,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub historical_summaries: milhouse::List<HistoricalSummary, E::HistoricalRootsLimit>,
    pub deposit_requests_start_index: u64,
    pub deposit_balance_to_consume: Gwei,
    pub exit_balance_to_consume: Gwei,
    pub earliest_exit_epoch: Epoch,
    pub consolidation_balance_to_consume: Gwei,
    pub earliest_consolidation_epoch: Epoch,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_deposits: milhouse::List<PendingDeposit, E::PendingDepositsLimit>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_partial_withdrawals:
        milhouse::List<PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_consolidations: milhouse::List<PendingConsolidation, E::PendingConsolidationsLimit>,
    /// [New in Fulu:EIP7917]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    pub proposer_lookahead: milhouse::Vector<ValidatorIndex, E::ProposerLookaheadSlots>,
}

/// `PartialDataColumnHeader`: the block-level part of a partial data column message.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumnheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct PartialDataColumnHeader<E: EthSpec> {
    pub kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    pub signed_block_header: SignedBeaconBlockHeader,
    pub kzg_commitments_inclusion_proof: FixedVector<Bytes32, E::KzgCommitmentsInclusionProofDepth>,
}

/// `PartialDataColumnSidecar`: some cells of one data column, with an optional header.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumnsidecar
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct PartialDataColumnSidecar<E: EthSpec> {
    pub cells_present_bitmap: BitList<E::MaxBlobCommitmentsPerBlock>,
    pub partial_column: VariableList<Cell<E>, E::MaxBlobCommitmentsPerBlock>,
    pub kzg_proofs: VariableList<KZGProof, E::MaxBlobCommitmentsPerBlock>,
    /// Optional header, only sent on eager pushes
    pub header: VariableList<PartialDataColumnHeader<E>, typenum::U1>,
}

/// `DataColumnsByRootIdentifier`: the columns requested for one block root (req/resp).
///
/// [spec]: fulu/p2p-interface.md#new-datacolumnsbyrootidentifier
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct DataColumnsByRootIdentifier<E: EthSpec> {
    pub block_root: Root,
    pub columns: VariableList<ColumnIndex, E::NumberOfColumns>,
}

/// `MatrixEntry`: one cell of the extended blob matrix with its proof and coordinates.
///
/// [spec]: fulu/das-core.md#matrixentry
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct MatrixEntry<E: EthSpec> {
    pub cell: Cell<E>,
    pub kzg_proof: KZGProof,
    pub column_index: ColumnIndex,
    pub row_index: RowIndex,
}

/// `DataColumnSidecar`: one column of the extended blob matrix: cells, commitments, proofs and inclusion proof.
///
/// [spec]: fulu/das-core.md#datacolumnsidecar
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct DataColumnSidecar<E: EthSpec> {
    pub index: ColumnIndex,
    pub column: VariableList<Cell<E>, E::MaxBlobCommitmentsPerBlock>,
    pub kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    pub kzg_proofs: VariableList<KZGProof, E::MaxBlobCommitmentsPerBlock>,
    pub signed_block_header: SignedBeaconBlockHeader,
    pub kzg_commitments_inclusion_proof: FixedVector<Bytes32, E::KzgCommitmentsInclusionProofDepth>,
}
