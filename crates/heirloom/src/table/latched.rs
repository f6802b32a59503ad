//! `Latched`: hash buckets of lock heads, one latch per head (Shore-MT).
//!
//! ## Structure and latches
//!
//! * An array of buckets that grows ([`Latched::grow`], below). Each bucket
//!   has a latch and, on the same cache line, [`KEEP_HEADS`] *lanes*, each
//!   empty or keeping a head (a *kept* head) with 16 bits of the hash of
//!   the lock it is bound to (its *tag*; `buckets.rs`, `Bucket`), and a
//!   singly linked chain of the *extra* heads, bound while every lane was
//!   taken (push-front; an extra head leaves the chain only to move to
//!   another in a growth). A head is freed only when the table drops.
//! * A head is a latch over one [`Queue`] plus a copy of the queue's lock id
//!   in two atomic words, for latch-free lookup.
//! * A head is *bound* to a lock id. Rebinding an empty head to another id
//!   requires the bucket latch and the head latch. So the id under the head
//!   latch (`Queue::id`) is exact, and under the bucket latch the id words
//!   are exact too.
//!
//! Latch order: bucket before head; never two heads, never two buckets
//! (except a growth, which takes every bucket latch and no head latch).
//!
//! ## Paths
//!
//! * Acquire (fast): look *without* the bucket latch at the kept heads
//!   whose tag is the lock's, then walk the extra ones, comparing the id
//!   words (read racily: a torn read or a tag read as it changes can only
//!   cause a false match or a false miss); take the matching head's latch
//!   and check `Queue::id`. A false match (the head was rebound meanwhile)
//!   retries; a miss goes to the slow path. An acquisition of a known lock
//!   therefore takes one latch, and reads the bucket's line and the head's;
//!   a miss (most row locks of a workload over many rows, whose heads were
//!   rebound since) reads no head.
//! * Acquire (slow, the lock has no head): bucket latch, look again (exact
//!   now: tags and chain change only under it), else bind a head into an
//!   empty lane: one of the caller's spares (below), or a new one. With
//!   every lane taken, rebind an empty head of the bucket, a kept one
//!   first (try-latched, so the order is never inverted; a head whose
//!   latch notes requests, `IN_USE`, is passed over without a write to its
//!   line) and retag it, else allocate an extra head and add it to the
//!   chain (Release stores of a head's pointer, paired with the lookups'
//!   Acquire loads, so a lookup sees the head initialised).
//! * Release, convert, cancel: the transaction remembers the head of each
//!   request, so only the head latch is taken. A head with a linked request
//!   cannot be rebound.
//!
//! * Intention locks (fast path, `Builder::fast_path`, on by default with
//!   or without inheritance; a fast hold is never passed on): IS and IX
//!   on a database or table lock are a bit in the agent's record in
//!   `table/fast.rs`, with no head found, no latch taken and no shared
//!   line written; the lock's queue counts them as granted holds it does
//!   not list (`Queue::outside`) and closes the lock's word before it
//!   decides a strong request (S, U, SIX, X); the word stays sealed for a
//!   calm stretch after (`fast::REOPEN_AFTER`). A handle with
//!   `Handle::FAST` set is a fast hold (the slot in the bits below); a
//!   head's address has it clear. A fast hold that must become stronger
//!   links a request served as a conversion (`Queue::convert_outside`)
//!   and is given up when that request is released (`Agent::converted`).
//!   A fast release or a fast request backing off that finds the word
//!   non-zero takes the head latch and grants the waiters now clear
//!   (`FastTable::after_fast_release`).
//! * Row S locks (`Builder::fast_rows`) are fast holds the same way, with
//!   the row's stripe for a slot (`table/fast/rows.rs`): a row's queue
//!   closes the stripe's word before it decides a request that conflicts
//!   with S (on a drained stripe by registering in the requester's record,
//!   whose agent the queue keeps until it opens the word again), and reads
//!   the row's words from the request it judges (every request this table
//!   links carries them, [`Latched::acquire`]). While the row side's
//!   switch is off (`rows.rs`, "The switch") a row's head is bound with
//!   no stripe at all, so that its requests pay nothing for fast holds
//!   that cannot exist; the first request that finds the switch no longer
//!   off under the head latch gives the head its stripe before it decides
//!   ([`Latched::outside_now`]).
//!
//! ## Spares (`Latched<true>`, `TableKind::LatchedSpares`)
//!
//! A head's two lines are written by every operation on its lock. A miss
//! that rebinds whatever empty head its bucket has writes lines that
//! another agent wrote last, for locks that have nothing to do with each
//! other: on TPC-C at sixteen threads, two of the three shared-line
//! writes of a miss (the bucket's, and the rebound head's two). With
//! spares, the release that empties a kept head's queue takes the head
//! out of the table ([`Latched::detach`]: the bucket latch tried while the
//! head latch is held, the lane emptied, the id words set to no lock's)
//! into the releasing agent's *spares*, and that agent's next miss binds
//! it again: a head's lines are written by the agents that use its lock,
//! and then by the one that used it last. A bucket then keeps only the
//! heads of live locks. Spares are per agent index (`fast::AGENTS` of
//! them, at most `bind::MOST_SPARES` heads each), used by that agent
//! alone and so without a latch (`bind::Own`); an agent whose spares fill
//! (it released locks others took) hands the older half to the table's
//! common spares, from which an agent that runs out takes a batch. A head
//! stays bound, empty, for a miss to rebind when the bucket latch is held,
//! the agent has no spares, or the head is an extra one. A lookup that
//! read a lane before its head left may still latch the head: under the
//! latch it finds the head bound to another lock, or to none, and looks
//! again (`loom_grow.rs`, the fourth model). The head says which lane keeps it (`Head::lane`), so
//! the detach needs neither the lock's hash nor a search of the lanes.
//! The price is the detach, a bucket latch tried at each release that
//! empties a head, and the bind of a spare at each miss: instructions on
//! one thread that the plain table does not spend (`scripts/callgrind.sh`,
//! MEASUREMENTS.md, "Spare heads" and after), which is why it is a kind of
//! its own until sixteen cores judge it. `Latched<false>` compiles the
//! spares away.
//!
//! Since a bucket keeps only live locks' heads, its array can be large
//! without keeping more heads: with spares the table starts at the
//! latch-free tables' size for the machine's cores
//! (`heirloom::default_buckets`: 4,096 on two cores, 65,536 on sixteen),
//! so that sixteen threads' misses meet in a bucket line another thread
//! wrote recently about as seldom as two threads' do in 4,096; without
//! them it starts at 256, where its emptied heads stay in the cache.
//!
//! Heads are freed only when the table drops. Memory is bounded by the
//! peak number of simultaneously live locks (per bucket, for the heads
//! left bound) plus the spares, not by the number of ids ever used.
//!
//! ## Growth
//!
//! A bucket keeps [`KEEP_HEADS`] heads in its lanes before it rebinds empty
//! ones, and adds an extra head whenever all of its heads are in use.
//! Heads beyond `KEEP_HEADS` are counted table-wide (`Latched::excess`, written only
//! when such a head is added); once there are as many as buckets (the
//! chains average more than `KEEP_HEADS + 1`), the next acquisition that
//! would add one doubles the buckets first ([`Latched::grow`]): under every
//! bucket latch it moves each head to its bucket in the new array (the
//! first [`KEEP_HEADS`] a bucket gets there fill its lanes, the others its
//! chain) and
//! publishes that, keeping the old array (smaller than the new one) until
//! the table drops, since walks and latch waiters may still be on it. A
//! head never moves in memory, so the handles transactions keep stay good.
//! So a transaction that takes 300,000 locks pays about as much for the
//! last as for the first (`examples/manylocks.rs`), while short
//! transactions, whose live locks fit the buckets they started with, keep
//! the small array and its few hot heads.
//!
//! A lookup without the bucket latch may meet a growth relinking its chain
//! (the old array's index stays as it was): it may then miss a head that
//! is there (never find one that is not bound to its id), and every
//! `buckets::RECHECK_AFTER` extra heads its walk checks whether
//! the array changed, so that it does not go round a chain in circles. A
//! miss of the fast walk goes to the bucket latch, where the chains are
//! exact; the one walk that must not miss, the wake-up after a fast
//! release (`FastTable::after_fast_release`), walks again under it
//! ([`Latched::find_exact`]). A snapshot holds off growths while it walks.

