//! The one place that names the synchronisation primitives.
//!
//! Under `--cfg heirloom_loom` the atomics, fences, the spin-wait and parking
//! come from loom (waiting and parking become yields loom can explore);
//! otherwise from `std`, `crossbeam_utils::Backoff` and `parking_lot_core`.
//! No other file imports `std::sync::atomic`.

#[cfg(heirloom_loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, AtomicU64, Ordering, fence};
#[cfg(not(heirloom_loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

/// Bounded spinning before a latch waiter parks.
///
/// Spins with `pause`, then yields a few times (crossbeam's `Backoff`: about
/// ten rounds in all); once [`spun_out`](Self::spun_out) says the budget is
/// spent the caller parks. On an oversubscribed machine the holder may be
/// preempted for a whole time slice, and a waiter that keeps spinning or
/// yielding only delays it; parked waiters cost the holder nothing.
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

    /// True once the spinning budget is spent: the caller should park.
    ///
    /// Under loom: at once. A loom thread that yields is not run again
    /// until the others have made progress, so the holder would always be
    /// gone by the time a spinning waiter looked again and the models would
    /// never reach the parked path; parking at once makes them explore it.
    #[inline]
    pub(crate) fn spun_out(&self) -> bool {
        #[cfg(not(heirloom_loom))]
        return self.backoff.is_completed();
        #[cfg(heirloom_loom)]
        return true;
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

/// Parks the calling thread on `key` while `cond()` holds, until
/// [`unpark_all`] is called with the same key.
///
/// `cond` runs under parking_lot's queue lock, so a releaser that makes it
/// false *before* calling `unpark_all` is never missed: either `cond` sees
/// the change, or the thread is queued before the wake-up runs. Spurious
/// returns are possible; callers loop.
///
/// `key` is the address of a node latch, which lives as long as its tree
/// (nodes are freed only when the tree is dropped).
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn park_while(key: usize, cond: impl FnOnce() -> bool) {
    // SAFETY: `key` is the address of a latch of this crate, used as a key by
    // nothing else (a `RwLatch` parks on its own, different address); `cond`
    // only loads an atomic, so it neither panics nor calls into parking_lot.
    unsafe {
        parking_lot_core::park(key, cond, || {}, |_, _| {}, parking_lot_core::DEFAULT_PARK_TOKEN, None);
    }
}

/// Wakes every thread parked in [`park_while`] on `key`.
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn unpark_all(key: usize) {
    // SAFETY: as in `park_while`: the key belongs to one latch of this crate.
    unsafe {
        parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN);
    }
}

/// Loom stand-in: one yield if `cond` holds (callers loop and re-check),
/// so models explore the parked path's bit protocol.
#[cfg(heirloom_loom)]
pub(crate) fn park_while(_key: usize, cond: impl FnOnce() -> bool) {
    if cond() {
        loom::thread::yield_now();
    }
}

/// Loom stand-in: parked waiters poll, so waking is a no-op.
#[cfg(heirloom_loom)]
pub(crate) fn unpark_all(_key: usize) {}
