//! Submissions: attestations, aggregates, sync committee messages and contributions, exits,
//! slashings and BLS changes. Each goes through the chain's gossip validation (as if it came
//! from a peer); what passes gives its vote to fork choice, enters the operation pool and is
//! published. A batch answers 400 with the spec's `failures` naming the refused items (the
//! others are kept).
//!
//! [spec]: apis/beacon/pool/*.yaml, apis/validator/aggregate_and_proofs.yaml,
//! apis/validator/contribution_and_proofs.yaml

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use beacon_api::{Encoding, ForkVersionedResponse, GenericResponse, IndexedError};
use beacon_chain::gossip::{
    AttestationGossipError, GossipAggregate, OperationGossipError, SyncCommitteeGossipError,
    VerifiedAggregate,
};
use ssz::Decode;
use state_processing::common::compute_epoch_at_slot;
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::fulu::{
    AttesterSlashing, ProposerSlashing, SignedBLSToExecutionChange, SignedContributionAndProof,
    SignedVoluntaryExit, SyncCommitteeMessage,
};
use types::{EthSpec, ForkName, Slot};

use crate::ApiContext;
use crate::beacon::{committees_of, sync_committee_indices};
use crate::error::HttpError;
use crate::network::PublishedOperation;
use crate::query::{BatchBody, Body, Query};
use crate::response::{blocking_duty, json, ok_empty, with_version};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// The answer to a batch: 200, or 400 with the failures.
fn batch_result(what: &str, failures: Vec<IndexedError>) -> Result<Response, HttpError> {
    if failures.is_empty() {
        Ok(ok_empty())
    } else {
        Err(HttpError::Indexed {
            message: format!("some {what} failed validation"),
            failures,
        })
    }
}

fn failure(index: usize, message: impl std::fmt::Display) -> IndexedError {
    IndexedError {
        index: index as u64,
        message: message.to_string(),
    }
}

/// A list body: JSON, or SSZ `List[T, ...]`.
fn list_body<T: serde::de::DeserializeOwned + Decode>(body: &Body) -> Result<Vec<T>, HttpError> {
    match body.encoding {
        Encoding::Json => body.json(),
        Encoding::Ssz => Vec::<T>::from_ssz_bytes(&body.bytes)
            .map_err(|e| HttpError::bad_request(format!("invalid SSZ body: {e:?}"))),
    }
}

/// The fork of a versioned submission: `Eth-Consensus-Version`, which must be Electra or later
/// for the Electra containers these endpoints take.
fn electra_fork(body: &Body) -> Result<ForkName, HttpError> {
    let fork = body.required_fork()?;
    if !fork.electra_enabled() {
        return Err(HttpError::bad_request(format!(
            "fork {fork} submissions are not taken by this node (Electra and later)"
        )));
    }
    Ok(fork)
}

/// Whether an attestation refused as a repeat of one already accepted counts as accepted
/// (a validator client retrying must not see an error).
fn is_repeat(e: &AttestationGossipError) -> bool {
    matches!(
        e,
        AttestationGossipError::PriorAttestationKnown(_)
            | AttestationGossipError::AggregateKnown
            | AttestationGossipError::AggregatorAlreadyKnown(_)
    )
}

