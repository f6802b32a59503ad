//! The latched table's buckets: an array of them ([`Dir`]), the walk of a
//! chain without the bucket latch, and the growth that doubles the array
//! (the module docs of `latched.rs`, "Growth").

use std::ptr;

use crossbeam_utils::CachePadded;

use super::{Head, KEEP_HEADS, Latched};
use crate::id::LockId;
use crate::latch::Latch;
use crate::latch::latch;
use crate::stats::AgentCounters;
use crate::sync::{AtomicPtr, Ordering};

pub(super) struct Bucket {
    /// Guards binding and the chain's growth.
    pub(super) latch: Latch<()>,
    /// The chain, newest first.
    pub(super) first: AtomicPtr<CachePadded<Head>>,
}

/// One size of the table: its buckets. A growth ([`Latched::grow`])
/// replaces it with one twice as large and keeps the old one until the
/// table drops (a walk or a latch may still be on one of its buckets; the
/// old arrays together are smaller than the newest).
///
/// Aligned to two cache lines (the adjacent-line prefetch's pair): every
/// lookup reads `buckets` and `mask`, so no other allocation may share
/// their line and write it.
#[repr(align(128))]
pub(super) struct Dir {
    pub(super) buckets: Box<[CachePadded<Bucket>]>,
    mask: u64,
}

impl Dir {
    pub(super) fn new(n: usize) -> Box<Dir> {
        debug_assert!(n.is_power_of_two());
        Box::new(Dir {
            buckets: (0..n)
                .map(|_| {
                    CachePadded::new(Bucket {
                        latch: Latch::new(()),
                        first: AtomicPtr::new(ptr::null_mut()),
                    })
                })
                .collect(),
            mask: n as u64 - 1,
        })
    }

    #[inline]
    pub(super) fn bucket(&self, id: LockId) -> &Bucket {
        &self.buckets[(id.hash64() & self.mask) as usize]
    }
}

/// An array the table grew out of, freed when the table drops.
pub(super) struct Retired(pub(super) *mut Dir);

// SAFETY: an array of latches and atomics, which any thread may use; the
// pointer is only freed by `Drop for Latched`.
unsafe impl Send for Retired {}

/// A bucket walk that has gone this many heads checks whether the table
/// grew meanwhile (a growth relinks the chains, so a walk caught in one may
/// go round in circles until it ends).
const RECHECK_AFTER: u32 = if cfg!(heirloom_loom) { 1 } else { 64 };

impl Latched {
    /// Walks `bucket` (`id`'s in `d`) for a head bound to `words` (`id`'s). Exact while no
    /// growth runs: a head bound to a lock stays bound and in its chain
    /// while it has requests. A growth relinks the chains, so a walk beside
    /// one may miss the head (see [`Latched::find_exact`]); it never
    /// returns a head not bound to `id` at some moment of the walk.
    #[inline]
    pub(super) fn find(&self, d: &Dir, bucket: &Bucket, words: (u64, u64)) -> *mut CachePadded<Head> {
        // Acquire: pairs with the Release publication in `bind_slow`.
        let mut p = bucket.first.load(Ordering::Acquire);
        let mut budget = RECHECK_AFTER;
        while !p.is_null() {
            // SAFETY: heads live as long as the table.
            let h = unsafe { &*p };
            if h.bound_to(words) {
                return p;
            }
            p = h.next.load(Ordering::Acquire);
            budget -= 1;
            if budget == 0 {
                if !ptr::eq(self.dir(), d) {
                    // Grown meanwhile: the walk may be going round a chain
                    // being relinked. A miss sends the caller to the latch.
                    return ptr::null_mut();
                }
                budget = RECHECK_AFTER;
            }
        }
        ptr::null_mut()
    }

    /// [`Latched::find`] in `id`'s bucket of the buckets now.
    #[inline]
    pub(super) fn find_now(&self, id: LockId) -> *mut CachePadded<Head> {
        let d = self.dir();
        self.find(d, d.bucket(id), id.words())
    }

    /// The head bound to `id`, or null if none is: [`Latched::find`], and
    /// on a miss the walk again under the bucket latch of the table's
    /// buckets now, which no growth can be relinking (a growth holds every
    /// bucket latch), and with which no head can be bound.
    #[cold]
    pub(super) fn find_exact(&self, c: &AgentCounters, id: LockId) -> *mut CachePadded<Head> {
        let p = self.find_now(id);
        if !p.is_null() {
            return p;
        }
        loop {
            let d = self.dir();
            let bucket = d.bucket(id);
            let _b = latch(&bucket.latch, c);
            if ptr::eq(self.dir(), d) {
                return self.find(d, bucket, id.words());
            }
        }
    }

    /// Doubles the buckets of `from` unless the table has grown from it
    /// already: under every bucket latch of `from` (no head is bound or
    /// added meanwhile, and every id word is exact), each head moves to
    /// its bucket in the new array, which is then published; the latches
    /// then let the waiters for them find the new array
    /// ([`Latched::latched_head_slow`]). Heads stay where they are, so a
    /// request's handle (the head's address) stays good. Called with no
    /// latch held.
    #[cold]
    #[inline(never)]
    pub(super) fn grow(&self, from: &Dir) {
        let mut grown = self.grown.lock();
        if !ptr::eq(self.dir(), from) || from.buckets.len() >= self.most {
            return;
        }
        let held: Vec<_> = from.buckets.iter().map(|b| b.latch.lock()).collect();
        let to = Dir::new(from.buckets.len() * 2);
        let mut lens = vec![0u32; to.buckets.len()];
        for b in from.buckets.iter() {
            let mut p = b.first.load(Ordering::Relaxed);
            while !p.is_null() {
                // SAFETY: heads live as long as the table.
                let h = unsafe { &*p };
                let next = h.next.load(Ordering::Relaxed);
                let i = (h.id().hash64() & to.mask) as usize;
                h.next
                    .store(to.buckets[i].first.load(Ordering::Relaxed), Ordering::Relaxed);
                to.buckets[i].first.store(p, Ordering::Relaxed);
                lens[i] += 1;
                p = next;
            }
        }
        let excess = lens.iter().map(|&n| (n as usize).saturating_sub(KEEP_HEADS)).sum();
        self.excess.store(excess, Ordering::Relaxed);
        // Release: a walker that loads the new array sees its chains.
        let old = self.dir.swap(Box::into_raw(to), Ordering::AcqRel);
        // Kept, not freed, until the table drops: walks and latch waiters
        // may still be on it.
        grown.push(Retired(old));
        drop(held);
    }
}
