//! The server lock table's own promises (every shared test runs on it too,
//! through `TableKind::ALL`): batched requests on every table kind, one
//! message per partition, a client thread that dies mid-transaction, many
//! more clients than cores, and the names it goes by.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::Duration;

use heirloom::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);
const U: TableId = TableId::new(0, 2);
const LIMIT: Duration = Duration::from_secs(30);

fn server(partitions: u16, policy: ConflictPolicy) -> LockManager {
    LockManager::builder()
        .table(TableKind::Server { partitions })
        .conflicts(policy)
        .build()
}

/// Runs `f` on a new thread and waits for it at most [`LIMIT`].
fn bounded<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{what}: no progress within {LIMIT:?}"))
}

#[test]
fn lock_all_holds_what_lock_would_on_every_table() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        let mut reqs: Vec<(LockId, Mode)> = (0..40).map(|k| (LockId::row(T, k), Mode::S)).collect();
        reqs.push((LockId::row(U, 1), Mode::X));
        // The same lock twice: one request in the join of the modes.
        reqs.push((LockId::row(T, 3), Mode::X));
        t.lock_all(&reqs).unwrap();
        assert_eq!(t.held_mode(LockId::database(0)), Some(Mode::IX), "{kind}");
        assert_eq!(t.held_mode(LockId::table(T)), Some(Mode::IX), "{kind}");
        assert_eq!(t.held_mode(LockId::table(U)), Some(Mode::IX), "{kind}");
        assert_eq!(t.held_mode(LockId::row(T, 3)), Some(Mode::X), "{kind}");
        assert_eq!(t.held_mode(LockId::row(T, 39)), Some(Mode::S), "{kind}");
        assert_eq!(t.held_mode(LockId::row(U, 1)), Some(Mode::X), "{kind}");
        // db, two tables, 41 rows.
        assert_eq!(t.lock_count(), 44, "{kind}");
        assert_eq!(lm.snapshot().locks.len(), 44, "{kind}");
        // A covering ancestor ends a request, as in `lock`.
        t.lock_all(&[(LockId::table(U), Mode::X), (LockId::row(U, 2), Mode::X)])
            .unwrap();
        assert_eq!(t.held_mode(LockId::row(U, 2)), None, "{kind}");
        t.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
        let mut t = a.begin();
        assert!(
            matches!(
                t.lock_all(&[(LockId::row(T, 1), Mode::NL)]),
                Err(LockError::InvalidRequest { .. })
            ),
            "{kind}"
        );
    }
}

#[test]
fn a_batch_is_one_message_per_partition_and_commit_releases_in_one_per_partition() {
    for partitions in [1u16, 2, 4] {
        let lm = server(partitions, ConflictPolicy::Detect);
        let mut a = lm.agent();
        // Warm the upper levels so that the batch below is rows only.
        let mut t = a.begin();
        t.lock(LockId::row(T, 1_000), Mode::X).unwrap();
        let before = a_stats(&t);
        let rows: Vec<(LockId, Mode)> = (0..100).map(|k| (LockId::row(T, k), Mode::X)).collect();
        t.lock_all(&rows).unwrap();
        let sent = a_stats(&t) - before;
        assert_eq!(sent, partitions as u64, "100 rows over {partitions} partitions");
        t.commit().unwrap();
        let s = lm.stats();
        // 3 single acquisitions, the batch, and one release message per
        // partition (the 104 locks are spread over all of them).
        assert_eq!(s.messages, 3 + 2 * partitions as u64, "{partitions} partitions");
        assert!(lm.snapshot().is_empty());
    }
}

fn a_stats(t: &heirloom::Transaction<'_>) -> u64 {
    t.agent_stats().messages
}

#[test]
fn lock_all_waits_for_a_conflicting_holder_and_then_gets_everything() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).build();
        let mut holder = lm.agent();
        let mut h = holder.begin();
        h.lock(LockId::row(T, 5), Mode::X).unwrap();
        let lm2 = lm.clone();
        let (tx, rx) = mpsc::channel();
        let waiter = thread::spawn(move || {
            let mut a = lm2.agent();
            let mut t = a.begin();
            let rows: Vec<(LockId, Mode)> = (0..10).map(|k| (LockId::row(T, k), Mode::S)).collect();
            t.lock_all(&rows).unwrap();
            tx.send(t.lock_count()).unwrap();
            t.commit().unwrap();
        });
        common::until_waiting(&lm, LockId::row(T, 5), &format!("{kind}: lock_all never waited"));
        assert!(rx.try_recv().is_err(), "{kind}: granted past an X holder");
        h.commit().unwrap();
        assert_eq!(rx.recv_timeout(LIMIT).unwrap(), 12, "{kind}");
        waiter.join().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

#[test]
fn lock_all_under_no_wait_fails_on_a_conflict_and_keeps_what_it_got() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::NoWait)
            .build();
        let mut holder = lm.agent();
        let mut h = holder.begin();
        h.lock(LockId::row(T, 5), Mode::X).unwrap();
        let mut a = lm.agent();
        let mut t = a.begin();
        let rows: Vec<(LockId, Mode)> = (0..10).map(|k| (LockId::row(T, k), Mode::S)).collect();
        match t.lock_all(&rows) {
            Err(LockError::WouldBlock { lock, holder, .. }) => {
                assert_eq!(lock, LockId::row(T, 5), "{kind}");
                assert_eq!(holder, h.id(), "{kind}");
            }
            other => panic!("{kind}: {other:?}"),
        }
        assert_eq!(t.held_mode(LockId::row(T, 4)), Some(Mode::S), "{kind}");
        assert!(t.commit().is_err(), "{kind}: doomed");
        h.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

