//! The spec's `Store` with its states: a [`ForkChoice`] (the store's fields and its block
//! tree) beside `store.block_states` and `store.checkpoint_states`, and the pool the
//! availability check runs on. Its handlers (`on_tick`, `on_block` with the state transition
//! and `is_data_available`, `on_attestation`, `on_attester_slashing`, `get_proposer_head`,
//! `should_override_forkchoice_update`, `on_fast_confirmation`) read the states the spec reads
//! and hand [`ForkChoice`]'s results API what they found: the API the node's chain feeds from
//! its own state cache. The spec tests and fork choice's own tests run on it.
//!
//! [spec]: phase0/fork-choice.md, fulu/fork-choice.md

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use rayon::ThreadPool;
use rustc_hash::FxHashMap;
use state_processing::{
    CachedBeaconState,
    common::get_current_epoch,
    per_block::{ExecutionEngine, get_indexed_attestation, is_valid_indexed_attestation},
    per_slot::process_slots,
    state_transition::state_transition,
};
use types::{
    ChainSpec, Epoch, EthSpec, Root, SignedBeaconBlock, Slot, ValidatorIndex,
    electra::{Attestation, AttesterSlashing, BeaconBlock},
    phase0::Checkpoint,
};

use crate::{
    data_availability::{AvailabilityError, Columns, is_data_available},
    error::Error,
    fast_confirmation::{FastConfirmationInputs, FastConfirmationStore},
    fork_choice::{AnchorBlock, BlockSummary, Config, ForkChoice, JustifiedBalances},
    slashable_indices,
};

/// The spec's `Store`: [`ForkChoice`] and the states the spec keeps with it.
///
/// Dereferences to its [`ForkChoice`] for the handlers that read no state (`get_head`,
/// `get_weight`, the checkpoints, ...); the state-reading handlers are its own.
///
/// [spec]: phase0/fork-choice.md#store
pub struct SpecStore<E: EthSpec> {
    fork_choice: ForkChoice<E>,
    kzg_pool: Arc<ThreadPool>,
    /// `store.block_states`: the post-state of every block in the tree.
    block_states: FxHashMap<Root, CachedBeaconState<E>>,
    /// `store.checkpoint_states`.
    checkpoint_states: FxHashMap<(Epoch, Root), CachedBeaconState<E>>,
}

fn key(checkpoint: &Checkpoint) -> (Epoch, Root) {
    (checkpoint.epoch, checkpoint.root)
}

impl<E: EthSpec> Deref for SpecStore<E> {
    type Target = ForkChoice<E>;

    fn deref(&self) -> &ForkChoice<E> {
        &self.fork_choice
    }
}

impl<E: EthSpec> DerefMut for SpecStore<E> {
    fn deref_mut(&mut self) -> &mut ForkChoice<E> {
        &mut self.fork_choice
    }
}

impl<E: EthSpec> SpecStore<E> {
    /// `get_forkchoice_store(anchor_state, anchor_block)`, the availability checks of
    /// `on_block` to run on `kzg_pool`.
    ///
    /// [spec]: phase0/fork-choice.md#get_forkchoice_store
    pub fn new(
        anchor_state: CachedBeaconState<E>,
        anchor_block: &BeaconBlock<E>,
        spec: Arc<ChainSpec>,
        config: Config,
        kzg_pool: Arc<ThreadPool>,
    ) -> Result<Self, Error> {
        let mut anchor_state = anchor_state;
        let state_root = anchor_state.hash_tree_root().map_err(Error::State)?;
        if anchor_block.state_root != state_root {
            return Err(Error::AnchorStateMismatch {
                block: anchor_block.state_root,
                state: state_root,
            });
        }
        let anchor = AnchorBlock {
            root: tree_hash::TreeHash::tree_hash_root(anchor_block),
            slot: anchor_block.slot,
            proposer_index: anchor_block.proposer_index,
            parent_root: anchor_block.parent_root,
        };
        Self::from_checkpoint_state(anchor_state, anchor, spec, config, kzg_pool)
    }

