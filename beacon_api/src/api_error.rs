//! The Beacon API's error bodies.
//!
//! [spec]: types/http.yaml (`ErrorMessage`, `IndexedErrorMessage`)

use serde::{Deserialize, Serialize};

/// `ErrorMessage`: `{ "code": 400, "message": "...", "stacktraces"?: [...] }`, the body of every
/// 4xx and 5xx response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMessage {
    /// The HTTP status, or a more specific error code.
    pub code: u16,
    /// What went wrong.
    pub message: String,
    /// Stack traces, sent only by a node in debug mode.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacktraces: Vec<String>,
}

impl ErrorMessage {
    /// An error body with `code` and `message` and no stack traces.
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            stacktraces: Vec::new(),
        }
    }
}

/// One failed item of a batch submission: its position in the request list and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedError {
    /// Index of the item in the request list.
    pub index: u64,
    /// Why the item was refused.
    pub message: String,
}

/// `IndexedErrorMessage`: the body of a pool or duty submission in which some items failed
/// (the others were accepted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedErrorMessage {
    /// The HTTP status, or a more specific error code.
    pub code: u16,
    /// What went wrong, in general.
    pub message: String,
    /// The items that failed.
    pub failures: Vec<IndexedError>,
}

/// An error body of either form, as a client reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ApiErrorBody {
    /// The batch form, with `failures` (tried first: it has the extra required field).
    Indexed(IndexedErrorMessage),
    /// The plain form.
    Message(ErrorMessage),
}

impl ApiErrorBody {
    /// The code in the body.
    pub fn code(&self) -> u16 {
        match self {
            Self::Indexed(e) => e.code,
            Self::Message(e) => e.code,
        }
    }

    /// The message in the body.
    pub fn message(&self) -> &str {
        match self {
            Self::Indexed(e) => &e.message,
            Self::Message(e) => &e.message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_round_trips_with_and_without_stacktraces() {
        let json = r#"{"code":400,"message":"Invalid state ID: current"}"#;
        let parsed: ErrorMessage = serde_json::from_str(json).expect("decodes");
        assert_eq!(parsed, ErrorMessage::new(400, "Invalid state ID: current"));
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), json);

        let traced =
            r#"{"code":500,"message":"Internal server error","stacktraces":["at a","at b"]}"#;
        let parsed: ErrorMessage = serde_json::from_str(traced).expect("decodes");
        assert_eq!(parsed.stacktraces, ["at a", "at b"]);
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), traced);
    }

    #[test]
    fn indexed_errors_are_told_apart_from_plain_ones() {
        let json = r#"{"code":400,"message":"some failures","failures":[{"index":3,"message":"invalid signature"}]}"#;
        let body: ApiErrorBody = serde_json::from_str(json).expect("decodes");
        let ApiErrorBody::Indexed(indexed) = &body else {
            panic!("expected the indexed form, got {body:?}");
        };
        assert_eq!(
            indexed.failures,
            [IndexedError {
                index: 3,
                message: "invalid signature".into()
            }]
        );
        assert_eq!(serde_json::to_string(&body).expect("encodes"), json);

        let plain: ApiErrorBody =
            serde_json::from_str(r#"{"code":404,"message":"State not found"}"#).expect("decodes");
        assert_eq!(
            plain,
            ApiErrorBody::Message(ErrorMessage::new(404, "State not found"))
        );
        assert_eq!((plain.code(), plain.message()), (404, "State not found"));
    }

    #[test]
    fn a_body_without_code_is_refused() {
        assert!(serde_json::from_str::<ApiErrorBody>(r#"{"message":"x"}"#).is_err());
    }
}
