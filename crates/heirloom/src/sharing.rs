//! The sharing instrument: per thread, how many cache lines the lock
//! manager writes that another thread wrote last, and where.
//!
//! On two cores a line that two threads write costs little, and a run with
//! sixteen threads there hides it; on sixteen cores every such write is a
//! transfer of the line between caches, and a few per transaction are what
//! stops scaling. This module makes them visible on any machine: built
//! with the cargo feature `sharing`, the crate's atomics (the `sync`
//! shim's types) are wrappers that, on every store and read-modify-write
//! (a failed compare-and-swap too: it takes the line as a write does),
//! look up the 64-byte line's last writer in a process-wide table, count
//! the write as *shared* if that was another thread, and record this
//! thread as the line's last writer. Plain writes are counted where the
//! crate makes them on memory other threads reach: through the `sync`
//! shim's `UnsafeCell::with_mut`, through a latch guard (every line of the
//! guarded value, an upper bound), and at the links of the latch-free
//! lists (crossbeam-epoch's `Atomic`). The parking-lot locks of the slow
//! paths (the registry, a waiter's `wait` mutex) are counted where they are
//! taken. crossbeam-epoch's own bookkeeping and the allocator are not
//! atomics of this crate, so their calls are counted instead (pins,
//! deferred functions, flushes, allocations).
//!
//! Every count is attributed to the source line that made the write
//! (`#[track_caller]`), so a run can say where its shared lines are:
//! bucket heads, lock heads, another agent's request node, a counter.
//!
//! Without the feature everything here compiles to nothing: the shim
//! re-exports `std`'s atomics and `note` and `op` are empty, so the
//! hot paths are the same instructions as before ([`ENABLED`] tells which
//! build this is). The counts are a lower bound of what sixteen cores
//! would see (two threads that never overlapped on two cores may on
//! sixteen), and a slight overcount of plain writes under a latch; they
//! are the same for the same schedule, and what they measure, lines
//! written after another thread wrote them, is what moves between
//! caches. A slot of the last-writer table that two lines share
//! forgets the older one (a write then counts as not shared).
//!
//! ## Recent and stale
//!
//! A line that another thread wrote long ago has most likely left that
//! thread's cache since; on sixteen cores writing it costs a miss to the
//! shared cache or memory, as a line nobody else wrote would, not a
//! transfer from another core. So every shared write is also judged by
//! how much the last writer wrote since: *recent* if fewer than
//! [`RECENT_LINES`] of its counted writes (1 MiB of lines, a private L2's
//! size) came after its write of this line. The last writer's reads, and
//! everything the engine around the lock manager touches, are not seen,
//! so it keeps lines in its cache for less long than this assumes: the
//! recent count is an upper bound of the transfers, the stale rest a lower
//! bound of the shared writes that are mere misses. What grows a lock
//! table's recent writes is threads that touch the same lines at about
//! the same time (a small table, a hot lock); a table large enough that
//! threads meet its lines only after long intervals has shared writes that
//! are nearly all stale.

#[cfg(feature = "sharing")]
use std::panic::Location;

/// Whether this build counts (the cargo feature `sharing`).
pub const ENABLED: bool = cfg!(feature = "sharing");

/// A shared write is *recent* when the line's last writer made fewer than
/// this many counted writes after it (see the module docs, "Recent and
/// stale"): 16,384 lines, 1 MiB.
pub const RECENT_LINES: u32 = 1 << 14;

/// One thread's counts (see the module docs); [`thread_counts`] reads
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lines written (stores, read-modify-writes, plain writes counted).
    pub writes: u64,
    /// Of `writes`, those to a line another thread wrote last.
    pub shared_writes: u64,
    /// Of `shared_writes`, those whose last writer wrote fewer than
    /// [`RECENT_LINES`] lines since.
    pub recent_shared_writes: u64,
    /// crossbeam-epoch pins (each writes the thread's own epoch record;
    /// one in 128 also tries to advance the global epoch).
    pub pins: u64,
    /// Functions deferred to the epoch collector (one in 64 pushes a bag
    /// onto the global queue).
    pub defers: u64,
    /// Flushes of the thread's deferred functions to the global queue.
    pub flushes: u64,
    /// Allocations made by the lock manager (request nodes, lock heads).
    pub allocs: u64,
}