    /// The store of a checkpoint state and its block ([`ForkChoice::new`]), the state kept as
    /// the anchor block's and the checkpoint's.
    pub fn from_checkpoint_state(
        anchor_state: CachedBeaconState<E>,
        anchor_block: AnchorBlock,
        spec: Arc<ChainSpec>,
        config: Config,
        kzg_pool: Arc<ThreadPool>,
    ) -> Result<Self, Error> {
        let fork_choice = ForkChoice::new(&anchor_state, anchor_block, spec, config)?;
        let anchor = fork_choice.justified_checkpoint().clone();
        let mut store = Self {
            fork_choice,
            kzg_pool,
            block_states: FxHashMap::default(),
            checkpoint_states: FxHashMap::default(),
        };
        store
            .block_states
            .insert(anchor_block.root, anchor_state.clone());
        store.checkpoint_states.insert(key(&anchor), anchor_state);
        store.supply_justified_balances(&[]);
        Ok(store)
    }

    /// The fork-choice store without its states.
    pub fn fork_choice(&self) -> &ForkChoice<E> {
        &self.fork_choice
    }

    /// `store.block_states[root]`.
    pub fn block_state(&self, root: &Root) -> Option<&CachedBeaconState<E>> {
        self.block_states.get(root)
    }

    /// `store.block_states[root]`: an error when the block is not in the tree or its state is
    /// not held.
    fn block_state_or_err(&self, root: &Root) -> Result<&CachedBeaconState<E>, Error> {
        if let Some(state) = self.block_states.get(root) {
            return Ok(state);
        }
        if !self.fork_choice.contains_block(root) {
            return Err(Error::UnknownBlock(*root));
        }
        Err(Error::MissingBlockState(*root))
    }

    /// `store_target_checkpoint_state(store, target)`, returning the state.
    ///
    /// [spec]: phase0/fork-choice.md#store_target_checkpoint_state
    pub fn checkpoint_state(
        &mut self,
        target: &Checkpoint,
    ) -> Result<&mut CachedBeaconState<E>, Error> {
        let k = key(target);
        if !self.checkpoint_states.contains_key(&k) {
            let mut state = self.block_state_or_err(&target.root)?.clone();
            let start = target.epoch * E::slots_per_epoch();
            if *state.state.slot() < start {
                process_slots(&mut state, start, self.fork_choice.spec())
                    .map_err(Error::SlotProcessing)?;
            }
            self.checkpoint_states.insert(k, state);
        }
        self.checkpoint_states
            .get_mut(&k)
            .ok_or(Error::UnknownBlock(target.root))
    }

    /// Hands fork choice the balances of the checkpoints that may become justified and whose
    /// balances it does not hold: the store's justified and unrealized justified checkpoints
    /// and `extra` (a block's about to go in), each by its checkpoint state. A checkpoint whose
    /// state cannot be had is passed over: the head then fails with
    /// [`Error::JustifiedBalancesMissing`] should it become justified.
    fn supply_justified_balances(&mut self, extra: &[Checkpoint]) {
        let justified_epoch = self.fork_choice.justified_checkpoint().epoch;
        let mut wanted = self.fork_choice.wanted_justified_balances();
        wanted.extend(
            extra
                .iter()
                .filter(|c| {
                    c.epoch >= justified_epoch && !self.fork_choice.has_justified_balances(c)
                })
                .cloned(),
        );
        wanted.sort_unstable_by_key(|c| (c.epoch, c.root));
        wanted.dedup();
        for checkpoint in wanted {
            let balances = self
                .checkpoint_state(&checkpoint)
                .and_then(|state| JustifiedBalances::from_state(state));
            if let Ok(balances) = balances {
                self.fork_choice
                    .set_justified_balances(&checkpoint, balances);
            }
        }
    }

