//! The operation pool: what the node has seen and may include in a block it produces —
//! attestations (aggregated and single), sync committee contributions, proposer and attester
//! slashings, voluntary exits, BLS-to-execution changes and (Gloas) payload attestations — and
//! the packing of a block's operations from them.
//!
//! - The chain verifies operations (gossip or API) and inserts them; the pool checks only what
//!   it needs to store them (structure, committee lengths) and trusts the signatures.
//! - [`OperationPool::get_block_operations`] packs everything for a block built on a state at
//!   the block's slot, re-validated against that state: attestations by a greedy maximum
//!   coverage of the rewards they newly earn (the crate's README and `attestation_packing.rs`
//!   say how), the best `SyncAggregate`, and the other operations run through
//!   `state_processing` on a clone of the state in block order.
//! - Pruning: [`OperationPool::prune_on_head`] (attestations and contributions too old for any
//!   block) and [`OperationPool::prune_on_finality`] (operations the finalized state applied).
//!
//! The pool is shared: every method takes `&self`, each kind of operation behind its own
//! `parking_lot::RwLock`, so inserts of one kind do not wait for packing of another, and packing
//! only reads.
//!
//! [spec]: electra/validator.md#constructing-the-beaconblockbody

mod attestation_packing;
mod attestation_storage;
mod bits;
mod error;
mod operations;
mod payload_attestations;
mod sync_contributions;
#[cfg(test)]
mod tests;

pub use attestation_storage::{
    InsertOutcome, MAX_AGGREGATES_PER_COMMITTEE, compute_on_chain_aggregate,
};
pub use error::OpPoolError;
pub use operations::PackedOperations;
pub use payload_attestations::PAYLOAD_ATTESTATION_SLOTS_KEPT;

use parking_lot::RwLock;
use state_processing::{
    CachedBeaconState, CommitteeCache, StateRef,
    common::{get_current_epoch, get_previous_epoch},
};
use types::{
    ChainSpec, EthSpec, Root, Slot, ValidatorIndex,
    electra::{
        Attestation, AttesterSlashing, ProposerSlashing, SignedBLSToExecutionChange,
        SignedVoluntaryExit, SingleAttestation, SyncAggregate, SyncCommitteeContribution,
    },
    gloas::{PayloadAttestation, PayloadAttestationMessage},
};

use attestation_storage::AttestationStorage;
use operations::OperationStorage;
use payload_attestations::PayloadAttestationStorage;
use sync_contributions::SyncContributionStorage;

/// Everything the pool packs into one block body.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockOperations<E: EthSpec> {
    /// At most `MAX_ATTESTATIONS_ELECTRA` on-chain aggregates.
    pub attestations: Vec<Attestation<E>>,
    /// The sync committee's aggregate over the previous slot's block root.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slashings, exits and BLS-to-execution changes.
    pub operations: PackedOperations<E>,
}

/// How many operations of each kind the pool holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolCounts {
    /// Distinct `AttestationData`.
    pub attestation_data: usize,
    /// Network aggregates (one committee each), over every data.
    pub aggregates: usize,
    /// Sync committee contributions.
    pub sync_contributions: usize,
    /// Proposer slashings.
    pub proposer_slashings: usize,
    /// Attester slashings.
    pub attester_slashings: usize,
    /// Voluntary exits.
    pub voluntary_exits: usize,
    /// BLS-to-execution changes.
    pub bls_to_execution_changes: usize,
    /// Gloas payload attestation aggregates (one per slot and data).
    pub payload_attestations: usize,
}

/// The operation pool, shared by the chain's workers (`&self` methods, internal locks).
#[derive(Debug)]
pub struct OperationPool<E: EthSpec> {
    attestations: RwLock<AttestationStorage>,
    sync_contributions: RwLock<SyncContributionStorage>,
    operations: RwLock<OperationStorage<E>>,
    payload_attestations: RwLock<PayloadAttestationStorage>,
}

impl<E: EthSpec> Default for OperationPool<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: EthSpec> OperationPool<E> {
    /// An empty pool.
    pub fn new() -> Self {
        Self {
            attestations: RwLock::new(AttestationStorage::default()),
            sync_contributions: RwLock::new(SyncContributionStorage::default()),
            operations: RwLock::new(OperationStorage::default()),
            payload_attestations: RwLock::new(PayloadAttestationStorage::default()),
        }
    }

    /// Inserts a verified network aggregate (exactly one committee bit), given the committees of
    /// its target epoch it was verified against.
    pub fn insert_attestation(
        &self,
        attestation: &Attestation<E>,
        committees: &CommitteeCache,
    ) -> Result<InsertOutcome, OpPoolError> {
        self.attestations
            .write()
            .insert_aggregate(attestation, committees)
    }

