//! Each transaction's logic against hand-computed outcomes on a tiny
//! database, run through the same path as the benchmark (`run_one`: lock,
//! execute, roll back failures, commit).

use heirloom::LockManager;
use heirloom_bench::runner::Workload;
use heirloom_bench::runner::run_one;
use heirloom_bench::storage::{IndexKind, Outcome, UndoLog};
use heirloom_bench::workload::tm1::{Input, Tm1, ai_key, cf_key};
use heirloom_bench::workload::tpcb::{self, Tpcb};
use heirloom_bench::workload::ycsb::{self, Ycsb};

fn once<W: Workload>(w: &W, lm: &LockManager, state: &mut W::Worker, input: &W::Input) -> Outcome {
    let mut agent = lm.agent();
    let mut undo = UndoLog::default();
    let r = run_one(w, &mut agent, state, &mut undo, input, None).expect("no concurrency here");
    assert!(undo.is_empty());
    drop(agent);
    assert!(lm.snapshot().locks.is_empty(), "locks left behind");
    r
}

/// A subscriber with a special facility of type `sf` (active or not as
/// wanted) and one without type `missing`.
fn pick(db: &Tm1, active: bool) -> (u64, u64, u64) {
    for s in 1..=200 {
        let types: Vec<u64> = (1..=4)
            .filter(|&t| db.special_facility.index.get(ai_key(s, t)).is_some())
            .collect();
        let Some(missing) = (1..=4).find(|t| !types.contains(t)) else {
            continue;
        };
        for &t in &types {
            let slot = db.special_facility.index.get(ai_key(s, t)).unwrap() as u32;
            if (db.special_facility.get(slot, 0) & 0xff == 1) == active {
                return (s, t, missing);
            }
        }
    }
    panic!("population has no such subscriber");
}

#[test]
fn tm1_transactions_do_what_the_specification_says() {
    let db = Tm1::new(200, false, 7, IndexKind::BTree);
    let lm = LockManager::builder().build();
    let run = |i: Input| once(&db, &lm, &mut (), &i);
    let (s, sf, missing) = pick(&db, true);

    // GET_SUBSCRIBER_DATA always finds its row.
    assert_eq!(run(Input::GetSubscriberData { s_id: s }), Outcome::Committed);

    // GET_ACCESS_DATA: present iff the row exists.
    for ai_type in 1..=4 {
        let present = db.access_info.index.get(ai_key(s, ai_type)).is_some();
        let want = if present { Outcome::Committed } else { Outcome::Failed };
        assert_eq!(
            run(Input::GetAccessData { s_id: s, ai_type }),
            want,
            "ai_type {ai_type}"
        );
    }

    // Clear the facility's call forwardings, then build a known one.
    for start in [0, 8, 16] {
        run(Input::DeleteCallForwarding {
            sub_nbr: s,
            sf_type: sf,
            start,
        });
    }
    assert!(
        db.call_forwarding
            .index
            .range(cf_key(s, sf, 0)..=cf_key(s, sf, 255))
            .is_empty()
    );
    let insert = Input::InsertCallForwarding {
        sub_nbr: s,
        sf_type: sf,
        start: 8,
        end: 12,
        numberx: 4711,
    };
    assert_eq!(run(insert), Outcome::Committed);
    let slot = db.call_forwarding.index.get(cf_key(s, sf, 8)).expect("inserted") as u32;
    assert_eq!(
        (db.call_forwarding.get(slot, 0), db.call_forwarding.get(slot, 1)),
        (12, 4711)
    );
    assert_eq!(run(insert), Outcome::Failed, "duplicate key fails");
    // Insert for a facility the subscriber lacks fails and inserts nothing.
    let orphan = Input::InsertCallForwarding {
        sub_nbr: s,
        sf_type: missing,
        start: 0,
        end: 3,
        numberx: 1,
    };
    assert_eq!(run(orphan), Outcome::Failed);
    assert_eq!(db.call_forwarding.index.get(cf_key(s, missing, 0)), None);

    // GET_NEW_DESTINATION: start_time <= start and end < end_time.
    let gnd = |start, end| {
        run(Input::GetNewDestination {
            s_id: s,
            sf_type: sf,
            start,
            end,
        })
    };
    assert_eq!(gnd(8, 11), Outcome::Committed, "8 <= 8 and 11 < 12");
    assert_eq!(gnd(16, 11), Outcome::Committed, "8 <= 16 and 11 < 12");
    assert_eq!(gnd(8, 12), Outcome::Failed, "12 < 12 is false");
    assert_eq!(gnd(0, 5), Outcome::Failed, "8 <= 0 is false");
    let (s2, sf2, _) = pick(&db, false);
    assert_eq!(
        run(Input::GetNewDestination {
            s_id: s2,
            sf_type: sf2,
            start: 16,
            end: 1
        }),
        Outcome::Failed,
        "inactive facility"
    );

    // DELETE_CALL_FORWARDING: once, then absent.
    let delete = Input::DeleteCallForwarding {
        sub_nbr: s,
        sf_type: sf,
        start: 8,
    };
    assert_eq!(run(delete), Outcome::Committed);
    assert_eq!(db.call_forwarding.index.get(cf_key(s, sf, 8)), None);
    assert_eq!(run(delete), Outcome::Failed);

    // UPDATE_LOCATION through sub_nbr.
    assert_eq!(run(Input::UpdateLocation { sub_nbr: s, vlr: 99 }), Outcome::Committed);
    let sub = db.subscriber.index.get(s).unwrap() as u32;
    assert_eq!(db.subscriber.get(sub, 4), 99);

    // UPDATE_SUBSCRIBER_DATA: both rows change...
    let before = db.subscriber.get(sub, 0);
    let flip = (before & 1) ^ 1;
    let usd = Input::UpdateSubscriberData {
        s_id: s,
        sf_type: sf,
        bit_1: flip,
        data_a: 0xAB,
    };
    assert_eq!(run(usd), Outcome::Committed);
    assert_eq!(db.subscriber.get(sub, 0), (before & !1) | flip);
    let f = db.special_facility.index.get(ai_key(s, sf)).unwrap() as u32;
    assert_eq!((db.special_facility.get(f, 0) >> 16) & 0xff, 0xAB);
    // ...and with a missing facility it fails and the subscriber update is rolled back.
    let usd = Input::UpdateSubscriberData {
        s_id: s,
        sf_type: missing,
        bit_1: flip ^ 1,
        data_a: 1,
    };
    assert_eq!(run(usd), Outcome::Failed);
    assert_eq!(db.subscriber.get(sub, 0), (before & !1) | flip, "rolled back");
    assert!(db.verify().is_ok());
}

