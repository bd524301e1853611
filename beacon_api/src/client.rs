//! `BeaconNodeHttpClient`: a typed async client of the Beacon API over reqwest.
//!
//! One method per endpoint, named after the spec's path (`get_validator_duties_proposer` for
//! `GET /eth/v1/validator/duties/proposer/{epoch}`) with the spec's `operationId` in its doc.
//! A non-2xx answer becomes [`ClientError::Api`] carrying the spec's error body; each request
//! runs under a timeout chosen by its kind ([`Timeouts`]).

mod gloas;

use std::collections::VecDeque;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Client, RequestBuilder, Response, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use ssz::{Decode, Encode};
use types::altair::{SignedContributionAndProof, SyncCommitteeContribution, SyncCommitteeMessage};
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::phase0::AttestationData;
use types::{
    BLSSignature, Bytes32, CommitteeIndex, Epoch, EthSpec, ForkName, LightClientBootstrap,
    LightClientFinalityUpdate, LightClientOptimisticUpdate, LightClientUpdate, Root,
    SignedBeaconBlock, Slot, ValidatorIndex,
};

use crate::api_error::ApiErrorBody;
use crate::beacon::{
    BlockHeaderData, BlockId, FinalityCheckpointsData, GenesisData, RootData, StateId,
    ValidatorData, ValidatorId, ValidatorStatusFilter, ValidatorsRequestBody,
};
use crate::block_contents::{BlockContents, SignedBlockContents};
use crate::envelope::{
    CONSENSUS_VERSION_HEADER, DutiesResponse, ExecutionOptimisticFinalizedResponse,
    ForkVersionedJson, ForkVersionedResponse, GenericResponse, to_json,
};
use crate::events::{BeaconEvent, EventError, EventTooLarge, EventTopic, SseFrame, SseParser};
use crate::negotiation::{JSON_MEDIA_TYPE, PREFER_SSZ_ACCEPT, SSZ_MEDIA_TYPE};
use crate::node::{
    ConfigSpec, DepositContractData, ForkSchedule, IdentityData, NodeHealth, PeerCountData,
    SyncingData, VersionData,
};
use crate::validator::{
    AttesterDuty, BeaconCommitteeSelection, BeaconCommitteeSubscription, BroadcastValidation,
    LivenessResponseData, MetadataHeaderError, ProduceBlockV3Metadata, ProposerDuty,
    ProposerPreparationData, SignedValidatorRegistrationV1, SyncCommitteeSelection,
    SyncCommitteeSubscription, SyncDutiesResponse,
};

/// What can go wrong with a request.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The base URL cannot carry API paths, or a path did not join onto it.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// Connecting, sending or reading failed, or the request ran past its timeout. The message
    /// carries the causes (refused connection, untrusted certificate, …), which reqwest's own
    /// message leaves out.
    #[error("request to {url} failed: {}", error_chain(source))]
    Transport {
        /// The URL requested.
        url: String,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The node answered with an error status and the spec's error body.
    #[error("{url} answered {status}: {}", body.message())]
    Api {
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: StatusCode,
        /// The error body.
        body: ApiErrorBody,
    },
    /// The node answered with an error status and a body that is not the spec's.
    #[error("{url} answered {status} with a body that is not an API error: {body:?}")]
    UnexpectedStatus {
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: StatusCode,
        /// The body, lossily decoded.
        body: String,
    },
    /// A JSON body did not decode as the expected type.
    #[error("{url}: invalid JSON response: {source}")]
    Json {
        /// The URL requested.
        url: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// An SSZ body did not decode as the expected type.
    #[error("{url}: invalid SSZ response: {reason}")]
    Ssz {
        /// The URL requested.
        url: String,
        /// The decoding error.
        reason: String,
    },
    /// A header the response must carry is absent or malformed.
    #[error("{url}: {source}")]
    Header {
        /// The URL requested.
        url: String,
        /// The header error.
        #[source]
        source: MetadataHeaderError,
    },
    /// The response body is larger than the client accepts for this kind of request.
    #[error("{url}: response body exceeds {limit} bytes")]
    BodyTooLarge {
        /// The URL requested.
        url: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// An event of the event stream did not decode.
    #[error("{url}: {source}")]
    Event {
        /// The URL of the stream.
        url: String,
        /// The decoding error.
        #[source]
        source: EventError,
    },
    /// The HTTP client could not be built (its resolver or runtime configuration).
    #[error("could not build the HTTP client: {}", error_chain(.0))]
    Build(#[source] reqwest::Error),
    /// A JSON request body could not be encoded.
    #[error("could not encode the request body: {0}")]
    Encode(#[source] serde_json::Error),
}

impl ClientError {
    /// The HTTP status of an error answer, if the node answered.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Api { status, .. } | Self::UnexpectedStatus { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// True if the request failed before any answer without running past its timeout: the
    /// connection was refused, reset or closed (a pooled keep-alive connection to a node that
    /// has since restarted, say). Sending it again on a fresh connection may succeed.
    pub fn is_connection_error(&self) -> bool {
        matches!(self, Self::Transport { source, .. }
            if !source.is_timeout() && (source.is_connect() || source.is_request()))
    }

    /// True if the request ran past its timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Transport { source, .. } if source.is_timeout())
    }
}

/// Per-kind request timeouts. Duties that must land within a slot get a fraction of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Everything not listed below.
    pub default: Duration,
    /// attestation_data, attestations, aggregates and sync committee messages (a third of a
    /// slot: the next duty starts then).
    pub attestation: Duration,
    /// Block production and publication.
    pub proposal: Duration,
    /// Duty lookups.
    pub duties: Duration,
    /// Whole-state and whole-block downloads (checkpoint sync).
    pub download: Duration,
}

impl Timeouts {
    /// Timeouts scaled to the duration of a slot (`SECONDS_PER_SLOT`).
    pub fn from_slot_duration(slot: Duration) -> Self {
        Self {
            default: slot,
            attestation: slot / 3,
            proposal: slot,
            duties: slot / 2,
            download: slot * 30,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Self::from_slot_duration(Duration::from_secs(12))
    }
}

/// Caps on response body sizes, so that a misbehaving node cannot make the client buffer
/// without bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// Every answer but whole-state and whole-block downloads. A Fulu block with its blobs is
    /// about 2 × 9 MiB in hex JSON at 72 blobs.
    pub default: usize,
    /// Whole-state and whole-block downloads (a mainnet state is a few hundred MiB).
    pub download: usize,
}

impl Default for BodyLimits {
    fn default() -> Self {
        Self {
            default: 64 << 20,
            download: 2 << 30,
        }
    }
}

/// How much of an error answer's body is kept (error bodies are short; the rest is dropped).
const ERROR_BODY_LIMIT: usize = 64 << 10;

/// What produceBlockV3 returned: a full block with its blobs, or a blinded one kept as the
/// bytes received (its data in the answer's encoding), to decode as a
/// [`crate::blinded::BlindedBeaconBlock`].
#[derive(Debug, Clone, PartialEq)]
pub enum ProducedBlock<E: EthSpec> {
    /// A block with its execution payload (and, from Deneb, blobs and proofs).
    Full(BlockContents<E>),
    /// A blinded block: the SSZ bytes, or the JSON of the `data` field.
    Blinded(Vec<u8>),
}

/// A typed client of one beacon node's Beacon API.
#[derive(Debug, Clone)]
pub struct BeaconNodeHttpClient {
    client: Client,
    base: Url,
    timeouts: Timeouts,
    limits: BodyLimits,
}

/// A reqwest client builder for requests to `base`: an https URL is checked against the system's
/// trusted roots (and the build fails, saying so, where the system has none); a plain http URL
/// does not load them, so a machine without CA certificates still reaches a local node.
pub fn client_builder(base: &Url) -> reqwest::ClientBuilder {
    let builder = Client::builder();
    if base.scheme() == "http" {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    }
}

/// `error` and each of its causes, joined by ": " (reqwest's own message names none of them).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        message.push_str(": ");
        message.push_str(&e.to_string());
        cause = e.source();
    }
    message
}

