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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fork {
    /// The fork version before the latest fork.
    pub previous_version: Version,
    /// The fork version in force since `epoch`.
    pub current_version: Version,
    /// The epoch the current version took effect.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub epoch: Epoch,
}

/// `VoluntaryExit`: a validator's request to exit.
///
/// [spec]: phase0/beacon-chain.md#voluntaryexit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VoluntaryExit {
    /// The earliest epoch at which the exit may be processed.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub epoch: Epoch,
    /// The exiting validator.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub validator_index: ValidatorIndex,
}

/// `Eth1Block`.
///
/// [spec]: phase0/validator.md#eth1block
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Eth1Block {
    /// The block's timestamp, in Unix seconds.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub timestamp: u64,
    /// The deposit contract's deposit tree root at this block.
    pub deposit_root: Root,
    /// The number of deposits made to the contract up to this block.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub deposit_count: u64,
}

/// `SigningData`: an object root with its domain: what a signature signs.
///
/// [spec]: phase0/beacon-chain.md#signingdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SigningData {
    /// Hash tree root of the signed object.
    pub object_root: Root,
    /// Domain that ties the signature to one purpose, fork and chain.
    pub domain: Domain,
}

/// `BeaconBlockHeader`: a block with its body replaced by the body root.
///
/// [spec]: phase0/beacon-chain.md#beaconblockheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BeaconBlockHeader {
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
    /// Hash tree root of the block body.
    pub body_root: Root,
}

/// `HistoricalBatch`: the block and state roots of one historical period.
///
/// [spec]: phase0/beacon-chain.md#historicalbatch
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct HistoricalBatch<E: EthSpec> {
    /// The block root of every slot of the period.
    pub block_roots: FixedVector<Root, E::SlotsPerHistoricalRoot>,
    /// The state root of every slot of the period.
    pub state_roots: FixedVector<Root, E::SlotsPerHistoricalRoot>,
}

/// `Checkpoint`: an epoch and the block root at its start.
///
/// [spec]: phase0/beacon-chain.md#checkpoint
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Checkpoint {
    /// The checkpoint's epoch.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub epoch: Epoch,
    /// Root of the block at the epoch's first slot (or the latest block before it).
    pub root: Root,
}

/// `AttestationData`: what an attestation votes for: slot, head block root, source and target checkpoints.
///
/// [spec]: phase0/beacon-chain.md#attestationdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AttestationData {
    /// The slot the attesting committee was assigned to.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub slot: Slot,
    /// The committee's index within the slot; 0 from Electra, where `committee_bits` names them.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub index: CommitteeIndex,
    /// The head block root the attester saw (LMD GHOST vote).
    pub beacon_block_root: Root,
    /// The justified checkpoint the vote links from (FFG source).
    pub source: Checkpoint,
    /// The checkpoint of the attestation's own epoch (FFG target).
    pub target: Checkpoint,
}

/// `PendingAttestation`: a phase0 attestation kept in the state until epoch processing.
///
/// [spec]: phase0/beacon-chain.md#pendingattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct PendingAttestation<E: EthSpec> {
    /// Which members of the committee attested.
    pub aggregation_bits: BitList<E::MaxValidatorsPerCommittee>,
    /// What the attesters voted for.
    pub data: AttestationData,
    /// Slots between the attestation's slot and the block that included it.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub inclusion_delay: Slot,
    /// Proposer of the block that included the attestation.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub proposer_index: ValidatorIndex,
}

/// `ForkData`: the data hashed into a fork digest and a signing domain.
///
/// [spec]: phase0/beacon-chain.md#forkdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ForkData {
    /// The fork version to name.
    pub current_version: Version,
    /// The chain's genesis validators root, which separates chains sharing a version.
    pub genesis_validators_root: Root,
}

/// `Eth1Data`.
///
/// [spec]: phase0/beacon-chain.md#eth1data
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Eth1Data {
    /// Root of the deposit contract's deposit tree.
    pub deposit_root: Root,
    /// The number of deposits in that tree.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub deposit_count: u64,
    /// Hash of the eth1 block the deposit tree was read at.
    pub block_hash: Hash32,
}

/// `DepositMessage`: the part of a deposit that its signature signs.
///
/// [spec]: phase0/beacon-chain.md#depositmessage
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DepositMessage {
    /// The BLS public key of the validator to create or top up.
    pub pubkey: BLSPubkey,
    /// Withdrawal credentials for a new validator.
    pub withdrawal_credentials: Bytes32,
    /// The amount deposited.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Validator {
    /// The validator's BLS public key.
    pub pubkey: BLSPubkey,
    /// Where withdrawals go: a prefix byte, then a BLS key hash (0x00) or an execution address.
    pub withdrawal_credentials: Bytes32,
    /// The validator's effective balance, a multiple of `EFFECTIVE_BALANCE_INCREMENT`.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub effective_balance: Gwei,
    /// Whether the validator has been slashed.
    pub slashed: bool,
    /// When the validator became eligible for the activation queue.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub activation_eligibility_epoch: Epoch,
    /// When the validator is or was activated; `FAR_FUTURE_EPOCH` until scheduled.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub activation_epoch: Epoch,
    /// When the validator exits; `FAR_FUTURE_EPOCH` until an exit is scheduled.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub exit_epoch: Epoch,
    /// When the validator's full balance becomes withdrawable.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub withdrawable_epoch: Epoch,
}

