//! `heirloom`: measure lock manager designs side by side.
//!
//! ```text
//! heirloom demo
//! heirloom figures [--out DIR] [--quick] [--only NAME,...]
//! heirloom list
//! heirloom bench --workload tm1 --mix ndbb --threads 1,2,8 --table global,latched,latchfree --sli off,on \
//!     --duration 2 --verify --json out.json --csv out.csv --plot out.svg
//! heirloom bench --workload ycsb --opt theta=0.9 --opt read-share=0.5
//! ```
//!
//! The command names no benchmark: `--workload` is looked up in the kit's
//! registry, and a benchmark's own options are `--opt key=value` (older
//! flags such as `--theta 0.9` are rewritten to that form from the aliases
//! the benchmarks declare).
//!
//! Errors are one line on stderr and exit status 2 (bad arguments) or 1
//! (a run or a consistency check failed).

use clap::{Args, Parser, Subcommand};
use heirloom::{ConflictPolicy, FastRows, TableKind};
use heirloom_bench::options::{self, Kind};
use heirloom_bench::runner::{self, Retry};
use heirloom_bench::sweep::ScaleArg;
use heirloom_bench::{BenchError, REGISTRY, Spec, report, sli_summary, sweep, table_summary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "heirloom", version, about = "Measure lock manager designs side by side")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload over the cross product of the given configurations.
    Bench(Box<BenchArgs>),
    /// About a minute: TM1's NDBB mix on the Shore-MT baseline, the SLI
    /// paper, heirloom's default and no locking (the ceiling), 1, 2 and 8
    /// threads, three rounds; prints what each step buys, writes
    /// heirloom-demo.png and heirloom-demo.json here.
    Demo {
        /// Measured seconds per run.
        #[arg(long, default_value_t = 1.7)]
        duration: f64,
    },
    /// The papers' evaluations regenerated here: one PNG and one SVG per
    /// figure, the raw runs (JSON, CSV), and report.html and report.md
    /// setting each against the paper with a computed verdict.
    Figures {
        /// Where the figures and the report go.
        #[arg(long, default_value = "heirloom-figures")]
        out: PathBuf,
        /// Tiny runs (under 3 minutes on 2 cores): checks that everything
        /// is drawn and judged, not what the verdicts are.
        #[arg(long)]
        quick: bool,
        /// Only these figures (names as in the report).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
    /// The benchmarks: what --scale counts, their mixes and their own options.
    List,
}

