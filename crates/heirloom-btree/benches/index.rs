//! Index micro-benchmark (the TSX lock-elision paper's experiment): point
//! lookups mixed with a share of inserts, on a tree of `--keys` entries, for
//! every latching protocol at every thread count. Protocols run back to back
//! for each (insert share, threads) cell, so their ratios come from the same
//! minutes of a shared machine.
//!
//! ```text
//! cargo bench -p heirloom-btree --bench index -- [--keys 1000000] [--seconds 1]
//!     [--threads 1,2,8] [--inserts 0,5,10,50] [--repeat 1]
//! ```
//!
//! Prints operations per second, the ratio to `global-rw` from the same
//! cell, and (optimistic) failed validations and pessimistic fallbacks per
//! operation. With `--repeat N` each figure is the median of N runs.
//! Read-only cells (`--inserts 0`) also run `none`, the same lookups on a
//! frozen tree with no latch and no version check (the TSX paper's "no
//! concurrency control"), and show every protocol's share of it.

use heirloom_btree::{BTree, Coupling, GlobalRw, Optimistic, Protocol, Spin};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

struct Args {
    keys: u64,
    seconds: f64,
    threads: Vec<usize>,
    inserts: Vec<u32>,
    repeat: usize,
}

fn usage(msg: &str) -> ! {
    eprintln!("index: {msg}");
    eprintln!("usage: index [--keys N] [--seconds S] [--threads 1,2,8] [--inserts 0,5,10,50] [--repeat N]");
    std::process::exit(2);
}

fn list<T: std::str::FromStr>(flag: &str, s: &str) -> Vec<T> {
    let v: Vec<T> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse()
                .unwrap_or_else(|_| usage(&format!("{flag}: cannot read {x:?}")))
        })
        .collect();
    if v.is_empty() {
        usage(&format!("{flag}: empty list"));
    }
    v
}

fn parse() -> Args {
    let mut a = Args {
        keys: 1_000_000,
        seconds: 1.0,
        threads: vec![1, 2, 8],
        inserts: vec![0, 5, 10, 50],
        repeat: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--bench" {
            continue; // passed by `cargo bench`
        }
        let mut val = || it.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--keys" => a.keys = val().parse().unwrap_or_else(|_| usage("--keys: not a number")),
            "--seconds" => a.seconds = val().parse().unwrap_or_else(|_| usage("--seconds: not a number")),
            "--threads" => a.threads = list("--threads", &val()),
            "--inserts" => a.inserts = list("--inserts", &val()),
            "--repeat" => a.repeat = val().parse().unwrap_or_else(|_| usage("--repeat: not a number")),
            _ => usage(&format!("unknown argument {flag}")),
        }
    }
    if a.keys == 0 || !a.seconds.is_finite() || a.seconds <= 0.0 || a.repeat == 0 || a.threads.contains(&0) {
        usage("keys, seconds, repeat and thread counts must be positive");
    }
    if a.inserts.iter().any(|&p| p > 100) {
        usage("--inserts: percentages from 0 to 100");
    }
    a
}

/// A bijection on u64 (splitmix64's finaliser): key `i` of the preloaded set.
fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Sample {
    ops_per_sec: f64,
    restarts_per_op: f64,
    fallbacks_per_op: f64,
}

/// Preloads a tree with `args.keys` entries.
fn preload<P: Protocol>(args: &Args) -> BTree<P> {
    let tree = BTree::<P>::new();
    for i in 0..args.keys {
        tree.insert(key(i), i);
    }
    tree
}

/// Runs `threads` workers for `args.seconds`: each operation is an insert
/// of a fresh random key with probability `insert_pct`%, else a lookup of a
/// preloaded key. Returns the operations done and the time they took.
fn drive<G, I>(args: &Args, threads: usize, insert_pct: u32, seed: u64, get: G, insert: I) -> (u64, Duration)
where
    G: Fn(u64) -> Option<u64> + Sync,
    I: Fn(u64, u64) -> bool + Sync,
{
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (get, insert, stop, barrier) = (&get, &insert, &stop, &barrier);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed ^ ((t as u64 + 1) * 0x1000_0001));
                    let mut ops = 0u64;
                    let mut found = 0u64;
                    barrier.wait();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            if rng.random_range(0..100) < insert_pct {
                                // Fresh random keys: collisions with the
                                // preloaded set are rare and merely fail.
                                insert(rng.random::<u64>(), ops);
                            } else {
                                found += get(key(rng.random_range(0..args.keys))).is_some() as u64;
                            }
                        }
                        ops += 64;
                    }
                    std::hint::black_box(found);
                    ops
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(args.seconds));
        stop.store(true, Ordering::Relaxed);
        let ops: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        (ops, start.elapsed())
    })
}

fn run<P: Protocol>(args: &Args, threads: usize, insert_pct: u32, seed: u64) -> Sample {
    let tree = preload::<P>(args);
    let before = tree.stats();
    let (ops, elapsed) = drive(
        args,
        threads,
        insert_pct,
        seed,
        |k| tree.get(k),
        |k, v| tree.insert(k, v),
    );
    let st = tree.stats();
    let ops_f = ops.max(1) as f64;
    Sample {
        ops_per_sec: ops as f64 / elapsed.as_secs_f64(),
        restarts_per_op: (st.restarts - before.restarts) as f64 / ops_f,
        fallbacks_per_op: (st.fallbacks - before.fallbacks) as f64 / ops_f,
    }
}

