//! A block's signatures as [`SignatureSet`]s (signature, signing keys, signing root), built from
//! the state before the block, and [`BlockSignatureVerifier`], which gathers every set of a block
//! and checks them in one `bls::verify_signature_sets` call.
//!
//! Gathering the sets before processing is sound because nothing a block does changes what its
//! signatures are checked against: domains depend on the fork and the genesis root, committees
//! and the sync committee on the epoch, and public keys never change. (A validator added by an
//! eth1 deposit of the block cannot sign anything else in the same block: it is not active.)
//!
//! [spec]: phase0/beacon-chain.md#bls-signatures

use bls::{Parallelism, PublicKey, PublicKeyBytes, Signature, SignatureSet};
use types::{
    BLSSignature, ChainSpec, EthSpec, Root, ValidatorIndex,
    electra::{
        Attestation, AttestationData, BeaconBlock, BeaconBlockBody, ProposerSlashing,
        SignedBLSToExecutionChange, SignedBeaconBlockHeader, SignedVoluntaryExit, SyncAggregate,
    },
    signing::{
        DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_BLS_TO_EXECUTION_CHANGE,
        DOMAIN_RANDAO, DOMAIN_SYNC_COMMITTEE, DOMAIN_VOLUNTARY_EXIT, compute_domain,
        compute_signing_root,
    },
};

use super::{
    AttestationInvalid, AttesterSlashingInvalid, BlockProcessingError, BlsToExecutionChangeInvalid,
    IndexedAttestationInvalid, ProposerSlashingInvalid, RandaoInvalid, SyncAggregateInvalid,
    VoluntaryExitInvalid, attestation,
};
use crate::{
    Caches, Error,
    common::{
        compute_epoch_at_slot, get_beacon_proposer_index, get_block_root_at_slot,
        get_current_epoch, get_domain,
    },
    view::StateRef,
};

/// Why a signature set could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureSetError {
    /// The signature or a public key does not decode to a valid point: the signature cannot
    /// verify.
    Malformed,
    /// A helper failed (an unknown validator index, for one).
    State(Error),
}

impl From<Error> for SignatureSetError {
    fn from(e: Error) -> Self {
        match e {
            // A registry key that does not decompress cannot verify anything.
            Error::InvalidPubkey(_) => SignatureSetError::Malformed,
            e => SignatureSetError::State(e),
        }
    }
}

/// Decodes a signature from the wire.
fn decode_signature(bytes: &BLSSignature) -> Result<Signature, SignatureSetError> {
    Signature::deserialize(bytes.as_slice()).map_err(|_| SignatureSetError::Malformed)
}

/// A one-key set.
fn single(
    signature: &BLSSignature,
    key: PublicKey,
    message: Root,
) -> Result<SignatureSet, SignatureSetError> {
    Ok(SignatureSet::new(
        decode_signature(signature)?,
        vec![key],
        message.0,
    ))
}

/// The proposer's signature over the block (`verify_block_signature`), given the block's root.
///
/// [spec]: phase0/beacon-chain.md#beacon-chain-state-transition-function
pub fn block_proposal_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    proposer_index: ValidatorIndex,
    block_root: Root,
    signature: &BLSSignature,
) -> Result<SignatureSet, SignatureSetError> {
    let domain = get_domain(state, DOMAIN_BEACON_PROPOSER, None);
    let message = compute_signing_root(&block_root, domain);
    single(signature, caches.pubkey(state, proposer_index)?, message)
}

/// The randao reveal: the proposer's signature of the current epoch.
///
/// [spec]: phase0/beacon-chain.md#randao
pub fn randao_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    proposer_index: ValidatorIndex,
    body: &BeaconBlockBody<E>,
) -> Result<SignatureSet, SignatureSetError> {
    randao_reveal_signature_set(state, caches, proposer_index, &body.randao_reveal)
}

