//! The index figure's own driver: the B+tree with each latching protocol
//! under a mix of lookups and inserts, cell by cell.

use super::rules::*;
use super::*;

/// The index figure's cells: (protocol, threads, insert share).
pub(super) fn index_cells(quick: bool) -> Vec<(&'static str, usize, u32)> {
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
pub(super) fn index_ms(quick: bool) -> u64 {
    if quick { 50 } else { 3 * 1000 }
}

/// Key `i` of the preloaded set (splitmix64's finaliser: a bijection).
pub(super) fn index_key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Operations per second of `threads` workers for `d`: inserts of fresh
/// random keys with probability `pct`%, else lookups of preloaded keys
/// (`keys` of them), as `cargo bench -p heirloom-btree --bench index` does.
pub(super) fn index_drive<G, I>(keys: u64, threads: usize, pct: u32, d: Duration, seed: u64, get: G, insert: I) -> f64
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

pub(super) fn index_cell<P: heirloom_btree::Protocol>(
    keys: u64,
    threads: usize,
    pct: u32,
    d: Duration,
    seed: u64,
) -> f64 {
    let tree = heirloom_btree::BTree::<P>::new();
    for i in 0..keys {
        tree.insert(index_key(i), i);
    }
    index_drive(keys, threads, pct, d, seed, |k| tree.get(k), |k, v| tree.insert(k, v))
}

pub(super) fn index_none(keys: u64, threads: usize, d: Duration, seed: u64) -> f64 {
    let mut tree = heirloom_btree::BTree::<heirloom_btree::Optimistic>::new();
    for i in 0..keys {
        tree.insert(index_key(i), i);
    }
    let frozen = tree.freeze();
    index_drive(keys, threads, 0, d, seed, |k| frozen.get(k), |_, _| false)
}

pub(super) fn run_index(quick: bool, progress: &mut dyn FnMut(u64)) -> (Reading, Vec<IndexSample>) {
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

/// tsx-index: the least optimistic / global-rw ratio at every insert share,
/// and at `INDEX_BIG_PCT`% inserts, for "reproduced".
const INDEX_MIN: f64 = 1.0;
const INDEX_BIG: f64 = 3.0;
const INDEX_BIG_PCT: u32 = 50;

pub(super) fn rule_index() -> String {
    format!(
        "optimistic / global-rw at the most threads: reproduced if at least {INDEX_MIN:.1} at every insert share and at least {INDEX_BIG} at {INDEX_BIG_PCT}% inserts; direction if it is larger at {INDEX_BIG_PCT}% inserts than read-only and at least {INDEX_MIN:.1} there; else not reproduced"
    )
}

pub(super) fn read_index(samples: &[IndexSample]) -> Reading {
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
    let at50 = rel.iter().find(|x| x.0 == INDEX_BIG_PCT).map_or(f64::NAN, |x| x.1);
    let verdict = if rel.iter().all(|x| x.1 >= INDEX_MIN) && at50 >= INDEX_BIG {
        Verdict::Reproduced
    } else if at50 > first && at50 >= INDEX_MIN {
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
