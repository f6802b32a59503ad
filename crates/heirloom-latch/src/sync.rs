//! The workspace's one loom shim: the one place that names the
//! synchronisation primitives.
//!
//! Under `--cfg heirloom_loom` every atomic, fence and `Arc` comes from
//! loom, and blocking turns into a yield loop that loom can explore;
//! otherwise they come from `std`, and blocking parks the thread through
//! `parking_lot_core`. No file of the workspace's library crates imports
//! `std::sync::atomic` for shared state but this one (the crossbeam/tokio
//! pattern); `heirloom` adds its sharing instrument on top (its
//! `sync.rs`).

#[cfg(heirloom_loom)]
pub use loom::sync::Arc;
#[cfg(heirloom_loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

#[cfg(not(heirloom_loom))]
pub use std::sync::Arc;
#[cfg(not(heirloom_loom))]
pub use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

use std::time::Instant;

/// Outcome of [`wait_while`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Woken by [`wake_all`] / [`wake_one`], or the condition was already false.
    Woken,
    /// The deadline passed.
    TimedOut,
}

/// Blocks the calling thread on `key` while `cond()` holds, until a waker
/// calls [`wake_all`]/[`wake_one`] with the same key or `deadline` passes.
///
/// `cond` is evaluated under parking_lot's queue lock, so a waker that
/// makes `cond` false *before* calling `wake_*` can never be missed: either
/// `cond` already sees the change, or the thread is queued before the wake
/// runs. Spurious returns are possible; callers loop.
///
/// Under loom: yields until `cond` is false, which is what a correct waker
/// guarantees before it wakes (with a deadline: one yield, then a
/// time-out).
///
/// # Safety
/// `key` is the address of an object the caller controls for the whole
/// wait, on which no other parking_lot primitive parks (parking_lot_core's
/// rule: a foreign key could take another primitive's wake-up); `cond`
/// neither panics nor calls into parking_lot (it runs under the queue
/// lock).
#[cfg(not(heirloom_loom))]
#[inline]
pub unsafe fn wait_while(key: usize, cond: impl FnOnce() -> bool, deadline: Option<Instant>) -> Wake {
    // SAFETY: the caller's contract is parking_lot_core's.
    let r = unsafe {
        parking_lot_core::park(
            key,
            cond,
            || {},
            |_, _| {},
            parking_lot_core::DEFAULT_PARK_TOKEN,
            deadline,
        )
    };
    match r {
        parking_lot_core::ParkResult::TimedOut => Wake::TimedOut,
        _ => Wake::Woken,
    }
}

/// Loom stand-in of [`wait_while`] (see there).
///
/// # Safety
/// None under loom; the signature matches the real one.
#[cfg(heirloom_loom)]
pub unsafe fn wait_while(_key: usize, cond: impl Fn() -> bool, deadline: Option<Instant>) -> Wake {
    if deadline.is_some() {
        if !cond() {
            return Wake::Woken;
        }
        loom::thread::yield_now();
        return Wake::TimedOut;
    }
    while cond() {
        loom::thread::yield_now();
    }
    Wake::Woken
}

/// Wakes every thread blocked in [`wait_while`] on `key`.
///
/// # Safety
/// `key` is one the caller controls, as in [`wait_while`]; a stale key
/// (its object was reused) only causes spurious wake-ups, which every
/// waiter tolerates by checking its condition again.
#[cfg(not(heirloom_loom))]
#[inline]
pub unsafe fn wake_all(key: usize) {
    // SAFETY: the caller's contract is parking_lot_core's.
    unsafe {
        parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN);
    }
}

/// Loom stand-in: waiters poll, so waking is a no-op.
///
/// # Safety
/// None under loom.
#[cfg(heirloom_loom)]
pub unsafe fn wake_all(_key: usize) {}

/// Wakes one thread blocked in [`wait_while`] on `key`, if any; `then(more)`
/// runs under parking_lot's queue lock before that thread runs, with `more`
/// true if other threads are still blocked on `key`.
///
/// Under loom: nobody is dequeued (waiters poll), and `more` is true, the
/// conservative answer.
///
/// # Safety
/// As [`wake_all`]; `then` neither panics nor calls into parking_lot.
#[cfg(not(heirloom_loom))]
#[inline]
pub unsafe fn wake_one(key: usize, then: impl FnOnce(bool)) {
    // SAFETY: the caller's contract is parking_lot_core's.
    unsafe {
        parking_lot_core::unpark_one(key, |r| {
            then(r.have_more_threads);
            parking_lot_core::DEFAULT_UNPARK_TOKEN
        });
    }
}

/// Loom stand-in of [`wake_one`] (see there).
///
/// # Safety
/// None under loom.
#[cfg(heirloom_loom)]
pub unsafe fn wake_one(_key: usize, then: impl FnOnce(bool)) {
    then(true);
}

