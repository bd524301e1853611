//! The signed operations other than attestations: proposer and attester slashings, voluntary
//! exits and BLS-to-execution changes.
//!
//! [spec]: electra/beacon-chain.md#operations

use types::{
    ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ValidatorIndex,
    electra::{
        AttesterSlashing, ProposerSlashing, SignedBLSToExecutionChange, SignedVoluntaryExit,
    },
};

use super::{
    AttesterSlashingInvalid, BlsToExecutionChangeInvalid, ProposerSlashingInvalid,
    VerifySignatures, VoluntaryExitInvalid,
    attestation::is_valid_indexed_attestation,
    signature_sets::{self, SignatureSetError},
    slash_validator,
};
use crate::{
    Caches, Error,
    common::{
        BLS_WITHDRAWAL_PREFIX, ETH1_ADDRESS_WITHDRAWAL_PREFIX, get_current_epoch,
        get_pending_balance_to_withdraw, hash, initiate_validator_exit, is_active_validator,
        is_slashable_attestation_data, is_slashable_validator, validator, validator_mut,
    },
    view::StateMut,
};

/// Verifies a built signature set; `Ok(false)` when it is malformed or does not verify.
fn verify_set(set: Result<bls::SignatureSet, SignatureSetError>) -> Result<bool, Error> {
    match set {
        Ok(set) => Ok(set.verify()),
        Err(SignatureSetError::Malformed) => Ok(false),
        Err(SignatureSetError::State(e)) => Err(e),
    }
}

/// `process_proposer_slashing(state, proposer_slashing)`: two different signed headers of one
/// proposer for one slot slash the proposer.
///
/// [spec]: phase0/beacon-chain.md#proposer-slashings
pub fn process_proposer_slashing<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    proposer_slashing: &ProposerSlashing,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), ProposerSlashingInvalid> {
    let header_1 = &proposer_slashing.signed_header_1.message;
    let header_2 = &proposer_slashing.signed_header_2.message;
    if header_1.slot != header_2.slot {
        return Err(ProposerSlashingInvalid::SlotMismatch(
            header_1.slot,
            header_2.slot,
        ));
    }
    if header_1.proposer_index != header_2.proposer_index {
        return Err(ProposerSlashingInvalid::ProposerMismatch(
            header_1.proposer_index,
            header_2.proposer_index,
        ));
    }
    if header_1 == header_2 {
        return Err(ProposerSlashingInvalid::HeadersEqual);
    }
    let index = header_1.proposer_index;
    let proposer = validator(&state.as_ref(), index)?;
    if !is_slashable_validator(proposer, get_current_epoch(&state.as_ref())) {
        return Err(ProposerSlashingInvalid::NotSlashable(index));
    }
    if verify.is_enabled() {
        for (which, signed) in [
            (1, &proposer_slashing.signed_header_1),
            (2, &proposer_slashing.signed_header_2),
        ] {
            let set = signature_sets::proposer_slashing_header_signature_set(
                &state.as_ref(),
                caches,
                index,
                signed,
            );
            if !verify_set(set)? {
                return Err(ProposerSlashingInvalid::InvalidSignature { which });
            }
        }
    }
    slash_validator(state, caches, index, None, spec)?;
    Ok(())
}

/// `process_attester_slashing(state, attester_slashing)`: two conflicting attestations slash
/// every slashable validator that signed both.
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
        is_valid_indexed_attestation(&state.as_ref(), caches, indexed, verify)
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

/// The end of `process_attester_slashing`: slashes every slashable validator in both (sorted,
/// unique) index lists; at least one must be.
pub(crate) fn slash_attesters_in_both<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    a: &[ValidatorIndex],
    b: &[ValidatorIndex],
    spec: &ChainSpec,
) -> Result<(), AttesterSlashingInvalid> {
    // Both index lists are sorted and unique (checked by the caller): intersect by merging.
    let (mut i, mut j) = (0, 0);
    let mut slashed_any = false;
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let index = a[i];
                let epoch = get_current_epoch(&state.as_ref());
                if is_slashable_validator(validator(&state.as_ref(), index)?, epoch) {
                    slash_validator(state, caches, index, None, spec)?;
                    slashed_any = true;
                }
                i += 1;
                j += 1;
            }
        }
    }
    if !slashed_any {
        return Err(AttesterSlashingInvalid::NoSlashableIndices);
    }
    Ok(())
}

