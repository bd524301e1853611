//! The engine API's JSON objects, with fields typed as the consensus containers they become, so
//! that decoding a response is one pass and converting it is a move.
//!
//! [spec]: https://github.com/ethereum/execution-apis/tree/main/src/engine (paris, shanghai, cancun,
//! prague, osaka, amsterdam)

use progressive_ssz::ProgressiveList;
use serde::{Deserialize, Serialize};
use ssz::Decode;
use ssz::Encode;
use ssz_types::VariableList;
use types::electra::{ConsolidationRequest, DepositRequest, ExecutionRequests, WithdrawalRequest};
use types::fulu::{ExecutionPayload, Withdrawal};
use types::gloas;
use types::{
    Address, Blob, Bytes4, EthSpec, ExecutionAddress, FixedBytes, Hash32, KZGCommitment, KZGProof,
    PayloadId, Root, Transaction, U256,
};

use crate::serde_hex;

/// `WithdrawalV1`.
///
/// [spec]: shanghai.md#withdrawalv1
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonWithdrawalV1 {
    /// The withdrawal's index.
    #[serde(with = "serde_hex::quantity")]
    pub index: u64,
    /// The validator's index.
    #[serde(with = "serde_hex::quantity")]
    pub validator_index: u64,
    /// The address paid.
    #[serde(with = "serde_hex::data")]
    pub address: Address,
    /// The amount in Gwei.
    #[serde(with = "serde_hex::quantity")]
    pub amount: u64,
}

impl From<&Withdrawal> for JsonWithdrawalV1 {
    fn from(w: &Withdrawal) -> Self {
        Self {
            index: w.index,
            validator_index: w.validator_index,
            address: w.address,
            amount: w.amount,
        }
    }
}

impl From<JsonWithdrawalV1> for Withdrawal {
    fn from(w: JsonWithdrawalV1) -> Self {
        Self {
            index: w.index,
            validator_index: w.validator_index,
            address: w.address,
            amount: w.amount,
        }
    }
}

/// `Array of WithdrawalV1` as consensus `Withdrawal`s in an SSZ list.
mod withdrawal_list {
    use super::*;
    use serde::{Deserializer, Serializer};
    use ssz_types::typenum::Unsigned;

    pub(super) fn serialize<S: Serializer, N: Unsigned>(
        list: &VariableList<Withdrawal, N>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(JsonWithdrawalV1::from))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>, N: Unsigned>(
        d: D,
    ) -> Result<VariableList<Withdrawal, N>, D::Error> {
        let items: Vec<JsonWithdrawalV1> = Deserialize::deserialize(d)?;
        let len = items.len();
        VariableList::new(items.into_iter().map(Withdrawal::from).collect()).map_err(|_| {
            serde::de::Error::custom(format!(
                "{len} withdrawals exceed the limit of {}",
                N::to_usize()
            ))
        })
    }
}

/// `ExecutionPayloadV3`, the payload of Cancun through Osaka.
///
/// [spec]: cancun.md#executionpayloadv3
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec", rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonExecutionPayloadV3<E: EthSpec> {
    /// Hash of the parent execution block.
    #[serde(with = "serde_hex::data")]
    pub parent_hash: Hash32,
    /// Address that receives the priority fees.
    #[serde(with = "serde_hex::data")]
    pub fee_recipient: ExecutionAddress,
    /// Root of the execution state trie after the block.
    #[serde(with = "serde_hex::data")]
    pub state_root: Hash32,
    /// Root of the receipts trie.
    #[serde(with = "serde_hex::data")]
    pub receipts_root: Hash32,
    /// Bloom filter over the logs of the block's receipts.
    #[serde(with = "serde_hex::data")]
    pub logs_bloom: ssz_types::FixedVector<u8, E::BytesPerLogsBloom>,
    /// The beacon chain's RANDAO mix for the block (`PREVRANDAO`).
    #[serde(with = "serde_hex::data")]
    pub prev_randao: Hash32,
    /// Execution block number.
    #[serde(with = "serde_hex::quantity")]
    pub block_number: u64,
    /// Gas limit of the block.
    #[serde(with = "serde_hex::quantity")]
    pub gas_limit: u64,
    /// Gas used by the block's transactions.
    #[serde(with = "serde_hex::quantity")]
    pub gas_used: u64,
    /// Unix time of the block, in seconds.
    #[serde(with = "serde_hex::quantity")]
    pub timestamp: u64,
    /// Arbitrary data set by the block builder, at most 32 bytes.
    #[serde(with = "serde_hex::data")]
    pub extra_data: VariableList<u8, E::MaxExtraDataBytes>,
    /// EIP-1559 base fee per gas.
    #[serde(with = "serde_hex::quantity_u256")]
    pub base_fee_per_gas: U256,
    /// Hash of this execution block.
    #[serde(with = "serde_hex::data")]
    pub block_hash: Hash32,
    /// The block's transactions, each an opaque EIP-2718 encoding.
    #[serde(with = "serde_hex::data_list")]
    pub transactions: VariableList<Transaction<E>, E::MaxTransactionsPerPayload>,
    /// Validator withdrawals credited by the block (EIP-4895).
    #[serde(with = "withdrawal_list")]
    pub withdrawals: VariableList<Withdrawal, E::MaxWithdrawalsPerPayload>,
    /// Blob gas used by the block's transactions (EIP-4844).
    #[serde(with = "serde_hex::quantity")]
    pub blob_gas_used: u64,
    /// Running total of blob gas used above the target, computed from the parent (EIP-4844).
    #[serde(with = "serde_hex::quantity")]
    pub excess_blob_gas: u64,
}

