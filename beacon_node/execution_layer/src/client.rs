//! The engine API client: JSON-RPC 2.0 over HTTP, a fresh HS256 JWT per request, a timeout per
//! method, responses decoded into consensus types and checked against the spec's rules.
//!
//! [spec]: https://github.com/ethereum/execution-apis/tree/main/src/engine

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use types::electra::{ExecutionRequests, NewPayloadRequest};
use types::fulu::ExecutionPayload;
use types::gloas;
use types::{CellIndex, ChainSpec, EthSpec, ForkName, Hash32, PayloadId, U256, VersionedHash};

use crate::error::{Error, RpcErrorCode};
use crate::json_structures::{
    BlobAndProof, BlobCellsAndProofsV1, BlobsBundle, ClientVersion, ColumnIndices,
    ExecutionPayloadBodyV2, ForkchoiceState, JsonExecutionPayloadV3, JsonExecutionPayloadV4,
    JsonForkchoiceUpdatedResponse, JsonGetPayloadV5Response, JsonGetPayloadV6Response,
    JsonPayloadStatusKind, JsonPayloadStatusV1, PayloadAttributes, PayloadAttributesV4,
    execution_requests_from_list, get_execution_requests_list, get_execution_requests_list_gloas,
    gloas_execution_requests_from_list,
};
use crate::jwt::JwtSecret;
use crate::state::{ElState, ElStateTracker};

/// `engine_exchangeCapabilities`.
pub const ENGINE_EXCHANGE_CAPABILITIES: &str = "engine_exchangeCapabilities";
/// `engine_newPayloadV4`.
pub const ENGINE_NEW_PAYLOAD_V4: &str = "engine_newPayloadV4";
/// `engine_forkchoiceUpdatedV3`.
pub const ENGINE_FORKCHOICE_UPDATED_V3: &str = "engine_forkchoiceUpdatedV3";
/// `engine_getPayloadV5`.
pub const ENGINE_GET_PAYLOAD_V5: &str = "engine_getPayloadV5";
/// `engine_getBlobsV2`.
pub const ENGINE_GET_BLOBS_V2: &str = "engine_getBlobsV2";
/// `engine_getClientVersionV1`.
pub const ENGINE_GET_CLIENT_VERSION_V1: &str = "engine_getClientVersionV1";
/// `engine_newPayloadV5` (Amsterdam).
pub const ENGINE_NEW_PAYLOAD_V5: &str = "engine_newPayloadV5";
/// `engine_forkchoiceUpdatedV4` (Amsterdam).
pub const ENGINE_FORKCHOICE_UPDATED_V4: &str = "engine_forkchoiceUpdatedV4";
/// `engine_getPayloadV6` (Amsterdam).
pub const ENGINE_GET_PAYLOAD_V6: &str = "engine_getPayloadV6";
/// `engine_getPayloadBodiesByHashV2` (Amsterdam).
pub const ENGINE_GET_PAYLOAD_BODIES_BY_HASH_V2: &str = "engine_getPayloadBodiesByHashV2";
/// `engine_getPayloadBodiesByRangeV2` (Amsterdam).
pub const ENGINE_GET_PAYLOAD_BODIES_BY_RANGE_V2: &str = "engine_getPayloadBodiesByRangeV2";
/// `engine_getBlobsV4` (Amsterdam).
pub const ENGINE_GET_BLOBS_V4: &str = "engine_getBlobsV4";

/// The methods this client calls, as offered in `engine_exchangeCapabilities`.
pub const CAPABILITIES: [&str; 12] = [
    ENGINE_EXCHANGE_CAPABILITIES,
    ENGINE_NEW_PAYLOAD_V4,
    ENGINE_FORKCHOICE_UPDATED_V3,
    ENGINE_GET_PAYLOAD_V5,
    ENGINE_GET_BLOBS_V2,
    ENGINE_GET_CLIENT_VERSION_V1,
    ENGINE_NEW_PAYLOAD_V5,
    ENGINE_FORKCHOICE_UPDATED_V4,
    ENGINE_GET_PAYLOAD_V6,
    ENGINE_GET_PAYLOAD_BODIES_BY_HASH_V2,
    ENGINE_GET_PAYLOAD_BODIES_BY_RANGE_V2,
    ENGINE_GET_BLOBS_V4,
];

/// The most block hashes or blocks one `engine_getPayloadBodiesBy*V2` call may ask for (the
/// engine must serve at least 32; 1024 is what execution clients accept in practice).
///
/// [spec]: shanghai.md#engine_getpayloadbodiesbyhashv1
pub const MAX_PAYLOAD_BODIES_REQUEST: usize = 1024;

/// `BYTES_PER_CELL`: the size of one cell in `engine_getBlobsV4`'s answer.
pub const BYTES_PER_CELL: usize = 2048;

/// Which generation of engine API methods serves a payload: chosen by the payload's (or the
/// attributes') timestamp against the Amsterdam fork time, which is the Gloas fork's time on
/// the consensus side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineFork {
    /// Before Amsterdam: `engine_newPayloadV4`, `engine_forkchoiceUpdatedV3`,
    /// `engine_getPayloadV5` (the Prague/Osaka methods Arbor speaks in Fulu).
    Osaka,
    /// At or after Amsterdam: `engine_newPayloadV5`, `engine_forkchoiceUpdatedV4`,
    /// `engine_getPayloadV6`.
    Amsterdam,
}

