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
use types::{CellIndex, EthSpec, Hash32, PayloadId, U256, VersionedHash};

use crate::error::{Error, RpcErrorCode};
use crate::json_structures::{
    BlobAndProof, BlobsBundle, ClientVersion, ForkchoiceState, JsonExecutionPayloadV3,
    JsonForkchoiceUpdatedResponse, JsonGetPayloadV5Response, JsonPayloadStatusKind,
    JsonPayloadStatusV1, PayloadAttributes, execution_requests_from_list,
    get_execution_requests_list,
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

/// The methods this client calls, as offered in `engine_exchangeCapabilities`.
pub const CAPABILITIES: [&str; 6] = [
    ENGINE_EXCHANGE_CAPABILITIES,
    ENGINE_NEW_PAYLOAD_V4,
    ENGINE_FORKCHOICE_UPDATED_V3,
    ENGINE_GET_PAYLOAD_V5,
    ENGINE_GET_BLOBS_V2,
    ENGINE_GET_CLIENT_VERSION_V1,
];

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
            JsonPayloadStatusKind::Accepted if method == ENGINE_NEW_PAYLOAD_V4 => Self::Accepted,
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
        let response: JsonForkchoiceUpdatedResponse = self
            .call_required(
                ENGINE_FORKCHOICE_UPDATED_V3,
                (forkchoice_state, attributes),
                self.timeouts.forkchoice_updated,
            )
            .await?;
        let payload_status = PayloadStatus::from_json(
            ENGINE_FORKCHOICE_UPDATED_V3,
            response.payload_status,
            Some(forkchoice_state.head_block_hash),
        )?;
        self.state.set(payload_status.el_state());
        if response.payload_id.is_some() && payload_status != PayloadStatus::Valid {
            return Err(Error::InvalidResponse {
                method: ENGINE_FORKCHOICE_UPDATED_V3,
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
        GetPayloadResponse::from_json(json)
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

/// `engine_newPayloadV4`'s positional parameters, serialized without copying the payload again.
struct NewPayloadParams<'a, E: EthSpec> {
    payload: &'a JsonExecutionPayloadV3<E>,
    hashes: &'a [VersionedHash],
    parent_beacon_block_root: Hash32,
    requests: &'a [Vec<u8>],
}

impl<E: EthSpec> Serialize for NewPayloadParams<'_, E> {
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
