//! The spec's swap-or-not shuffle, one index at a time ([`compute_shuffled_index`], or many
//! indices under one seed with a [`Shuffler`]) and for a whole list at once ([`shuffle_list`]).
//!
//! All take the round count as a parameter because it is a preset value (`SHUFFLE_ROUND_COUNT`:
//! 90 on mainnet, 10 on minimal).
//!
//! [spec]: phase0/beacon-chain.md#compute_shuffled_index

use ethereum_hashing::hash_fixed;
use rayon::prelude::*;

/// Length of the seed (`Bytes32`).
const SEED_LEN: usize = 32;
/// `seed ++ uint8(round)`: the pivot's hash input.
const PIVOT_INPUT_LEN: usize = SEED_LEN + 1;
/// `seed ++ uint8(round) ++ uint32(position // 256)`: the source's hash input.
const SOURCE_INPUT_LEN: usize = PIVOT_INPUT_LEN + 4;
/// Positions covered by one source hash (256 bits).
const POSITIONS_PER_SOURCE: usize = 256;
/// The spec encodes `position // 256` as a `uint32`, so at most `2**40` indices can be shuffled.
const MAX_INDEX_COUNT: u64 = 1 << 40;

/// `compute_shuffled_index(index, index_count, seed)`: the position `index` moves to when a list of
/// `index_count` elements is shuffled with `seed` over `shuffle_round_count` rounds.
///
/// `None` where the spec's assertion fails (`index >= index_count`, which includes
/// `index_count == 0`) or `index_count` exceeds `2**40`, the most the spec's `uint32(position // 256)`
/// can address. Callers shuffling many indices under one seed keep a [`Shuffler`] instead, which
/// computes each round's pivot once.
///
/// [spec]: phase0/beacon-chain.md#compute_shuffled_index
pub fn compute_shuffled_index(
    index: usize,
    index_count: usize,
    seed: &[u8; 32],
    shuffle_round_count: u8,
) -> Option<usize> {
    if index >= index_count {
        return None;
    }
    Shuffler::new(seed, index_count, shuffle_round_count).map(|s| s.shuffled_index(index))
}

/// [`compute_shuffled_index`] for one seed, list length and round count, with each round's pivot
/// computed once, so that shuffling many indices under the same seed costs one hash per round
/// per index instead of two (proposer and sync-committee selection shuffle thousands).
#[derive(Debug, Clone)]
pub struct Shuffler {
    seed: [u8; 32],
    index_count: usize,
    /// The pivot of each round.
    pivots: Vec<usize>,
    /// With [`Shuffler::with_source_table`], every source hash:
    /// `sources[round * ceil(index_count / 256) + position / 256]`.
    sources: Option<Vec<[u8; 32]>>,
}

impl Shuffler {
    /// Precomputes the pivots of `rounds` rounds for lists of `index_count` elements; `None` for
    /// an empty list or one longer than `2**40` (see [`compute_shuffled_index`]).
    pub fn new(seed: &[u8; 32], index_count: usize, rounds: u8) -> Option<Self> {
        if index_count == 0 || index_count as u64 > MAX_INDEX_COUNT {
            return None;
        }
        Some(Self {
            seed: *seed,
            index_count,
            pivots: (0..rounds)
                .map(|round| compute_pivot(seed, round, index_count))
                .collect(),
            sources: None,
        })
    }

    /// Also precomputes every source hash (`rounds * ceil(n / 256)` hashes, in parallel on the
    /// current rayon pool), so that each shuffled index then costs table lookups only. Worth it
    /// when many more indices than `n / 256` will be shuffled with this seed, as for a sync
    /// committee.
    pub fn with_source_table(mut self) -> Self {
        let buckets = self.index_count.div_ceil(POSITIONS_PER_SOURCE);
        let seed = self.seed;
        let sources = (0..self.pivots.len() * buckets)
            .into_par_iter()
            .map(|i| {
                let round = (i / buckets) as u8;
                hash_fixed(&source_input(
                    &seed,
                    round,
                    (i % buckets) * POSITIONS_PER_SOURCE,
                ))
            })
            .collect();
        self.sources = Some(sources);
        self
    }

    /// The list length this shuffler was made for.
    pub fn index_count(&self) -> usize {
        self.index_count
    }

