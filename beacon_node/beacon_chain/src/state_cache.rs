//! The chain's states in memory: block post-states by block root, checkpoint states
//! (`store.checkpoint_states`), the head's post-state advanced ahead of the next slot, their
//! memory measurement and the bounds that let the oldest go.
//!
//! Fork choice keeps no state: the chain reads what fork choice needs of a state here (a
//! block's pre-state, a target's committees, a justified checkpoint's balances) and hands fork
//! choice the results. The cache has its own lock, held only for a lookup or an insertion;
//! a state it let go of (or never had) is loaded from the store by its reader, without any
//! lock ([`crate::BeaconChain::block_state_outside_lock`]), and kept here again.

use std::collections::HashMap;
use std::time::Duration;

use state_processing::{
    CachedBeaconState, Caches, common::compute_epoch_at_slot, per_slot::process_slots,
};
use store::Store;
use types::{BeaconState, ChainSpec, Epoch, EthSpec, Root, Slot, phase0::Checkpoint};

use crate::chain::{ChainError, StoredItem};
use crate::tracked_mutex::TrackedMutex;

/// The most advanced states kept ([`StateCache::insert_advanced_state`]): the head's, and the
/// previous head's, whose advance may finish after a late block replaced it as head (both
/// remain candidates for the next block's parent).
const MAX_ADVANCED_STATES: usize = 2;

/// How long a waiter of the cache's lock waits before it reports the holder.
const STATE_CACHE_STALL: Duration = Duration::from_secs(12);

/// The bounds of the chain's state cache ([`crate::ChainConfig::state_cache`]).
#[derive(Debug, Clone, Copy)]
pub struct StateCacheConfig {
    /// The most block post-states kept in memory; the others are loaded back from the store
    /// when needed. The oldest by slot go first; fork choice's finalized, justified and
    /// unrealized checkpoints' blocks always stay. With finality every two epochs a node holds
    /// about 64 (minimal: 16) post-states, so the default only binds while the chain does not
    /// finalize: then memory stays bounded and a block on an old fork costs a state load.
    pub max_block_states: usize,
    /// The bytes the states in memory may take together (the block post-states, the
    /// checkpoint and advanced states, what they share counted once), as measured once per
    /// epoch (`BeaconChain::bound_state_memory`): the oldest block post-states beyond it go,
    /// as beyond `max_block_states`. A block's post-state adds to its parent's only what the
    /// block wrote (see [`DEFAULT_MAX_STATES_BYTES`] for what that comes to).
    pub max_states_bytes: usize,
}

/// [`StateCacheConfig::max_states_bytes`] by default: 1 GiB. At 1,000,000 validators the 65
/// block post-states of two epochs measured 675 MiB together (the import benchmark), so the
/// bound binds only when many more states are held (forks, a chain that does not finalize);
/// with the database's default page cache such a node measured 1,293-1,360 MiB resident.
pub const DEFAULT_MAX_STATES_BYTES: usize = 1 << 30;

impl Default for StateCacheConfig {
    fn default() -> Self {
        Self {
            max_block_states: 128,
            max_states_bytes: DEFAULT_MAX_STATES_BYTES,
        }
    }
}

/// The chain's states in memory (see the module docs).
pub(crate) struct StateCache<E: EthSpec> {
    config: StateCacheConfig,
    inner: TrackedMutex<Inner<E>>,
}

struct Inner<E: EthSpec> {
    /// Block post-states, with their block's slot (the oldest go first).
    block_states: HashMap<Root, (Slot, CachedBeaconState<E>)>,
    /// `store.checkpoint_states`: a block's post-state advanced to an epoch's first slot.
    checkpoint_states: HashMap<(Epoch, Root), CachedBeaconState<E>>,
    /// Blocks' post-states advanced through empty slots ahead of the next block, the latest
    /// last (at most [`MAX_ADVANCED_STATES`]).
    advanced_states: Vec<(Root, CachedBeaconState<E>)>,
    /// The blocks whose post-states stay whatever the bounds: fork choice's checkpoints'.
    pinned: Vec<Root>,
    /// The most block post-states the last memory measurement allows; `None` before one.
    memory_limit: Option<usize>,
}

