//! `upgrade_to_fulu`.
//!
//! [spec]: fulu/fork.md#upgrading-the-state

use milhouse::Vector;
use types::{BeaconState, ChainSpec, EthSpec, electra, fulu};

use crate::{
    Error, common::compute_epoch_at_slot, per_epoch::initialize_proposer_lookahead, view::StateRef,
};

/// `upgrade_to_fulu(pre)`: the same state under the Fulu fork version, with the proposer
/// lookahead [New in Fulu:EIP7917] filled for the current and next `MIN_SEED_LOOKAHEAD` epochs.
///
/// [spec]: fulu/fork.md#upgrading-the-state
pub fn upgrade_to_fulu<E: EthSpec>(
    pre: electra::BeaconState<E>,
    spec: &ChainSpec,
) -> Result<fulu::BeaconState<E>, Error> {
    let epoch = compute_epoch_at_slot::<E>(pre.slot);
    let wrapped = BeaconState::Electra(pre);
    let lookahead = initialize_proposer_lookahead(&StateRef::new(&wrapped)?)?;
    let BeaconState::Electra(pre) = wrapped else {
        return Err(Error::UnsupportedFork(wrapped.fork_name()));
    };
    let proposer_lookahead =
        Vector::new(lookahead).map_err(|e| Error::Tree(format!("proposer lookahead: {e:?}")))?;
    Ok(fulu::BeaconState {
        genesis_time: pre.genesis_time,
        genesis_validators_root: pre.genesis_validators_root,
        slot: pre.slot,
        fork: fulu::Fork {
            previous_version: pre.fork.current_version,
            current_version: spec.fulu_fork_version,
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
        deposit_requests_start_index: pre.deposit_requests_start_index,
        deposit_balance_to_consume: pre.deposit_balance_to_consume,
        exit_balance_to_consume: pre.exit_balance_to_consume,
        earliest_exit_epoch: pre.earliest_exit_epoch,
        consolidation_balance_to_consume: pre.consolidation_balance_to_consume,
        earliest_consolidation_epoch: pre.earliest_consolidation_epoch,
        pending_deposits: pre.pending_deposits,
        pending_partial_withdrawals: pre.pending_partial_withdrawals,
        pending_consolidations: pre.pending_consolidations,
        proposer_lookahead,
    })
}
