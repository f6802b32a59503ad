//! Probes: operations that measure a lock table's design
//! rather than lock anything (the `nullcs` micro-benchmark of the
//! multicore slides). Not part of locking: bring the trait into scope to
//! use them.
//!
//! ```
//! use heirloom::probe::NullSection;
//! use heirloom::{LockId, LockManager, TableId};
//!
//! let lm = LockManager::builder().build();
//! let mut agent = lm.agent();
//! agent.null_section(LockId::row(TableId::new(0, 1), 7));
//! assert!(lm.snapshot().is_empty());
//! ```

use crate::agent::Agent;
use crate::id::LockId;
use crate::table::LockTable;
use crate::txn::Transaction;

/// A null critical section in the lock table.
pub trait NullSection {
    /// Obtains exclusive access to the lock table's state for `id` and
    /// gives it up at once, doing nothing in between: the cost of a null
    /// critical section in the table's design, for micro-benchmarks. The
    /// latched tables take and drop the latch of the lock's head (global:
    /// the one latch); the latch-free table pins and runs its insert's
    /// compare-and-swap on the lock's bucket with no change; the server
    /// table sends a null message to the lock's server and waits for the
    /// reply; `TableKind::NoLocking` does nothing. No lock is taken and no
    /// statistic but the table's own (contended latches, messages)
    /// changes.
    fn null_section(&mut self, id: LockId);
}

impl NullSection for Agent {
    fn null_section(&mut self, id: LockId) {
        if self.lm.no_locks {
            return;
        }
        self.lm.table.null_section(self.shared.caller(), id);
    }
}

/// From inside a transaction: it takes no lock and does not change the
/// transaction.
impl NullSection for Transaction<'_> {
    fn null_section(&mut self, id: LockId) {
        self.agent_mut().null_section(id);
    }
}
