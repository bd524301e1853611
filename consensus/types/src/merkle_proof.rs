//! Merkle proofs of SSZ containers: the spec's `compute_merkle_proof` for the node at a
//! generalized index, over containers that list their field roots ([`ProofTree`]). Used for the
//! data column sidecars' `kzg_commitments_inclusion_proof` and the light-client branches.
//!
//! [spec]: ssz/merkle-proofs.md#generalized-merkle-tree-index

pub mod progressive;

use tree_hash::TreeHash;

use crate::{EthSpec, Root, capella, deneb, electra, fulu, phase0};

/// A generalized index the proof helper cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MerkleProofError {
    /// Generalized index 0 names no node.
    #[error("generalized index 0 names no node")]
    ZeroIndex,
    /// The index reaches below a field the container does not open.
    #[error("generalized index {gindex} reaches below field {field}, which is not opened")]
    FieldNotOpened {
        /// The generalized index asked for.
        gindex: u64,
        /// The field it reaches into.
        field: usize,
    },
}

/// An SSZ container whose Merkle tree can be walked: the roots of its fields, in order, and the
/// containers inside it a generalized index may reach into.
pub trait ProofTree {
    /// `hash_tree_root` of every field, in declaration order.
    fn field_roots(&self) -> Vec<Root>;

    /// The container in field `index`, for generalized indices that reach below that field;
    /// `None` where the field is not opened.
    fn field(&self, _index: usize) -> Option<&dyn ProofTree> {
        None
    }
}

/// `is_valid_merkle_branch(leaf, branch, depth, index, root)`.
///
/// [spec]: phase0/beacon-chain.md#is_valid_merkle_branch
pub fn is_valid_merkle_branch(
    leaf: Root,
    branch: &[Root],
    depth: usize,
    index: u64,
    root: Root,
) -> bool {
    if branch.len() < depth {
        return false;
    }
    let mut value = leaf;
    for (i, node) in branch.iter().take(depth).enumerate() {
        value = Root::from(if (index >> i) & 1 == 1 {
            ethereum_hashing::hash32_concat(node.as_slice(), value.as_slice())
        } else {
            ethereum_hashing::hash32_concat(value.as_slice(), node.as_slice())
        });
    }
    value == root
}

/// `floorlog2(x)` for `x >= 1` (0 for 0).
pub fn floorlog2(x: u64) -> u32 {
    63 - x.max(1).leading_zeros()
}

/// The spec's `get_subtree_index(gindex)`: the position of `gindex` among the nodes at its depth.
///
/// [spec]: ssz/merkle-proofs.md#get_subtree_index
pub fn get_subtree_index(gindex: u64) -> u64 {
    gindex % (1 << floorlog2(gindex))
}

/// The leaf at generalized index `gindex` of `object` and its branch (sibling nodes from the
/// leaf up to the root), as the spec's `compute_merkle_proof` returns them.
///
/// [spec]: ssz/merkle-proofs.md#merkle-multiproofs
pub fn compute_merkle_proof(
    object: &dyn ProofTree,
    gindex: u64,
) -> Result<(Root, Vec<Root>), MerkleProofError> {
    if gindex == 0 {
        return Err(MerkleProofError::ZeroIndex);
    }
    let depth = floorlog2(gindex);
    // The path from the root: bit `depth - 1` first, 1 = right.
    let path: Vec<bool> = (0..depth).rev().map(|i| (gindex >> i) & 1 == 1).collect();
    proof_in(object, &path, gindex)
}

