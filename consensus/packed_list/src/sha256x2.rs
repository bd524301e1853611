//! SHA-256 of 64-byte messages (two chunks), one or two at a time.
//!
//! Every Merkle node hashes exactly 64 bytes, so the second compression always runs on the same
//! padding block; its message schedule plus round constants is a compile-time table
//! ([`PADDING_WK`]) and that compression does no schedule work at all. With SHA-NI the rounds of
//! two independent messages are interleaved in one function: `sha256rnds2` is latency-bound, and
//! two dependency chains in flight keep the unit busy where one leaves it idle half the time (a
//! pair costs about what one dependent hash does; three or four lanes measured no faster).
//! Other CPUs and architectures use `sha2::compress256`.
//!
//! [spec]: FIPS 180-4, sections 5.3.3 (initial hash value), 6.2.2 (computation)

// Elsewhere the schedule tables have no user but the tests: `compress256` does its own schedule.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use crate::{CHUNK_LEN, Chunk};

/// The SHA-256 round constants `K[0..64]` (FIPS 180-4, 4.2.2).
const K: [u32; 64] = [
    0x428a_2f98,
    0x7137_4491,
    0xb5c0_fbcf,
    0xe9b5_dba5,
    0x3956_c25b,
    0x59f1_11f1,
    0x923f_82a4,
    0xab1c_5ed5,
    0xd807_aa98,
    0x1283_5b01,
    0x2431_85be,
    0x550c_7dc3,
    0x72be_5d74,
    0x80de_b1fe,
    0x9bdc_06a7,
    0xc19b_f174,
    0xe49b_69c1,
    0xefbe_4786,
    0x0fc1_9dc6,
    0x240c_a1cc,
    0x2de9_2c6f,
    0x4a74_84aa,
    0x5cb0_a9dc,
    0x76f9_88da,
    0x983e_5152,
    0xa831_c66d,
    0xb003_27c8,
    0xbf59_7fc7,
    0xc6e0_0bf3,
    0xd5a7_9147,
    0x06ca_6351,
    0x1429_2967,
    0x27b7_0a85,
    0x2e1b_2138,
    0x4d2c_6dfc,
    0x5338_0d13,
    0x650a_7354,
    0x766a_0abb,
    0x81c2_c92e,
    0x9272_2c85,
    0xa2bf_e8a1,
    0xa81a_664b,
    0xc24b_8b70,
    0xc76c_51a3,
    0xd192_e819,
    0xd699_0624,
    0xf40e_3585,
    0x106a_a070,
    0x19a4_c116,
    0x1e37_6c08,
    0x2748_774c,
    0x34b0_bcb5,
    0x391c_0cb3,
    0x4ed8_aa4a,
    0x5b9c_ca4f,
    0x682e_6ff3,
    0x748f_82ee,
    0x78a5_636f,
    0x84c8_7814,
    0x8cc7_0208,
    0x90be_fffa,
    0xa450_6ceb,
    0xbef9_a3f7,
    0xc671_78f2,
];

/// SHA-256's initial hash value `H(0)` (FIPS 180-4, 5.3.3).
const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The second block of every 64-byte message: the `0x80` terminator, zeros, and the message
/// length in bits (512) in the last eight bytes.
const PADDING_BLOCK: [u8; 64] = {
    let mut block = [0u8; 64];
    block[0] = 0x80;
    block[62] = 0x02;
    block
};

const fn small_sigma0(x: u32) -> u32 {
    x.rotate_right(7) ^ x.rotate_right(18) ^ (x >> 3)
}

const fn small_sigma1(x: u32) -> u32 {
    x.rotate_right(17) ^ x.rotate_right(19) ^ (x >> 10)
}

