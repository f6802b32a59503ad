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
//! locks in the leaf that are not waiting. It makes the leaf's lists below
//! (one allocation, published by a CAS of the leaf's `child`; a loser
//! frees its own), then freezes the leaf's end with one CAS, and walks
//! again, now down into the new list. A lock with many requests of its
//! own does not split its list: only other locks' requests are counted,
//! and of those only the ones not waiting. What a split is for is held
//! locks, which stay until their transactions end (one transaction's long
//! run of locks, or many transactions' locks that share a bucket); a hot
//! lock's queue of waiters drains by itself, and splitting cannot part a
//! lock from its own requests, so counting its waiters made a bucket that
//! a hot lock shares with colder ones split level after level for nothing
//! but a deeper route of frozen lists for the hot lock (MEASUREMENTS.md,
//! "Lists that split for granted requests only"). Lists below are never
//! freed before the table: a table that once held many locks keeps its
//! lists, as the latched table keeps its grown buckets.
//!
//! ## The swap-appended bucket
//!
//! The swap append links without looking at the end of its list (one
//! swap of the tail), so a freeze of the end cannot turn it away. Its
//! bucket's list is frozen by taking the tail instead (`split_swapped`):
//! the splitter, an appender whose walk met [`SPLIT_AT`] requests of
//! other locks ahead of its own, publishes the lists below (with the
//! bucket's *end*, a request that is never in a list), swaps the end into
//! the tail, links the FROZEN tag behind the request it swapped out, as an
//! append links itself (`link`), and then tags the bucket's `child`
//! ([`TOP_FROZEN`]). The lists below are CAS-appended and split as above.
//!
//! An appender that reads the tag goes below without swapping: the CAS
//! append, whose walk reads the bucket's list down to its frozen end
//! (`walk_swapped`, waiting for links on their way) and then the route.
//! One whose swap came before the end's is in the list, ahead of the
//! freeze, and judged as before. One whose swap came after (it read the
//! child untagged, then swapped) is *behind the end*: linked behind the
//! end or behind another such request, in a chain that no walk reads, as
//! a walk of the list stops at its frozen end. Its own walk ahead of it
//! tells it so (it reaches the frozen end, not its request), and it takes
//! its node back (`reclaim_behind_end`): by a CAS of the tail from its
//! request back to the end, or, if another appender swapped meanwhile,
//! once that one's link behind it has landed (the only write to its node
//! that can still come). No walk ever read it, so nobody waited for it and
//! it is not retired: the CAS append then links the same node below.

use super::*;
use crate::sync::AtomicPtr;

/// Tag on the null link at the end of a list: frozen, appends go below.
pub(super) const FROZEN: usize = 2;

/// Tag on a swap-appended bucket's `child` (the lists' address): its list
/// is frozen, and its frozen end linked; appends go below without a swap.
/// Untagged and not null: the freeze is under way.
pub(super) const TOP_FROZEN: usize = 1;

/// The lists below a swap-appended bucket, with its end: the request the
/// splitter swaps into the tail, behind which appenders that swapped after
/// the freeze link (`split_swapped`). Never in a list, never granted.
#[repr(C)]
struct Top {
    subs: [Sub; FANOUT],
    end: Request,
}

/// The lists' address in a bucket's `child`, untagged.
#[inline(always)]
fn untagged(p: *mut Sub) -> *mut Sub {
    p.map_addr(|a| a & !TOP_FROZEN)
}

/// Lists below a split list, as a power of two (16: a split costs one
/// kilobyte, and spreads a list of [`SPLIT_AT`] other locks' requests
/// to about one each).
const FANOUT_BITS: u32 = if cfg!(heirloom_loom) { 1 } else { 4 };
pub(super) const FANOUT: usize = 1 << FANOUT_BITS;

