//! The fast path for intention locks, shared by the latch-free and the
//! latched table: a granted IS or IX on a database or table lock is a bit
//! set in the agent's own record, with no read-modify-write, no request
//! linked, no list walked, no epoch pinned and no latch taken.
//!
//! Row S locks take the same path through the same interface (`Fast`'s
//! methods, the queues' `OutsideHolds`), with a row's *stripe* for its
//! slot (`SLOTS` plus the stripe) and their own records and fences:
//! `fast/rows.rs` (`Builder::fast_rows`). What follows is the intention
//! locks' side.
//!
//! ## Why
//!
//! Every short transaction takes IS or IX on its database and tables, so
//! each of those locks has a request of every transaction in flight, and
//! in a bucket list (`latchfree/`) every acquisition walks all of them:
//! the walk grows with the number of transactions in flight, and
//! oversubscribed (64 threads on 2 cores) that is what made the latch-free
//! table slower than the latched one, whose lock head keeps a summary of
//! the granted modes. IS and IX are compatible with each other, so an
//! intention request only has to know that no request of a mode that
//! conflicts with IX (S, U, SIX, X: *strong*) is granted or queued; that is
//! a count, and a count is one word (PostgreSQL's fast path keeps the same
//! count of strong locks per partition, `FastPathStrongRelationLocks`).
//! And since strong requests on databases and tables are rare, the fast
//! side is the one that must cost nothing: it never writes a shared line
//! (the scheme of biased reader-writer locks, e.g. BRAVO, with the
//! asymmetric fence of `sync::AsymmetricFence` in place of a store-load
//! fence on the fast side).
//!
//! ## The two sides
//!
//! A lock gets a slot the first time an intention or strong request asks
//! (`Fast::slot`); slots are never given back, so a lock's slot never
//! moves, and a lock that finds no free slot among its probes simply has
//! none (both kinds of request then use the list or queue alone). The
//! slot's word is the lock's *strong count*. Every agent (up to
//! [`AGENTS`]; agents beyond use the lists) has a record it alone writes:
//! its current transaction and age, and per mode a bit per slot it holds
//! fast.
//!
//! * **Fast acquire** (IS or IX): set the bit (Release: publishes the
//!   record), light fence, load the strong count; zero: granted. Otherwise
//!   it clears the bit again (with a release's wake-up duty, below) and
//!   goes to the list or queue like any request, where it queues behind
//!   the strong ones (first come, first served).
//! * **Strong acquire**: `fetch_add` of the strong count, then the heavy
//!   fence (unless the word is sealed, below), before the request decides
//!   anything. The two fences make a Dekker handshake: a fast acquirer
//!   whose load missed the count set its bit before the heavy fence, so
//!   every scan of the bits after the fence sees it; one whose load came
//!   later sees the count and backs off. The request then counts the fast
//!   holds of modes it conflicts with as
//!   granted requests ahead of it (they only go away) and waits while any
//!   of another agent remain (its own, from a conversion, are not in its
//!   way).
//! * **Fast release**: clear the bit (Release: our work happens before a
//!   grant that sees it gone), light fence, load the strong count; if it is
//!   not zero, the wake-up duty: a strong request may have seen the bit and
//!   be waiting for it. The same handshake as above: a releaser whose load
//!   missed the count cleared its bit before the heavy fence, so no
//!   strong request ever counts it.
//! * **Strong release**: the list release, then the strong count drops
//!   (after the request is OBSOLETE, so a fast request granted on a zero
//!   count never overlaps it).
//!
//! The light fence is a compiler fence where the kernel's membarrier works
//! (the heavy fence is then `membarrier`, whose cost MEASUREMENTS.md gives
//! in "Intention locks without a read-modify-write"), else both are SeqCst
//! fences, the form the loom models check. So a fast acquisition and its
//! release cost two plain stores and two loads of lines nobody else
//! writes.
//!
//! ## Sealed
//!
//! A heavy fence per strong request would make a lock that keeps getting
//! them slow, so the first strong request after the word left zero seals
//! it ([`SEALED`], after its heavy fence): the word then stays non-zero
//! when the strong count drops, so every fast hold that was not in the
//! bits at the fence backs off, and a later strong request that finds the
//! seal needs no fence of its own (the sealer's fence happens before its
//! scan). A release that finds the word
//! non-zero has the wake-up duty, sealed or not. The fast attempts a
//! sealed word turns away while no strong request is counted are counted
//! (`Word::calm`, reset by every strong request), and the one after
//! [`REOPEN_AFTER`] of them opens the word again (a CAS from exactly
//! `SEALED`, which fails if a strong request came meanwhile). So a lock
//! with strong requests now and then pays one heavy fence per calm stretch,
//! and its intention requests use the list or queue meanwhile.
//!
//! On the latch-free table the wake-up duty is a release's
//! (`after_release`): a SeqCst fence and the bucket's `waiting` count,
//! which pairs with the waiter's fence between its count in `waiting` and
//! its re-read of the bits (Dekker), so either the waiter sees the hold
//! gone or the releaser sees the waiter and grants it.
//!
//! ## On the latched table (`Outside`)
//!
//! The latched table keeps the same words and records; its queues see a
//! lock's fast holds as granted holds they do not list
//! (`queue::Outside`, through the `OutsideHolds` trait). There the strong
//! count is 0 or 1: the queue *closes* its word (adds one) under the head
//! latch before it decides a strong request, and takes its count back
//! (under the latch) once it has no strong request granted and nobody
//! waiting; the seal keeps fast requests in the queue until the lock has
//! been calm. A fast release or a fast request backing off that sees
//! the word closed takes the head latch and grants the queue's waiters
//! that are clear now (the wake-up duty; no fence is needed, since the
//! waiter scanned the bits under the same latch).
//!
//! ## No request node
//!
//! `Transaction::lock` takes a fast hold without a request node
//! (`LockTable::try_fast_hold` and `LockTable::release_fast_hold`, which read the
//! lock, the mode and the agent from the caller): the transaction's cache
//! entry names the agent's `Nodes::none`, which is never linked, given
//! back or read. IS to IX in place needs no node either
//! (`LockTable::upgrade_fast_hold`, `Fast::upgrade_bits`); any other
//! conversion first gives the entry a node filled as the fast path fills
//! one (`Transaction::convert`, `holds::materialize`).
//!
//! ## Who holds a fast lock
//!
//! The bits are also what deadlock detection, wait-die and wound-wait and
//! the monitor read to learn who holds a lock fast. A record's transaction
//! and age are written before its bit is set (Release) and read after the
//! bit (Acquire); a reader may see a stale bit (a blocker that has just
//! gone, which a waits-for graph tolerates).

