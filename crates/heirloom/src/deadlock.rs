//! Deadlock detection for the `Detect` policy.
//!
//! When a request blocks, its transaction searches the waits-for graph for a
//! path back to itself. Edges are computed from the queues as they are now:
//! a waiting transaction `W` waits for every transaction whose request on the
//! lock `W` waits for is in its way (see `Queue::blockers`). Searches are
//! serialised by one mutex; each queue is read under its own latch, one at a
//! time (latch order: detector, registry, one head).
//!
//! ## Why no deadlock is missed
//!
//! Every edge is created either (a) when a request blocks, or (b) when a
//! conversion is granted in front of waiters. In case (b) the waiters are
//! woken and search again. In case (a) the blocked transaction publishes
//! that it waits (its `WaitInfo`) *before* it searches. Take the cycle's
//! edges in the order their owners published them: the last owner's search
//! starts after every other edge of the cycle was published, and edges of a
//! deadlocked cycle never disappear (nobody in it can move), so that search
//! walks the whole cycle and finds itself. Searches are serialised, so two
//! transactions closing the same cycle at once do not both miss it: the
//! second to search sees the first's edge.
//!
//! ## When a waiter searches (the `deadlock_timeout` cadence)
//!
//! As in PostgreSQL, a blocked request may search not at once but after
//! `Builder::deadlock_timeout`: waits that end sooner then run no search,
//! with its two mutexes and a latch per queue visited, at all. The default
//! is zero (search at once): on deadlock-heavy runs any delay cost more
//! throughput than the searches it saved (figures at
//! `DEFAULT_DEADLOCK_TIMEOUT`). After its first search a waiter
//! searches again only when it is woken without being granted. The
//! argument above needs nothing more: a delayed search still starts after
//! its owner published its edge, and deadlocked edges stay, so the last
//! owner of a cycle still finds it (a deadlock is reported this much
//! later, never missed). Case (b) is why a wake-up re-runs the search: the
//! edge a conversion grant adds is the woken waiter's own. The only other
//! change that adds an edge to a waiter that already searched is a
//! conversion that starts waiting ahead of it (it keeps its place among the
//! holders); its owner searches and sees that edge, and the queue wakes the
//! waiters behind anyway, because wait-die and wound-wait judge only their
//! own edges. Otherwise requests are only ever appended behind a waiter, a
//! waiter ahead of it that is granted keeps the same edge, and an inherited
//! request in its way was invalidated (or reclaimed, and then seen) when it
//! blocked. Before this change every waiter searched at once and then
//! every 20 ms as a safety net; under `Detect` the stress tests, whose
//! watchdog fails a run that stops making progress, run without it
//! (wait-die and wound-wait keep it: `AGE_RECHECK` in `txn/wait.rs`).
//!
//! ## What it may over-report
//!
//! Edges are read at slightly different moments, so a cycle may be reported
//! whose edges did not all exist at one instant (a waiter granted between
//! two reads). The cost is an unnecessary abort, never a missed deadlock or
//! a wrong grant. The victim is always the searching transaction: it is the
//! one that closed the cycle and the only one the search can abort without
//! reaching into another thread.

use crate::error::{Cycle, TxnId, WaitEdge};
use crate::queue::Blocker;
use crate::shared::{Inner, WaitInfo};
use crate::table::Caller;

struct Frame {
    info: WaitInfo,
    edges: Vec<Blocker>,
    next: usize,
}

/// Searches for a waits-for cycle through the waiting transaction `me`.
pub(crate) fn find_cycle(lm: &Inner, searcher: Caller<'_>, me: WaitInfo) -> Option<Cycle> {
    let _serial = lm.detector.lock();
    let reg = lm.registry.lock();
    crate::fault::hit(crate::fault::Point::PolicyCheck);
    let mut first = Vec::new();
    // SAFETY: our own request in flight, with the handle its table gave.
    if !unsafe { lm.table.blockers(searcher, me.head, me.req, &mut first) } {
        return None; // granted meanwhile
    }
    let mut stack = vec![Frame {
        info: me,
        edges: first,
        next: 0,
    }];
    let mut visited: Vec<TxnId> = vec![me.txn];
    while let Some(top) = stack.last_mut() {
        let Some(&b) = top.edges.get(top.next) else {
            stack.pop();
            continue;
        };
        top.next += 1;
        if b.txn == me.txn {
            let edges = stack
                .iter()
                .map(|f| WaitEdge {
                    waiter: f.info.txn,
                    lock: f.info.lock,
                    mode: f.info.mode,
                    holder: f.edges[f.next - 1].txn,
                })
                .collect();
            return Some(Cycle(edges));
        }
        if visited.contains(&b.txn) {
            continue;
        }
        visited.push(b.txn);
        let Some(agent) = reg.get(b.agent) else {
            continue;
        };
        let Some(info) = *agent.wait.lock() else {
            continue;
        };
        if info.txn != b.txn {
            continue; // that transaction is over; its agent runs another
        }
        let mut edges = Vec::new();
        // SAFETY: `info` is a registered agent's, read under the registry
        // lock (`ReqPtr` contract 4): `info.head` is the handle its table
        // gave, and `blockers` finds the request before it touches it.
        if unsafe { lm.table.blockers(searcher, info.head, info.req, &mut edges) } && !edges.is_empty() {
            stack.push(Frame { info, edges, next: 0 });
        }
    }
    None
}
