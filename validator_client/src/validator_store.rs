//! The validator store: the keys, their indices on chain, and the signing path that consults
//! slashing protection before every block and attestation signature.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::RwLock;
use slashing_protection::{NotSafe, Safe, SlashingDatabase};
use types::altair::{ContributionAndProof, SignedContributionAndProof, SyncCommitteeContribution};
use types::electra::{AggregateAndProof, SignedAggregateAndProof, SingleAttestation};
use types::gloas::{PayloadAttestationData, PayloadAttestationMessage};
use types::phase0::AttestationData;
use types::{
    BLSPubkey, BLSSignature, BeaconBlock, CommitteeIndex, EthSpec, Root, SignedBeaconBlock, Slot,
    ValidatorIndex,
};

use crate::signing::{
    self, SigningContext, ValidatorKey, attestation_signing_root, block_signing_root,
};

/// Why a message was not signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The key is not one of this client's.
    #[error("validator {0} is not managed by this client")]
    UnknownValidator(BLSPubkey),
    /// Slashing protection refused the message (or its database failed).
    #[error("slashing protection refused to sign for {pubkey}: {reason}")]
    NotSafe {
        /// The validator.
        pubkey: BLSPubkey,
        /// Why (boxed: the refusal carries both conflicting records).
        #[source]
        reason: Box<NotSafe>,
    },
    /// Doppelganger protection has not yet cleared the validators to sign.
    #[error("doppelganger protection has not cleared signing yet")]
    DoppelgangerPending,
}

/// The validator client's keys and its only way to sign.
///
/// Keys may be added and removed while the client runs (the keymanager API). A block or vote
/// is checked, recorded and signed under the keys' read lock, so once [`Self::remove_key`]
/// (which takes the write lock) returns, the key signs nothing more and its slashing protection
/// history is complete.
pub struct ValidatorStore {
    keys: RwLock<BTreeMap<BLSPubkey, Arc<ValidatorKey>>>,
    indices: RwLock<HashMap<BLSPubkey, ValidatorIndex>>,
    slashing: SlashingDatabase,
    ctx: SigningContext,
    signing_enabled: AtomicBool,
}

impl ValidatorStore {
    /// A store of `keys` over `slashing` (every key is registered in it here, so that it may
    /// sign); `signing_enabled` is false while doppelganger protection runs.
    pub fn new(
        keys: Vec<ValidatorKey>,
        slashing: SlashingDatabase,
        ctx: SigningContext,
        signing_enabled: bool,
    ) -> Result<Self, slashing_protection::DbError> {
        let pubkeys: Vec<BLSPubkey> = keys.iter().map(ValidatorKey::pubkey).collect();
        slashing.register_validators(&pubkeys)?;
        let keys = keys
            .into_iter()
            .map(|k| (k.pubkey(), Arc::new(k)))
            .collect();
        Ok(Self {
            keys: RwLock::new(keys),
            indices: RwLock::new(HashMap::new()),
            slashing,
            ctx,
            signing_enabled: AtomicBool::new(signing_enabled),
        })
    }

    /// The signing context (chain configuration and genesis validators root).
    pub fn context(&self) -> &SigningContext {
        &self.ctx
    }

    /// The slashing protection database.
    pub fn slashing_protection(&self) -> &SlashingDatabase {
        &self.slashing
    }

    /// Every public key, in key order.
    pub fn pubkeys(&self) -> Vec<BLSPubkey> {
        self.keys.read().keys().copied().collect()
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.keys.read().len()
    }

    /// True if the store holds no key.
    pub fn is_empty(&self) -> bool {
        self.keys.read().is_empty()
    }

    /// Adds a key, registered in slashing protection first; false if it was already here.
    pub fn add_key(&self, key: ValidatorKey) -> Result<bool, slashing_protection::DbError> {
        let pubkey = key.pubkey();
        if self.contains(&pubkey) {
            return Ok(false);
        }
        self.slashing.register_validator(&pubkey)?;
        Ok(self.keys.write().insert(pubkey, Arc::new(key)).is_none())
    }