impl<E: EthSpec> From<JsonExecutionPayloadV3<E>> for ExecutionPayload<E> {
    fn from(p: JsonExecutionPayloadV3<E>) -> Self {
        Self {
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
            transactions: p.transactions,
            withdrawals: p.withdrawals,
            blob_gas_used: p.blob_gas_used,
            excess_blob_gas: p.excess_blob_gas,
        }
    }
}

impl<E: EthSpec> From<ExecutionPayload<E>> for JsonExecutionPayloadV3<E> {
    fn from(p: ExecutionPayload<E>) -> Self {
        Self {
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
            transactions: p.transactions,
            withdrawals: p.withdrawals,
            blob_gas_used: p.blob_gas_used,
            excess_blob_gas: p.excess_blob_gas,
        }
    }
}

/// `ForkchoiceStateV1`.
///
/// [spec]: paris.md#forkchoicestatev1
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkchoiceState {
    /// The head of the canonical chain.
    #[serde(with = "serde_hex::data")]
    pub head_block_hash: Hash32,
    /// The safe block (justified); zero before there is one.
    #[serde(with = "serde_hex::data")]
    pub safe_block_hash: Hash32,
    /// The finalized block; zero before there is one.
    #[serde(with = "serde_hex::data")]
    pub finalized_block_hash: Hash32,
}

/// `PayloadAttributesV3`: what to build a payload on top of the head with.
///
/// [spec]: cancun.md#payloadattributesv3
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayloadAttributes {
    /// The payload's timestamp.
    #[serde(with = "serde_hex::quantity")]
    pub timestamp: u64,
    /// The RANDAO mix to use as `prevRandao`.
    #[serde(with = "serde_hex::data")]
    pub prev_randao: Hash32,
    /// Where the fees go.
    #[serde(with = "serde_hex::data")]
    pub suggested_fee_recipient: Address,
    /// The withdrawals the payload must carry.
    pub withdrawals: Vec<JsonWithdrawalV1>,
    /// The root of the beacon block the payload's block builds on.
    #[serde(with = "serde_hex::data")]
    pub parent_beacon_block_root: Root,
}

/// The `status` of a `PayloadStatusV1`.
///
/// [spec]: paris.md#payloadstatusv1
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JsonPayloadStatusKind {
    /// The payload is valid.
    Valid,
    /// The payload (or an ancestor) is invalid.
    Invalid,
    /// The engine is syncing and cannot tell yet.
    Syncing,
    /// The payload's block hash checks out but its parent is unknown or not on the canonical
    /// chain; not executed.
    Accepted,
    /// The block hash does not match the payload (Paris; later versions answer `INVALID`).
    InvalidBlockHash,
}

/// `PayloadStatusV1` as sent.
///
/// [spec]: paris.md#payloadstatusv1
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonPayloadStatusV1 {
    /// The verdict.
    pub status: JsonPayloadStatusKind,
    /// The most recent valid ancestor (or the block itself when `VALID`).
    #[serde(with = "serde_hex::opt_data", default)]
    pub latest_valid_hash: Option<Hash32>,
    /// Why, when not valid.
    #[serde(default)]
    pub validation_error: Option<String>,
}

/// The response to `engine_forkchoiceUpdatedV3`.
///
/// [spec]: paris.md#engine_forkchoiceupdatedv1 (response)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonForkchoiceUpdatedResponse {
    /// The head's status.
    pub payload_status: JsonPayloadStatusV1,
    /// The identifier of the payload being built, when attributes were given and accepted.
    #[serde(with = "serde_hex::opt_data", default)]
    pub payload_id: Option<PayloadId>,
}

/// `BlobsBundleV2`: the blobs of a built payload, their commitments and the cell proofs of their
/// extended blobs (`CELLS_PER_EXT_BLOB` per blob, blob-major).
///
/// [spec]: osaka.md#blobsbundlev2
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec", deny_unknown_fields)]
pub struct BlobsBundle<E: EthSpec> {
    /// One commitment per blob.
    #[serde(with = "serde_hex::data_vec")]
    pub commitments: Vec<KZGCommitment>,
    /// `CELLS_PER_EXT_BLOB` cell proofs per blob.
    #[serde(with = "serde_hex::data_vec")]
    pub proofs: Vec<KZGProof>,
    /// The blobs, in the order of their commitments.
    #[serde(with = "serde_hex::data_vec")]
    pub blobs: Vec<Blob<E>>,
}

impl<E: EthSpec> Default for BlobsBundle<E> {
    fn default() -> Self {
        Self {
            commitments: vec![],
            proofs: vec![],
            blobs: vec![],
        }
    }
}

/// The response to `engine_getPayloadV5`, as sent.
///
/// [spec]: osaka.md#engine_getpayloadv5
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec", rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonGetPayloadV5Response<E: EthSpec> {
    /// The built payload.
    pub execution_payload: JsonExecutionPayloadV3<E>,
    /// What the payload pays the fee recipient, in wei.
    #[serde(with = "serde_hex::quantity_u256")]
    pub block_value: U256,
    /// The blobs of the payload's blob transactions, with their commitments and cell proofs.
    pub blobs_bundle: BlobsBundle<E>,
    /// The execution client's suggestion to use this payload rather than a builder's.
    pub should_override_builder: bool,
    /// EIP-7685 requests: `request_type ++ request_data`, ascending type, none empty.
    #[serde(with = "serde_hex::data_vec")]
    pub execution_requests: Vec<Vec<u8>>,
}

/// `BlobAndProofV2`: one blob from the execution layer's pool with its cell proofs.
///
/// [spec]: osaka.md#blobandproofv2
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec", deny_unknown_fields)]
pub struct BlobAndProof<E: EthSpec> {
    /// The blob.
    #[serde(with = "serde_hex::data")]
    pub blob: Blob<E>,
    /// `CELLS_PER_EXT_BLOB` cell proofs.
    #[serde(with = "serde_hex::data_vec")]
    pub proofs: Vec<KZGProof>,
}

