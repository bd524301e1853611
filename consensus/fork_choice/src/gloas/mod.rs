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
//!
//! The store holds no state: the owner of the states runs the state transition, the envelope
//! checks and the signature checks outside it and hands over results
//! ([`GloasForkChoice::check_block`], [`GloasBlockSummary`],
//! [`GloasForkChoice::on_indexed_attestation`],
//! [`GloasForkChoice::on_verified_execution_payload`],
//! [`GloasForkChoice::set_justified_balances`]). [`GloasSpecStore`] is such an owner that keeps
//! every state the way the spec's `Store` does (the spec tests' path).

pub mod crossing;
pub mod error;
pub mod nodes;
pub mod persist;
pub mod spec_store;
pub mod votes;

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use state_processing::common::compute_epoch_at_slot;
use types::{
    ChainSpec, Epoch, EthSpec, GENESIS_EPOCH, GENESIS_SLOT, Gwei, Hash32, Root, Slot,
    ValidatorIndex,
    gloas::{AttestationData, PayloadAttestationData, PayloadAttestationMessage},
    phase0::Checkpoint,
};

pub use self::crossing::{PreGloasBlock, PreGloasStore};
pub use self::error::{EngineError, GloasError};
pub use self::nodes::{NodeTree, PayloadStatus};
pub use self::persist::GloasPersistedError;
pub use self::spec_store::{GloasSpecStore, slot_duties};
pub use self::votes::{GloasVotes, LatestMessage};
use crate::data_availability::AvailabilityError;
use crate::error::Error;
use crate::fork_choice::JustifiedBalances;

/// [`GloasForkChoice::set_prune_threshold`]'s default, in blocks (the Fulu store's default
/// in nodes).
pub const DEFAULT_PRUNE_THRESHOLD: usize = 256;

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

/// `store.block_timeliness[root]` of a block [`GloasForkChoice::check_block`] checked on
/// arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GloasArrival {
    /// `block_timeliness[ATTESTATION_TIMELINESS_INDEX]`: in its own slot, before the
    /// attestation deadline.
    pub attestation_timely: bool,
    /// `block_timeliness[PTC_TIMELINESS_INDEX]`: in its own slot, before the payload
    /// attestation deadline.
    pub ptc_timely: bool,
}

/// One payload attestation of a block's body with its attesting indices
/// (`get_indexed_payload_attestation` on the block's post-state): what `notify_ptc_messages`
/// hands to `on_payload_attestation_message`.
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadAttestationVotes {
    /// `payload_attestation.data`.
    pub data: PayloadAttestationData,
    /// `indexed_payload_attestation.attesting_indices`.
    pub attesting_indices: Vec<ValidatorIndex>,
}

/// What `on_block` records of a Gloas block whose state transition passed; the owner of the
/// states computes it ([`GloasForkChoice::insert_block_summary`] takes it).
#[derive(Debug, Clone, PartialEq)]
pub struct GloasBlockSummary {
    /// `hash_tree_root(block)`.
    pub root: Root,
    /// `block.parent_root`.
    pub parent_root: Root,
    /// `block.slot`.
    pub slot: Slot,
    /// `block.proposer_index`.
    pub proposer_index: ValidatorIndex,
    /// `block.body.signed_execution_payload_bid.message.block_hash`.
    pub bid_block_hash: Hash32,
    /// `block.body.signed_execution_payload_bid.message.parent_block_hash`.
    pub bid_parent_block_hash: Hash32,
    /// The post-state's `current_justified_checkpoint`.
    pub justified: Checkpoint,
    /// The post-state's `finalized_checkpoint`.
    pub finalized: Checkpoint,
    /// The pulled-up tip's `current_justified_checkpoint` (`store.unrealized_justifications`).
    pub unrealized_justified: Checkpoint,
    /// The pulled-up tip's `finalized_checkpoint`.
    pub unrealized_finalized: Checkpoint,
    /// The block's [`GloasForkChoice::check_block`] verdict.
    pub arrival: GloasArrival,
    /// `get_ptc(state, block.slot)` of the post-state: whose payload attestation messages
    /// count for the block (`on_payload_attestation_message`).
    pub ptc: Vec<ValidatorIndex>,
    /// The members of the beacon committees of `block.slot` (the post-state's): whose
    /// equivocations `is_head_weak` counts for the block.
    pub slot_committee_members: Vec<ValidatorIndex>,
    /// `block.body.payload_attestations`, indexed (`notify_ptc_messages`).
    pub payload_attestations: Vec<PayloadAttestationVotes>,
}

