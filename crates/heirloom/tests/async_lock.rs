//! `Transaction::lock_async`: waits that do not block the thread. Sessions
//! (an agent each) multiplexed on fewer threads than sessions, two of them
//! on one thread that conflict, under every conflict policy and table
//! kind; a dropped future withdraws its request; time limits and deadlock
//! searches of tasks; the counters of a lock call that waited.

use crate::common;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use common::{Rng, policies, within_a_minute};
use heirloom::{
    ConflictPolicy, Inheritance, LockError, LockFuture, LockId, LockManager, Mode, TableId, TableKind, Wait,
};

const T: TableId = TableId::new(0, 1);
const ROW: LockId = LockId::row(T, 7);

fn manager(kind: TableKind, policy: ConflictPolicy) -> LockManager {
    LockManager::builder()
        .table(kind)
        .conflicts(policy)
        .inheritance(Inheritance::Off)
        .build()
}

fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// Polls `f` once with a waker that does nothing.
fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    std::pin::Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn the_future_is_send() {
    fn send<T: Send>() {}
    send::<LockFuture<'static, 'static>>();
}

#[test]
fn a_free_lock_resolves_at_the_first_poll() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect);
        let mut a = lm.agent();
        let mut t = a.begin();
        let mut f = t.lock_async(ROW, Mode::X);
        assert_eq!(poll_once(&mut f), Poll::Ready(Ok(())), "{kind:?}");
        // Polled again after it resolved: refused, not a second request.
        assert!(matches!(
            poll_once(&mut f),
            Poll::Ready(Err(LockError::InvalidRequest { .. }))
        ));
        drop(f);
        assert_eq!(t.held_mode(ROW), Some(Mode::X));
        t.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind:?}");
    }
}

async fn older_holds(lm: Arc<LockManager>) -> Result<(), LockError> {
    let mut a = lm.agent();
    let mut t = a.begin();
    t.lock_async(ROW, Mode::X).await?;
    // Hold across awaits while the younger asks.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    t.commit()
}

async fn younger_asks(lm: Arc<LockManager>) -> Result<bool, LockError> {
    let mut b = lm.agent();
    tokio::task::yield_now().await;
    let mut t = b.begin();
    match t.lock_async(ROW, Mode::X).await {
        Ok(()) => t.commit().map(|()| true),
        Err(e) => {
            t.abort();
            Err(e)
        }
    }
}

/// Two sessions on one thread: the older holds X on `ROW` across an
/// await, the younger asks for X. The younger's wait must not stop the
/// thread that runs the holder: under every policy both finish, with the
/// policy's answer for the younger.
#[test]
fn two_sessions_on_one_thread_that_conflict_finish_under_every_policy() {
    within_a_minute("two sessions on one thread", || {
        for kind in TableKind::ALL {
            for policy in policies(Duration::from_secs(30)) {
                let lm = Arc::new(manager(kind, policy));
                // Separate tasks (not `join!`, which polls every branch
                // whenever one is woken): the waiter is polled only when
                // its waker is woken.
                let (ra, rb) = one_thread().block_on(async {
                    let older = tokio::spawn(older_holds(lm.clone()));
                    let younger = tokio::spawn(younger_asks(lm.clone()));
                    (older.await.unwrap(), younger.await.unwrap())
                });
                assert_eq!(ra, Ok(()), "{kind:?} {policy:?}: the holder");
                match policy {
                    ConflictPolicy::NoWait => {
                        assert!(matches!(rb, Err(LockError::WouldBlock { .. })), "{kind:?}: {rb:?}")
                    }
                    ConflictPolicy::WaitDie => {
                        assert!(matches!(rb, Err(LockError::Died { .. })), "{kind:?}: {rb:?}")
                    }
                    _ => assert_eq!(rb, Ok(true), "{kind:?} {policy:?}: the waiter"),
                }
                assert!(lm.snapshot().is_empty(), "{kind:?} {policy:?}: {}", lm.snapshot());
            }
        }
    });
}

