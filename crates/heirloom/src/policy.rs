//! Conflict policies: what a request does when it cannot be granted at
//! once. The policies themselves are judged in `txn/policy.rs` (while
//! `Transaction::wait`, `txn/wait.rs`, waits) and
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
    /// one dies. Ages survive restarts in `Agent::run` (and in
    /// `Agent::retry`), so every transaction eventually becomes the oldest.
    ///
    /// The requester compares its age with every request in its way: the
    /// granted ones it conflicts with and the waiting ones queued ahead of
    /// it that it conflicts with (first come, first served), and dies if
    /// any is older. Waiters are served in arrival order, so a younger
    /// request that waited behind an older waiter would come to wait for
    /// it, an edge from young to old that wait-die exists to rule out.
    /// DBx1000's WAIT_DIE rules that edge out by its queue's order
    /// instead: it keeps its waiters youngest first and compares a
    /// requester with the holders only, so a request that may wait goes
    /// ahead of every older waiter, and a request younger than every
    /// waiter is granted past them if the holders admit it. It dies less
    /// often (by how much: MEASUREMENTS.md, "What the row side costs a row
    /// X; wait-die's deaths by what stood in the way"), and a stream of
    /// younger readers can keep an older writer waiting, which arrival
    /// order rules out: an X queued behind readers stops the readers that
    /// come after it.
    ///
    /// A request is judged when it would wait, before it is linked: under
    /// the latch that decides it (the latched and global tables), or by a
    /// walk of the lock's list (the latch-free tables), as DBx1000's
    /// WAIT_DIE judges under the row's latch. A request that dies is so
    /// never seen waiting: nobody else judges itself against it, waits for
    /// it or is woken by its leaving. The server table links it and judges
    /// it as the wait begins. A waiter is judged again whenever it is woken
    /// without the grant (something ahead of it changed).
    WaitDie,
    /// Wound-wait: an older requester wounds younger holders; a younger one
    /// waits. A wounded holder fails at its next lock call while the
    /// agents' threads fit the cores
    /// ([`Builder::cores`](crate::Builder::cores)), and otherwise only at
    /// its next wait (granted at once, it goes on and may commit).
    ///
    /// Ages (both policies): a transaction's age is the time it began,
    /// in nanoseconds since the manager was built (at least one more than
    /// its agent's previous age), read from the monotonic clock, which no
    /// agent writes: taking an age writes no shared line. Ties between
    /// agents are broken by the agents' registry indexes
    /// ([`Agent::index`](crate::Agent::index)), the lower older
    /// (`queue::older`); an agent runs one transaction at a time, so no
    /// two live transactions are equally old. A transaction that began
    /// after another one's begin returned is younger, as the clock is
    /// monotonic across threads and advances between the two reads (on
    /// Linux it counts nanoseconds, and a begin takes longer than one; on
    /// a clock with coarser ticks two begins within one tick are ordered by
    /// their agents). A retry ([`Agent::retry`](crate::Agent::retry),
    /// [`Agent::run`](crate::Agent::run)) keeps its age while every new
    /// transaction's is later, so each transaction eventually becomes the
    /// oldest.
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

/// How one request waits when it cannot be granted at once
/// ([`Transaction::lock_with`](crate::Transaction::lock_with)): the
/// manager's policy, or an override for this call only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Wait {
    /// As the manager's [`ConflictPolicy`] says (bounded by the
    /// transaction's lock timeout, if it has one). What `lock` does.
    #[default]
    Policy,
    /// Never wait: fail at once with
    /// [`LockError::WouldBlock`](crate::LockError::WouldBlock), which dooms
    /// the transaction (SQL's `FOR UPDATE NOWAIT`).
    NoWait,
    /// Wait at most this long, then fail with
    /// [`LockError::Timeout`](crate::LockError::Timeout). Deadlock
    /// handling keeps running while it waits (detection, wait-die,
    /// wound-wait); under the `NoWait` and `Timeout` policies the timeout
    /// alone ends the wait. Also waits under a `NoWait` manager.
    Timeout(Duration),
    /// Never wait and do not fail the transaction: return
    /// [`LockError::Busy`](crate::LockError::Busy) and go on without the
    /// lock (SQL's `SKIP LOCKED`). Counted in `Stats::skipped`, not as a
    /// conflict abort. [`Transaction::try_lock`](crate::Transaction::try_lock)
    /// is this with a `bool`.
    Skip,
}
