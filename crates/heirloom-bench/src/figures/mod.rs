//! `heirloom figures`: the papers' evaluations, regenerated on this machine
//! and set against what each paper reported.
//!
//! A [`Figure`] names the paper's figure, says what the paper measured and
//! found (with its numbers, from `shared/papers/`), lists the sweeps that
//! measure the same thing here ([`Part`]s: a [`Spec`] each, quick or full),
//! and reads the runs: the series to draw, the same numbers read off ours,
//! and a verdict computed by a stated rule ([`Reading`]). Nothing in a
//! verdict is written by hand: the rule is code, and its text is printed
//! beside the verdict.
//!
//! [`FIGURES`] is the registry; a new figure is one entry there.

use std::path::Path;
use std::time::Duration;

use heirloom::{ConflictPolicy, TableKind};
use plotters::prelude::*;

use crate::report::{self, ReportError};
use crate::runner::{Retry, RunResult};
use crate::sweep::{ScaleArg, Spec};

mod index;
mod registry;
mod render;
mod rules;

pub use registry::FIGURES;
pub use render::{Done, draw, html, markdown, write_samples};

/// How close a figure came to the paper's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The effect and its size (within the rule's bounds).
    Reproduced,
    /// The effect's direction, but not its size.
    Direction,
    /// Not even the direction.
    NotReproduced,
}

impl Verdict {
    /// The verdict as the report words it.
    pub fn text(&self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Direction => "direction reproduced, size differs",
            Verdict::NotReproduced => "not reproduced",
        }
    }
}

/// One sweep of a figure, with the label its runs are filed under.
pub struct Part {
    /// The label (`"tpcb"`, `"span 10"`, `"batch 100"`...).
    pub label: String,
    /// What to run.
    pub spec: Spec,
}

/// A line to draw: label and (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// The runs of a figure: each part's label and its runs.
pub type Measured = [(String, Vec<RunResult>)];

/// An own figure's driver: `quick`, progress in milliseconds; the reading
/// and the samples.
pub type Driver = fn(quick: bool, progress: &mut dyn FnMut(u64)) -> (Reading, Vec<IndexSample>);

/// One chart of a figure.
pub struct Chart {
    /// File name suffix (`""` for the figure's main chart).
    pub suffix: &'static str,
    /// Title.
    pub title: String,
    /// X axis.
    pub x_desc: &'static str,
    /// Y axis.
    pub y_desc: &'static str,
    /// Lines (or, with `categories`, groups of bars).
    pub series: Vec<Series>,
    /// Names of the x positions 1, 2, ...: the chart is then grouped bars,
    /// one group per category, one bar per series.
    pub categories: Vec<String>,
}

/// What a figure's runs say.
pub struct Reading {
    /// The charts to draw.
    pub charts: Vec<Chart>,
    /// The paper's numbers as read off ours, in a sentence or two.
    pub ours: String,
    /// The verdict, by the figure's rule.
    pub verdict: Verdict,
}

/// A figure of one of the papers (or of our own evaluation).
pub struct Figure {
    /// File name and `--only` name, after the paper's own figure number.
    pub name: &'static str,
    /// Paper and figure.
    pub source: &'static str,
    /// What the paper measured, its setting and its result, with numbers.
    pub paper: &'static str,
    /// The rule that computes the verdict.
    pub rule: fn() -> String,
    /// The sweeps (`quick`: the CI's tiny version).
    pub parts: fn(quick: bool) -> Vec<Part>,
    /// Reads the runs of each part (in the order of `parts`).
    pub read: fn(&Measured) -> Reading,
    /// A figure measured by its own driver instead of sweeps (`parts` is
    /// then empty and `read` unused).
    pub own: Option<Own>,
}

/// A figure's own measurement: an estimate of its time, and the driver,
/// which reports progress in milliseconds and returns the reading and its
/// samples.
#[derive(Clone, Copy)]
pub struct Own {
    /// Milliseconds it will take (`quick` or full).
    pub estimate_ms: fn(quick: bool) -> u64,
    /// Measures.
    pub run: Driver,
}

/// One cell of the index figure (the raw data of its JSON and CSV).
#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexSample {
    /// `global-rw`, `coupling`, `spin`, `optimistic`, `elided-spin`,
    /// `elided-spin-naive`, `elided-rw`, `elided-rw-naive`, or `none` (a
    /// frozen tree: no latch, no version check; read-only cells only).
    pub protocol: &'static str,
    /// Threads.
    pub threads: usize,
    /// Share of operations that insert, in percent.
    pub inserts_pct: u32,
    /// Operations per second (median of the repeats).
    pub ops_per_s: f64,
    /// Whether RTM was in use (false on a CPU without it: the elided
    /// protocols then take their lock every time).
    pub rtm: bool,
    /// Elided protocols: the share of operations run under the fallback
    /// lock (of the median run; 0 for the others).
    pub under_lock_share: f64,
    /// Elided protocols: aborts per operation by cause (the median run).
    pub aborts_conflict_per_op: f64,
    /// Capacity aborts per operation.
    pub aborts_capacity_per_op: f64,
    /// Aborts on a held lock per operation.
    pub aborts_busy_per_op: f64,
    /// Aborts of other causes per operation.
    pub aborts_other_per_op: f64,
}

// ---- reading the runs ----

// ---- drawing ----

// ---- the report ----

/// The figures `only` names (all when empty); an unknown name is an error.
pub fn select(only: &[String]) -> Result<Vec<&'static Figure>, String> {
    if only.is_empty() {
        return Ok(FIGURES.iter().collect());
    }
    only.iter()
        .map(|n| {
            FIGURES.iter().find(|f| f.name == n.trim()).ok_or_else(|| {
                let known: Vec<&str> = FIGURES.iter().map(|f| f.name).collect();
                format!("no figure {n:?} (known: {})", known.join(", "))
            })
        })
        .collect()
}
