//! The multicore lock manager slides' micro-benchmark ("Scalable lock
//! manager for multicores"): three tables `txbench-i` of (key, int value,
//! string value) rows and two transactions.
//!
//! * read-only (`range`): `SELECT sum(b_int_value) FROM txbench-i WHERE
//!   b_int_key > :id AND b_int_key <= :id + S`, a random table and id, S =
//!   `span` (10 or 100 in the slides). Under strict 2PL with row locks: IS
//!   on the database and the table, S on each of the S rows. (An engine
//!   with page or key-range locks might take fewer, larger locks; row locks
//!   are what puts the slides' load on the hot intention locks: every
//!   transaction takes IS on one of three tables and on the database.)
//! * update: `UPDATE txbench-((i+1) mod 3) SET b_value = ... WHERE b_int_key
//!   = :id1 OR b_int_key = :id2`: X on two rows (IX on table and database).
//!   With `hot-share` H > 0, each key is drawn from the `hot-keys` lowest
//!   keys with probability H (the hot spot), else uniformly.
//!
//! Two benchmarks of the registry run on these tables: `range`, the
//! read-only transaction alone (the slides' throughput figures), and
//! `hotspot`, 20% updates and 80% read-only (the "update & hotspot"
//! figure; its mix `read-only` runs the same database without updates). Rows never move,
//! so the phantom question does not arise: the range's rows are the same
//! keys whatever runs.
//!
//! Consistency: every update bumps the version of both rows, so the
//! versions add up to twice the committed updates; and a range reads every
//! row's value and version twice, at its first and last step, so a row
//! that changed under its S lock is a violation `verify` reports.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, RunResult, Workload};
use crate::storage::{IndexKind, Outcome, Table, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Scale, ScaleArg, Sweep};
use crate::workload::{INDEX, index_kind};
use heirloom::{Mode, TableId};
use parking_lot::Mutex;
use rand::RngExt;
use rand::rngs::SmallRng;

/// The three tables.
pub const TABLES: [TableId; 3] = [TableId::new(11, 0), TableId::new(11, 1), TableId::new(11, 2)];
/// Row width: int value, version, two words of string value.
const WIDTH: usize = 4;

/// A transaction's inputs.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    /// Sum over keys (id, id + span] of table `t`.
    Range {
        /// The table.
        t: usize,
        /// The key below the range.
        id: u64,
    },
    /// Update keys `a` and `b` of table `t`.
    Update {
        /// The table.
        t: usize,
        /// The keys.
        a: u64,
        /// The keys.
        b: u64,
        /// The new string value.
        value: u64,
    },
}

/// Updates committed by a worker.
#[derive(Debug, Default)]
pub struct Updates(u64);

/// The three tables and the settings.
#[derive(Debug)]
pub struct TxBench {
    name: &'static str,
    rows: u64,
    span: u64,
    hot_share: f64,
    hot_keys: u64,
    tables: Vec<Table>,
    committed_updates: Mutex<u64>,
    violations: AtomicU64,
}

/// One of the two benchmarks on these tables.
#[derive(Debug)]
pub struct TxBenchBench {
    hotspot: bool,
}

/// `range` in the registry: the read-only transaction alone.
pub static RANGE_BENCH: TxBenchBench = TxBenchBench { hotspot: false };
/// `hotspot` in the registry: 20% updates with a hot spot.
pub static HOTSPOT_BENCH: TxBenchBench = TxBenchBench { hotspot: true };

/// Transaction types.
const RANGE: usize = 0;
const UPDATE: usize = 1;

