//! The builder flow's metrics: `getHeader`'s time and what became of each bid
//! (`beacon_builder_get_header_seconds`, `beacon_builder_bids_total{outcome,reason}`), and the
//! unblinding (`beacon_builder_submit_blinded_seconds`,
//! `beacon_builder_submit_blinded_total{outcome}`).
//!
//! Process-wide like the batch metrics ([`crate::batch_metrics`]), registered with the chain's
//! by [`BeaconChain::register_metrics`](crate::BeaconChain::register_metrics).

use std::sync::LazyLock;
use std::time::Duration;

use builder_client::{BidError, BuilderError};
use prometheus::{Histogram, HistogramOpts, IntCounterVec, Opts, Registry};

/// What became of a `getHeader` call or of its bid (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BidOutcome {
    /// The relay answered with a bid (before its checks).
    Received,
    /// The relay had no bid (204).
    NoBid,
    /// The bid failed its checks (`reason`: which, [`bid_error_reason`]).
    Invalid,
    /// The relay did not answer within the getHeader timeout.
    Timeout,
    /// The call failed otherwise (transport, status, decoding), or no blinded block could be
    /// built on a verified bid.
    Error,
    /// The block carries the bid (a blinded block).
    Chosen,
    /// The local payload was chosen over a verified bid.
    LocalChosen,
}

impl BidOutcome {
    const ALL: [BidOutcome; 7] = [
        BidOutcome::Received,
        BidOutcome::NoBid,
        BidOutcome::Invalid,
        BidOutcome::Timeout,
        BidOutcome::Error,
        BidOutcome::Chosen,
        BidOutcome::LocalChosen,
    ];

    /// The `outcome` label.
    pub fn as_str(self) -> &'static str {
        match self {
            BidOutcome::Received => "received",
            BidOutcome::NoBid => "no_bid",
            BidOutcome::Invalid => "invalid",
            BidOutcome::Timeout => "timeout",
            BidOutcome::Error => "error",
            BidOutcome::Chosen => "chosen",
            BidOutcome::LocalChosen => "local_chosen",
        }
    }
}

/// The `reason` label of an invalid bid: the kind of check that failed (a handful of values;
/// the header field of a mismatch is left out to keep the label set small).
pub fn bid_error_reason(error: &BidError) -> &'static str {
    match error {
        BidError::InvalidBuilderKey(_) => "invalid_builder_key",
        BidError::UnexpectedBuilder { .. } => "unexpected_builder",
        BidError::InvalidSignature(_) => "invalid_signature",
        BidError::Mismatch { .. } => "header_mismatch",
        BidError::TooManyBlobs { .. } => "too_many_blobs",
        BidError::ZeroValue => "zero_value",
    }
}

/// What became of a `submitBlindedBlock` (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitOutcome {
    /// v1: the relay revealed a payload and blobs that complete the block.
    Revealed,
    /// v2: the relay took the block to publish it.
    PublishedByRelay,
    /// v1: what the relay revealed does not complete the block.
    InvalidReveal,
    /// The relay did not answer within the submit timeout.
    Timeout,
    /// The call failed otherwise.
    Error,
}

impl SubmitOutcome {
    const ALL: [SubmitOutcome; 5] = [
        SubmitOutcome::Revealed,
        SubmitOutcome::PublishedByRelay,
        SubmitOutcome::InvalidReveal,
        SubmitOutcome::Timeout,
        SubmitOutcome::Error,
    ];

    /// The `outcome` label.
    pub fn as_str(self) -> &'static str {
        match self {
            SubmitOutcome::Revealed => "revealed",
            SubmitOutcome::PublishedByRelay => "published_by_relay",
            SubmitOutcome::InvalidReveal => "invalid_reveal",
            SubmitOutcome::Timeout => "timeout",
            SubmitOutcome::Error => "error",
        }
    }

    /// The outcome of a failed call.
    pub fn of_error(error: &BuilderError) -> Self {
        if error.is_timeout() {
            SubmitOutcome::Timeout
        } else {
            SubmitOutcome::Error
        }
    }
}

struct BuilderMetrics {
    get_header_seconds: Histogram,
    bids: IntCounterVec,
    submit_seconds: Histogram,
    submits: IntCounterVec,
}

/// Seconds: relays answer getHeader in tens to hundreds of milliseconds (they hold the answer
/// up to the proposer's `X-Timeout-Ms`, about a second); submitBlindedBlock takes about as long
/// (the relay publishes, or reveals a payload with its blobs).
const SECONDS_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 4.0,
];

static METRICS: LazyLock<BuilderMetrics> = LazyLock::new(|| {
    let histogram = |name: &str, help: &str| {
        Histogram::with_opts(HistogramOpts::new(name, help).buckets(SECONDS_BUCKETS.to_vec()))
            .expect("a valid histogram name, help and buckets")
    };
    let bids = IntCounterVec::new(
        Opts::new(
            "beacon_builder_bids_total",
            "getHeader calls and bids by outcome (received, no_bid, invalid with its reason, \
             timeout, error, chosen, local_chosen)",
        ),
        &["outcome", "reason"],
    )
    .expect("a valid counter name, help and labels");
    for outcome in BidOutcome::ALL {
        if outcome != BidOutcome::Invalid {
            bids.with_label_values(&[outcome.as_str(), ""]);
        }
    }
    let submits = IntCounterVec::new(
        Opts::new(
            "beacon_builder_submit_blinded_total",
            "submitBlindedBlock calls by outcome",
        ),
        &["outcome"],
    )
    .expect("a valid counter name, help and label");
    for outcome in SubmitOutcome::ALL {
        submits.with_label_values(&[outcome.as_str()]);
    }
    BuilderMetrics {
        get_header_seconds: histogram(
            "beacon_builder_get_header_seconds",
            "Time of a getHeader call to the relay, from the request to its answer or failure",
        ),
        bids,
        submit_seconds: histogram(
            "beacon_builder_submit_blinded_seconds",
            "Time of a submitBlindedBlock call to the relay (v1 or v2), from the request to its \
             answer or failure",
        ),
        submits,
    }
});

/// Records a getHeader call that took `elapsed`.
pub(crate) fn observe_get_header(elapsed: Duration) {
    METRICS.get_header_seconds.observe(elapsed.as_secs_f64());
}

/// Counts a bid `outcome` (`reason` only for [`BidOutcome::Invalid`]).
pub(crate) fn count_bid(outcome: BidOutcome, reason: &'static str) {
    METRICS
        .bids
        .with_label_values(&[outcome.as_str(), reason])
        .inc();
}

/// Records a submitBlindedBlock call that took `elapsed`.
pub(crate) fn observe_submit(elapsed: Duration) {
    METRICS.submit_seconds.observe(elapsed.as_secs_f64());
}

/// Counts a submitBlindedBlock `outcome`.
pub(crate) fn count_submit(outcome: SubmitOutcome) {
    METRICS.submits.with_label_values(&[outcome.as_str()]).inc();
}

/// Registers the builder metrics in `registry`.
pub fn register(registry: &Registry) -> Result<(), prometheus::Error> {
    registry.register(Box::new(METRICS.get_header_seconds.clone()))?;
    registry.register(Box::new(METRICS.bids.clone()))?;
    registry.register(Box::new(METRICS.submit_seconds.clone()))?;
    registry.register(Box::new(METRICS.submits.clone()))?;
    Ok(())
}
