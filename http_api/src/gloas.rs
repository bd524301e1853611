//! The endpoints ethereum/beacon-APIs v5.0.0-alpha.2 adds for Gloas (EIP-7732) that read the
//! chain or take the PTC's votes: the execution payload envelope of a block, PTC duties,
//! `PayloadAttestationData`, the payload attestation pool, and node version v2 (proposer duties
//! v2: `validator.rs`).
//!
//! [spec]: apis/beacon/execution_payload/envelope_get.yaml, apis/validator/duties/ptc.yaml,
//! apis/validator/payload_attestation_data.yaml, apis/beacon/pool/payload_attestations.yaml,
//! apis/node/version.v2.yaml; gloas/validator.md

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use beacon_api::{BlockId, DutiesResponse, Encoding, GenericResponse, IndexedError};
use beacon_chain::PayloadAttestationDataError;
use beacon_chain::gossip::{BidGossipError, PayloadAttestationGossipError};
use serde::Serialize;
use ssz::Encode;
use state_processing::common::get_current_epoch;
use state_processing::gloas::ptc::get_ptc;
use types::gloas::{PayloadAttestationMessage, SignedExecutionPayloadBid};
use types::{Epoch, EthSpec, ForkName, Slot, ValidatorIndex};

use crate::ApiContext;
use crate::beacon::Registry;
use crate::error::HttpError;
use crate::query::{BatchBody, Body, PathParams, Query, parse_path};
use crate::response::{
    JSON_OR_SSZ, accept, blocking, blocking_duty, json, ok_empty, ssz_bytes, with_version,
};
use crate::state_id::{StateAt, block_at};
use crate::validator::{Indices, clock_epoch, dependent_root, parse_epoch};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// `{version, execution_optimistic?, finalized?, data}` for data without a fork enum.
#[derive(Serialize)]
struct Versioned<T: Serialize> {
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution_optimistic: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finalized: Option<bool>,
    data: T,
}

/// A Gloas answer in the negotiated encoding, with `Eth-Consensus-Version: gloas`.
fn gloas_response<T: Serialize + Encode>(
    encoding: Encoding,
    flags: Option<(bool, bool)>,
    data: &T,
) -> Result<Response, HttpError> {
    let response = match encoding {
        Encoding::Ssz => ssz_bytes(data.as_ssz_bytes()),
        Encoding::Json => json(&Versioned {
            version: ForkName::Gloas.as_str(),
            execution_optimistic: flags.map(|f| f.0),
            finalized: flags.map(|f| f.1),
            data,
        })?,
    };
    Ok(with_version(response, ForkName::Gloas))
}

/// `GET /eth/v1/beacon/execution_payload_envelopes/{block_id}`: the block's envelope from the
/// store's envelope table (the envelopes the chain imported); 404 for a block without one (an
/// EMPTY block whose envelope never came, a block before Gloas, an envelope pruned).
pub(crate) async fn get_execution_payload_envelope<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let id: BlockId = parse_path("block id", path.at(0)?)?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let not_found = || {
            HttpError::not_found(format!(
                "execution payload envelope of block {} not found",
                at.root
            ))
        };
        let store = ctx.chain.store();
        match encoding {
            Encoding::Ssz => {
                let bytes = store
                    .get_execution_payload_envelope_ssz(&at.root)?
                    .ok_or_else(not_found)?;
                Ok(with_version(ssz_bytes(bytes), ForkName::Gloas))
            }
            Encoding::Json => {
                let envelope = store
                    .get_execution_payload_envelope(&at.root)?
                    .ok_or_else(not_found)?;
                gloas_response(
                    Encoding::Json,
                    Some((at.execution_optimistic, at.finalized)),
                    &envelope,
                )
            }
        }
    })
    .await
}

