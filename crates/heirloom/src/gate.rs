//! The exclusive-mode gate: lets one transaction run with no other
//! transaction in progress (picotm's irrevocable mode), so that a
//! transaction restarted too often cannot be starved (no livelock).
//!
//! Every agent has an `active` flag on its own cache line; the gate has one
//! `exclusive` flag that ordinary transactions only read. The protocol is
//! Dekker's: an ordinary transaction stores `active = true` and then loads
//! `exclusive`; the exclusive one stores `exclusive = true` and then loads
//! every `active`. With sequentially consistent accesses on both sides at
//! least one of the two sees the other's store, so they never both proceed
//! (the loom model in `tests/loom_gate.rs` checks it). The ordinary path
//! therefore costs one store to an agent-private line and one load of a
//! read-mostly line per transaction, and no shared write.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicBool, Ordering, wait_while, wake_all};

pub(crate) struct Gate {
    /// Set while an exclusive transaction drains or runs.
    exclusive: CachePadded<AtomicBool>,
    /// Parking key for ordinary transactions waiting for the gate to open.
    open_key: CachePadded<u8>,
    /// Parking key for the exclusive transaction waiting for the drain.
    drain_key: CachePadded<u8>,
}

impl Gate {
    pub(crate) fn new() -> Self {
        Gate {
            exclusive: CachePadded::new(AtomicBool::new(false)),
            open_key: CachePadded::new(0),
            drain_key: CachePadded::new(0),
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
        // SeqCst store then SeqCst load: Dekker with `begin_exclusive`.
        active.store(true, Ordering::SeqCst);
        if self.exclusive.load(Ordering::SeqCst) {
            self.enter_slow(active);
        }
    }

    #[cold]
    fn enter_slow(&self, active: &AtomicBool) {
        loop {
            // Step back so the exclusive transaction's drain can finish.
            active.store(false, Ordering::SeqCst);
            wake_all(self.drain_key());
            wait_while(self.open_key(), || self.exclusive.load(Ordering::SeqCst), None);
            active.store(true, Ordering::SeqCst);
            if !self.exclusive.load(Ordering::SeqCst) {
                return;
            }
        }
    }

    /// An ordinary transaction ends.
    #[inline]
    pub(crate) fn leave(&self, active: &AtomicBool) {
        // SeqCst: Dekker with `begin_exclusive`, whose drain loop must either
        // see `false` here or be woken below.
        active.store(false, Ordering::SeqCst);
        if self.exclusive.load(Ordering::SeqCst) {
            wake_all(self.drain_key());
        }
    }

    /// Closes the gate: no transaction begins until [`Gate::open`]. The
    /// caller serialises exclusive transactions and is itself inactive.
    pub(crate) fn close(&self) {
        // SeqCst: Dekker with `enter`/`leave` (see the module docs).
        self.exclusive.store(true, Ordering::SeqCst);
    }

    /// After [`Gate::close`], waits until `any_active()` is false. The
    /// caller must list the agents *after* closing, so that an agent that
    /// registers later is sure to see the gate closed.
    pub(crate) fn drain(&self, any_active: impl Fn() -> bool) {
        while any_active() {
            wait_while(self.drain_key(), &any_active, None);
        }
    }

    /// Opens the gate again.
    pub(crate) fn open(&self) {
        self.exclusive.store(false, Ordering::SeqCst);
        wake_all(self.open_key());
    }
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_gate;
}
