//! The eth2 req/resp messages: request containers, response items and the protocol list.
//!
//! [spec]: phase0/p2p-interface.md#messages, fulu/p2p-interface.md#messages,
//! gloas/p2p-interface.md#messages

use std::sync::Arc;

use ssz::{Decode, Encode};
use ssz_derive::{Decode, Encode};
use ssz_types::BitVector;
use ssz_types::typenum::{U4, U64, Unsigned};
use types::fulu::DataColumnsByRootIdentifier;
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{
    BlobSidecar, ChainSpec, DataColumnSidecar, Epoch, EthSpec, ForkDigest, LightClientBootstrap,
    LightClientFinalityUpdate, LightClientOptimisticUpdate, LightClientUpdate, Root,
    SignedBeaconBlock, Slot, deneb::BlobIdentifier,
};

/// `MAX_REQUEST_LIGHT_CLIENT_UPDATES`.
///
/// [spec]: altair/light-client/p2p-interface.md#configuration
pub const MAX_REQUEST_LIGHT_CLIENT_UPDATES: u64 = 128;

/// Longest error message a response chunk may carry (`ErrorMessage = List[byte, 256]`).
pub const MAX_ERROR_MESSAGE_LEN: usize = 256;

/// The shortest SSZ a `SignedExecutionPayloadEnvelope` can have: its fixed part (the offset of
/// `message` and the 96-byte signature), the envelope's fixed part (two offsets, the builder
/// index and two roots: 80), the payload's (540) and the execution requests' (five offsets).
pub const MIN_SIGNED_EXECUTION_PAYLOAD_ENVELOPE_LEN: usize = 4 + 96 + 80 + 540 + 20;

/// `Status` v2: the handshake's view of a peer's chain.
///
/// [spec]: fulu/p2p-interface.md#status-v2
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct StatusMessage {
    /// The sender's current fork digest.
    pub fork_digest: ForkDigest,
    /// Root of the sender's finalized checkpoint (zero at genesis).
    pub finalized_root: Root,
    /// Epoch of the sender's finalized checkpoint.
    pub finalized_epoch: Epoch,
    /// Root of the sender's head block.
    pub head_root: Root,
    /// Slot of the sender's head block.
    pub head_slot: Slot,
    /// Slot of the earliest block the sender can serve.
    pub earliest_available_slot: Slot,
}

/// `MetaData` v3.
///
/// [spec]: fulu/p2p-interface.md#metadata
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct MetaData {
    /// Incremented whenever any other field changes.
    pub seq_number: u64,
    /// The attestation subnets the node is persistently subscribed to.
    pub attnets: BitVector<U64>,
    /// The sync committee subnets the node is subscribed to.
    pub syncnets: BitVector<U4>,
    /// How many custody groups the node custodies.
    pub custody_group_count: u64,
}

impl Default for MetaData {
    fn default() -> Self {
        Self {
            seq_number: 0,
            attnets: BitVector::new(),
            syncnets: BitVector::new(),
            custody_group_count: 0,
        }
    }
}

/// `BeaconBlocksByRange` v2 request.
///
/// [spec]: phase0/p2p-interface.md#beaconblocksbyrange
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct BlocksByRangeRequest {
    /// First slot of the range.
    pub start_slot: Slot,
    /// Number of slots in the range.
    pub count: u64,
    /// Deprecated; MUST be 1.
    pub step: u64,
}

/// `BlobSidecarsByRange` v1 request.
///
/// [spec]: deneb/p2p-interface.md#blobsidecarsbyrange-v1
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct BlobsByRangeRequest {
    /// First slot of the range.
    pub start_slot: Slot,
    /// Number of slots in the range.
    pub count: u64,
}

/// `DataColumnSidecarsByRange` v1 request.
///
/// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct DataColumnsByRangeRequest {
    /// First slot of the range.
    pub start_slot: Slot,
    /// Number of slots in the range.
    pub count: u64,
    /// The column indices asked for, at most `NUMBER_OF_COLUMNS`.
    pub columns: Vec<u64>,
}

/// `ExecutionPayloadEnvelopesByRange` v1 request.
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct ExecutionPayloadEnvelopesByRangeRequest {
    /// First slot of the range.
    pub start_slot: Slot,
    /// Number of slots in the range.
    pub count: u64,
}

/// `LightClientUpdatesByRange` v1 request.
///
/// [spec]: altair/light-client/p2p-interface.md#lightclientupdatesbyrange
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct LightClientUpdatesByRangeRequest {
    /// First sync committee period of the range.
    pub start_period: u64,
    /// Number of periods, at most `MAX_REQUEST_LIGHT_CLIENT_UPDATES`.
    pub count: u64,
}

