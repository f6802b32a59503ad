//! Agents: the handle a worker thread holds for its whole life.
//!
//! An agent owns what its transactions need and reuses it from one
//! transaction to the next: the pool of request nodes, the lock cache, the
//! wake-up list. That is why the immediately-granted path does not allocate
//! once the agent is warm.

use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::cache::{Held, LIVE, LockCache};
use crate::error::TxnId;
use crate::id::{LockId, TableId};
use crate::inherit;
use crate::misuse;
use crate::mode::Mode;
use crate::nodes::Nodes;
use crate::queue::{Blocker, Cancel};
use crate::request::{ReqPtr, wake_granted};
use crate::shared::{AgentShared, ManagerState};
use crate::stats::Stats;
use crate::sync::{Arc, Ordering};
use crate::table::{Acquiring, Handle, LockTable, Releasing};

/// The request a transaction is waiting for: linked, not yet decided.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    pub(crate) id: LockId,
    pub(crate) head: Handle,
    pub(crate) req: ReqPtr,
    /// The mode asked for (for a conversion, the target).
    pub(crate) mode: Mode,
    /// A conversion: the cache entry it converts (`req` is that entry's
    /// request, or the one replacing it; see `LockTable::convert`). `None`: a
    /// new request, not in the cache.
    pub(crate) held: Option<usize>,
}

/// A worker thread's handle on a [`LockManager`](crate::LockManager). Create
/// one per thread with [`LockManager::agent`](crate::LockManager::agent) and
/// run transactions on it one after another.
///
/// One thread may own several agents, but must never let a transaction of
/// one wait for a lock that a transaction of another holds: the thread is
/// parked, so the holder can never go on, and the waits-for graph cannot
/// see it (the holder is not waiting). Such a wait, without a time limit,
/// is refused in every build with [`LockError::InvalidRequest`](crate::LockError::InvalidRequest) (reason
/// [`BLOCKED_BY_OWN_THREAD`](crate::BLOCKED_BY_OWN_THREAD)), which dooms
/// the waiter, instead of a hang: a transaction is bound to the thread that
/// began it, and to the thread of each of its blocking waits. A wait with
/// a limit ([`ConflictPolicy::Timeout`](crate::ConflictPolicy::Timeout), a
/// `Wait::Timeout` or a lock timeout) is never refused and times out.
/// Sessions that share threads (an async runtime, an event loop) lock with
/// [`Transaction::lock_async`](crate::Transaction::lock_async), whose
/// waits do not need the thread: two of them on one thread that conflict
/// wait for each other as two threads would.
pub struct Agent {
    pub(crate) lm: Arc<ManagerState>,
    pub(crate) shared: Arc<CachePadded<AgentShared>>,
    pub(crate) seq: u64,
    /// Request nodes not in use.
    pub(crate) nodes: Nodes,
    /// The open transaction's locks (`cache.rs`).
    pub(crate) cache: LockCache,
    /// Vectors each call fills and empties, kept for their capacity.
    pub(crate) scratch: Scratch,
    /// Locks passed on to the next transaction (speculative lock
    /// inheritance).
    pub(crate) inheritance: Passed,
    /// The request the open transaction is waiting for, and how this
    /// agent waits.
    pub(crate) waiting: Waiting,
    /// The transaction open on this agent, from `begin` to the end of
    /// `finish`; still set at the next `begin` if it was forgotten.
    pub(crate) open: Option<TxnId>,
    /// The state of the open transaction (of the last one between
    /// transactions): a [`Transaction`](crate::Transaction) is only a
    /// pointer to its agent.
    pub(crate) txn: TxnState,
    /// The releases of the transaction that is ending.
    pub(crate) releases: Releases,
    /// Escalation and the lock-count limit (`Builder::escalate_after`,
    /// `Builder::max_locks`).
    pub(crate) limits: Limits,
}

/// Vectors an agent fills and empties within one call, kept for their
/// capacity.
pub(crate) struct Scratch {
    /// Requests granted by this agent's releases, to wake after the latch.
    pub(crate) wake: Vec<ReqPtr>,
    /// For conflict policies: the blockers of a request.
    pub(crate) blockers: Vec<Blocker>,
    /// For `Transaction::lock_all`.
    pub(crate) acquiring: Vec<Acquiring>,
    pub(crate) covered: Vec<bool>,
    pub(crate) paths: Vec<crate::id::Path>,
}

