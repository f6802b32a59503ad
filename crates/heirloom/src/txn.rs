//! Transactions: hierarchical two-phase locking on an agent.
//!
//! `lock(id, mode)` walks the path from the root down to `id`. At each
//! ancestor it needs the intention mode of `mode` (IS for IS/S, IX for
//! IX/SIX/X); at `id` itself, `mode`. The transaction's lock cache answers
//! first: a level already held in a mode that covers what is needed costs no
//! lock-table operation, and an ancestor held in S/SIX (for shared requests)
//! or X (for any) covers the whole subtree, so nothing below it is locked.
//! A held lock that must become stronger is converted to the supremum of
//! the two modes (IX + S = SIX). Locks are released leaf to root at commit
//! or abort; dropping an unfinished transaction aborts it, which is also
//! what happens when a thread panics inside one.

use std::time::{Duration, Instant};

/// How often a waiter under a checking policy re-runs it without being woken.
const RECHECK: Duration = Duration::from_millis(20);

use crate::agent::{Agent, DEAD, Held, LIVE, PENDING, RECLAIMED};
use crate::deadlock;
use crate::error::{LockError, TxnId};
use crate::id::{Level, LockId};
use crate::inherit::{self, Inheritance};
use crate::manager::{ConflictPolicy, WaitInfo};
use crate::mode::Mode;
use crate::queue::{Cancel, Handoff, Outcome};
use crate::request::{CONVERTING, GRANTED, ReqPtr, WAITING};
use crate::sync::{Ordering, Wake, fence, wait_while, wake_all};
use crate::table::{HeadRef, Reinherit};

/// A transaction running on an [`Agent`]. Commit or abort it; dropping it
/// aborts it.
pub struct Transaction<'a> {
    agent: &'a mut Agent,
    id: TxnId,
    age: u64,
    /// The first concurrency error, after which only abort makes sense.
    doomed: Option<&'static str>,
    exclusive: bool,
    done: bool,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("id", &self.id)
            .field("locks", &self.agent.held.len())
            .finish()
    }
}

impl<'a> Transaction<'a> {
    pub(crate) fn begin(agent: &'a mut Agent, exclusive: bool, age: Option<u64>) -> Self {
        if exclusive {
            // The gate is closed by this agent and drained: enter directly.
            agent.shared.active.store(true, Ordering::Relaxed);
        } else {
            agent.lm.gate.enter(&agent.shared.active);
        }
        let id = agent.next_txn_id();
        let age = match age {
            Some(a) => a,
            // Relaxed: the clock only has to hand out distinct numbers.
            None if agent.lm.policy.uses_age() => agent.lm.clock.fetch_add(1, Ordering::Relaxed),
            None => 0,
        };
        agent.shared.counters.begun.bump();
        let mut t = Transaction {
            agent,
            id,
            age,
            doomed: None,
            exclusive,
            done: false,
        };
        if !t.agent.inherited.is_empty() {
            t.adopt_inherited();
        }
        t
    }

    /// Starts with the locks the agent's previous transaction passed on, in
    /// the lock cache as PENDING (not yet reclaimed).
    #[cold]
    fn adopt_inherited(&mut self) {
        let mut list = std::mem::take(&mut self.agent.inherited);
        for h in list.drain(..) {
            self.push_held(Held { state: PENDING, ..h });
        }
        self.agent.inherited = list; // empty, keeps its capacity
    }

    /// This transaction's id.
    pub fn id(&self) -> TxnId {
        self.id
    }

    /// The age used by wait-die and wound-wait (smaller is older; 0 under
    /// other policies).
    pub fn age(&self) -> u64 {
        self.age
    }