#[derive(Args)]
struct BenchArgs {
    /// The benchmark (see `heirloom list`; default: the first there).
    #[arg(long, default_value = "")]
    workload: String,
    /// Transaction mix (default: the benchmark's first; see `heirloom list`).
    #[arg(long)]
    mix: Option<String>,
    /// Settings of a comparison with another system (`dbx1000`; see
    /// `heirloom list`), used where these flags give none.
    #[arg(long)]
    profile: Option<String>,
    /// One of the benchmark's own options, KEY=VALUE (repeatable; see `heirloom list`).
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    opts: Vec<String>,
    /// Worker thread counts.
    #[arg(long, value_delimiter = ',', default_value = "1,2,8")]
    threads: Vec<String>,
    /// Lock table kinds: global, latched, latchfree, latchfree-swap (the
    /// latch-free lists appended by one swap of a tail), global-htm and
    /// latched-htm (their latches elided by Intel RTM; where the CPU has no
    /// RTM they take their latches, and the header says so), server (one
    /// lock-server thread), server:N (N partitions, a thread each), or none
    /// (no locking at all, the ceiling: one thread, or a mix that only reads).
    #[arg(long = "table", value_delimiter = ',', default_value = "latched")]
    tables: Vec<String>,
    /// Speculative lock inheritance: off, on [default: off,on].
    #[arg(long, value_delimiter = ',')]
    sli: Option<Vec<String>>,
    /// With SLI on: transactions an inherited lock may stay unused on its
    /// agent before it is released (0-255; a list runs each) [default: 0].
    #[arg(long = "sli-keep", value_delimiter = ',', value_name = "K")]
    sli_keep: Option<Vec<String>>,
    /// The intention-lock fast path of the latched and latch-free tables:
    /// on, off (a list runs each) [default: on].
    #[arg(long = "fast-path", value_delimiter = ',', value_name = "ON|OFF")]
    fast_path: Option<Vec<String>>,
    /// Row S locks on the fast path of the latched and latch-free tables
    /// (read-biased rows, `heirloom::Builder::fast_rows`; with the fast
    /// path on): auto (on or off by what the row requests meet), on, off
    /// (a list runs each; a run with them on or off shows `/rows-on` or
    /// `/rows-off` in its table label) [default: auto].
    #[arg(long = "fast-rows", value_delimiter = ',', value_name = "AUTO|ON|OFF")]
    fast_rows: Option<Vec<String>>,
    /// Conflict policies: detect, timeout[=MS], nowait, waitdie, woundwait
    /// [default: detect].
    #[arg(long = "policy", value_delimiter = ',')]
    policies: Option<Vec<String>>,
    /// Restarts after which `Agent::run` runs a transaction in exclusive
    /// mode: a list of numbers or `never` (picotm's irrevocable mode)
    /// [default: 10].
    #[arg(long = "exclusive-after", value_delimiter = ',')]
    exclusive_after: Option<Vec<String>>,
    /// Under `detect`: milliseconds a blocked request waits before its first
    /// deadlock search (0 = at once). Default: the library's.
    #[arg(long = "deadlock-timeout", value_name = "MS")]
    deadlock_timeout: Option<f64>,
    /// Milliseconds a request may wait before it fails with a timeout (its
    /// transaction then restarts), under any policy that waits: DBx1000's
    /// DL_DETECT is detect with 1. Default: no bound
    #[arg(long = "lock-timeout", value_name = "MS")]
    lock_timeout: Option<f64>,
    /// The most microseconds a blocked request spins before its thread
    /// parks (0 = park at once; a list runs each). Default: the library's
    /// (`heirloom::DEFAULT_SPIN_BEFORE_PARK`)
    #[arg(long = "spin", value_name = "US", value_delimiter = ',')]
    spin: Option<Vec<String>>,
    /// Hash buckets of the latched and latch-free tables, one run each (rounded up to a power of two, 1 to 16777216; default: the lock manager's, `heirloom::default_buckets`: `heirloom::DEFAULT_BUCKETS` for the latched table, which grows from there, `heirloom::default_latchfree_buckets` of the cores for the latch-free tables and, as its first size, for latched-spares, printed above the table). A run with a count of its own shows it in its table label (`latched/b4096`).
    #[arg(long, value_name = "N", value_delimiter = ',')]
    buckets: Option<Vec<String>>,
    /// The cores the lock manager counts its threads against (`heirloom::Builder::cores`, 1 to 4096; default: the machine's): a blocked request spins before it parks only while the workers fit them, and the default size of the latch-free tables and latched-spares follows them. On a small machine `--cores 16` runs the waits of a sixteen-core one (spins, wounds that doom at once) with its threads time-sliced: a soak of those paths, not a measure of their speed.
    #[arg(long, value_name = "N")]
    cores: Option<String>,
    /// The benchmark's size (TM1 subscribers, TPC-C warehouses...; see
    /// `heirloom list`): N for every run, or N/thread (a run with 8 threads
    /// gets 8N).
    #[arg(long)]
    scale: Option<String>,
    /// What a worker does with a transaction the lock manager aborted:
    /// backoff (restart it after a randomised backoff) or defer (DBx1000's
    /// abort buffer: retry it later, run new ones meanwhile) or now (restart
    /// at once, as picotm does) [default: backoff].
    #[arg(long)]
    retry: Option<String>,
    /// Inputs each worker draws before the run and then cycles through, so
    /// that drawing them is not measured (as DBx1000 draws its queries
    /// first) [default: 0, draw each when it is needed].
    #[arg(long, value_name = "N")]
    pregen: Option<usize>,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 2.0)]
    duration: f64,
    /// Warm-up seconds per run.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Seconds after a run's measured interval its workers may take to
    /// finish before the run counts as stuck: the command then prints the
    /// lock table's requests and every agent's wait, and exits 1.
    #[arg(long = "stuck-after", value_name = "SECS", default_value_t = 30.0)]
    stuck_after: f64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Split worker time into lock manager work, latch contention, lock waits, rest.
    #[arg(long)]
    breakdown: bool,
    /// Count lock-table requests by class (the SLI paper's Figure 8: above row or row, shared or exclusive, hot or cold); fast holds are then taken with a request node.
    #[arg(long)]
    classes: bool,
    /// Count instructions, cycles, CPU time and context switches per transaction over the measured interval (Linux perf_event_open; steadier than throughput on a shared machine).
    #[arg(long)]
    counters: bool,
    /// Count the lock manager's writes of cache lines another thread wrote last, per transaction, and where in its source they are (needs a build with `--features sharing`).
    #[arg(long)]
    sharing: bool,
    /// Check the workload's consistency rules after every run.
    #[arg(long)]
    verify: bool,
    /// Run the whole cross product this many times; each configuration reports its median run.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Write the runs as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the runs as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Plot throughput against threads here (.svg or .png).
    #[arg(long)]
    plot: Option<PathBuf>,
}

