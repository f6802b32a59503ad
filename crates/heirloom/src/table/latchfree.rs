//! `LatchFree`: read-after-write lock lists (Jung, Han, Fekete, Heiser,
//! Yeom: "A scalable lock manager for multicores", SIGMOD 2013).
//!
//! No latch is taken on any path: acquire, release, cancel, hand-off for
//! inheritance, blockers and snapshots read and write atomics only.
//!
//! ## Structure
//!
//! A fixed array of buckets; each is the head of a singly linked list of
//! the requests of every lock that hashes there, in arrival order, plus a
//! count of WAITING requests and a heat window. The request nodes are the
//! agents' own (`request.rs`: `next`, the lock id words, `recycle`).
//!
//! Request states (`Request::status`): GRANTED is the paper's ACTIVE — a
//! request is linked as GRANTED when nothing ahead of it was in its way,
//! else as WAITING; GRANTED and WAITING requests of another transaction are
//! in the way of a later request if their modes are incompatible (first
//! come, first served, so X is not starved by a stream of IS). OBSOLETE is
//! a released or cancelled request. INHERITED/INVALID are speculative lock
//! inheritance's: an INHERITED request in a requester's way is invalidated
//! by it (CAS, `inherit::invalidate`) instead of waited for.
//!
//! ## Acquire (`acquire`)
//!
//! An empty bucket (no request of the lock is linked, so none is in the
//! way) takes the request with one CAS of its head from null, unpinned:
//! nothing but the head is read. Otherwise:
//! walk the list from the head to the end, noting the first request in the
//! way; append at the end with one CAS on the last node's `next` (a failed
//! CAS, because somebody appended or the last node was deleted, walks
//! again). A request with nothing in its way is granted by that CAS. Else
//! (if the policy lets it wait) it was appended as WAITING and the
//! read-after-write step follows: count it in the bucket's `waiting`, a
//! SeqCst fence, then walk again and re-read every request ahead of it. If
//! none is in the way any more, it grants itself (CAS WAITING -> GRANTED);
//! otherwise its owner parks.
//!
//! ## The swap append (`TableKind::LatchFreeSwap`, `LatchFree<true>`)
//!
//! The multicore slides' insert: a request is appended by one swap of the
//! bucket's `tail`, never walking first and never retrying, as ACTIVE (in
//! the way of later requests as a granted one is). It links behind the
//! request it swapped out with a CAS that keeps that request's mark
//! (`link`), so a release racing with the link still learns whether
//! anything is behind it; first in an empty list, it stores the head. Then
//! it reads what is ahead of it (the walk waits at a node whose successor's
//! link is still on its way, `wait_link`) and becomes GRANTED or, counted in
//! `waiting` first, WAITING, followed by the read-after-write step below.
//! Refused, it becomes OBSOLETE and is withdrawn with a release's wake-up
//! duty (a later request may have found it ACTIVE and waited), so its node
//! goes back through the collector. A marked request is unlinked only once
//! a successor is linked behind it, and the only request of a list leaves
//! by a CAS of the head and then of the tail (`take_out`): the next
//! appender to the empty list is then the head's only writer. Everything
//! else (release, inheritance, the fast path, reclamation) is the CAS
//! append's. Every append writes the bucket's tail line, which the CAS
//! append does not (it writes only the last request's `next`): on one hot
//! lock under contention this table is slower (the crate README has the
//! figures), so `LatchFree` keeps the CAS append.
//!
//! ## Release (`release`) and the wake-up that is never lost
//!
//! Store OBSOLETE and mark the request (below); if a request was linked
//! behind it, a SeqCst fence, then read the bucket's `waiting`; if it is
//! not zero, walk the list and grant (CAS WAITING -> GRANTED) every
//! waiter of the same lock that this request was in the way of and that
//! now has nothing in its way, and wake their owners. With nothing linked
//! behind it at the mark, nobody can be waiting for it (a request waits
//! only for those ahead of it) and nobody can link behind it any more (an
//! append's CAS expects an unmarked null, and walks skip marked
//! requests), so that release has no wake-up duty and takes no fence.
//!
//! The two fences pair (Dekker): the waiter stores WAITING and increments
//! `waiting` before its fence and reads the others' states after it; the
//! releaser stores OBSOLETE before its fence and reads `waiting` and the
//! waiter's state after it. Take the SeqCst order of the fences. A waiter
//! W parks only if, after its fence F_W, some request X in its way was not
//! yet OBSOLETE, so X's release fence comes after F_W. Of all the requests
//! in W's way, let R be the one whose release fence comes last: after it,
//! R sees W's WAITING and `waiting > 0`, and every other request in W's way
//! as OBSOLETE, so R grants W. Requests ahead of W can only become
//! "better" (OBSOLETE, or INHERITED, which W's granter invalidates), and
//! nothing is ever inserted ahead of W, so a grant decided from any walk
//! is safe: two incompatible requests are never both granted. The loom
//! models in `latchfree/tests/loom_latchfree.rs` check both properties.
//!
//! A waiter is granted exactly once: by its own CAS or by a releaser's, and
//! a cancelling owner's CAS WAITING -> OBSOLETE races with them, so exactly
//! one of grant and cancel wins. Whoever wins decrements `waiting`.
//!
//! ## Upgrades
//!
//! A conversion appends a new request for the stronger mode
//! (`LatchFree::convert`); requests of the same transaction are never in
//! each other's way. The old one stays granted until the new one is
//! released, and is released right after it (`Agent::converted` keeps it
//! aside; such a lock is never passed on by inheritance). A conversion waits
//! behind earlier waiters, except those that its own older request is in
//! the way of (`shut_out_by_own`): they cannot be granted before the older
//! request goes, and it goes only after the new one is released
//! (`Agent::converted` keeps it until then). So a U-to-X conversion does
//! not wait for the U requests queued behind its U; two upgraders from S
//! still form a waits-for cycle that every conflict policy resolves, as the
//! deadlock tests check.
//!
//! ## The intention-lock fast path (`table/fast.rs`)
//!
//! With the fast path on (`Builder::fast_path`, the default, with or
//! without inheritance), IS and IX on a database or table lock are not
//! linked at all: a bit in the agent's record, granted while no strong
//! request (S, U, SIX, X) is counted in the lock's word. A strong request
//! counts itself in the word (and fences) before it is linked and treats
//! other transactions' fast holds that conflict with it as granted
//! requests ahead of it (`Fast::in_way`, in `acquire` and `clear`); its
//! own are ahead of everything, so they shut out the waiters they conflict
//! with, as an own older request does. A handle (`HeadRef`) carries the
//! lock's slot and whether the request is a fast hold (`H_FAST`) or a
//! counted strong one (`H_STRONG`), so release, cancel and blockers know
//! which protocol is theirs. A fast IS that must become IX sets its IX bit
//! in place while the word is zero (`Fast::upgrade`). See `fast.rs` for
//! the word, its seal, the fences and the records of who holds fast.
//!
//! ## Reclamation
//!
//! A request is unlinked only after it was *marked* (tag 1 on its `next`,
//! Harris and Michael): by its owner after release or cancel, or by the
//! requester that invalidated it. Any walk unlinks the marked requests it
//! meets (CAS on the predecessor's `next`; a failed CAS walks again from
//! the head), and a release unlinks its own request at once if it is
//! first. So every OBSOLETE request is unlinked, not only a prefix: a
//! long-lived request at the front (an inherited intention lock) does not
//! keep the garbage behind it alive. The thread whose CAS unlinked a
//! request hands it to crossbeam-epoch (`Guard::defer`, in batches of 32
//! per thread, see `retire`), which sets RETURNED once no pinned thread can
//! still see it; a request its owner unlinked itself goes in the owner's
//! own batch instead (`nodes.rs`, `Nodes`). Only then does the agent reuse
//! it (`Nodes::take`). Every walk runs pinned; an acquisition that finds
//! its bucket empty does not walk, and does not pin. A release does not pin
//! unless it must wake somebody (`after_release`): marking its own request
//! and unlinking it from the front read no other request (see
//! `release_linked`), so a release is one locked instruction and one
//! fence shorter, and a thread preempted while releasing holds up no grace
//! period.
//!
//! ## Inheritance
//!
//! Handing a lock to the agent's next transaction stores INHERITED, a
//! SeqCst fence, and reads `waiting` (the same Dekker as a release): a
//! waiter that came too late to see INHERITED is seen by the owner, who
//! then takes the request back (CAS INHERITED -> GRANTED) and releases it.
//! A lock is hot when at least the threshold of its last 16 acquisitions
//! found another transaction's request on the same lock or retried a CAS
//! (there is no latch whose contention could be counted). There is no head
//! per lock to keep that window in, so the bucket keeps one window with the
//! tag of the lock it belongs to (`Bucket::heat`): only locks above row
//! level are ever passed on, so only they note heat, and a window is reset
//! when another lock's acquisition in the bucket takes it over. Two hot
//! candidate locks in one bucket may therefore each look cold (neither is
//! passed on: the safe direction, costing only the saving), but a cold lock
//! never looks hot because a hot one shares its bucket.

