//! Req/resp requests served from the store, on the processor's `rpc_*` kinds: Status,
//! BeaconBlocksByRange / ByRoot v2, DataColumnSidecarsByRange / ByRoot v1 (only the columns the
//! node custodies), ExecutionPayloadEnvelopesByRange / ByRoot v1 (Gloas: the chain's reads,
//! `beacon_chain::envelope_reads`, translated), within the spec's limits, and the light-client
//! server's bootstraps, best
//! updates by range and latest finality and optimistic updates (ResourceUnavailable where it
//! holds none). A request the processor drops is answered with a server error, never left to
//! time out.
//!
//! [spec]: phase0/p2p-interface.md#the-reqresp-domain, fulu/p2p-interface.md#the-reqresp-domain,
//! gloas/p2p-interface.md#the-reqresp-domain,
//! altair/light-client/p2p-interface.md#the-reqresp-domain

use std::collections::BTreeSet;
use std::sync::Arc;

use beacon_chain::EnvelopeRequestError;
use beacon_processor::{Task, WorkKind};
use networking::rpc::{
    BlocksByRangeRequest, DataColumnsByRangeRequest, ExecutionPayloadEnvelopesByRangeRequest,
    LightClientUpdatesByRangeRequest, Protocol, Request, Response, ResponseCode, ResponseItem,
};
use networking::{InboundRequestId, PeerId};
use types::fulu::DataColumnsByRootIdentifier;
use types::{EthSpec, Root, Slot};

use crate::gossip::submit;
use crate::{Internal, Processor, Router, status};

/// The metric label of a protocol.
fn protocol_label(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::StatusV2 => "status",
        Protocol::Goodbye => "goodbye",
        Protocol::Ping => "ping",
        Protocol::MetaDataV3 => "metadata",
        Protocol::BlocksByRangeV2 => "beacon_blocks_by_range",
        Protocol::BlocksByRootV2 => "beacon_blocks_by_root",
        Protocol::BlobsByRange => "blob_sidecars_by_range",
        Protocol::BlobsByRoot => "blob_sidecars_by_root",
        Protocol::DataColumnsByRange => "data_column_sidecars_by_range",
        Protocol::DataColumnsByRoot => "data_column_sidecars_by_root",
        Protocol::LightClientBootstrap => "light_client_bootstrap",
        Protocol::LightClientUpdatesByRange => "light_client_updates_by_range",
        Protocol::LightClientFinalityUpdate => "light_client_finality_update",
        Protocol::LightClientOptimisticUpdate => "light_client_optimistic_update",
        Protocol::ExecutionPayloadEnvelopesByRange => "execution_payload_envelopes_by_range",
        Protocol::ExecutionPayloadEnvelopesByRoot => "execution_payload_envelopes_by_root",
    }
}

fn result_label<E: EthSpec>(response: &Response<E>) -> &'static str {
    match &response.error {
        None => "success",
        Some(e) if e.code == ResponseCode::INVALID_REQUEST => "invalid_request",
        Some(e) if e.code == ResponseCode::RESOURCE_UNAVAILABLE => "resource_unavailable",
        Some(e) if e.code == ResponseCode::RATE_LIMITED => "rate_limited",
        Some(_) => "server_error",
    }
}

/// Sends `response` and counts it.
fn answer<E: EthSpec>(
    router: &Router<E>,
    protocol: Protocol,
    request_id: InboundRequestId,
    response: Response<E>,
) {
    let label = protocol_label(protocol);
    router
        .metrics
        .rpc_served
        .with_label_values(&[label, result_label(&response)])
        .inc();
    router
        .metrics
        .rpc_chunks
        .with_label_values(&[label])
        .inc_by(response.items.len() as u64);
    router.network.send_response(request_id, response);
}

