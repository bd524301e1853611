//! Proposer and attester slashings, voluntary exits and BLS-to-execution changes: stored once per
//! validator (or per slashing), packed by running them through `state_processing` on a clone of
//! the block's state, in the block's order, so that what is packed is exactly what the block will
//! accept: an exit of a validator a slashing of the same block exits is dropped, an attester
//! slashing whose validators are already slashed is dropped, and two exits share the churn as
//! they will in the block.
//!
//! [spec]: electra/beacon-chain.md#operations

use std::collections::BTreeMap;

use state_processing::{
    CachedBeaconState, StateRef,
    common::{
        BLS_WITHDRAWAL_PREFIX, get_current_epoch, is_slashable_attestation_data,
        is_slashable_validator,
    },
    per_block::{
        VerifySignatures, process_attester_slashing, process_bls_to_execution_change,
        process_proposer_slashing, process_voluntary_exit,
    },
};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    ChainSpec, EthSpec, FAR_FUTURE_EPOCH, Root, ValidatorIndex,
    electra::{
        AttesterSlashing, ProposerSlashing, SignedBLSToExecutionChange, SignedVoluntaryExit,
    },
};

use crate::{InsertOutcome, OpPoolError};

/// An attester slashing with the validators both attestations name (sorted).
#[derive(Debug, Clone)]
struct StoredAttesterSlashing<E: EthSpec> {
    slashing: AttesterSlashing<E>,
    common_indices: Vec<ValidatorIndex>,
}

/// The operations half of the pool, behind the pool's lock.
#[derive(Debug)]
pub(crate) struct OperationStorage<E: EthSpec> {
    proposer_slashings: BTreeMap<ValidatorIndex, ProposerSlashing>,
    attester_slashings: BTreeMap<Root, StoredAttesterSlashing<E>>,
    voluntary_exits: BTreeMap<ValidatorIndex, SignedVoluntaryExit>,
    bls_to_execution_changes: BTreeMap<ValidatorIndex, SignedBLSToExecutionChange>,
}

impl<E: EthSpec> Default for OperationStorage<E> {
    fn default() -> Self {
        Self {
            proposer_slashings: BTreeMap::new(),
            attester_slashings: BTreeMap::new(),
            voluntary_exits: BTreeMap::new(),
            bls_to_execution_changes: BTreeMap::new(),
        }
    }
}

/// The slashings, exits and changes for one block, in the block's lists.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedOperations<E: EthSpec> {
    /// At most `MAX_PROPOSER_SLASHINGS`.
    pub proposer_slashings: Vec<ProposerSlashing>,
    /// At most `MAX_ATTESTER_SLASHINGS_ELECTRA`, chosen for the most newly slashed validators.
    pub attester_slashings: Vec<AttesterSlashing<E>>,
    /// At most `MAX_VOLUNTARY_EXITS`.
    pub voluntary_exits: Vec<SignedVoluntaryExit>,
    /// At most `MAX_BLS_TO_EXECUTION_CHANGES`.
    pub bls_to_execution_changes: Vec<SignedBLSToExecutionChange>,
}

/// The sorted intersection of two sorted lists.
fn intersection(a: &[ValidatorIndex], b: &[ValidatorIndex]) -> Vec<ValidatorIndex> {
    let mut b_sorted = b.to_vec();
    b_sorted.sort_unstable();
    let mut a_sorted = a.to_vec();
    a_sorted.sort_unstable();
    a_sorted.dedup();
    a_sorted
        .into_iter()
        .filter(|i| b_sorted.binary_search(i).is_ok())
        .collect()
}

