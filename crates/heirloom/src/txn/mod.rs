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
//!
//! Files: this one holds the API and the lock cache; `acquire.rs` the
//! calls into the lock table, `escalate.rs` escalation and the lock-memory
//! cap, `wait.rs` waiting and `policy.rs` the conflict policies,
//! `pending.rs` the waits of `lock_async` that do not need the thread,
//! `finish.rs` commit, abort and the panic-safety argument.

use std::time::{Duration, Instant};

use crate::agent::{Agent, InFlight, NO_BOUND, TxnState};
use crate::cache::{DEAD, Held, LIVE, NO_HINT, PENDING, RECLAIMED};
use crate::deadlock;
use crate::error::{LockError, Restart, TxnId};
use crate::fault::{self, Point};
use crate::id::{Level, LockId, TableId};
use crate::inherit;
use crate::misuse;
use crate::mode::Mode;
use crate::policy::{ConflictPolicy, Wait};
use crate::queue::{Blocker, Cancel, Outcome};
use crate::request::{CONVERTING, GRANTED, ReqPtr, WAITING, wake_granted};
use crate::shared::{Route, WaitInfo};
use crate::sync::{Ordering, Wake, fence, wait_while};
use crate::table::{Acquiring, Handle, LockTable, fast};

mod acquire;
mod escalate;
mod finish;
mod pending;
mod policy;
mod release;
mod row_switch;
mod wait;
mod walk;

pub use pending::LockFuture;

use wait::bound_ns;

/// Where transactions begin: the agent's public entry points (here, not in
/// `agent.rs`, so that the agent's state does not depend on the
/// transaction that uses it).
impl Agent {
    /// Begins a transaction. Blocks while another agent runs a transaction in
    /// exclusive mode.
    #[inline]
    pub fn begin(&mut self) -> Transaction<'_> {
        Transaction::begin(self, false, None)
    }

    /// Begins a transaction as a retry of the agent's last one: under
    /// wait-die and wound-wait it takes that transaction's age, so a
    /// transaction the policy aborted runs again as old as it was and
    /// cannot starve (as [`Agent::run`] does). The engine says what is a
    /// retry (DBx1000 keeps a thread's timestamp until it takes a new
    /// query). No two live transactions share an age: only this agent's
    /// next one takes it. Counted in [`Stats::restarts`](crate::Stats::restarts);
    /// the agent's first transaction gets a new age.
    #[inline]
    pub fn retry(&mut self) -> Transaction<'_> {
        // 0: no transaction yet, or a policy without ages (ages start at
        // 1).
        let age = Some(self.txn.age).filter(|&a| a != 0);
        self.shared.counters.restarts.bump();
        Transaction::begin(self, false, age)
    }

    /// Begins restart number `restarts` (1 for the first) of the agent's
    /// last transaction as [`Agent::run`] restarts it, for an engine that
    /// runs its own retry loop: it keeps the transaction's age (as
    /// [`Agent::retry`]), backs off first unless the attempt that failed
    /// ran in exclusive mode (a yield for the first two restarts, then a
    /// random sleep growing to about 1 ms; none with
    /// [`Builder::restart_backoff`](crate::Builder::restart_backoff)
    /// `false`), and from [`Builder::max_restarts`](crate::Builder::max_restarts)
    /// restarts on runs it in exclusive mode: it waits until no other
    /// agent is inside a transaction, and no other begins until it ends
    /// (commit, abort or drop), so it cannot be aborted again by a
    /// conflict. Counted in [`Stats::restarts`](crate::Stats::restarts).
    pub fn restart(&mut self, restarts: u32) -> Transaction<'_> {
        // Counted first: an exclusive restart may wait long in the drain.
        self.shared.counters.restarts.bump();
        let max = self.lm.max_restarts;
        if restarts.saturating_sub(1) < max && self.lm.restart_backoff {
            self.backoff(restarts);
        }
        let exclusive = restarts >= max;
        if exclusive {
            self.close_gate();
        }
        let age = Some(self.txn.age).filter(|&a| a != 0);
        Transaction::begin(self, exclusive, age)
    }

    /// Runs `f` as a transaction and commits it; after a concurrency abort
    /// (deadlock, timeout, would-block, died, wounded) the transaction is
    /// rolled back and `f` runs again after a randomised backoff
    /// ([`Agent::restart`]). After `max_restarts` restarts it runs in
    /// exclusive mode: no other transaction is in progress, so it cannot
    /// be aborted again and livelock is impossible. An error that is not a
    /// concurrency abort (see [`Restart`]) aborts the transaction and is
    /// returned.
    ///
    /// Under wait-die and wound-wait a restarted transaction keeps its age.
    pub fn run<T, E, F>(&mut self, mut f: F) -> Result<T, E>
    where
        F: FnMut(&mut Transaction<'_>) -> Result<T, E>,
        E: Restart + From<LockError>,
    {
        let mut restarts = 0u32;
        loop {
            let mut txn = match restarts {
                0 if self.lm.max_restarts > 0 => Transaction::begin(self, false, None),
                // `max_restarts(0)`: every attempt runs alone, the first too.
                0 => {
                    self.close_gate();
                    Transaction::begin(self, true, None)
                }
                n => self.restart(n),
            };
            let err = match f(&mut txn) {
                Ok(v) => match txn.commit() {
                    Ok(()) => return Ok(v),
                    Err(e) => E::from(e),
                },
                Err(e) => {
                    txn.abort();
                    e
                }
            };
            if !err.lock_error().is_some_and(LockError::is_restartable) {
                return Err(err);
            }
            restarts = restarts.saturating_add(1);
        }
    }

    /// Closes the exclusive-mode gate for this agent's next transaction
    /// and waits until no other agent is inside one; the transaction's end
    /// opens it (`Agent::leave_gate`). Exclusive transactions run one at a
    /// time (`Gate::close` waits for the one before).
    fn close_gate(&mut self) {
        if self.open.is_some() {
            // A forgotten transaction ends first: it is inside the gate.
            self.finish_forgotten();
        }
        let lm = &self.lm;
        lm.gate.close();
        let me = self.shared.index;
        let others: Vec<_> = lm.registry.read().agents().filter(|a| a.index != me).cloned().collect();
        // Acquire: pairs with the Release store in `Gate::leave`.
        lm.gate
            .drain(|| others.iter().any(|a| a.active.load(Ordering::Acquire)));
        self.shared.counters.exclusive_runs.bump();
    }
}

