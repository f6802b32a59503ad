//! `Server`: message passing to lock-server threads (MPL in the words of
//! Shared Memory vs. Message Passing Locking, 1995).
//!
//! The lock space is split into partitions; each is owned by one server
//! thread, which alone touches its queues, so no latch guards them. A
//! client (an agent) reaches a server through its own slot there
//! (`server/slot.rs`): it writes a request, rings the server's doorbell and
//! waits for the reply in the same slot, spinning briefly, then parked.
//! A server scans its slots, serves each posted message in turn, wakes the
//! owners of the requests a release granted, and parks when a scan finds
//! nothing, so an idle manager burns no CPU.
//!
//! ## What goes where
//!
//! Every lock id is hashed to a partition on its own: a table's rows are
//! spread over all servers, and the table and database locks land on one
//! each. Keeping a table's hierarchy together would buy nothing: the
//! requester takes the parent before the child (one message per level
//! whatever the placement), its lock cache answers the upper levels after
//! the first row, and the hot intention locks would sit on one server
//! under any placement (the paper: "regardless of the MPL partitioning
//! scheme, all lock requests will be sent to the same global lock
//! manager"). Spreading the rows balances a one-table workload over the
//! servers instead.
//!
//! ## What stays with the client
//!
//! Everything above the queues works unchanged: the transaction's lock
//! cache, waiting (the server grants and wakes; the waiter parks on its
//! request as with every table), the conflict policies, and deadlock
//! detection: the searching client asks each server for the blockers of
//! the waiter it visits, so cycles across partitions are found as within
//! one. Inherited locks (SLI) stay with the client: reclaiming one is the
//! client's CAS on its own request, and only a miss sends a message. A
//! batch of acquisitions or of releases sends one message per partition,
//! to all partitions at once before waiting for any reply.
//!
//! ## Heat
//!
//! No latch is ever found held here; the server's equivalent is a queue of
//! requests in front of this one. An acquisition counts as contended (for
//! SLI's heat window) when the server served another message in the same
//! scan before it, or more than one in the scan before.
//!
//! ## Lifetime
//!
//! Servers start with the lock manager and stop when it is dropped (after
//! the last agent): `Drop` sets `stop`, wakes them and joins them. A client
//! thread that dies unwinds through its transaction's drop, which releases
//! its locks by messages like any abort; the servers never see it.
//!
//! ## When the server has no core
//!
//! The queues sit at the partition's desk (a mutex), which the server
//! thread holds only while it scans; it counts its scans. A client that
//! finds its server asleep when it posts serves at the desk if nobody
//! holds it, instead of waking the server (a wake-up costs a system call
//! and a scheduling round, more than serving the message; the look at
//! `sleeping` is the doorbell's, so nothing posted is left unserved). A
//! client whose
//! reply has not come by the end of a short spin that yields nothing, and
//! whose server has finished no scan since the client posted (asleep, or
//! runnable but without a core because other processes keep every core
//! busy), tries the desk; if nobody holds it, the client scans the slots
//! itself, serving its own message and any other posted one exactly as
//! the server would, and goes on. A running server finishes scans all the
//! time, so then nobody helps and messages pass as in the paper. Otherwise it parks as before: whoever holds the desk
//! is serving, and the doorbell it rang guarantees that the server thread
//! scans again after its message was posted. So while the server thread
//! runs, messages pass as in the paper; when it does not, the clients that
//! do run serve each other instead of waiting a scheduling round per
//! message.
//!
//! ## A server that fails
//!
//! A panic while a server serves a message (a bug) is caught there. The
//! partition is then marked failed, the message is answered `Failed`, and
//! every client waiting in its queues is woken: a waiter's park condition
//! reads the mark (`Server::failed`, set before the wake-ups), so none
//! sleeps through it. From then on the thread answers every message
//! `Failed` without touching its queues, whose state the panic may have
//! left half-changed: an acquisition or conversion fails with
//! `LockError::ServerFailed` (not restartable), and a release, cancel or
//! batch release of a request there is done as far as its client is
//! concerned (nothing there will be granted again). The other partitions
//! serve as before; `LockManager::failed_partitions` names the failed
//! ones.

mod slot;

