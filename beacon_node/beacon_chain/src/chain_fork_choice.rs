//! The chain's fork choice: the store of the fork the chain's anchor is in. A chain anchored
//! before Gloas runs [`ForkChoice`] (one node per block, the payload inside the block); one
//! anchored at or after Gloas runs [`GloasForkChoice`] (PENDING, EMPTY and FULL nodes per block,
//! the payload delivered by its own envelope). [`ChainForkChoice`] is that choice, behind the
//! chain's fork-choice lock: what both stores answer (checkpoints, the head, ancestry,
//! persistence, balances) is one method here; what only one of them has is reached through
//! [`ChainForkChoice::fulu`] / [`ChainForkChoice::gloas`].
//!
//! The fork is crossed at the chain's first Gloas block ([`ChainForkChoice::cross_into_gloas`]):
//! the pre-Gloas block tree, checkpoints, equivocations and latest messages are carried into a
//! Gloas store, each pre-Gloas block as one whose payload was delivered and verified (FULL,
//! its payload's hash as its bid's), and the chain runs the Gloas store from then on. A Gloas
//! chain refuses blocks of earlier forks ([`crate::ChainError::PreGloasBlock`]).

use std::collections::HashMap;
use std::sync::Arc;

use fork_choice::{
    ExecutionStatus, ForkChoice, GloasForkChoice, JustifiedBalances, PayloadStatus,
    gloas::{PreGloasBlock, PreGloasStore},
};
use state_processing::per_block::VerifySignatures;
use types::{ChainSpec, EthSpec, Hash32, Root, Slot, ValidatorIndex, phase0::Checkpoint};

use crate::chain::ChainError;

/// The Gloas store and what the chain keeps beside it.
pub(crate) struct GloasChainForkChoice<E: EthSpec> {
    /// The store.
    pub(crate) store: GloasForkChoice<E>,
    /// How signatures of blocks, attestations, slashings and envelopes are checked.
    pub(crate) verify_signatures: VerifySignatures,
    /// The execution client's verdict on each imported envelope's payload (VALID, or not
    /// validated for SYNCING and ACCEPTED; an INVALID payload never reaches the store). Not
    /// persisted: after a restart the payloads count as not validated until the execution
    /// client says otherwise, as before Gloas.
    pub(crate) payload_statuses: HashMap<Root, ExecutionStatus>,
}

/// The chain's fork-choice store, of the fork of its anchor.
pub(crate) enum ChainForkChoice<E: EthSpec> {
    /// Before Gloas: the payload is in the block.
    Fulu(ForkChoice<E>),
    /// Gloas: the payload comes in its envelope, each block is three nodes.
    Gloas(GloasChainForkChoice<E>),
}

/// The head fork choice chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainHead {
    /// The head block's root.
    pub root: Root,
    /// The head block's slot.
    pub slot: Slot,
    /// Gloas: whether the head is the block with its payload (FULL) or without (EMPTY); `None`
    /// before Gloas.
    pub payload_status: Option<PayloadStatus>,
}

impl<E: EthSpec> ChainForkChoice<E> {
    /// A Gloas store with nothing recorded beside it.
    pub(crate) fn gloas(store: GloasForkChoice<E>, verify_signatures: VerifySignatures) -> Self {
        Self::Gloas(GloasChainForkChoice {
            store,
            verify_signatures,
            payload_statuses: HashMap::new(),
        })
    }

