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
//! the number of live locks plus a bounded slack (that many noted slots for
//! each agent index in use, below), and the warm path neither allocates
//! nor churns the map.
//!
//! Elided (below), the map is [`PARTS`] maps, a lock's by its hash, and
//! the free and emptied lists are one pair per agent index (modulo
//! [`PARTS`]), each on lines of its own, as are the slab's entries: a
//! section on one lock writes the counts of its lock's map and its
//! agent's lists, not words that every section reads or writes, and
//! sections on unrelated locks commit side by side (the TSX paper's
//! "multiple dictionaries, per-thread allocators"). Under a latch taken
//! there is nothing to gain from partitions and a little to lose (their
//! headers' lines, and instructions), so the latched global table and the
//! lock server keep one map and one pair of lists (`Global<1>`,
//! `Queues<1>`, the partitions a constant that compiles them away).
//!
//! `TableKind::GlobalHtm` is the same table with its latch elided by Intel
//! RTM (`heirloom_rtm`): each section runs as a hardware transaction that
//! reads the mutex's word, so sections on different locks run side by side
//! unless they touch the same lines (the map, the slab's vectors, a hot
//! lock's queue), and after aborts it takes the mutex as `Retry::default()`
//! says. With one map and one pair of lists they did: a lock that missed
//! the map wrote its counts and the slab's free list, a release that
//! emptied a queue the emptied list, and sections on unrelated locks
//! conflicted (the crate's MEASUREMENTS.md, "Real RTM at last"); hence the
//! partitions above. Sections on one lock still conflict, as they must:
//! a hot lock's queue is written by every request for it. Where the CPU
//! has no RTM every section takes the mutex. The section's heat (for
//! speculative lock inheritance and `latch_contended`) is then a conflict
//! abort or a fallback that found the mutex held.

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

pub(crate) struct Global<const P: usize = 1> {
    inner: CachePadded<Mutex<Queues<P>>>,
    /// The latch elided (`TableKind::GlobalHtm`), or taken.
    elision: Option<Elision>,
    /// Wait-die judges a request that would wait before it is linked
    /// ([`LockTable::judge_wait_die`]).
    wait_die: bool,
}

/// Emptied queues noted in one agent's list before a sweep unmaps those
/// still empty.
const RETIRE_BATCH: usize = 1024;

/// The elided table's map partitions and pairs of lists (a power of two):
/// `TableKind::GlobalHtm` is a `Global<PARTS>`.
pub(crate) const PARTS: usize = 64;

type Map = HashMap<LockId, usize, IdBuildHasher>;

/// One agent index's slots: free ones, and those that became empty since
/// its last sweep (may repeat).
#[derive(Default)]
struct Lists {
    free: Vec<usize>,
    emptied: Vec<usize>,
}

/// The queues of every lock with live requests, found by lock id: the
/// state behind `Global`'s one latch, and the state a lock server owns
/// alone (`table/server.rs`). Whoever has `&mut Queues` may touch every
/// request linked in them (`ReqPtr` contract 2).
pub(crate) struct Queues<const P: usize = 1> {
    /// With one partition, the map of lock id to slot, here beside the
    /// fields every section writes anyway; with more, unused.
    map: Map,
    /// With more partitions, the maps by partition ([`Queues::part`]).
    maps: Box<[CachePadded<Map>]>,
    /// Each queue with its lock (a queue does not keep its id).
    queues: Vec<CachePadded<(LockId, Queue)>>,
    /// With one partition, the one pair of lists; with more, unused.
    list: Lists,
    /// With more partitions, the lists by agent index, modulo their number.
    lists: Box<[CachePadded<Lists>]>,
}

impl<const P: usize> Queues<P> {
    /// With `P` map partitions and pairs of lists (a power of two).
    pub(crate) fn new() -> Self {
        const { assert!(P.is_power_of_two()) };
        let more = if P > 1 { P } else { 0 };
        Queues {
            map: Map::default(),
            maps: (0..more).map(|_| CachePadded::new(Map::default())).collect(),
            queues: Vec::new(),
            // The one list's room for a batch at once, as before the
            // partitions; the partitioned lists grow to it as used.
            list: Lists {
                free: Vec::new(),
                emptied: Vec::with_capacity(if P == 1 { RETIRE_BATCH } else { 0 }),
            },
            lists: (0..more).map(|_| CachePadded::new(Lists::default())).collect(),
        }
    }

    /// The map partition of `id`: bits of its hash that the map's own
    /// bucket index and tag bits leave alone (none to compute with one).
    #[inline]
    fn part(&self, id: LockId) -> usize {
        if P == 1 {
            return 0;
        }
        (id.hash64() >> 40) as usize & (P - 1)
    }

    /// Partition `part`'s map.
    #[inline]
    fn map_mut(&mut self, part: usize) -> &mut Map {
        if P == 1 { &mut self.map } else { &mut self.maps[part] }
    }

    /// The lists of agent index `who`.
    #[inline]
    fn lists_mut(&mut self, who: usize) -> &mut Lists {
        if P == 1 {
            &mut self.list
        } else {
            &mut self.lists[who & (P - 1)]
        }
    }