/// Which of the [`Timeouts`] a request runs under.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Default,
    Attestation,
    Proposal,
    Duties,
    Download,
}

impl BeaconNodeHttpClient {
    /// A client of the node at `base` (e.g. `http://127.0.0.1:5052`).
    pub fn new(base: Url, timeouts: Timeouts) -> Result<Self, ClientError> {
        if base.cannot_be_a_base() {
            return Err(ClientError::InvalidUrl {
                url: base.to_string(),
                reason: "cannot be a base URL".into(),
            });
        }
        // Connecting is bounded even for the event stream, which has no overall timeout.
        let client = client_builder(&base)
            .connect_timeout(timeouts.default)
            .build()
            .map_err(ClientError::Build)?;
        Ok(Self {
            client,
            base,
            timeouts,
            limits: BodyLimits::default(),
        })
    }

    /// The same client with other response body limits.
    pub fn with_body_limits(mut self, limits: BodyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A client of the node at `base`, parsed from a string.
    pub fn from_url_str(base: &str, timeouts: Timeouts) -> Result<Self, ClientError> {
        let url = Url::parse(base).map_err(|e| ClientError::InvalidUrl {
            url: base.to_string(),
            reason: e.to_string(),
        })?;
        Self::new(url, timeouts)
    }

    /// The node's base URL.
    pub fn base_url(&self) -> &Url {
        &self.base
    }

    fn timeout(&self, kind: Kind) -> Duration {
        match kind {
            Kind::Default => self.timeouts.default,
            Kind::Attestation => self.timeouts.attestation,
            Kind::Proposal => self.timeouts.proposal,
            Kind::Duties => self.timeouts.duties,
            Kind::Download => self.timeouts.download,
        }
    }

    /// The URL of `path` (segments joined under the base's path).
    fn url(&self, path: &[&str]) -> Result<Url, ClientError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ClientError::InvalidUrl {
                url: self.base.to_string(),
                reason: "cannot be a base URL".into(),
            })?
            .pop_if_empty()
            .extend(path);
        Ok(url)
    }

    /// Sends a request; a non-2xx answer becomes [`ClientError::Api`] (or `UnexpectedStatus`).
    async fn send(&self, url: &Url, request: RequestBuilder) -> Result<Response, ClientError> {
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Transport {
                url: url.to_string(),
                source,
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let bytes = match read_capped(response, ERROR_BODY_LIMIT).await {
            Ok(bytes) | Err(ReadError::TooLarge(bytes)) => bytes,
            Err(ReadError::Transport(source)) => {
                return Err(ClientError::Transport {
                    url: url.to_string(),
                    source,
                });
            }
        };
        Err(match serde_json::from_slice::<ApiErrorBody>(&bytes) {
            Ok(body) => ClientError::Api {
                url: url.to_string(),
                status,
                body,
            },
            Err(_) => ClientError::UnexpectedStatus {
                url: url.to_string(),
                status,
                body: String::from_utf8_lossy(&bytes).into_owned(),
            },
        })
    }

    /// Reads a success answer's body, refusing one over the limit for `kind`.
    async fn body(
        &self,
        url: &Url,
        response: Response,
        kind: Kind,
    ) -> Result<Vec<u8>, ClientError> {
        let limit = match kind {
            Kind::Download => self.limits.download,
            _ => self.limits.default,
        };
        read_capped(response, limit).await.map_err(|e| match e {
            ReadError::TooLarge(_) => ClientError::BodyTooLarge {
                url: url.to_string(),
                limit,
            },
            ReadError::Transport(source) => ClientError::Transport {
                url: url.to_string(),
                source,
            },
        })
    }

    fn decode_json<T: DeserializeOwned>(url: &Url, bytes: &[u8]) -> Result<T, ClientError> {
        serde_json::from_slice(bytes).map_err(|source| ClientError::Json {
            url: url.to_string(),
            source,
        })
    }

    async fn get_json<T: DeserializeOwned>(&self, url: Url, kind: Kind) -> Result<T, ClientError> {
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, JSON_MEDIA_TYPE)
            .timeout(self.timeout(kind));
        let response = self.send(&url, request).await?;
        let bytes = self.body(&url, response, kind).await?;
        Self::decode_json(&url, &bytes)
    }

    fn json_request(
        &self,
        url: &Url,
        body: Vec<u8>,
        kind: Kind,
        fork: Option<ForkName>,
    ) -> RequestBuilder {
        let mut request = self
            .client
            .post(url.clone())
            .header(ACCEPT, JSON_MEDIA_TYPE)
            .header(CONTENT_TYPE, JSON_MEDIA_TYPE)
            .timeout(self.timeout(kind))
            .body(body);
        if let Some(fork) = fork {
            request = request.header(CONSENSUS_VERSION_HEADER, fork.as_str());
        }
        request
    }

    async fn post_json<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        url: Url,
        body: &B,
        kind: Kind,
    ) -> Result<T, ClientError> {
        let body = serde_json::to_vec(body).map_err(ClientError::Encode)?;
        let response = self
            .send(&url, self.json_request(&url, body, kind, None))
            .await?;
        let bytes = self.body(&url, response, kind).await?;
        Self::decode_json(&url, &bytes)
    }

    /// POSTs a JSON body whose answer carries no data (200 with an empty or ignored body).
    async fn post_json_no_content(
        &self,
        url: Url,
        body: Vec<u8>,
        kind: Kind,
        fork: Option<ForkName>,
    ) -> Result<(), ClientError> {
        self.send(&url, self.json_request(&url, body, kind, fork))
            .await
            .map(drop)
    }

    fn fork_from_headers(url: &Url, headers: &HeaderMap) -> Result<ForkName, ClientError> {
        let header_error = |source| ClientError::Header {
            url: url.to_string(),
            source,
        };
        let value = headers.get(CONSENSUS_VERSION_HEADER).ok_or(header_error(
            MetadataHeaderError::Missing(CONSENSUS_VERSION_HEADER),
        ))?;
        value
            .to_str()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                header_error(MetadataHeaderError::Invalid {
                    name: CONSENSUS_VERSION_HEADER,
                    value: String::from_utf8_lossy(value.as_bytes()).into_owned(),
                })
            })
    }

    fn is_ssz(headers: &HeaderMap) -> bool {
        headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(SSZ_MEDIA_TYPE))
    }

    /// GETs an SSZ answer: its headers and bytes. A node that answers JSON instead (it may,
    /// where SSZ is optional) is an error here; use the JSON method.
    async fn get_ssz(&self, url: &Url, kind: Kind) -> Result<(HeaderMap, Vec<u8>), ClientError> {
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, SSZ_MEDIA_TYPE)
            .timeout(self.timeout(kind));
        let response = self.send(url, request).await?;
        let headers = response.headers().clone();
        if !Self::is_ssz(&headers) {
            return Err(ClientError::Ssz {
                url: url.to_string(),
                reason: format!(
                    "expected {SSZ_MEDIA_TYPE}, got {:?}",
                    headers.get(CONTENT_TYPE)
                ),
            });
        }
        Ok((headers, self.body(url, response, kind).await?))
    }

    /// POSTs an SSZ body with its fork in `Eth-Consensus-Version`.
    async fn post_ssz(
        &self,
        url: &Url,
        body: Vec<u8>,
        kind: Kind,
        fork: ForkName,
    ) -> Result<(), ClientError> {
        let request = self
            .client
            .post(url.clone())
            .header(ACCEPT, JSON_MEDIA_TYPE)
            .header(CONTENT_TYPE, SSZ_MEDIA_TYPE)
            .header(CONSENSUS_VERSION_HEADER, fork.as_str())
            .timeout(self.timeout(kind))
            .body(body);
        self.send(url, request).await.map(drop)
    }

    fn ssz_error(url: &Url, error: ssz::DecodeError) -> ClientError {
        ClientError::Ssz {
            url: url.to_string(),
            reason: format!("{error:?}"),
        }
    }

    // ---- beacon ----

    /// `getGenesis`: `GET /eth/v1/beacon/genesis`.
    pub async fn get_beacon_genesis(&self) -> Result<GenericResponse<GenesisData>, ClientError> {
        self.get_json(
            self.url(&["eth", "v1", "beacon", "genesis"])?,
            Kind::Default,
        )
        .await
    }

    /// `getStateValidators`: `GET /eth/v1/beacon/states/{state_id}/validators`; empty `ids` or
    /// `statuses` mean no filter on that attribute.
    pub async fn get_beacon_states_validators(
        &self,
        state_id: StateId,
        ids: &[ValidatorId],
        statuses: &[ValidatorStatusFilter],
    ) -> Result<ExecutionOptimisticFinalizedResponse<Vec<ValidatorData>>, ClientError> {
        let state = state_id.to_string();
        let mut url = self.url(&["eth", "v1", "beacon", "states", &state, "validators"])?;
        if !ids.is_empty() {
            let joined: Vec<String> = ids.iter().map(ToString::to_string).collect();
            url.query_pairs_mut().append_pair("id", &joined.join(","));
        }
        if !statuses.is_empty() {
            let joined: Vec<String> = statuses.iter().map(ToString::to_string).collect();
            url.query_pairs_mut()
                .append_pair("status", &joined.join(","));
        }
        self.get_json(url, Kind::Duties).await
    }

    /// `postStateValidators`: `POST /eth/v1/beacon/states/{state_id}/validators`.
    pub async fn post_beacon_states_validators(
        &self,
        state_id: StateId,
        body: &ValidatorsRequestBody,
    ) -> Result<ExecutionOptimisticFinalizedResponse<Vec<ValidatorData>>, ClientError> {
        let state = state_id.to_string();
        let url = self.url(&["eth", "v1", "beacon", "states", &state, "validators"])?;
        self.post_json(url, body, Kind::Duties).await
    }

    /// `getStateFinalityCheckpoints`: `GET /eth/v1/beacon/states/{state_id}/finality_checkpoints`.
    pub async fn get_beacon_states_finality_checkpoints(
        &self,
        state_id: StateId,
    ) -> Result<ExecutionOptimisticFinalizedResponse<FinalityCheckpointsData>, ClientError> {
        let state = state_id.to_string();
        let url = self.url(&[
            "eth",
            "v1",
            "beacon",
            "states",
            &state,
            "finality_checkpoints",
        ])?;
        self.get_json(url, Kind::Default).await
    }

    /// `getBlockRoot`: `GET /eth/v1/beacon/blocks/{block_id}/root`.
    pub async fn get_beacon_blocks_root(
        &self,
        block_id: BlockId,
    ) -> Result<ExecutionOptimisticFinalizedResponse<RootData>, ClientError> {
        let block = block_id.to_string();
        let url = self.url(&["eth", "v1", "beacon", "blocks", &block, "root"])?;
        self.get_json(url, Kind::Default).await
    }

    /// `getBlockHeader`: `GET /eth/v1/beacon/headers/{block_id}`.
    pub async fn get_beacon_headers_block_id(
        &self,
        block_id: BlockId,
    ) -> Result<ExecutionOptimisticFinalizedResponse<BlockHeaderData>, ClientError> {
        let block = block_id.to_string();
        let url = self.url(&["eth", "v1", "beacon", "headers", &block])?;
        self.get_json(url, Kind::Default).await
    }

    /// `getBlockV2` in SSZ: `GET /eth/v2/beacon/blocks/{block_id}`, decoded by the
    /// `Eth-Consensus-Version` header. `None` if the node has no such block (404).
    pub async fn get_beacon_blocks_ssz<E: EthSpec>(
        &self,
        block_id: BlockId,
    ) -> Result<Option<SignedBeaconBlock<E>>, ClientError> {
        let block = block_id.to_string();
        let url = self.url(&["eth", "v2", "beacon", "blocks", &block])?;
        let (headers, bytes) = match self.get_ssz(&url, Kind::Download).await {
            Err(e) if e.status() == Some(StatusCode::NOT_FOUND) => return Ok(None),
            other => other?,
        };
        let fork = Self::fork_from_headers(&url, &headers)?;
        SignedBeaconBlock::from_ssz_bytes_by_fork(&bytes, fork)
            .map(Some)
            .map_err(|e| Self::ssz_error(&url, e))
    }

    /// `getStateV2` in SSZ: `GET /eth/v2/debug/beacon/states/{state_id}`: the fork and the
    /// state's SSZ bytes as served (decode with `types::BeaconState::from_ssz_bytes_by_fork`).
    /// `None` if the node has no such state (404).
    pub async fn get_debug_beacon_states_ssz(
        &self,
        state_id: StateId,
    ) -> Result<Option<(ForkName, Vec<u8>)>, ClientError> {
        let state = state_id.to_string();
        let url = self.url(&["eth", "v2", "debug", "beacon", "states", &state])?;
        let (headers, bytes) = match self.get_ssz(&url, Kind::Download).await {
            Err(e) if e.status() == Some(StatusCode::NOT_FOUND) => return Ok(None),
            other => other?,
        };
        Ok(Some((Self::fork_from_headers(&url, &headers)?, bytes)))
    }

    /// GETs a fork-versioned JSON answer; `None` on 404 (the light-client endpoints' "not
    /// available").
    async fn get_versioned_or_404<T: ForkVersionedJson>(
        &self,
        url: Url,
    ) -> Result<Option<ForkVersionedResponse<T>>, ClientError> {
        match self.get_json(url, Kind::Default).await {
            Err(e) if e.status() == Some(StatusCode::NOT_FOUND) => Ok(None),
            other => other.map(Some),
        }
    }

    /// `getLightClientBootstrap`: `GET /eth/v1/beacon/light_client/bootstrap/{block_root}` in
    /// JSON. `None` if the node has no bootstrap for that block (404).
    pub async fn get_beacon_light_client_bootstrap<E: EthSpec>(
        &self,
        block_root: Root,
    ) -> Result<Option<ForkVersionedResponse<LightClientBootstrap<E>>>, ClientError> {
        let root = block_root.to_string();
        let url = self.url(&["eth", "v1", "beacon", "light_client", "bootstrap", &root])?;
        self.get_versioned_or_404(url).await
    }

    /// `getLightClientUpdatesByRange`: `GET
    /// /eth/v1/beacon/light_client/updates?start_period&count` in JSON: the best update of each
    /// sync committee period the node has, from `start_period`, each with its fork.
    pub async fn get_beacon_light_client_updates<E: EthSpec>(
        &self,
        start_period: u64,
        count: u64,
    ) -> Result<Vec<ForkVersionedResponse<LightClientUpdate<E>>>, ClientError> {
        let mut url = self.url(&["eth", "v1", "beacon", "light_client", "updates"])?;
        url.query_pairs_mut()
            .append_pair("start_period", &start_period.to_string())
            .append_pair("count", &count.to_string());
        self.get_json(url, Kind::Default).await
    }

    /// `getLightClientFinalityUpdate`: `GET /eth/v1/beacon/light_client/finality_update` in
    /// JSON. `None` if the node has none yet (404).
    pub async fn get_beacon_light_client_finality_update<E: EthSpec>(
        &self,
    ) -> Result<Option<ForkVersionedResponse<LightClientFinalityUpdate<E>>>, ClientError> {
        let url = self.url(&["eth", "v1", "beacon", "light_client", "finality_update"])?;
        self.get_versioned_or_404(url).await
    }

    /// `getLightClientOptimisticUpdate`: `GET /eth/v1/beacon/light_client/optimistic_update` in
    /// JSON. `None` if the node has none yet (404).
    pub async fn get_beacon_light_client_optimistic_update<E: EthSpec>(
        &self,
    ) -> Result<Option<ForkVersionedResponse<LightClientOptimisticUpdate<E>>>, ClientError> {
        let url = self.url(&["eth", "v1", "beacon", "light_client", "optimistic_update"])?;
        self.get_versioned_or_404(url).await
    }

    /// `publishBlockV2` in JSON: `POST /eth/v2/beacon/blocks?broadcast_validation=...`.
    pub async fn post_beacon_blocks_v2<E: EthSpec>(
        &self,
        contents: &SignedBlockContents<E>,
        broadcast_validation: BroadcastValidation,
    ) -> Result<(), ClientError> {
        let url = self.publish_url(broadcast_validation)?;
        let body = to_json(contents).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Proposal, Some(contents.fork_name()))
            .await
    }

    /// `publishBlockV2` in SSZ (`Content-Type: application/octet-stream`).
    pub async fn post_beacon_blocks_v2_ssz<E: EthSpec>(
        &self,
        contents: &SignedBlockContents<E>,
        broadcast_validation: BroadcastValidation,
    ) -> Result<(), ClientError> {
        let url = self.publish_url(broadcast_validation)?;
        self.post_ssz(
            &url,
            contents.as_ssz_bytes(),
            Kind::Proposal,
            contents.fork_name(),
        )
        .await
    }

    /// `publishBlindedBlockV2` in SSZ: `block` is the SSZ of a
    /// [`crate::blinded::SignedBlindedBeaconBlock`] of `fork`.
    pub async fn post_beacon_blinded_blocks_v2_ssz(
        &self,
        fork: ForkName,
        block: Vec<u8>,
        broadcast_validation: BroadcastValidation,
    ) -> Result<(), ClientError> {
        let mut url = self.url(&["eth", "v2", "beacon", "blinded_blocks"])?;
        url.query_pairs_mut()
            .append_pair("broadcast_validation", broadcast_validation.as_str());
        self.post_ssz(&url, block, Kind::Proposal, fork).await
    }

    fn publish_url(&self, broadcast_validation: BroadcastValidation) -> Result<Url, ClientError> {
        let mut url = self.url(&["eth", "v2", "beacon", "blocks"])?;
        url.query_pairs_mut()
            .append_pair("broadcast_validation", broadcast_validation.as_str());
        Ok(url)
    }

    /// `submitPoolAttestationsV2`: `POST /eth/v2/beacon/pool/attestations` (Electra and later:
    /// `SingleAttestation`s). Partial failure is an [`ClientError::Api`] with the indexed body.
    pub async fn post_beacon_pool_attestations_v2(
        &self,
        fork: ForkName,
        attestations: &[SingleAttestation],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v2", "beacon", "pool", "attestations"])?;
        let body = serde_json::to_vec(attestations).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Attestation, Some(fork))
            .await
    }

    /// `submitPoolAttestationsV2` in SSZ: the body is `List[SingleAttestation, ...]`.
    pub async fn post_beacon_pool_attestations_v2_ssz(
        &self,
        fork: ForkName,
        attestations: &[SingleAttestation],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v2", "beacon", "pool", "attestations"])?;
        // ethereum_ssz encodes lists from a `Vec`; the copy is small beside the request.
        self.post_ssz(
            &url,
            attestations.to_vec().as_ssz_bytes(),
            Kind::Attestation,
            fork,
        )
        .await
    }

    /// `submitPoolSyncCommitteeSignatures`: `POST /eth/v1/beacon/pool/sync_committees`.
    pub async fn post_beacon_pool_sync_committees(
        &self,
        messages: &[SyncCommitteeMessage],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "beacon", "pool", "sync_committees"])?;
        let body = serde_json::to_vec(messages).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Attestation, None)
            .await
    }

    // ---- events ----

    /// `eventstream`: `GET /eth/v1/events?topics=...`, an open stream of events. The stream has
    /// no timeout of its own (it lives as long as the node keeps it open); bound each
    /// [`EventStream::next_event`] by the caller's clock.
    pub async fn get_events(&self, topics: &[EventTopic]) -> Result<EventStream, ClientError> {
        let mut url = self.url(&["eth", "v1", "events"])?;
        let names: Vec<&str> = topics.iter().map(|t| t.as_str()).collect();
        url.query_pairs_mut()
            .append_pair("topics", &names.join(","));
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, EVENT_STREAM_MEDIA_TYPE);
        let response = self.send(&url, request).await?;
        Ok(EventStream {
            url: url.to_string(),
            response,
            parser: SseParser::new(self.limits.default),
            ready: VecDeque::new(),
        })
    }

    // ---- config ----

    /// `getDepositContract`: `GET /eth/v1/config/deposit_contract`.
    pub async fn get_config_deposit_contract(
        &self,
    ) -> Result<GenericResponse<DepositContractData>, ClientError> {
        self.get_json(
            self.url(&["eth", "v1", "config", "deposit_contract"])?,
            Kind::Default,
        )
        .await
    }

    /// `getSpec`: `GET /eth/v1/config/spec`.
    pub async fn get_config_spec(&self) -> Result<GenericResponse<ConfigSpec>, ClientError> {
        self.get_json(self.url(&["eth", "v1", "config", "spec"])?, Kind::Default)
            .await
    }

    /// `getForkSchedule`: `GET /eth/v1/config/fork_schedule`.
    pub async fn get_config_fork_schedule(
        &self,
    ) -> Result<GenericResponse<ForkSchedule>, ClientError> {
        self.get_json(
            self.url(&["eth", "v1", "config", "fork_schedule"])?,
            Kind::Default,
        )
        .await
    }

    // ---- node ----

    /// `getPeerCount`: `GET /eth/v1/node/peer_count`.
    pub async fn get_node_peer_count(&self) -> Result<GenericResponse<PeerCountData>, ClientError> {
        self.get_json(
            self.url(&["eth", "v1", "node", "peer_count"])?,
            Kind::Default,
        )
        .await
    }

    /// `getSyncingStatus`: `GET /eth/v1/node/syncing`.
    pub async fn get_node_syncing(&self) -> Result<GenericResponse<SyncingData>, ClientError> {
        self.get_json(self.url(&["eth", "v1", "node", "syncing"])?, Kind::Default)
            .await
    }

    /// `getNodeVersion`: `GET /eth/v1/node/version`.
    pub async fn get_node_version(&self) -> Result<GenericResponse<VersionData>, ClientError> {
        self.get_json(self.url(&["eth", "v1", "node", "version"])?, Kind::Default)
            .await
    }

    /// `getNetworkIdentity`: `GET /eth/v1/node/identity`.
    pub async fn get_node_identity(&self) -> Result<GenericResponse<IdentityData>, ClientError> {
        self.get_json(self.url(&["eth", "v1", "node", "identity"])?, Kind::Default)
            .await
    }

    /// `getHealth`: `GET /eth/v1/node/health`; `syncing_status` is the code the node should
    /// answer with while syncing (206 if `None`). The answer is in the status code; 503 is
    /// [`NodeHealth::NotReady`], not an error.
    pub async fn get_node_health(
        &self,
        syncing_status: Option<u16>,
    ) -> Result<NodeHealth, ClientError> {
        let mut url = self.url(&["eth", "v1", "node", "health"])?;
        if let Some(code) = syncing_status {
            url.query_pairs_mut()
                .append_pair("syncing_status", &code.to_string());
        }
        let request = self
            .client
            .get(url.clone())
            .timeout(self.timeout(Kind::Default));
        let status = match self.send(&url, request).await {
            Ok(response) => response.status(),
            Err(e) => match e.status() {
                Some(status) => status,
                None => return Err(e),
            },
        };
        NodeHealth::from_status(status.as_u16(), syncing_status.unwrap_or(206)).ok_or(
            ClientError::UnexpectedStatus {
                url: url.to_string(),
                status,
                body: String::new(),
            },
        )
    }

    // ---- validator ----

    /// `getAttesterDuties`: `POST /eth/v1/validator/duties/attester/{epoch}`.
    pub async fn post_validator_duties_attester(
        &self,
        epoch: Epoch,
        indices: &[ValidatorIndex],
    ) -> Result<DutiesResponse<Vec<AttesterDuty>>, ClientError> {
        let epoch = epoch.to_string();
        let url = self.url(&["eth", "v1", "validator", "duties", "attester", &epoch])?;
        self.post_json(url, &Quoted(indices), Kind::Duties).await
    }

    /// `getProposerDuties`: `GET /eth/v1/validator/duties/proposer/{epoch}`.
    pub async fn get_validator_duties_proposer(
        &self,
        epoch: Epoch,
    ) -> Result<DutiesResponse<Vec<ProposerDuty>>, ClientError> {
        let epoch = epoch.to_string();
        let url = self.url(&["eth", "v1", "validator", "duties", "proposer", &epoch])?;
        self.get_json(url, Kind::Duties).await
    }

    /// `getSyncCommitteeDuties`: `POST /eth/v1/validator/duties/sync/{epoch}`.
    pub async fn post_validator_duties_sync(
        &self,
        epoch: Epoch,
        indices: &[ValidatorIndex],
    ) -> Result<SyncDutiesResponse, ClientError> {
        let epoch = epoch.to_string();
        let url = self.url(&["eth", "v1", "validator", "duties", "sync", &epoch])?;
        self.post_json(url, &Quoted(indices), Kind::Duties).await
    }

    fn block_v3_url(
        &self,
        slot: Slot,
        randao_reveal: &BLSSignature,
        graffiti: Option<&Bytes32>,
        builder_boost_factor: Option<u64>,
        skip_randao_verification: bool,
    ) -> Result<Url, ClientError> {
        let slot = slot.to_string();
        let mut url = self.url(&["eth", "v3", "validator", "blocks", &slot])?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("randao_reveal", &randao_reveal.to_string());
            if let Some(graffiti) = graffiti {
                query.append_pair("graffiti", &graffiti.to_string());
            }
            if let Some(factor) = builder_boost_factor {
                query.append_pair("builder_boost_factor", &factor.to_string());
            }
            if skip_randao_verification {
                query.append_key_only("skip_randao_verification");
            }
        }
        Ok(url)
    }

    /// `produceBlockV3`: `GET /eth/v3/validator/blocks/{slot}`, asking for SSZ (and reading
    /// JSON if the node answers with it). The metadata comes from the response headers.
    pub async fn get_validator_blocks_v3<E: EthSpec>(
        &self,
        slot: Slot,
        randao_reveal: &BLSSignature,
        graffiti: Option<&Bytes32>,
        builder_boost_factor: Option<u64>,
        skip_randao_verification: bool,
    ) -> Result<(ProduceBlockV3Metadata, ProducedBlock<E>), ClientError> {
        let url = self.block_v3_url(
            slot,
            randao_reveal,
            graffiti,
            builder_boost_factor,
            skip_randao_verification,
        )?;
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, PREFER_SSZ_ACCEPT)
            .timeout(self.timeout(Kind::Proposal));
        let response = self.send(&url, request).await?;
        let headers = response.headers().clone();
        let metadata =
            ProduceBlockV3Metadata::from_headers(|name| headers.get(name)?.to_str().ok()).map_err(
                |source| ClientError::Header {
                    url: url.to_string(),
                    source,
                },
            )?;
        let bytes = self.body(&url, response, Kind::Proposal).await?;
        let fork = metadata.consensus_version;
        let block = if Self::is_ssz(&headers) {
            if metadata.execution_payload_blinded {
                ProducedBlock::Blinded(bytes)
            } else {
                let contents =
                    BlockContents::from_ssz_bytes_by_fork(&bytes, fork).map_err(|e| {
                        ClientError::Ssz {
                            url: url.to_string(),
                            reason: format!("{e:?}"),
                        }
                    })?;
                ProducedBlock::Full(contents)
            }
        } else {
            #[derive(serde::Deserialize)]
            struct Body {
                data: serde_json::Value,
            }
            let body: Body = Self::decode_json(&url, &bytes)?;
            if metadata.execution_payload_blinded {
                ProducedBlock::Blinded(body.data.to_string().into_bytes())
            } else {
                let contents =
                    BlockContents::deserialize_by_fork(body.data, fork).map_err(|source| {
                        ClientError::Json {
                            url: url.to_string(),
                            source,
                        }
                    })?;
                ProducedBlock::Full(contents)
            }
        };
        Ok((metadata, block))
    }

    /// `produceAttestationData`: `GET /eth/v1/validator/attestation_data`.
    pub async fn get_validator_attestation_data(
        &self,
        slot: Slot,
        committee_index: CommitteeIndex,
    ) -> Result<GenericResponse<AttestationData>, ClientError> {
        let mut url = self.url(&["eth", "v1", "validator", "attestation_data"])?;
        url.query_pairs_mut()
            .append_pair("slot", &slot.to_string())
            .append_pair("committee_index", &committee_index.to_string());
        self.get_json(url, Kind::Attestation).await
    }

    /// `getAggregatedAttestationV2`: `GET /eth/v2/validator/aggregate_attestation`.
    pub async fn get_validator_aggregate_attestation_v2<E: EthSpec>(
        &self,
        slot: Slot,
        attestation_data_root: Root,
        committee_index: CommitteeIndex,
    ) -> Result<ForkVersionedResponse<types::Attestation<E>>, ClientError> {
        let mut url = self.url(&["eth", "v2", "validator", "aggregate_attestation"])?;
        url.query_pairs_mut()
            .append_pair("attestation_data_root", &attestation_data_root.to_string())
            .append_pair("slot", &slot.to_string())
            .append_pair("committee_index", &committee_index.to_string());
        self.get_json(url, Kind::Attestation).await
    }

    /// `produceAttestationData` in SSZ.
    pub async fn get_validator_attestation_data_ssz(
        &self,
        slot: Slot,
        committee_index: CommitteeIndex,
    ) -> Result<AttestationData, ClientError> {
        let mut url = self.url(&["eth", "v1", "validator", "attestation_data"])?;
        url.query_pairs_mut()
            .append_pair("slot", &slot.to_string())
            .append_pair("committee_index", &committee_index.to_string());
        let (_, bytes) = self.get_ssz(&url, Kind::Attestation).await?;
        AttestationData::from_ssz_bytes(&bytes).map_err(|e| Self::ssz_error(&url, e))
    }

    /// `getAggregatedAttestationV2` in SSZ, decoded by `Eth-Consensus-Version`.
    pub async fn get_validator_aggregate_attestation_v2_ssz<E: EthSpec>(
        &self,
        slot: Slot,
        attestation_data_root: Root,
        committee_index: CommitteeIndex,
    ) -> Result<types::Attestation<E>, ClientError> {
        let mut url = self.url(&["eth", "v2", "validator", "aggregate_attestation"])?;
        url.query_pairs_mut()
            .append_pair("attestation_data_root", &attestation_data_root.to_string())
            .append_pair("slot", &slot.to_string())
            .append_pair("committee_index", &committee_index.to_string());
        let (headers, bytes) = self.get_ssz(&url, Kind::Attestation).await?;
        let fork = Self::fork_from_headers(&url, &headers)?;
        types::Attestation::from_ssz_bytes_by_fork(&bytes, fork)
            .map_err(|e| Self::ssz_error(&url, e))
    }

    /// `publishAggregateAndProofsV2`: `POST /eth/v2/validator/aggregate_and_proofs`
    /// (Electra and later).
    pub async fn post_validator_aggregate_and_proofs_v2<E: EthSpec>(
        &self,
        fork: ForkName,
        aggregates: &[SignedAggregateAndProof<E>],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v2", "validator", "aggregate_and_proofs"])?;
        let body = serde_json::to_vec(aggregates).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Attestation, Some(fork))
            .await
    }

    /// `publishAggregateAndProofsV2` in SSZ: the body is `List[SignedAggregateAndProof, ...]`.
    pub async fn post_validator_aggregate_and_proofs_v2_ssz<E: EthSpec>(
        &self,
        fork: ForkName,
        aggregates: &[SignedAggregateAndProof<E>],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v2", "validator", "aggregate_and_proofs"])?;
        self.post_ssz(
            &url,
            aggregates.to_vec().as_ssz_bytes(),
            Kind::Attestation,
            fork,
        )
        .await
    }

    /// `produceSyncCommitteeContribution`: `GET /eth/v1/validator/sync_committee_contribution`.
    pub async fn get_validator_sync_committee_contribution<E: EthSpec>(
        &self,
        slot: Slot,
        subcommittee_index: u64,
        beacon_block_root: Root,
    ) -> Result<GenericResponse<SyncCommitteeContribution<E>>, ClientError> {
        let mut url = self.url(&["eth", "v1", "validator", "sync_committee_contribution"])?;
        url.query_pairs_mut()
            .append_pair("slot", &slot.to_string())
            .append_pair("subcommittee_index", &subcommittee_index.to_string())
            .append_pair("beacon_block_root", &beacon_block_root.to_string());
        self.get_json(url, Kind::Attestation).await
    }

    /// `publishContributionAndProofs`: `POST /eth/v1/validator/contribution_and_proofs`.
    pub async fn post_validator_contribution_and_proofs<E: EthSpec>(
        &self,
        contributions: &[SignedContributionAndProof<E>],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "validator", "contribution_and_proofs"])?;
        let body = serde_json::to_vec(contributions).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Attestation, None)
            .await
    }

    /// `prepareBeaconCommitteeSubnet`: `POST /eth/v1/validator/beacon_committee_subscriptions`.
    pub async fn post_validator_beacon_committee_subscriptions(
        &self,
        subscriptions: &[BeaconCommitteeSubscription],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "validator", "beacon_committee_subscriptions"])?;
        let body = serde_json::to_vec(subscriptions).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Default, None)
            .await
    }

    /// `prepareSyncCommitteeSubnets`: `POST /eth/v1/validator/sync_committee_subscriptions`.
    pub async fn post_validator_sync_committee_subscriptions(
        &self,
        subscriptions: &[SyncCommitteeSubscription],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "validator", "sync_committee_subscriptions"])?;
        let body = serde_json::to_vec(subscriptions).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Default, None)
            .await
    }

    /// `prepareBeaconProposer`: `POST /eth/v1/validator/prepare_beacon_proposer`.
    pub async fn post_validator_prepare_beacon_proposer(
        &self,
        preparations: &[ProposerPreparationData],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "validator", "prepare_beacon_proposer"])?;
        let body = serde_json::to_vec(preparations).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Default, None)
            .await
    }

    /// `registerValidator`: `POST /eth/v1/validator/register_validator`.
    pub async fn post_validator_register_validator(
        &self,
        registrations: &[SignedValidatorRegistrationV1],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "validator", "register_validator"])?;
        let body = serde_json::to_vec(registrations).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Default, None)
            .await
    }

    /// `submitBeaconCommitteeSelections` (DVT): `POST /eth/v1/validator/beacon_committee_selections`;
    /// the answer carries the combined selection proofs.
    pub async fn post_validator_beacon_committee_selections(
        &self,
        selections: &[BeaconCommitteeSelection],
    ) -> Result<GenericResponse<Vec<BeaconCommitteeSelection>>, ClientError> {
        let url = self.url(&["eth", "v1", "validator", "beacon_committee_selections"])?;
        self.post_json(url, selections, Kind::Attestation).await
    }

    /// `submitSyncCommitteeSelections` (DVT): `POST /eth/v1/validator/sync_committee_selections`.
    pub async fn post_validator_sync_committee_selections(
        &self,
        selections: &[SyncCommitteeSelection],
    ) -> Result<GenericResponse<Vec<SyncCommitteeSelection>>, ClientError> {
        let url = self.url(&["eth", "v1", "validator", "sync_committee_selections"])?;
        self.post_json(url, selections, Kind::Attestation).await
    }

    /// `getLiveness`: `POST /eth/v1/validator/liveness/{epoch}`.
    pub async fn post_validator_liveness(
        &self,
        epoch: Epoch,
        indices: &[ValidatorIndex],
    ) -> Result<GenericResponse<Vec<LivenessResponseData>>, ClientError> {
        let epoch = epoch.to_string();
        let url = self.url(&["eth", "v1", "validator", "liveness", &epoch])?;
        self.post_json(url, &Quoted(indices), Kind::Duties).await
    }
}