use crossbeam_utils::CachePadded;

use crate::id::{Level, LockId, TxnId};
use crate::mode::Mode;
use crate::monitor::{LockInfo, add_holder, info_of};
use crate::queue::{Blocker, OutsideHolds, Strong};
use crate::request::Request;
use crate::sync::{AsymmetricFence, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};

pub(crate) mod holds;
pub(crate) mod rows;
pub(crate) use holds::FastTable;
pub(crate) use rows::Rows;

/// Slots per table (a database and its tables fit many times over).
pub(crate) const SLOTS: usize = if cfg!(heirloom_loom) { 2 } else { 64 };
// A slot is a bit of a word: the records' masks, the monitor's `done`.
const _: () = assert!(SLOTS <= 64);
/// Slots a lock may take, from its hash on.
const PROBES: usize = if cfg!(heirloom_loom) { 2 } else { 4 };
/// Agents with a record (registry indices below this use the fast path).
pub(crate) const AGENTS: usize = if cfg!(heirloom_loom) { 4 } else { 512 };

/// `Slot::state`.
const EMPTY: u8 = 0;
const CLAIMING: u8 = 1;
const READY: u8 = 2;

/// Fast attempts a sealed word turns away while no strong request is
/// counted, after which the next one opens it again: a lock that keeps
/// getting strong requests stays sealed (its intention requests go to the
/// list or queue, as without the fast path), so it pays one heavy fence,
/// not one per strong request.
pub(crate) const REOPEN_AFTER: u32 = if cfg!(heirloom_loom) { 0 } else { 4096 };

/// The word's flag: a heavy fence has passed since the word last left
/// zero (see the module docs, "Sealed").
const SEALED: u64 = 1 << 63;

/// Locks with a slot: databases and tables (not transaction locks, which
/// are only ever S or X).
#[inline]
pub(crate) fn eligible(id: LockId) -> bool {
    matches!(id.level(), Level::Database | Level::Table) && id.transaction_of().is_none()
}

/// Rows, whose S locks may be held fast in a stripe (`fast/rows.rs`).
#[inline]
pub(crate) fn is_row(id: LockId) -> bool {
    id.level() == Level::Row && id.transaction_of().is_none()
}

/// Can `mode` on `id` be held fast (IS or IX on a database or table, S on
/// a row), where the table's fast path takes it?
#[inline]
pub(crate) fn takes_fast(id: LockId, mode: Mode) -> bool {
    match mode {
        Mode::IS | Mode::IX => eligible(id),
        Mode::S => is_row(id),
        _ => false,
    }
}

