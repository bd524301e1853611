//! The Gloas (EIP-7732) fork choice: `specs/gloas/fork-choice.md`.
//!
//! [`GloasForkChoice`] is the Gloas `Store` with its handlers (`on_tick`, `on_block`,
//! `on_attestation`, `on_attester_slashing`, `on_execution_payload_envelope`,
//! `on_payload_attestation_message`, `get_head`). Each block is three fork-choice nodes
//! ([`nodes`]); votes are latest messages by slot with the payload-present flag, and weights
//! move by vote deltas, not by the spec's walks over every validator per `get_weight`.
//!
//! The spec's naive parts and what stands for them here:
//! - `get_weight`: a node's attestation score is its subtree's vote total ([`nodes`]); the
//!   proposer boost is added at head time to the boosted block's PENDING node and its
//!   ancestors when `should_apply_proposer_boost` holds; previous-slot EMPTY/FULL nodes weigh
//!   0 (`is_previous_slot_payload_decision`) and `get_payload_status_tiebreaker` decides.
//! - `get_filtered_node_tree` (the 1.7.0b4 vectors' node-level filter, where a childless
//!   EMPTY or FULL variant is judged on its own): one pass over the nodes, leaves first.
//! - `store.payloads`: the roots whose envelope was verified (the envelopes themselves are the
//!   caller's to keep).

pub mod error;
pub mod nodes;
pub mod votes;

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use state_processing::{
    CachedBeaconState,
    common::{compute_epoch_at_slot, get_current_epoch},
    gloas::{
        envelope::verify_execution_payload_envelope,
        per_block::{
            get_attesting_indices, get_indexed_payload_attestation, is_valid_indexed_attestation,
            is_valid_indexed_payload_attestation,
        },
        ptc::get_ptc,
    },
    per_block::{ExecutionEngine, VerifySignatures},
    per_epoch::process_justification_and_finalization_progressive,
    per_slot::process_slots,
    state_transition::state_transition,
};
use types::{
    ChainSpec, Epoch, EthSpec, GENESIS_EPOCH, GENESIS_SLOT, Gwei, Hash32, Root, SignedBeaconBlock,
    Slot, ValidatorIndex,
    gloas::{
        Attestation, AttestationData, AttesterSlashing, BeaconBlock, IndexedPayloadAttestation,
        NewPayloadRequest, PayloadAttestationMessage, SignedExecutionPayloadEnvelope,
    },
    phase0::Checkpoint,
};

pub use self::error::{EngineError, GloasError};
pub use self::nodes::{NodeTree, PayloadStatus};
pub use self::votes::{GloasVotes, LatestMessage};
use crate::data_availability::AvailabilityError;
use crate::error::Error;
use crate::fork_choice::JustifiedBalances;

const BASIS_POINTS: u64 = 10_000;
/// `ATTESTATION_TIMELINESS_INDEX`.
const ATTESTATION_TIMELINESS_INDEX: usize = 0;
/// `PTC_TIMELINESS_INDEX`.
const PTC_TIMELINESS_INDEX: usize = 1;

/// `get_head(store)`: the head node and its block's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GloasHead {
    /// `head.root`.
    pub root: Root,
    /// The head block's slot.
    pub slot: Slot,
    /// `head.payload_status` (never PENDING).
    pub payload_status: PayloadStatus,
}

/// A leaf of the filtered node tree with its weight (`get_weight`), as the spec tests'
/// `viable_for_head_roots_and_weights` list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct WeighedNode {
    /// `node.root`.
    pub root: Root,
    /// `node.payload_status`.
    pub payload_status: PayloadStatus,
    /// `get_weight(store, node)`.
    pub weight: Gwei,
}

/// What the store keeps of a block (`store.blocks`, `store.block_timeliness`,
/// `store.unrealized_justifications`), and its nodes.
#[derive(Debug, Clone)]
struct BlockEntry {
    slot: Slot,
    proposer_index: ValidatorIndex,
    parent_root: Root,
    /// `block.body.signed_execution_payload_bid.message.block_hash`.
    bid_block_hash: Hash32,
    /// `block.body.signed_execution_payload_bid.message.parent_block_hash`.
    bid_parent_block_hash: Hash32,
    /// The post-state's `current_justified_checkpoint`.
    justified: Checkpoint,
    /// `store.unrealized_justifications[root]`.
    unrealized_justified: Checkpoint,
    /// `store.block_timeliness[root]`.
    timeliness: [bool; 2],
    /// Position in `GloasForkChoice::block_order`.
    order: usize,
    pending: usize,
    empty: usize,
    full: usize,
}

/// `store.payload_timeliness_vote[root]` and `store.payload_data_availability_vote[root]`.
#[derive(Debug, Clone)]
struct PtcVotes {
    timeliness: Vec<Option<bool>>,
    data_availability: Vec<Option<bool>>,
}

