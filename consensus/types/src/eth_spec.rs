//! Presets as types: every SSZ list and vector limit is a `typenum` so container sizes are static.
//!
//! [spec]: presets/mainnet/*.yaml and presets/minimal/*.yaml of the consensus specs.

use std::fmt::Debug;

use typenum::{
    U1, U2, U4, U8, U16, U17, U24, U32, U64, U96, U128, U256, U512, U1024, U2048, U4096, U8192,
    U65536, U131072, U262144, U1048576, U16777216, U134217728, U1073741824, U1099511627776,
    Unsigned,
};

/// What every SSZ limit of a preset is: a `typenum` unsigned integer that is also a plain value
/// type, so containers generic over a preset can derive `Clone`, `Copy`, `Debug`, `Default`,
/// `Eq` and `Hash` and cross threads. Said once here, with the blanket impl below, instead of on
/// each of [`EthSpec`]'s associated types.
pub trait PresetUnsigned:
    Unsigned + Clone + Copy + Debug + Default + PartialEq + Eq + std::hash::Hash + Send + Sync + 'static
{
}

impl<T> PresetUnsigned for T where
    T: Unsigned
        + Clone
        + Copy
        + Debug
        + Default
        + PartialEq
        + Eq
        + std::hash::Hash
        + Send
        + Sync
        + 'static
{
}