/// The strongest mode held fast on `slot`'s locks: IX on a database's or
/// table's slot, S on a row stripe's. A request counts as strong there
/// when it conflicts with it.
#[inline]
pub(crate) fn top(slot: usize) -> Mode {
    if slot < SLOTS { Mode::IX } else { Mode::S }
}

/// Does a request in `mode` on a lock of `slot` count as strong?
#[inline]
pub(crate) fn strong_at(slot: usize, mode: Mode) -> bool {
    !mode.compatible(top(slot))
}

/// Fills `q` as the node of a fast hold of the lock with `words` in
/// `mode`: what the operations that read a fast hold's node (release,
/// conversion) expect of it. Linked nowhere, the node is reusable at once
/// when given back (`NEVER_LINKED`, read only where nodes wait for a grace
/// period: the latch-free tables').
#[inline]
pub(crate) fn fill_node(q: &Request, words: (u64, u64), mode: Mode) {
    q.key.store(words.0, Ordering::Relaxed);
    q.hi.store(words.1, Ordering::Relaxed);
    q.mode.store(mode as u8, Ordering::Relaxed);
    q.want.store(mode as u8, Ordering::Relaxed);
    q.status.store(crate::request::GRANTED, Ordering::Relaxed);
    q.recycle.store(crate::request::NEVER_LINKED, Ordering::Relaxed);
}

struct Meta {
    state: AtomicU8,
    key: AtomicU64,
    hi: AtomicU64,
}

/// One lock's slot: its identity (read by every lookup, written once) and
/// its word (read by every fast acquisition and release, written by strong
/// requests) on separate lines.
struct Slot {
    meta: CachePadded<Meta>,
    word: CachePadded<Word>,
}

/// A lock's strong count and [`SEALED`] flag, and the fast attempts it
/// turned away since the last strong request (see [`REOPEN_AFTER`]).
struct Word {
    strong: AtomicU64,
    calm: AtomicU32,
}

/// An agent's fast holds (written only by the agent).
struct Record {
    /// The agent's transaction when it last took a fast hold (0: never).
    txn: AtomicU64,
    ts: AtomicU64,
    /// Bit `s`: holds slot `s`'s lock in IS (resp. IX) fast.
    is: AtomicU64,
    ix: AtomicU64,
}

/// What a fast try came to ([`Fast::acquire`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[must_use]
pub(crate) enum FastTry {
    /// Held: the bit is up and the word counts no strong request.
    Held,
    /// Not held: the bit went up and came down again because the word was
    /// not zero, so the caller has a release's wake-up duty (see the
    /// module docs).
    BackedOff,
    /// Not held, nothing owed: no record, or the word counted strong
    /// requests or was sealed at a first look (or went zero before the
    /// bit came down).
    Refused,
}

#[cfg(test)]
impl FastTry {
    /// Held?
    pub(crate) fn is_held(self) -> bool {
        self == FastTry::Held
    }
}

pub(crate) struct Fast {
    slots: Box<[Slot]>,
    records: Box<[CachePadded<Record>]>,
    /// One more than the highest agent index that ever held fast (how far
    /// scans for holders read).
    used: AtomicUsize,
    /// Between a hold's bit and the strong count (light), and between a
    /// strong count and the scan of the bits (heavy).
    fence: AsymmetricFence,
    /// Row S locks held fast, when on (`fast/rows.rs`): their slots are
    /// `SLOTS` plus the row's stripe.
    rows: Option<Rows>,
}

/// Waits for a slot being claimed (a few stores by the claimer), or for
/// an agent changing its row record (`rows.rs`).
#[inline]
fn pause() {
    #[cfg(heirloom_loom)]
    loom::thread::yield_now();
    #[cfg(not(heirloom_loom))]
    std::thread::yield_now();
}