/// What an agent's transactions pass on to the next (speculative lock
/// inheritance, `inherit.rs`).
pub(crate) struct Passed {
    /// Locks passed on by the last transaction, root first (leaf first
    /// while `leaf_first`); the next transaction starts with them.
    /// While a commit fills it, an entry's `state` says where it came
    /// from: LIVE if it is passed on for the first time, PENDING or
    /// RECLAIMED if the transaction started with it (`begin` sets them all
    /// PENDING again).
    pub(crate) list: Vec<Held>,
    /// How many locks the last check of `list` left (see
    /// `Agent::keep_rooted_inheritance`).
    pub(crate) checked: usize,
    /// `list` is in the order the commit left it (leaf first), to be
    /// reversed by whoever reads it next (`Agent::inherited_root_first`).
    /// Reversing in the next `begin` rather than right after the commit
    /// wrote the entries avoids a store-forwarding stall on each.
    pub(crate) leaf_first: bool,
    /// Locks eligible for inheritance that this agent's transactions
    /// released, oldest first, at most [`inherit::MAX_RECENT`] (reuse heat,
    /// `Builder::reuse_heat`).
    pub(crate) recent: Vec<LockId>,
}

/// How an agent waits.
pub(crate) struct Waiting {
    /// The request the open transaction is waiting for (see `txn/finish.rs`,
    /// "Panic safety").
    pub(crate) in_flight: Option<InFlight>,
    /// Waits this agent's transactions began (`WaitInfo::seq`).
    pub(crate) waits: u64,
    /// How long a blocked request of this agent spins before it parks, in
    /// nanoseconds (adapted after every wait: `Transaction::wait`).
    pub(crate) spin_ns: u64,
    /// A request that must wait is left in flight and the lock call
    /// returns, for a `LockFuture` to wait for it without the thread
    /// (`txn/pending.rs`); set only inside the future's poll.
    pub(crate) defer: bool,
    /// Jitter for restart backoff (xorshift64*; a dependency for three lines
    /// of arithmetic is not worth it).
    rng: u64,
}

/// The releases of the transaction that is ending.
pub(crate) struct Releases {
    /// Decided and not yet done (see `Agent::finish_releases`), and the
    /// cache entries they came from (`Releasing::tag` indexes `entries`).
    pub(crate) batch: Vec<Releasing>,
    pub(crate) entries: Vec<Held>,
    /// `batch` went to the table; what is left is bookkeeping.
    pub(crate) sent: bool,
    /// Granted requests that a conversion replaced (the latch-free table;
    /// fast holds on the latched table), each released right after its
    /// lock's current request, oldest last; see `Agent::converted`.
    pub(crate) superseded: Vec<Held>,
    /// For an escalation's releases.
    pub(crate) escalating: Vec<Held>,
}

/// Escalation and the lock-count limit.
pub(crate) struct Limits {
    /// Row and page locks the open transaction holds under each table
    /// (kept only with `Builder::escalate_after`).
    pub(crate) below: Vec<(TableId, u32)>,
    /// A table whose row locks reached the escalation threshold.
    pub(crate) escalate_due: Option<TableId>,
    /// Lock requests this agent has reserved of `Builder::max_locks`.
    pub(crate) reserved: usize,
}

/// A timeout in nanoseconds, or `NO_BOUND` (none; also a timeout too long
/// for 64 bits of nanoseconds, 584 years, which is never in practice).
pub(crate) const NO_BOUND: u64 = u64::MAX;

/// The state of the transaction open on an agent (`Agent::txn`): a
/// [`Transaction`](crate::Transaction) is only a pointer to its agent.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxnState {
    pub(crate) id: TxnId,
    pub(crate) age: u64,
    /// The first concurrency error, after which only abort makes sense.
    pub(crate) doomed: Option<&'static str>,
    pub(crate) exclusive: bool,
    pub(crate) done: bool,
    /// May the request being made wait (`lock_with`'s `Wait`, else the
    /// policy), decided once per call.
    pub(crate) may_wait: bool,
    /// The request being made is `Wait::Skip`.
    pub(crate) skip: bool,
    /// `Wait::Timeout` of the request being made, in nanoseconds
    /// (`NO_BOUND`: none).
    pub(crate) call_timeout_ns: u64,
    /// The bound on every wait of this transaction (`set_lock_timeout`),
    /// in nanoseconds (`NO_BOUND`: none).
    pub(crate) lock_timeout_ns: u64,
}

