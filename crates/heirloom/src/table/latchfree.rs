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
    GRANTED, INHERITED, NEVER_LINKED, OBSOLETE, ORPHANED, OWNER_UNLINKED, RETURNED, ReqPtr, Request, WAITING,
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

struct Bucket {
    /// The first request of the list.
    head: epoch::Atomic<Request>,
    /// WAITING requests in this bucket (read by releasers after their fence).
    waiting: AtomicU32,
    /// Heat of one lock above row level: the lock's tag (the high half of
    /// its `hash64`) in bits 32..64, and its window in bits 0..16 (bit i set
    /// if its i-th most recent acquisition met another transaction's request
    /// on it or retried a CAS). See the module docs.
    heat: AtomicU64,
}

/// What a walk's visitor wants next.
enum Visit {
    Next,
    Stop,
}

pub(crate) struct LatchFree {
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
        GRANTED | WAITING => !mode.compatible(n.mode()),
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
    own != Mode::NL && x.status.load(Ordering::Acquire) == WAITING && !own.compatible(x.mode())
}

/// Notes the walker's own request `x` in `own` if it is granted.
#[inline]
fn note_own(x: &Request, own: &mut Mode) {
    if x.status.load(Ordering::Acquire) == GRANTED {
        *own = own.join(x.mode());
    }
}

/// Marks `n` logically deleted (from now on any walk may unlink it, and
/// nobody can link behind it), and answers whether a request was linked
/// behind it.
#[inline]
fn mark(n: &Request, g: &Guard) -> bool {
    !n.next.fetch_or(MARK, Ordering::AcqRel, g).with_tag(0).is_null()
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

impl LatchFree {
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

    /// Pins the epoch and swaps the head of `id`'s bucket with itself by
    /// a compare-and-swap: the exclusive step of a latch-free insert, with
    /// no work (see [`Table::null_section`](super::Table::null_section)).
    pub(crate) fn null_section(&self, _c: &AgentCounters, id: LockId) {
        let bucket = &self.buckets[(id.hash64() & self.mask) as usize];
        let guard = epoch::pin();
        // Acquire/Release as an insert's CAS; the outcome is irrelevant.
        let cur = bucket.head.load(Ordering::Acquire, &guard);
        let _ = bucket
            .head
            .compare_exchange(cur, cur, Ordering::AcqRel, Ordering::Acquire, &guard);
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
    /// found null at the end, or `None` if the visitor stopped.
    #[inline]
    fn walk<'g>(
        b: &'g Bucket,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Option<&'g epoch::Atomic<Request>> {
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
                    match pred.compare_exchange(cur, succ, Ordering::AcqRel, Ordering::Acquire, g) {
                        Ok(_) => {
                            retire(node, g);
                            cur = succ;
                            continue;
                        }
                        Err(_) => {
                            c.cas_retries.bump();
                            visit(None);
                            continue 'restart;
                        }
                    }
                }
                if let Visit::Stop = visit(Some((cur, node))) {
                    return None;
                }
                pred = &node.next;
                cur = next;
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
                // Never linked: reusable at once.
                nodes.put(n);
                Converting {
                    outcome,
                    req: r,
                    head: h,
                }
            }
            _ => Converting { outcome, req: n, head },
        }
    }

    /// Links `r` (owner and age already set) for `id` in `mode`. Refused
    /// requests are not linked.
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
            let mut first: Option<&Request> = None;
            let mut shared = false;
            let mut own = own_fast;
            let last = Self::walk(b, c, &g, |n| {
                match n {
                    None => {
                        first = None;
                        shared = false;
                        own = own_fast;
                    }
                    Some((_, x)) => {
                        if same_lock(x, words) {
                            if x.txn.load(Ordering::Relaxed) == me {
                                note_own(x, &mut own);
                            } else if !shut_out_by_own(x, own) && in_way(x, mode, &g) {
                                first.get_or_insert(x);
                            } else {
                                shared = true;
                            }
                        }
                    }
                }
                Visit::Next
            });
            let Some(last) = last else {
                unreachable!("a walk without a stop reaches the end")
            };
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
        // Read-after-write: a SeqCst fence between our count in `waiting`
        // and the WAITING published by the CAS, and the re-reads of the
        // requests ahead; pairs with the fence in `after_release` and
        // `pass_on` (see the module docs).
        fence(Ordering::SeqCst);
        if self.clear(b, c, q, &g) == Some(true) {
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
        let g = epoch::pin();
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
        self.after_release(b, c, q, wake);
        mark(q, &g);
        self.unlink_if_first(b, q, &g);
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
                        if (s == GRANTED || s == WAITING) && !mode.compatible(x.mode()) {
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
                if !matches!(status, GRANTED | WAITING | INHERITED) {
                    return Visit::Next;
                }
                let i = info_of(out, start, id);
                let (txn, mode) = (x.txn(), x.mode());
                let info = &mut out[i];
                if status == WAITING {
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

impl Drop for LatchFree {
    fn drop(&mut self) {
        // Every agent is gone (each holds the manager), so every request
        // still linked is OBSOLETE or INVALID and ORPHANED or about to be;
        // requests unlinked earlier belong to the epoch collector.
        let g = epoch::pin();
        for b in self.buckets.iter() {
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
        let t = LatchFree::new(1, false);
        let b = &t.buckets[0];
        let (hot, cold) = (LockId::table(TableId::new(0, 1)), LockId::table(TableId::new(0, 2)));
        let r = ReqPtr::alloc(0);
        // SAFETY: the test's own node, freed at the end.
        let q = unsafe { r.get() };
        for _ in 0..16 {
            t.note_heat(b, hot, true);
        }
        set_lock(r, hot);
        assert!(Heat::AtLeast(16).allows(|| LatchFree::heat_window(b, q)));
        set_lock(r, cold);
        assert!(
            !Heat::AtLeast(1).allows(|| LatchFree::heat_window(b, q)),
            "a cold lock of the same bucket is not hot"
        );
        // Row locks are never passed on and leave the window alone.
        for k in 0..16 {
            t.note_heat(b, LockId::row(TableId::new(0, 1), k), false);
        }
        set_lock(r, hot);
        assert!(Heat::AtLeast(16).allows(|| LatchFree::heat_window(b, q)));
        // Another candidate lock takes the window over: both look cold.
        t.note_heat(b, cold, true);
        assert!(!Heat::AtLeast(1).allows(|| LatchFree::heat_window(b, q)));
        set_lock(r, cold);
        assert!(!Heat::AtLeast(2).allows(|| LatchFree::heat_window(b, q)));
        assert!(Heat::AtLeast(1).allows(|| LatchFree::heat_window(b, q)));
        // SAFETY: never linked.
        unsafe { r.free() };
    }
}
