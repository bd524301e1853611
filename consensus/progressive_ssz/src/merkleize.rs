//! The progressive Merkle tree shape of EIP-7916 and the mix-ins of EIP-7495 and EIP-8016.

use tree_hash::{BYTES_PER_CHUNK, Hash256};

/// The most `active_fields` entries a progressive container may have: they must pack into one
/// chunk.
///
/// [spec]: ssz/simple-serialize.md#illegal-types
pub const MAX_ACTIVE_FIELDS: usize = 256;

/// Hashes two 32-byte nodes into their parent node.
pub(crate) fn hash_pair(left: &Hash256, right: &Hash256) -> Hash256 {
    Hash256::from(ethereum_hashing::hash32_concat(
        left.as_slice(),
        right.as_slice(),
    ))
}

/// `merkleize_progressive(chunks)` over `chunk_bytes`, the chunks concatenated (a final partial
/// chunk counts as one chunk, right-padded with zeros).
///
/// The tree is a chain of perfect subtrees of 1, 4, 16, … leaves: the root is
/// `hash(merkleize(chunks[:1], 1), hash(merkleize(chunks[1:5], 4), hash(…, Bytes32())))`. No
/// chunks gives the zero node.
///
/// [spec]: ssz/simple-serialize.md#merkleization (EIP-7916)
pub fn merkleize_progressive(chunk_bytes: &[u8]) -> Hash256 {
    let mut subtree_roots = Vec::new();
    let mut rest = chunk_bytes;
    let mut num_leaves: usize = 1;
    while !rest.is_empty() {
        let take = rest.len().min(num_leaves.saturating_mul(BYTES_PER_CHUNK));
        let (subtree, tail) = rest.split_at(take);
        subtree_roots.push(tree_hash::merkle_root(subtree, num_leaves));
        rest = tail;
        num_leaves = num_leaves.saturating_mul(4);
    }
    // The last subtree's right sibling is the zero node that ends the chain.
    subtree_roots
        .iter()
        .rev()
        .fold(Hash256::ZERO, |right, left| hash_pair(left, &right))
}

/// `pack_bits(active_fields)`: the active-fields bitvector as one chunk, bit `i` at bit `i % 8`
/// of byte `i / 8`. Entries past [`MAX_ACTIVE_FIELDS`] are ignored (such a configuration is
/// illegal; [`active_fields_are_valid`] rejects it).
pub fn pack_active_fields(active_fields: &[bool]) -> Hash256 {
    let mut chunk = [0u8; BYTES_PER_CHUNK];
    for (i, _) in active_fields
        .iter()
        .enumerate()
        .take(MAX_ACTIVE_FIELDS)
        .filter(|(_, active)| **active)
    {
        chunk[i / 8] |= 1 << (i % 8);
    }
    Hash256::from(chunk)
}

/// `mix_in_active_fields(root, active_fields)`: `hash(root, pack_bits(active_fields))`.
///
/// [spec]: ssz/simple-serialize.md#merkleization (EIP-7495)
pub fn mix_in_active_fields(root: &Hash256, active_fields: &[bool]) -> Hash256 {
    hash_pair(root, &pack_active_fields(active_fields))
}

/// `mix_in_selector(root, selector)`: `hash(root, selector)` with the selector as a `uint8`
/// chunk.
///
/// [spec]: ssz/simple-serialize.md#merkleization (EIP-8016)
pub fn mix_in_selector(root: &Hash256, selector: u8) -> Hash256 {
    let mut chunk = [0u8; BYTES_PER_CHUNK];
    chunk[0] = selector;
    hash_pair(root, &Hash256::from(chunk))
}

/// Whether `active_fields` is a legal EIP-7495 configuration for a container of `num_fields`
/// fields: non-empty, at most [`MAX_ACTIVE_FIELDS`] entries, ending in `1`, with one `1` per
/// field.
///
/// [spec]: ssz/simple-serialize.md#illegal-types
pub const fn active_fields_are_valid(active_fields: &[bool], num_fields: usize) -> bool {
    let len = active_fields.len();
    if len == 0 || len > MAX_ACTIVE_FIELDS || !active_fields[len - 1] {
        return false;
    }
    let mut active = 0;
    let mut i = 0;
    while i < len {
        if active_fields[i] {
            active += 1;
        }
        i += 1;
    }
    active == num_fields
}

