//! loom models of the latched table's heads, running the table's own code.
//! Growth (`Latched::grow`): one transaction takes three row locks in a
//! table of one bucket (`KEEP_HEADS` is 1 under loom, so the third doubles
//! the buckets) while another asks for two of the same rows. A lock keeps
//! exactly one head through the growth: no row is granted to both, and
//! every granted row is found at its head afterwards. Rebinding: a lookup
//! of a lock whose empty head another thread's miss is rebinding (and
//! retagging in the bucket's index) finds the lock's one head or binds
//! it one, never a second. Spares: a lookup of a lock whose head the
//! last release took out of the table (`Latched::detach`) and the
//! releasing agent's next miss binds to another lock is never granted
//! on that head, and finds its lock's one head or binds it one.
//!
//! The growth runs with and without spares (`TableKind::LatchedSpares`).
//!
//! Run: `RUSTFLAGS="--cfg heirloom_loom --cfg crossbeam_loom"
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p heirloom --lib loom_grow`

use super::super::{At, Latched};
use super::support::request;
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Outcome;
use crate::request::ReqPtr;
use crate::stats::AgentCounters;
use crate::sync::Arc;
use crate::table::{Caller, LockTable};

const T: TableId = TableId::new(0, 1);

/// X on row `row` without waiting: the handle if granted.
fn take<const S: bool>(t: &Latched<S>, row: u64, r: ReqPtr) -> Option<At> {
    take_as(0, t, row, r, Mode::X)
}

/// `mode` on row `row` without waiting, by agent `agent` (whose spares
/// are its index's; none from `fast::AGENTS` on): the handle if granted.
fn take_as<const S: bool>(agent: u32, t: &Latched<S>, row: u64, r: ReqPtr, mode: Mode) -> Option<At> {
    let mut wake = Vec::new();
    let c = AgentCounters::default();
    // SAFETY: a model's own node, linked nowhere yet (see above).
    let (out, h) = unsafe {
        t.acquire(
            Caller { counters: &c, agent },
            LockId::row(T, row),
            r,
            mode,
            false,
            true,
            &mut wake,
        )
    };
    assert!(wake.is_empty());
    matches!(out, Outcome::Granted).then_some(h)
}

fn release<const S: bool>(t: &Latched<S>, h: At, r: ReqPtr) {
    release_as(0, t, h, r);
}

fn release_as<const S: bool>(agent: u32, t: &Latched<S>, h: At, r: ReqPtr) {
    let mut wake = Vec::new();
    let c = AgentCounters::default();
    // SAFETY: a model's own granted node, with its handle.
    unsafe { t.release(Caller { counters: &c, agent }, h, r, &mut wake) };
    assert!(wake.is_empty());
}

/// An agent without spares: its releases leave emptied heads bound, for
/// misses to rebind.
const NO_SPARES: u32 = crate::table::fast::AGENTS as u32;

/// A third transaction's S on `row` (its node `probe`) is refused at
/// head `h`: the row is held, and `h` is its one head.
fn found_at<const S: bool>(t: &Latched<S>, row: u64, probe: ReqPtr, h: At) {
    let mut wake = Vec::new();
    // SAFETY: a model's own node, linked nowhere.
    let (out, h2) = unsafe {
        t.acquire(
            Caller::of(&AgentCounters::default()),
            LockId::row(T, row),
            probe,
            Mode::S,
            false,
            true,
            &mut wake,
        )
    };
    assert!(matches!(out, Outcome::Refused(_)), "row {row} found without its holder");
    assert_eq!(h, h2, "row {row} has two heads");
}

#[test]
fn a_lock_keeps_one_head_while_the_table_grows() {
    loom::model(grows::<false>);
}

#[test]
fn a_lock_keeps_one_head_while_a_table_with_spares_grows() {
    loom::model(grows::<true>);
}

/// The growth model on a table with or without spares (`S`).
fn grows<const S: bool>() {
    {
        let t = Arc::new(Latched::<S>::new(1, false, false, false, false));
        let mine: Vec<ReqPtr> = (0..3).map(|_| request(0, 1)).collect();
        let theirs: Vec<ReqPtr> = (0..2).map(|_| request(1, 2)).collect();
        let other = {
            let (t, theirs) = (t.clone(), theirs.clone());
            loom::thread::spawn(move || {
                // Rows 2 and 0, the last ones the first thread takes, as
                // agent 1 (one thread drives an agent at a time: its
                // spares are its own).
                [2u64, 0]
                    .iter()
                    .zip(&theirs)
                    .map(|(&row, &r)| take_as(1, &t, row, r, Mode::X))
                    .collect::<Vec<_>>()
            })
        };
        let got: Vec<Option<At>> = (0..3u64).zip(&mine).map(|(row, &r)| take(&t, row, r)).collect();
        let their = other.join().unwrap();
        for (k, row) in [2usize, 0].into_iter().enumerate() {
            assert!(
                got[row].is_none() || their[k].is_none(),
                "row {row} granted to both transactions"
            );
        }
        // Whoever holds a row, the head it was granted on is the one a
        // third transaction finds now.
        let probe = request(2, 3);
        for (row, h) in got.iter().enumerate() {
            let held = h.or_else(|| match row {
                2 => their[0],
                0 => their[1],
                _ => None,
            });
            if let Some(h) = held {
                found_at(&t, row as u64, probe, h);
            }
        }
        assert!(got[1].is_some(), "row 1 is only ever asked for once");
        assert!(t.buckets() >= 2, "three locks in one bucket did not grow the table");
        for (h, &r) in got.iter().zip(&mine) {
            if let Some(h) = *h {
                release(&t, h, r);
            }
        }
        for (h, &r) in their.iter().zip(&theirs) {
            if let Some(h) = *h {
                release_as(1, &t, h, r);
            }
        }
        for r in mine.into_iter().chain(theirs).chain([probe]) {
            // SAFETY: released or refused, linked nowhere, both threads done.
            unsafe { r.free() };
        }
    }
}

#[test]
fn a_lookup_racing_a_rebind_finds_the_locks_one_head() {
    loom::model(|| {
        // One bucket that never grows: a growth rebuilds the index from
        // the heads' ids, which would hide an index gone wrong.
        let t = Arc::new(Latched::<false>::with_most(1, 1));
        // Row 0 gets the bucket's kept head, and gives it back empty (to
        // no spares: it stays in its lane).
        let first = request(0, 1);
        let h0 = take_as(NO_SPARES, &t, 0, first, Mode::X).expect("an empty table grants");
        release_as(NO_SPARES, &t, h0, first);
        let (a, b) = (request(1, 2), request(2, 3));
        let other = {
            let t = t.clone();
            // Row 1 misses: it rebinds the empty head (or, if row 0 has
            // it again, adds an extra one).
            loom::thread::spawn(move || take_as(NO_SPARES, &t, 1, a, Mode::X))
        };
        let got0 = take_as(NO_SPARES, &t, 0, b, Mode::X);
        let got1 = other.join().unwrap();
        let (h0, h1) = (got0.expect("row 0 is free"), got1.expect("row 1 is free"));
        assert_ne!(h0, h1, "two locks on one head");
        // Each row is found at the head it was granted on.
        let probe = request(3, 4);
        for (row, h) in [(0u64, h0), (1, h1)] {
            found_at(&t, row, probe, h);
        }
        release_as(NO_SPARES, &t, h0, b);
        release_as(NO_SPARES, &t, h1, a);
        for r in [first, a, b, probe] {
            // SAFETY: released or refused, linked nowhere, both threads done.
            unsafe { r.free() };
        }
    });
}

#[test]
fn a_lookup_racing_a_detach_is_granted_only_at_its_locks_head() {
    loom::model(|| {
        // One bucket of one lane that never grows, with spares.
        let t = Arc::new(Latched::<true>::with_most(1, 1));
        // Agent 1 holds row 0, in the bucket's lane.
        let (x0, x1, s0) = (request(1, 1), request(1, 1), request(2, 2));
        let h0 = take_as(1, &t, 0, x0, Mode::X).expect("an empty table grants");
        let other = {
            let t = t.clone();
            // Agent 2 asks for row 0 while agent 1 lets it go.
            loom::thread::spawn(move || take_as(2, &t, 0, s0, Mode::S))
        };
        // Agent 1's release empties the head and takes it to its spares;
        // its next miss, on row 1, binds it again (unless row 0 has the
        // lane again: then a new extra head).
        release_as(1, &t, h0, x0);
        let h1 = take_as(1, &t, 1, x1, Mode::X).expect("row 1 is only asked for once");
        let got = other.join().unwrap();
        // Row 0's S was granted only if row 0 was free (it never waits):
        // then at a head of its own, which row 1 does not share.
        let probe = request(3, 3);
        found_at(&t, 1, probe, h1);
        if let Some(h) = got {
            assert_ne!(h, h1, "row 0 granted on row 1's head");
            let mut wake = Vec::new();
            let c = AgentCounters::default();
            // SAFETY: a model's own node, linked nowhere.
            let (out, hx) = unsafe {
                t.acquire(
                    Caller { counters: &c, agent: 3 },
                    LockId::row(T, 0),
                    probe,
                    Mode::X,
                    false,
                    true,
                    &mut wake,
                )
            };
            assert!(matches!(out, Outcome::Refused(_)), "row 0 found without its holder");
            assert_eq!(hx, h, "row 0 has two heads");
            release_as(2, &t, h, s0);
        }
        release_as(1, &t, h1, x1);
        let mut snap = Vec::new();
        t.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "a lock left behind");
        for r in [x0, x1, s0, probe] {
            // SAFETY: released or refused, linked nowhere, both threads done.
            unsafe { r.free() };
        }
    });
}
