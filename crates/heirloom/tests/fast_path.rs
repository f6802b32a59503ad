//! Intention locks next to table readers and writers: what the latch-free
//! table's fast path (IS and IX as one atomic on a per-lock word, no
//! request linked) must keep exactly as every other table does — a strong
//! table lock waits for the intention holds before it, a no-wait refusal
//! names one of them, deadlocks through them are found, a conversion from
//! one passes the waiters it shuts out, and the monitor lists them. Every
//! table kind, inheritance off unless a test says otherwise; the last
//! tests put inheritance beside the fast path.

use crate::common;

use common::{managers, within_a_minute};

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use heirloom::{ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, Stats, TableId, TableKind, Wait};

const T: TableId = TableId::new(0, 1);

#[test]
fn a_table_reader_waits_for_the_writers_intentions() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let kind = lm.table_kind();
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(LockId::row(T, 1), Mode::X).unwrap();
        assert_eq!(ta.held_mode(LockId::table(T)), Some(Mode::IX));
        // The monitor lists the intention hold.
        let snap = lm.snapshot();
        let table = snap.lock(LockId::table(T)).unwrap();
        assert_eq!(table.group, Mode::IX, "{kind}: {snap}");
        assert!(
            table.holders.iter().any(|h| h.txn == ta.id() && h.mode == Mode::IX),
            "{kind}: {snap}"
        );
        // Refused at once, naming the holder.
        let mut tb = b.begin();
        match tb.lock_with(LockId::table(T), Mode::S, Wait::NoWait) {
            Err(LockError::WouldBlock { holder, .. }) => assert_eq!(holder, ta.id(), "{kind}"),
            other => panic!("{kind}: {other:?}"),
        }
        tb.abort();
        // Waits, and is granted when the writer commits.
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            s.spawn(|| {
                let mut tb = b.begin();
                tb.lock(LockId::table(T), Mode::S).unwrap();
                tx.send(()).unwrap();
                tb.commit().unwrap();
            });
            // It waits (the table's snapshot shows it queued), and is not
            // granted while the writer's IX stands.
            common::until_waiting(&lm, LockId::table(T), &format!("{kind}: S on the table never waited"));
            assert!(rx.try_recv().is_err(), "{kind}: S granted beside IX");
            ta.commit().unwrap();
            rx.recv_timeout(Duration::from_secs(30))
                .expect("S granted after the commit");
        });
        // Nothing left behind: a table writer gets the lock at once.
        let mut tb = b.begin();
        tb.lock_with(LockId::table(T), Mode::X, Wait::NoWait).unwrap();
        tb.commit().unwrap();
        assert!(lm.snapshot().locks.is_empty(), "{kind}");
    }
}

#[test]
fn intentions_wait_behind_a_queued_table_writer() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let kind = lm.table_kind();
        let (mut a, mut b, mut c) = (lm.agent(), lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(LockId::row(T, 1), Mode::S).unwrap();
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            s.spawn(|| {
                let mut tb = b.begin();
                tb.lock(LockId::table(T), Mode::X).unwrap();
                tx.send("X").unwrap();
                tb.commit().unwrap();
            });
            common::until_waiting(&lm, LockId::table(T), &format!("{kind}: X on the table never waited"));
            // First come, first served: a new intention lock queues behind
            // the waiting X instead of starving it.
            let mut tc = c.begin();
            assert!(
                matches!(
                    tc.lock_with(LockId::row(T, 2), Mode::S, Wait::NoWait),
                    Err(LockError::WouldBlock { .. })
                ),
                "{kind}: an IS passed a queued X"
            );
            tc.abort();
            ta.commit().unwrap();
            assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok("X"));
        });
        let mut tc = c.begin();
        tc.lock(LockId::row(T, 2), Mode::S).unwrap();
        tc.commit().unwrap();
    }
}

