//! Releases: every lock a transaction gives back leaves through this file,
//! whoever ends it. Commit and abort release everything, leaf to root,
//! passing hot locks on (`Agent::release_all`, from `Transaction::finish`);
//! an early `unlock`, an escalation and an abandoned wait release one
//! (`Agent::release_now`, with `release_superseded` for the requests a
//! conversion replaced); a forgotten transaction is ended by its agent
//! (`Agent::finish_forgotten`). A fast hold leaves through `release_fast`,
//! every other lock through the table, and each node then goes back to the
//! pool or on to the next transaction (`hand_off`). The release batch of
//! the ending transaction (`Agent::releases`, an agent part) changes only
//! here.
//!
//! Panic safety: `txn/finish.rs`.

use crate::agent::Agent;
use crate::cache::{DEAD, FastHeld, Held, PENDING, RECLAIMED};
use crate::error::TxnId;
use crate::fault::{self, Point};
use crate::id::LockId;
use crate::inherit::{self, Heat};
use crate::nodes::Nodes;
use crate::queue::Handoff;
use crate::request::{ReqPtr, wake_granted};
use crate::shared::{AgentShared, ManagerState};
use crate::stats::AgentCounters;
use crate::table::{LockTable, Reinherit, Releasing};

impl Agent {
    /// Releases every lock of the ending transaction, leaf to root, and
    /// ends it (the body of `Transaction::finish`, for commit and abort).
    /// Each lock is popped from the cache when its release is decided and
    /// kept in the agent's release batch until it is released and its node
    /// given back, and `done` is set only at the end, so running it again
    /// after a panic continues with what is left.
    ///
    /// The releases go to the table as one batch (`LockTable::release_batch`:
    /// one message per partition on the server, one latch on the global
    /// table), after the decisions that need no table: an inherited lock
    /// left unused is reclaimed here, and a reclaimed one may be passed on
    /// again without a latch (`LockTable::reinherit`).
    ///
    /// A transaction whose locks are all fast holds (the intention locks of
    /// a short one, its row S locks on open stripes) ends here without
    /// [`Agent::release_all_slow`]'s loop, whose set-up costs more than
    /// such a commit's releases.
    #[inline(always)]
    pub(crate) fn release_all(&mut self, committed: bool) {
        if self.cache.last().is_some_and(|h| h.head.is_fast())
            && self.waiting.in_flight.is_none()
            && self.releases.batch.is_empty()
        {
            self.release_all_fast(committed);
        } else {
            self.release_all_slow(committed);
        }
    }

    /// [`Agent::release_all`] from a fast hold at the cache's end: the fast
    /// holds there leave first, and the rest as any transaction's.
    #[inline(never)]
    fn release_all_fast(&mut self, committed: bool) {
        while let Some(f) = self.cache.pop_ending_fast() {
            release_fast(&self.lm, &self.shared, &mut self.nodes, &mut self.scratch.wake, f, true);
            fault::hit(Point::Finish);
        }
        if self.cache.is_empty() && self.releases.superseded.is_empty() && self.inheritance.list.is_empty() {
            self.end_txn(committed);
        } else {
            self.release_all_slow(committed);
        }
    }

