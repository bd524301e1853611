//! The client's errors, with the engine API's JSON-RPC error codes as a typed enum.
//!
//! [spec]: https://github.com/ethereum/execution-apis/blob/main/src/engine/common.md#errors

use std::time::Duration;

use crate::client::EngineFork;
use crate::json_structures::RequestsError;

/// A JSON-RPC error code the engine API defines, or another one.
///
/// [spec]: common.md#errors
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcErrorCode {
    /// -32700: invalid JSON was received by the server.
    ParseError,
    /// -32600: the JSON sent is not a valid request object.
    InvalidRequest,
    /// -32601: the method does not exist or is not available.
    MethodNotFound,
    /// -32602: invalid method parameters.
    InvalidParams,
    /// -32603: internal JSON-RPC error.
    InternalError,
    /// -32000: generic client error while processing the request.
    ServerError,
    /// -38001: payload does not exist or is not available.
    UnknownPayload,
    /// -38002: forkchoice state is invalid or inconsistent.
    InvalidForkchoiceState,
    /// -38003: payload attributes are invalid or inconsistent.
    InvalidPayloadAttributes,
    /// -38004: number of requested entities is too large.
    TooLargeRequest,
    /// -38005: the payload's timestamp is not in the method's fork.
    UnsupportedFork,
    /// A code the engine API does not define.
    Other(i64),
}

impl RpcErrorCode {
    /// The code as sent.
    pub const fn code(self) -> i64 {
        match self {
            Self::ParseError => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::InternalError => -32603,
            Self::ServerError => -32000,
            Self::UnknownPayload => -38001,
            Self::InvalidForkchoiceState => -38002,
            Self::InvalidPayloadAttributes => -38003,
            Self::TooLargeRequest => -38004,
            Self::UnsupportedFork => -38005,
            Self::Other(code) => code,
        }
    }

    /// The typed code of a received number.
    pub const fn from_code(code: i64) -> Self {
        match code {
            -32700 => Self::ParseError,
            -32600 => Self::InvalidRequest,
            -32601 => Self::MethodNotFound,
            -32602 => Self::InvalidParams,
            -32603 => Self::InternalError,
            -32000 => Self::ServerError,
            -38001 => Self::UnknownPayload,
            -38002 => Self::InvalidForkchoiceState,
            -38003 => Self::InvalidPayloadAttributes,
            -38004 => Self::TooLargeRequest,
            -38005 => Self::UnsupportedFork,
            other => Self::Other(other),
        }
    }
}

/// Why an engine API call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine answered 401: the JWT was refused (wrong secret, or `iat` off by more than 60 s).
    #[error(
        "{method}: the execution engine refused our JWT (HTTP 401: {body}); check that both clients \
         use the same JWT secret file and that the clocks agree within 60 s"
    )]
    Unauthorized {
        /// The method called.
        method: &'static str,
        /// The response body, for the engine's reason.
        body: String,
    },
    /// An HTTP status other than 200 and 401, without a JSON-RPC error body.
    #[error("{method}: HTTP status {status} from the execution engine: {body}")]
    HttpStatus {
        /// The method called.
        method: &'static str,
        /// The status.
        status: u16,
        /// The body.
        body: String,
    },
    /// No answer within the method's timeout.
    #[error("{method}: no answer from the execution engine within {timeout:?}")]
    Timeout {
        /// The method called.
        method: &'static str,
        /// Its timeout.
        timeout: Duration,
    },
    /// The engine could not be reached (connection refused or dropped).
    #[error("{method}: cannot reach the execution engine at {url}: {reason}")]
    Unreachable {
        /// The method called.
        method: &'static str,
        /// The endpoint.
        url: String,
        /// The transport error.
        reason: String,
    },
    /// The response was not a JSON-RPC response of the expected shape.
    #[error("{method}: malformed response from the execution engine: {reason}")]
    MalformedResponse {
        /// The method called.
        method: &'static str,
        /// What did not parse.
        reason: String,
    },
    /// The engine answered with a JSON-RPC error.
    #[error("{method}: execution engine error {} ({code:?}): {message}", code.code())]
    Rpc {
        /// The method called.
        method: &'static str,
        /// The error code.
        code: RpcErrorCode,
        /// The engine's message.
        message: String,
    },
    /// The response parsed but breaks the spec's rules (e.g. a blobs bundle whose lengths do not
    /// agree, `VALID` without `latestValidHash`).
    #[error("{method}: invalid response from the execution engine: {reason}")]
    InvalidResponse {
        /// The method called.
        method: &'static str,
        /// The broken rule.
        reason: String,
    },
    /// The response's `executionRequests` break the Prague rules.
    #[error("{method}: invalid execution requests from the execution engine: {source}")]
    InvalidRequests {
        /// The method called.
        method: &'static str,
        /// The broken rule.
        source: RequestsError,
    },
    /// The method does not belong to the payload's fork: the client chooses the engine method by
    /// the payload's (or the payload attributes') timestamp against the Amsterdam (Gloas) fork
    /// time, and refuses the other one, before sending it or, for `getPayload`, on the answer.
    #[error(
        "{method} does not serve a payload with timestamp {timestamp}, which is in the {fork:?} \
         era of the engine API; use {instead}"
    )]
    WrongFork {
        /// The method called.
        method: &'static str,
        /// The payload's or the attributes' timestamp.
        timestamp: u64,
        /// The engine API era the timestamp is in.
        fork: EngineFork,
        /// The method of that era.
        instead: &'static str,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

impl Error {
    /// Whether the failure means the engine is unavailable (as opposed to answering badly).
    pub fn is_offline(&self) -> bool {
        matches!(
            self,
            Self::Unauthorized { .. }
                | Self::HttpStatus { .. }
                | Self::Timeout { .. }
                | Self::Unreachable { .. }
        )
    }
}
