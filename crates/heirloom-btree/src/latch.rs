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

use crate::sync::{AtomicU64, Ordering, SpinWait, fence, wait_while, wake_all};

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

/// The B+tree's `Spin` protocol puts heirloom-latch's test-and-test-and-set
/// latch in every node: exclusive for readers and writers alike, spinning
/// briefly, then parking.
pub use heirloom_latch::SpinLatch;

impl NodeLatch for SpinLatch {
    #[inline]
    fn lock_shared(&self) {
        self.lock();
    }
    #[inline]
    unsafe fn unlock_shared(&self) {
        // SAFETY: the caller holds the latch (this method's contract; the
        // shared mode is the exclusive one).
        unsafe { self.unlock() }
    }
    #[inline]
    fn lock_exclusive(&self) {
        self.lock();
    }
    #[inline]
    unsafe fn unlock_exclusive(&self) {
        // SAFETY: the caller holds the latch (this method's contract).
        unsafe { self.unlock() }
    }
}

/// The version latch of optimistic lock coupling.
///
/// One word: bit 0 is [`LOCKED`](Self::LOCKED), bit 1 [`PARKED`](Self::PARKED),
/// the rest count completed writes (a write adds [`STEP`](Self::STEP)).
/// States and moves:
///
/// | word        | meaning                              | who moves it                                   |
/// |-------------|--------------------------------------|------------------------------------------------|
/// | `4n`        | free, version `n`                    | a writer: CAS `4n -> 4n+1` ([`try_upgrade`](Self::try_upgrade)) |
/// | `4n+1`      | held, nobody parked                  | a waiter: CAS to `4n+3`; the holder: unlock    |
/// | `4n+3`      | held, a waiter may be parked         | the holder: unlock, then wake all parked       |
///
/// Unlocking after a write moves to `4(n+1)`: a new version. Unlocking a
/// pessimistic *read* hold ([`unlock_shared`](NodeLatch::unlock_shared))
/// moves back to `4n`: the node did not change, so optimistic readers that
/// read it at version `n` before the hold validate after it; only a
/// validation that falls inside the hold fails.
///
/// Readers never write the word on the optimistic path: they
/// [`read_begin`](Self::read_begin) (wait until free, remember the version),
/// read the node with relaxed atomic loads, and [`validate`](Self::validate)
/// (the version is unchanged). A reader whose validation fails retries; the
/// retry waits until the latch is free again (`read_begin` never returns
/// while it is held), which is the lemming-effect fix of the TSX paper: no
/// optimistic attempt starts while a writer is inside, so one writer cannot
/// set off a stampede of doomed retries. Waiting spins briefly and then
/// parks, as [`SpinLatch`] does (`PARKED` only ever set with `LOCKED`).
///
/// The pessimistic fallback takes the latch exclusively for reads too: a
/// shared mode would need a reader count in the word, and then every
/// optimistic writer's upgrade would have to wait out readers and every
/// validation mask the count, to speed up a path taken only after
/// [`OPTIMISTIC_ATTEMPTS`](crate::OPTIMISTIC_ATTEMPTS) failures. What
/// matters for the optimistic readers in flight is that a read hold does
/// not bump the version, and it does not.
#[derive(Debug, Default)]
pub struct VersionLatch {
    word: AtomicU64,
}

