//! [`GloasSpecStore`]: the spec's Gloas `Store` with its states (`store.block_states`,
//! `store.checkpoint_states`), composed the way the spec's handlers compose them: each handler
//! runs the state-reading part (the state transition, `compute_pulled_up_tip`, the PTC and
//! committees of a slot, attesting indices, signatures, the envelope's checks) and hands the
//! results to the state-free [`GloasForkChoice`]. The spec tests run on it; the node's chain
//! keeps its states itself and feeds [`GloasForkChoice`] the same results.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use state_processing::{
    CachedBeaconState,
    common::{compute_epoch_at_slot, is_slashable_attestation_data},
    gloas::{
        envelope::verify_execution_payload_envelope,
        per_block::{
            get_attesting_indices, get_indexed_payload_attestation, is_valid_indexed_attestation,
            is_valid_indexed_payload_attestation,
        },
        ptc::get_ptc,
    },
    per_block::{ExecutionEngine, VerifySignatures},
    per_slot::process_slots,
    state_transition::state_transition,
};
use types::{
    ChainSpec, Epoch, EthSpec, Root, SignedBeaconBlock, Slot, ValidatorIndex,
    gloas::{
        Attestation, AttesterSlashing, BeaconBlock, IndexedPayloadAttestation, NewPayloadRequest,
        PayloadAttestationMessage, SignedExecutionPayloadEnvelope,
    },
    phase0::Checkpoint,
};

use super::{
    EngineError, GloasBlockSummary, GloasError, GloasForkChoice, GloasHead,
    PayloadAttestationVotes, WeighedNode,
};
use crate::data_availability::AvailabilityError;
use crate::error::Error;
use crate::fork_choice::JustifiedBalances;

/// The Gloas `Store` with its states: [`GloasForkChoice`] and the states its handlers read.
/// Reads of the store go to [`Self::store`].
///
/// [spec]: gloas/fork-choice.md#modified-store
pub struct GloasSpecStore<E: EthSpec> {
    store: GloasForkChoice<E>,
    spec: Arc<ChainSpec>,
    verify_signatures: VerifySignatures,
    block_states: FxHashMap<Root, CachedBeaconState<E>>,
    checkpoint_states: FxHashMap<(Epoch, Root), CachedBeaconState<E>>,
}

/// `get_ptc(state, slot)` and the members of the beacon committees of `slot`, of a block's
/// post-state: the [`GloasBlockSummary::ptc`] and
/// [`GloasBlockSummary::slot_committee_members`] of the block at `slot`.
pub fn slot_duties<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    slot: Slot,
) -> Result<(Vec<ValidatorIndex>, Vec<ValidatorIndex>), GloasError> {
    let (view, caches) = state.view_mut().map_err(Error::State)?;
    let view = view.as_ref();
    let ptc = get_ptc(&view, slot).map_err(GloasError::Ptc)?.to_vec();
    let committees = caches
        .committees_at_slot(&view, slot)
        .map_err(Error::State)?;
    let mut members = Vec::new();
    for index in 0..committees.committees_per_slot() {
        members.extend_from_slice(
            committees
                .get_beacon_committee(slot, index)
                .map_err(Error::State)?,
        );
    }
    Ok((ptc, members))
}

impl<E: EthSpec> GloasSpecStore<E> {
    /// `get_forkchoice_store(anchor_state, anchor_block)`.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_forkchoice_store
    pub fn new(
        mut anchor_state: CachedBeaconState<E>,
        anchor_block: &BeaconBlock<E>,
        spec: Arc<ChainSpec>,
        verify_signatures: VerifySignatures,
    ) -> Result<Self, GloasError> {
        let state_root = anchor_state.hash_tree_root().map_err(Error::State)?;
        if anchor_block.state_root != state_root {
            return Err(Error::AnchorStateMismatch {
                block: anchor_block.state_root,
                state: state_root,
            }
            .into());
        }
        let anchor_root = tree_hash::TreeHash::tree_hash_root(anchor_block);
        let (state_justified, genesis_time) = {
            let view = anchor_state.view().map_err(Error::State)?;
            (
                view.current_justified_checkpoint.clone(),
                *view.genesis_time,
            )
        };
        let (ptc, slot_committee_members) = slot_duties(&mut anchor_state, anchor_block.slot)?;
        let checkpoint = Checkpoint {
            epoch: compute_epoch_at_slot::<E>(anchor_block.slot),
            root: anchor_root,
        };
        let bid = &anchor_block.body.signed_execution_payload_bid.message;
        let anchor = GloasBlockSummary {
            root: anchor_root,
            parent_root: anchor_block.parent_root,
            slot: anchor_block.slot,
            proposer_index: anchor_block.proposer_index,
            bid_block_hash: bid.block_hash,
            bid_parent_block_hash: bid.parent_block_hash,
            justified: state_justified,
            finalized: checkpoint.clone(),
            unrealized_justified: checkpoint.clone(),
            unrealized_finalized: checkpoint.clone(),
            arrival: super::GloasArrival {
                attestation_timely: true,
                ptc_timely: true,
            },
            ptc,
            slot_committee_members,
            payload_attestations: Vec::new(),
        };
        let store = GloasForkChoice::from_anchor(&anchor, genesis_time, spec.clone());
        let mut spec_store = Self {
            store,
            spec,
            verify_signatures,
            block_states: FxHashMap::default(),
            checkpoint_states: FxHashMap::default(),
        };
        spec_store
            .checkpoint_states
            .insert((checkpoint.epoch, checkpoint.root), anchor_state.clone());
        spec_store.block_states.insert(anchor_root, anchor_state);
        spec_store.hand_over_balances(&[])?;
        Ok(spec_store)
    }

