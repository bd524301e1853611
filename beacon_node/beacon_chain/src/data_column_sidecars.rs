//! A block's data column sidecars: built from the block and its blobs' cells and proofs (for
//! publication and after reconstruction), and the inclusion proof that ties a sidecar's
//! commitments to the block header it carries.
//!
//! [spec]: fulu/validator.md#constructing-the-datacolumnsidecars

use ssz_types::{FixedVector, VariableList};
use tree_hash::TreeHash;
use types::merkle_proof::{MerkleProofError, compute_merkle_proof, get_subtree_index};
use types::{
    Bytes32, DataColumnSidecar, EthSpec, ForkName, KZGCommitment, KZGProof, Root,
    SignedBeaconBlock, fulu, phase0, typenum::Unsigned,
};

/// `get_generalized_index(BeaconBlockBody, "blob_kzg_commitments")` from Deneb on: field 11 of
/// a body whose 12 (Deneb) or 13 (Electra, Fulu) fields pad to 16 leaves.
pub const BLOB_KZG_COMMITMENTS_GINDEX: u64 = 16 + 11;

/// Why sidecars could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataColumnSidecarError {
    /// Data column sidecars exist from Fulu on.
    #[error("a {0} block has no data column sidecars")]
    NotFulu(ForkName),
    /// One cells-and-proofs entry is needed per blob commitment.
    #[error("{commitments} blob commitments but cells and proofs for {blobs} blobs")]
    BlobCountMismatch {
        /// Commitments in the block.
        commitments: usize,
        /// Entries of cells and proofs given.
        blobs: usize,
    },
    /// More blobs than a sidecar's lists hold.
    #[error("{0} blobs exceed MAX_BLOB_COMMITMENTS_PER_BLOCK")]
    TooManyBlobs(usize),
    /// The body's Merkle proof could not be built.
    #[error("inclusion proof: {0}")]
    MerkleProof(#[from] MerkleProofError),
}

/// The Merkle branch of `body.blob_kzg_commitments` against the body root, as every sidecar of
/// the block carries it.
///
/// [spec]: fulu/validator.md#get_data_column_sidecars_from_block
pub fn compute_kzg_commitments_inclusion_proof<E: EthSpec>(
    body: &fulu::BeaconBlockBody<E>,
) -> Result<FixedVector<Bytes32, E::KzgCommitmentsInclusionProofDepth>, DataColumnSidecarError> {
    let (_, branch) = compute_merkle_proof(body, BLOB_KZG_COMMITMENTS_GINDEX)?;
    // A Fulu body has 13 fields (16 leaves), so a field's branch has 4 nodes.
    Ok(FixedVector::new(branch).expect("the branch is KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH long"))
}

/// The spec's `get_data_column_sidecars`: one sidecar per column, column `i` holding cell `i`
/// and proof `i` of every blob. `cells_and_kzg_proofs` has one entry per commitment, in order.
///
/// [spec]: fulu/validator.md#get_data_column_sidecars
pub fn get_data_column_sidecars<E: EthSpec>(
    signed_block_header: &phase0::SignedBeaconBlockHeader,
    kzg_commitments: &VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    kzg_commitments_inclusion_proof: &FixedVector<Bytes32, E::KzgCommitmentsInclusionProofDepth>,
    cells_and_kzg_proofs: &[kzg::CellsAndProofs],
) -> Result<Vec<DataColumnSidecar<E>>, DataColumnSidecarError> {
    if cells_and_kzg_proofs.len() != kzg_commitments.len() {
        return Err(DataColumnSidecarError::BlobCountMismatch {
            commitments: kzg_commitments.len(),
            blobs: cells_and_kzg_proofs.len(),
        });
    }
    let blobs = cells_and_kzg_proofs.len();
    (0..E::NumberOfColumns::to_usize())
        .map(|column| {
            let cells = cells_and_kzg_proofs
                .iter()
                .map(|blob| {
                    FixedVector::new(blob.cells[column].to_bytes().to_vec())
                        .expect("a KZG cell is BYTES_PER_CELL bytes, as types::Cell is")
                })
                .collect::<Vec<_>>();
            let proofs = cells_and_kzg_proofs
                .iter()
                .map(|blob| KZGProof::from(blob.proofs[column].0))
                .collect::<Vec<_>>();
            Ok(DataColumnSidecar::Fulu(fulu::DataColumnSidecar {
                index: column as u64,
                column: VariableList::new(cells)
                    .map_err(|_| DataColumnSidecarError::TooManyBlobs(blobs))?,
                kzg_commitments: kzg_commitments.clone(),
                kzg_proofs: VariableList::new(proofs)
                    .map_err(|_| DataColumnSidecarError::TooManyBlobs(blobs))?,
                signed_block_header: signed_block_header.clone(),
                kzg_commitments_inclusion_proof: kzg_commitments_inclusion_proof.clone(),
            }))
        })
        .collect()
}

