//! Drawing validators weighted by effective balance, the way `compute_proposer_index` and
//! `get_next_sync_committee_indices` do, with the shuffle's per-round pivots computed once per
//! seed.
//!
//! Both spec functions walk candidates `i = 0, 1, 2, …`, shuffle `i % n` with
//! `compute_shuffled_index`, and accept the candidate with probability proportional to its
//! effective balance. Since Electra a 32 ETH validator is accepted about once in 64 tries, so one
//! sync committee costs some 32,000 shuffled indices of 90 rounds each; computing the pivot
//! (one of the two hashes of a round) once per seed instead of once per round halves that, and
//! the candidates are shuffled in parallel batches.
//!
//! [spec]: electra/beacon-chain.md#modified-compute_proposer_index

use ethereum_hashing::hash_fixed;
use rayon::prelude::*;
use types::{EthSpec, Gwei, Root, ValidatorIndex};

use crate::{Error, common::bytes_to_uint64};

/// `compute_shuffled_index` for one seed and list length, with the round pivots precomputed.
#[derive(Debug, Clone)]
pub struct Shuffler {
    seed: [u8; 32],
    index_count: usize,
    pivots: Vec<usize>,
    /// Optionally every source hash, `sources[round * buckets + position / 256]`.
    sources: Option<Vec<[u8; 32]>>,
}

impl Shuffler {
    /// Precomputes the pivots of `rounds` rounds for lists of `index_count` elements.
    pub fn new(seed: &Root, index_count: usize, rounds: u8) -> Result<Self, Error> {
        if index_count == 0 || index_count as u64 > 1 << 40 {
            return Err(Error::ArithmeticOverflow(
                "compute_shuffled_index: index count",
            ));
        }
        let mut input = [0u8; 33];
        input[..32].copy_from_slice(seed.as_slice());
        let pivots = (0..rounds)
            .map(|round| {
                input[32] = round;
                (bytes_to_uint64(&hash_fixed(&input)[..8]) % index_count as u64) as usize
            })
            .collect();
        Ok(Self {
            seed: seed.0,
            index_count,
            pivots,
            sources: None,
        })
    }

    /// Also precomputes every source hash (`rounds * ceil(n / 256)` hashes, in parallel), so
    /// that each shuffled index then costs table lookups only. Worth it when many more indices
    /// than `n / 256` will be shuffled with this seed, as for a sync committee.
    pub fn with_source_table(mut self) -> Self {
        let buckets = self.index_count.div_ceil(256);
        let seed = self.seed;
        let sources = (0..self.pivots.len() * buckets)
            .into_par_iter()
            .map(|i| {
                let mut input = [0u8; 37];
                input[..32].copy_from_slice(&seed);
                input[32] = (i / buckets) as u8;
                input[33..].copy_from_slice(&((i % buckets) as u32).to_le_bytes());
                hash_fixed(&input)
            })
            .collect();
        self.sources = Some(sources);
        self
    }

    /// `compute_shuffled_index(index, index_count, seed)`; `index` must be below the count.
    pub fn shuffled_index(&self, index: usize) -> usize {
        let n = self.index_count;
        let mut index = index % n;
        let mut input = [0u8; 37];
        input[..32].copy_from_slice(&self.seed);
        for (round, &pivot) in self.pivots.iter().enumerate() {
            // `(pivot + index_count - index) % index_count` without overflow.
            let flip = if pivot >= index {
                pivot - index
            } else {
                pivot + (n - index)
            };
            let position = index.max(flip);
            let byte = match &self.sources {
                Some(sources) => {
                    sources[round * n.div_ceil(256) + position / 256][(position % 256) / 8]
                }
                None => {
                    input[32] = round as u8;
                    input[33..].copy_from_slice(&((position / 256) as u32).to_le_bytes());
                    hash_fixed(&input)[(position % 256) / 8]
                }
            };
            if (byte >> (position % 8)) & 1 == 1 {
                index = flip;
            }
        }
        index
    }
}

