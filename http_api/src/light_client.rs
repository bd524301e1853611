//! `/eth/v1/beacon/light_client/*`: the light-client server's bootstraps, best updates per
//! sync committee period and latest finality and optimistic updates, in JSON (`{version, data}`)
//! or SSZ, with `Eth-Consensus-Version`.
//!
//! [spec]: ethereum/beacon-APIs apis/beacon/light_client/

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use beacon_api::Encoding;
use serde::Serialize;
use ssz::Encode;
use types::{
    EthSpec, ForkName, LightClientBootstrap, LightClientFinalityUpdate,
    LightClientOptimisticUpdate, LightClientUpdate, Root,
};

use crate::ApiContext;
use crate::error::HttpError;
use crate::query::{PathParams, Query, parse_path};
use crate::response::{JSON_OR_SSZ, accept, blocking, json, ssz_bytes, with_version};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// `{version, data}`: one versioned light-client object.
#[derive(Serialize)]
struct Versioned<T> {
    version: &'static str,
    data: T,
}

/// The JSON of a light-client object of a fork the server derives data for (Electra, Fulu).
macro_rules! data_json {
    ($ty:ident, $value:expr) => {
        match $value {
            $ty::Electra(inner) | $ty::Fulu(inner) => serde_json::to_value(inner)
                .map_err(|e| HttpError::internal(format!("cannot encode the response: {e}"))),
            other => Err(HttpError::internal(format!(
                "light-client data of fork {} cannot be served",
                other.fork_name()
            ))),
        }
    };
}

/// A versioned object in the negotiated encoding, with the version header.
fn versioned_response(
    encoding: Encoding,
    fork: ForkName,
    ssz: impl FnOnce() -> Vec<u8>,
    data: impl FnOnce() -> Result<serde_json::Value, HttpError>,
) -> Result<Response, HttpError> {
    let response = match encoding {
        Encoding::Ssz => ssz_bytes(ssz()),
        Encoding::Json => json(&Versioned {
            version: fork.as_str(),
            data: data()?,
        })?,
    };
    Ok(with_version(response, fork))
}

fn chain_error(e: beacon_chain::ChainError) -> HttpError {
    HttpError::internal(format!("light-client data: {e}"))
}

/// `GET /eth/v1/beacon/light_client/bootstrap/{block_root}`.
pub(crate) async fn get_light_client_bootstrap<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let root: Root = parse_path("block_root", path.at(0)?)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let bootstrap = ctx
            .chain
            .light_client_bootstrap(&root)
            .map_err(chain_error)?
            .ok_or_else(|| HttpError::not_found("LC bootstrap unavailable"))?;
        versioned_response(
            encoding,
            bootstrap.fork_name(),
            || bootstrap.as_ssz_bytes(),
            || data_json!(LightClientBootstrap, &bootstrap),
        )
    })
    .await
}

/// `GET /eth/v1/beacon/light_client/updates?start_period&count`: the best update of each
/// period from `start_period`, at most `min(count, MAX_REQUEST_LIGHT_CLIENT_UPDATES)`; in SSZ a
/// sequence of `(response_chunk_len, fork digest, payload)` chunks.
pub(crate) async fn get_light_client_updates<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let start_period: u64 = query.required("start_period")?;
    let count: u64 = query.required("count")?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let updates = ctx
            .chain
            .light_client_updates_by_range(start_period, count)
            .map_err(chain_error)?;
        match encoding {
            Encoding::Ssz => {
                let gvr = ctx.chain.genesis_validators_root();
                let mut bytes = Vec::new();
                for update in &updates {
                    let slot = attested_slot(update)?;
                    let digest = ctx
                        .chain
                        .spec()
                        .compute_fork_digest(gvr, slot / E::slots_per_epoch());
                    let payload = update.as_ssz_bytes();
                    let len = (digest.len() + payload.len()) as u64;
                    bytes.extend_from_slice(&len.to_le_bytes());
                    bytes.extend_from_slice(digest.as_slice());
                    bytes.extend_from_slice(&payload);
                }
                Ok(ssz_bytes(bytes))
            }
            Encoding::Json => {
                let items = updates
                    .iter()
                    .map(|update| {
                        Ok(Versioned {
                            version: update.fork_name().as_str(),
                            data: data_json!(LightClientUpdate, update)?,
                        })
                    })
                    .collect::<Result<Vec<_>, HttpError>>()?;
                json(&items)
            }
        }
    })
    .await
}

/// The attested header's slot of an update the server derives (Electra, Fulu).
fn attested_slot<E: EthSpec>(update: &LightClientUpdate<E>) -> Result<u64, HttpError> {
    match update {
        LightClientUpdate::Electra(u) | LightClientUpdate::Fulu(u) => {
            Ok(u.attested_header.beacon.slot)
        }
        other @ (LightClientUpdate::Altair(_)
        | LightClientUpdate::Bellatrix(_)
        | LightClientUpdate::Capella(_)
        | LightClientUpdate::Deneb(_)
        | LightClientUpdate::Gloas(_)) => Err(HttpError::internal(format!(
            "light-client data of fork {} cannot be served",
            other.fork_name()
        ))),
    }
}

/// `GET /eth/v1/beacon/light_client/finality_update`.
pub(crate) async fn get_light_client_finality_update<E: EthSpec>(
    State(ctx): Ctx<E>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let update = ctx
            .chain
            .light_client_finality_update()
            .map_err(chain_error)?
            .ok_or_else(|| HttpError::not_found("LC finality update unavailable"))?;
        versioned_response(
            encoding,
            update.fork_name(),
            || update.as_ssz_bytes(),
            || data_json!(LightClientFinalityUpdate, &update),
        )
    })
    .await
}

/// `GET /eth/v1/beacon/light_client/optimistic_update`.
pub(crate) async fn get_light_client_optimistic_update<E: EthSpec>(
    State(ctx): Ctx<E>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let update = ctx
            .chain
            .light_client_optimistic_update()
            .map_err(chain_error)?
            .ok_or_else(|| HttpError::not_found("LC optimistic update unavailable"))?;
        versioned_response(
            encoding,
            update.fork_name(),
            || update.as_ssz_bytes(),
            || data_json!(LightClientOptimisticUpdate, &update),
        )
    })
    .await
}
