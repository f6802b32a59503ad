//! YCSB as the concurrency-control testbeds (DBx1000) run it: one table of
//! N rows with a 100-byte payload, transactions of 16 requests, each a read
//! (S lock, read the row) or a write (X lock, update the row), keys drawn
//! from a Zipfian distribution with parameter theta (0 = uniform).
//!
//! Word 0 of every row counts the writes it received, so after a run the
//! sum of the counters must equal the committed writes.
//!
//! Keys: the 16 keys of a transaction are distinct, as DBx1000 draws them
//! (a repeated key would turn a read and a write of one row into an S to X
//! upgrade, a deadlock neither YCSB nor DBx1000 has); `repeat-keys` allows
//! repeats again. `order-keys` sorts each transaction's keys, the classic
//! deadlock-avoidance variant: with every transaction locking in key order
//! no wait cycle can form, so waiting without detection can be compared.

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, PREGEN, Retry, RunResult, Workload};
use crate::storage::{IndexKind, Outcome, Table, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Profile, Scale, ScaleArg, Sweep};
use crate::workload::{INDEX, index_kind};
use heirloom::{ConflictPolicy, Mode, TableId};
use parking_lot::Mutex;
use rand::RngExt;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, Zipf};

/// The YCSB table.
pub const USERTABLE: TableId = TableId::new(3, 1);
/// Requests per transaction.
pub const REQUESTS: usize = 16;
/// Row width in words: a counter and 96 bytes of payload (104 bytes).
pub const WIDTH: usize = 13;

/// One YCSB transaction: 16 (key, is_write) requests.
#[derive(Debug, Clone, Copy)]
pub struct Input {
    /// The requests.
    pub requests: [(u64, bool); REQUESTS],
}

/// Per-worker count of writes made by its committed transactions.
#[derive(Debug, Default)]
pub struct Writes(u64);

/// How a transaction's keys are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Draw {
    /// Keys may repeat within a transaction.
    pub repeat_keys: bool,
    /// Requests are made in key order.
    pub order_keys: bool,
}

/// The YCSB database.
pub struct Ycsb {
    rows: u64,
    read_share: f64,
    draw: Draw,
    zipf: Option<Zipf<f64>>,
    /// Writes read the row first, locking it in this mode (S or U), then
    /// lock it X (`--opt rmw`); `None`: writes lock X at once.
    rmw: Option<Mode>,
    /// The table.
    pub table: Table,
    committed_writes: Mutex<u64>,
}

impl std::fmt::Debug for Ycsb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ycsb")
            .field("rows", &self.rows)
            .field("read_share", &self.read_share)
            .finish_non_exhaustive()
    }
}

impl Ycsb {
    /// Bytes needed (for the memory check).
    pub fn estimate_bytes(rows: u64) -> u64 {
        Table::estimate_bytes(WIDTH, rows as usize)
    }

    /// `rows` rows; requests read with probability `read_share`; keys
    /// Zipfian with `theta` (0: uniform), drawn as `draw` says. Errors on
    /// parameters out of range.
    pub fn new(rows: u64, theta: f64, read_share: f64, draw: Draw, index: IndexKind) -> Result<Self, String> {
        if rows == 0 {
            return Err("ycsb: rows must be positive".into());
        }
        if !draw.repeat_keys && rows < REQUESTS as u64 {
            return Err(format!(
                "ycsb: {rows} rows cannot give {REQUESTS} distinct keys per transaction (--opt repeat-keys allows repeats)"
            ));
        }
        if !(0.0..=1.0).contains(&read_share) {
            return Err(format!("ycsb: read-share {read_share} is not between 0 and 1"));
        }
        if !(0.0..10.0).contains(&theta) {
            return Err(format!("ycsb: theta {theta} is not in [0, 10)"));
        }
        let zipf = if theta == 0.0 {
            None
        } else {
            Some(Zipf::new(rows as f64, theta).map_err(|e| format!("ycsb: theta {theta}: {e}"))?)
        };
        let table = Table::with_index("USERTABLE", USERTABLE, WIDTH, rows as usize, index);
        let mut fields = [0u64; WIDTH];
        for k in 0..rows {
            for (i, f) in fields.iter_mut().enumerate().skip(1) {
                *f = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64;
            }
            table.load(k, &fields).expect("sized");
        }
        Ok(Ycsb {
            rows,
            read_share,
            draw,
            zipf,
            rmw: None,
            table,
            committed_writes: Mutex::new(0),
        })
    }

