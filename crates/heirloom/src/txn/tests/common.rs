//! What the forced-schedule tests share.

use std::thread;
use std::time::{Duration, Instant};

use crate::{LockId, LockManager};

/// How long a forced schedule may take before its test fails.
pub(crate) const LIMIT: Duration = Duration::from_secs(20);

/// Waits until somebody waits for `lock` (the snapshot shows a waiter);
/// fails with `what` after [`LIMIT`].
pub(crate) fn until_waiting(lm: &LockManager, lock: LockId, what: &str) {
    let start = Instant::now();
    while !lm
        .snapshot()
        .locks
        .iter()
        .any(|l| l.lock == lock && !l.waiters.is_empty())
    {
        assert!(start.elapsed() < LIMIT, "{what}");
        thread::sleep(Duration::from_millis(1));
    }
}
