//! The monitor's snapshot beside a running workload: every lock's listed
//! holders are compatible (pg_locks never shows two incompatible holders
//! of one lock), on every table kind, with table S and X locks among the
//! row locks, conversions (row S to X, table IS to S and IX to X) and
//! transactions that `Agent::run` restarts into exclusive mode.
//!
//! Regression: the latch-free tables read their lists without a latch, one
//! request after another, and every table with the fast path read the
//! fast holds after the requests, so a snapshot could list a holder that
//! had just gone beside one granted after it (`db0.t1: T5.5673 IS and
//! T1.5943 X` on `latchfree-swap`). The forced schedules are in
//! `src/monitor/tests/consistent.rs`; this test looks for the same in the
//! wild.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::Rng;
use heirloom::{ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, Snapshot, TableId, TableKind};

const TABLES: u32 = 2;
const ROWS: u64 = 6;
const THREADS: usize = 6;
const RUN: Duration = Duration::from_millis(150);

/// The first pair of incompatible holders of one lock, if any.
fn incompatible(s: &Snapshot) -> Option<String> {
    for l in &s.locks {
        for (i, a) in l.holders.iter().enumerate() {
            for b in &l.holders[i + 1..] {
                if a.txn != b.txn && !a.mode.compatible(b.mode) {
                    return Some(format!(
                        "{}: {} {} and {} {} (inherited {}, {})",
                        l.lock,
                        a.txn,
                        a.mode.name(),
                        b.txn,
                        b.mode.name(),
                        a.inherited,
                        b.inherited
                    ));
                }
            }
        }
    }
    None
}

/// One transaction: a table lock now and then (S, X, or IS then S, or
/// IX then X), else row locks, some converted from S to X.
fn transaction(t: &mut heirloom::Transaction<'_>, rng: &mut Rng) -> Result<(), LockError> {
    let table = TableId::new(0, 1 + rng.below(TABLES as u64) as u32);
    match rng.below(16) {
        0 => t.lock(LockId::table(table), Mode::X)?,
        1 => t.lock(LockId::table(table), Mode::S)?,
        2 => {
            t.lock(LockId::table(table), Mode::IS)?;
            thread::yield_now();
            t.lock(LockId::table(table), Mode::S)?;
        }
        3 => {
            t.lock(LockId::table(table), Mode::IX)?;
            thread::yield_now();
            t.lock(LockId::table(table), Mode::X)?;
        }
        _ => {
            for _ in 0..1 + rng.below(3) {
                let row = LockId::row(table, rng.below(ROWS));
                if rng.below(4) == 0 {
                    t.lock(row, Mode::S)?;
                    thread::yield_now();
                    t.lock(row, Mode::X)?;
                } else {
                    t.lock(row, if rng.below(2) == 0 { Mode::S } else { Mode::X })?;
                }
            }
        }
    }
    thread::yield_now();
    Ok(())
}

/// Runs the workload beside a thread that takes snapshots all the time;
/// returns how many snapshots were checked.
fn run(kind: TableKind, policy: ConflictPolicy, sli: Inheritance) -> u64 {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(policy)
        .inheritance(sli)
        .max_restarts(2)
        .build();
    let what = format!("{kind:?} {policy:?} {sli:?}");
    let stop = Arc::new(AtomicBool::new(false));
    let exclusive = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..THREADS)
        .map(|i| {
            let (lm, stop, exclusive) = (lm.clone(), stop.clone(), exclusive.clone());
            thread::spawn(move || {
                let mut a = lm.agent();
                let mut rng = Rng::new(0x5eed + i as u64);
                while !stop.load(Ordering::Relaxed) {
                    a.run(|t| transaction(t, &mut rng)).unwrap();
                }
                exclusive.fetch_add(a.stats().exclusive_runs, Ordering::Relaxed);
            })
        })
        .collect();
    let start = Instant::now();
    let mut taken = 0;
    while start.elapsed() < RUN {
        let s = lm.snapshot();
        if let Some(pair) = incompatible(&s) {
            stop.store(true, Ordering::Relaxed);
            panic!("{what}: the snapshot lists incompatible holders, {pair}\n{s}");
        }
        taken += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    assert!(lm.snapshot().is_empty(), "{what}: locks left: {}", lm.snapshot());
    assert!(lm.stats().committed > 0, "{what}: nothing committed");
    taken
}

#[test]
fn snapshots_never_list_incompatible_holders() {
    let mut taken = 0;
    for kind in TableKind::ALL {
        for policy in [ConflictPolicy::Detect, ConflictPolicy::WaitDie] {
            for sli in [Inheritance::Off, Inheritance::On] {
                taken += run(kind, policy, sli);
            }
        }
    }
    assert!(taken > 0);
}
