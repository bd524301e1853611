//! Byte-level deltas between two SSZ encodings of a `BeaconState`.
//!
//! A diff describes a target byte string as a sequence of operations over a base:
//!
//! - `Copy { base_offset, len }`: the bytes are the same as the base's at `base_offset`;
//! - `Xor { base_offset, len, bytes }`: the bytes are the base's XOR `bytes` (values that changed
//!   in place, such as balances, XOR to mostly zeros, which compress well);
//! - `Insert { bytes }`: new bytes with no counterpart in the base.
//!
//! The encoder is schema-free: it does not parse the state, so it works for every fork. It
//! follows the base at a predicted offset (which moves when a list before it grew or shrank) and
//! resynchronises after an insertion by looking up a rolling hash of the target in an index of
//! the base's aligned `BLOCK`-byte blocks (the rsync idea). The operation stream is compressed
//! with Snappy.
//!
//! Decoding checks every offset and length against the base and the declared target length:
//! a damaged diff is an error, never a panic or an out-of-bounds read.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Block size of the base index, in bytes. Smaller finds shorter matches at the price of a
/// larger index.
const BLOCK: usize = 64;
/// Multiplier of the rolling polynomial hash (odd, so it is invertible modulo 2^64).
const PRIME: u64 = 0x0000_0100_0000_01b3;
/// First byte of every diff, so a future encoding can be told apart.
const FORMAT_VERSION: u8 = 1;

const OP_COPY: u8 = 0;
const OP_XOR: u8 = 1;
const OP_INSERT: u8 = 2;

/// Why a diff could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// The diff's first byte is not a format version this code knows.
    #[error("unknown diff format version {0}")]
    UnknownVersion(u8),
    /// The operation stream does not decompress.
    #[error("diff is not valid snappy: {0}")]
    Decompress(String),
    /// The diff is empty or ends in the middle of an operation.
    #[error("diff ends in the middle of an operation")]
    Truncated,
    /// An operation byte that is neither copy, XOR nor insert.
    #[error("unknown diff operation {0}")]
    UnknownOperation(u8),
    /// A copy or XOR reads past the end of the base.
    #[error("diff reads base bytes {offset}..{offset}+{len}, but the base has {base_len} bytes")]
    BaseOutOfRange {
        /// Offset in the base the operation reads from.
        offset: u64,
        /// Number of bytes it reads.
        len: u64,
        /// Length of the base.
        base_len: usize,
    },
    /// The operations produce a target of a length other than the one the diff declares.
    #[error("diff produces {produced} bytes, but declares {declared}")]
    LengthMismatch {
        /// Bytes the operations produced (decoding stops once past `declared`).
        produced: u64,
        /// Target length declared at the start of the diff.
        declared: u64,
    },
}

/// Hashes `u64` keys that are already hashes, with a final mix so every bit is used.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type BlockIndex = HashMap<u64, u32, BuildHasherDefault<MixHasher>>;

/// The polynomial hash of one block: `sum(b[j] * PRIME^(BLOCK-1-j))` modulo 2^64.
fn block_hash(block: &[u8]) -> u64 {
    block.iter().fold(0u64, |h, &b| {
        h.wrapping_mul(PRIME).wrapping_add(u64::from(b))
    })
}

/// `PRIME^(BLOCK-1)`, the weight of the byte leaving the rolling window.
fn leaving_weight() -> u64 {
    (1..BLOCK).fold(1u64, |w, _| w.wrapping_mul(PRIME))
}

/// Length of the common prefix of `a` and `b`, compared eight bytes at a time.
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let max = a.len().min(b.len());
    let mut n = 0;
    for (x, y) in a[..max].chunks_exact(8).zip(b[..max].chunks_exact(8)) {
        if x != y {
            break;
        }
        n += 8;
    }
    n + a[n..max]
        .iter()
        .zip(&b[n..max])
        .take_while(|(x, y)| x == y)
        .count()
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(input: &[u8], pos: &mut usize) -> Result<u64, DiffError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *input.get(*pos).ok_or(DiffError::Truncated)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DiffError::Truncated)
}

