//! The block tree as a proto-array: nodes in a `Vec` in insertion order (a parent always comes
//! before its children), each with the weight of the votes for it and its descendants.
//!
//! Weights change only through [`ProtoArray::apply_deltas`]; the head is found by
//! [`ProtoArray::find_head`], which evaluates the spec's `filter_block_tree` viability and the
//! LMD-GHOST choice in one forward and one backward pass over the nodes.
//!
//! [spec]: phase0/fork-choice.md#get_head

use rustc_hash::FxHashMap;
use types::{Epoch, GENESIS_EPOCH, Root, Slot, ValidatorIndex, phase0::Checkpoint};

use crate::error::Error;

/// One block in the tree.
#[derive(Debug, Clone)]
pub struct ProtoNode {
    /// `hash_tree_root(block)`.
    pub root: Root,
    /// The parent's index, `None` for the anchor (or once the parent is pruned).
    pub parent: Option<usize>,
    /// `block.slot`.
    pub slot: Slot,
    /// `block.proposer_index`.
    pub proposer_index: ValidatorIndex,
    /// `block.parent_root`.
    pub parent_root: Root,
    /// The post-state's `current_justified_checkpoint`.
    pub justified: Checkpoint,
    /// `store.unrealized_justifications[root]`: the justified checkpoint after pulling the
    /// post-state up to the next epoch boundary.
    pub unrealized_justified: Checkpoint,
    /// The post-state's `finalized_checkpoint.epoch` (kept here: fork choice holds no
    /// post-states; the chain's state cache may have let this one go).
    pub finalized_epoch: u64,
    /// `store.block_timeliness[root]`.
    pub timely: bool,
    /// Votes (and proposer boost) for this block and its descendants.
    pub weight: u64,
    /// What the execution client said of the block's payload (optimistic sync).
    pub execution_status: ExecutionStatus,
}

/// The execution status of a block's payload, as optimistic sync names it: what the
/// execution client said of it, or that it has not said yet.
///
/// [spec]: sync/optimistic.md#helpers
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecutionStatus {
    /// VALID: the payload (and so its ancestors') is valid.
    Valid,
    /// INVALIDATED: the payload, or an ancestor's, is invalid; the block has left the block
    /// tree (its descendants too).
    Invalidated,
    /// NOT_VALIDATED: imported optimistically (the execution client was syncing or did not
    /// answer in time).
    NotValidated,
}

/// The tree of blocks since the finalized block.
#[derive(Debug, Clone, Default)]
pub struct ProtoArray {
    nodes: Vec<ProtoNode>,
    indices: FxHashMap<Root, usize>,
}

/// Epoch of `slot` for a preset with `slots_per_epoch` slots.
fn epoch_of(slot: Slot, slots_per_epoch: u64) -> Epoch {
    slot / slots_per_epoch
}

impl ProtoArray {
    /// The nodes, in insertion order.
    pub fn nodes(&self) -> &[ProtoNode] {
        &self.nodes
    }

    /// Sets the execution status of the node at `index`; false when there is none.
    pub(crate) fn set_execution_status(&mut self, index: usize, status: ExecutionStatus) -> bool {
        match self.nodes.get_mut(index) {
            Some(node) => {
                node.execution_status = status;
                true
            }
            None => false,
        }
    }

    /// Number of blocks held.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The index of the block `root`, if held.
    pub fn index_of(&self, root: &Root) -> Option<usize> {
        self.indices.get(root).copied()
    }

    /// The node of block `root`, if held.
    pub fn get(&self, root: &Root) -> Option<&ProtoNode> {
        self.index_of(root).map(|i| &self.nodes[i])
    }

    /// The node at `index`.
    pub fn node(&self, index: usize) -> Option<&ProtoNode> {
        self.nodes.get(index)
    }

    /// Adds a block with weight zero; its parent is looked up by `parent_root` (absent for the
    /// anchor). Returns the new node's index.
    pub fn insert(&mut self, mut node: ProtoNode) -> Result<usize, Error> {
        if self.indices.contains_key(&node.root) {
            return Err(Error::DuplicateNode(node.root));
        }
        node.parent = self.index_of(&node.parent_root);
        node.weight = 0;
        let index = self.nodes.len();
        self.indices.insert(node.root, index);
        self.nodes.push(node);
        Ok(index)
    }

