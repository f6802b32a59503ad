//! TPC-C: nine tables, five transactions, the specification's inputs and
//! the consistency conditions (TPC-C 5.11; clauses cited below).
//!
//! Money is kept in cents, times as a run-wide counter.
//!
//! Phantoms. Every scanned range is guarded by the lock of the row that
//! owns it, which every inserter of the range holds exclusively:
//! - the ORDER_LINE rows of an order are inserted only by the NewOrder that
//!   creates the order, under its X lock on the ORDER row; a reader S-locks
//!   (Delivery: X-locks) the ORDER row before scanning its lines;
//! - the ORDER_LINE rows of a district's last 20 orders are inserted only
//!   under an X lock on the DISTRICT row (NewOrder increments D_NEXT_O_ID);
//!   StockLevel S-locks the DISTRICT row before scanning, so no line can
//!   appear in its range while it runs;
//! - Delivery takes, per district, X on a sentinel (the NEW_ORDER row of
//!   order id 0, which never exists), then X on the oldest NEW_ORDER row
//!   (which it deletes), its ORDER row, its lines and its customer; no lock
//!   on the DISTRICT row, which it neither reads nor writes. The sentinel
//!   orders the Deliveries of one district: a delete takes its row out of
//!   the index at once, before the Delivery commits, so without it a
//!   second Delivery would take the next row as the oldest, and if the
//!   first then aborted its row would come back below the second's deleted
//!   one (a gap in the district's NEW_ORDER ids, which the consistency
//!   check caught under no-wait). Its one phantom question is "which
//!   NEW_ORDER row is the oldest?", and inserts cannot change the answer:
//!   a NewOrder inserts only above every existing order id. If the
//!   district has none, a NewOrder's row that Delivery sees it X-locks (so
//!   it waits for that NewOrder), and one it does not see orders Delivery
//!   before that NewOrder, which touches none of the rows Delivery changes
//!   in other districts (a customer belongs to one district). A Delivery
//!   that finds its oldest row deleted by another looks again;
//! - a customer's orders (OrderStatus) only grow by a new maximum from a
//!   NewOrder; an OrderStatus that sees the new entry waits on the ORDER row
//!   lock and serialises after that NewOrder, one that does not serialises
//!   before it, and it reads nothing else NewOrder writes;
//! - the last-name index never changes after loading.
//!
//! So row locks plus these "owner" locks give serialisable executions
//! without key-range or page locks.

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, PREGEN, Retry, RunResult, Workload};
use crate::storage::{IndexKind, Outcome, Table, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Profile, Scale, ScaleArg, Sweep};
use crate::workload::random::{TpccConstants, nurand};
use crate::workload::{INDEX, index_kind};
use heirloom::{ConflictPolicy, LockId, Mode, TableId};
use heirloom_btree::{BTree, Optimistic};
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

mod transactions;

/// WAREHOUSE.
pub const WAREHOUSE: TableId = TableId::new(4, 1);
/// DISTRICT.
pub const DISTRICT: TableId = TableId::new(4, 2);
/// CUSTOMER.
pub const CUSTOMER: TableId = TableId::new(4, 3);
/// HISTORY (rows in worker segments, each X-locked by its key).
pub const HISTORY: TableId = TableId::new(4, 4);
/// NEW_ORDER.
pub const NEW_ORDER: TableId = TableId::new(4, 5);
/// ORDER.
pub const ORDER: TableId = TableId::new(4, 6);
/// ORDER_LINE.
pub const ORDER_LINE: TableId = TableId::new(4, 7);
/// ITEM.
pub const ITEM: TableId = TableId::new(4, 8);
/// STOCK.
pub const STOCK: TableId = TableId::new(4, 9);

/// Districts per warehouse (clause 4.2.2).
pub const DISTRICTS: u64 = 10;

