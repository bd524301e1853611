//! The spec's helper functions (math, predicates, misc, accessors, mutators) in their Electra /
//! Fulu form, shared by block, epoch and slot processing.
//!
//! Accessors that need committees or the total active balance go through [`Caches`], which
//! compute them once per epoch. Names and argument order follow the spec.
//!
//! [spec]: electra/beacon-chain.md#helper-functions

use ethereum_hashing::hash_fixed;
use rayon::prelude::*;
use types::{
    BLSPubkey, BLSSignature, Bytes32, ChainSpec, Domain, DomainType, Epoch, EthSpec,
    FAR_FUTURE_EPOCH, ForkName, Gwei, Root, Slot, ValidatorIndex,
    electra::{DepositMessage, Validator},
    signing::{DOMAIN_DEPOSIT, compute_domain, compute_signing_root},
};

use crate::{
    Caches, Error,
    error::{add, div, mul},
    view::{StateMut, StateRef},
};

/// `ETH1_ADDRESS_WITHDRAWAL_PREFIX`.
pub const ETH1_ADDRESS_WITHDRAWAL_PREFIX: u8 = 0x01;
/// `COMPOUNDING_WITHDRAWAL_PREFIX` [New in Electra:EIP7251].
pub const COMPOUNDING_WITHDRAWAL_PREFIX: u8 = 0x02;
/// `BLS_WITHDRAWAL_PREFIX`.
pub const BLS_WITHDRAWAL_PREFIX: u8 = 0x00;
/// `UNSET_DEPOSIT_REQUESTS_START_INDEX` [New in Electra:EIP6110].
pub const UNSET_DEPOSIT_REQUESTS_START_INDEX: u64 = u64::MAX;
/// `FULL_EXIT_REQUEST_AMOUNT` [New in Electra:EIP7002].
pub const FULL_EXIT_REQUEST_AMOUNT: u64 = 0;
/// Participation flag indices and weights (Altair).
pub const TIMELY_SOURCE_FLAG_INDEX: usize = 0;
/// `TIMELY_TARGET_FLAG_INDEX`.
pub const TIMELY_TARGET_FLAG_INDEX: usize = 1;
/// `TIMELY_HEAD_FLAG_INDEX`.
pub const TIMELY_HEAD_FLAG_INDEX: usize = 2;
/// `TIMELY_SOURCE_WEIGHT`.
pub const TIMELY_SOURCE_WEIGHT: u64 = 14;
/// `TIMELY_TARGET_WEIGHT`.
pub const TIMELY_TARGET_WEIGHT: u64 = 26;
/// `TIMELY_HEAD_WEIGHT`.
pub const TIMELY_HEAD_WEIGHT: u64 = 14;
/// `SYNC_REWARD_WEIGHT`.
pub const SYNC_REWARD_WEIGHT: u64 = 2;
/// `PROPOSER_WEIGHT`.
pub const PROPOSER_WEIGHT: u64 = 8;
/// `WEIGHT_DENOMINATOR`.
pub const WEIGHT_DENOMINATOR: u64 = 64;
/// `PARTICIPATION_FLAG_WEIGHTS`, by flag index.
pub const PARTICIPATION_FLAG_WEIGHTS: [u64; 3] = [
    TIMELY_SOURCE_WEIGHT,
    TIMELY_TARGET_WEIGHT,
    TIMELY_HEAD_WEIGHT,
];

// ---------------------------------------------------------------------------------------------
// Math

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

// ---------------------------------------------------------------------------------------------
// Predicates

/// `is_active_validator(validator, epoch)`.
///
/// [spec]: phase0/beacon-chain.md#is_active_validator
#[inline]
pub fn is_active_validator(validator: &Validator, epoch: Epoch) -> bool {
    validator.activation_epoch <= epoch && epoch < validator.exit_epoch
}

/// `is_eligible_for_activation_queue(validator)` [Modified in Electra:EIP7251].
///
/// [spec]: electra/beacon-chain.md#modified-is_eligible_for_activation_queue
#[inline]
pub fn is_eligible_for_activation_queue<E: EthSpec>(validator: &Validator) -> bool {
    validator.activation_eligibility_epoch == FAR_FUTURE_EPOCH
        && validator.effective_balance >= E::MIN_ACTIVATION_BALANCE
}