    /// `get_ancestor(store, root, slot)`: the block of `index`'s chain at `slot`, or the last
    /// one before it. Where the chain is cut by pruning, its oldest held block.
    ///
    /// [spec]: phase0/fork-choice.md#get_ancestor
    pub fn get_ancestor(&self, mut index: usize, slot: Slot) -> usize {
        loop {
            let node = &self.nodes[index];
            match node.parent {
                Some(parent) if node.slot > slot => index = parent,
                _ => return index,
            }
        }
    }

    /// Whether `ancestor` is `index` or one of its ancestors (`is_ancestor` in the spec, which
    /// takes the arguments the other way round).
    pub fn is_descendant(&self, ancestor: usize, index: usize) -> bool {
        let ancestor_slot = self.nodes[ancestor].slot;
        self.get_ancestor(index, ancestor_slot) == ancestor
    }

    /// Adds `deltas[i]` to the weight of node `i` and of all its ancestors. `deltas` has one
    /// entry per node. On error no weight is changed.
    pub fn apply_deltas(&mut self, deltas: &mut [i64]) -> Result<(), Error> {
        if deltas.len() != self.nodes.len() {
            return Err(Error::DeltaCount {
                deltas: deltas.len(),
                nodes: self.nodes.len(),
            });
        }
        // Children come after their parent: walking backwards, every delta a node receives from
        // its children has arrived before it is passed on. New weights are checked first and
        // written after, so that a bad delta leaves the tree as it was.
        let mut weights = Vec::with_capacity(self.nodes.len());
        for index in (0..self.nodes.len()).rev() {
            let delta = deltas[index];
            let node = &self.nodes[index];
            let weight = node
                .weight
                .checked_add_signed(delta)
                .ok_or(Error::InvalidWeight {
                    root: node.root,
                    weight: node.weight,
                    delta,
                })?;
            weights.push(weight);
            if let Some(parent) = node.parent {
                deltas[parent] = deltas[parent]
                    .checked_add(delta)
                    .ok_or(Error::DeltaOverflow)?;
            }
        }
        for (node, weight) in self.nodes.iter_mut().rev().zip(weights) {
            node.weight = weight;
        }
        Ok(())
    }

    /// `get_head(store)` over the held tree: the spec's viability filter (`filter_block_tree`)
    /// for `justified`/`finalized` at `current_epoch`, then from `justified.root` the heaviest
    /// viable child at each step (ties to the greater root). A block whose payload is
    /// invalidated (and so its descendants) is not in the block tree: optimistic sync takes it
    /// out.
    ///
    /// [spec]: phase0/fork-choice.md#get_head,
    /// sync/optimistic.md#transitioning-from-valid---invalidated-or-optimistic---invalidated
    pub fn find_head(
        &self,
        justified: &Checkpoint,
        finalized: &Checkpoint,
        current_epoch: Epoch,
        slots_per_epoch: u64,
    ) -> Result<usize, Error> {
        let start = self
            .index_of(&justified.root)
            .ok_or(Error::UnknownJustifiedBlock(justified.root))?;
        let n = self.nodes.len();
        // Forward pass: whether the checkpoint block of each node at the finalized epoch is the
        // finalized root (`get_checkpoint_block(store, root, finalized.epoch)`).
        let finalized_slot = finalized.epoch * slots_per_epoch;
        let finalized_index = self.index_of(&finalized.root);
        let check_finalized = finalized.epoch != GENESIS_EPOCH;
        let mut ancestor_at_finalized = vec![0; n];
        for (index, node) in self.nodes.iter().enumerate() {
            // As in `get_ancestor`: a chain cut short (the anchor, pruning) ends at its oldest
            // held block.
            ancestor_at_finalized[index] = match node.parent {
                Some(parent) if node.slot > finalized_slot => ancestor_at_finalized[parent],
                _ => index,
            };
        }
        // Backward pass: leaf viability, viability of inner nodes (any viable child) and the
        // best viable child of each node.
        let mut has_children = vec![false; n];
        let mut viable = vec![false; n];
        let mut best_child: Vec<Option<usize>> = vec![None; n];
        for index in (0..n).rev() {
            let node = &self.nodes[index];
            // An invalidated block (its descendants are too) has left the block tree: its
            // parent is judged as the leaf it is now.
            if node.execution_status == ExecutionStatus::Invalidated {
                continue;
            }
            if !has_children[index] {
                let block_epoch = epoch_of(node.slot, slots_per_epoch);
                let voting_source = if current_epoch > block_epoch {
                    &node.unrealized_justified
                } else {
                    &node.justified
                };
                let correct_justified = justified.epoch == GENESIS_EPOCH
                    || voting_source.epoch == justified.epoch
                    || voting_source.epoch + 2 >= current_epoch;
                let correct_finalized =
                    !check_finalized || Some(ancestor_at_finalized[index]) == finalized_index;
                viable[index] = correct_justified && correct_finalized;
            }
            if let Some(parent) = node.parent {
                has_children[parent] = true;
                if viable[index] {
                    viable[parent] = true;
                    let better = match best_child[parent] {
                        None => true,
                        Some(best) => {
                            let best = &self.nodes[best];
                            (node.weight, node.root) > (best.weight, best.root)
                        }
                    };
                    if better {
                        best_child[parent] = Some(index);
                    }
                }
            }
        }
        let mut head = start;
        while let Some(child) = best_child[head] {
            head = child;
        }
        Ok(head)
    }

