//! The block timeline: for each recent block root, when it was first seen (and how), passed
//! gossip validation, became available (and how), was executed by the execution client,
//! imported and made head, in milliseconds from the start of its slot. Kept for the last
//! [`TIMELINE_SLOTS`] slots and observed into the `beacon_block_delay_*_seconds` histograms.

use std::collections::HashMap;

use prometheus::{Histogram, HistogramOpts, Registry};
use types::{Root, Slot};

/// Slots of timelines kept.
pub const TIMELINE_SLOTS: u64 = 64;

/// How the node first got a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeenVia {
    /// Gossip.
    Gossip,
    /// A req/resp response (lookup or range sync).
    Rpc,
    /// The Beacon API (a block the node's validators publish).
    Api,
}

/// How a block's data became available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AvailableVia {
    /// It has no blobs.
    NoBlobs,
    /// Its custody columns arrived over gossip or req/resp.
    Columns,
    /// The execution client's blobs (`engine_getBlobsV2`) filled them in.
    GetBlobs,
    /// A supernode reconstructed them from half the columns.
    Reconstruction,
}

/// One block's timeline; times in milliseconds from its slot's start (negative: early, within
/// the clock disparity).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockTimeline {
    /// The block's slot.
    pub slot: Slot,
    /// First seen, and from where.
    pub seen: Option<(i64, SeenVia)>,
    /// Passed gossip validation.
    pub gossip_verified: Option<i64>,
    /// Its custody columns were all verified, and how.
    pub available: Option<(i64, AvailableVia)>,
    /// The execution client answered `newPayload`.
    pub executed: Option<i64>,
    /// Imported (fork choice and store).
    pub imported: Option<i64>,
    /// Became the head.
    pub head: Option<i64>,
}

/// A stage of the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    GossipVerified,
    Available(AvailableVia),
    Executed,
    Imported,
    Head,
}

/// `beacon_block_delay_*_seconds`.
#[derive(Debug, Clone)]
pub(crate) struct DelayMetrics {
    seen: Histogram,
    gossip_verified: Histogram,
    available: Histogram,
    executed: Histogram,
    imported: Histogram,
    head: Histogram,
}

fn histogram(name: &str, help: &str) -> Histogram {
    let buckets = vec![
        0.05, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
    ];
    Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))
        .expect("a valid histogram name, help and buckets")
}

impl DelayMetrics {
    fn new() -> Self {
        Self {
            seen: histogram(
                "beacon_block_delay_seen_seconds",
                "Time from the slot start until a block was first seen",
            ),
            gossip_verified: histogram(
                "beacon_block_delay_gossip_verified_seconds",
                "Time from the slot start until a block passed gossip validation",
            ),
            available: histogram(
                "beacon_block_delay_available_seconds",
                "Time from the slot start until a block's custody columns were all verified",
            ),
            executed: histogram(
                "beacon_block_delay_executed_seconds",
                "Time from the slot start until the execution client validated the payload",
            ),
            imported: histogram(
                "beacon_block_delay_imported_seconds",
                "Time from the slot start until a block was imported",
            ),
            head: histogram(
                "beacon_block_delay_head_seconds",
                "Time from the slot start until a block became the head",
            ),
        }
    }

    fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        for h in [
            &self.seen,
            &self.gossip_verified,
            &self.available,
            &self.executed,
            &self.imported,
            &self.head,
        ] {
            registry.register(Box::new(h.clone()))?;
        }
        Ok(())
    }
}

/// The timelines of recent blocks.
#[derive(Debug)]
pub(crate) struct Timelines {
    blocks: HashMap<Root, BlockTimeline>,
    metrics: DelayMetrics,
}

impl Default for Timelines {
    fn default() -> Self {
        Self {
            blocks: HashMap::new(),
            metrics: DelayMetrics::new(),
        }
    }
}

fn seconds(ms: i64) -> f64 {
    ms.max(0) as f64 / 1000.0
}

impl Timelines {
    /// Registers the delay histograms, and the process-wide batch timings with them.
    pub(crate) fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        self.metrics.register(registry)?;
        crate::production::builder_metrics::register(registry)?;
        crate::batch_metrics::register(registry)
    }

    fn entry(&mut self, root: Root, slot: Slot) -> &mut BlockTimeline {
        self.blocks.entry(root).or_insert_with(|| BlockTimeline {
            slot,
            ..BlockTimeline::default()
        })
    }

    /// Records the first sighting (later ones are not the first).
    pub(crate) fn seen(&mut self, root: Root, slot: Slot, at: i64, via: SeenVia) {
        let timeline = self.entry(root, slot);
        if timeline.seen.is_none() {
            timeline.seen = Some((at, via));
            self.metrics.seen.observe(seconds(at));
        }
    }

    /// Records a stage, once.
    pub(crate) fn stage(&mut self, root: Root, slot: Slot, at: i64, stage: Stage) {
        let timeline = self.entry(root, slot);
        let (field_set, histogram) = match stage {
            Stage::GossipVerified => (
                set(&mut timeline.gossip_verified, at),
                &self.metrics.gossip_verified,
            ),
            Stage::Available(via) => {
                let first = timeline.available.is_none();
                if first {
                    timeline.available = Some((at, via));
                }
                (first, &self.metrics.available)
            }
            Stage::Executed => (set(&mut timeline.executed, at), &self.metrics.executed),
            Stage::Imported => (set(&mut timeline.imported, at), &self.metrics.imported),
            Stage::Head => (set(&mut timeline.head, at), &self.metrics.head),
        };
        if field_set {
            histogram.observe(seconds(at));
        }
    }

    pub(crate) fn get(&self, root: &Root) -> Option<BlockTimeline> {
        self.blocks.get(root).copied()
    }

    /// Drops timelines of blocks more than [`TIMELINE_SLOTS`] before `current_slot`.
    pub(crate) fn prune(&mut self, current_slot: Slot) {
        let lowest = current_slot.saturating_sub(TIMELINE_SLOTS);
        self.blocks.retain(|_, t| t.slot >= lowest);
    }
}

fn set(field: &mut Option<i64>, at: i64) -> bool {
    if field.is_none() {
        *field = Some(at);
        true
    } else {
        false
    }
}
