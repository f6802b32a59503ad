//! Finishing: commit and abort end the transaction through its agent's
//! `release_all` (`release.rs`, where every release is), run again if it
//! unwinds; a transaction dropped unfinished aborts.
//!
//! # Panic safety
//!
//! Every request this transaction has linked is known to its agent at every
//! instant: granted ones are in the lock cache (`Agent::cache`), and the one
//! it waits for is `Waiting::in_flight` from before it can park until the
//! wait is decided. So a panic anywhere (the caller's code, the conflict
//! policy, the deadlock search, a bug of ours) unwinds into
//! `Transaction::drop`, which cancels the request in flight and releases
//! every lock. `finish` pops each lock only once it is released and marks
//! the transaction done only at the end; a panic inside `finish` itself
//! runs `finish` again from where it stopped (`ResumeOnUnwind`), so the
//! remaining locks and the exclusive-mode gate are never left behind. (A
//! second panic while that resumed `finish` unwinds aborts the process, as
//! any panic during unwinding does.) A transaction that is forgotten
//! (`mem::forget`) is finished by its agent's next `begin`, or by the
//! agent's drop.

use super::*;

impl Transaction<'_> {
    /// Releases every lock, leaf to root, and ends the transaction. With
    /// inheritance on, eligible locks are passed to the agent's next
    /// transaction instead (see `inherit.rs`). Unwind-safe: see the module
    /// docs.
    #[inline]
    pub(super) fn finish(&mut self, committed: bool) {
        if self.agent.txn.done {
            return;
        }
        let this = ResumeOnUnwind(self);
        this.0.agent.release_all(committed);
        std::mem::forget(this);
    }
}

/// Runs [`Transaction::finish`] again if the run it guards unwinds.
struct ResumeOnUnwind<'t, 'a>(&'t mut Transaction<'a>);

impl Drop for ResumeOnUnwind<'_, '_> {
    fn drop(&mut self) {
        // Only reached by unwinding (`finish` forgets the guard otherwise).
        self.0.finish(false);
    }
}

impl Drop for Transaction<'_> {
    #[inline]
    fn drop(&mut self) {
        // After commit or abort `done` is set: no call (the common case).
        if !self.agent.txn.done {
            self.finish(false);
        }
    }
}
