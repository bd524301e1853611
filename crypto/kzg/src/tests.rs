use std::sync::LazyLock;

use super::*;

/// A blob of canonical field elements (top byte of each zero) filled from a counter.
fn blob(seed: u8) -> Box<Blob> {
    let mut bytes = vec![0u8; BYTES_PER_BLOB];
    for (i, fe) in bytes.chunks_exact_mut(BYTES_PER_FIELD_ELEMENT).enumerate() {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(31) ^ (j as u8).wrapping_mul(7) ^ seed;
        }
    }
    blob_from_bytes(&bytes).expect("BYTES_PER_BLOB bytes")
}

/// Two blobs with their commitments, cells and proofs (computing them costs ~0.3 s a blob).
struct Fixture {
    commitments: Vec<KzgCommitment>,
    cells_and_proofs: Vec<CellsAndProofs>,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let blobs = [blob(1), blob(2)];
    Fixture {
        commitments: blobs
            .iter()
            .map(|b| blob_to_kzg_commitment(b).expect("valid blob"))
            .collect(),
        cells_and_proofs: blobs
            .iter()
            .map(|b| compute_cells_and_kzg_proofs(b).expect("valid blob"))
            .collect(),
    }
});

/// Column `j` of the fixture, owned.
#[derive(Clone)]
struct Column {
    index: u64,
    cells: Vec<Cell>,
    commitments: Vec<KzgCommitment>,
    proofs: Vec<KzgProof>,
}

impl Column {
    fn as_ref(&self) -> ColumnRef<'_> {
        ColumnRef {
            index: self.index,
            cells: &self.cells,
            commitments: &self.commitments,
            proofs: &self.proofs,
        }
    }
}

fn columns() -> Vec<Column> {
    let f = &*FIXTURE;
    (0..CELLS_PER_EXT_BLOB)
        .map(|j| Column {
            index: j as u64,
            cells: f.cells_and_proofs.iter().map(|cp| cp.cells[j]).collect(),
            commitments: f.commitments.clone(),
            proofs: f.cells_and_proofs.iter().map(|cp| cp.proofs[j]).collect(),
        })
        .collect()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
}

fn verify(columns: &[Column]) -> Result<(), Vec<(usize, Error)>> {
    let refs: Vec<_> = columns.iter().map(Column::as_ref).collect();
    verify_data_column_sidecar_kzg_proofs_batch(&refs, &pool(2))
}

const INFINITY: [u8; 48] = {
    let mut b = [0u8; 48];
    b[0] = 0xc0;
    b
};

#[test]
fn blob_proofs_round_trip() {
    let f = &*FIXTURE;
    let b = blob(1);
    let proof = compute_blob_kzg_proof(&b, &f.commitments[0]).expect("valid blob");
    assert_eq!(
        verify_blob_kzg_proof(&b, &f.commitments[0], &proof),
        Ok(true)
    );
    assert_eq!(
        verify_blob_kzg_proof(&b, &f.commitments[1], &proof),
        Ok(false)
    );
    let blobs = [*blob(1), *blob(2)];
    let proofs: Vec<_> = blobs
        .iter()
        .zip(&f.commitments)
        .map(|(b, c)| compute_blob_kzg_proof(b, c).expect("valid blob"))
        .collect();
    assert_eq!(
        verify_blob_kzg_proof_batch(&blobs, &f.commitments, &proofs),
        Ok(true)
    );

    let z = Bytes32::new([3; 32]);
    let (proof, y) = compute_kzg_proof(&b, &z).expect("valid input");
    assert_eq!(
        verify_kzg_proof(&f.commitments[0], &z, &y, &proof),
        Ok(true)
    );
}

#[test]
fn recovers_all_cells_from_half() {
    let cp = &FIXTURE.cells_and_proofs[0];
    let indices: Vec<u64> = (0..CELLS_PER_EXT_BLOB as u64).step_by(2).collect();
    let cells: Vec<Cell> = indices.iter().map(|&i| cp.cells[i as usize]).collect();
    assert_eq!(
        recover_cells_and_kzg_proofs(&indices, &cells).as_ref(),
        Ok(cp)
    );
    assert_eq!(
        compute_cells(&blob(1)).expect("valid blob"),
        cp.cells,
        "compute_cells agrees with compute_cells_and_kzg_proofs"
    );
}