#[test]
fn tpcb_moves_the_delta_through_account_teller_branch_and_history() {
    let db = Tpcb::new(2, 100, IndexKind::BTree);
    let lm = LockManager::builder().build();
    let mut seg = db.worker(0);
    let i = tpcb::Input {
        account: 150,
        teller: 3,
        branch: 0,
        delta: -42,
    };
    assert_eq!(once(&db, &lm, &mut seg, &i), Outcome::Committed);
    let i2 = tpcb::Input {
        account: 150,
        teller: 12,
        branch: 1,
        delta: 100,
    };
    assert_eq!(once(&db, &lm, &mut seg, &i2), Outcome::Committed);
    let bal = |t: &heirloom_bench::storage::Table, k| t.get(t.index.get(k).unwrap() as u32, 0) as i64;
    assert_eq!(bal(&db.account, 150), 58);
    assert_eq!(bal(&db.teller, 3), -42);
    assert_eq!(bal(&db.teller, 12), 100);
    assert_eq!((bal(&db.branch, 0), bal(&db.branch, 1)), (-42, 100));
    db.retire(seg);
    assert_eq!(db.history().rows, 2);
    assert_eq!(db.history().per_branch, vec![-42, 100]);
    db.verify().expect("consistent");
}

#[test]
fn tpcb_history_is_folded_beyond_a_segment_and_still_checked() {
    let db = Tpcb::new(2, 100, IndexKind::BTree);
    let lm = LockManager::builder().build();
    let mut seg = db.worker(0);
    let n = tpcb::SEGMENT_ROWS as u64 * 2 + 5;
    for k in 0..n {
        let i = tpcb::Input {
            account: k % 200,
            teller: k % 20,
            branch: (k % 20) / 10,
            delta: k as i64 - 100,
        };
        assert_eq!(once(&db, &lm, &mut seg, &i), Outcome::Committed);
    }
    db.retire(seg);
    let h = db.history();
    assert_eq!(h.rows, n);
    let want: i128 = (0..n as i128).map(|k| k - 100).sum();
    assert_eq!(h.per_branch.iter().sum::<i128>(), want);
    db.verify().expect("folded history still adds up");
    // A lost delta shows: change one branch balance behind the log's back.
    let slot = db.branch.index.get(1).unwrap() as u32;
    db.branch.put(slot, 0, db.branch.get(slot, 0) + 1);
    assert!(db.verify().is_err());
}