#[test]
fn a_conversion_from_an_intention_passes_the_writer_it_shuts_out() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect).deadlock_timeout(Duration::ZERO)) {
        let kind = lm.table_kind();
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(LockId::row(T, 1), Mode::S).unwrap();
        let stats0 = lm.stats();
        thread::scope(|s| {
            let h = s.spawn(|| {
                let mut tb = b.begin();
                let r = tb.lock(LockId::table(T), Mode::X);
                if r.is_ok() {
                    tb.commit().unwrap();
                } else {
                    tb.abort();
                }
                r
            });
            common::until_waiting(&lm, LockId::table(T), &format!("{kind}: X on the table never waited"));
            // IS to IX: the queued X waits for our IS anyway, so IX must
            // not wait for it (a cycle), nor be refused.
            ta.lock_with(LockId::row(T, 2), Mode::X, Wait::NoWait)
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(ta.held_mode(LockId::table(T)), Some(Mode::IX));
            ta.commit().unwrap();
            h.join().unwrap().unwrap();
        });
        let d = lm.stats().deadlocks - stats0.deadlocks;
        assert_eq!(d, 0, "{kind}: no deadlock to report");
    }
}

#[test]
fn a_conversion_from_an_intention_waits_for_the_others() {
    for lm in managers(|b| b.conflicts(ConflictPolicy::Detect)) {
        let kind = lm.table_kind();
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(LockId::row(T, 1), Mode::X).unwrap();
        let mut tb = b.begin();
        tb.lock(LockId::row(T, 2), Mode::S).unwrap();
        // IX to X while another transaction holds IS: refused at once...
        match ta.lock_with(LockId::table(T), Mode::X, Wait::Skip) {
            Err(LockError::Busy { .. }) => {}
            other => panic!("{kind}: {other:?}"),
        }
        // ...and granted once it is gone.
        tb.commit().unwrap();
        ta.lock_with(LockId::table(T), Mode::X, Wait::NoWait).unwrap();
        assert_eq!(ta.held_mode(LockId::table(T)), Some(Mode::X));
        let snap = lm.snapshot();
        let table = snap.lock(LockId::table(T)).unwrap();
        assert_eq!(table.group, Mode::X, "{kind}: {snap}");
        assert_eq!(table.holders.len(), 1, "{kind}: one holder in the join: {snap}");
        ta.commit().unwrap();
        assert!(lm.snapshot().locks.is_empty(), "{kind}");
    }
}

/// Two writers each hold IX on the table, then both ask for S on it: each
/// waits for the other's intention hold. Every policy must end it.
#[test]
fn deadlocks_through_intention_holds_are_resolved() {
    for policy in [
        ConflictPolicy::Detect,
        ConflictPolicy::WaitDie,
        ConflictPolicy::WoundWait,
    ] {
        for kind in TableKind::ALL {
            let lm = LockManager::builder()
                .table(kind)
                .inheritance(Inheritance::Off)
                .conflicts(policy)
                .deadlock_timeout(Duration::from_millis(1))
                .build();
            let results = within_a_minute(&format!("{kind} {policy:?}"), move || {
                let (ready_tx, ready_rx) = mpsc::channel();
                let (go_tx, go_rx) = mpsc::channel::<()>();
                let lm2 = lm.clone();
                let h = thread::spawn(move || {
                    let mut a = lm2.agent();
                    let mut t = a.begin();
                    t.lock(LockId::row(T, 1), Mode::X).unwrap();
                    ready_tx.send(()).unwrap();
                    let _ = go_rx.recv();
                    let r = t.lock(LockId::table(T), Mode::S);
                    if r.is_ok() {
                        t.commit().unwrap();
                    } else {
                        t.abort();
                    }
                    r
                });
                let mut b = lm.agent();
                let mut t = b.begin();
                t.lock(LockId::row(T, 2), Mode::X).unwrap();
                ready_rx.recv().unwrap();
                go_tx.send(()).unwrap();
                let r = t.lock(LockId::table(T), Mode::S);
                if r.is_ok() {
                    t.commit().unwrap();
                } else {
                    t.abort();
                }
                let out = vec![r, h.join().unwrap()];
                assert!(lm.snapshot().locks.is_empty(), "a lock left behind");
                out
            });
            let aborted = results.iter().filter(|r| r.is_err()).count();
            assert!(aborted >= 1, "{kind} {policy:?}: {results:?}");
            assert!(
                results.iter().all(|r| match r {
                    Ok(()) => true,
                    Err(e) => e.is_restartable(),
                }),
                "{kind} {policy:?}: {results:?}"
            );
        }
    }
}

/// Many agents take intention locks while a few take the table in S and
/// X: never a table writer beside an intention or a reader, and nothing
/// left behind.
#[test]
fn intention_holders_and_table_lockers_never_overlap() {
    holders_and_lockers(8, 2_000, Inheritance::Off);
}