    /// Every partition's map.
    fn all_maps(&self) -> impl Iterator<Item = &Map> {
        std::iter::once(&self.map).chain(self.maps.iter().map(|m| &**m))
    }

    /// Links `r` for `id` in `mode` (see [`Queue::acquire`], and for `die`
    /// there); returns the outcome and the index of the queue. `who` is
    /// the caller's agent index: a slot it needs comes from its free list.
    ///
    /// # Safety
    /// As [`Queue::acquire`].
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn acquire(
        &mut self,
        who: usize,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        die: bool,
        contended: bool,
    ) -> (Outcome, usize) {
        let part = self.part(id);
        let idx = match self.map_mut(part).get(&id) {
            Some(&i) => i,
            None => {
                let i = match self.lists_mut(who).free.pop() {
                    Some(i) => {
                        self.queues[i].1.rebind();
                        self.queues[i].0 = id;
                        i
                    }
                    None => {
                        self.queues.push(CachePadded::new((id, Queue::new())));
                        self.queues.len() - 1
                    }
                };
                self.map_mut(part).insert(id, i);
                i
            }
        };
        // SAFETY: this function's contract.
        let out = unsafe { self.queues[idx].1.acquire(r, mode, may_wait, die, contended) };
        if matches!(out, Outcome::Refused(_)) {
            self.retire_if_empty(who, idx);
        }
        (out, idx)
    }

    /// The queue at `idx`, if there is one (a stale index of a retired
    /// queue may name another lock's queue: callers look for their request
    /// in it before they touch it).
    #[inline]
    pub(crate) fn get(&mut self, idx: usize) -> Option<&mut Queue> {
        self.queues.get_mut(idx).map(|e| &mut e.1)
    }

    /// Notes `idx` in `who`'s list if its queue is empty; sweeps that
    /// list when enough are noted.
    #[inline]
    pub(crate) fn retire_if_empty(&mut self, who: usize, idx: usize) {
        if !self.queues[idx].1.is_empty() {
            return;
        }
        let lists = self.lists_mut(who);
        lists.emptied.push(idx);
        if lists.emptied.len() >= RETIRE_BATCH {
            self.sweep(who);
        }
    }

    /// Unmaps the queues noted in `who`'s list that are still empty; their
    /// slots go to its free list.
    #[cold]
    fn sweep(&mut self, who: usize) {
        let mut emptied = std::mem::take(&mut self.lists_mut(who).emptied);
        for &idx in &emptied {
            let (id, ref q) = *self.queues[idx];
            let empty = q.is_empty();
            let part = self.part(id);
            let map = self.map_mut(part);
            if empty && map.get(&id) == Some(&idx) {
                map.remove(&id);
                self.lists_mut(who).free.push(idx);
            }
        }
        emptied.clear();
        self.lists_mut(who).emptied = emptied; // keeps its capacity: no allocation
    }

    /// Appends every lock with live requests.
    /// Every request that waits in these queues (new or converting).
    pub(crate) fn waiters(&self, out: &mut Vec<ReqPtr>) {
        for e in &self.queues {
            e.1.waiters(out);
        }
    }

    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        for (&id, &idx) in self.all_maps().flat_map(|m| m.iter()) {
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
        who: usize,
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
        self.retire_if_empty(who, idx);
        out
    }

    /// Withdraws the waiting `r` (see [`Queue::cancel`]).
    ///
    /// # Safety
    /// `r` is alive and linked in the queue at `idx`.
    pub(crate) unsafe fn cancel(&mut self, who: usize, idx: usize, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY: this function's contract.
        let out = unsafe { self.queues[idx].1.cancel(r, wake) };
        self.retire_if_empty(who, idx);
        out
    }
}

impl<const P: usize> Global<P> {
    pub(crate) fn new(elide: bool) -> Self {
        Global {
            inner: CachePadded::new(Mutex::new(Queues::new())),
            elision: elide.then(Elision::default),
            wait_die: false,
        }
    }

