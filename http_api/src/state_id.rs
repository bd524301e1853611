//! `state_id` and `block_id`: from the spec's forms (head, genesis, finalized, justified, a slot,
//! a root) to a state or block of the node, with `execution_optimistic` and `finalized`.
//!
//! Canonical slots are read from the head state's `block_roots` / `state_roots` for the last
//! `SLOTS_PER_HISTORICAL_ROOT` slots and from the store's finalized (cold) index before.
//!
//! [spec]: params/index.yaml (`StateId`, `BlockId`)

use std::sync::Arc;

use beacon_api::{BlockId, StateId};
use beacon_chain::{HeadSnapshot, PayloadStatus};
use ssz_types::typenum::Unsigned;
use state_processing::CachedBeaconState;
use tree_hash::TreeHash;
use types::{EthSpec, Root, SignedBeaconBlock, Slot};

use crate::ApiContext;
use crate::error::HttpError;

/// A state of the node with what the response envelopes say about it.
#[derive(Debug, Clone)]
pub(crate) struct StateAt<E: EthSpec> {
    /// The state (its caches shared with the head's where it is the head's).
    pub(crate) state: CachedBeaconState<E>,
    /// Its root.
    pub(crate) root: Root,
    /// The root of the latest block applied to it.
    pub(crate) latest_block_root: Root,
    /// Whether it rests on a payload the execution client has not validated.
    pub(crate) execution_optimistic: bool,
    /// Whether it is finalized.
    pub(crate) finalized: bool,
}

impl<E: EthSpec> StateAt<E> {
    /// The state's slot.
    pub(crate) fn slot(&self) -> Slot {
        *self.state.state.slot()
    }
}

/// A block of the node with its root and envelope flags.
#[derive(Debug, Clone)]
pub(crate) struct BlockAt {
    /// The block's root.
    pub(crate) root: Root,
    /// Whether it is on the canonical chain.
    pub(crate) canonical: bool,
    /// Whether its payload (or an ancestor's) is not validated yet.
    pub(crate) execution_optimistic: bool,
    /// Whether it is finalized.
    pub(crate) finalized: bool,
}

fn slots_per_historical_root<E: EthSpec>() -> u64 {
    E::SlotsPerHistoricalRoot::to_u64()
}

/// The first slot of the finalized epoch.
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

/// The root of the latest block applied to `state` whose root is `state_root`: its
/// `latest_block_header` with the state root filled in as the next slot would.
pub(crate) fn latest_block_root_of<E: EthSpec>(
    state: &types::BeaconState<E>,
    state_root: Root,
) -> Root {
    let mut header = state.latest_block_header().clone();
    if header.state_root == Root::ZERO {
        header.state_root = state_root;
    }
    header.tree_hash_root()
}

/// Resolves `id` to a state.
pub(crate) fn state_at<E: EthSpec>(
    ctx: &ApiContext<E>,
    id: StateId,
) -> Result<StateAt<E>, HttpError> {
    let head = ctx.chain.head();
    let spe = E::slots_per_epoch();
    match id {
        StateId::Head => Ok(head_state(&head)),
        StateId::Genesis => state_at_slot(ctx, &head, 0),
        StateId::Finalized => state_at_slot(ctx, &head, finalized_slot(&head)),
        StateId::Justified => state_at_slot(ctx, &head, head.justified_checkpoint.epoch * spe),
        StateId::Slot(slot) => state_at_slot(ctx, &head, slot),
        StateId::Root(root) => state_by_root(ctx, &head, root),
    }
}

fn head_state<E: EthSpec>(head: &HeadSnapshot<E>) -> StateAt<E> {
    StateAt {
        state: head.state.clone(),
        root: head.state_root,
        latest_block_root: head.block_root,
        execution_optimistic: head.execution_optimistic,
        finalized: head.slot <= finalized_slot(head),
    }
}

fn state_at_slot<E: EthSpec>(
    ctx: &ApiContext<E>,
    head: &Arc<HeadSnapshot<E>>,
    slot: Slot,
) -> Result<StateAt<E>, HttpError> {
    if slot == head.slot {
        return Ok(head_state(head));
    }
    if slot > head.slot {
        return Err(HttpError::not_found(format!(
            "no state at slot {slot}: the head is at slot {}",
            head.slot
        )));
    }
    let finalized = slot <= finalized_slot(head);
    let spec = ctx.chain.spec();
    if let Some(root) = canonical_state_root(head, slot) {
        let state = load_canonical_state(ctx, head, root, slot)?;
        let latest_block_root = latest_block_root_at(head, slot)
            .unwrap_or_else(|| latest_block_root_of(&state.state, root));
        let execution_optimistic = !finalized
            && ctx.chain.payload_status(&latest_block_root) == PayloadStatus::NotValidated;
        return Ok(StateAt {
            state,
            root,
            latest_block_root,
            execution_optimistic,
            finalized,
        });
    }
    let mut replayer = store::StateTransitionReplayer::new(spec);
    let state = ctx
        .chain
        .store()
        .get_cold_state_by_slot(slot, &mut replayer)?
        .ok_or_else(|| HttpError::not_found(format!("no state at slot {slot}")))?;
    let mut state = CachedBeaconState::with_caches_of(state, &head.state.caches);
    let root = state
        .hash_tree_root()
        .map_err(|e| HttpError::internal(format!("state root: {e:?}")))?;
    let latest_block_root = latest_block_root_of(&state.state, root);
    Ok(StateAt {
        state,
        root,
        latest_block_root,
        execution_optimistic: false,
        finalized,
    })
}