    /// Removes a key: once this returns it signs nothing more (a signature in progress
    /// finishes, with its record, first). False if the key was not here.
    pub fn remove_key(&self, pubkey: &BLSPubkey) -> bool {
        let removed = self.keys.write().remove(pubkey).is_some();
        self.indices.write().remove(pubkey);
        removed
    }

    /// Records the chain's index of `pubkey` (ignored for a key not managed here).
    pub fn set_index(&self, pubkey: BLSPubkey, index: ValidatorIndex) {
        if self.contains(&pubkey) {
            self.indices.write().insert(pubkey, index);
        }
    }

    /// The chain's index of `pubkey`, once resolved.
    pub fn index_of(&self, pubkey: &BLSPubkey) -> Option<ValidatorIndex> {
        self.indices.read().get(pubkey).copied()
    }

    /// Every resolved index, ascending.
    pub fn indices(&self) -> Vec<ValidatorIndex> {
        let mut out: Vec<ValidatorIndex> = self.indices.read().values().copied().collect();
        out.sort_unstable();
        out
    }

    /// The keys whose index is not known yet.
    pub fn unresolved_pubkeys(&self) -> Vec<BLSPubkey> {
        let indices = self.indices.read();
        self.keys
            .read()
            .keys()
            .filter(|p| !indices.contains_key(*p))
            .copied()
            .collect()
    }

    /// True if `pubkey` is managed here.
    pub fn contains(&self, pubkey: &BLSPubkey) -> bool {
        self.keys.read().contains_key(pubkey)
    }

    /// Lets the validators sign (doppelganger protection cleared them).
    pub fn enable_signing(&self) {
        self.signing_enabled.store(true, Ordering::SeqCst);
    }

    /// True once the validators may sign.
    pub fn signing_enabled(&self) -> bool {
        self.signing_enabled.load(Ordering::SeqCst)
    }

    fn key(&self, pubkey: &BLSPubkey) -> Result<Arc<ValidatorKey>, SignError> {
        if !self.signing_enabled() {
            return Err(SignError::DoppelgangerPending);
        }
        self.any_key(pubkey)
    }

    fn any_key(&self, pubkey: &BLSPubkey) -> Result<Arc<ValidatorKey>, SignError> {
        self.keys
            .read()
            .get(pubkey)
            .cloned()
            .ok_or(SignError::UnknownValidator(*pubkey))
    }

    /// Runs a slashable signing under the keys' read lock (see the type's docs).
    fn with_key_locked<T>(
        &self,
        pubkey: &BLSPubkey,
        sign: impl FnOnce(&ValidatorKey) -> Result<T, SignError>,
    ) -> Result<T, SignError> {
        if !self.signing_enabled() {
            return Err(SignError::DoppelgangerPending);
        }
        let keys = self.keys.read();
        let key = keys
            .get(pubkey)
            .ok_or(SignError::UnknownValidator(*pubkey))?;
        sign(key)
    }