impl TxnState {
    /// The state of an agent that has not begun a transaction yet.
    pub(crate) const IDLE: TxnState = TxnState {
        id: TxnId(0),
        age: 0,
        doomed: None,
        exclusive: false,
        done: true,
        may_wait: false,
        skip: false,
        call_timeout_ns: NO_BOUND,
        lock_timeout_ns: NO_BOUND,
    };
}

impl Agent {
    pub(crate) fn new(lm: Arc<ManagerState>) -> Self {
        let (shared, seq) = lm.register();
        lm.table.attach(shared.index);
        let nodes = lm.table.nodes(shared.index);
        let rng = 0x9e37_79b9_7f4a_7c15 ^ ((shared.index as u64 + 1) << 17) ^ lm.now_ns();
        let spin_ns = lm.spin_max_ns / 4;
        Agent {
            lm,
            shared,
            seq,
            nodes,
            cache: LockCache::new(),
            scratch: Scratch {
                wake: Vec::with_capacity(8),
                blockers: Vec::new(),
                acquiring: Vec::new(),
                covered: Vec::new(),
                paths: Vec::new(),
            },
            inheritance: Passed {
                list: Vec::new(),
                checked: 0,
                leaf_first: false,
                recent: Vec::new(),
            },
            waiting: Waiting {
                in_flight: None,
                waits: 0,
                spin_ns,
                defer: false,
                rng: rng | 1,
            },
            open: None,
            txn: TxnState::IDLE,
            releases: Releases {
                batch: Vec::with_capacity(32),
                entries: Vec::with_capacity(32),
                sent: false,
                superseded: Vec::new(),
                escalating: Vec::new(),
            },
            limits: Limits {
                below: Vec::new(),
                escalate_due: None,
                reserved: 0,
            },
        }
    }

    /// This agent's index (part of every transaction id it makes).
    pub fn index(&self) -> u32 {
        self.shared.index
    }

    /// Binds this agent to the calling thread (`true`) or to none
    /// (`false`): a wait without a time limit that a transaction of a
    /// bound agent blocks, asked for on the thread it is bound to through
    /// another agent, is refused with [`LockError::InvalidRequest`] (reason
    /// [`BLOCKED_BY_OWN_THREAD`](crate::BLOCKED_BY_OWN_THREAD), which dooms
    /// the waiter) instead of parking for ever: only that thread could end
    /// the holder (see `misuse.rs`). Every transaction binds its agent when
    /// it begins and when it blocks; the C interface binds again on each
    /// call that comes from another thread. Binding again on the same
    /// thread writes nothing.
    #[doc(hidden)]
    #[inline]
    pub fn bind_to_thread(&self, bound: bool) {
        let token = if bound { misuse::thread_token() } else { 0 };
        // Only the owner writes it: a load, and a store only on a change.
        let was = self.shared.bound_to.load(Ordering::Relaxed);
        if was != token {
            self.shared.bound_to.store(token, Ordering::Relaxed);
            misuse::rebound(was, token);
        }
    }

    /// This agent's own statistics.
    pub fn stats(&self) -> Stats {
        self.shared.counters.read()
    }

    /// Sleeps before restart number `restarts` (randomised, growing).
    pub(crate) fn backoff(&mut self, restarts: u32) {
        let t0 = std::time::Instant::now();
        self.pause(restarts);
        let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.shared.counters.backoff_ns.add(ns);
    }

    /// The backoff itself: a yield for the first two restarts, then a
    /// random sleep below 2^restarts microseconds (at most about 1 ms).
    fn pause(&mut self, restarts: u32) {
        if restarts <= 2 {
            std::thread::yield_now();
            return;
        }
        let mut x = self.waiting.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.waiting.rng = x;
        let cap_us = 1u64 << restarts.min(10);
        let us = x.wrapping_mul(0x2545_f491_4f6c_dd1d) % cap_us;
        std::thread::sleep(Duration::from_micros(us + 1));
    }