    /// Inserts a verified `SingleAttestation`, aggregated naively with the others of its data and
    /// committee.
    pub fn insert_single_attestation(
        &self,
        attestation: &SingleAttestation,
        committees: &CommitteeCache,
    ) -> Result<InsertOutcome, OpPoolError> {
        self.attestations
            .write()
            .insert_single::<E>(attestation, committees)
    }

    /// Inserts a verified sync committee contribution.
    pub fn insert_sync_contribution(
        &self,
        contribution: &SyncCommitteeContribution<E>,
    ) -> Result<InsertOutcome, OpPoolError> {
        self.sync_contributions.write().insert(contribution)
    }

    /// Inserts a verified proposer slashing.
    pub fn insert_proposer_slashing(
        &self,
        slashing: ProposerSlashing,
    ) -> Result<InsertOutcome, OpPoolError> {
        self.operations.write().insert_proposer_slashing(slashing)
    }

    /// Inserts a verified attester slashing.
    pub fn insert_attester_slashing(
        &self,
        slashing: AttesterSlashing<E>,
    ) -> Result<InsertOutcome, OpPoolError> {
        self.operations.write().insert_attester_slashing(slashing)
    }

    /// Inserts a verified network aggregate in Gloas's container: kept in Electra's (the same
    /// fields; EIP-7688 changed only how the bits are merkleized), which Gloas block production
    /// turns back into Gloas's. Fails only for more bits than Electra's list holds, which gossip
    /// validation (bits of the committee's length) rules out.
    pub fn insert_gloas_attestation(
        &self,
        attestation: &types::gloas::Attestation<E>,
        committees: &CommitteeCache,
    ) -> Result<InsertOutcome, OpPoolError> {
        let bits = &attestation.aggregation_bits;
        let too_long = |_| OpPoolError::ListFull("aggregation_bits");
        let mut aggregation_bits =
            ssz_types::BitList::with_capacity(bits.len()).map_err(too_long)?;
        for i in bits.set_indices() {
            aggregation_bits.set(i, true).map_err(too_long)?;
        }
        self.insert_attestation(
            &Attestation {
                aggregation_bits,
                data: attestation.data.clone(),
                signature: attestation.signature,
                committee_bits: attestation.committee_bits.clone(),
            },
            committees,
        )
    }

    /// Inserts a verified attester slashing in Gloas's container: kept in Electra's (the same
    /// fields; EIP-7688 changed only how its index lists are merkleized), which Gloas block
    /// production turns back into Gloas's. Fails only for more indices than Electra's list
    /// holds (more than a slot's committees: not slashable evidence gossip accepts).
    pub fn insert_gloas_attester_slashing(
        &self,
        slashing: &types::gloas::AttesterSlashing,
    ) -> Result<InsertOutcome, OpPoolError> {
        let electra = |a: &types::gloas::IndexedAttestation| {
            Ok::<_, OpPoolError>(types::electra::IndexedAttestation {
                attesting_indices: ssz_types::VariableList::new(a.attesting_indices.to_vec())
                    .map_err(|_| OpPoolError::ListFull("attesting_indices"))?,
                data: a.data.clone(),
                signature: a.signature,
            })
        };
        self.insert_attester_slashing(AttesterSlashing {
            attestation_1: electra(&slashing.attestation_1)?,
            attestation_2: electra(&slashing.attestation_2)?,
        })
    }

    /// Inserts a verified voluntary exit.
    pub fn insert_voluntary_exit(&self, exit: SignedVoluntaryExit) -> InsertOutcome {
        self.operations.write().insert_voluntary_exit(exit)
    }

    /// Inserts a verified BLS-to-execution change.
    pub fn insert_bls_to_execution_change(
        &self,
        change: SignedBLSToExecutionChange,
    ) -> InsertOutcome {
        self.operations
            .write()
            .insert_bls_to_execution_change(change)
    }

    /// Inserts a verified Gloas `PayloadAttestationMessage`, given the payload timeliness
    /// committee of its block's slot (`get_ptc`, in committee order) it was verified against:
    /// aggregated with the others of its data.
    pub fn insert_payload_attestation_message(
        &self,
        message: &PayloadAttestationMessage,
        ptc: &[ValidatorIndex],
    ) -> Result<InsertOutcome, OpPoolError> {
        self.payload_attestations.write().insert::<E>(message, ptc)
    }

    /// The payload attestations for a Gloas block whose parent is `parent_root` at
    /// `parent_slot`: the aggregates voting on that block in that slot, at most
    /// `MAX_PAYLOAD_ATTESTATIONS`. The caller packs them only when the parent's slot is the one
    /// before the block's (`process_payload_attestation` refuses any other).
    pub fn get_payload_attestations(
        &self,
        parent_root: Root,
        parent_slot: Slot,
    ) -> Result<Vec<PayloadAttestation<E>>, OpPoolError> {
        self.payload_attestations
            .read()
            .for_block::<E>(parent_root, parent_slot)
    }

