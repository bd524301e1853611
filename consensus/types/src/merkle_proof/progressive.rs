//! Merkle trees of progressive containers (EIP-7495, Gloas) for proofs: built as binary nodes of
//! the progressive shape (`hash(merkleize_progressive(chunks), active_fields)`, subtrees of 1, 4,
//! 16, … chunks) from the field roots, so that [`super::compute_merkle_proof`] walks them like
//! any container. The light-client full node proves the Gloas state's committees and finalized
//! root and the body's bid with them; the spec tests check them against the vectors.
//!
//! [spec]: ssz/simple-serialize.md#merkleization (EIP-7495, EIP-7916)

use progressive_ssz::ProgressiveContainer;
use tree_hash::TreeHash;

use super::{ProofTree, compute_merkle_proof};
use crate::{EthSpec, Root, gloas};

/// A node of an SSZ Merkle tree by the roots of its children, with the children a generalized
/// index may reach into.
#[derive(Debug, Clone)]
pub struct ProofNode {
    roots: Vec<Root>,
    children: Vec<(usize, ProofNode)>,
}

impl ProofTree for ProofNode {
    fn field_roots(&self) -> Vec<Root> {
        self.roots.clone()
    }

    fn field(&self, index: usize) -> Option<&dyn ProofTree> {
        self.children
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, node)| node as &dyn ProofTree)
    }
}

impl ProofNode {
    /// The node's root: its children's roots merkleized.
    pub fn root(&self) -> Root {
        compute_merkle_proof(self, 1)
            .map(|(root, _)| root)
            .unwrap_or(Root::ZERO)
    }
}

/// The Merkle tree of a progressive container (EIP-7495) as binary nodes:
/// `hash(merkleize_progressive(chunks), pack_bits(active_fields))`, chunk `i` the next field's
/// root where `active_fields[i]` and zero elsewhere. `opened` gives the subtree of a field (by
/// declaration index) that generalized indices may reach into.
///
/// [spec]: ssz/simple-serialize.md#merkleization (EIP-7495, EIP-7916)
pub fn progressive_container_node(
    active_fields: &[bool],
    field_roots: Vec<Root>,
    mut opened: Vec<(usize, ProofNode)>,
) -> ProofNode {
    let mut chunks = Vec::with_capacity(active_fields.len());
    let mut opened_chunks = Vec::new();
    let mut fields = field_roots.into_iter().enumerate();
    for &active in active_fields {
        let Some((field, root)) = active.then(|| fields.next()).flatten() else {
            chunks.push(Root::ZERO);
            continue;
        };
        if let Some(at) = opened.iter().position(|(i, _)| *i == field) {
            opened_chunks.push((chunks.len(), opened.swap_remove(at).1));
        }
        chunks.push(root);
    }
    let data = progressive_node(chunks, opened_chunks, 1);
    ProofNode {
        roots: vec![
            data.as_ref().map_or(Root::ZERO, ProofNode::root),
            progressive_ssz::pack_active_fields(active_fields),
        ],
        children: data.into_iter().map(|node| (0, node)).collect(),
    }
}

/// `merkleize_progressive(chunks, num_leaves)` as binary nodes: `hash(merkleize(chunks[..n], n),
/// merkleize_progressive(chunks[n..], 4 n))`; `None` (the zero node) for no chunks. `opened`
/// holds subtrees by chunk index.
fn progressive_node(
    mut chunks: Vec<Root>,
    opened: Vec<(usize, ProofNode)>,
    num_leaves: usize,
) -> Option<ProofNode> {
    if chunks.is_empty() {
        return None;
    }
    let rest_chunks = chunks.split_off(num_leaves.min(chunks.len()));
    chunks.resize(num_leaves, Root::ZERO);
    let (here, later): (Vec<_>, Vec<_>) = opened.into_iter().partition(|(i, _)| *i < num_leaves);
    let later = later
        .into_iter()
        .map(|(i, node)| (i - num_leaves, node))
        .collect();
    let subtree = ProofNode {
        roots: chunks,
        children: here,
    };
    let rest = progressive_node(rest_chunks, later, num_leaves * 4);
    Some(ProofNode {
        roots: vec![
            subtree.root(),
            rest.as_ref().map_or(Root::ZERO, ProofNode::root),
        ],
        children: std::iter::once((0, subtree))
            .chain(rest.map(|node| (1, node)))
            .collect(),
    })
}

/// A (non-progressive) container of `roots`, opening `children`.
pub fn container_node(roots: Vec<Root>, children: Vec<(usize, ProofNode)>) -> ProofNode {
    ProofNode { roots, children }
}

/// `vec![self.a.tree_hash_root(), …]`.
macro_rules! field_roots {
    ($value:ident: $($field:ident),* $(,)?) => {
        vec![$($value.$field.tree_hash_root()),*]
    };
}

