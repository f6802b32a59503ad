//! The lock manager: configuration, the agent registry, monitoring.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::agent::Agent;
use crate::error::TxnId;
use crate::gate::Gate;
use crate::id::LockId;
use crate::inherit::Inheritance;
use crate::mode::Mode;
use crate::monitor::Snapshot;
use crate::request::ReqPtr;
use crate::stats::{AgentCounters, Stats};
use crate::sync::{Arc, AtomicBool, AtomicU64, AtomicUsize, Ordering, fence, wake_all};
use crate::table::{HeadRef, Table, TableKind};

/// What a request does when it cannot be granted at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ConflictPolicy {
    /// Wait; when a request blocks, look for a waits-for cycle and abort the
    /// requester if it closes one ([`LockError::Deadlock`](crate::LockError)).
    #[default]
    Detect,
    /// Wait at most this long, then fail with a timeout (deadlocks are
    /// broken by the timeout).
    Timeout(Duration),
    /// Never wait: fail at once so that the caller restarts.
    NoWait,
    /// Wait-die: an older requester waits for younger holders; a younger
    /// one dies. Ages survive restarts in `Agent::run`, so every transaction
    /// eventually becomes the oldest.
    WaitDie,
    /// Wound-wait: an older requester wounds younger holders (they fail at
    /// their next lock call or while waiting); a younger one waits.
    WoundWait,
}

impl ConflictPolicy {
    /// The name used on command lines and in reports.
    pub fn name(&self) -> String {
        match self {
            ConflictPolicy::Detect => "detect".into(),
            ConflictPolicy::Timeout(d) => format!("timeout={}ms", d.as_millis()),
            ConflictPolicy::NoWait => "nowait".into(),
            ConflictPolicy::WaitDie => "waitdie".into(),
            ConflictPolicy::WoundWait => "woundwait".into(),
        }
    }

    pub(crate) fn uses_age(&self) -> bool {
        matches!(self, ConflictPolicy::WaitDie | ConflictPolicy::WoundWait)
    }
}

impl std::str::FromStr for ConflictPolicy {
    type Err = String;

    /// `detect`, `nowait`, `waitdie`, `woundwait`, `timeout` (10 ms) or
    /// `timeout=N` (N milliseconds).
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "detect" => Ok(ConflictPolicy::Detect),
            "nowait" => Ok(ConflictPolicy::NoWait),
            "waitdie" => Ok(ConflictPolicy::WaitDie),
            "woundwait" => Ok(ConflictPolicy::WoundWait),
            "timeout" => Ok(ConflictPolicy::Timeout(Duration::from_millis(10))),
            _ => match s.strip_prefix("timeout=").map(str::parse::<u64>) {
                Some(Ok(ms)) => Ok(ConflictPolicy::Timeout(Duration::from_millis(ms))),
                _ => Err(format!(
                    "unknown conflict policy `{s}` (expected detect, timeout, timeout=MS, nowait, waitdie or woundwait)"
                )),
            },
        }
    }
}

/// Builds a [`LockManager`].
#[derive(Clone, Debug)]
pub struct Builder {
    table: TableKind,
    policy: ConflictPolicy,
    buckets: usize,
    max_restarts: u32,
    inheritance: Inheritance,
    hot_threshold: u32,
    deadlock_timeout: Duration,
}

/// The default of [`Builder::deadlock_timeout`]: search as soon as a request
/// blocks. Measured on YCSB (Zipf 0.9, 8 threads, 2 cores), where about one
/// transaction in eight deadlocks, every delay cost throughput: 0 ms 58.7k
/// txn/s, 0.05 ms 33.6k, 0.2 ms 23.1k, 1 ms 8.1k (median of 3). Workloads
/// whose waits are many and deadlocks rare may set a delay.
pub const DEFAULT_DEADLOCK_TIMEOUT: Duration = Duration::ZERO;

impl Default for Builder {
    fn default() -> Self {
        Builder {
            table: TableKind::Latched,
            policy: ConflictPolicy::Detect,
            buckets: 1 << 8,
            max_restarts: 10,
            inheritance: Inheritance::Off,
            hot_threshold: 2,
            deadlock_timeout: DEFAULT_DEADLOCK_TIMEOUT,
        }
    }
}

impl Builder {
    /// The kind of lock table (default `Latched`).
    pub fn table(mut self, kind: TableKind) -> Self {
        self.table = kind;
        self
    }

