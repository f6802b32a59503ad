//! A waiter spins before it parks only while the manager's agents fit its
//! cores, as `Builder::cores` tells them: the same two-agent wait, on a
//! manager told of two cores and of one. After a wait that could spin the
//! agent's spin budget moves (`adapt_spin`; a 20-ms wait, far over the
//! bound, moves it towards the floor); after one that could not it stays.

use std::thread;
use std::time::Duration;

use super::common::until_waiting;
use crate::{ConflictPolicy, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

/// The waiter's spin budget before and after it waited about 20 ms for an
/// X that another agent held, on a manager told of `cores` cores.
fn budget_around_a_wait(kind: TableKind, cores: usize) -> (u64, u64) {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::Detect)
        .cores(cores)
        .build();
    let row = LockId::row(T, 1);
    let mut holder = lm.agent();
    let mut waiter = lm.agent();
    let before = waiter.waiting.spin_ns;
    let mut h = holder.begin();
    h.lock(row, Mode::X).unwrap();
    thread::scope(|s| {
        let w = s.spawn(|| {
            let mut t = waiter.begin();
            t.lock(row, Mode::X).unwrap();
            t.commit().unwrap();
        });
        until_waiting(&lm, row, "the waiter waits");
        thread::sleep(Duration::from_millis(20));
        h.commit().unwrap();
        w.join().unwrap();
    });
    (before, waiter.waiting.spin_ns)
}

#[test]
fn a_waiter_spins_only_while_the_agents_fit_the_cores_it_is_told_of() {
    for kind in [TableKind::Latched, TableKind::LatchFree] {
        let (before, after) = budget_around_a_wait(kind, 2);
        assert!(
            after < before,
            "{kind}: two agents on two cores spin, and a long wait lowers the budget: {before} -> {after} ns"
        );
        let (before, after) = budget_around_a_wait(kind, 1);
        assert_eq!(
            before, after,
            "{kind}: two agents on one core never spin, so the budget stays"
        );
    }
}
