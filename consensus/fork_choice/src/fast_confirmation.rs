//! The fast confirmation rule (FCR): which block of the canonical chain will stay canonical in
//! the view of every honest validator, assuming synchrony from now on and at most
//! [`CONFIRMATION_BYZANTINE_THRESHOLD`] percent of Byzantine stake.
//!
//! [`FastConfirmationStore`] holds the spec's `FastConfirmationStore` fields; the fork-choice
//! `Store` it reads is a [`ForkChoice`] passed to each call instead of a field (the store has one
//! owner). The spec's functions are methods of [`FcrContext`], one evaluation of the rule
//! against one moment of the store: it gets the head once and keeps what the spec would
//! recompute on every call (balance sources, shufflings, attestation scores), which are fixed
//! while the store does not change. What it derives from states alone (the shufflings, the
//! observed checkpoints' balances, the pulled-up head state) carries over to the next slot's
//! call, keyed so that it cannot go stale. `on_fast_confirmation` changes the FCR store only when
//! the whole evaluation succeeded.
//!
//! Two places read the store differently from the pyspec, with the same semantics:
//! - `store.blocks[root].body.execution_payload.block_hash` (`get_safe_execution_block_hash`) is
//!   the block's post-state `latest_execution_payload_header.block_hash`, which
//!   `process_execution_payload` sets from that payload; the store keeps no block bodies, so the
//!   anchor block's hash is given when the FCR store is created.
//! - `get_slot_committee` computes the shuffling from the head state for any epoch the spec
//!   asks (the head state's committee cache only serves its previous, current and next epoch).
//!
//! `is_one_confirmed` must answer `False` for a block whose payload is not `VALID` (optimistic
//! sync). It does for an invalidated block; the store does not yet tell a block imported
//! optimistically (`NOT_VALIDATED`) from a validated one, so such a block still counts.
//!
//! [spec]: phase0/fast-confirmation.md, bellatrix/fast-confirmation.md

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use state_processing::{
    CachedBeaconState,
    common::{
        compute_epoch_at_slot, compute_start_slot_at_epoch, get_active_validator_indices,
        get_committee_count_per_slot_from_active_count, get_current_epoch, get_seed,
        is_active_validator,
    },
    view::StateRef,
};
use types::{
    Epoch, EthSpec, Gwei, Hash32, Root, Slot, ValidatorIndex, phase0::Checkpoint,
    signing::DOMAIN_BEACON_ATTESTER,
};

use crate::{Error, ForkChoice};

/// `COMMITTEE_WEIGHT_ESTIMATION_ADJUSTMENT_FACTOR`: per mille added to the estimated weight of
/// committees of a slot range that crosses an epoch boundary without covering a full epoch.
pub const COMMITTEE_WEIGHT_ESTIMATION_ADJUSTMENT_FACTOR: u64 = 5;

/// `CONFIRMATION_BYZANTINE_THRESHOLD` (configuration): the assumed maximum percentage of
/// Byzantine validators, its default and its maximum value.
pub const CONFIRMATION_BYZANTINE_THRESHOLD: u64 = 25;

/// `FastConfirmationStore`: the variables the rule tracks between slots.
///
/// [spec]: phase0/fast-confirmation.md#fastconfirmationstore
#[derive(Debug, Clone)]
pub struct FastConfirmationStore {
    /// `confirmed_root`: the most recent confirmed block.
    pub confirmed_root: Root,
    /// `previous_epoch_observed_justified_checkpoint`.
    pub previous_epoch_observed_justified_checkpoint: Checkpoint,
    /// `current_epoch_observed_justified_checkpoint`.
    pub current_epoch_observed_justified_checkpoint: Checkpoint,
    /// `previous_epoch_greatest_unrealized_checkpoint`.
    pub previous_epoch_greatest_unrealized_checkpoint: Checkpoint,
    /// `previous_slot_head`: the head at the start of the previous slot.
    pub previous_slot_head: Root,
    /// `current_slot_head`: the head at the start of the current slot.
    pub current_slot_head: Root,
    /// `CONFIRMATION_BYZANTINE_THRESHOLD` in use.
    byzantine_threshold: u64,
    /// The anchor block and its `body.execution_payload.block_hash`.
    anchor: (Root, Hash32),
    /// What earlier calls derived from states, which does not change for the same key.
    derived: Derived,
}

/// The states the rule reads, which fork choice does not hold: its caller (the owner of the
/// states) gives them to each [`FastConfirmationStore::on_fast_confirmation`].
#[derive(Debug, Clone, Copy)]
pub struct FastConfirmationInputs<'a, E: EthSpec> {
    /// `get_head(store).root`: the head the states below are of (checked).
    pub head: Root,
    /// The head block's post-state: the shufflings of `get_slot_committee`.
    pub head_state: &'a CachedBeaconState<E>,
    /// `get_pulled_up_head_state(store)`: the head state advanced to the current epoch's first
    /// slot when it is of an earlier epoch (the checkpoint state of the current epoch and the
    /// head), else the head state.
    pub pulled_up_head_state: &'a CachedBeaconState<E>,
    /// `store.checkpoint_states` of the previous and the current epoch's observed justified
    /// checkpoints, as [`FastConfirmationStore::balance_checkpoints`] names them.
    pub balance_states: [&'a CachedBeaconState<E>; 2],
}

/// What the rule derives from the store's states, kept between calls: none of it changes for
/// the same key (a shuffling's epoch and seed, a checkpoint, a head and epoch).
#[derive(Debug, Clone, Default)]
struct Derived {
    /// Shufflings computed by `get_slot_committee`, newest last.
    shufflings: Vec<Arc<EpochShuffling>>,
    /// Balance sources of checkpoint states.
    checkpoint_sources: FxHashMap<(Epoch, Root), Arc<BalanceSource>>,
    /// The balance source of `get_pulled_up_head_state`, for a head and epoch.
    pulled_up_head_state: Option<((Root, Epoch), Arc<BalanceSource>)>,
}

/// How many epoch shufflings the FCR store keeps between calls.
const SHUFFLINGS_KEPT: usize = 4;