/// What the store keeps of a block, as [`GloasForkChoice::block_info`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct GloasBlockInfo {
    /// `hash_tree_root(block)`.
    pub root: Root,
    /// `block.parent_root`.
    pub parent_root: Root,
    /// `block.slot`.
    pub slot: Slot,
    /// `block.proposer_index`.
    pub proposer_index: ValidatorIndex,
    /// `block.body.signed_execution_payload_bid.message.block_hash`.
    pub bid_block_hash: Hash32,
    /// `block.body.signed_execution_payload_bid.message.parent_block_hash`.
    pub bid_parent_block_hash: Hash32,
    /// The post-state's `current_justified_checkpoint`.
    pub justified: Checkpoint,
    /// `store.unrealized_justifications[root]`.
    pub unrealized_justified: Checkpoint,
    /// `store.block_timeliness[root][ATTESTATION_TIMELINESS_INDEX]`.
    pub attestation_timely: bool,
    /// `is_payload_verified(store, root)`.
    pub payload_verified: bool,
    /// The votes for the block's PENDING node and its descendants as of the last head (no
    /// proposer boost), in Gwei.
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
    /// `get_ptc(store.block_states[root], slot)`.
    ptc: Vec<ValidatorIndex>,
    timeliness: Vec<Option<bool>>,
    data_availability: Vec<Option<bool>>,
}

/// The Gloas fork-choice store.
///
/// [spec]: gloas/fork-choice.md#modified-store
pub struct GloasForkChoice<E: EthSpec> {
    spec: Arc<ChainSpec>,
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
    /// The beacon committee members of the slot of each block of the previous and current
    /// slots ([`GloasBlockSummary::slot_committee_members`]): `is_head_weak` reads only the
    /// boosted block's parent, of the previous slot.
    slot_committees: FxHashMap<Root, Vec<ValidatorIndex>>,
    /// `store.payloads`: the roots whose envelope was verified.
    payloads: FxHashSet<Root>,
    ptc_votes: FxHashMap<Root, PtcVotes>,
    tree: NodeTree,
    votes: GloasVotes,
    balances: JustifiedBalances,
    balances_checkpoint: Option<(Epoch, Root)>,
    /// Balances handed over for checkpoints that may become justified
    /// ([`Self::set_justified_balances`]), until the justified checkpoint passes them.
    candidate_balances: FxHashMap<(Epoch, Root), JustifiedBalances>,
    /// Prune once the finalized block has at least this many blocks before it.
    prune_threshold: usize,
    _eth_spec: std::marker::PhantomData<E>,
}

impl<E: EthSpec> GloasForkChoice<E> {
    /// `get_forkchoice_store(anchor_state, anchor_block)` from the anchor block's summary (its
    /// `justified` the anchor state's `current_justified_checkpoint`; its payload attestations
    /// are not counted) and `anchor_state.genesis_time`. The justified and finalized
    /// checkpoints are the anchor's; the anchor's payload counts as verified (the anchor is
    /// `block_timeliness` true twice). Its balances come with
    /// [`Self::set_justified_balances`] before the first head.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_forkchoice_store
    pub fn from_anchor(
        anchor: &GloasBlockSummary,
        genesis_time: u64,
        spec: Arc<ChainSpec>,
    ) -> Self {
        let checkpoint = Checkpoint {
            epoch: compute_epoch_at_slot::<E>(anchor.slot),
            root: anchor.root,
        };
        let mut store = Self::empty(spec, genesis_time);
        store.time = store.spec.compute_time_at_slot(genesis_time, anchor.slot);
        store.justified_checkpoint = checkpoint.clone();
        store.finalized_checkpoint = checkpoint.clone();
        store.unrealized_justified_checkpoint = checkpoint.clone();
        store.unrealized_finalized_checkpoint = checkpoint.clone();
        store.add_block(
            anchor.root,
            anchor.slot,
            anchor.proposer_index,
            anchor.parent_root,
            anchor.bid_block_hash,
            anchor.bid_parent_block_hash,
            anchor.justified.clone(),
            checkpoint,
            [true, true],
        );
        store
            .ptc_votes
            .insert(anchor.root, PtcVotes::new::<E>(anchor.ptc.clone()));
        store
            .slot_committees
            .insert(anchor.root, anchor.slot_committee_members.clone());
        store
    }

