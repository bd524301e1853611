//! Merkle trees of Gloas's progressive containers (EIP-7495) for the light-client branches: the
//! Gloas `BeaconState` (sync committees, finalized root) and `BeaconBlockBody` (the bid's
//! `parent_block_hash`) as binary nodes built from their field roots, walked by
//! `types::merkle_proof::compute_merkle_proof` like the classic containers of earlier forks.
//!
//! A progressive container's root is `hash(merkleize_progressive(chunks), active_fields)`;
//! `merkleize_progressive(chunks, n) = hash(merkleize(chunks[..n], n),
//! merkleize_progressive(chunks[n..], 4 n))`, the zero node for no chunks.
//!
//! [spec]: ssz/simple-serialize.md#merkleization

use progressive_ssz::ProgressiveContainer;
use tree_hash::TreeHash;
use types::merkle_proof::ProofTree;
use types::{EthSpec, Root, gloas};

/// A node of a Merkle tree by the roots of its children (padded with zero nodes to a power of
/// two), with the children a generalized index may reach into.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    roots: Vec<Root>,
    children: Vec<(usize, Node)>,
}

impl ProofTree for Node {
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

impl Node {
    /// A classic container (or vector) of `roots`, opening `children` by position.
    fn container(roots: Vec<Root>, children: Vec<(usize, Node)>) -> Self {
        Self { roots, children }
    }

    /// `merkleize(roots)`: the node's hash tree root.
    pub(crate) fn root(&self) -> Root {
        let mut layer = self.roots.clone();
        layer.resize(layer.len().next_power_of_two().max(1), Root::ZERO);
        while layer.len() > 1 {
            layer = layer
                .chunks(2)
                .map(|pair| Root::from(ethereum_hashing::hash32_concat(&pair[0][..], &pair[1][..])))
                .collect();
        }
        layer[0]
    }

    /// A progressive container of the fields whose roots are `field_roots` (in declaration
    /// order) under `active_fields`, opening the fields in `opened` (by declaration index).
    fn progressive_container(
        active_fields: &[bool],
        field_roots: Vec<Root>,
        mut opened: Vec<(usize, Node)>,
    ) -> Self {
        let mut chunks = Vec::with_capacity(active_fields.len());
        let mut opened_chunks = Vec::new();
        let mut fields = field_roots.into_iter().enumerate();
        for &active in active_fields {
            match active.then(|| fields.next()).flatten() {
                Some((field, root)) => {
                    if let Some(at) = opened.iter().position(|(i, _)| *i == field) {
                        opened_chunks.push((chunks.len(), opened.swap_remove(at).1));
                    }
                    chunks.push(root);
                }
                None => chunks.push(Root::ZERO),
            }
        }
        let data = merkleize_progressive(chunks, opened_chunks, 1);
        Self::container(
            vec![
                data.as_ref().map_or(Root::ZERO, Node::root),
                progressive_ssz::pack_active_fields(active_fields),
            ],
            data.into_iter().map(|node| (0, node)).collect(),
        )
    }
}

/// `merkleize_progressive(chunks, num_leaves)` as nodes (`None`: the zero node); `opened` holds
/// subtrees by chunk index.
fn merkleize_progressive(
    mut chunks: Vec<Root>,
    opened: Vec<(usize, Node)>,
    num_leaves: usize,
) -> Option<Node> {
    if chunks.is_empty() {
        return None;
    }
    let rest = chunks.split_off(num_leaves.min(chunks.len()));
    chunks.resize(num_leaves, Root::ZERO);
    let (here, later): (Vec<_>, Vec<_>) = opened.into_iter().partition(|(i, _)| *i < num_leaves);
    let later = later
        .into_iter()
        .map(|(i, node)| (i - num_leaves, node))
        .collect();
    let subtree = Node::container(chunks, here);
    let rest = merkleize_progressive(rest, later, num_leaves.saturating_mul(4));
    Some(Node::container(
        vec![subtree.root(), rest.as_ref().map_or(Root::ZERO, Node::root)],
        std::iter::once((0, subtree))
            .chain(rest.map(|node| (1, node)))
            .collect(),
    ))
}

/// `vec![value.a.tree_hash_root(), …]`.
macro_rules! field_roots {
    ($value:ident: $($field:ident),* $(,)?) => {
        vec![$($value.$field.tree_hash_root()),*]
    };
}

/// A Gloas `BeaconBlockBody` whose `signed_execution_payload_bid` opens down to the bid's fields
/// (`EXECUTION_BLOCK_HASH_GINDEX_GLOAS` reaches `message.parent_block_hash`).
pub(crate) fn gloas_body_tree<E: EthSpec>(body: &gloas::BeaconBlockBody<E>) -> Node {
    /// `signed_execution_payload_bid`'s position among the body's fields.
    const SIGNED_EXECUTION_PAYLOAD_BID: usize = 10;
    let signed_bid = &body.signed_execution_payload_bid;
    let bid = &signed_bid.message;
    let bid = Node::progressive_container(
        <gloas::ExecutionPayloadBid as ProgressiveContainer>::ACTIVE_FIELDS,
        field_roots!(bid:
            parent_block_hash, parent_block_root, block_hash, prev_randao, fee_recipient,
            gas_limit, builder_index, slot, value, execution_payment, blob_kzg_commitments,
            execution_requests_root,
        ),
        Vec::new(),
    );
    let signed_bid = Node::container(
        vec![bid.root(), signed_bid.signature.tree_hash_root()],
        vec![(0, bid)],
    );
    Node::progressive_container(
        <gloas::BeaconBlockBody<E> as ProgressiveContainer>::ACTIVE_FIELDS,
        field_roots!(body:
            randao_reveal, eth1_data, graffiti, proposer_slashings, attester_slashings,
            attestations, deposits, voluntary_exits, sync_aggregate, bls_to_execution_changes,
            signed_execution_payload_bid, payload_attestations, parent_execution_requests,
        ),
        vec![(SIGNED_EXECUTION_PAYLOAD_BID, signed_bid)],
    )
}

/// A Gloas `BeaconState` whose checkpoints open into their fields (the finality branch proves
/// `finalized_checkpoint.root`).
pub(crate) fn gloas_state_tree<E: EthSpec>(state: &gloas::BeaconState<E>) -> Node {
    let checkpoint = |c: &gloas::Checkpoint| {
        Node::container(
            vec![c.epoch.tree_hash_root(), c.root.tree_hash_root()],
            Vec::new(),
        )
    };
    Node::progressive_container(
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

    #[test]
    fn progressive_nodes_hash_like_progressive_ssz() {
        for len in 1..=70usize {
            let active: Vec<bool> = (0..len).map(|i| i + 1 == len || i % 3 != 1).collect();
            let fields = active.iter().filter(|a| **a).count();
            let roots: Vec<Root> = (0..fields).map(|i| Root::from([i as u8 + 1; 32])).collect();
            let node = Node::progressive_container(&active, roots.clone(), Vec::new());
            assert_eq!(
                node.root(),
                progressive_ssz::progressive_container_root(&active, roots.iter().copied()),
                "{len} chunks"
            );
        }
    }
}