/// A preset: the compile-time half of the consensus configuration.
///
/// Associated types are the preset's SSZ limits (each a [`PresetUnsigned`]); associated
/// constants are its other values.
pub trait EthSpec:
    'static + Default + Clone + Copy + Debug + PartialEq + Eq + Send + Sync + std::hash::Hash
{
    /// The preset's name as the spec writes it (`mainnet`, `minimal`).
    const PRESET_BASE: &'static str;

    // phase0
    /// MAX_COMMITTEES_PER_SLOT: the most beacon committees in one slot.
    type MaxCommitteesPerSlot: PresetUnsigned;
    /// MAX_VALIDATORS_PER_COMMITTEE: the most validators in one committee.
    type MaxValidatorsPerCommittee: PresetUnsigned;
    /// SLOTS_PER_EPOCH: the slots in one epoch.
    type SlotsPerEpoch: PresetUnsigned;
    /// `EPOCHS_PER_ETH1_VOTING_PERIOD * SLOTS_PER_EPOCH`: the most `eth1_data_votes`.
    type SlotsPerEth1VotingPeriod: PresetUnsigned;
    /// SLOTS_PER_HISTORICAL_ROOT: the slots of roots kept in `block_roots` and `state_roots`.
    type SlotsPerHistoricalRoot: PresetUnsigned;
    /// EPOCHS_PER_HISTORICAL_VECTOR: the epochs of randao mixes kept in `randao_mixes`.
    type EpochsPerHistoricalVector: PresetUnsigned;
    /// EPOCHS_PER_SLASHINGS_VECTOR: the epochs of slashed balance summed in `slashings`.
    type EpochsPerSlashingsVector: PresetUnsigned;
    /// HISTORICAL_ROOTS_LIMIT: the most `historical_roots` (and `historical_summaries`).
    type HistoricalRootsLimit: PresetUnsigned;
    /// VALIDATOR_REGISTRY_LIMIT: the most validators (and balances) a state holds.
    type ValidatorRegistryLimit: PresetUnsigned;
    /// MAX_PROPOSER_SLASHINGS: the most proposer slashings in one block.
    type MaxProposerSlashings: PresetUnsigned;
    /// MAX_ATTESTER_SLASHINGS: the most attester slashings in one block before Electra.
    type MaxAttesterSlashings: PresetUnsigned;
    /// MAX_ATTESTATIONS: the most attestations in one block before Electra.
    type MaxAttestations: PresetUnsigned;
    /// MAX_DEPOSITS: the most eth1 deposits in one block.
    type MaxDeposits: PresetUnsigned;
    /// MAX_VOLUNTARY_EXITS: the most voluntary exits in one block.
    type MaxVoluntaryExits: PresetUnsigned;
    /// `MAX_ATTESTATIONS * SLOTS_PER_EPOCH`: phase0 pending attestations per epoch.
    type MaxPendingAttestations: PresetUnsigned;
    // altair
    /// SYNC_COMMITTEE_SIZE: the validators in one sync committee.
    type SyncCommitteeSize: PresetUnsigned;
    /// `SYNC_COMMITTEE_SIZE // SYNC_COMMITTEE_SUBNET_COUNT`.
    type SyncSubcommitteeSize: PresetUnsigned;
    // bellatrix
    /// MAX_BYTES_PER_TRANSACTION: the most bytes of one execution transaction.
    type MaxBytesPerTransaction: PresetUnsigned;
    /// MAX_TRANSACTIONS_PER_PAYLOAD: the most transactions in one execution payload.
    type MaxTransactionsPerPayload: PresetUnsigned;
    /// BYTES_PER_LOGS_BLOOM: the length in bytes of an execution payload's `logs_bloom`.
    type BytesPerLogsBloom: PresetUnsigned;
    /// MAX_EXTRA_DATA_BYTES: the most bytes of an execution payload's `extra_data`.
    type MaxExtraDataBytes: PresetUnsigned;
    // capella
    /// MAX_BLS_TO_EXECUTION_CHANGES: the most withdrawal credential changes in one block.
    type MaxBlsToExecutionChanges: PresetUnsigned;
    /// MAX_WITHDRAWALS_PER_PAYLOAD: the most withdrawals in one execution payload.
    type MaxWithdrawalsPerPayload: PresetUnsigned;
    // deneb
    /// MAX_BLOB_COMMITMENTS_PER_BLOCK: the SSZ limit of `blob_kzg_commitments`.
    type MaxBlobCommitmentsPerBlock: PresetUnsigned;
    /// KZG_COMMITMENT_INCLUSION_PROOF_DEPTH: a blob sidecar's commitment branch length.
    type KzgCommitmentInclusionProofDepth: PresetUnsigned;
    /// FIELD_ELEMENTS_PER_BLOB: the field elements in one blob.
    type FieldElementsPerBlob: PresetUnsigned;
    /// `BYTES_PER_FIELD_ELEMENT * FIELD_ELEMENTS_PER_BLOB`.
    type BytesPerBlob: PresetUnsigned;
    // electra
    /// PENDING_DEPOSITS_LIMIT: the most entries of `pending_deposits`.
    type PendingDepositsLimit: PresetUnsigned;
    /// PENDING_PARTIAL_WITHDRAWALS_LIMIT: the most entries of `pending_partial_withdrawals`.
    type PendingPartialWithdrawalsLimit: PresetUnsigned;
    /// PENDING_CONSOLIDATIONS_LIMIT: the most entries of `pending_consolidations`.
    type PendingConsolidationsLimit: PresetUnsigned;
    /// MAX_ATTESTER_SLASHINGS_ELECTRA: the most attester slashings in one block from Electra on.
    type MaxAttesterSlashingsElectra: PresetUnsigned;
    /// MAX_ATTESTATIONS_ELECTRA: the most attestations in one block from Electra on.
    type MaxAttestationsElectra: PresetUnsigned;
    /// MAX_DEPOSIT_REQUESTS_PER_PAYLOAD: the most deposit requests in one block.
    type MaxDepositRequestsPerPayload: PresetUnsigned;
    /// MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD: the most withdrawal requests in one block.
    type MaxWithdrawalRequestsPerPayload: PresetUnsigned;
    /// MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD: the most consolidation requests in a block.
    type MaxConsolidationRequestsPerPayload: PresetUnsigned;
    /// `MAX_VALIDATORS_PER_COMMITTEE * MAX_COMMITTEES_PER_SLOT`.
    type MaxValidatorsPerSlot: PresetUnsigned;
    // fulu
    /// KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH: a column sidecar's commitments branch length.
    type KzgCommitmentsInclusionProofDepth: PresetUnsigned;
    /// FIELD_ELEMENTS_PER_CELL: the field elements in one cell.
    type FieldElementsPerCell: PresetUnsigned;
    /// `BYTES_PER_FIELD_ELEMENT * FIELD_ELEMENTS_PER_CELL`.
    type BytesPerCell: PresetUnsigned;
    /// FIELD_ELEMENTS_PER_EXT_BLOB: the field elements in an erasure-coded (extended) blob.
    type FieldElementsPerExtBlob: PresetUnsigned;
    /// CELLS_PER_EXT_BLOB: the cells an extended blob is split into.
    type CellsPerExtBlob: PresetUnsigned;
    /// NUMBER_OF_COLUMNS: the data columns of a block, each one cell of every blob.
    type NumberOfColumns: PresetUnsigned;
    /// `(MIN_SEED_LOOKAHEAD + 1) * SLOTS_PER_EPOCH`: the Fulu proposer lookahead.
    type ProposerLookaheadSlots: PresetUnsigned;
    // gloas
    /// PTC_SIZE: the validators in one slot's payload timeliness committee.
    type PtcSize: PresetUnsigned;
    /// `(2 + MIN_SEED_LOOKAHEAD) * SLOTS_PER_EPOCH`: the slots of PTCs kept in `ptc_window`.
    type PtcWindowSlots: PresetUnsigned;
    /// `2 * SLOTS_PER_EPOCH`: the slots of builder payments kept in `builder_pending_payments`.
    type BuilderPendingPaymentsLength: PresetUnsigned;

    // Non-SSZ preset values.
    /// TARGET_COMMITTEE_SIZE: the committee size the committee count per slot aims for.
    const TARGET_COMMITTEE_SIZE: u64;
    /// SHUFFLE_ROUND_COUNT: the rounds of the swap-or-not shuffle in `compute_shuffled_index`.
    const SHUFFLE_ROUND_COUNT: u8;
    /// HYSTERESIS_QUOTIENT: the hysteresis step is `EFFECTIVE_BALANCE_INCREMENT` / this.
    const HYSTERESIS_QUOTIENT: u64;
    /// HYSTERESIS_DOWNWARD_MULTIPLIER: a balance this many steps below the effective one lowers it.
    const HYSTERESIS_DOWNWARD_MULTIPLIER: u64;
    /// HYSTERESIS_UPWARD_MULTIPLIER: a balance this many steps above the effective one raises it.
    const HYSTERESIS_UPWARD_MULTIPLIER: u64;
    /// MIN_DEPOSIT_AMOUNT: the smallest deposit the deposit contract takes, in Gwei.
    const MIN_DEPOSIT_AMOUNT: u64;
    /// MAX_EFFECTIVE_BALANCE: the effective balance cap before Electra, in Gwei.
    const MAX_EFFECTIVE_BALANCE: u64;
    /// EFFECTIVE_BALANCE_INCREMENT: effective balances are multiples of this, in Gwei.
    const EFFECTIVE_BALANCE_INCREMENT: u64;
    /// MIN_ATTESTATION_INCLUSION_DELAY: slots after its own before an attestation can be included.
    const MIN_ATTESTATION_INCLUSION_DELAY: u64;
    /// MIN_SEED_LOOKAHEAD: the epochs between a randao mix and the committees it seeds.
    const MIN_SEED_LOOKAHEAD: u64;
    /// MAX_SEED_LOOKAHEAD: activations and exits take effect at `epoch + 1 + this`.
    const MAX_SEED_LOOKAHEAD: u64;
    /// EPOCHS_PER_ETH1_VOTING_PERIOD: the epochs of one eth1 data voting period.
    const EPOCHS_PER_ETH1_VOTING_PERIOD: u64;
    /// MIN_EPOCHS_TO_INACTIVITY_PENALTY: epochs without finality before the leak starts.
    const MIN_EPOCHS_TO_INACTIVITY_PENALTY: u64;
    /// BASE_REWARD_FACTOR: the reward per increment is increment * this / sqrt(total balance).
    const BASE_REWARD_FACTOR: u64;
    /// WHISTLEBLOWER_REWARD_QUOTIENT: to Deneb, a whistleblower gets effective balance / this.
    const WHISTLEBLOWER_REWARD_QUOTIENT: u64;
    /// PROPOSER_REWARD_QUOTIENT: a phase0 proposer gets attesters' base reward / this.
    const PROPOSER_REWARD_QUOTIENT: u64;
    /// INACTIVITY_PENALTY_QUOTIENT: the phase0 leak takes balance * finality delay / this.
    const INACTIVITY_PENALTY_QUOTIENT: u64;
    /// MIN_SLASHING_PENALTY_QUOTIENT: the phase0 initial penalty is effective balance / this.
    const MIN_SLASHING_PENALTY_QUOTIENT: u64;
    /// PROPORTIONAL_SLASHING_MULTIPLIER: scales `sum(slashings)` in phase0's `process_slashings`.
    const PROPORTIONAL_SLASHING_MULTIPLIER: u64;
    /// INACTIVITY_PENALTY_QUOTIENT_ALTAIR: the leak takes balance * score / (bias * this).
    const INACTIVITY_PENALTY_QUOTIENT_ALTAIR: u64;
    /// MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR: the initial penalty is effective balance / this.
    const MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR: u64;
    /// PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR: scales `sum(slashings)` in `process_slashings`.
    const PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR: u64;
    /// EPOCHS_PER_SYNC_COMMITTEE_PERIOD: the epochs one sync committee serves.
    const EPOCHS_PER_SYNC_COMMITTEE_PERIOD: u64;
    /// MIN_SYNC_COMMITTEE_PARTICIPANTS: the fewest signers a light client update needs.
    const MIN_SYNC_COMMITTEE_PARTICIPANTS: u64;
    /// UPDATE_TIMEOUT: slots after its finalized header before a light client forces an update.
    const UPDATE_TIMEOUT: u64;
    /// INACTIVITY_PENALTY_QUOTIENT_BELLATRIX: the leak takes balance * score / (bias * this).
    const INACTIVITY_PENALTY_QUOTIENT_BELLATRIX: u64;
    /// MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX: the initial penalty is effective balance / this.
    const MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX: u64;
    /// PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX: scales `sum(slashings)` in `process_slashings`.
    const PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX: u64;
    /// MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP: validators one withdrawals sweep visits.
    const MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP: u64;
    /// MIN_ACTIVATION_BALANCE: the effective balance to activate, and the 0x00/0x01 cap, in Gwei.
    const MIN_ACTIVATION_BALANCE: u64;
    /// MAX_EFFECTIVE_BALANCE_ELECTRA: the effective balance cap of 0x02 credentials, in Gwei.
    const MAX_EFFECTIVE_BALANCE_ELECTRA: u64;
    /// MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA: the initial penalty is effective balance / this.
    const MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA: u64;
    /// WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA: a whistleblower gets effective balance / this.
    const WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA: u64;
    /// MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP: the most pending partials one block withdraws.
    const MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP: u64;
    /// MAX_PENDING_DEPOSITS_PER_EPOCH: the most pending deposits one epoch processes.
    const MAX_PENDING_DEPOSITS_PER_EPOCH: u64;
    /// MAX_PAYLOAD_ATTESTATIONS: the most payload attestations in one Gloas block.
    const MAX_PAYLOAD_ATTESTATIONS: u64;
    /// MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD: the most builder deposit requests in one payload.
    const MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD: u64;
    /// MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD: the most builder exit requests in one payload.
    const MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD: u64;
    /// MAX_BUILDERS_PER_WITHDRAWALS_SWEEP: builders one withdrawals sweep visits.
    const MAX_BUILDERS_PER_WITHDRAWALS_SWEEP: u64;
    /// MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE: the largest Gloas `SignedAggregateAndProof`, in
    /// bytes (its lists are unbounded since EIP-7688).
    const MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE: u64;
    /// MAX_ATTESTER_SLASHING_SIZE: the largest Gloas `AttesterSlashing`, in bytes.
    const MAX_ATTESTER_SLASHING_SIZE: u64;
    /// MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE: the largest `SignedExecutionPayloadBid`, in bytes.
    const MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE: u64;

    /// `SLOTS_PER_EPOCH` as a value.
    fn slots_per_epoch() -> u64 {
        Self::SlotsPerEpoch::to_u64()
    }
}

