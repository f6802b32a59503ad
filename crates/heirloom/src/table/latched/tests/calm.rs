//! The latched table's fast-path word stays sealed after a strong request
//! until `fast::REOPEN_AFTER` intention requests went through the queue
//! with nothing strong among them.

use super::super::Latched;
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Outcome;
use crate::request::{ReqPtr, Request};
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::fast::REOPEN_AFTER;
use crate::table::{Caller, Handle, LockTable};

const T: TableId = TableId::new(0, 1);

fn node(r: &ReqPtr) -> &Request {
    // SAFETY: the test's own node, freed at its end.
    unsafe { r.get() }
}

/// Acquires `id` in `mode` (granted: nothing else is held) and releases it
/// again; `true` if it was granted fast (`Handle::is_fast`).
fn take(t: &Latched, r: ReqPtr, id: LockId, mode: Mode) -> bool {
    let (c, mut wake) = (AgentCounters::default(), Vec::new());
    node(&r).txn.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the test's own node, linked nowhere (each call releases it).
    let (out, h) = unsafe { t.acquire(Caller::of(&c), id, r, mode, false, true, &mut wake) };
    assert!(matches!(out, Outcome::Granted), "{mode:?} on {id} not granted");
    // SAFETY: as above, with the handle its acquisition returned.
    unsafe { t.release(Caller::of(&c), h, r, &mut wake) };
    Handle::from(h).is_fast()
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
    let t = Latched::<false>::new(16, false, true, false, false);
    let r = ReqPtr::alloc(0);
    assert!(
        take(&t, r, LockId::table(T), Mode::IS),
        "fast before any strong request"
    );
    assert!(!take(&t, r, LockId::table(T), Mode::X), "X never fast");
    // Each intention request the sealed word turns away counts once.
    assert_eq!(queued_until_open(&t, r), REOPEN_AFTER);
    // A strong request halfway through a calm stretch starts it again.
    assert!(!take(&t, r, LockId::table(T), Mode::X));
    for _ in 0..REOPEN_AFTER / 2 {
        assert!(!take(&t, r, LockId::table(T), Mode::IX));
    }
    assert!(!take(&t, r, LockId::table(T), Mode::S));
    assert_eq!(queued_until_open(&t, r), REOPEN_AFTER);
    // SAFETY: the test's own node, linked nowhere.
    unsafe { r.free() };
}
