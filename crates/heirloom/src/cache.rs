//! The lock cache: the locks the open transaction holds, or was handed by
//! its agent's previous one, each an entry ([`Held`]) in acquisition order
//! (root first). Every lock request looks here first, so its lookups are
//! the hot path's first step:
//!
//! * a filter ([`LockCache::may_hold`]: one hash, 512 bits) over the ids in
//!   the cache, so that a lock the transaction never took costs one load
//!   and no scan. A bit is set whenever an entry arrives and cleared only
//!   when the cache is emptied: a stale bit only costs the scan it would
//!   have saved.
//! * up to [`LockCache::SCAN_LIMIT`] entries a scan (from the back for
//!   [`LockCache::find`], from the front for ancestors,
//!   [`LockCache::find_ancestor`]); beyond it an index by id, built the first
//!   time the cache grows past the limit and kept right by every change of
//!   membership here.
//! * parent hints: per slot (`LockId::hint_slot` of a parent), the entry of
//!   the parent of the leaf of the last walk that left one there, or
//!   [`NO_HINT`]; `Transaction::lock_path` says when they are trusted. Any
//!   removal forgets them all.
//!
//! The cache owns those invariants: entries enter and leave only through
//! its methods, which keep the filter and the index right. Entries change
//! in place (mode, state) through `DerefMut` to the slice; an entry's `id`
//! never changes.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

use crate::id::{IdBuildHasher, LockId};
use crate::mode::Mode;
use crate::request::ReqPtr;
use crate::table::Handle;

/// Where a lock-cache entry ([`Held`]) stands: one of the four constants
/// below. The legal moves: a lock the transaction is granted is [`LIVE`];
/// at commit a lock kept INHERITED goes to the next transaction as
/// [`PENDING`]; asked for again it becomes [`RECLAIMED`], or [`DEAD`] if it
/// was invalidated meanwhile; the next commit passes `LIVE` and `RECLAIMED`
/// entries on again as `PENDING`.
///
/// A byte under a type rather than an enum: an enum gives `Option<Held>`
/// (the commit's loop pops entries) a niche in this field, which cost the
/// uncontended transaction instructions (`scripts/callgrind.sh`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub(crate) struct HeldState(u8);

/// Held by the current transaction.
pub(crate) const LIVE: HeldState = HeldState(0);
/// Inherited from the agent's previous transaction, not yet reclaimed (the
/// request is INHERITED or, if invalidated, INVALID).
pub(crate) const PENDING: HeldState = HeldState(1);
/// Was pending, found invalidated; the node is back in the pool and the
/// entry only keeps its place in the list.
pub(crate) const DEAD: HeldState = HeldState(2);
/// Held by the current transaction, reclaimed from the previous one (may be
/// passed on again without the latch).
pub(crate) const RECLAIMED: HeldState = HeldState(3);

/// A lock the current transaction holds (or was handed).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub(crate) id: LockId,
    pub(crate) mode: Mode,
    pub(crate) req: ReqPtr,
    pub(crate) head: Handle,
    pub(crate) state: HeldState,
    /// Inherited: the transactions it has stayed unused through
    /// (`Builder::keep_inherited`); 0 otherwise.
    pub(crate) idle: u8,
}

impl Held {
    /// A lock just granted to the current transaction.
    #[inline(always)]
    pub(crate) fn live(id: LockId, mode: Mode, req: ReqPtr, head: Handle) -> Self {
        Held {
            id,
            mode,
            req,
            head,
            state: LIVE,
            idle: 0,
        }
    }
}

/// What releasing a fast hold reads of its entry ([`LockCache::pop_ending_fast`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastHeld {
    pub(crate) id: LockId,
    pub(crate) mode: Mode,
    pub(crate) head: Handle,
    /// `Nodes::none` if it was taken without a node (`try_fast_hold`).
    pub(crate) req: ReqPtr,
}

impl From<Held> for FastHeld {
    #[inline(always)]
    fn from(h: Held) -> Self {
        FastHeld {
            id: h.id,
            mode: h.mode,
            head: h.head,
            req: h.req,
        }
    }
}

/// An entry of [`LockCache`]'s parent hints with no hint.
pub(crate) const NO_HINT: u32 = u32::MAX;

/// The parent hints with none.
const NO_HINTS: [u32; 8] = [NO_HINT; 8];

