//! Shared-line writes per transaction (`heirloom bench --sharing`): the
//! counts of heirloom's sharing instrument (`heirloom::sharing`) over a
//! run's measured interval, and the source lines of the lock manager that
//! made them.
//!
//! Each worker reads its own thread's counts when it sees the measured
//! interval begin and end, as `--counters` does, so the totals divide by
//! the run's transactions. What counts: a write of a cache line by the lock
//! manager on a worker's thread that another thread wrote last (on sixteen
//! cores, a transfer of the line between caches where that thread wrote
//! it recently, `heirloom::sharing::RECENT_LINES`), the lines it writes at
//! all, and the calls into crossbeam-epoch and the allocator that write
//! lines of theirs (pins, deferred functions, allocations). Work the lock
//! manager does on threads of its own (the server table's lock servers)
//! is not a worker's and is not counted. The build must have the
//! `sharing` feature (`cargo run --release --features sharing -p
//! heirloom-bench -- bench ... --sharing`); without it the lock manager
//! counts nothing and costs nothing.

use std::collections::HashMap;

use heirloom::sharing::{self, Counts};
use serde::Serialize;

/// The source lines a run reports, most shared first.
pub const TOP_SITES: usize = 8;

/// A run's counts per completed transaction.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PerTxn {
    /// Cache lines the lock manager wrote.
    pub line_writes: f64,
    /// Of those, lines another thread wrote last.
    pub shared_line_writes: f64,
    /// Of those, lines whose last writer wrote fewer than
    /// `heirloom::sharing::RECENT_LINES` lines since (the rest are stale:
    /// on many cores a miss, not a transfer from another core).
    pub recent_shared_line_writes: f64,
    /// crossbeam-epoch pins.
    pub pins: f64,
    /// Functions deferred to the epoch collector.
    pub defers: f64,
    /// Allocations by the lock manager.
    pub allocs: f64,
    /// Where the shared writes were made, most first (at most
    /// [`TOP_SITES`]).
    pub sites: Vec<SitePerTxn>,
}

/// One source line's writes per transaction.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SitePerTxn {
    /// `file:line` in heirloom's source.
    pub site: String,
    /// Lines it wrote that another thread wrote last.
    pub shared_line_writes: f64,
    /// Of those, lines their last writer wrote recently.
    pub recent_shared_line_writes: f64,
    /// Lines it wrote.
    pub line_writes: f64,
}

/// One worker's (or, summed, a run's) counts over the measured interval.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    counts: Counts,
    /// Per source line: writes, shared writes, recent shared writes.
    sites: HashMap<(&'static str, u32), (u64, u64, u64)>,
}

/// A worker's reading at the start of the measured interval.
#[derive(Debug, Clone, Copy)]
pub struct Meter(Counts);

impl Meter {
    /// Starts counting this thread (forgets the sites seen so far).
    pub fn start() -> Meter {
        drop(sharing::take_sites());
        Meter(sharing::thread_counts())
    }

    /// This thread's counts since [`Meter::start`].
    pub fn stop(self) -> Totals {
        let counts = sharing::thread_counts().since(&self.0);
        let sites = sharing::take_sites()
            .into_iter()
            .map(|s| ((s.file, s.line), (s.writes, s.shared_writes, s.recent_shared_writes)))
            .collect();
        Totals { counts, sites }
    }
}

impl Totals {
    /// Adds another worker's counts.
    pub fn add(&mut self, o: Totals) {
        self.counts += o.counts;
        for (k, (w, s, r)) in o.sites {
            let e = self.sites.entry(k).or_default();
            e.0 += w;
            e.1 += s;
            e.2 += r;
        }
    }

    /// Per completed transaction (`done` of them).
    pub fn per_txn(&self, done: u64) -> PerTxn {
        let d = done.max(1) as f64;
        let per = |x: u64| x as f64 / d;
        let mut sites: Vec<_> = self.sites.iter().filter(|(_, v)| v.1 > 0).collect();
        sites.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        PerTxn {
            line_writes: per(self.counts.writes),
            shared_line_writes: per(self.counts.shared_writes),
            recent_shared_line_writes: per(self.counts.recent_shared_writes),
            pins: per(self.counts.pins),
            defers: per(self.counts.defers),
            allocs: per(self.counts.allocs),
            sites: sites
                .into_iter()
                .take(TOP_SITES)
                .map(|(&(file, line), &(w, s, r))| SitePerTxn {
                    site: format!("{}:{line}", short(file)),
                    shared_line_writes: per(s),
                    recent_shared_line_writes: per(r),
                    line_writes: per(w),
                })
                .collect(),
        }
    }
}

/// `crates/heirloom/src/table/latched.rs` as `table/latched.rs`.
fn short(file: &str) -> &str {
    file.rsplit_once("/src/").map_or(file, |(_, f)| f)
}

/// The lines `report` prints under the table: each run's sites.
pub fn site_lines(config: &str, p: &PerTxn) -> Vec<String> {
    let mut out = vec![format!(
        "# sharing, {config}: {:.3} shared ({:.3} recent) of {:.2} line writes per transaction; pins {:.2}, defers {:.3}, allocations {:.3}",
        p.shared_line_writes, p.recent_shared_line_writes, p.line_writes, p.pins, p.defers, p.allocs
    )];
    for s in &p.sites {
        out.push(format!(
            "#   {:>8.4} shared ({:>8.4} recent) of {:>8.3} writes/tx  {}",
            s.shared_line_writes, s.recent_shared_line_writes, s.line_writes, s.site
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_and_divide_by_the_transactions() {
        let mut a = Totals {
            counts: Counts {
                writes: 10,
                shared_writes: 4,
                recent_shared_writes: 3,
                pins: 2,
                ..Counts::default()
            },
            sites: [(("x/src/a.rs", 1), (6, 4, 3)), (("x/src/b.rs", 2), (4, 0, 0))].into(),
        };
        a.add(Totals {
            counts: Counts {
                writes: 10,
                shared_writes: 2,
                recent_shared_writes: 1,
                ..Counts::default()
            },
            sites: [(("x/src/b.rs", 2), (10, 2, 1))].into(),
        });
        let p = a.per_txn(4);
        assert_eq!(
            (p.line_writes, p.shared_line_writes, p.recent_shared_line_writes, p.pins),
            (5.0, 1.5, 1.0, 0.5)
        );
        let sites: Vec<_> = p
            .sites
            .iter()
            .map(|s| (s.site.as_str(), s.shared_line_writes, s.recent_shared_line_writes))
            .collect();
        assert_eq!(sites, [("a.rs:1", 1.0, 0.75), ("b.rs:2", 0.5, 0.25)]);
    }
}