/// A bank of 8 hot accounts, 24 sessions on a runtime of 2 worker threads,
/// every policy: each session makes transfers (X on both accounts, in a
/// random order, with awaits between the locks and inside the update), and
/// retries a transfer the policy aborted. The balances are read and
/// written without atomicity of their own: a lost update (two writers
/// granted at once) changes the total.
#[test]
fn more_sessions_than_worker_threads_finish_under_every_policy() {
    const ACCOUNTS: u64 = 8;
    const SESSIONS: u64 = 24;
    const TRANSFERS: u64 = 40;
    within_a_minute("a bank of sessions on two workers", || {
        for kind in [
            TableKind::Latched,
            TableKind::LatchFree,
            TableKind::Server { partitions: 2 },
        ] {
            for policy in policies(Duration::from_millis(5)) {
                let lm = Arc::new(manager(kind, policy));
                let balances: Arc<Vec<AtomicI64>> = Arc::new((0..ACCOUNTS).map(|_| AtomicI64::new(100)).collect());
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_time()
                    .build()
                    .unwrap();
                let retries: u64 = rt.block_on(async {
                    let mut tasks = Vec::new();
                    for s in 0..SESSIONS {
                        let (lm, balances) = (lm.clone(), balances.clone());
                        tasks.push(tokio::spawn(async move {
                            let mut agent = lm.agent();
                            let mut rng = Rng::new(s + 1);
                            let mut retries = 0;
                            for _ in 0..TRANSFERS {
                                let from = rng.below(ACCOUNTS);
                                let to = (from + 1 + rng.below(ACCOUNTS - 1)) % ACCOUNTS;
                                let mut first = true;
                                loop {
                                    let mut t = if first { agent.begin() } else { agent.retry() };
                                    first = false;
                                    let r = async {
                                        t.lock_async(LockId::row(T, from), Mode::X).await?;
                                        tokio::task::yield_now().await;
                                        t.lock_async(LockId::row(T, to), Mode::X).await?;
                                        let (f, g) = (&balances[from as usize], &balances[to as usize]);
                                        let (x, y) = (f.load(Ordering::Relaxed), g.load(Ordering::Relaxed));
                                        tokio::task::yield_now().await;
                                        f.store(x - 1, Ordering::Relaxed);
                                        g.store(y + 1, Ordering::Relaxed);
                                        Ok::<(), LockError>(())
                                    }
                                    .await;
                                    match r {
                                        Ok(()) => {
                                            t.commit().unwrap();
                                            break;
                                        }
                                        Err(e) => {
                                            assert!(e.is_restartable(), "{e}");
                                            t.abort();
                                            retries += 1;
                                            let us = 1 + rng.below(200);
                                            tokio::time::sleep(Duration::from_micros(us)).await;
                                        }
                                    }
                                }
                            }
                            retries
                        }));
                    }
                    let mut retries = 0;
                    for t in tasks {
                        retries += t.await.unwrap();
                    }
                    retries
                });
                let total: i64 = balances.iter().map(|b| b.load(Ordering::Relaxed)).sum();
                assert_eq!(total, 100 * ACCOUNTS as i64, "{kind:?} {policy:?}: a lost update");
                assert!(lm.snapshot().is_empty(), "{kind:?} {policy:?}: {}", lm.snapshot());
                let st = lm.stats();
                assert_eq!(st.committed, SESSIONS * TRANSFERS, "{kind:?} {policy:?}");
                if matches!(policy, ConflictPolicy::Detect) {
                    // Sessions on one worker really waited for each other.
                    assert!(st.waits > 0, "{kind:?}: no wait");
                }
                let _ = retries;
            }
        }
    });
}