    /// `compute_shuffled_index(index, index_count, seed)`. `index` is taken modulo the list
    /// length, so it never fails; callers pass an index below it, as the spec asserts.
    pub fn shuffled_index(&self, index: usize) -> usize {
        let n = self.index_count;
        let buckets = n.div_ceil(POSITIONS_PER_SOURCE);
        let mut index = index % n;
        for (round, &pivot) in self.pivots.iter().enumerate() {
            // `(pivot + index_count - index) % index_count`, without overflowing
            // `pivot + index_count`.
            let flip = if pivot >= index {
                pivot - index
            } else {
                pivot + (n - index)
            };
            let position = index.max(flip);
            let set = match &self.sources {
                Some(sources) => bit_at(
                    &sources[round * buckets + position / POSITIONS_PER_SOURCE],
                    position,
                ),
                None => bit_at(
                    &hash_fixed(&source_input(&self.seed, round as u8, position)),
                    position,
                ),
            };
            if set {
                index = flip;
            }
        }
        index
    }
}

/// Shuffles a whole list in `O(n · rounds)` with one hash per 256 positions per round, instead of
/// one per element per round as repeated [`compute_shuffled_index`] calls would need.
///
/// - `forwards == true` gives the spec's order, the one `compute_committee` and the `shuffling`
///   vectors use: `output[i] == input[compute_shuffled_index(i, n, seed, rounds)]`.
/// - `forwards == false` gives the inverse permutation:
///   `output[compute_shuffled_index(i, n, seed, rounds)] == input[i]`.
///
/// The two undo each other: shuffling with `true` then `false` (or the reverse) returns the input.
/// Note that Lighthouse's `shuffle_list` names the directions the other way round.
///
/// `None` only when the list is longer than `2**40`, the most the spec can shuffle; an empty list
/// comes back empty.
///
/// [spec]: phase0/beacon-chain.md#compute_shuffled_index
pub fn shuffle_list(
    mut input: Vec<usize>,
    rounds: u8,
    seed: &[u8; 32],
    forwards: bool,
) -> Option<Vec<usize>> {
    if input.len() as u64 > MAX_INDEX_COUNT {
        return None;
    }
    if input.len() < 2 {
        return Some(input);
    }

    // Each round `r` swaps the pairs `(x, flip_r(x))` whose bit is set, i.e. maps the list `L` to
    // `L'[x] = L[s_r(x)]` with `s_r` the spec's per-round step (an involution). Applying rounds
    // `a` then `b` gives `L0[s_a(s_b(x))]`, so the spec's `s_{R-1}(…s_0(x))` needs the rounds in
    // descending order; ascending order gives the inverse.
    if forwards {
        for round in (0..rounds).rev() {
            apply_round(&mut input, seed, round);
        }
    } else {
        for round in 0..rounds {
            apply_round(&mut input, seed, round);
        }
    }
    Some(input)
}

/// Applies one round of swap-or-not to `list` (at least one element): swaps every pair
/// `(x, flip)` whose source bit at `max(x, flip)` is set.
fn apply_round(list: &mut [usize], seed: &[u8; 32], round: u8) {
    let n = list.len();
    let pivot = compute_pivot(seed, round, n);

    // `flip(x) = (pivot - x) mod n` pairs the positions of `[0, pivot]` around `pivot / 2` and
    // those of `(pivot, n)` around `(pivot + n) / 2`. Each pair is visited once, from its upper
    // member `j = max(x, flip)`, the position whose bit decides.
    swap_pairs(list, seed, round, pivot, pivot / 2 + 1, pivot + 1);
    // `pivot + n` does not overflow: `n <= 2**40` was checked by the caller.
    let mirror = pivot + n;
    swap_pairs(list, seed, round, mirror, mirror / 2 + 1, n);
}

/// For every `j` in `start..end`, swaps `list[mirror - j]` and `list[j]` when the round's source
/// bit at `j` is set. Callers keep `mirror - j < j < list.len()` for every such `j`.
///
/// Hashes once per 256 positions, and swaps without branching on the bit: the bits are random,
/// so a branch would be mispredicted half the time, which dominated the run time when measured.
fn swap_pairs(
    list: &mut [usize],
    seed: &[u8; 32],
    round: u8,
    mirror: usize,
    start: usize,
    end: usize,
) {
    if start >= end {
        return;
    }
    let mut chunk_start = start - start % POSITIONS_PER_SOURCE;
    while chunk_start < end {
        let source = hash_fixed(&source_input(seed, round, chunk_start));
        let chunk_end = (chunk_start + POSITIONS_PER_SOURCE).min(end);
        for j in chunk_start.max(start)..chunk_end {
            let i = mirror - j;
            let (a, b) = (list[i], list[j]);
            // All ones when the bit is set, zero otherwise.
            let mask = usize::from(bit_at(&source, j)).wrapping_neg();
            let swap = (a ^ b) & mask;
            list[i] = a ^ swap;
            list[j] = b ^ swap;
        }
        chunk_start += POSITIONS_PER_SOURCE;
    }
}