/// `is_eligible_for_activation(state, validator)`.
///
/// [spec]: phase0/beacon-chain.md#is_eligible_for_activation
#[inline]
pub fn is_eligible_for_activation<E: EthSpec>(
    state: &StateRef<'_, E>,
    validator: &Validator,
) -> bool {
    validator.activation_eligibility_epoch <= state.finalized_checkpoint.epoch
        && validator.activation_epoch == FAR_FUTURE_EPOCH
}

/// `is_slashable_validator(validator, epoch)`.
///
/// [spec]: phase0/beacon-chain.md#is_slashable_validator
#[inline]
pub fn is_slashable_validator(validator: &Validator, epoch: Epoch) -> bool {
    !validator.slashed
        && validator.activation_epoch <= epoch
        && epoch < validator.withdrawable_epoch
}

/// `is_slashable_attestation_data(data_1, data_2)`: a double vote or a surround vote.
///
/// [spec]: phase0/beacon-chain.md#is_slashable_attestation_data
pub fn is_slashable_attestation_data(
    data_1: &types::electra::AttestationData,
    data_2: &types::electra::AttestationData,
) -> bool {
    (data_1 != data_2 && data_1.target.epoch == data_2.target.epoch)
        || (data_1.source.epoch < data_2.source.epoch && data_2.target.epoch < data_1.target.epoch)
}

/// `is_valid_merkle_branch(leaf, branch, depth, index, root)`.
///
/// [spec]: phase0/beacon-chain.md#is_valid_merkle_branch
pub fn is_valid_merkle_branch(
    leaf: Root,
    branch: &[Root],
    depth: usize,
    index: u64,
    root: Root,
) -> bool {
    if branch.len() < depth {
        return false;
    }
    let mut value = leaf;
    let mut buf = [0u8; 64];
    for (i, node) in branch.iter().take(depth).enumerate() {
        if (index >> i) & 1 == 1 {
            buf[..32].copy_from_slice(node.as_slice());
            buf[32..].copy_from_slice(value.as_slice());
        } else {
            buf[..32].copy_from_slice(value.as_slice());
            buf[32..].copy_from_slice(node.as_slice());
        }
        value = hash(&buf);
    }
    value == root
}

/// `has_eth1_withdrawal_credential(validator)`: an `0x01` credential.
#[inline]
pub fn has_eth1_withdrawal_credential(validator: &Validator) -> bool {
    validator.withdrawal_credentials[0] == ETH1_ADDRESS_WITHDRAWAL_PREFIX
}

/// `is_compounding_withdrawal_credential(withdrawal_credentials)` [New in Electra:EIP7251].
#[inline]
pub fn is_compounding_withdrawal_credential(withdrawal_credentials: &Root) -> bool {
    withdrawal_credentials[0] == COMPOUNDING_WITHDRAWAL_PREFIX
}

/// `has_compounding_withdrawal_credential(validator)` [New in Electra:EIP7251].
#[inline]
pub fn has_compounding_withdrawal_credential(validator: &Validator) -> bool {
    is_compounding_withdrawal_credential(&validator.withdrawal_credentials)
}

