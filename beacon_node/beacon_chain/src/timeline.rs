//! The block timeline: for each recent block root, when it was first seen (and how), passed
//! gossip validation, became available (and how), was executed by the execution client,
//! imported and made head, in milliseconds from the start of its slot. From Gloas the block's
//! payload comes apart (`SignedExecutionPayloadEnvelope`), and its timeline also says when the
//! envelope was first seen (and how) and when it was imported (the block FULL). Kept for the
//! last [`TIMELINE_SLOTS`] slots and observed into the `beacon_block_delay_*_seconds` and
//! `beacon_payload_envelope_delay_*_seconds` histograms.
//!
//! An envelope's events are recorded only on the timeline of a block the node has seen: an
//! envelope for a block unknown here (a peer's, not verified yet) adds no timeline.

use std::collections::HashMap;

use prometheus::{Histogram, HistogramOpts, Registry};
use types::{Root, Slot};

/// Slots of timelines kept.
pub const TIMELINE_SLOTS: u64 = 64;

/// How the node first got a block (or, from Gloas, a block's payload envelope).
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
    /// Gloas: its `SignedExecutionPayloadEnvelope` first seen, and from where.
    pub envelope_seen: Option<(i64, SeenVia)>,
    /// Gloas: its envelope imported (`on_execution_payload_envelope`: the block FULL).
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub envelope_imported: Option<i64>,
}

/// A stage of the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    GossipVerified,
    Available(AvailableVia),
    Executed,
    Imported,
    Head,
    /// Gloas: the block's envelope imported.
    EnvelopeImported,
}

/// `beacon_block_delay_*_seconds` and `beacon_payload_envelope_delay_*_seconds`.
#[derive(Debug, Clone)]
pub(crate) struct DelayMetrics {
    seen: Histogram,
    gossip_verified: Histogram,
    available: Histogram,
    executed: Histogram,
    imported: Histogram,
    head: Histogram,
    envelope_seen: Histogram,
    envelope_imported: Histogram,
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
            envelope_seen: histogram(
                "beacon_payload_envelope_delay_seen_seconds",
                "Time from the slot start until a block's execution payload envelope was first seen",
            ),
            envelope_imported: histogram(
                "beacon_payload_envelope_delay_imported_seconds",
                "Time from the slot start until a block's execution payload envelope was imported",
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
            &self.envelope_seen,
            &self.envelope_imported,
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

    /// Records the first sighting of block `root`'s envelope (later ones are not the first),
    /// on the block's timeline only: `at_ms_into` maps the block's slot to now's offset in it.
    /// Nothing for a block without a timeline.
    pub(crate) fn envelope_seen(
        &mut self,
        root: Root,
        at_ms_into: impl FnOnce(Slot) -> i64,
        via: SeenVia,
    ) {
        let Some(timeline) = self.blocks.get_mut(&root) else {
            return;
        };
        if timeline.envelope_seen.is_none() {
            let at = at_ms_into(timeline.slot);
            timeline.envelope_seen = Some((at, via));
            self.metrics.envelope_seen.observe(seconds(at));
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
            Stage::EnvelopeImported => (
                set(&mut timeline.envelope_imported, at),
                &self.metrics.envelope_imported,
            ),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_is_recorded_only_on_a_seen_block_and_first_sighting_wins() {
        let mut timelines = Timelines::default();
        let known = Root::repeat_byte(1);
        let unknown = Root::repeat_byte(2);
        timelines.seen(known, 9, 150, SeenVia::Gossip);

        timelines.envelope_seen(unknown, |_| 10, SeenVia::Gossip);
        assert_eq!(
            timelines.get(&unknown),
            None,
            "no timeline for a block not seen"
        );

        // The offset is taken in the block's slot.
        timelines.envelope_seen(
            known,
            |slot| i64::try_from(slot).unwrap() * 100,
            SeenVia::Api,
        );
        timelines.envelope_seen(known, |_| 5_000, SeenVia::Rpc);
        timelines.stage(known, 9, 2_400, Stage::EnvelopeImported);
        timelines.stage(known, 9, 3_000, Stage::EnvelopeImported);
        let t = timelines.get(&known).unwrap();
        assert_eq!(t.envelope_seen, Some((900, SeenVia::Api)));
        assert_eq!(t.envelope_imported, Some(2_400));
        assert_eq!(t.seen, Some((150, SeenVia::Gossip)));
    }
}
