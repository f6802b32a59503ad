//! Fault injection for the panic-safety tests, and hooks for the tests of
//! races (a waiter's park, a deadlock search's claim, a snapshot's reads).
//!
//! The lock manager calls [`hit`] at the points where a panic is hardest to
//! survive: while a request is linked and waiting, inside the conflict
//! policy's check (the deadlock search holds the registry lock
//! there), and between two releases at the end of a transaction. In
//! the crate's own tests a test may arm one point for the current thread;
//! everywhere else `hit` is an empty inline function. The hooks below run
//! a test's closure at a chosen place instead, to force a race into its
//! window (a waiter's park, a deadlock search's claim, a snapshot's
//! reads); outside tests they are empty too.

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
    static CYCLE_FOUND: Hook = const { std::cell::RefCell::new(None) };
    static SNAPSHOT_VISIT: Hook = const { std::cell::RefCell::new(None) };
    static SNAPSHOT_BETWEEN: Hook = const { std::cell::RefCell::new(None) };
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
/// park: runs the hook set by `on_before_park` (tests only; a no-op
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
/// `on_before_waiting` (tests only; a no-op otherwise).
#[inline(always)]
pub(crate) fn before_waiting() {
    #[cfg(test)]
    run(&BEFORE_WAITING);
}

/// Runs `f` once, on this thread, the next time a deadlock search of this
/// thread has validated a cycle and is about to claim it ([`cycle_found`]).
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn on_cycle_found(f: impl FnOnce() + 'static) {
    set(&CYCLE_FOUND, f);
}

/// In `deadlock::find_cycle`, between the validation of a cycle and its
/// claim (step (D)): runs the hook set by `on_cycle_found` (tests only; a
/// no-op otherwise).
#[inline(always)]
pub(crate) fn cycle_found() {
    #[cfg(test)]
    run(&CYCLE_FOUND);
}

/// Runs `f` once, on this thread, the next time a snapshot taken on this
/// thread has read a request of a latch-free list ([`snapshot_visit`]).
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn on_snapshot_visit(f: impl FnOnce() + 'static) {
    set(&SNAPSHOT_VISIT, f);
}

/// In the latch-free tables' snapshot, after a request was read and before
/// the walk goes on: runs the hook set by `on_snapshot_visit` (tests only;
/// a no-op otherwise).
#[inline(always)]
pub(crate) fn snapshot_visit() {
    #[cfg(test)]
    run(&SNAPSHOT_VISIT);
}

/// Runs `f` once, on this thread, the next time a snapshot taken on this
/// thread has read the lock table's requests and not yet the fast holds
/// that it reads apart from them ([`snapshot_between`]).
#[cfg(all(test, not(heirloom_loom)))]
pub(crate) fn on_snapshot_between(f: impl FnOnce() + 'static) {
    set(&SNAPSHOT_BETWEEN, f);
}

/// In the snapshot of a table with the fast path, after the requests were
/// read and before the fast holds read apart from them: runs the hook set
/// by `on_snapshot_between` (tests only; a no-op otherwise).
#[inline(always)]
pub(crate) fn snapshot_between() {
    #[cfg(test)]
    run(&SNAPSHOT_BETWEEN);
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
