//! The controls an engine needs beyond `lock` and `commit`: update mode,
//! per-call waiting and lock timeouts, early release, transaction locks,
//! lock escalation and the lock-memory cap. Every table kind, inheritance
//! off and on.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use heirloom::{Builder, ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind, Wait};

const T: TableId = TableId::new(0, 1);
const V: TableId = TableId::new(0, 2);

/// Every table kind, with inheritance off and always on, configured by `f`.
fn managers(f: impl Fn(Builder) -> Builder) -> Vec<LockManager> {
    let mut out = Vec::new();
    for kind in TableKind::ALL {
        for sli in [Inheritance::Off, Inheritance::Always] {
            out.push(f(LockManager::builder().table(kind).inheritance(sli)).build());
        }
    }
    out
}

fn name(lm: &LockManager) -> String {
    format!("{} sli={:?}", lm.table_kind(), lm.inheritance())
}

#[test]
fn update_mode_admits_readers_and_one_updater() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::NoWait)) {
        let row = LockId::row(T, 1);
        let (mut a, mut b, mut c) = (lm.agent(), lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(row, Mode::U).unwrap();
        assert_eq!(ta.held_mode(LockId::table(T)), Some(Mode::IX), "{}", name(&lm));
        let mut tb = b.begin();
        tb.lock(row, Mode::S).unwrap();
        let mut tc = c.begin();
        let e = tc.lock(row, Mode::U).unwrap_err();
        assert!(matches!(e, LockError::WouldBlock { .. }), "{}: {e}", name(&lm));
        let snap = lm.snapshot();
        assert_eq!(snap.lock(row).unwrap().group, Mode::U, "{}: {snap}", name(&lm));
        // U then S: still U; U then X is a conversion, refused while B reads.
        ta.lock(row, Mode::S).unwrap();
        assert_eq!(ta.held_mode(row), Some(Mode::U));
        assert!(matches!(ta.lock(row, Mode::X), Err(LockError::WouldBlock { .. })));
        tb.commit().unwrap();
        tc.abort();
        ta.abort();
        let mut ta = a.begin();
        ta.lock(row, Mode::U).unwrap();
        ta.lock(row, Mode::X).unwrap();
        assert_eq!(ta.held_mode(row), Some(Mode::X));
        ta.commit().unwrap();
    }
}

/// Two transactions that read a row and then write it: with S first they
/// can deadlock on the conversion; with U first the second waits at the
/// read, and the conversion never waits for it.
#[test]
fn update_then_write_never_deadlocks() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let row = LockId::row(T, 7);
        thread::scope(|s| {
            for _ in 0..2 {
                let lm = &lm;
                s.spawn(move || {
                    let mut a = lm.agent();
                    for _ in 0..200 {
                        let mut t = a.begin();
                        t.lock(row, Mode::U).unwrap();
                        thread::yield_now();
                        if let Err(e) = t.lock(row, Mode::X) {
                            panic!("{}: {e}", name(lm));
                        }
                        t.commit().unwrap();
                    }
                });
            }
        });
        let st = lm.stats();
        assert_eq!((st.committed, st.deadlocks, st.aborted), (400, 0, 0), "{}", name(&lm));
    }
}

/// A U holder's conversion to X waits for the readers already in, and
/// then gets it.
#[test]
fn update_converts_after_the_readers_leave() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let row = LockId::row(T, 3);
        let mut r = lm.agent();
        let mut reader = r.begin();
        reader.lock(row, Mode::S).unwrap();
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            s.spawn(|| {
                let mut a = lm.agent();
                let mut t = a.begin();
                t.lock(row, Mode::U).unwrap();
                tx.send(()).unwrap();
                t.lock(row, Mode::X).unwrap();
                tx.send(()).unwrap();
                t.commit().unwrap();
            });
            rx.recv().unwrap();
            common::until_waiting(&lm, row, &format!("{}: the conversion never waited", name(&lm)));
            assert!(rx.try_recv().is_err(), "{}: X granted beside S", name(&lm));
            reader.commit().unwrap();
            rx.recv_timeout(Duration::from_secs(10))
                .expect("the conversion is granted");
        });
    }
}

