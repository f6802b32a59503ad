//! Misuse that used to hang or leak silently: a forgotten transaction, and
//! one thread letting one of its agents wait for another.

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

/// Debug builds: one thread blocking one of its agents on another panics
/// with a message instead of parking for ever (release builds hang by
/// design; `.ci/run` runs this file in a debug build too).
#[cfg(debug_assertions)]
#[test]
fn one_thread_blocking_its_own_agent_panics_in_debug_builds() {
    use std::sync::mpsc;
    use std::thread;
    use std::time::Duration;

    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .build();
        let (tx, rx) = mpsc::channel();
        let lm2 = lm.clone();
        thread::spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let row = LockId::row(T, 1);
                let mut a = lm2.agent();
                let mut b = lm2.agent();
                let mut ta = a.begin();
                ta.lock(row, Mode::X).unwrap();
                let mut tb = b.begin();
                let _ = tb.lock(row, Mode::S);
            }));
            let msg = match r {
                Err(p) => p
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| "a panic without a message".into()),
                Ok(()) => "no panic".into(),
            };
            let _ = tx.send(msg);
        });
        let msg = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the waiter panicked instead of hanging");
        assert!(msg.contains("same thread"), "{kind:?}: {msg}");
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}