/// `has_execution_withdrawal_credential(validator)`: `0x01` or `0x02` [New in Electra:EIP7251].
#[inline]
pub fn has_execution_withdrawal_credential(validator: &Validator) -> bool {
    has_eth1_withdrawal_credential(validator) || has_compounding_withdrawal_credential(validator)
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

/// `is_fully_withdrawable_validator(validator, balance, epoch)` [Modified in Electra:EIP7251].
#[inline]
pub fn is_fully_withdrawable_validator(validator: &Validator, balance: Gwei, epoch: Epoch) -> bool {
    has_execution_withdrawal_credential(validator)
        && validator.withdrawable_epoch <= epoch
        && balance > 0
}

/// `is_partially_withdrawable_validator(validator, balance)` [Modified in Electra:EIP7251].
#[inline]
pub fn is_partially_withdrawable_validator<E: EthSpec>(
    validator: &Validator,
    balance: Gwei,
) -> bool {
    let max_effective_balance = get_max_effective_balance::<E>(validator);
    has_execution_withdrawal_credential(validator)
        && validator.effective_balance == max_effective_balance
        && balance > max_effective_balance
}

// ---------------------------------------------------------------------------------------------
// Misc

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
    validators: &types::phase0::ValidatorRegistry<E>,
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
        shuffler = shuffler.with_source_table();
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
            (start..start + batch)
                .into_par_iter()
                .map(candidate)
                .collect()
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

/// The spec's `get_committee_count_per_slot(state, epoch)`, from the number of validators
/// active in `epoch` (`len(get_active_validator_indices(state, epoch))`, which the committee
/// cache already holds; [`crate::CommitteeCache::committees_per_slot`] answers it per epoch).
///
/// [spec]: phase0/beacon-chain.md#get_committee_count_per_slot
pub fn get_committee_count_per_slot_from_active_count<E: EthSpec>(
    active_validator_count: usize,
) -> u64 {
    (active_validator_count as u64 / E::slots_per_epoch() / E::TARGET_COMMITTEE_SIZE)
        .clamp(1, E::MaxCommitteesPerSlot::to_u64())
}

use typenum::Unsigned as _;

// ---------------------------------------------------------------------------------------------
// Accessors

/// `get_current_epoch(state)`.
#[inline]
pub fn get_current_epoch<E: EthSpec>(state: &StateRef<'_, E>) -> Epoch {
    compute_epoch_at_slot::<E>(*state.slot)
}

/// `get_previous_epoch(state)`: the current epoch minus one, but not below genesis.
#[inline]
pub fn get_previous_epoch<E: EthSpec>(state: &StateRef<'_, E>) -> Epoch {
    get_current_epoch(state).saturating_sub(1)
}

/// `get_block_root_at_slot(state, slot)`.
///
/// [spec]: phase0/beacon-chain.md#get_block_root_at_slot
pub fn get_block_root_at_slot<E: EthSpec>(
    state: &StateRef<'_, E>,
    slot: Slot,
) -> Result<Root, Error> {
    let n = E::SlotsPerHistoricalRoot::to_u64();
    if !(slot < *state.slot && *state.slot <= slot + n) {
        return Err(Error::SlotOutOfRange {
            slot,
            state_slot: *state.slot,
        });
    }
    Ok(*state
        .block_roots
        .get((slot % n) as usize)
        .ok_or(Error::SlotOutOfRange {
            slot,
            state_slot: *state.slot,
        })?)
}

/// `get_block_root(state, epoch)`: the root of the block at the start of `epoch`.
pub fn get_block_root<E: EthSpec>(state: &StateRef<'_, E>, epoch: Epoch) -> Result<Root, Error> {
    get_block_root_at_slot(state, compute_start_slot_at_epoch::<E>(epoch))
}

/// `get_randao_mix(state, epoch)`.
#[inline]
pub fn get_randao_mix<E: EthSpec>(state: &StateRef<'_, E>, epoch: Epoch) -> Root {
    let n = E::EpochsPerHistoricalVector::to_u64();
    state
        .randao_mixes
        .get((epoch % n) as usize)
        .copied()
        .unwrap_or_default()
}

/// `get_active_validator_indices(state, epoch)`, by a walk of the registry. Prefer
/// [`Caches::committees`]' `active_indices` for the previous, current and next epoch.
pub fn get_active_validator_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
) -> Vec<ValidatorIndex> {
    state
        .validators
        .iter()
        .enumerate()
        .filter(|(_, v)| is_active_validator(v, epoch))
        .map(|(i, _)| i as ValidatorIndex)
        .collect()
}

/// `get_seed(state, epoch, domain_type)`.
///
/// [spec]: phase0/beacon-chain.md#get_seed
pub fn get_seed<E: EthSpec>(
    state: &StateRef<'_, E>,
    epoch: Epoch,
    domain_type: DomainType,
) -> Root {
    let mix = get_randao_mix(
        state,
        epoch
            .wrapping_add(E::EpochsPerHistoricalVector::to_u64())
            .wrapping_sub(E::MIN_SEED_LOOKAHEAD + 1),
    );
    let mut buf = [0u8; 44];
    buf[..4].copy_from_slice(domain_type.as_slice());
    buf[4..12].copy_from_slice(&epoch.to_le_bytes());
    buf[12..].copy_from_slice(mix.as_slice());
    hash(&buf)
}

