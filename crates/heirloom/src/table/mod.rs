//! Lock tables: where requests live.
//!
//! `Global` and `Latched` keep a [`Queue`](crate::queue::Queue) per lock
//! with live requests and guard it with latches; `LatchFree` keeps per-bucket
//! request lists and no latch at all. The transaction layer reaches them
//! through [`Table`], an enum (static dispatch: no `dyn` call on the hot
//! path) whose methods are the one internal interface every kind implements:
//! acquire, convert, release, cancel a wait, list a waiter's blockers, and
//! snapshot. Waiting, conflict policies and deadlock detection live above
//! the table (`txn.rs`, `deadlock.rs`) and work unchanged for every kind.

pub(crate) mod global;
pub(crate) mod latched;
pub(crate) mod latchfree;

use parking_lot::{Mutex, MutexGuard};

use crate::id::LockId;
use crate::inherit::Heat;
use crate::mode::Mode;
use crate::monitor::LockInfo;
use crate::nodes::{Nodes, Reuse};
use crate::queue::{Blocker, Cancel, Handoff, Outcome};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;

/// Which lock table a [`LockManager`](crate::LockManager) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TableKind {
    /// One latch over the whole table (the pre-sharding MySQL baseline).
    Global,
    /// Hash buckets of lock heads, one latch per head (Shore-MT).
    #[default]
    Latched,
    /// Hash buckets of request lists appended with a compare-and-swap, no
    /// latch anywhere (read-after-write lock lists, epoch reclamation).
    LatchFree,
}

impl TableKind {
    /// Every kind, for sweeps.
    pub const ALL: [TableKind; 3] = [TableKind::Global, TableKind::Latched, TableKind::LatchFree];

    /// The name used on command lines and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            TableKind::Global => "global",
            TableKind::Latched => "latched",
            TableKind::LatchFree => "latchfree",
        }
    }
}

impl std::str::FromStr for TableKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "global" => Ok(TableKind::Global),
            "latched" => Ok(TableKind::Latched),
            "latchfree" => Ok(TableKind::LatchFree),
            _ => Err(format!(
                "unknown lock table `{s}` (expected global, latched or latchfree)"
            )),
        }
    }
}

/// Where a request's queue is: a table-specific handle, valid while the
/// request is linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeadRef(pub(crate) usize);

/// What [`Table::convert`] started.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Converting {
    /// Granted, refused (nothing changed) or waiting.
    pub(crate) outcome: Outcome,
    /// The request whose grant completes the conversion: the converted
    /// request itself (queue tables convert in place), or a new one for the
    /// target mode that replaces it once granted (the latch-free table: a
    /// linked request's mode is fixed, since others judged their own by
    /// it). On `Refused` always the old one.
    pub(crate) req: ReqPtr,
    /// Where `req` is linked.
    pub(crate) head: HeadRef,
}

impl Converting {
    fn in_place(outcome: Outcome, req: ReqPtr, head: HeadRef) -> Self {
        Converting { outcome, req, head }
    }
}

/// What [`Table::reinherit`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reinherit {
    /// Passed on again without a lock-table operation.
    Passed,
    /// Somebody waits: released (the latch-free table decides in one go).
    Released,
    /// Not decided: use [`Table::release_or_inherit`].
    Declined,
}

/// The lock table of a manager.
///
/// ## The contract of the methods that take a request or a handle
///
/// They are `unsafe`: the table dereferences what it is given, and which
/// pointer is alive is the caller's knowledge (`request.rs`, `ReqPtr`).
///
/// * `r` is the caller's own request (its agent's node, `ReqPtr` contract
///   1): for `acquire` one linked nowhere, for the others one that
///   `acquire` of this table linked and that is still linked;
/// * `h` is the handle this table's `acquire` returned with `r`.
///
/// `blockers` also takes another agent's waiting request, read from its
/// `WaitInfo` under the registry lock (contract 4); the tables look for it
/// in the queue or list before they touch it.
pub(crate) enum Table {
    Global(global::Global),
    Latched(latched::Latched),
    LatchFree(latchfree::LatchFree),
}

impl Table {
    pub(crate) fn new(kind: TableKind, buckets: usize) -> Self {
        match kind {
            TableKind::Global => Table::Global(global::Global::new()),
            TableKind::Latched => Table::Latched(latched::Latched::new(buckets)),
            TableKind::LatchFree => Table::LatchFree(latchfree::LatchFree::new(buckets)),
        }
    }

    /// A pool of request nodes for agent `agent`, reusing given-back nodes
    /// as soon as this table allows (see `nodes.rs`).
    pub(crate) fn nodes(&self, agent: u32) -> Nodes {
        Nodes::new(
            match self {
                Table::Global(_) | Table::Latched(_) => Reuse::Unlinked,
                Table::LatchFree(_) => Reuse::AfterGracePeriod,
            },
            agent,
        )
    }

    /// Links a new request for `id` in `mode`.
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    pub(crate) unsafe fn acquire(
        &self,
        c: &AgentCounters,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, HeadRef) {
        // SAFETY (all three): this function's contract.
        match self {
            Table::Global(t) => unsafe { t.acquire(c, id, r, mode, may_wait) },
            Table::Latched(t) => unsafe { t.acquire(c, id, r, mode, may_wait, wake) },
            Table::LatchFree(t) => unsafe { t.acquire(c, id, r, mode, may_wait, wake) },
        }
    }

