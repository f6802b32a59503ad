/*
 * heirloom.h: the C interface of heirloom, a lock manager for multicore
 * OLTP engines (hierarchical two-phase locking: IS, IX, S, SIX, X, U).
 * Generated from crates/heirloom-ffi/src/lib.rs; do not edit.
 *
 * Link with libheirloom_ffi.a (and -lpthread -ldl -lm) or
 * libheirloom_ffi.so. The header is C99 (it includes <stdint.h> and
 * <stdbool.h>) and C++; tests/header.rs compiles it alone with
 * -std=c99 -pedantic-errors and as C++.
 *
 * Ownership and threads:
 * - heirloom_manager_new makes a manager; free it with
 *   heirloom_manager_free, after every other call on it has returned.
 *   Its calls may come from any thread at once.
 * - heirloom_agent_new makes an agent (one per worker thread); free it with
 *   heirloom_agent_free, which aborts its open transaction. An agent is
 *   used by one thread at a time: two threads inside calls on one agent at
 *   once get HEIRLOOM_EMISUSE and change nothing. Between calls its open
 *   transaction may move to another thread (a thread pool's worker). A
 *   lock request without a time limit that would wait for a
 *   transaction whose last call ran on the same thread (on another agent)
 *   gets HEIRLOOM_EMISUSE instead of a wait that could never end; a
 *   thread pool's worker that puts a session down calls
 *   heirloom_agent_unbind, after which any thread may wait for it. Agents
 *   stay usable after their manager is freed.
 * - Strings from heirloom_*_json are the caller's: free them with
 *   heirloom_string_free. heirloom_message's string belongs to the agent
 *   and lives until the next call on it.
 * - A null or freed handle gets HEIRLOOM_EINVAL. A freed manager's few
 *   bytes are never reused; a freed agent's are, by a later
 *   heirloom_agent_new, and an agent handle carries a generation in its
 *   bits, so a freed agent handle is refused until its memory has been
 *   reused 2^23 times. Handles are opaque: never dereference them.
 * - Every call returns a code (HEIRLOOM_OK, HEIRLOOM_BUSY, or an error);
 *   heirloom_message says more. After a restartable error
 *   (heirloom_is_restartable) abort the transaction and begin it again
 *   with heirloom_restart (which keeps its age, backs off, and after
 *   max_restarts restarts in a row runs it alone), or with heirloom_retry
 *   (which only keeps its age) after a backoff of the caller's.
 * - No panic crosses this interface: one inside the library returns
 *   HEIRLOOM_EPANIC, aborts the agent's transaction (its locks go back) and
 *   leaves the agent unusable; heirloom_message says what the panic said
 *   and where. Nothing is printed on stderr unless HEIRLOOM_PRINT_PANICS
 *   is set in the environment (the first heirloom_manager_new installs a
 *   panic hook that keeps quiet about panics inside calls and passes every
 *   other panic to the hook before it).
 */


#ifndef HEIRLOOM_H
#define HEIRLOOM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/**
 * Success.
 */
#define HEIRLOOM_OK 0

/**
 * `HEIRLOOM_WAIT_SKIP`: the lock is held by others; the transaction goes
 * on without it (not an error).
 */
#define HEIRLOOM_BUSY 1

/**
 * The request closed a waits-for cycle; this transaction is the victim
 * (`heirloom_message` names the cycle). Abort and retry.
 */
#define HEIRLOOM_EDEADLOCK 2

/**
 * The lock was not granted in time. Abort and retry.
 */
#define HEIRLOOM_ETIMEOUT 3

/**
 * No-wait: the lock was held by others. Abort and retry.
 */
#define HEIRLOOM_EWOULDBLOCK 4

/**
 * Wait-die: the younger requester dies. Abort and retry.
 */
#define HEIRLOOM_EDIED 5

/**
 * Wound-wait: an older transaction wounded this one. Abort and retry.
 */
#define HEIRLOOM_EWOUNDED 6

/**
 * An earlier error doomed the transaction: abort it.
 */
#define HEIRLOOM_EDOOMED 7

/**
 * `heirloom_unlock` of a lock not held, or with a descendant still held.
 */
#define HEIRLOOM_ENOTHELD 8

