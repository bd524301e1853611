//! `POST /eth/v1/beacon/rewards/sync_committee/{block_id}`: what each sync committee member
//! gained or lost for the block's sync aggregate, by the spec's `process_sync_aggregate` on the
//! block's pre-state.
//!
//! [spec]: apis/beacon/rewards/sync_committee.yaml, altair/beacon-chain.md#sync-aggregate-processing

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use beacon_api::{BlockId, ExecutionOptimisticFinalizedResponse, ValidatorId};
use serde::Serialize;
use ssz_types::typenum::Unsigned;
use state_processing::common::{
    SYNC_REWARD_WEIGHT, WEIGHT_DENOMINATOR, get_base_reward_per_increment, get_current_epoch,
};
use types::{EthSpec, SignedBeaconBlock, ValidatorIndex};

use crate::ApiContext;
use crate::beacon::{committees_of, sync_committee_indices};
use crate::error::HttpError;
use crate::query::{Body, PathParams, parse_path};
use crate::response::{blocking, json};
use crate::state_id::{block_at, read_block, state_at};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// One member's reward (negative: a penalty), in Gwei.
#[derive(Debug, Clone, Serialize)]
struct SyncCommitteeReward {
    #[serde(with = "beacon_api::json::quoted_u64")]
    validator_index: ValidatorIndex,
    reward: String,
}

/// `POST /eth/v1/beacon/rewards/sync_committee/{block_id}` with an optional list of ids.
pub(crate) async fn post_sync_committee_rewards<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let id: BlockId = parse_path("block id", path.at(0)?)?;
    let ids: Vec<ValidatorId> = if body.bytes.is_empty() {
        Vec::new()
    } else {
        body.json()?
    };
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        let (SignedBeaconBlock::Electra(signed) | SignedBeaconBlock::Fulu(signed)) = &block else {
            return Err(HttpError::bad_request(format!(
                "rewards of {} blocks are not served by this node",
                block.fork_name()
            )));
        };
        let message = &signed.message;
        if message.slot == 0 {
            return Err(HttpError::bad_request(
                "the genesis block has no sync aggregate",
            ));
        }
        // The pre-state: the parent's post-state through the empty slots to the block's.
        let pre = ctx.chain.block_pre_state(message)?;
        let epoch = message.slot / E::slots_per_epoch();
        let members = sync_committee_indices(&ctx, &pre, epoch)?;
        let view = pre.view()?;
        let total_active_balance =
            committees_of(&ctx, &pre, get_current_epoch(&view))?.total_active_balance();
        let total_base_rewards = get_base_reward_per_increment::<E>(total_active_balance)?
            .saturating_mul(total_active_balance / E::EFFECTIVE_BALANCE_INCREMENT);
        let max_participant_rewards = total_base_rewards.saturating_mul(SYNC_REWARD_WEIGHT)
            / WEIGHT_DENOMINATOR
            / E::slots_per_epoch();
        let participant_reward =
            i128::from(max_participant_rewards / E::SyncCommitteeSize::to_u64());
        let bits = &message.body.sync_aggregate.sync_committee_bits;
        let mut rewards: BTreeMap<ValidatorIndex, i128> = BTreeMap::new();
        for (position, member) in members.iter().enumerate() {
            let signed = bits.get(position).unwrap_or(false);
            *rewards.entry(*member).or_default() += if signed {
                participant_reward
            } else {
                -participant_reward
            };
        }
        let wanted: Option<Vec<ValidatorIndex>> = (!ids.is_empty()).then(|| {
            ids.iter()
                .filter_map(|id| match id {
                    ValidatorId::Index(i) => Some(*i),
                    ValidatorId::PublicKey(key) => {
                        ctx.caches.validator_index(&view, &pre.caches, key)
                    }
                })
                .collect()
        });
        let data: Vec<SyncCommitteeReward> = rewards
            .into_iter()
            .filter(|(index, _)| wanted.as_ref().is_none_or(|w| w.contains(index)))
            .map(|(validator_index, reward)| SyncCommitteeReward {
                validator_index,
                reward: reward.to_string(),
            })
            .collect();
        json(&ExecutionOptimisticFinalizedResponse {
            execution_optimistic: at.execution_optimistic,
            finalized: at.finalized,
            data,
        })
    })
    .await
}

