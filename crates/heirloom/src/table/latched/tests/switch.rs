//! A row's head bound while the row side's switch is off has no `Outside`
//! (`Latched::outside_of`): a request that comes after the switch has left
//! off gives it one before it decides (`Latched::outside_now`), so that a
//! strong request is counted where fast S holds can see it, whether it is
//! a new request, a conversion in place, or a fast hold's conversion.

use super::super::{At, Latched};
use super::support::{node, request};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::nodes::{Nodes, Reuse};
use crate::queue::Outcome;
use crate::request::{CONVERTING, GRANTED, ReqPtr, Status};
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::fast::rows::{ARMING, DRAINING, OFF, ON, Rows};
use crate::table::{Caller, LockTable};

const T: TableId = TableId::new(0, 1);

fn table() -> Latched {
    Latched::<false>::new(16, false, true, true, false)
}

fn rows(t: &Latched) -> &Rows {
    t.fast().and_then(|f| f.row_side()).expect("a row side")
}

/// Turns the switch to `to` through the states between (the tests stand
/// in for the votes and the grace period: no transaction is in progress
/// that the turn would have to wait for).
fn turn(t: &Latched, to: u64) {
    let r = rows(t);
    let path: &[u64] = match (r.state() & 3, to) {
        (ON, OFF) => &[DRAINING, OFF],
        (OFF, ON) => &[ARMING, ON],
        (OFF, ARMING) => &[ARMING],
        (from, to) => panic!("no turn from {from} to {to} here"),
    };
    for &s in path {
        assert!(r.turn(r.state(), s));
    }
}

fn acquire(t: &Latched, agent: u32, id: LockId, r: ReqPtr, mode: Mode) -> (Outcome, At) {
    let c = AgentCounters::default();
    let mut wake = Vec::new();
    // SAFETY: the test's own node, linked nowhere.
    let out = unsafe { t.acquire(Caller { counters: &c, agent }, id, r, mode, true, false, &mut wake) };
    assert!(wake.is_empty());
    out
}

fn release(t: &Latched, agent: u32, h: At, r: ReqPtr) -> Vec<ReqPtr> {
    let c = AgentCounters::default();
    let mut wake = Vec::new();
    // SAFETY: the test's own node, with the handle its acquisition returned.
    unsafe { t.release(Caller { counters: &c, agent }, h, r, &mut wake) };
    wake
}

/// A fast S of `agent` on `id` (given back at once if granted).
fn fast_s(t: &Latched, agent: u32, txn: u64, id: LockId) -> bool {
    let c = AgentCounters::default();
    let mut wake = Vec::new();
    let Some(h) = t.try_fast_hold(Caller { counters: &c, agent }, id, Mode::S, txn, txn, &mut wake) else {
        return false;
    };
    t.release_fast_hold(Caller { counters: &c, agent }, id, h, Mode::S, false, &mut wake);
    true
}

fn status(r: ReqPtr) -> Status {
    node(&r).status.load(Ordering::Acquire)
}

/// A table with the switch off and agent 1's S on `row` linked in the
/// row's head, bound while off: the S's node and handle.
fn s_linked_while_off(row: LockId) -> (Latched, ReqPtr, At) {
    let t = table();
    turn(&t, OFF);
    let s = request(1, 1);
    let (out, hs) = acquire(&t, 1, row, s, Mode::S);
    assert!(matches!(out, Outcome::Granted));
    (t, s, hs)
}

#[test]
fn a_new_strong_request_on_a_head_bound_while_off_is_counted() {
    let row = LockId::row(T, 7);
    let (t, s, hs) = s_linked_while_off(row);
    turn(&t, ON);
    // X after the switch is on again: it waits for the S, counted in the
    // row's stripe, so that no fast S comes past it.
    let x = request(2, 2);
    let (out, hx) = acquire(&t, 2, row, x, Mode::X);
    assert!(matches!(out, Outcome::Waiting));
    assert!(!fast_s(&t, 3, 3, row), "a fast S was granted beside a counted X");
    assert_eq!(release(&t, 1, hs, s), vec![x]);
    assert_eq!(status(x), GRANTED);
    assert!(!fast_s(&t, 3, 3, row), "a fast S was granted beside a granted X");
    assert!(release(&t, 2, hx, x).is_empty());
    for r in [s, x] {
        // SAFETY: unlinked test nodes.
        unsafe { r.free() };
    }
}

