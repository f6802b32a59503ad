//! The row side's switch (`FastRows::Auto`, `txn/row_switch.rs`): off
//! where rows are updated as often as read, on again where they are only
//! read, never on while a transaction that took an uncounted strong row
//! lock is in progress, and no two incompatible grants across its turns.

use crate::common;

use common::{Ghost, Rng, within_a_minute};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread;
use std::time::Duration;

use heirloom::{
    Agent, ConflictPolicy, FastRows, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind, Wait,
};

const T: TableId = TableId::new(0, 1);
const ROWS: u64 = 1 << 20;

/// The kinds whose row side has the switch.
const KINDS: [TableKind; 2] = [TableKind::Latched, TableKind::LatchFree];

fn manager(kind: TableKind) -> LockManager {
    manager_classes(kind, false)
}

/// `manager`, with the request classes on or off (`Builder::lock_classes`:
/// fast holds then take request nodes).
fn manager_classes(kind: TableKind, classes: bool) -> LockManager {
    LockManager::builder()
        .table(kind)
        .inheritance(Inheritance::Off)
        .conflicts(ConflictPolicy::NoWait)
        .fast_rows(FastRows::Auto)
        .lock_classes(classes)
        .build()
}

/// One transaction of `n` row locks over a million rows, a share
/// `x_in_16` of them X and the rest S.
fn txn(agent: &mut Agent, rng: &mut Rng, n: usize, x_in_16: u64) {
    let mut t = agent.begin();
    for _ in 0..n {
        let mode = if rng.below(16) < x_in_16 { Mode::X } else { Mode::S };
        // Uniform over a million rows, one agent: nothing conflicts.
        t.lock(LockId::row(T, rng.below(ROWS)), mode).unwrap();
    }
    t.commit().unwrap();
}

/// Runs transactions until `done` (at most `max`); how many it took.
fn until(agent: &mut Agent, rng: &mut Rng, x_in_16: u64, max: u32, done: impl Fn() -> bool) -> Option<u32> {
    (1..=max).find(|_| {
        txn(agent, rng, 16, x_in_16);
        done()
    })
}

#[test]
fn auto_turns_off_under_updates_and_on_again_under_reads() {
    for kind in KINDS {
        let lm = manager(kind);
        assert!(lm.fast_rows_on(), "{kind}: the switch starts on");
        let mut a = lm.agent();
        let mut rng = Rng::new(1);
        // Half the row locks X: stripes shut, S requests turned away.
        let off = until(&mut a, &mut rng, 8, 20_000, || !lm.fast_rows_on());
        assert!(off.is_some(), "{kind}: still on after 20,000 update transactions");
        assert_eq!(lm.fast_rows_turned_off(), 1, "{kind}");
        // Off: S locks go to the table, one at a time or in a batch.
        let before = lm.stats().fast_ops;
        txn(&mut a, &mut rng, 16, 0);
        let off_ops = lm.stats().fast_ops - before;
        let before = lm.stats().fast_ops;
        let mut t = a.begin();
        let batch: Vec<_> = (0..16).map(|k| (LockId::row(T, 2 * ROWS + k), Mode::S)).collect();
        t.lock_all(&batch).unwrap();
        t.commit().unwrap();
        assert_eq!(
            lm.stats().fast_ops - before,
            off_ops,
            "{kind}: a batch's rows go to the table too"
        );
        // Reads only: on again after the patience (two windows now) and
        // the grace period (this agent's transaction at the turn).
        let on = until(&mut a, &mut rng, 0, 20_000, || lm.fast_rows_on());
        assert!(on.is_some(), "{kind}: still off after 20,000 read-only transactions");
        let before = lm.stats().fast_ops;
        txn(&mut a, &mut rng, 16, 0);
        let on_ops = lm.stats().fast_ops - before;
        assert!(
            on_ops >= off_ops + 16,
            "{kind}: rows held fast again ({off_ops} -> {on_ops})"
        );
        drop(a);
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
    }
}

/// The request classes (a profiling aid) leave the switch as it is: one
/// agent's transactions turn it off under updates and on again under reads
/// after the same number of transactions with them as without, and are
/// granted as many row S locks on the fast path.
#[test]
fn the_request_classes_turn_the_switch_as_without_them() {
    for kind in KINDS {
        let runs: Vec<_> = [false, true]
            .into_iter()
            .map(|classes| {
                let lm = manager_classes(kind, classes);
                let mut a = lm.agent();
                let mut rng = Rng::new(4);
                let off = until(&mut a, &mut rng, 8, 20_000, || !lm.fast_rows_on());
                let on = until(&mut a, &mut rng, 0, 20_000, || lm.fast_rows_on());
                // A while on, under reads.
                for _ in 0..100 {
                    txn(&mut a, &mut rng, 16, 0);
                }
                drop(a);
                assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
                (off, on, lm.fast_rows_turned_off(), lm.stats().fast_ops)
            })
            .collect();
        let (without, with) = (runs[0], runs[1]);
        assert!(
            without.0.is_some() && without.1.is_some(),
            "{kind}: did not turn off and on: {without:?}"
        );
        // With the classes a fast grant takes the table's request path
        // with a node and is counted a fast operation there.
        assert_eq!(
            without, with,
            "{kind}: (transactions to turn off, then on, turns off, fast operations) without the classes, then with them"
        );
    }
}

