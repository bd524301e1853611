//! The spec's beacon state accessors, in their Electra / Fulu form, and typed reads of one
//! validator or balance.
//!
//! Accessors that need committees or the total active balance go through [`Caches`], which
//! compute them once per epoch.
//!
//! [spec]: phase0/beacon-chain.md#beacon-state-accessors,
//! electra/beacon-chain.md#beacon-state-accessors

use typenum::Unsigned as _;
use types::{
    ChainSpec, Domain, DomainType, Epoch, EthSpec, ForkName, Gwei, Root, Slot, ValidatorIndex,
    electra::Validator, signing::compute_domain,
};

use crate::{
    Caches, Error,
    common::{
        math::{hash, integer_squareroot},
        misc::{compute_epoch_at_slot, compute_proposer_index, compute_start_slot_at_epoch},
        predicates::is_active_validator,
    },
    error::{add, div, mul},
    view::{StateRef, electra_field},
};

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
    if !state.fork_name.electra_enabled() {
        return crate::deneb::compute_proposer_index::<E>(
            state.validators,
            active_indices,
            &proposer_seed_at_slot(&seed, *state.slot),
        );
    }
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

/// `get_activation_churn_limit(state)` [New in Gloas:EIP8061]: the per-epoch churn for
/// activations (pending deposits), `total_active_balance // CHURN_LIMIT_QUOTIENT_GLOAS` but at
/// least `MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA`, rounded down to an increment and capped at
/// `MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT_GLOAS`.
///
/// [spec]: gloas/beacon-chain.md#new-get_activation_churn_limit
pub fn get_activation_churn_limit<E: EthSpec>(
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Gwei {
    spec.max_per_epoch_activation_churn_limit_gloas
        .min(get_exit_churn_limit::<E>(total_active_balance, spec))
}

/// `get_exit_churn_limit(state)` [New in Gloas:EIP8061]: the per-epoch churn for exits,
/// `total_active_balance // CHURN_LIMIT_QUOTIENT_GLOAS` but at least
/// `MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA`, rounded down to an increment; uncapped.
///
/// [spec]: gloas/beacon-chain.md#new-get_exit_churn_limit
pub fn get_exit_churn_limit<E: EthSpec>(total_active_balance: Gwei, spec: &ChainSpec) -> Gwei {
    let churn = spec
        .min_per_epoch_churn_limit_electra
        .max(total_active_balance / spec.churn_limit_quotient_gloas.max(1));
    churn - churn % E::EFFECTIVE_BALANCE_INCREMENT
}

/// `get_consolidation_churn_limit(state)` on a state of `fork`: Electra's (the balance churn
/// less the activation and exit churn) before Gloas, and from Gloas on `total_active_balance
/// // CONSOLIDATION_CHURN_LIMIT_QUOTIENT` rounded down to an increment [Modified in
/// Gloas:EIP8061], independent of the other churns.
///
/// [spec]: gloas/beacon-chain.md#modified-get_consolidation_churn_limit
pub fn get_consolidation_churn_limit_at_fork<E: EthSpec>(
    fork: ForkName,
    total_active_balance: Gwei,
    spec: &ChainSpec,
) -> Gwei {
    if fork.gloas_enabled() {
        let churn = total_active_balance / spec.consolidation_churn_limit_quotient.max(1);
        churn - churn % E::EFFECTIVE_BALANCE_INCREMENT
    } else {
        get_consolidation_churn_limit::<E>(total_active_balance, spec)
    }
}

/// `get_pending_balance_to_withdraw(state, validator_index)` [New in Electra:EIP7251].
pub fn get_pending_balance_to_withdraw<E: EthSpec>(
    state: &StateRef<'_, E>,
    validator_index: ValidatorIndex,
) -> Result<Gwei, Error> {
    let mut total: Gwei = 0;
    let pending_partial_withdrawals = electra_field(
        state.pending_partial_withdrawals,
        "pending_partial_withdrawals",
        state.fork_name,
    )?;
    for w in pending_partial_withdrawals.iter() {
        if w.validator_index == validator_index {
            total = add(total, w.amount, "pending balance to withdraw")?;
        }
    }
    Ok(total)
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
pub fn validator_mut<'v, E: EthSpec>(
    validators: &'v mut crate::view::ValidatorsMut<'_, E>,
    index: ValidatorIndex,
) -> Result<&'v mut Validator, Error> {
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