    /// A store of no blocks, its checkpoints `(0, 0x00…)`.
    fn empty(spec: Arc<ChainSpec>, genesis_time: u64) -> Self {
        let zero = Checkpoint {
            epoch: GENESIS_EPOCH,
            root: Root::ZERO,
        };
        Self {
            time: genesis_time,
            spec,
            genesis_time,
            justified_checkpoint: zero.clone(),
            finalized_checkpoint: zero.clone(),
            unrealized_justified_checkpoint: zero.clone(),
            unrealized_finalized_checkpoint: zero,
            proposer_boost_root: Root::ZERO,
            equivocating_indices: FxHashSet::default(),
            blocks: FxHashMap::default(),
            block_order: Vec::new(),
            slot_committees: FxHashMap::default(),
            payloads: FxHashSet::default(),
            ptc_votes: FxHashMap::default(),
            tree: NodeTree::default(),
            votes: GloasVotes::default(),
            balances: JustifiedBalances::default(),
            balances_checkpoint: None,
            candidate_balances: FxHashMap::default(),
            prune_threshold: DEFAULT_PRUNE_THRESHOLD,
            _eth_spec: std::marker::PhantomData,
        }
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

    /// The payload timeliness committee of block `root`'s slot (`get_ptc` on its post-state),
    /// whose votes on its payload the store counts; `None` for a block it does not hold.
    pub fn ptc(&self, root: &Root) -> Option<&[ValidatorIndex]> {
        self.ptc_votes.get(root).map(|v| v.ptc.as_slice())
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
            let blocks = &self.blocks;
            self.slot_committees
                .retain(|root, _| blocks.get(root).is_some_and(|b| b.slot + 1 >= current_slot));
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

    /// The checks of `on_block` that need no state: the block's place (parent known, its
    /// parent's payload verified when the bid builds on it, not from the future, after the
    /// finalized slot, descending from the finalized checkpoint) and its timeliness
    /// (`record_block_timeliness`), judged now, as the block arrives. `None` for a block
    /// already in the store. The state transition follows outside the store, then
    /// [`Self::insert_block_summary`].
    ///
    /// [spec]: gloas/fork-choice.md#modified-on_block
    pub fn check_block(
        &self,
        block_root: Root,
        parent_root: Root,
        slot: Slot,
        bid_parent_block_hash: Hash32,
    ) -> Result<Option<GloasArrival>, GloasError> {
        if self.blocks.contains_key(&block_root) {
            return Ok(None);
        }
        self.check_block_place(block_root, parent_root, slot, bid_parent_block_hash)?;
        // `record_block_timeliness(store, root)`.
        let is_current_slot = self.get_current_slot() == slot;
        let into_slot = self.time_into_slot_ms();
        let [attestation_timely, ptc_timely] = [
            self.spec.attestation_due_bps_gloas,
            self.spec.payload_attestation_due_bps,
        ]
        .map(|bps| is_current_slot && into_slot < self.slot_component_ms(bps));
        Ok(Some(GloasArrival {
            attestation_timely,
            ptc_timely,
        }))
    }

    /// The place checks of [`Self::check_block`].
    fn check_block_place(
        &self,
        block_root: Root,
        parent_root: Root,
        slot: Slot,
        bid_parent_block_hash: Hash32,
    ) -> Result<(), GloasError> {
        let Some(parent) = self.blocks.get(&parent_root) else {
            return Err(Error::UnknownParent {
                block: block_root,
                parent: parent_root,
            }
            .into());
        };
        // `is_parent_node_full(store, block)`.
        if bid_parent_block_hash == parent.bid_block_hash && !self.is_payload_verified(&parent_root)
        {
            return Err(GloasError::ParentPayloadNotVerified {
                block: block_root,
                parent: parent_root,
            });
        }
        let current_slot = self.get_current_slot();
        if current_slot < slot {
            return Err(Error::FutureBlock {
                block_slot: slot,
                current_slot,
            }
            .into());
        }
        let finalized_slot = self.finalized_checkpoint.epoch * E::slots_per_epoch();
        if slot <= finalized_slot {
            return Err(Error::NotAfterFinalizedSlot {
                block_slot: slot,
                finalized_slot,
            }
            .into());
        }
        let finalized_checkpoint_block =
            self.get_checkpoint_block(&parent_root, self.finalized_checkpoint.epoch)?;
        if finalized_checkpoint_block != self.finalized_checkpoint.root {
            return Err(Error::NotFinalizedDescendant {
                block: block_root,
                finalized: self.finalized_checkpoint.root,
            }
            .into());
        }
        Ok(())
    }

    /// The rest of `on_block` for a block whose state transition passed: the PTC votes of its
    /// payload attestations (`notify_ptc_messages`), the block and its nodes, the proposer
    /// boost and the checkpoints. What [`Self::check_block`] checked is checked again (the
    /// store may have moved since); a block already in the store is accepted unchanged. The
    /// balances of the block's justified and unrealized justified checkpoints should be
    /// handed over first ([`Self::set_justified_balances`]). The block's attestations and
    /// attester slashings are the caller's to pass on.
    ///
    /// [spec]: gloas/fork-choice.md#modified-on_block
    pub fn insert_block_summary(&mut self, block: &GloasBlockSummary) -> Result<Root, GloasError> {
        let block_root = block.root;
        if self.blocks.contains_key(&block_root) {
            return Ok(block_root);
        }
        self.check_block_place(
            block_root,
            block.parent_root,
            block.slot,
            block.bid_parent_block_hash,
        )?;
        if block.ptc.len() != ptc_size::<E>() {
            return Err(GloasError::PtcSize {
                block: block_root,
                len: block.ptc.len(),
            });
        }
        // `notify_ptc_messages(store, state, block.body.payload_attestations)`, worked out
        // before anything is written.
        let mut ptc_updates = Vec::new();
        if block.slot != GENESIS_SLOT {
            for votes in &block.payload_attestations {
                for &index in &votes.attesting_indices {
                    let message = PayloadAttestationMessage {
                        validator_index: index,
                        data: votes.data.clone(),
                        signature: Default::default(),
                    };
                    if let Some(update) = self.check_payload_attestation_message(&message, true)? {
                        ptc_updates.push(update);
                    }
                }
            }
        }

        // The head before the block is added (for the proposer boost's dependent-root check).
        let head = self.get_head()?;

        let timeliness = [block.arrival.attestation_timely, block.arrival.ptc_timely];
        self.add_block(
            block_root,
            block.slot,
            block.proposer_index,
            block.parent_root,
            block.bid_block_hash,
            block.bid_parent_block_hash,
            block.justified.clone(),
            block.unrealized_justified.clone(),
            timeliness,
        );
        self.ptc_votes
            .insert(block_root, PtcVotes::new::<E>(block.ptc.clone()));
        if block.slot + 1 >= self.get_current_slot() {
            self.slot_committees
                .insert(block_root, block.slot_committee_members.clone());
        }
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

        self.update_checkpoints(&block.justified, &block.finalized);
        self.update_unrealized_checkpoints(
            &block.unrealized_justified,
            &block.unrealized_finalized,
        );
        if compute_epoch_at_slot::<E>(block.slot) < epoch {
            self.update_checkpoints(&block.unrealized_justified, &block.unrealized_finalized);
        }
        self.maybe_prune();
        Ok(block_root)
    }

    /// Prune ([`Self::prune`]) only once the finalized block has at least `threshold` blocks
    /// before it (0: whenever it has any).
    pub fn set_prune_threshold(&mut self, threshold: usize) {
        self.prune_threshold = threshold;
    }

    fn maybe_prune(&mut self) {
        if let Some(finalized) = self.blocks.get(&self.finalized_checkpoint.root)
            && finalized.order > 0
            && finalized.order >= self.prune_threshold
        {
            self.prune();
        }
    }

    /// Drops every block that does not descend from the finalized block (what the spec keeps
    /// but never reaches: `get_filtered_node_tree` finds none of them viable, and none is the
    /// justified checkpoint's descendant): its three nodes, its PTC votes, its verified
    /// payload, its slot's committees, and the proposer boost when it is one of them. Votes
    /// move to the new node indices; a latest message of a dropped block keeps its slot and
    /// counts nowhere. Nothing happens when the finalized block is not in the store. The
    /// weights of the kept nodes stay exact: a kept node's subtree is all kept.
    ///
    /// [spec]: phase0/fork-choice.md#get_filtered_block_tree
    pub fn prune(&mut self) {
        let Some(finalized) = self.blocks.get(&self.finalized_checkpoint.root) else {
            return;
        };
        // Parents come before children: one pass marks the finalized block's descendants.
        let mut keep_block = vec![false; self.block_order.len()];
        keep_block[finalized.order] = true;
        for (order, root) in self
            .block_order
            .iter()
            .enumerate()
            .skip(finalized.order + 1)
        {
            let block = &self.blocks[root];
            keep_block[order] = self
                .blocks
                .get(&block.parent_root)
                .is_some_and(|parent| keep_block[parent.order]);
        }
        let mut keep_node = vec![false; self.tree.len()];
        for (order, root) in self.block_order.iter().enumerate() {
            if keep_block[order] {
                let block = &self.blocks[root];
                for index in [block.pending, block.empty, block.full] {
                    keep_node[index] = true;
                }
            }
        }
        let remap = self.tree.prune(&keep_node);
        self.votes.remap(&remap);
        let old_order = std::mem::take(&mut self.block_order);
        for (order, root) in old_order.into_iter().enumerate() {
            if !keep_block[order] {
                self.blocks.remove(&root);
                self.ptc_votes.remove(&root);
                self.payloads.remove(&root);
                self.slot_committees.remove(&root);
                continue;
            }
            let new_order = self.block_order.len();
            if let Some(block) = self.blocks.get_mut(&root) {
                block.order = new_order;
                for index in [&mut block.pending, &mut block.empty, &mut block.full] {
                    // Kept blocks keep their nodes.
                    *index = remap[*index].unwrap_or(*index);
                }
            }
            self.block_order.push(root);
        }
        if !self.blocks.contains_key(&self.proposer_boost_root) {
            self.proposer_boost_root = Root::ZERO;
        }
    }

    /// The number of blocks in the store.
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// `store.unrealized_justified_checkpoint`.
    pub fn unrealized_justified_checkpoint(&self) -> &Checkpoint {
        &self.unrealized_justified_checkpoint
    }

    /// `store.unrealized_finalized_checkpoint`.
    pub fn unrealized_finalized_checkpoint(&self) -> &Checkpoint {
        &self.unrealized_finalized_checkpoint
    }

    /// Replaces the finalized checkpoint (a store started from a chosen checkpoint, as the
    /// spec's gossip vectors do); the block tree is left as it is.
    pub fn set_finalized_checkpoint(&mut self, checkpoint: Checkpoint) {
        self.finalized_checkpoint = checkpoint;
    }

    /// `get_ancestor(store, ForkChoiceNode(root, PENDING), slot).root`: the block at or before
    /// `slot` in the chain of `root` (the oldest block the store holds when the chain goes back
    /// further).
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_ancestor
    pub fn get_ancestor(&self, root: &Root, slot: Slot) -> Result<Root, Error> {
        self.get_ancestor_root(root, slot)
    }

    /// What the store keeps of block `root` (`None` for a block it does not hold).
    pub fn block_info(&self, root: &Root) -> Option<GloasBlockInfo> {
        let block = self.blocks.get(root)?;
        let weight = self
            .tree
            .nodes()
            .get(block.pending)
            .map_or(0, |node| node.weight);
        Some(GloasBlockInfo {
            root: *root,
            parent_root: block.parent_root,
            slot: block.slot,
            proposer_index: block.proposer_index,
            bid_block_hash: block.bid_block_hash,
            bid_parent_block_hash: block.bid_parent_block_hash,
            justified: block.justified.clone(),
            unrealized_justified: block.unrealized_justified.clone(),
            attestation_timely: block.timeliness[ATTESTATION_TIMELINESS_INDEX],
            payload_verified: self.is_payload_verified(root),
            weight,
        })
    }

    /// The roots of every block in the store, parents before children.
    pub fn block_roots(&self) -> &[Root] {
        &self.block_order
    }

    /// The execution block hash node `(root, status)` stands for: the bid's `block_hash` of a
    /// FULL node, the bid's `parent_block_hash` (the payload the block was built on) of an
    /// EMPTY or PENDING one; the hash `notify_forkchoice_updated` and the next proposer's
    /// `prepare_execution_payload` build on (`head_block_hash`).
    ///
    /// [spec]: gloas/validator.md#modified-prepare_execution_payload
    pub fn execution_block_hash(&self, root: &Root, status: PayloadStatus) -> Option<Hash32> {
        let block = self.blocks.get(root)?;
        Some(match status {
            PayloadStatus::Full => block.bid_block_hash,
            PayloadStatus::Empty | PayloadStatus::Pending => block.bid_parent_block_hash,
        })
    }

    /// The block whose payload node `(root, status)` stands on: `root` itself for a FULL node;
    /// for an EMPTY one the nearest ancestor whose bid's `block_hash` is the hash the block
    /// built on (the ancestor whose FULL variant its chain goes through). `None` when that
    /// ancestor is before the oldest block the store holds.
    pub fn payload_block(&self, root: &Root, status: PayloadStatus) -> Option<Root> {
        if status == PayloadStatus::Full {
            return self.blocks.contains_key(root).then_some(*root);
        }
        let mut block = self.blocks.get(root)?;
        let wanted = block.bid_parent_block_hash;
        loop {
            let parent_root = block.parent_root;
            let parent = self.blocks.get(&parent_root)?;
            if parent.bid_block_hash == wanted {
                return Some(parent_root);
            }
            block = parent;
        }
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

    /// `on_execution_payload_envelope(store, signed_envelope)` for an envelope of block `root`
    /// whose checks its caller made (`verify_execution_payload_envelope` on the block's
    /// post-state and the engine's `verify_and_notify_new_payload`): `data_available` is
    /// `is_data_available(root)`, which the caller works out (the columns it retrieved,
    /// checked against the bid's commitments). A failure leaves the block as it is: only its
    /// FULL node stays out of the head's reach.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub fn on_verified_execution_payload(
        &mut self,
        root: Root,
        data_available: Result<(), AvailabilityError>,
    ) -> Result<(), GloasError> {
        if !self.blocks.contains_key(&root) {
            return Err(GloasError::UnknownBeaconBlock(root));
        }
        data_available.map_err(|source| GloasError::PayloadDataUnavailable {
            block: root,
            source,
        })?;
        self.payloads.insert(root);
        Ok(())
    }

    /// `on_payload_attestation_message(store, ptc_message, is_from_block)` for a message whose
    /// signature its caller checked (`is_valid_indexed_payload_attestation` on the block's
    /// post-state, for a message not from a block).
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
        let (Some(block), Some(votes)) = (
            self.blocks.get(&data.beacon_block_root),
            self.ptc_votes.get(&data.beacon_block_root),
        ) else {
            return Err(GloasError::UnknownBeaconBlock(data.beacon_block_root));
        };
        if data.slot != block.slot {
            return Ok(None);
        }
        let positions: Vec<usize> = votes
            .ptc
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

    /// `on_attestation(store, attestation, is_from_block)` for an attestation whose attesting
    /// indices its caller computed and checked (`get_indexed_attestation` and
    /// `is_valid_indexed_attestation` on `store_target_checkpoint_state(store, target)`):
    /// `validate_on_attestation`, then the votes.
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation
    pub fn on_indexed_attestation(
        &mut self,
        data: &AttestationData,
        attesting_indices: &[ValidatorIndex],
        is_from_block: bool,
    ) -> Result<(), GloasError> {
        self.validate_on_attestation(data, is_from_block)?;
        self.update_latest_messages(attesting_indices, data)?;
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

    /// The end of `on_attester_slashing` for a slashing its caller found valid (slashable
    /// data, both attestations valid in the justified checkpoint block's post-state): the
    /// validators in both attestations, given, are equivocating and their votes stop counting.
    ///
    /// [spec]: phase0/fork-choice.md#on_attester_slashing
    pub fn on_verified_attester_slashing(
        &mut self,
        equivocating: &[ValidatorIndex],
    ) -> Result<(), Error> {
        for &index in equivocating {
            self.votes.mark(index)?;
            self.equivocating_indices.insert(index);
        }
        Ok(())
    }

    /// The balances of `checkpoint`'s state (`JustifiedBalances::from_state` of
    /// `store_target_checkpoint_state(store, checkpoint)`), for a checkpoint that may become
    /// justified (a block's justified and unrealized justified checkpoints before
    /// [`Self::insert_block_summary`]; [`Self::wanted_justified_balances`]). Kept until the
    /// justified checkpoint passes its epoch; ignored for a checkpoint before it.
    pub fn set_justified_balances(&mut self, checkpoint: &Checkpoint, balances: JustifiedBalances) {
        if checkpoint.epoch < self.justified_checkpoint.epoch
            || self.has_justified_balances(checkpoint)
        {
            return;
        }
        self.candidate_balances
            .insert((checkpoint.epoch, checkpoint.root), balances);
    }

    /// Whether the store holds the balances of `checkpoint`.
    pub fn has_justified_balances(&self, checkpoint: &Checkpoint) -> bool {
        let key = (checkpoint.epoch, checkpoint.root);
        self.balances_checkpoint == Some(key) || self.candidate_balances.contains_key(&key)
    }

    /// The store's justified and unrealized justified checkpoints whose balances it does not
    /// hold: the head cannot be computed without the first, nor after the next epoch boundary
    /// without the second.
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
        let key = (justified.epoch, justified.root);
        if self.balances_checkpoint == Some(key) {
            return Ok(());
        }
        let balances = self
            .candidate_balances
            .remove(&key)
            .ok_or(Error::JustifiedBalancesMissing(justified.clone()))?;
        self.balances = balances;
        self.balances_checkpoint = Some(key);
        self.candidate_balances
            .retain(|(epoch, _), _| *epoch > justified.epoch);
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
    fn is_head_weak(&self, head_root: &Root) -> Result<bool, GloasError> {
        let threshold = self.calculate_committee_fraction(self.spec.reorg_head_weight_threshold);
        let block = self.block(head_root)?;
        let mut weight = self.tree.nodes()[block.pending].weight;
        if !self.equivocating_indices.is_empty() {
            let members = self
                .slot_committees
                .get(head_root)
                .ok_or(GloasError::MissingSlotCommittees(*head_root))?;
            for i in members {
                if self.equivocating_indices.contains(i) {
                    weight = weight.saturating_add(self.balances.effective_balance(*i));
                }
            }
        }
        Ok(weight < threshold)
    }

    /// `should_apply_proposer_boost(store)`. Weights must be up to date.
    ///
    /// [spec]: gloas/fork-choice.md#new-should_apply_proposer_boost
    fn should_apply_proposer_boost(&self) -> Result<bool, GloasError> {
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
    fn head_context(&mut self) -> Result<HeadContext, GloasError> {
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
    pub fn get_head(&mut self) -> Result<GloasHead, GloasError> {
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
    pub fn viable_for_head_nodes(&mut self) -> Result<Vec<WeighedNode>, GloasError> {
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
    fn new<E: EthSpec>(ptc: Vec<ValidatorIndex>) -> Self {
        Self {
            ptc,
            timeliness: vec![None; ptc_size::<E>()],
            data_availability: vec![None; ptc_size::<E>()],
        }
    }
}
