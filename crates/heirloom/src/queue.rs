//! The request queue of one lock (a "lock head" in Shore-MT's words).
//!
//! Every lock table keeps one `Queue` per lock with live requests and runs
//! these functions under whatever latch guards that queue. The grant rules:
//!
//! * A conversion (a holder asking for a stronger mode) is granted when its
//!   target mode is compatible with every *other* granted mode. Waiting
//!   conversions are served before any new request.
//! * A new request is granted when it is compatible with the granted group
//!   and with every request waiting ahead of it (pending conversions count
//!   as ahead of everything). So an X waiting behind IS holders stops the
//!   stream of later IS/IX requests: X cannot starve.
//! * After a release or cancel, waiters are granted in queue order by the
//!   same rule.
//!
//! `compatible(a ⊔ b, c) == compatible(a, c) && compatible(b, c)` (tested in
//! `mode.rs`), so "compatible with each of several modes" is checked against
//! their join.
//!
//! On the latched table a database or table lock may also have *fast*
//! holds (IS, IX), and a row lock fast S holds, that are not in the queue
//! (`table/fast.rs`): the queue counts them as granted to their
//! transactions through `outside`, closing the lock's word before it
//! decides a strong request (one that conflicts with the strongest fast
//! mode, `Outside::top`). A fast hold that
//! must become stronger links a request served as a conversion whose old
//! mode is NL (`Queue::convert_outside`): the fast hold is its granted part.
//!
//! Whoever has `&mut Queue` holds the latch that guards it, so every request
//! in `reqs` is alive while the queue is borrowed (`ReqPtr` contract 2:
//! agents unlink their requests before they can drop); the methods that
//! take a request not yet linked, or trust the caller that it is linked,
//! are `unsafe` and say so.

use smallvec::SmallVec;

use crate::error::TxnId;

use crate::inherit::{self, Heat};
use crate::mode::{Mode, ModeCounts};
use crate::request::{CONVERTING, GRANTED, INHERITED, ReqPtr, Request, WAITING};
use crate::sync::Ordering;

mod outside;
pub(crate) use outside::{Outside, OutsideHolds, Strong};

/// A request that stands in another's way (for deadlock handling).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocker {
    pub(crate) txn: TxnId,
    pub(crate) agent: u32,
    pub(crate) ts: u64,
}

impl Blocker {
    /// The transaction owning `r`. The caller read `r.status` with Acquire
    /// (or holds the latch every writer of these fields held): a reclaimed
    /// inherited request's new owner is written before its Release CAS to
    /// GRANTED (`inherit::reclaim`), so an Acquire load that saw GRANTED
    /// sees the new owner here.
    pub(crate) fn of(r: &crate::request::Request) -> Self {
        Blocker {
            txn: r.txn(),
            agent: r.agent,
            ts: r.ts.load(Ordering::Relaxed),
        }
    }
}

/// Is the transaction of age `a` and agent index `a_agent` older than the
/// one of age `b` and agent `b_agent`? The order of both age-based
/// policies (`ConflictPolicy::WoundWait`, "Ages"): by age, then by agent
/// index.
#[inline]
pub(crate) fn older(a: u64, a_agent: u32, b: u64, b_agent: u32) -> bool {
    (a, a_agent) < (b, b_agent)
}

/// Is the linked request `o` in the way of a waiting request for `want`
/// (`new`: a new request, not a conversion; `ahead`: `o` is queued ahead
/// of it)? The edges `Queue::blockers` reports, and wait-die judges
/// before linking (`Queue::older_in_way`). `o`'s status is read with
/// Acquire: it pairs with the Release CAS of `inherit::reclaim`, which
/// writes the new owner *without* the latch, so a request seen GRANTED is
/// reported with its current transaction (or a search could follow the
/// previous one and miss a real edge: loom model
/// `inherit/tests/loom_inherit.rs`).
#[inline]
fn blocks(o: &Request, want: Mode, new: bool, ahead: bool) -> bool {
    match o.status.load(Ordering::Acquire) {
        // Holders: their granted mode.
        GRANTED => !want.compatible(o.mode()),
        // A converting holder: its granted mode, and for new requests also
        // its target (conversions are served first).
        CONVERTING => !want.compatible(o.mode()) || (new && !want.compatible(o.want())),
        // New requests ahead of a new request.
        WAITING => new && ahead && !want.compatible(o.want()),
        // Inherited requests block nobody: a conflicting requester
        // invalidates them.
        _ => false,
    }
}