/// The mainnet preset.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MainnetEthSpec;

/// The minimal preset, used by the spec tests and small devnets.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MinimalEthSpec;

impl EthSpec for MainnetEthSpec {
    const PRESET_BASE: &'static str = "mainnet";

    type MaxCommitteesPerSlot = U64;
    type MaxValidatorsPerCommittee = U2048;
    type SlotsPerEpoch = U32;
    type SlotsPerEth1VotingPeriod = U2048;
    type SlotsPerHistoricalRoot = U8192;
    type EpochsPerHistoricalVector = U65536;
    type EpochsPerSlashingsVector = U8192;
    type HistoricalRootsLimit = U16777216;
    type ValidatorRegistryLimit = U1099511627776;
    type MaxProposerSlashings = U16;
    type MaxAttesterSlashings = U2;
    type MaxAttestations = U128;
    type MaxDeposits = U16;
    type MaxVoluntaryExits = U16;
    type MaxPendingAttestations = U4096;
    type SyncCommitteeSize = U512;
    type SyncSubcommitteeSize = U128;
    type MaxBytesPerTransaction = U1073741824;
    type MaxTransactionsPerPayload = U1048576;
    type BytesPerLogsBloom = U256;
    type MaxExtraDataBytes = U32;
    type MaxBlsToExecutionChanges = U16;
    type MaxWithdrawalsPerPayload = U16;
    type MaxBlobCommitmentsPerBlock = U4096;
    type KzgCommitmentInclusionProofDepth = U17;
    type FieldElementsPerBlob = U4096;
    type BytesPerBlob = U131072;
    type PendingDepositsLimit = U134217728;
    type PendingPartialWithdrawalsLimit = U134217728;
    type PendingConsolidationsLimit = U262144;
    type MaxAttesterSlashingsElectra = U1;
    type MaxAttestationsElectra = U8;
    type MaxDepositRequestsPerPayload = U8192;
    type MaxWithdrawalRequestsPerPayload = U16;
    type MaxConsolidationRequestsPerPayload = U2;
    type MaxValidatorsPerSlot = U131072;
    type KzgCommitmentsInclusionProofDepth = U4;
    type FieldElementsPerCell = U64;
    type BytesPerCell = U2048;
    type FieldElementsPerExtBlob = U8192;
    type CellsPerExtBlob = U128;
    type NumberOfColumns = U128;
    type ProposerLookaheadSlots = U64;
    type PtcSize = U512;
    type PtcWindowSlots = U96;
    type BuilderPendingPaymentsLength = U64;

