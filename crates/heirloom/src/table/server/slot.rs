//! The hand-off of messages between clients and a lock server: one slot per
//! client, a doorbell per server.
//!
//! The 1995 paper's MPL clients reserve a slot of a circular FIFO under a
//! latch, fill it, and set `enqueue_complete`; the server serves slots in
//! order and sets `service_complete`. Here every client owns one slot of
//! each server for its whole life (its agent's index names it), so
//! reservation costs nothing and no two clients ever write one line; the
//! server scans the slots instead of following a FIFO order.
//!
//! ## `Slot::state` (who moves it)
//!
//! | from            | to       | by                                        |
//! |-----------------|----------|-------------------------------------------|
//! | `EMPTY`/`DONE`  | `POSTED` | the client, after writing the message (Release) |
//! | `POSTED`        | `PARKED` | the client, about to park (CAS)           |
//! | `POSTED`/`PARKED` | `DONE` | the server, after writing the reply in place (swap, Release); it wakes the client if it saw `PARKED` |
//!
//! So the message belongs to the client in `EMPTY` and `DONE` and to the
//! server in `POSTED` and `PARKED`; each side touches it only while it owns
//! it, and each hand-over is a Release store read by an Acquire load. No
//! wake-up is lost: the client parks only if its validation (run under the
//! parking lot's queue lock) still reads `PARKED`, and the server's swap
//! either precedes that validation (which then reads `DONE`) or returns
//! `PARKED`, and then the server's wake-up takes the same queue lock after
//! the client is queued.
//!
//! ## The doorbell
//!
//! A server with no work parks. A client posts and then rings; the server,
//! before parking, announces it (`sleeping`) and scans the slots once more.
//! A `SeqCst` fence sits between the store and the load on both sides
//! (client: `POSTED` then `sleeping`; server: `sleeping` then every
//! state), so at least one side sees the other's store (Dekker): either the
//! server's last scan finds the message, or the client sees `sleeping` and
//! wakes it. The loom models in `tests/loom_slot.rs` check both hand-offs
//! and that no wake-up is lost (they park in heirloom-latch's `Lot`,
//! under loom a real condition variable, so a lost wake-up is a deadlock
//! loom reports).

use crate::sync::{AtomicBool, AtomicU32, Lot, Ordering, UnsafeCell, fence};

/// `state`: no message yet (the client owns the slot).
const EMPTY: u32 = 0;
/// `state`: a message is posted (the server owns the slot).
const POSTED: u32 = 1;
/// `state`: as `POSTED`, and the client is parked or about to park.
const PARKED: u32 = 2;
/// `state`: the reply is in the slot (the client owns it again).
const DONE: u32 = 3;

/// One client's slot at one server. Each lives on its own cache line (the
/// storage wraps it in `CachePadded`).
pub(crate) struct Slot<M> {
    state: AtomicU32,
    msg: UnsafeCell<M>,
    lot: Lot,
}

// SAFETY: the message is accessed by one side at a time, as `state` hands
// it over (see the module docs); `M: Send` because it moves between threads.
unsafe impl<M: Send> Sync for Slot<M> {}
// SAFETY: as above.
unsafe impl<M: Send> Send for Slot<M> {}

impl<M: Copy> Slot<M> {
    pub(crate) fn new(empty: M) -> Self {
        Slot {
            state: AtomicU32::new(EMPTY),
            msg: UnsafeCell::new(empty),
            lot: Lot::new(),
        }
    }

    fn key(&self) -> usize {
        &self.state as *const AtomicU32 as usize
    }

    /// Client: publishes `msg`.
    ///
    /// # Safety
    /// The caller is this slot's only client and has no message outstanding
    /// (every earlier `post` was followed by `wait`).
    #[inline]
    pub(crate) unsafe fn post(&self, msg: M) {
        debug_assert!(matches!(self.state.load(Ordering::Relaxed), EMPTY | DONE));
        // SAFETY: `EMPTY` or `DONE`: the client owns the message (the
        // caller's contract); the server reads it only after the store below.
        self.msg.with_mut(|m| unsafe { *m = msg });
        // Release: pairs with the server's Acquire load in `serve`, which
        // then reads the message written above.
        self.state.store(POSTED, Ordering::Release);
    }

    /// Client: waits for the reply to the posted message and returns it:
    /// spins briefly, then parks.
    ///
    /// # Safety
    /// As [`Slot::post`], after a `post`.
    #[inline]
    pub(crate) unsafe fn wait(&self) -> M {
        // SAFETY: this function's contract.
        unsafe { self.wait_patiently(std::time::Duration::ZERO) }
    }

    /// [`Slot::wait`] for a message the server takes a while to serve (a
    /// batch): after the short spin, keeps looking (yielding) for up to
    /// `patience` before it parks, since waking a parked client costs more
    /// than the wait it saves.
    ///
    /// # Safety
    /// As [`Slot::post`], after a `post`.
    #[inline]
    pub(crate) unsafe fn wait_patiently(&self, patience: std::time::Duration) -> M {
        // SAFETY: this function's contract.
        unsafe { self.wait_helping(patience, || {}) }
    }

