//! The latch under oversubscription: more threads than cores, so holders
//! are preempted and waiters park. Checks that the guarded counter is
//! never incremented by two holders at once (a non-atomic
//! read-yield-write under the latch would lose increments) and that every
//! thread finishes (no lost wake-up leaves one asleep).

use std::sync::Arc;
use std::thread;

use crate::latch::Latch;

#[test]
fn no_increment_lost_and_every_thread_finishes() {
    const THREADS: usize = 16;
    const ROUNDS: usize = 2_000;
    let latch = Arc::new(Latch::new(0u64));
    let hs: Vec<_> = (0..THREADS)
        .map(|i| {
            let latch = latch.clone();
            thread::spawn(move || {
                for r in 0..ROUNDS {
                    let mut g = latch.lock();
                    let v = *g;
                    // Now and then give up the processor while holding the
                    // latch, so the others find it held and park.
                    if (r + i) % 64 == 0 {
                        thread::yield_now();
                    }
                    *g = v + 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().expect("a latch user panicked");
    }
    assert_eq!(*latch.lock(), (THREADS * ROUNDS) as u64);
}

#[test]
fn try_lock_fails_while_held_and_succeeds_after() {
    let latch = Latch::new(());
    let g = latch.lock();
    assert!(latch.try_lock().is_none());
    // A refused attempt leaves the holder's latch held.
    assert!(!latch.looks_free(), "a refused try_lock gave the latch back");
    assert!(latch.try_lock().is_none());
    drop(g);
    assert!(latch.looks_free());
    assert!(latch.try_lock().is_some());
}