impl Counts {
    /// The counts since `base` (an earlier reading of the same thread).
    pub fn since(&self, base: &Counts) -> Counts {
        Counts {
            writes: self.writes - base.writes,
            shared_writes: self.shared_writes - base.shared_writes,
            recent_shared_writes: self.recent_shared_writes - base.recent_shared_writes,
            pins: self.pins - base.pins,
            defers: self.defers - base.defers,
            flushes: self.flushes - base.flushes,
            allocs: self.allocs - base.allocs,
        }
    }
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.writes += o.writes;
        self.shared_writes += o.shared_writes;
        self.recent_shared_writes += o.recent_shared_writes;
        self.pins += o.pins;
        self.defers += o.defers;
        self.flushes += o.flushes;
        self.allocs += o.allocs;
    }
}

/// The writes one source line made (see [`take_sites`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// The source file, as the compiler names it.
    pub file: &'static str,
    /// The line.
    pub line: u32,
    /// Lines it wrote.
    pub writes: u64,
    /// Of those, lines another thread wrote last.
    pub shared_writes: u64,
    /// Of those, lines whose last writer wrote fewer than
    /// [`RECENT_LINES`] lines since.
    pub recent_shared_writes: u64,
}

/// What the lock manager did that is not a write of its own atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "sharing"), allow(dead_code))]
pub(crate) enum Op {
    Pin,
    Defer,
    Flush,
    Alloc,
}

/// This thread's counts so far (all zero without the feature).
pub fn thread_counts() -> Counts {
    #[cfg(feature = "sharing")]
    {
        imp::THREAD.with(|t| t.counts.get())
    }
    #[cfg(not(feature = "sharing"))]
    Counts::default()
}

/// This thread's writes by source line since the last call, most shared
/// first, and forgets them (empty without the feature).
pub fn take_sites() -> Vec<Site> {
    #[cfg(feature = "sharing")]
    {
        imp::take_sites()
    }
    #[cfg(not(feature = "sharing"))]
    Vec::new()
}

/// Forgets every line's last writer (nothing without the feature): a
/// measurement that starts after it counts as shared only the lines that
/// its own threads wrote since, not memory that earlier threads wrote
/// last (an earlier run's workers, whose freed memory the allocator hands
/// out again, or the thread that built the table). Call it while no other
/// thread writes the lock manager's lines (a write racing it may be
/// counted either way).
pub fn forget_writers() {
    #[cfg(feature = "sharing")]
    imp::forget();
}

/// Counts a write of the line at `addr` by this thread, made at the
/// caller's source line.
#[inline(always)]
#[track_caller]
pub(crate) fn note(addr: usize) {
    #[cfg(feature = "sharing")]
    imp::note(addr, Location::caller());
    #[cfg(not(feature = "sharing"))]
    let _ = addr;
}

/// Counts a write of every line of `len` bytes from `addr`.
#[inline(always)]
#[track_caller]
pub(crate) fn note_range(addr: usize, len: usize) {
    #[cfg(feature = "sharing")]
    {
        let at = Location::caller();
        let mut line = addr & !(imp::LINE - 1);
        while line < addr + len.max(1) {
            imp::note(line, at);
            line += imp::LINE;
        }
    }
    #[cfg(not(feature = "sharing"))]
    let _ = (addr, len);
}

/// Counts one of the operations of [`Op`].
#[inline(always)]
pub(crate) fn op(o: Op) {
    #[cfg(feature = "sharing")]
    imp::op(o);
    #[cfg(not(feature = "sharing"))]
    let _ = o;
}

#[cfg(feature = "sharing")]
mod imp {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;
    use std::panic::Location;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

    use crossbeam_utils::CachePadded;

    use super::{Counts, Op, RECENT_LINES, Site};

    pub(super) const LINE: usize = 64;
    /// Slots of the last-writer table (32 MiB of `AtomicU64`).
    const SLOT_BITS: u32 = 22;
    const SLOTS: usize = 1 << SLOT_BITS;
    /// Bits of a slot that name the thread; the line's number is above.
    const TAG_BITS: u32 = 22;

    /// Threads whose counts of writes [`CLOCKS`] keeps apart (by tag
    /// modulo this; a process that starts more threads than this may
    /// judge a line's recency by another thread's count).
    const CLOCK_SLOTS: usize = 1 << 16;

    /// Per slot: the line's number and its last writer's tag (0: empty).
    static TABLE: OnceLock<Box<[AtomicU64]>> = OnceLock::new();
    /// Per slot: its last writer's count of writes (low 32 bits) when it
    /// wrote the line, for the recency of the next thread's write.
    static STAMPS: OnceLock<Box<[AtomicU32]>> = OnceLock::new();
    /// Per thread tag: the thread's count of writes so far (its own line,
    /// read by the threads that write a line it wrote).
    static CLOCKS: OnceLock<Box<[CachePadded<AtomicU64>]>> = OnceLock::new();
    static NEXT_TAG: AtomicU32 = AtomicU32::new(1);

