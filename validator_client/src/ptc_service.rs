//! Payload timeliness committee duties (Gloas): at [`crate::timing::ptc_vote_due_bps`] of the
//! slot each member of the slot's PTC signs the node's `PayloadAttestationData` and the slot's
//! `PayloadAttestationMessage`s are published in one request.
//!
//! A node that has seen no block of the slot answers 404: the spec's "has not seen any beacon
//! block for the assigned slot, do not submit a payload attestation", so no vote and no missed
//! duty. PTC votes are not slashable, so slashing protection records nothing; the validator
//! store still refuses them while doppelganger protection holds the keys back.
//!
//! [spec]: gloas/validator.md#payload-timeliness-attestation,
//! gloas/validator.md#constructing-the-payloadattestationmessage

use std::sync::Arc;
use std::time::Instant;

use beacon_api::PtcDuty;
use tracing::{debug, warn};
use types::gloas::{PayloadAttestationData, PayloadAttestationMessage};
use types::{ChainSpec, Epoch, EthSpec, Slot};

use crate::Context;
use crate::beacon_nodes::AllFailed;
use crate::timing::{DutyKind, SlotClock, compute_epoch_at_slot};

/// Why a slot's PTC votes were not all published.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PtcError {
    /// No beacon node served the slot's `PayloadAttestationData` (other than "no block").
    #[error("no payload attestation data: {0}")]
    Data(#[source] AllFailed),
    /// The data served is of another slot than the one asked for.
    #[error("the node served payload attestation data of slot {served} for slot {asked}")]
    WrongSlot {
        /// The slot asked for.
        asked: Slot,
        /// The slot of the data served.
        served: Slot,
    },
    /// No beacon node took the signed messages.
    #[error("payload attestation messages not published: {0}")]
    Publish(#[source] AllFailed),
}

/// What became of a slot's PTC duties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PtcOutcome {
    /// No node has seen a block of the slot: nothing to vote on.
    NoBlock,
    /// `signed` votes were signed and published (`refused` members could not sign).
    Published {
        /// The messages published.
        signed: usize,
        /// The members whose vote the validator store refused to sign.
        refused: usize,
    },
}

/// True when every node answered 404: none has seen a block of the slot.
fn no_block_seen(error: &AllFailed) -> bool {
    !error.errors.is_empty()
        && error
            .errors
            .iter()
            .all(|(_, e)| e.status().is_some_and(|s| s.as_u16() == 404))
}

/// True if epoch `epoch` has a payload timeliness committee: at or after the config's Gloas
/// fork epoch (`GLOAS_FORK_EPOCH`; a FAR_FUTURE one, or none, means never).
pub(crate) fn has_ptc(spec: &ChainSpec, epoch: Epoch) -> bool {
    spec.fork_name_at_epoch(epoch).gloas_enabled()
}

/// The PTC duties of `slot`: nothing before the Gloas fork epoch (nor on a chain that never
/// schedules Gloas).
pub(crate) async fn ptc_duties<E: EthSpec>(ctx: Arc<Context<E>>, slot: Slot) {
    if !has_ptc(&ctx.spec, compute_epoch_at_slot::<E>(slot)) {
        return;
    }
    let duties = ctx.duties.read().ptc_at::<E>(slot);
    if duties.is_empty() {
        return;
    }
    let due = ctx.clock.due_time::<E>(slot, DutyKind::PtcVote, &ctx.spec);
    tokio::time::sleep(SlotClock::until(SlotClock::now(), due)).await;
    match vote(&ctx, slot, &duties).await {
        Ok(PtcOutcome::NoBlock) => {
            debug!(
                slot,
                members = duties.len(),
                "no block seen for the slot: no PTC vote"
            );
        }
        Ok(PtcOutcome::Published { signed, refused }) => {
            debug!(slot, signed, refused, "published PTC votes");
        }
        Err(e) => warn!(slot, error = %e, "PTC votes failed"),
    }
}

