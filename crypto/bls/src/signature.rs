//! Signatures (G2 points) and their aggregates.

use std::fmt;

use blst::min_pk;

use crate::error::{Error, PointKind};

/// Length of a compressed signature (a G2 point).
pub const SIGNATURE_BYTES_LEN: usize = 96;

/// A signature: a canonically encoded G2 point in the prime-order subgroup. The point at infinity
/// is a valid encoding (it is the aggregate of no signatures) but verifies against no real key;
/// [`crate::eth_fast_aggregate_verify`] is the one place the spec accepts it.
///
/// [spec]: phase0/beacon-chain.md#bls-signatures
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Signature(pub(crate) min_pk::Signature);

impl Signature {
    /// The compressed encoding of the point at infinity (`0xc0` then zeros).
    pub const INFINITY_BYTES: [u8; SIGNATURE_BYTES_LEN] = {
        let mut bytes = [0u8; SIGNATURE_BYTES_LEN];
        bytes[0] = 0xc0;
        bytes
    };

    /// Decodes 96 compressed bytes and checks that the point is in the G2 subgroup.
    ///
    /// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.8
    pub fn deserialize(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() != SIGNATURE_BYTES_LEN {
            return Err(Error::WrongLength {
                what: "signature",
                expected: SIGNATURE_BYTES_LEN,
                got: bytes.len(),
            });
        }
        let point = min_pk::Signature::uncompress(bytes)
            .map_err(|e| Error::from_blst(PointKind::Signature, e))?;
        // `false`: infinity is a valid signature encoding; verification rejects it instead.
        point
            .validate(false)
            .map_err(|e| Error::from_blst(PointKind::Signature, e))?;
        Ok(Self(point))
    }

    /// The point at infinity.
    pub fn infinity() -> Self {
        Self(min_pk::Signature::from(blst::blst_p2_affine::default()))
    }

    /// Whether this is the point at infinity.
    pub fn is_infinity(&self) -> bool {
        self.serialize() == Self::INFINITY_BYTES
    }

    /// The compressed encoding.
    pub fn serialize(&self) -> [u8; SIGNATURE_BYTES_LEN] {
        self.0.compress()
    }

    /// Wraps a point blst produced itself (signing, aggregation): in the subgroup by construction.
    pub(crate) fn from_blst(point: min_pk::Signature) -> Self {
        Self(point)
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Signature(0x")?;
        self.serialize()
            .iter()
            .try_for_each(|b| write!(f, "{b:02x}"))?;
        f.write_str(")")
    }
}

/// A sum of signatures, in projective form so that adding more is cheap.
///
/// [spec]: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-bls-signature-05#section-2.8
#[derive(Clone, Copy)]
pub struct AggregateSignature(min_pk::AggregateSignature);

impl AggregateSignature {
    /// The empty aggregate: the point at infinity.
    pub fn infinity() -> Self {
        Self(min_pk::AggregateSignature::from_signature(
            &Signature::infinity().0,
        ))
    }

    /// Adds a signature (already subgroup-checked by [`Signature::deserialize`]).
    pub fn add(&mut self, signature: &Signature) {
        self.0
            .add_signature(&signature.0, false)
            .expect("adding without a group check cannot fail");
    }

    /// The sum as a [`Signature`].
    pub fn to_signature(&self) -> Signature {
        Signature(self.0.to_signature())
    }

    /// The compressed encoding of the sum.
    pub fn serialize(&self) -> [u8; SIGNATURE_BYTES_LEN] {
        self.to_signature().serialize()
    }
}

impl fmt::Debug for AggregateSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AggregateSignature({:?})", self.to_signature())
    }
}
