//! Statistics: kept per agent by its own thread, merged only when read.
//!
//! Each counter has a single writer (the agent's thread), so it is bumped
//! with a relaxed load and store, not a locked read-modify-write, and it
//! lives in the agent's own cache-padded block: no shared cache line is
//! written per operation. Readers see each counter at some recent value.

use crate::id::Level;
use crate::sync::{AtomicU64, Ordering};

// A counter's word (`sync::StatWord`): the crate's atomic, but `std`'s
// under loom, whose models need not switch threads at a bump that orders
// nothing. A counter whose raise does order something names its word
// `OrderingWord`, which loom sees.
use crate::sync::StatWord as Word;

/// The word of a counter read with [`Counter::get_acquire`]: the crate's
/// atomic in every build, loom's under loom.
type OrderingWord = AtomicU64;

/// A counter written by one thread and read by any.
#[derive(Default, Debug)]
pub(crate) struct Counter<W = Word>(W);

impl Counter<Word> {
    #[inline]
    pub(crate) fn bump(&self) {
        self.add(1);
    }

    #[inline]
    pub(crate) fn add(&self, n: u64) {
        // Relaxed: single writer (the owning agent's thread); readers only
        // want a recent value, and no other access is ordered by it.
        self.0
            .store(self.0.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

// Without loom the two words are one type, whose `get` is above.
#[cfg(heirloom_loom)]
impl Counter<OrderingWord> {
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl Counter<OrderingWord> {
    /// [`Counter::bump`] with a Release store: a reader that sees the new
    /// value with [`Counter::get_acquire`] follows what the writer did
    /// before (the row switch's grace period: `txn/row_switch.rs`).
    #[inline]
    pub(crate) fn bump_release(&self) {
        self.0
            .store(self.0.load(Ordering::Relaxed).wrapping_add(1), Ordering::Release);
    }

    #[inline]
    pub(crate) fn get_acquire(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

macro_rules! stats {
    ($($(#[$doc:meta])* $name:ident $(: $word:ty)?,)* ; levels: $($(#[$ldoc:meta])* $level:ident,)*) => {
        /// The counters of one agent (live, single-writer).
        #[derive(Default, Debug)]
        pub(crate) struct AgentCounters {
            $(pub(crate) $name: Counter $(<$word>)?,)*
            /// Lock-table operations by the level of their lock
            /// (`Level as usize`): the `levels` fields of [`Stats`].
            by_level: [Counter; 4],
        }

        impl AgentCounters {
            pub(crate) fn read(&self) -> Stats {
                let mut l = self.by_level.iter();
                let mut s = Stats {
                    table_ops: 0,
                    $($name: self.$name.get(),)*
                    $($level: l.next().map_or(0, Counter::<Word>::get),)*
                };
                s.table_ops = 0 $(+ s.$level)*;
                s
            }
        }

        /// A snapshot of lock manager statistics (of one agent, or merged).
        #[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct Stats {
            /// Operations on the lock table: acquisitions, conversions,
            /// releases (the sum of the `table_ops_*` levels).
            pub table_ops: u64,
            $($(#[$doc])* pub $name: u64,)*
            $($(#[$ldoc])* pub $level: u64,)*
        }

        impl Stats {
            /// Adds `other` into `self`.
            pub fn merge(&mut self, other: &Stats) {
                self.table_ops += other.table_ops;
                $(self.$name += other.$name;)*
                $(self.$level += other.$level;)*
            }

            /// `self - earlier`, counter by counter (for measuring an interval).
            pub fn since(&self, earlier: &Stats) -> Stats {
                Stats {
                    table_ops: self.table_ops.wrapping_sub(earlier.table_ops),
                    $($name: self.$name.wrapping_sub(earlier.$name),)*
                    $($level: self.$level.wrapping_sub(earlier.$level),)*
                }
            }

            /// Every counter with its name, in declaration order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![("table_ops", self.table_ops), $((stringify!($name), self.$name),)* $((stringify!($level), self.$level),)*]
            }
        }
    };
}

stats! {
    /// Transactions begun.
    begun: OrderingWord,
    /// Transactions committed.
    committed,
    /// Transactions aborted (by the caller, by drop, or after an error).
    aborted,
    /// `lock()` calls, including the intention locks taken on ancestors.
    lock_requests,
    /// Requests answered by the transaction's lock cache (already held, or
    /// covered by an ancestor's S/SIX/X) without touching the lock table.
    cache_hits,
    /// Acquisitions and conversions granted without waiting.
    immediate_grants,
    /// Requests that had to wait.
    waits,
    /// Latch acquisitions that found the latch held.
    latch_contended,
    /// Latch-free table: compare-and-swap operations that failed and were
    /// retried (its equivalent of `latch_contended`).
    cas_retries,
    /// Server table: messages sent to lock servers, each a round trip (a
    /// batch sends one per partition it concerns).
    messages,
    /// Deadlocks in which this agent's transaction was the victim.
    deadlocks,
    /// `Detect`: cycles this agent's deadlock searches found and then
    /// rejected, because a second look showed that one of their edges was
    /// gone (a waiter granted or gone between two reads), or that another
    /// member of the cycle had found it too and claimed it first (it is
    /// the cycle's one victim): each would have been a needless abort.
    cycles_rejected,
    /// Requests that timed out.
    timeouts,
    /// Requests refused at once by the no-wait policy.
    would_block,
    /// Requests made with `Wait::Skip` that returned `LockError::Busy`
    /// (not aborts: the transaction went on).
    skipped,
    /// Locks released before the end of their transaction
    /// (`Transaction::unlock`, and the release in `wait_for_txn`).
    unlocks,
    /// Lock escalations: a transaction's row and page locks under one
    /// table replaced by one table lock (`Builder::escalate_after`, or
    /// forced by `Builder::max_locks`).
    escalations,
    /// Row and page locks that escalations released.
    escalated_locks,
    /// Requests refused with `LockError::OutOfLockMemory`.
    out_of_lock_memory,
    /// `Transaction::wait_for_txn` calls (waits for another transaction to
    /// end).
    txn_waits,
    /// Wait-die: requests that died.
    died,
    /// Wound-wait: transactions of this agent that were wounded.
    wounded,
    /// Wound-wait: nanoseconds from the first wound of each of them to its
    /// death (the lock call or the wait that saw the wound): how long a
    /// wounded transaction kept its locks from its wounder.
    wound_delay_ns,
    /// Restarts performed by `Agent::run`, and retries begun by
    /// `Agent::retry`.
    restarts,
    /// Transactions run in exclusive mode (`Agent::run`, `Agent::restart`).
    exclusive_runs,
    /// Nanoseconds `Agent::run` spent in its backoff between an abort and
    /// the restart (yields and sleeps): neither lock manager work nor the
    /// transaction's own.
    backoff_ns,
    /// Transactions that were never committed, aborted or dropped (leaked
    /// with `mem::forget`): their agent released their locks when it began
    /// its next transaction or was dropped (they count as aborted too).
    forgotten,
    /// Locks passed on at commit or abort to the agent's next transaction.
    inherited,
    /// Inherited locks the next transaction used (reclaimed with one CAS).
    inherited_used,
    /// Inherited locks the next transaction did not use (released at its end).
    inherited_discarded,
    /// Inherited locks a conflicting requester invalidated first.
    inherited_invalidated,
    /// Inherited locks the next transaction did not use that stayed with
    /// the agent for the one after (`Builder::keep_inherited`; they count in
    /// `inherited` again).
    inherited_idle,
    /// Lock-table acquisitions and conversions, classified as the SLI
    /// paper's Figure 8 classifies lock requests: above row level (`high`)
    /// or a row, in a shared mode (IS, IX, S: what inheritance can pass on)
    /// or an exclusive one (SIX, X), and hot (the request found its latch
    /// held, or retried a compare-and-swap on the latch-free table) or
    /// cold. The server table has no latch, so its requests count cold.
    /// Counted only with `Builder::lock_classes(true)`.
    high_shared_hot,
    /// See `high_shared_hot`.
    high_shared_cold,
    /// See `high_shared_hot`.
    high_exclusive_hot,
    /// See `high_shared_hot`.
    high_exclusive_cold,
    /// See `high_shared_hot`.
    row_shared_hot,
    /// See `high_shared_hot`.
    row_shared_cold,
    /// See `high_shared_hot`.
    row_exclusive_hot,
    /// See `high_shared_hot`.
    row_exclusive_cold,
    /// Request nodes the agent allocated: its pool's growth while it warms
    /// up, and on the latch-free table while the epoch collector lags
    /// behind its releases for longer than its help (see `reclaim_helps`).
    nodes_allocated,
    /// Latch-free table: rounds in which the agent, short of request nodes
    /// with many on their way back from the epoch collector, helped the
    /// collector (handed over its batches, flushed, gave up the processor)
    /// instead of allocating. Oversubscribed, a thread preempted while
    /// pinned holds the epoch; these rounds keep memory bounded.
    reclaim_helps,
    /// Lock-table operations avoided by inheritance: an acquisition not done
    /// by a transaction that reclaimed an inherited lock, and a release not
    /// done by a commit that passed a lock on again without the latch.
    table_ops_avoided,
    /// Lock-table operations the intention-lock fast path served
    /// (`Builder::fast_path`): acquisitions, conversions and releases of
    /// fast holds, each a bit in the agent's own record and a load of the
    /// lock's word, with no latch, queue or list. A part of `table_ops`:
    /// `table_ops - fast_ops` are the operations on the table's shared
    /// state.
    fast_ops,
    ;
    levels:
    /// The part of `table_ops` on database locks (in the order of `Level`).
    table_ops_database,
    /// The part of `table_ops` on table locks.
    table_ops_table,
    /// The part of `table_ops` on page locks.
    table_ops_page,
    /// The part of `table_ops` on row locks.
    table_ops_row,
}

impl AgentCounters {
    /// Counts one lock-table operation on a lock of `level`.
    #[inline]
    pub(crate) fn table_op(&self, level: Level) {
        self.table_ops_at(level, 1);
    }

    /// Counts `n` lock-table operations on locks of `level`.
    #[inline]
    pub(crate) fn table_ops_at(&self, level: Level, n: u64) {
        self.by_level[level as usize].add(n);
    }

    /// The contention this agent has met so far (latches found held, CAS
    /// retries): a request is hot if it changes during the request.
    #[inline]
    pub(crate) fn contention(&self) -> u64 {
        self.latch_contended.get().wrapping_add(self.cas_retries.get())
    }

    /// Counts one lock-table request in its class (see `high_shared_hot`).
    #[cold]
    #[inline(never)]
    pub(crate) fn classify(&self, row: bool, shared: bool, hot: bool) {
        let c = match (row, shared, hot) {
            (false, true, true) => &self.high_shared_hot,
            (false, true, false) => &self.high_shared_cold,
            (false, false, true) => &self.high_exclusive_hot,
            (false, false, false) => &self.high_exclusive_cold,
            (true, true, true) => &self.row_shared_hot,
            (true, true, false) => &self.row_shared_cold,
            (true, false, true) => &self.row_exclusive_hot,
            (true, false, false) => &self.row_exclusive_cold,
        };
        c.bump();
    }
}

impl Stats {
    /// Lock-table operations on locks of `level` (a part of `table_ops`).
    pub fn table_ops_at(&self, level: Level) -> u64 {
        match level {
            Level::Database => self.table_ops_database,
            Level::Table => self.table_ops_table,
            Level::Page => self.table_ops_page,
            Level::Row => self.table_ops_row,
        }
    }

    /// Lock-table operations per committed transaction.
    pub fn table_ops_per_commit(&self) -> f64 {
        self.table_ops as f64 / self.committed.max(1) as f64
    }
}
