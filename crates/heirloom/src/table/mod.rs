//! Lock tables: where requests live.
//!
//! `Global` and `Latched` keep a [`Queue`](crate::queue::Queue) per lock
//! with live requests and guard it with latches; `LatchFree` keeps per-bucket
//! request lists and no latch at all (`LatchFreeSwap`: the same lists with
//! the multicore slides' append, one body generic over the append);
//! `Server` keeps queues on lock-server
//! threads that alone touch them, and clients send it messages. The
//! transaction layer reaches them
//! through [`Table`], an enum (static dispatch: no `dyn` call on the hot
//! path) whose methods are the one internal interface every kind implements:
//! acquire, convert, release, cancel a wait, list a waiter's blockers, and
//! snapshot. Waiting, conflict policies and deadlock detection live above
//! the table (`txn/`, `deadlock.rs`) and work unchanged for every kind.

pub(crate) mod fast;
pub(crate) mod global;
pub(crate) mod latched;
pub(crate) mod latchfree;
pub(crate) mod server;

use parking_lot::{Mutex, MutexGuard};

use crate::id::LockId;
use crate::inherit::Heat;
use crate::latch::{Latch, LatchGuard};
use crate::mode::Mode;
use crate::monitor::LockInfo;
use crate::nodes::{Nodes, Reuse};
use crate::queue::{Blocker, Cancel, Handoff, Outcome};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;
use crate::sync::{Ordering, fence};

/// The latched table's first size (its default
/// [`Builder::buckets`](crate::Builder::buckets)): 256 hash buckets, few
/// enough that the buckets and the heads in use stay in cache. The table
/// grows from there, doubling its buckets when its chains average more
/// than a few heads that are all in use, so a transaction that holds
/// hundreds of thousands of locks pays about as much for the last as for
/// the first (the crate's MEASUREMENTS.md, "A latched table that grows").
pub const DEFAULT_BUCKETS: usize = 1 << 8;

/// The latch-free tables' size (their default
/// [`Builder::buckets`](crate::Builder::buckets)): 4,096 buckets, enough
/// that short transactions rarely share a list and few enough to stay in
/// cache (MEASUREMENTS.md, "A latched table that grows; 4,096 latch-free
/// buckets"). These tables do not grow: a
/// new lock walks its bucket's list, so a transaction's cost per lock
/// grows with the locks it holds (the same entry); set more buckets
/// for transactions that hold hundreds of thousands.
pub const DEFAULT_LATCHFREE_BUCKETS: usize = 1 << 12;

/// The most buckets [`Builder::buckets`](crate::Builder::buckets) takes (2^24).
pub const MAX_BUCKETS: usize = 1 << 24;

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
    /// The latch-free table with the multicore slides' append: one swap of
    /// the bucket's tail, the request linked ACTIVE and then deciding
    /// whether it is granted or waits. The same lists otherwise; slower
    /// than `LatchFree` on a hot lock (MEASUREMENTS.md, "The slides' append
    /// as a table of its own").
    LatchFreeSwap,
    /// `Global` with its latch elided by Intel RTM (`heirloom_rtm`): each
    /// section a hardware transaction that reads the latch's word, the
    /// latch taken after aborts (`Retry::default()`). Where the CPU has no
    /// RTM, every section takes the latch.
    GlobalHtm,
    /// `Latched` with its lock heads' latches elided by Intel RTM on the
    /// paths every transaction takes (acquire, release, conversion,
    /// cancel); binding a head to a lock and the rarer paths take the
    /// latch. Where the CPU has no RTM, every section takes the latch.
    LatchedHtm,
    /// Lock-server threads, each the only owner of one partition of the
    /// lock space; clients send requests through their own slots in shared
    /// memory (message-passing locking). At most
    /// [`MAX_PARTITIONS`](TableKind::MAX_PARTITIONS) partitions.
    Server {
        /// Partitions, one server thread each.
        partitions: u16,
    },
    /// No lock table and no locking at all: `lock` and `lock_all` return at
    /// once and nothing is held, so transactions are not isolated. Not a
    /// lock manager but the ceiling one is measured against ("no
    /// concurrency control" in the TSX paper): use it only where
    /// transactions cannot conflict (one thread, or work that only reads).
    /// Begin and commit still run (the exclusive-mode gate, statistics).
    NoLocking,
}

