//! Building answers: JSON in the spec's envelopes, SSZ bytes, the version header, negotiation.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use beacon_api::{Encoding, negotiate};
use serde::Serialize;
use types::ForkName;

use crate::error::HttpError;

/// Both encodings, JSON preferred on a tie.
pub(crate) const JSON_OR_SSZ: &[Encoding] = &[Encoding::Json, Encoding::Ssz];

/// The response encoding the request's `Accept` asks for among `offers` (406 when none).
pub(crate) fn accept(headers: &HeaderMap, offers: &[Encoding]) -> Result<Encoding, HttpError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    Ok(negotiate(accept, offers)?)
}

/// 200 with `bytes` as JSON.
pub(crate) fn json_bytes(bytes: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, Encoding::Json.media_type())],
        bytes,
    )
        .into_response()
}

/// 200 with `value` as JSON (a value that does not serialize is a 500).
pub(crate) fn json<T: Serialize>(value: &T) -> Result<Response, HttpError> {
    serde_json::to_vec(value)
        .map(json_bytes)
        .map_err(|e| HttpError::internal(format!("cannot encode the response: {e}")))
}

/// 200 with shared `bytes` as SSZ (served without a copy).
pub(crate) fn ssz_shared(bytes: axum::body::Bytes) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, Encoding::Ssz.media_type())],
        bytes,
    )
        .into_response()
}

/// 200 with `bytes` as SSZ.
pub(crate) fn ssz_bytes(bytes: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, Encoding::Ssz.media_type())],
        bytes,
    )
        .into_response()
}

/// Adds `Eth-Consensus-Version: fork` to `response`.
pub(crate) fn with_version(mut response: Response, fork: ForkName) -> Response {
    response.headers_mut().insert(
        beacon_api::CONSENSUS_VERSION_HEADER,
        HeaderValue::from_static(fork.as_str()),
    );
    response
}

/// 200 with no body (the pool and subscription endpoints).
pub(crate) fn ok_empty() -> Response {
    StatusCode::OK.into_response()
}

/// Runs `f` on tokio's blocking pool (state reads, duties over the registry, signature checks),
/// so the runtime's workers keep serving other requests meanwhile.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, HttpError> + Send + 'static,
) -> Result<T, HttpError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| HttpError::internal(format!("worker failed: {e}")))?
}