    /// Drops the states of blocks fork choice pruned, and the checkpoint states before the
    /// finalized epoch.
    fn prune_states(&mut self) {
        let fork_choice = &self.fork_choice;
        self.block_states
            .retain(|root, _| fork_choice.contains_block(root));
        let finalized_epoch = fork_choice.finalized_checkpoint().epoch;
        self.checkpoint_states
            .retain(|(epoch, _), _| *epoch >= finalized_epoch);
    }

    /// `on_tick(store, time)`.
    ///
    /// [spec]: phase0/fork-choice.md#on_tick
    pub fn on_tick(&mut self, time: u64) {
        self.fork_choice.on_tick(time);
        self.supply_justified_balances(&[]);
    }

    /// `on_block(store, signed_block)` with the Fulu availability check on `columns` (Deneb's
    /// blobs before Fulu): [`ForkChoice::check_block`], `is_data_available` beside the state
    /// transition on the parent's post-state, `compute_pulled_up_tip`, then
    /// [`ForkChoice::insert_block`] with the post-state kept. Returns the block root; a
    /// block already in the store is accepted without change.
    ///
    /// [spec]: fulu/fork-choice.md#modified-on_block
    pub fn on_block(
        &mut self,
        signed_block: &SignedBeaconBlock<E>,
        columns: Columns<'_, E>,
        engine: &impl ExecutionEngine<E>,
    ) -> Result<Root, Error> {
        let block_root = signed_block.canonical_root();
        let parent_root = signed_block.parent_root();
        let Some(arrival) =
            self.fork_choice
                .check_block(block_root, parent_root, signed_block.slot())?
        else {
            return Ok(block_root);
        };
        let pre_state = self.block_state_or_err(&parent_root)?.clone();
        let (post_state, summary) = self.process_block(
            block_root,
            pre_state,
            signed_block,
            columns,
            engine,
            arrival.is_timely,
        )?;
        // Kept first: the block may be its own checkpoints' block.
        self.block_states.insert(block_root, post_state);
        self.supply_justified_balances(&[
            summary.justified.clone(),
            summary.unrealized_justified.clone(),
        ]);
        if let Err(e) = self.fork_choice.insert_block(&summary) {
            self.block_states.remove(&block_root);
            return Err(e);
        }
        self.supply_justified_balances(&[]);
        self.prune_states();
        Ok(block_root)
    }

    /// The middle of `on_block`: the availability check on `columns` (on the KZG pool) beside
    /// the state transition of `signed_block` on `state`, then the pulled-up checkpoints on a
    /// copy of the post-state. Returns the post-state and the block's summary.
    fn process_block(
        &self,
        block_root: Root,
        mut state: CachedBeaconState<E>,
        signed_block: &SignedBeaconBlock<E>,
        columns: Columns<'_, E>,
        engine: &impl ExecutionEngine<E>,
        is_timely: bool,
    ) -> Result<(CachedBeaconState<E>, BlockSummary), Error> {
        let spec = self.fork_choice.spec();
        let verify = self.fork_choice.verify_signatures();
        let has_data = match &columns {
            Columns::Retrieved(sidecars) => !sidecars.is_empty(),
            Columns::Blobs { blobs, .. } => !blobs.is_empty(),
            Columns::Missing => false,
        };
        let transition = |state: &mut CachedBeaconState<E>| {
            state_transition(state, signed_block, verify, true, engine, spec)
        };
        let (available, transitioned) = if has_data {
            // The check is spawned on the pool while this thread runs the transition
            // (`in_place_scope`: the transition need not be `Send`). Its verdict comes first,
            // as in the spec's order.
            let mut available = None;
            let transitioned = self.kzg_pool.in_place_scope(|scope| {
                scope.spawn(|_| available = Some(is_data_available(columns, spec, &self.kzg_pool)));
                transition(&mut state)
            });
            let available = available.unwrap_or(Err(AvailabilityError::NotRetrieved));
            (available, transitioned)
        } else {
            // No data to verify: the check answers at once, and no transition runs when the
            // data is not there.
            let available = is_data_available(columns, spec, &self.kzg_pool);
            let transitioned = match available {
                Ok(()) => transition(&mut state),
                Err(_) => Ok(()),
            };
            (available, transitioned)
        };
        available.map_err(|source| Error::DataUnavailable {
            block: block_root,
            source,
        })?;
        transitioned.map_err(|source| Error::InvalidBlock {
            block: block_root,
            source,
        })?;

        // `compute_pulled_up_tip`, on a copy of the post-state.
        let crate::PostStateCheckpoints {
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
        } = crate::post_state_checkpoints(&mut state)?;
        let payload_hash = match signed_block {
            SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => {
                Some(b.message.body.execution_payload.block_hash)
            }
            // The spec tests' Deneb blocks are not tracked by payload hash (as before Gloas).
            SignedBeaconBlock::Phase0(_)
            | SignedBeaconBlock::Altair(_)
            | SignedBeaconBlock::Bellatrix(_)
            | SignedBeaconBlock::Capella(_)
            | SignedBeaconBlock::Deneb(_) => None,
            SignedBeaconBlock::Gloas(_) => {
                return Err(Error::UnsupportedFork(types::ForkName::Gloas));
            }
        };
        let summary = BlockSummary {
            root: block_root,
            parent_root: signed_block.parent_root(),
            slot: signed_block.slot(),
            proposer_index: signed_block.proposer_index(),
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
            payload_hash,
            is_timely,
        };
        Ok((state, summary))
    }

