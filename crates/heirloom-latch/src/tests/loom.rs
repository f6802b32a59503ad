//! loom models of the three latches, one model written against
//! [`RawMutex`]: mutual exclusion (the guarded value is a loom cell, so two
//! holders at once are an access conflict loom reports) and no lost
//! wake-up (a thread left asleep on a free latch is a deadlock loom
//! reports).
//!
//! What each latch's waiting looks like under loom:
//! - [`RawLatch`]: no spin; every wait parks in a parking lot made of
//!   loom's mutex and condition variable, after the handshake with both
//!   barriers as `SeqCst` fences (the form [`AsymmetricFence`] takes under
//!   loom), so a release that misses a sleeper is a deadlock.
//! - [`SpinLatch`]: parks at once (`SpinWait::spun_out`), so the model runs
//!   the parked bit's protocol; the shim's wake-up answers "more parked"
//!   (conservative), so a stale parked bit may stay behind.
//! - [`SpinLock`]: spins with a yield each round.
//!
//! [`AsymmetricFence`]: crate::sync::AsymmetricFence

use crate::sync::Arc;
use crate::{RawLatch, RawMutex, SpinLatch, SpinLock};
use loom::cell::UnsafeCell;

/// `threads` threads each take the latch `rounds` times and increment a
/// cell under it; at the end the cell holds the total, the latch is free,
/// and nobody is left asleep.
fn excludes<L: RawMutex + Send + Sync + 'static>(new: fn() -> L, threads: usize, rounds: usize) {
    loom::model(move || {
        let shared = Arc::new((new(), UnsafeCell::new(0usize)));
        let bump = |s: &(L, UnsafeCell<usize>)| {
            let g = s.0.lock();
            // SAFETY: under the latch (loom reports an overlap).
            s.1.with_mut(|p| unsafe { *p += 1 });
            // SAFETY: taken just above.
            unsafe { s.0.unlock(g) };
        };
        let hs: Vec<_> = (1..threads)
            .map(|_| {
                let shared = shared.clone();
                loom::thread::spawn(move || {
                    for _ in 0..rounds {
                        bump(&shared);
                    }
                })
            })
            .collect();
        for _ in 0..rounds {
            bump(&shared);
        }
        for h in hs {
            h.join().unwrap();
        }
        let g = shared.0.try_lock().expect("free once every holder is done");
        // SAFETY: every other thread has ended.
        assert_eq!(shared.1.with(|p| unsafe { *p }), threads * rounds);
        // SAFETY: taken just above.
        unsafe { shared.0.unlock(g) };
    });
}

#[test]
fn loom_raw_latch_two_threads_exclude_each_other_and_nobody_sleeps_on_a_free_latch() {
    excludes(RawLatch::new, 2, 2);
}

#[test]
fn loom_raw_latch_three_threads_exclude_each_other_and_nobody_sleeps_on_a_free_latch() {
    excludes(RawLatch::new, 3, 1);
}

#[test]
fn loom_spin_latch_excludes_and_wakes_its_parked_waiter() {
    excludes(SpinLatch::new, 2, 2);
}

#[test]
fn loom_spin_lock_excludes() {
    excludes(SpinLock::new, 2, 2);
}