fn key(checkpoint: &Checkpoint) -> (Epoch, Root) {
    (checkpoint.epoch, checkpoint.root)
}

impl<E: EthSpec> StateCache<E> {
    /// A cache holding `anchor`, the post-state of block `anchor_root` (at `anchor_slot`)
    /// advanced to the first slot of `anchor_epoch`, as that block's post-state and as the
    /// checkpoint state of `(anchor_epoch, anchor_root)`.
    pub(crate) fn new(
        config: StateCacheConfig,
        anchor_root: Root,
        anchor_slot: Slot,
        anchor_epoch: Epoch,
        anchor: CachedBeaconState<E>,
    ) -> Self {
        let mut block_states = HashMap::new();
        block_states.insert(anchor_root, (anchor_slot, anchor.clone()));
        let mut checkpoint_states = HashMap::new();
        checkpoint_states.insert((anchor_epoch, anchor_root), anchor);
        Self {
            config,
            inner: TrackedMutex::new(
                "state cache",
                STATE_CACHE_STALL,
                Inner {
                    block_states,
                    checkpoint_states,
                    advanced_states: Vec::new(),
                    pinned: vec![anchor_root],
                    memory_limit: None,
                },
            ),
        }
    }

    /// The post-state of block `root` when it is in memory (a cheap copy).
    pub(crate) fn block_state(&self, root: &Root) -> Option<CachedBeaconState<E>> {
        self.inner
            .lock()
            .block_states
            .get(root)
            .map(|(_, state)| state.clone())
    }

    /// Keeps `state` as the post-state of block `root` at `slot` (one just imported, or loaded
    /// back from the store with its tree hashes computed), letting the oldest others go beyond
    /// the bounds. `root` itself stays: its reader reads it next.
    pub(crate) fn insert_block_state(&self, root: Root, slot: Slot, state: CachedBeaconState<E>) {
        let mut inner = self.inner.lock();
        inner.block_states.insert(root, (slot, state));
        let max = self.block_states_limit(&inner);
        inner.evict(max, Some(root));
    }

    /// The post-state of block `root`: the one in memory, else loaded from `store` (its epoch
    /// snapshot and the blocks since, replayed; caches sharing the public keys of `caches`)
    /// without the cache's lock and kept here. Returns whether it was loaded.
    pub(crate) fn block_state_or_load(
        &self,
        root: &Root,
        store: &Store<E>,
        spec: &ChainSpec,
        caches: &Caches,
    ) -> Result<(CachedBeaconState<E>, bool), ChainError> {
        if let Some(state) = self.block_state(root) {
            return Ok((state, false));
        }
        let block = store.get_block(root)?.ok_or(ChainError::NotInStore {
            what: StoredItem::ForkChoiceBlock,
            root: *root,
        })?;
        let mut replayer = store::StateTransitionReplayer::new(spec);
        let state =
            store
                .get_state(&block.state_root(), &mut replayer)?
                .ok_or(ChainError::NotInStore {
                    what: StoredItem::BlockState,
                    root: *root,
                })?;
        let state = CachedBeaconState::with_caches_of(state, caches);
        self.insert_block_state(*root, block.slot(), state.clone());
        Ok((state, true))
    }

    /// `store.checkpoint_states[target]` (`store_target_checkpoint_state`): the one in memory,
    /// else the target block's post-state ([`Self::block_state_or_load`]) advanced to the
    /// epoch's first slot, kept here. Returns whether a block post-state was loaded.
    pub(crate) fn checkpoint_state_or_load(
        &self,
        target: &Checkpoint,
        store: &Store<E>,
        spec: &ChainSpec,
        caches: &Caches,
    ) -> Result<(CachedBeaconState<E>, bool), ChainError> {
        if let Some(state) = self.checkpoint_state(target) {
            return Ok((state, false));
        }
        let start = target.epoch * E::slots_per_epoch();
        let (mut state, loaded) = self.block_state_or_load(&target.root, store, spec, caches)?;
        if *state.state.slot() < start {
            process_slots(&mut state, start, spec).map_err(|source| {
                ChainError::SlotProcessing {
                    slot: start,
                    source,
                }
            })?;
        }
        self.insert_checkpoint_state(target, state.clone());
        Ok((state, loaded))
    }