/// `get_fast_confirmation_store(store)`, for a store created at its anchor block, whose body's
/// `execution_payload.block_hash` is `anchor_execution_block_hash`.
///
/// [spec]: phase0/fast-confirmation.md#get_fast_confirmation_store
pub fn get_fast_confirmation_store<E: EthSpec>(
    store: &ForkChoice<E>,
    anchor_execution_block_hash: Hash32,
) -> FastConfirmationStore {
    let finalized = store.finalized_checkpoint().clone();
    FastConfirmationStore {
        confirmed_root: finalized.root,
        previous_epoch_observed_justified_checkpoint: finalized.clone(),
        current_epoch_observed_justified_checkpoint: finalized.clone(),
        previous_epoch_greatest_unrealized_checkpoint: finalized.clone(),
        previous_slot_head: finalized.root,
        current_slot_head: finalized.root,
        byzantine_threshold: CONFIRMATION_BYZANTINE_THRESHOLD,
        anchor: (finalized.root, anchor_execution_block_hash),
        derived: Derived::default(),
    }
}

impl FastConfirmationStore {
    /// Sets `CONFIRMATION_BYZANTINE_THRESHOLD`, at most its maximum value (25).
    pub fn set_byzantine_threshold(&mut self, percent: u64) -> Result<(), Error> {
        if percent > CONFIRMATION_BYZANTINE_THRESHOLD {
            return Err(Error::ByzantineThresholdTooHigh(percent));
        }
        self.byzantine_threshold = percent;
        Ok(())
    }

    /// The checkpoints whose states are the balance sources of the next
    /// [`Self::on_fast_confirmation`] on `store` ([`FastConfirmationInputs::balance_states`]):
    /// the previous and the current epoch's observed justified checkpoints as
    /// `update_fast_confirmation_variables` leaves them.
    pub fn balance_checkpoints<E: EthSpec>(&self, store: &ForkChoice<E>) -> [Checkpoint; 2] {
        let current_slot = store.get_current_slot();
        let greatest = if is_start_slot_at_epoch::<E>(current_slot + 1) {
            store.unrealized_justified_checkpoint()
        } else {
            &self.previous_epoch_greatest_unrealized_checkpoint
        };
        if is_start_slot_at_epoch::<E>(current_slot) {
            [
                self.current_epoch_observed_justified_checkpoint.clone(),
                greatest.clone(),
            ]
        } else {
            [
                self.previous_epoch_observed_justified_checkpoint.clone(),
                self.current_epoch_observed_justified_checkpoint.clone(),
            ]
        }
    }

    /// `on_fast_confirmation(fcr_store)` with the states it reads given ([`FastConfirmationInputs`]):
    /// `update_fast_confirmation_variables`, then `confirmed_root = get_latest_confirmed(fcr_store)`.
    /// Call once per slot, after the attestations of past slots were applied and before the
    /// attestation deadline.
    ///
    /// [spec]: phase0/fast-confirmation.md#on_fast_confirmation
    pub fn on_fast_confirmation<E: EthSpec>(
        &mut self,
        store: &mut ForkChoice<E>,
        inputs: &FastConfirmationInputs<'_, E>,
    ) -> Result<(), Error> {
        let balance_checkpoints = self.balance_checkpoints(store);
        let mut ctx = FcrContext::new(store, self, inputs, balance_checkpoints)?;
        let mut updated = self.clone();
        ctx.update_fast_confirmation_variables(&mut updated)?;
        let confirmed = ctx.get_latest_confirmed(&updated)?;
        let mut derived = std::mem::take(&mut ctx.derived);
        // Only the observed justified checkpoints are balance sources of later calls.
        let keep = [
            &updated.previous_epoch_observed_justified_checkpoint,
            &updated.current_epoch_observed_justified_checkpoint,
        ];
        derived
            .checkpoint_sources
            .retain(|k, _| keep.iter().any(|c| (c.epoch, c.root) == *k));
        *self = updated;
        self.confirmed_root = confirmed;
        self.derived = derived;
        Ok(())
    }

    /// `get_safe_execution_block_hash(fcr_store)`: the payload block hash of the confirmed
    /// block, handed to the execution engine as the safe block.
    ///
    /// [spec]: bellatrix/fast-confirmation.md#new-get_safe_execution_block_hash
    pub fn get_safe_execution_block_hash<E: EthSpec>(
        &self,
        store: &ForkChoice<E>,
    ) -> Result<Hash32, Error> {
        if self.confirmed_root == self.anchor.0 {
            return Ok(self.anchor.1);
        }
        // Gloas takes the confirmed block's bid's `parent_block_hash` (fork choice, issue 43);
        // fork choice tracks the payload hashes of Electra and Fulu blocks.
        store
            .payload_block_hash(&self.confirmed_root)
            .ok_or(Error::UnknownBlock(self.confirmed_root))
    }
}

/// `get_node_for_root(block_root)`: fork-choice nodes are block roots here.
///
/// [spec]: phase0/fast-confirmation.md#get_node_for_root
pub fn get_node_for_root(block_root: Root) -> Root {
    block_root
}

/// `is_start_slot_at_epoch(slot)`.
///
/// [spec]: phase0/fast-confirmation.md#is_start_slot_at_epoch
pub fn is_start_slot_at_epoch<E: EthSpec>(slot: Slot) -> bool {
    slot.is_multiple_of(E::slots_per_epoch())
}

/// `compute_slots_since_epoch_start(slot)`.
fn compute_slots_since_epoch_start<E: EthSpec>(slot: Slot) -> u64 {
    slot % E::slots_per_epoch()
}

/// `is_full_validator_set_covered(start_slot, end_slot)`: whether the slots `start_slot..=end_slot`
/// include an entire epoch.
///
/// [spec]: phase0/fast-confirmation.md#is_full_validator_set_covered
pub fn is_full_validator_set_covered<E: EthSpec>(start_slot: Slot, end_slot: Slot) -> bool {
    let start_full_epoch = compute_epoch_at_slot::<E>(start_slot + E::slots_per_epoch() - 1);
    let end_full_epoch = compute_epoch_at_slot::<E>(end_slot + 1);
    start_full_epoch < end_full_epoch
}

/// `adjust_committee_weight_estimate_to_ensure_safety(estimate)`.
///
/// [spec]: phase0/fast-confirmation.md#adjust_committee_weight_estimate_to_ensure_safety
pub fn adjust_committee_weight_estimate_to_ensure_safety(estimate: Gwei) -> Gwei {
    let ceil = estimate.div_ceil(1000);
    ceil.saturating_mul(1000 + COMMITTEE_WEIGHT_ESTIMATION_ADJUSTMENT_FACTOR)
}

