//! Block processing at Deneb: a Deneb block's steps, with the operations whose Deneb form
//! Electra modifies.
//!
//! Signatures are checked one by one where the spec checks them ([`VerifySignatures::Batched`]
//! is taken as [`VerifySignatures::Individually`]): the batch verifier gathers the sets of
//! Electra bodies, and Deneb blocks are only processed on the way to the Electra fork.
//!
//! [spec]: deneb/beacon-chain.md#block-processing

use tree_hash::TreeHash;
use typenum::Unsigned as _;
use types::{
    BLSPubkey, BLSSignature, Bytes32, ChainSpec, EthSpec, Gwei, ValidatorIndex,
    deneb::{Attestation, AttesterSlashing, BeaconBlock, BeaconBlockBody},
};

use crate::{
    Caches, Error,
    common::{
        add_validator_to_registry, increase_balance, is_slashable_attestation_data,
        is_valid_deposit_signature, pubkey_bytes,
    },
    per_block::{
        AttestationInvalid, AttesterSlashingInvalid, BlockProcessingError, ExecutionEngine,
        ExecutionPayloadInvalid, VerifySignatures, attestation, cache_execution_payload_header,
        check_execution_payload, kzg_commitment_to_versioned_hash, process_block_header_fields,
        process_bls_to_execution_change, process_deposit, process_eth1_vote,
        process_proposer_slashing, process_randao_reveal, process_sync_aggregate,
        process_voluntary_exit, process_withdrawals, slash_attesters_in_both,
    },
    view::StateMut,
};

/// `process_block(state, block)` for a Deneb block.
///
/// On error the state is partly written: callers that keep the state process a clone (as
/// [`state_transition`](crate::state_transition::state_transition) does).
///
/// [spec]: deneb/beacon-chain.md#block-processing
pub fn process_block<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    verify: VerifySignatures,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let verify = match verify {
        VerifySignatures::Batched => VerifySignatures::Individually,
        other => other,
    };
    let body = &block.body;
    process_block_header_fields(
        state,
        caches,
        block.slot,
        block.proposer_index,
        block.parent_root,
        body.tree_hash_root(),
    )?;
    process_withdrawals(state, &body.execution_payload)?;
    process_execution_payload(state, body, engine, spec)?;
    process_randao_reveal(state, caches, &body.randao_reveal, verify)?;
    process_eth1_vote(state, &body.eth1_data).map_err(BlockProcessingError::Eth1Data)?;
    process_operations(state, caches, body, verify, spec)?;
    process_sync_aggregate(state, caches, &body.sync_aggregate, verify)?;
    Ok(())
}

/// `process_execution_payload(state, body, execution_engine)` [Modified in Deneb:EIP4844]: the
/// consensus checks Electra keeps, at most `MAX_BLOBS_PER_BLOCK` commitments, and the engine's
/// verdict on a request without execution requests.
///
/// [spec]: deneb/beacon-chain.md#modified-process_execution_payload
pub fn process_execution_payload<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    body: &BeaconBlockBody<E>,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), ExecutionPayloadInvalid> {
    let payload = &body.execution_payload;
    check_execution_payload(state, payload, spec)?;
    let max_blobs = spec.max_blobs_per_block;
    if body.blob_kzg_commitments.len() as u64 > max_blobs {
        return Err(ExecutionPayloadInvalid::TooManyBlobCommitments {
            count: body.blob_kzg_commitments.len(),
            max: max_blobs,
        });
    }
    let versioned_hashes = body
        .blob_kzg_commitments
        .iter()
        .map(kzg_commitment_to_versioned_hash)
        .collect();
    let valid = engine
        .verify_new_payload_deneb(
            payload,
            versioned_hashes,
            state.latest_block_header.parent_root,
        )
        .map_err(ExecutionPayloadInvalid::EngineFailed)?;
    if !valid {
        return Err(ExecutionPayloadInvalid::RejectedByEngine);
    }
    cache_execution_payload_header(state, payload)?;
    Ok(())
}

/// `process_operations(state, body)` (Capella's, as Deneb has it): every eth1 deposit the
/// deposit contract has and the state lacks, up to `MAX_DEPOSITS`, must be included.
///
/// [spec]: capella/beacon-chain.md#modified-process_operations
pub fn process_operations<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    body: &BeaconBlockBody<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let outstanding = state
        .eth1_data
        .deposit_count
        .checked_sub(*state.eth1_deposit_index)
        .ok_or(Error::ArithmeticOverflow("eth1 deposits outstanding"))?;
    let expected_deposits = E::MaxDeposits::to_u64().min(outstanding);
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
    Ok(())
}