/// The ceiling of a read-only cell: the same lookups on a frozen tree, with
/// no latch and no version check (`BTree::freeze`).
fn run_none(args: &Args, threads: usize, seed: u64) -> Sample {
    let mut tree = preload::<Optimistic>(args);
    let frozen = tree.freeze();
    let (ops, elapsed) = drive(
        args,
        threads,
        0,
        seed,
        |k| frozen.get(k),
        |_, _| unreachable!("read-only"),
    );
    Sample {
        ops_per_sec: ops as f64 / elapsed.as_secs_f64(),
        restarts_per_op: 0.0,
        fallbacks_per_op: 0.0,
    }
}

fn median(mut xs: Vec<Sample>) -> Sample {
    xs.sort_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
    let mid = xs.len() / 2;
    xs.swap_remove(mid)
}

/// Nanoseconds per `fetch_add` when two threads hammer one cache line and
/// when each has its own: what a reader/writer lock's shared-line writes
/// cost on this machine (if the two figures are close, the cores share a
/// cache and latch writes are nearly free here, unlike on a many-core box).
fn line_costs() -> (f64, f64) {
    use crossbeam_utils::CachePadded;
    use std::sync::atomic::AtomicU64;
    let lines: [CachePadded<AtomicU64>; 2] = Default::default();
    let measure = |shared: bool| {
        let n = 5_000_000u64;
        let start = Instant::now();
        std::thread::scope(|s| {
            for t in 0..2 {
                let line = if shared { &lines[0] } else { &lines[t] };
                s.spawn(move || {
                    for _ in 0..n {
                        line.fetch_add(1, Ordering::AcqRel);
                    }
                });
            }
        });
        start.elapsed().as_nanos() as f64 / n as f64
    };
    (measure(true), measure(false))
}

const PROTOCOLS: [&str; 4] = ["global-rw", "coupling", "spin", "optimistic"];

/// The row of a read-only cell that takes no latch at all (see `run_none`).
const NONE: &str = "none";

fn main() {
    let args = parse();
    println!(
        "# heirloom-btree index benchmark: {} keys, {} s per run, median of {}, lookups of present keys + inserts of fresh keys; {}",
        args.keys,
        args.seconds,
        args.repeat,
        heirloom_btree::machine::Machine::this().describe()
    );
    println!(
        "# read-only cells also run `none` (a frozen tree: no latch, no version check); `of none` is each protocol's share of it"
    );
    let (shared, private) = line_costs();
    println!("# 2 threads, fetch_add: {shared:.1} ns on one shared line, {private:.1} ns on private lines");
    println!(
        "{:>7} {:>7} {:>11} {:>12} {:>12} {:>8} {:>11} {:>12}",
        "inserts", "threads", "protocol", "ops/s", "vs global-rw", "of none", "restarts/op", "fallbacks/op"
    );
    let mut seed = 1;
    let mut summary = Vec::new();
    for &pct in &args.inserts {
        for &threads in &args.threads {
            let mut names: Vec<&str> = PROTOCOLS.to_vec();
            if pct == 0 {
                names.push(NONE);
            }
            let mut cell: Vec<(&str, Sample)> = Vec::new();
            for name in names {
                let samples = (0..args.repeat)
                    .map(|_| {
                        seed += 1;
                        match name {
                            "global-rw" => run::<GlobalRw>(&args, threads, pct, seed),
                            "coupling" => run::<Coupling>(&args, threads, pct, seed),
                            "spin" => run::<Spin>(&args, threads, pct, seed),
                            "optimistic" => run::<Optimistic>(&args, threads, pct, seed),
                            _ => run_none(&args, threads, seed),
                        }
                    })
                    .collect();
                cell.push((name, median(samples)));
            }
            let ops = |name: &str| cell.iter().find(|(n, _)| *n == name).map(|(_, s)| s.ops_per_sec);
            let base = ops("global-rw").unwrap_or(f64::NAN);
            let ceiling = ops(NONE);
            for (name, s) in &cell {
                let of_none = match ceiling {
                    Some(c) => format!("{:.2}", s.ops_per_sec / c),
                    None => "-".to_string(),
                };
                println!(
                    "{:>6}% {:>7} {:>11} {:>12.0} {:>11.2}x {:>8} {:>11.4} {:>12.5}",
                    pct,
                    threads,
                    name,
                    s.ops_per_sec,
                    s.ops_per_sec / base,
                    of_none,
                    s.restarts_per_op,
                    s.fallbacks_per_op
                );
            }
            let optimistic = ops("optimistic").unwrap_or(f64::NAN);
            summary.push((
                pct,
                threads,
                optimistic / ops("coupling").unwrap_or(f64::NAN),
                optimistic / base,
                ceiling.map(|c| optimistic / c),
            ));
        }
    }
    println!("\n# optimistic relative to coupling, to global-rw and (read-only cells) to none (same cell)");
    for (pct, threads, vs_coupling, vs_global, of_none) in summary {
        let of_none = of_none.map(|r| format!(", {r:.2} of none")).unwrap_or_default();
        println!(
            "{pct:>6}% inserts, {threads} threads: {vs_coupling:.2}x coupling, {vs_global:.2}x global-rw{of_none}"
        );
    }
}
