//! The lists: what a walk reads of a request, the walks themselves, and
//! the three writes that change a list's shape (the appending link, the
//! mark of a released request, a walk's unlink of a marked one).

use super::*;

#[inline]
pub(super) fn same_lock(n: &Request, (key, hi): (u64, u64)) -> bool {
    // Relaxed: written before the node was published by the appending CAS
    // (Release), which our Acquire load of the pointer synchronises with.
    n.key.load(Ordering::Relaxed) == key && n.hi.load(Ordering::Relaxed) == hi
}

/// Fills the request `q` for the lock of `words` in `mode`, last in its
/// list: its fields before the CAS that links it publishes them (the
/// caller sets its status).
#[inline(always)]
pub(super) fn fill(q: &Request, words: (u64, u64), mode: Mode) {
    q.key.store(words.0, Ordering::Relaxed);
    q.hi.store(words.1, Ordering::Relaxed);
    q.mode.store(mode as u8, Ordering::Relaxed);
    q.want.store(mode as u8, Ordering::Relaxed);
    noted(&q.next).store(Shared::null(), Ordering::Relaxed);
}

/// Is the request `n` (of another transaction, same lock) in the way of
/// `mode`? An INHERITED request in the way is invalidated (and marked for
/// unlinking) instead; if its owner reclaimed it first it is in the way.
#[inline]
pub(super) fn in_way(n: &Request, mode: Mode, g: &Guard) -> bool {
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
pub(super) fn shut_out_by_own(x: &Request, own: Mode) -> bool {
    // Acquire: as in `in_way`.
    own != Mode::NL && matches!(x.status.load(Ordering::Acquire), WAITING | ACTIVE) && !own.compatible(x.mode())
}

/// What an appender's walk found ahead of its request: the first request
/// of another transaction in its way, whether it met another transaction's
/// request on the lock at all (heat), and the modes its own granted
/// requests hold (`shut_out_by_own`).
pub(super) struct Ahead<'g> {
    pub(super) first: Option<&'g Request>,
    pub(super) shared: bool,
    /// Requests of the lock met (any transaction's): the rest of a list's
    /// are other locks' (`split.rs`).
    pub(super) same: u32,
    /// Waiting requests of other locks met: a hot lock's queue, which
    /// splitting would not shorten (`split.rs`, "Who splits").
    pub(super) others_waiting: u32,
    pub(super) own: Mode,
    /// The caller's own fast holds on the lock: where `own` starts.
    pub(super) own_fast: Mode,
}

impl<'g> Ahead<'g> {
    #[inline(always)]
    pub(super) fn new(own_fast: Mode) -> Self {
        Ahead {
            first: None,
            shared: false,
            same: 0,
            others_waiting: 0,
            own: own_fast,
            own_fast,
        }
    }

    /// The walk starts again from the head.
    #[inline(always)]
    pub(super) fn restart(&mut self) {
        *self = Ahead::new(self.own_fast);
    }

    /// Notes the request `x` met by the walk of transaction `me`'s request
    /// for the lock of `words` in `mode`.
    #[inline(always)]
    pub(super) fn note(&mut self, x: &'g Request, words: (u64, u64), me: u64, mode: Mode, g: &Guard) {
        if !same_lock(x, words) {
            // Relaxed: a count for the split rule, which any answer keeps
            // sound.
            self.others_waiting += u32::from(x.status.load(Ordering::Relaxed) == WAITING);
            return;
        }
        self.same += 1;
        if x.txn.load(Ordering::Relaxed) == me {
            note_own(x, &mut self.own);
        } else if !shut_out_by_own(x, self.own) && in_way(x, mode, g) {
            self.first.get_or_insert(x);
        } else {
            self.shared = true;
        }
    }
}

