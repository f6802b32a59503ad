//! heirloom-rtm: hardware lock elision with Intel RTM (Restricted
//! Transactional Memory), as the TSX lock-elision paper applies it to an
//! in-memory index (`shared/papers/tsx-lock-elision-in-memory-index-hpca14`).
//!
//! ```
//! use heirloom_rtm::{Elision, Retry, SpinLock};
//!
//! let lock = SpinLock::new();
//! let elision = Elision::new(Retry::default());
//! let mut n = 0;
//! // Runs as a hardware transaction that only reads the lock word, or, on a
//! // CPU without RTM or after too many aborts, under the lock.
//! elision.run(&lock, false, || n += 1);
//! assert_eq!(n, 1);
//! let s = elision.stats();
//! assert_eq!(s.commits + s.fallbacks, 1);
//! ```
//!
//! ## The instructions
//!
//! [`insn`] wraps `xbegin`, `xend`, `xabort` and `xtest` in `asm!`.
//! `xbegin` either starts a transaction and leaves `eax` as it was (all
//! ones here) or, when the transaction aborts anywhere later, resumes right
//! after itself with every register but `eax` and every byte of memory as
//! they were when it first ran, and the abort status in `eax`. To the
//! compiler the `asm!` block is one instruction that returns a status, and
//! that stays true: an aborted transaction leaves no trace but the status.
//! A transaction must not reach anything whose effects cannot be rolled
//! back; a system call, a page fault or an interrupt aborts it, so the
//! fallback path redoes that work under the lock.
//!
//! ## Detection
//!
//! [`supported`] asks the CPU once (`rtm` in CPUID, through std's cached
//! feature detection). [`set_enabled`] switches elision off (and on again)
//! at run time for the whole process, so the fallback path can be forced
//! and tested on a CPU that has RTM. On a CPU without it (AMD's, and Intel's
//! with TSX disabled by microcode) every elided section takes its lock, the
//! counters say so ([`ElisionStats::rtm`] is false, every run a fallback),
//! and no RTM instruction is ever executed (it would fault).
//!
//! ## Retries
//!
//! An elided section reads the lock word inside its transaction: a holder
//! of the lock (a fallback) then aborts it, and any later acquisition of
//! the lock while it runs aborts it too. After an abort, [`Retry`] decides:
//!
//! - [`Retry::Naive`]: retry at once, up to a limit, then take the lock.
//!   While one thread holds the lock every retry aborts at once on the lock
//!   word, so the others spend their limit in microseconds and take the
//!   lock one after another: the lemming effect, a convoy of fallbacks that
//!   lasts while anyone holds the lock.
//! - [`Retry::Fixed`] (the paper's fix): do not retry until the lock is
//!   free (test, then start the transaction: test-and-test-and-set), with
//!   separate limits for conflict aborts and capacity aborts (the paper:
//!   "limited retries are effective, even on capacity aborts").
//!
//! ## Counters
//!
//! [`Elision::stats`] returns commits, aborts by [`Cause`] and fallbacks;
//! the counters are striped per thread ([`Striped`]), since a shared
//! counter written after every commit would be exactly the shared write
//! elision removes.

#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

mod striped;

pub use striped::{STRIPES, Striped};

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The paper's spin lock, from the workspace's latch family.
pub use heirloom_latch::SpinLock;

/// Whether this CPU executes RTM instructions (`rtm` in CPUID), whatever
/// [`set_enabled`] says.
#[inline]
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("rtm")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Switches elision on or off for the whole process (on by default). Off,
/// every elided section takes its lock, as on a CPU without RTM; sections
/// running when it changes finish as they began.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether elided sections try hardware transactions: RTM is
/// [`supported`] and not switched off by [`set_enabled`].
#[inline]
pub fn enabled() -> bool {
    // Under loom no transaction runs: the model checks the fallback path.
    !cfg!(heirloom_loom) && ENABLED.load(Ordering::Relaxed) && supported()
}

/// One line for reports: whether the CPU has RTM and whether it is used.
pub fn describe() -> &'static str {
    match (supported(), enabled()) {
        (true, true) => "RTM: yes, elision on",
        (true, false) => "RTM: yes, elision switched off",
        (false, _) => "RTM: not on this CPU, every elided section takes its lock",
    }
}

/// The raw instructions. Every function here requires a CPU that has RTM
/// ([`supported`]); executing one elsewhere raises an invalid-opcode fault.
pub mod insn {
    /// The status `xbegin` leaves when the transaction started.
    pub const STARTED: u32 = !0;