use std::cell::Cell;
use std::ptr;

use crossbeam_epoch::{self as epoch, Guard, Shared};
use crossbeam_utils::CachePadded;

use super::{Caller, Converting, HeadRef, Reinherit, fast};
use crate::id::{Level, LockId};
use crate::inherit::{self, Heat};
use crate::mode::Mode;
use crate::monitor::{LockInfo, Waiter, add_holder, info_of};
use crate::nodes::Nodes;
use crate::queue::{Blocker, Cancel, Handoff, Outcome};
use crate::request::{
    ACTIVE, GRANTED, INHERITED, NEVER_LINKED, OBSOLETE, ORPHANED, OWNER_UNLINKED, RETURNED, ReqPtr, Request, WAITING,
};
use crate::stats::AgentCounters;
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence};

/// Tag on `Request::next`: the request is logically deleted.
const MARK: usize = 1;

/// A handle (`HeadRef`) of this table: the bucket in bits 0..32, the
/// lock's fast-path slot plus one in bits 32..40 (0: none), and flags.
const H_BUCKET: usize = 0xffff_ffff;
const H_SLOT: u32 = 32;
/// The request is a fast hold (`fast.rs`), linked nowhere.
const H_FAST: usize = HeadRef::FAST;
/// The request is strong and counted in its slot's word.
const H_STRONG: usize = 1 << 41;

#[inline]
fn handle(bucket: usize, slot: Option<usize>, flags: usize) -> HeadRef {
    HeadRef(bucket | slot.map_or(0, |s| (s + 1) << H_SLOT) | flags)
}

/// The fast-path slot named in `h`.
#[inline]
fn slot_of(h: HeadRef) -> Option<usize> {
    match (h.0 >> H_SLOT) & 0xff {
        0 => None,
        s => Some(s - 1),
    }
}

/// One list. `repr(C)` so that `tail` lies on the second 64-byte line of
/// the bucket's 128 bytes (`CachePadded`): the swap append writes it on
/// every acquisition, away from the head that every walk reads. The CAS
/// append never touches it.
#[repr(C)]
struct Bucket {
    /// The first request of the list (swap append: null while it is empty,
    /// and for a moment after an append to an empty list swapped the tail).
    head: epoch::Atomic<Request>,
    /// WAITING requests in this bucket (read by releasers after their fence).
    waiting: AtomicU32,
    /// Heat of one lock above row level: the lock's tag (the high half of
    /// its `hash64`) in bits 32..64, and its window in bits 0..16 (bit i set
    /// if its i-th most recent acquisition met another transaction's request
    /// on it or retried a CAS). See the module docs.
    heat: AtomicU64,
    _line: [u8; 64 - 24],
    /// Swap append only: the last request appended (null: the list is
    /// empty). An append swaps it, then links behind the request it
    /// swapped out (`link`).
    tail: epoch::Atomic<Request>,
}

/// What a walk's visitor wants next.
enum Visit {
    Next,
    Stop,
}

/// The table; `SWAP` selects the append (see the module docs): false, a
/// walk and a CAS at the end (`TableKind::LatchFree`); true, one swap of
/// the bucket's tail (`TableKind::LatchFreeSwap`).
pub(crate) struct LatchFree<const SWAP: bool = false> {
    buckets: Box<[CachePadded<Bucket>]>,
    mask: u64,
    /// The intention-lock fast path (`fast.rs`), when on.
    fast: Option<Box<fast::Fast>>,
}

/// The request `n` points to.
///
/// # Safety
/// `n` is non-null and was loaded, while the guard of `'g` was pinned, from
/// a bucket's `head` or from the `next` of a node so loaded (`ReqPtr`
/// contract 3: a node reachable from a list during a pin is retired only
/// after it is unlinked, and returned to its agent or freed only after
/// every pin that could reach it has ended).
#[inline]
unsafe fn req<'g>(n: Shared<'g, Request>) -> &'g Request {
    // SAFETY: the contract above is crossbeam-epoch's for `deref`.
    unsafe { n.deref() }
}

/// A tag of `id` for the bucket's heat word (see `Bucket::heat`).
#[inline]
fn heat_tag(id: LockId) -> u64 {
    id.hash64() >> 32
}

#[inline]
fn same_lock(n: &Request, (key, hi): (u64, u64)) -> bool {
    // Relaxed: written before the node was published by the appending CAS
    // (Release), which our Acquire load of the pointer synchronises with.
    n.key.load(Ordering::Relaxed) == key && n.hi.load(Ordering::Relaxed) == hi
}

/// Fills the request `q` for the lock of `words` in `mode`, last in its
/// list: its fields before the CAS that links it publishes them (the
/// caller sets its status).
#[inline(always)]
fn fill(q: &Request, words: (u64, u64), mode: Mode) {
    q.key.store(words.0, Ordering::Relaxed);
    q.hi.store(words.1, Ordering::Relaxed);
    q.mode.store(mode as u8, Ordering::Relaxed);
    q.want.store(mode as u8, Ordering::Relaxed);
    q.next.store(Shared::null(), Ordering::Relaxed);
}

/// Is the request `n` (of another transaction, same lock) in the way of
/// `mode`? An INHERITED request in the way is invalidated (and marked for
/// unlinking) instead; if its owner reclaimed it first it is in the way.
#[inline]
fn in_way(n: &Request, mode: Mode, g: &Guard) -> bool {
    // Acquire: pairs with the Release stores and CASes of `status`, so that a
    // reclaimed request's new owner fields are visible (blockers).
    match n.status.load(Ordering::Acquire) {
        GRANTED | WAITING | ACTIVE => !mode.compatible(n.mode()),
        INHERITED if !mode.compatible(n.mode()) => {
            if inherit::invalidate(n) {
                // Marking touches the node after INVALID, which its owner
                // may already have seen. That is sound, and the README's
                // "never touched again" is about reuse, not this store: the
                // owner gives an INVALID node to its limbo (`Nodes::give_back`)
                // and reuses it only once the collector returned it; it is
                // retired only after it was unlinked, and no walk unlinks an
                // unmarked node. So until this mark the node stays linked,
                // and reachable by us (pinned): alive. Nobody else marks it
                // (the owner lost the CAS and leaves it alone), so without
                // this store it would stay in the list for ever.
                mark(n, g);
                false
            } else {
                // Reclaimed meanwhile (GRANTED) — or invalidated by somebody
                // else (INVALID): read again.
                n.status.load(Ordering::Acquire) == GRANTED
            }
        }
        _ => false,
    }
}

/// Is the request `x` (of another transaction, same lock) a waiter that
/// the walker's own granted requests ahead of it (joined in `own`) are in
/// the way of? Then it is not in the walker's way. Only a conversion's
/// new request has own requests ahead (`LatchFree::convert`), and it need
/// not wait for such a waiter: the waiter cannot be granted while the
/// older request stays granted (it is ahead of the waiter and in its
/// way), and the owner releases the older request only after the new one
/// (`Agent::converted`). So an updater's U-to-X conversion does not
/// deadlock with the U requests queued behind its U, as on the queue
/// tables, where a conversion waits for granted requests only.
#[inline]
fn shut_out_by_own(x: &Request, own: Mode) -> bool {
    // Acquire: as in `in_way`.
    own != Mode::NL && matches!(x.status.load(Ordering::Acquire), WAITING | ACTIVE) && !own.compatible(x.mode())
}

/// What an appender's walk found ahead of its request: the first request
/// of another transaction in its way, whether it met another transaction's
/// request on the lock at all (heat), and the modes its own granted
/// requests hold (`shut_out_by_own`).
struct Ahead<'g> {
    first: Option<&'g Request>,
    shared: bool,
    own: Mode,
    /// The caller's own fast holds on the lock: where `own` starts.
    own_fast: Mode,
}

impl<'g> Ahead<'g> {
    #[inline(always)]
    fn new(own_fast: Mode) -> Self {
        Ahead {
            first: None,
            shared: false,
            own: own_fast,
            own_fast,
        }
    }

    /// The walk starts again from the head.
    #[inline(always)]
    fn restart(&mut self) {
        *self = Ahead::new(self.own_fast);
    }

    /// Notes the request `x` met by the walk of transaction `me`'s request
    /// for the lock of `words` in `mode`.
    #[inline(always)]
    fn note(&mut self, x: &'g Request, words: (u64, u64), me: u64, mode: Mode, g: &Guard) {
        if !same_lock(x, words) {
            return;
        }
        if x.txn.load(Ordering::Relaxed) == me {
            note_own(x, &mut self.own);
        } else if !shut_out_by_own(x, self.own) && in_way(x, mode, g) {
            self.first.get_or_insert(x);
        } else {
            self.shared = true;
        }
    }
}

