//! Duties: which of the client's validators attest, propose, sit in the sync committee and
//! (from Gloas) in the payload timeliness committee when, as the beacon node reports them, and
//! when to ask again.
//!
//! Attester duties of an epoch are fetched a whole epoch ahead and refetched when a head event
//! shows their dependent root changed; PTC duties follow the same schedule (they are decided by
//! the same dependent root); proposer duties are asked for every slot (one cheap GET, and it
//! picks up any change of the proposer shuffling's dependent root); sync committee duties once
//! per epoch for the current and the next period.
//!
//! [spec]: phase0/validator.md#validator-assignments, altair/validator.md#sync-committee,
//! gloas/validator.md#payload-timeliness-committee, gloas/validator.md#lookahead

use std::collections::{BTreeMap, BTreeSet};

use beacon_api::events::HeadEvent;
use beacon_api::{
    AttesterDuty, BeaconCommitteeSubscription, ProposerDuty, PtcDuty, StateId,
    SyncCommitteeSubscription, SyncDuty, ValidatorId, ValidatorsRequestBody,
};
use tracing::{debug, info, warn};
use types::{BLSSignature, Epoch, EthSpec, Root, Slot};

use crate::Context;
use crate::signing::{is_aggregator, sync_subcommittee_index};
use crate::timing::{
    compute_epoch_at_slot, compute_start_slot_at_epoch, compute_sync_committee_period,
    sync_committee_period_of_message_slot,
};

/// An attester duty, with the validator's selection proof when it aggregates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttesterDutyAndProof {
    /// The duty.
    pub duty: AttesterDuty,
    /// `Some(get_slot_signature(...))` if `is_aggregator` selected the validator.
    pub selection_proof: Option<BLSSignature>,
}

/// The duties known to the client, by epoch (sync duties by period).
#[derive(Debug, Default)]
pub struct DutiesState {
    attesters: BTreeMap<Epoch, (Root, Vec<AttesterDutyAndProof>)>,
    proposers: BTreeMap<Epoch, (Root, Vec<ProposerDuty>)>,
    sync: BTreeMap<u64, Vec<SyncDuty>>,
    ptc: BTreeMap<Epoch, (Root, Vec<PtcDuty>)>,
    stale_attester_epochs: BTreeSet<Epoch>,
}

impl DutiesState {
    /// Replaces the attester duties of `epoch`.
    pub fn set_attesters(
        &mut self,
        epoch: Epoch,
        dependent_root: Root,
        duties: Vec<AttesterDutyAndProof>,
    ) {
        self.attesters.insert(epoch, (dependent_root, duties));
        self.stale_attester_epochs.remove(&epoch);
    }

    /// The dependent root the attester duties of `epoch` were computed from.
    pub fn attester_dependent_root(&self, epoch: Epoch) -> Option<Root> {
        self.attesters.get(&epoch).map(|(root, _)| *root)
    }

