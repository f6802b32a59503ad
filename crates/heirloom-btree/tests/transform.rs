//! The TSX paper's transformations switched on (linear node search, nodes
//! from per-thread pools): every protocol still matches a `BTreeMap` and
//! keeps its invariants under threads. The switches are process-wide, so
//! this binary holds these tests alone, in one test function.

use heirloom_btree::{BTree, Coupling, ElidedRw, ElidedSpin, GlobalRw, Optimistic, Protocol, Spin, transform};
use std::collections::BTreeMap;

fn one<P: Protocol>() {
    // Single thread against a model: mixed operations over a small key
    // space, so that leaves split, underflow and fill again.
    let mut tree = BTree::<P>::new();
    let mut model = BTreeMap::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..40_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = x % 3000;
        match x % 4 {
            0 | 1 => {
                // Primary-key semantics: a present key keeps its value.
                let fresh = !model.contains_key(&k);
                if fresh {
                    model.insert(k, i);
                }
                assert_eq!(tree.insert(k, i), fresh, "{}", P::NAME);
            }
            2 => assert_eq!(tree.remove(k), model.remove(&k), "{}", P::NAME),
            _ => assert_eq!(tree.get(k), model.get(&k).copied(), "{}", P::NAME),
        }
    }
    assert_eq!(tree.range(..), model.into_iter().collect::<Vec<_>>(), "{}", P::NAME);
    tree.check().unwrap();

    // Two threads inserting disjoint keys: every key present once after.
    let mut tree = BTree::<P>::new();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let tree = &tree;
            s.spawn(move || {
                for k in (t..20_000).step_by(2) {
                    assert!(tree.insert(k, k + 1));
                }
            });
        }
    });
    assert_eq!(tree.check().unwrap().keys, 20_000, "{}", P::NAME);
    assert!((0..20_000).all(|k| tree.get(k) == Some(k + 1)), "{}", P::NAME);
}

#[test]
fn every_protocol_with_linear_search_and_node_pools() {
    transform::set_linear_search(true);
    transform::set_node_pools(true);
    one::<GlobalRw>();
    one::<Coupling>();
    one::<Spin>();
    one::<Optimistic>();
    one::<ElidedSpin>();
    one::<ElidedRw>();
    transform::set_linear_search(false);
    transform::set_node_pools(false);
}
