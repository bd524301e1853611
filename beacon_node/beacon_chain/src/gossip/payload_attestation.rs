//! `payload_attestation_message` (Gloas): one payload timeliness committee member's vote on
//! whether the payload of the current slot's block arrived (and its blob data was available),
//! one by one or in batches whose signatures are verified together, then counted by the Gloas
//! fork choice as the PTC's votes on that block (`on_payload_attestation_message` with
//! `is_from_block = False`).
//!
//! The PTC a member is checked against is the one fork choice keeps for the voted block
//! (`get_ptc` on the block's post-state, for the block's slot, which the message's slot must
//! be); the member's public key comes from the head state.
//!
//! [spec]: gloas/p2p-interface.md#new-payload_attestation_message,
//! gloas/fork-choice.md#new-on_payload_attestation_message

use std::sync::Arc;

use bls::SignatureSet;
use types::{
    EthSpec, Root, Slot, ValidatorIndex,
    gloas::PayloadAttestationMessage,
    signing::{self, DOMAIN_PTC_ATTESTER},
};

use super::attestation::{bls_failures, single_set};
use super::{Verdict, domain_at, head_pubkey};
use crate::batch_metrics::BlsBatchKind;
use crate::chain::{BeaconChain, ChainError, UnimportedBlock};
use crate::chain_fork_choice::ChainForkChoice;
use crate::events::ChainEvent;

/// Why a gossip payload attestation message is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadAttestationGossipError {
    /// [IGNORE] The message's slot is not the current slot (within the clock disparity).
    #[error("payload attestation for slot {0}, not the current slot")]
    NotCurrentSlot(Slot),
    /// [IGNORE] A valid message of this validator for this slot was seen.
    #[error("validator {validator} already sent a payload attestation for slot {slot}")]
    AlreadySeen {
        /// The PTC member.
        validator: ValidatorIndex,
        /// The slot.
        slot: Slot,
    },
    /// [IGNORE] The voted block has not been seen (it may be retrieved and the message come
    /// again).
    #[error("block {0} has not been seen")]
    UnknownBlock(Root),
    /// [REJECT] The voted block failed validation.
    #[error("block {0} failed validation")]
    InvalidBlock(Root),
    /// [IGNORE] The voted block is not of the message's slot.
    #[error("block {root} is of slot {block_slot}, not the message's slot {slot}")]
    NotAtAssignedSlot {
        /// The voted block.
        root: Root,
        /// Its slot.
        block_slot: Slot,
        /// The message's slot.
        slot: Slot,
    },
    /// [REJECT] The voted block is a block before Gloas, which has no payload timeliness
    /// committee (its payload is inside it).
    #[error("block {0} is a block before Gloas: no payload timeliness committee")]
    PreGloasBlock(Root),
    /// [REJECT] The validator index is past the registry.
    #[error("validator index {0} is past the registry")]
    UnknownValidator(ValidatorIndex),
    /// [REJECT] The validator is not a member of the payload timeliness committee of the slot.
    #[error("validator {validator} is not in the payload timeliness committee of slot {slot}")]
    NotInPtc {
        /// The validator.
        validator: ValidatorIndex,
        /// The slot.
        slot: Slot,
    },
    /// [REJECT] The signature is invalid.
    #[error("invalid payload attestation signature")]
    InvalidSignature,
}

impl PayloadAttestationGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::NotCurrentSlot(_)
            | Self::AlreadySeen { .. }
            | Self::UnknownBlock(_)
            | Self::NotAtAssignedSlot { .. } => Verdict::Ignore,
            Self::InvalidBlock(_)
            | Self::PreGloasBlock(_)
            | Self::UnknownValidator(_)
            | Self::NotInPtc { .. }
            | Self::InvalidSignature => Verdict::Reject,
        }
    }
}

/// A payload attestation message that passed gossip validation.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedPayloadAttestationMessage {
    /// The message.
    pub message: PayloadAttestationMessage,
}

/// What [`BeaconChain::apply_payload_attestation_messages`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PayloadVotesApplied {
    /// Messages fork choice counted.
    pub applied: usize,
    /// Messages fork choice refused (their block pruned, their slot passed since they were
    /// verified, a chain that is not Gloas).
    pub refused: usize,
}

