//! The sync aggregate: the sync committee's signature over the previous block, and its rewards
//! and penalties.
//!
//! [spec]: altair/beacon-chain.md#sync-aggregate-processing

use std::sync::Arc;

use typenum::Unsigned;
use types::{EthSpec, ValidatorIndex, electra::SyncAggregate};

use super::{
    SyncAggregateInvalid, VerifySignatures,
    signature_sets::{self, SignatureSetError},
};
use crate::{
    Caches,
    common::{
        PROPOSER_WEIGHT, SYNC_REWARD_WEIGHT, WEIGHT_DENOMINATOR, decrease_balance,
        get_base_reward_per_increment, get_beacon_proposer_index, increase_balance, pubkey_bytes,
    },
    error::mul,
    view::{StateMut, StateRef},
};

/// The validator indices of the current sync committee's members, in committee order
/// (`all_pubkeys.index(pubkey)` for each member key): from the caches, or looked up in the
/// pubkey cache once per sync committee period.
pub(crate) fn sync_committee_indices<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut Caches,
) -> Result<Arc<[ValidatorIndex]>, SyncAggregateInvalid> {
    let committee = state.current_sync_committee;
    if let Some(indices) = caches.sync_committee_indices(&committee.pubkeys) {
        return Ok(indices);
    }
    let indices = committee
        .pubkeys
        .iter()
        .enumerate()
        .map(|(position, pubkey)| {
            caches
                .validator_index(state, &pubkey_bytes(pubkey))
                .ok_or(SyncAggregateInvalid::UnknownMember { position })
        })
        .collect::<Result<Arc<[ValidatorIndex]>, _>>()?;
    caches.set_sync_committee_indices(&committee.pubkeys, indices.clone());
    Ok(indices)
}

/// `process_sync_aggregate(state, sync_aggregate)`: checks the aggregate signature (unless
/// `verify` is off), rewards each participant and the proposer, and penalises each absent
/// member.
///
/// [spec]: altair/beacon-chain.md#sync-aggregate-processing
pub fn process_sync_aggregate<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    caches: &mut Caches,
    sync_aggregate: &SyncAggregate<E>,
    verify: VerifySignatures,
) -> Result<(), SyncAggregateInvalid> {
    let members = sync_committee_indices(&state.as_ref(), caches)?;
    if verify.is_enabled() {
        let valid = match signature_sets::sync_aggregate_signature_set(
            &state.as_ref(),
            caches,
            sync_aggregate,
            &members,
        ) {
            Ok(Some(set)) => set.verify(),
            Ok(None) => true,
            Err(SignatureSetError::Malformed) => false,
            Err(SignatureSetError::State(e)) => return Err(e.into()),
        };
        if !valid {
            return Err(SyncAggregateInvalid::InvalidSignature {
                participants: sync_aggregate.sync_committee_bits.num_set_bits(),
            });
        }
    }

    let total_active_balance = caches.get_total_active_balance(&state.as_ref())?;
    let total_active_increments = total_active_balance / E::EFFECTIVE_BALANCE_INCREMENT;
    let total_base_rewards = mul(
        get_base_reward_per_increment::<E>(total_active_balance)?,
        total_active_increments,
        "total base rewards",
    )?;
    let max_participant_rewards = mul(total_base_rewards, SYNC_REWARD_WEIGHT, "sync rewards")?
        / WEIGHT_DENOMINATOR
        / E::slots_per_epoch();
    let participant_reward = max_participant_rewards / E::SyncCommitteeSize::to_u64();
    let proposer_reward = mul(participant_reward, PROPOSER_WEIGHT, "sync proposer reward")?
        / (WEIGHT_DENOMINATOR - PROPOSER_WEIGHT);

    let proposer = get_beacon_proposer_index(&state.as_ref(), caches)?;
    // In the spec's order: a member may be the proposer, and decreases saturate at zero.
    for (member, bit) in members
        .iter()
        .zip(sync_aggregate.sync_committee_bits.iter())
    {
        if bit {
            increase_balance(state, *member, participant_reward)?;
            increase_balance(state, proposer, proposer_reward)?;
        } else {
            decrease_balance(state, *member, participant_reward)?;
        }
    }
    Ok(())
}
