//! Request nodes not in use: an agent's pool, and how a node gets back to
//! it after a table is done with it.
//!
//! How soon a node may be reused is the table's to say ([`Reuse`], from
//! `LockTable::nodes`): the queue tables unlink a request under its latch,
//! so the node is free at once; the latch-free table leaves released
//! requests in its lists for any thread to unlink and frees nothing before
//! an epoch grace period (see `table/latchfree/reclaim.rs`), so its nodes come
//! back through the epoch collector: singly (`limbo`, unlinked by somebody
//! else) or in batches (unlinked by their owner).
//!
//! ## Bounded while the epoch stalls
//!
//! A node comes back one grace period after it left its list, and a grace
//! period lasts until every thread pinned in an older epoch has unpinned.
//! Oversubscribed, a thread preempted inside a pinned section holds it up
//! until the scheduler runs it again, for scheduler quanta when threads
//! outnumber cores (`examples/epochlag.rs`), and an agent that allocates
//! whenever nothing is back grows its pool to cover the worst wait at its
//! full rate (the crate's MEASUREMENTS.md, "Node memory under
//! oversubscription"). So once
//! [`RECLAIM_CAP`] of an agent's nodes are on their way back, `take` helps
//! before it allocates ([`Nodes::help`]): it hands its unfinished batches
//! to the collector, flushes the thread's deferred functions (which also
//! tries to advance the epoch and collects) and, when that brought nothing
//! back, gives up the processor, so that a preempted thread holding the
//! epoch runs and unpins. After [`HELP_ROUNDS`] rounds with nothing back
//! it allocates as before: helping bounds the memory when the stall is
//! the scheduler's, and never waits for ever.

use std::collections::VecDeque;

/// Nodes on their way back (left a list, not yet returned by the epoch
/// collector) above which `take` helps reclamation before allocating.
/// About a millisecond of one agent's transactions at full speed; at 64
/// bytes a node, 256 KB per agent.
const RECLAIM_CAP: usize = if cfg!(heirloom_loom) { usize::MAX } else { 4096 };
/// Rounds of help (hand over, flush, yield) before `take` allocates anyway.
const HELP_ROUNDS: u32 = 64;

use crate::request::{AtomicState, IN_USE, NEVER_LINKED, ORPHANED, OWNER_UNLINKED, RETURNED, Recycle, ReqPtr, Request};
use crate::stats::AgentCounters;
use crate::sync::Ordering;

/// When a node its transaction gave back may be used again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// At once: the table unlinked it (under a latch) and nobody can see it.
    Unlinked,
    /// After the epoch grace period of whoever unlinks it.
    AfterGracePeriod,
}

/// An agent's request nodes that no transaction uses.
pub(crate) struct Nodes {
    /// Free nodes.
    pool: Vec<ReqPtr>,
    /// Nodes taken and not yet given back or put back: the agent's lock
    /// requests in use (what `Builder::max_locks` caps).
    pub(crate) out: usize,
    /// Latch-free table: nodes left OBSOLETE or INVALID in a list, reusable
    /// once the epoch collector returns them (see `take`).
    limbo: VecDeque<ReqPtr>,
    reuse: Reuse,
    /// The owning agent's index (stored in new nodes).
    agent: u32,
    /// Latch-free table: nodes this agent unlinked itself, collected into
    /// batches that the epoch collector returns as a whole.
    filling: Option<Box<Batch>>,
    /// Batches handed to the collector, oldest first.
    sealed: VecDeque<*mut Batch>,
    /// Batches sealed since the thread's bag of deferred functions last
    /// went to the collector by `seal` (see [`FLUSH_EVERY`]).
    unflushed: usize,
    /// Empty batches for reuse (no allocation once warm). Boxed: a sealed
    /// batch's address is what the collector's deferred function holds.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Batch>>,
    /// Nodes this agent allocated (freed only when it drops).
    alive: usize,
    /// Hands the thread's batch of requests it unlinked for others to the
    /// collector (the table's; see `Nodes::help`).
    hand_over: fn(),
    /// The node of every fast hold taken without one
    /// (`Transaction::acquire_fast`): never linked, never in the pool,
    /// never given back, and read by nobody (a fast hold that needs a node
    /// gets one, `Transaction::convert`).
    none: ReqPtr,
}

// SAFETY: the raw batch pointers are owned by the agent (or, once ORPHANED,
// by the collector's deferred function; see `Batch`).
unsafe impl Send for Nodes {}

