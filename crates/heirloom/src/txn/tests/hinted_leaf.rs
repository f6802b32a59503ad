//! A row asked for under its parent's hint (`Transaction::lock_path`'s
//! leaf alone, `Transaction::lock_hinted`): a conversion of the leaf
//! forgets every hint, and the hinted path leaves the parent's again, as
//! the full walk leaves it.

use crate::cache::NO_HINT;
use crate::{LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

#[test]
fn a_leaf_converted_under_the_hint_leaves_the_hint_again() {
    for kind in TableKind::ALL {
        if kind == TableKind::NoLocking {
            continue;
        }
        let lm = LockManager::builder().table(kind).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        let slot = LockId::row(T, 1).hint_slot();
        t.lock(LockId::row(T, 1), Mode::S).unwrap(); // the walk: database, table, row
        let parent = t.agent.cache.hint(slot);
        assert_ne!(parent, NO_HINT, "{kind:?}: the walk left the table's entry");
        assert_eq!(t.agent.cache[parent as usize].id, LockId::table(T), "{kind:?}");
        t.lock(LockId::row(T, 2), Mode::S).unwrap(); // under the hint: a new leaf
        assert_eq!(t.agent.cache.hint(slot), parent, "{kind:?}");
        // Row 3 in X: the hint's IS does not cover IX, so the walk converts
        // the database and the table to IX and leaves the hint again.
        t.lock(LockId::row(T, 3), Mode::X).unwrap();
        let parent = t.agent.cache.hint(slot);
        assert_ne!(
            parent, NO_HINT,
            "{kind:?}: the walk left the hint after its conversions"
        );
        // Row 2, held in S, now in X: under the hint, a conversion of the
        // leaf, which forgets every hint on its way.
        t.lock(LockId::row(T, 2), Mode::X).unwrap();
        assert_eq!(t.held_mode(LockId::row(T, 2)), Some(Mode::X), "{kind:?}");
        assert_eq!(t.agent.cache.hint(slot), parent, "{kind:?}: the hint left again");
        t.commit().unwrap();
    }
}