/// `estimate_committee_weight_between_slots(total_active_balance, start_slot, end_slot)`: the
/// estimated weight of the committees of `start_slot..=end_slot`.
///
/// [spec]: phase0/fast-confirmation.md#estimate_committee_weight_between_slots
pub fn estimate_committee_weight_between_slots<E: EthSpec>(
    total_active_balance: Gwei,
    start_slot: Slot,
    end_slot: Slot,
) -> Gwei {
    if start_slot > end_slot {
        return 0;
    }
    if is_full_validator_set_covered::<E>(start_slot, end_slot) {
        return total_active_balance;
    }
    let slots_per_epoch = E::slots_per_epoch();
    let start_epoch = compute_epoch_at_slot::<E>(start_slot);
    let end_epoch = compute_epoch_at_slot::<E>(end_slot);
    let committee_weight = total_active_balance / slots_per_epoch;
    if start_epoch == end_epoch {
        return committee_weight.saturating_mul(end_slot - start_slot + 1);
    }
    let num_slots_in_end_epoch = compute_slots_since_epoch_start::<E>(end_slot) + 1;
    let remaining_slots_in_end_epoch = slots_per_epoch - num_slots_in_end_epoch;
    let num_slots_in_start_epoch =
        slots_per_epoch - compute_slots_since_epoch_start::<E>(start_slot);
    let start_epoch_weight = committee_weight.saturating_mul(num_slots_in_start_epoch);
    let end_epoch_weight = committee_weight.saturating_mul(num_slots_in_end_epoch);
    let start_epoch_weight_pro_rated =
        (start_epoch_weight / slots_per_epoch).saturating_mul(remaining_slots_in_end_epoch);
    adjust_committee_weight_estimate_to_ensure_safety(
        start_epoch_weight_pro_rated.saturating_add(end_epoch_weight),
    )
}

/// `Slot(slot - 1)`, failing below genesis.
fn previous_slot(slot: Slot) -> Result<Slot, Error> {
    slot.checked_sub(1).ok_or(Error::NoPreviousSlot(slot))
}

/// What the rule reads of a balance source state: each validator's effective balance, whether
/// it is slashed and whether it is active at the state's current epoch.
#[derive(Debug)]
struct BalanceSource {
    /// `(effective_balance, slashed, active)` per validator index.
    validators: Vec<(Gwei, bool, bool)>,
    /// `get_total_active_balance(state)`.
    total_active_balance: Gwei,
}

impl BalanceSource {
    fn from_view<E: EthSpec>(view: &StateRef<'_, E>) -> Self {
        let epoch = get_current_epoch(view);
        let mut total: Gwei = 0;
        let validators = view
            .validators
            .iter()
            .map(|v| {
                let active = is_active_validator(v, epoch);
                if active {
                    total = total.saturating_add(v.effective_balance);
                }
                (v.effective_balance, v.slashed, active)
            })
            .collect();
        Self {
            validators,
            total_active_balance: total.max(E::EFFECTIVE_BALANCE_INCREMENT),
        }
    }

    /// The effective balance of `index` when it is active and not slashed.
    fn unslashed_active(&self, index: ValidatorIndex) -> Option<Gwei> {
        match self.validators.get(usize::try_from(index).ok()?) {
            Some(&(balance, false, true)) => Some(balance),
            _ => None,
        }
    }

    /// The effective balance of `index` when it is active (slashed or not).
    fn active(&self, index: ValidatorIndex) -> Option<Gwei> {
        match self.validators.get(usize::try_from(index).ok()?) {
            Some(&(balance, _, true)) => Some(balance),
            _ => None,
        }
    }
}

/// The attester shuffling of one epoch as the head state computes it.
#[derive(Debug)]
struct EpochShuffling {
    epoch: Epoch,
    seed: Root,
    committees_per_slot: u64,
    shuffling: Vec<ValidatorIndex>,
}

impl EpochShuffling {
    fn new<E: EthSpec>(view: &StateRef<'_, E>, epoch: Epoch, seed: Root) -> Result<Self, Error> {
        let active = get_active_validator_indices(view, epoch);
        let count = active.len();
        let shuffling = swap_or_not_shuffle::shuffle_list(
            active.iter().map(|&i| i as usize).collect(),
            E::SHUFFLE_ROUND_COUNT,
            &seed.0,
            true,
        )
        .ok_or(Error::Shuffle(count))?
        .into_iter()
        .map(|i| i as ValidatorIndex)
        .collect();
        Ok(Self {
            epoch,
            seed,
            committees_per_slot: get_committee_count_per_slot_from_active_count::<E>(count),
            shuffling,
        })
    }

    /// The members of every committee of `slot` (a slot of this epoch): committees
    /// `k * c .. (k + 1) * c` of the epoch's `c * SLOTS_PER_EPOCH`, one contiguous run of the
    /// shuffling.
    fn slot_participants<E: EthSpec>(&self, slot: Slot) -> &[ValidatorIndex] {
        let slots_per_epoch = E::slots_per_epoch();
        let count = self.committees_per_slot * slots_per_epoch;
        let first = (slot % slots_per_epoch) * self.committees_per_slot;
        let n = self.shuffling.len() as u64;
        let start = (n * first / count) as usize;
        let end = (n * (first + self.committees_per_slot) / count) as usize;
        &self.shuffling[start..end]
    }
}

/// One evaluation of the rule against the store as it is now: the spec's functions, with the
/// head and everything derived from the store's current contents computed once.
pub struct FcrContext<'s, E: EthSpec> {
    store: &'s mut ForkChoice<E>,
    /// The states the rule reads.
    inputs: &'s FastConfirmationInputs<'s, E>,
    /// The checkpoints of `inputs.balance_states`.
    balance_checkpoints: [Checkpoint; 2],
    head: Root,
    current_slot: Slot,
    current_epoch: Epoch,
    byzantine_threshold: u64,
    derived: Derived,
    /// `get_attestation_score` of every node, per checkpoint balance source.
    scores: FxHashMap<(Epoch, Root), Arc<Vec<Gwei>>>,
    /// The members of each slot's committees that are in `store.equivocating_indices`.
    equivocators_by_slot: FxHashMap<Slot, Arc<[ValidatorIndex]>>,
}

