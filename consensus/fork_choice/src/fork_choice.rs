//! The spec's fork-choice `Store` without its states, over a [`ProtoArray`] and a
//! [`VoteTracker`]: its handlers take what their caller read of states (a block's
//! [`BlockSummary`], attesting indices, [`JustifiedBalances`], a head slot's committee). The
//! spec's store with its states is [`crate::SpecStore`]; the node's states are its chain's.
//!
//! Every handler checks all of its preconditions before it writes anything, so a rejected
//! message leaves the store as it was. The store has one owner (`&mut self`): callers serialise
//! access (one task owns it), and no lock is held across a block import.
//!
//! [spec]: phase0/fork-choice.md, fulu/fork-choice.md

use std::marker::PhantomData;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use state_processing::{
    CachedBeaconState,
    common::{compute_epoch_at_slot, get_current_epoch, is_active_validator},
    per_block::VerifySignatures,
};
use types::{
    ChainSpec, Epoch, EthSpec, GENESIS_SLOT, Gwei, Root, Slot, ValidatorIndex,
    electra::{AttestationData, AttesterSlashing},
    phase0::Checkpoint,
};

use crate::{
    error::Error,
    proto_array::{ExecutionStatus, ProtoArray, ProtoNode},
    votes::VoteTracker,
};

/// `BASIS_POINTS`.
const BASIS_POINTS: u64 = 10_000;

/// The head: `ForkChoiceNode` with the block's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The head block's root.
    pub root: Root,
    /// The head block's slot.
    pub slot: Slot,
}

/// The block a store is anchored at, by the fields the block tree keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnchorBlock {
    /// `hash_tree_root(block)`.
    pub root: Root,
    /// `block.slot`.
    pub slot: Slot,
    /// `block.proposer_index`.
    pub proposer_index: ValidatorIndex,
    /// `block.parent_root`.
    pub parent_root: Root,
}

/// What fork choice reads of a justified checkpoint's state (`store.checkpoint_states[
/// store.justified_checkpoint]`): the balances that weigh votes, the committee fractions of the
/// proposer boost and the re-org rules, and the effective balances of equivocators
/// (`is_head_weak`). Computed by the owner of the states ([`Self::from_state`]) and handed to
/// fork choice ([`ForkChoice::set_justified_balances`]) for each checkpoint that can become
/// justified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JustifiedBalances {
    /// Effective balance of each active, unslashed validator (0 for the others): its vote's
    /// weight.
    effective: Vec<Gwei>,
    /// The effective balance of each validator whose vote weighs nothing (inactive or slashed)
    /// and whose effective balance is not zero.
    uncounted: FxHashMap<ValidatorIndex, Gwei>,
    /// `get_total_active_balance(justified_state)`.
    total_active: Gwei,
    /// The same over the validators that are not slashed (at least one increment).
    total_unslashed: Gwei,
}

impl JustifiedBalances {
    /// The balances of `state`, a checkpoint state (the checkpoint block's post-state advanced
    /// to the epoch's first slot), at its current epoch.
    pub fn from_state<E: EthSpec>(state: &CachedBeaconState<E>) -> Result<Self, Error> {
        let view = state.view().map_err(Error::State)?;
        Ok(Self::from_validators::<E>(
            get_current_epoch(&view),
            view.validators.len(),
            view.validators.iter(),
        ))
    }

    /// The balances of a registry of `count` validators at `epoch`.
    pub fn from_validators<'a, E: EthSpec>(
        epoch: Epoch,
        count: usize,
        validators: impl Iterator<Item = &'a types::phase0::Validator>,
    ) -> Self {
        let mut effective = Vec::with_capacity(count);
        let mut uncounted = FxHashMap::default();
        let mut total: Gwei = 0;
        let mut total_unslashed: Gwei = 0;
        for (index, validator) in validators.enumerate() {
            let active = is_active_validator(validator, epoch);
            if active {
                total = total.saturating_add(validator.effective_balance);
                if !validator.slashed {
                    total_unslashed = total_unslashed.saturating_add(validator.effective_balance);
                }
            }
            if active && !validator.slashed {
                effective.push(validator.effective_balance);
            } else {
                effective.push(0);
                if validator.effective_balance != 0 {
                    uncounted.insert(index as ValidatorIndex, validator.effective_balance);
                }
            }
        }
        Self {
            effective,
            uncounted,
            total_active: total.max(E::EFFECTIVE_BALANCE_INCREMENT),
            total_unslashed: total_unslashed.max(E::EFFECTIVE_BALANCE_INCREMENT),
        }
    }

    /// `justified_state.validators[index].effective_balance` (0 beyond the registry).
    pub fn effective_balance(&self, index: ValidatorIndex) -> Gwei {
        match self.effective.get(index as usize) {
            Some(&0) | None => self.uncounted.get(&index).copied().unwrap_or(0),
            Some(&balance) => balance,
        }
    }

    /// The weight of each validator's vote, by validator index.
    pub fn vote_weights(&self) -> &[Gwei] {
        &self.effective
    }

    /// `get_total_active_balance(justified_state)`.
    pub fn total_active(&self) -> Gwei {
        self.total_active
    }

    /// The total over the active validators that are not slashed (at least one increment):
    /// what `get_proposer_score` weighs the boost against.
    pub fn total_unslashed(&self) -> Gwei {
        self.total_unslashed
    }
}

/// A block fork choice checked on arrival ([`ForkChoice::check_block`]): what the rest of
/// `on_block` needs of that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Whether the block arrived in its own slot before the attestation deadline
    /// (`store.block_timeliness`).
    pub is_timely: bool,
}

/// What fork choice keeps of a block whose state transition passed: its place in the tree,
/// its post-state's checkpoints and those of its pulled-up tip (`compute_pulled_up_tip`), its
/// payload's block hash and its timeliness. The owner of the states computes it
/// ([`ForkChoice::insert_block`] takes it).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSummary {
    /// `hash_tree_root(block)`.
    pub root: Root,
    /// `block.parent_root`.
    pub parent_root: Root,
    /// `block.slot`.
    pub slot: Slot,
    /// `block.proposer_index`.
    pub proposer_index: ValidatorIndex,
    /// The post-state's `current_justified_checkpoint`.
    pub justified: Checkpoint,
    /// The post-state's `finalized_checkpoint`.
    pub finalized: Checkpoint,
    /// The pulled-up tip's `current_justified_checkpoint` (`store.unrealized_justifications`).
    pub unrealized_justified: Checkpoint,
    /// The pulled-up tip's `finalized_checkpoint`.
    pub unrealized_finalized: Checkpoint,
    /// `block.body.execution_payload.block_hash` of a block whose payload fork choice tracks
    /// (Electra and Fulu).
    pub payload_hash: Option<Root>,
    /// [`Arrival::is_timely`] of the block's [`ForkChoice::check_block`].
    pub is_timely: bool,
}

