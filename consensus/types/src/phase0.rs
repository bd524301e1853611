//! Phase 0 containers.
//!
//! [spec]: phase0/beacon-chain.md#containers

use packed_list::PackedList;
use ssz_derive::{Decode, Encode};
#[allow(unused_imports)]
use ssz_types::{BitList, BitVector, FixedVector, VariableList, typenum};
use tree_hash_derive::TreeHash;

#[allow(unused_imports)]
use crate::{EthSpec, primitives::*};

/// `Fork`: the previous and current fork versions and the epoch of the switch.
///
/// [spec]: phase0/beacon-chain.md#fork
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Fork {
    pub previous_version: Version,
    pub current_version: Version,
    pub epoch: Epoch,
}

/// `VoluntaryExit`: a validator's request to exit.
///
/// [spec]: phase0/beacon-chain.md#voluntaryexit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct VoluntaryExit {
    pub epoch: Epoch,
    pub validator_index: ValidatorIndex,
}

/// `Eth1Block`.
///
/// [spec]: phase0/validator.md#eth1block
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Eth1Block {
    pub timestamp: u64,
    pub deposit_root: Root,
    pub deposit_count: u64,
}

/// `SigningData`: an object root with its domain: what a signature signs.
///
/// [spec]: phase0/beacon-chain.md#signingdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SigningData {
    pub object_root: Root,
    pub domain: Domain,
}

/// `BeaconBlockHeader`: a block with its body replaced by the body root.
///
/// [spec]: phase0/beacon-chain.md#beaconblockheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct BeaconBlockHeader {
    pub slot: Slot,
    pub proposer_index: ValidatorIndex,
    pub parent_root: Root,
    pub state_root: Root,
    pub body_root: Root,
}

/// `HistoricalBatch`: the block and state roots of one historical period.
///
/// [spec]: phase0/beacon-chain.md#historicalbatch
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct HistoricalBatch<E: EthSpec> {
    pub block_roots: FixedVector<Root, E::SlotsPerHistoricalRoot>,
    pub state_roots: FixedVector<Root, E::SlotsPerHistoricalRoot>,
}

/// `Checkpoint`: an epoch and the block root at its start.
///
/// [spec]: phase0/beacon-chain.md#checkpoint
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Checkpoint {
    pub epoch: Epoch,
    pub root: Root,
}

/// `AttestationData`: what an attestation votes for: slot, head block root, source and target checkpoints.
///
/// [spec]: phase0/beacon-chain.md#attestationdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct AttestationData {
    pub slot: Slot,
    pub index: CommitteeIndex,
    pub beacon_block_root: Root,
    pub source: Checkpoint,
    pub target: Checkpoint,
}

/// `PendingAttestation`: a phase0 attestation kept in the state until epoch processing.
///
/// [spec]: phase0/beacon-chain.md#pendingattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct PendingAttestation<E: EthSpec> {
    pub aggregation_bits: BitList<E::MaxValidatorsPerCommittee>,
    pub data: AttestationData,
    pub inclusion_delay: Slot,
    pub proposer_index: ValidatorIndex,
}

/// `ForkData`: the data hashed into a fork digest and a signing domain.
///
/// [spec]: phase0/beacon-chain.md#forkdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ForkData {
    pub current_version: Version,
    pub genesis_validators_root: Root,
}

/// `Eth1Data`.
///
/// [spec]: phase0/beacon-chain.md#eth1data
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Eth1Data {
    pub deposit_root: Root,
    pub deposit_count: u64,
    pub block_hash: Hash32,
}

/// `DepositMessage`: the part of a deposit that its signature signs.
///
/// [spec]: phase0/beacon-chain.md#depositmessage
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DepositMessage {
    pub pubkey: BLSPubkey,
    pub withdrawal_credentials: Bytes32,
    pub amount: Gwei,
}

/// The validator registry, `List[Validator, VALIDATOR_REGISTRY_LIMIT]`, as every fork's state
/// holds it: a milhouse list whose pending writes sit in a sparse map until applied. (milhouse's
/// default map is a vector indexed by position, so one write to validator 900,000 would allocate
/// and zero room for 900,000 entries.)
pub type ValidatorRegistry<E> = milhouse::List<
    Validator,
    <E as EthSpec>::ValidatorRegistryLimit,
    milhouse::update_map::MaxMap<std::collections::BTreeMap<usize, Validator>>,
>;

