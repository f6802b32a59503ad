//! Lock ids (database > table > page > row, and transaction locks outside
//! the hierarchy) and transaction ids.
//!
//! A [`LockId`] is 16 bytes, `Copy`, and names its parent implicitly: a row's
//! parent is its page when the row was named by page and slot (the engine has
//! pages, like Shore's record ids), otherwise its table. Hashing on the hot
//! path is one murmur3 finaliser ([`LockId::hash64`]), not SipHash.

use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// The level of a lock in the hierarchy, root first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
#[repr(u8)]
pub enum Level {
    /// A whole database.
    Database = 0,
    /// A table of a database.
    Table = 1,
    /// A page of a table.
    Page = 2,
    /// A row (record) of a table.
    Row = 3,
}

/// A table of a database: what row and page ids are qualified by.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct TableId {
    /// The database the table belongs to.
    pub db: u16,
    /// The table's number within the database.
    pub table: u32,
}

impl TableId {
    /// Table `table` of database `db`.
    pub const fn new(db: u16, table: u32) -> Self {
        TableId { db, table }
    }
}

/// `flags` bit: a row named by (page, slot); its parent is the page.
const PAGED: u8 = 1;
/// `flags` bit: a transaction's own lock ([`LockId::transaction`]), a root
/// outside the hierarchy.
const TXN: u8 = 2;

/// The name of a lockable thing. See the module docs.
///
/// Stored as two words so that comparing and hashing ids (the lock cache,
/// the table's head lookup) is two integer operations: `key`, and `hi` =
/// table << 32 | db << 16 | level << 8 | flags.
#[derive(Clone, Copy)]
pub struct LockId {
    key: u64,
    hi: u64,
}

const _: () = assert!(std::mem::size_of::<LockId>() == 16);

/// Longest root-to-leaf path: database, table, page, row.
pub const MAX_DEPTH: usize = 4;

impl LockId {
    #[inline]
    const fn make(key: u64, table: u32, db: u16, level: Level, flags: u8) -> Self {
        LockId {
            key,
            hi: ((table as u64) << 32) | ((db as u64) << 16) | ((level as u64) << 8) | flags as u64,
        }
    }

    #[inline]
    const fn table_no(&self) -> u32 {
        (self.hi >> 32) as u32
    }

    #[inline]
    const fn db_no(&self) -> u16 {
        (self.hi >> 16) as u16
    }

    #[inline]
    const fn flags(&self) -> u8 {
        self.hi as u8
    }

    /// Database `db`.
    pub const fn database(db: u16) -> Self {
        LockId::make(0, 0, db, Level::Database, 0)
    }

    /// The table `t`; its parent is its database.
    pub const fn table(t: TableId) -> Self {
        LockId::make(0, t.table, t.db, Level::Table, 0)
    }

    /// Page `page` of table `t`; its parent is the table.
    pub const fn page(t: TableId, page: u32) -> Self {
        LockId::make(page as u64, t.table, t.db, Level::Page, 0)
    }

    /// Row `key` of table `t` in an engine without pages; its parent is the table.
    pub const fn row(t: TableId, key: u64) -> Self {
        LockId::make(key, t.table, t.db, Level::Row, 0)
    }

    /// Row in `slot` of page `page` of table `t`; its parent is the page.
    pub const fn paged_row(t: TableId, page: u32, slot: u32) -> Self {
        LockId::make(((page as u64) << 32) | slot as u64, t.table, t.db, Level::Row, PAGED)
    }

    /// The lock of transaction `t` itself, outside the hierarchy (no
    /// parent, no children): PostgreSQL's transaction lock. `t` holds it in
    /// X from [`Transaction::publish_id`](crate::Transaction::publish_id)
    /// to its end, and [`Transaction::wait_for_txn`](crate::Transaction::wait_for_txn)
    /// waits for it, so waiting for a transaction to end is an ordinary
    /// lock wait that deadlock detection and every policy see. Counted at
    /// the database level.
    pub const fn transaction(t: TxnId) -> Self {
        LockId::make(t.0, u32::MAX, u16::MAX, Level::Database, TXN)
    }

    /// The transaction whose lock this is, if it is a
    /// [`LockId::transaction`].
    pub const fn transaction_of(&self) -> Option<TxnId> {
        if self.flags() & TXN != 0 {
            Some(TxnId(self.key))
        } else {
            None
        }
    }

    /// Is `self` a proper ancestor of `other` in the hierarchy?
    pub fn is_ancestor_of(&self, other: &LockId) -> bool {
        let mut cur = other.parent();
        while let Some(p) = cur {
            if p == *self {
                return true;
            }
            cur = p.parent();
        }
        false
    }