/// `get_beacon_proposer_index(state)`: from `proposer_lookahead` at Fulu [Modified in
/// Fulu:EIP7917], computed from the current epoch's active validators before.
///
/// [spec]: fulu/beacon-chain.md#modified-get_beacon_proposer_index
pub fn get_beacon_proposer_index<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
) -> Result<ValidatorIndex, Error> {
    if let Some(lookahead) = state.proposer_lookahead {
        let i = (*state.slot % E::slots_per_epoch()) as usize;
        return lookahead.get(i).copied().ok_or(Error::Tree(
            "proposer_lookahead shorter than an epoch".into(),
        ));
    }
    // Electra: `compute_proposer_index(state, indices, hash(get_seed(state, epoch,
    // DOMAIN_BEACON_PROPOSER) + uint_to_bytes(state.slot)))`.
    let epoch = get_current_epoch(state);
    let committees = caches.committees(state, epoch)?;
    let active_indices = committees.active_indices();
    if active_indices.is_empty() {
        return Err(Error::NoActiveValidators(epoch));
    }
    let seed = get_seed(state, epoch, types::signing::DOMAIN_BEACON_PROPOSER);
    compute_proposer_index::<E>(
        state.validators,
        active_indices,
        &proposer_seed_at_slot(&seed, *state.slot),
    )
}

/// `hash(seed + uint_to_bytes(slot))`: the seed of one slot's proposer draw, from the epoch's
/// `DOMAIN_BEACON_PROPOSER` seed, as `get_beacon_proposer_index` and `compute_proposer_indices`
/// compute it.
///
/// [spec]: fulu/beacon-chain.md#new-compute_proposer_indices
pub fn proposer_seed_at_slot(seed: &Root, slot: Slot) -> Root {
    let mut buf = [0u8; 40];
    buf[..32].copy_from_slice(seed.as_slice());
    buf[32..].copy_from_slice(&slot.to_le_bytes());
    hash(&buf)
}

/// `get_total_balance(state, indices)`: at least one increment.
pub fn get_total_balance<E: EthSpec>(
    state: &StateRef<'_, E>,
    indices: impl IntoIterator<Item = ValidatorIndex>,
) -> Result<Gwei, Error> {
    let mut total: Gwei = 0;
    for index in indices {
        total = add(
            total,
            validator(state, index)?.effective_balance,
            "get_total_balance",
        )?;
    }
    Ok(total.max(E::EFFECTIVE_BALANCE_INCREMENT))
}

