//! A mock execution client: an HTTP JSON-RPC server with JWT that implements the engine API
//! methods Fulu needs, builds payloads that chain (parent hash, number, timestamp, prev_randao,
//! withdrawals, requests, a real keccak block hash) and, on request, fills them with blob
//! transactions carrying real blobs with KZG commitments and cell proofs.
//!
//! It runs in-process for tests ([`MockExecutionLayer::start`]) and as `arbor mock-el`. Tests
//! steer it through its setters: a status per block hash, syncing, response delay, malformed
//! responses, a failing or stalled `getPayload`, going offline and coming back.
//!
//! What it does not do: execute transactions (state and receipts roots are synthetic, derived
//! from the parent's), price gas (base fee is constant), or apply EIP-7918's blob base fee floor.

pub mod blobs;
pub mod block_hash;
pub mod rlp;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use alloy_primitives::keccak256;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use execution_layer::client::{
    CAPABILITIES, ENGINE_EXCHANGE_CAPABILITIES, ENGINE_FORKCHOICE_UPDATED_V3, ENGINE_GET_BLOBS_V2,
    ENGINE_GET_CLIENT_VERSION_V1, ENGINE_GET_PAYLOAD_V5, ENGINE_NEW_PAYLOAD_V4,
    MAX_GET_BLOBS_REQUEST,
};
use execution_layer::error::RpcErrorCode;
use execution_layer::json_structures::{
    BlobsBundle, ClientVersion, ForkchoiceState, JsonExecutionPayloadV3,
    JsonForkchoiceUpdatedResponse, JsonGetPayloadV5Response, JsonPayloadStatusKind,
    JsonPayloadStatusV1, PayloadAttributes, execution_requests_from_list,
    get_execution_requests_list,
};
use execution_layer::jwt::JwtSecret;
use execution_layer::serde_hex::{self, HexData};
use rayon::prelude::*;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use ssz_types::{FixedVector, VariableList};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use types::electra::ExecutionRequests;
use types::fulu::ExecutionPayload;
use types::{
    Address, B256, ChainSpec, EthSpec, ForkName, Hash32, KZGProof, PayloadId, U256, VersionedHash,
};

use crate::blobs::{BlobEntry, GAS_PER_BLOB, MAX_BLOBS_PER_TX};
use crate::block_hash::{EMPTY_TRIE_ROOT, compute_block_hash, ordered_trie_root};

/// How the mock is set up.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// The secret clients must sign their JWTs with.
    pub jwt_secret: JwtSecret,
    /// Fork schedule and blob limits (which fork a timestamp is in, how many blobs it allows).
    pub spec: ChainSpec,
    /// The timestamp of the genesis block and of slot 0.
    pub genesis_time: u64,
    /// Seed of the blob contents.
    pub seed: u64,
    /// Chain id written into the blob transactions.
    pub chain_id: u64,
}

/// A status the mock answers for a block hash instead of validating it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MockPayloadStatus {
    /// `VALID`.
    Valid,
    /// `INVALID` with this `latestValidHash`.
    Invalid {
        /// The most recent valid ancestor to report.
        latest_valid_hash: Option<Hash32>,
    },
    /// `SYNCING`.
    Syncing,
    /// `ACCEPTED`.
    Accepted,
}

/// What tests can change while the mock runs.
#[derive(Debug, Default)]
struct Behaviour {
    status_overrides: HashMap<Hash32, MockPayloadStatus>,
    syncing: bool,
    delay: Duration,
    malformed: bool,
    blobs_per_payload: usize,
    execution_requests: Vec<Vec<u8>>,
    /// `Some(n)`: block `k` carries the blobs of block `k % n`, computed once (a blob's cell
    /// proofs cost hundreds of milliseconds; a long devnet needs no endless variety).
    blob_variety: Option<u64>,
    /// How `engine_getPayloadV5` fails, when it does.
    get_payload_fault: Option<GetPayloadFault>,
}

/// How [`MockExecutionLayer::set_get_payload_fault`] makes `engine_getPayloadV5` fail (every
/// other method answers as usual).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetPayloadFault {
    /// A JSON-RPC error (-32603, internal error), as an execution client whose build failed.
    Error,
    /// The answer held back this long (a client past the caller's timeout).
    Delay(Duration),
}

/// What the mock knows of a block it accepted.
#[derive(Debug, Clone, Copy)]
struct BlockInfo {
    number: u64,
    timestamp: u64,
    state_root: Hash32,
    blob_gas_used: u64,
    excess_blob_gas: u64,
}