use std::thread::JoinHandle;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use self::slot::{Doorbell, Slot, spin};
use super::global::Queues;
use super::{Acquiring, Caller, Converting, Handle, LockTable, Releasing};
use crate::id::LockId;
use crate::inherit::Heat;
use crate::mode::Mode;
use crate::monitor::LockInfo;
use crate::nodes::Nodes;
use crate::queue::{Blocker, Cancel, Handoff, Outcome};
use crate::request::{ReqPtr, wake_granted};
use crate::sync::{Arc, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// The most partitions a server table may have (`Handle` keeps the
/// partition in its low bits).
pub const MAX_PARTITIONS: u16 = 64;
const PART_BITS: u32 = 6;
const PART_MASK: usize = (1 << PART_BITS) - 1;

/// How long a client waiting for a batch keeps looking for the reply,
/// per item, before it parks (see `Slot::wait_patiently`).
const BATCH_ITEM_NS: u64 = 250;

/// Slots are allocated in chunks of this many, as agents appear.
const CHUNK: usize = 64;
/// Chunks a partition can have: room for 65,536 live agents.
const CHUNKS: usize = 1024;

/// A message: a request from a client, then the reply in its place.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Msg {
    /// Nothing yet.
    Empty,
    /// A null request (measures a round trip: the `nullcs` micro-benchmark).
    Null,
    Acquire {
        id: LockId,
        req: ReqPtr,
        mode: Mode,
        may_wait: bool,
    },
    Convert {
        idx: usize,
        req: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
    },
    Release {
        idx: usize,
        req: ReqPtr,
        heat: Option<Heat>,
    },
    Cancel {
        idx: usize,
        req: ReqPtr,
    },
    /// The blockers of `req`, appended to the client's `out`.
    Blockers {
        idx: usize,
        req: ReqPtr,
        out: *mut Vec<Blocker>,
    },
    /// Try-acquisitions (`may_wait == false`), in the client's array.
    AcquireBatch {
        items: *mut Acquiring,
        len: usize,
    },
    /// Releases, in the client's array.
    ReleaseBatch {
        items: *mut Releasing,
        len: usize,
    },
    Snapshot {
        now_ns: u64,
        out: *mut Vec<LockInfo>,
    },
    /// Tests: the server panics serving it (`Server::fail`).
    #[cfg_attr(any(not(test), heirloom_loom), allow(dead_code))]
    Panic,
    // Replies.
    Acquired {
        out: Outcome,
        idx: usize,
    },
    Outcome(Outcome),
    Handoff(Handoff),
    Cancelled(Cancel),
    Found(bool),
    Done,
    /// The partition's server has failed (see "A server that fails").
    Failed,
}

// SAFETY: the raw pointers in a message point into buffers of the client
// that posted it, which waits for the reply (and so keeps them alive and
// untouched) until the server has served it.
unsafe impl Send for Msg {}

struct Chunk {
    slots: [CachePadded<Slot<Msg>>; CHUNK],
}

/// What serving a partition needs: its queues and their bookkeeping. Held
/// by whoever serves: the server thread, or a client whose reply is late
/// (see "When the server has no core").
struct Desk {
    queues: Queues,
    wake: Vec<ReqPtr>,
    /// The last scan served more than one message (heat).
    busy_before: bool,
    /// The partition has failed (see "A server that fails").
    failed: bool,
}

/// One partition: the part of the server table its thread shares with the
/// clients.
struct Partition {
    doorbell: CachePadded<Doorbell>,
    /// Slots `0..clients` may be in use (grows as agents register).
    clients: CachePadded<AtomicUsize>,
    /// Set when the manager is dropped.
    stop: AtomicBool,
    /// Set when the server failed (see "A server that fails").
    failed: AtomicBool,
    chunks: Box<[AtomicPtr<Chunk>]>,
    /// The slot of callers that are not agents (`snapshot`), used under
    /// `Server::admin`.
    admin: CachePadded<Slot<Msg>>,
    /// The queues, with whoever serves them.
    desk: CachePadded<Mutex<Desk>>,
    /// Scans the server thread finished (it alone writes it): a client
    /// whose reply is late sees from it whether the server ran since it
    /// posted.
    scans: CachePadded<AtomicU64>,
}

