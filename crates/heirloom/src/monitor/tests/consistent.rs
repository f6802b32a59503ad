//! Regression: a snapshot listed two incompatible holders of one lock,
//! one of them already gone (`db0.t1: T5.5673 IS and T1.5943 X`, seen on
//! `latchfree-swap`). Two ways, each forced here with a hook:
//!
//! * The fast holds were read after the lock table's requests, so a
//!   table X lock read as granted, released right after, and an IS taken
//!   fast once the lock's word opened again both showed (every table with
//!   the fast path).
//! * A latch-free list was read one request at a time: an S read as
//!   granted, released, and the X behind it, granted by that release and
//!   read next, both showed (`LatchFree` and `LatchFreeSwap`).

use std::sync::mpsc;
use std::thread;

use super::super::Snapshot;
use crate::fault;
use crate::txn::tests::common::LIMIT;
use crate::{Inheritance, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

fn assert_compatible(s: &Snapshot, what: &str) {
    for l in &s.locks {
        for (i, a) in l.holders.iter().enumerate() {
            for b in &l.holders[i + 1..] {
                assert!(
                    a.txn == b.txn || a.mode.compatible(b.mode),
                    "{what}: {} lists {} {} beside {} {}\n{s}",
                    l.lock,
                    a.txn,
                    a.mode.name(),
                    b.txn,
                    b.mode.name()
                );
            }
        }
    }
}

/// Between the requests and the fast holds: the X holder commits, and
/// another agent takes IS fast on the same table.
fn fast_hold_after_the_requests(kind: TableKind) {
    let lm = LockManager::builder().table(kind).inheritance(Inheritance::Off).build();
    let table = LockId::table(T);
    let (x_ready, x_is_ready) = mpsc::channel::<()>();
    let (go_x, x_go) = mpsc::channel::<()>();
    let (x_done, x_is_done) = mpsc::channel::<()>();
    let (go_is, is_go) = mpsc::channel::<()>();
    let (is_held, is_is_held) = mpsc::channel::<bool>();
    let (go_end, end) = mpsc::channel::<()>();
    let lm_x = lm.clone();
    let x = thread::spawn(move || {
        let mut a = lm_x.agent();
        let mut t = a.begin();
        t.lock(table, Mode::X).unwrap();
        x_ready.send(()).unwrap();
        x_go.recv().unwrap();
        t.commit().unwrap();
        x_done.send(()).unwrap();
    });
    let lm_is = lm.clone();
    let is = thread::spawn(move || {
        let mut a = lm_is.agent();
        is_go.recv().unwrap();
        // The X sealed the lock's word; it opens again after a calm
        // stretch of intention requests (`fast::REOPEN_AFTER`).
        for _ in 0..2 * crate::table::fast::REOPEN_AFTER + 2 {
            let mut t = a.begin();
            t.lock(LockId::database(0), Mode::IS).unwrap();
            let before = lm_is.stats().fast_ops;
            t.lock(table, Mode::IS).unwrap();
            if lm_is.stats().fast_ops > before {
                is_held.send(true).unwrap();
                end.recv().unwrap();
                t.commit().unwrap();
                return;
            }
            t.commit().unwrap();
        }
        is_held.send(false).unwrap();
    });
    x_is_ready.recv_timeout(LIMIT).unwrap();
    let held = std::sync::Arc::new(std::sync::Mutex::new(None));
    let held_hook = held.clone();
    fault::on_snapshot_between(move || {
        go_x.send(()).unwrap();
        x_is_done.recv_timeout(LIMIT).unwrap();
        go_is.send(()).unwrap();
        *held_hook.lock().unwrap() = Some(is_is_held.recv_timeout(LIMIT).unwrap());
    });
    let s = lm.snapshot();
    assert_eq!(
        *held.lock().unwrap(),
        Some(true),
        "{kind:?}: the schedule was not forced (the IS was not taken fast)"
    );
    assert_compatible(&s, &format!("{kind:?}"));
    go_end.send(()).unwrap();
    x.join().unwrap();
    is.join().unwrap();
    assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
}

#[test]
fn a_fast_hold_taken_after_the_requests_were_read_is_not_listed_beside_a_released_x() {
    for kind in [
        TableKind::Latched,
        TableKind::LatchedSpares,
        TableKind::LatchFree,
        TableKind::LatchFreeSwap,
        TableKind::LatchedHtm,
    ] {
        fast_hold_after_the_requests(kind);
    }
}

/// After the walk read the S holder's request: it commits, and the X
/// waiting behind it is granted.
fn released_while_the_list_is_read(kind: TableKind) {
    let lm = LockManager::builder()
        .table(kind)
        .inheritance(Inheritance::Off)
        .intention_locks(false)
        .build();
    let row = LockId::row(T, 1);
    let (s_ready, s_is_ready) = mpsc::channel::<()>();
    let (go_s, s_go) = mpsc::channel::<()>();
    let (x_granted, x_is_granted) = mpsc::channel::<()>();
    let (go_end, end) = mpsc::channel::<()>();
    let lm_s = lm.clone();
    let s = thread::spawn(move || {
        let mut a = lm_s.agent();
        let mut t = a.begin();
        t.lock(row, Mode::S).unwrap();
        s_ready.send(()).unwrap();
        s_go.recv().unwrap();
        t.commit().unwrap();
    });
    s_is_ready.recv_timeout(LIMIT).unwrap();
    let lm_x = lm.clone();
    let x = thread::spawn(move || {
        let mut a = lm_x.agent();
        let mut t = a.begin();
        t.lock(row, Mode::X).unwrap();
        x_granted.send(()).unwrap();
        end.recv().unwrap();
        t.commit().unwrap();
    });
    crate::txn::tests::common::until_waiting(&lm, row, "the X request never waited");
    fault::on_snapshot_visit(move || {
        go_s.send(()).unwrap();
        x_is_granted.recv_timeout(LIMIT).unwrap();
    });
    let snap = lm.snapshot();
    assert_compatible(&snap, &format!("{kind:?}"));
    go_end.send(()).unwrap();
    s.join().unwrap();
    x.join().unwrap();
    assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
}

#[test]
fn a_request_released_while_its_list_is_read_is_not_listed_beside_its_successor() {
    for kind in [TableKind::LatchFree, TableKind::LatchFreeSwap] {
        released_while_the_list_is_read(kind);
    }
}
