//! Parallel sections of the state transition: on the rayon pool whose worker runs the
//! transition, in place. This crate owns no pool and starts no thread.
//!
//! In the node the transition runs in a beacon processor handler, so its sections split over
//! the processor's pool: one thread budget for the node. A benchmark or a test that wants them
//! parallel runs the transition on a pool of its own (`pool.install(|| state_transition(..))`).
//! Called from a thread that is no pool's worker (a tokio thread, a test's main thread), a
//! section runs sequentially: it never starts rayon's global pool
//! ([`Parallelism::CurrentPool`]). Functions that verify signatures with a caller's choice
//! take a [`Parallelism`] (`BlockSignatureVerifier::verify_on`).
//!
//! No section runs under the fork-choice lock: a debug build panics at every section
//! ([`lock_guard::forbid`], through [`Parallelism::run`]). A worker waiting for its section's
//! pieces runs other jobs of its pool meanwhile, and one of them may want that lock.

pub use bls::Parallelism;

/// How the transition's sections run: on the caller's pool, sequentially off one.
pub(crate) const SECTIONS: Parallelism<'static> = Parallelism::CurrentPool;

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    use super::SECTIONS;

    /// The threads the 64 pieces of a section ran on.
    fn threads_of_a_section() -> HashSet<ThreadId> {
        let seen = Mutex::new(HashSet::new());
        let _: Vec<()> = SECTIONS.map_collect(0..64u32, |_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            seen.lock()
                .expect("not poisoned")
                .insert(std::thread::current().id());
        });
        seen.into_inner().expect("not poisoned")
    }

    /// Off a pool a section runs on its caller alone (no pool of its own, no global pool); on
    /// a pool's worker, on that pool's threads.
    #[test]
    fn sections_run_on_the_callers_pool_and_sequentially_off_one() {
        let caller = std::thread::current().id();
        assert_eq!(threads_of_a_section(), HashSet::from([caller]));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool builds");
        let workers: HashSet<ThreadId> = pool
            .broadcast(|_| std::thread::current().id())
            .into_iter()
            .collect();
        let seen = pool.install(threads_of_a_section);
        assert!(seen.is_subset(&workers), "{seen:?} not within {workers:?}");
    }

    /// A section under the fork-choice lock panics in a debug build, even off a pool, where it
    /// would run sequentially: the rule does not depend on the caller's thread.
    #[cfg(debug_assertions)]
    #[test]
    fn a_section_under_the_fork_choice_lock_panics() {
        let held = lock_guard::hold("fork choice");
        let caught = std::panic::catch_unwind(threads_of_a_section);
        drop(held);
        let message = caught
            .expect_err("a section under the lock panics")
            .downcast::<String>()
            .expect("a formatted message");
        assert!(
            message.contains("a parallel section while the fork choice lock is held"),
            "{message}"
        );
    }
}
