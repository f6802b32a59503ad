//! Speculative lock inheritance on a transaction shaped like TM1's
//! GET_SUBSCRIBER_DATA: IS on the database and the table, S on a random row
//! of 100,000, commit. SLI off and on side by side at each thread count
//! (oversubscribed past the core count), with per-transaction counts.
//!
//! `cargo bench -p heirloom --bench sli` (options after `--`:
//! `--seconds S` per run, default 1; `--repeat N` alternating off/on runs
//! per thread count, median reported, default 3; `--threads 1,2,8,32`;
//! `--table latched,latchfree` — several tables run side by side in every
//! round, and each row's last column compares it with the first table).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use heirloom::{Inheritance, LockId, LockManager, Mode, Stats, TableId, TableKind};

const SUBSCRIBER: TableId = TableId::new(0, 1);
const ROWS: u64 = 100_000;

struct Run {
    tps: f64,
    per_txn_upper_ops: f64,
    per_txn_contended: f64,
    per_txn_cas: f64,
    used: f64,
}

fn run(kind: TableKind, sli: Inheritance, threads: usize, secs: f64) -> Run {
    let lm = LockManager::builder().table(kind).inheritance(sli).build();
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (lm, stop, barrier) = (lm.clone(), stop.clone(), barrier.clone());
            thread::spawn(move || {
                let mut a = lm.agent();
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (i as u64 + 1);
                barrier.wait();
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let mut t = a.begin();
                    t.lock(LockId::row(SUBSCRIBER, x % ROWS), Mode::S)
                        .expect("S never conflicts");
                    t.commit().expect("commit");
                }
            })
        })
        .collect();
    barrier.wait();
    // Warm up (heat builds up), then measure an interval.
    thread::sleep(Duration::from_secs_f64((secs / 4.0).min(0.5)));
    let s0 = lm.stats();
    let t0 = Instant::now();
    thread::sleep(Duration::from_secs_f64(secs));
    let s1 = lm.stats();
    let dt = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let d: Stats = s1.since(&s0);
    let n = d.committed.max(1) as f64;
    Run {
        tps: d.committed as f64 / dt,
        // Every transaction acquires and releases its row in the table (rows
        // are never inherited), so the rest are database and table operations.
        per_txn_upper_ops: (d.table_ops as f64 - 2.0 * d.committed as f64).max(0.0) / n,
        per_txn_contended: d.latch_contended as f64 / n,
        per_txn_cas: d.cas_retries as f64 / n,
        used: d.inherited_used as f64 / n,
    }
}

fn main() {
    let mut secs = 1.0;
    let mut threads = vec![1, 2, 8, 32];
    let mut kinds = vec![TableKind::Latched];
    let mut repeat = 3;
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--seconds" => {
                secs = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(secs);
                i += 1;
            }
            "--threads" => {
                if let Some(v) = args.get(i + 1) {
                    threads = v.split(',').filter_map(|t| t.parse().ok()).filter(|&t| t > 0).collect();
                }
                i += 1;
            }
            "--repeat" => {
                repeat = args
                    .get(i + 1)
                    .and_then(|s| s.parse().ok())
                    .filter(|&r| r > 0)
                    .unwrap_or(repeat);
                i += 1;
            }
            "--table" => {
                if let Some(v) = args.get(i + 1) {
                    let k: Vec<TableKind> = v.split(',').filter_map(|t| t.trim().parse().ok()).collect();
                    if !k.is_empty() {
                        kinds = k;
                    }
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    println!(
        "sli bench: GET_SUBSCRIBER_DATA shape (IS db, IS table, S row of {ROWS}); tables {}; median of {repeat} x {secs} s; {} cores",
        names.join(","),
        thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    // The table column fits the longest name (`latchfree-swap`).
    let tw = names.iter().map(|n| n.len()).max().unwrap_or(0).max(9);
    println!(
        "{:>7} {:>tw$} {:>4} {:>12} {:>14} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "threads", "table", "sli", "txn/s", "db+table ops", "contended", "cas retry", "reclaimed", "on/off", "vs first"
    );
    for &t in &threads {
        // Every configuration runs once per round, in the same order, and
        // keeps its median throughput, so drift on a shared machine hits all
        // alike.
        let configs: Vec<(TableKind, Inheritance)> = kinds
            .iter()
            .flat_map(|&k| [(k, Inheritance::Off), (k, Inheritance::On)])
            .collect();
        let mut results: Vec<Vec<Run>> = configs.iter().map(|_| Vec::new()).collect();
        for _ in 0..repeat {
            for (c, out) in configs.iter().zip(results.iter_mut()) {
                out.push(run(c.0, c.1, t, secs));
            }
        }
        let medians: Vec<Run> = results
            .into_iter()
            .map(|mut v| {
                v.sort_by(|a, b| a.tps.total_cmp(&b.tps));
                v.swap_remove(v.len() / 2)
            })
            .collect();
        for (j, ((kind, sli), r)) in configs.iter().zip(&medians).enumerate() {
            let on_off = if *sli == Inheritance::On {
                format!("{:.2}x", r.tps / medians[j - 1].tps)
            } else {
                String::new()
            };
            // The same SLI setting on the first table.
            let first = &medians[j % 2];
            let vs_first = if j >= 2 {
                format!("{:.2}x", r.tps / first.tps)
            } else {
                String::new()
            };
            println!(
                "{:>7} {:>tw$} {:>4} {:>12.0} {:>14.3} {:>10.3} {:>10.3} {:>10.3} {:>9} {:>9}",
                t,
                kind.name(),
                sli.name(),
                r.tps,
                r.per_txn_upper_ops,
                r.per_txn_contended,
                r.per_txn_cas,
                r.used,
                on_off,
                vs_first
            );
        }
    }
}