/// `ClientVersionV1`: who an engine (or the consensus client) is.
///
/// [spec]: identification.md#clientversionv1
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientVersion {
    /// Two-letter client code (`GE`, `NM`, …).
    pub code: String,
    /// Human-readable client name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// First four bytes of the commit hash.
    #[serde(with = "serde_hex::data")]
    pub commit: Bytes4,
}

/// EIP-7685 request type of deposit requests.
pub const DEPOSIT_REQUEST_TYPE: u8 = 0x00;
/// EIP-7685 request type of withdrawal requests.
pub const WITHDRAWAL_REQUEST_TYPE: u8 = 0x01;
/// EIP-7685 request type of consolidation requests.
pub const CONSOLIDATION_REQUEST_TYPE: u8 = 0x02;

/// Why an `executionRequests` list was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestsError {
    /// An element with no type byte or no data (empty requests must be left out).
    #[error("request {index} is empty or has no data")]
    Empty {
        /// Position in the list.
        index: usize,
    },
    /// Types not strictly ascending (out of order or repeated).
    #[error("request type {request_type:#04x} is out of order or repeated")]
    OutOfOrder {
        /// The offending type.
        request_type: u8,
    },
    /// A type this fork does not know.
    #[error("unknown request type {0:#04x}")]
    UnknownType(u8),
    /// The data does not decode as a list of that type's requests within its limit.
    #[error("request data of type {request_type:#04x} does not decode: {reason}")]
    BadData {
        /// The type.
        request_type: u8,
        /// The SSZ error.
        reason: String,
    },
}

/// `get_execution_requests_list(execution_requests)`: the typed byte strings `engine_newPayloadV4`
/// takes, empty lists left out.
///
/// [spec]: electra/beacon-chain.md#new-get_execution_requests_list
pub fn get_execution_requests_list<E: EthSpec>(requests: &ExecutionRequests<E>) -> Vec<Vec<u8>> {
    let typed = |request_type: u8, data: Vec<u8>| {
        let mut out = Vec::with_capacity(1 + data.len());
        out.push(request_type);
        out.extend_from_slice(&data);
        out
    };
    let mut list = Vec::with_capacity(3);
    if !requests.deposits.is_empty() {
        list.push(typed(
            DEPOSIT_REQUEST_TYPE,
            requests.deposits.as_ssz_bytes(),
        ));
    }
    if !requests.withdrawals.is_empty() {
        list.push(typed(
            WITHDRAWAL_REQUEST_TYPE,
            requests.withdrawals.as_ssz_bytes(),
        ));
    }
    if !requests.consolidations.is_empty() {
        list.push(typed(
            CONSOLIDATION_REQUEST_TYPE,
            requests.consolidations.as_ssz_bytes(),
        ));
    }
    list
}

/// The inverse of [`get_execution_requests_list`], enforcing the Prague rules: each element
/// non-empty, types strictly ascending, data a valid SSZ list of that type within its limit.
///
/// [spec]: prague.md#engine_newpayloadv4
pub fn execution_requests_from_list<E: EthSpec>(
    list: &[Vec<u8>],
) -> Result<ExecutionRequests<E>, RequestsError> {
    let mut requests = ExecutionRequests::<E> {
        deposits: VariableList::empty(),
        withdrawals: VariableList::empty(),
        consolidations: VariableList::empty(),
    };
    let mut previous: Option<u8> = None;
    for (index, element) in list.iter().enumerate() {
        let Some((&request_type, data)) = element.split_first() else {
            return Err(RequestsError::Empty { index });
        };
        if data.is_empty() {
            return Err(RequestsError::Empty { index });
        }
        if previous.is_some_and(|p| request_type <= p) {
            return Err(RequestsError::OutOfOrder { request_type });
        }
        previous = Some(request_type);
        let bad = |e: ssz::DecodeError| RequestsError::BadData {
            request_type,
            reason: format!("{e:?}"),
        };
        match request_type {
            DEPOSIT_REQUEST_TYPE => {
                requests.deposits =
                    VariableList::<DepositRequest, _>::from_ssz_bytes(data).map_err(bad)?
            }
            WITHDRAWAL_REQUEST_TYPE => {
                requests.withdrawals =
                    VariableList::<WithdrawalRequest, _>::from_ssz_bytes(data).map_err(bad)?
            }
            CONSOLIDATION_REQUEST_TYPE => {
                requests.consolidations =
                    VariableList::<ConsolidationRequest, _>::from_ssz_bytes(data).map_err(bad)?
            }
            other => return Err(RequestsError::UnknownType(other)),
        }
    }
    Ok(requests)
}

// ---------------------------------------------------------------------------------------------
// Amsterdam (the execution side of Glamsterdam; Gloas on the consensus side).
// ---------------------------------------------------------------------------------------------

/// `Array of WithdrawalV1` as consensus `Withdrawal`s in a progressive list (Gloas's
/// `ExecutionPayload.withdrawals`), at most `MAX_WITHDRAWALS_PER_PAYLOAD` when decoded.
mod progressive_withdrawal_list {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        list: &ProgressiveList<Withdrawal>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(JsonWithdrawalV1::from))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<ProgressiveList<Withdrawal>, D::Error> {
        let items: Vec<JsonWithdrawalV1> = Deserialize::deserialize(d)?;
        Ok(items.into_iter().map(Withdrawal::from).collect())
    }
}

