//! Where a C transaction begins: `heirloom_begin` (new work),
//! `heirloom_retry` (the same work again, its age kept) and
//! `heirloom_restart` (`Agent::run`'s restart: the age kept, a backoff,
//! exclusive mode after `max_restarts` restarts in a row).

use heirloom::Transaction;

use crate::{HEIRLOOM_EINVAL, HEIRLOOM_EMISUSE, HEIRLOOM_OK, heirloom_agent, set_message, this_thread, with_agent};

/// Begins a transaction on `a` (its later calls may come from any thread,
/// one at a time). `HEIRLOOM_EMISUSE` if one is open.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_begin(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { begin(a, Begin::New) }
}

/// Begins a transaction on `a` as a retry of the agent's last one, as
/// `heirloom_begin` does otherwise: under wait-die and wound-wait it keeps
/// that transaction's age (`heirloom_txn_age`), so a transaction aborted
/// as the younger one runs again as old as it was and cannot starve. Call
/// it after `heirloom_abort` for a retry of the same work (the engine
/// decides what that is: DBx1000 keeps a thread's timestamp until it takes
/// a new query); call `heirloom_begin` for new work. Counted in the
/// agent's restarts. The caller backs off as it sees fit: retrying at once
/// under no-wait can spin against the same holder.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_retry(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { begin(a, Begin::Retry) }
}

/// Begins a transaction on `a` as the next restart of the agent's last
/// one, as Rust's `Agent::run` restarts it: after `heirloom_abort` of a
/// transaction that failed with a restartable error
/// (`heirloom_is_restartable`). It keeps the transaction's age (as
/// `heirloom_retry`), backs off first (a yield for the first two restarts
/// in a row, then a random sleep growing to about 1 ms; none with the
/// option `restart_backoff` 0), and from the option `max_restarts`
/// restarts in a row on (default 10) runs the transaction in exclusive
/// mode: it waits until no other agent is inside a transaction, and no
/// other begins until this one commits or aborts, so a conflict cannot
/// abort it again and the retry loop ends. `heirloom_begin` starts the
/// count again. An exclusive restart waits for every other agent's
/// transaction, those of agents this thread drives included: end them
/// first. Counted in the agent's restarts and exclusive runs.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_restart(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { begin(a, Begin::Restart) }
}

/// How a transaction begins.
enum Begin {
    /// `heirloom_begin`: new work, a new age.
    New,
    /// `heirloom_retry`: the last transaction's age.
    Retry,
    /// `heirloom_restart`: `Agent::restart`.
    Restart,
}

/// `heirloom_begin`, `heirloom_retry` or `heirloom_restart`.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
unsafe fn begin(a: *mut heirloom_agent, how: Begin) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            if st.txn.is_some() || st.pending.is_some() {
                set_message(st, "heirloom: a transaction is already open on this agent");
                return HEIRLOOM_EMISUSE;
            }
            let agent = st.agent;
            if agent.is_null() {
                return HEIRLOOM_EINVAL;
            }
            // SAFETY: the agent lives at a stable address until
            // `heirloom_agent_free`, which drops the transaction first (so
            // does the panic path), and nothing else reaches the agent
            // while a transaction is open.
            // Bound to this thread, and to the thread of each later call
            // (`with_agent`), so a wait that it blocks on the thread of its
            // last call is refused, not a hang. (The agent stays bound
            // after the transaction: nothing to write while it keeps to
            // one thread.)
            (*agent).bind_to_thread(true);
            let txn: Transaction<'static> = match how {
                Begin::New => {
                    st.restarts = 0;
                    (*agent).begin()
                }
                Begin::Retry => (*agent).retry(),
                Begin::Restart => {
                    st.restarts = st.restarts.saturating_add(1);
                    (*agent).restart(st.restarts)
                }
            };
            st.txn = Some(txn);
            st.thread = this_thread();
            HEIRLOOM_OK
        })
    }
}
