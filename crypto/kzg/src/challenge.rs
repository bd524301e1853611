//! The Fiat-Shamir challenges of the batch verifications.
//!
//! c-kzg computes these internally; they are here so the spec's own vectors for them run, and as
//! a readable statement of what the verifiers hash. Compiled only with the `spec-challenges`
//! feature, which the spec-test runner (`testing/ef_tests`) enables.

use sha2::{Digest, Sha256};

use crate::error::{self, Error};
use crate::types::{
    Blob, Bytes32, FIELD_ELEMENTS_PER_BLOB, FIELD_ELEMENTS_PER_CELL, KzgCommitment, KzgProof,
};

/// `FIAT_SHAMIR_PROTOCOL_DOMAIN`.
const FIAT_SHAMIR_PROTOCOL_DOMAIN: &[u8; 16] = b"FSBLOBVERIFY_V1_";

/// `RANDOM_CHALLENGE_KZG_CELL_BATCH_DOMAIN`.
const RANDOM_CHALLENGE_KZG_CELL_BATCH_DOMAIN: &[u8; 16] = b"RCKZGCBATCH__V1_";

/// The field elements of one cell's coset evaluations, as the spec hashes them.
pub type CosetEvals = [Bytes32; FIELD_ELEMENTS_PER_CELL];

/// `compute_challenge(blob, commitment)`: the evaluation point of `verify_blob_kzg_proof`.
///
/// [spec]: deneb/polynomial-commitments.md#compute_challenge
pub fn compute_challenge(blob: &Blob, commitment: &KzgCommitment) -> Bytes32 {
    let mut hasher = Sha256::new();
    hasher.update(FIAT_SHAMIR_PROTOCOL_DOMAIN);
    hasher.update((FIELD_ELEMENTS_PER_BLOB as u128).to_be_bytes());
    hasher.update(blob.as_ref());
    hasher.update(commitment.0);
    hash_to_bls_field(hasher)
}

/// `compute_verify_cell_kzg_proof_batch_challenge(...)`: the random linear combination factor
/// of `verify_cell_kzg_proof_batch`. `commitment_indices`, `cell_indices`, `cosets_evals` and
/// `proofs` pair up element by element.
///
/// [spec]: fulu/polynomial-commitments-sampling.md#compute_verify_cell_kzg_proof_batch_challenge
pub fn compute_verify_cell_kzg_proof_batch_challenge(
    commitments: &[KzgCommitment],
    commitment_indices: &[u64],
    cell_indices: &[u64],
    cosets_evals: &[CosetEvals],
    proofs: &[KzgProof],
) -> Result<Bytes32, Error> {
    let n = cosets_evals.len();
    error::same_length(
        "cosets evals",
        n,
        "commitment indices",
        commitment_indices.len(),
    )?;
    error::same_length("cosets evals", n, "cell indices", cell_indices.len())?;
    error::same_length("cosets evals", n, "proofs", proofs.len())?;
    let mut hasher = Sha256::new();
    hasher.update(RANDOM_CHALLENGE_KZG_CELL_BATCH_DOMAIN);
    hasher.update((FIELD_ELEMENTS_PER_BLOB as u64).to_be_bytes());
    hasher.update((FIELD_ELEMENTS_PER_CELL as u64).to_be_bytes());
    hasher.update((commitments.len() as u64).to_be_bytes());
    hasher.update((cell_indices.len() as u64).to_be_bytes());
    for commitment in commitments {
        hasher.update(commitment.0);
    }
    for (k, coset_evals) in cosets_evals.iter().enumerate() {
        hasher.update(commitment_indices[k].to_be_bytes());
        hasher.update(cell_indices[k].to_be_bytes());
        for eval in coset_evals {
            hasher.update(eval.as_slice());
        }
        hasher.update(proofs[k].0);
    }
    Ok(hash_to_bls_field(hasher))
}

/// `hash_to_bls_field`: SHA-256 of the data, read big-endian, reduced mod `BLS_MODULUS`.
///
/// [spec]: deneb/polynomial-commitments.md#hash_to_bls_field
fn hash_to_bls_field(hasher: Sha256) -> Bytes32 {
    let mut value: [u8; 32] = hasher.finalize().into();
    // 2^256 < 3 × BLS_MODULUS, so at most two subtractions reduce it.
    while value.as_slice() >= error::BLS_MODULUS.as_slice() {
        let mut borrow = 0u16;
        for (v, m) in value.iter_mut().zip(error::BLS_MODULUS).rev() {
            let diff = u16::from(*v)
                .wrapping_sub(u16::from(m))
                .wrapping_sub(borrow);
            *v = diff as u8;
            borrow = u16::from(diff > 0xff);
        }
    }
    Bytes32::new(value)
}
