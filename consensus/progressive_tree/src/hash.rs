//! SHA-256 of two chunks, and the roots of all-zero subtrees.
//!
//! The two-chunk SHA-256 is `packed_list`'s: SHA-NI with the constant padding block's schedule
//! precomputed, and two independent messages interleaved (a pair costs about one hash), or
//! `sha2`'s compression function elsewhere (`packed_list`'s README: 100,000 hashes take 3.9 ms
//! on two lanes against 6.2 ms through `sha2::compress256`), exported as `packed_list::hashing`.
//!
//! [spec]: ssz/simple-serialize.md#merkleization

use std::sync::LazyLock;

/// Bytes in a Merkle chunk.
pub(crate) const CHUNK_LEN: usize = 32;

/// One 32-byte Merkle chunk or node.
pub(crate) type Chunk = [u8; CHUNK_LEN];

/// `sha256(left ++ right)`.
pub(crate) use packed_list::hashing::hash_pair_fast as hash_pair;
/// Two independent `sha256(left ++ right)`s, interleaved: about the cost of one.
pub(crate) use packed_list::hashing::hash_pairs_x2;

/// `ZERO_HASHES[h]`: the root of a tree of `2^h` zero chunks.
static ZERO_HASHES: LazyLock<[Chunk; 65]> = LazyLock::new(|| {
    let mut hashes = [[0u8; CHUNK_LEN]; 65];
    for h in 1..hashes.len() {
        hashes[h] = hash_pair(&hashes[h - 1], &hashes[h - 1]);
    }
    hashes
});

/// The root of a tree of `2^height` zero chunks.
pub(crate) fn zero_hash(height: usize) -> &'static Chunk {
    &ZERO_HASHES[height.min(64)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_pair_is_sha256_of_the_concatenation() {
        for (l, r) in [
            ([0u8; 32], [0u8; 32]),
            ([1; 32], [2; 32]),
            ([0xff; 32], [0x80; 32]),
        ] {
            assert_eq!(hash_pair(&l, &r), ethereum_hashing::hash32_concat(&l, &r));
        }
        let mut z = [0u8; 32];
        for h in 0..40 {
            assert_eq!(*zero_hash(h), z);
            z = ethereum_hashing::hash32_concat(&z, &z);
        }
    }
}
