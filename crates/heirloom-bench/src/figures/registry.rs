//! The registry: every figure, what its paper found, the sweeps that
//! measure the same here, and which rule reads them.

use super::index::rule_index;
use super::index::{index_cells, index_ms, run_index};
use super::rules::*;
use super::*;

/// Every figure, in report order.
pub const FIGURES: &[Figure] = &[
    Figure {
        name: "sli-fig1",
        source: "Speculative lock inheritance (VLDB 2009), Figure 1 (and 6, 7)",
        paper: "Fraction of CPU time inside the lock manager as load grows, NDBB (TM1) and others on Shore-MT, 64 hardware contexts: it grows with load, and at peak the lock manager takes 10-20% of the time (up to the largest share for the shortest transactions, NDBB).",
        rule: rule_lm_share,
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
        rule: rule_sli_tm1,
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
        rule: rule_sli_ratio,
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
        rule: rule_classes,
        parts: |q| {
            let threads: &[usize] = if q { &[2] } else { &[8] };
            vec![
                Part {
                    label: "tm1".into(),
                    spec: shore(Spec {
                        classes: true,
                        ..tm1(q, threads, &[TableKind::Latched], &[false, true])
                    }),
                },
                Part {
                    label: "tpcb".into(),
                    spec: shore(Spec {
                        classes: true,
                        ..tpcb(q, threads, &[TableKind::Latched], &[false, true])
                    }),
                },
                Part {
                    label: "tpcc".into(),
                    spec: shore(Spec {
                        classes: true,
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
        rule: rule_sml_mpl,
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
        rule: rule_batches,
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
        rule: rule_range,
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
        rule: rule_hotspot,
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
        rule: rule_picotm,
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
        rule: rule_oversubscription,
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
        rule: rule_side_by_side,
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
        paper: "A B+tree under point lookups with 0-50% inserts on a 4-core Haswell: lock elision outperforms the reader/writer lock on read-only queries, with gains growing with inserts (6x at 50%); retrying only once the lock is free removes the lemming effect; the no-concurrency-control line is the ceiling. Here the spin and RW locks are elided with RTM where the CPU has it, and optimistic lock coupling is the software form of elision.",
        rule: rule_index,
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

pub(super) fn every_kind() -> Vec<TableKind> {
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
pub(super) fn shore(spec: Spec) -> Spec {
    Spec {
        fast_path: vec![false],
        ..spec
    }
}

/// The settings every sweep of the set shares: quick runs are tiny, full
/// ones one second, the median of three.
pub(super) fn base(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
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

pub(super) fn tpcb(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        workload: "tpcb".into(),
        scale: Some(ScaleArg::Total(if quick { 2 } else { 8 })),
        options: vec![("accounts".into(), if quick { "1000" } else { "10000" }.into())],
        ..base(quick, threads, tables, sli)
    }
}

pub(super) fn tpcc(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        workload: "tpcc".into(),
        scale: Some(ScaleArg::Total(if quick { 2 } else { 4 })),
        options: vec![("shrink".into(), if quick { "20" } else { "10" }.into())],
        ..base(quick, threads, tables, sli)
    }
}

pub(super) fn tm1(quick: bool, threads: &[usize], tables: &[TableKind], sli: &[bool]) -> Spec {
    Spec {
        workload: "tm1".into(),
        mix: Some("ndbb".into()),
        scale: Some(ScaleArg::Total(if quick { 2000 } else { 100_000 })),
        ..base(quick, threads, tables, sli)
    }
}
