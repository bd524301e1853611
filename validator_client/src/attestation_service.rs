//! Attesting and aggregating: at `ATTESTATION_DUE_BPS` of the slot (or as soon as the slot's
//! block is the head) each attester signs the node's attestation data; at `AGGREGATE_DUE_BPS`
//! each selected aggregator signs and publishes the aggregate of its committee.
//!
//! [spec]: phase0/validator.md#attesting, phase0/validator.md#attestation-aggregation,
//! electra/validator.md#attesting

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use tracing::{debug, info, warn};
use types::phase0::AttestationData;
use types::{EthSpec, ForkName, Slot};

use crate::duties::AttesterDutyAndProof;
use crate::signing::hash_tree_root;
use crate::timing::{DutyKind, SlotClock};
use crate::{Context, wait_for_head_or_due};

/// Why a slot's attestations or aggregates failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AttestError {
    /// Before Electra the pool takes phase0 `Attestation`s, which this client does not build.
    #[error("attestations before Electra are not supported (fork {0})")]
    UnsupportedFork(ForkName),
    /// The beacon nodes failed.
    #[error(transparent)]
    BeaconNodes(#[from] crate::beacon_nodes::AllFailed),
    /// The signing task died.
    #[error("signing task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// The attestation and aggregation duties of `slot`.
pub(crate) async fn attest_and_aggregate<E: EthSpec>(ctx: Arc<Context<E>>, slot: Slot) {
    let duties = ctx.duties.read().attesters_at::<E>(slot);
    if duties.is_empty() {
        return;
    }
    wait_for_head_or_due(&ctx, slot, DutyKind::Attestation).await;
    let data = match attest(&ctx, slot, &duties).await {
        Ok(data) => data,
        Err(e) => {
            warn!(slot, error = %e, "attestations failed");
            ctx.metrics
                .missed_duties(DutyKind::Attestation, duties.len() as u64);
            return;
        }
    };
    let aggregators: Vec<&AttesterDutyAndProof> = duties
        .iter()
        .filter(|d| d.selection_proof.is_some())
        .collect();
    if aggregators.is_empty() {
        return;
    }
    let due = ctx
        .clock
        .due_time::<E>(slot, DutyKind::Aggregate, &ctx.spec);
    tokio::time::sleep(SlotClock::until(SlotClock::now(), due)).await;
    if let Err(e) = aggregate(&ctx, slot, &data, &aggregators).await {
        warn!(slot, error = %e, "aggregates failed");
        ctx.metrics
            .missed_duties(DutyKind::Aggregate, aggregators.len() as u64);
    }
}

/// Signs and publishes the attestations of `duties`; returns the attestation data signed.
async fn attest<E: EthSpec>(
    ctx: &Arc<Context<E>>,
    slot: Slot,
    duties: &[AttesterDutyAndProof],
) -> Result<AttestationData, AttestError> {
    let fork = ctx.spec.fork_name_at_slot::<E>(slot);
    if !fork.electra_enabled() {
        return Err(AttestError::UnsupportedFork(fork));
    }
    // From Electra the data no longer names the committee (`index` is 0), so one request
    // serves every committee of the slot.
    let committee_index = duties[0].duty.committee_index;
    let data = ctx
        .nodes
        .first_success("attestation data", |c| async move {
            c.get_validator_attestation_data(slot, committee_index)
                .await
        })
        .await?
        .data;
    let started = Instant::now();
    let signer = Arc::clone(ctx);
    let to_sign: Vec<_> = duties.iter().map(|d| d.duty.clone()).collect();
    let signing_data = data.clone();
    // Slashing protection writes each vote durably before its signature exists: blocking work.
    let results = tokio::task::spawn_blocking(move || {
        to_sign
            .iter()
            .map(|duty| {
                signer.store.sign_attestation(
                    &duty.pubkey,
                    duty.validator_index,
                    duty.committee_index,
                    signing_data.clone(),
                )
            })
            .collect::<Vec<_>>()
    })
    .await?;
    ctx.metrics
        .observe_signing(DutyKind::Attestation, started.elapsed());
    let mut attestations = Vec::new();
    for result in results {
        match result {
            Ok(a) => attestations.push(a),
            Err(e) => {
                warn!(slot, error = %e, "attestation not signed");
                ctx.metrics.missed_duties(DutyKind::Attestation, 1);
            }
        }
    }
    if attestations.is_empty() {
        return Ok(data);
    }
    let started = Instant::now();
    let attestations = &attestations;
    ctx.nodes
        .first_success("attestations", |c| async move {
            c.post_beacon_pool_attestations_v2(fork, attestations).await
        })
        .await?;
    ctx.metrics
        .observe_submission(DutyKind::Attestation, started.elapsed());
    ctx.metrics
        .performed(DutyKind::Attestation, attestations.len() as u64);
    info!(
        slot,
        count = attestations.len(),
        head = %data.beacon_block_root,
        source = data.source.epoch,
        target = data.target.epoch,
        "published attestations"
    );
    Ok(data)
}

/// Fetches, signs and publishes the aggregates of the selected aggregators.
async fn aggregate<E: EthSpec>(
    ctx: &Arc<Context<E>>,
    slot: Slot,
    data: &AttestationData,
    aggregators: &[&AttesterDutyAndProof],
) -> Result<(), AttestError> {
    let fork = ctx.spec.fork_name_at_slot::<E>(slot);
    let data_root = hash_tree_root(data);
    let mut by_committee: BTreeMap<u64, Vec<&AttesterDutyAndProof>> = BTreeMap::new();
    for duty in aggregators {
        by_committee
            .entry(duty.duty.committee_index)
            .or_default()
            .push(duty);
    }
    let mut signed = Vec::new();
    let mut signed_gloas = Vec::new();
    for (committee_index, duties) in by_committee {
        let aggregate = match ctx
            .nodes
            .first_success("aggregate attestation", |c| async move {
                c.get_validator_aggregate_attestation_v2::<E>(slot, data_root, committee_index)
                    .await
            })
            .await
        {
            Ok(response) => response.data,
            Err(e) => {
                warn!(slot, committee_index, error = %e, "no aggregate");
                ctx.metrics
                    .missed_duties(DutyKind::Aggregate, duties.len() as u64);
                continue;
            }
        };
        let started = Instant::now();
        match aggregate {
            types::Attestation::Electra(aggregate) | types::Attestation::Fulu(aggregate) => {
                for duty in duties {
                    let Some(proof) = duty.selection_proof else {
                        continue;
                    };
                    match ctx.store.sign_aggregate_and_proof(
                        &duty.duty.pubkey,
                        duty.duty.validator_index,
                        aggregate.clone(),
                        proof,
                    ) {
                        Ok(s) => signed.push(s),
                        Err(e) => {
                            warn!(slot, error = %e, "aggregate not signed");
                            ctx.metrics.missed_duties(DutyKind::Aggregate, 1);
                        }
                    }
                }
            }
            types::Attestation::Gloas(aggregate) => {
                for duty in duties {
                    let Some(proof) = duty.selection_proof else {
                        continue;
                    };
                    match ctx.store.sign_gloas_aggregate_and_proof(
                        &duty.duty.pubkey,
                        duty.duty.validator_index,
                        aggregate.clone(),
                        proof,
                    ) {
                        Ok(s) => signed_gloas.push(s),
                        Err(e) => {
                            warn!(slot, error = %e, "aggregate not signed");
                            ctx.metrics.missed_duties(DutyKind::Aggregate, 1);
                        }
                    }
                }
            }
            other @ (types::Attestation::Phase0(_)
            | types::Attestation::Altair(_)
            | types::Attestation::Bellatrix(_)
            | types::Attestation::Capella(_)
            | types::Attestation::Deneb(_)) => {
                return Err(AttestError::UnsupportedFork(other.fork_name()));
            }
        }
        ctx.metrics
            .observe_signing(DutyKind::Aggregate, started.elapsed());
    }
    if signed.is_empty() && signed_gloas.is_empty() {
        return Ok(());
    }
    let started = Instant::now();
    let count = signed.len() + signed_gloas.len();
    if !signed.is_empty() {
        let signed_ref = &signed;
        ctx.nodes
            .first_success("aggregates", |c| async move {
                c.post_validator_aggregate_and_proofs_v2(fork, signed_ref)
                    .await
            })
            .await?;
    }
    if !signed_gloas.is_empty() {
        let signed_ref = &signed_gloas;
        ctx.nodes
            .first_success("aggregates", |c| async move {
                c.post_validator_aggregate_and_proofs_v2_gloas(signed_ref)
                    .await
            })
            .await?;
    }
    ctx.metrics
        .observe_submission(DutyKind::Aggregate, started.elapsed());
    ctx.metrics.performed(DutyKind::Aggregate, count as u64);
    debug!(slot, count, "published aggregates");
    Ok(())
}
