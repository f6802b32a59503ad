//! The three latches under oversubscription, through [`RawMutex`]: more
//! threads than cores, holders that sometimes give up the processor (or
//! sleep) inside, so that waiters find the latch held, spin out and park.
//! No increment is lost, every thread finishes (no lost wake-up leaves one
//! asleep), and the latch ends free.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::{GuardSend, RawLatch, RawMutex, SpinLatch, SpinLock};

/// `THREADS` threads each take `l` `ROUNDS` times and increment a counter
/// with a load and a store under it; every 64th hold yields and every
/// 500th sleeps 200 us, so that waiters outlast their spin.
fn no_increment_lost<L: RawMutex<Guard = GuardSend> + Sync>(l: &L) {
    const THREADS: u64 = 16;
    const ROUNDS: u64 = 2_000;
    let counter = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (l, counter) = (l, &counter);
            s.spawn(move || {
                for r in 0..ROUNDS {
                    let g = l.lock();
                    let c = counter.load(Ordering::Relaxed);
                    if (r + t) % 64 == 0 {
                        std::thread::yield_now();
                    }
                    if (r + t) % 500 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    counter.store(c + 1, Ordering::Relaxed);
                    // SAFETY: taken just above.
                    unsafe { l.unlock(g) };
                }
            });
        }
    });
    assert_eq!(counter.into_inner(), THREADS * ROUNDS, "lost update under the latch");
    assert!(!l.is_locked(), "latch held after every holder is done");
}

/// A held latch refuses `try_lock` and reports itself held; a free one
/// grants it.
fn try_lock_refuses_while_held<L: RawMutex<Guard = GuardSend>>(l: &L) {
    assert!(!l.is_locked());
    let g = l.lock();
    assert!(l.is_locked());
    assert!(l.try_lock().is_none(), "a held latch was taken again");
    // SAFETY: taken just above.
    unsafe { l.unlock(g) };
    let g = l.try_lock().expect("a free latch refused");
    // SAFETY: taken just above.
    unsafe { l.unlock(g) };
    assert!(!l.is_locked());
}

#[test]
fn raw_latch_loses_no_increment_and_wakes_every_parked_thread() {
    no_increment_lost(&RawLatch::new());
    try_lock_refuses_while_held(&RawLatch::new());
    // Built in a const: SeqCst fences on both sides, the same protocol.
    let built_in_a_const = <RawLatch as RawMutex>::INIT;
    no_increment_lost(&built_in_a_const);
}

#[test]
fn raw_latch_keeps_its_note_through_takes_and_releases() {
    let l = RawLatch::new();
    assert_eq!(l.note(), 0);
    l.lock();
    l.set_note(1);
    // SAFETY: held by this thread.
    unsafe { l.unlock() };
    assert!(l.try_lock());
    assert_eq!(l.note(), 1, "the note is not the latch's state");
    assert!(l.is_locked());
    // SAFETY: held by this thread.
    unsafe { l.unlock() };
    assert!(!l.is_locked());
    assert_eq!(l.note(), 1);
}

#[test]
fn spin_latch_loses_no_increment_and_wakes_every_parked_thread() {
    let l = SpinLatch::new();
    no_increment_lost(&l);
    // Free, and no parked bit left: the last release saw nobody parked.
    assert_eq!(l.state(), 0, "latch not free at the end");
    try_lock_refuses_while_held(&SpinLatch::new());
}

#[test]
fn spin_lock_loses_no_increment() {
    no_increment_lost(&SpinLock::new());
    try_lock_refuses_while_held(&SpinLock::new());
}

/// The latches can back a `lock_api::Mutex`.
#[test]
fn a_latch_backs_a_lock_api_mutex() {
    let m = lock_api::Mutex::<SpinLatch, Vec<u32>>::new(Vec::new());
    m.lock().push(1);
    assert_eq!(*m.lock(), [1]);
    assert!(!m.is_locked());
}
