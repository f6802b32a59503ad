//! An X request on a table is granted while many threads keep taking IS and
//! IX on it: once X waits, later IS/IX requests queue behind it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use heirloom::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

#[test]
fn x_is_not_starved_by_intention_locks() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .build();
        let stop = Arc::new(AtomicBool::new(false));
        let hammered = Arc::new(AtomicU64::new(0));
        let hammers: Vec<_> = (0..8)
            .map(|i| {
                let (lm, stop, hammered) = (lm.clone(), stop.clone(), hammered.clone());
                thread::spawn(move || {
                    let mut a = lm.agent();
                    let mut k = i as u64;
                    while !stop.load(Ordering::Relaxed) {
                        k += 8;
                        let m = if k.is_multiple_of(3) { Mode::X } else { Mode::S };
                        a.run(|t| {
                            t.lock(LockId::row(T, k % 64), m)?;
                            // Hold the intention lock for a while: with eight
                            // overlapping holders the IS/IX group is never
                            // empty, so only the queue rule lets X in.
                            thread::sleep(Duration::from_micros(500));
                            Ok::<_, LockError>(())
                        })
                        .unwrap();
                        hammered.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // Let the stream start.
        while hammered.load(Ordering::Relaxed) < 100 {
            thread::yield_now();
        }
        let (tx, rx) = mpsc::channel();
        let lm2 = lm.clone();
        let x = thread::spawn(move || {
            let mut a = lm2.agent();
            let mut t = a.begin();
            t.lock(LockId::table(T), Mode::X).unwrap();
            tx.send(()).unwrap();
            thread::sleep(Duration::from_millis(5));
            t.commit().unwrap();
        });
        let granted = rx.recv_timeout(Duration::from_secs(10));
        stop.store(true, Ordering::Relaxed);
        for h in hammers {
            h.join().unwrap();
        }
        x.join().unwrap();
        granted.expect("X on the table starved behind IS/IX");
        assert!(lm.snapshot().is_empty());
    }
}
