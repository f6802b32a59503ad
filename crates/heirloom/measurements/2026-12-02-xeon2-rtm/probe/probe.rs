//! What a hardware transaction costs on this CPU: an uncontended
//! parking_lot read lock against an empty elided section
//! (`heirloom_rtm::Elision::run` on a spin lock) and a bare xbegin/xend;
//! then eight independent random reads of an 8 MB array, plain and as one
//! elided section. Build: a crate of its own with `probe-Cargo.toml` as
//! its Cargo.toml (its path to heirloom-rtm set) and this file as
//! `src/main.rs`; `cargo run --release`. Its output: `output.txt`.
use heirloom_rtm::{Elision, Retry, SpinLock, insn};
use std::hint::black_box;
use std::time::Instant;
fn main() {
    let n = 20_000_000u64;
    let lock = SpinLock::new();
    let rw = parking_lot::RwLock::new(0u64);
    let e = Elision::new(Retry::default());
    let v = vec![1u64; 1 << 20];
    for round in 0..3 {
        let t = Instant::now();
        let mut s = 0u64;
        for i in 0..n { let g = rw.read(); s += *g + black_box(i); drop(g); }
        let a = t.elapsed().as_nanos() as f64 / n as f64;
        let t = Instant::now();
        for i in 0..n { s += e.run(&lock, false, || black_box(i)); }
        let b = t.elapsed().as_nanos() as f64 / n as f64;
        let t = Instant::now();
        for i in 0..n { unsafe { let st = insn::xbegin(); if st == insn::STARTED { s += black_box(i); insn::xend(); } } }
        let c = t.elapsed().as_nanos() as f64 / n as f64;
        // random reads of a 8 MB array, 8 reads a section
        let m = n / 8;
        let mut x = 12345u64;
        let t = Instant::now();
        for _ in 0..m { for _ in 0..8 { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); s += v[(x >> 44) as usize]; } }
        let d = t.elapsed().as_nanos() as f64 / m as f64;
        let t = Instant::now();
        for _ in 0..m { s += e.run(&lock, false, || { let mut y = 0; for _ in 0..8 { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); y += v[(x >> 44) as usize]; } y }); }
        let f = t.elapsed().as_nanos() as f64 / m as f64;
        println!("round {round}: rwlock read {a:.1} ns, elided empty {b:.1} ns, raw xbegin/xend {c:.1} ns; 8 random reads plain {d:.1} ns, elided {f:.1} ns ({s})");
    }
    println!("{:?}", e.stats());
}