impl Benchmark for TxBenchBench {
    fn name(&self) -> &'static str {
        if self.hotspot { "hotspot" } else { "range" }
    }
    fn about(&self) -> &'static str {
        if self.hotspot {
            "micro (multicore slides): 80% read-only range sums, 20% two-row updates with a hot spot, on 3 tables"
        } else {
            "micro (multicore slides): read-only range sums of --opt span rows (S on each row) over 3 tables"
        }
    }
    fn scale(&self) -> Scale {
        Scale {
            unit: "rows per table",
            default: ScaleArg::Total(100_000),
            max: 1 << 30,
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        if self.hotspot {
            &["hotspot", "read-only"]
        } else {
            &["read-only"]
        }
    }
    fn transactions(&self) -> &'static [&'static str] {
        &["range", "update"]
    }
    fn read_only(&self, mix: &Mix, _options: &Options) -> bool {
        mix.weights.iter().all(|&(t, _)| t == RANGE)
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose(
            self.name(),
            name,
            &[("read-only", &[(RANGE, 1)]), ("hotspot", &[(RANGE, 80), (UPDATE, 20)])],
            &["range", "update"],
        )
    }
    fn options(&self) -> &'static [Opt] {
        &[
            Opt {
                name: "span",
                help: "rows a read-only transaction sums (S in the slides: 10 or 100)",
                kind: Kind::Int { min: 1, max: 100_000 },
                default: "10",
                alias: None,
            },
            Opt {
                name: "hot-share",
                help: "share of update keys drawn from the hot spot",
                kind: Kind::Real {
                    min: 0.0,
                    max: 1.0,
                    max_included: true,
                },
                default: "0.5",
                alias: None,
            },
            Opt {
                name: "hot-keys",
                help: "keys in the hot spot (the lowest of each table)",
                kind: Kind::Int { min: 1, max: 1 << 30 },
                default: "64",
                alias: None,
            },
            INDEX,
        ]
    }
    fn estimate_bytes(&self, scale: u64, _options: &Options) -> u64 {
        3 * Table::estimate_bytes(WIDTH, scale as usize)
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        let o = sweep.options();
        let (span, hot_share, hot_keys) = (o.int("span"), o.real("hot-share"), o.int("hot-keys"));
        let index = index_kind(o);
        let name = self.name();
        sweep.on_one_db(&|rows| TxBench::new(name, rows, span, hot_share, hot_keys, index))
    }
}

impl TxBench {
    /// Three tables of `rows` rows.
    pub fn new(
        name: &'static str,
        rows: u64,
        span: u64,
        hot_share: f64,
        hot_keys: u64,
        index: IndexKind,
    ) -> Result<Self, String> {
        if rows <= span {
            return Err(format!("{name}: {rows} rows per table leave no range of {span} rows"));
        }
        if hot_keys > rows {
            return Err(format!("{name}: a hot spot of {hot_keys} keys in {rows} rows"));
        }
        let names = ["TXBENCH-0", "TXBENCH-1", "TXBENCH-2"];
        let tables: Vec<Table> = TABLES
            .iter()
            .zip(names)
            .map(|(&id, name)| Table::with_index(name, id, WIDTH, rows as usize, index))
            .collect();
        for t in &tables {
            for k in 0..rows {
                t.load(k, &[k % 1000, 0, k, !k]).map_err(|e| e.to_string())?;
            }
        }
        Ok(TxBench {
            name,
            rows,
            span,
            hot_share,
            hot_keys,
            tables,
            committed_updates: Mutex::new(0),
            violations: AtomicU64::new(0),
        })
    }

    fn update_key(&self, rng: &mut SmallRng) -> u64 {
        if self.hot_share > 0.0 && rng.random::<f64>() < self.hot_share {
            rng.random_range(0..self.hot_keys)
        } else {
            rng.random_range(0..self.rows)
        }
    }
}

impl Workload for TxBench {
    type Input = Input;
    type Worker = Updates;

