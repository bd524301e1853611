//! The Fulu data-availability hook of `on_block`: a block is imported only once the column
//! sidecars sampled for it are valid. The checks it makes of each sidecar
//! ([`verify_data_column_sidecar`], and the KZG proofs of many sidecars in one batch,
//! [`verify_data_column_sidecars`]) are also what gossip and sync run.
//!
//! [spec]: fulu/fork-choice.md#modified-is_data_available

use rayon::ThreadPool;
use types::{ChainSpec, ColumnIndex, DataColumnSidecar, EthSpec, typenum::Unsigned};

/// The column sidecars retrieved for a block (`retrieve_column_sidecars`).
#[derive(Debug, Clone, Copy)]
pub enum Columns<'a, E: EthSpec> {
    /// The sidecars to sample were retrieved (possibly none: the spec's `all([])` holds).
    Retrieved(&'a [DataColumnSidecar<E>]),
    /// They could not be retrieved (not yet received): the block is not importable yet.
    Missing,
}

/// Why a data column sidecar is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SidecarError {
    /// `sidecar.index >= NUMBER_OF_COLUMNS`.
    #[error("column index {index} out of range")]
    IndexOutOfRange {
        /// The sidecar's index.
        index: ColumnIndex,
    },
    /// A sidecar of a block without blobs.
    #[error("column {index}: no commitments")]
    NoCommitments {
        /// The sidecar's index.
        index: ColumnIndex,
    },
    /// More commitments than the epoch's blob limit.
    #[error("column {index}: {commitments} commitments, more than the epoch's maximum of {max}")]
    TooManyCommitments {
        /// The sidecar's index.
        index: ColumnIndex,
        /// Commitments in the sidecar.
        commitments: usize,
        /// `get_blob_parameters(epoch).max_blobs_per_block`.
        max: u64,
    },
    /// Cells, commitments and proofs are not one per blob.
    #[error("column {index}: {cells} cells, {commitments} commitments, {proofs} proofs")]
    LengthMismatch {
        /// The sidecar's index.
        index: ColumnIndex,
        /// Cells in the column.
        cells: usize,
        /// Commitments.
        commitments: usize,
        /// Proofs.
        proofs: usize,
    },
    /// A cell, commitment or proof that fails KZG verification (or does not decode).
    #[error("column {index}: {error}")]
    Kzg {
        /// The sidecar's index.
        index: ColumnIndex,
        /// What the KZG library found.
        error: kzg::Error,
    },
}

/// `verify_data_column_sidecar(sidecar)`: index in range, at least one and at most the
/// epoch's maximum of commitments, and as many cells and proofs as commitments.
///
/// [spec]: fulu/p2p-interface.md#verify_data_column_sidecar
pub fn verify_data_column_sidecar<E: EthSpec>(
    sidecar: &DataColumnSidecar<E>,
    spec: &ChainSpec,
) -> Result<(), SidecarError> {
    let DataColumnSidecar::Fulu(sidecar) = sidecar;
    let index = sidecar.index;
    if index >= E::NumberOfColumns::to_u64() {
        return Err(SidecarError::IndexOutOfRange { index });
    }
    let commitments = sidecar.kzg_commitments.len();
    if commitments == 0 {
        return Err(SidecarError::NoCommitments { index });
    }
    let epoch = sidecar.signed_block_header.message.slot / E::slots_per_epoch();
    let max = spec.get_blob_parameters(epoch).max_blobs_per_block;
    if commitments as u64 > max {
        return Err(SidecarError::TooManyCommitments {
            index,
            commitments,
            max,
        });
    }
    if sidecar.column.len() != commitments || sidecar.kzg_proofs.len() != commitments {
        return Err(SidecarError::LengthMismatch {
            index,
            cells: sidecar.column.len(),
            commitments,
            proofs: sidecar.kzg_proofs.len(),
        });
    }
    Ok(())
}

