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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PendingConsolidation {
    /// The validator being consolidated away.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub source_index: ValidatorIndex,
    /// The validator that receives the source's balance.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub target_index: ValidatorIndex,
}

/// `PendingPartialWithdrawal`: a partial withdrawal waiting in the state's queue.
///
/// [spec]: electra/beacon-chain.md#pendingpartialwithdrawal
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PendingPartialWithdrawal {
    /// The validator withdrawing.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub validator_index: ValidatorIndex,
    /// The amount to withdraw.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
    /// The first epoch at which the withdrawal can be paid.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub withdrawable_epoch: Epoch,
}

/// `SingleAttestation`: an unaggregated attestation naming its committee and attester directly.
///
/// [spec]: electra/beacon-chain.md#singleattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SingleAttestation {
    /// The attester's committee within the slot.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub committee_index: CommitteeIndex,
    /// The attester's validator index.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub attester_index: ValidatorIndex,
    /// What the attester votes for.
    pub data: AttestationData,
    /// The attester's signature over `data`.
    pub signature: BLSSignature,
}

/// `ConsolidationRequest`: an execution-layer request to consolidate one validator into another.
///
/// [spec]: electra/beacon-chain.md#consolidationrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ConsolidationRequest {
    /// The execution address that sent the request; must match the source's credentials.
    pub source_address: ExecutionAddress,
    /// Public key of the validator to consolidate away.
    pub source_pubkey: BLSPubkey,
    /// Public key of the validator receiving the balance (the source's own: switch to compounding).
    pub target_pubkey: BLSPubkey,
}

/// `WithdrawalRequest`: an execution-layer request to withdraw from or exit a validator (EIP-7002).
///
/// [spec]: electra/beacon-chain.md#withdrawalrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WithdrawalRequest {
    /// The execution address that sent the request; must match the validator's credentials.
    pub source_address: ExecutionAddress,
    /// Public key of the validator to withdraw from.
    pub validator_pubkey: BLSPubkey,
    /// The amount to withdraw; `FULL_EXIT_REQUEST_AMOUNT` asks for a full exit.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
}

/// `DepositRequest`: a deposit delivered by the execution layer (EIP-6110).
///
/// [spec]: electra/beacon-chain.md#depositrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DepositRequest {
    /// The BLS public key of the validator to create or top up.
    pub pubkey: BLSPubkey,
    /// Withdrawal credentials for a new validator.
    pub withdrawal_credentials: Bytes32,
    /// The amount deposited.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
    /// Proof of possession over the deposit message, checked when the deposit is applied.
    pub signature: BLSSignature,
    /// The deposit's index in the deposit contract.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub index: u64,
}

/// `PendingDeposit`: a deposit waiting in the state's queue to be applied.
///
/// [spec]: electra/beacon-chain.md#pendingdeposit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PendingDeposit {
    /// The BLS public key of the validator to create or top up.
    pub pubkey: BLSPubkey,
    /// Withdrawal credentials for a new validator.
    pub withdrawal_credentials: Bytes32,
    /// The amount to credit.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
    /// Proof of possession over the deposit message, checked when the deposit is applied.
    pub signature: BLSSignature,
    /// The slot the deposit request was processed in; `GENESIS_SLOT` for other deposits.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: electra/beacon-chain.md#beaconstate
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
    /// [New in Electra:EIP6110]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub deposit_requests_start_index: u64,
    /// Deposit churn left over from earlier epochs, still available to pending deposits.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub deposit_balance_to_consume: Gwei,
    /// Exit churn still available in `earliest_exit_epoch`.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub exit_balance_to_consume: Gwei,
    /// The earliest epoch an exit initiated now can be scheduled for.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub earliest_exit_epoch: Epoch,
    /// Consolidation churn still available in `earliest_consolidation_epoch`.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub consolidation_balance_to_consume: Gwei,
    /// The earliest epoch a consolidation initiated now can be scheduled for.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub earliest_consolidation_epoch: Epoch,
    /// Deposits waiting for deposit churn, oldest first.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_deposits: milhouse::List<PendingDeposit, E::PendingDepositsLimit>,
    /// Execution-layer partial withdrawals waiting until they are withdrawable.
    /// [New in Electra:EIP7251]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub pending_partial_withdrawals:
        milhouse::List<PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>,
    /// Consolidations waiting until their source validator is withdrawable.
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

/// `Attestation`: an aggregatable vote by a committee, with its aggregate BLS signature.
///
/// [spec]: electra/beacon-chain.md#attestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct Attestation<E: EthSpec> {
    /// Which validators signed, over the committees named by `committee_bits`, in committee order.
    /// [Modified in Electra:EIP7549]
    pub aggregation_bits: BitList<E::MaxValidatorsPerSlot>,
    /// What the attesters vote for.
    pub data: AttestationData,
    /// Aggregate BLS signature of the signers over `data`.
    pub signature: BLSSignature,
    /// Which of the slot's committees the attestation covers.
    /// [New in Electra:EIP7549]
    pub committee_bits: BitVector<E::MaxCommitteesPerSlot>,
}