    /// The level of this lock.
    #[inline]
    pub const fn level(&self) -> Level {
        // Every id is made by `make` from a `Level`, so the byte is 0..=3;
        // the mask lets the compiler turn the match into the byte itself.
        match (self.hi >> 8) & 3 {
            0 => Level::Database,
            1 => Level::Table,
            2 => Level::Page,
            _ => Level::Row,
        }
    }

    /// The table this lock belongs to (`None` for a database).
    pub const fn table_id(&self) -> Option<TableId> {
        match self.level() {
            Level::Database => None,
            _ => Some(TableId {
                db: self.db_no(),
                table: self.table_no(),
            }),
        }
    }

    /// The database this lock belongs to.
    pub const fn db(&self) -> u16 {
        self.db_no()
    }

    /// The row key, page number or (page << 32 | slot) for paged rows; 0 above.
    pub const fn key(&self) -> u64 {
        self.key
    }

    /// The lock directly above this one, `None` for a database.
    #[inline]
    pub const fn parent(&self) -> Option<LockId> {
        let t = TableId {
            db: self.db_no(),
            table: self.table_no(),
        };
        match self.level() {
            Level::Database => None,
            Level::Table => Some(LockId::database(self.db_no())),
            Level::Page => Some(LockId::table(t)),
            Level::Row if self.flags() & PAGED != 0 => Some(LockId::page(t, (self.key >> 32) as u32)),
            Level::Row => Some(LockId::table(t)),
        }
    }

    /// A path of this lock alone (a request without intention locks,
    /// `Builder::intention_locks(false)`).
    #[inline]
    pub(crate) fn alone(&self) -> Path {
        Path {
            ids: [*self; MAX_DEPTH],
            len: 1,
        }
    }

    /// The path from the root down to and including this lock.
    #[inline]
    pub fn path(&self) -> Path {
        // Built straight from the packed fields, not by walking `parent`
        // and reversing: it is on the path of every `lock` call.
        let mut ids = [*self; MAX_DEPTH];
        let t = TableId {
            db: self.db_no(),
            table: self.table_no(),
        };
        let len = match self.level() {
            // A database, or a transaction's lock (no parent either).
            Level::Database => 1,
            Level::Table => {
                ids[0] = LockId::database(t.db);
                2
            }
            Level::Page => {
                ids[0] = LockId::database(t.db);
                ids[1] = LockId::table(t);
                3
            }
            Level::Row if self.flags() & PAGED != 0 => {
                ids[0] = LockId::database(t.db);
                ids[1] = LockId::table(t);
                ids[2] = LockId::page(t, (self.key >> 32) as u32);
                4
            }
            Level::Row => {
                ids[0] = LockId::database(t.db);
                ids[1] = LockId::table(t);
                3
            }
        };
        ids[len - 1] = *self;
        Path { ids, len: len as u8 }
    }

    /// The number of locks on the path from the root down to and including
    /// this one (`self.path().as_slice().len()`).
    #[inline]
    pub(crate) fn depth(&self) -> usize {
        match self.level() {
            Level::Database => 1,
            Level::Table => 2,
            Level::Page => 3,
            Level::Row if self.flags() & PAGED != 0 => 4,
            Level::Row => 3,
        }
    }

    /// The lock at `depth` on the path to this one (`self.path().as_slice()[depth]`,
    /// for `depth < self.depth()`): the walk's [`LockId::ancestor_above`]
    /// above the leaf, the lock itself at its own depth.
    #[cfg(test)]
    pub(crate) fn ancestor(&self, depth: usize) -> LockId {
        if depth + 1 >= self.depth() {
            *self
        } else {
            self.ancestor_above(depth)
        }
    }

    /// The lock at `depth` on the path to this one, for a `depth` above it
    /// (`depth + 1 < self.depth()`), computed from the packed fields. The
    /// lock path walks the hierarchy with it instead of building a
    /// [`Path`] (the array's copy cost a store-forwarding stall per call),
    /// and knows its leaf's depth, so the level is not decoded again for
    /// every step.
    #[inline]
    pub(crate) fn ancestor_above(&self, depth: usize) -> LockId {
        debug_assert!(depth + 1 < self.depth());
        let t = TableId {
            db: self.db_no(),
            table: self.table_no(),
        };
        match depth {
            0 => LockId::database(t.db),
            1 => LockId::table(t),
            _ => LockId::page(t, (self.key >> 32) as u32),
        }
    }

    /// The id as two words (key, packed table/db/level/flags): equal ids
    /// have equal words and vice versa. Lets a lock table keep an id in two
    /// atomics.
    #[inline]
    pub(crate) const fn words(&self) -> (u64, u64) {
        (self.key, self.hi)
    }