/// The eth2 req/resp protocols Arbor speaks, one per message name and version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// `status/2`.
    StatusV2,
    /// `goodbye/1`.
    Goodbye,
    /// `ping/1`.
    Ping,
    /// `metadata/3`.
    MetaDataV3,
    /// `beacon_blocks_by_range/2`.
    BlocksByRangeV2,
    /// `beacon_blocks_by_root/2`.
    BlocksByRootV2,
    /// `blob_sidecars_by_range/1`.
    BlobsByRange,
    /// `blob_sidecars_by_root/1`.
    BlobsByRoot,
    /// `data_column_sidecars_by_range/1`.
    DataColumnsByRange,
    /// `data_column_sidecars_by_root/1`.
    DataColumnsByRoot,
    /// `light_client_bootstrap/1`.
    LightClientBootstrap,
    /// `light_client_updates_by_range/1`.
    LightClientUpdatesByRange,
    /// `light_client_finality_update/1`.
    LightClientFinalityUpdate,
    /// `light_client_optimistic_update/1`.
    LightClientOptimisticUpdate,
    /// `execution_payload_envelopes_by_range/1` (Gloas).
    ExecutionPayloadEnvelopesByRange,
    /// `execution_payload_envelopes_by_root/1` (Gloas).
    ExecutionPayloadEnvelopesByRoot,
}

impl Protocol {
    /// Every protocol, in the order they are offered.
    pub const ALL: [Protocol; 16] = [
        Protocol::StatusV2,
        Protocol::Goodbye,
        Protocol::Ping,
        Protocol::MetaDataV3,
        Protocol::BlocksByRangeV2,
        Protocol::BlocksByRootV2,
        Protocol::BlobsByRange,
        Protocol::BlobsByRoot,
        Protocol::DataColumnsByRange,
        Protocol::DataColumnsByRoot,
        Protocol::LightClientBootstrap,
        Protocol::LightClientUpdatesByRange,
        Protocol::LightClientFinalityUpdate,
        Protocol::LightClientOptimisticUpdate,
        Protocol::ExecutionPayloadEnvelopesByRange,
        Protocol::ExecutionPayloadEnvelopesByRoot,
    ];

