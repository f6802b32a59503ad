//! Deadlock detection for the `Detect` policy.
//!
//! When a request blocks, its transaction searches the waits-for graph for a
//! path back to itself. Edges are computed from the queues as they are now:
//! a waiting transaction `W` waits for every transaction whose request on the
//! lock `W` waits for is in its way (see `Queue::blockers`). Each queue is
//! read under its own latch (or, latch-free, by one walk), one at a time;
//! each waiter's `WaitInfo` under its own mutex. Searches hold the registry
//! lock for reading only (so no agent, hence none of its request nodes,
//! goes away under them): searches of different waiters run side by side
//! and exclude nobody. Latch order: registry, then one `wait` mutex or one
//! head.
//!
//! Two rules, as in the systems that detect: every deadlock is found
//! (PostgreSQL's `deadlock.c`), and no cycle that is not one is reported
//! (InnoDB's checker, which reads the whole graph under one latch; we
//! validate what a search found instead).
//!
//! ## Why no deadlock is missed
//!
//! Every edge is created either (a) when a request blocks, or (b) when a
//! conversion is granted in front of waiters. In case (b) the waiters are
//! woken and search again. In case (a) the blocked transaction publishes
//! that it waits (its `WaitInfo`, under its `wait` mutex) *before* it
//! searches. Edges of a deadlocked cycle never disappear (nobody in it can
//! move). Say the search of `Ti` *misses* `Tj` if it read `Tj`'s `WaitInfo`
//! before `Tj` published it. Then `Ti`'s publication happens before `Tj`'s
//! (program order to `Ti`'s read, and the mutex orders that read before
//! `Tj`'s store), so "misses" is acyclic: among the members of a cycle some
//! `Tk` misses none of the others, and its search (which starts after its
//! own edge exists, and follows every edge it reads) walks the whole cycle
//! and finds itself. No serialisation of searches is needed for this: the
//! mutexes of the `WaitInfo`s order what matters. Several members of one
//! cycle may find it at once; exactly one of them gives up (below, "One
//! victim per cycle").
//!
//! A search passes over a waiter already chosen as a victim (its
//! `WaitInfo::victim`): that waiter is about to give its request up, so
//! every edge out of it goes, and with them every cycle through it. The
//! cycles that do not pass through a victim are searched exactly as
//! before, so the argument above holds for them.
//!
//! A cycle the search found but validation rejected is not the end of the
//! search: it starts again (a real cycle through the searcher may be
//! behind the false one). Each rejection means some member's wait ended
//! in between, or some member became a victim (passed over from then
//! on), so the loop ends as the others make progress.
//!
//! ## Why no false deadlock is reported: validation
//!
//! Edges are read at different moments, so the search may put together a
//! cycle whose edges never all existed at one instant (a waiter granted
//! between two reads, then another of its transaction's requests read as
//! waiting). Before the searcher gives up, it validates the cycle, in an
//! order that makes the check sound:
//!
//! * (A) the search itself read every member's `WaitInfo`, including its
//!   `seq` (which wait of its agent this is), and found it waiting;
//! * (B) after the search, every edge again: the member's request still
//!   waiting and the next member still among its blockers;
//! * (C) after all of (B), every member again: its request still waiting
//!   (under the queue's latch, or reached through the list) and its
//!   `WaitInfo` still the same wait (`seq`), not marked as a victim's.
//!
//! Let `I` be the interval from the end of the search to the start of (C).
//! A member that was waiting at (A) and is in the same wait at (C) waited
//! all through `I`: a request, once granted, waits again only in a new wait
//! (a new `seq`), and its owner clears its `WaitInfo` before it can start
//! one (and a status read at (C) that sees the new wait happens after that
//! clear). So during `I` no member is granted, releases, cancels, converts
//! or requests anything. An edge `W -> H` depends only on `W`'s and `H`'s
//! requests (their positions, modes and states; inherited requests block
//! nobody, fast holds are their owners' and go only when those release),
//! so every edge of the cycle is constant during `I`, and (B) read each of
//! them inside `I`: at every instant of `I` the whole cycle existed, and
//! nobody in it could move. That is a deadlock. A cycle that fails the
//! check is counted (`Stats::cycles_rejected`) and the search starts again.
//!
//! ## When a waiter searches (the `deadlock_timeout` cadence)
//!
//! As in PostgreSQL, a blocked request may search not at once but after
//! `Builder::deadlock_timeout`: waits that end sooner then run no search,
//! with its locks and a latch per queue visited, at all. The default is
//! zero (search at once): on deadlock-heavy runs any delay cost more
//! throughput than the searches it saved (figures at
//! `DEFAULT_DEADLOCK_TIMEOUT`). After its first search a waiter searches
//! again only when it is woken without being granted. The argument above
//! needs nothing more: a delayed search still starts after its owner
//! published its edge, and deadlocked edges stay, so the member that
//! misses none of the others still finds it (a deadlock is reported this
//! much later, never missed). Case (b) is why a wake-up re-runs the
//! search: the edge a conversion grant adds is the woken waiter's own. The
//! only other change that adds an edge to a waiter that already searched
//! is a conversion that starts waiting ahead of it (it keeps its place
//! among the holders); its owner searches and sees that edge, and the
//! queue wakes the waiters behind anyway, because wait-die and wound-wait
//! judge only their own edges. Otherwise requests are only ever appended
//! behind a waiter, a waiter ahead of it that is granted keeps the same
//! edge, and an inherited request in its way was invalidated (or
//! reclaimed, and then seen) when it blocked. Under `Detect` the stress
//! tests, whose watchdog fails a run that stops making progress, run
//! with no periodic re-check.
//!
//! ## One victim per cycle
//!
//! Two or more members of a cycle often search at the same moment (they
//! blocked at the same moment, or the `deadlock_timeout` of both ran
//! out), and each of them finds and validates the cycle: validation only
//! shows that the cycle is a deadlock, not that nobody else is already
//! breaking it. PostgreSQL and InnoDB abort one transaction per cycle (they
//! search under the whole lock table's latches); we do too, without
//! serialising the searches themselves, by one more step:
//!
//! * (D) under the manager-wide `ManagerState::victims` mutex, every member's
//!   `WaitInfo` again: still the same wait (`seq`), and none of them a
//!   victim already. Then, still under the mutex, the searcher marks its
//!   own `WaitInfo` as the victim's, and gives up.
//!
//! The rule is: the first searcher to claim the cycle is its victim. Any
//! other searcher of the same cycle claims after it, finds the victim's
//! mark (or, once the victim has left its wait, a different `seq` or no
//! wait at all) and rejects the cycle; its next search passes over the
//! victim, finds no cycle, and it goes on waiting until the victim's
//! locks go. Overlapping cycles that share a member are claimed one at a
//! time the same way, so a member of a cycle whose victim is chosen is
//! never made a second victim for it. (D) follows the validation, so the
//! cycle was a deadlock: nobody in it moves unless a member is chosen, or
//! leaves by a way of its own (a lock timeout, a failed lock server), and
//! (D) sees both. A member that leaves by its own way after (D) is not a
//! deadlock victim; the cycle then had two ways out, and took both.
//!
//! The mutex is taken only with a validated cycle in hand, that is once
//! per deadlock (and its few concurrent finders), never on a path without
//! one; it is taken after the registry lock and before one `wait` mutex
//! at a time. `txn/tests/one_victim.rs` forces two and three members into
//! the window between validation and (D).
//!
//! The victim is always a searcher: the one whose claim came first. No
//! search aborts another thread's transaction.

