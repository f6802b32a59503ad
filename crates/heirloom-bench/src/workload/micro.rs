//! The micro-benchmarks of Shared Memory vs. Message Passing Locking (1995),
//! section 5: they measure the lock manager alone, with no data.
//!
//! * `hotlock`: every transaction takes S on one record (IS on its table and
//!   database) and commits: N threads on one hot lock. The paper's Figure 4
//!   (top lines).
//! * `nullcs`: every transaction performs `sections` null critical sections
//!   on the lock table's state for that record: an empty latch section on
//!   its lock head (shared-memory tables) or a null message round trip to
//!   its lock server (the server table). Figure 4 (bottom lines).
//! * `batch`: every transaction locks `--scale` distinct records (X by
//!   default, each worker its own records), handing them to the lock
//!   manager in one `lock_all` call (one message per partition on the
//!   server) or one `lock` call each: `batched=auto` (the default) does
//!   the first on the server table and the second on the others, the
//!   paper's comparison; `true` and `false` force either. Figure 5.
//!
//! Each reports its operation's cost: operations per second and
//! nanoseconds per operation as one thread sees it (threads / ops per
//! second, the paper's cost per process). Nothing is written, so the
//! consistency check is the runner's own: no lock is left after the run.

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, RunResult, Workload};
use crate::storage::{Outcome, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Scale, ScaleArg, Sweep};
use heirloom::{LockId, Mode, TableId};
use rand::RngExt;
use rand::rngs::SmallRng;

/// The table of the micro-benchmarks' records.
pub const RECORDS: TableId = TableId::new(9, 1);

/// Which micro-benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// S on a hot record.
    HotLock,
    /// Null critical sections.
    NullCs,
    /// Many distinct locks per transaction.
    Batch,
}

impl Which {
    /// Its name on the command line and in reports.
    fn name(self) -> &'static str {
        match self {
            Which::HotLock => "hotlock",
            Which::NullCs => "nullcs",
            Which::Batch => "batch",
        }
    }
}

/// A micro-benchmark in the registry.
#[derive(Debug)]
pub struct MicroBench(Which);

/// `hotlock` in the registry.
pub static HOTLOCK: MicroBench = MicroBench(Which::HotLock);
/// `nullcs` in the registry.
pub static NULLCS: MicroBench = MicroBench(Which::NullCs);
/// `batch` in the registry.
pub static BATCH: MicroBench = MicroBench(Which::Batch);

const SECTIONS: Opt = Opt {
    name: "sections",
    help: "null critical sections per transaction (amortises begin and commit)",
    kind: Kind::Int { min: 1, max: 1_000_000 },
    default: "100",
    alias: None,
};

const BATCHED: Opt = Opt {
    name: "batched",
    help: "true: the locks in one lock_all call; false: one lock call each; auto: batched on the server table only, as the 1995 paper compares",
    kind: Kind::Choice(&["auto", "true", "false"]),
    default: "auto",
    alias: None,
};

const MODE: Opt = Opt {
    name: "mode",
    help: "mode of the records' locks",
    kind: Kind::Choice(&["s", "x"]),
    default: "x",
    alias: None,
};