    pub(super) struct Thread {
        tag: u64,
        pub(super) counts: Cell<Counts>,
        /// Per source line: writes, shared writes, recent shared writes.
        sites: RefCell<HashMap<&'static Location<'static>, (u64, u64, u64)>>,
    }

    std::thread_local! {
        pub(super) static THREAD: Thread = Thread {
            tag: u64::from(NEXT_TAG.fetch_add(1, Ordering::Relaxed)) & ((1 << TAG_BITS) - 1),
            counts: Cell::new(Counts::default()),
            sites: RefCell::new(HashMap::new()),
        };
    }

    fn table() -> &'static [AtomicU64] {
        TABLE.get_or_init(|| (0..SLOTS).map(|_| AtomicU64::new(0)).collect())
    }

    fn stamps() -> &'static [AtomicU32] {
        STAMPS.get_or_init(|| (0..SLOTS).map(|_| AtomicU32::new(0)).collect())
    }

    fn clock(tag: u64) -> &'static AtomicU64 {
        let c = CLOCKS.get_or_init(|| (0..CLOCK_SLOTS).map(|_| CachePadded::new(AtomicU64::new(0))).collect());
        &c[tag as usize % CLOCK_SLOTS]
    }

    pub(super) fn forget() {
        if let Some(t) = TABLE.get() {
            for slot in t.iter() {
                slot.store(0, Ordering::Relaxed);
            }
        }
    }

    /// The slot of the line at `addr` in [`TABLE`] and [`STAMPS`].
    pub(super) fn slot(addr: usize) -> usize {
        ((addr / LINE) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) as usize >> (64 - SLOT_BITS)
    }

    pub(super) fn note(addr: usize, at: &'static Location<'static>) {
        let line = (addr / LINE) as u64;
        let i = slot(addr);
        // `try_with`: a thread's last writes, made while its thread-locals
        // are torn down (an agent dropped at thread exit), go uncounted.
        let _ = THREAD.try_with(|t| {
            let mut c = t.counts.get();
            c.writes += 1;
            // Relaxed (all): the instrument's own bookkeeping; a write that
            // races another's on the same line is judged either way.
            let old = table()[i].swap(line << TAG_BITS | t.tag, Ordering::Relaxed);
            let stamp = stamps()[i].swap(c.writes as u32, Ordering::Relaxed);
            clock(t.tag).store(c.writes, Ordering::Relaxed);
            let last = old & ((1 << TAG_BITS) - 1);
            let shared = old >> TAG_BITS == line && last != t.tag;
            // The last writer's writes since its write of this line.
            let recent = shared && (clock(last).load(Ordering::Relaxed) as u32).wrapping_sub(stamp) < RECENT_LINES;
            c.shared_writes += u64::from(shared);
            c.recent_shared_writes += u64::from(recent);
            t.counts.set(c);
            if let Ok(mut s) = t.sites.try_borrow_mut() {
                let e = s.entry(at).or_default();
                e.0 += 1;
                e.1 += u64::from(shared);
                e.2 += u64::from(recent);
            }
        });
    }

    pub(super) fn op(o: Op) {
        let _ = THREAD.try_with(|t| {
            let mut c = t.counts.get();
            match o {
                Op::Pin => c.pins += 1,
                Op::Defer => c.defers += 1,
                Op::Flush => c.flushes += 1,
                Op::Alloc => c.allocs += 1,
            }
            t.counts.set(c);
        });
    }

    pub(super) fn take_sites() -> Vec<Site> {
        let mut v: Vec<Site> = THREAD
            .try_with(|t| std::mem::take(&mut *t.sites.borrow_mut()))
            .unwrap_or_default()
            .into_iter()
            .map(|(at, (writes, shared_writes, recent_shared_writes))| Site {
                file: at.file(),
                line: at.line(),
                writes,
                shared_writes,
                recent_shared_writes,
            })
            .collect();
        v.sort_by(|a, b| b.shared_writes.cmp(&a.shared_writes).then(b.writes.cmp(&a.writes)));
        v
    }
}

/// The `sync` shim's atomics in a counting build: `std`'s, with every
/// store and read-modify-write counted by [`note`] at its caller's line.
#[cfg(feature = "sharing")]
pub(crate) mod atomic {
    use std::sync::atomic as std_atomic;
    pub(crate) use std_atomic::Ordering;

