//! `/eth/v1/validator/*` and `/eth/v2/validator/*` reads and subscriptions: duties,
//! attestation data, aggregates, sync contributions, subnet subscriptions, proposer
//! preparation, liveness (registrations: `builder.rs`).
//!
//! [spec]: apis/validator/*.yaml, validator.md of each fork

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use beacon_api::{
    AttesterDuty, BeaconCommitteeSubscription, DutiesResponse, Encoding, ForkVersionedResponse,
    GenericResponse, LivenessResponseData, ProposerDuty, ProposerPreparationData,
    SyncCommitteeSubscription, SyncDutiesResponse, SyncDuty,
};
use serde::Deserialize;
use ssz::Encode;
use ssz_types::typenum::Unsigned;
use state_processing::CachedBeaconState;
use state_processing::common::{compute_epoch_at_slot, get_current_epoch};
use tree_hash::TreeHash;
use types::electra::AttestationData;
use types::{Epoch, EthSpec, Root, Slot, ValidatorIndex};

use crate::ApiContext;
use crate::beacon::{Registry, committees_of, sync_committee_indices};
use crate::error::HttpError;
use crate::network::SubnetSubscription;
use crate::query::{Body, PathParams, Query, parse_path};
use crate::response::{
    JSON_OR_SSZ, accept, blocking_duty, json, ok_empty, ssz_bytes, with_version,
};
use crate::state_id::{StateAt, latest_block_root_of, state_at};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// A list of quoted validator indices (the duties bodies).
#[derive(Deserialize)]
#[serde(transparent)]
pub(crate) struct Indices(
    #[serde(with = "beacon_api::json::quoted_u64_vec")] pub(crate) Vec<ValidatorIndex>,
);

/// The clock's epoch (with the gossip clock disparity, so a request just before an epoch
/// boundary may ask for the next one).
pub(crate) fn clock_epoch<E: EthSpec>(ctx: &ApiContext<E>) -> Epoch {
    ctx.chain.epoch_with_future_tolerance()
}

/// The root of the block at `slot` as `at` knows it: `block_roots` for past slots, the state's
/// latest block for its own slot and later; slot 0 for an underflow.
fn block_root_at<E: EthSpec>(at: &StateAt<E>, slot: Slot) -> Root {
    let state_slot = at.slot();
    if slot >= state_slot {
        return at.latest_block_root;
    }
    let n = E::SlotsPerHistoricalRoot::to_u64();
    if state_slot - slot <= n {
        at.state
            .state
            .block_roots()
            .get((slot % n) as usize)
            .copied()
            .unwrap_or(at.latest_block_root)
    } else {
        latest_block_root_of(&at.state.state, at.root)
    }
}

/// `get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch) - 1)`, the genesis block
/// root on underflow.
pub(crate) fn dependent_root<E: EthSpec>(at: &StateAt<E>, epoch: Epoch) -> Root {
    let start = epoch * E::slots_per_epoch();
    block_root_at(at, start.saturating_sub(1))
}

pub(crate) fn parse_epoch(path: &PathParams) -> Result<Epoch, HttpError> {
    parse_path("epoch", path.at(0)?)
}

/// `POST /eth/v1/validator/duties/attester/{epoch}`.
pub(crate) async fn post_attester_duties<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let epoch = parse_epoch(&path)?;
    let Indices(indices) = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let limit = clock_epoch(&ctx) + 1;
        if epoch > limit {
            return Err(HttpError::bad_request(format!(
                "epoch {epoch} is more than one epoch ahead of the current epoch {}",
                limit - 1
            )));
        }
        let at = ctx.chain.duty_state(epoch)?;
        // Within one epoch of the state (`committees_of`'s rule), then from the index.
        committees_of(&ctx, &at.state, epoch)?;
        let view = at.state.view()?;
        let index = ctx.caches.duty_index(&view, &at.state.caches, epoch)?;
        let per_slot = index.committees_per_slot;
        let data: Vec<AttesterDuty> = indices
            .iter()
            .filter_map(|validator| {
                let (slot, committee_index, position, length) = index.get(*validator)?;
                Some(AttesterDuty {
                    pubkey: view.validators.get(*validator as usize)?.pubkey,
                    validator_index: *validator,
                    committee_index,
                    committee_length: length,
                    committees_at_slot: per_slot,
                    validator_committee_index: position,
                    slot,
                })
            })
            .collect();
        json(&DutiesResponse {
            dependent_root: dependent_root(&at, epoch.saturating_sub(1)),
            execution_optimistic: at.execution_optimistic,
            data,
        })
    })
    .await
}

