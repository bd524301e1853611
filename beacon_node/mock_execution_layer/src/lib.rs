//! A mock execution client: an HTTP JSON-RPC server with JWT that implements the engine API
//! methods Fulu and Gloas need (Osaka's and Amsterdam's), builds payloads that chain (parent
//! hash, number, timestamp, prev_randao, withdrawals, requests, from Amsterdam on a block access
//! list and the slot number, a real keccak block hash) and, on request, fills them with blob
//! transactions carrying real blobs with KZG commitments and cell proofs.
//!
//! Each method serves only the payloads of its era: at or after the Amsterdam (Gloas) fork time
//! of the `ChainSpec`, `newPayloadV4`, `getPayloadV5` and `forkchoiceUpdatedV3` (with
//! attributes) answer -38005, and before it the Amsterdam methods do.
//!
//! It runs in-process for tests ([`MockExecutionLayer::start`]) and as `arbor mock-el`. Tests
//! steer it through its setters: a status per block hash, syncing, response delay, malformed
//! responses, a failing or stalled `getPayload`, payloads withheld, delayed or left unvalidated
//! on chosen slots ([`SlotFault`]), going offline and coming back.
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
    CAPABILITIES, ENGINE_EXCHANGE_CAPABILITIES, ENGINE_FORKCHOICE_UPDATED_V3,
    ENGINE_FORKCHOICE_UPDATED_V4, ENGINE_GET_BLOBS_V2, ENGINE_GET_BLOBS_V4,
    ENGINE_GET_CLIENT_VERSION_V1, ENGINE_GET_PAYLOAD_BODIES_BY_HASH_V2,
    ENGINE_GET_PAYLOAD_BODIES_BY_RANGE_V2, ENGINE_GET_PAYLOAD_V5, ENGINE_GET_PAYLOAD_V6,
    ENGINE_NEW_PAYLOAD_V4, ENGINE_NEW_PAYLOAD_V5, EngineFork, MAX_GET_BLOBS_REQUEST,
    MAX_PAYLOAD_BODIES_REQUEST,
};
use execution_layer::error::RpcErrorCode;
use execution_layer::json_structures::{
    BlobCellsAndProofsV1, BlobsBundle, ClientVersion, ColumnIndices, ExecutionPayloadBodyV2,
    ForkchoiceState, JsonExecutionPayloadV3, JsonExecutionPayloadV4, JsonForkchoiceUpdatedResponse,
    JsonGetPayloadV5Response, JsonGetPayloadV6Response, JsonPayloadStatusKind, JsonPayloadStatusV1,
    JsonWithdrawalV1, PayloadAttributes, PayloadAttributesV4, execution_requests_from_list,
    get_execution_requests_list, get_execution_requests_list_gloas,
    gloas_execution_requests_from_list,
};
use execution_layer::jwt::JwtSecret;
use execution_layer::serde_hex::{self, HexData};
use progressive_ssz::ProgressiveByteList;
use rayon::prelude::*;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use ssz_types::{FixedVector, VariableList};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use types::electra::ExecutionRequests;
use types::fulu::ExecutionPayload;
use types::gloas;
use types::{
    Address, B256, ChainSpec, EthSpec, ForkName, Hash32, KZGProof, PayloadId, U256, VersionedHash,
};

use crate::blobs::{BlobEntry, GAS_PER_BLOB, MAX_BLOBS_PER_TX};
use crate::block_hash::{
    EMPTY_BLOCK_ACCESS_LIST, EMPTY_TRIE_ROOT, compute_block_hash, compute_block_hash_amsterdam,
    ordered_trie_root,
};

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
    /// What happens to the payloads of chosen slots.
    slot_faults: BTreeMap<u64, SlotFault>,
}

