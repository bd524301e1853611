//! The bookkeeping steps at the end of an epoch: eth1 votes, slashings, RANDAO mixes,
//! historical summaries, participation flags.
//!
//! [spec]: capella/beacon-chain.md#epoch-processing, altair/beacon-chain.md#participation-flags-updates

use tree_hash::TreeHash;
use types::{EthSpec, capella::HistoricalSummary, typenum::Unsigned};

use super::{EpochProcessingError, StepResult};
use crate::{
    Error,
    common::{get_current_epoch, get_randao_mix},
    view::StateMut,
};

/// `process_eth1_data_reset(state)`: clears the eth1 votes at the end of a voting period.
///
/// [spec]: phase0/beacon-chain.md#eth1-data-votes-updates
pub fn process_eth1_data_reset<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    let next_epoch = get_current_epoch(&state.as_ref()).saturating_add(1);
    if next_epoch.is_multiple_of(E::EPOCHS_PER_ETH1_VOTING_PERIOD) {
        *state.eth1_data_votes = milhouse::List::empty();
    }
    Ok(())
}

/// `process_slashings_reset(state)`: zeroes the slashings slot the next epoch will use.
///
/// [spec]: phase0/beacon-chain.md#slashings-balances-updates
pub fn process_slashings_reset<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    let next_epoch = get_current_epoch(&state.as_ref()).saturating_add(1);
    let index = (next_epoch % E::EpochsPerSlashingsVector::to_u64()) as usize;
    if state
        .slashings
        .get(index)
        .is_some_and(|amount| *amount != 0)
    {
        let len = state.slashings.len();
        *state
            .slashings
            .get_mut(index)
            .ok_or(Error::UnknownValidator {
                index: index as u64,
                len,
            })
            .step("process_slashings_reset")? = 0;
    }
    Ok(())
}

/// `process_randao_mixes_reset(state)`: carries the current mix into the next epoch's slot.
///
/// [spec]: phase0/beacon-chain.md#randao-mixes-updates
pub fn process_randao_mixes_reset<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    let current_epoch = get_current_epoch(&state.as_ref());
    let next_epoch = current_epoch.saturating_add(1);
    let mix = get_randao_mix(&state.as_ref(), current_epoch);
    let index = (next_epoch % E::EpochsPerHistoricalVector::to_u64()) as usize;
    let len = state.randao_mixes.len();
    *state
        .randao_mixes
        .get_mut(index)
        .ok_or(Error::UnknownValidator {
            index: index as u64,
            len,
        })
        .step("process_randao_mixes_reset")? = mix;
    Ok(())
}

/// `process_historical_summaries_update(state)` [New in Capella]: appends the roots of the block
/// and state root vectors once per `SLOTS_PER_HISTORICAL_ROOT` slots.
///
/// [spec]: capella/beacon-chain.md#historical-summaries-updates
pub fn process_historical_summaries_update<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    const STEP: &str = "process_historical_summaries_update";
    let next_epoch = get_current_epoch(&state.as_ref()).saturating_add(1);
    let period = E::SlotsPerHistoricalRoot::to_u64() / E::slots_per_epoch();
    if next_epoch.is_multiple_of(period) {
        // milhouse cannot hash a tree with pending writes.
        state.block_roots.apply_updates().step(STEP)?;
        state.state_roots.apply_updates().step(STEP)?;
        let summary = HistoricalSummary {
            block_summary_root: state.block_roots.tree_hash_root(),
            state_summary_root: state.state_roots.tree_hash_root(),
        };
        state
            .historical_summaries
            .push(summary)
            .map_err(|_| Error::ListFull("historical_summaries"))
            .step(STEP)?;
    }
    Ok(())
}

/// `process_participation_flag_updates(state)`: the current epoch's flags become the previous
/// epoch's, and the current epoch starts with none.
///
/// [spec]: altair/beacon-chain.md#participation-flags-updates
pub fn process_participation_flag_updates<E: EthSpec>(
    state: &mut StateMut<'_, E>,
) -> Result<(), EpochProcessingError> {
    let n = state.validators.len();
    state
        .current_epoch_participation
        .rotate_into(&mut state.previous_epoch_participation, n)
        .step("process_participation_flag_updates")?;
    Ok(())
}
