//! Finishing: commit and abort release every lock leaf to root, passing
//! hot ones on (SLI); a transaction dropped unfinished aborts.
//!
//! # Panic safety
//!
//! Every request this transaction has linked is known to its agent at every
//! instant: granted ones are in the lock cache (`Agent::cache`), and the one
//! it waits for is `Waiting::in_flight` from before it can park until the
//! wait is decided. So a panic anywhere (the caller's code, the conflict
//! policy, the deadlock search, a bug of ours) unwinds into
//! `Transaction::drop`, which cancels the request in flight and releases
//! every lock. `finish` pops each lock only once it is released and marks
//! the transaction done only at the end; a panic inside `finish` itself
//! runs `finish` again from where it stopped (`ResumeOnUnwind`), so the
//! remaining locks and the exclusive-mode gate are never left behind. (A
//! second panic while that resumed `finish` unwinds aborts the process, as
//! any panic during unwinding does.) A transaction that is forgotten
//! (`mem::forget`) is finished by its agent's next `begin`, or by the
//! agent's drop.

use super::*;

impl Transaction<'_> {
    /// Releases every lock, leaf to root, and ends the transaction. With
    /// inheritance on, eligible locks are passed to the agent's next
    /// transaction instead (see `inherit.rs`). Unwind-safe: see the module
    /// docs.
    #[inline]
    pub(super) fn finish(&mut self, committed: bool) {
        if self.agent.txn.done {
            return;
        }
        let this = ResumeOnUnwind(self);
        this.0.release_all(committed);
        std::mem::forget(this);
    }

    /// The body of [`Transaction::finish`]. Each lock is popped from the
    /// cache when its release is decided and kept in the agent's release
    /// batch until it is released and its node given back, and `done` is
    /// set only at the end, so running it again after a panic continues
    /// with what is left.
    ///
    /// The releases go to the table as one batch (`LockTable::release_batch`:
    /// one message per partition on the server, one latch on the global
    /// table), after the decisions that need no table: an inherited lock
    /// left unused is reclaimed here, and a reclaimed one may be passed on
    /// again without a latch (`LockTable::reinherit`).
    pub(super) fn release_all(&mut self, committed: bool) {
        if self.agent.waiting.in_flight.is_some() {
            self.agent.abandon_in_flight();
        }
        // A run that a panic interrupted may have left a batch behind.
        self.agent.finish_releases();
        let a = &mut *self.agent;
        let lm = &*a.lm;
        let c = &a.shared.counters;
        loop {
            // A fast hold (never passed on by inheritance,
            // `Builder::fast_path`) is released from its entry's fields
            // (it may have no node).
            if let Some(f) = a.cache.pop_ending_fast() {
                release_fast(lm, &a.shared, &mut a.nodes, &mut a.scratch.wake, f);
                fault::hit(Point::Finish);
                continue;
            }
            let Some(h) = a.cache.pop_ending() else {
                break;
            };
            // SAFETY (every dereference and table call in this loop): `h` is
            // an entry of this agent's cache, so `h.req` is its own node and,
            // unless DEAD or invalidated, linked where `h.head` says.
            let mut heat = None;
            let mut out = None;
            match h.state {
                DEAD => continue,
                PENDING => {
                    // Not used: keep it for the next transaction if the
                    // hysteresis allows (it stays INHERITED in the table,
                    // untouched), else take it back and release it.
                    if lm.sli.keeps_unused(h.idle) {
                        c.inherited.bump();
                        c.inherited_idle.bump();
                        a.inheritance.list.push(Held { idle: h.idle + 1, ..h });
                        continue;
                    }
                    // SAFETY: as at the loop's head.
                    if !inherit::reclaim(unsafe { h.req.get() }, a.txn.id, a.txn.age) {
                        c.inherited_invalidated.bump();
                        a.nodes.give_back(h.req);
                        continue;
                    }
                    c.inherited_discarded.bump();
                    c.table_op(h.id.level());
                }
                _ => match lm.sli.candidate(h.id, h.mode).filter(|_| !a.has_superseded(h.id)) {
                    Some(hot) => {
                        // Used after being inherited: pass it on again
                        // without the latch if nobody waits.
                        let again = if h.state == RECLAIMED {
                            // SAFETY: as at the loop's head.
                            unsafe {
                                lm.table
                                    .reinherit(a.shared.caller(), h.head, h.req, &mut a.scratch.wake)
                            }
                        } else {
                            Reinherit::Declined
                        };
                        wake_granted(&mut a.scratch.wake);
                        match again {
                            Reinherit::Passed => {
                                c.table_ops_avoided.bump();
                                out = Some(Handoff::Inherited);
                            }
                            Reinherit::Released => {
                                c.table_op(h.id.level());
                                out = Some(Handoff::Released);
                            }
                            Reinherit::Declined => {
                                c.table_op(h.id.level());
                                heat = Some(if lm.sli.reuse_heat() {
                                    reuse_heat(&mut a.inheritance.recent, h.id, hot)
                                } else {
                                    hot
                                });
                            }
                        }
                    }
                    None => c.table_op(h.id.level()),
                },
            }
            let mut it = Releasing {
                req: h.req,
                head: h.head,
                heat,
                out,
                tag: a.releases.entries.len() as u32,
            };
            // The tables that gain nothing from a batch release now.
            // SAFETY: as at the loop's head.
            if unsafe { lm.table.release_now(a.shared.caller(), &mut it, &mut a.scratch.wake) } {
                wake_granted(&mut a.scratch.wake);
                hand_off(&mut a.inheritance.list, &mut a.nodes, c, h, it.out);
                continue;
            }
            a.releases.batch.push(it);
            a.releases.entries.push(h);
        }
        a.finish_releases();
        if !a.releases.superseded.is_empty() {
            a.release_superseded(None);
        }
        if !a.inheritance.list.is_empty() {
            // The locks passed on again without a latch are among the
            // RECLAIMED entries of the new inherited list (the unused ones
            // kept are PENDING; the others passed on again under their
            // latch, and a second look costs them nothing but the fence);
            // a run resumed after a panic finds those of the interrupted
            // one here too.
            // SAFETY: each is this agent's own request, linked where `head`
            // says.
            unsafe {
                a.lm.table.recheck_passed(
                    a.shared.caller(),
                    a.inheritance
                        .list
                        .iter()
                        .filter(|h| h.state == RECLAIMED)
                        .map(|h| h.head),
                    &mut a.scratch.wake,
                )
            };
            wake_granted(&mut a.scratch.wake);
            a.keep_rooted_inheritance(a.txn.id, a.txn.age);
        }
        a.cache.ended();
        if a.lm.special {
            a.limits.below.clear();
            a.limits.escalate_due = None;
            a.shrink_reservation();
        }
        let c = &a.shared.counters;
        if committed {
            c.committed.bump();
        } else {
            c.aborted.bump();
        }
        a.txn.done = true;
        a.open = None;
        misuse::closed(a.lm_addr(), a.txn.id);
        a.lm.gate.leave(&a.shared.active);
    }
}

/// Criterion 2 with reuse heat, for a lock released by a transaction that
/// took it from the table: hot if one of the agent's earlier transactions
/// released it too (it is in `recent`), else as hot as its table says
/// (`hot`), and remembered in `recent` (the oldest forgotten when it is
/// full).
#[inline]
pub(super) fn reuse_heat(recent: &mut Vec<LockId>, id: LockId, hot: Heat) -> Heat {
    if recent.contains(&id) {
        return Heat::Any;
    }
    if recent.len() == inherit::MAX_RECENT {
        recent.remove(0);
    }
    recent.push(id);
    hot
}

/// Runs [`Transaction::finish`] again if the run it guards unwinds.
struct ResumeOnUnwind<'t, 'a>(&'t mut Transaction<'a>);

impl Drop for ResumeOnUnwind<'_, '_> {
    fn drop(&mut self) {
        // Only reached by unwinding (`finish` forgets the guard otherwise).
        self.0.finish(false);
    }
}

impl Drop for Transaction<'_> {
    #[inline]
    fn drop(&mut self) {
        // After commit or abort `done` is set: no call (the common case).
        if !self.agent.txn.done {
            self.finish(false);
        }
    }
}