    /// How many block post-states are in memory.
    pub(crate) fn block_states_len(&self) -> usize {
        self.inner.lock().block_states.len()
    }

    /// The checkpoint state of `target` when it is in memory.
    pub(crate) fn checkpoint_state(&self, target: &Checkpoint) -> Option<CachedBeaconState<E>> {
        self.inner
            .lock()
            .checkpoint_states
            .get(&key(target))
            .cloned()
    }

    /// Whether the checkpoint state of `target` is in memory.
    #[cfg(test)]
    pub(crate) fn has_checkpoint_state(&self, target: &Checkpoint) -> bool {
        self.inner
            .lock()
            .checkpoint_states
            .contains_key(&key(target))
    }

    /// Keeps `state`, the post-state of block `target.root` advanced to the first slot of
    /// `target.epoch`, as the checkpoint state of `target`. Ignored for a state at another
    /// slot, or one kept already.
    pub(crate) fn insert_checkpoint_state(&self, target: &Checkpoint, state: CachedBeaconState<E>) {
        if *state.state.slot() != target.epoch * E::slots_per_epoch() {
            return;
        }
        self.inner
            .lock()
            .checkpoint_states
            .entry(key(target))
            .or_insert(state);
    }

    /// Keeps `state`, the post-state of block `root` (at `block_slot`) advanced through empty
    /// slots, in place of an advanced state of the same block and of the oldest beyond
    /// [`MAX_ADVANCED_STATES`]: a block on `root` at or after the state's slot starts from it,
    /// so that the slots and any epoch transition between are not run again when it arrives.
    /// An advance to an epoch's first slot is also the checkpoint state of `(epoch, root)`.
    /// Ignored for a state not after the block's slot.
    pub(crate) fn insert_advanced_state(
        &self,
        root: Root,
        block_slot: Slot,
        state: CachedBeaconState<E>,
    ) {
        let slot = *state.state.slot();
        if slot <= block_slot {
            return;
        }
        let mut inner = self.inner.lock();
        if slot.is_multiple_of(E::slots_per_epoch()) {
            inner
                .checkpoint_states
                .entry((compute_epoch_at_slot::<E>(slot), root))
                .or_insert_with(|| state.clone());
        }
        inner.advanced_states.retain(|(kept, _)| *kept != root);
        inner.advanced_states.push((root, state));
        if inner.advanced_states.len() > MAX_ADVANCED_STATES {
            inner.advanced_states.remove(0);
        }
    }

    /// The advanced post-state of block `root` when one is kept at `slot` or before it (a
    /// cheap copy).
    pub(crate) fn advanced_state(&self, root: &Root, slot: Slot) -> Option<CachedBeaconState<E>> {
        self.inner
            .lock()
            .advanced_states
            .iter()
            .find(|(advanced_root, state)| advanced_root == root && *state.state.slot() <= slot)
            .map(|(_, state)| state.clone())
    }

    /// The blocks whose post-states stay whatever the bounds (fork choice's finalized,
    /// justified and unrealized checkpoints' blocks), after fork choice moved them.
    pub(crate) fn pin(&self, roots: impl IntoIterator<Item = Root>) {
        let mut inner = self.inner.lock();
        inner.pinned = roots.into_iter().collect();
        let max = self.block_states_limit(&inner);
        inner.evict(max, None);
    }

    /// Lets go of what finality made useless: the block post-states before the finalized
    /// checkpoint's epoch start (but the checkpoints' blocks), those of blocks fork choice no
    /// longer holds (`in_fork_choice` says), the checkpoint states before the finalized epoch.
    pub(crate) fn prune(&self, finalized: &Checkpoint, in_fork_choice: impl Fn(&Root) -> bool) {
        let finalized_slot = finalized.epoch * E::slots_per_epoch();
        let mut inner = self.inner.lock();
        let pinned = inner.pinned.clone();
        inner.block_states.retain(|root, (slot, _)| {
            pinned.contains(root) || (*slot >= finalized_slot && in_fork_choice(root))
        });
        inner
            .advanced_states
            .retain(|(root, _)| in_fork_choice(root));
        inner
            .checkpoint_states
            .retain(|(epoch, _), _| *epoch >= finalized.epoch);
    }

