//! Block processing: `process_block` and every operation of an Electra or Fulu block.
//!
//! Each spec function keeps its name and is public, so the spec-test runners call them one by
//! one. Every check the spec makes with `assert` returns a typed error naming the operation, its
//! position in the block and the failed check ([`BlockProcessingError`]).
//!
//! Signatures are checked by one of three strategies ([`VerifySignatures`]): each where the spec
//! checks it, all of a block's at once in one batched multi-pairing before anything is written
//! (the default for a node), or not at all (for blocks already verified, and benchmarks). Deposit
//! signatures are not block validity conditions (an invalid one only skips the deposit), so they
//! are always checked, whatever the strategy.
//!
//! Fork differences live beside the code they change: Fulu removes the eth1 deposit mechanism
//! from `process_operations` and `process_deposit_request`, and takes the blob limit from the
//! blob schedule.
//!
//! [spec]: electra/beacon-chain.md#block-processing, fulu/beacon-chain.md#block-processing

pub(crate) mod attestation;
mod deposit;
mod errors;
mod execution;
mod mutators;
mod operations;
pub mod signature_sets;
mod sync_aggregate;
pub(crate) mod withdrawals;

pub use crate::electra::execution_requests::{
    is_valid_switch_to_compounding_request, process_consolidation_request, process_deposit_request,
    process_withdrawal_request,
};
pub use attestation::{
    get_attestation_participation_flag_indices, get_attesting_indices, get_indexed_attestation,
    is_valid_indexed_attestation, process_attestation,
};
pub use deposit::{apply_deposit, process_deposit};
pub use errors::{
    AttestationInvalid, AttesterSlashingInvalid, BlockProcessingError, BlsToExecutionChangeInvalid,
    DepositInvalid, ExecutionPayloadBidInvalid, ExecutionPayloadInvalid, HeaderInvalid,
    IndexedAttestationInvalid, ParentExecutionPayloadInvalid, PayloadAttestationInvalid,
    ProposerSlashingInvalid, RandaoInvalid, SyncAggregateInvalid, VoluntaryExitInvalid,
    WithdrawalsInvalid,
};
pub use execution::{
    AlwaysInvalid, AlwaysValid, EngineError, ExecutionEngine, kzg_commitment_to_versioned_hash,
    process_execution_payload,
};
pub(crate) use execution::{cache_execution_payload_header, check_execution_payload};
pub use mutators::{queue_excess_active_balance, slash_validator, switch_to_compounding_validator};
pub(crate) use operations::slash_attesters_in_both;
pub use operations::{
    process_attester_slashing, process_bls_to_execution_change, process_proposer_slashing,
    process_voluntary_exit,
};
pub use signature_sets::{BlockSignatureVerifier, SegmentSignatureVerifier};
pub use sync_aggregate::process_sync_aggregate;
pub use withdrawals::{ExpectedWithdrawals, get_expected_withdrawals, process_withdrawals};

use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    ChainSpec, EthSpec, Root,
    electra::{BeaconBlock, BeaconBlockBody, BeaconBlockHeader},
};

use crate::{
    Caches,
    common::{get_beacon_proposer_index, get_current_epoch, get_randao_mix, hash},
    view::StateMut,
};

/// How a block's signatures are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifySignatures {
    /// Each signature where the spec checks it, one pairing check at a time.
    Individually,
    /// All of a block's signatures gathered as signature sets and checked in one randomised
    /// multi-pairing on a rayon pool, before the block writes anything. When the batch fails,
    /// the sets are checked one by one (in parallel) to name the invalid one.
    #[default]
    Batched,
    /// Not at all: for blocks whose signatures were already verified, and benchmarks.
    None,
}

impl VerifySignatures {
    /// Whether an operation processed on its own checks its signature.
    pub fn is_enabled(self) -> bool {
        self != VerifySignatures::None
    }
}

/// `process_block(state, block)`: every step of block processing, in the spec's order.
///
/// With [`VerifySignatures::Batched`] the block's signature sets (randao, slashings,
/// attestations, exits, BLS changes, sync aggregate; not the proposer's signature over the block,
/// which [`state_transition`](crate::state_transition::state_transition) adds) are verified
/// first, in one batch.
///
/// On error the state is partly written: callers that keep the state must process a clone (as
/// `state_transition` does).
///
/// [spec]: fulu/beacon-chain.md#block-processing
pub fn process_block<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    verify: VerifySignatures,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let body_root = block.body.tree_hash_root();
    let verify = if verify == VerifySignatures::Batched {
        let mut verifier = BlockSignatureVerifier::new();
        verifier.include_body(&state.as_ref(), caches, block, spec)?;
        verifier.verify()?;
        VerifySignatures::None
    } else {
        verify
    };
    process_block_with_body_root(state, caches, block, body_root, verify, engine, spec)
}

