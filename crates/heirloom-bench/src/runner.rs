//! Runs a workload under one lock manager configuration: one agent per
//! worker thread, a warm-up, a measured interval, and the counts. A
//! workload is what the runner drives ([`Workload`]): a loaded database
//! that draws inputs, executes one transaction and verifies itself.

use crate::counters;
pub use crate::mix::Mix;
pub use crate::results::{
    AbortCauses, Breakdown, Classes, Latency, Levels, OpCost, PerTxn, Retry, RowSide, RunResult, sli_label,
};
use crate::storage::{Outcome, StorageError, Times, Tx, TxError, UndoLog};
use hdrhistogram::Histogram;
use heirloom::{ConflictPolicy, FastRows, Inheritance, LockManager, Stats, TableKind};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One workload on its populated database.
pub trait Workload: Send + Sync + 'static {
    /// One transaction's inputs (drawn once, kept across restarts).
    type Input: Send;
    /// Per-worker state (logs the worker owns, counters).
    type Worker: Send;

    /// Its benchmark's name (the report's `workload` column).
    fn name(&self) -> &'static str;
    /// Names of its transaction types, indexed by type.
    fn transactions(&self) -> &'static [&'static str];
    /// State for worker `index`.
    fn worker(&self, index: usize) -> Self::Worker;
    /// Draws the next transaction of type `kind`.
    fn input(&self, kind: usize, worker: &Self::Worker, rng: &mut SmallRng) -> Self::Input;
    /// Runs one transaction. On a business failure it returns
    /// `Ok(Outcome::Failed)` and the caller rolls back; on an error the
    /// caller rolls back and the lock manager aborts.
    fn execute<'d>(
        &'d self,
        tx: &mut Tx<'_, '_, 'd>,
        worker: &mut Self::Worker,
        input: &Self::Input,
    ) -> Result<Outcome, TxError>;
    /// Undoes the newest append to worker log `log`.
    fn undo_append(&self, worker: &mut Self::Worker, log: usize);
    /// Hands back a worker's state at the end of a run (for `verify`).
    fn retire(&self, worker: Self::Worker);
    /// Checks the consistency rules on the quiescent database; a summary of
    /// what was checked, or the first violation.
    fn verify(&self) -> Result<String, String>;
    /// A micro-benchmark's operation: its name and how many a committed
    /// transaction performs (reported as operations per second and
    /// nanoseconds per operation per thread).
    fn op(&self) -> Option<(&'static str, f64)> {
        None
    }
}

/// Inputs one worker may hold back under [`Retry::Defer`] (DBx1000's
/// `ABORT_BUFFER_SIZE`).
pub const DEFER_SLOTS: usize = 10;
/// Upper bound of a deferred input's random wait (DBx1000's
/// `ABORT_PENALTY`, 100 us).
pub const DEFER_PENALTY: Duration = Duration::from_micros(100);
/// Inputs per worker a profile draws before each run (`--pregen`), as
/// DBx1000 draws its queries before it starts the clock.
pub const PREGEN: usize = 1 << 15;

/// Deferrals after which an input runs through `Agent::run`.
pub const DEFER_LIMIT: u32 = 10;

