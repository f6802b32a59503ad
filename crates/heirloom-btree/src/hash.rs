//! A fixed-capacity hash index for point lookups: open addressing with
//! linear probing, one compare-and-swap to claim a slot, no latch at all.
//!
//! The benchmark tables that are only ever read by key (YCSB's table, TPC-C's
//! WAREHOUSE, DISTRICT, CUSTOMER, ITEM and STOCK, TM1's SUBSCRIBER...) need
//! neither order nor range scans; a lookup here is one hash, usually one
//! cache line, and writes no shared memory. DBx1000 indexes these tables
//! with a hash index too, so the two compare lock managers, not indexes.
//!
//! Why our own and not a crate: a lookup must not write shared memory
//! (dashmap takes a shard's reader-writer lock per lookup, an atomic write
//! to a shared line on every read, the very contention this project
//! measures), and must not pin an epoch or allocate (papaya, flurry). The
//! keys are `u64`, the capacity is known when the table is created, and
//! the lock manager already orders every access to one key, which is what
//! lets the protocol be this small:
//!
//! - a slot is (key, value), two atomics; key [`EMPTY`] marks a free slot,
//!   value [`ABSENT`] a key without a value (claimed, or removed);
//! - insert claims the first free slot of the key's probe sequence with a
//!   CAS on the key (Release publishes nothing yet), then sets the value
//!   with a CAS from `ABSENT` (Release): a reader that sees the value sees
//!   a claimed key;
//! - a claimed slot keeps its key forever; remove swaps the value back to
//!   `ABSENT` and a later insert of the same key reuses the slot, so probe
//!   sequences never break and a lookup stops at the first free slot;
//! - a lookup loads keys (Acquire) along the probe sequence and the value
//!   of the matching slot (Acquire).
//!
//! Callers must not insert one key from two threads at once (two claims of
//! one key in different slots); the benchmark's row locks guarantee it (an
//! insert holds the row's X lock), and the key's CAS makes it safe for
//! distinct keys racing for one slot. Removed keys keep their slots, so a
//! table that deletes many distinct keys fills up: use the B+tree there.
//! The key `u64::MAX` lives in a slot of its own.

use crate::sync::{AtomicU64, Ordering};

/// Key of a free slot.
pub const EMPTY: u64 = u64::MAX;
/// Value of a key that has none (being inserted, or removed).
pub const ABSENT: u64 = u64::MAX;

/// The index has no free slot left for a new key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("hash index full ({slots} slots)")]
pub struct Full {
    /// Its slots.
    pub slots: usize,
}

struct Slot {
    key: AtomicU64,
    value: AtomicU64,
}

/// A fixed-capacity concurrent hash index from `u64` keys to `u64` values
/// below `u64::MAX` (see the module documentation for the protocol).
pub struct HashIndex {
    slots: Box<[Slot]>,
    shift: u32,
    /// The value of key `u64::MAX` (which cannot be stored as a slot key).
    max_key: AtomicU64,
}

