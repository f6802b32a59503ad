//! A panic at each point where a transaction is hardest to unwind: with a
//! request linked and waiting, inside the conflict policy's check (for
//! `Detect`, inside the deadlock search with its mutexes held), and between
//! two releases in `finish`. Each time the other threads go on, the
//! exclusive-mode gate still works, and the lock table ends empty. Before
//! the fixes each of these left a request or a lock behind (the waiters
//! behind it hung) or the gate marked active (exclusive runs hung); the
//! waits here are bounded, so a regression fails instead of hanging.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::fault::{self, Point};
use crate::{ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);
const LIMIT: Duration = Duration::from_secs(20);

fn manager(kind: TableKind, policy: ConflictPolicy, sli: Inheritance) -> LockManager {
    LockManager::builder()
        .table(kind)
        .conflicts(policy)
        .inheritance(sli)
        .max_restarts(0)
        // Search at once, so that the deadlock search is reached.
        .deadlock_timeout(Duration::ZERO)
        .build()
}

/// Runs `f` on a new thread and waits for it at most [`LIMIT`].
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(v) => v,
        Err(_) => panic!("{what}: no progress within {LIMIT:?}"),
    }
}

/// A holder takes X on a row; a second agent asks for S on it, waits, and
/// panics at `point`; then a third agent must get X once the holder
/// commits (a request left in the queue would be granted and never
/// released, or block it for ever), and an exclusive-mode run must get in.
/// Under wait-die the waiter's transaction begins first: older than the
/// holder's, it waits (a younger one would die before it waits).
fn panic_while_waiting(kind: TableKind, policy: ConflictPolicy, point: Point) {
    let lm = manager(kind, policy, Inheritance::Off);
    let row = LockId::row(T, 1);
    let mut holder = lm.agent();
    let (begun_tx, begun) = mpsc::channel();
    let (held_tx, held) = mpsc::channel();
    let waiter_first = policy == ConflictPolicy::WaitDie;

    let lm2 = lm.clone();
    let panicked = thread::spawn(move || {
        let mut a = lm2.agent();
        fault::arm(point);
        let r = catch_unwind(AssertUnwindSafe(|| {
            if !waiter_first {
                held.recv().unwrap();
            }
            let mut t = a.begin();
            if waiter_first {
                begun_tx.send(()).unwrap();
                held.recv().unwrap();
            }
            let _ = t.lock(row, Mode::S);
        }));
        fault::disarm();
        r.is_err()
    });
    if waiter_first {
        begun.recv().unwrap();
    }
    let mut h = holder.begin();
    h.lock(row, Mode::X).unwrap();
    held_tx.send(()).unwrap();
    // The waiter is linked (and panics) before the holder lets go.
    while !panicked.is_finished() && lm.snapshot().locks.iter().all(|l| l.waiters.is_empty()) {
        thread::yield_now();
    }
    assert!(
        panicked.join().unwrap(),
        "{kind:?} {policy:?} {point:?}: the injected panic fired"
    );
    h.commit().unwrap();

    let lm3 = lm.clone();
    bounded("a later X after the panicked waiter", move || {
        let mut a = lm3.agent();
        let mut t = a.begin();
        t.lock(row, Mode::X).unwrap();
        t.commit().unwrap();
        // Exclusive mode at once (max_restarts 0): every agent's gate flag
        // must be down.
        a.run(|t| t.lock(row, Mode::X)).unwrap();
    });
    drop(holder);
    assert!(
        lm.snapshot().is_empty(),
        "{kind:?} {policy:?} {point:?}: {:?}",
        lm.snapshot()
    );
}

#[test]
fn panic_while_a_request_waits_cancels_it() {
    for kind in TableKind::ALL {
        for policy in [
            ConflictPolicy::Detect,
            ConflictPolicy::Timeout(Duration::from_secs(60)),
            ConflictPolicy::WaitDie,
            ConflictPolicy::WoundWait,
        ] {
            panic_while_waiting(kind, policy, Point::Wait);
        }
    }
}

#[test]
fn panic_inside_the_policy_check_cancels_the_request() {
    for kind in TableKind::ALL {
        // Detect: inside the deadlock search, with the registry lock held
        // (for reading). Wait-die: the waiter is older and waits; its
        // judgement panics. Wound-wait: before the wound.
        for policy in [
            ConflictPolicy::Detect,
            ConflictPolicy::WaitDie,
            ConflictPolicy::WoundWait,
        ] {
            panic_while_waiting(kind, policy, Point::PolicyCheck);
        }
    }
}

/// A panic between two releases of a commit: the rest are released and
/// the gate is left when the transaction unwinds.
#[test]
fn panic_inside_finish_releases_the_rest_and_leaves_the_gate() {
    for kind in TableKind::ALL {
        for sli in [Inheritance::Off, Inheritance::Always] {
            let lm = manager(kind, ConflictPolicy::Detect, sli);
            let mut a = lm.agent();
            fault::arm(Point::Finish);
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut t = a.begin();
                for k in 0..5 {
                    t.lock(LockId::row(T, k), Mode::X).unwrap();
                }
                t.commit()
            }));
            fault::disarm();
            assert!(r.is_err(), "{kind:?} {sli:?}: the injected panic fired");
            let lm2 = lm.clone();
            bounded("locks after a panic in finish", move || {
                let mut b = lm2.agent();
                // X on the table invalidates whatever was inherited and
                // waits for nothing else: every row lock must be gone.
                let mut t = b.begin();
                t.lock(LockId::table(T), Mode::X).unwrap();
                t.commit().unwrap();
                // An exclusive run must find the panicked agent's gate flag
                // down.
                b.run(|t| t.lock(LockId::row(T, 0), Mode::X)).unwrap();
            });
            // The panicked agent works on.
            a.run(|t| t.lock(LockId::row(T, 9), Mode::S)).unwrap();
            drop(a);
            assert!(lm.snapshot().is_empty(), "{kind:?} {sli:?}: {:?}", lm.snapshot());
        }
    }
}

/// The same inside an exclusive-mode run (`Agent::run` after its restart
/// budget): the gate opens again and the agent's flag goes down.
#[test]
fn panic_inside_finish_of_an_exclusive_run_opens_the_gate() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect, Inheritance::Off);
        let mut a = lm.agent();
        fault::arm(Point::Finish);
        let r = catch_unwind(AssertUnwindSafe(|| {
            a.run(|t| {
                assert!(t.is_exclusive());
                t.lock(LockId::row(T, 1), Mode::X)?;
                t.lock(LockId::row(T, 2), Mode::X)?;
                Ok::<_, LockError>(())
            })
        }));
        fault::disarm();
        assert!(r.is_err(), "{kind:?}: the injected panic fired");
        let lm2 = lm.clone();
        bounded("ordinary and exclusive runs after the panic", move || {
            let mut b = lm2.agent();
            let mut t = b.begin();
            t.lock(LockId::row(T, 1), Mode::X).unwrap();
            t.commit().unwrap();
            b.run(|t| t.lock(LockId::row(T, 2), Mode::X)).unwrap();
        });
        drop(a);
        assert!(lm.snapshot().is_empty(), "{kind:?}: {:?}", lm.snapshot());
    }
}