    /// [`Agent::release_all`] of any transaction.
    #[inline(never)]
    fn release_all_slow(&mut self, committed: bool) {
        if self.waiting.in_flight.is_some() {
            self.abandon_in_flight();
        }
        // A run that a panic interrupted may have left a batch behind.
        self.finish_releases();
        let a = self;
        let lm = &*a.lm;
        let c = &a.shared.counters;
        loop {
            // A fast hold (never passed on by inheritance,
            // `Builder::fast_path`) is released from its entry's fields
            // (it may have no node).
            if let Some(f) = a.cache.pop_ending_fast() {
                release_fast(lm, &a.shared, &mut a.nodes, &mut a.scratch.wake, f, true);
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
        a.end_txn(committed);
    }

    /// The end of [`Agent::release_all`], once every lock is released.
    #[inline(always)]
    fn end_txn(&mut self, committed: bool) {
        self.cache.ended();
        if self.lm.special {
            self.limits.below.clear();
            self.limits.escalate_due = None;
            self.shrink_reservation();
        }
        let c = &self.shared.counters;
        if committed {
            c.committed.bump();
        } else {
            c.aborted.bump();
        }
        self.txn.done = true;
        self.open = None;
        self.leave_gate();
    }

    /// Sends the release batch of the ending transaction to the table (if
    /// it has not gone yet), then, item by item, passes each lock kept
    /// INHERITED on to the next transaction or gives its node back. An item
    /// leaves the batch only when it is settled, so after a panic the next
    /// call goes on with the rest.
    #[inline]
    pub(crate) fn finish_releases(&mut self) {
        if !self.releases.batch.is_empty() {
            self.finish_releases_slow();
        }
    }

    #[cold]
    fn finish_releases_slow(&mut self) {
        if !self.releases.sent {
            // SAFETY: every item is an entry of this agent's cache, popped
            // for release: its own node, linked where its `head` says.
            unsafe {
                self.lm
                    .table
                    .release_batch(self.shared.caller(), &mut self.releases.batch, &mut self.scratch.wake)
            };
            self.releases.sent = true;
            wake_granted(&mut self.scratch.wake);
        }
        while let Some(it) = self.releases.batch.pop() {
            let h = self.releases.entries[it.tag as usize];
            hand_off(
                &mut self.inheritance.list,
                &mut self.nodes,
                &self.shared.counters,
                h,
                it.out,
            );
        }
        self.releases.entries.clear();
        self.releases.sent = false;
    }

    /// Takes an inherited request back (reclaim CAS) and releases it, or, if
    /// it was invalidated meanwhile, only returns the node to the pool.
    /// Returns whether it was released.
    pub(crate) fn take_back_and_release(&mut self, h: Held, txn: TxnId, age: u64) -> bool {
        // SAFETY: an inherited entry: this agent's own node.
        let released = inherit::reclaim(unsafe { h.req.get() }, txn, age);
        if released {
            // Reclaimed: granted again, linked where `h.head` says.
            self.release_now(h);
        } else {
            self.shared.counters.inherited_invalidated.bump();
            self.nodes.give_back(h.req);
        }
        released
    }

    /// Releases the granted request of cache entry `h` (already out of
    /// the cache) now, and gives its node back. Every release outside a
    /// commit's batch goes through here.
    pub(crate) fn release_now(&mut self, h: Held) {
        if h.head.is_fast() {
            release_fast(
                &self.lm,
                &self.shared,
                &mut self.nodes,
                &mut self.scratch.wake,
                h.into(),
                false,
            );
            return;
        }
        self.shared.counters.table_op(h.id.level());
        // SAFETY: a live cache entry: this agent's own node, linked where
        // `h.head` says, granted.
        unsafe {
            self.lm
                .table
                .release(self.shared.caller(), h.head, h.req, &mut self.scratch.wake)
        };
        wake_granted(&mut self.scratch.wake);
        self.nodes.give_back(h.req);
    }

    /// Releases the requests that conversions of `id` replaced (`None`:
    /// of every lock), newest first; call it after the lock's current
    /// request was released.
    pub(crate) fn release_superseded(&mut self, id: Option<LockId>) {
        let mut i = self.releases.superseded.len();
        while i > 0 {
            i -= 1;
            if id.is_none_or(|id| self.releases.superseded[i].id == id) {
                let h = self.releases.superseded.remove(i);
                self.release_now(h);
            }
        }
    }

    /// Ends a transaction that was never finished because it was forgotten
    /// (`mem::forget`): releases its locks as an abort would, without
    /// passing any on, and leaves the exclusive-mode gate.
    #[cold]
    pub(crate) fn finish_forgotten(&mut self) {
        let Some(txn) = self.open else { return };
        if self.waiting.in_flight.is_some() {
            self.abandon_in_flight();
        }
        while let Some(h) = self.cache.pop_ending() {
            let c = &self.shared.counters;
            match h.state {
                DEAD => continue,
                PENDING => {
                    // SAFETY: this agent's own node (`ReqPtr` contract 1).
                    if !inherit::reclaim(unsafe { h.req.get() }, txn, 0) {
                        c.inherited_invalidated.bump();
                        self.nodes.give_back(h.req);
                        continue;
                    }
                    c.inherited_discarded.bump();
                }
                _ => {}
            }
            self.release_now(h);
        }
        self.release_superseded(None);
        self.cache.ended();
        self.shared.counters.aborted.bump();
        self.shared.counters.forgotten.bump();
        self.open = None;
        self.leave_gate();
    }

    /// The transaction's end at the exclusive-mode gate: it leaves, and an
    /// exclusive one (`Agent::restart`) opens the gate it closed.
    #[inline(always)]
    fn leave_gate(&mut self) {
        self.lm.gate.leave(&self.shared.active);
        if self.txn.exclusive {
            self.open_gate();
        }
    }

    #[cold]
    fn open_gate(&mut self) {
        self.txn.exclusive = false;
        self.lm.gate.open();
    }
}

/// Criterion 2 with reuse heat, for a lock released by a transaction that
/// took it from the table: hot if one of the agent's earlier transactions
/// released it too (it is in `recent`), else as hot as its table says
/// (`hot`), and remembered in `recent` (the oldest forgotten when it is
/// full).
#[inline]
fn reuse_heat(recent: &mut Vec<LockId>, id: LockId, hot: Heat) -> Heat {
    if recent.contains(&id) {
        return Heat::Any;
    }
    if recent.len() == inherit::MAX_RECENT {
        recent.remove(0);
    }
    recent.push(id);
    hot
}

/// Releases cache entry `h`, a fast hold (already out of the cache), from
/// the entry itself: it may have no node (`Nodes::none`), and it is never
/// passed on by inheritance. Every fast hold leaves through here, at
/// commit, abort, unlock or escalation. `ending`: from the loops of
/// [`Agent::release_all`], which give up every lock of the transaction
/// (its row S holds' entries are then cleared at once, `Rows::release`).
#[inline(always)]
pub(crate) fn release_fast(
    lm: &ManagerState,
    shared: &AgentShared,
    nodes: &mut Nodes,
    wake: &mut Vec<ReqPtr>,
    h: FastHeld,
    ending: bool,
) {
    let c = &shared.counters;
    c.table_op(h.id.level());
    c.fast_ops.bump();
    lm.table
        .release_fast_hold(shared.caller(), h.id, h.head, h.mode, ending, wake);
    wake_granted(wake);
    if h.req != nodes.none() {
        nodes.give_back(h.req);
    }
}

/// After the release of cache entry `h` (`out`: what the table did):
/// passes it on to the next transaction (`inherited`) if it was kept
/// INHERITED, or gives its node back to `nodes`.
#[inline]
pub(crate) fn hand_off(inherited: &mut Vec<Held>, nodes: &mut Nodes, c: &AgentCounters, h: Held, out: Option<Handoff>) {
    if out == Some(Handoff::Inherited) {
        c.inherited.bump();
        // `state` stays: LIVE (new) or RECLAIMED (passed on again); `idle`
        // is 0 for both (`Transaction::reclaim` resets it). Pushed as it
        // is, one plain copy: rewriting a field here made the reversal in
        // `keep_rooted_inheritance` stall on store forwarding.
        debug_assert_eq!(h.idle, 0);
        inherited.push(h);
    } else {
        nodes.give_back(h.req);
    }
    fault::hit(Point::Finish);
}