/// Notes the walker's own request `x` in `own` if it is granted.
#[inline]
fn note_own(x: &Request, own: &mut Mode) {
    if x.status.load(Ordering::Acquire) == GRANTED {
        *own = own.join(x.mode());
    }
}

// (The padding counts 64-bit words; elsewhere, and under loom, the tail
// only lands at another offset.)
#[cfg(all(not(heirloom_loom), target_pointer_width = "64"))]
const _: () = assert!(
    std::mem::offset_of!(Bucket, tail) == 64,
    "the tail on the bucket's second line"
);

/// Marks `n` logically deleted, and answers whether a request was linked
/// behind it. CAS append: from now on any walk may unlink it, and nobody
/// can link behind it. Swap append: a walk unlinks it as soon as a request
/// is linked behind it; if none was, nobody waits for `n` (a request
/// waits only for those ahead of it), and whoever swapped `n` out of the
/// tail links behind it later, reading the mark, and through it `n`'s
/// OBSOLETE (`link`).
#[inline]
fn mark(n: &Request, g: &Guard) -> bool {
    !n.next.fetch_or(MARK, Ordering::AcqRel, g).with_tag(0).is_null()
}

/// A walk's unlink of the marked `node` (at `cur`): one CAS of its
/// predecessor's link `pred` to `succ`, then retirement. `false` (counted
/// as a CAS retry): the predecessor changed, and the walk starts again.
#[inline]
fn unlink<'g>(
    pred: &epoch::Atomic<Request>,
    cur: Shared<'g, Request>,
    succ: Shared<'g, Request>,
    node: &Request,
    c: &AgentCounters,
    g: &'g Guard,
) -> bool {
    match pred.compare_exchange(cur, succ, Ordering::AcqRel, Ordering::Acquire, g) {
        Ok(_) => {
            retire(node, g);
            true
        }
        Err(_) => {
            c.cas_retries.bump();
            false
        }
    }
}

/// Swap append: links `new` behind `old`, the tail that the append of `new`
/// swapped out. `old` is alive: a request is unlinked only with a
/// successor linked behind it, or by its owner's CAS of the tail from it
/// (`take_out`), and neither can happen to `old` before this link. Its
/// `next` is null, maybe marked (released meanwhile), and nobody else
/// writes it before the link: at most two rounds, and the mark stays.
#[inline]
fn link(old: Shared<'_, Request>, new: Shared<'_, Request>, g: &Guard) {
    // SAFETY: alive, see above.
    let o = unsafe { old.deref() };
    let mut cur = Shared::null();
    // Release: publishes `new`'s fields to walkers. Acquire: on a marked
    // `next`, pairs with the mark (AcqRel), so the release that marked it
    // happens before our walk (and a CAS continues the mark's release
    // sequence for walkers that read our link).
    while let Err(e) = o
        .next
        .compare_exchange(cur, new.with_tag(cur.tag()), Ordering::AcqRel, Ordering::Acquire, g)
    {
        cur = e.current;
    }
}

/// Swap append: a walk found the link behind `n` on its way. Waits for it
/// a little, then gives up the processor once; `Some`: the successor,
/// linked meanwhile; `None`: the walk looks again from the head.
#[cold]
fn wait_link<'g>(n: &Request, c: &AgentCounters, g: &'g Guard, pauses: &mut u32) -> Option<Shared<'g, Request>> {
    c.cas_retries.bump();
    if !cfg!(heirloom_loom) && *pauses < 4 {
        for _ in 0..(32u32 << *pauses) {
            std::hint::spin_loop();
            // Acquire: as a walk's.
            let next = n.next.load(Ordering::Acquire, g).with_tag(0);
            if !next.is_null() {
                return Some(next);
            }
        }
    }
    *pauses += 1;
    crate::sync::yield_now();
    let next = n.next.load(Ordering::Acquire, g).with_tag(0);
    (!next.is_null()).then_some(next)
}

/// Swap append: a walk found the head on its way (an empty list's appender
/// swapped the tail and has not stored the head yet). Spins a little,
/// then gives up the processor.
#[cold]
fn link_pending(c: &AgentCounters, pauses: &mut u32) {
    c.cas_retries.bump();
    if cfg!(heirloom_loom) || *pauses >= 4 {
        crate::sync::yield_now();
    } else {
        for _ in 0..(16u32 << *pauses) {
            std::hint::spin_loop();
        }
    }
    *pauses += 1;
}

/// Requests this thread unlinked and has not yet handed to the collector,
/// chained through `Request::retired`. One deferred function per batch
/// instead of one per request: the collector's per-item cost (a slot in
/// the thread's bag, a 64-slot bag sealed and queued with an allocation
/// every 64 items, one call each) was a quarter of a one-thread transaction.
struct Retired {
    head: Cell<*mut Request>,
    len: Cell<usize>,
}

/// Requests per batch. Under loom every request is handed over at once, so
/// the models see reclamation happen.
const RETIRE_BATCH: usize = if cfg!(heirloom_loom) { 1 } else { 32 };

impl Drop for Retired {
    fn drop(&mut self) {
        // The thread ends: hand over what is left (crossbeam pins through a
        // temporary handle if the thread's own is gone already).
        let head = self.head.replace(ptr::null_mut());
        if !head.is_null() {
            defer_batch(ReqPtr::from_raw(head), &epoch::pin());
        }
    }
}

#[cfg(not(heirloom_loom))]
std::thread_local! {
    static RETIRED: Retired = const {
        Retired {
            head: Cell::new(ptr::null_mut()),
            len: Cell::new(0),
        }
    };
}

#[cfg(heirloom_loom)]
loom::thread_local! {
    static RETIRED: Retired = Retired {
        head: Cell::new(ptr::null_mut()),
        len: Cell::new(0),
    };
}

/// Hands an unlinked request to the epoch collector (in batches): RETURNED
/// once no pinned thread can still reach it.
#[inline]
fn retire(n: &Request, g: &Guard) {
    let p = n as *const Request as *mut Request;
    let full = RETIRED.try_with(|b| {
        // Relaxed: the chain is read by the deferred function, which the
        // collector runs after `defer` (its queue orders the two).
        n.retired.store(b.head.get(), Ordering::Relaxed);
        b.head.set(p);
        b.len.set(b.len.get() + 1);
        (b.len.get() >= RETIRE_BATCH).then(|| {
            b.len.set(0);
            b.head.replace(ptr::null_mut())
        })
    });
    match full {
        Ok(Some(head)) => defer_batch(ReqPtr::from_raw(head), g),
        Ok(None) => {}
        // The thread's batch is gone (thread exit): hand it over alone.
        Err(_) => {
            n.retired.store(ptr::null_mut(), Ordering::Relaxed);
            defer_batch(ReqPtr::from_raw(p), g);
        }
    }
}

/// Hands this thread's unfinished batch of retired requests to the
/// collector now (`Nodes::help`: their owners may be short of nodes).
/// Deferring later than the unlink is only more conservative: the batch is
/// stamped with an epoch at least as new as every unlink in it.
pub(crate) fn hand_over_retired() {
    let head = RETIRED.try_with(|b| {
        b.len.set(0);
        b.head.replace(ptr::null_mut())
    });
    if let Ok(head) = head
        && !head.is_null()
    {
        defer_batch(ReqPtr::from_raw(head), &epoch::pin());
    }
}

fn defer_batch(head: ReqPtr, g: &Guard) {
    g.defer(move || {
        let mut p = head.as_ptr() as *mut Request;
        while !p.is_null() {
            let r = ReqPtr::from_raw(p);
            // Read before `returned`: the node may be reused or freed after.
            // SAFETY: unlinked and past its grace period, but not yet
            // RETURNED, so neither its agent (which waits for RETURNED) nor
            // anybody else frees it before `returned` below decides.
            p = unsafe { r.get() }.retired.load(Ordering::Relaxed);
            // SAFETY: as above.
            unsafe { returned(r) };
        }
    });
}

/// Runs after the grace period of an unlinked request.
///
/// # Safety
/// `r` is unlinked, no thread can reach it any more, and it is not yet
/// RETURNED (so it is alive: its agent frees it only once RETURNED).
unsafe fn returned(r: ReqPtr) {
    // AcqRel: Release publishes "nobody sees it" to the agent's Acquire in
    // `Nodes::take`; Acquire pairs with the agent's ORPHANED swap.
    // SAFETY: alive until this swap decides (the contract).
    if unsafe { r.get() }.recycle.swap(RETURNED, Ordering::AcqRel) == ORPHANED {
        // SAFETY: the agent is gone and the node is in no list; we are the
        // last to know about it (the swap decided it).
        unsafe { r.free() };
    }
}

