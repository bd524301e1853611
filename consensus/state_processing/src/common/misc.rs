//! The spec's miscellaneous helpers (epochs and slots, proposer selection, participation
//! flags, committee bits, a deposit's new validator), in their Electra form.
//!
//! [spec]: phase0/beacon-chain.md#misc (and altair/, electra/beacon-chain.md#misc)

use ethereum_hashing::hash_fixed;
use types::{
    BLSPubkey, Bytes32, Epoch, EthSpec, FAR_FUTURE_EPOCH, ForkName, Gwei, Root, Slot,
    ValidatorIndex, electra::Validator,
};

use crate::{
    Error,
    common::{math::bytes_to_uint64, predicates::has_compounding_withdrawal_credential},
};

/// `compute_epoch_at_slot(slot)`.
#[inline]
pub fn compute_epoch_at_slot<E: EthSpec>(slot: Slot) -> Epoch {
    slot / E::slots_per_epoch()
}

/// `compute_start_slot_at_epoch(epoch)` (saturating at the far future).
#[inline]
pub fn compute_start_slot_at_epoch<E: EthSpec>(epoch: Epoch) -> Slot {
    epoch.saturating_mul(E::slots_per_epoch())
}

/// `compute_activation_exit_epoch(epoch)`: `epoch + 1 + MAX_SEED_LOOKAHEAD`.
#[inline]
pub fn compute_activation_exit_epoch<E: EthSpec>(epoch: Epoch) -> Epoch {
    epoch.saturating_add(1 + E::MAX_SEED_LOOKAHEAD)
}

/// `compute_proposer_index(state, indices, seed)` [Modified in Electra]: a validator of
/// `indices` drawn with probability proportional to its effective balance.
///
/// [spec]: electra/beacon-chain.md#modified-compute_proposer_index
pub fn compute_proposer_index<E: EthSpec>(
    validators: crate::view::ValidatorsRef<'_, E>,
    indices: &[ValidatorIndex],
    seed: &Root,
) -> Result<ValidatorIndex, Error> {
    compute_proposer_index_with_balances::<E>(indices, seed, |index| {
        Ok(validators
            .get(index as usize)
            .ok_or(Error::UnknownValidator {
                index,
                len: validators.len(),
            })?
            .effective_balance)
    })
}

/// [`compute_proposer_index`] with effective balances read through `effective_balance` (epoch
/// processing reads them from its registry summary).
pub fn compute_proposer_index_with_balances<E: EthSpec>(
    indices: &[ValidatorIndex],
    seed: &Root,
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error>,
) -> Result<ValidatorIndex, Error> {
    sample_by_effective_balance::<E>(indices, seed, 1, effective_balance)?
        .first()
        .copied()
        .ok_or(Error::NoCandidates("compute_proposer_index"))
}

/// Candidates shuffled per parallel batch of [`sample_by_effective_balance`]: a 32 ETH validator
/// is accepted about once in 64 tries, so a batch of 256 usually yields a few.
const SAMPLE_BATCH: u64 = 256;

/// The draw `compute_proposer_index` (`count == 1`) and `get_next_sync_committee_indices` share:
/// walk candidates `i = 0, 1, 2, …`, take `indices[compute_shuffled_index(i % len(indices),
/// len(indices), seed)]`, and accept it with probability proportional to its effective balance
/// (`effective_balance(index)`), until `count` are accepted (repeats allowed).
///
/// One [`swap_or_not_shuffle::Shuffler`] serves every candidate, so each round's pivot is hashed
/// once per seed; a sync-committee draw (some 32,000 candidates since Electra) also tables every
/// source hash, and candidates are shuffled in parallel batches.
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
    let mut shuffler = swap_or_not_shuffle::Shuffler::new(&seed.0, total, E::SHUFFLE_ROUND_COUNT)
        .ok_or(if total == 0 {
        Error::NoCandidates("sample_by_effective_balance")
    } else {
        Error::ArithmeticOverflow("compute_shuffled_index: index count")
    })?;
    if count > 1 {
        // The table is computed in parallel on the caller's pool; off a pool it is left out
        // (each draw then hashes its own sources) rather than computed on rayon's global pool.
        shuffler = crate::parallel::SECTIONS.run(|parallel| {
            if parallel {
                shuffler.with_source_table()
            } else {
                shuffler
            }
        });
    }
    let candidate = |i: u64| indices[shuffler.shuffled_index((i % total as u64) as usize)];
    let mut random_input = [0u8; 40];
    random_input[..32].copy_from_slice(seed.as_slice());
    let mut random_bytes = [0u8; 32];

    let mut selected = Vec::with_capacity(count);
    let mut start: u64 = 0;
    // A single draw usually ends within a few candidates: start small, then grow the batches.
    let mut batch = if count == 1 { 16 } else { SAMPLE_BATCH };
    while selected.len() < count {
        let candidates: Vec<ValidatorIndex> = if batch >= 64 {
            crate::parallel::SECTIONS.map_collect(start..start + batch, candidate)
        } else {
            (start..start + batch).map(candidate).collect()
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
        batch = (batch * 2).min(4 * SAMPLE_BATCH);
    }
    Ok(selected)
}