/// Nodes per owner batch (one under loom, so that the models see batches
/// come back). A batch costs a pin, a deferred function, and two writes
/// of its state by two threads (the collector's, then the owner's: shared
/// lines); 128 spread that over a few TPC-C transactions' row locks or
/// eight of YCSB's (32 did over one: MEASUREMENTS.md, "An owner's batch of
/// 128 nodes").
const BATCH: usize = if cfg!(heirloom_loom) { 1 } else { 128 };

/// Sealed batches after which `seal` hands the thread's bag of deferred
/// functions to the collector itself (`Guard::flush`), so that at most
/// half of [`RECLAIM_CAP`] of the agent's nodes wait there. crossbeam's
/// bag goes to the collector only when full, after 64 functions: 8,192
/// nodes in batches of 128, over the cap, so without this every agent
/// would reach the cap in steady state and help (giving up the processor
/// with its locks held) though nobody held the epoch (`tests/reclaim.rs`,
/// MEASUREMENTS.md, "The 2-core bars at the tip"). One flush per half
/// the cap of nodes: a push on the collector's queue and a collection,
/// which the full bag's push and every 128th pin cost anyway. Never under
/// loom: half of its unbounded cap is never reached.
const FLUSH_EVERY: usize = RECLAIM_CAP / 2 / BATCH;
const _: () = assert!(FLUSH_EVERY >= 1);

/// Up to [`BATCH`] nodes their owner unlinked, handed to the epoch
/// collector together: one deferred function sets `state` to RETURNED
/// without touching the nodes. If the agent drops first it sets ORPHANED;
/// whichever of the two comes second frees the nodes and the batch.
pub(crate) struct Batch {
    nodes: Vec<ReqPtr>,
    state: AtomicState<Recycle>,
}

/// A batch pointer the collector's deferred function may carry.
struct SealedBatch(*mut Batch);
// SAFETY: see `Batch`: exactly one side (agent or deferred function) ends
// up owning it, decided by the `state` swap.
unsafe impl Send for SealedBatch {}

impl SealedBatch {
    /// Runs after the grace period of every node of the batch.
    fn returned(self) {
        // SAFETY: the batch lives until this swap decides who frees it.
        let b = unsafe { &*self.0 };
        // AcqRel: pairs with the agent's swap or Acquire load.
        if b.state.swap(RETURNED, Ordering::AcqRel) == ORPHANED {
            // SAFETY: orphaned: the agent is gone and left the batch to us.
            let b = unsafe { Box::from_raw(self.0) };
            for &r in &b.nodes {
                // SAFETY: unlinked, past the grace period, owner gone.
                unsafe { r.free() };
            }
        }
    }
}

impl Nodes {
    pub(crate) fn new(reuse: Reuse, agent: u32, hand_over: fn()) -> Self {
        Nodes {
            pool: Vec::new(),
            out: 0,
            limbo: VecDeque::new(),
            reuse,
            agent,
            filling: None,
            sealed: VecDeque::new(),
            unflushed: 0,
            spare: Vec::new(),
            alive: 0,
            hand_over,
            none: ReqPtr::alloc(agent),
        }
    }

    /// The node of the fast holds that have none (see `Nodes::none`).
    #[inline]
    pub(crate) fn none(&self) -> ReqPtr {
        self.none
    }

    /// Nodes on their way back: allocated, not in the pool and not taken.
    /// (`out` already counts the node a `take` is looking for.)
    #[inline]
    fn reclaiming(&self) -> usize {
        (self.alive + 1).saturating_sub(self.out + self.pool.len())
    }

    /// A free node for the transaction that owns `old` (its id and age
    /// copied): the second request of a conversion that does not convert
    /// in place.
    #[inline]
    pub(crate) fn take_for(&mut self, c: &AgentCounters, old: &Request) -> ReqPtr {
        let n = self.take(c);
        // SAFETY: just taken from this agent's pool, linked nowhere.
        let new = unsafe { n.get() };
        new.txn.store(old.txn.load(Ordering::Relaxed), Ordering::Relaxed);
        new.ts.store(old.ts.load(Ordering::Relaxed), Ordering::Relaxed);
        new.key.store(old.key.load(Ordering::Relaxed), Ordering::Relaxed);
        new.hi.store(old.hi.load(Ordering::Relaxed), Ordering::Relaxed);
        n
    }

    /// A free request node: from the pool, else from the requests the
    /// epoch collector returned, else a new one. No allocation once warm.
    /// `c`: the agent's counters (`nodes_allocated`, `reclaim_helps`).
    #[inline]
    pub(crate) fn take(&mut self, c: &AgentCounters) -> ReqPtr {
        self.out += 1;
        match self.pool.pop() {
            Some(r) => r,
            None => self.take_slow(c),
        }
    }

