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
pub struct SyncAggregate<E: EthSpec> {
    pub sync_committee_bits: BitVector<E::SyncCommitteeSize>,
    pub sync_committee_signature: BLSSignature,
}

/// `SyncAggregatorSelectionData`: the data a sync committee aggregator's selection proof signs.
///
/// [spec]: altair/validator.md#syncaggregatorselectiondata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SyncAggregatorSelectionData {
    pub slot: Slot,
    pub subcommittee_index: u64,
}

/// `SyncCommitteeContribution`: an aggregate of one sync subcommittee's messages.
///
/// [spec]: altair/validator.md#synccommitteecontribution
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SyncCommitteeContribution<E: EthSpec> {
    pub slot: Slot,
    pub beacon_block_root: Root,
    pub subcommittee_index: u64,
    pub aggregation_bits: BitVector<E::SyncSubcommitteeSize>,
    pub signature: BLSSignature,
}

/// `ContributionAndProof`: an aggregator's sync committee contribution with its selection proof.
///
/// [spec]: altair/validator.md#contributionandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct ContributionAndProof<E: EthSpec> {
    pub aggregator_index: ValidatorIndex,
    pub contribution: SyncCommitteeContribution<E>,
    pub selection_proof: BLSSignature,
}

/// `SignedContributionAndProof`: a signed `ContributionAndProof`.
///
/// [spec]: altair/validator.md#signedcontributionandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SignedContributionAndProof<E: EthSpec> {
    pub message: ContributionAndProof<E>,
    pub signature: BLSSignature,
}

/// `SyncCommitteeMessage`: one sync committee member's signature over a block root.
///
/// [spec]: altair/validator.md#synccommitteemessage
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SyncCommitteeMessage {
    pub slot: Slot,
    pub beacon_block_root: Root,
    pub validator_index: ValidatorIndex,
    pub signature: BLSSignature,
}

/// `LightClientHeader`: the block header a light client tracks.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LightClientHeader {
    pub beacon: BeaconBlockHeader,
}

/// `LightClientOptimisticUpdate`: the latest attested header and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientoptimisticupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientOptimisticUpdate<E: EthSpec> {
    /// Header attested to by the sync committee
    pub attested_header: LightClientHeader,
    /// Sync committee aggregate signature
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted)
    pub signature_slot: Slot,
}

/// `SyncCommittee`: the public keys of a sync committee and their aggregate.
///
/// [spec]: altair/beacon-chain.md#synccommittee
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SyncCommittee<E: EthSpec> {
    pub pubkeys: FixedVector<BLSPubkey, E::SyncCommitteeSize>,
    pub aggregate_pubkey: BLSPubkey,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: altair/beacon-chain.md#beaconblockbody
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
    /// [New in Altair]
    pub sync_aggregate: SyncAggregate<E>,
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
/// [spec]: altair/beacon-chain.md#beaconstate
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
    /// [Modified in Altair]
    pub previous_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    /// [Modified in Altair]
    pub current_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
    pub justification_bits: BitVector<typenum::U4>,
    pub previous_justified_checkpoint: Checkpoint,
    pub current_justified_checkpoint: Checkpoint,
    pub finalized_checkpoint: Checkpoint,
    /// [New in Altair]
    pub inactivity_scores: PackedList<u64, E::ValidatorRegistryLimit>,
    /// [New in Altair]
    pub current_sync_committee: SyncCommittee<E>,
    /// [New in Altair]
    pub next_sync_committee: SyncCommittee<E>,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientfinalityupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientFinalityUpdate<E: EthSpec> {
    /// Header attested to by the sync committee
    pub attested_header: LightClientHeader,
    /// Finalized header corresponding to `attested_header.beacon.state_root`
    pub finalized_header: LightClientHeader,
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted)
    pub signature_slot: Slot,
}

/// `LightClientBootstrap`: a light client's trusted starting point: header and current sync committee.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientbootstrap
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// Header matching the requested beacon block root
    pub header: LightClientHeader,
    /// Current sync committee corresponding to `header.beacon.state_root`
    pub current_sync_committee: SyncCommittee<E>,
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}

/// `LightClientUpdate`: an attested header with next sync committee and finality proofs.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientupdate
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct LightClientUpdate<E: EthSpec> {
    /// Header attested to by the sync committee
    pub attested_header: LightClientHeader,
    /// Next sync committee corresponding to `attested_header.beacon.state_root`
    pub next_sync_committee: SyncCommittee<E>,
    pub next_sync_committee_branch: NextSyncCommitteeBranch,
    /// Finalized header corresponding to `attested_header.beacon.state_root`
    pub finalized_header: LightClientHeader,
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted)
    pub signature_slot: Slot,
}
