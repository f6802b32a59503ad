//! loom models of the latch-free table, running the table's own code
//! (crossbeam-epoch runs on loom too: `--cfg crossbeam_loom`). Every lock
//! hashes to the one bucket, so all requests share a list.
//!
//! Run: `RUSTFLAGS="--cfg heirloom_loom --cfg crossbeam_loom"
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p heirloom --lib loom`

use crossbeam_epoch as epoch;

use super::super::{At, LatchFree, Route, Visit, hand_over_retired};
use crate::error::TxnId;
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::nodes::{Nodes, Reuse};
use crate::queue::{Cancel, Outcome};
use crate::request::{GRANTED, NEVER_LINKED, OBSOLETE, ORPHANED, OWNER_UNLINKED, RETURNED, ReqPtr, Request, WAITING};
use crate::stats::AgentCounters;
use crate::sync::{Arc, AtomicBool, Ordering};
use crate::table::fast::FastTry;
use crate::table::{Caller, Handle, LockTable};

const T: TableId = TableId::new(0, 1);

// The table's unsafe entry points, for the models. Every node is the
// model's own: allocated by `request`, freed at the model's end (`orphan`,
// `free`) or by the collector after `orphan`, so alive wherever the model
// uses it; the one handle is `Handle(0)`, the table's one bucket.

pub(super) fn node(r: &ReqPtr) -> &Request {
    // SAFETY: a model's own node (see above).
    unsafe { r.get() }
}

pub(super) fn acquire<const S: bool>(
    t: &LatchFree<S>,
    c: &AgentCounters,
    id: LockId,
    r: ReqPtr,
    mode: Mode,
    wait: bool,
) -> (Outcome, At) {
    // SAFETY: a model's own node, linked nowhere yet (see above).
    unsafe { t.acquire(Caller::of(c), id, r, mode, wait, true, &mut Vec::new()) }
}

fn release<const S: bool>(t: &LatchFree<S>, c: &AgentCounters, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
    // SAFETY: a model's own node, linked in bucket 0 (see above).
    unsafe { t.release(Caller::of(c), At::from(Handle(0)), r, wake) }
}

fn cancel<const S: bool>(t: &LatchFree<S>, c: &AgentCounters, r: ReqPtr, wake: &mut Vec<ReqPtr>) -> Cancel {
    // SAFETY: a model's own node, linked in bucket 0 (see above).
    unsafe { t.cancel(Caller::of(c), At::from(Handle(0)), r, wake) }
}

pub(super) fn request(txn: u64) -> ReqPtr {
    let r = ReqPtr::alloc(txn as u32);
    node(&r).txn.store(txn, Ordering::Relaxed);
    r
}

/// Waits (as a parked owner would) until `r` is no longer WAITING.
pub(super) fn wait_granted(r: ReqPtr) {
    while node(&r).status.load(Ordering::Acquire) == WAITING {
        loom::thread::yield_now();
    }
}

/// The end of a model: the agents are gone; the table frees what is linked.
pub(super) fn orphan(nodes: &[ReqPtr]) {
    for r in nodes {
        if node(r).recycle.swap(ORPHANED, Ordering::AcqRel) == RETURNED {
            // SAFETY: returned by the collector: in no list, seen by nobody.
            unsafe { r.free() };
        }
    }
}

/// Two requesters append incompatible requests (no waiting) while a third
/// thread walks the list: never both granted, a refused request is not
/// linked (CAS append) or withdrawn (swap append), and the walker sees each
/// linked request once, in order.
fn two_appenders_and_a_scanner<const SWAP: bool>() {
    // Three threads each pinning the epoch: one preemption per execution
    // keeps the search to minutes (the other models use the CI's bound).
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::row(T, 7);
        let (a, b) = (request(1), request(2));
        let spawn = |r: ReqPtr, mode: Mode| {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, _) = acquire(&t, &c, id, r, mode, false);
                matches!(out, Outcome::Granted)
            })
        };
        let ha = spawn(a, Mode::S);
        let hb = spawn(b, Mode::X);
        {
            let c = AgentCounters::default();
            let g = epoch::pin();
            let mut seen = Vec::new();
            LatchFree::<SWAP>::walk(&t.buckets[0], Route::ONE, &c, &g, |n| {
                match n {
                    None => seen.clear(),
                    Some((n, _)) => seen.push(n.as_raw()),
                }
                Visit::Next
            });
            assert!(seen.len() <= 2);
            assert!(seen.len() < 2 || seen[0] != seen[1]);
        }
        let (ga, gb) = (ha.join().unwrap(), hb.join().unwrap());
        assert!(!(ga && gb), "S and X both granted");
        assert!(ga || gb, "one of them is first and nothing is in its way");
        let c = AgentCounters::default();
        let mut wake = Vec::new();
        for (r, granted) in [(a, ga), (b, gb)] {
            if granted {
                release(&t, &c, r, &mut wake);
            }
        }
        assert!(wake.is_empty());
        let mut snap = Vec::new();
        t.snapshot(0, &mut snap);
        assert!(snap.is_empty(), "nothing live after the releases");
        let refused = if ga { b } else { a };
        if SWAP {
            assert_eq!(
                node(&refused).status.load(Ordering::Acquire),
                OBSOLETE,
                "a refused request is withdrawn"
            );
            drop(t);
            // Linked (appended before it knew) and withdrawn: the table's
            // drop or the collector returned it.
            orphan(&[a, b]);
        } else {
            assert_eq!(node(&refused).recycle.load(Ordering::Relaxed), NEVER_LINKED);
            drop(t);
            orphan(&[if ga { a } else { b }]);
            // SAFETY: refused requests are never linked.
            unsafe { refused.free() };
        }
    });
}

/// A holder releases while a conflicting requester links as WAITING and
/// re-reads (the read-after-write step): the waiter is always granted — by
/// itself or by the releaser — and never while the holder still holds.
fn release_racing_with_wait_never_loses_the_wake_up<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::table(T);
        let (h, w) = (request(1), request(2));
        let c = AgentCounters::default();
        let (out, _) = acquire(&t, &c, id, h, Mode::X, true);
        assert!(matches!(out, Outcome::Granted));
        let waiter = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, _) = acquire(&t, &c, id, w, Mode::IS, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(w);
                }
                assert_eq!(node(&w).status.load(Ordering::Acquire), GRANTED);
                assert_eq!(
                    node(&h).status.load(Ordering::Acquire),
                    OBSOLETE,
                    "granted while the X holder holds"
                );
            })
        };
        let mut wake = Vec::new();
        release(&t, &c, h, &mut wake);
        waiter.join().unwrap();
        assert!(wake.is_empty() || wake == [w]);
        release(&t, &c, w, &mut wake);
        drop(t);
        orphan(&[h, w]);
    });
}

/// An updater converts U to X while another transaction's U request
/// links behind its U and waits (the read-after-write step racing with the
/// conversion's append): the conversion never waits for that waiter (its
/// own U shuts it out), and the waiter is granted only after both of the
/// updater's requests are gone — the new one released first, then the old
/// one, as `Agent::converted` orders them.
fn a_conversion_passes_the_waiters_its_own_request_shuts_out<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::row(T, 3);
        let (old, new, w) = (request(1), request(1), request(2));
        let c = AgentCounters::default();
        assert!(matches!(acquire(&t, &c, id, old, Mode::U, true).0, Outcome::Granted));
        let waiter = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, _) = acquire(&t, &c, id, w, Mode::U, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(w);
                }
                assert_eq!(node(&w).status.load(Ordering::Acquire), GRANTED);
                for r in [old, new] {
                    assert_eq!(
                        node(&r).status.load(Ordering::Acquire),
                        OBSOLETE,
                        "granted U beside the updater"
                    );
                }
            })
        };
        let (out, _) = acquire(&t, &c, id, new, Mode::X, true);
        assert!(
            matches!(out, Outcome::Granted),
            "the conversion waited for a shut-out waiter"
        );
        let mut wake = Vec::new();
        release(&t, &c, new, &mut wake);
        release(&t, &c, old, &mut wake);
        waiter.join().unwrap();
        release(&t, &c, w, &mut wake);
        assert_eq!(t.buckets[0].waiting.load(Ordering::Relaxed), 0);
        drop(t);
        orphan(&[old, new, w]);
    });
}

/// The intention-lock fast path (`fast.rs`): a fast IX hold is given up
/// while a conflicting X request counts itself strong, links and waits (the
/// read-after-write step against the word): the waiter is always granted —
/// by itself or by the releaser's wake-up — and never while the hold lasts.
fn a_fast_release_racing_with_a_strong_waiter_never_loses_the_wake_up<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, true, false));
        let id = LockId::table(T);
        let (h, w) = (request(1), request(2));
        let c = AgentCounters::default();
        let (out, head) = acquire(&t, &c, id, h, Mode::IX, true);
        assert!(matches!(out, Outcome::Granted));
        assert_eq!(node(&h).recycle.load(Ordering::Relaxed), NEVER_LINKED, "taken fast");
        let waiter = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, wh) = acquire(&t, &c, id, w, Mode::X, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(w);
                }
                assert_eq!(node(&w).status.load(Ordering::Acquire), GRANTED);
                assert_eq!(
                    node(&h).status.load(Ordering::Relaxed),
                    OBSOLETE,
                    "X granted while the fast IX is held"
                );
                wh
            })
        };
        let mut wake = Vec::new();
        // SAFETY: the model's own fast hold, with the handle it came with.
        unsafe { t.release(Caller::of(&c), head, h, &mut wake) };
        let wh = waiter.join().unwrap();
        assert!(wake.is_empty() || wake == [w]);
        // SAFETY: the waiter's request, granted, with its handle.
        unsafe { t.release(Caller::of(&c), wh, w, &mut wake) };
        assert_eq!(t.buckets[0].waiting.load(Ordering::Relaxed), 0);
        drop(t);
        // SAFETY: a fast hold is never linked: the model frees it.
        unsafe { h.free() };
        orphan(&[w]);
    });
}

/// A fast IX acquisition races with an X request that counts itself
/// strong: the two are never granted at once (a shared count of holders
/// inside catches any overlap), and both get the lock in turn.
fn a_fast_acquire_racing_with_a_strong_request_never_overlaps<const SWAP: bool>() {
    // Two threads that may each walk, wait and wake with the epoch pinned:
    // one preemption per execution keeps the search to minutes.
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, true, false));
        let id = LockId::table(T);
        let inside = Arc::new(crate::sync::AtomicU32::new(0));
        let spawn = |r: ReqPtr, mode: Mode| {
            let (t, inside) = (t.clone(), inside.clone());
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, head) = acquire(&t, &c, id, r, mode, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(r);
                }
                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "IX and X granted at once");
                inside.fetch_sub(1, Ordering::SeqCst);
                // The owners' wake-ups need nothing under the model
                // (`wait_granted` polls).
                // SAFETY: the thread's own granted request, with its handle.
                unsafe { t.release(Caller::of(&c), head, r, &mut Vec::new()) };
                node(&r).recycle.load(Ordering::Relaxed) == NEVER_LINKED
            })
        };
        let (a, b, p) = (request(1), request(2), request(3));
        // The lock's slot is claimed before (as by any earlier
        // transaction): the race of interest is the word's, not the claim's.
        {
            let c = AgentCounters::default();
            let (out, head) = acquire(&t, &c, id, p, Mode::IS, true);
            assert!(matches!(out, Outcome::Granted));
            // SAFETY: the model's own fast hold, with its handle.
            unsafe { t.release(Caller::of(&c), head, p, &mut Vec::new()) };
        }
        let ha = spawn(a, Mode::IX);
        let hb = spawn(b, Mode::X);
        let fast = ha.join().unwrap();
        assert!(!hb.join().unwrap(), "X is never taken fast");
        assert_eq!(t.buckets[0].waiting.load(Ordering::Relaxed), 0);
        drop(t);
        // SAFETY: a fast hold is never linked: the model frees it.
        unsafe { p.free() };
        if fast {
            // SAFETY: as above.
            unsafe { a.free() };
            orphan(&[b]);
        } else {
            orphan(&[a, b]);
        }
    });
}

/// A waiter cancels (timeout) while the holder releases: exactly one of
/// grant and cancel wins, and the bucket's waiting count ends at zero.
fn cancel_racing_with_release_decides_once<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::table(T);
        let (h, w) = (request(1), request(2));
        let c = AgentCounters::default();
        assert!(matches!(acquire(&t, &c, id, h, Mode::X, true).0, Outcome::Granted));
        assert!(matches!(acquire(&t, &c, id, w, Mode::X, true).0, Outcome::Waiting));
        let releaser = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let mut wake = Vec::new();
                release(&t, &c, h, &mut wake);
                wake.len()
            })
        };
        let cancel = cancel(&t, &c, w, &mut Vec::new());
        let woken = releaser.join().unwrap();
        match cancel {
            Cancel::WasGranted => {
                assert_eq!(woken, 1);
                assert_eq!(node(&w).status.load(Ordering::Acquire), GRANTED);
                release(&t, &c, w, &mut Vec::new());
            }
            Cancel::Cancelled => assert_eq!(woken, 0),
        }
        assert_eq!(t.buckets[0].waiting.load(Ordering::Relaxed), 0);
        drop(t);
        orphan(&[h, w]);
    });
}

/// A released request is unlinked and handed to the epoch collector while
/// another thread walks the list: once the collector has returned it and
/// its owner reuses (here: poisons) the node, no walker can still be on it.
/// `first`: the request is first, so its owner unlinks it from the head at
/// release; else it is between two others, and its owner walks to it and
/// unlinks it (`unlink_own`), or the scanning thread's walk does first and
/// retires it (`retire`). Either way the node comes back through its
/// owner's batch or the collector's RETURNED, and `Nodes::take` reuses it
/// only then.
fn reclamation_scenario<const SWAP: bool>(first: bool) {
    // A transaction id no transaction has.
    const POISON: u64 = u64::MAX;
    loom::model(move || {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let (a, b, d) = (request(1), request(2), request(3));
        let c = AgentCounters::default();
        let order = if first { vec![b, a] } else { vec![a, b, d] };
        for (k, r) in order.into_iter().enumerate() {
            assert!(matches!(
                acquire(&t, &c, LockId::row(T, k as u64), r, Mode::S, true).0,
                Outcome::Granted
            ));
        }
        let scanner = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let g = epoch::pin();
                // Every request a pinned thread can reach, marked or not.
                let mut p = t.buckets[0].head.load(Ordering::Acquire, &g);
                // SAFETY: loaded from the list while `g` is pinned.
                while let Some(x) = unsafe { p.as_ref() } {
                    let s = x.txn.load(Ordering::Acquire);
                    assert_ne!(s, POISON, "a pinned thread reached a reused request");
                    p = x.next.load(Ordering::Acquire, &g).with_tag(0);
                }
                LatchFree::<SWAP>::walk(&t.buckets[0], Route::ONE, &c, &g, |n| {
                    if let Some((_, x)) = n {
                        let s = x.txn.load(Ordering::Acquire);
                        assert_ne!(s, POISON, "a walker reached a reused request");
                    }
                    Visit::Next
                });
            })
        };
        release(&t, &c, b, &mut Vec::new());
        let mut nodes = Nodes::new(Reuse::AfterGracePeriod, 2, hand_over_retired);
        nodes.give_back(b);
        for _ in 0..2 {
            epoch::pin().flush();
        }
        // The agent takes b back only once its batch or b itself was
        // returned (else `take` allocates: not b).
        let r = nodes.take(&c);
        if r == b {
            node(&r).txn.store(POISON, Ordering::Release);
        } else {
            nodes.put(r);
        }
        scanner.join().unwrap();
        release(&t, &c, a, &mut Vec::new());
        if !first {
            release(&t, &c, d, &mut Vec::new());
        }
        drop(t);
        drop(nodes);
        for r in if first { vec![a] } else { vec![a, d] } {
            if node(&r).recycle.load(Ordering::Relaxed) == OWNER_UNLINKED {
                // SAFETY: unlinked by its owner (this thread), in no batch.
                unsafe { r.free() };
            } else {
                orphan(&[r]);
            }
        }
        if first {
            // SAFETY: never linked.
            unsafe { d.free() };
        }
    });
}

fn reclamation_of_a_first_request_never_frees_under_a_scan<const SWAP: bool>() {
    reclamation_scenario::<SWAP>(true);
}

fn reclamation_of_a_request_further_back_never_frees_under_a_scan<const SWAP: bool>() {
    reclamation_scenario::<SWAP>(false);
}

/// A fast IS is converted to IX (`Fast::upgrade`, or by a request appended
/// for IX when the word has strong requests) while another transaction
/// takes S, compatible with the IS and not with the IX: the two never
/// overlap, and both end.
fn a_fast_upgrade_never_overlaps_a_strong_request<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, true, false));
        let id = LockId::table(T);
        let (is, s) = (request(1), request(2));
        let (ix_held, s_held) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let reader = {
            let (t, ix_held, s_held) = (t.clone(), ix_held.clone(), s_held.clone());
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, h) = acquire(&t, &c, id, s, Mode::S, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(s);
                }
                s_held.store(true, Ordering::SeqCst);
                assert!(!ix_held.load(Ordering::SeqCst), "S granted while IX is held");
                s_held.store(false, Ordering::SeqCst);
                // SAFETY: the model's own granted request, with its handle.
                unsafe { t.release(Caller::of(&c), h, s, &mut Vec::new()) };
            })
        };
        let c = AgentCounters::default();
        let mut wake = Vec::new();
        let mut nodes = Nodes::new(Reuse::AfterGracePeriod, 1, hand_over_retired);
        let (out, h) = acquire(&t, &c, id, is, Mode::IS, true);
        assert!(matches!(out, Outcome::Granted), "IS is compatible with S");
        // SAFETY: the model's own granted request, with its handle.
        let conv = unsafe { t.convert(Caller::of(&c), id, h, is, Mode::IX, true, false, &mut wake, &mut nodes) };
        if matches!(conv.outcome, Outcome::Waiting) {
            wait_granted(conv.req);
        }
        ix_held.store(true, Ordering::SeqCst);
        assert!(!s_held.load(Ordering::SeqCst), "IX granted while S is held");
        ix_held.store(false, Ordering::SeqCst);
        // SAFETY: the model's own granted requests, with their handles.
        unsafe {
            t.release(Caller::of(&c), conv.head.into(), conv.req, &mut wake);
            if conv.req != is {
                t.release(Caller::of(&c), h, is, &mut wake);
            }
        }
        reader.join().unwrap();
        drop(t);
        let mut linked = vec![s];
        for r in [Some(is), (conv.req != is).then_some(conv.req)].into_iter().flatten() {
            if node(&r).recycle.load(Ordering::Relaxed) == NEVER_LINKED {
                // SAFETY: a fast hold is never linked: the model frees it.
                unsafe { r.free() };
            } else {
                linked.push(r);
            }
        }
        drop(nodes);
        orphan(&linked);
    });
}

/// No live request is left in the list once every transaction is gone:
/// nothing in a snapshot, and every request still linked is OBSOLETE (one
/// released behind another stays marked until the next append's walk).
fn assert_no_live_request<const SWAP: bool>(t: &LatchFree<SWAP>) {
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    assert!(snap.is_empty(), "a lock left behind: {snap:?}");
    let c = AgentCounters::default();
    let g = epoch::pin();
    LatchFree::<SWAP>::walk(&t.buckets[0], Route::ONE, &c, &g, |n| {
        if let Some((_, x)) = n {
            assert_eq!(x.status.load(Ordering::Acquire), OBSOLETE, "a live request left behind");
        }
        Visit::Next
    });
}

/// The list is empty: no request is left in it at all (nor, swap append,
/// as its tail).
fn assert_empty<const SWAP: bool>(t: &LatchFree<SWAP>) {
    let g = epoch::pin();
    let b = &t.buckets[0];
    assert!(
        b.head.load(Ordering::Acquire, &g).is_null(),
        "a request left in the list"
    );
    assert!(
        !SWAP || b.tail.load(Ordering::Acquire, &g).is_null(),
        "a request left as the tail"
    );
}

/// The only request of a list leaves (CAS append: marked, then unlinked
/// from the head by its owner; swap append: a CAS of the head, then of the
/// tail) while another transaction appends to the list it empties (one CAS
/// of the head from null, unpinned, or a walk and a CAS at the end; or a
/// swap of the tail, then a store of the head), waits if it came first, and
/// leaves in turn: never both held, the appender is always granted, and
/// once one more request came and went the list is empty.
fn an_append_racing_with_the_last_release_keeps_the_list_whole<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::row(T, 3);
        let (h, w) = (request(1), request(2));
        let c = AgentCounters::default();
        let (out, _) = acquire(&t, &c, id, h, Mode::X, true);
        assert!(matches!(out, Outcome::Granted));
        let appender = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, _) = acquire(&t, &c, id, w, Mode::X, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(w);
                }
                assert_eq!(
                    node(&h).status.load(Ordering::Acquire),
                    OBSOLETE,
                    "granted while the holder holds"
                );
                let mut wake = Vec::new();
                release(&t, &c, w, &mut wake);
                assert!(wake.is_empty());
            })
        };
        let mut wake = Vec::new();
        release(&t, &c, h, &mut wake);
        appender.join().unwrap();
        assert!(wake.is_empty() || wake == [w]);
        assert_no_live_request(&t);
        // A request released while another was still ahead of it stays
        // marked at the end; the next append's walk takes it out.
        let n = request(3);
        let (out, _) = acquire(&t, &c, id, n, Mode::X, true);
        assert!(matches!(out, Outcome::Granted));
        release(&t, &c, n, &mut wake);
        assert_empty(&t);
        drop(t);
        hand_over_retired();
        orphan(&[h, w, n]);
    });
}

/// An X request appends behind an S holder while an S request appends
/// too, before or after it (CAS append: a CAS at the end that fails
/// because the other appended first walks again; swap append: maybe while
/// the X request's link is still on its way, which the S request must wait
/// for rather than take the end of what it sees for the end of the list):
/// the later of the two never passes the earlier, so they are granted in
/// turn, never together, and the list ends with no live request. Each
/// checks the other with a flag set once granted; with the swap append
/// also by the other's state (the CAS append stores a request's state
/// before the CAS that links it, so the state of a request not linked yet
/// may read GRANTED). Without the wait for a link on its way only the
/// state check fails.
fn a_later_request_never_passes_an_incompatible_one_ahead<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::row(T, 5);
        let (h, x, s) = (request(1), request(2), request(3));
        let (x_held, s_held) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let c = AgentCounters::default();
        let (out, _) = acquire(&t, &c, id, h, Mode::S, true);
        assert!(matches!(out, Outcome::Granted));
        let writer = {
            let (t, x_held, s_held) = (t.clone(), x_held.clone(), s_held.clone());
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, _) = acquire(&t, &c, id, x, Mode::X, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(x);
                }
                x_held.store(true, Ordering::SeqCst);
                assert_eq!(node(&h).status.load(Ordering::Acquire), OBSOLETE, "X granted beside S");
                assert!(!s_held.load(Ordering::SeqCst), "X granted beside S");
                if SWAP {
                    assert_ne!(node(&s).status.load(Ordering::Acquire), GRANTED, "X granted beside S");
                }
                x_held.store(false, Ordering::SeqCst);
                let mut wake = Vec::new();
                release(&t, &c, x, &mut wake);
            })
        };
        let (out, _) = acquire(&t, &c, id, s, Mode::S, true);
        let mut wake = Vec::new();
        if matches!(out, Outcome::Granted) {
            s_held.store(true, Ordering::SeqCst);
        }
        release(&t, &c, h, &mut wake);
        if matches!(out, Outcome::Waiting) {
            wait_granted(s);
            s_held.store(true, Ordering::SeqCst);
        }
        assert!(!x_held.load(Ordering::SeqCst), "S granted beside X");
        if SWAP {
            assert_ne!(node(&x).status.load(Ordering::Acquire), GRANTED, "S granted beside X");
        }
        s_held.store(false, Ordering::SeqCst);
        release(&t, &c, s, &mut wake);
        writer.join().unwrap();
        assert_no_live_request(&t);
        drop(t);
        hand_over_retired();
        orphan(&[h, x, s]);
    });
}

/// A request that may not wait finds a holder in its way; a later request
/// that may wait comes meanwhile. With the swap append the first is
/// appended ACTIVE, so the later one may find it in its way and wait for it
/// too: the refused request's withdrawal (OBSOLETE, and the wake-up duty of
/// a release) and then the holder's release, in any order with the waiter's
/// read-after-write, always grant the waiter, never while the X request
/// could be granted. (With the CAS append the refused request is never
/// linked, and the waiter waits only for the holder, if at all.)
fn a_withdrawn_request_wakes_whoever_waited_for_it<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::row(T, 9);
        let (h, n, w) = (request(1), request(2), request(3));
        let c = AgentCounters::default();
        let (out, _) = acquire(&t, &c, id, h, Mode::S, true);
        assert!(matches!(out, Outcome::Granted));
        let waiter = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let (out, _) = acquire(&t, &c, id, w, Mode::S, true);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(w);
                }
                assert_ne!(node(&n).status.load(Ordering::Acquire), GRANTED, "S granted beside X");
                let mut wake = Vec::new();
                release(&t, &c, w, &mut wake);
            })
        };
        // The X request: the S holder is ahead of it, so it is refused.
        let (out, _) = acquire(&t, &c, id, n, Mode::X, false);
        assert!(matches!(out, Outcome::Refused(_)), "X granted beside S");
        if SWAP {
            assert_eq!(node(&n).status.load(Ordering::Acquire), OBSOLETE, "withdrawn");
        }
        let mut wake = Vec::new();
        release(&t, &c, h, &mut wake);
        waiter.join().unwrap();
        assert_no_live_request(&t);
        drop(t);
        hand_over_retired();
        if SWAP {
            orphan(&[h, n, w]);
        } else {
            orphan(&[h, w]);
            // SAFETY: refused requests are never linked (CAS append).
            unsafe { n.free() };
        }
    });
}

/// A request of transaction `txn` whose age is `txn` too.
fn aged(txn: u64) -> ReqPtr {
    let r = request(txn);
    node(&r).ts.store(txn, Ordering::Relaxed);
    r
}

/// Wait-die judged before a request waits (`LatchFree::older_ahead`,
/// `LockTable::judge_wait_die`): the youngest, Y (age 5), holds X; R
/// (age 3) asks for X and may wait while the oldest, O (age 1), asks for X
/// too and Y then releases it. O never dies (nobody is older); R waits
/// when only Y was ahead of it, and dies, unlinked, when O was: also after
/// a first lap that found only Y, counted R as waiting and lost its CAS to
/// O's append. X is never held twice, the bucket's waiting count ends at
/// zero and nothing is left behind.
fn wait_die_dies_unlinked_and_uncounted<const SWAP: bool>() {
    loom::model(|| {
        let mut t = LatchFree::<SWAP>::new(1, false, false);
        t.judge_wait_die();
        let t = Arc::new(t);
        let id = LockId::row(T, 9);
        let (y, r, o) = (aged(5), aged(3), aged(1));
        let c = AgentCounters::default();
        let (out, _) = acquire(&t, &c, id, y, Mode::X, true);
        assert!(matches!(out, Outcome::Granted));
        let held = Arc::new(AtomicBool::new(false));
        let younger = {
            let (t, held) = (t.clone(), held.clone());
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                match acquire(&t, &c, id, r, Mode::X, true).0 {
                    Outcome::Refused(b) => {
                        assert_eq!(b.txn, TxnId(1), "died for a younger transaction");
                        return false;
                    }
                    Outcome::Waiting => wait_granted(r),
                    // After both others.
                    Outcome::Granted => {}
                    Outcome::Failed(_) => unreachable!("no server here"),
                }
                assert!(!held.swap(true, Ordering::SeqCst), "X held twice");
                held.store(false, Ordering::SeqCst);
                release(&t, &c, r, &mut Vec::new());
                true
            })
        };
        let (out, _) = acquire(&t, &c, id, o, Mode::X, true);
        assert!(
            matches!(out, Outcome::Waiting),
            "the oldest died, or was granted beside Y"
        );
        release(&t, &c, y, &mut Vec::new());
        wait_granted(o);
        assert!(!held.swap(true, Ordering::SeqCst), "X held twice");
        held.store(false, Ordering::SeqCst);
        release(&t, &c, o, &mut Vec::new());
        let lived = younger.join().unwrap();
        assert_eq!(t.buckets[0].waiting.load(Ordering::Relaxed), 0);
        assert_no_live_request(&t);
        drop(t);
        hand_over_retired();
        if lived || SWAP {
            orphan(&[y, r, o]);
        } else {
            orphan(&[y, o]);
            // SAFETY: a request that died was never linked (CAS append).
            unsafe { r.free() };
        }
    });
}

/// Every holder a snapshot lists of the one lock, checked compatible.
fn assert_snapshot_compatible<const SWAP: bool>(t: &LatchFree<SWAP>) {
    let mut snap = Vec::new();
    t.snapshot(0, &mut snap);
    for l in &snap {
        for (i, a) in l.holders.iter().enumerate() {
            for b in &l.holders[i + 1..] {
                assert!(
                    a.txn == b.txn || a.mode.compatible(b.mode),
                    "the snapshot lists incompatible holders: {snap:?}"
                );
            }
        }
    }
}

/// A snapshot is taken while an S holder releases and the X waiting behind
/// it is granted by that release: it never lists both as holders (it reads
/// the list twice and keeps what stayed, `latchfree/snapshot.rs`).
fn a_snapshot_beside_a_release_never_lists_both_holders<const SWAP: bool>() {
    let mut m = loom::model::Builder::new();
    m.preemption_bound = Some(1);
    m.check(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, false, false));
        let id = LockId::row(T, 5);
        let (h, w) = (request(1), request(2));
        let c = AgentCounters::default();
        let (out, _) = acquire(&t, &c, id, h, Mode::S, true);
        assert!(matches!(out, Outcome::Granted));
        let (out, _) = acquire(&t, &c, id, w, Mode::X, true);
        assert!(matches!(out, Outcome::Waiting));
        let releaser = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let c = AgentCounters::default();
                let mut wake = Vec::new();
                release(&t, &c, h, &mut wake);
                assert_eq!(wake, [w], "the release grants the waiter");
            })
        };
        assert_snapshot_compatible(&t);
        releaser.join().unwrap();
        assert_eq!(node(&w).status.load(Ordering::Acquire), GRANTED);
        release(&t, &c, w, &mut Vec::new());
        assert_no_live_request(&t);
        drop(t);
        orphan(&[h, w]);
    });
}

/// An X request counts itself strong while another agent tries IX fast
/// (its bit may go up and, on seeing the count, down again); if the X is
/// granted, a snapshot taken then never lists the IX beside it: a bit that
/// conflicts with a granted request is a try backing off, no hold
/// (`Fast::fold_into`).
fn a_snapshot_beside_a_fast_try_never_lists_it_with_a_strong_holder<const SWAP: bool>() {
    loom::model(|| {
        let t = Arc::new(LatchFree::<SWAP>::new(1, true, false));
        let id = LockId::table(T);
        let f = t.fast.as_deref().expect("the fast path is on");
        let slot = f.slot(id.words(), true).expect("a free slot");
        let x = request(1);
        let trier = {
            let t = t.clone();
            loom::thread::spawn(move || {
                let f = t.fast.as_deref().unwrap();
                // Agent 3, transaction 3; a hold is let go at once (no
                // waiter to wake: the X request does not wait).
                if f.acquire(slot, (0, 0), 3, 3, 3, Mode::IX) == FastTry::Held {
                    let _ = f.release(slot, (0, 0), 3, Mode::IX);
                }
            })
        };
        let c = AgentCounters::default();
        let (out, head) = acquire(&t, &c, id, x, Mode::X, false);
        let granted = matches!(out, Outcome::Granted);
        assert_snapshot_compatible(&t);
        if granted {
            // SAFETY: the model's own granted request, with its handle.
            unsafe { t.release(Caller::of(&c), head, x, &mut Vec::new()) };
        }
        trier.join().unwrap();
        drop(t);
        if granted || SWAP {
            orphan(&[x]);
        } else {
            // SAFETY: refused requests are never linked (CAS append).
            unsafe { x.free() };
        }
    });
}

/// Every model runs on both appends: `cas::` the `LatchFree` table's,
/// `swap::` the `LatchFreeSwap` table's.
macro_rules! on_both_appends {
    ($($name:ident),* $(,)?) => {
        mod cas {
            $(#[test]
            fn $name() {
                super::$name::<false>()
            })*
        }
        mod swap {
            $(#[test]
            fn $name() {
                super::$name::<true>()
            })*
        }
    };
}

on_both_appends!(
    two_appenders_and_a_scanner,
    release_racing_with_wait_never_loses_the_wake_up,
    a_conversion_passes_the_waiters_its_own_request_shuts_out,
    a_fast_release_racing_with_a_strong_waiter_never_loses_the_wake_up,
    a_fast_acquire_racing_with_a_strong_request_never_overlaps,
    cancel_racing_with_release_decides_once,
    reclamation_of_a_first_request_never_frees_under_a_scan,
    reclamation_of_a_request_further_back_never_frees_under_a_scan,
    a_fast_upgrade_never_overlaps_a_strong_request,
    an_append_racing_with_the_last_release_keeps_the_list_whole,
    a_later_request_never_passes_an_incompatible_one_ahead,
    a_withdrawn_request_wakes_whoever_waited_for_it,
    a_snapshot_beside_a_release_never_lists_both_holders,
    a_snapshot_beside_a_fast_try_never_lists_it_with_a_strong_holder,
    wait_die_dies_unlinked_and_uncounted,
);
