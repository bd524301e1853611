//! The states and blocks the Beacon API reads, found and derived by the chain: a canonical
//! state by slot (stored, an empty slot's advanced from its block's post-state, or a finalized
//! one rebuilt from the cold store), a state by root, the states duties are read from (the
//! head's, advanced when the head is behind, or an older one), a block by slot or root with its
//! flags, the justified checkpoint an attestation votes for as its source, and a stored block
//! replayed on its pre-state for its rewards.
//!
//! The API maps requests to these calls and [`StateQueryError`] to its statuses: the variants
//! before [`StateQueryError::Chain`] are the request's (a slot beyond the head, a state or
//! block the node does not hold, an epoch out of range), the others the node's.

use parking_lot::Mutex;
use state_processing::CachedBeaconState;
use state_processing::common::compute_epoch_at_slot;
use state_processing::per_block::{
    AlwaysValid, BlockProcessingError, VerifySignatures, process_block,
};
use state_processing::per_slot::process_slots;
use tree_hash::TreeHash;
use types::electra::BeaconBlock;
use types::phase0::Checkpoint;
use types::typenum::Unsigned;
use types::{Epoch, EthSpec, Root, Slot};

use crate::chain::{BeaconChain, ChainError, ExecutionStatus, HeadSnapshot};

/// A state of the chain as a query found it, with what the API's response envelopes say about
/// it.
#[derive(Debug, Clone)]
pub struct QueriedState<E: EthSpec> {
    /// The state (its public keys shared with the head's; the head's own caches for the head).
    pub state: CachedBeaconState<E>,
    /// Its root.
    pub root: Root,
    /// The root of the latest block applied to it.
    pub latest_block_root: Root,
    /// Whether it rests on a payload the execution client has not validated.
    pub execution_optimistic: bool,
    /// Whether it is finalized.
    pub finalized: bool,
}

impl<E: EthSpec> QueriedState<E> {
    /// The state's slot.
    pub fn slot(&self) -> Slot {
        *self.state.state.slot()
    }
}

/// A block of the chain as a query found it, with what the API's response envelopes say about
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueriedBlock {
    /// The block's root.
    pub root: Root,
    /// Whether it is on the canonical chain.
    pub canonical: bool,
    /// Whether its payload (or an ancestor's) is not validated yet.
    pub execution_optimistic: bool,
    /// Whether it is finalized.
    pub finalized: bool,
}

/// A leaf of the unfinalized block tree ([`BeaconChain::block_tree_leaves`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTreeLeaf {
    /// The block's root.
    pub root: Root,
    /// The block's slot.
    pub slot: Slot,
    /// Whether its payload (or an ancestor's) is not validated yet.
    pub execution_optimistic: bool,
}

/// A stored block run again on its pre-state, signatures unchecked (it was imported)
/// ([`BeaconChain::replay_block`]).
#[derive(Debug, Clone)]
pub struct BlockReplay<E: EthSpec> {
    /// The parent's post-state advanced to the block's slot.
    pub pre_state: CachedBeaconState<E>,
    /// The block's post-state.
    pub post_state: CachedBeaconState<E>,
}

