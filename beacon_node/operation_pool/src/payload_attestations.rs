//! Gloas payload attestations: the verified `PayloadAttestationMessage`s of payload timeliness
//! committee (PTC) members, from gossip and from the Beacon API, aggregated per (slot, data)
//! into the `PayloadAttestation`s a proposer packs into the next block and the Beacon API's
//! pool lists.
//!
//! - A message is placed by the committee of its block (`get_ptc(state, data.slot)` in order,
//!   as fork choice keeps it): a bit at each of the member's positions, its signature added
//!   once per position (`get_indexed_payload_attestation` repeats a member drawn twice).
//! - A block at slot `N` packs the aggregates of its parent's slot `N - 1` that vote on its
//!   parent (`process_payload_attestation` refuses any other), at most
//!   `MAX_PAYLOAD_ATTESTATIONS`, the fullest first.
//! - Only the last few slots are kept: a message is worth nothing once its slot's child block
//!   is past.
//!
//! [spec]: gloas/validator.md#payload-attestations,
//! gloas/beacon-chain.md#new-process_payload_attestation

use std::collections::BTreeMap;

use ssz_types::BitVector;
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::gloas::{PayloadAttestation, PayloadAttestationData, PayloadAttestationMessage};
use types::{BLSSignature, EthSpec, Root, Slot, ValidatorIndex};

use crate::{InsertOutcome, OpPoolError};

/// Slots kept behind the newest message's slot: a block packs the previous slot's votes, and a
/// message may arrive a little after its slot.
pub const PAYLOAD_ATTESTATION_SLOTS_KEPT: u64 = 2;

/// The votes of one (slot, data): the committee positions set and their aggregate signature.
#[derive(Debug, Clone)]
struct Aggregate {
    data: PayloadAttestationData,
    bits: Vec<bool>,
    signature: bls::AggregateSignature,
}

impl Aggregate {
    fn count(&self) -> usize {
        self.bits.iter().filter(|b| **b).count()
    }

    fn to_payload_attestation<E: EthSpec>(&self) -> Result<PayloadAttestation<E>, OpPoolError> {
        let mut bits = BitVector::<E::PtcSize>::new();
        for (i, set) in self.bits.iter().enumerate() {
            if *set {
                bits.set(i, true)
                    .map_err(|_| OpPoolError::ListFull("payload_attestation.aggregation_bits"))?;
            }
        }
        Ok(PayloadAttestation {
            aggregation_bits: bits,
            data: self.data.clone(),
            signature: BLSSignature::from(self.signature.serialize()),
        })
    }
}

/// Verified payload attestation messages, aggregated per (slot, data root).
#[derive(Debug, Default)]
pub(crate) struct PayloadAttestationStorage {
    by_key: BTreeMap<(Slot, Root), Aggregate>,
}

impl PayloadAttestationStorage {
    /// Adds a verified `message` of a member of `ptc` (the committee of its block's slot, in
    /// order): a bit and its signature at each of its positions (a member drawn twice is
    /// verified with its key twice). A member already counted for this data changes nothing.
    pub(crate) fn insert<E: EthSpec>(
        &mut self,
        message: &PayloadAttestationMessage,
        ptc: &[ValidatorIndex],
    ) -> Result<InsertOutcome, OpPoolError> {
        let validator = message.validator_index;
        let size = E::PtcSize::to_usize();
        if ptc.len() != size {
            return Err(OpPoolError::PtcLength {
                expected: size,
                got: ptc.len(),
            });
        }
        let positions: Vec<usize> = ptc
            .iter()
            .enumerate()
            .filter(|(_, member)| **member == validator)
            .map(|(i, _)| i)
            .collect();
        if positions.is_empty() {
            return Err(OpPoolError::NotInPtc {
                validator,
                slot: message.data.slot,
            });
        }
        let signature = bls::Signature::deserialize(message.signature.as_slice())?;
        let slot = message.data.slot;
        self.prune(slot.saturating_sub(PAYLOAD_ATTESTATION_SLOTS_KEPT));
        let key = (slot, message.data.tree_hash_root());
        let outcome = match self.by_key.get(&key) {
            None => InsertOutcome::New,
            Some(entry) if positions.iter().any(|p| entry.bits[*p]) => {
                return Ok(InsertOutcome::AlreadyKnown);
            }
            Some(_) => InsertOutcome::Aggregated,
        };
        let entry = self.by_key.entry(key).or_insert_with(|| Aggregate {
            data: message.data.clone(),
            bits: vec![false; size],
            signature: bls::AggregateSignature::infinity(),
        });
        // `get_indexed_payload_attestation` lists a member once per position it holds, and
        // `is_valid_indexed_payload_attestation` verifies against that list: its signature
        // counts once per position too.
        for p in positions {
            entry.bits[p] = true;
            entry.signature.add(&signature);
        }
        Ok(outcome)
    }

    /// The aggregates of `slot` (every slot kept when `None`), in slot order.
    pub(crate) fn aggregates<E: EthSpec>(
        &self,
        slot: Option<Slot>,
    ) -> Result<Vec<PayloadAttestation<E>>, OpPoolError> {
        self.by_key
            .iter()
            .filter(|((s, _), _)| slot.is_none_or(|want| *s == want))
            .map(|(_, aggregate)| aggregate.to_payload_attestation())
            .collect()
    }