    /// The state-free store.
    pub fn store(&self) -> &GloasForkChoice<E> {
        &self.store
    }

    /// `store.block_states[root]`.
    pub fn block_state(&self, root: &Root) -> Option<&CachedBeaconState<E>> {
        self.block_states.get(root)
    }

    /// `store_target_checkpoint_state(store, target)`, returning the state.
    fn checkpoint_state(
        &mut self,
        target: &Checkpoint,
    ) -> Result<&mut CachedBeaconState<E>, Error> {
        let key = (target.epoch, target.root);
        if !self.checkpoint_states.contains_key(&key) {
            let mut state = self
                .block_states
                .get(&target.root)
                .ok_or(Error::MissingBlockState(target.root))?
                .clone();
            let start = target.epoch * E::slots_per_epoch();
            if *state.state.slot() < start {
                process_slots(&mut state, start, &self.spec).map_err(Error::SlotProcessing)?;
            }
            self.checkpoint_states.insert(key, state);
        }
        self.checkpoint_states
            .get_mut(&key)
            .ok_or(Error::MissingCheckpointState(target.clone()))
    }

    /// Hands the store the balances of the checkpoints it wants and of `also` (those of a
    /// block about to be inserted), each from its checkpoint state. A checkpoint whose block
    /// has no state here (before the anchor) is skipped: the head fails on it only if it
    /// becomes justified, as the spec's `store.checkpoint_states` would.
    fn hand_over_balances(&mut self, also: &[Checkpoint]) -> Result<(), GloasError> {
        let mut wanted = self.store.wanted_justified_balances();
        wanted.extend(also.iter().cloned());
        for checkpoint in wanted {
            if checkpoint.epoch < self.store.justified_checkpoint().epoch
                || self.store.has_justified_balances(&checkpoint)
                || !self.block_states.contains_key(&checkpoint.root)
            {
                continue;
            }
            let state = self.checkpoint_state(&checkpoint)?;
            let balances = JustifiedBalances::from_state(state)?;
            self.store.set_justified_balances(&checkpoint, balances);
        }
        Ok(())
    }

    /// `on_tick(store, time)`.
    ///
    /// [spec]: phase0/fork-choice.md#on_tick
    pub fn on_tick(&mut self, time: u64) {
        self.store.on_tick(time);
    }

