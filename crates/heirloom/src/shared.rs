//! What one lock manager's agents share: the lock table, the
//! configuration, the registry of agents (each agent's part that other
//! threads read: counters, the wound mailbox, what it waits for), the
//! exclusive-mode gate and the instant its times count from. Agents hold
//! it in an `Arc`; the public [`LockManager`](crate::LockManager) is a
//! handle on it.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, RwLock};

use crate::error::TxnId;
use crate::gate::Gate;
use crate::id::LockId;
use crate::inherit::Rules;
use crate::mode::Mode;
use crate::policy::ConflictPolicy;
use crate::request::ReqPtr;
use crate::stats::{AgentCounters, Stats};
use crate::sync::{Arc, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence, wake_all};
use crate::table::{Caller, Handle, Table, TableKind};

/// What a waiting transaction waits for (read by deadlock detection).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitInfo {
    pub(crate) txn: TxnId,
    pub(crate) head: Handle,
    pub(crate) req: ReqPtr,
    pub(crate) lock: LockId,
    pub(crate) mode: Mode,
    /// Which wait of its agent this is (the agent's count of waits): a
    /// deadlock search's validation tells by it that a waiter it read is
    /// still in the same wait (`deadlock.rs`).
    pub(crate) seq: u64,
    /// Set by the waiter itself, under `ManagerState::victims`, when its search
    /// chose it as the victim of a deadlock: it is about to give its
    /// request up, so other searches pass over it (`deadlock.rs`, "One
    /// victim per cycle").
    pub(crate) victim: bool,
}

/// An agent's counts for its next look at the row side's switch
/// (`txn/row_switch.rs`), written only by the agent (relaxed loads and
/// stores).
pub(crate) struct RowVotes {
    pub(crate) requests: AtomicU32,
    pub(crate) strong: AtomicU32,
    /// Windows in a row with fewer than `STRONG_SHARE` strong requests.
    pub(crate) calm: AtomicU32,
}

/// The manager's part of the row side's switch (`txn/row_switch.rs`;
/// with `FastRows::Auto` only).
pub(crate) struct RowSwitch {
    /// The agents active when the switch last turned to `ARMING`, with
    /// their counts of transactions begun (see the module docs); taken
    /// with `try_lock` by whoever arms or looks.
    pub(crate) arming: Mutex<Vec<(Arc<CachePadded<AgentShared>>, u64)>>,
    /// Turns from `ON` to `DRAINING` so far (the patience's exponent).
    pub(crate) drains: AtomicU32,
}

impl RowVotes {
    pub(crate) fn new() -> Self {
        RowVotes {
            requests: AtomicU32::new(0),
            strong: AtomicU32::new(0),
            calm: AtomicU32::new(0),
        }
    }
}

impl RowSwitch {
    pub(crate) fn new() -> Self {
        RowSwitch {
            arming: Mutex::new(Vec::new()),
            drains: AtomicU32::new(0),
        }
    }
}

/// The part of an agent other threads see.
///
/// Laid out by who writes it, so that no line the owner writes on every
/// transaction is written by other threads too: the first block (index,
/// `active`, the counters) is written only by the owner and read by
/// others; `wound` is written by wounders (and by the owner only when it
/// waits); `wait` is locked by the owner when it waits and by deadlock
/// searches. (The whole struct is cache-padded in its `Arc`.)
pub(crate) struct AgentShared {
    pub(crate) index: u32,
    /// Inside a transaction (exclusive-mode gate; see `gate.rs`).
    pub(crate) active: AtomicBool,
    /// The thread the agent's transactions are bound to
    /// (`misuse::thread_token`; 0: none), for interfaces whose
    /// transactions cannot leave the thread that began them
    /// (`Agent::bind_to_thread`). Written by the owner, read by waiters.
    pub(crate) bound_to: AtomicU64,
    pub(crate) counters: AgentCounters,
    /// The agent's counts for the row side's switch
    /// (`txn/row_switch.rs`).
    pub(crate) rows: RowVotes,
    /// Wound-wait's mailbox.
    pub(crate) wound: CachePadded<WoundBox>,
    /// What the current transaction waits for.
    pub(crate) wait: CachePadded<Mutex<Option<WaitInfo>>>,
}

impl AgentShared {
    /// This agent as a caller of the lock table.
    #[inline]
    pub(crate) fn caller(&self) -> Caller<'_> {
        Caller {
            counters: &self.counters,
            agent: self.index,
        }
    }
}

/// Where wound-wait marks an agent's transaction and finds it parked.
pub(crate) struct WoundBox {
    /// The transaction that was wounded, or 0 (written by wounders).
    pub(crate) wounded: AtomicU64,
    /// Who wounded it.
    pub(crate) wounded_by: AtomicU64,
    /// When it was first wounded (`ManagerState::now_ns`): the victim
    /// counts the time from there to its death (`Stats::wound_delay_ns`).
    pub(crate) wounded_at: AtomicU64,
    /// The parking key of the request being waited for, or 0.
    pub(crate) waiting_req: AtomicUsize,
}