/**
 * The lock-memory cap (`max_locks`) is reached and escalation freed
 * nothing. Not restartable; it dooms the transaction: abort it.
 */
#define HEIRLOOM_ENOLOCKMEM 9

/**
 * Server table: the lock server of the lock's partition has failed.
 */
#define HEIRLOOM_ESERVER 10

/**
 * A null or freed handle, a null pointer argument, or a value out of
 * range (a mode, level or option); nothing changed.
 */
#define HEIRLOOM_EINVAL 11

/**
 * A call out of order (no transaction open, or one already open), or an
 * agent entered by two threads at once; nothing changed. Also a lock
 * request without a time limit that would wait for a transaction whose
 * last call ran on this same thread (on another agent), which only this
 * thread could go on with: the request is withdrawn and its transaction
 * doomed (abort it), instead of a wait that never ends.
 */
#define HEIRLOOM_EMISUSE 12

/**
 * A panic inside the library (a bug) was caught; the agent's transaction
 * was aborted and the agent is unusable (free it).
 */
#define HEIRLOOM_EPANIC 13

/**
 * `heirloom_lock_start`, `heirloom_lock_poll`: the request waits; its
 * `ready` callback is called when to poll it again (not an error).
 */
#define HEIRLOOM_PENDING 14

/**
 * Table kinds (`heirloom_options.table`).
 */
#define HEIRLOOM_TABLE_GLOBAL 0

/**
 * The latched table (Shore-MT's), the default.
 */
#define HEIRLOOM_TABLE_LATCHED 1

/**
 * The latch-free table (compare-and-swap append).
 */
#define HEIRLOOM_TABLE_LATCHFREE 2

/**
 * The latch-free table with the swap append.
 */
#define HEIRLOOM_TABLE_LATCHFREE_SWAP 3

/**
 * Lock-server threads (`heirloom_options.partitions` of them).
 */
#define HEIRLOOM_TABLE_SERVER 4

/**
 * The global table with its latch elided by Intel RTM.
 */
#define HEIRLOOM_TABLE_GLOBAL_HTM 5

/**
 * The latched table with its head latches elided by Intel RTM.
 */
#define HEIRLOOM_TABLE_LATCHED_HTM 6

/**
 * No lock table: every lock call succeeds at once and takes nothing (no
 * isolation). The ceiling a lock manager is measured against: an
 * engine's throughput with it is what the engine does without locking.
 */
#define HEIRLOOM_TABLE_NONE 7

/**
 * The latched table whose heads follow the agents that use them (a
 * release that empties a head takes it into the agent's spares).
 */
#define HEIRLOOM_TABLE_LATCHED_SPARES 8

/**
 * Conflict policies (`heirloom_options.policy`): deadlock detection.
 */
#define HEIRLOOM_POLICY_DETECT 0

/**
 * Wait at most `heirloom_options.policy_timeout_us`.
 */
#define HEIRLOOM_POLICY_TIMEOUT 1

/**
 * Never wait.
 */
#define HEIRLOOM_POLICY_NOWAIT 2

/**
 * Wait-die.
 */
#define HEIRLOOM_POLICY_WAITDIE 3

/**
 * Wound-wait.
 */
#define HEIRLOOM_POLICY_WOUNDWAIT 4

/**
 * Per-call waiting (`heirloom_lock_with`): as the manager's policy.
 */
#define HEIRLOOM_WAIT_POLICY 0

/**
 * Never wait: fail with `HEIRLOOM_EWOULDBLOCK` (dooms the transaction).
 */
#define HEIRLOOM_WAIT_NOWAIT 1

/**
 * Wait at most the call's `timeout_us`, then `HEIRLOOM_ETIMEOUT`.
 */
#define HEIRLOOM_WAIT_TIMEOUT 2

/**
 * Never wait and do not fail: `HEIRLOOM_BUSY` (SQL's SKIP LOCKED).
 */
#define HEIRLOOM_WAIT_SKIP 3

/**
 * Lock modes. No lock (only ever returned by `heirloom_held_mode`).
 */
#define HEIRLOOM_NL 0

/**
 * Intention shared.
 */
#define HEIRLOOM_IS 1

/**
 * Intention exclusive.
 */
#define HEIRLOOM_IX 2

