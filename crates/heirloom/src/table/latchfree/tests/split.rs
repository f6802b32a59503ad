//! Lists that split (`split.rs`): a lock's requests on both sides of a
//! freeze keep their order for every reader: the appender's judgement,
//! the releaser's wake-up, blockers, the snapshot; releases unlink below
//! the bucket's list; and a lock on an empty frozen route takes the
//! unpinned path down. On both appends: a swap-appended bucket's list is
//! frozen by its end taking the tail, the lists below it are CAS-appended.

use super::super::{At, LatchFree};
use super::unlink::{free, node, orphan, request, unlinked_by_owner};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::{Blocker, Outcome};
use crate::request::{NEVER_LINKED, ReqPtr};
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::{Caller, LockTable};

const T: TableId = TableId::new(0, 1);

fn acquire<const S: bool>(t: &LatchFree<S>, c: &AgentCounters, row: u64, r: ReqPtr, mode: Mode) -> (Outcome, At) {
    // SAFETY: the test's own node, linked nowhere yet.
    unsafe { t.acquire(Caller::of(c), LockId::row(T, row), r, mode, true, true, &mut Vec::new()) }
}

fn release<const S: bool>(t: &LatchFree<S>, c: &AgentCounters, h: At, r: ReqPtr) -> Vec<ReqPtr> {
    let mut wake = Vec::new();
    // SAFETY: the test's own granted node, of handle `h`.
    unsafe { t.release(Caller::of(c), h, r, &mut wake) };
    wake
}

#[test]
fn a_waiter_below_a_freeze_is_granted_by_a_holder_above_it() {
    waiter_below_a_freeze::<false>();
}

#[test]
fn a_waiter_below_a_swap_freeze_is_granted_by_a_holder_above_it() {
    waiter_below_a_freeze::<true>();
}

fn waiter_below_a_freeze<const S: bool>() {
    // One bucket, split at the first request of another lock.
    let t = LatchFree::<S>::new(1, false, false).splitting_at(1);
    let c = AgentCounters::default();
    let (x0, s1, s0) = (request(1), request(2), request(3));
    let (out, hx) = acquire(&t, &c, 0, x0, Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert_eq!(hx.depth(), 0, "the first request goes to the bucket's list");
    // Row 1 meets row 0's request: the list is frozen. The CAS append
    // freezes it before appending, and row 1 goes below; the swap append
    // meets it after its swap, and row 1 stays, ahead of the freeze.
    let (out, h1) = acquire(&t, &c, 1, s1, Mode::S);
    assert!(matches!(out, Outcome::Granted));
    assert_eq!(h1.depth(), if S { 0 } else { 1 }, "appended below the frozen list");
    if S {
        assert!(t.buckets[0].frozen_top());
    }
    // Row 0 again, by another transaction: its X holder is in the frozen
    // list above, and the new request waits below.
    let (out, h0) = acquire(&t, &c, 0, s0, Mode::S);
    assert!(matches!(out, Outcome::Waiting), "{out:?}");
    assert!(h0.depth() >= 1);
    let mut blockers: Vec<Blocker> = Vec::new();
    // SAFETY: a live waiting request of the table.
    assert!(unsafe { t.blockers(Caller::of(&c), h0, s0, &mut blockers) });
    assert_eq!(blockers.len(), 1);
    assert_eq!(blockers[0].txn, node(&x0).txn());
    // The snapshot lists row 0 once: its holder above, its waiter below.
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    let row0 = snap.iter().filter(|l| l.lock == LockId::row(T, 0)).collect::<Vec<_>>();
    assert_eq!(row0.len(), 1, "{snap:?}");
    assert_eq!(row0[0].holders.len(), 1);
    assert_eq!(row0[0].waiters.len(), 1);
    assert_eq!(snap.len(), 2, "rows 0 and 1: {snap:?}");
    // The release above wakes the waiter below.
    let wake = release(&t, &c, hx, x0);
    assert_eq!(wake.len(), 1, "the waiter below was granted");
    assert_eq!(wake[0].as_ptr(), s0.as_ptr());
    assert!(release(&t, &c, h0, s0).is_empty());
    assert!(release(&t, &c, h1, s1).is_empty());
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty(), "{snap:?}");
    if S {
        // Every release unlinked its own request, from the head of its list.
        [x0, s1, s0].into_iter().for_each(free);
        drop(t);
    } else {
        // The releases below the bucket's list unlinked their own requests;
        // `x0` was unlinked by its wake-up walk, and retired.
        [s1, s0].into_iter().for_each(free);
        drop(t);
        orphan(x0);
    }
    assert_eq!(c.cas_retries.get(), 0);
}

#[test]
fn a_hot_locks_waiters_do_not_split_its_list() {
    waiters_do_not_split::<false>();
}

#[test]
fn a_hot_locks_waiters_do_not_split_a_swap_appended_list() {
    waiters_do_not_split::<true>();
}

