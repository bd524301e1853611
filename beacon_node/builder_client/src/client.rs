//! `BuilderHttpClient`: the builder API's four calls over reqwest, JSON or SSZ, with a timeout
//! per call and typed errors.
//!
//! [spec]: ethereum/builder-specs builder-oapi.yaml

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Client, RequestBuilder, Response, StatusCode, Url};
use serde::Deserialize;
use ssz::{Decode, Encode};
use types::{BLSPubkey, EthSpec, ForkName, Hash32, Slot};

use crate::containers::{
    ExecutionPayloadAndBlobsBundle, SignedBlindedBeaconBlock, SignedBuilderBid,
    SignedValidatorRegistrationV1,
};

/// `Eth-Consensus-Version`.
pub const CONSENSUS_VERSION_HEADER: &str = "Eth-Consensus-Version";
/// `X-Timeout-Ms`: the proposer's getHeader timeout, for the relay's bid delay.
pub const TIMEOUT_MS_HEADER: &str = "X-Timeout-Ms";
/// `Date-Milliseconds`: when the getHeader request was sent.
pub const DATE_MILLISECONDS_HEADER: &str = "Date-Milliseconds";

const JSON: &str = "application/json";
const SSZ: &str = "application/octet-stream";
/// The largest answer taken (a revealed Fulu payload with 72 blobs and their cell proofs is
/// about 19 MiB in hex JSON).
const BODY_LIMIT: usize = 64 << 20;
/// How much of an error answer is kept.
const ERROR_BODY_LIMIT: usize = 64 << 10;

/// Per-call timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuilderTimeouts {
    /// `getHeader`: short, since the local payload is ready and the proposal is due.
    pub get_header: Duration,
    /// `submitBlindedBlock` (v1 and v2): the block is signed, the payload is needed.
    pub submit_blinded_block: Duration,
    /// `registerValidator`.
    pub register_validator: Duration,
    /// `status`.
    pub status: Duration,
}

impl Default for BuilderTimeouts {
    fn default() -> Self {
        Self {
            get_header: Duration::from_secs(1),
            submit_blinded_block: Duration::from_secs(3),
            register_validator: Duration::from_secs(5),
            status: Duration::from_secs(1),
        }
    }
}

/// What went wrong with a builder call.
#[derive(Debug, thiserror::Error)]
pub enum BuilderError {
    /// The relay URL cannot carry API paths, or names an invalid builder key.
    #[error("invalid builder URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {}", beacon_api::error_chain(.0))]
    Build(#[source] reqwest::Error),
    /// The call ran past its timeout.
    #[error("{url}: no answer within {timeout:?}")]
    Timeout {
        /// The URL requested.
        url: String,
        /// The timeout.
        timeout: Duration,
    },
    /// Connecting, sending or reading failed (the message carries the causes: refused
    /// connection, untrusted certificate, …).
    #[error("request to {url} failed: {}", beacon_api::error_chain(source))]
    Transport {
        /// The URL requested.
        url: String,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The relay answered with an error status.
    #[error("{url} answered {status}: {message}")]
    Status {
        /// The URL requested.
        url: String,
        /// The status.
        status: StatusCode,
        /// The error body's `message` (or the body itself).
        message: String,
    },
    /// A success answer with a status the spec does not give this call.
    #[error("{url} answered {status}, expected {expected}")]
    UnexpectedStatus {
        /// The URL requested.
        url: String,
        /// The status.
        status: StatusCode,
        /// What the spec gives.
        expected: &'static str,
    },
    /// The answer is larger than the client takes.
    #[error("{url}: answer over {limit} bytes")]
    BodyTooLarge {
        /// The URL requested.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// A JSON answer did not decode.
    #[error("{url}: invalid JSON: {reason}")]
    Json {
        /// The URL requested.
        url: String,
        /// Why.
        reason: String,
    },
    /// An SSZ answer did not decode.
    #[error("{url}: invalid SSZ: {reason}")]
    Ssz {
        /// The URL requested.
        url: String,
        /// Why.
        reason: String,
    },
    /// The answer is for another fork than the one asked about, or names none where it must.
    #[error("{url}: answer for fork {found:?}, expected {expected}")]
    WrongFork {
        /// The URL requested.
        url: String,
        /// The fork of the request.
        expected: ForkName,
        /// What the answer says (`None`: nothing, or not a fork name).
        found: Option<String>,
    },
    /// The builder API has these containers from Electra on only.
    #[error("the builder API is supported from Electra on, not at {0}")]
    UnsupportedFork(ForkName),
    /// A request body could not be encoded.
    #[error("could not encode the request body: {0}")]
    Encode(String),
}

impl BuilderError {
    /// True when the relay did not answer in time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout { .. })
    }
}

/// How `submitBlindedBlock` is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubmitVersion {
    /// `submitBlindedBlock` (v1): the relay returns the payload and blobs; this node publishes
    /// and imports the block.
    V1,
    /// `submitBlindedBlockV2` (Fulu): the relay publishes the block and its blobs and answers
    /// 202 without the payload; this node imports the block when it arrives on gossip.
    #[default]
    V2,
}

/// A relay as the node's configuration names it (`--builder URL` and its options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuilderConfig {
    /// The relay's URL; a public key in the user part pins the builder
    /// (`http://0xPUBKEY@host:port`).
    pub url: String,
    /// Per-call timeouts.
    pub timeouts: BuilderTimeouts,
    /// How blinded blocks are unblinded.
    pub submit: SubmitVersion,
    /// Ask for and send SSZ (JSON otherwise).
    pub ssz: bool,
}