/// Field numbers: the whole row layout (some fields are only written at load).
#[allow(dead_code)]
mod f {
    pub const W_YTD: usize = 0;
    pub const W_TAX: usize = 1;
    pub const D_YTD: usize = 0;
    pub const D_TAX: usize = 1;
    pub const D_NEXT_O_ID: usize = 2;
    pub const C_BALANCE: usize = 0;
    pub const C_YTD_PAYMENT: usize = 1;
    pub const C_PAYMENT_CNT: usize = 2;
    pub const C_DELIVERY_CNT: usize = 3;
    pub const C_CREDIT_BC: usize = 4;
    pub const C_DISCOUNT: usize = 5;
    pub const C_LAST: usize = 6;
    pub const C_FIRST: usize = 7;
    pub const C_DATA: usize = 8;
    pub const O_C_ID: usize = 0;
    pub const O_ENTRY_D: usize = 1;
    pub const O_CARRIER_ID: usize = 2;
    pub const O_OL_CNT: usize = 3;
    pub const OL_I_ID: usize = 0;
    pub const OL_DELIVERY_D: usize = 2;
    pub const OL_QUANTITY: usize = 3;
    pub const OL_AMOUNT: usize = 4;
    pub const I_PRICE: usize = 0;
    pub const S_QUANTITY: usize = 0;
    pub const S_YTD: usize = 1;
    pub const S_ORDER_CNT: usize = 2;
    pub const S_REMOTE_CNT: usize = 3;
}

/// DISTRICT key.
pub fn d_key(w: u64, d: u64) -> u64 {
    (w << 4) | d
}
/// CUSTOMER key.
pub fn c_key(w: u64, d: u64, c: u64) -> u64 {
    (d_key(w, d) << 16) | c
}
/// ORDER / NEW_ORDER key.
pub fn o_key(w: u64, d: u64, o: u64) -> u64 {
    (d_key(w, d) << 32) | o
}
/// ORDER_LINE key.
pub fn ol_key(w: u64, d: u64, o: u64, ol: u64) -> u64 {
    (o_key(w, d, o) << 4) | ol
}
/// STOCK key.
pub fn s_key(w: u64, i: u64) -> u64 {
    (w << 20) | i
}
fn name_key(w: u64, d: u64, last: u64, c: u64) -> u64 {
    (((d_key(w, d) << 10) | last) << 16) | c
}
fn oc_key(w: u64, d: u64, c: u64, o: u64) -> u64 {
    (c_key(w, d, c) << 32) | o
}

/// The syllables of C_LAST (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// C_LAST of name number `n` (0..=999): the syllables of its three digits
/// (clause 4.3.2.3). Rows store the number; this gives the string.
pub fn last_name(n: u64) -> String {
    let s = |d: u64| SYLLABLES[d as usize % 10];
    format!("{}{}{}", s(n / 100), s(n / 10), s(n))
}

/// Transaction types.
pub mod kind {
    /// NewOrder.
    pub const NEW_ORDER: usize = 0;
    /// Payment.
    pub const PAYMENT: usize = 1;
    /// OrderStatus.
    pub const ORDER_STATUS: usize = 2;
    /// Delivery.
    pub const DELIVERY: usize = 3;
    /// StockLevel.
    pub const STOCK_LEVEL: usize = 4;
}

/// Transaction names (and single-transaction mix names).
pub const TRANSACTIONS: &[&str] = &["new-order", "payment", "order-status", "delivery", "stock-level"];

/// A customer chosen by id or by last name (clause 2.5.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// By C_ID.
    Id(u64),
    /// By C_LAST (the name's number 0..999).
    Last(u64),
}

/// One TPC-C transaction's inputs (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    NewOrder {
        w: u64,
        d: u64,
        c: u64,
        items: Vec<(u64, u64, u64)>,
    },
    Payment {
        w: u64,
        d: u64,
        c_w: u64,
        c_d: u64,
        who: Who,
        amount: u64,
    },
    OrderStatus {
        w: u64,
        d: u64,
        who: Who,
    },
    Delivery {
        w: u64,
        carrier: u64,
    },
    StockLevel {
        w: u64,
        d: u64,
        threshold: u64,
    },
}

