//! Whether a waiting request is clear: the walk that decides its grant,
//! run by the waiter's own read-after-write step (`acquire.rs`,
//! `recheck_waiter`) and by every releaser that looks for a waiter to
//! grant (`release.rs`, `wake_scan`). Below both: it calls only the walks
//! (`list.rs`).

use super::*;

/// How far `clear` walks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Sweep {
    /// Up to the first request in the way (a releaser's look at a waiter).
    First,
    /// Up to the waiter, invalidating every inherited request in its way.
    All,
}

/// What `clear` found of a waiting request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Clearance {
    /// Nothing ahead of it is in its way: it may be granted.
    Clear,
    /// A request ahead of it, or a fast hold, is in its way.
    Blocked,
    /// It is not linked any more (granted and released, or cancelled).
    Gone,
}

impl<const SWAP: bool> LatchFree<SWAP> {
    /// Is the waiting `q` clear: nothing ahead of it in its way? `Gone` if
    /// it is not linked any more.
    ///
    /// With `Sweep::All` (the waiter's own read-after-write step) the walk
    /// goes on past the first request in the way, so that every INHERITED
    /// request ahead that conflicts is invalidated (`in_way`) or seen
    /// reclaimed. One left behind the first blocker could be reclaimed
    /// later by its agent's next transaction: a new holder ahead of the
    /// waiter that nobody tells it of, so wound-wait would never judge
    /// that edge (the stress test's stall: an older waiter behind a
    /// younger reclaimer it never wounded). A pass-on after our fence sees
    /// us waiting and does not happen (`pass_on`), so after this walk no
    /// request ahead of us can become a holder unseen.
    pub(super) fn clear(&self, b: &Bucket, c: &AgentCounters, q: &Request, g: &Guard, sweep: Sweep) -> Clearance {
        let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let (mode, txn) = (q.mode(), q.txn.load(Ordering::Relaxed));
        let target: *const Request = q;
        let mut found = Clearance::Gone;
        // Its own fast holds (`fast.rs`) are granted requests of its own
        // ahead of it.
        let own_fast = self.own_fast(words, q.agent);
        let mut own = own_fast;
        Self::walk(b, self.route(words), c, g, |n| match n {
            None => {
                found = Clearance::Gone;
                own = own_fast;
                Visit::Next
            }
            Some((n, _)) if n.as_raw() == target => {
                if found != Clearance::Blocked {
                    found = Clearance::Clear;
                }
                Visit::Stop
            }
            Some((_, x)) => {
                if !same_lock(x, words) {
                    return Visit::Next;
                }
                if x.txn.load(Ordering::Relaxed) == txn {
                    note_own(x, &mut own);
                    Visit::Next
                } else if !shut_out_by_own(x, own) && in_way(x, mode, g) {
                    found = Clearance::Blocked;
                    match sweep {
                        Sweep::First => Visit::Stop,
                        Sweep::All => Visit::Next,
                    }
                } else {
                    Visit::Next
                }
            }
        });
        if found == Clearance::Clear
            && let Some((f, s)) = self.slot_of_lock(words)
            && fast::strong_at(s, mode)
            && f.in_way(s, words, mode, q.agent)
        {
            return Clearance::Blocked;
        }
        found
    }
}
