//! Attestations waiting for a block, stored per `AttestationData` and, within it, per committee:
//! the network form (one committee per aggregate) is the unit the pool aggregates and packs, and
//! on-chain aggregates across committees are made only when a block is packed.
//!
//! Naive aggregation: a `SingleAttestation` is a one-bit aggregate, so singles and aggregates
//! take the same path. A new aggregate that some stored one already covers is dropped; stored
//! aggregates the new one covers are removed; a new aggregate disjoint from a stored one is merged
//! into it (bits united, signatures added), the largest first. So per committee the pool holds a
//! few maximal, pairwise overlapping aggregates, bounded by [`MAX_AGGREGATES_PER_COMMITTEE`].
//!
//! [spec]: electra/validator.md#attestation-aggregation

use std::collections::BTreeMap;

use bls::{AggregateSignature, Signature};
use rustc_hash::FxHashMap;
use ssz_types::{BitList, BitVector};
use state_processing::{CommitteeCache, common::compute_epoch_at_slot};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    BLSSignature, CommitteeIndex, Epoch, EthSpec, Root,
    electra::{Attestation, AttestationData, SingleAttestation},
};

use crate::{OpPoolError, bits::Bits};

/// Overlapping aggregates kept per committee and data; when full, a new aggregate replaces the one
/// with the fewest bits if it has more.
/// Gossip brings ~16 aggregators per committee, most of whose aggregates are subsets of one
/// another and never stored.
pub const MAX_AGGREGATES_PER_COMMITTEE: usize = 16;

/// What inserting an attestation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    /// Stored as a new aggregate.
    New,
    /// Merged into a stored aggregate it was disjoint from.
    Aggregated,
    /// Every bit was already covered by a stored aggregate (for a sync contribution: or the
    /// stored one has more bits): nothing changed.
    AlreadyKnown,
    /// The committee already holds [`MAX_AGGREGATES_PER_COMMITTEE`] aggregates, none smaller
    /// than this one and none disjoint from it: not stored.
    Full,
}

/// One committee's aggregate: its bits over the committee and its signature, decompressed once.
#[derive(Debug, Clone)]
pub(crate) struct CompactAggregate {
    pub(crate) bits: Bits,
    pub(crate) signature: Signature,
}

impl CompactAggregate {
    fn merge(&mut self, other: &CompactAggregate) {
        self.bits.union_with(&other.bits);
        let mut sum = AggregateSignature::infinity();
        sum.add(&self.signature);
        sum.add(&other.signature);
        self.signature = sum.to_signature();
    }
}

/// Everything stored for one `AttestationData`.
#[derive(Debug, Clone)]
pub(crate) struct DataEntry {
    pub(crate) data: AttestationData,
    /// The attester seed of the shuffling the committees were read from: packing uses the
    /// entry only on a state with the same shuffling (otherwise the signatures are over other
    /// committees).
    pub(crate) shuffling_seed: Root,
    pub(crate) committees: BTreeMap<CommitteeIndex, Vec<CompactAggregate>>,
}

/// The attestation half of the pool, behind the pool's lock.
#[derive(Debug, Default)]
pub(crate) struct AttestationStorage {
    pub(crate) by_data: FxHashMap<Root, DataEntry>,
}

fn decode_signature(signature: &BLSSignature) -> Result<Signature, OpPoolError> {
    Ok(Signature::deserialize(signature.as_slice())?)
}

fn check_data<E: EthSpec>(
    data: &AttestationData,
    committees: &CommitteeCache,
) -> Result<(), OpPoolError> {
    // Gossip and the API check the index against the fork of the vote's slot; the pool keeps
    // both of Gloas's payload signals apart (they are different data) and packing checks each
    // against the block's state.
    if data.index > 1 {
        return Err(OpPoolError::DataIndexOutOfRange(data.index));
    }
    let epoch = compute_epoch_at_slot::<E>(data.slot);
    if data.target.epoch != epoch {
        return Err(OpPoolError::TargetEpochSlotMismatch {
            slot: data.slot,
            target: data.target.epoch,
        });
    }
    if committees.epoch() != epoch {
        return Err(OpPoolError::CommitteesEpochMismatch {
            committees: committees.epoch(),
            target: epoch,
        });
    }
    Ok(())
}

