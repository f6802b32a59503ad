//! Strong row requests on a drained stripe register in their agent's
//! record (`fast/rows.rs`, "Strong requests that write nothing shared"):
//! the stripe stays shut while one is registered, however many fast
//! attempts it turns away, and opens after the usual stretch once none is.

use super::super::rows::REOPEN_ROWS;
use super::super::{Fast, FastTry};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Strong;

const T: TableId = TableId::new(0, 1);

/// A row and its slot, with its stripe shut and drained (a strong request
/// of agent 0 came and went).
fn drained(f: &Fast) -> (LockId, usize) {
    let row = LockId::row(T, 7);
    let s = f.slot_for(row, true).expect("rows have a stripe");
    assert_eq!(f.add_strong(s, 0), Strong::Counted, "an open stripe counts");
    assert!(!f.in_way(s, row.words(), Mode::X, 0), "nobody holds the row");
    f.sub_strong(s, 0, Strong::Counted);
    (row, s)
}

/// Fast S attempts of agent 1 on `row` until one is granted (and
/// released); `None` if `limit` of them were turned away.
fn turned_away_until_open(f: &Fast, row: LockId, s: usize, limit: u32) -> Option<u32> {
    for n in 0..=limit {
        match f.acquire(s, row.words(), 1, 9, 9, Mode::S) {
            FastTry::Held => {
                assert!(!f.release(s, row.words(), 1, Mode::S), "no strong request is counted");
                return Some(n);
            }
            FastTry::Refused => {}
            FastTry::BackedOff => panic!("nothing is counted in the word"),
        }
    }
    None
}

#[test]
fn a_drained_stripe_opens_after_the_usual_stretch() {
    let f = Fast::with_rows(true);
    let (row, s) = drained(&f);
    assert_eq!(turned_away_until_open(&f, row, s, 2 * REOPEN_ROWS), Some(REOPEN_ROWS));
}

#[test]
fn a_registered_strong_request_keeps_its_stripe_shut() {
    let f = Fast::with_rows(true);
    let (row, s) = drained(&f);
    // Agent 2's X on another row of the stripe: it registers.
    let other = (0..)
        .map(|k| LockId::row(T, k))
        .find(|&r| r != row && f.slot_for(r, false) == Some(s))
        .expect("another row of the stripe");
    let how = f.add_strong(s, 2);
    assert_eq!(how, Strong::Registered, "a drained stripe registers");
    assert!(!f.in_way(s, other.words(), Mode::X, 2));
    assert_eq!(
        turned_away_until_open(&f, row, s, 4 * REOPEN_ROWS),
        None,
        "opened under a registered X"
    );
    // A second X of another agent, and the first one's end: still shut.
    assert_eq!(f.add_strong(s, 3), Strong::Registered);
    f.sub_strong(s, 2, how);
    assert_eq!(
        turned_away_until_open(&f, row, s, 2 * REOPEN_ROWS),
        None,
        "opened under a registered X"
    );
    f.sub_strong(s, 3, Strong::Registered);
    let n = turned_away_until_open(&f, row, s, 2 * REOPEN_ROWS).expect("opens once no X is left");
    assert!(n <= REOPEN_ROWS + 1, "{n} attempts turned away");
    // Open again: the next X counts itself in the word.
    assert_eq!(f.add_strong(s, 2), Strong::Counted);
    f.sub_strong(s, 2, Strong::Counted);
}