impl<E: EthSpec> OperationStorage<E> {
    /// Inserts a proposer slashing (signatures verified by the caller), one per proposer.
    pub(crate) fn insert_proposer_slashing(
        &mut self,
        slashing: ProposerSlashing,
    ) -> Result<InsertOutcome, OpPoolError> {
        let h1 = &slashing.signed_header_1.message;
        let h2 = &slashing.signed_header_2.message;
        if h1.slot != h2.slot {
            return Err(OpPoolError::ProposerSlashingNotSlashable(
                "headers of different slots",
            ));
        }
        if h1.proposer_index != h2.proposer_index {
            return Err(OpPoolError::ProposerSlashingNotSlashable(
                "headers of different proposers",
            ));
        }
        if h1 == h2 {
            return Err(OpPoolError::ProposerSlashingNotSlashable("equal headers"));
        }
        if self.proposer_slashings.contains_key(&h1.proposer_index) {
            return Ok(InsertOutcome::AlreadyKnown);
        }
        self.proposer_slashings.insert(h1.proposer_index, slashing);
        Ok(InsertOutcome::New)
    }

    /// Inserts an attester slashing (signatures verified by the caller).
    pub(crate) fn insert_attester_slashing(
        &mut self,
        slashing: AttesterSlashing<E>,
    ) -> Result<InsertOutcome, OpPoolError> {
        if !is_slashable_attestation_data(
            &slashing.attestation_1.data,
            &slashing.attestation_2.data,
        ) {
            return Err(OpPoolError::AttesterSlashingNotSlashable(
                "neither a double nor a surround vote",
            ));
        }
        let common_indices = intersection(
            &slashing.attestation_1.attesting_indices,
            &slashing.attestation_2.attesting_indices,
        );
        if common_indices.is_empty() {
            return Err(OpPoolError::AttesterSlashingNotSlashable(
                "no validator signed both attestations",
            ));
        }
        let root = slashing.tree_hash_root();
        if self.attester_slashings.contains_key(&root) {
            return Ok(InsertOutcome::AlreadyKnown);
        }
        self.attester_slashings.insert(
            root,
            StoredAttesterSlashing {
                slashing,
                common_indices,
            },
        );
        Ok(InsertOutcome::New)
    }

    /// Inserts a voluntary exit (signature verified by the caller), one per validator.
    pub(crate) fn insert_voluntary_exit(&mut self, exit: SignedVoluntaryExit) -> InsertOutcome {
        let index = exit.message.validator_index;
        if self.voluntary_exits.contains_key(&index) {
            return InsertOutcome::AlreadyKnown;
        }
        self.voluntary_exits.insert(index, exit);
        InsertOutcome::New
    }

    /// Inserts a BLS-to-execution change (signature verified by the caller), one per validator.
    pub(crate) fn insert_bls_to_execution_change(
        &mut self,
        change: SignedBLSToExecutionChange,
    ) -> InsertOutcome {
        let index = change.message.validator_index;
        if self.bls_to_execution_changes.contains_key(&index) {
            return InsertOutcome::AlreadyKnown;
        }
        self.bls_to_execution_changes.insert(index, change);
        InsertOutcome::New
    }

