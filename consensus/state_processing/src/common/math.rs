//! The spec's math and crypto helpers.
//!
//! [spec]: phase0/beacon-chain.md#math (and phase0/beacon-chain.md#crypto)

use ethereum_hashing::hash_fixed;
use types::Root;

/// `integer_squareroot(n)`: the largest `x` with `x * x <= n`.
///
/// [spec]: phase0/beacon-chain.md#integer_squareroot
pub fn integer_squareroot(n: u64) -> u64 {
    if n == u64::MAX {
        return 4_294_967_295; // the spec's special case: floor(sqrt(2**64 - 1))
    }
    let mut x = n;
    let mut y = x.div_ceil(2);
    while y < x {
        x = y;
        y = (x + n / x) / 2;
    }
    x
}

/// `bytes_to_uint64(data)`: little-endian, up to 8 bytes.
pub fn bytes_to_uint64(data: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = data.len().min(8);
    buf[..n].copy_from_slice(&data[..n]);
    u64::from_le_bytes(buf)
}

/// `hash(data)`: SHA-256.
pub fn hash(data: &[u8]) -> Root {
    Root::from(hash_fixed(data))
}
