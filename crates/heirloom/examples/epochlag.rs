//! How long the epoch collector makes a deferred function wait while
//! THREADS agents run short transactions on the latch-free table (each an
//! X lock on a row of its own, as the `update` shape of `lockshapes`), and
//! how many request nodes the agents allocated meanwhile.
//!
//! `cargo run --release --example epochlag -- THREADS SECONDS`
//!
//! Every 5 ms the main thread defers a function that notes how long ago it
//! was deferred; the percentiles of those waits are the grace periods the
//! table's nodes wait for too. Oversubscribed (more threads than cores), a
//! thread preempted while pinned holds the epoch until it runs again.
//! Prints one line: throughput, the waits' percentiles in microseconds, and
//! the nodes allocated (`Stats::nodes_allocated`) and rounds of help
//! (`Stats::reclaim_helps`) of all agents.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use heirloom::{LockId, LockManager, Mode, TableId, TableKind};

fn usage(msg: &str) -> ! {
    eprintln!("epochlag: {msg}");
    eprintln!("usage: epochlag THREADS SECONDS");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        usage("wrong number of arguments");
    }
    let threads: usize = args[0]
        .parse()
        .ok()
        .filter(|t| (1..=1024).contains(t))
        .unwrap_or_else(|| usage("THREADS must be 1 to 1024"));
    let seconds: f64 = args[1]
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s < 3600.0)
        .unwrap_or_else(|| usage("SECONDS must be a positive number below 3600"));
    let lm = LockManager::builder().table(TableKind::LatchFree).build();
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let (lm, stop) = (lm.clone(), stop.clone());
            thread::spawn(move || {
                let mut agent = lm.agent();
                let mut k = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    k += 1;
                    let mut t = agent.begin();
                    let row = LockId::row(TableId::new(0, 1), i as u64 * 1_000_000 + (k & 1023));
                    t.lock(row, Mode::X).expect("a row of its own: no conflict");
                    t.commit().expect("commit");
                }
                k
            })
        })
        .collect();
    let waits = Arc::new(Mutex::new(Vec::new()));
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < seconds {
        let (w, at) = (waits.clone(), Instant::now());
        let g = crossbeam_epoch::pin();
        g.defer(move || {
            let us = at.elapsed().as_micros() as u64;
            // A poisoned mutex only means another deferred function
            // panicked; its samples are still there.
            w.lock().unwrap_or_else(|e| e.into_inner()).push(us);
        });
        g.flush();
        drop(g);
        thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    let elapsed = t0.elapsed().as_secs_f64();
    let txns: u64 = workers.into_iter().map(|w| w.join().expect("worker")).sum();
    let stats = lm.stats();
    let mut v = waits.lock().unwrap_or_else(|e| e.into_inner()).clone();
    v.sort_unstable();
    let pct = |p: usize| {
        v.get((v.len() * p / 100).min(v.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "threads {threads}: {:.0} txn/s; deferred waits (us, {} samples): p50 {} p90 {} p99 {} max {}; nodes allocated {}, help rounds {}",
        txns as f64 / elapsed,
        v.len(),
        pct(50),
        pct(90),
        pct(99),
        v.last().copied().unwrap_or(0),
        stats.nodes_allocated,
        stats.reclaim_helps
    );
}