/// The Gloas fork-choice store.
///
/// [spec]: gloas/fork-choice.md#modified-store
pub struct GloasForkChoice<E: EthSpec> {
    spec: Arc<ChainSpec>,
    verify_signatures: VerifySignatures,
    time: u64,
    genesis_time: u64,
    justified_checkpoint: Checkpoint,
    finalized_checkpoint: Checkpoint,
    unrealized_justified_checkpoint: Checkpoint,
    unrealized_finalized_checkpoint: Checkpoint,
    proposer_boost_root: Root,
    equivocating_indices: FxHashSet<ValidatorIndex>,
    blocks: FxHashMap<Root, BlockEntry>,
    /// Block roots in insertion order (parents before children).
    block_order: Vec<Root>,
    block_states: FxHashMap<Root, CachedBeaconState<E>>,
    checkpoint_states: FxHashMap<(Epoch, Root), CachedBeaconState<E>>,
    /// `store.payloads`: the roots whose envelope was verified.
    payloads: FxHashSet<Root>,
    ptc_votes: FxHashMap<Root, PtcVotes>,
    tree: NodeTree,
    votes: GloasVotes,
    balances: JustifiedBalances,
    balances_checkpoint: Option<(Epoch, Root)>,
}

impl<E: EthSpec> GloasForkChoice<E> {
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
        let (anchor_epoch, state_justified, genesis_time, anchor_slot) = {
            let view = anchor_state.view().map_err(Error::State)?;
            (
                get_current_epoch(&view),
                view.current_justified_checkpoint.clone(),
                *view.genesis_time,
                *view.slot,
            )
        };
        let checkpoint = Checkpoint {
            epoch: anchor_epoch,
            root: anchor_root,
        };
        let bid = &anchor_block.body.signed_execution_payload_bid.message;
        let mut store = Self {
            time: spec.compute_time_at_slot(genesis_time, anchor_slot),
            spec,
            verify_signatures,
            genesis_time,
            justified_checkpoint: checkpoint.clone(),
            finalized_checkpoint: checkpoint.clone(),
            unrealized_justified_checkpoint: checkpoint.clone(),
            unrealized_finalized_checkpoint: checkpoint.clone(),
            proposer_boost_root: Root::ZERO,
            equivocating_indices: FxHashSet::default(),
            blocks: FxHashMap::default(),
            block_order: Vec::new(),
            block_states: FxHashMap::default(),
            checkpoint_states: FxHashMap::default(),
            payloads: FxHashSet::default(),
            ptc_votes: FxHashMap::default(),
            tree: NodeTree::default(),
            votes: GloasVotes::default(),
            balances: JustifiedBalances::default(),
            balances_checkpoint: None,
        };
        store.add_block(
            anchor_root,
            anchor_block.slot,
            anchor_block.proposer_index,
            anchor_block.parent_root,
            bid.block_hash,
            bid.parent_block_hash,
            state_justified,
            checkpoint.clone(),
            [true, true],
        );
        store.ptc_votes.insert(anchor_root, PtcVotes::new::<E>());
        store
            .checkpoint_states
            .insert((checkpoint.epoch, checkpoint.root), anchor_state.clone());
        store.block_states.insert(anchor_root, anchor_state);
        Ok(store)
    }

    /// Adds a block and its three nodes.
    #[allow(clippy::too_many_arguments)]
    fn add_block(
        &mut self,
        root: Root,
        slot: Slot,
        proposer_index: ValidatorIndex,
        parent_root: Root,
        bid_block_hash: Hash32,
        bid_parent_block_hash: Hash32,
        justified: Checkpoint,
        unrealized_justified: Checkpoint,
        timeliness: [bool; 2],
    ) {
        let parent_node = self.blocks.get(&parent_root).map(|parent| {
            if bid_parent_block_hash == parent.bid_block_hash {
                parent.full
            } else {
                parent.empty
            }
        });
        // EMPTY and FULL follow PENDING (`LatestMessage::supported_node` relies on it).
        let pending = self.tree.push(root, PayloadStatus::Pending, parent_node);
        let empty = self.tree.push(root, PayloadStatus::Empty, Some(pending));
        let full = self.tree.push(root, PayloadStatus::Full, Some(pending));
        self.blocks.insert(
            root,
            BlockEntry {
                slot,
                proposer_index,
                parent_root,
                bid_block_hash,
                bid_parent_block_hash,
                justified,
                unrealized_justified,
                timeliness,
                order: self.block_order.len(),
                pending,
                empty,
                full,
            },
        );
        self.block_order.push(root);
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

    /// `store.proposer_boost_root`.
    pub fn proposer_boost_root(&self) -> Root {
        self.proposer_boost_root
    }

    /// Whether block `root` is in the store.
    pub fn contains_block(&self, root: &Root) -> bool {
        self.blocks.contains_key(root)
    }

    /// `store.payload_timeliness_vote[root]`.
    pub fn payload_timeliness_vote(&self, root: &Root) -> Option<&[Option<bool>]> {
        self.ptc_votes.get(root).map(|v| v.timeliness.as_slice())
    }

    /// `store.payload_data_availability_vote[root]`.
    pub fn payload_data_availability_vote(&self, root: &Root) -> Option<&[Option<bool>]> {
        self.ptc_votes
            .get(root)
            .map(|v| v.data_availability.as_slice())
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

    /// `get_slot_component_duration_ms(basis_points)`.
    fn slot_component_ms(&self, basis_points: u64) -> u64 {
        basis_points * self.spec.slot_duration_ms / BASIS_POINTS
    }

    fn block(&self, root: &Root) -> Result<&BlockEntry, Error> {
        self.blocks.get(root).ok_or(Error::UnknownBlock(*root))
    }

    /// `on_tick(store, time)`.
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
    fn update_checkpoints(&mut self, justified: &Checkpoint, finalized: &Checkpoint) {
        if justified.epoch > self.justified_checkpoint.epoch {
            self.justified_checkpoint = justified.clone();
        }
        if finalized.epoch > self.finalized_checkpoint.epoch {
            self.finalized_checkpoint = finalized.clone();
        }
    }

    /// `update_unrealized_checkpoints(store, ...)`.
    fn update_unrealized_checkpoints(&mut self, justified: &Checkpoint, finalized: &Checkpoint) {
        if justified.epoch > self.unrealized_justified_checkpoint.epoch {
            self.unrealized_justified_checkpoint = justified.clone();
        }
        if finalized.epoch > self.unrealized_finalized_checkpoint.epoch {
            self.unrealized_finalized_checkpoint = finalized.clone();
        }
    }

    /// `get_parent_payload_status(store, block)` of a stored block: FULL when its bid builds on
    /// its parent's bid's block hash.
    ///
    /// [spec]: gloas/fork-choice.md#new-get_parent_payload_status
    fn get_parent_payload_status(&self, block: &BlockEntry) -> Result<PayloadStatus, Error> {
        let parent = self.block(&block.parent_root)?;
        Ok(if block.bid_parent_block_hash == parent.bid_block_hash {
            PayloadStatus::Full
        } else {
            PayloadStatus::Empty
        })
    }

    /// `get_ancestor(store, ForkChoiceNode(root, PENDING), slot).root`: the block at or
    /// before `slot` in the chain of `root`.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_ancestor
    fn get_ancestor_root(&self, root: &Root, slot: Slot) -> Result<Root, Error> {
        let mut root = *root;
        loop {
            let block = self.block(&root)?;
            if block.slot <= slot || !self.blocks.contains_key(&block.parent_root) {
                return Ok(root);
            }
            root = block.parent_root;
        }
    }

    /// `get_checkpoint_block(store, root, epoch)`.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_checkpoint_block
    pub fn get_checkpoint_block(&self, root: &Root, epoch: Epoch) -> Result<Root, Error> {
        self.get_ancestor_root(root, epoch * E::slots_per_epoch())
    }

    /// `is_payload_verified(store, root)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-is_payload_verified
    pub fn is_payload_verified(&self, root: &Root) -> bool {
        self.payloads.contains(root)
    }

    /// `on_block(store, signed_block)`: the checks, the state transition, the PTC votes of
    /// the block's payload attestations (`notify_ptc_messages`), its timeliness, the
    /// proposer boost and the checkpoints. The block's attestations and attester slashings are
    /// the caller's to pass on ([`Self::on_attestation`], [`Self::on_attester_slashing`]).
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
        if self.blocks.contains_key(&block_root) {
            return Ok(block_root);
        }
        let Some(parent) = self.blocks.get(&block.parent_root) else {
            return Err(Error::UnknownParent {
                block: block_root,
                parent: block.parent_root,
            }
            .into());
        };
        let bid = &block.body.signed_execution_payload_bid.message;
        // `is_parent_node_full(store, block)`.
        if bid.parent_block_hash == parent.bid_block_hash
            && !self.is_payload_verified(&block.parent_root)
        {
            return Err(GloasError::ParentPayloadNotVerified {
                block: block_root,
                parent: block.parent_root,
            });
        }
        let current_slot = self.get_current_slot();
        if current_slot < block.slot {
            return Err(Error::FutureBlock {
                block_slot: block.slot,
                current_slot,
            }
            .into());
        }
        let finalized_slot = self.finalized_checkpoint.epoch * E::slots_per_epoch();
        if block.slot <= finalized_slot {
            return Err(Error::NotAfterFinalizedSlot {
                block_slot: block.slot,
                finalized_slot,
            }
            .into());
        }
        let finalized_checkpoint_block =
            self.get_checkpoint_block(&block.parent_root, self.finalized_checkpoint.epoch)?;
        if finalized_checkpoint_block != self.finalized_checkpoint.root {
            return Err(Error::NotFinalizedDescendant {
                block: block_root,
                finalized: self.finalized_checkpoint.root,
            }
            .into());
        }
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

        // `notify_ptc_messages(store, state, block.body.payload_attestations)`, worked out
        // before anything is written.
        let mut ptc_updates = Vec::new();
        if *state.state.slot() != 0 {
            for payload_attestation in block.body.payload_attestations.iter() {
                let indexed = {
                    let view = state.view().map_err(Error::State)?;
                    get_indexed_payload_attestation(&view, payload_attestation)
                        .map_err(GloasError::Ptc)?
                };
                for &index in indexed.attesting_indices.iter() {
                    let message = PayloadAttestationMessage {
                        validator_index: index,
                        data: payload_attestation.data.clone(),
                        signature: Default::default(),
                    };
                    if let Some(update) = self.check_payload_attestation_message(&message, true)? {
                        ptc_updates.push(update);
                    }
                }
            }
        }

        // `compute_pulled_up_tip`: the unrealized checkpoints on a copy of the post-state.
        state.progressive_balances().map_err(Error::State)?;
        let mut pulled_up = state.clone();
        process_justification_and_finalization_progressive(&mut pulled_up)
            .map_err(Error::EpochProcessing)?;
        let (justified, finalized) = {
            let view = state.view().map_err(Error::State)?;
            (
                view.current_justified_checkpoint.clone(),
                view.finalized_checkpoint.clone(),
            )
        };
        let (unrealized_justified, unrealized_finalized) = {
            let view = pulled_up.view().map_err(Error::State)?;
            (
                view.current_justified_checkpoint.clone(),
                view.finalized_checkpoint.clone(),
            )
        };

        // The head before the block is added (for the proposer boost's dependent-root check).
        let head = self.get_head()?;

        // `record_block_timeliness(store, root)`.
        let is_current_slot = current_slot == block.slot;
        let into_slot = self.time_into_slot_ms();
        let timeliness = [
            self.spec.attestation_due_bps_gloas,
            self.spec.payload_attestation_due_bps,
        ]
        .map(|bps| is_current_slot && into_slot < self.slot_component_ms(bps));

        self.add_block(
            block_root,
            block.slot,
            block.proposer_index,
            block.parent_root,
            bid.block_hash,
            bid.parent_block_hash,
            justified.clone(),
            unrealized_justified.clone(),
            timeliness,
        );
        self.block_states.insert(block_root, state);
        self.ptc_votes.insert(block_root, PtcVotes::new::<E>());
        for update in ptc_updates {
            self.apply_payload_attestation(update);
        }

        // `update_proposer_boost_root(store, head.root, root)`.
        let epoch = self.get_current_store_epoch();
        let dependent_slot = self.compute_shuffling_dependent_slot(epoch);
        let is_first_block = self.proposer_boost_root == Root::ZERO;
        let is_same_dependent_root = self.get_ancestor_root(&head.root, dependent_slot)?
            == self.get_ancestor_root(&block_root, dependent_slot)?;
        if timeliness[ATTESTATION_TIMELINESS_INDEX] && is_first_block && is_same_dependent_root {
            self.proposer_boost_root = block_root;
        }

        self.update_checkpoints(&justified, &finalized);
        self.update_unrealized_checkpoints(&unrealized_justified, &unrealized_finalized);
        if compute_epoch_at_slot::<E>(block.slot) < epoch {
            self.update_checkpoints(&unrealized_justified, &unrealized_finalized);
        }
        Ok(block_root)
    }

    /// `compute_shuffling_dependent_slot(epoch)`.
    ///
    /// [spec]: phase0/fork-choice.md#compute_shuffling_dependent_slot
    fn compute_shuffling_dependent_slot(&self, epoch: Epoch) -> Slot {
        if epoch <= E::MIN_SEED_LOOKAHEAD {
            return GENESIS_SLOT;
        }
        (epoch - E::MIN_SEED_LOOKAHEAD) * E::slots_per_epoch() - 1
    }

    /// `on_execution_payload_envelope(store, signed_envelope)`. `data_available` is
    /// `is_data_available(envelope.beacon_block_root)`, which the caller works out (the
    /// columns it retrieved, checked against the bid's commitments); `engine` answers
    /// `verify_and_notify_new_payload`. A failure leaves the block as it is: only its FULL
    /// node stays out of the head's reach.
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
        data_available.map_err(|source| GloasError::PayloadDataUnavailable {
            block: root,
            source,
        })?;
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
        self.payloads.insert(root);
        Ok(())
    }

    /// `on_payload_attestation_message(store, ptc_message, is_from_block)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_payload_attestation_message
    pub fn on_payload_attestation_message(
        &mut self,
        ptc_message: &PayloadAttestationMessage,
        is_from_block: bool,
    ) -> Result<(), GloasError> {
        if let Some(update) = self.check_payload_attestation_message(ptc_message, is_from_block)? {
            self.apply_payload_attestation(update);
        }
        Ok(())
    }

    /// The checks of `on_payload_attestation_message`; what it writes (`None` when the
    /// message is for another slot than its block's: nothing).
    fn check_payload_attestation_message(
        &self,
        ptc_message: &PayloadAttestationMessage,
        is_from_block: bool,
    ) -> Result<Option<PtcUpdate>, GloasError> {
        let data = &ptc_message.data;
        let state = self
            .block_states
            .get(&data.beacon_block_root)
            .ok_or(GloasError::UnknownBeaconBlock(data.beacon_block_root))?;
        if data.slot != *state.state.slot() {
            return Ok(None);
        }
        let view = state.view().map_err(Error::State)?;
        let ptc = get_ptc(&view, data.slot).map_err(GloasError::Ptc)?;
        let positions: Vec<usize> = ptc
            .iter()
            .enumerate()
            .filter(|(_, index)| **index == ptc_message.validator_index)
            .map(|(position, _)| position)
            .collect();
        if positions.is_empty() {
            return Err(GloasError::NotInPtc {
                validator: ptc_message.validator_index,
                slot: data.slot,
            });
        }
        if !is_from_block {
            let current_slot = self.get_current_slot();
            if data.slot != current_slot {
                return Err(GloasError::PayloadAttestationNotCurrent {
                    slot: data.slot,
                    current_slot,
                });
            }
            let indexed = IndexedPayloadAttestation::<E> {
                attesting_indices: ssz_types::VariableList::new(vec![ptc_message.validator_index])
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
        Ok(Some(PtcUpdate {
            root: data.beacon_block_root,
            positions,
            payload_present: data.payload_present,
            blob_data_available: data.blob_data_available,
        }))
    }

    fn apply_payload_attestation(&mut self, update: PtcUpdate) {
        if let Some(votes) = self.ptc_votes.get_mut(&update.root) {
            for position in update.positions {
                if let Some(vote) = votes.timeliness.get_mut(position) {
                    *vote = Some(update.payload_present);
                }
                if let Some(vote) = votes.data_availability.get_mut(position) {
                    *vote = Some(update.blob_data_available);
                }
            }
        }
    }

    /// `payload_timeliness(store, root, timely)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-payload_timeliness
    pub fn payload_timeliness(&self, root: &Root, timely: bool) -> bool {
        if !self.is_payload_verified(root) {
            return !timely;
        }
        let Some(votes) = self.ptc_votes.get(root) else {
            return !timely;
        };
        let count = votes
            .timeliness
            .iter()
            .filter(|v| **v == Some(timely))
            .count();
        count > ptc_size::<E>() / 2
    }

    /// `payload_data_availability(store, root, available)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-payload_data_availability
    pub fn payload_data_availability(&self, root: &Root, available: bool) -> bool {
        if !self.is_payload_verified(root) {
            return !available;
        }
        let Some(votes) = self.ptc_votes.get(root) else {
            return !available;
        };
        let count = votes
            .data_availability
            .iter()
            .filter(|v| **v == Some(available))
            .count();
        count > ptc_size::<E>() / 2
    }

    /// `validate_on_attestation(store, attestation, is_from_block)`.
    ///
    /// [spec]: gloas/fork-choice.md#modified-validate_on_attestation
    pub fn validate_on_attestation(
        &self,
        data: &AttestationData,
        is_from_block: bool,
    ) -> Result<(), GloasError> {
        let target = &data.target;
        if !is_from_block {
            let current = self.get_current_store_epoch();
            let previous = current.saturating_sub(1);
            if target.epoch != current && target.epoch != previous {
                return Err(Error::TargetEpochOutOfRange {
                    target: target.epoch,
                    current,
                }
                .into());
            }
        }
        if target.epoch != compute_epoch_at_slot::<E>(data.slot) {
            return Err(Error::TargetEpochSlotMismatch {
                target: target.epoch,
                slot: data.slot,
            }
            .into());
        }
        if !self.blocks.contains_key(&target.root) {
            return Err(Error::UnknownTargetBlock(target.root).into());
        }
        let block = self
            .blocks
            .get(&data.beacon_block_root)
            .ok_or(Error::UnknownHeadBlock(data.beacon_block_root))?;
        if block.slot > data.slot {
            return Err(Error::AttestsToFutureBlock {
                attestation_slot: data.slot,
                block_slot: block.slot,
            }
            .into());
        }
        if data.index > 1 {
            return Err(GloasError::AttestationIndexOutOfRange(data.index));
        }
        if block.slot == data.slot && data.index != 0 {
            return Err(GloasError::SameSlotPayloadVote(data.beacon_block_root));
        }
        if data.index == 1 && !self.is_payload_verified(&data.beacon_block_root) {
            return Err(GloasError::UnverifiedPayloadVote(data.beacon_block_root));
        }
        let expected = self.get_checkpoint_block(&data.beacon_block_root, target.epoch)?;
        if target.root != expected {
            return Err(Error::InconsistentTarget {
                target: target.root,
                expected,
            }
            .into());
        }
        let current_slot = self.get_current_slot();
        if current_slot < data.slot + 1 {
            return Err(Error::FutureAttestation {
                attestation_slot: data.slot,
                current_slot,
            }
            .into());
        }
        Ok(())
    }

    /// `store_target_checkpoint_state(store, target)`.
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

    /// `on_attestation(store, attestation, is_from_block)`.
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation
    pub fn on_attestation(
        &mut self,
        attestation: &Attestation<E>,
        is_from_block: bool,
    ) -> Result<(), GloasError> {
        self.validate_on_attestation(&attestation.data, is_from_block)?;
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
        self.update_latest_messages(&indices, &attestation.data)?;
        Ok(())
    }

    /// `update_latest_messages(store, attesting_indices, attestation)`: a later slot's vote
    /// replaces a validator's latest message.
    ///
    /// [spec]: gloas/fork-choice.md#modified-update_latest_messages
    pub fn update_latest_messages(
        &mut self,
        attesting_indices: &[ValidatorIndex],
        data: &AttestationData,
    ) -> Result<(), Error> {
        let block = self.block(&data.beacon_block_root)?;
        let message = LatestMessage {
            slot: data.slot,
            root: data.beacon_block_root,
            payload_present: data.index == 1,
            block_slot: block.slot,
            pending: u32::try_from(block.pending)
                .map_err(|_| Error::VoteNodeOutOfRange(u32::MAX))?,
        };
        for &index in attesting_indices {
            if self.equivocating_indices.contains(&index) {
                continue;
            }
            self.votes.process_attestation(index, &message)?;
        }
        Ok(())
    }

    /// `on_attester_slashing(store, attester_slashing)`.
    ///
    /// [spec]: phase0/fork-choice.md#on_attester_slashing
    pub fn on_attester_slashing(&mut self, slashing: &AttesterSlashing) -> Result<(), GloasError> {
        let a1 = &slashing.attestation_1;
        let a2 = &slashing.attestation_2;
        if !state_processing::common::is_slashable_attestation_data(&a1.data, &a2.data) {
            return Err(Error::NotSlashable.into());
        }
        let root = self.justified_checkpoint.root;
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
        for index in both {
            self.votes.mark(index)?;
            self.equivocating_indices.insert(index);
        }
        Ok(())
    }

    /// Switches to the justified checkpoint's balances when the justified checkpoint changed.
    fn refresh_justified_balances(&mut self) -> Result<(), Error> {
        let justified = self.justified_checkpoint.clone();
        let key = (justified.epoch, justified.root);
        if self.balances_checkpoint == Some(key) {
            return Ok(());
        }
        let state = self.checkpoint_state(&justified)?;
        self.balances = JustifiedBalances::from_state(state)?;
        self.balances_checkpoint = Some(key);
        self.votes.queue_all();
        Ok(())
    }

    /// Brings the node weights up to date with the votes and balances.
    fn update_weights(&mut self) -> Result<(), Error> {
        self.refresh_justified_balances()?;
        let mut deltas = self.votes.compute_deltas(
            self.tree.len(),
            self.balances.vote_weights(),
            &self.equivocating_indices,
        )?;
        self.tree.apply_deltas(&mut deltas)
    }

    /// `get_proposer_score(store)`.
    fn get_proposer_score(&self) -> Gwei {
        let committee_weight = self.balances.total_unslashed() / E::slots_per_epoch();
        committee_weight.saturating_mul(self.spec.proposer_score_boost) / 100
    }

    /// `calculate_committee_fraction(justified_state, percent)`.
    fn calculate_committee_fraction(&self, percent: u64) -> Gwei {
        let committee_weight = self.balances.total_active() / E::slots_per_epoch();
        committee_weight.saturating_mul(percent) / 100
    }

    /// `is_head_weak(store, head_root)`: the attestation score of the head's PENDING node,
    /// with the equivocators of its slot's committees, below `REORG_HEAD_WEIGHT_THRESHOLD`.
    /// Weights must be up to date.
    ///
    /// [spec]: gloas/fork-choice.md#modified-is_head_weak
    fn is_head_weak(&mut self, head_root: &Root) -> Result<bool, Error> {
        let threshold = self.calculate_committee_fraction(self.spec.reorg_head_weight_threshold);
        let block = self.block(head_root)?.clone();
        let mut weight = self.tree.nodes()[block.pending].weight;
        if !self.equivocating_indices.is_empty() {
            let state = self
                .block_states
                .get_mut(head_root)
                .ok_or(Error::MissingBlockState(*head_root))?;
            let (view, caches) = state.view_mut().map_err(Error::State)?;
            let committees = caches
                .committees_at_slot(&view.as_ref(), block.slot)
                .map_err(Error::State)?;
            for index in 0..committees.committees_per_slot() {
                for &i in committees
                    .get_beacon_committee(block.slot, index)
                    .map_err(Error::State)?
                {
                    if self.equivocating_indices.contains(&i) {
                        weight = weight.saturating_add(self.balances.effective_balance(i));
                    }
                }
            }
        }
        Ok(weight < threshold)
    }

    /// `should_apply_proposer_boost(store)`. Weights must be up to date.
    ///
    /// [spec]: gloas/fork-choice.md#new-should_apply_proposer_boost
    fn should_apply_proposer_boost(&mut self) -> Result<bool, Error> {
        if self.proposer_boost_root == Root::ZERO {
            return Ok(false);
        }
        let block = self.block(&self.proposer_boost_root)?.clone();
        let parent_root = block.parent_root;
        let Some(parent) = self.blocks.get(&parent_root).cloned() else {
            return Ok(true);
        };
        if parent.slot + 1 < block.slot {
            return Ok(true);
        }
        if !self.is_head_weak(&parent_root)? {
            return Ok(true);
        }
        let equivocation = self.blocks.iter().any(|(root, b)| {
            b.timeliness[PTC_TIMELINESS_INDEX]
                && b.proposer_index == parent.proposer_index
                && b.slot + 1 == block.slot
                && *root != parent_root
        });
        Ok(!equivocation)
    }

    /// `should_extend_payload(store, root)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-should_extend_payload
    fn should_extend_payload(&self, root: &Root) -> Result<bool, Error> {
        if !self.is_payload_verified(root) {
            return Ok(false);
        }
        let proposer_root = self.proposer_boost_root;
        if self.payload_timeliness(root, true) && self.payload_data_availability(root, true) {
            return Ok(true);
        }
        if proposer_root == Root::ZERO {
            return Ok(true);
        }
        let proposer_block = self.block(&proposer_root)?;
        Ok(proposer_block.parent_root != *root
            || self.get_parent_payload_status(proposer_block)? == PayloadStatus::Full)
    }

    /// `should_build_on_full(store, head, slot)`: whether the proposer of `slot` builds on
    /// the head's payload. For a head of an earlier slot than the previous one, its payload
    /// status decides; for a FULL head of the previous slot, the PTC must not have found the
    /// payload late or its blob data unavailable.
    ///
    /// [spec]: gloas/fork-choice.md#new-should_build_on_full
    pub fn should_build_on_full(&self, head: &GloasHead, slot: Slot) -> Result<bool, GloasError> {
        if head.payload_status == PayloadStatus::Pending {
            return Err(GloasError::PendingHead(head.root));
        }
        if self.block(&head.root)?.slot + 1 != slot {
            return Ok(head.payload_status == PayloadStatus::Full);
        }
        if head.payload_status == PayloadStatus::Empty {
            return Ok(false);
        }
        if self.payload_timeliness(&head.root, false) {
            return Ok(false);
        }
        if self.payload_data_availability(&head.root, false) {
            return Ok(false);
        }
        Ok(true)
    }

    /// The viability of each node (`get_filtered_node_tree`), by node index: a node with
    /// children (`get_node_children`) is viable when one of them is, a leaf when its block's
    /// voting source and finalized ancestor agree with the store. A childless EMPTY or FULL
    /// variant is judged on its own, so an unviable one is pruned even when the other variant
    /// of its block leads to a viable leaf.
    ///
    /// [spec]: phase0/fork-choice.md#filter_node_tree
    fn filtered_nodes(&self) -> Vec<bool> {
        let n = self.block_order.len();
        let current_epoch = self.get_current_store_epoch();
        let justified = &self.justified_checkpoint;
        let finalized_slot = self.finalized_checkpoint.epoch * E::slots_per_epoch();
        let check_finalized = self.finalized_checkpoint.epoch != GENESIS_EPOCH;
        // `get_checkpoint_block(store, root, finalized.epoch)` of every block, parents first.
        let mut ancestor_at_finalized: Vec<usize> = vec![0; n];
        for (order, root) in self.block_order.iter().enumerate() {
            let block = &self.blocks[root];
            ancestor_at_finalized[order] = match self.blocks.get(&block.parent_root) {
                Some(parent) if block.slot > finalized_slot => ancestor_at_finalized[parent.order],
                _ => order,
            };
        }
        let finalized_order = self
            .blocks
            .get(&self.finalized_checkpoint.root)
            .map(|b| b.order);
        // The leaf condition of a block's variants.
        let leaf_viable = |block: &BlockEntry| {
            let voting_source = if current_epoch > compute_epoch_at_slot::<E>(block.slot) {
                &block.unrealized_justified
            } else {
                &block.justified
            };
            let correct_justified = justified.epoch == GENESIS_EPOCH
                || voting_source.epoch == justified.epoch
                || voting_source.epoch + 2 >= current_epoch;
            let correct_finalized =
                !check_finalized || Some(ancestor_at_finalized[block.order]) == finalized_order;
            correct_justified && correct_finalized
        };
        // Children have higher indices than their parents: one pass from the end.
        let nodes = self.tree.nodes();
        let mut viable = vec![false; nodes.len()];
        for index in (0..nodes.len()).rev() {
            let node = &nodes[index];
            let Some(block) = self.blocks.get(&node.root) else {
                continue;
            };
            viable[index] = match node.status {
                PayloadStatus::Pending => {
                    viable[block.empty]
                        || (self.is_payload_verified(&node.root) && viable[block.full])
                }
                PayloadStatus::Full if !self.is_payload_verified(&node.root) => false,
                PayloadStatus::Empty | PayloadStatus::Full => {
                    let children = self.tree.children(index);
                    if children.is_empty() {
                        leaf_viable(block)
                    } else {
                        children.iter().any(|&child| viable[child])
                    }
                }
            };
        }
        viable
    }

    /// What `get_weight` and `get_payload_status_tiebreaker` need for one `get_head`.
    fn head_context(&mut self) -> Result<HeadContext, Error> {
        self.update_weights()?;
        let boost = if self.should_apply_proposer_boost()? {
            let block = self.block(&self.proposer_boost_root)?;
            let mut on_path = FxHashSet::default();
            let mut node = Some(block.pending);
            while let Some(index) = node {
                on_path.insert(index);
                node = self.tree.nodes()[index].parent;
            }
            Some((on_path, self.get_proposer_score()))
        } else {
            None
        };
        Ok(HeadContext {
            viable: self.filtered_nodes(),
            boost,
            current_slot: self.get_current_slot(),
        })
    }

    /// `is_previous_slot_payload_decision(store, node)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-is_previous_slot_payload_decision
    fn is_previous_slot_payload_decision(&self, index: usize, current_slot: Slot) -> bool {
        let node = &self.tree.nodes()[index];
        node.status != PayloadStatus::Pending
            && self
                .blocks
                .get(&node.root)
                .is_some_and(|b| b.slot + 1 == current_slot)
    }

    /// `get_weight(store, node)`.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_weight
    fn get_weight(&self, index: usize, context: &HeadContext) -> Gwei {
        if self.is_previous_slot_payload_decision(index, context.current_slot) {
            return 0;
        }
        let weight = self.tree.nodes()[index].weight;
        match &context.boost {
            Some((on_path, score)) if on_path.contains(&index) => weight.saturating_add(*score),
            Some(_) | None => weight,
        }
    }

    /// `get_payload_status_tiebreaker(store, node)`.
    ///
    /// [spec]: gloas/fork-choice.md#new-get_payload_status_tiebreaker
    fn get_payload_status_tiebreaker(&self, index: usize, current_slot: Slot) -> Result<u8, Error> {
        let node = &self.tree.nodes()[index];
        if !self.is_previous_slot_payload_decision(index, current_slot) {
            return Ok(node.status.as_u8());
        }
        if node.status == PayloadStatus::Empty {
            return Ok(1);
        }
        Ok(if self.should_extend_payload(&node.root)? {
            2
        } else {
            0
        })
    }

    /// `get_node_children(store, node)`, those in the filtered node tree.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_node_children
    fn get_node_children(&self, index: usize, viable: &[bool]) -> Vec<usize> {
        let node = &self.tree.nodes()[index];
        let children = match node.status {
            PayloadStatus::Pending => {
                let Some(block) = self.blocks.get(&node.root) else {
                    return Vec::new();
                };
                let mut children = vec![block.empty];
                if self.is_payload_verified(&node.root) {
                    children.push(block.full);
                }
                children
            }
            PayloadStatus::Empty | PayloadStatus::Full => self.tree.children(index).to_vec(),
        };
        children
            .into_iter()
            .filter(|&child| viable[child])
            .collect()
    }

    /// `get_head(store)`.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_head
    pub fn get_head(&mut self) -> Result<GloasHead, Error> {
        let context = self.head_context()?;
        let justified = self.block(&self.justified_checkpoint.root)?;
        let mut head = justified.pending;
        loop {
            let children = self.get_node_children(head, &context.viable);
            let mut best: Option<(Gwei, Root, u8, usize)> = None;
            for child in children {
                let key = (
                    self.get_weight(child, &context),
                    self.tree.nodes()[child].root,
                    self.get_payload_status_tiebreaker(child, context.current_slot)?,
                    child,
                );
                if best.is_none_or(|b| (key.0, key.1, key.2) > (b.0, b.1, b.2)) {
                    best = Some(key);
                }
            }
            match best {
                Some((_, _, _, child)) => head = child,
                None => break,
            }
        }
        let node = &self.tree.nodes()[head];
        Ok(GloasHead {
            root: node.root,
            slot: self.block(&node.root)?.slot,
            payload_status: node.status,
        })
    }

    /// The leaves of the filtered node tree under the justified checkpoint, with their
    /// `get_weight` (the spec tests' `viable_for_head_roots_and_weights`).
    pub fn viable_for_head_nodes(&mut self) -> Result<Vec<WeighedNode>, Error> {
        let context = self.head_context()?;
        let justified = self.block(&self.justified_checkpoint.root)?;
        let mut pending = vec![justified.pending];
        let mut leaves = Vec::new();
        while let Some(index) = pending.pop() {
            let children = self.get_node_children(index, &context.viable);
            if children.is_empty() {
                let node = &self.tree.nodes()[index];
                leaves.push(WeighedNode {
                    root: node.root,
                    payload_status: node.status,
                    weight: self.get_weight(index, &context),
                });
            } else {
                pending.extend(children);
            }
        }
        Ok(leaves)
    }
}

/// One `get_head`'s view of the store.
struct HeadContext {
    /// Each node's viability (`get_filtered_node_tree`), by node index.
    viable: Vec<bool>,
    /// The nodes the proposer boost counts for, and its amount, when it applies.
    boost: Option<(FxHashSet<usize>, Gwei)>,
    current_slot: Slot,
}

/// What an accepted payload attestation message writes.
struct PtcUpdate {
    root: Root,
    positions: Vec<usize>,
    payload_present: bool,
    blob_data_available: bool,
}

/// `PTC_SIZE`.
fn ptc_size<E: EthSpec>() -> usize {
    <E::PtcSize as types::typenum::Unsigned>::USIZE
}

impl PtcVotes {
    fn new<E: EthSpec>() -> Self {
        Self {
            timeliness: vec![None; ptc_size::<E>()],
            data_availability: vec![None; ptc_size::<E>()],
        }
    }
}
