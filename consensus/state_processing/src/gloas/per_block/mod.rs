//! Gloas block processing (EIP-7732 ePBS, EIP-7688 progressive lists, EIP-8282 builder
//! requests): `process_block` in the spec's order, and the Gloas operations.
//!
//! A Gloas block executes no payload: it applies its *parent's* payload effects
//! ([`process_parent_execution_payload`]), debits the withdrawals the next payload must carry
//! ([`withdrawals`]), and records the builder's bid for its own payload
//! ([`process_execution_payload_bid`]). The operations are the Electra ones (with the Gloas
//! types, explicit count checks, and the payload signal in attestations) plus payload
//! attestations. Execution requests arrive one block late, in `parent_execution_requests`
//! ([`requests`]).
//!
//! The shared steps (header, randao, eth1, sync aggregate, slashings, exits, BLS changes) are
//! `crate::per_block`'s, which branch on the fork where Gloas modifies them.
//!
//! [spec]: gloas/beacon-chain.md#block-processing

pub mod requests;
pub mod withdrawals;

pub use requests::{
    add_builder_to_registry_from_request, is_valid_builder_deposit_signature,
    process_builder_deposit_request, process_builder_exit_request,
};
pub use withdrawals::{
    ExpectedWithdrawals, apply_withdrawals, get_builder_withdrawals,
    get_builders_sweep_withdrawals, get_expected_withdrawals, process_withdrawals,
};

use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    BLSSignature, ChainSpec, EthSpec, GENESIS_SLOT, Root, Slot,
    gloas::{
        Attestation, AttestationData, AttesterSlashing, BUILDER_INDEX_SELF_BUILD, BeaconBlock,
        BeaconBlockBody, BuilderPendingPayment, BuilderPendingWithdrawal, ExecutionRequests,
        IndexedPayloadAttestation, PAYLOAD_BUILDER_VERSION, PayloadAttestation,
        SignedExecutionPayloadBid,
    },
};

use crate::{
    Caches, Error,
    common::{
        TIMELY_HEAD_FLAG_INDEX, TIMELY_SOURCE_FLAG_INDEX, TIMELY_TARGET_FLAG_INDEX, add_flag,
        compute_epoch_at_slot, get_beacon_proposer_index, get_block_root, get_block_root_at_slot,
        get_current_epoch, get_previous_epoch, get_randao_mix, integer_squareroot,
    },
    gloas::builders::{builder, can_builder_cover_bid, is_active_builder, settle_builder_payment},
    per_block::{
        AttestationInvalid, AttesterSlashingInvalid, BlockProcessingError, BlockSignatureVerifier,
        ExecutionPayloadBidInvalid, IndexedAttestationInvalid, ParentExecutionPayloadInvalid,
        PayloadAttestationInvalid, VerifySignatures, attestation, process_block_header_fields,
        process_bls_to_execution_change, process_consolidation_request, process_deposit_request,
        process_eth1_vote, process_proposer_slashing, process_randao_reveal,
        process_sync_aggregate, process_voluntary_exit, process_withdrawal_request,
        signature_sets::{self, SignatureSetError},
    },
    view::{StateMut, StateRef},
};

/// `process_block(state, block)` for a Gloas block: every step, in the spec's order.
///
/// With [`VerifySignatures::Batched`] the block's signature sets (randao, slashings,
/// attestations, exits, BLS changes, the bid, payload attestations, sync aggregate) are verified
/// first, in one batch.
///
/// On error the state is partly written: callers that keep the state must process a clone.
///
/// [spec]: gloas/beacon-chain.md#block-processing
pub fn process_block<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let body_root = block.body.tree_hash_root();
    let verify = if verify == VerifySignatures::Batched {
        let mut verifier = BlockSignatureVerifier::new();
        verifier.include_gloas_body(&state.as_ref(), caches, block, spec)?;
        verifier.verify()?;
        VerifySignatures::None
    } else {
        verify
    };
    process_block_with_body_root(state, caches, block, body_root, verify, spec)
}

