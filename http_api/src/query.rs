//! Request parts read with the spec's 400 on a bad value: query strings (repeated keys and
//! comma-separated lists, as `id=1,2&id=3`), path parameters and bodies.

use std::str::FromStr;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use beacon_api::Encoding;
use serde::de::DeserializeOwned;
use types::ForkName;

use crate::error::HttpError;

/// The query string's `(key, value)` pairs, percent-decoded.
#[derive(Debug, Default)]
pub(crate) struct Query(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::from_query_str(parts.uri.query().unwrap_or_default()))
    }
}

impl Query {
    /// The pairs of a query string (without the `?`).
    fn from_query_str(query: &str) -> Self {
        Self(
            form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The value of `key` (the first, if repeated).
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `key` parsed, `None` if absent; a value that does not parse is a 400.
    pub(crate) fn parse<T: FromStr>(&self, key: &str) -> Result<Option<T>, HttpError>
    where
        T::Err: std::fmt::Display,
    {
        self.get(key)
            .map(|v| {
                v.parse()
                    .map_err(|e| HttpError::bad_request(format!("invalid {key} {v:?}: {e}")))
            })
            .transpose()
    }

    /// `key` parsed, required.
    pub(crate) fn required<T: FromStr>(&self, key: &str) -> Result<T, HttpError>
    where
        T::Err: std::fmt::Display,
    {
        self.parse(key)?
            .ok_or_else(|| HttpError::bad_request(format!("missing query parameter {key}")))
    }

    /// Every value of `key` (repeated and comma-separated), each parsed.
    pub(crate) fn list<T: FromStr>(&self, key: &str) -> Result<Vec<T>, HttpError>
    where
        T::Err: std::fmt::Display,
    {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse()
                    .map_err(|e| HttpError::bad_request(format!("invalid {key} {v:?}: {e}")))
            })
            .collect()
    }
}

/// A path parameter parsed with the spec's 400 (`{state_id}`, `{epoch}`, …).
pub(crate) fn parse_path<T: FromStr>(what: &str, value: &str) -> Result<T, HttpError>
where
    T::Err: std::fmt::Display,
{
    value
        .parse()
        .map_err(|e| HttpError::bad_request(format!("invalid {what} {value:?}: {e}")))
}

/// The path parameters as strings, with axum's rejection answered in the spec's body.
#[derive(Debug)]
pub(crate) struct PathParams(pub(crate) Vec<String>);

impl<S: Send + Sync> FromRequestParts<S> for PathParams {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(params) =
            axum::extract::Path::<Vec<(String, String)>>::from_request_parts(parts, state)
                .await
                .map_err(|e| HttpError::bad_request(format!("invalid path: {e}")))?;
        Ok(Self(params.into_iter().map(|(_, v)| v).collect()))
    }
}

impl PathParams {
    /// The `i`th parameter (the route's template guarantees how many there are).
    pub(crate) fn at(&self, i: usize) -> Result<&str, HttpError> {
        self.0
            .get(i)
            .map(String::as_str)
            .ok_or_else(|| HttpError::internal("route without its path parameter"))
    }
}

/// A request body with its encoding (from `Content-Type`) and `Eth-Consensus-Version`.
#[derive(Debug)]
pub(crate) struct Body {
    pub(crate) bytes: Bytes,
    pub(crate) encoding: Encoding,
    pub(crate) fork: Option<ForkName>,
}

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let headers = req.headers().clone();
        let encoding = beacon_api::request_encoding(
            headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        )?;
        let fork = consensus_version(&headers)?;
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                HttpError::PayloadTooLarge(e.body_text())
            } else {
                HttpError::bad_request(format!("cannot read body: {}", e.body_text()))
            }
        })?;
        Ok(Self {
            bytes,
            encoding,
            fork,
        })
    }
}

/// The body of a batch submission (pool attestations, aggregates, sync committee messages,
/// contributions, BLS changes): a [`Body`] whose rejection is the batch's 400 (see
/// [`HttpError::into_batch`]).
pub(crate) struct BatchBody(pub(crate) Body);

