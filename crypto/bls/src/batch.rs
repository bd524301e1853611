//! Batch verification of signature sets: one multi-pairing for many signatures, with random
//! scalars so that invalid sets cannot cancel each other out.
//!
//! [method]: https://ethresear.ch/t/fast-verification-of-multiple-bls-signatures/5407

use std::collections::HashMap;

use blst::{
    BLST_ERROR, Pairing, blst_p1, blst_p1_add_or_double, blst_p1_affine, blst_p1_is_inf,
    blst_p1_mult, blst_p1_to_affine, blst_p2, blst_p2_add_or_double, blst_p2_affine,
    blst_p2_from_affine, blst_p2_mult, blst_p2_to_affine,
};
use rand::Rng;
use rayon::prelude::*;

use crate::DST;
use crate::keys::{AggregatePublicKey, PublicKey};
use crate::parallelism::Parallelism;
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

/// Verifies every set in one randomised multi-pairing, in parallel as `parallelism` says (a
/// `&ThreadPool` converts to running on that pool). True only if every set is valid (up to a
/// 2⁻⁶⁴ chance per forgery attempt).
///
/// Each set `i` gets a random non-zero 64-bit scalar `rᵢ`, and the check is
/// `∏ₘ e(Σ_{i over m} rᵢ·pkᵢ, H(m)) · e(-G1, Σᵢ rᵢ·sigᵢ) = 1`: sets over the same message (a
/// committee's single attestations, a block's aggregates of one vote) share one hash to the curve
/// and one Miller loop, which is most of a set's cost. The scalar multiplications run in
/// parallel over the sets, the pairing terms in parallel over the messages.
///
/// An empty list is `false`: a caller that asks to verify nothing has a bug, and must not be told
/// its (absent) signatures are valid. A set with no signing keys, or keys that sum to infinity, is
/// invalid.
///
/// Never under the fork-choice lock (a debug build panics: [`Parallelism::run`]).
///
/// [spec]: phase0/beacon-chain.md#bls-signatures (`batch_verify` in the spec tests)
#[track_caller]
pub fn verify_signature_sets<'a>(
    sets: &[SignatureSet],
    parallelism: impl Into<Parallelism<'a>>,
) -> bool {
    if sets.is_empty() {
        return false;
    }
    let parallelism = parallelism.into();
    let groups = group_by_message(sets);
    let threads = parallelism.threads();
    let partials: Option<Vec<Pairing<'static>>> = parallelism.run(|parallel| {
        let chunk_size = groups.len().div_ceil(threads);
        if parallel {
            let terms: Vec<Terms> = sets
                .par_iter()
                .map_init(rand::rng, |rng, set| scaled_terms(set, rng))
                .collect::<Option<_>>()?;
            groups
                .par_chunks(chunk_size)
                .map(|groups| accumulate(groups, &terms))
                .collect()
        } else {
            let mut rng = rand::rng();
            let terms: Vec<Terms> = sets
                .iter()
                .map(|set| scaled_terms(set, &mut rng))
                .collect::<Option<_>>()?;
            groups
                .chunks(chunk_size)
                .map(|groups| accumulate(groups, &terms))
                .collect()
        }
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
/// alone, found by verifying every set individually (in parallel as `parallelism` says).
///
/// An empty list is `Err(vec![])`: not valid (see [`verify_signature_sets`]), but no set to blame.
#[track_caller]
pub fn verify_signature_sets_attributed<'a>(
    sets: &[SignatureSet],
    parallelism: impl Into<Parallelism<'a>>,
) -> Result<(), Vec<usize>> {
    let parallelism = parallelism.into();
    if verify_signature_sets(sets, parallelism) {
        return Ok(());
    }
    let valid: Vec<bool> = parallelism.map_collect(sets, SignatureSet::verify);
    Err(valid
        .iter()
        .enumerate()
        .filter(|(_, valid)| !**valid)
        .map(|(index, _)| index)
        .collect())
}

/// The sets over one message: their positions in the batch, in order.
struct MessageGroup<'a> {
    message: &'a [u8; 32],
    members: Vec<usize>,
}

