//! Verifying the KZG proofs of PeerDAS data columns: the spec's per-sidecar
//! [`verify_data_column_sidecar_kzg_proofs`], and its batched form
//! [`verify_data_column_sidecar_kzg_proofs_batch`] (one batch split across the pool the caller
//! names, and on failure the index of every column that fails).
//!
//! [spec]: fulu/p2p-interface.md#verify_data_column_sidecar_kzg_proofs

use bls::Parallelism;

use crate::cells::verify_c_batch;
use crate::error::{self, Error};
use crate::types::{CELLS_PER_EXT_BLOB, Cell, KzgCommitment, KzgProof};
use crate::{c_commitment, c_proof};

/// Chunks per pool thread. More, smaller chunks cost little in batching (the per-cell cost of a
/// 16-column batch is within a few percent of a 128-column one) and shrink what must be
/// re-verified column by column when a chunk fails: with 4 per thread, one bad column among 128
/// costs about 1.3–1.6 × a good batch instead of 2–3 × (see README.md).
const CHUNKS_PER_THREAD: usize = 4;

/// The fewest columns a chunk holds (unless the batch is smaller): below it a batch's fixed
/// cost (aggregating the commitments, the final pairing check) outweighs its cells. Split into
/// the chunks above, 8 gossip batches of 16 columns were 64 calls of 2 columns and cost 1.8 ×
/// one 128-column batch in CPU (`beacon_chain`'s `availability` bench).
const MIN_CHUNK_COLUMNS: usize = 16;

/// One data column as the chain holds it, borrowed: cell `i` of blob `i`, with that blob's
/// commitment and the cell's proof.
#[derive(Debug, Clone, Copy)]
pub struct ColumnRef<'a> {
    /// The column index (the cell index of every cell in the column).
    pub index: u64,
    /// One cell per blob.
    pub cells: &'a [Cell],
    /// The block's blob commitments, one per blob.
    pub commitments: &'a [KzgCommitment],
    /// One proof per cell.
    pub proofs: &'a [KzgProof],
}

impl ColumnRef<'_> {
    /// The checks that need no cryptography: a column index in range, a non-empty column, and as
    /// many commitments and proofs as cells (a short list must never be zipped into a shorter
    /// batch).
    fn check_shape(&self) -> Result<(), Error> {
        if self.index >= CELLS_PER_EXT_BLOB as u64 {
            return Err(Error::CellIndexOutOfRange { index: self.index });
        }
        if self.cells.is_empty() {
            return Err(Error::Empty { what: "cells" });
        }
        error::same_length(
            "cells",
            self.cells.len(),
            "commitments",
            self.commitments.len(),
        )?;
        error::same_length("cells", self.cells.len(), "proofs", self.proofs.len())
    }
}

/// `verify_data_column_sidecar_kzg_proofs(sidecar)`: the column index is in range, there are as
/// many commitments and proofs as cells, and every cell's proof holds (`Ok(false)` when a
/// well-formed column's proofs do not).
///
/// [spec]: fulu/p2p-interface.md#verify_data_column_sidecar_kzg_proofs
pub fn verify_data_column_sidecar_kzg_proofs(column: &ColumnRef<'_>) -> Result<bool, Error> {
    column.check_shape()?;
    verify_columns(&[column])
}

/// The batched form of [`verify_data_column_sidecar_kzg_proofs`]: verifies the KZG proofs of every
/// cell of `columns`, in parallel as `parallelism` says (a `&ThreadPool`: on that pool, whoever
/// calls; never a pool or thread of its own); `Ok` when all hold, otherwise every failing column as
/// `(position in columns, why)`, sorted by position. Positions, not column indices, name the
/// failures, since a batch may hold columns of several blocks with the same index.
///
/// Columns whose lengths disagree are reported without being verified; the rest are verified as
/// one batch split into chunks across the pool, and only the columns of failing chunks are then
/// verified one by one (in parallel) to name the bad ones.
///
/// Never under the fork-choice lock (a debug build panics: [`Parallelism::run`]).
///
/// [spec]: fulu/p2p-interface.md#verify_data_column_sidecar_kzg_proofs
#[track_caller]
pub fn verify_data_column_sidecar_kzg_proofs_batch<'a>(
    columns: &[ColumnRef<'_>],
    parallelism: impl Into<Parallelism<'a>>,
) -> Result<(), Vec<(usize, Error)>> {
    let parallelism = parallelism.into();
    let mut failures = Vec::new();
    let mut well_formed = Vec::with_capacity(columns.len());
    for (position, column) in columns.iter().enumerate() {
        match column.check_shape() {
            Ok(()) => well_formed.push((position, column)),
            Err(e) => failures.push((position, e)),
        }
    }

    if !well_formed.is_empty() {
        let chunk_len = well_formed
            .len()
            .div_ceil(parallelism.threads() * CHUNKS_PER_THREAD)
            .max(MIN_CHUNK_COLUMNS);
        let chunks: Vec<&[(usize, &ColumnRef<'_>)]> = well_formed.chunks(chunk_len).collect();
        // The columns of a failing chunk, one by one: on the section's pool when it has one
        // (inside it, the current pool), else on the caller.
        let inner = if parallelism.is_parallel() {
            Parallelism::CurrentPool
        } else {
            Parallelism::Sequential
        };
        let bad: Vec<Vec<(usize, Error)>> = parallelism.map_collect(chunks, |chunk| {
            let refs: Vec<&ColumnRef<'_>> = chunk.iter().map(|(_, c)| *c).collect();
            match verify_columns(&refs) {
                Ok(true) => Vec::new(),
                // The chunk failed: verify its columns one by one to name the bad ones.
                _ => {
                    let verdicts: Vec<Option<(usize, Error)>> =
                        inner.map_collect(chunk, |&(position, column)| {
                            match verify_data_column_sidecar_kzg_proofs(column) {
                                Ok(true) => None,
                                Ok(false) => Some((position, Error::InvalidProof)),
                                Err(e) => Some((position, e)),
                            }
                        });
                    verdicts.into_iter().flatten().collect()
                }
            }
        });
        failures.extend(bad.into_iter().flatten());
    }

    if failures.is_empty() {
        Ok(())
    } else {
        failures.sort_by_key(|(position, _)| *position);
        Err(failures)
    }
}

/// One `verify_cell_kzg_proof_batch` over the cells of `columns`, whose shapes have been checked.
fn verify_columns(columns: &[&ColumnRef<'_>]) -> Result<bool, Error> {
    let cell_count = columns.iter().map(|c| c.cells.len()).sum();
    let mut commitments = Vec::with_capacity(cell_count);
    let mut cell_indices = Vec::with_capacity(cell_count);
    let mut cells = Vec::with_capacity(cell_count);
    let mut proofs = Vec::with_capacity(cell_count);
    for column in columns {
        commitments.extend(column.commitments.iter().map(c_commitment));
        cell_indices.extend(std::iter::repeat_n(column.index, column.cells.len()));
        cells.extend_from_slice(column.cells);
        proofs.extend(column.proofs.iter().map(c_proof));
    }
    verify_c_batch(&commitments, &cell_indices, &cells, &proofs).map_err(|e| {
        error::diagnose("verify_cell_kzg_proof_batch", e, |d| {
            for column in columns {
                d.cells("cells", column.cells)?;
                for (i, c) in column.commitments.iter().enumerate() {
                    d.point("commitments", i, &c.0)?;
                }
                for (i, p) in column.proofs.iter().enumerate() {
                    d.point("proofs", i, &p.0)?;
                }
            }
            Ok(())
        })
    })
}
