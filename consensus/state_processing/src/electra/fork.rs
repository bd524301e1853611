//! `upgrade_to_electra`.
//!
//! [spec]: electra/fork.md#upgrading-the-state

use types::{BLSSignature, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, GENESIS_SLOT, deneb, electra};

use crate::{
    Error,
    common::{
        UNSET_DEPOSIT_REQUESTS_START_INDEX, compute_activation_exit_epoch, compute_epoch_at_slot,
        get_activation_exit_churn_limit, get_consolidation_churn_limit,
        has_compounding_withdrawal_credential, is_active_validator,
    },
};

/// `bls.G2_POINT_AT_INFINITY`: the placeholder signature of pending deposits made by the
/// upgrade (with `GENESIS_SLOT`, which tells them apart from deposit requests).
fn g2_point_at_infinity() -> BLSSignature {
    let mut bytes = [0u8; 96];
    bytes[0] = 0xc0;
    BLSSignature::from(bytes)
}

/// `upgrade_to_electra(pre)`: the Electra state, with the churn fields initialised, every
/// not-yet-activated validator's balance moved to the pending deposits queue, and the excess
/// balance of compounding validators queued too.
///
/// [spec]: electra/fork.md#upgrading-the-state
pub fn upgrade_to_electra<E: EthSpec>(
    pre: deneb::BeaconState<E>,
    spec: &ChainSpec,
) -> Result<electra::BeaconState<E>, Error> {
    let epoch = compute_epoch_at_slot::<E>(pre.slot);

    let mut earliest_exit_epoch = compute_activation_exit_epoch::<E>(epoch);
    let mut total_active_balance: u64 = 0;
    for validator in pre.validators.iter() {
        if validator.exit_epoch != FAR_FUTURE_EPOCH {
            earliest_exit_epoch = earliest_exit_epoch.max(validator.exit_epoch);
        }
        if is_active_validator(validator, epoch) {
            total_active_balance = total_active_balance
                .checked_add(validator.effective_balance)
                .ok_or(Error::ArithmeticOverflow("total active balance"))?;
        }
    }
    let earliest_exit_epoch = earliest_exit_epoch
        .checked_add(1)
        .ok_or(Error::ArithmeticOverflow("earliest exit epoch"))?;
    let total_active_balance = total_active_balance.max(E::EFFECTIVE_BALANCE_INCREMENT);

    let mut post = electra::BeaconState {
        genesis_time: pre.genesis_time,
        genesis_validators_root: pre.genesis_validators_root,
        slot: pre.slot,
        fork: electra::Fork {
            previous_version: pre.fork.current_version,
            current_version: spec.electra_fork_version,
            epoch,
        },
        latest_block_header: pre.latest_block_header,
        block_roots: pre.block_roots,
        state_roots: pre.state_roots,
        historical_roots: pre.historical_roots,
        eth1_data: pre.eth1_data,
        eth1_data_votes: pre.eth1_data_votes,
        eth1_deposit_index: pre.eth1_deposit_index,
        validators: pre.validators,
        balances: pre.balances,
        randao_mixes: pre.randao_mixes,
        slashings: pre.slashings,
        previous_epoch_participation: pre.previous_epoch_participation,
        current_epoch_participation: pre.current_epoch_participation,
        justification_bits: pre.justification_bits,
        previous_justified_checkpoint: pre.previous_justified_checkpoint,
        current_justified_checkpoint: pre.current_justified_checkpoint,
        finalized_checkpoint: pre.finalized_checkpoint,
        inactivity_scores: pre.inactivity_scores,
        current_sync_committee: pre.current_sync_committee,
        next_sync_committee: pre.next_sync_committee,
        latest_execution_payload_header: pre.latest_execution_payload_header,
        next_withdrawal_index: pre.next_withdrawal_index,
        next_withdrawal_validator_index: pre.next_withdrawal_validator_index,
        historical_summaries: pre.historical_summaries,
        deposit_requests_start_index: UNSET_DEPOSIT_REQUESTS_START_INDEX,
        deposit_balance_to_consume: 0,
        exit_balance_to_consume: get_activation_exit_churn_limit::<E>(total_active_balance, spec),
        earliest_exit_epoch,
        consolidation_balance_to_consume: get_consolidation_churn_limit::<E>(
            total_active_balance,
            spec,
        ),
        earliest_consolidation_epoch: compute_activation_exit_epoch::<E>(epoch),
        pending_deposits: milhouse::List::empty(),
        pending_partial_withdrawals: milhouse::List::empty(),
        pending_consolidations: milhouse::List::empty(),
    };

    // Validators not yet activated go through the pending deposits queue, oldest eligibility
    // first.
    let mut pre_activation: Vec<(u64, usize)> = post
        .validators
        .iter()
        .enumerate()
        .filter(|(_, v)| v.activation_epoch == FAR_FUTURE_EPOCH)
        .map(|(index, v)| (v.activation_eligibility_epoch, index))
        .collect();
    pre_activation.sort_unstable();
    for (_, index) in pre_activation {
        let balance = post.balances.get(index).unwrap_or_default();
        post.balances.set(index, 0)?;
        let validator = post
            .validators
            .get_mut(index)
            .ok_or(Error::UnknownValidator {
                index: index as u64,
                len: 0,
            })?;
        validator.effective_balance = 0;
        validator.activation_eligibility_epoch = FAR_FUTURE_EPOCH;
        let deposit = electra::PendingDeposit {
            pubkey: validator.pubkey,
            withdrawal_credentials: validator.withdrawal_credentials,
            amount: balance,
            signature: g2_point_at_infinity(),
            slot: GENESIS_SLOT,
        };
        post.pending_deposits
            .push(deposit)
            .map_err(|_| Error::ListFull("pending_deposits"))?;
    }

    // Early adopters of compounding credentials go through the activation churn.
    let compounding: Vec<usize> = post
        .validators
        .iter()
        .enumerate()
        .filter(|(_, v)| has_compounding_withdrawal_credential(v))
        .map(|(index, _)| index)
        .collect();
    for index in compounding {
        queue_excess_active_balance(&mut post, index)?;
    }
    Ok(post)
}

/// `queue_excess_active_balance(state, index)` [New in Electra:EIP7251] on a state being
/// upgraded: the balance above `MIN_ACTIVATION_BALANCE` becomes a pending deposit.
///
/// [spec]: electra/beacon-chain.md#new-queue_excess_active_balance
fn queue_excess_active_balance<E: EthSpec>(
    state: &mut electra::BeaconState<E>,
    index: usize,
) -> Result<(), Error> {
    let balance = state.balances.get(index).ok_or(Error::UnknownValidator {
        index: index as u64,
        len: state.balances.len(),
    })?;
    if balance > E::MIN_ACTIVATION_BALANCE {
        let excess_balance = balance - E::MIN_ACTIVATION_BALANCE;
        state.balances.set(index, E::MIN_ACTIVATION_BALANCE)?;
        let validator = state.validators.get(index).ok_or(Error::UnknownValidator {
            index: index as u64,
            len: state.validators.len(),
        })?;
        let deposit = electra::PendingDeposit {
            pubkey: validator.pubkey,
            withdrawal_credentials: validator.withdrawal_credentials,
            amount: excess_balance,
            signature: g2_point_at_infinity(),
            slot: GENESIS_SLOT,
        };
        state
            .pending_deposits
            .push(deposit)
            .map_err(|_| Error::ListFull("pending_deposits"))?;
    }
    Ok(())
}
