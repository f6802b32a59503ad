//! The latched table grows when its chains grow long, and a lock keeps
//! exactly one head through growths: requests granted before a growth are
//! found after it, and two incompatible requests are never both granted
//! while other threads make it grow.

use std::ptr;
use std::sync::atomic::AtomicU32;
use std::thread;

use super::super::{At, IN_USE, KEEP_HEADS, Latched, MOST_SPARES};
use super::support::request;
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::queue::Outcome;
use crate::request::ReqPtr;
use crate::stats::AgentCounters;
use crate::sync::Ordering;
use crate::table::{Caller, LockTable};

const T: TableId = TableId::new(0, 1);

fn acquire(t: &Latched, r: ReqPtr, id: LockId, mode: Mode) -> (Outcome, At) {
    acquire_as(0, t, r, id, mode)
}

/// [`acquire`] by agent `agent` (its spares are its index's; an index
/// from `fast::AGENTS` on has none).
fn acquire_as<const S: bool>(agent: u32, t: &Latched<S>, r: ReqPtr, id: LockId, mode: Mode) -> (Outcome, At) {
    let (c, mut wake) = (AgentCounters::default(), Vec::new());
    let a = Caller { counters: &c, agent };
    // SAFETY: the test's own node, linked nowhere (released or refused).
    let out = unsafe { t.acquire(a, id, r, mode, false, true, &mut wake) };
    assert!(wake.is_empty());
    out
}

fn release(t: &Latched, r: ReqPtr, h: At) {
    release_as(0, t, r, h);
}

fn release_as<const S: bool>(agent: u32, t: &Latched<S>, r: ReqPtr, h: At) {
    let (c, mut wake) = (AgentCounters::default(), Vec::new());
    let a = Caller { counters: &c, agent };
    // SAFETY: the granted request and the handle its acquisition returned.
    unsafe { t.release(a, h, r, &mut wake) };
    assert!(wake.is_empty());
}

/// An agent without spares on a table that keeps them: its misses rebind
/// the empty heads of a bucket, as every agent's do on `Latched`.
const NO_SPARES: u32 = crate::table::fast::AGENTS as u32;

/// X on `rows` for one transaction of `agent`, each granted.
fn take_rows_from<const S: bool>(agent: u32, t: &Latched<S>, rows: std::ops::Range<u64>) -> Vec<(ReqPtr, At)> {
    rows.map(|i| {
        let r = request(0, 1);
        let (out, h) = acquire_as(agent, t, r, LockId::row(T, i), Mode::X);
        assert!(matches!(out, Outcome::Granted));
        (r, h)
    })
    .collect()
}

/// X on rows `0..n` for one transaction, each granted: the nodes and
/// handles.
fn take_rows(t: &Latched, n: u64) -> Vec<(ReqPtr, At)> {
    take_rows_from(0, t, 0..n)
}

#[test]
fn one_bucket_grows_with_the_locks_held_and_every_lock_keeps_its_head() {
    let t = Latched::<false>::new(1, false, false, false, false);
    let n = 20_000u64;
    let held = take_rows(&t, n);
    // At most about KEEP_HEADS + 1 heads a bucket on average.
    assert!(t.buckets() >= 2048, "{} buckets for {n} locks", t.buckets());
    // Every lock is found again at the head it was granted on, by another
    // transaction, which is refused.
    let other = request(1, 2);
    for (i, &(_, h)) in held.iter().enumerate() {
        let (out, h2) = acquire(&t, other, LockId::row(T, i as u64), Mode::S);
        assert!(matches!(out, Outcome::Refused(_)), "row {i}: {out:?}");
        assert_eq!(h, h2, "row {i} has two heads");
    }
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert_eq!(snap.len(), n as usize);
    for (r, h) in held {
        release(&t, r, h);
        // SAFETY: released, linked nowhere.
        unsafe { r.free() };
    }
    snap.clear();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty());
    // SAFETY: refused, linked nowhere.
    unsafe { other.free() };
}

/// The note in the head latch `h`'s word.
fn note(t: &Latched, h: At) -> u8 {
    // SAFETY: a handle this table returned.
    unsafe { t.head(h) }.queue.note()
}

