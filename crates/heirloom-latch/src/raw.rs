//! [`RawLatch`]: the latch of the latched lock table's heads and buckets,
//! taken with one compare-and-swap and given back with one plain store.
//!
//! A latch guards a lock head for the few dozen nanoseconds of a queue
//! operation, so on the uncontended path its cost is its atomic
//! instructions. parking_lot's `Mutex` gives its latch back with a second
//! compare-and-swap (it must learn, atomically with the release, whether
//! a thread parked), so a latched lock-table acquisition and its release
//! cost four locked instructions, a large share of a short transaction's
//! time (heirloom's MEASUREMENTS.md, "The latch's release"). Here the
//! release is a store, and the question "did anybody park?" is a separate
//! word read after it.
//!
//! ## Protocol
//!
//! * `state`: FREE or HELD. Take: compare-and-swap FREE -> HELD (Acquire).
//!   Give back: store FREE (Release), then load `parked`; if it is not zero,
//!   wake one parked thread.
//! * A thread that finds the latch held spins briefly (parking_lot_core's
//!   `SpinWait`: a few rounds of exponential backoff, then a few yields, so
//!   that a preempted holder gets the processor), then parks: it increments
//!   `parked`, and then, under the parking lot's queue lock, sleeps only if
//!   `state` is still HELD. Woken (or not put to sleep), it decrements
//!   `parked` and tries again.
//! * The first sleep of a park is a nap of at most [`NAP`] (1 ms) without
//!   the barrier below; only a thread that naps that long with the latch
//!   still held pays the barrier and sleeps without a limit. A release may
//!   miss a napping thread (the race the barrier closes), which then wakes
//!   at the end of its nap. The nap keeps a convoy of parked threads from
//!   paying a barrier each, which interrupts every other core; how much
//!   that is worth, and how rarely a nap ends with the latch free, is in
//!   heirloom's MEASUREMENTS.md, "The latch's nap".
//! * No lost wake-up (Dekker): the releaser stores `state` and then loads
//!   `parked`; the parker stores `parked` and then loads `state`. A
//!   store-load barrier sits between each store and load, so at least one
//!   of them sees the other's store: either the releaser sees the parker
//!   and wakes it (the wake takes the queue lock, so it comes after the
//!   parker's check or finds it asleep), or the parker sees FREE and does
//!   not sleep. The barrier is asymmetric ([`AsymmetricFence`]): the
//!   release, which runs millions of times a second, pays a compiler fence;
//!   parking, which already costs a system call and a context switch, pays
//!   the `membarrier` call. Where that call is unavailable, in a latch
//!   built in a `const` (`RawMutex::INIT`), and under loom, both sides are
//!   `SeqCst` fences (the form the loom model in `tests/loom.rs` checks, with a
//!   parking lot of loom's mutex and condition variable so that a lost
//!   wake-up is a deadlock loom reports; loom cannot model time, so there
//!   the nap is left out and every park runs the handshake).
//! * Not fair: a releasing thread may take the latch again before a woken
//!   one runs. Latches are held for nanoseconds and the lock queues above
//!   them are fair, which is where fairness matters.

use crate::sync::{AsymmetricFence, AtomicU8, AtomicU32, Lot, Ordering};

const FREE: u8 = 0;
const HELD: u8 = 1;

/// A mutual-exclusion latch released by a store (see the module docs).
///
/// Eight bytes, no value of its own: heirloom's `Latch<T>` puts it after
/// the value it guards, so that a lock head and its latch share a line.
///
/// [`new`](Self::new) makes the release a compiler fence where the
/// process can register for `membarrier`; `lock_api`'s `const INIT`
/// cannot register, so a latch built by it pays a `SeqCst` fence on every
/// release.
pub struct RawLatch {
    state: AtomicU8,
    barrier: AsymmetricFence,
    /// The holder's note to readers without the latch ([`RawLatch::note`]).
    note: AtomicU8,
    /// Threads between their decision to park and their next attempt.
    parked: AtomicU32,
    /// Where they sleep (zero-sized but under loom, where it makes a lost
    /// wake-up a deadlock).
    lot: Lot,
}

// The note fits in the padding: a latch is still one word.
#[cfg(not(heirloom_loom))]
const _: () = assert!(std::mem::size_of::<RawLatch>() == 8);

impl std::fmt::Debug for RawLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawLatch").field("held", &self.is_locked()).finish()
    }
}

impl Default for RawLatch {
    fn default() -> Self {
        Self::new()
    }
}

crate::raw_mutex!(RawLatch, RawLatch::with(AsymmetricFence::UNREGISTERED));

impl RawLatch {
    /// A free latch, its release a compiler fence where the process could
    /// register for `membarrier` (the first call registers it).
    pub fn new() -> Self {
        Self::with(AsymmetricFence::register())
    }

    crate::const_unless_loom! {
        /// A free latch whose release and parking pair by `barrier`.
        pub fn with(barrier: AsymmetricFence) -> Self {
            RawLatch {
                state: AtomicU8::new(FREE),
                barrier,
                note: AtomicU8::new(0),
                parked: AtomicU32::new(0),
                lot: Lot::new(),
            }
        }
    }