/// `POST /eth/v2/beacon/pool/attestations`: `SingleAttestation`s in JSON or SSZ.
pub(crate) async fn post_attestations_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    BatchBody(body): BatchBody,
) -> Result<Response, HttpError> {
    electra_fork(&body).map_err(HttpError::into_batch)?;
    let attestations: Vec<SingleAttestation> = list_body(&body).map_err(HttpError::into_batch)?;
    blocking_duty(ctx.workers(), move || {
        let head = ctx.chain.head();
        let spec = ctx.chain.spec();
        let mut failures = Vec::new();
        let mut batch = Vec::with_capacity(attestations.len());
        let mut positions = Vec::with_capacity(attestations.len());
        for (i, attestation) in attestations.into_iter().enumerate() {
            let epoch = compute_epoch_at_slot::<E>(attestation.data.slot);
            let subnet = committees_of(&ctx, &head.state, epoch).and_then(|c| {
                types::subnets::compute_subnet_for_attestation::<E>(
                    spec,
                    c.committees_per_slot(),
                    attestation.data.slot,
                    attestation.committee_index,
                )
                .map_err(|e| HttpError::bad_request(format!("{e:?}")))
            });
            match subnet {
                Ok(subnet) => {
                    batch.push((attestation, subnet));
                    positions.push(i);
                }
                Err(e) => failures.push(failure(i, e)),
            }
        }
        let subnets: Vec<u64> = batch.iter().map(|(_, s)| *s).collect();
        let results = ctx
            .chain
            .verify_single_attestations_for_gossip(batch, ctx.chain.now_ms());
        let mut accepted = Vec::new();
        for ((result, i), subnet) in results.into_iter().zip(positions).zip(subnets) {
            match result {
                Ok(verified) => {
                    let attestation = verified.attestation.clone();
                    ctx.record_live(attestation.data.target.epoch, [attestation.attester_index]);
                    ctx.network.publish_attestation(attestation, subnet);
                    accepted.push(verified);
                }
                Err(e) if is_repeat(&e) => {}
                Err(e) => failures.push(failure(i, e)),
            }
        }
        ctx.chain.accept_single_attestations(&ctx.pool, &accepted);
        failures.sort_by_key(|f| f.index);
        batch_result("attestations", failures)
    })
    .await
}

/// `GET /eth/v2/beacon/pool/attestations?slot=..&committee_index=..`.
pub(crate) async fn get_attestations_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    query: Query,
) -> Result<Response, HttpError> {
    let slot: Option<Slot> = query.parse("slot")?;
    let committee_index: Option<u64> = query.parse("committee_index")?;
    blocking_duty(ctx.workers(), move || {
        let fork = ctx
            .chain
            .spec()
            .fork_name_at_slot::<E>(ctx.chain.head().slot);
        let data: Vec<types::Attestation<E>> = ctx
            .pool
            .attestations()
            .map_err(|e| HttpError::internal(format!("operation pool: {e:?}")))?
            .into_iter()
            .filter(|a| slot.is_none_or(|s| a.data.slot == s))
            .filter(|a| {
                committee_index.is_none_or(|c| a.committee_bits.get(c as usize).unwrap_or(false))
            })
            .map(|a| {
                if fork.fulu_enabled() {
                    types::Attestation::Fulu(a)
                } else {
                    types::Attestation::Electra(a)
                }
            })
            .collect();
        Ok(with_version(
            json(&ForkVersionedResponse::new(fork, data))?,
            fork,
        ))
    })
    .await
}

/// `POST /eth/v2/validator/aggregate_and_proofs`: aggregates in JSON or SSZ, in Electra's
/// container before Gloas and in Gloas's from it (the fork in `Eth-Consensus-Version`).
pub(crate) async fn post_aggregate_and_proofs_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    BatchBody(body): BatchBody,
) -> Result<Response, HttpError> {
    let fork = electra_fork(&body).map_err(HttpError::into_batch)?;
    if fork == ForkName::Gloas {
        let aggregates: Vec<types::gloas::SignedAggregateAndProof<E>> =
            list_body(&body).map_err(HttpError::into_batch)?;
        return blocking_duty(ctx.workers(), move || {
            let (accepted, failures) = verify_and_publish_aggregates(&ctx, aggregates, |c, a| {
                c.network.publish_gloas_aggregate(a)
            });
            let accepted = ctx.chain.accept_gloas_aggregates(&ctx.pool, &accepted);
            tracing::trace!(?accepted, "API Gloas aggregates accepted");
            batch_result("aggregates", failures)
        })
        .await;
    }
    let aggregates: Vec<SignedAggregateAndProof<E>> =
        list_body(&body).map_err(HttpError::into_batch)?;
    blocking_duty(ctx.workers(), move || {
        let (accepted, failures) =
            verify_and_publish_aggregates(&ctx, aggregates, |c, a| c.network.publish_aggregate(a));
        ctx.chain.accept_aggregates(&ctx.pool, &accepted);
        batch_result("aggregates", failures)
    })
    .await
}