    /// [`Slot::wait_patiently`], calling `help` when the reply is late:
    /// after the short spin, and before each later look and the park (the
    /// caller serves the messages itself if nobody is serving them).
    ///
    /// # Safety
    /// As [`Slot::post`], after a `post`.
    #[inline]
    pub(crate) unsafe fn wait_helping(&self, patience: std::time::Duration, mut help: impl FnMut()) -> M {
        // Help after a short spin that gives up no core (a yield costs a
        // scheduling round when other processes keep every core busy, and
        // a running server answers within it), then spin and yield, then
        // help again before each look and the park.
        if !self.spin_without_yield() {
            help();
            if !self.spin_until_done() && !self.help_and_look(patience, &mut help) {
                self.park_until_done();
            }
        }
        // SAFETY: `DONE` (read with Acquire above): the client owns the
        // message again, and the server's writes to it are visible.
        self.msg.with(|m| unsafe { *m })
    }

    /// Spins, then yields a few times (crossbeam's `Backoff` until it
    /// completes, some microseconds); whether the reply came. A client
    /// gives up sooner than a server (see [`SPIN_FOR`]): a reply that takes
    /// longer means the server is busy or has no core, and then a spinning
    /// client only takes the core from it.
    #[cfg(not(heirloom_loom))]
    #[inline]
    fn spin_until_done(&self) -> bool {
        let backoff = crossbeam_utils::Backoff::new();
        loop {
            // Acquire: pairs with the server's Release swap in `serve`.
            if self.state.load(Ordering::Acquire) == DONE {
                return true;
            }
            if backoff.is_completed() {
                return false;
            }
            backoff.snooze();
        }
    }

    /// Spins without yielding (crossbeam's `Backoff::spin` to its limit, a
    /// microsecond or two); whether the reply came.
    #[cfg(not(heirloom_loom))]
    #[inline]
    fn spin_without_yield(&self) -> bool {
        let backoff = crossbeam_utils::Backoff::new();
        for _ in 0..7 {
            // Acquire: as in `spin_until_done`.
            if self.state.load(Ordering::Acquire) == DONE {
                return true;
            }
            backoff.spin();
        }
        false
    }

    /// Under loom: one look.
    #[cfg(heirloom_loom)]
    fn spin_without_yield(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// Helps once, then yields (helping before each look) until the reply
    /// comes or `patience` has passed; whether it came.
    #[cold]
    fn help_and_look(&self, patience: std::time::Duration, help: &mut impl FnMut()) -> bool {
        help();
        // Acquire: as in `spin_until_done`.
        let done = || self.state.load(Ordering::Acquire) == DONE;
        if done() {
            return true;
        }
        if patience.is_zero() {
            return false;
        }
        let start = std::time::Instant::now();
        loop {
            crate::sync::yield_now();
            help();
            if done() {
                return true;
            }
            if start.elapsed() >= patience {
                return false;
            }
        }
    }

    /// Under loom: one look (spinning would only multiply the schedules).
    #[cfg(heirloom_loom)]
    fn spin_until_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    #[cold]
    fn park_until_done(&self) {
        // Release: keeps the CAS in the release sequence of the client's
        // `POSTED` store, so the server's Acquire load of `PARKED` still
        // sees the message. Acquire on failure: pairs with the server's
        // Release swap to `DONE`.
        if self
            .state
            .compare_exchange(POSTED, PARKED, Ordering::Release, Ordering::Acquire)
            .is_err()
        {
            return; // already DONE
        }
        // Acquire: as in `spin_until_done`.
        while self.state.load(Ordering::Acquire) != DONE {
            // SAFETY: the key is this slot's state word, woken only through
            // its lot; the condition only loads an atomic.
            unsafe {
                self.lot
                    .wait_while(self.key(), || self.state.load(Ordering::Acquire) == PARKED, None)
            };
        }
    }

    /// Server: whether a message waits here.
    #[inline]
    pub(crate) fn pending(&self) -> bool {
        matches!(self.state.load(Ordering::Relaxed), POSTED | PARKED)
    }

    /// Server: if a message is posted, runs `f` on it (it writes the reply
    /// in place), publishes the reply and wakes the client if it parked.
    /// Returns whether there was a message.
    ///
    /// # Safety
    /// The caller is this slot's only server.
    #[inline]
    pub(crate) unsafe fn serve(&self, f: impl FnOnce(&mut M)) -> bool {
        // Acquire: pairs with the client's Release store of `POSTED` (or
        // its CAS to `PARKED`, in the same release sequence).
        if !matches!(self.state.load(Ordering::Acquire), POSTED | PARKED) {
            return false;
        }
        // SAFETY: `POSTED` or `PARKED`: the server owns the message until
        // the swap below, and the caller is the only server.
        self.msg.with_mut(|m| f(unsafe { &mut *m }));
        // Release: pairs with the client's Acquire loads of `DONE`.
        if self.state.swap(DONE, Ordering::Release) == PARKED {
            // SAFETY: as in the client's wait.
            unsafe { self.lot.wake_all(self.key()) };
        }
        true
    }
}

/// How long a server with no message keeps looking before it parks.
/// Parking is cheap only if the other side is running: a parked thread's
/// core may go idle, and waking it then costs tens of microseconds on a
/// virtual machine, longer than the message it waited for; a server that
/// parks sooner turns most round trips into context switches (`nullcs`;
/// the crate's MEASUREMENTS.md, "Shared memory against message passing").
/// After the
/// first few spins the wait yields the core, so runnable threads (the
/// clients) lose little to it. A client waiting for a reply gives up much
/// sooner (`Slot::wait`): a reply that takes long means the server is busy
/// or has no core, and then a spinning client only takes the core from
/// it.
#[cfg_attr(heirloom_loom, allow(dead_code))]
pub(crate) const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(50);

/// Spins a little, then yields, until `done()` or [`SPIN_FOR`] has passed;
/// whether `done()` became true.
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn spin(done: impl Fn() -> bool) -> bool {
    let backoff = crossbeam_utils::Backoff::new();
    for _ in 0..7 {
        if done() {
            return true;
        }
        backoff.spin();
    }
    yield_until(done, SPIN_FOR)
}

/// Under loom: one look.
#[cfg(heirloom_loom)]
pub(crate) fn spin(done: impl Fn() -> bool) -> bool {
    done()
}

/// Yields until `done()` or `limit` has passed; whether `done()` became
/// true.
#[cfg(not(heirloom_loom))]
#[cold]
fn yield_until(done: impl Fn() -> bool, limit: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::yield_now();
    }
}