/**
 * Shared.
 */
#define HEIRLOOM_S 3

/**
 * Shared with intention exclusive.
 */
#define HEIRLOOM_SIX 4

/**
 * Exclusive.
 */
#define HEIRLOOM_X 5

/**
 * Update (read now, write later).
 */
#define HEIRLOOM_U 6

/**
 * Lock levels (`heirloom_lock_id.level`): the database `db`.
 */
#define HEIRLOOM_DATABASE 0

/**
 * Table `table` of database `db`.
 */
#define HEIRLOOM_TABLE 1

/**
 * Page `key` of the table (`key` below 2^32; a larger one is refused with
 * `HEIRLOOM_EINVAL`).
 */
#define HEIRLOOM_PAGE 2

/**
 * Row `key` of the table (its parent is the table).
 */
#define HEIRLOOM_ROW 3

/**
 * Row of a page: page `key >> 32`, slot `key & 0xffffffff` (its parent is
 * the page).
 */
#define HEIRLOOM_PAGED_ROW 4

/**
 * An agent: one worker's access to a manager, with at most one open
 * transaction. Opaque; used by one thread at a time.
 */
typedef struct heirloom_agent heirloom_agent;

/**
 * A lock manager. Opaque; shared by every thread.
 */
typedef struct heirloom_manager heirloom_manager;

/**
 * A manager's options; fill with `heirloom_options_init`, then change
 * what you need.
 */
typedef struct heirloom_options {
  /**
   * `HEIRLOOM_TABLE_*` (default latched).
   */
  uint32_t table;
  /**
   * Server table: partitions, one thread each (1-64; default 1).
   */
  uint32_t partitions;
  /**
   * Hash buckets of the latched and latch-free tables, rounded up to a
   * power of two (1 to 2^24), or 0 (the default) for the table kind's
   * own: the latched table starts with 256 and grows, the latch-free
   * tables (CAS and swap append) have 4,096 for every core beyond the
   * first (at least 4,096, at most 131,072: 65,536 on sixteen cores)
   * and split a long list below its bucket, and the latched table with
   * spare heads starts with as many as the latch-free tables and grows.
   */
  uint64_t buckets;
  /**
   * `HEIRLOOM_POLICY_*` (default detect).
   */
  uint32_t policy;
  /**
   * `HEIRLOOM_POLICY_TIMEOUT`: how long a request may wait, in µs
   * (default 1000).
   */
  uint64_t policy_timeout_us;
  /**
   * Speculative lock inheritance: 0 off (default), 1 on, 2 always.
   */
  uint32_t inheritance;
  /**
   * Transactions an inherited lock may stay unused (default 0).
   */
  uint32_t keep_inherited;
  /**
   * The intention-lock fast path: 1 on (default), 0 off.
   */
  uint32_t fast_path;
  /**
   * Detect: how long a request waits before the first search, in µs
   * (default 0: at once).
   */
  uint64_t deadlock_timeout_us;
  /**
   * Row locks per table after which they escalate (0: never, default).
   */
  uint32_t escalate_after;
  /**
   * Cap on lock requests held at once (0: none, default). A request
   * that would pass it first escalates its transaction's largest group
   * of row locks under one table; if that frees nothing it fails with
   * `HEIRLOOM_ENOLOCKMEM`.
   */
  uint64_t max_locks;
  /**
   * Intention locks: 1 (default) a request takes IS or IX on the
   * lock's ancestors first; 0 every lock stands alone, for an engine
   * that locks at one granularity (no covering ancestor, no escalation;
   * `escalate_after` must then be 0).
   */
  uint32_t intention_locks;
  /**
   * Row S locks as fast holds (with the fast path, on the latched and
   * latch-free tables): 1 on, an S row lock then writes only the
   * agent's own memory while the row's stripe sees no writer; 0 every
   * row lock goes through the table; 2 (default) on or off by what the
   * row requests meet (off where rows are updated about as often as
   * read).
   */
  uint32_t fast_rows;
  /**
   * `heirloom_restart`: restarts in a row after which a transaction runs
   * in exclusive mode (default 10; 0: every restart).
   */
  uint32_t max_restarts;
  /**
   * `heirloom_restart` backs off before it begins again: 1 (default)
   * or 0 (at once).
   */
  uint32_t restart_backoff;
  /**
   * The most a blocked request spins before its thread parks, in µs
   * (default: the library's, as Rust's `Builder::spin_before_park`; 0:
   * park at once; at most 1,000,000). The spin adapts per agent below
   * this bound, and no request spins while agents outnumber the
   * cores (`cores`).
   */
  uint64_t spin_before_park_us;
  /**
   * The cores the engine's threads run on (0, the default: the
   * machine's, as the process's affinity and CPU quota allow). Whether
   * a blocked request spins (not while agents outnumber them) and the
   * latch-free tables' default size are read from it (Rust's
   * `Builder::cores`).
   */
  uint32_t cores;
} heirloom_options;