/// [`process_block`] without batching, for a block whose body root is known.
pub fn process_block_with_body_root<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    body_root: Root,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    // [New in Gloas:EIP7732]
    process_parent_execution_payload(state, caches, block, spec)?;
    process_block_header_fields(
        state,
        caches,
        block.slot,
        block.proposer_index,
        block.parent_root,
        body_root,
    )?;
    // [Modified in Gloas:EIP7732]
    process_withdrawals(state)?;
    // [New in Gloas:EIP7732]
    let parent_slot = process_execution_payload_bid(
        state,
        caches,
        &block.body.signed_execution_payload_bid,
        verify,
        spec,
    )?;
    process_randao_reveal(state, caches, &block.body.randao_reveal, verify)?;
    process_eth1_vote(state, &block.body.eth1_data).map_err(BlockProcessingError::Eth1Data)?;
    // [Modified in Gloas:EIP7732]
    process_operations(state, caches, &block.body, parent_slot, verify, spec)?;
    process_sync_aggregate(state, caches, &block.body.sync_aggregate, verify)?;
    Ok(())
}

/// `process_block_header(state, block)` for a Gloas block.
///
/// [spec]: phase0/beacon-chain.md#block-header
pub fn process_block_header<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
) -> Result<(), crate::per_block::HeaderInvalid> {
    process_block_header_fields(
        state,
        caches,
        block.slot,
        block.proposer_index,
        block.parent_root,
        block.body.tree_hash_root(),
    )
}

/// `process_parent_execution_payload(state, block)`: when the block builds on its parent's
/// payload (the bid's parent hash is the parent bid's block hash), the parent's requests must be
/// the ones its bid committed to, and they are applied; when the parent's payload is empty, the
/// block carries no requests.
///
/// [spec]: gloas/beacon-chain.md#new-process_parent_execution_payload
pub fn process_parent_execution_payload<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    block: &BeaconBlock<E>,
    spec: &ChainSpec,
) -> Result<(), ParentExecutionPayloadInvalid> {
    let bid = &block.body.signed_execution_payload_bid.message;
    let requests = &block.body.parent_execution_requests;
    let parent_bid = &state.gloas_mut()?.latest_execution_payload_bid;
    if bid.parent_block_hash != parent_bid.block_hash {
        // The parent was EMPTY: no execution requests expected.
        if *requests != ExecutionRequests::default() {
            return Err(ParentExecutionPayloadInvalid::RequestsNotEmpty);
        }
        return Ok(());
    }
    // The parent was FULL: check the bid's commitment and apply the payload.
    let computed = requests.tree_hash_root();
    if computed != parent_bid.execution_requests_root {
        return Err(ParentExecutionPayloadInvalid::RequestsRootMismatch {
            computed,
            committed: parent_bid.execution_requests_root,
        });
    }
    apply_parent_execution_payload(state, caches, requests, spec)
}