/// `get_domain(state, domain_type, epoch)`; `None` means the current epoch.
///
/// [spec]: phase0/beacon-chain.md#get_domain
pub fn get_domain<E: EthSpec>(
    state: &StateRef<'_, E>,
    domain_type: DomainType,
    epoch: Option<Epoch>,
) -> Domain {
    let epoch = epoch.unwrap_or_else(|| get_current_epoch(state));
    let fork_version = if epoch < state.fork.epoch {
        state.fork.previous_version
    } else {
        state.fork.current_version
    };
    compute_domain(domain_type, fork_version, *state.genesis_validators_root)
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

/// `get_base_reward_per_increment(state)`.
///
/// [spec]: altair/beacon-chain.md#get_base_reward_per_increment
pub fn get_base_reward_per_increment<E: EthSpec>(
    total_active_balance: Gwei,
) -> Result<Gwei, Error> {
    div(
        mul(
            E::EFFECTIVE_BALANCE_INCREMENT,
            E::BASE_REWARD_FACTOR,
            "base reward",
        )?,
        integer_squareroot(total_active_balance),
        "base reward per increment",
    )
}

/// `get_base_reward(state, index)`, from the validator's effective balance and the base reward
/// per increment.
///
/// [spec]: altair/beacon-chain.md#get_base_reward
pub fn get_base_reward<E: EthSpec>(
    effective_balance: Gwei,
    base_reward_per_increment: Gwei,
) -> Result<Gwei, Error> {
    mul(
        effective_balance / E::EFFECTIVE_BALANCE_INCREMENT,
        base_reward_per_increment,
        "base reward",
    )
}

/// `get_balance_churn_limit(state)` [New in Electra:EIP7251].
pub fn get_balance_churn_limit<E: EthSpec>(total_active_balance: Gwei, spec: &ChainSpec) -> Gwei {
    let churn = spec
        .min_per_epoch_churn_limit_electra
        .max(total_active_balance / spec.churn_limit_quotient.max(1));
    churn - churn % E::EFFECTIVE_BALANCE_INCREMENT
}

/// `get_activation_exit_churn_limit(state)` [New in Electra:EIP7251].
pub fn get_activation_exit_churn_limit<E: EthSpec>(
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Gwei {
    spec.max_per_epoch_activation_exit_churn_limit
        .min(get_balance_churn_limit::<E>(total_active_balance, spec))
}

/// `get_consolidation_churn_limit(state)` [New in Electra:EIP7251].
pub fn get_consolidation_churn_limit<E: EthSpec>(
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Gwei {
    get_balance_churn_limit::<E>(total_active_balance, spec)
        - get_activation_exit_churn_limit::<E>(total_active_balance, spec)
}

/// `get_pending_balance_to_withdraw(state, validator_index)` [New in Electra:EIP7251].
pub fn get_pending_balance_to_withdraw<E: EthSpec>(
    state: &StateRef<'_, E>,
    validator_index: ValidatorIndex,
) -> Result<Gwei, Error> {
    let mut total: Gwei = 0;
    for w in state.pending_partial_withdrawals.iter() {
        if w.validator_index == validator_index {
            total = add(total, w.amount, "pending balance to withdraw")?;
        }
    }
    Ok(total)
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

/// The validator at `index`, or [`Error::UnknownValidator`].
#[inline]
pub fn validator<'a, E: EthSpec>(
    state: &StateRef<'a, E>,
    index: ValidatorIndex,
) -> Result<&'a Validator, Error> {
    state
        .validators
        .get(index as usize)
        .ok_or(Error::UnknownValidator {
            index,
            len: state.validators.len(),
        })
}

/// The validator at `index`, mutably, or [`Error::UnknownValidator`].
#[inline]
pub fn validator_mut<E: EthSpec>(
    validators: &mut types::phase0::ValidatorRegistry<E>,
    index: ValidatorIndex,
) -> Result<&mut Validator, Error> {
    let len = validators.len();
    validators
        .get_mut(index as usize)
        .ok_or(Error::UnknownValidator { index, len })
}

/// The balance of validator `index`.
#[inline]
pub fn balance<E: EthSpec>(state: &StateRef<'_, E>, index: ValidatorIndex) -> Result<Gwei, Error> {
    state
        .balances
        .get(index as usize)
        .ok_or(Error::UnknownValidator {
            index,
            len: state.balances.len(),
        })
}

/// Whether `pubkey` is the compressed encoding of a validator key (the cache's map type).
pub fn pubkey_bytes(pubkey: &BLSPubkey) -> bls::PublicKeyBytes {
    bls::PublicKeyBytes(pubkey.0)
}

// ---------------------------------------------------------------------------------------------
// Mutators

/// `increase_balance(state, index, delta)`.
#[inline]
pub fn increase_balance<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    delta: Gwei,
) -> Result<(), Error> {
    let len = state.balances.len();
    let current = state
        .balances
        .get(index as usize)
        .ok_or(Error::UnknownValidator { index, len })?;
    state
        .balances
        .set(index as usize, add(current, delta, "increase_balance")?)?;
    Ok(())
}

/// `decrease_balance(state, index, delta)`: saturating at zero.
#[inline]
pub fn decrease_balance<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    delta: Gwei,
) -> Result<(), Error> {
    let len = state.balances.len();
    let current = state
        .balances
        .get(index as usize)
        .ok_or(Error::UnknownValidator { index, len })?;
    state
        .balances
        .set(index as usize, current.saturating_sub(delta))?;
    Ok(())
}