    /// Read-modify-writes of a value of type `$t`, each counted.
    macro_rules! counted_rmw {
        ($t:ty; $($f:ident),*) => {$(
            #[inline(always)]
            #[track_caller]
            pub(crate) fn $f(&self, v: $t, o: Ordering) -> $t {
                super::note(std::ptr::from_ref(self) as usize);
                self.0.$f(v, o)
            }
        )*};
    }

    /// What every atomic has: loads, and counted stores, swaps and
    /// compare-and-swaps of a value of type `$t`.
    macro_rules! counted_common {
        ($t:ty) => {
            #[inline(always)]
            pub(crate) fn load(&self, o: Ordering) -> $t {
                self.0.load(o)
            }
            #[inline(always)]
            #[track_caller]
            pub(crate) fn store(&self, v: $t, o: Ordering) {
                super::note(std::ptr::from_ref(self) as usize);
                self.0.store(v, o)
            }
            counted_rmw!($t; swap);
            #[inline(always)]
            #[track_caller]
            pub(crate) fn compare_exchange(&self, c: $t, n: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                super::note(std::ptr::from_ref(self) as usize);
                self.0.compare_exchange(c, n, s, f)
            }
            #[inline(always)]
            #[track_caller]
            pub(crate) fn compare_exchange_weak(&self, c: $t, n: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                super::note(std::ptr::from_ref(self) as usize);
                self.0.compare_exchange_weak(c, n, s, f)
            }
            #[inline(always)]
            pub(crate) fn get_mut(&mut self) -> &mut $t {
                self.0.get_mut()
            }
        };
    }

    /// A counted atomic over `std`'s `$name` of `$t`, with the listed
    /// read-modify-writes.
    macro_rules! counted {
        ($name:ident, $t:ty; $($f:ident),*) => {
            #[derive(Debug, Default)]
            #[repr(transparent)]
            pub(crate) struct $name(std_atomic::$name);

            #[allow(dead_code)]
            impl $name {
                pub(crate) const fn new(v: $t) -> Self {
                    $name(std_atomic::$name::new(v))
                }
                pub(crate) fn into_inner(self) -> $t {
                    self.0.into_inner()
                }
                pub(crate) fn as_ptr(&self) -> *mut $t {
                    self.0.as_ptr()
                }
                counted_common!($t);
                counted_rmw!($t; $($f),*);
            }
        };
    }

    counted!(AtomicU8, u8; fetch_add, fetch_sub, fetch_or, fetch_and, fetch_max, fetch_min);
    counted!(AtomicU32, u32; fetch_add, fetch_sub, fetch_or, fetch_and, fetch_max, fetch_min);
    counted!(AtomicU64, u64; fetch_add, fetch_sub, fetch_or, fetch_and, fetch_max, fetch_min);
    counted!(AtomicUsize, usize; fetch_add, fetch_sub, fetch_or, fetch_and, fetch_max, fetch_min);
    counted!(AtomicBool, bool; fetch_or, fetch_and);

    /// `AtomicPtr`, counted as the others.
    #[derive(Debug, Default)]
    #[repr(transparent)]
    pub(crate) struct AtomicPtr<T>(std_atomic::AtomicPtr<T>);