    /// `on_attestation(store, attestation, is_from_block)`: `validate_on_attestation`, the
    /// indexed attestation by `store_target_checkpoint_state` and its validity, then
    /// [`ForkChoice::on_indexed_attestation`].
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation
    pub fn on_attestation(
        &mut self,
        attestation: &Attestation<E>,
        is_from_block: bool,
    ) -> Result<(), Error> {
        self.fork_choice
            .validate_on_attestation(&attestation.data, is_from_block)?;
        let verify = self.fork_choice.verify_signatures();
        let indices = {
            let state = self.checkpoint_state(&attestation.data.target)?;
            let (view, caches) = state.view_mut().map_err(Error::State)?;
            let view = view.as_ref();
            let indexed = get_indexed_attestation(&view, caches, attestation)
                .map_err(Error::InvalidAttestation)?;
            is_valid_indexed_attestation(&view, caches, &indexed, verify)?;
            indexed.attesting_indices.to_vec()
        };
        self.fork_choice
            .on_indexed_attestation(&attestation.data, &indices, is_from_block)
    }

    /// `on_attester_slashing(store, attester_slashing)`: [`slashable_indices`], both
    /// attestations valid in the justified checkpoint block's post-state, then
    /// [`ForkChoice::on_verified_attester_slashing`].
    ///
    /// [spec]: phase0/fork-choice.md#on_attester_slashing
    pub fn on_attester_slashing(&mut self, slashing: &AttesterSlashing<E>) -> Result<(), Error> {
        let both = slashable_indices(slashing)?;
        let root = self.fork_choice.justified_checkpoint().root;
        if !self.fork_choice.contains_block(&root) {
            return Err(Error::UnknownJustifiedBlock(root));
        }
        let verify = self.fork_choice.verify_signatures();
        let state = self.block_state_or_err(&root)?;
        let view = state.view().map_err(Error::State)?;
        is_valid_indexed_attestation(&view, &state.caches, &slashing.attestation_1, verify)?;
        is_valid_indexed_attestation(&view, &state.caches, &slashing.attestation_2, verify)?;
        self.fork_choice.on_verified_attester_slashing(&both)
    }

    /// The members of every committee of the slot of block `root`, by its post-state
    /// (`is_head_weak`'s `head_slot_committee`).
    fn head_slot_committee(&self, root: &Root) -> Result<Vec<ValidatorIndex>, Error> {
        let slot: Slot = self
            .fork_choice
            .proto_array()
            .get(root)
            .ok_or(Error::UnknownBlock(*root))?
            .slot;
        let mut state = self.block_state_or_err(root)?.clone();
        let (view, caches) = state.view_mut().map_err(Error::State)?;
        let committees = caches
            .committees_at_slot(&view.as_ref(), slot)
            .map_err(Error::State)?;
        let mut members = Vec::new();
        for index in 0..committees.committees_per_slot() {
            members.extend_from_slice(
                committees
                    .get_beacon_committee(slot, index)
                    .map_err(Error::State)?,
            );
        }
        Ok(members)
    }

