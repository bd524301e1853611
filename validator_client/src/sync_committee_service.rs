//! Sync committee duties: at `SYNC_MESSAGE_DUE_BPS` of the slot (or at the slot's block) each
//! member signs the head block root; at `CONTRIBUTION_DUE_BPS` each member selected for a
//! subcommittee signs and publishes the subcommittee's contribution.
//!
//! [spec]: altair/validator.md#sync-committee-messages,
//! altair/validator.md#sync-committee-contributions

use std::sync::Arc;
use std::time::Instant;

use beacon_api::BlockId;
use tracing::{debug, warn};
use types::{EthSpec, Root, Slot};

use crate::duties::sync_subcommittees;
use crate::signing::is_sync_committee_aggregator;
use crate::timing::{DutyKind, SlotClock};
use crate::{Context, wait_for_head_or_due};

/// The sync committee duties of `slot`.
pub(crate) async fn sync_committee_duties<E: EthSpec>(ctx: Arc<Context<E>>, slot: Slot) {
    if !ctx.spec.fork_name_at_slot::<E>(slot).altair_enabled() {
        return;
    }
    let duties = ctx.duties.read().sync_at::<E>(slot);
    if duties.is_empty() {
        return;
    }
    wait_for_head_or_due(&ctx, slot, DutyKind::SyncCommitteeMessage).await;
    // The head block root: the head event's when it is this slot's block, else the node's.
    let head = ctx
        .head
        .borrow()
        .as_ref()
        .filter(|h| h.slot == slot)
        .map(|h| h.block);
    let block_root = match head {
        Some(root) => root,
        None => match ctx
            .nodes
            .first_success("head block root", |c| async move {
                c.get_beacon_blocks_root(BlockId::Head).await
            })
            .await
        {
            Ok(r) => r.data.root,
            Err(e) => {
                warn!(slot, error = %e, "no head block root for sync committee messages");
                ctx.metrics
                    .missed_duties(DutyKind::SyncCommitteeMessage, duties.len() as u64);
                return;
            }
        },
    };
    let started = Instant::now();
    let mut messages = Vec::new();
    for duty in &duties {
        match ctx.store.sync_committee_message::<E>(
            &duty.pubkey,
            slot,
            block_root,
            duty.validator_index,
        ) {
            Ok(m) => messages.push(m),
            Err(e) => {
                warn!(slot, error = %e, "sync committee message not signed");
                ctx.metrics.missed_duties(DutyKind::SyncCommitteeMessage, 1);
            }
        }
    }
    ctx.metrics
        .observe_signing(DutyKind::SyncCommitteeMessage, started.elapsed());
    if !messages.is_empty() {
        let started = Instant::now();
        let messages_ref = &messages;
        match ctx
            .nodes
            .first_success("sync committee messages", |c| async move {
                c.post_beacon_pool_sync_committees(messages_ref).await
            })
            .await
        {
            Ok(()) => {
                ctx.metrics
                    .observe_submission(DutyKind::SyncCommitteeMessage, started.elapsed());
                ctx.metrics
                    .performed(DutyKind::SyncCommitteeMessage, messages.len() as u64);
                debug!(slot, count = messages.len(), %block_root, "published sync committee messages");
            }
            Err(e) => {
                warn!(slot, error = %e, "sync committee messages not published");
                ctx.metrics
                    .missed_duties(DutyKind::SyncCommitteeMessage, messages.len() as u64);
            }
        }
    }

    // Aggregation selection, per subcommittee the member sits in.
    let mut aggregators = Vec::new();
    for duty in &duties {
        for subcommittee_index in sync_subcommittees::<E>(duty) {
            match ctx
                .store
                .sync_selection_proof::<E>(&duty.pubkey, slot, subcommittee_index)
            {
                Ok(proof) if is_sync_committee_aggregator::<E>(&proof) => {
                    aggregators.push((duty.clone(), subcommittee_index, proof));
                }
                Ok(_) => {}
                Err(e) => warn!(slot, error = %e, "no sync selection proof"),
            }
        }
    }
    if aggregators.is_empty() {
        return;
    }
    let due = ctx
        .clock
        .due_time::<E>(slot, DutyKind::SyncCommitteeContribution, &ctx.spec);
    tokio::time::sleep(SlotClock::until(SlotClock::now(), due)).await;
    contribute(&ctx, slot, block_root, aggregators).await;
}

async fn contribute<E: EthSpec>(
    ctx: &Arc<Context<E>>,
    slot: Slot,
    block_root: Root,
    aggregators: Vec<(beacon_api::SyncDuty, u64, types::BLSSignature)>,
) {
    let mut signed = Vec::new();
    for (duty, subcommittee_index, proof) in aggregators {
        let contribution = match ctx
            .nodes
            .first_success("sync committee contribution", |c| async move {
                c.get_validator_sync_committee_contribution::<E>(
                    slot,
                    subcommittee_index,
                    block_root,
                )
                .await
            })
            .await
        {
            Ok(r) => r.data,
            Err(e) => {
                warn!(slot, subcommittee_index, error = %e, "no sync committee contribution");
                ctx.metrics
                    .missed_duties(DutyKind::SyncCommitteeContribution, 1);
                continue;
            }
        };
        match ctx.store.sign_contribution_and_proof(
            &duty.pubkey,
            duty.validator_index,
            contribution,
            proof,
        ) {
            Ok(s) => signed.push(s),
            Err(e) => {
                warn!(slot, error = %e, "contribution not signed");
                ctx.metrics
                    .missed_duties(DutyKind::SyncCommitteeContribution, 1);
            }
        }
    }
    if signed.is_empty() {
        return;
    }
    let started = Instant::now();
    let signed_ref = &signed;
    match ctx
        .nodes
        .first_success("contributions", |c| async move {
            c.post_validator_contribution_and_proofs(signed_ref).await
        })
        .await
    {
        Ok(()) => {
            ctx.metrics
                .observe_submission(DutyKind::SyncCommitteeContribution, started.elapsed());
            ctx.metrics
                .performed(DutyKind::SyncCommitteeContribution, signed.len() as u64);
            debug!(slot, count = signed.len(), "published contributions");
        }
        Err(e) => {
            warn!(slot, error = %e, "contributions not published");
            ctx.metrics
                .missed_duties(DutyKind::SyncCommitteeContribution, signed.len() as u64);
        }
    }
}
