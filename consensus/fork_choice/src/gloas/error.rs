//! Why the Gloas fork choice rejected a message or could not answer.

use state_processing::{
    gloas::envelope::ExecutionPayloadEnvelopeInvalid,
    per_block::{AttestationInvalid, IndexedAttestationInvalid, PayloadAttestationInvalid},
};
use types::{Root, Slot, ValidatorIndex};

use crate::data_availability::AvailabilityError;
use crate::error::{Error, Fault};

/// What the engine's `verify_and_notify_new_payload` reports when it gives no verdict.
pub type EngineError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every way the Gloas fork choice rejects input or fails; a rejected message leaves the
/// store unchanged.
#[derive(Debug, thiserror::Error)]
pub enum GloasError {
    /// A check the Gloas store shares with the earlier forks (`on_block`'s place in the
    /// chain, `validate_on_attestation`'s target checks, state failures, …).
    #[error(transparent)]
    Store(#[from] Error),
    /// `on_block`: the block builds on its parent's full payload, which this store has not
    /// verified (`is_payload_verified`).
    #[error("block {block:?} builds on the payload of {parent:?}, which is not verified")]
    ParentPayloadNotVerified {
        /// Root of the rejected block.
        block: Root,
        /// Its parent, whose envelope was not delivered or not valid.
        parent: Root,
    },
    /// A block of a fork before Gloas given to the Gloas store.
    #[error("block {0:?} is not a Gloas block")]
    NotGloasBlock(Root),
    /// `validate_on_attestation`: `data.index` is neither 0 nor 1.
    #[error("attestation index {0} is not 0 or 1")]
    AttestationIndexOutOfRange(u64),
    /// `validate_on_attestation`: a vote for a block of its own slot claims the payload.
    #[error("attestation for block {0:?} of its own slot has index 1")]
    SameSlotPayloadVote(Root),
    /// `validate_on_attestation`: a vote for the payload of a block whose payload is not
    /// verified here.
    #[error("attestation votes for the payload of {0:?}, which is not verified")]
    UnverifiedPayloadVote(Root),
    /// `on_attestation`: the attesting indices could not be computed.
    #[error("attestation: {0}")]
    InvalidAttestation(#[source] AttestationInvalid),
    /// `on_attestation`, `on_attester_slashing`: an invalid indexed attestation.
    #[error("indexed attestation: {0}")]
    InvalidIndexedAttestation(#[source] IndexedAttestationInvalid),
    /// `on_execution_payload_envelope`, `on_payload_attestation_message`: the beacon block
    /// is not in the store.
    #[error("unknown beacon block {0:?}")]
    UnknownBeaconBlock(Root),
    /// `on_execution_payload_envelope`: `is_data_available` failed.
    #[error("payload of {block:?}: blob data not available: {source}")]
    PayloadDataUnavailable {
        /// The envelope's beacon block root.
        block: Root,
        /// What the availability check reported.
        #[source]
        source: AvailabilityError,
    },
    /// `on_execution_payload_envelope`: `verify_execution_payload_envelope` failed.
    #[error("payload of {block:?}: invalid envelope: {source}")]
    InvalidEnvelope {
        /// The envelope's beacon block root.
        block: Root,
        /// The failed check.
        #[source]
        source: ExecutionPayloadEnvelopeInvalid,
    },
    /// `on_execution_payload_envelope`: the execution engine found the payload invalid.
    #[error("payload of {0:?}: the execution engine found it invalid")]
    InvalidPayload(Root),
    /// `on_execution_payload_envelope`: the execution engine gave no verdict.
    #[error("payload of {block:?}: the execution engine gave no verdict: {source}")]
    EngineUnavailable {
        /// The envelope's beacon block root.
        block: Root,
        /// The engine's error.
        #[source]
        source: EngineError,
    },
    /// `on_payload_attestation_message`: the validator is not in the slot's PTC.
    #[error("validator {validator} is not in the PTC of slot {slot}")]
    NotInPtc {
        /// The message's validator.
        validator: ValidatorIndex,
        /// The attested slot.
        slot: Slot,
    },
    /// `on_payload_attestation_message` from the wire: not for the current slot.
    #[error("payload attestation for slot {slot} outside the current slot {current_slot}")]
    PayloadAttestationNotCurrent {
        /// The message's slot.
        slot: Slot,
        /// The store's current slot.
        current_slot: Slot,
    },
    /// `on_payload_attestation_message` from the wire: an invalid signature (or an
    /// `notify_ptc_messages` attestation that does not index).
    #[error("payload attestation: {0}")]
    InvalidPayloadAttestation(#[source] PayloadAttestationInvalid),
    /// `should_build_on_full`: the head given is a PENDING node (`get_head` never returns
    /// one).
    #[error("head {0:?} is a PENDING node")]
    PendingHead(Root),
    /// `is_head_weak` with equivocators: the store was not given the committee members of
    /// the slot of this block of the previous or current slot ([`super::GloasBlockSummary`]).
    #[error("the committee members of the slot of block {0:?} are not known")]
    MissingSlotCommittees(Root),
    /// A block summary whose PTC is not `PTC_SIZE` long.
    #[error("block {block:?}: a PTC of {len} members")]
    PtcSize {
        /// The summary's block.
        block: Root,
        /// The length of its PTC.
        len: usize,
    },
    /// Persisted bytes that describe no store.
    #[error("persisted Gloas fork choice: {0}")]
    CorruptPersisted(#[source] super::persist::GloasPersistedError),
    /// A pre-Gloas store carried into the Gloas store with a block before its parent, or
    /// twice ([`super::GloasForkChoice::from_pre_gloas`]).
    #[error("pre-Gloas block {0:?} is out of place (no parent before it, or given twice)")]
    PreGloasBlockOutOfPlace(Root),
    /// A PTC or a payload attestation's indices could not be read from a state.
    #[error("PTC: {0}")]
    Ptc(#[source] state_processing::Error),
}

impl GloasError {
    /// Whose fault this error is.
    pub fn fault(&self) -> Fault {
        match self {
            GloasError::Store(e) => e.fault(),
            GloasError::ParentPayloadNotVerified { .. }
            | GloasError::AttestationIndexOutOfRange(_)
            | GloasError::SameSlotPayloadVote(_)
            | GloasError::UnverifiedPayloadVote(_)
            | GloasError::InvalidAttestation(_)
            | GloasError::InvalidIndexedAttestation(_)
            | GloasError::UnknownBeaconBlock(_)
            | GloasError::PayloadDataUnavailable { .. }
            | GloasError::InvalidEnvelope { .. }
            | GloasError::InvalidPayload(_)
            | GloasError::NotInPtc { .. }
            | GloasError::PayloadAttestationNotCurrent { .. }
            | GloasError::InvalidPayloadAttestation(_) => Fault::Message,
            GloasError::NotGloasBlock(_)
            | GloasError::PendingHead(_)
            | GloasError::EngineUnavailable { .. }
            | GloasError::MissingSlotCommittees(_)
            | GloasError::CorruptPersisted(_)
            | GloasError::PtcSize { .. }
            | GloasError::PreGloasBlockOutOfPlace(_)
            | GloasError::Ptc(_) => Fault::Local,
        }
    }
}
