//! A lock-server thread that panics: the request it was serving and every
//! client waiting in its queues fail with `LockError::ServerFailed` (not
//! restartable) instead of waiting for ever, later requests for its locks
//! fail the same way, releases of its locks succeed, and the other
//! partition serves as before.

use std::sync::mpsc;
use std::thread;

use super::common::{LIMIT, until_waiting};
use crate::table::Table;
use crate::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind};

#[test]
fn a_failed_server_fails_its_requests_and_its_waiters_and_no_other() {
    for policy in [ConflictPolicy::Detect, ConflictPolicy::WoundWait] {
        let lm = LockManager::builder()
            .table(TableKind::Server { partitions: 2 })
            .conflicts(policy)
            .max_restarts(0)
            .build();
        let Table::Server(server) = &lm.inner.table else {
            unreachable!("a server table")
        };
        // The database lock's partition stays healthy (every transaction
        // takes it); a table there, a row there and a row in the other.
        let good = server.part_of(LockId::database(0));
        let t = (0..)
            .map(|i| TableId::new(0, i))
            .find(|&t| server.part_of(LockId::table(t)) == good)
            .unwrap();
        let row_in = |part: usize| {
            (0..)
                .map(|k| LockId::row(t, k))
                .find(|&r| server.part_of(r) == part)
                .unwrap()
        };
        let (bad, good_row, bad_row) = (1 - good, row_in(good), row_in(1 - good));

        let mut holder_agent = lm.agent();
        let mut holder = holder_agent.begin();
        holder.lock(bad_row, Mode::X).unwrap();
        holder.lock(good_row, Mode::S).unwrap();

        let (done, result) = mpsc::channel();
        let lm_w = lm.clone();
        thread::spawn(move || {
            let mut a = lm_w.agent();
            let mut w = a.begin();
            let r = w.lock(bad_row, Mode::X);
            w.abort();
            done.send(r).unwrap();
        });
        until_waiting(&lm, bad_row, &format!("{policy:?}: the waiter never waited"));
        assert!(lm.failed_partitions().is_empty());

        server.fail(bad);

        let waited = result
            .recv_timeout(LIMIT)
            .unwrap_or_else(|_| panic!("{policy:?}: a waiter of the failed server waits for ever"));
        match &waited {
            Err(e @ LockError::ServerFailed { lock, partition, .. }) => {
                assert_eq!((*lock, *partition), (bad_row, bad), "{policy:?}");
                assert!(!e.is_restartable(), "{policy:?}: a retry cannot get past it");
            }
            other => panic!("{policy:?}: the waiter got {other:?}"),
        }
        assert_eq!(lm.failed_partitions(), vec![bad], "{policy:?}");
        // The holder's locks there are released as far as it is concerned.
        holder.commit().unwrap();

        let mut a = lm.agent();
        let mut t2 = a.begin();
        t2.lock(good_row, Mode::X).unwrap();
        let e = t2.lock(row_in(bad), Mode::S).unwrap_err();
        assert!(
            matches!(e, LockError::ServerFailed { partition, .. } if partition == bad),
            "{policy:?}: {e:?}"
        );
        t2.abort();
        // The healthy partition has nothing left, and still answers.
        let mut t3 = a.begin();
        t3.lock(good_row, Mode::X).unwrap();
        t3.commit().unwrap();
        assert!(
            lm.snapshot().locks.iter().all(|l| server.part_of(l.lock) == bad),
            "{policy:?}: locks left on the healthy partition: {}",
            lm.snapshot()
        );
    }
}