    /// The bit of this id in an agent's held-lock filter (`LockCache::may_hold`,
    /// 512 bits): word and mask. A multiplicative hash's top nine bits, so
    /// a few instructions; row keys that are addresses or sequence numbers
    /// spread over them.
    #[inline]
    pub(crate) const fn filter_bit(&self) -> (usize, u64) {
        let h = (self.key ^ self.hi.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let b = h >> 55;
        ((b >> 6) as usize, 1 << (b & 63))
    }

    /// The slot of this id's parent among an agent's parent hints
    /// (`LockCache::hint`, eight of them): its table number's low
    /// three bits (a row and its page share their table's slot), so the
    /// tables of a schema numbered in order have slots of their own.
    #[inline]
    pub(crate) const fn hint_slot(&self) -> usize {
        (self.table_no() & 7) as usize
    }

    /// The inverse of [`LockId::words`].
    #[inline]
    pub(crate) const fn from_words(key: u64, hi: u64) -> Self {
        LockId { key, hi }
    }

    /// A well-mixed 64-bit hash (murmur3's fmix64 over the packed fields).
    #[inline]
    pub const fn hash64(&self) -> u64 {
        let (key, hi) = self.words();
        let mut h = key ^ hi.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        h
    }
}

impl PartialEq for LockId {
    /// Two word compares (hot in the lock cache and the table).
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.words() == other.words()
    }
}

impl Eq for LockId {}

impl PartialOrd for LockId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LockId {
    /// Database, table, level, key: the order a listing wants.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let k = |x: &LockId| (x.db_no(), x.table_no(), x.level(), x.key, x.flags());
        k(self).cmp(&k(other))
    }
}

impl Hash for LockId {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash64());
    }
}

impl fmt::Debug for LockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for LockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(t) = self.transaction_of() {
            return write!(f, "txn:{t}");
        }
        match self.level() {
            Level::Database => write!(f, "db{}", self.db_no()),
            Level::Table => write!(f, "db{}.t{}", self.db_no(), self.table_no()),
            Level::Page => write!(f, "db{}.t{}.p{}", self.db_no(), self.table_no(), self.key),
            Level::Row if self.flags() & PAGED != 0 => write!(
                f,
                "db{}.t{}.p{}.s{}",
                self.db_no(),
                self.table_no(),
                self.key >> 32,
                self.key as u32
            ),
            Level::Row => write!(f, "db{}.t{}.r{}", self.db_no(), self.table_no(), self.key),
        }
    }
}

/// A transaction's id: the agent that ran it and that agent's sequence number.
/// Unique for the life of a lock manager; no shared counter is touched to
/// make one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnId(pub(crate) u64);

const SEQ_BITS: u32 = 40;

impl TxnId {
    pub(crate) fn new(agent: u32, seq: u64) -> Self {
        TxnId(((agent as u64 + 1) << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1)))
    }

    /// The index of the agent that runs this transaction.
    pub fn agent(&self) -> u32 {
        ((self.0 >> SEQ_BITS).wrapping_sub(1)) as u32
    }

    /// The transaction's sequence number on its agent.
    pub fn seq(&self) -> u64 {
        self.0 & ((1 << SEQ_BITS) - 1)
    }

    /// The raw value (for maps and output).
    pub fn as_u64(&self) -> u64 {
        self.0
    }

    /// The id whose raw value is `v` (what [`as_u64`](Self::as_u64) gave;
    /// for engines and interfaces that carry ids as integers). A value no
    /// transaction had names a transaction that is not running.
    pub const fn from_u64(v: u64) -> TxnId {
        TxnId(v)
    }
}

impl fmt::Debug for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >> SEQ_BITS == 0 {
            return f.write_str("T-"); // no transaction
        }
        write!(f, "T{}.{}", self.agent(), self.seq())
    }
}

impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A root-to-leaf path of at most [`MAX_DEPTH`] ids, without allocation.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    ids: [LockId; MAX_DEPTH],
    len: u8,
}

impl Path {
    /// The ids, root first.
    #[inline]
    pub fn as_slice(&self) -> &[LockId] {
        &self.ids[..self.len as usize]
    }
}

/// A `Hasher` for maps keyed by [`LockId`]: it keeps the id's own
/// [`LockId::hash64`]. Only meant for `LockId` keys (it folds other input
/// with FNV-1a so it stays correct, if slower, for anything else).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 ^= v;
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }
}