impl<const SWAP: bool> LatchFree<SWAP> {
    /// A table of `buckets` lists (rounded up to a power of two), with the
    /// intention-lock fast path if `fast_path` (see `fast.rs`; a fast
    /// hold is never passed on by inheritance, which needs a request of
    /// its own).
    pub(crate) fn new(buckets: usize, fast_path: bool) -> Self {
        let n = buckets.max(1).next_power_of_two();
        LatchFree {
            buckets: (0..n)
                .map(|_| {
                    CachePadded::new(Bucket {
                        head: epoch::Atomic::null(),
                        waiting: AtomicU32::new(0),
                        heat: AtomicU64::new(0),
                        _line: [0; 64 - 24],
                        tail: epoch::Atomic::null(),
                    })
                })
                .collect(),
            mask: n as u64 - 1,
            fast: fast_path.then(|| Box::new(fast::Fast::new())),
        }
    }

    /// Is the intention-lock fast path on?
    #[inline]
    pub(crate) fn has_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// The fast path, when on.
    #[inline]
    pub(crate) fn fast(&self) -> Option<&fast::Fast> {
        self.fast.as_deref()
    }

    /// As [`Table::try_fast_hold`](super::Table::try_fast_hold).
    #[inline(always)]
    pub(crate) fn try_fast_hold(
        &self,
        a: Caller<'_>,
        id: LockId,
        mode: Mode,
        txn: u64,
        ts: u64,
        wake: &mut Vec<ReqPtr>,
    ) -> Option<HeadRef> {
        let f = self.fast.as_deref()?;
        let hash = id.hash64();
        let words = id.words();
        let s = f.slot(words, true)?;
        let bi = (hash & self.mask) as usize;
        match f.acquire(s, a.agent, txn, ts, mode) {
            Ok(()) => Some(handle(bi, Some(s), H_FAST)),
            Err(true) => {
                self.after_fast_release(&self.buckets[bi], a.counters, words, mode, wake);
                None
            }
            Err(false) => None,
        }
    }

    /// As [`Table::upgrade_fast_hold`](super::Table::upgrade_fast_hold).
    #[inline]
    pub(crate) fn upgrade_fast_hold(&self, a: Caller<'_>, id: LockId, h: HeadRef, wake: &mut Vec<ReqPtr>) -> bool {
        let Some((f, s)) = self.fast_of(h) else {
            unreachable!("a fast hold without its slot")
        };
        if f.upgrade_bits(s, a.agent) {
            return true;
        }
        self.after_fast_release(self.bucket(h), a.counters, id.words(), Mode::IX, wake);
        false
    }

    /// As [`Table::release_fast_hold`](super::Table::release_fast_hold).
    #[inline(always)]
    pub(crate) fn release_fast_hold(&self, a: Caller<'_>, id: LockId, h: HeadRef, mode: Mode, wake: &mut Vec<ReqPtr>) {
        let Some((f, s)) = self.fast_of(h) else {
            unreachable!("a fast hold without its slot")
        };
        if f.release(s, a.agent, mode) {
            self.after_fast_release(self.bucket(h), a.counters, id.words(), mode, wake);
        }
    }

    /// Pins the epoch and swaps the head of `id`'s bucket (the swap
    /// append: its tail, the word every append writes) with itself by a
    /// compare-and-swap: the exclusive step of a latch-free insert, with no
    /// work (see [`Table::null_section`](super::Table::null_section)).
    pub(crate) fn null_section(&self, _c: &AgentCounters, id: LockId) {
        let bucket = &self.buckets[(id.hash64() & self.mask) as usize];
        let word = if SWAP { &bucket.tail } else { &bucket.head };
        let guard = epoch::pin();
        // Acquire/Release as an insert's CAS; the outcome is irrelevant.
        let cur = word.load(Ordering::Acquire, &guard);
        let _ = word.compare_exchange(cur, cur, Ordering::AcqRel, Ordering::Acquire, &guard);
    }

    #[inline]
    fn bucket(&self, h: HeadRef) -> &Bucket {
        &self.buckets[h.0 & H_BUCKET]
    }

    /// The fast-path slot of the lock of `words`, if it has one (looked up,
    /// never claimed: see `Fast::slot`).
    #[inline]
    fn slot_of_lock(&self, words: (u64, u64)) -> Option<(&fast::Fast, usize)> {
        let f = self.fast.as_deref()?;
        let id = LockId::from_words(words.0, words.1);
        if !fast::eligible(id) {
            return None;
        }
        f.slot(words, false).map(|s| (f, s))
    }

    /// The modes `agent` holds the lock of `words` in fast (NL: none): its
    /// own holds, never in the way of its own requests.
    #[inline]
    fn own_fast(&self, words: (u64, u64), agent: u32) -> Mode {
        match self.slot_of_lock(words) {
            Some((f, s)) => f.own(s, agent),
            None => Mode::NL,
        }
    }