/// `bytes_to_uint64(hash(seed + uint_to_bytes(uint8(round)))[0:8]) % index_count`, for
/// `index_count > 0`.
fn compute_pivot(seed: &[u8; 32], round: u8, index_count: usize) -> usize {
    let mut input = [0u8; PIVOT_INPUT_LEN];
    input[..SEED_LEN].copy_from_slice(seed);
    input[SEED_LEN] = round;
    let digest = hash_fixed(&input);
    let mut first_eight = [0u8; 8];
    first_eight.copy_from_slice(&digest[..8]);
    // The remainder is below `index_count`, so it fits a `usize`.
    (u64::from_le_bytes(first_eight) % index_count as u64) as usize
}

/// `seed + uint_to_bytes(uint8(round)) + uint_to_bytes(uint32(position // 256))`, for
/// `position < 2**40`.
fn source_input(seed: &[u8; 32], round: u8, position: usize) -> [u8; SOURCE_INPUT_LEN] {
    let mut input = [0u8; SOURCE_INPUT_LEN];
    input[..SEED_LEN].copy_from_slice(seed);
    input[SEED_LEN] = round;
    // Truncation is exact: callers keep `position < 2**40`.
    let chunk = (position / POSITIONS_PER_SOURCE) as u32;
    input[PIVOT_INPUT_LEN..].copy_from_slice(&chunk.to_le_bytes());
    input
}

