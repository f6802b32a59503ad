//! The async lock's round trip against the blocking call
//! (`Transaction::lock_async` against `Transaction::lock`), uncontended
//! and under conflict, in interleaved rounds (medians printed):
//!
//! * uncontended: one agent, `begin`, an X row lock, `commit`, in ns per
//!   transaction: the blocking call; the future polled once (it resolves
//!   at its first poll); the future awaited on tokio's current-thread
//!   runtime;
//! * under conflict: two sessions take X on one row in turn, so every
//!   lock waits for the other's commit: two tasks on one thread (each
//!   lock is pending until the other commits and its grant wakes the
//!   task), two tasks on a 2-worker runtime, and two threads with the
//!   blocking call (a thread that waits spins, then parks). Reported as
//!   ns per transaction and waits per transaction.
//!
//! `cargo run --release -p heirloom --example asyncwait [rounds]`

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use heirloom::{ConflictPolicy, Inheritance, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);
const ROW: LockId = LockId::row(T, 1);
const UNCONTENDED: u64 = 200_000;
const HANDOFFS: u64 = 20_000;

fn manager(kind: TableKind) -> Arc<LockManager> {
    Arc::new(
        LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .inheritance(Inheritance::Off)
            .build(),
    )
}

fn blocking(lm: &LockManager) -> f64 {
    let mut a = lm.agent();
    let t0 = Instant::now();
    for i in 0..UNCONTENDED {
        let mut t = a.begin();
        t.lock(LockId::row(T, i & 1023), Mode::X).unwrap();
        t.commit().unwrap();
    }
    t0.elapsed().as_nanos() as f64 / UNCONTENDED as f64
}

fn polled_once(lm: &LockManager) -> f64 {
    let mut a = lm.agent();
    let mut cx = Context::from_waker(Waker::noop());
    let t0 = Instant::now();
    for i in 0..UNCONTENDED {
        let mut t = a.begin();
        let r = pin!(t.lock_async(LockId::row(T, i & 1023), Mode::X)).poll(&mut cx);
        assert!(matches!(r, Poll::Ready(Ok(()))));
        t.commit().unwrap();
    }
    t0.elapsed().as_nanos() as f64 / UNCONTENDED as f64
}

fn awaited(lm: &LockManager) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let mut a = lm.agent();
    rt.block_on(async {
        let t0 = Instant::now();
        for i in 0..UNCONTENDED {
            let mut t = a.begin();
            t.lock_async(LockId::row(T, i & 1023), Mode::X).await.unwrap();
            t.commit().unwrap();
        }
        t0.elapsed().as_nanos() as f64 / UNCONTENDED as f64
    })
}

/// A session that takes X on `ROW` `n` times, yielding while it holds it
/// (so that the other session queues behind it).
async fn turns(lm: Arc<LockManager>, n: u64) {
    let mut a = lm.agent();
    for _ in 0..n {
        let mut t = a.begin();
        t.lock_async(ROW, Mode::X).await.unwrap();
        tokio::task::yield_now().await;
        t.commit().unwrap();
    }
}

fn tasks(lm: &Arc<LockManager>, workers: usize) -> (f64, f64) {
    let rt = if workers == 1 {
        tokio::runtime::Builder::new_current_thread().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .build()
            .unwrap()
    };
    let before = lm.stats();
    let t0 = Instant::now();
    rt.block_on(async {
        let a = tokio::spawn(turns(lm.clone(), HANDOFFS));
        let b = tokio::spawn(turns(lm.clone(), HANDOFFS));
        a.await.unwrap();
        b.await.unwrap();
    });
    let ns = t0.elapsed().as_nanos() as f64 / (2 * HANDOFFS) as f64;
    let waits = (lm.stats().waits - before.waits) as f64 / (2 * HANDOFFS) as f64;
    (ns, waits)
}

fn threads(lm: &Arc<LockManager>) -> (f64, f64) {
    let before = lm.stats();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut a = lm.agent();
                for _ in 0..HANDOFFS {
                    let mut t = a.begin();
                    t.lock(ROW, Mode::X).unwrap();
                    std::thread::yield_now();
                    t.commit().unwrap();
                }
            });
        }
    });
    let ns = t0.elapsed().as_nanos() as f64 / (2 * HANDOFFS) as f64;
    let waits = (lm.stats().waits - before.waits) as f64 / (2 * HANDOFFS) as f64;
    (ns, waits)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    println!(
        "# {cpu}, {} CPUs; {rounds} interleaved rounds, medians",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for kind in [TableKind::Latched, TableKind::LatchFree] {
        let lm = manager(kind);
        let mut r: [Vec<f64>; 10] = Default::default();
        for _ in 0..rounds {
            r[0].push(blocking(&lm));
            r[1].push(polled_once(&lm));
            r[2].push(awaited(&lm));
            let (ns, w) = tasks(&lm, 1);
            r[3].push(ns);
            r[4].push(w);
            let (ns, w) = tasks(&lm, 2);
            r[5].push(ns);
            r[6].push(w);
            let (ns, w) = threads(&lm);
            r[7].push(ns);
            r[8].push(w);
        }
        let m: Vec<f64> = r.iter_mut().take(9).map(|v| median(v)).collect();
        println!(
            "{kind:?}, uncontended ns/txn: blocking {:.0}, polled once {:.0} ({:.3}x), awaited on tokio {:.0} ({:.3}x)",
            m[0],
            m[1],
            m[1] / m[0],
            m[2],
            m[2] / m[0]
        );
        println!(
            "{kind:?}, conflict (every lock waits for the other session's commit) ns/txn (waits/txn): \
             2 tasks on 1 thread {:.0} ({:.2}), 2 tasks on 2 workers {:.0} ({:.2}), 2 threads blocking {:.0} ({:.2})",
            m[3], m[4], m[5], m[6], m[7], m[8]
        );
    }
}
