//! Fault injection for the panic-safety tests, and one hook for the tests
//! of races around a waiter's park.
//!
//! The lock manager calls [`hit`] at the points where a panic is hardest to
//! survive: while a request is linked and waiting, inside the conflict
//! policy's check (the deadlock search holds the registry lock
//! there), and between two releases at the end of a transaction. In
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

/// A test's closure, run once on its thread the next time the lock
/// manager reaches the hook's place.
#[cfg(test)]
type Hook = std::cell::RefCell<Option<Box<dyn FnOnce()>>>;

#[cfg(test)]
std::thread_local! {
    static BEFORE_PARK: Hook = const { std::cell::RefCell::new(None) };
    static BEFORE_WAITING: Hook = const { std::cell::RefCell::new(None) };
}

/// Sets `hook` on this thread.
#[cfg(all(test, not(heirloom_loom)))]
fn set(hook: &'static std::thread::LocalKey<Hook>, f: impl FnOnce() + 'static) {
    hook.with(|h| *h.borrow_mut() = Some(Box::new(f)));
}

/// Runs `hook` if this thread set it, and clears it.
#[cfg(test)]
fn run(hook: &'static std::thread::LocalKey<Hook>) {
    if let Some(f) = hook.with(|h| h.borrow_mut().take()) {
        f();
    }
}

/// Runs `f` once, on this thread, the next time a waiter of this thread has
/// looked at its edges and is about to park ([`before_park`]).
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn on_before_park(f: impl FnOnce() + 'static) {
    set(&BEFORE_PARK, f);
}

/// In `Transaction::wait`, after the conflict policy's look and before the
/// park: runs the hook set by [`on_before_park`] (tests only; a no-op
/// otherwise).
#[inline(always)]
pub(crate) fn before_park() {
    #[cfg(test)]
    run(&BEFORE_PARK);
}

/// Runs `f` once, on this thread, the next time a request of this thread
/// on the latch-free table (CAS append) has judged what is ahead of it,
/// found something in its way, and is about to count itself waiting
/// ([`before_waiting`]).
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn on_before_waiting(f: impl FnOnce() + 'static) {
    set(&BEFORE_WAITING, f);
}

/// In the latch-free CAS append, between the walk that found a request in
/// the way and the count in the bucket's `waiting`: runs the hook set by
/// [`on_before_waiting`] (tests only; a no-op otherwise).
#[inline(always)]
pub(crate) fn before_waiting() {
    #[cfg(test)]
    run(&BEFORE_WAITING);
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