/// Hands a peer's request to the processor as the work of its protocol; answers at once what
/// needs no chain (protocols this node does not serve).
pub(crate) fn route_request<E: EthSpec>(
    router: &Arc<Router<E>>,
    processor: &Processor<E>,
    peer_id: PeerId,
    request_id: InboundRequestId,
    request: Request<E>,
) {
    let protocol = request.protocol();
    let kind = match &request {
        Request::Status(_) => WorkKind::RpcStatus,
        Request::BlocksByRange(_) => WorkKind::RpcBlocksByRangeRequest,
        Request::BlocksByRoot(_) => WorkKind::RpcBlocksByRootRequest,
        Request::DataColumnsByRange(_) => WorkKind::RpcDataColumnsByRangeRequest,
        Request::DataColumnsByRoot(_) => WorkKind::RpcDataColumnsByRootRequest,
        // An envelope carries what a block carried before Gloas: the blocks' kinds.
        Request::ExecutionPayloadEnvelopesByRange(_) => WorkKind::RpcBlocksByRangeRequest,
        Request::ExecutionPayloadEnvelopesByRoot(_) => WorkKind::RpcBlocksByRootRequest,
        Request::LightClientBootstrap(_)
        | Request::LightClientUpdatesByRange(_)
        | Request::LightClientFinalityUpdate
        | Request::LightClientOptimisticUpdate => WorkKind::RpcLightClientRequest,
        // Blob sidecars belong to pre-Fulu forks this node does not serve.
        Request::BlobsByRange(_) | Request::BlobsByRoot(_) => {
            let response = Response::error(
                ResponseCode::RESOURCE_UNAVAILABLE,
                "not served by this node",
            );
            answer(router, protocol, request_id, response);
            return;
        }
        // Answered by the network service itself; never handed over.
        Request::Goodbye(_) | Request::Ping(_) | Request::MetaData => {
            answer(
                router,
                protocol,
                request_id,
                Response::error(ResponseCode::SERVER_ERROR, "unexpected request"),
            );
            return;
        }
    };
    let on_run = router.clone();
    let on_drop = router.clone();
    let task = Task::new(kind, move |_| {
        let response = match request {
            Request::Status(status) => {
                on_run.send_internal(Internal::PeerStatus { peer_id, status });
                Response::success(vec![ResponseItem::Status(status::local_status(&on_run))])
            }
            Request::BlocksByRange(req) => blocks_by_range(&on_run, &req),
            Request::BlocksByRoot(roots) => blocks_by_root(&on_run, &roots),
            Request::DataColumnsByRange(req) => data_columns_by_range(&on_run, &req),
            Request::DataColumnsByRoot(ids) => data_columns_by_root(&on_run, &ids),
            Request::LightClientBootstrap(root) => light_client_bootstrap(&on_run, &root),
            Request::LightClientUpdatesByRange(req) => light_client_updates_by_range(&on_run, &req),
            Request::LightClientFinalityUpdate => light_client_finality_update(&on_run),
            Request::LightClientOptimisticUpdate => light_client_optimistic_update(&on_run),
            Request::ExecutionPayloadEnvelopesByRange(req) => {
                execution_payload_envelopes_by_range(&on_run, &req)
            }
            Request::ExecutionPayloadEnvelopesByRoot(roots) => {
                execution_payload_envelopes_by_root(&on_run, &roots)
            }
            _ => Response::error(ResponseCode::SERVER_ERROR, "unexpected request"),
        };
        answer(&on_run, protocol, request_id, response);
    })
    .on_drop(move |_| {
        answer(
            &on_drop,
            protocol,
            request_id,
            Response::error(ResponseCode::SERVER_ERROR, "node overloaded"),
        );
    });
    submit(processor, task);
}

fn server_error<E: EthSpec>(e: store::StoreError) -> Response<E> {
    tracing::warn!(error = %e, "store read failed while serving a request");
    Response::error(ResponseCode::SERVER_ERROR, "database error")
}

/// The canonical chain's block roots in `[start, end)` in slot order
/// (`BeaconChain::canonical_block_roots`).
pub fn canonical_block_roots<E: EthSpec>(
    router: &Router<E>,
    start: Slot,
    end: Slot,
) -> Result<Vec<(Slot, Root)>, store::StoreError> {
    router.chain.canonical_block_roots(start, end)
}

/// `BeaconBlocksByRange` v2: the canonical blocks of `[start_slot, start_slot + count)`, at
/// most `MAX_REQUEST_BLOCKS_DENEB`, from the earliest slot the node serves on.
///
/// [spec]: phase0/p2p-interface.md#beaconblocksbyrange
pub fn blocks_by_range<E: EthSpec>(router: &Router<E>, req: &BlocksByRangeRequest) -> Response<E> {
    if req.count == 0 || req.step != 1 {
        return Response::error(
            ResponseCode::INVALID_REQUEST,
            "count must be > 0 and step 1",
        );
    }
    let count = req.count.min(router.chain.spec().max_request_blocks_deneb);
    let end = req.start_slot.saturating_add(count);
    if end <= router.earliest_available_slot() {
        return Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "blocks before the earliest available slot",
        );
    }
    let start = req.start_slot.max(router.earliest_available_slot());
    let roots = match canonical_block_roots(router, start, end) {
        Ok(roots) => roots,
        Err(e) => return server_error(e),
    };
    let mut items = Vec::with_capacity(roots.len());
    for (_, root) in roots {
        match router.chain.store().get_block(&root) {
            Ok(Some(block)) => items.push(ResponseItem::Block(Arc::new(block))),
            // Pruned or never stored: the range ends where the store's blocks end.
            Ok(None) => break,
            Err(e) => return server_error(e),
        }
    }
    Response::success(items)
}

