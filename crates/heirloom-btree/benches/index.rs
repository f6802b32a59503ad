//! Index micro-benchmark (the TSX lock-elision paper's experiment): point
//! lookups mixed with a share of inserts, on a tree of `--keys` entries, for
//! every latching protocol at every thread count. Protocols run back to back
//! for each (insert share, threads) cell, so their ratios come from the same
//! minutes of a shared machine.
//!
//! ```text
//! cargo bench -p heirloom-btree --bench index -- [--keys 1000000] [--seconds 1]
//!     [--threads 1,2,8] [--inserts 0,5,10,50] [--repeat 1]
//!     [--protocols global-rw,...] [--search binary|linear] [--alloc global|pools]
//!     [--json FILE]
//! ```
//!
//! Protocols: `global-rw`, `coupling`, `spin`, `optimistic`, and the RTM
//! elided tree-wide locks `elided-spin` and `elided-rw` (retry policy
//! `fixed`, the paper's fix) and `elided-spin-naive` and `elided-rw-naive`
//! (retry at once: the lemming effect). On a CPU without RTM the elided
//! protocols take their lock every time, and the header says so.
//!
//! Prints operations per second, the ratio to `global-rw` from the same
//! cell, failed attempts per operation (optimistic: failed validations;
//! elided: aborted transactions) and fallbacks per operation (optimistic:
//! pessimistic latching; elided: operations run under the lock). With
//! `--repeat N` each figure is the median of N runs. `--search` and
//! `--alloc` set the TSX paper's transformations (`transform`); `--json`
//! writes every row with the elided protocols' aborts by cause (a relative
//! path is taken from the crate's directory, where `cargo bench` runs the
//! bench; a path that cannot be written is refused before the runs).
//! Read-only cells (`--inserts 0`) also run `none`, the same lookups on a
//! frozen tree with no latch and no version check (the TSX paper's "no
//! concurrency control"), and show every protocol's share of it.

use heirloom_btree::{BTree, Coupling, ElidedRw, ElidedSpin, GlobalRw, Optimistic, Protocol, Retry, Spin};
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
    protocols: Vec<String>,
    json: Option<String>,
}

fn usage(msg: &str) -> ! {
    eprintln!("index: {msg}");
    eprintln!(
        "usage: index [--keys N] [--seconds S] [--threads 1,2,8] [--inserts 0,5,10,50] [--repeat N] [--protocols P,...] [--search binary|linear] [--alloc global|pools] [--json FILE]"
    );
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
        protocols: PROTOCOLS.iter().map(|s| s.to_string()).collect(),
        json: None,
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
            "--protocols" => {
                a.protocols = list("--protocols", &val());
                if let Some(p) = a.protocols.iter().find(|p| !PROTOCOLS.contains(&p.as_str())) {
                    usage(&format!(
                        "--protocols: unknown protocol {p:?} (known: {})",
                        PROTOCOLS.join(", ")
                    ));
                }
            }
            "--search" => match val().as_str() {
                "binary" => heirloom_btree::transform::set_linear_search(false),
                "linear" => heirloom_btree::transform::set_linear_search(true),
                x => usage(&format!("--search: {x:?} is not binary or linear")),
            },
            "--alloc" => match val().as_str() {
                "global" => heirloom_btree::transform::set_node_pools(false),
                "pools" => heirloom_btree::transform::set_node_pools(true),
                x => usage(&format!("--alloc: {x:?} is not global or pools")),
            },
            "--json" => a.json = Some(val()),
            _ => usage(&format!("unknown argument {flag}")),
        }
    }
    if a.keys == 0 || !a.seconds.is_finite() || a.seconds <= 0.0 || a.repeat == 0 || a.threads.contains(&0) {
        usage("keys, seconds, repeat and thread counts must be positive");
    }
    if a.inserts.iter().any(|&p| p > 100) {
        usage("--inserts: percentages from 0 to 100");
    }
    // A path that cannot be written fails now, not after the runs.
    if let Some(path) = &a.json
        && let Err(e) = std::fs::File::create(path)
    {
        usage(&format!("--json: cannot write {path}: {e}"));
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
    /// The elided protocols' counters over the run.
    elision: heirloom_btree::ElisionStats,
}

