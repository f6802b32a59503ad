//! Regression: two members of one deadlock that searched at the same
//! moment both found the cycle, both validated it (each saw the other
//! still waiting) and both gave up: one cycle, two victims, no survivor
//! (the C interface's duel test failed so in 4 runs of 5 in debug builds).
//! Now the first searcher to claim the cycle is its only victim
//! (`deadlock.rs`, "One victim per cycle").
//!
//! The schedule, forced with `fault::on_cycle_found`: `n` transactions
//! each hold row `i` in X and ask for row `i + 1` (mod `n`); every one of
//! them searches once `deadlock_timeout` has passed (all are waiting by
//! then), finds and validates the cycle, and waits at the hook until all
//! `n` searches are there. Then each claims the cycle: exactly one of them
//! may fail with the deadlock, and the others must be granted and commit.

use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::common::LIMIT;
use crate::fault;
use crate::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

/// Long enough that every member is waiting when the first one searches,
/// even on a loaded machine; the test asserts that all of them got to the
/// hook, so a schedule that was not forced fails instead of passing.
const FIRST_SEARCH: Duration = Duration::from_millis(500);

/// How long a search waits at the hook for the others.
const MEET: Duration = Duration::from_secs(10);

/// Counts the searches at the hook and lets them go together.
#[derive(Default)]
struct Meeting {
    arrived: Mutex<usize>,
    all: Condvar,
}

impl Meeting {
    fn arrive(&self, n: usize) {
        let mut a = self.arrived.lock().unwrap();
        *a += 1;
        self.all.notify_all();
        let deadline = Instant::now() + MEET;
        while *a < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return; // the test fails on the count below
            }
            a = self.all.wait_timeout(a, left).unwrap().0;
        }
    }
}

fn cycle(kind: TableKind, n: usize) {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::Detect)
        .deadlock_timeout(FIRST_SEARCH)
        .build();
    let start = Arc::new(Barrier::new(n));
    let meeting = Arc::new(Meeting::default());
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (lm, start, meeting) = (lm.clone(), start.clone(), meeting.clone());
            thread::spawn(move || {
                let mut a = lm.agent();
                let mut t = a.begin();
                t.lock(LockId::row(T, i as u64), Mode::X).unwrap();
                start.wait();
                fault::on_cycle_found(move || meeting.arrive(n));
                let r = t.lock(LockId::row(T, ((i + 1) % n) as u64), Mode::X);
                if r.is_ok() {
                    t.commit().unwrap();
                }
                r
            })
        })
        .collect();
    let began = Instant::now();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        began.elapsed() < LIMIT,
        "{kind:?}, {n}-cycle: took {:?}",
        began.elapsed()
    );
    let met = *meeting.arrived.lock().unwrap();
    assert_eq!(
        met, n,
        "{kind:?}, {n}-cycle: only {met} of {n} searches reached the claim together (schedule not forced)"
    );
    let victims: Vec<_> = results.iter().filter(|r| r.is_err()).collect();
    assert_eq!(
        victims.len(),
        1,
        "{kind:?}, {n}-cycle: one victim per cycle, got {results:?}"
    );
    match victims[0] {
        Err(LockError::Deadlock { cycle, .. }) => {
            assert_eq!(cycle.0.len(), n, "{kind:?}: the whole cycle in the error: {cycle:?}")
        }
        e => panic!("{kind:?}, {n}-cycle: the victim must fail with the deadlock, got {e:?}"),
    }
    let s = lm.stats();
    assert_eq!(s.deadlocks, 1, "{kind:?}, {n}-cycle: one deadlock counted");
    assert!(
        s.cycles_rejected >= n as u64 - 1,
        "{kind:?}, {n}-cycle: every other finder rejected the claimed cycle ({} rejections)",
        s.cycles_rejected
    );
    assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
}

#[test]
fn two_members_who_find_one_cycle_at_once_make_one_victim() {
    for kind in TableKind::ALL {
        cycle(kind, 2);
    }
}

#[test]
fn three_members_who_find_one_cycle_at_once_make_one_victim() {
    for kind in TableKind::ALL {
        cycle(kind, 3);
    }
}
