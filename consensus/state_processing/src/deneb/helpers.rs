//! The helpers whose Deneb form Electra modifies: the draws by effective balance, the churn
//! limits, the exit queue, a deposit's new validator and the withdrawal predicates.
//!
//! [spec]: deneb/beacon-chain.md#helper-functions (and the helper sections of phase0, altair
//! and capella it keeps)

use ethereum_hashing::hash_fixed;
use types::{
    BLSPubkey, Bytes32, ChainSpec, Epoch, EthSpec, FAR_FUTURE_EPOCH, Gwei, Root, ValidatorIndex,
    electra::Validator,
};

use crate::{
    Error,
    common::{
        compute_activation_exit_epoch, get_current_epoch, has_eth1_withdrawal_credential,
        is_active_validator, validator, validator_mut,
    },
    error::add,
    view::{StateMut, StateRef},
};

/// `MAX_RANDOM_BYTE`: the draws before Electra take one random byte per candidate.
const MAX_RANDOM_BYTE: u64 = (1 << 8) - 1;

/// Walks candidates `i = 0, 1, 2, …`, takes `indices[compute_shuffled_index(i % len(indices),
/// len(indices), seed)]` and accepts it when `effective_balance * MAX_RANDOM_BYTE >=
/// MAX_EFFECTIVE_BALANCE * random_byte`, with `random_byte = hash(seed + uint_to_bytes(i //
/// 32))[i % 32]`, until `count` are accepted (repeats allowed): the draw of Deneb's
/// `compute_proposer_index` (`count == 1`) and `get_next_sync_committee_indices`.
fn sample_by_effective_balance<E: EthSpec>(
    indices: &[ValidatorIndex],
    seed: &Root,
    count: usize,
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error>,
) -> Result<Vec<ValidatorIndex>, Error> {
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
    let mut random_input = [0u8; 40];
    random_input[..32].copy_from_slice(seed.as_slice());
    let mut random_bytes = [0u8; 32];
    let mut selected = Vec::with_capacity(count);
    let mut i: u64 = 0;
    while selected.len() < count {
        let candidate = indices[shuffler.shuffled_index((i % total as u64) as usize)];
        if i.is_multiple_of(32) {
            random_input[32..].copy_from_slice(&(i / 32).to_le_bytes());
            random_bytes = hash_fixed(&random_input);
        }
        let random_byte = random_bytes[(i % 32) as usize] as u128;
        if effective_balance(candidate)? as u128 * MAX_RANDOM_BYTE as u128
            >= E::MAX_EFFECTIVE_BALANCE as u128 * random_byte
        {
            selected.push(candidate);
        }
        i += 1;
    }
    Ok(selected)
}

/// `compute_proposer_index(state, indices, seed)` (phase0's, as Deneb has it): a validator of
/// `indices` drawn with probability proportional to its effective balance, one random byte per
/// candidate.
///
/// [spec]: phase0/beacon-chain.md#compute_proposer_index
pub fn compute_proposer_index<E: EthSpec>(
    validators: crate::view::ValidatorsRef<'_, E>,
    indices: &[ValidatorIndex],
    seed: &Root,
) -> Result<ValidatorIndex, Error> {
    sample_by_effective_balance::<E>(indices, seed, 1, |index| {
        Ok(validators
            .get(index as usize)
            .ok_or(Error::UnknownValidator {
                index,
                len: validators.len(),
            })?
            .effective_balance)
    })?
    .first()
    .copied()
    .ok_or(Error::NoCandidates("compute_proposer_index"))
}

/// The draw of `get_next_sync_committee_indices(state)` (Altair's, as Deneb has it):
/// `SYNC_COMMITTEE_SIZE` validators of `active_next` (the next epoch's active validators) by
/// effective balance, with repeats.
///
/// [spec]: altair/beacon-chain.md#get_next_sync_committee_indices
pub fn get_next_sync_committee_indices<E: EthSpec>(
    active_next: &[ValidatorIndex],
    seed: &Root,
    effective_balance: impl Fn(ValidatorIndex) -> Result<Gwei, Error>,
) -> Result<Vec<ValidatorIndex>, Error> {
    use typenum::Unsigned as _;
    sample_by_effective_balance::<E>(
        active_next,
        seed,
        E::SyncCommitteeSize::to_usize(),
        effective_balance,
    )
}

/// `get_validator_churn_limit(state)`: validators that may enter or leave per epoch, from the
/// number active in the current epoch.
///
/// [spec]: phase0/beacon-chain.md#get_validator_churn_limit
pub fn get_validator_churn_limit<E: EthSpec>(state: &StateRef<'_, E>, spec: &ChainSpec) -> u64 {
    let epoch = get_current_epoch(state);
    let active = state
        .validators
        .iter()
        .filter(|v| is_active_validator(v, epoch))
        .count() as u64;
    spec.min_per_epoch_churn_limit
        .max(active / spec.churn_limit_quotient.max(1))
}

