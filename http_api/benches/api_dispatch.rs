//! The hand-off that every API request's CPU work makes, measured alone: a job sent from a
//! tokio task to where it runs and its answer awaited, through the node's beacon processor
//! (`ApiWorkers` on the `api_request_p0` kind, as `ProcessorWorkers` maps it) against tokio's
//! blocking pool (`spawn_blocking`, what the API used before the processor ran its work).
//!
//! A small endpoint (`attestation_data`, `duties/proposer`) takes 300 to 600 µs on the
//! `endpoints` bench, whose run-to-run spread on a shared 2-core machine is wider than the few
//! per cent this hand-off could add; measured alone, interleaved round by round, the two
//! hand-offs can be compared to within microseconds. Jobs of 0 µs (the hand-off alone) and of
//! 300 µs of busy CPU (a small endpoint's work) are timed; each line reports p50 and p99 of
//! both and their ratio.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::time::{Duration, Instant};

use http_api::{ApiPriority, ApiWorkers};

#[path = "../tests/common/mod.rs"]
mod common;

/// Keeps the CPU busy for `work` (a job's own computation).
fn spin(work: Duration) {
    let start = Instant::now();
    while start.elapsed() < work {
        std::hint::spin_loop();
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let workers = common::ProcessorWorkers::new();
    let rounds = 20;
    let per_round = 250;
    println!("| job | hand-off | requests | p50 | p99 |");
    println!("|---|---|---|---|---|");
    for work_us in [0u64, 300] {
        let work = Duration::from_micros(work_us);
        let mut processor = Vec::with_capacity(rounds * per_round);
        let mut blocking = Vec::with_capacity(rounds * per_round);
        for round in 0..rounds {
            // Alternate which goes first, so neither always runs on a warmer machine.
            for first in [round % 2 == 0, round % 2 == 1] {
                if first {
                    for _ in 0..per_round {
                        let started = Instant::now();
                        let (tx, rx) = tokio::sync::oneshot::channel();
                        workers
                            .submit(
                                ApiPriority::P0,
                                Box::new(move || {
                                    spin(work);
                                    let _ = tx.send(());
                                }),
                            )
                            .unwrap();
                        rx.await.unwrap();
                        processor.push(started.elapsed());
                    }
                } else {
                    for _ in 0..per_round {
                        let started = Instant::now();
                        tokio::task::spawn_blocking(move || spin(work))
                            .await
                            .unwrap();
                        blocking.push(started.elapsed());
                    }
                }
            }
        }
        let (p50p, p99p) = (
            percentile(&mut processor, 0.5),
            percentile(&mut processor, 0.99),
        );
        let (p50b, p99b) = (
            percentile(&mut blocking, 0.5),
            percentile(&mut blocking, 0.99),
        );
        let n = rounds * per_round;
        println!(
            "| {work_us} µs | beacon processor | {n} | {:.1} µs | {:.1} µs |",
            micros(p50p),
            micros(p99p)
        );
        println!(
            "| {work_us} µs | tokio blocking pool | {n} | {:.1} µs | {:.1} µs |",
            micros(p50b),
            micros(p99b)
        );
        println!(
            "| {work_us} µs | processor / blocking pool | | {:.3} | {:.3} |",
            micros(p50p) / micros(p50b),
            micros(p99p) / micros(p99b)
        );
    }
}
