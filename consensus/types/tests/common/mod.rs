//! Value generators shared by the integration tests that need the `arbitrary` feature.
//!
//! `BeaconState` does not use its derived `Arbitrary`: milhouse 0.9 derives `Arbitrary`
//! structurally (random tree shape, depth, length and cached hashes), which does not produce a
//! valid list (a generated `List<u64, _>` claims ~10^19 elements and panics when encoded). The
//! states here are built field by field with milhouse lists made by `List::new`.

#![allow(dead_code)]

use arbitrary::Unstructured;
use typenum::Unsigned;
use types::EthSpec;

/// Longest milhouse list in a generated state: past a packed chunk boundary for every element
/// size and past a 1024-leaf subtree of `u8`s, yet cheap in the dev profile.
pub const MAX_STATE_LIST_LEN: usize = 1100;

/// A milhouse list of arbitrary length up to `MAX_STATE_LIST_LEN` (and `N`); elements past the
/// end of the bytes take `arbitrary`'s zero default, so lengths do not depend on the bytes left.
pub fn arb_list<T, N>(u: &mut Unstructured<'_>) -> arbitrary::Result<milhouse::List<T, N>>
where
    T: milhouse::Value + for<'a> arbitrary::Arbitrary<'a>,
    N: Unsigned,
{
    let len = u.int_in_range(0..=MAX_STATE_LIST_LEN.min(N::to_usize()))?;
    let items = (0..len)
        .map(|_| u.arbitrary())
        .collect::<arbitrary::Result<Vec<T>>>()?;
    milhouse::List::new(items).map_err(|_| arbitrary::Error::IncorrectFormat)
}

/// A full milhouse vector; elements past the end of the bytes take `arbitrary`'s zero default.
pub fn arb_vector<T, N>(u: &mut Unstructured<'_>) -> arbitrary::Result<milhouse::Vector<T, N>>
where
    T: milhouse::Value + for<'a> arbitrary::Arbitrary<'a>,
    N: Unsigned,
{
    let items = (0..N::to_usize())
        .map(|_| u.arbitrary())
        .collect::<arbitrary::Result<Vec<T>>>()?;
    milhouse::Vector::new(items).map_err(|_| arbitrary::Error::IncorrectFormat)
}

/// Defines `fn $name<E>(u) -> Result<types::$fork::BeaconState<E>>` from the state's fields by
/// kind. A struct literal, so a field missing from the lists is a compile error.
macro_rules! state_generator {
    ($name:ident, $fork:ident,
     plain: [$($plain:ident),* $(,)?],
     list: [$($list:ident),* $(,)?],
     vector: [$($vector:ident),* $(,)?] $(,)?) => {
        pub fn $name<E: EthSpec>(
            u: &mut Unstructured<'_>,
        ) -> arbitrary::Result<types::$fork::BeaconState<E>> {
            Ok(types::$fork::BeaconState::<E> {
                $($plain: u.arbitrary()?,)*
                $($list: arb_list(u)?,)*
                $($vector: arb_vector(u)?,)*
            })
        }
    };
}

state_generator!(phase0_state, phase0,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, balances],
    list: [historical_roots, eth1_data_votes, validators, previous_epoch_attestations, current_epoch_attestations],
    vector: [block_roots, state_roots, randao_mixes, slashings],
);

state_generator!(altair_state, altair,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, current_sync_committee,
        next_sync_committee, balances, previous_epoch_participation, current_epoch_participation, inactivity_scores],
    list: [historical_roots, eth1_data_votes, validators],
    vector: [block_roots, state_roots, randao_mixes, slashings],
);

state_generator!(bellatrix_state, bellatrix,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, current_sync_committee,
        next_sync_committee, latest_execution_payload_header, balances, previous_epoch_participation, current_epoch_participation, inactivity_scores],
    list: [historical_roots, eth1_data_votes, validators],
    vector: [block_roots, state_roots, randao_mixes, slashings],
);

state_generator!(capella_state, capella,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, current_sync_committee,
        next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
        next_withdrawal_validator_index, balances, previous_epoch_participation, current_epoch_participation, inactivity_scores],
    list: [historical_roots, eth1_data_votes, validators, historical_summaries],
    vector: [block_roots, state_roots, randao_mixes, slashings],
);

state_generator!(deneb_state, deneb,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, current_sync_committee,
        next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
        next_withdrawal_validator_index, balances, previous_epoch_participation, current_epoch_participation, inactivity_scores],
    list: [historical_roots, eth1_data_votes, validators, historical_summaries],
    vector: [block_roots, state_roots, randao_mixes, slashings],
);

state_generator!(electra_state, electra,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, current_sync_committee,
        next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
        next_withdrawal_validator_index, deposit_requests_start_index, deposit_balance_to_consume,
        exit_balance_to_consume, earliest_exit_epoch, consolidation_balance_to_consume,
        earliest_consolidation_epoch, balances, previous_epoch_participation, current_epoch_participation, inactivity_scores],
    list: [historical_roots, eth1_data_votes, validators, historical_summaries, pending_deposits, pending_partial_withdrawals, pending_consolidations],
    vector: [block_roots, state_roots, randao_mixes, slashings],
);

state_generator!(fulu_state, fulu,
    plain: [genesis_time, genesis_validators_root, slot, fork, latest_block_header, eth1_data,
        eth1_deposit_index, justification_bits, previous_justified_checkpoint,
        current_justified_checkpoint, finalized_checkpoint, current_sync_committee,
        next_sync_committee, latest_execution_payload_header, next_withdrawal_index,
        next_withdrawal_validator_index, deposit_requests_start_index, deposit_balance_to_consume,
        exit_balance_to_consume, earliest_exit_epoch, consolidation_balance_to_consume,
        earliest_consolidation_epoch, balances, previous_epoch_participation, current_epoch_participation, inactivity_scores],
    list: [historical_roots, eth1_data_votes, validators, historical_summaries, pending_deposits, pending_partial_withdrawals, pending_consolidations],
    vector: [block_roots, state_roots, randao_mixes, slashings, proposer_lookahead],
);

/// A fixed, well-mixed permutation of `u64`s, for deterministic pseudo-random data.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `len` deterministic pseudo-random bytes.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64)
        .map(|i| splitmix64(seed ^ i.wrapping_mul(0x0123_4567_89ab_cdef)) as u8)
        .collect()
}
