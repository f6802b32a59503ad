//! loom models of the three latches, one model written against
//! [`RawMutex`]: mutual exclusion (the guarded value is a loom cell, so two
//! holders at once are an access conflict loom reports) and no lost
//! wake-up (a thread left asleep on a free latch is a deadlock loom
//! reports); and of [`HandleLatch`], whose stale handles must never hold
//! it.
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
use crate::{HandleLatch, RawLatch, RawMutex, Refused, SpinLatch, SpinLock};
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

/// Every handle generation's bits (the C interface keeps 23).
const MASK: u32 = (1 << 23) - 1;

/// Two callers of the current generation: one at a time, and each gets in
/// once the other is done (a refusal is `Held`, never `Stale`).
#[test]
fn loom_handle_latch_excludes_the_callers_of_its_generation() {
    loom::model(|| {
        let shared = Arc::new((HandleLatch::new(), UnsafeCell::new(0u32)));
        let enter = |s: &(HandleLatch, UnsafeCell<u32>)| {
            loop {
                match s.0.try_lock(0, MASK) {
                    Ok(()) => break,
                    Err(r) => assert_eq!(r, Refused::Held),
                }
                loom::thread::yield_now();
            }
            // SAFETY: under the latch (loom reports an overlap).
            s.1.with_mut(|p| unsafe { *p += 1 });
            // SAFETY: taken just above.
            unsafe { s.0.unlock() };
        };
        let other = shared.clone();
        let h = loom::thread::spawn(move || enter(&other));
        enter(&shared);
        h.join().unwrap();
        // SAFETY: the other thread has ended.
        assert_eq!(shared.1.with(|p| unsafe { *p }), 2);
        assert!(!shared.0.is_locked());
        assert_eq!(shared.0.generation(), 0);
    });
}

/// The C interface's agent shell, freed and reused while a call with the
/// freed handle races in: the owner ends generation 0 under the latch
/// (`heirloom_agent_free`), writes the reused shell's state without it
/// (`heirloom_agent_new`: nobody has a handle of generation 1 yet), and
/// its first call with the new handle takes the latch at once. The racing
/// caller of generation 0 gets in before the free or is refused: a write
/// of the cell by it after the free would be an access conflict loom
/// reports, and a latch it held for a moment would refuse the new
/// handle's call.
#[test]
fn loom_handle_latch_a_stale_handle_never_holds_the_next_generation() {
    loom::model(|| {
        let shared = Arc::new((HandleLatch::new(), UnsafeCell::new(0u32)));
        let stale = shared.clone();
        let racer = loom::thread::spawn(move || match stale.0.try_lock(0, MASK) {
            Ok(()) => {
                // SAFETY: under the latch.
                stale.1.with_mut(|p| unsafe { *p += 100 });
                // SAFETY: taken just above.
                unsafe { stale.0.unlock() };
                true
            }
            Err(_) => false,
        });
        // The free: under the latch of generation 0 (the racer may hold it
        // first; then the free waits its turn, as a caller told `Held`
        // tries again).
        while shared.0.try_lock(0, MASK).is_err() {
            loom::thread::yield_now();
        }
        // SAFETY: under the latch.
        shared.1.with_mut(|p| unsafe { *p += 1 });
        // SAFETY: taken just above.
        unsafe { shared.0.retire() };
        // The reuse: the new state written without the latch.
        // SAFETY: no handle of generation 1 exists yet; a stale caller
        // never gets in (what this model checks).
        shared.1.with_mut(|p| unsafe { *p = 10 });
        // The new handle's first call.
        assert_eq!(
            shared.0.try_lock(1, MASK),
            Ok(()),
            "the reused object's own call refused"
        );
        // SAFETY: under the latch.
        shared.1.with_mut(|p| unsafe { *p += 1 });
        // SAFETY: taken just above.
        unsafe { shared.0.unlock() };
        let _ = racer.join().unwrap();
        assert_eq!(shared.0.try_lock(0, MASK), Err(Refused::Stale));
        // SAFETY: the racer has ended.
        assert_eq!(shared.1.with(|p| unsafe { *p }), 11);
    });
}