/// [`randao_signature_set`] for a reveal of a block of any fork.
///
/// [spec]: phase0/beacon-chain.md#randao
pub fn randao_reveal_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    proposer_index: ValidatorIndex,
    randao_reveal: &BLSSignature,
) -> Result<SignatureSet, SignatureSetError> {
    let epoch = get_current_epoch(state);
    let domain = get_domain(state, DOMAIN_RANDAO, None);
    let message = compute_signing_root(&epoch, domain);
    single(
        randao_reveal,
        caches.pubkey(state, proposer_index)?,
        message,
    )
}

/// One header of a proposer slashing, signed by `proposer_index`.
///
/// [spec]: phase0/beacon-chain.md#proposer-slashings
pub fn proposer_slashing_header_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    proposer_index: ValidatorIndex,
    signed_header: &SignedBeaconBlockHeader,
) -> Result<SignatureSet, SignatureSetError> {
    let domain = get_domain(
        state,
        DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(signed_header.message.slot)),
    );
    let message = compute_signing_root(&signed_header.message, domain);
    single(
        &signed_header.signature,
        caches.pubkey(state, proposer_index)?,
        message,
    )
}

/// An aggregate signature over attestation data by the validators `indices` (an indexed
/// attestation's check, with the indices already validated).
///
/// [spec]: phase0/beacon-chain.md#is_valid_indexed_attestation
pub fn indexed_attestation_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    indices: impl IntoIterator<Item = ValidatorIndex>,
    data: &AttestationData,
    signature: &BLSSignature,
) -> Result<SignatureSet, SignatureSetError> {
    let signature = decode_signature(signature)?;
    let indices: Vec<ValidatorIndex> = indices.into_iter().collect();
    let keys = caches.pubkeys(state, &indices)?;
    let domain = get_domain(state, DOMAIN_BEACON_ATTESTER, Some(data.target.epoch));
    let message = compute_signing_root(data, domain);
    Ok(SignatureSet::new(signature, keys, message.0))
}

/// A voluntary exit, signed by the exiting validator with the Capella fork version
/// (EIP-7044).
///
/// [spec]: electra/beacon-chain.md#modified-process_voluntary_exit
pub fn voluntary_exit_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    exit: &SignedVoluntaryExit,
    spec: &ChainSpec,
) -> Result<SignatureSet, SignatureSetError> {
    let domain = compute_domain(
        DOMAIN_VOLUNTARY_EXIT,
        spec.capella_fork_version,
        *state.genesis_validators_root,
    );
    let message = compute_signing_root(&exit.message, domain);
    single(
        &exit.signature,
        caches.pubkey(state, exit.message.validator_index)?,
        message,
    )
}

/// A BLS-to-execution change, signed by the key in the message (with the genesis fork version).
///
/// [spec]: capella/beacon-chain.md#new-process_bls_to_execution_change
pub fn bls_to_execution_change_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    change: &SignedBLSToExecutionChange,
    spec: &ChainSpec,
) -> Result<SignatureSet, SignatureSetError> {
    let domain = compute_domain(
        DOMAIN_BLS_TO_EXECUTION_CHANGE,
        spec.genesis_fork_version,
        *state.genesis_validators_root,
    );
    let message = compute_signing_root(&change.message, domain);
    let key = PublicKeyBytes(change.message.from_bls_pubkey.0)
        .decompress()
        .map_err(|_| SignatureSetError::Malformed)?;
    single(&change.signature, key, message)
}

/// The sync committee's aggregate signature over the previous slot's block root, or `None` when
/// nothing needs checking (no participant and the signature at infinity, which
/// `eth_fast_aggregate_verify` accepts). `members` are the validator indices of the current sync
/// committee, in order.
///
/// [spec]: altair/beacon-chain.md#sync-aggregate-processing
pub fn sync_aggregate_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    sync_aggregate: &SyncAggregate<E>,
    members: &[ValidatorIndex],
) -> Result<Option<SignatureSet>, SignatureSetError> {
    let participants: Vec<ValidatorIndex> = members
        .iter()
        .zip(sync_aggregate.sync_committee_bits.iter())
        .filter(|(_, bit)| *bit)
        .map(|(index, _)| *index)
        .collect();
    let signature = decode_signature(&sync_aggregate.sync_committee_signature)?;
    if participants.is_empty() {
        return if signature.is_infinity() {
            Ok(None)
        } else {
            Err(SignatureSetError::Malformed)
        };
    }
    let previous_slot = state.slot.max(&1) - 1;
    let domain = get_domain(
        state,
        DOMAIN_SYNC_COMMITTEE,
        Some(compute_epoch_at_slot::<E>(previous_slot)),
    );
    let message = compute_signing_root(&get_block_root_at_slot(state, previous_slot)?, domain);
    let keys = caches.pubkeys(state, &participants)?;
    Ok(Some(SignatureSet::new(signature, keys, message.0)))
}

