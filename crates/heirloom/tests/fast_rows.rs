//! Row S locks on the fast path (`Builder::fast_rows`, `table/fast/rows.rs`):
//! what every other grant keeps must hold for a hold that is only an entry
//! in its agent's record — a writer waits for it and is woken when it
//! goes, a no-wait refusal names it, a deadlock through it is found, its
//! own conversion passes it, the monitor lists it, more rows than a record
//! holds still lock, and nothing is left behind. Every table kind (those
//! without a fast path check the same answers), inheritance off.

use crate::common;

use common::{managers, within_a_minute};

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use heirloom::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, Wait};

const T: TableId = TableId::new(0, 1);

/// Fast operations so far (a fast row hold counts when taken and when
/// given back).
fn fast_ops(lm: &LockManager) -> u64 {
    lm.stats().fast_ops
}

#[test]
fn a_row_reader_is_held_fast_and_a_writer_waits_for_it() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let kind = lm.table_kind();
        let row = LockId::row(T, 7);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let before = fast_ops(&lm);
        let mut ta = a.begin();
        ta.lock(row, Mode::S).unwrap();
        // IS, IS and the row's S: all fast where the table has the path.
        let fast = fast_ops(&lm) - before;
        assert_eq!(fast, if kind.has_fast_path() { 3 } else { 0 }, "{kind}");
        // The monitor lists the fast hold.
        let snap = lm.snapshot();
        let info = snap
            .lock(row)
            .unwrap_or_else(|| panic!("{kind}: the row is listed: {snap}"));
        assert!(
            info.holders.iter().any(|h| h.txn == ta.id() && h.mode == Mode::S),
            "{kind}: {snap}"
        );
        // A no-wait writer is refused, naming the reader.
        let mut tb = b.begin();
        match tb.lock_with(row, Mode::X, Wait::NoWait) {
            Err(LockError::WouldBlock { holder, .. }) => assert_eq!(holder, ta.id(), "{kind}"),
            other => panic!("{kind}: {other:?}"),
        }
        tb.abort();
        // A waiting writer is woken when the reader commits.
        let lm2 = lm.clone();
        let writer = thread::spawn(move || {
            let mut b = lm2.agent();
            let mut tb = b.begin();
            tb.lock(row, Mode::X).unwrap();
            tb.commit().unwrap();
        });
        common::until_waiting(&lm, row, &format!("{kind}: the writer waits for the fast reader"));
        ta.commit().unwrap();
        within_a_minute("the writer", move || writer.join().unwrap());
        drop(a);
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
    }
}

/// After a writer, the row's stripe is shut: readers go to the queue or
/// list (and are granted there), until their agent has been turned away
/// often enough to open it again; nothing is left behind either way.
#[test]
fn a_stripe_shuts_for_a_writer_and_opens_again() {
    for lm in managers(|b| b) {
        let kind = lm.table_kind();
        let row = LockId::row(T, 11);
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(row, Mode::X).unwrap();
        t.commit().unwrap();
        let before = fast_ops(&lm);
        let mut t = a.begin();
        t.lock(row, Mode::S).unwrap();
        t.commit().unwrap();
        // The intention locks only (taken and released): the row's S
        // went through the table.
        let fast = fast_ops(&lm) - before;
        assert_eq!(fast, if kind.has_fast_path() { 4 } else { 0 }, "{kind}");
        // Readers turned away often enough open the stripe again: after
        // 256 (`REOPEN_ROWS`), each request tried on the fast path once
        // (the table does not try again what the transaction was refused).
        let mut reopened = None;
        for k in 1..2_000 {
            let before = fast_ops(&lm);
            let mut t = a.begin();
            t.lock(row, Mode::S).unwrap();
            t.commit().unwrap();
            if fast_ops(&lm) - before == 6 {
                reopened = Some(k);
                break;
            }
        }
        let want = kind.has_fast_path().then_some(256);
        assert_eq!(reopened, want, "{kind}: readers turned away before the stripe opened");
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
    }
}

/// Two readers that each want to write the other's row: a deadlock through
/// two fast holds, found by the search, wait-die and wound-wait alike.
#[test]
fn a_deadlock_through_fast_row_holds_is_resolved() {
    for policy in [
        ConflictPolicy::Detect,
        ConflictPolicy::WaitDie,
        ConflictPolicy::WoundWait,
    ] {
        for lm in managers(|b| b.conflicts(policy).deadlock_timeout(Duration::from_millis(1))) {
            let kind = lm.table_kind();
            let (r1, r2) = (LockId::row(T, 100), LockId::row(T, 200));
            let outcome = within_a_minute(&format!("{kind} {policy:?}"), move || {
                let (tx, rx) = mpsc::channel();
                let lm2 = lm.clone();
                let other = thread::spawn(move || {
                    let mut b = lm2.agent();
                    loop {
                        let mut t = b.begin();
                        let r = t.lock(r2, Mode::S).and_then(|()| {
                            let _ = tx.send(());
                            t.lock(r1, Mode::X)
                        });
                        match r {
                            Ok(()) => {
                                t.commit().unwrap();
                                return;
                            }
                            Err(_) => t.abort(),
                        }
                    }
                });
                let mut a = lm.agent();
                let mut first = true;
                loop {
                    let mut t = a.begin();
                    let r = t.lock(r1, Mode::S).and_then(|()| {
                        if first {
                            // Both readers hold before either writes.
                            rx.recv().unwrap();
                            first = false;
                        }
                        t.lock(r2, Mode::X)
                    });
                    match r {
                        Ok(()) => {
                            t.commit().unwrap();
                            break;
                        }
                        Err(_) => t.abort(),
                    }
                }
                other.join().unwrap();
                drop(a);
                lm.snapshot().locks.is_empty()
            });
            assert!(outcome, "{kind} {policy:?}: a lock left behind");
        }
    }
}