    /// Carries the pre-Gloas store into a Gloas store, in place (nothing for a chain running
    /// the Gloas store already): each block not invalidated, with its payload's hash as its
    /// bid's (`anchor_payload_hash` for the store's first block when fork choice does not know
    /// its payload: the anchor's), taken as FULL and verified; the checkpoints, proposer boost,
    /// equivocating indices and the latest messages of validators `0..validators`; the
    /// payloads' execution statuses as the envelopes' verdicts. See
    /// [`GloasForkChoice::from_pre_gloas`].
    pub(crate) fn cross_into_gloas(
        &mut self,
        anchor_payload_hash: Hash32,
        validators: u64,
        spec: &Arc<ChainSpec>,
    ) -> Result<(), ChainError> {
        let Self::Fulu(fc) = self else {
            return Ok(());
        };
        let mut hashes: HashMap<Root, Hash32> = HashMap::new();
        let mut payload_statuses = HashMap::new();
        let mut blocks = Vec::new();
        for node in fc.proto_array().nodes() {
            let first = blocks.is_empty();
            if node.execution_status == ExecutionStatus::Invalidated
                || (!first && !hashes.contains_key(&node.parent_root))
            {
                continue;
            }
            let payload_hash = fc
                .payload_block_hash(&node.root)
                .unwrap_or(anchor_payload_hash);
            let parent_payload_hash = hashes
                .get(&node.parent_root)
                .copied()
                .unwrap_or(Hash32::ZERO);
            hashes.insert(node.root, payload_hash);
            payload_statuses.insert(node.root, node.execution_status);
            blocks.push(PreGloasBlock {
                root: node.root,
                parent_root: node.parent_root,
                slot: node.slot,
                proposer_index: node.proposer_index,
                payload_hash,
                parent_payload_hash,
                justified: node.justified.clone(),
                unrealized_justified: node.unrealized_justified.clone(),
                timely: node.timely,
            });
        }
        let mut latest_messages = Vec::new();
        let mut equivocating_indices = Vec::new();
        for index in 0..validators {
            if fc.is_equivocating(index) {
                equivocating_indices.push(index);
            } else if let Some((epoch, Some(root))) = fc.latest_message(index) {
                latest_messages.push((index, epoch, root));
            }
        }
        let pre = PreGloasStore {
            time: fc.time(),
            genesis_time: fc.genesis_time(),
            justified_checkpoint: fc.justified_checkpoint().clone(),
            finalized_checkpoint: fc.finalized_checkpoint().clone(),
            unrealized_justified_checkpoint: fc.unrealized_justified_checkpoint().clone(),
            unrealized_finalized_checkpoint: fc.unrealized_finalized_checkpoint().clone(),
            proposer_boost_root: fc.proposer_boost_root(),
            equivocating_indices,
            blocks,
            latest_messages,
        };
        let verify_signatures = fc.verify_signatures();
        let store = GloasForkChoice::from_pre_gloas(&pre, spec.clone())?;
        *self = Self::Gloas(GloasChainForkChoice {
            store,
            verify_signatures,
            payload_statuses,
        });
        Ok(())
    }

    /// Whether the chain runs the Gloas fork choice.
    pub(crate) fn is_gloas(&self) -> bool {
        matches!(self, Self::Gloas(_))
    }

    /// The pre-Gloas store, mutably, when the chain runs it.
    pub(crate) fn fulu_mut(&mut self) -> Option<&mut ForkChoice<E>> {
        match self {
            Self::Fulu(fc) => Some(fc),
            Self::Gloas(_) => None,
        }
    }

    /// The pre-Gloas store, for block `block_root` of a pre-Gloas fork; a Gloas chain
    /// refuses such a block ([`ChainError::PreGloasBlock`]).
    pub(crate) fn fulu_for_block(
        &mut self,
        block_root: Root,
        fork: types::ForkName,
    ) -> Result<&mut ForkChoice<E>, ChainError> {
        match self {
            Self::Fulu(fc) => Ok(fc),
            Self::Gloas(_) => Err(ChainError::PreGloasBlock { block_root, fork }),
        }
    }

    /// The Gloas store and what the chain keeps beside it, when the chain runs it.
    pub(crate) fn gloas_chain(&self) -> Option<&GloasChainForkChoice<E>> {
        match self {
            Self::Fulu(_) => None,
            Self::Gloas(g) => Some(g),
        }
    }

    /// The Gloas store and what the chain keeps beside it, mutably, when the chain runs it.
    pub(crate) fn gloas_mut(&mut self) -> Option<&mut GloasChainForkChoice<E>> {
        match self {
            Self::Fulu(_) => None,
            Self::Gloas(g) => Some(g),
        }
    }

