//! `heirloom figures`: the papers' evaluations, regenerated on this machine
//! and set against what each paper reported.
//!
//! A [`Figure`] names the paper's figure, says what the paper measured and
//! found (with its numbers, from `shared/papers/`), lists the sweeps that
//! measure the same thing here ([`Part`]s: a [`Spec`] each, quick or full),
//! and reads the runs: the series to draw, the same numbers read off ours,
//! and a verdict computed by a stated rule ([`Reading`]). Nothing in a
//! verdict is written by hand: the rule is code, and its text is printed
//! beside the verdict.
//!
//! [`FIGURES`] is the registry; a new figure is one entry there.

use std::path::Path;
use std::time::Duration;

use heirloom::{ConflictPolicy, TableKind};
use plotters::prelude::*;

use crate::report::{self, ReportError};
use crate::runner::{Retry, RunResult};
use crate::sweep::{ScaleArg, Spec};

/// How close a figure came to the paper's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The effect and its size (within the rule's bounds).
    Reproduced,
    /// The effect's direction, but not its size.
    Direction,
    /// Not even the direction.
    NotReproduced,
}

impl Verdict {
    /// The verdict as the report words it.
    pub fn text(&self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Direction => "direction reproduced, size differs",
            Verdict::NotReproduced => "not reproduced",
        }
    }
}

/// One sweep of a figure, with the label its runs are filed under.
pub struct Part {
    /// The label (`"tpcb"`, `"span 10"`, `"batch 100"`...).
    pub label: String,
    /// What to run.
    pub spec: Spec,
}

/// A line to draw: label and (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// The runs of a figure: each part's label and its runs.
pub type Measured = [(String, Vec<RunResult>)];

/// An own figure's driver: `quick`, progress in milliseconds; the reading
/// and the samples.
pub type Driver = fn(quick: bool, progress: &mut dyn FnMut(u64)) -> (Reading, Vec<IndexSample>);

/// One chart of a figure.
pub struct Chart {
    /// File name suffix (`""` for the figure's main chart).
    pub suffix: &'static str,
    /// Title.
    pub title: String,
    /// X axis.
    pub x_desc: &'static str,
    /// Y axis.
    pub y_desc: &'static str,
    /// Lines (or, with `categories`, groups of bars).
    pub series: Vec<Series>,
    /// Names of the x positions 1, 2, ...: the chart is then grouped bars,
    /// one group per category, one bar per series.
    pub categories: Vec<String>,
}

/// What a figure's runs say.
pub struct Reading {
    /// The charts to draw.
    pub charts: Vec<Chart>,
    /// The paper's numbers as read off ours, in a sentence or two.
    pub ours: String,
    /// The verdict, by the figure's rule.
    pub verdict: Verdict,
}

/// A figure of one of the papers (or of our own evaluation).
pub struct Figure {
    /// File name and `--only` name, after the paper's own figure number.
    pub name: &'static str,
    /// Paper and figure.
    pub source: &'static str,
    /// What the paper measured, its setting and its result, with numbers.
    pub paper: &'static str,
    /// The rule that computes the verdict.
    pub rule: &'static str,
    /// The sweeps (`quick`: the CI's tiny version).
    pub parts: fn(quick: bool) -> Vec<Part>,
    /// Reads the runs of each part (in the order of `parts`).
    pub read: fn(&Measured) -> Reading,
    /// A figure measured by its own driver instead of sweeps (`parts` is
    /// then empty and `read` unused).
    pub own: Option<Own>,
}

/// A figure's own measurement: an estimate of its time, and the driver,
/// which reports progress in milliseconds and returns the reading and its
/// samples.
#[derive(Clone, Copy)]
pub struct Own {
    /// Milliseconds it will take (`quick` or full).
    pub estimate_ms: fn(quick: bool) -> u64,
    /// Measures.
    pub run: Driver,
}

/// One cell of the index figure (the raw data of its JSON and CSV).
#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexSample {
    /// `global-rw`, `coupling`, `spin`, `optimistic`, or `none` (a frozen
    /// tree: no latch, no version check; read-only cells only).
    pub protocol: &'static str,
    /// Threads.
    pub threads: usize,
    /// Share of operations that insert, in percent.
    pub inserts_pct: u32,
    /// Operations per second (median of the repeats).
    pub ops_per_s: f64,
}

