//! Conflict policies: what a request does when it cannot be granted at
//! once. The policies themselves run in `Transaction::wait` (txn.rs) and
//! `deadlock.rs`; this is their public name.

use std::time::Duration;

/// What a request does when it cannot be granted at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ConflictPolicy {
    /// Wait; when a request blocks, look for a waits-for cycle and abort the
    /// requester if it closes one ([`LockError::Deadlock`](crate::LockError)).
    #[default]
    Detect,
    /// Wait at most this long, then fail with a timeout (deadlocks are
    /// broken by the timeout).
    Timeout(Duration),
    /// Never wait: fail at once so that the caller restarts.
    NoWait,
    /// Wait-die: an older requester waits for younger holders; a younger
    /// one dies. Ages survive restarts in `Agent::run`, so every transaction
    /// eventually becomes the oldest.
    WaitDie,
    /// Wound-wait: an older requester wounds younger holders (they fail at
    /// their next lock call or while waiting); a younger one waits.
    WoundWait,
}

impl ConflictPolicy {
    /// The name used on command lines and in reports.
    pub fn name(&self) -> String {
        match self {
            ConflictPolicy::Detect => "detect".into(),
            ConflictPolicy::Timeout(d) => format!("timeout={}ms", d.as_millis()),
            ConflictPolicy::NoWait => "nowait".into(),
            ConflictPolicy::WaitDie => "waitdie".into(),
            ConflictPolicy::WoundWait => "woundwait".into(),
        }
    }

    pub(crate) fn uses_age(&self) -> bool {
        matches!(self, ConflictPolicy::WaitDie | ConflictPolicy::WoundWait)
    }
}

impl std::str::FromStr for ConflictPolicy {
    type Err = String;

    /// `detect`, `nowait`, `waitdie`, `woundwait`, `timeout` (10 ms) or
    /// `timeout=N` (N milliseconds).
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "detect" => Ok(ConflictPolicy::Detect),
            "nowait" => Ok(ConflictPolicy::NoWait),
            "waitdie" => Ok(ConflictPolicy::WaitDie),
            "woundwait" => Ok(ConflictPolicy::WoundWait),
            "timeout" => Ok(ConflictPolicy::Timeout(Duration::from_millis(10))),
            _ => match s.strip_prefix("timeout=").map(str::parse::<u64>) {
                Some(Ok(ms)) => Ok(ConflictPolicy::Timeout(Duration::from_millis(ms))),
                _ => Err(format!(
                    "unknown conflict policy `{s}` (expected detect, timeout, timeout=MS, nowait, waitdie or woundwait)"
                )),
            },
        }
    }
}