    fn name(&self) -> &'static str {
        self.name
    }

    fn transactions(&self) -> &'static [&'static str] {
        &["range", "update"]
    }

    fn worker(&self, _index: usize) -> Updates {
        Updates(0)
    }

    fn input(&self, kind: usize, _w: &Updates, rng: &mut SmallRng) -> Input {
        let i = rng.random_range(0..3);
        if kind == UPDATE {
            let a = self.update_key(rng);
            let b = loop {
                let b = self.update_key(rng);
                if b != a {
                    break b;
                }
            };
            Input::Update {
                t: (i + 1) % 3,
                a,
                b,
                value: rng.random(),
            }
        } else {
            Input::Range {
                t: i,
                id: rng.random_range(0..self.rows - self.span),
            }
        }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, w: &mut Updates, i: &Input) -> Result<Outcome, TxError> {
        match *i {
            Input::Range { t, id } => {
                let t = &self.tables[t];
                let mut sum = 0u64;
                let mut first = None;
                let mut last = (0, 0, 0);
                for key in id + 1..=id + self.span {
                    let slot = tx.find(t, key, Mode::S)?.expect("txbench rows are never deleted");
                    sum = sum.wrapping_add(t.get(slot, 0));
                    let seen = (slot, t.get(slot, 0), t.get(slot, 1));
                    first.get_or_insert(seen);
                    last = seen;
                }
                // The first and last rows read are still as read: the S
                // locks kept them.
                for (slot, value, version) in first.into_iter().chain([last]) {
                    if (t.get(slot, 0), t.get(slot, 1)) != (value, version) {
                        self.violations.fetch_add(1, Ordering::Relaxed);
                    }
                }
                std::hint::black_box(sum);
            }
            Input::Update { t, a, b, value } => {
                let t = &self.tables[t];
                for (k, key) in [a, b].into_iter().enumerate() {
                    let slot = tx.find(t, key, Mode::X)?.expect("txbench rows are never deleted");
                    tx.set(t, slot, 2, value ^ k as u64);
                    let v = t.get(slot, 1);
                    tx.set(t, slot, 1, v + 1);
                }
                w.0 += 1;
                tx.appended(0);
            }
        }
        Ok(Outcome::Committed)
    }

    fn undo_append(&self, w: &mut Updates, _log: usize) {
        w.0 -= 1;
    }

    fn retire(&self, w: Updates) {
        *self.committed_updates.lock() += w.0;
    }

    fn verify(&self) -> Result<String, String> {
        let bad = self.violations.load(Ordering::Relaxed);
        if bad > 0 {
            return Err(format!("{}: {bad} ranges saw a row change under its S lock", self.name));
        }
        let mut versions = 0u64;
        for t in &self.tables {
            let mut rows = 0;
            t.index.scan(.., |_, slot| {
                versions += t.get(slot as u32, 1);
                rows += 1;
                true
            });
            if rows != self.rows {
                return Err(format!("{}: {rows} rows in a table, expected {}", self.name, self.rows));
            }
        }
        let want = 2 * *self.committed_updates.lock();
        if versions != want {
            return Err(format!(
                "{}: the row versions add up to {versions}, but the committed updates made {want}",
                self.name
            ));
        }
        Ok(format!(
            "{}: 3 tables of {} rows; versions add up to twice the {} committed updates; every range repeatable",
            self.name,
            self.rows,
            want / 2
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::UndoLog;
    use heirloom::{LockId, LockManager, TableKind};
    use rand::SeedableRng;

    #[test]
    fn a_range_takes_s_on_each_row_and_an_update_x_on_two() {
        let db = TxBench::new("hotspot", 1000, 10, 1.0, 8, IndexKind::BTree).unwrap();
        for kind in TableKind::ALL {
            let lm = LockManager::builder().table(kind).build();
            let mut agent = lm.agent();
            let mut rng = SmallRng::seed_from_u64(3);
            let mut w = db.worker(0);
            for k in [RANGE, UPDATE] {
                let input = db.input(k, &w, &mut rng);
                let mut txn = agent.begin();
                let mut undo = UndoLog::default();
                {
                    let mut tx = Tx::new(&mut txn, &mut undo);
                    assert!(matches!(db.execute(&mut tx, &mut w, &input), Ok(Outcome::Committed)));
                }
                match input {
                    Input::Range { t, id } => {
                        assert_eq!(txn.held_mode(LockId::table(TABLES[t])), Some(Mode::IS), "{kind}");
                        assert_eq!(txn.lock_count(), 2 + 10, "{kind}");
                        assert_eq!(txn.held_mode(db.tables[t].row_lock(id + 10)), Some(Mode::S));
                        assert_eq!(txn.held_mode(db.tables[t].row_lock(id)), None);
                    }
                    Input::Update { t, a, b, .. } => {
                        assert!(a < 8 && b < 8 && a != b, "hot-share 1: both keys hot");
                        assert_eq!(txn.held_mode(LockId::table(TABLES[t])), Some(Mode::IX));
                        assert_eq!(txn.held_mode(db.tables[t].row_lock(a)), Some(Mode::X));
                        assert_eq!(txn.held_mode(db.tables[t].row_lock(b)), Some(Mode::X));
                    }
                }
                txn.commit().unwrap();
                undo.committed();
            }
        }
        db.retire(Updates(TableKind::ALL.len() as u64));
        assert_eq!(db.verify().map(|_| ()), Ok(()));
        db.violations.fetch_add(1, Ordering::Relaxed);
        assert!(db.verify().is_err());
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(TxBench::new("range", 10, 10, 0.0, 1, IndexKind::BTree).is_err());
        assert!(TxBench::new("range", 100, 10, 0.5, 101, IndexKind::BTree).is_err());
    }
}
