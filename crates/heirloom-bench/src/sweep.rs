//! A sweep: what to run ([`Spec`]), checked against its benchmark before
//! anything is loaded ([`plan`]), then the cross product of lock manager
//! configurations, `repeat` rounds of it, each configuration reporting its
//! median run ([`sweep`](crate::sweep())).
//!
//! The sweep knows no benchmark by name: it is handed a [`Benchmark`]
//! (found in the registry, `crate::workload::REGISTRY`), which loads its
//! database and hands it back through [`Sweep::on_one_db`] or
//! [`Sweep::fresh_db_per_run`].

use crate::options::{Opt, Options};
use crate::runner::{self, Mix, Retry, RunConfig, RunError, RunResult, Workload};
use heirloom::{ConflictPolicy, FastRows, TableKind};
use std::time::Duration;

/// What `--scale` counts for a benchmark.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// What one unit is (`subscribers`, `warehouses`).
    pub unit: &'static str,
    /// Used when `--scale` is not given.
    pub default: ScaleArg,
    /// The largest the benchmark can address.
    pub max: u64,
}

/// A `--scale`: a size for every run (`4`), or so much per worker thread
/// (`1/thread`: a run with 8 threads gets 8), as TPC-B and TPC-C scale
/// their databases with the load offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleArg {
    /// The same size for every run.
    Total(u64),
    /// This much per worker thread of the run.
    PerThread(u64),
}

impl ScaleArg {
    /// Parses `N` or `N/thread`.
    pub fn parse(s: &str) -> Result<ScaleArg, String> {
        let (n, per) = match s.strip_suffix("/thread") {
            Some(n) => (n, true),
            None => (s, false),
        };
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("--scale {s:?}: expected a number, or a number per thread such as 1/thread"))?;
        Ok(if per {
            ScaleArg::PerThread(n)
        } else {
            ScaleArg::Total(n)
        })
    }

    /// The size of a run with `threads` worker threads.
    pub fn at(self, threads: usize) -> u64 {
        match self {
            ScaleArg::Total(n) => n,
            ScaleArg::PerThread(n) => n.saturating_mul(threads as u64),
        }
    }

    /// `4 warehouses` or `1 warehouses per thread`.
    pub fn describe(self, unit: &str) -> String {
        match self {
            ScaleArg::Total(n) => format!("{n} {unit}"),
            ScaleArg::PerThread(n) => format!("{n} {unit} per thread"),
        }
    }
}

/// A named set of settings for comparing with another system (`--profile
/// NAME`): each is used where the command line does not give its own.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    /// Its name.
    pub name: &'static str,
    /// What it matches, for `heirloom list`.
    pub about: &'static str,
    /// The mix.
    pub mix: Option<&'static str>,
    /// The scale.
    pub scale: Option<ScaleArg>,
    /// Options, `key=value` (given ones come after and win).
    pub options: &'static [(&'static str, &'static str)],
    /// Conflict policies.
    pub policies: &'static [ConflictPolicy],
    /// SLI settings.
    pub sli: &'static [bool],
    /// What workers do with aborted transactions.
    pub retry: Option<Retry>,
    /// Inputs per worker drawn before each run.
    pub pregen: Option<usize>,
}

/// One benchmark of the kit, as the sweep and the command see it.
pub trait Benchmark: Sync {
    /// Name on the command line (`--workload NAME`) and in reports.
    fn name(&self) -> &'static str;
    /// One line for `heirloom list`.
    fn about(&self) -> &'static str;
    /// What throughput counts (for `heirloom list` and the README).
    fn counts(&self) -> &'static str {
        "txn/s: committed transactions; total/s adds those that failed by design (rolled back, then committed)"
    }
    /// What `--scale` means, its default and bound.
    fn scale(&self) -> Scale;
    /// The named mixes; the first is the default.
    fn mixes(&self) -> &'static [&'static str];
    /// Transactions that `--mix` also takes by name, to run alone.
    fn transactions(&self) -> &'static [&'static str] {
        &[]
    }
    /// The mix called `name` (a named mix or, where the benchmark allows,
    /// one transaction's name), or an error listing the known ones.
    fn mix(&self, name: &str) -> Result<Mix, String>;
    /// Its own options (`--opt key=value`).
    fn options(&self) -> &'static [Opt] {
        &[]
    }
    /// About how many bytes its database takes at `scale`.
    fn estimate_bytes(&self, scale: u64, options: &Options) -> u64;
    /// Whether every transaction of `mix` under `options` only reads, so
    /// that runs cannot conflict at any thread count (then `--table none`,
    /// the no-locking ceiling, is allowed beyond one thread).
    fn read_only(&self, mix: &Mix, options: &Options) -> bool {
        let _ = (mix, options);
        false
    }
    /// Its named profiles (`--profile`).
    fn profiles(&self) -> &'static [Profile] {
        &[]
    }
    /// Remarks for the report about how the runs of a sweep at `scale` and
    /// these thread counts depart from the specification (threads sharing
    /// what the specification gives each terminal alone).
    fn notes(&self, scale: ScaleArg, threads: &[usize]) -> Vec<String> {
        let _ = (scale, threads);
        Vec::new()
    }
    /// Loads the database (once, or once per run if it grows while it
    /// runs) and runs the sweep on it: [`Sweep::on_one_db`] or
    /// [`Sweep::fresh_db_per_run`].
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError>;
}