/// Encodes `target` as a compressed diff against `base`.
pub fn compute_diff(base: &[u8], target: &[u8]) -> Vec<u8> {
    let mut index = BlockIndex::with_capacity_and_hasher(base.len() / BLOCK, Default::default());
    for (i, block) in base.chunks_exact(BLOCK).enumerate() {
        // The first occurrence wins; offsets fit in u32 blocks for bases up to 256 GiB.
        index.entry(block_hash(block)).or_insert(i as u32);
    }
    let weight = leaving_weight();

    let mut ops = Vec::with_capacity(target.len() / 16);
    put_varint(&mut ops, target.len() as u64);

    // `base offset = target offset + delta` is where the target is expected to continue the base.
    let mut delta: i64 = 0;
    let mut t = 0usize;
    let mut literal_start = 0usize;
    let mut literal_delta: i64 = 0;
    let mut rolling: Option<u64> = None;

    let flush_literal = |ops: &mut Vec<u8>, start: usize, end: usize, delta: i64| {
        if start == end {
            return;
        }
        let bytes = &target[start..end];
        let base_start = start as i64 + delta;
        if base_start >= 0 && base_start as usize + bytes.len() <= base.len() {
            let base_start = base_start as usize;
            ops.push(OP_XOR);
            put_varint(ops, base_start as u64);
            put_varint(ops, bytes.len() as u64);
            ops.extend(
                bytes
                    .iter()
                    .zip(&base[base_start..base_start + bytes.len()])
                    .map(|(a, b)| a ^ b),
            );
        } else {
            ops.push(OP_INSERT);
            put_varint(ops, bytes.len() as u64);
            ops.extend_from_slice(bytes);
        }
    };

    while t < target.len() {
        // 1. Does the target continue the base where we expect it to?
        let predicted = t as i64 + delta;
        if predicted >= 0 && (predicted as usize) < base.len() {
            let b = predicted as usize;
            let n = common_prefix_len(&target[t..], &base[b..]);
            if n >= BLOCK || (n > 0 && t + n == target.len()) {
                flush_literal(&mut ops, literal_start, t, literal_delta);
                ops.push(OP_COPY);
                put_varint(&mut ops, b as u64);
                put_varint(&mut ops, n as u64);
                t += n;
                literal_start = t;
                literal_delta = delta;
                rolling = None;
                continue;
            }
        }
        // 2. Does the block starting here appear anywhere in the base?
        if t + BLOCK <= target.len() {
            let h = match rolling {
                Some(h) => h,
                None => block_hash(&target[t..t + BLOCK]),
            };
            rolling = Some(h);
            if let Some(&i) = index.get(&h) {
                let b = i as usize * BLOCK;
                if base[b..b + BLOCK] == target[t..t + BLOCK] {
                    delta = b as i64 - t as i64;
                    continue;
                }
            }
            // Slide the window by one byte.
            rolling = (t + BLOCK < target.len()).then(|| {
                h.wrapping_sub(u64::from(target[t]).wrapping_mul(weight))
                    .wrapping_mul(PRIME)
                    .wrapping_add(u64::from(target[t + BLOCK]))
            });
        }
        if literal_start == t {
            literal_delta = delta;
        }
        t += 1;
    }
    flush_literal(&mut ops, literal_start, t, literal_delta);

    let mut out = Vec::with_capacity(ops.len() / 2 + 1);
    out.push(FORMAT_VERSION);
    out.extend(
        snap::raw::Encoder::new()
            .compress_vec(&ops)
            .expect("snappy accepts every input below 4 GiB; states are far smaller"),
    );
    out
}