/// One sidecar in the KZG crate's types.
struct KzgColumn {
    index: ColumnIndex,
    cells: Vec<kzg::Cell>,
    commitments: Vec<kzg::KzgCommitment>,
    proofs: Vec<kzg::KzgProof>,
}

fn kzg_column<E: EthSpec>(sidecar: &DataColumnSidecar<E>) -> Result<KzgColumn, SidecarError> {
    let DataColumnSidecar::Fulu(sidecar) = sidecar;
    let cells = sidecar
        .column
        .iter()
        .map(|cell| kzg::cell_from_bytes(&cell[..]))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| SidecarError::Kzg {
            index: sidecar.index,
            error,
        })?;
    Ok(KzgColumn {
        index: sidecar.index,
        cells,
        commitments: sidecar
            .kzg_commitments
            .iter()
            .map(|c| kzg::KzgCommitment(c.0))
            .collect(),
        proofs: sidecar
            .kzg_proofs
            .iter()
            .map(|p| kzg::KzgProof(p.0))
            .collect(),
    })
}

/// [`verify_data_column_sidecar`] of each sidecar, then `verify_data_column_sidecar_kzg_proofs`
/// of all that pass as one batch on `pool`. `Ok` when every sidecar holds, otherwise every
/// failing one as `(position in sidecars, why)`, sorted by position: sidecars of several blocks
/// may share a column index, and the position names the one (and so the peer) at fault.
///
/// [spec]: fulu/p2p-interface.md#verify_data_column_sidecar_kzg_proofs
pub fn verify_data_column_sidecars<E: EthSpec>(
    sidecars: &[&DataColumnSidecar<E>],
    spec: &ChainSpec,
    pool: &ThreadPool,
) -> Result<(), Vec<(usize, SidecarError)>> {
    let mut failures = Vec::new();
    let mut positions = Vec::with_capacity(sidecars.len());
    let mut columns = Vec::with_capacity(sidecars.len());
    for (position, sidecar) in sidecars.iter().enumerate() {
        match verify_data_column_sidecar(sidecar, spec).and_then(|()| kzg_column(sidecar)) {
            Ok(column) => {
                positions.push(position);
                columns.push(column);
            }
            Err(e) => failures.push((position, e)),
        }
    }
    let refs: Vec<kzg::ColumnRef<'_>> = columns
        .iter()
        .map(|c| kzg::ColumnRef {
            index: c.index,
            cells: &c.cells,
            commitments: &c.commitments,
            proofs: &c.proofs,
        })
        .collect();
    if let Err(bad) = kzg::verify_data_column_sidecar_kzg_proofs_batch(&refs, pool) {
        failures.extend(bad.into_iter().map(|(i, error)| {
            (
                positions[i],
                SidecarError::Kzg {
                    index: refs[i].index,
                    error,
                },
            )
        }));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        failures.sort_by_key(|(position, _)| *position);
        Err(failures)
    }
}

/// `is_data_available(beacon_block_root)` over the retrieved sidecars: each passes
/// [`verify_data_column_sidecar`] and `verify_data_column_sidecar_kzg_proofs` (every column's
/// cell proofs verified as one batch on `pool`).
///
/// [spec]: fulu/fork-choice.md#modified-is_data_available
pub fn is_data_available<E: EthSpec>(
    columns: Columns<'_, E>,
    spec: &ChainSpec,
    pool: &ThreadPool,
) -> Result<(), String> {
    let sidecars = match columns {
        Columns::Retrieved(sidecars) => sidecars,
        Columns::Missing => return Err("column sidecars not retrieved".into()),
    };
    let sidecars: Vec<&DataColumnSidecar<E>> = sidecars.iter().collect();
    verify_data_column_sidecars(&sidecars, spec, pool).map_err(|failures| {
        format!(
            "{} column sidecar(s) invalid, first: {}",
            failures.len(),
            failures[0].1
        )
    })
}
