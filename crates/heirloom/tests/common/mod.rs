//! Test support: an independent checker of the lock manager's promises.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use heirloom::{LockId, Mode, TxnId};

/// A tiny deterministic generator (xorshift64*), enough for test workloads.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The checker's own record of who holds what. A transaction registers a
/// lock after `lock()` returned and unregisters everything before it
/// commits or aborts, so its ghost interval lies inside the real one: two
/// incompatible ghost entries on one lock prove two incompatible grants.
/// Registration also records the intention modes on every ancestor, so
/// locks implied by a coarser S/X are checked at the level that implies them.
#[derive(Default)]
pub struct Ghost {
    locks: Mutex<HashMap<LockId, Vec<(TxnId, Mode)>>>,
    pub violations: Mutex<Vec<String>>,
}

impl Ghost {
    pub fn register(&self, txn: TxnId, id: LockId, mode: Mode) {
        let path = id.path();
        let ids = path.as_slice();
        let mut map = self.locks.lock().unwrap();
        for (i, &lid) in ids.iter().enumerate() {
            let want = if i == ids.len() - 1 { mode } else { mode.intention() };
            let entries = map.entry(lid).or_default();
            for &(other, m) in entries.iter() {
                if other != txn && !m.compatible(want) {
                    self.violations
                        .lock()
                        .unwrap()
                        .push(format!("{lid}: {txn} got {want} while {other} holds {m}"));
                }
            }
            match entries.iter_mut().find(|(t, _)| *t == txn) {
                Some(e) => e.1 = e.1.join(want),
                None => entries.push((txn, want)),
            }
        }
    }

    pub fn unregister_all(&self, txn: TxnId) {
        let mut map = self.locks.lock().unwrap();
        map.retain(|_, v| {
            v.retain(|(t, _)| *t != txn);
            !v.is_empty()
        });
    }

    pub fn assert_clean(&self) {
        let v = self.violations.lock().unwrap();
        assert!(v.is_empty(), "{} incompatible grants, first: {}", v.len(), v[0]);
        assert!(self.locks.lock().unwrap().is_empty());
    }
}
