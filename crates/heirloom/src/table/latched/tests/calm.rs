//! The latched table keeps a lock's fast-path word closed after a strong
//! request until the lock has been calm for `fast::REOPEN_AFTER`
//! operations (each close costs a heavy fence), and opens it when the
//! lock's head is bound to another lock.

use super::super::Latched;
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Outcome;
use crate::request::{ReqPtr, Request};
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::HeadRef;
use crate::table::fast::REOPEN_AFTER;

const T: TableId = TableId::new(0, 1);

fn node(r: &ReqPtr) -> &Request {
    // SAFETY: the test's own node, freed at its end.
    unsafe { r.get() }
}

/// Acquires `id` in `mode` (granted: nothing else is held) and releases it
/// again; `true` if it was granted fast (the handle's low bit).
fn take(t: &Latched, r: ReqPtr, id: LockId, mode: Mode) -> bool {
    let (c, mut wake) = (AgentCounters::default(), Vec::new());
    node(&r).txn.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the test's own node, linked nowhere (each call releases it).
    let (out, h) = unsafe { t.acquire(&c, id, r, mode, false, &mut wake) };
    assert!(matches!(out, Outcome::Granted), "{mode:?} on {id} not granted");
    // SAFETY: as above, with the handle its acquisition returned.
    unsafe { t.release(&c, h, r, &mut wake) };
    h.0 & 1 == 1
}

/// Intention acquisitions (each also released) until one is granted fast.
fn queued_until_open(t: &Latched, r: ReqPtr) -> u32 {
    let mut n = 0;
    while !take(t, r, LockId::table(T), Mode::IS) {
        n += 1;
        assert!(n <= REOPEN_AFTER, "the word never opened again");
    }
    n
}

#[test]
fn the_word_opens_again_after_a_calm_stretch_and_a_strong_request_restarts_it() {
    let t = Latched::new(16, false, true);
    let r = ReqPtr::alloc(0);
    assert!(
        take(&t, r, LockId::table(T), Mode::IS),
        "fast before any strong request"
    );
    assert!(!take(&t, r, LockId::table(T), Mode::X), "X never fast");
    // Each queued intention request counts twice (its grant and its
    // release settle the queue); the X's release counted once.
    let n = queued_until_open(&t, r);
    assert!(n.abs_diff(REOPEN_AFTER / 2) <= 1, "{n} queued before the word opened");
    // A strong request halfway through a calm stretch starts it again.
    assert!(!take(&t, r, LockId::table(T), Mode::X));
    for _ in 0..REOPEN_AFTER / 4 {
        assert!(!take(&t, r, LockId::table(T), Mode::IX));
    }
    assert!(!take(&t, r, LockId::table(T), Mode::S));
    let n = queued_until_open(&t, r);
    assert!(n.abs_diff(REOPEN_AFTER / 2) <= 1, "{n} queued after the second stretch");
    // SAFETY: the test's own node, linked nowhere.
    unsafe { r.free() };
}

#[test]
fn a_closed_word_opens_when_its_head_is_rebound() {
    // One bucket: its chain keeps four heads bound, then rebinds empty ones.
    let t = Latched::new(1, false, true);
    let (r, c) = (ReqPtr::alloc(0), AgentCounters::default());
    assert!(!take(&t, r, LockId::table(T), Mode::X));
    assert!(!take(&t, r, LockId::table(T), Mode::IS), "closed after X");
    // Three rows held give the chain four heads; the fourth row takes the
    // only empty one, the table's.
    let rows: Vec<(ReqPtr, HeadRef)> = (0..4u64)
        .map(|k| {
            let (q, mut wake) = (ReqPtr::alloc(1), Vec::new());
            node(&q).txn.store(1_000 + k, Ordering::Relaxed);
            // SAFETY: the test's own node, linked nowhere yet.
            let (out, h) = unsafe { t.acquire(&c, LockId::row(T, k), q, Mode::X, false, &mut wake) };
            assert!(matches!(out, Outcome::Granted));
            (q, h)
        })
        .collect();
    assert!(
        take(&t, r, LockId::table(T), Mode::IS),
        "the word stayed closed after its head went"
    );
    for (q, h) in rows {
        // SAFETY: each row's own node and handle.
        unsafe {
            t.release(&c, h, q, &mut Vec::new());
            q.free();
        }
    }
    // SAFETY: the test's own node, linked nowhere.
    unsafe { r.free() };
}