impl<'s, E: EthSpec> FcrContext<'s, E> {
    /// Evaluates the rule for `fcr_store` against `store` now.
    pub fn new(
        store: &'s mut ForkChoice<E>,
        fcr_store: &FastConfirmationStore,
        inputs: &'s FastConfirmationInputs<'s, E>,
        balance_checkpoints: [Checkpoint; 2],
    ) -> Result<Self, Error> {
        let head = store.get_head()?.root;
        if inputs.head != head {
            return Err(Error::StaleInputs {
                head,
                given: inputs.head,
            });
        }
        let current_slot = store.get_current_slot();
        Ok(Self {
            current_epoch: compute_epoch_at_slot::<E>(current_slot),
            store,
            inputs,
            balance_checkpoints,
            head,
            current_slot,
            byzantine_threshold: fcr_store.byzantine_threshold,
            derived: fcr_store.derived.clone(),
            scores: FxHashMap::default(),
            equivocators_by_slot: FxHashMap::default(),
        })
    }

    /// `get_head(store).root`.
    pub fn get_head(&self) -> Root {
        self.head
    }

    fn node(&self, root: &Root) -> Result<&crate::ProtoNode, Error> {
        self.store
            .proto_array()
            .get(root)
            .ok_or(Error::UnknownBlock(*root))
    }

    /// `get_block_slot(store, block_root)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_block_slot
    pub fn get_block_slot(&self, block_root: &Root) -> Result<Slot, Error> {
        Ok(self.node(block_root)?.slot)
    }

    /// `get_block_epoch(store, block_root)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_block_epoch
    pub fn get_block_epoch(&self, block_root: &Root) -> Result<Epoch, Error> {
        Ok(compute_epoch_at_slot::<E>(self.get_block_slot(block_root)?))
    }

    fn parent_root(&self, block_root: &Root) -> Result<Root, Error> {
        Ok(self.node(block_root)?.parent_root)
    }

    /// `store.unrealized_justifications[block_root]`.
    fn unrealized_justification(&self, block_root: &Root) -> Result<Checkpoint, Error> {
        Ok(self.node(block_root)?.unrealized_justified.clone())
    }

    /// `get_checkpoint_for_block(store, block_root, epoch)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_checkpoint_for_block
    pub fn get_checkpoint_for_block(
        &self,
        block_root: &Root,
        epoch: Epoch,
    ) -> Result<Checkpoint, Error> {
        Ok(Checkpoint {
            epoch,
            root: self.store.get_checkpoint_block(block_root, epoch)?,
        })
    }

    /// `get_current_target(store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_current_target
    pub fn get_current_target(&self) -> Result<Checkpoint, Error> {
        self.get_checkpoint_for_block(&self.head, self.current_epoch)
    }

    /// `is_ancestor(store, node, ancestor)`.
    fn is_ancestor(&self, node: &Root, ancestor: &Root) -> Result<bool, Error> {
        let ancestor_slot = self.get_block_slot(ancestor)?;
        Ok(self.store.get_ancestor(node, ancestor_slot)? == *ancestor)
    }

    /// `get_voting_source(store, block_root)`.
    fn get_voting_source(&self, block_root: &Root) -> Result<Checkpoint, Error> {
        let node = self.node(block_root)?;
        if self.current_epoch > compute_epoch_at_slot::<E>(node.slot) {
            Ok(node.unrealized_justified.clone())
        } else {
            Ok(node.justified.clone())
        }
    }

    /// `get_ancestor_roots(store, block_root, terminal_root)`: the ancestors of `block_root`
    /// (inclusive) down to `terminal_root` (exclusive), oldest first; empty when
    /// `terminal_root` is not in its chain.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_ancestor_roots
    pub fn get_ancestor_roots(
        &self,
        block_root: &Root,
        terminal_root: &Root,
    ) -> Result<Vec<Root>, Error> {
        let terminal_slot = self.get_block_slot(terminal_root)?;
        let mut root = *block_root;
        let mut ancestor_roots = Vec::new();
        while self.get_block_slot(&root)? > terminal_slot {
            ancestor_roots.push(root);
            root = self.parent_root(&root)?;
            if root == *terminal_root {
                ancestor_roots.reverse();
                return Ok(ancestor_roots);
            }
        }
        Ok(Vec::new())
    }

    /// The shuffling of `epoch` from the head state.
    fn shuffling(&mut self, epoch: Epoch) -> Result<Arc<EpochShuffling>, Error> {
        let view = self.inputs.head_state.view().map_err(Error::State)?;
        let seed = get_seed(&view, epoch, DOMAIN_BEACON_ATTESTER);
        if let Some(found) = self
            .derived
            .shufflings
            .iter()
            .find(|s| s.epoch == epoch && s.seed == seed)
        {
            return Ok(found.clone());
        }
        let shuffling = Arc::new(EpochShuffling::new(&view, epoch, seed)?);
        let shufflings = &mut self.derived.shufflings;
        if shufflings.len() >= SHUFFLINGS_KEPT {
            shufflings.remove(0);
        }
        shufflings.push(shuffling.clone());
        Ok(shuffling)
    }

    /// `get_slot_committee(store, slot)`: the members of every committee of `slot`, by the
    /// head state's shuffling.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_slot_committee
    pub fn get_slot_committee(&mut self, slot: Slot) -> Result<Vec<ValidatorIndex>, Error> {
        let shuffling = self.shuffling(compute_epoch_at_slot::<E>(slot))?;
        Ok(shuffling.slot_participants::<E>(slot).to_vec())
    }

    /// The members of the union of `get_slot_committee` over `start_slot..=end_slot` that
    /// `keep` selects. Only the selected members are collected (a validator may sit in one
    /// committee of each epoch of the range, so they are deduplicated): over a range of two
    /// epochs the union is the whole validator set, while the selections (votes for one block,
    /// equivocators) are usually small.
    fn committee_members_between_slots(
        &mut self,
        start_slot: Slot,
        end_slot: Slot,
        keep: impl Fn(&Self, ValidatorIndex) -> bool,
    ) -> Result<FxHashSet<ValidatorIndex>, Error> {
        let mut selected = FxHashSet::default();
        for slot in start_slot..=end_slot {
            let shuffling = self.shuffling(compute_epoch_at_slot::<E>(slot))?;
            selected.extend(
                shuffling
                    .slot_participants::<E>(slot)
                    .iter()
                    .copied()
                    .filter(|&i| keep(self, i)),
            );
        }
        Ok(selected)
    }

