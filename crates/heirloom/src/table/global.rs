//! `Global`: one latch over the whole lock table.
//!
//! Every acquire, release and scan serialises on one mutex, as lock managers
//! did before their hash tables were partitioned (MySQL's `lock_sys->mutex`).
//! It is the baseline the other tables are measured against.
//!
//! Queues live in a slab; a map from lock id to slab index finds them. An
//! emptied queue stays mapped (a lock taken again soon finds it at once) and
//! is noted; once [`RETIRE_BATCH`] are noted, those still empty are unmapped
//! and their slots go to a free list with their capacity. So memory follows
//! the number of live locks plus a bounded slack, and the warm path neither
//! allocates nor churns the map.
//!
//! `TableKind::GlobalHtm` is the same table with its latch elided by Intel
//! RTM (`heirloom_rtm`): each section runs as a hardware transaction that
//! reads the mutex's word, so sections on different locks run side by side
//! unless they touch the same lines (the map, the slab's vectors, a hot
//! lock's queue), and after aborts it takes the mutex as `Retry::default()`
//! says. They often do: a lock that misses the map writes the map's counts
//! and the slab's free list, and a release that empties a queue writes the
//! emptied list, so sections on unrelated locks conflict (the crate's
//! MEASUREMENTS.md, "Real RTM at last"). Where the CPU has no RTM every section takes the mutex. The
//! section's heat (for speculative lock inheritance and `latch_contended`)
//! is then an abort or a fallback that found the mutex held.

use std::collections::HashMap;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::{Acquiring, Caller, Converting, Handle, LockTable, Releasing};
use crate::id::{IdBuildHasher, LockId};
use crate::inherit::Heat;
use crate::latch::latch_heat;
use crate::mode::Mode;
use crate::monitor::{LockInfo, describe};
use crate::nodes::Nodes;
use crate::queue::{Blocker, Cancel, Handoff, Outcome, Queue};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;
use heirloom_rtm::Elision;

pub(crate) struct Global {
    inner: CachePadded<Mutex<Queues>>,
    /// The latch elided (`TableKind::GlobalHtm`), or taken.
    elision: Option<Elision>,
    /// Wait-die judges a request that would wait before it is linked
    /// ([`LockTable::judge_wait_die`]).
    wait_die: bool,
}

/// Emptied queues noted before a sweep unmaps those still empty.
const RETIRE_BATCH: usize = 1024;

/// The queues of every lock with live requests, found by lock id: the
/// state behind `Global`'s one latch, and the state a lock server owns
/// alone (`table/server.rs`). Whoever has `&mut Queues` may touch every
/// request linked in them (`ReqPtr` contract 2).
pub(crate) struct Queues {
    map: HashMap<LockId, usize, IdBuildHasher>,
    /// Each queue with its lock (a queue does not keep its id).
    queues: Vec<(LockId, Queue)>,
    free: Vec<usize>,
    /// Slots that became empty since the last sweep (may repeat).
    emptied: Vec<usize>,
}

impl Queues {
    pub(crate) fn new() -> Self {
        Queues {
            map: HashMap::default(),
            queues: Vec::new(),
            free: Vec::new(),
            emptied: Vec::with_capacity(RETIRE_BATCH),
        }
    }

    /// Links `r` for `id` in `mode` (see [`Queue::acquire`], and for `die`
    /// there); returns the outcome and the index of the queue.
    ///
    /// # Safety
    /// As [`Queue::acquire`].
    #[inline]
    pub(crate) unsafe fn acquire(
        &mut self,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        die: bool,
        contended: bool,
    ) -> (Outcome, usize) {
        let idx = match self.map.get(&id) {
            Some(&i) => i,
            None => {
                let i = match self.free.pop() {
                    Some(i) => {
                        self.queues[i].1.rebind();
                        self.queues[i].0 = id;
                        i
                    }
                    None => {
                        self.queues.push((id, Queue::new()));
                        self.queues.len() - 1
                    }
                };
                self.map.insert(id, i);
                i
            }
        };
        // SAFETY: this function's contract.
        let out = unsafe { self.queues[idx].1.acquire(r, mode, may_wait, die, contended) };
        if matches!(out, Outcome::Refused(_)) {
            self.retire_if_empty(idx);
        }
        (out, idx)
    }

