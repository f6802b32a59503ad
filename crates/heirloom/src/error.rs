//! Errors are values: what went wrong, to whom, on which lock.

use std::fmt;
use std::time::Duration;

use crate::id::LockId;
use crate::mode::Mode;

/// A transaction's id: the agent that ran it and that agent's sequence number.
/// Unique for the life of a lock manager; no shared counter is touched to
/// make one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnId(pub(crate) u64);

const SEQ_BITS: u32 = 40;

impl TxnId {
    pub(crate) fn new(agent: u32, seq: u64) -> Self {
        TxnId(((agent as u64 + 1) << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1)))
    }

    /// The index of the agent that runs this transaction.
    pub fn agent(&self) -> u32 {
        ((self.0 >> SEQ_BITS).wrapping_sub(1)) as u32
    }

    /// The transaction's sequence number on its agent.
    pub fn seq(&self) -> u64 {
        self.0 & ((1 << SEQ_BITS) - 1)
    }

    /// The raw value (for maps and output).
    pub fn as_u64(&self) -> u64 {
        self.0
    }
}

impl fmt::Debug for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >> SEQ_BITS == 0 {
            return f.write_str("T-"); // no transaction
        }
        write!(f, "T{}.{}", self.agent(), self.seq())
    }
}

impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

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
    /// Is this a concurrency abort that a retry may get past?
    pub fn is_restartable(&self) -> bool {
        !matches!(self, LockError::InvalidRequest { .. })
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
