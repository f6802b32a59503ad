//! The one place that names the synchronisation primitives.
//!
//! Under `--cfg heirloom_loom` the atomics, fences, the spin-wait and parking
//! come from loom (waiting and parking become yields loom can explore);
//! otherwise from `std`, `crossbeam_utils::Backoff` and `parking_lot_core`.
//! No other file imports `std::sync::atomic`.

#[cfg(heirloom_loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, AtomicU64, Ordering, fence};
#[cfg(not(heirloom_loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64, Ordering, fence};

/// Yields after the `pause` rounds, before a waiter parks.
#[cfg(not(heirloom_loom))]
const YIELDS: u32 = 64;

/// Bounded spinning before a latch waiter parks.
///
/// Spins with `pause` (crossbeam's `Backoff`, a few doubling rounds), then
/// yields the CPU up to [`YIELDS`] times; once [`spun_out`](Self::spun_out)
/// says the budget is spent the caller parks. A node latch is held for
/// nanoseconds, so a waiter that yields usually finds it free next time and
/// never pays for a futex wake-up; a holder preempted for a whole time slice
/// outlasts the budget, and then its waiters sleep instead of taking its
/// CPU. (Parking after crossbeam's ten rounds alone cost the `Spin`
/// protocol half its read-only throughput at 32 threads on 2 cores: every
/// release of the root latch then woke a parked thread.)
pub(crate) struct SpinWait {
    #[cfg(not(heirloom_loom))]
    backoff: crossbeam_utils::Backoff,
    #[cfg(not(heirloom_loom))]
    yields: std::cell::Cell<u32>,
}

impl SpinWait {
    #[inline]
    pub(crate) fn new() -> Self {
        SpinWait {
            #[cfg(not(heirloom_loom))]
            backoff: crossbeam_utils::Backoff::new(),
            #[cfg(not(heirloom_loom))]
            yields: std::cell::Cell::new(0),
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
        return self.yields.get() >= YIELDS;
        #[cfg(heirloom_loom)]
        return true;
    }

    /// Waits a little before the caller looks at the latch again.
    #[inline]
    pub(crate) fn wait(&self) {
        #[cfg(not(heirloom_loom))]
        if self.backoff.is_completed() {
            self.yields.set(self.yields.get() + 1);
            std::thread::yield_now();
        } else {
            self.backoff.snooze();
        }
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

/// Wakes one thread parked in [`park_while`] on `key`; `then(more)` runs
/// under parking_lot's queue lock before the thread runs, with `more` true
/// if other threads are still parked on `key`.
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn unpark_one(key: usize, then: impl FnOnce(bool)) {
    // SAFETY: as in `park_while`; `then` only stores an atomic.
    unsafe {
        parking_lot_core::unpark_one(key, |r| {
            then(r.have_more_threads);
            parking_lot_core::DEFAULT_UNPARK_TOKEN
        });
    }
}

/// Loom stand-in: parked waiters poll, so nobody is dequeued; `more` is
/// true, the conservative answer (the parked bit stays, and the next
/// release takes the slow path again).
#[cfg(heirloom_loom)]
pub(crate) fn unpark_one(_key: usize, then: impl FnOnce(bool)) {
    then(true);
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
