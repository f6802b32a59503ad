//! Regression: a wound-wait waiter whose new edge was announced between its
//! look at its edges and its park slept through the announcement (a
//! wake-up of a thread not yet parked is lost), so an older transaction sat
//! behind a younger one it never wounded: a deadlock that only a 20 ms
//! re-check (since removed) ended. The announcement now counts in
//! `sync::NOTICES`, which the waiter's park condition reads.
//!
//! The schedule, forced with `fault::on_before_park`:
//! 1. `oldest` holds S on table T1; `older` holds X on a row of T2; `young`
//!    holds IS on T1 (compatible with S).
//! 2. `older` asks for IX on T1: blocked by `oldest`'s S only, older than
//!    itself, so wound-wait wounds nobody, and it is about to park.
//! 3. Right then (the hook), `young` converts IS to S on T1 (granted at
//!    once: a new holder in front of `older`, announced by a wake-up) and
//!    asks for the row `older` holds, where it waits (younger waits).
//! 4. `older` parks. It must judge the new edge and wound `young`;
//!    otherwise `older` waits for `young` and `young` for `older` for ever.

use std::sync::mpsc;
use std::thread;

use super::common::{LIMIT, until_waiting};
use crate::fault;
use crate::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T1: TableId = TableId::new(0, 1);
const T2: TableId = TableId::new(0, 2);

fn schedule(kind: TableKind) {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::WoundWait)
        .max_restarts(0)
        .build();
    let row = LockId::row(T2, 1);
    let mut a_oldest = lm.agent();
    let mut oldest = a_oldest.begin();
    let (go_young, young_go) = mpsc::channel::<()>();
    let (young_done, young_result) = mpsc::channel();
    let (older_done, older_result) = mpsc::channel();
    let (older_ready, ready) = mpsc::channel::<()>();
    let (young_ready, yready) = mpsc::channel::<()>();
    // `older` begins before `young`: it is the older of the two.
    let (lm_o, lm_y) = (lm.clone(), lm.clone());
    let (go_older, older_go) = mpsc::channel::<()>();
    thread::spawn(move || {
        let mut a = lm_o.agent();
        let mut t = a.begin();
        t.lock(row, Mode::X).unwrap();
        older_ready.send(()).unwrap();
        older_go.recv().unwrap();
        let lm_hook = lm_o.clone();
        fault::on_before_park(move || {
            go_young.send(()).unwrap();
            until_waiting(&lm_hook, row, "the young transaction never waited");
        });
        let r = t.lock(LockId::table(T1), Mode::IX);
        let ok = r.is_ok();
        if ok {
            t.commit().unwrap();
        }
        older_done.send(r).unwrap();
    });
    ready.recv().unwrap();
    thread::spawn(move || {
        let mut a = lm_y.agent();
        let mut t = a.begin();
        t.lock(LockId::table(T1), Mode::IS).unwrap();
        young_ready.send(()).unwrap();
        young_go.recv().unwrap();
        let r = t.lock(LockId::table(T1), Mode::S).and_then(|()| t.lock(row, Mode::X));
        // Rolled back before the result is sent: the test's last look at
        // the lock table must not race with this thread's drop.
        drop(t);
        young_done.send(r).unwrap();
    });
    yready.recv().unwrap();
    oldest.lock(LockId::table(T1), Mode::S).unwrap();
    go_older.send(()).unwrap();
    let young = young_result
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{kind:?}: the older waiter never wounded the younger one (a lost notice)"));
    assert!(
        matches!(young, Err(LockError::Wounded { .. })),
        "{kind:?}: the young transaction must be wounded, got {young:?}"
    );
    oldest.commit().unwrap();
    let older = older_result
        .recv_timeout(LIMIT)
        .expect("the older transaction finishes");
    assert!(older.is_ok(), "{kind:?}: {older:?}");
    assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
}

#[test]
fn a_new_edge_announced_before_the_park_is_judged() {
    for kind in [TableKind::Global, TableKind::Latched] {
        schedule(kind);
    }
}