/// A Gloas state from which `get_ptc` answers for `epoch`: the duty state, advanced to the
/// fork's first slot when it is still before Gloas.
fn ptc_state<E: EthSpec>(ctx: &ApiContext<E>, epoch: Epoch) -> Result<StateAt<E>, HttpError> {
    let at = ctx.chain.duty_state(epoch)?;
    if at.state.state.fork_name().gloas_enabled() {
        return Ok(at);
    }
    let fork_slot = ctx
        .chain
        .spec()
        .gloas_fork_epoch
        .saturating_mul(E::slots_per_epoch());
    Ok(ctx.chain.state_advanced_to(at, fork_slot)?)
}

/// `POST /eth/v1/validator/duties/ptc/{epoch}`: `get_ptc_assignment(state, epoch, index)` of
/// each validator asked (those without an assignment left out); none for an epoch before the
/// Gloas fork. `dependent_root`: `get_block_root_at_slot(state,
/// compute_start_slot_at_epoch(epoch - 1) - 1)`.
///
/// [spec]: gloas/validator.md#payload-timeliness-committee
pub(crate) async fn post_ptc_duties<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    body: Body,
) -> Result<Response, HttpError> {
    let epoch = parse_epoch(&path)?;
    let Indices(indices) = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let limit = clock_epoch(&ctx) + 1;
        if epoch > limit {
            return Err(HttpError::bad_request(format!(
                "epoch {epoch} is more than one epoch ahead of the current epoch {}",
                limit - 1
            )));
        }
        let spe = E::slots_per_epoch();
        if epoch < ctx.chain.spec().gloas_fork_epoch {
            // No PTC before Gloas: the answer of the duty state, without duties.
            let at = ctx.chain.duty_state(epoch)?;
            return json(&DutiesResponse {
                dependent_root: dependent_root(&at, epoch.saturating_sub(1)),
                execution_optimistic: at.execution_optimistic,
                data: Vec::<beacon_api::PtcDuty>::new(),
            });
        }
        let at = ptc_state(&ctx, epoch)?;
        let view = at.state.view()?;
        let current = get_current_epoch(&view);
        if epoch > current + E::MIN_SEED_LOOKAHEAD || epoch + 1 < current {
            return Err(HttpError::internal(format!(
                "no state for the PTC of epoch {epoch} (the duty state is of epoch {current})"
            )));
        }
        // `get_ptc_assignment`: the first slot of the epoch whose PTC holds the validator.
        let mut assignment: std::collections::HashMap<ValidatorIndex, Slot> =
            std::collections::HashMap::new();
        for slot in epoch * spe..(epoch + 1) * spe {
            for member in get_ptc(&view, slot)? {
                assignment.entry(member).or_insert(slot);
            }
        }
        let registry = Registry::of(&at.state)?;
        let data: Vec<beacon_api::PtcDuty> = indices
            .iter()
            .filter_map(|index| {
                Some(beacon_api::PtcDuty {
                    pubkey: registry.validator(*index)?.pubkey,
                    validator_index: *index,
                    slot: *assignment.get(index)?,
                })
            })
            .collect();
        json(&DutiesResponse {
            dependent_root: dependent_root(&at, epoch.saturating_sub(1)),
            execution_optimistic: at.execution_optimistic,
            data,
        })
    })
    .await
}

/// `GET /eth/v1/validator/payload_attestation_data/{slot}` (JSON or SSZ): what a PTC member
/// signs for `slot` (`BeaconChain::payload_attestation_data`). 400 for a slot after the
/// clock's, 404 when the node has seen no block of the slot (alpha.2 lists no answer for it;
/// later releases answer 204) or the chain has not reached Gloas.
pub(crate) async fn get_payload_attestation_data<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let slot: Slot = parse_path("slot", path.at(0)?)?;
    blocking_duty(ctx.workers(), move || {
        let chain = &ctx.chain;
        let now = chain
            .now_ms()
            .saturating_add(chain.spec().maximum_gossip_clock_disparity);
        let clock_slot = chain.slot_at_ms(now);
        if slot > clock_slot {
            return Err(HttpError::bad_request(format!(
                "slot {slot} is in the future (current slot {clock_slot})"
            )));
        }
        let data = chain.payload_attestation_data(slot).map_err(|e| match e {
            PayloadAttestationDataError::NotGloas | PayloadAttestationDataError::NoBlock(_) => {
                HttpError::not_found(e)
            }
        })?;
        gloas_response(encoding, None, &data)
    })
    .await
}

