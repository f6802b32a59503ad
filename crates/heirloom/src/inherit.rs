//! Speculative lock inheritance (SLI; Johnson, Pandis, Ailamaki, VLDB 2009).
//!
//! Short transactions spend their lock-manager time on a few hot shared
//! locks (the database and table intention locks every one of them takes).
//! At commit, instead of releasing such a lock, the agent keeps its request
//! in the lock's queue with status INHERITED and hands it to its next
//! transaction, which reclaims it with one compare-and-swap — no latch, no
//! lock-table operation, no allocation.
//!
//! A lock is passed on when all five criteria of the paper's section 4.2
//! hold: page level or higher; hot (its latch was found held in a tunable
//! share of recent acquisitions, see [`Queue`](crate::queue::Queue)'s heat
//! window); held in a shared mode (IS, IX, S); nobody waits for it; and its
//! parent is passed on too.
//!
//! A requester that finds an incompatible INHERITED request switches it to
//! INVALID with a compare-and-swap under the lock's latch and unlinks it, as
//! if it had been released. Reclaim (INHERITED -> GRANTED, by the owner,
//! without the latch) and invalidate (INHERITED -> INVALID) race on the same
//! word, so exactly one wins: a reclaimer that wins is a real holder the
//! requester then waits for; a reclaimer that loses takes a fresh request.
//! The loom model in `inherit/tests/loom_inherit.rs` checks this.
//!
//! An inherited lock the next transaction does not use is released when that
//! transaction ends (short memory), so roving hot spots do not clutter the
//! table. The next transaction walks root to leaf and reclaims a parent
//! before a child; if the parent was invalidated it takes a fresh parent
//! request (and may wait) before it touches the child, so a child is never
//! used under an invalidated parent (section 4.3, the Figure 4 deadlock).

use crate::error::TxnId;
use crate::request::{GRANTED, INHERITED, INVALID, Request};
use crate::sync::Ordering;

/// When the lock manager passes locks from one transaction to the next on
/// the same agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Inheritance {
    /// Never: every lock is released at commit.
    #[default]
    Off,
    /// Hot locks that meet the paper's criteria.
    On,
    /// Every lock that meets the criteria except heat (for tests and
    /// experiments).
    Always,
}

impl From<bool> for Inheritance {
    fn from(on: bool) -> Self {
        if on { Inheritance::On } else { Inheritance::Off }
    }
}

impl Inheritance {
    /// The name used on command lines and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Inheritance::Off => "off",
            Inheritance::On => "on",
            Inheritance::Always => "always",
        }
    }
}

impl std::str::FromStr for Inheritance {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Inheritance::Off),
            "on" => Ok(Inheritance::On),
            "always" => Ok(Inheritance::Always),
            _ => Err(format!(
                "unknown inheritance setting `{s}` (expected off, on or always)"
            )),
        }
    }
}

/// The owner's next transaction takes back an inherited request: it becomes
/// `txn`'s (of age `age`). `false` if a conflicting requester invalidated it
/// first (then it is unlinked and belongs to the owner again).
///
/// `q` is the owner's own request (alive: `ReqPtr` contract 1).
#[inline]
pub(crate) fn reclaim(q: &Request, txn: TxnId, age: u64) -> bool {
    // Written before the CAS: whoever reads the request under the latch and
    // sees GRANTED (Acquire) sees the new owner. While INHERITED, nobody
    // uses these fields (an inherited request blocks nobody).
    q.txn.store(txn.0, Ordering::Relaxed);
    q.ts.store(age, Ordering::Relaxed);
    // AcqRel: Acquire pairs with the Release that made it INHERITED (our own
    // earlier transaction, under the latch); Release publishes the fields
    // above to latch holders that read `status` with Acquire.
    match q
        .status
        .compare_exchange(INHERITED, GRANTED, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => true,
        Err(s) => {
            debug_assert_eq!(s, INVALID);
            false
        }
    }
}

/// A conflicting requester, holding the lock's latch, invalidates an
/// inherited request. `true` if it won (it must then unlink the request and
/// not touch it again: the owner may reuse it at once).
#[inline]
pub(crate) fn invalidate(r: &Request) -> bool {
    // AcqRel on success: Acquire so the owner's earlier writes are seen,
    // Release so the owner, on seeing INVALID, sees our unlink decision.
    // Acquire on failure: we then treat it as GRANTED and read its fields.
    r.status
        .compare_exchange(INHERITED, INVALID, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_inherit;
}