/// Every figure, in report order.
pub const FIGURES: &[Figure] = &[
    Figure {
        name: "sli-fig1",
        source: "Speculative lock inheritance (VLDB 2009), Figure 1 (and 6, 7)",
        paper: "Fraction of CPU time inside the lock manager as load grows, NDBB (TM1) and others on Shore-MT, 64 hardware contexts: it grows with load, and at peak the lock manager takes 10-20% of the time (up to the largest share for the shortest transactions, NDBB).",
        rule: "reproduced if the lock manager's share (lock calls and latch contention, `--breakdown`) at the most threads is at least 10% and at least 1.2x its one-thread share; direction if it only grows; else not reproduced",
        parts: |q| {
            vec![Part {
                label: "tm1".into(),
                spec: shore(Spec {
                    breakdown: true,
                    ..tm1(q, &[1, 2, 4, 8, 16, 32], &[TableKind::Latched], &[false])
                }),
            }]
        },
        read: read_lm_share,
        own: None,
    },
    Figure {
        name: "sli-fig11-tm1",
        source: "Speculative lock inheritance (VLDB 2009), Figures 9-11",
        paper: "TM1 (NDBB) throughput with and without SLI on Shore-MT as load grows: SLI improves throughput 10-40% on the short transactions and never reduces it.",
        rule: "the ratio SLI on / off at the most threads: reproduced if at least 1.10, direction if above 1.02, else not reproduced",
        parts: |q| {
            vec![Part {
                label: "tm1".into(),
                spec: shore(tm1(q, &[1, 2, 8, 32], &[TableKind::Latched], &[false, true])),
            }]
        },
        read: read_sli_tm1,
        own: None,
    },
    Figure {
        name: "sli-fig11-tpcb-tpcc",
        source: "Speculative lock inheritance (VLDB 2009), Figure 11 (TPC-B, TPC-C)",
        paper: "SLI's speedup by workload: TPC-B (one short transaction on all four tables) gains; the large TPC-C transactions, which amortise their table locks, are virtually unchanged.",
        rule: "on/off ratio at the most threads: reproduced if TPC-B's is at least 1.05 and above TPC-C's; direction if TPC-B's is above TPC-C's; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[2, 8] } else { &[2, 8, 32] };
            vec![
                Part {
                    label: "tpcb".into(),
                    spec: shore(tpcb(q, threads, &[TableKind::Latched], &[false, true])),
                },
                Part {
                    label: "tpcc".into(),
                    spec: shore(tpcc(q, threads, &[TableKind::Latched], &[false, true])),
                },
            ]
        },
        read: read_sli_ratio,
        own: None,
    },
    Figure {
        name: "sli-fig8-9",
        source: "Speculative lock inheritance (VLDB 2009), Figures 8 and 9",
        paper: "Lock requests by class per transaction (heritable: above row level and shared; hot: contended), and what became of the locks SLI passed on: the smallest transactions (NDBB) acquire few locks, most of them heritable and many hot; larger ones (TPC-C) acquire more, and their hot heritable locks do not grow with them; there are very few hot non-heritable locks.",
        rule: "from the lock-table requests of runs without SLI (`--breakdown` classifies them): reproduced if TM1's heritable share is at least 0.5 and above TPC-C's, and hot non-heritable requests are at most 10% of each workload's; direction if TM1's heritable share is above TPC-C's; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[2] } else { &[8] };
            vec![
                Part {
                    label: "tm1".into(),
                    spec: shore(Spec {
                        breakdown: true,
                        ..tm1(q, threads, &[TableKind::Latched], &[false, true])
                    }),
                },
                Part {
                    label: "tpcb".into(),
                    spec: shore(Spec {
                        breakdown: true,
                        ..tpcb(q, threads, &[TableKind::Latched], &[false, true])
                    }),
                },
                Part {
                    label: "tpcc".into(),
                    spec: shore(Spec {
                        breakdown: true,
                        ..tpcc(q, threads, &[TableKind::Latched], &[false, true])
                    }),
                },
            ]
        },
        read: read_classes,
        own: None,
    },
    Figure {
        name: "1995-fig4",
        source: "Shared-memory vs message-passing locking (1995), Figure 4",
        paper: "Cost of acquiring a hot lock (every process asks S on one record) and of a null critical section, SML (shared memory, a latch) against MPL (a lock-server process, IPC), 1-32 processes on a KSR1: SML is cheaper at every level of contention, by almost an order of magnitude under high contention.",
        rule: "server (MPL) cost over latched (SML) cost per operation: reproduced if above 1 at every thread count and at least 5 at the most threads; direction if above 1 at every thread count; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[1, 2, 8] } else { &[1, 2, 4, 8, 16, 32] };
            let kinds = [TableKind::Latched, TableKind::Server { partitions: 1 }];
            vec![
                Part {
                    label: "hot lock".into(),
                    spec: Spec {
                        workload: "hotlock".into(),
                        ..base(q, threads, &kinds, &[false])
                    },
                },
                Part {
                    label: "null section".into(),
                    spec: Spec {
                        workload: "nullcs".into(),
                        ..base(q, threads, &kinds, &[false])
                    },
                },
            ]
        },
        read: read_sml_mpl,
        own: None,
    },
    Figure {
        name: "1995-fig5",
        source: "Shared-memory vs message-passing locking (1995), Figure 5",
        paper: "Acquiring batches of 10 and 100 locks, MPL sending each batch in one message, SML one lock at a time: with 10 locks the two cost about the same up to 4 processes and SML wins above; with 100 locks MPL wins at 2 and 4 processes and SML from 8.",
        rule: "server over latched cost per lock: reproduced if batches of 100 bring the server closer than batches of 10 at two threads and the latched table is cheaper at the most threads for both; direction if only the first holds; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[1, 2, 8] } else { &[1, 2, 4, 8, 16, 32] };
            let kinds = [TableKind::Latched, TableKind::Server { partitions: 1 }];
            [10u64, 100]
                .iter()
                .map(|&n| Part {
                    label: format!("batch {n}"),
                    spec: Spec {
                        workload: "batch".into(),
                        scale: Some(ScaleArg::Total(n)),
                        ..base(q, threads, &kinds, &[false])
                    },
                })
                .collect()
        },
        read: read_batches,
        own: None,
    },
    Figure {
        name: "slides-range",
        source: "A scalable lock manager for multicores (slides), read-only range",
        paper: "Read-only range scans (S on every row of a range of 10 or 100 keys, IS above) as threads grow on 32+ cores: the latched lock table collapses on the hot intention locks, the latch-free one (read-after-write lock lists) keeps scaling.",
        rule: "latchfree / latched throughput: reproduced if at least 1.0 at every thread count above one for both spans; direction if at least 1.0 at two threads for both; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[1, 2, 8] } else { &[1, 2, 8, 32] };
            [10, 100]
                .iter()
                .map(|&span| Part {
                    label: format!("span {span}"),
                    spec: Spec {
                        workload: "range".into(),
                        scale: Some(ScaleArg::Total(if q { 2000 } else { 100_000 })),
                        options: vec![("span".into(), span.to_string())],
                        ..base(q, threads, &every_kind(), &[false])
                    },
                })
                .collect()
        },
        read: read_range,
        own: None,
    },
    Figure {
        name: "slides-hotspot",
        source: "A scalable lock manager for multicores (slides), 20% updates on a hot spot",
        paper: "20% updates on a hot spot beside read-only ranges: what degrades the latch-free table is lock conflicts, not latches, where the latched table loses time to latch contention.",
        rule: "at the most threads, with `--breakdown`: reproduced if the latch-free table spends no time in latch contention (under 0.5%), more in lock waits than in latches, and the latched table does lose time to latches (over 1%); direction if only the first two hold; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[2, 8] } else { &[2, 8, 32] };
            vec![Part {
                label: "hotspot".into(),
                spec: Spec {
                    workload: "hotspot".into(),
                    scale: Some(ScaleArg::Total(if q { 2000 } else { 100_000 })),
                    breakdown: true,
                    ..base(q, threads, &[TableKind::Latched, TableKind::LatchFree], &[false])
                },
            }]
        },
        read: read_hotspot,
        own: None,
    },
    Figure {
        name: "picotm-steps",
        source: "picotm, \"Scaling lock performance\" (blog post), its four steps",
        paper: "A 1 KiB buffer, 50 loads then 50 stores per transaction: (1) exclusive locks collapse as transactions are added, up to 4 million restarts/s; (2) reader/writer locks cut restarts 10-15x but do not raise commits; (3) exclusive mode after a few restarts cuts restarts 10x and raises commits 10x (to 20k/s); (4) waiting with a timeout cuts restarts 8x more but costs commits.",
        rule: "the four directions at the most threads — rw cuts restarts against x; rw does not raise commits 2x; exclusive mode raises commits and cuts restarts against rw; waiting cuts restarts and lowers commits against exclusive mode: reproduced if all four hold, direction if three, else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[2, 8] } else { &[2, 8, 32] };
            let tm = |locks: &str, policy: ConflictPolicy, excl: u32| Spec {
                workload: "tm".into(),
                options: vec![("locks".into(), locks.into())],
                policies: vec![policy],
                exclusive_after: vec![excl],
                retry: Retry::Now,
                ..base(q, threads, &[TableKind::Latched], &[false])
            };
            vec![
                Part {
                    label: "1 exclusive locks".into(),
                    spec: tm("x", ConflictPolicy::NoWait, u32::MAX),
                },
                Part {
                    label: "2 reader/writer locks".into(),
                    spec: tm("rw", ConflictPolicy::NoWait, u32::MAX),
                },
                Part {
                    label: "3 + exclusive mode".into(),
                    spec: tm("rw", ConflictPolicy::NoWait, 10),
                },
                Part {
                    label: "4 + waiting".into(),
                    spec: tm("rw", ConflictPolicy::Timeout(Duration::from_millis(1)), 10),
                },
            ]
        },
        read: read_picotm,
        own: None,
    },
    Figure {
        name: "ours-oversubscription",
        source: "heirloom: oversubscription on this machine",
        paper: "Not a paper's figure: our own claim that a lock manager must not collapse when threads outnumber cores (a preempted latch holder stalls everyone behind it). TM1, every table kind, 1-64 threads, relative to 2 threads.",
        rule: "throughput at the most threads over throughput at 2: reproduced if at least 0.7 for every table kind; direction if for the best kind; else not reproduced",
        parts: |q| {
            let threads: &[usize] = if q { &[1, 2, 8, 32] } else { &[1, 2, 4, 8, 16, 32, 64] };
            vec![Part {
                label: "tm1".into(),
                spec: tm1(q, threads, &every_kind(), &[false]),
            }]
        },
        read: read_oversubscription,
        own: None,
    },
    Figure {
        name: "ours-side-by-side",
        source: "heirloom: every table kind on every workload",
        paper: "Not a paper's figure: every lock table kind on TM1, TPC-B, TPC-C and YCSB at 2 and 8 threads, SLI off. Our claim: the latch-free table is at least as fast as the latched one.",
        rule: "latchfree / latched at 8 threads: reproduced if at least 1.0 on every workload; direction if on at least half; else not reproduced",
        parts: |q| {
            let threads: &[usize] = &[2, 8];
            let kinds = every_kind();
            vec![
                Part {
                    label: "tm1".into(),
                    spec: tm1(q, threads, &kinds, &[false]),
                },
                Part {
                    label: "tpcb".into(),
                    spec: tpcb(q, threads, &kinds, &[false]),
                },
                Part {
                    label: "tpcc".into(),
                    spec: tpcc(q, threads, &kinds, &[false]),
                },
                Part {
                    label: "ycsb".into(),
                    spec: Spec {
                        workload: "ycsb".into(),
                        scale: Some(ScaleArg::Total(if q { 20_000 } else { 1_000_000 })),
                        options: vec![("theta".into(), "0.9".into())],
                        ..base(q, threads, &kinds, &[false])
                    },
                },
            ]
        },
        read: read_side_by_side,
        own: None,
    },
    Figure {
        name: "tsx-index",
        source: "Lock elision for in-memory indexes with Intel TSX (HPCA 2014), B+tree results",
        paper: "A B+tree under point lookups with 0-50% inserts on a 4-core Haswell: lock elision outperforms the reader/writer lock on read-only queries, with gains growing with inserts (6x at 50%); the no-concurrency-control line is the ceiling. Here optimistic lock coupling is the software form of elision.",
        rule: "optimistic / global-rw at the most threads: reproduced if at least 1.0 at every insert share and at least 3 at 50% inserts; direction if it is larger at 50% inserts than read-only and at least 1.0 there; else not reproduced",
        parts: |_| Vec::new(),
        read: |_| Reading {
            charts: Vec::new(),
            ours: "measured by its own driver".into(),
            verdict: Verdict::NotReproduced,
        },
        own: Some(Own {
            estimate_ms: |q| index_cells(q).len() as u64 * index_ms(q),
            run: run_index,
        }),
    },
];

