//! `/eth/v1/beacon/*`, `/eth/v2/beacon/blocks`, `/eth/v2/debug/*`: genesis, states, validators,
//! committees, headers, blocks and sidecars.
//!
//! SSZ blocks and data column sidecars are served from the bytes as stored; the head block's
//! SSZ and JSON are made once per head ([`CachedBlock`]).
//!
//! [spec]: apis/beacon/*.yaml, apis/debug/*.yaml

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use beacon_api::{
    BlockHeaderData, BlockId, CommitteeData, Encoding, ExecutionOptimisticFinalizedResponse,
    FinalityCheckpointsData, ForkVersionedResponse, GenericResponse, GenesisData, QuotedIndices,
    RandaoData, RootData, StateId, SyncCommitteeByValidatorIndices, ValidatorBalanceData,
    ValidatorData, ValidatorId, ValidatorStatus, ValidatorStatusFilter, ValidatorsRequestBody,
};
use serde::Serialize;
use ssz::Encode;
use ssz_types::typenum::Unsigned;
use state_processing::common::{compute_epoch_at_slot, get_current_epoch, get_randao_mix};
use types::{Epoch, EthSpec, ForkName, Root, SignedBeaconBlock, Slot, ValidatorIndex};

use crate::ApiContext;
use crate::error::HttpError;
use crate::query::{Body, PathParams, Query, parse_path};
use crate::response::{
    JSON_OR_SSZ, accept, blocking, json, json_bytes, ssz_bytes, ssz_shared, streamed, with_version,
};
use crate::state_id::{
    BlockAt, StateAt, block_at, canonical_block_root_at_slot, read_block, state_at,
};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// The head block's encodings, made once per head.
#[derive(Debug, Clone)]
pub(crate) struct CachedBlock {
    root: Root,
    fork: ForkName,
    ssz: axum::body::Bytes,
    json: axum::body::Bytes,
}

fn envelope<T: Serialize>(at: &StateAt<impl EthSpec>, data: T) -> Result<Response, HttpError> {
    json(&ExecutionOptimisticFinalizedResponse {
        execution_optimistic: at.execution_optimistic,
        finalized: at.finalized,
        data,
    })
}

fn block_envelope<T: Serialize>(at: &BlockAt, data: T) -> Result<Response, HttpError> {
    json(&ExecutionOptimisticFinalizedResponse {
        execution_optimistic: at.execution_optimistic,
        finalized: at.finalized,
        data,
    })
}

fn state_id(path: &PathParams) -> Result<StateId, HttpError> {
    parse_path("state id", path.at(0)?)
}

fn block_id(path: &PathParams) -> Result<BlockId, HttpError> {
    parse_path("block id", path.at(0)?)
}

/// Resolves the path's `state_id` on the blocking pool (a state may be read from the store).
async fn path_state<E: EthSpec>(
    ctx: &Arc<ApiContext<E>>,
    path: &PathParams,
) -> Result<StateAt<E>, HttpError> {
    let id = state_id(path)?;
    let ctx = ctx.clone();
    blocking(ctx.workers(), move || state_at(&ctx, id)).await
}

/// `GET /eth/v1/beacon/genesis`.
pub(crate) async fn get_genesis<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: GenesisData {
            genesis_time: ctx.chain.genesis_time(),
            genesis_validators_root: ctx.chain.genesis_validators_root(),
            genesis_fork_version: ctx.chain.spec().genesis_fork_version,
        },
    })
}

/// `GET /eth/v1/beacon/states/{state_id}/root`.
pub(crate) async fn get_state_root<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let at = path_state(&ctx, &path).await?;
    envelope(&at, RootData { root: at.root })
}

/// `GET /eth/v1/beacon/states/{state_id}/fork`.
pub(crate) async fn get_state_fork<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let at = path_state(&ctx, &path).await?;
    envelope(&at, at.state.state.fork().clone())
}

/// `GET /eth/v1/beacon/states/{state_id}/finality_checkpoints`.
pub(crate) async fn get_finality_checkpoints<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let at = path_state(&ctx, &path).await?;
    let s = &at.state.state;
    envelope(
        &at,
        FinalityCheckpointsData {
            previous_justified: s.previous_justified_checkpoint().clone(),
            current_justified: s.current_justified_checkpoint().clone(),
            finalized: s.finalized_checkpoint().clone(),
        },
    )
}