/// `compute_exit_epoch_and_update_churn(state, exit_balance)` [New in Electra:EIP7251].
///
/// [spec]: electra/beacon-chain.md#new-compute_exit_epoch_and_update_churn
pub fn compute_exit_epoch_and_update_churn<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    exit_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    compute_exit_epoch_and_update_churn_with_total(state, exit_balance, total_active_balance, spec)
}

/// [`compute_exit_epoch_and_update_churn`] with the current epoch's total active balance given
/// (epoch processing knows it from its registry walk; asking the committee cache could cost a
/// shuffle of the whole registry).
pub fn compute_exit_epoch_and_update_churn_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    exit_balance: Gwei,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let current = get_current_epoch(&state.as_ref());
    let mut earliest_exit_epoch =
        (*state.earliest_exit_epoch).max(compute_activation_exit_epoch::<E>(current));
    let per_epoch_churn = get_activation_exit_churn_limit::<E>(total_active_balance, spec);
    // A new epoch for exits starts with a whole epoch's churn.
    let mut exit_balance_to_consume = if *state.earliest_exit_epoch < earliest_exit_epoch {
        per_epoch_churn
    } else {
        *state.exit_balance_to_consume
    };
    // The exit does not fit in the earliest epoch: push it back by whole epochs of churn.
    if exit_balance > exit_balance_to_consume {
        let balance_to_process = exit_balance - exit_balance_to_consume;
        let additional_epochs = div(balance_to_process - 1, per_epoch_churn, "exit churn")? + 1;
        earliest_exit_epoch = add(earliest_exit_epoch, additional_epochs, "exit epoch")?;
        exit_balance_to_consume = add(
            exit_balance_to_consume,
            mul(additional_epochs, per_epoch_churn, "exit churn")?,
            "exit churn",
        )?;
    }
    *state.exit_balance_to_consume = exit_balance_to_consume - exit_balance;
    *state.earliest_exit_epoch = earliest_exit_epoch;
    Ok(earliest_exit_epoch)
}

/// `compute_consolidation_epoch_and_update_churn(state, consolidation_balance)` [New in
/// Electra:EIP7251].
///
/// [spec]: electra/beacon-chain.md#new-compute_consolidation_epoch_and_update_churn
pub fn compute_consolidation_epoch_and_update_churn<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    consolidation_balance: Gwei,
    spec: &ChainSpec,
) -> Result<Epoch, Error> {
    let current = get_current_epoch(&state.as_ref());
    let mut earliest_consolidation_epoch =
        (*state.earliest_consolidation_epoch).max(compute_activation_exit_epoch::<E>(current));
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    let per_epoch_consolidation_churn =
        get_consolidation_churn_limit::<E>(total_active_balance, spec);
    let mut consolidation_balance_to_consume =
        if *state.earliest_consolidation_epoch < earliest_consolidation_epoch {
            per_epoch_consolidation_churn
        } else {
            *state.consolidation_balance_to_consume
        };
    if consolidation_balance > consolidation_balance_to_consume {
        let balance_to_process = consolidation_balance - consolidation_balance_to_consume;
        let additional_epochs = div(
            balance_to_process - 1,
            per_epoch_consolidation_churn,
            "consolidation churn",
        )? + 1;
        earliest_consolidation_epoch = add(
            earliest_consolidation_epoch,
            additional_epochs,
            "consolidation epoch",
        )?;
        consolidation_balance_to_consume = add(
            consolidation_balance_to_consume,
            mul(
                additional_epochs,
                per_epoch_consolidation_churn,
                "consolidation churn",
            )?,
            "consolidation churn",
        )?;
    }
    *state.consolidation_balance_to_consume =
        consolidation_balance_to_consume - consolidation_balance;
    *state.earliest_consolidation_epoch = earliest_consolidation_epoch;
    Ok(earliest_consolidation_epoch)
}

