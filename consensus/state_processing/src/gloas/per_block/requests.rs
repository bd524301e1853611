//! Builder deposit and exit requests (EIP-8282), which the parent's payload carries beside the
//! validators' requests. Like those, a request the spec cannot honour is skipped, never a
//! reason to refuse the block.
//!
//! [spec]: gloas/beacon-chain.md#builder-deposit-requests

use types::{
    BLSPubkey, ChainSpec, EthSpec, ExecutionAddress, FAR_FUTURE_EPOCH, Gwei,
    gloas::{BuilderDepositRequest, BuilderExitRequest, DepositMessage, PAYLOAD_BUILDER_VERSION},
    signing::{DOMAIN_BUILDER_DEPOSIT, compute_signing_root},
};

use crate::{
    Error,
    common::{get_current_epoch, pubkey_bytes},
    error::add,
    gloas::builders::{
        add_builder_to_registry, builder, builder_index_of, builder_mut,
        get_pending_balance_to_withdraw_for_builder, initiate_builder_exit, is_active_builder,
        is_builder_withdrawal_credential,
    },
    view::StateMut,
};

/// `is_valid_builder_deposit_signature(request)`: the proof of possession, the `DepositMessage`
/// signed under `DOMAIN_BUILDER_DEPOSIT` (fork-agnostic, so that validator and builder deposit
/// signatures cannot be replayed against each other). Undecodable keys or signatures are invalid.
///
/// [spec]: gloas/beacon-chain.md#new-is_valid_builder_deposit_signature
pub fn is_valid_builder_deposit_signature(
    request: &BuilderDepositRequest,
    spec: &ChainSpec,
) -> bool {
    let Ok(public_key) = pubkey_bytes(&request.pubkey).decompress() else {
        return false;
    };
    let Ok(signature) = bls::Signature::deserialize(request.signature.as_slice()) else {
        return false;
    };
    let message = DepositMessage {
        pubkey: request.pubkey,
        withdrawal_credentials: request.withdrawal_credentials,
        amount: request.amount,
    };
    let domain = spec.compute_genesis_domain(DOMAIN_BUILDER_DEPOSIT);
    let signing_root = compute_signing_root(&message, domain);
    bls::verify(&public_key, signing_root.as_slice(), &signature)
}

/// `add_builder_to_registry(state, pubkey, PAYLOAD_BUILDER_VERSION, address, amount, state.slot)`
/// for a new builder's deposit.
pub fn add_builder_to_registry_from_request<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    pubkey: BLSPubkey,
    execution_address: ExecutionAddress,
    amount: Gwei,
) -> Result<(), Error> {
    let slot = *state.slot;
    add_builder_to_registry(
        state,
        pubkey,
        PAYLOAD_BUILDER_VERSION,
        execution_address,
        amount,
        slot,
    )
}

/// `process_builder_deposit_request(state, request)`: a new key with a valid proof of
/// possession joins the builder registry (reusing a swept exited builder's index); a known key
/// is topped up (an exited and swept builder gets a fresh withdrawable epoch, so the deposit is
/// withdrawn). Requests with another credential prefix are ignored.
///
/// [spec]: gloas/beacon-chain.md#new-process_builder_deposit_request
pub fn process_builder_deposit_request<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    request: &BuilderDepositRequest,
    spec: &ChainSpec,
) -> Result<(), Error> {
    if !is_builder_withdrawal_credential(&request.withdrawal_credentials) {
        return Ok(());
    }
    let existing = builder_index_of(&state.as_ref().gloas()?, &request.pubkey);
    let Some(builder_index) = existing else {
        if is_valid_builder_deposit_signature(request, spec) {
            let address = ExecutionAddress::from_slice(&request.withdrawal_credentials[12..]);
            add_builder_to_registry_from_request(state, request.pubkey, address, request.amount)?;
        }
        return Ok(());
    };
    let epoch = get_current_epoch(&state.as_ref());
    let b = builder_mut(state, builder_index)?;
    // Exited and swept: reset the withdrawable epoch.
    if b.withdrawable_epoch != FAR_FUTURE_EPOCH && b.balance == 0 {
        b.withdrawable_epoch = add(
            epoch,
            spec.min_builder_withdrawability_delay,
            "builder withdrawable epoch",
        )?;
    }
    b.balance = add(b.balance, request.amount, "builder balance")?;
    Ok(())
}

/// `process_builder_exit_request(state, request)`: an active builder with nothing pending, asked
/// by its own execution address, starts its exit; any other request is ignored.
///
/// [spec]: gloas/beacon-chain.md#new-process_builder_exit_request
pub fn process_builder_exit_request<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    request: &BuilderExitRequest,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let state_ref = state.as_ref();
    let gloas = state_ref.gloas()?;
    let Some(builder_index) = builder_index_of(&gloas, &request.pubkey) else {
        return Ok(());
    };
    if !is_active_builder(&state_ref, builder_index)? {
        return Ok(());
    }
    if builder(&gloas, builder_index)?.execution_address != request.source_address {
        return Ok(());
    }
    if get_pending_balance_to_withdraw_for_builder(&state_ref, builder_index)? != 0 {
        return Ok(());
    }
    initiate_builder_exit(state, builder_index, spec)
}
