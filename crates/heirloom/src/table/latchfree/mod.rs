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
//! Both tables grow: a list that got long with other locks' requests is
//! frozen and lists below it take the appends, so a lock's requests lie
//! on a *route* of lists, read from the bucket down, in arrival order as
//! one list's are (`split.rs`; the lists below a bucket are CAS-appended
//! on both tables). Everything below speaks of "the list"; read "the
//! lock's route". The bucket's `waiting` and heat window serve its whole
//! tree.
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
//! append's. A bucket's list is frozen by its *end* taking the tail
//! (`split.rs`); an appender that swapped after it finds itself behind
//! the end, takes its node back and goes below by the CAS append, as every
//! later appender does. Every swap append writes the bucket's tail line,
//! which the CAS append does not (it writes only the last request's
//! `next`): on one hot lock under contention this table is slower
//! (MEASUREMENTS.md, "The slides' append as a table of its own"), so
//! `LatchFree` keeps the CAS append.
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
//! with, as an own older request does. A handle (`At`) carries the
//! lock's slot and whether the request is a fast hold (`Handle::FAST`) or a
//! counted strong one (`At::STRONG`), so release, cancel and blockers know
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
//! the head), and a release unlinks its own request at once: from the
//! head if it is first, else by a walk to it (`unlink_own`). So every
//! OBSOLETE request is unlinked, not only a prefix: a long-lived request
//! at the front (an inherited intention lock) does not keep the garbage
//! behind it alive. The thread whose CAS unlinked a request hands it to
//! crossbeam-epoch (`Guard::defer`, in batches of 32 per thread, see
//! `retire`), which sets RETURNED once no pinned thread can still see it;
//! a request its owner unlinked itself goes in the owner's own batch
//! instead (`nodes.rs`, `Nodes`), whose return the collector marks once
//! for the batch, so that no other thread writes the request's line. Only
//! then does the agent reuse it (`Nodes::take`). Every walk runs pinned;
//! an acquisition that finds its bucket empty does not walk, and does not
//! pin. A release of the first request does not pin unless it must wake
//! somebody (`after_release`): marking its own request and unlinking it
//! from the front read no other request (see `release_linked`), so that
//! release is one locked instruction and one fence shorter, and a thread
//! preempted while releasing holds up no grace period. A release of a
//! request further back pins for its walk: a pin writes only the thread's
//! own epoch line, where leaving the request to another thread's walk
//! would have three threads write its line (MEASUREMENTS.md, "The owner
//! unlinks its own request").
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

use super::fast::{self, FastTable, holds};
use super::{Caller, Converting, Handle, LockTable, Reinherit};
use crate::id::{Level, LockId};
use crate::inherit::{self, Heat};
use crate::mode::Mode;
use crate::monitor::LockInfo;
use crate::nodes::{Nodes, Reuse};
use crate::queue::{Blocker, Cancel, Handoff, Outcome, Strong};
use crate::request::{
    ACTIVE, GRANTED, INHERITED, NEVER_LINKED, OBSOLETE, ORPHANED, OWNER_UNLINKED, RETURNED, ReqPtr, Request, WAITING,
};
use crate::stats::AgentCounters;
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence};

mod acquire;
mod clear;
mod heat;
mod inheritance;
mod list;
mod reclaim;
mod release;
mod snapshot;
mod split;

use list::{Ahead, blocks, fill, in_way, mark, note_own, same_lock, shut_out_by_own};
pub(crate) use reclaim::hand_over_retired;
use reclaim::{retire, returned};
use split::{End, FROZEN, List, MAX_DEPTH, Route};

/// `epoch::pin`, counted by the sharing instrument (`sharing.rs`).
#[inline(always)]
fn pin() -> Guard {
    crate::sharing::op(crate::sharing::Op::Pin);
    epoch::pin()
}