#[test]
fn rejects_wrong_lengths() {
    assert_eq!(
        blob_from_bytes(&[0; 100]).err(),
        Some(Error::InvalidLength {
            what: "blob",
            expected: BYTES_PER_BLOB,
            got: 100
        })
    );
    assert!(matches!(
        cell_from_bytes(&[0; BYTES_PER_CELL + 1]),
        Err(Error::InvalidLength { what: "cell", .. })
    ));
    assert!(matches!(
        KzgProof::from_slice(&[0; 47]),
        Err(Error::InvalidLength { what: "proof", .. })
    ));
    assert!(matches!(
        KzgCommitment::from_slice(&[0; 49]),
        Err(Error::InvalidLength { .. })
    ));
    assert!(matches!(
        bytes32_from_bytes(&[0; 31]),
        Err(Error::InvalidLength { .. })
    ));
    let f = &*FIXTURE;
    let cp = &f.cells_and_proofs[0];
    assert!(matches!(
        verify_cell_kzg_proof_batch(
            &f.commitments[..1],
            &[0, 1],
            &cp.cells[..2],
            &cp.proofs[..2]
        ),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        verify_blob_kzg_proof_batch(&[*blob(1)], &[], &[]),
        Err(Error::LengthMismatch { .. })
    ));
}

#[test]
fn rejects_non_canonical_field_elements() {
    let mut bytes = blob(1).to_vec();
    bytes[5 * 32..6 * 32].copy_from_slice(&[0xff; 32]);
    let bad = blob_from_bytes(&bytes).expect("right length");
    assert_eq!(
        blob_to_kzg_commitment(&bad),
        Err(Error::NonCanonicalFieldElement {
            what: "blob",
            index: 5
        })
    );
    let c = FIXTURE.commitments[0];
    let proof = KzgProof(INFINITY);
    let big = Bytes32::new([0xff; 32]);
    let zero = Bytes32::new([0; 32]);
    assert_eq!(
        verify_kzg_proof(&c, &big, &zero, &proof),
        Err(Error::NonCanonicalFieldElement {
            what: "z",
            index: 0
        })
    );
    assert_eq!(
        verify_kzg_proof(&c, &zero, &big, &proof),
        Err(Error::NonCanonicalFieldElement {
            what: "y",
            index: 0
        })
    );
}

#[test]
fn rejects_points_off_the_curve_and_outside_the_subgroup() {
    let zero = Bytes32::new([0; 32]);
    let mut reasons = Vec::new();
    for x in 0..=255u8 {
        let mut bytes = [0u8; 48];
        bytes[0] = 0x80;
        bytes[47] = x;
        match verify_kzg_proof(&KzgCommitment(bytes), &zero, &zero, &KzgProof(INFINITY)) {
            Err(Error::InvalidPoint {
                what: "commitment",
                index: 0,
                reason,
            }) => reasons.push(reason),
            other => panic!("x = {x}: expected an invalid point, got {other:?}"),
        }
    }
    assert!(reasons.contains(&PointError::NotOnCurve));
    assert!(reasons.contains(&PointError::NotInSubgroup));
}

#[test]
fn rejects_bad_encodings_and_accepts_infinity() {
    let zero = Bytes32::new([0; 32]);
    let mut stray_bit = INFINITY;
    stray_bit[47] = 1;
    for bytes in [[0u8; 48], stray_bit, [0xff; 48]] {
        assert_eq!(
            verify_kzg_proof(&KzgCommitment(INFINITY), &zero, &zero, &KzgProof(bytes)),
            Err(Error::InvalidPoint {
                what: "proof",
                index: 0,
                reason: PointError::BadEncoding
            })
        );
    }
    // The zero polynomial commits to infinity, and infinity proves p(0) = 0 for it.
    let zero_blob = blob_from_bytes(&[0; BYTES_PER_BLOB]).expect("right length");
    assert_eq!(
        blob_to_kzg_commitment(&zero_blob),
        Ok(KzgCommitment(INFINITY))
    );
    assert_eq!(
        verify_kzg_proof(&KzgCommitment(INFINITY), &zero, &zero, &KzgProof(INFINITY)),
        Ok(true)
    );
}

#[test]
fn handles_empty_inputs() {
    // The spec accepts empty batches.
    assert_eq!(verify_blob_kzg_proof_batch(&[], &[], &[]), Ok(true));
    assert_eq!(verify_cell_kzg_proof_batch(&[], &[], &[], &[]), Ok(true));
    assert_eq!(
        recover_cells_and_kzg_proofs(&[], &[]),
        Err(Error::WrongCellCount {
            min: 64,
            max: 128,
            got: 0
        })
    );
    assert_eq!(
        verify_data_column_sidecar_kzg_proofs_batch(&[], &pool(1)),
        Ok(())
    );
    let mut cols = columns();
    let empty = &mut cols[9];
    empty.cells.clear();
    empty.commitments.clear();
    empty.proofs.clear();
    assert_eq!(
        verify(&cols),
        Err(vec![(9, Error::Empty { what: "cells" })])
    );
}