impl Partition {
    fn new() -> Self {
        Partition {
            doorbell: CachePadded::new(Doorbell::new()),
            clients: CachePadded::new(AtomicUsize::new(0)),
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            chunks: (0..CHUNKS).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect(),
            admin: CachePadded::new(Slot::new(Msg::Empty)),
            scans: CachePadded::new(AtomicU64::new(0)),
            desk: CachePadded::new(Mutex::new(Desk {
                queues: Queues::new(),
                wake: Vec::new(),
                busy_before: false,
                failed: false,
            })),
        }
    }

    /// Serves every message posted now, once; how many it served. The
    /// caller holds the desk (so it is the partition's only server).
    fn scan(&self, d: &mut Desk, me: usize) -> usize {
        let Desk {
            queues,
            wake,
            busy_before,
            failed,
        } = d;
        let n = self.clients.load(Ordering::Acquire);
        let mut served = 0usize;
        for i in 0..n {
            let contended = *busy_before || served > 0;
            // SAFETY: the desk makes its holder the slots' only server.
            if unsafe {
                self.slot(i)
                    .serve(|m| *m = guarded(self, failed, queues, me, *m, contended, wake))
            } {
                served += 1;
                wake_granted(wake);
            }
        }
        // SAFETY: as above.
        if unsafe {
            self.admin
                .serve(|m| *m = guarded(self, failed, queues, me, *m, false, wake))
        } {
            served += 1;
            wake_granted(wake);
        }
        *busy_before = served > 1;
        served
    }

    /// The server thread's scans so far (read by a client before it posts).
    #[inline]
    fn scans(&self) -> u64 {
        self.scans.load(Ordering::Relaxed)
    }

    /// A client whose reply is late: if the server thread has finished no
    /// scan since `seen` (it is not running: asleep, or without a core)
    /// and nobody holds the desk, serves the posted messages itself (see
    /// "When the server has no core").
    #[cold]
    fn help(&self, me: usize, seen: u64) {
        if self.scans() == seen
            && let Some(mut d) = self.desk.try_lock()
        {
            self.scan(&mut d, me);
        }
    }

    /// A client whose server sleeps: serves the posted messages (its own
    /// among them) if nobody holds the desk, instead of waking the server;
    /// whether it did (see "When the server has no core").
    #[inline]
    fn serve_asleep(&self, me: usize) -> bool {
        match self.desk.try_lock() {
            Some(mut d) => {
                self.scan(&mut d, me);
                true
            }
            None => false,
        }
    }

    /// The slot of client `i`; its chunk must exist (`attach`).
    #[inline]
    fn slot(&self, i: usize) -> &Slot<Msg> {
        // Acquire: pairs with the Release CAS in `attach`.
        let c = self.chunks[i / CHUNK].load(Ordering::Acquire);
        debug_assert!(!c.is_null());
        // SAFETY: chunks are created in `attach` before a client with an
        // index in them exists, and freed only in `drop`.
        unsafe { &(*c).slots[i % CHUNK] }
    }

    /// Makes room for client `i`.
    fn attach(&self, i: usize) {
        let Some(cell) = self.chunks.get(i / CHUNK) else {
            panic!(
                "heirloom: the server lock table supports at most {} live agents",
                CHUNK * CHUNKS
            )
        };
        if cell.load(Ordering::Acquire).is_null() {
            let fresh = Box::into_raw(Box::new(Chunk {
                slots: std::array::from_fn(|_| CachePadded::new(Slot::new(Msg::Empty))),
            }));
            // Release: publishes the chunk to `slot`'s Acquire loads.
            if cell
                .compare_exchange(std::ptr::null_mut(), fresh, Ordering::Release, Ordering::Acquire)
                .is_err()
            {
                // SAFETY: ours, never published.
                drop(unsafe { Box::from_raw(fresh) });
            }
        }
        // Release: pairs with the server's Acquire load of `clients`, which
        // then finds the chunk published above.
        self.clients.fetch_max(i + 1, Ordering::Release);
    }