    /// Runs `f` on the queues under the latch, or elided: `f` gets whether
    /// the latch was found held (or the transaction aborted on a
    /// conflict), which is counted in `latch_contended`. Elided, `f` may
    /// run more than once, but only one run has effects.
    #[inline(always)]
    fn run<R>(&self, c: &AgentCounters, mut f: impl FnMut(&mut Queues<P>, bool) -> R) -> R {
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
unsafe impl<const P: usize> LockTable for Global<P> {
    type Handle = At;

    fn judge_wait_die(&mut self) {
        self.wait_die = true;
    }

    /// Out of line, as `release`: with the global table in two forms
    /// (`Global<1>`, `Global<PARTS>`), bodies inlined into the tables'
    /// dispatch crowd out the inlining of the other tables' paths there.
    #[inline(never)]
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
            let (out, idx) = unsafe {
                g.acquire(
                    a.agent as usize,
                    id,
                    r,
                    mode,
                    may_wait,
                    may_wait && self.wait_die,
                    contended,
                )
            };
            (out, At(idx))
        })
    }

    /// Under one take of the latch.
    unsafe fn acquire_batch(&self, a: Caller<'_>, items: &mut [Acquiring], _wake: &mut Vec<ReqPtr>) {
        self.run(a.counters, |g, contended| {
            for it in items.iter_mut() {
                // SAFETY: the caller's own requests, linked nowhere.
                let (out, idx) =
                    unsafe { g.acquire(a.agent as usize, it.id, it.req, it.mode, false, false, contended) };
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

    /// Out of line, as `acquire`.
    #[inline(never)]
    unsafe fn release(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        self.run(a.counters, |g, _| {
            // SAFETY: the caller's own granted request, linked in the queue
            // of `h` (this function's contract).
            unsafe { g.release(a.agent as usize, h.0, r, None, wake) };
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
        self.run(a.counters, |g, _| unsafe {
            g.release(a.agent as usize, h.0, r, Some(heat), wake)
        })
    }

    /// Under one take of the latch.
    unsafe fn release_batch(&self, a: Caller<'_>, items: &mut [Releasing], wake: &mut Vec<ReqPtr>) {
        self.run(a.counters, |g, _| {
            for it in items.iter_mut().filter(|it| it.out.is_none()) {
                // SAFETY: the caller's own granted requests, linked here.
                it.out = Some(unsafe { g.release(a.agent as usize, At::from(it.head).0, it.req, it.heat, wake) });
            }
        })
    }

    unsafe fn cancel(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY: the caller's own request, linked in the queue of `h`.
        self.run(a.counters, |g, _| unsafe { g.cancel(a.agent as usize, h.0, r, wake) })
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

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    use super::*;
    use crate::id::TableId;

    /// Several agents each take and release a stream of distinct row
    /// locks: partitioned, each agent's emptied slots return to its own
    /// free list, the slab stays within what the lists may hold noted, the
    /// locks spread over the map's partitions, and a lock released and
    /// taken again by another agent keeps its slot while it is mapped; with
    /// one partition, the agents share one map and one pair of lists.
    #[test]
    fn slots_return_to_their_agents_and_the_slab_stays_bounded() {
        let mut q = Queues::<PARTS>::new();
        let t = TableId::new(0, 1);
        let agents = 4usize;
        let r = ReqPtr::alloc(0);
        /// 20,000 rows for each of `agents`, interleaved.
        fn stream<const P: usize>(q: &mut Queues<P>, r: ReqPtr, t: TableId, agents: usize) {
            for i in 0..20_000u64 {
                for a in 0..agents {
                    take(q, r, a, LockId::row(t, i * agents as u64 + a as u64));
                }
            }
        }
        fn take<const P: usize>(q: &mut Queues<P>, r: ReqPtr, a: usize, id: LockId) -> usize {
            // SAFETY: the test's own node, linked nowhere between calls.
            let (out, idx) = unsafe { q.acquire(a, id, r, Mode::X, false, false, false) };
            assert!(matches!(out, Outcome::Granted), "{id:?}");
            let mut wake = Vec::new();
            // SAFETY: granted just now, linked at `idx`.
            unsafe { q.release(a, idx, r, None, &mut wake) };
            assert!(wake.is_empty());
            idx
        }
        stream(&mut q, r, t, agents);
        // An agent's list notes RETIRE_BATCH emptied slots before its
        // sweep frees them, and then takes those again: each agent made
        // one batch of slots, and its slots are all noted or free.
        assert_eq!(q.queues.len(), agents * RETIRE_BATCH, "the slab");
        for a in 0..agents {
            let l = &q.lists[a];
            assert_eq!(l.free.len() + l.emptied.len(), RETIRE_BATCH, "agent {a}");
        }
        for l in &q.lists[agents..] {
            assert!(
                l.free.is_empty() && l.emptied.is_empty(),
                "lists of agents that took nothing"
            );
        }
        assert!(q.map.is_empty() && q.list.free.is_empty() && q.list.emptied.is_empty());
        let mapped: Vec<usize> = q.maps.iter().map(|m| m.len()).collect();
        assert!(mapped.iter().sum::<usize>() <= agents * RETIRE_BATCH, "{mapped:?}");
        assert!(mapped.iter().all(|&n| n > 0), "every partition in use: {mapped:?}");
        // Still mapped: taken again by another agent, the same slot.
        let id = LockId::row(t, 20_000 * agents as u64 - 1);
        let first = q.map_mut(q.part(id))[&id];
        assert_eq!(take(&mut q, r, 0, id), first);
        let mut snap = Vec::new();
        q.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "no lock left behind");

        // One partition (the latched global table, the server): one map,
        // one pair of lists for every agent, one batch of slots.
        let mut q = Queues::<1>::new();
        stream(&mut q, r, t, agents);
        assert!(q.maps.is_empty() && q.lists.is_empty());
        assert_eq!(q.queues.len(), RETIRE_BATCH, "the slab");
        assert_eq!(q.list.free.len() + q.list.emptied.len(), RETIRE_BATCH);
        assert!(q.map.len() <= RETIRE_BATCH);
        q.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "no lock left behind");
        // SAFETY: linked nowhere any more.
        unsafe { r.free() };
    }
}
