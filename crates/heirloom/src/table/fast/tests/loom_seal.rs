//! loom model of the word's seal (`fast.rs`, "Sealed"): a strong request
//! that finds the word sealed skips the heavy fence, while a fast request
//! may reopen the word (under loom `REOPEN_AFTER` is 0, so the first fast
//! attempt a calm sealed word turns away opens it).
//!
//! Run: `RUSTFLAGS="--cfg heirloom_loom --cfg crossbeam_loom"
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p heirloom --lib loom_seal`

use super::super::{Fast, FastTry};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Strong;
use crate::sync::{Arc, UnsafeCell};

const T: TableId = TableId::new(0, 1);

/// A strong request (X, agent 0) on a word an earlier one sealed, against
/// a fast IS of agent 1 that may reopen it: the X decides it is clear and
/// the IS is granted never both at once (each writes the same cell in its
/// section; loom reports the two writes if no happens-before orders them),
/// an X that saw the IS is owed a wake-up, and after both the word is open
/// again.
#[test]
fn a_strong_request_on_a_sealed_word_never_overlaps_a_fast_hold() {
    loom::model(|| {
        let f = Arc::new(Fast::new());
        let id = LockId::table(T);
        let s = f.slot(id.words(), true).expect("a slot");
        // An earlier strong request came and went: the word is sealed.
        f.add_strong(s, 0);
        f.sub_strong(s, 0, Strong::Counted);
        let cell = Arc::new(UnsafeCell::new(0u32));
        let strong = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                f.add_strong(s, 0);
                let clear = !f.in_way(s, (0, 0), Mode::X, 0);
                if clear {
                    // SAFETY: the X's section (the model's claim).
                    cell.with_mut(|p| unsafe { *p += 1 });
                }
                f.sub_strong(s, 0, Strong::Counted);
                clear
            })
        };
        // Whether the IS leaves a wake-up duty behind: granted and released
        // while a strong request was counted, or backed off after its bit
        // was up.
        let duty = match f.acquire(s, (0, 0), 1, 2, 2, Mode::IS) {
            FastTry::Held => {
                // SAFETY: the IS's section (the model's claim).
                cell.with_mut(|p| unsafe { *p += 1 });
                f.release(s, (0, 0), 1, Mode::IS)
            }
            FastTry::BackedOff => true,
            FastTry::Refused => false,
        };
        let clear = strong.join().unwrap();
        // An X that saw the IS's bit waits for it, so the IS must come to
        // wake it.
        assert!(clear || duty, "the X saw a bit whose owner owes no wake-up");
        // Both gone: the word opens for the next fast request.
        let mut tries = 0;
        while !f.acquire(s, (0, 0), 1, 3, 3, Mode::IS).is_held() {
            tries += 1;
            assert!(tries <= 2, "the word stayed shut");
        }
        f.release(s, (0, 0), 1, Mode::IS);
    });
}

/// A fast IS of agent 1 against two strong requests, the first of which
/// may seal the word before the second adds its count (the second then
/// skips the heavy fence and relies on the first's): the IS's section
/// never overlaps the second's.
#[test]
fn a_strong_request_relying_on_the_seal_sees_every_earlier_hold() {
    loom::model(|| {
        let f = Arc::new(Fast::new());
        let id = LockId::table(T);
        let s = f.slot(id.words(), true).expect("a slot");
        let cell = Arc::new(UnsafeCell::new(0u32));
        let sealer = {
            let f = f.clone();
            loom::thread::spawn(move || {
                f.add_strong(s, 0);
                f.sub_strong(s, 0, Strong::Counted);
            })
        };
        let strong = {
            let (f, cell) = (f.clone(), cell.clone());
            loom::thread::spawn(move || {
                f.add_strong(s, 0);
                if !f.in_way(s, (0, 0), Mode::X, 0) {
                    // SAFETY: the X's section (the model's claim).
                    cell.with_mut(|p| unsafe { *p += 1 });
                }
                f.sub_strong(s, 0, Strong::Counted);
            })
        };
        if f.acquire(s, (0, 0), 1, 2, 2, Mode::IS).is_held() {
            // SAFETY: the IS's section (the model's claim).
            cell.with_mut(|p| unsafe { *p += 1 });
            f.release(s, (0, 0), 1, Mode::IS);
        }
        sealer.join().unwrap();
        strong.join().unwrap();
    });
}