/// One lock manager configuration and run length.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Lock table kind.
    pub table: TableKind,
    /// Speculative lock inheritance on or off.
    pub sli: bool,
    /// With SLI on: transactions an inherited lock may stay unused on its
    /// agent (`heirloom::Builder::keep_inherited`).
    pub sli_keep: u32,
    /// The intention-lock fast path (`heirloom::Builder::fast_path`).
    pub fast_path: bool,
    /// Row S locks on it (`heirloom::Builder::fast_rows`).
    pub fast_rows: FastRows,
    /// Conflict policy.
    pub policy: ConflictPolicy,
    /// Wait before the first deadlock search (`Detect`).
    pub deadlock_timeout: Duration,
    /// The most a request waits before it fails with `Timeout`, on top of
    /// the policy (`heirloom::Transaction::set_lock_timeout`; `None`: no
    /// bound). DBx1000's `DL_DETECT` is detection with such a bound of
    /// 1 ms (its `TIMEOUT`).
    pub lock_timeout: Option<Duration>,
    /// The most a blocked request spins before it parks
    /// (`heirloom::Builder::spin_before_park`).
    pub spin: Duration,
    /// Hash buckets of the latched and latch-free tables (`None`: the
    /// lock manager's default).
    pub buckets: Option<usize>,
    /// The cores the lock manager counts its threads against
    /// (`heirloom::Builder::cores`; `None`: the machine's).
    pub cores: Option<usize>,
    /// Restarts after which `Agent::run` runs a transaction in exclusive
    /// mode (`u32::MAX`: never).
    pub exclusive_after: u32,
    /// Worker threads (one agent each).
    pub threads: usize,
    /// The benchmark's scale in this run (its database's size).
    pub scale: u64,
    /// Measured interval.
    pub duration: Duration,
    /// Warm-up before it (not measured).
    pub warmup: Duration,
    /// How long after the measured interval the workers may take to
    /// finish before the run counts as stuck ([`STUCK_AFTER`] by default;
    /// see [`stuck_report`]).
    pub stuck_after: Duration,
    /// Seed of the workers' random streams.
    pub seed: u64,
    /// Split each worker's time into lock manager work, latch contention,
    /// lock waits and the rest (adds two clock reads per lock call).
    pub breakdown: bool,
    /// Count lock-table requests by class (`heirloom::Builder::lock_classes`:
    /// fast holds are then taken with a request node, so the lock
    /// manager runs a path of its own; apart from `breakdown`, whose
    /// lock-manager time measures the default path).
    pub classes: bool,
    /// Count instructions, cycles, CPU time and context switches over the
    /// measured interval (`crate::counters`; costs nothing per
    /// transaction).
    pub counters: bool,
    /// Count the lock manager's shared-line writes over the measured
    /// interval (`crate::sharing`; needs the `sharing` feature).
    pub sharing: bool,
    /// What a worker does with an aborted transaction.
    pub retry: Retry,
    /// Inputs each worker draws before the run and then cycles through
    /// (0: draw each input when it is needed, inside the measured time).
    pub pregen: usize,
}

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A table ran out of room.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The lock manager refused a request the workload made (a bug).
    #[error("lock manager error that cannot be retried: {0}")]
    Lock(heirloom::LockError),
    /// Locks were still held after every worker had finished (a bug).
    #[error("{0} locks still held after the run ended")]
    LocksLeft(usize),
    /// `--counters` on a machine without them.
    #[error(transparent)]
    Counters(#[from] crate::counters::Unavailable),
}

/// How long after a run's end its workers may take to finish the
/// transactions they were running before the run counts as stuck, unless
/// the run says otherwise (`RunConfig::stuck_after`, `--stuck-after`).
pub const STUCK_AFTER: Duration = Duration::from_secs(30);

/// Lines of the lock table a stuck run's report shows at most.
const STUCK_LINES: usize = 200;

/// What a stuck run reports before the process ends: how many workers
/// did not finish, the lock table's requests (its first lines, up to
/// `STUCK_LINES`) and every agent's wait.
pub fn stuck_report(lm: &LockManager, stuck: usize, after: Duration) -> String {
    let table = lm.snapshot().to_string();
    let lines = table.lines().count();
    let mut out = format!(
        "heirloom bench: {stuck} worker(s) still running {} s after the run's end: a wait nothing ends \
         (a lost wake-up or a deadlock no policy breaks); the lock table and the agents follow\n",
        after.as_secs()
    );
    for l in table.lines().take(STUCK_LINES) {
        out.push_str(l);
        out.push('\n');
    }
    if lines > STUCK_LINES {
        out.push_str(&format!("... {} more lines\n", lines - STUCK_LINES));
    }
    out.push_str(&lm.agents_report());
    out
}

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

