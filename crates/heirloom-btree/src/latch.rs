//! Node latches: the four kinds a [`Protocol`](crate::Protocol) can put in
//! every node.
//!
//! A latch protects a node's memory for the nanoseconds of one step of a
//! traversal; it is not a lock (locks protect data until commit and live in
//! the `heirloom` crate).
//!
//! | latch            | shared mode             | exclusive mode           | a reader writes shared memory? |
//! |------------------|-------------------------|--------------------------|--------------------------------|
//! | [`NoLatch`]      | nothing                 | nothing                  | no (the tree-wide lock does)   |
//! | [`RwLatch`]      | parking_lot reader lock | parking_lot writer lock  | yes: one RMW to lock, one to unlock |
//! | [`SpinLatch`]    | = exclusive             | test-and-test-and-set    | yes                            |
//! | [`VersionLatch`] | = exclusive (fallback)  | CAS on the version word  | no: optimistic readers only load |

use crate::sync::{AtomicBool, AtomicU64, Ordering, SpinWait, fence};

/// A per-node latch with a shared and an exclusive mode (a latch without a
/// real shared mode takes the exclusive one for both).
pub trait NodeLatch: Default + Send + Sync + 'static {
    /// Takes the latch in shared mode, waiting while a writer holds it.
    fn lock_shared(&self);
    /// Releases a shared hold.
    ///
    /// # Safety
    /// The caller holds the latch in shared mode (from [`lock_shared`](Self::lock_shared)).
    unsafe fn unlock_shared(&self);
    /// Takes the latch in exclusive mode, waiting while anybody holds it.
    fn lock_exclusive(&self);
    /// Releases an exclusive hold.
    ///
    /// # Safety
    /// The caller holds the latch in exclusive mode (from [`lock_exclusive`](Self::lock_exclusive)).
    unsafe fn unlock_exclusive(&self);
}

/// No latch at all: for [`GlobalRw`](crate::GlobalRw), whose one tree-wide
/// reader/writer lock already excludes writers from everything.
#[derive(Debug, Default)]
pub struct NoLatch;

impl NodeLatch for NoLatch {
    #[inline]
    fn lock_shared(&self) {}
    #[inline]
    unsafe fn unlock_shared(&self) {}
    #[inline]
    fn lock_exclusive(&self) {}
    #[inline]
    unsafe fn unlock_exclusive(&self) {}
}

/// The guard token of parking_lot's raw reader/writer lock carries no
/// state, so unlocking passes a fresh one.
pub(crate) const STATELESS: parking_lot::lock_api::GuardNoSend = parking_lot::lock_api::GuardNoSend::new();

/// A reader/writer latch (parking_lot's, one word): readers exclude writers
/// but still write the latch word to get in and out.
pub struct RwLatch(parking_lot::RawRwLock);

impl Default for RwLatch {
    fn default() -> Self {
        RwLatch(<parking_lot::RawRwLock as parking_lot::lock_api::RawRwLock>::INIT)
    }
}

impl std::fmt::Debug for RwLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RwLatch")
    }
}

impl NodeLatch for RwLatch {
    #[inline]
    fn lock_shared(&self) {
        parking_lot::lock_api::RawRwLock::lock_shared(&self.0);
    }
    #[inline]
    unsafe fn unlock_shared(&self) {
        // SAFETY: the caller holds a shared hold (this method's contract).
        unsafe { parking_lot::lock_api::RawRwLock::unlock_shared(&self.0, STATELESS) }
    }
    #[inline]
    fn lock_exclusive(&self) {
        parking_lot::lock_api::RawRwLock::lock_exclusive(&self.0);
    }
    #[inline]
    unsafe fn unlock_exclusive(&self) {
        // SAFETY: the caller holds the exclusive hold (this method's contract).
        unsafe { parking_lot::lock_api::RawRwLock::unlock_exclusive(&self.0, STATELESS) }
    }
}

/// A test-and-test-and-set spin latch: exclusive for readers and writers
/// alike (the TSX paper's spin lock).
///
/// State: `false` free, `true` held. Only the holder stores `false`.
#[derive(Debug, Default)]
pub struct SpinLatch {
    held: AtomicBool,
}

impl SpinLatch {
    #[inline]
    fn lock(&self) {
        // Acquire pairs with the Release in `unlock`: the new holder sees
        // every write of the previous one.
        if self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        self.lock_slow();
    }