/// Options of the store.
#[derive(Debug, Clone)]
pub struct Config {
    /// How signatures of blocks, attestations and slashings are checked.
    pub verify_signatures: VerifySignatures,
    /// Prune once the finalized block has at least this many nodes before it in the tree.
    pub prune_threshold: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            verify_signatures: VerifySignatures::Batched,
            prune_threshold: 256,
        }
    }
}

/// The fork-choice store: the spec's `Store` with the block tree as a proto-array.
///
/// [spec]: phase0/fork-choice.md#store
pub struct ForkChoice<E: EthSpec> {
    spec: Arc<ChainSpec>,
    config: Config,
    time: u64,
    genesis_time: u64,
    justified_checkpoint: Checkpoint,
    finalized_checkpoint: Checkpoint,
    unrealized_justified_checkpoint: Checkpoint,
    unrealized_finalized_checkpoint: Checkpoint,
    proposer_boost_root: Root,
    equivocating_indices: FxHashSet<ValidatorIndex>,
    proto: ProtoArray,
    votes: VoteTracker,
    /// The justified checkpoint's balances, and which checkpoint they are of.
    balances: Arc<JustifiedBalances>,
    balances_checkpoint: Option<(Epoch, Root)>,
    /// Balances handed over for checkpoints that may become justified
    /// ([`Self::set_justified_balances`]), until the justified checkpoint passes them.
    candidate_balances: FxHashMap<(Epoch, Root), Arc<JustifiedBalances>>,
    /// The proposer boost now in the node weights: block root and amount.
    applied_boost: Option<(Root, Gwei)>,
    /// Each block's execution payload block hash (optimistic sync walks them).
    payload_hashes: FxHashMap<Root, Root>,
    /// The preset the store's slots and epochs are counted in.
    preset: PhantomData<fn() -> E>,
}

fn key(checkpoint: &Checkpoint) -> (Epoch, Root) {
    (checkpoint.epoch, checkpoint.root)
}

impl<E: EthSpec> ForkChoice<E> {
    /// `get_forkchoice_store(anchor_state, anchor_block)` on what the store reads of the anchor:
    /// `anchor_state` is the checkpoint state of the anchor block (its post-state advanced to
    /// its epoch's first slot; the block's own post-state when the block is at that slot, as in
    /// `get_forkchoice_store`), read once for the clock, the checkpoints and the justified
    /// balances, and not kept: the states are their owner's ([`crate::SpecStore`]'s for the
    /// spec's store, the chain's state cache for the node).
    ///
    /// [spec]: phase0/fork-choice.md#get_forkchoice_store
    pub fn new(
        anchor_state: &CachedBeaconState<E>,
        anchor_block: AnchorBlock,
        spec: Arc<ChainSpec>,
        config: Config,
    ) -> Result<Self, Error> {
        let anchor_root = anchor_block.root;
        let (anchor_epoch, genesis_time, slot, finalized_epoch) = {
            let view = anchor_state.view().map_err(Error::State)?;
            (
                get_current_epoch(&view),
                *view.genesis_time,
                *view.slot,
                view.finalized_checkpoint.epoch,
            )
        };
        let balances = JustifiedBalances::from_state(anchor_state)?;
        let anchor = Checkpoint {
            epoch: anchor_epoch,
            root: anchor_root,
        };
        let mut proto = ProtoArray::default();
        proto.insert(ProtoNode {
            root: anchor_root,
            parent: None,
            slot: anchor_block.slot,
            proposer_index: anchor_block.proposer_index,
            parent_root: anchor_block.parent_root,
            justified: anchor.clone(),
            unrealized_justified: anchor.clone(),
            finalized_epoch,
            timely: false,
            weight: 0,
            execution_status: ExecutionStatus::NotValidated,
        })?;
        Ok(Self {
            time: spec.compute_time_at_slot(genesis_time, slot),
            genesis_time,
            spec,
            config,
            justified_checkpoint: anchor.clone(),
            finalized_checkpoint: anchor.clone(),
            unrealized_justified_checkpoint: anchor.clone(),
            unrealized_finalized_checkpoint: anchor.clone(),
            proposer_boost_root: Root::ZERO,
            equivocating_indices: FxHashSet::default(),
            proto,
            votes: VoteTracker::default(),
            balances: Arc::new(balances),
            balances_checkpoint: Some(key(&anchor)),
            candidate_balances: FxHashMap::default(),
            applied_boost: None,
            payload_hashes: FxHashMap::default(),
            preset: PhantomData,
        })
    }

    /// The execution client found the payload of a child of `from` invalid (or of `from`
    /// itself, when it was imported optimistically): `from` and its ancestors back to the block
    /// whose payload hash is `latest_valid_hash` (exclusive) are invalidated, and so is every
    /// descendant of an invalidated block. With no (or an unknown) latest valid hash only
    /// `from` is. Returns the roots newly invalidated.
    ///
    /// [spec]: sync/optimistic.md#transitioning-from-valid---invalidated-or-optimistic---invalidated
    pub fn invalidate_payloads(
        &mut self,
        from: &Root,
        latest_valid_hash: Option<Root>,
    ) -> Vec<Root> {
        let mut newly = Vec::new();
        let lvh_known =
            latest_valid_hash.is_some_and(|h| self.payload_hashes.values().any(|v| *v == h));
        let mut index = self.proto.index_of(from);
        while let Some(i) = index {
            let node = &self.proto.nodes()[i];
            if lvh_known && self.payload_hashes.get(&node.root).copied() == latest_valid_hash {
                break;
            }
            // The anchor has no payload to judge here: it is final.
            if node.parent.is_none() {
                break;
            }
            let (root, parent) = (node.root, node.parent);
            if node.execution_status != ExecutionStatus::Invalidated {
                self.proto
                    .set_execution_status(i, ExecutionStatus::Invalidated);
                newly.push(root);
            }
            if !lvh_known {
                break;
            }
            index = parent;
        }
        // Descendants, in one forward pass (parents come before children).
        for i in 0..self.proto.nodes().len() {
            let node = &self.proto.nodes()[i];
            if let Some(parent) = node.parent
                && self.proto.nodes()[parent].execution_status == ExecutionStatus::Invalidated
                && node.execution_status != ExecutionStatus::Invalidated
            {
                let root = node.root;
                self.proto
                    .set_execution_status(i, ExecutionStatus::Invalidated);
                newly.push(root);
            }
        }
        newly
    }

