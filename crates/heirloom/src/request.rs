//! Request nodes: one transaction's interest in one lock.
//!
//! A request is allocated by its agent, kept in the agent's pool between
//! uses (no allocation on the granted path once warm), and lent to a lock
//! queue while it is linked there. Fields other than `status` are read and
//! written only under the latch of the lock the request is linked to; they
//! are relaxed atomics so that the node can be shared without `unsafe`
//! field access. `status` is also read by its waiting owner without the
//! latch (that is how a grant reaches a parked thread).

use std::marker::PhantomData;
use std::ptr::NonNull;

use crossbeam_epoch::Atomic;

use crate::error::TxnId;
use crate::mode::Mode;
use crate::sync::{AtomicPtr, AtomicU8, AtomicU64, Ordering};

/// A request's `status`: where it stands in its lock's queue. The legal
/// moves between them and who makes each are the state table below.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub(crate) enum Status {
    /// Not yet linked anywhere (a node fresh from its pool).
    Fresh = 0,
    /// Granted; `mode` is held.
    Granted = 1,
    /// A new request waiting for `want`; holds nothing yet.
    Waiting = 2,
    /// Holds `mode`, waiting to convert to `want`.
    Converting = 3,
    /// Held in `mode` for the owning agent between transactions
    /// (speculative lock inheritance); reclaimed or invalidated by one CAS.
    Inherited = 4,
    /// An inherited request invalidated by a conflicting requester, which
    /// unlinked it; the owning agent puts it back in its pool.
    Invalid = 5,
    /// Latch-free table only: released or cancelled; the request stays in
    /// its bucket's list until somebody unlinks it.
    Obsolete = 6,
    /// The latch-free table with the swap append only: appended by its
    /// requester, which is still reading what is ahead of it; in the way of
    /// later requests as a granted one is, and moved on only by its owner
    /// (to GRANTED, WAITING or, when refused, OBSOLETE).
    Active = 7,
}

/// The statuses under the names the state table and the papers use.
pub(crate) const GRANTED: Status = Status::Granted;
/// See [`Status::Waiting`].
pub(crate) const WAITING: Status = Status::Waiting;
/// See [`Status::Converting`].
pub(crate) const CONVERTING: Status = Status::Converting;
/// See [`Status::Inherited`].
pub(crate) const INHERITED: Status = Status::Inherited;
/// See [`Status::Invalid`].
pub(crate) const INVALID: Status = Status::Invalid;
/// See [`Status::Obsolete`].
pub(crate) const OBSOLETE: Status = Status::Obsolete;
/// See [`Status::Active`].
pub(crate) const ACTIVE: Status = Status::Active;

/// A latch-free request's `recycle`: who may reuse or free the node once
/// it left its list (`table/latchfree/reclaim.rs`, `nodes.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Recycle {
    /// Lent to a lock table or in its agent's hands.
    InUse = 0,
    /// Unlinked from a latch-free list and no thread can still see it (set
    /// by an epoch-deferred function); its agent may reuse it.
    Returned = 1,
    /// Its agent dropped while it was still in a latch-free list; whoever
    /// sets RETURNED frees it.
    Orphaned = 2,
    /// Its owner unlinked it itself (it was first in its list); the owner
    /// retires it in a batch of its own (`nodes.rs`, `Nodes`).
    OwnerUnlinked = 3,
    /// A fast hold of the latch-free table (`table/fast.rs`), or a refused
    /// request of the CAS append: never in a list; its agent reuses it at
    /// once.
    NeverLinked = 4,
}

/// See [`Recycle::InUse`].
pub(crate) const IN_USE: Recycle = Recycle::InUse;
/// See [`Recycle::Returned`].
pub(crate) const RETURNED: Recycle = Recycle::Returned;
/// See [`Recycle::Orphaned`].
pub(crate) const ORPHANED: Recycle = Recycle::Orphaned;
/// See [`Recycle::OwnerUnlinked`].
pub(crate) const OWNER_UNLINKED: Recycle = Recycle::OwnerUnlinked;
/// See [`Recycle::NeverLinked`].
pub(crate) const NEVER_LINKED: Recycle = Recycle::NeverLinked;