impl AttestationStorage {
    /// Inserts a network aggregate (one committee), already verified by the caller against
    /// `committees` (the committees of its target epoch on its chain).
    pub(crate) fn insert_aggregate<E: EthSpec>(
        &mut self,
        attestation: &Attestation<E>,
        committees: &CommitteeCache,
    ) -> Result<InsertOutcome, OpPoolError> {
        check_data::<E>(&attestation.data, committees)?;
        let committee_indices: Vec<usize> = attestation
            .committee_bits
            .iter()
            .enumerate()
            .filter(|(_, bit)| *bit)
            .map(|(i, _)| i)
            .collect();
        let [committee_index] = committee_indices[..] else {
            return Err(OpPoolError::NotOneCommittee {
                count: committee_indices.len(),
            });
        };
        let committee_index = committee_index as CommitteeIndex;
        let committee = committees.get_beacon_committee(attestation.data.slot, committee_index)?;
        let got = attestation.aggregation_bits.len();
        if got != committee.len() {
            return Err(OpPoolError::AggregationBitsLength {
                committee_index,
                expected: committee.len(),
                got,
            });
        }
        let bits = Bits::from_ssz_bytes(attestation.aggregation_bits.as_slice(), got);
        if bits.count_ones() == 0 {
            return Err(OpPoolError::NoAttesters);
        }
        let aggregate = CompactAggregate {
            bits,
            signature: decode_signature(&attestation.signature)?,
        };
        self.insert_compact(
            &attestation.data,
            committee_index,
            committees.seed(),
            aggregate,
        )
    }

    /// Inserts a verified `SingleAttestation` as a one-bit aggregate of its committee.
    pub(crate) fn insert_single<E: EthSpec>(
        &mut self,
        single: &SingleAttestation,
        committees: &CommitteeCache,
    ) -> Result<InsertOutcome, OpPoolError> {
        check_data::<E>(&single.data, committees)?;
        let committee =
            committees.get_beacon_committee(single.data.slot, single.committee_index)?;
        let position = committee
            .iter()
            .position(|&v| v == single.attester_index)
            .ok_or(OpPoolError::AttesterNotInCommittee {
                attester_index: single.attester_index,
                committee_index: single.committee_index,
            })?;
        let mut bits = Bits::new(committee.len());
        bits.set(position);
        let aggregate = CompactAggregate {
            bits,
            signature: decode_signature(&single.signature)?,
        };
        self.insert_compact(
            &single.data,
            single.committee_index,
            committees.seed(),
            aggregate,
        )
    }

    fn insert_compact(
        &mut self,
        data: &AttestationData,
        committee_index: CommitteeIndex,
        shuffling_seed: Root,
        aggregate: CompactAggregate,
    ) -> Result<InsertOutcome, OpPoolError> {
        let data_root = data.tree_hash_root();
        let entry = self.by_data.entry(data_root).or_insert_with(|| DataEntry {
            data: data.clone(),
            shuffling_seed,
            committees: BTreeMap::new(),
        });
        if entry.shuffling_seed != shuffling_seed {
            return Err(OpPoolError::ShufflingMismatch { data_root });
        }
        let stored = entry.committees.entry(committee_index).or_default();
        if let Some(first) = stored.first()
            && first.bits.len() != aggregate.bits.len()
        {
            return Err(OpPoolError::AggregationBitsLength {
                committee_index,
                expected: first.bits.len(),
                got: aggregate.bits.len(),
            });
        }
        if stored.iter().any(|s| aggregate.bits.is_subset_of(&s.bits)) {
            return Ok(InsertOutcome::AlreadyKnown);
        }
        stored.retain(|s| !s.bits.is_subset_of(&aggregate.bits));
        if stored.len() >= MAX_AGGREGATES_PER_COMMITTEE
            && !stored.iter().any(|s| s.bits.is_disjoint(&aggregate.bits))
        {
            // Full: the new aggregate takes the place of the smallest, if it is larger.
            let new_count = aggregate.bits.count_ones();
            let smallest = stored
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.bits.count_ones())
                .map(|(i, s)| (i, s.bits.count_ones()));
            return match smallest {
                Some((i, count)) if count < new_count => {
                    stored[i] = aggregate;
                    Ok(InsertOutcome::New)
                }
                _ => Ok(InsertOutcome::Full),
            };
        }
        // Merge into the largest stored aggregate it is disjoint from.
        let target = stored
            .iter_mut()
            .filter(|s| s.bits.is_disjoint(&aggregate.bits))
            .max_by_key(|s| s.bits.count_ones());
        let outcome = match target {
            Some(target) => {
                target.merge(&aggregate);
                InsertOutcome::Aggregated
            }
            None => {
                stored.push(aggregate);
                InsertOutcome::New
            }
        };
        if outcome == InsertOutcome::Aggregated {
            // The merged aggregate may now cover others.
            let mut i = 0;
            while i < stored.len() {
                let covered = stored
                    .iter()
                    .enumerate()
                    .any(|(j, s)| j != i && stored[i].bits.is_subset_of(&s.bits));
                if covered {
                    stored.swap_remove(i);
                } else {
                    i += 1;
                }
            }
        }
        Ok(outcome)
    }

    /// Drops every attestation whose target epoch is before `min_target_epoch`.
    pub(crate) fn prune(&mut self, min_target_epoch: Epoch) {
        self.by_data
            .retain(|_, entry| entry.data.target.epoch >= min_target_epoch);
    }

    /// The number of stored aggregates.
    pub(crate) fn num_aggregates(&self) -> usize {
        self.by_data
            .values()
            .flat_map(|e| e.committees.values())
            .map(Vec::len)
            .sum()
    }

    /// Every stored aggregate as a network attestation (one committee each).
    pub(crate) fn network_aggregates<E: EthSpec>(
        &self,
    ) -> Result<Vec<Attestation<E>>, OpPoolError> {
        let mut out = Vec::with_capacity(self.num_aggregates());
        for entry in self.by_data.values() {
            for (&committee_index, aggregates) in &entry.committees {
                for aggregate in aggregates {
                    out.push(network_aggregate::<E>(
                        &entry.data,
                        committee_index,
                        aggregate,
                    )?);
                }
            }
        }
        Ok(out)
    }
}

