//! loom models of a list's split (`split.rs`), running the table's own
//! code: one bucket, split as soon as a walk meets a request of another
//! lock at the end of its leaf, two lists below each split.
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

fn table() -> Arc<LatchFree> {
    Arc::new(LatchFree::<false>::new(1, false, false).splitting_at(1))
}

fn release(t: &LatchFree, c: &AgentCounters, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
    // SAFETY: a model's own granted node, of handle `h`.
    unsafe { t.release(Caller::of(c), h, r, wake) }
}

/// Two transactions append X requests for one row while a request of
/// another row is in the bucket's list, so each may split it: the freeze
/// races with the other's append (to the frozen list's end, or below).
/// Never both granted, one always; nothing left after the releases.
#[test]
fn a_split_racing_with_an_append_never_grants_two_x() {
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = table();
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
        assert_eq!(node(&refused).recycle.load(Ordering::Relaxed), NEVER_LINKED);
        drop(t);
        orphan(&[other, if ga { a } else { b }]);
        // SAFETY: refused requests are never linked.
        unsafe { refused.free() };
    });
}

/// An X holder in the bucket's list releases while another row's request
/// splits the list and a third transaction's S request on the held row
/// links, above the freeze or below it, and waits: the waiter is always
/// granted (by itself or by the release above it), and never while the X
/// is held.
#[test]
fn a_release_above_a_freeze_wakes_the_waiter_below() {
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = table();
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