/// The message schedule `W[0..64]` of one block (FIPS 180-4, 6.2.2 step 1).
const fn message_schedule(block: &[u8; 64]) -> [u32; 64] {
    let mut w = [0u32; 64];
    let mut t = 0;
    while t < 16 {
        w[t] = u32::from_be_bytes([
            block[4 * t],
            block[4 * t + 1],
            block[4 * t + 2],
            block[4 * t + 3],
        ]);
        t += 1;
    }
    while t < 64 {
        w[t] = small_sigma1(w[t - 2])
            .wrapping_add(w[t - 7])
            .wrapping_add(small_sigma0(w[t - 15]))
            .wrapping_add(w[t - 16]);
        t += 1;
    }
    w
}

/// `W[t] + K[t]` of the padding block, in groups of four rounds: the whole input of the second
/// compression of a 64-byte message.
const PADDING_WK: [[u32; 4]; 16] = {
    let w = message_schedule(&PADDING_BLOCK);
    let mut wk = [[0u32; 4]; 16];
    let mut t = 0;
    while t < 64 {
        wk[t / 4][t % 4] = w[t].wrapping_add(K[t]);
        t += 1;
    }
    wk
};

/// `K` in groups of four rounds, to load four at once.
const K4: [[u32; 4]; 16] = {
    let mut k4 = [[0u32; 4]; 16];
    let mut t = 0;
    while t < 64 {
        k4[t / 4][t % 4] = K[t];
        t += 1;
    }
    k4
};

/// Whether this CPU runs the SHA-NI path, checked once.
#[cfg(target_arch = "x86_64")]
static SHA_NI: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
    std::is_x86_feature_detected!("sha") && std::is_x86_feature_detected!("ssse3")
});

/// Whether [`hash_pair_fast`] and [`hash_pairs_x2`] use SHA-NI on this machine.
#[cfg(target_arch = "x86_64")]
pub(crate) fn uses_sha_ni() -> bool {
    *SHA_NI
}

/// `hash(left + right)`: SHA-256 of one 64-byte message.
#[allow(unsafe_code)]
pub fn hash_pair_fast(left: &Chunk, right: &Chunk) -> Chunk {
    #[cfg(target_arch = "x86_64")]
    if uses_sha_ni() {
        // SAFETY: `uses_sha_ni` checked that the CPU has every feature `digest_lanes` enables.
        let [digest] = unsafe { sha_ni::digest_lanes([(left, right)]) };
        return digest;
    }
    hash_pair_portable(left, right)
}

/// `(hash(a.0 + a.1), hash(b.0 + b.1))`: SHA-256 of two independent 64-byte messages, their
/// rounds interleaved.
#[allow(unsafe_code)]
pub fn hash_pairs_x2(a: (&Chunk, &Chunk), b: (&Chunk, &Chunk)) -> (Chunk, Chunk) {
    #[cfg(target_arch = "x86_64")]
    if uses_sha_ni() {
        // SAFETY: `uses_sha_ni` checked that the CPU has every feature `digest_lanes` enables.
        let [da, db] = unsafe { sha_ni::digest_lanes([a, b]) };
        return (da, db);
    }
    (hash_pair_portable(a.0, a.1), hash_pair_portable(b.0, b.1))
}