/// A bid's signature by its builder (`verify_execution_payload_bid_signature`), or `None` for a
/// self-build (whose signature must be the point at infinity, which `process_execution_payload_bid`
/// checks, not a pairing) [New in Gloas:EIP7732].
///
/// [spec]: gloas/beacon-chain.md#new-verify_execution_payload_bid_signature
pub fn execution_payload_bid_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    signed_bid: &types::gloas::SignedExecutionPayloadBid,
) -> Result<Option<SignatureSet>, SignatureSetError> {
    let builder_index = signed_bid.message.builder_index;
    if builder_index == types::gloas::BUILDER_INDEX_SELF_BUILD {
        return Ok(None);
    }
    let builder = crate::gloas::builders::builder(&state.gloas()?, builder_index)?;
    let key = PublicKeyBytes(builder.pubkey.0)
        .decompress()
        .map_err(|_| SignatureSetError::Malformed)?;
    let domain = get_domain(state, types::signing::DOMAIN_BEACON_BUILDER, None);
    let message = compute_signing_root(&signed_bid.message, domain);
    single(&signed_bid.signature, key, message).map(Some)
}

/// The aggregate signature of a payload attestation by the PTC members `indices` (sorted, from
/// `get_indexed_payload_attestation`) [New in Gloas:EIP7732].
///
/// [spec]: gloas/beacon-chain.md#new-is_valid_indexed_payload_attestation
pub fn payload_attestation_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    indices: &[ValidatorIndex],
    data: &types::gloas::PayloadAttestationData,
    signature: &BLSSignature,
) -> Result<SignatureSet, SignatureSetError> {
    let signature = decode_signature(signature)?;
    let keys = caches.pubkeys(state, indices)?;
    let domain = get_domain(
        state,
        types::signing::DOMAIN_PTC_ATTESTER,
        Some(compute_epoch_at_slot::<E>(data.slot)),
    );
    let message = compute_signing_root(data, domain);
    Ok(SignatureSet::new(signature, keys, message.0))
}

/// Which signature of a block a set checks, to name it when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureKind {
    /// The proposer's signature over the block.
    Proposal,
    /// The randao reveal.
    Randao,
    /// Header 1 or 2 of the proposer slashing at `index`.
    ProposerSlashing {
        /// Position in `body.proposer_slashings`.
        index: usize,
        /// 1 for `signed_header_1`, 2 for `signed_header_2`.
        header: u8,
    },
    /// Attestation 1 or 2 of the attester slashing at `index`.
    AttesterSlashing {
        /// Position in `body.attester_slashings`.
        index: usize,
        /// 1 for `attestation_1`, 2 for `attestation_2`.
        attestation: u8,
    },
    /// The attestation at `index`.
    Attestation {
        /// Position in `body.attestations`.
        index: usize,
    },
    /// The voluntary exit at `index`.
    VoluntaryExit {
        /// Position in `body.voluntary_exits`.
        index: usize,
    },
    /// The BLS-to-execution change at `index`.
    BlsToExecutionChange {
        /// Position in `body.bls_to_execution_changes`.
        index: usize,
    },
    /// The sync aggregate.
    SyncAggregate {
        /// The number of bits set in `sync_committee_bits`.
        participants: usize,
    },
    /// The builder's signature over the block's bid [New in Gloas].
    ExecutionPayloadBid,
    /// The payload attestation at `index` [New in Gloas].
    PayloadAttestation {
        /// Position in `body.payload_attestations`.
        index: usize,
    },
}

