//! What the latched table's tests and models share: request nodes of
//! their own, allocated by [`request`] and freed at each test's end, after
//! every thread is done with them.

use crate::request::{ReqPtr, Request};
use crate::sync::Ordering;

/// The node behind `r`.
pub(super) fn node(r: &ReqPtr) -> &Request {
    // SAFETY: a test's own node (see above).
    unsafe { r.get() }
}

/// A node of transaction `txn` on agent `agent`, linked nowhere.
pub(super) fn request(agent: u32, txn: u64) -> ReqPtr {
    let r = ReqPtr::alloc(agent);
    node(&r).txn.store(txn, Ordering::Relaxed);
    r
}
