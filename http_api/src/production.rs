//! `GET /eth/v3/validator/blocks/{slot}` (produceBlockV3) and `POST /eth/v2/beacon/blocks`
//! (publishBlockV2) over the chain's [`beacon_chain::BlockProducer`].
//!
//! A produced block is encoded once, in the encoding asked for; its metadata travels in the v3
//! headers (and, for JSON, beside `data`).
//!
//! [spec]: apis/validator/block.v3.yaml, apis/beacon/blocks/blocks.v2.yaml

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use beacon_api::block_contents::{BlockContents, SignedBlockContents};
use beacon_api::{Encoding, ProduceBlockV3Metadata};
use beacon_chain::{ProductionError, PublishError, PublishOutcome};
use types::{BLSSignature, BeaconBlock, Bytes32, EthSpec, ForkName, Slot};

use crate::ApiContext;
use crate::error::HttpError;
use crate::query::{Body, PathParams, Query, parse_path};
use crate::response::{JSON_OR_SSZ, accept, json_bytes, ssz_bytes, with_version};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// The compressed G2 point at infinity: the RANDAO reveal `skip_randao_verification` asks for.
fn is_infinity(signature: &BLSSignature) -> bool {
    signature.as_slice()[0] == 0xc0 && signature.as_slice()[1..].iter().all(|b| *b == 0)
}

pub(crate) fn production_error(e: ProductionError) -> HttpError {
    match e {
        ProductionError::SlotNotAfterHead { .. }
        | ProductionError::InvalidRandaoReveal { .. }
        | ProductionError::UnsupportedFork { .. } => HttpError::bad_request(e),
        ProductionError::OptimisticHead(_)
        | ProductionError::Execution(_)
        | ProductionError::NoPayloadId(_) => HttpError::Unavailable(e.to_string()),
        other => HttpError::internal(other),
    }
}

/// The produced block and its blob data as the fork's `BlockContents`.
fn block_contents<E: EthSpec>(
    block: BeaconBlock<E>,
    kzg_proofs: Vec<types::KZGProof>,
    blobs: beacon_api::block_contents::Blobs<E>,
) -> Result<BlockContents<E>, HttpError> {
    use beacon_api::block_contents::{Electra, Fulu};
    Ok(match block {
        BeaconBlock::Fulu(block) => BlockContents::Fulu(Fulu {
            block,
            kzg_proofs,
            blobs,
        }),
        BeaconBlock::Electra(block) => BlockContents::Electra(Electra {
            block,
            kzg_proofs,
            blobs,
        }),
        other @ (BeaconBlock::Phase0(_)
        | BeaconBlock::Altair(_)
        | BeaconBlock::Bellatrix(_)
        | BeaconBlock::Capella(_)
        | BeaconBlock::Deneb(_)
        | BeaconBlock::Gloas(_)) => {
            return Err(HttpError::internal(format!(
                "produced a {} block",
                other.fork_name()
            )));
        }
    })
}

/// The `skip_randao_verification` flag of block production: present (empty or `true`) means
/// skip.
pub(crate) fn skip_randao_verification(query: &Query) -> Result<bool, HttpError> {
    match query.get("skip_randao_verification") {
        None | Some("false") => Ok(false),
        Some("" | "true") => Ok(true),
        Some(other) => Err(HttpError::bad_request(format!(
            "invalid skip_randao_verification {other:?}"
        ))),
    }
}