    /// `on_block(store, signed_block)`: [`GloasForkChoice::check_block`], the state
    /// transition, the block's indexed payload attestations, `compute_pulled_up_tip` and the
    /// PTC and committees of its slot, then [`GloasForkChoice::insert_block_summary`]. The
    /// block's attestations and attester slashings are the caller's to pass on
    /// ([`Self::on_attestation`], [`Self::on_attester_slashing`]).
    ///
    /// [spec]: gloas/fork-choice.md#modified-on_block
    pub fn on_block(
        &mut self,
        signed_block: &SignedBeaconBlock<E>,
        engine: &impl ExecutionEngine<E>,
    ) -> Result<Root, GloasError> {
        let block_root = signed_block.canonical_root();
        let SignedBeaconBlock::Gloas(gloas_block) = signed_block else {
            return Err(GloasError::NotGloasBlock(block_root));
        };
        let block = &gloas_block.message;
        let bid = &block.body.signed_execution_payload_bid.message;
        let Some(arrival) = self.store.check_block(
            block_root,
            block.parent_root,
            block.slot,
            bid.parent_block_hash,
        )?
        else {
            return Ok(block_root);
        };
        let mut state = self
            .block_states
            .get(&block.parent_root)
            .ok_or(Error::MissingBlockState(block.parent_root))?
            .clone();
        state_transition(
            &mut state,
            signed_block,
            self.verify_signatures,
            true,
            engine,
            &self.spec,
        )
        .map_err(|source| Error::InvalidBlock {
            block: block_root,
            source,
        })?;

        // `notify_ptc_messages`: the attesting indices of the block's payload attestations.
        let mut payload_attestations = Vec::new();
        if *state.state.slot() != 0 {
            let view = state.view().map_err(Error::State)?;
            for payload_attestation in block.body.payload_attestations.iter() {
                let indexed = get_indexed_payload_attestation(&view, payload_attestation)
                    .map_err(GloasError::Ptc)?;
                payload_attestations.push(PayloadAttestationVotes {
                    data: payload_attestation.data.clone(),
                    attesting_indices: indexed.attesting_indices.to_vec(),
                });
            }
        }

        // `compute_pulled_up_tip`: the unrealized checkpoints on a copy of the post-state.
        let crate::PostStateCheckpoints {
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
        } = crate::post_state_checkpoints(&mut state)?;
        let (ptc, slot_committee_members) = slot_duties(&mut state, block.slot)?;
        let summary = GloasBlockSummary {
            root: block_root,
            parent_root: block.parent_root,
            slot: block.slot,
            proposer_index: block.proposer_index,
            bid_block_hash: bid.block_hash,
            bid_parent_block_hash: bid.parent_block_hash,
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
            arrival,
            ptc,
            slot_committee_members,
            payload_attestations,
        };

        // The block's state first: its checkpoints' states may start from it.
        self.block_states.insert(block_root, state);
        let inserted = self
            .hand_over_balances(&[
                summary.justified.clone(),
                summary.unrealized_justified.clone(),
            ])
            .and_then(|()| self.store.insert_block_summary(&summary));
        if inserted.is_err() {
            self.block_states.remove(&block_root);
        }
        inserted
    }

    /// `on_execution_payload_envelope(store, signed_envelope)`: the envelope's checks on the
    /// block's post-state and `engine` (`verify_and_notify_new_payload`), then
    /// [`GloasForkChoice::on_verified_execution_payload`] with `data_available`
    /// (`is_data_available`, the caller's).
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub fn on_execution_payload_envelope(
        &mut self,
        signed_envelope: &SignedExecutionPayloadEnvelope<E>,
        data_available: Result<(), AvailabilityError>,
        engine: impl FnOnce(&NewPayloadRequest<E>) -> Result<bool, EngineError>,
    ) -> Result<(), GloasError> {
        let root = signed_envelope.message.beacon_block_root;
        let Some(state) = self.block_states.get_mut(&root) else {
            return Err(GloasError::UnknownBeaconBlock(root));
        };
        if let Err(source) = data_available {
            return Err(GloasError::PayloadDataUnavailable {
                block: root,
                source,
            });
        }
        let state_root = state.hash_tree_root().map_err(Error::State)?;
        let request = {
            let view = state.view().map_err(Error::State)?;
            verify_execution_payload_envelope(
                &view,
                state_root,
                &state.caches,
                signed_envelope,
                self.verify_signatures,
                &self.spec,
            )
            .map_err(|source| GloasError::InvalidEnvelope {
                block: root,
                source,
            })?
        };
        match engine(&request) {
            Ok(true) => {}
            Ok(false) => return Err(GloasError::InvalidPayload(root)),
            Err(source) => {
                return Err(GloasError::EngineUnavailable {
                    block: root,
                    source,
                });
            }
        }
        self.store.on_verified_execution_payload(root, Ok(()))
    }

