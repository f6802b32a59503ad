//! Reclamation: unlinked requests go to crossbeam-epoch's collector in
//! per-thread batches, and come back to their agents (RETURNED) once no
//! pinned thread can reach them.

use super::*;

/// Requests this thread unlinked and has not yet handed to the collector,
/// chained through `Request::retired`. One deferred function per batch
/// instead of one per request: the collector's per-item cost (a slot in
/// the thread's bag, a 64-slot bag sealed and queued with an allocation
/// every 64 items, one call each) was a quarter of a one-thread transaction.
pub(super) struct Retired {
    head: Cell<*mut Request>,
    len: Cell<usize>,
}

/// Requests per batch. Under loom every request is handed over at once, so
/// the models see reclamation happen.
const RETIRE_BATCH: usize = if cfg!(heirloom_loom) { 1 } else { 32 };

impl Drop for Retired {
    fn drop(&mut self) {
        // The thread ends: hand over what is left (crossbeam pins through a
        // temporary handle if the thread's own is gone already).
        let head = self.head.replace(ptr::null_mut());
        if !head.is_null() {
            defer_batch(ReqPtr::from_raw(head), &pin());
        }
    }
}

#[cfg(not(heirloom_loom))]
std::thread_local! {
    static RETIRED: Retired = const {
        Retired {
            head: Cell::new(ptr::null_mut()),
            len: Cell::new(0),
        }
    };
}

#[cfg(heirloom_loom)]
loom::thread_local! {
    static RETIRED: Retired = Retired {
        head: Cell::new(ptr::null_mut()),
        len: Cell::new(0),
    };
}

/// Hands an unlinked request to the epoch collector (in batches): RETURNED
/// once no pinned thread can still reach it.
#[inline]
pub(super) fn retire(n: &Request, g: &Guard) {
    let p = n as *const Request as *mut Request;
    let full = RETIRED.try_with(|b| {
        // Relaxed: the chain is read by the deferred function, which the
        // collector runs after `defer` (its queue orders the two).
        n.retired.store(b.head.get(), Ordering::Relaxed);
        b.head.set(p);
        b.len.set(b.len.get() + 1);
        (b.len.get() >= RETIRE_BATCH).then(|| {
            b.len.set(0);
            b.head.replace(ptr::null_mut())
        })
    });
    match full {
        Ok(Some(head)) => defer_batch(ReqPtr::from_raw(head), g),
        Ok(None) => {}
        // The thread's batch is gone (thread exit): hand it over alone.
        Err(_) => {
            n.retired.store(ptr::null_mut(), Ordering::Relaxed);
            defer_batch(ReqPtr::from_raw(p), g);
        }
    }
}

/// Hands this thread's unfinished batch of retired requests to the
/// collector now (`Nodes::help`: their owners may be short of nodes).
/// Deferring later than the unlink is only more conservative: the batch is
/// stamped with an epoch at least as new as every unlink in it.
pub(crate) fn hand_over_retired() {
    let head = RETIRED.try_with(|b| {
        b.len.set(0);
        b.head.replace(ptr::null_mut())
    });
    if let Ok(head) = head
        && !head.is_null()
    {
        defer_batch(ReqPtr::from_raw(head), &pin());
    }
}

pub(super) fn defer_batch(head: ReqPtr, g: &Guard) {
    crate::sharing::op(crate::sharing::Op::Defer);
    g.defer(move || {
        let mut p = head.as_ptr() as *mut Request;
        while !p.is_null() {
            let r = ReqPtr::from_raw(p);
            // Read before `returned`: the node may be reused or freed after.
            // SAFETY: unlinked and past its grace period, but not yet
            // RETURNED, so neither its agent (which waits for RETURNED) nor
            // anybody else frees it before `returned` below decides.
            p = unsafe { r.get() }.retired.load(Ordering::Relaxed);
            // SAFETY: as above.
            unsafe { returned(r) };
        }
    });
}

/// Runs after the grace period of an unlinked request.
///
/// # Safety
/// `r` is unlinked, no thread can reach it any more, and it is not yet
/// RETURNED (so it is alive: its agent frees it only once RETURNED).
pub(super) unsafe fn returned(r: ReqPtr) {
    // AcqRel: Release publishes "nobody sees it" to the agent's Acquire in
    // `Nodes::take`; Acquire pairs with the agent's ORPHANED swap.
    // SAFETY: alive until this swap decides (the contract).
    if unsafe { r.get() }.recycle.swap(RETURNED, Ordering::AcqRel) == ORPHANED {
        // SAFETY: the agent is gone and the node is in no list; we are the
        // last to know about it (the swap decided it).
        unsafe { r.free() };
    }
}