#[test]
fn per_call_waiting() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let row = LockId::row(T, 1);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(row, Mode::X).unwrap();

        // Skip: no wait, no doom, counted as skipped.
        let mut tb = b.begin();
        assert!(!tb.try_lock(row, Mode::S).unwrap(), "{}", name(&lm));
        let e = tb.lock_with(row, Mode::S, Wait::Skip).unwrap_err();
        assert!(matches!(e, LockError::Busy { .. }), "{e}");
        assert!(tb.try_lock(LockId::row(T, 2), Mode::X).unwrap());
        assert_eq!(tb.held_mode(row), None);
        tb.commit().expect("a skipped request does not doom");
        let st = b.stats();
        assert_eq!((st.skipped, st.would_block, st.aborted), (2, 0, 0), "{}", name(&lm));

        // A timeout for one call, under Detect.
        let mut tb = b.begin();
        let t0 = Instant::now();
        let e = tb
            .lock_with(row, Mode::S, Wait::Timeout(Duration::from_millis(20)))
            .unwrap_err();
        assert!(matches!(e, LockError::Timeout { .. }), "{e}");
        assert!(t0.elapsed() >= Duration::from_millis(20));
        assert!(matches!(
            tb.lock(LockId::row(T, 5), Mode::S),
            Err(LockError::Doomed { .. })
        ));
        tb.abort();

        // No-wait for one call: fails at once and dooms.
        let mut tb = b.begin();
        let e = tb.lock_with(row, Mode::S, Wait::NoWait).unwrap_err();
        assert!(matches!(e, LockError::WouldBlock { .. }), "{e}");
        assert!(tb.commit().is_err());

        // The transaction's lock timeout bounds policy waits.
        let mut tb = b.begin();
        tb.set_lock_timeout(Some(Duration::from_millis(10)));
        assert_eq!(tb.lock_timeout(), Some(Duration::from_millis(10)));
        let e = tb.lock(row, Mode::S).unwrap_err();
        assert!(matches!(e, LockError::Timeout { .. }), "{e}");
        tb.abort();
        ta.commit().unwrap();
        let st = lm.stats();
        assert_eq!((st.timeouts, st.would_block, st.skipped), (2, 1, 2), "{}", name(&lm));
    }
}

/// Under a no-wait manager, one call may still wait (with a timeout), and
/// gets the lock when the holder commits.
#[test]
fn a_call_may_wait_under_a_no_wait_manager() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::NoWait)) {
        let row = LockId::row(T, 1);
        let mut a = lm.agent();
        let mut ta = a.begin();
        ta.lock(row, Mode::X).unwrap();
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            s.spawn(|| {
                let mut b = lm.agent();
                let mut tb = b.begin();
                tx.send(()).unwrap();
                tb.lock_with(row, Mode::X, Wait::Timeout(Duration::from_secs(10)))
                    .unwrap();
                tb.commit().unwrap();
            });
            rx.recv().unwrap();
            common::until_waiting(&lm, row, &format!("{}: the timed call never waited", name(&lm)));
            ta.commit().unwrap();
        });
        assert_eq!(lm.stats().committed, 2, "{}", name(&lm));
    }
}

#[test]
fn unlock_releases_early_and_refuses_what_it_must() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::NoWait)) {
        let row = LockId::row(T, 1);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut t = a.begin();
        t.lock(row, Mode::X).unwrap();
        let e = t.unlock(LockId::table(T)).unwrap_err();
        assert_eq!(
            e,
            LockError::ChildrenHeld {
                txn: t.id(),
                lock: LockId::table(T),
                child: row
            }
        );
        assert!(matches!(t.unlock(LockId::row(T, 9)), Err(LockError::NotHeld { .. })));
        t.unlock(row).unwrap();
        assert_eq!(t.held_mode(row), None);
        // Another transaction gets the row while this one is still open.
        let mut other = b.begin();
        other.lock(row, Mode::X).expect("released early");
        other.commit().unwrap();
        t.unlock(LockId::table(T)).unwrap();
        t.unlock(LockId::database(0)).unwrap();
        assert_eq!(t.lock_count(), 0);
        // Locked again: a new request.
        t.lock(row, Mode::S).unwrap();
        assert_eq!(t.held_mode(row), Some(Mode::S));
        t.commit().unwrap();
        assert_eq!(a.stats().unlocks, 3, "{}", name(&lm));
        drop((a, b));
        assert!(lm.snapshot().is_empty(), "{}", name(&lm));
    }
}

/// Early release with the lock cache's index in use (more than 16 locks),
/// from the middle of the acquisition order.
#[test]
fn unlock_from_the_middle_of_many() {
    for lm in managers(|b| b) {
        let mut a = lm.agent();
        let mut t = a.begin();
        for k in 0..40 {
            t.lock(LockId::row(T, k), Mode::S).unwrap();
        }
        for k in (0..40).step_by(2) {
            t.unlock(LockId::row(T, k)).unwrap();
        }
        for k in 0..40 {
            let want = (k % 2 == 1).then_some(Mode::S);
            assert_eq!(t.held_mode(LockId::row(T, k)), want, "{} row {k}", name(&lm));
        }
        t.lock(LockId::row(T, 4), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::row(T, 4)), Some(Mode::X));
        assert_eq!(t.lock_count(), 2 + 20 + 1);
        t.commit().unwrap();
        drop(a);
        assert!(lm.snapshot().is_empty(), "{}", name(&lm));
    }
}