#[test]
fn dropping_a_waiting_future_withdraws_its_request() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let mut tb = b.begin();
        {
            let mut f = tb.lock_async(ROW, Mode::S);
            assert!(poll_once(&mut f).is_pending(), "{kind:?}");
            let s = lm.snapshot();
            assert_eq!(s.lock(ROW).map(|l| l.waiters.len()), Some(1), "{kind:?}: {s}");
        }
        let s = lm.snapshot();
        assert!(s.lock(ROW).is_some_and(|l| l.waiters.is_empty()), "{kind:?}: {s}");
        // The transaction goes on: another row, and the intention locks it
        // took on the way stay.
        tb.lock(LockId::row(T, 8), Mode::X).unwrap();
        assert_eq!(tb.held_mode(ROW), None);
        ta.commit().unwrap();
        tb.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}

/// The holder commits (granting the waiter) and the future is dropped
/// before it is polled again: the grant is released, not kept.
#[test]
fn a_grant_that_races_the_drop_is_released() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect);
        let (mut a, mut b, mut c) = (lm.agent(), lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let mut tb = b.begin();
        {
            let mut f = tb.lock_async(ROW, Mode::X);
            assert!(poll_once(&mut f).is_pending(), "{kind:?}");
            ta.commit().unwrap();
        }
        assert_eq!(tb.held_mode(ROW), None, "{kind:?}");
        let mut tc = c.begin();
        assert!(
            tc.try_lock(ROW, Mode::X).unwrap(),
            "{kind:?}: the dropped grant was kept"
        );
        tc.commit().unwrap();
        tb.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}

#[test]
fn time_limits_end_async_waits() {
    for kind in [TableKind::Latched, TableKind::LatchFree] {
        for (policy, wait) in [
            (ConflictPolicy::Timeout(Duration::from_millis(20)), Wait::Policy),
            (ConflictPolicy::Detect, Wait::Timeout(Duration::from_millis(20))),
        ] {
            let lm = manager(kind, policy);
            let (mut a, mut b) = (lm.agent(), lm.agent());
            let mut ta = a.begin();
            ta.lock(ROW, Mode::X).unwrap();
            let mut tb = b.begin();
            let start = Instant::now();
            let r = one_thread().block_on(tb.lock_with_async(ROW, Mode::S, wait));
            assert!(
                matches!(r, Err(LockError::Timeout { .. })),
                "{kind:?} {policy:?}: {r:?}"
            );
            assert!(start.elapsed() >= Duration::from_millis(20));
            tb.abort();
            ta.commit().unwrap();
            assert!(lm.snapshot().is_empty());
        }
    }
}

/// Two tasks on one thread lock two rows in opposite orders: the deadlock
/// is found (the task that closes the cycle is its victim) and the other
/// finishes.
#[test]
fn a_deadlock_between_tasks_on_one_thread_is_found() {
    within_a_minute("a deadlock between tasks", || {
        for kind in TableKind::ALL {
            for timeout in [Duration::ZERO, Duration::from_millis(10)] {
                let lm = LockManager::builder()
                    .table(kind)
                    .deadlock_timeout(timeout)
                    .inheritance(Inheritance::Off)
                    .build();
                let lm = Arc::new(lm);
                let (r1, r2) = (LockId::row(T, 1), LockId::row(T, 2));
                async fn session(lm: Arc<LockManager>, first: LockId, second: LockId) -> Result<(), LockError> {
                    let mut agent = lm.agent();
                    let mut t = agent.begin();
                    t.lock_async(first, Mode::X).await?;
                    tokio::task::yield_now().await;
                    match t.lock_async(second, Mode::X).await {
                        Ok(()) => t.commit(),
                        Err(e) => {
                            t.abort();
                            Err(e)
                        }
                    }
                }
                let (x, y) = one_thread().block_on(async {
                    let x = tokio::spawn(session(lm.clone(), r1, r2));
                    let y = tokio::spawn(session(lm.clone(), r2, r1));
                    (x.await.unwrap(), y.await.unwrap())
                });
                let deadlocks = [&x, &y]
                    .iter()
                    .filter(|r| matches!(r, Err(LockError::Deadlock { .. })))
                    .count();
                assert_eq!(deadlocks, 1, "{kind:?} {timeout:?}: {x:?} {y:?}");
                assert!(x.is_ok() || y.is_ok(), "{kind:?}: {x:?} {y:?}");
                assert!(lm.snapshot().is_empty());
            }
        }
    });
}

