//! heirloom-bench: in-memory tables, the TM1, TPC-B and YCSB workloads on
//! heirloom, and the sweep behind the `heirloom` command.
//!
//! A sweep populates one database and runs the cross product of lock
//! table kinds, SLI settings, conflict policies and thread counts on it,
//! each with a fresh lock manager, optionally checking the workload's
//! consistency rules after every run.

#![warn(missing_docs)]

pub mod report;
pub mod runner;
pub mod storage;
pub mod workload;

use heirloom::{ConflictPolicy, TableKind};
use runner::{RunConfig, RunError, RunResult};
use std::time::Duration;
use workload::Workload;

/// What to run: the parsed command line of `heirloom bench`.
#[derive(Debug, Clone)]
pub struct Spec {
    /// `tm1`, `tpcb` or `ycsb`.
    pub workload: String,
    /// Mix name (`None`: the workload's default).
    pub mix: Option<String>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Lock table kinds.
    pub tables: Vec<TableKind>,
    /// SLI settings.
    pub sli: Vec<bool>,
    /// Conflict policies.
    pub policies: Vec<ConflictPolicy>,
    /// How long a blocked request waits before its first deadlock search
    /// (`detect` only; `heirloom::Builder::deadlock_timeout`).
    pub deadlock_timeout: Duration,
    /// TM1 subscribers, TPC-B branches, YCSB rows, TPC-C warehouses (`None`: the workload's default).
    pub scale: Option<u64>,
    /// Measured seconds per run.
    pub duration: Duration,
    /// Warm-up per run.
    pub warmup: Duration,
    /// Random seed.
    pub seed: u64,
    /// Time breakdown.
    pub breakdown: bool,
    /// Check consistency after every run.
    pub verify: bool,
    /// Rounds of the cross product; each configuration reports its median run.
    pub repeat: usize,
    /// YCSB Zipf theta.
    pub theta: f64,
    /// YCSB read share.
    pub read_share: f64,
    /// TPC-B accounts per branch.
    pub accounts_per_branch: u64,
    /// TM1: non-uniform subscriber ids (NURand).
    pub nurand: bool,
    /// TPC-C: divide ITEM, STOCK and CUSTOMER (and initial ORDER) counts by this (1 = full size).
    pub tpcc_shrink: u64,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            workload: "tm1".into(),
            mix: None,
            threads: vec![1, 2, 8],
            tables: vec![TableKind::Latched],
            sli: vec![false, true],
            policies: vec![ConflictPolicy::Detect],
            deadlock_timeout: heirloom::DEFAULT_DEADLOCK_TIMEOUT,
            scale: None,
            duration: Duration::from_secs(2),
            warmup: Duration::from_millis(500),
            seed: 1,
            breakdown: false,
            verify: false,
            repeat: 1,
            theta: 0.0,
            read_share: 0.5,
            accounts_per_branch: workload::tpcb::ACCOUNTS_PER_BRANCH,
            nurand: false,
            tpcc_shrink: 1,
        }
    }
}

/// Everything that can stop a sweep, each with a one-line message.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Bad arguments (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// A run failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A consistency rule does not hold after a run.
    #[error("consistency check failed after {config}: {message}")]
    Verify {
        /// The configuration after whose run it failed.
        config: String,
        /// The violation.
        message: String,
    },
    /// A report could not be written.
    #[error(transparent)]
    Report(#[from] report::ReportError),
}

/// Default scale of a workload.
pub fn default_scale(workload: &str) -> u64 {
    match workload {
        "tm1" => 100_000,
        "tpcb" | "tpcc" => 1,
        _ => 1_000_000,
    }
}

/// Default mix of a workload.
pub fn default_mix(workload: &str) -> &'static str {
    match workload {
        "tm1" => "ndbb",
        "tpcb" => "account-update",
        "tpcc" => "full",
        _ => "requests",
    }
}