/// `apply_parent_execution_payload(state, requests)`: settles the parent builder's payment, then
/// processes the parent payload's requests at this (the child's) slot, then marks the parent's
/// payload available and adopts its block hash. The proposer also calls it, on a copy of the
/// state, to compute its block's withdrawals.
///
/// 1.7.0b4 settles the payment *before* the requests (the August draft did it after).
///
/// [spec]: gloas/beacon-chain.md#new-apply_parent_execution_payload
pub fn apply_parent_execution_payload<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    requests: &ExecutionRequests,
    spec: &ChainSpec,
) -> Result<(), ParentExecutionPayloadInvalid> {
    let parent_bid = state.gloas_mut()?.latest_execution_payload_bid.clone();
    let parent_slot = parent_bid.slot;
    let parent_epoch = compute_epoch_at_slot::<E>(parent_slot);

    for (kind, count, max) in [
        (
            "withdrawal",
            requests.withdrawals.len(),
            E::MaxWithdrawalRequestsPerPayload::to_u64(),
        ),
        (
            "consolidation",
            requests.consolidations.len(),
            E::MaxConsolidationRequestsPerPayload::to_u64(),
        ),
        (
            "builder deposit",
            requests.builder_deposits.len(),
            E::MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD,
        ),
        (
            "builder exit",
            requests.builder_exits.len(),
            E::MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD,
        ),
    ] {
        if count as u64 > max {
            return Err(ParentExecutionPayloadInvalid::TooManyRequests { kind, count, max });
        }
    }

    // Settle the builder payment.
    let slots_per_epoch = E::slots_per_epoch();
    let state_ref = state.as_ref();
    if parent_epoch == get_current_epoch(&state_ref) {
        settle_builder_payment(state, slots_per_epoch + parent_slot % slots_per_epoch)?;
    } else if parent_epoch == get_previous_epoch(&state_ref) {
        settle_builder_payment(state, parent_slot % slots_per_epoch)?;
    } else if parent_bid.value > 0 {
        // The parent is older than the previous epoch: its payment entry has been evicted from
        // `builder_pending_payments`. Append the withdrawal directly.
        state
            .gloas_mut()?
            .builder_pending_withdrawals
            .push(BuilderPendingWithdrawal {
                fee_recipient: parent_bid.fee_recipient,
                amount: parent_bid.value,
                builder_index: parent_bid.builder_index,
            });
    }

    // The requests of the parent's payload, processed at `state.slot` (the child's slot).
    let request = |kind: &'static str| {
        move |index: usize| {
            move |reason: Error| ParentExecutionPayloadInvalid::Request {
                kind,
                index,
                reason,
            }
        }
    };
    for (index, op) in requests.deposits.iter().enumerate() {
        process_deposit_request(state, op).map_err(request("deposit")(index))?;
    }
    for (index, op) in requests.withdrawals.iter().enumerate() {
        process_withdrawal_request(state, caches, op, spec)
            .map_err(request("withdrawal")(index))?;
    }
    for (index, op) in requests.consolidations.iter().enumerate() {
        process_consolidation_request(state, caches, op, spec)
            .map_err(request("consolidation")(index))?;
    }
    for (index, op) in requests.builder_deposits.iter().enumerate() {
        process_builder_deposit_request(state, op, spec)
            .map_err(request("builder deposit")(index))?;
    }
    for (index, op) in requests.builder_exits.iter().enumerate() {
        process_builder_exit_request(state, op, spec).map_err(request("builder exit")(index))?;
    }

    // The parent's payload availability and the latest block hash.
    let gloas = state.gloas_mut()?;
    let i = (parent_slot % E::SlotsPerHistoricalRoot::to_u64()) as usize;
    gloas
        .execution_payload_availability
        .set(i, true)
        .map_err(|e| Error::Tree(format!("execution_payload_availability: {e:?}")))?;
    *gloas.latest_block_hash = parent_bid.block_hash;
    Ok(())
}

/// `verify_execution_payload_bid_signature(state, signed_bid)`: the builder's signature over the
/// bid (`DOMAIN_BEACON_BUILDER`).
///
/// [spec]: gloas/beacon-chain.md#new-verify_execution_payload_bid_signature
pub fn verify_execution_payload_bid_signature<E: EthSpec>(
    state: &StateRef<'_, E>,
    signed_bid: &SignedExecutionPayloadBid,
) -> Result<bool, Error> {
    match signature_sets::execution_payload_bid_signature_set(state, signed_bid) {
        Ok(Some(set)) => Ok(set.verify()),
        // A self-build has no builder key: nothing verifies it.
        Ok(None) | Err(SignatureSetError::Malformed) => Ok(false),
        Err(SignatureSetError::State(e)) => Err(e),
    }
}