    /// The queue at `idx`, if there is one (a stale index of a retired
    /// queue may name another lock's queue: callers look for their request
    /// in it before they touch it).
    #[inline]
    pub(crate) fn get(&mut self, idx: usize) -> Option<&mut Queue> {
        self.queues.get_mut(idx).map(|(_, q)| q)
    }

    /// Notes `idx` if its queue is empty; sweeps when enough are noted.
    #[inline]
    pub(crate) fn retire_if_empty(&mut self, idx: usize) {
        if !self.queues[idx].1.is_empty() {
            return;
        }
        self.emptied.push(idx);
        if self.emptied.len() >= RETIRE_BATCH {
            self.sweep();
        }
    }

    #[cold]
    fn sweep(&mut self) {
        let mut emptied = std::mem::take(&mut self.emptied);
        for &idx in &emptied {
            let (id, ref q) = self.queues[idx];
            if q.is_empty() && self.map.get(&id) == Some(&idx) {
                self.map.remove(&id);
                self.free.push(idx);
            }
        }
        emptied.clear();
        self.emptied = emptied; // keeps its capacity: no allocation
    }

    /// Appends every lock with live requests.
    /// Every request that waits in these queues (new or converting).
    pub(crate) fn waiters(&self, out: &mut Vec<ReqPtr>) {
        for (_, q) in &self.queues {
            q.waiters(out);
        }
    }

    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        for (&id, &idx) in &self.map {
            if !self.queues[idx].1.is_empty() {
                out.push(describe(&self.queues[idx].1, id, now_ns));
            }
        }
    }

    /// Releases `r` (granted, linked in the queue at `idx`), or with
    /// `heat`, releases it or keeps it INHERITED (see
    /// [`Queue::release_or_inherit`]).
    ///
    /// # Safety
    /// `r` is alive and linked in the queue at `idx`.
    #[inline]
    pub(crate) unsafe fn release(
        &mut self,
        idx: usize,
        r: ReqPtr,
        heat: Option<Heat>,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        let q = &mut self.queues[idx].1;
        let out = match heat {
            None => {
                q.release(r, wake);
                Handoff::Released
            }
            // SAFETY: this function's contract.
            Some(heat) => unsafe { q.release_or_inherit(r, heat, wake) },
        };
        self.retire_if_empty(idx);
        out
    }

    /// Withdraws the waiting `r` (see [`Queue::cancel`]).
    ///
    /// # Safety
    /// `r` is alive and linked in the queue at `idx`.
    pub(crate) unsafe fn cancel(&mut self, idx: usize, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY: this function's contract.
        let out = unsafe { self.queues[idx].1.cancel(r, wake) };
        self.retire_if_empty(idx);
        out
    }
}

impl Global {
    pub(crate) fn new(elide: bool) -> Self {
        Global {
            inner: CachePadded::new(Mutex::new(Queues::new())),
            elision: elide.then(Elision::default),
            wait_die: false,
        }
    }

    /// Runs `f` on the queues under the latch, or elided: `f` gets whether
    /// the latch was found held (or the transaction aborted), which is
    /// counted in `latch_contended`. Elided, `f` may run more than once,
    /// but only one run has effects.
    #[inline(always)]
    fn run<R>(&self, c: &AgentCounters, mut f: impl FnMut(&mut Queues, bool) -> R) -> R {
        match &self.elision {
            None => {
                let (mut g, contended) = latch_heat(&*self.inner, c);
                f(&mut g, contended)
            }
            Some(e) => {
                // SAFETY: the raw mutex is only taken and released through
                // `Elision::run_heat` here (no guard of it is alive), and
                // the data is reached either under it or in a transaction
                // that aborts when anybody takes it.
                let (r, hot) = e.run_heat(unsafe { self.inner.raw() }, false, |hot| {
                    // SAFETY: as above: exclusive under the mutex, or inside
                    // a transaction that observes no other writer.
                    f(unsafe { &mut *self.inner.data_ptr() }, hot)
                });
                if hot {
                    c.latch_contended.bump();
                }
                r
            }
        }
    }

