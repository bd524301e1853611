//! The validator client's Prometheus metrics: duties performed and missed by kind, messages
//! signed (produced) by kind, signing and submission latency.
//!
//! Names: `vc_duties_performed_total{kind}` (published), `vc_duties_missed_total{kind}`
//! (failed), `vc_messages_signed_total{kind}` (produced; the PTC service counts its votes
//! here), `vc_signing_seconds{kind}`, `vc_submission_seconds{kind}`, `vc_doppelganger_clear`
//! (1 once signing is allowed).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus::{Gauge, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};
use tracing::warn;

use crate::timing::DutyKind;

/// Latency buckets in seconds: signing a batch takes milliseconds (BLS and an fsync each);
/// submissions a few to hundreds of milliseconds; a block up to seconds.
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The client's metrics. Counted in memory always (for [`Metrics::missed`]); exported when a
/// registry was given.
pub struct Metrics {
    performed: BTreeMap<DutyKind, AtomicU64>,
    missed: BTreeMap<DutyKind, AtomicU64>,
    signed: BTreeMap<DutyKind, AtomicU64>,
    exported: Option<Exported>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("performed", &self.performed_total())
            .field("missed", &self.missed_total())
            .field("exported", &self.exported.is_some())
            .finish()
    }
}

struct Exported {
    performed: IntCounterVec,
    missed: IntCounterVec,
    signed: IntCounterVec,
    signing: HistogramVec,
    submission: HistogramVec,
    doppelganger_clear: Gauge,
}

impl Exported {
    fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let performed = IntCounterVec::new(
            Opts::new("vc_duties_performed_total", "Duties performed, by kind"),
            &["kind"],
        )?;
        let missed = IntCounterVec::new(
            Opts::new(
                "vc_duties_missed_total",
                "Duties missed (failed or late), by kind",
            ),
            &["kind"],
        )?;
        let signed = IntCounterVec::new(
            Opts::new("vc_messages_signed_total", "Duty messages signed, by kind"),
            &["kind"],
        )?;
        let signing = HistogramVec::new(
            HistogramOpts::new("vc_signing_seconds", "Time to sign a duty's messages")
                .buckets(LATENCY_BUCKETS.to_vec()),
            &["kind"],
        )?;
        let submission = HistogramVec::new(
            HistogramOpts::new(
                "vc_submission_seconds",
                "Time for a beacon node to accept a duty's messages",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["kind"],
        )?;
        let doppelganger_clear = Gauge::new(
            "vc_doppelganger_clear",
            "1 once doppelganger protection allows signing",
        )?;
        registry.register(Box::new(performed.clone()))?;
        registry.register(Box::new(missed.clone()))?;
        registry.register(Box::new(signed.clone()))?;
        registry.register(Box::new(signing.clone()))?;
        registry.register(Box::new(submission.clone()))?;
        registry.register(Box::new(doppelganger_clear.clone()))?;
        Ok(Self {
            performed,
            missed,
            signed,
            signing,
            submission,
            doppelganger_clear,
        })
    }
}

impl Metrics {
    /// Metrics exported to `registry` if given. A registry that refuses them (the names taken)
    /// leaves them in memory only, with a warning.
    pub fn new(registry: Option<&Registry>) -> Self {
        let exported = registry.and_then(|r| match Exported::register(r) {
            Ok(e) => Some(e),
            Err(e) => {
                warn!(error = %e, "validator client metrics not registered");
                None
            }
        });
        let zeros = || {
            DutyKind::ALL
                .iter()
                .map(|k| (*k, AtomicU64::new(0)))
                .collect()
        };
        Self {
            performed: zeros(),
            missed: zeros(),
            signed: zeros(),
            exported,
        }
    }

    /// Counts `n` duties of `kind` performed.
    pub fn performed(&self, kind: DutyKind, n: u64) {
        if let Some(c) = self.performed.get(&kind) {
            c.fetch_add(n, Ordering::Relaxed);
        }
        if let Some(e) = &self.exported {
            e.performed.with_label_values(&[kind.as_str()]).inc_by(n);
        }
    }

    /// Counts `n` duties of `kind` missed.
    pub fn missed_duties(&self, kind: DutyKind, n: u64) {
        if let Some(c) = self.missed.get(&kind) {
            c.fetch_add(n, Ordering::Relaxed);
        }
        if let Some(e) = &self.exported {
            e.missed.with_label_values(&[kind.as_str()]).inc_by(n);
        }
    }

    /// Counts `n` messages of `kind` signed (produced, not yet published).
    pub fn signed(&self, kind: DutyKind, n: u64) {
        if let Some(c) = self.signed.get(&kind) {
            c.fetch_add(n, Ordering::Relaxed);
        }
        if let Some(e) = &self.exported {
            e.signed.with_label_values(&[kind.as_str()]).inc_by(n);
        }
    }

    /// The messages of `kind` signed so far.
    pub fn signed_count(&self, kind: DutyKind) -> u64 {
        self.signed
            .get(&kind)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The duties of `kind` performed so far.
    pub fn performed_count(&self, kind: DutyKind) -> u64 {
        self.performed
            .get(&kind)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The duties of `kind` missed so far.
    pub fn missed(&self, kind: DutyKind) -> u64 {
        self.missed
            .get(&kind)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The duties missed so far, every kind together.
    pub fn missed_total(&self) -> u64 {
        DutyKind::ALL.iter().map(|k| self.missed(*k)).sum()
    }

    /// The duties performed so far, every kind together.
    pub fn performed_total(&self) -> u64 {
        DutyKind::ALL.iter().map(|k| self.performed_count(*k)).sum()
    }

    /// Records the time taken to sign a duty's messages.
    pub fn observe_signing(&self, kind: DutyKind, took: Duration) {
        if let Some(e) = &self.exported {
            e.signing
                .with_label_values(&[kind.as_str()])
                .observe(took.as_secs_f64());
        }
    }

    /// Records the time a beacon node took to accept a duty's messages.
    pub fn observe_submission(&self, kind: DutyKind, took: Duration) {
        if let Some(e) = &self.exported {
            e.submission
                .with_label_values(&[kind.as_str()])
                .observe(took.as_secs_f64());
        }
    }

    /// Records that doppelganger protection cleared signing.
    pub fn set_doppelganger_clear(&self) {
        if let Some(e) = &self.exported {
            e.doppelganger_clear.set(1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_memory_and_in_the_registry() {
        let registry = Registry::new();
        let metrics = Metrics::new(Some(&registry));
        metrics.performed(DutyKind::Attestation, 3);
        metrics.missed_duties(DutyKind::Proposal, 1);
        metrics.signed(DutyKind::PtcVote, 2);
        assert_eq!(metrics.signed_count(DutyKind::PtcVote), 2);
        assert_eq!(metrics.performed_count(DutyKind::Attestation), 3);
        assert_eq!(metrics.missed(DutyKind::Proposal), 1);
        assert_eq!(metrics.missed(DutyKind::Attestation), 0);
        assert_eq!((metrics.performed_total(), metrics.missed_total()), (3, 1));
        let families = registry.gather();
        let performed = families
            .iter()
            .find(|f| f.name() == "vc_duties_performed_total")
            .expect("registered");
        assert_eq!(performed.get_metric()[0].get_counter().get_value(), 3.0);
        // A second client on the same registry keeps counting in memory.
        let second = Metrics::new(Some(&registry));
        second.performed(DutyKind::Aggregate, 1);
        assert_eq!(second.performed_count(DutyKind::Aggregate), 1);
    }
}
