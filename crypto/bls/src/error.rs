//! The crate's one error type.

use std::fmt;

use blst::BLST_ERROR;

/// Which kind of encoded point an [`Error`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A 48-byte compressed G1 point: a public key.
    PublicKey,
    /// A 96-byte compressed G2 point: a signature.
    Signature,
}

impl fmt::Display for PointKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PointKind::PublicKey => "public key (G1)",
            PointKind::Signature => "signature (G2)",
        })
    }
}

/// Why a key, a signature or an input list was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The byte string has the wrong length for what it encodes.
    #[error("{what}: expected {expected} bytes, got {got}")]
    WrongLength {
        /// What was being decoded.
        what: &'static str,
        /// The length the encoding requires.
        expected: usize,
        /// The length received.
        got: usize,
    },
    /// The flag bits are wrong (compression flag unset, infinity flag with a non-zero body, sort
    /// flag on infinity) or a coordinate is not a canonical field element (≥ p).
    #[error("{0}: invalid encoding (flags or non-canonical field element)")]
    BadEncoding(PointKind),
    /// The x coordinate has no matching y on the curve.
    #[error("{0}: point is not on the curve")]
    NotOnCurve(PointKind),
    /// The point is on the curve but outside the prime-order subgroup.
    #[error("{0}: point is not in the prime-order subgroup")]
    NotInSubgroup(PointKind),
    /// A public key is the point at infinity, which `KeyValidate` rejects.
    #[error("public key is the point at infinity")]
    InfinityPublicKey,
    /// The secret key is zero.
    #[error("secret key is zero")]
    ZeroSecretKey,
    /// The secret key is not below the group order r.
    #[error("secret key is not below the group order r")]
    SecretKeyOutOfRange,
    /// A list that the spec requires to be non-empty is empty.
    #[error("{0}: empty input")]
    EmptyInput(&'static str),
}

impl Error {
    /// Maps blst's error code for a point of `kind`.
    pub(crate) fn from_blst(kind: PointKind, err: BLST_ERROR) -> Self {
        match err {
            BLST_ERROR::BLST_POINT_NOT_ON_CURVE => Error::NotOnCurve(kind),
            BLST_ERROR::BLST_POINT_NOT_IN_GROUP => Error::NotInSubgroup(kind),
            BLST_ERROR::BLST_PK_IS_INFINITY if kind == PointKind::PublicKey => {
                Error::InfinityPublicKey
            }
            _ => Error::BadEncoding(kind),
        }
    }
}