/// The same with every eligible lock passed on (`Inheritance::Always`):
/// intention locks stay fast holds, the table readers' S is passed on (on
/// the latched table; the latch-free one does not pass on a request
/// counted in the fast path's word) and invalidated by intention requests,
/// which the counted S turns away from the fast path.
#[test]
fn intention_holders_and_table_lockers_never_overlap_with_inheritance() {
    holders_and_lockers(8, 2_000, Inheritance::Always);
}

/// The same with table locks rare enough that the fast path's word opens
/// again between them (more than `REOPEN_AFTER`, 4,096, intention requests
/// turned away in between), so that fast holds race the heavy fence of the
/// strong request that seals the word again, not only a sealed word.
#[test]
fn intention_holders_and_rare_table_lockers_never_overlap() {
    holders_and_lockers(2_500, 20_000, Inheritance::Off);
}

/// Six agents, `rounds` transactions each; agents 0 and 1 take the table
/// in X resp. S every `every`-th transaction.
fn holders_and_lockers(every: u64, rounds: u64, sli: Inheritance) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    for kind in TableKind::ALL {
        // Every table at full size, the server too: beside busy processes a
        // client whose server has no core serves its own messages
        // (`scripts/tests-under-load.sh`).
        let lm = LockManager::builder()
            .table(kind)
            .inheritance(sli)
            .conflicts(ConflictPolicy::WaitDie)
            .build();
        // Intention holders add 1, S holders 1 << 20, X holders 1 << 40.
        let inside = Arc::new(AtomicI64::new(0));
        let stats = within_a_minute(&format!("{kind}"), {
            let (lm, inside) = (lm.clone(), inside.clone());
            move || {
                thread::scope(|s| {
                    for w in 0..6u64 {
                        let (lm, inside) = (&lm, &inside);
                        s.spawn(move || {
                            let mut a = lm.agent();
                            for i in 0..rounds {
                                let (table, weight) = match (w, i % every) {
                                    (0, 0) => (Some(Mode::X), 1i64 << 40),
                                    (1, 0) => (Some(Mode::S), 1 << 20),
                                    _ => (None, 1),
                                };
                                let mut t = a.begin();
                                let r = match table {
                                    Some(m) => t.lock(LockId::table(T), m),
                                    None => t.lock(LockId::row(T, w * 10_000 + i), Mode::X),
                                };
                                if r.is_err() {
                                    t.abort();
                                    continue;
                                }
                                let now = inside.fetch_add(weight, Ordering::SeqCst) + weight;
                                let (x, s_, ix) = (now >> 40, (now >> 20) & 0xfffff, now & 0xfffff);
                                assert!(x <= 1 && (x == 0 || (s_ == 0 && ix == 0)), "{now:#x}");
                                assert!(s_ == 0 || ix == 0, "S beside IX: {now:#x}");
                                inside.fetch_sub(weight, Ordering::SeqCst);
                                t.commit().unwrap();
                            }
                        });
                    }
                });
                lm.stats()
            }
        });
        let _: Stats = stats;
        assert!(lm.snapshot().locks.is_empty(), "{kind}: a lock left behind");
    }
}

/// With inheritance on, the fast path stays on: intention locks are fast
/// holds, which are not passed on; S on a table is (on the latched table),
/// it closes the fast path of its lock while it is held, and an intention
/// request that conflicts with it invalidates it.
#[test]
fn inheritance_beside_the_fast_path() {
    for kind in TableKind::ALL {
        let fast = kind.has_fast_path();
        let lm = LockManager::builder()
            .table(kind)
            .inheritance(Inheritance::Always)
            .build();
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::S).unwrap();
        t.commit().unwrap();
        let s = lm.stats();
        if fast {
            // IS on the database and the table and S on the row, each
            // taken and released.
            assert_eq!((s.fast_ops, s.inherited), (6, 0), "{kind}: {s:?}");
            assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
        } else {
            // No fast path: the tables of `tests/inherit.rs`.
            assert_eq!((s.fast_ops, s.inherited), (0, 2), "{kind}: {s:?}");
            continue;
        }
        // S on the table: passed on where it is a request of its own.
        let mut t = a.begin();
        t.lock(LockId::table(T), Mode::S).unwrap();
        t.commit().unwrap();
        let passed = lm.stats().inherited - s.inherited;
        let expect = u64::from(kind.base() == TableKind::Latched);
        assert_eq!(passed, expect, "{kind}: {:?}", lm.stats());
        // A writer's IX on the table conflicts with the passed-on S: it
        // invalidates it and is granted at once (no-wait would refuse a
        // real holder).
        let before = lm.stats();
        let mut t = b.begin();
        t.lock_with(LockId::row(T, 2), Mode::X, Wait::NoWait).unwrap();
        let snap = lm.snapshot();
        let table = snap.lock(LockId::table(T)).expect("the table lock is listed");
        assert!(
            table.holders.iter().all(|h| h.mode == Mode::IX),
            "{kind}: only the writer's IX holds the table: {snap}"
        );
        t.commit().unwrap();
        // The owner learns of it when its next transaction wants the lock.
        let mut t = a.begin();
        t.lock(LockId::table(T), Mode::S).unwrap();
        t.commit().unwrap();
        let after = lm.stats();
        if passed > 0 {
            assert_eq!(after.inherited_invalidated - before.inherited_invalidated, 1, "{kind}");
        }
        drop((a, b));
        assert!(
            lm.snapshot().locks.is_empty(),
            "{kind}: a lock left behind: {}",
            lm.snapshot()
        );
    }
}