/// A HISTORY row.
#[derive(Debug, Clone, Copy)]
pub struct History {
    /// Customer's warehouse, district, id.
    pub c: (u64, u64, u64),
    /// Paying warehouse and district.
    pub wd: (u64, u64),
    /// Amount in cents.
    pub amount: u64,
}

/// A worker is a terminal: its home warehouse and district, and its
/// HISTORY segment. Clause 2.4.1.1 binds a terminal to a home warehouse,
/// clause 2.8.1.1 to a district for StockLevel; the specification's 10
/// terminals per warehouse cover each (warehouse, district) once. Worker i
/// gets warehouse i % W + 1 (DBx1000's binding) and district
/// (i / W) % 10 + 1, so with more threads than warehouses they share
/// warehouses round-robin, and beyond 10 per warehouse, districts too
/// ([`TpccBench`] says so in the report).
#[derive(Debug)]
pub struct Terminal {
    index: usize,
    home: u64,
    district: u64,
    history: Vec<History>,
}

impl Terminal {
    /// Home warehouse.
    pub fn home(&self) -> u64 {
        self.home
    }
    /// Home district (StockLevel's).
    pub fn district(&self) -> u64 {
        self.district
    }
}

/// Sizes (the specification's, or shrunk for small machines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// ITEM rows (and STOCK rows per warehouse): 100,000.
    pub items: u64,
    /// CUSTOMER rows (and initial ORDER rows) per district: 3,000.
    pub customers: u64,
}

impl Size {
    /// Full size divided by `shrink` (1: the specification's; at most 100).
    pub fn shrunk(shrink: u64) -> Size {
        let k = shrink.clamp(1, 100);
        Size {
            items: 100_000 / k,
            customers: 3_000 / k,
        }
    }
    /// Initial NEW_ORDER rows per district: the last 900 of 3,000 orders.
    pub fn new_orders(&self) -> u64 {
        self.customers * 900 / 3_000
    }
    /// Distinct last names in use: 1,000, fewer if there are fewer customers.
    pub fn names(&self) -> u64 {
        self.customers.min(1_000)
    }
}

/// The TPC-C database.
pub struct Tpcc {
    warehouses: u64,
    size: Size,
    /// The NURand constants (clause 2.1.6).
    c: TpccConstants,
    /// NewOrder inserts its ORDER, NEW_ORDER and ORDER_LINE rows and
    /// Payment X-locks its HISTORY row (false: as DBx1000's TPC-C, which
    /// leaves them out; see [`Tpcc::without_inserts`]).
    inserts: bool,
    /// WAREHOUSE.
    pub warehouse: Table,
    /// DISTRICT.
    pub district: Table,
    /// CUSTOMER.
    pub customer: Table,
    /// (w, d, C_LAST, c) -> c; never changes after loading.
    pub customer_by_name: BTree<Optimistic>,
    /// NEW_ORDER.
    pub new_order: Table,
    /// ORDER.
    pub order: Table,
    /// (w, d, c, o) -> o.
    pub order_by_customer: BTree<Optimistic>,
    /// ORDER_LINE.
    pub order_line: Table,
    /// ITEM.
    pub item: Table,
    /// STOCK.
    pub stock: Table,
    history: Mutex<Vec<History>>,
}

impl std::fmt::Debug for Tpcc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tpcc")
            .field("warehouses", &self.warehouses)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// Growth room of the tables that NewOrder inserts into (memory is taken
/// only as rows are used).
const GROWTH: usize = 1 << 28;

