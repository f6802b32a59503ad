//! What a run on an elided lock table (`global-htm`, `latched-htm`)
//! reports about its hardware transactions.

/// An elided table's hardware transactions, per latch section.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Elision {
    /// Whether RTM was in use (false: every section took the latch).
    pub rtm: bool,
    /// Latch sections (committed transactions and sections under the latch).
    pub sections: u64,
    /// The share of sections run under the latch.
    pub under_latch_share: f64,
    /// Aborts per section: data conflicts.
    pub conflict: f64,
    /// Capacity aborts per section.
    pub capacity: f64,
    /// Aborts on a held latch per section.
    pub busy: f64,
    /// Aborts of other causes per section.
    pub other: f64,
}

impl Elision {
    /// From the manager's counters.
    pub fn of(e: heirloom::ElisionStats) -> Self {
        let n = e.sections().max(1) as f64;
        Elision {
            rtm: e.rtm,
            sections: e.sections(),
            under_latch_share: e.fallback_share(),
            conflict: e.conflict as f64 / n,
            capacity: e.capacity as f64 / n,
            busy: e.busy as f64 / n,
            other: (e.other + e.explicit + e.injected) as f64 / n,
        }
    }
}