/// What the mock does with the payload of a chosen slot (the slot is the payload's
/// `slotNumber` from Amsterdam on, else the slot its timestamp starts), so that tests and
/// devnets can see a block whose payload never arrives or arrives late: EMPTY heads in Gloas.
/// Set with [`MockExecutionLayer::set_slot_fault`] or `arbor mock-el
/// --{syncing,withhold,delay}-payload-slots`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFault {
    /// `getPayload` answers as usual (so a bid can commit to the payload), but `newPayload` of
    /// that payload answers `SYNCING` and the mock does not take the block: the payload is never
    /// validated.
    NewPayloadSyncing,
    /// `getPayload` answers -38001 (unknown payload): the payload is never revealed, so there is
    /// nothing to put in an envelope.
    Withhold,
    /// `getPayload` answers after this delay (the payload, and so the envelope, comes late).
    Delay(Duration),
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
    parent_hash: Hash32,
    number: u64,
    timestamp: u64,
    state_root: Hash32,
    blob_gas_used: u64,
    excess_blob_gas: u64,
}

/// A built payload: its `engine_getPayloadV5` or `V6` result, serialized once.
#[derive(Debug)]
struct BuiltPayload {
    timestamp: u64,
    /// The engine API era of its timestamp: which `getPayload` serves it.
    fork: EngineFork,
    /// Its slot (its `slotNumber` from Amsterdam on), for [`SlotFault`]s.
    slot: u64,
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
    /// The body of every accepted block, for `engine_getPayloadBodiesBy*V2`.
    bodies: HashMap<Hash32, ExecutionPayloadBodyV2>,
}

/// What a payload is built with: `PayloadAttributesV3` or `V4`.
#[derive(Debug, Clone)]
struct BuildAttributes {
    timestamp: u64,
    prev_randao: Hash32,
    suggested_fee_recipient: Address,
    withdrawals: Vec<JsonWithdrawalV1>,
    parent_beacon_block_root: Hash32,
    /// `slotNumber` and `targetGasLimit` (Amsterdam).
    amsterdam: Option<(u64, u64)>,
}

impl From<PayloadAttributes> for BuildAttributes {
    fn from(a: PayloadAttributes) -> Self {
        Self {
            timestamp: a.timestamp,
            prev_randao: a.prev_randao,
            suggested_fee_recipient: a.suggested_fee_recipient,
            withdrawals: a.withdrawals,
            parent_beacon_block_root: a.parent_beacon_block_root,
            amsterdam: None,
        }
    }
}

impl From<PayloadAttributesV4> for BuildAttributes {
    fn from(a: PayloadAttributesV4) -> Self {
        Self {
            timestamp: a.timestamp,
            prev_randao: a.prev_randao,
            suggested_fee_recipient: a.suggested_fee_recipient,
            withdrawals: a.withdrawals,
            parent_beacon_block_root: a.parent_beacon_block_root,
            amsterdam: Some((a.slot_number, a.target_gas_limit)),
        }
    }
}

