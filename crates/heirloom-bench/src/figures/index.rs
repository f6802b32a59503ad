//! The index figure's own driver: the B+tree with each latching protocol
//! under a mix of lookups and inserts, cell by cell.

use super::rules::*;
use super::*;

/// The index figure's protocols: the paper's (its RW lock and spin lock,
/// both elided with the naive and the fixed retry), this tree's others,
/// and the frozen-tree ceiling.
pub(super) const INDEX_PROTOCOLS: [&str; 9] = [
    "global-rw",
    "coupling",
    "spin",
    "optimistic",
    "elided-spin",
    "elided-spin-naive",
    "elided-rw",
    "elided-rw-naive",
    "none",
];

/// The naive retry of the `-naive` protocols (as many attempts as the fixed
/// policy's first try and conflict retries).
const NAIVE: heirloom_btree::Retry = heirloom_btree::Retry::Naive { attempts: 9 };

/// The index figure's cells: (protocol, threads, insert share).
pub(super) fn index_cells(quick: bool) -> Vec<(&'static str, usize, u32)> {
    let threads: &[usize] = if quick { &[1, 2] } else { &[1, 2, 8] };
    let inserts: &[u32] = if quick { &[0, 50] } else { &[0, 5, 10, 50] };
    let mut v = Vec::new();
    for &pct in inserts {
        for &t in threads {
            for p in INDEX_PROTOCOLS {
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

/// One run of a cell: operations per second, and the elided protocols'
/// counters over the run (zero for the others).
pub(super) fn index_cell<P: heirloom_btree::Protocol>(
    keys: u64,
    threads: usize,
    pct: u32,
    d: Duration,
    seed: u64,
    retry: heirloom_btree::Retry,
) -> (f64, heirloom_btree::ElisionStats) {
    let tree = heirloom_btree::BTree::<P>::with_retry(retry);
    for i in 0..keys {
        tree.insert(index_key(i), i);
    }
    let b = tree.stats().elision;
    let ops = index_drive(keys, threads, pct, d, seed, |k| tree.get(k), |k, v| tree.insert(k, v));
    let elision = tree.stats().elision.since(&b);
    (ops, elision)
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
    use heirloom_btree::{Coupling, ElidedRw, ElidedSpin, GlobalRw, Optimistic, Retry, Spin};
    let keys: u64 = if quick { 20_000 } else { 1_000_000 };
    let (repeat, d) = if quick {
        (1, Duration::from_millis(50))
    } else {
        (3, Duration::from_secs(1))
    };
    let mut samples = Vec::new();
    let mut seed = 1;
    for (p, t, pct) in index_cells(quick) {
        let fixed = Retry::default();
        let mut xs: Vec<(f64, heirloom_btree::ElisionStats)> = (0..repeat)
            .map(|_| {
                seed += 1;
                match p {
                    "global-rw" => index_cell::<GlobalRw>(keys, t, pct, d, seed, fixed),
                    "coupling" => index_cell::<Coupling>(keys, t, pct, d, seed, fixed),
                    "spin" => index_cell::<Spin>(keys, t, pct, d, seed, fixed),
                    "optimistic" => index_cell::<Optimistic>(keys, t, pct, d, seed, fixed),
                    "elided-spin" => index_cell::<ElidedSpin>(keys, t, pct, d, seed, fixed),
                    "elided-spin-naive" => index_cell::<ElidedSpin>(keys, t, pct, d, seed, NAIVE),
                    "elided-rw" => index_cell::<ElidedRw>(keys, t, pct, d, seed, fixed),
                    "elided-rw-naive" => index_cell::<ElidedRw>(keys, t, pct, d, seed, NAIVE),
                    _ => (index_none(keys, t, d, seed), Default::default()),
                }
            })
            .collect();
        xs.sort_by(|a, b| a.0.total_cmp(&b.0));
        progress(index_ms(quick));
        let (ops, e) = xs[xs.len() / 2];
        // Per operation of the median run (its operations: ops/s times the
        // run's length).
        let n = (ops * d.as_secs_f64()).max(1.0);
        samples.push(IndexSample {
            protocol: p,
            threads: t,
            inserts_pct: pct,
            ops_per_s: ops,
            rtm: e.rtm,
            under_lock_share: e.fallback_share(),
            aborts_conflict_per_op: e.conflict as f64 / n,
            aborts_capacity_per_op: e.capacity as f64 / n,
            aborts_busy_per_op: e.busy as f64 / n,
            aborts_other_per_op: (e.other + e.explicit) as f64 / n,
        });
    }
    (read_index(&samples), samples)
}

/// tsx-index, where the CPU has RTM (the paper's claims, on elided-spin with
/// the fixed retry at the most threads): at least `INDEX_MIN` x global-rw
/// read-only, `INDEX_BIG` x at `INDEX_BIG_PCT`% inserts, `INDEX_CEILING` of
/// none read-only, and the naive retry at least `INDEX_LEMMING` x the fixed
/// one's share of operations under the lock. Without RTM the same ratios
/// of optimistic lock coupling (the software form) decide.
const INDEX_MIN: f64 = 1.0;
const INDEX_BIG: f64 = 4.0;
const INDEX_BIG_PCT: u32 = 50;
const INDEX_CEILING: f64 = 0.8;
const INDEX_LEMMING: f64 = 10.0;

pub(super) fn rule_index() -> String {
    format!(
        "with RTM, elided-spin (fixed retry) at the most threads: reproduced if at least {INDEX_MIN:.1}x global-rw read-only, {INDEX_BIG:.0}x at {INDEX_BIG_PCT}% inserts, {INDEX_CEILING} of none read-only, and the naive retry runs at least {INDEX_LEMMING:.0}x the fixed one's share of operations under the lock at {INDEX_BIG_PCT}% inserts; direction if the first two hold; else not reproduced. Without RTM (the elided protocols then always take their lock) optimistic lock coupling stands in: reproduced if at least {INDEX_MIN:.1}x global-rw at every insert share and {INDEX_BIG:.0}x at {INDEX_BIG_PCT}% inserts, direction if its ratio grows with inserts"
    )
}

pub(super) fn read_index(samples: &[IndexSample]) -> Reading {
    let most = samples.iter().map(|s| s.threads).max().unwrap_or(1);
    let rtm = samples.iter().any(|s| s.rtm);
    let mut shares: Vec<u32> = samples.iter().map(|s| s.inserts_pct).collect();
    shares.sort_unstable();
    shares.dedup();
    let find = |p: &str, t: usize, pct: u32| {
        samples
            .iter()
            .find(|s| s.protocol == p && s.threads == t && s.inserts_pct == pct)
    };
    let ops = |p: &str, t: usize, pct: u32| find(p, t, pct).map_or(f64::NAN, |s| s.ops_per_s);
    let judged = if rtm { "elided-spin" } else { "optimistic" };
    let rel: Vec<(u32, f64)> = shares
        .iter()
        .map(|&pct| (pct, ratio(ops(judged, most, pct), ops("global-rw", most, pct))))
        .collect();
    let first = rel.first().map_or(f64::NAN, |x| x.1);
    let at50 = rel.iter().find(|x| x.0 == INDEX_BIG_PCT).map_or(f64::NAN, |x| x.1);
    let of_none = ops(judged, most, 0) / ops("none", most, 0);
    let under_lock = |p: &str| find(p, most, INDEX_BIG_PCT).map_or(f64::NAN, |s| s.under_lock_share);
    let (naive, fixed) = (under_lock("elided-spin-naive"), under_lock("elided-spin"));
    // A fixed share of zero against a positive naive one: the convoy is gone.
    let lemming = if fixed > 0.0 {
        naive / fixed
    } else if naive > 0.0 {
        f64::INFINITY
    } else {
        f64::NAN
    };
    let verdict = if rtm {
        if first >= INDEX_MIN && at50 >= INDEX_BIG && of_none >= INDEX_CEILING && lemming >= INDEX_LEMMING {
            Verdict::Reproduced
        } else if first >= INDEX_MIN && at50 >= INDEX_BIG {
            Verdict::Direction
        } else {
            Verdict::NotReproduced
        }
    } else if rel.iter().all(|x| x.1 >= INDEX_MIN) && at50 >= INDEX_BIG {
        Verdict::Reproduced
    } else if at50 > first && at50 >= INDEX_MIN {
        Verdict::Direction
    } else {
        Verdict::NotReproduced
    };
    let mut charts: Vec<Chart> = shares
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
    // The lemming effect: operations under the lock against inserts, naive
    // and fixed retry, at the most threads.
    let mut series: Vec<Series> = Vec::new();
    for s in samples
        .iter()
        .filter(|s| s.threads == most && s.protocol.starts_with("elided-"))
    {
        add_point(&mut series, s.protocol, (f64::from(s.inserts_pct), s.under_lock_share));
    }
    charts.push(Chart {
        suffix: "-lemming",
        title: format!("Operations run under the fallback lock, {most} threads: naive against fixed retry"),
        x_desc: "inserts (%)",
        y_desc: "share of operations under the lock",
        series,
        categories: Vec::new(),
    });
    let aborts = find("elided-spin", most, INDEX_BIG_PCT).map(|s| {
        format!(
            " Aborts per operation of elided-spin at {INDEX_BIG_PCT}% inserts: {:.3} conflict, {:.3} capacity, {:.3} lock busy, {:.3} other.",
            s.aborts_conflict_per_op, s.aborts_capacity_per_op, s.aborts_busy_per_op, s.aborts_other_per_op
        )
    });
    let ours = if rtm {
        format!(
            "elided-spin (fixed retry) / global-rw at {most} threads: {}; read-only {of_none:.2} of no concurrency control; under the lock at {INDEX_BIG_PCT}% inserts: naive {naive:.3}, fixed {fixed:.3} ({lemming:.1}x); elided-spin / optimistic read-only {:.2}x, at {INDEX_BIG_PCT}% {:.2}x.{}",
            rel.iter()
                .map(|(p, x)| format!("{x:.2}x at {p}% inserts"))
                .collect::<Vec<_>>()
                .join(", "),
            ops("elided-spin", most, 0) / ops("optimistic", most, 0),
            ops("elided-spin", most, INDEX_BIG_PCT) / ops("optimistic", most, INDEX_BIG_PCT),
            aborts.unwrap_or_default(),
        )
    } else {
        format!(
            "{}. The elided protocols took their lock every time (their lines are the locks' own cost). optimistic / global-rw at {most} threads: {}{}.",
            heirloom_btree::rtm::describe(),
            rel.iter()
                .map(|(p, x)| format!("{x:.2}x at {p}% inserts"))
                .collect::<Vec<_>>()
                .join(", "),
            if of_none.is_finite() {
                format!("; read-only, optimistic is {of_none:.2} of no concurrency control")
            } else {
                String::new()
            }
        )
    };
    Reading { charts, ours, verdict }
}