    /// The Gloas store, mutably, for Gloas block `block_root`; a chain anchored before Gloas
    /// refuses it ([`ChainError::CrossesGloasFork`]).
    pub(crate) fn gloas_for_block(
        &mut self,
        block_root: Root,
    ) -> Result<&mut GloasChainForkChoice<E>, ChainError> {
        match self {
            Self::Fulu(_) => Err(ChainError::CrossesGloasFork { block_root }),
            Self::Gloas(g) => Ok(g),
        }
    }

    /// `root in store.blocks`.
    pub(crate) fn contains_block(&self, root: &Root) -> bool {
        match self {
            Self::Fulu(fc) => fc.contains_block(root),
            Self::Gloas(g) => g.store.contains_block(root),
        }
    }

    /// The slot of block `root`, when the store holds it.
    pub(crate) fn block_slot(&self, root: &Root) -> Option<Slot> {
        match self {
            Self::Fulu(fc) => fc.proto_array().get(root).map(|node| node.slot),
            Self::Gloas(g) => g.store.block_info(root).map(|info| info.slot),
        }
    }

    /// Whether the store holds a child of block `root` at `slot` or later (`is_valid_dependent_root`
    /// reads it: on that branch `root` is the last block before `slot`).
    ///
    /// [spec]: gloas/p2p-interface.md#new-is_valid_dependent_root
    pub(crate) fn has_child_from(&self, root: &Root, slot: Slot) -> bool {
        match self {
            Self::Fulu(fc) => fc
                .proto_array()
                .nodes()
                .iter()
                .any(|node| node.parent_root == *root && node.slot >= slot),
            Self::Gloas(g) => g
                .store
                .block_roots()
                .iter()
                .filter_map(|child| g.store.block_info(child))
                .any(|info| info.parent_root == *root && info.slot >= slot),
        }
    }

    /// Every block root the store holds, parents before children.
    pub(crate) fn block_roots(&self) -> Vec<Root> {
        match self {
            Self::Fulu(fc) => fc.proto_array().nodes().iter().map(|n| n.root).collect(),
            Self::Gloas(g) => g.store.block_roots().to_vec(),
        }
    }

    /// `store.justified_checkpoint`.
    pub(crate) fn justified_checkpoint(&self) -> &Checkpoint {
        match self {
            Self::Fulu(fc) => fc.justified_checkpoint(),
            Self::Gloas(g) => g.store.justified_checkpoint(),
        }
    }

    /// `store.finalized_checkpoint`.
    pub(crate) fn finalized_checkpoint(&self) -> &Checkpoint {
        match self {
            Self::Fulu(fc) => fc.finalized_checkpoint(),
            Self::Gloas(g) => g.store.finalized_checkpoint(),
        }
    }

    /// `store.unrealized_justified_checkpoint`.
    pub(crate) fn unrealized_justified_checkpoint(&self) -> &Checkpoint {
        match self {
            Self::Fulu(fc) => fc.unrealized_justified_checkpoint(),
            Self::Gloas(g) => g.store.unrealized_justified_checkpoint(),
        }
    }

    /// `store.unrealized_finalized_checkpoint`.
    pub(crate) fn unrealized_finalized_checkpoint(&self) -> &Checkpoint {
        match self {
            Self::Fulu(fc) => fc.unrealized_finalized_checkpoint(),
            Self::Gloas(g) => g.store.unrealized_finalized_checkpoint(),
        }
    }

    /// Replaces the finalized checkpoint (a store started from a chosen checkpoint).
    pub(crate) fn set_finalized_checkpoint(&mut self, checkpoint: Checkpoint) {
        match self {
            Self::Fulu(fc) => fc.set_finalized_checkpoint(checkpoint),
            Self::Gloas(g) => g.store.set_finalized_checkpoint(checkpoint),
        }
    }

    /// `store.time`.
    pub(crate) fn time(&self) -> u64 {
        match self {
            Self::Fulu(fc) => fc.time(),
            Self::Gloas(g) => g.store.time(),
        }
    }

    /// `store.proposer_boost_root`.
    pub(crate) fn proposer_boost_root(&self) -> Root {
        match self {
            Self::Fulu(fc) => fc.proposer_boost_root(),
            Self::Gloas(g) => g.store.proposer_boost_root(),
        }
    }