    /// The full protocol id: `/eth2/beacon_chain/req/{message_name}/{version}/ssz_snappy`.
    ///
    /// [spec]: phase0/p2p-interface.md#protocol-identification
    pub const fn protocol_id(self) -> &'static str {
        match self {
            Protocol::StatusV2 => "/eth2/beacon_chain/req/status/2/ssz_snappy",
            Protocol::Goodbye => "/eth2/beacon_chain/req/goodbye/1/ssz_snappy",
            Protocol::Ping => "/eth2/beacon_chain/req/ping/1/ssz_snappy",
            Protocol::MetaDataV3 => "/eth2/beacon_chain/req/metadata/3/ssz_snappy",
            Protocol::BlocksByRangeV2 => {
                "/eth2/beacon_chain/req/beacon_blocks_by_range/2/ssz_snappy"
            }
            Protocol::BlocksByRootV2 => "/eth2/beacon_chain/req/beacon_blocks_by_root/2/ssz_snappy",
            Protocol::BlobsByRange => "/eth2/beacon_chain/req/blob_sidecars_by_range/1/ssz_snappy",
            Protocol::BlobsByRoot => "/eth2/beacon_chain/req/blob_sidecars_by_root/1/ssz_snappy",
            Protocol::DataColumnsByRange => {
                "/eth2/beacon_chain/req/data_column_sidecars_by_range/1/ssz_snappy"
            }
            Protocol::DataColumnsByRoot => {
                "/eth2/beacon_chain/req/data_column_sidecars_by_root/1/ssz_snappy"
            }
            Protocol::LightClientBootstrap => {
                "/eth2/beacon_chain/req/light_client_bootstrap/1/ssz_snappy"
            }
            Protocol::LightClientUpdatesByRange => {
                "/eth2/beacon_chain/req/light_client_updates_by_range/1/ssz_snappy"
            }
            Protocol::LightClientFinalityUpdate => {
                "/eth2/beacon_chain/req/light_client_finality_update/1/ssz_snappy"
            }
            Protocol::LightClientOptimisticUpdate => {
                "/eth2/beacon_chain/req/light_client_optimistic_update/1/ssz_snappy"
            }
            Protocol::ExecutionPayloadEnvelopesByRange => {
                "/eth2/beacon_chain/req/execution_payload_envelopes_by_range/1/ssz_snappy"
            }
            Protocol::ExecutionPayloadEnvelopesByRoot => {
                "/eth2/beacon_chain/req/execution_payload_envelopes_by_root/1/ssz_snappy"
            }
        }
    }

    /// The protocol a negotiated id names.
    pub fn from_protocol_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.protocol_id() == id)
    }

    /// Whether this is one of the light-client protocols, offered only by a node whose
    /// light-client server is on.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#the-reqresp-domain
    pub const fn is_light_client(self) -> bool {
        matches!(
            self,
            Protocol::LightClientBootstrap
                | Protocol::LightClientUpdatesByRange
                | Protocol::LightClientFinalityUpdate
                | Protocol::LightClientOptimisticUpdate
        )
    }

    /// Whether successful response chunks carry 4 context bytes (the fork digest).
    pub const fn has_context_bytes(self) -> bool {
        !matches!(
            self,
            Protocol::StatusV2 | Protocol::Goodbye | Protocol::Ping | Protocol::MetaDataV3
        )
    }

    /// Whether a request carries a body (`GetMetaData` and the light-client update getters do not).
    pub const fn has_request_body(self) -> bool {
        !matches!(
            self,
            Protocol::MetaDataV3
                | Protocol::LightClientFinalityUpdate
                | Protocol::LightClientOptimisticUpdate
        )
    }

    /// The SSZ length bounds `[min, max]` of a request body.
    ///
    /// [spec]: phase0/p2p-interface.md#what-are-ssz-type-size-bounds
    pub fn request_bounds<E: EthSpec>(self, spec: &ChainSpec) -> (usize, usize) {
        let columns = E::NumberOfColumns::to_usize();
        match self {
            Protocol::StatusV2 => fixed(<StatusMessage as Encode>::ssz_fixed_len()),
            Protocol::Goodbye | Protocol::Ping => fixed(8),
            Protocol::MetaDataV3
            | Protocol::LightClientFinalityUpdate
            | Protocol::LightClientOptimisticUpdate => fixed(0),
            Protocol::BlocksByRangeV2 => fixed(24),
            Protocol::BlocksByRootV2 => (0, 32 * spec.max_request_blocks_deneb as usize),
            Protocol::BlobsByRange => fixed(16),
            Protocol::BlobsByRoot => (0, 40 * spec.max_request_blob_sidecars_electra as usize),
            // start_slot, count, offset of `columns`, then the column indices.
            Protocol::DataColumnsByRange => (20, 20 + 8 * columns),
            // Per identifier: an offset, the root, the offset of `columns` and the columns.
            Protocol::DataColumnsByRoot => (
                0,
                spec.max_request_blocks_deneb as usize * (4 + 32 + 4 + 8 * columns),
            ),
            Protocol::LightClientBootstrap => fixed(32),
            Protocol::LightClientUpdatesByRange => fixed(16),
            Protocol::ExecutionPayloadEnvelopesByRange => fixed(16),
            // `ExecutionPayloadEnvelopeRoots`: at most `MAX_REQUEST_PAYLOADS` roots.
            Protocol::ExecutionPayloadEnvelopesByRoot => {
                (0, 32 * spec.max_request_payloads as usize)
            }
        }
    }

    /// The SSZ length bounds `[min, max]` of one successful response chunk.
    pub fn response_bounds(self, spec: &ChainSpec) -> (usize, usize) {
        let max = spec.max_payload_size as usize;
        match self {
            Protocol::StatusV2 => fixed(<StatusMessage as Encode>::ssz_fixed_len()),
            Protocol::Goodbye | Protocol::Ping => fixed(8),
            Protocol::MetaDataV3 => fixed(<MetaData as Encode>::ssz_fixed_len()),
            // The progressive lists of an envelope have no list limit to bound it: the payload
            // size limit does.
            Protocol::ExecutionPayloadEnvelopesByRange
            | Protocol::ExecutionPayloadEnvelopesByRoot => {
                (MIN_SIGNED_EXECUTION_PAYLOAD_ENVELOPE_LEN, max)
            }
            Protocol::BlocksByRangeV2
            | Protocol::BlocksByRootV2
            | Protocol::BlobsByRange
            | Protocol::BlobsByRoot
            | Protocol::DataColumnsByRange
            | Protocol::DataColumnsByRoot
            | Protocol::LightClientBootstrap
            | Protocol::LightClientUpdatesByRange
            | Protocol::LightClientFinalityUpdate
            | Protocol::LightClientOptimisticUpdate => (1, max),
        }
    }
}

const fn fixed(len: usize) -> (usize, usize) {
    (len, len)
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.protocol_id())
    }
}

