//! The interface's integer constants: result codes, table kinds, conflict
//! policies, waits, modes and lock levels.

/// Success.
pub const HEIRLOOM_OK: i32 = 0;
/// `HEIRLOOM_WAIT_SKIP`: the lock is held by others; the transaction goes
/// on without it (not an error).
pub const HEIRLOOM_BUSY: i32 = 1;
/// The request closed a waits-for cycle; this transaction is the victim
/// (`heirloom_message` names the cycle). Abort and retry.
pub const HEIRLOOM_EDEADLOCK: i32 = 2;
/// The lock was not granted in time. Abort and retry.
pub const HEIRLOOM_ETIMEOUT: i32 = 3;
/// No-wait: the lock was held by others. Abort and retry.
pub const HEIRLOOM_EWOULDBLOCK: i32 = 4;
/// Wait-die: the younger requester dies. Abort and retry.
pub const HEIRLOOM_EDIED: i32 = 5;
/// Wound-wait: an older transaction wounded this one. Abort and retry.
pub const HEIRLOOM_EWOUNDED: i32 = 6;
/// An earlier error doomed the transaction: abort it.
pub const HEIRLOOM_EDOOMED: i32 = 7;
/// `heirloom_unlock` of a lock not held, or with a descendant still held.
pub const HEIRLOOM_ENOTHELD: i32 = 8;
/// The lock-memory cap (`max_locks`) is reached and escalation freed
/// nothing. Not restartable; it dooms the transaction: abort it.
pub const HEIRLOOM_ENOLOCKMEM: i32 = 9;
/// Server table: the lock server of the lock's partition has failed.
pub const HEIRLOOM_ESERVER: i32 = 10;
/// A null or freed handle, a null pointer argument, or a value out of
/// range (a mode, level or option); nothing changed.
pub const HEIRLOOM_EINVAL: i32 = 11;
/// A call out of order (no transaction open, or one already open), or an
/// agent entered by two threads at once; nothing changed. Also a lock
/// request without a time limit that would wait for a transaction whose
/// last call ran on this same thread (on another agent), which only this
/// thread could go on with: the request is withdrawn and its transaction
/// doomed (abort it), instead of a wait that never ends.
pub const HEIRLOOM_EMISUSE: i32 = 12;
/// A panic inside the library (a bug) was caught; the agent's transaction
/// was aborted and the agent is unusable (free it).
pub const HEIRLOOM_EPANIC: i32 = 13;
/// `heirloom_lock_start`, `heirloom_lock_poll`: the request waits; its
/// `ready` callback is called when to poll it again (not an error).
pub const HEIRLOOM_PENDING: i32 = 14;

/// Table kinds (`heirloom_options.table`).
pub const HEIRLOOM_TABLE_GLOBAL: u32 = 0;
/// The latched table (Shore-MT's), the default.
pub const HEIRLOOM_TABLE_LATCHED: u32 = 1;
/// The latch-free table (compare-and-swap append).
pub const HEIRLOOM_TABLE_LATCHFREE: u32 = 2;
/// The latch-free table with the swap append.
pub const HEIRLOOM_TABLE_LATCHFREE_SWAP: u32 = 3;
/// Lock-server threads (`heirloom_options.partitions` of them).
pub const HEIRLOOM_TABLE_SERVER: u32 = 4;
/// The global table with its latch elided by Intel RTM.
pub const HEIRLOOM_TABLE_GLOBAL_HTM: u32 = 5;
/// The latched table with its head latches elided by Intel RTM.
pub const HEIRLOOM_TABLE_LATCHED_HTM: u32 = 6;
/// No lock table: every lock call succeeds at once and takes nothing (no
/// isolation). The ceiling a lock manager is measured against: an
/// engine's throughput with it is what the engine does without locking.
pub const HEIRLOOM_TABLE_NONE: u32 = 7;
/// The latched table whose heads follow the agents that use them (a
/// release that empties a head takes it into the agent's spares).
pub const HEIRLOOM_TABLE_LATCHED_SPARES: u32 = 8;

/// Conflict policies (`heirloom_options.policy`): deadlock detection.
pub const HEIRLOOM_POLICY_DETECT: u32 = 0;
/// Wait at most `heirloom_options.policy_timeout_us`.
pub const HEIRLOOM_POLICY_TIMEOUT: u32 = 1;
/// Never wait.
pub const HEIRLOOM_POLICY_NOWAIT: u32 = 2;
/// Wait-die.
pub const HEIRLOOM_POLICY_WAITDIE: u32 = 3;
/// Wound-wait.
pub const HEIRLOOM_POLICY_WOUNDWAIT: u32 = 4;

/// Per-call waiting (`heirloom_lock_with`): as the manager's policy.
pub const HEIRLOOM_WAIT_POLICY: u32 = 0;
/// Never wait: fail with `HEIRLOOM_EWOULDBLOCK` (dooms the transaction).
pub const HEIRLOOM_WAIT_NOWAIT: u32 = 1;
/// Wait at most the call's `timeout_us`, then `HEIRLOOM_ETIMEOUT`.
pub const HEIRLOOM_WAIT_TIMEOUT: u32 = 2;
/// Never wait and do not fail: `HEIRLOOM_BUSY` (SQL's SKIP LOCKED).
pub const HEIRLOOM_WAIT_SKIP: u32 = 3;

/// Lock modes. No lock (only ever returned by `heirloom_held_mode`).
pub const HEIRLOOM_NL: u32 = 0;
/// Intention shared.
pub const HEIRLOOM_IS: u32 = 1;
/// Intention exclusive.
pub const HEIRLOOM_IX: u32 = 2;
/// Shared.
pub const HEIRLOOM_S: u32 = 3;
/// Shared with intention exclusive.
pub const HEIRLOOM_SIX: u32 = 4;
/// Exclusive.
pub const HEIRLOOM_X: u32 = 5;
/// Update (read now, write later).
pub const HEIRLOOM_U: u32 = 6;

/// Lock levels (`heirloom_lock_id.level`): the database `db`.
pub const HEIRLOOM_DATABASE: u32 = 0;
/// Table `table` of database `db`.
pub const HEIRLOOM_TABLE: u32 = 1;
/// Page `key` of the table (`key` below 2^32; a larger one is refused with
/// `HEIRLOOM_EINVAL`).
pub const HEIRLOOM_PAGE: u32 = 2;
/// Row `key` of the table (its parent is the table).
pub const HEIRLOOM_ROW: u32 = 3;
/// Row of a page: page `key >> 32`, slot `key & 0xffffffff` (its parent is
/// the page).
pub const HEIRLOOM_PAGED_ROW: u32 = 4;