    /// `get_block_signature`, after slashing protection recorded the block: refuses a second
    /// block at the same slot.
    pub fn sign_block<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        block: BeaconBlock<E>,
    ) -> Result<SignedBeaconBlock<E>, SignError> {
        let signing_root = block_signing_root(&self.ctx, &block);
        let signature = self.with_key_locked(pubkey, |key| {
            self.check(pubkey, |db| {
                db.check_and_insert_block_proposal(pubkey, block.slot(), signing_root)
            })?;
            Ok(key.sign(signing_root))
        })?;
        Ok(into_signed_block(block, signature))
    }

    /// `get_block_signature` over a blinded block (its root is the full block's, so slashing
    /// protection records the same signing root either way).
    ///
    /// [spec]: builder-specs specs/bellatrix/validator.md#signing
    pub fn sign_blinded_block<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        block: beacon_api::BlindedBeaconBlock<E>,
    ) -> Result<beacon_api::SignedBlindedBeaconBlock<E>, SignError> {
        let signing_root = signing::blinded_block_signing_root(&self.ctx, &block);
        let signature = self.with_key_locked(pubkey, |key| {
            self.check(pubkey, |db| {
                db.check_and_insert_block_proposal(pubkey, block.slot, signing_root)
            })?;
            Ok(key.sign(signing_root))
        })?;
        Ok(beacon_api::SignedBlindedBeaconBlock {
            message: block,
            signature,
        })
    }

    /// `get_attestation_signature` as an Electra `SingleAttestation`, after slashing protection
    /// recorded the vote: refuses double and surround votes.
    pub fn sign_attestation(
        &self,
        pubkey: &BLSPubkey,
        attester_index: ValidatorIndex,
        committee_index: CommitteeIndex,
        data: AttestationData,
    ) -> Result<SingleAttestation, SignError> {
        let signing_root = attestation_signing_root(&self.ctx, &data);
        let signature = self.with_key_locked(pubkey, |key| {
            self.check(pubkey, |db| {
                db.check_and_insert_attestation(
                    pubkey,
                    data.source.epoch,
                    data.target.epoch,
                    signing_root,
                )
            })?;
            Ok(key.sign(signing_root))
        })?;
        Ok(SingleAttestation {
            committee_index,
            attester_index,
            data,
            signature,
        })
    }

    fn check(
        &self,
        pubkey: &BLSPubkey,
        check: impl FnOnce(&SlashingDatabase) -> Result<Safe, NotSafe>,
    ) -> Result<(), SignError> {
        match check(&self.slashing) {
            Ok(Safe::Valid | Safe::SameData) => Ok(()),
            Err(reason) => Err(SignError::NotSafe {
                pubkey: *pubkey,
                reason: Box::new(reason),
            }),
        }
    }

    /// The RANDAO reveal of a block at `slot`.
    pub fn randao_reveal<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        slot: Slot,
    ) -> Result<BLSSignature, SignError> {
        Ok(signing::get_epoch_signature::<E>(
            &self.ctx,
            slot,
            &*self.key(pubkey)?,
        ))
    }

    /// The aggregation selection proof (`get_slot_signature`). Computed ahead of the duty, so
    /// it does not wait for doppelganger protection: it signs nothing slashable.
    pub fn slot_signature<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        slot: Slot,
    ) -> Result<BLSSignature, SignError> {
        let key = self.any_key(pubkey)?;
        Ok(signing::get_slot_signature::<E>(&self.ctx, slot, &key))
    }

    /// A signed aggregate (`get_aggregate_and_proof` and its signature).
    pub fn sign_aggregate_and_proof<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        aggregator_index: ValidatorIndex,
        aggregate: types::electra::Attestation<E>,
        selection_proof: BLSSignature,
    ) -> Result<SignedAggregateAndProof<E>, SignError> {
        let key = self.key(pubkey)?;
        let message = AggregateAndProof {
            aggregator_index,
            aggregate,
            selection_proof,
        };
        let signature = signing::get_aggregate_and_proof_signature(&self.ctx, &message, &key);
        Ok(SignedAggregateAndProof { message, signature })
    }

    /// [`Self::sign_aggregate_and_proof`] in Gloas's container.
    pub fn sign_gloas_aggregate_and_proof<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        aggregator_index: ValidatorIndex,
        aggregate: types::gloas::Attestation<E>,
        selection_proof: BLSSignature,
    ) -> Result<types::gloas::SignedAggregateAndProof<E>, SignError> {
        let key = self.key(pubkey)?;
        let message = types::gloas::AggregateAndProof {
            aggregator_index,
            aggregate,
            selection_proof,
        };
        let signature = signing::get_gloas_aggregate_and_proof_signature(&self.ctx, &message, &key);
        Ok(types::gloas::SignedAggregateAndProof { message, signature })
    }

    /// A sync committee message over `block_root` at `slot`.
    pub fn sync_committee_message<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        slot: Slot,
        block_root: Root,
        validator_index: ValidatorIndex,
    ) -> Result<types::altair::SyncCommitteeMessage, SignError> {
        let key = self.key(pubkey)?;
        Ok(signing::get_sync_committee_message::<E>(
            &self.ctx,
            slot,
            block_root,
            validator_index,
            &key,
        ))
    }

    /// The sync committee selection proof of `subcommittee_index` at `slot`.
    pub fn sync_selection_proof<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        slot: Slot,
        subcommittee_index: u64,
    ) -> Result<BLSSignature, SignError> {
        let key = self.key(pubkey)?;
        Ok(signing::get_sync_committee_selection_proof::<E>(
            &self.ctx,
            slot,
            subcommittee_index,
            &key,
        ))
    }

    /// A signed contribution (`get_contribution_and_proof` and its signature).
    pub fn sign_contribution_and_proof<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        aggregator_index: ValidatorIndex,
        contribution: SyncCommitteeContribution<E>,
        selection_proof: BLSSignature,
    ) -> Result<SignedContributionAndProof<E>, SignError> {
        let key = self.key(pubkey)?;
        let message = ContributionAndProof {
            aggregator_index,
            contribution,
            selection_proof,
        };
        let signature = signing::get_contribution_and_proof_signature(&self.ctx, &message, &key);
        Ok(SignedContributionAndProof { message, signature })
    }

    /// The signed envelope of the payload of a block this validator proposed (a self-build:
    /// the proposer signs as its builder). Not slashable, so not recorded by slashing
    /// protection; refused while doppelganger protection holds the key back (the envelope
    /// follows a block it signed).
    pub fn sign_execution_payload_envelope<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        envelope: types::gloas::ExecutionPayloadEnvelope<E>,
    ) -> Result<types::gloas::SignedExecutionPayloadEnvelope<E>, SignError> {
        if !self.signing_enabled() {
            return Err(SignError::DoppelgangerPending);
        }
        let key = self.key(pubkey)?;
        let signature =
            signing::get_execution_payload_envelope_signature(&self.ctx, &envelope, &key);
        Ok(types::gloas::SignedExecutionPayloadEnvelope {
            message: envelope,
            signature,
        })
    }

    /// A payload timeliness committee member's vote on `data`
    /// (`get_payload_attestation_message_signature`). Not slashable (a member that signs two
    /// datas for one slot loses nothing but its vote), so slashing protection records nothing;
    /// refused while doppelganger protection holds the keys back, like every other duty.
    ///
    /// [spec]: gloas/validator.md#constructing-the-payloadattestationmessage
    pub fn sign_payload_attestation<E: EthSpec>(
        &self,
        pubkey: &BLSPubkey,
        validator_index: ValidatorIndex,
        data: PayloadAttestationData,
    ) -> Result<PayloadAttestationMessage, SignError> {
        let key = self.key(pubkey)?;
        let signature =
            signing::get_payload_attestation_message_signature::<E>(&self.ctx, &data, &key);
        Ok(PayloadAttestationMessage {
            validator_index,
            data,
            signature,
        })
    }

    /// A signed builder registration.
    pub fn sign_validator_registration(
        &self,
        pubkey: &BLSPubkey,
        message: beacon_api::ValidatorRegistrationV1,
    ) -> Result<beacon_api::SignedValidatorRegistrationV1, SignError> {
        let key = self.key(pubkey)?;
        let signature =
            signing::get_validator_registration_signature(self.ctx.spec(), &message, &key);
        Ok(beacon_api::SignedValidatorRegistrationV1 { message, signature })
    }
}

/// The signed block of `block` with `signature`, in the block's fork.
fn into_signed_block<E: EthSpec>(
    block: BeaconBlock<E>,
    signature: BLSSignature,
) -> SignedBeaconBlock<E> {
    match block {
        BeaconBlock::Phase0(message) => {
            SignedBeaconBlock::Phase0(types::phase0::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Altair(message) => {
            SignedBeaconBlock::Altair(types::altair::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Bellatrix(message) => {
            SignedBeaconBlock::Bellatrix(types::bellatrix::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Capella(message) => {
            SignedBeaconBlock::Capella(types::capella::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Deneb(message) => {
            SignedBeaconBlock::Deneb(types::deneb::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Electra(message) => {
            SignedBeaconBlock::Electra(types::electra::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Fulu(message) => {
            SignedBeaconBlock::Fulu(types::fulu::SignedBeaconBlock { message, signature })
        }
        BeaconBlock::Gloas(message) => {
            SignedBeaconBlock::Gloas(types::gloas::SignedBeaconBlock { message, signature })
        }
    }
}