/// `get_committee_indices(committee_bits)` [New in Electra:EIP7549].
pub fn get_committee_indices<N: typenum::Unsigned + Clone>(
    committee_bits: &ssz_types::BitVector<N>,
) -> Vec<u64> {
    committee_bits
        .iter()
        .enumerate()
        .filter(|(_, bit)| *bit)
        .map(|(i, _)| i as u64)
        .collect()
}

/// `get_max_effective_balance(validator)` [New in Electra:EIP7251].
#[inline]
pub fn get_max_effective_balance<E: EthSpec>(validator: &Validator) -> Gwei {
    if has_compounding_withdrawal_credential(validator) {
        E::MAX_EFFECTIVE_BALANCE_ELECTRA
    } else {
        E::MIN_ACTIVATION_BALANCE
    }
}

/// `add_flag(flags, flag_index)`.
#[inline]
pub fn add_flag(flags: u8, flag_index: usize) -> u8 {
    flags | (1 << flag_index)
}

/// `has_flag(flags, flag_index)`.
#[inline]
pub fn has_flag(flags: u8, flag_index: usize) -> bool {
    flags & (1 << flag_index) != 0
}

/// `get_validator_from_deposit(pubkey, withdrawal_credentials, amount)` [Modified in
/// Electra:EIP7251]: a new, not yet eligible validator with the effective balance the amount
/// allows under its credential's maximum.
///
/// [spec]: electra/beacon-chain.md#modified-get_validator_from_deposit
pub fn get_validator_from_deposit<E: EthSpec>(
    pubkey: BLSPubkey,
    withdrawal_credentials: Bytes32,
    amount: Gwei,
) -> Validator {
    let mut validator = Validator {
        pubkey,
        withdrawal_credentials,
        effective_balance: 0,
        slashed: false,
        activation_eligibility_epoch: FAR_FUTURE_EPOCH,
        activation_epoch: FAR_FUTURE_EPOCH,
        exit_epoch: FAR_FUTURE_EPOCH,
        withdrawable_epoch: FAR_FUTURE_EPOCH,
    };
    let max_effective_balance = get_max_effective_balance::<E>(&validator);
    validator.effective_balance =
        (amount - amount % E::EFFECTIVE_BALANCE_INCREMENT).min(max_effective_balance);
    validator
}

/// Whether `pubkey` is the compressed encoding of a validator key (the cache's map type).
pub fn pubkey_bytes(pubkey: &BLSPubkey) -> bls::PublicKeyBytes {
    bls::PublicKeyBytes(pubkey.0)
}

/// Whether `fork` is one this crate processes (Electra and later).
pub fn is_processed_fork(fork: ForkName) -> bool {
    fork.electra_enabled()
}

#[cfg(test)]
mod tests {
    use types::MinimalEthSpec;

    use super::*;

    type E = MinimalEthSpec;

    /// The spec's loop, one `compute_shuffled_index` per candidate, as a reference.
    fn naive_sample(
        indices: &[ValidatorIndex],
        seed: &Root,
        count: usize,
        effective_balance: impl Fn(ValidatorIndex) -> Gwei,
    ) -> Vec<ValidatorIndex> {
        let total = indices.len();
        let mut selected = Vec::new();
        let mut i: u64 = 0;
        while selected.len() < count {
            let shuffled = swap_or_not_shuffle::compute_shuffled_index(
                (i % total as u64) as usize,
                total,
                &seed.0,
                E::SHUFFLE_ROUND_COUNT,
            )
            .expect("index below the count");
            let candidate = indices[shuffled];
            let mut input = [0u8; 40];
            input[..32].copy_from_slice(seed.as_slice());
            input[32..].copy_from_slice(&(i / 16).to_le_bytes());
            let random_bytes = hash_fixed(&input);
            let offset = (i % 16 * 2) as usize;
            let random_value = bytes_to_uint64(&random_bytes[offset..offset + 2]);
            if effective_balance(candidate) as u128 * ((1 << 16) - 1) as u128
                >= E::MAX_EFFECTIVE_BALANCE_ELECTRA as u128 * random_value as u128
            {
                selected.push(candidate);
            }
            i += 1;
        }
        selected
    }

    #[test]
    fn sampling_by_effective_balance_matches_the_spec_loop() {
        // Mixed balances so that acceptance depends on them.
        let balance = |index: ValidatorIndex| (16 + index % 5 * 400) * 1_000_000_000;
        let indices: Vec<ValidatorIndex> = (0..700).map(|i| i * 3 + 1).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool builds");
        for s in 0..4u8 {
            let seed = Root::repeat_byte(s * 41 + 3);
            for count in [1, 3, 64] {
                let sample =
                    || sample_by_effective_balance::<E>(&indices, &seed, count, |i| Ok(balance(i)));
                let naive = naive_sample(&indices, &seed, count, balance);
                // Off a pool (no source table, batches one after the other) and on one.
                assert_eq!(
                    sample().expect("non-empty candidates"),
                    naive,
                    "count {count}"
                );
                let on_a_pool = pool.install(sample).expect("non-empty candidates");
                assert_eq!(on_a_pool, naive, "count {count}, on a pool");
            }
        }
    }

    #[test]
    fn sampling_from_no_candidates_is_an_error_not_a_panic() {
        assert_eq!(
            compute_proposer_index_with_balances::<E>(&[], &Root::ZERO, |_| Ok(0)),
            Err(Error::NoCandidates("sample_by_effective_balance"))
        );
    }
}