/// The indices of the validators `ids` names in `at` (unknown ones left out, as the spec
/// says), in the order asked; every validator when `ids` is empty.
fn select_indices<E: EthSpec>(
    ctx: &ApiContext<E>,
    at: &StateAt<E>,
    ids: &[ValidatorId],
) -> Result<Vec<ValidatorIndex>, HttpError> {
    let count = Registry::of(&at.state)?.len() as u64;
    if ids.is_empty() {
        return Ok((0..count).collect());
    }
    let Ok(view) = at.state.view() else {
        return Ok(Vec::new());
    };
    Ok(ids
        .iter()
        .filter_map(|id| match id {
            ValidatorId::Index(i) => (*i < count).then_some(*i),
            ValidatorId::PublicKey(key) => ctx.caches.validator_index(&view, &at.state.caches, key),
        })
        .collect())
}

/// A state's validator registry and balances, whatever their list shape: the fixed lists of the
/// forks before Gloas, Gloas's progressive ones (EIP-7688), read through the fork-neutral view
/// where the state has one (Deneb on) and from the fixed lists otherwise.
pub(crate) enum Registry<'a, E: EthSpec> {
    /// A Deneb, Electra, Fulu or Gloas state's view.
    View(state_processing::StateRef<'a, E>),
    /// A state before Deneb (no view): its fixed lists.
    Fixed {
        /// `validators`.
        validators: &'a types::phase0::ValidatorRegistry<E>,
        /// `balances`.
        balances: &'a packed_list::PackedList<u64, E::ValidatorRegistryLimit>,
    },
}

impl<'a, E: EthSpec> Registry<'a, E> {
    /// The registry of `state`.
    pub(crate) fn of(state: &'a state_processing::CachedBeaconState<E>) -> Result<Self, HttpError> {
        if let Ok(view) = state.view() {
            return Ok(Self::View(view));
        }
        let s = &state.state;
        match (s.validators(), s.balances()) {
            (Some(validators), Some(balances)) => Ok(Self::Fixed {
                validators,
                balances,
            }),
            _ => Err(HttpError::unsupported_fork(s.fork_name())),
        }
    }

    /// Number of validators.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::View(view) => view.validators.len(),
            Self::Fixed { validators, .. } => validators.len(),
        }
    }

    /// Validator `index`, if any.
    pub(crate) fn validator(&self, index: ValidatorIndex) -> Option<&'a types::phase0::Validator> {
        let index = usize::try_from(index).ok()?;
        match self {
            Self::View(view) => view.validators.get(index),
            Self::Fixed { validators, .. } => validators.get(index),
        }
    }

    /// The balance of validator `index` (0 past the list).
    pub(crate) fn balance(&self, index: ValidatorIndex) -> u64 {
        let Ok(index) = usize::try_from(index) else {
            return 0;
        };
        match self {
            Self::View(view) => view.balances.get(index),
            Self::Fixed { balances, .. } => balances.get(index),
        }
        .unwrap_or(0)
    }
}

fn validators_data<E: EthSpec>(
    ctx: &ApiContext<E>,
    at: &StateAt<E>,
    ids: &[ValidatorId],
    statuses: &[ValidatorStatusFilter],
) -> Result<Vec<ValidatorData>, HttpError> {
    let epoch = at.slot() / E::slots_per_epoch();
    let registry = Registry::of(&at.state)?;
    Ok(select_indices(ctx, at, ids)?
        .into_iter()
        .filter_map(|index| {
            let validator = registry.validator(index)?;
            let status = ValidatorStatus::from_validator(validator, epoch);
            if !statuses.is_empty() && !statuses.iter().any(|f| f.matches(status)) {
                return None;
            }
            Some(ValidatorData {
                index,
                balance: registry.balance(index),
                status,
                validator: validator.clone(),
            })
        })
        .collect())
}

/// `GET /eth/v1/beacon/states/{state_id}/validators?id=..&status=..`.
pub(crate) async fn get_validators<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
) -> Result<Response, HttpError> {
    let ids: Vec<ValidatorId> = query.list("id")?;
    let statuses: Vec<ValidatorStatusFilter> = query.list("status")?;
    validators_response(ctx, path, ids, statuses).await
}

/// `POST /eth/v1/beacon/states/{state_id}/validators` with `{ids, statuses}`.
pub(crate) async fn post_validators<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let body: ValidatorsRequestBody = if body.bytes.is_empty() {
        ValidatorsRequestBody::default()
    } else {
        body.json()?
    };
    validators_response(
        ctx,
        path,
        body.ids.unwrap_or_default(),
        body.statuses.unwrap_or_default(),
    )
    .await
}

