//! heirloom-bench: in-memory tables, the TM1, TPC-B, TPC-C and YCSB
//! benchmarks on heirloom, and the sweep behind the `heirloom` command.
//!
//! Layers, each calling only the ones below it:
//!
//! ```text
//!   main.rs   the command: flags -> Spec, progress, printing, files
//!   lib.rs    plan(spec), sweep(spec): look the benchmark up, then
//!   workload  REGISTRY; tm1, tpcb, tpcc, ycsb: each a Benchmark that
//!             loads its database, a Workload
//!   sweep     Benchmark, Spec -> Plan, rounds of configurations, medians,
//!             verify after each run
//!   runner    Workload, Mix; one configuration: a lock manager, worker
//!             threads, the counts
//!   storage   tables, Tx (row locks + undo), the lock-time breakdown
//!   report    table, JSON, CSV, plot, side-by-side summaries (RunResult only)
//!   results   what a run reports (RunResult and its parts; a leaf)
//!   options   a benchmark's own `--opt key=value` (a leaf)
//!   mix       a transaction mix, drawn by weight (a leaf)
//!   elision   what a run on an elided table reports (a leaf)
//!   counters  instructions, cycles, CPU time per transaction of a run's
//!             measured interval (`--counters`; a leaf)
//!   sharing   shared-line writes per transaction and where (`--sharing`,
//!             heirloom's instrument; a leaf)
//! ```
//!
//! A sweep populates one database (or one per run, for benchmarks whose
//! tables grow) and runs the cross product of lock table kinds, SLI
//! settings, conflict policies and thread counts on it, each with a fresh
//! lock manager, optionally checking the benchmark's consistency rules
//! after every run.

#![warn(missing_docs)]

pub mod counters;
pub mod demo;
pub mod elision;
pub mod figures;
pub mod mix;
pub mod options;
pub mod report;
pub mod results;
pub mod runner;
pub mod sharing;
pub mod storage;
pub mod sweep;
pub mod workload;

pub use report::{sli_summary, table_summary};
pub use sweep::{BenchError, Benchmark, Plan, Spec, configs};
pub use workload::REGISTRY;

use runner::RunResult;
use std::time::Duration;

/// Finds `spec.workload` in the registry and checks everything that does
/// not need the database.
pub fn plan(spec: &Spec) -> Result<Plan, BenchError> {
    sweep::plan(workload::find(&spec.workload).map_err(BenchError::Usage)?, spec)
}

/// Plans and runs a sweep (see [`sweep::run`]).
pub fn sweep(
    spec: &Spec,
    progress: &mut dyn FnMut(Option<&RunResult>, Duration),
) -> Result<Vec<RunResult>, BenchError> {
    sweep::run(spec, plan(spec)?, progress)
}