/// The canonical state `root` at `slot`: stored, or the latest block's post-state advanced
/// through the empty slots after it.
fn load_canonical_state<E: EthSpec>(
    ctx: &ApiContext<E>,
    head: &HeadSnapshot<E>,
    root: Root,
    slot: Slot,
) -> Result<CachedBeaconState<E>, HttpError> {
    let store = ctx.chain.store();
    let spec = ctx.chain.spec();
    let mut replayer = store::StateTransitionReplayer::new(spec);
    if let Some(state) = store.get_state(&root, &mut replayer)? {
        return Ok(CachedBeaconState::with_caches_of(state, &head.state.caches));
    }
    // An empty slot's state is not stored: the post-state of the block before it, advanced.
    let block_root = latest_block_root_at(head, slot)
        .ok_or_else(|| HttpError::not_found(format!("no state at slot {slot}")))?;
    let block = store
        .get_block(&block_root)?
        .ok_or_else(|| HttpError::not_found(format!("no block {block_root} for slot {slot}")))?;
    let state = store
        .get_state(&block.state_root(), &mut replayer)?
        .ok_or_else(|| HttpError::not_found(format!("no state at slot {slot}")))?;
    let mut state = CachedBeaconState::with_caches_of(state, &head.state.caches);
    if *state.state.slot() < slot {
        state_processing::per_slot::process_slots(&mut state, slot, spec)
            .map_err(|e| HttpError::internal(format!("advancing to slot {slot}: {e:?}")))?;
    }
    Ok(state)
}

fn state_by_root<E: EthSpec>(
    ctx: &ApiContext<E>,
    head: &Arc<HeadSnapshot<E>>,
    root: Root,
) -> Result<StateAt<E>, HttpError> {
    if root == head.state_root {
        return Ok(head_state(head));
    }
    let mut replayer = store::StateTransitionReplayer::new(ctx.chain.spec());
    let state = ctx
        .chain
        .store()
        .get_state(&root, &mut replayer)?
        .ok_or_else(|| HttpError::not_found(format!("no state with root {root}")))?;
    let slot = *state.slot();
    let canonical = canonical_state_root(head, slot) == Some(root);
    let finalized = slot <= finalized_slot(head)
        && (canonical || slot + slots_per_historical_root::<E>() < head.slot);
    let latest_block_root = latest_block_root_of(&state, root);
    let optimistic =
        !finalized && ctx.chain.payload_status(&latest_block_root) == PayloadStatus::NotValidated;
    Ok(StateAt {
        state: CachedBeaconState::with_caches_of(state, &head.state.caches),
        root,
        latest_block_root,
        execution_optimistic: optimistic,
        finalized,
    })
}

/// The canonical block root at exactly `slot` (`None` for an empty slot or an unknown one).
pub(crate) fn canonical_block_root_at_slot<E: EthSpec>(
    ctx: &ApiContext<E>,
    head: &HeadSnapshot<E>,
    slot: Slot,
) -> Result<Option<Root>, HttpError> {
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
            None => ctx
                .chain
                .store()
                .get_block(&root)?
                .and_then(|b| (b.slot() == slot).then_some(root)),
        });
    }
    Ok(ctx.chain.store().block_root_at_slot(slot)?)
}

/// Resolves `id` to a block root with its flags (the block itself is read by the caller).
pub(crate) fn block_at<E: EthSpec>(ctx: &ApiContext<E>, id: BlockId) -> Result<BlockAt, HttpError> {
    let head = ctx.chain.head();
    let not_found = || HttpError::not_found(format!("block {id} not found"));
    let (root, canonical_known) = match id {
        BlockId::Head => (head.block_root, true),
        BlockId::Genesis => (
            canonical_block_root_at_slot(ctx, &head, 0)?.ok_or_else(not_found)?,
            true,
        ),
        BlockId::Finalized => (head.finalized_checkpoint.root, true),
        BlockId::Slot(slot) => (
            canonical_block_root_at_slot(ctx, &head, slot)?.ok_or_else(not_found)?,
            true,
        ),
        BlockId::Root(root) => (root, false),
    };
    let slot = if root == head.block_root {
        head.slot
    } else {
        // The slot alone, read from the stored bytes: no decoding of the block.
        let ssz = ctx
            .chain
            .store()
            .get_block_ssz(&root)?
            .ok_or_else(not_found)?;
        SignedBeaconBlock::<E>::slot_from_ssz_bytes(&ssz)
            .map_err(|e| HttpError::internal(format!("stored block {root}: {e:?}")))?
    };
    let canonical =
        canonical_known || canonical_block_root_at_slot(ctx, &head, slot)? == Some(root);
    let finalized = canonical && slot <= finalized_slot(&head);
    let execution_optimistic = if root == head.block_root {
        head.execution_optimistic
    } else {
        !finalized && ctx.chain.payload_status(&root) == PayloadStatus::NotValidated
    };
    Ok(BlockAt {
        root,
        canonical,
        execution_optimistic,
        finalized,
    })
}

/// Reads block `root` from the store (404 if absent).
pub(crate) fn read_block<E: EthSpec>(
    ctx: &ApiContext<E>,
    root: &Root,
) -> Result<SignedBeaconBlock<E>, HttpError> {
    ctx.chain
        .store()
        .get_block(root)?
        .ok_or_else(|| HttpError::not_found(format!("block {root} not found")))
}
