//! Lock tables: where requests live.
//!
//! `Global` and `Latched` keep a [`Queue`](crate::queue::Queue) per lock
//! with live requests and guard it with latches; `LatchFree` keeps per-bucket
//! request lists and no latch at all (`LatchFreeSwap`: the same lists with
//! the multicore slides' append, one body generic over the append);
//! `Server` keeps queues on lock-server threads that alone touch them, and
//! clients send it messages. The latched and the latch-free tables share
//! one fast path for intention locks and row S locks (`fast.rs`, its
//! layer over the tables in `fast/holds.rs`).
//!
//! Every kind implements one interface, [`LockTable`], an `unsafe trait`
//! whose rules are written once, on the trait: acquire, convert, release,
//! cancel a wait, list a waiter's blockers, snapshot. Each kind reads the
//! transaction's opaque [`Handle`] as its own typed handle. The manager
//! holds a [`Table`], an enum of the kinds (the registry below: adding a
//! kind is its file and one line there) that implements the trait by
//! forwarding to the kind it holds: static dispatch, no `dyn` call on the
//! hot path. Waiting, conflict policies and deadlock detection live above
//! the table (`txn/`, `deadlock.rs`) and work unchanged for every kind; no
//! module of this one calls up into them.

pub(crate) mod fast;
pub(crate) mod global;
mod kind;
pub(crate) mod latched;
pub(crate) mod latchfree;
pub(crate) mod server;

pub use kind::TableKind;

use crate::id::LockId;
use crate::inherit::Heat;
use crate::mode::Mode;
use crate::monitor::LockInfo;
use crate::nodes::{Nodes, Reuse};
use crate::queue::{Blocker, Cancel, Handoff, Outcome};
use crate::request::ReqPtr;
use crate::stats::AgentCounters;

/// The latched table's first size (its default
/// [`Builder::buckets`](crate::Builder::buckets)): 256 hash buckets, few
/// enough that the buckets and the heads in use stay in cache. The table
/// grows from there, doubling its buckets when its chains average more
/// than a few heads that are all in use, so a transaction that holds
/// hundreds of thousands of locks pays about as much for the last as for
/// the first (the crate's MEASUREMENTS.md, "A latched table that grows").
pub const DEFAULT_BUCKETS: usize = 1 << 8;

/// Buckets the latch-free tables' default size gives every core beyond
/// the first ([`default_latchfree_buckets`]).
pub const LATCHFREE_BUCKETS_PER_CORE: usize = 1 << 12;

/// The most buckets the latch-free tables' default size takes (2^17, 16
/// MiB of buckets; [`default_latchfree_buckets`]).
pub const LATCHFREE_BUCKETS_DEFAULT_MOST: usize = 1 << 17;

/// The latch-free tables' size by default ([`Builder::buckets`](crate::Builder::buckets)), and
/// the first size of the latched table with spare heads
/// ([`default_buckets`]), on a machine whose threads run on `cores` cores
/// (the manager asks `std::thread::available_parallelism`):
/// [`LATCHFREE_BUCKETS_PER_CORE`] for every core beyond the first, rounded
/// up to a power of two, at least 4,096 and at most
/// [`LATCHFREE_BUCKETS_DEFAULT_MOST`]: 4,096 on one or two cores, 65,536
/// on sixteen, 131,072 from 32 on.
///
/// A new lock takes its bucket's line with a compare-and-swap, and on many
/// cores that line costs a transfer between caches when another thread
/// wrote it shortly before. Each added thread spreads its transactions over
/// the same buckets, so the table grows with the cores to keep that chance
/// where two threads have it with 4,096 buckets, which are few enough to
/// stay in one core's cache (MEASUREMENTS.md, "A latched table that grows;
/// 4,096 latch-free buckets", and "Recent and stale shared writes; buckets
/// by the core" for the counts by size). Both latch-free tables
/// ([`TableKind::LatchFree`], [`TableKind::LatchFreeSwap`]) split a list
/// that got long into lists below it, so a transaction that holds a
/// million locks is not quadratic at any size (MEASUREMENTS.md,
/// "Latch-free lists that split", "The swap table splits its lists").
pub fn default_latchfree_buckets(cores: usize) -> usize {
    LATCHFREE_BUCKETS_PER_CORE
        .saturating_mul(cores.saturating_sub(1))
        .clamp(LATCHFREE_BUCKETS_LEAST, LATCHFREE_BUCKETS_DEFAULT_MOST)
        .next_power_of_two()
}

