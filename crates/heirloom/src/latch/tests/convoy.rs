//! The latch against parking_lot's `Mutex` when waiters park often: 4 and
//! 16 threads on one latch, each holder yielding the processor every 64th
//! time it holds it (as a preempted holder would), for 2 s each. Prints
//! acquisitions per configuration and the worst wait one thread saw; asserts
//! only that every thread got the latch. A measurement, not a unit test:
//!
//! `cargo test --release -p heirloom --lib convoy -- --ignored --nocapture`

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::latch::Latch;

/// Runs `threads` threads taking `l` through `lock` for 2 s; returns the
/// acquisitions of each thread.
fn run<L: Send + Sync + 'static>(name: &str, threads: usize, l: Arc<L>, lock: fn(&L, &mut dyn FnMut())) -> Vec<u64> {
    let stop = Arc::new(AtomicBool::new(false));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (l, stop) = (l.clone(), stop.clone());
            thread::spawn(move || {
                let mut n = 0u64;
                let mut worst = Duration::ZERO;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    lock(&l, &mut || {
                        for i in 0..50 {
                            std::hint::black_box(i);
                        }
                        if n.is_multiple_of(64) {
                            thread::yield_now();
                        }
                    });
                    worst = worst.max(t.elapsed());
                    n += 1;
                    for i in 0..50 {
                        std::hint::black_box(i);
                    }
                }
                (n, worst)
            })
        })
        .collect();
    thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Relaxed);
    let r: Vec<_> = hs
        .into_iter()
        .map(|h| h.join().expect("a latch user panicked"))
        .collect();
    let total: u64 = r.iter().map(|x| x.0).sum();
    let min = r.iter().map(|x| x.0).min().unwrap_or(0);
    let worst = r.iter().map(|x| x.1).max().unwrap_or_default();
    eprintln!(
        "{name:12} {threads:2} threads: {total:>9} acquisitions, fewest by one thread {min:>8}, worst wait {worst:?}"
    );
    r.into_iter().map(|x| x.0).collect()
}

#[test]
#[ignore]
fn convoy() {
    for threads in [4, 16] {
        for _ in 0..2 {
            let ours = run("latch", threads, Arc::new(Latch::new(())), |l, f| {
                let _g = l.lock();
                f()
            });
            let theirs = run("parking_lot", threads, Arc::new(parking_lot::Mutex::new(())), |l, f| {
                let _g = l.lock();
                f()
            });
            assert!(
                ours.iter().chain(&theirs).all(|&n| n > 0),
                "a thread never got the latch"
            );
        }
    }
}
