//! What one run reports: throughput, latency, the lock manager's events
//! per transaction, the time breakdown and the machine's counts (the
//! runner fills it, `report` prints it, the JSON and CSV carry it).

use serde::Serialize;

/// What a worker does with a transaction the lock manager aborted
/// (`--retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Retry {
    /// Restart it at once, after `Agent::run`'s randomised backoff (a
    /// yield for the first two restarts, then sleeps of up to 2^n us), in
    /// exclusive mode after the lock manager's `max_restarts`.
    #[default]
    Backoff,
    /// DBx1000's abort buffer: the aborted input waits a random time below
    /// `runner::DEFER_PENALTY` in a buffer of `runner::DEFER_SLOTS` while the worker
    /// starts new transactions (it sleeps only when the buffer is full and
    /// nothing in it is ready); an input deferred `runner::DEFER_LIMIT` times
    /// then runs through `Agent::run`, which guarantees it ends.
    Defer,
    /// Restart it at once, with no backoff (picotm's restarts), in
    /// exclusive mode after `--exclusive-after` restarts.
    Now,
}

impl Retry {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Retry::Backoff => "backoff",
            Retry::Defer => "defer",
            Retry::Now => "now",
        }
    }
}

impl std::str::FromStr for Retry {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "backoff" => Ok(Retry::Backoff),
            "defer" => Ok(Retry::Defer),
            "now" => Ok(Retry::Now),
            other => Err(format!("--retry: {other:?} is not backoff, defer or now")),
        }
    }
}

/// The cost of a micro-benchmark's operation in one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpCost {
    /// What one operation is ("acquisition", "null section", "lock").
    pub name: String,
    /// Operations per committed transaction.
    pub per_txn: f64,
    /// Operations per second, all threads together.
    pub per_s: f64,
    /// Nanoseconds per operation as one thread sees it: threads / `per_s`
    /// (the 1995 paper's cost per process; with more threads than cores it
    /// includes the time a thread waits for a core).
    pub ns: f64,
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Maximum.
    pub max: f64,
}

/// Concurrency failures over a run, by cause (the lock manager's counters).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct AbortCauses {
    /// Deadlock victims (`detect`).
    pub deadlock: u64,
    /// Waits that timed out.
    pub timeout: u64,
    /// Requests refused at once (`nowait`).
    pub would_block: u64,
    /// Wait-die deaths.
    pub died: u64,
    /// Wound-wait wounds.
    pub wounded: u64,
    /// Wound-wait: nanoseconds from each wound to its victim's death,
    /// summed (`Stats::wound_delay_ns`).
    pub wound_delay_ns: u64,
    /// Not aborts: cycles `detect` found and then rejected, because a
    /// second look showed one of their edges gone (each would have been a
    /// false deadlock).
    pub cycles_rejected: u64,
}

/// Lock manager events per completed (committed or failed) transaction.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct PerTxn {
    /// `lock()` calls (intention locks included).
    pub lock_requests: f64,
    /// Lock table operations: acquisitions, conversions, releases (fast
    /// holds included).
    pub table_ops: f64,
    /// The part of `table_ops` (all of it above row level) that the
    /// intention-lock fast path served (`--fast-path`): acquisitions,
    /// conversions and releases of fast holds, with no latch, queue or
    /// list. `table_ops_by_level.above_row() - fast_ops` is what touched
    /// the table's shared state above row level.
    pub fast_ops: f64,
    /// Latch acquisitions that found the latch held.
    pub latch_contended: f64,
    /// Latch-free table: failed and retried compare-and-swaps (its
    /// equivalent of `latch_contended`; zero on the latched tables).
    pub cas_retries: f64,
    /// Requests that waited for a lock.
    pub waits: f64,
    /// Inherited locks used (reclaimed with one CAS).
    pub inherited_used: f64,
    /// Inherited locks not used.
    pub inherited_discarded: f64,
    /// Inherited locks invalidated by a conflicting requester.
    pub inherited_invalidated: f64,
    /// Server table: messages to lock servers (round trips).
    pub messages: f64,
    /// `table_ops` by the level of the lock.
    pub table_ops_by_level: Levels,
    /// Lock-table requests by class (the SLI paper's Figure 8), where the
    /// run counted them (`--classes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Classes>,
}