    #[allow(dead_code)]
    impl<T> AtomicPtr<T> {
        pub(crate) const fn new(p: *mut T) -> Self {
            AtomicPtr(std_atomic::AtomicPtr::new(p))
        }
        counted_common!(*mut T);
    }
}

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    use super::*;

    /// A word alone on its cache line (the tests run in parallel).
    #[repr(align(64))]
    struct Alone(crate::sync::AtomicU64);

    /// Only this test writes it, so its line's history is the test's.
    static WORD: Alone = Alone(crate::sync::AtomicU64::new(0));

    #[test]
    fn a_line_another_thread_wrote_last_counts_shared() {
        use crate::sync::Ordering::Relaxed;
        let before = thread_counts();
        WORD.0.store(1, Relaxed);
        WORD.0.fetch_add(1, Relaxed);
        let mine = thread_counts().since(&before);
        let theirs = std::thread::spawn(|| {
            let before = thread_counts();
            WORD.0.store(3, Relaxed);
            let _ = WORD.0.compare_exchange(0, 1, Relaxed, Relaxed); // fails, counts
            thread_counts().since(&before)
        })
        .join()
        .unwrap();
        let again = thread_counts();
        WORD.0.swap(4, Relaxed);
        let back = thread_counts().since(&again);
        if ENABLED {
            assert_eq!((mine.writes, mine.shared_writes), (2, 0), "its own line twice");
            assert_eq!(
                (theirs.writes, theirs.shared_writes, theirs.recent_shared_writes),
                (2, 1, 1),
                "taken from the other thread once, right after its write"
            );
            assert_eq!(
                (back.writes, back.shared_writes, back.recent_shared_writes),
                (1, 1, 1),
                "and back"
            );
            let sites = take_sites();
            assert!(
                sites
                    .iter()
                    .any(|s| s.file.ends_with("sharing.rs") && s.shared_writes == 1),
                "{sites:?}"
            );
        } else {
            assert_eq!(
                (mine, theirs, back),
                Default::default(),
                "counts nothing without the feature"
            );
            assert!(take_sites().is_empty());
        }
    }

    /// Under wait-die and wound-wait a transaction takes an age as it
    /// begins; taking one writes no line another agent's begin wrote (the
    /// ages come from the clock, `ConflictPolicy::WoundWait`, "Ages").
    /// Two agents on two threads begin and end transactions in turn.
    #[test]
    fn ages_taken_in_turn_write_no_shared_line() {
        use std::sync::{Arc, Barrier};

        use crate::{ConflictPolicy, LockManager};
        for policy in [ConflictPolicy::WaitDie, ConflictPolicy::WoundWait] {
            let lm = LockManager::builder().conflicts(policy).build();
            let turn = Arc::new(Barrier::new(2));
            let run = |first: bool| {
                let (lm, turn) = (lm.clone(), turn.clone());
                std::thread::spawn(move || {
                    let mut a = lm.agent();
                    let mut ages = Vec::new();
                    let mut take = |counted: bool| {
                        let before = thread_counts();
                        let t = a.begin();
                        ages.push(t.age());
                        t.commit().unwrap();
                        let c = thread_counts().since(&before);
                        if counted { c.shared_writes } else { 0 }
                    };
                    let mut shared = 0;
                    for round in 0..20 {
                        // Rounds 0 and 1 warm up (the agent's first
                        // transaction binds it to its thread).
                        if first {
                            shared += take(round >= 2);
                        }
                        turn.wait();
                        if !first {
                            shared += take(round >= 2);
                        }
                        turn.wait();
                    }
                    (shared, ages)
                })
            };
            let (x, y) = (run(true), run(false));
            let ((sx, ax), (sy, ay)) = (x.join().unwrap(), y.join().unwrap());
            assert_eq!((sx, sy), (0, 0), "{policy:?}: shared-line writes over 18 begins each");
            // Taken in turn, so in the order begun.
            let all: Vec<u64> = ax.iter().zip(&ay).flat_map(|(&p, &q)| [p, q]).collect();
            assert!(all.windows(2).all(|w| w[0] < w[1]), "{policy:?}: {all:?}");
        }
    }

    /// `line`, or the first line after it whose slot is not `own`'s.
    fn apart(line: usize, own: usize) -> usize {
        #[cfg(feature = "sharing")]
        {
            let mut line = line;
            while imp::slot(line) == imp::slot(own) {
                line += 64;
            }
            line
        }
        #[cfg(not(feature = "sharing"))]
        {
            let _ = own;
            line
        }
    }

    /// Only this test writes it.
    static STALE: Alone = Alone(crate::sync::AtomicU64::new(0));

    /// A line whose last writer wrote `RECENT_LINES` other lines since is
    /// shared but stale; one fewer, and it is recent.
    #[test]
    fn a_line_its_writer_wrote_long_ago_counts_stale() {
        use crate::sync::Ordering::Relaxed;
        for (after, recent) in [(RECENT_LINES, 0), (RECENT_LINES - 1, 1)] {
            std::thread::spawn(move || {
                STALE.0.store(1, Relaxed);
                // Lines nobody uses (only their numbers are looked at), none
                // in the slot of `STALE`'s line.
                let own = std::ptr::from_ref(&STALE) as usize;
                let mut line = 1usize << 40;
                for _ in 0..after {
                    line = apart(line, own);
                    note(line);
                    line += 64;
                }
            })
            .join()
            .unwrap();
            let before = thread_counts();
            STALE.0.store(2, Relaxed);
            let c = thread_counts().since(&before);
            if ENABLED {
                assert_eq!(
                    (c.writes, c.shared_writes, c.recent_shared_writes),
                    (1, 1, recent),
                    "after {after}"
                );
            } else {
                assert_eq!(c, Counts::default());
            }
        }
    }
}
