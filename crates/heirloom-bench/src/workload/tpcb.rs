//! TPC-B: one transaction type that moves a delta through an account, a
//! teller and a branch and appends a HISTORY row (TPC-B clauses 1.2, 4.2).
//!
//! Balances are stored as two's-complement `i64` in a `u64` word. HISTORY is
//! append-only and never read by the transaction, so each worker appends to
//! its own segment (no shared tail to latch); an X lock on the new history
//! row's key (worker, sequence) keeps the locking honest.
//!
//! HISTORY is bounded: a segment keeps its newest [`SEGMENT_ROWS`] rows and
//! folds older ones (all committed) into per-branch sums of their deltas,
//! which is all the consistency check reads. So a long run, or a sweep of
//! many runs on one database, holds a fixed amount of history.
//!
//! Scale: by default one branch per worker thread (`--scale 1/thread`), as
//! TPC-B scales its database with the load (clause 4.2); `--scale N` fixes
//! N branches for every run (`--scale 1`: every transaction updates the
//! same branch row, one hot lock).

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, RunResult, Workload};
use crate::storage::{IndexKind, Outcome, Table, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Scale, ScaleArg, Sweep};
use crate::workload::{INDEX, index_kind};
use heirloom::{Mode, TableId};
use parking_lot::Mutex;
use rand::RngExt;
use rand::rngs::SmallRng;

/// BRANCH.
pub const BRANCH: TableId = TableId::new(2, 1);
/// TELLER.
pub const TELLER: TableId = TableId::new(2, 2);
/// ACCOUNT.
pub const ACCOUNT: TableId = TableId::new(2, 3);
/// HISTORY (locked per row; rows live in worker segments).
pub const HISTORY: TableId = TableId::new(2, 4);

/// Tellers per branch (clause 4.2).
pub const TELLERS_PER_BRANCH: u64 = 10;
/// Accounts per branch in the specification (clause 4.2); `Tpcb::new` takes
/// a smaller number for small machines.
pub const ACCOUNTS_PER_BRANCH: u64 = 100_000;

const BALANCE: usize = 0;

/// One TPC-B transaction's inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// Account id.
    pub account: u64,
    /// Teller id.
    pub teller: u64,
    /// The teller's branch.
    pub branch: u64,
    /// Amount added to the three balances.
    pub delta: i64,
}

/// A HISTORY row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct History {
    /// Account.
    pub account: u64,
    /// Teller.
    pub teller: u64,
    /// Branch.
    pub branch: u64,
    /// Delta.
    pub delta: i64,
}

/// HISTORY rows a worker keeps before folding them into sums.
pub const SEGMENT_ROWS: usize = 4096;

/// History folded into sums: rows and the sum of their deltas per branch.
#[derive(Debug, Default, Clone)]
pub struct Folded {
    /// Rows folded.
    pub rows: u64,
    /// Sum of the folded deltas, per branch.
    pub per_branch: Vec<i128>,
}

impl Folded {
    fn add(&mut self, r: &History) {
        if self.per_branch.len() <= r.branch as usize {
            self.per_branch.resize(r.branch as usize + 1, 0);
        }
        self.per_branch[r.branch as usize] += r.delta as i128;
        self.rows += 1;
    }

    fn merge(&mut self, other: &Folded) {
        if self.per_branch.len() < other.per_branch.len() {
            self.per_branch.resize(other.per_branch.len(), 0);
        }
        for (a, b) in self.per_branch.iter_mut().zip(&other.per_branch) {
            *a += b;
        }
        self.rows += other.rows;
    }
}

/// A worker's HISTORY segment: its newest rows and the sums of older ones.
#[derive(Debug, Default)]
pub struct Segment {
    index: usize,
    rows: Vec<History>,
    folded: Folded,
}

/// The TPC-B database.
pub struct Tpcb {
    branches: u64,
    accounts_per_branch: u64,
    /// BRANCH, keyed by branch id 0..B.
    pub branch: Table,
    /// TELLER, keyed by teller id 0..10B (teller t belongs to branch t / 10).
    pub teller: Table,
    /// ACCOUNT, keyed by account id (account a belongs to branch a / accounts_per_branch).
    pub account: Table,
    history: Mutex<Folded>,
}

