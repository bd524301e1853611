//! Secret keys, public keys (decompressed and validated) and their compressed bytes.

use std::fmt;

use blst::min_pk;

use crate::DST;
use crate::error::{Error, PointKind};
use crate::signature::Signature;

/// Length of a compressed public key (a G1 point).
pub const PUBLIC_KEY_BYTES_LEN: usize = 48;
/// Length of a secret key (a big-endian scalar).
pub const SECRET_KEY_BYTES_LEN: usize = 32;

/// A secret key: a scalar in `[1, r)`. Zeroized on drop (by blst); `Debug` does not print it.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.3
#[derive(Clone)]
pub struct SecretKey(min_pk::SecretKey);

impl SecretKey {
    /// Decodes 32 big-endian bytes; rejects zero and values ≥ r.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() != SECRET_KEY_BYTES_LEN {
            return Err(Error::WrongLength {
                what: "secret key",
                expected: SECRET_KEY_BYTES_LEN,
                got: bytes.len(),
            });
        }
        if bytes.iter().all(|&b| b == 0) {
            return Err(Error::ZeroSecretKey);
        }
        // Length and zero were checked above, so blst's only remaining reason is ≥ r.
        min_pk::SecretKey::from_bytes(bytes)
            .map(Self)
            .map_err(|_| Error::SecretKeyOutOfRange)
    }

    /// A fresh random key (`KeyGen` over 32 bytes from the thread-local CSPRNG).
    ///
    /// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.3
    pub fn random() -> Self {
        let ikm: [u8; 32] = rand::random();
        Self(
            min_pk::SecretKey::key_gen(&ikm, &[])
                .expect("key_gen accepts any input key material of 32 bytes"),
        )
    }

    /// The 32 big-endian bytes of the scalar.
    pub fn to_bytes(&self) -> [u8; SECRET_KEY_BYTES_LEN] {
        self.0.to_bytes()
    }

    /// `SkToPk`: the public key of this secret key.
    ///
    /// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.4
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.sk_to_pk())
    }

    /// `Sign(SK, message)` with the proof-of-possession ciphersuite's DST.
    ///
    /// [spec]: phase0/beacon-chain.md#bls-signatures
    pub fn sign(&self, message: &[u8]) -> Signature {
        Signature::from_blst(self.0.sign(message, DST, &[]))
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// A public key, decompressed and validated (`KeyValidate`): on the curve, in the G1 subgroup and
/// not the point at infinity. This is the form a pubkey cache holds, so that each verification does
/// not decompress and subgroup-check again.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.5
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(pub(crate) min_pk::PublicKey);

impl PublicKey {
    /// Decompresses and validates 48 bytes; shorthand for
    /// `PublicKeyBytes::try_from(bytes)?.decompress()`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        PublicKeyBytes::try_from(bytes)?.decompress()
    }

    /// The compressed encoding.
    pub fn compress(&self) -> PublicKeyBytes {
        PublicKeyBytes(self.0.compress())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({:?})", self.compress())
    }
}

/// A public key's 48 compressed bytes as received (from a deposit, a state, the wire), not yet
/// checked.
///
/// [spec]: phase0/beacon-chain.md#custom-types (`BLSPubkey`)
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PublicKeyBytes(pub [u8; PUBLIC_KEY_BYTES_LEN]);

impl PublicKeyBytes {
    /// The compressed encoding of the point at infinity (`0xc0` then zeros).
    pub const INFINITY: Self = {
        let mut bytes = [0u8; PUBLIC_KEY_BYTES_LEN];
        bytes[0] = 0xc0;
        Self(bytes)
    };

    /// Decompresses and runs `KeyValidate`: a canonical encoding of a point on the curve, in the
    /// subgroup and not at infinity. A canonical encoding of infinity gives
    /// [`Error::InfinityPublicKey`]; every other rejection is an encoding or curve error.
    ///
    /// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.5
    pub fn decompress(&self) -> Result<PublicKey, Error> {
        let point = min_pk::PublicKey::uncompress(&self.0)
            .map_err(|e| Error::from_blst(PointKind::PublicKey, e))?;
        point
            .validate()
            .map_err(|e| Error::from_blst(PointKind::PublicKey, e))?;
        Ok(PublicKey(point))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8; PUBLIC_KEY_BYTES_LEN] {
        &self.0
    }
}

impl TryFrom<&[u8]> for PublicKeyBytes {
    type Error = Error;

    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        <[u8; PUBLIC_KEY_BYTES_LEN]>::try_from(bytes)
            .map(Self)
            .map_err(|_| Error::WrongLength {
                what: "public key",
                expected: PUBLIC_KEY_BYTES_LEN,
                got: bytes.len(),
            })
    }
}

