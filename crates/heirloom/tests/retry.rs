//! `Agent::retry` begins a transaction with the age of the agent's last
//! one: under wait-die a retried transaction stays older than those that
//! began after its first attempt, so they die against it, on every table.
//! `Agent::restart` adds `Agent::run`'s backoff and exclusive mode.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use heirloom::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

#[test]
fn a_retry_keeps_its_age_and_the_younger_dies_against_it() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::WaitDie)
            .build();
        let (mut b, mut d) = (lm.agent(), lm.agent());
        let row = LockId::row(T, 7);
        let t = b.retry(); // the agent's first: a new age
        let first = t.age();
        assert!(first > 0, "{kind}: a wait-die age");
        t.abort();
        let mut young = d.begin();
        assert!(young.age() > first, "{kind}");
        let mut t = b.retry();
        assert_eq!(t.age(), first, "{kind}: the retry's age");
        t.lock(row, Mode::X).unwrap();
        match young.lock(row, Mode::S) {
            Err(LockError::Died { .. }) => {}
            other => panic!("{kind}: the younger requester should die, got {other:?}"),
        }
        young.abort();
        t.commit().unwrap();
        // New work gets a new age.
        assert!(b.begin().age() > first, "{kind}");
        assert_eq!(b.stats().restarts, 2, "{kind}: both retries counted");
        drop(b);
        drop(d);
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

#[test]
fn without_ages_a_retry_is_a_begin() {
    let lm = LockManager::builder().conflicts(ConflictPolicy::Detect).build();
    let mut a = lm.agent();
    assert_eq!(a.retry().age(), 0);
    a.begin().commit().unwrap();
    assert_eq!(a.retry().age(), 0);
}

/// `Agent::restart` is `Agent::run`'s restart for an engine's own retry
/// loop: the age kept, every restart counted, and from `max_restarts` on
/// the transaction runs in exclusive mode, which its end closes.
#[test]
fn a_restart_keeps_its_age_and_goes_exclusive_after_max_restarts() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::WaitDie)
            .max_restarts(2)
            .build();
        let mut a = lm.agent();
        let t = a.begin();
        let age = t.age();
        t.abort();
        let t = a.restart(1);
        assert_eq!(t.age(), age, "{kind}: the first restart keeps the age");
        assert!(!t.is_exclusive(), "{kind}: below max_restarts");
        t.abort();
        let mut t = a.restart(2);
        assert_eq!(t.age(), age, "{kind}: so does the exclusive one");
        assert!(t.is_exclusive(), "{kind}: at max_restarts");
        t.lock(LockId::row(T, 1), Mode::X).unwrap();
        t.commit().unwrap();
        let s = a.stats();
        assert_eq!((s.restarts, s.exclusive_runs), (2, 1), "{kind}");
        // The gate is open again: another agent begins at once.
        let lm2 = lm.clone();
        common::within_a_minute("a begin after the exclusive transaction", move || {
            lm2.agent().begin().commit().unwrap();
        });
        // An exclusive transaction dropped unfinished opens the gate too.
        drop(a.restart(5));
        let lm2 = lm.clone();
        common::within_a_minute("a begin after a dropped exclusive transaction", move || {
            lm2.agent().begin().commit().unwrap();
        });
        drop(a);
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

/// While an exclusive restart runs, another agent's begin waits for its
/// end; exclusive restarts of several agents run one at a time.
#[test]
fn exclusive_restarts_run_alone() {
    let lm = LockManager::builder().max_restarts(0).build();
    // An ordinary agent's begin waits for the exclusive transaction's end
    // (`done` is set just before its commit).
    let mut a = lm.agent();
    let t = a.restart(1);
    assert!(t.is_exclusive());
    let (done, started) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let other = {
        let (lm, done, started) = (lm.clone(), done.clone(), started.clone());
        thread::spawn(move || {
            let mut b = lm.agent();
            started.store(true, Ordering::SeqCst);
            let t = b.begin();
            assert!(
                done.load(Ordering::SeqCst),
                "an ordinary transaction began inside an exclusive one"
            );
            t.commit().unwrap();
        })
    };
    common::until("the other agent starts", || started.load(Ordering::SeqCst));
    for _ in 0..1000 {
        thread::yield_now(); // give a broken gate the chance to let it in
    }
    done.store(true, Ordering::SeqCst);
    t.commit().unwrap();
    other.join().unwrap();
    // Four agents restarting exclusively at once: never two inside.
    let inside = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..4)
        .map(|_| {
            let (lm, inside) = (lm.clone(), inside.clone());
            thread::spawn(move || {
                let mut a = lm.agent();
                for n in 1..=50 {
                    let t = a.restart(n);
                    assert!(t.is_exclusive());
                    assert_eq!(
                        inside.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two exclusive transactions at once"
                    );
                    thread::yield_now();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(lm.stats().exclusive_runs, 201);
}

/// With `max_restarts(0)` every attempt of `Agent::run` runs alone, the
/// first one too.
#[test]
fn max_restarts_zero_runs_every_attempt_alone() {
    let lm = LockManager::builder().max_restarts(0).build();
    let mut a = lm.agent();
    let exclusive = a.run(|t| Ok::<_, LockError>(t.is_exclusive())).unwrap();
    assert!(exclusive, "the first attempt runs in exclusive mode");
    assert_eq!(a.stats().exclusive_runs, 1);
    // The gate opened at its end.
    a.begin().commit().unwrap();
}