/// What to run: the parsed command line of `heirloom bench`.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The benchmark's name in the registry (`heirloom list`); empty: the
    /// registry's first.
    pub workload: String,
    /// Mix name (`None`: the benchmark's default).
    pub mix: Option<String>,
    /// The benchmark's own options, `(key, value)` in command-line order.
    pub options: Vec<(String, String)>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Lock table kinds.
    pub tables: Vec<TableKind>,
    /// SLI settings.
    pub sli: Vec<bool>,
    /// With SLI on: transactions an inherited lock may stay unused, one
    /// sweep dimension (`heirloom::Builder::keep_inherited`).
    pub sli_keep: Vec<u32>,
    /// The intention-lock fast path on or off, one sweep dimension
    /// (`heirloom::Builder::fast_path`; only the latched and latch-free
    /// tables have it, the others run once).
    pub fast_path: Vec<bool>,
    /// Row S locks on the fast path on or off, one sweep dimension
    /// (`heirloom::Builder::fast_rows`; tables without a fast path run
    /// once).
    pub fast_rows: Vec<FastRows>,
    /// Conflict policies.
    pub policies: Vec<ConflictPolicy>,
    /// How long a blocked request waits before its first deadlock search
    /// (`detect` only; `heirloom::Builder::deadlock_timeout`).
    pub deadlock_timeout: Duration,
    /// The most a request waits, on top of the policy
    /// (`heirloom::Transaction::set_lock_timeout`; `None`: no bound).
    pub lock_timeout: Option<Duration>,
    /// The most a blocked request spins before it parks, one sweep
    /// dimension (`heirloom::Builder::spin_before_park`).
    pub spin: Vec<Duration>,
    /// Hash buckets of the latched and latch-free tables, one run each
    /// (`None`: the lock manager's default).
    pub buckets: Vec<Option<usize>>,
    /// The cores the lock manager counts its threads against
    /// (`heirloom::Builder::cores`; `None`: the machine's).
    pub cores: Option<usize>,
    /// Restarts before exclusive mode, one sweep dimension (`u32::MAX`:
    /// never).
    pub exclusive_after: Vec<u32>,
    /// The benchmark's scale (`None`: its default).
    pub scale: Option<ScaleArg>,
    /// Measured seconds per run.
    pub duration: Duration,
    /// Warm-up per run.
    pub warmup: Duration,
    /// How long after a run's end its workers may take to finish before
    /// the run counts as stuck (`RunConfig::stuck_after`).
    pub stuck_after: Duration,
    /// Random seed.
    pub seed: u64,
    /// Time breakdown.
    pub breakdown: bool,
    /// Lock-table requests by class (`RunConfig::classes`).
    pub classes: bool,
    /// Instructions, cycles, CPU time per transaction (`crate::counters`).
    pub counters: bool,
    /// Shared-line writes per transaction (`crate::sharing`).
    pub sharing: bool,
    /// Check consistency after every run.
    pub verify: bool,
    /// Rounds of the cross product; each configuration reports its median run.
    pub repeat: usize,
    /// What workers do with aborted transactions.
    pub retry: Retry,
    /// Inputs per worker drawn before each run (0: drawn as needed).
    pub pregen: usize,
    /// Only the configurations of the cross product this accepts (`None`:
    /// all); a story told with a few chosen configurations (`heirloom
    /// demo`) rather than every combination of its dimensions.
    pub pick: Option<fn(&RunConfig) -> bool>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            workload: String::new(),
            mix: None,
            options: Vec::new(),
            threads: vec![1, 2, 8],
            tables: vec![TableKind::Latched],
            sli: vec![false, true],
            sli_keep: vec![0],
            fast_path: vec![true],
            fast_rows: vec![FastRows::Auto],
            policies: vec![ConflictPolicy::Detect],
            deadlock_timeout: heirloom::DEFAULT_DEADLOCK_TIMEOUT,
            lock_timeout: None,
            spin: vec![heirloom::DEFAULT_SPIN_BEFORE_PARK],
            buckets: vec![None],
            cores: None,
            exclusive_after: vec![crate::runner::EXCLUSIVE_AFTER],
            scale: None,
            duration: Duration::from_secs(2),
            warmup: Duration::from_millis(500),
            stuck_after: crate::runner::STUCK_AFTER,
            seed: 1,
            breakdown: false,
            classes: false,
            counters: false,
            sharing: false,
            verify: false,
            repeat: 1,
            retry: Retry::Backoff,
            pregen: 0,
            pick: None,
        }
    }
}

