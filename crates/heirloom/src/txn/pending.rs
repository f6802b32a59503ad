//! Waits that do not need the thread: [`Transaction::lock_async`], a
//! future for an async runtime (tokio or any other; the C interface's
//! `heirloom_lock_start` drives the same future with a callback), and
//! the same future for `lock_all` and `wait_for_txn`.
//!
//! The lock call runs as the blocking one does, with the agent's `defer`
//! set: a request that must wait is linked as usual and left in flight
//! (`Transaction::defer`), and the call returns at once. The future then
//! waits for it with the blocking wait's own pieces (`wait_begin`,
//! `wait_look`, `wait_timed_out`, `wait_end` in `wait.rs`), with the
//! task's [`Waker`](std::task::Waker) registered on the request's key
//! (`sync::tasks`) where a thread would park: every wake-up that would
//! unpark the thread (the grant, a wound, a notice) wakes the task, and
//! a time limit or the first deadlock search's time is a timer
//! (`futures-timer`'s thread, whatever the runtime). Once granted, the
//! lock call runs again: the levels already held are the lock cache's
//! hits, and the walk goes on below them, where it may wait again.
//!
//! So two sessions on one thread that conflict cannot hang each other:
//! the thread runs the holder while the requester's task is parked. The
//! conflict policies judge an async wait as they judge a parked thread's
//! (the same cadence), and a deadlock between tasks is found as one
//! between threads.
//!
//! Dropping the future withdraws its request (cancel-safe, as a timeout
//! of the runtime's needs): cancelled, or released if it was granted in
//! the meantime; the levels above it already granted stay held, as a
//! skipped request's do, and the transaction goes on.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::wait::{WaitState, still_waiting};
use super::*;
use crate::sync::tasks;

/// The reason of the placeholder error that carries a deferred lock call
/// out of the walk (`Transaction::defer`); the future never returns it.
const DEFERRED: &str = "a wait deferred to its future";

/// The reason of the error a [`LockFuture`] polled again after it
/// completed returns.
const POLLED_AFTER_COMPLETION: &str = "a LockFuture was polled after it completed";

/// A lock call that waits without blocking its thread:
/// [`Transaction::lock_async`], [`Transaction::lock_with_async`],
/// [`Transaction::lock_all_async`] and [`Transaction::wait_for_txn_async`].
/// It resolves to what the blocking call would return.
///
/// Cancel-safe: dropping it before it resolves withdraws the request it
/// waits for (a grant that raced with the drop is released), and the
/// transaction goes on; locks granted before the drop (the ancestors, and
/// under `lock_all_async` the requests already granted) stay held. Do not
/// [`mem::forget`](std::mem::forget) it: its request then stays queued
/// until the transaction's next wait or its end.
#[must_use = "a LockFuture does nothing unless awaited or polled"]
pub struct LockFuture<'t, 'a> {
    txn: &'t mut Transaction<'a>,
    call: Call<'t>,
    wait: Wait,
    /// The wait in progress, if the request waits.
    pending: Option<Pending>,
    /// Resolved: a later poll is refused.
    done: bool,
    /// The lock call has run at least once (later runs only go on below
    /// the levels waited for).
    ran: bool,
}

/// The blocking call a [`LockFuture`] makes.
#[derive(Clone, Copy, Debug)]
enum Call<'t> {
    /// `lock_with`.
    One(LockId, Mode),
    /// `lock_all`: a later run finds the requests granted so far in the
    /// lock cache and goes on with the rest.
    All(&'t [(LockId, Mode)]),
    /// `wait_for_txn`: S on the other transaction's lock, released in the
    /// poll that sees it granted.
    TxnEnd(TxnId),
}

impl Call<'_> {
    /// The lock an error about the call itself names.
    fn lock(self) -> LockId {
        match self {
            Call::One(id, _) => id,
            Call::All(reqs) => reqs.first().map_or(LockId::database(0), |r| r.0),
            Call::TxnEnd(other) => LockId::transaction(other),
        }
    }
}

impl std::fmt::Debug for LockFuture<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockFuture")
            .field("txn", &self.txn.id())
            .field("call", &self.call)
            .field("waiting", &self.pending.is_some())
            .field("done", &self.done)
            .finish()
    }
}

/// A deferred request's wait.
#[derive(Debug)]
struct Pending {
    w: WaitState,
    /// The timer of the wait's next time (its limit, or the first deadlock
    /// search), and that time.
    timer: Option<(Instant, futures_timer::Delay)>,
    /// The task's waker is registered on the request's key: a poll after
    /// this is a wake-up (or a spurious poll, which is judged as one).
    registered: bool,
}

