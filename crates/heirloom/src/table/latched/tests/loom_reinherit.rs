//! loom model of latch-free re-inheritance against a waiter (the `waiters`
//! flag Dekker of `Head::publish_waiters` and `Latched::reinherit`, step for step):
//! a waiter is never left waiting behind an INHERITED request that nobody
//! will invalidate.

use crate::inherit::invalidate;
use crate::request::{GRANTED, INHERITED, INVALID, ReqPtr, Request};
use crate::sync::{Arc, AtomicBool, Ordering, fence};

fn node(r: &ReqPtr) -> &Request {
    // SAFETY: the model's own node, freed only at its end.
    unsafe { r.get() }
}

/// A conflicting X request on the lock whose owner holds `r`, under the
/// lock's latch (which guards "X is waiting"): `Queue::acquire`, then, if it
/// has to wait, `Head::publish_waiters` with its fence and re-check.
fn request_x(latch: &loom::sync::Mutex<bool>, waiters: &AtomicBool, r: ReqPtr) {
    let mut x_waiting = latch.lock().unwrap();
    // Queue::acquire: an INHERITED request in the way is invalidated.
    if node(&r).status.load(Ordering::Acquire) == INHERITED && invalidate(node(&r)) {
        return;
    }
    // Blocked by a GRANTED holder: link as waiting, then publish the waiters.
    *x_waiting = true;
    waiters.store(true, Ordering::Relaxed);
    fence(Ordering::SeqCst);
    if node(&r).status.load(Ordering::Acquire) == INHERITED && invalidate(node(&r)) {
        *x_waiting = false; // granted by the re-check
    }
}

#[test]
fn a_waiter_is_never_stranded_behind_a_reinherited_request() {
    loom::model(|| {
        // The owner's reclaimed IS request; a conflicting X requester.
        let r = ReqPtr::alloc(0);
        node(&r).status.store(GRANTED, Ordering::Release);
        let latch = Arc::new(loom::sync::Mutex::new(false)); // guards "X is waiting"
        let waiters = Arc::new(AtomicBool::new(false));

        let requester = {
            let (latch, waiters) = (latch.clone(), waiters.clone());
            loom::thread::spawn(move || request_x(&latch, &waiters, r))
        };

        // Latched::reinherit by the owner at commit.
        if !waiters.load(Ordering::Relaxed) {
            node(&r).status.store(INHERITED, Ordering::Release);
            fence(Ordering::SeqCst);
            if waiters.load(Ordering::Relaxed) {
                let mut x_waiting = latch.lock().unwrap();
                // Head::publish_waiters under the latch: let the waiter in.
                if *x_waiting && invalidate(node(&r)) {
                    *x_waiting = false;
                }
            }
        } else {
            // The owner releases under the latch instead; the waiter is granted.
            let mut x_waiting = latch.lock().unwrap();
            *x_waiting = false;
            node(&r).status.store(INVALID, Ordering::Relaxed);
        }
        requester.join().unwrap();

        let stranded = *latch.lock().unwrap() && node(&r).status.load(Ordering::Acquire) == INHERITED;
        assert!(!stranded, "X waits behind an INHERITED request nobody will invalidate");
        // SAFETY: allocated above; both threads are done with it.
        unsafe { r.free() };
    });
}

