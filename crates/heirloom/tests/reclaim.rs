//! The latch-free table's request nodes come back through the epoch
//! collector; while the epoch is held (a thread preempted inside a pinned
//! section), an agent must not grow its pool without bound. It helps the
//! collector once many of its nodes are on their way back (`nodes.rs`),
//! and the help is what lets the holder go here: the holder unpins only
//! after the agent has helped, as a preempted thread runs again once the
//! threads that need the epoch give up the processor.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use heirloom::{LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

/// `RECLAIM_CAP` in `nodes.rs`: nodes on their way back before an agent
/// helps instead of allocating.
const CAP: u64 = 4096;

/// The tests of this file one at a time: one holds the epoch that the
/// other's must not see held.
static SERIAL: Mutex<()> = Mutex::new(());

/// One agent's transactions, each an X lock on a row of its own (a request
/// linked in a list, so its node goes through the collector).
fn run(agent: &mut heirloom::Agent, from: u64, n: u64) {
    for k in from..from + n {
        let mut t = agent.begin();
        t.lock(LockId::row(T, k), Mode::X).expect("one agent: no conflict");
        t.commit().expect("commit");
    }
}

#[test]
fn a_held_epoch_does_not_grow_the_pool_without_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Both latch-free tables: the CAS append and the swap append.
    for kind in TableKind::ALL.into_iter().filter(TableKind::is_latch_free) {
        held_epoch(kind);
    }
}

fn held_epoch(kind: TableKind) {
    let lm = LockManager::builder().table(kind).build();
    let mut agent = lm.agent();
    run(&mut agent, 0, 1_000);
    let warm = agent.stats();

    // The holder pins the collector's epoch (the default collector, which
    // the table uses) and keeps it until the agent has helped, or for at
    // most 30 s (then the assertion below fails instead of the test hanging).
    let done = Arc::new(AtomicBool::new(false));
    let pinned = Arc::new(AtomicBool::new(false));
    let holder = {
        let (lm, done, pinned) = (lm.clone(), done.clone(), pinned.clone());
        thread::spawn(move || {
            let g = crossbeam_epoch::pin();
            pinned.store(true, Ordering::Release);
            let t0 = Instant::now();
            while lm.stats().reclaim_helps == 0
                && !done.load(Ordering::Acquire)
                && t0.elapsed() < Duration::from_secs(30)
            {
                thread::yield_now();
            }
            drop(g);
        })
    };
    while !pinned.load(Ordering::Acquire) {
        thread::yield_now();
    }
    run(&mut agent, 1_000_000, 4 * CAP);
    done.store(true, Ordering::Release);
    holder.join().expect("holder");
    let stalled = agent.stats().since(&warm);
    assert!(stalled.reclaim_helps > 0, "{kind}: the agent never helped: {stalled:?}");
    assert!(
        stalled.nodes_allocated < 2 * CAP,
        "{kind}: {} nodes allocated over {} transactions while the epoch was held (bound {})",
        stalled.nodes_allocated,
        4 * CAP,
        2 * CAP
    );

    // With nobody holding the epoch the nodes come back and are reused.
    let before = agent.stats();
    run(&mut agent, 2_000_000, 4 * CAP);
    let after = agent.stats().since(&before);
    assert!(
        after.nodes_allocated < CAP,
        "{kind}: {} nodes allocated over {} transactions with the epoch free",
        after.nodes_allocated,
        4 * CAP
    );
    drop(agent);
    assert!(lm.snapshot().is_empty(), "{kind}: a lock was left behind");
}

/// Help is for a held epoch only: an agent whose nodes come back at the
/// collector's own pace never reaches the cap. Its own batches wait in the
/// thread's bag of deferred functions until the bag goes to the collector,
/// so that bag must be handed over before it holds [`CAP`] nodes (with a
/// batch of 128 nodes and crossbeam's bag of 64 functions it held 8,192:
/// every agent helped, giving up the processor with its locks held).
#[test]
fn an_epoch_nobody_holds_needs_no_help() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for kind in TableKind::ALL.into_iter().filter(TableKind::is_latch_free) {
        let lm = LockManager::builder().table(kind).build();
        let mut agent = lm.agent();
        run(&mut agent, 0, 1_000);
        let warm = agent.stats();
        run(&mut agent, 1_000_000, 8 * CAP);
        let s = agent.stats().since(&warm);
        assert_eq!(
            s.reclaim_helps, 0,
            "{kind}: the agent helped with nobody holding the epoch: {s:?}"
        );
        assert!(
            s.nodes_allocated < CAP,
            "{kind}: {} nodes allocated over {} transactions",
            s.nodes_allocated,
            8 * CAP
        );
    }
}