fn proof_in(
    object: &dyn ProofTree,
    path: &[bool],
    gindex: u64,
) -> Result<(Root, Vec<Root>), MerkleProofError> {
    let leaves = object.field_roots();
    let field_depth = leaves.len().next_power_of_two().trailing_zeros() as usize;
    // layers[0]: the padded field roots; layers[field_depth]: the container's root.
    let mut layers = vec![leaves];
    layers[0].resize(1 << field_depth, Root::ZERO);
    for level in 0..field_depth {
        let above = layers[level]
            .chunks(2)
            .map(|pair| Root::from(ethereum_hashing::hash32_concat(&pair[0][..], &pair[1][..])))
            .collect();
        layers.push(above);
    }

    let steps = path.len().min(field_depth);
    let position = path[..steps]
        .iter()
        .fold(0usize, |acc, &right| (acc << 1) | usize::from(right));
    let level = field_depth - steps;
    let node = layers[level][position];
    let mut branch = Vec::new();
    let mut pos = position;
    for layer in &layers[level..field_depth] {
        branch.push(layer[pos ^ 1]);
        pos >>= 1;
    }

    if path.len() <= field_depth {
        return Ok((node, branch));
    }
    let inner = object
        .field(position)
        .ok_or(MerkleProofError::FieldNotOpened {
            gindex,
            field: position,
        })?;
    let (leaf, mut deeper) = proof_in(inner, &path[field_depth..], gindex)?;
    deeper.extend(branch);
    Ok((leaf, deeper))
}

/// `vec![self.a.tree_hash_root(), …]`.
macro_rules! roots {
    ($self:ident: $($field:ident),* $(,)?) => {
        vec![$($self.$field.tree_hash_root()),*]
    };
}

impl ProofTree for phase0::Checkpoint {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self: epoch, root)
    }
}

impl<E: EthSpec> ProofTree for capella::ExecutionPayloadHeader<E> {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self:
            parent_hash, fee_recipient, state_root, receipts_root, logs_bloom, prev_randao,
            block_number, gas_limit, gas_used, timestamp, extra_data, base_fee_per_gas,
            block_hash, transactions_root, withdrawals_root,
        )
    }
}

impl<E: EthSpec> ProofTree for deneb::ExecutionPayloadHeader<E> {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self:
            parent_hash, fee_recipient, state_root, receipts_root, logs_bloom, prev_randao,
            block_number, gas_limit, gas_used, timestamp, extra_data, base_fee_per_gas,
            block_hash, transactions_root, withdrawals_root, blob_gas_used, excess_blob_gas,
        )
    }
}

impl<E: EthSpec> ProofTree for fulu::BeaconBlockBody<E> {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self:
            randao_reveal, eth1_data, graffiti, proposer_slashings, attester_slashings,
            attestations, deposits, voluntary_exits, sync_aggregate, execution_payload,
            bls_to_execution_changes, blob_kzg_commitments, execution_requests,
        )
    }
}

impl<E: EthSpec> ProofTree for electra::BeaconState<E> {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self:
            genesis_time, genesis_validators_root, slot, fork, latest_block_header, block_roots,
            state_roots, historical_roots, eth1_data, eth1_data_votes, eth1_deposit_index,
            validators, balances, randao_mixes, slashings, previous_epoch_participation,
            current_epoch_participation, justification_bits, previous_justified_checkpoint,
            current_justified_checkpoint, finalized_checkpoint, inactivity_scores,
            current_sync_committee, next_sync_committee, latest_execution_payload_header,
            next_withdrawal_index, next_withdrawal_validator_index, historical_summaries,
            deposit_requests_start_index, deposit_balance_to_consume, exit_balance_to_consume,
            earliest_exit_epoch, consolidation_balance_to_consume, earliest_consolidation_epoch,
            pending_deposits, pending_partial_withdrawals, pending_consolidations,
        )
    }

    fn field(&self, index: usize) -> Option<&dyn ProofTree> {
        match index {
            18 => Some(&self.previous_justified_checkpoint),
            19 => Some(&self.current_justified_checkpoint),
            20 => Some(&self.finalized_checkpoint),
            _ => None,
        }
    }
}

