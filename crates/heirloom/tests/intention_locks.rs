//! `Builder::intention_locks(false)`: every lock stands alone. A request
//! takes the lock named and nothing above it, an ancestor neither covers
//! nor excludes its descendants, `unlock` does not look for descendants,
//! and nothing escalates. Row locks still conflict as ever. Every table
//! kind, with and without inheritance.

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};

use heirloom::{ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

fn flat(k: TableKind, sli: Inheritance) -> heirloom::Builder {
    LockManager::builder().table(k).inheritance(sli).intention_locks(false)
}

fn every_kind() -> impl Iterator<Item = (TableKind, Inheritance)> {
    TableKind::ALL
        .into_iter()
        .flat_map(|k| [Inheritance::Off, Inheritance::On].map(|s| (k, s)))
}

#[test]
fn a_row_lock_takes_nothing_above_it() {
    for (k, sli) in every_kind() {
        let lm = flat(k, sli).conflicts(ConflictPolicy::NoWait).build();
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(LockId::row(T, 1), Mode::S).unwrap();
        ta.lock(LockId::paged_row(T, 3, 4), Mode::X).unwrap();
        assert_eq!(ta.lock_count(), 2, "{k:?} {sli:?}");
        assert_eq!(ta.held_mode(LockId::table(T)), None);
        assert_eq!(ta.held_mode(LockId::database(0)), None);
        let snap = lm.snapshot();
        assert_eq!(snap.locks.len(), 2, "{k:?} {sli:?}: {snap}");
        assert!(snap.lock(LockId::row(T, 1)).is_some() && snap.lock(LockId::paged_row(T, 3, 4)).is_some());
        // The table in X stands alone beside the rows; a row X does not.
        let mut tb = b.begin();
        tb.lock(LockId::table(T), Mode::X).unwrap();
        assert!(matches!(
            tb.lock(LockId::row(T, 1), Mode::X),
            Err(LockError::WouldBlock { .. })
        ));
        tb.abort();
        // Nor does a table lock of its own cover a row.
        ta.lock(LockId::table(T), Mode::X).unwrap();
        ta.lock(LockId::row(T, 2), Mode::S).unwrap();
        assert_eq!(ta.held_mode(LockId::row(T, 2)), Some(Mode::S), "{k:?}");
        // And the table unlocks with its rows still held.
        ta.unlock(LockId::table(T)).unwrap();
        ta.commit().unwrap();
        drop((a, b));
        assert!(lm.snapshot().is_empty(), "{k:?} {sli:?}: {}", lm.snapshot());
        let s = lm.stats();
        assert_eq!(s.lock_requests, 6, "{k:?} {sli:?}: one request a lock");
    }
}

#[test]
fn lock_all_takes_the_locks_named_and_joins_repeats() {
    for (k, sli) in every_kind() {
        let lm = flat(k, sli).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        let reqs = [
            (LockId::row(T, 1), Mode::S),
            (LockId::row(T, 2), Mode::X),
            (LockId::row(T, 1), Mode::U),
        ];
        t.lock_all(&reqs).unwrap();
        assert_eq!(t.lock_count(), 2, "{k:?} {sli:?}");
        assert_eq!(t.held_mode(LockId::row(T, 1)), Some(Mode::U));
        assert_eq!(t.held_mode(LockId::table(T)), None);
        t.commit().unwrap();
        drop(a);
        assert!(lm.snapshot().is_empty(), "{k:?}");
    }
}

#[test]
fn nothing_escalates_and_a_full_manager_refuses() {
    for (k, sli) in every_kind() {
        let lm = flat(k, sli).escalate_after(4).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        for r in 0..10 {
            t.lock(LockId::row(T, r), Mode::X).unwrap();
        }
        assert_eq!(t.lock_count(), 10, "{k:?} {sli:?}: escalate_after is ignored");
        t.commit().unwrap();
        assert_eq!(lm.stats().escalations, 0);

        let lm = flat(k, sli).max_locks(64).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        let e = (0..1000).try_for_each(|r| t.lock(LockId::row(T, r), Mode::X));
        assert!(
            matches!(e, Err(LockError::OutOfLockMemory { .. })),
            "{k:?} {sli:?}: {e:?}"
        );
        t.abort();
        let s = lm.stats();
        assert_eq!((s.escalations, s.out_of_lock_memory), (0, 1), "{k:?} {sli:?}");
        drop(a);
        assert!(lm.snapshot().is_empty(), "{k:?}");
    }
}

/// Row X locks without intention locks still exclude each other: threads
/// move units between rows under X locks (no-wait, retried). Each row
/// has an occupancy count that a holder raises on entering and lowers on
/// leaving, and it must find it zero: two holders of one row's X lock
/// never overlap. Besides, a non-atomic read-modify-write of each row's
/// balance (signed: a row may go below zero, the arithmetic never wraps)
/// loses a unit if they did, so the total is conserved; every lock goes
/// back.
#[test]
fn row_locks_still_exclude_each_other() {
    const ROWS: usize = 8;
    const THREADS: usize = 4;
    const MOVES: usize = 2_000;
    for k in TableKind::ALL {
        let lm = flat(k, Inheritance::Off).conflicts(ConflictPolicy::NoWait).build();
        let rows: Arc<Vec<(AtomicI64, AtomicU32)>> =
            Arc::new((0..ROWS).map(|_| (AtomicI64::new(100), AtomicU32::new(0))).collect());
        let start = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let (lm, rows, start) = (lm.clone(), rows.clone(), start.clone());
                std::thread::spawn(move || {
                    let mut a = lm.agent();
                    start.wait();
                    let mut done = 0;
                    let mut n = i as u64;
                    while done < MOVES {
                        n = n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let (from, to) = ((n >> 33) as usize % ROWS, (n >> 45) as usize % ROWS);
                        if from == to {
                            continue;
                        }
                        let mut t = a.begin();
                        let ok = t.lock(LockId::row(T, from as u64), Mode::X).is_ok()
                            && t.lock(LockId::row(T, to as u64), Mode::X).is_ok();
                        if !ok {
                            t.abort();
                            continue;
                        }
                        for r in [from, to] {
                            let before = rows[r].1.fetch_add(1, Ordering::SeqCst);
                            assert_eq!(before, 0, "{k:?}: row {r} has another X holder");
                        }
                        // Load, yield, store: two overlapping holders lose a
                        // unit.
                        let f = rows[from].0.load(Ordering::Relaxed);
                        std::thread::yield_now();
                        rows[from].0.store(f - 1, Ordering::Relaxed);
                        let g = rows[to].0.load(Ordering::Relaxed);
                        rows[to].0.store(g + 1, Ordering::Relaxed);
                        for r in [from, to] {
                            rows[r].1.fetch_sub(1, Ordering::SeqCst);
                        }
                        t.commit().unwrap();
                        done += 1;
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let total: i64 = rows.iter().map(|r| r.0.load(Ordering::Relaxed)).sum();
        assert_eq!(total, 100 * ROWS as i64, "{k:?}");
        assert!(lm.snapshot().is_empty(), "{k:?}: {}", lm.snapshot());
    }
}
