//! `Latch`: the latch of the latched table's lock heads and buckets, taken
//! with one compare-and-swap and given back with one plain store.
//!
//! A latch guards a lock head for the few dozen nanoseconds of a queue
//! operation, so on the uncontended path its cost is its atomic
//! instructions. parking_lot's `Mutex` gives its latch back with a second
//! compare-and-swap (it must learn, atomically with the release, whether
//! a thread parked), so a latched lock-table acquisition and its release
//! cost four locked instructions, a large share of a short transaction's
//! time (the crate's MEASUREMENTS.md, "The latch's release"). Here the
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
//!   MEASUREMENTS.md, "The latch's nap" (`latch/tests/convoy.rs`).
//! * No lost wake-up (Dekker): the releaser stores `state` and then loads
//!   `parked`; the parker stores `parked` and then loads `state`. A
//!   store-load barrier sits between each store and load, so at least one
//!   of them sees the other's store: either the releaser sees the parker
//!   and wakes it (the wake takes the queue lock, so it comes after the
//!   parker's check or finds it asleep), or the parker sees FREE and does
//!   not sleep. The barrier is asymmetric ([`AsymmetricFence`]): the
//!   release, which runs millions of times a second, pays a compiler fence;
//!   parking, which already costs a system call and a context switch, pays
//!   the `membarrier` call. Where that call is unavailable, and under loom,
//!   both sides are `SeqCst` fences (the form the loom model in
//!   `latch/tests/loom_latch.rs` checks, with a parking lot of loom's
//!   mutex and condition variable so that a lost wake-up is a deadlock loom
//!   reports; loom cannot model time, so there the nap is left out and
//!   every park runs the handshake).
//! * Not fair: a releasing thread may take the latch again before a woken
//!   one runs. Latches are held for nanoseconds and the lock queues above
//!   them are fair, which is where fairness matters.

use std::ops::{Deref, DerefMut};

use parking_lot::{Mutex, MutexGuard};

use crate::stats::AgentCounters;

use crate::sync::{AsymmetricFence, AtomicU8, AtomicU32, Ordering, UnsafeCell};

const FREE: u8 = 0;
const HELD: u8 = 1;

/// A mutual-exclusion latch over a `T` (see the module docs). `repr(C)`,
/// the value first and the latch's word right after it, so that a value's
/// owner can lay both out in cache lines (the latched table's heads).
#[repr(C)]
pub(crate) struct Latch<T> {
    value: UnsafeCell<T>,
    state: AtomicU8,
    barrier: AsymmetricFence,
    /// Threads between their decision to park and their next attempt.
    parked: AtomicU32,
    /// Loom's model of the parking lot (see [`Latch::park`]).
    #[cfg(heirloom_loom)]
    sleepers: loom::sync::Mutex<Sleepers>,
    #[cfg(heirloom_loom)]
    wakeup: loom::sync::Condvar,
}

// SAFETY: the latch hands out access to `value` to one thread at a time
// (the guard exists only while `state` is HELD by it), as a mutex does.
unsafe impl<T: Send> Send for Latch<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Latch<T> {}

/// The latch held; gives it back when dropped.
pub(crate) struct LatchGuard<'a, T> {
    latch: &'a Latch<T>,
}

