//! The one place in heirloom that names the synchronisation primitives.
//!
//! They come from the workspace's one loom shim, `heirloom_latch::sync`
//! (`std` and `parking_lot_core` normally, loom under
//! `--cfg heirloom_loom`). This file adds what is heirloom's own: the
//! sharing instrument's counted atomics (feature `sharing`), a cell with
//! loom's access API whose writes that instrument counts, the notice
//! count, a bounded spin, and parking calls that are safe inside this
//! crate, whose keys are the addresses of objects it owns. No other file
//! imports `std::sync::atomic` (the crossbeam/tokio pattern).

pub(crate) use heirloom_latch::sync::{Arc, AsymmetricFence, Lot, Wake, fence, yield_now};
#[cfg(any(heirloom_loom, not(feature = "sharing")))]
pub(crate) use heirloom_latch::sync::{AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
// The sharing instrument's build: `std`'s atomics, each write counted
// (`sharing.rs`).
#[cfg(all(not(heirloom_loom), feature = "sharing"))]
pub(crate) use crate::sharing::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// The word of a statistics counter (`stats.rs`): the crate's `AtomicU64`,
/// but `std`'s under loom. A loom model may switch threads at every access
/// of a loom atomic, and a counter's bump (a relaxed load and store by its
/// one writer) orders nothing: exploring it multiplied the models' paths
/// for nothing. A counter whose raise orders something keeps the crate's
/// atomic (`stats.rs`).
#[cfg(not(heirloom_loom))]
pub(crate) type StatWord = AtomicU64;
#[cfg(heirloom_loom)]
pub(crate) type StatWord = std::sync::atomic::AtomicU64;

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

/// Blocks the calling thread on `key` while `cond()` holds, until a waker
/// calls [`wake_all`] with the same key or `deadline` passes
/// (`heirloom_latch::sync::wait_while`: the condition runs under
/// parking_lot's queue lock, so a waker that makes it false before it
/// wakes is never missed; spurious returns are possible, callers loop).
///
/// `key` must be the address of an object the caller owns for the duration
/// of the wait (a request node, the exclusive gate, a server slot), and
/// `cond` only loads atomics.
#[inline]
pub(crate) fn wait_while(key: usize, cond: impl Fn() -> bool, deadline: Option<Instant>) -> Wake {
    // SAFETY: `key` is the address of a heirloom-owned object (see the
    // callers), on which no other parking_lot primitive parks (the latched
    // table's latches key on their own word, inside heirloom-latch);
    // `cond` only loads atomics: it neither panics nor calls into
    // parking_lot.
    unsafe { heirloom_latch::sync::wait_while(key, cond, deadline) }
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

/// Wakes every thread blocked in [`wait_while`] on `key`, and every task
/// waiting on it ([`tasks`]).
#[inline]
pub(crate) fn wake_all(key: usize) {
    // SAFETY: keys are addresses of heirloom-owned objects; a stale key
    // (the object was reused) only causes a spurious wake-up, which every
    // waiter tolerates by re-checking its condition.
    unsafe { heirloom_latch::sync::wake_all(key) }
    tasks::wake(key);
}

/// Tasks that wait without a thread (`Transaction::lock_async`): the
/// [`Waker`](std::task::Waker)s of futures whose request waits, by the
/// same keys threads park on, so that every [`wake_all`] of a request
/// (its grant, a wound, a notice) wakes its task as it would wake its
/// thread.
///
/// parking_lot_core queues threads, not wakers, and no crate keeps wakers
/// by an address with a wake-up that cannot be lost against a condition
/// the waker's caller changed first, which is what a waiter needs here:
/// so this is heirloom's own, a few lines on `parking_lot`'s mutex.
///
/// The wake-up is never lost. A task registers its waker (under its
/// shard's mutex) and then reads its request's state (`Pending` only if it
/// still waits); a waker changes that state and then calls [`wake_all`],
/// which takes the same mutex. If the waker's lock comes second it finds
/// the task's waker; if first, the task's lock comes after its unlock, so
/// the task reads the new state. A process where no task has ever waited
/// skips the mutex: `IN_USE` (below) is set once, before the first waker is
/// registered, with a `SeqCst` fence after it, and [`wake_all`] reads it
/// after a `SeqCst` fence of its own (Dekker: either the waker reads it
/// set and takes the mutex, or the task reads the new state). That fence
/// is the whole cost in a process without tasks, and only on wake-ups,
/// which come only to requests that really waited. (Plain `std` atomics
/// and `parking_lot`'s mutex under loom too: the models use no tasks.)
pub(crate) mod tasks {
    use std::sync::atomic::{AtomicBool, Ordering, fence};
    use std::task::Waker;

    use crossbeam_utils::CachePadded;
    use parking_lot::Mutex;

    /// Shards of the registry, by key (a power of two).
    const SHARDS: usize = 64;

    /// A task has registered a waker at least once in this process.
    static IN_USE: AtomicBool = AtomicBool::new(false);

    /// (key, waker) of the tasks waiting now on one shard's keys.
    type Shard = Mutex<Vec<(usize, Waker)>>;

    /// The shards, each on lines of its own.
    static WAITING: [CachePadded<Shard>; SHARDS] = [const { CachePadded::new(Mutex::new(Vec::new())) }; SHARDS];

    fn shard(key: usize) -> &'static Shard {
        // Keys are node addresses, 64-byte aligned or more: mix the bits
        // above the line.
        let h = (key >> 6).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
        &WAITING[h & (SHARDS - 1)]
    }

    /// Registers `waker` for `key`, replacing the task's earlier one; the
    /// caller reads its wait condition after this returns.
    pub(crate) fn register(key: usize, waker: &Waker) {
        if !IN_USE.load(Ordering::Relaxed) {
            IN_USE.store(true, Ordering::Relaxed);
            // Pairs with the fence in `wake` (see the module docs).
            fence(Ordering::SeqCst);
        }
        let mut w = shard(key).lock();
        match w.iter_mut().find(|(k, _)| *k == key) {
            Some((_, old)) => old.clone_from(waker),
            None => w.push((key, waker.clone())),
        }
    }

    /// Takes the waker of `key` out, if one is registered (a wait that
    /// ended, or a future dropped).
    pub(crate) fn forget(key: usize) {
        if !IN_USE.load(Ordering::Relaxed) {
            return;
        }
        let mut w = shard(key).lock();
        if let Some(i) = w.iter().position(|(k, _)| *k == key) {
            w.swap_remove(i);
        }
    }

    /// Wakes (and forgets) the tasks waiting on `key`.
    #[inline]
    pub(crate) fn wake(key: usize) {
        // Pairs with the fence in `register` (see the module docs).
        fence(Ordering::SeqCst);
        if IN_USE.load(Ordering::Relaxed) {
            wake_slow(key);
        }
    }

    #[cold]
    fn wake_slow(key: usize) {
        let mut w = shard(key).lock();
        let mut i = 0;
        let mut woken: smallvec::SmallVec<[Waker; 2]> = smallvec::SmallVec::new();
        while i < w.len() {
            if w[i].0 == key {
                woken.push(w.swap_remove(i).1);
            } else {
                i += 1;
            }
        }
        drop(w);
        for t in woken {
            t.wake();
        }
    }
}
