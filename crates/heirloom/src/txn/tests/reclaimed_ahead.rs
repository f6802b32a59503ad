//! Regression: on the latch-free table, an inherited request ahead of a
//! waiter, behind the first request in its way, stayed INHERITED when the
//! waiter's read-after-write walk stopped at that first request. Its
//! agent's next transaction then reclaimed it: a new holder ahead of the
//! waiter that nobody told it of, so wound-wait never judged that edge and
//! an older waiter sat behind a younger holder for ever (the stress test's
//! stall, ended only by a 20 ms re-check, since removed). The walk
//! now goes all the way and invalidates every inherited request in the way
//! (`LatchFree::clear` with `Sweep::All`).
//!
//! The schedule, forced with `fault::on_before_waiting`:
//! 1. `first` (the oldest) holds IX on table T1; `heir` holds IX on T1
//!    behind it; `older` holds X on a row of T2.
//! 2. `older` asks for S on T1. Its walk finds both IX in its way; before
//!    it counts itself waiting (the hook), `heir` commits and passes its IX
//!    on (nobody counted as waiting yet, so the pass-on is allowed).
//! 3. `older` settles as WAITING: its walk meets `first`'s IX first.
//! 4. `heir`'s agent begins `young` (younger than `older`), which asks for
//!    IX on T1 (a reclaim, if the inherited request is still there: a
//!    holder ahead of `older`) and then for the row `older` holds, where it
//!    waits (younger waits).
//! 5. `first` commits. `older` must get its S (the inherited request was
//!    invalidated, so `young` queued behind `older`), or at least wound
//!    `young`; otherwise each waits for the other for ever.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use super::common::{LIMIT, until, until_waiting};
use crate::fault;
use crate::{ConflictPolicy, Inheritance, LockId, LockManager, Mode, TableId, TableKind};

const T1: TableId = TableId::new(0, 1);
const T2: TableId = TableId::new(0, 2);

fn schedule(kind: TableKind) {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::WoundWait)
        .inheritance(Inheritance::Always)
        .fast_path(false)
        .max_restarts(0)
        .build();
    let (table, row) = (LockId::table(T1), LockId::row(T2, 1));
    let mut a_first = lm.agent();
    let mut first = a_first.begin();
    first.lock(table, Mode::IX).unwrap();

    // `heir`: IX on T1 behind `first`, committed on demand, then `young`.
    let (heir_ready, heir_is_ready) = mpsc::channel::<()>();
    let (commit_heir, heir_commit) = mpsc::channel::<()>();
    let (heir_committed, heir_has_committed) = mpsc::channel::<()>();
    let (start_young, young_start) = mpsc::channel::<()>();
    let (young_done, young_result) = mpsc::channel();
    let lm_h = lm.clone();
    thread::spawn(move || {
        let mut a = lm_h.agent();
        let mut t = a.begin();
        t.lock(table, Mode::IX).unwrap();
        heir_ready.send(()).unwrap();
        heir_commit.recv().unwrap();
        t.commit().unwrap();
        heir_committed.send(()).unwrap();
        young_start.recv().unwrap();
        let mut young = a.begin();
        let r = young.lock(table, Mode::IX).and_then(|()| young.lock(row, Mode::X));
        match r {
            Ok(()) => young.commit().unwrap(),
            Err(_) => young.abort(),
        }
        young_done.send(r).unwrap();
    });
    heir_is_ready.recv().unwrap();

    // `older`: begins before `young`, so it is the older of the two.
    let (older_ready, older_is_ready) = mpsc::channel::<()>();
    let (go_older, older_go) = mpsc::channel::<()>();
    let (older_done, older_result) = mpsc::channel();
    let lm_o = lm.clone();
    thread::spawn(move || {
        let mut a = lm_o.agent();
        let mut t = a.begin();
        t.lock(row, Mode::X).unwrap();
        older_ready.send(()).unwrap();
        older_go.recv().unwrap();
        fault::on_before_waiting(move || {
            commit_heir.send(()).unwrap();
            heir_has_committed.recv().unwrap();
        });
        let r = t.lock(table, Mode::S);
        match r {
            Ok(()) => t.commit().unwrap(),
            Err(_) => t.abort(),
        }
        older_done.send(r).unwrap();
    });
    older_is_ready.recv().unwrap();
    go_older.send(()).unwrap();
    // Until `older` waits on T1 (it has settled).
    until_waiting(&lm, table, &format!("{kind:?}: the older transaction never waited"));
    start_young.send(()).unwrap();
    // Until `young` waits: on the row (it reclaimed, or was granted, IX on
    // T1), or on T1 behind `older`.
    until(&format!("{kind:?}: the young transaction never waited"), || {
        let s = lm.snapshot();
        s.lock(row).is_some_and(|l| !l.waiters.is_empty()) || s.lock(table).is_some_and(|l| l.waiters.len() >= 2)
    });
    first.commit().unwrap();
    let older = older_result
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{kind:?}: the older waiter sat behind a reclaimed request it never judged"));
    assert!(older.is_ok(), "{kind:?}: {older:?}");
    let young = young_result.recv_timeout(LIMIT).expect("the young transaction ends");
    assert!(
        young.is_ok() || matches!(young, Err(crate::LockError::Wounded { .. })),
        "{kind:?}: {young:?}"
    );
    drop(a_first);
    let start = std::time::Instant::now();
    while !lm.snapshot().is_empty() {
        assert!(start.elapsed() < LIMIT, "{kind:?}: locks left: {}", lm.snapshot());
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn an_inherited_request_ahead_of_a_waiter_cannot_become_an_unseen_holder() {
    schedule(TableKind::LatchFree);
}