/**
 * A lock: a level and where it is. Locking a row or page also takes the
 * intention locks on its ancestors (unless the manager's
 * `intention_locks` is 0).
 */
typedef struct heirloom_lock_id {
  /**
   * `HEIRLOOM_DATABASE` ... `HEIRLOOM_PAGED_ROW`.
   */
  uint32_t level;
  /**
   * Database number.
   */
  uint16_t db;
  /**
   * Table number (ignored for a database).
   */
  uint32_t table;
  /**
   * Page or row key (see the levels).
   */
  uint64_t key;
} heirloom_lock_id;

/**
 * The engine's callback: `ready(ctx)` says "poll this agent's pending
 * request" (`heirloom_lock_start`).
 */
typedef void (*heirloom_ready_fn)(void *ctx);

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Fills `opts` with the defaults: the latched table, deadlock detection,
 * no inheritance, the fast path on, the default deadlock timeout, no
 * escalation, no lock-memory cap.
 *
 * # Safety
 * `opts` is null (then nothing happens) or points to writable memory for
 * one `heirloom_options`.
 */
void heirloom_options_init(struct heirloom_options *opts);

/**
 * Builds a manager from `opts` (null: the defaults) into `*out`.
 * `HEIRLOOM_EINVAL` for an option out of range (`*out` untouched).
 *
 * # Safety
 * `opts` is null or points to a `heirloom_options`; `out` points to
 * writable memory for one pointer.
 */
int32_t heirloom_manager_new(const struct heirloom_options *opts, struct heirloom_manager **out);

/**
 * Frees a manager. Agents made from it stay usable until freed (they
 * share its state); call this last, after every other call on `m` has
 * returned. Null, or a handle already freed: nothing happens.
 *
 * # Safety
 * `m` is null or was returned by `heirloom_manager_new`.
 */
void heirloom_manager_free(struct heirloom_manager *m);

/**
 * A new agent of `m` into `*out`: one per worker thread.
 *
 * # Safety
 * `m` is null or a manager handle; `out` points to writable memory for one
 * pointer.
 */
int32_t heirloom_agent_new(const struct heirloom_manager *m, struct heirloom_agent **out);

/**
 * Frees an agent: aborts its open transaction (releasing its locks) and
 * gives its resources back. `HEIRLOOM_EMISUSE` if another thread is inside
 * a call on it (nothing happens); null or already freed: `HEIRLOOM_EINVAL`.
 * Any thread may free an agent, as any thread may make the next call on
 * it.
 *
 * # Safety
 * `a` is null or was returned by `heirloom_agent_new`.
 */
int32_t heirloom_agent_free(struct heirloom_agent *a);

/**
 * The last call's message on `a` (a deadlock's cycle, a timeout's lock,
 * what was misused): empty after a success. Valid until the next call on
 * `a`; never null. A library error's message is formatted here, not when
 * the error happened, so an engine that never asks never pays for it.
 *
 * # Safety
 * `a` is null or was returned by `heirloom_agent_new`.
 */
const char *heirloom_message(const struct heirloom_agent *a);

/**
 * A short name of a result code (`"ok"`, `"deadlock"`, ...); never null.
 */
const char *heirloom_code_name(int32_t code);

/**
 * Whether a transaction that failed with `code` may succeed if retried
 * (deadlock, timeout, would-block, died, wounded, doomed).
 */
bool heirloom_is_restartable(int32_t code);

