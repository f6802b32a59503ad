//! `Latch<T>`: a value and the latch that guards it, the latched table's
//! heads and buckets. The latch is heirloom-latch's [`RawLatch`], taken
//! with one compare-and-swap and given back with one plain store; its
//! protocol (the store release, the parked count, the asymmetric
//! handshake, the nap) and its loom model live there, with the other
//! latches of the workspace. This file adds the value beside it, the
//! guard, the elided section ([`Latch::elide`]) and the helpers that count
//! a contended latch ([`latch`], [`latch_heat`]).

use std::ops::{Deref, DerefMut};

use heirloom_latch::RawLatch;
use parking_lot::{Mutex, MutexGuard};

use crate::stats::AgentCounters;

use crate::sync::UnsafeCell;

/// A mutual-exclusion latch over a `T`. `repr(C)`, the value first and the
/// latch's words right after it, so that a value's owner can lay both out
/// in cache lines (the latched table's heads).
#[repr(C)]
pub(crate) struct Latch<T> {
    value: UnsafeCell<T>,
    raw: RawLatch,
}

// SAFETY: the latch hands out access to `value` to one thread at a time
// (the guard exists only while `raw` is held by it), as a mutex does.
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
            value: UnsafeCell::new(value),
            raw: RawLatch::new(),
        }
    }

    /// The sharing instrument (`sharing.rs`): the latch's words are
    /// written by heirloom-latch's atomics, not through the shim's.
    #[inline]
    #[track_caller]
    fn note_write(&self) {
        crate::sharing::note_range(std::ptr::from_ref(&self.raw).addr(), std::mem::size_of::<RawLatch>());
    }

    /// Takes the latch if it is free.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<LatchGuard<'_, T>> {
        self.note_write();
        // Lazily: a guard built for a refused attempt would give back the
        // holder's latch when dropped.
        self.raw.try_lock().then(|| LatchGuard { latch: self })
    }

    /// Whether the latch looks free (a racy look that writes nothing: a
    /// caller that would only try a latch it can do without skips a held
    /// one without taking its line from the holder).
    #[inline]
    pub(crate) fn looks_free(&self) -> bool {
        !self.raw.is_locked()
    }

    /// The holder's note to threads that look without the latch
    /// ([`RawLatch::note`]).
    #[inline]
    pub(crate) fn note(&self) -> u8 {
        self.raw.note()
    }

    /// Sets the note; called only by the latch's holder, or inside a
    /// section elided over it and then only when the note changes (a
    /// store to the latch's word aborts the other sections elided over
    /// it).
    #[inline]
    #[track_caller]
    pub(crate) fn set_note(&self, note: u8) {
        self.note_write();
        self.raw.set_note(note);
    }

    /// Takes the latch, waiting for it if it is held.
    #[inline]
    pub(crate) fn lock(&self) -> LatchGuard<'_, T> {
        self.note_write();
        self.raw.lock();
        LatchGuard { latch: self }
    }

    /// Gives the latch back (the guard's drop).
    #[inline]
    fn unlock(&self) {
        self.note_write();
        // SAFETY: called by the guard's drop, which exists only while this
        // thread holds the latch.
        unsafe { self.raw.unlock() }
    }

    /// Runs `f` on the value as a hardware transaction that reads the
    /// latch's word, or under the latch, as `e` decides
    /// ([`heirloom_rtm::Elision::run_heat`]); `f` gets, and the caller gets
    /// back, whether the latch was contended (a conflict abort, or found
    /// held). `f` may run more than once, but only one run has effects.
    #[inline]
    #[track_caller]
    pub(crate) fn elide<R>(&self, e: &heirloom_rtm::Elision, mut f: impl FnMut(&mut T, bool) -> R) -> (R, bool) {
        // Without a hardware transaction the section takes the latch.
        #[cfg(feature = "sharing")]
        if !heirloom_rtm::enabled() {
            self.note_write();
        }
        e.run_heat(&self.raw, false, |hot| {
            // SAFETY: under the latch, or inside a transaction that read
            // the latch FREE and aborts if anybody takes it: nobody else
            // writes the value meanwhile, and this run's writes are
            // discarded if it aborts.
            self.value.with_mut(|p| f(unsafe { &mut *p }, hot))
        })
    }
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

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    mod convoy;
    mod stress;
}
