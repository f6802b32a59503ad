//! picotm's transactional-memory benchmark ("Scaling Lock Performance",
//! picotm 0.7): a shared buffer of 1 KiB split into 8-byte records; every
//! transaction makes `loads` random loads and then `stores` random stores,
//! under two-phase locking on the records (the records are the rows of one
//! table). `locks=x` takes X for loads and stores alike (picotm 0.6's
//! exclusive locks), `locks=rw` S for loads and X for stores (0.7's
//! reader/writer locks; a record loaded and then stored is upgraded). The
//! post's other steps are lock manager settings of every run: restart at
//! once (`--policy nowait`), exclusive mode after N restarts
//! (`--exclusive-after N`, `never` to leave it out), and waiting with a
//! timeout (`--policy timeout=MS`).
//!
//! Consistency: every store bumps its record's version, so after a run the
//! versions add up to the stores of committed transactions; and every
//! transaction loads its records again just before it commits: a record
//! that changed under its lock (and that the transaction did not store
//! itself) is a violation, counted and reported by `verify`.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, RunResult, Workload};
use crate::storage::{IndexKind, Outcome, Table, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Scale, ScaleArg, Sweep};
use heirloom::{Mode, TableId};
use parking_lot::Mutex;
use rand::RngExt;
use rand::rngs::SmallRng;

/// The buffer's table.
pub const BUFFER: TableId = TableId::new(10, 1);
/// Bytes per record.
pub const RECORD_BYTES: u64 = 8;

/// One transaction's record numbers.
#[derive(Debug, Clone)]
pub struct Input {
    loads: Vec<u32>,
    stores: Vec<u32>,
}

/// Stores made by a worker's committed transactions, and its scratch for
/// the repeatable-read check (kept across transactions: no allocation per
/// transaction).
#[derive(Debug, Default)]
pub struct Stores {
    committed: u64,
    seen: Vec<(u32, u64, u64)>,
    stored: Vec<u32>,
}

/// The buffer.
#[derive(Debug)]
pub struct Tm {
    records: u64,
    loads: usize,
    stores: usize,
    load_mode: Mode,
    table: Table,
    committed_stores: Mutex<u64>,
    violations: AtomicU64,
}

/// The `tm` benchmark.
#[derive(Debug)]
pub struct TmBench;

/// `tm` in the registry.
pub static TM: TmBench = TmBench;

impl Benchmark for TmBench {
    fn name(&self) -> &'static str {
        "tm"
    }
    fn about(&self) -> &'static str {
        "picotm's transactional-memory benchmark: random loads then stores on 8-byte records of a 1 KiB buffer, 2PL on records"
    }
    fn counts(&self) -> &'static str {
        "txn/s: committed transactions (commits/s); aborts/s: restarts; excl/s: exclusive-mode runs"
    }
    fn scale(&self) -> Scale {
        Scale {
            unit: "bytes of buffer",
            default: ScaleArg::Total(1024),
            max: 1 << 30,
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        &["load-store"]
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose("tm", name, &[("load-store", &[(0, 1)])], &[])
    }
    fn options(&self) -> &'static [Opt] {
        &[
            Opt {
                name: "loads",
                help: "random loads per transaction",
                kind: Kind::Int { min: 0, max: 100_000 },
                default: "50",
                alias: None,
            },
            Opt {
                name: "stores",
                help: "random stores per transaction, after the loads",
                kind: Kind::Int { min: 0, max: 100_000 },
                default: "50",
                alias: None,
            },
            Opt {
                name: "locks",
                help: "rw: S for loads and X for stores (picotm 0.7); x: X for both (picotm 0.6)",
                kind: Kind::Choice(&["rw", "x"]),
                default: "rw",
                alias: None,
            },
        ]
    }
    fn estimate_bytes(&self, scale: u64, _options: &Options) -> u64 {
        Table::estimate_bytes(2, (scale / RECORD_BYTES).max(1) as usize)
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        let o = sweep.options();
        let (loads, stores) = (o.int("loads") as usize, o.int("stores") as usize);
        let load_mode = if o.choice("locks") == "x" { Mode::X } else { Mode::S };
        sweep.on_one_db(&|bytes| Tm::new(bytes, loads, stores, load_mode))
    }
}

impl Tm {
    /// A buffer of `bytes` (whole records of 8 bytes, at least one).
    pub fn new(bytes: u64, loads: usize, stores: usize, load_mode: Mode) -> Result<Self, String> {
        let records = bytes / RECORD_BYTES;
        if records == 0 {
            return Err(format!("tm: a buffer of {bytes} bytes holds no 8-byte record"));
        }
        if loads + stores == 0 {
            return Err("tm: a transaction needs at least one load or store".into());
        }
        let table = Table::with_index("BUFFER", BUFFER, 2, records as usize, IndexKind::Hash);
        for r in 0..records {
            table.load(r, &[r, 0]).map_err(|e| e.to_string())?;
        }
        Ok(Tm {
            records,
            loads,
            stores,
            load_mode,
            table,
            committed_stores: Mutex::new(0),
            violations: AtomicU64::new(0),
        })
    }

