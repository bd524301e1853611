//! Electra containers: execution requests, pending deposits, withdrawals and consolidations,
//! committee-bits attestations.
//!
//! [spec]: electra/beacon-chain.md#containers

use packed_list::PackedList;
use ssz_derive::{Decode, Encode};
#[allow(unused_imports)]
use ssz_types::{BitList, BitVector, FixedVector, VariableList, typenum};
use tree_hash_derive::TreeHash;

#[allow(unused_imports)]
use crate::{EthSpec, primitives::*};

pub use crate::deneb::ExecutionBranch;

/// `FinalityBranch`: `Vector[Bytes32, floorlog2(FINALIZED_ROOT_GINDEX_ELECTRA)]`.
pub type FinalityBranch = FixedVector<Bytes32, typenum::U7>;
/// `CurrentSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA)]`.
pub type CurrentSyncCommitteeBranch = FixedVector<Bytes32, typenum::U6>;
/// `NextSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA)]`.
pub type NextSyncCommitteeBranch = FixedVector<Bytes32, typenum::U6>;
pub use crate::altair::{
    ContributionAndProof, SignedContributionAndProof, SyncAggregate, SyncAggregatorSelectionData,
    SyncCommittee, SyncCommitteeContribution, SyncCommitteeMessage,
};
pub use crate::bellatrix::PowBlock;
pub use crate::capella::{
    BLSToExecutionChange, HistoricalSummary, SignedBLSToExecutionChange, Withdrawal,
};
pub use crate::deneb::{
    BlobIdentifier, BlobSidecar, ExecutionPayload, ExecutionPayloadHeader, LightClientHeader,
    LightClientOptimisticUpdate,
};
pub use crate::phase0::{
    AttestationData, BeaconBlockHeader, Checkpoint, Deposit, DepositData, DepositMessage,
    Eth1Block, Eth1Data, Fork, ForkData, ProposerSlashing, SignedBeaconBlockHeader,
    SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
};

/// `PendingConsolidation`: a consolidation waiting in the state's queue.
///
/// [spec]: electra/beacon-chain.md#pendingconsolidation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PendingConsolidation {
    pub source_index: ValidatorIndex,
    pub target_index: ValidatorIndex,
}

/// `PendingPartialWithdrawal`: a partial withdrawal waiting in the state's queue.
///
/// [spec]: electra/beacon-chain.md#pendingpartialwithdrawal
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PendingPartialWithdrawal {
    pub validator_index: ValidatorIndex,
    pub amount: Gwei,
    pub withdrawable_epoch: Epoch,
}

/// `SingleAttestation`: an unaggregated attestation naming its committee and attester directly.
///
/// [spec]: electra/beacon-chain.md#singleattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SingleAttestation {
    pub committee_index: CommitteeIndex,
    pub attester_index: ValidatorIndex,
    pub data: AttestationData,
    pub signature: BLSSignature,
}

/// `ConsolidationRequest`: an execution-layer request to consolidate one validator into another.
///
/// [spec]: electra/beacon-chain.md#consolidationrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ConsolidationRequest {
    pub source_address: ExecutionAddress,
    pub source_pubkey: BLSPubkey,
    pub target_pubkey: BLSPubkey,
}

/// `WithdrawalRequest`: an execution-layer request to withdraw from or exit a validator (EIP-7002).
///
/// [spec]: electra/beacon-chain.md#withdrawalrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct WithdrawalRequest {
    pub source_address: ExecutionAddress,
    pub validator_pubkey: BLSPubkey,
    pub amount: Gwei,
}

/// `DepositRequest`: a deposit delivered by the execution layer (EIP-6110).
///
/// [spec]: electra/beacon-chain.md#depositrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DepositRequest {
    pub pubkey: BLSPubkey,
    pub withdrawal_credentials: Bytes32,
    pub amount: Gwei,
    pub signature: BLSSignature,
    pub index: u64,
}

/// `PendingDeposit`: a deposit waiting in the state's queue to be applied.
///
/// [spec]: electra/beacon-chain.md#pendingdeposit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PendingDeposit {
    pub pubkey: BLSPubkey,
    pub withdrawal_credentials: Bytes32,
    pub amount: Gwei,
    pub signature: BLSSignature,
    pub slot: Slot,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: electra/beacon-chain.md#beaconstate
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
    /// [New in Electra:EIP6110]
    pub deposit_requests_start_index: u64,
    /// [New in Electra:EIP7251]
    pub deposit_balance_to_consume: Gwei,
    /// [New in Electra:EIP7251]
    pub exit_balance_to_consume: Gwei,
    /// [New in Electra:EIP7251]
    pub earliest_exit_epoch: Epoch,
    /// [New in Electra:EIP7251]
    pub consolidation_balance_to_consume: Gwei,
    /// [New in Electra:EIP7251]
    pub earliest_consolidation_epoch: Epoch,
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_deposits: milhouse::List<PendingDeposit, E::PendingDepositsLimit>,
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_partial_withdrawals:
        milhouse::List<PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>,
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_consolidations: milhouse::List<PendingConsolidation, E::PendingConsolidationsLimit>,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientfinalityupdate (with this fork's `LightClientHeader`)
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
/// [spec]: altair/light-client/sync-protocol.md#lightclientupdate (with this fork's `LightClientHeader`)
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
/// [spec]: altair/light-client/sync-protocol.md#lightclientbootstrap (with this fork's `LightClientHeader`)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// [Modified in Capella]
    pub header: LightClientHeader<E>,
    pub current_sync_committee: SyncCommittee<E>,
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}

