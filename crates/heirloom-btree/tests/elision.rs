//! The elided protocols' retry and fallback paths, forced: elision switched
//! off at run time (every operation takes the lock), and aborts injected
//! (`BTree::inject_aborts`) under both retry policies, and operations
//! that commit as transactions where the CPU has RTM. Elision is a
//! process-wide switch, so this binary holds these tests alone, in one
//! test function run in order.

use heirloom_btree::{BTree, ElidedRw, ElidedSpin, Protocol, Retry};

fn ops<P: Protocol>(t: &BTree<P>, n: u64) {
    for k in 0..n {
        assert!(t.insert(k, k + 1));
        assert_eq!(t.get(k), Some(k + 1));
    }
}

fn forced<P: Protocol>() {
    // Switched off: every operation runs under the lock and says so.
    heirloom_rtm::set_enabled(false);
    let t = BTree::<P>::with_retry(Retry::Naive { attempts: 3 });
    ops(&t, 100);
    let s = t.stats().elision;
    assert!(!s.rtm, "{s:?}");
    assert_eq!((s.commits, s.aborts(), s.fallbacks), (0, 0, 200), "{s:?}");
    heirloom_rtm::set_enabled(true);

    if !heirloom_rtm::supported() {
        // Without RTM the switch changes nothing: still every operation a
        // fallback, and no RTM instruction ran (it would have faulted).
        let t = BTree::<P>::new();
        t.inject_aborts(5);
        ops(&t, 100);
        let s = t.stats().elision;
        assert_eq!((s.rtm, s.commits, s.aborts(), s.fallbacks), (false, 0, 0, 200), "{s:?}");
        println!(
            "{}: the transactional path is not tested on this CPU",
            heirloom_rtm::describe()
        );
        return;
    }

    // Naive, three attempts: five injected aborts make the first operation
    // fall back after three and the second commit after two.
    let t = BTree::<P>::with_retry(Retry::Naive { attempts: 3 });
    ops(&t, 1); // warm the pages, so page faults do not abort below
    let before = t.stats().elision;
    t.inject_aborts(5);
    assert!(t.insert(10, 11));
    assert!(t.insert(11, 12));
    let s = t.stats().elision;
    assert_eq!(s.injected - before.injected, 5, "{s:?}");
    assert!(
        s.fallbacks > before.fallbacks,
        "three injected aborts exhaust naive:3: {s:?}"
    );

    // Fixed, eight conflict retries: five injected aborts are retried and
    // the operation commits without the lock (unless a real abort came on
    // top, which the CPU may raise at any time: then at most one fallback).
    let t = BTree::<P>::with_retry(Retry::Fixed {
        conflict: 8,
        capacity: 2,
    });
    ops(&t, 1);
    let before = t.stats().elision;
    t.inject_aborts(5);
    assert!(t.insert(10, 11));
    let s = t.stats().elision;
    assert_eq!(s.injected - before.injected, 5, "{s:?}");
    assert!(
        s.commits + s.fallbacks == before.commits + before.fallbacks + 1,
        "{s:?}"
    );
    assert_eq!(t.get(10), Some(11));

    // Nothing injected, one thread: sections commit as transactions (one
    // that always aborted would pass everything above through its lock).
    let before = t.stats().elision;
    for k in 100..200 {
        assert!(t.insert(k, k));
        assert_eq!(t.get(k), Some(k));
    }
    let s = t.stats().elision;
    assert!(
        s.commits > before.commits,
        "no operation committed as a transaction: {s:?}"
    );
}

#[test]
fn retry_and_fallback_paths_forced() {
    forced::<ElidedSpin>();
    forced::<ElidedRw>();
}