impl<E: EthSpec> BeaconChain<E> {
    fn payload_attestation_before_signature(
        &self,
        message: &PayloadAttestationMessage,
        current_time_ms: u64,
    ) -> Result<SignatureSet, PayloadAttestationGossipError> {
        let data = &message.data;
        let validator = message.validator_index;
        if !self.is_within_slot_range(data.slot, 0, current_time_ms) {
            return Err(PayloadAttestationGossipError::NotCurrentSlot(data.slot));
        }
        if self
            .observed
            .lock()
            .payload_attesters
            .is_known(data.slot, &validator)
            .unwrap_or(false)
        {
            return Err(PayloadAttestationGossipError::AlreadySeen {
                validator,
                slot: data.slot,
            });
        }
        let root = data.beacon_block_root;
        {
            let fc = self.fork_choice.lock();
            let Some(block_slot) = fc.block_slot(&root) else {
                drop(fc);
                return Err(match self.unimported_block(&root) {
                    Some(UnimportedBlock::Failed { .. }) => {
                        PayloadAttestationGossipError::InvalidBlock(root)
                    }
                    _ => PayloadAttestationGossipError::UnknownBlock(root),
                });
            };
            if block_slot != data.slot {
                return Err(PayloadAttestationGossipError::NotAtAssignedSlot {
                    root,
                    block_slot,
                    slot: data.slot,
                });
            }
            let ptc = match &*fc {
                ChainForkChoice::Fulu(_) => {
                    return Err(PayloadAttestationGossipError::PreGloasBlock(root));
                }
                ChainForkChoice::Gloas(g) => g
                    .store
                    .ptc(&root)
                    .ok_or(PayloadAttestationGossipError::UnknownBlock(root))?,
            };
            // The index against the registry comes first in the spec; a member of the PTC is
            // in the registry, so only a non-member can be past it: the key lookup below
            // tells the two apart.
            if !ptc.contains(&validator) {
                drop(fc);
                let head = self.head();
                if head_pubkey(&head.state, validator).is_none() {
                    return Err(PayloadAttestationGossipError::UnknownValidator(validator));
                }
                return Err(PayloadAttestationGossipError::NotInPtc {
                    validator,
                    slot: data.slot,
                });
            }
        }
        let key = head_pubkey(&self.head().state, validator)
            .ok_or(PayloadAttestationGossipError::UnknownValidator(validator))?;
        let epoch = data.slot / E::slots_per_epoch();
        let domain = domain_at(
            self.spec(),
            self.genesis_validators_root(),
            DOMAIN_PTC_ATTESTER,
            epoch,
        );
        single_set(
            &message.signature,
            key,
            signing::compute_signing_root(data, domain),
        )
        .ok_or(PayloadAttestationGossipError::InvalidSignature)
    }

    /// `validate_payload_attestation_message_gossip(seen, store, state, message,
    /// current_time_ms)`.
    ///
    /// [spec]: gloas/p2p-interface.md#new-payload_attestation_message
    pub fn verify_payload_attestation_message_for_gossip(
        &self,
        message: PayloadAttestationMessage,
        current_time_ms: u64,
    ) -> Result<VerifiedPayloadAttestationMessage, PayloadAttestationGossipError> {
        self.verify_payload_attestation_messages_for_gossip(vec![message], current_time_ms)
            .pop()
            .expect("one result per message")
    }

    /// [`Self::verify_payload_attestation_message_for_gossip`] for a batch: one BLS batch for
    /// every signature, the bad ones found one by one in parallel when it fails. One result
    /// per message, in order; two messages of one validator and slot in one batch are not both
    /// accepted.
    pub fn verify_payload_attestation_messages_for_gossip(
        &self,
        messages: Vec<PayloadAttestationMessage>,
        current_time_ms: u64,
    ) -> Vec<Result<VerifiedPayloadAttestationMessage, PayloadAttestationGossipError>> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let mut sets = Vec::with_capacity(messages.len());
        let pending: Vec<_> = messages
            .into_iter()
            .map(|message| {
                self.payload_attestation_before_signature(&message, current_time_ms)
                    .map(|set| {
                        sets.push(set);
                        message
                    })
            })
            .collect();
        let failed = bls_failures(BlsBatchKind::PayloadAttestation, &sets, self.pool());
        let mut set_index = 0;
        pending
            .into_iter()
            .map(|p| {
                let message = p?;
                let bad = failed.contains(&set_index);
                set_index += 1;
                if bad {
                    return Err(PayloadAttestationGossipError::InvalidSignature);
                }
                let (slot, validator) = (message.data.slot, message.validator_index);
                // Observed only now, its signature valid ("the first valid payload
                // attestation"); a key outside the window is a slot no longer current.
                match self
                    .observed
                    .lock()
                    .payload_attesters
                    .observe(slot, validator)
                {
                    Ok(false) => {
                        self.events()
                            .publish(ChainEvent::PayloadAttestationMessage(Arc::new(
                                message.clone(),
                            )));
                        Ok(VerifiedPayloadAttestationMessage { message })
                    }
                    Ok(true) => Err(PayloadAttestationGossipError::AlreadySeen { validator, slot }),
                    Err(_) => Err(PayloadAttestationGossipError::NotCurrentSlot(slot)),
                }
            })
            .collect()
    }

    /// Verified payload attestation messages into the Gloas fork choice under its lock
    /// (`on_payload_attestation_message(store, message, is_from_block=False)`: each member's
    /// vote on its block's payload timeliness and blob data availability), then the head
    /// recomputed, since a PTC quorum decides between a block's EMPTY and FULL nodes. A message
    /// fork choice refuses (its block pruned, its slot no longer the store's current slot, a
    /// chain that is not Gloas) is dropped and counted.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_payload_attestation_message
    pub fn apply_payload_attestation_messages<'a>(
        &self,
        verified: impl IntoIterator<Item = &'a VerifiedPayloadAttestationMessage>,
    ) -> Result<PayloadVotesApplied, ChainError> {
        let mut outcome = PayloadVotesApplied::default();
        {
            let mut fc = self.fork_choice.lock();
            fc.on_tick(self.now_ms() / 1000);
            match &mut *fc {
                ChainForkChoice::Fulu(_) => {
                    outcome.refused = verified.into_iter().count();
                }
                ChainForkChoice::Gloas(g) => {
                    for v in verified {
                        match g.store.on_payload_attestation_message(&v.message, false) {
                            Ok(()) => outcome.applied += 1,
                            Err(error) => {
                                tracing::debug!(
                                    %error,
                                    validator = v.message.validator_index,
                                    block = %v.message.data.beacon_block_root,
                                    "payload attestation refused by fork choice"
                                );
                                outcome.refused += 1;
                            }
                        }
                    }
                }
            }
        }
        if outcome.applied > 0 {
            self.recompute_head()?;
        }
        Ok(outcome)
    }
}
