//! Concurrent runs of every workload with `--verify` semantics: several
//! threads (more than cores), both lock tables, SLI off and on, conflict
//! policies that wait and that restart; after every run the workload's
//! consistency rules must hold, every transaction must have ended, and
//! no lock may be left.

use heirloom::{ConflictPolicy, TableKind};
use heirloom_bench::{Spec, sweep};
use std::time::Duration;

fn spec(workload: &str, scale: u64) -> Spec {
    let s = Spec {
        workload: workload.into(),
        threads: vec![1, 4],
        tables: TableKind::ALL.to_vec(),
        sli: vec![false, true],
        policies: vec![
            ConflictPolicy::Detect,
            ConflictPolicy::WoundWait,
            ConflictPolicy::NoWait,
        ],
        scale: Some(scale),
        duration: Duration::from_millis(60),
        warmup: Duration::from_millis(10),
        verify: true,
        ..Spec::default()
    };
    if workload == "tpcb" {
        s.opt("accounts", "200")
    } else {
        s
    }
}

fn check(spec: Spec) {
    let runs = sweep(&spec, &mut |_, _| {}).unwrap_or_else(|e| panic!("{}: {e}", spec.workload));
    assert_eq!(runs.len(), 2 * spec.tables.len() * 3 * 2);
    for r in &runs {
        assert!(r.committed + r.failed > 0, "{} made no progress: {r:?}", r.workload);
        assert!(r.verified.is_some(), "not verified");
        assert!(r.per_txn.table_ops > 0.0);
    }
}

#[test]
fn tm1_ndbb_runs_consistently() {
    check(Spec {
        mix: Some("ndbb".into()),
        ..spec("tm1", 200)
    });
}

#[test]
fn tm1_forward_mix_runs_consistently() {
    // Inserts and deletes of call forwardings on few subscribers: conflicts.
    check(Spec {
        mix: Some("forward".into()),
        ..spec("tm1", 20)
    });
}

#[test]
fn tpcb_runs_consistently() {
    // Two branches: every transaction updates one of two hot rows.
    check(spec("tpcb", 2));
}

#[test]
fn ycsb_skewed_runs_consistently() {
    check(spec("ycsb", 2_000).opt("theta", "0.9").opt("read-share", "0.5"));
}

#[test]
fn breakdown_shares_add_up() {
    let s = Spec {
        breakdown: true,
        threads: vec![4],
        tables: vec![TableKind::Latched],
        sli: vec![true],
        policies: vec![ConflictPolicy::Detect],
        ..spec("tpcb", 1)
    };
    let runs = sweep(&s, &mut |_, _| {}).unwrap();
    let b = runs[0].breakdown.expect("breakdown requested");
    let sum = b.lock_manager + b.latch_contention + b.lock_wait + b.other;
    assert!((sum - 1.0).abs() < 0.02, "{b:?}");
    assert!(b.lock_wait > 0.0, "one branch, four threads: somebody waits: {b:?}");
}

#[test]
fn repeats_report_the_median_run() {
    let s = Spec {
        repeat: 3,
        threads: vec![2],
        tables: vec![TableKind::Latched],
        sli: vec![false, true],
        policies: vec![ConflictPolicy::Detect],
        ..spec("tm1", 100)
    };
    let runs = sweep(&s, &mut |_, _| {}).unwrap();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.tps_runs.len(), 3);
        let mut sorted = r.tps_runs.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(r.tps, sorted[1], "the record is the median run");
        assert!(r.verified.is_some());
    }
}