/// The Gloas `get_data_column_sidecars(beacon_block_root, slot, cells_and_kzg_proofs)`: one
/// sidecar per column, column `i` holding cell `i` and proof `i` of every blob of the payload;
/// no header, commitments or inclusion proof (the commitments are the block's bid's).
///
/// [spec]: gloas/builder.md#modified-get_data_column_sidecars
pub fn get_gloas_data_column_sidecars<E: EthSpec>(
    beacon_block_root: types::Root,
    slot: types::Slot,
    cells_and_kzg_proofs: &[kzg::CellsAndProofs],
) -> Result<Vec<DataColumnSidecar<E>>, DataColumnSidecarError> {
    let blobs = cells_and_kzg_proofs.len();
    (0..E::NumberOfColumns::to_usize())
        .map(|column| {
            let cells = cells_and_kzg_proofs
                .iter()
                .map(|blob| {
                    FixedVector::new(blob.cells[column].to_bytes().to_vec())
                        .expect("a KZG cell is BYTES_PER_CELL bytes, as types::Cell is")
                })
                .collect::<Vec<_>>();
            let proofs = cells_and_kzg_proofs
                .iter()
                .map(|blob| KZGProof::from(blob.proofs[column].0))
                .collect::<Vec<_>>();
            Ok(DataColumnSidecar::Gloas(types::gloas::DataColumnSidecar {
                index: column as u64,
                column: cells.into(),
                kzg_proofs: proofs.into(),
                slot,
                beacon_block_root,
            }))
        })
        .collect::<Result<Vec<_>, DataColumnSidecarError>>()
        .and_then(|sidecars| {
            if blobs as u64 > E::MaxBlobCommitmentsPerBlock::to_u64() {
                return Err(DataColumnSidecarError::TooManyBlobs(blobs));
            }
            Ok(sidecars)
        })
}

/// The spec's `get_data_column_sidecars_from_block`: the sidecars of a Fulu block from its
/// blobs' cells and proofs (as the execution layer's blobs bundle or `getBlobsV2` gives them).
///
/// [spec]: fulu/validator.md#get_data_column_sidecars_from_block
pub fn get_data_column_sidecars_from_block<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
    cells_and_kzg_proofs: &[kzg::CellsAndProofs],
) -> Result<Vec<DataColumnSidecar<E>>, DataColumnSidecarError> {
    let SignedBeaconBlock::Fulu(fulu_block) = block else {
        return Err(DataColumnSidecarError::NotFulu(block.fork_name()));
    };
    let body = &fulu_block.message.body;
    get_data_column_sidecars::<E>(
        &block.signed_block_header(),
        &body.blob_kzg_commitments,
        &compute_kzg_commitments_inclusion_proof(body)?,
        cells_and_kzg_proofs,
    )
}

/// The spec's `verify_data_column_sidecar_inclusion_proof`: the sidecar's commitments are the
/// ones in the body its header commits to.
///
/// [spec]: fulu/p2p-interface.md#verify_data_column_sidecar_inclusion_proof
pub fn verify_data_column_sidecar_inclusion_proof<E: EthSpec>(
    sidecar: &DataColumnSidecar<E>,
) -> bool {
    let sidecar = match sidecar {
        DataColumnSidecar::Fulu(sidecar) => sidecar,
        // A Gloas sidecar carries no header and no inclusion proof (its commitments are the
        // bid's): it never verifies here; the chain refuses it as UnsupportedFork first.
        DataColumnSidecar::Gloas(_) => return false,
    };
    verify_kzg_commitments_inclusion_proof::<E>(
        &sidecar.kzg_commitments,
        &sidecar.kzg_commitments_inclusion_proof,
        sidecar.signed_block_header.message.body_root,
    )
}