/// `(source[(position % 256) // 8] >> (position % 8)) % 2`.
fn bit_at(source: &[u8; 32], position: usize) -> bool {
    let byte = source[(position % POSITIONS_PER_SOURCE) / 8];
    (byte >> (position % 8)) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [usize; 13] = [0, 1, 2, 3, 4, 5, 17, 255, 256, 257, 511, 513, 1000];

    fn seed(byte: u8) -> [u8; 32] {
        let mut seed = [0u8; 32];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = byte.wrapping_mul(31).wrapping_add(i as u8);
        }
        seed
    }

    fn by_index(n: usize, seed: &[u8; 32], rounds: u8) -> Vec<usize> {
        (0..n)
            .map(|i| compute_shuffled_index(i, n, seed, rounds).expect("i < n"))
            .collect()
    }

    #[test]
    fn forwards_shuffle_matches_compute_shuffled_index() {
        for rounds in [0u8, 1, 10, 90] {
            for (k, &n) in SIZES.iter().enumerate() {
                let seed = seed(k as u8 + rounds);
                // Distinct values, not the identity, so a wrong direction cannot pass by chance.
                let input: Vec<usize> = (0..n).map(|i| i * 7 + 3).collect();
                let expected: Vec<usize> = by_index(n, &seed, rounds)
                    .into_iter()
                    .map(|j| input[j])
                    .collect();
                let shuffled = shuffle_list(input, rounds, &seed, true);
                assert_eq!(shuffled, Some(expected), "n = {n}, rounds = {rounds}");
            }
        }
    }

    #[test]
    fn backwards_shuffle_is_the_inverse_permutation() {
        for rounds in [1u8, 10, 90] {
            for (k, &n) in SIZES.iter().enumerate() {
                let seed = seed(k as u8 ^ rounds);
                let input: Vec<usize> = (0..n).map(|i| i * 5 + 1).collect();
                let mut expected = vec![0; n];
                for (i, j) in by_index(n, &seed, rounds).into_iter().enumerate() {
                    expected[j] = input[i];
                }
                let shuffled = shuffle_list(input, rounds, &seed, false);
                assert_eq!(shuffled, Some(expected), "n = {n}, rounds = {rounds}");
            }
        }
    }

    #[test]
    fn forwards_then_backwards_restores_the_list() {
        let seed = seed(42);
        for &n in &SIZES {
            let input: Vec<usize> = (0..n).collect();
            let there = shuffle_list(input.clone(), 90, &seed, true).expect("small list");
            assert_eq!(shuffle_list(there, 90, &seed, false), Some(input.clone()));
            let back = shuffle_list(input.clone(), 90, &seed, false).expect("small list");
            assert_eq!(shuffle_list(back, 90, &seed, true), Some(input));
        }
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let seed = seed(7);
        let n = 1000;
        let mut shuffled = shuffle_list((0..n).collect(), 90, &seed, true).expect("small list");
        assert_ne!(shuffled, (0..n).collect::<Vec<_>>());
        shuffled.sort_unstable();
        assert_eq!(shuffled, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn matches_a_minimal_preset_spec_vector() {
        // `tests/minimal/phase0/shuffling/core/shuffle/shuffle_0x23bc…_10/mapping.yaml`.
        let mut seed = [0u8; 32];
        let hex = "23bcd11624a07465b1c2fc1a0fe52996daae4bf87b0fb6bed45926096c644843";
        for (i, b) in seed.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("valid hex literal");
        }
        let mapping = vec![6, 9, 2, 7, 8, 3, 0, 1, 4, 5];
        let minimal_rounds = 10;
        assert_eq!(by_index(10, &seed, minimal_rounds), mapping);
        assert_eq!(
            shuffle_list((0..10).collect(), minimal_rounds, &seed, true),
            Some(mapping)
        );
    }

    #[test]
    fn rejects_out_of_range_index_and_empty_count() {
        let seed = seed(1);
        assert_eq!(compute_shuffled_index(0, 0, &seed, 90), None);
        assert_eq!(compute_shuffled_index(5, 5, &seed, 90), None);
        assert_eq!(compute_shuffled_index(usize::MAX, 3, &seed, 90), None);
        assert_eq!(compute_shuffled_index(0, 1, &seed, 90), Some(0));
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn handles_counts_near_the_spec_limit_without_overflow() {
        let seed = seed(3);
        let max = MAX_INDEX_COUNT as usize;
        let last = compute_shuffled_index(max - 1, max, &seed, 90).expect("index < count");
        assert!(last < max);
        assert_eq!(compute_shuffled_index(0, max + 1, &seed, 90), None);
        assert_eq!(compute_shuffled_index(0, usize::MAX, &seed, 90), None);
    }

    #[test]
    fn shuffler_matches_compute_shuffled_index_with_and_without_the_source_table() {
        for (n, rounds) in [
            (1usize, 10u8),
            (2, 10),
            (7, 90),
            (300, 10),
            (1000, 90),
            (70_000, 10),
        ] {
            for s in 0..3u8 {
                let seed = seed(s.wrapping_mul(37).wrapping_add(1));
                let shuffler = Shuffler::new(&seed, n, rounds).expect("a non-empty list");
                let tabled = shuffler.clone().with_source_table();
                let list: Vec<usize> = (0..n).collect();
                let whole = shuffle_list(list, rounds, &seed, true).expect("small list");
                for i in (0..n).step_by((n / 50).max(1)) {
                    // `shuffle_list` is checked against the spec vectors; its forward order is
                    // `output[i] == input[compute_shuffled_index(i)]`.
                    assert_eq!(
                        shuffler.shuffled_index(i),
                        whole[i],
                        "n={n} rounds={rounds} i={i}"
                    );
                    assert_eq!(tabled.shuffled_index(i), whole[i], "table: n={n} i={i}");
                }
            }
        }
    }

    #[test]
    fn shuffler_rejects_an_empty_or_too_long_list() {
        assert!(Shuffler::new(&seed(0), 0, 10).is_none());
        #[cfg(target_pointer_width = "64")]
        assert!(Shuffler::new(&seed(0), MAX_INDEX_COUNT as usize + 1, 10).is_none());
    }

    #[test]
    fn empty_and_single_lists_are_unchanged() {
        let seed = seed(9);
        assert_eq!(shuffle_list(vec![], 90, &seed, true), Some(vec![]));
        assert_eq!(shuffle_list(vec![11], 90, &seed, false), Some(vec![11]));
    }

    #[test]
    fn zero_rounds_is_the_identity() {
        let seed = seed(2);
        let input: Vec<usize> = (0..300).collect();
        assert_eq!(shuffle_list(input.clone(), 0, &seed, true), Some(input));
    }
}