/// A `kind` of table's size by default ([`Builder::buckets`](crate::Builder::buckets))
/// on a machine whose threads run on `cores` cores; `None` for the tables
/// without hash buckets (global, server, no locking).
///
/// * The latch-free tables ([`TableKind::LatchFree`],
///   [`TableKind::LatchFreeSwap`]) and the latched table with spare heads
///   ([`TableKind::LatchedSpares`]) follow the cores,
///   [`default_latchfree_buckets`]: more threads spread their locks over
///   more bucket lines, so that a bucket another thread wrote is likely
///   one it wrote long ago. The spares' table can: a release that empties
///   a head takes it out of its bucket into the agent's spares, so the
///   heads in the table are those of live locks, whatever the bucket
///   count, and the agent's next miss binds a head whose lines it wrote
///   last (MEASUREMENTS.md, "Spare heads by the core").
/// * The latched table ([`TableKind::Latched`], [`TableKind::LatchedHtm`])
///   starts at [`DEFAULT_BUCKETS`] and grows: it keeps an emptied head
///   bound in its bucket, four a bucket, so that more buckets keep more
///   heads, and past the caches one thread's lock-manager time doubled on
///   sixteen cores (MEASUREMENTS.md, "One fast attempt per request;
///   bucket counts on sixteen cores").
pub fn default_buckets(kind: TableKind, cores: usize) -> Option<usize> {
    match kind {
        TableKind::LatchFree | TableKind::LatchFreeSwap | TableKind::LatchedSpares => {
            Some(default_latchfree_buckets(cores))
        }
        TableKind::Latched | TableKind::LatchedHtm => Some(DEFAULT_BUCKETS),
        TableKind::Global | TableKind::GlobalHtm | TableKind::Server { .. } | TableKind::NoLocking => None,
    }
}

/// The fewest buckets the latch-free tables' default takes (one or two
/// cores).
const LATCHFREE_BUCKETS_LEAST: usize = 1 << 12;

/// The most buckets [`Builder::buckets`](crate::Builder::buckets) takes (2^24).
pub const MAX_BUCKETS: usize = 1 << 24;

/// One try-acquisition of a batch ([`LockTable::acquire_batch`]): the caller
/// fills `id`, `req` and `mode`; the table writes `out` and `head`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acquiring {
    pub(crate) id: LockId,
    pub(crate) req: ReqPtr,
    pub(crate) mode: Mode,
    pub(crate) out: Outcome,
    pub(crate) head: Handle,
}

/// One release of a batch ([`LockTable::release_batch`]): `heat` set means
/// release or keep INHERITED ([`LockTable::release_or_inherit`]); `out` is
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

#[cfg(test)]
impl<'a> Caller<'a> {
    /// A caller for the tables' own tests: `counters`, agent 0 (the agent
    /// a request's node names is the one that counts).
    pub(crate) fn of(counters: &'a AgentCounters) -> Self {
        Caller { counters, agent: 0 }
    }
}

/// How a table finds a linked request's lock again, as the transaction
/// keeps it: one word, opaque above the table. Each kind reads it as its
/// own typed handle ([`LockTable::Handle`]), which alone knows the
/// encoding: `global::At` (the queue's slab index), `latched::At` (the
/// lock head's address, or a fast hold's slot), `latchfree::At` (the
/// bucket, the fast-path slot and flags), `server::At` (the partition and
/// the queue's index there). Valid while the request is linked.
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

/// What [`LockTable::convert`] started.
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

/// What [`LockTable::reinherit`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reinherit {
    /// Passed on again without a lock-table operation.
    Passed,
    /// Somebody waits: released (the latch-free table decides in one go).
    Released,
    /// Not decided: use [`LockTable::release_or_inherit`].
    Declined,
}

