//! The cost of one short transaction: `begin; lock(row, S); commit`, which
//! is three lock-table acquisitions (database IS, table IS, row S) and three
//! releases. Single thread, and two threads on rows of one table (the table
//! and database intention locks are shared and hot). On one thread also
//! with SLI on (`/sli`: the agent reclaims its database and table locks,
//! so only the row goes through the table) and with `none`, which takes
//! no lock at all (what begin and commit cost by themselves).
//!
//! `cargo bench -p heirloom --bench uncontended`

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use heirloom::{Inheritance, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

fn one_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("begin-lock(row,S)-commit/1-thread");
    let configs = TableKind::ALL.iter().map(|&k| (k, Inheritance::Off)).chain([
        (TableKind::Latched, Inheritance::On),
        (TableKind::LatchFree, Inheritance::On),
        (TableKind::NoLocking, Inheritance::Off),
    ]);
    for (kind, sli) in configs {
        let lm = LockManager::builder().table(kind).inheritance(sli).build();
        let mut agent = lm.agent();
        let mut k = 0u64;
        let name = match sli {
            Inheritance::Off => kind.name().to_string(),
            _ => format!("{}/sli", kind.name()),
        };
        g.bench_function(name, |b| {
            b.iter(|| {
                k = (k + 1) & 1023;
                let mut t = agent.begin();
                t.lock(LockId::row(T, k), Mode::S).unwrap();
                t.commit().unwrap();
            })
        });
    }
    g.finish();
}

fn two_threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("begin-lock(row,S)-commit/2-threads");
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).build();
        // Time per transaction of the pair: total wall time / transactions.
        g.bench_function(kind.name(), |b| {
            b.iter_custom(|iters| {
                let per = iters.div_ceil(2);
                let barrier = Arc::new(Barrier::new(2));
                let hs: Vec<_> = (0..2u64)
                    .map(|i| {
                        let (lm, barrier) = (lm.clone(), barrier.clone());
                        thread::spawn(move || {
                            let mut agent = lm.agent();
                            barrier.wait();
                            let start = Instant::now();
                            for n in 0..per {
                                let mut t = agent.begin();
                                t.lock(LockId::row(T, i * 1_000_000 + (n & 1023)), Mode::S).unwrap();
                                t.commit().unwrap();
                            }
                            start.elapsed()
                        })
                    })
                    .collect();
                let wall = hs.into_iter().map(|h| h.join().unwrap()).max().unwrap();
                wall / 2
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = one_thread, two_threads
}
criterion_main!(benches);
