//! The elided tables (`GlobalHtm`, `LatchedHtm`): their counters, the
//! fallback forced by switching elision off at run time, and, where the
//! CPU has RTM, sections that commit as hardware transactions (a section
//! that always aborted, on something no transaction can do, would pass
//! every other test through its fallback). Every other test runs them
//! too, through `TableKind::ALL`. Elision is a process-wide switch, so
//! this binary holds these tests alone, in one test function run in order.

use heirloom::{LockId, LockManager, Mode, TableKind, rtm};

const T: heirloom::TableId = heirloom::TableId::new(0, 1);

fn some_work(lm: &LockManager) {
    let mut a = lm.agent();
    for i in 0..50 {
        let mut t = a.begin();
        t.lock(LockId::row(T, i), Mode::X).unwrap();
        // Not S: a row S lock may be held fast, in no section.
        t.lock(LockId::row(T, i + 1000), Mode::U).unwrap();
        t.commit().unwrap();
    }
}

#[test]
fn elided_tables_count_their_sections_and_fall_back_when_told() {
    for kind in TableKind::ALL {
        let lm = LockManager::builder().table(kind).build();
        some_work(&lm);
        match lm.elision() {
            None => assert!(!kind.is_elided(), "{kind}: no counters"),
            Some(s) => {
                assert!(kind.is_elided(), "{kind}: counters on a table that elides nothing");
                assert_eq!(s.rtm, rtm::enabled(), "{kind}: {s:?}");
                assert!(s.sections() >= 100, "{kind}: every row lock is a section: {s:?}");
                if !rtm::supported() {
                    assert_eq!((s.commits, s.aborts()), (0, 0), "{kind}: no RTM, no transaction: {s:?}");
                    assert_eq!(s.fallbacks, s.sections(), "{kind}: {s:?}");
                } else {
                    // One thread, nobody to conflict with: apart from the
                    // first touches of new memory, sections commit.
                    assert!(s.commits > 0, "{kind}: no section committed as a transaction: {s:?}");
                }
            }
        }
        assert!(lm.snapshot().locks.is_empty(), "{kind}: a lock left behind");
    }

    // Switched off: every section takes the latch, the work is the same.
    rtm::set_enabled(false);
    for kind in [TableKind::GlobalHtm, TableKind::LatchedHtm] {
        let lm = LockManager::builder().table(kind).build();
        some_work(&lm);
        let s = lm.elision().unwrap();
        assert!(
            !s.rtm && s.commits == 0 && s.aborts() == 0 && s.fallbacks >= 100,
            "{kind}: {s:?}"
        );
        assert_eq!(lm.stats().committed, 50, "{kind}");
    }
    rtm::set_enabled(true);
    if !rtm::supported() {
        println!("{}: the transactional path is not tested on this CPU", rtm::describe());
    }
}