/// `Shared::from(p)` for a request node's address, without crossbeam's
/// alignment assertion (`ensure_aligned`, which stays an out-of-line call
/// on every append): a node is a `Request`, aligned as its type, so the
/// address has no tag bits to lose.
#[inline(always)]
fn shared<'g>(p: *const Request) -> Shared<'g, Request> {
    debug_assert_eq!(p as usize % std::mem::align_of::<Request>(), 0);
    // SAFETY: a `Request`'s address (or null), whose low bits, below its
    // alignment, are clear: the untagged pointer `Shared::from` makes.
    unsafe { <Shared<'g, Request> as epoch::Pointer<Request>>::from_usize(p as usize) }
}

/// `a`, its write about to be counted by the sharing instrument at the
/// caller's line (the lists' links are crossbeam-epoch's atomics, not
/// the `sync` shim's).
#[inline(always)]
#[track_caller]
fn noted<T>(a: &epoch::Atomic<T>) -> &epoch::Atomic<T> {
    crate::sharing::note(ptr::from_ref(a) as usize);
    a
}

/// Tag on `Request::next`: the request is logically deleted.
const MARK: usize = 1;

/// This table's handle ([`LockTable::Handle`]):
/// the bucket in bits 0..32, the lock's fast-path slot (a row's: its
/// stripe's) plus one in bits 32..56 (0: none), the depth of the request's
/// list below its bucket in bits 56..60 (`split.rs`), and flags: a fast hold
/// ([`Handle::FAST`], linked nowhere), a strong request counted in its
/// slot's word (`STRONG`) or registered in its agent's record
/// (`REGISTERED` too; `fast::Strong`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At(usize);

const _: () = assert!(fast::SLOTS + fast::rows::STRIPES < At::SLOT_MASK);
const _: () = assert!(MAX_DEPTH < 16 && (Handle::FAST | At::STRONG | At::REGISTERED) >> At::DEPTH >= 16);

impl At {
    const BUCKET: usize = 0xffff_ffff;
    const SLOT: u32 = 32;
    const SLOT_MASK: usize = 0xff_ffff;
    const DEPTH: u32 = 56;
    const FAST: usize = Handle::FAST;
    const STRONG: usize = 1 << 60;
    const REGISTERED: usize = 1 << 61;

    /// A linked request's handle: its bucket, its lock's slot, and how a
    /// strong request is counted (`None`: it is not strong).
    #[inline]
    fn linked(bucket: usize, slot: Option<usize>, strong: Option<Strong>) -> Self {
        let flags = match strong {
            None | Some(Strong::Uncounted) => 0,
            Some(Strong::Counted) => At::STRONG,
            Some(Strong::Registered) => At::STRONG | At::REGISTERED,
        };
        At(bucket | slot.map_or(0, |s| (s + 1) << At::SLOT) | flags)
    }

    /// A fast hold's handle: its slot alone (no bucket: the lock's id
    /// finds it where a fast hold needs it, and the hash is not worth
    /// paying on every fast hold).
    #[inline]
    fn fast_hold(slot: usize) -> Self {
        At((slot + 1) << At::SLOT | At::FAST)
    }

    /// The handle of a request linked `depth` lists below its bucket.
    #[inline(always)]
    fn at_depth(self, depth: u32) -> Self {
        At(self.0 | (depth as usize) << At::DEPTH)
    }

    #[inline]
    fn bucket(self) -> usize {
        self.0 & At::BUCKET
    }

    /// How far below its bucket the request's list is (0: the bucket's own).
    #[inline]
    fn depth(self) -> u32 {
        ((self.0 >> At::DEPTH) & 0xf) as u32
    }

    /// The fast-path slot named in the handle.
    #[inline]
    fn slot(self) -> Option<usize> {
        match (self.0 >> At::SLOT) & At::SLOT_MASK {
            0 => None,
            s => Some(s - 1),
        }
    }

    #[inline]
    fn is_fast(self) -> bool {
        self.0 & At::FAST != 0
    }

    /// How the strong request is counted; `None` if it is not strong.
    #[inline]
    fn strong(self) -> Option<Strong> {
        match self.0 & (At::STRONG | At::REGISTERED) {
            0 => None,
            At::STRONG => Some(Strong::Counted),
            _ => Some(Strong::Registered),
        }
    }

    /// Neither a fast hold nor a counted strong request: a request that
    /// may be passed on by inheritance.
    #[inline]
    fn may_pass_on(self) -> bool {
        self.0 & (At::FAST | At::STRONG) == 0
    }
}

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
    /// The lists below, once the list was split (`split.rs`; the swap
    /// append's tagged `TOP_FROZEN` once its freeze is done).
    child: crate::sync::AtomicPtr<split::Sub>,
    _line: [u8; 64 - 32],
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
    /// log2 of the bucket count: the hash bits that choose a bucket.
    bits: u32,
    /// Levels a list may be split into below its bucket (`split.rs`): as
    /// many as the hash has bits left for, at most `MAX_DEPTH`.
    max_depth: u32,
    /// Requests of other locks in a leaf, not waiting, that split it
    /// (`split::SPLIT_AT`).
    split_at: u32,
    /// The intention-lock fast path (`fast.rs`), when on.
    fast: Option<Box<fast::Fast>>,
    /// Wait-die judges a request that would wait before it is linked
    /// ([`LockTable::judge_wait_die`]).
    wait_die: bool,
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

// (The padding counts 64-bit words; elsewhere, and under loom, the tail
// only lands at another offset.)
#[cfg(all(not(heirloom_loom), target_pointer_width = "64"))]
const _: () = assert!(
    std::mem::offset_of!(Bucket, tail) == 64,
    "the tail on the bucket's second line"
);

impl<const SWAP: bool> LatchFree<SWAP> {
    /// The number of buckets (the lists below a split list not counted).
    pub(crate) fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// A table of `buckets` lists (rounded up to a power of two), with the
    /// intention-lock fast path if `fast_path` (see `fast.rs`; a fast
    /// hold is never passed on by inheritance, which needs a request of
    /// its own).
    pub(crate) fn new(buckets: usize, fast_path: bool, rows: bool) -> Self {
        let n = buckets.max(1).next_power_of_two();
        LatchFree {
            buckets: (0..n)
                .map(|_| {
                    CachePadded::new(Bucket {
                        head: epoch::Atomic::null(),
                        waiting: AtomicU32::new(0),
                        heat: AtomicU64::new(0),
                        child: crate::sync::AtomicPtr::new(ptr::null_mut()),
                        _line: [0; 64 - 32],
                        tail: epoch::Atomic::null(),
                    })
                })
                .collect(),
            mask: n as u64 - 1,
            bits: n.trailing_zeros(),
            max_depth: ((64 - n.trailing_zeros()) / split::FANOUT.trailing_zeros()).min(MAX_DEPTH),
            split_at: split::SPLIT_AT,
            fast: fast_path.then(|| Box::new(fast::Fast::with_rows(rows))),
            wait_die: false,
        }
    }

    /// The same table, splitting a leaf at `n` requests of other locks not
    /// waiting (the tests' and models').
    #[cfg(test)]
    pub(crate) fn splitting_at(mut self, n: u32) -> Self {
        self.split_at = n;
        self
    }

    /// The bucket of a linked request's handle (a fast hold's names none:
    /// [`LatchFree::bucket_of`] its lock).
    #[inline]
    fn bucket(&self, h: At) -> &Bucket {
        debug_assert!(!h.is_fast(), "a fast hold's handle names no bucket");
        &self.buckets[h.bucket()]
    }

    /// `id`'s bucket, and its index.
    #[inline]
    fn bucket_of(&self, id: LockId) -> (usize, &Bucket) {
        let bi = (id.hash64() & self.mask) as usize;
        (bi, &self.buckets[bi])
    }

    /// The route below its bucket of the lock of `words` (`split.rs`).
    #[inline]
    fn route(&self, words: (u64, u64)) -> Route {
        Route::new(LockId::from_words(words.0, words.1).hash64(), self.bits)
    }

    /// The list that the caller's own request `q`, of handle `h`, was
    /// linked in: its bucket's, or one below on its lock's route.
    #[inline]
    fn list_of(&self, h: At, q: &Request) -> List<'_> {
        let mut l = self.bucket(h).list();
        let depth = h.depth();
        if depth != 0 {
            let route = self.route((q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed)));
            for d in 1..=depth {
                // Linked there, so the lists down to it exist.
                l = l.below(route, d).expect("a request's list exists");
            }
        }
        l
    }

    /// The fast-path slot of the lock of `words`, if it has one (looked up,
    /// never claimed: see `Fast::slot`).
    #[inline]
    fn slot_of_lock(&self, words: (u64, u64)) -> Option<(&fast::Fast, usize)> {
        let f = self.fast.as_deref()?;
        f.slot_for(LockId::from_words(words.0, words.1), false).map(|s| (f, s))
    }

    /// The modes `agent` holds the lock of `words` in fast (NL: none): its
    /// own holds, never in the way of its own requests.
    #[inline]
    fn own_fast(&self, words: (u64, u64), agent: u32) -> Mode {
        match self.slot_of_lock(words) {
            Some((f, s)) => f.own(s, words, agent),
            None => Mode::NL,
        }
    }

    /// The fast path and the slot named in the handle `h`, if any.
    #[inline]
    fn fast_of(&self, h: At) -> Option<(&fast::Fast, usize)> {
        Some((self.fast.as_deref()?, h.slot()?))
    }
}