/// The aggregates' gossip validation (one BLS batch): each accepted one recorded live and
/// handed to `publish`; a repeat of an accepted one counts as accepted. Returns the accepted
/// ones and the indexed failures.
fn verify_and_publish_aggregates<E: EthSpec, A: GossipAggregate<E>>(
    ctx: &ApiContext<E>,
    aggregates: Vec<A>,
    publish: impl Fn(&ApiContext<E>, A),
) -> (Vec<VerifiedAggregate<E, A>>, Vec<IndexedError>) {
    let results = ctx
        .chain
        .verify_aggregates_for_gossip(aggregates, ctx.chain.now_ms());
    let mut failures = Vec::new();
    let mut accepted = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(verified) => {
                let aggregate = &verified.signed_aggregate;
                ctx.record_live(
                    aggregate.data().target.epoch,
                    [aggregate.aggregator_index()],
                );
                publish(ctx, verified.signed_aggregate.clone());
                accepted.push(verified);
            }
            Err(e) if is_repeat(&e) => {}
            Err(e) => failures.push(failure(i, e)),
        }
    }
    (accepted, failures)
}

/// The positions of `message`'s validator in the sync committee of the message's next slot,
/// with their subnets.
fn sync_positions<E: EthSpec>(
    ctx: &ApiContext<E>,
    message: &SyncCommitteeMessage,
) -> Result<Vec<(u64, u64)>, HttpError> {
    let head = ctx.chain.head();
    let sub_size = <E::SyncSubcommitteeSize as ssz_types::typenum::Unsigned>::to_u64();
    let epoch = compute_epoch_at_slot::<E>(message.slot.saturating_add(1));
    let members = sync_committee_indices(ctx, &head.state, epoch)?;
    let positions: Vec<(u64, u64)> = members
        .iter()
        .enumerate()
        .filter(|(_, m)| **m == message.validator_index)
        .map(|(p, _)| (p as u64 / sub_size, p as u64 % sub_size))
        .collect();
    if positions.is_empty() {
        return Err(HttpError::bad_request(format!(
            "validator {} is not in the sync committee",
            message.validator_index
        )));
    }
    Ok(positions)
}

/// Adds a verified `message` to the contributions (its positions on `subnet`, or on every
/// subnet of the validator) and records its validator live; returns the subnets.
pub(crate) fn record_sync_message<E: EthSpec>(
    ctx: &ApiContext<E>,
    message: &SyncCommitteeMessage,
    subnet: Option<u64>,
) -> Result<Vec<u64>, HttpError> {
    let positions = sync_positions(ctx, message)?;
    let mut subnets = Vec::new();
    for (s, position) in positions {
        if subnet.is_some_and(|want| want != s) {
            continue;
        }
        ctx.sync_messages.insert::<E>(
            message.slot,
            message.beacon_block_root,
            s,
            position as usize,
            &message.signature,
        );
        if !subnets.contains(&s) {
            subnets.push(s);
        }
    }
    ctx.record_live(
        compute_epoch_at_slot::<E>(message.slot),
        [message.validator_index],
    );
    Ok(subnets)
}