/// Why a state or block query failed. The request is at fault for the variants before
/// [`Self::Chain`]; the others are failures of the node.
#[derive(Debug, thiserror::Error)]
pub enum StateQueryError {
    /// The request's fault: a state at a slot after the head's was asked for.
    #[error("no state at slot {slot}: the head is at slot {head_slot}")]
    SlotAfterHead {
        /// The slot asked for.
        slot: Slot,
        /// The head block's slot.
        head_slot: Slot,
    },
    /// The request's fault: the node holds no canonical state at the slot (before its anchor,
    /// or pruned).
    #[error("no state at slot {slot}")]
    NoStateAtSlot {
        /// The slot asked for.
        slot: Slot,
    },
    /// The request's fault: the canonical block of an empty slot, whose post-state the slot's
    /// state is advanced from, is not held.
    #[error("no block {block_root} for slot {slot}")]
    NoBlockForSlot {
        /// The latest canonical block at the slot.
        block_root: Root,
        /// The slot asked for.
        slot: Slot,
    },
    /// The request's fault: the node holds no state with the root asked for.
    #[error("no state with root {root}")]
    NoStateWithRoot {
        /// The state root asked for.
        root: Root,
    },
    /// The request's fault: a block (the parent of a block asked about) is not held.
    #[error("block {block_root} not found")]
    NoBlock {
        /// The block's root.
        block_root: Root,
    },
    /// The request's fault: the sync committee of an epoch beyond the clock's next period is
    /// not known yet.
    #[error(
        "epoch {epoch} is beyond the next sync committee period (the clock is in period {clock_period})"
    )]
    BeyondNextSyncPeriod {
        /// The epoch asked for.
        epoch: Epoch,
        /// The clock's sync committee period.
        clock_period: u64,
    },
    /// The node's fault: the store, hashing a state or advancing it through empty slots
    /// failed.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The node's fault: a stored block's bytes do not give its slot.
    #[error("stored block {block_root}: {error:?}")]
    StoredBlockSlot {
        /// The block.
        block_root: Root,
        /// The decoding failure.
        error: ssz::DecodeError,
    },
    /// The node's fault: a stored (imported) block failed on its own pre-state.
    #[error("replaying block {block_root}: {source}")]
    BlockReplay {
        /// The block.
        block_root: Root,
        /// The failure.
        #[source]
        source: BlockProcessingError,
    },
}

impl From<store::StoreError> for StateQueryError {
    fn from(e: store::StoreError) -> Self {
        Self::Chain(ChainError::Store(e))
    }
}

/// The one-entry caches of the API's state queries.
#[derive(Debug, Default)]
pub(crate) struct ApiStateCaches {
    /// The attestation source of an epoch after the head's: (head block, epoch, checkpoint),
    /// from the head state advanced through the boundary once per head and epoch.
    justified_source: Mutex<Option<(Root, Epoch, Checkpoint)>>,
}

/// The root of the latest block applied to `state`, whose root is `state_root`: its
/// `latest_block_header` with the state root filled in as the next slot would.
pub fn latest_block_root_of<E: EthSpec>(state: &types::BeaconState<E>, state_root: Root) -> Root {
    let mut header = state.latest_block_header().clone();
    if header.state_root == Root::ZERO {
        header.state_root = state_root;
    }
    header.tree_hash_root()
}

fn slots_per_historical_root<E: EthSpec>() -> u64 {
    E::SlotsPerHistoricalRoot::to_u64()
}

/// The first slot of the head's finalized epoch.
fn finalized_slot<E: EthSpec>(head: &HeadSnapshot<E>) -> Slot {
    head.finalized_checkpoint.epoch * E::slots_per_epoch()
}

/// The canonical state root at `slot` (at or before the head), from the head state's
/// `state_roots`; `None` when the slot is older than the head state remembers.
fn canonical_state_root<E: EthSpec>(head: &HeadSnapshot<E>, slot: Slot) -> Option<Root> {
    if slot == head.slot {
        return Some(head.state_root);
    }
    let n = slots_per_historical_root::<E>();
    (slot < head.slot && head.slot - slot <= n)
        .then(|| {
            head.state
                .state
                .state_roots()
                .get((slot % n) as usize)
                .copied()
        })
        .flatten()
}

/// The root of the latest canonical block at or before `slot` (at or before the head), from the
/// head state's `block_roots`; `None` when older than the head state remembers.
fn latest_block_root_at<E: EthSpec>(head: &HeadSnapshot<E>, slot: Slot) -> Option<Root> {
    if slot >= head.slot {
        return Some(head.block_root);
    }
    let n = slots_per_historical_root::<E>();
    (head.slot - slot <= n)
        .then(|| {
            head.state
                .state
                .block_roots()
                .get((slot % n) as usize)
                .copied()
        })
        .flatten()
}