struct WorkerOut {
    committed: u64,
    failed: u64,
    stats: Stats,
    hist: Histogram<u64>,
    times: Times,
    total_ns: u64,
    in_closure_ns: u64,
    /// Attempts deferred (`Retry::Defer`).
    deferred: u64,
    /// Time asleep waiting for a deferred input (`Retry::Defer`).
    slept_ns: u64,
    /// Attempts given up because the run ended (`TxError::Stopped`): the
    /// lock manager counts them aborted; the report does not.
    stopped: u64,
    /// This thread's counts over the measured interval, and whether they
    /// include kernel mode (with `RunConfig::counters`).
    counters: Option<(counters::Totals, bool)>,
    /// This thread's shared-line writes (with `RunConfig::sharing`).
    sharing: Option<crate::sharing::Totals>,
}

/// Where a transaction's input is: drawn for it, or in the worker's ring
/// of inputs drawn before the run.
enum Source<I> {
    Drawn(I),
    Ring(usize),
}

/// An aborted transaction's input waiting for its next attempt.
struct Deferred<I> {
    input: Source<I>,
    ready: Instant,
    since: Instant,
    attempts: u32,
}

/// Builds the lock manager of `cfg`.
pub fn lock_manager(cfg: &RunConfig) -> LockManager {
    let b = LockManager::builder();
    // Unset: the table kind's own default.
    let b = match cfg.buckets {
        Some(n) => b.buckets(n),
        None => b,
    };
    // Unset: the machine's.
    let b = match cfg.cores {
        Some(n) => b.cores(n),
        None => b,
    };
    b.table(cfg.table)
        .conflicts(cfg.policy)
        .deadlock_timeout(cfg.deadlock_timeout)
        .spin_before_park(cfg.spin)
        .max_restarts(cfg.exclusive_after)
        .lock_classes(cfg.classes)
        .restart_backoff(cfg.retry != Retry::Now)
        .inheritance(if cfg.sli { Inheritance::On } else { Inheritance::Off })
        .keep_inherited(cfg.sli_keep)
        .fast_path(cfg.fast_path)
        .fast_rows(cfg.fast_rows)
        .build()
}

/// The restarts before exclusive mode that runs take by default
/// (`heirloom::Builder::max_restarts`).
pub const EXCLUSIVE_AFTER: u32 = 10;

/// The policy as reports name it: with `+excl@N` (or `+excl@never`) when
/// the restarts before exclusive mode are not [`EXCLUSIVE_AFTER`], and
/// `+spinN` (microseconds) when the spin before a park is not the
/// library's default, and `+ltN` (microseconds) under a lock timeout.
pub fn policy_label(cfg: &RunConfig) -> String {
    let mut label = match cfg.exclusive_after {
        EXCLUSIVE_AFTER => cfg.policy.name(),
        u32::MAX => format!("{}+excl@never", cfg.policy.name()),
        n => format!("{}+excl@{n}", cfg.policy.name()),
    };
    if cfg.spin != heirloom::DEFAULT_SPIN_BEFORE_PARK {
        label.push_str(&format!("+spin{}", cfg.spin.as_micros()));
    }
    if let Some(t) = cfg.lock_timeout {
        label.push_str(&format!("+lt{}", t.as_micros()));
    }
    label
}

