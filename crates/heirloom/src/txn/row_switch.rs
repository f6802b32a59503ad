//! The row side's switch turned by what the transactions' row requests
//! meet (`Builder::fast_rows`'s [`FastRows::Auto`](crate::FastRows)): the
//! states and why each is safe are `table/fast/rows.rs`'s ("The switch");
//! here is who turns it, when, and the grace period of the turn to `ON`.
//!
//! ## Votes
//!
//! Every agent counts its row requests that reach the table (those not
//! granted fast) and how many of them conflict with S (*strong*) in its
//! own [`RowVotes`], and the row side counts the S locks it granted the
//! agent fast in the agent's record: no line another thread writes. After
//! [`WINDOW`] requests that reached the table, the transaction looks at
//! the switch:
//!
//! * `ON`, and fewer fast grants than a seventh of the window (under an
//!   eighth of all its row requests): the row side costs more than it
//!   saves here (stripes stay shut under updates, so S requests are
//!   turned away after a look and strong ones are counted for nothing),
//!   so it turns to `DRAINING`, fences, and turns to `OFF` if no fast hold
//!   is left (a later window's look does it otherwise). Where nearly
//!   every row request is an S granted fast, windows end seldom: a
//!   read-mostly workload pays no looks.
//! * `OFF`, and fewer than [`STRONG_SHARE`] of the window were strong, for
//!   as many windows in a row as the switch's patience says (one, doubled
//!   by every turn away from `ON` up to 2^[`MAX_PATIENCE`]: a workload at
//!   the edge does not keep turning it): it turns to `ARMING`, and the
//!   grace period below starts.
//! * `ARMING`: whether the grace period has passed; `ON` if so.
//! * `DRAINING`: whether the fast holds are gone; `OFF` if so.
//!
//! ## The grace period
//!
//! While the switch is `OFF`, strong row requests are not counted
//! anywhere, so before a fast S may be granted again every transaction
//! that may hold one must have ended. The turn to `ARMING` is followed by
//! the gate's heavy fence (`gate.rs`), which pairs with the light fence of
//! every begin between its agent's `active` flag and everything its
//! transaction reads after it, the switch included: a transaction that
//! read `OFF` is seen by the snapshot that follows the fence as active,
//! with its agent's count of transactions begun. The snapshot keeps the
//! agents that were active, with that count, and a later window's look
//! drops each agent found inactive or with a higher count (its
//! transaction ended: the count is raised with Release before `active`
//! is set, and `active` cleared with Release at the end, so the look,
//! Acquire, follows the transaction's work); the last one gone turns the
//! switch to `ON`, whose Release passes all that on to the fast holds
//! granted after it. A transaction that never ends (forgotten and never
//! followed by another on its agent) keeps the switch `ARMING`: row
//! locks then go through the table, as with the switch off, and nothing
//! waits.

use super::Transaction;
use crate::agent::Agent;
use crate::shared::{ManagerState, RowSwitch, RowVotes};
use crate::sync::{Arc, Ordering, fence};
use crate::table::LockTable;
use crate::table::fast::Rows;
use crate::table::fast::rows::{self, ARMING, DRAINING, OFF, ON};

/// Row requests that reach the table before an agent looks at the switch.
pub(crate) const WINDOW: u32 = 1024;
/// `ON` turns off below this many fast grants a window (an eighth of the
/// agent's row requests).
pub(crate) const FAST_SHARE: u32 = WINDOW / 7;
/// Below this many strong requests in a window (for the patience's count
/// of windows in a row), `OFF` arms.
pub(crate) const STRONG_SHARE: u32 = WINDOW / 16;
/// The patience doubles with every turn away from `ON`, up to this power
/// of two.
pub(crate) const MAX_PATIENCE: u32 = 10;