    /// Runs `f` on the queue of `h` under the latch.
    #[inline]
    fn with<R>(&self, c: &AgentCounters, h: At, mut f: impl FnMut(&mut Queue) -> R) -> R {
        self.run(c, |g, _| f(&mut g.queues[h.0].1))
    }
}

/// This table's handle ([`LockTable::Handle`]): the index of the lock's
/// queue in the slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At(usize);

impl From<Handle> for At {
    #[inline]
    fn from(h: Handle) -> Self {
        At(h.0)
    }
}

impl From<At> for Handle {
    #[inline]
    fn from(h: At) -> Self {
        Handle(h.0)
    }
}

// SAFETY: every queue operation runs under the one latch (or in a
// transaction that aborts when it is taken) and pushes what it grants to
// `wake`; a queue's slab index stays its own while a request is linked in
// it (a queue is unmapped only when empty); nodes are not kept past their
// unlinking.
unsafe impl LockTable for Global {
    type Handle = At;

    fn judge_wait_die(&mut self) {
        self.wait_die = true;
    }

    #[inline]
    unsafe fn acquire(
        &self,
        a: Caller<'_>,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        _try_fast: bool,
        _wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, At) {
        self.run(a.counters, |g, contended| {
            // SAFETY: the caller's own live request (this function's contract).
            let (out, idx) = unsafe { g.acquire(id, r, mode, may_wait, may_wait && self.wait_die, contended) };
            (out, At(idx))
        })
    }

    /// Under one take of the latch.
    unsafe fn acquire_batch(&self, a: Caller<'_>, items: &mut [Acquiring], _wake: &mut Vec<ReqPtr>) {
        self.run(a.counters, |g, contended| {
            for it in items.iter_mut() {
                // SAFETY: the caller's own requests, linked nowhere.
                let (out, idx) = unsafe { g.acquire(it.id, it.req, it.mode, false, false, contended) };
                it.out = out;
                it.head = At(idx).into();
            }
        })
    }

    /// In place.
    unsafe fn convert(
        &self,
        a: Caller<'_>,
        _id: LockId,
        h: At,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
        _nodes: &mut Nodes,
    ) -> Converting {
        // SAFETY: the caller's own granted request, linked in the queue of
        // `h` (this function's contract).
        let outcome = self.with(a.counters, h, |q| unsafe {
            q.convert(r, to, may_wait, self.wait_die, wake_behind, wake)
        });
        Converting::in_place(outcome, r, h.into())
    }

    #[inline]
    unsafe fn release(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        self.run(a.counters, |g, _| {
            // SAFETY: the caller's own granted request, linked in the queue
            // of `h` (this function's contract).
            unsafe { g.release(h.0, r, None, wake) };
        })
    }

    unsafe fn release_or_inherit(
        &self,
        a: Caller<'_>,
        h: At,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        // SAFETY: the caller's own request, linked in the queue of `h`
        // (this function's contract).
        self.run(a.counters, |g, _| unsafe { g.release(h.0, r, Some(heat), wake) })
    }

    /// Under one take of the latch.
    unsafe fn release_batch(&self, a: Caller<'_>, items: &mut [Releasing], wake: &mut Vec<ReqPtr>) {
        self.run(a.counters, |g, _| {
            for it in items.iter_mut().filter(|it| it.out.is_none()) {
                // SAFETY: the caller's own granted requests, linked here.
                it.out = Some(unsafe { g.release(At::from(it.head).0, it.req, it.heat, wake) });
            }
        })
    }

    unsafe fn cancel(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY: the caller's own request, linked in the queue of `h`.
        self.run(a.counters, |g, _| unsafe { g.cancel(h.0, r, wake) })
    }

    unsafe fn blockers(&self, a: Caller<'_>, h: At, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        self.with(a.counters, h, |q| q.blockers(r, out))
    }

    /// The one latch, taken and dropped.
    fn null_section(&self, a: Caller<'_>, _id: LockId) {
        self.run(a.counters, |_, _| ());
    }

    fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        self.inner.lock().snapshot(now_ns, out);
    }

    /// `TableKind::GlobalHtm`'s.
    fn elision(&self) -> Option<heirloom_rtm::ElisionStats> {
        self.elision.as_ref().map(Elision::stats)
    }
}
