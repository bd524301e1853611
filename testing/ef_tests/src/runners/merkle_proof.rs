//! `merkle_proof` (and the light-client `single_merkle_proof` handler): builds the Merkle proof of
//! the node at a generalized index of an SSZ object and compares it with `proof.yaml`.
//!
//! A case holds `object.ssz_snappy` (the suite names its type: `BeaconBlockBody`, `BeaconState`)
//! and `proof.yaml` (`leaf`, `leaf_index`, `branch`). The proof is computed with
//! `types::merkle_proof` from the field roots of the object's containers, so a wrong field order
//! or a wrong field root shows up as a mismatch; the vector's branch is also checked with the
//! state transition's own `is_valid_merkle_branch` against the object's `hash_tree_root`.
//!
//! Gloas (a [`PendingFork`]): the body and state are progressive containers (EIP-7495), so their
//! trees are built here as binary nodes of the progressive shape (`hash(merkleize_progressive
//! (chunks), active_fields)`, subtrees of 1, 4, 16, … chunks) from the field roots, checked to hash
//! to the object's root, and walked by the same `compute_merkle_proof`.
//!
//! [format]: consensus-specs tests/formats/merkle_proof/README.md
//! [spec]: ssz/merkle-proofs.md#generalized-merkle-tree-index

use progressive_ssz::ProgressiveContainer;
use serde::Deserialize;
use ssz::Decode;
use tree_hash::TreeHash;
use types::merkle_proof::{ProofTree, compute_merkle_proof, floorlog2};
use types::{EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Root, electra, fulu, gloas};

use super::state_case::check_known_files;
use crate::case::{CaseContext, CaseResult, PendingFork, Preset, Runner};
use crate::files::{decode_hex32, read_ssz_snappy, read_yaml};

/// Runs `<config>/<fork>/merkle_proof/single_merkle_proof/<Type>/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MerkleProof;

impl Runner for MerkleProof {
    fn name(&self) -> &'static str {
        "merkle_proof"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        if case.handler != "single_merkle_proof" {
            return CaseResult::NotRun(format!("no merkle_proof handler for {}", case.handler));
        }
        run_single_merkle_proof(case)
    }
}

/// Runs a `single_merkle_proof` case (shared with the `light_client` runner), dispatching on the
/// suite (the object's type) and the preset.
pub(crate) fn run_single_merkle_proof(case: &CaseContext) -> CaseResult {
    let preset = match case.preset() {
        Ok(preset) => preset,
        Err(e) => return CaseResult::Failed(e),
    };
    match preset {
        Preset::Minimal => run_for_preset::<MinimalEthSpec>(case),
        Preset::Mainnet => run_for_preset::<MainnetEthSpec>(case),
    }
}

fn run_for_preset<E: EthSpec>(case: &CaseContext) -> CaseResult {
    // Fulu's body is Electra's: one type for both.
    match (case.fork, case.suite.as_str()) {
        (ForkName::Electra | ForkName::Fulu, "BeaconBlockBody") => {
            CaseResult::from_check(check::<BodyTree<E>>(case))
        }
        (ForkName::Electra, "BeaconState") => {
            CaseResult::from_check(check::<electra::BeaconState<E>>(case))
        }
        (ForkName::Fulu, "BeaconState") => {
            CaseResult::from_check(check::<fulu::BeaconState<E>>(case))
        }
        (
            fork @ (ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Electra
            | ForkName::Fulu
            | ForkName::Gloas),
            other,
        ) => CaseResult::NotRun(format!(
            "no single_merkle_proof support for type {other} at {fork}"
        )),
    }
}

/// A node of an SSZ Merkle tree by the roots of its children, with the children a generalized
/// index may reach into.
struct Node {
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

/// An Electra (and Fulu) block body whose `blob_kzg_commitments` opens into its commitments, for
/// the proof of one commitment (a blob sidecar's `kzg_commitment_inclusion_proof`): the list's
/// root is `hash(data_root, length)`, its data the commitments' roots padded to
/// `MAX_BLOB_COMMITMENTS_PER_BLOCK`.
struct BodyTree<E: EthSpec> {
    body: electra::BeaconBlockBody<E>,
    tree: Node,
}

/// `blob_kzg_commitments`' position among the body's fields.
const BLOB_KZG_COMMITMENTS_FIELD: usize = 11;

impl<E: EthSpec> Decode for BodyTree<E> {
    fn is_ssz_fixed_len() -> bool {
        <electra::BeaconBlockBody<E> as Decode>::is_ssz_fixed_len()
    }

    fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, ssz::DecodeError> {
        use typenum::Unsigned as _;
        let body = electra::BeaconBlockBody::<E>::from_ssz_bytes(bytes)?;
        let commitments = &body.blob_kzg_commitments;
        let mut data: Vec<Root> = commitments.iter().map(|c| c.tree_hash_root()).collect();
        data.resize(E::MaxBlobCommitmentsPerBlock::to_usize(), Root::ZERO);
        let data = Node {
            roots: data,
            children: Vec::new(),
        };
        let list = Node {
            roots: vec![
                Node::root(&data),
                (commitments.len() as u64).tree_hash_root(),
            ],
            children: vec![(0, data)],
        };
        let mut tree = Node {
            roots: body.field_roots(),
            children: Vec::new(),
        };
        if Node::root(&list) != tree.roots[BLOB_KZG_COMMITMENTS_FIELD] {
            return Err(ssz::DecodeError::BytesInvalid(
                "blob_kzg_commitments: the opened list does not hash to the field's root".into(),
            ));
        }
        tree.children.push((BLOB_KZG_COMMITMENTS_FIELD, list));
        Ok(Self { body, tree })
    }
}

impl Node {
    /// The root of the node: its children's roots merkleized.
    fn root(node: &Node) -> Root {
        compute_merkle_proof(node, 1)
            .map(|(root, _)| root)
            .unwrap_or(Root::ZERO)
    }
}

impl<E: EthSpec> TreeHash for BodyTree<E> {
    fn tree_hash_type() -> tree_hash::TreeHashType {
        <electra::BeaconBlockBody<E> as TreeHash>::tree_hash_type()
    }

    fn tree_hash_packed_encoding(&self) -> tree_hash::PackedEncoding {
        self.body.tree_hash_packed_encoding()
    }

    fn tree_hash_packing_factor() -> usize {
        <electra::BeaconBlockBody<E> as TreeHash>::tree_hash_packing_factor()
    }

    fn tree_hash_root(&self) -> tree_hash::Hash256 {
        self.body.tree_hash_root()
    }
}

impl<E: EthSpec> ProofTree for BodyTree<E> {
    fn field_roots(&self) -> Vec<Root> {
        self.tree.field_roots()
    }

    fn field(&self, index: usize) -> Option<&dyn ProofTree> {
        self.tree.field(index)
    }
}

/// `proof.yaml`.
#[derive(Debug, Deserialize)]
struct ProofFile {
    leaf: String,
    leaf_index: u64,
    branch: Vec<String>,
}

fn check<T: ProofTree + Decode + TreeHash + 'static>(case: &CaseContext) -> Result<(), String> {
    check_tree(case, |bytes| {
        let object = T::from_ssz_bytes(bytes)
            .map_err(|e| format!("cannot decode object.ssz_snappy: {e:?}"))?;
        let root = object.tree_hash_root();
        Ok((Box::new(object) as Box<dyn ProofTree>, root))
    })
}

/// Checks `proof.yaml` against the tree `build` makes of `object.ssz_snappy`'s bytes (the tree
/// and the object's `hash_tree_root`).
fn check_tree<F: std::fmt::Display>(
    case: &CaseContext<F>,
    build: impl FnOnce(&[u8]) -> Result<(Box<dyn ProofTree>, Root), String>,
) -> Result<(), String> {
    check_known_files(case, &["object.ssz_snappy", "proof.yaml"])?;
    let bytes = read_ssz_snappy(&case.file("object.ssz_snappy"))?;
    let (object, root) = build(&bytes)?;
    let proof: ProofFile = read_yaml(&case.file("proof.yaml"))?;
    let want_leaf = Root::from(decode_hex32(&proof.leaf)?);
    let want_branch = proof
        .branch
        .iter()
        .map(|h| decode_hex32(h).map(Root::from))
        .collect::<Result<Vec<_>, _>>()?;

    let (leaf, branch) =
        compute_merkle_proof(object.as_ref(), proof.leaf_index).map_err(|e| e.to_string())?;
    if leaf != want_leaf {
        return Err(format!(
            "leaf at gindex {}: computed {leaf}, expected {want_leaf}",
            proof.leaf_index
        ));
    }
    if branch.len() != want_branch.len() {
        return Err(format!(
            "branch of gindex {} has {} nodes, expected {}",
            proof.leaf_index,
            branch.len(),
            want_branch.len()
        ));
    }
    if let Some(i) = branch.iter().zip(&want_branch).position(|(a, b)| a != b) {
        return Err(format!(
            "branch[{i}] of gindex {}: computed {}, expected {}",
            proof.leaf_index, branch[i], want_branch[i]
        ));
    }
    let depth = floorlog2(proof.leaf_index);
    let index = proof.leaf_index - (1 << depth);
    if !state_processing::common::is_valid_merkle_branch(
        want_leaf,
        &want_branch,
        depth as usize,
        index,
        root,
    ) {
        return Err(format!(
            "is_valid_merkle_branch rejects the vector's proof of gindex {} against the object's \
             root {root}",
            proof.leaf_index
        ));
    }
    Ok(())
}