    /// `xbegin`: [`STARTED`], or (after an abort, which resumes here) the
    /// abort status.
    ///
    /// # Safety
    /// The CPU has RTM ([`supported`](crate::supported)). Until `xend`,
    /// the code must be fit for a transaction: nothing it does may need
    /// to survive an abort except through the status.
    #[inline(always)]
    pub unsafe fn xbegin() -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut status: u32 = STARTED;
            // SAFETY: the caller guarantees RTM. On abort the CPU restores
            // every register but eax and all memory, and resumes at label 2
            // (the next instruction), so the block returns once per attempt
            // with the status in eax.
            unsafe {
                core::arch::asm!("xbegin 2f", "2:", inout("eax") status, options(nostack));
            }
            status
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            0
        }
    }

    /// `xend`: commits the transaction.
    ///
    /// # Safety
    /// Inside a transaction (`xend` outside one faults).
    #[inline(always)]
    pub unsafe fn xend() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller guarantees a transaction is running.
        unsafe {
            core::arch::asm!("xend", options(nostack));
        }
    }

    /// `xabort 0xff`: the lock word was found held ([`BUSY`](crate::BUSY)).
    /// Inside a transaction it does not return; outside one it does nothing.
    ///
    /// # Safety
    /// The CPU has RTM.
    #[inline(always)]
    pub unsafe fn xabort_busy() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller guarantees RTM.
        unsafe {
            core::arch::asm!("xabort 0xff", options(nostack));
        }
    }

    /// `xabort 0xfe`: an abort injected for tests
    /// ([`INJECTED`](crate::INJECTED)).
    ///
    /// # Safety
    /// The CPU has RTM.
    #[inline(always)]
    pub unsafe fn xabort_injected() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller guarantees RTM.
        unsafe {
            core::arch::asm!("xabort 0xfe", options(nostack));
        }
    }

    /// `xtest`: whether a transaction is running.
    ///
    /// # Safety
    /// The CPU has RTM.
    #[inline(always)]
    pub unsafe fn xtest() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let r: u8;
            // SAFETY: the caller guarantees RTM; xtest only sets ZF.
            unsafe {
                core::arch::asm!("xtest", "setnz {}", out(reg_byte) r, options(nostack, nomem));
            }
            r != 0
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

/// The explicit abort code of a section that found its lock held.
pub const BUSY: u8 = 0xff;
/// The explicit abort code of an injected abort ([`Elision::inject_aborts`]).
pub const INJECTED: u8 = 0xfe;

/// Whether the caller runs inside a hardware transaction (false on a CPU
/// without RTM).
#[inline]
pub fn in_transaction() -> bool {
    // SAFETY: only on a CPU with RTM.
    supported() && unsafe { insn::xtest() }
}

/// An abort status, as `xbegin` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abort(pub u32);

/// Why a transaction aborted (the first that applies, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// `xabort` with this code ([`BUSY`]: the lock word was held).
    Explicit(u8),
    /// The transaction's footprint outgrew the cache.
    Capacity,
    /// Another thread touched a line the transaction read or wrote.
    Conflict,
    /// A debug breakpoint.
    Debug,
    /// An abort inside a nested transaction.
    Nested,
    /// Anything else (an interrupt, a system call, a page fault, an
    /// instruction a transaction may not run): status without a cause bit.
    Other,
}

impl Abort {
    /// The cause.
    pub fn cause(self) -> Cause {
        let s = self.0;
        if s & 1 != 0 {
            Cause::Explicit((s >> 24) as u8)
        } else if s & 8 != 0 {
            Cause::Capacity
        } else if s & 4 != 0 {
            Cause::Conflict
        } else if s & 16 != 0 {
            Cause::Debug
        } else if s & 32 != 0 {
            Cause::Nested
        } else {
            Cause::Other
        }
    }

    /// The CPU's hint that a retry may succeed.
    pub fn may_retry(self) -> bool {
        self.0 & 2 != 0
    }
}

/// What an elided section does after an abort (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Retry at once, up to `attempts` transactions in all, then take the
    /// lock: shows the lemming effect.
    Naive {
        /// Transactions before the fallback (at least one).
        attempts: u32,
    },
    /// Wait until the lock is free before each retry; fall back after
    /// `conflict` aborts of other causes or `capacity` capacity aborts.
    Fixed {
        /// Aborts other than capacity aborts before the fallback.
        conflict: u32,
        /// Capacity aborts before the fallback.
        capacity: u32,
    },
}

