//! Lock escalation and the lock-memory cap: room for new locks is made
//! by trading a table's row locks for one table lock.

use super::*;

impl Transaction<'_> {
    /// Under [`Builder::max_locks`](crate::Builder::max_locks): makes sure
    /// this agent may have `need` more requests in use, reserving budget,
    /// and if the manager has none left, escalating this transaction's
    /// largest group of row locks; fails with `OutOfLockMemory` if that
    /// frees nothing.
    #[inline]
    pub(super) fn make_room(&mut self, lock: LockId, need: usize) -> Result<(), LockError> {
        let a = &*self.agent;
        match &a.lm.lock_memory {
            Some(_) if a.nodes.out + need > a.limits.reserved => self.grow_room(lock, need),
            _ => Ok(()),
        }
    }

    #[cold]
    pub(super) fn grow_room(&mut self, lock: LockId, need: usize) -> Result<(), LockError> {
        let lm = self.agent.lm.clone();
        let Some(mem) = lm.lock_memory.as_ref() else {
            return Ok(());
        };
        loop {
            let a = &mut *self.agent;
            let short = (a.nodes.out + need).saturating_sub(a.limits.reserved);
            if short == 0 {
                return Ok(());
            }
            let chunk = short.div_ceil(mem.chunk) * mem.chunk;
            if mem.reserve(chunk) {
                a.limits.reserved += chunk;
                return Ok(());
            }
            if mem.reserve(short) {
                a.limits.reserved += short;
                return Ok(());
            }
            // The manager is full: escalate, largest group first, while
            // that frees anything (not without the hierarchy, where a table
            // lock covers no row).
            match self.largest_group().filter(|_| !self.agent.lm.flat) {
                Some(t) if self.escalate(t)? => continue,
                _ => {}
            }
            self.agent.shared.counters.out_of_lock_memory.bump();
            return Err(self.doom(LockError::OutOfLockMemory {
                txn: self.id(),
                lock,
                limit: mem.limit,
            }));
        }
    }

    /// The table under which this transaction holds the most row and page
    /// locks (at least one).
    pub(super) fn largest_group(&self) -> Option<TableId> {
        let mut groups: Vec<(TableId, usize)> = Vec::new();
        for h in self.agent.cache.iter().filter(|h| matches!(h.state, LIVE | RECLAIMED)) {
            if h.id.level() < Level::Page {
                continue;
            }
            let Some(t) = h.id.table_id() else { continue };
            match groups.iter_mut().find(|g| g.0 == t) {
                Some(g) => g.1 += 1,
                None => groups.push((t, 1)),
            }
        }
        groups.into_iter().max_by_key(|g| g.1).map(|g| g.0)
    }

    /// The escalation `push_held` found due (`Builder::escalate_after`).
    /// Under `Wait::Skip` a busy table is left for a later try.
    #[cold]
    pub(super) fn escalate_due(&mut self) -> Result<(), LockError> {
        let Some(t) = self.agent.limits.escalate_due.take() else {
            return Ok(());
        };
        match self.escalate(t) {
            Ok(_) | Err(LockError::Busy { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Lock escalation: converts the lock on table `t` to cover this
    /// transaction's row and page locks under it (S if they are all
    /// shared, else X, joined with what the table already holds), waiting
    /// as the current call waits, then releases those it covers, leaf
    /// first. Returns whether anything was released.
    pub(super) fn escalate(&mut self, t: TableId) -> Result<bool, LockError> {
        let table = LockId::table(t);
        let mut esc = Mode::S;
        let mut below = 0usize;
        for h in self.agent.cache.iter() {
            if matches!(h.state, LIVE | RECLAIMED) && table.is_ancestor_of(&h.id) {
                below += 1;
                if !matches!(h.mode, Mode::IS | Mode::S) {
                    esc = Mode::X;
                }
            }
        }
        if below == 0 {
            return Ok(false);
        }
        // Held: a row or page lock below it needed its intention lock.
        let Some(k) = self.lookup(table) else { return Ok(false) };
        let held = self.agent.cache[k].mode;
        let to = held.join(esc);
        if !held.covers(to) {
            self.agent.shared.counters.lock_requests.bump();
            self.convert(k, to)?;
        }
        let a = &mut *self.agent;
        let mut gone = std::mem::take(&mut a.releases.escalating);
        a.cache.remove_where(|h| {
            let covered = table.is_ancestor_of(&h.id)
                && match h.state {
                    LIVE | RECLAIMED => to.covers_descendants(h.mode),
                    DEAD => true,
                    _ => false,
                };
            if covered {
                gone.push(*h);
            }
            covered
        });
        let mut released = 0u64;
        // Acquisition order is root first: release leaf first.
        for h in gone.drain(..).rev() {
            if h.state != DEAD {
                released += 1;
                a.release_now(h);
                if !a.releases.superseded.is_empty() {
                    a.release_superseded(Some(h.id));
                }
            }
        }
        a.releases.escalating = gone;
        if a.lm.escalate_after != 0 {
            a.forget_below(t, released as u32);
        }
        let c = &a.shared.counters;
        c.escalations.bump();
        c.escalated_locks.add(released);
        Ok(released > 0)
    }

    /// After a failed request at level `i` of a path of `last + 1`: the
    /// levels below it were counted as requests but never made.
    #[inline]
    pub(super) fn uncount_below(&self, r: Result<(), LockError>, i: usize, last: usize) -> Result<(), LockError> {
        // (Not for a request left in flight for a `LockFuture`: the run
        // after its wait counts nothing, `txn/pending.rs`.)
        if r.is_err() && self.agent.waiting.in_flight.is_none() {
            let c = &self.agent.shared.counters;
            c.lock_requests.add((i as u64).wrapping_sub(last as u64));
        }
        r
    }
}