    /// After commit: keep a passed-on lock only if its parent was passed on
    /// too (criterion 5) or is one the table takes on its fast path (never
    /// passed on: the next transaction takes it afresh, before it reclaims
    /// the child, as it does for an invalidated parent), and it is among
    /// the first [`inherit::MAX_INHERITED`], release the others, and leave
    /// the list root first for the next transaction.
    #[inline(never)]
    pub(crate) fn keep_rooted_inheritance(&mut self, txn: TxnId, age: u64) {
        // Root first. The commit pushed them leaf first (it pops the cache,
        // which is in acquisition order, root first), so reversing usually
        // does it; a batch may have settled them in any order.
        // The same locks as the last check left (none new, none dropped:
        // every one came back and none is LIVE): still rooted and within
        // the bound, so the check is skipped. This is the steady state of
        // an agent that keeps its hot locks (`Builder::keep_inherited`).
        let same = self.inheritance.list.len() == self.inheritance.checked
            && self.inheritance.list.iter().all(|h| h.state != LIVE);
        if same && self.lm.table.releases_at_once() {
            // Each came back as the commit popped it, so they are in the
            // reverse of the order the last check left (root first): the
            // next reader reverses them.
            self.inheritance.leaf_first = true;
            return;
        }
        // Any order is put right below.
        self.inheritance.leaf_first = false;
        let level = |h: &Held| h.id.level() as u8;
        if !self.inheritance.list.is_sorted_by_key(level) {
            self.inheritance.list.reverse();
            if !self.inheritance.list.is_sorted_by_key(level) {
                self.inheritance.list.sort_by_key(level);
            }
        }
        if same {
            return;
        }
        let mut i = 0;
        while i < self.inheritance.list.len() {
            let h = self.inheritance.list[i];
            let table = &self.lm.table;
            let rooted = inherit::rooted(h.id, |p| {
                table.fast_path_for(p) || self.inheritance.list[..i].iter().any(|x| x.id == p)
            });
            if i < inherit::MAX_INHERITED && rooted {
                i += 1;
                continue;
            }
            self.inheritance.list.remove(i);
            let c = &self.shared.counters;
            c.inherited.add(u64::MAX); // undo the count (wrapping -1)
            if h.idle > 0 {
                // It was kept unused: count it as discarded instead.
                c.inherited_idle.add(u64::MAX);
                c.inherited_discarded.bump();
            }
            self.take_back_and_release(h, txn, age);
        }
        self.inheritance.checked = self.inheritance.list.len();
    }

    /// Puts `inheritance.list` root first if the last commit left it leaf first.
    #[inline]
    pub(crate) fn inherited_root_first(&mut self) {
        if self.inheritance.leaf_first {
            self.inheritance.list.reverse();
            self.inheritance.leaf_first = false;
            debug_assert!(self.inheritance.list.is_sorted_by_key(|h| h.id.level() as u8));
        }
    }

    /// Does `id` have replaced requests still granted (so that its lock
    /// must not be passed on by inheritance)?
    #[inline]
    pub(crate) fn has_superseded(&self, id: LockId) -> bool {
        !self.releases.superseded.is_empty() && self.releases.superseded.iter().any(|h| h.id == id)
    }

    /// Escalation bookkeeping: one more row or page lock under `id`'s
    /// table; the table is due when the count reaches the threshold, and
    /// again every further quarter of it (an escalation that found the
    /// table busy under `Wait::Skip` is tried again then).
    pub(crate) fn count_below(&mut self, id: LockId) {
        let Some(t) = id.table_id() else { return };
        let n = match self.limits.below.iter_mut().find(|e| e.0 == t) {
            Some(e) => {
                e.1 += 1;
                e.1
            }
            None => {
                self.limits.below.push((t, 1));
                1
            }
        };
        let at = self.lm.escalate_after;
        if n >= at && (n - at).is_multiple_of((at / 4).max(1)) {
            self.limits.escalate_due = Some(t);
        }
    }

    /// Escalation bookkeeping: `n` fewer row or page locks under table `t`.
    pub(crate) fn forget_below(&mut self, t: TableId, n: u32) {
        if let Some(e) = self.limits.below.iter_mut().find(|e| e.0 == t) {
            e.1 = e.1.saturating_sub(n);
        }
    }