    /// Loads that saw a record change under their lock.
    pub fn violations(&self) -> u64 {
        self.violations.load(Ordering::Relaxed)
    }
}

impl Workload for Tm {
    type Input = Input;
    type Worker = Stores;

    fn name(&self) -> &'static str {
        "tm"
    }

    fn transactions(&self) -> &'static [&'static str] {
        &["load-store"]
    }

    fn worker(&self, _index: usize) -> Stores {
        Stores::default()
    }

    fn input(&self, _kind: usize, _w: &Stores, rng: &mut SmallRng) -> Input {
        let n = self.records as u32;
        Input {
            loads: (0..self.loads).map(|_| rng.random_range(0..n)).collect(),
            stores: (0..self.stores).map(|_| rng.random_range(0..n)).collect(),
        }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, w: &mut Stores, i: &Input) -> Result<Outcome, TxError> {
        let t = &self.table;
        let Stores {
            committed,
            seen,
            stored,
        } = w;
        seen.clear();
        stored.clear();
        for &r in &i.loads {
            let slot = tx
                .find(t, r as u64, self.load_mode)?
                .expect("buffer records are never deleted");
            seen.push((slot, t.get(slot, 0), t.get(slot, 1)));
        }
        for (k, &r) in i.stores.iter().enumerate() {
            let slot = tx
                .find(t, r as u64, Mode::X)?
                .expect("buffer records are never deleted");
            stored.push(slot);
            let version = t.get(slot, 1);
            tx.set(t, slot, 0, version.wrapping_mul(31) ^ k as u64);
            tx.set(t, slot, 1, version + 1);
            *committed += 1;
            tx.appended(0);
        }
        // Repeatable reads: what was loaded is still there, unless this
        // transaction stored it since.
        stored.sort_unstable();
        for &(slot, value, version) in seen.iter() {
            let now = (t.get(slot, 0), t.get(slot, 1));
            if now != (value, version) && stored.binary_search(&slot).is_err() {
                self.violations.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(Outcome::Committed)
    }

    fn undo_append(&self, w: &mut Stores, _log: usize) {
        w.committed -= 1;
    }

    fn retire(&self, w: Stores) {
        *self.committed_stores.lock() += w.committed;
    }

    fn verify(&self) -> Result<String, String> {
        let mut versions = 0u64;
        for r in 0..self.records {
            let slot = self
                .table
                .index
                .get(r)
                .ok_or_else(|| format!("tm: record {r} is missing"))?;
            versions += self.table.get(slot as u32, 1);
        }
        let want = *self.committed_stores.lock();
        let bad = self.violations();
        if bad > 0 {
            return Err(format!("tm: {bad} loads saw their record change under their lock"));
        }
        if versions != want {
            return Err(format!(
                "tm: the record versions add up to {versions}, but {want} stores committed"
            ));
        }
        Ok(format!(
            "tm: {} records; versions add up to the {want} committed stores; every load repeatable",
            self.records
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::UndoLog;
    use heirloom::{LockManager, TableKind};
    use rand::SeedableRng;

    #[test]
    fn loads_then_stores_with_the_modes_asked_for() {
        for (mode, kind) in [
            (Mode::S, TableKind::Latched),
            (Mode::X, TableKind::Server { partitions: 1 }),
        ] {
            let tm = Tm::new(1024, 5, 3, mode).unwrap();
            assert_eq!(tm.records, 128);
            let lm = LockManager::builder().table(kind).build();
            let mut agent = lm.agent();
            let mut w = tm.worker(0);
            let mut rng = SmallRng::seed_from_u64(7);
            let input = tm.input(0, &w, &mut rng);
            assert_eq!((input.loads.len(), input.stores.len()), (5, 3));
            let mut txn = agent.begin();
            let mut undo = UndoLog::default();
            {
                let mut tx = Tx::new(&mut txn, &mut undo);
                assert!(matches!(tm.execute(&mut tx, &mut w, &input), Ok(Outcome::Committed)));
            }
            for &r in &input.loads {
                let held = txn.held_mode(tm.table.row_lock(r as u64)).unwrap();
                assert!(held.covers(mode), "{mode:?} load held as {held:?}");
            }
            for &r in &input.stores {
                assert_eq!(txn.held_mode(tm.table.row_lock(r as u64)), Some(Mode::X));
            }
            txn.commit().unwrap();
            undo.committed();
            tm.retire(w);
            assert_eq!(tm.verify().map(|_| ()), Ok(()));
        }
    }

    #[test]
    fn verify_catches_a_lost_store_and_a_changed_load() {
        let tm = Tm::new(64, 1, 1, Mode::S).unwrap();
        // A store nobody committed.
        tm.table.put(3, 1, 1);
        assert!(tm.verify().is_err());
        tm.table.put(3, 1, 0);
        assert!(tm.verify().is_ok());
        tm.violations.fetch_add(1, Ordering::Relaxed);
        assert!(tm.verify().unwrap_err().contains("change"));
        assert!(Tm::new(7, 1, 1, Mode::S).is_err());
        assert!(Tm::new(64, 0, 0, Mode::S).is_err());
    }
}