impl BuilderConfig {
    /// The relay at `url` with the default timeouts, `submitBlindedBlockV2` and SSZ.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            timeouts: BuilderTimeouts::default(),
            submit: SubmitVersion::default(),
            ssz: true,
        }
    }

    /// The client of this relay.
    pub fn client(&self) -> Result<BuilderHttpClient, BuilderError> {
        let client = BuilderHttpClient::new(&self.url, self.timeouts)?;
        Ok(if self.ssz { client } else { client.json_only() })
    }
}

/// A typed client of one relay (or mev-boost).
#[derive(Debug, Clone)]
pub struct BuilderHttpClient {
    client: Client,
    base: Url,
    timeouts: BuilderTimeouts,
    ssz: bool,
    builder_pubkey: Option<BLSPubkey>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn fork_of(headers: &HeaderMap) -> Option<&str> {
    headers.get(CONSENSUS_VERSION_HEADER)?.to_str().ok()
}

fn is_ssz(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with(SSZ))
}

/// `{ "version": ..., "data": ... }` of getHeader and submitBlindedBlock.
#[derive(Deserialize)]
#[serde(bound = "T: serde::de::DeserializeOwned")]
struct Versioned<T> {
    version: String,
    data: T,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: String,
}

impl BuilderHttpClient {
    /// A client of the relay at `url` (e.g. `http://0xPUBKEY@127.0.0.1:18550`: a public key
    /// in the user part pins the builder whose bids are taken).
    pub fn new(url: &str, timeouts: BuilderTimeouts) -> Result<Self, BuilderError> {
        let invalid = |reason: String| BuilderError::InvalidUrl {
            url: url.to_string(),
            reason,
        };
        let mut base = Url::parse(url).map_err(|e| invalid(e.to_string()))?;
        if base.cannot_be_a_base() {
            return Err(invalid("cannot be a base URL".into()));
        }
        let builder_pubkey = match base.username() {
            "" => None,
            user => Some(
                user.parse::<BLSPubkey>()
                    .map_err(|e| invalid(format!("user part is not a public key: {e}")))?,
            ),
        };
        // The key is not a credential: it is not sent.
        base.set_username("")
            .map_err(|()| invalid("cannot clear the user part".into()))?;
        let client = beacon_api::client_builder(&base)
            .connect_timeout(timeouts.get_header.max(Duration::from_millis(500)))
            .build()
            .map_err(BuilderError::Build)?;
        Ok(Self {
            client,
            base,
            timeouts,
            ssz: true,
            builder_pubkey,
        })
    }

    /// The same client asking for (and sending) JSON only, for relays without SSZ.
    pub fn json_only(mut self) -> Self {
        self.ssz = false;
        self
    }

    /// The relay's URL (without a builder key).
    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// The builder key the URL names, if any.
    pub fn builder_pubkey(&self) -> Option<BLSPubkey> {
        self.builder_pubkey
    }

    /// The timeouts.
    pub fn timeouts(&self) -> &BuilderTimeouts {
        &self.timeouts
    }

