//! `Latched`: hash buckets of lock heads, one latch per head (Shore-MT).
//!
//! ## Structure and latches
//!
//! * A fixed array of buckets, each a latch over a short list of slots
//!   `(lock id, head)`. The bucket latch guards the list and every slot's id.
//! * A head is a latch over one [`Queue`]. The head latch guards the queue,
//!   including its `id`.
//! * A head is bound to a lock id. Rebinding an empty head to another id
//!   requires both the bucket latch and the head latch, so either latch
//!   alone suffices to read the id.
//!
//! Latch order: bucket before head; never two heads, never two buckets.
//!
//! ## Paths
//!
//! * Acquire: bucket latch, find the slot, drop the bucket latch, head
//!   latch, check that the head is still bound to the id (it can have been
//!   rebound in the gap; then retry). If no slot has the id, the bucket
//!   latch is kept while an empty head is rebound (try-latched so the order
//!   is never inverted) or a new head is allocated.
//! * Release, convert, cancel: the transaction remembers the head of each
//!   request it holds, so only the head latch is taken. A head with a linked
//!   request cannot be rebound.
//!
//! Heads are never freed while the table lives; an emptied head stays bound
//! (a hot lock finds it again at once) until an acquisition of another id in
//! the same bucket rebinds it. Memory is bounded by the peak number of
//! simultaneously live locks per bucket, not by the number of ids ever used.

use std::ptr::NonNull;

use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};

use super::{HeadRef, latch};
use crate::id::LockId;
use crate::mode::Mode;
use crate::monitor::{LockInfo, describe};
use crate::queue::{Outcome, Queue};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;

type Head = CachePadded<Mutex<Queue>>;

struct Slot {
    id: LockId,
    head: NonNull<Head>,
}

// SAFETY: `head` points to a heap head owned by the table (freed only in
// `Drop for Latched`); all access to it goes through its mutex.
unsafe impl Send for Slot {}

pub(crate) struct Latched {
    buckets: Box<[CachePadded<Mutex<Vec<Slot>>>]>,
    mask: u64,
}

// SAFETY: buckets are mutexes over `Slot`s, which are `Send`; heads are
// reached only through their mutexes.
unsafe impl Sync for Latched {}
// SAFETY: as above.
unsafe impl Send for Latched {}

impl Latched {
    pub(crate) fn new(buckets: usize) -> Self {
        let n = buckets.max(1).next_power_of_two();
        Latched {
            buckets: (0..n).map(|_| CachePadded::new(Mutex::new(Vec::new()))).collect(),
            mask: n as u64 - 1,
        }
    }

    #[inline]
    fn head(&self, h: HeadRef) -> &Head {
        // SAFETY: a `HeadRef` of this table is the address of a head it
        // allocated in `acquire`; heads are freed only when the table drops.
        unsafe { &*(h.0 as *const Head) }
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
        let bucket = &self.buckets[(id.hash64() & self.mask) as usize];
        loop {
            let slots = latch(bucket, c);
            if let Some(s) = slots.iter().find(|s| s.id == id) {
                let hp = s.head;
                drop(slots);
                // SAFETY: heads live as long as the table (module docs).
                let head = unsafe { hp.as_ref() };
                let mut q = latch(head, c);
                if q.id != id {
                    // Rebound to another lock between the two latches: retry.
                    continue;
                }
                return (q.acquire(r, mode, may_wait), HeadRef(hp.as_ptr() as usize));
            }
            let (mut q, hp) = Self::bind(slots, id);
            return (q.acquire(r, mode, may_wait), HeadRef(hp.as_ptr() as usize));
        }
    }

    /// Binds a head to `id` in a bucket that has none: an empty head of the
    /// bucket if one is free, else a new one. Returns it latched.
    #[cold]
    fn bind<'a>(mut slots: MutexGuard<'a, Vec<Slot>>, id: LockId) -> (MutexGuard<'a, Queue>, NonNull<Head>) {
        for s in slots.iter_mut() {
            // SAFETY: heads live as long as the table.
            let head: &'a Head = unsafe { &*s.head.as_ptr() };
            // try_lock: bucket-then-head is the legal order, but a head that
            // is latched right now is in use (or about to be), so it is not
            // worth waiting for; skip it.
            if let Some(mut q) = head.try_lock()
                && q.is_empty()
            {
                q.id = id;
                s.id = id;
                return (q, s.head);
            }
        }
        let head: NonNull<Head> = NonNull::from(Box::leak(Box::new(CachePadded::new(Mutex::new(Queue::new(id))))));
        slots.push(Slot { id, head });
        // SAFETY: just allocated; freed only when the table drops.
        let q = unsafe { &*head.as_ptr() }.lock();
        (q, head)
    }

    /// Runs `f` on the queue of `h` under its head latch.
    #[inline]
    pub(crate) fn with<R>(&self, c: &AgentCounters, h: HeadRef, f: impl FnOnce(&mut Queue) -> R) -> R {
        let mut q = latch(self.head(h), c);
        f(&mut q)
    }

    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        for b in self.buckets.iter() {
            let slots = b.lock();
            for s in slots.iter() {
                // SAFETY: heads live as long as the table.
                let q = unsafe { s.head.as_ref() }.lock();
                if !q.is_empty() {
                    out.push(describe(&q, now_ns));
                }
            }
        }
    }
}

impl Drop for Latched {
    fn drop(&mut self) {
        for b in self.buckets.iter_mut() {
            for s in b.get_mut().drain(..) {
                // SAFETY: allocated with `Box` in `bind`; the table is being
                // dropped, so no `HeadRef` or slot refers to it any more.
                drop(unsafe { Box::from_raw(s.head.as_ptr()) });
            }
        }
    }
}
