//! Wound-wait with more threads than cores: a wound dooms its victim only
//! if the victim has to wait. A wounded transaction whose requests are
//! granted at once goes on and may commit (the wounder waits for it, as
//! for any holder that is running); one that must wait dies at once. While
//! the threads fit the cores a wound dooms at the next lock call. Every
//! table kind, inheritance off and always on.
//!
//! The schedule (the manager is told of one core, `Builder::cores`, and
//! an idle agent makes the agents outnumber it on any machine):
//! 1. `young` begins after `old` (so it is the younger) and takes X on A.
//! 2. `old` asks for X on A, waits, and wounds `young`; the test waits
//!    until `young`'s agent holds the wound.
//! 3. `young` takes X on B, free: granted, the wound notwithstanding; and
//!    commits. `old` then gets A.
//! 4. Again with `young2` and `old2`, but `young2`'s next request is for a
//!    row a third transaction holds: it would wait, so it dies `Wounded`,
//!    and `old2` gets A.

use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use super::common::LIMIT;
use crate::sync::Ordering;
use crate::{
    Agent, ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind, Transaction,
};

const T: TableId = TableId::new(0, 1);

/// `old` (begun first) asks for X on `a`, which the caller's transaction
/// holds; returns the channel its result comes back on. Returns once
/// `old` has begun, so a transaction begun after that is younger.
fn older_asks_for(lm: &LockManager, a: LockId) -> (mpsc::Sender<()>, mpsc::Receiver<Result<(), LockError>>) {
    let (began, has_begun) = mpsc::channel::<()>();
    let (go, go_rx) = mpsc::channel::<()>();
    let (done, result) = mpsc::channel();
    let lm = lm.clone();
    thread::spawn(move || {
        let mut agent = lm.agent();
        let mut t = agent.begin();
        began.send(()).unwrap();
        go_rx.recv().unwrap();
        let r = t.lock(a, Mode::X);
        if r.is_ok() {
            t.commit().unwrap();
        } else {
            t.abort();
        }
        // Gone (with what it inherited) before the result is seen.
        drop(agent);
        done.send(r).unwrap();
    });
    has_begun.recv().unwrap();
    (go, result)
}

/// `young`, begun on `agent` after an older transaction began, takes X on
/// `a`; the older one asks for it, waits and wounds `young`. Returns
/// `young`, wounded, and where the older one's result comes back.
fn wounded_holder<'a>(
    lm: &LockManager,
    agent: &'a mut Agent,
    a: LockId,
    what: &str,
) -> (Transaction<'a>, mpsc::Receiver<Result<(), LockError>>) {
    let (go, old) = older_asks_for(lm, a);
    let shared = agent.shared.clone();
    let mut young = agent.begin();
    let id = young.id().0;
    young.lock(a, Mode::X).unwrap();
    go.send(()).unwrap();
    let start = Instant::now();
    while shared.wound.wounded.load(Ordering::Acquire) != id {
        assert!(
            start.elapsed() < LIMIT,
            "{what}: the older waiter never wounded the younger holder"
        );
        thread::yield_now();
    }
    (young, old)
}

fn schedule(kind: TableKind, sli: Inheritance) {
    let lm = LockManager::builder()
        .table(kind)
        .inheritance(sli)
        .conflicts(ConflictPolicy::WoundWait)
        .max_restarts(0)
        .cores(1)
        .build();
    assert_eq!(lm.cores(), 1);
    let name = format!("{kind:?} sli={sli:?}");
    let _idle = lm.agent();
    let (a, b, c) = (LockId::row(T, 1), LockId::row(T, 2), LockId::row(T, 3));

    // Steps 1-3: wounded, but never waits: commits.
    let mut agent = lm.agent();
    assert!(!lm.inner.threads_fit_cores());
    let (mut young, old) = wounded_holder(&lm, &mut agent, a, &name);
    let r = young.lock(b, Mode::X);
    assert!(
        r.is_ok(),
        "{name}: a wounded transaction that need not wait goes on: {r:?}"
    );
    young.commit().expect("and commits");
    let r = old.recv_timeout(LIMIT).expect("the older transaction finishes");
    assert!(r.is_ok(), "{name}: {r:?}");

    // Step 4: wounded, then would wait: dies.
    let mut third_agent = lm.agent();
    let mut third = third_agent.begin();
    third.lock(c, Mode::X).unwrap();
    let (mut young, old) = wounded_holder(&lm, &mut agent, a, &name);
    let r = young.lock(c, Mode::X);
    assert!(
        matches!(r, Err(LockError::Wounded { .. })),
        "{name}: a wounded transaction that must wait dies: {r:?}"
    );
    young.abort();
    let r = old.recv_timeout(LIMIT).expect("the older transaction finishes");
    assert!(r.is_ok(), "{name}: {r:?}");
    third.commit().unwrap();
    drop((agent, third_agent));
    assert!(lm.snapshot().is_empty(), "{name}: {}", lm.snapshot());
}

/// With the threads on the cores (two agents on two cores, as the manager
/// is told on any machine), the wounded `young` dies at its next lock
/// call, a free row; the time it went on after the wound (here at least
/// the 20 ms it works before that call) is counted in `wound_delay_ns`.
#[test]
fn while_threads_fit_the_cores_a_wound_dooms_at_once() {
    let lm = LockManager::builder()
        .table(TableKind::Latched)
        .conflicts(ConflictPolicy::WoundWait)
        .max_restarts(0)
        .cores(2)
        .build();
    let (a, b) = (LockId::row(T, 1), LockId::row(T, 2));
    let mut agent = lm.agent();
    let (mut young, old) = wounded_holder(&lm, &mut agent, a, "latched");
    assert!(lm.inner.threads_fit_cores());
    assert_eq!(young.agent_stats().wound_delay_ns, 0);
    thread::sleep(std::time::Duration::from_millis(20));
    let r = young.lock(b, Mode::X);
    assert!(matches!(r, Err(LockError::Wounded { .. })), "{r:?}");
    let s = young.agent_stats();
    assert_eq!(s.wounded, 1);
    assert!(s.wound_delay_ns >= 20_000_000, "{} ns", s.wound_delay_ns);
    young.abort();
    let r = old.recv_timeout(LIMIT).expect("the older transaction finishes");
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn with_more_threads_than_cores_a_wound_dooms_only_a_wait() {
    for kind in TableKind::ALL {
        for sli in [Inheritance::Off, Inheritance::Always] {
            schedule(kind, sli);
        }
    }
}