/// The parking lot of one object's waiters, for a protocol whose lost
/// wake-up the loom models must catch.
///
/// Normally zero-sized: [`wait_while`] and [`wake_one`]/[`wake_all`] on
/// parking_lot_core's global table, keyed by an address of the object.
/// Under loom: a mutex and a condition variable with the same guarantee
/// (the condition is checked under the lock the waker takes), and wake-ups
/// handed out by count, so that a thread left asleep with nobody to wake
/// it is a deadlock loom reports (the plain shim's [`wait_while`] polls
/// under loom instead, which hides a lost wake-up). A deadline is not
/// modelled: under loom a wait with one looks once, yields, and reports a
/// time-out, as the plain shim does.
///
/// Used by heirloom-latch's [`RawLatch`](crate::RawLatch) and heirloom's
/// server slots.
#[derive(Debug)]
pub struct Lot {
    #[cfg(heirloom_loom)]
    sleepers: loom::sync::Mutex<Sleepers>,
    #[cfg(heirloom_loom)]
    wakeup: loom::sync::Condvar,
}

/// Under loom: how many threads sleep in a [`Lot`], and how many wake-ups
/// were handed out and not yet taken.
#[cfg(heirloom_loom)]
#[derive(Debug, Default)]
struct Sleepers {
    asleep: u32,
    woken: u32,
}

impl Default for Lot {
    fn default() -> Self {
        Self::new()
    }
}

impl Lot {
    /// A lot with nobody asleep.
    #[cfg(not(heirloom_loom))]
    pub const fn new() -> Self {
        Lot {}
    }

    /// A lot with nobody asleep.
    #[cfg(heirloom_loom)]
    pub fn new() -> Self {
        Lot {
            sleepers: loom::sync::Mutex::new(Sleepers::default()),
            wakeup: loom::sync::Condvar::new(),
        }
    }

    /// [`wait_while`] in this lot: sleeps on `key` while `cond()` holds,
    /// until this lot's [`wake_one`](Self::wake_one) or
    /// [`wake_all`](Self::wake_all) with the same key, or `deadline`.
    ///
    /// # Safety
    /// As [`wait_while`]; every waker of `key` wakes through this lot.
    #[inline]
    pub unsafe fn wait_while(&self, key: usize, cond: impl Fn() -> bool, deadline: Option<Instant>) -> Wake {
        #[cfg(not(heirloom_loom))]
        {
            // SAFETY: the caller's contract.
            unsafe { wait_while(key, cond, deadline) }
        }
        #[cfg(heirloom_loom)]
        {
            if deadline.is_some() {
                // SAFETY: nothing to uphold under loom.
                return unsafe { wait_while(key, cond, deadline) };
            }
            // As parking_lot_core's `park`: the check and the enqueueing
            // happen under the queue's lock, and the thread sleeps until a
            // wake-up is handed to it.
            let mut q = self.sleepers.lock().unwrap();
            if !cond() {
                return Wake::Woken;
            }
            q.asleep += 1;
            while q.woken == 0 {
                q = self.wakeup.wait(q).unwrap();
            }
            q.woken -= 1;
            q.asleep -= 1;
            Wake::Woken
        }
    }

    /// Wakes one thread asleep in this lot on `key`, if any.
    ///
    /// # Safety
    /// As [`wake_one`].
    #[inline]
    pub unsafe fn wake_one(&self, key: usize) {
        #[cfg(not(heirloom_loom))]
        // SAFETY: the caller's contract.
        unsafe {
            wake_one(key, |_| {})
        }
        #[cfg(heirloom_loom)]
        {
            let _ = key;
            let mut q = self.sleepers.lock().unwrap();
            if q.asleep > q.woken {
                q.woken += 1;
                self.wakeup.notify_all();
            }
        }
    }

    /// Wakes every thread asleep in this lot on `key`.
    ///
    /// # Safety
    /// As [`wake_all`].
    #[inline]
    pub unsafe fn wake_all(&self, key: usize) {
        #[cfg(not(heirloom_loom))]
        // SAFETY: the caller's contract.
        unsafe {
            wake_all(key)
        }
        #[cfg(heirloom_loom)]
        {
            let _ = key;
            let mut q = self.sleepers.lock().unwrap();
            q.woken = q.asleep;
            self.wakeup.notify_all();
        }
    }
}

/// Gives up the processor (under loom, a scheduling point).
#[inline]
pub fn yield_now() {
    #[cfg(not(heirloom_loom))]
    std::thread::yield_now();
    #[cfg(heirloom_loom)]
    loom::thread::yield_now();
}

/// Yields after the `pause` rounds, before a waiter parks.
#[cfg(not(heirloom_loom))]
const YIELDS: u32 = 64;

