//! loom model of [`Latch`]: mutual exclusion (the guarded value is a loom
//! cell, so two holders at once are an access conflict loom reports) and
//! no lost wake-up (the parking lot is loom's mutex and condition
//! variable, so a thread left asleep on a free latch is a deadlock loom
//! reports). The barriers are `SeqCst` fences on both sides, the form
//! [`AsymmetricFence`](crate::sync::AsymmetricFence) takes under loom.
//! Spinning is left out under loom: a thread that finds the latch held
//! goes straight to the parking lot, the part that can lose a wake-up.

use crate::latch::Latch;
use crate::sync::Arc;

/// `threads` threads each take the latch `rounds` times and increment the
/// value; at the end it is the total, and nobody is left parked.
fn run(threads: usize, rounds: usize) {
    loom::model(move || {
        let latch = Arc::new(Latch::new(0usize));
        let hs: Vec<_> = (1..threads)
            .map(|_| {
                let latch = latch.clone();
                loom::thread::spawn(move || {
                    for _ in 0..rounds {
                        *latch.lock() += 1;
                    }
                })
            })
            .collect();
        for _ in 0..rounds {
            *latch.lock() += 1;
        }
        for h in hs {
            h.join().unwrap();
        }
        let g = latch.try_lock().expect("free once every holder is done");
        assert_eq!(*g, threads * rounds);
    });
}

#[test]
fn two_threads_exclude_each_other_and_nobody_sleeps_on_a_free_latch() {
    run(2, 2);
}

#[test]
fn three_threads_exclude_each_other_and_nobody_sleeps_on_a_free_latch() {
    run(3, 1);
}