/// `POST /eth/v1/beacon/pool/sync_committees`: each message verified on every subnet of its
/// validator's positions in the sync committee.
pub(crate) async fn post_sync_committees<E: EthSpec>(
    State(ctx): Ctx<E>,
    BatchBody(body): BatchBody,
) -> Result<Response, HttpError> {
    let messages: Vec<SyncCommitteeMessage> = body.json().map_err(HttpError::into_batch)?;
    blocking_duty(ctx.workers(), move || {
        let mut failures = Vec::new();
        for (i, message) in messages.into_iter().enumerate() {
            let mut subnets: Vec<u64> = match sync_positions(&ctx, &message) {
                Ok(positions) => positions.into_iter().map(|(s, _)| s).collect(),
                Err(e) => {
                    failures.push(failure(i, e));
                    continue;
                }
            };
            subnets.dedup();
            let mut accepted = Vec::new();
            let mut repeat = false;
            let mut error = None;
            for subnet in subnets {
                match ctx.chain.verify_sync_committee_message_for_gossip(
                    message.clone(),
                    subnet,
                    ctx.chain.now_ms(),
                ) {
                    Ok(verified) => {
                        accepted.push(subnet);
                        ctx.network.publish_sync_message(verified.message, subnet);
                    }
                    Err(SyncCommitteeGossipError::AlreadySeen(_)) => repeat = true,
                    Err(e) => error = Some(e),
                }
            }
            for subnet in &accepted {
                if let Err(e) = record_sync_message(&ctx, &message, Some(*subnet)) {
                    tracing::debug!(error = %e, "sync committee message not recorded");
                }
            }
            if accepted.is_empty()
                && !repeat
                && let Some(e) = error
            {
                failures.push(failure(i, e));
            }
        }
        batch_result("sync committee messages", failures)
    })
    .await
}

/// `POST /eth/v1/validator/contribution_and_proofs`.
pub(crate) async fn post_contribution_and_proofs<E: EthSpec>(
    State(ctx): Ctx<E>,
    BatchBody(body): BatchBody,
) -> Result<Response, HttpError> {
    let contributions: Vec<SignedContributionAndProof<E>> =
        body.json().map_err(HttpError::into_batch)?;
    blocking_duty(ctx.workers(), move || {
        let mut failures = Vec::new();
        for (i, signed) in contributions.into_iter().enumerate() {
            match ctx
                .chain
                .verify_sync_contribution_for_gossip(signed, ctx.chain.now_ms())
            {
                Ok(verified) => {
                    let contribution = verified.contribution;
                    if let Err(e) = ctx
                        .pool
                        .insert_sync_contribution(&contribution.message.contribution)
                    {
                        tracing::debug!(error = ?e, "contribution not pooled");
                    }
                    ctx.network.publish_contribution(contribution);
                }
                Err(
                    SyncCommitteeGossipError::ContributionKnown
                    | SyncCommitteeGossipError::AggregatorAlreadyKnown(_),
                ) => {}
                Err(e) => failures.push(failure(i, e)),
            }
        }
        batch_result("contributions", failures)
    })
    .await
}

fn operation_error(e: OperationGossipError) -> HttpError {
    HttpError::bad_request(format!("invalid operation: {e}"))
}

/// `POST /eth/v1/beacon/pool/voluntary_exits`.
pub(crate) async fn post_voluntary_exit<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let exit: SignedVoluntaryExit = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let verified = ctx
            .chain
            .verify_voluntary_exit_for_gossip(exit, ctx.chain.now_ms())
            .map_err(operation_error)?;
        let exit = verified.0;
        ctx.pool.insert_voluntary_exit(exit.clone());
        ctx.network
            .publish_operation(PublishedOperation::VoluntaryExit(exit));
        Ok(ok_empty())
    })
    .await
}

/// `POST /eth/v1/beacon/pool/proposer_slashings`.
pub(crate) async fn post_proposer_slashing<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    let slashing: ProposerSlashing = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let verified = ctx
            .chain
            .verify_proposer_slashing_for_gossip(slashing)
            .map_err(operation_error)?;
        let slashing = verified.0;
        if let Err(e) = ctx.pool.insert_proposer_slashing(slashing.clone()) {
            tracing::debug!(error = ?e, "proposer slashing not pooled");
        }
        ctx.network
            .publish_operation(PublishedOperation::ProposerSlashing(slashing));
        Ok(ok_empty())
    })
    .await
}