/// The open transaction's locks (see the module's docs).
pub(crate) struct LockCache {
    /// In acquisition order, root first.
    entries: Vec<Held>,
    /// Index into `entries` by lock id, kept once the cache holds more than
    /// [`LockCache::SCAN_LIMIT`] entries (empty otherwise).
    index: HashMap<LockId, u32, IdBuildHasher>,
    /// Every entry's `LockId::filter_bit` is set.
    filter: [u64; 8],
    /// Per hint slot, an entry or [`NO_HINT`].
    hints: [u32; 8],
}

impl Deref for LockCache {
    type Target = [Held];

    #[inline(always)]
    fn deref(&self) -> &[Held] {
        &self.entries
    }
}

impl DerefMut for LockCache {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Held] {
        &mut self.entries
    }
}

impl LockCache {
    /// Up to this many entries a lookup scans (when the filter lets it
    /// through at all); beyond it, the index answers.
    pub(crate) const SCAN_LIMIT: usize = 64;

    pub(crate) fn new() -> Self {
        LockCache {
            entries: Vec::with_capacity(32),
            index: HashMap::default(),
            filter: [0; 8],
            hints: NO_HINTS,
        }
    }

    /// Whether `id` may be in the cache (`false`: it is not).
    #[inline(always)]
    pub(crate) fn may_hold(&self, id: LockId) -> bool {
        let (w, m) = id.filter_bit();
        self.filter[w] & m != 0
    }

    /// [`LockCache::may_hold`] for a bit the caller computed
    /// (`LockId::filter_bit`), to test and then mark it with one hash.
    #[inline(always)]
    pub(crate) fn may_hold_bit(&self, (w, m): (usize, u64)) -> bool {
        self.filter[w] & m != 0
    }

    /// Marks `id` in the filter.
    #[inline(always)]
    pub(crate) fn note(&mut self, id: LockId) {
        self.note_bit(id.filter_bit());
    }

    /// Marks a filter bit ahead of its entry (see
    /// [`LockCache::may_hold_bit`]), which then comes with
    /// [`LockCache::push_noted`].
    #[inline(always)]
    pub(crate) fn note_bit(&mut self, (w, m): (usize, u64)) {
        self.filter[w] |= m;
    }

    /// The entry of `id` nearest the back, if any.
    #[inline]
    pub(crate) fn find(&self, id: LockId) -> Option<usize> {
        if !self.may_hold(id) {
            return None;
        }
        self.scan(id)
    }

    /// [`LockCache::find`] past the filter (its caller tested it).
    #[inline]
    pub(crate) fn scan(&self, id: LockId) -> Option<usize> {
        if self.entries.len() <= Self::SCAN_LIMIT {
            self.entries.iter().rposition(|h| h.id == id)
        } else {
            self.index.get(&id).map(|&i| i as usize)
        }
    }

    /// The entry of `id`, an ancestor on a lock's path. The cache is in
    /// acquisition order, so ancestors (and the inherited locks, root
    /// first) sit near its front: scanned from the front, skipping the
    /// `Dead` entries an invalidation leaves. At most one entry per lock is
    /// not `Dead` (a lock is pushed again only after its entry was found
    /// `Dead`), and it is the one `find` returns, as this does.
    #[inline]
    pub(crate) fn find_ancestor(&self, id: LockId) -> Option<usize> {
        if self.entries.len() > Self::SCAN_LIMIT {
            return self.find(id);
        }
        self.entries.iter().position(|h| h.id == id && h.state != DEAD)
    }

    /// Adds an entry.
    #[inline(always)]
    pub(crate) fn push(&mut self, h: Held) {
        self.note(h.id);
        self.push_noted(h);
    }

    /// [`LockCache::push`] with the filter already marked
    /// ([`LockCache::note`]).
    #[inline(always)]
    pub(crate) fn push_noted(&mut self, h: Held) {
        debug_assert!(self.may_hold(h.id));
        self.entries.push(h);
        if self.entries.len() > Self::SCAN_LIMIT {
            self.index_last();
        }
    }