    /// Walks the list of `b` from its head, unlinking marked requests on the
    /// way, and calls `visit(Some(node))` for every unmarked one in order.
    /// When an unlink fails (the predecessor changed) it calls
    /// `visit(None)` and starts again from the head. Returns the `next` link
    /// found null at the end (CAS append), or `None` if the visitor stopped
    /// or the list is appended by swaps (`walk_swapped`).
    #[inline]
    fn walk<'g>(
        b: &'g Bucket,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Option<&'g epoch::Atomic<Request>> {
        if SWAP {
            Self::walk_swapped(b, c, g, visit);
            return None;
        }
        'restart: loop {
            let mut pred = &b.head;
            // Acquire: pairs with the Release CAS that linked the node, so its
            // fields are visible.
            let mut cur = pred.load(Ordering::Acquire, g);
            loop {
                if cur.is_null() {
                    return Some(pred);
                }
                // SAFETY: non-null, loaded from the list while `g` is pinned.
                let node = unsafe { req(cur) };
                let next = node.next.load(Ordering::Acquire, g);
                if next.tag() == MARK {
                    let succ = next.with_tag(0);
                    if unlink(pred, cur, succ, node, c, g) {
                        cur = succ;
                        continue;
                    }
                    visit(None);
                    continue 'restart;
                }
                if let Visit::Stop = visit(Some((cur, node))) {
                    return None;
                }
                pred = &node.next;
                cur = next;
            }
        }
    }

    /// `walk` of a list appended by swaps: up to the tail. A node whose
    /// `next` is null is not always the tail: its successor's appender may
    /// have swapped the tail and not linked yet (the walk waits for that
    /// link at the node, and looks again from the head if it is slow), or
    /// the node may have left the list as its last. A marked request is
    /// unlinked only once a successor is linked behind it (an appender may
    /// be about to link behind it, `link`).
    #[inline]
    fn walk_swapped<'g>(
        b: &'g Bucket,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) {
        let mut pauses = 0u32;
        'restart: loop {
            let mut pred = &b.head;
            // Acquire: pairs with the Release store or CAS that linked the
            // node, so its fields are visible.
            let mut cur = pred.load(Ordering::Acquire, g);
            if cur.is_null() {
                // Empty, or the first appender's store of the head is on
                // its way.
                if b.tail.load(Ordering::Acquire, g).is_null() {
                    return;
                }
                link_pending(c, &mut pauses);
                visit(None);
                continue 'restart;
            }
            loop {
                // SAFETY: non-null, loaded from the list while `g` is pinned.
                let node = unsafe { req(cur) };
                let next = node.next.load(Ordering::Acquire, g);
                let succ = next.with_tag(0);
                if next.tag() == MARK {
                    if !succ.is_null() {
                        if unlink(pred, cur, succ, node, c, g) {
                            cur = succ;
                            continue;
                        }
                        visit(None);
                        continue 'restart;
                    }
                } else if let Visit::Stop = visit(Some((cur, node))) {
                    return;
                }
                if succ.is_null() {
                    // The end: the tail, or none (the list went empty and
                    // `cur` is the last request, on its way out).
                    // Acquire: as the head's.
                    let tail = b.tail.load(Ordering::Acquire, g);
                    if tail == cur || tail.is_null() {
                        return;
                    }
                    // A link on its way behind `cur` (still readable: we
                    // are pinned).
                    match wait_link(node, c, g, &mut pauses) {
                        Some(n) => {
                            pred = &node.next;
                            cur = n;
                            continue;
                        }
                        None => {
                            visit(None);
                            continue 'restart;
                        }
                    }
                }
                pred = &node.next;
                cur = succ;
            }
        }
    }

    /// Converts the granted `r` to `to` by appending a request for `to`
    /// from `nodes`, with `r`'s owner and age: a linked request's mode is
    /// fixed, because every request behind it judged itself by that mode
    /// without a latch. The two requests of one transaction are never in
    /// each other's way (`in_way`), and nothing that was compatible with
    /// `to` conflicts with the older, weaker mode, so `r` can stay until the
    /// new one is granted and is then released by the caller (see
    /// [`Table::convert`](super::Table::convert)).
    ///
    /// # Safety
    /// As [`Table::convert`](super::Table::convert).
    #[allow(clippy::too_many_arguments)] // the table interface's inputs
    pub(crate) unsafe fn convert(
        &self,
        c: &AgentCounters,
        id: LockId,
        h: HeadRef,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting {
        // SAFETY: the caller's own granted request (the contract).
        let old = unsafe { r.get() };
        // A fast IS becomes IX in place (`Fast::upgrade`).
        if h.0 & H_FAST != 0
            && old.mode() == Mode::IS
            && to == Mode::IX
            && let Some((f, s)) = self.fast_of(h)
        {
            if f.upgrade(s, old) {
                return Converting {
                    outcome: Outcome::Granted,
                    req: r,
                    head: h,
                };
            }
            self.after_fast_release(self.bucket(h), c, id.words(), Mode::IX, wake);
        }
        let n = nodes.take_for(c, old);
        // SAFETY: `n` is the caller's own node from its pool, linked nowhere.
        let (outcome, head) = unsafe { self.acquire(c, id, n, to, may_wait, wake) };
        match outcome {
            Outcome::Refused(_) => {
                // Never linked (CAS append: reusable at once), or withdrawn
                // (swap append: back once the collector returns it).
                nodes.give_back(n);
                Converting {
                    outcome,
                    req: r,
                    head: h,
                }
            }
            _ => Converting { outcome, req: n, head },
        }
    }

    /// Links `r` (owner and age already set) for `id` in `mode`. A refused
    /// request is not left linked: the CAS append never links it (and
    /// marks it NEVER_LINKED), the swap append withdraws it (OBSOLETE,
    /// taken out); either way its node goes back with `Nodes::give_back`.
    ///
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
        // Only a fast acquisition that backs off wakes anybody.
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, HeadRef) {
        let hash = id.hash64();
        let bi = (hash & self.mask) as usize;
        let b = &self.buckets[bi];
        let words = id.words();
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        // The intention-lock fast path (`fast.rs`): IS and IX try their
        // record's bit; strong requests count themselves first.
        let (mut fast_slot, mut flags) = (None, 0);
        if let Some(f) = self.fast.as_deref()
            && fast::eligible(id)
            && let Some(s) = f.slot(words, true)
        {
            fast_slot = Some((f, s));
            if fast::is_fast(mode) {
                let (txn, ts) = (q.txn.load(Ordering::Relaxed), q.ts.load(Ordering::Relaxed));
                match f.acquire(s, q.agent, txn, ts, mode) {
                    Ok(()) => {
                        fast::fill_node(q, words, mode);
                        // Linked nowhere: its agent reuses it at once.
                        q.recycle.store(NEVER_LINKED, Ordering::Relaxed);
                        return (Outcome::Granted, handle(bi, Some(s), H_FAST));
                    }
                    Err(true) => self.after_fast_release(b, c, words, mode, wake),
                    Err(false) => {}
                }
            } else if fast::is_strong(mode) {
                f.add_strong(s);
                flags = H_STRONG;
            }
        }
        let h = handle(bi, fast_slot.map(|(_, s)| s), flags);
        // What the fast path lets this request pass: its own fast holds
        // (a conversion's older request), and whether fast holds of others
        // are in its way (strong requests only).
        let own_fast = fast_slot.map_or(Mode::NL, |(f, s)| f.own(s, q.agent));
        let fast_in_way = || flags == H_STRONG && fast_slot.is_some_and(|(f, s)| f.in_way(s, mode, q.agent));
        if SWAP {
            fill(q, words, mode);
            q.status.store(ACTIVE, Ordering::Relaxed);
            let new = Shared::from(r.as_ptr());
            // SAFETY: the pointers loaded through this guard before the pin
            // below are the swapped-out tail, which is dereferenced only by
            // `link` (see there), and null checks.
            let unprotected = unsafe { epoch::unprotected() };
            // The append: one swap of the tail, which never fails. AcqRel:
            // Release publishes the node's fields to the next appender,
            // which reads them through its own swap; Acquire pairs with the
            // release that emptied the list (its CAS of the tail, after its
            // request went OBSOLETE), so the last holder's work happens
            // before our grant.
            let old = b.tail.swap(new, Ordering::AcqRel, unprotected);
            if old.is_null() {
                // First in an empty list: nothing linked is ahead. The head
                // is null, and nobody else writes it until we do: the
                // request that left the list last nulled the head before
                // the tail (our swap read its CAS of the tail, so its CAS
                // of the head happens before this store; see `take_out`).
                // Release: publishes the node's fields to walkers (their
                // Acquire loads of the head).
                b.head.store(new, Ordering::Release);
                if !fast_in_way() {
                    // No pin: no other request was read.
                    q.status.store(GRANTED, Ordering::Relaxed);
                    self.note_heat(b, id, false);
                    return (Outcome::Granted, h);
                }
            } else {
                link(old, new, unprotected);
            }
            // Pinned after the link: `old` is alive until then (see
            // `link`), and every other request is reached from the head.
            let g = epoch::pin();
            let me = q.txn.load(Ordering::Relaxed);
            let mut hot = false;
            loop {
                // Read-after-write: every request ahead of ours is linked
                // before it (a walk waits for links still on their way),
                // and each is read after our request was published ACTIVE.
                let mut ahead = Ahead::new(own_fast);
                Self::walk_swapped(b, c, &g, |n| {
                    match n {
                        None => ahead.restart(),
                        Some((n, _)) if n == new => return Visit::Stop,
                        Some((_, x)) => ahead.note(x, words, me, mode, &g),
                    }
                    Visit::Next
                });
                let Ahead { first, shared, .. } = ahead;
                hot |= shared || first.is_some();
                let blocked_fast = first.is_none() && fast_in_way();
                if first.is_none() && !blocked_fast {
                    self.note_heat(b, id, hot);
                    // Relaxed: ACTIVE and GRANTED are alike to every other
                    // request.
                    q.status.store(GRANTED, Ordering::Relaxed);
                    return (Outcome::Granted, h);
                }
                if may_wait {
                    break;
                }
                let blocker = match first {
                    Some(x) => Some(Blocker::of(x)),
                    None => fast_slot.and_then(|(f, s)| f.blocker(s, mode, q.agent)),
                };
                // None: the holds in the way went (or were a fast request
                // backing off): look again.
                if let Some(blocker) = blocker {
                    // Withdrawn: while ACTIVE it was in the way of later
                    // requests, which may wait for it.
                    q.status.store(OBSOLETE, Ordering::Release);
                    if self.take_out(b, q) {
                        self.after_release(b, c, q, wake);
                    }
                    self.note_heat(b, id, hot);
                    self.uncount_strong(h);
                    return (Outcome::Refused(blocker), h);
                }
            }
            self.note_heat(b, id, hot);
            // Counted before WAITING is published: a granter's decrement
            // then follows our increment in the counter's modification
            // order (its CAS reads our Release store), so the count never
            // dips below the number of waiters (a releaser reading it after
            // its fence could otherwise read a transient low and skip a
            // waiter it must wake).
            b.waiting.fetch_add(1, Ordering::Relaxed);
            q.status.store(WAITING, Ordering::Release);
            return self.settle_waiter(b, c, q, &g, h);
        }
        // An empty bucket (most row locks' on a table of many rows): no
        // request of the lock is linked anywhere, so nothing is in the way,
        // and appending reads nothing but the head: one CAS from null, with
        // no pin (no other request is dereferenced). Not for a lock with a
        // fast-path slot, whose fast holds are outside the list.
        if fast_slot.is_none() {
            // SAFETY: the unprotected head is only compared with null,
            // never dereferenced.
            let unprotected = unsafe { epoch::unprotected() };
            if b.head.load(Ordering::Relaxed, unprotected).is_null() {
                fill(q, words, mode);
                q.status.store(GRANTED, Ordering::Relaxed);
                // AcqRel: Release publishes the node's fields to walkers;
                // Acquire pairs with the unlink that emptied the bucket
                // (its CAS is AcqRel, after the request it removed went
                // OBSOLETE), so the last holder's work happens before our
                // grant, as a walk's Acquire load of OBSOLETE makes it.
                let new = Shared::from(r.as_ptr());
                if b.head
                    .compare_exchange(Shared::null(), new, Ordering::AcqRel, Ordering::Relaxed, unprotected)
                    .is_ok()
                {
                    self.note_heat(b, id, false);
                    return (Outcome::Granted, h);
                }
                // Somebody appended first: the walk below.
            }
        }
        // Pinned before the node's fields are written: the pin's locked
        // instruction then does not wait for those stores (the node's line
        // is often cold after its grace period), which drain during the walk.
        let g = epoch::pin();
        fill(q, words, mode);
        let me = q.txn.load(Ordering::Relaxed);
        let new = Shared::from(r.as_ptr());
        let mut hot = false;
        // Counted in `waiting` while it may be linked as WAITING.
        let mut counted = false;
        let waiting = loop {
            let mut ahead = Ahead::new(own_fast);
            let last = Self::walk(b, c, &g, |n| {
                match n {
                    None => ahead.restart(),
                    Some((_, x)) => ahead.note(x, words, me, mode, &g),
                }
                Visit::Next
            });
            let Some(last) = last else {
                unreachable!("a walk without a stop reaches the end")
            };
            let Ahead { first, shared, .. } = ahead;
            hot |= shared || first.is_some();
            let blocked_fast = first.is_none() && fast_in_way();
            if !may_wait && (first.is_some() || blocked_fast) {
                let blocker = match first {
                    Some(x) => Some(Blocker::of(x)),
                    None => fast_slot.and_then(|(f, s)| f.blocker(s, mode, q.agent)),
                };
                // None: the holds in the way went (or were a fast request
                // backing off): look again.
                if let Some(blocker) = blocker {
                    // Never counted: `may_wait` is false, so never WAITING.
                    // Never linked: its agent reuses it at once.
                    q.recycle.store(NEVER_LINKED, Ordering::Relaxed);
                    self.note_heat(b, id, hot);
                    self.uncount_strong(h);
                    return (Outcome::Refused(blocker), h);
                }
                continue;
            }
            let waiting = first.is_some() || blocked_fast;
            // Count ourselves before the CAS can publish WAITING: a granter's
            // decrement then follows our increment in the counter's
            // modification order, so the count never dips below the number
            // of linked waiters (a releaser reading it after its fence could
            // otherwise read a transient low and skip a waiter it must wake).
            if waiting != counted {
                if waiting {
                    b.waiting.fetch_add(1, Ordering::Relaxed);
                } else {
                    b.waiting.fetch_sub(1, Ordering::Relaxed);
                }
                counted = waiting;
            }
            q.status
                .store(if waiting { WAITING } else { GRANTED }, Ordering::Relaxed);
            // Release: publishes the node's fields to walkers (their Acquire
            // loads of the pointer).
            match last.compare_exchange(Shared::null(), new, Ordering::Release, Ordering::Relaxed, &g) {
                Ok(_) => break waiting,
                Err(_) => {
                    // Somebody appended, or the last node was marked: walk again.
                    c.cas_retries.bump();
                    hot = true;
                }
            }
        };
        self.note_heat(b, id, hot);
        if !waiting {
            return (Outcome::Granted, h);
        }
        self.settle_waiter(b, c, q, &g, h)
    }

    /// The read-after-write step of a request just linked as WAITING (and
    /// counted in `waiting`): grants it if nothing ahead is in its way any
    /// more.
    #[inline]
    fn settle_waiter(&self, b: &Bucket, c: &AgentCounters, q: &Request, g: &Guard, h: HeadRef) -> (Outcome, HeadRef) {
        // Read-after-write: a SeqCst fence between our count in `waiting`
        // and the WAITING published (by the CAS that linked it, or the
        // store after the swap append), and the re-reads of the requests
        // ahead; pairs with the fence in `after_release` and `pass_on` (see
        // the module docs).
        fence(Ordering::SeqCst);
        if self.clear(b, c, q, g) == Some(true) {
            // AcqRel as in `grant`. A failed CAS means a releaser granted it
            // first (only we cancel our own request).
            if q.status
                .compare_exchange(WAITING, GRANTED, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                b.waiting.fetch_sub(1, Ordering::Relaxed);
            }
            return (Outcome::Granted, h);
        }
        (Outcome::Waiting, h)
    }

    /// Is the waiting `w` clear: nothing ahead of it in its way? `None` if
    /// it is not linked any more.
    fn clear(&self, b: &Bucket, c: &AgentCounters, q: &Request, g: &Guard) -> Option<bool> {
        let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let (mode, txn) = (q.mode(), q.txn.load(Ordering::Relaxed));
        let target: *const Request = q;
        let mut found = None;
        // Its own fast holds (`fast.rs`) are granted requests of its own
        // ahead of it.
        let own_fast = self.own_fast(words, q.agent);
        let mut own = own_fast;
        Self::walk(b, c, g, |n| match n {
            None => {
                found = None;
                own = own_fast;
                Visit::Next
            }
            Some((n, _)) if n.as_raw() == target => {
                found = Some(true);
                Visit::Stop
            }
            Some((_, x)) => {
                if !same_lock(x, words) {
                    return Visit::Next;
                }
                if x.txn.load(Ordering::Relaxed) == txn {
                    note_own(x, &mut own);
                    Visit::Next
                } else if !shut_out_by_own(x, own) && in_way(x, mode, g) {
                    found = Some(false);
                    Visit::Stop
                } else {
                    Visit::Next
                }
            }
        });
        if found == Some(true)
            && fast::is_strong(mode)
            && let Some((f, s)) = self.slot_of_lock(words)
            && f.in_way(s, mode, q.agent)
        {
            return Some(false);
        }
        found
    }

    /// After a fast hold of `words` in `mode` was given up and the word
    /// showed strong requests: the wake-up duty of a release (`fast.rs`).
    #[cold]
    fn after_fast_release(&self, b: &Bucket, c: &AgentCounters, words: (u64, u64), mode: Mode, wake: &mut Vec<ReqPtr>) {
        // SeqCst fence between the bit's clearing and the load of
        // `waiting`; pairs with the waiter's fence in `acquire` (Dekker).
        fence(Ordering::SeqCst);
        if b.waiting.load(Ordering::Relaxed) != 0 {
            let g = epoch::pin();
            self.wake_scan(b, c, words, mode, wake, &g);
        }
    }

    /// The fast path and the slot named in the handle `h`, if any.
    #[inline]
    fn fast_of(&self, h: HeadRef) -> Option<(&fast::Fast, usize)> {
        Some((self.fast.as_deref()?, slot_of(h)?))
    }

    /// Drops a strong request's count in its slot's word (after it went
    /// OBSOLETE, or when it was never linked).
    #[inline]
    fn uncount_strong(&self, h: HeadRef) {
        if h.0 & H_STRONG != 0
            && let Some((f, s)) = self.fast_of(h)
        {
            f.sub_strong(s);
        }
    }

    /// Gives up the fast hold `q` (see `fast.rs`): one taken with a node
    /// (`lock`'s own are released by `release_fast_hold`).
    #[cold]
    fn release_fast(&self, c: &AgentCounters, h: HeadRef, q: &Request, wake: &mut Vec<ReqPtr>) {
        q.status.store(OBSOLETE, Ordering::Relaxed);
        let id = LockId::from_words(q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let a = Caller {
            counters: c,
            agent: q.agent,
        };
        self.release_fast_hold(a, id, h, q.mode(), wake);
    }

    /// Grants the waiting `w` (CAS, so that a grant by a releaser, by the
    /// waiter itself and a cancel decide exactly once) and queues its owner
    /// for waking.
    #[inline]
    fn grant(&self, b: &Bucket, w: &Request, wake: &mut Vec<ReqPtr>) {
        // AcqRel: Release pairs with the owner's Acquire load of `status` in
        // `Transaction::wait`.
        if w.status
            .compare_exchange(WAITING, GRANTED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            b.waiting.fetch_sub(1, Ordering::Relaxed);
            wake.push(ReqPtr::from_raw(w));
        }
    }

    /// After a request of `words` in `mode` stopped being in anyone's way
    /// (and the caller's SeqCst fence): grants the waiters of the same lock
    /// it was in the way of that are now clear.
    #[cold]
    fn wake_scan(
        &self,
        b: &Bucket,
        c: &AgentCounters,
        words: (u64, u64),
        mode: Mode,
        wake: &mut Vec<ReqPtr>,
        g: &Guard,
    ) {
        Self::walk(b, c, g, |n| {
            if let Some((_, x)) = n
                && same_lock(x, words)
                && x.status.load(Ordering::Acquire) == WAITING
                && !mode.compatible(x.mode())
                && self.clear(b, c, x, g) == Some(true)
            {
                self.grant(b, x, wake);
            }
            Visit::Next
        });
    }

    /// Unlinks the marked `r` at once if it is first in its list (the common
    /// case for row locks; the caller owns `r`); otherwise the next walk will.
    #[inline]
    fn unlink_if_first(&self, b: &Bucket, r: &Request, g: &Guard) {
        let cur = b.head.load(Ordering::Acquire, g);
        if ptr::eq(cur.as_raw(), r) {
            let next = r.next.load(Ordering::Acquire, g);
            if b.head
                .compare_exchange(cur, next.with_tag(0), Ordering::AcqRel, Ordering::Relaxed, g)
                .is_ok()
            {
                // Its owner (us) retires it with others of its own: the
                // collector then touches one batch, not every node (whose
                // line a reclaimer on another core would have to fetch).
                r.recycle.store(OWNER_UNLINKED, Ordering::Relaxed);
            }
        }
    }

    /// Swap append: takes the caller's own OBSOLETE request `q` out of its
    /// list, and answers whether a request was linked behind it (then the
    /// caller owes the wake-up duty, `after_release`). The only request of
    /// its list leaves by a CAS of the head and then of the tail from it:
    /// nothing was ever appended behind it, so nobody waits for it, and
    /// nothing is marked. Any other is marked and, if first with a
    /// successor linked, unlinked from the head; otherwise the next walk
    /// unlinks it.
    #[inline]
    fn take_out(&self, b: &Bucket, q: &Request) -> bool {
        // SAFETY: no pointer loaded through this guard is dereferenced:
        // `q` is the caller's own request (alive), the rest are compared.
        let g = unsafe { epoch::unprotected() };
        let me = Shared::from(q as *const Request);
        // While `q` is first (and unmarked, so no walk unlinks it) the head
        // changes only by our own writes: an empty list's appender stores
        // it only after swapping a null tail, and the tail is `q` or later.
        // The head goes first, then the tail, so that the next appender to
        // an empty list finds the head null and is its only writer.
        if b.tail.load(Ordering::Relaxed, g) == me
            && b.head.load(Ordering::Relaxed, g) == me
            && b.head
                .compare_exchange(me, Shared::null(), Ordering::Relaxed, Ordering::Relaxed, g)
                .is_ok()
        {
            // AcqRel: Release hands our OBSOLETE, our work and the null head
            // to the next appender (its swap reads the null tail); Acquire
            // as the unlink's.
            if b.tail
                .compare_exchange(me, Shared::null(), Ordering::AcqRel, Ordering::Relaxed, g)
                .is_ok()
            {
                // Its owner (us) retires it with others of its own: the
                // collector then touches one batch, not every node.
                q.recycle.store(OWNER_UNLINKED, Ordering::Relaxed);
                return false;
            }
            // An appender swapped the tail from `q` meanwhile: `q` has a
            // successor (linked or on its way) and stays first until the
            // general path below. Nobody else writes the head while it is
            // null and the tail is not; the appender's walk waits for it.
            b.head.store(me, Ordering::Release);
        }
        let behind = mark(q, g);
        // Unlinked at once if it is first (the common case for row locks).
        // The successor's address is only copied into the head, and only
        // while `q` is still there: `q` is marked, so nobody can unlink that
        // successor before `q` is gone.
        let cur = b.head.load(Ordering::Acquire, g);
        if cur == me {
            let next = q.next.load(Ordering::Acquire, g).with_tag(0);
            if !next.is_null()
                && b.head
                    .compare_exchange(cur, next, Ordering::AcqRel, Ordering::Relaxed, g)
                    .is_ok()
            {
                q.recycle.store(OWNER_UNLINKED, Ordering::Relaxed);
            }
        }
        behind
    }

    /// After the request `r` stopped being in anyone's way (OBSOLETE or
    /// INHERITED stored): the fence and the wake-up duty of the module docs.
    /// Pins the epoch only for the walk of that duty.
    #[inline]
    fn after_release(&self, b: &Bucket, c: &AgentCounters, q: &Request, wake: &mut Vec<ReqPtr>) {
        // SeqCst fence between our store of the new state and the load of
        // `waiting` (and the waiters' states); pairs with the waiter's fence
        // in `acquire` (Dekker).
        fence(Ordering::SeqCst);
        if b.waiting.load(Ordering::Relaxed) != 0 {
            let g = epoch::pin();
            let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
            self.wake_scan(b, c, words, q.mode(), wake, &g);
        }
    }

    /// Releases the granted `r`.
    ///
    /// # Safety
    /// As [`Table::release`](super::Table::release).
    #[inline]
    pub(crate) unsafe fn release(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        // SAFETY: the caller's own live request (the contract).
        self.release_req(c, h, unsafe { r.get() }, wake)
    }

    /// Releases `q` (a fast hold or a linked request).
    #[inline]
    fn release_req(&self, c: &AgentCounters, h: HeadRef, q: &Request, wake: &mut Vec<ReqPtr>) {
        if h.0 & H_FAST != 0 {
            self.release_fast(c, h, q, wake);
        } else {
            self.release_linked(c, h, q, wake);
            self.uncount_strong(h);
        }
    }

    #[inline]
    fn release_linked(&self, c: &AgentCounters, h: HeadRef, q: &Request, wake: &mut Vec<ReqPtr>) {
        let b = self.bucket(h);
        // Release: whoever reads OBSOLETE (Acquire) sees what we did under the lock.
        q.status.store(OBSOLETE, Ordering::Release);
        if SWAP {
            // Not pinned: taking our own request out reads no other
            // request. With nothing linked behind it, no wake-up duty and no
            // fence (see `take_out`); else the fence and the duty, with `q`
            // already out of every waiter's way.
            if self.take_out(b, q) {
                self.after_release(b, c, q, wake);
            }
            return;
        }
        // Not pinned (`after_release` pins only to wake somebody): marking
        // our own request and unlinking it from the front read no other
        // request. The successor's address is only copied into the head,
        // and only while `q` is still there: `q` is marked, so nobody can
        // unlink that successor before `q` is gone. `q` itself stays ours
        // until we give it back, after this, and its retirement is stamped
        // then.
        // SAFETY: no pointer loaded through this guard is dereferenced but
        // `q`'s own, which is alive (the caller's own request).
        let g = unsafe { epoch::unprotected() };
        // Marked first: if nothing was linked behind `q`, nobody waits for
        // it (a request waits only for those ahead of it), and nobody can
        // link behind it any more (an append's CAS expects an unmarked
        // null; the walk it retries skips `q`): no wake-up duty, so no
        // fence. Else the fence and the duty, with `q` already out of every
        // waiter's way.
        if mark(q, g) {
            self.after_release(b, c, q, wake);
        }
        self.unlink_if_first(b, q, g);
    }

    /// Withdraws the waiting `r` unless it was granted meanwhile.
    ///
    /// # Safety
    /// As [`Table::cancel`](super::Table::cancel).
    pub(crate) unsafe fn cancel(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        let b = self.bucket(h);
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        if q.status
            .compare_exchange(WAITING, OBSOLETE, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Cancel::WasGranted;
        }
        b.waiting.fetch_sub(1, Ordering::Relaxed);
        // A waiter is in the way of later incompatible requests too.
        if SWAP {
            if self.take_out(b, q) {
                self.after_release(b, c, q, wake);
            }
        } else {
            let g = epoch::pin();
            self.after_release(b, c, q, wake);
            mark(q, &g);
            self.unlink_if_first(b, q, &g);
        }
        self.uncount_strong(h);
        Cancel::Cancelled
    }

    /// At commit: keeps the granted `r` INHERITED for the agent's next
    /// transaction if the lock has `heat` and nobody waits for it (SLI
    /// criteria 2 and 4, see `inherit.rs`); else releases it.
    ///
    /// # Safety
    /// As [`Table::release_or_inherit`](super::Table::release_or_inherit).
    #[inline]
    pub(crate) unsafe fn release_or_inherit(
        &self,
        c: &AgentCounters,
        h: HeadRef,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        let b = self.bucket(h);
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        // A fast hold is no request to pass on (the transaction releases
        // it before it gets here, `HeadRef::is_fast`). A counted strong one
        // is not passed on either: while INHERITED it would keep the
        // lock's fast path shut, and an invalidator, which cannot tell
        // that it was counted, would leave the count for its owner to
        // take back, maybe transactions later.
        if h.0 & (H_FAST | H_STRONG) != 0 || !heat.allows(|| Self::heat_window(b, q)) {
            self.release_req(c, h, q, wake);
            return Handoff::Released;
        }
        if self.pass_on(b, c, q, wake) {
            Handoff::Inherited
        } else {
            self.release_req(c, h, q, wake);
            Handoff::Released
        }
    }

    /// The heat window of `q`'s lock: the bucket's, if it is that lock's,
    /// else cold.
    #[inline]
    fn heat_window(b: &Bucket, q: &Request) -> u16 {
        let id = LockId::from_words(q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let h = b.heat.load(Ordering::Relaxed);
        if h >> 32 == heat_tag(id) { h as u16 } else { 0 }
    }

    /// Re-inheritance of a reclaimed request: no heat check (it was hot).
    ///
    /// # Safety
    /// As [`Table::reinherit`](super::Table::reinherit).
    #[inline]
    pub(crate) unsafe fn reinherit(
        &self,
        c: &AgentCounters,
        h: HeadRef,
        r: ReqPtr,
        wake: &mut Vec<ReqPtr>,
    ) -> Reinherit {
        let b = self.bucket(h);
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        if h.0 & (H_FAST | H_STRONG) == 0 && self.pass_on(b, c, q, wake) {
            Reinherit::Passed
        } else {
            self.release_req(c, h, q, wake);
            Reinherit::Released
        }
    }

    /// Stores INHERITED unless a waiter of the lock that `r` is in the way
    /// of exists; `false` (and `r` GRANTED again) if one does. `true` also
    /// when somebody invalidated it meanwhile: the agent's next transaction
    /// finds it INVALID.
    fn pass_on(&self, b: &Bucket, c: &AgentCounters, q: &Request, wake: &mut Vec<ReqPtr>) -> bool {
        // Release: pairs with the Acquire of the reclaim or invalidate CAS.
        q.status.store(INHERITED, Ordering::Release);
        // SeqCst fence: as in `after_release` (a waiter that did not see
        // INHERITED is seen here).
        fence(Ordering::SeqCst);
        if b.waiting.load(Ordering::Relaxed) == 0 {
            return true;
        }
        let g = epoch::pin();
        let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let (mode, me) = (q.mode(), q.txn.load(Ordering::Relaxed));
        let mut blocks = false;
        Self::walk(b, c, &g, |n| match n {
            None => {
                blocks = false;
                Visit::Next
            }
            Some((_, x)) => {
                if same_lock(x, words)
                    && x.txn.load(Ordering::Relaxed) != me
                    && x.status.load(Ordering::Acquire) == WAITING
                    && !mode.compatible(x.mode())
                {
                    blocks = true;
                    Visit::Stop
                } else {
                    Visit::Next
                }
            }
        });
        if !blocks {
            return true;
        }
        // Take it back to release it.
        if q.status
            .compare_exchange(INHERITED, GRANTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return false;
        }
        // Invalidated first (the invalidator unlinks it). An invalidation
        // does no wake-up of its own, and the waiter we saw parked while
        // this request was GRANTED may not be the invalidator: the
        // release's wake-up duty is ours. (Later waiters never park on an
        // INHERITED request: they invalidate it.)
        self.wake_scan(b, c, words, mode, wake, &g);
        true
    }

    /// The blockers of the waiting `r`; `false` if it no longer waits. `r`
    /// may belong to another agent, so it is dereferenced only once it was
    /// found in the list while pinned.
    pub(crate) fn blockers(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        let b = self.bucket(h);
        let g = epoch::pin();
        let target = r.as_ptr();
        let mut found = None;
        Self::walk(b, c, &g, |n| match n {
            Some((n, x)) if n.as_raw() == target => {
                found = Some(x);
                Visit::Stop
            }
            _ => Visit::Next,
        });
        // Reached through the list during our pin: alive until we unpin.
        let Some(q) = found else {
            return false;
        };
        if q.status.load(Ordering::Acquire) != WAITING {
            return false;
        }
        let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let (mode, txn) = (q.mode(), q.txn.load(Ordering::Relaxed));
        let start = out.len();
        let own_fast = self.own_fast(words, q.agent);
        let mut own = own_fast;
        Self::walk(b, c, &g, |n| match n {
            None => {
                out.truncate(start);
                own = own_fast;
                Visit::Next
            }
            Some((n, _)) if n.as_raw() == target => Visit::Stop,
            Some((_, x)) => {
                if same_lock(x, words) {
                    if x.txn.load(Ordering::Relaxed) == txn {
                        note_own(x, &mut own);
                    } else if !shut_out_by_own(x, own) {
                        let s = x.status.load(Ordering::Acquire);
                        if matches!(s, GRANTED | WAITING | ACTIVE) && !mode.compatible(x.mode()) {
                            out.push(Blocker::of(x));
                        }
                    }
                }
                Visit::Next
            }
        });
        // And the fast holds in its way (`fast.rs`).
        if fast::is_strong(mode)
            && let Some((f, s)) = self.slot_of_lock(words)
        {
            f.holders(s, mode, q.agent, out);
        }
        true
    }

    /// Notes an acquisition of `id` in the heat window of its bucket (only
    /// for locks above row level: see the module docs).
    #[inline]
    fn note_heat(&self, b: &Bucket, id: LockId, hot: bool) {
        if id.level() == Level::Row {
            return;
        }
        // Relaxed and racy: a lost update only blurs a heuristic. Written
        // only when it changes, so a steadily hot or cold lock costs no
        // shared write.
        let tag = heat_tag(id);
        let h = b.heat.load(Ordering::Relaxed);
        let window = if h >> 32 == tag { h as u16 } else { 0 };
        let n = tag << 32 | inherit::note_heat(window, hot) as u64;
        if n != h {
            b.heat.store(n, Ordering::Relaxed);
        }
    }

    /// Appends every lock with live requests (consistent per request, not
    /// per lock: the lists are read without a latch).
    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        let c = AgentCounters::default();
        let g = epoch::pin();
        for b in self.buckets.iter() {
            let start = out.len();
            // Own requests granted so far, to tell conversions.
            let mut held: Vec<(LockId, u64, Mode)> = Vec::new();
            Self::walk(b, &c, &g, |n| {
                let Some((_, x)) = n else {
                    out.truncate(start);
                    held.clear();
                    return Visit::Next;
                };
                let id = LockId::from_words(x.key.load(Ordering::Relaxed), x.hi.load(Ordering::Relaxed));
                let status = x.status.load(Ordering::Acquire);
                if !matches!(status, GRANTED | WAITING | ACTIVE | INHERITED) {
                    return Visit::Next;
                }
                let i = info_of(out, start, id);
                let (txn, mode) = (x.txn(), x.mode());
                let info = &mut out[i];
                // An ACTIVE request is still finding out whether it waits.
                if matches!(status, WAITING | ACTIVE) {
                    let waited =
                        std::time::Duration::from_nanos(now_ns.saturating_sub(x.since.load(Ordering::Relaxed)));
                    let converting_from = held
                        .iter()
                        .find(|&&(l, t, _)| l == id && t == txn.0)
                        .map(|&(_, _, m)| m);
                    info.waiters.push(Waiter {
                        txn,
                        mode,
                        converting_from,
                        waited,
                    });
                } else {
                    info.group = info.group.join(mode);
                    let inherited = status == INHERITED;
                    // A converted lock's older request stays granted until
                    // the newer one goes (see "Upgrades"): one holder, in
                    // the join of the two modes.
                    add_holder(info, txn, mode, inherited);
                    held.push((id, txn.0, mode));
                }
                Visit::Next
            });
        }
        // The fast holds (`fast.rs`), folded into their locks' holders.
        if let Some(f) = self.fast.as_deref() {
            f.snapshot_into(out);
        }
    }
}