    fn url(&self, path: &[&str]) -> Result<Url, BuilderError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| BuilderError::InvalidUrl {
                url: self.base.to_string(),
                reason: "cannot be a base URL".into(),
            })?
            .pop_if_empty()
            .extend(path);
        Ok(url)
    }

    fn accept(&self) -> &'static str {
        if self.ssz {
            "application/octet-stream;q=1.0,application/json;q=0.9"
        } else {
            JSON
        }
    }

    /// Sends `request`; an error status becomes [`BuilderError::Status`].
    async fn send(
        &self,
        url: &Url,
        request: RequestBuilder,
        timeout: Duration,
    ) -> Result<Response, BuilderError> {
        let response = request.timeout(timeout).send().await.map_err(|source| {
            if source.is_timeout() {
                BuilderError::Timeout {
                    url: url.to_string(),
                    timeout,
                }
            } else {
                BuilderError::Transport {
                    url: url.to_string(),
                    source,
                }
            }
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = read_capped(url, response, ERROR_BODY_LIMIT, timeout)
            .await
            .unwrap_or_default();
        let message = serde_json::from_slice::<ErrorBody>(&body)
            .map(|b| b.message)
            .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned());
        Err(BuilderError::Status {
            url: url.to_string(),
            status,
            message,
        })
    }

    /// `registerValidator`: `POST /eth/v1/builder/validators` with the registrations (SSZ
    /// `List[SignedValidatorRegistrationV1]` unless JSON only).
    pub async fn register_validator(
        &self,
        registrations: &[SignedValidatorRegistrationV1],
    ) -> Result<(), BuilderError> {
        let url = self.url(&["eth", "v1", "builder", "validators"])?;
        self.post_encoded(
            &url,
            None,
            JSON,
            || registrations.to_vec().as_ssz_bytes(),
            || serde_json::to_vec(registrations),
            self.timeouts.register_validator,
        )
        .await?;
        Ok(())
    }

    /// POSTs a body in SSZ, or in JSON when SSZ is off or the relay answers 415 (Unsupported
    /// Media Type) to SSZ, with `Eth-Consensus-Version: fork` when given.
    async fn post_encoded(
        &self,
        url: &Url,
        fork: Option<ForkName>,
        accept: &str,
        ssz: impl FnOnce() -> Vec<u8>,
        json: impl FnOnce() -> Result<Vec<u8>, serde_json::Error>,
        timeout: Duration,
    ) -> Result<Response, BuilderError> {
        let request = |content_type: &'static str, body: Vec<u8>| {
            let request = self
                .client
                .post(url.clone())
                .header(CONTENT_TYPE, content_type)
                .header(ACCEPT, accept)
                .body(body);
            match fork {
                Some(fork) => request.header(CONSENSUS_VERSION_HEADER, fork.as_str()),
                None => request,
            }
        };
        if self.ssz {
            match self.send(url, request(SSZ, ssz()), timeout).await {
                Err(BuilderError::Status { status, .. })
                    if status == StatusCode::UNSUPPORTED_MEDIA_TYPE =>
                {
                    tracing::debug!(%url, "the relay takes no SSZ: sending JSON");
                }
                other => return other,
            }
        }
        let body = json().map_err(|e| BuilderError::Encode(e.to_string()))?;
        self.send(url, request(JSON, body), timeout).await
    }

    /// `getHeader`: `GET /eth/v1/builder/header/{slot}/{parent_hash}/{pubkey}`. `Ok(None)` for
    /// 204 (no bid). The bid is unverified ([`crate::verify_builder_bid`]).
    pub async fn get_header<E: EthSpec>(
        &self,
        fork: ForkName,
        slot: Slot,
        parent_hash: Hash32,
        pubkey: BLSPubkey,
    ) -> Result<Option<SignedBuilderBid<E>>, BuilderError> {
        if fork < ForkName::Electra {
            return Err(BuilderError::UnsupportedFork(fork));
        }
        let url = self.url(&[
            "eth",
            "v1",
            "builder",
            "header",
            &slot.to_string(),
            &parent_hash.to_string(),
            &pubkey.to_string(),
        ])?;
        let timeout = self.timeouts.get_header;
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, self.accept())
            .header(TIMEOUT_MS_HEADER, timeout.as_millis().to_string())
            .header(DATE_MILLISECONDS_HEADER, now_ms().to_string());
        let response = self.send(&url, request, timeout).await?;
        match response.status() {
            StatusCode::NO_CONTENT => return Ok(None),
            StatusCode::OK => {}
            status => {
                return Err(BuilderError::UnexpectedStatus {
                    url: url.to_string(),
                    status,
                    expected: "200 or 204",
                });
            }
        }
        self.decode_versioned(&url, response, fork, timeout)
            .await
            .map(Some)
    }

    /// An answer's data, SSZ (its fork in `Eth-Consensus-Version`) or versioned JSON, checked
    /// to be of `fork`.
    async fn decode_versioned<T: Decode + serde::de::DeserializeOwned>(
        &self,
        url: &Url,
        response: Response,
        fork: ForkName,
        timeout: Duration,
    ) -> Result<T, BuilderError> {
        let headers = response.headers().clone();
        let body = read_capped(url, response, BODY_LIMIT, timeout).await?;
        let wrong_fork = |found: Option<&str>| BuilderError::WrongFork {
            url: url.to_string(),
            expected: fork,
            found: found.map(str::to_string),
        };
        if is_ssz(&headers) {
            let version = fork_of(&headers);
            if version != Some(fork.as_str()) {
                return Err(wrong_fork(version));
            }
            return T::from_ssz_bytes(&body).map_err(|e| BuilderError::Ssz {
                url: url.to_string(),
                reason: format!("{e:?}"),
            });
        }
        let versioned: Versioned<T> =
            serde_json::from_slice(&body).map_err(|e| BuilderError::Json {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        if versioned.version != fork.as_str() {
            return Err(wrong_fork(Some(&versioned.version)));
        }
        Ok(versioned.data)
    }

    /// `submitBlindedBlock` (v1): `POST /eth/v1/builder/blinded_blocks`; the relay reveals the
    /// payload and its blobs.
    pub async fn submit_blinded_block_v1<E: EthSpec>(
        &self,
        fork: ForkName,
        block: &SignedBlindedBeaconBlock<E>,
    ) -> Result<ExecutionPayloadAndBlobsBundle<E>, BuilderError> {
        if fork < ForkName::Electra {
            return Err(BuilderError::UnsupportedFork(fork));
        }
        let url = self.url(&["eth", "v1", "builder", "blinded_blocks"])?;
        let timeout = self.timeouts.submit_blinded_block;
        let response = self
            .post_encoded(
                &url,
                Some(fork),
                self.accept(),
                || block.as_ssz_bytes(),
                || serde_json::to_vec(block),
                timeout,
            )
            .await?;
        self.decode_versioned(&url, response, fork, timeout).await
    }

    /// `submitBlindedBlockV2`: `POST /eth/v2/builder/blinded_blocks`; the relay publishes the
    /// block and its blobs and answers 202 without a body.
    pub async fn submit_blinded_block_v2<E: EthSpec>(
        &self,
        fork: ForkName,
        block: &SignedBlindedBeaconBlock<E>,
    ) -> Result<(), BuilderError> {
        if fork < ForkName::Electra {
            return Err(BuilderError::UnsupportedFork(fork));
        }
        let url = self.url(&["eth", "v2", "builder", "blinded_blocks"])?;
        let response = self
            .post_encoded(
                &url,
                Some(fork),
                JSON,
                || block.as_ssz_bytes(),
                || serde_json::to_vec(block),
                self.timeouts.submit_blinded_block,
            )
            .await?;
        match response.status() {
            StatusCode::ACCEPTED | StatusCode::OK => Ok(()),
            status => Err(BuilderError::UnexpectedStatus {
                url: url.to_string(),
                status,
                expected: "202",
            }),
        }
    }

    /// `status`: `GET /eth/v1/builder/status`; `Ok` when the relay is healthy.
    pub async fn status(&self) -> Result<(), BuilderError> {
        let url = self.url(&["eth", "v1", "builder", "status"])?;
        let request = self.client.get(url.clone()).header(ACCEPT, JSON);
        self.send(&url, request, self.timeouts.status).await?;
        Ok(())
    }
}

/// Reads a body of at most `limit` bytes (a declared larger length is refused unread).
async fn read_capped(
    url: &Url,
    mut response: Response,
    limit: usize,
    timeout: Duration,
) -> Result<Vec<u8>, BuilderError> {
    let too_large = || BuilderError::BodyTooLarge {
        url: url.to_string(),
        limit,
    };
    if response
        .content_length()
        .is_some_and(|len| len > limit as u64)
    {
        return Err(too_large());
    }
    let mut out = Vec::new();
    loop {
        let chunk = response.chunk().await.map_err(|source| {
            if source.is_timeout() {
                BuilderError::Timeout {
                    url: url.to_string(),
                    timeout,
                }
            } else {
                BuilderError::Transport {
                    url: url.to_string(),
                    source,
                }
            }
        })?;
        let Some(chunk) = chunk else {
            return Ok(out);
        };
        if out.len() + chunk.len() > limit {
            return Err(too_large());
        }
        out.extend_from_slice(&chunk);
    }
}