impl Spec {
    /// Adds the benchmark option `key=value` (builder style, for tests and
    /// programs that drive the kit).
    pub fn opt(mut self, key: &str, value: &str) -> Self {
        self.options.push((key.into(), value.into()));
        self
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
    Report(#[from] crate::report::ReportError),
}

/// A spec checked against its benchmark: everything decided before loading.
#[derive(Clone)]
pub struct Plan {
    /// The benchmark.
    pub bench: &'static dyn Benchmark,
    /// The scale (given or the benchmark's default).
    pub scale: ScaleArg,
    /// The mix (given or the benchmark's default).
    pub mix: Mix,
    /// The benchmark's options, defaults filled in.
    pub options: Options,
    /// With `Spec::counters`: whether instructions and cycles include
    /// kernel mode (`crate::counters::probe`).
    pub counters_kernel: Option<bool>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("bench", &self.bench.name())
            .field("scale", &self.scale)
            .field("mix", &self.mix.name)
            .field("options", &self.options)
            .field("counters_kernel", &self.counters_kernel)
            .finish()
    }
}

/// Checks everything that does not need the database and resolves
/// `bench`'s defaults (`spec.workload` is not looked at: the caller found
/// `bench` by it).
pub fn plan(bench: &'static dyn Benchmark, spec: &Spec) -> Result<Plan, BenchError> {
    let bad = |m: String| Err(BenchError::Usage(m));
    let options = Options::parse(bench.name(), bench.options(), &spec.options).map_err(BenchError::Usage)?;
    let mix_name = match spec.mix.as_deref() {
        None | Some("default") => bench.mixes().first().copied().unwrap_or("default"),
        Some(m) => m,
    };
    let mix = bench.mix(mix_name).map_err(BenchError::Usage)?;
    if spec.threads.is_empty()
        || spec.tables.is_empty()
        || spec.sli.is_empty()
        || spec.sli_keep.is_empty()
        || spec.fast_path.is_empty()
        || spec.fast_rows.is_empty()
        || spec.policies.is_empty()
    {
        return bad(
            "--threads, --table, --sli, --sli-keep, --fast-path, --fast-rows and --policy need at least one value"
                .into(),
        );
    }
    if let Some(&k) = spec.sli_keep.iter().find(|&&k| k > 255) {
        return bad(format!("--sli-keep: {k} is not between 0 and 255"));
    }
    let s = bench.scale();
    let scale_arg = spec.scale.unwrap_or(s.default);
    let chosen = configs(spec, scale_arg);
    if chosen.is_empty() {
        return bad("no configuration of the sweep is chosen".into());
    }
    if chosen.iter().any(|c| c.table == TableKind::NoLocking && c.threads > 1) && !bench.read_only(&mix, &options) {
        return bad(format!(
            "--table none takes no locks, so it is allowed only where transactions cannot conflict: one thread, or a mix that only reads ({} mix {} writes); run none at --threads 1, or a read-only mix",
            bench.name(),
            mix.name
        ));
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
    let most = spec.threads.iter().map(|&t| scale_arg.at(t)).max().unwrap_or(0);
    let described = scale_arg.describe(s.unit);
    if most == 0 {
        return bad("--scale must be positive".into());
    }
    if most > s.max {
        return bad(format!(
            "--scale {described} is beyond what {} can address (at most {} {})",
            bench.name(),
            s.max,
            s.unit
        ));
    }
    // A run holds one database at a time (the largest is the bound).
    let need = bench.estimate_bytes(most, &options);
    if let Some(avail) = available_memory()
        && need > avail / 10 * 8
    {
        return bad(format!(
            "--scale {described} needs about {} MiB, more than 80% of the {} MiB available",
            need >> 20,
            avail >> 20
        ));
    }
    let scale = scale_arg;
    let counters_kernel = if spec.counters {
        Some(crate::counters::probe().map_err(|e| BenchError::Usage(format!("--counters: {e}")))?)
    } else {
        None
    };
    Ok(Plan {
        bench,
        scale,
        mix,
        options,
        counters_kernel,
    })
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
pub fn configs(spec: &Spec, scale: ScaleArg) -> Vec<RunConfig> {
    let mut v = Vec::new();
    for &table in &spec.tables {
        for &policy in &spec.policies {
            for &exclusive_after in &spec.exclusive_after {
                for &spin in &spec.spin {
                    for (sli, sli_keep, fast_path) in sli_settings(spec, table) {
                        let rows: &[FastRows] = if table.has_fast_path() && fast_path {
                            &spec.fast_rows
                        } else {
                            &[FastRows::Auto]
                        };
                        for (&buckets, &fast_rows, &threads) in buckets_of(spec, table).iter().flat_map(|b| {
                            rows.iter()
                                .flat_map(move |r| spec.threads.iter().map(move |t| (b, r, t)))
                        }) {
                            let c = RunConfig {
                                table,
                                buckets,
                                cores: spec.cores,
                                sli,
                                sli_keep,
                                fast_path,
                                fast_rows,
                                policy,
                                deadlock_timeout: spec.deadlock_timeout,
                                lock_timeout: spec.lock_timeout,
                                spin,
                                exclusive_after,
                                threads,
                                scale: scale.at(threads),
                                duration: spec.duration,
                                warmup: spec.warmup,
                                stuck_after: spec.stuck_after,
                                seed: spec.seed,
                                breakdown: spec.breakdown,
                                classes: spec.classes,
                                counters: spec.counters,
                                sharing: spec.sharing,
                                retry: spec.retry,
                                pregen: spec.pregen,
                            };
                            if spec.pick.is_none_or(|pick| pick(&c)) {
                                v.push(c);
                            }
                        }
                    }
                }
            }
        }
    }
    v
}

/// The bucket counts of a sweep on `table`: all of them on the tables
/// that have buckets, the default once on the others.
fn buckets_of(spec: &Spec, table: TableKind) -> Vec<Option<usize>> {
    if matches!(
        table,
        TableKind::Latched
            | TableKind::LatchedSpares
            | TableKind::LatchedHtm
            | TableKind::LatchFree
            | TableKind::LatchFreeSwap
    ) {
        spec.buckets.clone()
    } else {
        vec![None]
    }
}

/// The SLI and fast-path settings of a sweep on `table`: off once, on
/// once per `--sli-keep` value, each with every `--fast-path` value on the
/// tables that have one (`none` takes no locks: off only; the others have
/// no fast path and run once, labelled as on, which changes nothing).
fn sli_settings(spec: &Spec, table: TableKind) -> Vec<(bool, u32, bool)> {
    if table == TableKind::NoLocking {
        return vec![(false, 0, true)];
    }
    let fast: &[bool] = if table.has_fast_path() {
        &spec.fast_path
    } else {
        &[true]
    };
    let mut v = Vec::new();
    for &sli in &spec.sli {
        let keeps: &[u32] = if sli { &spec.sli_keep } else { &[0] };
        for &k in keeps {
            for &f in fast {
                if !v.contains(&(sli, k, f)) {
                    v.push((sli, k, f));
                }
            }
        }
    }
    v
}

/// Sets each run's share of the ceiling: its throughput over that of the
/// `none` run (no locking) with the same workload, mix and thread count.
pub fn set_ceiling_shares(runs: &mut [RunResult]) {
    let none = TableKind::NoLocking.to_string();
    let ceilings: Vec<(String, String, usize, f64)> = runs
        .iter()
        .filter(|r| r.table == none)
        .map(|r| (r.workload.clone(), r.mix.clone(), r.threads, r.tps))
        .collect();
    for r in runs.iter_mut() {
        r.of_ceiling = ceilings
            .iter()
            .find(|c| c.0 == r.workload && c.1 == r.mix && c.2 == r.threads)
            .map(|c| r.tps / c.3.max(1e-9));
    }
}

/// Runs the sweep `plan` of `spec`: the benchmark loads its database and
/// runs every configuration, `spec.repeat` rounds of the whole cross
/// product (so that repeats of one configuration are spread over the
/// sweep's time, not taken back to back); each configuration reports the
/// run with the median throughput. `progress` gets each finished run and
/// the time that passed since the last call.
pub fn run(
    spec: &Spec,
    plan: Plan,
    progress: &mut dyn FnMut(Option<&RunResult>, Duration),
) -> Result<Vec<RunResult>, BenchError> {
    let bench = plan.bench;
    let mut runs = bench.run(&mut Sweep { spec, plan, progress })?;
    set_ceiling_shares(&mut runs);
    Ok(runs)
}

type OneRun<'s, 'a> = dyn FnMut(&mut Sweep<'a>, &RunConfig) -> Result<RunResult, BenchError> + 's;

/// A sweep in progress, as a benchmark sees it while it loads and runs.
pub struct Sweep<'a> {
    spec: &'a Spec,
    plan: Plan,
    progress: &'a mut dyn FnMut(Option<&RunResult>, Duration),
}

impl<'a> Sweep<'a> {
    /// The scale of the sweep (a total, or per thread).
    pub fn scale(&self) -> ScaleArg {
        self.plan.scale
    }

    /// The benchmark's options.
    pub fn options(&self) -> &Options {
        &self.plan.options
    }

    /// The seed to load with.
    pub fn seed(&self) -> u64 {
        self.spec.seed
    }

    /// Runs every round on the database `load` builds at a scale: loaded
    /// once when the scale is a total, once per run (at the run's scale)
    /// when it is per thread. `load` may refuse its arguments (a usage
    /// error).
    pub fn on_one_db<W: Workload>(
        &mut self,
        load: &dyn Fn(u64) -> Result<W, String>,
    ) -> Result<Vec<RunResult>, BenchError> {
        match self.plan.scale {
            ScaleArg::Total(n) => {
                let db = load(n).map_err(BenchError::Usage)?;
                self.rounds(&mut |s, cfg| s.run_verified(&db, cfg))
            }
            ScaleArg::PerThread(_) => self.fresh_db_per_run(load),
        }
    }

    /// Runs every round, each run on a database `load` builds afresh at the
    /// run's scale (for benchmarks whose tables grow while they run).
    pub fn fresh_db_per_run<W: Workload>(
        &mut self,
        load: &dyn Fn(u64) -> Result<W, String>,
    ) -> Result<Vec<RunResult>, BenchError> {
        self.rounds(&mut |s, cfg| s.run_verified(&load(cfg.scale).map_err(BenchError::Usage)?, cfg))
    }

    fn rounds(&mut self, one: &mut OneRun<'_, 'a>) -> Result<Vec<RunResult>, BenchError> {
        let cfgs = configs(self.spec, self.plan.scale);
        let mut all: Vec<Vec<RunResult>> = vec![Vec::new(); cfgs.len()];
        for _ in 0..self.spec.repeat.max(1) {
            for (i, cfg) in cfgs.iter().enumerate() {
                let r = one(self, cfg)?;
                (self.progress)(Some(&r), Duration::ZERO);
                all[i].push(r);
            }
        }
        Ok(all.into_iter().map(median_run).collect())
    }

    fn run_verified<W: Workload>(&mut self, db: &W, cfg: &RunConfig) -> Result<RunResult, BenchError> {
        let progress = &mut *self.progress;
        let mut r = runner::run(db, &self.plan.mix, cfg, &mut |d| progress(None, d))?;
        if self.spec.verify {
            let summary = db.verify().map_err(|message| BenchError::Verify {
                config: r.config(),
                message,
            })?;
            r.verified = Some(summary);
        }
        Ok(r)
    }
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
