//! splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
//! the deterministic pseudo-random numbers of Arbor's tests, benchmarks, synthetic states and
//! mocks. Not for anything that must be unpredictable.
//!
//! Two forms of the same generator:
//! - [`splitmix64`]`(x)`: a fixed bijection on `u64` that mixes well, for values indexed by
//!   position (`splitmix64(i ^ salt)` is the `i`-th value of the stream named `salt`);
//! - [`SplitMix64`]: the stream, for callers that draw one value after another.
//!
//! `SplitMix64::new(seed)` yields `splitmix64(seed)`, `splitmix64(seed + GAMMA)`, … so both
//! forms give the reference generator's outputs.

#![warn(missing_docs)]

/// The increment between states of the stream: 2^64 divided by the golden ratio, made odd.
pub const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The output of a splitmix64 generator whose state is `x`: `x + GAMMA` through the
/// finalizer. A bijection, so distinct inputs give distinct outputs.
pub const fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A splitmix64 stream: each [`next_u64`](Self::next_u64) returns the next value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The stream seeded with `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next value of the stream.
    pub const fn next_u64(&mut self) -> u64 {
        let out = splitmix64(self.state);
        self.state = self.state.wrapping_add(GAMMA);
        out
    }

    /// Fills `bytes` with the next values, little-endian, eight bytes each (the last value
    /// truncated when the length is not a multiple of eight).
    pub fn fill_bytes(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_matches_the_reference_outputs_for_seed_zero() {
        // The first outputs of the reference implementation (Vigna's splitmix64.c) from 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn stream_is_the_indexed_form_at_multiples_of_gamma() {
        let seed = 0x5eed;
        let mut rng = SplitMix64::new(seed);
        for k in 0..100u64 {
            assert_eq!(
                rng.next_u64(),
                splitmix64(seed.wrapping_add(k.wrapping_mul(GAMMA)))
            );
        }
    }

    #[test]
    fn fill_bytes_writes_whole_and_partial_words() {
        let mut bytes = [0u8; 12];
        SplitMix64::new(7).fill_bytes(&mut bytes);
        let mut rng = SplitMix64::new(7);
        assert_eq!(bytes[..8], rng.next_u64().to_le_bytes());
        assert_eq!(bytes[8..], rng.next_u64().to_le_bytes()[..4]);
    }
}