    /// The aggregates a block whose parent is `parent_root` at `parent_slot` packs: those of
    /// that slot voting on that block, at most `MAX_PAYLOAD_ATTESTATIONS`, the most votes
    /// first (ties by data root, the same choice on every node).
    pub(crate) fn for_block<E: EthSpec>(
        &self,
        parent_root: Root,
        parent_slot: Slot,
    ) -> Result<Vec<PayloadAttestation<E>>, OpPoolError> {
        let mut chosen: Vec<(&Root, &Aggregate)> = self
            .by_key
            .range((parent_slot, Root::ZERO)..=(parent_slot, Root::repeat_byte(0xff)))
            .filter(|(_, a)| a.data.beacon_block_root == parent_root)
            .map(|((_, root), a)| (root, a))
            .collect();
        chosen.sort_by(|(ra, a), (rb, b)| b.count().cmp(&a.count()).then(ra.cmp(rb)));
        chosen
            .into_iter()
            .take(usize::try_from(E::MAX_PAYLOAD_ATTESTATIONS).unwrap_or(usize::MAX))
            .map(|(_, a)| a.to_payload_attestation())
            .collect()
    }

    /// Drops the aggregates of slots before `oldest`.
    pub(crate) fn prune(&mut self, oldest: Slot) {
        self.by_key.retain(|(s, _), _| *s >= oldest);
    }

    /// How many (slot, data) aggregates are kept.
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    reason = "a test: a failure is the test's failure"
)]
mod tests {
    use super::*;
    use state_harness::interop_secret_key;
    use types::MinimalEthSpec;

    type E = MinimalEthSpec;

    fn data(root: u8, slot: u64, payload_present: bool) -> PayloadAttestationData {
        PayloadAttestationData {
            beacon_block_root: Root::repeat_byte(root),
            slot,
            payload_present,
            blob_data_available: payload_present,
        }
    }

    fn message(validator: u64, data: &PayloadAttestationData) -> PayloadAttestationMessage {
        let key = interop_secret_key(validator as usize);
        PayloadAttestationMessage {
            validator_index: validator,
            data: data.clone(),
            signature: BLSSignature::from(key.sign(data.tree_hash_root().as_slice()).serialize()),
        }
    }

    /// A committee of `PTC_SIZE` (16 on minimal): validators 100.., validator 7 twice.
    fn ptc() -> Vec<ValidatorIndex> {
        let mut ptc: Vec<u64> = (100..116).collect();
        ptc[3] = 7;
        ptc[9] = 7;
        ptc
    }

    #[test]
    fn messages_of_one_data_aggregate_at_their_positions_once() {
        let mut storage = PayloadAttestationStorage::default();
        let d = data(1, 5, true);
        assert_eq!(
            storage.insert::<E>(&message(7, &d), &ptc()).unwrap(),
            InsertOutcome::New
        );
        assert_eq!(
            storage.insert::<E>(&message(100, &d), &ptc()).unwrap(),
            InsertOutcome::Aggregated
        );
        assert_eq!(
            storage.insert::<E>(&message(7, &d), &ptc()).unwrap(),
            InsertOutcome::AlreadyKnown
        );
        let all = storage.aggregates::<E>(None).unwrap();
        assert_eq!(all.len(), 1);
        let set: Vec<usize> = all[0]
            .aggregation_bits
            .iter()
            .enumerate()
            .filter(|(_, b)| *b)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(set, vec![0, 3, 9], "validator 7 at both of its positions");
        // The signature is the aggregate of the signers' once per position (7 twice, 100 once),
        // as `get_indexed_payload_attestation` lists them.
        let expected = {
            let mut a = bls::AggregateSignature::infinity();
            for v in [7, 7, 100] {
                a.add(&bls::Signature::deserialize(message(v, &d).signature.as_slice()).unwrap());
            }
            a.serialize()
        };
        assert_eq!(all[0].signature.as_slice(), expected.as_slice());
    }

    #[test]
    fn a_block_packs_its_parents_votes_only_the_fullest_first() {
        let mut storage = PayloadAttestationStorage::default();
        let present = data(1, 5, true);
        let absent = data(1, 5, false);
        let other_block = data(2, 5, true);
        let older = data(1, 4, true);
        for v in [100, 101, 102] {
            storage.insert::<E>(&message(v, &absent), &ptc()).unwrap();
        }
        storage
            .insert::<E>(&message(104, &present), &ptc())
            .unwrap();
        storage
            .insert::<E>(&message(105, &other_block), &ptc())
            .unwrap();
        storage.insert::<E>(&message(106, &older), &ptc()).unwrap();
        let packed = storage.for_block::<E>(Root::repeat_byte(1), 5).unwrap();
        let datas: Vec<_> = packed.iter().map(|p| p.data.clone()).collect();
        assert_eq!(datas, vec![absent, present]);
        assert!(
            storage
                .for_block::<E>(Root::repeat_byte(3), 5)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_non_member_and_a_committee_of_the_wrong_size_are_refused() {
        let mut storage = PayloadAttestationStorage::default();
        let d = data(1, 5, true);
        assert_eq!(
            storage.insert::<E>(&message(3, &d), &ptc()),
            Err(OpPoolError::NotInPtc {
                validator: 3,
                slot: 5
            })
        );
        assert!(matches!(
            storage.insert::<E>(&message(7, &d), &ptc()[..8]),
            Err(OpPoolError::PtcLength {
                expected: 16,
                got: 8
            })
        ));
        assert_eq!(storage.len(), 0);
    }

    #[test]
    fn old_slots_are_pruned_as_newer_votes_come() {
        let mut storage = PayloadAttestationStorage::default();
        storage
            .insert::<E>(&message(100, &data(1, 5, true)), &ptc())
            .unwrap();
        storage
            .insert::<E>(&message(100, &data(1, 7, true)), &ptc())
            .unwrap();
        assert_eq!(storage.len(), 2, "slot 5 is within two slots of 7");
        storage
            .insert::<E>(&message(100, &data(1, 8, true)), &ptc())
            .unwrap();
        assert_eq!(storage.len(), 2, "slot 5 dropped");
        assert!(storage.aggregates::<E>(Some(5)).unwrap().is_empty());
    }
}
