//! The chain's clock: wall time in milliseconds since the UNIX epoch, from which the slot and
//! the time into the slot follow (`compute_time_at_slot_ms` and its inverse).
//!
//! The node reads the system clock; tests and the spec vectors set the time by hand, so no test
//! waits for a slot to pass.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time.
pub trait SlotClock: Send + Sync {
    /// Milliseconds since the UNIX epoch.
    fn now_ms(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemTimeSlotClock;

impl SlotClock for SystemTimeSlotClock {
    fn now_ms(&self) -> u64 {
        // A clock before 1970 reads as 1970: every slot is then in the future, which the
        // gossip rules IGNORE, rather than a panic.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that says what it is told.
#[derive(Debug, Default)]
pub struct ManualSlotClock {
    now_ms: AtomicU64,
}

impl ManualSlotClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        Self {
            now_ms: AtomicU64::new(now_ms),
        }
    }

    /// Sets the time.
    pub fn set_ms(&self, now_ms: u64) {
        self.now_ms.store(now_ms, Ordering::Relaxed);
    }
}

impl SlotClock for ManualSlotClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Relaxed)
    }
}