/// Fetches the data of `slot`, signs one message per duty and publishes them together.
/// Counts the votes signed, published and missed in the metrics.
pub(crate) async fn vote<E: EthSpec>(
    ctx: &Context<E>,
    slot: Slot,
    duties: &[PtcDuty],
) -> Result<PtcOutcome, PtcError> {
    let data = match ctx
        .nodes
        .first_success("payload attestation data", |c| async move {
            c.get_validator_payload_attestation_data(slot).await
        })
        .await
    {
        Ok(response) => response.data,
        Err(e) if no_block_seen(&e) => return Ok(PtcOutcome::NoBlock),
        Err(e) => {
            ctx.metrics
                .missed_duties(DutyKind::PtcVote, duties.len() as u64);
            return Err(PtcError::Data(e));
        }
    };
    if data.slot != slot {
        ctx.metrics
            .missed_duties(DutyKind::PtcVote, duties.len() as u64);
        return Err(PtcError::WrongSlot {
            asked: slot,
            served: data.slot,
        });
    }
    let started = Instant::now();
    let (messages, refused) = sign_votes::<E>(ctx, slot, duties, &data);
    ctx.metrics
        .observe_signing(DutyKind::PtcVote, started.elapsed());
    ctx.metrics.signed(DutyKind::PtcVote, messages.len() as u64);
    ctx.metrics.missed_duties(DutyKind::PtcVote, refused as u64);
    if messages.is_empty() {
        return Ok(PtcOutcome::Published { signed: 0, refused });
    }
    let started = Instant::now();
    let messages_ref = &messages;
    match ctx
        .nodes
        .first_success("payload attestation messages", |c| async move {
            c.post_beacon_pool_payload_attestations(messages_ref).await
        })
        .await
    {
        Ok(()) => {
            ctx.metrics
                .observe_submission(DutyKind::PtcVote, started.elapsed());
            ctx.metrics
                .performed(DutyKind::PtcVote, messages.len() as u64);
            Ok(PtcOutcome::Published {
                signed: messages.len(),
                refused,
            })
        }
        Err(e) => {
            ctx.metrics
                .missed_duties(DutyKind::PtcVote, messages.len() as u64);
            Err(PtcError::Publish(e))
        }
    }
}

/// One `PayloadAttestationMessage` per duty over `data`; returns them and how many the store
/// refused (a key removed since the duties were fetched, doppelganger protection).
fn sign_votes<E: EthSpec>(
    ctx: &Context<E>,
    slot: Slot,
    duties: &[PtcDuty],
    data: &PayloadAttestationData,
) -> (Vec<PayloadAttestationMessage>, usize) {
    let mut messages = Vec::with_capacity(duties.len());
    let mut refused = 0;
    for duty in duties {
        match ctx.store.sign_payload_attestation::<E>(
            &duty.pubkey,
            duty.validator_index,
            data.clone(),
        ) {
            Ok(message) => messages.push(message),
            Err(e) => {
                warn!(slot, validator = duty.validator_index, error = %e, "PTC vote not signed");
                refused += 1;
            }
        }
    }
    (messages, refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use beacon_api::ClientError;
    use reqwest::StatusCode;

    fn api_error(status: StatusCode) -> ClientError {
        ClientError::UnexpectedStatus {
            url: "http://127.0.0.1:5052/eth/v1/validator/payload_attestation_data/1".into(),
            status,
            body: String::new(),
        }
    }

    fn failed(statuses: &[StatusCode]) -> AllFailed {
        AllFailed {
            what: "payload attestation data",
            errors: statuses
                .iter()
                .map(|s| ("http://127.0.0.1:5052".to_string(), api_error(*s)))
                .collect(),
        }
    }

    #[test]
    fn ptc_duties_run_from_the_gloas_fork_epoch_and_never_without_one() {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(types::ForkName::Fulu);
        spec.gloas_fork_epoch = 3;
        assert!(!has_ptc(&spec, 2));
        assert!(has_ptc(&spec, 3));
        assert!(has_ptc(&spec, 4));
        spec.gloas_fork_epoch = types::FAR_FUTURE_EPOCH;
        assert!(!has_ptc(&spec, 3));
        assert!(!has_ptc(&spec, types::FAR_FUTURE_EPOCH - 1));
        assert!(!has_ptc(&spec, types::FAR_FUTURE_EPOCH));
        // A config without GLOAS_FORK_VERSION schedules no Gloas whatever its epoch says.
        spec.gloas_fork_epoch = 3;
        spec.gloas_fork_version = None;
        assert!(!has_ptc(&spec, 4));
    }

    #[test]
    fn only_a_404_from_every_node_means_no_block() {
        assert!(no_block_seen(&failed(&[StatusCode::NOT_FOUND])));
        assert!(no_block_seen(&failed(&[
            StatusCode::NOT_FOUND,
            StatusCode::NOT_FOUND
        ])));
        // One node without the block, another down: the vote failed, it was not skipped.
        assert!(!no_block_seen(&failed(&[
            StatusCode::NOT_FOUND,
            StatusCode::INTERNAL_SERVER_ERROR
        ])));
        assert!(!no_block_seen(&failed(&[StatusCode::BAD_REQUEST])));
        // No node configured at all is no answer.
        assert!(!no_block_seen(&failed(&[])));
    }
}