impl Fast {
    /// The fast path for intention locks only.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self::with_rows(false)
    }

    /// The fast path for intention locks and, with `rows`, for row S
    /// locks.
    pub(crate) fn with_rows(rows: bool) -> Self {
        Fast {
            rows: rows.then(|| Rows::new(AGENTS)),
            slots: (0..SLOTS)
                .map(|_| Slot {
                    meta: CachePadded::new(Meta {
                        state: AtomicU8::new(EMPTY),
                        key: AtomicU64::new(0),
                        hi: AtomicU64::new(0),
                    }),
                    word: CachePadded::new(Word {
                        strong: AtomicU64::new(0),
                        calm: AtomicU32::new(0),
                    }),
                })
                .collect(),
            records: (0..AGENTS)
                .map(|_| {
                    CachePadded::new(Record {
                        txn: AtomicU64::new(0),
                        ts: AtomicU64::new(0),
                        is: AtomicU64::new(0),
                        ix: AtomicU64::new(0),
                    })
                })
                .collect(),
            used: AtomicUsize::new(0),
            fence: AsymmetricFence::register(),
        }
    }

    /// The slot of `id` if it can have fast holds here: a database's or
    /// table's own (claimed with `claim`, see [`Fast::slot`]), or a row's
    /// stripe.
    #[inline(always)]
    pub(crate) fn slot_for(&self, id: LockId, claim: bool) -> Option<usize> {
        if eligible(id) {
            self.slot(id.words(), claim)
        } else if self.rows.is_some() && is_row(id) {
            Some(SLOTS + Rows::stripe(id.words()))
        } else {
            None
        }
    }

    /// [`Fast::slot_for`] with a claim, for a new request: a row has no
    /// slot while the row side's switch is off (no fast hold to look for,
    /// and the request need not be counted: `rows.rs`, "The switch").
    #[inline(always)]
    pub(crate) fn slot_for_new(&self, id: LockId) -> Option<usize> {
        if is_row(id) && self.rows.as_ref().is_some_and(Rows::is_off) {
            return None;
        }
        self.slot_for(id, true)
    }

    /// The row side, if this fast path has one (its switch: `rows.rs`).
    #[inline]
    pub(crate) fn row_side(&self) -> Option<&Rows> {
        self.rows.as_ref()
    }

    /// The row side (a row stripe's slot was handed out only if it is on).
    #[inline(always)]
    fn rows(&self) -> &Rows {
        match &self.rows {
            Some(r) => r,
            None => unreachable!("a row stripe's slot without the row side"),
        }
    }

    /// The slot of the lock with `words`; with `claim`, takes a
    /// free one if it has none. Without `claim`, `None` also if a slot is
    /// being claimed for it right now: callers look up without claiming
    /// only for a lock that a request of theirs (or one they found linked)
    /// already claimed a slot for.
    #[inline(always)]
    pub(crate) fn slot(&self, words: (u64, u64), claim: bool) -> Option<usize> {
        // Fibonacci hashing of the two words, top bits: database and table
        // ids differ in their numbers, which this spreads over the slots
        // (three instructions, not `LockId::hash64`'s eleven).
        let start = ((words.1 ^ words.0.rotate_left(17)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize;
        for i in 0..PROBES {
            let s = (start + i) & (SLOTS - 1);
            let m = &self.slots[s].meta;
            loop {
                // Acquire: pairs with the claimer's Release store of READY.
                match m.state.load(Ordering::Acquire) {
                    READY => {
                        if m.key.load(Ordering::Relaxed) == words.0 && m.hi.load(Ordering::Relaxed) == words.1 {
                            return Some(s);
                        }
                        break;
                    }
                    CLAIMING => pause(),
                    _ => {
                        if !claim {
                            return None;
                        }
                        // Relaxed: the stores below are published by READY.
                        if m.state
                            .compare_exchange(EMPTY, CLAIMING, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                        {
                            m.key.store(words.0, Ordering::Relaxed);
                            m.hi.store(words.1, Ordering::Relaxed);
                            m.state.store(READY, Ordering::Release);
                            return Some(s);
                        }
                    }
                }
            }
        }
        None
    }

    #[inline]
    fn record(&self, agent: u32) -> Option<&Record> {
        self.records.get(agent as usize).map(|r| &**r)
    }

    #[inline]
    fn mask(r: &Record, mode: Mode) -> &AtomicU64 {
        if mode == Mode::IS { &r.is } else { &r.ix }
    }

    /// Tries to take `slot`'s lock, the lock of `words`, in `mode` (IS or
    /// IX; S on a row) fast for `txn` (age `ts`) of `agent` (see
    /// [`FastTry`]).
    #[inline(always)]
    pub(crate) fn acquire(&self, slot: usize, words: (u64, u64), agent: u32, txn: u64, ts: u64, mode: Mode) -> FastTry {
        if slot >= SLOTS {
            debug_assert_eq!(mode, Mode::S);
            return self.rows().acquire(slot - SLOTS, words, agent, txn, ts);
        }
        let Some(r) = self.record(agent) else {
            return FastTry::Refused;
        };
        let strong = &self.slots[slot].word.strong;
        // Relaxed: a quick look, so that a lock with strong requests costs
        // no bit (the load after the fence below decides).
        let w = strong.load(Ordering::Relaxed);
        if w != 0 && !self.calm_down(slot, w) {
            return FastTry::Refused;
        }
        // Relaxed (all three): published by the bit's Release store.
        let old = r.txn.load(Ordering::Relaxed);
        if old != txn {
            if old == 0 {
                self.used.fetch_max(agent as usize + 1, Ordering::Relaxed);
            }
            r.txn.store(txn, Ordering::Relaxed);
            r.ts.store(ts, Ordering::Relaxed);
        }
        let m = Self::mask(r, mode);
        // Release: a scanner that sees the bit (Acquire) sees the record.
        m.store(m.load(Ordering::Relaxed) | 1 << slot, Ordering::Release);
        self.fence.light();
        // Acquire: pairs with the Release of a strong request's decrement,
        // so its holder's work happens before ours.
        if strong.load(Ordering::Acquire) == 0 {
            return FastTry::Held;
        }
        if self.release(slot, words, agent, mode) {
            FastTry::BackedOff
        } else {
            FastTry::Refused
        }
    }

    /// Gives up a fast hold; `true` if the word was not zero (strong
    /// requests counted, or sealed: the caller's wake-up duty, see the
    /// module docs).
    #[inline(always)]
    pub(crate) fn release(&self, slot: usize, words: (u64, u64), agent: u32, mode: Mode) -> bool {
        self.release_as(slot, words, agent, mode, false)
    }

    /// [`Fast::release`]; `ending`: the transaction gives up every lock
    /// it has (its row holds' entries are then cleared all at once,
    /// `Rows::release`).
    #[inline(always)]
    pub(crate) fn release_as(&self, slot: usize, words: (u64, u64), agent: u32, mode: Mode, ending: bool) -> bool {
        if slot >= SLOTS {
            return self.rows().release(slot - SLOTS, words, agent, ending);
        }
        let Some(r) = self.record(agent) else {
            unreachable!("a fast hold of an agent without a record")
        };
        let m = Self::mask(r, mode);
        // Release: our work happens before a strong request granted on
        // seeing the bit gone (its scan loads with Acquire).
        m.store(m.load(Ordering::Relaxed) & !(1 << slot), Ordering::Release);
        self.fence.light();
        self.slots[slot].word.strong.load(Ordering::Relaxed) != 0
    }

    /// Converts the fast IS hold `q` of `slot`'s lock to IX in place: its
    /// IX bit is set, and if no strong request is counted after the fence
    /// the hold is IX (what a fast IX acquisition would have granted then)
    /// and its IS bit goes. Otherwise the IX bit goes again and it answers
    /// `false`: the hold is IS, and the caller has a release's wake-up duty
    /// (a scan may have seen the IX bit) and converts through the queue or
    /// list. On success `q`'s mode is IX.
    #[inline]
    pub(crate) fn upgrade(&self, slot: usize, q: &Request) -> bool {
        if !self.upgrade_bits(slot, q.agent) {
            return false;
        }
        q.mode.store(Mode::IX as u8, Ordering::Relaxed);
        q.want.store(Mode::IX as u8, Ordering::Relaxed);
        true
    }

    /// [`Fast::upgrade`] of `agent`'s fast IS hold of `slot`'s lock, its
    /// bits only (a hold with no node, `LockTable::upgrade_fast_hold`).
    #[inline]
    pub(crate) fn upgrade_bits(&self, slot: usize, agent: u32) -> bool {
        debug_assert!(
            slot < SLOTS,
            "a row's fast hold is S, converted through its queue or list"
        );
        let Some(r) = self.record(agent) else {
            unreachable!("a fast hold of an agent without a record")
        };
        let bit = 1 << slot;
        // The IX bit before the strong count is read, the IS bit cleared
        // after (a scan may see both for a moment: the same transaction).
        // Release and Acquire: as in `acquire`.
        r.ix.store(r.ix.load(Ordering::Relaxed) | bit, Ordering::Release);
        self.fence.light();
        if self.slots[slot].word.strong.load(Ordering::Acquire) == 0 {
            r.is.store(r.is.load(Ordering::Relaxed) & !bit, Ordering::Release);
            return true;
        }
        // Release: as in `release`.
        r.ix.store(r.ix.load(Ordering::Relaxed) & !bit, Ordering::Release);
        false
    }

    /// The word `w` (not zero) turned a fast attempt on `slot`'s lock
    /// away: counts the attempt if no strong request is counted, and opens
    /// the word after [`REOPEN_AFTER`] of them. `true` if it opened it (the
    /// caller tries again).
    #[cold]
    // Under loom `REOPEN_AFTER` is 0 (the models open at once).
    #[allow(clippy::absurd_extreme_comparisons)]
    fn calm_down(&self, slot: usize, w: u64) -> bool {
        if w != SEALED {
            return false;
        }
        let word = &self.slots[slot].word;
        // Relaxed: a heuristic count; the CAS below decides.
        if word.calm.fetch_add(1, Ordering::Relaxed) < REOPEN_AFTER {
            return false;
        }
        word.calm.store(0, Ordering::Relaxed);
        // AcqRel: continues the release sequence of the last strong
        // request's decrement, so fast holds granted on the open word
        // follow its holder's work. Fails if a strong request came.
        word.strong
            .compare_exchange(SEALED, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// A strong request for `slot`'s lock is about to be linked (latch-free
    /// table), or its queue closes the word (latched table). From here on,
    /// every fast hold is either in the bits a scan reads or sees the word
    /// and backs off (see the module docs): the first request after the
    /// word left zero takes the heavy fence and seals it; later ones find
    /// it sealed and need no fence.
    ///
    /// On a row's slot, `agent`'s request may register in the agent's
    /// record instead of counting itself in the word (`rows.rs`); the
    /// result says which, for [`Fast::sub_strong`].
    #[inline]
    pub(crate) fn add_strong(&self, slot: usize, agent: u32) -> Strong {
        if slot >= SLOTS {
            return self.rows().add_strong(slot - SLOTS, agent);
        }
        let word = &self.slots[slot].word;
        word.calm.store(0, Ordering::Relaxed);
        // AcqRel: Acquire pairs with fast releases (their work happens
        // before a grant that sees their bit gone) and with the seal;
        // Release as the decrement's.
        // A request that finds the seal needs no fence of its own: the
        // sealer's heavy fence happens before our scan (Release/Acquire on
        // the seal), and in the fence order it follows the light fence of
        // every fast hold that missed the count (C++20 [atomics.order] p4).
        if word.strong.fetch_add(1, Ordering::AcqRel) & SEALED == 0 {
            self.fence.heavy();
            // Release: whoever finds the seal follows the heavy fence.
            word.strong.fetch_or(SEALED, Ordering::Release);
        }
        Strong::Counted
    }

    /// A strong request for `slot`'s lock is gone (OBSOLETE, or never
    /// linked), or its queue takes its count back (the word stays sealed).
    /// `how` is what [`Fast::add_strong`] returned to `agent`'s request
    /// (anyone may end it).
    #[inline]
    pub(crate) fn sub_strong(&self, slot: usize, agent: u32, how: Strong) {
        if slot >= SLOTS {
            return self.rows().sub_strong(slot - SLOTS, agent, how);
        }
        // Release: a fast request granted on the lower count sees our work.
        self.slots[slot].word.strong.fetch_sub(1, Ordering::Release);
    }

    /// Whether `agent` holds `slot`'s lock fast in IS and in IX (0 or 1
    /// each).
    #[inline]
    fn own_holds(&self, slot: usize, agent: u32) -> (u64, u64) {
        let Some(r) = self.record(agent) else {
            return (0, 0);
        };
        // Relaxed: read by the agent itself, or of a waiting agent whose
        // holds do not change while it waits (set before its request was
        // linked, which the reader's Acquire load of the link follows).
        (
            r.is.load(Ordering::Relaxed) >> slot & 1,
            r.ix.load(Ordering::Relaxed) >> slot & 1,
        )
    }

    /// The modes `agent` holds `slot`'s lock (of `words`) in fast, joined
    /// (NL: none).
    #[inline]
    pub(crate) fn own(&self, slot: usize, words: (u64, u64), agent: u32) -> Mode {
        if slot >= SLOTS {
            return if self.rows().own(slot - SLOTS, words, agent) {
                Mode::S
            } else {
                Mode::NL
            };
        }
        match self.own_holds(slot, agent) {
            (0, 0) => Mode::NL,
            (_, 0) => Mode::IS,
            _ => Mode::IX,
        }
    }

    /// Are fast holds of other transactions than `agent`'s in the way of
    /// `mode` on `slot`'s lock? The caller counted a strong request there
    /// before (whose heavy fence makes every hold that did not back off
    /// visible here) and, for a waiter, fenced.
    #[inline]
    pub(crate) fn in_way(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32) -> bool {
        if slot >= SLOTS {
            return strong_at(slot, mode) && self.rows().in_way(slot - SLOTS, words, agent);
        }
        let bit = 1 << slot;
        let (is, ix) = (!mode.compatible(Mode::IS), !mode.compatible(Mode::IX));
        let used = self.used.load(Ordering::Relaxed).min(AGENTS);
        // Acquire: pairs with the Release of a hold's bit being cleared, so
        // a grant that sees the bit gone follows the holder's work.
        self.records[..used].iter().enumerate().any(|(i, r)| {
            i != agent as usize
                && ((is && r.is.load(Ordering::Acquire) & bit != 0) || (ix && r.ix.load(Ordering::Acquire) & bit != 0))
        })
    }

    /// Appends the transactions (other than `agent`'s) that hold `slot`'s
    /// lock fast in a mode in the way of `mode`.
    pub(crate) fn holders(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32, out: &mut Vec<Blocker>) {
        if slot >= SLOTS {
            if strong_at(slot, mode) {
                self.rows().holders_each(slot - SLOTS, words, agent, |b| out.push(b));
            }
            return;
        }
        self.scan(slot, |i, txn, ts, held| {
            if i != agent && !mode.compatible(held) {
                out.push(Blocker { txn, agent: i, ts });
            }
        });
    }

    /// One transaction (not `agent`'s) holding `slot`'s lock fast in a mode
    /// in the way of `mode`, if there is one now.
    #[cold]
    pub(crate) fn blocker(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32) -> Option<Blocker> {
        self.holder_where(slot, words, mode, agent, |_| true)
    }

    /// One of them whose transaction is older than `age`, if there is one
    /// now (wait-die's judgement before linking:
    /// `LockTable::judge_wait_die`).
    #[cold]
    pub(crate) fn older(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32, age: u64) -> Option<Blocker> {
        self.holder_where(slot, words, mode, agent, |b| {
            crate::queue::older(b.ts, b.agent, age, agent)
        })
    }

    /// The first transaction (not `agent`'s) holding `slot`'s lock fast in a
    /// mode in the way of `mode` that `keep` keeps.
    fn holder_where(
        &self,
        slot: usize,
        words: (u64, u64),
        mode: Mode,
        agent: u32,
        keep: impl Fn(&Blocker) -> bool,
    ) -> Option<Blocker> {
        let mut found = None;
        if slot >= SLOTS {
            if strong_at(slot, mode) {
                self.rows().holders_each(slot - SLOTS, words, agent, |b| {
                    if found.is_none() && keep(&b) {
                        found = Some(b);
                    }
                });
            }
            return found;
        }
        self.scan(slot, |i, txn, ts, held| {
            let b = Blocker { txn, agent: i, ts };
            if found.is_none() && i != agent && !mode.compatible(held) && keep(&b) {
                found = Some(b);
            }
        });
        found
    }

    /// Calls `f(agent, txn, ts, mode)` for every fast hold of `slot`'s lock.
    fn scan(&self, slot: usize, mut f: impl FnMut(u32, TxnId, u64, Mode)) {
        let bit = 1 << slot;
        let used = self.used.load(Ordering::Relaxed).min(AGENTS);
        for (i, r) in self.records[..used].iter().enumerate() {
            // Acquire: pairs with the bit's Release store, which published
            // the record's transaction and age.
            let (is, ix) = (
                r.is.load(Ordering::Acquire) & bit != 0,
                r.ix.load(Ordering::Acquire) & bit != 0,
            );
            if is || ix {
                let (txn, ts) = (TxnId(r.txn.load(Ordering::Relaxed)), r.ts.load(Ordering::Relaxed));
                if is {
                    f(i as u32, txn, ts, Mode::IS);
                }
                if ix {
                    f(i as u32, txn, ts, Mode::IX);
                }
            }
        }
    }

    /// Folds the fast holds of `slot`'s lock into `info`, its entry, whose
    /// holders are requests that stayed granted while the bits were read
    /// here (the caller holds the lock's head latch, or read the requests
    /// before and after). A bit that conflicts with such a holder of
    /// another transaction is not a hold: a granted strong request was
    /// counted in the word (and fenced) before it was granted, so every
    /// fast acquirer since has seen the word and is backing off, its bit up
    /// for a moment (`acquire`). Such bits are left out; so the holders
    /// listed are always compatible.
    pub(crate) fn fold_into(&self, slot: usize, words: (u64, u64), info: &mut LockInfo) {
        if slot >= SLOTS {
            self.rows()
                .holders_each(slot - SLOTS, words, u32::MAX, |b| fold(info, b.txn, Mode::S));
            return;
        }
        self.scan(slot, |_, txn, _, mode| fold(info, txn, mode));
    }

    /// Folds the fast holds of every lock whose slot is not in `done` (a
    /// bit per slot) into `out`, a lock's entry made if it has none (the
    /// monitor, for the locks it did not fold with [`Fast::fold_into`]).
    /// The same rule as there applies to entries that `out` has.
    pub(crate) fn snapshot_into(&self, out: &mut Vec<LockInfo>, done: &Folded) {
        self.each_slot(|s, id| {
            if done.slots >> s & 1 == 0 {
                self.scan(s, |_, txn, _, mode| {
                    let i = info_of(out, 0, id);
                    fold(&mut out[i], txn, mode);
                });
            }
        });
        if let Some(rows) = &self.rows {
            rows.each_hold(|id, txn| {
                if !done.rows.contains(&id.words()) {
                    let i = info_of(out, 0, id);
                    fold(&mut out[i], txn, Mode::S);
                }
            });
        }
    }

    /// The slot of `id`, if it has one (the monitor).
    pub(crate) fn slot_of(&self, id: LockId) -> Option<usize> {
        self.slot_for(id, false)
    }

    /// Calls `f(lock, txn, mode)` for every fast hold (the monitor).
    pub(crate) fn each_hold(&self, mut f: impl FnMut(LockId, TxnId, Mode)) {
        self.each_slot(|s, id| self.scan(s, |_, txn, _, m| f(id, txn, m)));
        if let Some(rows) = &self.rows {
            rows.each_hold(|id, txn| f(id, txn, Mode::S));
        }
    }

    /// Calls `f(slot, lock)` for every slot that names a lock.
    fn each_slot(&self, mut f: impl FnMut(usize, LockId)) {
        for (s, slot) in self.slots.iter().enumerate() {
            // Acquire: pairs with the claimer's Release store of READY.
            if slot.meta.state.load(Ordering::Acquire) == READY {
                let id = LockId::from_words(
                    slot.meta.key.load(Ordering::Relaxed),
                    slot.meta.hi.load(Ordering::Relaxed),
                );
                f(s, id);
            }
        }
    }
}

/// The locks whose fast holds a snapshot folded under their latch
/// ([`Fast::fold_into`]), which [`Fast::snapshot_into`] leaves out.
#[derive(Default)]
pub(crate) struct Folded {
    /// A bit per database or table slot.
    pub(crate) slots: u64,
    /// Rows, by their words.
    pub(crate) rows: std::collections::HashSet<(u64, u64)>,
}

impl Folded {
    /// Notes that `slot`'s lock, of `words`, was folded.
    pub(crate) fn add(&mut self, slot: usize, words: (u64, u64)) {
        if slot < SLOTS {
            self.slots |= 1 << slot;
        } else {
            self.rows.insert(words);
        }
    }
}

/// Folds `txn`'s fast hold in `mode` into `info` (its holders and group,
/// and as the old mode of its transaction's waiting conversion), unless a
/// holder of another transaction conflicts with it (see
/// [`Fast::fold_into`]).
pub(crate) fn fold(info: &mut LockInfo, txn: TxnId, mode: Mode) {
    if info.holders.iter().any(|h| h.txn != txn && !h.mode.compatible(mode)) {
        return;
    }
    info.group = info.group.join(mode);
    add_holder(info, txn, mode, false);
    for w in info.waiters.iter_mut().filter(|w| w.txn == txn) {
        w.converting_from = Some(w.converting_from.map_or(mode, |m| m.join(mode)));
    }
}

/// The latched table's queues count fast holds through this (see the
/// module docs, "On the latched table").
impl OutsideHolds for Fast {
    #[inline]
    fn close(&self, slot: usize, agent: u32) -> Strong {
        self.add_strong(slot, agent)
    }

    #[inline]
    fn open(&self, slot: usize, agent: u32, how: Strong) {
        self.sub_strong(slot, agent, how);
    }

    #[inline]
    fn in_way(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32) -> bool {
        strong_at(slot, mode) && Fast::in_way(self, slot, words, mode, agent)
    }

    fn holders(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32, out: &mut Vec<Blocker>) {
        if strong_at(slot, mode) {
            Fast::holders(self, slot, words, mode, agent, out);
        }
    }

    fn blocker(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32) -> Option<Blocker> {
        if strong_at(slot, mode) {
            Fast::blocker(self, slot, words, mode, agent)
        } else {
            None
        }
    }

    fn older(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32, age: u64) -> Option<Blocker> {
        if strong_at(slot, mode) {
            Fast::older(self, slot, words, mode, agent, age)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(not(heirloom_loom))]
    mod calm;
    #[cfg(heirloom_loom)]
    mod loom_rows;
    #[cfg(heirloom_loom)]
    mod loom_seal;
    #[cfg(heirloom_loom)]
    mod loom_switch;
    #[cfg(not(heirloom_loom))]
    mod owed;
    #[cfg(not(heirloom_loom))]
    mod registered;
}
