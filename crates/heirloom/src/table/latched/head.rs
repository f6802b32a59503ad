//! The latched table's lock head: a lock's queue under its latch, the id
//! it is bound to, and what it publishes for readers without the latch.

use crossbeam_utils::CachePadded;

use crate::id::{Level, LockId};
use crate::latch::Latch;
use crate::queue::{Outside, Queue};
use crate::request::ReqPtr;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering, fence};

/// A head latch's note ([`Latch::note`]): the queue had requests when its
/// last holder let go (written by `Head::publish_waiters`).
/// The miss path skips such heads without a `try_lock`, a write that would
/// take a line from the thread whose lock the head holds; a head whose note
/// is stale either way is only tried in vain or passed over (a new head is
/// bound instead), never rebound while it has requests, which only the
/// queue under the latch decides.
pub(super) const IN_USE: u8 = 1;

/// The id words of a head bound to no lock (an agent's spare): bit 15
/// of the packed word, which no `LockId` sets (its level takes bits 8
/// and 9, and bits 10 to 15 are zero).
pub(super) const UNBOUND: (u64, u64) = (0, 1 << 15);

/// A head's [`Head::lane`] while it keeps no lane: an extra head (in a
/// chain), a spare, or one whose lane a growth has not yet told it.
pub(super) const NO_LANE: u32 = u32::MAX;

// A bucket's index times four plus a lane fits below `NO_LANE`.
const _: () = assert!(crate::table::MAX_BUCKETS <= 1 << 30);

/// A lock head: 128 bytes, `repr(C)`, laid out so that the first cache
/// line holds what a bucket walk reads and what changes rarely (the id
/// words, the chain link, `waiters`, and the queue's read-mostly fields)
/// and the second what every operation writes (the queue's granted modes
/// and requests, then the latch's word; see `Queue`'s layout). A walk past
/// a head that another thread is latching then reads a line nobody writes.
#[repr(C)]
pub(super) struct Head {
    /// The lock's id (`LockId::words`), written under both latches (so
    /// exact under either), read by anyone.
    pub(super) key: AtomicU64,
    pub(super) hi: AtomicU64,
    /// Next head of the bucket's chain (written once, before publication).
    pub(super) next: AtomicPtr<CachePadded<Head>>,
    /// Somebody waits in the queue: written under the head latch after every
    /// operation, read without it by `Latched::reinherit`.
    pub(super) waiters: AtomicBool,
    /// Where the head is kept: its bucket's index in the buckets now
    /// times four plus its lane, or [`NO_LANE`]. Kept only by a table
    /// with spares (`Latched<true>`), under the bucket latch when the
    /// head is put in a lane (a miss, a growth), for the release that
    /// takes the head to its agent's spares (`Latched::detach`) to find
    /// its lane without the lock's hash or a search of the lanes; that
    /// release checks it under the bucket's latch, so a stale one costs a
    /// detach, never a wrong one. In `waiters`' padding: the head stays
    /// two lines.
    pub(super) lane: AtomicU32,
    pub(super) queue: Latch<Queue>,
}

// The id words, the link, `waiters` and the lane in the first 32 bytes;
// the whole head in the two lines of its `CachePadded`.
#[cfg(all(target_pointer_width = "64", not(heirloom_loom)))]
const _: () = assert!(std::mem::offset_of!(Head, queue) == 32 && std::mem::size_of::<Head>() <= 128);

impl Head {
    /// Publishes whether anybody waits, after an operation under the latch.
    /// If somebody does, an owner may have turned its request INHERITED
    /// without the latch just before our waiter looked at it; so, after a
    /// SeqCst fence that pairs with the owner's (after
    /// `Latched::reinherit`), look again (Dekker: either the owner sees
    /// `waiters` and comes to the latch, or we see INHERITED and
    /// invalidate it). `sli`: the table's
    /// manager passes locks on.
    /// Also opens the lock's fast-path word once the queue lets fast
    /// requests in again (`Queue::reopen_fast_word`), and notes in the
    /// latch whether the queue has requests ([`IN_USE`]). `latched`: the
    /// caller holds the latch, whose word is then its own line, so the note
    /// is stored without a look first; a section elided over the latch
    /// stores it only when it changes (a store to the latch's word aborts
    /// every other section elided over it).
    #[inline]
    pub(super) fn publish_waiters(&self, q: &mut Queue, wake: &mut Vec<ReqPtr>, sli: bool, latched: bool) {
        if q.has_waiters() {
            self.publish_waiters_slow(q, wake, sli);
        } else if self.waiters.load(Ordering::Relaxed) {
            self.waiters.store(false, Ordering::Relaxed);
        }
        q.reopen_fast_word();
        let note = if q.is_empty() { 0 } else { IN_USE };
        if latched || self.queue.note() != note {
            self.queue.set_note(note);
        }
    }