/// A lock call that waited counts as the blocking call counts: one request
/// per level of its path, the one wait.
#[test]
fn a_lock_call_that_waited_counts_once() {
    for kind in [TableKind::Latched, TableKind::LatchFree] {
        let lm = manager(kind, ConflictPolicy::Detect);
        let (mut a, mut b, mut c) = (lm.agent(), lm.agent(), lm.agent());
        // The blocking call's count, with nothing in the way.
        let mut tc = c.begin();
        tc.lock(ROW, Mode::X).unwrap();
        let want = tc.agent_stats();
        tc.commit().unwrap();
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let mut tb = b.begin();
        let mut f = tb.lock_async(ROW, Mode::X);
        assert!(poll_once(&mut f).is_pending());
        ta.commit().unwrap();
        assert_eq!(poll_once(&mut f), Poll::Ready(Ok(())));
        drop(f);
        let got = tb.agent_stats();
        assert_eq!(got.lock_requests, want.lock_requests, "{kind:?}");
        assert_eq!(got.cache_hits, want.cache_hits, "{kind:?}");
        assert_eq!(got.waits, 1, "{kind:?}");
        tb.commit().unwrap();
    }
}

/// Under wound-wait an older task that asks for a lock a younger task on
/// the same thread holds, while the younger waits for the older, wounds
/// it: the wound wakes the younger's task, which dies, and the older goes
/// on.
#[test]
fn wound_wait_wounds_a_waiting_task() {
    within_a_minute(
        "a wound of a waiting task",
        wound_wait_wounds_a_waiting_task_on_each_table,
    );
}

fn wound_wait_wounds_a_waiting_task_on_each_table() {
    for kind in [TableKind::Latched, TableKind::LatchFree] {
        let lm = Arc::new(manager(kind, ConflictPolicy::WoundWait));
        let (r1, r2) = (LockId::row(T, 1), LockId::row(T, 2));
        let (ro, ry) = one_thread().block_on(async {
            let old = tokio::spawn({
                let lm = lm.clone();
                async move {
                    let mut a = lm.agent();
                    let mut t = a.begin();
                    t.lock_async(r1, Mode::X).await?;
                    // The younger begins, takes r2 and waits for r1.
                    tokio::task::yield_now().await;
                    t.lock_async(r2, Mode::X).await?;
                    t.commit()
                }
            });
            let young = tokio::spawn({
                let lm = lm.clone();
                async move {
                    let mut b = lm.agent();
                    let mut t = b.begin();
                    t.lock_async(r2, Mode::X).await?;
                    let r = t.lock_async(r1, Mode::X).await;
                    t.abort();
                    r
                }
            });
            (old.await.unwrap(), young.await.unwrap())
        });
        assert!(matches!(ry, Err(LockError::Wounded { .. })), "{kind:?}: {ry:?}");
        assert_eq!(ro, Ok(()), "{kind:?}");
        assert!(lm.snapshot().is_empty());
    }
}

/// Without any runtime: the future is polled by a bare executor that parks
/// its thread between polls, and the grant made by another thread's
/// commit is what wakes it (every table kind).
#[test]
fn a_grant_from_another_thread_wakes_a_bare_executor() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let (done, finished) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            let lm = &lm;
            // The committing thread stays until the waiter is done: a
            // scoped thread that ends unparks the scope's thread, which
            // would wake the executor without the grant's wake-up.
            s.spawn(move || {
                common::until_waiting(lm, ROW, "the task's request waits");
                ta.commit().unwrap();
                let _ = finished.recv_timeout(common::LIMIT);
            });
            let mut t = b.begin();
            assert_eq!(block_on(pin!(t.lock_async(ROW, Mode::S))), Ok(()), "{kind:?}");
            t.commit().unwrap();
            done.send(()).unwrap();
        });
        assert!(lm.snapshot().is_empty());
    }
}

