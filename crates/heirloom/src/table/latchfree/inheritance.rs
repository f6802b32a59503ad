//! Speculative lock inheritance on the latch-free lists: passing a request
//! on (INHERITED), taking it back, and the per-bucket heat window.

use super::*;

impl<const SWAP: bool> LatchFree<SWAP> {
    /// At commit: keeps the granted `r` INHERITED for the agent's next
    /// transaction if the lock has `heat` and nobody waits for it (SLI
    /// criteria 2 and 4, see `inherit.rs`); else releases it.
    ///
    /// # Safety
    /// As [`LockTable::release_or_inherit`].
    #[inline]
    pub(super) unsafe fn release_or_inherit_in_list(
        &self,
        c: &AgentCounters,
        h: At,
        r: ReqPtr,
        heat: Heat,
        wake: &mut Vec<ReqPtr>,
    ) -> Handoff {
        let b = self.bucket(h);
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        // A fast hold is no request to pass on (the transaction releases
        // it before it gets here, `Handle::is_fast`). A counted strong one
        // is not passed on either: while INHERITED it would keep the
        // lock's fast path shut, and an invalidator, which cannot tell
        // that it was counted, would leave the count for its owner to
        // take back, maybe transactions later.
        if !h.may_pass_on() || !heat.allows(|| Self::heat_window(b, q)) {
            self.release_req(c, h, q, wake);
            return Handoff::Released;
        }
        if self.pass_on(b, c, q, wake) {
            Handoff::Inherited
        } else {
            self.release_req(c, h, q, wake);
            Handoff::Released
        }
    }

    /// Re-inheritance of a reclaimed request: no heat check (it was hot).
    ///
    /// # Safety
    /// As [`LockTable::reinherit`].
    #[inline]
    pub(super) unsafe fn reinherit_in_list(
        &self,
        c: &AgentCounters,
        h: At,
        r: ReqPtr,
        wake: &mut Vec<ReqPtr>,
    ) -> Reinherit {
        let b = self.bucket(h);
        // SAFETY: the caller's own live request (the contract).
        let q = unsafe { r.get() };
        if h.may_pass_on() && self.pass_on(b, c, q, wake) {
            Reinherit::Passed
        } else {
            self.release_req(c, h, q, wake);
            Reinherit::Released
        }
    }

    /// Stores INHERITED unless a waiter of the lock that `r` is in the way
    /// of exists; `false` (and `r` GRANTED again) if one does. `true` also
    /// when somebody invalidated it meanwhile: the agent's next transaction
    /// finds it INVALID.
    pub(super) fn pass_on(&self, b: &Bucket, c: &AgentCounters, q: &Request, wake: &mut Vec<ReqPtr>) -> bool {
        // Release: pairs with the Acquire of the reclaim or invalidate CAS.
        q.status.store(INHERITED, Ordering::Release);
        // SeqCst fence: as in `after_release` (a waiter that did not see
        // INHERITED is seen here).
        fence(Ordering::SeqCst);
        if b.waiting.load(Ordering::Relaxed) == 0 {
            return true;
        }
        let g = pin();
        let words = (q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let (mode, me) = (q.mode(), q.txn.load(Ordering::Relaxed));
        let mut blocks = false;
        Self::walk(b, self.route(words), c, &g, |n| match n {
            None => {
                blocks = false;
                Visit::Next
            }
            Some((_, x)) => {
                if same_lock(x, words)
                    && x.txn.load(Ordering::Relaxed) != me
                    && x.status.load(Ordering::Acquire) == WAITING
                    && !mode.compatible(x.mode())
                {
                    blocks = true;
                    Visit::Stop
                } else {
                    Visit::Next
                }
            }
        });
        if !blocks {
            return true;
        }
        // Take it back to release it.
        if q.status
            .compare_exchange(INHERITED, GRANTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return false;
        }
        // Invalidated first (the invalidator unlinks it). An invalidation
        // does no wake-up of its own, and the waiter we saw parked while
        // this request was GRANTED may not be the invalidator: the
        // release's wake-up duty is ours. (Later waiters never park on an
        // INHERITED request: they invalidate it.)
        self.wake_scan(b, c, words, mode, wake, &g);
        true
    }
}