/// Section 6 of the 1995 paper: the locks of a failed participant are
/// released and the others go on. A client thread panics while it holds
/// X locks on two partitions (and while another client waits for one);
/// the waiter is granted, the servers keep serving, nothing is left.
#[test]
fn a_client_that_dies_loses_its_locks_and_harms_nobody() {
    let lm = server(2, ConflictPolicy::Detect);
    let rows: Vec<LockId> = (0..8).map(|k| LockId::row(T, k)).collect();
    let held = Arc::new(Barrier::new(2));
    let victim = {
        let (lm, rows, held) = (lm.clone(), rows.clone(), held.clone());
        thread::spawn(move || {
            let mut a = lm.agent();
            let mut t = a.begin();
            for &r in &rows {
                t.lock(r, Mode::X).unwrap();
            }
            held.wait();
            // Fail once the other client waits for our rows.
            common::until_waiting(&lm, rows[0], "the other client never waited");
            panic!("client failure (on purpose)");
        })
    };
    held.wait();
    let waiter = {
        let (lm, rows) = (lm.clone(), rows.clone());
        thread::spawn(move || {
            let mut a = lm.agent();
            let mut t = a.begin();
            for &r in &rows {
                t.lock(r, Mode::X).unwrap();
            }
            t.commit().unwrap();
        })
    };
    assert!(victim.join().is_err(), "the victim panicked");
    bounded("waiter after the failure", move || waiter.join().unwrap());
    // The servers still serve everybody.
    let lm2 = lm.clone();
    bounded("a new client", move || {
        let mut a = lm2.agent();
        let mut t = a.begin();
        t.lock_all(&(0..8).map(|k| (LockId::row(T, k), Mode::X)).collect::<Vec<_>>())
            .unwrap();
        t.commit().unwrap();
    });
    assert!(lm.snapshot().is_empty(), "{}", lm.snapshot());
    let s = lm.stats();
    assert_eq!(s.aborted, 1, "the victim's transaction was aborted");
    assert_eq!(s.committed, 2);
}

/// A panic inside `Agent::run`'s closure, with locks held, on the server:
/// the panic goes through, the locks do not stay.
#[test]
fn a_panic_inside_run_releases_the_locks() {
    let lm = server(2, ConflictPolicy::Detect);
    let mut a = lm.agent();
    let r = catch_unwind(AssertUnwindSafe(|| {
        a.run(|t| {
            t.lock(LockId::row(T, 1), Mode::X)?;
            t.lock(LockId::row(U, 1), Mode::S)?;
            if t.lock_count() > 0 {
                panic!("inside run (on purpose)");
            }
            Ok::<_, LockError>(())
        })
    }));
    assert!(r.is_err());
    assert!(lm.snapshot().is_empty(), "{}", lm.snapshot());
    let mut b = lm.agent();
    let mut t = b.begin();
    t.lock(LockId::row(T, 1), Mode::X).unwrap();
    t.commit().unwrap();
}

/// 64 clients on a machine with few cores: every client waits for
/// replies parked, not spinning, so the servers and the holders of
/// contended locks get the CPU and every transaction ends.
#[test]
fn sixty_four_clients_make_progress() {
    let lm = server(2, ConflictPolicy::Detect);
    let done = Arc::new(AtomicU64::new(0));
    let lm2 = lm.clone();
    let done2 = done.clone();
    bounded("64 clients", move || {
        let threads: Vec<_> = (0..64u64)
            .map(|i| {
                let (lm, done) = (lm2.clone(), done2.clone());
                thread::spawn(move || {
                    let mut a = lm.agent();
                    for k in 0..200u64 {
                        a.run(|t| {
                            t.lock(LockId::row(T, 0), Mode::S)?; // a hot lock
                            t.lock(LockId::row(U, (i * 7 + k) % 16), Mode::X)?; // real conflicts
                            Ok::<_, LockError>(())
                        })
                        .unwrap();
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    });
    assert_eq!(done.load(Ordering::Relaxed), 64 * 200);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn the_server_goes_by_its_names() {
    assert_eq!("server".parse::<TableKind>(), Ok(TableKind::Server { partitions: 1 }));
    assert_eq!("server:4".parse::<TableKind>(), Ok(TableKind::Server { partitions: 4 }));
    for bad in ["server:0", "server:65", "server:x", "server:", "servers"] {
        assert!(bad.parse::<TableKind>().is_err(), "{bad}");
    }
    assert_eq!(TableKind::Server { partitions: 1 }.to_string(), "server");
    assert_eq!(TableKind::Server { partitions: 4 }.to_string(), "server:4");
    assert_eq!(TableKind::Server { partitions: 4 }.name(), "server");
    for k in TableKind::ALL {
        assert_eq!(k.to_string().parse::<TableKind>(), Ok(k));
    }
}

#[test]
fn null_sections_touch_no_lock_on_any_table() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).build();
        let mut a = lm.agent();
        let mut t = a.begin();
        t.lock(LockId::row(T, 1), Mode::X).unwrap();
        t.commit().unwrap();
        let before = a.stats();
        for k in 0..100 {
            heirloom::probe::NullSection::null_section(&mut a, LockId::row(T, k % 3));
        }
        let s = a.stats().since(&before);
        assert_eq!(s.table_ops, 0, "{kind}");
        let expected = if matches!(kind, TableKind::Server { .. }) {
            100
        } else {
            0
        };
        assert_eq!(s.messages, expected, "{kind}");
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}
