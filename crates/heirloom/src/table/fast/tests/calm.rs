//! The word's seal (`Fast::add_strong`, `Fast::calm_down`): after a strong
//! request the word turns fast attempts away until `REOPEN_AFTER` of them
//! found no strong request counted; a strong request restarts the count,
//! and while one is counted the word never opens.

use super::super::{Fast, FastTry, REOPEN_AFTER};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Strong;

const T: TableId = TableId::new(0, 1);

fn slot(f: &Fast) -> usize {
    let id = LockId::table(T);
    f.slot(id.words(), true).expect("a free slot")
}

/// Fast IS attempts of agent 0 until one is granted (and released).
fn turned_away_until_open(f: &Fast, s: usize) -> u32 {
    let mut n = 0;
    while !f.acquire(s, (0, 0), 0, 1, 1, Mode::IS).is_held() {
        n += 1;
        assert!(n <= REOPEN_AFTER, "the word never opened again");
    }
    assert!(!f.release(s, (0, 0), 0, Mode::IS), "no strong request is counted");
    n
}

#[test]
fn a_sealed_word_opens_after_a_calm_stretch() {
    let f = Fast::new();
    let s = slot(&f);
    assert_eq!(turned_away_until_open(&f, s), 0, "open before any strong request");
    f.add_strong(s, 0);
    f.sub_strong(s, 0, Strong::Counted);
    assert_eq!(turned_away_until_open(&f, s), REOPEN_AFTER);
    // A strong request halfway restarts the stretch.
    f.add_strong(s, 0);
    f.sub_strong(s, 0, Strong::Counted);
    for _ in 0..REOPEN_AFTER / 2 {
        assert_eq!(f.acquire(s, (0, 0), 0, 1, 1, Mode::IX), FastTry::Refused);
    }
    f.add_strong(s, 0);
    f.sub_strong(s, 0, Strong::Counted);
    assert_eq!(turned_away_until_open(&f, s), REOPEN_AFTER);
}

#[test]
fn a_word_with_a_strong_request_counted_never_opens() {
    let f = Fast::new();
    let s = slot(&f);
    f.add_strong(s, 0);
    for _ in 0..2 * REOPEN_AFTER + 2 {
        assert_eq!(f.acquire(s, (0, 0), 0, 1, 1, Mode::IS), FastTry::Refused);
    }
    f.sub_strong(s, 0, Strong::Counted);
    assert_eq!(turned_away_until_open(&f, s), REOPEN_AFTER);
}

#[test]
fn a_hold_from_before_the_seal_has_the_wake_up_duty() {
    let f = Fast::new();
    let s = slot(&f);
    assert_eq!(f.acquire(s, (0, 0), 1, 7, 7, Mode::IX), FastTry::Held);
    f.add_strong(s, 0);
    assert!(f.in_way(s, (0, 0), Mode::X, 0), "agent 1's IX is in the way of X");
    assert!(!f.in_way(s, (0, 0), Mode::X, 1), "its own hold is not");
    f.sub_strong(s, 0, Strong::Counted);
    // The strong request is gone, but the sealed word says one may wait.
    assert!(f.release(s, (0, 0), 1, Mode::IX));
    assert!(!f.in_way(s, (0, 0), Mode::X, 0));
}
