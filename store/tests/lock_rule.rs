//! The store is never read or written under the fork-choice lock: a debug build panics when a
//! thread that holds it (`lock_guard::hold`) opens a transaction.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::{E, fulu_spec};
use store::{Store, StoreConfig};
use types::Root;

#[cfg(debug_assertions)]
#[test]
fn a_store_transaction_under_the_fork_choice_lock_panics_in_a_debug_build() {
    let dir = tempfile::tempdir().unwrap();
    let store: Store<E> =
        Store::open(&dir.path().join("db"), fulu_spec(), StoreConfig::default()).unwrap();
    // Without the lock: a read and a write.
    assert!(store.get_block(&Root::ZERO).unwrap().is_none());
    store.begin_batch().unwrap().commit().unwrap();

    let held = lock_guard::hold("fork choice");
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.get_block(&Root::ZERO)
    }));
    let message = read
        .expect_err("a read under the lock panics")
        .downcast::<String>()
        .unwrap();
    assert!(
        message.contains("a store read while the fork choice lock is held"),
        "{message}"
    );
    let write = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.begin_batch().map(|batch| batch.commit())
    }));
    assert!(write.is_err(), "a write under the lock panics");
    drop(held);
    assert!(store.get_block(&Root::ZERO).unwrap().is_none());
}
