//! Why a block, or one of its operations, is invalid.
//!
//! [`BlockProcessingError`] names the step of `process_block` that failed and, for operations,
//! the operation's position in the block; the per-operation enums name the spec check (the
//! `assert`) that failed, with the values it compared.

use types::{Epoch, ForkName, Gwei, Root, Slot, ValidatorIndex};

use crate::Error;

/// A block refused by [`process_block`](super::process_block) or
/// [`state_transition`](crate::state_transition::state_transition).
#[derive(Debug, thiserror::Error)]
pub enum BlockProcessingError {
    /// `process_block_header` failed.
    #[error("block header: {0}")]
    Header(#[from] HeaderInvalid),
    /// `process_withdrawals` failed.
    #[error("withdrawals: {0}")]
    Withdrawals(#[from] WithdrawalsInvalid),
    /// `process_execution_payload` failed.
    #[error("execution payload: {0}")]
    ExecutionPayload(#[from] ExecutionPayloadInvalid),
    /// `process_randao` failed.
    #[error("randao: {0}")]
    Randao(#[from] RandaoInvalid),
    /// `process_eth1_data` failed (only on a full vote list, which a valid state never has).
    #[error("eth1 data: {0}")]
    Eth1Data(Error),
    /// `process_operations`: the block carries the wrong number of eth1 deposits.
    #[error("block has {got} deposits, expected {expected}")]
    DepositCount {
        /// Deposits the state requires.
        expected: u64,
        /// Deposits in the block.
        got: u64,
    },
    /// The proposer slashing at `index` of the body is invalid.
    #[error("proposer slashing {index}: {reason}")]
    ProposerSlashing {
        /// Position in `body.proposer_slashings`.
        index: usize,
        /// The failed check.
        reason: ProposerSlashingInvalid,
    },
    /// The attester slashing at `index` of the body is invalid.
    #[error("attester slashing {index}: {reason}")]
    AttesterSlashing {
        /// Position in `body.attester_slashings`.
        index: usize,
        /// The failed check.
        reason: AttesterSlashingInvalid,
    },
    /// The attestation at `index` of the body is invalid.
    #[error("attestation {index}: {reason}")]
    Attestation {
        /// Position in `body.attestations`.
        index: usize,
        /// The failed check.
        reason: AttestationInvalid,
    },
    /// The eth1 deposit at `index` of the body is invalid (Electra only).
    #[error("deposit {index}: {reason}")]
    Deposit {
        /// Position in `body.deposits`.
        index: usize,
        /// The failed check.
        reason: DepositInvalid,
    },
    /// The voluntary exit at `index` of the body is invalid.
    #[error("voluntary exit {index}: {reason}")]
    VoluntaryExit {
        /// Position in `body.voluntary_exits`.
        index: usize,
        /// The failed check.
        reason: VoluntaryExitInvalid,
    },
    /// The BLS-to-execution change at `index` of the body is invalid.
    #[error("bls to execution change {index}: {reason}")]
    BlsToExecutionChange {
        /// Position in `body.bls_to_execution_changes`.
        index: usize,
        /// The failed check.
        reason: BlsToExecutionChangeInvalid,
    },
    /// Processing the deposit request at `index` failed (requests are never invalid; only a
    /// full state list or a broken state fails them).
    #[error("deposit request {index}: {reason}")]
    DepositRequest {
        /// Position in `body.execution_requests.deposits`.
        index: usize,
        /// What failed.
        reason: Error,
    },
    /// Processing the withdrawal request at `index` failed (see [`Self::DepositRequest`]).
    #[error("withdrawal request {index}: {reason}")]
    WithdrawalRequest {
        /// Position in `body.execution_requests.withdrawals`.
        index: usize,
        /// What failed.
        reason: Error,
    },
    /// Processing the consolidation request at `index` failed (see [`Self::DepositRequest`]).
    #[error("consolidation request {index}: {reason}")]
    ConsolidationRequest {
        /// Position in `body.execution_requests.consolidations`.
        index: usize,
        /// What failed.
        reason: Error,
    },
    /// `process_parent_execution_payload` failed [New in Gloas:EIP7732].
    #[error("parent execution payload: {0}")]
    ParentExecutionPayload(#[from] ParentExecutionPayloadInvalid),
    /// `process_execution_payload_bid` failed [New in Gloas:EIP7732].
    #[error("execution payload bid: {0}")]
    ExecutionPayloadBid(#[from] ExecutionPayloadBidInvalid),
    /// `process_operations`: an operation list is longer than its maximum [New in
    /// Gloas:EIP7688] (the lists are progressive, so their type no longer bounds them).
    #[error("block has {count} {operation}, at most {max} allowed")]
    TooManyOperations {
        /// The body field, e.g. `attestations`.
        operation: &'static str,
        /// Its length in the block.
        count: usize,
        /// The preset's maximum.
        max: u64,
    },
    /// The payload attestation at `index` of the body is invalid [New in Gloas:EIP7732].
    #[error("payload attestation {index}: {reason}")]
    PayloadAttestation {
        /// Position in `body.payload_attestations`.
        index: usize,
        /// The failed check.
        reason: PayloadAttestationInvalid,
    },
    /// `process_sync_aggregate` failed.
    #[error("sync aggregate: {0}")]
    SyncAggregate(#[from] SyncAggregateInvalid),
    /// `verify_block_signature` failed: the proposer's signature over the block is invalid.
    #[error("the proposer signature of the block is invalid")]
    ProposerSignature,
    /// The batched signature check failed, but no set fails alone (a batch of valid sets
    /// cannot fail, so this means the verifier is broken).
    #[error("the block's signatures fail as a batch but every one is valid alone")]
    BatchSignature,
    /// `state_transition` with `validate_result`: the block's `state_root` is not the root of
    /// the post-state.
    #[error("block state root {block} differs from the post-state root {computed}")]
    StateRoot {
        /// `block.state_root`.
        block: Root,
        /// `hash_tree_root(state)` after the block.
        computed: Root,
    },
    /// `state_transition`: the block is not later than the state.
    #[error("block slot {block} is not after the state slot {state}")]
    SlotNotAfterState {
        /// The block's slot.
        block: Slot,
        /// The state's slot.
        state: Slot,
    },
    /// `state_transition`: `process_slots` failed.
    #[error("process_slots: {0}")]
    Slots(#[source] crate::per_slot::SlotProcessingError),
    /// The block's fork is not the fork of the state at the block's slot.
    #[error("a {block} block on a {state} state")]
    ForkMismatch {
        /// The block's fork.
        block: ForkName,
        /// The state's fork after `process_slots`.
        state: ForkName,
    },
    /// A helper failed on a broken state (an index out of range, an overflow).
    #[error(transparent)]
    State(#[from] Error),
}

impl BlockProcessingError {
    /// Whether the node failed rather than the block: the execution engine gave no verdict on
    /// its payload. The same block may import once the node's failure is fixed, and no peer
    /// that sent it is to blame.
    pub fn is_local_failure(&self) -> bool {
        matches!(
            self,
            BlockProcessingError::ExecutionPayload(ExecutionPayloadInvalid::EngineFailed(_))
        )
    }
}

/// A failed check of `process_block_header`.
///
/// [spec]: phase0/beacon-chain.md#block-header
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderInvalid {
    /// `block.slot == state.slot`.
    #[error("block slot {block} is not the state slot {state}")]
    SlotMismatch {
        /// `block.slot`.
        block: Slot,
        /// `state.slot`, after `process_slots`.
        state: Slot,
    },
    /// `block.slot > state.latest_block_header.slot`.
    #[error("block slot {block} is not after the latest block header slot {latest}")]
    NotNewerThanLatestHeader {
        /// `block.slot`.
        block: Slot,
        /// `state.latest_block_header.slot`: the slot of the parent block.
        latest: Slot,
    },
    /// `block.proposer_index == get_beacon_proposer_index(state)`.
    #[error("proposer index {block} is not the slot's proposer {expected}")]
    ProposerMismatch {
        /// `block.proposer_index`.
        block: ValidatorIndex,
        /// `get_beacon_proposer_index(state)`: the slot's proposer.
        expected: ValidatorIndex,
    },
    /// `block.parent_root == hash_tree_root(state.latest_block_header)`.
    #[error("parent root {block} is not the latest block header root {expected}")]
    ParentRootMismatch {
        /// `block.parent_root`.
        block: Root,
        /// `hash_tree_root(state.latest_block_header)`: the root of the state's latest block.
        expected: Root,
    },
    /// `not proposer.slashed`.
    #[error("proposer {0} is slashed")]
    ProposerSlashed(ValidatorIndex),
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_withdrawals`.
///
/// [spec]: electra/beacon-chain.md#modified-process_withdrawals
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WithdrawalsInvalid {
    /// The payload carries a different number of withdrawals than expected.
    #[error("payload has {got} withdrawals, expected {expected}")]
    CountMismatch {
        /// The number of withdrawals `get_expected_withdrawals` gives.
        expected: usize,
        /// `len(payload.withdrawals)`.
        got: usize,
    },
    /// Withdrawal `index` of the payload differs from the expected one.
    #[error("payload withdrawal {index} differs from the expected withdrawal")]
    WithdrawalMismatch {
        /// Position in `payload.withdrawals` of the first withdrawal that differs.
        index: usize,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_execution_payload`.
///
/// [spec]: fulu/beacon-chain.md#modified-process_execution_payload
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionPayloadInvalid {
    /// `payload.parent_hash == state.latest_execution_payload_header.block_hash`.
    #[error("parent hash {payload} is not the latest payload's block hash {expected}")]
    ParentHashMismatch {
        /// `payload.parent_hash`.
        payload: Root,
        /// `state.latest_execution_payload_header.block_hash`.
        expected: Root,
    },
    /// `payload.prev_randao == get_randao_mix(state, get_current_epoch(state))`.
    #[error("prev_randao {payload} is not the current randao mix {expected}")]
    PrevRandaoMismatch {
        /// `payload.prev_randao`.
        payload: Root,
        /// `get_randao_mix(state, get_current_epoch(state))`.
        expected: Root,
    },
    /// `payload.timestamp == compute_time_at_slot(state, state.slot)`.
    #[error("timestamp {payload} is not the slot's time {expected}")]
    TimestampMismatch {
        /// `payload.timestamp`, in seconds.
        payload: u64,
        /// `compute_time_at_slot(state, state.slot)`: the slot's start time, in seconds.
        expected: u64,
    },
    /// `len(body.blob_kzg_commitments) <= max_blobs_per_block`.
    #[error("{count} blob commitments exceed the limit of {max}")]
    TooManyBlobCommitments {
        /// `len(body.blob_kzg_commitments)`.
        count: usize,
        /// The epoch's `max_blobs_per_block` (Electra's config value, or the Fulu blob schedule's).
        max: u64,
    },
    /// The execution engine said the payload is invalid.
    #[error("the execution engine found the payload invalid")]
    RejectedByEngine,
    /// The execution engine gave no verdict: the node's failure, not the payload's.
    #[error("the execution engine failed")]
    EngineFailed(#[source] super::execution::EngineError),
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_randao`.
///
/// [spec]: phase0/beacon-chain.md#randao
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RandaoInvalid {
    /// `bls.Verify(proposer.pubkey, signing_root, body.randao_reveal)`.
    #[error("the randao reveal is not the proposer's signature of epoch {epoch}")]
    InvalidSignature {
        /// The current epoch: the message the reveal must sign.
        epoch: Epoch,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_proposer_slashing`.
///
/// [spec]: phase0/beacon-chain.md#proposer-slashings
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposerSlashingInvalid {
    /// `header_1.slot == header_2.slot`.
    #[error("header slots differ ({0} and {1})")]
    SlotMismatch(Slot, Slot),
    /// `header_1.proposer_index == header_2.proposer_index`.
    #[error("header proposer indices differ ({0} and {1})")]
    ProposerMismatch(ValidatorIndex, ValidatorIndex),
    /// `header_1 != header_2`.
    #[error("the two headers are the same")]
    HeadersEqual,
    /// `is_slashable_validator(proposer, get_current_epoch(state))`.
    #[error("proposer {0} is not slashable")]
    NotSlashable(ValidatorIndex),
    /// The signature of header 1 or 2 (`which`) is invalid.
    #[error("the signature of header {which} is invalid")]
    InvalidSignature {
        /// 1 for `signed_header_1`, 2 for `signed_header_2`.
        which: u8,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `is_valid_indexed_attestation`.
///
/// [spec]: phase0/beacon-chain.md#is_valid_indexed_attestation
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexedAttestationInvalid {
    /// `len(indices) == 0`.
    #[error("no attesting indices")]
    Empty,
    /// `len(indices) <= MAX_VALIDATORS_PER_COMMITTEE * MAX_COMMITTEES_PER_SLOT` [New in
    /// Gloas:EIP7688].
    #[error("{count} attesting indices, at most {max} allowed")]
    TooManyIndices {
        /// `len(indices)`.
        count: usize,
        /// `MAX_VALIDATORS_PER_COMMITTEE * MAX_COMMITTEES_PER_SLOT`.
        max: u64,
    },
    /// `indices == sorted(set(indices))`, first broken at position `position`.
    #[error("attesting indices are not sorted and unique (at position {position})")]
    NotSortedUnique {
        /// Position in `attesting_indices` of the first index not greater than the one before it.
        position: usize,
    },
    /// The aggregate signature is invalid.
    #[error("the aggregate signature is invalid")]
    InvalidSignature,
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_attester_slashing`.
///
/// [spec]: phase0/beacon-chain.md#attester-slashings
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttesterSlashingInvalid {
    /// `is_slashable_attestation_data(attestation_1.data, attestation_2.data)`.
    #[error("the two attestations are neither a double vote nor a surround vote")]
    NotSlashable,
    /// Attestation 1 or 2 (`which`) is not a valid indexed attestation.
    #[error("attestation {which}: {reason}")]
    InvalidAttestation {
        /// 1 for `attestation_1`, 2 for `attestation_2`.
        which: u8,
        /// The check of `is_valid_indexed_attestation` that failed.
        reason: IndexedAttestationInvalid,
    },
    /// `assert slashed_any`.
    #[error("no common attester is slashable")]
    NoSlashableIndices,
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_attestation`.
///
/// [spec]: electra/beacon-chain.md#modified-process_attestation
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttestationInvalid {
    /// `data.target.epoch in (get_previous_epoch(state), get_current_epoch(state))`.
    #[error("target epoch {target} is neither the previous nor the current epoch ({current})")]
    TargetEpochOutOfRange {
        /// `data.target.epoch`.
        target: Epoch,
        /// `get_current_epoch(state)`.
        current: Epoch,
    },
    /// `data.target.epoch == compute_epoch_at_slot(data.slot)`.
    #[error("target epoch {target} is not the epoch of slot {slot}")]
    TargetEpochSlotMismatch {
        /// `data.target.epoch`.
        target: Epoch,
        /// `data.slot`.
        slot: Slot,
    },
    /// `data.slot + MIN_ATTESTATION_INCLUSION_DELAY <= state.slot`.
    #[error("attestation of slot {slot} included too early at slot {state_slot}")]
    IncludedTooEarly {
        /// `data.slot`.
        slot: Slot,
        /// `state.slot`: the slot of the block that includes the attestation.
        state_slot: Slot,
    },
    /// `data.index == 0`.
    #[error("data.index is {0}, not 0")]
    NonZeroDataIndex(u64),
    /// `data.index < 2` [Modified in Gloas:EIP7732]: the index signals the payload.
    #[error("data.index is {0}, not 0 or 1")]
    DataIndexOutOfRange(u64),
    /// `data.index == 0` for a same-slot attestation [New in Gloas:EIP7732].
    #[error("same-slot attestation has data.index {0}, not 0")]
    SameSlotNonZeroIndex(u64),
    /// `committee_index < get_committee_count_per_slot(state, data.target.epoch)`.
    #[error("committee index {index} is out of range ({count} committees per slot)")]
    CommitteeIndexOutOfRange {
        /// The committee index, a set bit of `committee_bits`.
        index: u64,
        /// `get_committee_count_per_slot(state, data.target.epoch)`.
        count: u64,
    },
    /// `len(committee_attesters) > 0`.
    #[error("no attester of committee {committee_index} is set")]
    EmptyCommitteeAttesters {
        /// The committee (a set bit of `committee_bits`) with no aggregation bit set.
        committee_index: u64,
    },
    /// `len(attestation.aggregation_bits) == committee_offset`.
    #[error("aggregation bits have length {got}, the committees have {expected} members")]
    AggregationBitsLength {
        /// The summed sizes of the committees that `committee_bits` selects.
        expected: usize,
        /// `len(attestation.aggregation_bits)`.
        got: usize,
    },
    /// `is_matching_source`.
    #[error("source checkpoint (epoch {epoch}) is not the justified checkpoint")]
    SourceMismatch {
        /// `data.source.epoch`; the source must be the current or previous justified checkpoint.
        epoch: Epoch,
    },
    /// `is_valid_indexed_attestation(state, get_indexed_attestation(state, attestation))`.
    #[error("indexed attestation: {0}")]
    IndexedAttestation(IndexedAttestationInvalid),
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_deposit` (Electra only: Fulu removes eth1 deposits).
///
/// [spec]: electra/beacon-chain.md#modified-process_deposit
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DepositInvalid {
    /// The Merkle branch does not prove the deposit at `eth1_deposit_index`.
    #[error("the Merkle proof does not prove deposit {deposit_index}")]
    BadMerkleProof {
        /// `state.eth1_deposit_index`: the index of the deposit the proof must prove.
        deposit_index: u64,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_voluntary_exit`.
///
/// [spec]: electra/beacon-chain.md#modified-process_voluntary_exit
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VoluntaryExitInvalid {
    /// `is_active_validator(validator, get_current_epoch(state))`.
    #[error("validator {0} is not active")]
    NotActive(ValidatorIndex),
    /// `validator.exit_epoch == FAR_FUTURE_EPOCH`.
    #[error("validator {index} already exits at epoch {exit_epoch}")]
    AlreadyExiting {
        /// `voluntary_exit.validator_index`.
        index: ValidatorIndex,
        /// The validator's `exit_epoch`, already set.
        exit_epoch: Epoch,
    },
    /// `get_current_epoch(state) >= voluntary_exit.epoch`.
    #[error("exit epoch {exit} is in the future (current {current})")]
    FutureEpoch {
        /// `voluntary_exit.epoch`: the earliest epoch the exit may be processed.
        exit: Epoch,
        /// `get_current_epoch(state)`.
        current: Epoch,
    },
    /// `current >= validator.activation_epoch + SHARD_COMMITTEE_PERIOD`.
    #[error("validator {index} has not been active long enough (eligible at epoch {eligible})")]
    TooYoung {
        /// `voluntary_exit.validator_index`.
        index: ValidatorIndex,
        /// `activation_epoch + SHARD_COMMITTEE_PERIOD`: the first epoch the validator may exit.
        eligible: Epoch,
    },
    /// `get_pending_balance_to_withdraw(state, index) == 0`.
    #[error("validator {index} has {pending} Gwei of pending partial withdrawals")]
    PendingWithdrawals {
        /// `voluntary_exit.validator_index`.
        index: ValidatorIndex,
        /// `get_pending_balance_to_withdraw(state, index)`, in Gwei.
        pending: Gwei,
    },
    /// `bls.Verify(validator.pubkey, signing_root, signature)`.
    #[error("the exit signature is invalid")]
    InvalidSignature,
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_bls_to_execution_change`.
///
/// [spec]: capella/beacon-chain.md#new-process_bls_to_execution_change
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlsToExecutionChangeInvalid {
    /// `address_change.validator_index < len(state.validators)`.
    #[error("validator index {index} is out of range (registry has {len})")]
    UnknownValidator {
        /// `address_change.validator_index`.
        index: ValidatorIndex,
        /// `len(state.validators)`.
        len: usize,
    },
    /// `validator.withdrawal_credentials[:1] == BLS_WITHDRAWAL_PREFIX`.
    #[error("validator {0} does not have BLS withdrawal credentials")]
    NotBlsCredentials(ValidatorIndex),
    /// `validator.withdrawal_credentials[1:] == hash(address_change.from_bls_pubkey)[1:]`.
    #[error("from_bls_pubkey does not match the withdrawal credentials of validator {0}")]
    PubkeyMismatch(ValidatorIndex),
    /// `bls.Verify(address_change.from_bls_pubkey, signing_root, signature)`.
    #[error("the change's signature is invalid")]
    InvalidSignature,
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_sync_aggregate`.
///
/// [spec]: altair/beacon-chain.md#sync-aggregate-processing
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncAggregateInvalid {
    /// A sync committee member's key is not in the registry.
    #[error("sync committee member {position} is not a validator")]
    UnknownMember {
        /// Position in `current_sync_committee.pubkeys` of the key no validator has.
        position: usize,
    },
    /// `eth_fast_aggregate_verify(participant_pubkeys, signing_root, signature)`.
    #[error("the sync committee signature is invalid ({participants} participants)")]
    InvalidSignature {
        /// The number of bits set in `sync_committee_bits`.
        participants: usize,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_parent_execution_payload` / `apply_parent_execution_payload`.
///
/// [spec]: gloas/beacon-chain.md#new-process_parent_execution_payload
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentExecutionPayloadInvalid {
    /// `requests == ExecutionRequests()` when the parent's payload is empty (the bid builds on
    /// the grandparent's block hash).
    #[error("the parent's payload is empty but the block carries its execution requests")]
    RequestsNotEmpty,
    /// `hash_tree_root(requests) == parent_bid.execution_requests_root`.
    #[error("parent execution requests root {computed} is not the parent bid's {committed}")]
    RequestsRootMismatch {
        /// `hash_tree_root(block.body.parent_execution_requests)`.
        computed: Root,
        /// `state.latest_execution_payload_bid.execution_requests_root`.
        committed: Root,
    },
    /// A request list is longer than its `MAX_*_REQUESTS_PER_PAYLOAD`.
    #[error("{count} {kind} requests, at most {max} allowed")]
    TooManyRequests {
        /// The list, e.g. `withdrawals`.
        kind: &'static str,
        /// Its length.
        count: usize,
        /// The preset's maximum.
        max: u64,
    },
    /// Processing the request at `index` of list `kind` failed (requests are never invalid;
    /// only a full state list or a broken state fails them).
    #[error("{kind} request {index}: {reason}")]
    Request {
        /// The list, e.g. `builder_deposits`.
        kind: &'static str,
        /// Position in the list.
        index: usize,
        /// What failed.
        reason: Error,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_execution_payload_bid`.
///
/// [spec]: gloas/beacon-chain.md#new-process_execution_payload_bid
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionPayloadBidInvalid {
    /// `amount == 0` for a self-build.
    #[error("self-build bid has value {0}, not 0")]
    SelfBuildNonZeroValue(Gwei),
    /// `signed_bid.signature == bls.G2_POINT_AT_INFINITY` for a self-build.
    #[error("self-build bid signature is not the point at infinity")]
    SelfBuildSignatureNotInfinity,
    /// `state.builders[builder_index]` exists.
    #[error("builder index {index} is out of range (registry has {len})")]
    UnknownBuilder {
        /// `bid.builder_index`.
        index: u64,
        /// `len(state.builders)`.
        len: usize,
    },
    /// `is_active_builder(state, builder_index)`.
    #[error("builder {0} is not active")]
    BuilderNotActive(u64),
    /// `state.builders[builder_index].version == PAYLOAD_BUILDER_VERSION`.
    #[error("builder {index} has version {version}, not a payload builder")]
    NotPayloadBuilder {
        /// `bid.builder_index`.
        index: u64,
        /// The builder's version.
        version: u8,
    },
    /// `can_builder_cover_bid(state, builder_index, amount)`.
    #[error("builder {index} cannot cover a bid of {amount} Gwei")]
    InsufficientBuilderBalance {
        /// `bid.builder_index`.
        index: u64,
        /// `bid.value`.
        amount: Gwei,
    },
    /// `verify_execution_payload_bid_signature(state, signed_bid)`.
    #[error("the bid signature is invalid")]
    InvalidSignature,
    /// `len(bid.blob_kzg_commitments) <= max_blobs_per_block`.
    #[error("{count} blob commitments exceed the limit of {max}")]
    TooManyBlobCommitments {
        /// `len(bid.blob_kzg_commitments)`.
        count: usize,
        /// The blob schedule's `max_blobs_per_block` at the current epoch.
        max: u64,
    },
    /// `bid.slot == state.slot`.
    #[error("bid slot {bid} is not the state slot {state}")]
    SlotMismatch {
        /// `bid.slot`.
        bid: Slot,
        /// `state.slot`.
        state: Slot,
    },
    /// `state.slot > GENESIS_SLOT`.
    #[error("a bid at the genesis slot")]
    GenesisSlot,
    /// `bid.parent_block_hash == state.latest_block_hash`.
    #[error("bid parent block hash {bid} is not the latest block hash {expected}")]
    ParentBlockHashMismatch {
        /// `bid.parent_block_hash`.
        bid: Root,
        /// `state.latest_block_hash`.
        expected: Root,
    },
    /// `bid.block_hash != bid.parent_block_hash` [New in 1.7.0b4].
    #[error("bid block hash {0} is its parent block hash")]
    BlockHashIsParent(Root),
    /// `bid.parent_block_root == get_block_root_at_slot(state, state.slot - 1)`.
    #[error("bid parent block root {bid} is not the previous slot's root {expected}")]
    ParentBlockRootMismatch {
        /// `bid.parent_block_root`.
        bid: Root,
        /// `get_block_root_at_slot(state, state.slot - 1)`.
        expected: Root,
    },
    /// `bid.prev_randao == get_randao_mix(state, get_current_epoch(state))`.
    #[error("bid prev_randao {bid} is not the current randao mix {expected}")]
    PrevRandaoMismatch {
        /// `bid.prev_randao`.
        bid: Root,
        /// `get_randao_mix(state, get_current_epoch(state))`.
        expected: Root,
    },
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

/// A failed check of `process_payload_attestation`.
///
/// [spec]: gloas/beacon-chain.md#new-process_payload_attestation
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadAttestationInvalid {
    /// `data.beacon_block_root == state.latest_block_header.parent_root`.
    #[error("payload attestation for block {got}, not the parent block {expected}")]
    BlockRootMismatch {
        /// `data.beacon_block_root`.
        got: Root,
        /// `state.latest_block_header.parent_root`.
        expected: Root,
    },
    /// `data.slot + 1 == state.slot`.
    #[error("payload attestation of slot {slot} in a block of slot {state_slot}")]
    SlotMismatch {
        /// `data.slot`.
        slot: Slot,
        /// `state.slot`.
        state_slot: Slot,
    },
    /// `len(indices) == 0` in `is_valid_indexed_payload_attestation`.
    #[error("no attesting indices")]
    Empty,
    /// `indices == sorted(indices)` in `is_valid_indexed_payload_attestation`.
    #[error("attesting indices are not sorted (at position {position})")]
    NotSorted {
        /// Position of the first index smaller than the one before it.
        position: usize,
    },
    /// The aggregate signature is invalid.
    #[error("the aggregate signature is invalid")]
    InvalidSignature,
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}