async fn validators_response<E: EthSpec>(
    ctx: Arc<ApiContext<E>>,
    path: PathParams,
    ids: Vec<ValidatorId>,
    statuses: Vec<ValidatorStatusFilter>,
) -> Result<Response, HttpError> {
    let id = state_id(&path)?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let data = validators_data(&ctx, &at, &ids, &statuses)?;
        envelope(&at, data)
    })
    .await
}

/// `GET /eth/v1/beacon/states/{state_id}/validators/{validator_id}`.
pub(crate) async fn get_validator<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let id = state_id(&path)?;
    let validator: ValidatorId = parse_path("validator id", path.at(1)?)?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let data = validators_data(&ctx, &at, &[validator], &[])?
            .pop()
            .ok_or_else(|| HttpError::not_found(format!("validator {validator} not found")))?;
        envelope(&at, data)
    })
    .await
}

/// `GET /eth/v1/beacon/states/{state_id}/validator_balances?id=..`.
pub(crate) async fn get_validator_balances<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
) -> Result<Response, HttpError> {
    let ids: Vec<ValidatorId> = query.list("id")?;
    balances_response(ctx, path, ids).await
}

/// `POST /eth/v1/beacon/states/{state_id}/validator_balances` with a list of ids.
pub(crate) async fn post_validator_balances<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let ids: Vec<ValidatorId> = if body.bytes.is_empty() {
        Vec::new()
    } else {
        body.json()?
    };
    balances_response(ctx, path, ids).await
}

async fn balances_response<E: EthSpec>(
    ctx: Arc<ApiContext<E>>,
    path: PathParams,
    ids: Vec<ValidatorId>,
) -> Result<Response, HttpError> {
    let id = state_id(&path)?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let registry = Registry::of(&at.state)?;
        let data: Vec<ValidatorBalanceData> = select_indices(&ctx, &at, &ids)?
            .into_iter()
            .map(|index| ValidatorBalanceData {
                index,
                balance: registry.balance(index),
            })
            .collect();
        envelope(&at, data)
    })
    .await
}

/// The committees of `epoch` in `at`'s state (its previous, current or next epoch).
pub(crate) fn committees_of<E: EthSpec>(
    ctx: &ApiContext<E>,
    state: &state_processing::CachedBeaconState<E>,
    epoch: Epoch,
) -> Result<Arc<state_processing::CommitteeCache>, HttpError> {
    let view = state.view()?;
    let current = get_current_epoch(&view);
    if epoch.saturating_add(1) < current || epoch > current.saturating_add(1) {
        return Err(HttpError::bad_request(format!(
            "epoch {epoch} is not within one epoch of the state's epoch {current}"
        )));
    }
    ctx.caches
        .committees(&view, &state.caches, epoch)
        .map_err(HttpError::from)
}

/// `GET /eth/v1/beacon/states/{state_id}/committees?epoch=..&index=..&slot=..`.
pub(crate) async fn get_committees<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
) -> Result<Response, HttpError> {
    let id = state_id(&path)?;
    let epoch: Option<Epoch> = query.parse("epoch")?;
    let index: Option<u64> = query.parse("index")?;
    let slot: Option<Slot> = query.parse("slot")?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let epoch = epoch.unwrap_or(at.slot() / E::slots_per_epoch());
        let spe = E::slots_per_epoch();
        if let Some(slot) = slot
            && compute_epoch_at_slot::<E>(slot) != epoch
        {
            return Err(HttpError::bad_request(format!(
                "slot {slot} is not in epoch {epoch}"
            )));
        }
        let committees = committees_of(&ctx, &at.state, epoch)?;
        let per_slot = committees.committees_per_slot();
        if let Some(index) = index
            && index >= per_slot
        {
            return Err(HttpError::bad_request(format!(
                "committee index {index} out of range ({per_slot} per slot)"
            )));
        }
        let mut data = Vec::new();
        for s in epoch * spe..(epoch + 1) * spe {
            if slot.is_some_and(|x| x != s) {
                continue;
            }
            for i in 0..per_slot {
                if index.is_some_and(|x| x != i) {
                    continue;
                }
                let members = committees.get_beacon_committee(s, i)?;
                data.push(CommitteeData {
                    index: i,
                    slot: s,
                    validators: members.to_vec(),
                });
            }
        }
        envelope(&at, data)
    })
    .await
}