impl Tpcc {
    /// Bytes needed at load (for the memory check).
    pub fn estimate_bytes(warehouses: u64, size: Size) -> u64 {
        let w = warehouses as usize;
        let c = size.customers as usize * DISTRICTS as usize * w;
        Table::estimate_bytes(2, size.items as usize)
            + Table::estimate_bytes(4, size.items as usize * w)
            + Table::estimate_bytes(9, c) * 2
            + Table::estimate_bytes(5, c) * 2
            + Table::estimate_bytes(5, c * 10)
    }

    /// Populates `warehouses` warehouses (clause 4.3.3.1) of `size`.
    /// WAREHOUSE, DISTRICT, CUSTOMER, ITEM and STOCK (read and updated by
    /// key only) are indexed by `index`; NEW_ORDER, ORDER and ORDER_LINE
    /// (scanned by range, inserted into, deleted from) by the B+tree.
    pub fn new(warehouses: u64, size: Size, seed: u64, index: IndexKind) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let (w_n, items, cust) = (warehouses, size.items, size.customers);
        let c_n = (w_n * DISTRICTS * cust) as usize;
        let c = TpccConstants::draw(&mut rng);
        let db = Tpcc {
            warehouses,
            size,
            c,
            inserts: true,
            warehouse: Table::with_index("WAREHOUSE", WAREHOUSE, 2, w_n as usize, index),
            district: Table::with_index("DISTRICT", DISTRICT, 3, (w_n * DISTRICTS) as usize, index),
            customer: Table::with_index("CUSTOMER", CUSTOMER, 9, c_n, index),
            customer_by_name: BTree::new(),
            new_order: Table::new("NEW_ORDER", NEW_ORDER, 1, c_n + GROWTH),
            order: Table::new("ORDER", ORDER, 5, c_n + GROWTH),
            order_by_customer: BTree::new(),
            order_line: Table::new("ORDER_LINE", ORDER_LINE, 5, c_n * 15 + 4 * GROWTH),
            item: Table::with_index("ITEM", ITEM, 2, items as usize, index),
            stock: Table::with_index("STOCK", STOCK, 4, (items * w_n) as usize, index),
            history: Mutex::new(Vec::new()),
        };
        for i in 1..=items {
            db.item
                .load(i, &[rng.random_range(100..=10_000), rng.random_range(1..=10_000)])
                .expect("sized");
        }
        let names = size.names();
        for w in 1..=w_n {
            // W_YTD and D_YTD start at the sum of the loaded history (10.00 per customer).
            let d_ytd = cust * 1_000;
            db.warehouse
                .load(w, &[d_ytd * DISTRICTS, rng.random_range(0..=2_000)])
                .expect("sized");
            for i in 1..=items {
                db.stock
                    .load(s_key(w, i), &[rng.random_range(10..=100), 0, 0, 0])
                    .expect("sized");
            }
            for d in 1..=DISTRICTS {
                db.district
                    .load(d_key(w, d), &[d_ytd, rng.random_range(0..=2_000), cust + 1])
                    .expect("sized");
                for c in 1..=cust {
                    let last = if c <= names {
                        c - 1
                    } else {
                        nurand(&mut rng, 255, db.c.c_last_load, 0, names - 1)
                    };
                    let fields = [
                        (-1_000i64) as u64, // C_BALANCE -10.00
                        1_000,              // C_YTD_PAYMENT 10.00
                        1,
                        0,
                        (rng.random_range(0..10) == 0) as u64, // 10% BC
                        rng.random_range(0..=5_000),
                        last,
                        rng.random::<u64>(), // C_FIRST (random letters, packed)
                        0,
                    ];
                    db.customer.load(c_key(w, d, c), &fields).expect("sized");
                    db.customer_by_name.insert(name_key(w, d, last, c), c);
                }
                // Orders with a random permutation of customers (clause 4.3.3.1).
                let mut perm: Vec<u64> = (1..=cust).collect();
                for i in (1..perm.len()).rev() {
                    perm.swap(i, rng.random_range(0..=i));
                }
                let delivered_below = cust - size.new_orders() + 1;
                for o in 1..=cust {
                    let c = perm[o as usize - 1];
                    let ol_cnt = rng.random_range(5..=15u64);
                    let delivered = o < delivered_below;
                    let carrier = if delivered { rng.random_range(1..=10) } else { 0 };
                    db.order
                        .load(o_key(w, d, o), &[c, 1, carrier, ol_cnt, 1])
                        .expect("sized");
                    db.order_by_customer.insert(oc_key(w, d, c, o), o);
                    for ol in 1..=ol_cnt {
                        let amount = if delivered { 0 } else { rng.random_range(1..=999_999) };
                        let fields = [rng.random_range(1..=items), w, delivered as u64, 5, amount];
                        db.order_line.load(ol_key(w, d, o, ol), &fields).expect("sized");
                    }
                    if !delivered {
                        db.new_order.load(o_key(w, d, o), &[0]).expect("sized");
                    }
                }
            }
        }
        db
    }

    /// The same database with the inserts left out, as DBx1000's TPC-C
    /// does (its `insert_row` calls are commented out): NewOrder still
    /// takes D_NEXT_O_ID and updates STOCK but inserts no ORDER, NEW_ORDER
    /// or ORDER_LINE row, and Payment takes no lock on a HISTORY row (the
    /// payment is still recorded in the terminal's history, which `verify`
    /// reads). Only payment and new-order are meaningful then; `verify`
    /// skips the conditions on order ids.
    pub fn without_inserts(mut self) -> Self {
        self.inserts = false;
        self
    }

    fn customer_input(&self, rng: &mut SmallRng) -> Who {
        // Clause 2.5.1.2: 60% by last name, 40% by id.
        if rng.random_range(0..100) < 60 {
            Who::Last(nurand(rng, 255, self.c.c_last_run, 0, self.size.names() - 1))
        } else {
            Who::Id(nurand(rng, 1023, self.c.c_id, 1, self.size.customers))
        }
    }

    /// HISTORY rows of retired workers.
    pub fn history(&self) -> Vec<History> {
        self.history.lock().clone()
    }
}