/// `process_voluntary_exit(state, signed_voluntary_exit)`: an active validator with no pending
/// partial withdrawals, active for long enough, starts its exit.
///
/// [spec]: electra/beacon-chain.md#modified-process_voluntary_exit
pub fn process_voluntary_exit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    signed_voluntary_exit: &SignedVoluntaryExit,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), VoluntaryExitInvalid> {
    let exit = &signed_voluntary_exit.message;
    let index = exit.validator_index;
    let current = get_current_epoch(&state.as_ref());
    let v = validator(&state.as_ref(), index)?;
    if !is_active_validator(v, current) {
        return Err(VoluntaryExitInvalid::NotActive(index));
    }
    if v.exit_epoch != FAR_FUTURE_EPOCH {
        return Err(VoluntaryExitInvalid::AlreadyExiting {
            index,
            exit_epoch: v.exit_epoch,
        });
    }
    if current < exit.epoch {
        return Err(VoluntaryExitInvalid::FutureEpoch {
            exit: exit.epoch,
            current,
        });
    }
    let eligible = v
        .activation_epoch
        .saturating_add(spec.shard_committee_period);
    if current < eligible {
        return Err(VoluntaryExitInvalid::TooYoung { index, eligible });
    }
    // [New in Electra:EIP7251]
    if state.fork_name.electra_enabled() {
        let pending = get_pending_balance_to_withdraw(&state.as_ref(), index)?;
        if pending != 0 {
            return Err(VoluntaryExitInvalid::PendingWithdrawals { index, pending });
        }
    }
    if verify.is_enabled() {
        let set = signature_sets::voluntary_exit_signature_set(
            &state.as_ref(),
            caches,
            signed_voluntary_exit,
            spec,
        );
        if !verify_set(set)? {
            return Err(VoluntaryExitInvalid::InvalidSignature);
        }
    }
    initiate_validator_exit(state, caches, index, spec)?;
    Ok(())
}

/// `process_bls_to_execution_change(state, signed_address_change)`: a validator with `0x00`
/// credentials moves to `0x01` credentials of the given address, signed by its withdrawal key.
///
/// [spec]: capella/beacon-chain.md#new-process_bls_to_execution_change
pub fn process_bls_to_execution_change<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    signed_address_change: &SignedBLSToExecutionChange,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), BlsToExecutionChangeInvalid> {
    let change = &signed_address_change.message;
    let index = change.validator_index;
    let len = state.validators.len();
    let Some(v) = state.validators.get(index as usize) else {
        return Err(BlsToExecutionChangeInvalid::UnknownValidator { index, len });
    };
    if v.withdrawal_credentials[0] != BLS_WITHDRAWAL_PREFIX {
        return Err(BlsToExecutionChangeInvalid::NotBlsCredentials(index));
    }
    if v.withdrawal_credentials[1..] != hash(change.from_bls_pubkey.as_slice())[1..] {
        return Err(BlsToExecutionChangeInvalid::PubkeyMismatch(index));
    }
    if verify.is_enabled() {
        let set = signature_sets::bls_to_execution_change_signature_set(
            &state.as_ref(),
            signed_address_change,
            spec,
        );
        if !verify_set(set)? {
            return Err(BlsToExecutionChangeInvalid::InvalidSignature);
        }
    }
    let v = validator_mut::<E>(&mut state.validators, index)?;
    let mut credentials = [0u8; 32];
    credentials[0] = ETH1_ADDRESS_WITHDRAWAL_PREFIX;
    credentials[12..].copy_from_slice(change.to_execution_address.as_slice());
    v.withdrawal_credentials = credentials.into();
    Ok(())
}
