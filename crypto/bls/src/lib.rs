//! BLS12-381 signatures as the consensus layer uses them: the IETF proof-of-possession scheme with
//! public keys in G1 (48 bytes) and signatures in G2 (96 bytes), over [`blst`].
//!
//! - [`PublicKeyBytes`] is what arrives; [`PublicKeyBytes::decompress`] returns a validated
//!   [`PublicKey`] (the form a pubkey cache holds).
//! - [`Signature::deserialize`] checks encoding and subgroup; the spec functions ([`verify`],
//!   [`fast_aggregate_verify`], [`eth_fast_aggregate_verify`], [`aggregate_verify`],
//!   [`eth_aggregate_pubkeys`], [`key_validate`], [`aggregate`]) keep the spec's names.
//! - [`verify_signature_sets`] checks many [`SignatureSet`]s in one randomised multi-pairing, in
//!   parallel where the caller says ([`Parallelism`]: its own pool, a named pool, or
//!   sequentially); [`verify_signature_sets_attributed`] also says which sets failed.
//!
//! Specs: `phase0/beacon-chain.md#bls-signatures`, `altair/bls.md`, and the IETF draft
//! <https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05>.
//!
//! [spec]: phase0/beacon-chain.md#bls-signatures
#![deny(unsafe_code)]

mod batch;
mod error;
mod hash_to_curve;
mod interop;
mod keys;
mod parallelism;
mod signature;
mod verify;

pub use batch::{SignatureSet, verify_signature_sets, verify_signature_sets_attributed};
pub use error::{Error, PointKind};
pub use hash_to_curve::{G2Coordinates, hash_to_g2};
pub use interop::interop_secret_key;
pub use keys::{
    AggregatePublicKey, PUBLIC_KEY_BYTES_LEN, PublicKey, PublicKeyBytes, SECRET_KEY_BYTES_LEN,
    SecretKey,
};
pub use parallelism::Parallelism;
/// The pool type the batch functions run on, re-exported so callers need not pin rayon themselves.
pub use rayon::{ThreadPool, ThreadPoolBuilder};
pub use signature::{AggregateSignature, SIGNATURE_BYTES_LEN, Signature};
pub use verify::{
    aggregate, aggregate_verify, eth_aggregate_pubkeys, eth_fast_aggregate_verify,
    fast_aggregate_verify, key_validate, verify,
};

/// The domain separation tag of the proof-of-possession ciphersuite the spec uses.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-4.2.3
pub const DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";

#[cfg(test)]
mod tests;