/// The index figure's cells: (protocol, threads, insert share).
fn index_cells(quick: bool) -> Vec<(&'static str, usize, u32)> {
    let threads: &[usize] = if quick { &[1, 2] } else { &[1, 2, 4, 8] };
    let inserts: &[u32] = if quick { &[0, 50] } else { &[0, 5, 10, 50] };
    let mut v = Vec::new();
    for &pct in inserts {
        for &t in threads {
            for p in ["global-rw", "coupling", "spin", "optimistic", "none"] {
                if p != "none" || pct == 0 {
                    v.push((p, t, pct));
                }
            }
        }
    }
    v
}

/// Milliseconds per index cell (all repeats).
fn index_ms(quick: bool) -> u64 {
    if quick { 50 } else { 3 * 1000 }
}

/// Key `i` of the preloaded set (splitmix64's finaliser: a bijection).
fn index_key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Operations per second of `threads` workers for `d`: inserts of fresh
/// random keys with probability `pct`%, else lookups of preloaded keys
/// (`keys` of them), as `cargo bench -p heirloom-btree --bench index` does.
fn index_drive<G, I>(keys: u64, threads: usize, pct: u32, d: Duration, seed: u64, get: G, insert: I) -> f64
where
    G: Fn(u64) -> Option<u64> + Sync,
    I: Fn(u64, u64) -> bool + Sync,
{
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = AtomicBool::new(false);
    let barrier = std::sync::Barrier::new(threads + 1);
    let (ops, el) = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (get, insert, stop, barrier) = (&get, &insert, &stop, &barrier);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed ^ ((t as u64 + 1) * 0x1000_0001));
                    let (mut ops, mut found) = (0u64, 0u64);
                    barrier.wait();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            if rng.random_range(0..100) < pct {
                                insert(rng.random::<u64>(), ops);
                            } else {
                                found += get(index_key(rng.random_range(0..keys))).is_some() as u64;
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
        let t0 = std::time::Instant::now();
        std::thread::sleep(d);
        stop.store(true, Ordering::Relaxed);
        let ops: u64 = hs.into_iter().map(|h| h.join().unwrap_or(0)).sum();
        (ops, t0.elapsed())
    });
    ops as f64 / el.as_secs_f64()
}

fn index_cell<P: heirloom_btree::Protocol>(keys: u64, threads: usize, pct: u32, d: Duration, seed: u64) -> f64 {
    let tree = heirloom_btree::BTree::<P>::new();
    for i in 0..keys {
        tree.insert(index_key(i), i);
    }
    index_drive(keys, threads, pct, d, seed, |k| tree.get(k), |k, v| tree.insert(k, v))
}