/**
 * Locks `id` in `mode` (`HEIRLOOM_IS` ... `HEIRLOOM_U`), taking intention
 * locks on its ancestors first (unless the manager's `intention_locks` is
 * 0), waiting as the manager's policy says.
 *
 * # Safety
 * `a` is null or an agent handle; `id` is null or points to a lock id.
 */
int32_t heirloom_lock(struct heirloom_agent *a, const struct heirloom_lock_id *id, uint32_t mode);

/**
 * Locks `id` in `mode`, waiting as `wait` says (`HEIRLOOM_WAIT_*`;
 * `timeout_us` for `HEIRLOOM_WAIT_TIMEOUT`). `HEIRLOOM_BUSY` under
 * `HEIRLOOM_WAIT_SKIP` when the lock is held by others.
 *
 * # Safety
 * As `heirloom_lock`.
 */
int32_t heirloom_lock_with(struct heirloom_agent *a,
                           const struct heirloom_lock_id *id,
                           uint32_t mode,
                           uint32_t wait,
                           uint64_t timeout_us);

/**
 * Takes every `(ids[i], modes[i])`, `n` of them, as one batch (sorted and
 * deduplicated, intention locks included, one table visit per lock);
 * all or, on an error, the transaction is doomed.
 *
 * # Safety
 * `a` is null or an agent handle; `ids` and `modes` point to `n` elements
 * each (or are null with `n == 0`).
 */
int32_t heirloom_lock_all(struct heirloom_agent *a,
                          const struct heirloom_lock_id *ids,
                          const uint32_t *modes,
                          size_t n);

/**
 * Releases `id` before commit (early release). A lock with a descendant
 * still held is refused with `HEIRLOOM_ENOTHELD`: release the descendants
 * first.
 *
 * # Safety
 * As `heirloom_lock`.
 */
int32_t heirloom_unlock(struct heirloom_agent *a, const struct heirloom_lock_id *id);

/**
 * The mode the open transaction holds `id` in (`HEIRLOOM_NL` if none)
 * into `*out`: the lock on `id` itself, so a row whose lock went in an
 * escalation reports `HEIRLOOM_NL` though the table's S or X covers it.
 *
 * # Safety
 * As `heirloom_lock`; `out` points to a writable `uint32_t`.
 */
int32_t heirloom_held_mode(struct heirloom_agent *a,
                           const struct heirloom_lock_id *id,
                           uint32_t *out);

/**
 * Commits the open transaction: releases every lock. On an error (the
 * transaction was doomed) it is aborted instead. Either way it is over.
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_commit(struct heirloom_agent *a);

/**
 * Aborts the open transaction: releases every lock.
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_abort(struct heirloom_agent *a);

/**
 * The open transaction's id into `*out` (what others pass to
 * `heirloom_wait_for_txn`). Messages and snapshots write it `T<a>.<s>`:
 * `a` is `(id >> 40) - 1`, the agent's index, and `s` is `id & (2^40 - 1)`,
 * the transaction's sequence number on its agent.
 *
 * # Safety
 * `a` is null or an agent handle; `out` points to a writable `uint64_t`.
 */
int32_t heirloom_txn_id(struct heirloom_agent *a, uint64_t *out);

/**
 * The open transaction's age into `*out`: the order wait-die and
 * wound-wait decide by (smaller is older, equal ages by a fixed order of
 * the agents; 0 under the other policies): the nanoseconds from the
 * manager's creation to the transaction's begin. A transaction begun by
 * `heirloom_retry` has its predecessor's.
 *
 * # Safety
 * `a` is null or an agent handle; `out` points to a writable `uint64_t`.
 */
int32_t heirloom_txn_age(struct heirloom_agent *a, uint64_t *out);

