//! The lock manager's public face: the builder, the handle, monitoring.
//! The state behind the handle is in `shared.rs`.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::agent::Agent;
use crate::error::TxnId;
use crate::gate::Gate;
use crate::inherit::{Inheritance, Rules};
use crate::monitor::Snapshot;
use crate::policy::ConflictPolicy;
use crate::shared::{LockMemory, ManagerState, Registry, Route, RowSwitch};
use crate::stats::Stats;
use crate::sync::{Arc, AtomicUsize, Ordering};
use crate::table::{LockTable, MAX_BUCKETS, Table, TableKind};
use heirloom_rtm::ElisionStats;

/// Builds a [`LockManager`].
#[derive(Clone, Debug)]
pub struct Builder {
    table: TableKind,
    policy: ConflictPolicy,
    /// `None`: the table kind's default.
    buckets: Option<usize>,
    max_restarts: u32,
    inheritance: Inheritance,
    hot_threshold: u32,
    keep_inherited: u32,
    reuse_heat: bool,
    deadlock_timeout: Duration,
    spin_before_park: Duration,
    lock_classes: bool,
    restart_backoff: bool,
    escalate_after: u32,
    max_locks: usize,
    fast_path: bool,
    fast_rows: FastRows,
    intention_locks: bool,
    /// `None`: the machine's (`available_parallelism`).
    cores: Option<usize>,
}

/// Whether row S locks take the fast path ([`Builder::fast_rows`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FastRows {
    /// Never: row locks go through the table.
    Off,
    /// Always (while the table has the fast path).
    On,
    /// On or off by what the transactions' row requests meet (the
    /// default): on while enough of them are S locks granted fast, off
    /// where rows are updated about as often as they are read, where it
    /// only costs; on again once few row requests conflict with S.
    #[default]
    Auto,
}

impl From<bool> for FastRows {
    /// `true`: [`FastRows::On`], `false`: [`FastRows::Off`].
    fn from(on: bool) -> Self {
        if on { FastRows::On } else { FastRows::Off }
    }
}

impl std::str::FromStr for FastRows {
    type Err = String;

    /// `off`, `on` or `auto`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(FastRows::Off),
            "on" => Ok(FastRows::On),
            "auto" => Ok(FastRows::Auto),
            _ => Err(format!("unknown fast-rows setting '{s}' (expected off, on or auto)")),
        }
    }
}

impl std::fmt::Display for FastRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FastRows::Off => "off",
            FastRows::On => "on",
            FastRows::Auto => "auto",
        })
    }
}

/// The `Builder::keep_inherited` setting recommended with inheritance on
/// for short transactions of several types (TM1's seven): an inherited
/// lock stays with its agent through up to 64 transactions that do not use
/// it, so every table's intention lock keeps passing on, and TM1's database
/// and table locks almost never reach the lock table (the crate's
/// MEASUREMENTS.md, "Fast paths: the gate, reuse heat, kept inheritance,
/// the ceiling").
pub const RECOMMENDED_KEEP_INHERITED: u32 = 64;

/// The default of [`Builder::deadlock_timeout`]: search as soon as a request
/// blocks. Where deadlocks are frequent (YCSB with Zipf 0.9), every delay
/// keeps a cycle's members blocked longer and costs throughput (the crate's
/// MEASUREMENTS.md, "The deadlock timeout"). Workloads whose waits are many
/// and deadlocks rare may set a delay.
pub const DEFAULT_DEADLOCK_TIMEOUT: Duration = Duration::ZERO;

/// The default of [`Builder::spin_before_park`]: a blocked request spins
/// for at most 200 µs before its thread sleeps, and less when its agent's
/// recent waits were shorter (the budget adapts to twice their length).
/// A futex sleep and wake-up costs a few microseconds on each side plus a
/// scheduling round, and a typical wait lasts about one short transaction,
/// so a much shorter bound sleeps through most waits (the crate's
/// MEASUREMENTS.md, "Waiting and deadlock handling"). On sixteen cores
/// this bound beat a quarter of it under the waiting policies, detection
/// most (its search runs when the wait begins, so spinning delays no
/// search), and on two cores it made no difference beyond the noise
/// ("Sixteen cores again"). No request spins while agents outnumber
/// cores, so the bound costs nothing where a spin would take the
/// holder's core.
pub const DEFAULT_SPIN_BEFORE_PARK: Duration = Duration::from_micros(200);