/// What an acquisition or conversion attempt did.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Outcome {
    /// Granted at once.
    Granted,
    /// Linked as WAITING/CONVERTING; the owner must wait.
    Waiting,
    /// Not grantable and the caller asked not to wait; nothing was linked
    /// (a refused conversion keeps its old mode). One transaction in the way.
    Refused(Blocker),
    /// Server table: the partition's server thread has failed; nothing was
    /// linked (a conversion keeps its old mode). The partition.
    Failed(usize),
}

/// What cancelling a waiting request found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cancel {
    /// It had been granted meanwhile; nothing was undone.
    WasGranted,
    /// A waiting new request was unlinked / a conversion fell back to its old mode.
    Cancelled,
}

/// The queue of one lock: 88 bytes, `repr(C)`, the fields that change
/// rarely first (24 bytes, 8 of flags and counts), then the 56 that every
/// operation writes (see the latched table's `Head`).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Queue {
    /// The lock's fast holds, if it can have any (the latched table).
    outside: Option<Outside>,
    /// `outside`'s strongest mode, NL if it is not set (read instead of
    /// it on every strong request).
    outside_top: Mode,
    /// `outside`'s word is closed to fast acquisitions by this queue.
    closed: bool,
    /// Heat window: bit i is 1 if the i-th most recent acquisition found
    /// the latch held. Written under the latch that is taken anyway, and
    /// only when it changes (a lock that stays cold or hot is not written).
    heat: u16,
    /// WAITING plus CONVERTING requests.
    waiting: u32,
    /// Granted modes (converting requests count with their old mode).
    granted: ModeCounts,
    /// Requests in arrival order; the first two in the queue itself, so
    /// that a lock with one or two requests (a hot row read by two
    /// threads) costs the latch holder no other cache line.
    reqs: SmallVec<[ReqPtr; 2]>,
}

// The latched table's head is two cache lines with this queue in it.
#[cfg(all(target_pointer_width = "64", not(heirloom_loom)))]
const _: () = assert!(std::mem::size_of::<Queue>() == 88);

/// The outcome of a release at commit when inheritance is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Handoff {
    /// Released.
    Released,
    /// Kept in the queue as INHERITED for the agent's next transaction.
    Inherited,
}

impl Queue {
    pub(crate) fn new() -> Self {
        Queue {
            reqs: SmallVec::new(),
            granted: ModeCounts::default(),
            waiting: 0,
            heat: 0,
            outside_top: Mode::NL,
            closed: false,
            outside: None,
        }
    }

    /// Sets where the lock's fast holds are counted (at binding; the queue
    /// is empty, so its word is open).
    pub(crate) fn set_outside(&mut self, outside: Option<Outside>) {
        debug_assert!(self.is_empty() && !self.closed);
        self.outside_top = outside.map_or(Mode::NL, |o| o.top);
        self.outside = outside;
    }

    /// Whether the lock's fast holds are counted somewhere (`set_outside`,
    /// `attach_outside`).
    #[inline]
    pub(crate) fn has_outside(&self) -> bool {
        self.outside.is_some()
    }

    /// Sets where the lock's fast holds are counted on a queue that had
    /// none (a row's head bound while the row side's switch was off: no
    /// fast hold of the row exists and no strong request in the queue is
    /// counted, so the word is as open as the queue says: not closed).
    #[inline]
    pub(crate) fn attach_outside(&mut self, outside: Outside) {
        debug_assert!(self.outside.is_none() && !self.closed);
        self.outside_top = outside.top;
        self.outside = Some(outside);
    }

    /// Closes the fast-path word before a strong request in `mode` is
    /// decided, so that every fast hold is either seen by it or waits.
    #[inline]
    fn close_for(&mut self, mode: Mode, agent: u32) {
        if !self.closed && !mode.compatible(self.outside_top) {
            self.close_outside(agent);
        }
    }

    /// [`Queue::close_for`] for a strong request of `agent` on a lock with
    /// fast holds (a heavy fence, unless the word is sealed: see
    /// `fast.rs`).
    #[cold]
    fn close_outside(&mut self, agent: u32) {
        if let Some(o) = self.outside.as_mut() {
            self.closed = o.close(agent);
        }
    }