/// `GET /eth/v3/validator/blocks/{slot}?randao_reveal=..&graffiti=..&skip_randao_verification&builder_boost_factor=..`.
pub(crate) async fn get_block_v3<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let slot: Slot = parse_path("slot", path.at(0)?)?;
    let randao_reveal: BLSSignature = query.required("randao_reveal")?;
    let graffiti: Option<Bytes32> = query.parse("graffiti")?;
    let builder_boost_factor: Option<u64> = query.parse("builder_boost_factor")?;
    let skip_randao_verification = skip_randao_verification(&query)?;
    // A block is for the current slot (or the next, asked for just before it starts): a slot
    // further on would have the head state advanced through every slot in between.
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
    if skip_randao_verification && !is_infinity(&randao_reveal) {
        return Err(HttpError::bad_request(
            "skip_randao_verification needs the point at infinity as randao_reveal",
        ));
    }
    let produced = match ctx
        .producer
        .produce_block_v3_with_builder(
            slot,
            randao_reveal,
            graffiti,
            skip_randao_verification,
            builder_boost_factor,
        )
        .await
        .map_err(production_error)?
    {
        beacon_chain::ProducedBlockV3::Full { block, outcome } => {
            tracing::debug!(%slot, ?outcome, "block with the local payload");
            block
        }
        beacon_chain::ProducedBlockV3::Blinded(blinded) => {
            ctx.record_live(slot / E::slots_per_epoch(), [blinded.proposer_index]);
            return crate::builder::blinded_block_v3_response(encoding, blinded);
        }
    };
    ctx.record_live(slot / E::slots_per_epoch(), [produced.proposer_index]);
    let metadata = ProduceBlockV3Metadata {
        consensus_version: produced.fork,
        execution_payload_blinded: false,
        execution_payload_value: produced.execution_payload_value,
        consensus_block_value: produced.consensus_block_value,
    };
    let fork = produced.fork;
    let contents = block_contents(produced.block, produced.kzg_proofs, produced.blobs)?;
    let workers = ctx.workers();
    crate::workers::run_blocking(workers, crate::ApiPriority::P0, move || -> Result<Response, HttpError> {
        let mut response = match encoding {
            Encoding::Ssz => ssz_bytes(contents.as_ssz_bytes()),
            Encoding::Json => {
                let data = beacon_api::envelope::to_json(&contents)
                    .map_err(|e| HttpError::internal(format!("cannot encode the block: {e}")))?;
                let head = format!(
                    r#"{{"version":"{}","execution_payload_blinded":false,"execution_payload_value":"{}","consensus_block_value":"{}","data":"#,
                    fork.as_str(),
                    metadata.execution_payload_value,
                    metadata.consensus_block_value,
                );
                let mut body = Vec::with_capacity(head.len() + data.len() + 1);
                body.extend_from_slice(head.as_bytes());
                body.extend_from_slice(&data);
                body.push(b'}');
                json_bytes(body)
            }
        };
        for (name, value) in metadata.to_headers() {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().insert(name, value);
            }
        }
        Ok(response)
    })
    .await
}

pub(crate) fn broadcast_validation(
    query: &Query,
) -> Result<beacon_chain::BroadcastValidation, HttpError> {
    Ok(
        match query
            .parse::<beacon_api::BroadcastValidation>("broadcast_validation")?
            .unwrap_or_default()
        {
            beacon_api::BroadcastValidation::Gossip => beacon_chain::BroadcastValidation::Gossip,
            beacon_api::BroadcastValidation::Consensus => {
                beacon_chain::BroadcastValidation::Consensus
            }
            beacon_api::BroadcastValidation::ConsensusAndEquivocation => {
                beacon_chain::BroadcastValidation::ConsensusAndEquivocation
            }
        },
    )
}

pub(crate) fn publish_error(e: PublishError) -> HttpError {
    match e {
        PublishError::Engine(_) | PublishError::Workers(_) => HttpError::Unavailable(e.to_string()),
        PublishError::Import(beacon_chain::ChainError::Store(_)) => HttpError::internal(e),
        other => HttpError::bad_request(other),
    }
}