/// A per-transaction count split by the level of the lock.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Levels {
    /// Database locks.
    pub database: f64,
    /// Table locks.
    pub table: f64,
    /// Page locks.
    pub page: f64,
    /// Row locks.
    pub row: f64,
}

impl Levels {
    /// Above row level: what inheritance can save.
    pub fn above_row(&self) -> f64 {
        self.database + self.table + self.page
    }
}

/// Lock-table acquisitions and conversions per transaction by class, as
/// the SLI paper's Figure 8 classifies them: above row level (`high`) or
/// a row, shared (IS, IX, S) or exclusive (SIX, X), hot (found its latch
/// held or retried a CAS) or cold (`heirloom::Stats::high_shared_hot`).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Classes {
    /// Above row level, shared, hot: what inheritance is for.
    pub high_shared_hot: f64,
    /// Above row level, shared, cold.
    pub high_shared_cold: f64,
    /// Above row level, exclusive, hot.
    pub high_exclusive_hot: f64,
    /// Above row level, exclusive, cold.
    pub high_exclusive_cold: f64,
    /// Rows, shared, hot.
    pub row_shared_hot: f64,
    /// Rows, shared, cold.
    pub row_shared_cold: f64,
    /// Rows, exclusive, hot.
    pub row_exclusive_hot: f64,
    /// Rows, exclusive, cold.
    pub row_exclusive_cold: f64,
}

/// Shares of worker time (they add up to 1), and the time per transaction
/// spent outside the lock manager.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Breakdown {
    /// Inside the lock manager, not waiting (lock calls, begin, commit,
    /// abort).
    pub lock_manager: f64,
    /// Lock calls during which a latch was found held.
    pub latch_contention: f64,
    /// Lock calls that waited for a lock.
    pub lock_wait: f64,
    /// `Agent::run`'s backoff between an abort and the restart (under
    /// `--retry defer`, sleeps with a full buffer of deferred inputs).
    pub backoff: f64,
    /// Everything else: the transaction's own work (index lookups, row
    /// reads and writes, undo logging) and the runner.
    pub other: f64,
    /// Microseconds per completed transaction spent in `other`.
    pub other_us_per_txn: f64,
}