/// Whether a message refused as one already seen counts as accepted (a validator client
/// retrying must not see an error).
fn is_repeat(e: &PayloadAttestationGossipError) -> bool {
    matches!(e, PayloadAttestationGossipError::AlreadySeen { .. })
}

/// `POST /eth/v1/beacon/pool/payload_attestations`: `PayloadAttestationMessage`s in JSON or
/// SSZ, checked by the gossip rules (`verify_payload_attestation_messages_for_gossip`, one BLS
/// batch), counted by fork choice and kept in the operation pool
/// (`accept_payload_attestation_messages`), and published. 400 with `failures` naming the
/// refused ones.
pub(crate) async fn post_payload_attestations<E: EthSpec>(
    State(ctx): Ctx<E>,
    BatchBody(body): BatchBody,
) -> Result<Response, HttpError> {
    let fork = body.required_fork().map_err(HttpError::into_batch)?;
    if !fork.gloas_enabled() {
        return Err(HttpError::bad_request(format!(
            "payload attestation messages are of Gloas and later, not {fork}"
        ))
        .into_batch());
    }
    let messages: Vec<PayloadAttestationMessage> = match body.encoding {
        Encoding::Json => body.json(),
        Encoding::Ssz => {
            <Vec<PayloadAttestationMessage> as ssz::Decode>::from_ssz_bytes(&body.bytes)
                .map_err(|e| HttpError::bad_request(format!("invalid SSZ body: {e:?}")))
        }
    }
    .map_err(HttpError::into_batch)?;
    blocking_duty(ctx.workers(), move || {
        let chain = &ctx.chain;
        let results =
            chain.verify_payload_attestation_messages_for_gossip(messages, chain.now_ms());
        let mut failures = Vec::new();
        let mut accepted = Vec::new();
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Ok(verified) => accepted.push(verified),
                Err(e) if is_repeat(&e) => {}
                Err(e) => failures.push(IndexedError {
                    index: i as u64,
                    message: e.to_string(),
                }),
            }
        }
        if !accepted.is_empty() {
            // A valid vote is published even when the pool cannot keep it (its block pruned
            // from fork choice since it was verified).
            let pooled = chain
                .accept_payload_attestation_messages(&ctx.pool, &accepted)
                .map_err(|e| HttpError::internal(format!("fork choice: {e}")))?;
            tracing::trace!(?pooled, "API payload attestations accepted");
        }
        for verified in accepted {
            ctx.network.publish_payload_attestation(verified.message);
        }
        if failures.is_empty() {
            Ok(ok_empty())
        } else {
            Err(HttpError::Indexed {
                message: "some payload attestation messages failed validation".into(),
                failures,
            })
        }
    })
    .await
}

/// `POST /eth/v1/beacon/execution_payload_bids` (JSON or SSZ, `Eth-Consensus-Version`
/// required): a builder's signed bid, checked by the `execution_payload_bid` topic's rules
/// (the chain keeps it as gossip's are kept: the best bid per parent), then gossiped. A bid
/// the rules refuse or ignore (a lower value than one seen, a slot neither current nor next,
/// a builder that cannot cover it) is a 400 with the rule's reason: the spec's 200 means
/// "passed gossip validation and was broadcast", which only an accepted bid is.
///
/// [spec]: beacon-APIs v5.0.0-alpha.2 publishExecutionPayloadBid; gloas/p2p-interface.md#execution_payload_bid
pub(crate) async fn post_execution_payload_bid<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let fork = body.required_fork()?;
    if !fork.gloas_enabled() {
        return Err(HttpError::bad_request(format!(
            "execution payload bids are of Gloas and later, not {fork}"
        )));
    }
    let bid: SignedExecutionPayloadBid = body.decode()?;
    blocking_duty(ctx.workers(), move || {
        let chain = &ctx.chain;
        match chain.verify_execution_payload_bid_for_gossip(bid.clone(), chain.now_ms()) {
            Ok(_) => {
                ctx.network.publish_execution_payload_bid(bid);
                Ok(ok_empty())
            }
            // The node could not evaluate a rule: ours, not the builder's.
            Err(e @ BidGossipError::Internal(_)) => Err(HttpError::internal(e)),
            Err(e) => Err(HttpError::bad_request(format!(
                "the bid failed gossip validation: {e}"
            ))),
        }
    })
    .await
}

