//! Block and payload production at Gloas (ethereum/beacon-APIs after v5.0.0-alpha.2, #580,
//! #624): `GET /eth/v4/validator/blocks/{slot}` (produceBlockV4),
//! `GET /eth/v1/validator/execution_payload_envelopes/{slot}/{beacon_block_root}` (the envelope
//! of a block built here, for the proposer to sign) and
//! `POST /eth/v1/beacon/execution_payload_envelopes` (publishExecutionPayloadEnvelope). A
//! Gloas block is published with `POST /eth/v2/beacon/blocks` ([`crate::production`]).
//!
//! The node self-builds (bids from builders are not taken yet): a v4 block always commits to
//! the local payload, and the envelope and blobs are kept by block root for the envelope's
//! publication through the same node (the stateful flow, `Eth-Blob-Data-Included: false`).
//!
//! [spec]: apis/validator/block.v4.yaml, apis/validator/execution_payload_envelope.yaml,
//! apis/beacon/execution_payload/envelope_post.yaml

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use beacon_api::Encoding;
use beacon_chain::PayloadProcessed;
use beacon_chain::gloas_publication::EnvelopePublishError;
use serde::Serialize;
use ssz::Encode;
use ssz_derive::Encode as DeriveEncode;
use types::{
    BLSSignature, BeaconBlock, Bytes32, EthSpec, ForkName, KZGProof, Root, Slot,
    gloas::{ExecutionPayloadEnvelope, SignedExecutionPayloadEnvelope},
};

use crate::ApiContext;
use crate::error::HttpError;
use crate::query::{Body, PathParams, Query, parse_path};
use crate::response::{JSON_OR_SSZ, accept, json_bytes, ssz_bytes, with_version};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// `Eth-Execution-Payload-Included`.
pub(crate) const EXECUTION_PAYLOAD_INCLUDED_HEADER: &str = "eth-execution-payload-included";
/// `Eth-Blob-Data-Included`.
pub(crate) const BLOB_DATA_INCLUDED_HEADER: &str = "eth-blob-data-included";
/// `Eth-Consensus-Block-Value`.
const CONSENSUS_BLOCK_VALUE_HEADER: &str = "eth-consensus-block-value";

/// The Gloas `BlockContents` of a self-built block: the block, its payload's envelope
/// (unsigned), and the blobs with their cell proofs.
///
/// [spec]: types/gloas/block_contents.yaml
#[derive(Debug, Clone, Serialize, DeriveEncode)]
#[serde(bound = "E: EthSpec")]
struct GloasBlockContents<E: EthSpec> {
    block: types::gloas::BeaconBlock<E>,
    execution_payload_envelope: ExecutionPayloadEnvelope<E>,
    kzg_proofs: Vec<KZGProof>,
    #[serde(with = "beacon_api::json::list_of_hex_fixed_vec")]
    blobs: beacon_api::block_contents::Blobs<E>,
}

/// A `true`/`false` flag of the query (`true`, `false`; absent is `None`).
fn bool_param(query: &Query, name: &str) -> Result<Option<bool>, HttpError> {
    match query.get(name) {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(other) => Err(HttpError::bad_request(format!("invalid {name} {other:?}"))),
    }
}

/// `GET /eth/v4/validator/blocks/{slot}?randao_reveal=..&graffiti=..&skip_randao_verification&include_payload=..&builder_boost_factor=..`.
pub(crate) async fn get_block_v4<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let slot: Slot = parse_path("slot", path.at(0)?)?;
    let randao_reveal: BLSSignature = query.required("randao_reveal")?;
    let graffiti: Option<Bytes32> = query.parse("graffiti")?;
    // Without builders' bids the local payload is chosen at any factor; the value is still
    // checked to be a u64, as the endpoint requires.
    let _builder_boost_factor: Option<u64> = query.parse("builder_boost_factor")?;
    let include_payload = bool_param(&query, "include_payload")?
        .ok_or_else(|| HttpError::bad_request("missing query parameter include_payload"))?;
    let skip_randao_verification = crate::production::skip_randao_verification(&query)?;
    let fork = ctx.chain.spec().fork_name_at_slot::<E>(slot);
    if fork != ForkName::Gloas {
        return Err(HttpError::bad_request(format!(
            "produceBlockV4 is for Gloas slots; slot {slot} is in {fork} (use v3)"
        )));
    }
    let now = ctx
        .chain
        .now_ms()
        .saturating_add(ctx.chain.spec().maximum_gossip_clock_disparity);
    let clock_slot = ctx.chain.slot_at_ms(now);
    if slot > clock_slot.saturating_add(1) {
        return Err(HttpError::bad_request(format!(
            "slot {slot} is in the future (current slot {clock_slot})"
        )));
    }
    let produced = ctx
        .producer
        .produce_gloas_block(slot, randao_reveal, graffiti, skip_randao_verification)
        .await
        .map_err(crate::production::production_error)?;
    ctx.record_live(slot / E::slots_per_epoch(), [produced.proposer_index]);
    let BeaconBlock::Gloas(block) = produced.block else {
        return Err(HttpError::internal(format!(
            "produced a {} block at a Gloas slot",
            produced.block.fork_name()
        )));
    };
    let contents = if include_payload {
        let envelope = ctx
            .producer
            .produce_execution_payload_envelope(&produced.block_root)
            .ok_or_else(|| HttpError::internal("the produced block's payload was not kept"))?;
        Some(GloasBlockContents {
            block: block.clone(),
            execution_payload_envelope: envelope,
            kzg_proofs: produced.kzg_proofs,
            blobs: produced.blobs,
        })
    } else {
        None
    };
    let value = produced.consensus_block_value;
    let workers = ctx.workers();
    crate::workers::run_blocking(
        workers,
        crate::ApiPriority::P0,
        move || -> Result<Response, HttpError> {
            let mut response = match encoding {
                Encoding::Ssz => match &contents {
                    Some(contents) => ssz_bytes(contents.as_ssz_bytes()),
                    None => ssz_bytes(block.as_ssz_bytes()),
                },
                Encoding::Json => {
                    let data = match &contents {
                        Some(contents) => serde_json::to_vec(contents),
                        None => serde_json::to_vec(&block),
                    }
                    .map_err(|e| HttpError::internal(format!("cannot encode the block: {e}")))?;
                    let head = format!(
                        r#"{{"version":"gloas","consensus_block_value":"{value}","execution_payload_included":{},"data":"#,
                        contents.is_some()
                    );
                    let mut body = Vec::with_capacity(head.len() + data.len() + 1);
                    body.extend_from_slice(head.as_bytes());
                    body.extend_from_slice(&data);
                    body.push(b'}');
                    json_bytes(body)
                }
            };
            let headers = response.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&value.to_string()) {
                headers.insert(CONSENSUS_BLOCK_VALUE_HEADER, v);
            }
            headers.insert(
                EXECUTION_PAYLOAD_INCLUDED_HEADER,
                HeaderValue::from_static(if contents.is_some() { "true" } else { "false" }),
            );
            Ok(with_version(response, ForkName::Gloas))
        },
    )
    .await
}