use crossbeam_utils::CachePadded;

use super::fast::{self, Fast, FastTable, holds};
use super::{Caller, Converting, Handle, LockTable, MAX_BUCKETS, Reinherit};
use crate::id::LockId;
use crate::inherit::Heat;
use crate::latch::{Latch, LatchGuard, latch, latch_heat};
use crate::mode::Mode;
use crate::monitor::{LockInfo, describe};

use crate::nodes::Nodes;
use crate::queue::{Blocker, Cancel, Handoff, Outcome, Outside, Queue};
use crate::request::{INHERITED, ReqPtr};
use crate::stats::AgentCounters;
use crate::sync::{AtomicPtr, AtomicUsize, Ordering, fence};
use heirloom_rtm::Elision;

mod bind;
mod buckets;
mod head;

#[cfg(all(test, not(heirloom_loom)))]
use bind::MOST_SPARES;
use bind::{Own, Spare, Spares};
use buckets::{Bucket, Dir, Retired};
use head::{Head, IN_USE};

/// Heads a bucket keeps bound before it starts rebinding empty ones (one
/// under loom, so that the models see the table grow after three locks).
const KEEP_HEADS: usize = if cfg!(heirloom_loom) { 1 } else { 4 };

/// `SPARES`: releases take the heads they empty into the releasing
/// agent's spares (`TableKind::LatchedSpares`; the module docs, "Spares").
pub(crate) struct Latched<const SPARES: bool = false> {
    /// The buckets now (`Dir`); replaced only by [`Latched::grow`], under
    /// every bucket latch of the one it replaces.
    dir: AtomicPtr<Dir>,
    /// Serialises growths and snapshots; holds the arrays grown out of
    /// (freed when the table drops).
    grown: Latch<Vec<Retired>>,
    /// Heads beyond [`KEEP_HEADS`] in their bucket, summed over the
    /// buckets: written when such a head is allocated (the rare path), and
    /// set anew by each growth. Past one per bucket the table grows.
    excess: CachePadded<AtomicUsize>,
    /// The most buckets it grows to ([`MAX_BUCKETS`]; fewer in tests).
    most: usize,
    /// The manager passes locks on (speculative lock inheritance): only
    /// then may an owner turn a request INHERITED without the latch.
    sli: bool,
    /// The intention-lock fast path (`fast.rs`), when on. Dropped after
    /// the heads, whose queues point to it (`Drop`).
    fast: Option<Box<Fast>>,
    /// The head latches elided on the common paths
    /// (`TableKind::LatchedHtm`; see [`Latched::elided`]), or taken.
    elision: Option<Elision>,
    /// Wait-die judges a request that would wait before it is linked
    /// ([`LockTable::judge_wait_die`]).
    wait_die: bool,
    /// Each agent's spare heads, by its index (agents from `fast::AGENTS`
    /// on have none, and nobody has any in `Latched<false>`): heads that
    /// left the table when a release by the agent emptied their queues
    /// ([`Latched::detach`]), bound again by its next misses. Only the
    /// agent itself uses them (`bind::Own`).
    spares: Box<[CachePadded<Own>]>,
    /// Spares that agents handed on ([`Latched::detach`]), for agents that
    /// run out.
    common: CachePadded<Spares>,
}