/**
 * Publishes the open transaction's own lock (X on its id), so that others
 * can wait for it to end (`heirloom_wait_for_txn`).
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_publish_id(struct heirloom_agent *a);

/**
 * Waits (as `wait` and `timeout_us` say) until transaction `other` has
 * ended, through its published lock; deadlocks through it are detected
 * like any other. `HEIRLOOM_BUSY` under `HEIRLOOM_WAIT_SKIP` if it runs.
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_wait_for_txn(struct heirloom_agent *a,
                              uint64_t other,
                              uint32_t wait,
                              uint64_t timeout_us);

/**
 * For tests of an engine's error paths: the next call on `a` panics inside
 * the library (caught: it returns `HEIRLOOM_EPANIC` and the agent is
 * unusable from then on).
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_agent_inject_panic(struct heirloom_agent *a);

/**
 * Begins a transaction on `a` (its later calls may come from any thread,
 * one at a time). `HEIRLOOM_EMISUSE` if one is open.
 *
 * # Safety
 * `a` is null or was returned by `heirloom_agent_new`.
 */
int32_t heirloom_begin(struct heirloom_agent *a);

/**
 * Begins a transaction on `a` as a retry of the agent's last one, as
 * `heirloom_begin` does otherwise: under wait-die and wound-wait it keeps
 * that transaction's age (`heirloom_txn_age`), so a transaction aborted
 * as the younger one runs again as old as it was and cannot starve. Call
 * it after `heirloom_abort` for a retry of the same work (the engine
 * decides what that is: DBx1000 keeps a thread's timestamp until it takes
 * a new query); call `heirloom_begin` for new work. Counted in the
 * agent's restarts. The caller backs off as it sees fit: retrying at once
 * under no-wait can spin against the same holder.
 *
 * # Safety
 * `a` is null or was returned by `heirloom_agent_new`.
 */
int32_t heirloom_retry(struct heirloom_agent *a);

/**
 * Begins a transaction on `a` as the next restart of the agent's last
 * one, as Rust's `Agent::run` restarts it: after `heirloom_abort` of a
 * transaction that failed with a restartable error
 * (`heirloom_is_restartable`). It keeps the transaction's age (as
 * `heirloom_retry`), backs off first (a yield for the first two restarts
 * in a row, then a random sleep growing to about 1 ms; none with the
 * option `restart_backoff` 0), and from the option `max_restarts`
 * restarts in a row on (default 10) runs the transaction in exclusive
 * mode: it waits until no other agent is inside a transaction, and no
 * other begins until this one commits or aborts, so a conflict cannot
 * abort it again and the retry loop ends. `heirloom_begin` starts the
 * count again. An exclusive restart waits for every other agent's
 * transaction, those of agents this thread drives included: end them
 * first. Counted in the agent's restarts and exclusive runs.
 *
 * # Safety
 * `a` is null or was returned by `heirloom_agent_new`.
 */
int32_t heirloom_restart(struct heirloom_agent *a);

/**
 * Statistics of every agent of `m`, merged now, as a JSON object of
 * counters (`{"table_ops": ..., "committed": ..., ...}`); free it with
 * `heirloom_string_free`. Null for a null or freed handle.
 *
 * # Safety
 * `m` is null or a manager handle.
 */
char *heirloom_manager_stats_json(const struct heirloom_manager *m);

/**
 * Every lock with live requests now, as JSON: `{"locks": [{"lock":
 * "db0.t1.r7", "group": "X", "holders": [{"txn": "...", "mode": "X",
 * "inherited": false}], "waiters": [{"txn": "...", "mode": "S",
 * "converting_from": null, "waited_us": 12}]}]}`; free it with
 * `heirloom_string_free`. Null for a null or freed handle.
 *
 * # Safety
 * `m` is null or a manager handle.
 */
char *heirloom_manager_snapshot_json(const struct heirloom_manager *m);

/**
 * The agent's own statistics, as `heirloom_manager_stats_json`'s; null if
 * the call is refused (as `heirloom_begin` would refuse it).
 *
 * # Safety
 * `a` is null or an agent handle.
 */
char *heirloom_agent_stats_json(struct heirloom_agent *a);

/**
 * Frees a string this library returned. Null: nothing happens.
 *
 * # Safety
 * `s` is null or a string from a `heirloom_*_json` call, not freed yet.
 */
void heirloom_string_free(char *s);