/// `bls.G2_POINT_AT_INFINITY`, the signature of a self-built bid.
fn g2_point_at_infinity() -> BLSSignature {
    bls::Signature::INFINITY_BYTES.into()
}

/// `process_execution_payload_bid(state, signed_bid)`: checks the block's bid (a self-build, or
/// an active payload builder that can cover it and signed it) and records it, with its pending
/// payment. Returns the parent block's slot (the slot of the bid it replaces), which
/// `process_attestation` uses.
///
/// [spec]: gloas/beacon-chain.md#new-process_execution_payload_bid
pub fn process_execution_payload_bid<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    signed_bid: &SignedExecutionPayloadBid,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<Slot, ExecutionPayloadBidInvalid> {
    let bid = &signed_bid.message;
    let builder_index = bid.builder_index;
    let amount = bid.value;
    let state_ref = state.as_ref();

    if builder_index == BUILDER_INDEX_SELF_BUILD {
        // For self-builds, the amount must be zero whatever the withdrawal credentials.
        if amount != 0 {
            return Err(ExecutionPayloadBidInvalid::SelfBuildNonZeroValue(amount));
        }
        if signed_bid.signature != g2_point_at_infinity() {
            return Err(ExecutionPayloadBidInvalid::SelfBuildSignatureNotInfinity);
        }
    } else {
        let gloas = state_ref.gloas()?;
        let b = builder(&gloas, builder_index).map_err(|_| {
            ExecutionPayloadBidInvalid::UnknownBuilder {
                index: builder_index,
                len: gloas.builders.len(),
            }
        })?;
        if !is_active_builder(&state_ref, builder_index)? {
            return Err(ExecutionPayloadBidInvalid::BuilderNotActive(builder_index));
        }
        if b.version != PAYLOAD_BUILDER_VERSION {
            return Err(ExecutionPayloadBidInvalid::NotPayloadBuilder {
                index: builder_index,
                version: b.version,
            });
        }
        if !can_builder_cover_bid(&state_ref, builder_index, amount)? {
            return Err(ExecutionPayloadBidInvalid::InsufficientBuilderBalance {
                index: builder_index,
                amount,
            });
        }
        if verify.is_enabled() && !verify_execution_payload_bid_signature(&state_ref, signed_bid)? {
            return Err(ExecutionPayloadBidInvalid::InvalidSignature);
        }
    }

    // The commitments are within the blob schedule's limit.
    let epoch = get_current_epoch(&state_ref);
    let max = spec.get_blob_parameters(epoch).max_blobs_per_block;
    let count = bid.blob_kzg_commitments.len();
    if count as u64 > max {
        return Err(ExecutionPayloadBidInvalid::TooManyBlobCommitments { count, max });
    }

    // The bid is for the current slot and the right parent block.
    let state_slot = *state_ref.slot;
    if bid.slot != state_slot {
        return Err(ExecutionPayloadBidInvalid::SlotMismatch {
            bid: bid.slot,
            state: state_slot,
        });
    }
    if state_slot == GENESIS_SLOT {
        return Err(ExecutionPayloadBidInvalid::GenesisSlot);
    }
    let latest_block_hash = *state_ref.gloas()?.latest_block_hash;
    if bid.parent_block_hash != latest_block_hash {
        return Err(ExecutionPayloadBidInvalid::ParentBlockHashMismatch {
            bid: bid.parent_block_hash,
            expected: latest_block_hash,
        });
    }
    // [New in 1.7.0b4]: the bid's block is a new one.
    if bid.block_hash == bid.parent_block_hash {
        return Err(ExecutionPayloadBidInvalid::BlockHashIsParent(
            bid.block_hash,
        ));
    }
    let parent_root = get_block_root_at_slot(&state_ref, state_slot - 1)?;
    if bid.parent_block_root != parent_root {
        return Err(ExecutionPayloadBidInvalid::ParentBlockRootMismatch {
            bid: bid.parent_block_root,
            expected: parent_root,
        });
    }
    let randao_mix = get_randao_mix(&state_ref, epoch);
    if bid.prev_randao != randao_mix {
        return Err(ExecutionPayloadBidInvalid::PrevRandaoMismatch {
            bid: bid.prev_randao,
            expected: randao_mix,
        });
    }

    // Record the pending payment, if any.
    if amount > 0 {
        let proposer_index = get_beacon_proposer_index(&state.as_ref(), caches)?;
        let slots_per_epoch = E::slots_per_epoch();
        let i = (slots_per_epoch + bid.slot % slots_per_epoch) as usize;
        let entry = state
            .gloas_mut()?
            .builder_pending_payments
            .get_mut(i)
            .ok_or(Error::Tree(
                "builder_pending_payments shorter than its length".into(),
            ))?;
        *entry = BuilderPendingPayment {
            weight: 0,
            withdrawal: BuilderPendingWithdrawal {
                fee_recipient: bid.fee_recipient,
                amount,
                builder_index,
            },
            proposer_index,
        };
    }

    // The parent block's slot, read before the bid is replaced.
    let gloas = state.gloas_mut()?;
    let parent_slot = gloas.latest_execution_payload_bid.slot;
    *gloas.latest_execution_payload_bid = bid.clone();
    Ok(parent_slot)
}