impl<'a> Transaction<'a> {
    /// [`Transaction::lock`] as a future: a request that must wait does
    /// not block the thread, so many sessions (transactions on their own
    /// agents) can run on a few threads of an async runtime, two of them
    /// on one thread that conflict included. The future resolves to what
    /// `lock` would return; the conflict policy judges its wait as it
    /// judges a blocked thread's. See [`LockFuture`] for cancellation.
    ///
    /// ```
    /// use heirloom::{LockId, LockManager, Mode, TableId};
    /// const ACCOUNTS: TableId = TableId::new(0, 1);
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # rt.block_on(async {
    /// let lm = LockManager::default();
    /// let mut agent = lm.agent();
    /// let mut t = agent.begin();
    /// t.lock_async(LockId::row(ACCOUNTS, 7), Mode::X).await?;
    /// t.commit()?;
    /// # Ok::<(), heirloom::LockError>(())
    /// # }).unwrap();
    /// ```
    pub fn lock_async<'t>(&'t mut self, id: LockId, mode: Mode) -> LockFuture<'t, 'a> {
        self.lock_with_async(id, mode, Wait::Policy)
    }

    /// [`Transaction::wait_for_txn`] as a future: waits for `other` to end
    /// without blocking the thread ([`Transaction::lock_async`]'s request
    /// for S on `other`'s transaction lock, released in the same poll that
    /// sees it granted, so no cancellation point falls between the two).
    /// Dropping the future withdraws the wait, as dropping any
    /// [`LockFuture`] does, and the transaction goes on.
    pub fn wait_for_txn_async<'t>(&'t mut self, other: TxnId, wait: Wait) -> LockFuture<'t, 'a> {
        self.future(Call::TxnEnd(other), wait)
    }

    /// [`Transaction::lock_with`] as a future ([`Transaction::lock_async`]).
    pub fn lock_with_async<'t>(&'t mut self, id: LockId, mode: Mode, wait: Wait) -> LockFuture<'t, 'a> {
        self.future(Call::One(id, mode), wait)
    }

    /// [`Transaction::lock_all`] as a future: the requests that can be
    /// granted at once are, as one batch per level; a request that must
    /// wait waits without blocking the thread, and once it is granted the
    /// call goes on with the rest (the requests granted so far are the
    /// lock cache's hits), so the waits, their policy and their order are
    /// `lock_all`'s. Dropping the future withdraws the request it waits
    /// for; the requests granted before stay held (see [`LockFuture`]).
    pub fn lock_all_async<'t>(&'t mut self, reqs: &'t [(LockId, Mode)]) -> LockFuture<'t, 'a> {
        self.future(Call::All(reqs), Wait::Policy)
    }

    fn future<'t>(&'t mut self, call: Call<'t>, wait: Wait) -> LockFuture<'t, 'a> {
        LockFuture {
            txn: self,
            call,
            wait,
            pending: None,
            done: false,
            ran: false,
        }
    }
}