impl Default for Retry {
    /// `Fixed { conflict: 8, capacity: 2 }`.
    fn default() -> Self {
        Retry::Fixed {
            conflict: 8,
            capacity: 2,
        }
    }
}

impl Retry {
    /// Parses `naive[:N]` or `fixed[:C[:K]]` (conflict and capacity limits).
    pub fn parse(s: &str) -> Result<Retry, String> {
        let mut parts = s.split(':');
        let num = |p: Option<&str>, d: u32| -> Result<u32, String> {
            match p {
                None => Ok(d),
                Some(x) => x
                    .parse::<u32>()
                    .map_err(|_| format!("retry policy {s:?}: {x:?} is not a count")),
            }
        };
        let r = match parts.next() {
            Some("naive") => Retry::Naive {
                attempts: num(parts.next(), 8)?.max(1),
            },
            Some("fixed") => Retry::Fixed {
                conflict: num(parts.next(), 8)?,
                capacity: num(parts.next(), 2)?,
            },
            _ => return Err(format!("retry policy {s:?}: expected naive[:N] or fixed[:C[:K]]")),
        };
        if parts.next().is_some() {
            return Err(format!("retry policy {s:?}: too many fields"));
        }
        Ok(r)
    }

    /// Short name for reports (`naive`, `fixed`).
    pub fn name(self) -> &'static str {
        match self {
            Retry::Naive { .. } => "naive",
            Retry::Fixed { .. } => "fixed",
        }
    }
}

/// A lock an elided section falls back to. Its state must be readable by
/// [`free`](Self::free) with plain loads (read inside transactions), and
/// every acquisition must write that state (so it aborts the transactions
/// that read it).
pub trait FallbackLock {
    /// Whether a section in `shared` mode (or exclusive) could run now:
    /// nobody holds the lock in a mode that conflicts.
    fn free(&self, shared: bool) -> bool;
    /// Takes the lock if that needs no wait; whether it did.
    fn try_lock(&self, shared: bool) -> bool;
    /// Takes the lock.
    fn lock(&self, shared: bool);
    /// Releases the lock.
    ///
    /// # Safety
    /// The caller holds it in that mode.
    unsafe fn unlock(&self, shared: bool);
}

/// The mutex-shaped latches of heirloom-latch: exclusive for both modes;
/// their word is free or held, and taking it writes it.
macro_rules! exclusive_fallback {
    ($($t:ty),*) => {$(
        impl FallbackLock for $t {
            #[inline]
            fn free(&self, _shared: bool) -> bool {
                !<$t>::is_locked(self)
            }
            #[inline]
            fn try_lock(&self, _shared: bool) -> bool {
                <$t>::try_lock(self)
            }
            #[inline]
            fn lock(&self, _shared: bool) {
                <$t>::lock(self)
            }
            #[inline]
            unsafe fn unlock(&self, _shared: bool) {
                // SAFETY: the caller holds the latch (this method's contract).
                unsafe { <$t>::unlock(self) }
            }
        }
    )*};
}
exclusive_fallback!(SpinLock, heirloom_latch::RawLatch, heirloom_latch::SpinLatch);

/// parking_lot's raw reader/writer lock: elided readers run beside a
/// shared holder (they write nothing it reads), elided writers only when
/// nobody holds it.
impl FallbackLock for parking_lot::RawRwLock {
    #[inline]
    fn free(&self, shared: bool) -> bool {
        use parking_lot::lock_api::RawRwLock as _;
        if shared {
            !self.is_locked_exclusive()
        } else {
            !self.is_locked()
        }
    }
    #[inline]
    fn try_lock(&self, shared: bool) -> bool {
        use parking_lot::lock_api::RawRwLock as _;
        if shared {
            self.try_lock_shared().is_some()
        } else {
            self.try_lock_exclusive().is_some()
        }
    }
    #[inline]
    fn lock(&self, shared: bool) {
        use parking_lot::lock_api::RawRwLock as _;
        // parking_lot's guard state is a marker (`GuardNoSend`), rebuilt
        // at unlock.
        if shared {
            let _ = self.lock_shared();
        } else {
            let _ = self.lock_exclusive();
        }
    }
    #[inline]
    unsafe fn unlock(&self, shared: bool) {
        use parking_lot::lock_api::{GuardNoSend, RawRwLock as _};
        // SAFETY: the caller holds the lock in this mode; the guard state
        // is a marker with nothing in it.
        unsafe {
            if shared {
                self.unlock_shared(GuardNoSend::new())
            } else {
                self.unlock_exclusive(GuardNoSend::new())
            }
        }
    }
}