/// Requests of other locks in the leaf, not waiting, that make an
/// appender split it (`LatchFree::split_at`; the models set fewer, to see
/// splits with few requests).
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
        let p = untagged(self.child.load(Ordering::Acquire));
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` points to FANOUT lists that live as long as the table
        // (freed only by `free_below` or `free_top`, from the table's `drop`).
        Some(unsafe { &*p.add(i) }.list())
    }

    /// Every list below this one, in index order.
    fn each_below(self, mut f: impl FnMut(List<'a>)) {
        let p = untagged(self.child.load(Ordering::Acquire));
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

impl Bucket {
    /// Swap append: is the bucket's list frozen, its end linked? Then an
    /// append goes below without a swap. Acquire: pairs with the tag's
    /// store, after the end's link (`split_swapped`).
    #[inline(always)]
    pub(super) fn frozen_top(&self) -> bool {
        self.child.load(Ordering::Acquire).addr() & TOP_FROZEN != 0
    }

    /// Swap append: the bucket's end (`Top::end`), once the lists below
    /// are published.
    fn end(&self) -> Option<&Request> {
        let p = untagged(self.child.load(Ordering::Acquire));
        // SAFETY: a swap-appended bucket's lists are a `Top` (`split_swapped`),
        // which lives as long as the table.
        (!p.is_null()).then(|| unsafe { &(*p.cast::<Top>()).end })
    }

    /// Swap append: freezes the bucket's list, whose walk by the caller
    /// (an appender linked in it) met `split_at` requests of other locks
    /// not waiting:
    /// publishes the lists below with the end, unless somebody did; the
    /// one who published swaps the end into the tail, links the frozen end
    /// behind the request it swapped out, and tags `child`. See the module
    /// docs.
    #[cold]
    #[inline(never)]
    pub(super) fn split_swapped(&self, g: &Guard) {
        if !self.child.load(Ordering::Acquire).is_null() {
            return;
        }
        let fresh = Box::into_raw(Box::new(Top {
            subs: std::array::from_fn(|_| Sub {
                head: epoch::Atomic::null(),
                child: AtomicPtr::new(ptr::null_mut()),
            }),
            end: Request::new(u32::MAX),
        }));
        // AcqRel: Release publishes the heads and the end (to walkers that
        // go below, and to appenders whose swap reads the end); Acquire as
        // `below`'s.
        if self
            .child
            .compare_exchange(
                ptr::null_mut(),
                fresh.cast::<Sub>(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: ours, published nowhere.
            drop(unsafe { Box::from_raw(fresh) });
            return;
        }
        // SAFETY: published above; lives as long as the table.
        let end = Shared::from(unsafe { &(*fresh).end } as *const Request);
        // AcqRel as an append's swap: an appender whose swap comes after
        // this one reads the published lists through it (its Acquire swap
        // reads from this release sequence), so it finds them when it
        // learns that it is behind the end. The caller's own request is
        // linked, so the tail is not null.
        let old = noted(&self.tail).swap(end, Ordering::AcqRel, g);
        debug_assert!(!old.is_null(), "a frozen list is not empty");
        // The frozen end linked as an append links itself. Release: the
        // lists below, published before, happen before a walker that reads
        // the tag.
        super::list::link(old, Shared::null().with_tag(FROZEN), g);
        // Release: the end's link happens before an appender that reads the
        // tag walks down to it. Nobody else writes `child` any more.
        self.child
            .store(fresh.cast::<Sub>().map_addr(|a| a | TOP_FROZEN), Ordering::Release);
    }

    /// Swap append: the caller's request `new`, found behind the bucket's
    /// end (its swap came after the freeze's), is taken back: nobody read
    /// it. If the tail is still `new`, a CAS puts the end back; else an
    /// appender swapped it out and is linking behind it, the last write to
    /// it that can come: waits for that link. The caller may then link the
    /// node anew.
    #[cold]
    pub(super) fn reclaim_behind_end(&self, new: Shared<'_, Request>, c: &AgentCounters, g: &Guard) {
        let Some(end) = self.end() else {
            unreachable!("behind the end of a list that was never frozen")
        };
        let end = Shared::from(end as *const Request);
        // Relaxed: only the tail's own order matters (a later appender's
        // swap reads the end, which it only links behind).
        if noted(&self.tail)
            .compare_exchange(new, end, Ordering::Relaxed, Ordering::Relaxed, g)
            .is_ok()
        {
            return;
        }
        let mut pauses = 0;
        // SAFETY: the caller's own node.
        let q = unsafe { new.deref() };
        // Acquire: the link's CAS comes before our reuse of the node.
        while q.next.load(Ordering::Acquire, g).with_tag(0).is_null() {
            super::list::link_pending(c, &mut pauses);
        }
    }
}

impl List<'_> {
    /// Frees a swap-appended bucket's lists below, and their end (the
    /// table's `drop`).
    pub(super) fn free_top(self) {
        self.each_below(|l| l.free_below());
        let p = untagged(self.child.swap(ptr::null_mut(), Ordering::Relaxed));
        if !p.is_null() {
            // SAFETY: allocated by `split_swapped` as one `Top`, and
            // unpublished now.
            drop(unsafe { Box::from_raw(p.cast::<Top>()) });
        }
    }
}

impl<const SWAP: bool> LatchFree<SWAP> {
    /// Walks every list of the bucket `b`, each before the lists below it
    /// (so that a lock's requests come in its route's order), calling
    /// `visit(i, n)` as a walk's visitor, `i` the list's number in that
    /// order (a `None` starts the walk of list `i` again).
    pub(super) fn walk_each_list<'g>(
        b: &'g Bucket,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(usize, Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) {
        let mut i = 0;
        if SWAP {
            // The bucket's own list is appended by swaps, those below by CASes.
            Self::walk_swapped(b, c, g, |n| visit(0, n));
            i = 1;
        }
        let mut walk = |l: List<'g>| {
            Self::walk_list(l, c, g, |n| visit(i, n));
            i += 1;
        };
        if SWAP {
            b.list().each_below(|l| l.each_list(&mut walk));
        } else {
            b.list().each_list(&mut walk);
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