/// A built payload: its `engine_getPayloadV5` result, serialized once.
#[derive(Debug)]
struct BuiltPayload {
    timestamp: u64,
    /// Shared with every answer (about 13 MB at 48 blobs): not copied per request.
    result_json: Bytes,
}

type BuildResult = Option<Arc<Result<BuiltPayload, String>>>;

/// How many built payloads and blocks' blobs the mock keeps.
const RETAINED_PAYLOADS: usize = 64;

#[derive(Debug)]
struct Chain {
    blocks: HashMap<Hash32, BlockInfo>,
    genesis: Hash32,
    head: Hash32,
    next_payload_id: u64,
    payloads: BTreeMap<u64, watch::Receiver<BuildResult>>,
    blob_pool: HashMap<VersionedHash, Arc<BlobEntry>>,
    blob_pool_order: VecDeque<Vec<VersionedHash>>,
}

struct Shared<E: EthSpec> {
    config: MockConfig,
    chain: Mutex<Chain>,
    behaviour: Mutex<Behaviour>,
    /// Blobs computed once under `blob_variety`, by (block number modulo the variety, index).
    blob_memo: Mutex<HashMap<(u64, u64), BlobEntry>>,
    _preset: PhantomData<E>,
}

/// A JSON-RPC error to answer with.
#[derive(Debug)]
struct RpcFailure {
    code: RpcErrorCode,
    message: String,
}