/// Checks the arguments that do not need the database.
pub fn validate(spec: &Spec) -> Result<(), BenchError> {
    let bad = |m: String| Err(BenchError::Usage(m));
    if !matches!(spec.workload.as_str(), "tm1" | "tpcb" | "tpcc" | "ycsb") {
        return bad(format!(
            "unknown workload {:?} (known: tm1, tpcb, tpcc, ycsb)",
            spec.workload
        ));
    }
    if spec.workload == "tpcc" && !(1..=100).contains(&spec.tpcc_shrink) {
        return bad(format!("--tpcc-shrink {} is not between 1 and 100", spec.tpcc_shrink));
    }
    if spec.threads.is_empty() || spec.tables.is_empty() || spec.sli.is_empty() || spec.policies.is_empty() {
        return bad("--threads, --table, --sli and --policy need at least one value".into());
    }
    if let Some(&t) = spec.threads.iter().find(|&&t| t == 0 || t > 4096) {
        return bad(format!("--threads: {t} is not between 1 and 4096"));
    }
    if !(1..=100).contains(&spec.repeat) {
        return bad(format!("--repeat {} is not between 1 and 100", spec.repeat));
    }
    if spec.duration.is_zero() {
        return bad("--duration must be more than zero".into());
    }
    let scale = spec.scale.unwrap_or_else(|| default_scale(&spec.workload));
    if scale == 0 {
        return bad("--scale must be positive".into());
    }
    if spec.workload == "tpcb" && spec.accounts_per_branch == 0 {
        return bad("--accounts must be positive".into());
    }
    let limit: u64 = match spec.workload.as_str() {
        "tm1" => 1 << 40,
        "tpcb" => 1 << 20,
        "tpcc" => 1_000,
        _ => 1 << 40,
    };
    if scale > limit {
        return bad(format!("--scale {scale} is beyond what {} can address", spec.workload));
    }
    let need = match spec.workload.as_str() {
        "tm1" => workload::tm1::Tm1::estimate_bytes(scale),
        "tpcb" => workload::tpcb::Tpcb::estimate_bytes(scale, spec.accounts_per_branch),
        "tpcc" => workload::tpcc::Tpcc::estimate_bytes(scale, workload::tpcc::Size::shrunk(spec.tpcc_shrink)),
        _ => workload::ycsb::Ycsb::estimate_bytes(scale),
    };
    if let Some(avail) = available_memory()
        && need > avail / 10 * 8
    {
        return bad(format!(
            "--scale {scale} needs about {} MiB, more than 80% of the {} MiB available",
            need >> 20,
            avail >> 20
        ));
    }
    if spec.workload == "ycsb" {
        if !(0.0..=1.0).contains(&spec.read_share) {
            return bad(format!("--read-share {} is not between 0 and 1", spec.read_share));
        }
        if !(0.0..10.0).contains(&spec.theta) {
            return bad(format!("--theta {} is not in [0, 10)", spec.theta));
        }
    }
    Ok(())
}