/// A minimal executor: the future runs on this thread, parked between
/// polls (the waker unparks it), with no runtime at all.
fn block_on<F: Future>(mut f: std::pin::Pin<&mut F>) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// `wait_for_txn_async`: a session waits for another's end on the same
/// thread without blocking it (the writer commits in its own task), holds
/// nothing afterwards, and returns at once for a transaction that ended.
#[test]
fn a_session_waits_for_another_to_end_on_one_thread() {
    for kind in TableKind::ALL {
        let lm = Arc::new(manager(kind, ConflictPolicy::Detect));
        let lm2 = lm.clone();
        let (w, r) = within_a_minute("wait_for_txn_async", move || {
            let lm = lm2;
            let rt = one_thread();
            let published = Arc::new(std::sync::Mutex::new(None));
            let writer = {
                let (lm, published) = (lm.clone(), published.clone());
                rt.spawn(async move {
                    let mut a = lm.agent();
                    let mut t = a.begin();
                    t.publish_id().unwrap();
                    *published.lock().unwrap() = Some(t.id());
                    for _ in 0..10 {
                        tokio::task::yield_now().await;
                    }
                    t.commit()
                })
            };
            let reader = rt.spawn(async move {
                let writer_id = loop {
                    if let Some(id) = *published.lock().unwrap() {
                        break id;
                    }
                    tokio::task::yield_now().await;
                };
                let mut b = lm.agent();
                let mut t = b.begin();
                t.wait_for_txn_async(writer_id, Wait::Policy).await?;
                assert_eq!(t.held_mode(LockId::transaction(writer_id)), None);
                // Ended: at once.
                t.wait_for_txn_async(writer_id, Wait::Policy).await?;
                let waited = t.agent_stats().waits;
                t.commit()?;
                Ok::<u64, LockError>(waited)
            });
            rt.block_on(async { (writer.await.unwrap(), reader.await.unwrap()) })
        });
        w.unwrap();
        assert_eq!(r.unwrap(), 1, "{kind:?}: the first wait waited, the second did not");
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}

/// The requests of `lock_all_async` in the tests below: the middle one
/// waits for the holder of `ROW`.
const ALL: [(LockId, Mode); 3] = [
    (LockId::row(T, 3), Mode::X),
    (ROW, Mode::X),
    (LockId::row(T, 9), Mode::S),
];

/// `lock_all_async`: the requests that can be granted at once are, one
/// that must wait waits without blocking the thread, and once it is
/// granted the call goes on with the rest (here to a second wait); counted
/// as the blocking call with nothing in the way counts.
#[test]
fn lock_all_async_waits_for_each_request_that_must_wait() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect);
        let (mut a, mut b, mut c, mut d) = (lm.agent(), lm.agent(), lm.agent(), lm.agent());
        let mut td = d.begin();
        td.lock_all(&ALL).unwrap();
        let want = td.agent_stats();
        td.commit().unwrap();
        // ROW and row 9 are held: the call waits for each in turn (in an
        // order of the table's choosing).
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let mut tc = c.begin();
        tc.lock(ALL[2].0, Mode::X).unwrap();
        let mut holders = vec![(ROW, ta), (ALL[2].0, tc)];
        let mut tb = b.begin();
        let mut f = tb.lock_all_async(&ALL);
        while let Some(k) = next_wait(&mut f, &lm, &holders) {
            assert_eq!(poll_once(&mut f), Poll::Pending, "{kind:?}: a spurious poll");
            holders.remove(k).1.commit().unwrap();
        }
        assert!(holders.is_empty(), "{kind:?}: resolved before every holder ended");
        drop(f);
        for (id, mode) in ALL {
            assert_eq!(tb.held_mode(id), Some(mode), "{kind:?}: {id}");
        }
        let got = tb.agent_stats();
        assert_eq!(got.lock_requests, want.lock_requests, "{kind:?}");
        assert_eq!(got.cache_hits, want.cache_hits, "{kind:?}");
        assert_eq!(got.waits, 2, "{kind:?}");
        tb.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}

