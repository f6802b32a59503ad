//! Detection of a misuse that would otherwise hang silently: one thread
//! driving two agents whose transactions block each other.
//!
//! A transaction that waits parks its thread. If the transaction it waits
//! for can only go on on the same thread (another agent's, driven by this
//! thread), nothing can ever end it: the only thread that could is the
//! one parked. The waits-for graph cannot see this (the holder is not
//! waiting), so the conflict policies cannot resolve it.
//!
//! Every agent is bound to a thread (`AgentShared::bound_to`, a token of
//! this module): the thread that began its transaction, then the thread of
//! each of its blocking waits, and in C the thread of each call
//! (`Agent::bind_to_thread`). A wait without a time limit whose blockers
//! include a transaction bound to the waiter's own thread is refused, in
//! every build, with `LockError::InvalidRequest` (reason
//! [`BLOCKED_BY_OWN_THREAD`]). Each thread counts the agents bound to it,
//! so the check costs a thread-local read per wait unless another agent is
//! bound to the thread; a binding that moves away leaves the old thread's
//! count high (it cannot be reached from here), which costs that thread a
//! look at its blockers, never a missed refusal.
//!
//! A Rust transaction may move to another thread between calls. Until it
//! begins or waits there, it stays bound to the thread it came from, and a
//! wait without a time limit on it from that thread is refused: waits that
//! must not be refused have a time limit, or do not need the thread
//! (`Transaction::lock_async`).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The reason of the [`LockError::InvalidRequest`](crate::LockError) that
/// refuses a wait for a transaction bound to the waiter's own thread
/// (see `misuse.rs`): the C interface reports it as misuse.
#[doc(hidden)]
pub const BLOCKED_BY_OWN_THREAD: &str = "the lock is held by a transaction bound to this same thread (on another \
     agent), which cannot go on while this thread waits; a thread must not block one of its agents on another";

std::thread_local! {
    /// This thread's token (`thread_token`), 0 until first asked.
    static TOKEN: Cell<u64> = const { Cell::new(0) };
    /// Agents bound to this thread now (`Agent::bind_to_thread`).
    static BOUND_HERE: Cell<u32> = const { Cell::new(0) };
}

/// A number for this thread, never 0 and never another live thread's.
#[inline]
pub(crate) fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    TOKEN.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

/// An agent's binding moved from the thread of token `was` to that of
/// `now` (0: none): counted here where either is this thread.
pub(crate) fn rebound(was: u64, now: u64) {
    let me = thread_token();
    BOUND_HERE.with(|b| {
        let mut n = b.get();
        if was == me {
            n = n.saturating_sub(1);
        }
        if now == me {
            n += 1;
        }
        b.set(n);
    });
}

/// Agents bound to this thread now.
pub(crate) fn bound_count() -> u32 {
    BOUND_HERE.with(Cell::get)
}