/// A request of any eth2 req/resp protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Request<E: EthSpec> {
    /// `Status` v2.
    Status(StatusMessage),
    /// `Goodbye` with its reason code.
    Goodbye(u64),
    /// `Ping` with the sender's metadata sequence number.
    Ping(u64),
    /// `GetMetaData` v3.
    MetaData,
    /// `BeaconBlocksByRange` v2.
    BlocksByRange(BlocksByRangeRequest),
    /// `BeaconBlocksByRoot` v2.
    BlocksByRoot(Vec<Root>),
    /// `BlobSidecarsByRange` v1.
    BlobsByRange(BlobsByRangeRequest),
    /// `BlobSidecarsByRoot` v1.
    BlobsByRoot(Vec<BlobIdentifier>),
    /// `DataColumnSidecarsByRange` v1.
    DataColumnsByRange(DataColumnsByRangeRequest),
    /// `DataColumnSidecarsByRoot` v1.
    DataColumnsByRoot(Vec<DataColumnsByRootIdentifier<E>>),
    /// `LightClientBootstrap` for a block root.
    LightClientBootstrap(Root),
    /// `LightClientUpdatesByRange`.
    LightClientUpdatesByRange(LightClientUpdatesByRangeRequest),
    /// `GetLightClientFinalityUpdate`.
    LightClientFinalityUpdate,
    /// `GetLightClientOptimisticUpdate`.
    LightClientOptimisticUpdate,
    /// `ExecutionPayloadEnvelopesByRange` v1.
    ExecutionPayloadEnvelopesByRange(ExecutionPayloadEnvelopesByRangeRequest),
    /// `ExecutionPayloadEnvelopesByRoot` v1: beacon block roots, at most `MAX_REQUEST_PAYLOADS`.
    ExecutionPayloadEnvelopesByRoot(Vec<Root>),
}

impl<E: EthSpec> Request<E> {
    /// The protocol this request is sent on.
    pub fn protocol(&self) -> Protocol {
        match self {
            Request::Status(_) => Protocol::StatusV2,
            Request::Goodbye(_) => Protocol::Goodbye,
            Request::Ping(_) => Protocol::Ping,
            Request::MetaData => Protocol::MetaDataV3,
            Request::BlocksByRange(_) => Protocol::BlocksByRangeV2,
            Request::BlocksByRoot(_) => Protocol::BlocksByRootV2,
            Request::BlobsByRange(_) => Protocol::BlobsByRange,
            Request::BlobsByRoot(_) => Protocol::BlobsByRoot,
            Request::DataColumnsByRange(_) => Protocol::DataColumnsByRange,
            Request::DataColumnsByRoot(_) => Protocol::DataColumnsByRoot,
            Request::LightClientBootstrap(_) => Protocol::LightClientBootstrap,
            Request::LightClientUpdatesByRange(_) => Protocol::LightClientUpdatesByRange,
            Request::LightClientFinalityUpdate => Protocol::LightClientFinalityUpdate,
            Request::LightClientOptimisticUpdate => Protocol::LightClientOptimisticUpdate,
            Request::ExecutionPayloadEnvelopesByRange(_) => {
                Protocol::ExecutionPayloadEnvelopesByRange
            }
            Request::ExecutionPayloadEnvelopesByRoot(_) => {
                Protocol::ExecutionPayloadEnvelopesByRoot
            }
        }
    }

    /// The SSZ body of the request (empty for the body-less getters).
    pub fn as_ssz_bytes(&self) -> Vec<u8> {
        match self {
            Request::Status(status) => status.as_ssz_bytes(),
            Request::Goodbye(value) | Request::Ping(value) => value.as_ssz_bytes(),
            Request::MetaData
            | Request::LightClientFinalityUpdate
            | Request::LightClientOptimisticUpdate => Vec::new(),
            Request::BlocksByRange(req) => req.as_ssz_bytes(),
            Request::BlocksByRoot(roots) => roots.as_ssz_bytes(),
            Request::BlobsByRange(req) => req.as_ssz_bytes(),
            Request::BlobsByRoot(ids) => ids.as_ssz_bytes(),
            Request::DataColumnsByRange(req) => req.as_ssz_bytes(),
            Request::DataColumnsByRoot(ids) => ids.as_ssz_bytes(),
            Request::LightClientBootstrap(root) => root.as_ssz_bytes(),
            Request::LightClientUpdatesByRange(req) => req.as_ssz_bytes(),
            Request::ExecutionPayloadEnvelopesByRange(req) => req.as_ssz_bytes(),
            Request::ExecutionPayloadEnvelopesByRoot(roots) => roots.as_ssz_bytes(),
        }
    }

