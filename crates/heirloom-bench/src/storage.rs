//! In-memory tables: rows in one preallocated array, a primary-key index
//! (heirloom-btree's B+tree, or its hash index for tables only read by key),
//! and the transaction context that locks, logs undo and rolls back.
//!
//! A row is `width` 64-bit words. Words are atomics read and written with
//! `Relaxed` ordering: the locks of heirloom (strict two-phase locking)
//! decide who may touch a row, and the lock manager's latches order those
//! accesses; the atomics only make a locking bug show up as wrong data
//! instead of undefined behaviour. On x86-64 relaxed loads and stores are
//! plain moves.

use heirloom::{LockError, LockId, Mode, TableId, Transaction};
use heirloom_btree::{BTree, HashIndex, Optimistic};
use parking_lot::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Rows per storage chunk: tables grow a chunk at a time, up to their capacity.
const CHUNK_ROWS: usize = 1 << 14;

/// A row slot in a table's array.
pub type Slot = u32;

/// What can go wrong with a table (beyond lock errors).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// Every slot is in use: the table was sized too small for the run.
    #[error("table {table} is full ({capacity} rows)")]
    Full {
        /// Table name.
        table: &'static str,
        /// Its capacity.
        capacity: usize,
    },
}

/// Which primary-key index a table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexKind {
    /// heirloom-btree's B+tree with optimistic lock coupling: ordered,
    /// range scans.
    #[default]
    BTree,
    /// heirloom-btree's fixed-capacity hash index: point lookups only
    /// (scans work but sort a full pass), no write to shared memory on a
    /// lookup. For tables read by key whose rows are never deleted.
    Hash,
}

impl IndexKind {
    /// Parses `btree` or `hash`.
    pub fn parse(s: &str) -> Result<IndexKind, String> {
        match s {
            "btree" => Ok(IndexKind::BTree),
            "hash" => Ok(IndexKind::Hash),
            _ => Err(format!("index {s:?}: expected btree or hash")),
        }
    }
}

/// A table's primary-key index: key -> slot.
pub enum Index {
    /// Ordered.
    BTree(BTree<Optimistic>),
    /// Hashed.
    Hash(HashIndex),
}

/// The index is full (a hash index whose slots are all claimed).
#[derive(Debug)]
pub struct IndexFull;

