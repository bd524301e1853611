//! The spec's BLS functions, by the spec's names.

use blst::BLST_ERROR;

use crate::DST;
use crate::error::Error;
use crate::keys::{AggregatePublicKey, PublicKey, PublicKeyBytes};
use crate::signature::{AggregateSignature, Signature};

/// `KeyValidate`: the bytes decompress to a point on the curve, in the subgroup, not at infinity.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.5
pub fn key_validate(public_key: &PublicKeyBytes) -> bool {
    public_key.decompress().is_ok()
}

/// `Verify(PK, message, signature)`. `KeyValidate` already holds for a [`PublicKey`].
///
/// [spec]: phase0/beacon-chain.md#bls-signatures
pub fn verify(public_key: &PublicKey, message: &[u8], signature: &Signature) -> bool {
    // Group checks were done when the key and the signature were decoded.
    signature
        .0
        .verify(false, message, DST, &[], &public_key.0, false)
        == BLST_ERROR::BLST_SUCCESS
}

/// `Aggregate(signatures)`: the sum; an empty list is an error, as in the spec.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.8
pub fn aggregate(signatures: &[Signature]) -> Result<AggregateSignature, Error> {
    if signatures.is_empty() {
        return Err(Error::EmptyInput("signatures to aggregate"));
    }
    let mut sum = AggregateSignature::infinity();
    signatures.iter().for_each(|s| sum.add(s));
    Ok(sum)
}

/// `FastAggregateVerify(PKs, message, signature)`: every key signed the same message. False for an
/// empty key list or keys that sum to infinity.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-3.3.4
pub fn fast_aggregate_verify(
    public_keys: &[PublicKey],
    message: &[u8],
    signature: &Signature,
) -> bool {
    match AggregatePublicKey::aggregate(public_keys).and_then(|sum| sum.to_public_key()) {
        Ok(key) => verify(&key, message, signature),
        Err(_) => false,
    }
}

/// `eth_fast_aggregate_verify`: as [`fast_aggregate_verify`], except that no keys with the
/// signature at infinity is valid (a sync committee aggregate nobody took part in).
///
/// [spec]: altair/bls.md#eth_fast_aggregate_verify
pub fn eth_fast_aggregate_verify(
    public_keys: &[PublicKey],
    message: &[u8],
    signature: &Signature,
) -> bool {
    if public_keys.is_empty() && signature.is_infinity() {
        return true;
    }
    fast_aggregate_verify(public_keys, message, signature)
}

/// `AggregateVerify(PKs, messages, signature)`: key `i` signed message `i`. False for empty lists
/// or lists of different lengths. Messages need not be distinct: the proof-of-possession scheme
/// the spec uses does not require it.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-3.3.3
pub fn aggregate_verify(
    public_keys: &[PublicKey],
    messages: &[&[u8]],
    signature: &Signature,
) -> bool {
    if public_keys.is_empty() || public_keys.len() != messages.len() {
        return false;
    }
    let keys: Vec<&blst::min_pk::PublicKey> = public_keys.iter().map(|k| &k.0).collect();
    signature
        .0
        .aggregate_verify(false, messages, DST, &keys, false)
        == BLST_ERROR::BLST_SUCCESS
}

/// `eth_aggregate_pubkeys`: the sum of a non-empty list of valid keys, as compressed bytes (it may
/// be the point at infinity; the spec does not check the result).
///
/// [spec]: altair/bls.md#eth_aggregate_pubkeys
pub fn eth_aggregate_pubkeys(public_keys: &[PublicKey]) -> Result<PublicKeyBytes, Error> {
    AggregatePublicKey::aggregate(public_keys).map(|sum| sum.compress())
}
