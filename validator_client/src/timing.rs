//! The validator's clock: slots from the chain's genesis time and `SLOT_DURATION_MS`, and when
//! in a slot each duty is due. From the Gloas fork epoch the attestation, aggregate and sync
//! committee duties move to the `*_DUE_BPS_GLOAS` fractions of the slot, and PTC members vote
//! between `PAYLOAD_DUE_BPS` and `PAYLOAD_ATTESTATION_DUE_BPS`.
//!
//! [spec]: phase0/validator.md#attesting, phase0/validator.md#broadcast-aggregate,
//! altair/validator.md#sync-committee-messages, phase0/fork-choice.md#get_slot_component_duration_ms,
//! gloas/validator.md#time-parameters, gloas/validator.md#payload-timeliness-attestation

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use types::{ChainSpec, Epoch, EthSpec, ForkName, Slot};

/// `BASIS_POINTS`: the denominator of the `*_DUE_BPS` config values.
///
/// [spec]: phase0/beacon-chain.md#misc
pub const BASIS_POINTS: u64 = 10_000;

/// A duty of the validator client, as counted in the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DutyKind {
    /// A block proposal (at the slot's start).
    Proposal,
    /// An attestation (at `ATTESTATION_DUE_BPS`, from Gloas `ATTESTATION_DUE_BPS_GLOAS`, or
    /// at the slot's block).
    Attestation,
    /// An aggregate of a committee's attestations (at `AGGREGATE_DUE_BPS`, from Gloas
    /// `AGGREGATE_DUE_BPS_GLOAS`).
    Aggregate,
    /// A sync committee message (at `SYNC_MESSAGE_DUE_BPS`, from Gloas
    /// `SYNC_MESSAGE_DUE_BPS_GLOAS`, or at the slot's block).
    SyncCommitteeMessage,
    /// A sync committee contribution (at `CONTRIBUTION_DUE_BPS`, from Gloas
    /// `CONTRIBUTION_DUE_BPS_GLOAS`).
    SyncCommitteeContribution,
    /// A payload timeliness committee member's `PayloadAttestationMessage` (Gloas; at
    /// [`ptc_vote_due_bps`]).
    ///
    /// [spec]: gloas/validator.md#payload-timeliness-attestation
    PtcVote,
}

impl DutyKind {
    /// Every kind.
    pub const ALL: [DutyKind; 6] = [
        Self::Proposal,
        Self::Attestation,
        Self::Aggregate,
        Self::SyncCommitteeMessage,
        Self::SyncCommitteeContribution,
        Self::PtcVote,
    ];

    /// The label of the kind in metrics and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Proposal => "proposal",
            Self::Attestation => "attestation",
            Self::Aggregate => "aggregate",
            Self::SyncCommitteeMessage => "sync_committee_message",
            Self::SyncCommitteeContribution => "sync_committee_contribution",
            Self::PtcVote => "ptc_vote",
        }
    }

    /// The offset from the start of a slot of `fork` at which the duty is due: the slot's
    /// start for a proposal, the config's basis points of the slot for the others (the
    /// `*_GLOAS` ones from Gloas).
    pub fn due_offset(self, spec: &ChainSpec, fork: ForkName) -> Duration {
        let gloas = fork.gloas_enabled();
        let bps = match self {
            Self::Proposal => return Duration::ZERO,
            Self::Attestation if gloas => spec.attestation_due_bps_gloas,
            Self::Attestation => spec.attestation_due_bps,
            Self::Aggregate if gloas => spec.aggregate_due_bps_gloas,
            Self::Aggregate => spec.aggregate_due_bps,
            Self::SyncCommitteeMessage if gloas => spec.sync_message_due_bps_gloas,
            Self::SyncCommitteeMessage => spec.sync_message_due_bps,
            Self::SyncCommitteeContribution if gloas => spec.contribution_due_bps_gloas,
            Self::SyncCommitteeContribution => spec.contribution_due_bps,
            Self::PtcVote => ptc_vote_due_bps(spec),
        };
        Duration::from_millis(get_slot_component_duration_ms(spec, bps))
    }
}