    /// Runs in exclusive mode (no other transaction is in progress).
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Number of locks explicitly held (ancestors included; inherited locks
    /// not used yet do not count).
    pub fn lock_count(&self) -> usize {
        self.agent
            .held
            .iter()
            .filter(|h| matches!(h.state, LIVE | RECLAIMED))
            .count()
    }

    /// The statistics of this transaction's agent so far (for callers that
    /// attribute lock manager events to their own calls, such as a time
    /// breakdown; reading them costs a few loads of the agent's own line).
    pub fn agent_stats(&self) -> crate::Stats {
        self.agent.stats()
    }

    /// The mode this transaction holds explicitly on `id`, if any.
    pub fn held_mode(&self, id: LockId) -> Option<Mode> {
        self.find(id)
            .map(|i| self.agent.held[i])
            .filter(|h| matches!(h.state, LIVE | RECLAIMED))
            .map(|h| h.mode)
    }

    /// Locks `id` in `mode`, taking intention locks on its ancestors first.
    /// Blocks according to the manager's conflict policy. After an error
    /// the transaction is doomed: further calls fail and commit aborts.
    #[inline]
    pub fn lock(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        if mode == Mode::NL {
            return Err(LockError::InvalidRequest {
                txn: self.id,
                lock: id,
                reason: "mode NL cannot be requested",
            });
        }
        self.check_alive()?;
        let path = id.path();
        let ids = path.as_slice();
        let last = ids.len() - 1;
        for (i, &lid) in ids.iter().enumerate() {
            self.agent.shared.counters.lock_requests.bump();
            let want = if i == last { mode } else { mode.intention() };
            match self.lookup(lid) {
                Some(k) => {
                    let c = &self.agent.shared.counters;
                    let held = self.agent.held[k].mode;
                    if i < last && held.covers_descendants(mode) {
                        c.cache_hits.bump();
                        return Ok(());
                    }
                    if held.covers(want) {
                        c.cache_hits.bump();
                        continue;
                    }
                    self.convert(k, held.join(want))?;
                }
                None => self.acquire(lid, want)?,
            }
        }
        Ok(())
    }

    /// Commits: releases every lock, leaf to root. Fails (and aborts) if the
    /// transaction is doomed by an earlier error.
    pub fn commit(mut self) -> Result<(), LockError> {
        match self.doomed {
            None => {
                self.finish(true);
                Ok(())
            }
            Some(cause) => {
                self.finish(false);
                Err(LockError::Doomed { txn: self.id, cause })
            }
        }
    }

    /// Aborts: releases every lock, leaf to root.
    pub fn abort(mut self) {
        self.finish(false);
    }

    #[inline]
    fn find(&self, id: LockId) -> Option<usize> {
        let held = &self.agent.held;
        if held.len() <= Agent::SCAN_LIMIT {
            held.iter().rposition(|h| h.id == id)
        } else {
            self.agent.index.get(&id).map(|&i| i as usize)
        }
    }

    /// The cache entry of `id` the transaction can use: a pending inherited
    /// lock is reclaimed here (one CAS); an invalidated one is dropped.
    #[inline]
    fn lookup(&mut self, id: LockId) -> Option<usize> {
        let k = self.find(id)?;
        match self.agent.held[k].state {
            LIVE | RECLAIMED => Some(k),
            PENDING => self.reclaim(k),
            _ => None,
        }
    }

    #[cold]
    fn reclaim(&mut self, k: usize) -> Option<usize> {
        let a = &mut *self.agent;
        let h = &mut a.held[k];
        let c = &a.shared.counters;
        if inherit::reclaim(h.req, self.id, self.age) {
            h.state = RECLAIMED;
            c.inherited_used.bump();
            c.table_ops_avoided.bump();
            Some(k)
        } else {
            // Invalidated: the invalidator unlinked it; the node is ours.
            h.state = DEAD;
            let r = h.req;
            a.nodes.give_back(r);
            c.inherited_invalidated.bump();
            None
        }
    }

    #[inline]
    fn push_held(&mut self, h: Held) {
        let a = &mut *self.agent;
        a.held.push(h);
        let n = a.held.len();
        if n > Agent::SCAN_LIMIT {
            if n == Agent::SCAN_LIMIT + 1 {
                for (i, x) in a.held.iter().enumerate() {
                    a.index.insert(x.id, i as u32);
                }
            } else {
                a.index.insert(h.id, (n - 1) as u32);
            }
        }
    }

    fn check_alive(&mut self) -> Result<(), LockError> {
        if let Some(cause) = self.doomed {
            return Err(LockError::Doomed { txn: self.id, cause });
        }
        if matches!(self.agent.lm.policy, ConflictPolicy::WoundWait)
            && let Some(by) = self.wounded_by()
        {
            self.agent.shared.counters.wounded.bump();
            return Err(self.doom(LockError::Wounded { txn: self.id, by }));
        }
        Ok(())
    }

    fn wounded_by(&self) -> Option<TxnId> {
        let s = &self.agent.shared;
        // Acquire: pairs with the Release store in `Inner::wound`, so that
        // `wounded_by` is the wounder's.
        (s.wounded.load(Ordering::Acquire) == self.id.0).then(|| TxnId(s.wounded_by.load(Ordering::Relaxed)))
    }

    fn doom(&mut self, e: LockError) -> LockError {
        self.doomed.get_or_insert(e.kind());
        e
    }

    fn may_wait(&self) -> bool {
        !matches!(self.agent.lm.policy, ConflictPolicy::NoWait)
    }

    #[inline]
    fn acquire(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        let (req, head) = self.link(id, mode)?;
        self.push_held(Held {
            id,
            mode,
            req,
            head,
            state: LIVE,
        });
        Ok(())
    }

    /// Links a new request of this transaction for `id` in `mode` and waits
    /// for it under the conflict policy. On error nothing is linked any more
    /// (a refused request never was; a failed wait was cancelled).
    #[inline]
    fn link(&mut self, id: LockId, mode: Mode) -> Result<(ReqPtr, HeadRef), LockError> {
        let may_wait = self.may_wait();
        let a = &mut *self.agent;
        let r = a.nodes.take();
        let q = r.get();
        q.txn.store(self.id.0, Ordering::Relaxed);
        q.ts.store(self.age, Ordering::Relaxed);
        let c = &a.shared.counters;
        c.table_ops.bump();
        let (out, head) = a.lm.table.acquire(c, id, r, mode, may_wait, &mut a.wake);
        wake_granted(&mut a.wake);
        match out {
            Outcome::Granted => a.shared.counters.immediate_grants.bump(),
            Outcome::Refused(b) => {
                // Not linked: straight back to the pool.
                a.shared.counters.would_block.bump();
                a.nodes.pool.push(r);
                return Err(self.doom(LockError::WouldBlock {
                    txn: self.id,
                    lock: id,
                    mode,
                    holder: b.txn,
                }));
            }
            Outcome::Waiting => {
                if let Err(e) = self.wait(head, r, id, mode) {
                    // `wait` cancelled the request.
                    self.agent.nodes.give_back(r);
                    return Err(self.doom(e));
                }
            }
        }
        Ok((r, head))
    }

    fn convert(&mut self, k: usize, to: Mode) -> Result<(), LockError> {
        if self.agent.lm.table.is_latch_free() {
            return self.convert_by_append(k, to);
        }
        let h = self.agent.held[k];
        let may_wait = self.may_wait();
        let a = &mut *self.agent;
        let c = &a.shared.counters;
        c.table_ops.bump();
        let out = a.lm.table.convert(c, h.head, h.req, to, may_wait, &mut a.wake);
        wake_granted(&mut a.wake);
        match out {
            Outcome::Granted => {
                c.immediate_grants.bump();
                self.agent.held[k].mode = to;
                Ok(())
            }
            Outcome::Refused(b) => {
                c.would_block.bump();
                Err(self.doom(LockError::WouldBlock {
                    txn: self.id,
                    lock: h.id,
                    mode: to,
                    holder: b.txn,
                }))
            }
            Outcome::Waiting => match self.wait(h.head, h.req, h.id, to) {
                Ok(()) => {
                    self.agent.held[k].mode = to;
                    Ok(())
                }
                // `wait` reverted the request to its old mode.
                Err(e) => Err(self.doom(e)),
            },
        }
    }

    /// A conversion on the latch-free table: append a request for `to`
    /// (requests of one transaction are never in each other's way); once it
    /// is granted, release the old one. Nothing between the two can
    /// conflict with the old mode then: it was all compatible with `to`.
    fn convert_by_append(&mut self, k: usize, to: Mode) -> Result<(), LockError> {
        let h = self.agent.held[k];
        // On error the old request stays, as a refused conversion keeps its mode.
        let (r, head) = self.link(h.id, to)?;
        let a = &mut *self.agent;
        let c = &a.shared.counters;
        c.table_ops.bump();
        a.lm.table.release(c, h.head, h.req, &mut a.wake);
        wake_granted(&mut a.wake);
        a.nodes.give_back(h.req);
        let e = &mut a.held[k];
        e.mode = to;
        e.req = r;
        e.head = head;
        // A reclaimed inherited request was replaced: the new one is the
        // transaction's own.
        e.state = LIVE;
        Ok(())
    }

    /// Waits until the linked request `r` is granted, applying the conflict
    /// policy. On error the request has been cancelled.
    #[cold]
    fn wait(&mut self, head: HeadRef, r: ReqPtr, lock: LockId, mode: Mode) -> Result<(), LockError> {
        let lm = self.agent.lm.clone();
        let shared = self.agent.shared.clone();
        let c = &shared.counters;
        c.waits.bump();
        let start = Instant::now();
        r.get().since.store(lm.now_ns(), Ordering::Relaxed);
        let info = WaitInfo {
            txn: self.id,
            head,
            req: r,
            lock,
            mode,
        };
        *shared.wait.lock() = Some(info);
        shared.waiting_req.store(r.key(), Ordering::Relaxed);
        // SeqCst fence between this store and the loads of `wounded` below;
        // pairs with the fence in `Inner::wound` (Dekker: either the wounder
        // sees our key and wakes us, or we see the wound before parking).
        fence(Ordering::SeqCst);
        let deadline = match lm.policy {
            ConflictPolicy::Timeout(d) => Some(start + d),
            _ => None,
        };
        let me = self.id.0;
        let result = loop {
            if r.get().status() == GRANTED {
                break Ok(());
            }
            if let Some(by) = self.wounded_by() {
                c.wounded.bump();
                break Err(LockError::Wounded { txn: self.id, by });
            }
            if let Err(e) = self.policy_check(info) {
                break Err(e);
            }
            let still_waiting = || {
                // Acquire: pairs with the granter's Release store of GRANTED.
                let s = r.get().status.load(Ordering::Acquire);
                (s == WAITING || s == CONVERTING) && shared.wounded.load(Ordering::Relaxed) != me
            };
            // Waiters are woken when what blocks them changes (a grant, a
            // conversion granted in front of them, a wound), and re-run the
            // policy then. As a safety net against a change no notification
            // covers, a checking policy also re-runs every RECHECK: a missed
            // edge then costs at most that long, never a hang.
            let until = match (deadline, lm.policy) {
                (Some(d), _) => Some(d),
                (None, ConflictPolicy::Detect | ConflictPolicy::WaitDie | ConflictPolicy::WoundWait) => {
                    Some(Instant::now() + RECHECK)
                }
                (None, _) => None,
            };
            if wait_while(r.key(), still_waiting, until) == Wake::TimedOut
                && deadline.is_some_and(|d| Instant::now() >= d)
                && r.get().status() != GRANTED
            {
                c.timeouts.bump();
                break Err(LockError::Timeout {
                    txn: self.id,
                    lock,
                    mode,
                    waited: start.elapsed(),
                });
            }
        };
        shared.waiting_req.store(0, Ordering::Relaxed);
        *shared.wait.lock() = None;
        match result {
            Ok(()) => Ok(()),
            Err(e) => {
                let a = &mut *self.agent;
                let cancel = lm.table.cancel(c, head, r, &mut a.wake);
                wake_granted(&mut a.wake);
                if cancel == Cancel::WasGranted {
                    // Granted just before the cancel: keep it. A wound is
                    // still reported at the next lock call.
                    return Ok(());
                }
                Err(e)
            }
        }
    }

    /// Applies the conflict policy to a blocked request; an error means the
    /// requester must give up.
    fn policy_check(&mut self, info: WaitInfo) -> Result<(), LockError> {
        let lm = &*self.agent.lm;
        let c = &self.agent.shared.counters;
        match lm.policy {
            ConflictPolicy::Detect => {
                if let Some(cycle) = deadlock::find_cycle(lm, c, info) {
                    c.deadlocks.bump();
                    return Err(LockError::Deadlock { victim: self.id, cycle });
                }
            }
            ConflictPolicy::WaitDie => {
                let b = &mut self.agent.blockers;
                b.clear();
                lm.table.blockers(c, info.head, info.req, b);
                if let Some(older) = b.iter().find(|b| b.ts < self.age) {
                    c.died.bump();
                    return Err(LockError::Died {
                        txn: self.id,
                        lock: info.lock,
                        mode: info.mode,
                        older: older.txn,
                    });
                }
            }
            ConflictPolicy::WoundWait => {
                let b = &mut self.agent.blockers;
                b.clear();
                lm.table.blockers(c, info.head, info.req, b);
                for y in b.iter().filter(|b| b.ts > self.age) {
                    lm.wound(y.agent, y.txn, self.id);
                }
            }
            ConflictPolicy::Timeout(_) | ConflictPolicy::NoWait => {}
        }
        Ok(())
    }

    /// Releases every lock, leaf to root, and ends the transaction. With
    /// inheritance on, eligible locks are passed to the agent's next
    /// transaction instead (see `inherit.rs`).
    fn finish(&mut self, committed: bool) {
        if self.done {
            return;
        }
        self.done = true;
        let a = &mut *self.agent;
        let lm = &*a.lm;
        let c = &a.shared.counters;
        let hot = match lm.inheritance {
            Inheritance::Off => None,
            Inheritance::On => Some(Some(lm.hot_threshold)),
            Inheritance::Always => Some(None),
        };
        debug_assert!(a.inherited.is_empty());
        while let Some(h) = a.held.pop() {
            match h.state {
                DEAD => continue,
                PENDING => {
                    // Not used: take it back and release it (short memory).
                    if !inherit::reclaim(h.req, self.id, self.age) {
                        c.inherited_invalidated.bump();
                        a.nodes.give_back(h.req);
                        continue;
                    }
                    c.inherited_discarded.bump();
                }
                _ => {
                    if let Some(hot) = hot
                        && h.id.level() != Level::Row
                        && h.mode.is_shared()
                    {
                        // Used after being inherited: pass it on again
                        // without the latch if nobody waits.
                        let again = if h.state == RECLAIMED {
                            lm.table.reinherit(c, h.head, h.req, &mut a.wake)
                        } else {
                            Reinherit::Declined
                        };
                        let passed = match again {
                            Reinherit::Passed => {
                                c.table_ops_avoided.bump();
                                true
                            }
                            Reinherit::Released => {
                                c.table_ops.bump();
                                false
                            }
                            Reinherit::Declined => {
                                c.table_ops.bump();
                                lm.table.release_or_inherit(c, h.head, h.req, hot, &mut a.wake) == Handoff::Inherited
                            }
                        };
                        wake_granted(&mut a.wake);
                        if passed {
                            c.inherited.bump();
                            a.inherited.push(Held { state: LIVE, ..h });
                        } else {
                            a.nodes.give_back(h.req);
                        }
                        continue;
                    }
                }
            }
            c.table_ops.bump();
            lm.table.release(c, h.head, h.req, &mut a.wake);
            wake_granted(&mut a.wake);
            a.nodes.give_back(h.req);
        }
        if !a.inherited.is_empty() {
            a.keep_rooted_inheritance(self.id, self.age);
        }
        a.index.clear();
        let c = &a.shared.counters;
        if committed {
            c.committed.bump();
        } else {
            c.aborted.bump();
        }
        a.lm.gate.leave(&a.shared.active);
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        self.finish(false);
    }
}

/// Wakes the owners of requests granted under a latch just released.
#[inline]
fn wake_granted(wake: &mut Vec<ReqPtr>) {
    if !wake.is_empty() {
        wake_all_slow(wake);
    }
}

#[cold]
fn wake_all_slow(wake: &mut Vec<ReqPtr>) {
    for r in wake.drain(..) {
        wake_all(r.key());
    }
}