impl TableKind {
    /// Every kind, for sweeps and tests (the server with two partitions, so
    /// that requests and deadlocks cross partitions).
    pub const ALL: [TableKind; 7] = [
        TableKind::Global,
        TableKind::Latched,
        TableKind::LatchFree,
        TableKind::LatchFreeSwap,
        TableKind::Server { partitions: 2 },
        TableKind::GlobalHtm,
        TableKind::LatchedHtm,
    ];

    /// The latch-free lists, with either append (`LatchFree`,
    /// `LatchFreeSwap`).
    pub fn is_latch_free(&self) -> bool {
        matches!(self, TableKind::LatchFree | TableKind::LatchFreeSwap)
    }

    /// Takes intention locks on the fast path when
    /// [`Builder::fast_path`](crate::Builder::fast_path) is on (the default):
    /// the latched and the latch-free tables.
    pub fn has_fast_path(&self) -> bool {
        matches!(self, TableKind::Latched | TableKind::LatchedHtm) || self.is_latch_free()
    }

    /// Elides its latches with Intel RTM where the CPU has it (`GlobalHtm`,
    /// `LatchedHtm`).
    pub fn is_elided(&self) -> bool {
        matches!(self, TableKind::GlobalHtm | TableKind::LatchedHtm)
    }

    /// The table this kind is built on: `Global` for `GlobalHtm`, `Latched`
    /// for `LatchedHtm`, itself otherwise (the elided kinds behave as their
    /// base in everything but the latch).
    pub fn base(&self) -> TableKind {
        match self {
            TableKind::GlobalHtm => TableKind::Global,
            TableKind::LatchedHtm => TableKind::Latched,
            k => *k,
        }
    }

    /// The most partitions of [`TableKind::Server`].
    pub const MAX_PARTITIONS: u16 = server::MAX_PARTITIONS;

    /// The name of the design (the server's partitions not included; see
    /// the `Display` form for that).
    pub fn name(&self) -> &'static str {
        match self {
            TableKind::Global => "global",
            TableKind::Latched => "latched",
            TableKind::LatchFree => "latchfree",
            TableKind::LatchFreeSwap => "latchfree-swap",
            TableKind::GlobalHtm => "global-htm",
            TableKind::LatchedHtm => "latched-htm",
            TableKind::Server { .. } => "server",
            TableKind::NoLocking => "none",
        }
    }
}

/// The name used on command lines and in reports: the design's name, and
/// for a server with more than one partition `server:N`.
impl std::fmt::Display for TableKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableKind::Server { partitions } if *partitions != 1 => write!(f, "server:{partitions}"),
            k => f.write_str(k.name()),
        }
    }
}

impl std::str::FromStr for TableKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown lock table `{s}` (expected global, latched, latchfree, latchfree-swap, global-htm, latched-htm, server, server:N with N from 1 to {}, or none)",
                server::MAX_PARTITIONS
            )
        };
        match s {
            "global" => Ok(TableKind::Global),
            "latched" => Ok(TableKind::Latched),
            "latchfree" => Ok(TableKind::LatchFree),
            "latchfree-swap" => Ok(TableKind::LatchFreeSwap),
            "global-htm" => Ok(TableKind::GlobalHtm),
            "latched-htm" => Ok(TableKind::LatchedHtm),
            "server" => Ok(TableKind::Server { partitions: 1 }),
            "none" => Ok(TableKind::NoLocking),
            _ => match s.strip_prefix("server:").map(str::parse::<u16>) {
                Some(Ok(n)) if (1..=server::MAX_PARTITIONS).contains(&n) => Ok(TableKind::Server { partitions: n }),
                _ => Err(bad()),
            },
        }
    }
}

