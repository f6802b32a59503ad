//! One agent running short transactions in a loop, nothing else: the
//! single-thread cost of the lock manager's uncontended path, for counting
//! instructions with callgrind (`scripts/callgrind.sh` counts its
//! measured transactions alone and prints the count per transaction).
//!
//! `cargo run --release --example txnloop -- TABLE SLI TXNS [row|tm1|db|ycsb|ro] [KEEP] [WARMUP]`
//!
//! * `row` (default): `begin; lock(row, S); commit` over 1,024 rows of one
//!   table (three lock-table acquisitions and three releases);
//! * `tm1`: two row locks on one of four tables of 100,000 rows, 20% X;
//! * `db`: `begin; lock(database, IS); commit`, one intention lock (its
//!   count less `none`'s is what one intention lock costs a table);
//! * `ycsb`: 16 row locks of one table of 1,048,576 rows, half S and half
//!   X, uniform, without intention locks (`Builder::intention_locks(false)`):
//!   the requests DBx1000 makes with heirloom inside it (its YCSB, less the
//!   skew; `scripts/dbx1000.sh`);
//! * `ro`: 16 S row locks of one table of 1,048,576 rows, uniform, with
//!   intention locks: the kit's read-only YCSB (`--opt read-share=1`),
//!   whose share of `none` the scaling issue measures.
//!
//! TABLE is a lock table kind (`none` included: begin and commit alone),
//! SLI `off`, `on` or `always`, KEEP the `keep_inherited` setting (default
//! 0). WARMUP transactions run first, in `warm_up`, and the TXNS measured
//! ones after them, in `measured` (callgrind's `--toggle-collect` counts
//! that function alone). The default warm-up is 1,000,000 transactions
//! for `tm1` and 10,000 for the others: `tm1`'s X locks shut the row fast
//! path's stripes one by one, and a stripe reopens only after many turned
//! away attempts, so the cost of its transactions climbs for about a
//! million transactions before it settles (see MEASUREMENTS.md, "The tm1
//! loop's count, settled"). Prints the measured transactions' nanoseconds
//! per transaction on standard error.

use std::time::Instant;

use heirloom::{Agent, Inheritance, LockId, LockManager, Mode, TableId, TableKind};

const T: TableId = TableId::new(0, 1);

/// The transaction each loop runs (see the module docs).
#[derive(Clone, Copy)]
enum Loop {
    Row,
    Tm1,
    Db,
    Ycsb,
    Ro,
}

fn usage(msg: &str) -> ! {
    eprintln!("txnloop: {msg}");
    eprintln!("usage: txnloop TABLE off|on|always TXNS [row|tm1|db|ycsb|ro] [KEEP] [WARMUP]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(3..=6).contains(&args.len()) {
        usage("wrong number of arguments");
    }
    let kind: TableKind = args[0].parse().unwrap_or_else(|e: String| usage(&e));
    let sli: Inheritance = args[1].parse().unwrap_or_else(|e: String| usage(&e));
    let n: u64 = args[2]
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| usage("TXNS must be a positive integer"));
    let kind_of_loop = match args.get(3).map(String::as_str) {
        None | Some("row") => Loop::Row,
        Some("tm1") => Loop::Tm1,
        Some("db") => Loop::Db,
        Some("ycsb") => Loop::Ycsb,
        Some("ro") => Loop::Ro,
        Some(s) => usage(&format!("unknown loop {s}")),
    };
    let keep: u32 = args
        .get(4)
        .map_or(Some(0), |s| s.parse().ok())
        .unwrap_or_else(|| usage("KEEP must be a non-negative integer"));
    let default_warm_up = match kind_of_loop {
        Loop::Tm1 => 1_000_000,
        Loop::Ycsb | Loop::Ro => 100_000,
        Loop::Row | Loop::Db => 10_000,
    };
    let warm: u64 = args
        .get(5)
        .map_or(Some(default_warm_up), |s| s.parse().ok())
        .unwrap_or_else(|| usage("WARMUP must be a non-negative integer"));
    let lm = LockManager::builder()
        .table(kind)
        .inheritance(sli)
        .keep_inherited(keep)
        .intention_locks(!matches!(kind_of_loop, Loop::Ycsb))
        .build();
    let mut agent = lm.agent();
    let mut state = State {
        kind_of_loop,
        rng: 0x9e37_79b9_7f4a_7c15,
        i: 0,
    };
    warm_up(&mut agent, &mut state, warm);
    let t0 = Instant::now();
    measured(&mut agent, &mut state, n);
    let ns = t0.elapsed().as_nanos() as f64 / n as f64;
    eprintln!(
        "{ns:.1} ns/txn (row fast path {}, turned off {} times)",
        if lm.fast_rows_on() { "on" } else { "off" },
        lm.fast_rows_turned_off()
    );
}

/// The loop's state: which transaction, and where the random sequence is.
struct State {
    kind_of_loop: Loop,
    rng: u64,
    i: u64,
}

/// The transactions that are not counted (see the module docs).
#[inline(never)]
fn warm_up(agent: &mut Agent, state: &mut State, n: u64) {
    run(agent, state, n);
}

/// The transactions that are counted: `scripts/callgrind.sh` collects
/// this function alone.
#[inline(never)]
fn measured(agent: &mut Agent, state: &mut State, n: u64) {
    run(agent, state, n);
}

/// The next number of xorshift64*: the same sequence in every run.
#[inline(always)]
fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

#[inline(always)]
fn run(agent: &mut Agent, state: &mut State, n: u64) {
    // Locals in the loop, written back after it: the loop's own cost stays
    // that of a loop in `main`.
    let (kind_of_loop, mut rng, start) = (state.kind_of_loop, state.rng, state.i);
    for i in start..start + n {
        let mut t = agent.begin();
        let r = match kind_of_loop {
            Loop::Tm1 => {
                let r = next(&mut rng);
                let mode = if r % 100 < 20 { Mode::X } else { Mode::S };
                let table = TableId::new(0, 1 + ((r >> 8) % 4) as u32);
                t.lock(LockId::row(table, (r >> 16) % 100_000), mode)
                    .and_then(|()| t.lock(LockId::row(table, (r >> 40) % 100_000), mode))
            }
            Loop::Ycsb => {
                let mut r = Ok(());
                for _ in 0..16 {
                    let x = next(&mut rng);
                    let mode = if x & 1 == 0 { Mode::X } else { Mode::S };
                    r = r.and_then(|()| t.lock(LockId::row(T, (x >> 20) & ((1 << 20) - 1)), mode));
                }
                r
            }
            Loop::Ro => {
                let mut r = Ok(());
                for _ in 0..16 {
                    let x = next(&mut rng);
                    r = r.and_then(|()| t.lock(LockId::row(T, (x >> 20) & ((1 << 20) - 1)), Mode::S));
                }
                r
            }
            Loop::Db => t.lock(LockId::database(0), Mode::IS),
            Loop::Row => t.lock(LockId::row(T, i & 1023), Mode::S),
        };
        // One agent: nothing can conflict, so an error is a bug worth a
        // message, not a panic.
        if let Err(e) = r.and_then(|()| t.commit()) {
            eprintln!("txnloop: {e}");
            std::process::exit(1);
        }
    }
    state.rng = rng;
    state.i = start + n;
}