/// `GET /eth/v1/beacon/rewards/blocks/{block_id}` data: the proposer's reward for the block, in
/// Gwei, by component.
#[derive(Debug, Clone, Serialize)]
struct BlockRewards {
    #[serde(with = "beacon_api::json::quoted_u64")]
    proposer_index: ValidatorIndex,
    #[serde(with = "beacon_api::json::quoted_u64")]
    total: u64,
    #[serde(with = "beacon_api::json::quoted_u64")]
    attestations: u64,
    #[serde(with = "beacon_api::json::quoted_u64")]
    sync_aggregate: u64,
    #[serde(with = "beacon_api::json::quoted_u64")]
    proposer_slashings: u64,
    #[serde(with = "beacon_api::json::quoted_u64")]
    attester_slashings: u64,
}

/// `GET /eth/v1/beacon/rewards/blocks/{block_id}`: the block replayed on its pre-state by the
/// chain (signatures not checked: it was imported); the total is the proposer's balance change
/// with its withdrawals added back, the sync aggregate and slashing parts by the spec's
/// formulas, the attestations the rest.
///
/// [spec]: apis/beacon/rewards/blocks.yaml
pub(crate) async fn get_block_rewards<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    use state_processing::common::{PROPOSER_WEIGHT, balance};
    let id: BlockId = parse_path("block id", path.at(0)?)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        let (SignedBeaconBlock::Electra(signed) | SignedBeaconBlock::Fulu(signed)) = &block else {
            return Err(HttpError::bad_request(format!(
                "rewards of {} blocks are not served by this node",
                block.fork_name()
            )));
        };
        let message = &signed.message;
        if message.slot == 0 {
            return Err(HttpError::bad_request(
                "the genesis block earned no rewards",
            ));
        }
        let replay = ctx.chain.replay_block(at.root, message)?;
        let proposer = message.proposer_index;
        let (sync_aggregate, proposer_slashings, attester_slashings, before) = {
            let view = replay.pre_state.view()?;
            let total_active_balance =
                committees_of(&ctx, &replay.pre_state, get_current_epoch(&view))?
                    .total_active_balance();
            let total_base_rewards = get_base_reward_per_increment::<E>(total_active_balance)?
                .saturating_mul(total_active_balance / E::EFFECTIVE_BALANCE_INCREMENT);
            let participant_reward = total_base_rewards.saturating_mul(SYNC_REWARD_WEIGHT)
                / WEIGHT_DENOMINATOR
                / E::slots_per_epoch()
                / E::SyncCommitteeSize::to_u64();
            let proposer_reward = participant_reward.saturating_mul(PROPOSER_WEIGHT)
                / (WEIGHT_DENOMINATOR - PROPOSER_WEIGHT);
            let participants = message
                .body
                .sync_aggregate
                .sync_committee_bits
                .num_set_bits() as u64;
            // `slash_validator` with no whistleblower: the proposer takes the whole
            // whistleblower reward of each slashed validator.
            let whistleblower_reward = |index: ValidatorIndex| {
                view.validators
                    .get(index as usize)
                    .filter(|v| !v.slashed)
                    .map_or(0, |v| {
                        v.effective_balance / E::WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA
                    })
            };
            let proposer_slashings: u64 = message
                .body
                .proposer_slashings
                .iter()
                .map(|s| whistleblower_reward(s.signed_header_1.message.proposer_index))
                .sum();
            let attester_slashings: u64 = message
                .body
                .attester_slashings
                .iter()
                .map(|s| {
                    let second: std::collections::BTreeSet<_> =
                        s.attestation_2.attesting_indices.iter().copied().collect();
                    s.attestation_1
                        .attesting_indices
                        .iter()
                        .filter(|i| second.contains(i))
                        .map(|i| whistleblower_reward(*i))
                        .sum::<u64>()
                })
                .sum();
            (
                proposer_reward.saturating_mul(participants),
                proposer_slashings,
                attester_slashings,
                balance(&view, proposer)?,
            )
        };
        let withdrawn: u64 = message
            .body
            .execution_payload
            .withdrawals
            .iter()
            .filter(|w| w.validator_index == proposer)
            .map(|w| w.amount)
            .sum();
        let after = balance(&replay.post_state.view()?, proposer)?;
        let total = after.saturating_add(withdrawn).saturating_sub(before);
        json(&ExecutionOptimisticFinalizedResponse {
            execution_optimistic: at.execution_optimistic,
            finalized: at.finalized,
            data: BlockRewards {
                proposer_index: proposer,
                total,
                attestations: total
                    .saturating_sub(sync_aggregate)
                    .saturating_sub(proposer_slashings)
                    .saturating_sub(attester_slashings),
                sync_aggregate,
                proposer_slashings,
                attester_slashings,
            },
        })
    })
    .await
}