impl Index {
    fn new(kind: IndexKind, capacity: usize) -> Index {
        match kind {
            IndexKind::BTree => Index::BTree(BTree::new()),
            IndexKind::Hash => Index::Hash(HashIndex::with_capacity(capacity)),
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        match self {
            Index::BTree(t) => t.get(key),
            Index::Hash(h) => h.get(key),
        }
    }

    /// Adds `key -> value`; false if `key` is present.
    pub fn insert(&self, key: u64, value: u64) -> Result<bool, IndexFull> {
        match self {
            Index::BTree(t) => Ok(t.insert(key, value)),
            Index::Hash(h) => h.insert(key, value).map_err(|_| IndexFull),
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&self, key: u64) -> Option<u64> {
        match self {
            Index::BTree(t) => t.remove(key),
            Index::Hash(h) => h.remove(key),
        }
    }

    /// Calls `f(key, value)` in key order over `range` while it returns true.
    pub fn scan<F: FnMut(u64, u64) -> bool>(&self, range: impl std::ops::RangeBounds<u64>, mut f: F) {
        match self {
            Index::BTree(t) => t.scan(range, f),
            Index::Hash(h) => {
                for (k, v) in h.entries() {
                    if range.contains(&k) && !f(k, v) {
                        break;
                    }
                }
            }
        }
    }

    /// The entries in `range`, in key order.
    pub fn range(&self, range: impl std::ops::RangeBounds<u64>) -> Vec<(u64, u64)> {
        match self {
            Index::BTree(t) => t.range(range),
            Index::Hash(h) => h.entries().into_iter().filter(|e| range.contains(&e.0)).collect(),
        }
    }

    /// The first entry in `range`.
    pub fn first(&self, range: impl std::ops::RangeBounds<u64>) -> Option<(u64, u64)> {
        match self {
            Index::BTree(t) => t.first(range),
            Index::Hash(h) => h.entries().into_iter().find(|e| range.contains(&e.0)),
        }
    }

    /// Entries (a full pass).
    pub fn count(&self) -> usize {
        match self {
            Index::BTree(t) => t.count(),
            Index::Hash(h) => h.entries().len(),
        }
    }
}

/// One table.
pub struct Table {
    /// Name for messages.
    pub name: &'static str,
    /// Lock name of the table (rows are `LockId::row(id, primary key)`).
    pub id: TableId,
    width: usize,
    /// Row storage, allocated a chunk at a time on first use (so a table
    /// that grows, like TPC-C's ORDER_LINE, costs only what it holds).
    chunks: Box<[OnceLock<Box<[AtomicU64]>>]>,
    capacity: usize,
    /// The first slot never handed out.
    next: Mutex<usize>,
    free: Mutex<Vec<Slot>>,
    /// Length of `free`, written under its mutex; read without it so that
    /// inserts into a table nobody deletes from skip the mutex (a shared
    /// line written on every insert otherwise).
    free_len: AtomicUsize,
    /// Primary key -> slot.
    pub index: Index,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.name)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Table {
    /// A table of up to `capacity` rows of `width` words (memory is taken as
    /// rows are allocated), indexed by a B+tree.
    pub fn new(name: &'static str, id: TableId, width: usize, capacity: usize) -> Self {
        Self::with_index(name, id, width, capacity, IndexKind::BTree)
    }

    /// As [`new`](Self::new), with the primary-key index `kind`.
    pub fn with_index(name: &'static str, id: TableId, width: usize, capacity: usize, kind: IndexKind) -> Self {
        let chunks = (0..capacity.div_ceil(CHUNK_ROWS)).map(|_| OnceLock::new()).collect();
        Table {
            name,
            id,
            width,
            chunks,
            capacity,
            next: Mutex::new(0),
            free: Mutex::new(Vec::new()),
            free_len: AtomicUsize::new(0),
            index: Index::new(kind, capacity),
        }
    }

    /// Bytes a table of this shape takes (rows plus an index estimate), for
    /// checking a scale against memory before allocating.
    pub fn estimate_bytes(width: usize, capacity: usize) -> u64 {
        // Rows, plus about 40 bytes of B+tree per entry (512-byte nodes ~2/3 full).
        (capacity as u64) * (width as u64 * 8 + 40)
    }

    /// Row words per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Takes a free slot.
    pub fn alloc(&self) -> Result<Slot, StorageError> {
        self.alloc_run(1).map(|(s, _)| s)
    }

    /// Takes up to `n` consecutive free slots: `(first, count)`, count 1
    /// when the slot comes from the free list or fewer than `n` are left.
    /// Inserts take runs of slots through [`UndoLog`], so one worker's new
    /// rows share no cache line with another's and the `next` mutex is
    /// taken once per run.
    pub fn alloc_run(&self, n: usize) -> Result<(Slot, usize), StorageError> {
        if self.free_len.load(Ordering::Relaxed) > 0 {
            let mut free = self.free.lock();
            if let Some(s) = free.pop() {
                self.free_len.store(free.len(), Ordering::Relaxed);
                return Ok((s, 1));
            }
        }
        let limit = self.capacity.min(Slot::MAX as usize + 1);
        let (s, n) = {
            let mut next = self.next.lock();
            let s = *next;
            let n = n.clamp(1, limit.saturating_sub(s).max(1));
            if s + n > limit {
                return Err(StorageError::Full {
                    table: self.name,
                    capacity: self.capacity,
                });
            }
            *next = s + n;
            (s, n)
        };
        // Make sure the slots' chunks exist before anybody indexes a row.
        self.chunk_for(s);
        self.chunk_for(s + n - 1);
        Ok((s as Slot, n))
    }

    /// Allocates the chunk that holds slot `s` if it does not exist yet.
    fn chunk_for(&self, s: usize) {
        self.chunks[s / CHUNK_ROWS].get_or_init(|| (0..CHUNK_ROWS * self.width).map(|_| AtomicU64::new(0)).collect());
    }

    /// Returns a slot (after the deleting transaction committed, or an
    /// inserting one rolled back).
    pub fn release(&self, slot: Slot) {
        let mut free = self.free.lock();
        free.push(slot);
        self.free_len.store(free.len(), Ordering::Relaxed);
    }

    #[inline]
    fn word(&self, slot: Slot, field: usize) -> &AtomicU64 {
        debug_assert!(field < self.width);
        let s = slot as usize;
        // A slot is handed out only after its chunk is initialised (`alloc`).
        let chunk = self.chunks[s / CHUNK_ROWS].get().expect("slot from alloc");
        &chunk[(s % CHUNK_ROWS) * self.width + field]
    }

    /// Field `field` of the row in `slot` (the caller holds a lock on the row,
    /// or the database is quiescent).
    #[inline]
    pub fn get(&self, slot: Slot, field: usize) -> u64 {
        self.word(slot, field).load(Ordering::Relaxed)
    }

    /// Sets a field without undo (loading, or inside [`Tx`]).
    #[inline]
    pub fn put(&self, slot: Slot, field: usize, v: u64) {
        self.word(slot, field).store(v, Ordering::Relaxed);
    }

    /// Loads a row at population time: allocate, write, index.
    pub fn load(&self, key: u64, fields: &[u64]) -> Result<Slot, StorageError> {
        let slot = self.alloc()?;
        for (i, &v) in fields.iter().enumerate() {
            self.put(slot, i, v);
        }
        let fresh = self.index.insert(key, slot as u64).map_err(|_| self.full())?;
        debug_assert!(fresh, "duplicate key {key} loading {}", self.name);
        Ok(slot)
    }

    fn full(&self) -> StorageError {
        StorageError::Full {
            table: self.name,
            capacity: self.capacity,
        }
    }

    /// The lock of the row with primary key `key`.
    #[inline]
    pub fn row_lock(&self, key: u64) -> LockId {
        LockId::row(self.id, key)
    }

    /// Rows in use (index entries; a full scan).
    pub fn rows(&self) -> usize {
        self.index.count()
    }
}

/// One undo record.
#[derive(Debug, Clone, Copy)]
enum Undo<'d> {
    /// A field had `old` before.
    Field {
        t: &'d Table,
        slot: Slot,
        field: usize,
        old: u64,
    },
    /// A row was inserted: remove it from the index and free the slot.
    Insert { t: &'d Table, key: u64, slot: Slot },
    /// A row was deleted: put the index entry back.
    Delete { t: &'d Table, key: u64, slot: Slot },
    /// An entry was added to a secondary index: remove it.
    IndexInsert { index: &'d BTree<Optimistic>, key: u64 },
    /// An entry was appended to a worker-owned log: drop it.
    Append { log: usize },
}

/// The business outcome of a transaction that did not hit a concurrency
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Did its work and committed.
    Committed,
    /// Failed by design (TM1's missing rows, TPC-C's unused item): rolled
    /// back, then committed with no effect.
    Failed,
}

/// Why a transaction body stopped.
#[derive(Debug, thiserror::Error)]
pub enum TxError {
    /// A concurrency abort (the runner restarts the transaction).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A storage error (ends the run).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The run ended while the transaction was being restarted: the runner
    /// drops it (a transaction that keeps restarting, say under no-wait
    /// with no backoff and no exclusive mode, must not hold the run open).
    #[error("the run ended while the transaction was restarting")]
    Stopped,
}

impl heirloom::Restart for TxError {
    fn lock_error(&self) -> Option<&LockError> {
        match self {
            TxError::Lock(e) => Some(e),
            TxError::Storage(_) | TxError::Stopped => None,
        }
    }
}

/// Slots a worker takes from a table at a time for its inserts.
const SLOT_RUN: usize = 64;

/// Worker-owned undo state, reused across transactions.
#[derive(Default)]
pub struct UndoLog<'d> {
    records: Vec<Undo<'d>>,
    /// Slots of deleted rows, returned to their tables after commit.
    freed: Vec<(&'d Table, Slot)>,
    /// Per table, the worker's run of unused slots (next, left), taken
    /// with [`Table::alloc_run`] and given back on drop.
    runs: Vec<(&'d Table, usize, usize)>,
}

impl Drop for UndoLog<'_> {
    fn drop(&mut self) {
        for &mut (t, next, left) in &mut self.runs {
            for s in next..next + left {
                t.release(s as Slot);
            }
        }
    }
}

impl<'d> UndoLog<'d> {
    /// Rolls back every change (newest first) and forgets the log.
    /// `appends` is told how many entries to drop from each worker log.
    pub fn rollback(&mut self, mut drop_append: impl FnMut(usize)) {
        while let Some(u) = self.records.pop() {
            match u {
                Undo::Field { t, slot, field, old } => t.put(slot, field, old),
                Undo::Insert { t, key, slot } => {
                    t.index.remove(key);
                    t.release(slot);
                }
                Undo::Delete { t, key, slot } => {
                    // The deleted key kept its index entry's place (B+tree:
                    // room; hash: its slot), so this cannot find it full.
                    let fresh = t.index.insert(key, slot as u64);
                    debug_assert!(matches!(fresh, Ok(true)), "undo of a delete found the key back");
                }
                Undo::IndexInsert { index, key } => {
                    index.remove(key);
                }
                Undo::Append { log } => drop_append(log),
            }
        }
        self.freed.clear();
    }

    /// After commit: frees deleted slots and forgets the log.
    pub fn committed(&mut self) {
        self.records.clear();
        for (t, s) in self.freed.drain(..) {
            t.release(s);
        }
    }

    /// A slot of `t` for an insert, from this worker's run of them.
    fn alloc(&mut self, t: &'d Table) -> Result<Slot, StorageError> {
        let i = match self.runs.iter().position(|r| std::ptr::eq(r.0, t)) {
            Some(i) => i,
            None => {
                self.runs.push((t, 0, 0));
                self.runs.len() - 1
            }
        };
        let run = &mut self.runs[i];
        if run.2 == 0 {
            let (first, n) = t.alloc_run(SLOT_RUN)?;
            (run.1, run.2) = (first as usize, n);
        }
        let s = run.1;
        run.1 += 1;
        run.2 -= 1;
        // Below the table's limit, which `alloc_run` keeps within `Slot`.
        Ok(s as Slot)
    }

    /// True if nothing is logged.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.freed.is_empty()
    }
}

/// Nanosecond totals of the breakdown, per worker.
#[derive(Debug, Default, Clone, Copy)]
pub struct Times {
    /// Lock calls that neither waited nor found a latch held.
    pub lock_work: u64,
    /// Lock calls that found a latch held.
    pub contention: u64,
    /// Lock calls that waited for a lock.
    pub lock_wait: u64,
}

/// A transaction's view of the tables: every access takes the row lock
/// first (strict 2PL; intention locks on table and database come with it)
/// and every change is logged for rollback.
pub struct Tx<'t, 'a, 'd> {
    /// The lock manager transaction.
    pub txn: &'t mut Transaction<'a>,
    undo: &'t mut UndoLog<'d>,
    times: Option<&'t mut Times>,
}

impl<'t, 'a, 'd> Tx<'t, 'a, 'd> {
    /// Wraps a lock manager transaction and an (empty) undo log.
    pub fn new(txn: &'t mut Transaction<'a>, undo: &'t mut UndoLog<'d>) -> Self {
        debug_assert!(undo.is_empty());
        Tx { txn, undo, times: None }
    }

