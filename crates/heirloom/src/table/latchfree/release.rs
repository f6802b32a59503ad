//! Release and cancel: the request leaves its list's way (OBSOLETE), then
//! the fence and the wake-up duty of the module docs.

use super::clear::{Clearance, Sweep};
use super::*;

impl<const SWAP: bool> LatchFree<SWAP> {
    /// After a fast hold of `words` in `mode` was given up and the word
    /// showed strong requests: the wake-up duty of a release (`fast.rs`).
    #[cold]
    pub(super) fn after_fast_release_in(
        &self,
        b: &Bucket,
        c: &AgentCounters,
        words: (u64, u64),
        mode: Mode,
        wake: &mut Vec<ReqPtr>,
    ) {
        // SeqCst fence between the bit's clearing and the load of
        // `waiting`; pairs with the waiter's fence in `acquire` (Dekker).
        fence(Ordering::SeqCst);
        if b.waiting.load(Ordering::Relaxed) != 0 {
            let g = pin();
            self.wake_scan(b, c, words, mode, wake, &g);
        }
    }

    /// Drops a strong request of `agent` from its slot's word or its
    /// agent's record (after it went OBSOLETE, or when it was never
    /// linked).
    #[inline]
    pub(super) fn uncount_strong(&self, h: At, agent: u32) {
        if let Some(how) = h.strong()
            && let Some((f, s)) = self.fast_of(h)
        {
            f.sub_strong(s, agent, how);
        }
    }

    /// Gives up the fast hold `q` (see `fast.rs`): one taken with a node
    /// (`lock`'s own are released by `release_fast_hold`).
    #[cold]
    pub(super) fn release_fast(&self, c: &AgentCounters, h: At, q: &Request, wake: &mut Vec<ReqPtr>) {
        q.status.store(OBSOLETE, Ordering::Relaxed);
        holds::release_node(self, c, h, q, wake);
    }

