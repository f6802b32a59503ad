//! Deadlock scenarios resolved by every conflict policy on every table:
//! two-cycle, three-cycle, and two S-to-X upgraders.

use crate::common;

use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::Duration;

use heirloom::{ConflictPolicy, LockError, LockId, LockManager, Mode, TableId, TableKind, TxnId};

const T: TableId = TableId::new(0, 1);

/// What one participant did.
#[derive(Debug)]
struct Outcome {
    txn: TxnId,
    age: u64,
    /// The agent's index: it orders two transactions of equal age (the
    /// two threads may read the same clock tick as they begin).
    agent: u32,
    result: Result<(), LockError>,
}

impl Outcome {
    /// The order of both age-based policies: by age, then by agent index
    /// (`ConflictPolicy::WoundWait`, "Ages").
    fn seniority(&self) -> (u64, u32) {
        (self.age, self.agent)
    }
}

/// Runs `n` transactions; transaction `i` first takes `first(i)`, waits for
/// everyone, then asks for `second(i)`, then commits. Returns each outcome.
fn scenario(
    lm: &LockManager,
    n: usize,
    first: fn(usize) -> (LockId, Mode),
    second: fn(usize) -> (LockId, Mode),
) -> Vec<Outcome> {
    let barrier = Arc::new(Barrier::new(n));
    let (tx, rx) = mpsc::channel();
    for i in 0..n {
        let (lm, barrier, tx) = (lm.clone(), barrier.clone(), tx.clone());
        thread::spawn(move || {
            let mut a = lm.agent();
            let agent = a.index();
            let mut t = a.begin();
            let (id, m) = first(i);
            t.lock(id, m).unwrap();
            barrier.wait();
            // Stagger so that the cycle closes at a known place.
            thread::sleep(Duration::from_millis(10 * i as u64));
            let (id, m) = second(i);
            let result = t.lock(id, m);
            let (txn, age) = (t.id(), t.age());
            match &result {
                Ok(()) => t.commit().unwrap(),
                Err(_) => t.abort(),
            }
            tx.send(Outcome {
                txn,
                age,
                agent,
                result,
            })
            .unwrap();
        });
    }
    drop(tx);
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(
            rx.recv_timeout(Duration::from_secs(60))
                .expect("a participant hung: deadlock not resolved"),
        );
    }
    assert!(lm.snapshot().is_empty(), "locks left behind: {}", lm.snapshot());
    out
}

fn check(policy: ConflictPolicy, n: usize, out: &[Outcome]) {
    let failed: Vec<&Outcome> = out.iter().filter(|o| o.result.is_err()).collect();
    assert!(!failed.is_empty(), "{policy:?}: a deadlock needs a victim: {out:?}");
    assert!(failed.len() < n, "{policy:?}: somebody must get through: {out:?}");
    let oldest = out.iter().min_by_key(|o| o.seniority()).unwrap();
    for o in &failed {
        let e = o.result.as_ref().unwrap_err();
        match (policy, e) {
            (ConflictPolicy::Detect, LockError::Deadlock { victim, cycle }) => {
                assert_eq!(*victim, o.txn);
                let edges = &cycle.0;
                assert_eq!(edges.len(), n, "the whole cycle: {cycle}");
                assert_eq!(edges[0].waiter, o.txn);
                for (k, e) in edges.iter().enumerate() {
                    assert_eq!(e.holder, edges[(k + 1) % n].waiter, "edges chain: {cycle}");
                }
                let mut txns: Vec<_> = edges.iter().map(|e| e.waiter).collect();
                txns.sort();
                let mut all: Vec<_> = out.iter().map(|o| o.txn).collect();
                all.sort();
                assert_eq!(txns, all, "every transaction is in the cycle");
            }
            (ConflictPolicy::Timeout(_), LockError::Timeout { .. }) => {}
            (ConflictPolicy::NoWait, LockError::WouldBlock { .. }) => {}
            (ConflictPolicy::WaitDie, LockError::Died { older, .. }) => {
                let other = out.iter().find(|x| x.txn == *older).unwrap();
                assert!(other.seniority() < o.seniority(), "only the younger dies: {out:?}");
            }
            (ConflictPolicy::WoundWait, LockError::Wounded { by, .. }) => {
                let other = out.iter().find(|x| x.txn == *by).unwrap();
                assert!(other.seniority() < o.seniority(), "only the older wounds: {out:?}");
            }
            (p, e) => panic!("{p:?} produced {e}"),
        }
    }
    if matches!(policy, ConflictPolicy::WaitDie | ConflictPolicy::WoundWait) {
        assert!(
            oldest.result.is_ok(),
            "{policy:?}: the oldest transaction never aborts: {out:?}"
        );
    }
}

fn run_all(n: usize, first: fn(usize) -> (LockId, Mode), second: fn(usize) -> (LockId, Mode)) {
    for kind in TableKind::ALL {
        for policy in common::policies(Duration::from_millis(50)) {
            let lm = LockManager::builder().table(kind).conflicts(policy).build();
            let out = scenario(&lm, n, first, second);
            check(policy, n, &out);
        }
    }
}

#[test]
fn two_cycle_is_resolved_by_every_policy() {
    run_all(
        2,
        |i| (LockId::row(T, i as u64), Mode::X),
        |i| (LockId::row(T, ((i + 1) % 2) as u64), Mode::X),
    );
}

#[test]
fn three_cycle_is_resolved_by_every_policy() {
    run_all(
        3,
        |i| (LockId::row(T, i as u64), Mode::X),
        |i| (LockId::row(T, ((i + 1) % 3) as u64), Mode::S),
    );
}

#[test]
fn two_upgraders_are_resolved_by_every_policy() {
    run_all(2, |_| (LockId::row(T, 9), Mode::S), |_| (LockId::row(T, 9), Mode::X));
}

#[test]
fn table_level_upgraders_are_resolved() {
    // IX holders both asking for S (-> SIX) conflict like S-to-X upgraders.
    run_all(2, |_| (LockId::table(T), Mode::IX), |_| (LockId::table(T), Mode::S));
}

/// Under `Detect` the search runs when the wait begins, before the spin
/// before the first park: with a spin budget of an hour a two-cycle is
/// still broken at once (were the search to follow the spin, both members
/// would spin for the hour). On a machine with one core no request spins
/// (agents outnumber cores) and the test shows nothing more than the one
/// above.
#[test]
fn a_deadlock_is_found_when_the_wait_begins_not_after_the_spin() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .spin_before_park(Duration::from_secs(3600))
            .build();
        let out = common::within_a_minute("a two-cycle with an hour's spin", move || {
            scenario(
                &lm,
                2,
                |i| (LockId::row(T, i as u64), Mode::X),
                |i| (LockId::row(T, ((i + 1) % 2) as u64), Mode::X),
            )
        });
        check(ConflictPolicy::Detect, 2, &out);
    }
}