// SAFETY: a request is granted only once every request ahead of it in its
// bucket's list is compatible or gone, and the fast holds in its way are
// counted (`acquire.rs`); whoever makes a waiter grantable walks for it
// (`release.rs`, `wake_scan`, with the `waiting` Dekker); a handle names
// the bucket, which lives as long as the table; nodes once linked are
// reused only after a grace period (`nodes`, `reclaim.rs`).
unsafe impl<const SWAP: bool> LockTable for LatchFree<SWAP> {
    type Handle = At;

    /// A request about to wait is judged by a walk of its own
    /// (`LatchFree::older_ahead`).
    fn judge_wait_die(&mut self) {
        self.wait_die = true;
    }

    /// Nodes once linked are read by walkers until a grace period passes.
    fn nodes(&self, agent: u32) -> Nodes {
        Nodes::new(Reuse::AfterGracePeriod, agent, hand_over_retired)
    }

    /// The append (`acquire.rs`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn acquire(
        &self,
        a: Caller<'_>,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        try_fast: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, At) {
        // SAFETY: this function's contract.
        unsafe { self.acquire_in_list(a.counters, id, r, mode, may_wait, try_fast, wake) }
    }

    /// A new request for the target mode that replaces the old once granted
    /// (`acquire.rs`): a linked request's mode is fixed, since others
    /// judged their own by it.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn convert(
        &self,
        a: Caller<'_>,
        id: LockId,
        h: At,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        _wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting {
        // SAFETY: this function's contract.
        unsafe { self.convert_in_list(a.counters, id, h, r, to, may_wait, wake, nodes) }
    }

    #[inline]
    fn fast(&self) -> Option<&fast::Fast> {
        self.fast.as_deref()
    }

    #[inline(always)]
    fn try_fast_hold(
        &self,
        a: Caller<'_>,
        id: LockId,
        mode: Mode,
        txn: u64,
        ts: u64,
        wake: &mut Vec<ReqPtr>,
    ) -> Option<At> {
        holds::try_hold(self, a, id, mode, txn, ts, wake)
    }

    #[inline(always)]
    fn release_fast_hold(&self, a: Caller<'_>, id: LockId, h: At, mode: Mode, ending: bool, wake: &mut Vec<ReqPtr>) {
        holds::release_hold(self, a, id, h, mode, ending, wake);
    }

    #[inline]
    fn upgrade_fast_hold(&self, a: Caller<'_>, id: LockId, h: At, wake: &mut Vec<ReqPtr>) -> bool {
        holds::upgrade_hold(self, a, id, h, wake)
    }

    /// A list per lock either way: nothing gained by a batch.
    #[inline]
    fn releases_at_once(&self) -> bool {
        true
    }

    /// `release.rs`.
    #[inline]
    unsafe fn release(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        // SAFETY: this function's contract.
        unsafe { self.release_in_list(a.counters, h, r, wake) }
    }

    /// `inheritance.rs`.
    #[inline]
    unsafe fn release_or_inherit(
        &self,
        a: Caller<'_>,
        h: At,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        // SAFETY: this function's contract.
        unsafe { self.release_or_inherit_in_list(a.counters, h, r, heat, wake) }
    }

    /// `inheritance.rs`: passed on, or released if somebody waits.
    #[inline]
    unsafe fn reinherit(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Reinherit {
        // SAFETY: this function's contract.
        unsafe { self.reinherit_in_list(a.counters, h, r, wake) }
    }

    /// `release.rs`.
    unsafe fn cancel(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // A fast hold never waits.
        if h.is_fast() {
            return Cancel::WasGranted;
        }
        // SAFETY: this function's contract.
        unsafe { self.cancel_in_list(a.counters, h, r, wake) }
    }

    /// `r` may belong to another agent, so it is dereferenced only once it
    /// was found in the list while pinned.
    unsafe fn blockers(&self, a: Caller<'_>, h: At, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        if h.is_fast() {
            return false;
        }
        let c = a.counters;
        let b = self.bucket(h);
        let g = pin();
        let target = r.as_ptr();
        let mut found = None;
        // Once it is found, the walks of the lists left stop at once.
        let mut find = |n: Option<(Shared<'_, Request>, _)>| match n {
            _ if found.is_some() => Visit::Stop,
            Some((n, x)) if n.as_raw() == target => {
                found = Some(x);
                Visit::Stop
            }
            _ => Visit::Next,
        };
        // Its route is not known before it is found: every list of the
        // bucket, one by one.
        Self::walk_each_list(b, c, &g, |_, n| find(n));
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
        Self::walk(b, self.route(words), c, &g, |n| match n {
            None => {
                out.truncate(start);
                own = own_fast;
                Visit::Next
            }
            Some((n, _)) if n.as_raw() == target => Visit::Stop,
            Some((_, x)) => {
                if blocks(x, words, txn, mode, &mut own) {
                    out.push(Blocker::of(x));
                }
                Visit::Next
            }
        });
        // And the fast holds in its way (`fast.rs`).
        if let Some((f, s)) = self.slot_of_lock(words)
            && fast::strong_at(s, mode)
        {
            f.holders(s, words, mode, q.agent, out);
        }
        true
    }

    /// Pins the epoch and swaps the head of `id`'s bucket (the swap
    /// append: its tail, the word every append writes) with itself by a
    /// compare-and-swap: the exclusive step of a latch-free insert, with no
    /// work.
    fn null_section(&self, _a: Caller<'_>, id: LockId) {
        let bucket = &self.buckets[(id.hash64() & self.mask) as usize];
        let word = if SWAP { &bucket.tail } else { &bucket.head };
        let guard = pin();
        // Acquire/Release as an insert's CAS; the outcome is irrelevant.
        let cur = word.load(Ordering::Acquire, &guard);
        let _ = word.compare_exchange(cur, cur, Ordering::AcqRel, Ordering::Acquire, &guard);
    }

    /// `snapshot.rs`.
    fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        self.snapshot_lists(now_ns, out);
    }
}