impl SignatureKind {
    /// The error of a block whose signature of this kind is invalid.
    fn invalid(self, epoch: u64) -> BlockProcessingError {
        match self {
            SignatureKind::Proposal => BlockProcessingError::ProposerSignature,
            SignatureKind::Randao => RandaoInvalid::InvalidSignature { epoch }.into(),
            SignatureKind::ProposerSlashing { index, header } => {
                BlockProcessingError::ProposerSlashing {
                    index,
                    reason: ProposerSlashingInvalid::InvalidSignature { which: header },
                }
            }
            SignatureKind::AttesterSlashing { index, attestation } => {
                BlockProcessingError::AttesterSlashing {
                    index,
                    reason: AttesterSlashingInvalid::InvalidAttestation {
                        which: attestation,
                        reason: IndexedAttestationInvalid::InvalidSignature,
                    },
                }
            }
            SignatureKind::Attestation { index } => BlockProcessingError::Attestation {
                index,
                reason: AttestationInvalid::IndexedAttestation(
                    IndexedAttestationInvalid::InvalidSignature,
                ),
            },
            SignatureKind::VoluntaryExit { index } => BlockProcessingError::VoluntaryExit {
                index,
                reason: VoluntaryExitInvalid::InvalidSignature,
            },
            SignatureKind::BlsToExecutionChange { index } => {
                BlockProcessingError::BlsToExecutionChange {
                    index,
                    reason: BlsToExecutionChangeInvalid::InvalidSignature,
                }
            }
            SignatureKind::SyncAggregate { participants } => {
                SyncAggregateInvalid::InvalidSignature { participants }.into()
            }
            SignatureKind::ExecutionPayloadBid => {
                super::ExecutionPayloadBidInvalid::InvalidSignature.into()
            }
            SignatureKind::PayloadAttestation { index } => {
                BlockProcessingError::PayloadAttestation {
                    index,
                    reason: super::PayloadAttestationInvalid::InvalidSignature,
                }
            }
        }
    }

    /// The error of a block whose set of this kind could not be built.
    fn state_error(self, e: Error) -> BlockProcessingError {
        match self {
            SignatureKind::Proposal => BlockProcessingError::State(e),
            SignatureKind::Randao => RandaoInvalid::State(e).into(),
            SignatureKind::ProposerSlashing { index, .. } => {
                BlockProcessingError::ProposerSlashing {
                    index,
                    reason: ProposerSlashingInvalid::State(e),
                }
            }
            SignatureKind::AttesterSlashing { index, attestation } => {
                BlockProcessingError::AttesterSlashing {
                    index,
                    reason: AttesterSlashingInvalid::InvalidAttestation {
                        which: attestation,
                        reason: IndexedAttestationInvalid::State(e),
                    },
                }
            }
            SignatureKind::Attestation { index } => BlockProcessingError::Attestation {
                index,
                reason: AttestationInvalid::State(e),
            },
            SignatureKind::VoluntaryExit { index } => BlockProcessingError::VoluntaryExit {
                index,
                reason: VoluntaryExitInvalid::State(e),
            },
            SignatureKind::BlsToExecutionChange { index } => {
                BlockProcessingError::BlsToExecutionChange {
                    index,
                    reason: BlsToExecutionChangeInvalid::State(e),
                }
            }
            SignatureKind::SyncAggregate { .. } => SyncAggregateInvalid::State(e).into(),
            SignatureKind::ExecutionPayloadBid => {
                super::ExecutionPayloadBidInvalid::State(e).into()
            }
            SignatureKind::PayloadAttestation { index } => {
                BlockProcessingError::PayloadAttestation {
                    index,
                    reason: super::PayloadAttestationInvalid::State(e),
                }
            }
        }
    }
}