/// Where a server sleeps when no slot has a message.
pub(crate) struct Doorbell {
    sleeping: AtomicBool,
    lot: Lot,
}

impl Doorbell {
    pub(crate) fn new() -> Self {
        Doorbell {
            sleeping: AtomicBool::new(false),
            lot: Lot::new(),
        }
    }

    fn key(&self) -> usize {
        &self.sleeping as *const AtomicBool as usize
    }

    /// Client, after [`Slot::post`]: wakes the server if it sleeps.
    #[inline]
    pub(crate) fn ring(&self) {
        // SeqCst fence between the client's store of `POSTED` and this load
        // of `sleeping`; pairs with the fence in `sleep` (Dekker).
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) {
            self.wake();
        }
    }

    /// Client, after [`Slot::post`]: if the server sleeps, calls `serve`
    /// (which serves the posted messages itself when it can, and says
    /// whether it did) and wakes the server only if it did not. Sound as
    /// [`Doorbell::ring`] is: a message posted before the server announced
    /// its sleep is seen by the server's look after it; one posted after
    /// it sees `sleeping` here and is served by `serve` or by the server
    /// this wakes.
    #[inline]
    pub(crate) fn ring_or(&self, serve: impl FnOnce() -> bool) {
        // SeqCst fence: as in `ring`.
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) && !serve() {
            self.wake();
        }
    }

    /// Wakes the server whatever it is doing (also used to stop it).
    #[cold]
    pub(crate) fn wake(&self) {
        // SeqCst fence between the caller's store (the message, or `stop`)
        // and this store of `sleeping`; pairs with the fence in `sleep`. If
        // the server's look at its work missed the caller's store, its
        // fence came first, so its store of `true` is ordered before ours
        // of `false` and its park validation (under the lot's lock) reads
        // ours or is woken below. Without it a stop racing with a server
        // going to sleep could be missed (the loom model of the desk found
        // it: the server stored `true` after this `false`, then read `stop`
        // stale).
        fence(Ordering::SeqCst);
        self.sleeping.store(false, Ordering::Relaxed);
        // The server's park validation reads `sleeping` under the parking
        // lot's queue lock, which the wake-up takes after the store above.
        // SAFETY: the key is this doorbell's word, woken only through its
        // lot.
        unsafe { self.lot.wake_all(self.key()) };
    }

    /// Server, having found no work: parks until rung, unless `work()`
    /// (scanned after announcing the sleep) finds some.
    #[cold]
    pub(crate) fn sleep(&self, work: impl Fn() -> bool) {
        self.sleeping.store(true, Ordering::Relaxed);
        // SeqCst fence between the store of `sleeping` and the loads of the
        // slots' states in `work`; pairs with the fence in `ring`.
        fence(Ordering::SeqCst);
        if !work() {
            // SAFETY: as in `ring`; the condition only loads an atomic.
            unsafe {
                self.lot
                    .wait_while(self.key(), || self.sleeping.load(Ordering::Relaxed), None)
            };
        }
        self.sleeping.store(false, Ordering::Relaxed);
    }
}
