//! Growth of the CAS-append table: a long list is split by freezing it and
//! hanging lists below it.
//!
//! A fixed array of lists makes a transaction's cost per lock grow with
//! the locks it holds: a new request walks its whole list, requests of
//! every lock that hashes there. The table cannot rehash: a lock's
//! requests must stay in one order that every walker reads alike, and
//! they are linked without a latch. So a list that got long is *frozen*
//! instead (the tag `FROZEN` on the null link at its end: an append's CAS
//! expects an untagged null, so nothing is appended to a frozen list any
//! more), and lists below it, [`FANOUT`] of them chosen by the next bits
//! of a lock's hash, take the appends from then on. A frozen list only
//! shrinks, as its requests are released and unlinked; its end keeps the
//! tag (an unlink copies it into the predecessor's link, `succ`).
//!
//! A lock's requests are then on one *route*: its bucket's list, then the
//! list below it that the lock's hash names, and so on down to the first
//! list that is not frozen (the leaf, where appends go). Every request in
//! a frozen list came before every request below it (it was appended
//! before the freeze, they after an appender saw it), so the route read
//! from the top is the lock's arrival order, as one list's was. A walk
//! for a lock (`LatchFree::walk`) reads its route's lists in order, so
//! acquire, release, the read-after-write step, the wake-up scans,
//! blockers and inheritance judge the same order as before, over more than
//! one list. The counts and words of the module docs stay the bucket's
//! (the top list's): every waiter of a lock counts itself in its bucket's
//! `waiting`, and every releaser reads it there, so the Dekker pairs as
//! before.
//!
//! Who splits: an appender whose walk met [`SPLIT_AT`] requests of other
//! locks in the leaf. It makes the leaf's lists below (one allocation,
//! published by a CAS of the leaf's `child`; a loser frees its own), then
//! freezes the leaf's end with one CAS, and walks again, now down into the
//! new list. A lock with many requests of its own does not split its
//! list: only other locks' requests are counted. Lists below are never
//! freed before the table: a table that once held many locks keeps its
//! lists, as the latched table keeps its grown buckets.
//!
//! Only the CAS append splits. The swap append links without looking at
//! the end of its list (one swap of the tail), so a freeze could not turn
//! it away; the swap table keeps its fixed buckets, more of them
//! (`DEFAULT_SWAP_BUCKETS`).

use super::*;
use crate::sync::AtomicPtr;

/// Tag on the null link at the end of a list: frozen, appends go below.
pub(super) const FROZEN: usize = 2;

/// Lists below a split list, as a power of two (16: a split costs one
/// kilobyte, and spreads a list of [`SPLIT_AT`] other locks' requests
/// to about one each).
const FANOUT_BITS: u32 = if cfg!(heirloom_loom) { 1 } else { 4 };
pub(super) const FANOUT: usize = 1 << FANOUT_BITS;

/// Requests of other locks in the leaf that make an appender split it
/// (`LatchFree::split_at`; the models set fewer, to see splits with few
/// requests).
pub(super) const SPLIT_AT: u32 = 8;

/// Levels below the buckets at the most (the handle keeps a request's
/// level in four bits, `At::DEPTH`).
pub(super) const MAX_DEPTH: u32 = 15;

/// A list below a split one: its head, and its own lists below once it is
/// split. A line of its own, as a bucket's head is.
#[repr(C, align(64))]
pub(super) struct Sub {
    head: epoch::Atomic<Request>,
    child: AtomicPtr<Sub>,
}

/// One list of the table: a bucket's (the top of its routes) or one below.
#[derive(Clone, Copy)]
pub(super) struct List<'a> {
    pub(super) head: &'a epoch::Atomic<Request>,
    child: &'a AtomicPtr<Sub>,
}

impl Bucket {
    /// The bucket's own list.
    #[inline(always)]
    pub(super) fn list(&self) -> List<'_> {
        List {
            head: &self.head,
            child: &self.child,
        }
    }
}

impl Sub {
    #[inline]
    fn list(&self) -> List<'_> {
        List {
            head: &self.head,
            child: &self.child,
        }
    }
}

/// Where a lock's route goes below its bucket: its hash, past the bits
/// that chose the bucket. `hash == None`: one list only (a walk stops at
/// its end, frozen or not).
#[derive(Clone, Copy)]
pub(super) struct Route {
    hash: Option<u64>,
}

impl Route {
    /// A walk of one list, that does not go down (the snapshot's, and a
    /// swap-appended table's).
    pub(super) const ONE: Route = Route { hash: None };

