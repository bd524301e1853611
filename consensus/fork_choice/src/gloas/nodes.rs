//! The Gloas block tree as fork-choice nodes (`ForkChoiceNode(root, payload_status)`), three
//! per block: PENDING, a child of its parent block's EMPTY or FULL node (by
//! `get_parent_payload_status`), and EMPTY and FULL, the children of PENDING. Weights move by
//! vote deltas, as in [`crate::ProtoArray`]: a vote's balance sits on the node
//! `get_supported_node` names and counts for that node's ancestors, which is exactly the set of
//! nodes `is_ancestor(store, supported_node, node)` accepts.

use types::{Gwei, Root};

use crate::error::Error;

/// `PayloadStatus`: `PAYLOAD_STATUS_EMPTY` (0), `PAYLOAD_STATUS_FULL` (1),
/// `PAYLOAD_STATUS_PENDING` (2).
///
/// [spec]: gloas/fork-choice.md#new-payloadstatus
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PayloadStatus {
    /// `PAYLOAD_STATUS_EMPTY`: the block without its payload.
    Empty = 0,
    /// `PAYLOAD_STATUS_FULL`: the block with its payload.
    Full = 1,
    /// `PAYLOAD_STATUS_PENDING`: the block, its payload undecided.
    Pending = 2,
}

impl PayloadStatus {
    /// The spec's value (`PayloadStatus(Uint8)`).
    pub fn as_u8(self) -> u8 {
        self as u8
    }
}

/// One fork-choice node.
#[derive(Debug, Clone)]
pub struct Node {
    /// `node.root`.
    pub root: Root,
    /// `node.payload_status`.
    pub status: PayloadStatus,
    /// The node's parent in the node tree: PENDING for EMPTY and FULL, the parent block's
    /// EMPTY or FULL for PENDING; `None` for the anchor's PENDING.
    pub parent: Option<usize>,
    /// The attestation score (`get_attestation_score`, without the proposer boost).
    pub weight: Gwei,
}

/// The nodes, parents before children, and each EMPTY/FULL node's PENDING children.
#[derive(Debug, Clone, Default)]
pub struct NodeTree {
    nodes: Vec<Node>,
    children: Vec<Vec<usize>>,
}

impl NodeTree {
    /// The nodes, by index.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The PENDING children of node `index` (none for a PENDING node).
    pub fn children(&self, index: usize) -> &[usize] {
        &self.children[index]
    }

    /// Adds a node under `parent` (an earlier node), weight 0; its index.
    pub fn push(&mut self, root: Root, status: PayloadStatus, parent: Option<usize>) -> usize {
        let index = self.nodes.len();
        self.nodes.push(Node {
            root,
            status,
            parent,
            weight: 0,
        });
        self.children.push(Vec::new());
        if let Some(parent) = parent
            && status == PayloadStatus::Pending
        {
            self.children[parent].push(index);
        }
        index
    }