/// This table's handle ([`LockTable::Handle`]): the address of the lock's
/// head, or for a fast hold [`Handle::FAST`] and its slot (a head's
/// address is far below that bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At(usize);

impl At {
    #[inline]
    fn head(p: *const CachePadded<Head>) -> Self {
        At(p as usize)
    }

    #[inline]
    fn fast(s: usize) -> Self {
        At(Handle::FAST | s)
    }

    /// The slot of a fast hold's handle; `None` for a head's.
    #[inline]
    fn fast_slot(self) -> Option<usize> {
        (self.0 & Handle::FAST != 0).then_some(self.0 & !Handle::FAST)
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

impl<const SPARES: bool> Latched<SPARES> {
    /// `sli`: speculative lock inheritance is on (requests may be passed on
    /// by [`Latched::reinherit`]); `fast_path`: intention locks take the
    /// fast path (a fast hold is no request to pass on: the transaction
    /// releases it at commit, `Handle::is_fast`); `rows`: and row S
    /// locks (`fast/rows.rs`).
    /// `elide`: the head latches are elided by RTM (`TableKind::LatchedHtm`).
    pub(crate) fn new(buckets: usize, sli: bool, fast_path: bool, rows: bool, elide: bool) -> Self {
        let n = buckets.clamp(1, MAX_BUCKETS).next_power_of_two();
        Latched {
            dir: AtomicPtr::new(Box::into_raw(Dir::new(n))),
            grown: Latch::new(Vec::new()),
            excess: CachePadded::new(AtomicUsize::new(0)),
            most: MAX_BUCKETS,
            sli,
            fast: fast_path.then(|| Box::new(Fast::with_rows(rows))),
            elision: elide.then(Elision::default),
            wait_die: false,
            spares: if SPARES {
                (0..fast::AGENTS).map(|_| CachePadded::new(Own::new())).collect()
            } else {
                Box::new([])
            },
            common: CachePadded::new(Latch::new(Vec::new())),
        }
    }

    /// The buckets now.
    #[inline]
    fn dir(&self) -> &Dir {
        // Acquire: pairs with the Release publication in `grow`, so the
        // chains the new array starts are seen relinked.
        // SAFETY: every array the table had lives until it drops (`grown`).
        unsafe { &*self.dir.load(Ordering::Acquire) }
    }

    /// A table that grows to `most` buckets at the most.
    #[cfg(test)]
    pub(crate) fn with_most(buckets: usize, most: usize) -> Self {
        let mut t = Latched::new(buckets, false, false, false, false);
        t.most = most;
        t
    }

    /// The number of buckets now.
    pub(crate) fn buckets(&self) -> usize {
        self.dir().buckets.len()
    }

    /// Runs `f` on `head`'s queue elided by `e` (see `Latch::elide`), then
    /// settles the head as the latched path does; `f` gets the heat. The
    /// latch-contended count gets a contended section.
    #[inline]
    fn elided<R>(
        &self,
        e: &Elision,
        c: &AgentCounters,
        head: &Head,
        wake: &mut Vec<ReqPtr>,
        mut f: impl FnMut(&mut Queue, &mut Vec<ReqPtr>, bool) -> R,
    ) -> R {
        let (out, hot) = head.queue.elide(e, |q, hot| {
            let out = f(q, wake, hot);
            head.publish_waiters(q, wake, self.sli, false);
            out
        });
        if hot {
            c.latch_contended.bump();
        }
        out
    }

    /// Where the fast holds of `id` are counted, if it can have any (a slot
    /// is claimed for it if need be; see `Fast::slot`): none for a row
    /// while the row side's switch is off (`Fast::slot_for_new`), whose
    /// head gets it when a request comes after the switch has left off
    /// ([`Latched::outside_now`]).
    #[inline(always)]
    fn outside_of(&self, id: LockId) -> Option<Outside> {
        let f = self.fast.as_deref()?;
        let s = f.slot_for_new(id)?;
        // SAFETY: the table drops its heads (and their queues) before its
        // `Fast` (`Drop for Latched`).
        Some(unsafe { Outside::new(f, s, fast::top(s)) })
    }

    /// Before a request of `id` is linked or converted in `q` (its head's
    /// queue, latched, bound to `id`): a row's head bound while the row
    /// side's switch was off has no `Outside` (`Latched::outside_of`); if
    /// the switch has left off since, it gets it now, before the request
    /// decides, so that a strong request is counted as the switch says.
    /// Read under the head latch as `Rows::add_strong` reads it: a request
    /// that finds the switch off here is one that `add_strong` would have
    /// left uncounted (its transaction is in progress, so the switch's
    /// grace period waits for it), and while fast holds exist the switch
    /// is not off, so a fast hold's conversion always finds the `Outside`.
    #[inline(always)]
    fn outside_now(&self, q: &mut Queue, id: LockId) {
        if !q.has_outside()
            && fast::is_row(id)
            && let Some(o) = self.outside_of(id)
        {
            q.attach_outside(o);
        }
    }

    /// The head a handle of this table names.
    ///
    /// # Safety
    /// `h` was returned by this table's [`Latched::acquire`]: then it is the
    /// address of a head this table allocated, and heads are freed only when
    /// the table drops. (A `Handle` of another table kind is a slab or
    /// bucket index, not an address; one manager has one table, so the
    /// handles in its agents' lock caches are all of its kind.)
    #[inline]
    unsafe fn head(&self, h: At) -> &Head {
        debug_assert!(h.fast_slot().is_none(), "a fast hold has no head");
        // SAFETY: the address of a live head of this table (the contract).
        unsafe { &*(h.0 as *const CachePadded<Head>) }
    }

    /// `id`'s head, latched (bound first if the lock has none), its
    /// address, and whether a latch on the way was found held.
    #[inline]
    fn latched_head(&self, a: Caller<'_>, id: LockId) -> (LatchGuard<'_, Queue>, *mut CachePadded<Head>, bool) {
        let c = a.counters;
        let words = id.words();
        let d = self.dir();
        let (bucket, t) = d.slot(id);
        loop {
            let p = self.find(d, bucket, words, t);
            if p.is_null() {
                return self.latched_head_slow(a, id, d, bucket, t);
            }
            // SAFETY: heads live as long as the table.
            let head = unsafe { &*p };
            let (mut q, contended) = latch_heat(&head.queue, c);
            if head.bound_to(words) {
                self.outside_now(&mut q, id);
                return (q, p, contended);
            }
            // Rebound between the walk and the latch: walk again.
        }
    }

    /// Runs `f` on the queue of `h` under its head latch (read-only uses).
    ///
    /// # Safety
    /// `h` was returned by this table's `acquire` (see [`Latched::head`]).
    #[inline]
    unsafe fn with<R>(&self, c: &AgentCounters, h: At, f: impl FnOnce(&mut Queue) -> R) -> R {
        // SAFETY: a handle of this table (the contract).
        let mut q = latch(&unsafe { self.head(h) }.queue, c);
        f(&mut q)
    }

    /// Runs `f` on the queue of `h` under its head latch, then publishes
    /// whether anybody waits (see [`Head::publish_waiters`]).
    ///
    /// # Safety
    /// `h` was returned by this table's `acquire` (see [`Latched::head`]).
    /// Always inlined: the commit's release calls it once per row lock,
    /// and a call of its own costs that release a frame's register saves.
    #[inline(always)]
    unsafe fn update<R>(
        &self,
        a: Caller<'_>,
        h: At,
        wake: &mut Vec<ReqPtr>,
        mut f: impl FnMut(&mut Queue, &mut Vec<ReqPtr>) -> R,
    ) -> R {
        // SAFETY: a handle of this table (the contract).
        let head = unsafe { self.head(h) };
        if let Some(e) = &self.elision {
            return self.elided(e, a.counters, head, wake, |q, w, _| f(q, w));
        }
        let mut q = latch(&head.queue, a.counters);
        let out = f(&mut q, wake);
        head.publish_waiters(&mut q, wake, self.sli, true);
        if SPARES && q.is_empty() {
            self.detach(a, h.0 as *mut CachePadded<Head>, &q);
        }
        out
    }
}

// SAFETY: grants are decided by each lock's `Queue` under its head latch
// (or in a transaction that aborts if the latch is taken), with the fast
// holds counted through `Outside`; every queue operation pushes what it
// grants to `wake` and publishes `waiters` before the latch is given
// back; a head lives as long as the table, so its address finds it while
// its request is linked; nodes are not kept past their unlinking.
unsafe impl<const SPARES: bool> LockTable for Latched<SPARES> {
    type Handle = At;

    fn judge_wait_die(&mut self) {
        self.wait_die = true;
    }

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
        let c = a.counters;
        // SAFETY: the caller's own request, linked nowhere (the contract).
        if try_fast && let Some(h) = unsafe { holds::try_node(self, c, id, r, mode, wake) } {
            return (Outcome::Granted, h);
        }
        {
            // SAFETY: the caller's own live request (the contract).
            let q = unsafe { r.get() };
            // The queue reads them for the lock's fast holds (`Outside`).
            let (key, hi) = id.words();
            q.key.store(key, Ordering::Relaxed);
            q.hi.store(hi, Ordering::Relaxed);
        }
        if let Some(e) = &self.elision {
            // Elided when the lock has a head already; binding one takes
            // the latches.
            let p = self.find_now(id);
            if !p.is_null() {
                // SAFETY: chain heads live as long as the table.
                let head = unsafe { &*p };
                let words = id.words();
                let out = self.elided(e, c, head, wake, |q, _, contended| {
                    // Rebound between the walk and the section: nothing done.
                    head.bound_to(words).then(|| {
                        self.outside_now(q, id);
                        // SAFETY: the caller's own live request (the contract).
                        unsafe { q.acquire(r, mode, may_wait, self.wait_die, contended) }
                    })
                });
                if let Some(out) = out {
                    return (out, At::head(p));
                }
            }
        }
        let (mut q, p, contended) = self.latched_head(a, id);
        // SAFETY: the caller's own live request (the contract).
        let out = unsafe { q.acquire(r, mode, may_wait, self.wait_die, contended) };
        // SAFETY: chain heads live as long as the table.
        unsafe { &*p }.publish_waiters(&mut q, wake, self.sli, true);
        (out, At::head(p))
    }

    /// In place; or for a fast hold with a request from `nodes` served as
    /// a conversion (`Queue::convert_outside`), or a second fast hold (IS
    /// to IX).
    #[allow(clippy::too_many_arguments)]
    unsafe fn convert(
        &self,
        a: Caller<'_>,
        id: LockId,
        h: At,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting {
        let c = a.counters;
        let (Some(s), Some(f)) = (h.fast_slot(), self.fast.as_deref()) else {
            // SAFETY: a handle of this table and its request (the contract).
            let outcome = unsafe {
                self.update(a, h, wake, |q, w| {
                    self.outside_now(q, id);
                    q.convert(r, to, may_wait, self.wait_die, wake_behind, w)
                })
            };
            return Converting::in_place(outcome, r, h.into());
        };
        // SAFETY: the caller's own granted request (the contract).
        let old = unsafe { r.get() };
        if old.mode() == Mode::IS && to == Mode::IX {
            if f.upgrade(s, old) {
                return Converting::in_place(Outcome::Granted, r, h.into());
            }
            self.after_fast_release(c, id, Mode::IX, wake);
        }
        // The caller's own node, linked nowhere.
        let n = nodes.take_for(c, old);
        // SAFETY: as above.
        if let Some(fh) = unsafe { holds::try_node(self, c, id, n, to, wake) } {
            return Converting {
                outcome: Outcome::Granted,
                req: n,
                head: fh.into(),
            };
        }
        let (mut q, p, _) = self.latched_head(a, id);
        // SAFETY: `n` is the caller's own node, linked nowhere.
        let outcome = unsafe { q.convert_outside(n, to, may_wait, self.wait_die, wake_behind, wake) };
        // SAFETY: chain heads live as long as the table.
        unsafe { &*p }.publish_waiters(&mut q, wake, self.sli, true);
        drop(q);
        match outcome {
            Outcome::Refused(_) => {
                // Never linked: reusable at once.
                nodes.put(n);
                Converting::in_place(outcome, r, h.into())
            }
            _ => Converting {
                outcome,
                req: n,
                head: At::head(p).into(),
            },
        }
    }

    #[inline]
    fn fast(&self) -> Option<&Fast> {
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

    /// A latch per lock either way: nothing gained by a batch.
    #[inline]
    fn releases_at_once(&self) -> bool {
        true
    }

    /// Always inlined: the commit's release loop takes every table kind's
    /// release, and left to itself the compiler puts this one out of
    /// line there once the spares' detach is in it (a call a lock).
    #[inline(always)]
    unsafe fn release(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        if h.fast_slot().is_some() {
            // A fast hold taken with a node (`lock`'s own are released by
            // `release_fast_hold`).
            // SAFETY: the caller's own live request (the contract).
            let q = unsafe { r.get() };
            holds::release_node(self, a.counters, h, q, wake);
            return;
        }
        // SAFETY: a handle of this table and its request (the contract).
        unsafe { self.update(a, h, wake, |q, w| q.release(r, w)) }
    }

    #[inline]
    unsafe fn release_or_inherit(
        &self,
        a: Caller<'_>,
        h: At,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        // SAFETY: a handle of this table and its request (the contract).
        unsafe { self.update(a, h, wake, |q, w| q.release_or_inherit(r, heat, w)) }
    }

    /// Passes a reclaimed request `r` on to the agent's next transaction
    /// again, without the latch, unless somebody waits for the lock. The
    /// owner's store of INHERITED and the waiter's store of `waiters` are
    /// each followed by a SeqCst fence before the other is read (Dekker;
    /// see [`Head::publish_waiters`]), so a waiter is never left behind an
    /// inherited request nobody will invalidate. The owner's half of it
    /// comes later: one fence after every lock of the commit is passed on,
    /// then [`LockTable::recheck_passed`] (`loom_reinherit.rs`, the third
    /// model). (An asymmetric fence, light here and `membarrier` on the
    /// waiter's side, was measured and rejected: every first waiter then
    /// pays a `membarrier`; MEASUREMENTS.md, "Figures that stood in doc
    /// comments".)
    #[inline]
    unsafe fn reinherit(&self, _a: Caller<'_>, h: At, r: ReqPtr, _wake: &mut Vec<ReqPtr>) -> Reinherit {
        // SAFETY: a handle of this table (the contract).
        let head = unsafe { self.head(h) };
        if head.waiters.load(Ordering::Relaxed) {
            return Reinherit::Declined;
        }
        // Release: pairs with the Acquire of an invalidator's CAS.
        // SAFETY: the caller's own live request (the contract).
        unsafe { r.get() }.status.store(INHERITED, Ordering::Release);
        Reinherit::Passed
    }

    /// The owner's look at `waiters` after passing locks on
    /// ([`LockTable::reinherit`]) and a SeqCst fence: if somebody waits
    /// now, the waiter may have missed our INHERITED, so publish the
    /// queue's waiters under the latch (which invalidates the request in
    /// the waiter's way).
    #[inline]
    unsafe fn recheck_passed(&self, a: Caller<'_>, heads: impl Iterator<Item = At>, wake: &mut Vec<ReqPtr>) {
        let mut fenced = false;
        for h in heads {
            if !fenced {
                fence(Ordering::SeqCst);
                fenced = true;
            }
            // SAFETY: a handle of this table (the contract).
            if unsafe { self.head(h) }.waiters.load(Ordering::Relaxed) {
                // SAFETY: as above.
                unsafe { self.update(a, h, wake, |_, _| ()) };
            }
        }
    }

    /// A fast hold never waits.
    unsafe fn cancel(&self, a: Caller<'_>, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        if h.fast_slot().is_some() {
            return Cancel::WasGranted;
        }
        // SAFETY: a handle of this table and its request (the contract).
        unsafe { self.update(a, h, wake, |q, w| q.cancel(r, w)) }
    }

    unsafe fn blockers(&self, a: Caller<'_>, h: At, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        if h.fast_slot().is_some() {
            return false;
        }
        // SAFETY: a handle of this table (the contract).
        unsafe { self.with(a.counters, h, |q| q.blockers(r, out)) }
    }

    /// The latch of `id`'s head, or of its bucket if no head is bound to it.
    fn null_section(&self, a: Caller<'_>, id: LockId) {
        let d = self.dir();
        let (bucket, t) = d.slot(id);
        let p = self.find(d, bucket, id.words(), t);
        if p.is_null() {
            drop(latch(&bucket.latch, a.counters));
        } else {
            // SAFETY: heads live as long as the table.
            drop(latch(&unsafe { &*p }.queue, a.counters));
        }
    }

    /// Each lock's queue is read under its head latch, and its fast holds
    /// with it, while the latch keeps its granted requests as they are
    /// (`Fast::fold_into`): each lock's entry is consistent, its holders
    /// compatible.
    fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        let fast = self.fast.as_deref();
        // The locks whose fast holds were folded under a head latch.
        let mut done = fast::Folded::default();
        // No growth meanwhile: it would relink the chains under the walk.
        let _grown = self.grown.lock();
        for b in self.dir().buckets.iter() {
            // Each bucket under its latch: no head leaves it or joins it
            // meanwhile, so each lock is seen once, at its one head.
            let _b = b.latch.lock();
            b.heads(|p| {
                // SAFETY: heads live as long as the table.
                let h = unsafe { &*p };
                let q = h.queue.lock();
                if !q.is_empty() {
                    let id = h.id();
                    let mut info = describe(&q, id, now_ns);
                    if let Some((f, s)) = fast.and_then(|f| Some((f, f.slot_of(id)?))) {
                        f.fold_into(s, id.words(), &mut info);
                        done.add(s, id.words());
                    }
                    out.push(info);
                }
            });
        }
        crate::fault::snapshot_between();
        // The fast holds of locks with no queued request: IS and IX, and S
        // on rows, which conflict with nothing listed.
        if let Some(f) = fast {
            f.snapshot_into(out, &done);
        }
    }