impl<const SWAP: bool> Drop for LatchFree<SWAP> {
    fn drop(&mut self) {
        // Every agent is gone (each holds the manager), so every request
        // still linked is OBSOLETE or INVALID and ORPHANED or about to be;
        // requests unlinked earlier belong to the epoch collector.
        let g = epoch::pin();
        for b in self.buckets.iter() {
            b.tail.store(Shared::null(), Ordering::Relaxed);
            let mut cur = b.head.swap(Shared::null(), Ordering::AcqRel, &g);
            while !cur.is_null() {
                // SAFETY: non-null, loaded from the list while pinned.
                let next = unsafe { req(cur) }.next.load(Ordering::Acquire, &g).with_tag(0);
                let r = ReqPtr::from_raw(cur.as_raw());
                // SAFETY: linked, so not retired: nobody else will decide for
                // it, and no thread can reach it (every agent is gone).
                unsafe { returned(r) };
                cur = next;
            }
        }
    }
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_latchfree;
}

#[cfg(all(test, not(heirloom_loom)))]
mod unit {
    use super::*;
    use crate::id::TableId;

    fn set_lock(r: ReqPtr, id: LockId) {
        // SAFETY: the test's own node, freed at the end of the test.
        let q = unsafe { r.get() };
        let (key, hi) = id.words();
        q.key.store(key, Ordering::Relaxed);
        q.hi.store(hi, Ordering::Relaxed);
    }