impl<T> Latch<T> {
    pub(crate) fn new(value: T) -> Self {
        Latch {
            state: AtomicU8::new(FREE),
            parked: AtomicU32::new(0),
            barrier: AsymmetricFence::new(),
            #[cfg(heirloom_loom)]
            sleepers: loom::sync::Mutex::new(Sleepers::default()),
            #[cfg(heirloom_loom)]
            wakeup: loom::sync::Condvar::new(),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the latch if it is free.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<LatchGuard<'_, T>> {
        // Acquire: pairs with the Release store of the last holder's
        // release, so that what it wrote under the latch is visible.
        self.state
            .compare_exchange(FREE, HELD, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| LatchGuard { latch: self })
    }

    /// Whether the latch looks free (a racy look that writes nothing: a
    /// caller that would only try a latch it can do without skips a held
    /// one without taking its line from the holder).
    #[inline]
    pub(crate) fn looks_free(&self) -> bool {
        self.state.load(Ordering::Relaxed) == FREE
    }

    /// Takes the latch, waiting for it if it is held.
    #[inline]
    pub(crate) fn lock(&self) -> LatchGuard<'_, T> {
        match self.try_lock() {
            Some(g) => g,
            None => self.lock_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self) -> LatchGuard<'_, T> {
        let mut spin = Spin::new();
        loop {
            // Test before the compare-and-swap: a held latch's line stays
            // shared among the spinners instead of bouncing.
            if self.state.load(Ordering::Relaxed) == FREE {
                if let Some(g) = self.try_lock() {
                    return g;
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
        matches!(
            crate::sync::wait_while(self.key(), held, Some(until)),
            crate::sync::Wake::Woken
        ) || !held()
    }

    /// Under loom: no nap (time cannot be modelled), so that every park
    /// runs the handshake the model checks.
    #[cfg(heirloom_loom)]
    fn nap(&self) -> bool {
        false
    }

    #[cfg(not(heirloom_loom))]
    fn sleep_while_held(&self) {
        // The check runs under the parking lot's queue lock, which `wake`
        // takes too: a wake after the check finds this thread asleep.
        crate::sync::wait_while(self.key(), || self.state.load(Ordering::Relaxed) == HELD, None);
    }

    /// Gives the latch back (the guard's drop).
    #[inline]
    fn unlock(&self) {
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
    #[cfg(not(heirloom_loom))]
    fn wake(&self) {
        crate::sync::wake_one(self.key());
    }

    /// The parking key: the latch's address (no other parking_lot user
    /// keys on it: request nodes and the gate are other objects).
    #[cfg(not(heirloom_loom))]
    fn key(&self) -> usize {
        &self.state as *const AtomicU8 as usize
    }
}

/// The latch as the fallback of an elided section (`heirloom_rtm`): its
/// word is FREE or HELD, and taking it writes the word, which aborts every
/// transaction that read it.
impl<T> heirloom_rtm::FallbackLock for Latch<T> {
    #[inline]
    fn free(&self, _shared: bool) -> bool {
        self.state.load(Ordering::Relaxed) == FREE
    }
    #[inline]
    fn try_lock(&self, _shared: bool) -> bool {
        self.try_lock().map(std::mem::forget).is_some()
    }
    #[inline]
    fn lock(&self, _shared: bool) {
        std::mem::forget(Latch::lock(self));
    }
    #[inline]
    unsafe fn unlock(&self, _shared: bool) {
        Latch::unlock(self);
    }
}

impl<T> Latch<T> {
    /// Runs `f` on the value as a hardware transaction that reads the
    /// latch's word, or under the latch, as `e` decides
    /// ([`heirloom_rtm::Elision::run_heat`]); `f` gets, and the caller gets
    /// back, whether the latch was contended (an abort, or found held).
    /// `f` may run more than once, but only one run has effects.
    #[inline]
    #[track_caller]
    pub(crate) fn elide<R>(&self, e: &heirloom_rtm::Elision, mut f: impl FnMut(&mut T, bool) -> R) -> (R, bool) {
        e.run_heat(self, false, |hot| {
            // SAFETY: under the latch, or inside a transaction that read
            // the latch FREE and aborts if anybody takes it: nobody else
            // writes the value meanwhile, and this run's writes are
            // discarded if it aborts.
            self.value.with_mut(|p| f(unsafe { &mut *p }, hot))
        })
    }
}

/// Loom's stand-in for parking_lot_core's queue of one key: how many
/// threads sleep, and how many wake-ups were handed out and not yet taken.
#[cfg(heirloom_loom)]
#[derive(Default)]
struct Sleepers {
    asleep: u32,
    woken: u32,
}

#[cfg(heirloom_loom)]
impl<T> Latch<T> {
    /// As parking_lot_core's `park`: the check and the enqueueing happen
    /// under the queue's lock, and the thread sleeps until a wake-up is
    /// handed to it (loom reports a deadlock if none ever is).
    fn sleep_while_held(&self) {
        let mut q = self.sleepers.lock().unwrap();
        if self.state.load(Ordering::Relaxed) != HELD {
            return;
        }
        q.asleep += 1;
        while q.woken == 0 {
            q = self.wakeup.wait(q).unwrap();
        }
        q.woken -= 1;
        q.asleep -= 1;
    }

    /// As parking_lot_core's `unpark_one`: wakes one sleeper, if any.
    fn wake(&self) {
        let mut q = self.sleepers.lock().unwrap();
        if q.asleep > q.woken {
            q.woken += 1;
            self.wakeup.notify_all();
        }
    }
}

/// How long a parked thread first sleeps without the `membarrier`
/// handshake: the most a release that missed it can delay it. The longest
/// of the naps tried (MEASUREMENTS.md, "The latch's nap") also makes a
/// long hold's second sleep, and its barrier, rarest.
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

impl<T> Deref for LatchGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the latch is held by this guard, so nobody else accesses
        // the value until the guard is dropped.
        self.latch.value.with(|p| unsafe { &*p })
    }
}

impl<T> DerefMut for LatchGuard<'_, T> {
    #[inline]
    #[track_caller]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        self.latch.value.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T> Drop for LatchGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.latch.unlock();
    }
}

