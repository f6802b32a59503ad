//! loom models of a list's split (`split.rs`), running the table's own
//! code: one bucket, split as soon as a walk meets a request of another
//! lock at the end of its leaf (CAS append) or ahead of its request (swap
//! append), two lists below each split. The first two run on both appends.
//!
//! Run as the other models (`loom_latchfree.rs`).

use super::super::{At, LatchFree};
use super::loom_latchfree::{acquire, node, orphan, request, wait_granted};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Outcome;
use crate::request::{GRANTED, NEVER_LINKED, OBSOLETE, ReqPtr};
use crate::stats::AgentCounters;
use crate::sync::{Arc, Ordering};
use crate::table::{Caller, LockTable};

const T: TableId = TableId::new(0, 1);

fn table<const S: bool>() -> Arc<LatchFree<S>> {
    Arc::new(LatchFree::<S>::new(1, false, false).splitting_at(1))
}

fn release<const S: bool>(t: &LatchFree<S>, c: &AgentCounters, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
    // SAFETY: a model's own granted node, of handle `h`.
    unsafe { t.release(Caller::of(c), h, r, wake) }
}

/// Two transactions append X requests for one row while a request of
/// another row is in the bucket's list, so each may split it: the freeze
/// races with the other's append (to the frozen list's end, or below; swap
/// append: ahead of the end, or behind it, from where it goes below).
/// Never both granted, one always; nothing left after the releases.
fn a_split_racing_with_an_append_never_grants_two_x<const S: bool>() {
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = table::<S>();
        let c = AgentCounters::default();
        let other = request(1);
        let (out, ho) = acquire(&t, &c, LockId::row(T, 1), other, Mode::S, false);
        assert!(matches!(out, Outcome::Granted));
        let (a, b) = (request(2), request(3));
        let spawn = |r: ReqPtr| {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, h) = acquire(&t, &c, LockId::row(T, 2), r, Mode::X, false);
                (matches!(out, Outcome::Granted), h)
            })
        };
        let (ja, jb) = (spawn(a), spawn(b));
        let ((ga, ha), (gb, hb)) = (ja.join().unwrap(), jb.join().unwrap());
        assert!(!(ga && gb), "two X granted");
        assert!(ga || gb, "the first is granted");
        let mut wake = Vec::new();
        for (r, h, granted) in [(a, ha, ga), (b, hb, gb)] {
            if granted {
                release(&t, &c, h, r, &mut wake);
            }
        }
        release(&t, &c, ho, other, &mut wake);
        assert!(wake.is_empty());
        let mut snap = Vec::new();
        t.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "nothing live after the releases");
        let refused = if ga { b } else { a };
        let linked = node(&refused).recycle.load(Ordering::Relaxed) != NEVER_LINKED;
        // The CAS append never links a refused request; the swap append
        // withdraws one refused in the bucket's list.
        assert!(S || !linked);
        drop(t);
        orphan(&[other, if ga { a } else { b }]);
        if linked {
            orphan(&[refused]);
        } else {
            // SAFETY: never linked.
            unsafe { refused.free() };
        }
    });
}

/// An X holder in the bucket's list releases while another row's request
/// splits the list and a third transaction's S request on the held row
/// links, above the freeze or below it, and waits: the waiter is always
/// granted (by itself or by the release above it), and never while the X
/// is held.
fn a_release_above_a_freeze_wakes_the_waiter_below<const S: bool>() {
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = table::<S>();
        let c = AgentCounters::default();
        let (x, s, w) = (request(1), request(2), request(3));
        let (out, hx) = acquire(&t, &c, LockId::row(T, 2), x, Mode::X, true);
        assert!(matches!(out, Outcome::Granted));
        let splitter = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, h) = acquire(&t, &c, LockId::row(T, 1), s, Mode::S, true);
                assert!(matches!(out, Outcome::Granted));
                h
            })
        };
        let waiter = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, h) = acquire(&t, &c, LockId::row(T, 2), w, Mode::S, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(w);
                }
                assert_eq!(node(&w).status.load(Ordering::Acquire), GRANTED);
                assert_eq!(
                    node(&x).status.load(Ordering::Acquire),
                    OBSOLETE,
                    "granted while the X holder holds"
                );
                h
            })
        };
        let mut wake = Vec::new();
        release(&t, &c, hx, x, &mut wake);
        let hs = splitter.join().unwrap();
        let hw = waiter.join().unwrap();
        assert!(wake.is_empty() || wake == [w]);
        release(&t, &c, hs, s, &mut wake);
        release(&t, &c, hw, w, &mut wake);
        let mut snap = Vec::new();
        t.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "nothing live after the releases");
        drop(t);
        orphan(&[x, s, w]);
    });
}