/// A fast hold taken by `lock` has no request node (the fast path is a
/// bit in the agent's record): none is allocated for intention locks
/// alone, and every operation that needs one (conversions in place and to
/// a strong mode, early unlock, escalation, a forgotten transaction, the
/// batch path) gets one and gives it back, leaving no lock behind.
#[test]
fn fast_holds_need_no_request_node() {
    for kind in TableKind::ALL.into_iter().filter(TableKind::has_fast_path) {
        let lm = LockManager::builder()
            .table(kind)
            .inheritance(Inheritance::Off)
            .escalate_after(4)
            .build();
        let mut a = lm.agent();
        for _ in 0..100 {
            let mut t = a.begin();
            t.lock(LockId::table(T), Mode::IS).unwrap();
            t.lock(LockId::database(1), Mode::IX).unwrap();
            t.commit().unwrap();
        }
        let s = lm.stats();
        assert_eq!(s.nodes_allocated, 0, "{kind}: intention locks took nodes: {s:?}");
        // Database 0 and the table, database 1: three acquisitions and three
        // releases each time.
        assert_eq!(s.fast_ops, 600, "{kind}: {s:?}");
        // In place (IS to IX), to a strong mode (IX to SIX, then X), and
        // released early.
        let mut t = a.begin();
        t.lock(LockId::table(T), Mode::IS).unwrap();
        t.lock(LockId::table(T), Mode::IX).unwrap();
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::IX));
        let s = lm.stats();
        assert_eq!(s.nodes_allocated, 0, "{kind}: IS to IX in place took a node: {s:?}");
        t.lock(LockId::table(T), Mode::S).unwrap();
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::SIX));
        t.lock(LockId::table(T), Mode::X).unwrap();
        t.lock(LockId::table(TableId::new(0, 2)), Mode::IS).unwrap();
        t.unlock(LockId::table(TableId::new(0, 2))).unwrap();
        t.commit().unwrap();
        // Escalation of row locks under a fast IX on the table.
        let mut t = a.begin();
        for k in 0..6 {
            t.lock(LockId::row(T, k), Mode::X).unwrap();
        }
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::X), "{kind}: escalated");
        t.commit().unwrap();
        // The batch path.
        let mut t = a.begin();
        t.lock_all(&[
            (LockId::row(T, 1), Mode::S),
            (LockId::row(TableId::new(0, 3), 1), Mode::X),
        ])
        .unwrap();
        t.commit().unwrap();
        // A forgotten transaction's fast holds go when the next begins.
        let mut t = a.begin();
        t.lock(LockId::row(T, 9), Mode::S).unwrap();
        std::mem::forget(t);
        let mut t = a.begin();
        t.lock(LockId::table(T), Mode::X).unwrap();
        t.commit().unwrap();
        // Another agent can take every lock used above in X: none left.
        let mut b = lm.agent();
        let mut t = b.begin();
        for id in [LockId::database(0), LockId::database(1), LockId::table(T)] {
            t.lock_with(id, Mode::X, Wait::NoWait).unwrap();
        }
        t.commit().unwrap();
        drop((a, b));
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
        assert_eq!(lm.stats().forgotten, 1, "{kind}");
    }
}