/// An inherited lock not used yet is not this transaction's to release; a
/// reclaimed one released early is not passed on.
#[test]
fn unlock_and_inheritance() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .inheritance(Inheritance::Always)
            .build();
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::S).unwrap();
        t.commit().unwrap();
        let mut t = a.begin();
        assert!(
            matches!(t.unlock(LockId::table(T)), Err(LockError::NotHeld { .. })),
            "{kind}"
        );
        t.lock(LockId::row(T, 2), Mode::S).unwrap(); // reclaims db and table
        t.unlock(LockId::row(T, 2)).unwrap();
        t.unlock(LockId::table(T)).unwrap();
        t.commit().unwrap();
        // The table lock was released, not passed on: another agent's X on
        // the table is granted at once, and nothing was invalidated.
        let lm2 = lm.clone();
        let mut b = lm2.agent();
        let mut tb = b.begin();
        tb.lock_with(LockId::table(T), Mode::X, Wait::NoWait).unwrap();
        tb.commit().unwrap();
        assert_eq!(lm.stats().inherited_invalidated, 0, "{kind}");
    }
}

#[test]
fn waiting_for_a_transaction_to_end() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let mut w = lm.agent();
        let mut writer = w.begin();
        writer.publish_id().unwrap();
        let id = writer.id();
        let snap = lm.snapshot();
        assert!(snap.lock(LockId::transaction(id)).is_some(), "{}: {snap}", name(&lm));
        let ended = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                let mut r = lm.agent();
                let mut t = r.begin();
                assert!(!t.try_wait_for_txn(id).unwrap());
                t.wait_for_txn(id, Wait::Policy).unwrap();
                assert!(ended.load(Ordering::SeqCst), "returned before the writer ended");
                assert_eq!(t.lock_count(), 0, "the wait holds nothing afterwards");
                t.commit().unwrap();
                assert_eq!(r.stats().txn_waits, 2);
            });
            common::until_waiting(
                &lm,
                LockId::transaction(id),
                &format!("{}: nobody waited for the writer", name(&lm)),
            );
            ended.store(true, Ordering::SeqCst);
            writer.commit().unwrap();
        });
        // Ended (and never published) transactions: at once.
        let mut t = w.begin();
        t.wait_for_txn(id, Wait::NoWait).unwrap();
        let me = t.id();
        assert!(matches!(
            t.wait_for_txn(me, Wait::Policy),
            Err(LockError::InvalidRequest { .. })
        ));
        t.commit().unwrap();
    }
}

/// Two transactions waiting for each other to end: a deadlock like any
/// other, found and broken.
#[test]
fn transaction_waits_take_part_in_deadlock_detection() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let (tx, rx) = mpsc::channel();
        let results: Vec<Result<(), LockError>> = thread::scope(|s| {
            let (id_tx, id_rx) = mpsc::channel();
            let (id_tx2, id_rx2) = mpsc::channel();
            let lm1 = &lm;
            let h1 = s.spawn(move || {
                let mut a = lm1.agent();
                let mut t = a.begin();
                t.publish_id().unwrap();
                id_tx.send(t.id()).unwrap();
                let other = id_rx2.recv().unwrap();
                let r = t.wait_for_txn(other, Wait::Policy);
                tx.send(()).unwrap();
                t.abort();
                r
            });
            let mut b = lm.agent();
            let mut t = b.begin();
            t.publish_id().unwrap();
            id_tx2.send(t.id()).unwrap();
            let other = id_rx.recv().unwrap();
            let r = t.wait_for_txn(other, Wait::Policy);
            t.abort();
            let _ = rx.recv();
            vec![r, h1.join().unwrap()]
        });
        let deadlocks = results
            .iter()
            .filter(|r| matches!(r, Err(LockError::Deadlock { .. })))
            .count();
        assert!(deadlocks >= 1, "{}: {results:?}", name(&lm));
        assert!(
            results
                .iter()
                .all(|r| r.is_ok() || matches!(r, Err(LockError::Deadlock { .. })))
        );
    }
}