/// Gathers the signature sets of one block, then verifies them all in one batch.
#[derive(Debug, Default)]
pub struct BlockSignatureVerifier {
    sets: Vec<SignatureSet>,
    kinds: Vec<SignatureKind>,
    /// A set that cannot verify whatever the others are (a malformed signature or key): the
    /// block is invalid without any pairing.
    malformed: Option<SignatureKind>,
    /// The state's current epoch, to name a failed randao reveal.
    epoch: u64,
}

impl BlockSignatureVerifier {
    /// An empty verifier.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many sets have been gathered.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether no set has been gathered.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Adds the result of building a set of `kind`.
    fn push(
        &mut self,
        kind: SignatureKind,
        set: Result<SignatureSet, SignatureSetError>,
    ) -> Result<(), BlockProcessingError> {
        match set {
            Ok(set) => {
                self.sets.push(set);
                self.kinds.push(kind);
                Ok(())
            }
            Err(SignatureSetError::Malformed) => {
                self.malformed.get_or_insert(kind);
                Ok(())
            }
            Err(SignatureSetError::State(e)) => Err(kind.state_error(e)),
        }
    }

    /// Adds the proposer's signature over the block whose root is `block_root`.
    pub fn include_block_proposal<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        proposer_index: ValidatorIndex,
        block_root: Root,
        signature: &BLSSignature,
    ) -> Result<(), BlockProcessingError> {
        self.push(
            SignatureKind::Proposal,
            block_proposal_signature_set(state, caches, proposer_index, block_root, signature),
        )
    }

    /// Adds every signature set of the block's body: randao reveal, proposer and attester
    /// slashings, attestations, voluntary exits, BLS-to-execution changes and the sync
    /// aggregate. `state` is the state the block applies to (after `process_slots`).
    pub fn include_body<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &mut Caches,
        block: &BeaconBlock<E>,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        let body = &block.body;
        self.include_randao(state, caches, &body.randao_reveal)?;
        for (index, slashing) in body.proposer_slashings.iter().enumerate() {
            self.include_proposer_slashing(state, caches, index, slashing)?;
        }
        for (index, slashing) in body.attester_slashings.iter().enumerate() {
            for (which, indexed) in [(1, &slashing.attestation_1), (2, &slashing.attestation_2)] {
                self.include_slashing_attestation(
                    state,
                    caches,
                    (index, which),
                    &indexed.attesting_indices,
                    &indexed.data,
                    &indexed.signature,
                )?;
            }
        }
        for (index, att) in body.attestations.iter().enumerate() {
            let set = attestation_signature_set(state, caches, att);
            self.include_attestation(index, set)?;
        }
        self.include_exits_and_changes(
            state,
            caches,
            &body.voluntary_exits,
            &body.bls_to_execution_changes,
            spec,
        )?;
        self.include_sync_aggregate(state, caches, &body.sync_aggregate)
    }

    /// The randao reveal, checked against the slot's real proposer as in the spec (the header
    /// check that it is the block's proposer comes later, in processing).
    fn include_randao<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &mut Caches,
        randao_reveal: &BLSSignature,
    ) -> Result<(), BlockProcessingError> {
        self.epoch = get_current_epoch(state);
        let proposer = get_beacon_proposer_index(state, caches)
            .map_err(|e| BlockProcessingError::Randao(RandaoInvalid::State(e)))?;
        self.push(
            SignatureKind::Randao,
            randao_reveal_signature_set(state, caches, proposer, randao_reveal),
        )
    }

    /// One indexed attestation of attester slashing `index` (`which`: 1 or 2), after the
    /// structural checks of its indices (non-empty, sorted, unique), which come first as in the
    /// spec.
    fn include_slashing_attestation<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        (index, which): (usize, u8),
        attesting_indices: &[ValidatorIndex],
        data: &AttestationData,
        signature: &BLSSignature,
    ) -> Result<(), BlockProcessingError> {
        if let Err(reason) = attestation::check_attesting_indices::<E>(attesting_indices) {
            return Err(BlockProcessingError::AttesterSlashing {
                index,
                reason: AttesterSlashingInvalid::InvalidAttestation { which, reason },
            });
        }
        let set = indexed_attestation_signature_set(
            state,
            caches,
            attesting_indices.iter().copied(),
            data,
            signature,
        );
        self.push(
            SignatureKind::AttesterSlashing {
                index,
                attestation: which,
            },
            set,
        )
    }

    /// Attestation `index`'s set, or why it has none.
    fn include_attestation(
        &mut self,
        index: usize,
        set: Result<SignatureSet, AttestationInvalid>,
    ) -> Result<(), BlockProcessingError> {
        let set = match set {
            Ok(set) => Ok(set),
            // Reported after the other operations' structural checks, like every signature that
            // cannot verify.
            Err(AttestationInvalid::IndexedAttestation(
                IndexedAttestationInvalid::InvalidSignature,
            )) => Err(SignatureSetError::Malformed),
            Err(reason) => return Err(BlockProcessingError::Attestation { index, reason }),
        };
        self.push(SignatureKind::Attestation { index }, set)
    }

    /// The voluntary exits and the BLS-to-execution changes, which every body from Capella on
    /// carries in the same types.
    fn include_exits_and_changes<'b, E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        exits: impl IntoIterator<Item = &'b SignedVoluntaryExit>,
        changes: impl IntoIterator<Item = &'b SignedBLSToExecutionChange>,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        for (index, exit) in exits.into_iter().enumerate() {
            self.push(
                SignatureKind::VoluntaryExit { index },
                voluntary_exit_signature_set(state, caches, exit, spec),
            )?;
        }
        for (index, change) in changes.into_iter().enumerate() {
            self.push(
                SignatureKind::BlsToExecutionChange { index },
                bls_to_execution_change_signature_set(state, change, spec),
            )?;
        }
        Ok(())
    }

    /// The sync aggregate, by the current sync committee.
    fn include_sync_aggregate<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &mut Caches,
        sync_aggregate: &SyncAggregate<E>,
    ) -> Result<(), BlockProcessingError> {
        let members = super::sync_aggregate::sync_committee_indices(state, caches)?;
        let participants = sync_aggregate.sync_committee_bits.num_set_bits();
        let kind = SignatureKind::SyncAggregate { participants };
        match sync_aggregate_signature_set(state, caches, sync_aggregate, &members) {
            Ok(Some(set)) => self.push(kind, Ok(set)),
            Ok(None) => Ok(()),
            Err(e) => self.push(kind, Err(e)),
        }
    }

    /// Adds every signature set of a Gloas block's body [New in Gloas]: those of
    /// [`Self::include_body`] (attestations and attester slashings of the Gloas types), the bid's
    /// (unless a self-build) and the payload attestations'. `state` is the state the block
    /// applies to (after `process_slots`): the parent payload's builder requests cannot change
    /// what these are checked against (a builder added or re-added by them is not active, so its
    /// bid fails whatever its signature).
    pub fn include_gloas_body<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &mut Caches,
        block: &types::gloas::BeaconBlock<E>,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        let body = &block.body;
        self.include_randao(state, caches, &body.randao_reveal)?;
        for (index, slashing) in body.proposer_slashings.iter().enumerate() {
            self.include_proposer_slashing(state, caches, index, slashing)?;
        }
        for (index, slashing) in body.attester_slashings.iter().enumerate() {
            for (which, indexed) in [(1, &slashing.attestation_1), (2, &slashing.attestation_2)] {
                self.include_slashing_attestation(
                    state,
                    caches,
                    (index, which),
                    &indexed.attesting_indices,
                    &indexed.data,
                    &indexed.signature,
                )?;
            }
        }
        for (index, att) in body.attestations.iter().enumerate() {
            let set = attestation_signature_set_of(state, caches, att);
            self.include_attestation(index, set)?;
        }
        self.include_exits_and_changes(
            state,
            caches,
            &body.voluntary_exits,
            &body.bls_to_execution_changes,
            spec,
        )?;
        // The bid: a self-build's infinity signature is checked by processing, not here.
        match execution_payload_bid_signature_set(state, &body.signed_execution_payload_bid) {
            Ok(Some(set)) => self.push(SignatureKind::ExecutionPayloadBid, Ok(set))?,
            Ok(None) => {}
            // An unknown builder: processing names the failed check.
            Err(SignatureSetError::State(Error::UnknownBuilder { .. })) => {}
            Err(e) => self.push(SignatureKind::ExecutionPayloadBid, Err(e))?,
        }
        for (index, payload_attestation) in body.payload_attestations.iter().enumerate() {
            // The checks that do not need a pairing come first, in processing; an attestation
            // whose PTC cannot be read fails there too.
            let Ok(indexed) = crate::gloas::per_block::get_indexed_payload_attestation(
                state,
                payload_attestation,
            ) else {
                continue;
            };
            if indexed.attesting_indices.is_empty() {
                continue;
            }
            self.push(
                SignatureKind::PayloadAttestation { index },
                payload_attestation_signature_set(
                    state,
                    caches,
                    &indexed.attesting_indices,
                    &indexed.data,
                    &indexed.signature,
                ),
            )?;
        }

        self.include_sync_aggregate(state, caches, &body.sync_aggregate)
    }

    fn include_proposer_slashing<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        index: usize,
        slashing: &ProposerSlashing,
    ) -> Result<(), BlockProcessingError> {
        let proposer = slashing.signed_header_1.message.proposer_index;
        for (header, signed) in [
            (1, &slashing.signed_header_1),
            (2, &slashing.signed_header_2),
        ] {
            self.push(
                SignatureKind::ProposerSlashing { index, header },
                proposer_slashing_header_signature_set(state, caches, proposer, signed),
            )?;
        }
        Ok(())
    }

    /// Verifies every gathered set in one batch on the caller's pool (sequentially off one:
    /// [`Parallelism::CurrentPool`]).
    #[track_caller]
    pub fn verify(self) -> Result<(), BlockProcessingError> {
        self.verify_on(Parallelism::CurrentPool)
    }

    /// Verifies every gathered set in one batch, in parallel as `parallelism` says (a
    /// `&ThreadPool`: on that pool). When the batch fails, the sets are verified one by one
    /// and the first invalid one, in block order, is named.
    #[track_caller]
    pub fn verify_on<'a>(
        self,
        parallelism: impl Into<Parallelism<'a>>,
    ) -> Result<(), BlockProcessingError> {
        if let Some(kind) = self.malformed {
            return Err(kind.invalid(self.epoch));
        }
        if self.sets.is_empty() {
            return Ok(());
        }
        match bls::verify_signature_sets_attributed(&self.sets, parallelism) {
            Ok(()) => Ok(()),
            Err(failed) => match failed.iter().min() {
                Some(&i) => Err(self.kinds[i].invalid(self.epoch)),
                None => Err(BlockProcessingError::BatchSignature),
            },
        }
    }
}