impl std::fmt::Debug for Tpcb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tpcb")
            .field("branches", &self.branches)
            .finish_non_exhaustive()
    }
}

impl Tpcb {
    /// Bytes needed (for the memory check).
    pub fn estimate_bytes(branches: u64, accounts_per_branch: u64) -> u64 {
        let accounts = usize::try_from(branches.saturating_mul(accounts_per_branch)).unwrap_or(usize::MAX);
        Table::estimate_bytes(1, accounts)
            .saturating_add(Table::estimate_bytes(1, (branches * (TELLERS_PER_BRANCH + 1)) as usize))
    }

    /// `branches` branches with all balances 0, the three tables indexed by
    /// `index`.
    pub fn new(branches: u64, accounts_per_branch: u64, index: IndexKind) -> Self {
        let branch = Table::with_index("BRANCH", BRANCH, 1, branches as usize, index);
        let teller = Table::with_index("TELLER", TELLER, 1, (branches * TELLERS_PER_BRANCH) as usize, index);
        let account = Table::with_index("ACCOUNT", ACCOUNT, 1, (branches * accounts_per_branch) as usize, index);
        for b in 0..branches {
            branch.load(b, &[0]).expect("sized");
        }
        for t in 0..branches * TELLERS_PER_BRANCH {
            teller.load(t, &[0]).expect("sized");
        }
        for a in 0..branches * accounts_per_branch {
            account.load(a, &[0]).expect("sized");
        }
        Tpcb {
            branches,
            accounts_per_branch,
            branch,
            teller,
            account,
            history: Mutex::new(Folded::default()),
        }
    }

    /// The HISTORY of finished workers, folded: rows and delta per branch.
    pub fn history(&self) -> Folded {
        self.history.lock().clone()
    }
}

/// Adds `delta` to the balance of row `key` (X lock first); the new balance.
fn add<'d>(tx: &mut Tx<'_, '_, 'd>, t: &'d Table, key: u64, delta: i64) -> Result<i64, TxError> {
    let slot = tx.find(t, key, Mode::X)?.expect("TPC-B rows are never deleted");
    let v = (t.get(slot, BALANCE) as i64).wrapping_add(delta);
    tx.set(t, slot, BALANCE, v as u64);
    Ok(v)
}

/// The TPC-B benchmark: `--scale` branches, option `accounts`.
#[derive(Debug)]
pub struct TpcbBench;

/// TPC-B in the registry.
pub static TPCB: TpcbBench = TpcbBench;

impl Benchmark for TpcbBench {
    fn name(&self) -> &'static str {
        "tpcb"
    }
    fn about(&self) -> &'static str {
        "TPC-B: account, teller and branch updated by one delta, a HISTORY row appended"
    }
    fn scale(&self) -> Scale {
        Scale {
            unit: "branches",
            default: ScaleArg::PerThread(1),
            max: 1 << 20,
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        &["account-update"]
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose("tpcb", name, &[("account-update", &[(0, 1)])], &[])
    }
    fn options(&self) -> &'static [Opt] {
        &[
            Opt {
                name: "accounts",
                help: "accounts per branch (the specification's 100,000)",
                kind: Kind::Int { min: 1, max: 1 << 32 },
                default: "100000",
                alias: Some("--accounts"),
            },
            INDEX,
        ]
    }
    fn estimate_bytes(&self, scale: u64, options: &Options) -> u64 {
        Tpcb::estimate_bytes(scale, options.int("accounts"))
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        let (accounts, index) = (sweep.options().int("accounts"), index_kind(sweep.options()));
        sweep.on_one_db(&|n| Ok(Tpcb::new(n, accounts, index)))
    }
}

impl Workload for Tpcb {
    type Input = Input;
    type Worker = Segment;