/// `ExecutionPayloadV4`, the Amsterdam payload: `ExecutionPayloadV3` plus `blockAccessList`
/// (EIP-7928, RLP bytes) and `slotNumber` (EIP-7843). Typed as Gloas's `ExecutionPayload`, so
/// conversion is a move.
///
/// [spec]: amsterdam.md#executionpayloadv4
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec", rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonExecutionPayloadV4<E: EthSpec> {
    /// Hash of the parent execution block.
    #[serde(with = "serde_hex::data")]
    pub parent_hash: Hash32,
    /// Address that receives the priority fees.
    #[serde(with = "serde_hex::data")]
    pub fee_recipient: ExecutionAddress,
    /// Root of the execution state trie after the block.
    #[serde(with = "serde_hex::data")]
    pub state_root: Hash32,
    /// Root of the receipts trie.
    #[serde(with = "serde_hex::data")]
    pub receipts_root: Hash32,
    /// Bloom filter over the logs of the block's receipts.
    #[serde(with = "serde_hex::data")]
    pub logs_bloom: ssz_types::FixedVector<u8, E::BytesPerLogsBloom>,
    /// The beacon chain's RANDAO mix for the block (`PREVRANDAO`).
    #[serde(with = "serde_hex::data")]
    pub prev_randao: Hash32,
    /// Execution block number.
    #[serde(with = "serde_hex::quantity")]
    pub block_number: u64,
    /// Gas limit of the block.
    #[serde(with = "serde_hex::quantity")]
    pub gas_limit: u64,
    /// Gas used by the block's transactions.
    #[serde(with = "serde_hex::quantity")]
    pub gas_used: u64,
    /// Unix time of the block, in seconds.
    #[serde(with = "serde_hex::quantity")]
    pub timestamp: u64,
    /// Arbitrary data set by the block builder, at most 32 bytes.
    #[serde(with = "serde_hex::data")]
    pub extra_data: VariableList<u8, E::MaxExtraDataBytes>,
    /// EIP-1559 base fee per gas.
    #[serde(with = "serde_hex::quantity_u256")]
    pub base_fee_per_gas: U256,
    /// Hash of this execution block.
    #[serde(with = "serde_hex::data")]
    pub block_hash: Hash32,
    /// The block's transactions, each an opaque EIP-2718 encoding.
    #[serde(with = "serde_hex::data_progressive_list")]
    pub transactions: ProgressiveList<gloas::Transaction>,
    /// Validator and builder withdrawals credited by the block.
    #[serde(with = "progressive_withdrawal_list")]
    pub withdrawals: ProgressiveList<Withdrawal>,
    /// Blob gas used by the block's transactions (EIP-4844).
    #[serde(with = "serde_hex::quantity")]
    pub blob_gas_used: u64,
    /// Running total of blob gas used above the target (EIP-4844).
    #[serde(with = "serde_hex::quantity")]
    pub excess_blob_gas: u64,
    /// The RLP-encoded block access list (EIP-7928); required.
    #[serde(with = "serde_hex::data")]
    pub block_access_list: gloas::BlockAccessList,
    /// The beacon slot of the payload (EIP-7843).
    #[serde(with = "serde_hex::quantity")]
    pub slot_number: u64,
}

impl<E: EthSpec> From<JsonExecutionPayloadV4<E>> for gloas::ExecutionPayload<E> {
    fn from(p: JsonExecutionPayloadV4<E>) -> Self {
        Self {
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
            transactions: p.transactions,
            withdrawals: p.withdrawals,
            blob_gas_used: p.blob_gas_used,
            excess_blob_gas: p.excess_blob_gas,
            block_access_list: p.block_access_list,
            slot_number: p.slot_number,
        }
    }
}

impl<E: EthSpec> From<gloas::ExecutionPayload<E>> for JsonExecutionPayloadV4<E> {
    fn from(p: gloas::ExecutionPayload<E>) -> Self {
        Self {
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
            transactions: p.transactions,
            withdrawals: p.withdrawals,
            blob_gas_used: p.blob_gas_used,
            excess_blob_gas: p.excess_blob_gas,
            block_access_list: p.block_access_list,
            slot_number: p.slot_number,
        }
    }
}

/// `PayloadAttributesV4`: `PayloadAttributesV3` plus the payload's `slotNumber` (EIP-7843) and
/// the `targetGasLimit` the engine must build with.
///
/// [spec]: amsterdam.md#payloadattributesv4
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayloadAttributesV4 {
    /// The payload's timestamp.
    #[serde(with = "serde_hex::quantity")]
    pub timestamp: u64,
    /// The RANDAO mix to use as `prevRandao`.
    #[serde(with = "serde_hex::data")]
    pub prev_randao: Hash32,
    /// Where the fees go.
    #[serde(with = "serde_hex::data")]
    pub suggested_fee_recipient: Address,
    /// The withdrawals the payload must carry.
    pub withdrawals: Vec<JsonWithdrawalV1>,
    /// The root of the beacon block the payload's block builds on.
    #[serde(with = "serde_hex::data")]
    pub parent_beacon_block_root: Root,
    /// The beacon slot of the payload.
    #[serde(with = "serde_hex::quantity")]
    pub slot_number: u64,
    /// The gas limit the engine should build towards.
    #[serde(with = "serde_hex::quantity")]
    pub target_gas_limit: u64,
}

/// The number of bits in a column bitarray (`CELLS_PER_EXT_BLOB`).
pub const COLUMN_BITS: usize = 128;

