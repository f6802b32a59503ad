//! Waiting for a state instead of sleeping and hoping it came: the one
//! polling helper of the integration tests (`tests/common/mod.rs`) and the
//! unit tests (`src/txn/tests/common.rs`, which includes this file), so
//! that no test fails, or passes without testing anything, because the
//! machine was slow.

use std::thread;
use std::time::{Duration, Instant};

/// How long a test waits for a state before it fails: generous, for a
/// loaded machine.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Polls `done` every millisecond until it holds; fails with `what` after
/// [`LIMIT`].
pub fn until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < LIMIT, "{what}");
        thread::sleep(Duration::from_millis(1));
    }
}