/// `get_validator_activation_churn_limit(state)` [New in Deneb:EIP7514]: the churn limit, capped
/// for activations.
///
/// [spec]: deneb/beacon-chain.md#new-get_validator_activation_churn_limit
pub fn get_validator_activation_churn_limit<E: EthSpec>(
    state: &StateRef<'_, E>,
    spec: &ChainSpec,
) -> u64 {
    spec.max_per_epoch_activation_churn_limit
        .min(get_validator_churn_limit(state, spec))
}

/// `initiate_validator_exit(state, index)` (phase0's, as Deneb has it): the exit goes to the
/// latest exit epoch in use (at least the activation-exit epoch), or the one after when that
/// epoch's exits already fill the churn limit.
///
/// [spec]: phase0/beacon-chain.md#initiate_validator_exit
pub fn initiate_validator_exit<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    index: ValidatorIndex,
    spec: &ChainSpec,
) -> Result<(), Error> {
    if validator(&state.as_ref(), index)?.exit_epoch != FAR_FUTURE_EPOCH {
        return Ok(());
    }
    let current = get_current_epoch(&state.as_ref());
    let mut exit_queue_epoch = state
        .validators
        .iter()
        .map(|v| v.exit_epoch)
        .filter(|&epoch| epoch != FAR_FUTURE_EPOCH)
        .fold(compute_activation_exit_epoch::<E>(current), Epoch::max);
    let exit_queue_churn = state
        .validators
        .iter()
        .filter(|v| v.exit_epoch == exit_queue_epoch)
        .count() as u64;
    if exit_queue_churn >= get_validator_churn_limit(&state.as_ref(), spec) {
        exit_queue_epoch = add(exit_queue_epoch, 1, "exit queue epoch")?;
    }
    let v = validator_mut::<E>(&mut state.validators, index)?;
    v.exit_epoch = exit_queue_epoch;
    v.withdrawable_epoch = add(
        exit_queue_epoch,
        spec.min_validator_withdrawability_delay,
        "withdrawable epoch",
    )?;
    Ok(())
}

/// `is_eligible_for_activation_queue(validator)` (phase0's, as Deneb has it): not yet eligible,
/// and a full `MAX_EFFECTIVE_BALANCE`.
///
/// [spec]: phase0/beacon-chain.md#is_eligible_for_activation_queue
#[inline]
pub fn is_eligible_for_activation_queue<E: EthSpec>(validator: &Validator) -> bool {
    validator.activation_eligibility_epoch == FAR_FUTURE_EPOCH
        && validator.effective_balance == E::MAX_EFFECTIVE_BALANCE
}

/// `get_validator_from_deposit(pubkey, withdrawal_credentials, amount)` (phase0's, as Deneb has
/// it): the effective balance is capped at `MAX_EFFECTIVE_BALANCE`.
///
/// [spec]: phase0/beacon-chain.md#deposits
pub fn get_validator_from_deposit<E: EthSpec>(
    pubkey: BLSPubkey,
    withdrawal_credentials: Bytes32,
    amount: Gwei,
) -> Validator {
    Validator {
        pubkey,
        withdrawal_credentials,
        effective_balance: (amount - amount % E::EFFECTIVE_BALANCE_INCREMENT)
            .min(E::MAX_EFFECTIVE_BALANCE),
        slashed: false,
        activation_eligibility_epoch: FAR_FUTURE_EPOCH,
        activation_epoch: FAR_FUTURE_EPOCH,
        exit_epoch: FAR_FUTURE_EPOCH,
        withdrawable_epoch: FAR_FUTURE_EPOCH,
    }
}

/// `is_fully_withdrawable_validator(validator, balance, epoch)` (Capella's): `0x01` credentials,
/// withdrawable, and a balance.
///
/// [spec]: capella/beacon-chain.md#new-is_fully_withdrawable_validator
#[inline]
pub fn is_fully_withdrawable_validator(validator: &Validator, balance: Gwei, epoch: Epoch) -> bool {
    has_eth1_withdrawal_credential(validator)
        && validator.withdrawable_epoch <= epoch
        && balance > 0
}

/// `is_partially_withdrawable_validator(validator, balance)` (Capella's): `0x01` credentials, a
/// full `MAX_EFFECTIVE_BALANCE`, and a balance above it.
///
/// [spec]: capella/beacon-chain.md#new-is_partially_withdrawable_validator
#[inline]
pub fn is_partially_withdrawable_validator<E: EthSpec>(
    validator: &Validator,
    balance: Gwei,
) -> bool {
    has_eth1_withdrawal_credential(validator)
        && validator.effective_balance == E::MAX_EFFECTIVE_BALANCE
        && balance > E::MAX_EFFECTIVE_BALANCE
}