/// The proposers of every slot of `epoch` from a state whose lookahead (Fulu) covers it, or
/// computed for the state's own epoch before Fulu.
fn proposers<E: EthSpec>(
    state: &CachedBeaconState<E>,
    epoch: Epoch,
) -> Result<Vec<ValidatorIndex>, HttpError> {
    let view = state.view()?;
    let current = get_current_epoch(&view);
    let spe = E::slots_per_epoch() as usize;
    if let Some(lookahead) = view.proposer_lookahead
        && epoch >= current
    {
        let start = (epoch - current) as usize * spe;
        let slots: Vec<u64> = lookahead.iter().skip(start).take(spe).copied().collect();
        if slots.len() == spe {
            return Ok(slots);
        }
    }
    if epoch == current {
        return state_processing::fulu::proposer_lookahead::get_beacon_proposer_indices(
            &view, epoch,
        )
        .map_err(HttpError::from);
    }
    Err(HttpError::internal(format!(
        "no proposer lookahead for epoch {epoch} in a state of epoch {current}"
    )))
}

/// Which rule a proposer duties answer's `dependent_root` follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProposerDependentRoot {
    /// v1: the last block of `epoch - 1` before Fulu, of `epoch - 2` from Fulu on (EIP-7917's
    /// lookahead fixes an epoch's proposers one epoch earlier).
    ByFork,
    /// v2: always `get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch - 1) - 1)`
    /// (the genesis block root on underflow), the root `head_v2` announces.
    EpochMinusOne,
}

/// `GET /eth/v1/validator/duties/proposer/{epoch}` (deprecated by v2).
pub(crate) async fn get_proposer_duties<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    proposer_duties(ctx, parse_epoch(&path)?, ProposerDependentRoot::ByFork).await
}

/// `GET /eth/v2/validator/duties/proposer/{epoch}`: as v1, with the dependent root of
/// `epoch - 1`'s start.
pub(crate) async fn get_proposer_duties_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    proposer_duties(
        ctx,
        parse_epoch(&path)?,
        ProposerDependentRoot::EpochMinusOne,
    )
    .await
}

async fn proposer_duties<E: EthSpec>(
    ctx: Arc<ApiContext<E>>,
    epoch: Epoch,
    rule: ProposerDependentRoot,
) -> Result<Response, HttpError> {
    blocking_duty(ctx.workers(), move || {
        let limit = clock_epoch(&ctx) + 1;
        if epoch > limit {
            return Err(HttpError::bad_request(format!(
                "epoch {epoch} is more than one epoch ahead of the current epoch {}",
                limit - 1
            )));
        }
        let spe = E::slots_per_epoch();
        let head_epoch = ctx.chain.head().slot / spe;
        let at = if epoch == head_epoch || epoch == head_epoch + 1 {
            state_at(&ctx, beacon_api::StateId::Head)?
        } else if epoch < head_epoch {
            // A past epoch: its proposers are in the lookahead of the state at its first
            // slot (a later state's lookahead starts at its own epoch).
            state_at(&ctx, beacon_api::StateId::Slot(epoch * spe))?
        } else {
            ctx.chain.duty_state(epoch)?
        };
        let indices = proposers(&at.state, epoch)?;
        let registry = Registry::of(&at.state)?;
        let data: Vec<ProposerDuty> = indices
            .into_iter()
            .enumerate()
            .filter_map(|(i, index)| {
                Some(ProposerDuty {
                    pubkey: registry.validator(index)?.pubkey,
                    validator_index: index,
                    slot: epoch * spe + i as u64,
                })
            })
            .collect();
        let decision_epoch = match rule {
            ProposerDependentRoot::ByFork if !at.state.state.fork_name().fulu_enabled() => epoch,
            ProposerDependentRoot::ByFork | ProposerDependentRoot::EpochMinusOne => {
                epoch.saturating_sub(1)
            }
        };
        json(&DutiesResponse {
            dependent_root: dependent_root(&at, decision_epoch),
            execution_optimistic: at.execution_optimistic,
            data,
        })
    })
    .await
}

/// `POST /eth/v1/validator/duties/sync/{epoch}`.
pub(crate) async fn post_sync_duties<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let epoch = parse_epoch(&path)?;
    let Indices(indices) = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let at = ctx.chain.sync_duty_state(epoch)?;
        let members = sync_committee_indices(&ctx, &at.state, epoch)?;
        // Each member's positions in the committee, in one pass over it.
        let mut positions_of: std::collections::HashMap<u64, Vec<u64>> =
            std::collections::HashMap::with_capacity(members.len());
        for (position, member) in members.iter().enumerate() {
            positions_of
                .entry(*member)
                .or_default()
                .push(position as u64);
        }
        let registry = Registry::of(&at.state)?;
        let data = indices
            .iter()
            .filter_map(|index| {
                let positions = positions_of.get(index)?.clone();
                Some(SyncDuty {
                    pubkey: registry.validator(*index)?.pubkey,
                    validator_index: *index,
                    validator_sync_committee_indices: positions,
                })
            })
            .collect();
        json(&SyncDutiesResponse {
            execution_optimistic: at.execution_optimistic,
            data,
        })
    })
    .await
}