/// `GET /eth/v1/beacon/pool/payload_attestations?slot=..` (JSON or SSZ): the aggregates of the
/// messages this node verified, of the last few slots.
pub(crate) async fn get_payload_attestations<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let slot: Option<Slot> = query.parse("slot")?;
    let data = ctx
        .pool
        .payload_attestations(slot)
        .map_err(|e| HttpError::internal(format!("operation pool: {e}")))?;
    gloas_response(encoding, None, &data)
}

/// `ClientVersionV1` as the Beacon API writes it (the engine API's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct ClientVersionV1 {
    code: String,
    name: String,
    version: String,
    commit: String,
}

/// The first four bytes of the commit this build was made from, when the build was told
/// (`ARBOR_GIT_COMMIT`, hex); zeros otherwise.
fn build_commit() -> [u8; 4] {
    let hex = option_env!("ARBOR_GIT_COMMIT").unwrap_or("");
    let hex = hex.strip_prefix("0x").unwrap_or(hex);
    let mut out = [0u8; 4];
    for (i, byte) in out.iter_mut().enumerate() {
        match hex
            .get(i * 2..i * 2 + 2)
            .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        {
            Some(b) => *byte = b,
            None => return [0u8; 4],
        }
    }
    out
}

/// `0x` and the hex of `bytes`.
fn hex_string(bytes: &[u8]) -> String {
    let digits: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("0x{digits}")
}

/// How long `node/version` v2 waits for the execution client's `engine_getClientVersionV1`.
const EL_VERSION_TIMEOUT: Duration = Duration::from_secs(1);

/// `GET /eth/v2/node/version`: this node's `ClientVersionV1`, with the execution client's
/// (the first `engine_getClientVersionV1` answers) when one is attached and answers in time.
pub(crate) async fn get_version_v2<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    let ours = execution_layer::ClientVersion {
        code: "AR".into(),
        name: "Arbor".into(),
        version: format!("v{}", env!("CARGO_PKG_VERSION")),
        commit: types::Bytes4::new(build_commit()),
    };
    let execution_client = match ctx.chain.execution_layer() {
        Some(execution) => {
            match tokio::time::timeout(
                EL_VERSION_TIMEOUT,
                execution.engine.get_client_version_v1(&ours),
            )
            .await
            {
                Ok(Ok(versions)) => versions.into_iter().next().map(|v| ClientVersionV1 {
                    code: v.code,
                    name: v.name,
                    version: v.version,
                    commit: hex_string(v.commit.as_slice()),
                }),
                Ok(Err(error)) => {
                    tracing::debug!(%error, "engine_getClientVersionV1 failed");
                    None
                }
                Err(_) => None,
            }
        }
        None => None,
    };
    #[derive(Serialize)]
    struct VersionV2 {
        beacon_node: ClientVersionV1,
        #[serde(skip_serializing_if = "Option::is_none")]
        execution_client: Option<ClientVersionV1>,
    }
    json(&GenericResponse {
        data: VersionV2 {
            beacon_node: ClientVersionV1 {
                code: ours.code.clone(),
                name: ours.name.clone(),
                version: ours.version.clone(),
                commit: hex_string(ours.commit.as_slice()),
            },
            execution_client,
        },
    })
}