/// The sets grouped by message, groups in the order their messages first appear.
fn group_by_message(sets: &[SignatureSet]) -> Vec<MessageGroup<'_>> {
    let mut groups: Vec<MessageGroup<'_>> = Vec::new();
    let mut by_message: HashMap<&[u8; 32], usize> = HashMap::with_capacity(sets.len());
    for (i, set) in sets.iter().enumerate() {
        let group = *by_message.entry(&set.message).or_insert_with(|| {
            groups.push(MessageGroup {
                message: &set.message,
                members: Vec::new(),
            });
            groups.len() - 1
        });
        groups[group].members.push(i);
    }
    groups
}

/// One set's terms in the batch: `r·(sum of its keys)` and `r·signature`.
type Terms = (blst_p1, blst_p2);

/// The set's terms for a fresh random non-zero 64-bit `r`; `None` if its keys are missing or sum
/// to infinity (it cannot verify).
#[allow(unsafe_code)]
fn scaled_terms(set: &SignatureSet, rng: &mut impl Rng) -> Option<Terms> {
    let key = AggregatePublicKey::aggregate(&set.signing_keys)
        .ok()?
        .to_projective();
    // Non-zero: a zero scalar would drop the set from the check.
    let scalar: u64 = loop {
        let r: u64 = rng.random();
        if r != 0 {
            break r;
        }
    };
    // blst scalars are little-endian.
    let scalar = scalar.to_le_bytes();
    let signature = blst_p2_affine::from(set.signature.0);
    let mut scaled_key = blst_p1::default();
    let mut scaled_signature = blst_p2::default();
    let mut projective_signature = blst_p2::default();
    // SAFETY: every pointer is to an initialised local, and `scalar` holds the 64 bits read; blst
    // writes only the outputs. Keys and signatures were group-checked on decoding.
    let infinite = unsafe {
        blst_p1_mult(&mut scaled_key, &key, scalar.as_ptr(), 64);
        blst_p2_from_affine(&mut projective_signature, &signature);
        blst_p2_mult(
            &mut scaled_signature,
            &projective_signature,
            scalar.as_ptr(),
            64,
        );
        // r is below the group order, so r·K is infinity only if K is.
        blst_p1_is_inf(&scaled_key)
    };
    (!infinite).then_some((scaled_key, scaled_signature))
}

/// Adds `e(Σ rᵢ·pkᵢ, H(m))` for each message group of `groups`, and `e(-G1, Σ rᵢ·sigᵢ)` for all
/// their sets, into one pairing accumulator; `None` if a group's keys sum to infinity.
#[allow(unsafe_code)]
fn accumulate(groups: &[MessageGroup<'_>], terms: &[Terms]) -> Option<Pairing<'static>> {
    let mut pairing = Pairing::new(true, DST);
    let mut signatures = blst_p2::default();
    for &i in groups.iter().flat_map(|g| &g.members) {
        // SAFETY: pointers to initialised points; `signatures` may alias the output, which blst
        // allows. The all-zero default is the point at infinity.
        unsafe { blst_p2_add_or_double(&mut signatures, &signatures, &terms[i].1) };
    }
    let mut signatures_affine = blst_p2_affine::default();
    // SAFETY: as above.
    unsafe { blst_p2_to_affine(&mut signatures_affine, &signatures) };
    for (n, group) in groups.iter().enumerate() {
        let mut key = blst_p1::default();
        for &i in &group.members {
            // SAFETY: as above.
            unsafe { blst_p1_add_or_double(&mut key, &key, &terms[i].0) };
        }
        let mut key_affine = blst_p1_affine::default();
        // SAFETY: as above.
        let infinite = unsafe {
            blst_p1_to_affine(&mut key_affine, &key);
            blst_p1_is_inf(&key)
        };
        if infinite {
            return None;
        }
        // The signatures' sum enters once, with the first message; blst skips an all-zero
        // (infinite) signature.
        let signature = if n == 0 {
            signatures_affine
        } else {
            blst_p2_affine::default()
        };
        let result = pairing.aggregate(&key_affine, false, &signature, false, group.message, &[]);
        if result != BLST_ERROR::BLST_SUCCESS {
            return None;
        }
    }
    pairing.commit();
    Some(pairing)
}