/// Swap append: two appenders race with a freeze (made here directly,
/// `split_swapped`, as an appender's walk makes it), so that one or both
/// may swap after the end: the first of those then may find the tail moved
/// on and wait for the second's link behind it before taking its node
/// back. Each is granted once, wherever it went; when all is done the tail
/// is the end again (no node taken back is left there, where a later swap
/// would link behind it); a later append goes below; nothing is left after
/// the releases.
#[test]
fn appenders_behind_the_end_take_their_nodes_back() {
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        // No appender splits: the model's main thread does.
        let t = Arc::new(LatchFree::<true>::new(1, false, false).splitting_at(u32::MAX));
        let c = AgentCounters::default();
        let first = request(1);
        let (out, h0) = acquire(&t, &c, LockId::row(T, 1), first, Mode::S, true);
        assert!(matches!(out, Outcome::Granted));
        let rs = [request(2), request(3)];
        let threads = rs.map(|r| {
            let t = t.clone();
            let row = node(&r).txn.load(Ordering::Relaxed);
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, h) = acquire(&t, &c, LockId::row(T, row), r, Mode::X, true);
                assert!(matches!(out, Outcome::Granted), "{out:?}");
                h
            })
        });
        t.buckets[0].split_swapped(&crossbeam_epoch::pin());
        let hs = threads.map(|j| j.join().unwrap());
        assert!(t.buckets[0].frozen_top());
        {
            let g = crossbeam_epoch::pin();
            let tail = t.buckets[0].tail.load(Ordering::Acquire, &g);
            assert!(
                rs.iter().chain([&first]).all(|r| tail.as_raw() != r.as_ptr()),
                "a request left as the tail of a frozen list"
            );
        }
        let later = request(4);
        let (out, hl) = acquire(&t, &c, LockId::row(T, 4), later, Mode::X, true);
        assert!(matches!(out, Outcome::Granted));
        assert!(hl.depth() >= 1, "a later append goes below");
        let mut snap = Vec::new();
        t.snapshot(0, &mut snap);
        assert_eq!(snap.len(), 4, "each row held once: {snap:?}");
        let mut wake = Vec::new();
        release(&t, &c, h0, first, &mut wake);
        release(&t, &c, hl, later, &mut wake);
        for (r, h) in rs.into_iter().zip(hs) {
            release(&t, &c, h, r, &mut wake);
        }
        assert!(wake.is_empty());
        let mut snap = Vec::new();
        t.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "nothing live after the releases");
        drop(t);
        orphan(&[first, later]);
        orphan(&rs);
    });
}

/// The two models above on both appends.
mod cas {
    #[test]
    fn a_split_racing_with_an_append_never_grants_two_x() {
        super::a_split_racing_with_an_append_never_grants_two_x::<false>();
    }

    #[test]
    fn a_release_above_a_freeze_wakes_the_waiter_below() {
        super::a_release_above_a_freeze_wakes_the_waiter_below::<false>();
    }
}

mod swap {
    #[test]
    fn a_split_racing_with_an_append_never_grants_two_x() {
        super::a_split_racing_with_an_append_never_grants_two_x::<true>();
    }

    #[test]
    fn a_release_above_a_freeze_wakes_the_waiter_below() {
        super::a_release_above_a_freeze_wakes_the_waiter_below::<true>();
    }
}