    #[cold]
    fn lock_slow(&self) {
        let spin = SpinWait::new();
        loop {
            // The "test" before the "test-and-set": wait with plain loads, so
            // waiters share the line instead of bouncing it between caches.
            while self.held.load(Ordering::Relaxed) {
                spin.wait();
            }
            if self
                .held
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }

    #[inline]
    fn unlock(&self) {
        // Release pairs with the Acquire of the next `lock`.
        self.held.store(false, Ordering::Release);
    }
}

impl NodeLatch for SpinLatch {
    #[inline]
    fn lock_shared(&self) {
        self.lock();
    }
    #[inline]
    unsafe fn unlock_shared(&self) {
        self.unlock();
    }
    #[inline]
    fn lock_exclusive(&self) {
        self.lock();
    }
    #[inline]
    unsafe fn unlock_exclusive(&self) {
        self.unlock();
    }
}

/// The version latch of optimistic lock coupling.
///
/// One word: bit 0 is [`LOCKED`](Self::LOCKED), the rest count completed
/// writes. States and moves:
///
/// | word      | meaning                   | who moves it                                   |
/// |-----------|---------------------------|------------------------------------------------|
/// | `2n`      | free, version `n`         | a writer: CAS `2n -> 2n+1` ([`try_upgrade`](Self::try_upgrade)) |
/// | `2n+1`    | held by one writer        | that writer: add 1 -> `2n+2` (unlock)          |
///
/// Readers never write the word: they [`read_begin`](Self::read_begin)
/// (wait until free, remember the version), read the node with relaxed
/// atomic loads, and [`validate`](Self::validate) (the version is unchanged).
/// A reader whose validation fails retries; the retry waits until the latch
/// is free again (`read_begin` never returns while it is held), which is
/// the lemming-effect fix of the TSX paper: no optimistic attempt starts
/// while a writer is inside, so one writer cannot set off a stampede of
/// doomed retries.
#[derive(Debug, Default)]
pub struct VersionLatch {
    word: AtomicU64,
}

impl VersionLatch {
    /// The bit that says a writer holds the latch.
    pub const LOCKED: u64 = 1;

    /// Waits until no writer holds the latch and returns the version, to be
    /// passed to [`validate`](Self::validate) or [`try_upgrade`](Self::try_upgrade).
    #[inline]
    pub fn read_begin(&self) -> u64 {
        // Acquire pairs with the Release of the unlock that published this
        // version: the reader sees every write made before it.
        let v = self.word.load(Ordering::Acquire);
        if v & Self::LOCKED == 0 {
            return v;
        }
        self.read_begin_slow()
    }

    #[cold]
    fn read_begin_slow(&self) -> u64 {
        let spin = SpinWait::new();
        loop {
            spin.wait();
            let v = self.word.load(Ordering::Acquire);
            if v & Self::LOCKED == 0 {
                return v;
            }
        }
    }

    /// True if no writer has held the latch since `read_begin` returned `v`:
    /// everything read in between was a consistent state of the node.
    #[inline]
    pub fn validate(&self, v: u64) -> bool {
        // The Acquire fence pairs with the Release fence a writer issues
        // right after locking (`try_upgrade`): if any of the reader's
        // relaxed data loads saw a write made after that fence, this load
        // sees the locked (or a later) word and validation fails.
        fence(Ordering::Acquire);
        self.word.load(Ordering::Relaxed) == v
    }

    /// Takes the latch exclusively if it is still at version `v` (the node is
    /// exactly as the caller read it); false if it changed or is held.
    #[inline]
    pub fn try_upgrade(&self, v: u64) -> bool {
        debug_assert_eq!(v & Self::LOCKED, 0);
        // Acquire: the new holder sees every write of the previous one
        // (pairs with the Release in `unlock`).
        if self
            .word
            .compare_exchange(v, v + Self::LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // Release fence: orders the lock above before this writer's data
        // stores; pairs with the Acquire fence in `validate`.
        fence(Ordering::Release);
        true
    }

    #[inline]
    fn unlock(&self) {
        // 2n+1 -> 2n+2: free, and a new version. Release pairs with the
        // Acquire in `read_begin`/`try_upgrade`.
        self.word.fetch_add(Self::LOCKED, Ordering::Release);
    }

    /// True while a writer holds the latch (diagnostics and tests).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & Self::LOCKED != 0
    }
}

impl NodeLatch for VersionLatch {
    /// The version latch has no shared mode: a pessimistic reader (the
    /// fallback after the retry budget) takes it exclusively.
    #[inline]
    fn lock_shared(&self) {
        self.lock_exclusive();
    }
    #[inline]
    unsafe fn unlock_shared(&self) {
        self.unlock();
    }
    #[inline]
    fn lock_exclusive(&self) {
        loop {
            let v = self.read_begin();
            if self.try_upgrade(v) {
                return;
            }
        }
    }
    #[inline]
    unsafe fn unlock_exclusive(&self) {
        self.unlock();
    }
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_latch;
}

#[cfg(all(test, not(heirloom_loom)))]
mod unit {
    use super::*;

    #[test]
    fn version_moves_on_every_write_and_validation_sees_it() {
        let l = VersionLatch::default();
        let v = l.read_begin();
        assert!(l.validate(v));
        assert!(l.try_upgrade(v));
        assert!(l.is_locked());
        assert!(!l.validate(v), "a held latch must fail validation");
        assert!(!l.try_upgrade(v), "a held latch cannot be taken again");
        // SAFETY: held exclusively by the try_upgrade above.
        unsafe { l.unlock_exclusive() };
        let w = l.read_begin();
        assert_ne!(v, w);
        assert!(!l.validate(v), "a write in between must fail validation");
        assert!(!l.try_upgrade(v));
        assert!(l.try_upgrade(w));
        // SAFETY: held exclusively by the try_upgrade above.
        unsafe { l.unlock_shared() };
    }

    #[test]
    fn spin_latch_excludes() {
        let l = SpinLatch::default();
        l.lock_exclusive();
        assert!(l.held.load(Ordering::Relaxed));
        // SAFETY: held by the lock above.
        unsafe { l.unlock_exclusive() };
        assert!(!l.held.load(Ordering::Relaxed));
    }
}