/// Polls `f` until it resolves (`None`; it must succeed) or waits for one
/// of `holders`' locks (its index), as a snapshot shows. (A lock server
/// grants after the holder's commit returns: so polled, not asked once.)
fn next_wait(
    f: &mut LockFuture<'_, '_>,
    lm: &LockManager,
    holders: &[(LockId, heirloom::Transaction<'_>)],
) -> Option<usize> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = poll_once(f);
        let s = lm.snapshot();
        // The request granted at once stays held throughout.
        assert_eq!(s.lock(ALL[0].0).map(|l| l.holders.len()), Some(1), "{s}");
        if r.is_ready() {
            assert_eq!(r, Poll::Ready(Ok(())));
            return None;
        }
        if let Some(k) = holders
            .iter()
            .position(|h| s.lock(h.0).is_some_and(|l| l.waiters.len() == 1))
        {
            return Some(k);
        }
        assert!(Instant::now() < deadline, "{s}");
        std::thread::yield_now();
    }
}

/// Dropping a waiting `lock_all_async` withdraws the request it waits
/// for; the requests granted before stay held and the transaction goes
/// on. Under no-wait it fails at the first poll, as `lock_all` does.
#[test]
fn dropping_a_waiting_lock_all_keeps_what_it_was_granted() {
    for kind in TableKind::ALL {
        let lm = manager(kind, ConflictPolicy::Detect);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let mut tb = b.begin();
        {
            let mut f = tb.lock_all_async(&ALL);
            assert!(poll_once(&mut f).is_pending(), "{kind:?}");
        }
        let s = lm.snapshot();
        assert!(s.lock(ROW).is_some_and(|l| l.waiters.is_empty()), "{kind:?}: {s}");
        assert_eq!(tb.held_mode(ROW), None, "{kind:?}");
        assert_eq!(tb.held_mode(LockId::row(T, 3)), Some(Mode::X), "{kind:?}");
        ta.commit().unwrap();
        tb.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());

        let lm = manager(kind, ConflictPolicy::NoWait);
        let (mut a, mut b) = (lm.agent(), lm.agent());
        let mut ta = a.begin();
        ta.lock(ROW, Mode::X).unwrap();
        let mut tb = b.begin();
        let r = poll_once(&mut tb.lock_all_async(&ALL));
        assert!(
            matches!(r, Poll::Ready(Err(LockError::WouldBlock { .. }))),
            "{kind:?}: {r:?}"
        );
        assert!(
            matches!(tb.commit(), Err(LockError::Doomed { .. })),
            "{kind:?}: doomed, as by lock_all"
        );
        ta.commit().unwrap();
        assert!(lm.snapshot().is_empty(), "{kind:?}: {}", lm.snapshot());
    }
}

/// A wait for this transaction's own end is refused at the first poll, as
/// the blocking `wait_for_txn` refuses it.
#[test]
fn an_async_wait_for_itself_is_refused() {
    let lm = manager(TableKind::Latched, ConflictPolicy::Detect);
    let mut a = lm.agent();
    let mut t = a.begin();
    let me = t.id();
    let r = poll_once(&mut t.wait_for_txn_async(me, Wait::Policy));
    assert!(matches!(r, Poll::Ready(Err(LockError::InvalidRequest { .. }))), "{r:?}");
    t.commit().unwrap();
}
