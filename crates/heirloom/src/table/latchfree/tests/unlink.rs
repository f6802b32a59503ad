//! A release unlinks its own request wherever it is in its list
//! (`unlink_own`), so that no other thread writes the request's line: it
//! comes back through its owner's batch. Three requests in one bucket.

use crossbeam_epoch as epoch;

use super::super::{At, LatchFree, Route, Visit, mark};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Outcome;
use crate::request::{OBSOLETE, ORPHANED, OWNER_UNLINKED, RETURNED, ReqPtr, Request};
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::{Caller, Handle, LockTable};

const T: TableId = TableId::new(0, 1);

pub(super) fn node(r: &ReqPtr) -> &Request {
    // SAFETY: the test's own node, freed at its end (or by the table's drop
    // or the collector).
    unsafe { r.get() }
}

pub(super) fn request(txn: u64) -> ReqPtr {
    let r = ReqPtr::alloc(txn as u32);
    node(&r).txn.store(txn, Ordering::Relaxed);
    r
}

/// Three granted S requests of three transactions on rows 0, 1, 2 of the
/// table's one bucket, in that order.
fn three<const S: bool>(t: &LatchFree<S>, c: &AgentCounters) -> [ReqPtr; 3] {
    let rs = [request(1), request(2), request(3)];
    for (k, &r) in rs.iter().enumerate() {
        // SAFETY: the test's own node, linked nowhere yet.
        let (out, _) = unsafe {
            t.acquire(
                Caller::of(c),
                LockId::row(T, k as u64),
                r,
                Mode::S,
                false,
                true,
                &mut Vec::new(),
            )
        };
        assert!(matches!(out, Outcome::Granted));
    }
    rs
}

fn release<const S: bool>(t: &LatchFree<S>, c: &AgentCounters, r: ReqPtr) {
    // SAFETY: the test's own granted node, in bucket 0.
    unsafe { t.release(Caller::of(c), At::from(Handle(0)), r, &mut Vec::new()) };
}

/// The unmarked requests of the bucket, in order (the walk unlinks marked
/// ones on its way: only where asked).
fn listed<const S: bool>(t: &LatchFree<S>, c: &AgentCounters) -> Vec<u64> {
    let g = epoch::pin();
    let mut txns = Vec::new();
    LatchFree::<S>::walk(&t.buckets[0], Route::ONE, c, &g, |n| {
        if let Some((_, x)) = n {
            txns.push(x.txn.load(Ordering::Relaxed));
        }
        Visit::Next
    });
    txns
}

pub(super) fn unlinked_by_owner(r: ReqPtr) -> bool {
    node(&r).recycle.load(Ordering::Relaxed) == OWNER_UNLINKED
}

/// Frees a node its owner unlinked (nobody else can reach it: the test
/// runs alone).
pub(super) fn free(r: ReqPtr) {
    assert!(unlinked_by_owner(r));
    // SAFETY: unlinked, and no other thread ever saw it.
    unsafe { r.free() };
}

/// Leaves a node the table or the collector returns (or will) as its
/// agent's drop does: whichever of the two comes second frees it.
pub(super) fn orphan(r: ReqPtr) {
    if node(&r).recycle.swap(ORPHANED, Ordering::AcqRel) == RETURNED {
        // SAFETY: returned: no thread can reach it.
        unsafe { r.free() };
    }
}

#[test]
fn a_request_behind_another_leaves_the_list_at_its_release() {
    let t = LatchFree::<false>::new(1, false, false);
    let c = AgentCounters::default();
    let [a, b, d] = three(&t, &c);
    release(&t, &c, b);
    assert!(unlinked_by_owner(b), "the middle request was left to a walk");
    assert_eq!(listed(&t, &c), [1, 3]);
    release(&t, &c, d);
    assert!(unlinked_by_owner(d), "the last request was left to a walk");
    release(&t, &c, a);
    assert!(unlinked_by_owner(a));
    assert_eq!(listed(&t, &c), [] as [u64; 0]);
    assert_eq!(c.cas_retries.get(), 0);
    drop(t);
    [a, b, d].into_iter().for_each(free);
}

#[test]
fn a_release_unlinks_the_marked_requests_ahead_of_its_own() {
    let t = LatchFree::<false>::new(1, false, false);
    let c = AgentCounters::default();
    let [a, b, d] = three(&t, &c);
    // `a` released by an owner that left it in the list (as a release did
    // before `unlink_own`, or one that gave up).
    node(&a).status.store(OBSOLETE, Ordering::Release);
    // SAFETY: `a` is ours and alive; nothing is dereferenced through it.
    mark(node(&a), unsafe { epoch::unprotected() });
    release(&t, &c, d);
    assert!(unlinked_by_owner(d));
    assert!(
        !unlinked_by_owner(a),
        "unlinked by the walk of another's release: retired"
    );
    assert_eq!(listed(&t, &c), [2]);
    release(&t, &c, b);
    assert_eq!(listed(&t, &c), [] as [u64; 0]);
    drop(t);
    [b, d].into_iter().for_each(free);
    // `a` went to the epoch collector.
    orphan(a);
}

#[test]
fn a_swap_appended_request_leaves_at_its_release_once_a_successor_is_linked() {
    let t = LatchFree::<true>::new(1, false, false);
    let c = AgentCounters::default();
    let [a, b, d] = three(&t, &c);
    release(&t, &c, b);
    assert!(unlinked_by_owner(b), "the middle request was left to a walk");
    assert_eq!(listed(&t, &c), [1, 3]);
    // The tail stays (marked) until a successor is linked behind it.
    release(&t, &c, d);
    assert!(!unlinked_by_owner(d));
    assert_eq!(listed(&t, &c), [1]);
    release(&t, &c, a);
    assert!(unlinked_by_owner(a));
    assert_eq!(listed(&t, &c), [] as [u64; 0]);
    // The table's drop returns `d`, still linked.
    drop(t);
    [a, b].into_iter().for_each(free);
    orphan(d);
}
