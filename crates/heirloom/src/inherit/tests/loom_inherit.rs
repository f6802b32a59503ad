//! loom model of the reclaim-versus-invalidate race: exactly one of the two
//! compare-and-swaps wins, and a conflicting (X) requester is never granted
//! while the reclaimer believes it holds its shared mode.

use crate::error::TxnId;
use crate::inherit::{invalidate, reclaim};
use crate::request::{GRANTED, INHERITED, INVALID, ReqPtr, Request};
use crate::sync::{Arc, AtomicBool, Ordering};

fn node(r: &ReqPtr) -> &Request {
    // SAFETY: the model's own node, freed only at its end.
    unsafe { r.get() }
}

#[test]
fn exactly_one_of_reclaim_and_invalidate_wins() {
    loom::model(|| {
        let r = ReqPtr::alloc(0);
        node(&r).status.store(INHERITED, Ordering::Release);
        // The latch of the lock, as far as the requester is concerned.
        let latch = Arc::new(loom::sync::Mutex::new(()));
        let reclaimer_holds = Arc::new(AtomicBool::new(false));
        let requester = {
            let (latch, holds) = (latch.clone(), reclaimer_holds.clone());
            loom::thread::spawn(move || {
                let _g = latch.lock().unwrap();
                if invalidate(node(&r)) {
                    // Granted X as if the inherited IS were released: the
                    // reclaimer must not believe it holds the lock.
                    assert!(!holds.load(Ordering::SeqCst), "X granted while a reclaimer holds IS");
                    true
                } else {
                    // The reclaim won: the request is a real holder, X waits.
                    assert_eq!(node(&r).status.load(Ordering::Acquire), GRANTED);
                    false
                }
            })
        };
        let reclaimed = reclaim(node(&r), TxnId::new(0, 2), 7);
        if reclaimed {
            reclaimer_holds.store(true, Ordering::SeqCst);
        }
        let invalidated = requester.join().unwrap();
        assert!(reclaimed != invalidated, "exactly one wins");
        let end = node(&r).status.load(Ordering::Acquire);
        assert_eq!(end, if reclaimed { GRANTED } else { INVALID });
        if reclaimed {
            assert_eq!(node(&r).txn.load(Ordering::Relaxed), TxnId::new(0, 2).as_u64());
        }
        // SAFETY: allocated above; both threads are done with it.
        unsafe { r.free() };
    });
}

/// A reclaim (INHERITED -> GRANTED, new owner written before the CAS, no
/// latch) racing with a latch holder's `Queue::blockers` read: whoever sees
/// the request GRANTED must report the reclaiming transaction, not the one
/// that passed the lock on, or a deadlock search would follow a finished
/// transaction and miss a real edge. (The model races the two primitives
/// directly: it starts from an inherited request with a conflicting waiter
/// behind it, a state the latched protocol resolves by invalidating; what
/// it checks is the ordering contract between `reclaim` and `blockers`,
/// which needs `blockers` to load the status with Acquire.)
#[test]
fn a_blockers_read_sees_the_reclaiming_owner() {
    use crate::mode::Mode;
    use crate::queue::{Outcome, Queue};

    const OLD: u64 = 1;
    let new = TxnId::new(0, 2);
    loom::model(move || {
        let r = ReqPtr::alloc(0);
        let w = ReqPtr::alloc(1);
        node(&r).txn.store(OLD, Ordering::Relaxed);
        node(&w).txn.store(TxnId::new(1, 1).as_u64(), Ordering::Relaxed);
        let mut q = Queue::new();
        // SAFETY: the model's own nodes, linked nowhere yet.
        unsafe {
            assert!(matches!(q.acquire(r, Mode::IS, true, false, false), Outcome::Granted));
            assert!(matches!(q.acquire(w, Mode::X, true, false, false), Outcome::Waiting));
        }
        // The owner's commit passed it on.
        node(&r).status.store(INHERITED, Ordering::Release);
        let q = Arc::new(loom::sync::Mutex::new(q));
        let searcher = {
            let q = q.clone();
            loom::thread::spawn(move || {
                let q = q.lock().unwrap();
                let mut out = Vec::new();
                assert!(q.blockers(w, &mut out), "w waits");
                for b in out {
                    assert_eq!(b.txn, new, "a reclaimed request reported with its old owner");
                }
            })
        };
        assert!(reclaim(node(&r), new, 7));
        searcher.join().unwrap();
        // SAFETY: allocated above; both threads are done with them.
        unsafe {
            r.free();
            w.free();
        }
    });
}
