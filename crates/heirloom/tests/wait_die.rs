//! Wait-die on fixed schedules, on every table kind: who dies, who waits,
//! conversions, compatible requests, and a restart that keeps its age. The
//! rule under test is `ConflictPolicy::WaitDie`'s documentation: a
//! requester compares its age with every request in its way (the granted
//! ones it conflicts with, and the waiting ones queued ahead of it that it
//! conflicts with) and dies if any is older; otherwise it waits.
//!
//! Transactions are begun on the test's thread in a fixed order, so their
//! ages are that order (the first begun is the oldest); a request that
//! must wait is made on a scoped thread, and the test polls the snapshot
//! until the wait is seen (`common::until`), never sleeping on a guess.

use crate::common;

use std::thread::{self, Scope, ScopedJoinHandle};

use common::until;
use heirloom::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind, Transaction, TxnId, Wait};

const T: TableId = TableId::new(0, 1);
const ROW: LockId = LockId::row(T, 7);

fn manager(kind: TableKind) -> LockManager {
    LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::WaitDie)
        .build()
}

/// `txn` asks for `ROW` in `mode` on a thread of its own; the handle gives
/// the transaction back with the answer.
fn ask<'s, 'a: 's>(
    s: &'s Scope<'s, '_>,
    mut txn: Transaction<'a>,
    mode: Mode,
) -> ScopedJoinHandle<'s, (Transaction<'a>, Result<(), LockError>)> {
    s.spawn(move || {
        let r = txn.lock(ROW, mode);
        (txn, r)
    })
}

/// Polls until `ROW` has `n` waiters and returns them in queue order.
fn until_waiters(lm: &LockManager, n: usize, what: &str) -> Vec<TxnId> {
    let mut seen = Vec::new();
    until(what, || {
        seen = lm
            .snapshot()
            .locks
            .iter()
            .find(|l| l.lock == ROW)
            .map(|l| l.waiters.iter().map(|w| w.txn).collect())
            .unwrap_or_default();
        seen.len() == n
    });
    seen
}

/// The holders of `ROW` now, with their modes, sorted by transaction.
fn holders(lm: &LockManager) -> Vec<(TxnId, Mode)> {
    let mut h: Vec<_> = lm
        .snapshot()
        .locks
        .iter()
        .filter(|l| l.lock == ROW)
        .flat_map(|l| l.holders.iter().map(|h| (h.txn, h.mode)))
        .collect();
    h.sort();
    h
}

/// A request made on the test's thread that the rule says must die: with
/// a time limit, so that a request that waited instead fails the test
/// (with a timeout) rather than hanging it.
fn dies(txn: &mut Transaction<'_>, mode: Mode) -> Result<(), LockError> {
    txn.lock_with(ROW, mode, Wait::Timeout(common::LIMIT))
}