/// `hash_tree_root` of a progressive container from the roots of its fields in declaration
/// order: `mix_in_active_fields(merkleize_progressive(chunks), active_fields)`, where chunk `i`
/// is the next field root when `active_fields[i]` and the zero chunk otherwise.
///
/// Field roots beyond the active entries are ignored and missing ones count as zero; callers
/// pass exactly one root per active entry (see [`active_fields_are_valid`]).
///
/// [spec]: ssz/simple-serialize.md#merkleization (EIP-7495)
pub fn progressive_container_root(
    active_fields: &[bool],
    field_roots: impl IntoIterator<Item = Hash256>,
) -> Hash256 {
    let mut field_roots = field_roots.into_iter();
    let mut chunk_bytes = Vec::with_capacity(active_fields.len() * BYTES_PER_CHUNK);
    for &active in active_fields {
        let root = if active {
            field_roots.next().unwrap_or(Hash256::ZERO)
        } else {
            Hash256::ZERO
        };
        chunk_bytes.extend_from_slice(root.as_slice());
    }
    mix_in_active_fields(&merkleize_progressive(&chunk_bytes), active_fields)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn c(byte: u8) -> Hash256 {
        Hash256::from([byte; 32])
    }

    fn chunks(bytes: &[u8]) -> Vec<u8> {
        bytes.iter().flat_map(|&b| [b; 32]).collect()
    }

    /// `merkleize(chunks, limit)` of the spec, padding to `limit` (a power of two) with zero
    /// chunks and hashing level by level.
    fn reference_merkleize(chunks: &[Hash256], limit: usize) -> Hash256 {
        let mut level: Vec<Hash256> = chunks.to_vec();
        level.resize(limit, Hash256::ZERO);
        while level.len() > 1 {
            level = level
                .chunks_exact(2)
                .map(|pair| hash_pair(&pair[0], &pair[1]))
                .collect();
        }
        level[0]
    }

    /// `merkleize_progressive(chunks, num_leaves)` written as the spec's recursion.
    fn reference_merkleize_progressive(chunks: &[Hash256], num_leaves: usize) -> Hash256 {
        if chunks.is_empty() {
            return Hash256::ZERO;
        }
        let split = chunks.len().min(num_leaves);
        hash_pair(
            &reference_merkleize(&chunks[..split], num_leaves),
            &reference_merkleize_progressive(&chunks[split..], num_leaves * 4),
        )
    }

    fn to_chunks(bytes: &[u8]) -> Vec<Hash256> {
        bytes
            .chunks(32)
            .map(|chunk| {
                let mut padded = [0u8; 32];
                padded[..chunk.len()].copy_from_slice(chunk);
                Hash256::from(padded)
            })
            .collect()
    }

    #[test]
    fn merkleize_progressive_of_nothing_is_zero() {
        assert_eq!(merkleize_progressive(&[]), Hash256::ZERO);
    }

    #[test]
    fn merkleize_progressive_of_one_chunk_hashes_it_with_zero() {
        assert_eq!(
            merkleize_progressive(&chunks(&[1])),
            hash_pair(&c(1), &Hash256::ZERO)
        );
    }

    #[test]
    fn merkleize_progressive_pads_a_partial_chunk() {
        let mut padded = [0u8; 32];
        padded[0] = 7;
        assert_eq!(
            merkleize_progressive(&[7]),
            hash_pair(&Hash256::from(padded), &Hash256::ZERO)
        );
    }

    #[test]
    fn merkleize_progressive_of_two_chunks_pads_the_second_subtree_to_four() {
        let zero = Hash256::ZERO;
        let second = hash_pair(&hash_pair(&c(2), &zero), &hash_pair(&zero, &zero));
        assert_eq!(
            merkleize_progressive(&chunks(&[1, 2])),
            hash_pair(&c(1), &hash_pair(&second, &zero))
        );
    }

    #[test]
    fn merkleize_progressive_matches_reference_at_subtree_boundaries() {
        for n in [0usize, 1, 2, 4, 5, 6, 20, 21, 22, 85, 86, 100] {
            let bytes: Vec<u8> = (0..n).flat_map(|i| [i as u8 ^ 0x5a; 32]).collect();
            assert_eq!(
                merkleize_progressive(&bytes),
                reference_merkleize_progressive(&to_chunks(&bytes), 1),
                "{n} chunks"
            );
        }
    }

    #[test]
    fn pack_active_fields_sets_one_bit_per_active_entry() {
        let mut expected = [0u8; 32];
        expected[0] = 0b0000_0101;
        expected[1] = 0b0000_0010;
        let fields = [
            true, false, true, false, false, false, false, false, false, true,
        ];
        assert_eq!(pack_active_fields(&fields), Hash256::from(expected));
    }

    #[test]
    fn progressive_container_root_puts_inactive_fields_at_zero_chunks() {
        let zero = Hash256::ZERO;
        let second = hash_pair(&hash_pair(&zero, &c(2)), &hash_pair(&zero, &zero));
        let mut active = [0u8; 32];
        active[0] = 0b101;
        let expected = hash_pair(
            &hash_pair(&c(1), &hash_pair(&second, &zero)),
            &Hash256::from(active),
        );
        assert_eq!(
            progressive_container_root(&[true, false, true], [c(1), c(2)]),
            expected
        );
    }

    #[test]
    fn mix_in_selector_hashes_selector_chunk() {
        let mut selector = [0u8; 32];
        selector[0] = 5;
        assert_eq!(
            mix_in_selector(&c(3), 5),
            hash_pair(&c(3), &Hash256::from(selector))
        );
    }

    #[test]
    fn active_fields_validation() {
        assert!(active_fields_are_valid(&[true], 1));
        assert!(active_fields_are_valid(&[true, false, true], 2));
        assert!(active_fields_are_valid(&[true; 256], 256));
        assert!(!active_fields_are_valid(&[], 0));
        assert!(!active_fields_are_valid(&[true, false], 1));
        assert!(!active_fields_are_valid(&[true, true], 1));
        assert!(!active_fields_are_valid(&[true; 257], 257));
    }

    proptest! {
        #[test]
        fn merkleize_progressive_equals_reference(bytes in proptest::collection::vec(any::<u8>(), 0..(32 * 90))) {
            prop_assert_eq!(
                merkleize_progressive(&bytes),
                reference_merkleize_progressive(&to_chunks(&bytes), 1)
            );
        }
    }
}