    /// Copies of the states held, to measure without the cache's lock
    /// ([`StatesInMemory::measure`]): cheap, each copy shares its state's trees.
    pub(crate) fn states_in_memory(&self) -> StatesInMemory<E> {
        let inner = self.inner.lock();
        let mut kept: Vec<BeaconState<E>> = inner
            .checkpoint_states
            .values()
            .chain(inner.advanced_states.iter().map(|(_, state)| state))
            .map(|state| state.state.clone())
            .collect();
        let mut kept_block_states = 0;
        let mut others = Vec::new();
        for (root, (slot, state)) in &inner.block_states {
            if inner.pinned.contains(root) {
                kept.push(state.state.clone());
                kept_block_states += 1;
            } else {
                others.push((*slot, state));
            }
        }
        others.sort_unstable_by_key(|(slot, _)| std::cmp::Reverse(*slot));
        StatesInMemory {
            kept,
            kept_block_states,
            block_states: others
                .into_iter()
                .map(|(_, state)| state.state.clone())
                .collect(),
        }
    }

    /// Bounds the block post-states by [`StateCacheConfig::max_states_bytes`] with the
    /// measurement `memory` of [`Self::states_in_memory`]: from now on at most as many as fitted
    /// then (the oldest going first), until the next measurement. Returns the most block
    /// post-states held from now on, by count and by memory, and how many are held now.
    pub(crate) fn bound(&self, memory: &StatesMemory) -> (usize, usize) {
        let mut inner = self.inner.lock();
        inner.memory_limit = memory.block_states_within(self.config.max_states_bytes);
        let max = self.block_states_limit(&inner);
        inner.evict(max, None);
        (max, inner.block_states.len())
    }

    /// The most block post-states held: `max_block_states`, or fewer when the last memory
    /// measurement found them over `max_states_bytes`.
    fn block_states_limit(&self, inner: &Inner<E>) -> usize {
        self.config
            .max_block_states
            .min(inner.memory_limit.unwrap_or(usize::MAX))
            .max(1)
    }
}

impl<E: EthSpec> Inner<E> {
    /// Lets go of the oldest post-states (by block slot) beyond `max`; the pinned blocks' stay,
    /// and so does `keep`.
    fn evict(&mut self, max: usize, keep: Option<Root>) {
        if self.block_states.len() <= max {
            return;
        }
        let mut candidates: Vec<(Slot, Root)> = self
            .block_states
            .iter()
            .filter(|(root, _)| !self.pinned.contains(root) && Some(**root) != keep)
            .map(|(root, (slot, _))| (*slot, *root))
            .collect();
        candidates.sort_unstable();
        let excess = self.block_states.len() - max;
        for (_, root) in candidates.into_iter().take(excess) {
            self.block_states.remove(&root);
        }
    }
}

/// Copies of the states a [`StateCache`] holds ([`StateCache::states_in_memory`]), to measure
/// without its lock: copies share every node with the states they copy.
pub(crate) struct StatesInMemory<E: EthSpec> {
    /// The states kept whatever their size: the checkpoint states, the advanced states and
    /// the post-states of the checkpoints' blocks.
    kept: Vec<BeaconState<E>>,
    /// How many of `kept` are block post-states.
    kept_block_states: usize,
    /// The other block post-states, newest first (the order the bound keeps them in).
    block_states: Vec<BeaconState<E>>,
}