    /// `on_tick(store, time)`.
    pub(crate) fn on_tick(&mut self, time: u64) {
        match self {
            Self::Fulu(fc) => fc.on_tick(time),
            Self::Gloas(g) => g.store.on_tick(time),
        }
    }

    /// How signatures are checked.
    pub(crate) fn verify_signatures(&self) -> VerifySignatures {
        match self {
            Self::Fulu(fc) => fc.verify_signatures(),
            Self::Gloas(g) => g.verify_signatures,
        }
    }

    /// The block at or before `slot` in the chain of `root`.
    pub(crate) fn get_ancestor(&self, root: &Root, slot: Slot) -> Result<Root, ChainError> {
        Ok(match self {
            Self::Fulu(fc) => fc.get_ancestor(root, slot)?,
            Self::Gloas(g) => g.store.get_ancestor(root, slot)?,
        })
    }

    /// `get_checkpoint_block(store, root, epoch)`.
    pub(crate) fn get_checkpoint_block(
        &self,
        root: &Root,
        epoch: types::Epoch,
    ) -> Result<Root, ChainError> {
        Ok(match self {
            Self::Fulu(fc) => fc.get_checkpoint_block(root, epoch)?,
            Self::Gloas(g) => g.store.get_checkpoint_block(root, epoch)?,
        })
    }

    /// `get_head(store)`; for Gloas with the head node's payload status.
    pub(crate) fn get_head(&mut self) -> Result<ChainHead, ChainError> {
        Ok(match self {
            Self::Fulu(fc) => {
                let head = fc.get_head()?;
                ChainHead {
                    root: head.root,
                    slot: head.slot,
                    payload_status: None,
                }
            }
            Self::Gloas(g) => {
                let head = g.store.get_head()?;
                ChainHead {
                    root: head.root,
                    slot: head.slot,
                    payload_status: Some(head.payload_status),
                }
            }
        })
    }

    /// The store as the database keeps it.
    pub(crate) fn to_persisted_bytes(&self) -> Vec<u8> {
        match self {
            Self::Fulu(fc) => fc.to_persisted_bytes(),
            Self::Gloas(g) => g.store.to_persisted_bytes(),
        }
    }

    /// The justified checkpoints whose balances the store lacks.
    pub(crate) fn wanted_justified_balances(&self) -> Vec<Checkpoint> {
        match self {
            Self::Fulu(fc) => fc.wanted_justified_balances(),
            Self::Gloas(g) => g.store.wanted_justified_balances(),
        }
    }

    /// Whether the store holds the balances of `checkpoint`.
    pub(crate) fn has_justified_balances(&self, checkpoint: &Checkpoint) -> bool {
        match self {
            Self::Fulu(fc) => fc.has_justified_balances(checkpoint),
            Self::Gloas(g) => g.store.has_justified_balances(checkpoint),
        }
    }

    /// Hands the store the balances of `checkpoint`'s state.
    pub(crate) fn set_justified_balances(
        &mut self,
        checkpoint: &Checkpoint,
        balances: JustifiedBalances,
    ) {
        match self {
            Self::Fulu(fc) => fc.set_justified_balances(checkpoint, balances),
            Self::Gloas(g) => g.store.set_justified_balances(checkpoint, balances),
        }
    }

    /// The end of `on_attester_slashing`: the validators given are equivocating.
    pub(crate) fn on_verified_attester_slashing(
        &mut self,
        equivocating: &[ValidatorIndex],
    ) -> Result<(), ChainError> {
        match self {
            Self::Fulu(fc) => fc.on_verified_attester_slashing(equivocating)?,
            Self::Gloas(g) => g.store.on_verified_attester_slashing(equivocating)?,
        }
        Ok(())
    }

    /// The store's current slot (`get_current_slot(store)`).
    pub(crate) fn current_slot(&self) -> Slot {
        match self {
            Self::Fulu(fc) => fc.get_current_slot(),
            Self::Gloas(g) => g.store.get_current_slot(),
        }
    }

