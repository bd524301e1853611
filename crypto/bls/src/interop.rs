//! The interop keys of dev networks and tests.

use crate::SecretKey;

/// The BLS12-381 group order `r`, as little-endian 64-bit limbs.
const CURVE_ORDER: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// The interop secret key of validator `index`: `int.from_bytes(sha256(uint_to_bytes32(index)),
/// 'little') % r`, the keys every client's dev mode uses.
///
/// (The interop key generation of `ethereum/eth2.0-pm`, `interop/mocked_start/keygen.py`.)
pub fn interop_secret_key(index: usize) -> SecretKey {
    let mut preimage = [0u8; 32];
    preimage[..8].copy_from_slice(&(index as u64).to_le_bytes());
    let digest = ethereum_hashing::hash_fixed(&preimage);
    let mut limbs = [0u64; 4];
    for (i, limb) in limbs.iter_mut().enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest[i * 8..i * 8 + 8]);
        *limb = u64::from_le_bytes(bytes);
    }
    // 2**256 < 3r: at most two subtractions reduce the digest.
    while !less_than(&limbs, &CURVE_ORDER) {
        limbs = subtract(&limbs, &CURVE_ORDER);
    }
    let mut big_endian = [0u8; 32];
    for (i, limb) in limbs.iter().enumerate() {
        big_endian[32 - 8 * (i + 1)..32 - 8 * i].copy_from_slice(&limb.to_be_bytes());
    }
    SecretKey::from_bytes(&big_endian)
        .expect("a reduced interop key is below r, and zero only with probability 2**-255")
}

fn less_than(a: &[u64; 4], b: &[u64; 4]) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    false
}

fn subtract(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut out = [0u64; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out[i] = d;
        borrow = b1 || b2;
    }
    out
}
