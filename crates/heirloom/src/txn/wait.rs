//! Waiting: the mechanism. Whether a request may wait, the wait itself
//! (spun, then parked, woken by the grant, a wound, a notice or a timer),
//! and the cancel of a wait given up. The conflict policies judged while
//! it waits, and when, are `txn/policy.rs`'s.

use super::policy::Cadence;
use super::*;
use crate::request::Request;
use crate::shared::{AgentShared, ManagerState};

impl Transaction<'_> {
    /// A doomed transaction's requests fail. Under wound-wait a wound
    /// dooms its victim here, at its next lock call, only while the
    /// agents' threads fit the cores (a wounder's wait then idles a core,
    /// so the victim had better give way at once); with more threads than
    /// cores the wounder's core runs others meanwhile, and a wounded
    /// transaction dies only if it has to wait (`wait`), so one whose
    /// requests are granted at once goes on and may commit instead of
    /// being thrown away. Both are deadlock-free: every member of a cycle
    /// waits (the crate README, "Conflict policies").
    #[inline]
    pub(super) fn check_alive(&mut self) -> Result<(), LockError> {
        if !self.may_be_dead() {
            return Ok(());
        }
        self.check_alive_slow()
    }

    /// Whether [`Transaction::check_alive_slow`] has anything to look at:
    /// the transaction is doomed, or wound-wait may have wounded it.
    #[inline(always)]
    pub(super) fn may_be_dead(&self) -> bool {
        self.agent.txn.doomed.is_some() || self.agent.lm.wound_wait
    }

    #[cold]
    pub(super) fn check_alive_slow(&mut self) -> Result<(), LockError> {
        if let Some(cause) = self.agent.txn.doomed {
            return Err(LockError::Doomed { txn: self.id(), cause });
        }
        // The agent's own wound word first: the manager-wide agent count
        // is read only for a transaction that was wounded.
        if let Some(by) = self.wounded_by()
            && self.agent.lm.threads_fit_cores()
        {
            self.count_wound();
            return Err(self.doom(LockError::Wounded { txn: self.id(), by }));
        }
        Ok(())
    }

    /// Counts this transaction's death by a wound, and the time since the
    /// wound.
    #[cold]
    fn count_wound(&self) {
        let s = &self.agent.shared;
        s.counters.wounded.bump();
        // Relaxed: written before the wound's Release `fetch_max`, which
        // `wounded_by`'s Acquire load read.
        let at = s.wound.wounded_at.load(Ordering::Relaxed);
        s.counters.wound_delay_ns.add(self.agent.lm.now_ns().saturating_sub(at));
    }

    pub(super) fn wounded_by(&self) -> Option<TxnId> {
        let s = &self.agent.shared;
        // Acquire: pairs with the Release store in `ManagerState::wound`, so that
        // `wounded_by` is the wounder's.
        (s.wound.wounded.load(Ordering::Acquire) == self.id().0)
            .then(|| TxnId(s.wound.wounded_by.load(Ordering::Relaxed)))
    }

    pub(super) fn doom(&mut self, e: LockError) -> LockError {
        self.agent.txn.doomed.get_or_insert(e.kind());
        e
    }

    /// May the request being made wait (the call's `Wait`, else the
    /// policy)?
    #[inline]
    pub(super) fn may_wait(&self) -> bool {
        self.agent.txn.may_wait
    }

    /// The error of a request refused because it may not wait: under
    /// `Wait::Skip` `Busy` (the transaction goes on), else `WouldBlock`
    /// (the transaction is doomed).
    pub(super) fn refused(&mut self, lock: LockId, mode: Mode, holder: TxnId) -> LockError {
        let c = &self.agent.shared.counters;
        if self.agent.txn.skip {
            c.skipped.bump();
            return LockError::Busy {
                txn: self.id(),
                lock,
                mode,
                holder,
            };
        }
        c.would_block.bump();
        self.doom(LockError::WouldBlock {
            txn: self.id(),
            lock,
            mode,
            holder,
        })
    }

    /// The error of a request that wait-die's judgement in the table
    /// refused (`LockTable::judge_wait_die`): an older transaction holds or
    /// waits for the lock ahead of it; the transaction dies, as
    /// `policy_check` would have decided at the start of its wait.
    #[cold]
    pub(super) fn died(&mut self, lock: LockId, mode: Mode, older: TxnId) -> LockError {
        self.agent.shared.counters.died.bump();
        self.doom(LockError::Died {
            txn: self.id(),
            lock,
            mode,
            older,
        })
    }

    /// The error of a request the server table could not serve (its
    /// partition's server thread failed): not restartable, and the
    /// transaction is doomed.
    #[cold]
    pub(super) fn server_failed(&mut self, lock: LockId, partition: usize) -> LockError {
        self.doom(LockError::ServerFailed {
            txn: self.id(),
            lock,
            partition,
        })
    }

    /// Waits until the linked request `f.req` is granted, applying the
    /// conflict policy. On error the request has been cancelled (a
    /// conversion fell back to its old mode). While it runs the request is
    /// `Waiting::in_flight`, so a panic in here leaves nothing linked that
    /// the transaction's drop does not know about.
    ///
    /// The policy is judged when `Cadence` (`txn/policy.rs`) says; a
    /// wake-up that did not grant the request is how a waiter learns that
    /// something in front of it changed (a conversion granted ahead of it
    /// is a new waits-for edge; see `deadlock.rs` for why no other change
    /// needs a new search), and one that comes between the look and the
    /// park stops the park (`sync::NOTICES`; see "Waiting" in the crate
    /// README for the list and the tests that force each). The same look,
    /// without the thread, is `Transaction::poll_wait` (`txn/pending.rs`).
    #[cold]
    pub(super) fn wait(&mut self, f: InFlight, lock: LockId) -> Result<(), LockError> {
        if self.agent.waiting.in_flight.is_some() {
            // Left by a forgotten `LockFuture`: withdrawn now.
            self.agent.abandon_in_flight();
        }
        let mut w = self.wait_begin(f, lock);
        let (r, head) = (w.info.req, w.info.head);
        // SAFETY: in flight: this agent's own node (`ReqPtr` contract 1).
        let q = unsafe { r.get() };
        let me = self.id().0;
        // Spin before the first park (see `Builder::spin_before_park`):
        // not while agents (and lock servers) outnumber cores.
        let spin = self.agent.lm.spin_max_ns > 0 && self.agent.lm.threads_fit_cores();
        let mut spin_pending = spin;
        let mut misuse_checked = false;
        let result = loop {
            // Read before the look at our edges: a notice sent after it (a
            // new edge in front of us) stops the park below instead of
            // being lost (see `sync::NOTICES`).
            let seen = crate::sync::notices();
            if let Some(out) = self.wait_look(&mut w) {
                break out;
            }
            // A wait with a time limit ends by itself (as in release
            // builds); only an unbounded one would hang.
            if !misuse_checked && w.deadline.is_none() {
                misuse_checked = true;
                if let Err(e) = self.check_not_blocked_by_bound_thread(w.info) {
                    break Err(e);
                }
            }
            let a = &*self.agent;
            let still_waiting = || still_waiting(q, &a.shared, &a.lm, head, me, seen);
            if spin_pending {
                spin_pending = false;
                // A notice while spinning is a wake-up (see `Wake::Woken`
                // below); a grant or a wound the loop's top reads.
                if crate::sync::spin_while(still_waiting, a.waiting.spin_ns) {
                    w.cadence.woken();
                }
                continue;
            }
            let until = w.cadence.until(w.deadline);
            fault::before_park();
            match wait_while(r.key(), still_waiting, until) {
                Wake::TimedOut => {
                    if let Some(e) = self.wait_timed_out(&mut w, Instant::now()) {
                        break Err(e);
                    }
                }
                // Something in front of us changed (or a spurious wake-up).
                Wake::Woken => w.cadence.woken(),
            }
        };
        if spin {
            self.adapt_spin(w.start.elapsed());
        }
        self.wait_end(&w, result)
    }

    /// The start of a wait for the request `f` (linked, WAITING or
    /// CONVERTING): it becomes the agent's request in flight and the wait
    /// that deadlock searches and wounds see.
    pub(super) fn wait_begin(&mut self, f: InFlight, lock: LockId) -> WaitState {
        let (head, r, mode) = (f.head, f.req, f.mode);
        self.agent.waiting.in_flight = Some(f);
        self.agent.shared.counters.waits.bump();
        let start = Instant::now();
        // SAFETY: in flight: this agent's own node (`ReqPtr` contract 1).
        let q = unsafe { r.get() };
        q.since.store(self.agent.lm.now_ns(), Ordering::Relaxed);
        self.agent.waiting.waits += 1;
        let info = WaitInfo {
            txn: self.id(),
            head,
            req: r,
            lock,
            mode,
            seq: self.agent.waiting.waits,
            victim: false,
        };
        let shared = &self.agent.shared;
        crate::sharing::note(std::ptr::from_ref(&*shared.wait) as usize);
        *shared.wait.lock() = Some(info);
        shared.wound.waiting_req.store(r.key(), Ordering::Relaxed);
        // SeqCst fence between this store and the loads of `wounded` in
        // `wait_look`; pairs with the fence in `ManagerState::wound`
        // (Dekker: either the wounder sees our key and wakes us, or we see
        // the wound before parking).
        fence(Ordering::SeqCst);
        fault::hit(Point::Wait);
        // A time that overflows `Instant` (say `Duration::MAX`) means never.
        let deadline = self.wait_limit().and_then(|d| start.checked_add(d));
        WaitState {
            info,
            start,
            deadline,
            // When the conflict policy is judged (`txn/policy.rs`).
            cadence: Cadence::new(self.agent.lm.policy, self.agent.lm.deadlock_timeout, start),
        }
    }

    /// One look at a wait: `Some` once it is decided (granted, wounded,
    /// the table failed, or refused by the policy if a judgement was due).
    pub(super) fn wait_look(&mut self, w: &mut WaitState) -> Option<Result<(), LockError>> {
        // SAFETY: in flight: this agent's own node (`ReqPtr` contract 1).
        let q = unsafe { w.info.req.get() };
        if q.status() == GRANTED {
            return Some(Ok(()));
        }
        if let Some(by) = self.wounded_by() {
            self.count_wound();
            return Some(Err(LockError::Wounded { txn: self.id(), by }));
        }
        if let Some(partition) = self.agent.lm.table.failed(w.info.head) {
            return Some(Err(self.server_failed(w.info.lock, partition)));
        }
        if w.cadence.due()
            && let Err(e) = self.policy_check(w.info)
        {
            return Some(Err(e));
        }
        None
    }

    /// A timed wait ran out at `now`: the wait's own time limit (`Some`,
    /// the error, unless the request was granted meanwhile), or the first
    /// deadlock search's time.
    pub(super) fn wait_timed_out(&mut self, w: &mut WaitState, now: Instant) -> Option<LockError> {
        // SAFETY: in flight: this agent's own node (`ReqPtr` contract 1).
        let q = unsafe { w.info.req.get() };
        if w.deadline.is_some_and(|d| now >= d) && q.status() != GRANTED {
            self.agent.shared.counters.timeouts.bump();
            return Some(LockError::Timeout {
                txn: self.id(),
                lock: w.info.lock,
                mode: w.info.mode,
                waited: w.start.elapsed(),
            });
        }
        w.cadence.timed_out(now);
        None
    }

    /// The end of a wait decided as `result`: no longer seen as waiting;
    /// on error the request is cancelled (and the error stands unless the
    /// grant came first). The request is no longer in flight.
    pub(super) fn wait_end(&mut self, w: &WaitState, result: Result<(), LockError>) -> Result<(), LockError> {
        let shared = &self.agent.shared;
        shared.wound.waiting_req.store(0, Ordering::Relaxed);
        crate::sharing::note(std::ptr::from_ref(&*shared.wait) as usize);
        *shared.wait.lock() = None;
        let out = match result {
            Ok(()) => Ok(()),
            Err(e) => {
                // Decided here: if `cancel` itself failed, `finish` must not
                // cancel a second time.
                self.agent.waiting.in_flight = None;
                let a = &mut *self.agent;
                // SAFETY: our own request, linked where `head` says.
                let cancel = unsafe {
                    a.lm.table
                        .cancel(a.shared.caller(), w.info.head, w.info.req, &mut a.scratch.wake)
                };
                wake_granted(&mut a.scratch.wake);
                if cancel == Cancel::WasGranted {
                    // Granted just before the cancel: keep it (a wound
                    // dooms the next lock call or the next wait; see
                    // `check_alive`).
                    Ok(())
                } else {
                    Err(e)
                }
            }
        };
        self.agent.waiting.in_flight = None;
        out
    }

    /// After a wait that could spin: moves the agent's spin budget an
    /// eighth of the way towards twice this wait's length (so that most
    /// waits like it end while spinning), or towards the floor of a
    /// fiftieth of the bound if it was longer than the bound (spinning
    /// would not have spared its park). The adaptive mutexes' rule
    /// (glibc's `PTHREAD_MUTEX_ADAPTIVE_NP` keeps such an average of its
    /// spins), in time.
    pub(super) fn adapt_spin(&mut self, waited: Duration) {
        let max = self.agent.lm.spin_max_ns;
        let w = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        let floor = max / 50;
        let goal = if w <= max { w.saturating_mul(2).min(max) } else { floor };
        let b = self.agent.waiting.spin_ns;
        let next = if goal >= b {
            b + (goal - b) / 8
        } else {
            b - (b - goal) / 8
        };
        self.agent.waiting.spin_ns = next.clamp(floor, max);
    }

    /// The transactions in the way of our waiting request now (a fresh
    /// list: for the misuse checks, not the policies' hot loop).
    fn blockers_now(&self, info: WaitInfo) -> Vec<Blocker> {
        let mut b: Vec<Blocker> = Vec::new();
        // SAFETY: our own request in flight, with the handle its table gave.
        unsafe {
            self.agent
                .lm
                .table
                .blockers(self.agent.shared.caller(), info.head, info.req, &mut b)
        };
        b
    }

    /// Refuses a wait, in every build, if a transaction in the way of this
    /// one is bound to this thread (on another agent; see `misuse.rs`):
    /// nothing but this thread could end it. Binds this one here first (it
    /// waits here). Costs a thread-local read unless another agent is bound
    /// to this thread. Called only for a wait without a time limit.
    fn check_not_blocked_by_bound_thread(&mut self, info: WaitInfo) -> Result<(), LockError> {
        self.agent.bind_to_thread(true);
        if misuse::bound_count() <= 1 {
            return Ok(());
        }
        let token = misuse::thread_token();
        let me = self.agent.shared.index;
        let b = self.blockers_now(info);
        let reg = self.agent.lm.registry.read();
        let bound_here = b.iter().any(|b| {
            b.agent != me
                && reg
                    .get(b.agent)
                    .is_some_and(|a| a.bound_to.load(Ordering::Relaxed) == token)
        });
        drop(reg);
        if bound_here {
            return Err(LockError::InvalidRequest {
                txn: self.id(),
                lock: info.lock,
                reason: misuse::BLOCKED_BY_OWN_THREAD,
            });
        }
        Ok(())
    }
}

