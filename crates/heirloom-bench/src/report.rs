//! Reports: the terminal table, JSON, CSV and the throughput plot.

use crate::results::AbortCauses;
use crate::runner::RunResult;
use heirloom::TableKind;
use plotters::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Errors writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// CSV encoding failed.
    #[error("cannot write {path}: {source}")]
    Csv {
        /// The path.
        path: String,
        /// The cause.
        source: csv::Error,
    },
    /// Plotting failed.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The path.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The plot path has an extension other than .svg or .png.
    #[error("--plot {0}: the file name must end in .svg or .png")]
    PlotKind(String),
}

/// The machine a report was measured on, as its JSON records it.
#[derive(Debug, Clone, Serialize)]
pub struct MachineJson {
    /// The CPU's model name.
    pub cpu: String,
    /// Cores this process could use.
    pub cores: usize,
    /// Whether the CPU has RTM.
    pub rtm: bool,
}

impl MachineJson {
    /// This machine (`heirloom_btree::machine::Machine::this`).
    pub fn this() -> Self {
        let m = heirloom_btree::machine::Machine::this();
        MachineJson {
            cpu: m.cpu.clone(),
            cores: m.cores,
            rtm: m.rtm,
        }
    }
}

/// The JSON document: `{"machine": {...}, "runs": [...], "notes": [...]}`.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// The machine the runs were measured on.
    pub machine: MachineJson,
    /// Every run, in the order run.
    pub runs: &'a [RunResult],
    /// The benchmark's remarks on how the sweep departs from its
    /// specification (`Benchmark::notes`), if any.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub notes: &'a [String],
}

/// The configuration header printed above the table: `scale` with its
/// unit, the benchmark's options as `key=value` words.
pub fn header(workload: &str, mix: &str, scale: &str, options: &str, seconds: f64, warmup: f64, seed: u64) -> String {
    let sep = if options.is_empty() { "" } else { ", " };
    format!(
        "# heirloom bench: workload {workload}, mix {mix}, scale {scale}{sep}{options}, {seconds} s measured after {warmup} s warm-up, seed {seed}; {}",
        heirloom_btree::machine::Machine::this().describe()
    )
}

/// Throughput of `a` over `b`, two configurations of one sweep: the median
/// of the ratios round by round (`RunResult::tps_runs`, in run order), so
/// that a stretch in which this shared machine ran at half speed, which
/// hits a few configurations of one round, does not decide the ratio; the
/// ratio of the two medians when there are no rounds to pair. NaN when a
/// throughput it divides by is zero.
pub fn paired_ratio(a: &RunResult, b: &RunResult) -> f64 {
    let ratio = |x: f64, y: f64| if y > 0.0 { x / y } else { f64::NAN };
    if a.tps_runs.len() >= 2 && a.tps_runs.len() == b.tps_runs.len() {
        let mut rs: Vec<f64> = a.tps_runs.iter().zip(&b.tps_runs).map(|(x, y)| ratio(*x, *y)).collect();
        rs.sort_by(f64::total_cmp);
        return rs[rs.len() / 2];
    }
    ratio(a.tps, b.tps)
}

/// Wound-wait: the mean time from a wound to its victim's death, µs (0
/// without wounds).
fn wound_delay_us(c: &AbortCauses) -> f64 {
    if c.wounded == 0 {
        0.0
    } else {
        c.wound_delay_ns as f64 / c.wounded as f64 / 1e3
    }
}