/// One try-acquisition of a batch ([`Table::acquire_batch`]): the caller
/// fills `id`, `req` and `mode`; the table writes `out` and `head`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acquiring {
    pub(crate) id: LockId,
    pub(crate) req: ReqPtr,
    pub(crate) mode: Mode,
    pub(crate) out: Outcome,
    pub(crate) head: Handle,
}

/// One release of a batch ([`Table::release_batch`]): `heat` set means
/// release or keep INHERITED ([`Table::release_or_inherit`]); `out` is
/// written by the table, and items that arrive with `out` set are left
/// alone. `tag` is the caller's, untouched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Releasing {
    pub(crate) req: ReqPtr,
    pub(crate) head: Handle,
    pub(crate) heat: Option<Heat>,
    pub(crate) out: Option<Handoff>,
    pub(crate) tag: u32,
}

/// Who calls the lock table: an agent (its counters, and its index, which
/// names its slots on the server table).
#[derive(Clone, Copy)]
pub(crate) struct Caller<'a> {
    pub(crate) counters: &'a AgentCounters,
    pub(crate) agent: u32,
}

/// How a table finds a linked request's lock again: a word each kind
/// encodes its own way (the global table: the queue's slab index; the
/// latched table: the lock head's address; the latch-free tables: the
/// bucket, the fast-path slot and flags; the server: the partition and the
/// queue's index there; a fast hold: [`Handle::FAST`] and its slot). Valid
/// while the request is linked; opaque above the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle(pub(crate) usize);

impl Handle {
    /// The bit that marks a fast hold's handle (`table/fast.rs`) on the
    /// tables that have a fast path; no other handle of any table sets it
    /// (addresses, slab and bucket indexes are far below it).
    pub(crate) const FAST: usize = 1 << 63;

    /// Is this the handle of a fast hold: granted without a request in the
    /// table, so never passed on by inheritance? One test, whatever the
    /// table (the transaction asks it for every lock it takes and releases).
    #[inline]
    pub(crate) fn is_fast(self) -> bool {
        self.0 & Self::FAST != 0
    }
}

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
    pub(crate) head: Handle,
}

impl Converting {
    pub(crate) fn in_place(outcome: Outcome, req: ReqPtr, head: Handle) -> Self {
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
    LatchFreeSwap(latchfree::LatchFree<true>),
    Server(server::Server),
}

impl Table {
    /// A table of `kind`; `sli`: the manager passes locks on by inheritance
    /// (the latched table then pays a barrier when such a lock gets its
    /// first waiter); `fast_path`: the latched and the latch-free table
    /// take intention locks on their fast path (`table/fast.rs`), and with
    /// `fast_rows` row S locks too (`table/fast/rows.rs`);
    /// `buckets`: of the latched and latch-free tables (`None`: the kind's
    /// default, [`DEFAULT_BUCKETS`] or [`DEFAULT_LATCHFREE_BUCKETS`]).
    pub(crate) fn new(kind: TableKind, buckets: Option<usize>, sli: bool, fast_path: bool, fast_rows: bool) -> Self {
        let first = buckets.unwrap_or(DEFAULT_BUCKETS);
        let buckets = buckets.unwrap_or(DEFAULT_LATCHFREE_BUCKETS);
        match kind {
            TableKind::Global => Table::Global(global::Global::new(false)),
            TableKind::GlobalHtm => Table::Global(global::Global::new(true)),
            TableKind::Latched => Table::Latched(latched::Latched::new(first, sli, fast_path, fast_rows, false)),
            TableKind::LatchedHtm => Table::Latched(latched::Latched::new(first, sli, fast_path, fast_rows, true)),
            TableKind::LatchFree => Table::LatchFree(latchfree::LatchFree::new(buckets, fast_path, fast_rows)),
            TableKind::LatchFreeSwap => Table::LatchFreeSwap(latchfree::LatchFree::new(buckets, fast_path, fast_rows)),
            TableKind::Server { partitions } => Table::Server(server::Server::new(partitions)),
            // Never asked (the transaction takes no lock): the smallest
            // table, so that the interface stays total.
            TableKind::NoLocking => Table::Latched(latched::Latched::new(1, false, false, false, false)),
        }
    }