#[test]
fn rejects_bad_cell_indices() {
    let f = &*FIXTURE;
    let cp = &f.cells_and_proofs[0];
    assert_eq!(
        verify_cell_kzg_proof_batch(&f.commitments[..1], &[128], &cp.cells[..1], &cp.proofs[..1]),
        Err(Error::CellIndexOutOfRange { index: 128 })
    );
    let half: Vec<Cell> = cp.cells[..64].to_vec();
    let mut indices: Vec<u64> = (0..64).collect();
    indices.swap(3, 4);
    assert_eq!(
        recover_cells_and_kzg_proofs(&indices, &half),
        Err(Error::UnorderedCellIndex { index: 3 })
    );
    indices.swap(3, 4);
    indices[4] = 3;
    assert_eq!(
        recover_cells_and_kzg_proofs(&indices, &half),
        Err(Error::DuplicateCellIndex { index: 3 })
    );
    let mut cols = columns();
    cols[0].index = 200;
    assert_eq!(
        verify(&cols),
        Err(vec![(0, Error::CellIndexOutOfRange { index: 200 })])
    );
}

#[test]
fn accepts_good_columns() {
    assert_eq!(verify(&columns()), Ok(()));
    let cols = columns();
    let refs: Vec<_> = cols.iter().map(Column::as_ref).collect();
    assert_eq!(
        verify_data_column_sidecar_kzg_proofs_batch(&refs, &pool(1)),
        Ok(())
    );
}

#[test]
fn verifies_one_sidecar_as_the_spec_does() {
    let mut cols = columns();
    assert_eq!(
        verify_data_column_sidecar_kzg_proofs(&cols[7].as_ref()),
        Ok(true)
    );
    cols[7].proofs[0] = cols[8].proofs[0];
    assert_eq!(
        verify_data_column_sidecar_kzg_proofs(&cols[7].as_ref()),
        Ok(false)
    );
    cols[9].proofs.truncate(1);
    assert_eq!(
        verify_data_column_sidecar_kzg_proofs(&cols[9].as_ref()),
        Err(Error::LengthMismatch {
            left: "cells",
            left_len: 2,
            right: "proofs",
            right_len: 1
        })
    );
    cols[10].index = 128;
    assert_eq!(
        verify_data_column_sidecar_kzg_proofs(&cols[10].as_ref()),
        Err(Error::CellIndexOutOfRange { index: 128 })
    );
}

#[test]
fn reports_exactly_the_column_with_a_bad_proof() {
    let mut cols = columns();
    cols[77].proofs[1] = cols[78].proofs[1];
    assert_eq!(verify(&cols), Err(vec![(77, Error::InvalidProof)]));
}

#[test]
fn rejects_column_with_mismatched_proof_count_and_still_verifies_the_rest() {
    let mut cols = columns();
    // A short proof list must not shrink the batch to the verified half.
    cols[5].proofs.truncate(1);
    cols[6].commitments.push(FIXTURE.commitments[0]);
    cols[100].cells[0] = cols[101].cells[0];
    assert_eq!(
        verify(&cols),
        Err(vec![
            (
                5,
                Error::LengthMismatch {
                    left: "cells",
                    left_len: 2,
                    right: "proofs",
                    right_len: 1
                }
            ),
            (
                6,
                Error::LengthMismatch {
                    left: "cells",
                    left_len: 2,
                    right: "commitments",
                    right_len: 3
                }
            ),
            (100, Error::InvalidProof),
        ])
    );
}

#[test]
fn reports_a_column_with_an_invalid_point() {
    let mut cols = columns();
    cols[3].proofs[0] = KzgProof([0; 48]);
    assert_eq!(
        verify(&cols),
        Err(vec![(
            3,
            Error::InvalidPoint {
                what: "proofs",
                index: 0,
                reason: PointError::BadEncoding
            }
        )])
    );
}

#[test]
fn names_the_bad_one_of_two_columns_with_the_same_index_by_position() {
    // A batch across blocks may hold column 5 of two blocks; only the position tells them apart.
    let cols = columns();
    let good = cols[5].clone();
    let mut bad = cols[5].clone();
    bad.proofs.swap(0, 1);
    assert_eq!(
        verify(&[good.clone(), bad.clone(), good]),
        Err(vec![(1, Error::InvalidProof)])
    );
    assert_eq!(verify(&[bad]), Err(vec![(0, Error::InvalidProof)]));
}
