//! `merkle_proof` (and the light-client `single_merkle_proof` handler): builds the Merkle proof of
//! the node at a generalized index of an SSZ object and compares it with `proof.yaml`.
//!
//! A case holds `object.ssz_snappy` (the suite names its type: `BeaconBlockBody`, `BeaconState`)
//! and `proof.yaml` (`leaf`, `leaf_index`, `branch`). The proof is computed here from the field
//! roots of the object's containers ([`ProofTree`]), so a wrong field order or a wrong field root
//! shows up as a mismatch; the vector's branch is also checked with the state transition's own
//! `is_valid_merkle_branch` against the object's `hash_tree_root`.
//!
//! [format]: consensus-specs tests/formats/merkle_proof/README.md
//! [spec]: ssz/merkle-proofs.md#generalized-merkle-tree-index

use serde::Deserialize;
use ssz::Decode;
use tree_hash::TreeHash;
use types::{EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, Root, fulu, phase0};

use super::state_case::check_known_files;
use crate::case::{CaseContext, CaseResult, Preset, Runner};
use crate::files::{decode_hex32, read_ssz_snappy, read_yaml};

/// Runs `<config>/<fork>/merkle_proof/single_merkle_proof/<Type>/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MerkleProof;

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
    if case.fork != ForkName::Fulu {
        return CaseResult::NotRun(format!(
            "single_merkle_proof objects are only wired for fulu, not {}",
            case.fork
        ));
    }
    match case.suite.as_str() {
        "BeaconBlockBody" => CaseResult::from_check(check::<fulu::BeaconBlockBody<E>>(case)),
        "BeaconState" => CaseResult::from_check(check::<fulu::BeaconState<E>>(case)),
        other => CaseResult::NotRun(format!("no single_merkle_proof support for type {other}")),
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

    let (leaf, branch) = compute_merkle_proof(&object, proof.leaf_index)?;
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

/// `floorlog2(x)` for `x >= 1`.
fn floorlog2(x: u64) -> u32 {
    63 - x.max(1).leading_zeros()
}

/// An SSZ container whose Merkle tree the proof helper can walk: the roots of its fields, in
/// order, and the containers inside it a generalized index may reach into.
pub(crate) trait ProofTree {
    /// `hash_tree_root` of every field, in declaration order.
    fn field_roots(&self) -> Vec<Root>;

    /// The container in field `index`, for generalized indices that reach below that field;
    /// `None` where the helper cannot open the field.
    fn field(&self, _index: usize) -> Option<&dyn ProofTree> {
        None
    }
}

/// The leaf at generalized index `gindex` of `object` and its branch (sibling nodes from the leaf
/// up to the root), as the spec's `compute_merkle_proof` returns them.
///
/// [spec]: ssz/merkle-proofs.md#merkle-multiproofs
pub(crate) fn compute_merkle_proof(
    object: &dyn ProofTree,
    gindex: u64,
) -> Result<(Root, Vec<Root>), String> {
    if gindex == 0 {
        return Err("generalized index 0 names no node".to_string());
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
) -> Result<(Root, Vec<Root>), String> {
    let leaves = object.field_roots();
    let field_depth = leaves.len().next_power_of_two().trailing_zeros() as usize;
    // layers[0]: the padded field roots; layers[field_depth]: the container's root.
    let mut layers = vec![leaves];
    layers[0].resize(1 << field_depth, Root::ZERO);
    for _ in 0..field_depth {
        let below = layers.last().map(Vec::as_slice).unwrap_or_default();
        let above = below
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
    let inner = object.field(position).ok_or_else(|| {
        format!("generalized index {gindex} reaches below field {position}, which the proof helper cannot open")
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

impl<E: EthSpec> ProofTree for fulu::BeaconBlockBody<E> {
    fn field_roots(&self) -> Vec<Root> {
        roots!(self:
            randao_reveal, eth1_data, graffiti, proposer_slashings, attester_slashings,
            attestations, deposits, voluntary_exits, sync_aggregate, execution_payload,
            bls_to_execution_changes, blob_kzg_commitments, execution_requests,
        )
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

    fn verify(leaf: Root, branch: &[Root], gindex: u64, root: Root) -> bool {
        let depth = floorlog2(gindex) as usize;
        state_processing::common::is_valid_merkle_branch(
            leaf,
            branch,
            depth,
            gindex - (1 << depth),
            root,
        )
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
        // Field 2 cannot be opened.
        assert!(compute_merkle_proof(&tree, 12).is_err());
        assert!(compute_merkle_proof(&tree, 0).is_err());
    }
}