#[test]
fn tpcb_verify_catches_a_lost_update() {
    let db = Tpcb::new(1, 10, IndexKind::BTree);
    let lm = LockManager::builder().build();
    let mut seg = db.worker(0);
    once(
        &db,
        &lm,
        &mut seg,
        &tpcb::Input {
            account: 1,
            teller: 1,
            branch: 0,
            delta: 5,
        },
    );
    db.retire(seg);
    db.verify().expect("consistent");
    let slot = db.account.index.get(1).unwrap() as u32;
    db.account.put(slot, 0, 4); // as if one update were lost
    let err = db.verify().unwrap_err();
    assert!(err.contains("disagree"), "{err}");
}

#[test]
fn ycsb_reads_and_counts_writes() {
    let db = Ycsb::new(64, 0.0, 0.5, ycsb::Draw::default(), IndexKind::BTree).unwrap();
    let lm = LockManager::builder().build();
    let mut w = db.worker(0);
    let mut requests = [(0u64, false); ycsb::REQUESTS];
    for (i, r) in requests.iter_mut().enumerate() {
        *r = (i as u64 % 4, i % 2 == 0); // keys 0..4, every other a write
    }
    let input = ycsb::Input { requests };
    assert_eq!(once(&db, &lm, &mut w, &input), Outcome::Committed);
    db.retire(w);
    // Eight writes: keys 0 and 2, four each.
    let c = |k| db.table.get(db.table.index.get(k).unwrap() as u32, 0);
    assert_eq!((c(0), c(1), c(2), c(3)), (4, 0, 4, 0));
    assert_eq!(db.committed_writes(), 8);
    db.verify().expect("consistent");
    db.table.put(db.table.index.get(1).unwrap() as u32, 0, 1);
    assert!(db.verify().is_err(), "a stray increment must be caught");
}

/// Draws `n` inputs of `db` and counts those with a repeated key and those
/// whose keys are not in ascending order.
fn ycsb_draws(db: &Ycsb, n: usize) -> (usize, usize) {
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let w = db.worker(0);
    let (mut repeats, mut unordered) = (0, 0);
    for _ in 0..n {
        let i = db.input(0, &w, &mut rng);
        let mut keys: Vec<u64> = i.requests.iter().map(|r| r.0).collect();
        unordered += keys.windows(2).any(|p| p[0] > p[1]) as usize;
        keys.sort_unstable();
        keys.dedup();
        repeats += (keys.len() < ycsb::REQUESTS) as usize;
    }
    (repeats, unordered)
}

#[test]
fn ycsb_keys_are_distinct_by_default_and_ordered_on_request() {
    // Skewed enough that 16 independent draws repeat a key most of the time.
    let distinct = Ycsb::new(1000, 0.99, 0.5, ycsb::Draw::default(), IndexKind::BTree).unwrap();
    let (repeats, unordered) = ycsb_draws(&distinct, 2000);
    assert_eq!(repeats, 0, "a transaction drew a key twice");
    assert!(unordered > 1900, "keys come in draw order: {unordered}");
    let old = ycsb::Draw {
        repeat_keys: true,
        order_keys: false,
    };
    let (repeats, _) = ycsb_draws(&Ycsb::new(1000, 0.99, 0.5, old, IndexKind::BTree).unwrap(), 2000);
    assert!(
        repeats > 1000,
        "repeat-keys draws independently: {repeats} of 2000 repeat"
    );
    let ordered = ycsb::Draw {
        repeat_keys: false,
        order_keys: true,
    };
    assert_eq!(
        ycsb_draws(&Ycsb::new(1000, 0.99, 0.5, ordered, IndexKind::BTree).unwrap(), 2000),
        (0, 0)
    );
    // Too few rows for 16 distinct keys is an error, not an endless draw.
    assert!(Ycsb::new(15, 0.0, 0.5, ycsb::Draw::default(), IndexKind::BTree).is_err());
    assert!(Ycsb::new(15, 0.0, 0.5, old, IndexKind::BTree).is_ok());
}

#[test]
fn tm1_verify_catches_an_orphan_call_forwarding() {
    let db = Tm1::new(50, false, 3, IndexKind::BTree);
    db.verify().expect("consistent after loading");
    // A call forwarding whose facility is gone.
    let (s, _, missing) = pick(&db, true);
    db.call_forwarding.load(cf_key(s, missing, 0), &[5, 1]).unwrap();
    let err = db.verify().unwrap_err();
    assert!(err.contains("no SPECIAL_FACILITY"), "{err}");
}
