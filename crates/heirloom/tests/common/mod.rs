//! Test support: an independent checker of the lock manager's promises.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use heirloom::{Builder, ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind, TxnId};

mod poll;
#[allow(unused_imports)]
pub use poll::{LIMIT, until};

/// Waits until somebody waits for `lock` (the snapshot shows a waiter);
/// fails with `what` after [`LIMIT`].
pub fn until_waiting(lm: &LockManager, lock: LockId, what: &str) {
    until(what, || {
        lm.snapshot()
            .locks
            .iter()
            .any(|l| l.lock == lock && !l.waiters.is_empty())
    });
}

/// Every conflict policy, `Timeout` with `timeout`.
pub fn policies(timeout: Duration) -> Vec<ConflictPolicy> {
    vec![
        ConflictPolicy::Detect,
        ConflictPolicy::Timeout(timeout),
        ConflictPolicy::NoWait,
        ConflictPolicy::WaitDie,
        ConflictPolicy::WoundWait,
    ]
}

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

    /// Forgets `txn`'s entry on `id` alone (before it unlocks `id`; its
    /// intention entries on the ancestors stay, as its locks there do).
    pub fn unregister(&self, txn: TxnId, id: LockId) {
        let mut map = self.locks.lock().unwrap();
        if let Some(v) = map.get_mut(&id) {
            v.retain(|(t, _)| *t != txn);
            if v.is_empty() {
                map.remove(&id);
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

/// Eight threads keep taking row locks of `table` (so IS/IX on it, each held
/// about `hold` with overlapping holders, so the table's group is never
/// empty); then one more thread asks for X on the table. Returns whether X
/// was granted within ten seconds (then everything is stopped and joined).
pub fn x_granted_under_intention_stream(lm: &LockManager, table: TableId, hold: Duration) -> bool {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let hammers: Vec<_> = (0..8u64)
        .map(|i| {
            let (lm, stop, done) = (lm.clone(), stop.clone(), done.clone());
            thread::spawn(move || {
                let mut a = lm.agent();
                let mut k = i;
                while !stop.load(Ordering::Relaxed) {
                    k += 8;
                    let m = if k.is_multiple_of(3) { Mode::X } else { Mode::S };
                    a.run(|t| {
                        t.lock(LockId::row(table, k % 64), m)?;
                        thread::sleep(hold);
                        Ok::<_, LockError>(())
                    })
                    .unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while done.load(Ordering::Relaxed) < 100 {
        thread::yield_now();
    }
    let (tx, rx) = mpsc::channel();
    let lm2 = lm.clone();
    let x = thread::spawn(move || {
        let mut a = lm2.agent();
        let mut t = a.begin();
        t.lock(LockId::table(table), Mode::X).unwrap();
        tx.send(()).unwrap();
        thread::sleep(Duration::from_millis(5));
        t.commit().unwrap();
    });
    let granted = rx.recv_timeout(Duration::from_secs(10)).is_ok();
    stop.store(true, Ordering::Relaxed);
    for h in hammers {
        h.join().unwrap();
    }
    x.join().unwrap();
    granted
}

/// A manager of every table kind, inheritance off, configured by `f`.
pub fn managers(f: impl Fn(Builder) -> Builder) -> Vec<LockManager> {
    TableKind::ALL
        .into_iter()
        .map(|k| f(LockManager::builder().table(k).inheritance(Inheritance::Off)).build())
        .collect()
}

/// Runs `f` on a thread and fails the test if it does not end within a
/// minute (a lost wake-up or an undetected deadlock would hang).
pub fn within_a_minute<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(r) => r,
        Err(_) => panic!("{what}: still running after a minute"),
    }
}
