//! `merkle_proof` (and the light-client `single_merkle_proof` handler): builds the Merkle proof of
//! the node at a generalized index of an SSZ object and compares it with `proof.yaml`.
//!
//! A case holds `object.ssz_snappy` (the suite names its type: `BeaconBlockBody`, `BeaconState`)
//! and `proof.yaml` (`leaf`, `leaf_index`, `branch`). The proof is computed with
//! `types::merkle_proof` from the field roots of the object's containers, so a wrong field order
//! or a wrong field root shows up as a mismatch; the vector's branch is also checked with the
//! state transition's own `is_valid_merkle_branch` against the object's `hash_tree_root`.
//!
//! Gloas (a [`PendingFork`]): the body and state are progressive containers (EIP-7495); their
//! trees are `types::merkle_proof::progressive`'s (the ones the light-client full node proves
//! with), checked to hash to the object's root, and walked by the same `compute_merkle_proof`.
//!
//! [format]: consensus-specs tests/formats/merkle_proof/README.md
//! [spec]: ssz/merkle-proofs.md#generalized-merkle-tree-index

use serde::Deserialize;
use ssz::Decode;
use tree_hash::TreeHash;
use types::merkle_proof::progressive::{
    ProofNode, container_node, gloas_body_tree, gloas_state_tree,
};
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

/// An Electra (and Fulu) block body whose `blob_kzg_commitments` opens into its commitments, for
/// the proof of one commitment (a blob sidecar's `kzg_commitment_inclusion_proof`): the list's
/// root is `hash(data_root, length)`, its data the commitments' roots padded to
/// `MAX_BLOB_COMMITMENTS_PER_BLOCK`.
struct BodyTree<E: EthSpec> {
    body: electra::BeaconBlockBody<E>,
    tree: ProofNode,
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
        let data = container_node(data, Vec::new());
        let list = container_node(
            vec![data.root(), (commitments.len() as u64).tree_hash_root()],
            vec![(0, data)],
        );
        let roots = body.field_roots();
        if list.root() != roots[BLOB_KZG_COMMITMENTS_FIELD] {
            return Err(ssz::DecodeError::BytesInvalid(
                "blob_kzg_commitments: the opened list does not hash to the field's root".into(),
            ));
        }
        let tree = container_node(roots, vec![(BLOB_KZG_COMMITMENTS_FIELD, list)]);
        Ok(Self { body, tree })
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
fn checked_tree(tree: ProofNode, root: Root) -> Result<(Box<dyn ProofTree>, Root), String> {
    let tree_root = tree.root();
    if tree_root != root {
        return Err(format!(
            "the field roots' progressive tree hashes to {tree_root}, the object to {root}"
        ));
    }
    Ok((Box::new(tree), root))
}