#[test]
fn a_conversion_in_place_after_the_switch_left_off_is_counted() {
    let row = LockId::row(T, 8);
    let (t, s, hs) = s_linked_while_off(row);
    turn(&t, ARMING);
    let c = AgentCounters::default();
    let (mut wake, mut nodes) = (Vec::new(), Nodes::new(Reuse::Unlinked, 1, || {}));
    // SAFETY: the test's own granted request and its handle.
    let conv = unsafe {
        t.convert(
            Caller { counters: &c, agent: 1 },
            row,
            hs,
            s,
            Mode::X,
            true,
            true,
            &mut wake,
            &mut nodes,
        )
    };
    assert!(matches!(conv.outcome, Outcome::Granted));
    turn_on_from_arming(&t);
    assert!(
        !fast_s(&t, 3, 3, row),
        "a fast S was granted beside an X converted while arming"
    );
    assert!(release(&t, 1, hs, s).is_empty());
    assert!(
        fast_s(&t, 3, 3, row) || reopens(&t, row),
        "the stripe never opened again"
    );
    // SAFETY: an unlinked test node.
    unsafe { s.free() };
}

/// `ARMING` to `ON` (as the grace period's end would).
fn turn_on_from_arming(t: &Latched) {
    let r = rows(t);
    assert_eq!(r.state() & 3, ARMING);
    assert!(r.turn(r.state(), ON));
}

/// Whether a fast S on `id` is granted within the attempts a shut stripe
/// turns away.
fn reopens(t: &Latched, id: LockId) -> bool {
    (0..=crate::table::fast::rows::REOPEN_ROWS + 1).any(|_| fast_s(t, 3, 3, id))
}

#[test]
fn a_fast_holds_conversion_on_a_head_bound_while_off_sees_the_other_fast_holds() {
    let row = LockId::row(T, 9);
    // Bound while off and left empty: the head stays bound to the row.
    let (t, s, hs) = s_linked_while_off(row);
    assert!(release(&t, 1, hs, s).is_empty());
    turn(&t, ON);
    // Two fast S holds on the row; the first converts to X.
    let c = AgentCounters::default();
    let mut wake = Vec::new();
    let h4 = t.try_fast_hold(Caller { counters: &c, agent: 4 }, row, Mode::S, 4, 4, &mut wake);
    let h5 = t.try_fast_hold(Caller { counters: &c, agent: 5 }, row, Mode::S, 5, 5, &mut wake);
    let (Some(h4), Some(h5)) = (h4, h5) else {
        panic!("the fast S holds were refused on an open stripe");
    };
    let mut nodes = Nodes::new(Reuse::Unlinked, 4, || {});
    let old = request(4, 4);
    // SAFETY: the test's own node, linked nowhere.
    unsafe { crate::table::fast::holds::materialize(row, Mode::S, old) };
    // SAFETY: agent 4's fast hold, with the node it would have.
    let conv = unsafe {
        t.convert(
            Caller { counters: &c, agent: 4 },
            row,
            h4,
            old,
            Mode::X,
            true,
            true,
            &mut wake,
            &mut nodes,
        )
    };
    assert!(
        matches!(conv.outcome, Outcome::Waiting),
        "an X was granted beside another agent's fast S"
    );
    assert_eq!(status(conv.req), CONVERTING);
    // Agent 5 lets go: the X is granted.
    t.release_fast_hold(Caller { counters: &c, agent: 5 }, row, h5, Mode::S, false, &mut wake);
    assert_eq!(wake, vec![conv.req]);
    assert_eq!(status(conv.req), GRANTED);
    assert!(release(&t, 4, At::from(conv.head), conv.req).is_empty());
    for r in [s, old] {
        // SAFETY: unlinked test nodes.
        unsafe { r.free() };
    }
}