/// A `u8`-sized state enum that an [`AtomicState`] holds.
///
/// # Safety
/// `Self` is `#[repr(u8)]` and every byte an `AtomicState<Self>` ever
/// holds is one of its discriminants: `from_byte` may transmute.
pub(crate) unsafe trait ByteState: Copy {
    /// The discriminant.
    fn byte(self) -> u8;
    /// The state of a byte that `byte` returned.
    ///
    /// # Safety
    /// `b` came from `byte`.
    unsafe fn from_byte(b: u8) -> Self;
}

/// `ByteState` for fieldless `#[repr(u8)]` enums.
macro_rules! byte_state {
    ($($t:ty),*) => {$(
        // SAFETY: `#[repr(u8)]` and fieldless; `from_byte` is only given
        // bytes that `byte` made (the contract), so the transmute yields a
        // variant.
        unsafe impl ByteState for $t {
            #[inline(always)]
            fn byte(self) -> u8 {
                self as u8
            }
            #[inline(always)]
            unsafe fn from_byte(b: u8) -> Self {
                // SAFETY: a discriminant of `$t` (the contract).
                unsafe { std::mem::transmute::<u8, $t>(b) }
            }
        }
    )*};
}

byte_state!(Status, Recycle);

/// An atomic byte that only ever holds a `T`: the atomic operations of
/// `AtomicU8`, typed. Its byte is private and written only through `T`,
/// which is what makes the reads' transmute sound.
#[derive(Debug)]
pub(crate) struct AtomicState<T: ByteState>(AtomicU8, PhantomData<T>);

impl<T: ByteState> AtomicState<T> {
    pub(crate) fn new(s: T) -> Self {
        AtomicState(AtomicU8::new(s.byte()), PhantomData)
    }

    #[inline(always)]
    fn state(b: u8) -> T {
        // SAFETY: every byte stored in an `AtomicState<T>` came from
        // `T::byte` (the only writers are below).
        unsafe { T::from_byte(b) }
    }

    #[inline(always)]
    pub(crate) fn load(&self, o: Ordering) -> T {
        Self::state(self.0.load(o))
    }

    #[inline(always)]
    #[track_caller]
    pub(crate) fn store(&self, s: T, o: Ordering) {
        self.0.store(s.byte(), o)
    }

    #[inline(always)]
    #[track_caller]
    pub(crate) fn swap(&self, s: T, o: Ordering) -> T {
        Self::state(self.0.swap(s.byte(), o))
    }

    #[inline(always)]
    #[track_caller]
    pub(crate) fn compare_exchange(&self, current: T, new: T, success: Ordering, failure: Ordering) -> Result<T, T> {
        self.0
            .compare_exchange(current.byte(), new.byte(), success, failure)
            .map(Self::state)
            .map_err(Self::state)
    }
}

// State table of `status` (who moves it):
//   (acquire, grantable)      -> GRANTED      requester, under the latch
//   (acquire, blocked)        -> WAITING      requester, under the latch
//   GRANTED  -> CONVERTING                    owner, under the latch
//   WAITING | CONVERTING -> GRANTED           whoever holds the latch when it
//                                             becomes grantable (a releaser,
//                                             a canceller), Release store that
//                                             pairs with the owner's Acquire
//                                             load in `Transaction::wait`
//   WAITING  -> (unlinked)                    owner cancelling, under the latch
//   CONVERTING -> GRANTED (old mode)          owner cancelling, under the latch
//   GRANTED -> (unlinked)                     owner releasing, under the latch
//   GRANTED -> INHERITED                      owner committing, under the latch
//                                             (shared mode, hot, no waiter)
//   INHERITED -> GRANTED                      owner's next transaction, CAS,
//                                             *without* the latch (reclaim)
//   INHERITED -> INVALID, then unlinked       a conflicting requester, CAS
//                                             under the latch (invalidate)
// Exactly one of reclaim and invalidate succeeds (both CAS from INHERITED);
// see `inherit.rs` and its loom model.
//
// The latch-free table (`table/latchfree/`) has no latch and its own
// table. With the CAS append GRANTED also means "linked, still checking"
// (ACTIVE in the paper); with the swap append a request is appended ACTIVE
// and its owner moves it to GRANTED or WAITING (or OBSOLETE if it is
// refused). WAITING -> GRANTED is a CAS by the waiter or by any releaser
// that finds it clear, and a released or cancelled request becomes
// OBSOLETE.