    fn any_pending(&self) -> bool {
        let n = self.clients.load(Ordering::Acquire);
        (0..n).any(|i| self.slot(i).pending()) || self.admin.pending() || self.stop.load(Ordering::Relaxed)
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        for c in self.chunks.iter() {
            let p = c.load(Ordering::Relaxed);
            if !p.is_null() {
                // SAFETY: allocated in `attach`; the server and every client
                // are gone (this is the last reference).
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

/// The server lock table: the clients' side, and the server threads.
pub(crate) struct Server {
    parts: Box<[Arc<Partition>]>,
    threads: Vec<JoinHandle<()>>,
    /// Serialises callers of the admin slots.
    admin: Mutex<()>,
}

impl Server {
    pub(crate) fn new(partitions: u16) -> Self {
        let n = partitions.clamp(1, MAX_PARTITIONS) as usize;
        let parts: Box<[Arc<Partition>]> = (0..n).map(|_| Arc::new(Partition::new())).collect();
        let threads = parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let p = p.clone();
                std::thread::Builder::new()
                    .name(format!("heirloom-lock-server-{i}"))
                    .spawn(move || serve_forever(&p, i))
                    .unwrap_or_else(|e| panic!("heirloom: cannot start lock server thread {i}: {e}"))
            })
            .collect();
        Server {
            parts,
            threads,
            admin: Mutex::new(()),
        }
    }

    /// The partition that owns `id`.
    #[inline]
    pub(crate) fn part_of(&self, id: LockId) -> usize {
        ((id.hash64() as u128 * self.parts.len() as u128) >> 64) as usize
    }

    /// Sends `msg` to partition `part` from agent `a` and waits for the reply.
    #[inline]
    fn call(&self, a: Caller<'_>, part: usize, msg: Msg) -> Msg {
        let p = &self.parts[part];
        let s = p.slot(a.agent as usize);
        a.counters.messages.bump();
        let seen = p.scans();
        // SAFETY: the agent's own slot (its index is its own while it
        // lives), and one message at a time: `wait` follows every `post`.
        unsafe {
            s.post(msg);
            p.doorbell.ring_or(|| p.serve_asleep(part));
            s.wait_helping(std::time::Duration::ZERO, || p.help(part, seen))
        }
    }

    /// A release, or with `heat` a release or keep INHERITED.
    fn release_or_keep(&self, a: Caller<'_>, h: At, req: ReqPtr, heat: Option<Heat>) -> Handoff {
        match self.call(a, h.part, Msg::Release { idx: h.idx, req, heat }) {
            Msg::Handoff(o) => o,
            // Nothing there will be granted again: as good as released.
            Msg::Failed => Handoff::Released,
            m => unreachable!("lock server: {m:?} in reply to a release"),
        }
    }

    /// Sends one message per partition named by `part_of_item` over the
    /// runs of `items` (sorted by partition first), to every partition
    /// before waiting for any.
    fn scatter<T>(
        &self,
        a: Caller<'_>,
        items: &mut [T],
        part_of_item: impl Fn(&T) -> usize,
        msg: impl Fn(*mut T, usize) -> Msg,
        failed: impl Fn(&mut T, usize),
    ) {
        if items.is_empty() {
            return;
        }
        if self.parts.len() > 1 {
            items.sort_unstable_by_key(&part_of_item);
        }
        let base = items.as_mut_ptr();
        let mut posted: u64 = 0; // partitions with a message out (bit per partition)
        // Each partition's run of `items` (for a `Failed` reply), and its
        // server's scans before the post (see `Partition::help`).
        let mut runs = [(0usize, 0usize); MAX_PARTITIONS as usize];
        let mut seen = [0u64; MAX_PARTITIONS as usize];
        let mut i = 0;
        while i < items.len() {
            let part = part_of_item(&items[i]);
            let mut j = i + 1;
            while j < items.len() && part_of_item(&items[j]) == part {
                j += 1;
            }
            let p = &self.parts[part];
            a.counters.messages.bump();
            seen[part] = p.scans();
            // SAFETY: the agent's own slot, with no message outstanding (each
            // partition gets one message here, waited for below). The run
            // `i..j` is handed to that server alone until its reply: the
            // runs are disjoint, and `items` is not touched until every
            // reply is in.
            unsafe {
                p.slot(a.agent as usize).post(msg(base.add(i), j - i));
                p.doorbell.ring_or(|| p.serve_asleep(part));
            }
            posted |= 1 << part;
            runs[part] = (i, j);
            i = j;
        }
        // A server serves a batch item in about 100-200 ns: a client that
        // parked too soon would pay a wake-up longer than the batch.
        let patience = std::time::Duration::from_nanos(BATCH_ITEM_NS * items.len() as u64);
        while posted != 0 {
            let part = posted.trailing_zeros() as usize;
            posted &= posted - 1;
            let p = &self.parts[part];
            // SAFETY: the message posted above.
            match unsafe {
                p.slot(a.agent as usize)
                    .wait_helping(patience, || p.help(part, seen[part]))
            } {
                Msg::Done => {}
                Msg::Failed => {
                    let (i, j) = runs[part];
                    for it in &mut items[i..j] {
                        failed(it, part);
                    }
                }
                m => unreachable!("lock server: {m:?} in reply to a batch"),
            }
        }
    }

    /// Tests: makes the server of `part` panic while it serves a message.
    #[cfg_attr(any(not(test), heirloom_loom), allow(dead_code))]
    pub(crate) fn fail(&self, part: usize) {
        let _serial = self.admin.lock();
        let p = &self.parts[part % self.parts.len()];
        // SAFETY: the admin slot, used only under `self.admin`, one message
        // at a time.
        unsafe {
            p.admin.post(Msg::Panic);
            p.doorbell.ring();
            p.admin.wait();
        }
    }
}

/// This table's handle ([`LockTable::Handle`]): the partition that owns
/// the lock and the index of its queue there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At {
    idx: usize,
    part: usize,
}

impl From<Handle> for At {
    #[inline]
    fn from(h: Handle) -> Self {
        At {
            idx: h.0 >> PART_BITS,
            part: h.0 & PART_MASK,
        }
    }
}

impl From<At> for Handle {
    #[inline]
    fn from(h: At) -> Self {
        Handle(h.idx << PART_BITS | h.part)
    }
}

// SAFETY: a partition's queues are touched by its server thread alone
// (or a client helping it under its desk), which decides every grant
// and pushes the granted to the clients' wake lists; a queue's index
// stays its own while a request is linked in it; nodes are not kept past
// their unlinking.
unsafe impl LockTable for Server {
    type Handle = At;