    /// A push past [`LockCache::SCAN_LIMIT`] entries: the index learns the
    /// entry just pushed (all of them, the first time).
    #[cold]
    fn index_last(&mut self) {
        let n = self.entries.len();
        if n == Self::SCAN_LIMIT + 1 {
            for (i, x) in self.entries.iter().enumerate() {
                self.index.insert(x.id, i as u32);
            }
        } else {
            self.index.insert(self.entries[n - 1].id, (n - 1) as u32);
        }
    }

    /// Takes entry `k` out (an unlock); the hints are forgotten.
    pub(crate) fn remove(&mut self, k: usize) -> Held {
        self.hints = NO_HINTS;
        let h = self.entries.remove(k);
        if k == self.entries.len() && self.entries.len() > Self::SCAN_LIMIT {
            self.index.remove(&h.id);
        } else {
            self.reindex();
        }
        h
    }

    /// Takes out every entry `gone` answers `true` for (an escalation), in
    /// order; the hints are forgotten.
    pub(crate) fn remove_where(&mut self, mut gone: impl FnMut(&Held) -> bool) {
        self.hints = NO_HINTS;
        self.entries.retain(|h| !gone(h));
        self.reindex();
    }

    /// Rebuilds the index after entries left the middle (empty again at or
    /// below [`LockCache::SCAN_LIMIT`] entries, so that a push rebuilds it
    /// from scratch when it is needed again).
    fn reindex(&mut self) {
        self.index.clear();
        if self.entries.len() > Self::SCAN_LIMIT {
            for (i, x) in self.entries.iter().enumerate() {
                self.index.insert(x.id, i as u32);
            }
        }
    }

    /// The transaction is ending: its entries leave last first. The filter
    /// and the index are left as they are until [`LockCache::ended`],
    /// which the caller runs once the cache is empty (no lookup runs in
    /// between).
    #[inline(always)]
    pub(crate) fn pop_ending(&mut self) -> Option<Held> {
        self.entries.pop()
    }

    /// [`LockCache::pop_ending`] of the last entry if it is a fast hold
    /// (never inherited, so always LIVE), the commonest entry at a
    /// commit: only the fields its release reads, not the whole entry,
    /// which the commit's loop would otherwise copy out and keep
    /// (`scripts/callgrind.sh`; MEASUREMENTS.md, "A fast hold leaves the
    /// commit's loop without its entry's copy").
    #[inline(always)]
    pub(crate) fn pop_ending_fast(&mut self) -> Option<FastHeld> {
        let h = self.entries.last()?;
        if !h.head.is_fast() {
            return None;
        }
        debug_assert!(h.state == LIVE, "a fast hold is never inherited");
        let f = FastHeld {
            id: h.id,
            mode: h.mode,
            head: h.head,
            req: h.req,
        };
        self.entries.truncate(self.entries.len() - 1);
        Some(f)
    }

    /// After the last [`LockCache::pop_ending`]: the filter and the index
    /// are emptied too. (The hints are forgotten when the next transaction
    /// begins.)
    #[inline]
    pub(crate) fn ended(&mut self) {
        debug_assert!(self.entries.is_empty());
        self.index.clear();
        self.filter = [0; 8];
    }

    /// The new transaction starts with `inherited`, the locks its agent's
    /// previous one passed on (root first), as `Pending` entries; the
    /// cache's empty vector becomes the list (both keep their capacity).
    #[inline]
    pub(crate) fn adopt(&mut self, inherited: &mut Vec<Held>) {
        debug_assert!(self.entries.is_empty() && self.index.is_empty());
        std::mem::swap(&mut self.entries, inherited);
        self.filter = [0; 8];
        for h in self.entries.iter_mut() {
            h.state = PENDING;
            let (w, m) = h.id.filter_bit();
            self.filter[w] |= m;
        }
        if self.entries.len() > Self::SCAN_LIMIT {
            self.reindex();
        }
    }

    /// The hint of `slot`: an entry, or [`NO_HINT`].
    #[inline(always)]
    pub(crate) fn hint(&self, slot: usize) -> u32 {
        self.hints[slot]
    }

    /// Sets the hint of `slot`.
    #[inline(always)]
    pub(crate) fn set_hint(&mut self, slot: usize, entry: u32) {
        self.hints[slot] = entry;
    }

    /// Forgets every hint (a transaction begins, or entries moved).
    #[inline(always)]
    pub(crate) fn forget_hints(&mut self) {
        self.hints = NO_HINTS;
    }
}
