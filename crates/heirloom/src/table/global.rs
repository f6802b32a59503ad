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

use std::collections::HashMap;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::{HeadRef, latch, latch_heat};
use crate::id::{IdBuildHasher, LockId};
use crate::inherit::Heat;
use crate::mode::Mode;
use crate::monitor::{LockInfo, describe};
use crate::queue::{Cancel, Handoff, Outcome, Queue};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;

pub(crate) struct Global {
    inner: CachePadded<Mutex<Inner>>,
}

/// Emptied queues noted before a sweep unmaps those still empty.
const RETIRE_BATCH: usize = 1024;

struct Inner {
    map: HashMap<LockId, usize, IdBuildHasher>,
    queues: Vec<Queue>,
    free: Vec<usize>,
    /// Slots that became empty since the last sweep (may repeat).
    emptied: Vec<usize>,
}

impl Inner {
    /// Notes `idx` if its queue is empty; sweeps when enough are noted.
    #[inline]
    fn retire_if_empty(&mut self, idx: usize) {
        if !self.queues[idx].is_empty() {
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
            let q = &self.queues[idx];
            if q.is_empty() && self.map.get(&q.id) == Some(&idx) {
                self.map.remove(&q.id);
                self.free.push(idx);
            }
        }
        emptied.clear();
        self.emptied = emptied; // keeps its capacity: no allocation
    }
}

impl Global {
    pub(crate) fn new() -> Self {
        Global {
            inner: CachePadded::new(Mutex::new(Inner {
                map: HashMap::default(),
                queues: Vec::new(),
                free: Vec::new(),
                emptied: Vec::with_capacity(RETIRE_BATCH),
            })),
        }
    }

    /// # Safety
    /// As [`Table::acquire`](super::Table::acquire).
    #[inline]
    pub(crate) unsafe fn acquire(
        &self,
        c: &AgentCounters,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
    ) -> (Outcome, HeadRef) {
        let (mut g, contended) = latch_heat(&self.inner, c);
        let inner = &mut *g;
        let idx = match inner.map.get(&id) {
            Some(&i) => i,
            None => {
                let i = match inner.free.pop() {
                    Some(i) => {
                        inner.queues[i].rebind(id);
                        i
                    }
                    None => {
                        inner.queues.push(Queue::new(id));
                        inner.queues.len() - 1
                    }
                };
                inner.map.insert(id, i);
                i
            }
        };
        // SAFETY: the caller's own live request (this function's contract).
        let out = unsafe { inner.queues[idx].acquire(r, mode, may_wait, contended) };
        if matches!(out, Outcome::Refused(_)) {
            inner.retire_if_empty(idx);
        }
        (out, HeadRef(idx))
    }

    #[inline]
    pub(crate) fn with<R>(&self, c: &AgentCounters, h: HeadRef, f: impl FnOnce(&mut Queue) -> R) -> R {
        let mut g = latch(&self.inner, c);
        f(&mut g.queues[h.0])
    }

    #[inline]
    pub(crate) fn release(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        let mut g = latch(&self.inner, c);
        g.queues[h.0].release(r, wake);
        g.retire_if_empty(h.0);
    }

    /// # Safety
    /// As [`Table::release_or_inherit`](super::Table::release_or_inherit).
    pub(crate) unsafe fn release_or_inherit(
        &self,
        c: &AgentCounters,
        h: HeadRef,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        let mut g = latch(&self.inner, c);
        // SAFETY: the caller's own request, linked in the queue of `h`
        // (this function's contract).
        let out = unsafe { g.queues[h.0].release_or_inherit(r, heat, wake) };
        g.retire_if_empty(h.0);
        out
    }

    /// # Safety
    /// As [`Table::cancel`](super::Table::cancel).
    pub(crate) unsafe fn cancel(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        let mut g = latch(&self.inner, c);
        // SAFETY: the caller's own request, linked in the queue of `h`.
        let out = unsafe { g.queues[h.0].cancel(r, wake) };
        g.retire_if_empty(h.0);
        out
    }

    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        let g = self.inner.lock();
        for &idx in g.map.values() {
            if !g.queues[idx].is_empty() {
                out.push(describe(&g.queues[idx], now_ns));
            }
        }
    }
}