impl VersionLatch {
    /// The bit that says a writer holds the latch.
    pub const LOCKED: u64 = 1;
    /// The bit that says a waiter may be parked (set only with `LOCKED`).
    pub const PARKED: u64 = 2;
    /// What one write adds to the word.
    pub const STEP: u64 = 4;

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
            let v = self.word.load(Ordering::Acquire);
            if v & Self::LOCKED == 0 {
                return v;
            }
            if !spin.spun_out() {
                spin.wait();
                continue;
            }
            let parked = v | Self::PARKED;
            if v & Self::PARKED == 0
                && self
                    .word
                    .compare_exchange_weak(v, parked, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            // Parks while this very hold lasts (a new hold has a new word, or
            // sets PARKED afresh and will wake us).
            // SAFETY: the key is this latch's address, on which only its
            // own waiters park (nodes are freed only with their tree); the
            // condition only loads an atomic.
            unsafe { wait_while(self.key(), || self.word.load(Ordering::Relaxed) == parked, None) };
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
        debug_assert_eq!(v & (Self::LOCKED | Self::PARKED), 0);
        // Acquire: the new holder sees every write of the previous one
        // (pairs with the Release in `unlock`).
        if self
            .word
            .compare_exchange(v, v | Self::LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // Release fence: orders the lock above before this writer's data
        // stores; pairs with the Acquire fence in `validate`.
        fence(Ordering::Release);
        true
    }

    /// Releases a hold, leaving version `next` (a word with both low bits
    /// clear), and wakes parked waiters if there are any.
    #[inline]
    fn unlock_to(&self, next: u64) {
        // Release pairs with the Acquire in `read_begin`/`try_upgrade`. Only
        // the holder clears LOCKED and a waiter only adds PARKED, so the old
        // word is `held` or `held|PARKED`: one swap clears both bits.
        let old = self.word.swap(next, Ordering::Release);
        debug_assert_eq!(old & Self::LOCKED, Self::LOCKED, "unlock of a free version latch");
        if old & Self::PARKED != 0 {
            // SAFETY: as in `read_begin_slow`.
            unsafe { wake_all(self.key()) };
        }
    }

    /// The version the held word started from.
    #[inline]
    fn held_version(&self) -> u64 {
        // Only the holder changes the version bits: a relaxed load is exact.
        self.word.load(Ordering::Relaxed) & !(Self::LOCKED | Self::PARKED)
    }

    #[inline]
    fn key(&self) -> usize {
        std::ptr::from_ref(self).addr()
    }

    /// True while a writer holds the latch (diagnostics and tests).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & Self::LOCKED != 0
    }
}

impl NodeLatch for VersionLatch {
    /// The version latch has no shared mode: a pessimistic reader (the
    /// fallback after the retry budget) takes it exclusively, but leaves
    /// the version as it found it (see the type's docs).
    #[inline]
    fn lock_shared(&self) {
        self.lock_exclusive();
    }
    #[inline]
    unsafe fn unlock_shared(&self) {
        self.unlock_to(self.held_version());
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
        self.unlock_to(self.held_version().wrapping_add(Self::STEP));
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

    /// Many threads on one latch, holders sometimes sleeping inside so that
    /// waiters run out of spinning and park: no update is lost, every parked
    /// waiter is woken (the test ends), and the latch ends free.
    fn parked_waiters_model<L: NodeLatch + Sync>(l: &L, ends_free: impl Fn(&L)) {
        use std::sync::atomic::AtomicU64 as StdU64;
        let counter = StdU64::new(0);
        let threads = 8;
        let per = 200;
        std::thread::scope(|s| {
            for t in 0..threads {
                let (l, counter) = (l, &counter);
                s.spawn(move || {
                    for i in 0..per {
                        if (t + i) % 3 == 0 {
                            l.lock_shared();
                        } else {
                            l.lock_exclusive();
                        }
                        let c = counter.load(std::sync::atomic::Ordering::Relaxed);
                        if i % 50 == 0 {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                        }
                        counter.store(c + 1, std::sync::atomic::Ordering::Relaxed);
                        // SAFETY: held in the mode taken just above.
                        unsafe {
                            if (t + i) % 3 == 0 {
                                l.unlock_shared();
                            } else {
                                l.unlock_exclusive();
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(
            counter.into_inner(),
            (threads * per) as u64,
            "lost update under the latch"
        );
        ends_free(l);
    }

    #[test]
    fn spin_latch_parks_and_wakes() {
        parked_waiters_model(&SpinLatch::default(), |l| {
            // Free, and no parked bit left: the last release saw nobody parked.
            assert_eq!(l.state(), 0, "latch not free at the end");
        });
    }

    #[test]
    fn version_latch_parks_and_wakes() {
        parked_waiters_model(&VersionLatch::default(), |l| {
            // Write holds step the version; read holds (a third) do not.
            let writes = (0..8u64)
                .map(|t| (0..200u64).filter(|i| (t + i) % 3 != 0).count() as u64)
                .sum::<u64>();
            assert_eq!(l.word.load(Ordering::Relaxed), writes * VersionLatch::STEP);
        });
    }

    #[test]
    fn spin_latch_excludes() {
        let l = SpinLatch::default();
        l.lock_exclusive();
        assert_eq!(l.state(), SpinLatch::HELD);
        // SAFETY: held by the lock above.
        unsafe { l.unlock_exclusive() };
        assert_eq!(l.state(), 0);
    }
}
