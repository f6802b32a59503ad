//! What strong table locks cost the intention-lock fast path, and the
//! transactions beside them: thread 0 takes X on table 1 every EVERY-th
//! transaction (`begin; lock(table 1, X); commit`) and otherwise S on a row
//! of table 2; thread 1 takes S on rows of table 3. The X's database IX and
//! every IS go fast; the X closes table 1's word (the first strong request
//! after the word left zero takes the heavy fence and seals it, see
//! `table/fast.rs`).
//!
//! `cargo run --release --example tablelocks -- TABLE EVERY [SECONDS]`
//!
//! TABLE is a lock table kind, EVERY a positive integer, SECONDS the run's
//! length (default 1). Prints one line: each thread's transactions per
//! second.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use heirloom::{Inheritance, LockId, LockManager, Mode, TableId, TableKind};

fn usage(msg: &str) -> ! {
    eprintln!("tablelocks: {msg}");
    eprintln!("usage: tablelocks TABLE EVERY [SECONDS]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(2..=3).contains(&args.len()) {
        usage("wrong number of arguments");
    }
    let kind: TableKind = args[0].parse().unwrap_or_else(|e: String| usage(&e));
    if kind == TableKind::NoLocking {
        usage("`none` takes no locks: nothing to measure");
    }
    let every: u64 = args[1]
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| usage("EVERY must be a positive integer"));
    let seconds: f64 = args
        .get(2)
        .map_or(Some(1.0), |s| s.parse().ok())
        .filter(|s| *s > 0.0 && *s <= 3600.0)
        .unwrap_or_else(|| usage("SECONDS must be a number in (0, 3600]"));
    let lm = LockManager::builder().table(kind).inheritance(Inheritance::Off).build();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(3));
    let counts: Vec<Arc<AtomicU64>> = (0..2).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let workers: Vec<_> = (0..2u32)
        .map(|w| {
            let (lm, stop, start, count) = (lm.clone(), stop.clone(), start.clone(), counts[w as usize].clone());
            thread::spawn(move || {
                let mut agent = lm.agent();
                start.wait();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut t = agent.begin();
                    let r = if w == 0 && i.is_multiple_of(every) {
                        t.lock(LockId::table(TableId::new(0, 1)), Mode::X)
                    } else {
                        t.lock(LockId::row(TableId::new(0, 2 + w), i & 1023), Mode::S)
                    };
                    if let Err(e) = r.and_then(|()| t.commit()) {
                        eprintln!("tablelocks: {e}");
                        std::process::exit(1);
                    }
                    i += 1;
                }
                count.store(i, Ordering::Relaxed);
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    for h in workers {
        if h.join().is_err() {
            eprintln!("tablelocks: a worker panicked");
            std::process::exit(1);
        }
    }
    let s = t0.elapsed().as_secs_f64();
    let rate = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / s;
    println!(
        "heirloom:{} every {every}: thread 0 (table X) {:.0} txn/s, thread 1 {:.0} txn/s",
        kind.name(),
        rate(&counts[0]),
        rate(&counts[1])
    );
}