/// parking_lot's raw mutex, exclusive for both modes.
impl FallbackLock for parking_lot::RawMutex {
    #[inline]
    fn free(&self, _shared: bool) -> bool {
        use parking_lot::lock_api::RawMutex as _;
        !self.is_locked()
    }
    #[inline]
    fn try_lock(&self, _shared: bool) -> bool {
        parking_lot::lock_api::RawMutex::try_lock(self).is_some()
    }
    #[inline]
    fn lock(&self, _shared: bool) {
        // The guard state is a marker, rebuilt at unlock.
        let _ = parking_lot::lock_api::RawMutex::lock(self);
    }
    #[inline]
    unsafe fn unlock(&self, _shared: bool) {
        use parking_lot::lock_api::GuardNoSend;
        // SAFETY: the caller holds the lock; the guard state is a marker.
        unsafe { parking_lot::lock_api::RawMutex::unlock(self, GuardNoSend::new()) }
    }
}

/// Counters of elided sections, summed over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElisionStats {
    /// Whether the CPU has RTM and elision was on when read.
    pub rtm: bool,
    /// Sections that committed as transactions.
    pub commits: u64,
    /// Aborts because the lock word was held ([`BUSY`]).
    pub busy: u64,
    /// Aborts injected by [`Elision::inject_aborts`].
    pub injected: u64,
    /// Other explicit aborts (codes other than [`BUSY`] and [`INJECTED`]).
    pub explicit: u64,
    /// Data-conflict aborts.
    pub conflict: u64,
    /// Capacity aborts.
    pub capacity: u64,
    /// Aborts of any other cause (interrupts, system calls, faults, debug,
    /// nesting).
    pub other: u64,
    /// Sections that ran under the lock (every section where RTM is
    /// missing or switched off).
    pub fallbacks: u64,
}

impl ElisionStats {
    /// Aborts of every cause.
    pub fn aborts(&self) -> u64 {
        self.busy + self.injected + self.explicit + self.conflict + self.capacity + self.other
    }

    /// Sections run (committed or under the lock).
    pub fn sections(&self) -> u64 {
        self.commits + self.fallbacks
    }

    /// The counts since `earlier` (a read of the same elision's counters);
    /// `rtm` as now.
    pub fn since(&self, earlier: &ElisionStats) -> ElisionStats {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        ElisionStats {
            rtm: self.rtm,
            commits: d(self.commits, earlier.commits),
            busy: d(self.busy, earlier.busy),
            injected: d(self.injected, earlier.injected),
            explicit: d(self.explicit, earlier.explicit),
            conflict: d(self.conflict, earlier.conflict),
            capacity: d(self.capacity, earlier.capacity),
            other: d(self.other, earlier.other),
            fallbacks: d(self.fallbacks, earlier.fallbacks),
        }
    }

    /// The share of sections that ran under the lock (0 when none ran).
    pub fn fallback_share(&self) -> f64 {
        if self.sections() == 0 {
            0.0
        } else {
            self.fallbacks as f64 / self.sections() as f64
        }
    }
}

const C_COMMITS: usize = 0;
const C_BUSY: usize = 1;
const C_INJECTED: usize = 2;
const C_EXPLICIT: usize = 3;
const C_CONFLICT: usize = 4;
const C_CAPACITY: usize = 5;
const C_OTHER: usize = 6;
const C_FALLBACKS: usize = 7;

/// How one lock is elided: the retry policy and the counters.
pub struct Elision {
    retry: Retry,
    counters: [Striped; 8],
    /// Transactions still to abort on purpose (tests).
    inject: AtomicU32,
}

impl std::fmt::Debug for Elision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elision")
            .field("retry", &self.retry)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for Elision {
    fn default() -> Self {
        Elision::new(Retry::default())
    }
}

impl Elision {
    /// Elision with the retry policy `retry`.
    pub fn new(retry: Retry) -> Self {
        Elision {
            retry,
            counters: std::array::from_fn(|_| Striped::new()),
            inject: AtomicU32::new(0),
        }
    }

    /// The retry policy.
    pub fn retry(&self) -> Retry {
        self.retry
    }