    /// Whether block `root`'s payload (or an ancestor's) was found invalid.
    pub fn is_invalidated(&self, root: &Root) -> bool {
        self.execution_status(root) == Some(ExecutionStatus::Invalidated)
    }

    /// The execution status of block `root`'s payload; `None` for a block not in the tree.
    pub fn execution_status(&self, root: &Root) -> Option<ExecutionStatus> {
        self.proto.get(root).map(|node| node.execution_status)
    }

    /// Labels block `root`'s payload with `status` as given, no ancestor or descendant
    /// following it (spec tests label each block; the node's own verdicts go through
    /// [`Self::on_valid_payload`] and [`Self::invalidate_payloads`]). False for a block not in
    /// the tree.
    pub fn set_execution_status(&mut self, root: &Root, status: ExecutionStatus) -> bool {
        match self.proto.index_of(root) {
            Some(index) => self.proto.set_execution_status(index, status),
            None => false,
        }
    }

    /// The execution client called block `root`'s payload VALID: it and its ancestors not
    /// validated yet are valid (a payload is valid only on a valid chain), up to the first one
    /// validated (or invalidated) already. Returns the blocks validated now, the block first.
    ///
    /// [spec]: sync/optimistic.md#helpers (`latest_valid_ancestor`)
    pub fn on_valid_payload(&mut self, root: &Root) -> Vec<Root> {
        let mut validated = Vec::new();
        let mut index = self.proto.index_of(root);
        while let Some(i) = index {
            let node = &self.proto.nodes()[i];
            if node.execution_status != ExecutionStatus::NotValidated {
                break;
            }
            let (root, parent) = (node.root, node.parent);
            self.proto.set_execution_status(i, ExecutionStatus::Valid);
            validated.push(root);
            index = parent;
        }
        validated
    }

    /// How signatures are checked.
    pub fn verify_signatures(&self) -> VerifySignatures {
        self.config.verify_signatures
    }

    /// Sets how signatures are checked from now on (a restarting node replays blocks it had
    /// verified already without checking them again).
    pub fn set_verify_signatures(&mut self, verify: VerifySignatures) {
        self.config.verify_signatures = verify;
    }

    /// The chain spec the store runs under.
    pub fn spec(&self) -> &ChainSpec {
        &self.spec
    }

    /// `store.time`.
    pub fn time(&self) -> u64 {
        self.time
    }

    /// `store.genesis_time`.
    pub fn genesis_time(&self) -> u64 {
        self.genesis_time
    }

    /// `store.justified_checkpoint`.
    pub fn justified_checkpoint(&self) -> &Checkpoint {
        &self.justified_checkpoint
    }

    /// `store.finalized_checkpoint`.
    pub fn finalized_checkpoint(&self) -> &Checkpoint {
        &self.finalized_checkpoint
    }

    /// `store.unrealized_justified_checkpoint`.
    pub fn unrealized_justified_checkpoint(&self) -> &Checkpoint {
        &self.unrealized_justified_checkpoint
    }

    /// `store.unrealized_finalized_checkpoint`.
    pub fn unrealized_finalized_checkpoint(&self) -> &Checkpoint {
        &self.unrealized_finalized_checkpoint
    }

    /// `store.proposer_boost_root`.
    pub fn proposer_boost_root(&self) -> Root {
        self.proposer_boost_root
    }

    /// Whether `index` is in `store.equivocating_indices`.
    pub fn is_equivocating(&self, index: ValidatorIndex) -> bool {
        self.equivocating_indices.contains(&index)
    }

    /// Whether block `root` is in the store.
    pub fn contains_block(&self, root: &Root) -> bool {
        self.proto.index_of(root).is_some()
    }

    /// The execution payload's `block_hash` of block `root`, if the store holds the block and it
    /// has a payload.
    pub fn payload_block_hash(&self, root: &Root) -> Option<Root> {
        self.payload_hashes.get(root).copied()
    }

    /// The block tree.
    pub fn proto_array(&self) -> &ProtoArray {
        &self.proto
    }

    /// `latest_messages[index]` as `(epoch, root)`; the root is `None` when its block was
    /// pruned.
    pub fn latest_message(&self, index: ValidatorIndex) -> Option<(Epoch, Option<Root>)> {
        self.votes.latest_message(index).map(|(epoch, node)| {
            (
                epoch,
                node.and_then(|n| self.proto.node(n as usize).map(|n| n.root)),
            )
        })
    }

    /// `get_current_slot(store)`.
    pub fn get_current_slot(&self) -> Slot {
        GENESIS_SLOT
            + self
                .spec
                .get_slots_since_genesis(self.genesis_time, self.time)
    }

    /// `get_current_store_epoch(store)`.
    pub fn get_current_store_epoch(&self) -> Epoch {
        compute_epoch_at_slot::<E>(self.get_current_slot())
    }

    fn time_into_slot_ms(&self) -> u64 {
        let seconds = self.time.saturating_sub(self.genesis_time);
        seconds.saturating_mul(1000) % self.spec.slot_duration_ms
    }

    fn slot_component_ms(&self, basis_points: u64) -> u64 {
        basis_points * self.spec.slot_duration_ms / BASIS_POINTS
    }

    /// `on_tick(store, time)`: advances the clock slot by slot, resetting the proposer boost
    /// at each new slot and realizing the pulled-up checkpoints at each new epoch.
    ///
    /// [spec]: phase0/fork-choice.md#on_tick
    pub fn on_tick(&mut self, time: u64) {
        let tick_slot = self.spec.get_slots_since_genesis(self.genesis_time, time);
        while self.get_current_slot() < tick_slot {
            let previous_time = self
                .spec
                .compute_time_at_slot(self.genesis_time, self.get_current_slot() + 1);
            self.on_tick_per_slot(previous_time);
        }
        self.on_tick_per_slot(time);
    }