    /// Regression: heat was one window per bucket, so a cold lock sharing a
    /// bucket with a hot one counted as hot.
    #[test]
    fn heat_belongs_to_one_lock_and_rows_note_none() {
        let t = LatchFree::<false>::new(1, false);
        let b = &t.buckets[0];
        let (hot, cold) = (LockId::table(TableId::new(0, 1)), LockId::table(TableId::new(0, 2)));
        let r = ReqPtr::alloc(0);
        // SAFETY: the test's own node, freed at the end.
        let q = unsafe { r.get() };
        for _ in 0..16 {
            t.note_heat(b, hot, true);
        }
        set_lock(r, hot);
        assert!(Heat::AtLeast(16).allows(|| LatchFree::<false>::heat_window(b, q)));
        set_lock(r, cold);
        assert!(
            !Heat::AtLeast(1).allows(|| LatchFree::<false>::heat_window(b, q)),
            "a cold lock of the same bucket is not hot"
        );
        // Row locks are never passed on and leave the window alone.
        for k in 0..16 {
            t.note_heat(b, LockId::row(TableId::new(0, 1), k), false);
        }
        set_lock(r, hot);
        assert!(Heat::AtLeast(16).allows(|| LatchFree::<false>::heat_window(b, q)));
        // Another candidate lock takes the window over: both look cold.
        t.note_heat(b, cold, true);
        assert!(!Heat::AtLeast(1).allows(|| LatchFree::<false>::heat_window(b, q)));
        set_lock(r, cold);
        assert!(!Heat::AtLeast(2).allows(|| LatchFree::<false>::heat_window(b, q)));
        assert!(Heat::AtLeast(1).allows(|| LatchFree::<false>::heat_window(b, q)));
        // SAFETY: never linked.
        unsafe { r.free() };
    }
}