fn index_none(keys: u64, threads: usize, d: Duration, seed: u64) -> f64 {
    let mut tree = heirloom_btree::BTree::<heirloom_btree::Optimistic>::new();
    for i in 0..keys {
        tree.insert(index_key(i), i);
    }
    let frozen = tree.freeze();
    index_drive(keys, threads, 0, d, seed, |k| frozen.get(k), |_, _| false)
}

fn run_index(quick: bool, progress: &mut dyn FnMut(u64)) -> (Reading, Vec<IndexSample>) {
    use heirloom_btree::{Coupling, GlobalRw, Optimistic, Spin};
    let keys: u64 = if quick { 20_000 } else { 1_000_000 };
    let (repeat, d) = if quick {
        (1, Duration::from_millis(50))
    } else {
        (3, Duration::from_secs(1))
    };
    let mut samples = Vec::new();
    let mut seed = 1;
    for (p, t, pct) in index_cells(quick) {
        let mut xs: Vec<f64> = (0..repeat)
            .map(|_| {
                seed += 1;
                match p {
                    "global-rw" => index_cell::<GlobalRw>(keys, t, pct, d, seed),
                    "coupling" => index_cell::<Coupling>(keys, t, pct, d, seed),
                    "spin" => index_cell::<Spin>(keys, t, pct, d, seed),
                    "optimistic" => index_cell::<Optimistic>(keys, t, pct, d, seed),
                    _ => index_none(keys, t, d, seed),
                }
            })
            .collect();
        xs.sort_by(f64::total_cmp);
        progress(index_ms(quick));
        samples.push(IndexSample {
            protocol: p,
            threads: t,
            inserts_pct: pct,
            ops_per_s: xs[xs.len() / 2],
        });
    }
    (read_index(&samples), samples)
}

fn read_index(samples: &[IndexSample]) -> Reading {
    let most = samples.iter().map(|s| s.threads).max().unwrap_or(1);
    let mut shares: Vec<u32> = samples.iter().map(|s| s.inserts_pct).collect();
    shares.sort_unstable();
    shares.dedup();
    let ops = |p: &str, t: usize, pct: u32| {
        samples
            .iter()
            .find(|s| s.protocol == p && s.threads == t && s.inserts_pct == pct)
            .map_or(f64::NAN, |s| s.ops_per_s)
    };
    let rel: Vec<(u32, f64)> = shares
        .iter()
        .map(|&pct| (pct, ratio(ops("optimistic", most, pct), ops("global-rw", most, pct))))
        .collect();
    let first = rel.first().map_or(f64::NAN, |x| x.1);
    let at50 = rel.iter().find(|x| x.0 == 50).map_or(f64::NAN, |x| x.1);
    let verdict = if rel.iter().all(|x| x.1 >= 1.0) && at50 >= 3.0 {
        Verdict::Reproduced
    } else if at50 > first && at50 >= 1.0 {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    let charts = shares
        .iter()
        .enumerate()
        .map(|(i, &pct)| {
            let mut series: Vec<Series> = Vec::new();
            for s in samples.iter().filter(|s| s.inserts_pct == pct) {
                add_point(&mut series, s.protocol, (s.threads as f64, s.ops_per_s));
            }
            Chart {
                suffix: ["", "-b", "-c", "-d"][i.min(3)],
                title: format!("B+tree, {pct}% inserts: every latching protocol"),
                x_desc: "threads",
                y_desc: "operations per second",
                series,
                categories: Vec::new(),
            }
        })
        .collect();
    Reading {
        charts,
        ours: format!(
            "optimistic / global-rw at {most} threads: {}{}.",
            rel.iter()
                .map(|(p, x)| format!("{x:.2}x at {p}% inserts"))
                .collect::<Vec<_>>()
                .join(", "),
            {
                let n = ops("none", most, 0);
                if n.is_finite() {
                    format!(
                        "; read-only, optimistic is {:.2} of no concurrency control",
                        ops("optimistic", most, 0) / n
                    )
                } else {
                    String::new()
                }
            }
        ),
        verdict,
    }
}

/// Figures the papers have that are not drawn yet, with the reason.
pub const MISSING: &[(&str, &str)] = &[];

fn every_kind() -> Vec<TableKind> {
    vec![
        TableKind::Global,
        TableKind::Latched,
        TableKind::LatchFree,
        TableKind::Server { partitions: 2 },
    ]
}

/// The SLI paper's figures run the lock manager it measured (Shore-MT's):
/// no intention-lock fast path, so that inheritance is what passes the hot
/// database and table intention locks on, with SLI on and off alike
/// (`heirloom::Builder::fast_path`).
fn shore(spec: Spec) -> Spec {
    Spec {
        fast_path: vec![false],
        ..spec
    }
}

/// The settings every sweep of the set shares: quick runs are tiny, full
/// ones one second, the median of three.
fn base(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        threads: threads.to_vec(),
        tables: tables.to_vec(),
        sli: sli.to_vec(),
        duration: Duration::from_millis(if quick { 100 } else { 1000 }),
        warmup: Duration::from_millis(if quick { 30 } else { 300 }),
        repeat: if quick { 1 } else { 3 },
        verify: true,
        ..Spec::default()
    }
}

fn tpcb(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        workload: "tpcb".into(),
        scale: Some(ScaleArg::Total(if quick { 2 } else { 8 })),
        options: vec![("accounts".into(), if quick { "1000" } else { "10000" }.into())],
        ..base(quick, threads, tables, sli)
    }
}

fn tpcc(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        workload: "tpcc".into(),
        scale: Some(ScaleArg::Total(if quick { 2 } else { 4 })),
        options: vec![("shrink".into(), if quick { "20" } else { "10" }.into())],
        ..base(quick, threads, tables, sli)
    }
}

fn tm1(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        workload: "tm1".into(),
        mix: Some("ndbb".into()),
        scale: Some(ScaleArg::Total(if quick { 2000 } else { 100_000 })),
        ..base(quick, threads, tables, sli)
    }
}

// ---- reading the runs ----

fn most_threads(runs: &[RunResult]) -> usize {
    runs.iter().map(|r| r.threads).max().unwrap_or(1)
}

fn find<'a>(runs: &'a [RunResult], table: &str, sli: bool, threads: usize) -> Option<&'a RunResult> {
    runs.iter()
        .find(|r| r.table == table && r.sli == sli && r.threads == threads)
}

