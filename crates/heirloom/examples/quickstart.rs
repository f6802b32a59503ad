//! A few worker threads run short transactions through heirloom and the
//! lock manager's statistics are printed at the end.
//!
//! `cargo run --release --example quickstart`

use std::thread;
use std::time::{Duration, Instant};

use heirloom::{ConflictPolicy, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind};

const ACCOUNTS: TableId = TableId::new(0, 1);
const BRANCHES: TableId = TableId::new(0, 2);

fn main() {
    let threads = 4;
    let per_thread = 50_000u64;
    let configs = [
        (TableKind::Global, Inheritance::Off),
        (TableKind::Latched, Inheritance::Off),
        (TableKind::Latched, Inheritance::On),
    ];
    for (kind, sli) in configs {
        let lm = LockManager::builder()
            .table(kind)
            .conflicts(ConflictPolicy::Detect)
            .inheritance(sli)
            .build();
        let start = Instant::now();
        let workers: Vec<_> = (0..threads)
            .map(|w| {
                let lm = lm.clone();
                thread::spawn(move || {
                    let mut agent = lm.agent();
                    let mut x = 0x2545_f491_4f6c_dd1du64 ^ w;
                    for _ in 0..per_thread {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let (account, branch) = (x % 10_000, x % 4);
                        agent
                            .run(|txn| {
                                // Read a few accounts, update one, update its branch.
                                txn.lock(LockId::row(ACCOUNTS, account), Mode::S)?;
                                txn.lock(LockId::row(ACCOUNTS, (account + 1) % 10_000), Mode::S)?;
                                txn.lock(LockId::row(ACCOUNTS, account), Mode::X)?;
                                txn.lock(LockId::row(BRANCHES, branch), Mode::X)?;
                                Ok::<_, LockError>(())
                            })
                            .expect("transaction");
                    }
                })
            })
            .collect();
        // Show what monitoring sees while the workers run.
        thread::sleep(Duration::from_millis(20));
        let snap = lm.snapshot();
        for w in workers {
            w.join().unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        let s = lm.stats();
        println!(
            "== table {} / policy {} / inheritance {} / {threads} threads ==",
            kind.name(),
            lm.policy().name(),
            sli.name()
        );
        println!(
            "{:.0} transactions/s ({} committed in {secs:.2} s)",
            s.committed as f64 / secs,
            s.committed
        );
        println!(
            "per transaction: {:.2} lock requests, {:.2} lock-table ops, {:.3} waits, {:.4} contended latches",
            s.lock_requests as f64 / s.committed as f64,
            s.table_ops_per_commit(),
            s.waits as f64 / s.committed as f64,
            s.latch_contended as f64 / s.committed as f64
        );
        println!(
            "inheritance: {} passed on, {} used, {} discarded, {} invalidated, {} lock-table ops avoided",
            s.inherited, s.inherited_used, s.inherited_discarded, s.inherited_invalidated, s.table_ops_avoided
        );
        for (name, v) in s.fields() {
            print!("{name}={v} ");
        }
        println!();
        println!(
            "a snapshot taken during the run held {} locks; first rows:",
            snap.locks.len()
        );
        for line in snap.to_string().lines().take(6) {
            println!("  {line}");
        }
        assert!(lm.snapshot().is_empty(), "no lock left behind");
        println!();
    }
}