    /// Decodes a request body received on `protocol`, enforcing the spec's list limits.
    pub fn from_ssz_bytes(
        protocol: Protocol,
        bytes: &[u8],
        spec: &ChainSpec,
    ) -> Result<Self, ssz::DecodeError> {
        let too_many = |what: &str, len: usize, max: u64| {
            ssz::DecodeError::BytesInvalid(format!("{len} {what} exceed the limit of {max}"))
        };
        let columns = E::NumberOfColumns::to_u64();
        Ok(match protocol {
            Protocol::StatusV2 => Request::Status(StatusMessage::from_ssz_bytes(bytes)?),
            Protocol::Goodbye => Request::Goodbye(u64::from_ssz_bytes(bytes)?),
            Protocol::Ping => Request::Ping(u64::from_ssz_bytes(bytes)?),
            Protocol::MetaDataV3 => empty(bytes, Request::MetaData)?,
            Protocol::LightClientFinalityUpdate => {
                empty(bytes, Request::LightClientFinalityUpdate)?
            }
            Protocol::LightClientOptimisticUpdate => {
                empty(bytes, Request::LightClientOptimisticUpdate)?
            }
            Protocol::BlocksByRangeV2 => {
                Request::BlocksByRange(BlocksByRangeRequest::from_ssz_bytes(bytes)?)
            }
            Protocol::BlocksByRootV2 => {
                let roots = Vec::<Root>::from_ssz_bytes(bytes)?;
                if roots.len() as u64 > spec.max_request_blocks_deneb {
                    return Err(too_many(
                        "roots",
                        roots.len(),
                        spec.max_request_blocks_deneb,
                    ));
                }
                Request::BlocksByRoot(roots)
            }
            Protocol::BlobsByRange => {
                Request::BlobsByRange(BlobsByRangeRequest::from_ssz_bytes(bytes)?)
            }
            Protocol::BlobsByRoot => {
                let ids = Vec::<BlobIdentifier>::from_ssz_bytes(bytes)?;
                let max = spec.max_request_blob_sidecars_electra;
                if ids.len() as u64 > max {
                    return Err(too_many("blob identifiers", ids.len(), max));
                }
                Request::BlobsByRoot(ids)
            }
            Protocol::DataColumnsByRange => {
                let req = DataColumnsByRangeRequest::from_ssz_bytes(bytes)?;
                if req.columns.len() as u64 > columns {
                    return Err(too_many("columns", req.columns.len(), columns));
                }
                Request::DataColumnsByRange(req)
            }
            Protocol::DataColumnsByRoot => {
                let ids = ssz::decode_list_of_variable_length_items::<
                    DataColumnsByRootIdentifier<E>,
                    Vec<_>,
                >(bytes, Some(spec.max_request_blocks_deneb as usize))?;
                Request::DataColumnsByRoot(ids)
            }
            Protocol::LightClientBootstrap => {
                Request::LightClientBootstrap(Root::from_ssz_bytes(bytes)?)
            }
            Protocol::LightClientUpdatesByRange => Request::LightClientUpdatesByRange(
                LightClientUpdatesByRangeRequest::from_ssz_bytes(bytes)?,
            ),
            Protocol::ExecutionPayloadEnvelopesByRange => {
                Request::ExecutionPayloadEnvelopesByRange(
                    ExecutionPayloadEnvelopesByRangeRequest::from_ssz_bytes(bytes)?,
                )
            }
            Protocol::ExecutionPayloadEnvelopesByRoot => {
                let roots = Vec::<Root>::from_ssz_bytes(bytes)?;
                if roots.len() as u64 > spec.max_request_payloads {
                    return Err(too_many("roots", roots.len(), spec.max_request_payloads));
                }
                Request::ExecutionPayloadEnvelopesByRoot(roots)
            }
        })
    }

    /// The most successful response chunks a responder may send to this request.
    pub fn max_response_chunks(&self, spec: &ChainSpec) -> u64 {
        let columns = E::NumberOfColumns::to_u64();
        match self {
            Request::Status(_)
            | Request::Goodbye(_)
            | Request::Ping(_)
            | Request::MetaData
            | Request::LightClientBootstrap(_)
            | Request::LightClientFinalityUpdate
            | Request::LightClientOptimisticUpdate => 1,
            Request::BlocksByRange(req) => req.count.min(spec.max_request_blocks_deneb),
            Request::BlocksByRoot(roots) => roots.len() as u64,
            Request::BlobsByRange(req) => req
                .count
                .saturating_mul(spec.max_blobs_per_block_electra)
                .min(spec.max_request_blob_sidecars_electra),
            Request::BlobsByRoot(ids) => ids.len() as u64,
            Request::DataColumnsByRange(req) => req
                .count
                .saturating_mul(req.columns.len() as u64)
                .min(spec.max_request_data_column_sidecars),
            Request::DataColumnsByRoot(ids) => ids
                .iter()
                .map(|id| id.columns.len() as u64)
                .sum::<u64>()
                .min(spec.max_request_data_column_sidecars)
                .min(ids.len() as u64 * columns),
            Request::LightClientUpdatesByRange(req) => {
                req.count.min(MAX_REQUEST_LIGHT_CLIENT_UPDATES)
            }
            // As `BeaconBlocksByRange` v2, and within `SignedExecutionPayloadEnvelopes`.
            Request::ExecutionPayloadEnvelopesByRange(req) => req
                .count
                .min(spec.max_request_blocks_deneb)
                .min(spec.max_request_payloads),
            Request::ExecutionPayloadEnvelopesByRoot(roots) => {
                (roots.len() as u64).min(spec.max_request_payloads)
            }
        }
    }
}

fn empty<T>(bytes: &[u8], value: T) -> Result<T, ssz::DecodeError> {
    if bytes.is_empty() {
        Ok(value)
    } else {
        Err(ssz::DecodeError::InvalidByteLength {
            len: bytes.len(),
            expected: 0,
        })
    }
}

