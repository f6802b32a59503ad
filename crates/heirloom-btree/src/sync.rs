//! The one place that names the synchronisation primitives.
//!
//! Under `--cfg heirloom_loom` the atomics, fences and the spin-wait come
//! from loom (waiting becomes a yield loom can explore); otherwise from `std`
//! and `crossbeam_utils::Backoff`. No other file imports `std::sync::atomic`.

#[cfg(heirloom_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
#[cfg(not(heirloom_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering, fence};

/// Spin-then-yield waiting for a latch held by another thread.
///
/// Spins briefly with `pause`, then yields the CPU: on an oversubscribed
/// machine the holder may be preempted, and burning the rest of the time
/// slice would only delay it.
pub(crate) struct SpinWait {
    #[cfg(not(heirloom_loom))]
    backoff: crossbeam_utils::Backoff,
}

impl SpinWait {
    #[inline]
    pub(crate) fn new() -> Self {
        SpinWait {
            #[cfg(not(heirloom_loom))]
            backoff: crossbeam_utils::Backoff::new(),
        }
    }

    /// Waits a little before the caller looks at the latch again.
    #[inline]
    pub(crate) fn wait(&self) {
        #[cfg(not(heirloom_loom))]
        self.backoff.snooze();
        #[cfg(heirloom_loom)]
        loom::thread::yield_now();
    }
}