    /// Makes room for the slots of agent `agent`.
    fn attach(&self, agent: u32) {
        for p in self.parts.iter() {
            p.attach(agent as usize);
        }
    }

    unsafe fn acquire(
        &self,
        a: Caller<'_>,
        id: LockId,
        req: ReqPtr,
        mode: Mode,
        may_wait: bool,
        _try_fast: bool,
        _wake: &mut Vec<ReqPtr>,
    ) -> (Outcome, At) {
        let part = self.part_of(id);
        match self.call(
            a,
            part,
            Msg::Acquire {
                id,
                req,
                mode,
                may_wait,
            },
        ) {
            Msg::Acquired { out, idx } => (out, At { idx, part }),
            Msg::Failed => (Outcome::Failed(part), At { idx: 0, part }),
            m => unreachable!("lock server: {m:?} in reply to an acquisition"),
        }
    }

    /// One message per partition, to every partition before waiting for any.
    unsafe fn acquire_batch(&self, a: Caller<'_>, items: &mut [Acquiring], _wake: &mut Vec<ReqPtr>) {
        self.scatter(
            a,
            items,
            |it| self.part_of(it.id),
            |items, len| Msg::AcquireBatch { items, len },
            |it, part| it.out = Outcome::Failed(part),
        );
    }

    /// In place, by the partition's server.
    unsafe fn convert(
        &self,
        a: Caller<'_>,
        _id: LockId,
        h: At,
        req: ReqPtr,
        to: Mode,
        may_wait: bool,
        wake_behind: bool,
        _wake: &mut Vec<ReqPtr>,
        _nodes: &mut Nodes,
    ) -> Converting {
        let msg = Msg::Convert {
            idx: h.idx,
            req,
            to,
            may_wait,
            wake_behind,
        };
        let outcome = match self.call(a, h.part, msg) {
            Msg::Outcome(o) => o,
            Msg::Failed => Outcome::Failed(h.part),
            m => unreachable!("lock server: {m:?} in reply to a conversion"),
        };
        Converting::in_place(outcome, req, h.into())
    }

    unsafe fn release(&self, a: Caller<'_>, h: At, req: ReqPtr, _wake: &mut Vec<ReqPtr>) {
        self.release_or_keep(a, h, req, None);
    }