impl EngineFork {
    /// The era of a payload with `timestamp` when Amsterdam starts at `amsterdam_time` (`None`:
    /// not scheduled).
    pub fn at(timestamp: u64, amsterdam_time: Option<u64>) -> Self {
        match amsterdam_time {
            Some(start) if timestamp >= start => Self::Amsterdam,
            Some(_) | None => Self::Osaka,
        }
    }

    /// The engine API era of a consensus fork.
    pub fn of_fork(fork: ForkName) -> Self {
        match fork {
            ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Electra
            | ForkName::Fulu => Self::Osaka,
            ForkName::Gloas => Self::Amsterdam,
        }
    }

    /// This era's `engine_newPayload`.
    pub const fn new_payload_method(self) -> &'static str {
        match self {
            Self::Osaka => ENGINE_NEW_PAYLOAD_V4,
            Self::Amsterdam => ENGINE_NEW_PAYLOAD_V5,
        }
    }

    /// This era's `engine_forkchoiceUpdated`.
    pub const fn forkchoice_updated_method(self) -> &'static str {
        match self {
            Self::Osaka => ENGINE_FORKCHOICE_UPDATED_V3,
            Self::Amsterdam => ENGINE_FORKCHOICE_UPDATED_V4,
        }
    }

    /// This era's `engine_getPayload`.
    pub const fn get_payload_method(self) -> &'static str {
        match self {
            Self::Osaka => ENGINE_GET_PAYLOAD_V5,
            Self::Amsterdam => ENGINE_GET_PAYLOAD_V6,
        }
    }
}

/// The Amsterdam activation timestamp: the start of the first slot of `GLOAS_FORK_EPOCH`
/// (`compute_time_at_slot`), `None` when the spec does not schedule Gloas.
pub fn amsterdam_time<E: EthSpec>(spec: &ChainSpec, genesis_time: u64) -> Option<u64> {
    spec.fork_epoch(ForkName::Gloas).map(|epoch| {
        spec.compute_time_at_slot(genesis_time, epoch.saturating_mul(E::slots_per_epoch()))
    })
}

/// The most versioned hashes one `engine_getBlobsV2` may ask for.
///
/// [spec]: cancun.md#engine_getblobsv1
pub const MAX_GET_BLOBS_REQUEST: usize = 128;

/// `CELLS_PER_EXT_BLOB`: cell proofs per blob in a `BlobsBundleV2` / `BlobAndProofV2`.
pub const CELLS_PER_EXT_BLOB: usize = kzg::CELLS_PER_EXT_BLOB;

/// A timeout per method; the defaults are the spec's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// `engine_newPayloadV4`: 8 s.
    pub new_payload: Duration,
    /// `engine_forkchoiceUpdatedV3`: 8 s.
    pub forkchoice_updated: Duration,
    /// `engine_getPayloadV5`: 1 s.
    pub get_payload: Duration,
    /// `engine_getBlobsV2`: 1 s.
    pub get_blobs: Duration,
    /// `engine_exchangeCapabilities`: 1 s.
    pub exchange_capabilities: Duration,
    /// `engine_getClientVersionV1`: 1 s.
    pub get_client_version: Duration,
    /// `engine_newPayloadV5`: 6 s.
    pub new_payload_v5: Duration,
    /// `engine_getPayloadBodiesByHashV2` / `ByRangeV2`: 10 s.
    pub get_payload_bodies: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            new_payload: Duration::from_secs(8),
            forkchoice_updated: Duration::from_secs(8),
            get_payload: Duration::from_secs(1),
            get_blobs: Duration::from_secs(1),
            exchange_capabilities: Duration::from_secs(1),
            get_client_version: Duration::from_secs(1),
            new_payload_v5: Duration::from_secs(6),
            get_payload_bodies: Duration::from_secs(10),
        }
    }
}

/// A payload's status as the consensus layer acts on it.
///
/// [spec]: paris.md#payloadstatusv1, sync/optimistic.md
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadStatus {
    /// Executed and valid.
    Valid,
    /// Invalid: the payload, or its ancestors after `latest_valid_hash`, must not be imported;
    /// `None` when the engine cannot tell which ancestor was the last valid one.
    Invalid {
        /// The most recent valid ancestor.
        latest_valid_hash: Option<Hash32>,
        /// The engine's reason.
        validation_error: Option<String>,
    },
    /// The block hash does not match the payload (`INVALID_BLOCK_HASH`, Paris wording).
    InvalidBlockHash {
        /// The engine's reason.
        validation_error: Option<String>,
    },
    /// The engine is syncing: import optimistically.
    Syncing,
    /// Well-formed, but the parent is unknown or not canonical: import optimistically.
    Accepted,
}

impl PayloadStatus {
    /// Checks a received status: `VALID` must name the expected block (when given), `ACCEPTED`
    /// only answers `newPayload`.
    fn from_json(
        method: &'static str,
        status: JsonPayloadStatusV1,
        expected_valid_hash: Option<Hash32>,
    ) -> Result<Self, Error> {
        let invalid = |reason: String| Error::InvalidResponse { method, reason };
        Ok(match status.status {
            JsonPayloadStatusKind::Valid => {
                let hash = status
                    .latest_valid_hash
                    .ok_or_else(|| invalid("VALID without latestValidHash".into()))?;
                if let Some(expected) = expected_valid_hash.filter(|e| *e != hash) {
                    return Err(invalid(format!(
                        "VALID with latestValidHash {hash} instead of {expected}"
                    )));
                }
                Self::Valid
            }
            JsonPayloadStatusKind::Invalid => Self::Invalid {
                latest_valid_hash: status.latest_valid_hash,
                validation_error: status.validation_error,
            },
            JsonPayloadStatusKind::InvalidBlockHash => Self::InvalidBlockHash {
                validation_error: status.validation_error,
            },
            JsonPayloadStatusKind::Syncing => Self::Syncing,
            JsonPayloadStatusKind::Accepted
                if method == ENGINE_NEW_PAYLOAD_V4 || method == ENGINE_NEW_PAYLOAD_V5 =>
            {
                Self::Accepted
            }
            JsonPayloadStatusKind::Accepted => {
                return Err(invalid(format!("ACCEPTED is not an answer to {method}")));
            }
        })
    }

