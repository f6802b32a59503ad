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
    unsafe { q.acquire(r, mode, true, false, false) }
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
            unsafe { q.convert(is3, Mode::X, true, false, true, &mut wake) }
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
    let out = unsafe { q.convert(is1, Mode::S, true, false, true, &mut wake) };
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
        let out = unsafe { q.acquire(r, Mode::IS, true, false, true) };
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

/// A request of transaction `txn` whose age is `txn` too.
fn aged(txn: u64) -> ReqPtr {
    let r = req(txn);
    // SAFETY: just allocated; freed at the end of each test.
    unsafe { r.get() }.ts.store(txn, Ordering::Relaxed);
    r
}

/// Wait-die's judgement before linking (`die`): an older request in the
/// way refuses a new request or a conversion unlinked; younger ones let it
/// wait.
#[test]
fn wait_die_judges_a_request_before_it_is_linked() {
    let mut q = Queue::new();
    let mut wake = Vec::new();
    let (s5, x3, s7, x4, x1) = (aged(5), aged(3), aged(7), aged(4), aged(1));
    let die = |q: &mut Queue, r, m| {
        // SAFETY: test nodes live until freed at the end, and each is
        // asked for once, linked nowhere.
        unsafe { q.acquire(r, m, true, true, false) }
    };
    assert!(matches!(die(&mut q, s5, Mode::S), Outcome::Granted));
    assert!(
        matches!(die(&mut q, x3, Mode::X), Outcome::Waiting),
        "only a younger holder"
    );
    // S is compatible with the holder, but the older X waits ahead of it.
    let out = die(&mut q, s7, Mode::S);
    assert!(matches!(out, Outcome::Refused(b) if b.txn.0 == 3), "{out:?}");
    // The holder is younger, the waiter ahead older.
    let out = die(&mut q, x4, Mode::X);
    assert!(matches!(out, Outcome::Refused(b) if b.txn.0 == 3), "{out:?}");
    assert_eq!(q.reqs.len(), 2, "a request that died was linked");
    assert!(matches!(die(&mut q, x1, Mode::X), Outcome::Waiting), "the oldest waits");
    // A conversion is judged against the holders: the older S holder
    // refuses the younger's conversion, which keeps its S.
    let s2 = aged(2);
    let mut q2 = Queue::new();
    assert!(matches!(die(&mut q2, s2, Mode::S), Outcome::Granted));
    assert!(matches!(die(&mut q2, s7, Mode::S), Outcome::Granted));
    // SAFETY: a test node, linked here.
    let out = unsafe { q2.convert(s7, Mode::X, true, true, true, &mut wake) };
    assert!(matches!(out, Outcome::Refused(b) if b.txn.0 == 2), "{out:?}");
    // SAFETY: a test node, alive until the end.
    let kept = unsafe { s7.get() }.mode();
    assert_eq!((status(s7), kept), (GRANTED, Mode::S));
    // SAFETY: a test node, linked here.
    let out = unsafe { q2.convert(s2, Mode::X, true, true, true, &mut wake) };
    assert!(
        matches!(out, Outcome::Waiting),
        "the older converter waits for the younger"
    );
    q2.release(s7, &mut wake);
    assert_eq!(status(s2), GRANTED);
    q2.release(s2, &mut wake);
    q.release(s5, &mut wake);
    assert_eq!(status(x3), GRANTED, "the waiters keep their order");
    q.release(x3, &mut wake);
    q.release(x1, &mut wake);
    assert!(q.is_empty() && q2.is_empty());
    for r in [s5, x3, s7, x4, x1, s2] {
        // SAFETY: allocated above and unlinked from the queues.
        unsafe { r.free() };
    }
}

/// Takes every request out of `q` (waiters first, so that each release
/// grants nothing new), then frees `all`.
fn drain_and_free(q: &mut Queue, all: &[ReqPtr]) {
    let mut wake = Vec::new();
    while let Some(&r) = q.reqs.iter().find(|&&r| matches!(status(r), WAITING | CONVERTING)) {
        // SAFETY: test nodes, linked here.
        unsafe { q.cancel(r, &mut wake) };
    }
    while let Some(&r) = q.reqs.first() {
        q.release(r, &mut wake);
    }
    for &r in all {
        // SAFETY: allocated by the test, linked nowhere now.
        unsafe { r.free() };
    }
}

