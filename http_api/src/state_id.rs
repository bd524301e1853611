//! `state_id` and `block_id`: from the spec's forms (head, genesis, finalized, justified, a slot,
//! a root) to a state or block of the node, with `execution_optimistic` and `finalized`.
//!
//! The chain finds the states and blocks and their flags (`beacon_chain::api_states`); this
//! module maps the spec's forms to its calls.
//!
//! [spec]: params/index.yaml (`StateId`, `BlockId`)

use beacon_api::{BlockId, StateId};
use beacon_chain::HeadSnapshot;
use types::{EthSpec, Root, SignedBeaconBlock, Slot};

use crate::ApiContext;
use crate::error::HttpError;

pub(crate) use beacon_chain::latest_block_root_of;

/// A state of the node with what the response envelopes say about it.
pub(crate) type StateAt<E> = beacon_chain::QueriedState<E>;

/// A block of the node with its root and envelope flags.
pub(crate) type BlockAt = beacon_chain::QueriedBlock;

/// The first slot of the finalized epoch.
fn finalized_slot<E: EthSpec>(head: &HeadSnapshot<E>) -> Slot {
    head.finalized_checkpoint.epoch * E::slots_per_epoch()
}

/// Resolves `id` to a state.
pub(crate) fn state_at<E: EthSpec>(
    ctx: &ApiContext<E>,
    id: StateId,
) -> Result<StateAt<E>, HttpError> {
    let chain = &ctx.chain;
    let spe = E::slots_per_epoch();
    let state = match id {
        StateId::Head => return Ok(chain.head_state()),
        StateId::Genesis => chain.state_at_slot(0),
        StateId::Finalized => chain.state_at_slot(finalized_slot(&chain.head())),
        StateId::Justified => chain.state_at_slot(chain.head().justified_checkpoint.epoch * spe),
        StateId::Slot(slot) => chain.state_at_slot(slot),
        StateId::Root(root) => chain.state_by_root(root),
    };
    Ok(state?)
}

/// The canonical block root at exactly `slot` (`None` for an empty slot or an unknown one).
pub(crate) fn canonical_block_root_at_slot<E: EthSpec>(
    ctx: &ApiContext<E>,
    head: &HeadSnapshot<E>,
    slot: Slot,
) -> Result<Option<Root>, HttpError> {
    Ok(ctx.chain.canonical_block_root_at_slot(head, slot)?)
}

/// Resolves `id` to a block root with its flags (the block itself is read by the caller).
pub(crate) fn block_at<E: EthSpec>(ctx: &ApiContext<E>, id: BlockId) -> Result<BlockAt, HttpError> {
    let chain = &ctx.chain;
    let block = match id {
        BlockId::Head => chain.head_block(),
        BlockId::Genesis => chain.block_at_slot(0),
        BlockId::Finalized => chain.finalized_block(),
        BlockId::Slot(slot) => chain.block_at_slot(slot),
        BlockId::Root(root) => chain.block_by_root(root),
    }?;
    block.ok_or_else(|| HttpError::not_found(format!("block {id} not found")))
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