/// The signature sets of several blocks of a chain segment (range sync), verified in one batch:
/// one multi-pairing for the whole segment instead of one per block, and a failure attributed to
/// the first block in segment order that holds an invalid set.
#[derive(Debug, Default)]
pub struct SegmentSignatureVerifier {
    blocks: Vec<BlockSignatureVerifier>,
}

impl SegmentSignatureVerifier {
    /// An empty verifier.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next block's gathered sets (block `self.blocks()` of the segment).
    pub fn push_block(&mut self, block: BlockSignatureVerifier) {
        self.blocks.push(block);
    }

    /// How many blocks have been added.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// How many sets the blocks hold together.
    pub fn len(&self) -> usize {
        self.blocks.iter().map(BlockSignatureVerifier::len).sum()
    }

    /// Whether no set has been gathered.
    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(BlockSignatureVerifier::is_empty)
    }

    /// Verifies every block's sets in one batch on the caller's pool (sequentially off one:
    /// [`Parallelism::CurrentPool`]).
    #[track_caller]
    pub fn verify(self) -> Result<(), (usize, BlockProcessingError)> {
        self.verify_on(Parallelism::CurrentPool)
    }

    /// Verifies every block's sets in one batch, in parallel as `parallelism` says. On failure, the position of the first
    /// block (in the order they were added) with an invalid set, and that block's error as
    /// [`BlockSignatureVerifier::verify_on`] names it; the blocks before it are valid. A block
    /// with a set that cannot verify at all (a malformed key or signature) ends the batch there:
    /// only the blocks before it are verified.
    #[track_caller]
    pub fn verify_on<'a>(
        self,
        parallelism: impl Into<Parallelism<'a>>,
    ) -> Result<(), (usize, BlockProcessingError)> {
        let mut blocks = self.blocks;
        // The first block that cannot verify, and its error: the batch covers those before it.
        let malformed = blocks.iter().position(|b| b.malformed.is_some()).map(|at| {
            let error = blocks[at]
                .malformed
                .map_or(BlockProcessingError::BatchSignature, |kind| {
                    kind.invalid(blocks[at].epoch)
                });
            blocks.truncate(at);
            (at, error)
        });
        let mut sets = Vec::with_capacity(blocks.iter().map(BlockSignatureVerifier::len).sum());
        // Per set: its block's position and its kind.
        let mut owners = Vec::with_capacity(sets.capacity());
        let mut epochs = Vec::with_capacity(blocks.len());
        for (at, block) in blocks.into_iter().enumerate() {
            owners.extend(block.kinds.into_iter().map(|kind| (at, kind)));
            sets.extend(block.sets);
            epochs.push(block.epoch);
        }
        if !sets.is_empty()
            && let Err(failed) = bls::verify_signature_sets_attributed(&sets, parallelism)
        {
            return Err(match failed.iter().min() {
                Some(&i) => {
                    let (at, kind) = owners[i];
                    (at, kind.invalid(epochs[at]))
                }
                None => (0, BlockProcessingError::BatchSignature),
            });
        }
        malformed.map_or(Ok(()), Err)
    }
}