/// `process_attester_slashing(state, attester_slashing)` for Deneb's attester slashing (indexed
/// attestations of at most `MAX_VALIDATORS_PER_COMMITTEE` indices).
///
/// [spec]: phase0/beacon-chain.md#attester-slashings
pub fn process_attester_slashing<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    attester_slashing: &AttesterSlashing<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), AttesterSlashingInvalid> {
    let attestation_1 = &attester_slashing.attestation_1;
    let attestation_2 = &attester_slashing.attestation_2;
    if !is_slashable_attestation_data(&attestation_1.data, &attestation_2.data) {
        return Err(AttesterSlashingInvalid::NotSlashable);
    }
    for (which, indexed) in [(1, attestation_1), (2, attestation_2)] {
        attestation::is_valid_indexed_attestation_parts(
            &state.as_ref(),
            caches,
            &indexed.attesting_indices,
            &indexed.data,
            &indexed.signature,
            verify,
        )
        .map_err(|reason| AttesterSlashingInvalid::InvalidAttestation { which, reason })?;
    }
    slash_attesters_in_both(
        state,
        caches,
        &attestation_1.attesting_indices,
        &attestation_2.attesting_indices,
        spec,
    )
}

/// `process_attestation(state, attestation)` [Modified in Deneb:EIP7045]: an attestation of
/// one committee (`data.index`), included from `MIN_ATTESTATION_INCLUSION_DELAY` slots on, with
/// aggregation bits one per committee member.
///
/// [spec]: deneb/beacon-chain.md#modified-process_attestation
pub fn process_attestation<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    attestation: &Attestation<E>,
    verify: VerifySignatures,
) -> Result<(), AttestationInvalid> {
    let data = &attestation.data;
    let committees = attestation::attestation_committees(&state.as_ref(), caches, data)?;
    let count = committees.committees_per_slot();
    if data.index >= count {
        return Err(AttestationInvalid::CommitteeIndexOutOfRange {
            index: data.index,
            count,
        });
    }
    let committee = committees.get_beacon_committee(data.slot, data.index)?;
    let bits = &attestation.aggregation_bits;
    if bits.len() != committee.len() {
        return Err(AttestationInvalid::AggregationBitsLength {
            expected: committee.len(),
            got: bits.len(),
        });
    }
    let flags = attestation::get_attestation_participation_flag_indices(
        &state.as_ref(),
        data,
        *state.slot - data.slot,
    )?;
    // `get_indexed_attestation`: the attesters, sorted.
    let mut attesters: Vec<ValidatorIndex> = committee
        .iter()
        .enumerate()
        .filter(|(i, _)| bits.get(*i).unwrap_or(false))
        .map(|(_, &index)| index)
        .collect();
    attesters.sort_unstable();
    attestation::is_valid_indexed_attestation_parts(
        &state.as_ref(),
        caches,
        &attesters,
        data,
        &attestation.signature,
        verify,
    )
    .map_err(AttestationInvalid::IndexedAttestation)?;
    attestation::apply_participation(state, caches, data, flags, |f| {
        attesters.iter().for_each(|&index| f(index));
        Ok(())
    })
}

/// `apply_deposit(state, pubkey, withdrawal_credentials, amount, signature)` (Altair's, as Deneb
/// has it): a new key with a valid proof of possession joins the registry with the amount; a
/// known key's balance grows by it at once.
///
/// [spec]: altair/beacon-chain.md#modified-apply_deposit
pub fn apply_deposit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    pubkey: &BLSPubkey,
    withdrawal_credentials: &Bytes32,
    amount: Gwei,
    signature: &BLSSignature,
    spec: &ChainSpec,
) -> Result<(), Error> {
    match caches.validator_index(&state.as_ref(), &pubkey_bytes(pubkey)) {
        None => {
            if is_valid_deposit_signature(pubkey, withdrawal_credentials, amount, signature, spec) {
                add_validator_to_registry(state, caches, *pubkey, *withdrawal_credentials, amount)?;
            }
            Ok(())
        }
        Some(index) => increase_balance(state, index, amount),
    }
}