/// Is `x`, met by the walk of transaction `txn`'s request for the lock of
/// `words` in `mode`, in its way (read only: an inherited request counts
/// as out of the way, as the walker's append invalidated those in it)?
/// The walker's own requests are noted in `own` (see [`note_own`]). The
/// edges `blockers` reports, and wait-die judges before a request waits
/// (`LatchFree::older_ahead`). Acquire: a reclaimed request's owner and
/// age are its new owner's.
pub(super) fn blocks(x: &Request, words: (u64, u64), txn: u64, mode: Mode, own: &mut Mode) -> bool {
    if !same_lock(x, words) {
        return false;
    }
    if x.txn.load(Ordering::Relaxed) == txn {
        note_own(x, own);
        return false;
    }
    !shut_out_by_own(x, *own)
        && matches!(x.status.load(Ordering::Acquire), GRANTED | WAITING | ACTIVE)
        && !mode.compatible(x.mode())
}

/// Notes the walker's own request `x` in `own` if it is granted.
#[inline]
pub(super) fn note_own(x: &Request, own: &mut Mode) {
    if x.status.load(Ordering::Acquire) == GRANTED {
        *own = own.join(x.mode());
    }
}

/// Marks `n` logically deleted, and answers whether a request was linked
/// behind it. CAS append: from now on any walk may unlink it, and nobody
/// can link behind it. Swap append: a walk unlinks it as soon as a request
/// is linked behind it; if none was, nobody waits for `n` (a request
/// waits only for those ahead of it), and whoever swapped `n` out of the
/// tail links behind it later, reading the mark, and through it `n`'s
/// OBSOLETE (`link`).
///
/// A request last in a frozen list (`split.rs`) may have requests of its
/// lock behind it in the lists below: that counts as linked behind.
#[inline]
pub(super) fn mark(n: &Request, g: &Guard) -> bool {
    split::behind(noted(&n.next).fetch_or(MARK, Ordering::AcqRel, g))
}

/// A walk's unlink of the marked `node` (at `cur`): one CAS of its
/// predecessor's link `pred` to `succ`, then retirement. `false` (counted
/// as a CAS retry): the predecessor changed, and the walk starts again.
#[inline]
pub(super) fn unlink<'g>(
    pred: &epoch::Atomic<Request>,
    cur: Shared<'g, Request>,
    succ: Shared<'g, Request>,
    node: &Request,
    c: &AgentCounters,
    g: &'g Guard,
) -> bool {
    match noted(pred).compare_exchange(cur, succ, Ordering::AcqRel, Ordering::Acquire, g) {
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
/// swapped out (or, for a freeze, the frozen end behind the tail that the
/// end swapped out: `new` a null tagged FROZEN, `split.rs`). `old` is
/// alive: a request is unlinked only with a successor linked behind it, or
/// by its owner's CAS of the tail from it (`take_out`), and neither can
/// happen to `old` before this link. Its `next` is null, maybe marked
/// (released meanwhile), and nobody else writes it before the link: at
/// most two rounds, and the mark stays.
#[inline]
pub(super) fn link(old: Shared<'_, Request>, new: Shared<'_, Request>, g: &Guard) {
    // SAFETY: alive, see above.
    let o = unsafe { old.deref() };
    let mut cur = Shared::null();
    // Release: publishes `new`'s fields to walkers. Acquire: on a marked
    // `next`, pairs with the mark (AcqRel), so the release that marked it
    // happens before our walk (and a CAS continues the mark's release
    // sequence for walkers that read our link).
    while let Err(e) = noted(&o.next).compare_exchange(
        cur,
        new.with_tag(new.tag() | cur.tag()),
        Ordering::AcqRel,
        Ordering::Acquire,
        g,
    ) {
        cur = e.current;
    }
}

/// Swap append: a walk found the link behind `n` on its way. Waits for it
/// a little, then gives up the processor once; `Some`: the link that
/// landed meanwhile (a successor, or the frozen end of `split.rs`, tagged
/// as it is); `None`: the walk looks again from the head.
#[cold]
pub(super) fn wait_link<'g>(
    n: &Request,
    c: &AgentCounters,
    g: &'g Guard,
    pauses: &mut u32,
) -> Option<Shared<'g, Request>> {
    c.cas_retries.bump();
    // Acquire: as a walk's.
    let landed = |next: Shared<'g, Request>| (!next.with_tag(0).is_null() || next.tag() & FROZEN != 0).then_some(next);
    if !cfg!(heirloom_loom) && *pauses < 4 {
        for _ in 0..(32u32 << *pauses) {
            std::hint::spin_loop();
            if let Some(next) = landed(n.next.load(Ordering::Acquire, g)) {
                return Some(next);
            }
        }
    }
    *pauses += 1;
    crate::sync::yield_now();
    landed(n.next.load(Ordering::Acquire, g))
}