/// `GET /eth/v1/beacon/states/{state_id}/sync_committees?epoch=..`.
pub(crate) async fn get_sync_committees<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
) -> Result<Response, HttpError> {
    let id = state_id(&path)?;
    let epoch: Option<Epoch> = query.parse("epoch")?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let state_epoch = at.slot() / E::slots_per_epoch();
        let epoch = epoch.unwrap_or(state_epoch);
        let validators = sync_committee_indices(&ctx, &at.state, epoch)?;
        let size = validators.len() / types::subnets::SYNC_COMMITTEE_SUBNET_COUNT as usize;
        let validator_aggregates = validators
            .chunks(size.max(1))
            .map(|c| QuotedIndices(c.to_vec()))
            .collect();
        envelope(
            &at,
            SyncCommitteeByValidatorIndices {
                validators,
                validator_aggregates,
            },
        )
    })
    .await
}

/// The validator indices of the sync committee in force at `epoch` (the state's current or
/// next period), in committee order.
pub(crate) fn sync_committee_indices<E: EthSpec>(
    ctx: &ApiContext<E>,
    state: &state_processing::CachedBeaconState<E>,
    epoch: Epoch,
) -> Result<Vec<ValidatorIndex>, HttpError> {
    let view = state.view()?;
    let period = |e: Epoch| e / E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
    let current = period(get_current_epoch(&view));
    let committee = if period(epoch) == current {
        view.current_sync_committee
    } else if period(epoch) == current + 1 {
        view.next_sync_committee
    } else {
        return Err(HttpError::bad_request(format!(
            "epoch {epoch} is not in the state's current or next sync committee period"
        )));
    };
    ctx.caches
        .sync_members(&view, &state.caches, committee)
        .map(|members| members.to_vec())
        .ok_or_else(|| HttpError::internal("a sync committee key of no validator"))
}

/// `GET /eth/v1/beacon/states/{state_id}/randao?epoch=..`.
pub(crate) async fn get_randao<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
) -> Result<Response, HttpError> {
    let at = path_state(&ctx, &path).await?;
    let view = at.state.view()?;
    let current = get_current_epoch(&view);
    let epoch: Epoch = query.parse("epoch")?.unwrap_or(current);
    let n = E::EpochsPerHistoricalVector::to_u64();
    if epoch > current || epoch + n <= current {
        return Err(HttpError::bad_request(format!(
            "epoch {epoch} is outside the state's RANDAO history (current epoch {current})"
        )));
    }
    let randao = get_randao_mix(&view, epoch);
    envelope(&at, RandaoData { randao })
}

/// A versioned list of a state's field, in JSON (`{version, execution_optimistic, finalized,
/// data}`) or SSZ.
fn state_list_response<E: EthSpec, T: Serialize>(
    at: &StateAt<E>,
    encoding: Encoding,
    items: Vec<T>,
    ssz: impl FnOnce() -> Vec<u8>,
) -> Result<Response, HttpError> {
    let fork = at.state.state.fork_name();
    Ok(match encoding {
        Encoding::Ssz => with_version(ssz_bytes(ssz()), fork),
        Encoding::Json => with_version(
            json(&serde_json::json!({
                "version": fork.as_str(),
                "execution_optimistic": at.execution_optimistic,
                "finalized": at.finalized,
                "data": items,
            }))?,
            fork,
        ),
    })
}