    unsafe fn release_or_inherit(
        &self,
        a: Caller<'_>,
        h: At,
        req: ReqPtr,
        heat: Heat,
        _wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        self.release_or_keep(a, h, req, Some(heat))
    }

    /// One message per partition.
    unsafe fn release_batch(&self, a: Caller<'_>, items: &mut [Releasing], _wake: &mut Vec<ReqPtr>) {
        // Items already decided (`out` set) go with the others: the server
        // skips them, and sorting them along keeps the code simple.
        self.scatter(
            a,
            items,
            |it| At::from(it.head).part,
            |items, len| Msg::ReleaseBatch { items, len },
            |it, _| {
                it.out.get_or_insert(Handoff::Released);
            },
        );
    }

    unsafe fn cancel(&self, a: Caller<'_>, h: At, req: ReqPtr, _wake: &mut Vec<ReqPtr>) -> Cancel {
        match self.call(a, h.part, Msg::Cancel { idx: h.idx, req }) {
            Msg::Cancelled(o) => o,
            Msg::Failed => Cancel::Cancelled,
            m => unreachable!("lock server: {m:?} in reply to a cancel"),
        }
    }

    unsafe fn blockers(&self, a: Caller<'_>, h: At, req: ReqPtr, out: &mut Vec<Blocker>) -> bool {
        match self.call(
            a,
            h.part,
            Msg::Blockers {
                idx: h.idx,
                req,
                out: std::ptr::from_mut(out),
            },
        ) {
            Msg::Found(f) => f,
            // Not waiting there any more (its owner is told so).
            Msg::Failed => false,
            m => unreachable!("lock server: {m:?} in reply to a blockers query"),
        }
    }

    /// A null round trip to the partition of `id`.
    fn null_section(&self, a: Caller<'_>, id: LockId) {
        self.call(a, self.part_of(id), Msg::Null);
    }

    fn snapshot(&self, now_ns: u64, out: &mut Vec<LockInfo>) {
        let _serial = self.admin.lock();
        for p in self.parts.iter() {
            // SAFETY: the admin slot, used only under `self.admin`, one
            // message at a time.
            unsafe {
                p.admin.post(Msg::Snapshot {
                    now_ns,
                    out: std::ptr::from_mut(out),
                });
                p.doorbell.ring();
                p.admin.wait();
            }
        }
    }

    /// The partition of `h`, if its server has failed.
    #[inline]
    fn failed(&self, h: At) -> Option<usize> {
        let part = h.part;
        // Acquire: pairs with the server's Release store, before its wake-ups.
        self.parts[part].failed.load(Ordering::Acquire).then_some(part)
    }

    /// The partitions whose server has failed.
    fn failed_partitions(&self) -> Vec<usize> {
        (0..self.parts.len())
            .filter(|&i| self.parts[i].failed.load(Ordering::Acquire))
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        for p in self.parts.iter() {
            p.stop.store(true, Ordering::Release);
            p.doorbell.wake();
        }
        for t in self.threads.drain(..) {
            // A server that panicked (a bug) has nothing left to clean up.
            let _ = t.join();
        }
    }
}

/// A server thread's loop: scan, serve, park when idle, until stopped.
fn serve_forever(p: &Partition, me: usize) {
    loop {
        // The desk only for the scan: between scans a client may serve.
        // Held by a client: that client is serving, so this thread looks
        // again below instead of sleeping on the desk's mutex.
        let served = match p.desk.try_lock() {
            Some(mut d) => p.scan(&mut d, me),
            None => 0,
        };
        // Relaxed: a hint for late clients (`Partition::help`), which
        // synchronise through the desk and the slots, not through it.
        p.scans.store(p.scans() + 1, Ordering::Relaxed);
        if served > 0 {
            continue;
        }
        // Acquire: pairs with the Release store in `Server::drop` (nothing
        // is left to serve then: every agent is gone).
        if p.stop.load(Ordering::Acquire) {
            return;
        }
        // Look again for a while (see `slot::SPIN_FOR`), then park.
        if !spin(|| p.any_pending()) {
            p.doorbell.sleep(|| p.any_pending());
        }
    }
}

/// [`handle`], with a panic caught: the partition fails (see "A server
/// that fails"), and so does every later message.
fn guarded(
    p: &Partition,
    failed: &mut bool,
    q: &mut Queues,
    me: usize,
    msg: Msg,
    contended: bool,
    wake: &mut Vec<ReqPtr>,
) -> Msg {
    if *failed {
        return Msg::Failed;
    }
    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(q, me, msg, contended, wake)));
    match served {
        Ok(reply) => reply,
        Err(_) => {
            *failed = true;
            // Release: before the wake-ups below; pairs with the waiters'
            // Acquire load in their park condition (`Server::failed`).
            p.failed.store(true, Ordering::Release);
            // Every client waiting here: its condition now reads the mark.
            // The queues may be half-changed; if even listing their waiters
            // panics, the waiters listed so far are woken and the rest wait
            // for their own time limits.
            let mut waiters = Vec::new();
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| q.waiters(&mut waiters)));
            for r in waiters {
                crate::sync::wake_all(r.key());
            }
            Msg::Failed
        }
    }
}

