//! A read-only copy of the fork-choice store for the Beacon API's `GET /eth/v1/debug/fork_choice`:
//! the store's justified and finalized checkpoints and one entry per block of the proto-array
//! (the blocks since the finalized one), with its weight and its payload's validity.
//!
//! The store's lock is held only while the nodes are copied; payload statuses are read after it
//! is released.

use types::{Epoch, Root, Slot, ValidatorIndex, phase0::Checkpoint};

use crate::chain::{BeaconChain, ExecutionStatus};
use crate::chain_fork_choice::ChainForkChoice;

/// The validity of a block's execution payload, as the Beacon API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadValidity {
    /// The execution client found the payload valid (or the block is the finalized one).
    Valid,
    /// The payload, or an ancestor's, was found invalid.
    Invalid,
    /// Imported optimistically: not validated yet.
    Optimistic,
}

impl PayloadValidity {
    /// The API's string: `valid`, `invalid` or `optimistic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Invalid => "invalid",
            Self::Optimistic => "optimistic",
        }
    }
}

/// One block of the fork-choice tree.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkChoiceNode {
    /// `block.slot`.
    pub slot: Slot,
    /// `hash_tree_root(block)`.
    pub block_root: Root,
    /// `block.parent_root`.
    pub parent_root: Root,
    /// The block's post-state `current_justified_checkpoint.epoch`.
    pub justified_epoch: Epoch,
    /// The block's post-state `finalized_checkpoint.epoch`.
    pub finalized_epoch: Epoch,
    /// The votes (and the proposer boost) for the block and its descendants, in Gwei.
    pub weight: u64,
    /// The payload's validity.
    pub validity: PayloadValidity,
    /// The payload's `block_hash`; zero for a block whose payload the store does not know (the
    /// anchor).
    pub execution_block_hash: Root,
    /// `block.proposer_index`.
    pub proposer_index: ValidatorIndex,
    /// The justified checkpoint of the post-state pulled up to the next epoch boundary.
    pub unrealized_justified: Checkpoint,
    /// Whether the block arrived in time for the proposer boost (`store.block_timeliness`).
    pub timely: bool,
}

/// The fork-choice store as the debug endpoint shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkChoiceDump {
    /// `store.justified_checkpoint`.
    pub justified_checkpoint: Checkpoint,
    /// `store.finalized_checkpoint`.
    pub finalized_checkpoint: Checkpoint,
    /// `store.unrealized_justified_checkpoint`.
    pub unrealized_justified_checkpoint: Checkpoint,
    /// `store.unrealized_finalized_checkpoint`.
    pub unrealized_finalized_checkpoint: Checkpoint,
    /// `store.proposer_boost_root` (zero when none).
    pub proposer_boost_root: Root,
    /// The blocks, parents before children (the proto-array's order).
    pub nodes: Vec<ForkChoiceNode>,
}

impl<E: types::EthSpec> BeaconChain<E> {
    /// A copy of the fork-choice store: checkpoints and every block it holds.
    pub fn fork_choice_dump(&self) -> ForkChoiceDump {
        let (mut dump, statuses) = {
            let chain_fc = self.fork_choice.lock();
            let mut statuses = Vec::new();
            let nodes = match &*chain_fc {
                ChainForkChoice::Fulu(fc) => fc
                    .proto_array()
                    .nodes()
                    .iter()
                    .map(|node| {
                        statuses.push(node.execution_status);
                        let finalized_epoch = node.finalized_epoch;
                        ForkChoiceNode {
                            slot: node.slot,
                            block_root: node.root,
                            parent_root: node.parent_root,
                            justified_epoch: node.justified.epoch,
                            finalized_epoch,
                            weight: node.weight,
                            validity: PayloadValidity::Optimistic,
                            execution_block_hash: fc
                                .payload_block_hash(&node.root)
                                .unwrap_or_default(),
                            proposer_index: node.proposer_index,
                            unrealized_justified: node.unrealized_justified.clone(),
                            timely: node.timely,
                        }
                    })
                    .collect(),
                // One entry per block: its PENDING node's weight; the payload is its envelope's
                // (the bid's block hash once the envelope was imported, else the hash the
                // block built on). The Gloas store keeps no finalized epoch per block: the
                // store's is given.
                ChainForkChoice::Gloas(g) => g
                    .store
                    .block_roots()
                    .iter()
                    .filter_map(|root| g.store.block_info(root))
                    .map(|info| {
                        let status = g.payload_statuses.get(&info.root).copied();
                        statuses.push(status.unwrap_or(ExecutionStatus::NotValidated));
                        ForkChoiceNode {
                            slot: info.slot,
                            block_root: info.root,
                            parent_root: info.parent_root,
                            justified_epoch: info.justified.epoch,
                            finalized_epoch: g.store.finalized_checkpoint().epoch,
                            weight: info.weight,
                            validity: PayloadValidity::Optimistic,
                            execution_block_hash: if info.payload_verified {
                                info.bid_block_hash
                            } else {
                                info.bid_parent_block_hash
                            },
                            proposer_index: info.proposer_index,
                            unrealized_justified: info.unrealized_justified.clone(),
                            timely: info.attestation_timely,
                        }
                    })
                    .collect(),
            };
            let dump = ForkChoiceDump {
                justified_checkpoint: chain_fc.justified_checkpoint().clone(),
                finalized_checkpoint: chain_fc.finalized_checkpoint().clone(),
                unrealized_justified_checkpoint: chain_fc.unrealized_justified_checkpoint().clone(),
                unrealized_finalized_checkpoint: chain_fc.unrealized_finalized_checkpoint().clone(),
                proposer_boost_root: chain_fc.proposer_boost_root(),
                nodes,
            };
            (dump, statuses)
        };
        let finalized_root = dump.finalized_checkpoint.root;
        for (node, status) in dump.nodes.iter_mut().zip(statuses) {
            node.validity = match status {
                ExecutionStatus::Valid => PayloadValidity::Valid,
                ExecutionStatus::Invalidated => PayloadValidity::Invalid,
                // The finalized block counts as valid, as everywhere in the API
                // (`execution_optimistic` is false for finalized data).
                ExecutionStatus::NotValidated if node.block_root == finalized_root => {
                    PayloadValidity::Valid
                }
                ExecutionStatus::NotValidated => PayloadValidity::Optimistic,
            };
        }
        dump
    }
}