/// Preloads a tree with `args.keys` entries.
fn preload<P: Protocol>(args: &Args, retry: Retry) -> BTree<P> {
    let tree = BTree::<P>::with_retry(retry);
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

fn run<P: Protocol>(args: &Args, threads: usize, insert_pct: u32, seed: u64, retry: Retry) -> Sample {
    let tree = preload::<P>(args, retry);
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
    let elision = st.elision.since(&before.elision);
    Sample {
        ops_per_sec: ops as f64 / elapsed.as_secs_f64(),
        restarts_per_op: (st.restarts - before.restarts + elision.aborts()) as f64 / ops_f,
        fallbacks_per_op: (st.fallbacks - before.fallbacks + elision.fallbacks) as f64 / ops_f,
        elision,
    }
}

/// The ceiling of a read-only cell: the same lookups on a frozen tree, with
/// no latch and no version check (`BTree::freeze`).
fn run_none(args: &Args, threads: usize, seed: u64) -> Sample {
    let mut tree = preload::<Optimistic>(args, Retry::default());
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
        elision: Default::default(),
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

const PROTOCOLS: [&str; 8] = [
    "global-rw",
    "coupling",
    "spin",
    "optimistic",
    "elided-spin",
    "elided-spin-naive",
    "elided-rw",
    "elided-rw-naive",
];

/// The naive retry of the `-naive` rows: as many attempts as the fixed
/// policy's conflict retries plus one.
const NAIVE: Retry = Retry::Naive { attempts: 9 };

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
    println!(
        "# {}; node search {}, node allocation {}",
        heirloom_btree::rtm::describe(),
        if heirloom_btree::transform::linear_search() {
            "linear"
        } else {
            "binary"
        },
        if heirloom_btree::transform::node_pools() {
            "per-thread pools"
        } else {
            "global allocator"
        }
    );
    let (shared, private) = line_costs();
    println!("# 2 threads, fetch_add: {shared:.1} ns on one shared line, {private:.1} ns on private lines");
    println!(
        "{:>7} {:>7} {:>17} {:>12} {:>12} {:>8} {:>11} {:>12}",
        "inserts", "threads", "protocol", "ops/s", "vs global-rw", "of none", "restarts/op", "fallbacks/op"
    );
    let mut seed = 1;
    let mut summary = Vec::new();
    let mut rows = Vec::new();
    for &pct in &args.inserts {
        for &threads in &args.threads {
            let mut names: Vec<&str> = args.protocols.iter().map(String::as_str).collect();
            if pct == 0 {
                names.push(NONE);
            }
            let mut cell: Vec<(&str, Sample)> = Vec::new();
            for name in names {
                let samples = (0..args.repeat)
                    .map(|_| {
                        seed += 1;
                        match name {
                            "global-rw" => run::<GlobalRw>(&args, threads, pct, seed, Retry::default()),
                            "coupling" => run::<Coupling>(&args, threads, pct, seed, Retry::default()),
                            "spin" => run::<Spin>(&args, threads, pct, seed, Retry::default()),
                            "optimistic" => run::<Optimistic>(&args, threads, pct, seed, Retry::default()),
                            "elided-spin" => run::<ElidedSpin>(&args, threads, pct, seed, Retry::default()),
                            "elided-spin-naive" => run::<ElidedSpin>(&args, threads, pct, seed, NAIVE),
                            "elided-rw" => run::<ElidedRw>(&args, threads, pct, seed, Retry::default()),
                            "elided-rw-naive" => run::<ElidedRw>(&args, threads, pct, seed, NAIVE),
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
                    "{:>6}% {:>7} {:>17} {:>12.0} {:>11.2}x {:>8} {:>11.4} {:>12.5}",
                    pct,
                    threads,
                    name,
                    s.ops_per_sec,
                    s.ops_per_sec / base,
                    of_none,
                    s.restarts_per_op,
                    s.fallbacks_per_op
                );
                let e = &s.elision;
                rows.push(serde_json::json!({
                    "inserts_pct": pct,
                    "threads": threads,
                    "protocol": name,
                    "ops_per_s": s.ops_per_sec,
                    "vs_global_rw": s.ops_per_sec / base,
                    "restarts_per_op": s.restarts_per_op,
                    "fallbacks_per_op": s.fallbacks_per_op,
                    "elision": {
                        "rtm": e.rtm,
                        "commits": e.commits,
                        "aborts": {
                            "busy": e.busy, "conflict": e.conflict, "capacity": e.capacity,
                            "explicit": e.explicit, "injected": e.injected, "other": e.other,
                        },
                        "fallbacks": e.fallbacks,
                        "fallback_share": e.fallback_share(),
                    },
                }));
            }
            let share = |name: &str| {
                cell.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, s)| s.elision.fallback_share())
            };
            summary.push(Summary {
                pct,
                threads,
                optimistic: ops("optimistic").map(|o| (o / base, ceiling.map(|c| o / c))),
                elided: ops("elided-spin").map(|o| (o / base, ceiling.map(|c| o / c))),
                vs_optimistic: ops("elided-spin").zip(ops("optimistic")).map(|(e, o)| e / o),
                lemming: share("elided-spin-naive").zip(share("elided-spin")),
            });
        }
    }
    println!(
        "\n# relative to global-rw and (read-only cells) to none, same cell; lemming: share of operations under the lock, naive / fixed retry"
    );
    for x in summary {
        let rel = |name: &str, r: Option<(f64, Option<f64>)>| {
            r.map(|(g, n)| {
                let n = n.map(|n| format!(", {n:.2} of none")).unwrap_or_default();
                format!("{name} {g:.2}x global-rw{n}")
            })
        };
        let parts: Vec<String> = [
            rel("optimistic", x.optimistic),
            rel("elided-spin", x.elided),
            x.vs_optimistic.map(|r| format!("elided-spin {r:.2}x optimistic")),
            x.lemming
                .map(|(naive, fixed)| format!("lemming {naive:.3} / {fixed:.3}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        println!("{:>6}% inserts, {} threads: {}", x.pct, x.threads, parts.join("; "));
    }
    if let Some(path) = &args.json {
        let m = heirloom_btree::machine::Machine::this();
        let doc = serde_json::json!({
            "machine": m.describe(),
            "rtm": heirloom_btree::rtm::describe(),
            "keys": args.keys,
            "seconds": args.seconds,
            "repeat": args.repeat,
            "search": if heirloom_btree::transform::linear_search() { "linear" } else { "binary" },
            "alloc": if heirloom_btree::transform::node_pools() { "pools" } else { "global" },
            "rows": rows,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("index: cannot write {path}: {e}");
            std::process::exit(2);
        }
    }
}

/// One cell's line of the closing summary.
struct Summary {
    pct: u32,
    threads: usize,
    /// optimistic / global-rw, and of none (read-only cells).
    optimistic: Option<(f64, Option<f64>)>,
    /// elided-spin (fixed retry) / global-rw, and of none.
    elided: Option<(f64, Option<f64>)>,
    vs_optimistic: Option<f64>,
    /// The share of operations under the lock, naive and fixed retry.
    lemming: Option<(f64, f64)>,
}