    /// `on_tick_per_slot(store, time)`.
    ///
    /// [spec]: phase0/fork-choice.md#on_tick_per_slot
    fn on_tick_per_slot(&mut self, time: u64) {
        let previous_slot = self.get_current_slot();
        self.time = time;
        let current_slot = self.get_current_slot();
        if current_slot > previous_slot {
            self.proposer_boost_root = Root::ZERO;
            if current_slot.is_multiple_of(E::slots_per_epoch()) {
                let justified = self.unrealized_justified_checkpoint.clone();
                let finalized = self.unrealized_finalized_checkpoint.clone();
                self.update_checkpoints(&justified, &finalized);
            }
        }
    }

    /// `update_checkpoints(store, justified_checkpoint, finalized_checkpoint)`.
    ///
    /// [spec]: phase0/fork-choice.md#update_checkpoints
    fn update_checkpoints(&mut self, justified: &Checkpoint, finalized: &Checkpoint) {
        if justified.epoch > self.justified_checkpoint.epoch {
            self.justified_checkpoint = justified.clone();
        }
        if finalized.epoch > self.finalized_checkpoint.epoch {
            self.finalized_checkpoint = finalized.clone();
        }
    }

    /// `update_unrealized_checkpoints(store, ...)`.
    ///
    /// [spec]: phase0/fork-choice.md#update_unrealized_checkpoints
    fn update_unrealized_checkpoints(&mut self, justified: &Checkpoint, finalized: &Checkpoint) {
        if justified.epoch > self.unrealized_justified_checkpoint.epoch {
            self.unrealized_justified_checkpoint = justified.clone();
        }
        if finalized.epoch > self.unrealized_finalized_checkpoint.epoch {
            self.unrealized_finalized_checkpoint = finalized.clone();
        }
    }

    fn node_index(&self, root: &Root) -> Result<usize, Error> {
        self.proto.index_of(root).ok_or(Error::UnknownBlock(*root))
    }

    /// `get_checkpoint_block(store, root, epoch)`.
    ///
    /// [spec]: phase0/fork-choice.md#get_checkpoint_block
    pub fn get_checkpoint_block(&self, root: &Root, epoch: Epoch) -> Result<Root, Error> {
        let index = self.node_index(root)?;
        let ancestor = self.proto.get_ancestor(index, epoch * E::slots_per_epoch());
        Ok(self.proto.nodes()[ancestor].root)
    }

    /// `get_ancestor(store, root, slot)`.
    ///
    /// [spec]: phase0/fork-choice.md#get_ancestor
    pub fn get_ancestor(&self, root: &Root, slot: Slot) -> Result<Root, Error> {
        let index = self.node_index(root)?;
        Ok(self.proto.nodes()[self.proto.get_ancestor(index, slot)].root)
    }

    /// `get_shuffling_dependent_root(store, root, epoch)`.
    ///
    /// [spec]: phase0/fork-choice.md#get_shuffling_dependent_root
    fn get_shuffling_dependent_root(&self, root: &Root, epoch: Epoch) -> Result<Root, Error> {
        if epoch <= E::MIN_SEED_LOOKAHEAD {
            return Ok(Root::ZERO);
        }
        let slot = (epoch - E::MIN_SEED_LOOKAHEAD) * E::slots_per_epoch() - 1;
        self.get_ancestor(root, slot)
    }

    /// A block of `slot` arriving now: refused when from the future, else whether it is timely
    /// (in its own slot, before the attestation deadline).
    fn check_arrival(&self, slot: Slot) -> Result<bool, Error> {
        let current_slot = self.get_current_slot();
        if current_slot < slot {
            return Err(Error::FutureBlock {
                block_slot: slot,
                current_slot,
            });
        }
        Ok(current_slot == slot
            && self.time_into_slot_ms() < self.slot_component_ms(self.spec.attestation_due_bps))
    }

    /// The checks of `on_block` that the store can change between [`Self::check_block`] and
    /// [`Self::insert_block`]: the parent not invalidated, the block after the finalized slot
    /// and descending from the finalized checkpoint.
    fn check_block_place(
        &self,
        block_root: Root,
        parent_root: Root,
        slot: Slot,
    ) -> Result<(), Error> {
        if self.is_invalidated(&parent_root) {
            return Err(Error::InvalidatedParent {
                block: block_root,
                parent: parent_root,
            });
        }
        let finalized_slot = self.finalized_checkpoint.epoch * E::slots_per_epoch();
        if slot <= finalized_slot {
            return Err(Error::NotAfterFinalizedSlot {
                block_slot: slot,
                finalized_slot,
            });
        }
        let finalized_checkpoint_block =
            self.get_checkpoint_block(&parent_root, self.finalized_checkpoint.epoch)?;
        if finalized_checkpoint_block != self.finalized_checkpoint.root {
            return Err(Error::NotFinalizedDescendant {
                block: block_root,
                finalized: self.finalized_checkpoint.root,
            });
        }
        Ok(())
    }

    /// The first part of `on_block`, on the block's root, parent and slot: the checks against
    /// the store (known parent, not invalidated, not from the future, after the finalized slot,
    /// descending from the finalized checkpoint) and its timeliness, judged now, as the block
    /// arrives. `None` for a block already in the store. The availability check and the state
    /// transition follow outside fork choice, then [`Self::insert_block`].
    pub fn check_block(
        &self,
        block_root: Root,
        parent_root: Root,
        slot: Slot,
    ) -> Result<Option<Arrival>, Error> {
        if self.contains_block(&block_root) {
            return Ok(None);
        }
        if !self.contains_block(&parent_root) {
            return Err(Error::UnknownParent {
                block: block_root,
                parent: parent_root,
            });
        }
        let is_timely = self.check_arrival(slot)?;
        self.check_block_place(block_root, parent_root, slot)?;
        Ok(Some(Arrival { is_timely }))
    }

    /// [`Self::check_block`] for a block whose parent is processed but not inserted yet (the
    /// next block of a range-sync segment, whose signatures are verified with its parent's
    /// before either is inserted): not from the future, and its timeliness. The checks that
    /// need the parent in the store were the parent's own; [`Self::insert_block`] makes them
    /// all again once the parent is in. `None` for a block already in the store.
    pub fn check_child_block(
        &self,
        block_root: Root,
        slot: Slot,
    ) -> Result<Option<Arrival>, Error> {
        if self.contains_block(&block_root) {
            return Ok(None);
        }
        let is_timely = self.check_arrival(slot)?;
        Ok(Some(Arrival { is_timely }))
    }