/// One successful response chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseItem<E: EthSpec> {
    /// `Status` v2.
    Status(StatusMessage),
    /// `Goodbye` (echoed reason).
    Goodbye(u64),
    /// `Ping`'s answer: the responder's metadata sequence number.
    Pong(u64),
    /// `MetaData` v3.
    MetaData(MetaData),
    /// A block (`BeaconBlocksByRange`/`ByRoot`).
    Block(Arc<SignedBeaconBlock<E>>),
    /// A blob sidecar (`BlobSidecarsByRange`/`ByRoot`).
    BlobSidecar(Arc<BlobSidecar<E>>),
    /// A data column sidecar (`DataColumnSidecarsByRange`/`ByRoot`).
    DataColumnSidecar(Arc<DataColumnSidecar<E>>),
    /// A light-client bootstrap.
    LightClientBootstrap(Arc<LightClientBootstrap<E>>),
    /// A light-client update.
    LightClientUpdate(Arc<LightClientUpdate<E>>),
    /// A light-client finality update.
    LightClientFinalityUpdate(Arc<LightClientFinalityUpdate<E>>),
    /// A light-client optimistic update.
    LightClientOptimisticUpdate(Arc<LightClientOptimisticUpdate<E>>),
    /// A signed execution payload envelope (`ExecutionPayloadEnvelopesByRange`/`ByRoot`).
    ExecutionPayloadEnvelope(Arc<SignedExecutionPayloadEnvelope<E>>),
}

impl<E: EthSpec> ResponseItem<E> {
    /// Whether this item is a valid answer on `protocol`.
    pub fn fits(&self, protocol: Protocol) -> bool {
        matches!(
            (self, protocol),
            (ResponseItem::Status(_), Protocol::StatusV2)
                | (ResponseItem::Goodbye(_), Protocol::Goodbye)
                | (ResponseItem::Pong(_), Protocol::Ping)
                | (ResponseItem::MetaData(_), Protocol::MetaDataV3)
                | (
                    ResponseItem::Block(_),
                    Protocol::BlocksByRangeV2 | Protocol::BlocksByRootV2
                )
                | (
                    ResponseItem::BlobSidecar(_),
                    Protocol::BlobsByRange | Protocol::BlobsByRoot
                )
                | (
                    ResponseItem::DataColumnSidecar(_),
                    Protocol::DataColumnsByRange | Protocol::DataColumnsByRoot
                )
                | (
                    ResponseItem::LightClientBootstrap(_),
                    Protocol::LightClientBootstrap
                )
                | (
                    ResponseItem::LightClientUpdate(_),
                    Protocol::LightClientUpdatesByRange
                )
                | (
                    ResponseItem::LightClientFinalityUpdate(_),
                    Protocol::LightClientFinalityUpdate
                )
                | (
                    ResponseItem::LightClientOptimisticUpdate(_),
                    Protocol::LightClientOptimisticUpdate
                )
                | (
                    ResponseItem::ExecutionPayloadEnvelope(_),
                    Protocol::ExecutionPayloadEnvelopesByRange
                        | Protocol::ExecutionPayloadEnvelopesByRoot
                )
        )
    }

    /// The SSZ encoding of the item.
    pub fn as_ssz_bytes(&self) -> Vec<u8> {
        match self {
            ResponseItem::Status(status) => status.as_ssz_bytes(),
            ResponseItem::Goodbye(value) | ResponseItem::Pong(value) => value.as_ssz_bytes(),
            ResponseItem::MetaData(metadata) => metadata.as_ssz_bytes(),
            ResponseItem::Block(block) => block.as_ssz_bytes(),
            ResponseItem::BlobSidecar(sidecar) => sidecar.as_ssz_bytes(),
            ResponseItem::DataColumnSidecar(sidecar) => sidecar.as_ssz_bytes(),
            ResponseItem::LightClientBootstrap(item) => item.as_ssz_bytes(),
            ResponseItem::LightClientUpdate(item) => item.as_ssz_bytes(),
            ResponseItem::LightClientFinalityUpdate(item) => item.as_ssz_bytes(),
            ResponseItem::LightClientOptimisticUpdate(item) => item.as_ssz_bytes(),
            ResponseItem::ExecutionPayloadEnvelope(item) => item.as_ssz_bytes(),
        }
    }

