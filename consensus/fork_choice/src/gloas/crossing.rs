//! Carrying a pre-Gloas store into the Gloas store at the fork: the node's chain runs the
//! pre-Gloas fork choice until its first Gloas block, whose import turns the block tree, the
//! checkpoints and the latest messages into a [`GloasForkChoice`]. The spec's Gloas store
//! is only ever built from an anchor (`get_forkchoice_store`); this is the client's bridge.
//!
//! Each pre-Gloas block is taken as a block whose payload was delivered with it and verified:
//! its "bid" hashes are its payload's `block_hash` and its parent's, so each block's PENDING
//! node hangs under its parent's FULL node and a first Gloas block building on the last
//! pre-Gloas payload (`is_parent_node_full`) finds it verified. No pre-Gloas block has a PTC
//! (`get_ptc` refuses a slot before the fork, consensus-specs #5652): theirs is one of no
//! validator, so no payload attestation counts for them. A latest message `(epoch, root)`
//! becomes one of the epoch's first slot (its block's slot when later), for the block's FULL
//! node when that slot is after the block's.

use std::sync::Arc;

use types::{ChainSpec, Epoch, EthSpec, Hash32, Root, Slot, ValidatorIndex, phase0::Checkpoint};

use super::{GloasError, GloasForkChoice, LatestMessage, PtcVotes, ptc_size};
use crate::error::Error;

/// A block of the pre-Gloas store, as the Gloas store takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreGloasBlock {
    /// The block's root.
    pub root: Root,
    /// Its parent's root.
    pub parent_root: Root,
    /// Its slot.
    pub slot: Slot,
    /// Its proposer.
    pub proposer_index: ValidatorIndex,
    /// Its payload's `block_hash` (for the anchor, the latest payload of its state).
    pub payload_hash: Hash32,
    /// Its parent's payload's `block_hash` (zero for the first block).
    pub parent_payload_hash: Hash32,
    /// The post-state's `current_justified_checkpoint`.
    pub justified: Checkpoint,
    /// `store.unrealized_justifications[root]`.
    pub unrealized_justified: Checkpoint,
    /// Whether it arrived in time for the proposer boost.
    pub timely: bool,
}

/// The pre-Gloas store, as the Gloas store takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreGloasStore {
    /// `store.time`.
    pub time: u64,
    /// `store.genesis_time`.
    pub genesis_time: u64,
    /// `store.justified_checkpoint`.
    pub justified_checkpoint: Checkpoint,
    /// `store.finalized_checkpoint`.
    pub finalized_checkpoint: Checkpoint,
    /// `store.unrealized_justified_checkpoint`.
    pub unrealized_justified_checkpoint: Checkpoint,
    /// `store.unrealized_finalized_checkpoint`.
    pub unrealized_finalized_checkpoint: Checkpoint,
    /// `store.proposer_boost_root`.
    pub proposer_boost_root: Root,
    /// `store.equivocating_indices`.
    pub equivocating_indices: Vec<ValidatorIndex>,
    /// The blocks, parents first; each after the first has its parent before it.
    pub blocks: Vec<PreGloasBlock>,
    /// `store.latest_messages` as `(validator, epoch, root)`.
    pub latest_messages: Vec<(ValidatorIndex, Epoch, Root)>,
}

impl<E: EthSpec> GloasForkChoice<E> {
    /// The Gloas store carrying `pre` (see the module documentation). A block whose parent is
    /// not before it (other than the first) is [`GloasError::PreGloasBlockOutOfPlace`]; a
    /// latest message for a block not carried is dropped. The justified balances are to be
    /// handed over ([`Self::wanted_justified_balances`]).
    pub fn from_pre_gloas(pre: &PreGloasStore, spec: Arc<ChainSpec>) -> Result<Self, GloasError> {
        let mut store = Self::empty(spec, pre.genesis_time);
        store.time = pre.time;
        store.justified_checkpoint = pre.justified_checkpoint.clone();
        store.finalized_checkpoint = pre.finalized_checkpoint.clone();
        store.unrealized_justified_checkpoint = pre.unrealized_justified_checkpoint.clone();
        store.unrealized_finalized_checkpoint = pre.unrealized_finalized_checkpoint.clone();
        let no_ptc = vec![ValidatorIndex::MAX; ptc_size::<E>()];
        for (i, block) in pre.blocks.iter().enumerate() {
            if store.blocks.contains_key(&block.root)
                || (i > 0 && !store.blocks.contains_key(&block.parent_root))
            {
                return Err(GloasError::PreGloasBlockOutOfPlace(block.root));
            }
            store.add_block(
                block.root,
                block.slot,
                block.proposer_index,
                block.parent_root,
                block.payload_hash,
                block.parent_payload_hash,
                block.justified.clone(),
                block.unrealized_justified.clone(),
                [block.timely, block.timely],
            );
            store
                .ptc_votes
                .insert(block.root, PtcVotes::new::<E>(no_ptc.clone()));
            store.slot_committees.insert(block.root, Vec::new());
            store.payloads.insert(block.root);
        }
        if store.blocks.contains_key(&pre.proposer_boost_root) {
            store.proposer_boost_root = pre.proposer_boost_root;
        }
        for &index in &pre.equivocating_indices {
            store.votes.mark(index)?;
            store.equivocating_indices.insert(index);
        }
        for &(index, epoch, root) in &pre.latest_messages {
            if store.equivocating_indices.contains(&index) {
                continue;
            }
            let Some(block) = store.blocks.get(&root) else {
                continue;
            };
            let slot = (epoch * E::slots_per_epoch()).max(block.slot);
            let message = LatestMessage {
                slot,
                root,
                payload_present: slot > block.slot,
                block_slot: block.slot,
                pending: u32::try_from(block.pending)
                    .map_err(|_| Error::VoteNodeOutOfRange(u32::MAX))?,
            };
            store.votes.process_attestation(index, &message)?;
        }
        Ok(store)
    }
}