    /// Times every lock call into `times`: a call during which the agent
    /// waited counts as lock wait, one that found a latch held as latch
    /// contention, any other as lock manager work (whole calls: the
    /// attribution is per call, not per nanosecond).
    pub(crate) fn time_locks(&mut self, times: &'t mut Times) {
        self.times = Some(times);
    }

    /// Locks row `key` of `t` in `mode`.
    #[inline]
    pub fn lock(&mut self, t: &Table, key: u64, mode: Mode) -> Result<(), LockError> {
        self.lock_id(t.row_lock(key), mode)
    }

    /// Locks `id` in `mode` (intention locks on its ancestors first).
    #[inline]
    pub fn lock_id(&mut self, id: LockId, mode: Mode) -> Result<(), LockError> {
        self.timed(|t| t.lock(id, mode))
    }

    /// Locks every `(id, mode)` in one call ([`Transaction::lock_all`]: one
    /// message per partition on the server table).
    #[inline]
    pub fn lock_all(&mut self, reqs: &[(LockId, Mode)]) -> Result<(), LockError> {
        self.timed(|t| t.lock_all(reqs))
    }

    /// A null critical section on the lock table's state for `id`
    /// ([`heirloom::probe::NullSection`]), timed as lock manager work.
    #[inline]
    pub fn null_section(&mut self, id: LockId) {
        self.timed(|t| heirloom::probe::NullSection::null_section(t, id));
    }