    /// Takes the latch if it is free.
    #[inline]
    pub fn try_lock(&self) -> bool {
        // Acquire: pairs with the Release store of the last holder's
        // release, so that what it wrote under the latch is visible.
        self.state
            .compare_exchange(FREE, HELD, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether the latch is held (a racy look that writes nothing: a
    /// caller that would only try a latch it can do without skips a held
    /// one without taking its line from the holder).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) != FREE
    }

    /// A byte the latch's holder publishes to threads that look without
    /// the latch (heirloom's latched table: whether a head's queue has
    /// requests), zero in a new latch. It lies in the latch's own word, so
    /// a look at it beside [`is_locked`](Self::is_locked) costs no other
    /// cache line, and setting it under the latch writes no line the
    /// holder does not own already. Relaxed: a hint, which a reader that
    /// acts on it checks again under the latch.
    #[inline]
    pub fn note(&self) -> u8 {
        self.note.load(Ordering::Relaxed)
    }

    /// Sets [`note`](Self::note). Only the holder should: the latch does
    /// not order notes from several writers.
    #[inline]
    pub fn set_note(&self, note: u8) {
        self.note.store(note, Ordering::Relaxed);
    }

    /// Takes the latch, waiting for it if it is held.
    #[inline]
    pub fn lock(&self) {
        if !self.try_lock() {
            self.lock_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        let mut spin = Spin::new();
        loop {
            // Test before the compare-and-swap: a held latch's line stays
            // shared among the spinners instead of bouncing.
            if self.state.load(Ordering::Relaxed) == FREE {
                if self.try_lock() {
                    return;
                }
                continue;
            }
            if spin.spin() {
                continue;
            }
            self.park();
            spin.reset();
        }
    }

    /// Sleeps until a release wakes this thread, unless the latch is
    /// already free once this thread is registered in `parked`.
    fn park(&self) {
        self.parked.fetch_add(1, Ordering::Relaxed);
        if !self.nap() {
            // Store-load barrier between the store of `parked` above and
            // the load of `state` in the check below; pairs with the light
            // one in `unlock` (Dekker, see the module docs).
            self.barrier.heavy();
            self.sleep_while_held();
        }
        self.parked.fetch_sub(1, Ordering::Relaxed);
    }

    /// The first sleep of a park: without the barrier, so a release may
    /// miss it, and so at most [`NAP`] long. Whether the latch may be free
    /// now (a release woke this thread, or the check found it free); if
    /// not, the latch has been held for the whole nap and the caller
    /// sleeps again, with the barrier and no time limit.
    #[cfg(not(heirloom_loom))]
    fn nap(&self) -> bool {
        let until = std::time::Instant::now() + NAP;
        let held = || self.state.load(Ordering::Relaxed) == HELD;
        // SAFETY: the key is this latch's own word (`key`), woken only
        // through its lot; `held` only loads an atomic.
        let woke = unsafe { self.lot.wait_while(self.key(), held, Some(until)) };
        woke == crate::sync::Wake::Woken || !held()
    }

    /// Under loom: no nap (time cannot be modelled), so that every park
    /// runs the handshake the model checks.
    #[cfg(heirloom_loom)]
    fn nap(&self) -> bool {
        false
    }

    fn sleep_while_held(&self) {
        // The check runs under the parking lot's queue lock, which `wake`
        // takes too: a wake after the check finds this thread asleep.
        // SAFETY: as in `nap`.
        unsafe {
            self.lot
                .wait_while(self.key(), || self.state.load(Ordering::Relaxed) == HELD, None);
        }
    }

    /// Gives the latch back.
    ///
    /// # Safety
    /// The caller holds it (a `lock` or a successful `try_lock` not yet
    /// given back).
    #[inline]
    pub unsafe fn unlock(&self) {
        // Release: pairs with the Acquire of the next holder's
        // compare-and-swap.
        self.state.store(FREE, Ordering::Release);
        // Store-load barrier between the store above and the load below;
        // pairs with the heavy one in `park`.
        self.barrier.light();
        if self.parked.load(Ordering::Relaxed) != 0 {
            self.wake();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake(&self) {
        // SAFETY: the key is this latch's own word, on which only its
        // parkers wait, through its lot.
        unsafe { self.lot.wake_one(self.key()) }
    }

    /// The parking key: the address of the latch's word (no other
    /// parking_lot user keys on it).
    fn key(&self) -> usize {
        std::ptr::from_ref(&self.state).addr()
    }
}

/// How long a parked thread first sleeps without the `membarrier`
/// handshake: the most a release that missed it can delay it. The longest
/// of the naps tried (heirloom's MEASUREMENTS.md, "The latch's nap") also
/// makes a long hold's second sleep, and its barrier, rarest.
#[cfg(not(heirloom_loom))]
const NAP: std::time::Duration = std::time::Duration::from_millis(1);

/// Spinning before parking: parking_lot_core's `SpinWait` (a few rounds of
/// exponential backoff, then a few yields); under loom none (straight to
/// the parking lot, which is the part the model checks).
#[cfg(not(heirloom_loom))]
type Spin = parking_lot_core::SpinWait;

#[cfg(heirloom_loom)]
struct Spin;

#[cfg(heirloom_loom)]
impl Spin {
    fn new() -> Self {
        Spin
    }

    fn spin(&mut self) -> bool {
        false
    }

    fn reset(&mut self) {}
}
