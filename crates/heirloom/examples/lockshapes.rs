//! heirloom under three lock shapes, with nothing else in the transaction:
//! the lock manager alone, for a side-by-side comparison with Berkeley DB's
//! lock subsystem (`scripts/lockshapes.sh` runs both, interleaved).
//!
//! `cargo run --release --example lockshapes -- SHAPE THREADS SECONDS [TABLE] [SLI]`
//!
//! * `hot`: IS database, IS table, S on one row every thread takes;
//! * `update`: IX database, IX table, X on a row of the thread's own;
//! * `tm1`: 80% IS/IS/S, 20% IX/IX/X on a random row of one of four tables
//!   of 100,000 rows.
//!
//! Each transaction is `begin; lock(row, mode); commit` (three lock-table
//! acquisitions and three releases). TABLE is a lock table kind (default
//! latched), SLI `off` (default) or `on`. Prints one line:
//! `heirloom:TABLE[+sli] SHAPE THREADS TXN_PER_S`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use heirloom::{Inheritance, LockId, LockManager, Mode, TableId, TableKind};

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Hot,
    Update,
    Tm1,
}

fn usage(msg: &str) -> ! {
    eprintln!("lockshapes: {msg}");
    eprintln!("usage: lockshapes hot|update|tm1 THREADS SECONDS [TABLE] [off|on]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(3..=5).contains(&args.len()) {
        usage("wrong number of arguments");
    }
    let shape = match args[0].as_str() {
        "hot" => Shape::Hot,
        "update" => Shape::Update,
        "tm1" => Shape::Tm1,
        s => usage(&format!("unknown shape {s}")),
    };
    let threads: usize = args[1]
        .parse()
        .ok()
        .filter(|t| (1..=1024).contains(t))
        .unwrap_or_else(|| usage("THREADS must be 1 to 1024"));
    let seconds: f64 = args[2]
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s < 3600.0)
        .unwrap_or_else(|| usage("SECONDS must be a positive number below 3600"));
    let kind: TableKind = args
        .get(3)
        .map_or(Ok(TableKind::Latched), |s| s.parse())
        .unwrap_or_else(|e| usage(&e));
    if kind == TableKind::NoLocking {
        usage("the none table takes no locks (run it with the kit, where it is checked)");
    }
    let sli: Inheritance = args
        .get(4)
        .map_or(Ok(Inheritance::Off), |s| s.parse())
        .unwrap_or_else(|e| usage(&e));
    let lm = LockManager::builder().table(kind).inheritance(sli).build();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let (lm, stop, start) = (lm.clone(), stop.clone(), start.clone());
            thread::spawn(move || {
                let mut agent = lm.agent();
                let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ ((i as u64 + 1) << 17);
                let mut k = 0u64;
                let mut done = 0u64;
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    let (id, mode) = match shape {
                        Shape::Hot => (LockId::row(TableId::new(0, 1), 0), Mode::S),
                        Shape::Update => {
                            k += 1;
                            (
                                LockId::row(TableId::new(0, 1), i as u64 * 1_000_000 + (k & 1023)),
                                Mode::X,
                            )
                        }
                        Shape::Tm1 => {
                            // xorshift64*, as the C harness draws.
                            rng ^= rng >> 12;
                            rng ^= rng << 25;
                            rng ^= rng >> 27;
                            let r = rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                            let mode = if r % 100 < 20 { Mode::X } else { Mode::S };
                            let table = TableId::new(0, 1 + ((r >> 8) % 4) as u32);
                            (LockId::row(table, (r >> 16) % 100_000), mode)
                        }
                    };
                    let mut t = agent.begin();
                    t.lock(id, mode).expect("no deadlock with one row per transaction");
                    t.commit().expect("commit");
                    done += 1;
                }
                done
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let elapsed = t0.elapsed().as_secs_f64();
    let total: u64 = workers.into_iter().map(|w| w.join().expect("worker")).sum();
    let sli = if sli == Inheritance::Off { "" } else { "+sli" };
    println!(
        "heirloom:{kind}{sli} {} {threads} {:.0}",
        args[0],
        total as f64 / elapsed
    );
}