    /// Makes every write a read-modify-write: the row is read under `read`
    /// (S: the S-to-X conversion that two writers of one row deadlock on;
    /// U: update mode, which queues the second writer at the read), then
    /// locked X and written. `None` (the default) locks X at once.
    pub fn read_modify_write(mut self, read: Option<Mode>) -> Self {
        self.rmw = read;
        self
    }

    /// Writes committed by retired workers.
    pub fn committed_writes(&self) -> u64 {
        *self.committed_writes.lock()
    }
}

/// The YCSB benchmark: `--scale` rows, options `theta` and `read-share`.
#[derive(Debug)]
pub struct YcsbBench;

/// YCSB in the registry.
pub static YCSB: YcsbBench = YcsbBench;

impl Benchmark for YcsbBench {
    fn name(&self) -> &'static str {
        "ycsb"
    }
    fn about(&self) -> &'static str {
        "YCSB as DBx1000 runs it: 16 reads or writes per transaction on one table, Zipfian keys"
    }
    fn scale(&self) -> Scale {
        Scale {
            unit: "rows",
            default: ScaleArg::Total(1_000_000),
            max: 1 << 40,
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        &["requests"]
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose("ycsb", name, &[("requests", &[(0, 1)])], &[])
            .map_err(|e| format!("{e}; the read share and skew are options: --opt read-share=X --opt theta=X"))
    }
    fn read_only(&self, _mix: &Mix, options: &Options) -> bool {
        options.real("read-share") >= 1.0
    }
    fn options(&self) -> &'static [Opt] {
        &[
            Opt {
                name: "theta",
                help: "Zipf skew of the keys (0: uniform)",
                kind: Kind::Real {
                    min: 0.0,
                    max: 10.0,
                    max_included: false,
                },
                default: "0",
                alias: Some("--theta"),
            },
            Opt {
                name: "read-share",
                help: "share of requests that read",
                kind: Kind::Real {
                    min: 0.0,
                    max: 1.0,
                    max_included: true,
                },
                default: "0.5",
                alias: Some("--read-share"),
            },
            Opt {
                name: "repeat-keys",
                help: "let a transaction draw the same key twice (an S to X upgrade when read, then written)",
                kind: Kind::Flag,
                default: "false",
                alias: None,
            },
            Opt {
                name: "rmw",
                help: "writes read first: off (X at once), s (S then X: conversion deadlocks) or u (U then X)",
                kind: Kind::Choice(&["off", "s", "u"]),
                default: "off",
                alias: None,
            },
            Opt {
                name: "order-keys",
                help: "make each transaction's requests in key order (no wait cycles)",
                kind: Kind::Flag,
                default: "false",
                alias: None,
            },
            INDEX,
        ]
    }
    fn profiles(&self) -> &'static [Profile] {
        &[Profile {
            name: "dbx1000",
            about: "DBx1000's YCSB as compared in the README: 2^20 rows, 16 distinct keys, half writes, theta 0.9, hash index; its three 2PL variants, no SLI, aborted transactions deferred as its abort buffer does, inputs drawn before the clock starts (--pregen 32768)",
            mix: None,
            scale: Some(ScaleArg::Total(1 << 20)),
            options: &[("theta", "0.9"), ("read-share", "0.5"), ("index", "hash")],
            policies: &[ConflictPolicy::NoWait, ConflictPolicy::WaitDie, ConflictPolicy::Detect],
            sli: &[false],
            retry: Some(Retry::Defer),
            pregen: Some(PREGEN),
        }]
    }
    fn estimate_bytes(&self, scale: u64, _options: &Options) -> u64 {
        Ycsb::estimate_bytes(scale)
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        let o = sweep.options();
        let (theta, read_share) = (o.real("theta"), o.real("read-share"));
        let draw = Draw {
            repeat_keys: o.flag("repeat-keys"),
            order_keys: o.flag("order-keys"),
        };
        let index = index_kind(o);
        let rmw = match o.choice("rmw") {
            "s" => Some(Mode::S),
            "u" => Some(Mode::U),
            _ => None,
        };
        sweep.on_one_db(&|n| Ycsb::new(n, theta, read_share, draw, index).map(|y| y.read_modify_write(rmw)))
    }
}