    const TARGET_COMMITTEE_SIZE: u64 = 128;
    const SHUFFLE_ROUND_COUNT: u8 = 90;
    const HYSTERESIS_QUOTIENT: u64 = 4;
    const HYSTERESIS_DOWNWARD_MULTIPLIER: u64 = 1;
    const HYSTERESIS_UPWARD_MULTIPLIER: u64 = 5;
    const MIN_DEPOSIT_AMOUNT: u64 = 1_000_000_000;
    const MAX_EFFECTIVE_BALANCE: u64 = 32_000_000_000;
    const EFFECTIVE_BALANCE_INCREMENT: u64 = 1_000_000_000;
    const MIN_ATTESTATION_INCLUSION_DELAY: u64 = 1;
    const MIN_SEED_LOOKAHEAD: u64 = 1;
    const MAX_SEED_LOOKAHEAD: u64 = 4;
    const EPOCHS_PER_ETH1_VOTING_PERIOD: u64 = 64;
    const MIN_EPOCHS_TO_INACTIVITY_PENALTY: u64 = 4;
    const BASE_REWARD_FACTOR: u64 = 64;
    const WHISTLEBLOWER_REWARD_QUOTIENT: u64 = 512;
    const PROPOSER_REWARD_QUOTIENT: u64 = 8;
    const INACTIVITY_PENALTY_QUOTIENT: u64 = 67_108_864;
    const MIN_SLASHING_PENALTY_QUOTIENT: u64 = 128;
    const PROPORTIONAL_SLASHING_MULTIPLIER: u64 = 1;
    const INACTIVITY_PENALTY_QUOTIENT_ALTAIR: u64 = 50_331_648;
    const MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR: u64 = 64;
    const PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR: u64 = 2;
    const EPOCHS_PER_SYNC_COMMITTEE_PERIOD: u64 = 256;
    const MIN_SYNC_COMMITTEE_PARTICIPANTS: u64 = 1;
    const UPDATE_TIMEOUT: u64 = 8192;
    const INACTIVITY_PENALTY_QUOTIENT_BELLATRIX: u64 = 16_777_216;
    const MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX: u64 = 32;
    const PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX: u64 = 3;
    const MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP: u64 = 16384;
    const MIN_ACTIVATION_BALANCE: u64 = 32_000_000_000;
    const MAX_EFFECTIVE_BALANCE_ELECTRA: u64 = 2_048_000_000_000;
    const MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA: u64 = 4096;
    const WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA: u64 = 4096;
    const MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP: u64 = 8;
    const MAX_PENDING_DEPOSITS_PER_EPOCH: u64 = 16;
    const MAX_PAYLOAD_ATTESTATIONS: u64 = 4;
    const MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD: u64 = 64;
    const MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD: u64 = 16;
    const MAX_BUILDERS_PER_WITHDRAWALS_SWEEP: u64 = 16_384;
    const MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE: u64 = 16_829;
    const MAX_ATTESTER_SLASHING_SIZE: u64 = 2_097_616;
    const MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE: u64 = 196_932;
}

