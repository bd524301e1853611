//! The builder side of the Beacon API: `registerValidator` forwarded to the relay, the blinded
//! answer of `produceBlockV3`, `publishBlindedBlock` (v1) / `publishBlindedBlockV2`, which
//! unblind through the relay and publish like `publishBlockV2`, and `getBlindedBlock`, a stored
//! block with its payload replaced by the payload's header.
//!
//! [spec]: apis/validator/register_validator.yaml, apis/validator/block.v3.yaml,
//! apis/beacon/blocks/blinded_blocks.yaml, apis/beacon/blocks/blinded_blocks.v2.yaml,
//! apis/beacon/blocks/blinded_block.yaml

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use beacon_api::{Encoding, ProduceBlockV3Metadata, SignedValidatorRegistrationV1};
use beacon_chain::{
    BlindedPublication, BlindedPublishError, BroadcastValidation, ProducedBlindedBlock,
    PublishOutcome,
};
use builder_client::{BlindedBeaconBlock, BuilderError, SignedBlindedBeaconBlock};
use ssz::{Decode, Encode};
use types::{EthSpec, ForkName, SignedBeaconBlock};

use crate::ApiContext;
use crate::error::HttpError;
use crate::production::{broadcast_validation, publish_error};
use crate::query::{Body, PathParams, Query, parse_path};
use crate::response::{
    JSON_OR_SSZ, accept, blocking, json, json_bytes, ok_empty, ssz_bytes, with_version,
};
use crate::state_id::{block_at, read_block};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// `POST /eth/v1/validator/register_validator` (JSON or SSZ list): kept, and forwarded to the
/// relay when one is configured. A relay that fails is logged, not the caller's error: the
/// registrations are kept here and the validator client sends them again every epoch.
pub(crate) async fn post_register_validator<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let registrations: Vec<SignedValidatorRegistrationV1> = body.decode()?;
    {
        let mut kept = ctx.registrations.lock();
        for r in &registrations {
            kept.insert(r.message.pubkey, r.clone());
        }
    }
    match ctx.producer.register_validators(&registrations).await {
        Ok(kept) if kept < registrations.len() => tracing::debug!(
            kept,
            ignored = registrations.len() - kept,
            "registrations of validators neither active nor pending were not forwarded"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(
            count = registrations.len(),
            error = %e,
            "the relay refused or missed the validator registrations"
        ),
    }
    Ok(ok_empty())
}

/// The `produceBlockV3` answer for a blinded block: the `BlindedBeaconBlock` in SSZ, or in
/// JSON with the metadata beside `data`, and the metadata headers.
pub(crate) fn blinded_block_v3_response<E: EthSpec>(
    encoding: Encoding,
    produced: ProducedBlindedBlock<E>,
) -> Result<Response, HttpError> {
    let metadata = ProduceBlockV3Metadata {
        consensus_version: produced.fork,
        execution_payload_blinded: true,
        execution_payload_value: produced.execution_payload_value,
        consensus_block_value: produced.consensus_block_value,
    };
    let mut response = match encoding {
        Encoding::Ssz => ssz_bytes(produced.block.as_ssz_bytes()),
        Encoding::Json => {
            let body = serde_json::json!({
                "version": produced.fork.as_str(),
                "execution_payload_blinded": true,
                "execution_payload_value": produced.execution_payload_value.to_string(),
                "consensus_block_value": produced.consensus_block_value.to_string(),
                "data": produced.block,
            });
            json_bytes(
                serde_json::to_vec(&body)
                    .map_err(|e| HttpError::internal(format!("cannot encode the block: {e}")))?,
            )
        }
    };
    for (name, value) in metadata.to_headers() {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    Ok(response)
}

fn blinded_publish_error(e: BlindedPublishError) -> HttpError {
    match e {
        BlindedPublishError::NoBuilder
        | BlindedPublishError::UnsupportedFork(_)
        | BlindedPublishError::InvalidSignature => HttpError::bad_request(e),
        // The relay refused the block itself.
        BlindedPublishError::Builder(BuilderError::Status { status, .. })
            if status == StatusCode::BAD_REQUEST =>
        {
            HttpError::bad_request(e)
        }
        // The relay failed or revealed something else: the block cannot be published now.
        BlindedPublishError::Builder(_) | BlindedPublishError::Unblind(_) => {
            HttpError::Unavailable(e.to_string())
        }
        BlindedPublishError::Publish(e) => publish_error(e),
    }
}

/// A `SignedBlindedBeaconBlock` body of `fork`, JSON or SSZ.
fn decode_blinded<E: EthSpec>(
    body: &Body,
    fork: ForkName,
) -> Result<SignedBlindedBeaconBlock<E>, HttpError> {
    if fork < ForkName::Electra {
        return Err(HttpError::bad_request(format!(
            "blinded blocks are published here from Electra on, not at {fork}"
        )));
    }
    match body.encoding {
        Encoding::Json => serde_json::from_slice(&body.bytes)
            .map_err(|e| HttpError::bad_request(format!("invalid blinded block: {e}"))),
        Encoding::Ssz => SignedBlindedBeaconBlock::from_ssz_bytes(&body.bytes)
            .map_err(|e| HttpError::bad_request(format!("invalid SSZ blinded block: {e:?}"))),
    }
}

async fn publish_blinded<E: EthSpec>(
    ctx: &ApiContext<E>,
    block: SignedBlindedBeaconBlock<E>,
    fork: ForkName,
    validation: BroadcastValidation,
) -> Result<Response, HttpError> {
    let proposer = block.message.proposer_index;
    let slot = block.message.slot;
    if ctx.chain.spec().fork_name_at_slot::<E>(slot) != fork {
        return Err(HttpError::bad_request(format!(
            "a block of slot {slot} is not a {fork} block"
        )));
    }
    let outcome = ctx
        .producer
        .publish_blinded_block(block, fork, validation, ctx.network.as_ref())
        .await
        .map_err(blinded_publish_error)?;
    ctx.record_live(slot / E::slots_per_epoch(), [proposer]);
    let status = match outcome {
        BlindedPublication::Published(published) => match published.outcome {
            PublishOutcome::Imported | PublishOutcome::AlreadyImported => StatusCode::OK,
            PublishOutcome::BroadcastNotImported(reason) => {
                tracing::info!(block_root = %published.block_root, %reason, "unblinded block broadcast but not imported");
                StatusCode::ACCEPTED
            }
            PublishOutcome::Pending(_) => StatusCode::ACCEPTED,
        },
        // Broadcast by the relay; imported here when it arrives by gossip.
        BlindedPublication::PublishedByRelay { block_root } => {
            tracing::info!(%block_root, "blinded block handed to the relay for publication");
            StatusCode::ACCEPTED
        }
    };
    Ok(with_version(status.into_response(), fork))
}

/// `POST /eth/v2/beacon/blinded_blocks?broadcast_validation=..`: a `SignedBlindedBeaconBlock`
/// in JSON or SSZ, its fork in `Eth-Consensus-Version`.
pub(crate) async fn post_blinded_block_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
    body: Body,
) -> Result<Response, HttpError> {
    let validation = broadcast_validation(&query)?;
    let fork = body.required_fork()?;
    let block = decode_blinded::<E>(&body, fork)?;
    publish_blinded(&ctx, block, fork, validation).await
}

