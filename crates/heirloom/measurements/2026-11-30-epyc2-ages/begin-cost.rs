use std::time::Instant;
use heirloom::{ConflictPolicy, LockManager, TableKind};
fn main() {
    let policy = match std::env::args().nth(1).as_deref() { Some("detect") => ConflictPolicy::Detect, _ => ConflictPolicy::WaitDie };
    let lm = LockManager::builder().table(TableKind::Latched).conflicts(policy).build();
    let mut a = lm.agent();
    let n = 5_000_000;
    for _ in 0..100_000 { a.begin().commit().unwrap(); }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..n { let t = a.begin(); std::hint::black_box(t.age()); t.commit().unwrap(); }
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("{:.1}", best);
}
