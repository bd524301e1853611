//! Parallel sections of the state transition that never run unrelated rayon work on their
//! caller.
//!
//! A rayon worker that waits inside a parallel section, for pieces other threads took, runs
//! other jobs of its own pool meanwhile. The chain runs parts of the transition while it holds
//! fork choice's lock (a checkpoint state for an attestation's target, the attestations of an
//! imported block, the justified balances); a queued job of the beacon processor that wants the
//! same lock would then start on the holder's own stack and wait for it forever, and with it
//! every thread that wants fork choice. The beacon processor's rule (no lock held across a
//! parallel call) is kept here for every caller: a section called on a rayon worker runs on a
//! fresh thread, whose pieces go to rayon's global pool, while the caller blocks without taking
//! work. `bls::install_isolated` does the same for the signature pools.

/// Runs `op` (which may use rayon's parallel iterators) so that the calling thread, if it is a
/// rayon worker, runs no other job of its pool until `op` returns. Off rayon's workers `op`
/// runs in place.
pub fn isolated<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_none() {
        return op();
    }
    std::thread::scope(|scope| {
        scope
            .spawn(op)
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
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

    #[test]
    fn off_rayon_workers_the_section_runs_in_place() {
        let caller = std::thread::current().id();
        assert_eq!(isolated(|| std::thread::current().id()), caller);
    }
}