macro_rules! pending_list_endpoint {
    ($(#[$doc:meta])* $name:ident, $field:ident) => {
        $(#[$doc])*
        pub(crate) async fn $name<E: EthSpec>(
            State(ctx): Ctx<E>,
            path: PathParams,
            headers: HeaderMap,
        ) -> Result<Response, HttpError> {
            let encoding = accept(&headers, JSON_OR_SSZ)?;
            let at = path_state(&ctx, &path).await?;
            let view = at.state.view()?;
            let list = view.$field.ok_or_else(|| {
                HttpError::bad_request(format!(
                    "the state's fork {} has no {}",
                    view.fork_name,
                    stringify!($field)
                ))
            })?;
            let items: Vec<_> = list.iter().cloned().collect();
            state_list_response(&at, encoding, items, || list.as_ssz_bytes())
        }
    };
}

pending_list_endpoint!(
    /// `GET /eth/v1/beacon/states/{state_id}/pending_deposits`.
    get_pending_deposits,
    pending_deposits
);
pending_list_endpoint!(
    /// `GET /eth/v1/beacon/states/{state_id}/pending_partial_withdrawals`.
    get_pending_partial_withdrawals,
    pending_partial_withdrawals
);
pending_list_endpoint!(
    /// `GET /eth/v1/beacon/states/{state_id}/pending_consolidations`.
    get_pending_consolidations,
    pending_consolidations
);

/// `GET /eth/v1/beacon/states/{state_id}/proposer_lookahead`.
pub(crate) async fn get_proposer_lookahead<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let at = path_state(&ctx, &path).await?;
    let view = at.state.view()?;
    let lookahead = view.proposer_lookahead.ok_or_else(|| {
        HttpError::bad_request(format!(
            "the state's fork {} has no proposer_lookahead",
            view.fork_name
        ))
    })?;
    let items: Vec<String> = lookahead.iter().map(u64::to_string).collect();
    state_list_response(&at, encoding, items, || lookahead.as_ssz_bytes())
}

fn header_data<E: EthSpec>(block: &SignedBeaconBlock<E>, at: &BlockAt) -> BlockHeaderData {
    BlockHeaderData {
        root: at.root,
        canonical: at.canonical,
        header: block.signed_block_header(),
    }
}

/// `GET /eth/v1/beacon/headers?slot=..&parent_root=..`: the canonical block at `slot` (the
/// head when absent), or the canonical child of `parent_root`.
pub(crate) async fn get_headers<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
) -> Result<Response, HttpError> {
    let slot: Option<Slot> = query.parse("slot")?;
    let parent_root: Option<Root> = query.parse("parent_root")?;
    blocking(ctx.workers(), move || {
        let head = ctx.chain.head();
        let root = match (slot, parent_root) {
            (Some(slot), _) => canonical_block_root_at_slot(&ctx, &head, slot)?,
            (None, Some(parent)) => ctx.chain.canonical_child(&head, parent)?,
            (None, None) => Some(head.block_root),
        };
        let mut data = Vec::new();
        let mut optimistic = false;
        let mut finalized = true;
        if let Some(root) = root {
            let at = block_at(&ctx, BlockId::Root(root))?;
            let block = read_block(&ctx, &root)?;
            if parent_root.is_none_or(|p| p == block.parent_root()) {
                optimistic |= at.execution_optimistic;
                finalized &= at.finalized;
                data.push(header_data(&block, &at));
            }
        }
        json(&ExecutionOptimisticFinalizedResponse {
            execution_optimistic: optimistic,
            finalized: finalized && !data.is_empty(),
            data,
        })
    })
    .await
}

/// `GET /eth/v1/beacon/headers/{block_id}`.
pub(crate) async fn get_header<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let id = block_id(&path)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        block_envelope(&at, header_data(&block, &at))
    })
    .await
}

/// `GET /eth/v1/beacon/blocks/{block_id}/root`.
pub(crate) async fn get_block_root<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let id = block_id(&path)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        block_envelope(&at, RootData { root: at.root })
    })
    .await
}

/// The versioned JSON envelope around a block's cached JSON.
fn versioned_json(fork: ForkName, optimistic: bool, finalized: bool, data: &[u8]) -> Vec<u8> {
    let head = format!(
        r#"{{"version":"{}","execution_optimistic":{optimistic},"finalized":{finalized},"data":"#,
        fork.as_str()
    );
    let mut out = Vec::with_capacity(head.len() + data.len() + 1);
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(data);
    out.push(b'}');
    out
}