    /// The counters so far.
    pub fn stats(&self) -> ElisionStats {
        let c = |i: usize| self.counters[i].sum();
        ElisionStats {
            rtm: enabled(),
            commits: c(C_COMMITS),
            busy: c(C_BUSY),
            injected: c(C_INJECTED),
            explicit: c(C_EXPLICIT),
            conflict: c(C_CONFLICT),
            capacity: c(C_CAPACITY),
            other: c(C_OTHER),
            fallbacks: c(C_FALLBACKS),
        }
    }

    /// Aborts the next `n` transactions started through this elision on
    /// purpose (cause `Explicit(INJECTED)`), so tests reach the retry and
    /// fallback paths on a CPU with RTM. No effect where RTM is not used.
    pub fn inject_aborts(&self, n: u32) {
        self.inject.store(n, Ordering::Relaxed);
    }

    /// Runs `f` as a hardware transaction that reads `lock`'s word, retried
    /// as the policy says, or under `lock` (in mode `shared` or exclusive).
    /// `f` may run several times, but only one run has effects: the others
    /// aborted and left none. It must not do what a transaction cannot
    /// roll back (a system call would abort every attempt, and then it runs
    /// under the lock).
    #[inline]
    pub fn run<L: FallbackLock, R>(&self, lock: &L, shared: bool, mut f: impl FnMut() -> R) -> R {
        self.run_heat(lock, shared, |_| f()).0
    }

    /// [`run`](Self::run), also saying whether the lock was contended: `f`
    /// gets (and the caller gets back) true once an attempt aborted on
    /// another thread (a data conflict, or the lock word held), or when the
    /// fallback found the lock held (the heat a lock table reports as latch
    /// contention). Aborts no other thread caused (capacity, an interrupt,
    /// a page fault, an injected abort) are not contention.
    #[inline]
    pub fn run_heat<L: FallbackLock, R>(&self, lock: &L, shared: bool, mut f: impl FnMut(bool) -> R) -> (R, bool) {
        let mut hot = false;
        if enabled() {
            let mut conflicts = 0u32;
            let mut capacities = 0u32;
            loop {
                if let Retry::Fixed { .. } = self.retry {
                    // Test before the transaction: do not retry into a held
                    // lock (the lemming effect's fix).
                    let backoff = crossbeam_utils::Backoff::new();
                    while !lock.free(shared) {
                        backoff.snooze();
                    }
                }
                let inject = self.inject.load(Ordering::Relaxed) > 0
                    && self
                        .inject
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                        .is_ok();
                // SAFETY: `enabled()` implies the CPU has RTM. Until `xend`
                // only `lock.free` (loads) and `f` run; `f`'s effects are
                // discarded on abort, and the status is all that remains.
                let status = unsafe { insn::xbegin() };
                if status == insn::STARTED {
                    // SAFETY: inside the transaction just started.
                    unsafe {
                        if inject {
                            insn::xabort_injected();
                        }
                        if !lock.free(shared) {
                            insn::xabort_busy();
                        }
                        if insn::xtest() {
                            let r = f(hot);
                            insn::xend();
                            self.counters[C_COMMITS].add(1);
                            return (r, hot);
                        }
                    }
                    // Not reached: `xabort` inside a transaction resumes at
                    // `xbegin` with the status. Retrying is safe regardless.
                    continue;
                }
                let abort = Abort(status);
                hot |= matches!(abort.cause(), Cause::Conflict | Cause::Explicit(BUSY));
                let is_capacity = match abort.cause() {
                    Cause::Explicit(BUSY) => {
                        self.counters[C_BUSY].add(1);
                        false
                    }
                    Cause::Explicit(INJECTED) => {
                        self.counters[C_INJECTED].add(1);
                        false
                    }
                    Cause::Explicit(_) => {
                        self.counters[C_EXPLICIT].add(1);
                        false
                    }
                    Cause::Capacity => {
                        self.counters[C_CAPACITY].add(1);
                        true
                    }
                    Cause::Conflict => {
                        self.counters[C_CONFLICT].add(1);
                        false
                    }
                    Cause::Debug | Cause::Nested | Cause::Other => {
                        self.counters[C_OTHER].add(1);
                        false
                    }
                };
                let give_up = match self.retry {
                    // `attempts` transactions in all.
                    Retry::Naive { attempts } => {
                        conflicts += 1;
                        conflicts >= attempts.max(1)
                    }
                    // Up to `capacity` retries after capacity aborts and
                    // `conflict` after the others.
                    Retry::Fixed { conflict, capacity } if is_capacity => {
                        capacities += 1;
                        capacities > capacity || conflicts > conflict
                    }
                    Retry::Fixed { conflict, .. } => {
                        conflicts += 1;
                        conflicts > conflict
                    }
                };
                if give_up {
                    break;
                }
            }
        }
        self.counters[C_FALLBACKS].add(1);
        if !lock.try_lock(shared) {
            hot = true;
            lock.lock(shared);
        }
        // Gives the lock back when `f` returns or unwinds.
        struct Unlock<'a, L: FallbackLock>(&'a L, bool);
        impl<L: FallbackLock> Drop for Unlock<'_, L> {
            fn drop(&mut self) {
                // SAFETY: taken above, in this mode.
                unsafe { self.0.unlock(self.1) };
            }
        }
        let _held = Unlock(lock, shared);
        (f(hot), hot)
    }
}