/// Runs a [`PendingFork`]'s `single_merkle_proof` case (the `light_client` runner's).
pub(crate) fn run_pending_fork_single_merkle_proof(case: &CaseContext<PendingFork>) -> CaseResult {
    match case.preset() {
        Ok(Preset::Minimal) => run_pending_fork_for_preset::<MinimalEthSpec>(case),
        Ok(Preset::Mainnet) => run_pending_fork_for_preset::<MainnetEthSpec>(case),
        Err(e) => CaseResult::Failed(e),
    }
}

fn run_pending_fork_for_preset<E: EthSpec>(case: &CaseContext<PendingFork>) -> CaseResult {
    match (case.fork, case.suite.as_str()) {
        (PendingFork::Gloas, "BeaconBlockBody") => {
            CaseResult::from_check(check_tree(case, |bytes| {
                let body = gloas::BeaconBlockBody::<E>::from_ssz_bytes(bytes)
                    .map_err(|e| format!("cannot decode object.ssz_snappy: {e:?}"))?;
                checked_tree(gloas_body_tree(&body), body.tree_hash_root())
            }))
        }
        (PendingFork::Gloas, "BeaconState") => CaseResult::from_check(check_tree(case, |bytes| {
            let state = gloas::BeaconState::<E>::from_ssz_bytes(bytes)
                .map_err(|e| format!("cannot decode object.ssz_snappy: {e:?}"))?;
            checked_tree(gloas_state_tree(&state), state.tree_hash_root())
        })),
        (fork, other) => CaseResult::NotRun(format!(
            "no single_merkle_proof support for type {other} at {fork}"
        )),
    }
}

/// The tree, once its root is the object's `hash_tree_root` (a wrong field list shows here).
fn checked_tree(tree: Node, root: Root) -> Result<(Box<dyn ProofTree>, Root), String> {
    let tree_root = Node::root(&tree);
    if tree_root != root {
        return Err(format!(
            "the field roots' progressive tree hashes to {tree_root}, the object to {root}"
        ));
    }
    Ok((Box::new(tree), root))
}

/// The Merkle tree of a progressive container (EIP-7495) as binary nodes:
/// `hash(merkleize_progressive(chunks), pack_bits(active_fields))`, chunk `i` the next field's
/// root where `active_fields[i]` and zero elsewhere. `opened` gives the subtree of a field (by
/// declaration index) that generalized indices may reach into.
///
/// [spec]: ssz/simple-serialize.md#merkleization (EIP-7495, EIP-7916)
fn progressive_container_node(
    active_fields: &[bool],
    field_roots: Vec<Root>,
    mut opened: Vec<(usize, Node)>,
) -> Node {
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
    Node {
        roots: vec![
            data.as_ref().map_or(Root::ZERO, Node::root),
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
    opened: Vec<(usize, Node)>,
    num_leaves: usize,
) -> Option<Node> {
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
    let subtree = Node {
        roots: chunks,
        children: here,
    };
    let rest = progressive_node(rest_chunks, later, num_leaves * 4);
    Some(Node {
        roots: vec![
            Node::root(&subtree),
            rest.as_ref().map_or(Root::ZERO, Node::root),
        ],
        children: std::iter::once((0, subtree))
            .chain(rest.map(|node| (1, node)))
            .collect(),
    })
}

/// A (non-progressive) container of `roots`, opening `children`.
fn container_node(roots: Vec<Root>, children: Vec<(usize, Node)>) -> Node {
    Node { roots, children }
}

/// `vec![self.a.tree_hash_root(), …]`.
macro_rules! field_roots {
    ($value:ident: $($field:ident),* $(,)?) => {
        vec![$($value.$field.tree_hash_root()),*]
    };
}

/// A Gloas `BeaconBlockBody` whose `signed_execution_payload_bid` opens down to the bid's fields
/// (`EXECUTION_BLOCK_HASH_GINDEX_GLOAS` reaches `message.parent_block_hash`).
fn gloas_body_tree<E: EthSpec>(body: &gloas::BeaconBlockBody<E>) -> Node {
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
        vec![Node::root(&bid), signed_bid.signature.tree_hash_root()],
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
fn gloas_state_tree<E: EthSpec>(state: &gloas::BeaconState<E>) -> Node {
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
            let root = Node::root(&node);
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
                assert!(state_processing::common::is_valid_merkle_branch(
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
