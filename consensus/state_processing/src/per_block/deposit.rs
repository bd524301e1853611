//! Eth1 deposits (Electra only: Fulu removes the mechanism, and a Fulu block with a deposit is
//! refused by `process_operations`).
//!
//! [spec]: electra/beacon-chain.md#deposits

use tree_hash::TreeHash;
use types::{
    BLSPubkey, BLSSignature, Bytes32, ChainSpec, EthSpec, GENESIS_SLOT, Gwei,
    electra::{Deposit, PendingDeposit},
};

use super::DepositInvalid;
use crate::{
    Caches, Error,
    common::{
        add_validator_to_registry, is_valid_deposit_signature, is_valid_merkle_branch, pubkey_bytes,
    },
    view::StateMut,
};
use types::DEPOSIT_CONTRACT_TREE_DEPTH;

/// `process_deposit(state, deposit)`: checks the deposit's proof against the eth1 deposit root
/// and applies it.
///
/// [spec]: electra/beacon-chain.md#modified-process_deposit
pub fn process_deposit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    deposit: &Deposit,
    spec: &ChainSpec,
) -> Result<(), DepositInvalid> {
    let deposit_index = *state.eth1_deposit_index;
    if !is_valid_merkle_branch(
        deposit.data.tree_hash_root(),
        &deposit.proof,
        // One more level for the list length mixed in.
        DEPOSIT_CONTRACT_TREE_DEPTH as usize + 1,
        deposit_index,
        state.eth1_data.deposit_root,
    ) {
        return Err(DepositInvalid::BadMerkleProof { deposit_index });
    }
    *state.eth1_deposit_index = deposit_index + 1;
    apply_deposit(
        state,
        caches,
        &deposit.data.pubkey,
        &deposit.data.withdrawal_credentials,
        deposit.data.amount,
        &deposit.data.signature,
        spec,
    )?;
    Ok(())
}

/// `apply_deposit(state, pubkey, withdrawal_credentials, amount, signature)`: a new key with a
/// valid proof of possession joins the registry with a zero balance; the amount is queued as a
/// pending deposit (for a known key too). A new key with an invalid signature is ignored.
///
/// [spec]: electra/beacon-chain.md#modified-apply_deposit
pub fn apply_deposit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    pubkey: &BLSPubkey,
    withdrawal_credentials: &Bytes32,
    amount: Gwei,
    signature: &BLSSignature,
    spec: &ChainSpec,
) -> Result<(), Error> {
    if !state.fork_name.electra_enabled() {
        return crate::deneb::apply_deposit(
            state,
            caches,
            pubkey,
            withdrawal_credentials,
            amount,
            signature,
            spec,
        );
    }
    if caches
        .validator_index(&state.as_ref(), &pubkey_bytes(pubkey))
        .is_none()
    {
        if !is_valid_deposit_signature(pubkey, withdrawal_credentials, amount, signature, spec) {
            return Ok(());
        }
        add_validator_to_registry(state, caches, *pubkey, *withdrawal_credentials, 0)?;
    }
    crate::view::electra_field(
        state.pending_deposits.as_mut(),
        "pending_deposits",
        state.fork_name,
    )?
    .push(PendingDeposit {
        pubkey: *pubkey,
        withdrawal_credentials: *withdrawal_credentials,
        amount,
        signature: *signature,
        slot: GENESIS_SLOT,
    })
    .map_err(|_| Error::ListFull("pending_deposits"))?;
    Ok(())
}
