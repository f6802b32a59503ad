//! The latched table's buckets: an array of them ([`Dir`]), the walk of a
//! chain without the bucket latch, and the growth that doubles the array
//! (the module docs of `latched.rs`, "Growth").

use std::ptr;

use crossbeam_utils::CachePadded;

use super::head::NO_LANE;
use super::{Head, KEEP_HEADS, Latched};
use crate::id::LockId;
use crate::latch::Latch;
use crate::latch::latch;
use crate::stats::AgentCounters;
use crate::sync::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// A bucket: its latch, its chain, and on the same cache line an index
/// of up to [`KEEP_HEADS`] heads (the *kept* heads, one a *lane*) with a
/// tag of the lock each is bound to, so that a lookup reads this one line
/// and a head's only where its tag matches (a miss, most locks of a
/// workload of many rows, reads no head at all).
///
/// A lane is empty (tag zero) until a head is bound in it, and empty again
/// once its head leaves for an agent's spares (`Latched::detach`): lanes
/// fill and empty in any order. The chain holds the `extra` heads only,
/// those bound while every lane was taken; they stay until a growth. Written
/// under the bucket latch (and a growth's); read without it as hints,
/// exact under it.
pub(super) struct Bucket {
    /// Guards binding and the chain's growth.
    pub(super) latch: Latch<()>,
    /// The chain of extra heads, newest first.
    pub(super) first: AtomicPtr<CachePadded<Head>>,
    /// The kept heads, a lane each (Release stores when a head is put in a
    /// lane, so that a lookup sees it initialised; null, or a stale
    /// pointer, while the lane's tag is zero).
    kept: [AtomicPtr<CachePadded<Head>>; KEEP_HEADS],
    /// Sixteen bits a lane: the [`tag`] of the lock its head is bound to,
    /// zero while the lane is empty (a tag is never zero).
    tags: AtomicU64,
    /// The chain's heads.
    extra: AtomicU32,
}

// The latch, the chain and the index share one cache line; the tags of
// the kept heads, one word.
#[cfg(all(target_pointer_width = "64", not(heirloom_loom)))]
const _: () = assert!(std::mem::size_of::<Bucket>() <= 64);
const _: () = assert!(KEEP_HEADS <= 4);

/// The low bits of the lanes in use (all four, but one under loom).
const LANES: u64 = 0x0001_0001_0001_0001 >> (16 * (4 - KEEP_HEADS));

/// A lock's tag in its bucket's index: sixteen bits of its hash that pick
/// no bucket (those are the low bits), with the lowest set, so never zero
/// (an empty lane is, `Bucket::free_lane`).
#[inline]
pub(super) fn tag(hash: u64) -> u16 {
    (hash >> 48) as u16 | 1
}

/// The top bit of each 16-bit lane of `tags` that equals `t` (which is
/// not zero, so an empty lane never matches, nor a lane beyond
/// [`KEEP_HEADS`]): the four compares in a few word operations. Exact
/// (no carry crosses a lane: each lane's low fifteen bits are added
/// apart from its top bit).
#[inline]
pub(super) fn lanes_equal(tags: u64, t: u16) -> u64 {
    const LOW: u64 = 0x7fff_7fff_7fff_7fff;
    let x = tags ^ (u64::from(t) * 0x0001_0001_0001_0001);
    // A lane's top bit ends up set iff the lane of `x` is zero.
    !(((x & LOW) + LOW) | x | LOW)
}

impl Bucket {
    fn new() -> Self {
        Bucket {
            latch: Latch::new(()),
            first: AtomicPtr::new(ptr::null_mut()),
            kept: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            tags: AtomicU64::new(0),
            extra: AtomicU32::new(0),
        }
    }

    /// An empty lane, the first, if there is one (caller holds the latch).
    #[inline]
    pub(super) fn free_lane(&self) -> Option<usize> {
        // A tag has its low bit set (`tag`), an empty lane is zero.
        let empty = !self.tags.load(Ordering::Relaxed) & LANES;
        (empty != 0).then(|| (empty.trailing_zeros() / 16) as usize)
    }

    /// Whether lane `i` keeps head `p` (caller holds the latch).
    #[inline]
    pub(super) fn keeps(&self, i: usize, p: *mut CachePadded<Head>) -> bool {
        self.kept.get(i).is_some_and(|k| k.load(Ordering::Relaxed) == p)
            && self.tags.load(Ordering::Relaxed) >> (16 * i) & 0xffff != 0
    }