    /// The conflict policy (default `Detect`).
    pub fn conflicts(mut self, policy: ConflictPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Hash buckets of the `Latched` table, rounded up to a power of two
    /// (default 256: few enough that the heads in use stay in cache; see the
    /// crate README).
    pub fn buckets(mut self, n: usize) -> Self {
        self.buckets = n.clamp(1, 1 << 24);
        self
    }

    /// Restarts after which [`Agent::run`] runs a transaction in exclusive
    /// mode (default 10).
    pub fn max_restarts(mut self, n: u32) -> Self {
        self.max_restarts = n;
        self
    }

    /// Speculative lock inheritance: `Off` (default), `On` (hot locks), or
    /// `Always` (every eligible lock, regardless of heat). `true`/`false`
    /// mean `On`/`Off`.
    pub fn inheritance(mut self, i: impl Into<Inheritance>) -> Self {
        self.inheritance = i.into();
        self
    }

    /// A lock is hot when at least `n` of its last 16 acquisitions found its
    /// latch held (1..=16, default 2).
    pub fn hot_threshold(mut self, n: u32) -> Self {
        self.hot_threshold = n.clamp(1, 16);
        self
    }

    /// Under [`ConflictPolicy::Detect`], how long a blocked request waits
    /// before it searches for a deadlock (PostgreSQL's `deadlock_timeout`;
    /// default [`DEFAULT_DEADLOCK_TIMEOUT`], zero: at once). With a delay,
    /// waits that end sooner run no search at all, and a deadlock is found
    /// this long after it formed. After that first search a waiter searches
    /// again only when it is woken without being granted (something in
    /// front of it changed), never on a timer.
    pub fn deadlock_timeout(mut self, d: Duration) -> Self {
        self.deadlock_timeout = d;
        self
    }

    /// Builds the lock manager.
    pub fn build(self) -> LockManager {
        LockManager {
            inner: Arc::new(Inner {
                table: Table::new(self.table, self.buckets),
                kind: self.table,
                policy: self.policy,
                max_restarts: self.max_restarts,
                inheritance: self.inheritance,
                hot_threshold: self.hot_threshold,
                deadlock_timeout: self.deadlock_timeout,
                registry: Mutex::new(Registry::default()),
                gate: Gate::new(),
                exclusive_serial: <parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::INIT,
                detector: Mutex::new(()),
                clock: CachePadded::new(AtomicU64::new(1)),
                base: Instant::now(),
            }),
        }
    }
}

/// A lock manager. Cheap to clone (a shared handle); create one [`Agent`]
/// per worker thread with [`LockManager::agent`].
#[derive(Clone)]
pub struct LockManager {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for LockManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockManager")
            .field("table", &self.inner.kind)
            .field("policy", &self.inner.policy)
            .finish()
    }
}

impl Default for LockManager {
    fn default() -> Self {
        Builder::default().build()
    }
}

impl LockManager {
    /// A builder with the defaults (`Latched`, `Detect`).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A new agent: the handle one worker thread uses for its whole life.
    pub fn agent(&self) -> Agent {
        Agent::new(self.inner.clone())
    }

    /// The table kind.
    pub fn table_kind(&self) -> TableKind {
        self.inner.kind
    }

    /// The conflict policy.
    pub fn policy(&self) -> ConflictPolicy {
        self.inner.policy
    }

    /// The inheritance setting.
    pub fn inheritance(&self) -> Inheritance {
        self.inner.inheritance
    }

    /// Every lock with live requests, with holders and waiters.
    pub fn snapshot(&self) -> Snapshot {
        let mut locks = Vec::new();
        self.inner.table.snapshot(self.inner.now_ns(), &mut locks);
        locks.sort_by_key(|l: &crate::monitor::LockInfo| l.lock);
        Snapshot { locks }
    }

    /// One line per live agent: whether it is inside a transaction, what it
    /// waits for, and the last wound it received (for debugging stalls).
    #[doc(hidden)]
    pub fn agents_report(&self) -> String {
        let reg = self.inner.registry.lock();
        let mut out = String::new();
        for a in reg.agents() {
            let w = a.wait.lock();
            out.push_str(&format!(
                "agent {} active={} wounded={:?} by={:?} waiting={:?}\n",
                a.index,
                a.active.load(Ordering::Relaxed),
                TxnId(a.wound.wounded.load(Ordering::Relaxed)),
                TxnId(a.wound.wounded_by.load(Ordering::Relaxed)),
                // SAFETY: read from a registered agent's `WaitInfo` while we
                // hold the registry lock and its `wait` mutex: the agent is
                // still waiting for it (it clears the info under that mutex
                // before anything else) and cannot drop (`ReqPtr` contracts
                // 1 and 4).
                w.map(|w| (w.txn, w.lock, w.mode, unsafe { w.req.get() }.ts.load(Ordering::Relaxed)))
            ));
        }
        out
    }

