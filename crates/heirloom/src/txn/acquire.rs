//! The lock-table calls of a transaction: a lock without intention locks,
//! a fast hold, a new request (linked, then granted or waited for), a
//! conversion.

use super::*;

impl Transaction<'_> {
    /// `lock` without intention locks (`Builder::intention_locks(false)`):
    /// the lock alone, answered by the lock cache or the table. Not
    /// inlined into `lock`, whose walk keeps its shape. A new request is
    /// linked here rather than by `acquire`: one call less, and one hash
    /// for the held-lock filter's test and its mark.
    #[inline(never)]
    pub(super) fn lock_alone(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        self.agent.shared.counters.lock_requests.bump();
        self.lock_leaf(id, mode)
    }

    /// [`Transaction::lock_path`]'s leaf whose ancestors the hint `hint`
    /// of `slot` vouches for, counted by the caller:
    /// [`Transaction::lock_leaf`] out of line. A conversion of the leaf
    /// forgets every hint, but it changes no ancestor's mode and moves no
    /// entry, so the hint is left again, as the walk leaves it.
    #[inline(never)]
    pub(super) fn lock_hinted(&mut self, id: LockId, mode: Mode, slot: usize, hint: u32) -> Result<(), LockError> {
        self.lock_leaf(id, mode)?;
        self.agent.cache.set_hint(slot, hint);
        Ok(())
    }

    /// The lock `id` alone, counted by the caller: answered by the lock
    /// cache, the fast path or a new request (`lock_alone`).
    #[inline(always)]
    pub(super) fn lock_leaf(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        let bit = id.filter_bit();
        if self.agent.cache.may_hold_bit(bit)
            && let Some(k) = self.agent.cache.scan(id).and_then(|k| self.usable(k))
        {
            let held = self.agent.cache[k].mode;
            return if held.covers(mode) {
                self.agent.shared.counters.cache_hits.bump();
                Ok(())
            } else {
                self.convert(k, held.join(mode))
            };
        }
        if self.agent.lm.fast_holds && fast::takes_fast(id, mode) {
            return self.acquire_fast(id, mode);
        }
        let (req, head) = self.link(id, mode)?;
        let cache = &mut self.agent.cache;
        cache.note_bit(bit);
        cache.push_noted(Held::live(id, mode, req, head));
        Ok(())
    }

    /// A database or table intention lock, or a row S lock, on the table's
    /// fast path with no
    /// request node (`LockTable::try_fast_hold`; the entry's node is
    /// `Nodes::none` until a conversion needs one, `Transaction::convert`),
    /// or, if it cannot be granted so now, a request as `acquire` makes.
    #[inline(always)]
    pub(super) fn acquire_fast(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        let a = &mut *self.agent;
        let (txn, ts) = (a.txn.id.0, a.txn.age);
        // A row's S (the one mode held fast on rows) only while the row
        // side's switch is on.
        let head = if mode != Mode::S || self.rows_open() {
            let a = &mut *self.agent;
            let head =
                a.lm.table
                    .try_fast_hold(a.shared.caller(), id, mode, txn, ts, &mut a.scratch.wake);
            wake_granted(&mut a.scratch.wake);
            head
        } else {
            None
        };
        let Some(head) = head else {
            return self.acquire(id, mode);
        };
        let a = &mut *self.agent;
        let c = &a.shared.counters;
        c.table_op(id.level());
        c.immediate_grants.bump();
        c.fast_ops.bump();
        let req = a.nodes.none();
        self.push_held(Held::live(id, mode, req, head));
        Ok(())
    }

    /// Converts entry `k`, a fast IS hold with no node, to IX in place
    /// (`LockTable::upgrade_fast_hold`); `false` if a strong request is counted
    /// on the lock (the caller converts it as any request).
    #[inline]
    pub(super) fn upgrade_fast(&mut self, k: usize) -> bool {
        let a = &mut *self.agent;
        let h = a.cache[k];
        let done =
            a.lm.table
                .upgrade_fast_hold(a.shared.caller(), h.id, h.head, &mut a.scratch.wake);
        wake_granted(&mut a.scratch.wake);
        if done {
            // Counted as the conversion it is (a failed one is counted by
            // the conversion that follows).
            let c = &a.shared.counters;
            c.table_op(h.id.level());
            c.immediate_grants.bump();
            c.fast_ops.bump();
            a.cache[k].mode = Mode::IX;
        }
        done
    }

    /// Gives the fast hold of entry `k`, taken without a node
    /// (`Transaction::acquire_fast`), the node the fast path would have
    /// filled, for an operation that reads it (a conversion).
    #[cold]
    pub(super) fn materialize(&mut self, k: usize) {
        let a = &mut *self.agent;
        let r = a.nodes.take(&a.shared.counters);
        // SAFETY: just taken from this agent's pool (`ReqPtr` contract 1).
        let q = unsafe { r.get() };
        q.txn.store(a.txn.id.0, Ordering::Relaxed);
        q.ts.store(a.txn.age, Ordering::Relaxed);
        let h = &mut a.cache[k];
        // SAFETY: our own node, linked nowhere.
        unsafe { crate::table::fast::holds::materialize(h.id, h.mode, r) };
        h.req = r;
    }

    #[inline(always)]
    pub(super) fn acquire(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        let (req, head) = self.link(id, mode)?;
        self.push_held(Held::live(id, mode, req, head));
        Ok(())
    }

    /// Links a new request of this transaction for `id` in `mode` and waits
    /// for it under the conflict policy. On error nothing is linked any more
    /// (a refused request never was; a failed wait was cancelled).
    #[inline(always)]
    pub(super) fn link(&mut self, id: LockId, mode: Mode) -> Result<(ReqPtr, Handle), LockError> {
        if fast::is_row(id) && self.agent.lm.row_votes_before {
            self.agent.vote_row(!mode.compatible(Mode::S));
        }
        let may_wait = self.may_wait();
        let a = &mut *self.agent;
        let r = a.nodes.take(&a.shared.counters);
        // SAFETY: just taken from this agent's pool (`ReqPtr` contract 1).
        let q = unsafe { r.get() };
        q.txn.store(a.txn.id.0, Ordering::Relaxed);
        q.ts.store(a.txn.age, Ordering::Relaxed);
        let c = &a.shared.counters;
        c.table_op(id.level());
        let before = if a.lm.lock_classes { c.contention() } else { 0 };
        // SAFETY: `r` is this agent's own node, linked nowhere (see the
        // contract on `Table`).
        let (out, head) = unsafe {
            a.lm.table.acquire(
                a.shared.caller(),
                id,
                r,
                mode,
                may_wait,
                !a.lm.fast_holds,
                &mut a.scratch.wake,
            )
        };
        if a.lm.lock_classes {
            c.classify(id.level() == Level::Row, mode.is_shared(), c.contention() != before);
            // The switch counts the row requests that reached the table,
            // here those not granted on the fast path (with the classes,
            // fast holds take this path with a node): as without them.
            if fast::is_row(id) && a.lm.row_switch.is_some() && !(matches!(out, Outcome::Granted) && head.is_fast()) {
                a.vote_row(!mode.compatible(Mode::S));
            }
        }
        wake_granted(&mut a.scratch.wake);
        match out {
            Outcome::Granted => {
                let c = &a.shared.counters;
                c.immediate_grants.bump();
                if head.is_fast() {
                    c.fast_ops.bump();
                }
            }
            Outcome::Refused(b) => {
                // Not left linked (the swap-append table withdrew it; see
                // `LockTable::acquire`): given back.
                a.nodes.give_back_refused(r);
                // A request that may wait is refused only by wait-die's
                // judgement in the table (`LockTable::judge_wait_die`).
                return Err(if may_wait {
                    self.died(id, mode, b.txn)
                } else {
                    self.refused(id, mode, b.txn)
                });
            }
            Outcome::Failed(partition) => {
                // Never linked: given back.
                a.nodes.give_back_refused(r);
                return Err(self.server_failed(id, partition));
            }
            Outcome::Waiting => {
                let f = InFlight {
                    id,
                    head,
                    req: r,
                    mode,
                    held: None,
                };
                if self.agent.waiting.defer {
                    return Err(self.defer(f));
                }
                if let Err(e) = self.wait(f, id) {
                    // `wait` cancelled the request.
                    self.agent.nodes.give_back(r);
                    return Err(self.doom(e));
                }
            }
        }
        Ok((r, head))
    }

    pub(super) fn convert(&mut self, k: usize, to: Mode) -> Result<(), LockError> {
        // A mode changes: `Transaction::lock_path`'s hints no longer hold.
        self.agent.cache.forget_hints();
        if self.agent.cache[k].req == self.agent.nodes.none() {
            // A fast hold with no node: IS to IX in place needs none.
            if self.agent.cache[k].mode == Mode::IS && to == Mode::IX && self.upgrade_fast(k) {
                return Ok(());
            }
            self.materialize(k);
        }
        let h = self.agent.cache[k];
        if fast::is_row(h.id) {
            self.vote_row(!to.compatible(Mode::S));
        }
        let may_wait = self.may_wait();
        let a = &mut *self.agent;
        let c = &a.shared.counters;
        c.table_op(h.id.level());
        // A conversion that waits wakes the waiters behind it to judge their
        // new edge, except under `Detect` (see `Queue::convert`).
        let wake_behind = !matches!(a.lm.policy, ConflictPolicy::Detect);
        let before = if a.lm.lock_classes { c.contention() } else { 0 };
        // SAFETY: a live entry of this agent's cache: its own node, linked
        // where `h.head` says (see the contract on `Table`).
        let conv = unsafe {
            a.lm.table.convert(
                a.shared.caller(),
                h.id,
                h.head,
                h.req,
                to,
                may_wait,
                wake_behind,
                &mut a.scratch.wake,
                &mut a.nodes,
            )
        };
        if a.lm.lock_classes {
            c.classify(h.id.level() == Level::Row, to.is_shared(), c.contention() != before);
        }
        wake_granted(&mut a.scratch.wake);
        match conv.outcome {
            Outcome::Granted => {
                c.immediate_grants.bump();
                if conv.head.is_fast() {
                    c.fast_ops.bump();
                }
                self.agent.converted(k, conv.req, conv.head, to);
                Ok(())
            }
            // As in `link`: with `may_wait`, wait-die's judgement.
            Outcome::Refused(b) if may_wait => Err(self.died(h.id, to, b.txn)),
            Outcome::Refused(b) => Err(self.refused(h.id, to, b.txn)),
            Outcome::Failed(partition) => Err(self.server_failed(h.id, partition)),
            Outcome::Waiting if self.agent.waiting.defer => Err(self.defer(InFlight {
                id: h.id,
                head: conv.head,
                req: conv.req,
                mode: to,
                held: Some(k),
            })),
            Outcome::Waiting => match self.wait(
                InFlight {
                    id: h.id,
                    head: conv.head,
                    req: conv.req,
                    mode: to,
                    held: Some(k),
                },
                h.id,
            ) {
                Ok(()) => {
                    self.agent.converted(k, conv.req, conv.head, to);
                    Ok(())
                }
                // `wait` cancelled the request: an in-place conversion is
                // back in its old mode; a replacing request goes back to the
                // pool and the old one stays.
                Err(e) => {
                    if conv.req != h.req {
                        self.agent.nodes.give_back(conv.req);
                    }
                    Err(self.doom(e))
                }
            },
        }
    }
}