impl RowVotes {
    /// Counts a request; `true` at the end of a window.
    #[inline(always)]
    fn count(&self, strong: bool) -> bool {
        // Relaxed (all): the agent's own counts.
        let n = self.requests.load(Ordering::Relaxed) + 1;
        self.requests.store(n, Ordering::Relaxed);
        if strong {
            self.strong
                .store(self.strong.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
        n >= WINDOW
    }
}

impl RowSwitch {
    /// Turns from `ON` to `DRAINING` so far.
    pub(crate) fn drains(&self) -> u32 {
        self.drains.load(Ordering::Relaxed)
    }
}

impl Transaction<'_> {
    /// Counts a row request of this transaction that reached the table
    /// (`strong`: it conflicts with S) for the switch, and looks at the
    /// switch at the end of a window.
    #[inline(always)]
    pub(super) fn vote_row(&mut self, strong: bool) {
        if self.agent.lm.row_switch.is_some() {
            self.agent.vote_row(strong);
        }
    }

    /// May a row S be tried on the fast path (the row side's switch is on,
    /// or the table has no row side, which refuses it)? A look at a line
    /// only turns write, so that an S request while the switch is off
    /// goes to the table at once.
    #[inline(always)]
    pub(super) fn rows_open(&self) -> bool {
        self.agent.lm.row_state.as_deref().is_none_or(|w| rows::is_open(w))
    }
}

impl Agent {
    /// `Transaction::vote_row` where the manager has the switch.
    #[inline(always)]
    pub(super) fn vote_row(&self, strong: bool) {
        if self.shared.rows.count(strong) {
            self.row_window();
        }
    }

    /// The end of a window: the look at the switch (see the module docs).
    #[cold]
    #[inline(never)]
    fn row_window(&self) {
        let a = self;
        let v = &a.shared.rows;
        // Relaxed (all): the agent's own counts.
        let strong = v.strong.load(Ordering::Relaxed);
        v.requests.store(0, Ordering::Relaxed);
        v.strong.store(0, Ordering::Relaxed);
        let (Some(sw), Some(rows)) = (a.lm.row_switch.as_ref(), a.lm.table.fast().and_then(|f| f.row_side())) else {
            return;
        };
        let state = rows.state();
        match state & 3 {
            ON if rows.take_grants(a.shared.index) < FAST_SHARE && rows.turn(state, DRAINING) => {
                sw.drains.fetch_add(1, Ordering::Relaxed);
                drain(rows, state & !3 | DRAINING);
            }
            DRAINING => drain(rows, state),
            OFF => {
                let calm = if strong < STRONG_SHARE {
                    v.calm.load(Ordering::Relaxed) + 1
                } else {
                    0
                };
                v.calm.store(calm, Ordering::Relaxed);
                if calm >= 1 << sw.drains().min(MAX_PATIENCE) {
                    v.calm.store(0, Ordering::Relaxed);
                    arm(&a.lm, sw, rows, state);
                }
            }
            ARMING => look(sw, rows, state),
            _ => {}
        }
    }
}

/// `DRAINING` (the word `state`) to `OFF` if no fast hold is left.
fn drain(rows: &Rows, state: u64) {
    // SeqCst: between the turn to DRAINING (or its sight) and the scan;
    // pairs with a fast S's fence between its entry and its look at the
    // switch (Dekker: see `Rows::holds_none`).
    fence(Ordering::SeqCst);
    if rows.holds_none() {
        rows.turn(state, OFF);
    }
}

/// `OFF` (the word `state`) to `ARMING`, and the snapshot of the agents
/// inside a transaction (see the module docs, "The grace period").
fn arm(lm: &ManagerState, sw: &RowSwitch, rows: &Rows, state: u64) {
    let Some(mut pending) = sw.arming.try_lock() else {
        return;
    };
    if !rows.turn(state, ARMING) {
        return;
    }
    // Pairs with the light fence of `Gate::enter` (Dekker, as the gate's
    // own drain).
    lm.gate.heavy_fence();
    pending.clear();
    for ag in lm.registry.read().agents() {
        // Acquire (both): see `look`.
        if ag.active.load(Ordering::Acquire) {
            pending.push((Arc::clone(ag), ag.counters.begun.get_acquire()));
        }
    }
}

/// `ARMING` (the word `state`) to `ON` once every transaction of the
/// snapshot has ended.
fn look(sw: &RowSwitch, rows: &Rows, state: u64) {
    let Some(mut pending) = sw.arming.try_lock() else {
        return;
    };
    // Acquire (both): pairs with the Release of `active`'s clearing at a
    // transaction's end and of the count's raise at the next begin, so
    // that the ended transactions' work happens before the turn.
    pending.retain(|(ag, begun)| ag.active.load(Ordering::Acquire) && ag.counters.begun.get_acquire() == *begun);
    if pending.is_empty() {
        rows.turn(state, ON);
    }
}