/// The portable path: the bare compression function (which itself picks SHA-NI, AVX2 or plain
/// Rust at run time) over the message and the padding block, skipping the streaming hasher's
/// buffering and finalisation.
pub fn hash_pair_portable(left: &Chunk, right: &Chunk) -> Chunk {
    use sha2::digest::generic_array::GenericArray;

    let mut data = GenericArray::default();
    data[..CHUNK_LEN].copy_from_slice(left);
    data[CHUNK_LEN..].copy_from_slice(right);
    let mut state = SHA256_IV;
    sha2::compress256(
        &mut state,
        &[data, GenericArray::clone_from_slice(&PADDING_BLOCK)],
    );
    let mut out = [0u8; CHUNK_LEN];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// SHA-NI (Intel SHA extensions) compression of `N` independent 64-byte messages in lockstep.
///
/// The state lives in two registers as SHA-NI wants it: `abef` holds words `[F, E, B, A]` and
/// `cdgh` holds `[H, G, D, C]` (element 0 first). `sha256rnds2(cdgh, abef, wk)` runs two rounds
/// with the low two words of `wk` and returns the new `abef`; the old `abef` is then the new
/// `cdgh`, since two rounds shift A, B, E, F into C, D, G, H.
#[cfg(target_arch = "x86_64")]
mod sha_ni {
    use core::arch::x86_64::*;

    use super::{K4, PADDING_WK, SHA256_IV};
    use crate::{CHUNK_LEN, Chunk};

    /// Loads 16 bytes.
    #[allow(unsafe_code)]
    #[inline(always)]
    fn load_bytes(bytes: &[u8]) -> __m128i {
        assert!(bytes.len() >= 16, "a 16-byte load needs 16 bytes");
        // SAFETY: the assertion guarantees 16 readable bytes; `loadu` has no alignment
        // requirement and SSE2 is part of the x86_64 baseline.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    }

    /// Loads four words.
    #[allow(unsafe_code)]
    #[inline(always)]
    fn load_words(words: &[u32; 4]) -> __m128i {
        // SAFETY: `words` is 16 readable bytes; `loadu` has no alignment requirement and SSE2 is
        // part of the x86_64 baseline.
        unsafe { _mm_loadu_si128(words.as_ptr().cast()) }
    }

    /// Stores 16 bytes.
    #[allow(unsafe_code)]
    #[inline(always)]
    fn store_bytes(out: &mut [u8; 16], value: __m128i) {
        // SAFETY: `out` is 16 writable bytes; `storeu` has no alignment requirement and SSE2 is
        // part of the x86_64 baseline.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), value) }
    }

    /// Four message words `W[t..t + 4]` from 16 big-endian bytes.
    #[inline]
    #[target_feature(enable = "sha,ssse3")]
    fn message_words(bytes: &[u8]) -> __m128i {
        let swap_words = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
        _mm_shuffle_epi8(load_bytes(bytes), swap_words)
    }

    /// `W[t + 16..t + 20]` from `W[t..t + 16]` in four groups of four.
    #[inline]
    #[target_feature(enable = "sha,ssse3")]
    pub(super) fn next_words(w0: __m128i, w1: __m128i, w2: __m128i, w3: __m128i) -> __m128i {
        // msg1: W[t + i] + σ0(W[t + i + 1]); alignr: W[t + 9 + i]; msg2 adds σ1(W[t + 14 + i])
        // (the last two words depending on the first two it produces).
        let partial = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8::<4>(w3, w2));
        _mm_sha256msg2_epu32(partial, w3)
    }

    /// Four rounds with `wk = W[t..t + 4] + K[t..t + 4]`.
    #[inline]
    #[target_feature(enable = "sha,ssse3")]
    fn rounds4(abef: &mut __m128i, cdgh: &mut __m128i, wk: __m128i) {
        let mid = _mm_sha256rnds2_epu32(*cdgh, *abef, wk);
        *abef = _mm_sha256rnds2_epu32(*abef, mid, _mm_shuffle_epi32::<0b00_00_11_10>(wk));
        *cdgh = mid;
    }

    /// SHA-256 of `left + right` for each of the `N` messages; the loops over lanes sit inside
    /// the loops over rounds, so the lanes' independent dependency chains interleave.
    #[inline]
    #[target_feature(enable = "sha,ssse3")]
    pub(super) fn digest_lanes<const N: usize>(messages: [(&Chunk, &Chunk); N]) -> [Chunk; N] {
        let [a, b, c, d, e, f, g, h] = SHA256_IV.map(|word| word as i32);
        let iv_abef = _mm_set_epi32(a, b, e, f);
        let iv_cdgh = _mm_set_epi32(c, d, g, h);
        let mut abef = [iv_abef; N];
        let mut cdgh = [iv_cdgh; N];

        // First block, the message: a sliding window of the next 16 schedule words per lane.
        let mut window = messages.map(|(left, right)| {
            [
                message_words(&left[..16]),
                message_words(&left[16..]),
                message_words(&right[..16]),
                message_words(&right[16..]),
            ]
        });
        for (group, k) in K4.iter().enumerate() {
            let k = load_words(k);
            for lane in 0..N {
                let [w0, w1, w2, w3] = window[lane];
                rounds4(&mut abef[lane], &mut cdgh[lane], _mm_add_epi32(w0, k));
                if group < 12 {
                    window[lane] = [w1, w2, w3, next_words(w0, w1, w2, w3)];
                } else {
                    window[lane] = [w1, w2, w3, w0];
                }
            }
        }
        for lane in 0..N {
            abef[lane] = _mm_add_epi32(abef[lane], iv_abef);
            cdgh[lane] = _mm_add_epi32(cdgh[lane], iv_cdgh);
        }

        // Second block, the padding: schedule and constants come precomputed.
        let (mid_abef, mid_cdgh) = (abef, cdgh);
        for wk in &PADDING_WK {
            let wk = load_words(wk);
            for lane in 0..N {
                rounds4(&mut abef[lane], &mut cdgh[lane], wk);
            }
        }

        // `[D, C, B, A]` and `[H, G, F, E]`, byte-reversed as a whole, are the big-endian digest.
        let reverse = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut out = [[0u8; CHUNK_LEN]; N];
        for lane in 0..N {
            let abef = _mm_add_epi32(abef[lane], mid_abef[lane]);
            let cdgh = _mm_add_epi32(cdgh[lane], mid_cdgh[lane]);
            let (first, second) = out[lane].split_at_mut(16);
            let first: &mut [u8; 16] = first.try_into().expect("half a chunk is 16 bytes");
            let second: &mut [u8; 16] = second.try_into().expect("half a chunk is 16 bytes");
            store_bytes(
                first,
                _mm_shuffle_epi8(_mm_unpackhi_epi64(cdgh, abef), reverse),
            );
            store_bytes(
                second,
                _mm_shuffle_epi8(_mm_unpacklo_epi64(cdgh, abef), reverse),
            );
        }
        out
    }

    /// The full schedule of one block through `next_words`, to test it against the scalar one.
    #[cfg(test)]
    #[target_feature(enable = "sha,ssse3")]
    pub(super) fn schedule(block: &[u8; 64]) -> [u32; 64] {
        let mut groups = [_mm_setzero_si128(); 16];
        for (t, group) in groups.iter_mut().take(4).enumerate() {
            *group = message_words(&block[16 * t..]);
        }
        for t in 4..16 {
            groups[t] = next_words(groups[t - 4], groups[t - 3], groups[t - 2], groups[t - 1]);
        }
        let mut w = [0u32; 64];
        for (t, group) in groups.iter().enumerate() {
            let mut bytes = [0u8; 16];
            store_bytes(&mut bytes, *group);
            for (i, word) in bytes.chunks_exact(4).enumerate() {
                w[4 * t + i] = u32::from_le_bytes(word.try_into().expect("4-byte chunks"));
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitmix::SplitMix64;

    fn reference(left: &Chunk, right: &Chunk) -> Chunk {
        ethereum_hashing::hash32_concat(left, right)
    }

    fn random_chunk(rng: &mut SplitMix64) -> Chunk {
        let mut chunk = [0u8; CHUNK_LEN];
        rng.fill_bytes(&mut chunk);
        chunk
    }

    /// Zeros, ones, single bits at the word and byte edges, and 10,000 random pairs.
    fn inputs() -> Vec<(Chunk, Chunk)> {
        let mut pairs = vec![
            ([0; 32], [0; 32]),
            ([0xff; 32], [0xff; 32]),
            ([0; 32], [0xff; 32]),
            ([0xff; 32], [0; 32]),
            ([0x80; 32], [0x01; 32]),
        ];
        for bit in [0, 7, 8, 31, 32, 255] {
            let mut chunk = [0u8; 32];
            chunk[bit / 8] = 1 << (bit % 8);
            pairs.push((chunk, [0; 32]));
            pairs.push(([0; 32], chunk));
        }
        let mut rng = SplitMix64::new(0x5eed);
        for _ in 0..10_000 {
            pairs.push((random_chunk(&mut rng), random_chunk(&mut rng)));
        }
        pairs
    }

    #[test]
    fn hash_pair_fast_is_sha256_of_the_concatenation() {
        for (left, right) in inputs() {
            assert_eq!(hash_pair_fast(&left, &right), reference(&left, &right));
        }
    }

    #[test]
    fn hash_pairs_x2_hashes_each_pair_independently() {
        let pairs = inputs();
        // Neighbours, and pairs far apart (so no lane sees the same input twice in a row).
        for (x, y) in pairs
            .iter()
            .zip(pairs.iter().skip(1).chain(pairs.iter().rev()))
        {
            let (hx, hy) = hash_pairs_x2((&x.0, &x.1), (&y.0, &y.1));
            assert_eq!(hx, reference(&x.0, &x.1));
            assert_eq!(hy, reference(&y.0, &y.1));
        }
    }

    #[test]
    fn the_same_pair_in_both_lanes_hashes_the_same() {
        let pair = ([7u8; 32], [9u8; 32]);
        let (a, b) = hash_pairs_x2((&pair.0, &pair.1), (&pair.0, &pair.1));
        assert_eq!(a, b);
        assert_eq!(a, reference(&pair.0, &pair.1));
    }

    #[test]
    fn portable_path_is_sha256_of_the_concatenation() {
        for (left, right) in inputs().into_iter().take(2_000) {
            assert_eq!(hash_pair_portable(&left, &right), reference(&left, &right));
        }
    }

    /// `K[t]` is the first 32 bits of the fractional part of the cube root of the `t`-th prime:
    /// `floor(cbrt(p * 2^96)) mod 2^32`, by integer binary search.
    #[test]
    fn round_constants_are_the_cube_roots_of_the_first_primes() {
        let primes: Vec<u128> = (2u128..)
            .filter(|&n| (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0))
            .take(64)
            .collect();
        for (t, &p) in primes.iter().enumerate() {
            let target = p << 96;
            let (mut lo, mut hi) = (0u128, 1u128 << 36);
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if mid * mid * mid <= target {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            assert_eq!(lo as u32, K[t], "K[{t}]");
        }
    }

    #[test]
    fn padding_schedule_is_the_padding_blocks_schedule() {
        // Computed the long way here: W[0] = 0x80000000, W[15] = 512, zeros between, then
        // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16].
        let mut w = vec![0u32; 16];
        w[0] = 0x8000_0000;
        w[15] = 512;
        for t in 16..64 {
            let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
            let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
            w.push(
                s1.wrapping_add(w[t - 7])
                    .wrapping_add(s0)
                    .wrapping_add(w[t - 16]),
            );
        }
        for t in 0..64 {
            assert_eq!(
                PADDING_WK[t / 4][t % 4],
                w[t].wrapping_add(K[t]),
                "W[{t}] + K[{t}]"
            );
        }
        assert_eq!(message_schedule(&PADDING_BLOCK).to_vec(), w);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    #[allow(unsafe_code)]
    fn sha_ni_schedule_matches_the_scalar_schedule() {
        if !uses_sha_ni() {
            eprintln!("no SHA-NI on this CPU: skipped");
            return;
        }
        let mut rng = SplitMix64::new(1);
        let mut blocks = vec![PADDING_BLOCK, [0; 64], [0xff; 64]];
        for _ in 0..100 {
            let mut block = [0u8; 64];
            rng.fill_bytes(&mut block);
            blocks.push(block);
        }
        for block in &blocks {
            // SAFETY: `uses_sha_ni` checked that the CPU has the features `schedule` enables.
            let simd = unsafe { sha_ni::schedule(block) };
            assert_eq!(simd, message_schedule(block));
        }
    }
}