    /// The last part of `on_block`: the block, its transition passed, into the tree; the
    /// proposer boost and the checkpoints updated (including the pulled-up tip's). What
    /// [`Self::check_block`] checked is checked again, as the store may have moved since (a
    /// block the store gained meanwhile is accepted without change). The balances of the
    /// block's justified and unrealized justified checkpoints should be handed over first
    /// ([`Self::set_justified_balances`]): either may become the store's justified checkpoint
    /// (now, or at the next epoch boundary), and the head is not computed without its balances.
    pub fn insert_block(&mut self, block: &BlockSummary) -> Result<Root, Error> {
        let BlockSummary {
            root: block_root,
            parent_root,
            slot,
            proposer_index,
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
            payload_hash,
            is_timely,
        } = block.clone();
        if self.contains_block(&block_root) {
            return Ok(block_root);
        }
        if !self.contains_block(&parent_root) {
            return Err(Error::UnknownParent {
                block: block_root,
                parent: parent_root,
            });
        }
        self.check_block_place(block_root, parent_root, slot)?;

        // The head before the block is added (for the proposer boost's dependent-root check).
        let head = self.get_head()?;

        // From here on nothing fails but internal invariants.
        self.proto.insert(ProtoNode {
            root: block_root,
            parent: None,
            slot,
            proposer_index,
            parent_root,
            justified: justified.clone(),
            unrealized_justified: unrealized_justified.clone(),
            finalized_epoch: finalized.epoch,
            timely: is_timely,
            weight: 0,
            execution_status: ExecutionStatus::NotValidated,
        })?;
        if let Some(hash) = payload_hash {
            self.payload_hashes.insert(block_root, hash);
        }

        // `update_proposer_boost_root`.
        let epoch = self.get_current_store_epoch();
        let is_first_block = self.proposer_boost_root == Root::ZERO;
        let same_dependent_root = self.get_shuffling_dependent_root(&head.root, epoch)?
            == self.get_shuffling_dependent_root(&block_root, epoch)?;
        if is_timely && is_first_block && same_dependent_root {
            self.proposer_boost_root = block_root;
        }

        self.update_checkpoints(&justified, &finalized);
        // `compute_pulled_up_tip`.
        self.update_unrealized_checkpoints(&unrealized_justified, &unrealized_finalized);
        if compute_epoch_at_slot::<E>(slot) < epoch {
            self.update_checkpoints(&unrealized_justified, &unrealized_finalized);
        }
        self.maybe_prune()?;
        Ok(block_root)
    }

    /// Replaces the finalized checkpoint, for a store started from a chosen checkpoint (the
    /// spec's gossip vectors give one beside the anchor state). `checkpoint.root` need not be
    /// a block of the store: blocks that do not descend from it then fail the checks that read
    /// it (`get_checkpoint_block`).
    pub fn set_finalized_checkpoint(&mut self, checkpoint: Checkpoint) {
        self.finalized_checkpoint = checkpoint;
    }

    /// `validate_on_attestation(store, attestation, is_from_block)`.
    ///
    /// [spec]: phase0/fork-choice.md#validate_on_attestation
    pub fn validate_on_attestation(
        &self,
        data: &AttestationData,
        is_from_block: bool,
    ) -> Result<(), Error> {
        let target = &data.target;
        if !is_from_block {
            // `validate_target_epoch_against_current_time`.
            let current = self.get_current_store_epoch();
            // GENESIS_EPOCH is 0: at genesis the previous epoch is the current one.
            let previous = current.saturating_sub(1);
            if target.epoch != current && target.epoch != previous {
                return Err(Error::TargetEpochOutOfRange {
                    target: target.epoch,
                    current,
                });
            }
        }
        if target.epoch != compute_epoch_at_slot::<E>(data.slot) {
            return Err(Error::TargetEpochSlotMismatch {
                target: target.epoch,
                slot: data.slot,
            });
        }
        if !self.contains_block(&target.root) {
            return Err(Error::UnknownTargetBlock(target.root));
        }
        let head = self
            .proto
            .get(&data.beacon_block_root)
            .ok_or(Error::UnknownHeadBlock(data.beacon_block_root))?;
        if head.slot > data.slot {
            return Err(Error::AttestsToFutureBlock {
                attestation_slot: data.slot,
                block_slot: head.slot,
            });
        }
        let expected = self.get_checkpoint_block(&data.beacon_block_root, target.epoch)?;
        if target.root != expected {
            return Err(Error::InconsistentTarget {
                target: target.root,
                expected,
            });
        }
        let current_slot = self.get_current_slot();
        if current_slot < data.slot + 1 {
            return Err(Error::FutureAttestation {
                attestation_slot: data.slot,
                current_slot,
            });
        }
        Ok(())
    }

    /// `on_attestation(store, attestation, is_from_block)` for an attestation whose attesting
    /// indices its caller computed and checked (`get_indexed_attestation` and
    /// `is_valid_indexed_attestation` on `store_target_checkpoint_state(store, target)`, which
    /// the owner of the states runs): `validate_on_attestation`, then the votes.
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation
    pub fn on_indexed_attestation(
        &mut self,
        data: &AttestationData,
        attesting_indices: &[ValidatorIndex],
        is_from_block: bool,
    ) -> Result<(), Error> {
        self.validate_on_attestation(data, is_from_block)?;
        let node = self.node_index(&data.beacon_block_root)? as u32;
        self.update_latest_messages(attesting_indices, node, data.target.epoch)
    }

    /// `on_attestation(store, attestation, is_from_block=False)` for an attestation whose
    /// signature and attesting indices gossip validation established already (a
    /// `SingleAttestation`'s one attester, an aggregate's indices): the timing and target
    /// checks of `validate_on_attestation`, then the votes.
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation
    pub fn on_verified_attestation(
        &mut self,
        data: &AttestationData,
        attesting_indices: &[ValidatorIndex],
    ) -> Result<(), Error> {
        self.validate_on_attestation(data, false)?;
        let node = self.node_index(&data.beacon_block_root)? as u32;
        self.update_latest_messages(attesting_indices, node, data.target.epoch)
    }

    /// `update_latest_messages(store, attesting_indices, attestation)` with the head vote as
    /// the node index `node`. This is the part of `on_attestation` that runs per vote once the
    /// attestation is verified.
    ///
    /// [spec]: phase0/fork-choice.md#update_latest_messages
    pub fn update_latest_messages(
        &mut self,
        attesting_indices: &[ValidatorIndex],
        node: u32,
        target_epoch: Epoch,
    ) -> Result<(), Error> {
        if self.proto.node(node as usize).is_none() {
            return Err(Error::VoteNodeOutOfRange(node));
        }
        // The tracker skips validators in `equivocating_indices` (it marks them too).
        for &index in attesting_indices {
            self.votes.process_attestation(index, node, target_epoch)?;
        }
        Ok(())
    }