/// `produce_attestation_data`: the head's vote for `slot` (Electra: `index` zero; Gloas: the
/// payload status the vote supports, `BeaconChain::attestation_payload_index`).
///
/// [spec]: phase0/validator.md#attestation-data, electra/validator.md#attestation-data,
/// gloas/validator.md#attestation
fn attestation_data<E: EthSpec>(
    ctx: &ApiContext<E>,
    slot: Slot,
    committee_index: u64,
) -> Result<AttestationData, HttpError> {
    let spe = E::slots_per_epoch();
    let now = ctx
        .chain
        .now_ms()
        .saturating_add(ctx.chain.spec().maximum_gossip_clock_disparity);
    let clock_slot = ctx.chain.slot_at_ms(now);
    if slot > clock_slot {
        return Err(HttpError::bad_request(format!(
            "slot {slot} is in the future (current slot {clock_slot})"
        )));
    }
    let epoch = compute_epoch_at_slot::<E>(slot);
    let head = state_at(ctx, beacon_api::StateId::Head)?;
    let head_epoch = head.slot() / spe;
    if epoch + 1 < head_epoch {
        return Err(HttpError::bad_request(format!(
            "slot {slot} is older than the previous epoch of the head"
        )));
    }
    if epoch <= head_epoch + 1 {
        let per_slot = committees_of(ctx, &head.state, epoch)?.committees_per_slot();
        if committee_index >= per_slot {
            return Err(HttpError::bad_request(format!(
                "committee index {committee_index} out of range ({per_slot} per slot)"
            )));
        }
    }
    // The head state as of the attestation's epoch: justification may move at the boundary.
    let source = ctx.chain.justified_source_at(&head, epoch)?;
    let beacon_block_root = block_root_at(&head, slot);
    Ok(AttestationData {
        slot,
        index: ctx.chain.attestation_payload_index(slot, beacon_block_root),
        beacon_block_root,
        source,
        target: types::phase0::Checkpoint {
            epoch,
            root: block_root_at(&head, epoch * spe),
        },
    })
}

/// `GET /eth/v1/validator/attestation_data?slot=..&committee_index=..` (JSON or SSZ).
pub(crate) async fn get_attestation_data<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let slot: Slot = query.required("slot")?;
    let committee_index: u64 = query.required("committee_index")?;
    blocking_duty(ctx.workers(), move || {
        let data = attestation_data(&ctx, slot, committee_index)?;
        match encoding {
            Encoding::Ssz => Ok(ssz_bytes(data.as_ssz_bytes())),
            Encoding::Json => json(&GenericResponse { data }),
        }
    })
    .await
}

/// `GET /eth/v2/validator/aggregate_attestation?attestation_data_root=..&slot=..&committee_index=..`:
/// the pool's aggregate of that data and committee with the most attesters.
pub(crate) async fn get_aggregate_attestation_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let data_root: Root = query.required("attestation_data_root")?;
    let slot: Slot = query.required("slot")?;
    let committee_index: u64 = query.required("committee_index")?;
    if committee_index >= E::MaxCommitteesPerSlot::to_u64() {
        return Err(HttpError::bad_request(format!(
            "committee index {committee_index} out of range"
        )));
    }
    blocking_duty(ctx.workers(), move || {
        let best = ctx
            .pool
            .attestations()
            .map_err(|e| HttpError::internal(format!("operation pool: {e:?}")))?
            .into_iter()
            .filter(|a| {
                a.data.slot == slot
                    && a.committee_bits
                        .get(committee_index as usize)
                        .unwrap_or(false)
                    && a.data.tree_hash_root() == data_root
            })
            .max_by_key(|a| a.aggregation_bits.num_set_bits())
            .ok_or_else(|| {
                HttpError::not_found(format!(
                    "no aggregate for data {data_root} and committee {committee_index}"
                ))
            })?;
        let fork = ctx.chain.spec().fork_name_at_slot::<E>(slot);
        let attestation = if fork.fulu_enabled() {
            types::Attestation::Fulu(best)
        } else {
            types::Attestation::Electra(best)
        };
        let response = match encoding {
            Encoding::Ssz => ssz_bytes(attestation.as_ssz_bytes()),
            Encoding::Json => json(&ForkVersionedResponse::new(fork, attestation))?,
        };
        Ok(with_version(response, fork))
    })
    .await
}