    /// The attester duties at `slot`.
    pub fn attesters_at<E: EthSpec>(&self, slot: Slot) -> Vec<AttesterDutyAndProof> {
        self.attesters
            .get(&compute_epoch_at_slot::<E>(slot))
            .map(|(_, duties)| {
                duties
                    .iter()
                    .filter(|d| d.duty.slot == slot)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Replaces the proposer duties of `epoch`.
    pub fn set_proposers(&mut self, epoch: Epoch, dependent_root: Root, duties: Vec<ProposerDuty>) {
        self.proposers.insert(epoch, (dependent_root, duties));
    }

    /// True if the proposer duties of `epoch` are known.
    pub fn has_proposers(&self, epoch: Epoch) -> bool {
        self.proposers.contains_key(&epoch)
    }

    /// The proposer duties at `slot`.
    pub fn proposers_at<E: EthSpec>(&self, slot: Slot) -> Vec<ProposerDuty> {
        self.proposers
            .get(&compute_epoch_at_slot::<E>(slot))
            .map(|(_, duties)| duties.iter().filter(|d| d.slot == slot).cloned().collect())
            .unwrap_or_default()
    }

    /// Replaces the payload timeliness committee duties of `epoch`.
    pub fn set_ptc(&mut self, epoch: Epoch, dependent_root: Root, duties: Vec<PtcDuty>) {
        self.ptc.insert(epoch, (dependent_root, duties));
    }

    /// True if the PTC duties of `epoch` are known.
    pub fn has_ptc(&self, epoch: Epoch) -> bool {
        self.ptc.contains_key(&epoch)
    }

    /// The PTC duties at `slot`.
    pub fn ptc_at<E: EthSpec>(&self, slot: Slot) -> Vec<PtcDuty> {
        self.ptc
            .get(&compute_epoch_at_slot::<E>(slot))
            .map(|(_, duties)| duties.iter().filter(|d| d.slot == slot).cloned().collect())
            .unwrap_or_default()
    }

    /// Replaces the sync committee duties of `period`.
    pub fn set_sync(&mut self, period: u64, duties: Vec<SyncDuty>) {
        self.sync.insert(period, duties);
    }

    /// True if the sync committee duties of `period` are known.
    pub fn has_sync(&self, period: u64) -> bool {
        self.sync.contains_key(&period)
    }

    /// The sync committee duties of messages at `slot` (the period of `slot + 1`).
    pub fn sync_at<E: EthSpec>(&self, slot: Slot) -> Vec<SyncDuty> {
        self.sync
            .get(&sync_committee_period_of_message_slot::<E>(slot))
            .cloned()
            .unwrap_or_default()
    }

    /// Marks the attester duties that a head event shows were computed from another chain: at
    /// the head's epoch `e`, `previous_duty_dependent_root` is the dependent root of epoch
    /// `e`'s duties and `current_duty_dependent_root` that of epoch `e + 1`'s. Returns the
    /// epochs now stale.
    pub fn mark_stale_from_head<E: EthSpec>(&mut self, head: &HeadEvent) -> Vec<Epoch> {
        let epoch = compute_epoch_at_slot::<E>(head.slot);
        let mut stale = Vec::new();
        for (e, root) in [
            (epoch, head.previous_duty_dependent_root),
            (epoch + 1, head.current_duty_dependent_root),
        ] {
            if self
                .attester_dependent_root(e)
                .is_some_and(|known| known != root)
            {
                self.stale_attester_epochs.insert(e);
                stale.push(e);
            }
        }
        stale
    }

    /// Takes the epochs whose attester duties must be fetched again.
    pub fn take_stale_attester_epochs(&mut self) -> Vec<Epoch> {
        std::mem::take(&mut self.stale_attester_epochs)
            .into_iter()
            .collect()
    }

    /// Drops the duties of epochs before `current_epoch - 1` (and of sync periods before the
    /// current one's).
    pub fn prune<E: EthSpec>(&mut self, current_epoch: Epoch) {
        let keep_from = current_epoch.saturating_sub(1);
        self.attesters = self.attesters.split_off(&keep_from);
        self.proposers = self.proposers.split_off(&keep_from);
        self.ptc = self.ptc.split_off(&keep_from);
        self.sync = self
            .sync
            .split_off(&compute_sync_committee_period::<E>(keep_from));
    }
}

/// Resolves the validator indices of keys not yet known (`POST states/head/validators`). A key
/// the chain does not have yet (no deposit) stays unresolved and is asked for again later.
pub(crate) async fn resolve_indices<E: EthSpec>(ctx: &Context<E>) {
    let unresolved = ctx.store.unresolved_pubkeys();
    if unresolved.is_empty() {
        return;
    }
    let body = ValidatorsRequestBody {
        ids: Some(
            unresolved
                .iter()
                .map(|p| ValidatorId::PublicKey(*p))
                .collect(),
        ),
        statuses: None,
    };
    let body = &body;
    match ctx
        .nodes
        .first_success("validator indices", |c| async move {
            c.post_beacon_states_validators(StateId::Head, body).await
        })
        .await
    {
        Ok(response) => {
            for v in &response.data {
                ctx.store.set_index(v.validator.pubkey, v.index);
            }
            let missing = ctx.store.unresolved_pubkeys().len();
            info!(
                resolved = response.data.len(),
                unknown = missing,
                "validator indices resolved"
            );
        }
        Err(e) => warn!(error = %e, "could not resolve validator indices"),
    }
}

/// Fetches the attester duties of `epoch`, computes the aggregators' selection proofs, and
/// subscribes the node to the committees' subnets.
pub(crate) async fn update_attesters<E: EthSpec>(ctx: &Context<E>, epoch: Epoch) {
    let indices = ctx.store.indices();
    if indices.is_empty() {
        return;
    }
    let indices = &indices;
    let response = match ctx
        .nodes
        .first_success("attester duties", |c| async move {
            c.post_validator_duties_attester(epoch, indices).await
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            warn!(epoch, error = %e, "could not fetch attester duties");
            return;
        }
    };
    let mut duties = Vec::new();
    for duty in response.data {
        if !ctx.store.contains(&duty.pubkey) {
            continue;
        }
        let selection_proof = match ctx.store.slot_signature::<E>(&duty.pubkey, duty.slot) {
            Ok(proof) => is_aggregator(duty.committee_length, &proof).then_some(proof),
            Err(e) => {
                warn!(error = %e, "no selection proof");
                None
            }
        };
        duties.push(AttesterDutyAndProof {
            duty,
            selection_proof,
        });
    }
    let subscriptions: Vec<BeaconCommitteeSubscription> = duties
        .iter()
        .map(|d| BeaconCommitteeSubscription {
            validator_index: d.duty.validator_index,
            committee_index: d.duty.committee_index,
            committees_at_slot: d.duty.committees_at_slot,
            slot: d.duty.slot,
            is_aggregator: d.selection_proof.is_some(),
        })
        .collect();
    debug!(
        epoch,
        duties = duties.len(),
        aggregators = subscriptions.iter().filter(|s| s.is_aggregator).count(),
        dependent_root = %response.dependent_root,
        "attester duties"
    );
    ctx.duties
        .write()
        .set_attesters(epoch, response.dependent_root, duties);
    if !subscriptions.is_empty() {
        let subscriptions = &subscriptions;
        if let Err(e) = ctx
            .nodes
            .first_success("committee subscriptions", |c| async move {
                c.post_validator_beacon_committee_subscriptions(subscriptions)
                    .await
            })
            .await
        {
            warn!(epoch, error = %e, "could not subscribe to committee subnets");
        }
    }
}

/// Fetches the payload timeliness committee duties of `epoch` (none before the Gloas fork
/// epoch, and never when the chain schedules no Gloas).
///
/// [spec]: gloas/validator.md#payload-timeliness-committee
pub(crate) async fn update_ptc<E: EthSpec>(ctx: &Context<E>, epoch: Epoch) {
    if !crate::ptc_service::has_ptc(&ctx.spec, epoch) {
        return;
    }
    let indices = ctx.store.indices();
    if indices.is_empty() {
        return;
    }
    let indices = &indices;
    let response = match ctx
        .nodes
        .first_success("PTC duties", |c| async move {
            c.post_validator_duties_ptc(epoch, indices).await
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            warn!(epoch, error = %e, "could not fetch PTC duties");
            return;
        }
    };
    let ours: Vec<PtcDuty> = response
        .data
        .into_iter()
        .filter(|d| ctx.store.contains(&d.pubkey))
        .collect();
    debug!(epoch, duties = ours.len(), dependent_root = %response.dependent_root, "PTC duties");
    ctx.duties
        .write()
        .set_ptc(epoch, response.dependent_root, ours);
}

/// Fetches the proposer duties of `epoch`, keeping the client's own.
pub(crate) async fn update_proposers<E: EthSpec>(ctx: &Context<E>, epoch: Epoch) {
    match ctx
        .nodes
        .first_success("proposer duties", |c| async move {
            c.get_validator_duties_proposer(epoch).await
        })
        .await
    {
        Ok(response) => {
            let ours: Vec<ProposerDuty> = response
                .data
                .into_iter()
                .filter(|d| ctx.store.contains(&d.pubkey))
                .collect();
            ctx.duties
                .write()
                .set_proposers(epoch, response.dependent_root, ours);
        }
        Err(e) => debug!(epoch, error = %e, "could not fetch proposer duties"),
    }
}

/// Fetches the sync committee duties of the period of `epoch` and subscribes the node to
/// their subnets until the period ends.
pub(crate) async fn update_sync<E: EthSpec>(ctx: &Context<E>, epoch: Epoch) {
    if !ctx.spec.fork_name_at_epoch(epoch).altair_enabled() {
        return;
    }
    let indices = ctx.store.indices();
    if indices.is_empty() {
        return;
    }
    let indices = &indices;
    let response = match ctx
        .nodes
        .first_success("sync committee duties", |c| async move {
            c.post_validator_duties_sync(epoch, indices).await
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            debug!(epoch, error = %e, "could not fetch sync committee duties");
            return;
        }
    };
    let period = compute_sync_committee_period::<E>(epoch);
    let ours: Vec<SyncDuty> = response
        .data
        .into_iter()
        .filter(|d| ctx.store.contains(&d.pubkey))
        .collect();
    let until_epoch = (period + 1).saturating_mul(E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD);
    let subscriptions: Vec<SyncCommitteeSubscription> = ours
        .iter()
        .map(|d| SyncCommitteeSubscription {
            validator_index: d.validator_index,
            sync_committee_indices: d.validator_sync_committee_indices.clone(),
            until_epoch,
        })
        .collect();
    debug!(period, members = ours.len(), "sync committee duties");
    ctx.duties.write().set_sync(period, ours);
    if !subscriptions.is_empty() {
        let subscriptions = &subscriptions;
        if let Err(e) = ctx
            .nodes
            .first_success("sync committee subscriptions", |c| async move {
                c.post_validator_sync_committee_subscriptions(subscriptions)
                    .await
            })
            .await
        {
            warn!(period, error = %e, "could not subscribe to sync committee subnets");
        }
    }
}

/// The duty lookups due at the start of `slot`.
pub(crate) async fn poll<E: EthSpec>(ctx: &Context<E>, slot: Slot) {
    let epoch = compute_epoch_at_slot::<E>(slot);
    let first_slot_of_epoch = slot == compute_start_slot_at_epoch::<E>(epoch);
    if first_slot_of_epoch || ctx.store.indices().is_empty() {
        resolve_indices(ctx).await;
    }
    update_proposers(ctx, epoch).await;
    // From Fulu the proposer lookahead fixes the next epoch's proposers a whole epoch ahead.
    if ctx.spec.fork_name_at_epoch(epoch + 1).fulu_enabled() {
        update_proposers(ctx, epoch + 1).await;
    }
    for e in [epoch, epoch + 1] {
        let known = ctx.duties.read().attester_dependent_root(e).is_some();
        // The next epoch's duties are asked for again at each epoch start, so that duties of
        // validators resolved since are picked up.
        if !known || (first_slot_of_epoch && e == epoch + 1) {
            update_attesters(ctx, e).await;
        }
        // PTC duties on the attesters' schedule: the next epoch's at each epoch start
        // (`get_ptc_assignment` "at the start of each epoch ... for the next epoch").
        let known = ctx.duties.read().has_ptc(e);
        if !known || (first_slot_of_epoch && e == epoch + 1) {
            update_ptc(ctx, e).await;
        }
    }
    let period = compute_sync_committee_period::<E>(epoch);
    let next_period_epoch = (period + 1).saturating_mul(E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD);
    for (p, e) in [(period, epoch), (period + 1, next_period_epoch)] {
        let known = ctx.duties.read().has_sync(p);
        if !known || first_slot_of_epoch {
            update_sync(ctx, e).await;
        }
    }
    if first_slot_of_epoch {
        ctx.duties.write().prune::<E>(epoch);
    }
}

/// Refetches the attester duties that head events marked stale.
pub(crate) async fn refetch_stale<E: EthSpec>(ctx: &Context<E>) {
    let stale = ctx.duties.write().take_stale_attester_epochs();
    for epoch in stale {
        info!(epoch, "attester duties' dependent root changed: refetching");
        update_attesters(ctx, epoch).await;
        // The PTC of an epoch is decided by the same dependent root.
        update_ptc(ctx, epoch).await;
    }
}

/// The sync subcommittees (with the positions in each) a sync duty places its validator in.
pub fn sync_subcommittees<E: EthSpec>(duty: &SyncDuty) -> BTreeSet<u64> {
    duty.validator_sync_committee_indices
        .iter()
        .map(|&i| sync_subcommittee_index::<E>(i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{BLSPubkey, MinimalEthSpec};

    fn duty(slot: Slot, index: u64) -> AttesterDutyAndProof {
        AttesterDutyAndProof {
            duty: AttesterDuty {
                pubkey: BLSPubkey::repeat_byte(index as u8),
                validator_index: index,
                committee_index: 0,
                committee_length: 8,
                committees_at_slot: 1,
                validator_committee_index: 0,
                slot,
            },
            selection_proof: None,
        }
    }

    fn head(slot: Slot, previous: u8, current: u8) -> HeadEvent {
        HeadEvent {
            slot,
            block: Root::ZERO,
            state: Root::ZERO,
            epoch_transition: false,
            previous_duty_dependent_root: Root::repeat_byte(previous),
            current_duty_dependent_root: Root::repeat_byte(current),
            execution_optimistic: false,
        }
    }

    #[test]
    fn duties_are_found_by_their_slot() {
        let mut state = DutiesState::default();
        state.set_attesters(1, Root::ZERO, vec![duty(8, 1), duty(9, 2), duty(9, 3)]);
        assert_eq!(state.attesters_at::<MinimalEthSpec>(8).len(), 1);
        assert_eq!(state.attesters_at::<MinimalEthSpec>(9).len(), 2);
        assert!(state.attesters_at::<MinimalEthSpec>(10).is_empty());
        // Epoch 2's duties were never fetched.
        assert!(state.attesters_at::<MinimalEthSpec>(16).is_empty());
    }

    #[test]
    fn a_changed_dependent_root_marks_the_epoch_stale() {
        let mut state = DutiesState::default();
        state.set_attesters(2, Root::repeat_byte(1), vec![duty(16, 1)]);
        state.set_attesters(3, Root::repeat_byte(2), vec![duty(24, 1)]);
        // Head in epoch 2: previous root → epoch 2, current root → epoch 3. Same roots: fine.
        assert!(
            state
                .mark_stale_from_head::<MinimalEthSpec>(&head(17, 1, 2))
                .is_empty()
        );
        // The current-duty root changed (a reorg across the end of epoch 2's last slot).
        assert_eq!(
            state.mark_stale_from_head::<MinimalEthSpec>(&head(18, 1, 9)),
            vec![3]
        );
        assert_eq!(state.take_stale_attester_epochs(), vec![3]);
        assert!(state.take_stale_attester_epochs().is_empty());
        // Refetched duties clear the mark.
        state.mark_stale_from_head::<MinimalEthSpec>(&head(18, 7, 2));
        state.set_attesters(2, Root::repeat_byte(7), vec![duty(16, 1)]);
        assert!(state.take_stale_attester_epochs().is_empty());
    }

    #[test]
    fn pruning_keeps_the_previous_epoch_on() {
        let mut state = DutiesState::default();
        for epoch in 0..5 {
            state.set_attesters(epoch, Root::ZERO, vec![duty(epoch * 8, 1)]);
            state.set_proposers(epoch, Root::ZERO, vec![]);
        }
        state.set_sync(0, vec![]);
        state.set_sync(1, vec![]);
        state.prune::<MinimalEthSpec>(3);
        assert_eq!(state.attester_dependent_root(1), None);
        assert!(state.attester_dependent_root(2).is_some());
        assert!(!state.has_proposers(1));
        assert!(state.has_proposers(4));
        // Epoch 2 is in period 0 (8 epochs per period on minimal).
        assert!(state.has_sync(0));
        state.prune::<MinimalEthSpec>(9);
        assert!(!state.has_sync(0));
        assert!(state.has_sync(1));
    }

    #[test]
    fn ptc_duties_are_found_by_their_slot_and_pruned_with_their_epoch() {
        let member = |index: u64, slot: Slot| PtcDuty {
            pubkey: BLSPubkey::repeat_byte(index as u8),
            validator_index: index,
            slot,
        };
        let mut state = DutiesState::default();
        state.set_ptc(
            1,
            Root::ZERO,
            vec![member(1, 8), member(2, 9), member(3, 9)],
        );
        state.set_ptc(3, Root::ZERO, vec![member(1, 30)]);
        assert_eq!(state.ptc_at::<MinimalEthSpec>(8), vec![member(1, 8)]);
        assert_eq!(state.ptc_at::<MinimalEthSpec>(9).len(), 2);
        assert!(state.ptc_at::<MinimalEthSpec>(10).is_empty());
        assert!(state.has_ptc(1) && !state.has_ptc(2));
        state.prune::<MinimalEthSpec>(3);
        assert!(!state.has_ptc(1));
        assert_eq!(state.ptc_at::<MinimalEthSpec>(30), vec![member(1, 30)]);
    }

    #[test]
    fn sync_duties_of_the_last_slot_come_from_the_next_period() {
        let mut state = DutiesState::default();
        let member = |i: u8| SyncDuty {
            pubkey: BLSPubkey::repeat_byte(i),
            validator_index: u64::from(i),
            validator_sync_committee_indices: vec![u64::from(i)],
        };
        state.set_sync(0, vec![member(1)]);
        state.set_sync(1, vec![member(2)]);
        assert_eq!(state.sync_at::<MinimalEthSpec>(62)[0].validator_index, 1);
        assert_eq!(state.sync_at::<MinimalEthSpec>(63)[0].validator_index, 2);
        let seats = SyncDuty {
            validator_sync_committee_indices: vec![0, 7, 8, 31],
            ..member(3)
        };
        assert_eq!(
            sync_subcommittees::<MinimalEthSpec>(&seats),
            BTreeSet::from([0, 1, 3])
        );
    }
}
