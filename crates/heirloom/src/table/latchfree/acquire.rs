//! Acquisition: the fast prefix (the intention-lock fast path, the
//! strong count), one append per list kind (a walk and a CAS at the end,
//! or one swap of the tail), and the read-after-write step of a request
//! linked as WAITING.

use super::clear::{Clearance, Sweep};
use super::list::{SwapEnd, link};
use super::*;

impl<const SWAP: bool> LatchFree<SWAP> {
    /// Converts the granted `r` to `to` by appending a request for `to`
    /// from `nodes`, with `r`'s owner and age: a linked request's mode is
    /// fixed, because every request behind it judged itself by that mode
    /// without a latch. The two requests of one transaction are never in
    /// each other's way (`in_way`), and nothing that was compatible with
    /// `to` conflicts with the older, weaker mode, so `r` can stay until the
    /// new one is granted and is then released by the caller (see
    /// [`LockTable::convert`]).
    ///
    /// # Safety
    /// As [`LockTable::convert`].
    #[allow(clippy::too_many_arguments)] // the table interface's inputs
    pub(super) unsafe fn convert_in_list(
        &self,
        c: &AgentCounters,
        id: LockId,
        h: At,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting {
        // SAFETY: the caller's own granted request (the contract).
        let old = unsafe { r.get() };
        // A fast IS becomes IX in place (`Fast::upgrade`).
        if h.is_fast()
            && old.mode() == Mode::IS
            && to == Mode::IX
            && let Some((f, s)) = self.fast_of(h)
        {
            if f.upgrade(s, old) {
                return Converting {
                    outcome: Outcome::Granted,
                    req: r,
                    head: h.into(),
                };
            }
            self.after_fast_release_in(self.bucket_of(id).1, c, id.words(), Mode::IX, wake);
        }
        let n = nodes.take_for(c, old);
        // SAFETY: `n` is the caller's own node from its pool, linked nowhere.
        let (outcome, head) = unsafe { self.acquire_in_list(c, id, n, to, may_wait, true, wake) };
        match outcome {
            Outcome::Refused(_) => {
                // Never linked (CAS append: reusable at once), or withdrawn
                // (swap append: back once the collector returns it).
                nodes.give_back(n);
                Converting {
                    outcome,
                    req: r,
                    head: h.into(),
                }
            }
            _ => Converting {
                outcome,
                req: n,
                head: head.into(),
            },
        }
    }

    /// Links `r` (owner and age already set) for `id` in `mode`. A refused
    /// request is not left linked: the CAS append never links it (and
    /// marks it NEVER_LINKED), the swap append withdraws it (OBSOLETE,
    /// taken out); either way its node goes back with `Nodes::give_back`.
    /// `try_fast`: as [`LockTable::acquire`]'s.
    ///
    /// # Safety
    /// As [`LockTable::acquire`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn acquire_in_list(
        &self,
        c: &AgentCounters,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        try_fast: bool,
        // Only a fast acquisition that backs off wakes anybody.
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, At) {
        // The shared fast path (`fast/holds.rs`), for a request with a
        // node; not again when turned away already
        // (`LockTable::try_fast_hold`).
        // SAFETY: the caller's own request, linked nowhere (the contract).
        if try_fast && let Some(h) = unsafe { holds::try_node(self, c, id, r, mode, wake) } {
            return (Outcome::Granted, h);
        }
        let hash = id.hash64();
        let bi = (hash & self.mask) as usize;
        let b = &self.buckets[bi];
        let words = id.words();
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        // Strong requests count themselves in the lock's slot first.
        let (mut fast_slot, mut strong) = (None, None);
        if let Some(f) = self.fast.as_deref()
            && let Some(s) = f.slot_for_new(id)
        {
            fast_slot = Some((f, s));
            if fast::strong_at(s, mode) {
                strong = Some(f.add_strong(s, q.agent));
            }
        }
        let h = At::linked(bi, fast_slot.map(|(_, s)| s), strong);
        // What the fast path lets this request pass: its own fast holds
        // (a conversion's older request), and whether fast holds of others
        // are in its way (strong requests only). Its own holds matter only
        // to a walk: looked up before one (most row requests find their
        // bucket empty and walk nothing).
        let own_fast = || fast_slot.map_or(Mode::NL, |(f, s)| f.own(s, words, q.agent));
        let a = Append {
            b,
            id,
            words,
            r,
            q,
            mode,
            may_wait,
            h,
            fast_slot,
            // The swap append walks at once.
            own_fast: if SWAP { own_fast() } else { Mode::NL },
        };
        if SWAP && let Some(done) = self.append_swapped(c, &a, wake) {
            return done;
        }
        // (A swap-appended bucket whose list is frozen: the CAS append
        // below it, `split.rs`.)
        // The CAS append, in place: an empty bucket takes the request with
        // one CAS of its head; otherwise a walk to the end of the list judges
        // what is ahead and a CAS of the last `next` links the request,
        // GRANTED or WAITING (the read-after-write step follows). Not a
        // function of its own: as one (inlined or not, its inputs in a
        // struct or one by one) it cost the one-thread transaction
        // instructions (`scripts/callgrind.sh` shows it).
        //
        // An empty bucket (most row locks' on a table of many rows): no
        // request of the lock is linked anywhere, so nothing is in the way,
        // and appending reads nothing but the head: one CAS from null, with
        // no pin (no other request is dereferenced). Not for a database or
        // table lock with a fast-path slot, whose fast holds are outside the
        // list; a row's fast holds are S, so only a strong request looks
        // for them first (its count keeps new ones out).
        let alone = match fast_slot {
            None => true,
            Some((f, s)) => s >= fast::SLOTS && (!fast::strong_at(s, mode) || !f.in_way(s, words, mode, q.agent)),
        };
        let route = Route::new(hash, self.bits);
        if alone {
            // SAFETY: the unprotected heads are only compared with null,
            // never dereferenced.
            let unprotected = unsafe { epoch::unprotected() };
            // Down past empty frozen lists (`split.rs`): nothing of the lock
            // is in them, and nothing will be.
            let (mut l, mut depth) = (b.list(), 0);
            let mut head = l.head.load(Ordering::Relaxed, unprotected);
            while head == Shared::null().with_tag(FROZEN)
                && let Some(below) = l.below(route, depth + 1)
            {
                // Acquire: pairs with the unlink that emptied the frozen
                // list (AcqRel, after its request went OBSOLETE), as the CAS
                // below does for the list it appends to: the last holder's
                // work above happens before our grant below.
                fence(Ordering::Acquire);
                (l, depth) = (below, depth + 1);
                head = l.head.load(Ordering::Relaxed, unprotected);
            }
            // (Never a swap-appended bucket's own list, whose head only
            // appenders that swapped its tail write.)
            if head == Shared::null() && (!SWAP || depth > 0) {
                fill(q, words, mode);
                q.status.store(GRANTED, Ordering::Relaxed);
                // AcqRel: Release publishes the node's fields to walkers;
                // Acquire pairs with the unlink that emptied the bucket
                // (its CAS is AcqRel, after the request it removed went
                // OBSOLETE), so the last holder's work happens before our
                // grant, as a walk's Acquire load of OBSOLETE makes it.
                let new = shared(r.as_ptr());
                if noted(l.head)
                    .compare_exchange(Shared::null(), new, Ordering::AcqRel, Ordering::Relaxed, unprotected)
                    .is_ok()
                {
                    // (A row's heat is never noted: the call skipped.)
                    if id.level() != Level::Row {
                        self.note_heat(b, id, false);
                    }
                    return (Outcome::Granted, h.at_depth(depth));
                }
                // Somebody appended (or froze) first: the walk below.
            }
        }
        // Pinned before the node's fields are written: the pin's locked
        // instruction then does not wait for those stores (the node's line
        // is often cold after its grace period), which drain during the walk.
        let g = pin();
        fill(q, words, mode);
        let own_fast = if SWAP { a.own_fast } else { own_fast() };
        let me = q.txn.load(Ordering::Relaxed);
        let new = shared(r.as_ptr());
        let mut hot = false;
        // Counted in `waiting` while it may be linked as WAITING.
        let mut counted = false;
        let (waiting, depth) = loop {
            let mut ahead = Ahead::new(own_fast);
            let end = Self::walk(b, route, c, &g, |n| {
                match n {
                    None => ahead.restart(),
                    Some((_, x)) => ahead.note(x, words, me, mode, &g),
                }
                Visit::Next
            });
            let Some(end) = end else {
                unreachable!("a walk without a stop reaches the end")
            };
            let Ahead {
                first,
                shared,
                same,
                others_waiting,
                ..
            } = ahead;
            // A leaf long with other locks' requests that do not wait is
            // split, and the walk goes again, down into the new list
            // (`split.rs`).
            // `same` and `others_waiting` count on the whole route, so the
            // leaf holds at least `len - same - others_waiting` of them.
            if end.len.saturating_sub(same + others_waiting) >= self.split_at && end.depth < self.max_depth {
                end.list.split(end.link, &g);
                continue;
            }
            hot |= shared || first.is_some();
            let blocked_fast = first.is_none() && a.fast_in_way();
            if !may_wait && (first.is_some() || blocked_fast) {
                let blocker = a.blocker(first);
                // None: the holds in the way went (or were a fast request
                // backing off): look again.
                if let Some(blocker) = blocker {
                    // Never counted: `may_wait` is false, so never WAITING.
                    // Never linked: its agent reuses it at once.
                    q.recycle.store(NEVER_LINKED, Ordering::Relaxed);
                    self.note_heat(b, id, hot);
                    self.uncount_strong(h, q.agent);
                    return (Outcome::Refused(blocker), h);
                }
                continue;
            }
            // Wait-die: an older transaction in the way, linked or holding
            // fast, and the request dies unlinked
            // (`LockTable::judge_wait_die`), uncounted if an earlier lap
            // counted it.
            if self.wait_die
                && (first.is_some() || blocked_fast)
                && let Some(blocker) = self.older_ahead(b, c, q, mode, own_fast, fast_slot, None, &g)
            {
                if counted {
                    b.waiting.fetch_sub(1, Ordering::Relaxed);
                }
                q.recycle.store(NEVER_LINKED, Ordering::Relaxed);
                self.note_heat(b, id, hot);
                self.uncount_strong(h, q.agent);
                return (Outcome::Refused(blocker), h);
            }
            let waiting = first.is_some() || blocked_fast;
            // Count ourselves before the CAS can publish WAITING: a granter's
            // decrement then follows our increment in the counter's
            // modification order, so the count never dips below the number
            // of linked waiters (a releaser reading it after its fence could
            // otherwise read a transient low and skip a waiter it must wake).
            if waiting != counted {
                if waiting {
                    crate::fault::before_waiting();
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
            match noted(end.link).compare_exchange(Shared::null(), new, Ordering::Release, Ordering::Relaxed, &g) {
                Ok(_) => break (waiting, end.depth),
                Err(_) => {
                    // Somebody appended, or the last node was marked: walk again.
                    c.cas_retries.bump();
                    hot = true;
                }
            }
        };
        self.note_heat(b, id, hot);
        let h = h.at_depth(depth);
        if !waiting {
            return (Outcome::Granted, h);
        }
        self.recheck_waiter(b, c, q, &g, h)
    }

    /// Wait-die's judgement of the request `q` for `mode` before it waits
    /// (`LockTable::judge_wait_die`): a request in the way ahead of it
    /// whose transaction is older than `q`'s (up to `stop`, `q`'s own node
    /// once it is linked; else the whole route, where it would be
    /// linked), or a fast hold of such a transaction. The set is what
    /// `blockers` reports once it waits; a walk of its own, off the path
    /// that does not wait (the list may have changed since the append's
    /// walk: an older request met is still one in the way, and one missed
    /// is judged by the policy once the request waits).
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)] // the append's state
    fn older_ahead(
        &self,
        b: &Bucket,
        c: &AgentCounters,
        q: &Request,
        mode: Mode,
        own_fast: Mode,
        fast_slot: Option<(&fast::Fast, usize)>,
        stop: Option<Shared<'_, Request>>,
        g: &Guard,
    ) -> Option<Blocker> {
        let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let (me, age) = (q.txn.load(Ordering::Relaxed), q.ts.load(Ordering::Relaxed));
        let mut own = own_fast;
        let mut found = None;
        Self::walk(b, self.route(words), c, g, |n| match n {
            None => {
                found = None;
                own = own_fast;
                Visit::Next
            }
            Some((n, _)) if Some(n) == stop => Visit::Stop,
            Some((_, x)) => {
                if found.is_none()
                    && blocks(x, words, me, mode, &mut own)
                    && crate::queue::older(x.ts.load(Ordering::Relaxed), x.agent, age, q.agent)
                {
                    found = Some(Blocker::of(x));
                }
                Visit::Next
            }
        });
        found.or_else(|| {
            let (f, s) = fast_slot?;
            if fast::strong_at(s, mode) {
                f.older(s, words, mode, q.agent, age)
            } else {
                None
            }
        })
    }