use crate::error::{Cycle, TxnId, WaitEdge};
use crate::queue::Blocker;
use crate::shared::{ManagerState, Registry, WaitInfo};
use crate::table::{Caller, LockTable};

/// One waiter of a cycle and the edge it was found through.
#[derive(Clone, Copy)]
struct Member {
    info: WaitInfo,
    /// Its agent (registry index).
    agent: u32,
    /// The next member: a transaction in its way.
    holder: TxnId,
}

struct Frame {
    info: WaitInfo,
    agent: u32,
    edges: Vec<Blocker>,
    next: usize,
}

/// Searches for a waits-for cycle through the waiting transaction `me`
/// (the caller's, waiting as `me` says) and returns it once validated and
/// claimed: the caller is then the cycle's one victim.
pub(crate) fn find_cycle(lm: &ManagerState, searcher: Caller<'_>, me: WaitInfo) -> Option<Cycle> {
    crate::sharing::note(std::ptr::from_ref(&lm.registry) as usize);
    let reg = lm.registry.read();
    crate::fault::hit(crate::fault::Point::PolicyCheck);
    let mut scratch = Vec::new();
    loop {
        let cycle = search(lm, &reg, searcher, me)?;
        if validate(lm, &reg, searcher, &cycle, &mut scratch) {
            crate::fault::cycle_found();
            if claim(lm, &reg, &cycle) {
                let edges = cycle
                    .iter()
                    .map(|m| WaitEdge {
                        waiter: m.info.txn,
                        lock: m.info.lock,
                        mode: m.info.mode,
                        holder: m.holder,
                    })
                    .collect();
                return Some(Cycle(edges));
            }
        }
        searcher.counters.cycles_rejected.bump();
    }
}