/// As above with two conflicting requesters, where the second finds
/// `waiters` already set under the latch and skips the barrier (the
/// first one's barrier covers it: the flag changes only under the latch,
/// so it has stayed set since).
#[test]
fn a_second_waiter_needs_no_barrier_of_its_own() {
    loom::model(|| {
        let r = ReqPtr::alloc(0);
        node(&r).status.store(GRANTED, Ordering::Release);
        // Under the latch: how many X requests wait.
        let latch = Arc::new(loom::sync::Mutex::new(0u32));
        let waiters = Arc::new(AtomicBool::new(false));

        let requesters: Vec<_> = (0..2)
            .map(|_| {
                let (latch, waiters) = (latch.clone(), waiters.clone());
                loom::thread::spawn(move || {
                    let mut x_waiting = latch.lock().unwrap();
                    if node(&r).status.load(Ordering::Acquire) == INHERITED && invalidate(node(&r)) {
                        return;
                    }
                    if node(&r).status.load(Ordering::Acquire) == INVALID {
                        return; // the other requester invalidated it: granted
                    }
                    *x_waiting += 1;
                    // Head::publish_waiters_slow.
                    if !waiters.load(Ordering::Relaxed) {
                        waiters.store(true, Ordering::Relaxed);
                        fence(Ordering::SeqCst);
                    }
                    if node(&r).status.load(Ordering::Acquire) == INHERITED && invalidate(node(&r)) {
                        *x_waiting = 0; // every waiter is granted
                    }
                })
            })
            .collect();

        if !waiters.load(Ordering::Relaxed) {
            node(&r).status.store(INHERITED, Ordering::Release);
            fence(Ordering::SeqCst);
            if waiters.load(Ordering::Relaxed) {
                let mut x_waiting = latch.lock().unwrap();
                if *x_waiting > 0 && invalidate(node(&r)) {
                    *x_waiting = 0;
                }
            }
        } else {
            let mut x_waiting = latch.lock().unwrap();
            *x_waiting = 0;
            node(&r).status.store(INVALID, Ordering::Relaxed);
        }
        for h in requesters {
            h.join().unwrap();
        }

        let stranded = *latch.lock().unwrap() > 0 && node(&r).status.load(Ordering::Acquire) == INHERITED;
        assert!(!stranded, "X waits behind an INHERITED request nobody will invalidate");
        // SAFETY: allocated above; every thread is done with it.
        unsafe { r.free() };
    });
}

/// The owner passes two locks on (its database and table locks) and pays
/// one fence for both, after the second (`Latched::reinherit` for each,
/// then `LockTable::recheck_passed`); a conflicting requester on each lock.
/// Neither is stranded, though the first lock's INHERITED and its look at
/// `waiters` are far apart (another lock's pass in between).
#[test]
fn one_fence_covers_every_lock_passed_on() {
    loom::model(|| {
        let reqs = [ReqPtr::alloc(0), ReqPtr::alloc(1)];
        for r in &reqs {
            node(r).status.store(GRANTED, Ordering::Release);
        }
        // Per lock: its latch (guarding "X is waiting") and `waiters`.
        let latches: [_; 2] = std::array::from_fn(|_| Arc::new(loom::sync::Mutex::new(false)));
        let waiters: [_; 2] = std::array::from_fn(|_| Arc::new(AtomicBool::new(false)));

        let requesters: Vec<_> = (0..2)
            .map(|i| {
                let (latch, waiters, r) = (latches[i].clone(), waiters[i].clone(), reqs[i]);
                loom::thread::spawn(move || request_x(&latch, &waiters, r))
            })
            .collect();

        // release_all: leaf to root, each lock passed on without a fence...
        let mut passed = [false; 2];
        for i in (0..2).rev() {
            if !waiters[i].load(Ordering::Relaxed) {
                node(&reqs[i]).status.store(INHERITED, Ordering::Release);
                passed[i] = true;
            } else {
                let mut x_waiting = latches[i].lock().unwrap();
                *x_waiting = false;
                node(&reqs[i]).status.store(INVALID, Ordering::Relaxed);
            }
        }
        // ...then one fence and a look at each (LockTable::recheck_passed).
        fence(Ordering::SeqCst);
        for i in (0..2).filter(|&i| passed[i]) {
            if waiters[i].load(Ordering::Relaxed) {
                let mut x_waiting = latches[i].lock().unwrap();
                if *x_waiting && invalidate(node(&reqs[i])) {
                    *x_waiting = false;
                }
            }
        }
        for h in requesters {
            h.join().unwrap();
        }

        for i in 0..2 {
            let stranded = *latches[i].lock().unwrap() && node(&reqs[i]).status.load(Ordering::Acquire) == INHERITED;
            assert!(
                !stranded,
                "X waits on lock {i} behind an INHERITED request nobody will invalidate"
            );
        }
        for r in reqs {
            // SAFETY: allocated above; every thread is done with it.
            unsafe { r.free() };
        }
    });
}
