//! A mock relay (feature `mock`): the builder API on 127.0.0.1 over axum, for tests and
//! devnets. It records registrations, builds its bids from payloads an execution client (the
//! mock one) built for attributes it was given ([`MockRelay::prepare_payload`], as a real relay
//! learns them from its beacon node's `payload_attributes` events), signs them with its key,
//! and reveals (v1) or "publishes" (v2, recorded) the payload of a signed blinded block. On
//! request it misbehaves: no bid, an error status, a bad signature, a wrong parent, a slow
//! answer, a reveal with fewer blobs than the block committed to, or no v2 endpoint.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use execution_layer::{EngineApiClient, ForkchoiceState, PayloadAttributes};
use parking_lot::Mutex;
use ssz::{Decode, Encode};
use ssz_types::VariableList;
use types::electra::{ExecutionPayload, ExecutionRequests, SignedBeaconBlock};
use types::{BLSPubkey, ChainSpec, Domain, EthSpec, ForkName, Hash32, Slot, U256};

use crate::client::CONSENSUS_VERSION_HEADER;
use crate::containers::{
    BlobsBundle, BuilderBid, ExecutionPayloadAndBlobsBundle, SignedBlindedBeaconBlock,
    SignedValidatorRegistrationV1, execution_payload_header,
};
use crate::verify::{builder_domain, sign_builder_bid};

/// How the relay answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RelayBehaviour {
    /// As the spec says.
    #[default]
    Honest,
    /// getHeader answers 204.
    NoBid,
    /// getHeader answers this error status.
    Error(u16),
    /// getHeader's bid is signed by another key than the one it names.
    BadSignature,
    /// getHeader's bid builds on another parent than the one asked for.
    WrongParent,
    /// getHeader answers after this long.
    Delay(Duration),
    /// submitBlindedBlock reveals one blob fewer than the block commits to.
    WithholdBlob,
    /// submitBlindedBlockV2 answers 404, as a relay from before Fulu.
    NoV2,
    /// SSZ request bodies are answered 415 (a relay that takes JSON only).
    JsonOnly,
}

/// How many slots back the relay keeps the payloads it built (to bid with and to reveal).
const RETAINED_SLOTS: u64 = 64;

/// A payload the relay built, ready to bid with.
#[derive(Debug, Clone)]
struct Built<E: EthSpec> {
    slot: Slot,
    payload: ExecutionPayload<E>,
    bundle: BlobsBundle<E>,
    requests: ExecutionRequests<E>,
    value: U256,
}

/// What the relay saw.
#[derive(Debug)]
struct Seen<E: EthSpec> {
    registrations: HashMap<BLSPubkey, SignedValidatorRegistrationV1>,
    header_requests: Vec<(Slot, Hash32, BLSPubkey)>,
    submitted: Vec<(u8, SignedBlindedBeaconBlock<E>)>,
    published: Vec<SignedBeaconBlock<E>>,
}

struct Shared<E: EthSpec> {
    spec: ChainSpec,
    key: bls::SecretKey,
    pubkey: BLSPubkey,
    domain: Domain,
    behaviour: Mutex<RelayBehaviour>,
    bid_value: Mutex<Option<U256>>,
    built: Mutex<HashMap<Hash32, Built<E>>>,
    seen: Mutex<Seen<E>>,
}

