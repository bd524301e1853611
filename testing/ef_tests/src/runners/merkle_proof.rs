//! `merkle_proof` (and the light-client `single_merkle_proof` handler): builds the Merkle proof of
//! the node at a generalized index of an SSZ object and compares it with `proof.yaml`.
//!
//! A case holds `object.ssz_snappy` (the suite names its type: `BeaconBlockBody`, `BeaconState`)
//! and `proof.yaml` (`leaf`, `leaf_index`, `branch`). The proof is computed with
//! `types::merkle_proof` from the field roots of the object's containers, so a wrong field order
//! or a wrong field root shows up as a mismatch; the vector's branch is also checked with the
//! state transition's own `is_valid_merkle_branch` against the object's `hash_tree_root`.
//!
//! [format]: consensus-specs tests/formats/merkle_proof/README.md
//! [spec]: ssz/merkle-proofs.md#generalized-merkle-tree-index

use serde::Deserialize;
use ssz::Decode;
use tree_hash::TreeHash;
use types::merkle_proof::{ProofTree, compute_merkle_proof, floorlog2};
use types::{EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Root, electra, fulu};

use super::state_case::check_known_files;
use crate::case::{CaseContext, CaseResult, Preset, Runner};
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
        (fork, other) => CaseResult::NotRun(format!(
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

fn check<T: ProofTree + Decode + TreeHash>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["object.ssz_snappy", "proof.yaml"])?;
    let bytes = read_ssz_snappy(&case.file("object.ssz_snappy"))?;
    let object =
        T::from_ssz_bytes(&bytes).map_err(|e| format!("cannot decode object.ssz_snappy: {e:?}"))?;
    let proof: ProofFile = read_yaml(&case.file("proof.yaml"))?;
    let want_leaf = Root::from(decode_hex32(&proof.leaf)?);
    let want_branch = proof
        .branch
        .iter()
        .map(|h| decode_hex32(h).map(Root::from))
        .collect::<Result<Vec<_>, _>>()?;
    let root = object.tree_hash_root();

    let (leaf, branch) =
        compute_merkle_proof(&object, proof.leaf_index).map_err(|e| e.to_string())?;
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
