//! loom models of row S locks on the fast path (`fast/rows.rs`): a fast S
//! and a strong request on the same row never both go ahead, a strong
//! request that saw the S is owed a wake-up, a stripe marked drained has
//! no fast hold left, a torn read of an agent's entries never makes a hold
//! up, a strong request registered in its agent's record (a drained
//! stripe) and a fast S that opens the stripe again never both go ahead,
//! a transaction's holds cleared at once owe what their releases owe,
//! and a stripe marked drained after a release cleared its entry does not
//! cancel the wake-up that release owes.
//! Under loom a table has two stripes, agents two entries, and a shut
//! stripe opens at the first fast attempt it turns away.
//!
//! Run: `RUSTFLAGS="--cfg heirloom_loom --cfg crossbeam_loom"
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p heirloom --lib loom_rows`

use super::super::{Fast, FastTry};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Strong;
use crate::sync::{Arc, UnsafeCell};

const T: TableId = TableId::new(0, 1);

/// Two rows in one stripe.
fn two_rows(f: &Fast) -> (LockId, LockId, usize) {
    let a = LockId::row(T, 0);
    let s = f.slot_for(a, false).expect("rows have a stripe");
    let b = (1..)
        .map(|k| LockId::row(T, k))
        .find(|&b| f.slot_for(b, false) == Some(s))
        .expect("two stripes: a second row shares one");
    (a, b, s)
}

/// X (agent 0) against a fast S (agent 1) on one row: never both in their
/// sections (each writes the same cell; loom reports two writes that no
/// happens-before orders), and an X that saw the S (and stays counted, as
/// a waiting X does) is owed a wake-up by it. With `drained`, the stripe
/// is shut and drained first, so the X registers (unless it sees the S
/// opening the stripe again).
fn writer_against_fast_reader(drained_first: bool) {
    loom::model(move || {
        let f = Arc::new(Fast::with_rows(true));
        let (row, _, s) = two_rows(&f);
        let w = row.words();
        if drained_first {
            drained(&f, row, s);
        }
        let cell = Arc::new(UnsafeCell::new(0u32));
        let writer = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                let how = f.add_strong(s, 0);
                let clear = clear_of_fast_holds(&f, s, w, how);
                if clear {
                    // SAFETY: the X's section (the model's claim).
                    cell.with_mut(|p| unsafe { *p += 1 });
                }
                // Counted until the end (a waiting X stays counted).
                (clear, how)
            })
        };
        let duty = match f.acquire(s, w, 1, 2, 2, Mode::S) {
            FastTry::Held => {
                // SAFETY: the S's section (the model's claim).
                cell.with_mut(|p| unsafe { *p += 1 });
                f.release(s, w, 1, Mode::S)
            }
            FastTry::BackedOff => true,
            FastTry::Refused => false,
        };
        let (clear, how) = writer.join().unwrap();
        f.sub_strong(s, 0, how);
        assert!(clear || duty, "the X saw an entry whose owner owes no wake-up");
    });
}

#[test]
fn a_writer_and_a_fast_reader_never_overlap() {
    writer_against_fast_reader(false);
}

/// An agent ends a transaction that holds rows `a` and `b` fast (one
/// stripe): both entries cleared at once with one fence by the first
/// release (`Rows::clear_all`), then each hold given up by its release's
/// look at the word, while X (agent 0) comes for `a`. Never both in their
/// sections, and an X that saw the S is owed a wake-up by `a`'s release,
/// as with a release of its own (the first model).
#[test]
fn a_writer_and_a_batch_release_never_overlap() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let (a, b, s) = two_rows(&f);
        let cell = Arc::new(UnsafeCell::new(0u32));
        assert!(f.acquire(s, a.words(), 1, 2, 2, Mode::S) == FastTry::Held);
        assert!(f.acquire(s, b.words(), 1, 2, 2, Mode::S) == FastTry::Held);
        let writer = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                let how = f.add_strong(s, 0);
                let clear = clear_of_fast_holds(&f, s, a.words(), how);
                if clear {
                    // SAFETY: the X's section (the model's claim).
                    cell.with_mut(|p| unsafe { *p += 1 });
                }
                (clear, how)
            })
        };
        // SAFETY: the S's section on `a` (the model's claim).
        cell.with_mut(|p| unsafe { *p += 1 });
        // Ending: the first release clears both entries, the second finds
        // its own cleared.
        let duty = f.release_as(s, a.words(), 1, Mode::S, true);
        f.release_as(s, b.words(), 1, Mode::S, true);
        let (clear, how) = writer.join().unwrap();
        f.sub_strong(s, 0, how);
        assert!(clear || duty, "the X saw an entry whose owner owes no wake-up");
        assert!(
            f.row_side().expect("rows on").holds_none(),
            "a batch release left an entry behind"
        );
    });
}

/// Agent 1 holds row `a` fast; an X of agent 0 on `a` has seen the hold
/// and waits (still counted). Agent 1 gives `a` up while agent 2's strong
/// request comes and goes on row `b` of the same stripe: its scan may run
/// after the release cleared `a`'s entry and before the release looks at
/// the word, find no entry and mark the stripe drained. The release owes
/// the waiting X its wake-up all the same: the count decides the duty, and
/// a drained flag set since the clear must not cancel it (it did: the X
/// waited for ever, first seen on sixteen cores).
#[test]
fn a_stripe_drained_after_the_clear_still_owes_the_wake_up() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let (a, b, s) = two_rows(&f);
        assert!(f.acquire(s, a.words(), 1, 2, 2, Mode::S) == FastTry::Held);
        let x = f.add_strong(s, 0);
        assert!(f.in_way(s, a.words(), Mode::X, 0), "the X sees the hold: it waits");
        let other = {
            let f = f.clone();
            loom::thread::spawn(move || {
                let how = f.add_strong(s, 2);
                assert!(!f.in_way(s, b.words(), Mode::X, 2), "nobody holds b");
                f.sub_strong(s, 2, how);
            })
        };
        let duty = f.release(s, a.words(), 1, Mode::S);
        other.join().unwrap();
        assert!(duty, "the X saw an entry whose owner owes no wake-up");
        f.sub_strong(s, 0, x);
    });
}

/// A fast S on row `a` and, in the same stripe, a writer of row `b`
/// (which may mark the stripe drained) and then a writer of row `a`: the
/// second writer skips its scan only if no fast hold is left, so it never
/// overlaps the S.
#[test]
fn a_drained_stripe_has_no_fast_hold_left() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let (a, b, s) = two_rows(&f);
        let cell = Arc::new(UnsafeCell::new(0u32));
        let writers = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                // The writer of `b` comes and goes (its own row is free).
                let on_b = f.add_strong(s, 0);
                assert!(!f.in_way(s, b.words(), Mode::X, 0), "nobody holds b");
                let on_a = f.add_strong(s, 0);
                f.sub_strong(s, 0, on_b);
                if !f.in_way(s, a.words(), Mode::X, 0) {
                    // SAFETY: the X's section on `a` (the model's claim).
                    cell.with_mut(|p| unsafe { *p += 1 });
                }
                f.sub_strong(s, 0, on_a);
            })
        };
        if f.acquire(s, a.words(), 1, 2, 2, Mode::S) == FastTry::Held {
            // SAFETY: the S's section (the model's claim).
            cell.with_mut(|p| unsafe { *p += 1 });
            f.release(s, a.words(), 1, Mode::S);
        }
        writers.join().unwrap();
    });
}

/// An agent gives up row `a` and takes row `b` (same table, so the same
/// second word) in the same entry while a writer of `a` scans: a writer
/// that sees `a` held saw the real hold, before its release, which then
/// owes it a wake-up (the writer keeps its count until it is seen to). A
/// scan that pieced `a` together from the two entries would see a hold
/// nobody has, and wait for a wake-up nobody owes.
#[test]
fn a_scan_never_sees_a_hold_made_of_two_entries() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let (a, b, s) = two_rows(&f);
        assert!(f.acquire(s, a.words(), 1, 2, 2, Mode::S) == FastTry::Held);
        let writer = {
            let f = f.clone();
            loom::thread::spawn(move || {
                let how = f.add_strong(s, 0);
                (f.in_way(s, a.words(), Mode::X, 0), how)
            })
        };
        let duty_a = f.release(s, a.words(), 1, Mode::S);
        if f.acquire(s, b.words(), 1, 3, 3, Mode::S) == FastTry::Held {
            f.release(s, b.words(), 1, Mode::S);
        }
        let (seen, how) = writer.join().unwrap();
        f.sub_strong(s, 0, how);
        assert!(!seen || duty_a, "a hold of a seen with no wake-up owed");
    });
}

/// Whether an X of agent 0 on the row with `words`, known to the stripe
/// as `how`, is clear of fast holds, decided as a queue decides it
/// (`queue/outside.rs`, `Outside::in_way`): a registered request does not
/// look, since its stripe stays drained while it is registered; the model
/// checks that the look would agree.
fn clear_of_fast_holds(f: &Fast, s: usize, words: (u64, u64), how: Strong) -> bool {
    let clear = !f.in_way(s, words, Mode::X, 0);
    assert!(
        how == Strong::Counted || clear,
        "a registered strong request found fast holds in its way"
    );
    how == Strong::Registered || clear
}

/// Shuts `s` and marks it drained (a strong request of agent 0 came and
/// went on the free row `row`), so that the next strong request registers.
fn drained(f: &Fast, row: LockId, s: usize) {
    let how = f.add_strong(s, 0);
    assert_eq!(how, Strong::Counted, "an open word counts its first strong request");
    assert!(!f.in_way(s, row.words(), Mode::X, 0));
    f.sub_strong(s, 0, how);
}

/// On a drained stripe, X (agent 0, which registers in its record unless
/// it sees the stripe opening) against a fast S (agent 1, which opens the
/// stripe again at once under loom): as above.
#[test]
fn a_registered_writer_and_a_reopening_reader_never_overlap() {
    writer_against_fast_reader(true);
}

/// A registered X (agent 0) that ends, and a fast S (agent 1) that opens
/// the drained stripe: an S granted after the X's end follows the X's
/// work (the section's write), through the record's count and the word.
#[test]
fn a_reopening_follows_the_registered_writers_work() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let (row, _, s) = two_rows(&f);
        let w = row.words();
        drained(&f, row, s);
        let cell = Arc::new(UnsafeCell::new(0u32));
        let writer = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                let how = f.add_strong(s, 0);
                if clear_of_fast_holds(&f, s, w, how) {
                    // SAFETY: the X's section (the model's claim).
                    cell.with_mut(|p| unsafe { *p += 1 });
                }
                f.sub_strong(s, 0, how);
            })
        };
        if f.acquire(s, w, 1, 2, 2, Mode::S) == FastTry::Held {
            // SAFETY: the S's section (the model's claim).
            cell.with_mut(|p| unsafe { *p += 1 });
            f.release(s, w, 1, Mode::S);
        }
        writer.join().unwrap();
    });
}
