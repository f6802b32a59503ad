//! `heirloom demo`: the story in about a minute. TM1's NDBB mix (the SLI
//! paper's workload) on four configurations at 1, 2 and 8 threads, three
//! rounds: the Shore-MT baseline (a latch per lock head, nothing else), the
//! SLI paper (hot shared locks passed from transaction to transaction),
//! heirloom's default (the intention-lock fast path and SLI, inherited
//! locks kept through unused transactions), and no locking at all, the
//! ceiling (one thread only: TM1 writes, so without locks it is correct
//! only alone). The verdict lines say, per thread count, what each step
//! buys.

use std::time::Duration;

use heirloom::{RECOMMENDED_KEEP_INHERITED, TableKind};

use crate::report::paired_ratio;
use crate::runner::{RunConfig, RunResult};
use crate::sweep::Spec;

/// One configuration of the story.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Shore-MT: the latched table, no fast path, no inheritance.
    ShoreMt,
    /// The SLI paper: Shore-MT with speculative lock inheritance.
    Sli,
    /// heirloom's default: the fast path, SLI, recommended kept inheritance.
    Heirloom,
    /// No locking at all (one thread).
    Ceiling,
}

impl Step {
    /// The step a configuration plays, if any.
    fn of(table: TableKind, sli: bool, keep: u32, fast_path: bool, threads: usize) -> Option<Step> {
        match (table, sli, keep, fast_path) {
            (TableKind::NoLocking, ..) if threads == 1 => Some(Step::Ceiling),
            (TableKind::Latched, false, _, false) => Some(Step::ShoreMt),
            (TableKind::Latched, true, 0, false) => Some(Step::Sli),
            (TableKind::Latched, true, RECOMMENDED_KEEP_INHERITED, true) => Some(Step::Heirloom),
            _ => None,
        }
    }

    /// The step a run played.
    pub fn of_run(r: &RunResult) -> Option<Step> {
        Step::of(r.table.parse().ok()?, r.sli, r.sli_keep, r.fast_path, r.threads)
    }

    /// The legend of its line.
    pub fn label(self) -> String {
        match self {
            Step::ShoreMt => "Shore-MT: latched, no fast path, no SLI".into(),
            Step::Sli => "SLI paper: latched + SLI".into(),
            Step::Heirloom => format!("heirloom: fast path + SLI, keep {RECOMMENDED_KEEP_INHERITED}"),
            Step::Ceiling => "no locking (the ceiling, 1 thread)".into(),
        }
    }
}

/// The demo's sweep: `duration` measured seconds per run.
pub fn spec(duration: Duration) -> Spec {
    Spec {
        workload: "tm1".into(),
        mix: Some("ndbb".into()),
        threads: vec![1, 2, 8],
        tables: vec![TableKind::Latched, TableKind::NoLocking],
        sli: vec![false, true],
        sli_keep: vec![0, RECOMMENDED_KEEP_INHERITED],
        fast_path: vec![false, true],
        duration,
        warmup: Duration::from_millis(300),
        verify: true,
        repeat: 3,
        pick: Some(|c: &RunConfig| Step::of(c.table, c.sli, c.sli_keep, c.fast_path, c.threads).is_some()),
        ..Spec::default()
    }
}

/// The plot's legend for a run.
pub fn label(r: &RunResult) -> String {
    Step::of_run(r).map_or_else(|| r.table.clone(), Step::label)
}

/// The verdict lines: per thread count, what SLI buys over Shore-MT and
/// heirloom's default over both (throughput, the median of the rounds'
/// ratios), the lock-table operations above row level and the contended
/// latches per transaction of each, and how close the default comes to
/// the ceiling.
pub fn verdicts(runs: &[RunResult]) -> Vec<String> {
    let find = |step: Step, threads: usize| {
        runs.iter()
            .find(|r| r.threads == threads && Step::of_run(r) == Some(step))
    };
    let mut threads: Vec<usize> = runs.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut out = Vec::new();
    for n in threads {
        let (Some(shore), Some(sli), Some(ours)) =
            (find(Step::ShoreMt, n), find(Step::Sli, n), find(Step::Heirloom, n))
        else {
            continue;
        };
        let ceiling = find(Step::Ceiling, n).map_or(String::new(), |c| {
            format!(
                "; heirloom reaches {:.2} of the no-locking ceiling",
                paired_ratio(ours, c)
            )
        });
        out.push(format!(
            "{n} thread{}: SLI {:.2}x Shore-MT; heirloom {:.2}x Shore-MT, {:.2}x SLI{ceiling}",
            if n == 1 { "" } else { "s" },
            paired_ratio(sli, shore),
            paired_ratio(ours, shore),
            paired_ratio(ours, sli),
        ));
        let per_txn = |f: fn(&RunResult) -> f64, digits: usize| {
            [shore, sli, ours].map(|r| format!("{:.digits$}", f(r))).join(" -> ")
        };
        out.push(format!(
            "    per transaction, Shore-MT -> SLI -> heirloom: shared lock-table ops above row level {} (heirloom's other {:.2} are fast holds, its agent's own bits); contended latches {}",
            per_txn(shared_above_row, 2),
            ours.per_txn.fast_ops,
            per_txn(|r| r.per_txn.latch_contended, 3),
        ));
    }
    out
}

/// Operations per transaction on lock table state above row level that
/// other threads share (a fast hold is a bit in the agent's own record).
fn shared_above_row(r: &RunResult) -> f64 {
    (r.per_txn.table_ops_by_level.above_row() - r.per_txn.fast_ops).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_story_picks_four_configurations() {
        let s = spec(Duration::from_millis(10));
        let plan = crate::plan(&s).expect("the demo's spec plans");
        let picked: Vec<(Step, usize)> = crate::configs(&s, plan.scale)
            .iter()
            .filter_map(|c| Step::of(c.table, c.sli, c.sli_keep, c.fast_path, c.threads).map(|st| (st, c.threads)))
            .collect();
        assert_eq!(
            picked.len(),
            crate::configs(&s, plan.scale).len(),
            "only story configurations run"
        );
        for step in [Step::ShoreMt, Step::Sli, Step::Heirloom] {
            let at: Vec<usize> = picked.iter().filter(|p| p.0 == step).map(|p| p.1).collect();
            assert_eq!(at, vec![1, 2, 8], "{step:?}");
        }
        assert_eq!(
            picked
                .iter()
                .filter(|p| p.0 == Step::Ceiling)
                .map(|p| p.1)
                .collect::<Vec<_>>(),
            vec![1],
            "no locking runs alone"
        );
    }
}