#[cfg(all(test, heirloom_loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// Two threads run a section each through one elision (no transaction
    /// under loom: the fallback path): the spin lock excludes them (loom's
    /// cell reports any overlap) and both increments land.
    #[test]
    fn loom_sections_under_the_spin_lock_exclude_each_other() {
        loom::model(|| {
            let lock = Arc::new(SpinLock::new());
            let e = Arc::new(Elision::default());
            let cell = Arc::new(UnsafeCell::new(0u32));
            let t = {
                let (lock, e, cell) = (lock.clone(), e.clone(), cell.clone());
                loom::thread::spawn(move || {
                    // SAFETY: inside the section: exclusive (checked by loom).
                    e.run(&*lock, false, || cell.with_mut(|p| unsafe { *p += 1 }));
                })
            };
            // SAFETY: as above.
            e.run(&*lock, false, || cell.with_mut(|p| unsafe { *p += 1 }));
            t.join().unwrap();
            // SAFETY: both sections are over.
            assert_eq!(cell.with(|p| unsafe { *p }), 2);
            assert_eq!(e.stats().fallbacks, 2);
        });
    }
}

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    use super::*;

    #[test]
    fn abort_statuses_decode_to_their_causes() {
        assert_eq!(Abort(1 | (0xff << 24)).cause(), Cause::Explicit(BUSY));
        assert_eq!(Abort(1 | 2 | (0x12 << 24)).cause(), Cause::Explicit(0x12));
        assert_eq!(Abort(8).cause(), Cause::Capacity);
        assert_eq!(Abort(4 | 2).cause(), Cause::Conflict);
        assert!(Abort(4 | 2).may_retry() && !Abort(8).may_retry());
        assert_eq!(Abort(16).cause(), Cause::Debug);
        assert_eq!(Abort(32).cause(), Cause::Nested);
        assert_eq!(Abort(0).cause(), Cause::Other);
    }

    #[test]
    fn retry_policies_parse_and_reject_bad_input() {
        assert_eq!(Retry::parse("naive"), Ok(Retry::Naive { attempts: 8 }));
        assert_eq!(Retry::parse("naive:3"), Ok(Retry::Naive { attempts: 3 }));
        assert_eq!(Retry::parse("naive:0"), Ok(Retry::Naive { attempts: 1 }));
        assert_eq!(Retry::parse("fixed"), Ok(Retry::default()));
        assert_eq!(
            Retry::parse("fixed:5:1"),
            Ok(Retry::Fixed {
                conflict: 5,
                capacity: 1
            })
        );
        for bad in ["", "eager", "naive:x", "fixed:1:2:3", "naive:-1"] {
            assert!(Retry::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn locks_report_free_and_held() {
        let s = SpinLock::new();
        assert!(s.free(true) && s.free(false));
        FallbackLock::lock(&s, false);
        assert!(!s.free(true) && !s.free(false));
        // SAFETY: taken just above.
        unsafe { FallbackLock::unlock(&s, false) };
        assert!(s.free(false));

        use parking_lot::lock_api::RawRwLock as _;
        let rw = parking_lot::RawRwLock::INIT;
        FallbackLock::lock(&rw, true);
        assert!(rw.free(true), "a shared holder leaves elided readers free to run");
        assert!(!rw.free(false), "but not elided writers");
        // SAFETY: taken just above.
        unsafe { FallbackLock::unlock(&rw, true) };
        FallbackLock::lock(&rw, false);
        assert!(!rw.free(true) && !rw.free(false));
        // SAFETY: taken just above.
        unsafe { FallbackLock::unlock(&rw, false) };
    }
}