#[test]
fn a_miss_rebinds_only_heads_whose_latch_notes_no_requests() {
    // An agent without spares: its releases leave the heads in the lanes.
    let a = NO_SPARES;
    let t = Latched::<false>::new(1, false, false, false, false);
    let held = take_rows_from(a, &t, 0..KEEP_HEADS as u64);
    for &(_, h) in &held {
        assert_eq!(note(&t, h), IN_USE);
    }
    let (r0, h0) = held[0];
    release_as(a, &t, r0, h0);
    assert_eq!(note(&t, h0), 0, "the release that empties a queue clears the note");
    // A miss rebinds the emptied head, and notes its request.
    let (out, h) = acquire_as(a, &t, r0, LockId::row(T, 1000), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert_eq!(h, h0);
    assert_eq!(note(&t, h0), IN_USE);
    release_as(a, &t, r0, h0);
    // A head whose note says it has requests is passed over (made stale
    // here: its queue is empty) and the miss binds a new head.
    // SAFETY: a handle this table returned.
    unsafe { t.head(h0) }.queue.set_note(IN_USE);
    let r = request(0, 1);
    let (out, h) = acquire_as(a, &t, r, LockId::row(T, 2000), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert_ne!(h, h0, "a head noted in use was rebound");
    release_as(a, &t, r, h);
    // The head's next operation under its latch puts the note right.
    let (out, h) = acquire_as(a, &t, r0, LockId::row(T, 1000), Mode::X);
    assert_eq!((matches!(out, Outcome::Granted), h), (true, h0));
    release_as(a, &t, r0, h0);
    assert_eq!(note(&t, h0), 0);
    for &(r, h) in &held[1..] {
        release_as(a, &t, r, h);
    }
    for r in held.into_iter().map(|(r, _)| r).chain([r]) {
        // SAFETY: released, linked nowhere.
        unsafe { r.free() };
    }
}

#[test]
fn a_lookup_finds_kept_and_extra_heads_and_a_rebound_head_by_its_new_tag() {
    let a = NO_SPARES;
    let t = Latched::<false>::new(1, false, false, false, false);
    // KEEP_HEADS kept heads and one extra; one bucket lets one extra be
    // added before it grows.
    let held = take_rows_from(a, &t, 0..KEEP_HEADS as u64 + 1);
    assert_eq!(t.buckets(), 1);
    let d = t.dir();
    let b = &d.buckets[0];
    assert_eq!((b.free_lane(), b.extra()), (None, 1));
    for (i, &(_, h)) in held.iter().enumerate() {
        let p = t.find_now(LockId::row(T, i as u64));
        assert_eq!(At::head(p), h, "row {i} not found at its head");
    }
    assert!(t.find_now(LockId::row(T, 1000)).is_null());
    for &(r, h) in &held {
        release_as(a, &t, r, h);
    }
    // A miss rebinds the first kept head (row 0's), whose tag is now the
    // new lock's: found under its new id, no longer under its old one.
    let r = request(0, 2);
    let (out, h) = acquire_as(a, &t, r, LockId::row(T, 1000), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert_eq!(h, held[0].1);
    assert_eq!(At::head(t.find_now(LockId::row(T, 1000))), h);
    assert!(t.find_now(LockId::row(T, 0)).is_null());
    assert_eq!((b.free_lane(), b.extra()), (None, 1));
    release_as(a, &t, r, h);
    for r in held.into_iter().map(|(r, _)| r).chain([r]) {
        // SAFETY: released, linked nowhere.
        unsafe { r.free() };
    }
}

/// A table that keeps spares (`TableKind::LatchedSpares`).
fn shared_table(buckets: usize) -> Latched<true> {
    Latched::<true>::new(buckets, false, false, false, false)
}

#[test]
fn without_spares_an_emptied_head_stays_bound_and_with_them_it_leaves() {
    let t = Latched::<false>::new(1, false, false, false, false);
    let r = request(0, 1);
    let (out, h) = acquire_as(0, &t, r, LockId::row(T, 0), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    release_as(0, &t, r, h);
    assert_eq!(At::head(t.find_now(LockId::row(T, 0))), h, "the head stays bound");
    let t = shared_table(1);
    let (out, h) = acquire_as(0, &t, r, LockId::row(T, 0), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    release_as(0, &t, r, h);
    assert!(t.find_now(LockId::row(T, 0)).is_null(), "the head went to the spares");
    assert_eq!(t.spares_of(0), 1);
    // SAFETY: released, linked nowhere.
    unsafe { r.free() };
}

/// The lane of the table's one bucket that keeps head `h`, if one does;
/// checks that the head says so too (`Head::lane`, which `detach` reads).
fn lane_of(t: &Latched<true>, h: At) -> Option<usize> {
    let (b, p) = (&t.dir().buckets[0], h.0 as *mut _);
    let lane = (0..KEEP_HEADS).find(|&i| b.keeps(i, p));
    if let Some(i) = lane {
        // SAFETY: a head of the table.
        assert_eq!(unsafe { t.head(h) }.lane(), Some((0, i)), "the head knows its lane");
    }
    lane
}

#[test]
fn a_release_that_empties_a_queue_takes_its_head_to_the_agents_spares() {
    let t = shared_table(1);
    let r = request(0, 1);
    let (out, h0) = acquire_as(3, &t, r, LockId::row(T, 0), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    let b = &t.dir().buckets[0];
    assert_eq!(lane_of(&t, h0), Some(0));
    // A second request keeps the queue from emptying at the first release.
    let other = request(1, 2);
    let (c, mut wake) = (AgentCounters::default(), Vec::new());
    // SAFETY: the test's own node, linked nowhere; released below.
    let (out, h) = unsafe {
        t.acquire(
            Caller { counters: &c, agent: 5 },
            LockId::row(T, 0),
            other,
            Mode::S,
            true,
            true,
            &mut wake,
        )
    };
    assert!(matches!(out, Outcome::Waiting));
    assert_eq!(h, h0);
    // SAFETY: the granted request and its handle.
    unsafe { t.release(Caller { counters: &c, agent: 3 }, h0, r, &mut wake) };
    assert_eq!(wake, vec![other], "the waiter is granted");
    assert_eq!(lane_of(&t, h0), Some(0), "a head with a request stays");
    assert_eq!(t.spares_of(3), 0);
    // The release that empties the queue takes the head out: into the
    // releasing agent's spares, its lane empty, the lock found nowhere.
    release_as(5, &t, other, h0);
    assert_eq!(t.spares_of(5), 1);
    assert_eq!(b.free_lane(), Some(0));
    assert!(t.find_now(LockId::row(T, 0)).is_null());
    // That agent's next miss binds it again, to whatever lock; another
    // agent's binds a head of its own.
    let (out, h) = acquire_as(5, &t, r, LockId::row(T, 77), Mode::X);
    assert_eq!((matches!(out, Outcome::Granted), h), (true, h0));
    assert_eq!(t.spares_of(5), 0);
    assert_eq!(At::head(t.find_now(LockId::row(T, 77))), h0);
    let (out, h1) = acquire_as(6, &t, other, LockId::row(T, 78), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert_ne!(h1, h0);
    // A release that finds the bucket latched leaves its head bound
    // (emptied, for a miss to rebind).
    {
        let _b = b.latch.lock();
        release_as(6, &t, other, h1);
    }
    assert_eq!(t.spares_of(6), 0);
    assert!(lane_of(&t, h1).is_some());
    // An agent whose spares are full hands their older half on to the
    // common ones, where another agent that runs out takes a batch.
    let rows = 10_000..10_000 + 2 * MOST_SPARES as u64;
    let held = take_rows_from(7, &t, rows.clone());
    for &(q, h) in &held {
        release_as(7, &t, q, h);
    }
    let (kept, handed) = (t.spares_of(7), t.common.lock().len());
    assert!(
        kept <= MOST_SPARES && handed > 0 && handed % (MOST_SPARES / 2) == 0,
        "{kept} kept, {handed} handed on"
    );
    // Every head that left the table is in one or the other (the extra
    // heads a growth left on chains stay bound).
    let gone = rows
        .clone()
        .filter(|&i| t.find_now(LockId::row(T, i)).is_null())
        .count();
    assert_eq!(gone, kept + handed);
    let r9 = request(9, 9);
    let (out, h) = acquire_as(9, &t, r9, LockId::row(T, 5), Mode::X);
    assert!(matches!(out, Outcome::Granted));
    assert!(held.iter().any(|&(_, g)| g == h), "a common spare bound");
    assert_eq!(t.spares_of(9), MOST_SPARES / 2 - 1);
    assert_eq!(t.common.lock().len(), handed - MOST_SPARES / 2);
    release_as(9, &t, r9, h);
    release_as(5, &t, r, h0);
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty(), "{snap:?}");
    for q in held.into_iter().map(|(q, _)| q).chain([r, other, r9]) {
        // SAFETY: released, linked nowhere.
        unsafe { q.free() };
    }
}

#[test]
fn after_a_growth_every_kept_head_knows_its_lane_and_leaves_at_its_release() {
    let t = shared_table(1);
    let n = 3_000u64;
    let held = take_rows_from(2, &t, 0..n);
    let d = t.dir();
    assert!(d.buckets.len() >= 256, "{} buckets for {n} locks", d.buckets.len());
    let mut kept = 0;
    for (at, b) in d.buckets.iter().enumerate() {
        for i in 0..KEEP_HEADS {
            if b.keeps(i, b.kept(i)) {
                // SAFETY: a kept head of the table.
                assert_eq!(unsafe { &*b.kept(i) }.lane(), Some((at, i)), "bucket {at}, lane {i}");
                kept += 1;
            }
        }
        b.heads(|p| {
            // SAFETY: a head of the table.
            let lane = unsafe { &*p }.lane();
            assert!(
                lane.is_none_or(|(a, i)| a == at && b.keeps(i, p)),
                "an extra head in no lane"
            );
        });
    }
    // Every release empties its head's queue: each kept head goes to the
    // agent's spares, each extra one stays bound.
    for &(r, h) in &held {
        release_as(2, &t, r, h);
    }
    assert!(kept > MOST_SPARES, "{kept} kept heads");
    assert_eq!(t.spares_of(2) + t.common.lock().len(), kept);
    assert!(ptr::eq(t.dir(), d), "no growth since");
    assert!(
        d.buckets
            .iter()
            .all(|b| (0..KEEP_HEADS).all(|i| !b.keeps(i, b.kept(i))))
    );
    for (r, _) in held {
        // SAFETY: released, linked nowhere.
        unsafe { r.free() };
    }
}

#[test]
fn x_excludes_x_while_the_table_grows() {
    const HOT: u64 = 8;
    const THREADS: u32 = 3;
    const ROUNDS: u64 = if cfg!(debug_assertions) { 3_000 } else { 30_000 };
    let t = shared_table(1);
    let holders: Vec<AtomicU32> = (0..HOT).map(|_| AtomicU32::new(0)).collect();
    thread::scope(|s| {
        // One transaction takes ever more locks: the table grows under
        // the others.
        s.spawn(|| {
            let mut held = Vec::new();
            for i in 0..ROUNDS {
                let r = request(THREADS, 1);
                let (out, h) = acquire_as(THREADS, &t, r, LockId::row(T, 1_000_000 + i), Mode::X);
                assert!(matches!(out, Outcome::Granted));
                held.push((r, h));
            }
            for (r, h) in held {
                release_as(THREADS, &t, r, h);
                // SAFETY: released, linked nowhere.
                unsafe { r.free() };
            }
        });
        for a in 0..THREADS {
            let holders = &holders;
            let t = &t;
            s.spawn(move || {
                let r = request(a, 2 + a as u64);
                for i in 0..ROUNDS {
                    let row = (i * 7 + a as u64) % HOT;
                    let (out, h) = acquire_as(a, t, r, LockId::row(T, row), Mode::X);
                    if matches!(out, Outcome::Granted) {
                        assert_eq!(
                            holders[row as usize].fetch_add(1, Ordering::SeqCst),
                            0,
                            "two X on {row}"
                        );
                        holders[row as usize].fetch_sub(1, Ordering::SeqCst);
                        release_as(a, t, r, h);
                    }
                }
                // SAFETY: released or refused, linked nowhere.
                unsafe { r.free() };
            });
        }
    });
    assert!(t.buckets() as u64 >= ROUNDS / 8, "{} buckets", t.buckets());
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty(), "{snap:?}");
}

#[test]
fn at_its_most_buckets_the_table_stops_growing_and_still_binds() {
    let t = Latched::<false>::with_most(1, 4);
    let held = take_rows(&t, 200);
    assert_eq!(t.buckets(), 4, "grew past its most");
    for (r, h) in held {
        release(&t, r, h);
        // SAFETY: released, linked nowhere.
        unsafe { r.free() };
    }
}

proptest::proptest! {
    /// The index's four tag compares in word operations match them one
    /// by one, lanes with the tag's low bits or its neighbours' included.
    #[test]
    fn lanes_equal_marks_exactly_the_lanes_that_hold_the_tag(
        lanes in proptest::array::uniform4(proptest::prop_oneof![
            proptest::prelude::Just(0u16),
            proptest::prelude::any::<u16>(),
        ]),
        t in 1u16..,
        copy in proptest::collection::vec(0usize..4, 0..4),
        near in proptest::prelude::any::<bool>(),
    ) {
        let mut lanes = lanes;
        for &i in &copy {
            // The tag itself, or a value one off it (where a borrow or a
            // carry across lanes would show).
            lanes[i] = if near { t ^ 1 } else { t };
        }
        let tags = lanes.iter().enumerate().fold(0u64, |w, (i, &l)| w | u64::from(l) << (16 * i));
        let want = lanes
            .iter()
            .enumerate()
            .filter(|&(_, &l)| l == t)
            .fold(0u64, |w, (i, _)| w | 0x8000 << (16 * i));
        proptest::prop_assert_eq!(super::super::buckets::lanes_equal(tags, t), want);
    }
}

#[test]
fn no_lock_has_the_id_words_of_an_unbound_head() {
    use crate::id::TxnId;
    let most = TableId::new(u16::MAX, u32::MAX);
    for id in [
        LockId::database(u16::MAX),
        LockId::table(most),
        LockId::page(most, u32::MAX),
        LockId::row(most, u64::MAX),
        LockId::paged_row(most, u32::MAX, u32::MAX),
        LockId::transaction(TxnId(u64::MAX)),
        LockId::row(T, 0),
    ] {
        assert_eq!(id.words().1 & super::super::head::UNBOUND.1, 0, "{id:?}");
        assert_ne!(id.words(), super::super::head::UNBOUND);
    }
}
