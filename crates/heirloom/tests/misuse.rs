//! Misuse that used to hang or leak silently: a forgotten transaction, and
//! one thread letting one of its agents wait for another.

use crate::common;

use heirloom::{ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

/// `mem::forget` of a transaction keeps its locks until its agent begins
/// again, which releases them as an abort would and counts it; an
/// exclusive-mode run is not stuck on the forgotten transaction's gate
/// flag after that.
#[test]
fn a_forgotten_transaction_is_finished_by_the_next_begin() {
    for kind in TableKind::ALL {
        for sli in [Inheritance::Off, Inheritance::Always] {
            let lm = LockManager::builder()
                .table(kind)
                .inheritance(sli)
                .conflicts(ConflictPolicy::NoWait)
                .max_restarts(0)
                .build();
            let row = LockId::row(T, 1);
            let mut a = lm.agent();
            let mut b = lm.agent();
            // Warm up inheritance so that a pending inherited lock is among
            // what the forgotten transaction leaves.
            a.run(|t| t.lock(row, Mode::S)).unwrap();
            let mut t = a.begin();
            t.lock(row, Mode::X).unwrap();
            t.lock(LockId::row(T, 2), Mode::S).unwrap();
            std::mem::forget(t);
            // Still held: documented.
            let mut u = b.begin();
            assert!(matches!(u.lock(row, Mode::S), Err(LockError::WouldBlock { .. })));
            u.abort();
            // The next begin on `a` releases them.
            let t = a.begin();
            t.commit().unwrap();
            assert_eq!(lm.stats().forgotten, 1, "{kind:?} {sli:?}");
            // And the gate: an exclusive run of `b` (restart budget 0).
            b.run(|t| t.lock(row, Mode::X)).unwrap();
            drop(a);
            drop(b);
            assert!(lm.snapshot().is_empty(), "{kind:?} {sli:?}: {}", lm.snapshot());
        }
    }
}

/// An agent dropped after a forgotten transaction releases its locks.
#[test]
fn a_forgotten_transaction_is_finished_when_its_agent_drops() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::X).unwrap();
        std::mem::forget(t);
        drop(a);
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
        assert_eq!(lm.stats().forgotten, 1);
    }
}

/// One thread blocking one of its agents on another is refused in every
/// build (`LockError::InvalidRequest`, reason `BLOCKED_BY_OWN_THREAD`)
/// instead of parking for ever, under every policy that would wait without
/// a time limit (wait-die: when the requester is the older), on every table
/// kind; the waiter is doomed, the holder goes on, nothing is left behind.
/// Run on a thread of its own so that a hang fails the test.
#[test]
fn one_thread_blocking_its_own_agent_is_refused() {
    use std::sync::mpsc;
    use std::thread;

    for kind in TableKind::ALL {
        for policy in [
            ConflictPolicy::Detect,
            ConflictPolicy::WaitDie,
            ConflictPolicy::WoundWait,
        ] {
            let lm = LockManager::builder().table(kind).conflicts(policy).build();
            let (tx, rx) = mpsc::channel();
            let lm2 = lm.clone();
            thread::spawn(move || {
                let row = LockId::row(T, 1);
                let mut a = lm2.agent();
                let mut b = lm2.agent();
                // The requester begins first: the older, so that wait-die
                // lets it wait and wound-wait's wound would not end the
                // holder (its thread is this one).
                let mut tb = b.begin();
                let mut ta = a.begin();
                ta.lock(row, Mode::X).unwrap();
                let r = tb.lock(row, Mode::S);
                let doomed = tb.lock(LockId::row(T, 2), Mode::S).is_err();
                drop(tb);
                let holder_went_on = ta.lock(LockId::row(T, 3), Mode::X).is_ok() || policy == ConflictPolicy::WoundWait;
                let _ = ta.commit();
                let _ = tx.send((r, doomed, holder_went_on));
            });
            let (r, doomed, holder_went_on) = rx
                .recv_timeout(common::LIMIT)
                .unwrap_or_else(|_| panic!("{kind:?} {policy:?}: the waiter hung instead of being refused"));
            match r {
                Err(LockError::InvalidRequest { reason, .. }) => {
                    assert_eq!(reason, heirloom::BLOCKED_BY_OWN_THREAD, "{kind:?} {policy:?}")
                }
                other => panic!("{kind:?} {policy:?}: {other:?}"),
            }
            assert!(doomed, "{kind:?} {policy:?}: the refused waiter is doomed");
            assert!(holder_went_on, "{kind:?} {policy:?}: the holder goes on");
            assert!(lm.snapshot().is_empty(), "{kind:?} {policy:?}: {}", lm.snapshot());
        }
    }
}

/// A transaction that moved to another thread and waited there is bound
/// to that thread: the thread it came from may block on it (it is not
/// refused), and is granted when the holder commits over there.
#[test]
fn a_holder_that_moved_away_and_waited_there_may_be_waited_for() {
    use std::thread;

    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .build();
        let (row1, row2) = (LockId::row(T, 1), LockId::row(T, 2));
        let mut a = lm.agent();
        let mut b = lm.agent();
        let mut c = lm.agent();
        let mut ta = a.begin();
        ta.lock(row1, Mode::X).unwrap();
        let mut tc = c.begin();
        tc.lock(row2, Mode::X).unwrap();
        thread::scope(|s| {
            let lm = &lm;
            let there = s.spawn(move || {
                // Waits here for row 2 (bound here from now on), then holds
                // row 1 until this thread's transaction waits for it.
                ta.lock(row2, Mode::X).unwrap();
                common::until_waiting(lm, row1, "the first thread waits for row 1");
                ta.commit().unwrap();
            });
            common::until_waiting(lm, row2, "the moved transaction waits for row 2");
            tc.commit().unwrap();
            let mut tb = b.begin();
            tb.lock(row1, Mode::S).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            tb.commit().unwrap();
            there.join().unwrap();
        });
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}