    /// The slides' append: one swap of the bucket's tail links the request
    /// ACTIVE; a walk up to it then grants it, withdraws it (refused), or
    /// leaves it WAITING for the read-after-write step. `None`: the
    /// bucket's list is frozen (`split.rs`), and the request, not linked,
    /// goes below by the CAS append.
    #[inline(always)]
    fn append_swapped(&self, c: &AgentCounters, a: &Append<'_>, wake: &mut Vec<ReqPtr>) -> Option<(Outcome, At)> {
        let Append {
            b,
            id,
            words,
            r,
            q,
            mode,
            may_wait,
            h,
            own_fast,
            ..
        } = *a;
        if b.frozen_top() {
            return None;
        }
        fill(q, words, mode);
        q.status.store(ACTIVE, Ordering::Relaxed);
        let new = shared(r.as_ptr());
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
        let old = noted(&b.tail).swap(new, Ordering::AcqRel, unprotected);
        if old.is_null() {
            // First in an empty list: nothing linked is ahead. The head
            // is null, and nobody else writes it until we do: the
            // request that left the list last nulled the head before
            // the tail (our swap read its CAS of the tail, so its CAS
            // of the head happens before this store; see `take_out`).
            // Release: publishes the node's fields to walkers (their
            // Acquire loads of the head).
            noted(&b.head).store(new, Ordering::Release);
            if !a.fast_in_way() {
                // No pin: no other request was read.
                q.status.store(GRANTED, Ordering::Relaxed);
                self.note_heat(b, id, false);
                return Some((Outcome::Granted, h));
            }
        } else {
            link(old, new, unprotected);
        }
        // Pinned after the link: `old` is alive until then (see
        // `link`), and every other request is reached from the head.
        let g = pin();
        let me = q.txn.load(Ordering::Relaxed);
        let mut hot = false;
        loop {
            // Read-after-write: every request ahead of ours is linked
            // before it (a walk waits for links still on their way),
            // and each is read after our request was published ACTIVE.
            let mut ahead = Ahead::new(own_fast);
            let mut len = 0;
            let end = Self::walk_swapped(b, c, &g, |n| {
                match n {
                    None => {
                        ahead.restart();
                        len = 0;
                    }
                    Some((n, _)) if n == new => return Visit::Stop,
                    Some((_, x)) => {
                        len += 1;
                        ahead.note(x, words, me, mode, &g);
                    }
                }
                Visit::Next
            });
            if end != SwapEnd::Stopped {
                // The frozen end came first: our swap came after the
                // freeze's, and our request is behind the end, where no
                // walk reads it. Its node back, it goes below.
                debug_assert_eq!(end, SwapEnd::Frozen, "a walk ahead of a linked request ends at it");
                b.reclaim_behind_end(new, c, &g);
                return None;
            }
            let Ahead {
                first,
                shared,
                same,
                others_waiting,
                ..
            } = ahead;
            // Long with other locks' requests that do not wait: frozen,
            // later appends go below (`split.rs`).
            if len - same - others_waiting >= self.split_at && self.max_depth > 0 {
                b.split_swapped(&g);
            }
            hot |= shared || first.is_some();
            let blocked_fast = first.is_none() && a.fast_in_way();
            if first.is_none() && !blocked_fast {
                self.note_heat(b, id, hot);
                // Relaxed: ACTIVE and GRANTED are alike to every other
                // request.
                q.status.store(GRANTED, Ordering::Relaxed);
                return Some((Outcome::Granted, h));
            }
            // Wait-die: a request that may wait but has an older
            // transaction in its way, linked or holding fast, is refused
            // as no-wait's is (`LockTable::judge_wait_die`).
            let older = if may_wait && self.wait_die {
                self.older_ahead(b, c, q, mode, own_fast, a.fast_slot, Some(new), &g)
            } else {
                None
            };
            if may_wait && older.is_none() {
                break;
            }
            let blocker = older.or_else(|| a.blocker(first));
            // None: the holds in the way went (or were a fast request
            // backing off): look again.
            if let Some(blocker) = blocker {
                // Withdrawn: while ACTIVE it was in the way of later
                // requests, which may wait for it.
                q.status.store(OBSOLETE, Ordering::Release);
                if self.take_out(b, c, q) {
                    self.after_release(b, c, q, wake);
                }
                self.note_heat(b, id, hot);
                self.uncount_strong(h, q.agent);
                return Some((Outcome::Refused(blocker), h));
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
        Some(self.recheck_waiter(b, c, q, &g, h))
    }

    /// The read-after-write step of a request just linked as WAITING (and
    /// counted in `waiting`): grants it if nothing ahead is in its way any
    /// more. Out of line: only a request that found another in its way
    /// gets here, and it is about to wait.
    #[cold]
    pub(super) fn recheck_waiter(&self, b: &Bucket, c: &AgentCounters, q: &Request, g: &Guard, h: At) -> (Outcome, At) {
        // Read-after-write: a SeqCst fence between our count in `waiting`
        // and the WAITING published (by the CAS that linked it, or the
        // store after the swap append), and the re-reads of the requests
        // ahead; pairs with the fence in `after_release` and `pass_on` (see
        // the module docs).
        fence(Ordering::SeqCst);
        // The whole way (`Sweep::All`): an INHERITED request ahead of us,
        // behind the first one in our way, must not stay (see `clear`).
        if self.clear(b, c, q, g, Sweep::All) == Clearance::Clear {
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
}

/// A request on its way into its list, as the fast prefix of `acquire`
/// leaves it to one of the appends.
#[derive(Clone, Copy)]
struct Append<'a> {
    b: &'a Bucket,
    id: LockId,
    words: (u64, u64),
    r: ReqPtr,
    q: &'a Request,
    mode: Mode,
    may_wait: bool,
    /// The handle, strong if the request is counted in its slot.
    h: At,
    /// The lock's fast-path slot, if it has one.
    fast_slot: Option<(&'a fast::Fast, usize)>,
    /// The caller's own fast holds on the lock (never in its way), for
    /// the swap append; NL for the CAS append, which looks them up only
    /// before its walk.
    own_fast: Mode,
}

impl Append<'_> {
    /// Are fast holds of other agents in the way (strong requests only)?
    #[inline(always)]
    fn fast_in_way(&self) -> bool {
        self.h.strong().is_some()
            && self
                .fast_slot
                .is_some_and(|(f, s)| f.in_way(s, self.words, self.mode, self.q.agent))
    }

    /// Whom a refusal names: the first request in the way, or a fast hold
    /// in the way; `None` if the holds in the way went meanwhile (or were
    /// a fast request backing off), so the walk looks again.
    #[inline]
    fn blocker(&self, first: Option<&Request>) -> Option<Blocker> {
        match first {
            Some(x) => Some(Blocker::of(x)),
            None => self
                .fast_slot
                .and_then(|(f, s)| f.blocker(s, self.words, self.mode, self.q.agent)),
        }
    }
}