    #[cold]
    fn publish_waiters_slow(&self, q: &mut Queue, wake: &mut Vec<ReqPtr>, sli: bool) {
        // `waiters` changes only under this latch: if it is set already, it
        // has stayed set since the `publish_waiters` that set it and passed the fence,
        // and every owner that looked after that saw it
        // (`loom_reinherit.rs`, the second model).
        if !self.waiters.load(Ordering::Relaxed) {
            self.waiters.store(true, Ordering::Relaxed);
            // Only a lock that can be passed on has owners that turn their
            // requests INHERITED without the latch (`inherit::Rules::candidate`:
            // not rows, and only with inheritance on): the others need no
            // fence.
            if sli && self.id().level() != Level::Row {
                fence(Ordering::SeqCst);
            }
        }
        q.recheck_inherited(wake);
        if !q.has_waiters() {
            self.waiters.store(false, Ordering::Relaxed);
        }
    }

    /// Kept in lane `lane` of bucket `bucket` (of the buckets now);
    /// caller holds that bucket's latch (or every one, in a growth).
    #[inline]
    pub(super) fn set_lane(&self, bucket: usize, lane: usize) {
        self.lane.store(Self::lane_word(bucket, lane), Ordering::Relaxed);
    }

    /// [`Head::lane`]'s word for lane `lane` of bucket `bucket`.
    #[inline]
    pub(super) fn lane_word(bucket: usize, lane: usize) -> u32 {
        debug_assert!(lane < 4 && bucket < 1 << 30);
        (bucket as u32) << 2 | lane as u32
    }

    /// Where the head was last kept, as a hint ([`Head::lane`]): its
    /// bucket's index and its lane, or `None`.
    #[inline]
    pub(super) fn lane(&self) -> Option<(usize, usize)> {
        let at = self.lane.load(Ordering::Relaxed);
        (at != NO_LANE).then_some(((at >> 2) as usize, (at & 3) as usize))
    }

    /// The lock the head is bound to (exact under either latch).
    #[inline]
    pub(super) fn id(&self) -> LockId {
        // Relaxed: written under both latches.
        LockId::from_words(self.key.load(Ordering::Relaxed), self.hi.load(Ordering::Relaxed))
    }

    #[inline]
    pub(super) fn bound_to(&self, (key, hi): (u64, u64)) -> bool {
        // Relaxed: a racy hint unless the caller holds the head latch or
        // the bucket latch, which make these exact (writers hold both).
        self.key.load(Ordering::Relaxed) == key && self.hi.load(Ordering::Relaxed) == hi
    }

    /// Binds no lock any more: the head leaves the table for an agent's
    /// spares (`Latched::detach`). Caller holds the bucket latch and the
    /// head latch, and the queue is empty. [`UNBOUND`] is no lock's id, so
    /// a lookup that still reaches the head finds it bound to nothing.
    pub(super) fn unbind(&self) {
        let (key, hi) = UNBOUND;
        self.key.store(key, Ordering::Relaxed);
        self.hi.store(hi, Ordering::Relaxed);
    }

    /// Rebinds to `id` (whose fast holds are counted in `outside`); caller
    /// holds the bucket latch and the head latch.
    pub(super) fn bind(&self, q: &mut Queue, id: LockId, outside: Option<Outside>) {
        let (key, hi) = id.words();
        q.rebind();
        q.set_outside(outside);
        self.key.store(key, Ordering::Relaxed);
        self.hi.store(hi, Ordering::Relaxed);
    }
}
