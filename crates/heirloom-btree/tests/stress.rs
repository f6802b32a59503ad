//! Concurrent stress tests of every protocol.
//!
//! - Disjoint keys: each thread owns the keys `k` with `k % THREADS == t`
//!   (interleaved, so threads share every leaf and split each other's
//!   nodes) and checks every result against its own `BTreeMap` exactly.
//! - Shared keys: all threads insert into one key range while others read
//!   and scan; every key's insert succeeds exactly once across threads (no
//!   lost and no duplicate insert), readers only ever see the one value a
//!   key can have, scans are sorted, and the final structure is valid.
//!
//! Longer runs: `HEIRLOOM_BTREE_STRESS_OPS=2000000 cargo test --release -p heirloom-btree --test stress`.

use heirloom_btree::{BTree, Coupling, ElidedRw, ElidedSpin, GlobalRw, Optimistic, Protocol, Spin};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::sync::Barrier;

const THREADS: u64 = 8;

fn ops() -> u64 {
    std::env::var("HEIRLOOM_BTREE_STRESS_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60_000)
}

fn disjoint<P: Protocol>() {
    let mut tree = BTree::<P>::new();
    let keys_per_thread = 3_000;
    let n = ops();
    let barrier = Barrier::new(THREADS as usize);
    let models: Vec<BTreeMap<u64, u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (tree, barrier) = (&tree, &barrier);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(t);
                    let mut model = BTreeMap::new();
                    let key = |rng: &mut SmallRng| rng.random_range(0..keys_per_thread) * THREADS + t;
                    barrier.wait();
                    for i in 0..n {
                        let k = key(&mut rng);
                        let v = (t << 56) | i;
                        match rng.random_range(0..100) {
                            0..40 => {
                                let fresh = !model.contains_key(&k);
                                if fresh {
                                    model.insert(k, v);
                                }
                                assert_eq!(tree.insert(k, v), fresh, "insert {k}");
                            }
                            40..60 => assert_eq!(tree.remove(k), model.remove(&k), "remove {k}"),
                            60..70 => {
                                let old = model.get_mut(&k).map(|old| std::mem::replace(old, v));
                                assert_eq!(tree.update(k, v), old, "update {k}");
                            }
                            70..95 => assert_eq!(tree.get(k), model.get(&k).copied(), "get {k}"),
                            _ => {
                                // A scan sees other threads' keys too: it must
                                // be sorted and show exactly this thread's own.
                                let hi = k + 64 * THREADS;
                                let got = tree.range(k..=hi);
                                assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "scan not sorted");
                                let mine: Vec<_> = got.into_iter().filter(|(k, _)| k % THREADS == t).collect();
                                let want: Vec<_> = model.range(k..=hi).map(|(&k, &v)| (k, v)).collect();
                                assert_eq!(mine, want, "scan {k}..={hi}");
                            }
                        }
                    }
                    model
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<(u64, u64)> = models.iter().flat_map(|m| m.iter().map(|(&k, &v)| (k, v))).collect();
    all.sort_unstable();
    assert_eq!(tree.range(..), all, "final contents");
    let shape = tree.check().unwrap();
    assert_eq!(shape.keys, all.len());
}

fn value_of(k: u64) -> u64 {
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
}

fn shared<P: Protocol>() {
    let mut tree = BTree::<P>::new();
    let key_space = 40_000;
    let n = ops();
    let writers = THREADS / 2;
    let barrier = Barrier::new(THREADS as usize);
    let inserted: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (tree, barrier) = (&tree, &barrier);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(100 + t);
                    let mut mine = Vec::new();
                    barrier.wait();
                    for _ in 0..n {
                        let k = rng.random_range(0..key_space);
                        if t < writers {
                            if tree.insert(k, value_of(k)) {
                                mine.push(k);
                            }
                        } else if rng.random_range(0..10) == 0 {
                            let mut prev = None;
                            tree.scan(k..k + 500, |key, v| {
                                assert!(prev < Some(key), "scan out of order: {prev:?} then {key}");
                                assert_eq!(v, value_of(key), "scan value of {key}");
                                prev = Some(key);
                                true
                            });
                        } else if let Some(v) = tree.get(k) {
                            assert_eq!(v, value_of(k), "value of {k}");
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut seen = HashSet::new();
    for k in inserted.iter().flatten() {
        assert!(seen.insert(*k), "key {k} inserted twice");
    }
    for &k in &seen {
        assert_eq!(tree.get(k), Some(value_of(k)), "lost insert of {k}");
    }
    let shape = tree.check().unwrap();
    assert_eq!(shape.keys, seen.len(), "tree holds keys nobody inserted");
}

macro_rules! stress {
    ($($p:ident => $d:ident, $s:ident;)*) => {$(
        #[test]
        fn $d() { disjoint::<$p>(); }
        #[test]
        fn $s() { shared::<$p>(); }
    )*};
}

stress! {
    GlobalRw => disjoint_keys_global_rw, shared_keys_global_rw;
    Coupling => disjoint_keys_coupling, shared_keys_coupling;
    Spin => disjoint_keys_spin, shared_keys_spin;
    Optimistic => disjoint_keys_optimistic, shared_keys_optimistic;
    ElidedSpin => disjoint_keys_elided_spin, shared_keys_elided_spin;
    ElidedRw => disjoint_keys_elided_rw, shared_keys_elided_rw;
}

#[test]
fn optimistic_readers_retry_and_fall_back_under_writers() {
    // Hammer one leaf's worth of keys with updates while readers look them
    // up: some optimistic reads must fail validation (the counters move),
    // and every read still returns a value some writer stored.
    let tree = BTree::<Optimistic>::new();
    for k in 0..16 {
        tree.insert(k, k << 32);
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for w in 0..2u64 {
            let (tree, stop) = (&tree, &stop);
            s.spawn(move || {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let k = (i + w) % 16;
                    tree.update(k, (k << 32) | (i & 0xffff_ffff));
                    i += 1;
                }
            });
        }
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let tree = &tree;
                s.spawn(move || {
                    // Until a failed validation has been seen (it needs a
                    // writer inside the leaf between a reader's two version
                    // loads, which scheduling decides), with a generous cap.
                    for i in 0..50_000_000u64 {
                        let k = i % 16;
                        let v = tree.get(k).expect("key present");
                        assert_eq!(v >> 32, k, "read a value of another key");
                        if i % 100_000 == 0 && i >= 200_000 && tree.stats().restarts > 0 {
                            break;
                        }
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let st = tree.stats();
    assert!(st.restarts > 0, "no optimistic read ever failed validation: {st:?}");
}
