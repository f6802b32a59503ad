//! Fault injection for the panic-safety tests, and one hook for the tests
//! of races around a waiter's park.
//!
//! The lock manager calls [`hit`] at the points where a panic is hardest to
//! survive: while a request is linked and waiting, inside the conflict
//! policy's check (the deadlock search holds the detector and registry
//! mutexes there), and between two releases at the end of a transaction. In
//! the crate's own tests a test may arm one point for the current thread;
//! everywhere else `hit` is an empty inline function.

/// A place where a panic can be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Point {
    /// In `Transaction::wait`, with the request linked, before it parks.
    Wait,
    /// In the conflict policy's check of a blocked request (for `Detect`,
    /// inside the deadlock search, with its mutexes held).
    PolicyCheck,
    /// In `Transaction::finish`, after a lock was released and before the
    /// next one is.
    Finish,
}

#[cfg(test)]
std::thread_local! {
    static ARMED: std::cell::Cell<Option<Point>> = const { std::cell::Cell::new(None) };
}

/// Panics at `p` once, on this thread, the next time it is reached.
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn arm(p: Point) {
    ARMED.with(|a| a.set(Some(p)));
}

/// Disarms whatever was armed on this thread.
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn disarm() {
    ARMED.with(|a| a.set(None));
}

#[cfg(test)]
std::thread_local! {
    static BEFORE_PARK: std::cell::RefCell<Option<Box<dyn FnOnce()>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` once, on this thread, the next time a waiter of this thread has
/// looked at its edges and is about to park ([`before_park`]).
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn on_before_park(f: impl FnOnce() + 'static) {
    BEFORE_PARK.with(|h| *h.borrow_mut() = Some(Box::new(f)));
}

#[cfg(test)]
std::thread_local! {
    static NO_AGE_RECHECK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Switches this thread's waiters' `AGE_RECHECK` timer off, so that a test
/// sees a lost wake-up as a hang instead of a 20 ms delay.
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn no_age_recheck() {
    NO_AGE_RECHECK.with(|c| c.set(true));
}

/// Whether waiters of this thread re-judge their edges on `AGE_RECHECK`'s
/// timer (always, outside this crate's tests).
#[inline(always)]
pub(crate) fn age_recheck() -> bool {
    #[cfg(test)]
    if NO_AGE_RECHECK.with(|c| c.get()) {
        return false;
    }
    true
}

/// In `Transaction::wait`, after the conflict policy's look and before the
/// park: runs the hook set by [`on_before_park`] (tests only; a no-op
/// otherwise).
#[inline(always)]
pub(crate) fn before_park() {
    #[cfg(test)]
    if let Some(f) = BEFORE_PARK.with(|h| h.borrow_mut().take()) {
        f();
    }
}

/// Panics if `p` is armed on this thread (tests only; a no-op otherwise).
#[inline(always)]
pub(crate) fn hit(p: Point) {
    #[cfg(test)]
    if ARMED.with(|a| a.get()) == Some(p) {
        ARMED.with(|a| a.set(None));
        panic!("heirloom test: injected panic at {p:?}");
    }
    #[cfg(not(test))]
    let _ = p;
}