/// One request. See the module docs for which latch guards what.
///
/// `repr(C, align(64))`: one cache line per request, with the fields a
/// latch-free walk reads (link, lock id, owner, status, mode) first, and no
/// two requests sharing a line (their owners write their `status`).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Request {
    /// Latch-free table: the next request of the bucket's list; tag 1 marks
    /// this request as logically deleted (its `next` is then frozen).
    pub(crate) next: Atomic<Request>,
    /// The lock id's words (see `LockId::words`), filled in by the
    /// latch-free and the latched table (whose queues read them for fast
    /// row holds, `queue::Outside`).
    pub(crate) key: AtomicU64,
    pub(crate) hi: AtomicU64,
    /// Owning transaction.
    pub(crate) txn: AtomicU64,
    pub(crate) status: AtomicState<Status>,
    /// Granted mode (NL while WAITING; the latch-free table keeps the
    /// requested mode here from the start).
    pub(crate) mode: AtomicU8,
    /// Requested mode while WAITING or CONVERTING.
    pub(crate) want: AtomicU8,
    /// Latch-free table: IN_USE, RETURNED or ORPHANED (who may reuse or free
    /// the node after it left a list; see `table/latchfree/reclaim.rs`).
    pub(crate) recycle: AtomicState<Recycle>,
    /// Registry index of the owning agent (fixed for the node's life).
    pub(crate) agent: u32,
    /// The owner's age for wait-die and wound-wait (smaller is older).
    pub(crate) ts: AtomicU64,
    /// When it started waiting, in nanoseconds since the manager was built.
    pub(crate) since: AtomicU64,
    /// Latch-free table: the next request of an unlinking thread's batch of
    /// retired requests (see `latchfree::retire`).
    pub(crate) retired: AtomicPtr<Request>,
}

impl Request {
    /// The lock's words (`LockId::words`), where the table filled them
    /// in (the latch-free table, the latched one, fast holds' nodes).
    #[inline]
    pub(crate) fn words(&self) -> (u64, u64) {
        // Relaxed: written by the owner before the request was linked.
        (self.key.load(Ordering::Relaxed), self.hi.load(Ordering::Relaxed))
    }