/// A running mock relay; stops when dropped.
pub struct MockRelay<E: EthSpec> {
    shared: Arc<Shared<E>>,
    engine: Arc<EngineApiClient>,
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl<E: EthSpec> std::fmt::Debug for MockRelay<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockRelay")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> Drop for MockRelay<E> {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl<E: EthSpec> MockRelay<E> {
    /// Starts a relay on 127.0.0.1 (a free port) that signs with `key` and builds with
    /// `engine`; `spec` gives the builder domain and the fork of each slot.
    pub async fn start(
        spec: ChainSpec,
        key: bls::SecretKey,
        engine: Arc<EngineApiClient>,
    ) -> std::io::Result<Self> {
        let pubkey = BLSPubkey::from(key.public_key().compress().0);
        let shared = Arc::new(Shared {
            domain: builder_domain(&spec),
            spec,
            key,
            pubkey,
            behaviour: Mutex::new(RelayBehaviour::Honest),
            bid_value: Mutex::new(None),
            built: Mutex::new(HashMap::new()),
            seen: Mutex::new(Seen {
                registrations: HashMap::new(),
                header_requests: Vec::new(),
                submitted: Vec::new(),
                published: Vec::new(),
            }),
        });
        let router = Router::new()
            .route("/eth/v1/builder/validators", post(register::<E>))
            .route(
                "/eth/v1/builder/header/{slot}/{parent_hash}/{pubkey}",
                get(get_header::<E>),
            )
            .route("/eth/v1/builder/blinded_blocks", post(submit_v1::<E>))
            .route("/eth/v2/builder/blinded_blocks", post(submit_v2::<E>))
            .route("/eth/v1/builder/status", get(|| async { StatusCode::OK }))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(Self {
            shared,
            engine,
            addr,
            shutdown: Some(tx),
        })
    }

    /// The relay's URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The relay's URL naming its builder key (`http://0xPUBKEY@127.0.0.1:PORT`).
    pub fn url_with_pubkey(&self) -> String {
        format!("http://{}@{}", self.shared.pubkey, self.addr)
    }

    /// The key the relay signs bids with.
    pub fn pubkey(&self) -> BLSPubkey {
        self.shared.pubkey
    }

    /// How the relay answers from now on.
    pub fn set_behaviour(&self, behaviour: RelayBehaviour) {
        *self.shared.behaviour.lock() = behaviour;
    }

    /// The value of the relay's bids (`None`: the execution client's block value).
    pub fn set_bid_value(&self, value: Option<U256>) {
        *self.shared.bid_value.lock() = value;
    }

    /// Builds a payload for `slot` at the execution client (`engine_forkchoiceUpdatedV3` on
    /// `forkchoice` with `attributes`, then `engine_getPayloadV5`) and keeps it to bid with on
    /// its parent. Returns its block hash.
    pub async fn prepare_payload(
        &self,
        slot: Slot,
        forkchoice: ForkchoiceState,
        attributes: &PayloadAttributes,
    ) -> Result<Hash32, String> {
        let updated = self
            .engine
            .forkchoice_updated_v3(forkchoice, Some(attributes))
            .await
            .map_err(|e| e.to_string())?;
        let id = updated
            .payload_id
            .ok_or_else(|| format!("no payload id ({:?})", updated.payload_status))?;
        let response = self
            .engine
            .get_payload_v5::<E>(id)
            .await
            .map_err(|e| e.to_string())?;
        let bundle = response.blobs_bundle;
        let bundle = BlobsBundle {
            commitments: VariableList::new(bundle.commitments)
                .map_err(|e| format!("commitments: {e:?}"))?,
            proofs: bundle.proofs,
            blobs: VariableList::new(bundle.blobs).map_err(|e| format!("blobs: {e:?}"))?,
        };
        let hash = response.execution_payload.block_hash;
        let mut built = self.shared.built.lock();
        // A devnet's relay builds every slot: payloads (and their blobs) of old slots go.
        built.retain(|_, b| b.slot.saturating_add(RETAINED_SLOTS) >= slot);
        built.insert(
            hash,
            Built {
                slot,
                payload: response.execution_payload,
                bundle,
                requests: response.execution_requests,
                value: response.block_value,
            },
        );
        Ok(hash)
    }

    /// The registrations received, by validator key.
    pub fn registrations(&self) -> HashMap<BLSPubkey, SignedValidatorRegistrationV1> {
        self.shared.seen.lock().registrations.clone()
    }

    /// The getHeader requests received: `(slot, parent_hash, pubkey)`.
    pub fn header_requests(&self) -> Vec<(Slot, Hash32, BLSPubkey)> {
        self.shared.seen.lock().header_requests.clone()
    }