/// `BeaconBlocksByRoot` v2: the blocks the store holds of `roots` (at most
/// `MAX_REQUEST_BLOCKS_DENEB`, which the decoder enforces), in request order.
///
/// [spec]: phase0/p2p-interface.md#beaconblocksbyroot
pub fn blocks_by_root<E: EthSpec>(router: &Router<E>, roots: &[Root]) -> Response<E> {
    let max = router.chain.spec().max_request_blocks_deneb as usize;
    let mut items = Vec::new();
    for root in roots.iter().take(max) {
        match router.chain.store().get_block(root) {
            Ok(Some(block)) => items.push(ResponseItem::Block(Arc::new(block))),
            Ok(None) => {}
            Err(e) => return server_error(e),
        }
    }
    Response::success(items)
}

/// `DataColumnSidecarsByRange` v1: the custody columns asked for of the canonical blocks of the
/// range, by slot then column, at most `MAX_REQUEST_DATA_COLUMN_SIDECARS`.
///
/// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1
pub fn data_columns_by_range<E: EthSpec>(
    router: &Router<E>,
    req: &DataColumnsByRangeRequest,
) -> Response<E> {
    if req.count == 0 {
        return Response::error(ResponseCode::INVALID_REQUEST, "count must be > 0");
    }
    let spec = router.chain.spec();
    let max = spec.max_request_data_column_sidecars as usize;
    let wanted: BTreeSet<u64> = req
        .columns
        .iter()
        .copied()
        .filter(|c| router.custody.contains(c))
        .collect();
    let count = req.count.min(spec.max_request_blocks_deneb);
    let end = req.start_slot.saturating_add(count);
    let start = req.start_slot.max(router.earliest_available_slot());
    if wanted.is_empty() || start >= end {
        return Response::success(Vec::new());
    }
    let roots = match canonical_block_roots(router, start, end) {
        Ok(roots) => roots,
        Err(e) => return server_error(e),
    };
    let mut items = Vec::new();
    'blocks: for (_, root) in roots {
        for &index in &wanted {
            if items.len() >= max {
                break 'blocks;
            }
            match router.chain.store().get_data_column(&root, index) {
                Ok(Some(column)) => items.push(ResponseItem::DataColumnSidecar(Arc::new(column))),
                Ok(None) => {}
                Err(e) => return server_error(e),
            }
        }
    }
    Response::success(items)
}

/// `DataColumnSidecarsByRoot` v1: of each identifier's columns, those the node custodies and
/// holds, at most `MAX_REQUEST_DATA_COLUMN_SIDECARS` in all.
///
/// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyroot-v1
pub fn data_columns_by_root<E: EthSpec>(
    router: &Router<E>,
    ids: &[DataColumnsByRootIdentifier<E>],
) -> Response<E> {
    let max = router.chain.spec().max_request_data_column_sidecars as usize;
    let mut items = Vec::new();
    'ids: for id in ids {
        let wanted: BTreeSet<u64> = id
            .columns
            .iter()
            .copied()
            .filter(|c| router.custody.contains(c))
            .collect();
        for index in wanted {
            if items.len() >= max {
                break 'ids;
            }
            match router.chain.store().get_data_column(&id.block_root, index) {
                Ok(Some(column)) => items.push(ResponseItem::DataColumnSidecar(Arc::new(column))),
                Ok(None) => {}
                Err(e) => return server_error(e),
            }
        }
    }
    Response::success(items)
}

