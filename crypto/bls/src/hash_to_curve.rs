//! `hash_to_G2`, exposed for the spec tests.

use blst::min_pk;

/// The affine coordinates of a G2 point, each a big-endian Fp element; `x = x_c0 + x_c1·u`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct G2Coordinates {
    /// Real part of x.
    pub x_c0: [u8; 48],
    /// Imaginary part of x.
    pub x_c1: [u8; 48],
    /// Real part of y.
    pub y_c0: [u8; 48],
    /// Imaginary part of y.
    pub y_c1: [u8; 48],
}

/// `hash_to_curve` onto G2 (`BLS12381G2_XMD:SHA-256_SSWU_RO_`) with the given domain separation
/// tag, as affine coordinates.
///
/// [spec]: https://datatracker.ietf.org/doc/html/rfc9380#section-8.8.2
pub fn hash_to_g2(message: &[u8], dst: &[u8]) -> G2Coordinates {
    // blst's safe API reaches hash-to-curve only through `sign`, which returns H(m)·sk: with the
    // secret key 1 that is H(m) itself.
    let mut one = [0u8; 32];
    one[31] = 1;
    let sk = min_pk::SecretKey::from_bytes(&one).expect("1 is a valid secret key");
    // Uncompressed ZCash encoding: x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0, 48 bytes each, no flags set for a
    // finite point.
    let bytes = sk.sign(message, dst, &[]).serialize();
    let part = |i: usize| -> [u8; 48] {
        let mut out = [0u8; 48];
        out.copy_from_slice(&bytes[i * 48..(i + 1) * 48]);
        out
    };
    G2Coordinates {
        x_c1: part(0),
        x_c0: part(1),
        y_c1: part(2),
        y_c0: part(3),
    }
}
