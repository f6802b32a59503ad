//! The rules: each figure's reading of its runs (the series to draw, the
//! paper's numbers read off ours) and its verdict.

use super::*;

/// A share as the rule texts write it (`0.1` -> `10%`, `0.005` -> `0.5%`).
fn pct(x: f64) -> String {
    format!("{}%", 100.0 * x)
}

pub(super) fn most_threads(runs: &[RunResult]) -> usize {
    runs.iter().map(|r| r.threads).max().unwrap_or(1)
}

pub(super) fn find<'a>(runs: &'a [RunResult], table: &str, sli: bool, threads: usize) -> Option<&'a RunResult> {
    runs.iter()
        .find(|r| r.table == table && r.sli == sli && r.threads == threads)
}

/// Adds `p` to the series called `label`, starting it if it is new.
pub(super) fn add_point(series: &mut Vec<Series>, label: &str, p: (f64, f64)) {
    match series.iter_mut().find(|s| s.0 == label) {
        Some(s) => s.1.push(p),
        None => series.push((label.to_string(), vec![p])),
    }
}

/// One series per `label` of a run: y of each run against threads.
pub(super) fn series_by(
    runs: &[RunResult],
    label: impl Fn(&RunResult) -> String,
    y: impl Fn(&RunResult) -> f64,
) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in runs {
        add_point(&mut out, &label(r), (r.threads as f64, y(r)));
    }
    for s in &mut out {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

pub(super) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

/// Throughput of `a` over `b` ([`report::paired_ratio`]); NaN when
/// either is missing.
pub(super) fn paired(a: Option<&RunResult>, b: Option<&RunResult>) -> f64 {
    let (Some(a), Some(b)) = (a, b) else { return f64::NAN };
    report::paired_ratio(a, b)
}

pub(super) fn lm_share(r: &RunResult) -> f64 {
    r.breakdown.map_or(0.0, |b| b.lock_manager + b.latch_contention)
}

/// sli-fig1: the least lock-manager share at the most threads, and its
/// least growth over the one-thread share, for "reproduced".
const LM_SHARE_MIN: f64 = 0.10;
const LM_SHARE_GROWTH: f64 = 1.2;

pub(super) fn rule_lm_share() -> String {
    format!(
        "reproduced if the lock manager's share (lock calls and latch contention, `--breakdown`) at the most threads is at least {} and at least {LM_SHARE_GROWTH}x its one-thread share; direction if it only grows; else not reproduced",
        pct(LM_SHARE_MIN)
    )
}

pub(super) fn read_lm_share(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let one = find(runs, "latched", false, 1).map_or(0.0, lm_share);
    let top = find(runs, "latched", false, most).map_or(0.0, lm_share);
    let verdict = if top >= LM_SHARE_MIN && top >= LM_SHARE_GROWTH * one {
        Verdict::Reproduced
    } else if top > one {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "TM1: lock manager share of worker time (latched, SLI off)".into(),
            x_desc: "worker threads",
            y_desc: "% of worker time in the lock manager",
            series: vec![
                (
                    "lock calls and latch contention".into(),
                    series_by(runs, |_| String::new(), |r| 100.0 * lm_share(r))
                        .into_iter()
                        .flat_map(|s| s.1)
                        .collect(),
                ),
                (
                    "latch contention alone".into(),
                    series_by(
                        runs,
                        |_| String::new(),
                        |r| 100.0 * r.breakdown.map_or(0.0, |b| b.latch_contention),
                    )
                    .into_iter()
                    .flat_map(|s| s.1)
                    .collect(),
                ),
            ],
            categories: Vec::new(),
        }],
        ours: format!(
            "The lock manager's share of worker time is {:.1}% at one thread and {:.1}% at {most} threads (2 cores).",
            100.0 * one,
            100.0 * top
        ),
        verdict,
    }
}

pub(super) fn tps_chart(title: String, runs: &[RunResult]) -> Chart {
    Chart {
        suffix: "",
        title,
        x_desc: "worker threads",
        y_desc: "committed transactions per second",
        series: series_by(runs, |r| format!("{} sli={}", r.table, r.sli_label()), |r| r.tps),
        categories: Vec::new(),
    }
}

/// sli-fig11-tm1: SLI on / off at the most threads, for "reproduced" and
/// for "direction".
const SLI_TM1_REPRODUCED: f64 = 1.10;
const SLI_TM1_DIRECTION: f64 = 1.02;

