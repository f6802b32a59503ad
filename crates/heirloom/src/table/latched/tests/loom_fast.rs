//! loom models of the latched table's intention-lock fast path
//! (`table/fast.rs`, "On the latched table"), running the table's own code:
//! the word's fast holds against a strong request that closes the word
//! under the head latch, and the wake-up duty of a fast release.
//!
//! Run: `RUSTFLAGS="--cfg heirloom_loom --cfg crossbeam_loom"
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p heirloom --lib loom_fast`

use super::super::{At, Latched};
use super::support::{self, node};
use crate::id::{LockId, TableId};
use crate::mode::Mode;
use crate::nodes::{Nodes, Reuse};
use crate::queue::Outcome;
use crate::request::{CONVERTING, GRANTED, ReqPtr, WAITING};
use crate::stats::AgentCounters;
use crate::sync::{Arc, AtomicBool, Ordering};
use crate::table::{Caller, LockTable};

const T: TableId = TableId::new(0, 1);

/// A node of agent `agent`'s transaction (the model's own: see
/// `support.rs`).
fn request(agent: u32) -> ReqPtr {
    support::request(agent, agent as u64 + 1)
}

fn acquire(t: &Latched, id: LockId, r: ReqPtr, mode: Mode, wake: &mut Vec<ReqPtr>) -> (Outcome, At) {
    // SAFETY: a model's own node, linked nowhere yet (see above).
    unsafe { t.acquire(Caller::of(&AgentCounters::default()), id, r, mode, true, true, wake) }
}

fn release(t: &Latched, h: At, r: ReqPtr, wake: &mut Vec<ReqPtr>) {
    // SAFETY: a model's own node, with the handle its acquisition returned.
    unsafe { t.release(Caller::of(&AgentCounters::default()), h, r, wake) }
}

/// Waits (as a parked owner would) until `r` is no longer WAITING or
/// CONVERTING.
fn wait_granted(r: ReqPtr) {
    while matches!(node(&r).status.load(Ordering::Acquire), WAITING | CONVERTING) {
        loom::thread::yield_now();
    }
}

/// Once nothing is held the word is open again: a fast IS is granted (and
/// given back). Returns its node, for the model to free.
fn assert_open(t: &Latched, id: LockId) -> ReqPtr {
    let (again, mut wake) = (request(0), Vec::new());
    let (out, h) = acquire(t, id, again, Mode::IS, &mut wake);
    assert!(matches!(out, Outcome::Granted));
    assert!(h.fast_slot().is_some(), "the word was left closed");
    release(t, h, again, &mut wake);
    again
}

/// A transaction takes IS fast and gives it up while another asks for X on
/// the same table (closing the word under the head latch and waiting if it
/// sees the hold): X is granted in the end — at once, or by the fast
/// release's wake-up duty — and never while the IS is held; and the word
/// is open again once X is gone.
#[test]
fn a_fast_release_never_loses_the_strong_waiters_wake_up() {
    loom::model(|| {
        let t = Arc::new(Latched::<false>::new(1, false, true, false, false));
        let id = LockId::table(T);
        let (is, x) = (request(0), request(1));
        let is_held = Arc::new(AtomicBool::new(false));
        let writer = {
            let (t, is_held) = (t.clone(), is_held.clone());
            loom::thread::spawn(move || {
                let mut wake = Vec::new();
                let (out, h) = acquire(&t, id, x, Mode::X, &mut wake);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(x);
                }
                assert_eq!(node(&x).status.load(Ordering::Acquire), GRANTED);
                assert!(!is_held.load(Ordering::SeqCst), "X granted while IS is held");
                release(&t, h, x, &mut wake);
            })
        };
        let mut wake = Vec::new();
        let (out, h) = acquire(&t, id, is, Mode::IS, &mut wake);
        assert!(matches!(out, Outcome::Granted | Outcome::Waiting));
        if matches!(out, Outcome::Waiting) {
            // Queued behind X (the word was closed): granted when X goes.
            wait_granted(is);
        }
        is_held.store(true, Ordering::SeqCst);
        is_held.store(false, Ordering::SeqCst);
        release(&t, h, is, &mut wake);
        writer.join().unwrap();
        let again = assert_open(&t, id);
        drop(t);
        for r in [is, x, again] {
            // SAFETY: the model's own nodes; both threads are done.
            unsafe { r.free() };
        }
    });
}

/// Two transactions hold IS fast; one converts to X (a request served as
/// a conversion, `Queue::convert_outside`) while the other gives its IS
/// up: the conversion is granted in the end and not while the other IS is
/// held.
#[test]
fn a_conversion_of_a_fast_hold_waits_for_the_others_only() {
    loom::model(|| {
        let t = Arc::new(Latched::<false>::new(1, false, true, false, false));
        let id = LockId::table(T);
        let (mine, other) = (request(0), request(1));
        let mut wake = Vec::new();
        let (_, hm) = acquire(&t, id, mine, Mode::IS, &mut wake);
        let (_, ho) = acquire(&t, id, other, Mode::IS, &mut wake);
        assert!(hm.fast_slot().is_some() && ho.fast_slot().is_some(), "both taken fast");
        let other_held = Arc::new(AtomicBool::new(true));
        let releaser = {
            let (t, other_held) = (t.clone(), other_held.clone());
            loom::thread::spawn(move || {
                other_held.store(false, Ordering::SeqCst);
                release(&t, ho, other, &mut Vec::new());
            })
        };
        let conv = request(0);
        let (mut q, p, _) = t.latched_head(Caller::of(&AgentCounters::default()), id);
        // SAFETY: the model's own node, linked nowhere yet.
        let out = unsafe { q.convert_outside(conv, Mode::X, true, false, false, &mut wake) };
        // SAFETY: the table's own head.
        unsafe { &*p }.publish_waiters(&mut q, &mut wake, false, true);
        drop(q);
        let hc = At::head(p);
        if matches!(out, Outcome::Waiting) {
            wait_granted(conv);
        }
        assert_eq!(node(&conv).status.load(Ordering::Acquire), GRANTED);
        assert!(
            !other_held.load(Ordering::SeqCst),
            "X granted while the other IS is held"
        );
        releaser.join().unwrap();
        release(&t, hc, conv, &mut wake);
        release(&t, hm, mine, &mut wake);
        drop(t);
        for r in [mine, other, conv] {
            // SAFETY: the model's own nodes; both threads are done.
            unsafe { r.free() };
        }
    });
}

/// A fast IS is converted to IX (`Fast::upgrade`, or through the queue
/// when the word is closed) while another transaction takes S, which is
/// compatible with the IS and not with the IX: the two never overlap, and
/// both end.
#[test]
fn a_fast_upgrade_never_overlaps_a_strong_request() {
    loom::model(|| {
        let t = Arc::new(Latched::<false>::new(1, false, true, false, false));
        let id = LockId::table(T);
        let (is, s) = (request(0), request(1));
        let (ix_held, s_held) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let reader = {
            let (t, ix_held, s_held) = (t.clone(), ix_held.clone(), s_held.clone());
            loom::thread::spawn(move || {
                let mut wake = Vec::new();
                let (out, h) = acquire(&t, id, s, Mode::S, &mut wake);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(s);
                }
                s_held.store(true, Ordering::SeqCst);
                assert!(!ix_held.load(Ordering::SeqCst), "S granted while IX is held");
                s_held.store(false, Ordering::SeqCst);
                release(&t, h, s, &mut wake);
            })
        };
        let mut wake = Vec::new();
        let mut nodes = Nodes::new(Reuse::Unlinked, 0, || {});
        let (out, h) = acquire(&t, id, is, Mode::IS, &mut wake);
        assert!(matches!(out, Outcome::Granted), "IS is compatible with S");
        // SAFETY: the model's own granted request, with its handle.
        let conv = unsafe {
            t.convert(
                Caller::of(&AgentCounters::default()),
                id,
                h,
                is,
                Mode::IX,
                true,
                false,
                &mut wake,
                &mut nodes,
            )
        };
        if matches!(conv.outcome, Outcome::Waiting) {
            wait_granted(conv.req);
        }
        ix_held.store(true, Ordering::SeqCst);
        assert!(!s_held.load(Ordering::SeqCst), "IX granted while S is held");
        ix_held.store(false, Ordering::SeqCst);
        release(&t, conv.head.into(), conv.req, &mut wake);
        if conv.req != is {
            release(&t, h, is, &mut wake);
        }
        reader.join().unwrap();
        let again = assert_open(&t, id);
        drop(t);
        let extra = (conv.req != is).then_some(conv.req);
        for r in [is, s, again].into_iter().chain(extra) {
            // SAFETY: the model's own nodes; both threads are done.
            unsafe { r.free() };
        }
        drop(nodes);
    });
}

/// A row's head bound while the row side's switch was off has no
/// `Outside` (`Latched::outside_of`). A transaction (its agent's `active`
/// flag and count begun, as the gate keeps them) takes X on the row
/// through that head while the switch arms, waits out the grace period
/// and turns on, and a fast S on the row follows: an X decided after the
/// switch left off gives the head its `Outside` and is counted
/// (`Latched::outside_now`), one decided while it was off is covered by
/// the grace period; either way X and the fast S never overlap.
#[test]
fn a_head_bound_while_the_switch_was_off_counts_a_later_x() {
    use crate::sync::AtomicU64;
    use crate::table::fast::rows::{ARMING, DRAINING, OFF, ON};
    loom::model(|| {
        let t = Arc::new(Latched::<false>::new(1, false, true, true, false));
        let rows = t.fast().and_then(|f| f.row_side()).unwrap();
        let on = rows.state();
        assert!(rows.turn(on, DRAINING));
        assert!(rows.turn(on & !3 | DRAINING, OFF));
        let row = LockId::row(T, 0);
        // Bind the row's head while off, and leave it empty.
        let (first, x) = (request(2), request(0));
        let mut wake = Vec::new();
        let (out, h) = acquire(&t, row, first, Mode::X, &mut wake);
        assert!(matches!(out, Outcome::Granted));
        release(&t, h, first, &mut wake);
        let (x_held, s_held) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (active, begun) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
        let txn = {
            let (t, x_held, s_held, active, begun) =
                (t.clone(), x_held.clone(), s_held.clone(), active.clone(), begun.clone());
            loom::thread::spawn(move || {
                // `Transaction::begin`: the count (Release), `active`, and
                // the gate's light fence (SeqCst under loom).
                begun.store(1, Ordering::Release);
                active.store(true, Ordering::Relaxed);
                crate::sync::fence(Ordering::SeqCst);
                let mut wake = Vec::new();
                let (out, h) = acquire(&t, row, x, Mode::X, &mut wake);
                if matches!(out, Outcome::Waiting) {
                    wait_granted(x);
                }
                x_held.store(true, Ordering::SeqCst);
                assert!(!s_held.load(Ordering::SeqCst), "X granted while a fast S is held");
                x_held.store(false, Ordering::SeqCst);
                release(&t, h, x, &mut wake);
                // The end (`Gate::leave`).
                active.store(false, Ordering::Release);
            })
        };
        // `arm`: the turn, the gate's heavy fence, the snapshot; `look`
        // until the transaction of the snapshot has ended; then `ON`.
        let off = rows.state();
        assert!(rows.turn(off, ARMING));
        crate::sync::fence(Ordering::SeqCst);
        let was_active = active.load(Ordering::Acquire);
        let count = begun.load(Ordering::Acquire);
        while was_active && active.load(Ordering::Acquire) && begun.load(Ordering::Acquire) == count {
            loom::thread::yield_now();
        }
        assert!(rows.turn(off & !3 | ARMING, ON));
        let c = AgentCounters::default();
        let reader = Caller { counters: &c, agent: 1 };
        if let Some(h) = t.try_fast_hold(reader, row, Mode::S, 2, 2, &mut wake) {
            s_held.store(true, Ordering::SeqCst);
            assert!(!x_held.load(Ordering::SeqCst), "a fast S granted while X is held");
            s_held.store(false, Ordering::SeqCst);
            t.release_fast_hold(reader, row, h, Mode::S, false, &mut wake);
        }
        txn.join().unwrap();
        drop(t);
        for r in [first, x] {
            // SAFETY: the model's own nodes; both threads are done.
            unsafe { r.free() };
        }
    });
}
