//! The exclusive-mode gate: lets one transaction run with no other
//! transaction in progress (picotm's irrevocable mode), so that a
//! transaction restarted too often cannot be starved (no livelock).
//!
//! Every agent has an `active` flag on its own cache line; the gate has one
//! `exclusive` flag that ordinary transactions only read. The protocol is
//! Dekker's: an ordinary transaction stores `active = true` and then loads
//! `exclusive`; the exclusive one stores `exclusive = true` and then loads
//! every `active`. A store-load barrier sits between the store and the load
//! on both sides, so at least one of the two sees the other's store and
//! they never both proceed.
//!
//! The barrier is asymmetric (`sync::AsymmetricFence`): ordinary
//! transactions, which begin and end millions of times a second, pay only a
//! compiler fence, and the exclusive transaction, which is rare, pays a
//! `membarrier` system call that makes every running thread of the process
//! execute a full barrier (picotm's ordinary transactions likewise pay
//! nothing until one goes irrevocable). Where `membarrier` is unavailable,
//! and under loom, both sides are `SeqCst` fences (the loom model in
//! `gate/tests/loom_gate.rs` checks that form; fences rather than `SeqCst`
//! accesses because the fence form is what the C++ model and loom both
//! guarantee for store-then-load). The ordinary path costs one store to an
//! agent-private line and one load of a read-mostly line per transaction
//! begin and end, and no shared write.
//!
//! Exclusive transactions run one at a time, serialised by a latch of
//! their own (`serial`, a [`SpinLatch`]) that `close` takes and `open`
//! gives back after the gate has opened and the ordinary transactions
//! waiting on it have been woken. So the next exclusive transaction closes
//! the gate behind them: the waiting ordinary transactions get their turn
//! between two exclusive ones. Two other orders measured worse where
//! exclusive runs are frequent: the next exclusive transaction waiting for
//! the gate itself to open, among the ordinary transactions, and the gate
//! handed to it still closed (MEASUREMENTS.md, "The exclusive gate's
//! order"). The latch is a lock across calls, not a guard: a C transaction
//! that took it may end on another thread.

use crossbeam_utils::CachePadded;
use heirloom_latch::SpinLatch;

use crate::sync::{AsymmetricFence, AtomicBool, Ordering, wait_while, wake_all};

pub(crate) struct Gate {
    /// Set while an exclusive transaction drains or runs.
    exclusive: CachePadded<AtomicBool>,
    /// Parking key for ordinary transactions waiting for the gate to open.
    open_key: CachePadded<u8>,
    /// Parking key for the exclusive transaction waiting for the drain.
    drain_key: CachePadded<u8>,
    /// Held from `close` to `open`: exclusive transactions one at a time.
    serial: CachePadded<SpinLatch>,
    /// Ordinary transactions take the light side, `close` the heavy one.
    barrier: AsymmetricFence,
}

impl Gate {
    pub(crate) fn new() -> Self {
        Gate {
            exclusive: CachePadded::new(AtomicBool::new(false)),
            open_key: CachePadded::new(0),
            drain_key: CachePadded::new(0),
            serial: CachePadded::new(SpinLatch::new()),
            barrier: AsymmetricFence::register(),
        }
    }

    fn open_key(&self) -> usize {
        &*self.open_key as *const u8 as usize
    }

    fn drain_key(&self) -> usize {
        &*self.drain_key as *const u8 as usize
    }

    /// An ordinary transaction begins on the agent whose flag is `active`.
    #[inline]
    pub(crate) fn enter(&self, active: &AtomicBool) {
        active.store(true, Ordering::Relaxed);
        // Store-load barrier between our store of `active` and our load of
        // `exclusive`; pairs with the heavy one in `close` (Dekker).
        self.barrier.light();
        // Acquire: pairs with the Release in `open`, so that what the
        // exclusive transaction did is visible to us.
        if self.exclusive.load(Ordering::Acquire) {
            self.enter_slow(active);
        }
    }

    #[cold]
    fn enter_slow(&self, active: &AtomicBool) {
        loop {
            // Step back so the exclusive transaction's drain can finish.
            self.leave(active);
            wait_while(self.open_key(), || self.exclusive.load(Ordering::Acquire), None);
            active.store(true, Ordering::Relaxed);
            // As in `enter`.
            self.barrier.light();
            if !self.exclusive.load(Ordering::Acquire) {
                return;
            }
        }
    }

    /// An ordinary transaction ends. Always inlined: a call costs the
    /// commit more than its few instructions.
    #[inline(always)]
    pub(crate) fn leave(&self, active: &AtomicBool) {
        // Release: pairs with the Acquire load in the drain, so that the
        // exclusive transaction sees everything this one did.
        active.store(false, Ordering::Release);
        // Store-load barrier: pairs with the heavy one in `close`. Either
        // the drain reads `false` above, or we read `exclusive == true` below
        // and wake it (its park re-checks under the queue lock, so it cannot
        // miss it). One heavy barrier covers every later leave: `exclusive`
        // stays set for the whole drain.
        self.barrier.light();
        if self.exclusive.load(Ordering::Relaxed) {
            wake_all(self.drain_key());
        }
    }

    /// Closes the gate: no transaction begins until [`Gate::open`]. Waits
    /// while another exclusive transaction has it closed, so exclusive
    /// transactions run one at a time. The caller is itself inactive.
    pub(crate) fn close(&self) {
        // Given back in `open`. Its Acquire pairs with the Release there,
        // so that the previous exclusive transaction's work is visible to
        // this one.
        self.serial.lock();
        self.exclusive.store(true, Ordering::Relaxed);
        // Store-load barrier between this store and the loads of every
        // `active` in `drain`; pairs with the light ones in `enter` and
        // `leave`.
        self.barrier.heavy();
    }

    /// After [`Gate::close`], waits until `any_active()` (Acquire loads of
    /// every other agent's flag) is false. The
    /// caller must list the agents *after* closing, so that an agent that
    /// registers later is sure to see the gate closed.
    pub(crate) fn drain(&self, any_active: impl Fn() -> bool) {
        while any_active() {
            wait_while(self.drain_key(), &any_active, None);
        }
    }

    /// A heavy fence that pairs with the light one of every
    /// [`Gate::enter`]: after it, an agent whose transaction read memory
    /// before the caller's store that preceded it is seen `active` (the row
    /// switch's grace period, `txn/row_switch.rs`).
    pub(crate) fn heavy_fence(&self) {
        self.barrier.heavy();
    }

    /// Opens the gate again, then lets the next exclusive transaction
    /// close it. The caller closed it (on this thread or another).
    pub(crate) fn open(&self) {
        // Release: pairs with the Acquire loads in `enter`.
        self.exclusive.store(false, Ordering::Release);
        wake_all(self.open_key());
        // SAFETY: taken by the `close` this `open` ends; nobody else gives
        // it back (one `open` per `close`: `Agent::leave_gate`).
        unsafe { self.serial.unlock() };
    }
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_gate;
}
