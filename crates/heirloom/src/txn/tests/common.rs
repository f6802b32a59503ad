//! What the forced-schedule tests share.

use crate::{LockId, LockManager};

#[path = "../../../tests/common/poll.rs"]
mod poll;
pub(crate) use poll::{LIMIT, until};

/// Waits until somebody waits for `lock` (the snapshot shows a waiter);
/// fails with `what` after [`LIMIT`].
pub(crate) fn until_waiting(lm: &LockManager, lock: LockId, what: &str) {
    until(what, || {
        lm.snapshot()
            .locks
            .iter()
            .any(|l| l.lock == lock && !l.waiters.is_empty())
    });
}