/// A payload handed to `newPayloadV4` or `V5`, reduced to what the mock checks and keeps.
#[derive(Debug)]
struct IncomingPayload {
    block_hash: Hash32,
    /// The hash its fields give.
    computed_hash: Hash32,
    parent_hash: Hash32,
    block_number: u64,
    timestamp: u64,
    state_root: Hash32,
    blob_gas_used: u64,
    excess_blob_gas: u64,
    transactions: Vec<Vec<u8>>,
    withdrawals: Vec<JsonWithdrawalV1>,
    /// Amsterdam: the block access list and the slot number.
    amsterdam: Option<(Vec<u8>, u64)>,
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

/// A 64-bit `QUANTITY` inside positional parameters.
#[derive(Deserialize)]
#[serde(transparent)]
struct Quantity(#[serde(with = "serde_hex::quantity")] u64);

/// Whether `bytes` is exactly one RLP list (a block access list's outer shape, EIP-7928).
fn is_rlp_list(bytes: &[u8]) -> bool {
    matches!(rlp::decode_item(bytes), Ok((rlp::Item::List(_), rest)) if rest.is_empty())
}

/// An Osaka payload as `newPayloadV4` checks it.
fn incoming_osaka<E: EthSpec>(
    payload: ExecutionPayload<E>,
    parent_beacon_block_root: Hash32,
    requests: &[Vec<u8>],
) -> IncomingPayload {
    IncomingPayload {
        block_hash: payload.block_hash,
        computed_hash: compute_block_hash(&payload, parent_beacon_block_root, requests),
        parent_hash: payload.parent_hash,
        block_number: payload.block_number,
        timestamp: payload.timestamp,
        state_root: payload.state_root,
        blob_gas_used: payload.blob_gas_used,
        excess_blob_gas: payload.excess_blob_gas,
        transactions: payload.transactions.iter().map(|t| t.to_vec()).collect(),
        withdrawals: payload.withdrawals.iter().map(Into::into).collect(),
        amsterdam: None,
    }
}

/// An Amsterdam payload as `newPayloadV5` checks it.
fn incoming_amsterdam<E: EthSpec>(
    payload: gloas::ExecutionPayload<E>,
    parent_beacon_block_root: Hash32,
    requests: &[Vec<u8>],
) -> IncomingPayload {
    IncomingPayload {
        block_hash: payload.block_hash,
        computed_hash: compute_block_hash_amsterdam(&payload, parent_beacon_block_root, requests),
        parent_hash: payload.parent_hash,
        block_number: payload.block_number,
        timestamp: payload.timestamp,
        state_root: payload.state_root,
        blob_gas_used: payload.blob_gas_used,
        excess_blob_gas: payload.excess_blob_gas,
        transactions: payload.transactions.iter().map(|t| t.to_vec()).collect(),
        withdrawals: payload.withdrawals.iter().map(Into::into).collect(),
        amsterdam: Some((payload.block_access_list.into_vec(), payload.slot_number)),
    }
}

/// The Amsterdam payload with the fields of an Osaka one, a block access list and a slot.
fn amsterdam_payload<E: EthSpec>(
    p: ExecutionPayload<E>,
    block_access_list: Vec<u8>,
    slot_number: u64,
) -> gloas::ExecutionPayload<E> {
    gloas::ExecutionPayload {
        parent_hash: p.parent_hash,
        fee_recipient: p.fee_recipient,
        state_root: p.state_root,
        receipts_root: p.receipts_root,
        logs_bloom: p.logs_bloom,
        prev_randao: p.prev_randao,
        block_number: p.block_number,
        gas_limit: p.gas_limit,
        gas_used: p.gas_used,
        timestamp: p.timestamp,
        extra_data: p.extra_data,
        base_fee_per_gas: p.base_fee_per_gas,
        block_hash: p.block_hash,
        transactions: p
            .transactions
            .iter()
            .map(|t| ProgressiveByteList::new(t.to_vec()))
            .collect(),
        withdrawals: p.withdrawals.to_vec().into(),
        blob_gas_used: p.blob_gas_used,
        excess_blob_gas: p.excess_blob_gas,
        block_access_list: ProgressiveByteList::new(block_access_list),
        slot_number,
    }
}

/// `engine_newPayloadV4`'s positional parameters: payload, versioned hashes, parent beacon block
/// root, requests.
type NewPayloadV4Params<E> = (
    JsonExecutionPayloadV3<E>,
    Vec<Data<VersionedHash>>,
    Data<Hash32>,
    Vec<Data<Vec<u8>>>,
);

/// `engine_newPayloadV5`'s positional parameters: the same with an `ExecutionPayloadV4` (whose
/// `blockAccessList` is required: without it the parameters do not parse, -32602).
type NewPayloadV5Params<E> = (
    JsonExecutionPayloadV4<E>,
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

    /// The engine API era of a timestamp (Amsterdam from the Gloas fork on).
    fn engine_fork_at(&self, timestamp: u64) -> EngineFork {
        EngineFork::of_fork(self.fork_at_timestamp(timestamp))
    }

    fn epoch_at(&self, timestamp: u64) -> u64 {
        self.slot_at(timestamp) / E::slots_per_epoch().max(1)
    }

    fn slot_at(&self, timestamp: u64) -> u64 {
        self.config
            .spec
            .get_slots_since_genesis(self.config.genesis_time, timestamp)
    }

    fn slot_fault(&self, slot: u64) -> Option<SlotFault> {
        lock(&self.behaviour).slot_faults.get(&slot).copied()
    }

    /// The -38005 answer to a method of era `method_fork` for a timestamp of another era.
    fn check_fork(&self, method_fork: EngineFork, timestamp: u64) -> Result<(), RpcFailure> {
        let fork = self.engine_fork_at(timestamp);
        if fork == method_fork {
            return Ok(());
        }
        Err(RpcFailure::new(
            RpcErrorCode::UnsupportedFork,
            format!("Unsupported fork: timestamp {timestamp} is in the {fork:?} era"),
        ))
    }

    /// `engine_newPayloadV4` (`method_fork` Osaka) and `engine_newPayloadV5` (Amsterdam).
    ///
    /// [spec]: amsterdam.md#engine_newpayloadv5, prague.md#engine_newpayloadv4,
    /// cancun.md#engine_newpayloadv3
    fn new_payload(
        &self,
        method_fork: EngineFork,
        payload: IncomingPayload,
        versioned_hashes: Vec<VersionedHash>,
        requests: Vec<Vec<u8>>,
    ) -> Result<JsonPayloadStatusV1, RpcFailure> {
        use JsonPayloadStatusKind::*;
        if !self.fork_at_timestamp(payload.timestamp).electra_enabled() {
            return Err(RpcFailure::new(
                RpcErrorCode::UnsupportedFork,
                "payload timestamp before Prague",
            ));
        }
        self.check_fork(method_fork, payload.timestamp)?;
        match method_fork {
            EngineFork::Osaka => execution_requests_from_list::<E>(&requests).map(drop),
            EngineFork::Amsterdam => gloas_execution_requests_from_list::<E>(&requests).map(drop),
        }
        .map_err(|e| RpcFailure::new(RpcErrorCode::InvalidParams, e.to_string()))?;
        let block_hash = payload.block_hash;
        let slot = payload
            .amsterdam
            .as_ref()
            .map_or_else(|| self.slot_at(payload.timestamp), |(_, slot)| *slot);
        if self.slot_fault(slot) == Some(SlotFault::NewPayloadSyncing) {
            return Ok(Self::status(Syncing, None, None));
        }
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
        if payload.computed_hash != block_hash {
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
        if let Some((block_access_list, _)) = &payload.amsterdam
            && !is_rlp_list(block_access_list)
        {
            return Ok(answer(Self::status(
                Invalid,
                parent_hash,
                Some("block access list is not an RLP list"),
            )));
        }
        let mut carried = Vec::new();
        for tx in &payload.transactions {
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
                parent_hash: payload.parent_hash,
                number: payload.block_number,
                timestamp: payload.timestamp,
                state_root: payload.state_root,
                blob_gas_used: payload.blob_gas_used,
                excess_blob_gas: payload.excess_blob_gas,
            },
        );
        chain.bodies.insert(
            block_hash,
            ExecutionPayloadBodyV2 {
                transactions: payload.transactions,
                withdrawals: Some(payload.withdrawals),
                block_access_list: payload.amsterdam.map(|(bal, _)| bal),
            },
        );
        Ok(answer(Self::status(Valid, Some(block_hash), None)))
    }

    /// `engine_forkchoiceUpdatedV3` (`method_fork` Osaka) and `V4` (Amsterdam; the custody
    /// columns are accepted and not used: the mock has no blob pool network).
    ///
    /// [spec]: amsterdam.md#engine_forkchoiceupdatedv4, cancun.md#engine_forkchoiceupdatedv3,
    /// paris.md#engine_forkchoiceupdatedv1
    fn forkchoice_updated(
        self: &Arc<Self>,
        method_fork: EngineFork,
        state: ForkchoiceState,
        attributes: Option<BuildAttributes>,
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
                self.check_fork(method_fork, attributes.timestamp)?;
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
        attributes: BuildAttributes,
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
        attributes: &BuildAttributes,
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
            // Amsterdam: the attributes' target gas limit, taken as is (the mock checks no
            // gas-limit bounds).
            gas_limit: attributes
                .amsterdam
                .map_or(60_000_000, |(_, target)| target),
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
        let block_value = U256::from(gas_used) * U256::from(1_000_000_000u64);
        let root = attributes.parent_beacon_block_root;
        let (result_json, fork, slot) = match attributes.amsterdam {
            None => {
                payload.block_hash = compute_block_hash(&payload, root, &requests);
                let response = JsonGetPayloadV5Response::<E> {
                    execution_payload: JsonExecutionPayloadV3::from(payload),
                    block_value,
                    blobs_bundle,
                    should_override_builder: false,
                    execution_requests: requests,
                };
                let slot = self.slot_at(attributes.timestamp);
                (serde_json::to_vec(&response), EngineFork::Osaka, slot)
            }
            Some((slot_number, _)) => {
                // The mock executes nothing, so no account is touched: the empty access list.
                let mut payload =
                    amsterdam_payload(payload, EMPTY_BLOCK_ACCESS_LIST.to_vec(), slot_number);
                payload.block_hash = compute_block_hash_amsterdam(&payload, root, &requests);
                let response = JsonGetPayloadV6Response::<E> {
                    execution_payload: JsonExecutionPayloadV4::from(payload),
                    block_value,
                    blobs_bundle,
                    should_override_builder: false,
                    execution_requests: requests,
                };
                (
                    serde_json::to_vec(&response),
                    EngineFork::Amsterdam,
                    slot_number,
                )
            }
        };
        let result_json = result_json.map_err(|e| format!("serializing the payload: {e}"))?;
        Ok((
            BuiltPayload {
                timestamp: attributes.timestamp,
                fork,
                slot,
                result_json: Bytes::from(result_json),
            },
            entries,
        ))
    }

    /// `engine_getPayloadV5` (`method_fork` Osaka) and `V6` (Amsterdam): waits for the build,
    /// then answers its serialized result, or -38005 when the payload is of the other era.
    /// A [`SlotFault::Withhold`] slot answers -38001, a [`SlotFault::Delay`] slot answers late.
    ///
    /// [spec]: amsterdam.md#engine_getpayloadv6, osaka.md#engine_getpayloadv5
    async fn get_payload(
        &self,
        method_fork: EngineFork,
        id: PayloadId,
    ) -> Result<Bytes, RpcFailure> {
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
            Some(Ok(built)) if built.fork != method_fork => Err(RpcFailure::new(
                RpcErrorCode::UnsupportedFork,
                format!(
                    "Unsupported fork: the payload's timestamp {} is in the {:?} era",
                    built.timestamp, built.fork
                ),
            )),
            Some(Ok(built)) => match self.slot_fault(built.slot) {
                Some(SlotFault::Withhold) => Err(RpcFailure::new(
                    RpcErrorCode::UnknownPayload,
                    format!("payload of slot {} withheld by the mock", built.slot),
                )),
                Some(SlotFault::Delay(delay)) => {
                    let json = built.result_json.clone();
                    tokio::time::sleep(delay).await;
                    Ok(json)
                }
                Some(SlotFault::NewPayloadSyncing) | None => Ok(built.result_json.clone()),
            },
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

    /// `engine_getBlobsV4`: the cells at `indices` of each pooled blob (computed from the blob)
    /// with their proofs, `null` for a blob not in the pool, a `null` result while syncing.
    ///
    /// [spec]: amsterdam.md#engine_getblobsv4
    fn get_blobs_v4(
        &self,
        hashes: &[VersionedHash],
        indices: &ColumnIndices,
    ) -> Result<Option<Vec<Option<BlobCellsAndProofsV1>>>, RpcFailure> {
        if hashes.len() > MAX_GET_BLOBS_REQUEST {
            return Err(RpcFailure::new(
                RpcErrorCode::TooLargeRequest,
                format!("more than {MAX_GET_BLOBS_REQUEST} versioned hashes"),
            ));
        }
        if lock(&self.behaviour).syncing {
            return Ok(None);
        }
        let entries: Vec<Option<Arc<BlobEntry>>> = {
            let chain = lock(&self.chain);
            hashes
                .iter()
                .map(|hash| chain.blob_pool.get(hash).cloned())
                .collect()
        };
        let wanted = indices.indices();
        entries
            .into_iter()
            .map(|entry| {
                let Some(entry) = entry else { return Ok(None) };
                let cells = kzg::blob_from_bytes(&entry.blob)
                    .and_then(|blob| kzg::compute_cells(&blob))
                    .map_err(|e| RpcFailure::new(RpcErrorCode::InternalError, e.to_string()))?;
                let mut item = BlobCellsAndProofsV1 {
                    blob_cells: Vec::with_capacity(wanted.len()),
                    proofs: Vec::with_capacity(wanted.len()),
                };
                for &index in &wanted {
                    let index = index as usize;
                    item.blob_cells.push(Some(cells[index].to_bytes().to_vec()));
                    item.proofs.push(entry.proofs.get(index).copied());
                }
                Ok(Some(item))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// `engine_getPayloadBodiesByHashV2`.
    ///
    /// [spec]: amsterdam.md#engine_getpayloadbodiesbyhashv2
    fn payload_bodies_by_hash(
        &self,
        hashes: &[Hash32],
    ) -> Result<Vec<Option<ExecutionPayloadBodyV2>>, RpcFailure> {
        if hashes.len() > MAX_PAYLOAD_BODIES_REQUEST {
            return Err(RpcFailure::new(
                RpcErrorCode::TooLargeRequest,
                format!("more than {MAX_PAYLOAD_BODIES_REQUEST} block hashes"),
            ));
        }
        let chain = lock(&self.chain);
        Ok(hashes
            .iter()
            .map(|hash| chain.bodies.get(hash).cloned())
            .collect())
    }

    /// `engine_getPayloadBodiesByRangeV2`: the canonical chain is the one ending at the head of
    /// the last `forkchoiceUpdated`; no trailing `null`s past it.
    ///
    /// [spec]: amsterdam.md#engine_getpayloadbodiesbyrangev2, shanghai.md (ByRangeV1)
    fn payload_bodies_by_range(
        &self,
        start: u64,
        count: u64,
    ) -> Result<Vec<Option<ExecutionPayloadBodyV2>>, RpcFailure> {
        if start < 1 || count < 1 {
            return Err(RpcFailure::new(
                RpcErrorCode::InvalidParams,
                "start and count must be at least 1",
            ));
        }
        if count > MAX_PAYLOAD_BODIES_REQUEST as u64 {
            return Err(RpcFailure::new(
                RpcErrorCode::TooLargeRequest,
                format!("more than {MAX_PAYLOAD_BODIES_REQUEST} blocks"),
            ));
        }
        let chain = lock(&self.chain);
        let end = start.saturating_add(count);
        let mut canonical = Vec::new();
        let mut cursor = chain.head;
        while let Some(info) = chain.blocks.get(&cursor) {
            if info.number < start {
                break;
            }
            if info.number < end {
                canonical.push(cursor);
            }
            if info.number == 0 {
                break;
            }
            cursor = info.parent_hash;
        }
        canonical.reverse();
        Ok(canonical
            .iter()
            .map(|hash| chain.bodies.get(hash).cloned())
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
                let requests: Vec<Vec<u8>> = requests.into_iter().map(|r| r.0).collect();
                let payload = incoming_osaka(payload.into(), root.0, &requests);
                json(&self.new_payload(
                    EngineFork::Osaka,
                    payload,
                    hashes.into_iter().map(|h| h.0).collect(),
                    requests,
                )?)
            }
            ENGINE_NEW_PAYLOAD_V5 => {
                let (payload, hashes, root, requests): NewPayloadV5Params<E> = parse(params)?;
                let requests: Vec<Vec<u8>> = requests.into_iter().map(|r| r.0).collect();
                let payload = incoming_amsterdam(payload.into(), root.0, &requests);
                json(&self.new_payload(
                    EngineFork::Amsterdam,
                    payload,
                    hashes.into_iter().map(|h| h.0).collect(),
                    requests,
                )?)
            }
            ENGINE_FORKCHOICE_UPDATED_V3 => {
                let (state, attributes): (ForkchoiceState, Option<PayloadAttributes>) =
                    parse(params)?;
                json(&self.forkchoice_updated(
                    EngineFork::Osaka,
                    state,
                    attributes.map(Into::into),
                )?)
            }
            ENGINE_FORKCHOICE_UPDATED_V4 => {
                // `[state, attributes|null, custodyColumns|null]`; the last may be left out.
                let mut params: Vec<serde_json::Value> = parse(params)?;
                if !(2..=3).contains(&params.len()) {
                    return Err(RpcFailure::new(
                        RpcErrorCode::InvalidParams,
                        format!("{} parameters (expected 2 or 3)", params.len()),
                    ));
                }
                let custody = params.get(2).cloned().unwrap_or(serde_json::Value::Null);
                let _custody: Option<Data<ColumnIndices>> = parse(custody)?;
                let attributes: Option<PayloadAttributesV4> =
                    serde_json::from_value(params.swap_remove(1)).map_err(|e| {
                        RpcFailure::new(RpcErrorCode::InvalidPayloadAttributes, e.to_string())
                    })?;
                let state: ForkchoiceState = parse(params.swap_remove(0))?;
                json(&self.forkchoice_updated(
                    EngineFork::Amsterdam,
                    state,
                    attributes.map(Into::into),
                )?)
            }
            ENGINE_GET_PAYLOAD_V6 => {
                let (id,): (Data<PayloadId>,) = parse(params)?;
                self.get_payload(EngineFork::Amsterdam, id.0).await
            }
            ENGINE_GET_PAYLOAD_BODIES_BY_HASH_V2 => {
                let (hashes,): (Vec<Data<Hash32>>,) = parse(params)?;
                let hashes: Vec<_> = hashes.into_iter().map(|h| h.0).collect();
                json(&self.payload_bodies_by_hash(&hashes)?)
            }
            ENGINE_GET_PAYLOAD_BODIES_BY_RANGE_V2 => {
                let (start, count): (Quantity, Quantity) = parse(params)?;
                json(&self.payload_bodies_by_range(start.0, count.0)?)
            }
            ENGINE_GET_BLOBS_V4 => {
                let (hashes, indices): (Vec<Data<VersionedHash>>, Data<ColumnIndices>) =
                    parse(params)?;
                let hashes: Vec<_> = hashes.into_iter().map(|h| h.0).collect();
                json(&self.get_blobs_v4(&hashes, &indices.0)?)
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
                self.get_payload(EngineFork::Osaka, id.0).await
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
            // The genesis block is an Osaka-format block (no access list), whatever the fork.
            bodies: HashMap::from([(
                genesis,
                ExecutionPayloadBodyV2 {
                    transactions: vec![],
                    withdrawals: Some(vec![]),
                    block_access_list: None,
                },
            )]),
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

    /// Put these Gloas requests (builder deposits and exits included) into each payload built
    /// from now on; only Amsterdam payloads may carry types 0x03 and 0x04.
    pub fn set_execution_requests_gloas(&self, requests: &gloas::ExecutionRequests) {
        lock(&self.shared.behaviour).execution_requests =
            get_execution_requests_list_gloas(requests);
    }

    /// What happens to the payload of `slot` (`None`: nothing special).
    pub fn set_slot_fault(&self, slot: u64, fault: Option<SlotFault>) {
        let mut behaviour = lock(&self.shared.behaviour);
        match fault {
            Some(fault) => behaviour.slot_faults.insert(slot, fault),
            None => behaviour.slot_faults.remove(&slot),
        };
    }

    /// Replaces every slot fault with `faults`.
    pub fn set_slot_faults(&self, faults: BTreeMap<u64, SlotFault>) {
        lock(&self.shared.behaviour).slot_faults = faults;
    }

    /// Forgets every block's access list, as an engine that pruned them: bodies then carry
    /// `blockAccessList: null`.
    pub fn prune_block_access_lists(&self) {
        for body in lock(&self.shared.chain).bodies.values_mut() {
            body.block_access_list = None;
        }
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
            parent_hash: B256::ZERO,
            number: 0,
            timestamp: genesis_time,
            state_root: payload.state_root,
            blob_gas_used: 0,
            excess_blob_gas: 0,
        },
    )
}