/// A Gloas `BeaconBlockBody` whose `signed_execution_payload_bid` opens down to the bid's fields
/// (`EXECUTION_BLOCK_HASH_GINDEX_GLOAS` reaches `message.parent_block_hash`).
pub fn gloas_body_tree<E: EthSpec>(body: &gloas::BeaconBlockBody<E>) -> ProofNode {
    let signed_bid = &body.signed_execution_payload_bid;
    let bid = &signed_bid.message;
    let bid = progressive_container_node(
        <gloas::ExecutionPayloadBid as ProgressiveContainer>::ACTIVE_FIELDS,
        field_roots!(bid:
            parent_block_hash, parent_block_root, block_hash, prev_randao, fee_recipient,
            gas_limit, builder_index, slot, value, execution_payment, blob_kzg_commitments,
            execution_requests_root,
        ),
        Vec::new(),
    );
    let signed_bid = container_node(
        vec![bid.root(), signed_bid.signature.tree_hash_root()],
        vec![(0, bid)],
    );
    progressive_container_node(
        <gloas::BeaconBlockBody<E> as ProgressiveContainer>::ACTIVE_FIELDS,
        field_roots!(body:
            randao_reveal, eth1_data, graffiti, proposer_slashings, attester_slashings,
            attestations, deposits, voluntary_exits, sync_aggregate, bls_to_execution_changes,
            signed_execution_payload_bid, payload_attestations, parent_execution_requests,
        ),
        vec![(GLOAS_SIGNED_EXECUTION_PAYLOAD_BID_FIELD, signed_bid)],
    )
}

/// `signed_execution_payload_bid`'s position among a Gloas body's fields.
const GLOAS_SIGNED_EXECUTION_PAYLOAD_BID_FIELD: usize = 10;

/// A Gloas `BeaconState` whose checkpoints open into their fields (the finality branch proves
/// `finalized_checkpoint.root`).
pub fn gloas_state_tree<E: EthSpec>(state: &gloas::BeaconState<E>) -> ProofNode {
    let checkpoint = |c: &gloas::Checkpoint| {
        container_node(
            vec![c.epoch.tree_hash_root(), c.root.tree_hash_root()],
            Vec::new(),
        )
    };
    progressive_container_node(
        <gloas::BeaconState<E> as ProgressiveContainer>::ACTIVE_FIELDS,
        field_roots!(state:
            genesis_time, genesis_validators_root, slot, fork, latest_block_header, block_roots,
            state_roots, historical_roots, eth1_data, eth1_data_votes, eth1_deposit_index,
            validators, balances, randao_mixes, slashings, previous_epoch_participation,
            current_epoch_participation, justification_bits, previous_justified_checkpoint,
            current_justified_checkpoint, finalized_checkpoint, inactivity_scores,
            current_sync_committee, next_sync_committee, latest_block_hash, next_withdrawal_index,
            next_withdrawal_validator_index, historical_summaries, deposit_requests_start_index,
            deposit_balance_to_consume, exit_balance_to_consume, earliest_exit_epoch,
            consolidation_balance_to_consume, earliest_consolidation_epoch, pending_deposits,
            pending_partial_withdrawals, pending_consolidations, proposer_lookahead, builders,
            next_withdrawal_builder_index, execution_payload_availability,
            builder_pending_payments, builder_pending_withdrawals, latest_execution_payload_bid,
            payload_expected_withdrawals, ptc_window,
        ),
        vec![
            (18, checkpoint(&state.previous_justified_checkpoint)),
            (19, checkpoint(&state.current_justified_checkpoint)),
            (20, checkpoint(&state.finalized_checkpoint)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle_proof::{compute_merkle_proof, floorlog2, is_valid_merkle_branch};

    /// The generalized index of chunk `chunk` in a progressive container's tree: under the data
    /// root (`2`), right past every full subtree before the chunk's, then left into it.
    fn progressive_gindex(chunk: usize) -> u64 {
        let (mut gindex, mut start, mut width) = (2u64, 0usize, 1usize);
        while chunk >= start + width {
            gindex = gindex * 2 + 1;
            start += width;
            width *= 4;
        }
        let depth = width.trailing_zeros();
        ((gindex * 2) << depth) + (chunk - start) as u64
    }

    #[test]
    fn progressive_nodes_hash_like_progressive_ssz_and_prove_every_field() {
        for len in 1..=70usize {
            // Every third index inactive, the last one active (a legal configuration).
            let active: Vec<bool> = (0..len).map(|i| i + 1 == len || i % 3 != 1).collect();
            let fields = active.iter().filter(|a| **a).count();
            let roots: Vec<Root> = (0..fields).map(|i| Root::from([i as u8 + 1; 32])).collect();
            let node = progressive_container_node(&active, roots.clone(), Vec::new());
            let root = node.root();
            assert_eq!(
                root,
                progressive_ssz::progressive_container_root(&active, roots.iter().copied()),
                "{len} chunks"
            );
            let chunks = active
                .iter()
                .enumerate()
                .filter(|(_, a)| **a)
                .map(|(i, _)| i);
            for (field, chunk) in chunks.enumerate() {
                let gindex = progressive_gindex(chunk);
                let (leaf, branch) = compute_merkle_proof(&node, gindex).expect("reachable");
                assert_eq!(leaf, roots[field], "chunk {chunk} of {len}");
                let depth = floorlog2(gindex);
                assert!(is_valid_merkle_branch(
                    leaf,
                    &branch,
                    depth as usize,
                    gindex - (1 << depth),
                    root,
                ));
            }
        }
    }

    #[test]
    fn gloas_light_client_gindices_land_on_their_fields() {
        // finalized_checkpoint is field 20 (chunk 20: the 16-chunk subtree's 16th), its root
        // field 1; the sync committees are fields 22 and 23 (the 64-chunk subtree's 2nd, 3rd).
        assert_eq!(progressive_gindex(20) * 2 + 1, 735);
        assert_eq!(progressive_gindex(22), 2945);
        assert_eq!(progressive_gindex(23), 2946);
        // The body's bid is field 10; its `message` is field 0 of two (x2), a progressive
        // container whose field 0 (`parent_block_hash`) sits at its gindex 4 (x4).
        assert_eq!(progressive_gindex(10) * 2 * 4, 2856);
    }
}
