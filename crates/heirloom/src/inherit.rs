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
//! hold: (1) page level or higher; (2) hot: its latch was found held in a
//! tunable share of its recent acquisitions (the heat window, 16
//! acquisitions), or, with reuse heat (`Builder::reuse_heat`, on by
//! default), one of the agent's recent transactions released the same lock
//! (the agent remembers the last [`MAX_RECENT`] it released), so
//! that an agent keeps the database and table locks it takes in every
//! transaction whether or not the scheduler lets two agents collide on
//! their latch; (3) held in a shared mode (IS, IX, S); (4) nobody waits
//! for it; and (5) its parent is passed on too, or is a lock whose
//! intention modes the table takes on its fast path (`Builder::fast_path`,
//! `table/fast.rs`), which is never passed on and needs no passing on: a
//! fast hold writes no shared line. Such a parent is taken afresh by the
//! next transaction before it reclaims the child, exactly as a parent
//! that was invalidated is (see the invariants below), so the child is
//! never used without it.
//!
//! ## Where each rule is decided
//!
//! This module owns the rules; the others only call them:
//! * criteria 1 and 3, and the setting ([`Inheritance`]):
//!   [`Rules::candidate`], asked by the transaction at commit for each
//!   lock it holds;
//! * criterion 2: the heat window is kept by each table where it keeps the
//!   lock's state (a queue under its latch; a word per latch-free bucket),
//!   always through [`note_heat`], and judged through [`Heat::allows`];
//! * criterion 4: by the table at the moment it turns the request INHERITED
//!   (under the latch, or by the latch-free table's publish-then-recheck),
//!   since only the table can see waiters atomically with that step;
//! * criterion 5: [`rooted`], applied by the agent to the locks passed on;
//! * reclaim and invalidation: [`reclaim`] and [`invalidate`], one CAS each
//!   on the same word.
//!
//! ## Invariants
//! * An INHERITED request is granted in its (shared) mode and blocks nobody
//!   who is compatible with it; anybody incompatible invalidates it before
//!   judging its own grant (the tables call [`invalidate`] first).
//! * Exactly one of reclaim and invalidate succeeds on a request.
//! * A child is never used under an invalidated parent: the next
//!   transaction reclaims root first and takes a fresh parent first.
//! * An inherited lock lives at most `1 + keep` transactions unused
//!   (`Builder::keep_inherited`; short memory with the default 0), and an
//!   agent keeps at most [`MAX_INHERITED`] of them.
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
//! table; with `Builder::keep_inherited(k)` it stays, still INHERITED and
//! untouched in the table, through up to `k` transactions that do not use
//! it (the hysteresis of the paper's section 4.4, for workloads whose
//! transaction types alternate), and a conflicting requester invalidates it
//! as any other. The next transaction walks root to leaf and reclaims a parent
//! before a child; if the parent was invalidated it takes a fresh parent
//! request (and may wait) before it touches the child, so a child is never
//! used under an invalidated parent (section 4.3, the Figure 4 deadlock).

use crate::error::TxnId;
use crate::id::{Level, LockId};
use crate::mode::Mode;
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

/// The setting and heat threshold of one manager.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules {
    setting: Inheritance,
    threshold: u32,
    /// Transactions an inherited lock may stay unused on its agent before it
    /// is released (`Builder::keep_inherited`; 0: released by the first
    /// transaction that does not use it).
    keep: u8,
    /// A lock the agent's previous transaction released and this one took
    /// again counts as hot (`Builder::reuse_heat`).
    reuse: bool,
}

/// The most locks an agent keeps inherited (root first: the deepest go
/// first when there are more). Enough for a database and the tables of
/// TPC-C, few enough that the lock cache's scan stays short.
pub(crate) const MAX_INHERITED: usize = 16;

/// The most locks an agent remembers as released, for reuse heat.
pub(crate) const MAX_RECENT: usize = 16;

/// How much heat (criterion 2) a table must see before it passes a lock on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Heat {
    /// At least this many of the last 16 acquisitions found the latch held.
    AtLeast(u32),
    /// Any (`Inheritance::Always`).
    Any,
}

impl Heat {
    /// Criterion 2 on a heat window (`window` is asked only if it matters).
    #[inline]
    pub(crate) fn allows(self, window: impl FnOnce() -> u16) -> bool {
        match self {
            Heat::Any => true,
            Heat::AtLeast(t) => {
                let w = window();
                // A cold lock (the common case) is settled without counting
                // bits, which costs a dozen instructions on CPUs targeted
                // without popcnt.
                w != 0 && w.count_ones() >= t
            }
        }
    }
}

/// The heat window after one more acquisition: bit i is 1 if the i-th most
/// recent acquisition found the latch held (a CAS retried, on the
/// latch-free table).
#[inline]
pub(crate) fn note_heat(window: u16, contended: bool) -> u16 {
    (window << 1) | contended as u16
}

impl Rules {
    /// `threshold` is clamped to 1..=16 (the window's length), `keep` to
    /// 0..=255.
    pub(crate) fn new(setting: Inheritance, threshold: u32, keep: u32, reuse: bool) -> Self {
        Rules {
            setting,
            threshold: threshold.clamp(1, 16),
            keep: keep.min(u8::MAX as u32) as u8,
            reuse,
        }
    }

    /// Whether an inherited lock that has stayed unused through `idle`
    /// transactions may stay with its agent for one more (hysteresis).
    #[inline]
    pub(crate) fn keeps_unused(&self, idle: u8) -> bool {
        idle < self.keep
    }

    /// Whether reuse counts as heat.
    #[inline]
    pub(crate) fn reuse_heat(&self) -> bool {
        self.reuse
    }

    /// The setting.
    pub(crate) fn setting(&self) -> Inheritance {
        self.setting
    }

    /// At commit, for a lock the transaction holds: criteria 1 and 3 (and
    /// the setting). `Some(heat)`: a candidate, to be passed on if its
    /// table sees that heat and nobody waits (criteria 2 and 4); `None`:
    /// release it.
    #[inline]
    pub(crate) fn candidate(&self, id: LockId, mode: Mode) -> Option<Heat> {
        let heat = match self.setting {
            Inheritance::Off => return None,
            Inheritance::On => Heat::AtLeast(self.threshold),
            Inheritance::Always => Heat::Any,
        };
        (id.level() != Level::Row && mode.is_shared()).then_some(heat)
    }
}

/// Criterion 5, for a lock passed on: its parent is passed on too
/// (`passed_on` says whether a lock id was).
#[inline]
pub(crate) fn rooted(id: LockId, passed_on: impl Fn(LockId) -> bool) -> bool {
    id.parent().is_none_or(passed_on)
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
