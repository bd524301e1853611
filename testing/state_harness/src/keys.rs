//! The standard deterministic interop keys and sums of secret keys.
//!
//! Interop key `i` is `int.from_bytes(sha256(i.to_bytes(32, 'little')), 'little') % r`, the
//! keys `lodestar dev`, Lighthouse's and Prysm's interop modes and the `eth2-testnet-genesis` tool
//! all derive. An aggregate signature of `n` signers over one message equals the signature of
//! the sum of their secret keys (mod `r`), so a block of 30,000 attesters needs one signing, not
//! 30,000.
//!
//! [spec]: https://github.com/ethereum/eth2.0-pm/tree/master/interop/mocked_start#pubkeyprivkey-generation

use std::path::Path;

use bls::{PublicKey, PublicKeyBytes, SecretKey};
use rayon::prelude::*;

use crate::HarnessError;

/// The BLS12-381 group order `r`, as little-endian 64-bit limbs.
const R: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// A scalar mod `r` as little-endian limbs, always reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scalar([u64; 4]);

impl Scalar {
    /// Reduces a 256-bit little-endian integer mod `r`.
    pub fn from_le_bytes_reduced(bytes: &[u8; 32]) -> Self {
        let mut limbs = [0u64; 4];
        for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().expect("chunks of 8 bytes"));
        }
        // 2^256 < 3r, so at most two subtractions.
        while !less_than(&limbs, &R) {
            limbs = sub(&limbs, &R);
        }
        Self(limbs)
    }

    /// The scalar of a secret key (its 32 big-endian bytes).
    pub fn from_secret_key(key: &SecretKey) -> Self {
        let mut bytes = key.to_bytes();
        bytes.reverse();
        Self::from_le_bytes_reduced(&bytes)
    }

    /// `self + other mod r`.
    pub fn add(&self, other: &Scalar) -> Scalar {
        // Both are below r < 2^255, so the sum fits in 256 bits.
        let mut out = [0u64; 4];
        let mut carry = false;
        for (i, limb) in out.iter_mut().enumerate() {
            let (s1, c1) = self.0[i].overflowing_add(other.0[i]);
            let (s2, c2) = s1.overflowing_add(carry as u64);
            *limb = s2;
            carry = c1 || c2;
        }
        debug_assert!(!carry);
        if !less_than(&out, &R) {
            out = sub(&out, &R);
        }
        Scalar(out)
    }

    /// The secret key with this scalar; `None` for zero.
    pub fn to_secret_key(&self) -> Option<SecretKey> {
        let mut bytes = [0u8; 32];
        for (i, limb) in self.0.iter().enumerate() {
            bytes[32 - 8 * (i + 1)..32 - 8 * i].copy_from_slice(&limb.to_be_bytes());
        }
        SecretKey::from_bytes(&bytes).ok()
    }
}

fn less_than(a: &[u64; 4], b: &[u64; 4]) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    false
}

fn sub(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut out = [0u64; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        out[i] = d2;
        borrow = b1 || b2;
    }
    out
}

/// The scalar of interop key `index`.
pub fn interop_scalar(index: usize) -> Scalar {
    let mut preimage = [0u8; 32];
    preimage[..8].copy_from_slice(&(index as u64).to_le_bytes());
    Scalar::from_le_bytes_reduced(&ethereum_hashing::hash_fixed(&preimage))
}

/// Interop secret key `index` (`state_processing::genesis::interop_secret_key`, which the
/// interop genesis uses; [`interop_scalar`] derives the same scalar for sums).
pub fn interop_secret_key(index: usize) -> SecretKey {
    state_processing::genesis::interop_secret_key(index)
}

/// The compressed public key of interop key `index`.
pub fn interop_pubkey(index: usize) -> PublicKeyBytes {
    interop_secret_key(index).public_key().compress()
}

/// The secret key whose signature over any message is the aggregate of the signatures of
/// `indices`' interop keys (duplicates counted as often as they appear).
pub fn aggregate_interop_secret_key(
    indices: impl IntoIterator<Item = u64>,
) -> Result<SecretKey, HarnessError> {
    let sum = indices.into_iter().fold(Scalar::default(), |acc, i| {
        acc.add(&interop_scalar(i as usize))
    });
    sum.to_secret_key().ok_or(HarnessError::ZeroAggregateKey)
}