/// A lock table: the one interface every kind implements, and that the
/// transaction layer calls (through [`Table`]).
///
/// # Safety
///
/// Implementing it is `unsafe`: the layers above trust these rules without
/// checking them, and a table that breaks one breaks isolation or frees a
/// request somebody still reads.
///
/// 1. **Grants.** A request is granted only when it is compatible with
///    every request granted on its lock (its owner's own excepted, and for
///    a waiting request every one queued ahead of it as the queue's order
///    says), fast holds (`fast.rs`) included.
/// 2. **Wake-ups.** A request that was waiting and is granted, or doomed
///    by a cancel, is pushed to `wake` by the call that granted it, exactly
///    once; the caller wakes its owner (`agent::wake_granted`). A call that
///    grants nothing pushes nothing. No waiter is left waiting while it
///    could be granted (no lost wake-up), whatever the interleaving.
/// 3. **Handles.** The handle returned with a linked request finds its
///    lock again for as long as the request stays linked, from any thread
///    of the caller's agent; a fast hold's handle (`Handle::is_fast`) is
///    never passed to the methods that take a linked request.
/// 4. **Nodes.** A table does not keep a pointer to a request past its
///    unlinking, except as [`LockTable::nodes`]' reuse rule allows (the
///    latch-free tables: read until a grace period passes).
/// 5. **Snapshots** list every lock with a live or fast-held request, at
///    a moment between the call's start and end per lock.
///
/// ## The contract of the methods that take a request or a handle
///
/// They are `unsafe` to call: the table dereferences what it is given, and
/// which pointer is alive is the caller's knowledge (`request.rs`,
/// `ReqPtr`).
///
/// * `r` is the caller's own request (its agent's node, `ReqPtr` contract
///   1): for `acquire` one linked nowhere, for the others one that
///   `acquire` of this table linked and that is still linked;
/// * `h` is the handle this table's `acquire` returned with `r`.
///
/// `blockers` also takes another agent's waiting request, read from its
/// `WaitInfo` under the registry lock (contract 4); the tables look for it
/// in the queue or list before they touch it.
pub(crate) unsafe trait LockTable {
    /// How this kind finds a linked request's lock again; read from and
    /// stored as the transaction's opaque [`Handle`].
    type Handle: Copy + From<Handle> + Into<Handle>;

    /// A new agent `agent` is about to use the table.
    fn attach(&self, _agent: u32) {}

    /// The manager's policy is wait-die: from now on (before any agent
    /// uses the table) a request that may wait and finds a transaction
    /// older than its own in its way (a linked request, or a fast hold) is refused
    /// ([`Outcome::Refused`], not linked) instead of linked as waiting, and
    /// its transaction dies at once: the judgement wait-die would make at
    /// the start of its wait, made where the request is decided. A table
    /// that does not (the default) links it, and the policy judges it
    /// then (`txn/policy.rs`). Either way the same transaction dies; the
    /// early judgement spares the link, the wait's start and the cancel,
    /// and nobody else sees a waiter that is about to go.
    fn judge_wait_die(&mut self) {}

    /// A pool of request nodes for agent `agent`, reusing given-back nodes
    /// as soon as this table allows (see `nodes.rs`): at once, unless the
    /// table says otherwise.
    fn nodes(&self, agent: u32) -> Nodes {
        Nodes::new(Reuse::Unlinked, agent, || {})
    }