/// The default of [`Builder::max_restarts`]: after ten restarts in a row a
/// transaction runs in exclusive mode ([`Agent::run`](crate::Agent::run),
/// [`Agent::restart`](crate::Agent::restart)).
pub const DEFAULT_MAX_RESTARTS: u32 = 10;

impl Default for Builder {
    fn default() -> Self {
        Builder {
            table: TableKind::Latched,
            policy: ConflictPolicy::Detect,
            buckets: None,
            max_restarts: DEFAULT_MAX_RESTARTS,
            inheritance: Inheritance::Off,
            hot_threshold: 2,
            keep_inherited: 0,
            reuse_heat: true,
            deadlock_timeout: DEFAULT_DEADLOCK_TIMEOUT,
            spin_before_park: DEFAULT_SPIN_BEFORE_PARK,
            lock_classes: false,
            restart_backoff: true,
            escalate_after: 0,
            max_locks: 0,
            fast_path: true,
            fast_rows: FastRows::Auto,
            intention_locks: true,
            cores: None,
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

    /// Hash buckets of the latched and latch-free tables, rounded up to a
    /// power of two and kept within 1..=[`MAX_BUCKETS`]: the latched
    /// tables' first size (they grow), the latch-free tables' size (they
    /// split long lists). Default [`default_buckets`](crate::default_buckets):
    /// [`DEFAULT_BUCKETS`](crate::DEFAULT_BUCKETS) for the latched table,
    /// by the machine's cores for the latch-free tables and the latched
    /// table with spare heads.
    /// [`LockManager::buckets`] says what a manager has.
    pub fn buckets(mut self, n: usize) -> Self {
        self.buckets = Some(n.clamp(1, MAX_BUCKETS));
        self
    }

    /// Restarts after which [`Agent::run`] and [`Agent::restart`] run a
    /// transaction in exclusive mode (default [`DEFAULT_MAX_RESTARTS`]).
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

    /// With inheritance on, an inherited lock that the agent's next
    /// transaction does not use stays with the agent (still passed on, with
    /// no lock-table operation) through up to `k` such transactions, and is
    /// released when the `k+1`-th ends without it, when a conflicting
    /// request invalidates it, or when its agent is dropped. 0 (the
    /// default) releases it at the end of the first transaction that does
    /// not use it. For workloads whose transaction types use different
    /// tables (TM1's seven types) a few transactions of memory keep every
    /// table's intention lock with the agent.
    pub fn keep_inherited(mut self, k: u32) -> Self {
        self.keep_inherited = k;
        self
    }

    /// With inheritance `On`, a lock also counts as hot when one of the
    /// agent's recent transactions released it (reuse: the agent remembers
    /// the last 16 such locks), not only when its latch was found held
    /// (default true). Without it, whether two agents
    /// happen to collide on the latch decides what is passed on, so on a
    /// lightly loaded machine the database and table locks of every
    /// transaction go through the table; `false` keeps the paper's rule.
    pub fn reuse_heat(mut self, on: bool) -> Self {
        self.reuse_heat = on;
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

    /// The most a blocked request spins, watching for its grant, before
    /// its thread parks (default [`DEFAULT_SPIN_BEFORE_PARK`]; zero: park at
    /// once). The budget adapts per agent: about twice its recent waits,
    /// down to a fiftieth of this bound when they are longer than it. No
    /// request spins while the manager has more agents than cores
    /// ([`Builder::cores`]): threads outnumber cores, so the holder it
    /// would wait for may not be running, and its sleep frees the core
    /// for it. Spinning
    /// comes after the policy's first look: wait-die's and wound-wait's
    /// at their edges, and `Detect`'s first search unless
    /// [`Builder::deadlock_timeout`] delays it.
    pub fn spin_before_park(mut self, max: Duration) -> Self {
        self.spin_before_park = max;
        self
    }

    /// Counts every lock-table request in its class of the SLI paper's
    /// Figure 8 ([`Stats::high_shared_hot`](crate::Stats::high_shared_hot)
    /// and the seven beside it): a profiling aid, off by default because
    /// it costs a few nanoseconds per request. Requests are classified
    /// where a new request is linked, so with it on a fast hold is taken
    /// through the table's request path with a request node (not without
    /// one). The row side's switch ([`FastRows::Auto`]) runs as without
    /// the classes: its windows count the row requests not granted on the
    /// fast path, so it turns where it would turn without them.
    pub fn lock_classes(mut self, on: bool) -> Self {
        self.lock_classes = on;
        self
    }

    /// Whether [`Agent::run`] and [`Agent::restart`] back off before they
    /// restart an aborted transaction (default `true`: a yield for the
    /// first two restarts, then random sleeps growing to about 1 ms).
    /// `false` restarts at once, as picotm does; exclusive mode after
    /// `max_restarts` still bounds the restarts.
    pub fn restart_backoff(mut self, on: bool) -> Self {
        self.restart_backoff = on;
        self
    }

    /// Lock escalation: once a transaction holds `n` row and page locks
    /// under one table, they become one lock on the table (S if all of
    /// them are shared, else X; joined with the table's intention lock,
    /// so IX + S = SIX) and the row and page locks the table lock now
    /// covers are released. The table conversion waits under the conflict
    /// policy like any conversion (a deadlock it closes is detected and
    /// its transaction is the victim); under `Wait::Skip` it is tried
    /// without waiting and, if busy, tried again after every further
    /// quarter of `n`. 0 (the default) never escalates; SQL Server and DB2
    /// escalate at 5,000. Counted in `Stats::escalations`.
    pub fn escalate_after(mut self, n: u32) -> Self {
        self.escalate_after = n;
        self
    }

    /// A cap on lock memory, in lock requests held or awaited by all
    /// transactions together (inherited ones included; each is one request
    /// node of about 128 bytes). A request that would pass it first
    /// escalates its transaction's largest group of row locks under one
    /// table (as `escalate_after` does); if that frees nothing it fails with
    /// [`LockError::OutOfLockMemory`](crate::LockError::OutOfLockMemory),
    /// like PostgreSQL's "out of shared memory", instead of growing without
    /// bound. Agents reserve the budget in chunks (a 64th of `n`, at most
    /// 32), so while less than half of it is in use a few chunks may sit
    /// with idle agents. 0 (the default) is no cap.
    pub fn max_locks(mut self, n: usize) -> Self {
        self.max_locks = n;
        self
    }

    /// The intention-lock fast path of the `Latched` and `LatchFree`
    /// tables (default true): IS and IX on database and table locks are a
    /// bit in the agent's own record, with no latch, queue or list, while
    /// no strong request (S, U, SIX, X) is counted on the lock (see the
    /// crate README, "Data structures"). With inheritance on, a fast hold
    /// is not passed on (it is no request of its own, and needs none):
    /// inheritance then serves the locks the fast path does not take, such
    /// as intention locks while a strong one is held or S on a hot table.
    /// `false` sends every request through the lock table, as a baseline,
    /// and lets inheritance pass intention locks on as the SLI paper does.
    pub fn fast_path(mut self, on: bool) -> Self {
        self.fast_path = on;
        self
    }

    /// Row S locks on the fast path of the `Latched` and `LatchFree`
    /// tables, when [`Builder::fast_path`] is on (default
    /// [`FastRows::Auto`]; a `bool` is `On` or `Off`): an S lock on a row
    /// is an entry in the agent's own record, writing no line that
    /// another thread writes, while no request that conflicts with S has
    /// come to the row's stripe since it last opened (a read-biased lock,
    /// after BRAVO; see the crate README, "Data structures"). An agent
    /// holds up to 32 rows so at once; more go to the table. Strong row
    /// requests (U, X, ...) then count themselves in the stripe and, while
    /// it may hold fast holds, look for them.
    ///
    /// `Auto` turns the row side off where it only costs (rows updated
    /// about as often as read: the stripes stay shut, S requests are
    /// turned away after a look and strong ones are counted for nothing)
    /// and on again when few row requests conflict with S, by counts each
    /// agent keeps of its own requests; a turn on waits until every
    /// transaction in progress has ended. [`LockManager::fast_rows_on`]
    /// says where it stands. `Off` sends row locks through the table.
    pub fn fast_rows(mut self, setting: impl Into<FastRows>) -> Self {
        self.fast_rows = setting.into();
        self
    }

    /// Whether a lock request takes intention locks on its ancestors
    /// first (default true: the hierarchy of the crate docs, where a table
    /// S or X lock covers or excludes the table's rows).
    ///
    /// `false` makes every lock stand alone, as in an engine that locks at
    /// one granularity only (DBx1000's rows, a key-value store's keys):
    /// `lock` and `lock_all` take the lock named and nothing above it, an
    /// ancestor held in S or X neither covers its descendants nor
    /// conflicts with their requests, `unlock` does not look for held
    /// descendants, and there is no escalation (`escalate_after` is
    /// ignored; a `max_locks` cap that is reached fails the request with
    /// `OutOfLockMemory` at once). Mixing granularities is then the
    /// engine's to avoid: a table X lock does not keep out a row lock of
    /// that table. Saves the intention-lock requests of every first row
    /// of a table and the walk above every other row.
    pub fn intention_locks(mut self, on: bool) -> Self {
        self.intention_locks = on;
        self
    }

    /// The cores the engine's threads (and a server table's lock servers)
    /// run on (default: `std::thread::available_parallelism`, which
    /// follows the process's affinity mask and CPU quota; at least 1).
    /// Two choices read it: whether a blocked request spins before it
    /// parks (not while the manager's agents and lock servers outnumber
    /// the cores, [`Builder::spin_before_park`]; by the same test a wound
    /// dooms its victim at its next lock call, or, while threads
    /// outnumber cores, only at a call that would wait,
    /// [`ConflictPolicy::WoundWait`]) and the default size of the
    /// latch-free tables and the latched table with spare heads
    /// ([`default_buckets`](crate::default_buckets)).
    /// An engine that runs its workers on part of the machine (pinned to
    /// one socket, or beside other services) says how many; a test or
    /// soak on a small machine sets it to run the paths of a larger one.
    /// [`LockManager::cores`] says what a manager took.
    pub fn cores(mut self, n: usize) -> Self {
        self.cores = Some(n.max(1));
        self
    }

    /// Builds the lock manager.
    pub fn build(self) -> LockManager {
        // Escalation trades row locks for a table lock that covers them,
        // which needs the hierarchy.
        let escalate_after = if self.intention_locks { self.escalate_after } else { 0 };
        let special = self.table == TableKind::NoLocking || escalate_after > 0 || self.max_locks > 0;
        let cores = self
            .cores
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let buckets = self.buckets.or_else(|| crate::default_buckets(self.table, cores));
        let mut table = Table::new(
            self.table,
            buckets,
            self.inheritance != Inheritance::Off,
            self.fast_path,
            self.fast_rows != FastRows::Off,
        );
        if self.policy == ConflictPolicy::WaitDie {
            table.judge_wait_die();
        }
        let row_switch = (self.fast_rows == FastRows::Auto && table.fast().is_some_and(|f| f.row_side().is_some()))
            .then(RowSwitch::new);
        LockManager {
            inner: Arc::new(ManagerState {
                fast_holds: table.fast().is_some() && !self.lock_classes,
                row_votes_before: row_switch.is_some() && !self.lock_classes,
                row_switch,
                row_state: table.fast().and_then(|f| f.row_side()).map(|r| r.switch()),
                table,
                kind: self.table,
                may_wait: !matches!(self.policy, ConflictPolicy::NoWait),
                wound_wait: matches!(self.policy, ConflictPolicy::WoundWait),
                no_locks: self.table == TableKind::NoLocking,
                special,
                flat: !self.intention_locks,
                route: match (special, self.intention_locks) {
                    (true, _) => Route::Special,
                    (false, true) => Route::Walk,
                    (false, false) => Route::Alone,
                },
                policy: self.policy,
                max_restarts: self.max_restarts,
                sli: Rules::new(
                    self.inheritance,
                    self.hot_threshold,
                    self.keep_inherited,
                    self.reuse_heat,
                ),
                deadlock_timeout: self.deadlock_timeout,
                spin_max_ns: u64::try_from(self.spin_before_park.as_nanos()).unwrap_or(u64::MAX),
                cores,
                live_agents: AtomicUsize::new(0),
                table_threads: match self.table {
                    TableKind::Server { partitions } => usize::from(partitions),
                    _ => 0,
                },
                lock_classes: self.lock_classes,
                restart_backoff: self.restart_backoff,
                registry: parking_lot::RwLock::new(Registry::default()),
                victims: CachePadded::new(parking_lot::Mutex::new(())),
                gate: Gate::new(),
                base: Instant::now(),
                escalate_after,
                lock_memory: (self.max_locks > 0).then(|| LockMemory::new(self.max_locks)),
            }),
        }
    }
}

/// A lock manager. Cheap to clone (a shared handle); create one [`Agent`]
/// per worker thread with [`LockManager::agent`].
#[derive(Clone)]
pub struct LockManager {
    pub(crate) inner: Arc<ManagerState>,
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
        self.inner.sli.setting()
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
        let reg = self.inner.registry.read();
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

    /// Lock memory: `(in use, cap)` in lock requests, with `in use` the
    /// budget agents have reserved (their requests plus at most a few
    /// chunks of 32); `None` without [`Builder::max_locks`].
    pub fn lock_memory(&self) -> Option<(usize, usize)> {
        self.inner
            .lock_memory
            .as_ref()
            .map(|m| (m.reserved.load(Ordering::Relaxed), m.limit))
    }

    /// Server table: the partitions whose lock-server thread has failed
    /// (panicked). Requests for their locks fail with
    /// [`LockError::ServerFailed`](crate::LockError::ServerFailed); the
    /// other partitions serve as before. Empty on every other table.
    pub fn failed_partitions(&self) -> Vec<usize> {
        self.inner.table.failed_partitions()
    }

    /// `GlobalHtm` and `LatchedHtm`: the hardware transactions of the
    /// elided latches so far (commits, aborts by cause, sections run under
    /// the latch, and whether the CPU has RTM). `None` on every other
    /// table.
    pub fn elision(&self) -> Option<ElisionStats> {
        self.inner.table.elision()
    }

    /// Whether row S locks are taken on the fast path now
    /// ([`Builder::fast_rows`]): `false` where the table has no row side,
    /// and while `Auto` has it off or on its way on.
    pub fn fast_rows_on(&self) -> bool {
        self.inner
            .table
            .fast()
            .and_then(|f| f.row_side())
            .is_some_and(|r| r.is_on())
    }

    /// The hash buckets of the latched and latch-free tables now
    /// ([`Builder::buckets`]; the latched table's count grows as it fills); `None`
    /// for the global and server tables and without locking.
    pub fn buckets(&self) -> Option<usize> {
        if self.inner.no_locks {
            return None;
        }
        self.inner.table.buckets()
    }

    /// The cores this manager counts its threads against
    /// ([`Builder::cores`]: the machine's unless told).
    pub fn cores(&self) -> usize {
        self.inner.cores
    }

    /// `Auto`'s turns of the row side away from on so far
    /// ([`Builder::fast_rows`]; 0 under `On` and `Off`).
    pub fn fast_rows_turned_off(&self) -> u32 {
        self.inner.row_switch.as_ref().map_or(0, RowSwitch::drains)
    }

    /// Statistics of every agent, live and gone, merged now.
    pub fn stats(&self) -> Stats {
        let reg = self.inner.registry.read();
        let mut s = reg.retired;
        for a in reg.agents() {
            s.merge(&a.counters.read());
        }
        s
    }
}