/// When in the slot a PTC member asks for `PayloadAttestationData` and votes: the midpoint of
/// `PAYLOAD_DUE_BPS` and `PAYLOAD_ATTESTATION_DUE_BPS` (6250 bps, 62.5 % of the slot, on the
/// spec's configs).
///
/// After the payload deadline, so that the node's `payload_present` already says whether the
/// envelope came in time (asked earlier, a timely envelope still on its way would read as
/// absent); a whole eighth of a slot before `PAYLOAD_ATTESTATION_DUE_BPS`, so that the one
/// request, the signatures and the gossip publication land before the deadline the spec sets
/// for the broadcast (proposers aggregate the votes they have by then).
///
/// [spec]: gloas/validator.md#payload-timeliness-attestation
pub fn ptc_vote_due_bps(spec: &ChainSpec) -> u64 {
    spec.payload_due_bps
        .midpoint(spec.payload_attestation_due_bps)
}

/// `get_slot_component_duration_ms(basis_points)`: `basis_points * SLOT_DURATION_MS //
/// BASIS_POINTS` (saturating).
///
/// [spec]: phase0/fork-choice.md#get_slot_component_duration_ms
pub fn get_slot_component_duration_ms(spec: &ChainSpec, basis_points: u64) -> u64 {
    basis_points.saturating_mul(spec.slot_duration_ms) / BASIS_POINTS
}

/// The slot clock of a chain: genesis time and slot duration, read against Unix time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotClock {
    genesis: Duration,
    slot_duration: Duration,
}

impl SlotClock {
    /// The clock of a chain with `genesis_time` (Unix seconds) and `slot_duration_ms`.
    pub fn new(genesis_time: u64, slot_duration_ms: u64) -> Self {
        Self {
            genesis: Duration::from_secs(genesis_time),
            // A zero slot duration would make every slot start at genesis; the config parser
            // refuses it, and one millisecond keeps the arithmetic defined regardless.
            slot_duration: Duration::from_millis(slot_duration_ms.max(1)),
        }
    }

    /// The duration of a slot.
    pub fn slot_duration(&self) -> Duration {
        self.slot_duration
    }

    /// The current Unix time.
    pub fn now() -> Duration {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
    }

    /// The slot at Unix time `now`, `None` before genesis.
    pub fn slot_at(&self, now: Duration) -> Option<Slot> {
        let since = now.checked_sub(self.genesis)?;
        Some((since.as_millis() / self.slot_duration.as_millis()) as Slot)
    }

    /// The Unix time at which `slot` starts (saturating far in the future).
    pub fn start_of(&self, slot: Slot) -> Duration {
        let offset = u32::try_from(slot)
            .ok()
            .and_then(|s| self.slot_duration.checked_mul(s))
            .unwrap_or(Duration::MAX);
        self.genesis.saturating_add(offset)
    }

    /// The Unix time at which `kind` is due in `slot` (by the fork of `slot`).
    pub fn due_time<E: EthSpec>(&self, slot: Slot, kind: DutyKind, spec: &ChainSpec) -> Duration {
        let fork = spec.fork_name_at_slot::<E>(slot);
        self.start_of(slot)
            .saturating_add(kind.due_offset(spec, fork))
    }

    /// How long from `now` until Unix time `at` (zero if it has passed).
    pub fn until(now: Duration, at: Duration) -> Duration {
        at.saturating_sub(now)
    }
}

/// `compute_epoch_at_slot(slot)`.
///
/// [spec]: phase0/beacon-chain.md#compute_epoch_at_slot
pub fn compute_epoch_at_slot<E: EthSpec>(slot: Slot) -> Epoch {
    slot / E::slots_per_epoch()
}