/**
 * Starts a lock request that does not block: locks `id` in `mode` as
 * `heirloom_lock_with` does (`wait`, `timeout_us`), except that a request
 * that must wait returns `HEIRLOOM_PENDING` at once instead of blocking.
 * The transaction's agent then has a pending request: `ready(ctx)` is
 * called when it should be polled (`heirloom_lock_poll`), which gives the
 * request's result once it is decided. Until then the agent's other calls
 * are refused with `HEIRLOOM_EMISUSE`, except `heirloom_lock_poll`,
 * `heirloom_lock_cancel`, `heirloom_abort` (which withdraws the request
 * first), `heirloom_message` and `heirloom_agent_free`.
 *
 * `ready` may be called from any thread (the one whose commit granted the
 * request, heirloom's timer thread, this one), more than once, and
 * after the request was decided or withdrawn, but never after
 * `heirloom_lock_poll` returned a result, `heirloom_lock_cancel`,
 * `heirloom_abort` or `heirloom_agent_free` returned. It must be quick
 * and must not call heirloom: signal the loop (write to an eventfd, a
 * pipe, `uv_async_send`) and poll from there. A spurious call is answered
 * by `HEIRLOOM_PENDING`.
 *
 * Sessions on one thread that conflict wait for each other through their
 * pending requests without blocking the thread, and the conflict policies
 * judge those waits as they judge blocked threads' (a deadlock between
 * them is found, a wait-die requester dies). Everything else returns
 * what `heirloom_lock_with` returns, at once.
 *
 * # Safety
 * `a` is null or an agent handle; `id` is null or points to a lock id;
 * `ready` is null or a function that may be called with `ctx` from any
 * thread until the request is decided (see above).
 */
int32_t heirloom_lock_start(struct heirloom_agent *a,
                            const struct heirloom_lock_id *id,
                            uint32_t mode,
                            uint32_t wait,
                            uint64_t timeout_us,
                            heirloom_ready_fn ready,
                            void *ctx);

/**
 * Starts a wait for transaction `other`'s end that does not block: what
 * `heirloom_lock_start` is to `heirloom_lock_with`, this is to
 * `heirloom_wait_for_txn` (same `wait` and `timeout_us`). A wait that must
 * wait returns `HEIRLOOM_PENDING` at once and leaves the agent with a
 * pending request, driven as `heirloom_lock_start`'s is (`ready`,
 * `heirloom_lock_poll`, `heirloom_lock_cancel`, the same rules); once
 * granted, the S on `other`'s lock is released in the poll that returns
 * `HEIRLOOM_OK`.
 *
 * # Safety
 * `a` is null or an agent handle; `ready` as for `heirloom_lock_start`.
 */
int32_t heirloom_wait_for_txn_start(struct heirloom_agent *a,
                                    uint64_t other,
                                    uint32_t wait,
                                    uint64_t timeout_us,
                                    heirloom_ready_fn ready,
                                    void *ctx);

/**
 * Polls `a`'s pending request (`heirloom_lock_start`): its result once it
 * is decided (`HEIRLOOM_OK`, or the error `heirloom_lock_with` would have
 * returned), after which the agent is as after that call; else
 * `HEIRLOOM_PENDING` (`ready` will be called again). `HEIRLOOM_EMISUSE`
 * if nothing is pending.
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_lock_poll(struct heirloom_agent *a);

/**
 * Withdraws `a`'s pending request (`heirloom_lock_start`): cancelled, or
 * released if it was granted meanwhile; the transaction goes on (the
 * intention locks granted on the way stay). `HEIRLOOM_EMISUSE` if nothing
 * is pending.
 *
 * # Safety
 * `a` is null or an agent handle.
 */
int32_t heirloom_lock_cancel(struct heirloom_agent *a);

/**
 * Binds `a` to no thread until its next call (which binds it to its
 * own): a thread pool's worker calls it when it puts a session down
 * between statements with its transaction open, because the session's
 * next call may come from any worker. Until then a lock request without a
 * time limit that waits for `a`'s transaction waits on every thread, this
 * one included, instead of being refused with `HEIRLOOM_EMISUSE` on the
 * thread of `a`'s last call. Such a wait ends only when a call on `a`
 * ends its transaction, so the engine must make that call on another
 * thread. With or without a transaction open; `HEIRLOOM_EMISUSE` if
 * another thread is inside a call on `a`.
 *
 * # Safety
 * `a` is null or was returned by `heirloom_agent_new`.
 */
int32_t heirloom_agent_unbind(struct heirloom_agent *a);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* HEIRLOOM_H */