/// A validator's attestation rewards for an epoch, in Gwei (negative: a penalty).
#[derive(Debug, Clone, Serialize)]
struct AttestationRewards {
    #[serde(with = "beacon_api::json::quoted_u64")]
    validator_index: ValidatorIndex,
    head: String,
    target: String,
    source: String,
    /// The inclusion delay reward: phase0 only, "0" from Altair on (served so that clients whose
    /// type has the field, Lodestar's, decode the answer).
    inclusion_delay: String,
    inactivity: String,
}

/// What a validator of an effective balance would have earned attesting perfectly.
#[derive(Debug, Clone, Serialize)]
struct IdealAttestationRewards {
    #[serde(with = "beacon_api::json::quoted_u64")]
    effective_balance: u64,
    head: String,
    target: String,
    source: String,
    /// As in [`AttestationRewards`]: "0" from Altair on.
    inclusion_delay: String,
    inactivity: String,
}

/// `POST /eth/v1/beacon/rewards/attestations/{epoch}` with an optional list of ids: the spec's
/// `get_flag_index_deltas` and `get_inactivity_penalty_deltas` on the state whose epoch
/// processing pays for `epoch` (the canonical state at the last slot of `epoch + 1`, its
/// previous epoch `epoch`), and the ideal rewards of each effective balance found.
///
/// [spec]: apis/beacon/rewards/attestations.yaml, altair/beacon-chain.md#get_flag_index_deltas
pub(crate) async fn post_attestation_rewards<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    use state_processing::common::{PARTICIPATION_FLAG_WEIGHTS, has_flag, is_active_validator};
    use state_processing::per_epoch::{
        get_flag_index_deltas, get_inactivity_penalty_deltas, is_in_inactivity_leak,
    };
    let epoch: types::Epoch = parse_path("epoch", path.at(0)?)?;
    let ids: Vec<ValidatorId> = if body.bytes.is_empty() {
        Vec::new()
    } else {
        body.json()?
    };
    blocking(ctx.workers(), move || {
        let spe = E::slots_per_epoch();
        let slot = epoch
            .checked_add(2)
            .and_then(|e| e.checked_mul(spe))
            .map(|s| s - 1)
            .ok_or_else(|| HttpError::bad_request(format!("epoch {epoch} out of range")))?;
        let head_slot = ctx.chain.head().slot;
        if slot > head_slot {
            return Err(HttpError::not_found(format!(
                "the rewards of epoch {epoch} are paid at the end of epoch {}: the head is at slot {head_slot}",
                epoch + 1
            )));
        }
        let at = state_at(&ctx, beacon_api::StateId::Slot(slot))?;
        let view = at.state.view()?;
        let spec = ctx.chain.spec();
        let epoch_error = |e| HttpError::internal(format!("epoch processing: {e:?}"));
        let flag_deltas: Vec<(Vec<u64>, Vec<u64>)> = (0..PARTICIPATION_FLAG_WEIGHTS.len())
            .map(|flag| get_flag_index_deltas(&view, flag, spec).map_err(epoch_error))
            .collect::<Result<_, _>>()?;
        let (_, inactivity) = get_inactivity_penalty_deltas(&view, spec).map_err(epoch_error)?;
        let signed = |reward: u64, penalty: u64| (i128::from(reward) - i128::from(penalty)).to_string();
        let wanted: Vec<ValidatorIndex> = if ids.is_empty() {
            (0..view.validators.len() as u64)
                .filter(|i| {
                    view.validators.get(*i as usize).is_some_and(|v| {
                        is_active_validator(v, epoch)
                            || (v.slashed && epoch + 1 < v.withdrawable_epoch)
                    })
                })
                .collect()
        } else {
            ids.iter()
                .filter_map(|id| match id {
                    ValidatorId::Index(i) => Some(*i),
                    ValidatorId::PublicKey(key) => {
                        ctx.caches.validator_index(&view, &at.state.caches, key)
                    }
                })
                .collect()
        };
        let (source, target, head) = (0, 1, 2);
        let total_rewards: Vec<AttestationRewards> = wanted
            .iter()
            .filter_map(|index| {
                let i = usize::try_from(*index).ok()?;
                let delta = |flag: usize| {
                    let (rewards, penalties) = &flag_deltas[flag];
                    Some(signed(*rewards.get(i)?, *penalties.get(i)?))
                };
                Some(AttestationRewards {
                    validator_index: *index,
                    head: delta(head)?,
                    target: delta(target)?,
                    source: delta(source)?,
                    inclusion_delay: "0".into(),
                    inactivity: signed(0, *inactivity.get(i)?),
                })
            })
            .collect();

        // Ideal: every flag set, for each effective balance among the validators asked about.
        let total_active_balance =
            committees_of(&ctx, &at.state, get_current_epoch(&view))?.total_active_balance();
        let increment = E::EFFECTIVE_BALANCE_INCREMENT;
        let per_increment =
            get_base_reward_per_increment::<E>(total_active_balance)?;
        let active_increments = total_active_balance / increment;
        let mut participating = [0u64; 3];
        for (i, flags) in view.previous_epoch_participation.iter().enumerate() {
            let Some(v) = view.validators.get(i) else {
                continue;
            };
            if v.slashed || !is_active_validator(v, epoch) {
                continue;
            }
            for (flag, total) in participating.iter_mut().enumerate() {
                if has_flag(flags, flag) {
                    *total = total.saturating_add(v.effective_balance);
                }
            }
        }
        let leak = is_in_inactivity_leak(&view);
        let mut balances: Vec<u64> = wanted
            .iter()
            .filter_map(|i| view.validators.get(*i as usize).map(|v| v.effective_balance))
            .collect();
        balances.sort_unstable();
        balances.dedup();
        let ideal_rewards: Vec<IdealAttestationRewards> = balances
            .into_iter()
            .map(|effective_balance| {
                let base_reward = (effective_balance / increment).saturating_mul(per_increment);
                let ideal = |flag: usize| -> String {
                    if leak {
                        return "0".into();
                    }
                    let participating_increments = participating[flag].max(increment) / increment;
                    (u128::from(base_reward)
                        * u128::from(PARTICIPATION_FLAG_WEIGHTS[flag])
                        * u128::from(participating_increments)
                        / (u128::from(active_increments.max(1)) * u128::from(WEIGHT_DENOMINATOR)))
                    .to_string()
                };
                IdealAttestationRewards {
                    effective_balance,
                    head: ideal(head),
                    target: ideal(target),
                    source: ideal(source),
                    inclusion_delay: "0".into(),
                    inactivity: "0".into(),
                }
            })
            .collect();
        json(&ExecutionOptimisticFinalizedResponse {
            execution_optimistic: at.execution_optimistic,
            finalized: at.finalized,
            data: serde_json::json!({
                "ideal_rewards": ideal_rewards,
                "total_rewards": total_rewards,
            }),
        })
    })
    .await
}