    /// `TableKind::LatchedHtm`'s.
    fn elision(&self) -> Option<heirloom_rtm::ElisionStats> {
        self.elision.as_ref().map(Elision::stats)
    }
}

impl<const SPARES: bool> FastTable for Latched<SPARES> {
    #[inline]
    fn fast_hold(&self, s: usize) -> At {
        At::fast(s)
    }

    #[inline]
    fn fast_slot(h: At) -> Option<usize> {
        h.fast_slot()
    }

    /// Grants what is clear now under the lock's head latch (see
    /// `fast.rs`, "On the latched table").
    #[cold]
    fn after_fast_release(&self, c: &AgentCounters, id: LockId, _mode: Mode, wake: &mut Vec<ReqPtr>) {
        // Exact: a waiter missed for a growth would wait for ever.
        let p = self.find_exact(c, id);
        if p.is_null() {
            // No head: nobody waits for the lock.
            return;
        }
        // SAFETY: chain heads live as long as the table.
        let head = unsafe { &*p };
        let mut q = latch(&head.queue, c);
        // Rebound meanwhile: the lock's queue emptied, nobody waits.
        if head.bound_to(id.words()) {
            q.recheck_inherited(wake);
            head.publish_waiters(&mut q, wake, self.sli, true);
        }
    }
}

