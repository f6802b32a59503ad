//! Lock requests that do not block the thread: `heirloom_lock_start`,
//! `heirloom_lock_poll`, `heirloom_lock_cancel`. An event loop (epoll,
//! libuv, a coroutine scheduler) runs many agents on one thread: a request
//! that would wait is left pending, the engine's `ready` callback is
//! called when it should be polled, and the loop serves other sessions
//! meanwhile.
//!
//! This is Rust's `Transaction::lock_async` driven by hand: the future
//! lives in the agent's state with the transaction it borrows (moved to
//! the heap for as long as the request is pending, `Pending`), and its
//! waker calls the callback. So the grant path, the conflict policies, the
//! timers (a time limit, the first deadlock search) and the cancel are the
//! future's.

use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use heirloom::{LockFuture, Transaction, TxnId};

use crate::{
    AgentState, HEIRLOOM_EINVAL, HEIRLOOM_EMISUSE, HEIRLOOM_PENDING, heirloom_agent, heirloom_lock_id, lock_of,
    mode_of, no_txn, result, set_message, wait_of, with_agent,
};

/// The engine's callback: `ready(ctx)` says "poll this agent's pending
/// request" (`heirloom_lock_start`).
pub type heirloom_ready_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

/// A pending request: the future, and the transaction it borrows, on the
/// heap (a raw pointer from `Box::into_raw`, so that the future's borrow is
/// the only reference while it lives).
pub(crate) struct Pending {
    /// Dropped before `txn` is taken back (see `Drop` and `into_txn`).
    fut: Option<LockFuture<'static, 'static>>,
    /// `None` once taken back (`into_txn`).
    txn: Option<NonNull<Transaction<'static>>>,
    waker: Waker,
}

impl Pending {
    /// The future's transaction, after the future is dropped (a request
    /// still pending is withdrawn by the drop).
    pub(crate) fn into_txn(mut self) -> Transaction<'static> {
        drop(self.fut.take());
        let Some(txn) = self.txn.take() else {
            unreachable!("a pending request's transaction is taken back once")
        };
        // SAFETY: from `Box::leak` in `heirloom_lock_start`, taken back
        // once (`take` above: `Drop` finds `None`); the future that
        // borrowed it is gone.
        *unsafe { Box::from_raw(txn.as_ptr()) }
    }

    /// `Transaction::bind_to_thread` through the future (a poll from
    /// another thread: the binding follows, as for a blocking call;
    /// `heirloom_agent_unbind`: none).
    pub(crate) fn bind_to_thread(&self, bound: bool) {
        if let Some(f) = &self.fut {
            f.bind_to_thread(bound);
        }
    }

    fn poll(&mut self) -> Poll<Result<(), heirloom::LockError>> {
        let Some(f) = self.fut.as_mut() else {
            unreachable!("a pending request has its future until it ends")
        };
        Pin::new(f).poll(&mut Context::from_waker(&self.waker))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // The future first (it withdraws its request), then the transaction
        // (it aborts).
        drop(self.fut.take());
        if let Some(txn) = self.txn.take() {
            // SAFETY: as in `into_txn`.
            drop(unsafe { Box::from_raw(txn.as_ptr()) });
        }
    }
}

// SAFETY: the transaction and its future are `Send`; the raw pointer is
// owned (`Box::into_raw`).
unsafe impl Send for Pending {}

/// The waker: calls the engine's callback.
struct Ready {
    ready: unsafe extern "C" fn(*mut c_void),
    ctx: *mut c_void,
}

// SAFETY: the header's contract: the callback may be called from any
// thread, and `ctx` is the engine's to make that safe.
unsafe impl Send for Ready {}
// SAFETY: as above.
unsafe impl Sync for Ready {}

impl Wake for Ready {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SAFETY: the engine's callback, with its own context.
        unsafe { (self.ready)(self.ctx) }
    }
}

/// Starts a lock request that does not block: locks `id` in `mode` as
/// `heirloom_lock_with` does (`wait`, `timeout_us`), except that a request
/// that must wait returns `HEIRLOOM_PENDING` at once instead of blocking.
/// The transaction's agent then has a pending request: `ready(ctx)` is
/// called when it should be polled (`heirloom_lock_poll`), which gives the
/// request's result once it is decided. Until then the agent's other calls
/// are refused with `HEIRLOOM_EMISUSE`, except `heirloom_lock_poll`,
/// `heirloom_lock_cancel`, `heirloom_abort` (which withdraws the request
/// first), `heirloom_message` and `heirloom_agent_free`.
///
/// `ready` may be called from any thread (the one whose commit granted the
/// request, heirloom's timer thread, this one), more than once, and
/// after the request was decided or withdrawn, but never after
/// `heirloom_lock_poll` returned a result, `heirloom_lock_cancel`,
/// `heirloom_abort` or `heirloom_agent_free` returned. It must be quick
/// and must not call heirloom: signal the loop (write to an eventfd, a
/// pipe, `uv_async_send`) and poll from there. A spurious call is answered
/// by `HEIRLOOM_PENDING`.
///
/// Sessions on one thread that conflict wait for each other through their
/// pending requests without blocking the thread, and the conflict policies
/// judge those waits as they judge blocked threads' (a deadlock between
/// them is found, a wait-die requester dies). Everything else returns
/// what `heirloom_lock_with` returns, at once.
///
/// # Safety
/// `a` is null or an agent handle; `id` is null or points to a lock id;
/// `ready` is null or a function that may be called with `ctx` from any
/// thread until the request is decided (see above).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_lock_start(
    a: *mut heirloom_agent,
    id: *const heirloom_lock_id,
    mode: u32,
    wait: u32,
    timeout_us: u64,
    ready: heirloom_ready_fn,
    ctx: *mut c_void,
) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            // SAFETY: the caller's promise (null checked).
            let (Some(id), Some(mode), Some(wait), Some(ready)) = (
                id.as_ref().and_then(lock_of),
                mode_of(mode),
                wait_of(wait, timeout_us),
                ready,
            ) else {
                set_message(st, "heirloom: a null or invalid lock id, mode, wait or callback");
                return HEIRLOOM_EINVAL;
            };
            start(st, ready, ctx, |t| t.lock_with_async(id, mode, wait))
        })
    }
}

