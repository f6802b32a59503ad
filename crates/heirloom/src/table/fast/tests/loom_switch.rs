//! loom models of the row side's switch (`fast/rows.rs`, "The switch";
//! `txn/row_switch.rs`): a revocation (`ON` to `DRAINING` to `OFF`) and a
//! fast S never let an uncounted X and the S overlap, and the grace period
//! of `ARMING` keeps a fast S granted after the turn to `ON` from
//! overlapping an X that a transaction in progress took uncounted while
//! the switch was `OFF`. Each "section" writes one cell, so loom reports
//! any two that no happens-before orders.
//!
//! Run: `RUSTFLAGS="--cfg heirloom_loom --cfg crossbeam_loom"
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p heirloom --lib loom_switch`

use super::super::rows::{ARMING, DRAINING, OFF, ON};
use super::super::{Fast, FastTry};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Strong;
use crate::sync::{Arc, AtomicBool, AtomicU64, Ordering, UnsafeCell, fence};

const T: TableId = TableId::new(0, 1);

/// An X of agent 0 on `row` decided as the tables decide it: uncounted
/// while the switch is off (then it is clear by the switch's rule), else
/// counted and clear if no fast hold is in its way. Runs `section` if it
/// is granted; ends it.
fn writer(f: &Fast, row: LockId, section: impl FnOnce()) {
    let s = f.slot_for(row, false).expect("rows have a stripe");
    let how = f.add_strong(s, 0);
    let clear = how == Strong::Uncounted || !f.in_way(s, row.words(), Mode::X, 0);
    if clear {
        section();
    }
    f.sub_strong(s, 0, how);
}

/// A fast S of agent 1 on `row`: runs `section` if it is held.
fn fast_reader(f: &Fast, row: LockId, section: impl FnOnce()) {
    let s = f.slot_for(row, false).expect("rows have a stripe");
    let w = row.words();
    if f.acquire(s, w, 1, 2, 2, Mode::S) == FastTry::Held {
        section();
        let _ = f.release(s, w, 1, Mode::S);
    }
}

fn write(cell: &UnsafeCell<u32>) {
    // SAFETY: a section of the model's claim (loom checks it).
    cell.with_mut(|p| unsafe { *p += 1 });
}

/// `ON` to `DRAINING`, a fence and the scan, then `OFF` if no fast hold
/// was found (`txn/row_switch.rs`'s `drain`), and an X that then finds
/// the switch off, against a fast S on the same row.
#[test]
fn a_revocation_and_a_fast_reader_never_overlap() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let row = LockId::row(T, 0);
        let cell = Arc::new(UnsafeCell::new(0u32));
        let revoker = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                let rows = f.row_side().unwrap();
                let on = rows.state();
                assert_eq!(on & 3, ON);
                assert!(rows.turn(on, DRAINING));
                fence(Ordering::SeqCst);
                if rows.holds_none() {
                    assert!(rows.turn(on & !3 | DRAINING, OFF));
                }
                writer(&f, row, || write(&cell));
            })
        };
        fast_reader(&f, row, || write(&cell));
        revoker.join().unwrap();
    });
}

/// The switch starts `OFF`; a transaction (its agent's `active` flag and
/// count of transactions begun, as the gate keeps them) takes X on a row,
/// uncounted if it still sees `OFF`; meanwhile the switch arms (turn,
/// fence, snapshot), waits for the grace period and turns `ON`, and a
/// fast S on the row follows.
#[test]
fn a_fast_reader_after_arming_follows_an_uncounted_writer() {
    loom::model(|| {
        let f = Arc::new(Fast::with_rows(true));
        let rows = f.row_side().unwrap();
        let on = rows.state();
        assert!(rows.turn(on, DRAINING));
        assert!(rows.turn(on & !3 | DRAINING, OFF));
        let row = LockId::row(T, 0);
        let cell = Arc::new(UnsafeCell::new(0u32));
        let active = Arc::new(AtomicBool::new(false));
        let begun = Arc::new(AtomicU64::new(0));
        let txn = {
            let (f, cell, active, begun) = (f.clone(), cell.clone(), active.clone(), begun.clone());
            loom::thread::spawn(move || {
                // `Transaction::begin`: the count (Release), `active`, and
                // the gate's light fence (SeqCst under loom).
                begun.store(1, Ordering::Release);
                active.store(true, Ordering::Relaxed);
                fence(Ordering::SeqCst);
                writer(&f, row, || write(&cell));
                // The end (`Gate::leave`).
                active.store(false, Ordering::Release);
            })
        };
        // `arm`: the turn, the gate's heavy fence, the snapshot.
        let off = rows.state();
        assert_eq!(off & 3, OFF);
        assert!(rows.turn(off, ARMING));
        fence(Ordering::SeqCst);
        let was_active = active.load(Ordering::Acquire);
        let count = begun.load(Ordering::Acquire);
        // `look`, until the transaction of the snapshot has ended.
        while was_active && active.load(Ordering::Acquire) && begun.load(Ordering::Acquire) == count {
            loom::thread::yield_now();
        }
        assert!(rows.turn(off & !3 | ARMING, ON));
        fast_reader(&f, row, || write(&cell));
        txn.join().unwrap();
    });
}