    /// The balance source of `store.checkpoint_states[checkpoint]`.
    fn checkpoint_source(&mut self, checkpoint: &Checkpoint) -> Result<Arc<BalanceSource>, Error> {
        let k = (checkpoint.epoch, checkpoint.root);
        if let Some(found) = self.derived.checkpoint_sources.get(&k) {
            return Ok(found.clone());
        }
        let state = self
            .balance_checkpoints
            .iter()
            .position(|c| c == checkpoint)
            .map(|i| self.inputs.balance_states[i])
            .ok_or_else(|| Error::MissingCheckpointState(checkpoint.clone()))?;
        let view = state.view().map_err(Error::State)?;
        let source = Arc::new(BalanceSource::from_view(&view));
        self.derived.checkpoint_sources.insert(k, source.clone());
        Ok(source)
    }

    /// `get_previous_balance_source(fcr_store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_previous_balance_source
    fn get_previous_balance_source(
        &mut self,
        fcr_store: &FastConfirmationStore,
    ) -> Result<(Arc<BalanceSource>, Checkpoint), Error> {
        let checkpoint = fcr_store
            .previous_epoch_observed_justified_checkpoint
            .clone();
        Ok((self.checkpoint_source(&checkpoint)?, checkpoint))
    }

    /// `get_current_balance_source(fcr_store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_current_balance_source
    fn get_current_balance_source(
        &mut self,
        fcr_store: &FastConfirmationStore,
    ) -> Result<(Arc<BalanceSource>, Checkpoint), Error> {
        let checkpoint = fcr_store
            .current_epoch_observed_justified_checkpoint
            .clone();
        Ok((self.checkpoint_source(&checkpoint)?, checkpoint))
    }

    /// `get_pulled_up_head_state(store)`: the head state, advanced to the current epoch's start
    /// when it is from an earlier epoch.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_pulled_up_head_state
    fn get_pulled_up_head_state(&mut self) -> Result<Arc<BalanceSource>, Error> {
        let k = (self.head, self.current_epoch);
        if let Some((key, found)) = &self.derived.pulled_up_head_state
            && *key == k
        {
            return Ok(found.clone());
        }
        let source = BalanceSource::from_view(
            &self
                .inputs
                .pulled_up_head_state
                .view()
                .map_err(Error::State)?,
        );
        let source = Arc::new(source);
        self.derived.pulled_up_head_state = Some((k, source.clone()));
        Ok(source)
    }

    /// `latest_messages[index]` as `(epoch, root)`, for a validator that is not equivocating
    /// and whose message's block is held.
    fn latest_message(&self, index: ValidatorIndex) -> Option<(Epoch, Root)> {
        if self.store.is_equivocating(index) {
            return None;
        }
        match self.store.latest_message(index) {
            Some((epoch, Some(root))) => Some((epoch, root)),
            _ => None,
        }
    }

    /// `get_attestation_score(store, node, balance_source)`: the weight, in the balance source,
    /// of the unslashed active validators whose latest message supports `block_root` or a
    /// descendant. Every node's score is summed once per balance source, leaves to root.
    fn get_attestation_score(
        &mut self,
        block_root: &Root,
        source: &BalanceSource,
        key: &Checkpoint,
    ) -> Result<Gwei, Error> {
        let index = self
            .store
            .proto_array()
            .index_of(block_root)
            .ok_or(Error::UnknownBlock(*block_root))?;
        let k = (key.epoch, key.root);
        if let Some(scores) = self.scores.get(&k) {
            return Ok(scores.get(index).copied().unwrap_or(0));
        }
        let proto = self.store.proto_array();
        let mut scores = vec![0 as Gwei; proto.len()];
        for (i, _) in source.validators.iter().enumerate() {
            let i = i as ValidatorIndex;
            let Some(balance) = source.unslashed_active(i) else {
                continue;
            };
            if let Some((_, root)) = self.latest_message(i)
                && let Some(node) = proto.index_of(&root)
            {
                scores[node] = scores[node].saturating_add(balance);
            }
        }
        for node in (0..proto.len()).rev() {
            if let Some(parent) = proto.nodes()[node].parent {
                scores[parent] = scores[parent].saturating_add(scores[node]);
            }
        }
        let score = scores.get(index).copied().unwrap_or(0);
        self.scores.insert(k, Arc::new(scores));
        Ok(score)
    }

    /// `get_block_support_between_slots(store, balance_source, block_root, start_slot,
    /// end_slot)`: the weight of the validators of the committees of `start_slot..=end_slot`
    /// whose latest message is `block_root` itself.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_block_support_between_slots
    fn get_block_support_between_slots(
        &mut self,
        source: &BalanceSource,
        block_root: &Root,
        start_slot: Slot,
        end_slot: Slot,
    ) -> Result<Gwei, Error> {
        let supporters = self.committee_members_between_slots(start_slot, end_slot, |ctx, i| {
            source.unslashed_active(i).is_some()
                && ctx
                    .latest_message(i)
                    .is_some_and(|(_, root)| root == *block_root)
        })?;
        Ok(supporters
            .into_iter()
            .filter_map(|i| source.unslashed_active(i))
            .fold(0, Gwei::saturating_add))
    }

    /// `get_equivocation_score(store, balance_source, start_slot, end_slot)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_equivocation_score
    fn get_equivocation_score(
        &mut self,
        source: &BalanceSource,
        start_slot: Slot,
        end_slot: Slot,
    ) -> Result<Gwei, Error> {
        // Every block's adversarial weight asks for a range ending at the previous slot: each
        // slot's committees are scanned for equivocators once per evaluation.
        let mut equivocators = FxHashSet::default();
        for slot in start_slot..=end_slot {
            let in_slot = match self.equivocators_by_slot.get(&slot) {
                Some(found) => found.clone(),
                None => {
                    let found: Arc<[ValidatorIndex]> = self
                        .committee_members_between_slots(slot, slot, |ctx, i| {
                            ctx.store.is_equivocating(i)
                        })?
                        .into_iter()
                        .collect();
                    self.equivocators_by_slot.insert(slot, found.clone());
                    found
                }
            };
            equivocators.extend(in_slot.iter().copied());
        }
        Ok(equivocators
            .into_iter()
            .filter_map(|i| source.active(i))
            .fold(0, Gwei::saturating_add))
    }

