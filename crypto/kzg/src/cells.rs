//! EIP-7594 (PeerDAS): cells of the extended blob, their proofs, verification and recovery.

use crate::error::{self, Error};
use crate::types::{Blob, CELLS_PER_EXT_BLOB, Cell, KzgCommitment, KzgProof};
use crate::{c_commitment, c_proof, from_c_proof, trusted_setup};

/// The cells of one extended blob with a proof for each, in cell-index order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellsAndProofs {
    /// `CELLS_PER_EXT_BLOB` cells.
    pub cells: Box<[Cell; CELLS_PER_EXT_BLOB]>,
    /// One proof per cell.
    pub proofs: Box<[KzgProof; CELLS_PER_EXT_BLOB]>,
}

impl CellsAndProofs {
    fn from_c(
        cells: Box<[Cell; CELLS_PER_EXT_BLOB]>,
        proofs: &[c_kzg::KzgProof; CELLS_PER_EXT_BLOB],
    ) -> Self {
        let proofs: Box<[KzgProof; CELLS_PER_EXT_BLOB]> =
            Box::new(proofs.map(|p| from_c_proof(&p)));
        Self { cells, proofs }
    }
}

/// `compute_cells(blob)`: the `CELLS_PER_EXT_BLOB` cells of the extended blob.
///
/// [spec]: fulu/polynomial-commitments-sampling.md#compute_cells
pub fn compute_cells(blob: &Blob) -> Result<Box<[Cell; CELLS_PER_EXT_BLOB]>, Error> {
    trusted_setup()
        .compute_cells(blob)
        .map_err(|e| error::diagnose("compute_cells", e, |d| d.blob("blob", blob)))
}

/// `compute_cells_and_kzg_proofs(blob)`: the cells and a proof for each.
///
/// [spec]: fulu/polynomial-commitments-sampling.md#compute_cells_and_kzg_proofs
pub fn compute_cells_and_kzg_proofs(blob: &Blob) -> Result<CellsAndProofs, Error> {
    trusted_setup()
        .compute_cells_and_kzg_proofs(blob)
        .map(|(cells, proofs)| CellsAndProofs::from_c(cells, &proofs))
        .map_err(|e| error::diagnose("compute_cells_and_kzg_proofs", e, |d| d.blob("blob", blob)))
}

/// `verify_cell_kzg_proof_batch(commitments, cell_indices, cells, proofs)`: the four lists pair
/// up element by element (cell `i` of the blob committed to by `commitments[i]`). An empty batch
/// holds, as in the spec.
///
/// [spec]: fulu/polynomial-commitments-sampling.md#verify_cell_kzg_proof_batch
pub fn verify_cell_kzg_proof_batch(
    commitments: &[KzgCommitment],
    cell_indices: &[u64],
    cells: &[Cell],
    proofs: &[KzgProof],
) -> Result<bool, Error> {
    error::same_length("cells", cells.len(), "commitments", commitments.len())?;
    error::same_length("cells", cells.len(), "cell indices", cell_indices.len())?;
    error::same_length("cells", cells.len(), "proofs", proofs.len())?;
    let c_commitments: Vec<_> = commitments.iter().map(c_commitment).collect();
    let c_proofs: Vec<_> = proofs.iter().map(c_proof).collect();
    verify_c_batch(&c_commitments, cell_indices, cells, &c_proofs).map_err(|e| {
        error::diagnose("verify_cell_kzg_proof_batch", e, |d| {
            d.cell_indices(cell_indices)?;
            d.cells("cells", cells)?;
            for (i, c) in commitments.iter().enumerate() {
                d.point("commitments", i, &c.0)?;
            }
            for (i, p) in proofs.iter().enumerate() {
                d.point("proofs", i, &p.0)?;
            }
            Ok(())
        })
    })
}

/// The c-kzg call, for input whose lengths are already known to agree.
pub(crate) fn verify_c_batch(
    commitments: &[c_kzg::Bytes48],
    cell_indices: &[u64],
    cells: &[Cell],
    proofs: &[c_kzg::Bytes48],
) -> Result<bool, c_kzg::Error> {
    trusted_setup().verify_cell_kzg_proof_batch(commitments, cell_indices, cells, proofs)
}

/// `recover_cells_and_kzg_proofs(cell_indices, cells)`: all cells and proofs of a blob from at
/// least half of its cells, given in strictly ascending index order.
///
/// Costs hundreds of milliseconds per blob: schedule it, never on the import path.
///
/// [spec]: fulu/polynomial-commitments-sampling.md#recover_cells_and_kzg_proofs
pub fn recover_cells_and_kzg_proofs(
    cell_indices: &[u64],
    cells: &[Cell],
) -> Result<CellsAndProofs, Error> {
    error::same_length("cell indices", cell_indices.len(), "cells", cells.len())?;
    let (min, max) = (CELLS_PER_EXT_BLOB / 2, CELLS_PER_EXT_BLOB);
    if !(min..=max).contains(&cells.len()) {
        return Err(Error::WrongCellCount {
            min,
            max,
            got: cells.len(),
        });
    }
    error::Diagnosis.cell_indices(cell_indices)?;
    for pair in cell_indices.windows(2) {
        if let [previous, index] = *pair {
            if index == previous {
                return Err(Error::DuplicateCellIndex { index });
            }
            if index < previous {
                return Err(Error::UnorderedCellIndex { index });
            }
        }
    }
    trusted_setup()
        .recover_cells_and_kzg_proofs(cell_indices, cells)
        .map(|(cells, proofs)| CellsAndProofs::from_c(cells, &proofs))
        .map_err(|e| {
            error::diagnose("recover_cells_and_kzg_proofs", e, |d| {
                d.cells("cells", cells)
            })
        })
}