/// `BuildHasher` for [`IdHasher`].
pub(crate) type IdBuildHasher = BuildHasherDefault<IdHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    const T: TableId = TableId::new(3, 7);

    #[test]
    fn parents_follow_the_hierarchy() {
        let r = LockId::row(T, 42);
        assert_eq!(r.parent(), Some(LockId::table(T)));
        assert_eq!(LockId::table(T).parent(), Some(LockId::database(3)));
        assert_eq!(LockId::database(3).parent(), None);
        let pr = LockId::paged_row(T, 9, 5);
        assert_eq!(pr.parent(), Some(LockId::page(T, 9)));
        assert_eq!(LockId::page(T, 9).parent(), Some(LockId::table(T)));
        assert_eq!(
            pr.path().as_slice(),
            &[LockId::database(3), LockId::table(T), LockId::page(T, 9), pr]
        );
        assert_eq!(r.path().as_slice().len(), 3);
        assert_eq!(LockId::database(1).path().as_slice(), &[LockId::database(1)]);
    }

    #[test]
    fn every_path_is_the_parent_chain_reversed() {
        let ids = [
            LockId::database(7),
            LockId::transaction(TxnId(99)),
            LockId::table(T),
            LockId::page(T, 9),
            LockId::row(T, u64::MAX),
            LockId::paged_row(T, u32::MAX, 5),
        ];
        for id in ids {
            let mut chain = vec![id];
            while let Some(p) = chain.last().unwrap().parent() {
                chain.push(p);
            }
            chain.reverse();
            assert_eq!(id.path().as_slice(), &chain[..], "{id:?}");
            // The lock path's walk without a `Path`.
            assert_eq!(id.depth(), chain.len(), "{id:?}");
            let walked: Vec<LockId> = (0..id.depth()).map(|i| id.ancestor(i)).collect();
            assert_eq!(walked, chain, "{id:?}");
        }
    }

    #[test]
    fn ids_are_distinct_and_small() {
        assert_eq!(std::mem::size_of::<LockId>(), 16);
        assert_ne!(LockId::row(T, 1), LockId::page(T, 1));
        assert_ne!(LockId::row(T, 9 << 32 | 5), LockId::paged_row(T, 9, 5));
        assert_ne!(LockId::row(T, 1).hash64(), LockId::row(T, 2).hash64());
        assert_eq!(LockId::paged_row(T, 9, 5).to_string(), "db3.t7.p9.s5");
    }

    #[test]
    fn transaction_locks_stand_outside_the_hierarchy() {
        let t = TxnId::new(3, 9);
        let l = LockId::transaction(t);
        assert_eq!(l.parent(), None);
        assert_eq!(l.path().as_slice(), &[l]);
        assert_eq!(l.transaction_of(), Some(t));
        assert_eq!(LockId::database(u16::MAX).transaction_of(), None);
        assert_ne!(l, LockId::database(u16::MAX));
        assert_ne!(l, LockId::transaction(TxnId::new(3, 10)));
        assert_eq!(l.table_id(), None);
        assert_eq!(l.to_string(), "txn:T3.9");
        let row = LockId::row(T, 1);
        assert!(!l.is_ancestor_of(&row) && !LockId::database(u16::MAX).is_ancestor_of(&l));
        assert!(LockId::database(3).is_ancestor_of(&row) && LockId::table(T).is_ancestor_of(&row));
        assert!(!row.is_ancestor_of(&row) && !LockId::database(4).is_ancestor_of(&row));
    }

    #[test]
    fn hash_spreads_consecutive_rows() {
        // Consecutive keys must not pile into few buckets of a 1024-way table.
        let mut buckets = vec![0u32; 1024];
        for k in 0..100_000u64 {
            buckets[(LockId::row(T, k).hash64() & 1023) as usize] += 1;
        }
        let max = *buckets.iter().max().unwrap();
        assert!(max < 160, "worst bucket holds {max} of ~98");
    }

    /// Keys that differ only above a power of two (fields packed into a
    /// key: a warehouse in the high bits, a page above a slot) spread as
    /// consecutive ones do, over a table's low bits (its buckets) and over
    /// the top sixteen (the latched table's tags).
    #[test]
    fn hash_spreads_keys_strided_by_powers_of_two() {
        for shift in [0, 8, 16, 24, 32, 40] {
            let (mut low, mut top) = (vec![0u32; 1024], vec![0u32; 1024]);
            for k in 0..100_000u64 {
                let h = LockId::row(T, k << shift).hash64();
                low[(h & 1023) as usize] += 1;
                top[(h >> 54) as usize] += 1;
            }
            for (bits, b) in [("low", &low), ("top", &top)] {
                let max = *b.iter().max().unwrap();
                assert!(
                    max < 160,
                    "keys << {shift}: the worst of the {bits} bits' buckets holds {max} of ~98"
                );
            }
        }
        // Tables of one database, and rows of many tables, too.
        let mut buckets = vec![0u32; 1024];
        for t in 0..100_000u32 {
            buckets[(LockId::table(TableId::new(0, t)).hash64() & 1023) as usize] += 1;
        }
        assert!(*buckets.iter().max().unwrap() < 160);
    }
}