/// `text/event-stream`.
const EVENT_STREAM_MEDIA_TYPE: &str = "text/event-stream";

/// An open `/eth/v1/events` stream.
#[derive(Debug)]
pub struct EventStream {
    url: String,
    response: Response,
    parser: SseParser,
    ready: VecDeque<SseFrame>,
}

impl EventStream {
    /// The next event, `None` once the node closes the stream. A frame that does not decode is
    /// an [`ClientError::Event`] and the stream goes on.
    pub async fn next_event<E: EthSpec>(&mut self) -> Option<Result<BeaconEvent<E>, ClientError>> {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                return Some(
                    BeaconEvent::decode(&frame.event, &frame.data).map_err(|source| {
                        ClientError::Event {
                            url: self.url.clone(),
                            source,
                        }
                    }),
                );
            }
            let chunk = match self.response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return None,
                Err(source) => {
                    return Some(Err(ClientError::Transport {
                        url: self.url.clone(),
                        source,
                    }));
                }
            };
            match self.parser.feed(&chunk) {
                Ok(frames) => self.ready.extend(frames),
                Err(EventTooLarge(limit)) => {
                    return Some(Err(ClientError::BodyTooLarge {
                        url: self.url.clone(),
                        limit,
                    }));
                }
            }
        }
    }
}

/// Why a body could not be read whole.
enum ReadError {
    /// Longer than the limit; what was read up to it.
    TooLarge(Vec<u8>),
    /// The connection failed.
    Transport(reqwest::Error),
}

/// Reads a body of at most `limit` bytes: a declared length over it is refused before reading,
/// and a streamed body is cut at the limit.
async fn read_capped(mut response: Response, limit: usize) -> Result<Vec<u8>, ReadError> {
    let declared = response.content_length();
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ReadError::TooLarge(Vec::new()));
    }
    let mut out = Vec::with_capacity(declared.map_or(0, |len| len as usize));
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Transport)? {
        let room = limit - out.len();
        if chunk.len() > room {
            out.extend_from_slice(&chunk[..room]);
            return Err(ReadError::TooLarge(out));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// A list of indices as the spec's array of quoted integers.
struct Quoted<'a>(&'a [u64]);

impl Serialize for Quoted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::json::quoted_u64_vec::serialize(self.0, serializer)
    }
}
