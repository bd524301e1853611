//! `/eth/v1/config/*` and `/eth/v1/node/*`.
//!
//! [spec]: apis/config/*.yaml, apis/node/*.yaml

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use beacon_api::{DepositContractData, GenericResponse, PeerDirection, PeerState, VersionData};
use types::{EthSpec, ForkName, phase0::Fork};

use crate::ApiContext;
use crate::error::HttpError;
use crate::network::syncing_data;
use crate::query::{PathParams, Query};
use crate::response::json;

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// `GET /eth/v1/config/spec`.
pub(crate) async fn get_spec<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: crate::config_spec::config_spec::<E>(ctx.chain.spec()),
    })
}

/// `GET /eth/v1/config/fork_schedule`: every fork scheduled, with the versions around it.
pub(crate) async fn get_fork_schedule<E: EthSpec>(
    State(ctx): Ctx<E>,
) -> Result<Response, HttpError> {
    let spec = ctx.chain.spec();
    let mut schedule: Vec<Fork> = Vec::new();
    let mut previous_version = spec.genesis_fork_version;
    for fork in ForkName::ALL {
        let Some(epoch) = spec.fork_epoch(fork) else {
            continue;
        };
        let current_version = spec.fork_version(fork);
        schedule.push(Fork {
            previous_version,
            current_version,
            epoch,
        });
        previous_version = current_version;
    }
    json(&GenericResponse { data: schedule })
}

/// `GET /eth/v1/config/deposit_contract`.
pub(crate) async fn get_deposit_contract<E: EthSpec>(
    State(ctx): Ctx<E>,
) -> Result<Response, HttpError> {
    let spec = ctx.chain.spec();
    json(&GenericResponse {
        data: DepositContractData {
            chain_id: spec.deposit_chain_id,
            address: spec.deposit_contract_address,
        },
    })
}

/// `GET /eth/v1/node/version`.
pub(crate) async fn get_version<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: VersionData {
            version: ctx.config.version_string.clone(),
        },
    })
}

/// `GET /eth/v1/node/syncing`.
pub(crate) async fn get_syncing<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    let head = ctx.chain.head();
    json(&GenericResponse {
        data: syncing_data(
            head.slot,
            ctx.network.sync_target(),
            head.execution_optimistic,
        ),
    })
}

/// `GET /eth/v1/node/health`: 200 ready, `syncing_status` (206 by default) while syncing or
/// optimistic; a `syncing_status` outside 100..=599 is a 400.
pub(crate) async fn get_health<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
) -> Result<Response, HttpError> {
    let syncing_status: u16 = query.parse("syncing_status")?.unwrap_or(206);
    let syncing_status = StatusCode::from_u16(syncing_status)
        .ok()
        .filter(|_| (100..=599).contains(&syncing_status))
        .ok_or_else(|| {
            HttpError::bad_request(format!("invalid syncing_status {syncing_status}"))
        })?;
    let head = ctx.chain.head();
    let syncing = syncing_data(
        head.slot,
        ctx.network.sync_target(),
        head.execution_optimistic,
    );
    Ok(if syncing.is_syncing || syncing.is_optimistic {
        syncing_status.into_response()
    } else {
        StatusCode::OK.into_response()
    })
}

/// `GET /eth/v1/node/identity`.
pub(crate) async fn get_identity<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: ctx.network.local_identity(),
    })
}

/// `GET /eth/v1/node/peers?state=..&direction=..`.
pub(crate) async fn get_peers<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
) -> Result<Response, HttpError> {
    let states: Vec<PeerState> = query
        .list::<String>("state")?
        .iter()
        .map(|s| serde_json::from_value(serde_json::Value::String(s.clone())))
        .collect::<Result<_, _>>()
        .map_err(|e| HttpError::bad_request(format!("invalid state: {e}")))?;
    let directions: Vec<PeerDirection> = query
        .list::<String>("direction")?
        .iter()
        .map(|s| serde_json::from_value(serde_json::Value::String(s.clone())))
        .collect::<Result<_, _>>()
        .map_err(|e| HttpError::bad_request(format!("invalid direction: {e}")))?;
    let peers: Vec<_> = ctx
        .network
        .peers()
        .into_iter()
        .filter(|p| states.is_empty() || states.contains(&p.state))
        .filter(|p| directions.is_empty() || directions.contains(&p.direction))
        .collect();
    let count = peers.len();
    json(&serde_json::json!({
        "data": peers,
        "meta": { "count": count },
    }))
}

/// `GET /eth/v1/node/peers/{peer_id}`.
pub(crate) async fn get_peer<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let peer_id = path.at(0)?;
    let peer = ctx
        .network
        .peers()
        .into_iter()
        .find(|p| p.peer_id == peer_id)
        .ok_or_else(|| HttpError::not_found(format!("peer {peer_id} not found")))?;
    json(&GenericResponse { data: peer })
}

/// `GET /eth/v1/node/peer_count`.
pub(crate) async fn get_peer_count<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: ctx.network.peer_count(),
    })
}