/// MemAvailable from /proc/meminfo, if there is one.
fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The configurations of a sweep, in run order (threads innermost, so a
/// plot line's points are adjacent in time).
pub fn configs(spec: &Spec) -> Vec<RunConfig> {
    let mut v = Vec::new();
    for &table in &spec.tables {
        for &policy in &spec.policies {
            for &sli in &spec.sli {
                for &threads in &spec.threads {
                    v.push(RunConfig {
                        table,
                        sli,
                        policy,
                        deadlock_timeout: spec.deadlock_timeout,
                        threads,
                        duration: spec.duration,
                        warmup: spec.warmup,
                        seed: spec.seed,
                        breakdown: spec.breakdown,
                    });
                }
            }
        }
    }
    v
}

/// Populates the database and runs every configuration, `spec.repeat`
/// rounds of the whole cross product (so that repeats of one configuration
/// are spread over the sweep's time, not taken back to back), and reports
/// for each configuration the run with the median throughput. `progress`
/// gets each finished run and the time that passed since the last call.
pub fn sweep(
    spec: &Spec,
    progress: &mut dyn FnMut(Option<&RunResult>, Duration),
) -> Result<Vec<RunResult>, BenchError> {
    validate(spec)?;
    let scale = spec.scale.unwrap_or_else(|| default_scale(&spec.workload));
    match spec.workload.as_str() {
        "tm1" => on_one_db(&workload::tm1::Tm1::new(scale, spec.nurand, spec.seed), spec, progress),
        "tpcb" => on_one_db(
            &workload::tpcb::Tpcb::new(scale, spec.accounts_per_branch),
            spec,
            progress,
        ),
        "tpcc" => {
            // TPC-C's tables grow while it runs (ORDER, ORDER_LINE, NEW_ORDER):
            // every run starts from a freshly loaded database, so a run late
            // in the sweep does not measure a bigger database.
            let size = workload::tpcc::Size::shrunk(spec.tpcc_shrink);
            let fresh = || workload::tpcc::Tpcc::new(scale, size, spec.seed);
            let mix =
                workload::tpcc::mix(spec.mix.as_deref().unwrap_or(default_mix("tpcc"))).map_err(BenchError::Usage)?;
            rounds(spec, progress, &mut |cfg, tick| {
                run_verified(&fresh(), &mix, cfg, spec, tick)
            })
        }
        _ => {
            let db = workload::ycsb::Ycsb::new(scale, spec.theta, spec.read_share).map_err(BenchError::Usage)?;
            on_one_db(&db, spec, progress)
        }
    }
}

type OneRun<'a> = dyn FnMut(&RunConfig, &mut dyn FnMut(Duration)) -> Result<RunResult, BenchError> + 'a;

fn on_one_db<W: Workload>(
    db: &W,
    spec: &Spec,
    progress: &mut dyn FnMut(Option<&RunResult>, Duration),
) -> Result<Vec<RunResult>, BenchError> {
    let mix = db
        .mix(spec.mix.as_deref().unwrap_or(default_mix(db.name())))
        .map_err(BenchError::Usage)?;
    rounds(spec, progress, &mut |cfg, tick| run_verified(db, &mix, cfg, spec, tick))
}

fn rounds(
    spec: &Spec,
    progress: &mut dyn FnMut(Option<&RunResult>, Duration),
    one: &mut OneRun<'_>,
) -> Result<Vec<RunResult>, BenchError> {
    let cfgs = configs(spec);
    let mut all: Vec<Vec<RunResult>> = vec![Vec::new(); cfgs.len()];
    for _ in 0..spec.repeat.max(1) {
        for (i, cfg) in cfgs.iter().enumerate() {
            let r = one(cfg, &mut |d| progress(None, d))?;
            progress(Some(&r), Duration::ZERO);
            all[i].push(r);
        }
    }
    Ok(all.into_iter().map(median_run).collect())
}

/// The run with the median throughput, carrying every run's throughput in
/// `tps_runs` when there was more than one.
fn median_run(mut runs: Vec<RunResult>) -> RunResult {
    let tps: Vec<f64> = runs.iter().map(|r| r.tps).collect();
    runs.sort_by(|a, b| a.tps.total_cmp(&b.tps));
    let mut m = runs.swap_remove(runs.len() / 2);
    if tps.len() > 1 {
        m.tps_runs = tps;
    }
    m
}

fn run_verified<W: Workload>(
    db: &W,
    mix: &workload::Mix,
    cfg: &RunConfig,
    spec: &Spec,
    tick: &mut dyn FnMut(Duration),
) -> Result<RunResult, BenchError> {
    let mut r = runner::run(db, mix, cfg, tick)?;
    if spec.verify {
        let summary = db.verify().map_err(|message| BenchError::Verify {
            config: format!(
                "{} sli={} {} {} threads",
                r.table,
                if r.sli { "on" } else { "off" },
                r.policy,
                r.threads
            ),
            message,
        })?;
        r.verified = Some(summary);
    }
    Ok(r)
}

/// For every run on the latch-free table with a `latched` run of the same
/// SLI setting, policy and thread count: the throughput ratio and what each
/// pays for contention on the table's own state per transaction.
pub fn table_summary(runs: &[RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    for free in runs.iter().filter(|r| r.table == TableKind::LatchFree.name()) {
        if let Some(latched) = runs.iter().find(|r| {
            r.table == TableKind::Latched.name()
                && r.sli == free.sli
                && r.policy == free.policy
                && r.threads == free.threads
        }) {
            out.push(format!(
                "{} threads, SLI {}, {}: latchfree/latched throughput {:.2}x; contended latches per txn {:.3} (latched) vs CAS retries per txn {:.3} (latchfree)",
                free.threads,
                if free.sli { "on" } else { "off" },
                free.policy,
                free.tps / latched.tps.max(1e-9),
                latched.per_txn.latch_contended,
                free.per_txn.cas_retries,
            ));
        }
    }
    out
}

/// For every (table, policy, threads) run with SLI both off and on: the
/// ratio of throughput and the lock-table operations per transaction.
pub fn sli_summary(runs: &[RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    for on in runs.iter().filter(|r| r.sli) {
        if let Some(off) = runs
            .iter()
            .find(|r| !r.sli && r.table == on.table && r.policy == on.policy && r.threads == on.threads)
        {
            out.push(format!(
                "{} {} {} threads: SLI on/off throughput {:.2}x; lock-table ops per txn {:.2} -> {:.2} ({:.2}x); contended latches per txn {:.3} -> {:.3}",
                on.table,
                on.policy,
                on.threads,
                on.tps / off.tps.max(1e-9),
                off.per_txn.table_ops,
                on.per_txn.table_ops,
                on.per_txn.table_ops / off.per_txn.table_ops.max(1e-9),
                off.per_txn.latch_contended,
                on.per_txn.latch_contended,
            ));
        }
    }
    out
}