struct Outputs {
    json: Option<PathBuf>,
    csv: Option<PathBuf>,
    plot: Option<PathBuf>,
}

/// `--cores` bound: more than any machine these runs are for, and few
/// enough that a typo is caught.
const MAX_CORES: usize = 4096;

/// `--pregen` bound on the inputs of all workers of a run together (a
/// TPC-C NewOrder input is a few hundred bytes: under a gigabyte).
const MAX_PREGEN: usize = 1 << 21;

fn seconds(flag: &str, s: f64, zero_ok: bool) -> Result<Duration, BenchError> {
    if !s.is_finite() || s < 0.0 || (s == 0.0 && !zero_ok) || s > 86_400.0 {
        return Err(BenchError::Usage(format!(
            "{flag} {s}: must be {} seconds up to a day",
            if zero_ok { "0 or more" } else { "more than 0" }
        )));
    }
    Ok(Duration::from_secs_f64(s))
}

/// A list of `on`/`off` (or `true`/`false`) given to `flag`.
fn on_off(flag: &str, values: &[String]) -> Result<Vec<bool>, BenchError> {
    values
        .iter()
        .map(|s| match s.trim() {
            "off" | "false" => Ok(false),
            "on" | "true" => Ok(true),
            other => Err(BenchError::Usage(format!("{flag}: {other:?} is neither off nor on"))),
        })
        .collect()
}