/// `Attestation`: an aggregatable vote by a committee, with its aggregate BLS signature.
///
/// [spec]: electra/beacon-chain.md#attestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct Attestation<E: EthSpec> {
    /// [Modified in Electra:EIP7549]
    pub aggregation_bits: BitList<E::MaxValidatorsPerSlot>,
    pub data: AttestationData,
    pub signature: BLSSignature,
    /// [New in Electra:EIP7549]
    pub committee_bits: BitVector<E::MaxCommitteesPerSlot>,
}

/// `AggregateAndProof`: an aggregator's aggregate attestation with its selection proof.
///
/// [spec]: electra/validator.md#aggregateandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct AggregateAndProof<E: EthSpec> {
    pub aggregator_index: ValidatorIndex,
    /// [Modified in Electra:EIP7549]
    pub aggregate: Attestation<E>,
    pub selection_proof: BLSSignature,
}

/// `SignedAggregateAndProof`: a signed `AggregateAndProof`.
///
/// [spec]: electra/validator.md#signedaggregateandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SignedAggregateAndProof<E: EthSpec> {
    /// [Modified in Electra:EIP7549]
    pub message: AggregateAndProof<E>,
    pub signature: BLSSignature,
}

/// `IndexedAttestation`: an attestation with its signers as sorted validator indices.
///
/// [spec]: electra/beacon-chain.md#indexedattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct IndexedAttestation<E: EthSpec> {
    /// [Modified in Electra:EIP7549]
    pub attesting_indices: VariableList<ValidatorIndex, E::MaxValidatorsPerSlot>,
    pub data: AttestationData,
    pub signature: BLSSignature,
}

/// `AttesterSlashing`: two conflicting indexed attestations that slash their common signers.
///
/// [spec]: electra/beacon-chain.md#attesterslashing
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct AttesterSlashing<E: EthSpec> {
    /// [Modified in Electra:EIP7549]
    pub attestation_1: IndexedAttestation<E>,
    /// [Modified in Electra:EIP7549]
    pub attestation_2: IndexedAttestation<E>,
}

/// `ExecutionRequests`: the deposit, withdrawal and consolidation requests an execution payload emits.
///
/// [spec]: electra/beacon-chain.md#executionrequests
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct ExecutionRequests<E: EthSpec> {
    /// [New in Electra:EIP6110]
    pub deposits: VariableList<DepositRequest, E::MaxDepositRequestsPerPayload>,
    /// [New in Electra:EIP7002:EIP7251]
    pub withdrawals: VariableList<WithdrawalRequest, E::MaxWithdrawalRequestsPerPayload>,
    /// [New in Electra:EIP7251]
    pub consolidations: VariableList<ConsolidationRequest, E::MaxConsolidationRequestsPerPayload>,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: electra/beacon-chain.md#beaconblockbody
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct BeaconBlockBody<E: EthSpec> {
    pub randao_reveal: BLSSignature,
    pub eth1_data: Eth1Data,
    pub graffiti: Bytes32,
    pub proposer_slashings: VariableList<ProposerSlashing, E::MaxProposerSlashings>,
    /// [Modified in Electra:EIP7549]
    pub attester_slashings: VariableList<AttesterSlashing<E>, E::MaxAttesterSlashingsElectra>,
    /// [Modified in Electra:EIP7549]
    pub attestations: VariableList<Attestation<E>, E::MaxAttestationsElectra>,
    pub deposits: VariableList<Deposit, E::MaxDeposits>,
    pub voluntary_exits: VariableList<SignedVoluntaryExit, E::MaxVoluntaryExits>,
    pub sync_aggregate: SyncAggregate<E>,
    pub execution_payload: ExecutionPayload<E>,
    pub bls_to_execution_changes:
        VariableList<SignedBLSToExecutionChange, E::MaxBlsToExecutionChanges>,
    pub blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// [New in Electra]
    pub execution_requests: ExecutionRequests<E>,
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

/// `NewPayloadRequest`: what the consensus layer hands the execution engine for a block
/// (`verify_and_notify_new_payload`); an SSZ container since the engine API's SSZ transport.
///
/// [spec]: electra/beacon-chain.md#newpayloadrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct NewPayloadRequest<E: EthSpec> {
    pub execution_payload: ExecutionPayload<E>,
    pub versioned_hashes: VariableList<VersionedHash, E::MaxBlobCommitmentsPerBlock>,
    pub parent_beacon_block_root: Root,
    pub execution_requests: ExecutionRequests<E>,
}