/// `GET /eth/v1/validator/sync_committee_contribution?slot=..&subcommittee_index=..&beacon_block_root=..`.
pub(crate) async fn get_sync_committee_contribution<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
) -> Result<Response, HttpError> {
    let slot: Slot = query.required("slot")?;
    let subcommittee_index: u64 = query.required("subcommittee_index")?;
    let beacon_block_root: Root = query.required("beacon_block_root")?;
    if subcommittee_index >= types::subnets::SYNC_COMMITTEE_SUBNET_COUNT {
        return Err(HttpError::bad_request(format!(
            "subcommittee index {subcommittee_index} out of range"
        )));
    }
    let contribution = ctx
        .sync_messages
        .contribution::<E>(slot, beacon_block_root, subcommittee_index)
        .ok_or_else(|| {
            HttpError::not_found(format!(
                "no sync committee messages for slot {slot}, subcommittee {subcommittee_index}, block {beacon_block_root}"
            ))
        })?;
    json(&GenericResponse { data: contribution })
}

/// `POST /eth/v1/validator/beacon_committee_subscriptions`: the attestation subnets of the
/// duties, for the network to join.
pub(crate) async fn post_beacon_committee_subscriptions<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let subscriptions: Vec<BeaconCommitteeSubscription> = body.json()?;
    let spec = ctx.chain.spec();
    let mut out = Vec::with_capacity(subscriptions.len());
    for s in &subscriptions {
        if s.committee_index >= s.committees_at_slot
            || s.committees_at_slot > E::MaxCommitteesPerSlot::to_u64()
        {
            return Err(HttpError::bad_request(format!(
                "committee index {} of {} committees",
                s.committee_index, s.committees_at_slot
            )));
        }
        let subnet = types::subnets::compute_subnet_for_attestation::<E>(
            spec,
            s.committees_at_slot,
            s.slot,
            s.committee_index,
        )
        .map_err(|e| HttpError::bad_request(format!("{e:?}")))?;
        out.push(SubnetSubscription::Attestation {
            subnet,
            slot: s.slot,
            aggregator: s.is_aggregator,
        });
    }
    ctx.network.subscribe_subnets(out);
    Ok(ok_empty())
}

/// `POST /eth/v1/validator/sync_committee_subscriptions`.
pub(crate) async fn post_sync_committee_subscriptions<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let subscriptions: Vec<SyncCommitteeSubscription> = body.json()?;
    let mut out = Vec::new();
    for s in &subscriptions {
        let subnets = types::subnets::compute_subnets_for_sync_committee::<E>(
            s.sync_committee_indices.iter().copied(),
        )
        .map_err(|e| HttpError::bad_request(format!("{e:?}")))?;
        out.extend(
            subnets
                .into_iter()
                .map(|subnet| SubnetSubscription::SyncCommittee {
                    subnet,
                    until_epoch: s.until_epoch,
                }),
        );
    }
    ctx.network.subscribe_subnets(out);
    Ok(ok_empty())
}

/// `POST /eth/v1/validator/prepare_beacon_proposer`: fee recipients for block production.
pub(crate) async fn post_prepare_beacon_proposer<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let preparations: Vec<ProposerPreparationData> = body.json()?;
    ctx.producer.prepare_beacon_proposer(
        preparations
            .into_iter()
            .map(|p| (p.validator_index, p.fee_recipient)),
    );
    Ok(ok_empty())
}

/// `POST /eth/v1/validator/liveness/{epoch}`: whether each validator was seen live in `epoch`
/// (an attestation included for it, or a message through this node), for the current and
/// previous epochs.
pub(crate) async fn post_liveness<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let epoch = parse_epoch(&path)?;
    let Indices(indices) = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let current = clock_epoch(&ctx);
        if epoch > current || epoch + 1 < current {
            return Err(HttpError::bad_request(format!(
                "liveness is known for the current and previous epochs, not {epoch}"
            )));
        }
        let head = state_at(&ctx, beacon_api::StateId::Head)?;
        let view = head.state.view()?;
        let head_epoch = get_current_epoch(&view);
        let participation = if epoch == head_epoch {
            Some(view.current_epoch_participation)
        } else if epoch + 1 == head_epoch {
            Some(view.previous_epoch_participation)
        } else {
            None
        };
        let seen = ctx.liveness.lock().get(&epoch).cloned().unwrap_or_default();
        let data: Vec<LivenessResponseData> = indices
            .into_iter()
            .map(|index| LivenessResponseData {
                index,
                is_live: participation
                    .and_then(|p| p.get(index as usize))
                    .is_some_and(|flags| flags != 0)
                    || seen.contains(&index),
            })
            .collect();
        json(&GenericResponse { data })
    })
    .await
}

/// `POST /eth/v1/validator/{beacon,sync}_committee_selections`: combining partial selection
/// proofs is a distributed validator middleware's job; a beacon node without one answers 501,
/// as the spec allows.
pub(crate) async fn post_selections() -> HttpError {
    HttpError::NotImplemented(
        "selection proofs are combined by a distributed validator middleware, not this node".into(),
    )
}