/// The terminal table.
pub fn table(runs: &[RunResult]) -> String {
    let mut out = String::new();
    let breakdown = runs.iter().any(|r| r.breakdown.is_some());
    let counters = runs.iter().any(|r| r.counters.is_some());
    let sharing = runs.iter().any(|r| r.sharing.is_some());
    let repeated = runs.iter().any(|r| !r.tps_runs.is_empty());
    let messages = runs.iter().any(|r| r.per_txn.messages > 0.0);
    let ops = runs.iter().any(|r| r.op.is_some());
    let ceiling = runs.iter().any(|r| r.of_ceiling.is_some());
    let levels = runs.iter().any(|r| r.sli);
    let fast = runs.iter().any(|r| r.per_txn.fast_ops > 0.0);
    let deadlocks = runs
        .iter()
        .any(|r| r.abort_causes.deadlock > 0 || r.abort_causes.cycles_rejected > 0);
    let wounds = runs.iter().any(|r| r.abort_causes.wounded > 0);
    // The policy column fits its longest label (`nowait+excl@never`), the
    // SLI column `on+k16`.
    let pw = runs.iter().map(|r| r.policy.len()).max().unwrap_or(0).max(12);
    let sw = runs.iter().map(|r| r.sli_label().len()).max().unwrap_or(0).max(4);
    // The table column fits `latchfree-swap` and `server:64`.
    let tw = runs.iter().map(|r| r.table.len()).max().unwrap_or(0).max(9);
    out.push_str(&format!(
        "{:<tw$} {:<sw$} {:<pw$} {:>7} {:>11} {:>11} {:>9} {:>9} {:>7} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "table",
        "sli",
        "policy",
        "threads",
        "txn/s",
        "total/s",
        "failed%",
        "aborts/s",
        "excl/s",
        "p50 us",
        "p99 us",
        "lt-ops/tx",
        "latch/tx",
        "cas/tx",
        "inh-used",
        "inh-inval"
    ));
    if levels {
        out.push_str(&format!(" {:>9}", "hi-ops/tx"));
    }
    if fast {
        out.push_str(&format!(" {:>8}", "fast/tx"));
    }
    if messages {
        out.push_str(&format!(" {:>8}", "msg/tx"));
    }
    if deadlocks {
        out.push_str(&format!(" {:>9} {:>9}", "dlocks/s", "rejects/s"));
    }
    if wounds {
        out.push_str(&format!(" {:>9} {:>9}", "wounds/s", "wound us"));
    }
    if ceiling {
        out.push_str(&format!(" {:>7}", "of none"));
    }
    if ops {
        out.push_str(&format!(" {:>12} {:>9} {:>13}", "op", "ns/op", "ops/s"));
    }
    if breakdown {
        out.push_str(&format!(
            " {:>6} {:>6} {:>6} {:>8} {:>6} {:>11}",
            "lm%", "latch%", "wait%", "backoff%", "other%", "other us/tx"
        ));
    }
    if counters {
        out.push_str(&format!(
            " {:>9} {:>9} {:>5} {:>9} {:>5} {:>8} {:>8}",
            "instr/tx", "cyc/tx", "ipc", "cpu us/tx", "cpus", "vcsw/tx", "icsw/tx"
        ));
    }
    if sharing {
        out.push_str(&format!(
            " {:>8} {:>9} {:>9} {:>8}",
            "wr/tx", "shared/tx", "recent/tx", "pins/tx"
        ));
    }
    if repeated {
        out.push_str(&format!(" {:>19}", "txn/s of all runs"));
    }
    out.push('\n');
    for r in runs {
        let done = (r.committed + r.failed).max(1) as f64;
        let secs = r.seconds.max(1e-9);
        out.push_str(&format!(
            "{:<tw$} {:<sw$} {:<pw$} {:>7} {:>11.0} {:>11.0} {:>8.1}% {:>9.0} {:>7.1} {:>8.1} {:>8.1} {:>9.2} {:>9.3} {:>9.3} {:>9.2} {:>9.4}",
            r.table,
            r.sli_label(),
            r.policy,
            r.threads,
            r.tps,
            r.total_tps,
            100.0 * r.failed as f64 / done,
            r.aborted as f64 / secs,
            r.exclusive_runs as f64 / secs,
            r.latency_us.p50,
            r.latency_us.p99,
            r.per_txn.table_ops,
            r.per_txn.latch_contended,
            r.per_txn.cas_retries,
            r.per_txn.inherited_used,
            r.per_txn.inherited_invalidated,
        ));
        if levels {
            out.push_str(&format!(" {:>9.3}", r.per_txn.table_ops_by_level.above_row()));
        }
        if fast {
            out.push_str(&format!(" {:>8.3}", r.per_txn.fast_ops));
        }
        if messages {
            out.push_str(&format!(" {:>8.2}", r.per_txn.messages));
        }
        if deadlocks {
            out.push_str(&format!(
                " {:>9.0} {:>9.0}",
                r.abort_causes.deadlock as f64 / secs,
                r.abort_causes.cycles_rejected as f64 / secs
            ));
        }
        if wounds {
            out.push_str(&format!(
                " {:>9.0} {:>9.1}",
                r.abort_causes.wounded as f64 / secs,
                wound_delay_us(&r.abort_causes)
            ));
        }
        if ceiling {
            match r.of_ceiling {
                Some(c) => out.push_str(&format!(" {:>6.1}%", 100.0 * c)),
                None => out.push_str(&format!(" {:>7}", "-")),
            }
        }
        if ops {
            match &r.op {
                Some(o) => out.push_str(&format!(" {:>12} {:>9.0} {:>13.0}", o.name, o.ns, o.per_s)),
                None => out.push_str(&format!(" {:>12} {:>9} {:>13}", "-", "-", "-")),
            }
        }
        if let Some(b) = r.breakdown {
            out.push_str(&format!(
                " {:>5.1}% {:>5.1}% {:>5.1}% {:>7.1}% {:>5.1}% {:>11.2}",
                100.0 * b.lock_manager,
                100.0 * b.latch_contention,
                100.0 * b.lock_wait,
                100.0 * b.backoff,
                100.0 * b.other,
                b.other_us_per_txn,
            ));
        }
        if counters {
            match r.counters {
                Some(c) => out.push_str(&format!(
                    " {:>9.0} {:>9.0} {:>5.2} {:>9.2} {:>5.2} {:>8.3} {:>8.3}",
                    c.instructions, c.cycles, c.ipc, c.cpu_us, c.cpus, c.voluntary_switches, c.involuntary_switches
                )),
                None => out.push_str(&format!(
                    " {:>9} {:>9} {:>5} {:>9} {:>5} {:>8} {:>8}",
                    "-", "-", "-", "-", "-", "-", "-"
                )),
            }
        }
        if sharing {
            match &r.sharing {
                Some(s) => out.push_str(&format!(
                    " {:>8.2} {:>9.3} {:>9.3} {:>8.2}",
                    s.line_writes, s.shared_line_writes, s.recent_shared_line_writes, s.pins
                )),
                None => out.push_str(&format!(" {:>8} {:>9} {:>9} {:>8}", "-", "-", "-", "-")),
            }
        }
        if repeated {
            let lo = r.tps_runs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.tps_runs.iter().copied().fold(0.0, f64::max);
            out.push_str(&format!(" {:>19}", format!("{:.0}k..{:.0}k", lo / 1e3, hi / 1e3)));
        }
        out.push('\n');
    }
    out
}