/// A transaction running on an [`Agent`]. Commit or abort it; dropping it
/// aborts it.
///
/// Do not [`mem::forget`](std::mem::forget) a transaction: its locks stay
/// held (and other transactions wait for them) until its agent begins its
/// next transaction or is dropped, which then releases them as an abort
/// would and counts it in [`Stats::forgotten`](crate::Stats::forgotten).
pub struct Transaction<'a> {
    /// The transaction's own state lives in the agent (`Agent::txn`), so
    /// that a transaction is one pointer: `begin` returns it and `commit`
    /// takes it by value in a register, with nothing to copy.
    agent: &'a mut Agent,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("id", &self.id())
            .field("locks", &self.agent.cache.len())
            .finish()
    }
}

impl<'a> Transaction<'a> {
    #[inline]
    pub(crate) fn begin(agent: &'a mut Agent, exclusive: bool, age: Option<u64>) -> Self {
        if agent.open.is_some() {
            agent.finish_forgotten();
        }
        // Before `active` (Release): the row switch's grace period reads
        // it (`txn/row_switch.rs`).
        agent.shared.counters.begun.bump_release();
        if exclusive {
            // The gate is closed by this agent and drained: enter directly.
            agent.shared.active.store(true, Ordering::Relaxed);
            // As the gate's light fence (the row switch's grace period
            // pairs with it; rare: no need for the asymmetric form).
            fence(Ordering::SeqCst);
        } else {
            agent.lm.gate.enter(&agent.shared.active);
        }
        let id = agent.next_txn_id();
        let age = match age {
            Some(a) => a,
            // The time it begins, after the agent's previous age (ages:
            // `ConflictPolicy::WoundWait`); no shared line is written.
            None if agent.lm.policy.uses_age() => (agent.lm.now_ns() + 1).max(agent.txn.age + 1),
            None => 0,
        };
        agent.open = Some(id);
        // Bound to this thread: a blocking wait on it from here through
        // another agent is refused, not a hang (`misuse.rs`). Without a
        // lock table nothing ever waits.
        if !agent.lm.no_locks {
            agent.bind_to_thread(true);
        }
        agent.txn = TxnState {
            id,
            age,
            doomed: None,
            exclusive,
            done: false,
            may_wait: agent.lm.may_wait,
            skip: false,
            call_timeout_ns: NO_BOUND,
            lock_timeout_ns: NO_BOUND,
        };
        agent.cache.forget_hints();
        let mut t = Transaction { agent };
        if !t.agent.inheritance.list.is_empty() {
            t.adopt_inherited();
        }
        t
    }