/// The head's post-state as a query finds it.
fn head_state<E: EthSpec>(head: &HeadSnapshot<E>) -> QueriedState<E> {
    QueriedState {
        state: head.state.clone(),
        root: head.state_root,
        latest_block_root: head.block_root,
        execution_optimistic: head.execution_optimistic,
        finalized: head.slot <= finalized_slot(head),
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// The clock's epoch with the gossip clock disparity added (a request just before an
    /// epoch boundary may ask for the next one).
    pub fn epoch_with_future_tolerance(&self) -> Epoch {
        let now = self
            .now_ms()
            .saturating_add(self.spec().maximum_gossip_clock_disparity);
        self.slot_at_ms(now) / E::slots_per_epoch()
    }

    /// The head's post-state.
    pub fn head_state(&self) -> QueriedState<E> {
        head_state(&self.head())
    }

    /// The canonical state at `slot`: the head's, a stored one, an empty slot's (the post-state
    /// of the block before it, advanced), or a finalized one rebuilt from the cold store.
    pub fn state_at_slot(&self, slot: Slot) -> Result<QueriedState<E>, StateQueryError> {
        self.state_at_slot_of(&self.head(), slot)
    }

    /// The state with root `root`, canonical or not.
    pub fn state_by_root(&self, root: Root) -> Result<QueriedState<E>, StateQueryError> {
        let head = self.head();
        if root == head.state_root {
            return Ok(head_state(&head));
        }
        let mut replayer = store::StateTransitionReplayer::new(self.spec());
        let state = self
            .store()
            .get_state(&root, &mut replayer)?
            .ok_or(StateQueryError::NoStateWithRoot { root })?;
        let slot = *state.slot();
        let canonical = canonical_state_root(&head, slot) == Some(root);
        let finalized = slot <= finalized_slot(&head)
            && (canonical || slot + slots_per_historical_root::<E>() < head.slot);
        let latest_block_root = latest_block_root_of(&state, root);
        let execution_optimistic =
            !finalized && self.payload_status(&latest_block_root) == ExecutionStatus::NotValidated;
        Ok(QueriedState {
            state: CachedBeaconState::with_caches_of(state, &head.state.caches),
            root,
            latest_block_root,
            execution_optimistic,
            finalized,
        })
    }

    /// `state` advanced through empty slots to `slot` (after its own), with its new root; its
    /// latest block and flags are the same.
    pub fn state_advanced_to(
        &self,
        mut state: QueriedState<E>,
        slot: Slot,
    ) -> Result<QueriedState<E>, StateQueryError> {
        process_slots(&mut state.state, slot, self.spec())
            .map_err(|source| ChainError::SlotProcessing { slot, source })?;
        state.root = state.state.hash_tree_root().map_err(ChainError::State)?;
        Ok(state)
    }

    /// A state from which the duties (committees, proposers) of `epoch` can be read: the
    /// head's when `epoch` is within one epoch of it, the head's advanced to the epoch before
    /// `epoch` when the head is further behind, the canonical state at `epoch`'s first slot
    /// when `epoch` is older.
    pub fn duty_state(&self, epoch: Epoch) -> Result<QueriedState<E>, StateQueryError> {
        let spe = E::slots_per_epoch();
        let head = self.head();
        let head_epoch = head.slot / spe;
        if epoch <= head_epoch + 1 && epoch + 1 >= head_epoch {
            return Ok(head_state(&head));
        }
        if epoch > head_epoch + 1 {
            // The head is more than an epoch behind: its state advanced through the empty
            // slots.
            return self.state_advanced_to(head_state(&head), (epoch - 1) * spe);
        }
        self.state_at_slot_of(&head, epoch * spe)
    }

    /// A state whose current or next sync committee is the one of `epoch`'s period: the
    /// head's when it is (the usual case), the head's advanced into the period before
    /// `epoch`'s when the head is behind the clock (the first slot of a period before its
    /// block: the head state still holds the previous period's committees), the canonical
    /// state at `epoch`'s first slot for a past period. Any epoch in the clock's current or
    /// next period is served; one beyond is refused.
    ///
    /// [spec]: altair/validator.md#sync-committee
    pub fn sync_duty_state(&self, epoch: Epoch) -> Result<QueriedState<E>, StateQueryError> {
        let spe = E::slots_per_epoch();
        let period = |e: Epoch| e / E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
        let clock_period = period(self.epoch_with_future_tolerance());
        if period(epoch) > clock_period + 1 {
            return Err(StateQueryError::BeyondNextSyncPeriod {
                epoch,
                clock_period,
            });
        }
        let head = self.head();
        let at = head_state(&head);
        let head_period = period(compute_epoch_at_slot::<E>(at.slot()));
        if period(epoch) > head_period + 1 {
            // The head is a period or more behind the clock: its state advanced to the first
            // slot of the period before `epoch`'s, whose next committee is `epoch`'s.
            let target = (period(epoch) - 1) * E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD * spe;
            return self.state_advanced_to(at, target);
        }
        if period(epoch) < head_period {
            return self.state_at_slot_of(&head, epoch * spe);
        }
        Ok(at)
    }

    /// The source of an attestation of `epoch` on the block of `head` (a head state): the
    /// state's current justified checkpoint, as of `epoch`'s first slot when `epoch` is after
    /// the state's (justification may move at the boundary). The advance runs once per block
    /// and epoch; the chain keeps the last answer.
    ///
    /// [spec]: phase0/validator.md#attestation-data
    pub fn justified_source_at(
        &self,
        head: &QueriedState<E>,
        epoch: Epoch,
    ) -> Result<Checkpoint, StateQueryError> {
        let spe = E::slots_per_epoch();
        if epoch <= head.slot() / spe {
            return Ok(head.state.state.current_justified_checkpoint().clone());
        }
        let cache = &self.api_state_caches.justified_source;
        let cached = cache
            .lock()
            .clone()
            .filter(|(root, e, _)| *root == head.latest_block_root && *e == epoch);
        if let Some((_, _, source)) = cached {
            return Ok(source);
        }
        let slot = epoch * spe;
        let mut advanced = head.state.clone();
        process_slots(&mut advanced, slot, self.spec())
            .map_err(|source| ChainError::SlotProcessing { slot, source })?;
        let source = advanced.state.current_justified_checkpoint().clone();
        *cache.lock() = Some((head.latest_block_root, epoch, source.clone()));
        Ok(source)
    }

    /// The pre-state of the stored `block`: its parent's post-state advanced through the empty
    /// slots to the block's.
    pub fn block_pre_state(
        &self,
        block: &BeaconBlock<E>,
    ) -> Result<CachedBeaconState<E>, StateQueryError> {
        let parent =
            self.store()
                .get_block(&block.parent_root)?
                .ok_or(StateQueryError::NoBlock {
                    block_root: block.parent_root,
                })?;
        let mut pre = self.state_by_root(parent.state_root())?.state;
        if *pre.state.slot() < block.slot {
            process_slots(&mut pre, block.slot, self.spec()).map_err(|source| {
                ChainError::SlotProcessing {
                    slot: block.slot,
                    source,
                }
            })?;
        }
        Ok(pre)
    }

    /// The stored block `block_root` run again on its pre-state ([`Self::block_pre_state`]),
    /// its signatures and payload not checked (it was imported with them).
    pub fn replay_block(
        &self,
        block_root: Root,
        block: &BeaconBlock<E>,
    ) -> Result<BlockReplay<E>, StateQueryError> {
        let pre_state = self.block_pre_state(block)?;
        let mut post_state = pre_state.clone();
        let (mut view, caches) = post_state.view_mut().map_err(ChainError::State)?;
        process_block(
            &mut view,
            caches,
            block,
            VerifySignatures::None,
            &AlwaysValid,
            self.spec(),
        )
        .map_err(|source| StateQueryError::BlockReplay { block_root, source })?;
        Ok(BlockReplay {
            pre_state,
            post_state,
        })
    }

    /// The canonical block root at exactly `slot` as `head` knows it (`None` for an empty
    /// slot, one after the head, or one the node does not know).
    pub fn canonical_block_root_at_slot(
        &self,
        head: &HeadSnapshot<E>,
        slot: Slot,
    ) -> Result<Option<Root>, StateQueryError> {
        if slot > head.slot {
            return Ok(None);
        }
        if slot == head.slot {
            return Ok(Some(head.block_root));
        }
        if let Some(root) = latest_block_root_at(head, slot) {
            // `block_roots` repeats the previous block's root through empty slots.
            let previous = slot
                .checked_sub(1)
                .map(|s| latest_block_root_at(head, s))
                .unwrap_or(None);
            return Ok(match previous {
                Some(prev) if prev == root => None,
                Some(_) => Some(root),
                None if slot == 0 => Some(root),
                None => self
                    .store()
                    .get_block(&root)?
                    .and_then(|b| (b.slot() == slot).then_some(root)),
            });
        }
        Ok(self.store().block_root_at_slot(slot)?)
    }

    /// The head block.
    pub fn head_block(&self) -> Result<Option<QueriedBlock>, StateQueryError> {
        let head = self.head();
        self.queried_block(&head, head.block_root, true)
    }

    /// The block of the head's finalized checkpoint (`None` when the store lacks it).
    pub fn finalized_block(&self) -> Result<Option<QueriedBlock>, StateQueryError> {
        let head = self.head();
        self.queried_block(&head, head.finalized_checkpoint.root, true)
    }

    /// The canonical block at exactly `slot` (`None` for an empty slot, one after the head or
    /// one the node does not know).
    pub fn block_at_slot(&self, slot: Slot) -> Result<Option<QueriedBlock>, StateQueryError> {
        let head = self.head();
        match self.canonical_block_root_at_slot(&head, slot)? {
            Some(root) => self.queried_block(&head, root, true),
            None => Ok(None),
        }
    }

    /// The block `root`, canonical or not (`None` when the store lacks it).
    pub fn block_by_root(&self, root: Root) -> Result<Option<QueriedBlock>, StateQueryError> {
        self.queried_block(&self.head(), root, false)
    }

    /// Block `root`'s flags as `head` knows the chain; `canonical` when the caller found it on
    /// the canonical chain already.
    fn queried_block(
        &self,
        head: &HeadSnapshot<E>,
        root: Root,
        canonical: bool,
    ) -> Result<Option<QueriedBlock>, StateQueryError> {
        let slot = if root == head.block_root {
            head.slot
        } else {
            // The slot alone, read from the stored bytes: no decoding of the block.
            let Some(ssz) = self.store().get_block_ssz(&root)? else {
                return Ok(None);
            };
            types::SignedBeaconBlock::<E>::slot_from_ssz_bytes(&ssz).map_err(|error| {
                StateQueryError::StoredBlockSlot {
                    block_root: root,
                    error,
                }
            })?
        };
        let canonical = canonical || self.canonical_block_root_at_slot(head, slot)? == Some(root);
        let finalized = canonical && slot <= finalized_slot(head);
        let execution_optimistic = if root == head.block_root {
            head.execution_optimistic
        } else {
            !finalized && self.payload_status(&root) == ExecutionStatus::NotValidated
        };
        Ok(Some(QueriedBlock {
            root,
            canonical,
            execution_optimistic,
            finalized,
        }))
    }

    /// The first canonical block after `parent` as `head` knows the chain (its canonical
    /// child); `None` when `parent` is not held or no canonical block follows it.
    pub fn canonical_child(
        &self,
        head: &HeadSnapshot<E>,
        parent: Root,
    ) -> Result<Option<Root>, StateQueryError> {
        let Some(parent_block) = self.store().get_block(&parent)? else {
            return Ok(None);
        };
        for slot in parent_block.slot() + 1..=head.slot {
            if let Some(root) = self.canonical_block_root_at_slot(head, slot)? {
                return Ok(Some(root));
            }
        }
        Ok(None)
    }

    /// The leaves of the unfinalized block tree: the store's hot blocks no other hot block
    /// builds on, or the head alone when there are none.
    pub fn block_tree_leaves(&self) -> Result<Vec<BlockTreeLeaf>, StateQueryError> {
        let hot = self.store().hot_blocks()?;
        let parents: std::collections::HashSet<Root> = hot.iter().map(|(_, _, p)| *p).collect();
        let head = self.head();
        let mut leaves: Vec<BlockTreeLeaf> = hot
            .iter()
            .filter(|(_, root, _)| !parents.contains(root))
            .map(|(slot, root, _)| BlockTreeLeaf {
                root: *root,
                slot: *slot,
                execution_optimistic: if *root == head.block_root {
                    head.execution_optimistic
                } else {
                    self.payload_status(root) == ExecutionStatus::NotValidated
                },
            })
            .collect();
        if leaves.is_empty() {
            leaves.push(BlockTreeLeaf {
                root: head.block_root,
                slot: head.slot,
                execution_optimistic: head.execution_optimistic,
            });
        }
        Ok(leaves)
    }

    /// [`Self::state_at_slot`] as `head` knows the chain.
    fn state_at_slot_of(
        &self,
        head: &HeadSnapshot<E>,
        slot: Slot,
    ) -> Result<QueriedState<E>, StateQueryError> {
        if slot == head.slot {
            return Ok(head_state(head));
        }
        if slot > head.slot {
            return Err(StateQueryError::SlotAfterHead {
                slot,
                head_slot: head.slot,
            });
        }
        let finalized = slot <= finalized_slot(head);
        if let Some(root) = canonical_state_root(head, slot) {
            let state = self.canonical_state(head, root, slot)?;
            let latest_block_root = latest_block_root_at(head, slot)
                .unwrap_or_else(|| latest_block_root_of(&state.state, root));
            let execution_optimistic = !finalized
                && self.payload_status(&latest_block_root) == ExecutionStatus::NotValidated;
            return Ok(QueriedState {
                state,
                root,
                latest_block_root,
                execution_optimistic,
                finalized,
            });
        }
        let mut replayer = store::StateTransitionReplayer::new(self.spec());
        let state = self
            .store()
            .get_cold_state_by_slot(slot, &mut replayer)?
            .ok_or(StateQueryError::NoStateAtSlot { slot })?;
        let mut state = CachedBeaconState::with_caches_of(state, &head.state.caches);
        let root = state.hash_tree_root().map_err(ChainError::State)?;
        let latest_block_root = latest_block_root_of(&state.state, root);
        Ok(QueriedState {
            state,
            root,
            latest_block_root,
            execution_optimistic: false,
            finalized,
        })
    }

    /// The canonical state `root` at `slot`: stored, or the latest block's post-state advanced
    /// through the empty slots after it.
    fn canonical_state(
        &self,
        head: &HeadSnapshot<E>,
        root: Root,
        slot: Slot,
    ) -> Result<CachedBeaconState<E>, StateQueryError> {
        let store = self.store();
        let mut replayer = store::StateTransitionReplayer::new(self.spec());
        if let Some(state) = store.get_state(&root, &mut replayer)? {
            return Ok(CachedBeaconState::with_caches_of(state, &head.state.caches));
        }
        // An empty slot's state is not stored: the post-state of the block before it, advanced.
        let block_root =
            latest_block_root_at(head, slot).ok_or(StateQueryError::NoStateAtSlot { slot })?;
        let block = store
            .get_block(&block_root)?
            .ok_or(StateQueryError::NoBlockForSlot { block_root, slot })?;
        let state = store
            .get_state(&block.state_root(), &mut replayer)?
            .ok_or(StateQueryError::NoStateAtSlot { slot })?;
        let mut state = CachedBeaconState::with_caches_of(state, &head.state.caches);
        if *state.state.slot() < slot {
            process_slots(&mut state, slot, self.spec())
                .map_err(|source| ChainError::SlotProcessing { slot, source })?;
        }
        Ok(state)
    }
}
