//! An X request on a table is granted while many threads keep taking IS and
//! IX on it: once X waits, later IS/IX requests queue behind it.

mod common;

use std::time::Duration;

use heirloom::{ConflictPolicy, LockManager, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

#[test]
fn x_is_not_starved_by_intention_locks() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .build();
        // Eight overlapping holders of 500 us: only the queue rule lets X in.
        assert!(
            common::x_granted_under_intention_stream(&lm, T, Duration::from_micros(500)),
            "{kind:?}: X on the table starved behind IS/IX"
        );
        assert!(lm.snapshot().is_empty());
    }
}