    /// Starts with the locks the agent's previous transaction passed on, in
    /// the lock cache as PENDING (not yet reclaimed).
    #[inline]
    fn adopt_inherited(&mut self) {
        let a = &mut *self.agent;
        a.inherited_root_first();
        a.cache.adopt(&mut a.inheritance.list);
    }

    /// This transaction's id.
    pub fn id(&self) -> TxnId {
        self.agent.txn.id
    }

    /// The age used by wait-die and wound-wait (smaller is older; 0 under
    /// other policies).
    pub fn age(&self) -> u64 {
        self.agent.txn.age
    }

    /// Runs in exclusive mode (no other transaction is in progress).
    pub fn is_exclusive(&self) -> bool {
        self.agent.txn.exclusive
    }

    /// Number of locks explicitly held (ancestors included; inherited locks
    /// not used yet do not count).
    pub fn lock_count(&self) -> usize {
        self.agent
            .cache
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

    /// [`Agent::bind_to_thread`] on this transaction's agent, for an
    /// interface that moves a bound transaction to the thread of its next
    /// call (the C interface).
    #[doc(hidden)]
    pub fn bind_to_thread(&self, bound: bool) {
        self.agent.bind_to_thread(bound);
    }

    /// The mode this transaction holds explicitly on `id`, if any.
    pub fn held_mode(&self, id: LockId) -> Option<Mode> {
        self.find(id)
            .map(|i| self.agent.cache[i])
            .filter(|h| matches!(h.state, LIVE | RECLAIMED))
            .map(|h| h.mode)
    }

    /// Locks `id` in `mode`, taking intention locks on its ancestors first
    /// (none with `Builder::intention_locks(false)`). Blocks according to
    /// the manager's conflict policy. After an error
    /// the transaction is doomed: further calls fail and commit aborts.
    // Always inlined: its own path is a few tests and one call on (the
    // walk, the hinted leaf or the lock alone), which as a function of its
    // own would cost a frame (`scripts/callgrind.sh`).
    #[inline(always)]
    pub fn lock(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        if mode == Mode::NL {
            return Err(LockError::InvalidRequest {
                txn: self.id(),
                lock: id,
                reason: "mode NL cannot be requested",
            });
        }
        if self.may_be_dead() {
            return self.lock_checked(id, mode);
        }
        self.route(id, mode)
    }

    /// `lock` for a transaction that may be doomed or wounded: the check
    /// out of line, so that `lock`'s own path only calls on.
    #[cold]
    #[inline(never)]
    fn lock_checked(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        self.check_alive_slow()?;
        self.route(id, mode)
    }

    /// `lock`'s request on the way the manager's configuration takes.
    #[inline(always)]
    fn route(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        match self.agent.lm.route {
            Route::Walk => self.lock_path(id, mode),
            Route::Alone => self.lock_alone(id, mode),
            Route::Special => self.lock_special(id, mode),
        }
    }

    /// `lock` under `TableKind::NoLocking` or with escalation or a lock-memory
    /// cap configured (`ManagerState::special`): the hot path pays one test for
    /// all of them.
    #[cold]
    fn lock_special(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        if self.agent.lm.no_locks {
            return self.no_lock(id);
        }
        // Under a lock-memory cap: room for every level, and one more for a
        // conversion's replacement request (the latch-free table).
        self.make_room(id, self.path_of(id).as_slice().len() + 1)?;
        let before = self.agent.cache.len();
        let r = if self.agent.lm.flat {
            self.lock_alone(id, mode)
        } else {
            self.lock_path(id, mode)
        };
        self.after_new_locks(before);
        r?;
        if self.agent.limits.escalate_due.is_some() {
            self.escalate_due()?;
        }
        Ok(())
    }

    /// Escalation bookkeeping for the cache entries pushed since `before`
    /// (row and page locks count under their table).
    fn after_new_locks(&mut self, before: usize) {
        let a = &mut *self.agent;
        if a.lm.escalate_after == 0 {
            return;
        }
        for k in before..a.cache.len() {
            let id = a.cache[k].id;
            if id.level() >= Level::Page {
                a.count_below(id);
            }
        }
    }

    /// Locks `id` in `mode` as [`Transaction::lock`] does, but waits as
    /// `wait` says instead of as the manager's policy says (every level of
    /// the path: under [`Wait::Skip`] a busy ancestor is skipped too, and
    /// the ancestors already granted stay held).
    ///
    /// ```
    /// use heirloom::{LockError, LockId, LockManager, Mode, TableId, Wait};
    /// use std::time::Duration;
    /// const QUEUE: TableId = TableId::new(0, 1);
    /// let lm = LockManager::default();
    /// let (mut a, mut b) = (lm.agent(), lm.agent());
    /// let mut ta = a.begin();
    /// ta.lock(LockId::row(QUEUE, 1), Mode::X)?;
    /// let mut tb = b.begin();
    /// // SKIP LOCKED: row 1 is taken, so take row 2; tb goes on.
    /// assert!(!tb.try_lock(LockId::row(QUEUE, 1), Mode::X)?);
    /// assert!(tb.try_lock(LockId::row(QUEUE, 2), Mode::X)?);
    /// // A timeout for this call only.
    /// let e = tb.lock_with(LockId::row(QUEUE, 1), Mode::S, Wait::Timeout(Duration::from_millis(1)));
    /// assert!(matches!(e, Err(LockError::Timeout { .. })));
    /// # Ok::<(), LockError>(())
    /// ```
    pub fn lock_with(&mut self, id: LockId, mode: Mode, wait: Wait) -> Result<(), LockError> {
        let saved = self.apply_wait(wait);
        let r = self.lock(id, mode);
        self.restore_wait(saved);
        r
    }

    /// Makes the calls that follow wait as `wait` says; returns what
    /// [`Transaction::restore_wait`] puts back.
    fn apply_wait(&mut self, wait: Wait) -> (bool, bool, u64) {
        let policy_may_wait = self.agent.lm.may_wait;
        let t = &mut self.agent.txn;
        let saved = (t.may_wait, t.skip, t.call_timeout_ns);
        (t.may_wait, t.skip, t.call_timeout_ns) = match wait {
            Wait::Policy => (policy_may_wait, false, NO_BOUND),
            Wait::Timeout(d) => (true, false, bound_ns(Some(d))),
            Wait::NoWait => (false, false, NO_BOUND),
            Wait::Skip => (false, true, NO_BOUND),
        };
        saved
    }

    fn restore_wait(&mut self, saved: (bool, bool, u64)) {
        let t = &mut self.agent.txn;
        (t.may_wait, t.skip, t.call_timeout_ns) = saved;
    }

    /// Skip-locked: locks `id` in `mode` if that needs no wait and returns
    /// `true`, or returns `false` at once and goes on without the lock (the
    /// transaction is not doomed; counted in `Stats::skipped`).
    /// [`Transaction::lock_with`] with [`Wait::Skip`].
    pub fn try_lock(&mut self, id: LockId, mode: Mode) -> Result<bool, LockError> {
        match self.lock_with(id, mode, Wait::Skip) {
            Ok(()) => Ok(true),
            Err(LockError::Busy { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Bounds every later wait of this transaction (SQL's `SET
    /// lock_timeout`): a request that waits longer fails with
    /// [`LockError::Timeout`], whatever the policy; with the `Timeout`
    /// policy or [`Wait::Timeout`] the shorter bound wins. `None` (the
    /// default) removes the bound.
    pub fn set_lock_timeout(&mut self, timeout: Option<Duration>) {
        self.agent.txn.lock_timeout_ns = bound_ns(timeout);
    }

    /// The bound set by [`Transaction::set_lock_timeout`].
    pub fn lock_timeout(&self) -> Option<Duration> {
        (self.agent.txn.lock_timeout_ns != NO_BOUND).then(|| Duration::from_nanos(self.agent.txn.lock_timeout_ns))
    }

    /// Releases `id` before the transaction ends (read committed, cursor
    /// stability, index-node or metadata locks): two-phase locking is the
    /// caller's to keep or give up. Refused with
    /// [`LockError::ChildrenHeld`] while a descendant is held (release
    /// those first) and [`LockError::NotHeld`] for a lock this transaction
    /// does not hold explicitly (never taken, implied by an ancestor, or
    /// passed on by inheritance and not used); neither dooms the
    /// transaction. A lock released early is not passed on to the agent's
    /// next transaction. The lock cache forgets it: locking it again is a
    /// new request.
    ///
    /// ```
    /// use heirloom::{LockError, LockId, LockManager, Mode, TableId};
    /// const T: TableId = TableId::new(0, 1);
    /// let lm = LockManager::default();
    /// let mut agent = lm.agent();
    /// let mut txn = agent.begin();
    /// txn.lock(LockId::row(T, 1), Mode::S)?;
    /// assert!(matches!(txn.unlock(LockId::table(T)), Err(LockError::ChildrenHeld { .. })));
    /// txn.unlock(LockId::row(T, 1))?; // cursor stability: done with the row
    /// assert_eq!(txn.held_mode(LockId::row(T, 1)), None);
    /// txn.commit()?;
    /// # Ok::<(), LockError>(())
    /// ```
    pub fn unlock(&mut self, id: LockId) -> Result<(), LockError> {
        self.check_alive()?;
        if self.agent.lm.no_locks {
            return Ok(());
        }
        let held = |h: &Held| matches!(h.state, LIVE | RECLAIMED);
        let Some(k) = self.find(id).filter(|&k| held(&self.agent.cache[k])) else {
            return Err(LockError::NotHeld {
                txn: self.id(),
                lock: id,
            });
        };
        // Without intention locks no lock depends on another.
        if !self.agent.lm.flat
            && let Some(child) = self.agent.cache.iter().find(|h| held(h) && id.is_ancestor_of(&h.id))
        {
            return Err(LockError::ChildrenHeld {
                txn: self.id(),
                lock: id,
                child: child.id,
            });
        }
        let a = &mut *self.agent;
        let h = a.cache.remove(k);
        if a.lm.escalate_after != 0
            && h.id.level() >= Level::Page
            && let Some(t) = h.id.table_id()
        {
            a.forget_below(t, 1);
        }
        a.shared.counters.unlocks.bump();
        a.release_now(h);
        if !a.releases.superseded.is_empty() {
            a.release_superseded(Some(h.id));
        }
        Ok(())
    }

    /// Takes X on this transaction's own lock, [`LockId::transaction`] of
    /// its id, until it ends, so that others can wait for it to end with
    /// [`Transaction::wait_for_txn`] (PostgreSQL's `XactLockTableInsert`,
    /// which engines do when a transaction first writes a row version).
    pub fn publish_id(&mut self) -> Result<(), LockError> {
        self.lock(LockId::transaction(self.id()), Mode::X)
    }

    /// Waits until transaction `other` ends, if it published its id
    /// ([`Transaction::publish_id`]); returns at once if it did not or has
    /// ended (PostgreSQL's `XactLockTableWait`, for row-version conflicts).
    /// The wait is an S request on `other`'s transaction lock, released as
    /// soon as it is granted, so deadlock detection and every policy see
    /// it; `wait` says how long to wait, as for
    /// [`Transaction::lock_with`]. Counted in `Stats::txn_waits`.
    ///
    /// ```
    /// use heirloom::{LockId, LockManager, Mode, TableId, Wait};
    /// let lm = LockManager::default();
    /// let (mut a, mut b) = (lm.agent(), lm.agent());
    /// let mut writer = a.begin();
    /// writer.publish_id()?;
    /// let writer_id = writer.id();
    /// let mut reader = b.begin();
    /// assert!(!reader.try_wait_for_txn(writer_id)?, "still running");
    /// writer.commit()?;
    /// reader.wait_for_txn(writer_id, Wait::Policy)?; // ended: at once
    /// # Ok::<(), heirloom::LockError>(())
    /// ```
    pub fn wait_for_txn(&mut self, other: TxnId, wait: Wait) -> Result<(), LockError> {
        let id = self.txn_wait_begins(other)?;
        self.lock_with(id, Mode::S, wait)?;
        self.txn_wait_ends(id)
    }

    /// The lock a wait for `other` to end requests, counted
    /// (`wait_for_txn`, `wait_for_txn_async`).
    pub(super) fn txn_wait_begins(&mut self, other: TxnId) -> Result<LockId, LockError> {
        let id = LockId::transaction(other);
        if other == self.id() {
            return Err(LockError::InvalidRequest {
                txn: self.id(),
                lock: id,
                reason: "a transaction cannot wait for itself",
            });
        }
        self.agent.shared.counters.txn_waits.bump();
        Ok(id)
    }

    /// A wait for another transaction's end was granted: its S on the
    /// transaction lock `id` goes at once.
    pub(super) fn txn_wait_ends(&mut self, id: LockId) -> Result<(), LockError> {
        if self.agent.lm.no_locks {
            return Ok(());
        }
        self.unlock(id)
    }

    /// Has transaction `other` ended (or never published its id)? Does not
    /// wait: [`Transaction::wait_for_txn`] with [`Wait::Skip`], as a
    /// `bool`.
    pub fn try_wait_for_txn(&mut self, other: TxnId) -> Result<bool, LockError> {
        match self.wait_for_txn(other, Wait::Skip) {
            Ok(()) => Ok(true),
            Err(LockError::Busy { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The locks a request for `id` takes, root first: its path, or `id`
    /// alone without intention locks (`Builder::intention_locks`).
    #[inline]
    fn path_of(&self, id: LockId) -> crate::id::Path {
        if self.agent.lm.flat { id.alone() } else { id.path() }
    }

    /// `TableKind::NoLocking`: the request is counted (with its ancestors, as
    /// `lock` counts them) and nothing else happens.
    #[cold]
    fn no_lock(&mut self, id: LockId) -> Result<(), LockError> {
        let n = self.path_of(id).as_slice().len() as u64;
        self.agent.shared.counters.lock_requests.add(n);
        Ok(())
    }

    /// Locks every `(id, mode)` of `reqs`, as [`Transaction::lock`] on each
    /// would, handing the lock manager all requests of one level (the
    /// database, then tables, pages, rows) in one call: on the server table
    /// one message per partition instead of one per lock, on the global
    /// table one take of its latch, on the others a loop. The lock cache
    /// answers first, as for `lock`. A request that cannot be granted at
    /// once is then made on its own and waits under the conflict policy
    /// (under no-wait it fails), so waiting, deadlock handling and fairness
    /// are exactly those of `lock`. On error the transaction is doomed, and
    /// the locks granted so far stay held until it ends.
    pub fn lock_all(&mut self, reqs: &[(LockId, Mode)]) -> Result<(), LockError> {
        if let Some(&(lock, _)) = reqs.iter().find(|r| r.1 == Mode::NL) {
            return Err(LockError::InvalidRequest {
                txn: self.id(),
                lock,
                reason: "mode NL cannot be requested",
            });
        }
        self.check_alive()?;
        if self.agent.lm.special {
            if self.agent.lm.no_locks {
                return reqs.iter().try_for_each(|&(id, _)| self.no_lock(id));
            }
            if let Some(&(first, _)) = reqs.first() {
                let need: usize = reqs.iter().map(|r| self.path_of(r.0).as_slice().len()).sum();
                self.make_room(first, need + 1)?;
            }
        }
        let before = self.agent.cache.len();
        let mut batch = std::mem::take(&mut self.agent.scratch.acquiring);
        let mut done = std::mem::take(&mut self.agent.scratch.covered);
        done.clear();
        done.resize(reqs.len(), false);
        let mut paths = std::mem::take(&mut self.agent.scratch.paths);
        paths.clear();
        paths.extend(reqs.iter().map(|r| self.path_of(r.0)));
        let out =
            (0..crate::id::MAX_DEPTH).try_for_each(|depth| self.lock_level(reqs, &paths, depth, &mut batch, &mut done));
        batch.clear();
        self.agent.scratch.acquiring = batch;
        self.agent.scratch.covered = done;
        self.agent.scratch.paths = paths;
        if self.agent.lm.special {
            self.after_new_locks(before);
        }
        out?;
        if self.agent.limits.escalate_due.is_some() {
            self.escalate_due()?;
        }
        Ok(())
    }

    /// [`Transaction::lock_all`] at one depth of the lock hierarchy.
    /// `done[i]`: request `i` is complete (an ancestor taken at an earlier
    /// depth covers its subtree).
    fn lock_level(
        &mut self,
        reqs: &[(LockId, Mode)],
        paths: &[crate::id::Path],
        depth: usize,
        batch: &mut Vec<Acquiring>,
        done: &mut [bool],
    ) -> Result<(), LockError> {
        batch.clear();
        // The lock and mode just handled at this depth: requests in a row
        // under one parent (the usual batch) ask for it again and again.
        let mut last: Option<(LockId, Mode)> = None;
        for (i, &(_, mode)) in reqs.iter().enumerate() {
            if done[i] {
                continue;
            }
            let ids = paths[i].as_slice();
            let Some(&lid) = ids.get(depth) else { continue };
            // The parent, taken at the depth before, may cover the subtree
            // (an ancestor above it that did was found at its own depth).
            if depth > 0 {
                let parent = ids[depth - 1];
                let covers = self
                    .find(parent)
                    .map(|k| self.agent.cache[k])
                    .is_some_and(|h| matches!(h.state, LIVE | RECLAIMED) && h.mode.covers_descendants(mode));
                if covers {
                    done[i] = true;
                    continue;
                }
            }
            self.agent.shared.counters.lock_requests.bump();
            let want = if depth == ids.len() - 1 { mode } else { mode.intention() };
            if last == Some((lid, want)) {
                self.agent.shared.counters.cache_hits.bump();
                continue;
            }
            last = Some((lid, want));
            match self.lookup(lid) {
                Some(k) => {
                    let held = self.agent.cache[k].mode;
                    if held.covers(want) {
                        self.agent.shared.counters.cache_hits.bump();
                    } else if let Err(e) = self.convert(k, held.join(want)) {
                        // The nodes taken for this level go back unused.
                        for it in batch.drain(..) {
                            self.agent.nodes.put(it.req);
                        }
                        return Err(e);
                    }
                }
                None => batch.push(Acquiring {
                    id: lid,
                    req: self.agent.nodes.take(&self.agent.shared.counters),
                    mode: want,
                    out: Outcome::Granted,
                    head: Handle(0),
                }),
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        // One request per lock: join the modes asked for the same lock.
        batch.sort_unstable_by_key(|it| it.id);
        let mut w = 0;
        for r in 1..batch.len() {
            if batch[r].id == batch[w].id {
                batch[w].mode = batch[w].mode.join(batch[r].mode);
                let spare = batch[r].req;
                self.agent.nodes.put(spare);
            } else {
                w += 1;
                batch[w] = batch[r];
            }
        }
        batch.truncate(w + 1);
        let a = &mut *self.agent;
        for it in batch.iter() {
            // SAFETY: just taken from this agent's pool (`ReqPtr` contract 1).
            let q = unsafe { it.req.get() };
            q.txn.store(a.txn.id.0, Ordering::Relaxed);
            q.ts.store(a.txn.age, Ordering::Relaxed);
        }
        let c = &a.shared.counters;
        for it in batch.iter() {
            c.table_op(it.id.level());
        }
        let before = if a.lm.lock_classes { c.contention() } else { 0 };
        // SAFETY: the agent's own nodes, linked nowhere (the contract on
        // `Table`).
        unsafe { a.lm.table.acquire_batch(a.shared.caller(), batch, &mut a.scratch.wake) };
        // One batch, one verdict: hot if any of it met contention.
        let hot = c.contention() != before;
        if a.lm.lock_classes {
            for it in batch.iter() {
                c.classify(it.id.level() == Level::Row, it.mode.is_shared(), hot);
            }
        }
        wake_granted(&mut a.scratch.wake);
        let mut first_refused = None;
        let mut failed = None;
        for it in batch.iter_mut() {
            match it.out {
                Outcome::Granted => {
                    let c = &self.agent.shared.counters;
                    c.immediate_grants.bump();
                    if it.head.is_fast() {
                        c.fast_ops.bump();
                    }
                    self.push_held(Held::live(it.id, it.mode, it.req, it.head));
                }
                Outcome::Refused(b) => {
                    // Not left linked (the swap-append table withdrew it):
                    // given back, and asked again below.
                    self.agent.nodes.give_back_refused(it.req);
                    first_refused.get_or_insert(b);
                    it.out = Outcome::Waiting; // marks it for the second pass
                }
                Outcome::Failed(partition) => {
                    // Never linked: given back.
                    self.agent.nodes.give_back_refused(it.req);
                    failed.get_or_insert((it.id, partition));
                }
                Outcome::Waiting => unreachable!("a try-acquisition waits"),
            }
        }
        if let Some((lock, partition)) = failed {
            return Err(self.server_failed(lock, partition));
        }
        let Some(b) = first_refused else { return Ok(()) };
        if !self.may_wait() {
            let it = batch.iter().find(|it| matches!(it.out, Outcome::Waiting)).copied();
            let (lock, mode) = it.map_or((LockId::database(0), Mode::NL), |it| (it.id, it.mode));
            return Err(self.refused(lock, mode, b.txn));
        }
        for it in batch.iter().filter(|it| matches!(it.out, Outcome::Waiting)) {
            self.acquire(it.id, it.mode)?;
        }
        Ok(())
    }

    /// The kind of lock table this transaction's manager uses.
    pub fn table_kind(&self) -> crate::TableKind {
        self.agent.lm.kind
    }

    /// The agent the transaction runs on (for the crate's own hooks,
    /// `probe.rs`).
    pub(crate) fn agent_mut(&mut self) -> &mut Agent {
        self.agent
    }

    /// Commits: releases every lock, leaf to root. Fails (and aborts) if the
    /// transaction is doomed by an earlier error.
    pub fn commit(mut self) -> Result<(), LockError> {
        match self.agent.txn.doomed {
            None => {
                self.finish(true);
                Ok(())
            }
            Some(cause) => {
                self.finish(false);
                Err(LockError::Doomed { txn: self.id(), cause })
            }
        }
    }

    /// Aborts: releases every lock, leaf to root.
    pub fn abort(mut self) {
        self.finish(false);
    }

    #[inline(always)]
    fn find(&self, id: LockId) -> Option<usize> {
        self.agent.cache.find(id)
    }

    /// The cache entry of `id` the transaction can use: a pending inherited
    /// lock is reclaimed here (one CAS); an invalidated one is dropped.
    /// Always inlined: left to the compiler, the walk called it
    /// (`scripts/callgrind.sh`).
    #[inline(always)]
    fn lookup(&mut self, id: LockId) -> Option<usize> {
        let k = self.find(id)?;
        self.usable(k)
    }

    /// [`Transaction::lookup`] for an ancestor on a lock's path
    /// (`LockCache::find_ancestor`).
    #[inline]
    fn lookup_ancestor(&mut self, id: LockId) -> Option<usize> {
        let k = self.agent.cache.find_ancestor(id)?;
        self.usable(k)
    }

    /// Entry `k`, if the transaction can use it: a pending inherited lock
    /// is reclaimed here (one CAS); an invalidated one is dropped.
    #[inline]
    fn usable(&mut self, k: usize) -> Option<usize> {
        match self.agent.cache[k].state {
            LIVE | RECLAIMED => Some(k),
            PENDING => self.reclaim(k),
            _ => None,
        }
    }

    #[inline]
    fn reclaim(&mut self, k: usize) -> Option<usize> {
        let a = &mut *self.agent;
        let h = &mut a.cache[k];
        let c = &a.shared.counters;
        // SAFETY: a pending entry of this agent's cache: its own node
        // (`ReqPtr` contract 1).
        if inherit::reclaim(unsafe { h.req.get() }, a.txn.id, a.txn.age) {
            h.state = RECLAIMED;
            h.idle = 0;
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

    #[inline(always)]
    fn push_held(&mut self, h: Held) {
        self.agent.cache.push(h);
    }
}

#[cfg(all(test, not(heirloom_loom)))]
pub(crate) mod tests {
    pub(crate) mod common;
    mod hinted_leaf;
    mod lost_notice;
    mod one_victim;
    mod panic_safety;
    mod reclaimed_ahead;
    mod server_failure;
    mod spin_by_cores;
    mod wound_dooms_a_wait;
}
