//! The payload attestation messages this node verified (through the API, and from gossip where
//! the node hands them over: [`crate::ApiContext::insert_payload_attestation_message`]),
//! aggregated per (slot, data) into the `PayloadAttestation`s
//! `GET /eth/v1/beacon/pool/payload_attestations` serves: the bits of the member's positions
//! in the block's payload timeliness committee, the signatures added once per member.
//!
//! [spec]: gloas/validator.md#constructing-the-payloadattestationmessage,
//! apis/beacon/pool/payload_attestations.yaml

use std::collections::BTreeMap;

use parking_lot::Mutex;
use ssz_types::BitVector;
use ssz_types::typenum::Unsigned;
use tree_hash::TreeHash;
use types::gloas::{PayloadAttestation, PayloadAttestationData, PayloadAttestationMessage};
use types::{BLSSignature, EthSpec, Root, Slot, ValidatorIndex};

/// Slots of messages kept behind the newest (a proposer packs the previous slot's votes).
const SLOTS_KEPT: u64 = 2;

#[derive(Clone)]
struct Aggregate {
    data: PayloadAttestationData,
    bits: Vec<bool>,
    signature: bls::AggregateSignature,
}

/// Why a verified message was not added to the pool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PayloadAttestationPoolError {
    /// The message's signature does not decode (a verified message always does: our fault).
    #[error("payload attestation signature of validator {0} does not decode")]
    Signature(ValidatorIndex),
    /// The validator holds no position in the committee given (our fault: verified against
    /// another committee).
    #[error("validator {0} is not in the payload timeliness committee given")]
    NotInCommittee(ValidatorIndex),
}

/// Verified payload attestation messages, naively aggregated per (slot, data root).
#[derive(Default)]
pub(crate) struct PayloadAttestations {
    by_key: Mutex<BTreeMap<(Slot, Root), Aggregate>>,
}

impl std::fmt::Debug for PayloadAttestations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayloadAttestations")
            .field("aggregates", &self.by_key.lock().len())
            .finish()
    }
}

impl PayloadAttestations {
    /// Adds a verified `message` of a member of `ptc` (its block's committee, in order): its
    /// signature once, a bit at each of its positions. A member already counted is not added
    /// again.
    pub(crate) fn insert<E: EthSpec>(
        &self,
        message: &PayloadAttestationMessage,
        ptc: &[ValidatorIndex],
    ) -> Result<(), PayloadAttestationPoolError> {
        let validator = message.validator_index;
        let size = E::PtcSize::to_usize();
        let positions: Vec<usize> = ptc
            .iter()
            .enumerate()
            .filter(|(i, member)| **member == validator && *i < size)
            .map(|(i, _)| i)
            .collect();
        if positions.is_empty() {
            return Err(PayloadAttestationPoolError::NotInCommittee(validator));
        }
        let signature = bls::Signature::deserialize(message.signature.as_slice())
            .map_err(|_| PayloadAttestationPoolError::Signature(validator))?;
        let slot = message.data.slot;
        let mut map = self.by_key.lock();
        map.retain(|(s, _), _| s.saturating_add(SLOTS_KEPT) >= slot);
        let entry = map
            .entry((slot, message.data.tree_hash_root()))
            .or_insert_with(|| Aggregate {
                data: message.data.clone(),
                bits: vec![false; size],
                signature: bls::AggregateSignature::infinity(),
            });
        if positions.iter().any(|p| entry.bits[*p]) {
            return Ok(());
        }
        for p in positions {
            entry.bits[p] = true;
        }
        entry.signature.add(&signature);
        Ok(())
    }

    /// The aggregates kept, of `slot` only when given, in slot order.
    pub(crate) fn aggregates<E: EthSpec>(&self, slot: Option<Slot>) -> Vec<PayloadAttestation<E>> {
        self.by_key
            .lock()
            .iter()
            .filter(|((s, _), _)| slot.is_none_or(|want| *s == want))
            .filter_map(|(_, aggregate)| {
                let mut bits = BitVector::<E::PtcSize>::new();
                for (i, set) in aggregate.bits.iter().enumerate() {
                    if *set {
                        bits.set(i, true).ok()?;
                    }
                }
                Some(PayloadAttestation {
                    aggregation_bits: bits,
                    data: aggregate.data.clone(),
                    signature: BLSSignature::from(aggregate.signature.serialize()),
                })
            })
            .collect()
    }
}