impl<E: EthSpec> ProofTree for fulu::BeaconState<E> {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self:
            genesis_time, genesis_validators_root, slot, fork, latest_block_header, block_roots,
            state_roots, historical_roots, eth1_data, eth1_data_votes, eth1_deposit_index,
            validators, balances, randao_mixes, slashings, previous_epoch_participation,
            current_epoch_participation, justification_bits, previous_justified_checkpoint,
            current_justified_checkpoint, finalized_checkpoint, inactivity_scores,
            current_sync_committee, next_sync_committee, latest_execution_payload_header,
            next_withdrawal_index, next_withdrawal_validator_index, historical_summaries,
            deposit_requests_start_index, deposit_balance_to_consume, exit_balance_to_consume,
            earliest_exit_epoch, consolidation_balance_to_consume, earliest_consolidation_epoch,
            pending_deposits, pending_partial_withdrawals, pending_consolidations,
            proposer_lookahead,
        )
    }

    fn field(&self, index: usize) -> Option<&dyn ProofTree> {
        match index {
            18 => Some(&self.previous_justified_checkpoint),
            19 => Some(&self.current_justified_checkpoint),
            20 => Some(&self.finalized_checkpoint),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A container of `n` fields whose roots are `[i; 32]`, with field 1 opening into another.
    struct Fake {
        roots: Vec<Root>,
        child: Option<Box<Fake>>,
    }

    impl ProofTree for Fake {
        fn field_roots(&self) -> Vec<Root> {
            self.roots.clone()
        }
        fn field(&self, index: usize) -> Option<&dyn ProofTree> {
            (index == 1)
                .then_some(self.child.as_deref().map(|c| c as &dyn ProofTree))
                .flatten()
        }
    }

    fn fake(n: u8, child: Option<Fake>) -> Fake {
        let mut roots: Vec<Root> = (0..n).map(|i| Root::from([i + 1; 32])).collect();
        if let Some(c) = &child {
            roots[1] = root_of(c);
        }
        Fake {
            roots,
            child: child.map(Box::new),
        }
    }

    fn root_of(tree: &dyn ProofTree) -> Root {
        let (root, branch) = compute_merkle_proof(tree, 1).expect("gindex 1");
        assert!(branch.is_empty());
        root
    }

    /// The spec's `is_valid_merkle_branch`, written out here so the check is independent of the
    /// code under test.
    fn verify(leaf: Root, branch: &[Root], gindex: u64, root: Root) -> bool {
        let mut node = leaf;
        for (i, sibling) in branch.iter().enumerate() {
            node = if (gindex >> i) & 1 == 1 {
                Root::from(ethereum_hashing::hash32_concat(&sibling[..], &node[..]))
            } else {
                Root::from(ethereum_hashing::hash32_concat(&node[..], &sibling[..]))
            };
        }
        branch.len() == floorlog2(gindex) as usize && node == root
    }

    #[test]
    fn proofs_of_every_field_verify_against_the_root() {
        let tree = fake(5, None);
        let root = root_of(&tree);
        for field in 0..5u64 {
            let gindex = 8 + field;
            let (leaf, branch) = compute_merkle_proof(&tree, gindex).expect("in range");
            assert_eq!(leaf, tree.roots[field as usize]);
            assert_eq!(branch.len(), 3);
            assert!(verify(leaf, &branch, gindex, root));
            assert!(!verify(leaf, &branch, gindex ^ 1, root));
        }
    }

    #[test]
    fn nested_and_internal_nodes_verify() {
        let tree = fake(3, Some(fake(2, None)));
        let root = root_of(&tree);
        // Field 1 of a 4-leaf tree is gindex 5; its field 0 is 10, field 1 is 11.
        for gindex in [2, 3, 5, 10, 11] {
            let (leaf, branch) = compute_merkle_proof(&tree, gindex).expect("reachable");
            assert!(verify(leaf, &branch, gindex, root), "gindex {gindex}");
        }
        assert_eq!(
            compute_merkle_proof(&tree, 12),
            Err(MerkleProofError::FieldNotOpened {
                gindex: 12,
                field: 2
            })
        );
        assert_eq!(
            compute_merkle_proof(&tree, 0),
            Err(MerkleProofError::ZeroIndex)
        );
    }

    #[test]
    fn subtree_index_is_the_position_at_its_depth() {
        assert_eq!(get_subtree_index(1), 0);
        assert_eq!(get_subtree_index(27), 11);
        assert_eq!(get_subtree_index(16), 0);
    }
}
