//! KZG commitments and proofs for blobs (EIP-4844) and for PeerDAS cells (EIP-7594), over
//! [c-kzg](https://github.com/ethereum/c-kzg-4844) with the embedded mainnet trusted setup.
//!
//! The functions keep the spec's names. Every rejection of input is a typed [`Error`], never a
//! panic; `verify_*` functions return `Ok(false)` for well-formed input whose proof does not hold,
//! as the spec does. [`verify_data_column_sidecar_kzg_proofs_batch`], the batched form of the
//! spec's [`verify_data_column_sidecar_kzg_proofs`], is the call the chain uses for PeerDAS
//! columns.
//!
//! See README.md for why c-kzg and the measured numbers.

mod cells;
#[cfg(feature = "spec-challenges")]
mod challenge;
mod columns;
mod error;
mod types;

pub use cells::{
    CellsAndProofs, compute_cells, compute_cells_and_kzg_proofs, recover_cells_and_kzg_proofs,
    verify_cell_kzg_proof_batch,
};
#[cfg(feature = "spec-challenges")]
pub use challenge::{CosetEvals, compute_challenge, compute_verify_cell_kzg_proof_batch_challenge};
pub use columns::{
    ColumnRef, verify_data_column_sidecar_kzg_proofs, verify_data_column_sidecar_kzg_proofs_batch,
};
pub use error::{Error, PointError};
pub use types::{
    BYTES_PER_BLOB, BYTES_PER_CELL, BYTES_PER_COMMITMENT, BYTES_PER_FIELD_ELEMENT, BYTES_PER_PROOF,
    Blob, Bytes32, CELLS_PER_EXT_BLOB, Cell, FIELD_ELEMENTS_PER_BLOB, FIELD_ELEMENTS_PER_CELL,
    KzgCommitment, KzgProof, blob_from_bytes, bytes32_from_bytes, cell_from_bytes,
};

use c_kzg::KzgSettings;

/// The precompute level of the fixed-base MSM tables used by `compute_cells_and_kzg_proofs` and
/// `recover_cells_and_kzg_proofs`.
///
/// 8 is c-kzg's recommended balance: ~96 MiB of tables and ~0.6 s more load time than 0, for about
/// 40% faster cell-proof computation (c-kzg README). Verification does not use the tables.
pub const PRECOMPUTE: u64 = 8;

/// The mainnet trusted setup, loaded on first use and kept for the life of the process.
///
/// Loading costs seconds; call this at start-up so the first blob does not pay it.
pub fn trusted_setup() -> &'static KzgSettings {
    // c-kzg keeps one `OnceLock` per precompute level, so this parses the setup once per process.
    c_kzg::ethereum_kzg_settings(PRECOMPUTE)
}

fn c_proof(proof: &KzgProof) -> c_kzg::Bytes48 {
    c_kzg::Bytes48::new(proof.0)
}

fn c_commitment(commitment: &KzgCommitment) -> c_kzg::Bytes48 {
    c_kzg::Bytes48::new(commitment.0)
}

fn from_c_proof(proof: &c_kzg::KzgProof) -> KzgProof {
    KzgProof(proof.to_bytes().into_inner())
}

/// `blob_to_kzg_commitment(blob)`.
///
/// [spec]: deneb/polynomial-commitments.md#blob_to_kzg_commitment
pub fn blob_to_kzg_commitment(blob: &Blob) -> Result<KzgCommitment, Error> {
    trusted_setup()
        .blob_to_kzg_commitment(blob)
        .map(|c| KzgCommitment(c.to_bytes().into_inner()))
        .map_err(|e| error::diagnose("blob_to_kzg_commitment", e, |d| d.blob("blob", blob)))
}

/// `compute_kzg_proof(blob, z)`: the proof and the evaluation `y = p(z)`.
///
/// [spec]: deneb/polynomial-commitments.md#compute_kzg_proof
pub fn compute_kzg_proof(blob: &Blob, z: &Bytes32) -> Result<(KzgProof, Bytes32), Error> {
    trusted_setup()
        .compute_kzg_proof(blob, z)
        .map(|(proof, y)| (from_c_proof(&proof), y))
        .map_err(|e| {
            error::diagnose("compute_kzg_proof", e, |d| {
                d.blob("blob", blob)?;
                d.field_element("z", 0, z.as_slice())
            })
        })
}

/// `compute_blob_kzg_proof(blob, commitment)`.
///
/// [spec]: deneb/polynomial-commitments.md#compute_blob_kzg_proof
pub fn compute_blob_kzg_proof(blob: &Blob, commitment: &KzgCommitment) -> Result<KzgProof, Error> {
    trusted_setup()
        .compute_blob_kzg_proof(blob, &c_commitment(commitment))
        .map(|p| from_c_proof(&p))
        .map_err(|e| {
            error::diagnose("compute_blob_kzg_proof", e, |d| {
                d.blob("blob", blob)?;
                d.point("commitment", 0, &commitment.0)
            })
        })
}

/// `verify_kzg_proof(commitment, z, y, proof)`: whether `p(z) == y` for the committed polynomial.
///
/// [spec]: deneb/polynomial-commitments.md#verify_kzg_proof
pub fn verify_kzg_proof(
    commitment: &KzgCommitment,
    z: &Bytes32,
    y: &Bytes32,
    proof: &KzgProof,
) -> Result<bool, Error> {
    trusted_setup()
        .verify_kzg_proof(&c_commitment(commitment), z, y, &c_proof(proof))
        .map_err(|e| {
            error::diagnose("verify_kzg_proof", e, |d| {
                d.point("commitment", 0, &commitment.0)?;
                d.field_element("z", 0, z.as_slice())?;
                d.field_element("y", 0, y.as_slice())?;
                d.point("proof", 0, &proof.0)
            })
        })
}

/// `verify_blob_kzg_proof(blob, commitment, proof)`.
///
/// [spec]: deneb/polynomial-commitments.md#verify_blob_kzg_proof
pub fn verify_blob_kzg_proof(
    blob: &Blob,
    commitment: &KzgCommitment,
    proof: &KzgProof,
) -> Result<bool, Error> {
    trusted_setup()
        .verify_blob_kzg_proof(blob, &c_commitment(commitment), &c_proof(proof))
        .map_err(|e| {
            error::diagnose("verify_blob_kzg_proof", e, |d| {
                d.blob("blob", blob)?;
                d.point("commitment", 0, &commitment.0)?;
                d.point("proof", 0, &proof.0)
            })
        })
}

/// `verify_blob_kzg_proof_batch(blobs, commitments, proofs)`; an empty batch holds, as in the
/// spec.
///
/// [spec]: deneb/polynomial-commitments.md#verify_blob_kzg_proof_batch
pub fn verify_blob_kzg_proof_batch(
    blobs: &[Blob],
    commitments: &[KzgCommitment],
    proofs: &[KzgProof],
) -> Result<bool, Error> {
    error::same_length("blobs", blobs.len(), "commitments", commitments.len())?;
    error::same_length("blobs", blobs.len(), "proofs", proofs.len())?;
    let c_commitments: Vec<_> = commitments.iter().map(c_commitment).collect();
    let c_proofs: Vec<_> = proofs.iter().map(c_proof).collect();
    trusted_setup()
        .verify_blob_kzg_proof_batch(blobs, &c_commitments, &c_proofs)
        .map_err(|e| {
            error::diagnose("verify_blob_kzg_proof_batch", e, |d| {
                blobs.iter().try_for_each(|b| d.blob("blobs", b))?;
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

#[cfg(test)]
mod tests;