/// `BeaconState`: the whole consensus state at a slot.
///
/// [spec]: phase0/beacon-chain.md#beaconstate
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
    /// Attestations to the previous epoch included so far, kept for epoch processing.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub previous_epoch_attestations:
        milhouse::List<PendingAttestation<E>, E::MaxPendingAttestations>,
    /// Attestations to the current epoch included so far.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::arbitrary::milhouse_list))]
    pub current_epoch_attestations:
        milhouse::List<PendingAttestation<E>, E::MaxPendingAttestations>,
    /// Which of the last four epochs are justified, bit 0 the most recent.
    pub justification_bits: BitVector<typenum::U4>,
    /// The justified checkpoint before the latest justification update.
    pub previous_justified_checkpoint: Checkpoint,
    /// The latest justified checkpoint.
    pub current_justified_checkpoint: Checkpoint,
    /// The latest finalized checkpoint.
    pub finalized_checkpoint: Checkpoint,
}

/// `SignedBeaconBlockHeader`: a signed `BeaconBlockHeader`.
///
/// [spec]: phase0/beacon-chain.md#signedbeaconblockheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SignedBeaconBlockHeader {
    /// The header being signed.
    pub message: BeaconBlockHeader,
    /// The proposer's signature over `message`.
    pub signature: BLSSignature,
}

/// `ProposerSlashing`: two conflicting signed headers from one proposer for one slot.
///
/// [spec]: phase0/beacon-chain.md#proposerslashing
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ProposerSlashing {
    /// The first of two conflicting signed headers.
    pub signed_header_1: SignedBeaconBlockHeader,
    /// The second, for the same slot and proposer but a different block.
    pub signed_header_2: SignedBeaconBlockHeader,
}

/// `SignedVoluntaryExit`: a signed `VoluntaryExit`.
///
/// [spec]: phase0/beacon-chain.md#signedvoluntaryexit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SignedVoluntaryExit {
    /// The exit being signed.
    pub message: VoluntaryExit,
    /// The exiting validator's signature over `message`.
    pub signature: BLSSignature,
}

/// `Attestation`: an aggregatable vote by a committee, with its aggregate BLS signature.
///
/// [spec]: phase0/beacon-chain.md#attestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct Attestation<E: EthSpec> {
    /// Which members of the committee signed.
    pub aggregation_bits: BitList<E::MaxValidatorsPerCommittee>,
    /// What the attesters vote for.
    pub data: AttestationData,
    /// Aggregate BLS signature of the signers over `data`.
    pub signature: BLSSignature,
}

/// `AggregateAndProof`: an aggregator's aggregate attestation with its selection proof.
///
/// [spec]: phase0/validator.md#aggregateandproof
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
/// [spec]: phase0/validator.md#signedaggregateandproof
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

/// `DepositData`: a deposit as the deposit contract logs it.
///
/// [spec]: phase0/beacon-chain.md#depositdata
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DepositData {
    /// The BLS public key of the validator to create or top up.
    pub pubkey: BLSPubkey,
    /// Withdrawal credentials for a new validator.
    pub withdrawal_credentials: Bytes32,
    /// The amount deposited.
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub amount: Gwei,
    /// Proof of possession: the key's signature over the `DepositMessage`.
    pub signature: BLSSignature,
}

/// `Deposit`: a deposit with its Merkle proof against the deposit contract root.
///
/// [spec]: phase0/beacon-chain.md#deposit
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Deposit {
    /// Merkle branch of `data` against the deposit root; its last node is the mixed-in count.
    pub proof: FixedVector<Bytes32, typenum::U33>,
    /// The deposit as logged by the contract.
    pub data: DepositData,
}

/// `IndexedAttestation`: an attestation with its signers as sorted validator indices.
///
/// [spec]: phase0/beacon-chain.md#indexedattestation
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct IndexedAttestation<E: EthSpec> {
    /// Validator indices of the signers, sorted ascending.
    #[cfg_attr(
        feature = "serde",
        serde(with = "ssz_types::serde_utils::quoted_u64_var_list")
    )]
    pub attesting_indices: VariableList<ValidatorIndex, E::MaxValidatorsPerCommittee>,
    /// What the attesters vote for.
    pub data: AttestationData,
    /// Aggregate BLS signature of the attesters over `data`.
    pub signature: BLSSignature,
}

/// `AttesterSlashing`: two conflicting indexed attestations that slash their common signers.
///
/// [spec]: phase0/beacon-chain.md#attesterslashing
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct AttesterSlashing<E: EthSpec> {
    /// The first of two conflicting attestations.
    pub attestation_1: IndexedAttestation<E>,
    /// The second, a double or surround vote with respect to the first.
    pub attestation_2: IndexedAttestation<E>,
}

/// `BeaconBlockBody`: the operations, votes and payload a block carries.
///
/// [spec]: phase0/beacon-chain.md#beaconblockbody
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
}

/// `BeaconBlock`: a block: slot, proposer, parent and post-state roots, and the body.
///
/// [spec]: phase0/beacon-chain.md#beaconblock
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
/// [spec]: phase0/beacon-chain.md#signedbeaconblock
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
