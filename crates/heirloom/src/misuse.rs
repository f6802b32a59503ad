//! Debug-build detection of a misuse that would otherwise hang silently:
//! one thread driving two agents whose transactions block each other.
//!
//! A transaction that waits parks its thread. If the transaction it waits
//! for was begun on the same thread (on another agent) and is still open,
//! nothing can ever end it: the only thread that could is the one parked.
//! The waits-for graph cannot see this (the holder is not waiting), so the
//! conflict policies cannot resolve it. In debug builds every thread keeps
//! the transactions it has open, and a transaction about to park checks
//! its blockers against them and panics with a message that says what
//! happened; the panic unwinds through the transaction, which cancels its
//! request (`Transaction::finish`). Release builds keep nothing and check
//! nothing: the hot path pays for no bookkeeping.

#[cfg(debug_assertions)]
use std::cell::RefCell;

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