    /// `compute_adversarial_weight(store, balance_source, start_slot, end_slot)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#compute_adversarial_weight
    fn compute_adversarial_weight(
        &mut self,
        source: &BalanceSource,
        start_slot: Slot,
        end_slot: Slot,
    ) -> Result<Gwei, Error> {
        let maximum_weight = estimate_committee_weight_between_slots::<E>(
            source.total_active_balance,
            start_slot,
            end_slot,
        );
        let max_adversarial_weight =
            (maximum_weight / 100).saturating_mul(self.byzantine_threshold);
        let equivocation_score = self.get_equivocation_score(source, start_slot, end_slot)?;
        Ok(max_adversarial_weight.saturating_sub(equivocation_score))
    }

    /// `get_adversarial_weight(store, balance_source, block_root)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_adversarial_weight
    fn get_adversarial_weight(
        &mut self,
        source: &BalanceSource,
        block_root: &Root,
    ) -> Result<Gwei, Error> {
        let end_slot = previous_slot(self.current_slot)?;
        let block_epoch = self.get_block_epoch(block_root)?;
        let parent_epoch = self.get_block_epoch(&self.parent_root(block_root)?)?;
        let start_slot = if block_epoch > parent_epoch {
            compute_start_slot_at_epoch::<E>(block_epoch)
        } else {
            self.get_block_slot(block_root)?
        };
        self.compute_adversarial_weight(source, start_slot, end_slot)
    }

    /// `compute_empty_slot_support_discount(store, balance_source, block_root)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#compute_empty_slot_support_discount
    fn compute_empty_slot_support_discount(
        &mut self,
        source: &BalanceSource,
        block_root: &Root,
    ) -> Result<Gwei, Error> {
        let block_slot = self.get_block_slot(block_root)?;
        let parent_root = self.parent_root(block_root)?;
        let parent_slot = self.get_block_slot(&parent_root)?;
        if parent_slot + 1 == block_slot {
            return Ok(0);
        }
        let end_slot = previous_slot(block_slot)?;
        let parent_support_in_empty_slots =
            self.get_block_support_between_slots(source, &parent_root, parent_slot + 1, end_slot)?;
        let adversarial_weight =
            self.compute_adversarial_weight(source, parent_slot + 1, end_slot)?;
        Ok(parent_support_in_empty_slots.saturating_sub(adversarial_weight))
    }

    /// `get_support_discount(store, balance_source, block_root)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_support_discount
    fn get_support_discount(
        &mut self,
        source: &BalanceSource,
        block_root: &Root,
    ) -> Result<Gwei, Error> {
        self.compute_empty_slot_support_discount(source, block_root)
    }

    /// `compute_proposer_score(state)`.
    fn compute_proposer_score(&self, source: &BalanceSource) -> Gwei {
        let committee_weight = source.total_active_balance / E::slots_per_epoch();
        committee_weight.saturating_mul(self.store.spec().proposer_score_boost) / 100
    }

    /// `compute_safety_threshold(store, block_root, balance_source)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#compute_safety_threshold
    fn compute_safety_threshold(
        &mut self,
        block_root: &Root,
        source: &BalanceSource,
    ) -> Result<Gwei, Error> {
        let parent_slot = self.get_block_slot(&self.parent_root(block_root)?)?;
        let proposer_score = self.compute_proposer_score(source);
        let maximum_support = estimate_committee_weight_between_slots::<E>(
            source.total_active_balance,
            parent_slot + 1,
            previous_slot(self.current_slot)?,
        );
        let support_discount = self.get_support_discount(source, block_root)?;
        let adversarial_weight = self.get_adversarial_weight(source, block_root)?;
        let bound = maximum_support
            .saturating_add(proposer_score)
            .saturating_add(adversarial_weight.saturating_mul(2));
        if support_discount < bound {
            Ok((bound - support_discount) / 2)
        } else {
            Ok(0)
        }
    }

    /// `is_one_confirmed(store, balance_source, block_root)`: whether the block is LMD-GHOST
    /// safe, its support above the safety threshold. `balance` is the balance source with the
    /// checkpoint it is the state of.
    ///
    /// [spec]: phase0/fast-confirmation.md#is_one_confirmed
    fn is_one_confirmed(
        &mut self,
        balance: &(Arc<BalanceSource>, Checkpoint),
        block_root: &Root,
    ) -> Result<bool, Error> {
        // A block whose payload (or an ancestor's) the execution client found invalid is not
        // `VALID`.
        if self.store.is_invalidated(block_root) {
            return Ok(false);
        }
        let (source, key) = balance;
        let support = self.get_attestation_score(&get_node_for_root(*block_root), source, key)?;
        let safety_threshold = self.compute_safety_threshold(block_root, source)?;
        Ok(support > safety_threshold)
    }