/// On every table kind: three transactions begun oldest first, the
/// youngest holding `ROW` in X; `f` runs the schedule (with the table kind
/// for messages), and no lock is left after it.
fn youngest_holds_x(f: impl for<'a> Fn(TableKind, &LockManager, Transaction<'a>, Transaction<'a>, Transaction<'a>)) {
    for kind in TableKind::ALL {
        let lm = manager(kind);
        let (mut a, mut b, mut c) = (lm.agent(), lm.agent(), lm.agent());
        let oldest = a.begin();
        let middle = b.begin();
        let mut youngest = c.begin();
        youngest.lock(ROW, Mode::X).unwrap();
        f(kind, &lm, oldest, middle, youngest);
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

fn expect_died(kind: TableKind, r: Result<(), LockError>, older: TxnId) {
    match r {
        Err(LockError::Died { older: o, .. }) => assert_eq!(o, older, "{kind}: the older one named"),
        other => panic!("{kind}: expected to die against {older}, got {other:?}"),
    }
}

#[test]
fn a_younger_requester_dies_against_an_older_holder() {
    for kind in TableKind::ALL {
        let lm = manager(kind);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut old = a.begin();
        let mut young = b.begin();
        assert!(old.age() < young.age(), "{kind}: ages in the order begun");
        old.lock(ROW, Mode::X).unwrap();
        expect_died(kind, dies(&mut young, Mode::S), old.id());
        // Dying dooms the transaction: it must abort, and leaves no request.
        assert!(
            matches!(young.lock(LockId::row(T, 8), Mode::S), Err(LockError::Doomed { .. })),
            "{kind}: a transaction that died is doomed"
        );
        young.abort();
        assert_eq!(holders(&lm), vec![(old.id(), Mode::X)], "{kind}");
        old.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

/// The tables that decide a request under their latch or in their walk
/// judge wait-die there (`ConflictPolicy::WaitDie`): a request that dies
/// is never linked, so it never counts as a wait and nobody sees it
/// waiting; the same requests die as where the policy judges a linked
/// waiter (the server table), conversions included.
#[test]
fn a_request_that_dies_is_judged_before_it_waits() {
    for kind in TableKind::ALL {
        let judged = !matches!(kind, TableKind::Server { .. });
        let lm = manager(kind);
        let (mut a, mut b, mut c) = (lm.agent(), lm.agent(), lm.agent());
        let mut old = a.begin();
        let mut middle = b.begin();
        let mut young = c.begin();
        old.lock(ROW, Mode::S).unwrap();
        young.lock(ROW, Mode::S).unwrap();
        // A new request and a conversion, each with an older holder in its way.
        expect_died(kind, dies(&mut middle, Mode::X), old.id());
        expect_died(kind, dies(&mut young, Mode::X), old.id());
        let (stats, died) = (lm.stats(), lm.stats().died);
        assert_eq!(died, 2, "{kind}");
        if judged {
            assert_eq!(stats.waits, 0, "{kind}: a request that died waited first");
        }
        middle.abort();
        young.abort();
        assert_eq!(
            holders(&lm),
            vec![(old.id(), Mode::S)],
            "{kind}: the conversion left S behind"
        );
        old.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

#[test]
fn an_older_requester_waits_for_a_younger_holder() {
    for kind in TableKind::ALL {
        let lm = manager(kind);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let old = a.begin();
        let mut young = b.begin();
        young.lock(ROW, Mode::X).unwrap();
        let old_id = old.id();
        thread::scope(|s| {
            let w = ask(s, old, Mode::X);
            assert_eq!(
                until_waiters(&lm, 1, "the older requester waits"),
                vec![old_id],
                "{kind}"
            );
            young.commit().unwrap();
            let (old, r) = w.join().unwrap();
            r.unwrap_or_else(|e| panic!("{kind}: the older requester is granted once the younger ends: {e}"));
            assert_eq!(holders(&lm), vec![(old_id, Mode::X)], "{kind}");
            old.commit().unwrap();
        });
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

#[test]
fn compatible_requests_neither_wait_nor_die() {
    for kind in TableKind::ALL {
        let lm = manager(kind);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut old = a.begin();
        let mut young = b.begin();
        old.lock(ROW, Mode::S).unwrap();
        young.lock(ROW, Mode::S).unwrap();
        assert_eq!(holders(&lm).len(), 2, "{kind}: both share the row");
        young.commit().unwrap();
        old.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

/// A requester dies against an older waiter queued ahead of it that it
/// conflicts with, even when every holder is younger than both: requests
/// are granted first come, first served, so it would wait behind the older
/// one, which a later request of the younger's could block.
#[test]
fn a_younger_requester_dies_against_an_older_waiter_ahead() {
    youngest_holds_x(|kind, lm, oldest, mut middle, youngest| {
        let oldest_id = oldest.id();
        thread::scope(|s| {
            let w = ask(s, oldest, Mode::X);
            until_waiters(lm, 1, "the oldest waits for the youngest");
            // In the middle one's way: the youngest (holder, younger) and the
            // oldest (waiting ahead, older, X against S).
            expect_died(kind, dies(&mut middle, Mode::S), oldest_id);
            middle.abort();
            youngest.commit().unwrap();
            let (oldest, r) = w.join().unwrap();
            r.unwrap();
            oldest.commit().unwrap();
        });
    });
}

/// An older requester waits behind younger waiters and holders alike, and
/// the queue is served in order.
#[test]
fn an_older_requester_waits_behind_a_younger_waiter() {
    youngest_holds_x(|kind, lm, oldest, middle, youngest| {
        let (oldest_id, middle_id) = (oldest.id(), middle.id());
        thread::scope(|s| {
            let wm = ask(s, middle, Mode::X);
            until_waiters(lm, 1, "the middle one waits for the youngest");
            let wo = ask(s, oldest, Mode::S);
            assert_eq!(
                until_waiters(lm, 2, "the oldest waits behind the middle one"),
                vec![middle_id, oldest_id],
                "{kind}: queue order"
            );
            youngest.commit().unwrap();
            let (middle, r) = wm.join().unwrap();
            r.unwrap_or_else(|e| panic!("{kind}: the middle one is granted first: {e}"));
            assert_eq!(holders(lm), vec![(middle_id, Mode::X)], "{kind}");
            assert_eq!(
                until_waiters(lm, 1, "the oldest still waits"),
                vec![oldest_id],
                "{kind}"
            );
            middle.commit().unwrap();
            let (oldest, r) = wo.join().unwrap();
            r.unwrap();
            assert_eq!(holders(lm), vec![(oldest_id, Mode::S)], "{kind}");
            oldest.commit().unwrap();
        });
    });
}

/// A waiting request ahead that is compatible with ours is not in our
/// way: an S requester behind an older S waiter waits (for the younger X
/// holder) instead of dying, and both are granted together.
#[test]
fn a_compatible_older_waiter_ahead_is_not_in_the_way() {
    youngest_holds_x(|kind, lm, oldest, middle, youngest| {
        let (oldest_id, middle_id) = (oldest.id(), middle.id());
        thread::scope(|s| {
            let wo = ask(s, oldest, Mode::S);
            until_waiters(lm, 1, "the oldest waits");
            let wm = ask(s, middle, Mode::S);
            until_waiters(lm, 2, "the middle one waits behind the compatible oldest");
            youngest.commit().unwrap();
            let (oldest, ro) = wo.join().unwrap();
            let (middle, rm) = wm.join().unwrap();
            ro.unwrap();
            rm.unwrap_or_else(|e| panic!("{kind}: the middle one is granted with the oldest: {e}"));
            let mut both = vec![(oldest_id, Mode::S), (middle_id, Mode::S)];
            both.sort();
            assert_eq!(holders(lm), both, "{kind}");
            oldest.commit().unwrap();
            middle.commit().unwrap();
        });
    });
}

/// A conversion is judged as any request: the younger of two S holders
/// asking for X dies against the older holder, and keeps its S until it
/// aborts; the older one asking for X waits for the younger's S to go.
#[test]
fn conversions_die_or_wait_by_age() {
    for kind in TableKind::ALL {
        let lm = manager(kind);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut old = a.begin();
        let mut young = b.begin();
        old.lock(ROW, Mode::S).unwrap();
        young.lock(ROW, Mode::S).unwrap();
        expect_died(kind, dies(&mut young, Mode::X), old.id());
        assert_eq!(
            young.held_mode(ROW),
            Some(Mode::S),
            "{kind}: the failed conversion keeps S"
        );
        young.abort();
        old.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");

        let mut old = a.begin();
        let mut young = b.begin();
        old.lock(ROW, Mode::S).unwrap();
        young.lock(ROW, Mode::S).unwrap();
        let old_id = old.id();
        thread::scope(|s| {
            let w = ask(s, old, Mode::X);
            until_waiters(&lm, 1, "the older converter waits for the younger S");
            let info = lm.snapshot();
            let l = info.locks.iter().find(|l| l.lock == ROW).unwrap();
            assert_eq!(
                l.waiters[0].converting_from,
                Some(Mode::S),
                "{kind}: waiting as a conversion"
            );
            young.commit().unwrap();
            let (old, r) = w.join().unwrap();
            r.unwrap();
            assert_eq!(holders(&lm), vec![(old_id, Mode::X)], "{kind}");
            old.commit().unwrap();
        });
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}

/// A transaction that died and is retried (`Agent::retry`) keeps its age:
/// it waits where its first attempt died only if it has become the older,
/// and those that began after its first attempt die against it.
#[test]
fn a_restart_keeps_its_age_through_a_death() {
    for kind in TableKind::ALL {
        let lm = manager(kind);
        let (mut a, mut b, mut d) = (lm.agent(), lm.agent(), lm.agent());
        let mut old = a.begin();
        let mut first = b.begin();
        let age = first.age();
        old.lock(ROW, Mode::X).unwrap();
        expect_died(kind, dies(&mut first, Mode::X), old.id());
        first.abort();
        let mut later = d.begin();
        let mut again = b.retry();
        assert_eq!(again.age(), age, "{kind}: the retry keeps the age");
        // Still younger than `old`: dies again while it holds the row.
        expect_died(kind, dies(&mut again, Mode::S), old.id());
        again.abort();
        old.commit().unwrap();
        let mut again = b.retry();
        assert_eq!(again.age(), age, "{kind}");
        again.lock(ROW, Mode::X).unwrap();
        // `later` began after the first attempt: it dies against the retry.
        expect_died(kind, dies(&mut later, Mode::S), again.id());
        later.abort();
        again.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind}");
    }
}