/// Candidates shuffled per parallel batch: a 32 ETH validator is accepted about once in 64
/// tries, so a batch of 256 usually yields a few.
const BATCH: u64 = 256;

/// Draws `count` validators from `indices`, each candidate accepted with probability
/// proportional to its effective balance (`effective_balance(index)`), exactly as
/// `compute_proposer_index` (`count == 1`) and `get_next_sync_committee_indices` do with `seed`.
///
/// [spec]: electra/beacon-chain.md#modified-compute_proposer_index
pub fn sample_by_effective_balance<E: EthSpec>(
    indices: &[ValidatorIndex],
    seed: &Root,
    count: usize,
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error>,
) -> Result<Vec<ValidatorIndex>, Error> {
    const MAX_RANDOM_VALUE: u64 = (1 << 16) - 1;
    let total = indices.len();
    let mut shuffler = Shuffler::new(seed, total, E::SHUFFLE_ROUND_COUNT)?;
    // A committee draw shuffles tens of thousands of candidates: hash every source once.
    if count > 1 {
        shuffler = shuffler.with_source_table();
    }
    let mut random_input = [0u8; 40];
    random_input[..32].copy_from_slice(seed.as_slice());
    let mut random_bytes = [0u8; 32];

    let mut selected = Vec::with_capacity(count);
    let mut start: u64 = 0;
    // A single draw usually ends within a few candidates: start small, then grow the batches.
    let mut batch = if count == 1 { 16 } else { BATCH };
    while selected.len() < count {
        let candidates: Vec<ValidatorIndex> = if batch >= 64 {
            (start..start + batch)
                .into_par_iter()
                .map(|i| indices[shuffler.shuffled_index((i % total as u64) as usize)])
                .collect()
        } else {
            (start..start + batch)
                .map(|i| indices[shuffler.shuffled_index((i % total as u64) as usize)])
                .collect()
        };
        for (i, candidate) in (start..).zip(candidates) {
            if i.is_multiple_of(16) {
                random_input[32..].copy_from_slice(&(i / 16).to_le_bytes());
                random_bytes = hash_fixed(&random_input);
            }
            let offset = (i % 16 * 2) as usize;
            let random_value = bytes_to_uint64(&random_bytes[offset..offset + 2]);
            if effective_balance(candidate)? as u128 * MAX_RANDOM_VALUE as u128
                >= E::MAX_EFFECTIVE_BALANCE_ELECTRA as u128 * random_value as u128
            {
                selected.push(candidate);
                if selected.len() == count {
                    break;
                }
            }
        }
        start += batch;
        batch = (batch * 2).min(4 * BATCH);
    }
    Ok(selected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffled_index_matches_the_reference() {
        for (n, rounds) in [
            (1usize, 10u8),
            (2, 10),
            (7, 90),
            (300, 10),
            (1000, 90),
            (70_000, 10),
        ] {
            for s in 0..3u8 {
                let seed = Root::from([s.wrapping_mul(37).wrapping_add(1); 32]);
                let shuffler = Shuffler::new(&seed, n, rounds).unwrap();
                let tabled = shuffler.clone().with_source_table();
                for i in (0..n).step_by((n / 50).max(1)) {
                    let expected =
                        swap_or_not_shuffle::compute_shuffled_index(i, n, &seed.0, rounds);
                    assert_eq!(
                        Some(shuffler.shuffled_index(i)),
                        expected,
                        "n={n} rounds={rounds} i={i}"
                    );
                    assert_eq!(
                        Some(tabled.shuffled_index(i)),
                        expected,
                        "table: n={n} i={i}"
                    );
                }
            }
        }
    }

    #[test]
    fn rejects_an_empty_list() {
        assert!(Shuffler::new(&Root::ZERO, 0, 10).is_err());
    }
}
