//! `voluntary_exit`, `proposer_slashing`, `attester_slashing` and `bls_to_execution_change`,
//! checked against the head state.
//!
//! An attester slashing comes in Electra's container or in Gloas's (whose index lists are
//! progressive, unbounded in SSZ); both pass the same rules ([`GossipAttesterSlashing`]).
//!
//! The voluntary exit rules follow the spec release the shared vectors were generated from
//! (v1.7.0-beta): a future exit epoch (by the wall clock) and an exit already initiated are
//! IGNOREd, not rejected, since a peer whose head is behind ours may rightly forward them.
//!
//! [spec]: phase0/p2p-interface.md#voluntary_exit,
//! phase0/p2p-interface.md#proposer_slashing, phase0/p2p-interface.md#attester_slashing,
//! capella/p2p-interface.md#bls_to_execution_change

use std::collections::BTreeSet;
use std::sync::Arc;

use state_processing::{
    common::{
        get_current_epoch, is_active_validator, is_slashable_attestation_data,
        is_slashable_validator,
    },
    gloas::per_block::is_valid_indexed_attestation,
    per_block::{VerifySignatures, signature_sets},
};
use types::{
    BLSSignature, EthSpec, FAR_FUTURE_EPOCH, ValidatorIndex,
    capella::SignedBLSToExecutionChange,
    phase0::{AttestationData, ProposerSlashing, SignedVoluntaryExit},
    signing,
};

use super::{Verdict, domain_at, head_pubkey, verify_one};
use crate::chain::BeaconChain;
use crate::events::{ChainEvent, PresetMessage};

/// `BLS_WITHDRAWAL_PREFIX`.
const BLS_WITHDRAWAL_PREFIX: u8 = 0x00;

/// Why a gossip exit, slashing or BLS change is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperationGossipError {
    /// [IGNORE] One for this validator was seen (for an attester slashing: every slashable
    /// index was).
    #[error("already seen for validator {0}")]
    AlreadySeen(ValidatorIndex),
    /// [REJECT] A validator index past the registry.
    #[error("validator index {0} out of range")]
    UnknownValidator(ValidatorIndex),
    /// [REJECT] The exiting validator is not active.
    #[error("validator {0} is not active")]
    NotActive(ValidatorIndex),
    /// [IGNORE] The validator has already initiated exit.
    #[error("validator {0} already initiated exit")]
    AlreadyExiting(ValidatorIndex),
    /// [IGNORE] The exit's epoch is after the wall clock's (with the clock disparity).
    #[error("exit epoch {exit} is after the current epoch {current}")]
    FutureExit {
        /// The exit's epoch.
        exit: u64,
        /// The current epoch.
        current: u64,
    },
    /// [REJECT] The validator has not been active for `SHARD_COMMITTEE_PERIOD`.
    #[error("validator {0} has not been active long enough")]
    TooYoung(ValidatorIndex),
    /// [REJECT] A signature is invalid.
    #[error("invalid signature")]
    InvalidSignature,
    /// [REJECT] The two headers are not of one slot.
    #[error("header slots differ")]
    HeaderSlotsDiffer,
    /// [REJECT] The two headers are not of one proposer.
    #[error("header proposers differ")]
    HeaderProposersDiffer,
    /// [REJECT] The two headers are the same.
    #[error("headers are equal")]
    HeadersEqual,
    /// [REJECT] The validator cannot be slashed.
    #[error("validator {0} is not slashable")]
    NotSlashable(ValidatorIndex),
    /// [REJECT] The two attestations are neither a double nor a surround vote.
    #[error("attestation data is not slashable")]
    DataNotSlashable,
    /// [REJECT] An indexed attestation of the slashing is invalid (1 or 2).
    #[error("invalid indexed attestation {0}")]
    InvalidIndexedAttestation(u8),
    /// [REJECT] An index of indexed attestation 1 or 2 is past the registry.
    #[error("validator index out of range in indexed attestation {0}")]
    IndexedAttestationUnknownValidator(u8),
    /// [REJECT] Nobody in the intersection can be slashed.
    #[error("no slashable validator in the intersection")]
    NoSlashableValidators,
    /// [IGNORE] BLS changes are not valid before Capella.
    #[error("the current epoch is before Capella")]
    PreCapella,
    /// [REJECT] The validator's withdrawal credentials are not BLS ones.
    #[error("validator {0} does not have BLS withdrawal credentials")]
    NotBlsCredentials(ValidatorIndex),
    /// [REJECT] The change's key does not hash to the validator's credentials.
    #[error("the key does not match validator {0}'s withdrawal credentials")]
    WrongWithdrawalKey(ValidatorIndex),
    /// [IGNORE] The head state could not be read.
    #[error("internal: {0}")]
    Internal(#[source] state_processing::Error),
}