impl Benchmark for MicroBench {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn about(&self) -> &'static str {
        match self.0 {
            Which::HotLock => {
                "micro (1995 paper, Figure 4): S on one hot record (IS on its table and database) and commit; cost per acquisition"
            }
            Which::NullCs => {
                "micro (1995 paper, Figure 4): null critical sections on a lock's state: an empty latch section (shared-memory tables) or a null message round trip (server)"
            }
            Which::Batch => {
                "micro (1995 paper, Figure 5): --scale distinct locks per transaction, in one lock_all call or one lock call each; cost per lock"
            }
        }
    }
    fn counts(&self) -> &'static str {
        match self.0 {
            Which::HotLock => "txn/s: transactions, one acquisition each (ops/s, ns/op: acquisitions)",
            Which::NullCs => "txn/s: transactions of `sections` null sections (ops/s, ns/op: null sections)",
            Which::Batch => "txn/s: transactions of --scale locks (ops/s, ns/op: locks)",
        }
    }
    fn scale(&self) -> Scale {
        match self.0 {
            Which::HotLock | Which::NullCs => Scale {
                unit: "hot records",
                default: ScaleArg::Total(1),
                max: 1 << 20,
            },
            Which::Batch => Scale {
                unit: "locks per transaction",
                default: ScaleArg::Total(10),
                max: 100_000,
            },
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        &["only"]
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose(self.name(), name, &[("only", &[(0, 1)])], &[])
    }
    fn options(&self) -> &'static [Opt] {
        match self.0 {
            Which::HotLock => &[],
            Which::NullCs => &[SECTIONS],
            Which::Batch => &[BATCHED, MODE],
        }
    }
    fn read_only(&self, _mix: &Mix, options: &Options) -> bool {
        // hotlock takes S, nullcs no lock; batch takes its records in
        // `mode`.
        self.0 != Which::Batch || options.choice("mode") == "s"
    }
    fn estimate_bytes(&self, _scale: u64, _options: &Options) -> u64 {
        1 << 12
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        let o = sweep.options();
        let which = self.0;
        let sections = if which == Which::NullCs { o.int("sections") } else { 1 };
        let (batched, mode) = if which == Which::Batch {
            let batched = match o.choice("batched") {
                "true" => Batched::Always,
                "false" => Batched::Never,
                _ => Batched::OnServer,
            };
            (batched, if o.choice("mode") == "s" { Mode::S } else { Mode::X })
        } else {
            (Batched::Never, Mode::S)
        };
        sweep.on_one_db(&|n| {
            if n == 0 {
                return Err(format!("{}: --scale must be at least 1", self.name()));
            }
            Ok(Micro {
                which,
                n,
                sections,
                batched,
                mode,
            })
        })
    }
}

/// When `batch` hands its locks over in one `lock_all` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batched {
    /// Always.
    Always,
    /// Never: one `lock` call per lock.
    Never,
    /// On the server table only (the paper's comparison: shared-memory
    /// locking one lock at a time, message passing in one message).
    OnServer,
}

/// A micro-benchmark's settings (its "database": there is no data).
#[derive(Debug)]
pub struct Micro {
    which: Which,
    /// Hot records (`hotlock`, `nullcs`) or locks per transaction (`batch`).
    n: u64,
    sections: u64,
    batched: Batched,
    mode: Mode,
}

/// A worker's own records (`batch`) and its request list.
#[derive(Debug)]
pub struct Worker {
    reqs: Vec<(LockId, Mode)>,
}

impl Workload for Micro {
    /// The record (`hotlock`, `nullcs`); unused by `batch`.
    type Input = u64;
    type Worker = Worker;