pub(super) fn rule_sli_tm1() -> String {
    format!(
        "the ratio SLI on / off at the most threads: reproduced if at least {SLI_TM1_REPRODUCED:.2}, direction if above {SLI_TM1_DIRECTION:.2}, else not reproduced"
    )
}

pub(super) fn read_sli_tm1(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let ratios: Vec<String> = thread_counts(runs)
        .iter()
        .map(|&n| format!("{:.2}x at {n}", on_off(runs, n)))
        .collect();
    let r = on_off(runs, most);
    let verdict = if r >= SLI_TM1_REPRODUCED {
        Verdict::Reproduced
    } else if r > SLI_TM1_DIRECTION {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![tps_chart("TM1 (NDBB mix), latched table: SLI off and on".into(), runs)],
        ours: format!("SLI on / off: {} threads.", ratios.join(", ")),
        verdict,
    }
}

pub(super) fn on_off(runs: &[RunResult], threads: usize) -> f64 {
    paired(
        find(runs, "latched", true, threads),
        find(runs, "latched", false, threads),
    )
}

/// sli-fig11-tpcb-tpcc: TPC-B's least SLI on / off ratio for "reproduced".
const SLI_TPCB_MIN: f64 = 1.05;

pub(super) fn rule_sli_ratio() -> String {
    format!(
        "on/off ratio at the most threads: reproduced if TPC-B's is at least {SLI_TPCB_MIN:.2} and above TPC-C's; direction if TPC-B's is above TPC-C's; else not reproduced"
    )
}

pub(super) fn read_sli_ratio(parts: &Measured) -> Reading {
    let mut series = Vec::new();
    let mut at_most = Vec::new();
    for (label, runs) in parts {
        let t = thread_counts(runs);
        series.push((label.clone(), t.iter().map(|&n| (n as f64, on_off(runs, n))).collect()));
        at_most.push((label.clone(), on_off(runs, most_threads(runs))));
    }
    let get = |l: &str| at_most.iter().find(|x| x.0 == l).map_or(f64::NAN, |x| x.1);
    let (b, c) = (get("tpcb"), get("tpcc"));
    let verdict = if b >= SLI_TPCB_MIN && b > c {
        Verdict::Reproduced
    } else if b > c {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "SLI on / off throughput, latched table".into(),
            x_desc: "worker threads",
            y_desc: "throughput with SLI / without",
            series,
            categories: Vec::new(),
        }],
        ours: format!("SLI on / off at the most threads: TPC-B {b:.2}x, TPC-C {c:.2}x."),
        verdict,
    }
}

/// sli-fig8-9: TM1's least heritable share, and the most hot
/// non-heritable requests of any workload, for "reproduced".
const HERITABLE_MIN: f64 = 0.5;
const HOT_OTHER_MAX: f64 = 0.10;

pub(super) fn rule_classes() -> String {
    format!(
        "from the lock-table requests of runs without SLI (`--classes` classifies them): reproduced if TM1's heritable share is at least {HERITABLE_MIN} and above TPC-C's, and hot non-heritable requests are at most {} of each workload's; direction if TM1's heritable share is above TPC-C's; else not reproduced",
        pct(HOT_OTHER_MAX)
    )
}

