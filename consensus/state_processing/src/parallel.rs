//! Parallel sections of the state transition that never run unrelated rayon work on their
//! caller.
//!
//! A rayon worker that waits inside a parallel section, for pieces other threads took, runs
//! other jobs of its own pool meanwhile. The chain runs parts of the transition while it holds
//! fork choice's lock (a checkpoint state for an attestation's target, the attestations of an
//! imported block, the justified balances); a queued job of the beacon processor that wants the
//! same lock would then start on the holder's own stack and wait for it forever, and with it
//! every thread that wants fork choice. The beacon processor's rule (no lock held across a
//! parallel call) is kept here for every caller: sections run on a pool of their own, and a
//! caller on a worker of another pool hands the section to a fresh thread and blocks on it
//! without taking work (`bls::install_isolated`). Sections nested in a section run in place on
//! that pool, whose workers, waiting, only ever pick up other sections' pieces, which take no
//! lock of the chain's.

use std::sync::OnceLock;

use rayon::ThreadPool;

/// The pool parallel sections of the state transition run on, one thread per core, built on
/// first use.
fn pool() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("state-par-{i}"))
            .build()
            .expect("a rayon pool with a positive thread count builds")
    })
}

/// Runs `op` (which may use rayon's parallel iterators) on the state transition's pool, so
/// that a calling thread that is a worker of another rayon pool runs no other job of that pool
/// until `op` returns.
pub fn isolated<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    bls::install_isolated(pool(), op)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::isolated;

    /// Waits (bounded) for `flag`; false if it never came.
    fn wait_for(flag: &AtomicBool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !flag.load(Ordering::SeqCst) {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// A job on a two-thread pool holds a lock across a parallel section (`rayon::join`) whose
    /// second half another worker took and, meanwhile, queued a second job that wants the lock.
    /// Waiting for that half, a plain `join` runs the queued job on the lock holder's own
    /// stack: a deadlock. `isolated` runs the section on a fresh thread, so the holder takes no
    /// work and the second job waits for the lock on another worker. Returns whether both jobs
    /// ended.
    fn lock_across_a_parallel_section(isolate: bool) -> bool {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a two-thread pool builds"),
        );
        let lock = Arc::new(Mutex::new(()));
        let second_started = Arc::new(AtomicBool::new(false));
        let second_half_started = Arc::new(AtomicBool::new(false));
        let (done_tx, done_rx) = mpsc::channel();
        {
            let (pool2, lock, second_started, second_half_started, done_tx) = (
                pool.clone(),
                lock.clone(),
                second_started.clone(),
                second_half_started.clone(),
                done_tx.clone(),
            );
            pool.spawn(move || {
                let guard = lock.lock().expect("not poisoned");
                let section = || {
                    rayon::join(
                        // The first half ends once the second half is running elsewhere, so
                        // the caller then waits for it.
                        || {
                            wait_for(&second_half_started);
                        },
                        || {
                            second_half_started.store(true, Ordering::SeqCst);
                            let (lock, started, done_tx) =
                                (lock.clone(), second_started.clone(), done_tx.clone());
                            pool2.spawn(move || {
                                started.store(true, Ordering::SeqCst);
                                drop(lock.lock().expect("not poisoned"));
                                let _ = done_tx.send("second");
                            });
                            wait_for(&second_started);
                        },
                    )
                };
                if isolate {
                    isolated(section);
                } else {
                    section();
                }
                drop(guard);
                let _ = done_tx.send("first");
            });
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut ended = 0;
        while ended < 2 {
            let left = deadline.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(left) {
                Ok(_) => ended += 1,
                Err(_) => return false,
            }
        }
        true
    }

    #[test]
    fn a_lock_held_across_an_isolated_section_does_not_deadlock() {
        assert!(lock_across_a_parallel_section(true));
    }

    /// The hazard `isolated` exists for is real: without it the same jobs deadlock. (The
    /// deadlocked pool's threads are left parked; the test process ends anyway.)
    #[test]
    fn a_lock_held_across_a_plain_section_deadlocks() {
        assert!(!lock_across_a_parallel_section(false));
    }

    /// A section whose pieces run sections of their own (the proposer lookahead draws each
    /// slot's proposer with a parallel sampling) ends: the inner ones run in place on the
    /// sections' pool rather than waiting for workers that wait for them.
    #[test]
    fn nested_sections_end() {
        use rayon::prelude::*;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let sums: Vec<u64> = isolated(|| {
                (0..32u64)
                    .into_par_iter()
                    .map(|i| isolated(|| (0..1000u64).into_par_iter().map(|j| i * j).sum()))
                    .collect()
            });
            let _ = tx.send(sums);
        });
        let sums = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("nested sections end");
        assert_eq!(sums[1], (0..1000u64).sum::<u64>());
    }
}