    #[cold]
    fn take_slow(&mut self, c: &AgentCounters) -> ReqPtr {
        let mut rounds = 0;
        loop {
            self.collect_returned();
            if let Some(r) = self.pool.pop() {
                return r;
            }
            if rounds == HELP_ROUNDS || self.reclaiming() < RECLAIM_CAP {
                break;
            }
            if rounds > 0 {
                // The last flush brought nothing back: a thread preempted
                // while pinned may hold the epoch; let it run.
                crate::sync::yield_now();
            }
            rounds += 1;
            c.reclaim_helps.bump();
            self.help();
        }
        let batch = if self.limbo.is_empty() { 1 } else { 16 };
        for _ in 0..batch {
            self.pool.push(ReqPtr::alloc(self.agent));
        }
        self.alive += batch;
        c.nodes_allocated.add(batch as u64);
        match self.pool.pop() {
            Some(r) => r,
            None => unreachable!("the pool was just filled"),
        }
    }

    /// One round of help to the epoch collector while this agent has
    /// [`RECLAIM_CAP`] nodes on their way back (see the module docs): its
    /// unfinished batches handed over and the thread's deferred functions
    /// flushed (which tries to advance the epoch and collects); `take_slow`
    /// gives up the processor before the next round. Never called pinned
    /// (`take` is not), so the flush can advance the epoch.
    #[cold]
    fn help(&mut self) {
        self.seal();
        (self.hand_over)();
        crate::sharing::op(crate::sharing::Op::Pin);
        crate::sharing::op(crate::sharing::Op::Flush);
        crossbeam_epoch::pin().flush();
    }

    /// Moves what the collector has returned into the pool.
    fn collect_returned(&mut self) {
        // Returned batches of nodes we unlinked ourselves first.
        while let Some(&p) = self.sealed.front() {
            // SAFETY: a sealed batch stays allocated until the `state` swap
            // of `Nodes::drop` or of `SealedBatch::returned` hands it to one
            // side, and only our own drop sets ORPHANED, so it is allocated.
            // Only a shared reference for now: the collector's deferred
            // function may be in `returned`, reading `state`, this moment.
            let state = unsafe { &(*p).state };
            // Acquire: pairs with the AcqRel swap in `returned`.
            if state.load(Ordering::Acquire) != RETURNED {
                break;
            }
            self.sealed.pop_front();
            // SAFETY: allocated by `Box` in `batch`; RETURNED, and that swap
            // was the deferred function's last access to it, so it is ours
            // alone now.
            let mut b = unsafe { Box::from_raw(p) };
            for r in &b.nodes {
                // SAFETY: returned: our own node, in nobody else's hands.
                unsafe { r.get() }.recycle.store(IN_USE, Ordering::Relaxed);
            }
            // One copy of the batch, not a push a node (whose checks of the
            // pool's room cost more than the store above).
            self.pool.append(&mut b.nodes);
            self.spare.push(b);
        }
        if !self.pool.is_empty() {
            return;
        }
        // The limbo is a FIFO: requests are retired, and so returned, in
        // about the order they were released, so the returned ones are
        // taken from the front and a sweep costs what it yields. A front
        // request not back yet (its bucket has not been walked since, or a
        // preempted thread holds the epoch) goes to the back after a look,
        // so it cannot hold up the ones behind it; if nothing is back
        // within a few looks, `take_slow` helps or allocates a batch.
        let mut looks = 0;
        while let Some(&r) = self.limbo.front() {
            // Acquire: pairs with the collector's swap in
            // `latchfree::returned` (nobody can see the node any more).
            // SAFETY: in our limbo: our own node, freed only by our drop
            // (the collector frees only ORPHANED ones).
            let q = unsafe { r.get() };
            if q.recycle.load(Ordering::Acquire) == RETURNED {
                q.recycle.store(IN_USE, Ordering::Relaxed);
                self.pool.push(r);
                self.limbo.pop_front();
                continue;
            }
            looks += 1;
            if !self.pool.is_empty() || looks > 4 {
                break;
            }
            self.limbo.rotate_left(1);
        }
    }

    /// Takes back a request node its transaction no longer uses (unlinked,
    /// or in a latch-free list as OBSOLETE/INVALID and reusable only once
    /// the epoch collector returns it).
    #[inline(always)]
    pub(crate) fn give_back(&mut self, r: ReqPtr) {
        debug_assert!(r != self.none, "a fast hold's missing node given back");
        self.out -= 1;
        if self.reuse == Reuse::Unlinked {
            self.pool.push(r);
            return;
        }
        self.give_back_shared(r);
    }

