//! The execution layer: an engine API client for the methods Fulu needs (JSON-RPC over HTTP with
//! JWT auth, per-method timeouts, typed errors and statuses, an observable EL state) and a mock
//! execution client for tests and local devnets.
//!
//! - [`EngineApiClient`]: `engine_exchangeCapabilities`, `engine_newPayloadV4`,
//!   `engine_forkchoiceUpdatedV3`, `engine_getPayloadV5`, `engine_getBlobsV2`,
//!   `engine_getClientVersionV1`.
//! - [`ElStateTracker`]: online / syncing / offline, a `watch` channel and a Prometheus gauge.
//! - [`mock::MockExecutionLayer`]: the same methods served over HTTP with JWT; payloads chain and
//!   carry real blobs with KZG commitments and cell proofs.
//!
//! [spec]: https://github.com/ethereum/execution-apis/tree/main/src/engine

pub mod client;
pub mod error;
pub mod json_structures;
pub mod jwt;
pub mod mock;
pub mod serde_hex;
pub mod state;

pub use client::{
    EngineApiClient, ForkchoiceUpdated, GetPayloadResponse, PayloadStatus, Timeouts,
    verify_blobs_bundle_kzg, verify_blobs_bundle_shape,
};
pub use error::{Error, RpcErrorCode};
pub use json_structures::{
    BlobAndProof, BlobsBundle, ClientVersion, ForkchoiceState, JsonGetPayloadV5Response,
    PayloadAttributes, execution_requests_from_list, get_execution_requests_list,
};
pub use jwt::{JwtError, JwtSecret};
pub use state::{ElState, ElStateTracker};