/// One committee's aggregate in its network form.
fn network_aggregate<E: EthSpec>(
    data: &AttestationData,
    committee_index: CommitteeIndex,
    aggregate: &CompactAggregate,
) -> Result<Attestation<E>, OpPoolError> {
    let mut committee_bits = BitVector::<E::MaxCommitteesPerSlot>::new();
    committee_bits
        .set(committee_index as usize, true)
        .map_err(|_| OpPoolError::ListFull("committee_bits"))?;
    let mut aggregation_bits =
        BitList::<E::MaxValidatorsPerSlot>::with_capacity(aggregate.bits.len())
            .map_err(|_| OpPoolError::ListFull("aggregation_bits"))?;
    for i in aggregate.bits.iter_ones() {
        aggregation_bits
            .set(i, true)
            .map_err(|_| OpPoolError::ListFull("aggregation_bits"))?;
    }
    Ok(Attestation {
        aggregation_bits,
        data: data.clone(),
        signature: BLSSignature::from(aggregate.signature.serialize()),
        committee_bits,
    })
}

/// `compute_on_chain_aggregate(network_aggregates)`: one on-chain attestation from network
/// aggregates of the same data, one committee each: committee bits united, aggregation bits
/// concatenated in committee order, signatures added.
///
/// Fails when the aggregates do not share one data, when one does not name exactly one
/// committee, when two name the same committee, or when a signature does not decode.
///
/// [spec]: electra/validator.md#attestations
pub fn compute_on_chain_aggregate<E: EthSpec>(
    network_aggregates: &[Attestation<E>],
) -> Result<Attestation<E>, OpPoolError> {
    let first = network_aggregates.first().ok_or(OpPoolError::NoAttesters)?;
    let mut parts: Vec<(CommitteeIndex, Bits, Signature)> =
        Vec::with_capacity(network_aggregates.len());
    for a in network_aggregates {
        if a.data != first.data {
            return Err(OpPoolError::DataMismatch);
        }
        let indices: Vec<usize> = a
            .committee_bits
            .iter()
            .enumerate()
            .filter(|(_, b)| *b)
            .map(|(i, _)| i)
            .collect();
        let [index] = indices[..] else {
            return Err(OpPoolError::NotOneCommittee {
                count: indices.len(),
            });
        };
        parts.push((
            index as CommitteeIndex,
            Bits::from_ssz_bytes(a.aggregation_bits.as_slice(), a.aggregation_bits.len()),
            decode_signature(&a.signature)?,
        ));
    }
    parts.sort_by_key(|(index, _, _)| *index);
    if let Some(w) = parts.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(OpPoolError::DuplicateCommittee(w[0].0));
    }
    on_chain_aggregate::<E>(
        &first.data,
        parts.iter().map(|(i, bits, sig)| (*i, bits, sig)),
    )
}

/// The body of [`compute_on_chain_aggregate`] over the pool's compact aggregates, given in
/// ascending committee order.
pub(crate) fn on_chain_aggregate<'a, E: EthSpec>(
    data: &AttestationData,
    parts: impl Iterator<Item = (CommitteeIndex, &'a Bits, &'a Signature)> + Clone,
) -> Result<Attestation<E>, OpPoolError> {
    let total: usize = parts.clone().map(|(_, bits, _)| bits.len()).sum();
    if total > E::MaxValidatorsPerSlot::to_usize() {
        return Err(OpPoolError::ListFull("aggregation_bits"));
    }
    let mut aggregation_bits = BitList::<E::MaxValidatorsPerSlot>::with_capacity(total)
        .map_err(|_| OpPoolError::ListFull("aggregation_bits"))?;
    let mut committee_bits = BitVector::<E::MaxCommitteesPerSlot>::new();
    let mut signature = AggregateSignature::infinity();
    let mut offset = 0;
    for (committee_index, bits, sig) in parts {
        committee_bits
            .set(committee_index as usize, true)
            .map_err(|_| OpPoolError::ListFull("committee_bits"))?;
        for i in bits.iter_ones() {
            aggregation_bits
                .set(offset + i, true)
                .map_err(|_| OpPoolError::ListFull("aggregation_bits"))?;
        }
        offset += bits.len();
        signature.add(sig);
    }
    Ok(Attestation {
        aggregation_bits,
        data: data.clone(),
        signature: BLSSignature::from(signature.serialize()),
        committee_bits,
    })
}
