//! loom model of the exclusive-mode gate: an exclusive transaction and an
//! ordinary one are never inside at the same time, whatever the
//! interleaving, and neither waits forever.

use crate::gate::Gate;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Ordering};

const ORDINARY: usize = 1;
const EXCLUSIVE: usize = 2;

fn ordinary(gate: &Gate, active: &AtomicBool, inside: &AtomicUsize) {
    gate.enter(active);
    let was = inside.fetch_or(ORDINARY, Ordering::SeqCst);
    assert_eq!(was & EXCLUSIVE, 0, "ordinary transaction inside with the exclusive one");
    inside.fetch_and(!ORDINARY, Ordering::SeqCst);
    gate.leave(active);
}

/// One ordinary agent running `rounds` transactions in a row against one
/// exclusive transaction.
fn model(rounds: usize) {
    loom::model(move || {
        let gate = Arc::new(Gate::new());
        let active = Arc::new(AtomicBool::new(false));
        let inside = Arc::new(AtomicUsize::new(0));
        let t = {
            let (gate, active, inside) = (gate.clone(), active.clone(), inside.clone());
            loom::thread::spawn(move || {
                for _ in 0..rounds {
                    ordinary(&gate, &active, &inside);
                }
            })
        };
        gate.close();
        gate.drain(|| active.load(Ordering::Acquire));
        let was = inside.fetch_or(EXCLUSIVE, Ordering::SeqCst);
        assert_eq!(was & ORDINARY, 0, "exclusive transaction inside with an ordinary one");
        inside.fetch_and(!EXCLUSIVE, Ordering::SeqCst);
        gate.open();
        t.join().unwrap();
    });
}

#[test]
fn exclusive_never_overlaps_an_ordinary_transaction() {
    model(1);
}

/// The ordinary agent runs two transactions in a row, so one of them may
/// meet the closed gate and wait on it (the slow path of `enter`).
#[test]
fn ordinary_agent_meets_the_closed_gate() {
    model(2);
}

/// Two exclusive transactions (`Agent::restart` on two agents) close the
/// gate at once: `close` lets one in, and the other waits for its `open`.
#[test]
fn exclusive_transactions_run_one_at_a_time() {
    loom::model(|| {
        let gate = Arc::new(Gate::new());
        let inside = Arc::new(AtomicUsize::new(0));
        let exclusive = |gate: &Gate, inside: &AtomicUsize| {
            gate.close();
            gate.drain(|| false);
            let was = inside.fetch_add(1, Ordering::SeqCst);
            assert_eq!(was, 0, "two exclusive transactions inside at once");
            inside.fetch_sub(1, Ordering::SeqCst);
            gate.open();
        };
        let t = {
            let (gate, inside) = (gate.clone(), inside.clone());
            loom::thread::spawn(move || exclusive(&gate, &inside))
        };
        exclusive(&gate, &inside);
        t.join().unwrap();
    });
}

/// One exclusive transaction inside `inside`, as the models above check it.
fn exclusive_inside(inside: &AtomicUsize) {
    let was = inside.fetch_or(EXCLUSIVE, Ordering::SeqCst);
    assert_eq!(was, 0, "exclusive transaction inside with another transaction");
    inside.fetch_and(!EXCLUSIVE, Ordering::SeqCst);
}

/// Two exclusive transactions and an ordinary one at once: the second
/// exclusive one waits on the serial latch, not on the gate, and closes it
/// after the first has opened it; no two are ever inside together and
/// nobody waits forever.
#[test]
fn two_exclusive_transactions_and_an_ordinary_one() {
    // Three threads whose waits loom runs as yields: one preemption (as
    // the latch-free table's three-thread models) and more branches than
    // loom's default allows, though every path ends.
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.max_branches = 100_000;
    m.check(|| {
        let gate = Arc::new(Gate::new());
        let active = Arc::new(AtomicBool::new(false));
        let inside = Arc::new(AtomicUsize::new(0));
        let ordinary_agent = {
            let (gate, active, inside) = (gate.clone(), active.clone(), inside.clone());
            loom::thread::spawn(move || ordinary(&gate, &active, &inside))
        };
        let run_exclusive = |gate: &Gate, active: &AtomicBool, inside: &AtomicUsize| {
            gate.close();
            gate.drain(|| active.load(Ordering::Acquire));
            exclusive_inside(inside);
            gate.open();
        };
        let other = {
            let (gate, active, inside) = (gate.clone(), active.clone(), inside.clone());
            loom::thread::spawn(move || run_exclusive(&gate, &active, &inside))
        };
        run_exclusive(&gate, &active, &inside);
        other.join().unwrap();
        ordinary_agent.join().unwrap();
    });
}

/// An exclusive transaction that closed the gate on one thread ends on
/// another (a C transaction moves between threads between calls): the
/// serial latch is given back there, and another exclusive transaction
/// gets the gate after it.
#[test]
fn an_exclusive_transaction_ends_on_another_thread() {
    loom::model(|| {
        let gate = Arc::new(Gate::new());
        let inside = Arc::new(AtomicUsize::new(0));
        gate.close();
        gate.drain(|| false);
        let ender = {
            let (gate, inside) = (gate.clone(), inside.clone());
            loom::thread::spawn(move || {
                exclusive_inside(&inside);
                gate.open();
            })
        };
        gate.close();
        gate.drain(|| false);
        exclusive_inside(&inside);
        gate.open();
        ender.join().unwrap();
    });
}
