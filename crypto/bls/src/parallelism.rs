//! Where a parallel section runs: the caller's choice, [`Parallelism`], passed down. No crate
//! below the node owns a pool or starts a thread for its sections: the node's CPU threads are
//! the beacon processor's pools, and a section called from a handler runs on the handler's
//! pool.
//!
//! A thread that is no pool's worker (a tokio thread, a test's main thread) runs a
//! [`Parallelism::CurrentPool`] section sequentially: a rayon call there would start rayon's
//! global pool, a second set of threads beside the node's. A caller off the pools that wants
//! parallelism names a pool ([`Parallelism::Pool`]); benchmarks and tests pass their own.
//!
//! **Never under the fork-choice lock** (checked in debug builds, [`lock_guard::forbid`], at
//! every section, sequential or not): a rayon worker that waits for the pieces of its section
//! runs other jobs of its pool meanwhile, and one of them may want the lock.

use std::sync::Arc;

use rayon::ThreadPool;
use rayon::prelude::*;

/// Where a parallel section runs.
#[derive(Debug, Clone, Copy)]
pub enum Parallelism<'a> {
    /// One piece after the other on the calling thread.
    Sequential,
    /// On the rayon pool whose worker calls (the beacon processor's, in the node; a
    /// benchmark's own), in place; sequentially on a thread that is no pool's worker, which
    /// therefore never starts rayon's global pool.
    CurrentPool,
    /// On this pool: in place when the caller is one of its workers; otherwise the caller
    /// waits (a worker of another pool runs that pool's jobs meanwhile) while the pool runs
    /// the section.
    Pool(&'a ThreadPool),
}

impl<'a> From<&'a ThreadPool> for Parallelism<'a> {
    fn from(pool: &'a ThreadPool) -> Self {
        Parallelism::Pool(pool)
    }
}

impl<'a> From<&'a Arc<ThreadPool>> for Parallelism<'a> {
    fn from(pool: &'a Arc<ThreadPool>) -> Self {
        Parallelism::Pool(pool)
    }
}

/// Whether the calling thread is a worker of some rayon pool.
fn on_a_pool() -> bool {
    rayon::current_thread_index().is_some()
}