    /// Runs a lock manager call, timing it into `times` if set: a call
    /// during which the agent waited counts as lock wait, one that found a
    /// latch held as latch contention, any other as lock manager work.
    #[inline]
    fn timed<R>(&mut self, f: impl FnOnce(&mut Transaction<'a>) -> R) -> R {
        match self.times.as_deref_mut() {
            None => f(self.txn),
            Some(times) => {
                let before = self.txn.agent_stats();
                let t0 = std::time::Instant::now();
                let r = f(self.txn);
                let ns = t0.elapsed().as_nanos() as u64;
                let after = self.txn.agent_stats();
                if after.waits > before.waits {
                    times.lock_wait += ns;
                } else if after.latch_contended > before.latch_contended {
                    times.contention += ns;
                } else {
                    times.lock_work += ns;
                }
                r
            }
        }
    }

    /// Locks row `key` in `mode` and returns its slot, or `None` if there is
    /// no such row (the lock is kept either way: the absence is read).
    #[inline]
    pub fn find(&mut self, t: &Table, key: u64, mode: Mode) -> Result<Option<Slot>, LockError> {
        self.lock(t, key, mode)?;
        Ok(t.index.get(key).map(|s| s as Slot))
    }

    /// Sets a field of a row this transaction holds X on, logging the old value.
    #[inline]
    pub fn set(&mut self, t: &'d Table, slot: Slot, field: usize, v: u64) {
        let old = t.get(slot, field);
        self.undo.records.push(Undo::Field { t, slot, field, old });
        t.put(slot, field, v);
    }

    /// Inserts row `key` (X lock first); false if the key exists.
    pub fn insert(&mut self, t: &'d Table, key: u64, fields: &[u64]) -> Result<bool, TxError> {
        self.lock(t, key, Mode::X)?;
        if t.index.get(key).is_some() {
            return Ok(false);
        }
        let slot = self.undo.alloc(t)?;
        for (i, &v) in fields.iter().enumerate() {
            t.put(slot, i, v);
        }
        // The X lock on `key` excludes every other inserter of this key.
        let fresh = match t.index.insert(key, slot as u64) {
            Ok(f) => f,
            Err(IndexFull) => {
                t.release(slot);
                return Err(t.full().into());
            }
        };
        debug_assert!(fresh);
        self.undo.records.push(Undo::Insert { t, key, slot });
        Ok(true)
    }

    /// Deletes row `key` (X lock first); false if absent.
    pub fn delete(&mut self, t: &'d Table, key: u64) -> Result<bool, TxError> {
        self.lock(t, key, Mode::X)?;
        let Some(slot) = t.index.remove(key) else {
            return Ok(false);
        };
        let slot = slot as Slot;
        self.undo.records.push(Undo::Delete { t, key, slot });
        self.undo.freed.push((t, slot));
        Ok(true)
    }

    /// Adds `key -> value` to a secondary index (the caller holds the lock
    /// that covers the entry, such as the X lock on the row it points to).
    pub fn index_insert(&mut self, index: &'d BTree<Optimistic>, key: u64, value: u64) {
        if index.insert(key, value) {
            self.undo.records.push(Undo::IndexInsert { index, key });
        }
    }

    /// Records an append to worker-owned log `log` (undone by dropping it).
    pub fn appended(&mut self, log: usize) {
        self.undo.records.push(Undo::Append { log });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heirloom::LockManager;

    fn insert<'d>(lm: &LockManager, undo: &mut UndoLog<'d>, t: &'d Table, key: u64) -> Slot {
        let mut agent = lm.agent();
        let mut txn = agent.begin();
        let mut tx = Tx::new(&mut txn, undo);
        assert!(matches!(tx.insert(t, key, &[key, 7]), Ok(true)));
        txn.commit().expect("commit");
        undo.committed();
        t.index.get(key).expect("inserted") as Slot
    }

    #[test]
    fn each_worker_inserts_into_its_own_run_of_slots_and_gives_the_rest_back() {
        let t = Table::new("T", TableId::new(0, 1), 2, 1_000);
        let lm = LockManager::builder().build();
        let (mut a, mut b) = (UndoLog::default(), UndoLog::default());
        let mut slots = (Vec::new(), Vec::new());
        for k in 0..3 {
            slots.0.push(insert(&lm, &mut a, &t, k));
            slots.1.push(insert(&lm, &mut b, &t, 100 + k));
        }
        // Interleaved inserts, contiguous slots per worker.
        assert_eq!(slots.0, [0, 1, 2]);
        assert_eq!(slots.1, [64, 65, 66]);
        assert_eq!(t.get(65, 0), 101);
        drop((a, b));
        // 2 x 61 unused slots went back to the free list, and are used next.
        assert_eq!(t.free_len.load(Ordering::Relaxed), 122);
        let mut c = UndoLog::default();
        let s = insert(&lm, &mut c, &t, 500);
        assert!((3..128).contains(&s) && !slots.1.contains(&s), "{s}");
        assert_eq!(t.rows(), 7);
    }

    #[test]
    fn a_nearly_full_table_hands_out_what_is_left() {
        let t = Table::new("T", TableId::new(0, 1), 1, 10);
        assert_eq!(t.alloc_run(4), Ok((0, 4)));
        assert_eq!(t.alloc_run(64), Ok((4, 6)));
        assert!(matches!(t.alloc_run(64), Err(StorageError::Full { .. })));
        assert!(matches!(t.alloc(), Err(StorageError::Full { .. })));
        t.release(2);
        assert_eq!(t.alloc_run(64), Ok((2, 1)));
    }
}