/// With `--classes`: one line per run with its lock-table requests per
/// transaction by class (the SLI paper's Figure 8) and what became of the
/// inherited locks (its Figure 9).
pub fn class_summary(runs: &[RunResult]) -> Vec<String> {
    runs.iter()
        .filter_map(|r| r.per_txn.classes.map(|c| (r, c)))
        .map(|(r, c)| {
            format!(
                "lock classes per txn, {} sli {} {} {} threads: above row shared hot {:.2} cold {:.2}, exclusive hot {:.2} cold {:.2}; rows shared hot {:.2} cold {:.2}, exclusive hot {:.2} cold {:.2}; inherited used {:.2} discarded {:.2} invalidated {:.2}; lock-table ops by level: database {:.3} table {:.3} page {:.3} row {:.3}",
                r.table,
                r.sli_label(),
                r.policy,
                r.threads,
                c.high_shared_hot,
                c.high_shared_cold,
                c.high_exclusive_hot,
                c.high_exclusive_cold,
                c.row_shared_hot,
                c.row_shared_cold,
                c.row_exclusive_hot,
                c.row_exclusive_cold,
                r.per_txn.inherited_used,
                r.per_txn.inherited_discarded,
                r.per_txn.inherited_invalidated,
                r.per_txn.table_ops_by_level.database,
                r.per_txn.table_ops_by_level.table,
                r.per_txn.table_ops_by_level.page,
                r.per_txn.table_ops_by_level.row,
            )
        })
        .collect()
}