/// `POST /eth/v1/beacon/blinded_blocks`: as v2 at the `gossip` level; the fork from
/// `Eth-Consensus-Version`, or from the block's slot for a JSON body without it.
pub(crate) async fn post_blinded_block_v1<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let fork = match (body.fork, body.encoding) {
        (Some(fork), _) => fork,
        (None, Encoding::Ssz) => body.required_fork()?,
        (None, Encoding::Json) => {
            #[derive(serde::Deserialize)]
            struct Slot {
                #[serde(with = "beacon_api::json::quoted_u64")]
                slot: u64,
            }
            #[derive(serde::Deserialize)]
            struct Message {
                message: Slot,
            }
            let probe: Message = serde_json::from_slice(&body.bytes)
                .map_err(|e| HttpError::bad_request(format!("invalid blinded block: {e}")))?;
            ctx.chain
                .spec()
                .fork_name_at_slot::<E>(types::Slot::from(probe.message.slot))
        }
    };
    let block = decode_blinded::<E>(&body, fork)?;
    publish_blinded(&ctx, block, fork, BroadcastValidation::Gossip).await
}

/// `GET /eth/v1/beacon/blinded_blocks/{block_id}`: the stored block as a
/// `SignedBlindedBeaconBlock` (its payload replaced by the payload's header; the same root, so
/// the proposer's signature stays valid), in JSON (`{version, execution_optimistic, finalized,
/// data}`) or SSZ, with `Eth-Consensus-Version`.
pub(crate) async fn get_blinded_block<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id = parse_path("block id", path.at(0)?)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        let fork = block.fork_name();
        let blinded = match &block {
            SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => {
                SignedBlindedBeaconBlock {
                    message: BlindedBeaconBlock::from_block(&b.message),
                    signature: b.signature,
                }
            }
            other @ (SignedBeaconBlock::Phase0(_)
            | SignedBeaconBlock::Altair(_)
            | SignedBeaconBlock::Bellatrix(_)
            | SignedBeaconBlock::Capella(_)
            | SignedBeaconBlock::Deneb(_)
            | SignedBeaconBlock::Gloas(_)) => {
                return Err(HttpError::bad_request(format!(
                    "blocks of fork {} are not served by this node",
                    other.fork_name()
                )));
            }
        };
        let response = match encoding {
            Encoding::Ssz => ssz_bytes(blinded.as_ssz_bytes()),
            Encoding::Json => json(&serde_json::json!({
                "version": fork.as_str(),
                "execution_optimistic": at.execution_optimistic,
                "finalized": at.finalized,
                "data": blinded,
            }))?,
        };
        Ok(with_version(response, fork))
    })
    .await
}
