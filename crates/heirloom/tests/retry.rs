//! `Agent::retry` begins a transaction with the age of the agent's last
//! one: under wait-die a retried transaction stays older than those that
//! began after its first attempt, so they die against it, on every table.

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