/// `GET /eth/v1/validator/execution_payload_envelopes/{slot}/{beacon_block_root}`: the
/// envelope of the block built here at `slot` with that root; 404 for any other.
pub(crate) async fn get_execution_payload_envelope<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let slot: Slot = parse_path("slot", path.at(0)?)?;
    let root: Root = parse_path("beacon_block_root", path.at(1)?)?;
    let envelope = ctx
        .producer
        .built_gloas_payload(&root)
        .filter(|b| b.slot == slot)
        .map(|b| b.envelope(root))
        .ok_or_else(|| {
            HttpError::NotFound(format!(
                "no execution payload envelope built here for block {root} at slot {slot}"
            ))
        })?;
    let response = match encoding {
        Encoding::Ssz => ssz_bytes(envelope.as_ssz_bytes()),
        Encoding::Json => {
            let data = serde_json::to_vec(&envelope)
                .map_err(|e| HttpError::internal(format!("cannot encode the envelope: {e}")))?;
            let mut body = br#"{"version":"gloas","data":"#.to_vec();
            body.extend_from_slice(&data);
            body.push(b'}');
            json_bytes(body)
        }
    };
    Ok(with_version(response, ForkName::Gloas))
}

/// `POST /eth/v1/beacon/execution_payload_envelopes?broadcast_validation=..`: a
/// `SignedExecutionPayloadEnvelope` (`Eth-Blob-Data-Included: false`) of a block built here,
/// in JSON or SSZ. 200 when imported (the block FULL) or waiting for nothing more, 202 when
/// broadcast but not imported, 400 when refused before the broadcast.
pub(crate) async fn post_execution_payload_envelope<E: EthSpec>(
    State(ctx): Ctx<E>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let fork = body.required_fork()?;
    if fork != ForkName::Gloas {
        return Err(HttpError::bad_request(format!(
            "execution payload envelopes exist from Gloas on, not at {fork}"
        )));
    }
    let blob_data_included = headers
        .get(BLOB_DATA_INCLUDED_HEADER)
        .ok_or_else(|| HttpError::bad_request("missing header Eth-Blob-Data-Included"))?;
    match blob_data_included.to_str() {
        Ok("false") => {}
        Ok("true") => {
            // The stateless flow (the envelope with blobs and proofs, for a node that did not
            // build the block): not supported by this node yet.
            return Err(HttpError::bad_request(
                "Eth-Blob-Data-Included: true (SignedExecutionPayloadEnvelopeContents) is not \
                 supported: publish the signed envelope alone through the node that produced \
                 the block",
            ));
        }
        _ => {
            return Err(HttpError::bad_request(
                "invalid header Eth-Blob-Data-Included (true or false)",
            ));
        }
    }
    let envelope: SignedExecutionPayloadEnvelope<E> = match body.encoding {
        Encoding::Json => serde_json::from_slice(&body.bytes)
            .map_err(|e| HttpError::bad_request(format!("invalid envelope: {e}")))?,
        Encoding::Ssz => {
            <SignedExecutionPayloadEnvelope<E> as ssz::Decode>::from_ssz_bytes(&body.bytes)
                .map_err(|e| HttpError::bad_request(format!("invalid SSZ envelope: {e:?}")))?
        }
    };
    let published = ctx
        .producer
        .publish_execution_payload_envelope(Arc::new(envelope), ctx.network.as_ref())
        .await;
    let status = match published {
        Ok(published) => match published.outcome {
            PayloadProcessed::Imported(_)
            | PayloadProcessed::AlreadyImported(_)
            | PayloadProcessed::NotHeld(_) => StatusCode::OK,
            PayloadProcessed::Pending(_) => StatusCode::ACCEPTED,
        },
        // Broadcast, then the import failed: the spec's 202.
        Err(EnvelopePublishError::Import(e)) => {
            tracing::info!(error = %e, "envelope broadcast but not imported");
            StatusCode::ACCEPTED
        }
        Err(EnvelopePublishError::Workers(e)) => {
            return Err(HttpError::Unavailable(e.to_string()));
        }
        Err(
            e @ (EnvelopePublishError::Gossip(_)
            | EnvelopePublishError::NoBuiltBlobs(_)
            | EnvelopePublishError::Columns(_)),
        ) => return Err(HttpError::bad_request(e)),
    };
    Ok(with_version(status.into_response(), ForkName::Gloas))
}