/// Adds `p` to the series called `label`, starting it if it is new.
fn add_point(series: &mut Vec<Series>, label: &str, p: (f64, f64)) {
    match series.iter_mut().find(|s| s.0 == label) {
        Some(s) => s.1.push(p),
        None => series.push((label.to_string(), vec![p])),
    }
}

/// One series per `label` of a run: y of each run against threads.
fn series_by(runs: &[RunResult], label: impl Fn(&RunResult) -> String, y: impl Fn(&RunResult) -> f64) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in runs {
        add_point(&mut out, &label(r), (r.threads as f64, y(r)));
    }
    for s in &mut out {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

/// Throughput of `a` over `b`, two configurations of one sweep: the median
/// of the ratios round by round (`RunResult::tps_runs`, in run order), so
/// that a stretch in which this shared machine ran at half speed, which
/// hits a few configurations of one round, does not decide the ratio; the
/// ratio of the two medians when there are no rounds to pair.
fn paired(a: Option<&RunResult>, b: Option<&RunResult>) -> f64 {
    let (Some(a), Some(b)) = (a, b) else { return f64::NAN };
    if a.tps_runs.len() >= 2 && a.tps_runs.len() == b.tps_runs.len() {
        let mut rs: Vec<f64> = a.tps_runs.iter().zip(&b.tps_runs).map(|(x, y)| ratio(*x, *y)).collect();
        rs.sort_by(f64::total_cmp);
        return rs[rs.len() / 2];
    }
    ratio(a.tps, b.tps)
}

fn lm_share(r: &RunResult) -> f64 {
    r.breakdown.map_or(0.0, |b| b.lock_manager + b.latch_contention)
}

fn read_lm_share(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let one = find(runs, "latched", false, 1).map_or(0.0, lm_share);
    let top = find(runs, "latched", false, most).map_or(0.0, lm_share);
    let verdict = if top >= 0.10 && top >= 1.2 * one {
        Verdict::Reproduced
    } else if top > one {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "TM1: lock manager share of worker time (latched, SLI off)".into(),
            x_desc: "worker threads",
            y_desc: "% of worker time in the lock manager",
            series: vec![
                (
                    "lock calls and latch contention".into(),
                    series_by(runs, |_| String::new(), |r| 100.0 * lm_share(r))
                        .into_iter()
                        .flat_map(|s| s.1)
                        .collect(),
                ),
                (
                    "latch contention alone".into(),
                    series_by(
                        runs,
                        |_| String::new(),
                        |r| 100.0 * r.breakdown.map_or(0.0, |b| b.latch_contention),
                    )
                    .into_iter()
                    .flat_map(|s| s.1)
                    .collect(),
                ),
            ],
            categories: Vec::new(),
        }],
        ours: format!(
            "The lock manager's share of worker time is {:.1}% at one thread and {:.1}% at {most} threads (2 cores).",
            100.0 * one,
            100.0 * top
        ),
        verdict,
    }
}

fn tps_chart(title: String, runs: &[RunResult]) -> Chart {
    Chart {
        suffix: "",
        title,
        x_desc: "worker threads",
        y_desc: "committed transactions per second",
        series: series_by(runs, |r| format!("{} sli={}", r.table, r.sli_label()), |r| r.tps),
        categories: Vec::new(),
    }
}

fn read_sli_tm1(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let ratios: Vec<String> = thread_counts(runs)
        .iter()
        .map(|&n| format!("{:.2}x at {n}", on_off(runs, n)))
        .collect();
    let r = on_off(runs, most);
    let verdict = if r >= 1.10 {
        Verdict::Reproduced
    } else if r > 1.02 {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![tps_chart("TM1 (NDBB mix), latched table: SLI off and on".into(), runs)],
        ours: format!("SLI on / off: {} threads.", ratios.join(", ")),
        verdict,
    }
}

fn on_off(runs: &[RunResult], threads: usize) -> f64 {
    paired(
        find(runs, "latched", true, threads),
        find(runs, "latched", false, threads),
    )
}

fn read_sli_ratio(parts: &Measured) -> Reading {
    let mut series = Vec::new();
    let mut at_most = Vec::new();
    for (label, runs) in parts {
        let t = thread_counts(runs);
        series.push((label.clone(), t.iter().map(|&n| (n as f64, on_off(runs, n))).collect()));
        at_most.push((label.clone(), on_off(runs, most_threads(runs))));
    }
    let get = |l: &str| at_most.iter().find(|x| x.0 == l).map_or(f64::NAN, |x| x.1);
    let (b, c) = (get("tpcb"), get("tpcc"));
    let verdict = if b >= 1.05 && b > c {
        Verdict::Reproduced
    } else if b > c {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "SLI on / off throughput, latched table".into(),
            x_desc: "worker threads",
            y_desc: "throughput with SLI / without",
            series,
            categories: Vec::new(),
        }],
        ours: format!("SLI on / off at the most threads: TPC-B {b:.2}x, TPC-C {c:.2}x."),
        verdict,
    }
}