pub(super) fn read_classes(parts: &Measured) -> Reading {
    // (label, heritable share, hot non-heritable share, requests) from the
    // SLI-off run; the outcomes from the SLI-on run.
    let mut shares = Vec::new();
    let mut class_series: Vec<Series> = Vec::new();
    let mut outcome_series: Vec<Series> = Vec::new();
    for (i, (label, runs)) in parts.iter().enumerate() {
        let x = (i + 1) as f64;
        let push = |series: &mut Vec<Series>, name: &str, y: f64| add_point(series, name, (x, y));
        if let Some(c) = runs.iter().find(|r| !r.sli).and_then(|r| r.per_txn.classes) {
            let heritable = c.high_shared_hot + c.high_shared_cold;
            let hot_other = c.high_exclusive_hot + c.row_shared_hot + c.row_exclusive_hot;
            let all = heritable
                + c.high_exclusive_hot
                + c.high_exclusive_cold
                + c.row_shared_hot
                + c.row_shared_cold
                + c.row_exclusive_hot
                + c.row_exclusive_cold;
            shares.push((label.clone(), ratio(heritable, all), ratio(hot_other, all), all));
            push(&mut class_series, "heritable, hot", c.high_shared_hot);
            push(&mut class_series, "heritable, cold", c.high_shared_cold);
            push(&mut class_series, "not heritable, hot", hot_other);
            push(
                &mut class_series,
                "not heritable, cold",
                c.high_exclusive_cold + c.row_shared_cold + c.row_exclusive_cold,
            );
        }
        if let Some(r) = runs.iter().find(|r| r.sli) {
            push(&mut outcome_series, "inherited and used", r.per_txn.inherited_used);
            push(
                &mut outcome_series,
                "inherited, not used",
                r.per_txn.inherited_discarded,
            );
            push(&mut outcome_series, "invalidated", r.per_txn.inherited_invalidated);
        }
    }
    let get = |l: &str| shares.iter().find(|s| s.0 == l).map_or(f64::NAN, |s| s.1);
    let (tm1, tpcc) = (get("tm1"), get("tpcc"));
    let few_hot_other = shares.iter().all(|s| s.2 <= HOT_OTHER_MAX);
    let verdict = if tm1 >= HERITABLE_MIN && tm1 > tpcc && few_hot_other {
        Verdict::Reproduced
    } else if tm1 > tpcc {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    let names: Vec<String> = parts.iter().map(|p| p.0.clone()).collect();
    Reading {
        charts: vec![
            Chart {
                suffix: "",
                title: "Lock-table requests per transaction by class, SLI off".into(),
                x_desc: "workload",
                y_desc: "requests per transaction",
                series: class_series,
                categories: names.clone(),
            },
            Chart {
                suffix: "-outcomes",
                title: "What became of inherited locks, per transaction (SLI on)".into(),
                x_desc: "workload",
                y_desc: "locks per transaction",
                series: outcome_series,
                categories: names,
            },
        ],
        ours: shares
            .iter()
            .map(|(l, h, o, n)| {
                format!(
                    "{l}: {n:.1} lock-table requests per transaction, {:.0}% heritable, {:.1}% hot and not heritable",
                    100.0 * h,
                    100.0 * o
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
            + ".",
        verdict,
    }
}

pub(super) fn op_ns(r: &RunResult) -> f64 {
    r.op.as_ref().map_or(f64::NAN, |o| o.ns)
}

pub(super) fn mpl_over_sml(runs: &[RunResult], threads: usize) -> f64 {
    // Cost per operation is threads / operations per second, and
    // operations per transaction are fixed: the cost ratio is the inverse
    // throughput ratio, paired round by round.
    let by = |t: &str| runs.iter().find(|r| r.table.starts_with(t) && r.threads == threads);
    paired(by("latched"), by("server"))
}

pub(super) fn thread_counts(runs: &[RunResult]) -> Vec<usize> {
    let mut t: Vec<usize> = runs.iter().map(|r| r.threads).collect();
    t.sort_unstable();
    t.dedup();
    t
}

pub(super) fn cost_chart(title: String, parts: &Measured) -> Chart {
    let mut series = Vec::new();
    for (label, runs) in parts {
        for s in series_by(
            runs,
            |r| {
                let who = if r.table.starts_with("server") {
                    "MPL (server)"
                } else {
                    "SML (latched)"
                };
                format!("{label}: {who}")
            },
            op_ns,
        ) {
            series.push(s);
        }
    }
    Chart {
        suffix: "",
        title,
        x_desc: "worker threads (processes)",
        y_desc: "ns per operation, as one thread sees it",
        series,
        categories: Vec::new(),
    }
}

/// 1995-fig4: the least server / latched cost ratio at the most threads
/// for "reproduced" (above 1 everywhere is the direction).
const MPL_SML_BIG: f64 = 5.0;

pub(super) fn rule_sml_mpl() -> String {
    format!(
        "server (MPL) cost over latched (SML) cost per operation: reproduced if above 1 at every thread count and at least {MPL_SML_BIG} at the most threads; direction if above 1 at every thread count; else not reproduced"
    )
}

pub(super) fn read_sml_mpl(parts: &Measured) -> Reading {
    let mut all_above = true;
    let mut big = true;
    let mut words = Vec::new();
    for (label, runs) in parts {
        let t = thread_counts(runs);
        let rs: Vec<f64> = t.iter().map(|&n| mpl_over_sml(runs, n)).collect();
        all_above &= rs.iter().all(|&x| x > 1.0);
        big &= rs.last().is_some_and(|&x| x >= MPL_SML_BIG);
        words.push(format!(
            "{label}: the server costs {} the latched table",
            t.iter()
                .zip(&rs)
                .map(|(n, x)| format!("{x:.1}x at {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let verdict = match (all_above, big) {
        (true, true) => Verdict::Reproduced,
        (true, false) => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    Reading {
        charts: vec![cost_chart(
            "Hot lock and null critical section: SML against MPL".into(),
            parts,
        )],
        ours: words.join("; ") + ".",
        verdict,
    }
}

/// 1995-fig5: the thread count at which larger batches must bring the
/// server closer.
const BATCH_THREADS: usize = 2;

pub(super) fn rule_batches() -> String {
    format!(
        "server over latched cost per lock: reproduced if batches of 100 bring the server closer than batches of 10 at {BATCH_THREADS} threads and the latched table is cheaper at the most threads for both; direction if only the first holds; else not reproduced"
    )
}

pub(super) fn read_batches(parts: &Measured) -> Reading {
    let at = |label: &str, n: usize| {
        parts
            .iter()
            .find(|p| p.0 == label)
            .map_or(f64::NAN, |p| mpl_over_sml(&p.1, n))
    };
    let most = parts.iter().map(|p| most_threads(&p.1)).max().unwrap_or(1);
    let closer = at("batch 100", BATCH_THREADS) < at("batch 10", BATCH_THREADS);
    let sml_wins = at("batch 10", most) > 1.0 && at("batch 100", most) > 1.0;
    let verdict = match (closer, sml_wins) {
        (true, true) => Verdict::Reproduced,
        (true, false) => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    Reading {
        charts: vec![cost_chart("Batches of 10 and 100 locks: SML against MPL".into(), parts)],
        ours: format!(
            "Server over latched cost per lock at {BATCH_THREADS} threads: {:.2}x with batches of 10, {:.2}x with 100; at {most} threads {:.2}x and {:.2}x.",
            at("batch 10", BATCH_THREADS),
            at("batch 100", BATCH_THREADS),
            at("batch 10", most),
            at("batch 100", most)
        ),
        verdict,
    }
}

pub(super) fn lf_over_l(runs: &[RunResult], threads: usize) -> f64 {
    paired(
        find(runs, "latchfree", false, threads),
        find(runs, "latched", false, threads),
    )
}

/// slides-range: the least latchfree / latched ratio, and the thread count
/// that alone decides "direction".
const RANGE_MIN: f64 = 1.0;
const RANGE_DIRECTION_THREADS: usize = 2;

pub(super) fn rule_range() -> String {
    format!(
        "latchfree / latched throughput: reproduced if at least {RANGE_MIN:.1} at every thread count above one for both spans; direction if at least {RANGE_MIN:.1} at {RANGE_DIRECTION_THREADS} threads for both; else not reproduced"
    )
}

pub(super) fn read_range(parts: &Measured) -> Reading {
    let mut every = true;
    let mut at_two = true;
    let mut words = Vec::new();
    let mut charts = Vec::new();
    for (i, (label, runs)) in parts.iter().enumerate() {
        let t = thread_counts(runs);
        let rs: Vec<(usize, f64)> = t.iter().filter(|&&n| n > 1).map(|&n| (n, lf_over_l(runs, n))).collect();
        every &= rs.iter().all(|x| x.1 >= RANGE_MIN);
        at_two &= rs
            .iter()
            .find(|x| x.0 == RANGE_DIRECTION_THREADS)
            .is_some_and(|x| x.1 >= RANGE_MIN);
        words.push(format!(
            "{label}: latchfree / latched {}",
            rs.iter()
                .map(|(n, x)| format!("{x:.2}x at {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let mut c = tps_chart(format!("Read-only range, {label}: every table kind"), runs);
        c.suffix = if i == 0 { "" } else { "-b" };
        c.series = series_by(runs, |r| r.table.clone(), |r| r.tps);
        charts.push(c);
    }
    let verdict = match (every, at_two) {
        (true, _) => Verdict::Reproduced,
        (false, true) => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    Reading {
        charts,
        ours: words.join("; ") + ".",
        verdict,
    }
}

/// slides-hotspot: the most latch contention the latch-free table may
/// show, and the least the latched table must, as shares of worker time.
const LF_LATCH_MAX: f64 = 0.005;
const L_LATCH_MIN: f64 = 0.01;

pub(super) fn rule_hotspot() -> String {
    format!(
        "at the most threads, with `--breakdown`: reproduced if the latch-free table spends no time in latch contention (under {}), more in lock waits than in latches, and the latched table does lose time to latches (over {}); direction if only the first two hold; else not reproduced",
        pct(LF_LATCH_MAX),
        pct(L_LATCH_MIN)
    )
}

pub(super) fn read_hotspot(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let b = |t: &str| find(runs, t, false, most).and_then(|r| r.breakdown);
    let (lf, l) = (b("latchfree"), b("latched"));
    let lf_latch = lf.map_or(f64::NAN, |b| b.latch_contention);
    let lf_wait = lf.map_or(f64::NAN, |b| b.lock_wait);
    let l_latch = l.map_or(f64::NAN, |b| b.latch_contention);
    let first_two = lf_latch < LF_LATCH_MAX && lf_wait > lf_latch;
    let verdict = if first_two && l_latch > L_LATCH_MIN {
        Verdict::Reproduced
    } else if first_two {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    let mut latch = series_by(
        runs,
        |r| format!("{}: latch contention", r.table),
        |r| 100.0 * r.breakdown.map_or(0.0, |b| b.latch_contention),
    );
    latch.extend(series_by(
        runs,
        |r| format!("{}: lock waits", r.table),
        |r| 100.0 * r.breakdown.map_or(0.0, |b| b.lock_wait),
    ));
    Reading {
        charts: vec![
            tps_chart("20% updates on a hot spot: throughput".into(), runs),
            Chart {
                suffix: "-breakdown",
                title: "20% updates on a hot spot: where the time goes".into(),
                x_desc: "worker threads",
                y_desc: "% of worker time",
                series: latch,
                categories: Vec::new(),
            },
        ],
        ours: format!(
            "At {most} threads the latch-free table spends {:.1}% of worker time in latch contention and {:.1}% waiting for locks; the latched table {:.1}% in latch contention.",
            100.0 * lf_latch,
            100.0 * lf_wait,
            100.0 * l_latch
        ),
        verdict,
    }
}

/// picotm-steps: reader/writer locks must not raise commits this many
/// times over exclusive locks; directions that must hold for
/// "reproduced" (all) and "direction".
const RW_COMMITS_MAX: f64 = 2.0;
const PICOTM_DIRECTIONS: usize = 4;
const PICOTM_DIRECTION_MIN: usize = 3;

pub(super) fn rule_picotm() -> String {
    format!(
        "the {PICOTM_DIRECTIONS} directions at the most threads — rw cuts restarts against x; rw does not raise commits {RW_COMMITS_MAX}x; exclusive mode raises commits and cuts restarts against rw; waiting cuts restarts and lowers commits against exclusive mode: reproduced if all {PICOTM_DIRECTIONS} hold, direction if {PICOTM_DIRECTION_MIN}, else not reproduced"
    )
}

pub(super) fn read_picotm(parts: &Measured) -> Reading {
    let most = parts.iter().map(|p| most_threads(&p.1)).max().unwrap_or(1);
    let at = |i: usize| {
        parts
            .get(i)
            .and_then(|p| p.1.iter().find(|r| r.threads == most))
            .map_or((f64::NAN, f64::NAN), |r| {
                (r.tps, r.restarts as f64 / r.seconds.max(1e-9))
            })
    };
    let (x, rw, excl, wait) = (at(0), at(1), at(2), at(3));
    let holds = [
        rw.1 < x.1,
        rw.0 < RW_COMMITS_MAX * x.0.max(1.0),
        excl.0 > rw.0 && excl.1 < rw.1,
        wait.1 < excl.1 && wait.0 < excl.0,
    ];
    let n = holds.iter().filter(|&&h| h).count();
    let verdict = match n {
        PICOTM_DIRECTIONS => Verdict::Reproduced,
        PICOTM_DIRECTION_MIN.. => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    let mut commits = Vec::new();
    let mut restarts = Vec::new();
    for (label, runs) in parts {
        commits.extend(series_by(runs, |_| label.clone(), |r| r.tps));
        restarts.extend(series_by(
            runs,
            |_| label.clone(),
            |r| r.restarts as f64 / r.seconds.max(1e-9),
        ));
    }
    Reading {
        charts: vec![
            Chart {
                suffix: "",
                title: "picotm's buffer: commits per second, by step".into(),
                x_desc: "worker threads",
                y_desc: "commits per second",
                series: commits,
                categories: Vec::new(),
            },
            Chart {
                suffix: "-restarts",
                title: "picotm's buffer: restarts per second, by step".into(),
                x_desc: "worker threads",
                y_desc: "restarts per second",
                series: restarts,
                categories: Vec::new(),
            },
        ],
        ours: format!(
            "At {most} threads, commits/s and restarts/s: exclusive locks {:.0} / {:.0}; reader/writer {:.0} / {:.0}; + exclusive mode {:.0} / {:.0}; + waiting {:.0} / {:.0}. Directions that hold: {n} of {PICOTM_DIRECTIONS}.",
            x.0, x.1, rw.0, rw.1, excl.0, excl.1, wait.0, wait.1
        ),
        verdict,
    }
}

/// ours-oversubscription: the least throughput kept at the most threads,
/// relative to `OVERSUB_BASE` threads.
const OVERSUB_MIN: f64 = 0.7;
const OVERSUB_BASE: usize = 2;

pub(super) fn rule_oversubscription() -> String {
    format!(
        "throughput at the most threads over throughput at {OVERSUB_BASE}: reproduced if at least {OVERSUB_MIN} for every table kind; direction if for the best kind; else not reproduced"
    )
}

pub(super) fn read_oversubscription(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let mut tables: Vec<String> = runs.iter().map(|r| r.table.clone()).collect();
    tables.dedup();
    let rel = |t: &str, n: usize| paired(find(runs, t, false, n), find(runs, t, false, OVERSUB_BASE));
    let at_most: Vec<(String, f64)> = tables.iter().map(|t| (t.clone(), rel(t, most))).collect();
    let verdict = if at_most.iter().all(|x| x.1 >= OVERSUB_MIN) {
        Verdict::Reproduced
    } else if at_most.iter().any(|x| x.1 >= OVERSUB_MIN) {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "TM1: throughput relative to 2 threads, every table kind (2 cores)".into(),
            x_desc: "worker threads",
            y_desc: "throughput / throughput at 2 threads",
            series: series_by(runs, |r| r.table.clone(), |r| rel(&r.table, r.threads)),
            categories: Vec::new(),
        }],
        ours: format!(
            "At {most} threads, relative to 2: {}.",
            at_most
                .iter()
                .map(|(t, x)| format!("{t} {x:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        verdict,
    }
}

/// ours-side-by-side: the thread count compared, and the least
/// latchfree / latched ratio that counts as a win.
pub(super) const SIDE_THREADS: usize = 8;
const SIDE_MIN: f64 = 1.0;

pub(super) fn rule_side_by_side() -> String {
    format!(
        "latchfree / latched at {SIDE_THREADS} threads: reproduced if at least {SIDE_MIN:.1} on every workload; direction if on at least half; else not reproduced"
    )
}

pub(super) fn read_side_by_side(parts: &Measured) -> Reading {
    let rs: Vec<(String, f64)> = parts
        .iter()
        .map(|(l, runs)| (l.clone(), lf_over_l(runs, SIDE_THREADS)))
        .collect();
    let wins = rs.iter().filter(|x| x.1 >= SIDE_MIN).count();
    let verdict = if wins == rs.len() {
        Verdict::Reproduced
    } else if 2 * wins >= rs.len() {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    // One line per table kind: its throughput relative to latched, by
    // workload (x: the workload's number).
    let mut series: Vec<Series> = Vec::new();
    for (i, (_, runs)) in parts.iter().enumerate() {
        for r in runs.iter().filter(|r| r.threads == 8) {
            let p = ((i + 1) as f64, paired(Some(r), find(runs, "latched", false, 8)));
            add_point(&mut series, &r.table, p);
        }
    }
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "Every table kind at 8 threads, relative to latched".into(),
            x_desc: "workload",
            y_desc: "throughput / latched",
            series,
            categories: parts.iter().map(|p| p.0.clone()).collect(),
        }],
        ours: format!(
            "latchfree / latched at 8 threads: {}.",
            rs.iter()
                .map(|(l, x)| format!("{l} {x:.2}x"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        verdict,
    }
}