    /// `get_proposer_head(store, head_root, slot)`: [`ForkChoice::get_proposer_head`] on
    /// the committees of the head block's slot by its post-state.
    ///
    /// [spec]: phase0/fork-choice.md#get_proposer_head
    pub fn get_proposer_head(&mut self, head_root: &Root, slot: Slot) -> Result<Root, Error> {
        let committee = self.head_slot_committee(head_root)?;
        self.fork_choice
            .get_proposer_head(head_root, slot, &committee)
    }

    /// `should_override_forkchoice_update(store, head_root)`:
    /// [`ForkChoice::should_override_forkchoice_update`] on the committees of the head
    /// block's slot and the proposer of the next slot by the head's parent post-state advanced
    /// to it.
    ///
    /// [spec]: bellatrix/fork-choice.md#should_override_forkchoice_update (v1.5)
    pub fn should_override_forkchoice_update(
        &mut self,
        head_root: &Root,
        validator_is_connected: impl Fn(ValidatorIndex) -> bool,
    ) -> Result<bool, Error> {
        let committee = self.head_slot_committee(head_root)?;
        let head_node = self
            .fork_choice
            .proto_array()
            .get(head_root)
            .ok_or(Error::UnknownBlock(*head_root))?;
        let (parent_root, proposal_slot) = (head_node.parent_root, head_node.slot + 1);
        let mut advanced = self.block_state_or_err(&parent_root)?.clone();
        if *advanced.state.slot() < proposal_slot {
            process_slots(&mut advanced, proposal_slot, self.fork_choice.spec())
                .map_err(Error::SlotProcessing)?;
        }
        let (view, caches) = advanced.view_mut().map_err(Error::State)?;
        let proposer = state_processing::common::get_beacon_proposer_index(&view.as_ref(), caches)
            .map_err(Error::State)?;
        self.fork_choice.should_override_forkchoice_update(
            head_root,
            &committee,
            proposer,
            validator_is_connected,
        )
    }

    /// `on_fast_confirmation(fcr_store)` on `fcr`, with the states it reads (the head's
    /// post-state, pulled up to the current epoch, and the checkpoint states of its balance
    /// sources) from this store: [`FastConfirmationStore::on_fast_confirmation`].
    ///
    /// [spec]: phase0/fast-confirmation.md#on_fast_confirmation
    pub fn on_fast_confirmation(&mut self, fcr: &mut FastConfirmationStore) -> Result<(), Error> {
        let head = self.fork_choice.get_head()?.root;
        let current_epoch = self.fork_choice.get_current_store_epoch();
        let head_state = self.block_state_or_err(&head)?.clone();
        let head_epoch = get_current_epoch(&head_state.view().map_err(Error::State)?);
        let pulled_up = if head_epoch < current_epoch {
            self.checkpoint_state(&Checkpoint {
                epoch: current_epoch,
                root: head,
            })?
            .clone()
        } else {
            head_state.clone()
        };
        let [previous, current] = fcr.balance_checkpoints(&self.fork_choice);
        let previous = self.checkpoint_state(&previous)?.clone();
        let current = self.checkpoint_state(&current)?.clone();
        let inputs = FastConfirmationInputs {
            head,
            head_state: &head_state,
            pulled_up_head_state: &pulled_up,
            balance_states: [&previous, &current],
        };
        fcr.on_fast_confirmation(&mut self.fork_choice, &inputs)
    }

    /// Drops every block that does not descend from the finalized block, with its state, and
    /// the checkpoint states before the finalized epoch ([`ForkChoice::prune`]).
    pub fn prune(&mut self) -> Result<(), Error> {
        self.fork_choice.prune()?;
        self.prune_states();
        Ok(())
    }
}
