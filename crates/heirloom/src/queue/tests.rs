//! The grant rules of one queue, request by request.

use super::*;

fn req(txn: u64) -> ReqPtr {
    let r = ReqPtr::alloc(0);
    // SAFETY: just allocated; freed at the end of each test.
    unsafe { r.get() }.txn.store(txn, Ordering::Relaxed);
    r
}

fn acq(q: &mut Queue, r: ReqPtr, mode: Mode) -> Outcome {
    // SAFETY: test nodes are alive until freed at the end of each test.
    unsafe { q.acquire(r, mode, true, false) }
}

fn status(r: ReqPtr) -> crate::request::Status {
    // SAFETY: allocated by the test, freed at its end.
    unsafe { r.get() }.status.load(Ordering::Relaxed)
}

/// Regression: a release granted a waiting new request that sat ahead of
/// a pending conversion in queue order although it conflicted with the
/// conversion's target. That made a new holder block the conversion
/// without the converter re-running its conflict policy (a wound-wait
/// deadlock left unresolved in the stress test).
#[test]
fn waiter_is_not_granted_past_a_pending_conversion() {
    let mut q = Queue::new();
    let mut wake = Vec::new();
    let (s1, is4, ix2, is3) = (req(1), req(4), req(2), req(3));
    assert!(matches!(acq(&mut q, s1, Mode::S), Outcome::Granted));
    assert!(matches!(acq(&mut q, is4, Mode::IS), Outcome::Granted));
    assert!(matches!(acq(&mut q, ix2, Mode::IX), Outcome::Waiting));
    assert!(matches!(acq(&mut q, is3, Mode::IS), Outcome::Granted));
    assert!(matches!(
        {
            // SAFETY: test nodes live until freed at the end; `is3` is linked.
            unsafe { q.convert(is3, Mode::X, true, true, &mut wake) }
        },
        Outcome::Waiting
    ));
    q.release(s1, &mut wake);
    assert_eq!(status(is3), CONVERTING, "IS of another holder still blocks X");
    assert_eq!(status(ix2), WAITING, "IX conflicts with the pending conversion to X");
    let mut b = Vec::new();
    assert!(q.blockers(ix2, &mut b));
    assert!(b.iter().any(|b| b.txn.0 == 3), "the conversion blocks the waiter");
    q.release(is4, &mut wake);
    assert_eq!(status(is3), GRANTED);
    assert_eq!(q.group(), Mode::X);
    q.release(is3, &mut wake);
    assert_eq!(status(ix2), GRANTED);
    q.release(ix2, &mut wake);
    assert!(q.is_empty());
    for r in [s1, is4, ix2, is3] {
        // SAFETY: allocated above and unlinked from the queue.
        unsafe { r.free() };
    }
}

/// Regression: a conversion that starts waiting keeps its place among
/// the holders, ahead of every waiter, so the waiters behind it get a
/// new edge; wait-die and wound-wait judge only their own edges and must
/// be woken to judge it (the stress test stalled under wound-wait: an
/// older waiter behind a younger converter, nobody wounded).
#[test]
fn a_conversion_that_waits_wakes_the_waiters_behind_it() {
    let mut q = Queue::new();
    let (is1, ix2, x3) = (req(1), req(2), req(3));
    assert!(matches!(acq(&mut q, is1, Mode::IS), Outcome::Granted));
    assert!(matches!(acq(&mut q, ix2, Mode::IX), Outcome::Granted));
    assert!(matches!(acq(&mut q, x3, Mode::X), Outcome::Waiting));
    let mut b = Vec::new();
    assert!(q.blockers(x3, &mut b));

    let mut wake = Vec::new();
    // SAFETY: test nodes live until freed at the end; `is1` is linked.
    let out = unsafe { q.convert(is1, Mode::S, true, true, &mut wake) };
    assert!(matches!(out, Outcome::Waiting), "S waits for the IX holder");
    b.clear();
    assert!(q.blockers(x3, &mut b));
    assert!(
        b.iter().any(|b| b.txn.0 == 1),
        "the waiting conversion blocks the waiter behind it"
    );
    assert!(
        wake.contains(&x3),
        "the waiter behind was not woken to judge its new edge"
    );
    q.release(ix2, &mut wake);
    assert_eq!(status(is1), GRANTED);
    q.release(is1, &mut wake);
    assert_eq!(status(x3), GRANTED);
    q.release(x3, &mut wake);
    assert!(q.is_empty());
    for r in [is1, ix2, x3] {
        // SAFETY: allocated above and unlinked from the queue.
        unsafe { r.free() };
    }
}

/// Regression: a head rebound to another lock kept the old lock's heat,
/// so a cold lock could be passed on because a hot one used the head.
#[test]
fn rebinding_a_queue_forgets_the_old_locks_heat() {
    let mut q = Queue::new();
    let mut wake = Vec::new();
    for t in 0..16 {
        let r = req(t);
        // SAFETY: allocated just above, freed below once unlinked.
        let out = unsafe { q.acquire(r, Mode::IS, true, true) };
        assert!(matches!(out, Outcome::Granted));
        q.release(r, &mut wake);
        // SAFETY: unlinked just above.
        unsafe { r.free() };
    }
    assert!(Heat::AtLeast(16).allows(|| q.heat()));
    q.rebind();
    assert_eq!(q.heat(), 0);
    assert!(!Heat::AtLeast(1).allows(|| q.heat()));
}

#[test]
fn fifo_stops_new_requests_behind_an_incompatible_waiter() {
    let mut q = Queue::new();
    let mut wake = Vec::new();
    let (is1, x2, is3) = (req(1), req(2), req(3));
    assert!(matches!(acq(&mut q, is1, Mode::IS), Outcome::Granted));
    assert!(matches!(acq(&mut q, x2, Mode::X), Outcome::Waiting));
    assert!(
        matches!(acq(&mut q, is3, Mode::IS), Outcome::Waiting),
        "IS queues behind the waiting X"
    );
    q.release(is1, &mut wake);
    assert_eq!(status(x2), GRANTED);
    assert_eq!(status(is3), WAITING);
    q.release(x2, &mut wake);
    assert_eq!(status(is3), GRANTED);
    assert_eq!(wake, vec![x2, is3]);
    q.release(is3, &mut wake);
    for r in [is1, x2, is3] {
        // SAFETY: allocated above and unlinked from the queue.
        unsafe { r.free() };
    }
}
