//! Errors are values: what went wrong, to whom, on which lock.

use std::fmt;
use std::time::Duration;

use crate::id::LockId;
pub use crate::id::TxnId;
use crate::mode::Mode;

/// One edge of a waits-for cycle: `waiter` asks for `lock` in `mode` and
/// waits for `holder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitEdge {
    /// The waiting transaction.
    pub waiter: TxnId,
    /// The lock it waits for.
    pub lock: LockId,
    /// The mode it asked for (the target mode of a conversion).
    pub mode: Mode,
    /// A transaction whose request on `lock` blocks it.
    pub holder: TxnId,
}

/// A waits-for cycle, printed as `T0.1 -[db0.t1 X]-> T1.4 -[...]-> T0.1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle(pub Vec<WaitEdge>);

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i == 0 {
                write!(f, "{}", e.waiter)?;
            }
            write!(f, " -[{} {}]-> {}", e.lock, e.mode, e.holder)?;
        }
        Ok(())
    }
}

/// Why a lock request or a transaction failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// The request closed a waits-for cycle; `victim` (the requester) aborts.
    #[error("deadlock: {victim} is the victim of the cycle {cycle}")]
    Deadlock {
        /// The transaction chosen to abort.
        victim: TxnId,
        /// The whole cycle, starting at the victim.
        cycle: Cycle,
    },
    /// The request waited longer than the `Timeout` policy allows.
    #[error("{txn} timed out after {waited:?} waiting for {mode} on {lock}")]
    Timeout {
        /// The waiting transaction.
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// The mode asked for.
        mode: Mode,
        /// How long it waited.
        waited: Duration,
    },
    /// The `NoWait` policy: the request could not be granted at once.
    #[error("{txn} would block on {lock} ({mode}), held or awaited by {holder}")]
    WouldBlock {
        /// The requester.
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// The mode asked for.
        mode: Mode,
        /// One transaction in the way.
        holder: TxnId,
    },
    /// Wait-die: a younger requester met an older transaction and dies.
    #[error("{txn} died (wait-die) on {lock} ({mode}): {older} is older")]
    Died {
        /// The requester (younger).
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// The mode asked for.
        mode: Mode,
        /// The older transaction in the way.
        older: TxnId,
    },
    /// Wound-wait: an older transaction wounded this one.
    #[error("{txn} was wounded (wound-wait) by the older {by}")]
    Wounded {
        /// The wounded (younger) transaction.
        txn: TxnId,
        /// The older transaction that needs its locks.
        by: TxnId,
    },
    /// The transaction already failed with a concurrency error and must abort.
    #[error("{txn} already failed ({cause}) and must be aborted")]
    Doomed {
        /// The transaction.
        txn: TxnId,
        /// A short name of the first error.
        cause: &'static str,
    },
    /// [`Wait::Skip`](crate::Wait::Skip): the lock is held or awaited in a
    /// conflicting mode, so the request returned at once. The transaction
    /// is not doomed and goes on (the lock is not held).
    #[error("{txn} skipped {lock} ({mode}): held or awaited by {holder}")]
    Busy {
        /// The requester.
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// The mode asked for.
        mode: Mode,
        /// One transaction in the way.
        holder: TxnId,
    },
    /// [`Transaction::unlock`](crate::Transaction::unlock) of a lock this
    /// transaction does not hold explicitly (never taken, covered by an
    /// ancestor, or only inherited and not used). Nothing changed.
    #[error("{txn} cannot unlock {lock}: not held")]
    NotHeld {
        /// The transaction.
        txn: TxnId,
        /// The lock.
        lock: LockId,
    },
    /// [`Transaction::unlock`](crate::Transaction::unlock) of a lock whose
    /// descendant is still held: release the descendants first. Nothing
    /// changed.
    #[error("{txn} cannot unlock {lock}: it still holds {child} below it")]
    ChildrenHeld {
        /// The transaction.
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// A descendant still held.
        child: LockId,
    },
    /// The manager's cap on lock memory
    /// ([`Builder::max_locks`](crate::Builder::max_locks)) is reached and
    /// escalating this transaction's row locks freed nothing.
    #[error("{txn} is out of lock memory requesting {lock}: all {limit} lock requests are in use")]
    OutOfLockMemory {
        /// The requester.
        txn: TxnId,
        /// The lock asked for.
        lock: LockId,
        /// The cap, in lock requests.
        limit: usize,
    },
    /// Server table: the lock-server thread of the partition that owns
    /// `lock` failed (it panicked), so the request could not be served
    /// and the transaction must abort. Locks of the other partitions are
    /// served as before; this partition answers every later request with
    /// this error (see [`LockManager::failed_partitions`](crate::LockManager::failed_partitions)).
    /// A retry cannot get past it.
    #[error("{txn} cannot lock {lock}: the lock server of partition {partition} has failed")]
    ServerFailed {
        /// The requester.
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// The failed partition.
        partition: usize,
    },
    /// The request makes no sense (for instance a lock in mode NL).
    #[error("invalid request by {txn} on {lock}: {reason}")]
    InvalidRequest {
        /// The requester.
        txn: TxnId,
        /// The lock.
        lock: LockId,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl LockError {
    /// Is this a concurrency abort that a retry may get past? (Not: an
    /// invalid request, an unlock refused, lock memory exhausted, or a
    /// failed lock server.)
    pub fn is_restartable(&self) -> bool {
        !matches!(
            self,
            LockError::InvalidRequest { .. }
                | LockError::NotHeld { .. }
                | LockError::ChildrenHeld { .. }
                | LockError::OutOfLockMemory { .. }
                | LockError::ServerFailed { .. }
        )
    }

    /// A short, stable name of the variant.
    pub fn kind(&self) -> &'static str {
        match self {
            LockError::Deadlock { .. } => "deadlock",
            LockError::Timeout { .. } => "timeout",
            LockError::WouldBlock { .. } => "would-block",
            LockError::Died { .. } => "died",
            LockError::Wounded { .. } => "wounded",
            LockError::Doomed { .. } => "doomed",
            LockError::Busy { .. } => "busy",
            LockError::NotHeld { .. } => "not-held",
            LockError::ChildrenHeld { .. } => "children-held",
            LockError::OutOfLockMemory { .. } => "out-of-lock-memory",
            LockError::ServerFailed { .. } => "server-failed",
            LockError::InvalidRequest { .. } => "invalid-request",
        }
    }
}

/// Lets [`crate::Agent::run`] tell a concurrency abort (retry) from an
/// application error (give up) in the closure's own error type.
pub trait Restart {
    /// The lock error inside, if this error is one.
    fn lock_error(&self) -> Option<&LockError>;
}

impl Restart for LockError {
    fn lock_error(&self) -> Option<&LockError> {
        Some(self)
    }
}