    /// `is_payload_verified(store, root)`: before Gloas, whether the store holds the block
    /// (its payload is inside it); for Gloas, whether its envelope was imported.
    ///
    /// [spec]: gloas/fork-choice.md#new-is_payload_verified
    pub(crate) fn is_payload_verified(&self, root: &Root) -> bool {
        match self {
            Self::Fulu(fc) => fc.contains_block(root),
            Self::Gloas(g) => g.store.is_payload_verified(root),
        }
    }

    /// The execution status recorded for block `root`'s payload: before Gloas the block's
    /// own; for Gloas its envelope's (`None` for a block whose envelope was not imported).
    pub(crate) fn execution_status(&self, root: &Root) -> Option<ExecutionStatus> {
        match self {
            Self::Fulu(fc) => fc.execution_status(root),
            Self::Gloas(g) => g.payload_statuses.get(root).copied(),
        }
    }

    /// Records a VALID verdict on block `root`'s payload; returns the blocks it validated
    /// (before Gloas, the block and its ancestors; for Gloas, the block whose envelope it is,
    /// when its envelope was imported).
    pub(crate) fn on_valid_payload(&mut self, root: &Root) -> Vec<Root> {
        match self {
            Self::Fulu(fc) => fc.on_valid_payload(root),
            Self::Gloas(g) => match g.payload_statuses.get_mut(root) {
                Some(status) => {
                    *status = ExecutionStatus::Valid;
                    vec![*root]
                }
                None => Vec::new(),
            },
        }
    }

    /// Records the execution status of block `root`'s payload as given (before Gloas on its
    /// node; for Gloas on its imported envelope). Whether there was one to record it on.
    pub(crate) fn set_execution_status(&mut self, root: &Root, status: ExecutionStatus) -> bool {
        match self {
            Self::Fulu(fc) => fc.set_execution_status(root, status),
            Self::Gloas(g) => match g.payload_statuses.get_mut(root) {
                Some(current) => {
                    *current = status;
                    true
                }
                None => false,
            },
        }
    }

    /// Whether block `root`'s payload (or an ancestor's) was invalidated: before Gloas only (a
    /// Gloas envelope the execution client calls INVALID never reaches the store, and its block
    /// stays valid).
    pub(crate) fn is_invalidated(&self, root: &Root) -> bool {
        match self {
            Self::Fulu(fc) => fc.is_invalidated(root),
            Self::Gloas(_) => false,
        }
    }

    /// The execution block hash the execution client is told for block `root` as the safe or
    /// finalized block: before Gloas its payload's hash; for Gloas its bid's
    /// `parent_block_hash` (`finalized_block_bid.parent_block_hash`: the payload the block
    /// certainly builds on, whatever becomes of its own). `None` for a block the store does
    /// not hold (or, before Gloas, whose payload it does not know: the anchor).
    ///
    /// [spec]: gloas/fork-choice.md#notify_forkchoice_updated
    pub(crate) fn checkpoint_execution_hash(&self, root: &Root) -> Option<Hash32> {
        match self {
            Self::Fulu(fc) => fc.payload_block_hash(root),
            Self::Gloas(g) => g.store.execution_block_hash(root, PayloadStatus::Empty),
        }
    }

    /// The blocks whose post-states the state cache keeps whatever its bounds: the store's
    /// finalized, justified and unrealized checkpoints' blocks.
    pub(crate) fn pins(&self) -> [Root; 4] {
        [
            self.finalized_checkpoint().root,
            self.justified_checkpoint().root,
            self.unrealized_justified_checkpoint().root,
            self.unrealized_finalized_checkpoint().root,
        ]
    }
}

impl<E: EthSpec> GloasChainForkChoice<E> {
    /// Whether the head's execution payload is not validated: for a FULL head its own
    /// envelope's; for an EMPTY head that of the block whose payload it builds on (none within
    /// the store, as for the anchor's chain: validated).
    pub(crate) fn head_optimistic(&self, root: &Root, status: PayloadStatus) -> bool {
        match self.store.payload_block(root, status) {
            Some(payload_root) => {
                self.payload_statuses.get(&payload_root).copied() != Some(ExecutionStatus::Valid)
            }
            None => false,
        }
    }
}