impl<E: EthSpec> StatesInMemory<E> {
    /// Measures the states: what `kept` takes, then what each block post-state adds
    /// (`types::memory::differential_sizes`; hundreds of milliseconds at 1,000,000 validators).
    pub(crate) fn measure(&self) -> StatesMemory {
        let sizes = types::memory::differential_sizes(self.kept.iter().chain(&self.block_states));
        let (kept, block_states) = sizes.split_at(self.kept.len());
        StatesMemory {
            kept_bytes: kept.iter().sum(),
            kept_block_states: self.kept_block_states,
            block_state_bytes: block_states.to_vec(),
        }
    }
}

/// What the states of a [`StateCache`] take in memory ([`StatesInMemory::measure`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatesMemory {
    /// The bytes of the states kept whatever their size, together.
    pub kept_bytes: usize,
    /// How many of those are block post-states.
    pub kept_block_states: usize,
    /// The bytes each other block post-state adds, newest first.
    pub block_state_bytes: Vec<usize>,
}

impl StatesMemory {
    /// Every state's bytes together.
    pub(crate) fn total_bytes(&self) -> usize {
        self.kept_bytes + self.block_state_bytes.iter().sum::<usize>()
    }

    /// The most block post-states to hold within `budget` bytes: the kept ones, then the
    /// newest others while they fit. When all fit, as many more as the room left holds at
    /// their average size (so that a bound measured on few states does not shrink the cache).
    /// `None` when nothing can be said (no other block post-state measured, all fitting).
    pub(crate) fn block_states_within(&self, budget: usize) -> Option<usize> {
        let mut used = self.kept_bytes;
        let mut fitting = 0;
        for &bytes in &self.block_state_bytes {
            if used.saturating_add(bytes) > budget {
                return Some(self.kept_block_states + fitting);
            }
            used += bytes;
            fitting += 1;
        }
        if fitting == 0 {
            return None;
        }
        let average = (used - self.kept_bytes).div_ceil(fitting).max(1);
        Some(self.kept_block_states + fitting + (budget - used) / average)
    }
}

#[cfg(test)]
mod tests {
    use super::{StateCache, StateCacheConfig, StatesMemory};
    use state_processing::{
        CachedBeaconState, genesis::interop_genesis_state, per_slot::process_slots,
    };
    use types::{ChainSpec, ForkName, MinimalEthSpec, Root, Slot, phase0::Checkpoint};

    type E = MinimalEthSpec;

    fn genesis() -> (ChainSpec, CachedBeaconState<E>) {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        let state = interop_genesis_state::<E>(16, 1_600_000_000, Root::repeat_byte(0x42), &spec)
            .expect("interop genesis");
        (spec, CachedBeaconState::new(state))
    }

    fn advanced(
        state: &CachedBeaconState<E>,
        slot: Slot,
        spec: &ChainSpec,
    ) -> CachedBeaconState<E> {
        let mut state = state.clone();
        process_slots(&mut state, slot, spec).expect("empty slots");
        state
    }

    fn root(byte: u8) -> Root {
        Root::repeat_byte(byte)
    }

    #[test]
    fn the_oldest_unpinned_block_states_go_beyond_the_bound_and_the_latest_stays() {
        let (_, state) = genesis();
        let config = StateCacheConfig {
            max_block_states: 3,
            max_states_bytes: usize::MAX,
        };
        let cache = StateCache::new(config, root(0), 0, 0, state.clone());
        for (byte, slot) in [(1, 1), (2, 2), (3, 3), (4, 4)] {
            cache.insert_block_state(root(byte), slot, state.clone());
        }
        // The anchor is pinned (fork choice's checkpoints): slots 1 and 2 went.
        assert_eq!(cache.block_states_len(), 3);
        for (byte, kept) in [(0, true), (1, false), (2, false), (3, true), (4, true)] {
            assert_eq!(
                cache.block_state(&root(byte)).is_some(),
                kept,
                "block {byte}"
            );
        }
        // Pinning another block lets the anchor go, and keeps the pinned one.
        cache.pin([root(3)]);
        cache.insert_block_state(root(5), 5, state.clone());
        assert_eq!(cache.block_states_len(), 3);
        assert!(cache.block_state(&root(0)).is_none());
        assert!(cache.block_state(&root(3)).is_some());
        // The newest stays even when older ones are pinned beyond the bound.
        cache.pin([root(3), root(4)]);
        cache.insert_block_state(root(6), 6, state);
        assert!(cache.block_state(&root(6)).is_some());
        assert!(cache.block_state(&root(3)).is_some());
        assert!(cache.block_state(&root(4)).is_some());
    }