/// [`process_block`] without batching, for a block whose body root is known.
pub(crate) fn process_block_with_body_root<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    body_root: Root,
    verify: VerifySignatures,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    process_block_header_with_body_root(state, caches, block, body_root)?;
    process_withdrawals(state, &block.body.execution_payload)?;
    process_execution_payload(state, &block.body, engine, spec)?;
    process_randao(state, caches, &block.body, verify)?;
    process_eth1_data(state, &block.body).map_err(BlockProcessingError::Eth1Data)?;
    process_operations(state, caches, &block.body, verify, spec)?;
    process_sync_aggregate(state, caches, &block.body.sync_aggregate, verify)?;
    Ok(())
}

/// `process_block_header(state, block)`: checks the block against the latest header and caches
/// the block's header (with a zero state root, filled in by the next `process_slot`).
///
/// [spec]: phase0/beacon-chain.md#block-header
pub fn process_block_header<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
) -> Result<(), HeaderInvalid> {
    process_block_header_with_body_root(state, caches, block, block.body.tree_hash_root())
}

/// [`process_block_header`] with `hash_tree_root(block.body)` already computed.
fn process_block_header_with_body_root<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    body_root: Root,
) -> Result<(), HeaderInvalid> {
    process_block_header_fields(
        state,
        caches,
        block.slot,
        block.proposer_index,
        block.parent_root,
        body_root,
    )
}

/// [`process_block_header`] from the header fields of a block of any fork.
pub(crate) fn process_block_header_fields<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    slot: types::Slot,
    proposer_index: types::ValidatorIndex,
    parent_root: Root,
    body_root: Root,
) -> Result<(), HeaderInvalid> {
    let block = BlockHeaderFields {
        slot,
        proposer_index,
        parent_root,
    };
    if block.slot != *state.slot {
        return Err(HeaderInvalid::SlotMismatch {
            block: block.slot,
            state: *state.slot,
        });
    }
    if block.slot <= state.latest_block_header.slot {
        return Err(HeaderInvalid::NotNewerThanLatestHeader {
            block: block.slot,
            latest: state.latest_block_header.slot,
        });
    }
    let expected = get_beacon_proposer_index(&state.as_ref(), caches)?;
    if block.proposer_index != expected {
        return Err(HeaderInvalid::ProposerMismatch {
            block: block.proposer_index,
            expected,
        });
    }
    let parent = state.latest_block_header.tree_hash_root();
    if block.parent_root != parent {
        return Err(HeaderInvalid::ParentRootMismatch {
            block: block.parent_root,
            expected: parent,
        });
    }
    *state.latest_block_header = BeaconBlockHeader {
        slot: block.slot,
        proposer_index: block.proposer_index,
        parent_root: block.parent_root,
        state_root: Root::ZERO,
        body_root,
    };
    if crate::common::validator(&state.as_ref(), block.proposer_index)?.slashed {
        return Err(HeaderInvalid::ProposerSlashed(block.proposer_index));
    }
    Ok(())
}

/// The header fields of a block that `process_block_header` checks.
struct BlockHeaderFields {
    slot: types::Slot,
    proposer_index: types::ValidatorIndex,
    parent_root: Root,
}

/// `process_randao(state, body)`: checks the reveal (the proposer's signature of the epoch) and
/// mixes its hash into the epoch's randao mix.
///
/// [spec]: phase0/beacon-chain.md#randao
pub fn process_randao<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    body: &BeaconBlockBody<E>,
    verify: VerifySignatures,
) -> Result<(), RandaoInvalid> {
    process_randao_reveal(state, caches, &body.randao_reveal, verify)
}

/// [`process_randao`] from the body's `randao_reveal` (of a block of any fork).
pub(crate) fn process_randao_reveal<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    randao_reveal: &types::BLSSignature,
    verify: VerifySignatures,
) -> Result<(), RandaoInvalid> {
    let epoch = get_current_epoch(&state.as_ref());
    if verify.is_enabled() {
        let proposer = get_beacon_proposer_index(&state.as_ref(), caches)?;
        let valid = match signature_sets::randao_reveal_signature_set(
            &state.as_ref(),
            caches,
            proposer,
            randao_reveal,
        ) {
            Ok(set) => set.verify(),
            Err(signature_sets::SignatureSetError::Malformed) => false,
            Err(signature_sets::SignatureSetError::State(e)) => return Err(e.into()),
        };
        if !valid {
            return Err(RandaoInvalid::InvalidSignature { epoch });
        }
    }
    let reveal_hash = hash(randao_reveal.as_slice());
    let mut mix = get_randao_mix(&state.as_ref(), epoch);
    for (byte, h) in mix.iter_mut().zip(reveal_hash.iter()) {
        *byte ^= h;
    }
    let i = (epoch % E::EpochsPerHistoricalVector::to_u64()) as usize;
    *state.randao_mixes.get_mut(i).ok_or(crate::Error::Tree(
        "randao_mixes shorter than its length".into(),
    ))? = mix;
    Ok(())
}