    pub(crate) fn new(agent: u32) -> Self {
        Request {
            status: AtomicState::new(Status::Fresh),
            mode: AtomicU8::new(0),
            want: AtomicU8::new(0),
            txn: AtomicU64::new(0),
            ts: AtomicU64::new(0),
            since: AtomicU64::new(0),
            agent,
            next: Atomic::null(),
            key: AtomicU64::new(0),
            hi: AtomicU64::new(0),
            recycle: AtomicState::new(IN_USE),
            retired: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    #[inline]
    pub(crate) fn mode(&self) -> Mode {
        Mode::from_u8(self.mode.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn want(&self) -> Mode {
        Mode::from_u8(self.want.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn txn(&self) -> TxnId {
        TxnId(self.txn.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn status(&self) -> Status {
        // Acquire: pairs with the Release store of GRANTED by the granter, so
        // that an owner who sees GRANTED without the latch also sees the
        // `mode` written before it.
        self.status.load(Ordering::Acquire)
    }
}

/// A pointer to a request node owned by an agent.
///
/// ## Lifetime of a node (the contract of [`ReqPtr::get`])
///
/// A node is allocated by its agent (`Nodes::take`) and freed in exactly two
/// places:
///
/// * `Nodes::drop`, when its agent is dropped: the nodes of the pool, and
///   latch-free nodes the epoch collector has already returned. The agent
///   has no transaction open then (a transaction borrows it mutably), so
///   none of its nodes is linked in a latched queue; it has been removed
///   from the registry (`ManagerState::unregister`), so no deadlock search can
///   reach its `WaitInfo` any more.
/// * the epoch collector's deferred function (`latchfree::returned`,
///   `SealedBatch::returned`), for a latch-free node that was unlinked,
///   whose grace period is over, and whose agent is gone (ORPHANED).
///
/// So a node is alive while any of these holds, and every dereference names
/// the one it relies on:
///
/// 1. the caller is its agent (or a transaction on it), and the node is in
///    the agent's hands: held, inherited, in flight, pooled or in limbo;
/// 2. the caller holds the latch of a queue the node is linked in (an
///    agent unlinks its nodes before it can drop);
/// 3. the caller reached the node through a latch-free list while pinned
///    (it is retired only after it is unlinked, and returned only after
///    every pin that could see it ended);
/// 4. the caller holds the registry lock and read the node from a
///    registered agent's `WaitInfo` (the agent cannot unregister, hence
///    cannot drop, meanwhile).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ReqPtr(NonNull<Request>);

// SAFETY: a `Request` is all atomics plus a constant, so `&Request` may be
// used from any thread; whether the node is still alive is the separate
// question that `ReqPtr::get`'s contract answers at every dereference.
unsafe impl Send for ReqPtr {}
// SAFETY: as above.
unsafe impl Sync for ReqPtr {}

impl ReqPtr {
    pub(crate) fn alloc(agent: u32) -> Self {
        crate::sharing::op(crate::sharing::Op::Alloc);
        ReqPtr(NonNull::from(Box::leak(Box::new(Request::new(agent)))))
    }

    /// Frees the node.
    ///
    /// # Safety
    /// The node must come from [`ReqPtr::alloc`], be linked nowhere, and no
    /// copy of the pointer may be used afterwards.
    pub(crate) unsafe fn free(self) {
        // SAFETY: allocated by `Box` in `alloc`; the caller guarantees it is
        // unlinked and not used again.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }

    /// The pointer to a node found in a latch-free list.
    #[inline]
    pub(crate) fn from_raw(p: *const Request) -> Self {
        match NonNull::new(p as *mut Request) {
            Some(p) => ReqPtr(p),
            None => unreachable!("a null request pointer"),
        }
    }

    #[inline]
    pub(crate) fn as_ptr(self) -> *const Request {
        self.0.as_ptr()
    }

    /// The node's address, used as its parking key.
    #[inline]
    pub(crate) fn key(self) -> usize {
        self.0.as_ptr() as usize
    }

    /// The node.
    ///
    /// # Safety
    /// The node must be alive for the returned lifetime: one of the four
    /// conditions in the type's docs must hold for as long as the reference
    /// is used.
    #[inline]
    pub(crate) unsafe fn get(&self) -> &Request {
        // SAFETY: alive by the caller's contract; nodes are only ever shared
        // (`&Request`: all fields atomic or constant).
        unsafe { self.0.as_ref() }
    }
}

/// Wakes the owners of the requests in `wake` (granted, or with a new edge
/// to judge) after the latch that decided it was released, and empties it.
#[inline]
pub(crate) fn wake_granted(wake: &mut Vec<ReqPtr>) {
    if !wake.is_empty() {
        wake_all_slow(wake);
    }
}

#[cold]
fn wake_all_slow(wake: &mut Vec<ReqPtr>) {
    for r in wake.drain(..) {
        crate::sync::wake_all(r.key());
    }
}