    /// Adds each node's delta to its weight and to every ancestor's. Nothing changes when a
    /// weight would leave the `Gwei` range.
    pub fn apply_deltas(&mut self, deltas: &mut [i64]) -> Result<(), Error> {
        if deltas.len() != self.nodes.len() {
            return Err(Error::DeltaCount {
                deltas: deltas.len(),
                nodes: self.nodes.len(),
            });
        }
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
            if let Some(parent) = node.parent
                && delta != 0
            {
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

    /// Keeps the nodes `keep` marks (a kept node's parent is kept or becomes `None`), in
    /// order, with their weights; the new index of each old node (`None`: dropped).
    pub fn prune(&mut self, keep: &[bool]) -> Vec<Option<usize>> {
        let mut remap = vec![None; self.nodes.len()];
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (index, node) in self.nodes.iter().enumerate() {
            if !keep.get(index).copied().unwrap_or(false) {
                continue;
            }
            remap[index] = Some(nodes.len());
            let mut node = node.clone();
            node.parent = node.parent.and_then(|parent| remap[parent]);
            nodes.push(node);
        }
        let children = (0..self.nodes.len())
            .filter(|&index| remap[index].is_some())
            .map(|index| {
                self.children[index]
                    .iter()
                    .filter_map(|&child| remap[child])
                    .collect()
            })
            .collect();
        self.nodes = nodes;
        self.children = children;
        remap
    }

    /// Whether `ancestor` is `index` or one of its ancestors in the node tree.
    pub fn is_ancestor(&self, ancestor: usize, mut index: usize) -> bool {
        loop {
            if index == ancestor {
                return true;
            }
            if index < ancestor {
                return false;
            }
            match self.nodes[index].parent {
                Some(parent) => index = parent,
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(i: u8) -> Root {
        Root::from([i; 32])
    }

    /// A block of a random tree: its parent (by index) and whether it builds on the parent's
    /// payload.
    struct Block {
        parent: Option<usize>,
        on_full: bool,
        slot: u64,
    }

    /// The spec's `is_ancestor(store, node, ancestor)` over blocks, nodes as
    /// `(block, status)`.
    fn spec_is_ancestor(
        blocks: &[Block],
        node: (usize, PayloadStatus),
        ancestor: (usize, PayloadStatus),
    ) -> bool {
        // `get_ancestor(store, node, blocks[ancestor].slot)`.
        let target_slot = blocks[ancestor.0].slot;
        let mut current = node;
        while blocks[current.0].slot > target_slot {
            let Some(parent) = blocks[current.0].parent else {
                break;
            };
            let status = if blocks[current.0].on_full {
                PayloadStatus::Full
            } else {
                PayloadStatus::Empty
            };
            current = (parent, status);
        }
        current.0 == ancestor.0 && (current.1 == ancestor.1 || ancestor.1 == PayloadStatus::Pending)
    }

    #[test]
    fn subtree_weights_match_the_specs_attestation_score_on_random_trees() {
        let mut rng = splitmix::SplitMix64::new(43);
        let statuses = [
            PayloadStatus::Pending,
            PayloadStatus::Empty,
            PayloadStatus::Full,
        ];
        for _ in 0..100 {
            let n = 1 + (rng.next_u64() % 20) as usize;
            let mut blocks = vec![Block {
                parent: None,
                on_full: false,
                slot: 0,
            }];
            for i in 1..n {
                let parent = (rng.next_u64() % i as u64) as usize;
                let slot = blocks[parent].slot + 1 + rng.next_u64() % 2;
                blocks.push(Block {
                    parent: Some(parent),
                    on_full: rng.next_u64().is_multiple_of(2),
                    slot,
                });
            }
            let mut tree = NodeTree::default();
            let mut index_of = Vec::new();
            for (i, block) in blocks.iter().enumerate() {
                let parent = block.parent.map(|p: usize| {
                    let [_, empty, full]: [usize; 3] = index_of[p];
                    if block.on_full { full } else { empty }
                });
                let pending = tree.push(root(i as u8), PayloadStatus::Pending, parent);
                let empty = tree.push(root(i as u8), PayloadStatus::Empty, Some(pending));
                let full = tree.push(root(i as u8), PayloadStatus::Full, Some(pending));
                index_of.push([pending, empty, full]);
            }
            let mut votes = Vec::new();
            let mut deltas = vec![0i64; tree.len()];
            for _ in 0..(rng.next_u64() % 30) {
                let block = (rng.next_u64() % n as u64) as usize;
                let status = statuses[(rng.next_u64() % 3) as usize];
                let balance = 1 + rng.next_u64() % 9;
                votes.push(((block, status), balance));
                let index = match status {
                    PayloadStatus::Pending => index_of[block][0],
                    PayloadStatus::Empty => index_of[block][1],
                    PayloadStatus::Full => index_of[block][2],
                };
                deltas[index] += balance as i64;
            }
            tree.apply_deltas(&mut deltas).expect("positive deltas");
            for (block, indices) in index_of.iter().enumerate() {
                for (k, status) in [
                    PayloadStatus::Pending,
                    PayloadStatus::Empty,
                    PayloadStatus::Full,
                ]
                .into_iter()
                .enumerate()
                {
                    let naive: u64 = votes
                        .iter()
                        .filter(|(node, _)| spec_is_ancestor(&blocks, *node, (block, status)))
                        .map(|(_, balance)| balance)
                        .sum();
                    assert_eq!(tree.nodes()[indices[k]].weight, naive, "{block} {status:?}");
                }
            }
        }
    }

    #[test]
    fn a_vote_counts_for_its_node_and_its_ancestors_only() {
        let mut tree = NodeTree::default();
        let a = tree.push(root(1), PayloadStatus::Pending, None);
        let a_empty = tree.push(root(1), PayloadStatus::Empty, Some(a));
        let a_full = tree.push(root(1), PayloadStatus::Full, Some(a));
        let b = tree.push(root(2), PayloadStatus::Pending, Some(a_full));
        let b_empty = tree.push(root(2), PayloadStatus::Empty, Some(b));
        let mut deltas = vec![0i64; tree.len()];
        deltas[b_empty] = 7;
        deltas[a] = 3;
        tree.apply_deltas(&mut deltas).expect("in range");
        let weights: Vec<Gwei> = tree.nodes().iter().map(|n| n.weight).collect();
        assert_eq!(weights, vec![10, 0, 7, 7, 7]);
        assert_eq!(tree.children(a_full), &[b]);
        assert!(tree.children(a_empty).is_empty());
        assert!(tree.is_ancestor(a, b_empty));
        assert!(!tree.is_ancestor(a_empty, b_empty));
        let mut undo = vec![0i64; tree.len()];
        undo[b_empty] = -8;
        assert!(tree.apply_deltas(&mut undo).is_err());
        assert_eq!(tree.nodes()[b_empty].weight, 7);
    }
}