    /// Keeps only `finalized_root` and its descendants. Returns, for every old index, its new
    /// index (`None` when the node was dropped).
    pub fn prune(&mut self, finalized_root: &Root) -> Result<Vec<Option<usize>>, Error> {
        let finalized = self
            .index_of(finalized_root)
            .ok_or(Error::UnknownFinalizedBlock(*finalized_root))?;
        let n = self.nodes.len();
        let mut keep = vec![false; n];
        keep[finalized] = true;
        for index in finalized + 1..n {
            if let Some(parent) = self.nodes[index].parent {
                keep[index] = keep[parent];
            }
        }
        let mut remap = vec![None; n];
        let mut next = 0;
        for (index, kept) in keep.iter().enumerate() {
            if *kept {
                remap[index] = Some(next);
                next += 1;
            }
        }
        let old = std::mem::take(&mut self.nodes);
        self.indices.clear();
        for (index, mut node) in old.into_iter().enumerate() {
            if !keep[index] {
                continue;
            }
            node.parent = node.parent.and_then(|p| remap[p]);
            self.indices.insert(node.root, self.nodes.len());
            self.nodes.push(node);
        }
        Ok(remap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(i: u64) -> Root {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&i.to_be_bytes());
        bytes[31] = 1;
        Root::from(bytes)
    }

    fn cp(epoch: Epoch, root: Root) -> Checkpoint {
        Checkpoint { epoch, root }
    }

    fn node(i: u64, parent: Option<u64>, slot: Slot) -> ProtoNode {
        ProtoNode {
            root: root(i),
            parent: None,
            slot,
            proposer_index: 0,
            parent_root: parent.map_or(Root::ZERO, root),
            justified: cp(0, root(0)),
            unrealized_justified: cp(0, root(0)),
            finalized_epoch: 0,
            timely: true,
            weight: 0,
            execution_status: ExecutionStatus::NotValidated,
        }
    }

    /// The spec's `get_head` written naively: children by scanning every block, weights by
    /// summing every vote whose block descends from the node.
    fn naive_head(parents: &[Option<usize>], votes: &[(usize, u64)]) -> usize {
        let n = parents.len();
        let is_ancestor = |a: usize, mut b: usize| loop {
            if a == b {
                return true;
            }
            match parents[b] {
                Some(p) => b = p,
                None => return false,
            }
        };
        let weight = |x: usize| -> u64 {
            votes
                .iter()
                .filter(|(v, _)| is_ancestor(x, *v))
                .map(|(_, b)| b)
                .sum()
        };
        let mut head = 0;
        loop {
            let children: Vec<usize> = (0..n).filter(|&c| parents[c] == Some(head)).collect();
            match children
                .into_iter()
                .max_by_key(|&c| (weight(c), root(c as u64)))
            {
                Some(c) => head = c,
                None => return head,
            }
        }
    }

    #[test]
    fn head_matches_naive_get_head_on_random_trees() {
        let mut rng = splitmix::SplitMix64::new(7);
        for _ in 0..200 {
            let n = 2 + (rng.next_u64() % 40) as usize;
            let mut array = ProtoArray::default();
            let mut parents = vec![None];
            array.insert(node(0, None, 0)).expect("fresh root");
            for i in 1..n {
                let parent = (rng.next_u64() % i as u64) as usize;
                parents.push(Some(parent));
                let slot = array.nodes()[parent].slot + 1 + rng.next_u64() % 2;
                array
                    .insert(node(i as u64, Some(parent as u64), slot))
                    .expect("fresh root");
            }
            let mut votes: Vec<(usize, u64)> = Vec::new();
            let mut deltas = vec![0i64; n];
            for _ in 0..(rng.next_u64() % 30) {
                let target = (rng.next_u64() % n as u64) as usize;
                let balance = 1 + rng.next_u64() % 5;
                votes.push((target, balance));
                deltas[target] += balance as i64;
            }
            array.apply_deltas(&mut deltas).expect("positive deltas");
            let justified = cp(0, root(0));
            let head = array
                .find_head(&justified, &justified, 0, 8)
                .expect("justified root is held");
            assert_eq!(head, naive_head(&parents, &votes));
        }
    }

    #[test]
    fn rejects_a_delta_that_underflows_without_changing_weights() {
        let mut array = ProtoArray::default();
        array.insert(node(0, None, 0)).expect("fresh");
        array.insert(node(1, Some(0), 1)).expect("fresh");
        array.apply_deltas(&mut [0, 5]).expect("valid");
        let err = array.apply_deltas(&mut [-10, 0]);
        assert!(matches!(err, Err(Error::InvalidWeight { .. })));
        assert_eq!(array.nodes()[0].weight, 5);
        assert_eq!(array.nodes()[1].weight, 5);
    }

    #[test]
    fn prune_keeps_only_descendants_of_the_finalized_block() {
        let mut array = ProtoArray::default();
        array.insert(node(0, None, 0)).expect("fresh");
        array.insert(node(1, Some(0), 1)).expect("fresh");
        array.insert(node(2, Some(0), 2)).expect("fresh");
        array.insert(node(3, Some(1), 3)).expect("fresh");
        array.insert(node(4, Some(2), 4)).expect("fresh");
        let remap = array.prune(&root(1)).expect("held");
        assert_eq!(remap, vec![None, Some(0), None, Some(1), None]);
        assert_eq!(array.len(), 2);
        assert_eq!(array.nodes()[1].parent, Some(0));
        assert_eq!(array.index_of(&root(3)), Some(1));
        assert!(array.get(&root(2)).is_none());
    }

    #[test]
    fn non_viable_leaves_are_not_chosen() {
        let mut array = ProtoArray::default();
        array.insert(node(0, None, 0)).expect("fresh");
        let mut heavy = node(1, Some(0), 1);
        // Justified at epoch 1 while the store's justified epoch is 3 and the time is epoch 5.
        heavy.justified = cp(1, root(0));
        heavy.unrealized_justified = cp(1, root(0));
        array.insert(heavy).expect("fresh");
        let mut light = node(2, Some(0), 1);
        light.justified = cp(3, root(0));
        light.unrealized_justified = cp(3, root(0));
        array.insert(light).expect("fresh");
        array.apply_deltas(&mut [0, 100, 1]).expect("valid");
        let justified = cp(3, root(0));
        let finalized = cp(0, root(0));
        let head = array.find_head(&justified, &finalized, 5, 8).expect("held");
        assert_eq!(head, 2);
    }

    /// 0 ← 1 ← 2 with 2 invalidated: 1 is a leaf again and the head, not 0 (an invalidated
    /// child once made its parent an inner node with no viable child).
    #[test]
    fn the_parent_of_an_invalidated_head_is_the_head() {
        let mut array = ProtoArray::default();
        array.insert(node(0, None, 0)).expect("fresh");
        array.insert(node(1, Some(0), 1)).expect("fresh");
        array.insert(node(2, Some(1), 2)).expect("fresh");
        array.apply_deltas(&mut [0, 0, 10]).expect("valid");
        let justified = cp(0, root(0));
        assert_eq!(
            array.find_head(&justified, &justified, 0, 8).expect("held"),
            2
        );
        assert!(array.set_execution_status(2, ExecutionStatus::Invalidated));
        let head = array.find_head(&justified, &justified, 0, 8).expect("held");
        assert_eq!(head, 1);
        // With a sibling of the invalidated block, the sibling.
        array.insert(node(3, Some(1), 2)).expect("fresh");
        let head = array.find_head(&justified, &justified, 0, 8).expect("held");
        assert_eq!(head, 3);
    }
}
