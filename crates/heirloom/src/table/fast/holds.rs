//! The fast-path layer the latched and the latch-free tables share: how a
//! fast hold is taken, given back and upgraded, written once over what
//! each table tells it ([`FastTable`]: how it names a fast hold in its
//! handle, and how it meets a release's wake-up duty). The protocol
//! itself is `Fast`'s (`fast.rs`); whether a request goes this way is
//! decided by the transaction (`Transaction::acquire_fast`, with no node)
//! or, for a request that has a node, by the table's `acquire` through
//! [`try_node`].

use super::{FastTry, fill_node, takes_fast};
use crate::id::LockId;
use crate::mode::Mode;
use crate::request::{ReqPtr, Request};
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::{Caller, LockTable};

/// A table with the fast path: what the shared layer needs of it.
pub(crate) trait FastTable: LockTable {
    /// The handle of a fast hold in slot `s` (the slot names the lock).
    fn fast_hold(&self, s: usize) -> Self::Handle;

    /// The slot of a fast hold's handle; `None` for a linked request's.
    fn fast_slot(h: Self::Handle) -> Option<usize>;

    /// A fast hold of `id` in `mode` was given up (or a fast try took its
    /// bit back) while the lock's word counted strong requests: one may
    /// have seen the hold and wait for it, so grant what is clear now
    /// (`fast.rs`, "Fast release").
    fn after_fast_release(&self, c: &AgentCounters, id: LockId, mode: Mode, wake: &mut Vec<ReqPtr>);
}

/// [`LockTable::try_fast_hold`] of a table with the fast path.
#[inline(always)]
pub(crate) fn try_hold<T: FastTable>(
    t: &T,
    a: Caller<'_>,
    id: LockId,
    mode: Mode,
    txn: u64,
    ts: u64,
    wake: &mut Vec<ReqPtr>,
) -> Option<T::Handle> {
    let f = t.fast()?;
    let s = f.slot_for(id, true)?;
    match f.acquire(s, id.words(), a.agent, txn, ts, mode) {
        FastTry::Held => Some(t.fast_hold(s)),
        FastTry::BackedOff => {
            t.after_fast_release(a.counters, id, mode, wake);
            None
        }
        FastTry::Refused => None,
    }
}

/// The fast path for `r`, a request with a node for `id` in `mode` (the
/// batch path, lock classes, a conversion's new request): the fast hold's
/// handle if it was granted so, its node filled as a fast hold's; `None`
/// (nothing changed) if `mode` on `id` does not go this way or was turned
/// away.
///
/// Out of line: the transaction takes its fast holds without a node
/// (`try_hold`), so this path is the rare one, and inlined it would cost
/// every acquisition registers.
///
/// # Safety
/// `r` is the caller's own request, linked nowhere.
#[inline(never)]
pub(crate) unsafe fn try_node<T: FastTable>(
    t: &T,
    c: &AgentCounters,
    id: LockId,
    r: ReqPtr,
    mode: Mode,
    wake: &mut Vec<ReqPtr>,
) -> Option<T::Handle> {
    if !takes_fast(id, mode) {
        return None;
    }
    // A row's S only while the row side's switch is on (a quick look, as
    // `Transaction::acquire_fast` makes before `try_hold`).
    if mode == Mode::S && t.fast().and_then(|f| f.row_side()).is_some_and(|r| !r.is_on()) {
        return None;
    }
    // SAFETY: the caller's own request (this function's contract).
    let q = unsafe { r.get() };
    let (txn, ts) = (q.txn.load(Ordering::Relaxed), q.ts.load(Ordering::Relaxed));
    let a = Caller {
        counters: c,
        agent: q.agent,
    };
    let h = try_hold(t, a, id, mode, txn, ts, wake)?;
    fill_node(q, id.words(), mode);
    Some(h)
}

/// [`LockTable::release_fast_hold`] of a table with the fast path.
#[inline(always)]
pub(crate) fn release_hold<T: FastTable>(
    t: &T,
    a: Caller<'_>,
    id: LockId,
    h: T::Handle,
    mode: Mode,
    ending: bool,
    wake: &mut Vec<ReqPtr>,
) {
    let (Some(s), Some(f)) = (T::fast_slot(h), t.fast()) else {
        unreachable!("a fast hold without its slot")
    };
    if f.release_as(s, id.words(), a.agent, mode, ending) {
        t.after_fast_release(a.counters, id, mode, wake);
    }
}

/// Releases the fast hold `h` whose node is `q` (a hold taken with a
/// node, [`try_node`]): its lock and mode are read from the node.
#[cold]
pub(crate) fn release_node<T: FastTable>(t: &T, c: &AgentCounters, h: T::Handle, q: &Request, wake: &mut Vec<ReqPtr>) {
    let id = LockId::from_words(q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
    let a = Caller {
        counters: c,
        agent: q.agent,
    };
    release_hold(t, a, id, h, q.mode(), false, wake);
}

/// [`LockTable::upgrade_fast_hold`] of a table with the fast path.
#[inline]
pub(crate) fn upgrade_hold<T: FastTable>(
    t: &T,
    a: Caller<'_>,
    id: LockId,
    h: T::Handle,
    wake: &mut Vec<ReqPtr>,
) -> bool {
    let (Some(s), Some(f)) = (T::fast_slot(h), t.fast()) else {
        unreachable!("a fast hold without its slot")
    };
    if f.upgrade_bits(s, a.agent) {
        return true;
    }
    t.after_fast_release(a.counters, id, Mode::IX, wake);
    false
}

/// Fills `r`, a node of the owner of a fast hold of `id` in `mode` taken
/// without one, as [`try_node`] fills the node of one taken with one, so
/// that every other operation on the hold (a conversion) finds the node
/// it expects. `r` carries the transaction and age.
///
/// # Safety
/// `r` is the caller's own node, linked nowhere.
pub(crate) unsafe fn materialize(id: LockId, mode: Mode, r: ReqPtr) {
    // SAFETY: the caller's own node (this function's contract).
    fill_node(unsafe { r.get() }, id.words(), mode);
}
