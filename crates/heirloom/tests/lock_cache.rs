//! The lock cache's short cuts give the answers of the full hierarchy walk:
//! the held-lock filter (a lock not in the cache is known absent without a
//! scan), the scan and index of long transactions, and the parent hint (a
//! sibling's request starts at the parent the last walk found). Every table
//! kind, with and without inheritance.

use heirloom::{Inheritance, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);
const U: TableId = TableId::new(0, 2);

fn managers() -> Vec<LockManager> {
    let mut v = Vec::new();
    for k in TableKind::ALL {
        for sli in [Inheritance::Off, Inheritance::On] {
            v.push(LockManager::builder().table(k).inheritance(sli).build());
        }
    }
    v
}

#[test]
fn an_ancestor_locked_in_a_covering_mode_after_a_sibling_covers_the_next_sibling() {
    for lm in managers() {
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::X).unwrap(); // database IX, T IX
        t.lock(LockId::row(T, 2), Mode::X).unwrap(); // the hint: T's entry
        // The database now covers S below it; the table does not.
        t.lock(LockId::database(0), Mode::S).unwrap();
        assert_eq!(t.held_mode(LockId::database(0)), Some(Mode::SIX));
        let before = t.lock_count();
        t.lock(LockId::row(T, 3), Mode::S).unwrap();
        assert_eq!(t.held_mode(LockId::row(T, 3)), None, "{lm:?}: covered by the database");
        assert_eq!(t.lock_count(), before);
        // X is not covered: the row is locked under T's IX.
        t.lock(LockId::row(T, 4), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::row(T, 4)), Some(Mode::X));
        t.commit().unwrap();
        drop(a);
        assert!(lm.snapshot().is_empty(), "{lm:?}");
    }
}

#[test]
fn a_parent_converted_or_escalated_answers_for_its_rows() {
    for lm in managers() {
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(LockId::row(U, 1), Mode::S).unwrap();
        t.lock(LockId::row(U, 2), Mode::S).unwrap();
        // The table itself in S: covers S rows, not X rows.
        t.lock(LockId::table(U), Mode::S).unwrap();
        t.lock(LockId::row(U, 3), Mode::S).unwrap();
        assert_eq!(t.held_mode(LockId::row(U, 3)), None, "{lm:?}");
        t.lock(LockId::row(U, 4), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::table(U)), Some(Mode::SIX));
        assert_eq!(t.held_mode(LockId::row(U, 4)), Some(Mode::X));
        // A row unlocked and locked again (the entries after it moved).
        t.unlock(LockId::row(U, 1)).unwrap();
        assert_eq!(t.held_mode(LockId::row(U, 1)), None);
        t.lock(LockId::row(U, 5), Mode::X).unwrap();
        t.lock(LockId::row(U, 1), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::row(U, 1)), Some(Mode::X));
        assert_eq!(t.held_mode(LockId::row(U, 5)), Some(Mode::X));
        t.commit().unwrap();
        drop(a);
        assert!(lm.snapshot().is_empty(), "{lm:?}");
    }
}

#[test]
fn escalation_keeps_later_rows_covered() {
    for k in TableKind::ALL {
        let lm = LockManager::builder().table(k).escalate_after(4).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        for r in 0..6 {
            t.lock(LockId::row(T, r), Mode::X).unwrap();
        }
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::X), "{k:?}");
        t.lock(LockId::row(T, 100), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::row(T, 100)), None, "{k:?}");
        assert_eq!(t.lock_count(), 2, "{k:?}: database and table");
        t.commit().unwrap();
    }
}

/// Past the scan limit the index answers; every lock is found again (no
/// new table operation), found absent after its unlock, and held once.
#[test]
fn long_transactions_find_every_lock() {
    for lm in managers() {
        let mut a = lm.agent();
        for round in 0..3u64 {
            let mut t = a.begin();
            let rows = 200u64;
            for r in 0..rows {
                let table = if r % 3 == 0 { U } else { T };
                t.lock(
                    LockId::row(table, r + round),
                    if r % 2 == 0 { Mode::S } else { Mode::X },
                )
                .unwrap();
            }
            let ops = lm.stats().table_ops;
            for r in 0..rows {
                let table = if r % 3 == 0 { U } else { T };
                let id = LockId::row(table, r + round);
                t.lock(id, Mode::S).unwrap();
                assert!(t.held_mode(id).is_some(), "{lm:?}: {id}");
            }
            assert_eq!(lm.stats().table_ops, ops, "{lm:?}: every request answered by the cache");
            for r in (0..rows).step_by(7) {
                let table = if r % 3 == 0 { U } else { T };
                t.unlock(LockId::row(table, r + round)).unwrap();
            }
            for r in 0..rows {
                let table = if r % 3 == 0 { U } else { T };
                let id = LockId::row(table, r + round);
                assert_eq!(t.held_mode(id).is_none(), r % 7 == 0, "{lm:?}: {id}");
            }
            // Unlocked rows locked again, once each.
            for r in (0..rows).step_by(7) {
                let table = if r % 3 == 0 { U } else { T };
                t.lock(LockId::row(table, r + round), Mode::X).unwrap();
            }
            let n = t.lock_count();
            assert_eq!(n, rows as usize + 3, "{lm:?}: rows, two tables, the database");
            t.commit().unwrap();
        }
        drop(a);
        assert!(lm.snapshot().is_empty(), "{lm:?}");
    }
}

/// Inherited locks are in the cache from `begin`: the next transaction's
/// request for one (the table's intention lock; the fast path off, whose
/// holds are not inherited) finds it and reclaims it rather than asking
/// the table.
#[test]
fn inherited_locks_are_found_by_the_next_transaction() {
    for k in TableKind::ALL {
        let lm = LockManager::builder()
            .table(k)
            .inheritance(Inheritance::Always)
            .fast_path(false)
            .build();
        let mut a = lm.agent();
        for _ in 0..3 {
            let mut t = a.begin();
            t.lock(LockId::row(T, 1), Mode::S).unwrap();
            t.lock(LockId::row(T, 2), Mode::S).unwrap();
            t.commit().unwrap();
        }
        let s = lm.stats();
        assert!(s.inherited_used > 0, "{k:?}: {s:?}");
        let mut t = a.begin();
        let ops = lm.stats().table_ops;
        t.lock(LockId::table(T), Mode::IS).unwrap();
        assert_eq!(lm.stats().table_ops, ops, "{k:?}: reclaimed from the cache");
        t.commit().unwrap();
    }
}