/// The block `root`'s encodings: the head's from the cache (made on first use), others from
/// the store.
fn block_encodings<E: EthSpec>(
    ctx: &ApiContext<E>,
    root: Root,
    encoding: Encoding,
) -> Result<(ForkName, axum::body::Bytes), HttpError> {
    let is_head = ctx.chain.head().block_root == root;
    if is_head && let Some(cached) = ctx.head_block.lock().as_ref().filter(|c| c.root == root) {
        let bytes = match encoding {
            Encoding::Ssz => cached.ssz.clone(),
            Encoding::Json => cached.json.clone(),
        };
        return Ok((cached.fork, bytes));
    }
    let store = ctx.chain.store();
    let ssz = store
        .get_block_ssz(&root)?
        .ok_or_else(|| HttpError::not_found(format!("block {root} not found")))?;
    let stored = |e: ssz::DecodeError| HttpError::internal(format!("stored block {root}: {e:?}"));
    if !is_head && encoding == Encoding::Ssz {
        // Served as stored, undecoded: the fork follows from the slot.
        let slot = SignedBeaconBlock::<E>::slot_from_ssz_bytes(&ssz).map_err(stored)?;
        let fork = ctx.chain.spec().fork_name_at_slot::<E>(slot);
        return Ok((fork, ssz.into()));
    }
    let block = SignedBeaconBlock::<E>::from_ssz_bytes(&ssz, ctx.chain.spec()).map_err(stored)?;
    let fork = block.fork_name();
    if !is_head {
        return Ok((fork, block_json(&block)?.into()));
    }
    let cached = CachedBlock {
        root,
        fork,
        ssz: ssz.into(),
        json: block_json(&block)?.into(),
    };
    let bytes = match encoding {
        Encoding::Ssz => cached.ssz.clone(),
        Encoding::Json => cached.json.clone(),
    };
    *ctx.head_block.lock() = Some(cached);
    Ok((fork, bytes))
}

fn block_json<E: EthSpec>(block: &SignedBeaconBlock<E>) -> Result<Vec<u8>, HttpError> {
    beacon_api::envelope::to_json(block)
        .map_err(|e| HttpError::internal(format!("cannot encode block: {e}")))
}

/// `GET /eth/v2/beacon/blocks/{block_id}` in JSON or SSZ.
pub(crate) async fn get_block_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id = block_id(&path)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let (fork, bytes) = block_encodings(&ctx, at.root, encoding)?;
        let response = match encoding {
            Encoding::Ssz => ssz_shared(bytes),
            Encoding::Json => json_bytes(versioned_json(
                fork,
                at.execution_optimistic,
                at.finalized,
                &bytes,
            )),
        };
        Ok(with_version(response, fork))
    })
    .await
}

/// A block's attestations as the fork enum.
fn block_attestations<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
) -> Result<Vec<types::Attestation<E>>, HttpError> {
    Ok(match block {
        SignedBeaconBlock::Electra(b) => b
            .message
            .body
            .attestations
            .iter()
            .cloned()
            .map(types::Attestation::Electra)
            .collect(),
        SignedBeaconBlock::Fulu(b) => b
            .message
            .body
            .attestations
            .iter()
            .cloned()
            .map(types::Attestation::Fulu)
            .collect(),
        SignedBeaconBlock::Gloas(b) => b
            .message
            .body
            .attestations
            .iter()
            .cloned()
            .map(types::Attestation::Gloas)
            .collect(),
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)) => {
            return Err(HttpError::bad_request(format!(
                "blocks of fork {} are not served by this node",
                other.fork_name()
            )));
        }
    })
}

/// `GET /eth/v2/beacon/blocks/{block_id}/attestations`.
pub(crate) async fn get_block_attestations_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let id = block_id(&path)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        let fork = block.fork_name();
        let response = ForkVersionedResponse {
            version: fork,
            execution_optimistic: Some(at.execution_optimistic),
            finalized: Some(at.finalized),
            data: block_attestations(&block)?,
        };
        Ok(with_version(json(&response)?, fork))
    })
    .await
}

/// The SSZ of a list of variable-size items given their encodings: the offsets, then the items.
pub(crate) fn ssz_list_of_variable(items: &[Vec<u8>]) -> Vec<u8> {
    let offsets = items.len() * ssz::BYTES_PER_LENGTH_OFFSET;
    let total = offsets + items.iter().map(Vec::len).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    let mut offset = offsets;
    for item in items {
        out.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += item.len();
    }
    for item in items {
        out.extend_from_slice(item);
    }
    out
}