/// Runs `workload` with `mix` under `cfg`; `tick` is called about every
/// 100 ms (progress).
pub fn run<W: Workload>(
    workload: &W,
    mix: &Mix,
    cfg: &RunConfig,
    tick: &mut dyn FnMut(Duration),
) -> Result<RunResult, RunError> {
    let lm = lock_manager(cfg);
    if cfg.sharing {
        // Lines that an earlier run's threads or the table's setup wrote
        // last are not this run's sharing.
        heirloom::sharing::forget_writers();
    }
    let phase = AtomicU8::new(WARMUP);
    let ready = AtomicUsize::new(0);
    let mut measured = Duration::ZERO;
    let outs: Vec<Result<WorkerOut, RunError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|i| {
                let (lm, phase, ready) = (&lm, &phase, &ready);
                s.spawn(move || worker(workload, mix, lm, cfg, i, phase, ready))
            })
            .collect();
        // The warm-up starts when every worker has drawn its inputs (or one
        // has ended early, with an error or a panic that the join reports).
        while ready.load(Ordering::Acquire) < cfg.threads && !handles.iter().any(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let step = |d: Duration, tick: &mut dyn FnMut(Duration)| {
            let end = Instant::now() + d;
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let nap = (end - now).min(Duration::from_millis(100));
                std::thread::sleep(nap);
                tick(nap);
            }
        };
        step(cfg.warmup, tick);
        phase.store(MEASURE, Ordering::Relaxed);
        let start = Instant::now();
        step(cfg.duration, tick);
        phase.store(STOP, Ordering::Relaxed);
        measured = start.elapsed();
        let stopped_at = Instant::now();
        while !handles.iter().all(|h| h.is_finished()) {
            if stopped_at.elapsed() >= cfg.stuck_after {
                // A wait that nothing will end (a lost wake-up, a deadlock
                // no policy breaks): say where, and end the process rather
                // than hang (the scoped workers cannot be cancelled).
                let stuck = handles.iter().filter(|h| !h.is_finished()).count();
                eprint!("{}", stuck_report(&lm, stuck, cfg.stuck_after));
                std::process::exit(1);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("worker thread panicked"))
            .collect()
    });
    // Every agent is gone: the lock table must be empty (inherited locks
    // are released when their agent drops).
    let left = lm.snapshot().locks.len();
    if left != 0 {
        return Err(RunError::LocksLeft(left));
    }
    let mut committed = 0;
    let mut failed = 0;
    let mut stats = Stats::default();
    let mut hist = Histogram::<u64>::new(3).expect("3 significant digits is valid");
    let mut times = Times::default();
    let (mut total_ns, mut closure_ns, mut deferred, mut slept_ns) = (0u64, 0u64, 0u64, 0u64);
    let mut stopped = 0u64;
    let mut counted: Option<(counters::Totals, bool)> = None;
    let mut shared: Option<crate::sharing::Totals> = None;
    for o in outs {
        let o = o?;
        committed += o.committed;
        failed += o.failed;
        stats.merge(&o.stats);
        hist.add(&o.hist).expect("auto-resizing histograms add");
        times.lock_work += o.times.lock_work;
        times.contention += o.times.contention;
        times.lock_wait += o.times.lock_wait;
        total_ns += o.total_ns;
        closure_ns += o.in_closure_ns;
        deferred += o.deferred;
        slept_ns += o.slept_ns;
        stopped += o.stopped;
        if let Some(t) = o.sharing {
            shared.get_or_insert_default().add(t);
        }
        if let Some((t, kernel)) = o.counters {
            let c = counted.get_or_insert((counters::Totals::default(), kernel));
            c.0 += t;
            c.1 &= kernel;
        }
    }
    stats.aborted = stats.aborted.saturating_sub(stopped);
    let judged =
        counted.map(|(t, kernel)| counters::PerTxn::judge(&t, committed + failed, measured.as_secs_f64(), kernel));
    let done = (committed + failed).max(1) as f64;
    let per = |x: u64| x as f64 / done;
    let us = |q: f64| hist.value_at_quantile(q) as f64 / 1000.0;
    let breakdown = cfg.breakdown.then(|| {
        // Begin, commit, abort and the backoff before a restart happen
        // outside the closure; all but the backoff are lock manager work.
        let total = total_ns.max(1) as f64;
        let outside = total_ns.saturating_sub(closure_ns);
        let backoff = (stats.backoff_ns + slept_ns).min(outside);
        let lm = (times.lock_work + outside - backoff) as f64 / total;
        let cont = times.contention as f64 / total;
        let wait = times.lock_wait as f64 / total;
        let backoff = backoff as f64 / total;
        let other = (1.0 - lm - cont - wait - backoff).max(0.0);
        Breakdown {
            lock_manager: lm,
            latch_contention: cont,
            lock_wait: wait,
            backoff,
            other,
            other_us_per_txn: other * total_ns as f64 / 1e3 / done,
        }
    });
    Ok(RunResult {
        workload: workload.name().to_string(),
        mix: mix.name.clone(),
        table: {
            let mut t = match cfg.buckets {
                Some(b) => format!("{}/b{b}", cfg.table),
                None => cfg.table.to_string(),
            };
            match cfg.fast_rows {
                FastRows::Off => t.push_str("/rows-off"),
                FastRows::On => t.push_str("/rows-on"),
                _ => {}
            }
            if let Some(c) = cfg.cores {
                t.push_str(&format!("/cores{c}"));
            }
            t
        },
        sli: cfg.sli,
        sli_keep: if cfg.sli { cfg.sli_keep } else { 0 },
        fast_path: cfg.fast_path,
        policy: policy_label(cfg),
        exclusive_after: (cfg.exclusive_after != u32::MAX).then_some(cfg.exclusive_after),
        threads: cfg.threads,
        scale: cfg.scale,
        seconds: measured.as_secs_f64(),
        committed,
        failed,
        aborted: stats.aborted,
        restarts: stats.restarts + deferred,
        retry: cfg.retry,
        pregen: cfg.pregen,
        exclusive_runs: stats.exclusive_runs,
        nodes_allocated: stats.nodes_allocated,
        reclaim_helps: stats.reclaim_helps,
        abort_causes: AbortCauses {
            deadlock: stats.deadlocks,
            timeout: stats.timeouts,
            would_block: stats.would_block,
            died: stats.died,
            wounded: stats.wounded,
            wound_delay_ns: stats.wound_delay_ns,
            cycles_rejected: stats.cycles_rejected,
        },
        tps: committed as f64 / measured.as_secs_f64(),
        total_tps: (committed + failed) as f64 / measured.as_secs_f64(),
        latency_us: Latency {
            p50: us(0.5),
            p99: us(0.99),
            p999: us(0.999),
            max: hist.max() as f64 / 1000.0,
        },
        per_txn: PerTxn {
            lock_requests: per(stats.lock_requests),
            table_ops: per(stats.table_ops),
            fast_ops: per(stats.fast_ops),
            latch_contended: per(stats.latch_contended),
            cas_retries: per(stats.cas_retries),
            waits: per(stats.waits),
            inherited_used: per(stats.inherited_used),
            inherited_discarded: per(stats.inherited_discarded),
            inherited_invalidated: per(stats.inherited_invalidated),
            messages: per(stats.messages),
            table_ops_by_level: Levels {
                database: per(stats.table_ops_database),
                table: per(stats.table_ops_table),
                page: per(stats.table_ops_page),
                row: per(stats.table_ops_row),
            },
            classes: cfg.classes.then(|| Classes {
                high_shared_hot: per(stats.high_shared_hot),
                high_shared_cold: per(stats.high_shared_cold),
                high_exclusive_hot: per(stats.high_exclusive_hot),
                high_exclusive_cold: per(stats.high_exclusive_cold),
                row_shared_hot: per(stats.row_shared_hot),
                row_shared_cold: per(stats.row_shared_cold),
                row_exclusive_hot: per(stats.row_exclusive_hot),
                row_exclusive_cold: per(stats.row_exclusive_cold),
            }),
        },
        op: workload.op().map(|(name, per_txn)| {
            let per_s = committed as f64 * per_txn / measured.as_secs_f64();
            OpCost {
                name: name.to_string(),
                per_txn,
                per_s,
                ns: cfg.threads as f64 * 1e9 / per_s.max(1e-9),
            }
        }),
        breakdown,
        counters: judged.as_ref().and_then(|j| j.as_ref().ok()).copied(),
        counters_lost: judged.and_then(|j| j.err()).map(|e| e.to_string()),
        sharing: shared.map(|t| t.per_txn(committed + failed)),
        tps_runs: Vec::new(),
        verified: None,
        of_ceiling: None,
        elision: lm.elision().map(crate::elision::Elision::of),
        rows: (cfg.table.has_fast_path() && cfg.fast_path && cfg.fast_rows != FastRows::Off).then(|| RowSide {
            on: lm.fast_rows_on(),
            turned_off: lm.fast_rows_turned_off(),
        }),
    })
}

