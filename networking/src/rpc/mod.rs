//! eth2 req/resp: protocols, messages and the `ssz_snappy` codec.
//!
//! [spec]: phase0/p2p-interface.md#the-reqresp-domain, gloas/p2p-interface.md#the-reqresp-domain

pub mod codec;
pub mod methods;

pub use codec::RpcCodecError;
pub use methods::{
    BlobsByRangeRequest, BlocksByRangeRequest, DataColumnsByRangeRequest, ErrorResponse,
    ExecutionPayloadEnvelopesByRangeRequest, LightClientUpdatesByRangeRequest,
    MIN_SIGNED_EXECUTION_PAYLOAD_ENVELOPE_LEN, MetaData, Protocol, Request, Response, ResponseCode,
    ResponseItem, StatusMessage, light_client_finality_update_attested_slot,
    light_client_optimistic_update_attested_slot, light_client_update_attested_slot,
};