pub(super) fn bound_ns(d: Option<Duration>) -> u64 {
    d.map_or(NO_BOUND, |d| u64::try_from(d.as_nanos()).unwrap_or(NO_BOUND))
}

/// A wait in progress (`Transaction::wait_begin`): what the blocking loop
/// and the async poll (`txn/pending.rs`) carry between looks.
#[derive(Debug)]
pub(super) struct WaitState {
    pub(super) info: WaitInfo,
    pub(super) start: Instant,
    /// The wait's time limit (`None`: none).
    pub(super) deadline: Option<Instant>,
    pub(super) cadence: Cadence,
}

/// The park condition of a wait on request `q` (linked at `head`, of
/// transaction `me`) that looked when the notices were at `seen`: still
/// waiting, not wounded, no notice since, the table serving.
#[inline]
pub(super) fn still_waiting(
    q: &Request,
    shared: &AgentShared,
    lm: &ManagerState,
    head: Handle,
    me: u64,
    seen: u64,
) -> bool {
    // Acquire: pairs with the granter's Release store of GRANTED.
    let s = q.status.load(Ordering::Acquire);
    (s == WAITING || s == CONVERTING)
        && shared.wound.wounded.load(Ordering::Relaxed) != me
        && crate::sync::notices() == seen
        && lm.table.failed(head).is_none()
}