fn worker<W: Workload>(
    workload: &W,
    mix: &Mix,
    lm: &LockManager,
    cfg: &RunConfig,
    index: usize,
    phase: &AtomicU8,
    ready: &AtomicUsize,
) -> Result<WorkerOut, RunError> {
    let mut agent = lm.agent();
    let mut state = workload.worker(index);
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let ring: Vec<W::Input> = (0..cfg.pregen)
        .map(|_| {
            let kind = mix.pick(&mut rng);
            workload.input(kind, &state, &mut rng)
        })
        .collect();
    let mut next = 0usize;
    let mut counters = if cfg.counters {
        Some(counters::Thread::open_best()?)
    } else {
        None
    };
    ready.fetch_add(1, Ordering::Release);
    let mut undo = UndoLog::default();
    let mut hist = Histogram::<u64>::new(3).expect("valid");
    let mut measuring = false;
    let mut base = Stats::default();
    let (mut committed, mut failed) = (0u64, 0u64);
    let mut times = Times::default();
    let (mut total_ns, mut closure_ns) = (0u64, 0u64);
    let (mut deferred, mut slept_ns, mut stopped) = (0u64, 0u64, 0u64);
    let mut parked: Vec<Deferred<W::Input>> = Vec::with_capacity(DEFER_SLOTS);
    let mut meter: Option<crate::sharing::Meter> = None;
    let result = loop {
        match phase.load(Ordering::Relaxed) {
            STOP => break Ok(()),
            MEASURE if !measuring => {
                measuring = true;
                base = agent.stats();
                times = Times::default();
                meter = cfg.sharing.then(crate::sharing::Meter::start);
                if let Some((c, _)) = &mut counters
                    && let Err(e) = c.start()
                {
                    break Err(e.into());
                }
            }
            _ => {}
        }
        // Under `Retry::Defer`: a deferred input whose wait is over comes
        // first; with the buffer full and none ready, sleep until the
        // earliest is (DBx1000's thread loop).
        // (No clock read while the buffer is empty, as it always is under
        // `Retry::Backoff`.)
        let picked = if parked.is_empty() {
            None
        } else {
            let now = Instant::now();
            match parked.iter().position(|d| d.ready <= now) {
                Some(i) => Some(parked.swap_remove(i)),
                None if parked.len() >= DEFER_SLOTS => {
                    let ready = parked.iter().map(|d| d.ready).min().unwrap_or(now);
                    std::thread::sleep(ready.saturating_duration_since(now));
                    if measuring {
                        let ns = now.elapsed().as_nanos() as u64;
                        slept_ns += ns;
                        total_ns += ns;
                    }
                    continue;
                }
                None => None,
            }
        };
        let (input, since, attempts) = match picked {
            Some(d) => (d.input, Some(d.since), d.attempts),
            None if ring.is_empty() => {
                let kind = mix.pick(&mut rng);
                (Source::Drawn(workload.input(kind, &state, &mut rng)), None, 0)
            }
            None => {
                let k = next;
                next = if k + 1 == ring.len() { 0 } else { k + 1 };
                (Source::Ring(k), None, 0)
            }
        };
        let input_ref = match &input {
            Source::Drawn(i) => i,
            Source::Ring(k) => &ring[*k],
        };
        let t0 = Instant::now();
        let mut in_closure = 0u64;
        let timing = cfg.breakdown.then_some((&mut times, &mut in_closure));
        let lt = cfg.lock_timeout;
        let r = if cfg.retry == Retry::Defer && attempts < DEFER_LIMIT {
            attempt(workload, &mut agent, &mut state, &mut undo, input_ref, timing, lt)
        } else {
            run_until(
                workload,
                &mut agent,
                &mut state,
                &mut undo,
                input_ref,
                timing,
                Some(phase),
                lt,
            )
            .map(Some)
        };
        let ns = t0.elapsed().as_nanos() as u64;
        if measuring {
            total_ns += ns;
            closure_ns += in_closure;
        }
        match r {
            Ok(Some(outcome)) => {
                if measuring {
                    match outcome {
                        Outcome::Committed => committed += 1,
                        Outcome::Failed => failed += 1,
                    }
                    // From the first attempt, deferrals included.
                    let latency = since.map_or(ns, |s| s.elapsed().as_nanos() as u64);
                    // Auto-resizing histogram: recording cannot fail.
                    let _ = hist.record(latency.max(1));
                }
            }
            Ok(None) => {
                if measuring {
                    deferred += 1;
                }
                let wait = rng.random_range(0..DEFER_PENALTY.as_nanos() as u64);
                parked.push(Deferred {
                    input,
                    ready: Instant::now() + Duration::from_nanos(wait),
                    since: since.unwrap_or(t0),
                    attempts: attempts + 1,
                });
            }
            Err(TxError::Storage(e)) => break Err(RunError::Storage(e)),
            Err(TxError::Lock(e)) => break Err(RunError::Lock(e)),
            // The run is over; the transaction was rolled back.
            Err(TxError::Stopped) => {
                if measuring {
                    stopped += 1;
                }
                break Ok(());
            }
        }
    };
    let counted = match &mut counters {
        Some((c, kernel)) => c.stop().map(|()| Some((c.totals(), *kernel))),
        None => Ok(None),
    };
    let sharing = meter.map(crate::sharing::Meter::stop);
    let stats = agent.stats().since(&base);
    workload.retire(state);
    result?;
    let counters = counted?;
    Ok(WorkerOut {
        committed,
        failed,
        stats,
        hist,
        times,
        total_ns,
        in_closure_ns: closure_ns,
        deferred,
        slept_ns,
        stopped,
        counters,
        sharing,
    })
}