/// A fast S converted to X by its only holder is granted at once; with
/// another fast reader it waits for that reader alone.
#[test]
fn a_fast_reader_converts_past_its_own_hold() {
    for lm in managers(|b| b) {
        let kind = lm.table_kind();
        let row = LockId::row(T, 3);
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(row, Mode::S).unwrap();
        t.lock_with(row, Mode::X, Wait::NoWait).unwrap();
        assert_eq!(t.held_mode(row), Some(Mode::X), "{kind}");
        t.commit().unwrap();
        // Again on another row, beside another reader.
        let row = LockId::row(T, 4);
        let mut b = lm.agent();
        let mut tb = b.begin();
        tb.lock(row, Mode::S).unwrap();
        let lm2 = lm.clone();
        let upgrader = thread::spawn(move || {
            let mut a = lm2.agent();
            let mut t = a.begin();
            t.lock(row, Mode::S).unwrap();
            t.lock(row, Mode::X).unwrap();
            t.commit().unwrap();
        });
        common::until_waiting(&lm, row, &format!("{kind}: the conversion waits for the other reader"));
        tb.commit().unwrap();
        within_a_minute("the conversion", move || upgrader.join().unwrap());
        drop((a, b));
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
    }
}

/// A transaction that ends with several fast row holds gives them up
/// together (their entries cleared at once, one fence for all) and still
/// owes every writer that saw one its wake-up: writers wait on one of its
/// rows and on one it converted to X, and are woken by its commit, or by
/// its abort.
#[test]
fn writers_are_woken_when_a_reader_of_many_rows_ends() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let kind = lm.table_kind();
        for (k, end) in [(0, "commit"), (1, "abort")] {
            // Fresh rows each time: the first round's writers shut stripes.
            let rows: Vec<LockId> = (0..8).map(|i| LockId::row(T, 1000 * (k + 1) + i)).collect();
            let mut a = lm.agent();
            let mut ta = a.begin();
            for &r in &rows {
                ta.lock(r, Mode::S).unwrap();
            }
            ta.lock(rows[7], Mode::X).unwrap();
            let writer = |row: LockId| {
                let lm = lm.clone();
                thread::spawn(move || {
                    let mut b = lm.agent();
                    let mut tb = b.begin();
                    tb.lock(row, Mode::X).unwrap();
                    tb.commit().unwrap();
                })
            };
            let w1 = writer(rows[2]);
            common::until_waiting(&lm, rows[2], &format!("{kind}: a writer waits for a reader"));
            let w2 = writer(rows[7]);
            common::until_waiting(&lm, rows[7], &format!("{kind}: a writer waits for a converted reader"));
            if end == "commit" {
                ta.commit().unwrap();
            } else {
                ta.abort();
            }
            within_a_minute("the writers", move || {
                w1.join().unwrap();
                w2.join().unwrap();
            });
            drop(a);
            assert!(lm.snapshot().locks.is_empty(), "{kind}, {end}: {}", lm.snapshot());
        }
    }
}

/// More rows than an agent's record holds: the rest go to the table, and
/// every one is released, by commit or by unlock.
#[test]
fn more_rows_than_a_record_holds() {
    for lm in managers(|b| b) {
        let kind = lm.table_kind();
        let mut a = lm.agent();
        let mut t = a.begin();
        for i in 0..100 {
            t.lock(LockId::row(T, i), Mode::S).unwrap();
        }
        let snap = lm.snapshot();
        for i in 0..100 {
            let info = snap.lock(LockId::row(T, i));
            assert!(
                info.is_some_and(|l| l.holders.iter().any(|h| h.txn == t.id() && h.mode == Mode::S)),
                "{kind}: row {i}: {snap}"
            );
        }
        for i in 0..50 {
            t.unlock(LockId::row(T, i)).unwrap();
        }
        // The freed entries take rows again.
        for i in 100..140 {
            t.lock(LockId::row(T, i), Mode::S).unwrap();
        }
        t.commit().unwrap();
        drop(a);
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
    }
}

/// With `fast_rows(false)` row locks go through the table as before.
#[test]
fn fast_rows_off_sends_rows_to_the_table() {
    for lm in managers(|b| b.fast_rows(false)) {
        let kind = lm.table_kind();
        let mut a = lm.agent();
        let before = fast_ops(&lm);
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::S).unwrap();
        t.commit().unwrap();
        let fast = fast_ops(&lm) - before;
        assert_eq!(fast, if kind.has_fast_path() { 4 } else { 0 }, "{kind}");
    }
}