/// The aggregate signature of an attestation over its data, by the attesters its committee bits
/// and aggregation bits select (`is_valid_indexed_attestation(state,
/// get_indexed_attestation(state, attestation))` without sorting: the sum of keys does not
/// depend on their order). Makes the checks that selecting the attesters needs.
///
/// A signature or attester key that does not decode is
/// `IndexedAttestation(InvalidSignature)`, as a signature that does not verify would be.
pub fn attestation_signature_set<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    att: &Attestation<E>,
) -> Result<SignatureSet, AttestationInvalid> {
    attestation_signature_set_of(state, caches, att)
}

/// [`attestation_signature_set`] for an attestation of any fork.
pub(crate) fn attestation_signature_set_of<E: EthSpec, A: attestation::AggregateAttestation<E>>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
    att: &A,
) -> Result<SignatureSet, AttestationInvalid> {
    const MALFORMED: AttestationInvalid =
        AttestationInvalid::IndexedAttestation(IndexedAttestationInvalid::InvalidSignature);
    let committees = attestation::attestation_committees(state, caches, att.data())?;
    // The structural checks first (they name the invalid field), then the signature's encoding
    // (cheap), then the keys.
    attestation::for_each_attester(&committees, att, |_| {})?;
    let signature = decode_signature(att.signature()).map_err(|_| MALFORMED)?;
    // Keys are read in index order: the cache's entries in memory order, and where the state's
    // tree is read (validators added since the finalized state), neighbouring registry entries
    // share most of their path, which halves the cost of the reads on a large registry.
    let mut indices = Vec::with_capacity(att.aggregation_bits_len());
    attestation::for_each_attester(&committees, att, |index| indices.push(index))?;
    indices.sort_unstable();
    let keys = caches
        .pubkeys(state, &indices)
        .map_err(|e| match SignatureSetError::from(e) {
            SignatureSetError::Malformed => MALFORMED,
            SignatureSetError::State(e) => AttestationInvalid::State(e),
        })?;
    let domain = get_domain(state, DOMAIN_BEACON_ATTESTER, Some(att.data().target.epoch));
    let message = compute_signing_root(att.data(), domain);
    Ok(SignatureSet::new(signature, keys, message.0))
}