    /// Statistics of every agent, live and gone, merged now.
    pub fn stats(&self) -> Stats {
        let reg = self.inner.registry.lock();
        let mut s = reg.retired;
        for slot in &reg.slots {
            if let Some(a) = &slot.agent {
                s.merge(&a.counters.read());
            }
        }
        s
    }
}

/// What a waiting transaction waits for (read by deadlock detection).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitInfo {
    pub(crate) txn: TxnId,
    pub(crate) head: HeadRef,
    pub(crate) req: ReqPtr,
    pub(crate) lock: LockId,
    pub(crate) mode: Mode,
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
    pub(crate) counters: AgentCounters,
    /// Wound-wait's mailbox.
    pub(crate) wound: CachePadded<WoundBox>,
    /// What the current transaction waits for.
    pub(crate) wait: CachePadded<Mutex<Option<WaitInfo>>>,
}

/// Where wound-wait marks an agent's transaction and finds it parked.
pub(crate) struct WoundBox {
    /// The transaction that was wounded, or 0 (written by wounders).
    pub(crate) wounded: AtomicU64,
    /// Who wounded it.
    pub(crate) wounded_by: AtomicU64,
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
    retired: Stats,
}

impl Registry {
    pub(crate) fn get(&self, index: u32) -> Option<&Arc<CachePadded<AgentShared>>> {
        self.slots.get(index as usize).and_then(|s| s.agent.as_ref())
    }

    pub(crate) fn agents(&self) -> impl Iterator<Item = &Arc<CachePadded<AgentShared>>> {
        self.slots.iter().filter_map(|s| s.agent.as_ref())
    }
}

pub(crate) struct Inner {
    pub(crate) table: Table,
    pub(crate) kind: TableKind,
    pub(crate) policy: ConflictPolicy,
    pub(crate) max_restarts: u32,
    pub(crate) inheritance: Inheritance,
    pub(crate) hot_threshold: u32,
    pub(crate) deadlock_timeout: Duration,
    pub(crate) registry: Mutex<Registry>,
    pub(crate) gate: Gate,
    /// Serialises exclusive-mode transactions.
    pub(crate) exclusive_serial: parking_lot::RawMutex,
    /// Serialises deadlock detection (only blocked requests take it).
    pub(crate) detector: Mutex<()>,
    /// Ages for wait-die and wound-wait; touched only under those policies.
    pub(crate) clock: CachePadded<AtomicU64>,
    pub(crate) base: Instant,
}

impl Inner {
    pub(crate) fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// Registers a new agent; returns its shared part and first sequence number.
    pub(crate) fn register(&self) -> (Arc<CachePadded<AgentShared>>, u64) {
        let mut reg = self.registry.lock();
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
            active: AtomicBool::new(false),
            wound: CachePadded::new(WoundBox {
                wounded: AtomicU64::new(0),
                wounded_by: AtomicU64::new(0),
                waiting_req: AtomicUsize::new(0),
            }),
            wait: CachePadded::new(Mutex::new(None)),
        }));
        let slot = &mut reg.slots[index as usize];
        slot.agent = Some(shared.clone());
        (shared, slot.next_seq)
    }

    /// Removes a dropped agent, keeping its statistics.
    pub(crate) fn unregister(&self, index: u32, next_seq: u64) {
        let mut reg = self.registry.lock();
        let slot = &mut reg.slots[index as usize];
        let shared = slot.agent.take();
        slot.next_seq = next_seq;
        if let Some(a) = shared {
            let s = a.counters.read();
            reg.retired.merge(&s);
        }
        reg.free.push(index);
    }

    /// Wound-wait: marks `txn` of agent `agent` wounded by `by`, and wakes
    /// it if it is waiting.
    pub(crate) fn wound(&self, agent: u32, txn: TxnId, by: TxnId) {
        let reg = self.registry.lock();
        let Some(a) = reg.get(agent) else { return };
        let a = &a.wound;
        // A wound computed from an older view may name the agent's previous
        // transaction; it must not overwrite the wound of the current one
        // (transaction ids of one agent increase), hence `fetch_max`.
        // `wounded_by` is informational: with two racing wounders it names
        // one of them.
        if a.wounded.load(Ordering::Relaxed) <= txn.0 {
            a.wounded_by.store(by.0, Ordering::Relaxed);
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
