//! The wake-up a fast row release owes (`fast/rows.rs`, "Fast release"):
//! a strong request that saw the hold waits until the release does its
//! duty, and a stripe marked drained meanwhile does not cancel it.

use super::super::{Fast, FastTry};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Strong;

const T: TableId = TableId::new(0, 1);

/// Three rows in one stripe, and the stripe's slot.
fn three_rows(f: &Fast) -> ([LockId; 3], usize) {
    let a = LockId::row(T, 0);
    let s = f.slot_for(a, true).expect("rows have a stripe");
    let mut more = (1..)
        .map(|k| LockId::row(T, k))
        .filter(|&r| f.slot_for(r, true) == Some(s));
    let (b, c) = (more.next().expect("a second row"), more.next().expect("a third row"));
    ([a, b, c], s)
}

/// Agent 1 ends a transaction that holds rows `a` and `c` fast: its first
/// release clears both entries at once (`Rows::clear_all`). An X of agent
/// 0 saw `c` held before that and waits. Between the clear and `c`'s own
/// release a strong request of agent 2 on `b` comes and goes; its scan
/// finds no entry in the stripe and marks it drained. `c`'s release still
/// owes the X its wake-up: without it the X waits for ever (as it did on
/// sixteen cores, where this window was wide enough to hit in seconds).
#[test]
fn a_stripe_drained_after_the_clear_still_owes_the_wake_up() {
    let f = Fast::with_rows(true);
    let ([a, b, c], s) = three_rows(&f);
    for row in [a, c] {
        assert!(f.acquire(s, row.words(), 1, 9, 9, Mode::S) == FastTry::Held);
    }
    let x = f.add_strong(s, 0);
    assert_eq!(x, Strong::Counted, "an open stripe counts its first strong request");
    assert!(f.in_way(s, c.words(), Mode::X, 0), "the X sees c held: it waits");
    f.release_as(s, a.words(), 1, Mode::S, true);
    let y = f.add_strong(s, 2);
    assert_eq!(y, Strong::Counted, "the stripe was not drained yet");
    assert!(
        !f.in_way(s, b.words(), Mode::X, 2),
        "no entry is left: the scan marks the stripe drained"
    );
    f.sub_strong(s, 2, y);
    assert!(
        f.release_as(s, c.words(), 1, Mode::S, true),
        "the X saw c held and still waits: c's release owes it the wake-up"
    );
    assert!(!f.in_way(s, c.words(), Mode::X, 0), "c is free for the X");
    f.sub_strong(s, 0, x);
}