/// `process_operations(state, body, parent_slot)`: the count checks (the lists are progressive,
/// so their types no longer bound them), then every operation in the spec's order. Execution
/// requests are no longer here: they arrive with the next block
/// ([`process_parent_execution_payload`]).
///
/// [spec]: gloas/beacon-chain.md#modified-process_operations
pub fn process_operations<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    body: &BeaconBlockBody<E>,
    parent_slot: Slot,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    if !body.deposits.is_empty() {
        return Err(BlockProcessingError::DepositCount {
            expected: 0,
            got: body.deposits.len() as u64,
        });
    }
    // [New in Gloas:EIP7688]
    for (operation, count, max) in [
        (
            "proposer slashings",
            body.proposer_slashings.len(),
            E::MaxProposerSlashings::to_u64(),
        ),
        (
            "attester slashings",
            body.attester_slashings.len(),
            E::MaxAttesterSlashingsElectra::to_u64(),
        ),
        (
            "attestations",
            body.attestations.len(),
            E::MaxAttestationsElectra::to_u64(),
        ),
        (
            "voluntary exits",
            body.voluntary_exits.len(),
            E::MaxVoluntaryExits::to_u64(),
        ),
        (
            "BLS to execution changes",
            body.bls_to_execution_changes.len(),
            E::MaxBlsToExecutionChanges::to_u64(),
        ),
        (
            "payload attestations",
            body.payload_attestations.len(),
            E::MAX_PAYLOAD_ATTESTATIONS,
        ),
    ] {
        if count as u64 > max {
            return Err(BlockProcessingError::TooManyOperations {
                operation,
                count,
                max,
            });
        }
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
        process_attestation(state, caches, op, parent_slot, verify)
            .map_err(|reason| BlockProcessingError::Attestation { index, reason })?;
    }
    for (index, op) in body.voluntary_exits.iter().enumerate() {
        process_voluntary_exit(state, caches, op, verify, spec)
            .map_err(|reason| BlockProcessingError::VoluntaryExit { index, reason })?;
    }
    for (index, op) in body.bls_to_execution_changes.iter().enumerate() {
        process_bls_to_execution_change(state, op, verify, spec)
            .map_err(|reason| BlockProcessingError::BlsToExecutionChange { index, reason })?;
    }
    // [New in Gloas:EIP7732]
    for (index, op) in body.payload_attestations.iter().enumerate() {
        process_payload_attestation(state, caches, op, verify)
            .map_err(|reason| BlockProcessingError::PayloadAttestation { index, reason })?;
    }
    Ok(())
}

