//! `Global`: one latch over the whole lock table.
//!
//! Every acquire, release and scan serialises on one mutex, as lock managers
//! did before their hash tables were partitioned (MySQL's `lock_sys->mutex`).
//! It is the baseline the other tables are measured against.
//!
//! Queues live in a slab; a map from lock id to slab index finds them. An
//! emptied queue goes back to a free list with its capacity, and its map
//! entry is removed, so memory follows the number of live locks and the warm
//! path does not allocate.

use std::collections::HashMap;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::{HeadRef, latch};
use crate::id::{IdBuildHasher, LockId};
use crate::mode::Mode;
use crate::monitor::{LockInfo, describe};
use crate::queue::{Cancel, Outcome, Queue};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;

pub(crate) struct Global {
    inner: CachePadded<Mutex<Inner>>,
}

struct Inner {
    map: HashMap<LockId, usize, IdBuildHasher>,
    queues: Vec<Queue>,
    free: Vec<usize>,
}

impl Inner {
    /// Returns `idx`'s queue to the free list if it is empty.
    fn retire_if_empty(&mut self, idx: usize) {
        let q = &self.queues[idx];
        if q.is_empty() {
            self.map.remove(&q.id);
            self.free.push(idx);
        }
    }
}

impl Global {
    pub(crate) fn new() -> Self {
        Global {
            inner: CachePadded::new(Mutex::new(Inner {
                map: HashMap::default(),
                queues: Vec::new(),
                free: Vec::new(),
            })),
        }
    }

    #[inline]
    pub(crate) fn acquire(
        &self,
        c: &AgentCounters,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
    ) -> (Outcome, HeadRef) {
        let mut g = latch(&self.inner, c);
        let inner = &mut *g;
        let idx = match inner.map.get(&id) {
            Some(&i) => i,
            None => {
                let i = match inner.free.pop() {
                    Some(i) => {
                        inner.queues[i].id = id;
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
        let out = inner.queues[idx].acquire(r, mode, may_wait);
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

    pub(crate) fn cancel(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        let mut g = latch(&self.inner, c);
        let out = g.queues[h.0].cancel(r, wake);
        g.retire_if_empty(h.0);
        out
    }

    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        let g = self.inner.lock();
        for &idx in g.map.values() {
            out.push(describe(&g.queues[idx], now_ns));
        }
    }
}
