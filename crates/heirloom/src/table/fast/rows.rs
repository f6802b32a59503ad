//! Row S locks on the fast path: a read-biased row lock, after Dice and
//! Kogan's BRAVO (USENIX ATC 2019), with the biased state kept per stripe
//! of rows instead of per lock, since a row has no memory of its own here.
//!
//! ## Why
//!
//! An S lock on a row that nobody else wants still writes the lock table:
//! a head's latch and queue (latched), a bucket's list (latch-free). Those
//! lines were last written by whichever thread used the head or bucket
//! before, so on many cores every row lock is a cache miss on a line
//! another core owns, even when no two transactions ever want the same
//! row. Here an S row lock writes only its agent's record, while the rows
//! it could conflict with are read by everybody and written by nobody.
//!
//! ## The two sides
//!
//! Rows hash to [`STRIPES`] stripes, each one word: the count of *strong*
//! requests (those that conflict with S: IX, SIX, U, X) on its rows, and
//! two flags. Every agent has a record it alone writes, with up to
//! [`ROWS`] entries, each a row it holds S on fast.
//!
//! * **Fast S**: if the stripe's word is zero (open, nothing counted), put
//!   the row in a free entry, SeqCst fence, load the word again; zero:
//!   granted. Otherwise the entry is cleared again (with a release's
//!   wake-up duty, below) and the request goes to the queue or list.
//! * **Strong request** (`Rows::add_strong`, before it decides anything):
//!   count itself in the word and mark it [`SHUT`], then (unless the word
//!   is [`DRAINED`]) a SeqCst fence. With the fence of the fast side this
//!   is a Dekker handshake: either the fast S sees the count and backs
//!   off, or the strong request's scan of the records sees the entry. The
//!   strong request then counts the fast holds of its row (other agents')
//!   as granted requests ahead of it, which only go away.
//! * **Fast release**: clear the entry, SeqCst fence, load the word; if it
//!   counts a strong request, that request may have seen the entry and be
//!   waiting for it: the wake-up duty of `fast.rs` (drained or not: a scan
//!   for another row of the stripe may have marked it drained after the
//!   clear, while the request that saw the entry still waits).
//!   A transaction that ends clears all of its entries at once with one
//!   fence, then loads each hold's word (`Rows::release`'s `ending`).
//! * **Strong release**: the count drops (`Rows::sub_strong`), or the
//!   registration (below) does.
//!
//! Unlike the intention locks' slots (`fast.rs`), strong requests on rows
//! are common (every update), so neither side pays a heavy fence: both
//! take a SeqCst fence (a locked instruction's cost, on a line of their
//! own), and the strong side pays what a biased lock's writer pays, a scan
//! of the records, only while its stripe may hold fast holds.
//!
//! ## Shut, drained, open
//!
//! A stripe's word leaves zero on its first strong request and stays
//! [`SHUT`] (no new fast hold) after its count drops, so that a stripe
//! that keeps getting updates is not revoked again and again (BRAVO's
//! inhibition). The fast holds taken before it shut may linger until
//! their transactions end, so strong requests scan the records; the first
//! scan that finds no entry in the stripe at all marks it [`DRAINED`], and
//! later strong requests skip the fence and the scan. A stripe opens again
//! (back to zero) when a fast S attempt finds it shut with nothing counted
//! after its agent has been turned away [`REOPEN_ROWS`] times: a count in
//! the agent's own record, so reopening writes no shared line until it
//! happens, and a stripe that keeps getting strong requests stays shut.
//!
//! ## Strong requests that write nothing shared
//!
//! Counting every update in its stripe's word would make the words the
//! lines every writer writes (eight stripes share a line). So a strong
//! request on a drained stripe (shut, no fast hold left, nobody
//! [`OPENING`] it) registers instead: it raises its agent's count for the
//! stripe's class (stripe modulo [`CLASSES`]) in its own record, fences,
//! and looks at the word again; still drained and not opening, it is
//! done, and its end lowers that count. Otherwise it takes the count back
//! and counts itself in the word as above. Registrations live only on
//! drained words, and no fast hold can come while they do: the word
//! opens only through a reopening, which marks it [`OPENING`] (still
//! shut), fences, and opens it only if no agent's count for the class is
//! raised. Either the reopening sees the registration, or the
//! registration sees the mark (a Dekker handshake again). A count raised
//! for another stripe of the class only delays a reopening.
//!
//! ## The switch
//!
//! Where rows are updated as often as they are read, stripes stay shut
//! and the row side only costs: an S request is turned away after a look
//! at its stripe, and every strong request registers and unregisters. So
//! the row side as a whole has a switch ([`Rows::state`], one word that
//! row requests read and only transitions write), which the transactions
//! turn by what their row requests met (`txn/row_switch.rs`, with
//! `Builder::fast_rows`'s `Auto`): [`ON`], the protocol above;
//! [`OFF`], no fast hold exists or is granted, and a strong request
//! decided while it reads `OFF` is not counted at all
//! ([`Strong::Uncounted`]: no word, no record, no scan; the tables skip
//! the stripe altogether then: the latch-free table gives such a request
//! no slot, the latched table binds a row's head with none and gives it
//! one when a request finds the switch no longer off). The two states
//! between keep both rules safe:
//!
//! * **ON to OFF** goes through [`DRAINING`], a revocation as a biased
//!   lock's writer makes it: no new fast hold (a fast S looks at the
//!   switch again after its fence, so either it sees `DRAINING` and backs
//!   off or the revoker's scan after its own fence sees its entry), and
//!   strong requests still counted, until a scan of the records finds no
//!   fast hold left ([`Rows::holds_none`]); then `OFF`.
//! * **OFF to ON** goes through [`ARMING`]: strong requests counted again,
//!   fast S not yet, until every transaction that was in progress when the
//!   switch left `OFF` has ended, since those may hold strong requests
//!   nobody counted (row locks are never passed on to a next
//!   transaction). That grace period reads the agents' own transaction
//!   flags (the exclusive-mode gate's, with its asymmetric fence:
//!   `gate.rs`), so it is the transaction layer's. Each `ON` has a new
//!   epoch ([`EPOCH`]): a stripe shut in an earlier one opens at its first
//!   fast attempt, not after [`REOPEN_ROWS`] of them, since what shut it
//!   is history.
//!
//! ## Reading another agent's entries
//!
//! An entry is two words (the lock id), so scanners read a record under a
//! sequence count (a seqlock: the agent makes it odd, fences, writes its
//! entries, and makes it even again with Release; a scanner that sees it
//! change retries). A torn read would be worse than a stale one here: a
//! strong request that believed a row held fast which no agent holds
//! would wait for a wake-up that no release owes it.

