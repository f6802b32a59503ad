//! Detection of a misuse that would otherwise hang silently: one thread
//! driving two agents whose transactions block each other.
//!
//! A transaction that waits parks its thread. If the transaction it waits
//! for was begun on the same thread (on another agent) and is still open,
//! nothing can ever end it: the only thread that could is the one parked.
//! The waits-for graph cannot see this (the holder is not waiting), so the
//! conflict policies cannot resolve it.
//!
//! * Where transactions cannot leave their thread (the C interface binds
//!   them: `Agent::bind_to_thread`), every build checks: a wait without a
//!   time limit whose blockers include a transaction bound to this thread
//!   is refused with `LockError::InvalidRequest` (reason
//!   [`BLOCKED_BY_OWN_THREAD`]). It costs a thread-local read per such
//!   wait unless another agent is bound to the thread.
//! * Rust transactions may move between threads, so a holder begun here may
//!   go on elsewhere: in debug builds every thread keeps the transactions
//!   it has open, and a transaction about to park checks its blockers
//!   against them and panics with a message that says what happened; the
//!   panic unwinds through the transaction, which cancels its request
//!   (`Transaction::finish`). Release builds keep nothing for them.

use std::cell::Cell;
#[cfg(debug_assertions)]
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::TxnId;

/// Entries kept per thread: a transaction begun on one thread and ended on
/// another (it may be sent) leaves a stale entry behind; the oldest go.
#[cfg(debug_assertions)]
const KEEP: usize = 64;

#[cfg(debug_assertions)]
std::thread_local! {
    /// (manager address, transaction) of the transactions open on this thread.
    static OPEN: RefCell<Vec<(usize, TxnId)>> = const { RefCell::new(Vec::new()) };
}

/// The reason of the [`LockError::InvalidRequest`](crate::LockError) that
/// refuses a wait for a transaction bound to the waiter's own thread
/// (`Agent::bind_to_thread`): the C interface reports it as misuse.
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
pub(crate) fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    TOKEN.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

/// One more (`true`) or one fewer agent bound to this thread.
pub(crate) fn bound_here(more: bool) {
    BOUND_HERE.with(|b| b.set(if more { b.get() + 1 } else { b.get().saturating_sub(1) }));
}

/// Agents bound to this thread now.
pub(crate) fn bound_count() -> u32 {
    BOUND_HERE.with(Cell::get)
}

/// A transaction of the manager at `lm` began on this thread.
#[inline]
pub(crate) fn opened(lm: usize, txn: TxnId) {
    #[cfg(debug_assertions)]
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        if o.len() >= KEEP {
            o.remove(0);
        }
        o.push((lm, txn));
    });
    #[cfg(not(debug_assertions))]
    let _ = (lm, txn);
}

/// The transaction ended (on whatever thread ends it).
#[inline]
pub(crate) fn closed(lm: usize, txn: TxnId) {
    #[cfg(debug_assertions)]
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        if let Some(i) = o.iter().rposition(|&e| e == (lm, txn)) {
            o.swap_remove(i);
        }
    });
    #[cfg(not(debug_assertions))]
    let _ = (lm, txn);
}

/// Whether checking is worth it: another transaction of this manager is
/// open on this thread besides `me`.
#[inline]
pub(crate) fn others_open(lm: usize, me: TxnId) -> bool {
    #[cfg(debug_assertions)]
    return OPEN.with(|o| o.borrow().iter().any(|&(l, t)| l == lm && t != me));
    #[cfg(not(debug_assertions))]
    {
        let _ = (lm, me);
        false
    }
}

/// The first of `blockers` that is open on this thread, if any.
pub(crate) fn blocked_by_own_thread(lm: usize, blockers: impl IntoIterator<Item = TxnId>) -> Option<TxnId> {
    #[cfg(debug_assertions)]
    return OPEN.with(|o| {
        let o = o.borrow();
        blockers.into_iter().find(|b| o.contains(&(lm, *b)))
    });
    #[cfg(not(debug_assertions))]
    {
        let _ = (lm, blockers.into_iter());
        None
    }
}