    /// The end of `on_attester_slashing` for a slashing already found valid (on gossip or by
    /// the API, against the head state): the validators in both of its attestations, given,
    /// are equivocating and their votes stop counting.
    pub fn on_verified_attester_slashing(
        &mut self,
        equivocating: &[ValidatorIndex],
    ) -> Result<(), Error> {
        for &index in equivocating {
            self.votes.set_equivocating(index)?;
            self.equivocating_indices.insert(index);
        }
        Ok(())
    }

    /// The justified checkpoint's balances, for a checkpoint that may become justified (the
    /// justified and unrealized justified checkpoints of a block about to be inserted, the
    /// store's after [`Self::restore_persisted`]: [`Self::wanted_justified_balances`]). Kept
    /// until the justified checkpoint passes its epoch; ignored for a checkpoint before it.
    pub fn set_justified_balances(&mut self, checkpoint: &Checkpoint, balances: JustifiedBalances) {
        if checkpoint.epoch < self.justified_checkpoint.epoch
            || self.has_justified_balances(checkpoint)
        {
            return;
        }
        self.candidate_balances
            .insert(key(checkpoint), Arc::new(balances));
    }

    /// Whether fork choice holds the balances of `checkpoint` ([`Self::set_justified_balances`]).
    pub fn has_justified_balances(&self, checkpoint: &Checkpoint) -> bool {
        self.balances_checkpoint == Some(key(checkpoint))
            || self.candidate_balances.contains_key(&key(checkpoint))
    }

    /// The store's justified and unrealized justified checkpoints whose balances fork choice
    /// does not hold: the head cannot be computed without the first, nor after the next epoch
    /// boundary without the second.
    pub fn wanted_justified_balances(&self) -> Vec<Checkpoint> {
        let mut wanted: Vec<Checkpoint> = [
            &self.justified_checkpoint,
            &self.unrealized_justified_checkpoint,
        ]
        .into_iter()
        .filter(|checkpoint| !self.has_justified_balances(checkpoint))
        .cloned()
        .collect();
        wanted.dedup();
        wanted
    }

    /// Switches to the justified checkpoint's balances when the justified checkpoint changed.
    fn refresh_justified_balances(&mut self) -> Result<(), Error> {
        let justified = self.justified_checkpoint.clone();
        let k = key(&justified);
        if self.balances_checkpoint == Some(k) {
            return Ok(());
        }
        let balances = self
            .candidate_balances
            .get(&k)
            .cloned()
            .ok_or_else(|| Error::JustifiedBalancesMissing(justified.clone()))?;
        self.balances = balances;
        self.balances_checkpoint = Some(k);
        let epoch = justified.epoch;
        self.candidate_balances.retain(|(e, _), _| *e > epoch);
        self.votes.queue_all();
        Ok(())
    }

    /// `get_proposer_score(store)`: `PROPOSER_SCORE_BOOST` percent of a slot's committee
    /// weight, counting only the active validators that are not slashed (the vectors'
    /// `proposer_boost_excludes_slashed_validators`: the boost never outweighs the votes that
    /// can count).
    ///
    /// [spec]: phase0/fork-choice.md#get_proposer_score
    fn get_proposer_score(&self) -> Gwei {
        let committee_weight = self.balances.total_unslashed / E::slots_per_epoch();
        committee_weight.saturating_mul(self.spec.proposer_score_boost) / 100
    }

    /// `calculate_committee_fraction(justified_state, percent)`.
    fn calculate_committee_fraction(&self, percent: u64) -> Gwei {
        let committee_weight = self.balances.total_active / E::slots_per_epoch();
        committee_weight.saturating_mul(percent) / 100
    }

    /// Brings node weights up to date: queued votes, new balances, the proposer boost.
    fn update_weights(&mut self) -> Result<(), Error> {
        self.refresh_justified_balances()?;
        let mut deltas = self
            .votes
            .compute_deltas(self.proto.len(), self.balances.vote_weights())?;
        let new_boost = if self.proposer_boost_root == Root::ZERO {
            None
        } else {
            Some((self.proposer_boost_root, self.get_proposer_score()))
        };
        if let Some((root, amount)) = self.applied_boost
            && let Some(index) = self.proto.index_of(&root)
        {
            deltas[index] = deltas[index]
                .checked_sub_unsigned(amount)
                .ok_or(Error::DeltaOverflow)?;
        }
        if let Some((root, amount)) = new_boost
            && let Some(index) = self.proto.index_of(&root)
        {
            deltas[index] = deltas[index]
                .checked_add_unsigned(amount)
                .ok_or(Error::DeltaOverflow)?;
        }
        self.proto.apply_deltas(&mut deltas)?;
        self.votes.commit(self.balances.vote_weights());
        self.applied_boost = new_boost;
        Ok(())
    }

    /// `get_head(store)`.
    ///
    /// [spec]: phase0/fork-choice.md#get_head
    pub fn get_head(&mut self) -> Result<Head, Error> {
        self.update_weights()?;
        let head = self.proto.find_head(
            &self.justified_checkpoint,
            &self.finalized_checkpoint,
            self.get_current_store_epoch(),
            E::slots_per_epoch(),
        )?;
        let node = &self.proto.nodes()[head];
        Ok(Head {
            root: node.root,
            slot: node.slot,
        })
    }

    /// `get_weight(store, root)`: the attestation score plus the proposer boost where the block
    /// is an ancestor of the boosted block.
    ///
    /// [spec]: phase0/fork-choice.md#get_weight
    pub fn get_weight(&mut self, root: &Root) -> Result<Gwei, Error> {
        self.update_weights()?;
        Ok(self.proto.nodes()[self.node_index(root)?].weight)
    }

    /// `get_attestation_score(store, root, justified_state)`: the weight without the boost.
    /// Weights must be up to date.
    fn attestation_score(&self, index: usize) -> Gwei {
        let node = &self.proto.nodes()[index];
        match self.applied_boost {
            Some((root, amount)) => match self.proto.index_of(&root) {
                Some(boosted) if self.proto.is_descendant(index, boosted) => {
                    node.weight.saturating_sub(amount)
                }
                _ => node.weight,
            },
            None => node.weight,
        }
    }