/// Step (D): under `ManagerState::victims`, every member still in the wait the
/// search read and none of them a victim already; then the searcher (the
/// first member) marks itself the victim. `false`: another member's
/// search claimed the cycle first, or a member left its wait.
fn claim(lm: &ManagerState, reg: &Registry, cycle: &[Member]) -> bool {
    let _victims = lm.victims.lock();
    let still = cycle.iter().all(|m| {
        reg.get(m.agent).is_some_and(
            |a| matches!(*a.wait.lock(), Some(now) if now.seq == m.info.seq && now.txn == m.info.txn && !now.victim),
        )
    });
    if !still {
        return false;
    }
    let me = &cycle[0];
    if let Some(a) = reg.get(me.agent)
        && let Some(w) = a.wait.lock().as_mut()
    {
        w.victim = true;
    }
    true
}

/// Step (A): a depth-first search from `me` over the edges as read now.
fn search(lm: &ManagerState, reg: &Registry, searcher: Caller<'_>, me: WaitInfo) -> Option<Vec<Member>> {
    let mut first = Vec::new();
    // SAFETY: our own request in flight, with the handle its table gave.
    if !unsafe { lm.table.blockers(searcher, me.head, me.req, &mut first) } {
        return None; // granted meanwhile
    }
    let mut stack = vec![Frame {
        info: me,
        agent: searcher.agent,
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
            let cycle = stack
                .iter()
                .map(|f| Member {
                    info: f.info,
                    agent: f.agent,
                    holder: f.edges[f.next - 1].txn,
                })
                .collect();
            return Some(cycle);
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
        if info.victim {
            continue; // about to give its request up (step (D))
        }
        let mut edges = Vec::new();
        // SAFETY: `info` is a registered agent's, read under the registry
        // lock (`ReqPtr` contract 4): `info.head` is the handle its table
        // gave, and `blockers` finds the request before it touches it.
        if unsafe { lm.table.blockers(searcher, info.head, info.req, &mut edges) } && !edges.is_empty() {
            stack.push(Frame {
                info,
                agent: b.agent,
                edges,
                next: 0,
            });
        }
    }
    None
}

/// Steps (B) and (C) of the module docs: `true` if `cycle` existed as a
/// whole at one instant after the search, so it is a deadlock.
fn validate(lm: &ManagerState, reg: &Registry, searcher: Caller<'_>, cycle: &[Member], b: &mut Vec<Blocker>) -> bool {
    // (B) Every edge, read again after the whole search.
    for m in cycle {
        b.clear();
        // SAFETY: as in `search` (`ReqPtr` contract 4; the searcher's own
        // request is in flight, contract 1).
        if !unsafe { lm.table.blockers(searcher, m.info.head, m.info.req, b) } || !b.iter().any(|x| x.txn == m.holder) {
            return false;
        }
    }
    // (C) Every member still in the wait the search read, after all of (B).
    for m in cycle {
        b.clear();
        // SAFETY: as above.
        if !unsafe { lm.table.blockers(searcher, m.info.head, m.info.req, b) } {
            return false;
        }
        let Some(agent) = reg.get(m.agent) else {
            return false;
        };
        match *agent.wait.lock() {
            Some(now) if now.seq == m.info.seq && now.txn == m.info.txn && !now.victim => {}
            _ => return false,
        }
    }
    true
}