/// `process_attester_slashing(state, attester_slashing)` for Gloas's attester slashing (whose
/// indexed attestations hold progressive index lists).
///
/// [spec]: phase0/beacon-chain.md#attester-slashings
pub fn process_attester_slashing<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    attester_slashing: &AttesterSlashing,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), AttesterSlashingInvalid> {
    let attestation_1 = &attester_slashing.attestation_1;
    let attestation_2 = &attester_slashing.attestation_2;
    if !crate::common::is_slashable_attestation_data(&attestation_1.data, &attestation_2.data) {
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
    crate::per_block::slash_attesters_in_both(
        state,
        caches,
        &attestation_1.attesting_indices,
        &attestation_2.attesting_indices,
        spec,
    )
}

/// `get_attesting_indices(state, attestation)` for a Gloas attestation (its aggregation bits
/// are a progressive list), sorted: what `get_indexed_attestation` puts in the indexed
/// attestation that fork choice's `on_attestation` checks.
///
/// [spec]: electra/beacon-chain.md#modified-get_attesting_indices
pub fn get_attesting_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    attestation: &Attestation<E>,
) -> Result<Vec<types::ValidatorIndex>, AttestationInvalid> {
    attestation::get_attesting_indices_of(state, caches, attestation)
}

/// `is_valid_indexed_attestation(state, indexed_attestation)` on a Gloas indexed attestation's
/// parts (non-empty, sorted and unique indices; unless `verify` is off, a valid aggregate
/// signature).
///
/// [spec]: phase0/beacon-chain.md#is_valid_indexed_attestation
pub fn is_valid_indexed_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    attesting_indices: &[types::ValidatorIndex],
    data: &AttestationData,
    signature: &BLSSignature,
    verify: VerifySignatures,
) -> Result<(), IndexedAttestationInvalid> {
    attestation::is_valid_indexed_attestation_parts(
        state,
        caches,
        attesting_indices,
        data,
        signature,
        verify,
    )
}

/// `is_attestation_same_slot(state, data)`: whether the attestation votes for the block
/// proposed at its own slot (not for an earlier block, through a skipped slot).
///
/// [spec]: gloas/beacon-chain.md#new-is_attestation_same_slot
pub fn is_attestation_same_slot<E: EthSpec>(
    state: &StateRef<'_, E>,
    data: &AttestationData,
) -> Result<bool, Error> {
    if data.slot == 0 {
        return Ok(true);
    }
    let blockroot = data.beacon_block_root;
    let slot_blockroot = get_block_root_at_slot(state, data.slot)?;
    let prev_blockroot = get_block_root_at_slot(state, data.slot - 1)?;
    Ok(blockroot == slot_blockroot && blockroot != prev_blockroot)
}