    /// The heads of the bucket: the kept ones, then the chain's (caller
    /// holds the latch, or every bucket latch, or the table alone).
    pub(super) fn heads(&self, mut f: impl FnMut(*mut CachePadded<Head>)) {
        let tags = self.tags.load(Ordering::Relaxed);
        for i in 0..KEEP_HEADS {
            if (tags >> (16 * i)) as u16 != 0 {
                f(self.kept(i));
            }
        }
        let mut p = self.first.load(Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: heads live as long as the table. (The link is read
            // first: `f` may relink the head, as a growth does.)
            let next = unsafe { &*p }.next.load(Ordering::Acquire);
            f(p);
            p = next;
        }
    }

    /// The kept head in slot `i`, or null (caller holds the latch, or
    /// reads a hint).
    #[inline]
    pub(super) fn kept(&self, i: usize) -> *mut CachePadded<Head> {
        // Acquire: pairs with the Release in `keep`, so that the head is
        // seen initialised.
        self.kept[i].load(Ordering::Acquire)
    }

    /// Adds head `p`, bound to a lock tagged `t`, to the index: in lane
    /// `i` if `i` is a lane (an empty one), else as an extra. Caller holds
    /// the latch (or builds an array nobody sees yet) and links an extra
    /// at the chain's front itself, after this.
    pub(super) fn keep(&self, i: usize, p: *mut CachePadded<Head>, t: u16) {
        if i < KEEP_HEADS {
            debug_assert_eq!(self.tags.load(Ordering::Relaxed) >> (16 * i) & 0xffff, 0);
            self.kept[i].store(p, Ordering::Release);
            self.retag(i, t);
        } else {
            self.extra
                .store(self.extra.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }

    /// Empties lane `i` (caller holds the latch, and its head's, and takes
    /// the head out of the table).
    #[inline]
    pub(super) fn unkeep(&self, i: usize) {
        let shift = 16 * i;
        let tags = self.tags.load(Ordering::Relaxed);
        self.tags.store(tags & !(0xffff << shift), Ordering::Relaxed);
        self.kept[i].store(ptr::null_mut(), Ordering::Relaxed);
    }

    /// Lane `i`'s head is bound to a lock tagged `t` now (caller holds the
    /// latch and the head's).
    pub(super) fn retag(&self, i: usize, t: u16) {
        let shift = 16 * i;
        let tags = self.tags.load(Ordering::Relaxed);
        let tags = tags & !(0xffff << shift) | u64::from(t) << shift;
        self.tags.store(tags, Ordering::Relaxed);
    }

    /// The extra heads (caller holds the latch, or reads a hint).
    #[inline]
    pub(super) fn extra(&self) -> u32 {
        self.extra.load(Ordering::Relaxed)
    }
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
            buckets: (0..n).map(|_| CachePadded::new(Bucket::new())).collect(),
            mask: n as u64 - 1,
        })
    }

    /// `id`'s bucket and its tag there.
    #[inline]
    pub(super) fn slot(&self, id: LockId) -> (&Bucket, u16) {
        let h = id.hash64();
        (&self.buckets[(h & self.mask) as usize], tag(h))
    }

    /// The index of `b`, one of these buckets.
    #[inline]
    pub(super) fn index_of(&self, b: &Bucket) -> usize {
        let at = ptr::from_ref(b).addr() - self.buckets.as_ptr().addr();
        debug_assert!(at / std::mem::size_of::<CachePadded<Bucket>>() < self.buckets.len());
        at / std::mem::size_of::<CachePadded<Bucket>>()
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

impl<const SPARES: bool> Latched<SPARES> {
    /// Looks in `bucket` (`id`'s in `d`, where its tag is `t`) for a head
    /// bound to `words` (`id`'s): the kept heads whose tag is `t`, then
    /// the extra ones. Exact under the bucket latch (while no growth runs:
    /// a head bound to a lock stays bound and in its bucket while it has
    /// requests). Without it, a hint: a tag or a count read as it changes
    /// may make it miss a head that is there, and a growth relinks the
    /// chains, so a walk beside one may miss too (see
    /// [`Latched::find_exact`]); it never returns a head not bound to `id`
    /// at some moment of the look.
    #[inline]
    pub(super) fn find(&self, d: &Dir, bucket: &Bucket, words: (u64, u64), t: u16) -> *mut CachePadded<Head> {
        let mut hits = lanes_equal(bucket.tags.load(Ordering::Relaxed), t);
        while hits != 0 {
            let p = bucket.kept((hits.trailing_zeros() / 16) as usize);
            // SAFETY: heads live as long as the table.
            if !p.is_null() && unsafe { &*p }.bound_to(words) {
                return p;
            }
            hits &= hits - 1;
        }
        let mut n = bucket.extra();
        if n == 0 {
            return ptr::null_mut();
        }
        // Acquire: pairs with the Release publication in `bind_slow`.
        let mut p = bucket.first.load(Ordering::Acquire);
        let mut budget = RECHECK_AFTER;
        while n > 0 && !p.is_null() {
            // SAFETY: heads live as long as the table.
            let h = unsafe { &*p };
            if h.bound_to(words) {
                return p;
            }
            p = h.next.load(Ordering::Acquire);
            n -= 1;
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
        let (bucket, t) = d.slot(id);
        self.find(d, bucket, id.words(), t)
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
            let (bucket, t) = d.slot(id);
            let _b = latch(&bucket.latch, c);
            if ptr::eq(self.dir(), d) {
                return self.find(d, bucket, id.words(), t);
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
            b.heads(|p| {
                // SAFETY: heads live as long as the table.
                let h = unsafe { &*p };
                let hash = h.id().hash64();
                let i = (hash & to.mask) as usize;
                // The first heads a bucket gets fill its lanes; the others
                // go on its chain.
                let lane = lens[i] as usize;
                to.buckets[i].keep(lane, p, tag(hash));
                if lane < KEEP_HEADS {
                    if SPARES {
                        h.set_lane(i, lane);
                    }
                } else {
                    h.lane.store(NO_LANE, Ordering::Relaxed);
                    h.next
                        .store(to.buckets[i].first.load(Ordering::Relaxed), Ordering::Relaxed);
                    to.buckets[i].first.store(p, Ordering::Relaxed);
                }
                lens[i] += 1;
            });
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
