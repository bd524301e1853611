//! Sync's metrics: the sync state and target, range-sync batches and blocks, lookups, backfill.

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts, Registry};

/// Every metric sync keeps.
#[derive(Debug, Clone)]
pub(crate) struct Metrics {
    /// `beacon_sync_state`: 0 synced (or no peer ahead), 1 range syncing.
    pub(crate) sync_state: IntGauge,
    /// `beacon_sync_target_slot`: the head slot range sync heads for.
    pub(crate) sync_target_slot: IntGauge,
    /// `beacon_sync_blocks_imported_total`.
    pub(crate) sync_blocks_imported: IntCounter,
    /// `beacon_sync_batches_total{result}`: batches imported, or failed and why.
    pub(crate) sync_batches: IntCounterVec,
    /// `beacon_sync_peers`: peers whose head is ahead of ours.
    pub(crate) sync_peers: IntGauge,
    /// `beacon_sync_lookups_total{result}`: block lookups imported, failed, dropped.
    pub(crate) lookups: IntCounterVec,
    /// `beacon_sync_envelope_lookups_total{result}`: payload-envelope lookups imported,
    /// failed, or not started.
    pub(crate) envelope_lookups: IntCounterVec,
    /// `beacon_sync_backfill_slots_remaining`: slots between the oldest stored block and the
    /// backfill target.
    pub(crate) backfill_slots_remaining: IntGauge,
    /// `beacon_sync_backfill_batches_total{outcome}`: backfill batches stored, or failed and why.
    pub(crate) backfill_batches: IntCounterVec,
}

impl Metrics {
    pub(crate) fn new() -> Result<Self, prometheus::Error> {
        Ok(Self {
            sync_state: IntGauge::new(
                "beacon_sync_state",
                "0: synced or no peer ahead; 1: range syncing",
            )?,
            sync_target_slot: IntGauge::new(
                "beacon_sync_target_slot",
                "The head slot of the peers range sync follows",
            )?,
            sync_blocks_imported: IntCounter::new(
                "beacon_sync_blocks_imported_total",
                "Blocks imported by range sync",
            )?,
            sync_batches: IntCounterVec::new(
                Opts::new(
                    "beacon_sync_batches_total",
                    "Range sync batches, imported or failed (and why)",
                ),
                &["result"],
            )?,
            sync_peers: IntGauge::new("beacon_sync_peers", "Peers whose head is ahead of ours")?,
            lookups: IntCounterVec::new(
                Opts::new(
                    "beacon_sync_lookups_total",
                    "Lookups of unknown parents: imported, failed, dropped, or not started",
                ),
                &["result"],
            )?,
            envelope_lookups: IntCounterVec::new(
                Opts::new(
                    "beacon_sync_envelope_lookups_total",
                    "Lookups of payload envelopes by root: imported, failed, or not started",
                ),
                &["result"],
            )?,
            backfill_slots_remaining: IntGauge::new(
                "beacon_sync_backfill_slots_remaining",
                "Slots between the oldest stored block and the backfill target",
            )?,
            backfill_batches: IntCounterVec::new(
                Opts::new(
                    "beacon_sync_backfill_batches_total",
                    "Backfill batches, imported or failed (and why)",
                ),
                &["outcome"],
            )?,
        })
    }

    pub(crate) fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.sync_state.clone()))?;
        registry.register(Box::new(self.sync_target_slot.clone()))?;
        registry.register(Box::new(self.sync_blocks_imported.clone()))?;
        registry.register(Box::new(self.sync_batches.clone()))?;
        registry.register(Box::new(self.sync_peers.clone()))?;
        registry.register(Box::new(self.lookups.clone()))?;
        registry.register(Box::new(self.envelope_lookups.clone()))?;
        registry.register(Box::new(self.backfill_slots_remaining.clone()))?;
        registry.register(Box::new(self.backfill_batches.clone()))?;
        Ok(())
    }
}