#[derive(Default)]
struct RegistrySlot {
    agent: Option<Arc<CachePadded<AgentShared>>>,
    /// Next transaction sequence number for an agent in this slot, so that
    /// transaction ids stay unique when slots are reused.
    next_seq: u64,
}

/// Every live agent, by index.
#[derive(Default)]
pub(crate) struct Registry {
    slots: Vec<RegistrySlot>,
    free: Vec<u32>,
    pub(crate) retired: Stats,
}

impl Registry {
    pub(crate) fn get(&self, index: u32) -> Option<&Arc<CachePadded<AgentShared>>> {
        self.slots.get(index as usize).and_then(|s| s.agent.as_ref())
    }

    pub(crate) fn agents(&self) -> impl Iterator<Item = &Arc<CachePadded<AgentShared>>> {
        self.slots.iter().filter_map(|s| s.agent.as_ref())
    }
}

/// The path of `Transaction::lock`: a byte tested once, so the usual walk
/// pays one compare for all the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Route {
    /// The hierarchy walk (`Transaction::lock_path`).
    Walk,
    /// Without intention locks (`Transaction::lock_alone`).
    Alone,
    /// `ManagerState::special`.
    Special,
}

pub(crate) struct ManagerState {
    pub(crate) table: Table,
    pub(crate) kind: TableKind,
    /// `TableKind::NoLocking`: no lock is ever taken.
    pub(crate) no_locks: bool,
    /// `no_locks`, or escalation or a lock-memory cap is configured: `lock`
    /// takes its cold path (one test on the hot path for all three).
    pub(crate) special: bool,
    /// `Builder::intention_locks(false)`: every lock stands alone (no
    /// intention locks, no covering ancestor, no escalation).
    pub(crate) flat: bool,
    /// Which path `lock` takes (one test for the usual one).
    pub(crate) route: Route,
    pub(crate) policy: ConflictPolicy,
    /// `policy` is not `NoWait` (asked on every acquisition: a bool, not a
    /// match on the enum and its payload).
    pub(crate) may_wait: bool,
    /// `policy` is `WoundWait` (asked on every lock call).
    pub(crate) wound_wait: bool,
    pub(crate) max_restarts: u32,
    /// Speculative lock inheritance's rules (`inherit.rs`).
    pub(crate) sli: Rules,
    pub(crate) deadlock_timeout: Duration,
    /// `Builder::spin_before_park`, in nanoseconds (0: never spin).
    pub(crate) spin_max_ns: u64,
    /// The cores the threads run on (`Builder::cores`; by default
    /// `available_parallelism`).
    pub(crate) cores: usize,
    /// Registered agents (whether waiters may spin: `Transaction::wait`).
    pub(crate) live_agents: AtomicUsize,
    /// Threads of the table's own that run beside the agents' (the lock
    /// servers), counted against `cores` with them.
    pub(crate) table_threads: usize,
    /// Count requests by class (`Builder::lock_classes`).
    pub(crate) lock_classes: bool,
    /// The table takes intention locks on its fast path and `lock` asks it
    /// to without a request node (`Transaction::acquire_fast`): the fast
    /// path is on and `lock_classes` off (whose classification is
    /// `link`'s).
    pub(crate) fast_holds: bool,
    /// The row side's switch, turned by the transactions
    /// (`Builder::fast_rows`'s `Auto`; `txn/row_switch.rs`).
    pub(crate) row_switch: Option<RowSwitch>,
    /// `row_switch` is there and `lock_classes` off: `link` counts a row
    /// request for the switch before the table sees it (with the classes,
    /// after, when it knows whether the fast path granted it).
    pub(crate) row_votes_before: bool,
    /// The row side's switch word, where the table has a row side: a
    /// transaction asks for a fast S only while it is on
    /// (`Transaction::rows_open`).
    pub(crate) row_state: Option<Arc<CachePadded<AtomicU64>>>,
    /// `Agent::run` backs off before a restart (`Builder::restart_backoff`).
    pub(crate) restart_backoff: bool,
    /// Read-locked by deadlock searches and wounders (which must not
    /// exclude each other), write-locked only to add or remove an agent.
    pub(crate) registry: RwLock<Registry>,
    /// Taken by a deadlock search that validated a cycle, to check it once
    /// more and mark its victim: one victim per cycle (`deadlock.rs`).
    /// Never taken on a path without a deadlock.
    pub(crate) victims: CachePadded<Mutex<()>>,
    pub(crate) gate: Gate,
    /// What `now_ns` counts from: waits' start times and ages
    /// (`ConflictPolicy::WoundWait`, "Ages").
    pub(crate) base: Instant,
    /// `Builder::escalate_after` (0: never).
    pub(crate) escalate_after: u32,
    /// `Builder::max_locks`: the cap on lock requests in use, if any.
    pub(crate) lock_memory: Option<LockMemory>,
}

