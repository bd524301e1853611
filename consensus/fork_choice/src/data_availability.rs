//! The Fulu data-availability hook of `on_block`: a block is imported only once the column
//! sidecars sampled for it are valid.
//!
//! [spec]: fulu/fork-choice.md#modified-is_data_available

use rayon::ThreadPool;
use types::{ChainSpec, DataColumnSidecar, EthSpec, typenum::Unsigned};

/// The column sidecars retrieved for a block (`retrieve_column_sidecars`).
#[derive(Debug, Clone, Copy)]
pub enum Columns<'a, E: EthSpec> {
    /// The sidecars to sample were retrieved (possibly none: the spec's `all([])` holds).
    Retrieved(&'a [DataColumnSidecar<E>]),
    /// They could not be retrieved (not yet received): the block is not importable yet.
    Missing,
}

/// `verify_data_column_sidecar(sidecar)`: index in range, at least one and at most the
/// epoch's maximum of commitments, and as many cells and proofs as commitments.
///
/// [spec]: fulu/p2p-interface.md#verify_data_column_sidecar
pub fn verify_data_column_sidecar<E: EthSpec>(
    sidecar: &DataColumnSidecar<E>,
    spec: &ChainSpec,
) -> Result<(), String> {
    let DataColumnSidecar::Fulu(sidecar) = sidecar;
    if sidecar.index >= E::NumberOfColumns::to_u64() {
        return Err(format!("column index {} out of range", sidecar.index));
    }
    let commitments = sidecar.kzg_commitments.len();
    if commitments == 0 {
        return Err(format!("column {}: no commitments", sidecar.index));
    }
    let epoch = sidecar.signed_block_header.message.slot / E::slots_per_epoch();
    let max = spec.get_blob_parameters(epoch).max_blobs_per_block;
    if commitments as u64 > max {
        return Err(format!(
            "column {}: {commitments} commitments, more than {max}",
            sidecar.index
        ));
    }
    if sidecar.column.len() != commitments || sidecar.kzg_proofs.len() != commitments {
        return Err(format!(
            "column {}: {} cells, {commitments} commitments, {} proofs",
            sidecar.index,
            sidecar.column.len(),
            sidecar.kzg_proofs.len()
        ));
    }
    Ok(())
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
    for sidecar in sidecars {
        verify_data_column_sidecar(sidecar, spec)?;
    }
    // Owned copies in the KZG crate's byte types, borrowed by the batch below.
    let mut owned = Vec::with_capacity(sidecars.len());
    for sidecar in sidecars {
        let DataColumnSidecar::Fulu(sidecar) = sidecar;
        let cells = sidecar
            .column
            .iter()
            .map(|cell| kzg::cell_from_bytes(&cell[..]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("column {}: {e}", sidecar.index))?;
        let commitments: Vec<kzg::KzgCommitment> = sidecar
            .kzg_commitments
            .iter()
            .map(|c| kzg::KzgCommitment(c.0))
            .collect();
        let proofs: Vec<kzg::KzgProof> = sidecar
            .kzg_proofs
            .iter()
            .map(|p| kzg::KzgProof(p.0))
            .collect();
        owned.push((sidecar.index, cells, commitments, proofs));
    }
    let refs: Vec<kzg::ColumnRef<'_>> = owned
        .iter()
        .map(|(index, cells, commitments, proofs)| kzg::ColumnRef {
            index: *index,
            cells,
            commitments,
            proofs,
        })
        .collect();
    kzg::verify_data_column_sidecar_kzg_proofs_batch(&refs, pool).map_err(|failures| {
        let (position, error) = &failures[0];
        format!(
            "{} column(s) fail KZG verification, first column {}: {error}",
            failures.len(),
            refs[*position].index
        )
    })
}
