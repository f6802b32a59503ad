//! heirloom's integration tests that can share a process, as one binary:
//! each file below is a module, so that one link and one copy of the
//! crate's generic code serve them all rather than one a file. The files
//! that must run alone keep binaries of their own (`Cargo.toml`,
//! `[[test]]`): `alloc.rs` installs a counting global allocator,
//! `elision.rs` flips a process-wide switch, `reclaim.rs` holds
//! crossbeam's process-wide epoch, `server_idle.rs` reads the process's
//! CPU time, `stress.rs` is what `scripts/stress-loop.sh` runs again and
//! again, and the one-test files `snapshot.rs` and `starvation.rs` keep
//! running with no other test beside them.

mod common;

#[path = "architecture.rs"]
mod architecture;
#[path = "async_lock.rs"]
mod async_lock;
#[path = "basic.rs"]
mod basic;
#[path = "deadlock.rs"]
mod deadlock;
#[path = "engine.rs"]
mod engine;
#[path = "fast_path.rs"]
mod fast_path;
#[path = "fast_rows.rs"]
mod fast_rows;
#[path = "fast_rows_switch.rs"]
mod fast_rows_switch;
#[path = "inherit.rs"]
mod inherit;
#[path = "intention_locks.rs"]
mod intention_locks;
#[path = "lock_cache.rs"]
mod lock_cache;
#[path = "misuse.rs"]
mod misuse;
#[path = "model.rs"]
mod model;
#[path = "retry.rs"]
mod retry;
#[path = "server.rs"]
mod server;
#[path = "wait_die.rs"]
mod wait_die;