/// The Merkle check shared by `verify_data_column_sidecar_inclusion_proof` and
/// `verify_partial_data_column_header_inclusion_proof`: `commitments` are the
/// `blob_kzg_commitments` of the body whose root is `body_root`.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-verify_partial_data_column_header_inclusion_proof
pub fn verify_kzg_commitments_inclusion_proof<E: EthSpec>(
    commitments: &VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    proof: &[Root],
    body_root: Root,
) -> bool {
    state_processing::common::is_valid_merkle_branch(
        commitments.tree_hash_root(),
        proof,
        E::KzgCommitmentsInclusionProofDepth::to_usize(),
        get_subtree_index(BLOB_KZG_COMMITMENTS_GINDEX),
        body_root,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_utils::{block_with_blobs, minimal_spec, pool};
    use types::MinimalEthSpec as E;

    fn kzg_valid(sidecars: &[DataColumnSidecar<E>]) -> bool {
        fork_choice::is_data_available(
            fork_choice::Columns::Retrieved(sidecars),
            &minimal_spec(),
            &pool(),
        )
        .is_ok()
    }

    #[test]
    fn sidecars_from_a_block_verify_and_carry_its_header() {
        let (block, cells) = block_with_blobs(2, 7);
        let sidecars = get_data_column_sidecars_from_block(&block, &cells).expect("built");
        assert_eq!(sidecars.len(), 128);
        for (i, sidecar) in sidecars.iter().enumerate() {
            let DataColumnSidecar::Fulu(s) = sidecar else {
                panic!("the tests make Fulu sidecars");
            };
            assert_eq!(s.index, i as u64);
            assert_eq!(s.column.len(), 2);
            assert_eq!(s.signed_block_header, block.signed_block_header());
            assert_eq!(
                s.signed_block_header.message.body_root,
                block.body_root(),
                "the header commits to the body"
            );
            assert!(
                verify_data_column_sidecar_inclusion_proof(sidecar),
                "column {i}"
            );
        }
        assert!(kzg_valid(&sidecars));
    }

    #[test]
    fn a_sidecar_whose_commitments_or_header_changed_fails_its_inclusion_proof() {
        let (block, cells) = block_with_blobs(1, 7);
        let sidecars = get_data_column_sidecars_from_block(&block, &cells).expect("built");

        let mut other_commitments = sidecars[3].clone();
        let DataColumnSidecar::Fulu(s) = &mut other_commitments else {
            panic!("the tests make Fulu sidecars");
        };
        s.kzg_commitments[0] = KZGCommitment::repeat_byte(0xc0);
        assert!(!verify_data_column_sidecar_inclusion_proof(
            &other_commitments
        ));

        let mut other_body = sidecars[3].clone();
        let DataColumnSidecar::Fulu(s) = &mut other_body else {
            panic!("the tests make Fulu sidecars");
        };
        s.signed_block_header.message.body_root = types::Root::repeat_byte(1);
        assert!(!verify_data_column_sidecar_inclusion_proof(&other_body));

        let mut other_branch = sidecars[3].clone();
        let DataColumnSidecar::Fulu(s) = &mut other_branch else {
            panic!("the tests make Fulu sidecars");
        };
        s.kzg_commitments_inclusion_proof[2] = Bytes32::repeat_byte(2);
        assert!(!verify_data_column_sidecar_inclusion_proof(&other_branch));
    }

    #[test]
    fn cells_of_another_blob_fail_kzg() {
        let (block, mut cells) = block_with_blobs(2, 7);
        cells.swap(0, 1);
        let sidecars = get_data_column_sidecars_from_block(&block, &cells).expect("built");
        // The inclusion proof holds (commitments unchanged); the cell proofs do not.
        assert!(verify_data_column_sidecar_inclusion_proof(&sidecars[0]));
        assert!(!kzg_valid(&sidecars[..4]));
    }

    #[test]
    fn a_cell_count_that_differs_from_the_commitments_is_refused() {
        let (block, cells) = block_with_blobs(2, 7);
        assert_eq!(
            get_data_column_sidecars_from_block(&block, &cells[..1]),
            Err(DataColumnSidecarError::BlobCountMismatch {
                commitments: 2,
                blobs: 1
            })
        );
        let SignedBeaconBlock::Fulu(inner) = block else {
            unreachable!("built as Fulu")
        };
        let electra = SignedBeaconBlock::Electra(inner);
        assert_eq!(
            get_data_column_sidecars_from_block(&electra, &cells),
            Err(DataColumnSidecarError::NotFulu(ForkName::Electra))
        );
    }
}