    /// After an operation: takes the queue's count off the word again once
    /// no strong request is granted and nobody waits (fast requests could
    /// not be granted otherwise). The word stays sealed until the lock has
    /// been calm for a while (`fast::REOPEN_AFTER`).
    #[inline]
    pub(crate) fn reopen_fast_word(&mut self) {
        if self.closed && self.waiting == 0 && self.granted.group().compatible(self.outside_top) {
            if let Some(o) = self.outside {
                o.open();
            }
            self.closed = false;
        }
    }

    /// Are fast holds of other agents than `q`'s in the way of `mode`?
    #[inline]
    fn outside_in_way(&self, mode: Mode, q: &Request) -> bool {
        if !self.closed {
            return false;
        }
        self.outside.is_some_and(|o| o.in_way(q.words(), mode, q.agent))
    }

    /// Reuses this empty queue for another lock: its heat window belonged
    /// to the previous lock and starts again from cold (a cold lock must not
    /// be passed on because a hot one used the same head before it).
    pub(crate) fn rebind(&mut self) {
        debug_assert!(self.is_empty(), "rebinding a queue with requests");
        self.heat = 0;
    }

    /// The heat window (tests).
    #[cfg(test)]
    pub(crate) fn heat(&self) -> u16 {
        self.heat
    }

    /// No request is linked: the queue may be reused for another lock.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// The join of the granted modes.
    pub(crate) fn group(&self) -> Mode {
        self.granted.group()
    }

    /// Links `r` (owner and age already set) asking for `mode`, and grants it if the
    /// rules allow. With `may_wait == false` a request that cannot be
    /// granted is not linked. With `die` (wait-die, and `may_wait`) a
    /// request that cannot be granted and finds an older transaction in
    /// its way (a linked request, or a fast hold) is refused and not
    /// linked either: it dies at once ([`Queue::older_in_way`]).
    /// `contended` says whether the latch was found held (the heat window).
    ///
    /// # Safety
    /// `r` is the caller's own request, alive and linked nowhere (`ReqPtr`
    /// contract 1).
    #[inline(always)]
    pub(crate) unsafe fn acquire(
        &mut self,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        die: bool,
        contended: bool,
    ) -> Outcome {
        // SAFETY: the caller's own live request (this function's contract).
        let q = unsafe { r.get() };
        let heat = inherit::note_heat(self.heat, contended);
        if heat != self.heat {
            self.heat = heat;
        }
        self.close_for(mode, q.agent);
        let ahead = if self.waiting == 0 {
            Mode::NL
        } else {
            self.waiting_join(self.reqs.len())
        };
        loop {
            let mut group = self.granted.group();
            if !mode.compatible(group) {
                // Inherited requests in the way are invalidated, as if released.
                self.invalidate_conflicting(mode, None);
                group = self.granted.group();
            }
            if mode.compatible(group) && mode.compatible(ahead) && !self.outside_in_way(mode, q) {
                q.mode.store(mode as u8, Ordering::Relaxed);
                q.status.store(GRANTED, Ordering::Relaxed);
                self.granted.add(mode);
                self.reqs.push(r);
                return Outcome::Granted;
            }
            if may_wait {
                if die && let Some(b) = self.older_in_way(mode, self.reqs.len(), None, q) {
                    return Outcome::Refused(b);
                }
                break;
            }
            if let Some(b) = self.first_blocker(mode, self.reqs.len(), None, q) {
                return Outcome::Refused(b);
            }
            // Only fast holds were in the way, and they went: look again.
        }
        q.mode.store(Mode::NL as u8, Ordering::Relaxed);
        q.want.store(mode as u8, Ordering::Relaxed);
        q.status.store(WAITING, Ordering::Relaxed);
        self.waiting += 1;
        self.reqs.push(r);
        Outcome::Waiting
    }