    /// The blinded blocks submitted, with the version of the call (1 or 2).
    pub fn submitted_blocks(&self) -> Vec<(u8, SignedBlindedBeaconBlock<E>)> {
        self.shared.seen.lock().submitted.clone()
    }

    /// The full blocks the relay "published" for submitBlindedBlockV2.
    pub fn published_blocks(&self) -> Vec<SignedBeaconBlock<E>> {
        self.shared.seen.lock().published.clone()
    }
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    let body = serde_json::json!({ "code": status.as_u16(), "message": message.to_string() });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn wants_ssz(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/octet-stream"))
}

fn sent_ssz(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/octet-stream"))
}

/// A versioned answer in the encoding asked for.
fn versioned<T: Encode + serde::Serialize>(
    headers: &HeaderMap,
    fork: ForkName,
    data: &T,
) -> Response {
    let version = HeaderValue::from_static(fork.as_str());
    if wants_ssz(headers) {
        let mut response = (
            [(header::CONTENT_TYPE, "application/octet-stream")],
            data.as_ssz_bytes(),
        )
            .into_response();
        response
            .headers_mut()
            .insert(CONSENSUS_VERSION_HEADER, version);
        return response;
    }
    let body = serde_json::json!({ "version": fork.as_str(), "data": data });
    let mut response = (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    response
        .headers_mut()
        .insert(CONSENSUS_VERSION_HEADER, version);
    response
}

/// 415 for an SSZ body when the relay takes JSON only.
fn refuses_ssz<E: EthSpec>(shared: &Shared<E>, headers: &HeaderMap) -> Option<Response> {
    (*shared.behaviour.lock() == RelayBehaviour::JsonOnly && sent_ssz(headers))
        .then(|| error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "SSZ is not supported"))
}

async fn register<E: EthSpec>(
    State(shared): State<Arc<Shared<E>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = refuses_ssz(&shared, &headers) {
        return refused;
    }
    let registrations: Result<Vec<SignedValidatorRegistrationV1>, String> = if sent_ssz(&headers) {
        Vec::from_ssz_bytes(&body).map_err(|e| format!("{e:?}"))
    } else {
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    };
    match registrations {
        Ok(registrations) => {
            let mut seen = shared.seen.lock();
            for r in registrations {
                seen.registrations.insert(r.message.pubkey, r);
            }
            StatusCode::OK.into_response()
        }
        Err(e) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid registrations: {e}"),
        ),
    }
}

async fn get_header<E: EthSpec>(
    State(shared): State<Arc<Shared<E>>>,
    Path((slot, parent_hash, pubkey)): Path<(u64, String, String)>,
    headers: HeaderMap,
) -> Response {
    let (Ok(parent_hash), Ok(pubkey)) =
        (parent_hash.parse::<Hash32>(), pubkey.parse::<BLSPubkey>())
    else {
        return error(StatusCode::BAD_REQUEST, "invalid parent hash or public key");
    };
    let slot = Slot::from(slot);
    shared
        .seen
        .lock()
        .header_requests
        .push((slot, parent_hash, pubkey));
    let behaviour = *shared.behaviour.lock();
    match behaviour {
        RelayBehaviour::NoBid => return StatusCode::NO_CONTENT.into_response(),
        RelayBehaviour::Error(code) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return error(status, "the relay failed");
        }
        RelayBehaviour::Delay(delay) => tokio::time::sleep(delay).await,
        _ => {}
    }
    if !shared.seen.lock().registrations.contains_key(&pubkey) {
        return StatusCode::NO_CONTENT.into_response();
    }
    let built = shared
        .built
        .lock()
        .values()
        .find(|b| b.slot == slot && b.payload.parent_hash == parent_hash)
        .cloned();
    let Some(built) = built else {
        return StatusCode::NO_CONTENT.into_response();
    };
    let mut bid = BuilderBid {
        header: execution_payload_header(&built.payload),
        blob_kzg_commitments: built.bundle.commitments.clone(),
        execution_requests: built.requests.clone(),
        value: shared.bid_value.lock().unwrap_or(built.value),
        pubkey: shared.pubkey,
    };
    if behaviour == RelayBehaviour::WrongParent {
        bid.header.parent_hash = Hash32::repeat_byte(0x66);
    }
    let signed = if behaviour == RelayBehaviour::BadSignature {
        let mut signed = sign_builder_bid(bid, &bls::SecretKey::random(), shared.domain);
        signed.message.pubkey = shared.pubkey;
        signed
    } else {
        sign_builder_bid(bid, &shared.key, shared.domain)
    };
    let fork = shared.spec.fork_name_at_slot::<E>(slot);
    versioned(&headers, fork, &signed)
}