/// `get_attestation_participation_flag_indices(state, data, inclusion_delay, parent_slot)`, as
/// a bit mask of flag indices. The head flag also needs the payload signal (`data.index`) to
/// match the payload availability of the parent block (at `parent_slot`); a same-slot
/// attestation must signal 0.
///
/// [spec]: gloas/beacon-chain.md#modified-get_attestation_participation_flag_indices
pub fn get_attestation_participation_flag_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    data: &AttestationData,
    inclusion_delay: u64,
    parent_slot: Slot,
) -> Result<u8, AttestationInvalid> {
    let justified_checkpoint = if data.target.epoch == get_current_epoch(state) {
        state.current_justified_checkpoint
    } else {
        state.previous_justified_checkpoint
    };
    let is_matching_source = data.source == *justified_checkpoint;
    let target_root_matches = data.target.root == get_block_root(state, data.target.epoch)?;
    let is_matching_target = is_matching_source && target_root_matches;

    // [New in Gloas:EIP7732]
    let payload_matches = if is_attestation_same_slot(state, data)? {
        if data.index != 0 {
            return Err(AttestationInvalid::SameSlotNonZeroIndex(data.index));
        }
        true
    } else {
        let i = (parent_slot % E::SlotsPerHistoricalRoot::to_u64()) as usize;
        let payload_index = state
            .gloas()?
            .execution_payload_availability
            .get(i)
            .map_err(|e| Error::Tree(format!("execution_payload_availability: {e:?}")))?;
        data.index == u64::from(payload_index)
    };

    let head_root_matches = data.beacon_block_root == get_block_root_at_slot(state, data.slot)?;
    // [Modified in Gloas:EIP7732]
    let is_matching_head = is_matching_target && head_root_matches && payload_matches;

    if !is_matching_source {
        return Err(AttestationInvalid::SourceMismatch {
            epoch: data.source.epoch,
        });
    }

    let mut flags = 0u8;
    if inclusion_delay <= integer_squareroot(E::slots_per_epoch()) {
        flags = add_flag(flags, TIMELY_SOURCE_FLAG_INDEX);
    }
    if is_matching_target {
        flags = add_flag(flags, TIMELY_TARGET_FLAG_INDEX);
    }
    if is_matching_head && inclusion_delay == E::MIN_ATTESTATION_INCLUSION_DELAY {
        flags = add_flag(flags, TIMELY_HEAD_FLAG_INDEX);
    }
    Ok(flags)
}

/// `process_attestation(state, attestation, parent_slot)`: Electra's checks (with `data.index`
/// in {0, 1}), the participation flags with the payload signal, and, for a same-slot
/// attestation, the effective balance of each attester that sets a new flag added to the weight
/// of that slot's builder payment.
///
/// [spec]: gloas/beacon-chain.md#modified-process_attestation
pub fn process_attestation<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    attestation: &Attestation<E>,
    parent_slot: Slot,
    verify: VerifySignatures,
) -> Result<(), AttestationInvalid> {
    let data = &attestation.data;
    let committees = attestation::attestation_committees(&state.as_ref(), caches, data)?;
    // The structural checks, with no side effect.
    attestation::for_each_attester(&committees, attestation, |_| {})?;

    let inclusion_delay = *state.slot - data.slot;
    let flags = get_attestation_participation_flag_indices(
        &state.as_ref(),
        data,
        inclusion_delay,
        parent_slot,
    )?;

    if verify.is_enabled() {
        let set =
            signature_sets::attestation_signature_set_of(&state.as_ref(), caches, attestation)?;
        if !set.verify() {
            return Err(AttestationInvalid::IndexedAttestation(
                IndexedAttestationInvalid::InvalidSignature,
            ));
        }
    }

    // [New in Gloas:EIP7732]: the builder payment of the attested slot.
    let slots_per_epoch = E::slots_per_epoch();
    let payment_index = if data.target.epoch == get_current_epoch(&state.as_ref()) {
        slots_per_epoch + data.slot % slots_per_epoch
    } else {
        data.slot % slots_per_epoch
    } as usize;
    let payment_amount = state
        .gloas_mut()?
        .builder_pending_payments
        .get(payment_index)
        .ok_or(Error::Tree(
            "builder_pending_payments shorter than its length".into(),
        ))?
        .withdrawal
        .amount;
    let adds_weight = payment_amount > 0 && is_attestation_same_slot(&state.as_ref(), data)?;
    let mut weight: u64 = 0;
    attestation::apply_participation_with(
        state,
        caches,
        data,
        flags,
        |f| attestation::for_each_attester(&committees, attestation, f),
        |old_flags, effective_balance| {
            // [Modified in 1.7.0b4]: only an attester with no flag yet, so that an equivocating
            // attester (another target, say) adds its weight once.
            if adds_weight && old_flags == 0 {
                weight = weight.saturating_add(effective_balance);
            }
        },
    )?;
    if weight > 0 {
        let payment = state
            .gloas_mut()?
            .builder_pending_payments
            .get_mut(payment_index)
            .ok_or(Error::Tree(
                "builder_pending_payments shorter than its length".into(),
            ))?;
        payment.weight = crate::error::add(payment.weight, weight, "builder payment weight")?;
    }
    Ok(())
}