impl EthSpec for MinimalEthSpec {
    const PRESET_BASE: &'static str = "minimal";

    type MaxCommitteesPerSlot = U4;
    type MaxValidatorsPerCommittee = U2048;
    type SlotsPerEpoch = U8;
    type SlotsPerEth1VotingPeriod = U32;
    type SlotsPerHistoricalRoot = U64;
    type EpochsPerHistoricalVector = U64;
    type EpochsPerSlashingsVector = U64;
    type HistoricalRootsLimit = U16777216;
    type ValidatorRegistryLimit = U1099511627776;
    type MaxProposerSlashings = U16;
    type MaxAttesterSlashings = U2;
    type MaxAttestations = U128;
    type MaxDeposits = U16;
    type MaxVoluntaryExits = U16;
    type MaxPendingAttestations = U1024;
    type SyncCommitteeSize = U32;
    type SyncSubcommitteeSize = U8;
    type MaxBytesPerTransaction = U1073741824;
    type MaxTransactionsPerPayload = U1048576;
    type BytesPerLogsBloom = U256;
    type MaxExtraDataBytes = U32;
    type MaxBlsToExecutionChanges = U16;
    type MaxWithdrawalsPerPayload = U4;
    type MaxBlobCommitmentsPerBlock = U4096;
    type KzgCommitmentInclusionProofDepth = U17;
    type FieldElementsPerBlob = U4096;
    type BytesPerBlob = U131072;
    type PendingDepositsLimit = U134217728;
    type PendingPartialWithdrawalsLimit = U64;
    type PendingConsolidationsLimit = U64;
    type MaxAttesterSlashingsElectra = U1;
    type MaxAttestationsElectra = U8;
    type MaxDepositRequestsPerPayload = U8192;
    type MaxWithdrawalRequestsPerPayload = U16;
    type MaxConsolidationRequestsPerPayload = U2;
    type MaxValidatorsPerSlot = U8192;
    type KzgCommitmentsInclusionProofDepth = U4;
    type FieldElementsPerCell = U64;
    type BytesPerCell = U2048;
    type FieldElementsPerExtBlob = U8192;
    type CellsPerExtBlob = U128;
    type NumberOfColumns = U128;
    type ProposerLookaheadSlots = U16;
    type PtcSize = U16;
    type PtcWindowSlots = U24;
    type BuilderPendingPaymentsLength = U16;