/// Writes `{"runs": [...], "notes": [...]}` to `path`.
pub fn write_json(path: &Path, runs: &[RunResult], notes: &[String]) -> Result<(), ReportError> {
    let io = |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut f = std::fs::File::create(path).map_err(io)?;
    serde_json::to_writer_pretty(
        &mut f,
        &Document {
            machine: MachineJson::this(),
            runs,
            notes,
        },
    )
    .map_err(|e| io(e.into()))?;
    f.write_all(b"\n").map_err(io)
}

#[derive(Serialize)]
struct CsvRow<'a> {
    workload: &'a str,
    mix: &'a str,
    table: &'a str,
    sli: bool,
    sli_keep: u32,
    fast_path: bool,
    policy: &'a str,
    retry: &'a str,
    pregen: usize,
    threads: usize,
    scale: u64,
    seconds: f64,
    committed: u64,
    failed: u64,
    aborted: u64,
    restarts: u64,
    exclusive_runs: u64,
    nodes_allocated: u64,
    reclaim_helps: u64,
    tps: f64,
    total_tps: f64,
    aborts_per_s: f64,
    deadlocks_per_s: f64,
    wounds_per_s: f64,
    wound_delay_us: f64,
    cycles_rejected_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    p999_us: f64,
    max_us: f64,
    lock_requests_per_txn: f64,
    table_ops_per_txn: f64,
    fast_ops_per_txn: f64,
    database_table_ops_per_txn: f64,
    table_table_ops_per_txn: f64,
    page_table_ops_per_txn: f64,
    row_table_ops_per_txn: f64,
    latch_contended_per_txn: f64,
    cas_retries_per_txn: f64,
    waits_per_txn: f64,
    inherited_used_per_txn: f64,
    inherited_discarded_per_txn: f64,
    inherited_invalidated_per_txn: f64,
    messages_per_txn: f64,
    high_shared_hot_per_txn: Option<f64>,
    high_shared_cold_per_txn: Option<f64>,
    high_exclusive_hot_per_txn: Option<f64>,
    high_exclusive_cold_per_txn: Option<f64>,
    row_shared_hot_per_txn: Option<f64>,
    row_shared_cold_per_txn: Option<f64>,
    row_exclusive_hot_per_txn: Option<f64>,
    row_exclusive_cold_per_txn: Option<f64>,
    op: Option<&'a str>,
    ops_per_s: Option<f64>,
    ns_per_op: Option<f64>,
    lock_manager_share: Option<f64>,
    latch_contention_share: Option<f64>,
    lock_wait_share: Option<f64>,
    backoff_share: Option<f64>,
    other_share: Option<f64>,
    other_us_per_txn: Option<f64>,
    of_ceiling: Option<f64>,
    htm_rtm: Option<bool>,
    htm_under_latch_share: Option<f64>,
    htm_conflict_aborts_per_section: Option<f64>,
    htm_capacity_aborts_per_section: Option<f64>,
    instructions_per_txn: Option<f64>,
    cycles_per_txn: Option<f64>,
    ipc: Option<f64>,
    cpu_us_per_txn: Option<f64>,
    cpus: Option<f64>,
    voluntary_switches_per_txn: Option<f64>,
    involuntary_switches_per_txn: Option<f64>,
    counters_kernel: Option<bool>,
    counters_lost: Option<&'a str>,
    line_writes_per_txn: Option<f64>,
    shared_line_writes_per_txn: Option<f64>,
    recent_shared_line_writes_per_txn: Option<f64>,
    pins_per_txn: Option<f64>,
    defers_per_txn: Option<f64>,
    lm_allocs_per_txn: Option<f64>,
    rows_on: Option<bool>,
    rows_turned_off: Option<u32>,
}