/// `POST /eth/v2/beacon/pool/attester_slashings` (Electra slashings, with
/// `Eth-Consensus-Version`).
pub(crate) async fn post_attester_slashing_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
    body: Body,
) -> Result<Response, HttpError> {
    electra_fork(&body)?;
    let slashing: AttesterSlashing<E> = body.json()?;
    blocking_duty(ctx.workers(), move || {
        let verified = ctx
            .chain
            .verify_attester_slashing_for_gossip(slashing)
            .map_err(operation_error)?;
        if let Err(e) = ctx.chain.on_attester_slashing(&verified) {
            tracing::warn!(error = %e, "attester slashing not applied to fork choice");
        }
        if let Err(e) = ctx.pool.insert_attester_slashing(verified.slashing.clone()) {
            tracing::debug!(error = ?e, "attester slashing not pooled");
        }
        ctx.network
            .publish_operation(PublishedOperation::AttesterSlashing(verified.slashing));
        Ok(ok_empty())
    })
    .await
}

/// `POST /eth/v1/beacon/pool/bls_to_execution_changes`: a list, with per-item failures.
pub(crate) async fn post_bls_to_execution_changes<E: EthSpec>(
    State(ctx): Ctx<E>,
    BatchBody(body): BatchBody,
) -> Result<Response, HttpError> {
    let changes: Vec<SignedBLSToExecutionChange> = body.json().map_err(HttpError::into_batch)?;
    blocking_duty(ctx.workers(), move || {
        let mut failures = Vec::new();
        for (i, change) in changes.into_iter().enumerate() {
            match ctx
                .chain
                .verify_bls_to_execution_change_for_gossip(change, ctx.chain.now_ms())
            {
                Ok(verified) => {
                    let change = verified.0;
                    ctx.pool.insert_bls_to_execution_change(change.clone());
                    ctx.network
                        .publish_operation(PublishedOperation::BlsToExecutionChange(change));
                }
                Err(OperationGossipError::AlreadySeen(_)) => {}
                Err(e) => failures.push(failure(i, e)),
            }
        }
        batch_result("BLS to execution changes", failures)
    })
    .await
}

/// `GET /eth/v2/beacon/pool/attester_slashings`: every attester slashing the pool holds, in the
/// head's fork (`{version, data}` and `Eth-Consensus-Version`).
pub(crate) async fn get_attester_slashings_v2<E: EthSpec>(
    State(ctx): Ctx<E>,
) -> Result<Response, HttpError> {
    let fork = ctx
        .chain
        .spec()
        .fork_name_at_slot::<E>(ctx.chain.head().slot);
    /// `{version, data}` of Electra slashings (the type is the same in every fork since).
    #[derive(serde::Serialize)]
    struct Versioned<T> {
        version: &'static str,
        data: T,
    }
    let data = ctx.pool.operations().attester_slashings;
    Ok(with_version(
        json(&Versioned {
            version: fork.as_str(),
            data,
        })?,
        fork,
    ))
}

/// `GET /eth/v1/beacon/pool/proposer_slashings`: every proposer slashing the pool holds.
pub(crate) async fn get_proposer_slashings<E: EthSpec>(
    State(ctx): Ctx<E>,
) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: ctx.pool.operations().proposer_slashings,
    })
}

/// `GET /eth/v1/beacon/pool/voluntary_exits`: every voluntary exit the pool holds.
pub(crate) async fn get_voluntary_exits<E: EthSpec>(
    State(ctx): Ctx<E>,
) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: ctx.pool.operations().voluntary_exits,
    })
}

/// `GET /eth/v1/beacon/pool/bls_to_execution_changes`: every BLS-to-execution change the pool
/// holds.
pub(crate) async fn get_bls_to_execution_changes<E: EthSpec>(
    State(ctx): Ctx<E>,
) -> Result<Response, HttpError> {
    json(&GenericResponse {
        data: ctx.pool.operations().bls_to_execution_changes,
    })
}