impl RpcFailure {
    fn new(code: RpcErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep serving.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `DATA` inside positional parameters.
#[derive(Deserialize)]
#[serde(transparent, bound = "T: HexData")]
struct Data<T: HexData>(#[serde(with = "serde_hex::data")] T);

/// `engine_newPayloadV4`'s positional parameters: payload, versioned hashes, parent beacon block
/// root, requests.
type NewPayloadV4Params<E> = (
    JsonExecutionPayloadV3<E>,
    Vec<Data<VersionedHash>>,
    Data<Hash32>,
    Vec<Data<Vec<u8>>>,
);

/// One blob of `engine_getBlobsV2`'s answer.
#[derive(serde::Serialize)]
struct PoolBlobJson {
    #[serde(with = "serde_hex::data")]
    blob: Vec<u8>,
    #[serde(with = "serde_hex::data_vec")]
    proofs: Vec<KZGProof>,
}

impl<E: EthSpec> Shared<E> {
    fn status(
        status: JsonPayloadStatusKind,
        latest_valid_hash: Option<Hash32>,
        error: Option<&str>,
    ) -> JsonPayloadStatusV1 {
        JsonPayloadStatusV1 {
            status,
            latest_valid_hash,
            validation_error: error.map(str::to_owned),
        }
    }

    fn override_status(&self, hash: &Hash32) -> Option<JsonPayloadStatusV1> {
        let behaviour = lock(&self.behaviour);
        if let Some(status) = behaviour.status_overrides.get(hash) {
            return Some(match status {
                MockPayloadStatus::Valid => {
                    Self::status(JsonPayloadStatusKind::Valid, Some(*hash), None)
                }
                MockPayloadStatus::Invalid { latest_valid_hash } => Self::status(
                    JsonPayloadStatusKind::Invalid,
                    *latest_valid_hash,
                    Some("marked invalid by the test"),
                ),
                MockPayloadStatus::Syncing => {
                    Self::status(JsonPayloadStatusKind::Syncing, None, None)
                }
                MockPayloadStatus::Accepted => {
                    Self::status(JsonPayloadStatusKind::Accepted, None, None)
                }
            });
        }
        behaviour
            .syncing
            .then(|| Self::status(JsonPayloadStatusKind::Syncing, None, None))
    }

    fn fork_at_timestamp(&self, timestamp: u64) -> ForkName {
        self.config
            .spec
            .fork_name_at_epoch(self.epoch_at(timestamp))
    }

    fn epoch_at(&self, timestamp: u64) -> u64 {
        self.config
            .spec
            .get_slots_since_genesis(self.config.genesis_time, timestamp)
            / E::slots_per_epoch().max(1)
    }

    /// `engine_newPayloadV4`.
    ///
    /// [spec]: prague.md#engine_newpayloadv4, cancun.md#engine_newpayloadv3
    fn new_payload(
        &self,
        payload: ExecutionPayload<E>,
        versioned_hashes: Vec<VersionedHash>,
        parent_beacon_block_root: Hash32,
        requests: Vec<Vec<u8>>,
    ) -> Result<JsonPayloadStatusV1, RpcFailure> {
        use JsonPayloadStatusKind::*;
        if !self.fork_at_timestamp(payload.timestamp).electra_enabled() {
            return Err(RpcFailure::new(
                RpcErrorCode::UnsupportedFork,
                "payload timestamp before Prague",
            ));
        }
        execution_requests_from_list::<E>(&requests)
            .map_err(|e| RpcFailure::new(RpcErrorCode::InvalidParams, e.to_string()))?;
        let block_hash = payload.block_hash;
        let (overridden, syncing) = {
            let behaviour = lock(&self.behaviour);
            (
                behaviour.status_overrides.contains_key(&block_hash),
                behaviour.syncing,
            )
        };
        if (overridden || !syncing)
            && let Some(status) = self.override_status(&block_hash)
        {
            return Ok(status);
        }
        // While it answers SYNCING (`set_syncing`) it still keeps a payload that chains, as a
        // syncing client downloads the chain meanwhile: once synced, later payloads build on
        // it. Every answer is SYNCING then, whatever it found.
        let answer = |status: JsonPayloadStatusV1| {
            if syncing {
                Self::status(Syncing, None, None)
            } else {
                status
            }
        };
        if compute_block_hash(&payload, parent_beacon_block_root, &requests) != block_hash {
            return Ok(answer(Self::status(
                Invalid,
                None,
                Some("block hash mismatch"),
            )));
        }
        let mut chain = lock(&self.chain);
        if chain.blocks.contains_key(&block_hash) {
            return Ok(answer(Self::status(Valid, Some(block_hash), None)));
        }
        let Some(parent) = chain.blocks.get(&payload.parent_hash).copied() else {
            return Ok(answer(Self::status(Syncing, None, None)));
        };
        let parent_hash = Some(payload.parent_hash);
        if payload.block_number != parent.number + 1 {
            return Ok(answer(Self::status(
                Invalid,
                parent_hash,
                Some("wrong block number"),
            )));
        }
        if payload.timestamp <= parent.timestamp {
            return Ok(answer(Self::status(
                Invalid,
                parent_hash,
                Some("timestamp not after parent's"),
            )));
        }
        let mut carried = Vec::new();
        for tx in payload.transactions.iter() {
            match blobs::transaction_versioned_hashes(tx) {
                Ok(hashes) => carried.extend(hashes),
                Err(_) => {
                    return Ok(answer(Self::status(
                        Invalid,
                        parent_hash,
                        Some("malformed blob transaction"),
                    )));
                }
            }
        }
        if carried != versioned_hashes {
            return Ok(answer(Self::status(
                Invalid,
                None,
                Some("blob versioned hashes mismatch"),
            )));
        }
        chain.blocks.insert(
            block_hash,
            BlockInfo {
                number: payload.block_number,
                timestamp: payload.timestamp,
                state_root: payload.state_root,
                blob_gas_used: payload.blob_gas_used,
                excess_blob_gas: payload.excess_blob_gas,
            },
        );
        Ok(answer(Self::status(Valid, Some(block_hash), None)))
    }

    /// `engine_forkchoiceUpdatedV3`.
    ///
    /// [spec]: cancun.md#engine_forkchoiceupdatedv3, paris.md#engine_forkchoiceupdatedv1
    fn forkchoice_updated(
        self: &Arc<Self>,
        state: ForkchoiceState,
        attributes: Option<PayloadAttributes>,
    ) -> Result<JsonForkchoiceUpdatedResponse, RpcFailure> {
        let response = |payload_status, payload_id| JsonForkchoiceUpdatedResponse {
            payload_status,
            payload_id,
        };
        if let Some(status) = self.override_status(&state.head_block_hash) {
            return Ok(response(status, None));
        }
        let mut chain = lock(&self.chain);
        let Some(head) = chain.blocks.get(&state.head_block_hash).copied() else {
            return Ok(response(
                Self::status(JsonPayloadStatusKind::Syncing, None, None),
                None,
            ));
        };
        for (name, hash) in [
            ("safe", state.safe_block_hash),
            ("finalized", state.finalized_block_hash),
        ] {
            if hash != B256::ZERO && !chain.blocks.contains_key(&hash) {
                return Err(RpcFailure::new(
                    RpcErrorCode::InvalidForkchoiceState,
                    format!("unknown {name} block {hash}"),
                ));
            }
        }
        chain.head = state.head_block_hash;
        let payload_id = match attributes {
            None => None,
            Some(attributes) => {
                if !self.fork_at_timestamp(attributes.timestamp).deneb_enabled() {
                    return Err(RpcFailure::new(
                        RpcErrorCode::UnsupportedFork,
                        "attributes timestamp before Cancun",
                    ));
                }
                if attributes.timestamp <= head.timestamp {
                    return Err(RpcFailure::new(
                        RpcErrorCode::InvalidPayloadAttributes,
                        "timestamp not after the head's",
                    ));
                }
                Some(self.start_build(&mut chain, state.head_block_hash, head, attributes))
            }
        };
        Ok(response(
            Self::status(
                JsonPayloadStatusKind::Valid,
                Some(state.head_block_hash),
                None,
            ),
            payload_id,
        ))
    }

    fn start_build(
        self: &Arc<Self>,
        chain: &mut Chain,
        parent_hash: Hash32,
        parent: BlockInfo,
        attributes: PayloadAttributes,
    ) -> PayloadId {
        let id = chain.next_payload_id;
        chain.next_payload_id += 1;
        let (sender, receiver) = watch::channel(None);
        chain.payloads.insert(id, receiver);
        while chain.payloads.len() > RETAINED_PAYLOADS {
            chain.payloads.pop_first();
        }
        let (blob_count, requests) = {
            let behaviour = lock(&self.behaviour);
            let limit = self
                .config
                .spec
                .get_max_blobs_per_block(self.epoch_at(attributes.timestamp));
            (
                behaviour
                    .blobs_per_payload
                    .min(usize::try_from(limit).unwrap_or(usize::MAX)),
                behaviour.execution_requests.clone(),
            )
        };
        let shared = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let built =
                shared.build_payload(parent_hash, parent, &attributes, blob_count, requests);
            let result = built.map(|(payload, entries)| {
                shared.add_to_blob_pool(entries);
                payload
            });
            // The receiver may be gone if the payload was pruned; nothing to tell then.
            let _ = sender.send(Some(Arc::new(result)));
        });
        PayloadId::new(id.to_be_bytes())
    }

    fn add_to_blob_pool(&self, entries: Vec<BlobEntry>) {
        let mut chain = lock(&self.chain);
        let hashes = entries.iter().map(|e| e.versioned_hash).collect();
        for entry in entries {
            chain
                .blob_pool
                .insert(entry.versioned_hash, Arc::new(entry));
        }
        chain.blob_pool_order.push_back(hashes);
        while chain.blob_pool_order.len() > RETAINED_PAYLOADS {
            for hash in chain.blob_pool_order.pop_front().unwrap_or_default() {
                chain.blob_pool.remove(&hash);
            }
        }
    }

    /// The blobs of block `number`: fresh ones, or under a blob variety the memoized ones of
    /// `number % variety` (computed on first use).
    fn blob_entries(&self, number: u64, count: usize) -> Result<Vec<BlobEntry>, kzg::Error> {
        let Some(variety) = lock(&self.behaviour).blob_variety else {
            return blobs::generate_blob_entries(self.config.seed, number, count);
        };
        let source = number % variety.max(1);
        let missing: Vec<u64> = {
            let memo = lock(&self.blob_memo);
            (0..count as u64)
                .filter(|i| !memo.contains_key(&(source, *i)))
                .collect()
        };
        if !missing.is_empty() {
            let computed: Vec<(u64, BlobEntry)> = missing
                .into_par_iter()
                .map(|i| {
                    blobs::blob_entry(blobs::generate_blob(self.config.seed, source, i))
                        .map(|e| (i, e))
                })
                .collect::<Result<_, _>>()?;
            let mut memo = lock(&self.blob_memo);
            for (i, entry) in computed {
                memo.insert((source, i), entry);
            }
        }
        let memo = lock(&self.blob_memo);
        Ok((0..count as u64)
            .filter_map(|i| memo.get(&(source, i)).cloned())
            .collect())
    }

    /// Builds the payload on `parent` as `attributes` ask, with `blob_count` blobs.
    fn build_payload(
        &self,
        parent_hash: Hash32,
        parent: BlockInfo,
        attributes: &PayloadAttributes,
        blob_count: usize,
        requests: Vec<Vec<u8>>,
    ) -> Result<(BuiltPayload, Vec<BlobEntry>), String> {
        let number = parent.number + 1;
        let entries = self
            .blob_entries(number, blob_count)
            .map_err(|e| format!("KZG failed on a generated blob: {e}"))?;
        let transactions: Vec<Vec<u8>> = entries
            .chunks(MAX_BLOBS_PER_TX)
            .enumerate()
            .map(|(i, chunk)| {
                let hashes: Vec<_> = chunk.iter().map(|e| e.versioned_hash).collect();
                blobs::blob_transaction(self.config.chain_id, number * 64 + i as u64, &hashes)
            })
            .collect();
        let limit = self
            .config
            .spec
            .get_max_blobs_per_block(self.epoch_at(attributes.timestamp));
        let target_blob_gas = limit * 2 / 3 * GAS_PER_BLOB;
        let excess_blob_gas =
            (parent.excess_blob_gas + parent.blob_gas_used).saturating_sub(target_blob_gas);
        let state_root = keccak256(
            [
                b"arbor-mock-state".as_slice(),
                parent.state_root.as_slice(),
                &number.to_be_bytes(),
            ]
            .concat(),
        );
        let receipts_root = if transactions.is_empty() {
            EMPTY_TRIE_ROOT
        } else {
            keccak256(
                [
                    b"arbor-mock-receipts".as_slice(),
                    ordered_trie_root(transactions.iter().map(Vec::as_slice)).as_slice(),
                ]
                .concat(),
            )
        };
        let gas_used = 21_000 * transactions.len() as u64;
        let mut payload = ExecutionPayload::<E> {
            parent_hash,
            fee_recipient: attributes.suggested_fee_recipient,
            state_root,
            receipts_root,
            logs_bloom: FixedVector::default(),
            prev_randao: attributes.prev_randao,
            block_number: number,
            gas_limit: 60_000_000,
            gas_used,
            timestamp: attributes.timestamp,
            extra_data: VariableList::new(b"arbor-mock-el".to_vec())
                .map_err(|e| format!("extra data: {e:?}"))?,
            base_fee_per_gas: U256::from(1_000_000_000u64),
            block_hash: B256::ZERO,
            transactions: VariableList::new(
                transactions
                    .into_iter()
                    .map(VariableList::new)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("transaction: {e:?}"))?,
            )
            .map_err(|e| format!("transactions: {e:?}"))?,
            withdrawals: VariableList::new(
                attributes
                    .withdrawals
                    .iter()
                    .cloned()
                    .map(Into::into)
                    .collect(),
            )
            .map_err(|e| format!("withdrawals: {e:?}"))?,
            blob_gas_used: GAS_PER_BLOB * entries.len() as u64,
            excess_blob_gas,
        };
        payload.block_hash =
            compute_block_hash(&payload, attributes.parent_beacon_block_root, &requests);
        let blobs_bundle = BlobsBundle::<E> {
            commitments: entries.iter().map(|e| e.commitment).collect(),
            proofs: entries
                .iter()
                .flat_map(|e| e.proofs.iter().copied())
                .collect(),
            blobs: entries
                .iter()
                .map(|e| FixedVector::new(e.blob.clone()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("blob length: {e:?}"))?,
        };
        let response = JsonGetPayloadV5Response::<E> {
            execution_payload: JsonExecutionPayloadV3::from(payload),
            block_value: U256::from(gas_used) * U256::from(1_000_000_000u64),
            blobs_bundle,
            should_override_builder: false,
            execution_requests: requests,
        };
        let result_json =
            serde_json::to_vec(&response).map_err(|e| format!("serializing the payload: {e}"))?;
        Ok((
            BuiltPayload {
                timestamp: attributes.timestamp,
                result_json: Bytes::from(result_json),
            },
            entries,
        ))
    }

    /// `engine_getPayloadV5`: waits for the build, then answers its serialized result.
    ///
    /// [spec]: osaka.md#engine_getpayloadv5
    async fn get_payload(&self, id: PayloadId) -> Result<Bytes, RpcFailure> {
        let receiver = lock(&self.chain)
            .payloads
            .get(&u64::from_be_bytes(id.0))
            .cloned();
        let mut receiver = receiver
            .ok_or_else(|| RpcFailure::new(RpcErrorCode::UnknownPayload, "unknown payload"))?;
        let built = receiver
            .wait_for(Option::is_some)
            .await
            .map_err(|_| RpcFailure::new(RpcErrorCode::InternalError, "payload build vanished"))?
            .clone();
        match built.as_deref() {
            Some(Ok(built)) if !self.fork_at_timestamp(built.timestamp).fulu_enabled() => {
                Err(RpcFailure::new(
                    RpcErrorCode::UnsupportedFork,
                    "payload timestamp before Osaka",
                ))
            }
            Some(Ok(built)) => Ok(built.result_json.clone()),
            Some(Err(e)) => Err(RpcFailure::new(RpcErrorCode::InternalError, e.clone())),
            None => Err(RpcFailure::new(RpcErrorCode::InternalError, "no payload")),
        }
    }

    /// `engine_getBlobsV2`: all blobs or `null`.
    ///
    /// [spec]: osaka.md#engine_getblobsv2
    fn get_blobs(&self, hashes: &[VersionedHash]) -> Result<Option<Vec<PoolBlobJson>>, RpcFailure> {
        if hashes.len() > MAX_GET_BLOBS_REQUEST {
            return Err(RpcFailure::new(
                RpcErrorCode::TooLargeRequest,
                format!("more than {MAX_GET_BLOBS_REQUEST} versioned hashes"),
            ));
        }
        let chain = lock(&self.chain);
        Ok(hashes
            .iter()
            .map(|hash| {
                chain.blob_pool.get(hash).map(|entry| PoolBlobJson {
                    blob: entry.blob.clone(),
                    proofs: entry.proofs.clone(),
                })
            })
            .collect())
    }

    async fn dispatch(
        self: &Arc<Self>,
        method: &str,
        params: serde_json::Value,
    ) -> Result<Bytes, RpcFailure> {
        fn parse<T: DeserializeOwned>(params: serde_json::Value) -> Result<T, RpcFailure> {
            serde_json::from_value(params)
                .map_err(|e| RpcFailure::new(RpcErrorCode::InvalidParams, e.to_string()))
        }
        fn json<T: serde::Serialize>(value: &T) -> Result<Bytes, RpcFailure> {
            serde_json::to_vec(value)
                .map(Bytes::from)
                .map_err(|e| RpcFailure::new(RpcErrorCode::InternalError, e.to_string()))
        }
        match method {
            ENGINE_EXCHANGE_CAPABILITIES => {
                let (_theirs,): (Vec<String>,) = parse(params)?;
                json(&CAPABILITIES)
            }
            ENGINE_GET_CLIENT_VERSION_V1 => {
                let (_theirs,): (ClientVersion,) = parse(params)?;
                json(&[ClientVersion {
                    code: "AR".into(),
                    name: "arbor-mock-el".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    commit: types::Bytes4::ZERO,
                }])
            }
            ENGINE_NEW_PAYLOAD_V4 => {
                let (payload, hashes, root, requests): NewPayloadV4Params<E> = parse(params)?;
                json(&self.new_payload(
                    payload.into(),
                    hashes.into_iter().map(|h| h.0).collect(),
                    root.0,
                    requests.into_iter().map(|r| r.0).collect(),
                )?)
            }
            ENGINE_FORKCHOICE_UPDATED_V3 => {
                let (state, attributes): (ForkchoiceState, Option<PayloadAttributes>) =
                    parse(params)?;
                json(&self.forkchoice_updated(state, attributes)?)
            }
            ENGINE_GET_PAYLOAD_V5 => {
                let (id,): (Data<PayloadId>,) = parse(params)?;
                let fault = lock(&self.behaviour).get_payload_fault;
                match fault {
                    Some(GetPayloadFault::Error) => {
                        return Err(RpcFailure::new(
                            RpcErrorCode::InternalError,
                            "payload build failed (mock fault)",
                        ));
                    }
                    Some(GetPayloadFault::Delay(delay)) => tokio::time::sleep(delay).await,
                    None => {}
                }
                self.get_payload(id.0).await
            }
            ENGINE_GET_BLOBS_V2 => {
                let (hashes,): (Vec<Data<VersionedHash>>,) = parse(params)?;
                let hashes: Vec<_> = hashes.into_iter().map(|h| h.0).collect();
                json(&self.get_blobs(&hashes)?)
            }
            MOCK_SET_SYNCING => {
                let (syncing,): (bool,) = parse(params)?;
                lock(&self.behaviour).syncing = syncing;
                json(&syncing)
            }
            other => Err(RpcFailure::new(
                RpcErrorCode::MethodNotFound,
                format!("method {other} not found"),
            )),
        }
    }
}

/// The mock's own control method (not an engine API method; JWT-authenticated like the rest):
/// `[true]` makes it answer `SYNCING` to every `newPayload` and `forkchoiceUpdated`, as
/// [`MockExecutionLayer::set_syncing`] does, `[false]` ends that. For tests that run the mock as
/// a process (`arbor mock-el`).
pub const MOCK_SET_SYNCING: &str = "arbor_mockSetSyncing";

#[derive(Deserialize)]
struct RpcRequest {
    #[serde(default)]
    id: serde_json::Value,
    method: String,
    #[serde(default)]
    params: serde_json::Value,
}

fn json_response(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn rpc_response(id: &serde_json::Value, outcome: Result<Bytes, RpcFailure>) -> Response {
    let id = serde_json::to_vec(id).unwrap_or_else(|_| b"null".to_vec());
    let result_len = outcome.as_ref().map_or(0, Bytes::len);
    // One copy of the result into the answer, in one allocation of its size.
    let mut body = Vec::with_capacity(result_len + id.len() + 40);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(&id);
    match outcome {
        Ok(result) => {
            body.extend_from_slice(br#","result":"#);
            body.extend_from_slice(&result);
        }
        Err(failure) => {
            let error =
                serde_json::json!({ "code": failure.code.code(), "message": failure.message });
            body.extend_from_slice(br#","error":"#);
            body.extend_from_slice(error.to_string().as_bytes());
        }
    }
    body.push(b'}');
    json_response(body)
}

async fn handle<E: EthSpec>(
    State(shared): State<Arc<Shared<E>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if let Err(e) = shared
        .config
        .jwt_secret
        .validate_authorization(authorization)
    {
        return (StatusCode::UNAUTHORIZED, format!("invalid JWT: {e}")).into_response();
    }
    let (delay, malformed) = {
        let behaviour = lock(&shared.behaviour);
        (behaviour.delay, behaviour.malformed)
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if malformed {
        return json_response(br#"{"jsonrpc":"2.0","id":1,"result":{"status":"VAL"#.to_vec());
    }
    let request: RpcRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => {
            return rpc_response(
                &serde_json::Value::Null,
                Err(RpcFailure::new(RpcErrorCode::ParseError, e.to_string())),
            );
        }
    };
    let outcome = shared.dispatch(&request.method, request.params).await;
    rpc_response(&request.id, outcome)
}

struct RunningServer {
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

/// The mock execution client: an engine API server on a local port.
pub struct MockExecutionLayer<E: EthSpec> {
    shared: Arc<Shared<E>>,
    addr: SocketAddr,
    server: tokio::sync::Mutex<Option<RunningServer>>,
}

impl<E: EthSpec> MockExecutionLayer<E> {
    /// Starts the server on `listen` (port 0 picks a free one) with a genesis block at
    /// `config.genesis_time`.
    pub async fn start(config: MockConfig, listen: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let (genesis, genesis_info) = genesis_block::<E>(config.genesis_time);
        let chain = Chain {
            blocks: HashMap::from([(genesis, genesis_info)]),
            genesis,
            head: genesis,
            next_payload_id: 1,
            payloads: BTreeMap::new(),
            blob_pool: HashMap::new(),
            blob_pool_order: VecDeque::new(),
        };
        let shared = Arc::new(Shared {
            config,
            chain: Mutex::new(chain),
            behaviour: Mutex::new(Behaviour::default()),
            blob_memo: Mutex::new(HashMap::new()),
            _preset: PhantomData,
        });
        let server = serve(Arc::clone(&shared), listener);
        Ok(Self {
            shared,
            addr,
            server: tokio::sync::Mutex::new(Some(server)),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`, for the client.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The genesis block's hash.
    pub fn genesis_block_hash(&self) -> Hash32 {
        lock(&self.shared.chain).genesis
    }

    /// The head set by the last `engine_forkchoiceUpdatedV3`.
    pub fn head_block_hash(&self) -> Hash32 {
        lock(&self.shared.chain).head
    }

    /// Whether the mock holds `hash` as a valid block.
    pub fn knows_block(&self, hash: &Hash32) -> bool {
        lock(&self.shared.chain).blocks.contains_key(hash)
    }

    /// Answer `status` for `block_hash` in `newPayload` and `forkchoiceUpdated` instead of
    /// validating it.
    pub fn set_payload_status(&self, block_hash: Hash32, status: MockPayloadStatus) {
        lock(&self.shared.behaviour)
            .status_overrides
            .insert(block_hash, status);
    }

    /// Forget an override set with [`Self::set_payload_status`].
    pub fn clear_payload_status(&self, block_hash: &Hash32) {
        lock(&self.shared.behaviour)
            .status_overrides
            .remove(block_hash);
    }

    /// Answer `SYNCING` to every `newPayload` and `forkchoiceUpdated` (while `true`).
    pub fn set_syncing(&self, syncing: bool) {
        lock(&self.shared.behaviour).syncing = syncing;
    }

    /// Delay every authenticated response by `delay`.
    pub fn set_response_delay(&self, delay: Duration) {
        lock(&self.shared.behaviour).delay = delay;
    }

    /// Make every `engine_getPayloadV5` fail as `fault` says (`None`: answer again).
    pub fn set_get_payload_fault(&self, fault: Option<GetPayloadFault>) {
        lock(&self.shared.behaviour).get_payload_fault = fault;
    }

    /// Answer every authenticated request with truncated JSON (while `true`).
    pub fn set_malformed_responses(&self, malformed: bool) {
        lock(&self.shared.behaviour).malformed = malformed;
    }

    /// Fill each payload built from now on with this many blobs, capped at the fork's limit.
    pub fn set_blobs_per_payload(&self, count: usize) {
        lock(&self.shared.behaviour).blobs_per_payload = count;
    }

    /// `Some(n)`: block `k` carries the blobs of block `k % n`, each computed once, so that
    /// payloads are built in milliseconds after the first `n` (a devnet's setting); `None`
    /// (the default): fresh blobs in every block.
    pub fn set_blob_variety(&self, blocks: Option<u64>) {
        lock(&self.shared.behaviour).blob_variety = blocks;
    }

    /// A blob variety of `sets.len()` whose blobs are given (from
    /// [`blobs::generate_blob_sets`], computed before the mock started): block `k` carries
    /// `sets[k % sets.len()]`, cut to `blobs_per_payload`.
    pub fn set_blob_sets(&self, sets: Vec<Vec<BlobEntry>>) {
        let variety = sets.len() as u64;
        {
            let mut memo = lock(&self.shared.blob_memo);
            memo.clear();
            for (source, set) in sets.into_iter().enumerate() {
                for (i, entry) in set.into_iter().enumerate() {
                    memo.insert((source as u64, i as u64), entry);
                }
            }
        }
        lock(&self.shared.behaviour).blob_variety = (variety > 0).then_some(variety);
    }

    /// Put these requests into each payload built from now on.
    pub fn set_execution_requests(&self, requests: &ExecutionRequests<E>) {
        lock(&self.shared.behaviour).execution_requests = get_execution_requests_list(requests);
    }

    /// The blob limit of a payload with this timestamp, from the chain spec.
    pub fn max_blobs_at(&self, timestamp: u64) -> u64 {
        self.shared
            .config
            .spec
            .get_max_blobs_per_block(self.shared.epoch_at(timestamp))
    }

    /// Stops listening and closes connections: clients see the engine go away.
    pub async fn go_offline(&self) {
        let Some(running) = self.server.lock().await.take() else {
            return;
        };
        let _ = running.shutdown.send(());
        let mut task = running.task;
        // Connections stuck in a delayed response would hold a graceful shutdown open.
        if tokio::time::timeout(Duration::from_secs(2), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }

    /// Listens again on the same address, with the chain as it was.
    pub async fn come_back(&self) -> std::io::Result<()> {
        let mut server = self.server.lock().await;
        if server.is_none() {
            let listener = TcpListener::bind(self.addr).await?;
            *server = Some(serve(Arc::clone(&self.shared), listener));
        }
        Ok(())
    }

    /// Serves until `shutdown` resolves, then stops.
    pub async fn run_until(&self, shutdown: impl std::future::Future<Output = ()>) {
        shutdown.await;
        self.go_offline().await;
    }
}

fn serve<E: EthSpec>(shared: Arc<Shared<E>>, listener: TcpListener) -> RunningServer {
    let app = axum::Router::new()
        .route("/", post(handle::<E>))
        .layer(DefaultBodyLimit::max(256 << 20))
        .with_state(shared);
    let (shutdown, signal) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = signal.await;
            })
            .await
    });
    RunningServer { shutdown, task }
}

/// The hash of the genesis block a mock started at `genesis_time` has (what an interop genesis
/// state written before the mock starts puts in its latest execution payload header).
pub fn genesis_block_hash<E: EthSpec>(genesis_time: u64) -> Hash32 {
    genesis_block::<E>(genesis_time).0
}

/// The mock's genesis block: number 0 at `genesis_time`, empty, its hash computed like any other.
fn genesis_block<E: EthSpec>(genesis_time: u64) -> (Hash32, BlockInfo) {
    let payload = ExecutionPayload::<E> {
        parent_hash: B256::ZERO,
        fee_recipient: Address::ZERO,
        state_root: keccak256(b"arbor-mock-genesis-state"),
        receipts_root: EMPTY_TRIE_ROOT,
        logs_bloom: FixedVector::default(),
        prev_randao: B256::ZERO,
        block_number: 0,
        gas_limit: 60_000_000,
        gas_used: 0,
        timestamp: genesis_time,
        extra_data: VariableList::empty(),
        base_fee_per_gas: U256::from(1_000_000_000u64),
        block_hash: B256::ZERO,
        transactions: VariableList::empty(),
        withdrawals: VariableList::empty(),
        blob_gas_used: 0,
        excess_blob_gas: 0,
    };
    let hash = compute_block_hash(&payload, B256::ZERO, &[]);
    (
        hash,
        BlockInfo {
            number: 0,
            timestamp: genesis_time,
            state_root: payload.state_root,
            blob_gas_used: 0,
            excess_blob_gas: 0,
        },
    )
}
