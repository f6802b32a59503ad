//! The conflict policies: what a blocked request's transaction does
//! (detection, wait-die, wound-wait, a timeout, no wait), how long a
//! request may wait, and when the policy is judged while it waits
//! ([`Cadence`]). The waiting itself (spin, park, wake, cancel) is
//! `txn/wait.rs`'s; the deadlock search is `deadlock.rs`'s; the policies'
//! public name is `policy.rs`'s.

use super::*;

/// When a waiting request's policy is judged (the cadence of PostgreSQL's
/// `deadlock_timeout`): `Detect` searches once the request has waited
/// `Builder::deadlock_timeout`; at zero, the default, as soon as the wait
/// begins, before the spin before the first park: a deadlock is found by
/// the member of its cycle that blocked last the moment it blocks, so no
/// member of a cycle spins or sleeps through it. Then it searches again
/// only after a wake-up that did not grant it, which is how a waiter
/// learns that a conversion was granted in front of it. Wait-die and
/// wound-wait look at once (a wound is best sent at once) and after every
/// such wake-up, never on a timer: every change of a waiter's edges wakes
/// it. `Timeout` and `NoWait` judge nothing.
#[derive(Debug)]
pub(super) struct Cadence {
    detect: bool,
    /// Detect: when the first search is due (`None`: never).
    first_search: Option<Instant>,
    searched: bool,
    /// A judgement is due.
    check: bool,
}

impl Cadence {
    pub(super) fn new(policy: ConflictPolicy, deadlock_timeout: Duration, start: Instant) -> Self {
        let detect = matches!(policy, ConflictPolicy::Detect);
        Cadence {
            detect,
            first_search: if detect {
                start.checked_add(deadlock_timeout)
            } else {
                None
            },
            searched: false,
            check: match policy {
                ConflictPolicy::Detect => deadlock_timeout.is_zero(),
                ConflictPolicy::WaitDie | ConflictPolicy::WoundWait => true,
                ConflictPolicy::Timeout(_) | ConflictPolicy::NoWait => false,
            },
        }
    }

    /// Is a judgement due now? Answering `true` counts the judgement as
    /// made.
    #[inline]
    pub(super) fn due(&mut self) -> bool {
        if !self.check {
            return false;
        }
        self.check = false;
        self.searched |= self.detect;
        true
    }

    /// Woken without the grant (or a spin ended by a notice): something in
    /// front of the request changed; judge again, unless the first search
    /// is still to come.
    #[inline]
    pub(super) fn woken(&mut self) {
        if !self.detect || self.searched {
            self.check = true;
        }
    }

    /// A timed park ended at `now`: the first search may be due.
    #[inline]
    pub(super) fn timed_out(&mut self, now: Instant) {
        if !self.searched && self.first_search.is_some_and(|t| now >= t) {
            self.check = true;
        }
    }

    /// Until when a park may last: the wait's `deadline`, or else the
    /// first search while it is still to come (`None`: no limit).
    #[inline]
    pub(super) fn until(&self, deadline: Option<Instant>) -> Option<Instant> {
        match (deadline, self.first_search) {
            (Some(d), _) => Some(d),
            (None, Some(t)) if !self.searched => Some(t),
            _ => None,
        }
    }
}

impl Transaction<'_> {
    /// How long the request being made may wait: the call's own timeout or
    /// the `Timeout` policy's, and the transaction's lock timeout, the
    /// shorter of them (`None`: no bound).
    pub(super) fn wait_limit(&self) -> Option<Duration> {
        let own = match self.agent.lm.policy {
            _ if self.agent.txn.call_timeout_ns != NO_BOUND => self.agent.txn.call_timeout_ns,
            ConflictPolicy::Timeout(d) => bound_ns(Some(d)),
            _ => NO_BOUND,
        };
        let ns = own.min(self.agent.txn.lock_timeout_ns);
        (ns != NO_BOUND).then(|| Duration::from_nanos(ns))
    }

    /// Applies the conflict policy to a blocked request; an error means the
    /// requester must give up.
    pub(super) fn policy_check(&mut self, info: WaitInfo) -> Result<(), LockError> {
        let lm = &*self.agent.lm;
        let c = &self.agent.shared.counters;
        if !matches!(lm.policy, ConflictPolicy::Detect) {
            // (The deadlock search has its own point, inside its mutexes.)
            fault::hit(Point::PolicyCheck);
        }
        match lm.policy {
            ConflictPolicy::Detect => {
                if let Some(cycle) = deadlock::find_cycle(lm, self.agent.shared.caller(), info) {
                    c.deadlocks.bump();
                    return Err(LockError::Deadlock {
                        victim: self.id(),
                        cycle,
                    });
                }
            }
            ConflictPolicy::WaitDie => {
                let b = &mut self.agent.scratch.blockers;
                b.clear();
                // SAFETY: our own request in flight, with its table's handle.
                unsafe { lm.table.blockers(self.agent.shared.caller(), info.head, info.req, b) };
                let (age, me) = (self.agent.txn.age, self.agent.shared.index);
                if let Some(older) = b.iter().find(|b| crate::queue::older(b.ts, b.agent, age, me)) {
                    c.died.bump();
                    return Err(LockError::Died {
                        txn: self.agent.txn.id,
                        lock: info.lock,
                        mode: info.mode,
                        older: older.txn,
                    });
                }
            }
            ConflictPolicy::WoundWait => {
                let b = &mut self.agent.scratch.blockers;
                b.clear();
                // SAFETY: our own request in flight, with its table's handle.
                unsafe { lm.table.blockers(self.agent.shared.caller(), info.head, info.req, b) };
                let (age, me) = (self.agent.txn.age, self.agent.shared.index);
                for y in b.iter().filter(|b| crate::queue::older(age, me, b.ts, b.agent)) {
                    lm.wound(y.agent, y.txn, self.agent.txn.id);
                }
            }
            ConflictPolicy::Timeout(_) | ConflictPolicy::NoWait => {}
        }
        Ok(())
    }
}