/// A 16-byte bitarray of `CELLS_PER_EXT_BLOB` bits naming column (cell) indices: the
/// `custodyColumns` of `engine_forkchoiceUpdatedV4` (the columns the consensus client custodies,
/// EIP-8070) and the `indices_bitarray` of `engine_getBlobsV4`. Bit `i` is bit `i % 8` of byte
/// `i / 8`, as SSZ lays out the consensus `Bitvector[NUMBER_OF_COLUMNS]`.
///
/// [spec]: amsterdam.md#engine_forkchoiceupdatedv4, amsterdam.md#engine_getblobsv4
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColumnIndices(pub FixedBytes<16>);

impl ColumnIndices {
    /// The set holding `columns`; `None` if one is not below 128.
    pub fn from_indices(columns: impl IntoIterator<Item = u64>) -> Option<Self> {
        let mut bytes = [0u8; 16];
        for column in columns {
            let column = usize::try_from(column).ok().filter(|c| *c < COLUMN_BITS)?;
            bytes[column / 8] |= 1 << (column % 8);
        }
        Some(Self(FixedBytes(bytes)))
    }

    /// Whether `column` is in the set.
    pub fn contains(&self, column: u64) -> bool {
        usize::try_from(column)
            .ok()
            .filter(|c| *c < COLUMN_BITS)
            .is_some_and(|c| self.0[c / 8] & (1 << (c % 8)) != 0)
    }

    /// The columns in the set, ascending.
    pub fn indices(&self) -> Vec<u64> {
        (0..COLUMN_BITS as u64)
            .filter(|c| self.contains(*c))
            .collect()
    }
}

impl serde_hex::HexData for ColumnIndices {
    fn from_hex(s: &str) -> Result<Self, serde_hex::HexError> {
        FixedBytes::<16>::from_hex(s).map(Self)
    }
    fn hex_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// The response to `engine_getPayloadV6`, as sent.
///
/// [spec]: amsterdam.md#engine_getpayloadv6
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec", rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonGetPayloadV6Response<E: EthSpec> {
    /// The built payload.
    pub execution_payload: JsonExecutionPayloadV4<E>,
    /// What the payload pays the fee recipient, in wei.
    #[serde(with = "serde_hex::quantity_u256")]
    pub block_value: U256,
    /// `BlobsBundleV2`: blobs, commitments and cell proofs.
    pub blobs_bundle: BlobsBundle<E>,
    /// The execution client's suggestion to use this payload rather than a builder's.
    pub should_override_builder: bool,
    /// EIP-7685 requests (types 0x00–0x04 in Amsterdam), ascending type, none empty.
    #[serde(with = "serde_hex::data_vec")]
    pub execution_requests: Vec<Vec<u8>>,
}

/// `ExecutionPayloadBodyV2`: a block's transactions, withdrawals and block access list, for
/// `engine_getPayloadBodiesByHashV2` / `ByRangeV2`.
///
/// [spec]: amsterdam.md#executionpayloadbodyv2
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionPayloadBodyV2 {
    /// The block's transactions, each an opaque EIP-2718 encoding.
    #[serde(with = "serde_hex::data_vec")]
    pub transactions: Vec<Vec<u8>>,
    /// The block's withdrawals; `null` for blocks before Shanghai.
    pub withdrawals: Option<Vec<JsonWithdrawalV1>>,
    /// The RLP-encoded block access list; `null` before Amsterdam or once pruned.
    #[serde(with = "serde_hex::opt_data")]
    pub block_access_list: Option<Vec<u8>>,
}

/// `BlobCellsAndProofsV1`: some cells of one blob and their proofs, `null` where the engine
/// lacks a cell (a cell and its proof are `null` together).
///
/// [spec]: amsterdam.md#blobcellsandproofsv1
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlobCellsAndProofsV1 {
    /// The requested cells, in ascending column order; `null` for a missing cell.
    #[serde(with = "serde_hex::opt_data_vec")]
    pub blob_cells: Vec<Option<Vec<u8>>>,
    /// Their KZG proofs; `null` exactly where the cell is.
    #[serde(with = "serde_hex::opt_data_vec")]
    pub proofs: Vec<Option<KZGProof>>,
}

/// `get_execution_requests_list(execution_requests)` for Gloas's `ExecutionRequests`: the five
/// typed byte strings `engine_newPayloadV5` takes (0x00–0x04), empty lists left out.
///
/// [spec]: gloas/beacon-chain.md (get_execution_requests_list, EIP-8282)
pub fn get_execution_requests_list_gloas(requests: &gloas::ExecutionRequests) -> Vec<Vec<u8>> {
    let typed = |request_type: u8, data: Vec<u8>| {
        let mut out = Vec::with_capacity(1 + data.len());
        out.push(request_type);
        out.extend_from_slice(&data);
        out
    };
    let mut list = Vec::with_capacity(5);
    if !requests.deposits.is_empty() {
        list.push(typed(
            DEPOSIT_REQUEST_TYPE,
            requests.deposits.as_ssz_bytes(),
        ));
    }
    if !requests.withdrawals.is_empty() {
        list.push(typed(
            WITHDRAWAL_REQUEST_TYPE,
            requests.withdrawals.as_ssz_bytes(),
        ));
    }
    if !requests.consolidations.is_empty() {
        list.push(typed(
            CONSOLIDATION_REQUEST_TYPE,
            requests.consolidations.as_ssz_bytes(),
        ));
    }
    if !requests.builder_deposits.is_empty() {
        list.push(typed(
            gloas::BUILDER_DEPOSIT_REQUEST_TYPE,
            requests.builder_deposits.as_ssz_bytes(),
        ));
    }
    if !requests.builder_exits.is_empty() {
        list.push(typed(
            gloas::BUILDER_EXIT_REQUEST_TYPE,
            requests.builder_exits.as_ssz_bytes(),
        ));
    }
    list
}