/// Split at two granted requests of other locks: row 0's holder and two
/// waiters are one granted request to row 1's appender, which does not
/// split; row 2's appender meets two (row 0's holder and row 1's) and
/// splits.
fn waiters_do_not_split<const S: bool>() {
    let t = LatchFree::<S>::new(1, false, false).splitting_at(2);
    let c = AgentCounters::default();
    let split = |t: &LatchFree<S>, h: At| if S { t.buckets[0].frozen_top() } else { h.depth() > 0 };
    let (x0, w0, v0, x1, x2) = (request(1), request(2), request(3), request(4), request(5));
    let (out, h) = acquire(&t, &c, 0, x0, Mode::X);
    assert!(matches!(out, Outcome::Granted));
    let (out, hw) = acquire(&t, &c, 0, w0, Mode::S);
    assert!(matches!(out, Outcome::Waiting), "{out:?}");
    let (out, hv) = acquire(&t, &c, 0, v0, Mode::S);
    assert!(matches!(out, Outcome::Waiting), "{out:?}");
    let (out, h1) = acquire(&t, &c, 1, x1, Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert!(
        !split(&t, h1),
        "three requests of row 0, two of them waiting, split the list"
    );
    let (out, h2) = acquire(&t, &c, 2, x2, Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert!(
        split(&t, h2),
        "two granted requests of other locks did not split the list"
    );
    // Row 0's holder goes: its two waiters are granted, wherever they are.
    assert_eq!(release(&t, &c, h, x0).len(), 2);
    for (r, h) in [(w0, hw), (v0, hv), (x1, h1), (x2, h2)] {
        assert!(release(&t, &c, h, r).is_empty());
    }
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty(), "{snap:?}");
    drop(t);
    // Each node as its agent would leave it: freed if its owner unlinked
    // it, else (retired by another walk, or returned by the drop) orphaned.
    for r in [x0, w0, v0, x1, x2] {
        if unlinked_by_owner(r) { free(r) } else { orphan(r) }
    }
}

#[test]
fn an_empty_frozen_route_is_taken_down_without_a_walk() {
    empty_frozen_route::<false>();
}

#[test]
fn an_empty_frozen_swap_route_is_taken_down_without_a_walk() {
    empty_frozen_route::<true>();
}

fn empty_frozen_route<const S: bool>() {
    let t = LatchFree::<S>::new(1, false, false).splitting_at(1);
    let c = AgentCounters::default();
    let (a, b) = (request(1), request(2));
    let (_, ha) = acquire(&t, &c, 0, a, Mode::X);
    let (_, hb) = acquire(&t, &c, 1, b, Mode::X);
    assert_eq!((ha.depth(), hb.depth()), (0, if S { 0 } else { 1 }));
    release(&t, &c, ha, a);
    release(&t, &c, hb, b);
    free(a);
    free(b);
    // The bucket's list is empty and frozen: a new request goes below at
    // once (no pin, no walk: the unpinned path counts no retry either).
    let d = request(3);
    let (out, hd) = acquire(&t, &c, 0, d, Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert_eq!(hd.depth(), 1);
    release(&t, &c, hd, d);
    free(d);
}

#[test]
fn many_locks_split_many_levels_and_all_leave() {
    many_locks::<false>();
}

#[test]
fn many_locks_split_a_swap_appended_bucket_many_levels_and_all_leave() {
    many_locks::<true>();
}

fn many_locks<const S: bool>() {
    let t = LatchFree::<S>::new(1, false, false);
    let c = AgentCounters::default();
    let n = 20_000u64;
    let held: Vec<(ReqPtr, At)> = (0..n)
        .map(|k| {
            let r = request(1);
            let (out, h) = acquire(&t, &c, k, r, Mode::X);
            assert!(matches!(out, Outcome::Granted));
            (r, h)
        })
        .collect();
    let deepest = held.iter().map(|(_, h)| h.depth()).max().unwrap();
    assert!(deepest >= 2, "20,000 locks in one bucket split it more than once");
    // Another transaction is refused on each of a sample, at every depth.
    for k in (0..n).step_by(997) {
        let r = request(2);
        // SAFETY: the test's own node, linked nowhere yet.
        let (out, _) = unsafe {
            t.acquire(
                Caller::of(&c),
                LockId::row(T, k),
                r,
                Mode::S,
                false,
                true,
                &mut Vec::new(),
            )
        };
        assert!(matches!(out, Outcome::Refused(_)), "row {k}: {out:?}");
        // Below the frozen list of either append: a CAS append, which
        // never links a refused request.
        assert_eq!(node(&r).recycle.load(Ordering::Relaxed), NEVER_LINKED);
        // SAFETY: never linked.
        unsafe { r.free() };
    }
    for &(r, h) in &held {
        assert!(release(&t, &c, h, r).is_empty());
    }
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty());
    held.into_iter().for_each(|(r, _)| free(r));
}