    const TARGET_COMMITTEE_SIZE: u64 = 4;
    const SHUFFLE_ROUND_COUNT: u8 = 10;
    const HYSTERESIS_QUOTIENT: u64 = 4;
    const HYSTERESIS_DOWNWARD_MULTIPLIER: u64 = 1;
    const HYSTERESIS_UPWARD_MULTIPLIER: u64 = 5;
    const MIN_DEPOSIT_AMOUNT: u64 = 1_000_000_000;
    const MAX_EFFECTIVE_BALANCE: u64 = 32_000_000_000;
    const EFFECTIVE_BALANCE_INCREMENT: u64 = 1_000_000_000;
    const MIN_ATTESTATION_INCLUSION_DELAY: u64 = 1;
    const MIN_SEED_LOOKAHEAD: u64 = 1;
    const MAX_SEED_LOOKAHEAD: u64 = 4;
    const EPOCHS_PER_ETH1_VOTING_PERIOD: u64 = 4;
    const MIN_EPOCHS_TO_INACTIVITY_PENALTY: u64 = 4;
    const BASE_REWARD_FACTOR: u64 = 64;
    const WHISTLEBLOWER_REWARD_QUOTIENT: u64 = 512;
    const PROPOSER_REWARD_QUOTIENT: u64 = 8;
    const INACTIVITY_PENALTY_QUOTIENT: u64 = 33_554_432;
    const MIN_SLASHING_PENALTY_QUOTIENT: u64 = 64;
    const PROPORTIONAL_SLASHING_MULTIPLIER: u64 = 2;
    const INACTIVITY_PENALTY_QUOTIENT_ALTAIR: u64 = 50_331_648;
    const MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR: u64 = 64;
    const PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR: u64 = 2;
    const EPOCHS_PER_SYNC_COMMITTEE_PERIOD: u64 = 8;
    const MIN_SYNC_COMMITTEE_PARTICIPANTS: u64 = 1;
    const UPDATE_TIMEOUT: u64 = 64;
    const INACTIVITY_PENALTY_QUOTIENT_BELLATRIX: u64 = 16_777_216;
    const MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX: u64 = 32;
    const PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX: u64 = 3;
    const MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP: u64 = 16;
    const MIN_ACTIVATION_BALANCE: u64 = 32_000_000_000;
    const MAX_EFFECTIVE_BALANCE_ELECTRA: u64 = 2_048_000_000_000;
    const MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA: u64 = 4096;
    const WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA: u64 = 4096;
    const MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP: u64 = 2;
    const MAX_PENDING_DEPOSITS_PER_EPOCH: u64 = 16;
    const MAX_PAYLOAD_ATTESTATIONS: u64 = 4;
    const MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD: u64 = 64;
    const MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD: u64 = 16;
    const MAX_BUILDERS_PER_WITHDRAWALS_SWEEP: u64 = 16;
    const MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE: u64 = 1_462;
    const MAX_ATTESTER_SLASHING_SIZE: u64 = 131_536;
    const MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE: u64 = 196_932;
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    /// Every preset value this crate defines, by its spec name.
    fn preset_values<E: EthSpec>() -> BTreeMap<&'static str, u64> {
        BTreeMap::from([
            ("MAX_COMMITTEES_PER_SLOT", E::MaxCommitteesPerSlot::to_u64()),
            ("TARGET_COMMITTEE_SIZE", E::TARGET_COMMITTEE_SIZE),
            (
                "MAX_VALIDATORS_PER_COMMITTEE",
                E::MaxValidatorsPerCommittee::to_u64(),
            ),
            ("SHUFFLE_ROUND_COUNT", u64::from(E::SHUFFLE_ROUND_COUNT)),
            ("HYSTERESIS_QUOTIENT", E::HYSTERESIS_QUOTIENT),
            (
                "HYSTERESIS_DOWNWARD_MULTIPLIER",
                E::HYSTERESIS_DOWNWARD_MULTIPLIER,
            ),
            (
                "HYSTERESIS_UPWARD_MULTIPLIER",
                E::HYSTERESIS_UPWARD_MULTIPLIER,
            ),
            ("MIN_DEPOSIT_AMOUNT", E::MIN_DEPOSIT_AMOUNT),
            ("MAX_EFFECTIVE_BALANCE", E::MAX_EFFECTIVE_BALANCE),
            (
                "EFFECTIVE_BALANCE_INCREMENT",
                E::EFFECTIVE_BALANCE_INCREMENT,
            ),
            (
                "MIN_ATTESTATION_INCLUSION_DELAY",
                E::MIN_ATTESTATION_INCLUSION_DELAY,
            ),
            ("SLOTS_PER_EPOCH", E::SlotsPerEpoch::to_u64()),
            ("MIN_SEED_LOOKAHEAD", E::MIN_SEED_LOOKAHEAD),
            ("MAX_SEED_LOOKAHEAD", E::MAX_SEED_LOOKAHEAD),
            (
                "EPOCHS_PER_ETH1_VOTING_PERIOD",
                E::EPOCHS_PER_ETH1_VOTING_PERIOD,
            ),
            (
                "SLOTS_PER_HISTORICAL_ROOT",
                E::SlotsPerHistoricalRoot::to_u64(),
            ),
            (
                "MIN_EPOCHS_TO_INACTIVITY_PENALTY",
                E::MIN_EPOCHS_TO_INACTIVITY_PENALTY,
            ),
            (
                "EPOCHS_PER_HISTORICAL_VECTOR",
                E::EpochsPerHistoricalVector::to_u64(),
            ),
            (
                "EPOCHS_PER_SLASHINGS_VECTOR",
                E::EpochsPerSlashingsVector::to_u64(),
            ),
            ("HISTORICAL_ROOTS_LIMIT", E::HistoricalRootsLimit::to_u64()),
            (
                "VALIDATOR_REGISTRY_LIMIT",
                E::ValidatorRegistryLimit::to_u64(),
            ),
            ("BASE_REWARD_FACTOR", E::BASE_REWARD_FACTOR),
            (
                "WHISTLEBLOWER_REWARD_QUOTIENT",
                E::WHISTLEBLOWER_REWARD_QUOTIENT,
            ),
            ("PROPOSER_REWARD_QUOTIENT", E::PROPOSER_REWARD_QUOTIENT),
            (
                "INACTIVITY_PENALTY_QUOTIENT",
                E::INACTIVITY_PENALTY_QUOTIENT,
            ),
            (
                "MIN_SLASHING_PENALTY_QUOTIENT",
                E::MIN_SLASHING_PENALTY_QUOTIENT,
            ),
            (
                "PROPORTIONAL_SLASHING_MULTIPLIER",
                E::PROPORTIONAL_SLASHING_MULTIPLIER,
            ),
            ("MAX_PROPOSER_SLASHINGS", E::MaxProposerSlashings::to_u64()),
            ("MAX_ATTESTER_SLASHINGS", E::MaxAttesterSlashings::to_u64()),
            ("MAX_ATTESTATIONS", E::MaxAttestations::to_u64()),
            ("MAX_DEPOSITS", E::MaxDeposits::to_u64()),
            ("MAX_VOLUNTARY_EXITS", E::MaxVoluntaryExits::to_u64()),
            (
                "INACTIVITY_PENALTY_QUOTIENT_ALTAIR",
                E::INACTIVITY_PENALTY_QUOTIENT_ALTAIR,
            ),
            (
                "MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR",
                E::MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR,
            ),
            (
                "PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR",
                E::PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR,
            ),
            ("SYNC_COMMITTEE_SIZE", E::SyncCommitteeSize::to_u64()),
            (
                "EPOCHS_PER_SYNC_COMMITTEE_PERIOD",
                E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD,
            ),
            (
                "MIN_SYNC_COMMITTEE_PARTICIPANTS",
                E::MIN_SYNC_COMMITTEE_PARTICIPANTS,
            ),
            ("UPDATE_TIMEOUT", E::UPDATE_TIMEOUT),
            (
                "INACTIVITY_PENALTY_QUOTIENT_BELLATRIX",
                E::INACTIVITY_PENALTY_QUOTIENT_BELLATRIX,
            ),
            (
                "MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX",
                E::MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX,
            ),
            (
                "PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX",
                E::PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX,
            ),
            (
                "MAX_BYTES_PER_TRANSACTION",
                E::MaxBytesPerTransaction::to_u64(),
            ),
            (
                "MAX_TRANSACTIONS_PER_PAYLOAD",
                E::MaxTransactionsPerPayload::to_u64(),
            ),
            ("BYTES_PER_LOGS_BLOOM", E::BytesPerLogsBloom::to_u64()),
            ("MAX_EXTRA_DATA_BYTES", E::MaxExtraDataBytes::to_u64()),
            (
                "MAX_BLS_TO_EXECUTION_CHANGES",
                E::MaxBlsToExecutionChanges::to_u64(),
            ),
            (
                "MAX_WITHDRAWALS_PER_PAYLOAD",
                E::MaxWithdrawalsPerPayload::to_u64(),
            ),
            (
                "MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP",
                E::MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP,
            ),
            (
                "MAX_BLOB_COMMITMENTS_PER_BLOCK",
                E::MaxBlobCommitmentsPerBlock::to_u64(),
            ),
            (
                "KZG_COMMITMENT_INCLUSION_PROOF_DEPTH",
                E::KzgCommitmentInclusionProofDepth::to_u64(),
            ),
            ("FIELD_ELEMENTS_PER_BLOB", E::FieldElementsPerBlob::to_u64()),
            ("MIN_ACTIVATION_BALANCE", E::MIN_ACTIVATION_BALANCE),
            (
                "MAX_EFFECTIVE_BALANCE_ELECTRA",
                E::MAX_EFFECTIVE_BALANCE_ELECTRA,
            ),
            (
                "MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA",
                E::MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA,
            ),
            (
                "WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA",
                E::WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA,
            ),
            ("PENDING_DEPOSITS_LIMIT", E::PendingDepositsLimit::to_u64()),
            (
                "PENDING_PARTIAL_WITHDRAWALS_LIMIT",
                E::PendingPartialWithdrawalsLimit::to_u64(),
            ),
            (
                "PENDING_CONSOLIDATIONS_LIMIT",
                E::PendingConsolidationsLimit::to_u64(),
            ),
            (
                "MAX_ATTESTER_SLASHINGS_ELECTRA",
                E::MaxAttesterSlashingsElectra::to_u64(),
            ),
            (
                "MAX_ATTESTATIONS_ELECTRA",
                E::MaxAttestationsElectra::to_u64(),
            ),
            (
                "MAX_DEPOSIT_REQUESTS_PER_PAYLOAD",
                E::MaxDepositRequestsPerPayload::to_u64(),
            ),
            (
                "MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD",
                E::MaxWithdrawalRequestsPerPayload::to_u64(),
            ),
            (
                "MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD",
                E::MaxConsolidationRequestsPerPayload::to_u64(),
            ),
            (
                "MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP",
                E::MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP,
            ),
            (
                "MAX_PENDING_DEPOSITS_PER_EPOCH",
                E::MAX_PENDING_DEPOSITS_PER_EPOCH,
            ),
            (
                "KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH",
                E::KzgCommitmentsInclusionProofDepth::to_u64(),
            ),
            ("FIELD_ELEMENTS_PER_CELL", E::FieldElementsPerCell::to_u64()),
            (
                "FIELD_ELEMENTS_PER_EXT_BLOB",
                E::FieldElementsPerExtBlob::to_u64(),
            ),
            ("CELLS_PER_EXT_BLOB", E::CellsPerExtBlob::to_u64()),
            ("NUMBER_OF_COLUMNS", E::NumberOfColumns::to_u64()),
            ("PTC_SIZE", E::PtcSize::to_u64()),
            ("MAX_PAYLOAD_ATTESTATIONS", E::MAX_PAYLOAD_ATTESTATIONS),
            (
                "MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD",
                E::MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD,
            ),
            (
                "MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD",
                E::MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD,
            ),
            (
                "MAX_BUILDERS_PER_WITHDRAWALS_SWEEP",
                E::MAX_BUILDERS_PER_WITHDRAWALS_SWEEP,
            ),
            (
                "MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE",
                E::MAX_SIGNED_AGGREGATE_AND_PROOF_SIZE,
            ),
            ("MAX_ATTESTER_SLASHING_SIZE", E::MAX_ATTESTER_SLASHING_SIZE),
            (
                "MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE",
                E::MAX_SIGNED_EXECUTION_PAYLOAD_BID_SIZE,
            ),
        ])
    }

    /// The derived limits agree with the values they are derived from.
    fn check_derived<E: EthSpec>() {
        let slots = E::SlotsPerEpoch::to_u64();
        assert_eq!(
            E::MaxPendingAttestations::to_u64(),
            E::MaxAttestations::to_u64() * slots
        );
        assert_eq!(
            E::SlotsPerEth1VotingPeriod::to_u64(),
            E::EPOCHS_PER_ETH1_VOTING_PERIOD * slots
        );
        assert_eq!(
            E::SyncSubcommitteeSize::to_u64(),
            E::SyncCommitteeSize::to_u64() / 4
        );
        assert_eq!(
            E::BytesPerBlob::to_u64(),
            32 * E::FieldElementsPerBlob::to_u64()
        );
        assert_eq!(
            E::BytesPerCell::to_u64(),
            32 * E::FieldElementsPerCell::to_u64()
        );
        assert_eq!(
            E::MaxValidatorsPerSlot::to_u64(),
            E::MaxValidatorsPerCommittee::to_u64() * E::MaxCommitteesPerSlot::to_u64()
        );
        assert_eq!(
            E::ProposerLookaheadSlots::to_u64(),
            (E::MIN_SEED_LOOKAHEAD + 1) * slots
        );
        assert_eq!(
            E::PtcWindowSlots::to_u64(),
            (2 + E::MIN_SEED_LOOKAHEAD) * slots
        );
        assert_eq!(E::BuilderPendingPaymentsLength::to_u64(), 2 * slots);
    }

    /// Compares every key of the spec's preset files for phase0..gloas with this crate's values.
    fn check_against_spec_presets<E: EthSpec>() {
        let ours = preset_values::<E>();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/spec-tests/presets")
            .join(E::PRESET_BASE);
        let mut seen = 0;
        for fork in crate::ForkName::ALL {
            let path = dir.join(format!("{fork}.yaml"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("preset file {} must exist: {e}", path.display()));
            let map: BTreeMap<String, serde_yaml::Value> =
                serde_yaml::from_str(&text).expect("preset files are YAML maps");
            for (key, value) in map {
                let expected = value
                    .as_u64()
                    .unwrap_or_else(|| panic!("{key} in {} is not an integer", path.display()));
                let Some(&actual) = ours.get(key.as_str()) else {
                    panic!(
                        "{} preset key {key} ({fork}) is not defined by {}",
                        E::PRESET_BASE,
                        std::any::type_name::<E>()
                    );
                };
                assert_eq!(actual, expected, "{} preset {key}", E::PRESET_BASE);
                seen += 1;
            }
        }
        assert_eq!(
            seen,
            ours.len(),
            "every value we define appears in the spec's preset files"
        );
    }

    #[test]
    fn mainnet_matches_spec_preset_files() {
        check_derived::<MainnetEthSpec>();
        check_against_spec_presets::<MainnetEthSpec>();
    }

    #[test]
    fn minimal_matches_spec_preset_files() {
        check_derived::<MinimalEthSpec>();
        check_against_spec_presets::<MinimalEthSpec>();
    }
}