    /// Packs the operations for a block built on `state` (a state at the block's slot): each is
    /// processed in block order on a clone of `state` (signatures are not checked again: the
    /// pool holds verified operations and their signing domains do not change along a chain),
    /// and kept only if that succeeds.
    pub(crate) fn pack(
        &self,
        state: &CachedBeaconState<E>,
        spec: &ChainSpec,
    ) -> Result<PackedOperations<E>, OpPoolError> {
        let mut scratch = state.clone();
        let (mut view, caches) = scratch.view_mut()?;
        let none = VerifySignatures::None;

        let mut proposer_slashings = Vec::new();
        for slashing in self.proposer_slashings.values() {
            if proposer_slashings.len() == E::MaxProposerSlashings::to_usize() {
                break;
            }
            if process_proposer_slashing(&mut view, caches, slashing, none, spec).is_ok() {
                proposer_slashings.push(slashing.clone());
            }
        }

        // Greedy maximum coverage of the validators newly slashed: each round takes the
        // slashing that slashes the most validators not slashed yet (in the state or by what was
        // taken before, which the scratch state records).
        let mut attester_slashings = Vec::new();
        let mut remaining: Vec<&StoredAttesterSlashing<E>> =
            self.attester_slashings.values().collect();
        while attester_slashings.len() < E::MaxAttesterSlashingsElectra::to_usize() {
            let epoch = get_current_epoch(&view.as_ref());
            let validators = view.validators.as_ref();
            let best = remaining
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let count = s
                        .common_indices
                        .iter()
                        .filter(|&&v| {
                            validators
                                .get(v as usize)
                                .is_some_and(|v| is_slashable_validator(v, epoch))
                        })
                        .count();
                    (i, count)
                })
                .max_by_key(|&(i, count)| (count, std::cmp::Reverse(i)));
            let Some((i, count)) = best else {
                break;
            };
            if count == 0 {
                break;
            }
            let stored = remaining.swap_remove(i);
            if process_attester_slashing(&mut view, caches, &stored.slashing, none, spec).is_ok() {
                attester_slashings.push(stored.slashing.clone());
            }
        }

        let mut voluntary_exits = Vec::new();
        for exit in self.voluntary_exits.values() {
            if voluntary_exits.len() == E::MaxVoluntaryExits::to_usize() {
                break;
            }
            if process_voluntary_exit(&mut view, caches, exit, none, spec).is_ok() {
                voluntary_exits.push(exit.clone());
            }
        }

        let mut bls_to_execution_changes = Vec::new();
        for change in self.bls_to_execution_changes.values() {
            if bls_to_execution_changes.len() == E::MaxBlsToExecutionChanges::to_usize() {
                break;
            }
            if process_bls_to_execution_change(&mut view, change, none, spec).is_ok() {
                bls_to_execution_changes.push(change.clone());
            }
        }

        Ok(PackedOperations {
            proposer_slashings,
            attester_slashings,
            voluntary_exits,
            bls_to_execution_changes,
        })
    }

    /// Drops what `state` (the finalized state, so that a reorg cannot bring anything back)
    /// has already applied or made impossible: slashings of validators no longer slashable,
    /// exits of validators already exiting, changes of validators without BLS credentials.
    pub(crate) fn prune(&mut self, state: &StateRef<'_, E>) {
        let epoch = get_current_epoch(state);
        let validators = state.validators;
        let slashable = |v: ValidatorIndex| {
            validators
                .get(v as usize)
                .is_some_and(|v| is_slashable_validator(v, epoch))
        };
        self.proposer_slashings.retain(|&v, _| slashable(v));
        self.attester_slashings
            .retain(|_, s| s.common_indices.iter().any(|&v| slashable(v)));
        self.voluntary_exits.retain(|&v, _| {
            validators
                .get(v as usize)
                .is_none_or(|v| v.exit_epoch == FAR_FUTURE_EPOCH)
        });
        self.bls_to_execution_changes.retain(|&v, _| {
            validators
                .get(v as usize)
                .is_none_or(|v| v.withdrawal_credentials[0] == BLS_WITHDRAWAL_PREFIX)
        });
    }

    /// `(proposer slashings, attester slashings, exits, changes)` held.
    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        (
            self.proposer_slashings.len(),
            self.attester_slashings.len(),
            self.voluntary_exits.len(),
            self.bls_to_execution_changes.len(),
        )
    }

    /// Every stored operation, each list in its key's order (validator index; attester slashings
    /// by root).
    pub(crate) fn all(&self) -> PackedOperations<E> {
        PackedOperations {
            proposer_slashings: self.proposer_slashings.values().cloned().collect(),
            attester_slashings: self
                .attester_slashings
                .values()
                .map(|s| s.slashing.clone())
                .collect(),
            voluntary_exits: self.voluntary_exits.values().cloned().collect(),
            bls_to_execution_changes: self.bls_to_execution_changes.values().cloned().collect(),
        }
    }
}