/// `Validator`: a validator's registry record.
///
/// [spec]: phase0/beacon-chain.md#validator
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Validator {
    pub pubkey: BLSPubkey,
    pub withdrawal_credentials: Bytes32,
    pub effective_balance: Gwei,
    pub slashed: bool,
    pub activation_eligibility_epoch: Epoch,
    pub activation_epoch: Epoch,
    pub exit_epoch: Epoch,
    pub withdrawable_epoch: Epoch,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: phase0/beacon-chain.md#beaconstate
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
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub previous_epoch_attestations:
        milhouse::List<PendingAttestation<E>, E::MaxPendingAttestations>,
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub current_epoch_attestations:
        milhouse::List<PendingAttestation<E>, E::MaxPendingAttestations>,
    pub justification_bits: BitVector<typenum::U4>,
    pub previous_justified_checkpoint: Checkpoint,
    pub current_justified_checkpoint: Checkpoint,
    pub finalized_checkpoint: Checkpoint,
}

/// `SignedBeaconBlockHeader`: a signed `BeaconBlockHeader`.
///
/// [spec]: phase0/beacon-chain.md#signedbeaconblockheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SignedBeaconBlockHeader {
    pub message: BeaconBlockHeader,
    pub signature: BLSSignature,
}

/// `ProposerSlashing`: two conflicting signed headers from one proposer for one slot.
///
/// [spec]: phase0/beacon-chain.md#proposerslashing
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ProposerSlashing {
    pub signed_header_1: SignedBeaconBlockHeader,
    pub signed_header_2: SignedBeaconBlockHeader,
}

/// `SignedVoluntaryExit`: a signed `VoluntaryExit`.
///
/// [spec]: phase0/beacon-chain.md#signedvoluntaryexit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SignedVoluntaryExit {
    pub message: VoluntaryExit,
    pub signature: BLSSignature,
}

/// `Attestation`: an aggregatable vote by a committee, with its aggregate BLS signature.
///
/// [spec]: phase0/beacon-chain.md#attestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct Attestation<E: EthSpec> {
    pub aggregation_bits: BitList<E::MaxValidatorsPerCommittee>,
    pub data: AttestationData,
    pub signature: BLSSignature,
}

/// `AggregateAndProof`: an aggregator's aggregate attestation with its selection proof.
///
/// [spec]: phase0/validator.md#aggregateandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct AggregateAndProof<E: EthSpec> {
    pub aggregator_index: ValidatorIndex,
    pub aggregate: Attestation<E>,
    pub selection_proof: BLSSignature,
}

/// `SignedAggregateAndProof`: a signed `AggregateAndProof`.
///
/// [spec]: phase0/validator.md#signedaggregateandproof
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SignedAggregateAndProof<E: EthSpec> {
    pub message: AggregateAndProof<E>,
    pub signature: BLSSignature,
}

/// `DepositData`: a deposit as the deposit contract logs it.
///
/// [spec]: phase0/beacon-chain.md#depositdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DepositData {
    pub pubkey: BLSPubkey,
    pub withdrawal_credentials: Bytes32,
    pub amount: Gwei,
    pub signature: BLSSignature,
}

/// `Deposit`: a deposit with its Merkle proof against the deposit contract root.
///
/// [spec]: phase0/beacon-chain.md#deposit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Deposit {
    pub proof: FixedVector<Bytes32, typenum::U33>,
    pub data: DepositData,
}

/// `IndexedAttestation`: an attestation with its signers as sorted validator indices.
///
/// [spec]: phase0/beacon-chain.md#indexedattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct IndexedAttestation<E: EthSpec> {
    pub attesting_indices: VariableList<ValidatorIndex, E::MaxValidatorsPerCommittee>,
    pub data: AttestationData,
    pub signature: BLSSignature,
}

/// `AttesterSlashing`: two conflicting indexed attestations that slash their common signers.
///
/// [spec]: phase0/beacon-chain.md#attesterslashing
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct AttesterSlashing<E: EthSpec> {
    pub attestation_1: IndexedAttestation<E>,
    pub attestation_2: IndexedAttestation<E>,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: phase0/beacon-chain.md#beaconblockbody
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
}

/// `BeaconBlock`: a block: slot, proposer, parent and post-state roots, and the body.
///
/// [spec]: phase0/beacon-chain.md#beaconblock
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
/// [spec]: phase0/beacon-chain.md#signedbeaconblock
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
pub struct SignedBeaconBlock<E: EthSpec> {
    pub message: BeaconBlock<E>,
    pub signature: BLSSignature,
}