/// The TPC-C mix called `name`, or an error listing the known ones.
/// The TPC-C benchmark: `--scale` warehouses, option `shrink`.
#[derive(Debug)]
pub struct TpccBench;

/// TPC-C in the registry.
pub static TPCC: TpccBench = TpccBench;

/// The named mixes.
const MIXES: &[(&str, &[(usize, u32)])] = {
    use kind::*;
    &[
        // Clause 5.2.3 minimums, NewOrder the rest.
        (
            "full",
            &[
                (NEW_ORDER, 45),
                (PAYMENT, 43),
                (ORDER_STATUS, 4),
                (DELIVERY, 4),
                (STOCK_LEVEL, 4),
            ],
        ),
        // The SLI paper's small mix.
        ("small", &[(PAYMENT, 467), (NEW_ORDER, 489), (ORDER_STATUS, 43)]),
        // The DBx1000 testbed's default.
        ("pay-new", &[(PAYMENT, 1), (NEW_ORDER, 1)]),
    ]
};

impl Benchmark for TpccBench {
    fn name(&self) -> &'static str {
        "tpcc"
    }
    fn counts(&self) -> &'static str {
        "txn/s: committed transactions of every type (tpmC would count only NewOrders, per minute); total/s adds the NewOrders rolled back on an unused item (1%, clause 2.4.2.3) and Payments or OrderStatus whose customer name matched nobody"
    }
    fn about(&self) -> &'static str {
        "TPC-C: nine tables, five transactions, the specification's inputs and consistency conditions"
    }
    fn scale(&self) -> Scale {
        Scale {
            unit: "warehouses",
            default: ScaleArg::Total(1),
            max: 1_000,
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        &["full", "small", "pay-new"]
    }
    fn transactions(&self) -> &'static [&'static str] {
        TRANSACTIONS
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose("tpcc", name, MIXES, TRANSACTIONS)
    }
    fn options(&self) -> &'static [Opt] {
        &[
            Opt {
                name: "shrink",
                help: "divide ITEM, STOCK and CUSTOMER (and the initial orders) by this (1: the specification's sizes)",
                kind: Kind::Int { min: 1, max: 100 },
                default: "1",
                alias: Some("--tpcc-shrink"),
            },
            Opt {
                name: "inserts",
                help: "NewOrder inserts its ORDER, NEW_ORDER and ORDER_LINE rows and Payment locks its HISTORY row (false: leave them out, as DBx1000's TPC-C does; for pay-new)",
                kind: Kind::Flag,
                default: "true",
                alias: None,
            },
            INDEX,
        ]
    }
    fn estimate_bytes(&self, scale: u64, options: &Options) -> u64 {
        Tpcc::estimate_bytes(scale, Size::shrunk(options.int("shrink")))
    }
    fn profiles(&self) -> &'static [Profile] {
        &[Profile {
            name: "dbx1000",
            about: "DBx1000's TPC-C: payment + new-order 50/50 without the inserts (DBx1000 leaves them out; --opt inserts=true puts them back), one warehouse per thread (thread i on warehouse i % W + 1), hash indexes; its three 2PL variants, no SLI, aborted transactions deferred as its abort buffer does, inputs drawn before the clock starts (--pregen 32768)",
            mix: Some("pay-new"),
            scale: Some(ScaleArg::PerThread(1)),
            options: &[("index", "hash"), ("inserts", "false")],
            policies: &[ConflictPolicy::NoWait, ConflictPolicy::WaitDie, ConflictPolicy::Detect],
            sli: &[false],
            retry: Some(Retry::Defer),
            pregen: Some(PREGEN),
        }]
    }
    fn notes(&self, scale: ScaleArg, threads: &[usize]) -> Vec<String> {
        let mut out = Vec::new();
        for &t in threads {
            let w = scale.at(t).max(1);
            if t as u64 > w {
                let most = (t as u64).div_ceil(w);
                let spec = if most > DISTRICTS {
                    format!(", more than the specification's {DISTRICTS} terminals per warehouse")
                } else {
                    String::new()
                };
                out.push(format!(
                    "tpcc: {t} threads on {w} warehouses share home warehouses round-robin (thread i on warehouse i % {w} + 1), up to {most} per warehouse{spec}"
                ));
            }
        }
        out
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        // TPC-C's tables grow while it runs (ORDER, ORDER_LINE, NEW_ORDER):
        // every run starts from a freshly loaded database, so a run late in
        // the sweep does not measure a bigger database.
        let seed = sweep.seed();
        let size = Size::shrunk(sweep.options().int("shrink"));
        let index = index_kind(sweep.options());
        let inserts = sweep.options().flag("inserts");
        sweep.fresh_db_per_run(&|w| {
            let db = Tpcc::new(w, size, seed, index);
            Ok(if inserts { db } else { db.without_inserts() })
        })
    }
}