impl Parallelism<'_> {
    /// Whether a section runs in parallel: a pool is named, or the caller is a pool's worker.
    pub fn is_parallel(self) -> bool {
        match self {
            Parallelism::Sequential => false,
            Parallelism::CurrentPool => on_a_pool(),
            Parallelism::Pool(_) => true,
        }
    }

    /// The threads a section's work is split for: the pool's, 1 when it runs sequentially.
    pub fn threads(self) -> usize {
        match self {
            Parallelism::Sequential => 1,
            Parallelism::CurrentPool if on_a_pool() => rayon::current_num_threads(),
            Parallelism::CurrentPool => 1,
            Parallelism::Pool(pool) => pool.current_num_threads(),
        }
        .max(1)
    }

    /// Runs a parallel section: `op(true)` on the chosen pool (its rayon calls, `par_iter` and
    /// `join`, then use that pool), or `op(false)` on the calling thread when the section runs
    /// sequentially (`op` must then make no rayon call: off a pool, one would start rayon's
    /// global pool).
    ///
    /// Never under the fork-choice lock: a debug build panics when the caller holds it
    /// ([`lock_guard::forbid`]), whether the section runs in parallel or not.
    #[track_caller]
    pub fn run<R: Send>(self, op: impl FnOnce(bool) -> R + Send) -> R {
        lock_guard::forbid("a parallel section");
        match self {
            Parallelism::Sequential => op(false),
            Parallelism::CurrentPool => op(on_a_pool()),
            Parallelism::Pool(pool) => pool.install(|| op(true)),
        }
    }

    /// `f` of every item of `items`, collected in order: on the pool, or one after the other
    /// (see [`Self::run`]).
    #[track_caller]
    pub fn map_collect<I, T, R, C>(self, items: I, f: impl Fn(T) -> R + Sync + Send) -> C
    where
        I: IntoParallelIterator<Item = T> + IntoIterator<Item = T> + Send,
        T: Send,
        R: Send,
        C: FromParallelIterator<R> + FromIterator<R> + Send,
    {
        self.run(|parallel| {
            if parallel {
                items.into_par_iter().map(f).collect()
            } else {
                items.into_iter().map(f).collect()
            }
        })
    }

    /// `(a(), b())`: both at once on the pool (`rayon::join`), or one after the other (see
    /// [`Self::run`]).
    #[track_caller]
    pub fn join<RA: Send, RB: Send>(
        self,
        a: impl FnOnce() -> RA + Send,
        b: impl FnOnce() -> RB + Send,
    ) -> (RA, RB) {
        self.run(|parallel| {
            if parallel {
                rayon::join(a, b)
            } else {
                (a(), b())
            }
        })
    }

    /// `(here(), beside())`: `beside` handed to the pool while the calling thread runs `here`
    /// (which therefore need not be `Send`), or one after the other (`here` first) when the
    /// section runs sequentially. Never under the fork-choice lock (see [`Self::run`]).
    #[track_caller]
    pub fn beside<RA, RB: Send>(
        self,
        here: impl FnOnce() -> RA,
        beside: impl FnOnce() -> RB + Send,
    ) -> (RA, RB) {
        lock_guard::forbid("a parallel section");
        let pool = match self {
            Parallelism::Sequential => None,
            Parallelism::CurrentPool if !on_a_pool() => None,
            Parallelism::CurrentPool => Some(None),
            Parallelism::Pool(pool) => Some(Some(pool)),
        };
        let Some(pool) = pool else {
            let first = here();
            return (first, beside());
        };
        let mut other = None;
        let first = match pool {
            None => rayon::in_place_scope(|scope| {
                scope.spawn(|_| other = Some(beside()));
                here()
            }),
            Some(pool) => pool.in_place_scope(|scope| {
                scope.spawn(|_| other = Some(beside()));
                here()
            }),
        };
        // The scope ended once its job did (a panic there is re-raised by the scope).
        (first, other.expect("the scope ran its job"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    use super::*;

    fn pool(threads: usize) -> ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("test-pool-{i}"))
            .build()
            .expect("a pool builds")
    }

    /// The threads the pieces of a 64-piece section ran on.
    fn threads_of(parallelism: Parallelism<'_>) -> HashSet<ThreadId> {
        let seen = Mutex::new(HashSet::new());
        let squares: Vec<u64> = parallelism.map_collect(0..64u64, |i| {
            // Long enough that idle workers take pieces.
            std::thread::sleep(std::time::Duration::from_millis(1));
            seen.lock()
                .expect("not poisoned")
                .insert(std::thread::current().id());
            i * i
        });
        assert_eq!(squares, (0..64u64).map(|i| i * i).collect::<Vec<_>>());
        seen.into_inner().expect("not poisoned")
    }

    /// Off a pool, `CurrentPool` runs every piece on the calling thread: no pool of its own and
    /// no rayon global pool.
    #[test]
    fn current_pool_off_a_pool_runs_on_the_caller() {
        let caller = std::thread::current().id();
        assert_eq!(
            threads_of(Parallelism::CurrentPool),
            HashSet::from([caller])
        );
        assert_eq!(threads_of(Parallelism::Sequential), HashSet::from([caller]));
        assert!(!Parallelism::CurrentPool.is_parallel());
        assert_eq!(Parallelism::CurrentPool.threads(), 1);
    }

    /// On a pool's worker, `CurrentPool` splits the section over that pool's threads, and only
    /// those; a named pool runs it on its threads whoever calls.
    #[test]
    fn sections_run_on_the_callers_pool_or_the_named_one() {
        let pool = pool(3);
        let workers: HashSet<ThreadId> = pool
            .broadcast(|_| std::thread::current().id())
            .into_iter()
            .collect();
        let (seen, parallel, threads) = pool.install(|| {
            (
                threads_of(Parallelism::CurrentPool),
                Parallelism::CurrentPool.is_parallel(),
                Parallelism::CurrentPool.threads(),
            )
        });
        assert!(parallel);
        assert_eq!(threads, 3);
        assert!(seen.is_subset(&workers), "{seen:?} not within {workers:?}");
        assert!(seen.len() > 1, "the pieces ran on one thread: {seen:?}");
        let seen = threads_of(Parallelism::Pool(&pool));
        assert!(seen.is_subset(&workers), "{seen:?} not within {workers:?}");
    }

    /// `join` and `beside` run both halves: on a pool, `beside`'s other half on its workers
    /// and its first on the caller; off a pool, both on the caller.
    #[test]
    fn join_and_beside_run_both_halves() {
        let caller = std::thread::current().id();
        let on = || std::thread::current().id();
        assert_eq!(Parallelism::CurrentPool.join(|| 1, || 2), (1, 2));
        assert_eq!(Parallelism::CurrentPool.beside(on, on), (caller, caller));
        let pool = pool(2);
        let workers: HashSet<ThreadId> = pool.broadcast(|_| on()).into_iter().collect();
        assert_eq!(Parallelism::Pool(&pool).join(|| 1, || 2), (1, 2));
        let (here, other) = Parallelism::Pool(&pool).beside(on, on);
        assert_eq!(here, caller);
        assert!(workers.contains(&other));
        let (here, other) = pool.install(|| Parallelism::CurrentPool.beside(on, on));
        assert!(workers.contains(&here) && workers.contains(&other));
    }

    /// Sections nested in a section (the proposer lookahead's draws inside an epoch's) run on
    /// the same pool and end.
    #[test]
    fn nested_sections_end() {
        let pool = pool(2);
        let sums: Vec<u64> = Parallelism::Pool(&pool).map_collect(0..32u64, |i| {
            let products: Vec<u64> = Parallelism::CurrentPool.map_collect(0..1000u64, |j| i * j);
            products.iter().sum()
        });
        assert_eq!(sums[1], (0..1000u64).sum::<u64>());
    }

    /// A section under a guarded lock panics in a debug build, even one that would run
    /// sequentially; not on another thread, nor once the lock is released.
    #[cfg(debug_assertions)]
    #[test]
    fn a_section_under_the_fork_choice_lock_panics() {
        let pool = pool(1);
        for parallelism in [
            Parallelism::Sequential,
            Parallelism::CurrentPool,
            Parallelism::Pool(&pool),
        ] {
            let held = lock_guard::hold("fork choice");
            let caught =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parallelism.run(|_| 1)));
            let message = caught
                .expect_err("a parallel section under the lock panics")
                .downcast::<String>()
                .expect("a formatted message");
            assert!(
                message.contains("a parallel section while the fork choice lock is held"),
                "{message}"
            );
            std::thread::scope(|scope| {
                scope
                    .spawn(|| parallelism.run(|_| 1))
                    .join()
                    .expect("another thread holds nothing")
            });
            drop(held);
            assert_eq!(parallelism.run(|_| 2), 2);
        }
    }
}
