//! One transaction that takes many X row locks, on every lock table kind:
//! what a bulk load, a large delete or a scan costs the lock manager, and
//! whether that cost grows linearly with the locks held.
//!
//! `cargo run --release --example manylocks -- [LOCKS] [BUCKETS]`
//!
//! LOCKS (default 300,000) rows of one table are locked X in one
//! transaction, which then commits; BUCKETS (default: the manager's) sets
//! `Builder::buckets`. For each kind it prints the whole time, the time of
//! the first and of the last 10,000 locks, and their ratio (about 1 when
//! the cost per lock does not grow with the locks held).

use std::time::{Duration, Instant};

use heirloom::{LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);
const STEP: usize = 10_000;

fn main() {
    let mut args = std::env::args().skip(1);
    let locks: usize = args.next().map_or(300_000, |a| {
        a.parse().unwrap_or_else(|_| {
            eprintln!("manylocks: {a:?} is not a number of locks");
            std::process::exit(2)
        })
    });
    let buckets: Option<usize> = args.next().map(|a| {
        a.parse().unwrap_or_else(|_| {
            eprintln!("manylocks: {a:?} is not a number of buckets");
            std::process::exit(2)
        })
    });
    println!(
        "{locks} X row locks in one transaction, then commit; buckets {}",
        buckets.map_or("default".to_string(), |b| b.to_string())
    );
    for kind in TableKind::ALL {
        let mut b = LockManager::builder().table(kind);
        if let Some(n) = buckets {
            b = b.buckets(n);
        }
        let lm = b.build();
        let mut a = lm.agent();
        let start = Instant::now();
        let (mut first, mut last) = (Duration::ZERO, Duration::ZERO);
        let mut t = a.begin();
        let mut mark = Instant::now();
        for i in 0..locks {
            t.lock(LockId::row(T, i as u64), Mode::X).expect("an uncontended lock");
            if (i + 1) % STEP == 0 {
                let d = mark.elapsed();
                if i + 1 == STEP {
                    first = d;
                }
                last = d;
                mark = Instant::now();
            }
        }
        t.commit().expect("commit");
        let all = start.elapsed();
        println!(
            "{:<16} {:>8.3} s   first {STEP}: {:>7.1} ms   last {STEP}: {:>7.1} ms   last/first {:>5.2}",
            kind.to_string(),
            all.as_secs_f64(),
            first.as_secs_f64() * 1e3,
            last.as_secs_f64() * 1e3,
            last.as_secs_f64() / first.as_secs_f64().max(1e-9)
        );
        assert!(lm.snapshot().is_empty());
    }
}
