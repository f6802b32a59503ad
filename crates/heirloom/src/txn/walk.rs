//! The hierarchy walk of `Transaction::lock`: the parent's hint first,
//! then, without one, every level from the root.

use super::*;

impl Transaction<'_> {
    /// The hierarchy walk of `lock`: the path from the root, each level
    /// answered by the lock cache or the table.
    ///
    /// A walk that ends at the leaf with every level above the leaf's
    /// parent held in an intention mode leaves the parent's cache entry in
    /// the parent's slot of the cache's hints (`LockCache::hint`); the next request for a
    /// sibling starts at the parent. A hint is trusted only while the
    /// entry it names holds the parent and nothing has changed a mode or
    /// moved an entry since it was left: a conversion, an unlock, an
    /// escalation and a new transaction drop them all (a walk changes a
    /// mode only through a conversion, and moves no entry: it only pushes).
    /// Then every ancestor above the parent is still held in the intention
    /// mode the walk found, which covers no descendant, so a walk would
    /// find each of them in the cache and go on, and the answer at the
    /// parent is the one a walk would give. Counted as a walk counts.
    ///
    /// Inlined into `lock`, this is the hint's test alone, and a call on:
    /// with the hint (a sibling of the last leaf under a parent held in an
    /// intention mode, most row locks of a transaction) the leaf alone, as
    /// without intention locks ([`Transaction::lock_hinted`]); without it
    /// the walk ([`Transaction::lock_walk`]). Each is out of line with a
    /// frame of its own, so that the hinted leaf does not pay for the
    /// registers of the walk's loop (`scripts/callgrind.sh`'s `ro` and
    /// `tm1` loops; MEASUREMENTS.md, "The hinted leaf out of the walk").
    #[inline(always)]
    pub(super) fn lock_path(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        let depth = id.depth();
        let last = depth - 1;
        // Every level of the path counts as a request (one counter update
        // for all; a covering ancestor takes back the levels below it).
        self.agent.shared.counters.lock_requests.add(depth as u64);
        let mut slot = 0;
        if last > 0 {
            slot = id.hint_slot();
            let hint = self.agent.cache.hint(slot);
            if let Some(p) = self.agent.cache.get(hint as usize)
                && matches!(p.state, LIVE | RECLAIMED)
                && p.id == id.ancestor_above(last - 1)
            {
                let held = p.mode;
                let c = &self.agent.shared.counters;
                if held.covers_descendants(mode) {
                    c.cache_hits.add(last as u64);
                    c.lock_requests.add(u64::MAX); // minus the leaf
                    return Ok(());
                }
                if held.covers(mode.intention()) {
                    // The walk would find every level above the leaf in
                    // the cache and leave the hint as it is.
                    c.cache_hits.add(last as u64);
                    return self.lock_hinted(id, mode, slot, hint);
                }
            }
        }
        self.lock_walk(id, mode, depth, slot)
    }

    /// [`Transaction::lock_path`] without a usable hint: every level from
    /// the root, each answered by the lock cache or the table; leaves the
    /// parent's hint (in `slot`) when it may. `depth`: `id.depth()`.
    #[inline(never)]
    fn lock_walk(&mut self, id: LockId, mode: Mode, depth: usize, slot: usize) -> Result<(), LockError> {
        let last = depth - 1;
        // Whether every level above the leaf's parent is held in an
        // intention mode (so far), and the parent's cache entry.
        let mut pure = true;
        let mut parent = NO_HINT;
        for i in 0..depth {
            let lid = if i == last { id } else { id.ancestor_above(i) };
            let want = if i == last { mode } else { mode.intention() };
            let cached = if i < last {
                self.lookup_ancestor(lid)
            } else {
                self.lookup(lid)
            };
            match cached {
                Some(k) => {
                    let c = &self.agent.shared.counters;
                    let held = self.agent.cache[k].mode;
                    if i < last && held.covers_descendants(mode) {
                        c.cache_hits.bump();
                        // Minus the `last - i` levels below (wrapping add).
                        c.lock_requests.add((i as u64).wrapping_sub(last as u64));
                        return Ok(());
                    }
                    if held.covers(want) {
                        c.cache_hits.bump();
                    } else {
                        let r = self.convert(k, held.join(want));
                        self.uncount_below(r, i, last)?;
                    }
                    if i + 1 < last {
                        pure &= matches!(self.agent.cache[k].mode, Mode::IS | Mode::IX);
                    } else if i + 1 == last {
                        parent = k as u32;
                    }
                }
                None => {
                    let r = if self.agent.lm.fast_holds && fast::takes_fast(lid, want) {
                        self.acquire_fast(lid, want)
                    } else {
                        self.acquire(lid, want)
                    };
                    self.uncount_below(r, i, last)?;
                    // Pushed last, in `want`.
                    if i + 1 < last {
                        pure &= matches!(want, Mode::IS | Mode::IX);
                    } else if i + 1 == last {
                        parent = (self.agent.cache.len() - 1) as u32;
                    }
                }
            }
        }
        if last > 0 {
            // The purity is of the modes after the walk's conversions (which
            // dropped every hint), and the walk moved no entry.
            self.agent.cache.set_hint(slot, if pure { parent } else { NO_HINT });
        }
        Ok(())
    }
}