/// `initiate_validator_exit(state, index)` [Modified in Electra:EIP7251]: schedules the exit
/// through the balance churn; a validator already exiting is left as it is.
///
/// [spec]: electra/beacon-chain.md#modified-initiate_validator_exit
pub fn initiate_validator_exit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    index: ValidatorIndex,
    spec: &ChainSpec,
) -> Result<(), Error> {
    if validator(&state.as_ref(), index)?.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    initiate_validator_exit_with_total(state, index, total_active_balance, spec)
}

/// [`initiate_validator_exit`] with the current epoch's total active balance given.
pub fn initiate_validator_exit_with_total<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let v = validator(&state.as_ref(), index)?;
    if v.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    let exit_balance = v.effective_balance;
    let exit_queue_epoch = compute_exit_epoch_and_update_churn_with_total(
        state,
        exit_balance,
        total_active_balance,
        spec,
    )?;
    let v = validator_mut::<E>(state.validators, index)?;
    v.exit_epoch = exit_queue_epoch;
    v.withdrawable_epoch = add(
        exit_queue_epoch,
        spec.min_validator_withdrawability_delay,
        "withdrawable epoch",
    )?;
    Ok(())
}

/// Whether `fork` is one this crate processes (Electra and later).
pub fn is_processed_fork(fork: ForkName) -> bool {
    fork.electra_enabled()
}

// ---------------------------------------------------------------------------------------------
// Deposits: shared by Electra's eth1 deposits (block) and the pending-deposit queue (epoch)

/// `is_valid_deposit_signature(pubkey, withdrawal_credentials, amount, signature)`: the
/// deposit message signed with the fork-agnostic deposit domain. Undecodable keys or signatures
/// are invalid.
///
/// [spec]: electra/beacon-chain.md#new-is_valid_deposit_signature
pub fn is_valid_deposit_signature(
    pubkey: &BLSPubkey,
    withdrawal_credentials: &Bytes32,
    amount: Gwei,
    signature: &BLSSignature,
    spec: &ChainSpec,
) -> bool {
    let Ok(public_key) = pubkey_bytes(pubkey).decompress() else {
        return false;
    };
    let Ok(signature) = bls::Signature::deserialize(signature.as_slice()) else {
        return false;
    };
    let message = DepositMessage {
        pubkey: *pubkey,
        withdrawal_credentials: *withdrawal_credentials,
        amount,
    };
    let domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    let signing_root = compute_signing_root(&message, domain);
    bls::verify(&public_key, signing_root.as_slice(), &signature)
}

/// `add_validator_to_registry(state, pubkey, withdrawal_credentials, amount)` [Modified in
/// Electra:EIP7251]: appends the validator and its balance, participation and inactivity score,
/// and records its key in the public-key cache.
///
/// [spec]: electra/beacon-chain.md#modified-add_validator_to_registry
pub fn add_validator_to_registry<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    pubkey: BLSPubkey,
    withdrawal_credentials: Bytes32,
    amount: Gwei,
) -> Result<(), Error> {
    let index = state.validators.len() as u64;
    let validator = get_validator_from_deposit::<E>(pubkey, withdrawal_credentials, amount);
    state
        .validators
        .push(validator)
        .map_err(|_| Error::ListFull("validators"))?;
    state
        .balances
        .push(amount)
        .map_err(|_| Error::ListFull("balances"))?;
    state
        .previous_epoch_participation
        .push(0)
        .map_err(|_| Error::ListFull("previous_epoch_participation"))?;
    state
        .current_epoch_participation
        .push(0)
        .map_err(|_| Error::ListFull("current_epoch_participation"))?;
    state
        .inactivity_scores
        .push(0)
        .map_err(|_| Error::ListFull("inactivity_scores"))?;
    caches.push_validator(index, &pubkey_bytes(&pubkey));
    Ok(())
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
        for s in 0..4u8 {
            let seed = Root::repeat_byte(s * 41 + 3);
            for count in [1, 3, 64] {
                let fast =
                    sample_by_effective_balance::<E>(&indices, &seed, count, |i| Ok(balance(i)))
                        .expect("non-empty candidates");
                assert_eq!(
                    fast,
                    naive_sample(&indices, &seed, count, balance),
                    "count {count}"
                );
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