impl<const SPARES: bool> Drop for Latched<SPARES> {
    fn drop(&mut self) {
        // Every head is in a bucket of the array now, or an agent's spare.
        let free = |p: *mut CachePadded<Head>| {
            // SAFETY: allocated with `Box` in `bind_slow`; the table is
            // being dropped, so nothing refers to the head any more.
            drop(unsafe { Box::from_raw(p) });
        };
        for b in self.dir().buckets.iter() {
            b.heads(free);
        }
        for s in self.spares.iter() {
            // SAFETY: the table is ours alone (`&mut self`).
            unsafe { s.with(|s| s.drain(..).for_each(|Spare(p)| free(p))) };
        }
        self.common.lock().drain(..).for_each(|Spare(p)| free(p));
        let now = self.dir.load(Ordering::Relaxed);
        let mut grown = self.grown.lock();
        for Retired(d) in grown.drain(..).chain([Retired(now)]) {
            // SAFETY: from `Box::into_raw` (`new` or `grow`), each once.
            drop(unsafe { Box::from_raw(d) });
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(not(heirloom_loom))]
    mod calm;
    #[cfg(not(heirloom_loom))]
    mod grow;
    #[cfg(heirloom_loom)]
    mod loom_fast;
    #[cfg(heirloom_loom)]
    mod loom_grow;
    #[cfg(heirloom_loom)]
    mod loom_reinherit;
    mod support;
    #[cfg(not(heirloom_loom))]
    mod switch;
}