/// Writes one CSV row per run to `path`.
pub fn write_csv(path: &Path, runs: &[RunResult]) -> Result<(), ReportError> {
    let err = |source| ReportError::Csv {
        path: path.display().to_string(),
        source,
    };
    let mut w = csv::Writer::from_path(path).map_err(err)?;
    for r in runs {
        w.serialize(CsvRow {
            workload: &r.workload,
            mix: &r.mix,
            table: &r.table,
            sli: r.sli,
            sli_keep: r.sli_keep,
            fast_path: r.fast_path,
            policy: &r.policy,
            retry: r.retry.name(),
            pregen: r.pregen,
            threads: r.threads,
            scale: r.scale,
            seconds: r.seconds,
            committed: r.committed,
            failed: r.failed,
            aborted: r.aborted,
            restarts: r.restarts,
            exclusive_runs: r.exclusive_runs,
            nodes_allocated: r.nodes_allocated,
            reclaim_helps: r.reclaim_helps,
            tps: r.tps,
            total_tps: r.total_tps,
            aborts_per_s: r.aborted as f64 / r.seconds.max(1e-9),
            deadlocks_per_s: r.abort_causes.deadlock as f64 / r.seconds.max(1e-9),
            wounds_per_s: r.abort_causes.wounded as f64 / r.seconds.max(1e-9),
            wound_delay_us: wound_delay_us(&r.abort_causes),
            cycles_rejected_per_s: r.abort_causes.cycles_rejected as f64 / r.seconds.max(1e-9),
            p50_us: r.latency_us.p50,
            p99_us: r.latency_us.p99,
            p999_us: r.latency_us.p999,
            max_us: r.latency_us.max,
            lock_requests_per_txn: r.per_txn.lock_requests,
            table_ops_per_txn: r.per_txn.table_ops,
            fast_ops_per_txn: r.per_txn.fast_ops,
            database_table_ops_per_txn: r.per_txn.table_ops_by_level.database,
            table_table_ops_per_txn: r.per_txn.table_ops_by_level.table,
            page_table_ops_per_txn: r.per_txn.table_ops_by_level.page,
            row_table_ops_per_txn: r.per_txn.table_ops_by_level.row,
            latch_contended_per_txn: r.per_txn.latch_contended,
            cas_retries_per_txn: r.per_txn.cas_retries,
            waits_per_txn: r.per_txn.waits,
            inherited_used_per_txn: r.per_txn.inherited_used,
            inherited_discarded_per_txn: r.per_txn.inherited_discarded,
            inherited_invalidated_per_txn: r.per_txn.inherited_invalidated,
            messages_per_txn: r.per_txn.messages,
            high_shared_hot_per_txn: r.per_txn.classes.map(|c| c.high_shared_hot),
            high_shared_cold_per_txn: r.per_txn.classes.map(|c| c.high_shared_cold),
            high_exclusive_hot_per_txn: r.per_txn.classes.map(|c| c.high_exclusive_hot),
            high_exclusive_cold_per_txn: r.per_txn.classes.map(|c| c.high_exclusive_cold),
            row_shared_hot_per_txn: r.per_txn.classes.map(|c| c.row_shared_hot),
            row_shared_cold_per_txn: r.per_txn.classes.map(|c| c.row_shared_cold),
            row_exclusive_hot_per_txn: r.per_txn.classes.map(|c| c.row_exclusive_hot),
            row_exclusive_cold_per_txn: r.per_txn.classes.map(|c| c.row_exclusive_cold),
            op: r.op.as_ref().map(|o| o.name.as_str()),
            ops_per_s: r.op.as_ref().map(|o| o.per_s),
            ns_per_op: r.op.as_ref().map(|o| o.ns),
            lock_manager_share: r.breakdown.map(|b| b.lock_manager),
            latch_contention_share: r.breakdown.map(|b| b.latch_contention),
            lock_wait_share: r.breakdown.map(|b| b.lock_wait),
            backoff_share: r.breakdown.map(|b| b.backoff),
            other_share: r.breakdown.map(|b| b.other),
            other_us_per_txn: r.breakdown.map(|b| b.other_us_per_txn),
            of_ceiling: r.of_ceiling,
            htm_rtm: r.elision.map(|e| e.rtm),
            htm_under_latch_share: r.elision.map(|e| e.under_latch_share),
            htm_conflict_aborts_per_section: r.elision.map(|e| e.conflict),
            htm_capacity_aborts_per_section: r.elision.map(|e| e.capacity),
            instructions_per_txn: r.counters.map(|c| c.instructions),
            cycles_per_txn: r.counters.map(|c| c.cycles),
            ipc: r.counters.map(|c| c.ipc),
            cpu_us_per_txn: r.counters.map(|c| c.cpu_us),
            cpus: r.counters.map(|c| c.cpus),
            voluntary_switches_per_txn: r.counters.map(|c| c.voluntary_switches),
            involuntary_switches_per_txn: r.counters.map(|c| c.involuntary_switches),
            counters_kernel: r.counters.map(|c| c.kernel),
            counters_lost: r.counters_lost.as_deref(),
            line_writes_per_txn: r.sharing.as_ref().map(|s| s.line_writes),
            shared_line_writes_per_txn: r.sharing.as_ref().map(|s| s.shared_line_writes),
            recent_shared_line_writes_per_txn: r.sharing.as_ref().map(|s| s.recent_shared_line_writes),
            pins_per_txn: r.sharing.as_ref().map(|s| s.pins),
            defers_per_txn: r.sharing.as_ref().map(|s| s.defers),
            lm_allocs_per_txn: r.sharing.as_ref().map(|s| s.allocs),
            rows_on: r.rows.map(|x| x.on),
            rows_turned_off: r.rows.map(|x| x.turned_off),
        })
        .map_err(err)?;
    }
    w.flush().map_err(|e| err(e.into()))
}

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