    /// `is_confirmed_chain_safe(fcr_store, confirmed_root)`: whether every block of the
    /// confirmed chain from the current epoch's observed justified checkpoint is LMD-GHOST safe
    /// by the previous balance source.
    ///
    /// [spec]: phase0/fast-confirmation.md#is_confirmed_chain_safe
    fn is_confirmed_chain_safe(
        &mut self,
        fcr_store: &FastConfirmationStore,
        confirmed_root: &Root,
    ) -> Result<bool, Error> {
        let observed = &fcr_store.current_epoch_observed_justified_checkpoint;
        if *observed != self.get_checkpoint_for_block(confirmed_root, observed.epoch)? {
            return Ok(false);
        }
        let start_root_exclusive = if observed.epoch + 1 >= self.current_epoch {
            observed.root
        } else {
            let previous_epoch_start =
                compute_start_slot_at_epoch::<E>(self.current_epoch.saturating_sub(1));
            let ancestor_at_previous_epoch_start = self
                .store
                .get_ancestor(confirmed_root, previous_epoch_start)?;
            if self.get_block_epoch(&ancestor_at_previous_epoch_start)? + 1 == self.current_epoch {
                self.parent_root(&ancestor_at_previous_epoch_start)?
            } else {
                ancestor_at_previous_epoch_start
            }
        };
        let chain_roots = self.get_ancestor_roots(confirmed_root, &start_root_exclusive)?;
        let balance = self.get_previous_balance_source(fcr_store)?;
        for root in chain_roots {
            if !self.is_one_confirmed(&balance, &root)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `get_current_target_score(store)`: FFG support of the current target estimated from the
    /// latest messages, weighed by the pulled-up head state.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_current_target_score
    fn get_current_target_score(&mut self) -> Result<Gwei, Error> {
        let target = self.get_current_target()?;
        let state = self.get_pulled_up_head_state()?;
        // The checkpoint of each distinct (root, epoch) message, computed once.
        let mut supports: FxHashMap<(Root, Epoch), bool> = FxHashMap::default();
        let mut score: Gwei = 0;
        for i in 0..state.validators.len() as ValidatorIndex {
            let Some(balance) = state.unslashed_active(i) else {
                continue;
            };
            let Some((epoch, root)) = self.latest_message(i) else {
                continue;
            };
            let supports_target = match supports.get(&(root, epoch)) {
                Some(&s) => s,
                None => {
                    let s = target == self.get_checkpoint_for_block(&root, epoch)?;
                    supports.insert((root, epoch), s);
                    s
                }
            };
            if supports_target {
                score = score.saturating_add(balance);
            }
        }
        Ok(score)
    }

    /// `compute_honest_ffg_support_for_current_target(store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#compute_honest_ffg_support_for_current_target
    fn compute_honest_ffg_support_for_current_target(&mut self) -> Result<Gwei, Error> {
        let balance_source = self.get_pulled_up_head_state()?;
        let total_active_balance = balance_source.total_active_balance;
        let ffg_support_for_checkpoint = self.get_current_target_score()?;
        let epoch_start = compute_start_slot_at_epoch::<E>(self.current_epoch);
        let end_slot = previous_slot(self.current_slot)?;
        let ffg_weight_till_now = estimate_committee_weight_between_slots::<E>(
            total_active_balance,
            epoch_start,
            end_slot,
        );
        let remaining_ffg_weight = total_active_balance.saturating_sub(ffg_weight_till_now);
        let remaining_honest_ffg_weight =
            (remaining_ffg_weight / 100).saturating_mul(100 - self.byzantine_threshold);
        let adversarial_weight =
            self.compute_adversarial_weight(&balance_source, epoch_start, end_slot)?;
        let min_honest_ffg_support = ffg_support_for_checkpoint.saturating_sub(adversarial_weight);
        Ok(min_honest_ffg_support.saturating_add(remaining_honest_ffg_weight))
    }

    /// `will_no_conflicting_checkpoint_be_justified(store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#will_no_conflicting_checkpoint_be_justified
    fn will_no_conflicting_checkpoint_be_justified(&mut self) -> Result<bool, Error> {
        if self.get_current_target()? == *self.store.unrealized_justified_checkpoint() {
            return Ok(true);
        }
        let total_active_balance = self.get_pulled_up_head_state()?.total_active_balance;
        let honest_ffg_support = self.compute_honest_ffg_support_for_current_target()?;
        Ok(u128::from(honest_ffg_support) * 3 > u128::from(total_active_balance))
    }

    /// `will_current_target_be_justified(store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#will_current_target_be_justified
    fn will_current_target_be_justified(&mut self) -> Result<bool, Error> {
        let total_active_balance = self.get_pulled_up_head_state()?.total_active_balance;
        let honest_ffg_support = self.compute_honest_ffg_support_for_current_target()?;
        Ok(u128::from(honest_ffg_support) * 3 >= u128::from(total_active_balance) * 2)
    }

    /// `update_fast_confirmation_variables(fcr_store)`.
    ///
    /// [spec]: phase0/fast-confirmation.md#update_fast_confirmation_variables
    fn update_fast_confirmation_variables(
        &mut self,
        fcr_store: &mut FastConfirmationStore,
    ) -> Result<(), Error> {
        fcr_store.previous_slot_head = fcr_store.current_slot_head;
        fcr_store.current_slot_head = self.head;
        if is_start_slot_at_epoch::<E>(self.current_slot + 1) {
            fcr_store.previous_epoch_greatest_unrealized_checkpoint =
                self.store.unrealized_justified_checkpoint().clone();
        }
        if is_start_slot_at_epoch::<E>(self.current_slot) {
            fcr_store.previous_epoch_observed_justified_checkpoint = fcr_store
                .current_epoch_observed_justified_checkpoint
                .clone();
            fcr_store.current_epoch_observed_justified_checkpoint = fcr_store
                .previous_epoch_greatest_unrealized_checkpoint
                .clone();
        }
        Ok(())
    }

    /// `find_latest_confirmed_descendant(fcr_store, latest_confirmed_root)`: the most recent
    /// confirmed block of the canonical chain's suffix from `latest_confirmed_root`.
    ///
    /// [spec]: phase0/fast-confirmation.md#find_latest_confirmed_descendant
    fn find_latest_confirmed_descendant(
        &mut self,
        fcr_store: &FastConfirmationStore,
        latest_confirmed_root: Root,
    ) -> Result<Root, Error> {
        let head = self.head;
        let current_epoch = self.current_epoch;
        let is_epoch_start = is_start_slot_at_epoch::<E>(self.current_slot);
        let mut confirmed_root = latest_confirmed_root;

        // Confirm blocks of the previous epoch.
        // A previous head pruned from the store does not descend from the finalized block, so
        // from no block this could confirm: the loop below would stop at its first block.
        let previous_epoch_confirmable = self.store.contains_block(&fcr_store.previous_slot_head)
            && self.get_block_epoch(&confirmed_root)? + 1 == current_epoch
            && self.get_voting_source(&fcr_store.previous_slot_head)?.epoch + 2 >= current_epoch
            && (is_epoch_start
                || (self.will_no_conflicting_checkpoint_be_justified()?
                    && (self
                        .unrealized_justification(&fcr_store.previous_slot_head)?
                        .epoch
                        + 1
                        >= current_epoch
                        || self.unrealized_justification(&head)?.epoch + 1 >= current_epoch)));
        if previous_epoch_confirmable {
            let canonical_roots = self.get_ancestor_roots(&head, &confirmed_root)?;
            let balance = self.get_current_balance_source(fcr_store)?;
            for block_root in canonical_roots {
                if self.get_block_epoch(&block_root)? == current_epoch {
                    break;
                }
                if !self.is_ancestor(
                    &get_node_for_root(fcr_store.previous_slot_head),
                    &get_node_for_root(block_root),
                )? {
                    break;
                }
                if !self.is_one_confirmed(&balance, &block_root)? {
                    break;
                }
                confirmed_root = block_root;
            }
        }

        // Confirm blocks of the current epoch.
        if is_epoch_start || self.unrealized_justification(&head)?.epoch + 1 >= current_epoch {
            let canonical_roots = self.get_ancestor_roots(&head, &confirmed_root)?;
            let balance = self.get_current_balance_source(fcr_store)?;
            let mut tentative_confirmed_root = confirmed_root;
            for block_root in canonical_roots {
                let block_epoch = self.get_block_epoch(&block_root)?;
                let tentative_confirmed_epoch = self.get_block_epoch(&tentative_confirmed_root)?;
                if block_epoch > tentative_confirmed_epoch
                    && !self.will_current_target_be_justified()?
                {
                    break;
                }
                if !self.is_one_confirmed(&balance, &block_root)? {
                    break;
                }
                tentative_confirmed_root = block_root;
            }
            if self.get_block_epoch(&tentative_confirmed_root)? == current_epoch
                || (self.get_voting_source(&tentative_confirmed_root)?.epoch + 2 >= current_epoch
                    && (is_epoch_start || self.will_no_conflicting_checkpoint_be_justified()?))
            {
                confirmed_root = tentative_confirmed_root;
            }
        }
        Ok(confirmed_root)
    }

    /// `get_latest_confirmed(fcr_store)`: the FCR algorithm — revert to the finalized block
    /// when the confirmed chain is stale, off the canonical chain or cannot be re-confirmed at
    /// an epoch start; restart from the observed justified checkpoint when it applies; then
    /// advance with `find_latest_confirmed_descendant`.
    ///
    /// [spec]: phase0/fast-confirmation.md#get_latest_confirmed
    fn get_latest_confirmed(&mut self, fcr_store: &FastConfirmationStore) -> Result<Root, Error> {
        let mut confirmed_root = fcr_store.confirmed_root;
        let current_epoch = self.current_epoch;
        let head = self.head;
        let is_epoch_start = is_start_slot_at_epoch::<E>(self.current_slot);
        // A confirmed block pruned from the store does not descend from the finalized block:
        // it is off the canonical chain (or older than the finalized block), so it reverts.
        if !self.store.contains_block(&confirmed_root)
            || self.get_block_epoch(&confirmed_root)? + 1 < current_epoch
            || !self.is_ancestor(&get_node_for_root(head), &get_node_for_root(confirmed_root))?
            || (is_epoch_start && !self.is_confirmed_chain_safe(fcr_store, &confirmed_root)?)
        {
            confirmed_root = self.store.finalized_checkpoint().root;
        }

        let observed = &fcr_store.current_epoch_observed_justified_checkpoint;
        let observed_justified_block_slot = self.get_block_slot(&observed.root)?;
        let is_observed_justified_block_epoch_ok =
            compute_epoch_at_slot::<E>(observed_justified_block_slot) + 1 == current_epoch;
        let is_head_unrealized_justified_ok = *observed == self.unrealized_justification(&head)?;
        let is_confirmed_block_stale =
            self.get_block_slot(&confirmed_root)? < observed_justified_block_slot;
        if is_epoch_start
            && is_observed_justified_block_epoch_ok
            && is_head_unrealized_justified_ok
            && is_confirmed_block_stale
        {
            confirmed_root = observed.root;
        }

        if self.get_block_epoch(&confirmed_root)? + 1 >= current_epoch {
            self.find_latest_confirmed_descendant(fcr_store, confirmed_root)
        } else {
            Ok(confirmed_root)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec as E;

    #[test]
    fn full_validator_set_is_covered_only_by_a_whole_epoch() {
        // Minimal preset: 8 slots per epoch.
        assert!(is_full_validator_set_covered::<E>(8, 15));
        assert!(is_full_validator_set_covered::<E>(0, 7));
        assert!(!is_full_validator_set_covered::<E>(9, 16));
        assert!(!is_full_validator_set_covered::<E>(8, 14));
        assert!(is_full_validator_set_covered::<E>(7, 15));
    }

    #[test]
    fn committee_weight_is_pro_rated_across_an_epoch_boundary() {
        let total: Gwei = 8_000;
        assert_eq!(estimate_committee_weight_between_slots::<E>(total, 5, 4), 0);
        assert_eq!(
            estimate_committee_weight_between_slots::<E>(total, 8, 10),
            3_000
        );
        // Slots 0..=9 hold all of epoch 0.
        assert_eq!(
            estimate_committee_weight_between_slots::<E>(total, 0, 9),
            total
        );
        // Slots 3..=12 hold neither epoch whole: 5000 * 3 / 8 + 5000 = 6875, rounded up to
        // 7000 and raised by 5 per mille.
        assert_eq!(
            estimate_committee_weight_between_slots::<E>(total, 3, 12),
            7 * 1005
        );
        // Slots 14..=17: 2 slots in epoch 1, 2 in epoch 2; 2000 * 6 / 8 + 2000 = 3500, then
        // rounded up to thousands and raised by 5 per mille.
        assert_eq!(
            estimate_committee_weight_between_slots::<E>(total, 14, 17),
            4 * 1005
        );
    }

    #[test]
    fn adjustment_rounds_up_to_a_thousand_before_adding_the_factor() {
        assert_eq!(adjust_committee_weight_estimate_to_ensure_safety(0), 0);
        assert_eq!(adjust_committee_weight_estimate_to_ensure_safety(1), 1005);
        assert_eq!(
            adjust_committee_weight_estimate_to_ensure_safety(2000),
            2010
        );
    }

    #[test]
    fn start_slots_of_epochs() {
        assert!(is_start_slot_at_epoch::<E>(0));
        assert!(is_start_slot_at_epoch::<E>(16));
        assert!(!is_start_slot_at_epoch::<E>(17));
    }
}
