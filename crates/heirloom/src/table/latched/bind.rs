//! The latched table's miss path: a lock without a head gets one bound
//! under its bucket latch, from the caller's spares first; and the
//! release that empties a head's queue takes the head out of the table
//! into the releasing agent's spares (the module docs of `latched.rs`,
//! "Spares").

use std::ptr;

use crossbeam_utils::CachePadded;

use super::head::NO_LANE;
use super::{Bucket, Dir, Head, IN_USE, KEEP_HEADS, Latched};
use crate::id::LockId;
use crate::latch::{Latch, LatchGuard, latch_heat};
use crate::queue::{Outside, Queue};
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering, UnsafeCell};
use crate::table::{Caller, Handle};

/// Spare heads an agent keeps at most ([`Latched::detach`]): more than a
/// short transaction's locks, so that the next one binds each of its
/// misses to a head whose lines this agent wrote last.
pub(super) const MOST_SPARES: usize = if cfg!(heirloom_loom) { 2 } else { 1024 };

/// Spares moved at once between an agent's and the table's common ones
/// ([`Latched::detach`], [`Latched::take_spare`]): an agent whose
/// releases empty more heads than its misses bind (it released locks that
/// others took) hands half its spares on, and one that runs out takes as
/// many, one write of the common line for each batch.
const BATCH: usize = MOST_SPARES / 2;

/// The table's common spares, under a latch.
pub(super) type Spares = Latch<Vec<Spare>>;

/// An agent's own spares. Only that agent's thread uses them: every call
/// of the table names its caller's agent (`Caller::agent`), and one thread
/// drives an agent at a time (its transaction is `&mut`), so they need no
/// latch, which would cost each miss and each detach two more atomic
/// writes (of a line only the agent writes, but writes all the same).
pub(super) struct Own(UnsafeCell<Vec<Spare>>);

// SAFETY: heads are latches and atomics (`Spare`); the vector is used only
// by the thread that drives its agent (`Own::with`), and one agent's
// index passes to another only through the registry's mutex.
unsafe impl Sync for Own {}

impl Own {
    pub(super) fn new() -> Self {
        Own(UnsafeCell::new(Vec::new()))
    }

    /// Runs `f` on the spares.
    ///
    /// # Safety
    /// The caller drives the agent whose spares these are (its index's),
    /// or has the table to itself (`&mut`, as in `Drop`).
    #[inline]
    pub(super) unsafe fn with<R>(&self, f: impl FnOnce(&mut Vec<Spare>) -> R) -> R {
        // SAFETY: no other thread uses them meanwhile (the contract), and
        // `f` cannot reach them again (it gets the only reference).
        self.0.with_mut(|v| f(unsafe { &mut *v }))
    }
}

/// A head in an agent's spares: bound to no lock, in no bucket.
pub(super) struct Spare(pub(super) *mut CachePadded<Head>);

// SAFETY: a head is latches and atomics, which any thread may use; the
// pointer is freed only by `Drop for Latched`.
unsafe impl Send for Spare {}