/// Executes one attempt's body on `txn`: the workload's transaction, rolled
/// back on a business failure or an error (while its locks are held).
/// `timing` collects the breakdown (lock call times, time inside the body).
fn body<'d, W: Workload>(
    workload: &'d W,
    txn: &mut heirloom::Transaction<'_>,
    state: &mut W::Worker,
    undo: &mut UndoLog<'d>,
    input: &W::Input,
    timing: &mut Option<(&mut Times, &mut u64)>,
) -> Result<Outcome, TxError> {
    let c0 = timing.is_some().then(Instant::now);
    let r = {
        let mut tx = Tx::new(txn, undo);
        if let Some((times, _)) = timing.as_mut() {
            tx.time_locks(times);
        }
        workload.execute(&mut tx, state, input)
    };
    if !matches!(r, Ok(Outcome::Committed)) {
        undo.rollback(|log| workload.undo_append(state, log));
    }
    if let (Some(c0), Some((_, closure))) = (c0, timing.as_mut()) {
        **closure += c0.elapsed().as_nanos() as u64;
    }
    r
}

/// One attempt of one transaction, without a restart (`Retry::Defer`):
/// `Ok(Some(outcome))` when it ended, `Ok(None)` when the lock manager
/// aborted it (rolled back; the caller may try its input again later).
fn attempt<'d, W: Workload>(
    workload: &'d W,
    agent: &mut heirloom::Agent,
    state: &mut W::Worker,
    undo: &mut UndoLog<'d>,
    input: &W::Input,
    mut timing: Option<(&mut Times, &mut u64)>,
    lock_timeout: Option<Duration>,
) -> Result<Option<Outcome>, TxError> {
    let mut txn = agent.begin();
    txn.set_lock_timeout(lock_timeout);
    match body(workload, &mut txn, state, undo, input, &mut timing) {
        Ok(outcome) => match txn.commit() {
            Ok(()) => {
                undo.committed();
                Ok(Some(outcome))
            }
            // Doomed by a lock error the body did not pass on (a workload
            // bug): its locks are gone, so its writes cannot be undone
            // safely; stop the run with the error.
            Err(e) => Err(TxError::Lock(e)),
        },
        Err(e) => {
            txn.abort();
            match heirloom::Restart::lock_error(&e) {
                Some(l) if l.is_restartable() => Ok(None),
                _ => Err(e),
            }
        }
    }
}