/// Bounded spinning before a latch waiter parks ([`SpinLatch`] and the
/// B+tree's version latch).
///
/// Spins with `pause` (crossbeam's `Backoff`, a few doubling rounds), then
/// yields the CPU up to 64 times; once [`spun_out`](Self::spun_out) says
/// the budget is spent the caller parks. A node latch is held for
/// nanoseconds, so a waiter that yields usually finds it free next time and
/// never pays for a futex wake-up; a holder preempted for a whole time
/// slice outlasts the budget, and then its waiters sleep instead of taking
/// its CPU (what parking sooner cost: heirloom-btree's README, the
/// paragraph "Waiting never spins without bound").
///
/// [`SpinLatch`]: crate::SpinLatch
#[derive(Debug)]
pub struct SpinWait {
    #[cfg(not(heirloom_loom))]
    backoff: crossbeam_utils::Backoff,
    #[cfg(not(heirloom_loom))]
    yields: std::cell::Cell<u32>,
}

impl Default for SpinWait {
    fn default() -> Self {
        Self::new()
    }
}

impl SpinWait {
    /// A fresh budget.
    #[inline]
    pub fn new() -> Self {
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
    pub fn spun_out(&self) -> bool {
        #[cfg(not(heirloom_loom))]
        return self.yields.get() >= YIELDS;
        #[cfg(heirloom_loom)]
        return true;
    }

    /// Waits a little before the caller looks at the latch again.
    #[inline]
    pub fn wait(&self) {
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

/// Asymmetric fences: a cheap fence for the side of a Dekker handshake that
/// runs on every operation and an expensive one for the side that runs
/// rarely, together as strong as a `SeqCst` fence on both sides.
///
/// On Linux the heavy side is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`:
/// the kernel makes every running thread of the process execute a full
/// memory barrier (a thread that is not running passed one when it was
/// switched out), so a light side that only keeps the compiler from
/// reordering its store and load is enough (the scheme of liburcu's and
/// folly's asymmetric fences). Where the call is missing or refused (older
/// kernels, seccomp), and under loom, which cannot model it, both sides
/// are `SeqCst` fences, the form the loom models check.
///
/// Each fence keeps the answer it was built with, so that its two sides
/// agree: [`register`](Self::register) registers the process (once) and
/// builds an asymmetric fence where that worked;
/// [`UNREGISTERED`](Self::UNREGISTERED), for `const` contexts, is `SeqCst`
/// on both sides. The light side reads the fence's own byte, which sits
/// beside the state it guards: a process-wide flag in a `static` of this
/// crate costs a load through the GOT on every light side of a
/// position-independent binary (heirloom's MEASUREMENTS.md, "One latch
/// family").
#[derive(Clone, Copy, Debug)]
pub struct AsymmetricFence {
    /// The kernel's barrier is registered and works for this process.
    asymmetric: bool,
}

impl AsymmetricFence {
    /// `SeqCst` fences on both sides, for a `const` (`RawMutex::INIT`).
    pub const UNREGISTERED: Self = AsymmetricFence { asymmetric: false };

    /// Registers the process for expedited barriers once (later calls
    /// reuse the answer) and returns a fence that uses them if that worked.
    pub fn register() -> Self {
        AsymmetricFence {
            asymmetric: membarrier::available(),
        }
    }

    /// The frequent side: between its store and its load.
    #[inline]
    pub fn light(&self) {
        if self.asymmetric {
            std::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// The rare side: between its store and its loads.
    pub fn heavy(&self) {
        if self.asymmetric {
            membarrier::private_expedited();
        } else {
            fence(Ordering::SeqCst);
        }
    }
}

#[cfg(all(target_os = "linux", not(heirloom_loom)))]
mod membarrier {
    use std::sync::OnceLock;

    // linux/membarrier.h
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn call(cmd: libc::c_long) -> bool {
        // SAFETY: membarrier(cmd, flags = 0, cpu_id = 0) reads and writes no
        // memory of ours; an unknown command only fails with an error code.
        unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0 as libc::c_long, 0 as libc::c_long) == 0 }
    }

    /// Registered, and one expedited barrier went through (so later ones
    /// will: the call fails only for unregistered processes or unknown
    /// commands).
    pub(super) fn available() -> bool {
        static AVAILABLE: OnceLock<bool> = OnceLock::new();
        *AVAILABLE.get_or_init(|| call(CMD_REGISTER_PRIVATE_EXPEDITED) && call(CMD_PRIVATE_EXPEDITED))
    }

    pub(super) fn private_expedited() {
        let ok = call(CMD_PRIVATE_EXPEDITED);
        // Cannot fail once `available` said yes (see there); were it to, a
        // full fence here would not make the light side safe, so stop.
        assert!(
            ok,
            "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration"
        );
    }
}

#[cfg(not(all(target_os = "linux", not(heirloom_loom))))]
mod membarrier {
    pub(super) fn available() -> bool {
        false
    }

    pub(super) fn private_expedited() {
        unreachable!("asymmetric fences are used only where membarrier is available")
    }
}