/// A submitted block (with its fork) and what the relay reveals for it.
type Revealed<E> = (
    ForkName,
    SignedBlindedBeaconBlock<E>,
    ExecutionPayloadAndBlobsBundle<E>,
);

/// Decodes a submitted blinded block and finds the payload it commits to.
fn reveal<E: EthSpec>(
    shared: &Shared<E>,
    version: u8,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Revealed<E>, (StatusCode, String)> {
    let fork = headers
        .get(CONSENSUS_VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<ForkName>().ok());
    let block: SignedBlindedBeaconBlock<E> = if sent_ssz(headers) {
        SignedBlindedBeaconBlock::from_ssz_bytes(body)
            .map_err(|e| (StatusCode::BAD_REQUEST, format!("invalid block: {e:?}")))?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| (StatusCode::BAD_REQUEST, format!("invalid block: {e}")))?
    };
    let fork = fork.unwrap_or_else(|| shared.spec.fork_name_at_slot::<E>(block.message.slot));
    shared.seen.lock().submitted.push((version, block.clone()));
    let hash = block.message.body.execution_payload_header.block_hash;
    let built = shared
        .built
        .lock()
        .get(&hash)
        .cloned()
        .ok_or_else(|| (StatusCode::BAD_REQUEST, format!("unknown payload {hash}")))?;
    if execution_payload_header(&built.payload) != block.message.body.execution_payload_header {
        return Err((
            StatusCode::BAD_REQUEST,
            "the header is not the bid's".into(),
        ));
    }
    let mut bundle = built.bundle;
    if *shared.behaviour.lock() == RelayBehaviour::WithholdBlob {
        let mut blobs = bundle.blobs.to_vec();
        blobs.pop();
        bundle.blobs = VariableList::new(blobs).expect("fewer blobs than a valid list fit");
    }
    Ok((
        fork,
        block,
        ExecutionPayloadAndBlobsBundle {
            execution_payload: built.payload,
            blobs_bundle: bundle,
        },
    ))
}

async fn submit_v1<E: EthSpec>(
    State(shared): State<Arc<Shared<E>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = refuses_ssz(&shared, &headers) {
        return refused;
    }
    match reveal(&shared, 1, &headers, &body) {
        Ok((fork, _, revealed)) => versioned(&headers, fork, &revealed),
        Err((status, message)) => error(status, message),
    }
}

async fn submit_v2<E: EthSpec>(
    State(shared): State<Arc<Shared<E>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if *shared.behaviour.lock() == RelayBehaviour::NoV2 {
        return error(StatusCode::NOT_FOUND, "no such endpoint");
    }
    if let Some(refused) = refuses_ssz(&shared, &headers) {
        return refused;
    }
    match reveal(&shared, 2, &headers, &body) {
        Ok((_, block, revealed)) => match block.unblind(revealed.execution_payload) {
            Ok(full) => {
                shared.seen.lock().published.push(full);
                StatusCode::ACCEPTED.into_response()
            }
            Err(e) => error(StatusCode::BAD_REQUEST, e),
        },
        Err((status, message)) => error(status, message),
    }
}