    /// Converts the granted `r` (a request for `id`) to `to`. If the
    /// answer names another request ([`Converting::req`]), that one was
    /// taken from `nodes` and linked for `to`; once it is granted the
    /// caller releases `r` (`Agent::converted`), and if its wait fails the
    /// caller cancels it and `r` keeps its mode, as an in-place conversion
    /// falls back to its old mode.
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    #[allow(clippy::too_many_arguments)] // one per table operation input; a struct would only rename them
    pub(crate) unsafe fn convert(
        &self,
        c: &AgentCounters,
        id: LockId,
        h: HeadRef,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting {
        // SAFETY (all three): this function's contract.
        match self {
            Table::Global(t) => Converting::in_place(
                t.with(c, h, |q| unsafe { q.convert(r, to, may_wait, wake_behind, wake) }),
                r,
                h,
            ),
            Table::Latched(t) => Converting::in_place(
                unsafe { t.update(c, h, wake, |q, w| q.convert(r, to, may_wait, wake_behind, w)) },
                r,
                h,
            ),
            Table::LatchFree(t) => unsafe { t.convert(c, id, h, r, to, may_wait, wake, nodes) },
        }
    }

    /// Unlinks the granted `r`.
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    pub(crate) unsafe fn release(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        // SAFETY (both unsafe arms): this function's contract.
        match self {
            Table::Global(t) => t.release(c, h, r, wake),
            Table::Latched(t) => unsafe { t.update(c, h, wake, |q, w| q.release(r, w)) },
            Table::LatchFree(t) => unsafe { t.release(c, h, r, wake) },
        }
    }

    /// At commit: releases the granted `r` or keeps it INHERITED (see
    /// [`Queue::release_or_inherit`](crate::queue::Queue::release_or_inherit)).
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    pub(crate) unsafe fn release_or_inherit(
        &self,
        c: &AgentCounters,
        h: HeadRef,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        // SAFETY (all three): this function's contract.
        match self {
            Table::Global(t) => unsafe { t.release_or_inherit(c, h, r, heat, wake) },
            Table::Latched(t) => unsafe { t.update(c, h, wake, |q, w| q.release_or_inherit(r, heat, w)) },
            Table::LatchFree(t) => unsafe { t.release_or_inherit(c, h, r, heat, wake) },
        }
    }

    /// At commit, for a lock the transaction reclaimed from inheritance:
    /// passes it on again without a latch if the table can tell that nobody
    /// waits (`Latched`, `LatchFree`).
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    pub(crate) unsafe fn reinherit(
        &self,
        c: &AgentCounters,
        h: HeadRef,
        r: ReqPtr,
        wake: &mut Vec<ReqPtr>,
    ) -> Reinherit {
        // SAFETY (both unsafe arms): this function's contract.
        match self {
            Table::Global(_) => Reinherit::Declined,
            Table::Latched(t) => {
                if unsafe { t.reinherit(c, h, r, wake) } {
                    Reinherit::Passed
                } else {
                    Reinherit::Declined
                }
            }
            Table::LatchFree(t) => unsafe { t.reinherit(c, h, r, wake) },
        }
    }

    /// Withdraws the waiting `r` unless it was granted meanwhile.
    ///
    /// # Safety
    /// See the type's docs.
    pub(crate) unsafe fn cancel(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY (all three): this function's contract.
        match self {
            Table::Global(t) => unsafe { t.cancel(c, h, r, wake) },
            Table::Latched(t) => unsafe { t.update(c, h, wake, |q, w| q.cancel(r, w)) },
            Table::LatchFree(t) => unsafe { t.cancel(c, h, r, wake) },
        }
    }

    /// The blockers of the waiting `r`; `false` if it no longer waits.
    ///
    /// # Safety
    /// `h` is the handle this table returned when `r` was linked; `r` need
    /// not be alive (it is looked for before it is touched).
    pub(crate) unsafe fn blockers(&self, c: &AgentCounters, h: HeadRef, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        match self {
            Table::Global(t) => t.with(c, h, |q| q.blockers(r, out)),
            // SAFETY: a handle of this table (the contract).
            Table::Latched(t) => unsafe { t.with(c, h, |q| q.blockers(r, out)) },
            Table::LatchFree(t) => t.blockers(c, h, r, out),
        }
    }

    /// Appends every lock with live requests.
    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        match self {
            Table::Global(t) => t.snapshot(now_ns, out),
            Table::Latched(t) => t.snapshot(now_ns, out),
            Table::LatchFree(t) => t.snapshot(now_ns, out),
        }
    }
}

/// Takes `m`, counting the acquisition in `latch_contended` if it found the
/// latch held.
#[inline]
pub(crate) fn latch<'a, T>(m: &'a Mutex<T>, c: &AgentCounters) -> MutexGuard<'a, T> {
    latch_heat(m, c).0
}

/// [`latch`], also saying whether the latch was found held (the heat that
/// speculative lock inheritance looks at).
#[inline]
pub(crate) fn latch_heat<'a, T>(m: &'a Mutex<T>, c: &AgentCounters) -> (MutexGuard<'a, T>, bool) {
    match m.try_lock() {
        Some(g) => (g, false),
        None => (latch_slow(m, c), true),
    }
}

#[cold]
#[inline(never)]
fn latch_slow<'a, T>(m: &'a Mutex<T>, c: &AgentCounters) -> MutexGuard<'a, T> {
    c.latch_contended.bump();
    m.lock()
}