/// The compressed public keys of interop keys `0..count`, derived in parallel and kept in
/// `cache_dir` (48 bytes a key) so that a 1,000,000-key registry is derived once per machine.
pub fn interop_pubkeys_cached(
    count: usize,
    cache_dir: &Path,
) -> Result<Vec<PublicKeyBytes>, HarnessError> {
    let path = cache_dir.join(format!("interop-pubkeys-{count}.bin"));
    if let Ok(bytes) = std::fs::read(&path)
        && bytes.len() == count * 48
    {
        let keys: Vec<PublicKeyBytes> = bytes
            .chunks_exact(48)
            .map(|c| PublicKeyBytes(c.try_into().expect("chunks of 48 bytes")))
            .collect();
        // A cheap check against a stale or corrupted file: the first and last keys.
        if count == 0
            || (keys[0] == interop_pubkey(0) && keys[count - 1] == interop_pubkey(count - 1))
        {
            return Ok(keys);
        }
    }
    let keys: Vec<PublicKeyBytes> = (0..count).into_par_iter().map(interop_pubkey).collect();
    std::fs::create_dir_all(cache_dir).map_err(|e| HarnessError::Io(e.to_string()))?;
    let mut bytes = Vec::with_capacity(count * 48);
    for key in &keys {
        bytes.extend_from_slice(key.as_bytes());
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| HarnessError::Io(e.to_string()))?;
    std::fs::rename(&tmp, &path).map_err(|e| HarnessError::Io(e.to_string()))?;
    Ok(keys)
}

/// The decompressed public key of interop key `index`.
pub fn interop_public_key(index: usize) -> PublicKey {
    interop_secret_key(index).public_key()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The first interop keys as published with the interop mocked-start spec (and used by every
    /// client's interop mode).
    #[test]
    fn interop_keys_match_published_values() {
        assert_eq!(
            hex(&interop_secret_key(0).to_bytes()),
            "25295f0d1d592a90b333e26e85149708208e9f8e8bc18f6c77bd62f8ad7a6866"
        );
        assert_eq!(
            hex(&interop_secret_key(1).to_bytes()),
            "51d0b65185db6989ab0b560d6deed19c7ead0e24b9b6372cbecb1f26bdfad000"
        );
        assert_eq!(
            hex(interop_pubkey(0).as_bytes()),
            "a99a76ed7796f7be22d5b7e85deeb7c5677e88e511e0b337618f8c4eb61349b4bf2d153f649f7b53359fe8b94a38e44c"
        );
    }

    #[test]
    fn scalars_are_the_genesis_module_keys() {
        for i in [0usize, 1, 2, 63, 1000, 999_999] {
            let from_scalar = interop_scalar(i).to_secret_key().unwrap();
            assert_eq!(
                from_scalar.to_bytes(),
                interop_secret_key(i).to_bytes(),
                "key {i}"
            );
        }
    }

    #[test]
    fn signature_of_summed_keys_is_the_aggregate_signature() {
        let message = [7u8; 32];
        let indices = [3u64, 5, 5, 11];
        let summed = aggregate_interop_secret_key(indices)
            .unwrap()
            .sign(&message);
        let mut aggregate = bls::AggregateSignature::infinity();
        for i in indices {
            aggregate.add(&interop_secret_key(i as usize).sign(&message));
        }
        assert_eq!(summed.serialize(), aggregate.serialize());
        let keys: Vec<PublicKey> = indices
            .iter()
            .map(|&i| interop_public_key(i as usize))
            .collect();
        assert!(bls::SignatureSet::new(summed, keys, message).verify());
    }

    #[test]
    fn scalar_addition_wraps_at_the_group_order() {
        // (r - 1) + 2 = 1 mod r.
        let r_minus_one = Scalar([R[0] - 1, R[1], R[2], R[3]]);
        let two = Scalar([2, 0, 0, 0]);
        assert_eq!(r_minus_one.add(&two), Scalar([1, 0, 0, 0]));
        // A 256-bit value of all ones reduces below r.
        let reduced = Scalar::from_le_bytes_reduced(&[0xff; 32]);
        assert!(less_than(&reduced.0, &R));
    }
}
