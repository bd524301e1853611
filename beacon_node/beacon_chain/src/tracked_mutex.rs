//! A mutex that knows where its holder took it, for the chain's central locks (fork choice).
//!
//! A node whose fork-choice lock is never released stops importing, serving and proposing, and
//! a stack dump then shows only the waiters. A waiter of a [`TrackedMutex`] that has waited
//! longer than the mutex's `stall_after` logs the holder's thread and the source location of
//! its `lock()` (and how long it has held it), counts the stall, and goes on waiting. Taking
//! the lock costs one more uncontended lock and a `#[track_caller]` location. Its holder runs
//! no parallel section and no store transaction: a debug build panics when it does
//! ([`lock_guard`]).

use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};

/// Who holds a [`TrackedMutex`]: the thread and where it locked, since when.
#[derive(Debug, Clone)]
pub struct Holder {
    /// The holding thread (a handle: cheap to keep, named when logged).
    pub thread: std::thread::Thread,
    /// The `lock()` call that took it.
    pub location: &'static Location<'static>,
    /// When it was taken.
    pub since: Instant,
}

/// A [`parking_lot::Mutex`] that records its holder (see the module docs).
pub struct TrackedMutex<T> {
    name: &'static str,
    stall_after: Duration,
    inner: Mutex<T>,
    holder: Mutex<Option<Holder>>,
    stalls: AtomicU64,
}

/// The guard of a [`TrackedMutex`]; forgets the holder when dropped. While it lives, the
/// holding thread may run no parallel section and touch no store ([`lock_guard`], checked in
/// debug builds).
pub struct TrackedGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    holder: &'a Mutex<Option<Holder>>,
    _held: lock_guard::Held,
}

impl<T> TrackedMutex<T> {
    /// `value` behind a mutex called `name` in the log, whose waiters report the holder after
    /// `stall_after`.
    pub fn new(name: &'static str, stall_after: Duration, value: T) -> Self {
        Self {
            name,
            stall_after,
            inner: Mutex::new(value),
            holder: Mutex::new(None),
            stalls: AtomicU64::new(0),
        }
    }

    /// Locks, waiting as long as it takes; every `stall_after` of waiting logs the holder.
    #[track_caller]
    pub fn lock(&self) -> TrackedGuard<'_, T> {
        let location = Location::caller();
        let guard = loop {
            if let Some(guard) = self.inner.try_lock_for(self.stall_after) {
                break guard;
            }
            self.stalls.fetch_add(1, Ordering::Relaxed);
            let waiter = thread_label(&std::thread::current());
            match self.holder() {
                // The holder's own stack wants the lock again: a rayon worker that ran another
                // job while waiting inside the locked section (see
                // `state_processing::parallel`). It never returns.
                Some(h) if h.thread.id() == std::thread::current().id() => tracing::error!(
                    lock = self.name,
                    %waiter,
                    waiting_at = %location,
                    held_at = %h.location,
                    held_for_ms = h.since.elapsed().as_millis() as u64,
                    "lock held too long by this same thread (a job run inside the locked section wants it again: a deadlock)"
                ),
                Some(h) => tracing::error!(
                    lock = self.name,
                    %waiter,
                    waiting_at = %location,
                    holder = %thread_label(&h.thread),
                    held_at = %h.location,
                    held_for_ms = h.since.elapsed().as_millis() as u64,
                    "lock held too long"
                ),
                None => tracing::error!(
                    lock = self.name,
                    %waiter,
                    waiting_at = %location,
                    "lock held too long by a holder that left no record (a leaked guard)"
                ),
            }
        };
        *self.holder.lock() = Some(Holder {
            thread: std::thread::current(),
            location,
            since: Instant::now(),
        });
        TrackedGuard {
            guard,
            holder: &self.holder,
            _held: lock_guard::hold(self.name),
        }
    }

    /// The current holder, if any.
    pub fn holder(&self) -> Option<Holder> {
        self.holder.lock().clone()
    }

    /// How many times a waiter waited longer than `stall_after`.
    pub fn stalls(&self) -> u64 {
        self.stalls.load(Ordering::Relaxed)
    }
}

fn thread_label(thread: &std::thread::Thread) -> String {
    match thread.name() {
        Some(name) => format!("{name} {:?}", thread.id()),
        None => format!("{:?}", thread.id()),
    }
}

impl<T> std::ops::Deref for TrackedGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::DerefMut for TrackedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T> Drop for TrackedGuard<'_, T> {
    fn drop(&mut self) {
        // Before the inner guard (a field) unlocks: the next holder's record is never erased.
        *self.holder.lock() = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::mpsc;

    #[test]
    fn a_waiter_reports_the_holder_and_still_gets_the_lock() {
        let mutex = Arc::new(TrackedMutex::new("test", Duration::from_millis(10), 0u32));
        let (held_tx, held) = mpsc::channel();
        let (release_tx, release) = mpsc::channel::<()>();
        let holder = {
            let mutex = mutex.clone();
            std::thread::Builder::new()
                .name("holder".into())
                .spawn(move || {
                    let mut guard = mutex.lock();
                    *guard += 1;
                    held_tx.send(()).expect("the test waits");
                    release.recv().expect("the test releases");
                })
                .expect("a thread")
        };
        held.recv().expect("the holder holds");
        let record = mutex.holder().expect("a holder is recorded");
        assert_eq!(record.thread.name(), Some("holder"), "{record:?}");
        assert!(record.location.file().ends_with("tracked_mutex.rs"));
        let waiter = {
            let mutex = mutex.clone();
            std::thread::spawn(move || *mutex.lock() + 1)
        };
        // The waiter reports a stall while the holder keeps the lock, then gets it once freed.
        while mutex.stalls() == 0 {
            std::thread::yield_now();
        }
        release_tx.send(()).expect("the holder waits");
        holder.join().expect("the holder ends");
        assert_eq!(waiter.join().expect("the waiter ends"), 2);
        assert!(mutex.holder().is_none(), "the record goes with the guard");
    }

    /// The holder runs no parallel section and touches no store: a debug build panics when it
    /// does, and not once the guard is dropped or on another thread.
    #[cfg(debug_assertions)]
    #[test]
    fn the_holder_may_not_run_a_parallel_section_or_touch_a_store() {
        let mutex = TrackedMutex::new("fork choice", Duration::from_secs(1), ());
        let guard = mutex.lock();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool");
        let section = bls::Parallelism::Pool(&pool);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| section.run(|_| 1)));
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
                .spawn(|| section.run(|_| 1))
                .join()
                .expect("another thread holds nothing")
        });
        drop(guard);
        assert_eq!(section.run(|_| 2), 2);
    }
}