/// Runs one transaction to its end on `agent`: executes it (restarting after
/// concurrency aborts, with `Agent::run`'s backoff and exclusive mode), rolls
/// back a business failure or an aborted attempt, and commits. `timing`
/// collects the breakdown (lock call times, time inside the body).
pub fn run_one<'d, W: Workload>(
    workload: &'d W,
    agent: &mut heirloom::Agent,
    state: &mut W::Worker,
    undo: &mut UndoLog<'d>,
    input: &W::Input,
    timing: Option<(&mut Times, &mut u64)>,
) -> Result<Outcome, TxError> {
    run_until(workload, agent, state, undo, input, timing, None, None)
}

/// [`run_one`], giving up with [`TxError::Stopped`] when `phase` reads
/// `STOP` before an attempt (the run is over; no restart loop outlives it),
/// each attempt under `lock_timeout` if there is one.
#[allow(clippy::too_many_arguments)]
fn run_until<'d, W: Workload>(
    workload: &'d W,
    agent: &mut heirloom::Agent,
    state: &mut W::Worker,
    undo: &mut UndoLog<'d>,
    input: &W::Input,
    mut timing: Option<(&mut Times, &mut u64)>,
    phase: Option<&AtomicU8>,
    lock_timeout: Option<Duration>,
) -> Result<Outcome, TxError> {
    let r = agent.run(|txn| {
        if phase.is_some_and(|p| p.load(Ordering::Relaxed) == STOP) {
            return Err(TxError::Stopped);
        }
        txn.set_lock_timeout(lock_timeout);
        body(workload, txn, state, undo, input, &mut timing)
    });
    if r.is_ok() {
        undo.committed();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use heirloom::{LockId, Mode, TableId};

    /// A stuck run's report names the waiting request and its agent's
    /// wait, and the count it was given.
    #[test]
    fn a_stuck_report_shows_the_wait() {
        let lm = LockManager::builder().table(TableKind::Latched).build();
        let row = LockId::row(TableId::new(0, 1), 7);
        let mut holder = lm.agent();
        let mut t = holder.begin();
        t.lock(row, Mode::X).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut a = lm.agent();
                let mut t = a.begin();
                t.lock(row, Mode::X).unwrap();
                t.commit().unwrap();
            });
            while !lm.agents_report().contains("waiting=Some") {
                std::thread::sleep(Duration::from_millis(1));
            }
            let r = stuck_report(&lm, 1, STUCK_AFTER);
            assert!(
                r.starts_with("heirloom bench: 1 worker(s) still running 30 s after the run's end"),
                "{r}"
            );
            assert!(r.contains("wait"), "the waiting request: {r}");
            assert!(r.contains(&format!("{row}")), "the lock: {r}");
            assert!(r.contains("waiting=Some"), "the agent's wait: {r}");
            t.commit().unwrap();
            waiter.join().unwrap();
        });
    }
}
