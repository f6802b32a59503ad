//! loom models of the client-server hand-off: a request published in a
//! slot is served exactly once, its reply reaches the client, and neither
//! side sleeps through the other's signal. Under loom parking is a mutex
//! and a condition variable (see `Lot` in `slot.rs`), so a lost wake-up
//! of the client or of the server is a deadlock, which loom reports.

use crate::sync::{Arc, AtomicBool, Ordering};
use crate::table::server::slot::{Doorbell, Slot};

/// The server of the models: serves `total` messages from `slots`
/// (replying with the request plus one), sleeping on the doorbell whenever
/// a scan finds nothing.
fn server(slots: &[Arc<Slot<u64>>], bell: &Doorbell, total: usize) {
    let mut served = 0;
    while served < total {
        let mut found = false;
        for s in slots {
            // SAFETY: this thread is the slots' only server.
            if unsafe { s.serve(|m| *m += 1) } {
                served += 1;
                found = true;
            }
        }
        if !found {
            bell.sleep(|| slots.iter().any(|s| s.pending()));
        }
    }
}

/// One client sends `rounds` messages one after another through its slot.
fn client(slot: &Slot<u64>, bell: &Doorbell, base: u64, rounds: u64) {
    for i in 0..rounds {
        // SAFETY: the slot's only client, one message at a time.
        let reply = unsafe {
            slot.post(base + 10 * i);
            bell.ring();
            slot.wait()
        };
        assert_eq!(reply, base + 10 * i + 1, "the reply to this request");
    }
}

#[test]
fn a_request_is_served_once_and_its_reply_reaches_the_client() {
    loom::model(|| {
        let slot = Arc::new(Slot::new(0u64));
        let bell = Arc::new(Doorbell::new());
        let t = {
            let (slot, bell) = (slot.clone(), bell.clone());
            loom::thread::spawn(move || server(&[slot], &bell, 1))
        };
        client(&slot, &bell, 100, 1);
        t.join().unwrap();
    });
}

/// The slot is used again after a reply: the second request must not be
/// mistaken for served, nor the first reply read as the second's.
#[test]
fn a_slot_carries_requests_one_after_another() {
    loom::model(|| {
        let slot = Arc::new(Slot::new(0u64));
        let bell = Arc::new(Doorbell::new());
        let t = {
            let (slot, bell) = (slot.clone(), bell.clone());
            loom::thread::spawn(move || server(&[slot], &bell, 2))
        };
        client(&slot, &bell, 100, 2);
        t.join().unwrap();
    });
}

/// Two clients ring one doorbell: the server sleeps only when neither
/// slot holds a request, and both are answered.
#[test]
fn two_clients_share_one_server() {
    loom::model(|| {
        let a = Arc::new(Slot::new(0u64));
        let b = Arc::new(Slot::new(0u64));
        let bell = Arc::new(Doorbell::new());
        let t = {
            let (a, b, bell) = (a.clone(), b.clone(), bell.clone());
            loom::thread::spawn(move || server(&[a, b], &bell, 2))
        };
        let u = {
            let (b, bell) = (b.clone(), bell.clone());
            loom::thread::spawn(move || client(&b, &bell, 200, 1))
        };
        client(&a, &bell, 100, 1);
        u.join().unwrap();
        t.join().unwrap();
    });
}

/// A server whose queues sit at a desk (a mutex) that late clients may
/// take to serve the slots themselves (`Partition::help`): it scans only
/// while it holds the desk, and sleeps on the doorbell until rung or
/// stopped.
fn desk_server(slots: &[Arc<Slot<u64>>], bell: &Doorbell, desk: &loom::sync::Mutex<()>, stop: &AtomicBool) {
    loop {
        let mut found = false;
        match desk.try_lock() {
            Ok(_held) => {
                for s in slots {
                    // SAFETY: the desk makes its holder the slots' only server.
                    found |= unsafe { s.serve(|m| *m += 1) };
                }
            }
            // A client is serving: look again (as the server thread does).
            Err(_) => {
                loom::thread::yield_now();
                continue;
            }
        }
        if found {
            continue;
        }
        if stop.load(Ordering::Acquire) {
            return;
        }
        bell.sleep(|| slots.iter().any(|s| s.pending()) || stop.load(Ordering::Acquire));
    }
}

/// A client that, when its server sleeps or its reply is late, serves
/// every slot itself if it gets the desk (`Server::call`).
fn helping_client(mine: &Slot<u64>, all: &[Arc<Slot<u64>>], bell: &Doorbell, desk: &loom::sync::Mutex<()>, base: u64) {
    // SAFETY: the slot's only client, one message at a time; the help
    // serves slots only while it holds the desk.
    let reply = unsafe {
        let serve_all = || match desk.try_lock() {
            Ok(_held) => {
                for s in all {
                    s.serve(|m| *m += 1);
                }
                true
            }
            Err(_) => false,
        };
        mine.post(base);
        // A sleeping server is not woken when the client can serve.
        bell.ring_or(serve_all);
        mine.wait_helping(std::time::Duration::ZERO, || {
            serve_all();
        })
    };
    assert_eq!(reply, base + 1, "served exactly once, and the reply is this request's");
}

/// Two clients that may serve each other and themselves beside the
/// server: every request is served exactly once (a second serve would add
/// two), every reply reaches its client, and nobody sleeps for ever (the
/// server is stopped as `Server::drop` stops it).
#[test]
fn late_clients_serving_at_the_desk_serve_each_request_once() {
    loom::model(|| {
        let a = Arc::new(Slot::new(0u64));
        let b = Arc::new(Slot::new(0u64));
        let all = vec![a.clone(), b.clone()];
        let bell = Arc::new(Doorbell::new());
        let desk = Arc::new(loom::sync::Mutex::new(()));
        let stop = Arc::new(AtomicBool::new(false));
        let t = {
            let (all, bell, desk, stop) = (all.clone(), bell.clone(), desk.clone(), stop.clone());
            loom::thread::spawn(move || desk_server(&all, &bell, &desk, &stop))
        };
        let u = {
            let (b, all, bell, desk) = (b.clone(), all.clone(), bell.clone(), desk.clone());
            loom::thread::spawn(move || helping_client(&b, &all, &bell, &desk, 200))
        };
        helping_client(&a, &all, &bell, &desk, 100);
        u.join().unwrap();
        stop.store(true, Ordering::Release);
        bell.wake();
        t.join().unwrap();
    });
}
