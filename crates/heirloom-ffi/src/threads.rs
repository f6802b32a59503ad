//! Which thread drives an agent: `heirloom_agent_unbind`, for a thread
//! pool's worker that puts a session down with its transaction open.
//!
//! An agent is bound to the thread of its last call (`with_agent` moves
//! the binding), and a lock request without a time limit that would wait
//! for a transaction bound to the requester's own thread is refused with
//! `HEIRLOOM_EMISUSE`: only that thread could go on with it. In a thread
//! pool the next call of a session put down may come from any worker, so
//! the worker says so, and the session is bound to no thread until its
//! next call.

use crate::{HEIRLOOM_OK, heirloom_agent, with_agent};

/// Binds `a` to no thread until its next call (which binds it to its
/// own): a thread pool's worker calls it when it puts a session down
/// between statements with its transaction open, because the session's
/// next call may come from any worker. Until then a lock request without a
/// time limit that waits for `a`'s transaction waits on every thread, this
/// one included, instead of being refused with `HEIRLOOM_EMISUSE` on the
/// thread of `a`'s last call. Such a wait ends only when a call on `a`
/// ends its transaction, so the engine must make that call on another
/// thread. With or without a transaction open; `HEIRLOOM_EMISUSE` if
/// another thread is inside a call on `a`.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_agent_unbind(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            if let Some(txn) = st.txn.as_ref() {
                txn.bind_to_thread(false);
            } else if let Some(p) = st.pending.as_ref() {
                p.bind_to_thread(false);
            } else if !st.agent.is_null() {
                // SAFETY: no transaction borrows the agent (none is open),
                // and `with_agent` keeps out every other thread.
                (*st.agent).bind_to_thread(false);
            }
            // The next call, from whatever thread, binds it again.
            st.thread = None;
            HEIRLOOM_OK
        })
    }
}