#[test]
fn escalation_replaces_row_locks_with_a_table_lock() {
    for lm in managers(|b| b.escalate_after(100).conflicts(ConflictPolicy::NoWait)) {
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut t = a.begin();
        for k in 0..150 {
            t.lock(LockId::row(T, k), Mode::S).unwrap();
        }
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::S), "{}", name(&lm));
        assert_eq!(t.held_mode(LockId::row(T, 5)), None);
        assert_eq!(t.lock_count(), 2, "database IS and table S");
        // The table lock does what the row locks did, and more.
        let mut o = b.begin();
        assert!(matches!(
            o.lock(LockId::row(T, 500), Mode::X),
            Err(LockError::WouldBlock { .. })
        ));
        o.abort();
        let mut o = b.begin();
        o.lock(LockId::row(T, 5), Mode::S).unwrap();
        o.commit().unwrap();
        // A write under the escalated table: S + IX = SIX, the row X.
        t.lock(LockId::row(T, 3), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::SIX));
        t.commit().unwrap();
        let st = a.stats();
        assert_eq!((st.escalations, st.escalated_locks), (1, 100), "{}", name(&lm));

        // Writes escalate to X; pages and paged rows count alike.
        let mut t = a.begin();
        for k in 0..60 {
            t.lock(LockId::paged_row(V, k, 0), Mode::X).unwrap();
        }
        assert_eq!(t.held_mode(LockId::table(V)), Some(Mode::X), "{}", name(&lm));
        assert_eq!(t.lock_count(), 2);
        t.commit().unwrap();
        drop((a, b));
        assert!(lm.snapshot().is_empty(), "{}", name(&lm));
    }
}

/// An escalation waits like a conversion, and a deadlock it closes is
/// detected, not left to hang.
#[test]
fn escalation_deadlock_is_detected() {
    for lm in managers(|b| b.escalate_after(10).conflicts(ConflictPolicy::Detect)) {
        let mut b = lm.agent();
        let mut tb = b.begin();
        tb.lock(LockId::row(T, 100), Mode::X).unwrap(); // IX on T
        let (tx, rx) = mpsc::channel();
        let (ra, rb) = thread::scope(|s| {
            let h = s.spawn(|| {
                let mut a = lm.agent();
                let mut ta = a.begin();
                for k in 0..9 {
                    ta.lock(LockId::row(T, k), Mode::S).unwrap();
                }
                tx.send(()).unwrap();
                // The tenth escalates: table S waits for B's IX.
                let r = ta.lock(LockId::row(T, 9), Mode::S);
                ta.abort();
                r
            });
            rx.recv().unwrap();
            // A's escalation: table S waits for B's IX.
            common::until_waiting(
                &lm,
                LockId::table(T),
                &format!("{}: the escalation never waited", name(&lm)),
            );
            // B now waits for A's row 1: a cycle.
            let rb = tb.lock(LockId::row(T, 1), Mode::X);
            drop(tb);
            (h.join().unwrap(), rb)
        });
        let dead = [&ra, &rb]
            .iter()
            .filter(|r| matches!(r, Err(LockError::Deadlock { .. })))
            .count();
        assert_eq!(dead, 1, "{}: {ra:?} {rb:?}", name(&lm));
    }
}

/// A transaction that takes a million row locks under a cap of 10,000
/// lock requests escalates and stays under the cap.
#[test]
fn a_million_row_locks_stay_under_the_cap() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).max_locks(10_000).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        let mut most = 0;
        for k in 0..1_000_000u64 {
            t.lock(LockId::row(T, k), Mode::X).unwrap();
            if k % 997 == 0 {
                most = most.max(t.lock_count());
                let (used, cap) = lm.lock_memory().unwrap();
                assert!(used <= cap, "{kind}: {used} > {cap}");
            }
        }
        assert!(most <= 10_000, "{kind}: {most} locks held");
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::X));
        t.commit().unwrap();
        let st = lm.stats();
        assert!(st.escalations >= 1 && st.escalated_locks > 9_000, "{kind}: {st:?}");
        assert_eq!(st.out_of_lock_memory, 0);
    }
}

/// With nothing to escalate, a request past the cap fails with a typed
/// error instead of growing; the manager is usable afterwards.
#[test]
fn out_of_lock_memory_is_an_error() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).max_locks(64).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        let mut err = None;
        for k in 0..1000 {
            if let Err(e) = t.lock(LockId::table(TableId::new(0, k)), Mode::S) {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the cap is reached");
        assert!(matches!(e, LockError::OutOfLockMemory { limit: 64, .. }), "{kind}: {e}");
        assert!(!e.is_restartable());
        assert!(t.lock_count() <= 64);
        t.abort();
        assert_eq!(lm.stats().out_of_lock_memory, 1);
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::X).unwrap();
        t.commit().unwrap();
        drop(a);
        assert_eq!(
            lm.lock_memory(),
            Some((0, 64)),
            "{kind}: every agent gave its budget back"
        );
    }
}