    /// A new agent `agent` is about to use the table.
    pub(crate) fn attach(&self, agent: u32) {
        if let Table::Server(t) = self {
            t.attach(agent);
        }
    }

    /// A pool of request nodes for agent `agent`, reusing given-back nodes
    /// as soon as this table allows (see `nodes.rs`).
    pub(crate) fn nodes(&self, agent: u32) -> Nodes {
        match self {
            Table::Global(_) | Table::Latched(_) | Table::Server(_) => Nodes::new(Reuse::Unlinked, agent, || {}),
            Table::LatchFree(_) | Table::LatchFreeSwap(_) => {
                Nodes::new(Reuse::AfterGracePeriod, agent, latchfree::hand_over_retired)
            }
        }
    }

    /// Links a new request for `id` in `mode`. A refused request is not
    /// left linked; its node goes back with `Nodes::give_back` (the
    /// latch-free table with the swap append links it before it knows,
    /// and withdraws it). `try_fast`: a request the fast path takes (IS
    /// and IX above rows, S on a row) tries it first; `false` when the
    /// caller tried it already ([`Table::try_fast_hold`]) and was turned
    /// away, so that a refusal is not paid twice (nor counted twice
    /// toward a stripe's reopening).
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn acquire(
        &self,
        a: Caller<'_>,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        try_fast: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, Handle) {
        let c = a.counters;
        match self {
            // SAFETY: this function's contract.
            Table::Global(t) => unsafe { t.acquire(c, id, r, mode, may_wait) },
            // SAFETY: this function's contract.
            Table::Latched(t) => unsafe { t.acquire(c, id, r, mode, may_wait, try_fast, wake) },
            // SAFETY: this function's contract.
            Table::LatchFree(t) => unsafe { t.acquire(c, id, r, mode, may_wait, try_fast, wake) },
            // SAFETY: this function's contract.
            Table::LatchFreeSwap(t) => unsafe { t.acquire(c, id, r, mode, may_wait, try_fast, wake) },
            Table::Server(t) => t.acquire(a, id, r, mode, may_wait),
        }
    }