impl<const SPARES: bool> Latched<SPARES> {
    /// The lock has no head (or looked so in `bucket`, `id`'s in `d`, where
    /// its tag is `t`): bind one under the bucket latch, growing the table
    /// first when its chains have grown long. Not cold: wherever rows
    /// outnumber the heads a bucket keeps (TM1, YCSB, TPC-C) most row locks
    /// come here, and inlined it saves them a call's register saves.
    #[inline]
    pub(super) fn latched_head_slow<'a>(
        &'a self,
        a: Caller<'_>,
        id: LockId,
        d: &'a Dir,
        bucket: &'a Bucket,
        t: u16,
    ) -> (LatchGuard<'a, Queue>, *mut CachePadded<Head>, bool) {
        let (c, words) = (a.counters, id.words());
        let (b, contended) = latch_heat(&bucket.latch, c);
        if !ptr::eq(self.dir(), d) {
            // Grown while we waited for the latch (or before): a head
            // bound in the old array would not be found in the new one.
            drop(b);
            return self.latched_head_again(a, id);
        }
        // Exact under the bucket latch: somebody may have bound it
        // meanwhile.
        let p = self.find(d, bucket, words, t);
        if !p.is_null() {
            // SAFETY: heads live as long as the table.
            let head = unsafe { &*p };
            let (mut q, held) = latch_heat(&head.queue, c);
            debug_assert!(head.bound_to(words));
            self.outside_now(&mut q, id);
            return (q, p, contended || held);
        }
        // At the most buckets the table stops growing and chains lengthen
        // (asked only when a head beyond the kept ones would be added).
        let grow_at = || {
            if d.buckets.len() < self.most {
                d.buckets.len()
            } else {
                usize::MAX
            }
        };
        let spares = self.spares(a).map(|s| (s, &*self.common));
        // SAFETY: the caller's own spares (`Latched::spares`).
        match unsafe { Self::bind_slow(d, bucket, id, t, self.outside_of(id), spares, &self.excess, grow_at) } {
            Some((q, p)) => (q, p, contended),
            None => {
                drop(b);
                self.grow(d);
                self.latched_head_again(a, id)
            }
        }
    }

    /// [`Latched::latched_head_slow`] again in the buckets now, after a
    /// growth.
    #[cold]
    #[inline(never)]
    pub(super) fn latched_head_again(
        &self,
        a: Caller<'_>,
        id: LockId,
    ) -> (LatchGuard<'_, Queue>, *mut CachePadded<Head>, bool) {
        let d = self.dir();
        let (bucket, t) = d.slot(id);
        self.latched_head_slow(a, id, d, bucket, t)
    }

    /// Binds a head of `bucket` to `id` (tagged `t` there): into an empty
    /// lane, one of the caller's spares (`spares`: its own, whose lines it
    /// wrote last, and the table's common ones) or else a new one; with
    /// every lane taken, an empty head of the bucket if there is one (the
    /// kept heads first, then the extra ones),
    /// else a new extra head, unless that would be a head beyond
    /// [`KEEP_HEADS`] while such heads (`excess`) number `grow_at()` (the
    /// buckets, below the most the table takes): then `None`, for the
    /// caller to grow the table first. Caller holds the bucket latch and
    /// has found no head bound to `id`. Returns the head latched.
    ///
    /// # Safety
    /// `spares`' first is the caller's own (see [`Own::with`]).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn bind_slow<'a>(
        d: &Dir,
        bucket: &'a Bucket,
        id: LockId,
        t: u16,
        outside: Option<Outside>,
        spares: Option<(&Own, &Spares)>,
        excess: &AtomicUsize,
        grow_at: impl FnOnce() -> usize,
    ) -> Option<(LatchGuard<'a, Queue>, *mut CachePadded<Head>)> {
        let lane = bucket.free_lane();
        if let (Some(i), Some((own, common))) = (lane, spares)
            // SAFETY: the caller's own (the contract).
            && let Some(Spare(p)) = unsafe { Self::take_spare(own, common) }
        {
            return Some(Self::bind_spare(d, bucket, i, p, id, t, outside));
        }
        if lane.is_none() {
            for i in 0..KEEP_HEADS {
                let p = bucket.kept(i);
                if let Some(q) = Self::rebind(p, id, outside) {
                    bucket.retag(i, t);
                    return Some((q, p));
                }
            }
            let mut n = bucket.extra();
            let mut p = bucket.first.load(Ordering::Acquire);
            while n > 0 && !p.is_null() {
                if let Some(q) = Self::rebind(p, id, outside) {
                    return Some((q, p));
                }
                // SAFETY: heads live as long as the table.
                p = unsafe { &*p }.next.load(Ordering::Acquire);
                n -= 1;
            }
            // A head beyond KEEP_HEADS: grow first once they number as
            // many as the buckets.
            if excess.load(Ordering::Relaxed) >= grow_at() {
                return None;
            }
            excess.fetch_add(1, Ordering::Relaxed);
        }
        let (key, hi) = id.words();
        let mut queue = Queue::new();
        queue.set_outside(outside);
        crate::sharing::op(crate::sharing::Op::Alloc);
        let node = Box::into_raw(Box::new(CachePadded::new(Head {
            queue: Latch::new(queue),
            key: AtomicU64::new(key),
            hi: AtomicU64::new(hi),
            next: AtomicPtr::new(ptr::null_mut()),
            waiters: AtomicBool::new(false),
            // Only the spares read it (`detach`).
            lane: AtomicU32::new(match lane {
                Some(i) if SPARES => Head::lane_word(d.index_of(bucket), i),
                _ => NO_LANE,
            }),
        })));
        // A head's address is its handle, which must not look like a fast
        // hold's (user-space addresses are far below that bit; a platform
        // that tags pointers in the top byte would set it).
        assert!(
            node as usize & Handle::FAST == 0,
            "heirloom: a lock head's address has its top bit set (tagged pointers are not supported)"
        );
        // Release (both): publishes the initialised head to latch-free
        // lookups, in the index or in the chain.
        match lane {
            Some(i) => bucket.keep(i, node, t),
            None => {
                // SAFETY: just allocated; nobody else sees it yet.
                unsafe { &*node }
                    .next
                    .store(bucket.first.load(Ordering::Relaxed), Ordering::Relaxed);
                bucket.keep(KEEP_HEADS, node, t);
                bucket.first.store(node, Ordering::Release);
            }
        }
        // SAFETY: just allocated; freed only when the table drops.
        let q = unsafe { &*node }.queue.lock();
        Some((q, node))
    }

    /// Binds head `p` of a bucket whose latch the caller holds to `id` if
    /// its queue is empty, and returns it latched. `try_lock`:
    /// bucket-then-head is the legal order, but a head that is latched
    /// right now is in use, so it is not worth waiting for (nor worth a
    /// failed CAS that takes the line from its holder); nor is one whose
    /// latch notes requests (`IN_USE`).
    #[inline]
    fn rebind<'a>(p: *mut CachePadded<Head>, id: LockId, outside: Option<Outside>) -> Option<LatchGuard<'a, Queue>> {
        // SAFETY: heads live as long as the table, which outlives 'a (the
        // bucket's borrow).
        let h: &'a Head = unsafe { &*p };
        if h.queue.looks_free()
            && h.queue.note() != IN_USE
            && let Some(mut q) = h.queue.try_lock()
            && q.is_empty()
        {
            h.bind(&mut q, id, outside);
            return Some(q);
        }
        None
    }

    /// Binds spare `p` to `id` in lane `i` of `bucket` (tagged `t` there),
    /// whose latch the caller holds; returns it latched.
    #[inline]
    fn bind_spare<'a>(
        d: &Dir,
        bucket: &'a Bucket,
        i: usize,
        p: *mut CachePadded<Head>,
        id: LockId,
        t: u16,
        outside: Option<Outside>,
    ) -> (LatchGuard<'a, Queue>, *mut CachePadded<Head>) {
        // SAFETY: heads live as long as the table, which outlives 'a (the
        // bucket's borrow).
        let h: &'a Head = unsafe { &*p };
        // A spare is in no bucket: only a lookup that read a lane before
        // the head left it can hold its latch, and only for a look at its
        // id.
        let mut q = h.queue.lock();
        debug_assert!(q.is_empty());
        h.bind(&mut q, id, outside);
        bucket.keep(i, p, t);
        h.set_lane(d.index_of(bucket), i);
        (q, p)
    }

    /// The caller's spares: none unless the table keeps spares
    /// (`TableKind::LatchedSpares`), nor for an agent from `fast::AGENTS`
    /// on. Only the caller's agent may use them ([`Own::with`]): every
    /// call of the table names its caller's agent, which one thread
    /// drives at a time.
    #[inline]
    fn spares(&self, a: Caller<'_>) -> Option<&Own> {
        if !SPARES {
            return None;
        }
        self.spares.get(a.agent as usize).map(|s| &**s)
    }

    /// How many spares agent `agent` has (tests, on one thread).
    #[cfg(all(test, not(heirloom_loom)))]
    pub(super) fn spares_of(&self, agent: usize) -> usize {
        // SAFETY: the tests that ask use the table from one thread.
        unsafe { self.spares[agent].with(|s| s.len()) }
    }

    /// A spare from `own` (the caller's), or if it has none a batch from
    /// `common` first; `None` if both are empty.
    ///
    /// # Safety
    /// `own` is the caller's ([`Own::with`]).
    #[inline]
    unsafe fn take_spare(own: &Own, common: &Spares) -> Option<Spare> {
        // SAFETY: the caller's (the contract).
        unsafe {
            own.with(|own| match own.pop() {
                Some(s) => Some(s),
                None => Self::refill(own, common),
            })
        }
    }

    /// `take_spare` out of its own: up to [`BATCH`] of the common spares
    /// into `own`, and one of them.
    #[cold]
    fn refill(own: &mut Vec<Spare>, common: &Spares) -> Option<Spare> {
        let mut common = common.lock();
        let n = common.len().min(BATCH);
        let from = common.len() - n;
        own.extend(common.drain(from..));
        own.pop()
    }

    /// `detach` into spares that are full: the oldest [`BATCH`] go to the
    /// table's common ones.
    #[cold]
    fn hand_on(own: &mut Vec<Spare>, common: &Spares) {
        common.lock().extend(own.drain(..BATCH));
    }

    /// Takes head `p`, whose queue the caller just emptied (under its
    /// latch, held: `_q`), out of the table into the caller's spares, if
    /// it sits in a lane of its bucket and that bucket's latch is free
    /// (full spares hand their oldest half on to the table's common ones
    /// first): its next miss binds it again. So a head's
    /// lines are written by the agents that use its lock and then by the
    /// agent that binds it next, the same one: no other agent's lines are
    /// rebound on a miss, and a bucket keeps only the heads of live locks
    /// (a hot lock that goes idle is bound again at its next use). Else
    /// the head stays bound, empty, for a miss of its bucket to rebind
    /// ([`Latched::rebind`]).
    ///
    /// The head says where it is kept ([`Head::lane`], no hash and no
    /// search of the bucket's lanes), a hint checked under the bucket
    /// latch. That latch is only tried (the caller holds the head latch,
    /// which comes after it), and the table's buckets now must be the
    /// ones whose latch it got (a growth holds every bucket latch and
    /// publishes the new array before it lets them go).
    ///
    /// Out of line: inlined, it would save its call on the tables with
    /// spares and cost the plain table's release, in the commit's loop
    /// that holds every kind's (MEASUREMENTS.md, "Spare heads cheaper").
    #[inline(never)]
    pub(super) fn detach(&self, a: Caller<'_>, p: *mut CachePadded<Head>, _q: &Queue) {
        let Some(spares) = self.spares(a) else {
            return;
        };
        // SAFETY: heads live as long as the table.
        let head = unsafe { &*p };
        // A hint, checked under the bucket latch below.
        let Some((at, i)) = head.lane() else {
            return;
        };
        let d = self.dir();
        let Some(bucket) = d.buckets.get(at) else {
            return;
        };
        let Some(_b) = bucket.latch.try_lock() else {
            return;
        };
        if !ptr::eq(self.dir(), d) || !bucket.keeps(i, p) {
            return;
        }
        // SAFETY: the caller's own (`Latched::spares`).
        unsafe {
            spares.with(|spares| {
                if spares.len() >= MOST_SPARES {
                    Self::hand_on(spares, &self.common);
                }
                spares.push(Spare(p));
            });
        }
        bucket.unkeep(i);
        head.unbind();
    }
}
