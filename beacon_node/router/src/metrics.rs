//! The router's metrics: gossip messages per topic and verdict, gossip work the processor
//! dropped, req/resp requests served per protocol and result, the sync state and backfill.

use prometheus::{IntCounterVec, IntGauge, Opts, Registry};

/// Every metric the router keeps.
#[derive(Debug, Clone)]
pub(crate) struct Metrics {
    /// `beacon_gossip_messages_total{topic, verdict}`.
    pub(crate) gossip: IntCounterVec,
    /// `beacon_gossip_work_dropped_total{topic}`: gossip the processor dropped (given IGNORE).
    pub(crate) gossip_dropped: IntCounterVec,
    /// `beacon_rpc_requests_served_total{protocol, result}`.
    pub(crate) rpc_served: IntCounterVec,
    /// `beacon_rpc_response_chunks_total{protocol}`.
    pub(crate) rpc_chunks: IntCounterVec,
    /// `beacon_sync_state`: 0 synced (or no peer ahead), 1 range syncing.
    pub(crate) sync_state: IntGauge,
    /// `beacon_sync_target_slot`: the head slot range sync heads for.
    pub(crate) sync_target_slot: IntGauge,
    /// `beacon_sync_blocks_imported_total`.
    pub(crate) sync_blocks_imported: prometheus::IntCounter,
    /// `beacon_sync_batches_total{result}`: batches imported, or failed and why.
    pub(crate) sync_batches: IntCounterVec,
    /// `beacon_sync_peers`: peers whose head is ahead of ours.
    pub(crate) sync_peers: IntGauge,
    /// `beacon_sync_lookups_total{result}`: block lookups imported, failed, dropped.
    pub(crate) lookups: IntCounterVec,
    /// `beacon_sync_backfill_slots_remaining`: slots between the oldest stored block and the
    /// backfill target.
    pub(crate) backfill_slots_remaining: IntGauge,
    /// `beacon_sync_backfill_batches_total{outcome}`: backfill batches stored, or failed and why.
    pub(crate) backfill_batches: IntCounterVec,
}

impl Metrics {
    pub(crate) fn new() -> Result<Self, prometheus::Error> {
        Ok(Self {
            gossip: IntCounterVec::new(
                Opts::new(
                    "beacon_gossip_messages_total",
                    "Gossip messages validated, per topic and verdict",
                ),
                &["topic", "verdict"],
            )?,
            gossip_dropped: IntCounterVec::new(
                Opts::new(
                    "beacon_gossip_work_dropped_total",
                    "Gossip messages the beacon processor dropped (each given IGNORE)",
                ),
                &["topic"],
            )?,
            rpc_served: IntCounterVec::new(
                Opts::new(
                    "beacon_rpc_requests_served_total",
                    "Req/resp requests answered, per protocol and result",
                ),
                &["protocol", "result"],
            )?,
            rpc_chunks: IntCounterVec::new(
                Opts::new(
                    "beacon_rpc_response_chunks_total",
                    "Successful response chunks sent, per protocol",
                ),
                &["protocol"],
            )?,
            sync_state: IntGauge::new(
                "beacon_sync_state",
                "0: synced or no peer ahead; 1: range syncing",
            )?,
            sync_target_slot: IntGauge::new(
                "beacon_sync_target_slot",
                "The head slot of the peers range sync follows",
            )?,
            sync_blocks_imported: prometheus::IntCounter::new(
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
        registry.register(Box::new(self.gossip.clone()))?;
        registry.register(Box::new(self.gossip_dropped.clone()))?;
        registry.register(Box::new(self.rpc_served.clone()))?;
        registry.register(Box::new(self.rpc_chunks.clone()))?;
        registry.register(Box::new(self.sync_state.clone()))?;
        registry.register(Box::new(self.sync_target_slot.clone()))?;
        registry.register(Box::new(self.sync_blocks_imported.clone()))?;
        registry.register(Box::new(self.sync_batches.clone()))?;
        registry.register(Box::new(self.sync_peers.clone()))?;
        registry.register(Box::new(self.lookups.clone()))?;
        registry.register(Box::new(self.backfill_slots_remaining.clone()))?;
        registry.register(Box::new(self.backfill_batches.clone()))?;
        Ok(())
    }
}