    /// What the status says about the engine.
    fn el_state(&self) -> ElState {
        match self {
            Self::Syncing | Self::Accepted => ElState::Syncing,
            _ => ElState::Online,
        }
    }
}

/// The answer to `engine_forkchoiceUpdatedV3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkchoiceUpdated {
    /// The head's status.
    pub payload_status: PayloadStatus,
    /// The build process started by the attributes, if any.
    pub payload_id: Option<PayloadId>,
}

/// A payload built by the engine, decoded into consensus types and checked.
///
/// [spec]: osaka.md#engine_getpayloadv5
#[derive(Debug, Clone, PartialEq)]
pub struct GetPayloadResponse<E: EthSpec> {
    /// The payload.
    pub execution_payload: ExecutionPayload<E>,
    /// Wei the fee recipient is expected to receive.
    pub block_value: U256,
    /// Blobs, commitments and cell proofs; lengths checked.
    pub blobs_bundle: BlobsBundle<E>,
    /// The engine suggests preferring this payload over a builder's.
    pub should_override_builder: bool,
    /// The payload's EIP-7685 requests.
    pub execution_requests: ExecutionRequests<E>,
}

impl<E: EthSpec> GetPayloadResponse<E> {
    /// Converts a decoded response, enforcing the Osaka rules on the bundle and the Prague rules
    /// on the requests.
    pub fn from_json(json: JsonGetPayloadV5Response<E>) -> Result<Self, Error> {
        let method = ENGINE_GET_PAYLOAD_V5;
        verify_blobs_bundle_shape::<E>(&json.blobs_bundle)
            .map_err(|reason| Error::InvalidResponse { method, reason })?;
        let execution_requests = execution_requests_from_list::<E>(&json.execution_requests)
            .map_err(|source| Error::InvalidRequests { method, source })?;
        Ok(Self {
            execution_payload: json.execution_payload.into(),
            block_value: json.block_value,
            blobs_bundle: json.blobs_bundle,
            should_override_builder: json.should_override_builder,
            execution_requests,
        })
    }
}

/// An Amsterdam payload built by the engine (`engine_getPayloadV6`), decoded into Gloas types
/// and checked.
///
/// [spec]: amsterdam.md#engine_getpayloadv6
#[derive(Debug, Clone, PartialEq)]
pub struct GetPayloadV6Response<E: EthSpec> {
    /// The payload, with its block access list and slot number.
    pub execution_payload: gloas::ExecutionPayload<E>,
    /// Wei the fee recipient is expected to receive.
    pub block_value: U256,
    /// Blobs, commitments and cell proofs; lengths checked.
    pub blobs_bundle: BlobsBundle<E>,
    /// The engine suggests preferring this payload over a builder's.
    pub should_override_builder: bool,
    /// The payload's EIP-7685 requests, builder deposits and exits included.
    pub execution_requests: gloas::ExecutionRequests,
}

impl<E: EthSpec> GetPayloadV6Response<E> {
    /// Converts a decoded response, enforcing the Osaka rules on the bundle and the Prague rules
    /// (with Gloas's request types) on the requests.
    pub fn from_json(json: JsonGetPayloadV6Response<E>) -> Result<Self, Error> {
        let method = ENGINE_GET_PAYLOAD_V6;
        verify_blobs_bundle_shape::<E>(&json.blobs_bundle)
            .map_err(|reason| Error::InvalidResponse { method, reason })?;
        let execution_requests = gloas_execution_requests_from_list::<E>(&json.execution_requests)
            .map_err(|source| Error::InvalidRequests { method, source })?;
        Ok(Self {
            execution_payload: json.execution_payload.into(),
            block_value: json.block_value,
            blobs_bundle: json.blobs_bundle,
            should_override_builder: json.should_override_builder,
            execution_requests,
        })
    }
}

/// A built payload of either era, as [`EngineApiClient::get_payload`] fetched it.
#[derive(Debug, Clone, PartialEq)]
pub enum BuiltPayload<E: EthSpec> {
    /// From `engine_getPayloadV5`.
    Osaka(GetPayloadResponse<E>),
    /// From `engine_getPayloadV6`.
    Amsterdam(GetPayloadV6Response<E>),
}

/// The `BlobsBundleV2` length rules: as many commitments as blobs, `CELLS_PER_EXT_BLOB` proofs
/// per blob, no more blobs than a block may commit to.
///
/// [spec]: osaka.md#blobsbundlev2
pub fn verify_blobs_bundle_shape<E: EthSpec>(bundle: &BlobsBundle<E>) -> Result<(), String> {
    let blobs = bundle.blobs.len();
    let limit = <E::MaxBlobCommitmentsPerBlock as ssz_types::typenum::Unsigned>::to_usize();
    if blobs > limit {
        return Err(format!("{blobs} blobs exceed the limit of {limit}"));
    }
    if bundle.commitments.len() != blobs {
        return Err(format!(
            "{} commitments for {blobs} blobs",
            bundle.commitments.len()
        ));
    }
    if bundle.proofs.len() != blobs * CELLS_PER_EXT_BLOB {
        return Err(format!(
            "{} proofs for {blobs} blobs (expected {})",
            bundle.proofs.len(),
            blobs * CELLS_PER_EXT_BLOB
        ));
    }
    Ok(())
}

