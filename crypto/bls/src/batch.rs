//! Batch verification of signature sets: one multi-pairing for many signatures, with random
//! scalars so that invalid sets cannot cancel each other out.
//!
//! [method]: https://ethresear.ch/t/fast-verification-of-multiple-bls-signatures/5407

use blst::{BLST_ERROR, Pairing, blst_p1_affine, blst_p2_affine};
use rand::Rng;
use rayon::ThreadPool;
use rayon::prelude::*;

use crate::DST;
use crate::keys::{AggregatePublicKey, PublicKey};
use crate::signature::Signature;
use crate::verify::fast_aggregate_verify;

/// One signature to check: `signature` over `message` by the sum of `signing_keys` (one key for a
/// block or an exit, the attesting committee members for an aggregate attestation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureSet {
    /// The (possibly aggregate) signature.
    pub signature: Signature,
    /// The keys whose sum signed; must not be empty.
    pub signing_keys: Vec<PublicKey>,
    /// The signing root.
    pub message: [u8; 32],
}

impl SignatureSet {
    /// A set of `signature` over `message` by `signing_keys`.
    pub fn new(signature: Signature, signing_keys: Vec<PublicKey>, message: [u8; 32]) -> Self {
        Self {
            signature,
            signing_keys,
            message,
        }
    }

    /// Verifies this set alone (`FastAggregateVerify`).
    ///
    /// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-3.3.4
    pub fn verify(&self) -> bool {
        fast_aggregate_verify(&self.signing_keys, &self.message, &self.signature)
    }
}

/// `pool.install(op)`, except that a caller on a worker of another rayon pool waits for `op`
/// without running that pool's other jobs meanwhile (which `install` does: a caller holding a
/// lock, such as block import holding fork choice, would run a queued job that wants the same
/// lock on its own stack, and deadlock). Such a caller hands `op` to a fresh thread that installs
/// it and blocks on that thread instead.
pub fn install_isolated<R: Send>(pool: &ThreadPool, op: impl FnOnce() -> R + Send) -> R {
    let on_foreign_worker =
        rayon::current_thread_index().is_some() && pool.current_thread_index().is_none();
    if !on_foreign_worker {
        return pool.install(op);
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| pool.install(op))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Verifies every set in one randomised multi-pairing, the sets split into one chunk per thread
/// of `pool`. True only if every set is valid (up to a 2⁻⁶⁴ chance per forgery attempt).
///
/// An empty list is `false`: a caller that asks to verify nothing has a bug, and must not be told
/// its (absent) signatures are valid. A set with no signing keys, or keys that sum to infinity, is
/// invalid.
///
/// [spec]: phase0/beacon-chain.md#bls-signatures (`batch_verify` in the spec tests)
pub fn verify_signature_sets(sets: &[SignatureSet], pool: &ThreadPool) -> bool {
    if sets.is_empty() {
        return false;
    }
    let chunk_size = sets.len().div_ceil(pool.current_num_threads().max(1));
    let partials: Option<Vec<Pairing<'static>>> = install_isolated(pool, || {
        sets.par_chunks(chunk_size).map(accumulate).collect()
    });
    let Some(mut partials) = partials else {
        return false;
    };
    let Some(mut total) = partials.pop() else {
        return false;
    };
    for partial in &partials {
        if total.merge(partial) != BLST_ERROR::BLST_SUCCESS {
            return false;
        }
    }
    total.finalverify(None)
}

/// As [`verify_signature_sets`], and when the batch fails, the indices of the sets that fail
/// alone, found by verifying every set individually in parallel on `pool`.
///
/// An empty list is `Err(vec![])`: not valid (see [`verify_signature_sets`]), but no set to blame.
pub fn verify_signature_sets_attributed(
    sets: &[SignatureSet],
    pool: &ThreadPool,
) -> Result<(), Vec<usize>> {
    if verify_signature_sets(sets, pool) {
        return Ok(());
    }
    let failed = install_isolated(pool, || {
        sets.par_iter()
            .enumerate()
            .filter(|(_, set)| !set.verify())
            .map(|(index, _)| index)
            .collect()
    });
    Err(failed)
}

/// Adds `e(r·pk, H(m)) · e(-G1, r·sig)` for each set of `chunk` into one pairing accumulator; `None`
/// if a set is invalid on its face.
fn accumulate(chunk: &[SignatureSet]) -> Option<Pairing<'static>> {
    let mut pairing = Pairing::new(true, DST);
    let mut rng = rand::rng();
    for set in chunk {
        let key = AggregatePublicKey::aggregate(&set.signing_keys)
            .and_then(|sum| sum.to_public_key())
            .ok()?;
        let key = blst_p1_affine::from(key.0);
        let signature = blst_p2_affine::from(set.signature.0);
        // Non-zero: a zero scalar would drop the set from the check.
        let scalar: u64 = loop {
            let r: u64 = rng.random();
            if r != 0 {
                break r;
            }
        };
        // blst scalars are little-endian; keys and signatures were group-checked on decoding.
        let result = pairing.mul_n_aggregate(
            &key,
            false,
            &signature,
            false,
            &scalar.to_le_bytes(),
            64,
            &set.message,
            &[],
        );
        if result != BLST_ERROR::BLST_SUCCESS {
            return None;
        }
    }
    pairing.commit();
    Some(pairing)
}