fn read_classes(parts: &Measured) -> Reading {
    // (label, heritable share, hot non-heritable share, requests) from the
    // SLI-off run; the outcomes from the SLI-on run.
    let mut shares = Vec::new();
    let mut class_series: Vec<Series> = Vec::new();
    let mut outcome_series: Vec<Series> = Vec::new();
    for (i, (label, runs)) in parts.iter().enumerate() {
        let x = (i + 1) as f64;
        let push = |series: &mut Vec<Series>, name: &str, y: f64| add_point(series, name, (x, y));
        if let Some(r) = runs.iter().find(|r| !r.sli) {
            let c = r.per_txn.classes;
            let heritable = c.high_shared_hot + c.high_shared_cold;
            let hot_other = c.high_exclusive_hot + c.row_shared_hot + c.row_exclusive_hot;
            let all = heritable
                + c.high_exclusive_hot
                + c.high_exclusive_cold
                + c.row_shared_hot
                + c.row_shared_cold
                + c.row_exclusive_hot
                + c.row_exclusive_cold;
            shares.push((label.clone(), ratio(heritable, all), ratio(hot_other, all), all));
            push(&mut class_series, "heritable, hot", c.high_shared_hot);
            push(&mut class_series, "heritable, cold", c.high_shared_cold);
            push(&mut class_series, "not heritable, hot", hot_other);
            push(
                &mut class_series,
                "not heritable, cold",
                c.high_exclusive_cold + c.row_shared_cold + c.row_exclusive_cold,
            );
        }
        if let Some(r) = runs.iter().find(|r| r.sli) {
            push(&mut outcome_series, "inherited and used", r.per_txn.inherited_used);
            push(
                &mut outcome_series,
                "inherited, not used",
                r.per_txn.inherited_discarded,
            );
            push(&mut outcome_series, "invalidated", r.per_txn.inherited_invalidated);
        }
    }
    let get = |l: &str| shares.iter().find(|s| s.0 == l).map_or(f64::NAN, |s| s.1);
    let (tm1, tpcc) = (get("tm1"), get("tpcc"));
    let few_hot_other = shares.iter().all(|s| s.2 <= 0.10);
    let verdict = if tm1 >= 0.5 && tm1 > tpcc && few_hot_other {
        Verdict::Reproduced
    } else if tm1 > tpcc {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    let names: Vec<String> = parts.iter().map(|p| p.0.clone()).collect();
    Reading {
        charts: vec![
            Chart {
                suffix: "",
                title: "Lock-table requests per transaction by class, SLI off".into(),
                x_desc: "workload",
                y_desc: "requests per transaction",
                series: class_series,
                categories: names.clone(),
            },
            Chart {
                suffix: "-outcomes",
                title: "What became of inherited locks, per transaction (SLI on)".into(),
                x_desc: "workload",
                y_desc: "locks per transaction",
                series: outcome_series,
                categories: names,
            },
        ],
        ours: shares
            .iter()
            .map(|(l, h, o, n)| {
                format!(
                    "{l}: {n:.1} lock-table requests per transaction, {:.0}% heritable, {:.1}% hot and not heritable",
                    100.0 * h,
                    100.0 * o
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
            + ".",
        verdict,
    }
}

fn op_ns(r: &RunResult) -> f64 {
    r.op.as_ref().map_or(f64::NAN, |o| o.ns)
}

fn mpl_over_sml(runs: &[RunResult], threads: usize) -> f64 {
    // Cost per operation is threads / operations per second, and
    // operations per transaction are fixed: the cost ratio is the inverse
    // throughput ratio, paired round by round.
    let by = |t: &str| runs.iter().find(|r| r.table.starts_with(t) && r.threads == threads);
    paired(by("latched"), by("server"))
}

fn thread_counts(runs: &[RunResult]) -> Vec<usize> {
    let mut t: Vec<usize> = runs.iter().map(|r| r.threads).collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn cost_chart(title: String, parts: &Measured) -> Chart {
    let mut series = Vec::new();
    for (label, runs) in parts {
        for s in series_by(
            runs,
            |r| {
                let who = if r.table.starts_with("server") {
                    "MPL (server)"
                } else {
                    "SML (latched)"
                };
                format!("{label}: {who}")
            },
            op_ns,
        ) {
            series.push(s);
        }
    }
    Chart {
        suffix: "",
        title,
        x_desc: "worker threads (processes)",
        y_desc: "ns per operation, as one thread sees it",
        series,
        categories: Vec::new(),
    }
}

fn read_sml_mpl(parts: &Measured) -> Reading {
    let mut all_above = true;
    let mut big = true;
    let mut words = Vec::new();
    for (label, runs) in parts {
        let t = thread_counts(runs);
        let rs: Vec<f64> = t.iter().map(|&n| mpl_over_sml(runs, n)).collect();
        all_above &= rs.iter().all(|&x| x > 1.0);
        big &= rs.last().is_some_and(|&x| x >= 5.0);
        words.push(format!(
            "{label}: the server costs {} the latched table",
            t.iter()
                .zip(&rs)
                .map(|(n, x)| format!("{x:.1}x at {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let verdict = match (all_above, big) {
        (true, true) => Verdict::Reproduced,
        (true, false) => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    Reading {
        charts: vec![cost_chart(
            "Hot lock and null critical section: SML against MPL".into(),
            parts,
        )],
        ours: words.join("; ") + ".",
        verdict,
    }
}

fn read_batches(parts: &Measured) -> Reading {
    let at = |label: &str, n: usize| {
        parts
            .iter()
            .find(|p| p.0 == label)
            .map_or(f64::NAN, |p| mpl_over_sml(&p.1, n))
    };
    let most = parts.iter().map(|p| most_threads(&p.1)).max().unwrap_or(1);
    let closer = at("batch 100", 2) < at("batch 10", 2);
    let sml_wins = at("batch 10", most) > 1.0 && at("batch 100", most) > 1.0;
    let verdict = match (closer, sml_wins) {
        (true, true) => Verdict::Reproduced,
        (true, false) => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    Reading {
        charts: vec![cost_chart("Batches of 10 and 100 locks: SML against MPL".into(), parts)],
        ours: format!(
            "Server over latched cost per lock at 2 threads: {:.2}x with batches of 10, {:.2}x with 100; at {most} threads {:.2}x and {:.2}x.",
            at("batch 10", 2),
            at("batch 100", 2),
            at("batch 10", most),
            at("batch 100", most)
        ),
        verdict,
    }
}

fn lf_over_l(runs: &[RunResult], threads: usize) -> f64 {
    paired(
        find(runs, "latchfree", false, threads),
        find(runs, "latched", false, threads),
    )
}

fn read_range(parts: &Measured) -> Reading {
    let mut every = true;
    let mut at_two = true;
    let mut words = Vec::new();
    let mut charts = Vec::new();
    for (i, (label, runs)) in parts.iter().enumerate() {
        let t = thread_counts(runs);
        let rs: Vec<(usize, f64)> = t.iter().filter(|&&n| n > 1).map(|&n| (n, lf_over_l(runs, n))).collect();
        every &= rs.iter().all(|x| x.1 >= 1.0);
        at_two &= rs.iter().find(|x| x.0 == 2).is_some_and(|x| x.1 >= 1.0);
        words.push(format!(
            "{label}: latchfree / latched {}",
            rs.iter()
                .map(|(n, x)| format!("{x:.2}x at {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let mut c = tps_chart(format!("Read-only range, {label}: every table kind"), runs);
        c.suffix = if i == 0 { "" } else { "-b" };
        c.series = series_by(runs, |r| r.table.clone(), |r| r.tps);
        charts.push(c);
    }
    let verdict = match (every, at_two) {
        (true, _) => Verdict::Reproduced,
        (false, true) => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    Reading {
        charts,
        ours: words.join("; ") + ".",
        verdict,
    }
}

fn read_hotspot(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let b = |t: &str| find(runs, t, false, most).and_then(|r| r.breakdown);
    let (lf, l) = (b("latchfree"), b("latched"));
    let lf_latch = lf.map_or(f64::NAN, |b| b.latch_contention);
    let lf_wait = lf.map_or(f64::NAN, |b| b.lock_wait);
    let l_latch = l.map_or(f64::NAN, |b| b.latch_contention);
    let first_two = lf_latch < 0.005 && lf_wait > lf_latch;
    let verdict = if first_two && l_latch > 0.01 {
        Verdict::Reproduced
    } else if first_two {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    let mut latch = series_by(
        runs,
        |r| format!("{}: latch contention", r.table),
        |r| 100.0 * r.breakdown.map_or(0.0, |b| b.latch_contention),
    );
    latch.extend(series_by(
        runs,
        |r| format!("{}: lock waits", r.table),
        |r| 100.0 * r.breakdown.map_or(0.0, |b| b.lock_wait),
    ));
    Reading {
        charts: vec![
            tps_chart("20% updates on a hot spot: throughput".into(), runs),
            Chart {
                suffix: "-breakdown",
                title: "20% updates on a hot spot: where the time goes".into(),
                x_desc: "worker threads",
                y_desc: "% of worker time",
                series: latch,
                categories: Vec::new(),
            },
        ],
        ours: format!(
            "At {most} threads the latch-free table spends {:.1}% of worker time in latch contention and {:.1}% waiting for locks; the latched table {:.1}% in latch contention.",
            100.0 * lf_latch,
            100.0 * lf_wait,
            100.0 * l_latch
        ),
        verdict,
    }
}

fn read_picotm(parts: &Measured) -> Reading {
    let most = parts.iter().map(|p| most_threads(&p.1)).max().unwrap_or(1);
    let at = |i: usize| {
        parts
            .get(i)
            .and_then(|p| p.1.iter().find(|r| r.threads == most))
            .map_or((f64::NAN, f64::NAN), |r| {
                (r.tps, r.restarts as f64 / r.seconds.max(1e-9))
            })
    };
    let (x, rw, excl, wait) = (at(0), at(1), at(2), at(3));
    let holds = [
        rw.1 < x.1,
        rw.0 < 2.0 * x.0.max(1.0),
        excl.0 > rw.0 && excl.1 < rw.1,
        wait.1 < excl.1 && wait.0 < excl.0,
    ];
    let n = holds.iter().filter(|&&h| h).count();
    let verdict = match n {
        4 => Verdict::Reproduced,
        3 => Verdict::Direction,
        _ => Verdict::NotReproduced,
    };
    let mut commits = Vec::new();
    let mut restarts = Vec::new();
    for (label, runs) in parts {
        commits.extend(series_by(runs, |_| label.clone(), |r| r.tps));
        restarts.extend(series_by(
            runs,
            |_| label.clone(),
            |r| r.restarts as f64 / r.seconds.max(1e-9),
        ));
    }
    Reading {
        charts: vec![
            Chart {
                suffix: "",
                title: "picotm's buffer: commits per second, by step".into(),
                x_desc: "worker threads",
                y_desc: "commits per second",
                series: commits,
                categories: Vec::new(),
            },
            Chart {
                suffix: "-restarts",
                title: "picotm's buffer: restarts per second, by step".into(),
                x_desc: "worker threads",
                y_desc: "restarts per second",
                series: restarts,
                categories: Vec::new(),
            },
        ],
        ours: format!(
            "At {most} threads, commits/s and restarts/s: exclusive locks {:.0} / {:.0}; reader/writer {:.0} / {:.0}; + exclusive mode {:.0} / {:.0}; + waiting {:.0} / {:.0}. Directions that hold: {n} of 4.",
            x.0, x.1, rw.0, rw.1, excl.0, excl.1, wait.0, wait.1
        ),
        verdict,
    }
}

fn read_oversubscription(parts: &Measured) -> Reading {
    let runs = &parts[0].1;
    let most = most_threads(runs);
    let mut tables: Vec<String> = runs.iter().map(|r| r.table.clone()).collect();
    tables.dedup();
    let rel = |t: &str, n: usize| paired(find(runs, t, false, n), find(runs, t, false, 2));
    let at_most: Vec<(String, f64)> = tables.iter().map(|t| (t.clone(), rel(t, most))).collect();
    let verdict = if at_most.iter().all(|x| x.1 >= 0.7) {
        Verdict::Reproduced
    } else if at_most.iter().any(|x| x.1 >= 0.7) {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "TM1: throughput relative to 2 threads, every table kind (2 cores)".into(),
            x_desc: "worker threads",
            y_desc: "throughput / throughput at 2 threads",
            series: series_by(runs, |r| r.table.clone(), |r| rel(&r.table, r.threads)),
            categories: Vec::new(),
        }],
        ours: format!(
            "At {most} threads, relative to 2: {}.",
            at_most
                .iter()
                .map(|(t, x)| format!("{t} {x:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        verdict,
    }
}

fn read_side_by_side(parts: &Measured) -> Reading {
    let rs: Vec<(String, f64)> = parts.iter().map(|(l, runs)| (l.clone(), lf_over_l(runs, 8))).collect();
    let wins = rs.iter().filter(|x| x.1 >= 1.0).count();
    let verdict = if wins == rs.len() {
        Verdict::Reproduced
    } else if 2 * wins >= rs.len() {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    // One line per table kind: its throughput relative to latched, by
    // workload (x: the workload's number).
    let mut series: Vec<Series> = Vec::new();
    for (i, (_, runs)) in parts.iter().enumerate() {
        for r in runs.iter().filter(|r| r.threads == 8) {
            let p = ((i + 1) as f64, paired(Some(r), find(runs, "latched", false, 8)));
            add_point(&mut series, &r.table, p);
        }
    }
    Reading {
        charts: vec![Chart {
            suffix: "",
            title: "Every table kind at 8 threads, relative to latched".into(),
            x_desc: "workload",
            y_desc: "throughput / latched",
            series,
            categories: parts.iter().map(|p| p.0.clone()).collect(),
        }],
        ours: format!(
            "latchfree / latched at 8 threads: {}.",
            rs.iter()
                .map(|(l, x)| format!("{l} {x:.2}x"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        verdict,
    }
}

// ---- drawing ----

/// Draws `chart` to `path` (.png or .svg).
pub fn draw(path: &Path, chart: &Chart) -> Result<(), ReportError> {
    let name = path.display().to_string();
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => draw_on(SVGBackend::new(path, (900, 560)).into_drawing_area(), chart, &name),
        Some("png") => draw_on(BitMapBackend::new(path, (900, 560)).into_drawing_area(), chart, &name),
        _ => Err(ReportError::PlotKind(name)),
    }
}

fn draw_on<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    chart: &Chart,
    path: &str,
) -> Result<(), ReportError> {
    report::register_font();
    let err = |e: &dyn std::fmt::Display| ReportError::Plot {
        path: path.to_string(),
        message: e.to_string(),
    };
    let finite = || chart.series.iter().flat_map(|s| s.1.iter()).filter(|p| p.1.is_finite());
    let bars = !chart.categories.is_empty();
    let max_x = if bars {
        chart.categories.len() as f64 + 0.5
    } else {
        finite().map(|p| p.0).fold(1.0, f64::max) * 1.05 + 0.5
    };
    let max_y = finite().map(|p| p.1).fold(0.0, f64::max).max(1e-9);
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(if bars { 0.5 } else { 0.0 }..max_x, 0.0..max_y * 1.15)
        .map_err(|e| err(&e))?;
    let categories = &chart.categories;
    c.configure_mesh()
        .x_desc(chart.x_desc)
        .y_desc(chart.y_desc)
        .x_labels(if bars { categories.len() } else { 10 })
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() > 1e-6 {
                String::new()
            } else if bars {
                let i = v.round() as usize;
                categories.get(i.wrapping_sub(1)).cloned().unwrap_or_default()
            } else {
                format!("{v:.0}")
            }
        })
        .y_label_formatter(&|v| {
            if *v == 0.0 {
                "0".to_string()
            } else if *v >= 1e6 {
                format!("{:.1}M", v / 1e6)
            } else if *v >= 1e4 {
                format!("{:.0}k", v / 1e3)
            } else if *v >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .light_line_style(WHITE)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    let n = chart.series.len().max(1) as f64;
    for (i, (label, pts)) in chart.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.1.is_finite()).collect();
        if bars {
            // Each category's group of bars, this series in slot `i`.
            let w = 0.8 / n;
            let left = |x: f64| x - 0.4 + w * i as f64;
            c.draw_series(
                pts.iter()
                    .map(|&(x, y)| Rectangle::new([(left(x), 0.0), (left(x) + w * 0.9, y)], color.filled())),
            )
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
            continue;
        }
        c.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        c.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(|e| err(&e))?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

// ---- the report ----

/// A figure, measured and read.
pub struct Done<'a> {
    /// The figure.
    pub figure: &'a Figure,
    /// What its runs say.
    pub reading: Reading,
    /// Image files written (PNG names, beside the report).
    pub images: Vec<String>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `report.md`.
pub fn markdown(done: &[Done<'_>], header: &str) -> String {
    let mut s = format!("# heirloom figures\n\n{header}\n\n| figure | verdict |\n|---|---|\n");
    for d in done {
        s += &format!("| {} | {} |\n", d.figure.name, d.reading.verdict.text());
    }
    for (name, why) in MISSING {
        s += &format!("| {name} | not drawn: {why} |\n");
    }
    for d in done {
        let f = d.figure;
        s += &format!("\n## {}\n\n*{}*\n\n", f.name, f.source);
        s += &format!("**The paper.** {}\n\n", f.paper);
        for img in &d.images {
            s += &format!("![{}]({img})\n\n", f.name);
        }
        s += &format!("**Here.** {}\n\n", d.reading.ours);
        s += &format!("**Verdict: {}.** Rule: {}.\n", d.reading.verdict.text(), f.rule);
    }
    s
}

/// `report.html`: the same, self-contained (images beside it, no script).
pub fn html(done: &[Done<'_>], header: &str) -> String {
    let mut s = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>heirloom figures</title>\n\
         <style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}\
         img{max-width:100%}td,th{border:1px solid #ccc;padding:.2em .6em}table{border-collapse:collapse}\
         .reproduced{color:#075}.direction{color:#a60}.not{color:#b00}</style></head><body>\n",
    );
    s += &format!(
        "<h1>heirloom figures</h1>\n<p>{}</p>\n<table><tr><th>figure</th><th>verdict</th></tr>\n",
        esc(header)
    );
    let class = |v: Verdict| match v {
        Verdict::Reproduced => "reproduced",
        Verdict::Direction => "direction",
        Verdict::NotReproduced => "not",
    };
    for d in done {
        s += &format!(
            "<tr><td><a href=\"#{0}\">{0}</a></td><td class=\"{1}\">{2}</td></tr>\n",
            d.figure.name,
            class(d.reading.verdict),
            d.reading.verdict.text()
        );
    }
    for (name, why) in MISSING {
        s += &format!("<tr><td>{name}</td><td>not drawn: {}</td></tr>\n", esc(why));
    }
    s += "</table>\n";
    for d in done {
        let f = d.figure;
        s += &format!("<h2 id=\"{0}\">{0}</h2>\n<p><em>{1}</em></p>\n", f.name, esc(f.source));
        s += &format!("<p><b>The paper.</b> {}</p>\n", esc(f.paper));
        for img in &d.images {
            s += &format!("<p><img src=\"{img}\" alt=\"{}\"></p>\n", f.name);
        }
        s += &format!("<p><b>Here.</b> {}</p>\n", esc(&d.reading.ours));
        s += &format!(
            "<p class=\"{}\"><b>Verdict: {}.</b> Rule: {}.</p>\n",
            class(d.reading.verdict),
            d.reading.verdict.text(),
            esc(f.rule)
        );
    }
    s += "</body></html>\n";
    s
}

/// The figures `only` names (all when empty); an unknown name is an error.
pub fn select(only: &[String]) -> Result<Vec<&'static Figure>, String> {
    if only.is_empty() {
        return Ok(FIGURES.iter().collect());
    }
    only.iter()
        .map(|n| {
            FIGURES.iter().find(|f| f.name == n.trim()).ok_or_else(|| {
                let known: Vec<&str> = FIGURES.iter().map(|f| f.name).collect();
                format!("no figure {n:?} (known: {})", known.join(", "))
            })
        })
        .collect()
}

/// Writes an own figure's samples as JSON (`{"samples": [...]}`) and CSV.
pub fn write_samples(json: &Path, csv_path: &Path, samples: &[IndexSample]) -> Result<(), ReportError> {
    let io = |p: &Path, source: std::io::Error| ReportError::Io {
        path: p.display().to_string(),
        source,
    };
    let text =
        serde_json::to_string_pretty(&serde_json::json!({ "samples": samples })).map_err(|e| io(json, e.into()))?;
    std::fs::write(json, text + "\n").map_err(|e| io(json, e))?;
    let mut w = csv::Writer::from_path(csv_path).map_err(|source| ReportError::Csv {
        path: csv_path.display().to_string(),
        source,
    })?;
    for s in samples {
        w.serialize(s).map_err(|source| ReportError::Csv {
            path: csv_path.display().to_string(),
            source,
        })?;
    }
    w.flush().map_err(|e| io(csv_path, e))
}