/// Verifies every cell proof of a bundle with KZG: computes the cells of each blob and checks
/// them against its commitment in one batch.
///
/// [spec]: osaka.md#engine_getpayloadv5 (specification, item 2)
pub fn verify_blobs_bundle_kzg<E: EthSpec>(bundle: &BlobsBundle<E>) -> Result<bool, kzg::Error> {
    if verify_blobs_bundle_shape(bundle).is_err() {
        return Ok(false);
    }
    let mut commitments = Vec::with_capacity(bundle.proofs.len());
    let mut cell_indices: Vec<CellIndex> = Vec::with_capacity(bundle.proofs.len());
    let mut cells = Vec::with_capacity(bundle.proofs.len());
    for (blob, commitment) in bundle.blobs.iter().zip(&bundle.commitments) {
        let blob = kzg::blob_from_bytes(blob)?;
        let blob_cells = kzg::compute_cells(&blob)?;
        let commitment = kzg::KzgCommitment::from_slice(commitment.as_slice())?;
        for (index, cell) in blob_cells.iter().enumerate() {
            commitments.push(commitment);
            cell_indices.push(index as CellIndex);
            cells.push(*cell);
        }
    }
    let proofs: Vec<kzg::KzgProof> = bundle.proofs.iter().map(|p| kzg::KzgProof(p.0)).collect();
    kzg::verify_cell_kzg_proof_batch(&commitments, &cell_indices, &cells, &proofs)
}

/// An engine API endpoint.
#[derive(Debug)]
pub struct EngineApiClient {
    http: reqwest::Client,
    url: String,
    secret: JwtSecret,
    timeouts: Timeouts,
    next_id: AtomicU64,
    state: ElStateTracker,
    /// When Amsterdam starts; `None`: not scheduled (every payload is pre-Amsterdam).
    amsterdam_time: Option<u64>,
}

#[derive(serde::Deserialize)]
struct JsonRpcError {
    code: i64,
    #[serde(default)]
    message: String,
}

#[derive(serde::Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
struct JsonRpcResponse<T> {
    #[serde(default = "none")]
    result: Option<T>,
    #[serde(default)]
    error: Option<JsonRpcError>,
}

fn none<T>() -> Option<T> {
    None
}

impl EngineApiClient {
    /// A client for the engine at `url` (e.g. `http://127.0.0.1:8551`).
    pub fn new(
        url: impl Into<String>,
        secret: JwtSecret,
        timeouts: Timeouts,
    ) -> Result<Self, Error> {
        let url = url.into();
        // A plain http endpoint (the usual local execution client) does not load the system's
        // trusted roots, so a machine without CA certificates still reaches it.
        let builder = reqwest::Client::builder();
        let builder = if url.starts_with("http://") {
            builder.tls_certs_only(std::iter::empty())
        } else {
            builder
        };
        let http = builder
            .build()
            .map_err(|e| Error::Client(error_chain(&e)))?;
        Ok(Self {
            http,
            url,
            secret,
            timeouts,
            next_id: AtomicU64::new(1),
            state: ElStateTracker::new(),
            amsterdam_time: None,
        })
    }

    /// This client with the Amsterdam fork time it chooses methods by (see [`amsterdam_time`]);
    /// without it every payload is taken as pre-Amsterdam.
    pub fn with_amsterdam_time(mut self, amsterdam_time: Option<u64>) -> Self {
        self.amsterdam_time = amsterdam_time;
        self
    }

    /// This client with the Amsterdam time of `spec`'s Gloas fork for a chain that started at
    /// `genesis_time`.
    pub fn with_fork_schedule<E: EthSpec>(self, spec: &ChainSpec, genesis_time: u64) -> Self {
        self.with_amsterdam_time(amsterdam_time::<E>(spec, genesis_time))
    }

    /// When Amsterdam starts, if scheduled.
    pub fn amsterdam_time(&self) -> Option<u64> {
        self.amsterdam_time
    }

    /// The engine API era of a payload with `timestamp`.
    pub fn engine_fork_at(&self, timestamp: u64) -> EngineFork {
        EngineFork::at(timestamp, self.amsterdam_time)
    }

    /// Refuses `method` (of era `wanted`) for a payload with `timestamp` of another era.
    fn require_fork(
        &self,
        method: &'static str,
        timestamp: u64,
        wanted: EngineFork,
    ) -> Result<(), Error> {
        let fork = self.engine_fork_at(timestamp);
        if fork == wanted {
            return Ok(());
        }
        let instead = match method {
            ENGINE_NEW_PAYLOAD_V4 | ENGINE_NEW_PAYLOAD_V5 => fork.new_payload_method(),
            ENGINE_FORKCHOICE_UPDATED_V3 | ENGINE_FORKCHOICE_UPDATED_V4 => {
                fork.forkchoice_updated_method()
            }
            _ => fork.get_payload_method(),
        };
        Err(Error::WrongFork {
            method,
            timestamp,
            fork,
            instead,
        })
    }

    /// The engine's state as last observed.
    pub fn state(&self) -> &ElStateTracker {
        &self.state
    }

