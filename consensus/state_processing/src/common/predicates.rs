//! The spec's predicates, in their Electra form.
//!
//! [spec]: phase0/beacon-chain.md#predicates (and electra/beacon-chain.md#predicates)

use types::{
    BLSPubkey, BLSSignature, Bytes32, ChainSpec, Epoch, EthSpec, FAR_FUTURE_EPOCH, Gwei, Root,
    electra::{DepositMessage, Validator},
    signing::{DOMAIN_DEPOSIT, compute_signing_root},
};

use crate::{
    common::{
        COMPOUNDING_WITHDRAWAL_PREFIX, ETH1_ADDRESS_WITHDRAWAL_PREFIX,
        misc::{get_max_effective_balance, pubkey_bytes},
    },
    view::StateRef,
};

/// `is_active_validator(validator, epoch)`.
///
/// [spec]: phase0/beacon-chain.md#is_active_validator
#[inline]
pub fn is_active_validator(validator: &Validator, epoch: Epoch) -> bool {
    validator.activation_epoch <= epoch && epoch < validator.exit_epoch
}

/// `is_eligible_for_activation_queue(validator)` [Modified in Electra:EIP7251].
///
/// [spec]: electra/beacon-chain.md#modified-is_eligible_for_activation_queue
#[inline]
pub fn is_eligible_for_activation_queue<E: EthSpec>(validator: &Validator) -> bool {
    validator.activation_eligibility_epoch == FAR_FUTURE_EPOCH
        && validator.effective_balance >= E::MIN_ACTIVATION_BALANCE
}

/// `is_eligible_for_activation(state, validator)`.
///
/// [spec]: phase0/beacon-chain.md#is_eligible_for_activation
#[inline]
pub fn is_eligible_for_activation<E: EthSpec>(
    state: &StateRef<'_, E>,
    validator: &Validator,
) -> bool {
    validator.activation_eligibility_epoch <= state.finalized_checkpoint.epoch
        && validator.activation_epoch == FAR_FUTURE_EPOCH
}

/// `is_slashable_validator(validator, epoch)`.
///
/// [spec]: phase0/beacon-chain.md#is_slashable_validator
#[inline]
pub fn is_slashable_validator(validator: &Validator, epoch: Epoch) -> bool {
    !validator.slashed
        && validator.activation_epoch <= epoch
        && epoch < validator.withdrawable_epoch
}

/// `is_slashable_attestation_data(data_1, data_2)`: a double vote or a surround vote.
///
/// [spec]: phase0/beacon-chain.md#is_slashable_attestation_data
pub fn is_slashable_attestation_data(
    data_1: &types::electra::AttestationData,
    data_2: &types::electra::AttestationData,
) -> bool {
    (data_1 != data_2 && data_1.target.epoch == data_2.target.epoch)
        || (data_1.source.epoch < data_2.source.epoch && data_2.target.epoch < data_1.target.epoch)
}

/// `is_valid_merkle_branch(leaf, branch, depth, index, root)` (with the SSZ Merkle proofs, in
/// `types`).
pub use types::merkle_proof::is_valid_merkle_branch;

/// `has_eth1_withdrawal_credential(validator)`: an `0x01` credential.
#[inline]
pub fn has_eth1_withdrawal_credential(validator: &Validator) -> bool {
    validator.withdrawal_credentials[0] == ETH1_ADDRESS_WITHDRAWAL_PREFIX
}

/// `is_compounding_withdrawal_credential(withdrawal_credentials)` [New in Electra:EIP7251].
#[inline]
pub fn is_compounding_withdrawal_credential(withdrawal_credentials: &Root) -> bool {
    withdrawal_credentials[0] == COMPOUNDING_WITHDRAWAL_PREFIX
}

/// `has_compounding_withdrawal_credential(validator)` [New in Electra:EIP7251].
#[inline]
pub fn has_compounding_withdrawal_credential(validator: &Validator) -> bool {
    is_compounding_withdrawal_credential(&validator.withdrawal_credentials)
}

/// `has_execution_withdrawal_credential(validator)`: `0x01` or `0x02` [New in Electra:EIP7251].
#[inline]
pub fn has_execution_withdrawal_credential(validator: &Validator) -> bool {
    has_eth1_withdrawal_credential(validator) || has_compounding_withdrawal_credential(validator)
}

/// `is_fully_withdrawable_validator(validator, balance, epoch)` [Modified in Electra:EIP7251].
#[inline]
pub fn is_fully_withdrawable_validator(validator: &Validator, balance: Gwei, epoch: Epoch) -> bool {
    has_execution_withdrawal_credential(validator)
        && validator.withdrawable_epoch <= epoch
        && balance > 0
}

/// `is_partially_withdrawable_validator(validator, balance)` [Modified in Electra:EIP7251].
#[inline]
pub fn is_partially_withdrawable_validator<E: EthSpec>(
    validator: &Validator,
    balance: Gwei,
) -> bool {
    let max_effective_balance = get_max_effective_balance::<E>(validator);
    has_execution_withdrawal_credential(validator)
        && validator.effective_balance == max_effective_balance
        && balance > max_effective_balance
}

/// `is_valid_deposit_signature(pubkey, withdrawal_credentials, amount, signature)`: the
/// deposit message signed with the fork-agnostic deposit domain. Undecodable keys or signatures
/// are invalid.
///
/// [spec]: electra/beacon-chain.md#new-is_valid_deposit_signature
pub fn is_valid_deposit_signature(
    pubkey: &BLSPubkey,
    withdrawal_credentials: &Bytes32,
    amount: Gwei,
    signature: &BLSSignature,
    spec: &ChainSpec,
) -> bool {
    let Ok(public_key) = pubkey_bytes(pubkey).decompress() else {
        return false;
    };
    let Ok(signature) = bls::Signature::deserialize(signature.as_slice()) else {
        return false;
    };
    let message = DepositMessage {
        pubkey: *pubkey,
        withdrawal_credentials: *withdrawal_credentials,
        amount,
    };
    let domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    let signing_root = compute_signing_root(&message, domain);
    bls::verify(&public_key, signing_root.as_slice(), &signature)
}
