//! The rule that keeps the fork-choice lock short and deadlock-free, checked in debug builds:
//! **no parallel section and no store access while the lock is held.** A parallel section
//! run by a lock holder waits for pieces other threads took, and a rayon worker that waits runs
//! other jobs of its pool meanwhile (one may want the same lock: a deadlock); a store read
//! under the lock (a state replayed from an epoch snapshot) holds every gossip check, import
//! and API read that wants fork choice for as long as the disk and the replay take.
//!
//! The lock's guard calls [`hold`] (the chain's `TrackedMutex` does, for the locks it guards);
//! the parallel-section entries (`bls::Parallelism`'s `run`, `map_collect`, `join` and
//! `beside`, which the state transition's, KZG's and BLS's parallel sections go through,
//! whether they then run in parallel or, off a pool, sequentially) and the store's
//! transactions call [`forbid`], which panics in a debug build when the calling thread holds a
//! guarded lock. Release builds compile both to nothing. `make test` runs debug builds: a test
//! that breaks the rule fails there.
//!
//! The rule is what lets every parallel section run on the pool of its caller (the beacon
//! processor's) without a pool or a thread of its own: no lock is held across one, so the jobs
//! its waiting worker runs meanwhile cannot deadlock on it.

#[cfg(debug_assertions)]
use std::cell::Cell;

#[cfg(debug_assertions)]
thread_local! {
    /// The guarded lock this thread holds, innermost last, and how many it holds.
    static HELD: Cell<(Option<&'static str>, u32)> = const { Cell::new((None, 0)) };
}

/// Marks the calling thread as holding the guarded lock `name` until dropped (on the same
/// thread: it is neither `Send` nor `Sync`).
#[must_use = "the lock counts as held only while this lives"]
#[derive(Debug)]
pub struct Held {
    #[cfg(debug_assertions)]
    outer: Option<&'static str>,
    _not_send: std::marker::PhantomData<*const ()>,
}

/// The calling thread now holds the guarded lock `name` (see the crate's docs).
pub fn hold(name: &'static str) -> Held {
    #[cfg(debug_assertions)]
    {
        let (outer, depth) = HELD.with(Cell::get);
        HELD.with(|held| held.set((Some(name), depth + 1)));
        Held {
            outer,
            _not_send: std::marker::PhantomData,
        }
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = name;
        Held {
            _not_send: std::marker::PhantomData,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        HELD.with(|held| {
            let (_, depth) = held.get();
            held.set((self.outer, depth.saturating_sub(1)));
        });
    }
}

/// The guarded lock the calling thread holds, if any (always `None` in a release build).
pub fn held() -> Option<&'static str> {
    #[cfg(debug_assertions)]
    {
        let (name, depth) = HELD.with(Cell::get);
        if depth > 0 { name } else { None }
    }
    #[cfg(not(debug_assertions))]
    {
        None
    }
}

/// Panics, in a debug build, when the calling thread holds a guarded lock: `what` (a parallel
/// section, a store transaction) must not run under it.
#[track_caller]
pub fn forbid(what: &'static str) {
    #[cfg(debug_assertions)]
    if let Some(lock) = held() {
        panic!(
            "{what} while the {lock} lock is held: no parallel section and no store access \
             under it (load or compute before taking the lock)"
        );
    }
    #[cfg(not(debug_assertions))]
    let _ = what;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbid_passes_without_a_held_lock_and_after_it_is_released() {
        forbid("a store read");
        let held = hold("fork choice");
        drop(held);
        forbid("a store read");
        assert_eq!(held_name(), None);
    }

    fn held_name() -> Option<&'static str> {
        held()
    }

    #[cfg(debug_assertions)]
    #[test]
    fn forbid_panics_under_a_held_lock_and_nested_holds_unwind_in_order() {
        let outer = hold("fork choice");
        let inner = hold("inner");
        assert_eq!(held(), Some("inner"));
        drop(inner);
        assert_eq!(held(), Some("fork choice"));
        let caught = std::panic::catch_unwind(|| forbid("a parallel section"));
        let message = caught
            .expect_err("forbidden under the lock")
            .downcast::<String>()
            .expect("a formatted message");
        assert!(
            message.contains("a parallel section while the fork choice lock is held"),
            "{message}"
        );
        drop(outer);
        assert_eq!(held(), None);
    }

    #[test]
    fn the_hold_is_per_thread() {
        let _held = hold("fork choice");
        std::thread::spawn(|| forbid("a store read on another thread"))
            .join()
            .expect("another thread holds nothing");
    }
}