/// `get_indexed_payload_attestation(state, payload_attestation)`: the PTC members whose bits are
/// set, sorted.
///
/// [spec]: gloas/beacon-chain.md#new-get_indexed_payload_attestation
pub fn get_indexed_payload_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    payload_attestation: &PayloadAttestation<E>,
) -> Result<IndexedPayloadAttestation<E>, Error> {
    let ptc = crate::gloas::ptc::get_ptc(state, payload_attestation.data.slot)?;
    let bits = &payload_attestation.aggregation_bits;
    let mut attesting_indices: Vec<u64> = ptc
        .iter()
        .enumerate()
        .filter(|(i, _)| bits.get(*i).unwrap_or(false))
        .map(|(_, &index)| index)
        .collect();
    attesting_indices.sort_unstable();
    Ok(IndexedPayloadAttestation {
        attesting_indices: ssz_types::VariableList::new(attesting_indices)
            .map_err(|_| Error::ListFull("attesting_indices"))?,
        data: payload_attestation.data.clone(),
        signature: payload_attestation.signature,
    })
}

/// `is_valid_indexed_payload_attestation(state, indexed_payload_attestation)`: non-empty, sorted
/// indices and (unless `verify` is off) a valid aggregate signature (`DOMAIN_PTC_ATTESTER`).
///
/// [spec]: gloas/beacon-chain.md#new-is_valid_indexed_payload_attestation
pub fn is_valid_indexed_payload_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    indexed: &IndexedPayloadAttestation<E>,
    verify: VerifySignatures,
) -> Result<(), PayloadAttestationInvalid> {
    let indices = &indexed.attesting_indices;
    if indices.is_empty() {
        return Err(PayloadAttestationInvalid::Empty);
    }
    if let Some(position) = indices.windows(2).position(|w| w[0] > w[1]) {
        return Err(PayloadAttestationInvalid::NotSorted {
            position: position + 1,
        });
    }
    if verify.is_enabled() {
        let valid = match signature_sets::payload_attestation_signature_set(
            state,
            caches,
            indices,
            &indexed.data,
            &indexed.signature,
        ) {
            Ok(set) => set.verify(),
            Err(SignatureSetError::Malformed) => false,
            Err(SignatureSetError::State(e)) => return Err(e.into()),
        };
        if !valid {
            return Err(PayloadAttestationInvalid::InvalidSignature);
        }
    }
    Ok(())
}

/// `process_payload_attestation(state, payload_attestation)`: a PTC vote on the parent block's
/// payload, from the previous slot, with a valid aggregate signature. It changes nothing in the
/// state (fork choice counts the votes).
///
/// [spec]: gloas/beacon-chain.md#new-process_payload_attestation
pub fn process_payload_attestation<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    payload_attestation: &PayloadAttestation<E>,
    verify: VerifySignatures,
) -> Result<(), PayloadAttestationInvalid> {
    let data = &payload_attestation.data;
    let expected = state.latest_block_header.parent_root;
    if data.beacon_block_root != expected {
        return Err(PayloadAttestationInvalid::BlockRootMismatch {
            got: data.beacon_block_root,
            expected,
        });
    }
    if data.slot.saturating_add(1) != *state.slot {
        return Err(PayloadAttestationInvalid::SlotMismatch {
            slot: data.slot,
            state_slot: *state.slot,
        });
    }
    let state_ref = state.as_ref();
    let indexed = get_indexed_payload_attestation(&state_ref, payload_attestation)?;
    is_valid_indexed_payload_attestation(&state_ref, caches, &indexed, verify)
}
