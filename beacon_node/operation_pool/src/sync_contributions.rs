//! Sync committee contributions waiting for the next block, and the block's `SyncAggregate`.
//!
//! A block at slot `s` carries the sync committee's signature over the block root of slot
//! `s - 1`. Contributions are kept per (slot, block root) and subcommittee: the one with the
//! most bits, or the union of two that are disjoint. The aggregate sets each subcommittee's bits
//! at its offset in the committee and adds the signatures.
//!
//! [spec]: altair/validator.md#sync-committee-contributions, altair/beacon-chain.md#syncaggregate

use bls::{AggregateSignature, Signature};
use rustc_hash::FxHashMap;
use ssz_types::BitVector;
use state_processing::{StateRef, common::get_block_root_at_slot};
use typenum::Unsigned;
use types::{
    BLSSignature, EthSpec, Root, Slot,
    altair::{SyncAggregate, SyncCommitteeContribution},
};

use crate::{InsertOutcome, OpPoolError, bits::Bits};

/// `SYNC_COMMITTEE_SUBNET_COUNT` as the preset implies it.
fn subnet_count<E: EthSpec>() -> usize {
    E::SyncCommitteeSize::to_usize() / E::SyncSubcommitteeSize::to_usize()
}

#[derive(Debug, Clone)]
struct StoredContribution {
    bits: Bits,
    signature: Signature,
}

/// The contribution half of the pool, behind the pool's lock.
#[derive(Debug, Default)]
pub(crate) struct SyncContributionStorage {
    /// Per (slot, block root): one contribution per subcommittee.
    by_block: FxHashMap<(Slot, Root), Vec<Option<StoredContribution>>>,
}

impl SyncContributionStorage {
    /// Inserts a contribution verified by the caller.
    pub(crate) fn insert<E: EthSpec>(
        &mut self,
        contribution: &SyncCommitteeContribution<E>,
    ) -> Result<InsertOutcome, OpPoolError> {
        let count = subnet_count::<E>();
        let index = contribution.subcommittee_index;
        if index >= count as u64 {
            return Err(OpPoolError::SubcommitteeIndexOutOfRange(index));
        }
        let bits = Bits::from_ssz_bytes(
            contribution.aggregation_bits.as_slice(),
            E::SyncSubcommitteeSize::to_usize(),
        );
        if bits.count_ones() == 0 {
            return Err(OpPoolError::NoAttesters);
        }
        let signature = Signature::deserialize(contribution.signature.as_slice())?;
        let slots = self
            .by_block
            .entry((contribution.slot, contribution.beacon_block_root))
            .or_insert_with(|| vec![None; count]);
        let new = StoredContribution { bits, signature };
        let slot = &mut slots[index as usize];
        match slot {
            None => {
                *slot = Some(new);
                Ok(InsertOutcome::New)
            }
            Some(stored) if new.bits.is_subset_of(&stored.bits) => Ok(InsertOutcome::AlreadyKnown),
            Some(stored) if new.bits.is_disjoint(&stored.bits) => {
                stored.bits.union_with(&new.bits);
                let mut sum = AggregateSignature::infinity();
                sum.add(&stored.signature);
                sum.add(&new.signature);
                stored.signature = sum.to_signature();
                Ok(InsertOutcome::Aggregated)
            }
            Some(stored) if new.bits.count_ones() > stored.bits.count_ones() => {
                *stored = new;
                Ok(InsertOutcome::New)
            }
            Some(_) => Ok(InsertOutcome::AlreadyKnown),
        }
    }

    /// The best `SyncAggregate` for a block built on `state` (a state at the block's slot):
    /// the contributions over the block root of the slot before. Empty (no bits, the point at
    /// infinity) when there are none.
    pub(crate) fn get_sync_aggregate<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
    ) -> Result<SyncAggregate<E>, OpPoolError> {
        let mut sync_committee_bits = BitVector::<E::SyncCommitteeSize>::new();
        let mut signature = AggregateSignature::infinity();
        let slot = *state.slot;
        if slot > 0 {
            let previous = slot - 1;
            let root = get_block_root_at_slot(state, previous)?;
            if let Some(subcommittees) = self.by_block.get(&(previous, root)) {
                let size = E::SyncSubcommitteeSize::to_usize();
                for (index, contribution) in subcommittees.iter().enumerate() {
                    let Some(contribution) = contribution else {
                        continue;
                    };
                    for i in contribution.bits.iter_ones() {
                        sync_committee_bits
                            .set(index * size + i, true)
                            .map_err(|_| OpPoolError::ListFull("sync_committee_bits"))?;
                    }
                    signature.add(&contribution.signature);
                }
            }
        }
        Ok(SyncAggregate {
            sync_committee_bits,
            sync_committee_signature: BLSSignature::from(signature.serialize()),
        })
    }

    /// Drops contributions of slots before `min_slot`.
    pub(crate) fn prune(&mut self, min_slot: Slot) {
        self.by_block.retain(|(slot, _), _| *slot >= min_slot);
    }

    /// The number of stored contributions.
    pub(crate) fn len(&self) -> usize {
        self.by_block
            .values()
            .map(|s| s.iter().flatten().count())
            .sum()
    }
}