    /// [`Nodes::give_back`] on a table whose lists others read without a
    /// latch (out of line: the latched tables' path above stays small
    /// enough to inline).
    #[inline(never)]
    fn give_back_shared(&mut self, r: ReqPtr) {
        // SAFETY: given back by its own agent: its own node (contract 1).
        let q = unsafe { r.get() };
        // The common case first, lean (few registers to save): a node its
        // owner unlinked into a filling batch with room after it.
        if let Some(b) = &mut self.filling
            && b.nodes.len() + 1 < BATCH
            && q.recycle.load(Ordering::Relaxed) == OWNER_UNLINKED
        {
            b.nodes.push(r);
            return;
        }
        self.give_back_other(r);
    }

    /// [`Nodes::give_back_shared`] but for its common case.
    #[inline(never)]
    fn give_back_other(&mut self, r: ReqPtr) {
        // SAFETY: given back by its own agent: its own node (contract 1).
        let q = unsafe { r.get() };
        match q.recycle.load(Ordering::Relaxed) {
            OWNER_UNLINKED => self.batch(r),
            NEVER_LINKED => {
                q.recycle.store(IN_USE, Ordering::Relaxed);
                self.pool.push(r);
            }
            _ => self.limbo.push_back(r),
        }
    }

    /// [`Nodes::give_back`] of a refused request's node (out of line: the
    /// lock path that may be refused stays small enough to inline). Never
    /// linked, or (the latch-free table with the swap append) withdrawn.
    #[cold]
    #[inline(never)]
    pub(crate) fn give_back_refused(&mut self, r: ReqPtr) {
        self.give_back(r);
    }

    /// Puts back a node taken with [`Nodes::take`] that was never linked
    /// (a refused request, a spare of a batch): reusable at once.
    #[inline]
    pub(crate) fn put(&mut self, r: ReqPtr) {
        debug_assert!(r != self.none, "a fast hold's missing node put back");
        self.out -= 1;
        self.pool.push(r);
    }

    /// Adds a node we unlinked ourselves to the filling batch; a full batch
    /// goes to the collector.
    #[inline]
    fn batch(&mut self, r: ReqPtr) {
        let b = match &mut self.filling {
            Some(b) => b,
            None => self.filling.insert(self.spare.pop().unwrap_or_else(|| {
                Box::new(Batch {
                    nodes: Vec::with_capacity(BATCH),
                    state: AtomicState::new(IN_USE),
                })
            })),
        };
        b.nodes.push(r);
        if b.nodes.len() >= BATCH {
            self.seal();
        }
    }

    /// Hands the filling batch to the collector.
    fn seal(&mut self) {
        let Some(b) = self.filling.take() else { return };
        b.state.store(IN_USE, Ordering::Relaxed);
        let p = Box::into_raw(b);
        self.sealed.push_back(p);
        let sealed = SealedBatch(p);
        crate::sharing::op(crate::sharing::Op::Pin);
        crate::sharing::op(crate::sharing::Op::Defer);
        let guard = crossbeam_epoch::pin();
        guard.defer(move || sealed.returned());
        self.unflushed += 1;
        if self.unflushed >= FLUSH_EVERY {
            self.unflushed = 0;
            crate::sharing::op(crate::sharing::Op::Flush);
            guard.flush();
        }
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, linked nowhere and never handed out
        // but as the node nobody reads.
        unsafe { self.none.free() };
        self.seal();
        for p in self.sealed.drain(..) {
            // SAFETY: ours until the swap below decides.
            let b = unsafe { &*p };
            // AcqRel: pairs with the collector's swap in `returned`.
            if b.state.swap(ORPHANED, Ordering::AcqRel) == RETURNED {
                // SAFETY: returned: past the grace period, ours to free.
                let b = unsafe { Box::from_raw(p) };
                for &r in &b.nodes {
                    // SAFETY: unlinked and invisible to every thread.
                    unsafe { r.free() };
                }
            }
        }
        for r in self.pool.drain(..) {
            // SAFETY: every node of the pool was allocated by this agent and
            // is unlinked (transactions give nodes back only after
            // unlinking them, and no transaction is open: it borrows the
            // agent mutably).
            unsafe { r.free() };
        }
        for r in self.limbo.drain(..) {
            // AcqRel: pairs with the collector's swap (`latchfree::returned`);
            // whichever of the two comes second frees the node.
            // SAFETY: in our limbo and not yet ORPHANED: alive (the collector
            // frees a node only after it saw ORPHANED).
            if unsafe { r.get() }.recycle.swap(ORPHANED, Ordering::AcqRel) == RETURNED {
                // SAFETY: returned: unlinked and invisible to every thread;
                // this agent owns it and nobody else will free it.
                unsafe { r.free() };
            }
        }
    }
}