/// Checks wait-die's judgement before linking (`judged`) of `r`, of age
/// `age`, against the first judgement of the linked request: refused, it
/// is linked without the judgement (`link`) and `blockers` names the older
/// transaction (then it is cancelled); admitted to wait, only younger ones
/// are in its way.
fn as_first_judgement(
    q: &mut Queue,
    r: ReqPtr,
    age: u64,
    judged: Outcome,
    link: impl FnOnce(&mut Queue) -> Outcome,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut bs = Vec::new();
    match judged {
        Outcome::Refused(b) => {
            proptest::prop_assert!(b.ts < age);
            proptest::prop_assert!(matches!(link(q), Outcome::Waiting));
            q.blockers(r, &mut bs);
            proptest::prop_assert!(bs.iter().any(|x| x.txn == b.txn));
            // SAFETY: linked here, alive.
            unsafe { q.cancel(r, &mut Vec::new()) };
        }
        Outcome::Waiting => {
            q.blockers(r, &mut bs);
            proptest::prop_assert!(bs.iter().all(|x| x.ts > age), "waits for an older one");
        }
        _ => {}
    }
    Ok(())
}

proptest::proptest! {
    /// Whatever the queue, wait-die's judgement before linking decides as
    /// the policy's first judgement of the linked request would
    /// (`Queue::blockers`, no fast holds here): a request refused names an
    /// older transaction that would block it once linked; one admitted
    /// to wait has only younger ones in its way.
    #[test]
    fn wait_die_before_linking_decides_as_the_first_judgement(
        ops in proptest::collection::vec((0usize..4, 1usize..crate::mode::MODE_COUNT, proptest::prelude::any::<u8>()), 1..40),
    ) {
        let mut q = Queue::new();
        let mut wake = Vec::new();
        let mut all = Vec::new();
        for (i, (op, m, pick)) in ops.into_iter().enumerate() {
            let mode = crate::mode::ALL_MODES[m];
            // Distinct ages, in no particular order.
            let age = u64::from(pick) * 64 + i as u64 + 1;
            let linked: Vec<ReqPtr> = q.reqs.iter().copied().collect();
            let granted: Vec<ReqPtr> = linked.iter().copied().filter(|&r| status(r) == GRANTED).collect();
            match op {
                // A release of a holder.
                0 if !granted.is_empty() => q.release(granted[usize::from(pick) % granted.len()], &mut wake),
                // A conversion of a holder.
                1 if !granted.is_empty() => {
                    let r = granted[usize::from(pick) % granted.len()];
                    // SAFETY: linked here, alive.
                    let (held, me) = unsafe { (r.get().mode(), r.get().ts.load(Ordering::Relaxed)) };
                    let to = held.join(mode);
                    if to == held {
                        continue;
                    }
                    // SAFETY: linked here, alive.
                    let judged = unsafe { q.convert(r, to, true, true, true, &mut wake) };
                    as_first_judgement(&mut q, r, me, judged, |q| {
                        // SAFETY: linked here (still granted its old mode), alive.
                        unsafe { q.convert(r, to, true, false, true, &mut Vec::new()) }
                    })?;
                }
                // A new request.
                _ => {
                    let r = aged(age);
                    all.push(r);
                    // SAFETY: just allocated, linked nowhere.
                    let judged = unsafe { q.acquire(r, mode, true, true, false) };
                    as_first_judgement(&mut q, r, age, judged, |q| {
                        // SAFETY: linked nowhere (refused).
                        unsafe { q.acquire(r, mode, true, false, false) }
                    })?;
                }
            }
        }
        drain_and_free(&mut q, &all);
    }
}

#[test]
fn ages_order_by_age_then_by_agent() {
    assert!(older(4, 9, 5, 0), "the smaller age first, whatever the agents");
    assert!(!older(5, 0, 4, 9));
    assert!(older(5, 1, 5, 2), "equal ages: the lower agent index is older");
    assert!(!older(5, 2, 5, 1));
    assert!(!older(5, 1, 5, 1), "a transaction is not older than itself");
}