    /// `on_payload_attestation_message(store, ptc_message, is_from_block)`: the signature of
    /// a message not from a block, on the block's post-state, then
    /// [`GloasForkChoice::on_payload_attestation_message`].
    ///
    /// [spec]: gloas/fork-choice.md#new-on_payload_attestation_message
    pub fn on_payload_attestation_message(
        &mut self,
        ptc_message: &PayloadAttestationMessage,
        is_from_block: bool,
    ) -> Result<(), GloasError> {
        let data = &ptc_message.data;
        let state = self
            .block_states
            .get(&data.beacon_block_root)
            .ok_or(GloasError::UnknownBeaconBlock(data.beacon_block_root))?;
        if !is_from_block && data.slot == *state.state.slot() {
            let view = state.view().map_err(Error::State)?;
            let ptc = get_ptc(&view, data.slot).map_err(GloasError::Ptc)?;
            let in_ptc = ptc.contains(&ptc_message.validator_index);
            let current_slot = self.store.get_current_slot();
            // The store's checks come first (not in the PTC, not current); the signature of a
            // message they accept.
            if in_ptc && data.slot == current_slot {
                let indexed = IndexedPayloadAttestation::<E> {
                    attesting_indices: ssz_types::VariableList::new(vec![
                        ptc_message.validator_index,
                    ])
                    .map_err(|_| {
                        Error::State(state_processing::Error::ListFull("attesting_indices"))
                    })?,
                    data: data.clone(),
                    signature: ptc_message.signature,
                };
                is_valid_indexed_payload_attestation(
                    &view,
                    &state.caches,
                    &indexed,
                    self.verify_signatures,
                )
                .map_err(GloasError::InvalidPayloadAttestation)?;
            }
        }
        self.store
            .on_payload_attestation_message(ptc_message, is_from_block)
    }

    /// `on_attestation(store, attestation, is_from_block)`: `validate_on_attestation`, the
    /// attesting indices and their signature on the target's checkpoint state, then
    /// [`GloasForkChoice::on_indexed_attestation`].
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation
    pub fn on_attestation(
        &mut self,
        attestation: &Attestation<E>,
        is_from_block: bool,
    ) -> Result<(), GloasError> {
        self.store
            .validate_on_attestation(&attestation.data, is_from_block)?;
        let verify = self.verify_signatures;
        let target = attestation.data.target.clone();
        let indices = {
            let state = self.checkpoint_state(&target)?;
            let (view, caches) = state.view_mut().map_err(Error::State)?;
            let view = view.as_ref();
            let indices = get_attesting_indices(&view, caches, attestation)
                .map_err(GloasError::InvalidAttestation)?;
            is_valid_indexed_attestation(
                &view,
                caches,
                &indices,
                &attestation.data,
                &attestation.signature,
                verify,
            )
            .map_err(GloasError::InvalidIndexedAttestation)?;
            indices
        };
        self.store
            .on_indexed_attestation(&attestation.data, &indices, is_from_block)
    }

    /// `on_attester_slashing(store, attester_slashing)`: slashable data, both attestations
    /// valid in the justified checkpoint block's post-state, then
    /// [`GloasForkChoice::on_verified_attester_slashing`].
    ///
    /// [spec]: phase0/fork-choice.md#on_attester_slashing
    pub fn on_attester_slashing(&mut self, slashing: &AttesterSlashing) -> Result<(), GloasError> {
        let a1 = &slashing.attestation_1;
        let a2 = &slashing.attestation_2;
        if !is_slashable_attestation_data(&a1.data, &a2.data) {
            return Err(Error::NotSlashable.into());
        }
        let root = self.store.justified_checkpoint().root;
        let state = self
            .block_states
            .get(&root)
            .ok_or(Error::UnknownJustifiedBlock(root))?;
        let view = state.view().map_err(Error::State)?;
        for indexed in [a1, a2] {
            is_valid_indexed_attestation(
                &view,
                &state.caches,
                &indexed.attesting_indices,
                &indexed.data,
                &indexed.signature,
                self.verify_signatures,
            )
            .map_err(GloasError::InvalidIndexedAttestation)?;
        }
        let second: FxHashSet<ValidatorIndex> = a2.attesting_indices.iter().copied().collect();
        let both: Vec<ValidatorIndex> = a1
            .attesting_indices
            .iter()
            .copied()
            .filter(|i| second.contains(i))
            .collect();
        self.store.on_verified_attester_slashing(&both)?;
        Ok(())
    }

    /// `get_head(store)`, the justified checkpoint's balances handed over first.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_head
    pub fn get_head(&mut self) -> Result<GloasHead, GloasError> {
        self.hand_over_balances(&[])?;
        self.store.get_head()
    }

    /// [`GloasForkChoice::viable_for_head_nodes`], the justified checkpoint's balances handed
    /// over first.
    pub fn viable_for_head_nodes(&mut self) -> Result<Vec<WeighedNode>, GloasError> {
        self.hand_over_balances(&[])?;
        self.store.viable_for_head_nodes()
    }
}