    fn name(&self) -> &'static str {
        self.which.name()
    }

    fn transactions(&self) -> &'static [&'static str] {
        &["only"]
    }

    fn worker(&self, index: usize) -> Worker {
        let reqs = match self.which {
            // Worker i's records: i*n .. i*n + n, distinct from every other
            // worker's, so that only the intention locks are shared.
            Which::Batch => (0..self.n)
                .map(|k| (LockId::row(RECORDS, index as u64 * self.n + k), self.mode))
                .collect(),
            _ => Vec::new(),
        };
        Worker { reqs }
    }

    fn input(&self, _kind: usize, _w: &Worker, rng: &mut SmallRng) -> u64 {
        if self.which == Which::Batch || self.n == 1 {
            0
        } else {
            rng.random_range(0..self.n)
        }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, w: &mut Worker, &record: &u64) -> Result<Outcome, TxError> {
        match self.which {
            Which::HotLock => tx.lock_id(LockId::row(RECORDS, record), Mode::S)?,
            Which::NullCs => {
                for _ in 0..self.sections {
                    tx.null_section(LockId::row(RECORDS, record));
                }
            }
            Which::Batch
                if self.batched == Batched::Always
                    || (self.batched == Batched::OnServer
                        && matches!(tx.txn.table_kind(), heirloom::TableKind::Server { .. })) =>
            {
                tx.lock_all(&w.reqs)?
            }
            Which::Batch => {
                for &(id, mode) in &w.reqs {
                    tx.lock_id(id, mode)?;
                }
            }
        }
        Ok(Outcome::Committed)
    }

    fn undo_append(&self, _w: &mut Worker, _log: usize) {}

    fn retire(&self, _w: Worker) {}

    fn verify(&self) -> Result<String, String> {
        Ok(format!(
            "{}: no data written; the runner found no lock left",
            Workload::name(self)
        ))
    }

    fn op(&self) -> Option<(&'static str, f64)> {
        Some(match self.which {
            Which::HotLock => ("acquisition", 1.0),
            Which::NullCs => ("null section", self.sections as f64),
            Which::Batch => ("lock", self.n as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::UndoLog;
    use heirloom::{LockManager, TableKind};
    use rand::SeedableRng;

    fn run_once(m: &Micro, kind: TableKind) -> heirloom::Stats {
        let lm = LockManager::builder().table(kind).build();
        let mut agent = lm.agent();
        let mut w = m.worker(3);
        let mut rng = SmallRng::seed_from_u64(1);
        let input = m.input(0, &w, &mut rng);
        let mut txn = agent.begin();
        let mut undo = UndoLog::default();
        let mut tx = Tx::new(&mut txn, &mut undo);
        assert!(matches!(m.execute(&mut tx, &mut w, &input), Ok(Outcome::Committed)));
        let held = txn.lock_count();
        txn.commit().unwrap();
        assert!(lm.snapshot().is_empty());
        let mut s = agent.stats();
        s.lock_requests = held as u64; // what the transaction held at its end
        s
    }

    #[test]
    fn each_transaction_does_what_its_benchmark_measures() {
        for kind in TableKind::ALL {
            let hot = Micro {
                which: Which::HotLock,
                n: 1,
                sections: 1,
                batched: Batched::Never,
                mode: Mode::S,
            };
            let s = run_once(&hot, kind);
            assert_eq!(s.lock_requests, 3, "{kind}: db, table, record");
            let null = Micro {
                which: Which::NullCs,
                n: 1,
                sections: 7,
                batched: Batched::Never,
                mode: Mode::S,
            };
            let s = run_once(&null, kind);
            assert_eq!((s.lock_requests, s.table_ops), (0, 0), "{kind}: no lock");
            let server = matches!(kind, TableKind::Server { .. });
            assert_eq!(s.messages, if server { 7 } else { 0 }, "{kind}");
            for batched in [Batched::Never, Batched::Always] {
                let batch = Micro {
                    which: Which::Batch,
                    n: 100,
                    sections: 1,
                    batched,
                    mode: Mode::X,
                };
                let s = run_once(&batch, kind);
                assert_eq!(s.lock_requests, 102, "{kind}: db, table, 100 records");
                if server && batched == Batched::Always {
                    // db, table and the rows' batch(es), then one release
                    // message per partition.
                    assert!(s.messages <= 2 + 2 + 2, "{kind}: {} messages", s.messages);
                }
                if server && batched == Batched::Never {
                    assert_eq!(s.messages, 102 + 2, "{kind}: one per lock, one release per partition");
                }
            }
        }
    }

    #[test]
    fn batch_workers_lock_distinct_records() {
        let m = Micro {
            which: Which::Batch,
            n: 10,
            sections: 1,
            batched: Batched::Always,
            mode: Mode::X,
        };
        let a = m.worker(0).reqs;
        let b = m.worker(1).reqs;
        assert_eq!(a.len(), 10);
        assert!(a.iter().all(|x| !b.contains(x)));
        assert_eq!(m.op(), Some(("lock", 10.0)));
    }
}