/// `AggregateAndProof`: an aggregator's aggregate attestation with its selection proof.
///
/// [spec]: electra/validator.md#aggregateandproof
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
    /// [Modified in Electra:EIP7549]
    pub aggregate: Attestation<E>,
    /// The aggregator's signature over the slot, proving it was selected to aggregate.
    pub selection_proof: BLSSignature,
}

/// `SignedAggregateAndProof`: a signed `AggregateAndProof`.
///
/// [spec]: electra/validator.md#signedaggregateandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SignedAggregateAndProof<E: EthSpec> {
    /// The aggregate and its selection proof.
    /// [Modified in Electra:EIP7549]
    pub message: AggregateAndProof<E>,
    /// The aggregator's signature over `message`.
    pub signature: BLSSignature,
}

/// `IndexedAttestation`: an attestation with its signers as sorted validator indices.
///
/// [spec]: electra/beacon-chain.md#indexedattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct IndexedAttestation<E: EthSpec> {
    /// Validator indices of the signers, sorted ascending.
    /// [Modified in Electra:EIP7549]
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::quoted_u64_var_list")
    )]
    pub attesting_indices: VariableList<ValidatorIndex, E::MaxValidatorsPerSlot>,
    /// What the attesters vote for.
    pub data: AttestationData,
    /// Aggregate BLS signature of the attesters over `data`.
    pub signature: BLSSignature,
}

/// `AttesterSlashing`: two conflicting indexed attestations that slash their common signers.
///
/// [spec]: electra/beacon-chain.md#attesterslashing
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct AttesterSlashing<E: EthSpec> {
    /// The first of two conflicting attestations.
    /// [Modified in Electra:EIP7549]
    pub attestation_1: IndexedAttestation<E>,
    /// The second, a double or surround vote with respect to the first.
    /// [Modified in Electra:EIP7549]
    pub attestation_2: IndexedAttestation<E>,
}

/// `ExecutionRequests`: the deposit, withdrawal and consolidation requests an execution payload emits.
///
/// [spec]: electra/beacon-chain.md#executionrequests
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct ExecutionRequests<E: EthSpec> {
    /// Deposit requests (EIP-6110).
    /// [New in Electra:EIP6110]
    pub deposits: VariableList<DepositRequest, E::MaxDepositRequestsPerPayload>,
    /// Withdrawal and exit requests (EIP-7002).
    /// [New in Electra:EIP7002:EIP7251]
    pub withdrawals: VariableList<WithdrawalRequest, E::MaxWithdrawalRequestsPerPayload>,
    /// Consolidation requests (EIP-7251).
    /// [New in Electra:EIP7251]
    pub consolidations: VariableList<ConsolidationRequest, E::MaxConsolidationRequestsPerPayload>,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: electra/beacon-chain.md#beaconblockbody
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
    /// [Modified in Electra:EIP7549]
    pub attester_slashings: VariableList<AttesterSlashing<E>, E::MaxAttesterSlashingsElectra>,
    /// Aggregate attestations to include.
    /// [Modified in Electra:EIP7549]
    pub attestations: VariableList<Attestation<E>, E::MaxAttestationsElectra>,
    /// Deposit contract deposits, in contract order.
    pub deposits: VariableList<Deposit, E::MaxDeposits>,
    /// Voluntary exits to process.
    pub voluntary_exits: VariableList<SignedVoluntaryExit, E::MaxVoluntaryExits>,
    /// The sync committee's signature over the parent block root.
    pub sync_aggregate: SyncAggregate<E>,
    /// The execution-layer block.
    pub execution_payload: ExecutionPayload<E>,
    /// Changes of withdrawal credentials from BLS keys to execution addresses.
    pub bls_to_execution_changes:
        VariableList<SignedBLSToExecutionChange, E::MaxBlsToExecutionChanges>,
    /// KZG commitments to the block's blobs, in blob order.
    pub blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// Deposit, withdrawal and consolidation requests emitted by the payload.
    /// [New in Electra]
    pub execution_requests: ExecutionRequests<E>,
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

/// `NewPayloadRequest`: what the consensus layer hands the execution engine for a block
/// (`verify_and_notify_new_payload`); an SSZ container since the engine API's SSZ transport.
///
/// [spec]: electra/beacon-chain.md#newpayloadrequest
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct NewPayloadRequest<E: EthSpec> {
    /// The payload for the engine to execute.
    pub execution_payload: ExecutionPayload<E>,
    /// Versioned hashes of the block's blob commitments, checked against its blob transactions.
    pub versioned_hashes: VariableList<VersionedHash, E::MaxBlobCommitmentsPerBlock>,
    /// Root of the parent beacon block (EIP-4788).
    pub parent_beacon_block_root: Root,
    /// The block's execution requests, for the engine to check against the payload.
    pub execution_requests: ExecutionRequests<E>,
}