    /// Grants the waiting `w` (CAS, so that a grant by a releaser, by the
    /// waiter itself and a cancel decide exactly once) and queues its owner
    /// for waking.
    #[inline]
    pub(super) fn grant(&self, b: &Bucket, w: &Request, wake: &mut Vec<ReqPtr>) {
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
    pub(super) fn wake_scan(
        &self,
        b: &Bucket,
        c: &AgentCounters,
        words: (u64, u64),
        mode: Mode,
        wake: &mut Vec<ReqPtr>,
        g: &Guard,
    ) {
        Self::walk(b, self.route(words), c, g, |n| {
            if let Some((_, x)) = n
                && same_lock(x, words)
                && x.status.load(Ordering::Acquire) == WAITING
                && !mode.compatible(x.mode())
                && self.clear(b, c, x, g, Sweep::First) == Clearance::Clear
            {
                self.grant(b, x, wake);
            }
            Visit::Next
        });
    }

    /// Unlinks the marked `r` at once if it is first in its list `l` (the
    /// common case for row locks; the caller owns `r`), and answers whether
    /// it did; otherwise `unlink_own` or the next walk will.
    #[inline]
    pub(super) fn unlink_if_first(&self, l: List<'_>, r: &Request, g: &Guard) -> bool {
        let cur = l.head.load(Ordering::Acquire, g);
        if ptr::eq(cur.as_raw(), r) {
            let next = r.next.load(Ordering::Acquire, g);
            if noted(l.head)
                .compare_exchange(cur, split::succ(next), Ordering::AcqRel, Ordering::Relaxed, g)
                .is_ok()
            {
                // Its owner (us) retires it with others of its own: the
                // collector then touches one batch, not every node (whose
                // line a reclaimer on another core would have to fetch).
                r.recycle.store(OWNER_UNLINKED, Ordering::Relaxed);
                return true;
            }
        }
        false
    }

    /// Unlinks the caller's own marked request `q`, which was not first in
    /// its list: walks to it pinned, unlinking the marked requests ahead of
    /// it as any walk does, and links its predecessor past it. Its owner
    /// then retires it with its own batch (`Nodes`), so no other thread
    /// writes its line: left to a later walk, a request costs three writes
    /// of lines another core wrote last (the walker's `retired` link, the
    /// collector's RETURNED, the owner's reuse) where this costs none. A
    /// swap-appended `q` (`swapped`: `l` is a swap-appended bucket's list)
    /// leaves only with a successor or the frozen end linked behind it (as
    /// in `walk_swapped`). Gives up, leaving `q` to a later walk as before,
    /// when it is gone already (a walk unlinked it), when the end of the
    /// list is on its way (swap append), or once the list changed under two
    /// of its unlinks.
    #[inline(never)]
    pub(super) fn unlink_own(&self, l: List<'_>, swapped: bool, c: &AgentCounters, q: &Request) {
        let g = pin();
        let mut changed = 0;
        'restart: loop {
            let mut pred = l.head;
            // Acquire: as a walk's.
            let mut cur = pred.load(Ordering::Acquire, &g);
            while !cur.is_null() {
                // SAFETY: non-null, loaded from the list while `g` is pinned.
                let node = unsafe { req(cur) };
                let next = node.next.load(Ordering::Acquire, &g);
                let succ = split::succ(next);
                if swapped && succ.is_null() && succ.tag() & FROZEN == 0 {
                    // The tail, or a link on its way behind `node`: `q` (if
                    // not `node` itself) is not reached, and a marked `node`
                    // stays until its successor is linked.
                    return;
                }
                if next.tag() & MARK == 0 {
                    pred = &node.next;
                    cur = succ;
                    continue;
                }
                // A walk's unlink (`unlink`), but ours retired by us.
                if noted(pred)
                    .compare_exchange(cur, succ, Ordering::AcqRel, Ordering::Acquire, &g)
                    .is_err()
                {
                    c.cas_retries.bump();
                    changed += 1;
                    if changed == 2 {
                        return;
                    }
                    continue 'restart;
                }
                if ptr::eq(node, q) {
                    q.recycle.store(OWNER_UNLINKED, Ordering::Relaxed);
                    return;
                }
                retire(node, &g);
                cur = succ;
            }
            // Not in the list: a walk unlinked (and retired) it.
            return;
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
    pub(super) fn take_out(&self, b: &Bucket, c: &AgentCounters, q: &Request) -> bool {
        // SAFETY: no pointer loaded through this guard is dereferenced:
        // `q` is the caller's own request (alive), the rest are compared.
        let g = unsafe { epoch::unprotected() };
        let me = shared(q as *const Request);
        // While `q` is first (and unmarked, so no walk unlinks it) the head
        // changes only by our own writes: an empty list's appender stores
        // it only after swapping a null tail, and the tail is `q` or later.
        // The head goes first, then the tail, so that the next appender to
        // an empty list finds the head null and is its only writer.
        if b.tail.load(Ordering::Relaxed, g) == me
            && b.head.load(Ordering::Relaxed, g) == me
            && noted(&b.head)
                .compare_exchange(me, Shared::null(), Ordering::Relaxed, Ordering::Relaxed, g)
                .is_ok()
        {
            // AcqRel: Release hands our OBSOLETE, our work and the null head
            // to the next appender (its swap reads the null tail); Acquire
            // as the unlink's.
            if noted(&b.tail)
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
            noted(&b.head).store(me, Ordering::Release);
        }
        let behind = mark(q, g);
        // Unlinked at once if it is first (the common case for row locks).
        // The successor's address is only copied into the head, and only
        // while `q` is still there: `q` is marked, so nobody can unlink that
        // successor before `q` is gone.
        let cur = b.head.load(Ordering::Acquire, g);
        if cur == me {
            // Its successor, or the frozen end (`split.rs`).
            let next = split::succ(q.next.load(Ordering::Acquire, g));
            if split::behind(next)
                && noted(&b.head)
                    .compare_exchange(cur, next, Ordering::AcqRel, Ordering::Relaxed, g)
                    .is_ok()
            {
                q.recycle.store(OWNER_UNLINKED, Ordering::Relaxed);
                return behind;
            }
        }
        if behind {
            // Not first (or the head moved): with a successor linked (or on
            // its way: then `unlink_own` leaves it to a later walk).
            self.unlink_own(b.list(), true, c, q);
        }
        behind
    }

    /// After the request `r` stopped being in anyone's way (OBSOLETE or
    /// INHERITED stored): the fence and the wake-up duty of the module docs.
    /// Pins the epoch only for the walk of that duty.
    #[inline]
    pub(super) fn after_release(&self, b: &Bucket, c: &AgentCounters, q: &Request, wake: &mut Vec<ReqPtr>) {
        // SeqCst fence between our store of the new state and the load of
        // `waiting` (and the waiters' states); pairs with the waiter's fence
        // in `acquire` (Dekker).
        fence(Ordering::SeqCst);
        if b.waiting.load(Ordering::Relaxed) != 0 {
            let g = pin();
            let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
            self.wake_scan(b, c, words, q.mode(), wake, &g);
        }
    }

    /// Releases the granted `r`.
    ///
    /// # Safety
    /// As [`LockTable::release`].
    #[inline]
    pub(super) unsafe fn release_in_list(&self, c: &AgentCounters, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        // SAFETY: the caller's own live request (the contract).
        self.release_req(c, h, unsafe { r.get() }, wake)
    }

    /// Releases `q` (a fast hold or a linked request).
    #[inline(always)]
    pub(super) fn release_req(&self, c: &AgentCounters, h: At, q: &Request, wake: &mut Vec<ReqPtr>) {
        if h.is_fast() {
            self.release_fast(c, h, q, wake);
        } else {
            self.release_linked(c, h, q, wake);
            self.uncount_strong(h, q.agent);
        }
    }

    #[inline]
    pub(super) fn release_linked(&self, c: &AgentCounters, h: At, q: &Request, wake: &mut Vec<ReqPtr>) {
        let b = self.bucket(h);
        // Release: whoever reads OBSOLETE (Acquire) sees what we did under the lock.
        q.status.store(OBSOLETE, Ordering::Release);
        // (Below a swap-appended bucket, the lists are CAS-appended.)
        if SWAP && h.depth() == 0 {
            // Not pinned: taking our own request out reads no other
            // request. With nothing linked behind it, no wake-up duty and no
            // fence (see `take_out`); else the fence and the duty, with `q`
            // already out of every waiter's way.
            if self.take_out(b, c, q) {
                self.after_release(b, c, q, wake);
            }
            return;
        }
        // Not pinned (`after_release` pins only to wake somebody, and
        // `unlink_own`, with a guard of its own, only when `q` is not
        // first): marking our own request and unlinking it from the front
        // read no other request. The successor's address is only copied
        // into the head, and only while `q` is still there: `q` is marked,
        // so nobody can unlink that successor before `q` is gone. `q` itself
        // stays ours until we give it back, after this, and its retirement
        // is stamped then.
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
        let l = self.list_of(h, q);
        if !self.unlink_if_first(l, q, g) {
            self.unlink_own(l, false, c, q);
        }
    }

    /// Withdraws the waiting `r` unless it was granted meanwhile.
    ///
    /// # Safety
    /// As [`LockTable::cancel`].
    pub(super) unsafe fn cancel_in_list(&self, c: &AgentCounters, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
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
        if SWAP && h.depth() == 0 {
            if self.take_out(b, c, q) {
                self.after_release(b, c, q, wake);
            }
        } else {
            let g = pin();
            self.after_release(b, c, q, wake);
            mark(q, &g);
            self.unlink_if_first(self.list_of(h, q), q, &g);
        }
        self.uncount_strong(h, q.agent);
        Cancel::Cancelled
    }
}