impl std::fmt::Debug for HashIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashIndex")
            .field("slots", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl HashIndex {
    /// An index for up to `keys` keys: twice as many slots, rounded up to a
    /// power of two (a probe sequence stays short at half load).
    pub fn with_capacity(keys: usize) -> Self {
        let n = keys.saturating_mul(2).max(8).next_power_of_two();
        HashIndex {
            slots: (0..n)
                .map(|_| Slot {
                    key: AtomicU64::new(EMPTY),
                    value: AtomicU64::new(ABSENT),
                })
                .collect(),
            shift: 64 - n.trailing_zeros(),
            max_key: AtomicU64::new(ABSENT),
        }
    }

    /// Its number of slots.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Fibonacci hashing: the top bits of key * 2^64/phi (composite keys
    /// with their variety in the low bits spread over the whole table).
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot holding `key`, if it was ever claimed.
    #[inline]
    fn find(&self, key: u64) -> Option<&Slot> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        for _ in 0..self.slots.len() {
            let s = &self.slots[i];
            match s.key.load(Ordering::Acquire) {
                k if k == key => return Some(s),
                EMPTY => return None,
                _ => i = (i + 1) & mask,
            }
        }
        None
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        let v = if key == EMPTY {
            self.max_key.load(Ordering::Acquire)
        } else {
            self.find(key)?.value.load(Ordering::Acquire)
        };
        (v != ABSENT).then_some(v)
    }

    /// Sets `key` to `value` if it has none: `Ok(true)`; `Ok(false)` if it
    /// has one (unchanged); `Err` if the key is new and no slot is free.
    /// `value` must be below `u64::MAX`.
    pub fn insert(&self, key: u64, value: u64) -> Result<bool, Full> {
        debug_assert_ne!(value, ABSENT, "u64::MAX is not a value");
        let cell = if key == EMPTY {
            &self.max_key
        } else {
            &self.claim(key)?.value
        };
        Ok(cell
            .compare_exchange(ABSENT, value, Ordering::Release, Ordering::Relaxed)
            .is_ok())
    }

    /// The slot of `key`, claiming a free one if it has none.
    fn claim(&self, key: u64) -> Result<&Slot, Full> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        for _ in 0..self.slots.len() {
            let s = &self.slots[i];
            let mut k = s.key.load(Ordering::Acquire);
            if k == EMPTY {
                match s.key.compare_exchange(EMPTY, key, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return Ok(s),
                    // Another key took it first: look at what it holds now.
                    Err(now) => k = now,
                }
            }
            if k == key {
                return Ok(s);
            }
            i = (i + 1) & mask;
        }
        Err(Full {
            slots: self.slots.len(),
        })
    }

    /// Removes `key`'s value and returns it.
    pub fn remove(&self, key: u64) -> Option<u64> {
        let cell = if key == EMPTY {
            &self.max_key
        } else {
            &self.find(key)?.value
        };
        let v = cell.swap(ABSENT, Ordering::AcqRel);
        (v != ABSENT).then_some(v)
    }

    /// Every (key, value), in key order (a full pass and a sort: for
    /// checks on a quiescent table, not for transactions).
    pub fn entries(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .slots
            .iter()
            .filter_map(|s| {
                let k = s.key.load(Ordering::Acquire);
                let v = s.value.load(Ordering::Acquire);
                (k != EMPTY && v != ABSENT).then_some((k, v))
            })
            .collect();
        if let Some(v_max) = self.get(EMPTY) {
            v.push((EMPTY, v_max));
        }
        v.sort_unstable();
        v
    }
}

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove_and_reinsert() {
        let h = HashIndex::with_capacity(100);
        assert_eq!(h.slots(), 256);
        for k in 0..100u64 {
            assert_eq!(h.insert(k * 7919, k), Ok(true));
        }
        assert_eq!(h.insert(7919, 5), Ok(false), "a key with a value keeps it");
        assert_eq!(h.get(7919), Some(1));
        assert_eq!(h.get(3), None);
        assert_eq!(h.remove(7919), Some(1));
        assert_eq!(h.get(7919), None);
        assert_eq!(h.remove(7919), None);
        assert_eq!(h.insert(7919, 9), Ok(true), "a removed key can come back");
        assert_eq!(h.get(7919), Some(9));
        assert_eq!(h.insert(u64::MAX, 4), Ok(true));
        assert_eq!(h.get(u64::MAX), Some(4));
        let e = h.entries();
        assert_eq!(e.len(), 101);
        assert!(e.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(e.last(), Some(&(u64::MAX, 4)));
    }

    #[test]
    fn a_full_index_says_so() {
        let h = HashIndex::with_capacity(4);
        let n = h.slots() as u64;
        for k in 0..n {
            assert_eq!(h.insert(k, k), Ok(true));
        }
        assert_eq!(h.insert(n, 0), Err(Full { slots: n as usize }));
        // Known keys still work; lookups of unknown keys end.
        assert_eq!(h.get(n - 1), Some(n - 1));
        assert_eq!(h.get(n + 5), None);
        assert_eq!(h.remove(0), Some(0));
        assert_eq!(h.insert(0, 1), Ok(true));
    }

    #[test]
    fn threads_inserting_distinct_keys_lose_none() {
        let h = HashIndex::with_capacity(40_000);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let h = &h;
                s.spawn(move || {
                    for k in 0..10_000u64 {
                        let key = k * 4 + t;
                        assert_eq!(h.insert(key, key + 1), Ok(true));
                        assert_eq!(h.get(key), Some(key + 1));
                    }
                });
            }
        });
        assert_eq!(h.entries().len(), 40_000);
        assert!((0..40_000u64).all(|k| h.get(k) == Some(k + 1)));
    }
}

#[cfg(all(test, heirloom_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two threads insert different keys that hash to one home slot (a
    /// four-slot index, keys chosen with the same home): both end up
    /// findable with their values, whichever wins the slot.
    #[test]
    fn loom_racing_claims_keep_both_keys() {
        loom::model(|| {
            let h = Arc::new(HashIndex::with_capacity(2));
            let home = h.home(1);
            let other = (2..1000u64).find(|&k| h.home(k) == home).expect("a colliding key");
            let h2 = h.clone();
            let t = loom::thread::spawn(move || h2.insert(other, 20).unwrap());
            assert!(h.insert(1, 10).unwrap());
            assert!(t.join().unwrap());
            assert_eq!(h.get(1), Some(10));
            assert_eq!(h.get(other), Some(20));
        });
    }

    /// A reader looking a key up while it is inserted sees nothing or the
    /// whole value, never a claimed key with a stale value.
    #[test]
    fn loom_reader_sees_absent_or_the_value() {
        loom::model(|| {
            let h = Arc::new(HashIndex::with_capacity(2));
            let h2 = h.clone();
            let t = loom::thread::spawn(move || h2.get(7));
            assert!(h.insert(7, 70).unwrap());
            let seen = t.join().unwrap();
            assert!(seen.is_none() || seen == Some(70), "{seen:?}");
            assert_eq!(h.remove(7), Some(70));
            assert_eq!(h.get(7), None);
        });
    }
}