impl From<[u8; PUBLIC_KEY_BYTES_LEN]> for PublicKeyBytes {
    fn from(bytes: [u8; PUBLIC_KEY_BYTES_LEN]) -> Self {
        Self(bytes)
    }
}

impl fmt::Debug for PublicKeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0x")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The sum of public keys, kept in projective form so that adding more is cheap. It may be the
/// point at infinity (keys that cancel), which is why it is not a [`PublicKey`].
///
/// [spec]: altair/bls.md#eth_aggregate_pubkeys
#[derive(Clone, Copy)]
pub struct AggregatePublicKey(min_pk::AggregatePublicKey);

impl AggregatePublicKey {
    /// The sum of `public_keys`; an empty list is an error (the spec's `assert len(pubkeys) > 0`).
    ///
    /// Many keys (an aggregate attestation's thousands of attesters) are summed in affine
    /// coordinates with one shared inversion per round (blst's bulk addition), a few with mixed
    /// additions: the results are the same point.
    pub fn aggregate(public_keys: &[PublicKey]) -> Result<Self, Error> {
        if public_keys.is_empty() {
            return Err(Error::EmptyInput("public keys to aggregate"));
        }
        if public_keys.len() < BULK_ADDITION_FROM {
            return Ok(Self::aggregate_one_by_one(public_keys));
        }
        Ok(Self(min_pk::AggregatePublicKey::from(bulk_sum(
            public_keys,
        ))))
    }

    /// The sum by one mixed (projective plus affine) addition per key: the reference for
    /// [`Self::aggregate`], and its path for short lists. `public_keys` is not empty.
    pub(crate) fn aggregate_one_by_one(public_keys: &[PublicKey]) -> Self {
        let mut sum = min_pk::AggregatePublicKey::from_public_key(&public_keys[0].0);
        for key in &public_keys[1..] {
            // Keys were validated on decompression: no second subgroup check.
            sum.add_public_key(&key.0, false)
                .expect("adding without validation cannot fail");
        }
        Self(sum)
    }

    /// The sum as blst's projective point, for the batch's scalar multiplications.
    pub(crate) fn to_projective(self) -> blst::blst_p1 {
        blst::blst_p1::from(self.0)
    }

    /// Adds one more key.
    pub fn add(&mut self, public_key: &PublicKey) {
        self.0
            .add_public_key(&public_key.0, false)
            .expect("adding without validation cannot fail");
    }

    /// The sum as a validated [`PublicKey`]; the point at infinity is
    /// [`Error::InfinityPublicKey`].
    pub fn to_public_key(&self) -> Result<PublicKey, Error> {
        let point = self.0.to_public_key();
        if self.is_infinity() {
            return Err(Error::InfinityPublicKey);
        }
        Ok(PublicKey(point))
    }

    /// The compressed encoding of the sum (`G1_to_pubkey`), infinity included.
    pub fn compress(&self) -> PublicKeyBytes {
        PublicKeyBytes(self.0.to_public_key().compress())
    }

    /// Whether the sum is the point at infinity.
    pub fn is_infinity(&self) -> bool {
        self.compress() == PublicKeyBytes::INFINITY
    }
}

/// From this many keys on, [`AggregatePublicKey::aggregate`] uses the bulk addition (below it, the
/// shared inversion costs more than it saves; blst itself adds the last 15 points one by one).
const BULK_ADDITION_FROM: usize = 32;

/// `blst_p1s_add` over `public_keys` (not empty): the sum as a projective point.
#[allow(unsafe_code)]
fn bulk_sum(public_keys: &[PublicKey]) -> blst::blst_p1 {
    let points: Vec<*const blst::blst_p1_affine> = public_keys
        .iter()
        .map(|key| <&blst::blst_p1_affine>::from(&key.0) as *const _)
        .collect();
    let mut sum = blst::blst_p1::default();
    // SAFETY: `points` holds `points.len()` pointers, none null, each to a `blst_p1_affine` that
    // `public_keys` keeps alive for the call; blst reads exactly that many (a null entry would mean
    // "the point after the previous one") and writes only `sum`. Validated keys are never the
    // point at infinity, and equal or opposite keys take blst's doubling and cancelling branches.
    unsafe { blst::blst_p1s_add(&mut sum, points.as_ptr(), points.len()) };
    sum
}

impl fmt::Debug for AggregatePublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AggregatePublicKey({:?})", self.compress())
    }
}
