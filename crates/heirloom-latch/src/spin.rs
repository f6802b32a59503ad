//! The two test-and-test-and-set latches: [`SpinLatch`], which parks once
//! its spinning budget is spent, and [`SpinLock`], which never parks.

use crate::sync::{AtomicBool, AtomicU8, Ordering, SpinWait, wait_while, wake_one};
use crossbeam_utils::Backoff;

/// A test-and-test-and-set latch that parks: the TSX paper's spin lock
/// with a bounded spin (the B+tree's `Spin` protocol puts one in every
/// node).
///
/// State byte: [`HELD`](Self::HELD) and [`PARKED`](Self::PARKED) (the
/// protocol of parking_lot's own mutex, without its fairness hand-off).
///
/// | state            | meaning                          | who moves it                                  |
/// |------------------|----------------------------------|-----------------------------------------------|
/// | `0`              | free                             | a locker: CAS `0 -> HELD`                     |
/// | `PARKED`         | free, waiters parked             | a locker: CAS `PARKED -> HELD\|PARKED`        |
/// | `HELD`           | held, nobody parked              | the holder: CAS `HELD -> 0`; a waiter: CAS to `HELD\|PARKED` |
/// | `HELD\|PARKED`   | held, a waiter may be parked     | the holder: wake one, then store `PARKED` (more parked) or `0` |
///
/// A waiter spins briefly ([`SpinWait`]), then sets `PARKED` and parks with
/// the condition "held and `PARKED`", checked under parking_lot's queue
/// lock. A release that finds `PARKED` wakes one waiter and stores the new
/// state inside parking_lot's callback, under that same queue lock, so a
/// waiter either sees the release or is queued before the releaser decides
/// whether anybody is still parked (no lost wake-up). Waking one, not all:
/// with many threads on one hot latch (a tree's root), waking all made
/// every release a thundering herd (heirloom-btree's README, the paragraph
/// "Waiting never spins without bound").
#[derive(Debug, Default)]
pub struct SpinLatch {
    state: AtomicU8,
}

crate::raw_mutex!(SpinLatch, SpinLatch::new());

impl SpinLatch {
    /// The latch is held.
    pub const HELD: u8 = 1;
    /// A waiter may be parked: the release must wake.
    pub const PARKED: u8 = 2;

    crate::const_unless_loom! {
        /// A free latch.
        pub fn new() -> Self {
            SpinLatch {
                state: AtomicU8::new(0),
            }
        }
    }

    /// Takes the latch, waiting while it is held.
    #[inline]
    pub fn lock(&self) {
        // Acquire pairs with the Release in `unlock`: the new holder sees
        // every write of the previous one.
        if self
            .state
            .compare_exchange_weak(0, Self::HELD, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        self.lock_slow();
    }

    /// Takes the latch if it is free (parked waiters or not).
    #[inline]
    pub fn try_lock(&self) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        // Acquire: as in `lock`.
        s & Self::HELD == 0
            && self
                .state
                .compare_exchange(s, s | Self::HELD, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    #[cold]
    fn lock_slow(&self) {
        let spin = SpinWait::new();
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & Self::HELD == 0 {
                // The "test-and-set" after the "test": waiters wait with plain
                // loads, sharing the line instead of bouncing it.
                if self
                    .state
                    .compare_exchange_weak(s, s | Self::HELD, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if !spin.spun_out() {
                spin.wait();
                continue;
            }
            if s & Self::PARKED == 0
                && self
                    .state
                    .compare_exchange_weak(s, s | Self::PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            let both = Self::HELD | Self::PARKED;
            // SAFETY: the key is this latch's address, on which only its
            // waiters park; the condition only loads an atomic.
            unsafe { wait_while(self.key(), || self.state.load(Ordering::Relaxed) == both, None) };
        }
    }

    /// Gives the latch back, waking one parked waiter if there is one.
    ///
    /// # Safety
    /// The caller holds the latch.
    #[inline]
    pub unsafe fn unlock(&self) {
        // Release pairs with the Acquire of the next `lock`.
        if self
            .state
            .compare_exchange(Self::HELD, 0, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        self.unlock_slow();
    }

    #[cold]
    fn unlock_slow(&self) {
        // The state is HELD|PARKED (only the holder clears HELD). Release:
        // pairs with the Acquire of the next `lock`.
        // SAFETY: as in `lock_slow`; the callback only stores an atomic.
        unsafe {
            wake_one(self.key(), |more| {
                let s = if more { Self::PARKED } else { 0 };
                self.state.store(s, Ordering::Release);
            });
        }
    }

    /// Whether the latch is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & Self::HELD != 0
    }

    /// The state byte (tests: free with no parked bit left is `0`).
    #[inline]
    pub fn state(&self) -> u8 {
        self.state.load(Ordering::Relaxed)
    }

    #[inline]
    fn key(&self) -> usize {
        std::ptr::from_ref(self).addr()
    }
}

/// A test-and-test-and-set spin lock (the TSX paper's "spin lock"): one
/// CAS to take, one store to give back. Waiting spins, then yields
/// (crossbeam's `Backoff`); it never parks, since a holder holds it for
/// one index operation and an elided section's fallback must stay cheap
/// to read inside a transaction (its word is one flag).
#[derive(Debug, Default)]
pub struct SpinLock {
    held: AtomicBool,
}

crate::raw_mutex!(SpinLock, SpinLock::new());

impl SpinLock {
    crate::const_unless_loom! {
        /// A free lock.
        pub fn new() -> Self {
            SpinLock {
                held: AtomicBool::new(false),
            }
        }
    }

    /// Takes the lock if it is free.
    #[inline]
    pub fn try_lock(&self) -> bool {
        // Acquire: as in `lock`.
        !self.held.load(Ordering::Relaxed)
            && self
                .held
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// Takes the lock, spinning and yielding while it is held.
    #[inline]
    pub fn lock(&self) {
        let backoff = Backoff::new();
        loop {
            // Acquire: the previous holder's writes happen before ours.
            if !self.held.load(Ordering::Relaxed)
                && self
                    .held
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            #[cfg(heirloom_loom)]
            loom::thread::yield_now();
            backoff.snooze();
        }
    }

    /// Gives the lock back.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn unlock(&self) {
        // Release: pairs with the next holder's Acquire.
        self.held.store(false, Ordering::Release);
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }
}
