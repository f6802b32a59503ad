//! The benchmarks and their registry.
//!
//! A benchmark is two things: a [`Benchmark`]
//! (its description: name, scale, mixes, own options, memory estimate, and
//! how it loads its database and hands it to the sweep) and a
//! [`Workload`](crate::runner::Workload) (the loaded database: draws
//! inputs, executes one transaction on a [`Tx`](crate::storage::Tx),
//! verifies its consistency rules). The sweep, the report and the command
//! reach a benchmark only through [`REGISTRY`]; adding one is a module here
//! and its line in the registry.

use crate::options::{Kind, Opt};
use crate::storage::IndexKind;
use crate::sweep::Benchmark;

pub mod micro;
pub mod random;
pub mod tm;
pub mod tm1;
pub mod tpcb;
pub mod tpcc;
pub mod txbench;
pub mod ycsb;

/// Every benchmark the kit runs, in the order `heirloom list` shows them.
pub static REGISTRY: &[&dyn Benchmark] = &[
    &tm1::TM1,
    &tpcb::TPCB,
    &tpcc::TPCC,
    &ycsb::YCSB,
    &micro::HOTLOCK,
    &micro::NULLCS,
    &micro::BATCH,
    &tm::TM,
    &txbench::RANGE_BENCH,
    &txbench::HOTSPOT_BENCH,
];

/// The option every benchmark has: the primary-key index of its tables
/// that are only read by key (the others keep the B+tree for their range
/// scans, inserts and deletes).
pub const INDEX: Opt = Opt {
    name: "index",
    help: "primary-key index of the tables read only by key: btree, or hash as DBx1000 has",
    kind: Kind::Choice(&["btree", "hash"]),
    default: "btree",
    alias: Some("--index"),
};

/// The `index` option's value.
pub fn index_kind(options: &crate::options::Options) -> IndexKind {
    match options.choice(INDEX.name) {
        "hash" => IndexKind::Hash,
        _ => IndexKind::BTree,
    }
}

/// The benchmark called `name` (empty: the registry's first), or an error
/// naming the known ones.
pub fn find(name: &str) -> Result<&'static dyn Benchmark, String> {
    if name.is_empty()
        && let Some(&first) = REGISTRY.first()
    {
        return Ok(first);
    }
    REGISTRY.iter().copied().find(|b| b.name() == name).ok_or_else(|| {
        let known: Vec<_> = REGISTRY.iter().map(|b| b.name()).collect();
        format!("unknown workload {name:?} (known: {})", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;

    #[test]
    fn registry_entries_are_complete_and_distinct() {
        let mut names = std::collections::HashSet::new();
        let mut aliases = std::collections::HashMap::new();
        for b in REGISTRY {
            assert!(names.insert(b.name()), "{} registered twice", b.name());
            assert!(find(b.name()).is_ok_and(|f| f.name() == b.name()));
            let opts = Options::parse(b.name(), b.options(), &[]).expect("defaults parse");
            assert!(b.estimate_bytes(b.scale().default.at(8), &opts) > 0, "{}", b.name());
            assert!(b.scale().default.at(8) <= b.scale().max);
            assert!(!b.mixes().is_empty(), "{}: no default mix", b.name());
            for m in b.mixes() {
                assert_eq!(b.mix(m).expect("its own mix").name, *m);
            }
            assert!(b.mix("no-such-mix").is_err());
            for o in b.options() {
                if let Some(a) = o.alias {
                    // One alias means one option name, whoever declares it.
                    assert_eq!(*aliases.entry(a).or_insert(o.name), o.name, "alias {a}");
                    assert!(a.starts_with("--"));
                }
            }
        }
        assert!(find("no-such-benchmark").err().is_some_and(|e| e.contains("tm1")));
    }
}
