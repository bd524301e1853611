//! Altair containers: sync committees, participation flags, light client.
//!
//! [spec]: altair/beacon-chain.md#containers

use packed_list::PackedList;
use ssz_derive::{Decode, Encode};
#[allow(unused_imports)]
use ssz_types::{BitList, BitVector, FixedVector, VariableList, typenum};
use tree_hash_derive::TreeHash;

#[allow(unused_imports)]
use crate::{EthSpec, primitives::*};

/// `FinalityBranch`: `Vector[Bytes32, floorlog2(FINALIZED_ROOT_GINDEX)]`.
pub type FinalityBranch = FixedVector<Bytes32, typenum::U6>;
/// `CurrentSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(CURRENT_SYNC_COMMITTEE_GINDEX)]`.
pub type CurrentSyncCommitteeBranch = FixedVector<Bytes32, typenum::U5>;
/// `NextSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(NEXT_SYNC_COMMITTEE_GINDEX)]`.
pub type NextSyncCommitteeBranch = FixedVector<Bytes32, typenum::U5>;
pub use crate::phase0::{
    AggregateAndProof, Attestation, AttestationData, AttesterSlashing, BeaconBlockHeader,
    Checkpoint, Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data, Fork, ForkData,
    HistoricalBatch, IndexedAttestation, ProposerSlashing, SignedAggregateAndProof,
    SignedBeaconBlockHeader, SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
};

/// `SyncAggregate`: the sync committee's aggregate signature over the previous block root.
///
/// [spec]: altair/beacon-chain.md#syncaggregate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SyncAggregate<E: EthSpec> {
    /// Which sync committee members signed.
    pub sync_committee_bits: BitVector<E::SyncCommitteeSize>,
    /// Aggregate signature of the participants over the previous slot's block root.
    pub sync_committee_signature: BLSSignature,
}

/// `SyncAggregatorSelectionData`: the data a sync committee aggregator's selection proof signs.
///
/// [spec]: altair/validator.md#syncaggregatorselectiondata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SyncAggregatorSelectionData {
    /// The slot the aggregator is selected for.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// The sync subcommittee the aggregator is selected for.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub subcommittee_index: u64,
}

/// `SyncCommitteeContribution`: an aggregate of one sync subcommittee's messages.
///
/// [spec]: altair/validator.md#synccommitteecontribution
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SyncCommitteeContribution<E: EthSpec> {
    /// The slot of the aggregated messages.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// The block root the members signed.
    pub beacon_block_root: Root,
    /// The subcommittee whose messages are aggregated.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub subcommittee_index: u64,
    /// Which members of the subcommittee signed.
    pub aggregation_bits: BitVector<E::SyncSubcommitteeSize>,
    /// Aggregate signature of those members.
    pub signature: BLSSignature,
}

/// `ContributionAndProof`: an aggregator's sync committee contribution with its selection proof.
///
/// [spec]: altair/validator.md#contributionandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct ContributionAndProof<E: EthSpec> {
    /// The aggregator's validator index.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub aggregator_index: ValidatorIndex,
    /// The aggregated contribution.
    pub contribution: SyncCommitteeContribution<E>,
    /// The aggregator's signature over `SyncAggregatorSelectionData`, proving it was selected.
    pub selection_proof: BLSSignature,
}

/// `SignedContributionAndProof`: a signed `ContributionAndProof`.
///
/// [spec]: altair/validator.md#signedcontributionandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SignedContributionAndProof<E: EthSpec> {
    /// The contribution and its selection proof.
    pub message: ContributionAndProof<E>,
    /// The aggregator's signature over `message`.
    pub signature: BLSSignature,
}

/// `SyncCommitteeMessage`: one sync committee member's signature over a block root.
///
/// [spec]: altair/validator.md#synccommitteemessage
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SyncCommitteeMessage {
    /// The slot of the message.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// The head block root the member signs.
    pub beacon_block_root: Root,
    /// The signing member's validator index.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub validator_index: ValidatorIndex,
    /// The member's signature over `beacon_block_root`.
    pub signature: BLSSignature,
}

/// `LightClientHeader`: the block header a light client tracks.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LightClientHeader {
    /// The beacon block header.
    pub beacon: BeaconBlockHeader,
}

/// `LightClientOptimisticUpdate`: the latest attested header and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientoptimisticupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientOptimisticUpdate<E: EthSpec> {
    /// Header attested to by the sync committee
    pub attested_header: LightClientHeader,
    /// Sync committee aggregate signature
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted)
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `SyncCommittee`: the public keys of a sync committee and their aggregate.
///
/// [spec]: altair/beacon-chain.md#synccommittee
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct SyncCommittee<E: EthSpec> {
    /// Members' public keys in committee order; a validator may appear more than once.
    pub pubkeys: FixedVector<BLSPubkey, E::SyncCommitteeSize>,
    /// The aggregate of `pubkeys`.
    pub aggregate_pubkey: BLSPubkey,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: altair/beacon-chain.md#beaconblockbody
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
    /// [New in Altair]
    pub sync_aggregate: SyncAggregate<E>,
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

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: altair/beacon-chain.md#beaconstate
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
    /// Root of the `HistoricalBatch` of each completed `SLOTS_PER_HISTORICAL_ROOT` period.
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
    /// [Modified in Altair]
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u8_packed_list")
    )]
    pub previous_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    /// Each validator's participation flags for the current epoch.
    /// [Modified in Altair]
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
    /// [New in Altair]
    #[cfg_attr(
        feature = "serde",
        serde(with = "crate::serde_state::quoted_u64_packed_list")
    )]
    pub inactivity_scores: PackedList<u64, E::ValidatorRegistryLimit>,
    /// The sync committee of the current sync committee period.
    /// [New in Altair]
    pub current_sync_committee: SyncCommittee<E>,
    /// The sync committee of the next period, fixed one period ahead.
    /// [New in Altair]
    pub next_sync_committee: SyncCommittee<E>,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientfinalityupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientFinalityUpdate<E: EthSpec> {
    /// Header attested to by the sync committee
    pub attested_header: LightClientHeader,
    /// Finalized header corresponding to `attested_header.beacon.state_root`
    pub finalized_header: LightClientHeader,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted)
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientBootstrap`: a light client's trusted starting point: header and current sync committee.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientbootstrap
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// Header matching the requested beacon block root
    pub header: LightClientHeader,
    /// Current sync committee corresponding to `header.beacon.state_root`
    pub current_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `current_sync_committee` against the header's state root.
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}

/// `LightClientUpdate`: an attested header with next sync committee and finality proofs.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientUpdate<E: EthSpec> {
    /// Header attested to by the sync committee
    pub attested_header: LightClientHeader,
    /// Next sync committee corresponding to `attested_header.beacon.state_root`
    pub next_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `next_sync_committee` against the attested state root.
    pub next_sync_committee_branch: NextSyncCommitteeBranch,
    /// Finalized header corresponding to `attested_header.beacon.state_root`
    pub finalized_header: LightClientHeader,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted)
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}