    /// Links a new request for `id` in `mode`. A refused request is not
    /// left linked; its node goes back with `Nodes::give_back` (the
    /// latch-free table with the swap append links it before it knows,
    /// and withdraws it). `try_fast`: a request the fast path takes (IS
    /// and IX above rows, S on a row) tries it first; `false` when the
    /// caller tried it already ([`LockTable::try_fast_hold`]) and was
    /// turned away, so that a refusal is not paid twice (nor counted twice
    /// toward a stripe's reopening).
    ///
    /// # Safety
    /// See the trait's docs.
    #[allow(clippy::too_many_arguments)] // one per input of the operation
    unsafe fn acquire(
        &self,
        a: Caller<'_>,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        try_fast: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, Self::Handle);

    /// Try-acquires every item (`may_wait == false`: a request that cannot
    /// be granted at once is refused and not left linked), in any order. The
    /// items name distinct locks. The server sends one message per
    /// partition; the global table takes its latch once; the others
    /// acquire one by one.
    ///
    /// # Safety
    /// Every `req` as `r` in [`LockTable::acquire`].
    unsafe fn acquire_batch(&self, a: Caller<'_>, items: &mut [Acquiring], wake: &mut Vec<ReqPtr>) {
        for it in items {
            // SAFETY: this function's contract.
            let (out, h) = unsafe { self.acquire(a, it.id, it.req, it.mode, false, true, wake) };
            (it.out, it.head) = (out, h.into());
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
    /// See the trait's docs.
    #[allow(clippy::too_many_arguments)] // one per input of the operation
    unsafe fn convert(
        &self,
        a: Caller<'_>,
        id: LockId,
        h: Self::Handle,
        r: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
        wake: &mut Vec<ReqPtr>,
        nodes: &mut Nodes,
    ) -> Converting;

    /// The intention-lock fast path (`table/fast.rs`), when this table has
    /// it on.
    #[inline]
    fn fast(&self) -> Option<&fast::Fast> {
        None
    }

    /// Does this table take intention locks on `id` on its fast path? Such
    /// a lock is never passed on, so inheritance does not ask that it be
    /// (criterion 5, see `Agent::keep_rooted_inheritance`).
    #[inline]
    fn fast_path_for(&self, id: LockId) -> bool {
        self.fast().is_some() && fast::eligible(id)
    }

    /// Takes `id` (`fast::takes_fast`) in `mode` on the fast path for
    /// transaction `txn` (age `ts`) of agent `a`, with no request node:
    /// the fast hold's handle, or `None` if it cannot be granted so now
    /// (the caller then makes a request) or the table has no fast path.
    /// The tables with one answer from the shared layer
    /// (`fast::holds::try_hold`).
    #[inline]
    fn try_fast_hold(
        &self,
        _a: Caller<'_>,
        _id: LockId,
        _mode: Mode,
        _txn: u64,
        _ts: u64,
        _wake: &mut Vec<ReqPtr>,
    ) -> Option<Self::Handle> {
        None
    }

    /// Releases agent `a`'s fast hold `h` of `id` in `mode` without reading
    /// its node (which it may not have, see [`LockTable::try_fast_hold`]).
    /// `ending`: its transaction is ending and gives up every lock it has
    /// (commit or abort), so that a row hold's release may clear all of
    /// the transaction's row holds at once (`Rows::release`).
    fn release_fast_hold(
        &self,
        _a: Caller<'_>,
        _id: LockId,
        _h: Self::Handle,
        _mode: Mode,
        _ending: bool,
        _wake: &mut Vec<ReqPtr>,
    ) {
        unreachable!("a fast hold of a table without a fast path")
    }

    /// Converts agent `a`'s fast IS hold `h` of `id` to IX in place
    /// without reading its node; `false` (with the wake-up duty done) if a
    /// strong request is counted, and the caller converts as for any
    /// request.
    fn upgrade_fast_hold(&self, _a: Caller<'_>, _id: LockId, _h: Self::Handle, _wake: &mut Vec<ReqPtr>) -> bool {
        unreachable!("a fast hold of a table without a fast path")
    }

    /// Whether [`LockTable::release_now`] releases at once (the tables
    /// that gain nothing from a batch release).
    #[inline]
    fn releases_at_once(&self) -> bool {
        false
    }

    /// Unlinks the granted `r`.
    ///
    /// # Safety
    /// See the trait's docs.
    unsafe fn release(&self, a: Caller<'_>, h: Self::Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>);

    /// At commit: releases the granted `r` or keeps it INHERITED (see
    /// [`Queue::release_or_inherit`](crate::queue::Queue::release_or_inherit)).
    ///
    /// # Safety
    /// See the trait's docs.
    unsafe fn release_or_inherit(
        &self,
        a: Caller<'_>,
        h: Self::Handle,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff;

    /// One release of a commit or abort, done now by the tables that gain
    /// nothing from a batch ([`LockTable::releases_at_once`]), which set
    /// `it.out` and answer `true`; the others answer `false` and the item
    /// goes into the batch for [`LockTable::release_batch`]. An item with
    /// `out` already set is done.
    ///
    /// # Safety
    /// As [`LockTable::release_batch`] for the one item.
    #[inline]
    unsafe fn release_now(&self, a: Caller<'_>, it: &mut Releasing, wake: &mut Vec<ReqPtr>) -> bool {
        if it.out.is_some() {
            return true;
        }
        if !self.releases_at_once() {
            return false;
        }
        // SAFETY: this function's contract.
        it.out = Some(unsafe { self.release_one(a, it, wake) });
        true
    }

    /// The releases of a commit or abort at once: each item is released,
    /// or with `heat` released or kept INHERITED; items whose `out` is set
    /// are skipped. The server sends one message per partition; the global
    /// table takes its latch once. The order of the items may change.
    ///
    /// # Safety
    /// Every item's `req` and `head` as `r` and `h` in the trait's docs.
    unsafe fn release_batch(&self, a: Caller<'_>, items: &mut [Releasing], wake: &mut Vec<ReqPtr>) {
        for it in items.iter_mut().filter(|it| it.out.is_none()) {
            // SAFETY: this function's contract.
            it.out = Some(unsafe { self.release_one(a, it, wake) });
        }
    }

    /// One item of [`LockTable::release_batch`], released or with `heat`
    /// released or kept INHERITED.
    ///
    /// # Safety
    /// As [`LockTable::release_batch`] for the one item.
    #[doc(hidden)]
    #[inline]
    unsafe fn release_one(&self, a: Caller<'_>, it: &Releasing, wake: &mut Vec<ReqPtr>) -> Handoff {
        let h = Self::Handle::from(it.head);
        match it.heat {
            None => {
                // SAFETY: this function's contract.
                unsafe { self.release(a, h, it.req, wake) };
                Handoff::Released
            }
            // SAFETY: this function's contract.
            Some(heat) => unsafe { self.release_or_inherit(a, h, it.req, heat, wake) },
        }
    }

    /// At commit, for a lock the transaction reclaimed from inheritance:
    /// passes it on again without a latch if the table can tell that nobody
    /// waits (`Latched`, `LatchFree`); the others decline.
    ///
    /// On the latched table a lock passed on this way is not settled yet:
    /// the caller must call [`LockTable::recheck_passed`] with it once
    /// every lock of the commit has been passed on, before the agent waits
    /// or sleeps (one fence for all of them).
    ///
    /// # Safety
    /// See the trait's docs.
    #[inline]
    unsafe fn reinherit(&self, _a: Caller<'_>, _h: Self::Handle, _r: ReqPtr, _wake: &mut Vec<ReqPtr>) -> Reinherit {
        Reinherit::Declined
    }

    /// After [`LockTable::reinherit`] passed locks on: on the latched
    /// table one SeqCst fence (none if `heads` is empty), then each of
    /// `heads` is settled if somebody has come to wait for it meanwhile
    /// (the owner's half of the Dekker in `latched.rs`). `heads` may name
    /// locks passed on under their latch too; settling those again is
    /// harmless. Nothing to do on the other tables.
    ///
    /// # Safety
    /// Every handle is one this table returned with a request of the
    /// caller's that is still linked.
    #[inline]
    unsafe fn recheck_passed(
        &self,
        _a: Caller<'_>,
        _heads: impl Iterator<Item = Self::Handle>,
        _wake: &mut Vec<ReqPtr>,
    ) {
    }

    /// Withdraws the waiting `r` unless it was granted meanwhile.
    ///
    /// # Safety
    /// See the trait's docs.
    unsafe fn cancel(&self, a: Caller<'_>, h: Self::Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel;

    /// The blockers of the waiting `r`; `false` if it no longer waits.
    ///
    /// # Safety
    /// `h` is the handle this table returned when `r` was linked; `r` need
    /// not be alive (it is looked for before it is touched).
    unsafe fn blockers(&self, a: Caller<'_>, h: Self::Handle, r: ReqPtr, out: &mut Vec<Blocker>) -> bool;

    /// Obtains exclusive access to the lock table's state for `id` and
    /// gives it up at once, doing nothing in between: the latch of its lock
    /// head (global: the one latch; latched: the head's latch, or its
    /// bucket's if the lock has no head), the one compare-and-swap a
    /// latch-free insert takes on its bucket, or a null message round trip
    /// to the server of its partition (the `nullcs` micro-benchmark).
    fn null_section(&self, a: Caller<'_>, id: LockId);

    /// Appends every lock with live requests.
    fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>);

    /// Server table: the partition of `h` if its server has failed (a
    /// waiter there must give up); `None` on every other table.
    #[inline]
    fn failed(&self, _h: Self::Handle) -> Option<usize> {
        None
    }

    /// Server table: the partitions whose server has failed.
    fn failed_partitions(&self) -> Vec<usize> {
        Vec::new()
    }

    /// The elided tables' counters.
    fn elision(&self) -> Option<heirloom_rtm::ElisionStats> {
        None
    }
}

/// The registry of table kinds: the enum [`Table`] and `each!`, which runs
/// one expression on whichever kind a `Table` holds (a `match` whose arms
/// are each monomorphic: static dispatch). A kind is one line here.
macro_rules! registry {
    ($d:tt $($kind:ident($ty:ty)),+ $(,)?) => {
        /// The lock table of a manager: one of the kinds.
        pub(crate) enum Table {
            $($kind($ty)),+
        }

        macro_rules! each {
            ($d table:expr, $d t:ident => $d body:expr) => {
                match $d table {
                    $(Table::$kind($d t) => $d body),+
                }
            };
        }
    };
}

registry! { $
    Global(global::Global),
    GlobalHtm(global::Global<{ global::PARTS }>),
    Latched(latched::Latched),
    LatchedSpares(latched::Latched<true>),
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
    /// `buckets`: of the latched and latch-free tables (`None`:
    /// [`DEFAULT_BUCKETS`] for the latched tables, [`default_latchfree_buckets`]
    /// of one core for the latch-free ones; the manager passes every
    /// kind [`default_buckets`] for its cores).
    pub(crate) fn new(kind: TableKind, buckets: Option<usize>, sli: bool, fast_path: bool, fast_rows: bool) -> Self {
        let first = buckets.unwrap_or(DEFAULT_BUCKETS);
        let latchfree = buckets.unwrap_or(LATCHFREE_BUCKETS_LEAST);
        match kind {
            TableKind::Global => Table::Global(global::Global::new(false)),
            TableKind::GlobalHtm => Table::GlobalHtm(global::Global::new(true)),
            TableKind::Latched => Table::Latched(latched::Latched::new(first, sli, fast_path, fast_rows, false)),
            TableKind::LatchedSpares => {
                Table::LatchedSpares(latched::Latched::new(first, sli, fast_path, fast_rows, false))
            }
            TableKind::LatchedHtm => Table::Latched(latched::Latched::new(first, sli, fast_path, fast_rows, true)),
            TableKind::LatchFree => Table::LatchFree(latchfree::LatchFree::new(latchfree, fast_path, fast_rows)),
            TableKind::LatchFreeSwap => {
                Table::LatchFreeSwap(latchfree::LatchFree::new(latchfree, fast_path, fast_rows))
            }
            TableKind::Server { partitions } => Table::Server(server::Server::new(partitions)),
            // Never asked (the transaction takes no lock): the smallest
            // table, so that the interface stays total.
            TableKind::NoLocking => Table::Latched(latched::Latched::new(1, false, false, false, false)),
        }
    }

    /// The hash buckets of the latched and latch-free tables now (the
    /// latched table grows); `None` for the others.
    pub(crate) fn buckets(&self) -> Option<usize> {
        match self {
            Table::Latched(t) => Some(t.buckets()),
            Table::LatchedSpares(t) => Some(t.buckets()),
            Table::LatchFree(t) => Some(t.buckets()),
            Table::LatchFreeSwap(t) => Some(t.buckets()),
            Table::Global(_) | Table::GlobalHtm(_) | Table::Server(_) => None,
        }
    }
}

// SAFETY: forwards every method to the kind it holds, which keeps the
// rules; the handle is the kind's, read from and written to the word.
unsafe impl LockTable for Table {
    type Handle = Handle;

    fn attach(&self, agent: u32) {
        each!(self, t => t.attach(agent))
    }

    fn judge_wait_die(&mut self) {
        each!(self, t => t.judge_wait_die())
    }

    fn nodes(&self, agent: u32) -> Nodes {
        each!(self, t => t.nodes(agent))
    }

    #[inline(always)]
    unsafe fn acquire(
        &self,
        a: Caller<'_>,
        id: LockId,
        r: ReqPtr,
        mode: Mode,
        may_wait: bool,
        try_fast: bool,
        wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, Handle) {
        each!(self, t => {
            // SAFETY: this function's contract.
            let (out, h) = unsafe { t.acquire(a, id, r, mode, may_wait, try_fast, wake) };
            (out, h.into())
        })
    }

    unsafe fn acquire_batch(&self, a: Caller<'_>, items: &mut [Acquiring], wake: &mut Vec<ReqPtr>) {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.acquire_batch(a, items, wake) })
    }

    #[inline]
    unsafe fn convert(
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
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.convert(a, id, h.into(), r, to, may_wait, wake_behind, wake, nodes) })
    }

    #[inline]
    fn fast(&self) -> Option<&fast::Fast> {
        each!(self, t => t.fast())
    }

    #[inline]
    fn fast_path_for(&self, id: LockId) -> bool {
        each!(self, t => t.fast_path_for(id))
    }

    #[inline(always)]
    fn try_fast_hold(
        &self,
        a: Caller<'_>,
        id: LockId,
        mode: Mode,
        txn: u64,
        ts: u64,
        wake: &mut Vec<ReqPtr>,
    ) -> Option<Handle> {
        each!(self, t => t.try_fast_hold(a, id, mode, txn, ts, wake).map(Into::into))
    }

    #[inline(always)]
    fn release_fast_hold(
        &self,
        a: Caller<'_>,
        id: LockId,
        h: Handle,
        mode: Mode,
        ending: bool,
        wake: &mut Vec<ReqPtr>,
    ) {
        each!(self, t => t.release_fast_hold(a, id, h.into(), mode, ending, wake))
    }

    #[inline]
    fn upgrade_fast_hold(&self, a: Caller<'_>, id: LockId, h: Handle, wake: &mut Vec<ReqPtr>) -> bool {
        each!(self, t => t.upgrade_fast_hold(a, id, h.into(), wake))
    }

    #[inline]
    fn releases_at_once(&self) -> bool {
        each!(self, t => t.releases_at_once())
    }

    #[inline(always)]
    unsafe fn release(&self, a: Caller<'_>, h: Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.release(a, h.into(), r, wake) })
    }

    #[inline]
    unsafe fn release_or_inherit(
        &self,
        a: Caller<'_>,
        h: Handle,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.release_or_inherit(a, h.into(), r, heat, wake) })
    }

    unsafe fn release_batch(&self, a: Caller<'_>, items: &mut [Releasing], wake: &mut Vec<ReqPtr>) {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.release_batch(a, items, wake) })
    }

    #[inline]
    unsafe fn reinherit(&self, a: Caller<'_>, h: Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Reinherit {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.reinherit(a, h.into(), r, wake) })
    }

    #[inline]
    unsafe fn recheck_passed(&self, a: Caller<'_>, heads: impl Iterator<Item = Handle>, wake: &mut Vec<ReqPtr>) {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.recheck_passed(a, heads.map(Into::into), wake) })
    }

    unsafe fn cancel(&self, a: Caller<'_>, h: Handle, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.cancel(a, h.into(), r, wake) })
    }

    unsafe fn blockers(&self, a: Caller<'_>, h: Handle, r: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        // SAFETY: this function's contract.
        each!(self, t => unsafe { t.blockers(a, h.into(), r, out) })
    }

    fn null_section(&self, a: Caller<'_>, id: LockId) {
        each!(self, t => t.null_section(a, id))
    }

    fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        each!(self, t => t.snapshot(now_ns, out))
    }

    #[inline]
    fn failed(&self, h: Handle) -> Option<usize> {
        each!(self, t => t.failed(h.into()))
    }

    fn failed_partitions(&self) -> Vec<usize> {
        each!(self, t => t.failed_partitions())
    }

    fn elision(&self) -> Option<heirloom_rtm::ElisionStats> {
        each!(self, t => t.elision())
    }
}