impl<const SWAP: bool> FastTable for LatchFree<SWAP> {
    #[inline]
    fn fast_hold(&self, s: usize) -> At {
        At::fast_hold(s)
    }

    #[inline]
    fn fast_slot(h: At) -> Option<usize> {
        h.slot()
    }

    /// Walks `id`'s bucket for waiters if any are counted there.
    #[inline]
    fn after_fast_release(&self, c: &AgentCounters, id: LockId, mode: Mode, wake: &mut Vec<ReqPtr>) {
        self.after_fast_release_in(self.bucket_of(id).1, c, id.words(), mode, wake);
    }
}

impl<const SWAP: bool> Drop for LatchFree<SWAP> {
    fn drop(&mut self) {
        // Every agent is gone (each holds the manager), so every request
        // still linked is OBSOLETE or INVALID and ORPHANED or about to be;
        // requests unlinked earlier belong to the epoch collector.
        let g = pin();
        for b in self.buckets.iter() {
            b.tail.store(Shared::null(), Ordering::Relaxed);
            b.list().each_list(&mut |l| {
                let mut cur = l.head.swap(Shared::null(), Ordering::AcqRel, &g);
                while !cur.is_null() {
                    // SAFETY: non-null, loaded from the list while pinned.
                    let next = unsafe { req(cur) }.next.load(Ordering::Acquire, &g).with_tag(0);
                    let r = ReqPtr::from_raw(cur.as_raw());
                    // SAFETY: linked, so not retired: nobody else will decide
                    // for it, and no thread can reach it (every agent is gone).
                    unsafe { returned(r) };
                    cur = next;
                }
            });
            if SWAP {
                b.list().free_top();
            } else {
                b.list().free_below();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(heirloom_loom)]
    mod loom_latchfree;
    #[cfg(heirloom_loom)]
    mod loom_split;
    #[cfg(not(heirloom_loom))]
    mod split;
    #[cfg(not(heirloom_loom))]
    mod unlink;
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
        let t = LatchFree::<false>::new(1, false, false);
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