pub(crate) fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The shipped font is valid TrueType; a failure here would be a build defect.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Draws throughput against threads, one line per configuration (table,
/// SLI, policy), to `path` (.svg or .png): committed transactions per
/// second as solid lines and, where transactions failed by design, all
/// completed ones per second as dashed lines of the same colour.
pub fn plot(path: &Path, title: &str, runs: &[RunResult]) -> Result<(), ReportError> {
    plot_labelled(path, title, runs, &|r| {
        format!("{} sli={} {}", r.table, r.sli_label(), r.policy)
    })
}

/// [`plot`] with each run's line named by `label`.
pub fn plot_labelled(
    path: &Path,
    title: &str,
    runs: &[RunResult],
    label: &dyn Fn(&RunResult) -> String,
) -> Result<(), ReportError> {
    let name = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => draw(
            SVGBackend::new(path, (900, 560)).into_drawing_area(),
            title,
            runs,
            label,
            &name,
        ),
        Some("png") => draw(
            BitMapBackend::new(path, (900, 560)).into_drawing_area(),
            title,
            runs,
            label,
            &name,
        ),
        _ => Err(ReportError::PlotKind(name)),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    runs: &[RunResult],
    label: &dyn Fn(&RunResult) -> String,
    path: &str,
) -> Result<(), ReportError> {
    register_font();
    let err = |e: &dyn std::fmt::Display| ReportError::Plot {
        path: path.to_string(),
        message: e.to_string(),
    };
    // Series: one per configuration, points (threads, committed/s,
    // completed/s) sorted by threads.
    type Points = Vec<(f64, f64, f64)>;
    let mut series: Vec<(String, Points)> = Vec::new();
    for r in runs {
        let label = label(r);
        let p = (r.threads as f64, r.tps, r.total_tps);
        match series.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.1.push(p),
            None => series.push((label, vec![p])),
        }
    }
    for s in &mut series {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let failures = runs.iter().any(|r| r.failed > 0);
    let max_threads = runs.iter().map(|r| r.threads).max().unwrap_or(1) as f64;
    let max_tps = runs.iter().map(|r| r.tps.max(r.total_tps)).fold(0.0, f64::max).max(1.0);
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..max_threads * 1.05 + 0.5, 0.0..max_tps * 1.15)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("worker threads")
        .y_desc(if failures {
            "committed (solid) and completed (dashed) txn/s"
        } else {
            "committed transactions per second"
        })
        .y_label_formatter(&|v| {
            if *v >= 1e6 {
                format!("{:.1}M", v / 1e6)
            } else {
                format!("{:.0}k", v / 1e3)
            }
        })
        .x_labels((max_threads as usize + 1).min(17))
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-6 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        })
        .light_line_style(WHITE)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|p| Circle::new((p.0, p.1), 4, color.filled())))
            .map_err(|e| err(&e))?;
        if failures {
            chart
                .draw_series(DashedLineSeries::new(
                    pts.iter().map(|p| (p.0, p.2)),
                    6,
                    4,
                    color.stroke_width(1),
                ))
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// For every run on a latch-free table (either append) with a `latched`
/// run of the same SLI setting, policy and thread count: the throughput
/// ratio and what each pays for contention on the table's own state per
/// transaction.
pub fn table_summary(runs: &[RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    let latch_free = |r: &&RunResult| r.table.parse::<TableKind>().is_ok_and(|k| k.is_latch_free());
    for free in runs.iter().filter(latch_free) {
        if let Some(latched) = runs.iter().find(|r| {
            r.table == TableKind::Latched.name()
                && r.sli == free.sli
                && r.sli_keep == free.sli_keep
                && r.fast_path == free.fast_path
                && r.policy == free.policy
                && r.threads == free.threads
        }) {
            out.push(format!(
                "{} threads, SLI {}, {}: {}/latched throughput {:.2}x; contended latches per txn {:.3} (latched) vs CAS retries per txn {:.3} ({})",
                free.threads,
                free.sli_label(),
                free.policy,
                free.table,
                free.tps / latched.tps.max(1e-9),
                latched.per_txn.latch_contended,
                free.per_txn.cas_retries,
                free.table,
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
        if let Some(off) = runs.iter().find(|r| {
            !r.sli
                && r.table == on.table
                && r.fast_path == on.fast_path
                && r.policy == on.policy
                && r.threads == on.threads
        }) {
            out.push(format!(
                "{} {} {} threads: SLI {}/off throughput {:.2}x; lock-table ops per txn {:.2} -> {:.2} ({:.2}x), above row level {:.3} -> {:.3}; contended latches per txn {:.3} -> {:.3}",
                on.table,
                on.policy,
                on.threads,
                on.sli_label(),
                on.tps / off.tps.max(1e-9),
                off.per_txn.table_ops,
                on.per_txn.table_ops,
                on.per_txn.table_ops / off.per_txn.table_ops.max(1e-9),
                off.per_txn.table_ops_by_level.above_row(),
                on.per_txn.table_ops_by_level.above_row(),
                off.per_txn.latch_contended,
                on.per_txn.latch_contended,
            ));
        }
    }
    out
}