/// `POST /eth/v2/beacon/blocks?broadcast_validation=..`: a `SignedBlockContents` in JSON or
/// SSZ, its fork in `Eth-Consensus-Version`. 200 when imported, 202 when broadcast but not
/// (yet) imported, 400 when refused before broadcast.
pub(crate) async fn post_block_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
    body: Body,
) -> Result<Response, HttpError> {
    let validation = broadcast_validation(&query)?;
    let fork: ForkName = body.required_fork()?;
    if fork == ForkName::Gloas {
        // A Gloas block alone: its blobs come with its payload's envelope.
        let block = match body.encoding {
            Encoding::Json => {
                beacon_api::envelope::from_json_by_fork::<types::SignedBeaconBlock<E>>(
                    &body.bytes,
                    fork,
                )
                .map_err(|e| HttpError::bad_request(format!("invalid block body: {e}")))?
            }
            Encoding::Ssz => {
                types::SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(&body.bytes, fork)
                    .map_err(|e| HttpError::bad_request(format!("invalid SSZ block body: {e:?}")))?
            }
        };
        return publish_signed_block(&ctx, block, None, validation, fork).await;
    }
    let contents = match body.encoding {
        Encoding::Json => {
            beacon_api::envelope::from_json_by_fork::<SignedBlockContents<E>>(&body.bytes, fork)
                .map_err(|e| HttpError::bad_request(format!("invalid block body: {e}")))?
        }
        Encoding::Ssz => SignedBlockContents::<E>::from_ssz_bytes_by_fork(&body.bytes, fork)
            .map_err(|e| HttpError::bad_request(format!("invalid SSZ block body: {e:?}")))?,
    };
    let (block, blobs) = signed_block_and_blobs(contents);
    publish_signed_block(&ctx, block, blobs, validation, fork).await
}

/// Publishes a decoded block (with its blob data before Gloas) and answers as publishBlockV2.
async fn publish_signed_block<E: EthSpec>(
    ctx: &Arc<ApiContext<E>>,
    block: types::SignedBeaconBlock<E>,
    blobs: Option<beacon_api::block_contents::BlobData<E>>,
    validation: beacon_chain::BroadcastValidation,
    fork: ForkName,
) -> Result<Response, HttpError> {
    let proposer = block.proposer_index();
    let slot = block.slot();
    let published = ctx
        .producer
        .publish_block(Arc::new(block), blobs, validation, ctx.network.as_ref())
        .await
        .map_err(publish_error)?;
    ctx.record_live(slot / E::slots_per_epoch(), [proposer]);
    let status = match published.outcome {
        PublishOutcome::Imported | PublishOutcome::AlreadyImported => StatusCode::OK,
        PublishOutcome::BroadcastNotImported(reason) => {
            tracing::info!(block_root = %published.block_root, %reason, "block broadcast but not imported");
            StatusCode::ACCEPTED
        }
        PublishOutcome::Pending(_) => StatusCode::ACCEPTED,
    };
    Ok(with_version(status.into_response(), fork))
}

/// A `SignedBlockContents` as the signed block and its blob data.
fn signed_block_and_blobs<E: EthSpec>(
    contents: SignedBlockContents<E>,
) -> (
    types::SignedBeaconBlock<E>,
    Option<beacon_api::block_contents::BlobData<E>>,
) {
    use types::SignedBeaconBlock as B;
    match contents {
        SignedBlockContents::Phase0(b) => (B::Phase0(b), None),
        SignedBlockContents::Altair(b) => (B::Altair(b), None),
        SignedBlockContents::Bellatrix(b) => (B::Bellatrix(b), None),
        SignedBlockContents::Capella(b) => (B::Capella(b), None),
        SignedBlockContents::Deneb(c) => (B::Deneb(c.signed_block), Some((c.kzg_proofs, c.blobs))),
        SignedBlockContents::Electra(c) => {
            (B::Electra(c.signed_block), Some((c.kzg_proofs, c.blobs)))
        }
        SignedBlockContents::Fulu(c) => (B::Fulu(c.signed_block), Some((c.kzg_proofs, c.blobs))),
    }
}