/// Rebuilds the target from `base` and a diff made by [`compute_diff`].
pub fn apply_diff(base: &[u8], diff: &[u8]) -> Result<Vec<u8>, DiffError> {
    let (&version, compressed) = diff.split_first().ok_or(DiffError::Truncated)?;
    if version != FORMAT_VERSION {
        return Err(DiffError::UnknownVersion(version));
    }
    let ops = snap::raw::Decoder::new()
        .decompress_vec(compressed)
        .map_err(|e| DiffError::Decompress(e.to_string()))?;

    let mut pos = 0;
    let declared = get_varint(&ops, &mut pos)?;
    // Never trust the declared length for an allocation larger than the operations justify.
    let mut out = Vec::with_capacity((declared as usize).min(base.len() + ops.len()));
    let base_range = |offset: u64, len: u64| -> Result<std::ops::Range<usize>, DiffError> {
        match offset.checked_add(len) {
            Some(end) if end <= base.len() as u64 => Ok(offset as usize..end as usize),
            _ => Err(DiffError::BaseOutOfRange {
                offset,
                len,
                base_len: base.len(),
            }),
        }
    };
    let take = |pos: &mut usize, len: u64| -> Result<std::ops::Range<usize>, DiffError> {
        let end = (*pos as u64)
            .checked_add(len)
            .filter(|&end| end <= ops.len() as u64)
            .ok_or(DiffError::Truncated)?;
        let range = *pos..end as usize;
        *pos = end as usize;
        Ok(range)
    };
    while pos < ops.len() {
        let op = ops[pos];
        pos += 1;
        match op {
            OP_COPY => {
                let offset = get_varint(&ops, &mut pos)?;
                let len = get_varint(&ops, &mut pos)?;
                out.extend_from_slice(&base[base_range(offset, len)?]);
            }
            OP_XOR => {
                let offset = get_varint(&ops, &mut pos)?;
                let len = get_varint(&ops, &mut pos)?;
                let source = base_range(offset, len)?;
                let bytes = take(&mut pos, len)?;
                out.extend(ops[bytes].iter().zip(&base[source]).map(|(a, b)| a ^ b));
            }
            OP_INSERT => {
                let len = get_varint(&ops, &mut pos)?;
                let bytes = take(&mut pos, len)?;
                out.extend_from_slice(&ops[bytes]);
            }
            other => return Err(DiffError::UnknownOperation(other)),
        }
        if out.len() as u64 > declared {
            break;
        }
    }
    if out.len() as u64 != declared {
        return Err(DiffError::LengthMismatch {
            produced: out.len() as u64,
            declared,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random bytes.
    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    }

    fn round_trip(base: &[u8], target: &[u8]) -> usize {
        let diff = compute_diff(base, target);
        assert_eq!(apply_diff(base, &diff).unwrap(), target);
        diff.len()
    }

    #[test]
    fn identical_inputs_give_a_tiny_diff() {
        let base = noise(100_000, 1);
        assert!(round_trip(&base, &base) < 32);
    }

    #[test]
    fn in_place_changes_are_xored_against_the_base() {
        let base = noise(200_000, 2);
        let mut target = base.clone();
        // Low bytes of "balances" change everywhere in a 16 KiB region.
        for i in (50_000..66_384).step_by(8) {
            target[i] = target[i].wrapping_add(3);
        }
        let size = round_trip(&base, &target);
        assert!(
            size < 8_000,
            "diff of 2,048 changed bytes took {size} bytes"
        );
    }

    #[test]
    fn insertion_shifts_are_resynchronised() {
        let base = noise(300_000, 3);
        let mut target = base[..1_000].to_vec();
        target.extend(noise(72, 4)); // a list before the rest grew by one element
        target.extend_from_slice(&base[1_000..250_000]);
        target.extend_from_slice(&base[250_121..]); // a later list lost one element
        target.extend(noise(121 * 3, 5)); // appended at the end
        let size = round_trip(&base, &target);
        assert!(size < 1_500, "diff took {size} bytes");
    }

    #[test]
    fn empty_and_short_inputs_round_trip() {
        round_trip(&[], &[]);
        round_trip(&[], b"new");
        round_trip(b"old", &[]);
        round_trip(b"abc", b"abd");
        round_trip(&noise(63, 6), &noise(65, 7));
    }

    #[test]
    fn random_edits_round_trip() {
        for seed in 0..20u64 {
            let base = noise(5_000 + seed as usize * 97, seed);
            let mut target = base.clone();
            let edits = noise(64, seed + 100);
            for pair in edits.chunks(4) {
                let at = (usize::from(pair[0]) * 19 + usize::from(pair[1])) % target.len();
                match pair[2] % 3 {
                    0 => target[at] ^= pair[3] | 1,
                    1 => target.insert(at, pair[3]),
                    _ => {
                        target.remove(at);
                    }
                }
            }
            round_trip(&base, &target);
        }
    }

    #[test]
    fn damaged_diffs_are_errors() {
        let base = noise(10_000, 8);
        let mut target = base.clone();
        target[5_000] ^= 1;
        let diff = compute_diff(&base, &target);

        assert_eq!(apply_diff(&base, &[]), Err(DiffError::Truncated));
        let mut wrong_version = diff.clone();
        wrong_version[0] = 9;
        assert_eq!(
            apply_diff(&base, &wrong_version),
            Err(DiffError::UnknownVersion(9))
        );
        // Every truncation and every single-byte corruption is an error or a different output,
        // never a panic.
        for cut in 0..diff.len() {
            assert!(apply_diff(&base, &diff[..cut]).is_err());
        }
        for i in 1..diff.len() {
            let mut bad = diff.clone();
            bad[i] ^= 0x5a;
            if let Ok(out) = apply_diff(&base, &bad) {
                assert_ne!(out, target);
            }
        }
        // A diff applied to a shorter base reads out of range.
        assert!(apply_diff(&base[..100], &diff).is_err());
    }
}
