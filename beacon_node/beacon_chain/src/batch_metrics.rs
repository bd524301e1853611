//! How long the verification batches take and how large they are: the KZG cell-proof batches of
//! data column sidecars (`beacon_kzg_batch_verification_*`) and the BLS signature batches
//! (`beacon_bls_batch_verification_*{kind}`).
//!
//! Batches run in free functions as well as on the chain (a standalone column batch has no chain
//! at hand), so the series are process-wide, like the processor's: in one process running
//! several nodes (`arbor dev --nodes N`), every node's endpoint shows all of their batches.
//! [`BeaconChain::register_metrics`](crate::BeaconChain::register_metrics) registers them.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use prometheus::{Histogram, HistogramOpts, HistogramVec, Registry};

/// Whose signatures a BLS batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlsBatchKind {
    /// Gossip `SingleAttestation`s (one set each).
    Attestation,
    /// Gossip aggregates (three sets each: selection proof, aggregator, aggregate).
    Aggregate,
    /// Gossip `PayloadAttestationMessage`s (one set each).
    PayloadAttestation,
}

impl BlsBatchKind {
    const ALL: [BlsBatchKind; 3] = [
        BlsBatchKind::Attestation,
        BlsBatchKind::Aggregate,
        BlsBatchKind::PayloadAttestation,
    ];

    /// The `kind` label.
    pub fn as_str(self) -> &'static str {
        match self {
            BlsBatchKind::Attestation => "attestation",
            BlsBatchKind::Aggregate => "aggregate",
            BlsBatchKind::PayloadAttestation => "payload_attestation",
        }
    }
}

/// The batch histograms.
struct BatchMetrics {
    kzg_seconds: Histogram,
    kzg_columns: Histogram,
    bls_seconds: HistogramVec,
    bls_sets: HistogramVec,
}

/// Seconds: one column of one blob verifies in about a millisecond; a mainnet block's 128
/// columns of 9 blobs, or 128 attestation sets, take some tens of milliseconds; a failed batch
/// narrowed down item by item takes longer.
const SECONDS_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Batch sizes: from one item up to a slot's burst (128 columns; hundreds of attestations).
const SIZE_BUCKETS: [f64; 11] = [
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

static METRICS: LazyLock<BatchMetrics> = LazyLock::new(|| {
    let histogram = |name: &str, help: &str, buckets: &[f64]| {
        Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets.to_vec()))
            .expect("a valid histogram name, help and buckets")
    };
    let histogram_vec = |name: &str, help: &str, buckets: &[f64]| {
        let vec = HistogramVec::new(
            HistogramOpts::new(name, help).buckets(buckets.to_vec()),
            &["kind"],
        )
        .expect("a valid histogram name, help, label and buckets");
        // Every kind's series exists from the start: a dashboard sees zeros, not gaps.
        for kind in BlsBatchKind::ALL {
            vec.with_label_values(&[kind.as_str()]);
        }
        vec
    };
    BatchMetrics {
        kzg_seconds: histogram(
            "beacon_kzg_batch_verification_seconds",
            "Time to verify a batch of data column sidecars' KZG cell proofs \
             (verify_data_column_sidecar_kzg_proofs over the batch, narrowing down included)",
            &SECONDS_BUCKETS,
        ),
        kzg_columns: histogram(
            "beacon_kzg_batch_verification_columns",
            "Data column sidecars in a KZG verification batch",
            &SIZE_BUCKETS,
        ),
        bls_seconds: histogram_vec(
            "beacon_bls_batch_verification_seconds",
            "Time to verify a batch of BLS signature sets, by kind (narrowing down included)",
            &SECONDS_BUCKETS,
        ),
        bls_sets: histogram_vec(
            "beacon_bls_batch_verification_sets",
            "BLS signature sets in a verification batch, by kind",
            &SIZE_BUCKETS,
        ),
    }
});

/// Records a KZG batch of `columns` sidecars that took `elapsed`.
pub fn observe_kzg_batch(columns: usize, elapsed: Duration) {
    METRICS.kzg_seconds.observe(elapsed.as_secs_f64());
    METRICS.kzg_columns.observe(columns as f64);
}

/// Records a BLS batch of `sets` signature sets of `kind` that took `elapsed`.
pub fn observe_bls_batch(kind: BlsBatchKind, sets: usize, elapsed: Duration) {
    let label = [kind.as_str()];
    METRICS
        .bls_seconds
        .with_label_values(&label)
        .observe(elapsed.as_secs_f64());
    METRICS
        .bls_sets
        .with_label_values(&label)
        .observe(sets as f64);
}

/// Runs `verify` on a batch of `size` items, recording it as a KZG batch (`kind: None`) or a
/// BLS batch of `kind`. An empty batch verifies nothing and is not recorded.
pub(crate) fn timed<T>(kind: Option<BlsBatchKind>, size: usize, verify: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = verify();
    if size > 0 {
        match kind {
            None => observe_kzg_batch(size, start.elapsed()),
            Some(kind) => observe_bls_batch(kind, size, start.elapsed()),
        }
    }
    out
}

/// Registers the batch histograms in `registry`.
pub fn register(registry: &Registry) -> Result<(), prometheus::Error> {
    registry.register(Box::new(METRICS.kzg_seconds.clone()))?;
    registry.register(Box::new(METRICS.kzg_columns.clone()))?;
    registry.register(Box::new(METRICS.bls_seconds.clone()))?;
    registry.register(Box::new(METRICS.bls_sets.clone()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_count(registry: &Registry, name: &str, kind: Option<&str>) -> u64 {
        registry
            .gather()
            .iter()
            .find(|f| f.name() == name)
            .map(|f| {
                f.get_metric()
                    .iter()
                    .filter(|m| {
                        kind.is_none_or(|k| {
                            m.get_label()
                                .iter()
                                .any(|l| l.name() == "kind" && l.value() == k)
                        })
                    })
                    .map(|m| m.get_histogram().get_sample_count())
                    .sum()
            })
            .unwrap_or(0)
    }

    #[test]
    fn batches_are_counted_by_kind_and_empty_ones_are_not() {
        // The series are process-wide (other tests of this crate verify batches too): compare
        // counts before and after, on a registry of this test's own.
        let registry = Registry::new();
        register(&registry).unwrap();
        let aggregates = |r: &Registry| {
            sample_count(
                r,
                "beacon_bls_batch_verification_seconds",
                Some("aggregate"),
            )
        };
        let before = aggregates(&registry);
        assert_eq!(timed(Some(BlsBatchKind::Aggregate), 3, || 7), 7);
        timed(Some(BlsBatchKind::Aggregate), 0, || ());
        assert!(aggregates(&registry) > before);
        let families = registry.gather();
        let bls = families
            .iter()
            .find(|f| f.name() == "beacon_bls_batch_verification_sets")
            .unwrap();
        // Every kind is there from the start.
        assert_eq!(bls.get_metric().len(), BlsBatchKind::ALL.len());

        let kzg = |r: &Registry| sample_count(r, "beacon_kzg_batch_verification_columns", None);
        let before = kzg(&registry);
        timed(None, 128, || ());
        assert!(kzg(&registry) > before);
        // A second registry (a second node in the process) registers the same series.
        register(&Registry::new()).unwrap();
    }
}