/// Swap append: a walk found the head on its way (an empty list's appender
/// swapped the tail and has not stored the head yet). Spins a little,
/// then gives up the processor.
#[cold]
pub(super) fn link_pending(c: &AgentCounters, pauses: &mut u32) {
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

impl<const SWAP: bool> LatchFree<SWAP> {
    /// Walks the route of a lock (`route`, see `split.rs`) from the head of
    /// `b`'s list, unlinking marked requests on the way, and calls
    /// `visit(Some(node))` for every unmarked one in order: the bucket's
    /// list, then, past its frozen end, the list below that the route
    /// names, down to the leaf. When an unlink fails (the predecessor
    /// changed) it calls `visit(None)` and starts again from the bucket's
    /// head. Returns the end of the leaf, where a CAS appends, or `None` if
    /// the visitor stopped, or the walk ended at the tail of a
    /// swap-appended bucket's list (not frozen: nothing is below it).
    #[inline]
    pub(super) fn walk<'g>(
        b: &'g Bucket,
        route: Route,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Option<End<'g>> {
        if !SWAP {
            return Self::walk_route(b.list(), route, c, g, visit);
        }
        match Self::walk_swapped(b, c, g, &mut visit) {
            SwapEnd::Frozen => Self::walk_frozen(b, route, c, g, visit),
            _ => None,
        }
    }

    /// `walk` of a swap-appended bucket whose list was found frozen: on
    /// below it, and again from the head when a walk below must start
    /// again. Out of line: short transactions seldom freeze a list, and the
    /// swap append's own code stays small enough to be inlined
    /// (`scripts/callgrind.sh`).
    #[inline(never)]
    fn walk_frozen<'g>(
        b: &'g Bucket,
        route: Route,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Option<End<'g>> {
        loop {
            let below = b.list().below(route, 1)?;
            if let Ok(end) = Self::walk_down(below, 1, route, c, g, &mut visit) {
                return end;
            }
            if Self::walk_swapped(b, c, g, &mut visit) != SwapEnd::Frozen {
                return None;
            }
        }
    }

    /// `walk` of the one CAS-appended list `l` (the swap table's are those
    /// below its buckets), whatever is below it.
    #[inline]
    pub(super) fn walk_list<'g>(
        l: List<'g>,
        c: &AgentCounters,
        g: &'g Guard,
        visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Option<End<'g>> {
        Self::walk_route(l, Route::ONE, c, g, visit)
    }

    #[inline]
    fn walk_route<'g>(
        top: List<'g>,
        route: Route,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Option<End<'g>> {
        loop {
            if let Ok(end) = Self::walk_down(top, 0, route, c, g, &mut visit) {
                return end;
            }
        }
    }

    /// One try of a walk from `top`, a CAS-appended list at `depth` below
    /// its bucket, down its route: `Err` when an unlink failed (after
    /// `visit(None)`), and the walk starts again from the bucket's head.
    #[inline(always)]
    fn walk_down<'g>(
        top: List<'g>,
        depth: u32,
        route: Route,
        c: &AgentCounters,
        g: &'g Guard,
        visit: &mut impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> Result<Option<End<'g>>, Restart> {
        let (mut level, mut depth, mut len) = (top, depth, 0);
        let mut pred = level.head;
        // Acquire: pairs with the Release CAS that linked the node, so its
        // fields are visible.
        let mut cur = pred.load(Ordering::Acquire, g);
        loop {
            if cur.is_null() {
                // The end of a frozen list: on to the one below.
                if cur.tag() & FROZEN != 0
                    && let Some(below) = level.below(route, depth + 1)
                {
                    (level, depth, len) = (below, depth + 1, 0);
                    pred = level.head;
                    cur = pred.load(Ordering::Acquire, g);
                    continue;
                }
                return Ok(Some(End {
                    link: pred,
                    list: level,
                    depth,
                    len,
                }));
            }
            // SAFETY: non-null, loaded from the list while `g` is pinned.
            let node = unsafe { req(cur) };
            let next = node.next.load(Ordering::Acquire, g);
            if next.tag() & MARK != 0 {
                let succ = split::succ(next);
                if unlink(pred, cur, succ, node, c, g) {
                    cur = succ;
                    continue;
                }
                visit(None);
                return Err(Restart);
            }
            len += 1;
            if let Visit::Stop = visit(Some((cur, node))) {
                return Ok(None);
            }
            pred = &node.next;
            cur = next;
        }
    }

    /// `walk` of a bucket's list appended by swaps: up to the tail, or to
    /// its frozen end (`split.rs`), which it answers. A node whose `next`
    /// is null is not always the tail: its successor's appender may have
    /// swapped the tail and not linked yet (the walk waits for that link
    /// at the node, and looks again from the head if it is slow), or the
    /// node may have left the list as its last. A marked request is
    /// unlinked only once a successor, or the frozen end, is linked behind
    /// it (an appender may be about to link behind it, `link`).
    #[inline]
    pub(super) fn walk_swapped<'g>(
        b: &'g Bucket,
        c: &AgentCounters,
        g: &'g Guard,
        mut visit: impl FnMut(Option<(Shared<'g, Request>, &'g Request)>) -> Visit,
    ) -> SwapEnd {
        let mut pauses = 0u32;
        'restart: loop {
            let mut pred = &b.head;
            // Acquire: pairs with the Release store or CAS that linked the
            // node, so its fields are visible.
            let mut cur = pred.load(Ordering::Acquire, g);
            if cur.is_null() {
                if cur.tag() & FROZEN != 0 {
                    return SwapEnd::Frozen;
                }
                // Empty, or the first appender's store of the head is on
                // its way.
                if b.tail.load(Ordering::Acquire, g).is_null() {
                    return SwapEnd::Tail;
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
                let frozen = next.tag() & FROZEN != 0;
                if next.tag() & MARK != 0 {
                    if !succ.is_null() || frozen {
                        let to = split::succ(next);
                        if unlink(pred, cur, to, node, c, g) {
                            if to.is_null() {
                                return SwapEnd::Frozen;
                            }
                            cur = to;
                            continue;
                        }
                        visit(None);
                        continue 'restart;
                    }
                } else if let Visit::Stop = visit(Some((cur, node))) {
                    return SwapEnd::Stopped;
                }
                if frozen {
                    return SwapEnd::Frozen;
                }
                if succ.is_null() {
                    // The end: the tail, or none (the list went empty and
                    // `cur` is the last request, on its way out).
                    // Acquire: as the head's.
                    let tail = b.tail.load(Ordering::Acquire, g);
                    if tail == cur || tail.is_null() {
                        return SwapEnd::Tail;
                    }
                    // A link on its way behind `cur` (still readable: we
                    // are pinned).
                    match wait_link(node, c, g, &mut pauses) {
                        Some(next) if next.tag() & FROZEN != 0 => return SwapEnd::Frozen,
                        Some(next) => {
                            pred = &node.next;
                            cur = next.with_tag(0);
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
}

/// How a walk of a swap-appended bucket's list ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum SwapEnd {
    /// At the tail: the list is not frozen, nothing is below it.
    Tail,
    /// At its frozen end: a lock's route goes on below (`split.rs`).
    Frozen,
    /// The visitor stopped it.
    Stopped,
}

/// A walk's unlink failed: it starts again from the bucket's head.
pub(super) struct Restart;