/// A latch [`latch`] can take: parking_lot's `Mutex` (the global table's
/// one latch) or [`Latch`] (the latched table's heads and buckets).
pub(crate) trait TryLatch {
    type Guard<'a>
    where
        Self: 'a;
    fn try_latch(&self) -> Option<Self::Guard<'_>>;
    fn latch_waiting(&self) -> Self::Guard<'_>;
}

impl<T> TryLatch for Mutex<T> {
    type Guard<'a>
        = MutexGuard<'a, T>
    where
        T: 'a;

    #[inline]
    fn try_latch(&self) -> Option<MutexGuard<'_, T>> {
        // The sharing instrument (`sharing.rs`): parking_lot's word and
        // the value beside it are written, not through the shim's atomics.
        crate::sharing::note_range(std::ptr::from_ref(self) as usize, std::mem::size_of::<Self>());
        self.try_lock()
    }

    fn latch_waiting(&self) -> MutexGuard<'_, T> {
        crate::sharing::note_range(std::ptr::from_ref(self) as usize, std::mem::size_of::<Self>());
        self.lock()
    }
}

impl<T> TryLatch for Latch<T> {
    type Guard<'a>
        = LatchGuard<'a, T>
    where
        T: 'a;

    #[inline]
    fn try_latch(&self) -> Option<LatchGuard<'_, T>> {
        self.try_lock()
    }

    fn latch_waiting(&self) -> LatchGuard<'_, T> {
        self.lock()
    }
}

/// Takes `m`, counting the acquisition in `latch_contended` if it found the
/// latch held.
#[inline]
pub(crate) fn latch<'a, L: TryLatch>(m: &'a L, c: &AgentCounters) -> L::Guard<'a> {
    latch_heat(m, c).0
}

/// [`latch`], also saying whether the latch was found held (the heat that
/// speculative lock inheritance looks at).
#[inline]
pub(crate) fn latch_heat<'a, L: TryLatch>(m: &'a L, c: &AgentCounters) -> (L::Guard<'a>, bool) {
    match m.try_latch() {
        Some(g) => (g, false),
        None => (latch_slow(m, c), true),
    }
}

#[cold]
#[inline(never)]
fn latch_slow<'a, L: TryLatch>(m: &'a L, c: &AgentCounters) -> L::Guard<'a> {
    c.latch_contended.bump();
    m.latch_waiting()
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_latch;
}

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    mod convoy;
    mod stress;
}