    /// The stored payload attestation aggregates, of `slot` only when given (the Beacon API's
    /// pool listing).
    pub fn payload_attestations(
        &self,
        slot: Option<Slot>,
    ) -> Result<Vec<PayloadAttestation<E>>, OpPoolError> {
        self.payload_attestations.read().aggregates::<E>(slot)
    }

    /// The attestations for a block built on `state` (at the block's slot): at most
    /// `MAX_ATTESTATIONS_ELECTRA` on-chain aggregates covering the most reward not yet earned.
    /// The state's caches are filled (committees, effective balances) for the block's processing
    /// to reuse.
    pub fn get_attestations(
        &self,
        state: &mut CachedBeaconState<E>,
    ) -> Result<Vec<Attestation<E>>, OpPoolError> {
        let CachedBeaconState { state, caches } = state;
        let view = StateRef::new(state)?;
        let storage = self.attestations.read();
        attestation_packing::get_attestations_for_block(&storage, &view, caches)
    }

    /// The best `SyncAggregate` for a block built on `state` (at the block's slot).
    pub fn get_sync_aggregate(
        &self,
        state: &CachedBeaconState<E>,
    ) -> Result<SyncAggregate<E>, OpPoolError> {
        let view = state.view()?;
        self.sync_contributions.read().get_sync_aggregate(&view)
    }

    /// The slashings, exits and BLS-to-execution changes for a block built on `state` (at the
    /// block's slot), each valid on it in block order.
    pub fn get_slashings_exits_and_changes(
        &self,
        state: &CachedBeaconState<E>,
        spec: &ChainSpec,
    ) -> Result<PackedOperations<E>, OpPoolError> {
        self.operations.read().pack(state, spec)
    }

    /// Everything for a block built on `state` (at the block's slot).
    pub fn get_block_operations(
        &self,
        state: &mut CachedBeaconState<E>,
        spec: &ChainSpec,
    ) -> Result<BlockOperations<E>, OpPoolError> {
        let attestations = self.get_attestations(state)?;
        Ok(BlockOperations {
            attestations,
            sync_aggregate: self.get_sync_aggregate(state)?,
            operations: self.get_slashings_exits_and_changes(state, spec)?,
        })
    }

    /// Every stored aggregate in its network form (one committee each), e.g. for the Beacon
    /// API's attestation pool listing.
    pub fn attestations(&self) -> Result<Vec<Attestation<E>>, OpPoolError> {
        self.attestations.read().network_aggregates::<E>()
    }

    /// Every stored slashing, exit and BLS-to-execution change, unfiltered (the Beacon API's pool
    /// listings): proposer slashings, exits and changes by validator index, attester slashings by
    /// their root. What a block takes is [`Self::get_slashings_exits_and_changes`].
    pub fn operations(&self) -> PackedOperations<E> {
        self.operations.read().all()
    }

    /// Drops what no block after `head` can include: attestations whose target is before the
    /// head's previous epoch, and sync contributions of slots before the head's.
    pub fn prune_on_head(&self, head: &CachedBeaconState<E>) -> Result<(), OpPoolError> {
        let view = head.view()?;
        let previous = get_previous_epoch(&view);
        // The head's previous epoch: a block at a later slot of the head's epoch still takes
        // those; a block in the next epoch takes only the head's current epoch and later.
        self.attestations.write().prune(previous);
        self.sync_contributions.write().prune(*view.slot);
        self.payload_attestations
            .write()
            .prune(view.slot.saturating_sub(PAYLOAD_ATTESTATION_SLOTS_KEPT));
        Ok(())
    }

    /// Drops operations the finalized state has applied or made invalid for good (slashed or
    /// exiting validators, changed credentials), and attestations older than its epoch.
    pub fn prune_on_finality(&self, finalized: &CachedBeaconState<E>) -> Result<(), OpPoolError> {
        let view = finalized.view()?;
        self.operations.write().prune(&view);
        self.attestations.write().prune(get_current_epoch(&view));
        Ok(())
    }

    /// How many operations of each kind the pool holds.
    pub fn counts(&self) -> PoolCounts {
        let (attestation_data, aggregates) = {
            let a = self.attestations.read();
            (a.by_data.len(), a.num_aggregates())
        };
        let (proposer_slashings, attester_slashings, voluntary_exits, bls_to_execution_changes) =
            self.operations.read().counts();
        PoolCounts {
            attestation_data,
            aggregates,
            sync_contributions: self.sync_contributions.read().len(),
            proposer_slashings,
            attester_slashings,
            voluntary_exits,
            bls_to_execution_changes,
            payload_attestations: self.payload_attestations.read().len(),
        }
    }
}