    fn name(&self) -> &'static str {
        "tpcb"
    }

    fn transactions(&self) -> &'static [&'static str] {
        &["account-update"]
    }

    fn worker(&self, index: usize) -> Segment {
        Segment {
            index,
            rows: Vec::with_capacity(SEGMENT_ROWS),
            folded: Folded::default(),
        }
    }

    fn input(&self, _kind: usize, _w: &Self::Worker, rng: &mut SmallRng) -> Input {
        // Clause 5.3: a random teller, its branch; the account from that
        // branch with probability 85%, else from another branch (if any).
        let teller = rng.random_range(0..self.branches * TELLERS_PER_BRANCH);
        let branch = teller / TELLERS_PER_BRANCH;
        let account_branch = if self.branches > 1 && rng.random_range(0..100) >= 85 {
            let other = rng.random_range(0..self.branches - 1);
            if other >= branch { other + 1 } else { other }
        } else {
            branch
        };
        let account = account_branch * self.accounts_per_branch + rng.random_range(0..self.accounts_per_branch);
        Input {
            account,
            teller,
            branch,
            delta: rng.random_range(-999_999..=999_999),
        }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, w: &mut Segment, i: &Input) -> Result<Outcome, TxError> {
        // Clause 1.2: account, read its balance, teller, branch, history.
        let balance = add(tx, &self.account, i.account, i.delta)?;
        std::hint::black_box(balance);
        add(tx, &self.teller, i.teller, i.delta)?;
        add(tx, &self.branch, i.branch, i.delta)?;
        if w.rows.len() == SEGMENT_ROWS {
            // One append per transaction: every row here is committed.
            for r in w.rows.drain(..) {
                w.folded.add(&r);
            }
        }
        let seq = w.folded.rows + w.rows.len() as u64;
        let key = ((w.index as u64) << 40) | seq;
        tx.lock_id(heirloom::LockId::row(HISTORY, key), Mode::X)?;
        w.rows.push(History {
            account: i.account,
            teller: i.teller,
            branch: i.branch,
            delta: i.delta,
        });
        tx.appended(0);
        Ok(Outcome::Committed)
    }

    fn undo_append(&self, w: &mut Segment, _log: usize) {
        w.rows.pop();
    }

    fn retire(&self, mut w: Segment) {
        for r in w.rows.drain(..) {
            w.folded.add(&r);
        }
        self.history.lock().merge(&w.folded);
    }

    fn verify(&self) -> Result<String, String> {
        let sum = |t: &Table| {
            let mut per = Vec::new();
            t.index.scan(.., |k, slot| {
                per.push((k, t.get(slot as u32, BALANCE) as i64));
                true
            });
            per
        };
        let branches = sum(&self.branch);
        let tellers = sum(&self.teller);
        let accounts = sum(&self.account);
        let history = self.history();
        let total = |v: &[(u64, i64)]| v.iter().map(|x| x.1 as i128).sum::<i128>();
        let (b, t, a) = (total(&branches), total(&tellers), total(&accounts));
        let h: i128 = history.per_branch.iter().sum();
        if !(b == t && t == a && a == h) {
            return Err(format!(
                "tpcb: balances disagree: branches {b}, tellers {t}, accounts {a}, history {h} ({} rows)",
                history.rows
            ));
        }
        let mut per_teller_branch = vec![0i128; self.branches as usize];
        for &(k, v) in &tellers {
            per_teller_branch[(k / TELLERS_PER_BRANCH) as usize] += v as i128;
        }
        if history.per_branch.len() > self.branches as usize {
            return Err(format!(
                "tpcb: history names branch {}, beyond the {} branches",
                history.per_branch.len() - 1,
                self.branches
            ));
        }
        for &(k, v) in &branches {
            let hb = history.per_branch.get(k as usize).copied().unwrap_or(0);
            let tb = per_teller_branch[k as usize];
            if v as i128 != tb || tb != hb {
                return Err(format!(
                    "tpcb: branch {k}: balance {v}, its tellers {tb}, its history {hb}"
                ));
            }
        }
        Ok(format!(
            "tpcb: {} branches: sum(account) = sum(teller) = sum(branch) = sum(history) = {a} over {} history rows, and per branch",
            self.branches, history.rows
        ))
    }
}
