//! The monitor's snapshot of the latch-free lists: without a latch, by
//! reading every list twice.
//!
//! One walk of a list reads its requests one after another, each at its
//! own moment, so it can put together states that never existed at once:
//! a request read as GRANTED, released right after, and a request behind
//! it, granted by that release, read as GRANTED too (two X holders of one
//! lock). So the snapshot walks every list (the first collection), reads
//! the fast holds, walks every list again (the second), all under one
//! pin, and lists only the requests the two collections read alike: the
//! same node, in the same state.
//!
//! Why that is consistent. Under the pin no node is reused (a node goes
//! back to its agent only once the collector returned it, `nodes.rs`), so
//! the same node is the same request. A request's states follow one
//! another in one order: ACTIVE (swap append), then WAITING, then GRANTED,
//! between which and INHERITED it may go back and forth, then OBSOLETE or
//! INVALID, never back. So a request in one waiting state at both reads
//! was in it all the time between them, and one GRANTED at both reads held
//! the lock all the time between them (INHERITED in between holds it too:
//! a conflicting request invalidates an inherited one before it is
//! granted, and an invalidated request is never granted again). Every
//! first read comes before every second one, so at every instant between
//! the end of the first collection and the start of the second, every
//! request listed was in its listed state: the listed holders of a lock
//! held it together, and are compatible. A request whose state changed
//! while the snapshot was taken is left out.
//!
//! The fast holds are read between the two collections, so every listed
//! request was in its state while each bit was read. A bit that conflicts
//! with a listed holder of another transaction is left out
//! (`Fast::fold_into` says why it is no hold).

use std::collections::HashSet;

use super::*;
use crate::error::TxnId;
use crate::monitor::{Waiter, add_holder, info_of};
use crate::request::Status;

/// A request as one collection read it.
struct Seen {
    /// The node's address: the request's identity under the pin.
    node: usize,
    status: Status,
    id: LockId,
    txn: TxnId,
    mode: Mode,
    since: u64,
}

impl Seen {
    /// What must be alike in both collections: the node, its state, and
    /// its transaction (a reclaimed request changes hands, `inherit.rs`).
    fn key(&self) -> (usize, Status, TxnId) {
        (self.node, self.status, self.txn)
    }
}

impl<const SWAP: bool> LatchFree<SWAP> {
    /// Appends every lock with live requests; see the module docs for what
    /// is consistent and what may be left out.
    pub(super) fn snapshot_lists(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        let c = AgentCounters::default();
        let g = pin();
        let first = self.collect(&c, &g);
        crate::fault::snapshot_between();
        let mut fast_holds: Vec<(LockId, TxnId, Mode)> = Vec::new();
        if let Some(f) = self.fast.as_deref() {
            f.each_hold(|id, txn, mode| fast_holds.push((id, txn, mode)));
        }
        let second = self.collect(&c, &g);
        drop(g);
        let stable: HashSet<_> = first.iter().flatten().map(Seen::key).collect();
        for bucket in &second {
            let start = out.len();
            // Own requests granted so far, to tell conversions.
            let mut held: Vec<(LockId, TxnId, Mode)> = Vec::new();
            for x in bucket.iter().filter(|x| stable.contains(&x.key())) {
                let i = info_of(out, start, x.id);
                let info = &mut out[i];
                // An ACTIVE request is still finding out whether it waits.
                if matches!(x.status, WAITING | ACTIVE) {
                    let converting_from = held
                        .iter()
                        .find(|&&(l, t, _)| l == x.id && t == x.txn)
                        .map(|&(_, _, m)| m);
                    info.waiters.push(Waiter {
                        txn: x.txn,
                        mode: x.mode,
                        converting_from,
                        waited: std::time::Duration::from_nanos(now_ns.saturating_sub(x.since)),
                    });
                } else {
                    info.group = info.group.join(x.mode);
                    // A converted lock's older request stays granted until
                    // the newer one goes (see "Upgrades"): one holder, in
                    // the join of the two modes.
                    add_holder(info, x.txn, x.mode, x.status == INHERITED);
                    held.push((x.id, x.txn, x.mode));
                }
            }
        }
        // The fast holds (`fast.rs`), folded into their locks' holders.
        for (id, txn, mode) in fast_holds {
            let i = info_of(out, 0, id);
            fast::fold(&mut out[i], txn, mode);
        }
        out.retain(|l| !l.holders.is_empty() || !l.waiters.is_empty());
    }

    /// One collection: every live request of every bucket, in list order,
    /// a bucket's lists one after another, each before the lists below it
    /// (`split.rs`), so that a lock's requests come in its route's order.
    fn collect(&self, c: &AgentCounters, g: &Guard) -> Vec<Vec<Seen>> {
        self.buckets
            .iter()
            .map(|b| {
                let mut seen = Vec::new();
                // Where the current list's requests start.
                let (mut list, mut from) = (usize::MAX, 0);
                Self::walk_each_list(b, c, g, |i, n| {
                    if i != list {
                        (list, from) = (i, seen.len());
                    }
                    Self::see(&mut seen, from, n)
                });
                seen
            })
            .collect()
    }

    /// Notes what a collection's walk met (`None`: the walk of the list
    /// whose requests start at `from` starts again).
    fn see(seen: &mut Vec<Seen>, from: usize, n: Option<(Shared<'_, Request>, &Request)>) -> Visit {
        let Some((p, x)) = n else {
            // The walk starts again from the head.
            seen.truncate(from);
            return Visit::Next;
        };
        // Acquire: pairs with the Release stores and CASes of
        // `status`, so a reclaimed request's owner fields are
        // the new owner's.
        let status = x.status.load(Ordering::Acquire);
        if matches!(status, GRANTED | WAITING | ACTIVE | INHERITED) {
            seen.push(Seen {
                node: p.as_raw() as usize,
                status,
                id: LockId::from_words(x.key.load(Ordering::Relaxed), x.hi.load(Ordering::Relaxed)),
                txn: x.txn(),
                mode: x.mode(),
                since: x.since.load(Ordering::Relaxed),
            });
        }
        crate::fault::snapshot_visit();
        Visit::Next
    }
}