    /// The endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One JSON-RPC call; `Ok(None)` for a `null` result. Updates the EL state for transport
    /// failures; callers refine it from payload statuses.
    async fn call<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: P,
        timeout: Duration,
    ) -> Result<Option<T>, Error> {
        let result = self.call_inner(method, params, timeout).await;
        match &result {
            Err(e) if e.is_offline() => {
                self.state.set(ElState::Offline);
            }
            Ok(_) | Err(Error::Rpc { .. }) => self.state.answered(),
            Err(_) => {}
        }
        result
    }

    async fn call_inner<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: P,
        timeout: Duration,
    ) -> Result<Option<T>, Error> {
        #[derive(Serialize)]
        struct Request<'a, P> {
            jsonrpc: &'static str,
            id: u64,
            method: &'a str,
            params: P,
        }
        let body = serde_json::to_vec(&Request {
            jsonrpc: "2.0",
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            method,
            params,
        })
        .map_err(|e| Error::Client(format!("cannot encode {method} params: {e}")))?;

        let transport = |e: reqwest::Error| {
            if e.is_timeout() {
                Error::Timeout { method, timeout }
            } else {
                Error::Unreachable {
                    method,
                    url: self.url.clone(),
                    reason: error_chain(&e),
                }
            }
        };
        let response = self
            .http
            .post(&self.url)
            .timeout(timeout)
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", self.secret.token()))
            .body(body)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(transport)?;
        if status == 401 {
            return Err(Error::Unauthorized {
                method,
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
            });
        }
        let decoded = serde_json::from_slice::<JsonRpcResponse<T>>(&bytes);
        if status != 200 {
            // Some engines send JSON-RPC errors with a non-200 status; prefer their message.
            if let Ok(JsonRpcResponse {
                error: Some(error), ..
            }) = decoded
            {
                return Err(rpc_error(method, error));
            }
            return Err(Error::HttpStatus {
                method,
                status,
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
            });
        }
        let response = decoded.map_err(|e| Error::MalformedResponse {
            method,
            reason: e.to_string(),
        })?;
        if let Some(error) = response.error {
            return Err(rpc_error(method, error));
        }
        Ok(response.result)
    }

    async fn call_required<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: P,
        timeout: Duration,
    ) -> Result<T, Error> {
        self.call(method, params, timeout)
            .await?
            .ok_or(Error::MalformedResponse {
                method,
                reason: "null or missing result".into(),
            })
    }

    /// `engine_exchangeCapabilities`: offers our methods, returns the engine's.
    ///
    /// [spec]: common.md#engine_exchangecapabilities
    pub async fn exchange_capabilities(&self) -> Result<Vec<String>, Error> {
        self.call_required(
            ENGINE_EXCHANGE_CAPABILITIES,
            (CAPABILITIES,),
            self.timeouts.exchange_capabilities,
        )
        .await
    }

    /// Probes the engine with `engine_exchangeCapabilities` and returns the state after it.
    pub async fn upcheck(&self) -> ElState {
        let _ = self.exchange_capabilities().await;
        self.state.get()
    }

    /// `engine_newPayloadV4` for a block's payload, blob versioned hashes, parent root and
    /// requests (`verify_and_notify_new_payload`).
    ///
    /// [spec]: prague.md#engine_newpayloadv4
    pub async fn new_payload_v4<E: EthSpec>(
        &self,
        request: &NewPayloadRequest<E>,
    ) -> Result<PayloadStatus, Error> {
        self.require_fork(
            ENGINE_NEW_PAYLOAD_V4,
            request.execution_payload.timestamp,
            EngineFork::Osaka,
        )?;
        let payload = JsonExecutionPayloadV3::from(request.execution_payload.clone());
        let hashes: Vec<VersionedHash> = request.versioned_hashes.to_vec();
        let requests = get_execution_requests_list(&request.execution_requests);
        let block_hash = request.execution_payload.block_hash;
        let status: JsonPayloadStatusV1 = self
            .call_required(
                ENGINE_NEW_PAYLOAD_V4,
                NewPayloadParams {
                    payload: &payload,
                    hashes: &hashes,
                    parent_beacon_block_root: request.parent_beacon_block_root,
                    requests: &requests,
                },
                self.timeouts.new_payload,
            )
            .await?;
        let status = PayloadStatus::from_json(ENGINE_NEW_PAYLOAD_V4, status, Some(block_hash))?;
        self.state.set(status.el_state());
        Ok(status)
    }

    /// `engine_forkchoiceUpdatedV3`: moves the engine's head, and with attributes starts building
    /// a payload on it.
    ///
    /// [spec]: cancun.md#engine_forkchoiceupdatedv3
    pub async fn forkchoice_updated_v3(
        &self,
        forkchoice_state: ForkchoiceState,
        attributes: Option<&PayloadAttributes>,
    ) -> Result<ForkchoiceUpdated, Error> {
        if let Some(attributes) = attributes {
            self.require_fork(
                ENGINE_FORKCHOICE_UPDATED_V3,
                attributes.timestamp,
                EngineFork::Osaka,
            )?;
        }
        self.forkchoice_updated_call(
            ENGINE_FORKCHOICE_UPDATED_V3,
            (forkchoice_state, attributes),
            forkchoice_state.head_block_hash,
        )
        .await
    }

    /// `engine_forkchoiceUpdatedV4`: as V3, with `PayloadAttributesV4` (slot number, target gas
    /// limit) and the columns the node custodies (`None`: it custodies none / does not say).
    ///
    /// [spec]: amsterdam.md#engine_forkchoiceupdatedv4
    pub async fn forkchoice_updated_v4(
        &self,
        forkchoice_state: ForkchoiceState,
        attributes: Option<&PayloadAttributesV4>,
        custody_columns: Option<&ColumnIndices>,
    ) -> Result<ForkchoiceUpdated, Error> {
        if let Some(attributes) = attributes {
            self.require_fork(
                ENGINE_FORKCHOICE_UPDATED_V4,
                attributes.timestamp,
                EngineFork::Amsterdam,
            )?;
        }
        let custody = custody_columns.map(|c| crate::serde_hex::encode(c.0.as_slice()));
        self.forkchoice_updated_call(
            ENGINE_FORKCHOICE_UPDATED_V4,
            (forkchoice_state, attributes, custody),
            forkchoice_state.head_block_hash,
        )
        .await
    }

    /// `engine_forkchoiceUpdated` of the era of `timestamp` (the attributes' timestamp when
    /// there are attributes, else the current slot's start): V4 with the attributes and custody
    /// columns at or after Amsterdam, else V3 with the attributes' V3 fields (slot number and
    /// target gas limit are Amsterdam fields and are dropped; so are the custody columns).
    pub async fn forkchoice_updated(
        &self,
        forkchoice_state: ForkchoiceState,
        attributes: Option<&PayloadAttributesV4>,
        custody_columns: Option<&ColumnIndices>,
        timestamp: u64,
    ) -> Result<ForkchoiceUpdated, Error> {
        let timestamp = attributes.map_or(timestamp, |a| a.timestamp);
        match self.engine_fork_at(timestamp) {
            EngineFork::Amsterdam => {
                self.forkchoice_updated_v4(forkchoice_state, attributes, custody_columns)
                    .await
            }
            EngineFork::Osaka => {
                let v3 = attributes.map(|a| PayloadAttributes {
                    timestamp: a.timestamp,
                    prev_randao: a.prev_randao,
                    suggested_fee_recipient: a.suggested_fee_recipient,
                    withdrawals: a.withdrawals.clone(),
                    parent_beacon_block_root: a.parent_beacon_block_root,
                });
                self.forkchoice_updated_v3(forkchoice_state, v3.as_ref())
                    .await
            }
        }
    }

    async fn forkchoice_updated_call<P: Serialize>(
        &self,
        method: &'static str,
        params: P,
        head_block_hash: Hash32,
    ) -> Result<ForkchoiceUpdated, Error> {
        let response: JsonForkchoiceUpdatedResponse = self
            .call_required(method, params, self.timeouts.forkchoice_updated)
            .await?;
        let payload_status =
            PayloadStatus::from_json(method, response.payload_status, Some(head_block_hash))?;
        self.state.set(payload_status.el_state());
        if response.payload_id.is_some() && payload_status != PayloadStatus::Valid {
            return Err(Error::InvalidResponse {
                method,
                reason: format!("a payload id with status {payload_status:?}"),
            });
        }
        Ok(ForkchoiceUpdated {
            payload_status,
            payload_id: response.payload_id,
        })
    }

    /// `engine_getPayloadV5`: the payload built under `payload_id`, with its blobs bundle (cell
    /// proofs) and requests.
    ///
    /// [spec]: osaka.md#engine_getpayloadv5
    pub async fn get_payload_v5<E: EthSpec>(
        &self,
        payload_id: PayloadId,
    ) -> Result<GetPayloadResponse<E>, Error> {
        let json: JsonGetPayloadV5Response<E> = self
            .call_required(
                ENGINE_GET_PAYLOAD_V5,
                (crate::serde_hex::encode(payload_id.as_slice()),),
                self.timeouts.get_payload,
            )
            .await?;
        // An engine that answers V5 with an Amsterdam payload has dropped its BAL and slot.
        self.require_fork(
            ENGINE_GET_PAYLOAD_V5,
            json.execution_payload.timestamp,
            EngineFork::Osaka,
        )?;
        GetPayloadResponse::from_json(json)
    }

    /// `engine_getPayloadV6`: the Amsterdam payload built under `payload_id` (with its block
    /// access list and slot number), its blobs bundle and its requests. A payload whose
    /// timestamp is before Amsterdam is refused ([`Error::WrongFork`]).
    ///
    /// [spec]: amsterdam.md#engine_getpayloadv6
    pub async fn get_payload_v6<E: EthSpec>(
        &self,
        payload_id: PayloadId,
    ) -> Result<GetPayloadV6Response<E>, Error> {
        let json: JsonGetPayloadV6Response<E> = self
            .call_required(
                ENGINE_GET_PAYLOAD_V6,
                (crate::serde_hex::encode(payload_id.as_slice()),),
                self.timeouts.get_payload,
            )
            .await?;
        self.require_fork(
            ENGINE_GET_PAYLOAD_V6,
            json.execution_payload.timestamp,
            EngineFork::Amsterdam,
        )?;
        GetPayloadV6Response::from_json(json)
    }

    /// `engine_getPayload` of the era of `timestamp` (the attributes' timestamp the build was
    /// started with): V6 at or after Amsterdam, else V5.
    pub async fn get_payload<E: EthSpec>(
        &self,
        payload_id: PayloadId,
        timestamp: u64,
    ) -> Result<BuiltPayload<E>, Error> {
        match self.engine_fork_at(timestamp) {
            EngineFork::Osaka => self
                .get_payload_v5(payload_id)
                .await
                .map(BuiltPayload::Osaka),
            EngineFork::Amsterdam => self
                .get_payload_v6(payload_id)
                .await
                .map(BuiltPayload::Amsterdam),
        }
    }

    /// `engine_newPayloadV5` for an envelope's payload (with its block access list and slot
    /// number), the bid's blob versioned hashes, the parent root and the requests: the
    /// `NewPayloadRequest` that `verify_execution_payload_envelope` returns. A payload before
    /// Amsterdam is refused ([`Error::WrongFork`]) without a call.
    ///
    /// [spec]: amsterdam.md#engine_newpayloadv5
    pub async fn new_payload_v5<E: EthSpec>(
        &self,
        request: &gloas::NewPayloadRequest<E>,
    ) -> Result<PayloadStatus, Error> {
        self.require_fork(
            ENGINE_NEW_PAYLOAD_V5,
            request.execution_payload.timestamp,
            EngineFork::Amsterdam,
        )?;
        let payload = JsonExecutionPayloadV4::from(request.execution_payload.clone());
        let hashes: Vec<VersionedHash> = request.versioned_hashes.to_vec();
        let requests = get_execution_requests_list_gloas(&request.execution_requests);
        let block_hash = request.execution_payload.block_hash;
        let status: JsonPayloadStatusV1 = self
            .call_required(
                ENGINE_NEW_PAYLOAD_V5,
                NewPayloadParams {
                    payload: &payload,
                    hashes: &hashes,
                    parent_beacon_block_root: request.parent_beacon_block_root,
                    requests: &requests,
                },
                self.timeouts.new_payload_v5,
            )
            .await?;
        let status = PayloadStatus::from_json(ENGINE_NEW_PAYLOAD_V5, status, Some(block_hash))?;
        self.state.set(status.el_state());
        Ok(status)
    }

    /// `engine_getPayloadBodiesByHashV2`: each block's transactions, withdrawals and block
    /// access list (`null` before Amsterdam or once pruned), `None` for an unknown block; one
    /// item per hash, in order.
    ///
    /// [spec]: amsterdam.md#engine_getpayloadbodiesbyhashv2
    pub async fn get_payload_bodies_by_hash_v2(
        &self,
        block_hashes: &[Hash32],
    ) -> Result<Vec<Option<ExecutionPayloadBodyV2>>, Error> {
        let method = ENGINE_GET_PAYLOAD_BODIES_BY_HASH_V2;
        if block_hashes.len() > MAX_PAYLOAD_BODIES_REQUEST {
            return Err(Error::Rpc {
                method,
                code: RpcErrorCode::TooLargeRequest,
                message: format!(
                    "{} block hashes (at most {MAX_PAYLOAD_BODIES_REQUEST}); not sent",
                    block_hashes.len()
                ),
            });
        }
        let hashes: Vec<String> = block_hashes
            .iter()
            .map(|h| crate::serde_hex::encode(h.as_slice()))
            .collect();
        let bodies: Vec<Option<ExecutionPayloadBodyV2>> = self
            .call_required(method, (hashes,), self.timeouts.get_payload_bodies)
            .await?;
        if bodies.len() != block_hashes.len() {
            return Err(Error::InvalidResponse {
                method,
                reason: format!(
                    "{} bodies for {} block hashes",
                    bodies.len(),
                    block_hashes.len()
                ),
            });
        }
        Ok(bodies)
    }

    /// `engine_getPayloadBodiesByRangeV2`: the bodies of the canonical blocks `start ..
    /// start + count` (fewer when the chain ends sooner), `None` for one the engine lacks.
    ///
    /// [spec]: amsterdam.md#engine_getpayloadbodiesbyrangev2
    pub async fn get_payload_bodies_by_range_v2(
        &self,
        start: u64,
        count: u64,
    ) -> Result<Vec<Option<ExecutionPayloadBodyV2>>, Error> {
        let method = ENGINE_GET_PAYLOAD_BODIES_BY_RANGE_V2;
        if count as usize > MAX_PAYLOAD_BODIES_REQUEST {
            return Err(Error::Rpc {
                method,
                code: RpcErrorCode::TooLargeRequest,
                message: format!("{count} blocks (at most {MAX_PAYLOAD_BODIES_REQUEST}); not sent"),
            });
        }
        let params = (
            crate::serde_hex::encode_quantity(start),
            crate::serde_hex::encode_quantity(count),
        );
        let bodies: Vec<Option<ExecutionPayloadBodyV2>> = self
            .call_required(method, params, self.timeouts.get_payload_bodies)
            .await?;
        if bodies.len() as u64 > count {
            return Err(Error::InvalidResponse {
                method,
                reason: format!("{} bodies for {count} blocks", bodies.len()),
            });
        }
        Ok(bodies)
    }

    /// `engine_getBlobsV4`: the cells at `indices` (and their proofs) of each blob, from the
    /// engine's pool. `None` when the engine cannot serve its pool (syncing); otherwise one item
    /// per hash, `None` for a blob it lacks, and within an item `None` for a missing cell.
    ///
    /// [spec]: amsterdam.md#engine_getblobsv4
    pub async fn get_blobs_v4(
        &self,
        versioned_hashes: &[VersionedHash],
        indices: &ColumnIndices,
    ) -> Result<Option<Vec<Option<BlobCellsAndProofsV1>>>, Error> {
        let method = ENGINE_GET_BLOBS_V4;
        if versioned_hashes.len() > MAX_GET_BLOBS_REQUEST {
            return Err(Error::Rpc {
                method,
                code: RpcErrorCode::TooLargeRequest,
                message: format!(
                    "{} versioned hashes (at most {MAX_GET_BLOBS_REQUEST}); not sent",
                    versioned_hashes.len()
                ),
            });
        }
        let hashes: Vec<String> = versioned_hashes
            .iter()
            .map(|h| crate::serde_hex::encode(h.as_slice()))
            .collect();
        let Some(items): Option<Vec<Option<BlobCellsAndProofsV1>>> = self
            .call(
                method,
                (hashes, crate::serde_hex::encode(indices.0.as_slice())),
                self.timeouts.get_blobs,
            )
            .await?
        else {
            return Ok(None);
        };
        let invalid = |reason: String| Error::InvalidResponse { method, reason };
        if items.len() != versioned_hashes.len() {
            return Err(invalid(format!(
                "{} items for {} versioned hashes",
                items.len(),
                versioned_hashes.len()
            )));
        }
        let wanted = indices.indices().len();
        for (position, item) in items.iter().enumerate() {
            let Some(item) = item else { continue };
            if item.blob_cells.len() != wanted || item.proofs.len() != wanted {
                return Err(invalid(format!(
                    "blob {position}: {} cells and {} proofs for {wanted} requested cells",
                    item.blob_cells.len(),
                    item.proofs.len()
                )));
            }
            for (cell, proof) in item.blob_cells.iter().zip(&item.proofs) {
                match (cell, proof) {
                    (Some(cell), Some(_)) if cell.len() == BYTES_PER_CELL => {}
                    (None, None) => {}
                    (Some(cell), Some(_)) => {
                        return Err(invalid(format!(
                            "blob {position}: a cell of {} bytes (expected {BYTES_PER_CELL})",
                            cell.len()
                        )));
                    }
                    (Some(_), None) | (None, Some(_)) => {
                        return Err(invalid(format!(
                            "blob {position}: a cell and its proof are not null together"
                        )));
                    }
                }
            }
        }
        Ok(Some(items))
    }

    /// `engine_getBlobsV2`: blobs and cell proofs from the engine's pool. `None` when the engine
    /// does not hold all of them (the whole result is `null`); a list that answers every hash
    /// in order otherwise.
    ///
    /// [spec]: osaka.md#engine_getblobsv2
    pub async fn get_blobs_v2<E: EthSpec>(
        &self,
        versioned_hashes: &[VersionedHash],
    ) -> Result<Option<Vec<BlobAndProof<E>>>, Error> {
        let method = ENGINE_GET_BLOBS_V2;
        if versioned_hashes.len() > MAX_GET_BLOBS_REQUEST {
            return Err(Error::Rpc {
                method,
                code: RpcErrorCode::TooLargeRequest,
                message: format!(
                    "{} versioned hashes (at most {MAX_GET_BLOBS_REQUEST}); not sent",
                    versioned_hashes.len()
                ),
            });
        }
        let hashes: Vec<String> = versioned_hashes
            .iter()
            .map(|h| crate::serde_hex::encode(h.as_slice()))
            .collect();
        let Some(items): Option<Vec<Option<BlobAndProof<E>>>> = self
            .call(method, (hashes,), self.timeouts.get_blobs)
            .await?
        else {
            return Ok(None);
        };
        let invalid = |reason: String| Error::InvalidResponse { method, reason };
        if items.len() != versioned_hashes.len() {
            return Err(invalid(format!(
                "{} items for {} versioned hashes",
                items.len(),
                versioned_hashes.len()
            )));
        }
        // Earlier wording allowed `null` items; treat a partial answer like a `null` result.
        let Some(items) = items.into_iter().collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        if let Some(bad) = items
            .iter()
            .position(|i| i.proofs.len() != CELLS_PER_EXT_BLOB)
        {
            return Err(invalid(format!(
                "blob {bad} has {} proofs (expected {CELLS_PER_EXT_BLOB})",
                items[bad].proofs.len()
            )));
        }
        Ok(Some(items))
    }

    /// `engine_getClientVersionV1`: tells the engine who we are, returns who it is.
    ///
    /// [spec]: identification.md#engine_getclientversionv1
    pub async fn get_client_version_v1(
        &self,
        ours: &ClientVersion,
    ) -> Result<Vec<ClientVersion>, Error> {
        self.call_required(
            ENGINE_GET_CLIENT_VERSION_V1,
            (ours,),
            self.timeouts.get_client_version,
        )
        .await
    }
}

/// `engine_newPayloadV4`'s / `V5`'s positional parameters, serialized without copying the
/// payload again.
struct NewPayloadParams<'a, P: Serialize> {
    payload: &'a P,
    hashes: &'a [VersionedHash],
    parent_beacon_block_root: Hash32,
    requests: &'a [Vec<u8>],
}

impl<P: Serialize> Serialize for NewPayloadParams<'_, P> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use crate::serde_hex::encode;
        use serde::ser::SerializeTuple;
        let mut t = s.serialize_tuple(4)?;
        t.serialize_element(self.payload)?;
        t.serialize_element(
            &self
                .hashes
                .iter()
                .map(|h| encode(h.as_slice()))
                .collect::<Vec<_>>(),
        )?;
        t.serialize_element(&encode(self.parent_beacon_block_root.as_slice()))?;
        t.serialize_element(&self.requests.iter().map(|r| encode(r)).collect::<Vec<_>>())?;
        t.end()
    }
}

fn rpc_error(method: &'static str, error: JsonRpcError) -> Error {
    Error::Rpc {
        method,
        code: RpcErrorCode::from_code(error.code),
        message: error.message,
    }
}

/// An error with its sources, which reqwest keeps the useful part in.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