    /// After a transaction: gives the lock-memory budget beyond the requests
    /// still in use (inherited ones) back to the manager, keeping up to two
    /// chunks while the manager has more than half its budget free (so a
    /// steady agent does not write the shared counter per transaction) and
    /// nothing once it is tighter (so idle agents do not starve busy ones).
    pub(crate) fn shrink_reservation(&mut self) {
        let Some(mem) = self.lm.lock_memory.as_ref() else {
            return;
        };
        let chunk = mem.chunk;
        let out = self.nodes.out;
        if self.limits.reserved <= out {
            return;
        }
        // Relaxed: a heuristic read of the budget.
        let tight = mem.reserved.load(Ordering::Relaxed) > mem.limit / 2;
        let keep = if tight { out } else { out + chunk };
        if tight || self.limits.reserved > out + 2 * chunk {
            mem.give_back(self.limits.reserved - keep);
            self.limits.reserved = keep;
        }
    }

    /// Withdraws the request in flight after a panic unwound out of
    /// `Transaction::wait` (see `txn/finish.rs`, "Panic safety"): cancelled, or,
    /// if it was granted meanwhile, kept like any granted request (a new one
    /// released here, a conversion left for `finish` in its new mode).
    #[cold]
    pub(crate) fn abandon_in_flight(&mut self) {
        let Some(f) = self.waiting.in_flight.take() else { return };
        self.shared.wound.waiting_req.store(0, Ordering::Relaxed);
        *self.shared.wait.lock() = None;
        // SAFETY: in flight: this agent's own node, linked where `f.head`
        // says (the contract on `Table`).
        let cancel = unsafe {
            self.lm
                .table
                .cancel(self.shared.caller(), f.head, f.req, &mut self.scratch.wake)
        };
        wake_granted(&mut self.scratch.wake);
        match (f.held, cancel) {
            (Some(k), Cancel::WasGranted) => self.converted(k, f.req, f.head, f.mode),
            // Back in its old mode, or the old request stays.
            (Some(k), Cancel::Cancelled) => {
                if f.req != self.cache[k].req {
                    self.nodes.give_back(f.req);
                }
            }
            // Granted, so released like any holder.
            (None, Cancel::WasGranted) => self.release_now(Held::live(f.id, f.mode, f.req, f.head)),
            (None, Cancel::Cancelled) => self.nodes.give_back(f.req),
        }
    }

    /// Completes the granted conversion of cache entry `k` to `to`: `req`
    /// is the entry's request (converted in place) or one the table linked
    /// to replace it (the latch-free table; a fast hold's conversion on the
    /// latched table). The replaced one stays granted
    /// in `releases.superseded` until the new one is released: waiters behind it
    /// that the new request did not wait for stay shut out by it (see
    /// `table/latchfree/mod.rs`, "Upgrades").
    pub(crate) fn converted(&mut self, k: usize, req: ReqPtr, head: Handle, to: Mode) {
        let old = self.cache[k];
        if req != old.req {
            self.releases.superseded.push(old);
            let e = &mut self.cache[k];
            e.req = req;
            e.head = head;
            // A reclaimed inherited request was replaced: the new one is the
            // transaction's own.
            e.state = LIVE;
        }
        self.cache[k].mode = to;
    }

    pub(crate) fn next_txn_id(&mut self) -> TxnId {
        self.seq += 1;
        TxnId::new(self.shared.index, self.seq)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // A forgotten transaction's locks go now.
        self.finish_forgotten();
        debug_assert!(self.cache.is_empty(), "an agent dropped with locks held");
        // Inherited locks nobody will reclaim: take them back and release
        // (leaf first: popped from the root-first list).
        self.inherited_root_first();
        let txn = TxnId::new(self.shared.index, self.seq);
        while let Some(h) = self.inheritance.list.pop() {
            if self.take_back_and_release(h, txn, 0) {
                self.shared.counters.inherited_discarded.bump();
            }
        }
        if let Some(mem) = self.lm.lock_memory.as_ref() {
            mem.give_back(self.limits.reserved);
        }
        self.lm.unregister(self.shared.index, self.seq);
        self.bind_to_thread(false);
    }
}