/// The manager-wide budget of lock requests (`Builder::max_locks`). Agents
/// reserve it in chunks (`chunk`: a 64th of the limit, from 1 to 32), so
/// the shared counter is written about once per chunk of requests, not
/// once per request; between transactions an agent keeps at most two
/// chunks it does not use, and none once the budget is more than half
/// reserved (`Agent::shrink_reservation`).
pub(crate) struct LockMemory {
    pub(crate) limit: usize,
    pub(crate) chunk: usize,
    /// Requests reserved by agents (at most `limit`).
    pub(crate) reserved: CachePadded<AtomicUsize>,
}

impl LockMemory {
    pub(crate) fn new(limit: usize) -> Self {
        LockMemory {
            limit,
            chunk: (limit / 64).clamp(1, 32),
            reserved: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Reserves `n` more requests if that stays within the limit.
    pub(crate) fn reserve(&self, n: usize) -> bool {
        // Relaxed: a budget, not a synchronisation point; the CAS alone
        // keeps the sum within the limit.
        let mut cur = self.reserved.load(Ordering::Relaxed);
        loop {
            if cur + n > self.limit {
                return false;
            }
            match self
                .reserved
                .compare_exchange_weak(cur, cur + n, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Gives `n` reserved requests back.
    pub(crate) fn give_back(&self, n: usize) {
        self.reserved.fetch_sub(n, Ordering::Relaxed);
    }
}

impl ManagerState {
    pub(crate) fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// Registers a new agent; returns its shared part and first sequence number.
    pub(crate) fn register(&self) -> (Arc<CachePadded<AgentShared>>, u64) {
        let mut reg = self.registry.write();
        let index = match reg.free.pop() {
            Some(i) => i,
            None => {
                reg.slots.push(RegistrySlot::default());
                (reg.slots.len() - 1) as u32
            }
        };
        let shared = Arc::new(CachePadded::new(AgentShared {
            index,
            counters: AgentCounters::default(),
            rows: RowVotes::new(),
            active: AtomicBool::new(false),
            bound_to: AtomicU64::new(0),
            wound: CachePadded::new(WoundBox {
                wounded: AtomicU64::new(0),
                wounded_by: AtomicU64::new(0),
                wounded_at: AtomicU64::new(0),
                waiting_req: AtomicUsize::new(0),
            }),
            wait: CachePadded::new(Mutex::new(None)),
        }));
        let slot = &mut reg.slots[index as usize];
        slot.agent = Some(shared.clone());
        self.live_agents.fetch_add(1, Ordering::Relaxed);
        (shared, slot.next_seq)
    }

    /// Removes a dropped agent, keeping its statistics.
    pub(crate) fn unregister(&self, index: u32, next_seq: u64) {
        let mut reg = self.registry.write();
        let slot = &mut reg.slots[index as usize];
        let shared = slot.agent.take();
        slot.next_seq = next_seq;
        if let Some(a) = shared {
            let s = a.counters.read();
            reg.retired.merge(&s);
        }
        reg.free.push(index);
        self.live_agents.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether the agents' threads (and the lock servers) fit on the
    /// cores: then a waiter's wait idles a core, so waiters spin before
    /// they park and a wound dooms its victim at once (`Transaction::wait`,
    /// `check_alive`).
    #[inline]
    pub(crate) fn threads_fit_cores(&self) -> bool {
        self.live_agents.load(Ordering::Relaxed) + self.table_threads <= self.cores
    }

    /// Wound-wait: marks `txn` of agent `agent` wounded by `by`, and wakes
    /// it if it is waiting.
    pub(crate) fn wound(&self, agent: u32, txn: TxnId, by: TxnId) {
        crate::sharing::note(std::ptr::from_ref(&self.registry) as usize);
        let reg = self.registry.read();
        let Some(a) = reg.get(agent) else { return };
        let a = &a.wound;
        // A wound computed from an older view may name the agent's previous
        // transaction; it must not overwrite the wound of the current one
        // (transaction ids of one agent increase), hence `fetch_max`.
        // `wounded_by` is informational: with two racing wounders it names
        // one of them.
        let was = a.wounded.load(Ordering::Relaxed);
        if was <= txn.0 {
            a.wounded_by.store(by.0, Ordering::Relaxed);
            if was < txn.0 {
                a.wounded_at.store(self.now_ns(), Ordering::Relaxed);
            }
        }
        // Release: pairs with the victim's Acquire load of `wounded`, which
        // then reads our `wounded_by`.
        a.wounded.fetch_max(txn.0, Ordering::Release);
        // SeqCst fence between the store of `wounded` and the load of
        // `waiting_req`; pairs with the fence in `Transaction::wait` (Dekker:
        // either we see the waiter's key and wake it, or its park validation
        // sees the wound).
        fence(Ordering::SeqCst);
        let key = a.waiting_req.load(Ordering::Relaxed);
        if key != 0 {
            wake_all(key);
        }
    }
}