impl Transaction<'_> {
    /// Leaves the linked request `f`, which must wait, in flight for the
    /// future whose poll made this lock call, and returns the placeholder
    /// error that ends the call (`uncount_below` and the walk let it pass
    /// untouched; the future never returns it).
    #[cold]
    pub(super) fn defer(&mut self, f: InFlight) -> LockError {
        self.agent.waiting.in_flight = Some(f);
        LockError::InvalidRequest {
            txn: self.id(),
            lock: f.id,
            reason: DEFERRED,
        }
    }

    /// Runs the lock call with deferred waits; the request it left in
    /// flight, if it must wait, with its wait begun (under the call's
    /// `wait`, so that its time limit counts).
    fn lock_deferring(
        &mut self,
        call: Call<'_>,
        wait: Wait,
        again: bool,
    ) -> (Result<(), LockError>, Option<WaitState>) {
        // Only a run after a wait puts the counters back: the first run
        // counts as the blocking call.
        let counted = again.then(|| {
            let c = &self.agent.shared.counters;
            (c.lock_requests.get(), c.cache_hits.get())
        });
        if self.agent.waiting.in_flight.is_some() {
            // Left by a forgotten future: withdrawn now.
            self.agent.abandon_in_flight();
        }
        let saved = (wait != Wait::Policy).then(|| self.apply_wait(wait));
        self.agent.waiting.defer = true;
        let r = match call {
            Call::One(id, mode) => self.lock(id, mode),
            Call::All(reqs) => self.lock_all(reqs),
            Call::TxnEnd(other) => self.lock(LockId::transaction(other), Mode::S),
        };
        self.agent.waiting.defer = false;
        let w = if r.is_err()
            && let Some(f) = self.agent.waiting.in_flight
        {
            Some(self.wait_begin(f, f.id))
        } else {
            None
        };
        if let Some(saved) = saved {
            self.restore_wait(saved);
        }
        if let Some((requests, hits)) = counted {
            // The call was counted when it first ran: a run after a wait
            // adds no request, and the levels it finds held are not hits.
            let c = &self.agent.shared.counters;
            c.lock_requests.add(requests.wrapping_sub(c.lock_requests.get()));
            c.cache_hits.add(hits.wrapping_sub(c.cache_hits.get()));
        }
        (r, w)
    }

    /// One poll of a deferred wait: the blocking wait's loop, with the
    /// task's waker registered where the thread would park.
    fn poll_wait(&mut self, p: &mut Pending, cx: &mut Context<'_>) -> Poll<Result<(), LockError>> {
        let (r, head) = (p.w.info.req, p.w.info.head);
        let key = r.key();
        let me = self.id().0;
        // SAFETY: in flight: this agent's own node (`ReqPtr` contract 1).
        let q = unsafe { r.get() };
        if std::mem::take(&mut p.registered) {
            // Woken (or polled anyway): as a thread's park that returned.
            p.w.cadence.woken();
        }
        loop {
            // As in `wait`: read before the look, so that a notice after it
            // either is seen or makes the condition below false.
            let seen = crate::sync::notices();
            if let Some(out) = self.wait_look(&mut p.w) {
                tasks::forget(key);
                return Poll::Ready(out);
            }
            tasks::register(key, cx.waker());
            if !still_waiting(q, &self.agent.shared, &self.agent.lm, head, me, seen) {
                p.w.cadence.woken();
                continue;
            }
            let Some(at) = p.w.cadence.until(p.w.deadline) else {
                p.timer = None;
                p.registered = true;
                return Poll::Pending;
            };
            if p.timer.as_ref().is_none_or(|(t, _)| *t != at) {
                let d = at.saturating_duration_since(Instant::now());
                p.timer = Some((at, futures_timer::Delay::new(d)));
            }
            let Some((_, timer)) = p.timer.as_mut() else {
                unreachable!("the timer was just set")
            };
            if Pin::new(timer).poll(cx).is_pending() {
                p.registered = true;
                return Poll::Pending;
            }
            p.timer = None;
            if let Some(e) = self.wait_timed_out(&mut p.w, Instant::now()) {
                tasks::forget(key);
                return Poll::Ready(Err(e));
            }
        }
    }

    /// A deferred request's wait ended as `out` (after `wait_end`): a
    /// granted request joins the lock cache (or its conversion is done);
    /// a failed one's node goes back and the transaction is doomed, as the
    /// blocking call does.
    fn end_deferred(&mut self, f: InFlight, out: Result<(), LockError>) -> Result<(), LockError> {
        match (out, f.held) {
            (Ok(()), None) => {
                self.push_held(Held::live(f.id, f.mode, f.req, f.head));
                if self.agent.lm.escalate_after != 0 && f.id.level() >= Level::Page {
                    self.agent.count_below(f.id);
                }
                Ok(())
            }
            (Ok(()), Some(k)) => {
                self.agent.converted(k, f.req, f.head, f.mode);
                Ok(())
            }
            (Err(e), held) => {
                // A conversion in place is back in its old mode; a
                // replacing request goes back and the old one stays.
                if held.is_none_or(|k| self.agent.cache[k].req != f.req) {
                    self.agent.nodes.give_back(f.req);
                }
                Err(self.doom(e))
            }
        }
    }
}

impl LockFuture<'_, '_> {
    /// [`Transaction::bind_to_thread`] on the future's transaction, for an
    /// interface whose pending request's poll moves to another thread (the
    /// C interface's `heirloom_lock_poll`).
    #[doc(hidden)]
    pub fn bind_to_thread(&self, bound: bool) {
        self.txn.bind_to_thread(bound);
    }
}

impl Future for LockFuture<'_, '_> {
    type Output = Result<(), LockError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Err(LockError::InvalidRequest {
                txn: this.txn.id(),
                lock: this.call.lock(),
                reason: POLLED_AFTER_COMPLETION,
            }));
        }
        loop {
            if let Some(p) = this.pending.as_mut() {
                let out = match this.txn.poll_wait(p, cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(out) => out,
                };
                let Some(p) = this.pending.take() else {
                    unreachable!("polled as pending")
                };
                let Some(f) = this.txn.agent.waiting.in_flight else {
                    unreachable!("a deferred wait's request is in flight until it ends")
                };
                let out = this.txn.wait_end(&p.w, out);
                if let Err(e) = this.txn.end_deferred(f, out) {
                    this.done = true;
                    return Poll::Ready(Err(e));
                }
            }
            let again = std::mem::replace(&mut this.ran, true);
            if let (Call::TxnEnd(other), false) = (this.call, again)
                && let Err(e) = this.txn.txn_wait_begins(other)
            {
                this.done = true;
                return Poll::Ready(Err(e));
            }
            let (r, w) = this.txn.lock_deferring(this.call, this.wait, again);
            match w {
                Some(w) => {
                    this.pending = Some(Pending {
                        w,
                        timer: None,
                        registered: false,
                    })
                }
                None => {
                    this.done = true;
                    return Poll::Ready(match (r, this.call) {
                        (Ok(()), Call::TxnEnd(other)) => this.txn.txn_wait_ends(LockId::transaction(other)),
                        (r, _) => r,
                    });
                }
            }
        }
    }
}

impl Drop for LockFuture<'_, '_> {
    fn drop(&mut self) {
        self.txn.agent.waiting.defer = false;
        if let Some(p) = self.pending.take() {
            tasks::forget(p.w.info.req.key());
            // Cancelled, or released if granted meanwhile.
            self.txn.agent.abandon_in_flight();
        }
    }
}