use crossbeam_utils::CachePadded;

use crate::id::{LockId, TxnId};
use crate::queue::{Blocker, Strong};
use crate::sync::{Arc, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

use super::FastTry;

/// Stripes per table (8 bytes each: 512 KiB, in pages touched only as
/// stripes are).
pub(crate) const STRIPES: usize = if cfg!(heirloom_loom) { 2 } else { 1 << 16 };
const STRIPE_BITS: u32 = STRIPES.trailing_zeros();
/// Rows an agent may hold S on fast at once (more go to the queue or list).
pub(crate) const ROWS: usize = if cfg!(heirloom_loom) { 2 } else { 32 };
/// Fast S attempts a shut stripe with nothing counted turns away from one
/// agent before that agent opens it again.
pub(crate) const REOPEN_ROWS: u32 = if cfg!(heirloom_loom) { 0 } else { 256 };

/// The word's flag: no new fast hold (a strong request came since it was
/// last open).
pub(crate) const SHUT: u64 = 1 << 63;
/// The word's flag: shut, and no fast hold is left in the stripe (strong
/// requests need not look for any).
pub(crate) const DRAINED: u64 = 1 << 62;
/// The word's flag: an agent is about to open the word (shut and drained
/// until it has looked for registered strong requests).
const OPENING: u64 = 1 << 61;
/// The word's strong count.
const COUNT: u64 = u32::MAX as u64;
/// The word's epoch of the switch in which it was last shut (bits 32 to
/// 47; see "The switch").
const WORD_EPOCH: u64 = 0xffff << 32;

/// The switch's states ([`Rows::state`]'s low two bits; see the module
/// docs, "The switch").
pub(crate) const OFF: u64 = 0;
pub(crate) const ARMING: u64 = 1;
pub(crate) const ON: u64 = 2;
pub(crate) const DRAINING: u64 = 3;
const STATE: u64 = 3;
/// The switch's epoch, counted up by every transition to [`ON`] (the bits
/// above the state).
pub(crate) const EPOCH: u64 = 4;
/// Classes of stripes an agent counts its registered strong requests in
/// (stripe modulo this; a reopening reads one class of every agent).
pub(crate) const CLASSES: usize = if cfg!(heirloom_loom) { 2 } else { 256 };

/// Is the switch whose word is `state` [`ON`]? A quick look (Relaxed): a
/// fast S asks only then, and looks again after its fence.
#[inline(always)]
pub(crate) fn is_open(state: &AtomicU64) -> bool {
    state.load(Ordering::Relaxed) & STATE == ON
}

/// An agent's fast row holds (written only by the agent).
struct Record {
    /// Odd while the agent changes the fields below (a sequence count).
    seq: AtomicU64,
    /// The transaction and age of the holds.
    txn: AtomicU64,
    ts: AtomicU64,
    /// Bit `stripe % 64` of every stripe with an entry (a filter for
    /// scans; cleared when no entry is left).
    summary: AtomicU64,
    /// Entries in use (the agent's own count).
    live: AtomicU32,
    /// Fast attempts shut stripes turned away (the agent's own count).
    turned: AtomicU32,
    /// Fast holds granted since the agent last asked (its own count, for
    /// the switch: [`Rows::take_grants`]).
    granted: AtomicU32,
    /// The agent is counted in `Rows::used` (its own flag).
    listed: AtomicBool,
    /// The entries: a lock id's words; `his[i]` 0 is a free entry (a row
    /// id's second word is never 0).
    keys: [AtomicU64; ROWS],
    his: [AtomicU64; ROWS],
    /// Strong requests registered (see the module docs) by class of
    /// stripe: raised by the agent, lowered by whoever ends the request
    /// (usually the agent), read by reopenings.
    strong: [AtomicU32; CLASSES],
}

impl Record {
    fn new() -> Self {
        Record {
            seq: AtomicU64::new(0),
            txn: AtomicU64::new(0),
            ts: AtomicU64::new(0),
            summary: AtomicU64::new(0),
            live: AtomicU32::new(0),
            turned: AtomicU32::new(0),
            granted: AtomicU32::new(0),
            listed: AtomicBool::new(false),
            keys: std::array::from_fn(|_| AtomicU64::new(0)),
            his: std::array::from_fn(|_| AtomicU64::new(0)),
            strong: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// Runs the agent's change `f` of its record as scanners expect it.
    #[inline(always)]
    fn change(&self, f: impl FnOnce(&Record)) {
        // Relaxed: only the agent writes `seq`.
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        // Release: a scanner whose loads see a store of `f` (its Acquire
        // fence after them) sees the odd count.
        fence(Ordering::Release);
        f(self);
        // Release: a scanner that sees the even count sees the change.
        self.seq.store(s + 2, Ordering::Release);
    }

    /// Reads the record with `f` (no side effects: it may run again) at a
    /// moment no change was under way.
    #[inline]
    fn read<R>(&self, f: impl Fn(&Record) -> R) -> R {
        loop {
            // Acquire: pairs with `change`'s final Release store.
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 == 0 {
                let out = f(self);
                // Acquire: pairs with `change`'s Release fence.
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == s {
                    return out;
                }
            }
            super::pause();
        }
    }

    /// The entry holding `words`: read by the agent itself, or by a
    /// scanner inside `Record::read`.
    #[inline]
    fn entry_of(&self, words: (u64, u64)) -> Option<usize> {
        // Relaxed: only the agent writes the entries (a scanner's reads are
        // checked by the sequence count).
        (0..ROWS).find(|&i| {
            self.his[i].load(Ordering::Relaxed) == words.1 && self.keys[i].load(Ordering::Relaxed) == words.0
        })
    }
}

/// The row side of the fast path: the stripes' words and the agents'
/// records (see the module docs).
pub(crate) struct Rows {
    /// The switch: a state and an epoch (see the module docs). Read by
    /// every row request, written only by transitions; shared with the
    /// manager, whose transactions look at it before a fast S
    /// ([`Rows::switch`]).
    state: Arc<CachePadded<AtomicU64>>,
    stripes: Box<[AtomicU64]>,
    records: Box<[CachePadded<Record>]>,
    /// One more than the highest agent index that ever held a row fast.
    used: AtomicUsize,
}

impl Rows {
    pub(crate) fn new(agents: usize) -> Self {
        Rows {
            state: Arc::new(CachePadded::new(AtomicU64::new(ON))),
            stripes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            records: (0..agents).map(|_| CachePadded::new(Record::new())).collect(),
            used: AtomicUsize::new(0),
        }
    }

    /// The stripe of the row with `words` (Fibonacci hashing, top bits).
    #[inline(always)]
    pub(crate) fn stripe(words: (u64, u64)) -> usize {
        ((words.0 ^ words.1.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - STRIPE_BITS)) as usize
    }

    #[inline]
    fn bit(stripe: usize) -> u64 {
        1 << (stripe & 63)
    }

    /// Tries to take the row with `words` (in `stripe`) in S fast for
    /// `txn` (age `ts`) of `agent` (see [`FastTry`]). Inlined up to the
    /// look at the word, which turns most attempts on a shut stripe away.
    #[inline(always)]
    pub(crate) fn acquire(&self, stripe: usize, words: (u64, u64), agent: u32, txn: u64, ts: u64) -> FastTry {
        let Some(r) = self.records.get(agent as usize) else {
            return FastTry::Refused;
        };
        // Relaxed (both): quick looks (the loads after the fence decide;
        // the transaction looked at the switch before it asked, `is_open`).
        let state = self.state.load(Ordering::Relaxed);
        let w = self.stripes[stripe].load(Ordering::Relaxed);
        if w != 0 && !self.reopen(r, stripe, w, state) {
            return FastTry::Refused;
        }
        self.hold(r, stripe, words, agent, txn, ts)
    }

    /// [`Rows::acquire`] on an open word.
    #[inline(never)]
    fn hold(&self, r: &Record, stripe: usize, words: (u64, u64), agent: u32, txn: u64, ts: u64) -> FastTry {
        let word = &self.stripes[stripe];
        // Relaxed: the agent's own count.
        let live = r.live.load(Ordering::Relaxed) as usize;
        if live == ROWS {
            return FastTry::Refused;
        }
        // Entries fill from the front and are freed at commit, so the
        // entry at `live` is usually free.
        let free = |i: usize| r.his[i].load(Ordering::Relaxed) == 0;
        let i = if free(live) {
            live
        } else {
            (0..ROWS).find(|&i| free(i)).expect("fewer than ROWS entries live")
        };
        self.list(r, agent);
        r.change(|r| {
            if r.txn.load(Ordering::Relaxed) != txn {
                r.txn.store(txn, Ordering::Relaxed);
                r.ts.store(ts, Ordering::Relaxed);
            }
            r.keys[i].store(words.0, Ordering::Relaxed);
            r.his[i].store(words.1, Ordering::Relaxed);
            let s = r.summary.load(Ordering::Relaxed);
            r.summary.store(s | Self::bit(stripe), Ordering::Release);
        });
        r.live.store(live as u32 + 1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        // Acquire (both): pairs with the Release of a strong request's
        // decrement, so its holder's work happens before ours, and with the
        // switch's turn to ON, which follows the end of every strong
        // request it did not count. The switch after the fence: a revoker
        // (`DRAINING`) that missed our entry is seen here.
        if word.load(Ordering::Acquire) == 0 && self.state.load(Ordering::Acquire) & STATE == ON {
            // Relaxed: the agent's own count.
            r.granted
                .store(r.granted.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            return FastTry::Held;
        }
        if self.release_entry(r, stripe, i) {
            FastTry::BackedOff
        } else {
            FastTry::Refused
        }
    }

    /// The word `w` (not zero) turned a fast attempt of `r`'s agent on
    /// `stripe` away: counts it if nothing is counted, and opens the word
    /// after [`REOPEN_ROWS`] of them, or at once if it was shut in an
    /// earlier epoch of the switch (`state`, the switch's word). `true` if
    /// it opened it. Inlined up to the count (most stripes of a workload
    /// that updates rows stay shut, so every row S lock comes here).
    #[inline(always)]
    // Under loom `REOPEN_ROWS` is 0 (the models open at once).
    #[allow(clippy::absurd_extreme_comparisons)]
    fn reopen(&self, r: &Record, stripe: usize, w: u64, state: u64) -> bool {
        if w & COUNT != 0 {
            return false;
        }
        // Relaxed: the agent's own count.
        let n = r.turned.load(Ordering::Relaxed);
        if n < REOPEN_ROWS && w & WORD_EPOCH == Self::word_epoch(state) {
            r.turned.store(n + 1, Ordering::Relaxed);
            return false;
        }
        self.reopen_now(r, stripe, w)
    }

    /// [`Rows::reopen`] once the count is reached.
    #[cold]
    #[inline(never)]
    fn reopen_now(&self, r: &Record, stripe: usize, w: u64) -> bool {
        r.turned.store(0, Ordering::Relaxed);
        let word = &self.stripes[stripe];
        if w & DRAINED == 0 {
            // No registered strong request (they register only on drained
            // words). AcqRel: continues the release sequence of the last
            // strong request's decrement, so fast holds granted on the open
            // word follow its holder's work. Fails if a strong request came.
            return word.compare_exchange(w, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok();
        }
        self.reopen_drained(stripe, w)
    }

    /// [`Rows::reopen`] of a drained word `w`: mark it [`OPENING`] (still
    /// shut: no fast hold yet), fence, look for registered strong requests
    /// in the stripe's class (Dekker with `Rows::register`: either we see
    /// the registration or it sees the mark and counts itself instead),
    /// and open it if there are none and nothing was counted meanwhile.
    #[cold]
    fn reopen_drained(&self, stripe: usize, w: u64) -> bool {
        let word = &self.stripes[stripe];
        if w & OPENING != 0
            || word
                .compare_exchange(w, w | OPENING, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        fence(Ordering::SeqCst);
        // AcqRel: Acquire pairs with the Release of the registered
        // requests' ends seen by the look (through `registered`'s Acquire
        // loads, their holders' work happens before ours), and Release
        // passes it on to fast holds granted on the open word.
        if !self.registered(stripe)
            && word
                .compare_exchange(w | OPENING, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            return true;
        }
        // Release: as the decrement's (a strong request may have counted
        // itself meanwhile).
        word.fetch_and(!OPENING, Ordering::Release);
        false
    }

    /// Is a strong request registered in `stripe`'s class by any agent (a
    /// look after a reopening's fence)?
    fn registered(&self, stripe: usize) -> bool {
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        // Acquire: pairs with `unregister`'s Release.
        self.records[..used]
            .iter()
            .any(|r| r.strong[stripe % CLASSES].load(Ordering::Acquire) != 0)
    }

    /// Counts `r`'s agent in `used`, once (before its first entry or
    /// registration, which a scan after a fence then finds).
    #[inline]
    fn list(&self, r: &Record, agent: u32) {
        // Relaxed: the agent's own flag.
        if !r.listed.load(Ordering::Relaxed) {
            self.used.fetch_max(agent as usize + 1, Ordering::Relaxed);
            r.listed.store(true, Ordering::Relaxed);
        }
    }

    /// Gives up `agent`'s fast S hold of the row with `words`; `true` if
    /// the caller has the wake-up duty (see the module docs). `ending`:
    /// the agent's transaction is ending and gives up every hold it has
    /// (commit or abort), so the first of them to come here clears every
    /// entry at once ([`Rows::clear_all`]); a hold whose entry was cleared
    /// so (its record is empty) is given up by the look at the word alone,
    /// after that clear's fence.
    #[inline(always)]
    pub(crate) fn release(&self, stripe: usize, words: (u64, u64), agent: u32, ending: bool) -> bool {
        let r = &self.records[agent as usize];
        // Relaxed: the agent's own count.
        let live = r.live.load(Ordering::Relaxed);
        if live == 0 || ending && live > 1 {
            if live != 0 {
                Self::clear_all(r, live);
            }
            return self.owes_wake(stripe);
        }
        let Some(i) = r.entry_of(words) else {
            unreachable!("a fast row hold without its entry")
        };
        self.release_entry(r, stripe, i)
    }

    /// The first half of [`Rows::release`] for every fast S hold of an
    /// ending transaction at once: the `live` entries of its agent's
    /// record `r` are cleared in one change of the record, then one SeqCst
    /// fence stands for the fence each release would have taken. Each
    /// hold is then given up by [`Rows::release`], which finds the record
    /// empty and only looks at its stripe's word (the Dekker handshake of
    /// the module docs, entry by entry: every entry is cleared before the
    /// fence, every word loaded after it). A transaction with one hold
    /// releases it as any release does, which costs no more.
    #[cold]
    #[inline(never)]
    fn clear_all(r: &Record, live: u32) {
        r.change(|r| {
            // Entries fill from the front: the walk ends at the last live
            // one, usually entry `live - 1` (an early unlock leaves holes).
            let mut left = live;
            for i in 0..ROWS {
                if r.his[i].load(Ordering::Relaxed) != 0 {
                    r.his[i].store(0, Ordering::Relaxed);
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
            r.summary.store(0, Ordering::Release);
        });
        r.live.store(0, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    #[inline]
    fn release_entry(&self, r: &Record, stripe: usize, i: usize) -> bool {
        // Relaxed: the agent's own count.
        let live = r.live.load(Ordering::Relaxed) - 1;
        r.change(|r| {
            r.his[i].store(0, Ordering::Relaxed);
            if live == 0 {
                r.summary.store(0, Ordering::Release);
            }
        });
        r.live.store(live, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        self.owes_wake(stripe)
    }

    /// After a fast hold's entry was cleared and fenced: does `stripe`'s
    /// word count a strong request that may have seen the entry and wait
    /// for it (the wake-up duty)? The count alone decides. A drained flag
    /// does not clear the duty: a strong request on another row of the
    /// stripe may have scanned after our clear and marked the word drained
    /// while a request that saw our entry before the clear still waits
    /// (loom: `a_stripe_drained_after_the_clear_still_owes_the_wake_up`).
    /// A release finds its word drained only so, since no fast hold is
    /// taken on a shut word: the extra duty is that rare.
    #[inline(always)]
    fn owes_wake(&self, stripe: usize) -> bool {
        self.stripes[stripe].load(Ordering::Relaxed) & COUNT != 0
    }

    /// A strong request of `agent` on a row of `stripe` is about to decide
    /// (see the module docs): from here on every fast hold of the stripe is
    /// in the records a scan reads, or backs off. Registered on a drained
    /// stripe (only the agent's record is written), else counted in the
    /// word.
    #[inline]
    pub(crate) fn add_strong(&self, stripe: usize, agent: u32) -> Strong {
        if self.is_off() {
            return Strong::Uncounted;
        }
        // Relaxed: `register` looks again after its fence.
        let w = self.stripes[stripe].load(Ordering::Relaxed);
        if w & (SHUT | DRAINED | OPENING) == SHUT | DRAINED && self.register(stripe, agent) {
            return Strong::Registered;
        }
        self.count_strong(stripe);
        Strong::Counted
    }

    /// Registers a strong request of `agent` on the drained `stripe` in its
    /// record; `false` (and undone) if the agent has no record or the word
    /// was no longer drained, or an agent was opening it, after the fence.
    #[inline]
    fn register(&self, stripe: usize, agent: u32) -> bool {
        let Some(r) = self.records.get(agent as usize) else {
            return false;
        };
        self.list(r, agent);
        let n = &r.strong[stripe % CLASSES];
        // Relaxed: the fence orders it before the look at the word.
        n.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        // Acquire: pairs with the Release of the drained flag (the fast
        // holds it saw released happen before our decision).
        let w = self.stripes[stripe].load(Ordering::Acquire);
        if w & (SHUT | DRAINED | OPENING) == SHUT | DRAINED {
            return true;
        }
        n.fetch_sub(1, Ordering::Relaxed);
        false
    }

    /// Counts a strong request in `stripe`'s word (see `add_strong`). Out
    /// of line: on a table whose rows are updated most strong requests
    /// register, and `add_strong` stays small without this path.
    #[cold]
    #[inline(never)]
    fn count_strong(&self, stripe: usize) {
        let word = &self.stripes[stripe];
        let epoch = Self::word_epoch(self.state.load(Ordering::Relaxed));
        // Relaxed: the CAS decides.
        let mut w = word.load(Ordering::Relaxed);
        loop {
            // AcqRel: Acquire pairs with fast releases seen through the
            // drained flag; Release as the decrement's.
            let shut = (w & !WORD_EPOCH) | SHUT | epoch;
            match word.compare_exchange_weak(w, shut + 1, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => w = now,
            }
        }
        if w & DRAINED != 0 {
            return;
        }
        fence(Ordering::SeqCst);
        if !self.any_in(stripe) {
            // Release: who skips the scan on seeing this follows the
            // releases our scan saw (Acquire loads).
            word.fetch_or(DRAINED, Ordering::Release);
        }
    }

    /// A strong request of `agent` on a row of `stripe` is gone (`how`: as
    /// `add_strong` returned; anyone may end another agent's request).
    #[inline]
    pub(crate) fn sub_strong(&self, stripe: usize, agent: u32, how: Strong) {
        match how {
            // Release: a reopening that sees the lower count (Acquire)
            // follows our work, and so do the fast holds granted after it.
            Strong::Registered => {
                self.records[agent as usize].strong[stripe % CLASSES].fetch_sub(1, Ordering::Release);
            }
            // Release: a fast hold granted on the lower count sees our work.
            Strong::Counted => {
                self.stripes[stripe].fetch_sub(1, Ordering::Release);
            }
            Strong::Uncounted => {}
        }
    }

    /// Is the switch [`OFF`] (no fast hold exists, and none is granted
    /// before every transaction in progress has ended)? Acquire: pairs
    /// with the turn to `OFF`, which follows the release of every fast
    /// hold.
    #[inline]
    pub(crate) fn is_off(&self) -> bool {
        self.state.load(Ordering::Acquire) & STATE == OFF
    }

    /// The fast holds `agent` was granted since it last asked (the agent's
    /// own count; 0 for an agent without a record).
    pub(crate) fn take_grants(&self, agent: u32) -> u32 {
        self.records.get(agent as usize).map_or(0, |r| {
            // Relaxed: the agent's own count.
            let n = r.granted.load(Ordering::Relaxed);
            r.granted.store(0, Ordering::Relaxed);
            n
        })
    }

    /// Is the switch [`ON`]?
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        is_open(&self.state)
    }

    /// The switch's word, for the manager (see [`is_open`]).
    pub(crate) fn switch(&self) -> Arc<CachePadded<AtomicU64>> {
        Arc::clone(&self.state)
    }

    /// The switch's word: its state (`& 3`) and epoch.
    #[inline]
    pub(crate) fn state(&self) -> u64 {
        // Acquire: a transition's Release (see `turn`).
        self.state.load(Ordering::Acquire)
    }

    /// Turns the switch from `from` (a whole word, as `state` read it) to
    /// the state `to`, with a new epoch when `to` is [`ON`]; `false` if
    /// another transition came first.
    pub(crate) fn turn(&self, from: u64, to: u64) -> bool {
        let epoch = (from & !STATE) + if to == ON { EPOCH } else { 0 };
        // AcqRel: Release publishes what the turning agent saw (the ends
        // of the transactions or holds it waited for) to whoever reads the
        // new state (Acquire); Acquire as `state`'s.
        self.state
            .compare_exchange(from, epoch | to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// After a turn to [`DRAINING`] (and the caller's SeqCst fence): does
    /// no agent hold a row fast any more? A fast S that missed the turn
    /// published its entry before its own fence, so this scan sees it
    /// (Dekker); `true` means none is left and none can come while the
    /// switch is not `ON`.
    pub(crate) fn holds_none(&self) -> bool {
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        // Acquire: pairs with the filter's Release stores (the holds' work
        // happens before what follows `OFF`).
        self.records[..used]
            .iter()
            .all(|r| r.summary.load(Ordering::Acquire) == 0)
    }

    /// The epoch bits a word shut under the switch's word `state` carries.
    #[inline(always)]
    fn word_epoch(state: u64) -> u64 {
        ((state / EPOCH) << 32) & WORD_EPOCH
    }

    /// Is any row of `stripe` held fast (a scan after a counted strong
    /// request's fence)?
    fn any_in(&self, stripe: usize) -> bool {
        let mut found = false;
        self.scan(stripe, |_, r| {
            found |= r.read(|r| {
                (0..ROWS).any(|i| {
                    let h = r.his[i].load(Ordering::Relaxed);
                    h != 0 && Self::stripe((r.keys[i].load(Ordering::Relaxed), h)) == stripe
                })
            });
        });
        found
    }

    /// Calls `f(agent, record)` with the record of every agent whose filter
    /// names `stripe` (`f` reads it with `Record::read`).
    fn scan(&self, stripe: usize, mut f: impl FnMut(u32, &Record)) {
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        for (a, r) in self.records[..used].iter().enumerate() {
            // Acquire: pairs with the filter's Release stores.
            if r.summary.load(Ordering::Acquire) & Self::bit(stripe) != 0 {
                f(a as u32, r);
            }
        }
    }

    /// The transaction and age of the agent of `r` if it holds the row with
    /// `words` fast (read inside `Record::read`).
    fn holds(r: &Record, words: (u64, u64)) -> Option<(TxnId, u64)> {
        r.entry_of(words)
            .map(|_| (TxnId(r.txn.load(Ordering::Relaxed)), r.ts.load(Ordering::Relaxed)))
    }

    /// Does `agent` hold the row with `words` (in `stripe`) fast?
    #[inline]
    pub(crate) fn own(&self, stripe: usize, words: (u64, u64), agent: u32) -> bool {
        // Relaxed: read by the agent itself, or of a waiting agent whose
        // holds do not change while it waits (set before its request was
        // linked, which the reader's load of it follows). The filter first:
        // most requests come from agents with no fast hold in the stripe.
        self.records
            .get(agent as usize)
            .is_some_and(|r| r.summary.load(Ordering::Relaxed) & Self::bit(stripe) != 0 && r.entry_of(words).is_some())
    }

    /// Are fast holds of the row with `words` (in `stripe`) of other
    /// agents than `agent` there? The caller counted a strong request
    /// there before (`Rows::add_strong`).
    ///
    /// Inlined up to the look at the drained flag, which answers most
    /// strong requests (no scan, no call); the scan is out of line.
    #[inline(always)]
    pub(crate) fn in_way(&self, stripe: usize, words: (u64, u64), agent: u32) -> bool {
        // Acquire: pairs with the Release of the drained flag (as in
        // `holders_each`).
        self.stripes[stripe].load(Ordering::Acquire) & DRAINED == 0 && self.held_by_other(stripe, words, agent)
    }

    /// [`Rows::in_way`]'s scan of a stripe not drained: does an agent other
    /// than `agent` hold the row with `words` fast? What `holders_each`
    /// finds, without collecting the holders.
    #[inline(never)]
    fn held_by_other(&self, stripe: usize, words: (u64, u64), agent: u32) -> bool {
        let mut found = false;
        self.scan(stripe, |a, r| {
            found = found || (a != agent && r.read(|r| r.entry_of(words).is_some()));
        });
        found
    }

    /// Calls `f` with every fast holder (other than `agent`) of the row
    /// with `words` in `stripe`.
    pub(crate) fn holders_each(&self, stripe: usize, words: (u64, u64), agent: u32, mut f: impl FnMut(Blocker)) {
        // Acquire: pairs with the Release of the drained flag.
        if self.stripes[stripe].load(Ordering::Acquire) & DRAINED != 0 {
            return;
        }
        let mut found = Vec::new();
        self.scan(stripe, |a, r| {
            if a != agent
                && let Some((txn, ts)) = r.read(|r| Rows::holds(r, words))
            {
                found.push(Blocker { txn, agent: a, ts });
            }
        });
        found.into_iter().for_each(&mut f);
    }

    /// Calls `f(lock, txn)` for every fast row hold (S; the monitor).
    pub(crate) fn each_hold(&self, mut f: impl FnMut(LockId, TxnId)) {
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        for r in &self.records[..used] {
            // Acquire: pairs with the filter's Release stores.
            if r.summary.load(Ordering::Acquire) == 0 {
                continue;
            }
            let (txn, holds) = r.read(|r| {
                let holds: Vec<(u64, u64)> = (0..ROWS)
                    .filter_map(|i| {
                        let h = r.his[i].load(Ordering::Relaxed);
                        (h != 0).then(|| (r.keys[i].load(Ordering::Relaxed), h))
                    })
                    .collect();
                (TxnId(r.txn.load(Ordering::Relaxed)), holds)
            });
            for (k, h) in holds {
                f(LockId::from_words(k, h), txn);
            }
        }
    }
}