/// `ExecutionPayloadEnvelopesByRange` v1: the envelopes of the canonical chain's payloads in
/// the range (`BeaconChain::execution_payload_envelopes_by_range`), from the earliest slot the
/// node serves on; `count` 0 is an invalid request, a range wholly before the slots served
/// (after the Gloas fork) `ResourceUnavailable`, as for blocks.
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1
pub fn execution_payload_envelopes_by_range<E: EthSpec>(
    router: &Router<E>,
    req: &ExecutionPayloadEnvelopesByRangeRequest,
) -> Response<E> {
    match router.chain.execution_payload_envelopes_by_range(
        req.start_slot,
        req.count,
        router.earliest_available_slot(),
    ) {
        Ok(envelopes) => Response::success(
            envelopes
                .into_iter()
                .map(ResponseItem::ExecutionPayloadEnvelope)
                .collect(),
        ),
        Err(EnvelopeRequestError::ZeroCount) => {
            Response::error(ResponseCode::INVALID_REQUEST, "count must be > 0")
        }
        Err(EnvelopeRequestError::Unavailable { .. }) => Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "envelopes before the earliest slot served",
        ),
        Err(EnvelopeRequestError::Store(e)) => server_error(e),
    }
}

/// `ExecutionPayloadEnvelopesByRoot` v1: the envelopes the node holds of `roots` (at most
/// `MAX_REQUEST_PAYLOADS`, which the decoder enforces), in request order, unknown ones and those
/// before the serving window left out (`BeaconChain::execution_payload_envelopes_by_root`).
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
pub fn execution_payload_envelopes_by_root<E: EthSpec>(
    router: &Router<E>,
    roots: &[Root],
) -> Response<E> {
    match router.chain.execution_payload_envelopes_by_root(roots) {
        Ok(envelopes) => Response::success(
            envelopes
                .into_iter()
                .map(ResponseItem::ExecutionPayloadEnvelope)
                .collect(),
        ),
        Err(e) => server_error(e),
    }
}

fn light_client_error<E: EthSpec>(e: beacon_chain::ChainError) -> Response<E> {
    tracing::warn!(error = %e, "light-client data unreadable while serving a request");
    Response::error(ResponseCode::SERVER_ERROR, "light-client data error")
}

/// `GetLightClientBootstrap`: the bootstrap of a block root the light-client server holds one
/// for (a finalized epoch boundary block, or the anchor), else ResourceUnavailable.
///
/// [spec]: altair/light-client/p2p-interface.md#getlightclientbootstrap
pub fn light_client_bootstrap<E: EthSpec>(router: &Router<E>, block_root: &Root) -> Response<E> {
    match router.chain.light_client_bootstrap(block_root) {
        Ok(Some(bootstrap)) => Response::success(vec![ResponseItem::LightClientBootstrap(
            Arc::new(bootstrap),
        )]),
        Ok(None) => Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "no light-client bootstrap for this block root",
        ),
        Err(e) => light_client_error(e),
    }
}

/// `LightClientUpdatesByRange`: the best update of each period of
/// `[start_period, start_period + count)` the server holds, consecutive from the earliest, at
/// most `MAX_REQUEST_LIGHT_CLIENT_UPDATES` (zero chunks when it holds none).
///
/// [spec]: altair/light-client/p2p-interface.md#lightclientupdatesbyrange
pub fn light_client_updates_by_range<E: EthSpec>(
    router: &Router<E>,
    req: &LightClientUpdatesByRangeRequest,
) -> Response<E> {
    match router
        .chain
        .light_client_updates_by_range(req.start_period, req.count)
    {
        Ok(updates) => Response::success(
            updates
                .into_iter()
                .map(|u| ResponseItem::LightClientUpdate(Arc::new(u)))
                .collect(),
        ),
        Err(e) => light_client_error(e),
    }
}

/// `GetLightClientFinalityUpdate`: the latest finality update, else ResourceUnavailable.
///
/// [spec]: altair/light-client/p2p-interface.md#getlightclientfinalityupdate
pub fn light_client_finality_update<E: EthSpec>(router: &Router<E>) -> Response<E> {
    match router.chain.light_client_finality_update() {
        Ok(Some(update)) => Response::success(vec![ResponseItem::LightClientFinalityUpdate(
            Arc::new(update),
        )]),
        Ok(None) => Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "no light-client finality update",
        ),
        Err(e) => light_client_error(e),
    }
}

/// `GetLightClientOptimisticUpdate`: the latest optimistic update, else ResourceUnavailable.
///
/// [spec]: altair/light-client/p2p-interface.md#getlightclientoptimisticupdate
pub fn light_client_optimistic_update<E: EthSpec>(router: &Router<E>) -> Response<E> {
    match router.chain.light_client_optimistic_update() {
        Ok(Some(update)) => Response::success(vec![ResponseItem::LightClientOptimisticUpdate(
            Arc::new(update),
        )]),
        Ok(None) => Response::error(
            ResponseCode::RESOURCE_UNAVAILABLE,
            "no light-client optimistic update",
        ),
        Err(e) => light_client_error(e),
    }
}