/// The measurements of one run (the JSON record).
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Workload name.
    pub workload: String,
    /// Mix name.
    pub mix: String,
    /// Lock table kind.
    pub table: String,
    /// SLI on?
    pub sli: bool,
    /// With SLI on, transactions an inherited lock may stay unused
    /// (`--sli-keep`).
    pub sli_keep: u32,
    /// The intention-lock fast path on (`--fast-path`; it exists on the
    /// latched and latch-free tables only).
    pub fast_path: bool,
    /// Conflict policy, and after `+excl@` the restarts before exclusive
    /// mode when they are not the default 10 (`never`: no exclusive mode).
    pub policy: String,
    /// Restarts after which a transaction ran in exclusive mode (`None`:
    /// never).
    pub exclusive_after: Option<u32>,
    /// Worker threads.
    pub threads: usize,
    /// The benchmark's scale in this run (`--scale`, per thread or total).
    pub scale: u64,
    /// Measured seconds.
    pub seconds: f64,
    /// Transactions committed with their work done.
    pub committed: u64,
    /// Transactions that failed by design (rolled back, then committed).
    pub failed: u64,
    /// Transaction attempts aborted by the lock manager (concurrency).
    pub aborted: u64,
    /// Restarts after such aborts (under `--retry defer`, deferrals
    /// included).
    pub restarts: u64,
    /// What workers did with aborted transactions.
    pub retry: Retry,
    /// Inputs per worker drawn before the run (0: drawn as needed).
    pub pregen: usize,
    /// Transactions `Agent::run` ran in exclusive mode (after too many
    /// restarts).
    pub exclusive_runs: u64,
    /// Why requests failed, counted over the run (each such failure aborts
    /// its transaction).
    pub abort_causes: AbortCauses,
    /// Request nodes the agents allocated during the measured interval:
    /// zero once their pools are warm, unless the epoch collector lags
    /// behind for longer than an agent's help (latch-free table,
    /// oversubscribed; `heirloom::Stats::nodes_allocated`).
    pub nodes_allocated: u64,
    /// Rounds in which an agent short of request nodes helped the epoch
    /// collector instead of allocating, during the measured interval: zero
    /// unless a thread preempted while pinned held the epoch (latch-free
    /// table, oversubscribed; `heirloom::Stats::reclaim_helps`). Each
    /// round flushes the thread's deferred functions and may give up the
    /// processor, with the transaction's locks held.
    pub reclaim_helps: u64,
    /// Committed (successful) transactions per second: the headline, as
    /// TATP's MQTh and DBx1000 count.
    pub tps: f64,
    /// Completed transactions per second: committed plus failed by design.
    pub total_tps: f64,
    /// Latency of completed transactions (restarts included).
    pub latency_us: Latency,
    /// Lock manager events per completed transaction.
    pub per_txn: PerTxn,
    /// Time breakdown (with `--breakdown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Breakdown>,
    /// What the measured interval cost the machine per completed
    /// transaction (with `--counters`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::counters::PerTxn>,
    /// Why `counters` is absent though they were asked for: a worker's
    /// counter read what cannot be true (`crate::counters::PerTxn::judge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters_lost: Option<String>,
    /// The lock manager's shared-line writes per completed transaction
    /// and where it made them (with `--sharing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<crate::sharing::PerTxn>,
    /// Throughput of every repeat of this configuration, in run order (with
    /// `--repeat` above 1; this record is the median one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tps_runs: Vec<f64>,
    /// Consistency check summary (with `--verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
    /// A micro-benchmark's operation cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<OpCost>,
    /// This run's share of the ceiling: its throughput over that of the
    /// `none` run (no locking) of the same sweep at the same thread count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of_ceiling: Option<f64>,
    /// The elided tables (`global-htm`, `latched-htm`): their hardware
    /// transactions over the run, warm-up included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elision: Option<crate::elision::Elision>,
    /// The row side (row S locks held fast, `heirloom::Builder::fast_rows`)
    /// where the run's table has one: whether it was on at the run's end,
    /// and how often the switch turned it off (warm-up included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowSide>,
}

/// The row side at a run's end (`RunResult::rows`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RowSide {
    /// Row S locks were taken fast (`heirloom::LockManager::fast_rows_on`):
    /// always under `--fast-rows on`; under `auto` (the default) as the
    /// switch left it.
    pub on: bool,
    /// `auto`'s turns away from on (`heirloom::LockManager::fast_rows_turned_off`;
    /// 0 under `on`).
    pub turned_off: u32,
}

impl RunResult {
    /// The SLI setting as reports name it: `off`, `on`, or `on+kN` with
    /// `--sli-keep N`, and `/nofast` with the fast path off.
    pub fn sli_label(&self) -> String {
        sli_label(self.sli, self.sli_keep, self.fast_path)
    }

    /// The configuration as messages name it: `latched sli=off detect 8
    /// threads`.
    pub fn config(&self) -> String {
        format!(
            "{} sli={} {} {} threads",
            self.table,
            self.sli_label(),
            self.policy,
            self.threads
        )
    }
}

/// `off`, `on`, or `on+kN` (inherited locks kept through N unused
/// transactions), with `/nofast` when the intention-lock fast path is off.
pub fn sli_label(sli: bool, keep: u32, fast_path: bool) -> String {
    let s = match (sli, keep) {
        (false, _) => "off".to_string(),
        (true, 0) => "on".into(),
        (true, k) => format!("on+k{k}"),
    };
    if fast_path { s } else { s + "/nofast" }
}
