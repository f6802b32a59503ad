//! heirloom: a lock manager for multicore OLTP engines.
//!
//! Hierarchical two-phase locking (IS, IX, S, SIX, X, and U for
//! read-then-write) over a lock table of your choice, with upgrades,
//! waiting, deadlock handling and conflict policies, per-call waiting
//! (no-wait, timeouts, skip-locked), early release, lock escalation under a
//! memory cap, transaction locks, monitoring and per-agent statistics.
//!
//! ```
//! use heirloom::{LockId, LockManager, Mode, TableId, TableKind, ConflictPolicy};
//!
//! const SUBSCRIBER: TableId = TableId::new(0, 1);
//! let lm = LockManager::builder().table(TableKind::Latched).conflicts(ConflictPolicy::Detect).build();
//! let mut agent = lm.agent(); // one per worker thread
//! let mut txn = agent.begin();
//! txn.lock(LockId::row(SUBSCRIBER, 42), Mode::S)?; // IS on table and database first
//! assert_eq!(txn.held_mode(LockId::table(SUBSCRIBER)), Some(Mode::IS));
//! txn.commit()?;
//! let n = agent.run(|txn| {
//!     txn.lock(LockId::row(SUBSCRIBER, 7), Mode::X)?;
//!     Ok::<_, heirloom::LockError>(1)
//! })?;
//! assert_eq!(n, 1);
//! assert!(lm.snapshot().is_empty());
//! # Ok::<(), heirloom::LockError>(())
//! ```
//!
//! The maintainers' guide is `crates/heirloom/README.md`.

#![warn(unsafe_op_in_unsafe_fn, missing_docs)]

// The latch-free table's models need crossbeam-epoch on loom as well.
#[cfg(all(heirloom_loom, not(crossbeam_loom)))]
compile_error!("loom builds need `--cfg crossbeam_loom` next to `--cfg heirloom_loom` (see .ci/run)");

mod agent;
mod cache;
mod deadlock;
mod error;
mod fault;
mod gate;
mod id;
mod inherit;
mod latch;
mod manager;
mod misuse;
mod mode;
mod monitor;
mod nodes;
mod policy;
pub mod probe;
mod queue;
mod request;
mod shared;
pub mod sharing;
mod stats;
mod sync;
mod table;
mod txn;

pub use agent::Agent;
pub use error::{Cycle, LockError, Restart, TxnId, WaitEdge};
pub use heirloom_rtm::{self as rtm, ElisionStats};
pub use id::{Level, LockId, MAX_DEPTH, Path, TableId};
pub use inherit::Inheritance;
pub use manager::{
    Builder, DEFAULT_DEADLOCK_TIMEOUT, DEFAULT_MAX_RESTARTS, DEFAULT_SPIN_BEFORE_PARK, FastRows, LockManager,
    RECOMMENDED_KEEP_INHERITED,
};
#[doc(hidden)]
pub use misuse::BLOCKED_BY_OWN_THREAD;
pub use mode::{ALL_MODES, COMPATIBLE, MODE_COUNT, Mode, SUPREMUM};
pub use monitor::{Holder, LockInfo, Snapshot, Waiter};
pub use policy::{ConflictPolicy, Wait};
pub use stats::Stats;
pub use table::{
    DEFAULT_BUCKETS, LATCHFREE_BUCKETS_DEFAULT_MOST, LATCHFREE_BUCKETS_PER_CORE, MAX_BUCKETS, TableKind,
    default_buckets, default_latchfree_buckets,
};
pub use txn::{LockFuture, Transaction};
