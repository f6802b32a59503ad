//! Single-threaded property tests: random operation sequences on every
//! protocol give exactly what `BTreeMap` gives, and the tree's structure
//! stays valid.

use heirloom_btree::{BTree, Coupling, ElidedRw, ElidedSpin, GlobalRw, Optimistic, Protocol, Spin};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Update(u64, u64),
    Remove(u64),
    Get(u64),
    Range(u64, u64),
    First(u64),
}

fn op(keys: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..keys, any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        1 => (0..keys, any::<u64>()).prop_map(|(k, v)| Op::Update(k, v)),
        2 => (0..keys).prop_map(Op::Remove),
        2 => (0..keys).prop_map(Op::Get),
        1 => (0..keys, 0..keys).prop_map(|(a, b)| Op::Range(a.min(b), a.max(b))),
        1 => (0..keys).prop_map(Op::First),
    ]
}

fn run<P: Protocol>(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut tree = BTree::<P>::new();
    let mut model = BTreeMap::new();
    for op in ops {
        match *op {
            Op::Insert(k, v) => {
                let fresh = !model.contains_key(&k);
                if fresh {
                    model.insert(k, v);
                }
                prop_assert_eq!(tree.insert(k, v), fresh, "{:?}", op);
            }
            Op::Update(k, v) => {
                let old = model.get_mut(&k).map(|old| std::mem::replace(old, v));
                prop_assert_eq!(tree.update(k, v), old, "{:?}", op);
            }
            Op::Remove(k) => prop_assert_eq!(tree.remove(k), model.remove(&k), "{:?}", op),
            Op::Get(k) => prop_assert_eq!(tree.get(k), model.get(&k).copied(), "{:?}", op),
            Op::Range(a, b) => {
                let want: Vec<_> = model.range(a..=b).map(|(&k, &v)| (k, v)).collect();
                prop_assert_eq!(tree.range(a..=b), want, "{:?}", op);
                let want: Vec<_> = model.range(a..b).map(|(&k, &v)| (k, v)).collect();
                prop_assert_eq!(tree.range(a..b), want, "{:?} exclusive", op);
            }
            Op::First(a) => {
                prop_assert_eq!(
                    tree.first(a..),
                    model.range(a..).next().map(|(&k, &v)| (k, v)),
                    "{:?}",
                    op
                )
            }
        }
    }
    let shape = tree.check().map_err(TestCaseError::fail)?;
    prop_assert_eq!(shape.keys, model.len());
    let all: Vec<_> = model.iter().map(|(&k, &v)| (k, v)).collect();
    prop_assert_eq!(tree.range(..), all);
    // The frozen (latch-free, read-only) view answers every key the same,
    // present or not (keys are drawn below 1500; one beyond).
    let frozen = tree.freeze();
    for k in 0..=1500 {
        prop_assert_eq!(frozen.get(k), model.get(&k).copied(), "frozen get {}", k);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn global_rw_matches_btreemap(ops in prop::collection::vec(op(1500), 0..3000)) { run::<GlobalRw>(&ops)?; }
    #[test]
    fn coupling_matches_btreemap(ops in prop::collection::vec(op(1500), 0..3000)) { run::<Coupling>(&ops)?; }
    #[test]
    fn spin_matches_btreemap(ops in prop::collection::vec(op(1500), 0..3000)) { run::<Spin>(&ops)?; }
    #[test]
    fn optimistic_matches_btreemap(ops in prop::collection::vec(op(1500), 0..3000)) { run::<Optimistic>(&ops)?; }
    #[test]
    fn elided_spin_matches_btreemap(ops in prop::collection::vec(op(1500), 0..3000)) { run::<ElidedSpin>(&ops)?; }
    #[test]
    fn elided_rw_matches_btreemap(ops in prop::collection::vec(op(1500), 0..3000)) { run::<ElidedRw>(&ops)?; }
}

fn sequential_and_reverse<P: Protocol>() {
    // Ascending inserts split at the right edge, descending at the left.
    let mut tree = BTree::<P>::new();
    for k in 0..20_000 {
        assert!(tree.insert(k, k * 2));
    }
    for k in (20_000..40_000).rev() {
        assert!(tree.insert(k, k * 2));
    }
    let shape = tree.check().unwrap();
    assert_eq!(shape.keys, 40_000);
    assert!(shape.height >= 3, "{shape:?}");
    for k in 0..40_000 {
        assert_eq!(tree.get(k), Some(k * 2));
    }
    assert_eq!(tree.get(40_000), None);
    assert_eq!(tree.count(), 40_000);
    // Extreme keys and bounds.
    assert!(tree.insert(u64::MAX, 1));
    assert!(!tree.insert(0, 0), "key 0 is present");
    assert_eq!(tree.range(u64::MAX..), vec![(u64::MAX, 1)]);
    assert_eq!(
        tree.range((std::ops::Bound::Excluded(u64::MAX), std::ops::Bound::Unbounded)),
        vec![]
    );
    assert_eq!(tree.range(5..5), vec![]);
    assert_eq!(tree.first(39_999..), Some((39_999, 79_998)));
    // Empty every leaf: lookups and scans still work on underflowed leaves.
    for k in 0..40_000 {
        assert_eq!(tree.remove(k), Some(k * 2));
    }
    assert_eq!(tree.range(..), vec![(u64::MAX, 1)]);
    assert_eq!(tree.check().unwrap().keys, 1);
    for k in (0..40_000).step_by(7) {
        assert!(tree.insert(k, k));
    }
    assert_eq!(tree.count(), 40_000 / 7 + 2);
    tree.check().unwrap();
}

#[test]
fn sequential_and_reverse_global_rw() {
    sequential_and_reverse::<GlobalRw>();
}
#[test]
fn sequential_and_reverse_coupling() {
    sequential_and_reverse::<Coupling>();
}
#[test]
fn sequential_and_reverse_spin() {
    sequential_and_reverse::<Spin>();
}
#[test]
fn sequential_and_reverse_optimistic() {
    sequential_and_reverse::<Optimistic>();
}
#[test]
fn sequential_and_reverse_elided_spin() {
    sequential_and_reverse::<ElidedSpin>();
}
#[test]
fn sequential_and_reverse_elided_rw() {
    sequential_and_reverse::<ElidedRw>();
}
