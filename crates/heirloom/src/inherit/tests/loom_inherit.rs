//! loom model of the reclaim-versus-invalidate race: exactly one of the two
//! compare-and-swaps wins, and a conflicting (X) requester is never granted
//! while the reclaimer believes it holds its shared mode.

use crate::error::TxnId;
use crate::inherit::{invalidate, reclaim};
use crate::request::{GRANTED, INHERITED, INVALID, ReqPtr};
use crate::sync::{Arc, AtomicBool, Ordering};

#[test]
fn exactly_one_of_reclaim_and_invalidate_wins() {
    loom::model(|| {
        let r = ReqPtr::alloc(0);
        r.get().status.store(INHERITED, Ordering::Release);
        // The latch of the lock, as far as the requester is concerned.
        let latch = Arc::new(loom::sync::Mutex::new(()));
        let reclaimer_holds = Arc::new(AtomicBool::new(false));
        let requester = {
            let (latch, holds) = (latch.clone(), reclaimer_holds.clone());
            loom::thread::spawn(move || {
                let _g = latch.lock().unwrap();
                if invalidate(r) {
                    // Granted X as if the inherited IS were released: the
                    // reclaimer must not believe it holds the lock.
                    assert!(!holds.load(Ordering::SeqCst), "X granted while a reclaimer holds IS");
                    true
                } else {
                    // The reclaim won: the request is a real holder, X waits.
                    assert_eq!(r.get().status.load(Ordering::Acquire), GRANTED);
                    false
                }
            })
        };
        let reclaimed = reclaim(r, TxnId::new(0, 2), 7);
        if reclaimed {
            reclaimer_holds.store(true, Ordering::SeqCst);
        }
        let invalidated = requester.join().unwrap();
        assert!(reclaimed != invalidated, "exactly one wins");
        let end = r.get().status.load(Ordering::Acquire);
        assert_eq!(end, if reclaimed { GRANTED } else { INVALID });
        if reclaimed {
            assert_eq!(r.get().txn.load(Ordering::Relaxed), TxnId::new(0, 2).as_u64());
        }
        // SAFETY: allocated above; both threads are done with it.
        unsafe { r.free() };
    });
}