    /// Try-acquires every item (`may_wait == false`: a request that cannot
    /// be granted at once is refused and not left linked), in any order. The
    /// items name distinct locks. The server sends one message per
    /// partition; the global table takes its latch once.
    ///
    /// # Safety
    /// Every `req` as `r` in [`Table::acquire`].
    pub(crate) unsafe fn acquire_batch(&self, a: Caller<'_>, items: &mut [Acquiring], wake: &mut Vec<ReqPtr>) {
        let c = a.counters;
        match self {
            // SAFETY: this function's contract.
            Table::Global(t) => unsafe { t.acquire_batch(c, items) },
            Table::Server(t) => t.acquire_batch(a, items),
            _ => {
                for it in items {
                    // SAFETY: this function's contract.
                    (it.out, it.head) = unsafe { self.acquire(a, it.id, it.req, it.mode, false, true, wake) };
                }
            }
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
        a: Caller<'_>,
        id: LockId,
        h: Handle,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting {
        let c = a.counters;
        match self {
            Table::Global(t) => Converting::in_place(
                // SAFETY: this function's contract.
                t.with(c, h, |q| unsafe { q.convert(r, to, may_wait, wake_behind, wake) }),
                r,
                h,
            ),
            // SAFETY: this function's contract.
            Table::Latched(t) => unsafe { t.convert(c, id, h, r, to, may_wait, wake_behind, wake, nodes) },
            // SAFETY: this function's contract.
            Table::LatchFree(t) => unsafe { t.convert(c, id, h, r, to, may_wait, wake, nodes) },
            // SAFETY: this function's contract.
            Table::LatchFreeSwap(t) => unsafe { t.convert(c, id, h, r, to, may_wait, wake, nodes) },
            Table::Server(t) => Converting::in_place(t.convert(a, h, r, to, may_wait, wake_behind), r, h),
        }
    }

    /// The intention-lock fast path (`table/fast.rs`), when this table has
    /// it on.
    #[inline]
    pub(crate) fn fast(&self) -> Option<&fast::Fast> {
        match self {
            Table::Latched(t) => t.fast(),
            Table::LatchFree(t) => t.fast(),
            Table::LatchFreeSwap(t) => t.fast(),
            Table::Global(_) | Table::Server(_) => None,
        }
    }

    /// Takes `id` (`fast::eligible`) in `mode` (IS or IX) on the fast path
    /// for transaction `txn` (age `ts`) of agent `a`, with no request node:
    /// the fast hold's handle, or `None` if it cannot be granted so now
    /// (the caller then makes a request). Only for a table with
    /// [`Table::fast`].
    #[inline(always)]
    pub(crate) fn try_fast_hold(
        &self,
        a: Caller<'_>,
        id: LockId,
        mode: Mode,
        txn: u64,
        ts: u64,
        wake: &mut Vec<ReqPtr>,
    ) -> Option<Handle> {
        match self {
            Table::Latched(t) => t.try_fast_hold(a, id, mode, txn, ts, wake),
            Table::LatchFree(t) => t.try_fast_hold(a, id, mode, txn, ts, wake),
            Table::LatchFreeSwap(t) => t.try_fast_hold(a, id, mode, txn, ts, wake),
            Table::Global(_) | Table::Server(_) => None,
        }
    }

    /// Releases agent `a`'s fast hold `h` of `id` in `mode` without reading
    /// its node (which it may not have, see [`Table::try_fast_hold`]).
    #[inline(always)]
    pub(crate) fn release_fast_hold(&self, a: Caller<'_>, id: LockId, h: Handle, mode: Mode, wake: &mut Vec<ReqPtr>) {
        match self {
            Table::Latched(t) => t.release_fast_hold(a, id, h, mode, wake),
            Table::LatchFree(t) => t.release_fast_hold(a, id, h, mode, wake),
            Table::LatchFreeSwap(t) => t.release_fast_hold(a, id, h, mode, wake),
            Table::Global(_) | Table::Server(_) => unreachable!("a fast hold of a table without a fast path"),
        }
    }

    /// Converts agent `a`'s fast IS hold `h` of `id` to IX in place
    /// (`Fast::upgrade`) without reading its node; `false` (with the
    /// wake-up duty done) if a strong request is counted, and the caller
    /// converts as for any request.
    #[inline]
    pub(crate) fn upgrade_fast_hold(&self, a: Caller<'_>, id: LockId, h: Handle, wake: &mut Vec<ReqPtr>) -> bool {
        match self {
            Table::Latched(t) => t.upgrade_fast_hold(a, id, h, wake),
            Table::LatchFree(t) => t.upgrade_fast_hold(a, id, h, wake),
            Table::LatchFreeSwap(t) => t.upgrade_fast_hold(a, id, h, wake),
            Table::Global(_) | Table::Server(_) => unreachable!("a fast hold of a table without a fast path"),
        }
    }

    /// Fills `r`, a node of the owner of a fast hold of `id` in `mode`
    /// taken without one, as the fast path fills the node of one taken
    /// with one, so that every other operation on the hold (a conversion)
    /// finds the node it expects. `r` carries the transaction and age.
    ///
    /// # Safety
    /// `r` is the caller's own node, linked nowhere.
    pub(crate) unsafe fn materialize_fast(&self, id: LockId, mode: Mode, r: ReqPtr) {
        // SAFETY: the caller's own node (this function's contract).
        let q = unsafe { r.get() };
        fast::fill_node(q, id.words(), mode);
        if let Table::LatchFree(_) | Table::LatchFreeSwap(_) = self {
            // Linked nowhere: its agent reuses it at once.
            q.recycle.store(crate::request::NEVER_LINKED, Ordering::Relaxed);
        }
    }

    /// Does this table take intention locks on `id` on its fast path
    /// (`table/fast.rs`)? Such a lock is never passed on, so inheritance
    /// does not ask that it be (criterion 5, see `Agent::keep_rooted_inheritance`).
    #[inline]
    pub(crate) fn fast_path_for(&self, id: LockId) -> bool {
        let on = match self {
            Table::Latched(t) => t.has_fast_path(),
            Table::LatchFree(t) => t.has_fast_path(),
            Table::LatchFreeSwap(t) => t.has_fast_path(),
            Table::Global(_) | Table::Server(_) => false,
        };
        on && fast::eligible(id)
    }

    /// Whether [`Table::release_now`] releases at once (the tables that
    /// gain nothing from a batch release).
    #[inline]
    pub(crate) fn releases_at_once(&self) -> bool {
        matches!(self, Table::Latched(_) | Table::LatchFree(_) | Table::LatchFreeSwap(_))
    }

    /// Unlinks the granted `r`.
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    pub(crate) unsafe fn release(&self, a: Caller<'_>, h: Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        let c = a.counters;
        match self {
            Table::Global(t) => t.release(c, h, r, wake),
            // SAFETY: this function's contract.
            Table::Latched(t) => unsafe { t.release(c, h, r, wake) },
            // SAFETY: this function's contract.
            Table::LatchFree(t) => unsafe { t.release(c, h, r, wake) },
            // SAFETY: this function's contract.
            Table::LatchFreeSwap(t) => unsafe { t.release(c, h, r, wake) },
            Table::Server(t) => {
                t.release(a, h, r, None);
            }
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
        a: Caller<'_>,
        h: Handle,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        let c = a.counters;
        match self {
            // SAFETY: this function's contract.
            Table::Global(t) => unsafe { t.release_or_inherit(c, h, r, heat, wake) },
            // SAFETY: this function's contract.
            Table::Latched(t) => unsafe { t.update(c, h, wake, |q, w| q.release_or_inherit(r, heat, w)) },
            // SAFETY: this function's contract.
            Table::LatchFree(t) => unsafe { t.release_or_inherit(c, h, r, heat, wake) },
            // SAFETY: this function's contract.
            Table::LatchFreeSwap(t) => unsafe { t.release_or_inherit(c, h, r, heat, wake) },
            Table::Server(t) => t.release(a, h, r, Some(heat)),
        }
    }

    /// One release of a commit or abort, done now by the tables that gain
    /// nothing from a batch (`Latched`, `LatchFree`: a latch or a list per
    /// lock either way), which set `it.out` and answer `true`; the others
    /// answer `false` and the item goes into the batch for
    /// [`Table::release_batch`]. An item with `out` already set is done.
    ///
    /// # Safety
    /// As [`Table::release_batch`] for the one item.
    #[inline]
    pub(crate) unsafe fn release_now(&self, a: Caller<'_>, it: &mut Releasing, wake: &mut Vec<ReqPtr>) -> bool {
        if it.out.is_some() {
            return true;
        }
        match self {
            _ if !self.releases_at_once() => false,
            _ => {
                it.out = Some(match it.heat {
                    None => {
                        // SAFETY: this function's contract.
                        unsafe { self.release(a, it.head, it.req, wake) };
                        Handoff::Released
                    }
                    // SAFETY: this function's contract.
                    Some(heat) => unsafe { self.release_or_inherit(a, it.head, it.req, heat, wake) },
                });
                true
            }
        }
    }

    /// The releases of a commit or abort at once: each item is released,
    /// or with `heat` released or kept INHERITED; items whose `out` is set
    /// are skipped. The server sends one message per partition; the global
    /// table takes its latch once. The order of the items may change.
    ///
    /// # Safety
    /// Every item's `req` and `head` as `r` and `h` in the type's docs.
    pub(crate) unsafe fn release_batch(&self, a: Caller<'_>, items: &mut [Releasing], wake: &mut Vec<ReqPtr>) {
        let c = a.counters;
        match self {
            // SAFETY: this function's contract.
            Table::Global(t) => unsafe { t.release_batch(c, items, wake) },
            Table::Server(t) => t.release_batch(a, items),
            _ => {
                for it in items {
                    // SAFETY: this function's contract.
                    unsafe { self.release_now(a, it, wake) };
                }
            }
        }
    }

    /// At commit, for a lock the transaction reclaimed from inheritance:
    /// passes it on again without a latch if the table can tell that nobody
    /// waits (`Latched`, `LatchFree`).
    ///
    /// On the latched table a lock passed on this way is not settled yet:
    /// the caller must call [`Table::recheck_passed`] with it once every
    /// lock of the commit has been passed on, before the agent waits or
    /// sleeps (one fence for all of them).
    ///
    /// # Safety
    /// See the type's docs.
    #[inline]
    pub(crate) unsafe fn reinherit(&self, a: Caller<'_>, h: Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Reinherit {
        let c = a.counters;
        match self {
            Table::Global(_) | Table::Server(_) => Reinherit::Declined,
            Table::Latched(t) => {
                // SAFETY: this function's contract.
                if unsafe { t.reinherit(h, r) } {
                    Reinherit::Passed
                } else {
                    Reinherit::Declined
                }
            }
            // SAFETY: this function's contract.
            Table::LatchFree(t) => unsafe { t.reinherit(c, h, r, wake) },
            // SAFETY: this function's contract.
            Table::LatchFreeSwap(t) => unsafe { t.reinherit(c, h, r, wake) },
        }
    }

    /// After [`Table::reinherit`] passed locks on: one SeqCst fence (none
    /// if `heads` is empty), then each of `heads` is settled if somebody
    /// has come to wait for it meanwhile (the owner's half of the Dekker in
    /// `latched.rs`). `heads` may name locks passed on under their latch
    /// too; settling those again is harmless. Nothing to do on the other
    /// tables.
    ///
    /// # Safety
    /// Every handle is one this table returned with a request of the
    /// caller's that is still linked.
    #[inline]
    pub(crate) unsafe fn recheck_passed(
        &self,
        a: Caller<'_>,
        heads: impl Iterator<Item = Handle>,
        wake: &mut Vec<ReqPtr>,
    ) {
        if let Table::Latched(t) = self {
            let mut fenced = false;
            for h in heads {
                if !fenced {
                    fence(Ordering::SeqCst);
                    fenced = true;
                }
                // SAFETY: this function's contract.
                unsafe { t.recheck(a.counters, h, wake) };
            }
        }
    }

    /// Withdraws the waiting `r` unless it was granted meanwhile.
    ///
    /// # Safety
    /// See the type's docs.
    pub(crate) unsafe fn cancel(&self, a: Caller<'_>, h: Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        let c = a.counters;
        match self {
            // SAFETY: this function's contract.
            Table::Global(t) => unsafe { t.cancel(c, h, r, wake) },
            // SAFETY: this function's contract.
            Table::Latched(t) => unsafe { t.cancel(c, h, r, wake) },
            // SAFETY: this function's contract.
            Table::LatchFree(t) => unsafe { t.cancel(c, h, r, wake) },
            // SAFETY: this function's contract.
            Table::LatchFreeSwap(t) => unsafe { t.cancel(c, h, r, wake) },
            Table::Server(t) => t.cancel(a, h, r),
        }
    }

    /// The blockers of the waiting `r`; `false` if it no longer waits.
    ///
    /// # Safety
    /// `h` is the handle this table returned when `r` was linked; `r` need
    /// not be alive (it is looked for before it is touched).
    pub(crate) unsafe fn blockers(&self, a: Caller<'_>, h: Handle, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        let c = a.counters;
        match self {
            Table::Global(t) => t.with(c, h, |q| q.blockers(r, out)),
            // SAFETY: a handle of this table (the contract).
            Table::Latched(t) => unsafe { t.blockers(c, h, r, out) },
            Table::LatchFree(t) => t.blockers(c, h, r, out),
            Table::LatchFreeSwap(t) => t.blockers(c, h, r, out),
            Table::Server(t) => t.blockers(a, h, r, out),
        }
    }

    /// Obtains exclusive access to the lock table's state for `id` and
    /// gives it up at once, doing nothing in between: the latch of its lock
    /// head (global: the one latch; latched: the head's latch, or its
    /// bucket's if the lock has no head), the one compare-and-swap a
    /// latch-free insert takes on its bucket, or a null message round trip
    /// to the server of its partition (the `nullcs` micro-benchmark).
    pub(crate) fn null_section(&self, a: Caller<'_>, id: LockId) {
        let c = a.counters;
        match self {
            Table::Global(t) => t.null_section(c),
            Table::Latched(t) => t.null_section(c, id),
            Table::LatchFree(t) => t.null_section(c, id),
            Table::LatchFreeSwap(t) => t.null_section(c, id),
            Table::Server(t) => t.null(a, id),
        }
    }

    /// Appends every lock with live requests.
    pub(crate) fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        match self {
            Table::Global(t) => t.snapshot(now_ns, out),
            Table::Latched(t) => t.snapshot(now_ns, out),
            Table::LatchFree(t) => t.snapshot(now_ns, out),
            Table::LatchFreeSwap(t) => t.snapshot(now_ns, out),
            Table::Server(t) => t.snapshot(now_ns, out),
        }
    }

    /// Server table: the partition of `h` if its server has failed (a
    /// waiter there must give up); `None` on every other table.
    #[inline]
    pub(crate) fn failed(&self, h: Handle) -> Option<usize> {
        match self {
            Table::Server(t) => t.failed(h),
            _ => None,
        }
    }

    /// The elided tables' counters.
    pub(crate) fn elision(&self) -> Option<heirloom_rtm::ElisionStats> {
        match self {
            Table::Global(t) => t.elision(),
            Table::Latched(t) => t.elision(),
            _ => None,
        }
    }

    /// Server table: the partitions whose server has failed.
    pub(crate) fn failed_partitions(&self) -> Vec<usize> {
        match self {
            Table::Server(t) => t.failed_partitions(),
            _ => Vec::new(),
        }
    }
}

/// A latch [`latch`] can take: parking_lot's `Mutex` (the global table's
/// one latch) or [`Latch`] (the latched table's heads and buckets).
pub(crate) trait TryLatch {
    type Guard<'a>
    where
        Self: 'a;
    fn try_latch(&self) -> Option<Self::Guard<'_>>;
    fn latch_waiting(&self) -> Self::Guard<'_>;
}

impl<T> TryLatch for Mutex<T> {
    type Guard<'a>
        = MutexGuard<'a, T>
    where
        T: 'a;

    #[inline]
    fn try_latch(&self) -> Option<MutexGuard<'_, T>> {
        // The sharing instrument (`sharing.rs`): parking_lot's word and
        // the value beside it are written, not through the shim's atomics.
        crate::sharing::note_range(std::ptr::from_ref(self) as usize, std::mem::size_of::<Self>());
        self.try_lock()
    }

    fn latch_waiting(&self) -> MutexGuard<'_, T> {
        crate::sharing::note_range(std::ptr::from_ref(self) as usize, std::mem::size_of::<Self>());
        self.lock()
    }
}

impl<T> TryLatch for Latch<T> {
    type Guard<'a>
        = LatchGuard<'a, T>
    where
        T: 'a;

    #[inline]
    fn try_latch(&self) -> Option<LatchGuard<'_, T>> {
        self.try_lock()
    }

    fn latch_waiting(&self) -> LatchGuard<'_, T> {
        self.lock()
    }
}

/// Takes `m`, counting the acquisition in `latch_contended` if it found the
/// latch held.
#[inline]
pub(crate) fn latch<'a, L: TryLatch>(m: &'a L, c: &AgentCounters) -> L::Guard<'a> {
    latch_heat(m, c).0
}

/// [`latch`], also saying whether the latch was found held (the heat that
/// speculative lock inheritance looks at).
#[inline]
pub(crate) fn latch_heat<'a, L: TryLatch>(m: &'a L, c: &AgentCounters) -> (L::Guard<'a>, bool) {
    match m.try_latch() {
        Some(g) => (g, false),
        None => (latch_slow(m, c), true),
    }
}

#[cold]
#[inline(never)]
fn latch_slow<'a, L: TryLatch>(m: &'a L, c: &AgentCounters) -> L::Guard<'a> {
    c.latch_contended.bump();
    m.latch_waiting()
}