/// `process_eth1_data(state, body)`: records the block's eth1 vote and adopts it once it has a
/// majority of the voting period.
///
/// [spec]: phase0/beacon-chain.md#eth1-data
pub fn process_eth1_data<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    body: &BeaconBlockBody<E>,
) -> Result<(), crate::Error> {
    process_eth1_vote(state, &body.eth1_data)
}

/// [`process_eth1_data`] from the body's `eth1_data` (of a block of any fork).
pub(crate) fn process_eth1_vote<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    eth1_data: &types::electra::Eth1Data,
) -> Result<(), crate::Error> {
    state
        .eth1_data_votes
        .push(eth1_data.clone())
        .map_err(|_| crate::Error::ListFull("eth1_data_votes"))?;
    let votes = state
        .eth1_data_votes
        .iter()
        .filter(|vote| *vote == eth1_data)
        .count() as u64;
    if votes * 2 > E::SlotsPerEth1VotingPeriod::to_u64() {
        *state.eth1_data = eth1_data.clone();
    }
    Ok(())
}

/// `process_operations(state, body)`: every operation of the body, in the spec's order.
///
/// Electra: eth1 deposits are required up to the deposit contract's count or the first deposit
/// request. Fulu: the eth1 deposit mechanism is gone; a block with deposits is invalid.
///
/// [spec]: electra/beacon-chain.md#modified-process_operations,
/// fulu/beacon-chain.md#modified-process_operations
pub fn process_operations<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    body: &BeaconBlockBody<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let expected_deposits = if state.fork_name.fulu_enabled() {
        0
    } else {
        let deposit_requests_start_index = *crate::view::electra_field(
            state.deposit_requests_start_index.as_deref(),
            "deposit_requests_start_index",
            state.fork_name,
        )?;
        let limit = state
            .eth1_data
            .deposit_count
            .min(deposit_requests_start_index);
        if *state.eth1_deposit_index < limit {
            E::MaxDeposits::to_u64().min(limit - *state.eth1_deposit_index)
        } else {
            0
        }
    };
    if body.deposits.len() as u64 != expected_deposits {
        return Err(BlockProcessingError::DepositCount {
            expected: expected_deposits,
            got: body.deposits.len() as u64,
        });
    }

    for (index, op) in body.proposer_slashings.iter().enumerate() {
        process_proposer_slashing(state, caches, op, verify, spec)
            .map_err(|reason| BlockProcessingError::ProposerSlashing { index, reason })?;
    }
    for (index, op) in body.attester_slashings.iter().enumerate() {
        process_attester_slashing(state, caches, op, verify, spec)
            .map_err(|reason| BlockProcessingError::AttesterSlashing { index, reason })?;
    }
    for (index, op) in body.attestations.iter().enumerate() {
        process_attestation(state, caches, op, verify)
            .map_err(|reason| BlockProcessingError::Attestation { index, reason })?;
    }
    for (index, op) in body.deposits.iter().enumerate() {
        process_deposit(state, caches, op, spec)
            .map_err(|reason| BlockProcessingError::Deposit { index, reason })?;
    }
    for (index, op) in body.voluntary_exits.iter().enumerate() {
        process_voluntary_exit(state, caches, op, verify, spec)
            .map_err(|reason| BlockProcessingError::VoluntaryExit { index, reason })?;
    }
    for (index, op) in body.bls_to_execution_changes.iter().enumerate() {
        process_bls_to_execution_change(state, op, verify, spec)
            .map_err(|reason| BlockProcessingError::BlsToExecutionChange { index, reason })?;
    }
    let requests = &body.execution_requests;
    for (index, op) in requests.deposits.iter().enumerate() {
        process_deposit_request(state, op)
            .map_err(|reason| BlockProcessingError::DepositRequest { index, reason })?;
    }
    for (index, op) in requests.withdrawals.iter().enumerate() {
        process_withdrawal_request(state, caches, op, spec)
            .map_err(|reason| BlockProcessingError::WithdrawalRequest { index, reason })?;
    }
    for (index, op) in requests.consolidations.iter().enumerate() {
        process_consolidation_request(state, caches, op, spec)
            .map_err(|reason| BlockProcessingError::ConsolidationRequest { index, reason })?;
    }
    Ok(())
}