    /// The slot whose epoch selects the chunk's context bytes, for the protocols that have them:
    /// a light-client bootstrap's header slot, a light-client update's attested header slot, an
    /// envelope's block slot (its payload's `slot_number`, which envelope verification holds
    /// equal to the slot of `beacon_block_root`'s block; only verified envelopes are served).
    ///
    /// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1,
    /// altair/light-client/p2p-interface.md#the-reqresp-domain,
    /// gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1
    pub fn context_slot(&self) -> Option<Slot> {
        Some(match self {
            ResponseItem::Status(_)
            | ResponseItem::Goodbye(_)
            | ResponseItem::Pong(_)
            | ResponseItem::MetaData(_) => return None,
            ResponseItem::Block(block) => block.slot(),
            ResponseItem::BlobSidecar(sidecar) => match sidecar.as_ref() {
                BlobSidecar::Deneb(s) => s.signed_block_header.message.slot,
                BlobSidecar::Electra(s) => s.signed_block_header.message.slot,
            },
            ResponseItem::DataColumnSidecar(sidecar) => match sidecar.as_ref() {
                DataColumnSidecar::Fulu(s) => s.signed_block_header.message.slot,
                DataColumnSidecar::Gloas(s) => s.slot,
            },
            // The light-client containers take the fork of their (attested) header, not of the
            // signature slot.
            ResponseItem::LightClientBootstrap(item) => light_client_bootstrap_slot(item),
            ResponseItem::LightClientUpdate(item) => light_client_update_attested_slot(item),
            ResponseItem::LightClientFinalityUpdate(item) => {
                light_client_finality_update_attested_slot(item)
            }
            ResponseItem::LightClientOptimisticUpdate(item) => {
                light_client_optimistic_update_attested_slot(item)
            }
            ResponseItem::ExecutionPayloadEnvelope(item) => item.message.payload.slot_number,
        })
    }

    /// Decodes a successful chunk of `protocol` whose context bytes named `fork`.
    pub fn from_ssz_bytes(
        protocol: Protocol,
        fork: types::ForkName,
        bytes: &[u8],
    ) -> Result<Self, ssz::DecodeError> {
        Ok(match protocol {
            Protocol::StatusV2 => ResponseItem::Status(StatusMessage::from_ssz_bytes(bytes)?),
            Protocol::Goodbye => ResponseItem::Goodbye(u64::from_ssz_bytes(bytes)?),
            Protocol::Ping => ResponseItem::Pong(u64::from_ssz_bytes(bytes)?),
            Protocol::MetaDataV3 => ResponseItem::MetaData(MetaData::from_ssz_bytes(bytes)?),
            Protocol::BlocksByRangeV2 | Protocol::BlocksByRootV2 => ResponseItem::Block(Arc::new(
                SignedBeaconBlock::from_ssz_bytes_by_fork(bytes, fork)?,
            )),
            Protocol::BlobsByRange | Protocol::BlobsByRoot => ResponseItem::BlobSidecar(Arc::new(
                BlobSidecar::from_ssz_bytes_by_fork(bytes, fork)?,
            )),
            Protocol::DataColumnsByRange | Protocol::DataColumnsByRoot => {
                ResponseItem::DataColumnSidecar(Arc::new(
                    DataColumnSidecar::from_ssz_bytes_by_fork(bytes, fork)?,
                ))
            }
            Protocol::LightClientBootstrap => ResponseItem::LightClientBootstrap(Arc::new(
                LightClientBootstrap::from_ssz_bytes_by_fork(bytes, fork)?,
            )),
            Protocol::LightClientUpdatesByRange => ResponseItem::LightClientUpdate(Arc::new(
                LightClientUpdate::from_ssz_bytes_by_fork(bytes, fork)?,
            )),
            Protocol::LightClientFinalityUpdate => {
                ResponseItem::LightClientFinalityUpdate(Arc::new(
                    LightClientFinalityUpdate::from_ssz_bytes_by_fork(bytes, fork)?,
                ))
            }
            Protocol::LightClientOptimisticUpdate => {
                ResponseItem::LightClientOptimisticUpdate(Arc::new(
                    LightClientOptimisticUpdate::from_ssz_bytes_by_fork(bytes, fork)?,
                ))
            }
            Protocol::ExecutionPayloadEnvelopesByRange
            | Protocol::ExecutionPayloadEnvelopesByRoot => ResponseItem::ExecutionPayloadEnvelope(
                Arc::new(execution_payload_envelope_by_fork(bytes, fork)?),
            ),
        })
    }
}

/// A `SignedExecutionPayloadEnvelope` under the context bytes of `fork`: the type exists from
/// Gloas on; an earlier fork's digest is refused.
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
fn execution_payload_envelope_by_fork<E: EthSpec>(
    bytes: &[u8],
    fork: types::ForkName,
) -> Result<SignedExecutionPayloadEnvelope<E>, ssz::DecodeError> {
    use types::ForkName;
    match fork {
        ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Electra
        | ForkName::Fulu => Err(ssz::DecodeError::BytesInvalid(format!(
            "no execution payload envelope at {fork}"
        ))),
        ForkName::Gloas => SignedExecutionPayloadEnvelope::from_ssz_bytes(bytes),
    }
}

fn light_client_bootstrap_slot<E: EthSpec>(bootstrap: &LightClientBootstrap<E>) -> Slot {
    match bootstrap {
        LightClientBootstrap::Altair(b) => b.header.beacon.slot,
        LightClientBootstrap::Bellatrix(b) => b.header.beacon.slot,
        LightClientBootstrap::Capella(b) => b.header.beacon.slot,
        LightClientBootstrap::Deneb(b) => b.header.beacon.slot,
        LightClientBootstrap::Electra(b) => b.header.beacon.slot,
        LightClientBootstrap::Fulu(b) => b.header.beacon.slot,
        LightClientBootstrap::Gloas(b) => b.header.beacon.slot,
    }
}