    /// `is_head_weak(store, head_root)`: the head's votes, counting equivocators of its slot's
    /// committees (`head_slot_committee`: every member of the committees of the head block's
    /// slot, by its post-state), are below `REORG_HEAD_WEIGHT_THRESHOLD`. Weights must be up
    /// to date.
    ///
    /// [spec]: phase0/fork-choice.md#is_head_weak
    fn is_head_weak(&self, head: usize, head_slot_committee: &[ValidatorIndex]) -> bool {
        let threshold = self.calculate_committee_fraction(self.spec.reorg_head_weight_threshold);
        let mut weight = self.attestation_score(head);
        if !self.equivocating_indices.is_empty() {
            for &i in head_slot_committee {
                if self.equivocating_indices.contains(&i) {
                    weight = weight.saturating_add(self.balances.effective_balance(i));
                }
            }
        }
        weight < threshold
    }

    /// `is_parent_strong(store, root)`.
    ///
    /// [spec]: phase0/fork-choice.md#is_parent_strong
    fn is_parent_strong(&self, parent: usize) -> bool {
        let threshold = self.calculate_committee_fraction(self.spec.reorg_parent_weight_threshold);
        self.attestation_score(parent) > threshold
    }

    /// `is_ffg_competitive(store, head_root, parent_root)`.
    fn is_ffg_competitive(&self, head: usize, parent: usize) -> bool {
        let nodes = self.proto.nodes();
        nodes[head].unrealized_justified == nodes[parent].unrealized_justified
    }

    /// `is_finalization_ok(store, slot)`.
    fn is_finalization_ok(&self, slot: Slot) -> bool {
        compute_epoch_at_slot::<E>(slot).saturating_sub(self.finalized_checkpoint.epoch)
            <= self.spec.reorg_max_epochs_since_finalization
    }

    /// `is_proposing_on_time(store)`.
    fn is_proposing_on_time(&self) -> bool {
        self.time_into_slot_ms() <= self.slot_component_ms(self.spec.proposer_reorg_cutoff_bps)
    }

    /// `is_proposer_equivocation(store, root)`: another block of the same proposer and slot.
    fn is_proposer_equivocation(&self, index: usize) -> bool {
        let node = &self.proto.nodes()[index];
        self.proto
            .nodes()
            .iter()
            .filter(|n| n.slot == node.slot && n.proposer_index == node.proposer_index)
            .count()
            > 1
    }

    /// `is_not_epoch_boundary(slot)` / `is_shuffling_stable(slot)` before Fulu. From Fulu the
    /// proposers of the next epoch are fixed a whole epoch ahead (EIP-7917's
    /// `proposer_lookahead`), so a re-org at the epoch boundary cannot change the proposer and
    /// the condition is dropped (the vectors' `get_proposer_head/epoch_boundary`).
    fn shuffling_stable_at(&self, slot: Slot) -> bool {
        self.spec.fork_name_at_slot::<E>(slot) >= types::ForkName::Fulu
            || !slot.is_multiple_of(E::slots_per_epoch())
    }

    /// `get_proposer_head(store, head_root, slot)` with what it reads of states given:
    /// `head_slot_committee`, every member of the committees of the head block's slot by the
    /// head block's post-state (`is_head_weak` counts the equivocators among them).
    ///
    /// [spec]: phase0/fork-choice.md#get_proposer_head
    pub fn get_proposer_head(
        &mut self,
        head_root: &Root,
        slot: Slot,
        head_slot_committee: &[ValidatorIndex],
    ) -> Result<Root, Error> {
        self.update_weights()?;
        let head = self.node_index(head_root)?;
        let head_node = self.proto.nodes()[head].clone();
        let parent = self.node_index(&head_node.parent_root)?;
        let parent_slot = self.proto.nodes()[parent].slot;

        let head_late = !head_node.timely;
        let not_epoch_boundary = self.shuffling_stable_at(slot);
        let ffg_competitive = self.is_ffg_competitive(head, parent);
        let finalization_ok = self.is_finalization_ok(slot);
        let proposing_on_time = self.is_proposing_on_time();
        let parent_slot_ok = parent_slot + 1 == head_node.slot;
        let current_time_ok = head_node.slot + 1 == slot;
        let single_slot_reorg = parent_slot_ok && current_time_ok;
        if self.proposer_boost_root == *head_root {
            return Err(Error::BoostOnHead(*head_root));
        }
        let head_weak = self.is_head_weak(head, head_slot_committee);
        let parent_strong = self.is_parent_strong(parent);
        let proposer_equivocation = self.is_proposer_equivocation(head);

        let reorg = head_late
            && not_epoch_boundary
            && ffg_competitive
            && finalization_ok
            && proposing_on_time
            && single_slot_reorg
            && head_weak
            && parent_strong;
        if reorg || (head_weak && current_time_ok && proposer_equivocation) {
            Ok(head_node.parent_root)
        } else {
            Ok(*head_root)
        }
    }

    /// `should_override_forkchoice_update(store, head_root)` with what it reads of states
    /// given: `head_slot_committee` as for [`Self::get_proposer_head`], and
    /// `proposal_slot_proposer`, the proposer of the slot after the head's by the head's parent
    /// post-state advanced to that slot (`proposing_reorg_slot` asks `validator_is_connected`
    /// of it).
    ///
    /// [spec]: bellatrix/fork-choice.md#should_override_forkchoice_update (v1.5)
    pub fn should_override_forkchoice_update(
        &mut self,
        head_root: &Root,
        head_slot_committee: &[ValidatorIndex],
        proposal_slot_proposer: ValidatorIndex,
        validator_is_connected: impl Fn(ValidatorIndex) -> bool,
    ) -> Result<bool, Error> {
        self.update_weights()?;
        let head = self.node_index(head_root)?;
        let head_node = self.proto.nodes()[head].clone();
        let parent = self.node_index(&head_node.parent_root)?;
        let parent_slot = self.proto.nodes()[parent].slot;
        let current_slot = self.get_current_slot();
        let proposal_slot = head_node.slot + 1;

        let head_late = !head_node.timely;
        let shuffling_stable = self.shuffling_stable_at(proposal_slot);
        let ffg_competitive = self.is_ffg_competitive(head, parent);
        let finalization_ok = self.is_finalization_ok(proposal_slot);
        let proposing_reorg_slot = validator_is_connected(proposal_slot_proposer);
        let parent_slot_ok = parent_slot + 1 == head_node.slot;
        let current_time_ok = head_node.slot == current_slot
            || (proposal_slot == current_slot && self.is_proposing_on_time());
        let single_slot_reorg = parent_slot_ok && current_time_ok;
        let (head_weak, parent_strong) = if current_slot > head_node.slot {
            (
                self.is_head_weak(head, head_slot_committee),
                self.is_parent_strong(parent),
            )
        } else {
            (true, true)
        };
        Ok(head_late
            && shuffling_stable
            && ffg_competitive
            && finalization_ok
            && proposing_reorg_slot
            && single_slot_reorg
            && head_weak
            && parent_strong)
    }