/// `GET /eth/v1/debug/beacon/data_column_sidecars/{block_id}?indices=..`: the stored columns,
/// SSZ from the stored bytes.
pub(crate) async fn get_data_column_sidecars<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id = block_id(&path)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let indices: Vec<u64> = query.list("indices")?;
    let columns = E::NumberOfColumns::to_u64();
    if let Some(bad) = indices.iter().find(|i| **i >= columns) {
        return Err(HttpError::bad_request(format!(
            "column index {bad} out of range ({columns} columns)"
        )));
    }
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let store = ctx.chain.store();
        let stored = store.data_column_indices(&at.root)?;
        let wanted: Vec<u64> = if indices.is_empty() {
            stored
        } else {
            stored.into_iter().filter(|i| indices.contains(i)).collect()
        };
        let block = read_block(&ctx, &at.root)?;
        let fork = block.fork_name();
        let response = match encoding {
            Encoding::Ssz => {
                let mut items = Vec::with_capacity(wanted.len());
                for i in wanted {
                    if let Some(bytes) = store.get_data_column_ssz(&at.root, i)? {
                        items.push(bytes);
                    }
                }
                ssz_bytes(ssz_list_of_variable(&items))
            }
            Encoding::Json => {
                let mut items = Vec::with_capacity(wanted.len());
                for i in wanted {
                    if let Some(column) = store.get_data_column(&at.root, i)? {
                        items.push(column);
                    }
                }
                json(&ForkVersionedResponse {
                    version: fork,
                    execution_optimistic: Some(at.execution_optimistic),
                    finalized: Some(at.finalized),
                    data: items,
                })?
            }
        };
        Ok(with_version(response, fork))
    })
    .await
}

/// `GET /eth/v2/debug/beacon/states/{state_id}` in JSON or SSZ.
pub(crate) async fn get_debug_state_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id = state_id(&path)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let fork = at.state.state.fork_name();
        // Written while it is sent (`streamed`): neither encoding of a whole state is held in
        // memory, however many nodes checkpoint-sync from this one at once.
        let (execution_optimistic, finalized) = (at.execution_optimistic, at.finalized);
        let state = at.state.state;
        let response = match encoding {
            Encoding::Ssz => streamed(
                Encoding::Ssz.media_type(),
                Some(state.ssz_bytes_len()),
                move |out| state.ssz_write(out),
            ),
            Encoding::Json => streamed(Encoding::Json.media_type(), None, move |out| {
                let answer = ForkVersionedResponse {
                    version: fork,
                    execution_optimistic: Some(execution_optimistic),
                    finalized: Some(finalized),
                    data: state,
                };
                serde_json::to_writer(out, &answer).map_err(std::io::Error::other)
            }),
        };
        Ok(with_version(response, fork))
    })
    .await
}

/// `ValidatorIdentity`: a validator's index, key and activation epoch.
#[derive(Debug, Clone, Serialize, ssz_derive::Encode)]
struct ValidatorIdentity {
    #[serde(with = "beacon_api::json::quoted_u64")]
    index: ValidatorIndex,
    pubkey: types::BLSPubkey,
    #[serde(with = "beacon_api::json::quoted_u64")]
    activation_epoch: Epoch,
}

/// `POST /eth/v1/beacon/states/{state_id}/validator_identities` with a list of ids (JSON or SSZ
/// answer).
pub(crate) async fn post_validator_identities<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let ids: Vec<ValidatorId> = if body.bytes.is_empty() {
        Vec::new()
    } else {
        body.json()?
    };
    let id = state_id(&path)?;
    blocking(ctx.workers(), move || {
        let at = state_at(&ctx, id)?;
        let registry = Registry::of(&at.state)?;
        let data: Vec<ValidatorIdentity> = select_indices(&ctx, &at, &ids)?
            .into_iter()
            .filter_map(|index| {
                let v = registry.validator(index)?;
                Some(ValidatorIdentity {
                    index,
                    pubkey: v.pubkey,
                    activation_epoch: v.activation_epoch,
                })
            })
            .collect();
        match encoding {
            Encoding::Ssz => Ok(ssz_bytes(data.as_ssz_bytes())),
            Encoding::Json => envelope(&at, data),
        }
    })
    .await
}

/// One leaf of the block tree.
#[derive(Debug, Clone, Serialize)]
struct ChainHead {
    root: Root,
    #[serde(with = "beacon_api::json::quoted_u64")]
    slot: Slot,
    execution_optimistic: bool,
}

/// `GET /eth/v2/debug/beacon/heads`: the leaves of the unfinalized block tree (the store's hot
/// blocks no other hot block builds on), or the finalized block when none is newer.
pub(crate) async fn get_debug_heads<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    blocking(ctx.workers(), move || {
        let data: Vec<ChainHead> = ctx
            .chain
            .block_tree_leaves()?
            .into_iter()
            .map(|leaf| ChainHead {
                root: leaf.root,
                slot: leaf.slot,
                execution_optimistic: leaf.execution_optimistic,
            })
            .collect();
        json(&GenericResponse { data })
    })
    .await
}