/// Serves one message on the partition's queues; returns the reply.
///
/// The requests named in messages are alive: each is its client's own node,
/// linked in these queues or about to be (`ReqPtr` contract 1 on the
/// client's side, which waits meanwhile; contract 2 here, the server being
/// the queues' only owner, as a latch holder is).
fn handle(q: &mut Queues, me: usize, msg: Msg, contended: bool, wake: &mut Vec<ReqPtr>) -> Msg {
    match msg {
        Msg::Null => Msg::Done,
        Msg::Acquire {
            id,
            req,
            mode,
            may_wait,
        } => {
            // SAFETY: the client's own request, linked nowhere.
            let (out, idx) = unsafe { q.acquire(0, id, req, mode, may_wait, false, contended) };
            Msg::Acquired { out, idx }
        }
        Msg::Convert {
            idx,
            req,
            to,
            may_wait,
            wake_behind,
        } => {
            let queue = q.get(idx).expect("a conversion names a live queue");
            // SAFETY: the client's own granted request, linked there.
            Msg::Outcome(unsafe { queue.convert(req, to, may_wait, false, wake_behind, wake) })
        }
        // SAFETY: the client's own granted request, linked at `idx`.
        Msg::Release { idx, req, heat } => Msg::Handoff(unsafe { q.release(0, idx, req, heat, wake) }),
        // SAFETY: the client's own request, linked at `idx`.
        Msg::Cancel { idx, req } => Msg::Cancelled(unsafe { q.cancel(0, idx, req, wake) }),
        Msg::Blockers { idx, req, out } => {
            // SAFETY: the client's buffer, untouched until the reply.
            let out = unsafe { &mut *out };
            Msg::Found(q.get(idx).is_some_and(|queue| queue.blockers(req, out)))
        }
        Msg::AcquireBatch { items, len } => {
            // SAFETY: a run of the client's array handed to this partition
            // alone until the reply (`Server::scatter`).
            let items = unsafe { std::slice::from_raw_parts_mut(items, len) };
            for it in items {
                // SAFETY: the client's own requests, linked nowhere.
                let (out, idx) = unsafe { q.acquire(0, it.id, it.req, it.mode, false, false, contended) };
                it.out = out;
                it.head = At { idx, part: me }.into();
            }
            Msg::Done
        }
        Msg::ReleaseBatch { items, len } => {
            // SAFETY: as for `AcquireBatch`.
            let items = unsafe { std::slice::from_raw_parts_mut(items, len) };
            for it in items.iter_mut().filter(|it| it.out.is_none()) {
                // SAFETY: the client's own granted requests, linked there.
                it.out = Some(unsafe { q.release(0, At::from(it.head).idx, it.req, it.heat, wake) });
            }
            Msg::Done
        }
        Msg::Snapshot { now_ns, out } => {
            // SAFETY: the caller's buffer, untouched until the reply.
            q.snapshot(now_ns, unsafe { &mut *out });
            Msg::Done
        }
        Msg::Panic => panic!("heirloom: lock server {me} made to fail (a test's Server::fail)"),
        m => unreachable!("lock server: a reply ({m:?}) posted as a request"),
    }
}

#[cfg(all(test, heirloom_loom))]
mod tests {
    mod loom_slot;
}
