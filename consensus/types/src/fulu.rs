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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct PartialDataColumnPartsMetadata<E: EthSpec> {
    /// One bit per blob of the block: set where the peer holds that cell of the column.
    pub available: BitList<E::MaxBlobCommitmentsPerBlock>,
    /// One bit per blob of the block: set where the peer wants that cell of the column.
    pub requests: BitList<E::MaxBlobCommitmentsPerBlock>,
}

/// `PartialDataColumnGroupID`: the group a partial data column message belongs to (a block root).
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumngroupid
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PartialDataColumnGroupID {
    /// Root of the block the column belongs to.
    pub beacon_block_root: Root,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: fulu/beacon-chain.md#beaconstate
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
    /// Index of the first deposit request; `UNSET_DEPOSIT_REQUESTS_START_INDEX` until one arrives.
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
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_deposits: milhouse::List<PendingDeposit, E::PendingDepositsLimit>,
    /// Execution-layer partial withdrawals waiting until they are withdrawable.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_partial_withdrawals:
        milhouse::List<PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>,
    /// Consolidations waiting until their source validator is withdrawable.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_consolidations: milhouse::List<PendingConsolidation, E::PendingConsolidationsLimit>,
    /// Proposer of each slot of the current epoch and the next `MIN_SEED_LOOKAHEAD` epochs.
    /// [New in Fulu:EIP7917]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_vector))]
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u64_vector")
    )]
    pub proposer_lookahead: milhouse::Vector<ValidatorIndex, E::ProposerLookaheadSlots>,
}

/// `PartialDataColumnHeader`: the block-level part of a partial data column message.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumnheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct PartialDataColumnHeader<E: EthSpec> {
    /// The block's blob KZG commitments.
    pub kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// The signed header of the block.
    pub signed_block_header: SignedBeaconBlockHeader,
    /// Merkle branch of `kzg_commitments` against the header's body root.
    pub kzg_commitments_inclusion_proof: FixedVector<Bytes32, E::KzgCommitmentsInclusionProofDepth>,
}

/// `PartialDataColumnSidecar`: some cells of one data column, with an optional header.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-partialdatacolumnsidecar
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct PartialDataColumnSidecar<E: EthSpec> {
    /// One bit per blob of the block: which cells of the column this message carries.
    pub cells_present_bitmap: BitList<E::MaxBlobCommitmentsPerBlock>,
    /// The cells present, in blob order.
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::list_of_hex_fixed_vec")
    )]
    pub partial_column: VariableList<Cell<E>, E::MaxBlobCommitmentsPerBlock>,
    /// The KZG proof of each cell present, in the same order.
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct DataColumnsByRootIdentifier<E: EthSpec> {
    /// Root of the block whose columns are requested.
    pub block_root: Root,
    /// Indices of the columns requested.
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::quoted_u64_var_list")
    )]
    pub columns: VariableList<ColumnIndex, E::NumberOfColumns>,
}

/// `MatrixEntry`: one cell of the extended blob matrix with its proof and coordinates.
///
/// [spec]: fulu/das-core.md#matrixentry
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct MatrixEntry<E: EthSpec> {
    /// The cell.
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::hex_fixed_vec")
    )]
    pub cell: Cell<E>,
    /// KZG proof of the cell against its blob's commitment.
    pub kzg_proof: KZGProof,
    /// The cell's column in the extended matrix.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub column_index: ColumnIndex,
    /// The cell's row: the index of the blob it extends.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub row_index: RowIndex,
}

/// `DataColumnSidecar`: one column of the extended blob matrix: cells, commitments, proofs and inclusion proof.
///
/// [spec]: fulu/das-core.md#datacolumnsidecar
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
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::list_of_hex_fixed_vec")
    )]
    pub column: VariableList<Cell<E>, E::MaxBlobCommitmentsPerBlock>,
    /// The KZG commitments of all the block's blobs.
    pub kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// The KZG proof of each cell in `column`.
    pub kzg_proofs: VariableList<KZGProof, E::MaxBlobCommitmentsPerBlock>,
    /// The signed header of the block.
    pub signed_block_header: SignedBeaconBlockHeader,
    /// Merkle branch of `kzg_commitments` against the header's body root.
    pub kzg_commitments_inclusion_proof: FixedVector<Bytes32, E::KzgCommitmentsInclusionProofDepth>,
}