fn spec_of(a: &BenchArgs) -> Result<(Spec, Outputs), BenchError> {
    let usage = BenchError::Usage;
    let threads = a
        .threads
        .iter()
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| usage(format!("--threads: {t:?} is not a number")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let tables = a
        .tables
        .iter()
        .map(|t| t.trim().parse::<TableKind>().map_err(usage))
        .collect::<Result<Vec<_>, _>>()?;
    let profile = match &a.profile {
        None => None,
        Some(name) => {
            let bench = heirloom_bench::workload::find(&a.workload).map_err(usage)?;
            let known: Vec<&str> = bench.profiles().iter().map(|p| p.name).collect();
            Some(*bench.profiles().iter().find(|p| p.name == name).ok_or_else(|| {
                usage(format!(
                    "{} has no profile {name:?} ({})",
                    bench.name(),
                    if known.is_empty() {
                        "it has none".to_string()
                    } else {
                        format!("its profiles: {}", known.join(", "))
                    }
                ))
            })?)
        }
    };
    let sli = match &a.sli {
        Some(v) => on_off("--sli", v)?,
        None => profile.map_or_else(|| vec![false, true], |p| p.sli.to_vec()),
    };
    let policies = match &a.policies {
        Some(v) => v
            .iter()
            .map(|p| p.trim().parse::<ConflictPolicy>().map_err(usage))
            .collect::<Result<Vec<_>, _>>()?,
        None => profile.map_or_else(|| vec![ConflictPolicy::Detect], |p| p.policies.to_vec()),
    };
    // The profile's options first: given ones come later and win.
    let mut opts: Vec<(String, String)> = profile
        .iter()
        .flat_map(|p| p.options.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    opts.extend(a.opts.iter().map(|p| options::split(p)));
    let scale = a.scale.as_deref().map(ScaleArg::parse).transpose().map_err(usage)?;
    if a.sharing && !heirloom::sharing::ENABLED {
        return Err(usage(
            "--sharing: this build counts nothing; build with the instrument: cargo run --release --features sharing -p heirloom-bench -- bench ...".into(),
        ));
    }
    let spec = Spec {
        workload: a.workload.clone(),
        mix: a
            .mix
            .clone()
            .or_else(|| profile.and_then(|p| p.mix).map(str::to_string)),
        options: opts,
        threads,
        tables,
        sli,
        sli_keep: match &a.sli_keep {
            None => vec![0],
            Some(v) => v
                .iter()
                .map(|k| {
                    k.trim()
                        .parse::<u32>()
                        .map_err(|_| usage(format!("--sli-keep: {k:?} is not a number of transactions")))
                })
                .collect::<Result<Vec<_>, _>>()?,
        },
        fast_path: match &a.fast_path {
            None => vec![true],
            Some(v) => on_off("--fast-path", v)?,
        },
        fast_rows: match &a.fast_rows {
            None => vec![FastRows::Auto],
            Some(v) => v
                .iter()
                .map(|s| s.trim().parse().map_err(|e| usage(format!("--fast-rows: {e}"))))
                .collect::<Result<Vec<_>, _>>()?,
        },
        policies,
        deadlock_timeout: match a.deadlock_timeout {
            Some(ms) if ms.is_finite() && (0.0..=86_400_000.0).contains(&ms) => Duration::from_secs_f64(ms / 1000.0),
            Some(ms) => {
                return Err(usage(format!(
                    "--deadlock-timeout {ms}: must be 0 or more milliseconds up to a day"
                )));
            }
            None => heirloom::DEFAULT_DEADLOCK_TIMEOUT,
        },
        lock_timeout: match a.lock_timeout {
            Some(ms) if ms.is_finite() && ms > 0.0 && ms <= 86_400_000.0 => Some(Duration::from_secs_f64(ms / 1000.0)),
            Some(ms) => {
                return Err(usage(format!(
                    "--lock-timeout {ms}: must be more than 0 milliseconds, up to a day"
                )));
            }
            None => None,
        },
        spin: match &a.spin {
            None => vec![heirloom::DEFAULT_SPIN_BEFORE_PARK],
            Some(v) => v
                .iter()
                .map(|us| match us.parse::<u32>() {
                    Ok(n) if n <= 1_000_000 => Ok(Duration::from_micros(u64::from(n))),
                    _ => Err(usage(format!(
                        "--spin {us:?}: must be a number of microseconds from 0 to 1000000"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?,
        },
        buckets: match &a.buckets {
            None => vec![None],
            Some(v) => v
                .iter()
                .map(|n| match n.trim().parse::<usize>() {
                    Ok(b) if (1..=heirloom::MAX_BUCKETS).contains(&b) => Ok(Some(b)),
                    _ => Err(usage(format!(
                        "--buckets {n:?}: must be a number of buckets from 1 to {}",
                        heirloom::MAX_BUCKETS
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?,
        },
        cores: match &a.cores {
            None => None,
            Some(n) => match n.trim().parse::<usize>() {
                Ok(c) if (1..=MAX_CORES).contains(&c) => Some(c),
                _ => {
                    return Err(usage(format!(
                        "--cores {n:?}: must be a number of cores from 1 to {MAX_CORES}"
                    )));
                }
            },
        },
        exclusive_after: match &a.exclusive_after {
            None => vec![runner::EXCLUSIVE_AFTER],
            Some(v) => v
                .iter()
                .map(|x| match x.trim() {
                    "never" => Ok(u32::MAX),
                    n => n.parse::<u32>().ok().filter(|&n| n < u32::MAX).ok_or_else(|| {
                        usage(format!(
                            "--exclusive-after: {n:?} is neither a number of restarts nor never"
                        ))
                    }),
                })
                .collect::<Result<Vec<_>, _>>()?,
        },
        scale: scale.or_else(|| profile.and_then(|p| p.scale)),
        duration: seconds("--duration", a.duration, false)?,
        warmup: seconds("--warmup", a.warmup, true)?,
        stuck_after: seconds("--stuck-after", a.stuck_after, false)?,
        seed: a.seed,
        breakdown: a.breakdown,
        classes: a.classes,
        counters: a.counters,
        sharing: a.sharing,
        verify: a.verify,
        repeat: a.repeat,
        retry: match &a.retry {
            Some(r) => r.parse().map_err(usage)?,
            None => profile.and_then(|p| p.retry).unwrap_or_default(),
        },
        pick: None,
        pregen: {
            let n = a.pregen.or_else(|| profile.and_then(|p| p.pregen)).unwrap_or(0);
            let most = a
                .threads
                .iter()
                .filter_map(|t| t.trim().parse::<usize>().ok())
                .max()
                .unwrap_or(1);
            if n.saturating_mul(most) > MAX_PREGEN {
                return Err(usage(format!(
                    "--pregen {n} with {most} threads: at most {MAX_PREGEN} inputs drawn before a run in all"
                )));
            }
            n
        },
    };
    if let Some(p) = &a.plot {
        let ext = p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("svg" | "png")) {
            return Err(usage(format!(
                "--plot {}: the file name must end in .svg or .png",
                p.display()
            )));
        }
    }
    Ok((
        spec,
        Outputs {
            json: a.json.clone(),
            csv: a.csv.clone(),
            plot: a.plot.clone(),
        },
    ))
}

/// How `execute` reads its runs: a sweep's side-by-side summaries, or the
/// demo's story.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Sweep,
    Demo,
}

/// Runs `spec`, prints the table and writes the outputs; the plot's title
/// is `title`, or the benchmark and mix.
fn execute(spec: &Spec, out: &Outputs, title: Option<&str>, reading: Reading) -> Result<(), BenchError> {
    let plan = heirloom_bench::plan(spec)?;
    let runs_n = heirloom_bench::configs(spec, plan.scale).len() as u64;
    let runs_n = runs_n * spec.repeat as u64;
    let total = (spec.duration + spec.warmup).as_millis() as u64 * runs_n;
    let bar = if std::io::stderr().is_terminal() && total >= 3_000 {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} ms, {msg} runs done, about {eta} left")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    println!(
        "{}",
        report::header(
            plan.bench.name(),
            &plan.mix.name,
            &plan.scale.describe(plan.bench.scale().unit),
            &plan.options.describe(),
            spec.duration.as_secs_f64(),
            spec.warmup.as_secs_f64(),
            spec.seed
        )
    );
    if spec.tables.iter().any(TableKind::is_elided) {
        println!("# {}", heirloom::rtm::describe());
    }
    let machine_cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(cores) = spec.cores {
        println!(
            "# cores: the lock manager counts its threads against {cores} cores (--cores; the machine has {machine_cores})"
        );
    }
    // Printed where a table's default follows the cores (the kinds
    // `heirloom::default_buckets` sizes by them, not the latched table's 256).
    let cores = spec.cores.unwrap_or(machine_cores);
    let by_cores = heirloom::default_latchfree_buckets(cores);
    if spec.buckets.contains(&None)
        && spec
            .tables
            .iter()
            .any(|&t| heirloom::default_buckets(t, cores) == Some(by_cores))
    {
        println!(
            "# buckets: the latch-free tables' and latched-spares' default on {cores} cores, {by_cores} (heirloom::default_buckets)"
        );
    }
    if let Some(kernel) = plan.counters_kernel {
        println!(
            "# counters: each worker's thread over the measured interval, per transaction; instructions and cycles in {} mode",
            if kernel { "user and kernel" } else { "user" }
        );
    }
    if spec.sharing {
        println!(
            "# sharing: the lock manager's writes on each worker's thread over the measured interval, per transaction; shared: the line was written last by another thread; recent: and that thread wrote fewer than {} lines since (heirloom::sharing)",
            heirloom::sharing::RECENT_LINES
        );
    }
    if spec.pregen > 0 {
        println!(
            "# pregen {}: each worker draws that many inputs before the run and cycles through them; drawing is not measured",
            spec.pregen
        );
    }
    if spec.retry == Retry::Defer {
        println!(
            "# retry defer: an aborted transaction waits in its worker's buffer (up to {} of them, below {} us each) while the worker runs new ones, as DBx1000's abort buffer",
            runner::DEFER_SLOTS,
            runner::DEFER_PENALTY.as_micros()
        );
    }
    let notes = plan.bench.notes(plan.scale, &spec.threads);
    for n in &notes {
        println!("# note: {n}");
    }
    let mut done = 0;
    let runs = sweep(spec, &mut |run, d| {
        bar.inc(d.as_millis() as u64);
        if run.is_some() {
            done += 1;
            bar.set_message(format!("{done}/{runs_n}"));
        }
    })?;
    bar.finish_and_clear();
    print!("{}", report::table(&runs));
    let summary = match reading {
        Reading::Sweep => [sli_summary(&runs), table_summary(&runs), report::class_summary(&runs)].concat(),
        Reading::Demo => heirloom_bench::demo::verdicts(&runs),
    };
    for line in summary {
        println!("{line}");
    }
    for r in &runs {
        if let Some(p) = &r.sharing {
            for line in heirloom_bench::sharing::site_lines(&r.config(), p) {
                println!("{line}");
            }
        }
    }
    for r in &runs {
        if let Some(why) = &r.counters_lost {
            eprintln!("heirloom: counters of {} left out: {why}", r.config());
        }
    }
    if spec.verify && reading == Reading::Demo {
        // One line: a failed check would have ended the sweep with an error.
        if let Some(last) = runs.iter().rev().find_map(|r| r.verified.as_deref()) {
            println!("the database was checked after every run and held; the last check: {last}");
        }
    } else if spec.verify {
        for r in &runs {
            if let Some(v) = &r.verified {
                println!(
                    "verified after {} sli={} {} threads: {v}",
                    r.table,
                    r.sli_label(),
                    r.threads
                );
            }
        }
    }
    if let Some(p) = &out.json {
        report::write_json(p, &runs, &notes)?;
        println!("wrote {}", p.display());
    }
    if let Some(p) = &out.csv {
        report::write_csv(p, &runs)?;
        println!("wrote {}", p.display());
    }
    if let Some(p) = &out.plot {
        let title = title.map_or_else(|| format!("{} {}", plan.bench.name(), plan.mix.name), str::to_string);
        match reading {
            Reading::Sweep => report::plot(p, &title, &runs)?,
            Reading::Demo => report::plot_labelled(p, &title, &runs, &heirloom_bench::demo::label)?,
        }
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// `heirloom figures`: runs every selected figure's sweeps under one
/// progress bar, draws and judges each, and writes the report.
fn figures(out: &std::path::Path, quick: bool, only: &[String]) -> Result<(), BenchError> {
    use heirloom_bench::figures::{self, Done};
    let chosen = figures::select(only).map_err(BenchError::Usage)?;
    let io = |e: std::io::Error| {
        BenchError::Report(report::ReportError::Io {
            path: out.display().to_string(),
            source: e,
        })
    };
    std::fs::create_dir_all(out).map_err(io)?;
    // Every part planned first: a bad spec fails before anything runs, and
    // the bar knows the whole set.
    let mut total_ms = 0u64;
    let mut planned = Vec::new();
    for f in &chosen {
        if let Some(own) = f.own {
            total_ms += (own.estimate_ms)(quick);
        }
        let parts = (f.parts)(quick);
        for p in &parts {
            let plan = heirloom_bench::plan(&p.spec)?;
            let n = heirloom_bench::configs(&p.spec, plan.scale).len() as u64 * p.spec.repeat as u64;
            total_ms += n * (p.spec.duration + p.spec.warmup).as_millis() as u64;
        }
        planned.push((*f, parts));
    }
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::with_draw_target(Some(total_ms), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{bar:40} {msg}, about {eta} left")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let header = format!(
        "{} set, heirloom {}, {}; a ratio of two configurations is the median of their ratios round by round (they run in the same rounds)",
        if quick {
            "quick (tiny runs: the verdicts mean little)"
        } else {
            "full"
        },
        env!("CARGO_PKG_VERSION"),
        heirloom_btree::machine::Machine::this().describe()
    );
    let mut done: Vec<Done<'_>> = Vec::new();
    for (f, parts) in planned {
        bar.set_message(f.name.to_string());
        if bar.is_hidden() {
            eprintln!("figure {} ...", f.name);
        }
        let reading = if let Some(own) = f.own {
            let (reading, samples) = (own.run)(quick, &mut |ms| bar.inc(ms));
            figures::write_samples(
                &out.join(format!("{}.json", f.name)),
                &out.join(format!("{}.csv", f.name)),
                &samples,
            )?;
            reading
        } else {
            let mut results = Vec::new();
            let mut all = Vec::new();
            let mut notes = Vec::new();
            for p in &parts {
                let runs = heirloom_bench::sweep(&p.spec, &mut |_, d| bar.inc(d.as_millis() as u64))?;
                notes.push(format!(
                    "part {:?}: runs {}..{}",
                    p.label,
                    all.len(),
                    all.len() + runs.len()
                ));
                all.extend(runs.iter().cloned());
                results.push((p.label.clone(), runs));
            }
            report::write_json(&out.join(format!("{}.json", f.name)), &all, &notes)?;
            report::write_csv(&out.join(format!("{}.csv", f.name)), &all)?;
            (f.read)(&results)
        };
        let mut images = Vec::new();
        for c in &reading.charts {
            for ext in ["png", "svg"] {
                let file = format!("{}{}.{ext}", f.name, c.suffix);
                figures::draw(&out.join(&file), c)?;
                if ext == "png" {
                    images.push(file);
                }
            }
        }
        done.push(Done {
            figure: f,
            reading,
            images,
        });
    }
    bar.finish_and_clear();
    std::fs::write(out.join("report.md"), figures::markdown(&done, &header)).map_err(io)?;
    std::fs::write(out.join("report.html"), figures::html(&done, &header)).map_err(io)?;
    println!("# heirloom figures: {header}");
    for d in &done {
        println!("{:<24} {}", d.figure.name, d.reading.verdict.text());
        println!("{:<24}   {}", "", d.reading.ours);
    }
    println!("wrote {}", out.join("report.html").display());
    Ok(())
}

/// Rewrites the older per-benchmark flags (`--theta 0.9`, `--nurand`) into
/// `--opt theta=0.9`, from the aliases the benchmarks declare, in the
/// arguments after `bench`.
fn rewrite_aliases(args: Vec<OsString>) -> Vec<OsString> {
    let Some(start) = args.iter().position(|a| a == "bench") else {
        return args;
    };
    let mut out: Vec<OsString> = args[..=start].to_vec();
    let mut rest = args[start + 1..].iter();
    while let Some(a) = rest.next() {
        let text = a.to_string_lossy();
        let (flag, inline) = match text.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (&*text, None),
        };
        let alias = REGISTRY
            .iter()
            .flat_map(|b| b.options())
            .find(|o| o.alias == Some(flag));
        let Some(o) = alias else {
            out.push(a.clone());
            continue;
        };
        let value = match (inline, o.kind) {
            (Some(v), _) => v.to_string(),
            (None, Kind::Flag) => "true".to_string(),
            (None, _) => rest
                .next()
                .map(|v| v.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        out.push("--opt".into());
        out.push(format!("{}={value}", o.name).into());
    }
    out
}

/// `heirloom list`: every benchmark of the registry.
fn list() -> String {
    let mut s = String::new();
    for b in REGISTRY {
        let sc = b.scale();
        s += &format!("{}: {}\n", b.name(), b.about());
        s += &format!(
            "  --scale: {} (default {}, at most {})\n",
            sc.unit,
            sc.default.describe(sc.unit),
            sc.max
        );
        s += &format!(
            "  --mix: {} (default {})",
            b.mixes().join(", "),
            b.mixes().first().unwrap_or(&"-")
        );
        if !b.transactions().is_empty() {
            s += &format!(", or one transaction alone: {}", b.transactions().join(", "));
        }
        s += "\n";
        s += &format!("  throughput counts {}\n", b.counts());
        for o in b.options() {
            let range = match o.kind {
                Kind::Flag => "true or false".to_string(),
                Kind::Int { min, max } => format!("{min} to {max}"),
                Kind::Real { min, max, max_included } => {
                    format!("[{min}, {max}{}", if max_included { "]" } else { ")" })
                }
                Kind::Choice(words) => words.join(" or "),
            };
            s += &format!("  --opt {}=VALUE: {} ({range}; default {})", o.name, o.help, o.default);
            if let Some(a) = o.alias {
                s += &format!("; also {a}");
            }
            s += "\n";
        }
        for p in b.profiles() {
            s += &format!("  --profile {}: {}\n", p.name, p.about);
        }
    }
    s
}

fn main() {
    let cli = match Cli::try_parse_from(rewrite_aliases(std::env::args_os().collect())) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                std::process::exit(0);
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                std::process::exit(2);
            }
            // One line: clap's first line, without its usage block.
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            eprintln!("heirloom: {first} (see heirloom --help)");
            std::process::exit(2);
        }
    };
    let result = match &cli.command {
        Command::Bench(a) => spec_of(a).and_then(|(spec, out)| execute(&spec, &out, None, Reading::Sweep)),
        Command::List => {
            print!("{}", list());
            Ok(())
        }
        Command::Figures { out, quick, only } => figures(out, *quick, only),
        Command::Demo { duration } => seconds("--duration", *duration, false).and_then(|d| {
            let out = Outputs {
                json: Some("heirloom-demo.json".into()),
                csv: None,
                plot: Some("heirloom-demo.png".into()),
            };
            execute(
                &heirloom_bench::demo::spec(d),
                &out,
                Some("TM1 NDBB: Shore-MT, the SLI paper, heirloom, no locking"),
                Reading::Demo,
            )
        }),
    };
    if let Err(e) = result {
        eprintln!("heirloom: {e}");
        std::process::exit(if matches!(e, BenchError::Usage(_)) { 2 } else { 1 });
    }
}