/// `compute_start_slot_at_epoch(epoch)` (saturating).
///
/// [spec]: phase0/beacon-chain.md#compute_start_slot_at_epoch
pub fn compute_start_slot_at_epoch<E: EthSpec>(epoch: Epoch) -> Slot {
    epoch.saturating_mul(E::slots_per_epoch())
}

/// `compute_sync_committee_period(epoch)`.
///
/// [spec]: altair/validator.md#sync-committee
pub fn compute_sync_committee_period<E: EthSpec>(epoch: Epoch) -> u64 {
    epoch / E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD
}

/// The sync committee period whose members sign messages at `slot`: that of `slot + 1`'s
/// epoch, since the message is included in the next slot's block.
///
/// [spec]: altair/validator.md#sync-committee
pub fn sync_committee_period_of_message_slot<E: EthSpec>(slot: Slot) -> u64 {
    compute_sync_committee_period::<E>(compute_epoch_at_slot::<E>(slot.saturating_add(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{MainnetEthSpec, MinimalEthSpec};

    #[test]
    fn duties_fall_at_the_configured_fractions_of_the_slot() {
        let spec = ChainSpec::mainnet();
        assert_eq!(spec.slot_duration_ms, 12_000);
        let clock = SlotClock::new(1_000, spec.slot_duration_ms);
        let start = Duration::from_secs(1_000 + 5 * 12);
        assert_eq!(clock.start_of(5), start);
        assert_eq!(
            clock.due_time::<MainnetEthSpec>(5, DutyKind::Proposal, &spec),
            start
        );
        // 3333 bps of 12 s = 3999.6 ms, rounded down by the spec's integer division.
        assert_eq!(
            clock.due_time::<MainnetEthSpec>(5, DutyKind::Attestation, &spec),
            start + Duration::from_millis(3_999)
        );
        assert_eq!(
            clock.due_time::<MainnetEthSpec>(5, DutyKind::SyncCommitteeMessage, &spec),
            start + Duration::from_millis(3_999)
        );
        assert_eq!(
            clock.due_time::<MainnetEthSpec>(5, DutyKind::Aggregate, &spec),
            start + Duration::from_millis(8_000)
        );
        assert_eq!(
            clock.due_time::<MainnetEthSpec>(5, DutyKind::SyncCommitteeContribution, &spec),
            start + Duration::from_millis(8_000)
        );
    }

    #[test]
    fn short_slots_scale_the_due_times() {
        let mut spec = ChainSpec::minimal();
        spec.slot_duration_ms = 2_000;
        let clock = SlotClock::new(0, spec.slot_duration_ms);
        assert_eq!(
            DutyKind::Attestation.due_offset(&spec, ForkName::Fulu),
            Duration::from_millis(666)
        );
        assert_eq!(
            DutyKind::Aggregate.due_offset(&spec, ForkName::Fulu),
            Duration::from_millis(1_333)
        );
        assert_eq!(clock.start_of(3), Duration::from_secs(6));
    }

    /// Minimal preset (8 slots per epoch) with Gloas at epoch 2: slot 15 is the last before
    /// the fork, slot 16 the first after.
    fn gloas_at_epoch_two() -> ChainSpec {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        spec.gloas_fork_epoch = 2;
        assert!(spec.gloas_fork_version.is_some(), "minimal.yaml has it");
        spec.slot_duration_ms = 12_000;
        spec
    }

    #[test]
    fn duties_before_the_gloas_fork_keep_the_old_fractions() {
        let spec = gloas_at_epoch_two();
        let clock = SlotClock::new(0, spec.slot_duration_ms);
        let start = clock.start_of(15);
        let due = |kind| clock.due_time::<MinimalEthSpec>(15, kind, &spec) - start;
        // 3333 bps and 6667 bps of 12 s, rounded down.
        assert_eq!(due(DutyKind::Attestation), Duration::from_millis(3_999));
        assert_eq!(
            due(DutyKind::SyncCommitteeMessage),
            Duration::from_millis(3_999)
        );
        assert_eq!(due(DutyKind::Aggregate), Duration::from_millis(8_000));
        assert_eq!(
            due(DutyKind::SyncCommitteeContribution),
            Duration::from_millis(8_000)
        );
        assert_eq!(due(DutyKind::Proposal), Duration::ZERO);
    }

    #[test]
    fn duties_from_the_gloas_fork_use_the_gloas_fractions() {
        let spec = gloas_at_epoch_two();
        let clock = SlotClock::new(0, spec.slot_duration_ms);
        let start = clock.start_of(16);
        let due = |kind| clock.due_time::<MinimalEthSpec>(16, kind, &spec) - start;
        // 2500 bps and 5000 bps of 12 s.
        assert_eq!(due(DutyKind::Attestation), Duration::from_millis(3_000));
        assert_eq!(
            due(DutyKind::SyncCommitteeMessage),
            Duration::from_millis(3_000)
        );
        assert_eq!(due(DutyKind::Aggregate), Duration::from_millis(6_000));
        assert_eq!(
            due(DutyKind::SyncCommitteeContribution),
            Duration::from_millis(6_000)
        );
        assert_eq!(due(DutyKind::Proposal), Duration::ZERO);
    }

    #[test]
    fn ptc_votes_fall_between_the_payload_and_payload_attestation_deadlines() {
        let spec = gloas_at_epoch_two();
        assert_eq!(
            (spec.payload_due_bps, spec.payload_attestation_due_bps),
            (5_000, 7_500)
        );
        assert_eq!(ptc_vote_due_bps(&spec), 6_250);
        let clock = SlotClock::new(0, spec.slot_duration_ms);
        assert_eq!(
            clock.due_time::<MinimalEthSpec>(16, DutyKind::PtcVote, &spec) - clock.start_of(16),
            Duration::from_millis(7_500)
        );
        // An odd sum rounds down; the midpoint never overflows.
        let mut odd = spec.clone();
        odd.payload_attestation_due_bps = 7_501;
        assert_eq!(ptc_vote_due_bps(&odd), 6_250);
        odd.payload_due_bps = u64::MAX;
        odd.payload_attestation_due_bps = u64::MAX - 2;
        assert_eq!(ptc_vote_due_bps(&odd), u64::MAX - 1);
    }

    #[test]
    fn slot_at_rounds_down_and_is_none_before_genesis() {
        let clock = SlotClock::new(100, 6_000);
        assert_eq!(clock.slot_at(Duration::from_secs(99)), None);
        assert_eq!(clock.slot_at(Duration::from_secs(100)), Some(0));
        assert_eq!(clock.slot_at(Duration::from_millis(105_999)), Some(0));
        assert_eq!(clock.slot_at(Duration::from_secs(106)), Some(1));
        assert_eq!(
            SlotClock::until(Duration::from_secs(5), Duration::from_secs(3)),
            Duration::ZERO
        );
        assert_eq!(clock.start_of(u64::MAX), Duration::MAX);
    }

    #[test]
    fn sync_messages_at_a_period_end_belong_to_the_next_period() {
        // Minimal: 8 slots per epoch, 8 epochs per period: slot 63 is the last of period 0.
        assert_eq!(
            sync_committee_period_of_message_slot::<MinimalEthSpec>(62),
            0
        );
        assert_eq!(
            sync_committee_period_of_message_slot::<MinimalEthSpec>(63),
            1
        );
        // Mainnet: 32 × 256 slots per period.
        assert_eq!(
            sync_committee_period_of_message_slot::<MainnetEthSpec>(32 * 256 - 2),
            0
        );
        assert_eq!(
            sync_committee_period_of_message_slot::<MainnetEthSpec>(32 * 256 - 1),
            1
        );
        assert_eq!(compute_start_slot_at_epoch::<MinimalEthSpec>(3), 24);
        assert_eq!(compute_epoch_at_slot::<MinimalEthSpec>(23), 2);
    }
}
