//! The execution layer: an engine API client for the methods Fulu and Gloas need (JSON-RPC over
//! HTTP with JWT auth, per-method timeouts, typed errors and statuses, an observable EL state).
//!
//! - [`EngineApiClient`]: `engine_exchangeCapabilities`, `engine_newPayloadV4`,
//!   `engine_forkchoiceUpdatedV3`, `engine_getPayloadV5`, `engine_getBlobsV2`,
//!   `engine_getClientVersionV1`, and Amsterdam's `engine_newPayloadV5`,
//!   `engine_forkchoiceUpdatedV4`, `engine_getPayloadV6`, `engine_getPayloadBodiesByHashV2` /
//!   `ByRangeV2` and `engine_getBlobsV4`. The era's method is chosen by the payload's (or the
//!   attributes') timestamp against the Amsterdam (Gloas) fork time ([`EngineFork`]); the other
//!   era's method is refused with [`Error::WrongFork`].
//! - [`ElStateTracker`]: online / syncing / offline, a `watch` channel and a Prometheus gauge.
//!
//! The mock execution client that serves these methods for tests and devnets is its own crate,
//! `mock_execution_layer`, so a node build links no mock code.
//!
//! [spec]: https://github.com/ethereum/execution-apis/tree/main/src/engine

pub mod client;
pub mod error;
pub mod json_structures;
pub mod jwt;
pub mod serde_hex;
pub mod state;

pub use client::{
    BuiltPayload, EngineApiClient, EngineFork, ForkchoiceUpdated, GetPayloadResponse,
    GetPayloadV6Response, PayloadStatus, Timeouts, amsterdam_time, verify_blobs_bundle_kzg,
    verify_blobs_bundle_shape,
};
pub use error::{Error, RpcErrorCode};
pub use json_structures::{
    BlobAndProof, BlobCellsAndProofsV1, BlobsBundle, ClientVersion, ColumnIndices,
    ExecutionPayloadBodyV2, ForkchoiceState, JsonGetPayloadV5Response, JsonGetPayloadV6Response,
    PayloadAttributes, PayloadAttributesV4, execution_requests_from_list,
    get_execution_requests_list, get_execution_requests_list_gloas,
    gloas_execution_requests_from_list,
};
pub use jwt::{JwtError, JwtSecret};
pub use state::{ElState, ElStateTracker};
