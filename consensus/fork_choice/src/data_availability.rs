//! The data-availability hook of `on_block`: a block is imported only once its data is
//! available. From Fulu on, the column sidecars sampled for it are valid; the checks it makes of
//! each sidecar ([`verify_data_column_sidecar`], and the KZG proofs of many sidecars in one
//! batch, [`verify_data_column_sidecars`]) are also what gossip and sync run. Before Fulu
//! (Deneb, Electra: EIP-4844), every blob of the block was retrieved with its proof, and the
//! blobs match the block's commitments (`verify_blob_kzg_proof_batch`).
//!
//! [spec]: deneb/fork-choice.md#new-is_data_available,
//! fulu/fork-choice.md#modified-is_data_available

use rayon::ThreadPool;
use types::{
    Blob, ChainSpec, ColumnIndex, DataColumnSidecar, EthSpec, ForkName, KZGCommitment, KZGProof,
    typenum::Unsigned,
};

/// What was retrieved of a block's data: its column sidecars (`retrieve_column_sidecars`, from
/// Fulu on) or its blobs and their proofs (`retrieve_blobs_and_proofs`, Deneb and Electra).
#[derive(Debug, Clone, Copy)]
pub enum Columns<'a, E: EthSpec> {
    /// The sidecars to sample were retrieved (possibly none: the spec's `all([])` holds).
    Retrieved(&'a [DataColumnSidecar<E>]),
    /// `retrieve_blobs_and_proofs(beacon_block_root)` of a Deneb or Electra block, with the
    /// block's `blob_kzg_commitments` [New in Deneb:EIP4844]. Available when there are as many
    /// blobs and proofs as commitments and `verify_blob_kzg_proof_batch` holds (so a block
    /// without commitments is available with no blobs).
    Blobs {
        /// The retrieved blobs, in commitment order.
        blobs: &'a [Blob<E>],
        /// Their KZG proofs.
        proofs: &'a [KZGProof],
        /// `block.body.blob_kzg_commitments`.
        commitments: &'a [KZGCommitment],
    },
    /// They could not be retrieved (not yet received): the block is not importable yet.
    Missing,
}

/// Why the blobs retrieved for a Deneb or Electra block do not make it available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobsError {
    /// Blobs, commitments and proofs are not one per blob.
    #[error("{blobs} blobs, {commitments} commitments, {proofs} proofs")]
    LengthMismatch {
        /// Blobs retrieved.
        blobs: usize,
        /// The block's commitments.
        commitments: usize,
        /// Proofs retrieved.
        proofs: usize,
    },
    /// `verify_blob_kzg_proof_batch` does not hold.
    #[error("the blobs do not match the block's commitments and proofs")]
    InvalidProof,
    /// A blob, commitment or proof that does not decode.
    #[error("{0}")]
    Kzg(kzg::Error),
}

/// The spec's Deneb `is_data_available(beacon_block_root, blob_kzg_commitments)` on the blobs
/// and proofs `retrieve_blobs_and_proofs` returned: `verify_blob_kzg_proof_batch(blobs,
/// blob_kzg_commitments, proofs)`, lengths that differ refused (as the KZG library does).
///
/// [spec]: deneb/fork-choice.md#new-is_data_available
pub fn verify_blobs_available<E: EthSpec>(
    blobs: &[Blob<E>],
    proofs: &[KZGProof],
    commitments: &[KZGCommitment],
) -> Result<(), BlobsError> {
    if blobs.len() != commitments.len() || proofs.len() != commitments.len() {
        return Err(BlobsError::LengthMismatch {
            blobs: blobs.len(),
            commitments: commitments.len(),
            proofs: proofs.len(),
        });
    }
    if blobs.is_empty() {
        return Ok(());
    }
    let kzg_blobs = blobs
        .iter()
        .map(|blob| kzg::blob_from_bytes(&blob[..]).map(|boxed| *boxed))
        .collect::<Result<Vec<kzg::Blob>, _>>()
        .map_err(BlobsError::Kzg)?;
    let kzg_commitments: Vec<kzg::KzgCommitment> = commitments
        .iter()
        .map(|c| kzg::KzgCommitment(c.0))
        .collect();
    let kzg_proofs: Vec<kzg::KzgProof> = proofs.iter().map(|p| kzg::KzgProof(p.0)).collect();
    match kzg::verify_blob_kzg_proof_batch(&kzg_blobs, &kzg_commitments, &kzg_proofs) {
        Ok(true) => Ok(()),
        Ok(false) => Err(BlobsError::InvalidProof),
        Err(e) => Err(BlobsError::Kzg(e)),
    }
}

/// Why a data column sidecar is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SidecarError {
    /// A sidecar of a fork whose data columns are not verified here (Gloas's sidecar carries no
    /// block header: issue 44).
    #[error("data column sidecars of fork {0} are not supported")]
    UnsupportedFork(ForkName),
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