impl Workload for Tpcc {
    type Input = Input;
    type Worker = Terminal;

    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn transactions(&self) -> &'static [&'static str] {
        TRANSACTIONS
    }

    fn worker(&self, index: usize) -> Terminal {
        let w = self.warehouses.max(1);
        Terminal {
            index,
            home: index as u64 % w + 1,
            district: (index as u64 / w) % DISTRICTS + 1,
            history: Vec::new(),
        }
    }

    fn input(&self, k: usize, t: &Terminal, rng: &mut SmallRng) -> Input {
        let w = t.home;
        let d = rng.random_range(1..=DISTRICTS);
        let other_w = |rng: &mut SmallRng| {
            let o = rng.random_range(1..self.warehouses);
            if o >= w { o + 1 } else { o }
        };
        match k {
            kind::NEW_ORDER => {
                let c = nurand(rng, 1023, self.c.c_id, 1, self.size.customers);
                let n = rng.random_range(5..=15);
                let rollback = rng.random_range(0..100) == 0;
                let items = (0..n)
                    .map(|j| {
                        let i = if rollback && j == n - 1 {
                            self.size.items + 1 // unused (clause 2.4.1.5)
                        } else {
                            nurand(rng, 8191, self.c.ol_i_id, 1, self.size.items)
                        };
                        let supply = if self.warehouses > 1 && rng.random_range(0..100) == 0 {
                            other_w(rng)
                        } else {
                            w
                        };
                        (i, supply, rng.random_range(1..=10))
                    })
                    .collect();
                Input::NewOrder { w, d, c, items }
            }
            kind::PAYMENT => {
                let (c_w, c_d) = if self.warehouses > 1 && rng.random_range(0..100) >= 85 {
                    (other_w(rng), rng.random_range(1..=DISTRICTS))
                } else {
                    (w, d)
                };
                let who = self.customer_input(rng);
                Input::Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    who,
                    amount: rng.random_range(100..=500_000),
                }
            }
            kind::ORDER_STATUS => Input::OrderStatus {
                w,
                d,
                who: self.customer_input(rng),
            },
            kind::DELIVERY => Input::Delivery {
                w,
                carrier: rng.random_range(1..=10),
            },
            _ => Input::StockLevel {
                w,
                d: t.district,
                threshold: rng.random_range(10..=20),
            },
        }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, t: &mut Terminal, input: &Input) -> Result<Outcome, TxError> {
        match *input {
            Input::NewOrder { w, d, c, ref items } => self.new_order(tx, w, d, c, items),
            Input::Payment {
                w,
                d,
                c_w,
                c_d,
                who,
                amount,
            } => self.payment(tx, t, (w, d), (c_w, c_d), who, amount),
            Input::OrderStatus { w, d, who } => self.order_status(tx, w, d, who),
            Input::Delivery { w, carrier } => self.delivery(tx, w, carrier),
            Input::StockLevel { w, d, threshold } => self.stock_level(tx, w, d, threshold),
        }
    }

    fn undo_append(&self, t: &mut Terminal, _log: usize) {
        t.history.pop();
    }

    fn retire(&self, t: Terminal) {
        self.history.lock().extend(t.history);
    }

    fn verify(&self) -> Result<String, String> {
        use std::collections::HashMap;
        let history = self.history();
        let load_d_ytd = self.size.customers * 1_000;
        let mut hist_wd: HashMap<(u64, u64), u64> = HashMap::new();
        let mut hist_c: HashMap<(u64, u64, u64), i64> = HashMap::new();
        for h in &history {
            *hist_wd.entry(h.wd).or_default() += h.amount;
            *hist_c.entry(h.c).or_default() += h.amount as i64;
        }
        // Delivered order-line amounts per customer (via their orders).
        let mut delivered: HashMap<(u64, u64, u64), i64> = HashMap::new();
        let mut ol_count: HashMap<(u64, u64), u64> = HashMap::new();
        self.order_line.index.scan(.., |k, s| {
            let (w, d, o) = (k >> 40, (k >> 36) & 0xf, (k >> 4) & 0xffff_ffff);
            *ol_count.entry((w, d)).or_default() += 1;
            if self.order_line.get(s as u32, f::OL_DELIVERY_D) != 0 {
                let os = self.order.index.get(o_key(w, d, o)).expect("order of a line") as u32;
                let c = self.order.get(os, f::O_C_ID);
                *delivered.entry((w, d, c)).or_default() += self.order_line.get(s as u32, f::OL_AMOUNT) as i64;
            }
            true
        });
        for w in 1..=self.warehouses {
            let ws = self
                .warehouse
                .index
                .get(w)
                .ok_or(format!("tpcc: warehouse {w} missing"))? as u32;
            let w_ytd = self.warehouse.get(ws, f::W_YTD);
            let mut sum_d = 0;
            let mut hist_w = 0;
            for d in 1..=DISTRICTS {
                let ds = self.district.index.get(d_key(w, d)).ok_or("tpcc: district missing")? as u32;
                let d_ytd = self.district.get(ds, f::D_YTD);
                sum_d += d_ytd;
                let h = hist_wd.get(&(w, d)).copied().unwrap_or(0);
                hist_w += h;
                if d_ytd != load_d_ytd + h {
                    return Err(format!(
                        "tpcc: D_YTD of ({w}, {d}) is {d_ytd}, history says {}",
                        load_d_ytd + h
                    ));
                }
                // Conditions 2-4.
                let next = self.district.get(ds, f::D_NEXT_O_ID);
                let orders = self.order.index.range(o_key(w, d, 0)..=o_key(w, d, u32::MAX as u64));
                let max_o = orders.last().map(|x| x.0 & 0xffff_ffff).unwrap_or(0);
                // Without inserts, NewOrders take ids and leave no order.
                if (self.inserts && next - 1 != max_o) || next - 1 < max_o {
                    return Err(format!(
                        "tpcc: ({w}, {d}): D_NEXT_O_ID - 1 = {} but max(O_ID) = {max_o}",
                        next - 1
                    ));
                }
                let nos = self
                    .new_order
                    .index
                    .range(o_key(w, d, 0)..=o_key(w, d, u32::MAX as u64));
                if let (Some(first), Some(last)) = (nos.first(), nos.last()) {
                    let (lo, hi) = (first.0 & 0xffff_ffff, last.0 & 0xffff_ffff);
                    if self.inserts && hi != max_o {
                        return Err(format!("tpcc: ({w}, {d}): max(NO_O_ID) = {hi} but max(O_ID) = {max_o}"));
                    }
                    if hi - lo + 1 != nos.len() as u64 {
                        return Err(format!(
                            "tpcc: ({w}, {d}): NEW_ORDER ids {lo}..={hi} but {} rows",
                            nos.len()
                        ));
                    }
                }
                let ol_cnt: u64 = orders.iter().map(|&(_, s)| self.order.get(s as u32, f::O_OL_CNT)).sum();
                let lines = ol_count.get(&(w, d)).copied().unwrap_or(0);
                if ol_cnt != lines {
                    return Err(format!(
                        "tpcc: ({w}, {d}): sum(O_OL_CNT) = {ol_cnt} but {lines} ORDER_LINE rows"
                    ));
                }
                // Balance agreement per customer.
                for c in 1..=self.size.customers {
                    let cs = self
                        .customer
                        .index
                        .get(c_key(w, d, c))
                        .ok_or("tpcc: customer missing")? as u32;
                    let bal = self.customer.get(cs, f::C_BALANCE) as i64;
                    let want = -1_000 + delivered.get(&(w, d, c)).copied().unwrap_or(0)
                        - hist_c.get(&(w, d, c)).copied().unwrap_or(0);
                    if bal != want {
                        return Err(format!(
                            "tpcc: customer ({w}, {d}, {c}): C_BALANCE {bal}, expected {want}"
                        ));
                    }
                }
            }
            if w_ytd != sum_d {
                return Err(format!("tpcc: W_YTD of {w} is {w_ytd}, sum(D_YTD) is {sum_d}"));
            }
            if w_ytd != load_d_ytd * DISTRICTS + hist_w {
                return Err(format!(
                    "tpcc: W_YTD of {w} is {w_ytd}, history says {}",
                    load_d_ytd * DISTRICTS + hist_w
                ));
            }
        }
        Ok(format!(
            "tpcc: {} warehouses: W_YTD = sum(D_YTD) = history; D_NEXT_O_ID, ORDER and NEW_ORDER ids agree{}; sum(O_OL_CNT) = ORDER_LINE rows; every balance = delivered - paid",
            self.warehouses,
            if self.inserts {
                ""
            } else {
                " (inserts off: up to the loaded orders)"
            }
        ))
    }
}
