//! Errors of a request, answered with the spec's error body.
//!
//! [spec]: types/http.yaml (`ErrorMessage`, `IndexedErrorMessage`)

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use beacon_api::{ErrorMessage, IndexedError, IndexedErrorMessage, NegotiationError};

/// Why a request failed, with the status it is answered with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// 400: the request is malformed (a bad id, query value or body).
    #[error("{0}")]
    BadRequest(String),
    /// 404: the state, block or other object asked for is not known.
    #[error("{0}")]
    NotFound(String),
    /// 406: none of the accepted media types can be produced.
    #[error("{0}")]
    NotAcceptable(String),
    /// 413: the body is over the limit.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 415: the body's content type is not one the endpoint takes.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 400 with `failures`: some items of a batch were refused (the others were accepted).
    #[error("{message}")]
    Indexed {
        /// What went wrong, in general.
        message: String,
        /// The refused items.
        failures: Vec<IndexedError>,
    },
    /// 500: the node failed (a store error, a state it should have and has not).
    #[error("{0}")]
    Internal(String),
    /// 503: the node cannot answer now (syncing, a request that took too long).
    #[error("{0}")]
    Unavailable(String),
    /// 501: the endpoint is for a setup this node does not have (DVT selections without a
    /// middleware).
    #[error("{0}")]
    NotImplemented(String),
}

impl HttpError {
    /// 400 with `message`.
    pub fn bad_request(message: impl std::fmt::Display) -> Self {
        Self::BadRequest(message.to_string())
    }

    /// 404 with `message`.
    pub fn not_found(message: impl std::fmt::Display) -> Self {
        Self::NotFound(message.to_string())
    }

    /// 500 with `message`.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }

    /// 501 for data of a fork this node does not serve (a state whose registry it cannot
    /// read).
    pub fn unsupported_fork(fork: types::ForkName) -> Self {
        Self::NotImplemented(format!(
            "fork {fork} is not supported by this version of Arbor"
        ))
    }

    /// The error as a batch endpoint answers it: a request refused as a whole (a body that does
    /// not parse, a missing version header) is a 400 with an empty `failures` list, since the
    /// spec's 400 body of a batch submission (`IndexedErrorMessage`) requires the list.
    pub fn into_batch(self) -> Self {
        match self {
            Self::BadRequest(message) => Self::Indexed {
                message,
                failures: Vec::new(),
            },
            other => other,
        }
    }

    /// The status code of the answer.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::Indexed { .. } => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
        }
    }
}

impl From<NegotiationError> for HttpError {
    fn from(e: NegotiationError) -> Self {
        match e {
            NegotiationError::NotAcceptable(_) => Self::NotAcceptable(e.to_string()),
            NegotiationError::UnsupportedMediaType(_) => Self::UnsupportedMediaType(e.to_string()),
        }
    }
}

/// A state helper that failed on a state the node holds (reading its fields, its committees):
/// the node's failure.
impl From<state_processing::Error> for HttpError {
    fn from(e: state_processing::Error) -> Self {
        Self::Internal(format!("state: {e}"))
    }
}

impl From<store::StoreError> for HttpError {
    fn from(e: store::StoreError) -> Self {
        Self::Internal(format!("store: {e}"))
    }
}

/// A failed state query answered by whose fault it is: 404 for a state or block the node does
/// not hold (or a slot after the head), 400 for an epoch out of range, 500 for the node's own
/// failures (the store, a state transition of a held state).
impl From<beacon_chain::StateQueryError> for HttpError {
    fn from(e: beacon_chain::StateQueryError) -> Self {
        use beacon_chain::StateQueryError as Q;
        match e {
            Q::SlotAfterHead { .. }
            | Q::NoStateAtSlot { .. }
            | Q::NoBlockForSlot { .. }
            | Q::NoStateWithRoot { .. }
            | Q::NoBlock { .. } => Self::NotFound(e.to_string()),
            Q::BeyondNextSyncPeriod { .. } => Self::BadRequest(e.to_string()),
            Q::Chain(_) | Q::StoredBlockSlot { .. } | Q::BlockReplay { .. } => {
                Self::Internal(e.to_string())
            }
        }
    }
}

/// Blobs that could not be made from stored columns: 404 when the node holds too few of the
/// block's columns, 500 for its own failures.
impl From<beacon_chain::StoredBlobsError> for HttpError {
    fn from(e: beacon_chain::StoredBlobsError) -> Self {
        match e {
            beacon_chain::StoredBlobsError::TooFewColumns { .. } => Self::NotFound(e.to_string()),
            _ => Self::Internal(e.to_string()),
        }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = self.status();
        let code = status.as_u16();
        let body = match self {
            Self::Indexed { message, failures } => serde_json::to_vec(&IndexedErrorMessage {
                code,
                message,
                failures,
            }),
            other => serde_json::to_vec(&ErrorMessage::new(code, other.to_string())),
        }
        // The error bodies are plain strings and numbers: their JSON cannot fail.
        .unwrap_or_default();
        (
            status,
            [(
                header::CONTENT_TYPE,
                beacon_api::negotiation::JSON_MEDIA_TYPE,
            )],
            body,
        )
            .into_response()
    }
}

/// The answer to a path no route matches.
pub(crate) async fn not_found_route(uri: axum::http::Uri) -> HttpError {
    HttpError::NotFound(format!("no endpoint at {}", uri.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(e: HttpError) -> (StatusCode, serde_json::Value) {
        let response = e.into_response();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("a small body");
        (status, serde_json::from_slice(&bytes).expect("JSON"))
    }

    #[tokio::test]
    async fn a_batch_refused_as_a_whole_answers_an_empty_failures_list() {
        let (status, body) =
            body_of(HttpError::bad_request("invalid JSON body").into_batch()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body,
            serde_json::json!({"code": 400, "message": "invalid JSON body", "failures": []})
        );
        // Other statuses keep their own body.
        let (status, body) =
            body_of(HttpError::UnsupportedMediaType("text/plain".into()).into_batch()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(body.get("failures").is_none());
    }

    #[tokio::test]
    async fn errors_answer_the_spec_body_with_their_status() {
        let (status, body) = body_of(HttpError::not_found("block 0x12 not found")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body,
            serde_json::json!({"code": 404, "message": "block 0x12 not found"})
        );
        let (status, body) = body_of(HttpError::Indexed {
            message: "some attestations failed validation".into(),
            failures: vec![IndexedError {
                index: 1,
                message: "invalid attestation signature".into(),
            }],
        })
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["failures"][0]["index"], 1);
        assert_eq!(body["code"], 400);
        for (e, code) in [
            (HttpError::NotAcceptable(String::new()), 406),
            (HttpError::UnsupportedMediaType(String::new()), 415),
            (HttpError::PayloadTooLarge(String::new()), 413),
            (HttpError::Unavailable(String::new()), 503),
            (HttpError::NotImplemented(String::new()), 501),
        ] {
            assert_eq!(e.status().as_u16(), code);
        }
    }
}