    /// Prunes once enough blocks sit before the finalized block.
    fn maybe_prune(&mut self) -> Result<(), Error> {
        let Some(finalized) = self.proto.index_of(&self.finalized_checkpoint.root) else {
            return Ok(());
        };
        if finalized >= self.config.prune_threshold.max(1) {
            self.prune()?;
        }
        Ok(())
    }

    /// The latest messages.
    pub(crate) fn votes(&self) -> &VoteTracker {
        &self.votes
    }

    /// `equivocating_indices`, in no order.
    pub(crate) fn equivocating_indices(&self) -> impl Iterator<Item = ValidatorIndex> + '_ {
        self.equivocating_indices.iter().copied()
    }

    /// A persisted block back into the tree (its post-state is its owner's).
    pub(crate) fn insert_restored_node(
        &mut self,
        node: ProtoNode,
        payload_hash: Option<Root>,
    ) -> Result<(), Error> {
        let root = node.root;
        self.proto.insert(node)?;
        if let Some(hash) = payload_hash {
            self.payload_hashes.insert(root, hash);
        }
        Ok(())
    }

    /// The persisted store checkpoints, each where it is newer than the one held.
    pub(crate) fn restore_checkpoints(
        &mut self,
        justified: Option<Checkpoint>,
        finalized: Option<Checkpoint>,
        unrealized_justified: Option<Checkpoint>,
        unrealized_finalized: Option<Checkpoint>,
    ) {
        let held = (
            self.justified_checkpoint.clone(),
            self.finalized_checkpoint.clone(),
        );
        self.update_checkpoints(
            justified.as_ref().unwrap_or(&held.0),
            finalized.as_ref().unwrap_or(&held.1),
        );
        let held = (
            self.unrealized_justified_checkpoint.clone(),
            self.unrealized_finalized_checkpoint.clone(),
        );
        self.update_unrealized_checkpoints(
            unrealized_justified.as_ref().unwrap_or(&held.0),
            unrealized_finalized.as_ref().unwrap_or(&held.1),
        );
    }

    /// A persisted equivocating index.
    pub(crate) fn mark_equivocating(&mut self, index: ValidatorIndex) -> Result<(), Error> {
        self.votes.set_equivocating(index)?;
        self.equivocating_indices.insert(index);
        Ok(())
    }

    /// A persisted latest message (on node `node` of this tree, or none when its block is not
    /// in it). Returns whether it was taken.
    pub(crate) fn restore_latest_message(
        &mut self,
        index: ValidatorIndex,
        node: u32,
        epoch: Epoch,
    ) -> Result<bool, Error> {
        self.votes.process_attestation(index, node, epoch)
    }

    /// Drops every block that does not descend from the finalized block.
    pub fn prune(&mut self) -> Result<(), Error> {
        // Weights first, so no queued vote refers to a node about to disappear.
        self.update_weights()?;
        let remap = self.proto.prune(&self.finalized_checkpoint.root)?;
        self.votes.remap(&remap);
        let proto = &self.proto;
        self.payload_hashes
            .retain(|root, _| proto.index_of(root).is_some());
        Ok(())
    }
}

/// `on_attester_slashing`'s checks that need no state: the two attestations are slashable
/// together. Returns the validators in both (`store.equivocating_indices` takes them, through
/// [`ForkChoice::on_verified_attester_slashing`], once the caller found both attestations valid
/// in the justified checkpoint block's post-state).
///
/// [spec]: phase0/fork-choice.md#on_attester_slashing
pub fn slashable_indices<E: EthSpec>(
    slashing: &AttesterSlashing<E>,
) -> Result<Vec<ValidatorIndex>, Error> {
    let a1 = &slashing.attestation_1;
    let a2 = &slashing.attestation_2;
    if !state_processing::common::is_slashable_attestation_data(&a1.data, &a2.data) {
        return Err(Error::NotSlashable);
    }
    let second: FxHashSet<ValidatorIndex> = a2.attesting_indices.iter().copied().collect();
    Ok(a1
        .attesting_indices
        .iter()
        .copied()
        .filter(|i| second.contains(i))
        .collect())
}

/// A post-state's justified and finalized checkpoints, and those of its pulled-up tip
/// ([`post_state_checkpoints`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PostStateCheckpoints {
    /// The post-state's current justified checkpoint.
    pub justified: types::phase0::Checkpoint,
    /// The post-state's finalized checkpoint.
    pub finalized: types::phase0::Checkpoint,
    /// The pulled-up tip's current justified checkpoint.
    pub unrealized_justified: types::phase0::Checkpoint,
    /// The pulled-up tip's finalized checkpoint.
    pub unrealized_finalized: types::phase0::Checkpoint,
}

/// The checkpoints a block's summary records: the post-state's, and the unrealized ones of
/// `compute_pulled_up_tip` (justification and finalization run on a copy of the post-state).
/// One place for the chain's import paths and the spec-test stores.
///
/// [spec]: phase0/fork-choice.md#compute_pulled_up_tip
pub fn post_state_checkpoints<E: types::EthSpec>(
    state: &mut state_processing::CachedBeaconState<E>,
) -> Result<PostStateCheckpoints, Error> {
    state.progressive_balances().map_err(Error::State)?;
    let mut pulled_up = state.clone();
    state_processing::per_epoch::process_justification_and_finalization_progressive(&mut pulled_up)
        .map_err(Error::EpochProcessing)?;
    let view = state.view().map_err(Error::State)?;
    let pulled = pulled_up.view().map_err(Error::State)?;
    Ok(PostStateCheckpoints {
        justified: view.current_justified_checkpoint.clone(),
        finalized: view.finalized_checkpoint.clone(),
        unrealized_justified: pulled.current_justified_checkpoint.clone(),
        unrealized_finalized: pulled.finalized_checkpoint.clone(),
    })
}
