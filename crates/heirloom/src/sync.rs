//! The one place that names the synchronisation primitives.
//!
//! Under `--cfg heirloom_loom` every atomic, fence and `Arc` comes from loom,
//! and blocking turns into a yield loop that loom can explore; otherwise they
//! come from `std` and blocking parks the thread through `parking_lot_core`.
//! No other file imports `std::sync::atomic` (the crossbeam/tokio pattern).

#[cfg(heirloom_loom)]
pub(crate) use loom::sync::Arc;
#[cfg(heirloom_loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};

#[cfg(not(heirloom_loom))]
pub(crate) use std::sync::Arc;
#[cfg(all(not(heirloom_loom), not(feature = "sharing")))]
pub(crate) use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};
// The sharing instrument's build: `std`'s atomics, each write counted
// (`sharing.rs`).
#[cfg(all(not(heirloom_loom), feature = "sharing"))]
pub(crate) use crate::sharing::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(all(not(heirloom_loom), feature = "sharing"))]
pub(crate) use std::sync::atomic::fence;

use std::time::Instant;

/// An `UnsafeCell` with loom's access API (`with`, `with_mut`), so that a
/// loom model checks every access to the cell against the hand-off that
/// is supposed to order it.
#[cfg(heirloom_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std`'s `UnsafeCell` behind loom's access API.
#[cfg(not(heirloom_loom))]
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(heirloom_loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(v: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(v))
    }

    /// Runs `f` with a pointer to the value (for reading).
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer to the value (for writing; counted by the
    /// sharing instrument, `sharing.rs`).
    #[inline]
    #[track_caller]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        crate::sharing::note_range(self.0.get() as usize, std::mem::size_of::<T>());
        f(self.0.get())
    }
}

/// Notices sent to waiters, counted process-wide: [`notice`] before the
/// wake-ups that carry no state of their own. "A conversion was granted
/// or now waits ahead of you: judge the new edge" changes nothing the
/// waiter's park condition reads, so such a wake-up sent between the
/// waiter's look at its edges and its park would be lost (until a timer).
/// Grants need none: the condition reads the request's status. A waiter reads [`notices`] before it looks and
/// parks only while the count is unchanged (`Transaction::wait`): the
/// notice is then either seen by the look or stops the park, as a grant's
/// status change is. Not modelled under loom (a plain `std` atomic: the
/// models do not depend on it).
static NOTICES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a notice ([`NOTICES`]); called before the wake-ups it announces.
#[inline]
pub(crate) fn notice() {
    // Release: a waiter whose park condition reads the new count (under
    // parking_lot's queue lock, after ours in `wake_all`) also sees what we
    // did before it, and the queue lock orders the rest (see `wait_while`).
    NOTICES.fetch_add(1, std::sync::atomic::Ordering::Release);
}

/// The notices counted so far ([`NOTICES`]).
#[inline]
pub(crate) fn notices() -> u64 {
    // Acquire: pairs with `notice`'s Release.
    NOTICES.load(std::sync::atomic::Ordering::Acquire)
}

/// Outcome of [`wait_while`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Woken by [`wake_all`] / [`wake_one`], or the condition was already false.
    Woken,
    /// The deadline passed.
    TimedOut,
}

/// Blocks the calling thread on `key` while `cond()` holds, until a waker
/// calls [`wake_all`]/[`wake_one`] with the same key or `deadline` passes.
///
/// `cond` is evaluated under parking_lot's queue lock, so a waker that makes
/// `cond` false *before* calling `wake_*` can never be missed: either `cond`
/// already sees the change, or the thread is queued before the wake runs.
/// Spurious returns are possible; callers loop.
///
/// `key` must be the address of an object the caller owns for the duration
/// of the wait (a request node, the exclusive gate).
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn wait_while(key: usize, cond: impl FnOnce() -> bool, deadline: Option<Instant>) -> Wake {
    // SAFETY: `key` is the address of a heirloom-owned object (see the
    // callers), so no other parking_lot primitive uses it; `cond` only loads
    // atomics (it cannot unwind or call into parking_lot).
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

/// Spins while `cond()` holds, for at most `budget_ns` nanoseconds; `true`
/// if `cond` turned false (the caller need not park).
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn spin_while(cond: impl Fn() -> bool, budget_ns: u64) -> bool {
    let start = Instant::now();
    loop {
        // The clock is read once per 16 looks (a look is a few loads).
        for _ in 0..16 {
            if !cond() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed().as_nanos() as u64 >= budget_ns {
            return !cond();
        }
    }
}

/// Loom stand-in: one look (a spin is a park that does not sleep, and the
/// models check the park).
#[cfg(heirloom_loom)]
pub(crate) fn spin_while(cond: impl Fn() -> bool, _budget_ns: u64) -> bool {
    !cond()
}

/// Wakes every thread blocked in [`wait_while`] on `key`.
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn wake_all(key: usize) {
    // SAFETY: keys are addresses of heirloom-owned objects; a stale key (the
    // object was reused) only causes a spurious wake-up, which every waiter
    // tolerates by re-checking its condition.
    unsafe {
        parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN);
    }
}

/// Wakes one thread blocked in [`wait_while`] on `key`, if any.
#[cfg(not(heirloom_loom))]
#[inline]
pub(crate) fn wake_one(key: usize) {
    // SAFETY: as in `wake_all`.
    unsafe {
        parking_lot_core::unpark_one(key, |_| parking_lot_core::DEFAULT_UNPARK_TOKEN);
    }
}

/// Loom stand-in: yield until `cond` is false, which is what a correct
/// waker guarantees before it wakes (with a deadline: one yield, then
/// report a time-out).
#[cfg(heirloom_loom)]
pub(crate) fn wait_while(_key: usize, cond: impl Fn() -> bool, deadline: Option<Instant>) -> Wake {
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

/// Loom stand-in: waiters poll, so waking is a no-op.
#[cfg(heirloom_loom)]
pub(crate) fn wake_all(_key: usize) {}

/// Gives up the processor (under loom, a scheduling point).
#[cfg(not(heirloom_loom))]
pub(crate) fn yield_now() {
    std::thread::yield_now();
}

/// Gives up the processor (under loom, a scheduling point).
#[cfg(heirloom_loom)]
pub(crate) fn yield_now() {
    loom::thread::yield_now();
}

/// Asymmetric fences: a cheap fence for the side of a Dekker handshake that
/// runs on every transaction and an expensive one for the side that runs
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
#[derive(Clone, Copy, Debug)]
pub(crate) struct AsymmetricFence {
    /// The kernel's barrier is registered and works for this process.
    asymmetric: bool,
}

impl AsymmetricFence {
    /// Registers the process for expedited barriers once (later calls reuse
    /// the answer).
    pub(crate) fn new() -> Self {
        AsymmetricFence {
            asymmetric: membarrier::available(),
        }
    }

    /// The frequent side: between its store and its load.
    #[inline]
    pub(crate) fn light(&self) {
        if self.asymmetric {
            std::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// The rare side: between its store and its loads.
    pub(crate) fn heavy(&self) {
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