/// Decodes one request type's data as a progressive list of at most `limit` requests.
fn decode_requests<T: Decode>(
    request_type: u8,
    data: &[u8],
    limit: u64,
) -> Result<ProgressiveList<T>, RequestsError> {
    let list = ProgressiveList::<T>::from_ssz_bytes(data).map_err(|e| RequestsError::BadData {
        request_type,
        reason: format!("{e:?}"),
    })?;
    if list.len() as u64 > limit {
        return Err(RequestsError::BadData {
            request_type,
            reason: format!("{} requests exceed the limit of {limit}", list.len()),
        });
    }
    Ok(list)
}

/// The inverse of [`get_execution_requests_list_gloas`], with the Prague rules (non-empty
/// elements, strictly ascending types, valid SSZ) and the per-payload limits of the preset.
///
/// [spec]: prague.md#engine_newpayloadv4, amsterdam.md#engine_getpayloadv6
pub fn gloas_execution_requests_from_list<E: EthSpec>(
    list: &[Vec<u8>],
) -> Result<gloas::ExecutionRequests, RequestsError> {
    use ssz_types::typenum::Unsigned;
    let mut requests = gloas::ExecutionRequests::default();
    let mut previous: Option<u8> = None;
    for (index, element) in list.iter().enumerate() {
        let Some((&request_type, data)) = element.split_first() else {
            return Err(RequestsError::Empty { index });
        };
        if data.is_empty() {
            return Err(RequestsError::Empty { index });
        }
        if previous.is_some_and(|p| request_type <= p) {
            return Err(RequestsError::OutOfOrder { request_type });
        }
        previous = Some(request_type);
        match request_type {
            DEPOSIT_REQUEST_TYPE => {
                requests.deposits = decode_requests(
                    request_type,
                    data,
                    E::MaxDepositRequestsPerPayload::to_u64(),
                )?
            }
            WITHDRAWAL_REQUEST_TYPE => {
                requests.withdrawals = decode_requests(
                    request_type,
                    data,
                    E::MaxWithdrawalRequestsPerPayload::to_u64(),
                )?
            }
            CONSOLIDATION_REQUEST_TYPE => {
                requests.consolidations = decode_requests(
                    request_type,
                    data,
                    E::MaxConsolidationRequestsPerPayload::to_u64(),
                )?
            }
            gloas::BUILDER_DEPOSIT_REQUEST_TYPE => {
                requests.builder_deposits = decode_requests(
                    request_type,
                    data,
                    E::MAX_BUILDER_DEPOSIT_REQUESTS_PER_PAYLOAD,
                )?
            }
            gloas::BUILDER_EXIT_REQUEST_TYPE => {
                requests.builder_exits =
                    decode_requests(request_type, data, E::MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD)?
            }
            other => return Err(RequestsError::UnknownType(other)),
        }
    }
    Ok(requests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{B256, BLSPubkey, BLSSignature, MainnetEthSpec};

    type E = MainnetEthSpec;

    #[test]
    fn execution_requests_round_trip_and_skip_empty_lists() {
        let mut requests = ExecutionRequests::<E> {
            deposits: VariableList::empty(),
            withdrawals: VariableList::empty(),
            consolidations: VariableList::empty(),
        };
        assert!(get_execution_requests_list(&requests).is_empty());
        requests
            .deposits
            .push(DepositRequest {
                pubkey: BLSPubkey::repeat_byte(1),
                withdrawal_credentials: B256::repeat_byte(2),
                amount: 32_000_000_000,
                signature: BLSSignature::repeat_byte(3),
                index: 7,
            })
            .expect("room");
        requests
            .consolidations
            .push(ConsolidationRequest {
                source_address: Address::repeat_byte(4),
                source_pubkey: BLSPubkey::repeat_byte(5),
                target_pubkey: BLSPubkey::repeat_byte(6),
            })
            .expect("room");
        let list = get_execution_requests_list(&requests);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0][0], DEPOSIT_REQUEST_TYPE);
        assert_eq!(list[0].len(), 1 + 192);
        assert_eq!(list[1][0], CONSOLIDATION_REQUEST_TYPE);
        assert_eq!(list[1].len(), 1 + 116);
        assert_eq!(execution_requests_from_list::<E>(&list), Ok(requests));
    }

    #[test]
    fn execution_requests_reject_disorder_empties_and_junk() {
        let withdrawal = [vec![WITHDRAWAL_REQUEST_TYPE], vec![0u8; 76]].concat();
        let deposit = [vec![DEPOSIT_REQUEST_TYPE], vec![0u8; 192]].concat();
        assert_eq!(
            execution_requests_from_list::<E>(&[withdrawal.clone(), deposit]),
            Err(RequestsError::OutOfOrder { request_type: 0 })
        );
        assert_eq!(
            execution_requests_from_list::<E>(&[withdrawal.clone(), withdrawal.clone()]),
            Err(RequestsError::OutOfOrder { request_type: 1 })
        );
        assert_eq!(
            execution_requests_from_list::<E>(&[vec![WITHDRAWAL_REQUEST_TYPE]]),
            Err(RequestsError::Empty { index: 0 })
        );
        assert!(matches!(
            execution_requests_from_list::<E>(&[vec![WITHDRAWAL_REQUEST_TYPE, 1, 2, 3]]),
            Err(RequestsError::BadData { .. })
        ));
        assert_eq!(
            execution_requests_from_list::<E>(&[vec![9, 1]]),
            Err(RequestsError::UnknownType(9))
        );
    }

    #[test]
    fn payload_status_parses_spec_examples() {
        let status: JsonPayloadStatusV1 = serde_json::from_str(
            r#"{"status":"INVALID","latestValidHash":"0x0000000000000000000000000000000000000000000000000000000000000001","validationError":"bad"}"#,
        )
        .expect("valid json");
        assert_eq!(status.status, JsonPayloadStatusKind::Invalid);
        assert_eq!(status.latest_valid_hash, Some(B256::with_last_byte(1)));
        let status: JsonPayloadStatusV1 = serde_json::from_str(
            r#"{"status":"SYNCING","latestValidHash":null,"validationError":null}"#,
        )
        .expect("valid json");
        assert_eq!(status.status, JsonPayloadStatusKind::Syncing);
        assert_eq!(status.latest_valid_hash, None);
    }

    /// Fixtures written from the field lists of `amsterdam.md` (and the V3 / V1 shapes they
    /// extend): every field name, and each field's encoding (`QUANTITY` without leading zeros,
    /// `DATA` with two digits per byte), decoded into the typed field and encoded back to the
    /// same JSON.
    mod amsterdam_fixtures {
        use super::*;
        use serde_json::{Value, json};

        fn h32(byte: u8) -> String {
            format!("0x{}", format!("{byte:02x}").repeat(32))
        }

        fn payload_v4_json() -> Value {
            json!({
                "parentHash": h32(0x01),
                "feeRecipient": format!("0x{}", "02".repeat(20)),
                "stateRoot": h32(0x03),
                "receiptsRoot": h32(0x04),
                "logsBloom": format!("0x{}", "00".repeat(256)),
                "prevRandao": h32(0x05),
                "blockNumber": "0x10",
                "gasLimit": "0x1c9c380",
                "gasUsed": "0x5208",
                "timestamp": "0x6553f100",
                "extraData": "0xabcd",
                "baseFeePerGas": "0x3b9aca00",
                "blockHash": h32(0x06),
                "transactions": ["0x02f8", "0x01"],
                "withdrawals": [{
                    "index": "0x9",
                    "validatorIndex": "0x10000000000",
                    "address": format!("0x{}", "0b".repeat(20)),
                    "amount": "0xc"
                }],
                "blobGasUsed": "0x20000",
                "excessBlobGas": "0x0",
                "blockAccessList": "0xc0",
                "slotNumber": "0x2a"
            })
        }

        #[test]
        fn execution_payload_v4_round_trips_every_field() {
            let fixture = payload_v4_json();
            let json: JsonExecutionPayloadV4<E> =
                serde_json::from_value(fixture.clone()).expect("the fixture decodes");
            let payload: gloas::ExecutionPayload<E> = json.clone().into();
            assert_eq!(payload.parent_hash, B256::repeat_byte(1));
            assert_eq!(payload.fee_recipient, Address::repeat_byte(2));
            assert_eq!(payload.block_number, 16);
            assert_eq!(payload.gas_limit, 30_000_000);
            assert_eq!(payload.gas_used, 21_000);
            assert_eq!(payload.timestamp, 0x6553_f100);
            assert_eq!(&payload.extra_data[..], &[0xab, 0xcd]);
            assert_eq!(payload.base_fee_per_gas, U256::from(1_000_000_000u64));
            assert_eq!(payload.block_hash, B256::repeat_byte(6));
            assert_eq!(payload.transactions.len(), 2);
            assert_eq!(&payload.transactions[0][..], &[0x02, 0xf8]);
            assert_eq!(payload.withdrawals[0].validator_index, 1 << 40);
            assert_eq!(payload.withdrawals[0].amount, 12);
            assert_eq!(payload.blob_gas_used, 0x20000);
            assert_eq!(payload.excess_blob_gas, 0);
            assert_eq!(&payload.block_access_list[..], &[0xc0]);
            assert_eq!(payload.slot_number, 42);
            let back =
                serde_json::to_value(JsonExecutionPayloadV4::<E>::from(payload)).expect("encodes");
            assert_eq!(back, fixture, "the same names and encodings on the way out");
        }

        #[test]
        fn execution_payload_v4_needs_its_block_access_list_and_slot() {
            for field in ["blockAccessList", "slotNumber"] {
                let mut fixture = payload_v4_json();
                fixture.as_object_mut().expect("object").remove(field);
                let error = serde_json::from_value::<JsonExecutionPayloadV4<E>>(fixture)
                    .expect_err("a required field is missing");
                assert!(error.to_string().contains(field), "{error}");
            }
            // An Osaka payload (V3) does not pass for V4, nor V4 for V3.
            let mut v3 = payload_v4_json();
            let object = v3.as_object_mut().expect("object");
            object.remove("blockAccessList");
            object.remove("slotNumber");
            assert!(serde_json::from_value::<JsonExecutionPayloadV3<E>>(v3).is_ok());
            assert!(
                serde_json::from_value::<JsonExecutionPayloadV3<E>>(payload_v4_json()).is_err()
            );
            // QUANTITY with a leading zero is refused.
            let mut bad = payload_v4_json();
            bad["slotNumber"] = json!("0x02a");
            assert!(serde_json::from_value::<JsonExecutionPayloadV4<E>>(bad).is_err());
        }

        #[test]
        fn payload_attributes_v4_round_trip() {
            let fixture = json!({
                "timestamp": "0x64",
                "prevRandao": h32(0x07),
                "suggestedFeeRecipient": format!("0x{}", "08".repeat(20)),
                "withdrawals": [],
                "parentBeaconBlockRoot": h32(0x09),
                "slotNumber": "0x20",
                "targetGasLimit": "0x3938700"
            });
            let attributes: PayloadAttributesV4 =
                serde_json::from_value(fixture.clone()).expect("decodes");
            assert_eq!(attributes.timestamp, 100);
            assert_eq!(attributes.slot_number, 32);
            assert_eq!(attributes.target_gas_limit, 60_000_000);
            assert_eq!(attributes.parent_beacon_block_root, B256::repeat_byte(9));
            assert_eq!(serde_json::to_value(&attributes).expect("encodes"), fixture);
            let mut missing = fixture;
            missing
                .as_object_mut()
                .expect("object")
                .remove("targetGasLimit");
            assert!(serde_json::from_value::<PayloadAttributesV4>(missing).is_err());
        }

        #[test]
        fn column_indices_are_ssz_bit_order() {
            let columns = ColumnIndices::from_indices([0, 9, 127]).expect("in range");
            assert_eq!(
                serde_hex::encode(columns.0.as_slice()),
                "0x01020000000000000000000000000080"
            );
            assert_eq!(columns.indices(), vec![0, 9, 127]);
            assert!(columns.contains(9) && !columns.contains(8));
            assert_eq!(ColumnIndices::from_indices([128]), None);
            #[derive(Deserialize)]
            struct Wrapped(#[serde(with = "serde_hex::data")] ColumnIndices);
            let full = format!("\"0x{}\"", "ff".repeat(16));
            let decoded = serde_json::from_str::<Wrapped>(&full).expect("16 bytes");
            assert_eq!(decoded.0.indices().len(), 128);
            assert!(
                serde_json::from_str::<Wrapped>("\"0x0102\"").is_err(),
                "16 bytes only"
            );
        }

        #[test]
        fn get_payload_v6_response_round_trips() {
            let deposit = [vec![DEPOSIT_REQUEST_TYPE], vec![0x11; 192]].concat();
            let builder_exit = [vec![gloas::BUILDER_EXIT_REQUEST_TYPE], vec![0x22; 68]].concat();
            let fixture = json!({
                "executionPayload": payload_v4_json(),
                "blockValue": "0xde0b6b3a7640000",
                "blobsBundle": { "commitments": [], "proofs": [], "blobs": [] },
                "shouldOverrideBuilder": true,
                "executionRequests": [serde_hex::encode(&deposit), serde_hex::encode(&builder_exit)]
            });
            let response: JsonGetPayloadV6Response<E> =
                serde_json::from_value(fixture.clone()).expect("decodes");
            assert_eq!(response.block_value, U256::from(10u64.pow(18)));
            assert!(response.should_override_builder);
            let requests = gloas_execution_requests_from_list::<E>(&response.execution_requests)
                .expect("valid requests");
            assert_eq!(requests.deposits.len(), 1);
            assert_eq!(requests.builder_exits.len(), 1);
            assert_eq!(
                get_execution_requests_list_gloas(&requests),
                vec![deposit, builder_exit]
            );
            assert_eq!(serde_json::to_value(&response).expect("encodes"), fixture);
        }

        #[test]
        fn gloas_requests_keep_the_prague_rules_and_the_limits() {
            let exit =
                |n: usize| [vec![gloas::BUILDER_EXIT_REQUEST_TYPE], vec![0u8; 68 * n]].concat();
            let builder_deposit =
                [vec![gloas::BUILDER_DEPOSIT_REQUEST_TYPE], vec![0u8; 184]].concat();
            assert_eq!(
                gloas_execution_requests_from_list::<E>(&[exit(1), builder_deposit.clone()]),
                Err(RequestsError::OutOfOrder { request_type: 3 })
            );
            let limit = E::MAX_BUILDER_EXIT_REQUESTS_PER_PAYLOAD as usize;
            assert!(gloas_execution_requests_from_list::<E>(&[exit(limit)]).is_ok());
            assert!(matches!(
                gloas_execution_requests_from_list::<E>(&[exit(limit + 1)]),
                Err(RequestsError::BadData {
                    request_type: 4,
                    ..
                })
            ));
            assert_eq!(
                gloas_execution_requests_from_list::<E>(&[vec![5, 1]]),
                Err(RequestsError::UnknownType(5))
            );
            // The Fulu decoder does not know the builder types.
            assert_eq!(
                execution_requests_from_list::<E>(&[builder_deposit]),
                Err(RequestsError::UnknownType(3))
            );
        }

        #[test]
        fn payload_body_v2_and_blob_cells_round_trip_with_nulls() {
            let fixture = json!([
                {
                    "transactions": ["0x01"],
                    "withdrawals": [],
                    "blockAccessList": "0xc0"
                },
                {
                    "transactions": [],
                    "withdrawals": null,
                    "blockAccessList": null
                },
                null
            ]);
            let bodies: Vec<Option<ExecutionPayloadBodyV2>> =
                serde_json::from_value(fixture.clone()).expect("decodes");
            let first = bodies[0].as_ref().expect("a body");
            assert_eq!(first.block_access_list.as_deref(), Some(&[0xc0][..]));
            assert_eq!(first.withdrawals, Some(vec![]));
            let second = bodies[1].as_ref().expect("a body");
            assert_eq!(second.block_access_list, None);
            assert_eq!(second.withdrawals, None);
            assert!(bodies[2].is_none());
            assert_eq!(serde_json::to_value(&bodies).expect("encodes"), fixture);

            let proof = format!("0x{}", "aa".repeat(48));
            let cells = json!([
                {
                    "blob_cells": [format!("0x{}", "01".repeat(2048)), null],
                    "proofs": [proof, null]
                },
                null
            ]);
            let items: Vec<Option<BlobCellsAndProofsV1>> =
                serde_json::from_value(cells.clone()).expect("decodes");
            let item = items[0].as_ref().expect("an item");
            assert_eq!(item.blob_cells[0].as_ref().map(Vec::len), Some(2048));
            assert_eq!(item.blob_cells[1], None);
            assert_eq!(item.proofs[1], None);
            assert!(items[1].is_none());
            assert_eq!(serde_json::to_value(&items).expect("encodes"), cells);
        }
    }
}
