//! The workloads: each populates its tables, draws transaction inputs,
//! executes one transaction on a [`Tx`], and checks its consistency rules.

use crate::storage::{Outcome, Tx, TxError};
use rand::rngs::SmallRng;

pub mod tm1;
pub mod tpcb;
pub mod tpcc;
pub mod ycsb;

/// A transaction mix: transaction types with weights.
#[derive(Debug, Clone)]
pub struct Mix {
    /// Name as given on the command line.
    pub name: String,
    /// (transaction type, weight); weights need not add up to anything.
    pub weights: Vec<(usize, u32)>,
    total: u32,
}

impl Mix {
    /// A mix from weights; `None` if they are all zero.
    pub fn new(name: &str, weights: Vec<(usize, u32)>) -> Option<Mix> {
        let total = weights.iter().map(|w| w.1).sum();
        (total > 0).then(|| Mix {
            name: name.to_string(),
            weights,
            total,
        })
    }

    /// Draws a transaction type.
    #[inline]
    pub fn pick(&self, rng: &mut SmallRng) -> usize {
        use rand::RngExt;
        let mut x = rng.random_range(0..self.total);
        for &(t, w) in &self.weights {
            if x < w {
                return t;
            }
            x -= w;
        }
        self.weights[self.weights.len() - 1].0
    }
}

/// One workload on its populated database.
pub trait Workload: Send + Sync + 'static {
    /// One transaction's inputs (drawn once, kept across restarts).
    type Input: Send;
    /// Per-worker state (logs the worker owns, counters).
    type Worker: Send;

    /// Workload name (`tm1`, `tpcb`, `ycsb`).
    fn name(&self) -> &'static str;
    /// Names of its transaction types, indexed by type.
    fn transactions(&self) -> &'static [&'static str];
    /// The mix called `name`, or an error listing the known ones.
    fn mix(&self, name: &str) -> Result<Mix, String>;
    /// State for worker `index`.
    fn worker(&self, index: usize) -> Self::Worker;
    /// Draws the next transaction of type `kind`.
    fn input(&self, kind: usize, worker: &Self::Worker, rng: &mut SmallRng) -> Self::Input;
    /// Runs one transaction. On a business failure it returns
    /// `Ok(Outcome::Failed)` and the caller rolls back; on an error the
    /// caller rolls back and the lock manager aborts.
    fn execute<'d>(
        &'d self,
        tx: &mut Tx<'_, '_, 'd>,
        worker: &mut Self::Worker,
        input: &Self::Input,
    ) -> Result<Outcome, TxError>;
    /// Undoes the newest append to worker log `log`.
    fn undo_append(&self, worker: &mut Self::Worker, log: usize);
    /// Hands back a worker's state at the end of a run (for `verify`).
    fn retire(&self, worker: Self::Worker);
    /// Checks the consistency rules on the quiescent database; a summary of
    /// what was checked, or the first violation.
    fn verify(&self) -> Result<String, String>;
}