    /// Converts the granted request `r` to `to` (already joined with its
    /// mode). Granting a conversion may put new holders in front of waiters,
    /// so their owners are woken (`wake`) to re-run their conflict policy;
    /// so may a conversion that has to wait, if `wake_behind` (see below).
    ///
    /// # Safety
    /// `r` is the caller's own request, alive and linked in this queue.
    #[allow(clippy::too_many_arguments)] // one per input of the operation
    pub(crate) unsafe fn convert(
        &mut self,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        die: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> Outcome {
        // SAFETY: the caller's own live request (this function's contract).
        let q = unsafe { r.get() };
        let held = q.mode();
        debug_assert_eq!(q.status.load(Ordering::Relaxed), GRANTED);
        self.close_for(to, q.agent);
        loop {
            if !to.compatible(self.granted.group_without(held)) {
                self.invalidate_conflicting(to, Some(r));
            }
            if to.compatible(self.granted.group_without(held)) && !self.outside_in_way(to, q) {
                self.granted.remove(held);
                self.granted.add(to);
                q.mode.store(to as u8, Ordering::Relaxed);
                self.notify_waiters(wake);
                return Outcome::Granted;
            }
            if may_wait {
                if die && let Some(b) = self.older_in_way(to, 0, Some(r), q) {
                    return Outcome::Refused(b);
                }
                break;
            }
            let idx = self.index_of(r);
            if let Some(b) = self.first_blocker(to, idx, Some(r), q) {
                return Outcome::Refused(b);
            }
        }
        // A waiting conversion keeps its place among the holders, ahead of
        // every waiter: each waiter whose wish conflicts with `to` gets a new
        // edge that its conflict policy has not seen. Wait-die and
        // wound-wait judge only their own edges, so they are woken to judge
        // it (without this, an older waiter sat behind a younger converter
        // with nobody wounded: the stress test's stall). Under `Detect` the
        // converter's own search sees the edge, and a wake-up would only
        // repeat the waiters' searches, so the caller passes `false`.
        if wake_behind {
            self.notify_waiters(wake);
        }
        q.want.store(to as u8, Ordering::Relaxed);
        q.status.store(CONVERTING, Ordering::Relaxed);
        self.waiting += 1;
        Outcome::Waiting
    }

    /// Converts a fast hold (`table/fast.rs`) of `r`'s transaction to `to`
    /// (already joined with the held mode): links `r`, a request of the
    /// caller's not linked anywhere, served as a conversion from NL (the
    /// fast hold is its granted part, kept by the caller until `r` goes).
    /// Otherwise as [`Queue::convert`].
    ///
    /// # Safety
    /// `r` is the caller's own request, alive and linked nowhere (`ReqPtr`
    /// contract 1).
    #[allow(clippy::too_many_arguments)] // one per input of the operation
    pub(crate) unsafe fn convert_outside(
        &mut self,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        die: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> Outcome {
        // SAFETY: the caller's own live request (this function's contract).
        let q = unsafe { r.get() };
        self.close_for(to, q.agent);
        loop {
            if !to.compatible(self.granted.group()) {
                self.invalidate_conflicting(to, None);
            }
            if to.compatible(self.granted.group()) && !self.outside_in_way(to, q) {
                q.mode.store(to as u8, Ordering::Relaxed);
                q.want.store(to as u8, Ordering::Relaxed);
                q.status.store(GRANTED, Ordering::Relaxed);
                self.granted.add(to);
                self.reqs.push(r);
                self.notify_waiters(wake);
                return Outcome::Granted;
            }
            if may_wait {
                if die && let Some(b) = self.older_in_way(to, 0, None, q) {
                    return Outcome::Refused(b);
                }
                break;
            }
            // Waiting new requests are behind a conversion.
            if let Some(b) = self.first_blocker(to, 0, None, q) {
                return Outcome::Refused(b);
            }
        }
        if wake_behind {
            self.notify_waiters(wake);
        }
        q.mode.store(Mode::NL as u8, Ordering::Relaxed);
        q.want.store(to as u8, Ordering::Relaxed);
        q.status.store(CONVERTING, Ordering::Relaxed);
        self.waiting += 1;
        self.reqs.push(r);
        Outcome::Waiting
    }

    /// Unlinks the granted request `r` and grants whoever can now proceed.
    #[inline]
    pub(crate) fn release(&mut self, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        let idx = self.index_of(r);
        // SAFETY: linked here (`index_of` found it; it panics otherwise) and
        // we hold the latch: alive (`ReqPtr` contract 2).
        let q = unsafe { r.get() };
        debug_assert_eq!(q.status.load(Ordering::Relaxed), GRANTED);
        self.granted.remove(q.mode());
        if idx + 1 == self.reqs.len() {
            self.reqs.pop();
        } else {
            self.reqs.remove(idx);
        }
        if self.waiting > 0 {
            self.grant_waiters(wake);
        }
    }

    /// At commit: keeps the granted `r` as INHERITED if nobody waits and the
    /// lock has `heat` (SLI criteria 4 and 2; the caller checked the others,
    /// see `inherit.rs`); else releases it.
    ///
    /// # Safety
    /// `r` is the caller's own request, alive and linked in this queue.
    #[inline]
    pub(crate) unsafe fn release_or_inherit(&mut self, r: ReqPtr, heat: Heat, wake: &mut Vec<ReqPtr>) -> Handoff {
        if self.waiting == 0 && heat.allows(|| self.heat) {
            // Release: pairs with the Acquire of the next owner's reclaim
            // CAS and of invalidators.
            // SAFETY: the caller's own live request (this function's contract).
            unsafe { r.get() }.status.store(INHERITED, Ordering::Release);
            return Handoff::Inherited;
        }
        self.release(r, wake);
        Handoff::Released
    }

    /// Somebody waits here.
    #[inline]
    pub(crate) fn has_waiters(&self) -> bool {
        self.waiting > 0
    }

    /// After publishing that somebody waits (see `table/latched.rs`):
    /// invalidates inherited requests in the way of any waiter that an owner
    /// turned INHERITED without the latch, and grants what can be granted.
    #[cold]
    pub(crate) fn recheck_inherited(&mut self, wake: &mut Vec<ReqPtr>) {
        if self.waiting > 0 {
            self.grant_waiters(wake);
        }
    }

    /// Invalidates every INHERITED request (other than `own`) whose mode
    /// conflicts with `want`, unlinking it as if it had been released.
    #[cold]
    fn invalidate_conflicting(&mut self, want: Mode, own: Option<ReqPtr>) {
        let mut i = 0;
        while i < self.reqs.len() {
            let r = self.reqs[i];
            // SAFETY: linked here, latch held (contract 2).
            let q = unsafe { r.get() };
            if Some(r) != own && q.status.load(Ordering::Acquire) == INHERITED {
                // Read before the CAS: once INVALID, the owner may reuse the
                // node at once, so it must not be touched afterwards.
                let m = q.mode();
                if !want.compatible(m) && inherit::invalidate(q) {
                    self.granted.remove(m);
                    self.reqs.remove(i);
                    continue;
                }
            }
            i += 1;
        }
    }

    /// Withdraws the waiting request `r` (timeout, deadlock victim, died,
    /// wounded), unless it was granted meanwhile.
    ///
    /// # Safety
    /// `r` is the caller's own request, alive and linked in this queue.
    pub(crate) unsafe fn cancel(&mut self, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY: the caller's own live request (this function's contract).
        let q = unsafe { r.get() };
        match q.status.load(Ordering::Relaxed) {
            WAITING => {
                let idx = self.index_of(r);
                self.reqs.remove(idx);
            }
            // A conversion of a fast hold (`convert_outside`) holds
            // nothing here: it goes.
            CONVERTING if q.mode() == Mode::NL => {
                let idx = self.index_of(r);
                self.reqs.remove(idx);
            }
            CONVERTING => {
                q.want.store(q.mode.load(Ordering::Relaxed), Ordering::Relaxed);
                q.status.store(GRANTED, Ordering::Relaxed);
            }
            _ => return Cancel::WasGranted,
        }
        self.waiting -= 1;
        // A waiter ahead of others may have been what blocked them.
        if self.waiting > 0 {
            self.grant_waiters(wake);
        }
        Cancel::Cancelled
    }

    /// The transactions whose requests keep the waiting `r` from being
    /// granted; `false` if `r` is no longer waiting here.
    pub(crate) fn blockers(&self, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        let Some(idx) = self.reqs.iter().position(|&x| x == r) else {
            return false;
        };
        // SAFETY: linked here (found above), latch held (contract 2). `r` may
        // be another agent's (deadlock search), so it is not touched before.
        let q = unsafe { r.get() };
        let status = q.status.load(Ordering::Relaxed);
        if status == GRANTED {
            return false;
        }
        let want = q.want();
        for (i, &o) in self.reqs.iter().enumerate() {
            if o == r {
                continue;
            }
            // SAFETY: linked here, latch held (contract 2).
            let oq = unsafe { o.get() };
            if blocks(oq, want, status == WAITING, i < idx) {
                out.push(Blocker::of(oq));
            }
        }
        // And the fast holds in its way.
        if self.closed
            && let Some(o) = self.outside
        {
            o.holders(q.words(), want, q.agent, out);
        }
        true
    }

    /// Calls `f` for every linked request (monitoring).
    pub(crate) fn for_each(&self, mut f: impl FnMut(&crate::request::Request)) {
        for r in &self.reqs {
            // SAFETY: linked here, latch held (contract 2).
            f(unsafe { r.get() });
        }
    }

    #[inline]
    fn index_of(&self, r: ReqPtr) -> usize {
        // Queues are short (one entry per transaction interested in this
        // lock); recently granted requests sit near the end.
        match self.reqs.iter().rposition(|&x| x == r) {
            Some(i) => i,
            None => unreachable!("request not linked to this lock"),
        }
    }

    /// Join of the modes wanted by conversions and by waiters before `upto`.
    fn waiting_join(&self, upto: usize) -> Mode {
        let mut j = Mode::NL;
        for (i, r) in self.reqs.iter().enumerate() {
            // SAFETY: linked here, latch held (contract 2).
            let q = unsafe { r.get() };
            match q.status.load(Ordering::Relaxed) {
                CONVERTING => j = j.join(q.want()),
                WAITING if i < upto => j = j.join(q.want()),
                _ => {}
            }
        }
        j
    }

    /// One request in the way of `want` of `me`'s agent (for the no-wait
    /// error).
    /// A request its owner re-inherited without the latch since our
    /// conflict check counts too: the refusal is ordered before that
    /// hand-off. `None` if only fast holds were in the way and they have
    /// gone since (the caller looks again).
    fn first_blocker(&self, want: Mode, upto: usize, own: Option<ReqPtr>, me: &Request) -> Option<Blocker> {
        for (i, &r) in self.reqs.iter().enumerate() {
            if Some(r) == own {
                continue;
            }
            // SAFETY: linked here, latch held (contract 2).
            let q = unsafe { r.get() };
            // Acquire: as in `blockers` (the error names the current owner).
            let in_way = match q.status.load(Ordering::Acquire) {
                GRANTED | INHERITED => !want.compatible(q.mode()),
                CONVERTING => !want.compatible(q.mode()) || !want.compatible(q.want()),
                WAITING => i < upto && !want.compatible(q.want()),
                _ => false,
            };
            if in_way {
                return Some(Blocker::of(q));
            }
        }
        if self.closed
            && let Some(o) = self.outside
        {
            return o.blocker(me.words(), want, me.agent);
        }
        // Not reachable while the grant rules and this scan agree; name the
        // oldest request rather than fail.
        debug_assert!(false, "a refused request has no blocker");
        Some(self.reqs.iter().find(|&&r| Some(r) != own).map_or(
            Blocker {
                txn: crate::error::TxnId(0),
                agent: u32::MAX,
                ts: u64::MAX,
            },
            // SAFETY: linked here, latch held (contract 2).
            |r| Blocker::of(unsafe { r.get() }),
        ))
    }

    /// Wait-die's judgement of a request about to wait, made before it is
    /// linked: a linked request in the way of `want` of `me` whose
    /// transaction is older than `me`'s (`None`: none is, and `me` may
    /// wait). The requests in the way are those [`Queue::blockers`] would
    /// name once `me` waited: for a new request (`upto`: the queue's
    /// length, where it would be linked) the conflicting holders,
    /// conversions (their old and their target mode) and waiters; for a
    /// conversion (`upto` 0; `own`: its own request, if linked) the
    /// conflicting holders and conversions' held modes; and either way the
    /// fast holds in its way while the word is closed. A transaction that
    /// would die at its first judgement so dies without ever being seen
    /// waiting (nobody judges their own request against a request that is
    /// about to go, nor is woken by its leaving), as DBx1000's WAIT_DIE
    /// decides under the row's latch.
    fn older_in_way(&self, want: Mode, upto: usize, own: Option<ReqPtr>, me: &Request) -> Option<Blocker> {
        let age = me.ts.load(Ordering::Relaxed);
        let new = own.is_none() && upto > 0;
        for (i, &r) in self.reqs.iter().enumerate() {
            if Some(r) == own {
                continue;
            }
            // SAFETY: linked here, latch held (contract 2).
            let q = unsafe { r.get() };
            if blocks(q, want, new, i < upto) && older(q.ts.load(Ordering::Relaxed), q.agent, age, me.agent) {
                return Some(Blocker::of(q));
            }
        }
        // The fast holds, as `blockers` reads them.
        match self.outside {
            Some(o) if self.closed => o.older(me.words(), want, me.agent, age),
            _ => None,
        }
    }

    /// Grants conversions first, then waiters in order, as the rules allow.
    fn grant_waiters(&mut self, wake: &mut Vec<ReqPtr>) {
        // Inherited requests in the way of any waiter go first (waiters
        // invalidated those they met when they arrived; this is a safety net).
        let all = self.waiting_join(self.reqs.len());
        if !all.compatible(self.granted.group()) {
            self.invalidate_conflicting(all, None);
        }
        let mut converted = false;
        // Conversions.
        for &r in &self.reqs {
            // SAFETY: linked here, latch held (contract 2).
            let q = unsafe { r.get() };
            if q.status.load(Ordering::Relaxed) != CONVERTING {
                continue;
            }
            let (held, want) = (q.mode(), q.want());
            if want.compatible(self.granted.group_without(held)) && !self.outside_in_way(want, q) {
                // NL: a fast hold's conversion (`convert_outside`).
                if held != Mode::NL {
                    self.granted.remove(held);
                }
                self.granted.add(want);
                q.mode.store(want as u8, Ordering::Relaxed);
                // Release: pairs with the owner's Acquire in `Request::status`.
                q.status.store(GRANTED, Ordering::Release);
                self.waiting -= 1;
                wake.push(r);
                converted = true;
            }
        }
        // New requests, in order: each must be compatible with the group and
        // with everything still waiting ahead of it. Pending conversions are
        // ahead of every new request wherever they sit in the queue (the same
        // rule `acquire` and `blockers` apply).
        let mut ahead = Mode::NL;
        if self.waiting > 0 {
            for &r in &self.reqs {
                // SAFETY: linked here, latch held (contract 2).
                let q = unsafe { r.get() };
                if q.status.load(Ordering::Relaxed) == CONVERTING {
                    ahead = ahead.join(q.want());
                }
            }
        }
        for &r in &self.reqs {
            if self.waiting == 0 {
                break;
            }
            // SAFETY: linked here, latch held (contract 2).
            let q = unsafe { r.get() };
            if q.status.load(Ordering::Relaxed) != WAITING {
                continue;
            }
            let want = q.want();
            if want.compatible(self.granted.group()) && want.compatible(ahead) && !self.outside_in_way(want, q) {
                self.granted.add(want);
                q.mode.store(want as u8, Ordering::Relaxed);
                // Release: pairs with the owner's Acquire in `Request::status`.
                q.status.store(GRANTED, Ordering::Release);
                self.waiting -= 1;
                wake.push(r);
            } else {
                ahead = ahead.join(want);
            }
        }
        if converted {
            self.notify_waiters(wake);
        }
    }

    /// Appends every request waiting here (new or converting).
    pub(crate) fn waiters(&self, out: &mut Vec<ReqPtr>) {
        for &r in &self.reqs {
            // SAFETY: linked here, and the caller owns the queue (contract 2).
            let s = unsafe { r.get() }.status.load(Ordering::Relaxed);
            if s == WAITING || s == CONVERTING {
                out.push(r);
            }
        }
    }

    /// Wakes every waiter so that it re-runs its conflict policy (used when
    /// a conversion was granted in front of them).
    fn notify_waiters(&self, wake: &mut Vec<ReqPtr>) {
        if self.waiting == 0 {
            return;
        }
        // These wake-ups change no state a waiter's park condition reads:
        // counted first, so that a waiter between its look at its edges and
        // its park does not park (`sync::NOTICES`). (A grant needs no
        // notice: the waiter's condition reads its status.)
        crate::sync::notice();
        for &r in &self.reqs {
            // SAFETY: linked here, latch held (contract 2).
            let s = unsafe { r.get() }.status.load(Ordering::Relaxed);
            if s == WAITING || s == CONVERTING {
                wake.push(r);
            }
        }
    }
}

#[cfg(test)]
mod tests;