/// Why [`is_data_available`] does not hold for a block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AvailabilityError {
    /// The data was not retrieved ([`Columns::Missing`]).
    #[error("data not retrieved")]
    NotRetrieved,
    /// The retrieved blobs of a Deneb or Electra block do not make it available.
    #[error("blobs unavailable: {0}")]
    Blobs(#[source] BlobsError),
    /// Column sidecars failed [`verify_data_column_sidecars`].
    #[error("{invalid} column sidecar(s) invalid, first: {first}")]
    InvalidColumns {
        /// How many sidecars failed.
        invalid: usize,
        /// Why the first (by position among the retrieved sidecars) failed.
        #[source]
        first: SidecarError,
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
    let sidecar = match sidecar {
        DataColumnSidecar::Fulu(sidecar) => sidecar,
        DataColumnSidecar::Gloas(_) => return Err(SidecarError::UnsupportedFork(ForkName::Gloas)),
    };
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
    let sidecar = match sidecar {
        DataColumnSidecar::Fulu(sidecar) => sidecar,
        DataColumnSidecar::Gloas(_) => return Err(SidecarError::UnsupportedFork(ForkName::Gloas)),
    };
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

/// `is_data_available(beacon_block_root)` over what was retrieved: from Fulu on, each sidecar
/// passes [`verify_data_column_sidecar`] and `verify_data_column_sidecar_kzg_proofs` (every
/// column's cell proofs verified as one batch on `pool`); before, the blobs pass
/// [`verify_blobs_available`].
///
/// [spec]: fulu/fork-choice.md#modified-is_data_available,
/// deneb/fork-choice.md#new-is_data_available
pub fn is_data_available<E: EthSpec>(
    columns: Columns<'_, E>,
    spec: &ChainSpec,
    pool: &ThreadPool,
) -> Result<(), AvailabilityError> {
    let sidecars = match columns {
        Columns::Retrieved(sidecars) => sidecars,
        Columns::Blobs {
            blobs,
            proofs,
            commitments,
        } => {
            return verify_blobs_available::<E>(blobs, proofs, commitments)
                .map_err(AvailabilityError::Blobs);
        }
        Columns::Missing => return Err(AvailabilityError::NotRetrieved),
    };
    let sidecars: Vec<&DataColumnSidecar<E>> = sidecars.iter().collect();
    verify_data_column_sidecars(&sidecars, spec, pool).map_err(|failures| {
        let invalid = failures.len();
        let (_, first) = failures
            .into_iter()
            .next()
            .expect("verify_data_column_sidecars fails with at least one failure");
        AvailabilityError::InvalidColumns { invalid, first }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    type E = MinimalEthSpec;

    /// A blob of field elements `1, 2, 3, …` (each below the modulus), with its commitment and
    /// proof.
    fn blob_with_proof() -> (Blob<E>, KZGCommitment, KZGProof) {
        let mut bytes = vec![0u8; kzg::FIELD_ELEMENTS_PER_BLOB * 32];
        for (i, element) in bytes.chunks_mut(32).enumerate() {
            element[28..].copy_from_slice(&(i as u32 + 1).to_be_bytes());
        }
        let kzg_blob = kzg::blob_from_bytes(&bytes).expect("the blob has BYTES_PER_BLOB bytes");
        let commitment = kzg::blob_to_kzg_commitment(&kzg_blob).expect("a valid blob");
        let proof = kzg::compute_blob_kzg_proof(&kzg_blob, &commitment).expect("a valid blob");
        (
            Blob::<E>::new(bytes).expect("BYTES_PER_BLOB bytes"),
            KZGCommitment::from(commitment.0),
            KZGProof::from(proof.0),
        )
    }

    #[test]
    fn block_without_commitments_is_available_without_blobs() {
        assert_eq!(verify_blobs_available::<E>(&[], &[], &[]), Ok(()));
    }

    #[test]
    fn refuses_blobs_that_are_not_one_per_commitment_and_proof() {
        with_kzg_stack(refuses_blobs_that_are_not_one_per_commitment_and_proof_inner);
    }

    fn refuses_blobs_that_are_not_one_per_commitment_and_proof_inner() {
        let (blob, commitment, proof) = blob_with_proof();
        assert!(matches!(
            verify_blobs_available::<E>(&[], &[], &[commitment]),
            Err(BlobsError::LengthMismatch { blobs: 0, .. })
        ));
        assert!(matches!(
            verify_blobs_available::<E>(
                std::slice::from_ref(&blob),
                &[proof, proof],
                &[commitment]
            ),
            Err(BlobsError::LengthMismatch { proofs: 2, .. })
        ));
    }

    /// Runs `f` on a thread with an 8 MiB stack: the KZG library (loading its trusted setup,
    /// working on 128 KiB blobs) needs more than a test thread's 2 MiB in an unoptimised build.
    fn with_kzg_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(f)
            .expect("spawn the KZG test thread")
            .join()
            .expect("the KZG test thread's assertions hold");
    }

    #[test]
    fn accepts_matching_blob_and_refuses_another_proof() {
        with_kzg_stack(accepts_matching_blob_and_refuses_another_proof_inner);
    }

    fn accepts_matching_blob_and_refuses_another_proof_inner() {
        let (blob, commitment, proof) = blob_with_proof();
        let blobs = std::slice::from_ref(&blob);
        assert_eq!(
            verify_blobs_available::<E>(blobs, &[proof], &[commitment]),
            Ok(())
        );
        // The point at infinity: a valid encoding, but not this blob's proof.
        let mut infinity = [0u8; 48];
        infinity[0] = 0xc0;
        assert_eq!(
            verify_blobs_available::<E>(blobs, &[KZGProof::from(infinity)], &[commitment]),
            Err(BlobsError::InvalidProof)
        );
    }
}