    /// The lists below the bucket are chosen by `hash >> bucket_bits`,
    /// [`FANOUT_BITS`] a level.
    #[inline(always)]
    pub(super) fn new(hash: u64, bucket_bits: u32) -> Route {
        Route {
            hash: Some(hash >> bucket_bits),
        }
    }

    /// The index at `depth` (1: just below the bucket).
    #[inline]
    fn index(self, depth: u32) -> Option<usize> {
        let h = self.hash?;
        let shift = (depth - 1) * FANOUT_BITS;
        Some((h.checked_shr(shift).unwrap_or(0) as usize) & (FANOUT - 1))
    }
}

/// The end of a walk that read a whole route: the leaf's null link, where
/// a CAS appends.
pub(super) struct End<'g> {
    /// The null link at the end of the leaf (the head, if it is empty).
    pub(super) link: &'g epoch::Atomic<Request>,
    /// The leaf.
    pub(super) list: List<'g>,
    /// Its depth (0: the bucket's own list).
    pub(super) depth: u32,
    /// Requests the walk read in the leaf.
    pub(super) len: u32,
}

impl<'a> List<'a> {
    /// The list below this one at `route`'s `depth` (`None`: not split,
    /// or the route does not go down).
    #[inline]
    pub(super) fn below(self, route: Route, depth: u32) -> Option<List<'a>> {
        let i = route.index(depth)?;
        // Acquire: pairs with the CAS that published the lists (`split`),
        // so their heads are initialised. A walker that read the FROZEN
        // tag (Acquire, from the freeze or an unlink that copied it)
        // finds it set: the publication comes before the freeze.
        let p = self.child.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` points to FANOUT lists that live as long as the table
        // (freed only by `free_below`, from the table's `drop`).
        Some(unsafe { &*p.add(i) }.list())
    }

    /// Every list below this one, in index order.
    fn each_below(self, mut f: impl FnMut(List<'a>)) {
        let p = self.child.load(Ordering::Acquire);
        if p.is_null() {
            return;
        }
        for i in 0..FANOUT {
            // SAFETY: as in `below`.
            f(unsafe { &*p.add(i) }.list());
        }
    }

    /// Calls `f` for this list and every list below it, parents before
    /// children (so a lock's requests come in its route's order).
    pub(super) fn each_list(self, f: &mut impl FnMut(List<'a>)) {
        f(self);
        self.each_below(|l| l.each_list(f));
    }

    /// Splits this list, the leaf whose end is `link` (a null link): makes
    /// the lists below unless somebody did, then freezes the end. Whether
    /// the freeze won or not (an append, a mark or another freeze came
    /// first), the caller walks again.
    pub(super) fn split(self, link: &epoch::Atomic<Request>, g: &Guard) {
        if self.child.load(Ordering::Acquire).is_null() {
            let fresh = Box::into_raw(Box::new(std::array::from_fn::<Sub, FANOUT, _>(|_| Sub {
                head: epoch::Atomic::null(),
                child: AtomicPtr::new(ptr::null_mut()),
            })))
            .cast::<Sub>();
            // AcqRel: Release publishes the heads; Acquire as `below`'s.
            if self
                .child
                .compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // SAFETY: ours, published nowhere.
                drop(unsafe { Box::from_raw(fresh.cast::<[Sub; FANOUT]>()) });
            }
        }
        // Release: the lists below happen before any walker that reads the
        // tag. Expects an untagged null: an append, a mark or a freeze that
        // came first wins, and the caller's walk sees it.
        let frozen = Shared::null().with_tag(FROZEN);
        let _ = noted(link).compare_exchange(Shared::null(), frozen, Ordering::Release, Ordering::Relaxed, g);
    }

    /// Frees the lists below this one (the table's `drop`: nothing else
    /// reads them any more).
    pub(super) fn free_below(self) {
        self.each_below(|l| l.free_below());
        let p = self.child.swap(ptr::null_mut(), Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: allocated by `split` as one array, and unpublished now.
            drop(unsafe { Box::from_raw(p.cast::<[Sub; FANOUT]>()) });
        }
    }
}

/// The link to copy into a predecessor when the marked request whose
/// `next` is `next` is unlinked: its successor, and the end's FROZEN tag if
/// it is the last of a frozen list.
#[inline(always)]
pub(super) fn succ(next: Shared<'_, Request>) -> Shared<'_, Request> {
    next.with_tag(next.tag() & FROZEN)
}

/// Is `next` a link that a request's mark found something behind: a
/// successor, or the frozen end of a list, below which later requests of
/// the same lock may be (so the releaser owes the wake-up duty)?
#[inline(always)]
pub(super) fn behind(next: Shared<'_, Request>) -> bool {
    !next.with_tag(0).is_null() || next.tag() & FROZEN != 0
}