/// Starts a wait for transaction `other`'s end that does not block: what
/// `heirloom_lock_start` is to `heirloom_lock_with`, this is to
/// `heirloom_wait_for_txn` (same `wait` and `timeout_us`). A wait that must
/// wait returns `HEIRLOOM_PENDING` at once and leaves the agent with a
/// pending request, driven as `heirloom_lock_start`'s is (`ready`,
/// `heirloom_lock_poll`, `heirloom_lock_cancel`, the same rules); once
/// granted, the S on `other`'s lock is released in the poll that returns
/// `HEIRLOOM_OK`.
///
/// # Safety
/// `a` is null or an agent handle; `ready` as for `heirloom_lock_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_wait_for_txn_start(
    a: *mut heirloom_agent,
    other: u64,
    wait: u32,
    timeout_us: u64,
    ready: heirloom_ready_fn,
    ctx: *mut c_void,
) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            let (Some(wait), Some(ready)) = (wait_of(wait, timeout_us), ready) else {
                set_message(st, "heirloom: an invalid wait or a null callback");
                return HEIRLOOM_EINVAL;
            };
            start(st, ready, ctx, |t| t.wait_for_txn_async(TxnId::from_u64(other), wait))
        })
    }
}

/// Runs the future `call` makes of the agent's transaction to its first
/// poll: its result, or `HEIRLOOM_PENDING` with the request left pending.
fn start(
    st: &mut AgentState,
    ready: unsafe extern "C" fn(*mut c_void),
    ctx: *mut c_void,
    call: impl FnOnce(&'static mut Transaction<'static>) -> LockFuture<'static, 'static>,
) -> i32 {
    let Some(txn) = st.txn.take() else {
        return no_txn(st);
    };
    let txn = NonNull::from(Box::leak(Box::new(txn)));
    // SAFETY: the transaction lives on the heap until `into_txn` or `Drop`
    // takes it back, after the future is gone; nothing else reaches it
    // meanwhile.
    let fut = call(unsafe { &mut *txn.as_ptr() });
    let mut p = Pending {
        fut: Some(fut),
        txn: Some(txn),
        waker: Waker::from(Arc::new(Ready { ready, ctx })),
    };
    match p.poll() {
        Poll::Pending => {
            st.pending = Some(p);
            HEIRLOOM_PENDING
        }
        Poll::Ready(r) => {
            st.txn = Some(p.into_txn());
            result(st, r)
        }
    }
}

/// Polls `a`'s pending request (`heirloom_lock_start`): its result once it
/// is decided (`HEIRLOOM_OK`, or the error `heirloom_lock_with` would have
/// returned), after which the agent is as after that call; else
/// `HEIRLOOM_PENDING` (`ready` will be called again). `HEIRLOOM_EMISUSE`
/// if nothing is pending.
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_lock_poll(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            let Some(p) = st.pending.as_mut() else {
                set_message(st, "heirloom: no lock request is pending on this agent");
                return HEIRLOOM_EMISUSE;
            };
            match p.poll() {
                Poll::Pending => HEIRLOOM_PENDING,
                Poll::Ready(r) => {
                    settle(st);
                    result(st, r)
                }
            }
        })
    }
}

/// Withdraws `a`'s pending request (`heirloom_lock_start`): cancelled, or
/// released if it was granted meanwhile; the transaction goes on (the
/// intention locks granted on the way stay). `HEIRLOOM_EMISUSE` if nothing
/// is pending.
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_lock_cancel(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            if st.pending.is_none() {
                set_message(st, "heirloom: no lock request is pending on this agent");
                return HEIRLOOM_EMISUSE;
            }
            settle(st);
            crate::HEIRLOOM_OK
        })
    }
}

/// Takes back the transaction of a pending request (withdrawing the
/// request if it is still waiting): a poll's result, a cancel, an abort.
pub(crate) fn settle(st: &mut AgentState) {
    if let Some(p) = st.pending.take() {
        st.txn = Some(p.into_txn());
    }
}