impl<S: Send + Sync> FromRequest<S> for BatchBody {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Body::from_request(req, state)
            .await
            .map(Self)
            .map_err(HttpError::into_batch)
    }
}

impl Body {
    /// The body as JSON of `T`, for the routes whose request body the spec gives in JSON only:
    /// an SSZ body (`application/octet-stream`) is a 415, on which clients that send SSZ first
    /// (Lodestar's) send the request again in JSON; a 400 would end it there.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, HttpError> {
        if self.encoding == Encoding::Ssz {
            return Err(HttpError::UnsupportedMediaType(
                "this endpoint takes a JSON body (application/json) only".into(),
            ));
        }
        self.json_bytes()
    }

    /// The bytes as JSON of `T`, whatever the content type said (for [`Self::decode`]).
    fn json_bytes<T: DeserializeOwned>(&self) -> Result<T, HttpError> {
        serde_json::from_slice(&self.bytes)
            .map_err(|e| HttpError::bad_request(format!("invalid JSON body: {e}")))
    }

    /// `Eth-Consensus-Version`, required.
    pub(crate) fn required_fork(&self) -> Result<ForkName, HttpError> {
        self.fork.ok_or_else(|| {
            HttpError::bad_request(format!(
                "missing header {}",
                beacon_api::CONSENSUS_VERSION_HEADER
            ))
        })
    }

    /// The body as SSZ of `T` (JSON bodies go through [`Self::json`]).
    pub(crate) fn ssz<T: ssz::Decode>(&self) -> Result<T, HttpError> {
        T::from_ssz_bytes(&self.bytes)
            .map_err(|e| HttpError::bad_request(format!("invalid SSZ body: {e:?}")))
    }

    /// The body in either encoding: JSON as `T`, SSZ as `T` (for types the same in both).
    pub(crate) fn decode<T: DeserializeOwned + ssz::Decode>(&self) -> Result<T, HttpError> {
        match self.encoding {
            Encoding::Json => self.json_bytes(),
            Encoding::Ssz => self.ssz(),
        }
    }
}

/// `Eth-Consensus-Version` of a request, if present; a value that names no fork is a 400.
pub(crate) fn consensus_version(headers: &HeaderMap) -> Result<Option<ForkName>, HttpError> {
    headers
        .get(beacon_api::CONSENSUS_VERSION_HEADER)
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|s| s.parse::<ForkName>().ok())
                .ok_or_else(|| {
                    HttpError::bad_request(format!(
                        "invalid {} {:?}",
                        beacon_api::CONSENSUS_VERSION_HEADER,
                        String::from_utf8_lossy(v.as_bytes())
                    ))
                })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use beacon_api::ValidatorId;

    #[test]
    fn lists_join_repeated_keys_and_commas_and_refuse_bad_items() {
        let q = Query::from_query_str("id=1,2&id=3&status=active&id=%30x12");
        let err = q.list::<ValidatorId>("id").unwrap_err();
        assert_eq!(err.status(), axum::http::StatusCode::BAD_REQUEST);
        let q = Query::from_query_str("id=1,2&id=3,&status=active");
        let ids: Vec<ValidatorId> = q.list("id").unwrap();
        assert_eq!(
            ids,
            [
                ValidatorId::Index(1),
                ValidatorId::Index(2),
                ValidatorId::Index(3)
            ]
        );
        assert!(q.list::<u64>("absent").unwrap().is_empty());
    }

    #[test]
    fn single_values_parse_or_say_which_key_is_wrong() {
        let q = Query::from_query_str("slot=12&committee_index=x");
        assert_eq!(q.required::<u64>("slot").unwrap(), 12);
        assert_eq!(q.parse::<u64>("epoch").unwrap(), None);
        let HttpError::BadRequest(message) = q.required::<u64>("committee_index").unwrap_err()
        else {
            panic!("a 400")
        };
        assert!(message.contains("committee_index"), "{message}");
        let HttpError::BadRequest(missing) = q.required::<u64>("epoch").unwrap_err() else {
            panic!("a 400")
        };
        assert!(missing.contains("missing"), "{missing}");
    }
}