/// A transaction that took X on a row while the switch was off (counted
/// nowhere) keeps it from turning on until it ends, and meanwhile an S on
/// its row goes to the table, which refuses it.
#[test]
fn an_uncounted_writer_in_progress_keeps_the_switch_from_turning_on() {
    for kind in KINDS {
        let lm = manager(kind);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut rng = Rng::new(2);
        until(&mut b, &mut rng, 8, 20_000, || !lm.fast_rows_on()).expect("turned off");
        let row = LockId::row(T, ROWS + 1);
        let mut ta = a.begin();
        ta.lock(row, Mode::X).unwrap();
        // Far more read-only windows than arming and a look need.
        for _ in 0..2_000 {
            txn(&mut b, &mut rng, 16, 0);
        }
        assert!(
            !lm.fast_rows_on(),
            "{kind}: on while an uncounted writer is in progress"
        );
        let mut tb = b.begin();
        match tb.lock_with(row, Mode::S, Wait::NoWait) {
            Err(LockError::WouldBlock { holder, .. }) => assert_eq!(holder, ta.id(), "{kind}"),
            other => panic!("{kind}: an S beside the uncounted X: {other:?}"),
        }
        tb.abort();
        ta.commit().unwrap();
        until(&mut b, &mut rng, 0, 20_000, || lm.fast_rows_on()).expect("on once the writer ended");
        // On: a writer is counted, and a reader of its row waits for it.
        let mut ta = a.begin();
        ta.lock(row, Mode::X).unwrap();
        let mut tb = b.begin();
        assert!(
            tb.lock_with(row, Mode::S, Wait::NoWait).is_err(),
            "{kind}: S beside a counted X"
        );
        tb.abort();
        ta.commit().unwrap();
        drop((a, b));
        assert!(lm.snapshot().locks.is_empty(), "{kind}: {}", lm.snapshot());
    }
}

/// Transactions each thread runs at most in the test below: ten phases,
/// where two turns off and one on need four.
const SWITCH_TXNS: u64 = 30_000;

/// Four threads over 64 rows, in phases that update and phases that only
/// read, so that the switch turns off and on while they run: no two
/// incompatible grants, and nothing left behind. The turns are bounded by
/// the transactions run, not by time (a loaded machine only slows them);
/// the minute bounds each thread's exit after the turns (a lost wake-up or
/// a hang would keep it). With the request classes too, under which fast
/// holds take request nodes and the switch counts after the table's answer.
#[test]
fn no_incompatible_grants_across_the_switchs_turns() {
    for (kind, classes) in KINDS.into_iter().flat_map(|k| [(k, false), (k, true)]) {
        let lm = manager_classes(kind, classes);
        let ghost = Arc::new(Ghost::default());
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU32::new(0));
        // Set by the first thread that sees the switch on after two turns
        // off: the workers look after every transaction, since in a
        // release build the switch may stay on for less than a
        // millisecond before the next update phase turns it off again.
        let turned = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let (lm, ghost, stop, done, turned) = (
                    lm.clone(),
                    Arc::clone(&ghost),
                    Arc::clone(&stop),
                    Arc::clone(&done),
                    Arc::clone(&turned),
                );
                thread::spawn(move || {
                    let mut agent = lm.agent();
                    let mut rng = Rng::new(10 + i);
                    let mut n = 0u64;
                    while n < SWITCH_TXNS && !stop.load(Ordering::Relaxed) {
                        // Phases of 3,000 transactions: updates, then reads.
                        let x_in_16 = if (n / 3_000).is_multiple_of(2) { 8 } else { 0 };
                        n += 1;
                        let mut t = agent.begin();
                        let mut ok = true;
                        for _ in 0..8 {
                            let mode = if rng.below(16) < x_in_16 { Mode::X } else { Mode::S };
                            let row = LockId::row(T, rng.below(64));
                            match t.lock(row, mode) {
                                Ok(()) => ghost.register(t.id(), row, mode),
                                Err(_) => {
                                    ok = false;
                                    break;
                                }
                            }
                        }
                        ghost.unregister_all(t.id());
                        if ok {
                            t.commit().unwrap();
                        } else {
                            t.abort();
                        }
                        if lm.fast_rows_turned_off() >= 2 && lm.fast_rows_on() {
                            turned.store(true, Ordering::Relaxed);
                        }
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        // Until the switch has turned off twice and is on again, or every
        // thread has run its transactions (then the turns are missing).
        while !turned.load(Ordering::Relaxed) && done.load(Ordering::Relaxed) < 4 {
            thread::sleep(Duration::from_millis(5));
        }
        stop.store(true, Ordering::Relaxed);
        for (i, t) in threads.into_iter().enumerate() {
            within_a_minute(
                &format!("{kind} (classes {classes}): thread {i} after the turns"),
                move || t.join().unwrap(),
            );
        }
        assert!(
            turned.load(Ordering::Relaxed),
            "{kind} (classes {classes}): turned off {} times, on {}",
            lm.fast_rows_turned_off(),
            lm.fast_rows_on()
        );
        ghost.assert_clean();
        assert!(
            lm.snapshot().locks.is_empty(),
            "{kind} (classes {classes}): {}",
            lm.snapshot()
        );
    }
}

#[test]
fn on_and_off_do_not_turn() {
    for setting in [FastRows::On, FastRows::Off] {
        for kind in KINDS {
            let lm = LockManager::builder().table(kind).fast_rows(setting).build();
            let mut a = lm.agent();
            let mut rng = Rng::new(3);
            for _ in 0..2_000 {
                txn(&mut a, &mut rng, 16, 8);
            }
            assert_eq!(lm.fast_rows_on(), setting == FastRows::On, "{kind} {setting}");
            assert_eq!(lm.fast_rows_turned_off(), 0, "{kind} {setting}");
        }
    }
}
