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

fn state_error(e: impl std::fmt::Debug) -> HttpError {
    HttpError::internal(format!("state: {e:?}"))
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
    blocking(move || {
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
        let parent = read_block(&ctx, &message.parent_root)?;
        let mut pre = state_at(&ctx, beacon_api::StateId::Root(parent.state_root()))?;
        if pre.slot() < message.slot {
            state_processing::per_slot::process_slots(
                &mut pre.state,
                message.slot,
                ctx.chain.spec(),
            )
            .map_err(|e| HttpError::internal(format!("advancing the pre-state: {e:?}")))?;
        }
        let epoch = message.slot / E::slots_per_epoch();
        let members = sync_committee_indices(&ctx, &pre.state, epoch)?;
        let view = pre.state.view().map_err(state_error)?;
        let total_active_balance =
            committees_of(&ctx, &pre.state, get_current_epoch(&view))?.total_active_balance();
        let total_base_rewards = get_base_reward_per_increment::<E>(total_active_balance)
            .map_err(state_error)?
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
                        ctx.caches.validator_index(&view, &pre.state.caches, key)
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