    #[test]
    fn an_advanced_state_is_the_pre_state_from_its_slot_on_and_at_an_epoch_start_a_checkpoint_state()
     {
        let (spec, state) = genesis();
        let config = StateCacheConfig {
            max_block_states: 8,
            max_states_bytes: usize::MAX,
        };
        let cache = StateCache::new(config, root(0), 0, 0, state.clone());
        // Not after its block: ignored.
        cache.insert_advanced_state(root(1), 3, advanced(&state, 3, &spec));
        assert!(cache.advanced_state(&root(1), 10).is_none());
        // At the first slot of epoch 1: the pre-state from slot 8 on, and the checkpoint state
        // of (1, block).
        cache.insert_advanced_state(root(1), 2, advanced(&state, 8, &spec));
        assert!(cache.advanced_state(&root(1), 7).is_none());
        assert_eq!(
            cache.advanced_state(&root(1), 9).map(|s| *s.state.slot()),
            Some(8)
        );
        assert!(cache.advanced_state(&root(2), 9).is_none());
        let checkpoint = Checkpoint {
            epoch: 1,
            root: root(1),
        };
        assert!(cache.has_checkpoint_state(&checkpoint));
        // Two blocks' advanced states at most: the oldest goes.
        cache.insert_advanced_state(root(2), 2, advanced(&state, 5, &spec));
        cache.insert_advanced_state(root(3), 2, advanced(&state, 5, &spec));
        assert!(cache.advanced_state(&root(1), 9).is_none());
        assert!(cache.advanced_state(&root(2), 9).is_some());
        assert!(cache.advanced_state(&root(3), 9).is_some());
        // A checkpoint state at another slot than its epoch's first is refused.
        let wrong = Checkpoint {
            epoch: 1,
            root: root(4),
        };
        cache.insert_checkpoint_state(&wrong, advanced(&state, 9, &spec));
        assert!(!cache.has_checkpoint_state(&wrong));

        // Finality at epoch 1 lets go of what is before it and of blocks fork choice dropped.
        cache.insert_block_state(root(5), 9, state.clone());
        cache.insert_block_state(root(6), 4, state);
        cache.pin([root(1)]);
        cache.prune(&checkpoint, |r| *r != root(2));
        assert!(cache.block_state(&root(5)).is_some());
        assert!(cache.block_state(&root(6)).is_none());
        assert!(cache.block_state(&root(0)).is_none());
        assert!(cache.advanced_state(&root(2), 9).is_none());
        assert!(cache.has_checkpoint_state(&checkpoint));
        assert!(!cache.has_checkpoint_state(&Checkpoint {
            epoch: 0,
            root: root(0),
        }));
    }

    fn memory(kept_bytes: usize, block_state_bytes: &[usize]) -> StatesMemory {
        StatesMemory {
            kept_bytes,
            kept_block_states: 2,
            block_state_bytes: block_state_bytes.to_vec(),
        }
    }

    #[test]
    fn the_memory_bound_keeps_the_newest_block_states_that_fit() {
        let m = memory(100, &[10, 20, 30]);
        assert_eq!(m.total_bytes(), 160);
        // The kept two, then the newest while they fit.
        assert_eq!(m.block_states_within(129), Some(3));
        assert_eq!(m.block_states_within(130), Some(4));
        assert_eq!(m.block_states_within(159), Some(4));
        // Over budget with the kept states alone: only those.
        assert_eq!(m.block_states_within(50), Some(2));
        // All fit: as many more as the room holds at their average size (20).
        assert_eq!(m.block_states_within(160), Some(5));
        assert_eq!(m.block_states_within(200), Some(7));
        // Nothing measured beside the kept states: no bound.
        assert_eq!(memory(100, &[]).block_states_within(1000), None);
    }
}