/// `update.attested_header.beacon.slot` of a `LightClientUpdate` of any fork.
pub fn light_client_update_attested_slot<E: EthSpec>(update: &LightClientUpdate<E>) -> Slot {
    match update {
        LightClientUpdate::Altair(u) => u.attested_header.beacon.slot,
        LightClientUpdate::Bellatrix(u) => u.attested_header.beacon.slot,
        LightClientUpdate::Capella(u) => u.attested_header.beacon.slot,
        LightClientUpdate::Deneb(u) => u.attested_header.beacon.slot,
        LightClientUpdate::Electra(u) => u.attested_header.beacon.slot,
        LightClientUpdate::Fulu(u) => u.attested_header.beacon.slot,
        LightClientUpdate::Gloas(u) => u.attested_header.beacon.slot,
    }
}

/// `finality_update.attested_header.beacon.slot` of any fork: it selects the fork digest of the
/// update's gossip topic and of its req/resp context bytes.
///
/// [spec]: altair/light-client/p2p-interface.md#light_client_finality_update
pub fn light_client_finality_update_attested_slot<E: EthSpec>(
    update: &LightClientFinalityUpdate<E>,
) -> Slot {
    match update {
        LightClientFinalityUpdate::Altair(u) => u.attested_header.beacon.slot,
        LightClientFinalityUpdate::Bellatrix(u) => u.attested_header.beacon.slot,
        LightClientFinalityUpdate::Capella(u) => u.attested_header.beacon.slot,
        LightClientFinalityUpdate::Deneb(u) => u.attested_header.beacon.slot,
        LightClientFinalityUpdate::Electra(u) => u.attested_header.beacon.slot,
        LightClientFinalityUpdate::Fulu(u) => u.attested_header.beacon.slot,
        LightClientFinalityUpdate::Gloas(u) => u.attested_header.beacon.slot,
    }
}

/// `optimistic_update.attested_header.beacon.slot` of any fork: it selects the fork digest of
/// the update's gossip topic and of its req/resp context bytes.
///
/// [spec]: altair/light-client/p2p-interface.md#light_client_optimistic_update
pub fn light_client_optimistic_update_attested_slot<E: EthSpec>(
    update: &LightClientOptimisticUpdate<E>,
) -> Slot {
    match update {
        LightClientOptimisticUpdate::Altair(u) => u.attested_header.beacon.slot,
        LightClientOptimisticUpdate::Bellatrix(u) => u.attested_header.beacon.slot,
        LightClientOptimisticUpdate::Capella(u) => u.attested_header.beacon.slot,
        LightClientOptimisticUpdate::Deneb(u) => u.attested_header.beacon.slot,
        LightClientOptimisticUpdate::Electra(u) => u.attested_header.beacon.slot,
        LightClientOptimisticUpdate::Fulu(u) => u.attested_header.beacon.slot,
        LightClientOptimisticUpdate::Gloas(u) => u.attested_header.beacon.slot,
    }
}

/// A response code of a response chunk.
///
/// [spec]: phase0/p2p-interface.md#responding-side
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResponseCode(pub u8);

impl ResponseCode {
    /// `0`: success.
    pub const SUCCESS: Self = Self(0);
    /// `1`: the request was malformed.
    pub const INVALID_REQUEST: Self = Self(1);
    /// `2`: the responder failed to process a valid request.
    pub const SERVER_ERROR: Self = Self(2);
    /// `3`: the responder does not have the requested resource.
    pub const RESOURCE_UNAVAILABLE: Self = Self(3);
    /// `139` (client range): the requester exceeded the responder's rate limit.
    pub const RATE_LIMITED: Self = Self(139);
}

/// An error chunk: a non-zero code and the responder's message (at most 256 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorResponse {
    /// The non-zero response code.
    pub code: ResponseCode,
    /// The `ErrorMessage`, decoded lossily as UTF-8.
    pub message: String,
}

/// A full response: the successful chunks, then an optional terminating error chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Response<E: EthSpec> {
    /// The successful chunks, in order.
    pub items: Vec<ResponseItem<E>>,
    /// The error chunk that ended the stream, if any.
    pub error: Option<ErrorResponse>,
}

impl<E: EthSpec> Response<E> {
    /// A successful response of `items`.
    pub fn success(items: Vec<ResponseItem<E>>) -> Self {
        Self { items, error: None }
    }

    /// An error response without successful chunks.
    pub fn error(code: ResponseCode, message: impl Into<String>) -> Self {
        Self {
            items: Vec::new(),
            error: Some(ErrorResponse {
                code,
                message: message.into(),
            }),
        }
    }
}