impl Workload for Ycsb {
    type Input = Input;
    type Worker = Writes;

    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn transactions(&self) -> &'static [&'static str] {
        &["requests"]
    }

    fn worker(&self, _index: usize) -> Writes {
        Writes(0)
    }

    fn input(&self, _kind: usize, _w: &Self::Worker, rng: &mut SmallRng) -> Input {
        let mut requests = [(0, false); REQUESTS];
        for i in 0..REQUESTS {
            let key = loop {
                let key = match &self.zipf {
                    None => rng.random_range(0..self.rows),
                    Some(z) => (z.sample(rng) as u64).clamp(1, self.rows) - 1,
                };
                // Redraw a repeat, as DBx1000 does (at most 15 compares;
                // `new` checked that 16 distinct keys exist).
                if self.draw.repeat_keys || !requests[..i].iter().any(|r| r.0 == key) {
                    break key;
                }
            };
            requests[i] = (key, rng.random::<f64>() >= self.read_share);
        }
        if self.draw.order_keys {
            requests.sort_unstable_by_key(|r| r.0);
        }
        Input { requests }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, w: &mut Writes, i: &Input) -> Result<Outcome, TxError> {
        let t = &self.table;
        let mut sum = 0u64;
        for &(key, write) in &i.requests {
            let mode = if write { Mode::X } else { Mode::S };
            if write && let Some(read) = self.rmw {
                let slot = tx.find(t, key, read)?.expect("YCSB rows are never deleted");
                sum = sum.wrapping_add(t.get(slot, 0));
            }
            let slot = tx.find(t, key, mode)?.expect("YCSB rows are never deleted");
            if write {
                let c = t.get(slot, 0);
                tx.set(t, slot, 0, c + 1);
                tx.set(t, slot, 1 + (c as usize % (WIDTH - 1)), key ^ c);
                w.0 += 1;
                tx.appended(0);
            } else {
                for f in 0..WIDTH {
                    sum = sum.wrapping_add(t.get(slot, f));
                }
            }
        }
        std::hint::black_box(sum);
        Ok(Outcome::Committed)
    }

    fn undo_append(&self, w: &mut Writes, _log: usize) {
        w.0 -= 1;
    }

    fn retire(&self, w: Writes) {
        *self.committed_writes.lock() += w.0;
    }

    fn verify(&self) -> Result<String, String> {
        let mut sum = 0u64;
        let mut rows = 0u64;
        self.table.index.scan(.., |_, slot| {
            sum += self.table.get(slot as u32, 0);
            rows += 1;
            true
        });
        let want = self.committed_writes();
        if rows != self.rows {
            return Err(format!("ycsb: {rows} rows, expected {}", self.rows));
        }
        if sum != want {
            return Err(format!(
                "ycsb: the write counters add up to {sum}, but {want} writes committed"
            ));
        }
        Ok(format!(
            "ycsb: {rows} rows; write counters add up to the {want} committed writes"
        ))
    }
}