impl OperationGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::AlreadySeen(_)
            | Self::AlreadyExiting(_)
            | Self::FutureExit { .. }
            | Self::PreCapella
            | Self::Internal(_) => Verdict::Ignore,
            _ => Verdict::Reject,
        }
    }
}

/// A voluntary exit that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedVoluntaryExit(pub SignedVoluntaryExit);

/// A proposer slashing that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedProposerSlashing(pub ProposerSlashing);

/// One indexed attestation of an attester slashing: its attesting indices, data and signature.
pub type IndexedAttestationParts<'a> =
    (&'a [ValidatorIndex], &'a AttestationData, &'a BLSSignature);

/// An `AttesterSlashing` of either container layout: Electra's (`types::electra`, index lists
/// bounded by `MAX_VALIDATORS_PER_COMMITTEE * MAX_COMMITTEES_PER_SLOT`) or Gloas's
/// (`types::gloas`, progressive lists). The gossip rules read the same fields of both.
pub trait GossipAttesterSlashing: Clone + Send + Sync + 'static {
    /// `attestation_1` and `attestation_2`.
    fn attestations(&self) -> [IndexedAttestationParts<'_>; 2];
}

impl<E: EthSpec> GossipAttesterSlashing for types::electra::AttesterSlashing<E> {
    fn attestations(&self) -> [IndexedAttestationParts<'_>; 2] {
        [&self.attestation_1, &self.attestation_2]
            .map(|a| (a.attesting_indices.as_ref(), &a.data, &a.signature))
    }
}

impl GossipAttesterSlashing for types::gloas::AttesterSlashing {
    fn attestations(&self) -> [IndexedAttestationParts<'_>; 2] {
        [&self.attestation_1, &self.attestation_2]
            .map(|a| (a.attesting_indices.as_slice(), &a.data, &a.signature))
    }
}

/// An attester slashing that passed gossip validation, with the validators it slashes.
#[derive(Debug, Clone)]
pub struct VerifiedAttesterSlashing<S> {
    /// The slashing (`types::electra::AttesterSlashing<E>` or `types::gloas::AttesterSlashing`).
    pub slashing: S,
    /// The intersection of both attestations' indices.
    pub slashable_indices: Vec<ValidatorIndex>,
}

/// A BLS-to-execution change that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedBlsToExecutionChange(pub SignedBLSToExecutionChange);

impl<E: EthSpec> BeaconChain<E> {
    /// `validate_voluntary_exit_gossip(seen, store, signed_voluntary_exit, current_time_ms)`:
    /// the exit's epoch is judged against the wall clock (with the clock disparity), the
    /// validator against the head state.
    ///
    /// [spec]: phase0/p2p-interface.md#voluntary_exit
    pub fn verify_voluntary_exit_for_gossip(
        &self,
        exit: SignedVoluntaryExit,
        current_time_ms: u64,
    ) -> Result<VerifiedVoluntaryExit, OperationGossipError> {
        let index = exit.message.validator_index;
        if self.observed.lock().operations.is_exit_known(index) {
            return Err(OperationGossipError::AlreadySeen(index));
        }
        let wall_epoch = self
            .slot_at_ms(current_time_ms.saturating_add(self.spec().maximum_gossip_clock_disparity))
            / E::slots_per_epoch();
        if exit.message.epoch > wall_epoch {
            return Err(OperationGossipError::FutureExit {
                exit: exit.message.epoch,
                current: wall_epoch,
            });
        }
        let head = self.head();
        let view = head.state.view().map_err(OperationGossipError::Internal)?;
        let validator = view
            .validators
            .get(index as usize)
            .ok_or(OperationGossipError::UnknownValidator(index))?;
        let current = get_current_epoch(&view);
        if validator.exit_epoch != FAR_FUTURE_EPOCH {
            return Err(OperationGossipError::AlreadyExiting(index));
        }
        if !is_active_validator(validator, current) {
            return Err(OperationGossipError::NotActive(index));
        }
        if current
            < validator
                .activation_epoch
                .saturating_add(self.spec().shard_committee_period)
        {
            return Err(OperationGossipError::TooYoung(index));
        }
        let set = signature_sets::voluntary_exit_signature_set(
            &view,
            &head.state.caches,
            &exit,
            self.spec(),
        )
        .map_err(|_| OperationGossipError::InvalidSignature)?;
        if !set.verify() {
            return Err(OperationGossipError::InvalidSignature);
        }
        if self.observed.lock().operations.observe_exit(index) {
            return Err(OperationGossipError::AlreadySeen(index));
        }
        self.events().publish(ChainEvent::VoluntaryExit {
            validator_index: index,
            epoch: exit.message.epoch,
            exit: Arc::new(exit.clone()),
        });
        Ok(VerifiedVoluntaryExit(exit))
    }

    /// `validate_proposer_slashing_gossip(seen, state, proposer_slashing)`.
    ///
    /// [spec]: phase0/p2p-interface.md#proposer_slashing
    pub fn verify_proposer_slashing_for_gossip(
        &self,
        slashing: ProposerSlashing,
    ) -> Result<VerifiedProposerSlashing, OperationGossipError> {
        let header_1 = &slashing.signed_header_1.message;
        let header_2 = &slashing.signed_header_2.message;
        let index = header_1.proposer_index;
        if self
            .observed
            .lock()
            .operations
            .is_proposer_slashing_known(index)
        {
            return Err(OperationGossipError::AlreadySeen(index));
        }
        if header_1.slot != header_2.slot {
            return Err(OperationGossipError::HeaderSlotsDiffer);
        }
        if header_1.proposer_index != header_2.proposer_index {
            return Err(OperationGossipError::HeaderProposersDiffer);
        }
        if header_1 == header_2 {
            return Err(OperationGossipError::HeadersEqual);
        }
        let head = self.head();
        let view = head.state.view().map_err(OperationGossipError::Internal)?;
        let validator = view
            .validators
            .get(index as usize)
            .ok_or(OperationGossipError::UnknownValidator(index))?;
        if !is_slashable_validator(validator, get_current_epoch(&view)) {
            return Err(OperationGossipError::NotSlashable(index));
        }
        let key = head_pubkey(&head.state, index).ok_or(OperationGossipError::InvalidSignature)?;
        for signed in [&slashing.signed_header_1, &slashing.signed_header_2] {
            let domain = domain_at(
                self.spec(),
                self.genesis_validators_root(),
                signing::DOMAIN_BEACON_PROPOSER,
                signed.message.slot / E::slots_per_epoch(),
            );
            let root = signing::compute_signing_root(&signed.message, domain);
            if !verify_one(&key, root, &signed.signature) {
                return Err(OperationGossipError::InvalidSignature);
            }
        }
        if self
            .observed
            .lock()
            .operations
            .observe_proposer_slashing(index)
        {
            return Err(OperationGossipError::AlreadySeen(index));
        }
        self.events().publish(ChainEvent::ProposerSlashing {
            proposer_index: index,
            slashing: Arc::new(slashing.clone()),
        });
        Ok(VerifiedProposerSlashing(slashing))
    }

    /// `validate_attester_slashing_gossip(seen, state, attester_slashing)`, for a slashing of
    /// either container layout.
    ///
    /// [spec]: phase0/p2p-interface.md#attester_slashing
    pub fn verify_attester_slashing_for_gossip<S: GossipAttesterSlashing>(
        &self,
        slashing: S,
    ) -> Result<VerifiedAttesterSlashing<S>, OperationGossipError> {
        let [attestation_1, attestation_2] = slashing.attestations();
        let indices_1: BTreeSet<ValidatorIndex> = attestation_1.0.iter().copied().collect();
        let slashable: Vec<ValidatorIndex> = attestation_2
            .0
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .intersection(&indices_1)
            .copied()
            .collect();
        if !self
            .observed
            .lock()
            .operations
            .has_new_attester_slashing_index(&slashable)
        {
            return Err(OperationGossipError::AlreadySeen(
                slashable.first().copied().unwrap_or_default(),
            ));
        }
        if !is_slashable_attestation_data(attestation_1.1, attestation_2.1) {
            return Err(OperationGossipError::DataNotSlashable);
        }
        let head = self.head();
        let view = head.state.view().map_err(OperationGossipError::Internal)?;
        let count = view.validators.len() as u64;
        let check = |n: u8, (indices, data, signature): IndexedAttestationParts<'_>| {
            if indices.iter().any(|&i| i >= count) {
                return Err(OperationGossipError::IndexedAttestationUnknownValidator(n));
            }
            is_valid_indexed_attestation(
                &view,
                &head.state.caches,
                indices,
                data,
                signature,
                VerifySignatures::Batched,
            )
            .map_err(|_| OperationGossipError::InvalidIndexedAttestation(n))
        };
        check(1, attestation_1)?;
        check(2, attestation_2)?;
        let current = get_current_epoch(&view);
        let any_slashable = slashable.iter().any(|&i| {
            view.validators
                .get(i as usize)
                .is_some_and(|v| is_slashable_validator(v, current))
        });
        if !any_slashable {
            return Err(OperationGossipError::NoSlashableValidators);
        }
        if self
            .observed
            .lock()
            .operations
            .observe_attester_slashing(&slashable)
        {
            return Err(OperationGossipError::AlreadySeen(
                slashable.first().copied().unwrap_or_default(),
            ));
        }
        self.events().publish(ChainEvent::AttesterSlashing {
            indices: slashable.clone(),
            slashing: PresetMessage::new(slashing.clone()),
        });
        Ok(VerifiedAttesterSlashing {
            slashing,
            slashable_indices: slashable,
        })
    }

    /// `validate_bls_to_execution_change_gossip(seen, state, signed_bls_to_execution_change,
    /// current_time_ms)`.
    ///
    /// [spec]: capella/p2p-interface.md#bls_to_execution_change
    pub fn verify_bls_to_execution_change_for_gossip(
        &self,
        change: SignedBLSToExecutionChange,
        current_time_ms: u64,
    ) -> Result<VerifiedBlsToExecutionChange, OperationGossipError> {
        let current_epoch = self.slot_at_ms(current_time_ms) / E::slots_per_epoch();
        if current_epoch < self.spec().capella_fork_epoch {
            return Err(OperationGossipError::PreCapella);
        }
        let index = change.message.validator_index;
        if self
            .observed
            .lock()
            .operations
            .is_bls_to_execution_change_known(index)
        {
            return Err(OperationGossipError::AlreadySeen(index));
        }
        let head = self.head();
        let view = head.state.view().map_err(OperationGossipError::Internal)?;
        let validator = view
            .validators
            .get(index as usize)
            .ok_or(OperationGossipError::UnknownValidator(index))?;
        let credentials = validator.withdrawal_credentials;
        if credentials[0] != BLS_WITHDRAWAL_PREFIX {
            return Err(OperationGossipError::NotBlsCredentials(index));
        }
        let key_hash = ethereum_hashing::hash_fixed(change.message.from_bls_pubkey.as_slice());
        if credentials[1..] != key_hash[1..] {
            return Err(OperationGossipError::WrongWithdrawalKey(index));
        }
        let set =
            signature_sets::bls_to_execution_change_signature_set(&view, &change, self.spec())
                .map_err(|_| OperationGossipError::InvalidSignature)?;
        if !set.verify() {
            return Err(OperationGossipError::InvalidSignature);
        }
        if self
            .observed
            .lock()
            .operations
            .observe_bls_to_execution_change(index)
        {
            return Err(OperationGossipError::AlreadySeen(index));
        }
        self.events().publish(ChainEvent::BlsToExecutionChange {
            validator_index: index,
            change: Arc::new(change.clone()),
        });
        Ok(VerifiedBlsToExecutionChange(change))
    }
}
