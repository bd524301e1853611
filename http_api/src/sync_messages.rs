//! The sync committee messages this node verified, aggregated per (slot, block root,
//! subcommittee) into the contribution `sync_committee_contribution` serves.
//!
//! [spec]: altair/validator.md#sync-committee-contributions

use std::collections::HashMap;

use parking_lot::Mutex;
use ssz_types::BitVector;
use ssz_types::typenum::Unsigned;
use types::altair::SyncCommitteeContribution;
use types::{BLSSignature, EthSpec, Root, Slot};

/// Slots of messages kept behind the newest (a contribution is made in the message's slot).
const SLOTS_KEPT: u64 = 2;

#[derive(Clone)]
struct Aggregate {
    bits: Vec<bool>,
    signature: bls::AggregateSignature,
}

/// Verified sync committee messages, naively aggregated.
#[derive(Default)]
pub(crate) struct SyncMessages {
    by_key: Mutex<HashMap<(Slot, Root, u64), Aggregate>>,
}

impl std::fmt::Debug for SyncMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncMessages")
            .field("aggregates", &self.by_key.lock().len())
            .finish()
    }
}

impl SyncMessages {
    /// Adds a verified message's `signature` at `position` of `subcommittee` (a bit set twice
    /// is not added twice).
    pub(crate) fn insert<E: EthSpec>(
        &self,
        slot: Slot,
        root: Root,
        subcommittee: u64,
        position: usize,
        signature: &BLSSignature,
    ) {
        let size = E::SyncSubcommitteeSize::to_usize();
        let Ok(signature) = bls::Signature::deserialize(signature.as_slice()) else {
            return;
        };
        if position >= size {
            return;
        }
        let mut map = self.by_key.lock();
        map.retain(|(s, _, _), _| *s + SLOTS_KEPT >= slot);
        let entry = map
            .entry((slot, root, subcommittee))
            .or_insert_with(|| Aggregate {
                bits: vec![false; size],
                signature: bls::AggregateSignature::infinity(),
            });
        if !entry.bits[position] {
            entry.bits[position] = true;
            entry.signature.add(&signature);
        }
    }

    /// The contribution of `subcommittee` for `root` at `slot`, if any message came.
    pub(crate) fn contribution<E: EthSpec>(
        &self,
        slot: Slot,
        root: Root,
        subcommittee: u64,
    ) -> Option<SyncCommitteeContribution<E>> {
        let aggregate = self.by_key.lock().get(&(slot, root, subcommittee))?.clone();
        let mut bits = BitVector::<E::SyncSubcommitteeSize>::new();
        for (i, set) in aggregate.bits.iter().enumerate() {
            if *set {
                bits.set(i, true).ok()?;
            }
        }
        Some(SyncCommitteeContribution {
            slot,
            beacon_block_root: root,
            subcommittee_index: subcommittee,
            aggregation_bits: bits,
            signature: BLSSignature::from(aggregate.signature.serialize()),
        })
    }
}
