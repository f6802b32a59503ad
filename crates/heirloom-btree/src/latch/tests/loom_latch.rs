//! loom models of the node latches.
//!
//! Version latch: a writer changes a two-word "node" from (n, n) to
//! (n+1, n+1) under the latch while an optimistic reader reads both words;
//! whenever the reader's validation succeeds it must have seen a consistent
//! pair, in every interleaving loom explores. A second model checks that an
//! optimistic read-then-upgrade never loses a concurrent write.
//!
//! What loom does not show: the two fences of the protocol (Release after
//! locking, Acquire before validating) are needed on weakly ordered
//! hardware, but removing them does not make these models fail, because
//! loom does not produce the stale version load after a fresh data load
//! that the fences rule out (checked: the models pass without them). Their
//! argument is the seqlock one (Boehm, "Can seqlocks get along with
//! programming language memory models?", MSPC 2012), written out at each
//! fence in `latch.rs`.
//!
//! Spin latch and version latch as exclusive latches: two writers
//! incrementing a counter with a load and a store never lose an update, and
//! the latch ends free (the version latch with no parked bit left behind;
//! the spin latch's release asks parking_lot whether anybody is still
//! parked, which loom's stand-in answers "yes", so a stale bit may stay). Under loom a waiter
//! parks at once (`SpinWait::spun_out`), so these models run the park
//! protocol: the parked bit set by CAS only while the latch is held,
//! and the release that clears it before waking.
//!
//! A pessimistic read hold of the version latch leaves the version as it
//! was: an optimistic reader that started before it validates after it.

use crate::latch::{NodeLatch, SpinLatch, VersionLatch};
use crate::sync::{AtomicU64, Ordering};
use loom::sync::Arc;

struct Node {
    latch: VersionLatch,
    a: AtomicU64,
    b: AtomicU64,
}

fn write(node: &Node) {
    node.latch.lock_exclusive();
    let a = node.a.load(Ordering::Relaxed);
    node.a.store(a + 1, Ordering::Relaxed);
    let b = node.b.load(Ordering::Relaxed);
    node.b.store(b + 1, Ordering::Relaxed);
    // SAFETY: held by lock_exclusive above.
    unsafe { node.latch.unlock_exclusive() };
}

/// A fresh node and a thread that runs one `write` on it.
fn node_with_writer() -> (Arc<Node>, loom::thread::JoinHandle<()>) {
    let node = Arc::new(Node {
        latch: VersionLatch::default(),
        a: AtomicU64::new(0),
        b: AtomicU64::new(0),
    });
    let writer = {
        let node = node.clone();
        loom::thread::spawn(move || write(&node))
    };
    (node, writer)
}

#[test]
fn loom_version_latch_readers_never_validate_a_torn_node() {
    loom::model(|| {
        let (node, writer) = node_with_writer();
        // One optimistic read, retried once if it fails validation.
        let mut validated = None;
        for _ in 0..2 {
            let v = node.latch.read_begin();
            let a = node.a.load(Ordering::Relaxed);
            let b = node.b.load(Ordering::Relaxed);
            if node.latch.validate(v) {
                validated = Some((a, b));
                break;
            }
        }
        if let Some((a, b)) = validated {
            assert_eq!(a, b, "validated a torn node");
        }
        writer.join().unwrap();
        assert_eq!(node.a.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn loom_version_latch_upgrade_fails_after_a_write() {
    loom::model(|| {
        let (node, writer) = node_with_writer();
        // Optimistic read-then-write: read a, upgrade at the version read,
        // write a+1 only if the upgrade succeeded. Lost updates would show
        // as a final value of 1 after both wrote.
        let mut wrote = false;
        while !wrote {
            let v = node.latch.read_begin();
            let a = node.a.load(Ordering::Relaxed);
            if node.latch.try_upgrade(v) {
                node.a.store(a + 1, Ordering::Relaxed);
                let b = node.b.load(Ordering::Relaxed);
                node.b.store(b + 1, Ordering::Relaxed);
                // SAFETY: held by the successful try_upgrade.
                unsafe { node.latch.unlock_exclusive() };
                wrote = true;
            } else {
                loom::thread::yield_now();
            }
        }
        writer.join().unwrap();
        assert_eq!(node.a.load(Ordering::Relaxed), 2, "an optimistic write was lost");
        assert_eq!(node.b.load(Ordering::Relaxed), 2);
    });
}

fn counter_model<L: NodeLatch>(ends_free: fn(&L)) {
    loom::model(move || {
        let latch = Arc::new(L::default());
        let counter = Arc::new(AtomicU64::new(0));
        let t = {
            let (latch, counter) = (latch.clone(), counter.clone());
            loom::thread::spawn(move || {
                latch.lock_exclusive();
                let c = counter.load(Ordering::Relaxed);
                counter.store(c + 1, Ordering::Relaxed);
                // SAFETY: held by lock_exclusive above.
                unsafe { latch.unlock_exclusive() };
            })
        };
        latch.lock_shared();
        let c = counter.load(Ordering::Relaxed);
        counter.store(c + 1, Ordering::Relaxed);
        // SAFETY: held by lock_shared above (exclusive for these latches).
        unsafe { latch.unlock_shared() };
        t.join().unwrap();
        assert_eq!(counter.load(Ordering::Relaxed), 2, "lost update under the latch");
        ends_free(&latch);
    });
}

#[test]
fn loom_spin_latch_excludes() {
    counter_model::<SpinLatch>(|l| {
        // Both holds ended: the latch can be taken again.
        l.lock_exclusive();
        assert!(l.is_locked());
        // SAFETY: held by lock_exclusive just above.
        unsafe { l.unlock_exclusive() };
    });
}

#[test]
fn loom_version_latch_excludes() {
    counter_model::<VersionLatch>(|l| {
        // One write hold (a version step) and one read hold (none); free.
        assert_eq!(l.read_begin(), VersionLatch::STEP, "wrong version after the holds");
    });
}

#[test]
fn loom_version_latch_read_hold_keeps_the_version() {
    loom::model(|| {
        let node = Arc::new(Node {
            latch: VersionLatch::default(),
            a: AtomicU64::new(0),
            b: AtomicU64::new(0),
        });
        let v = node.latch.read_begin();
        let reader = {
            let node = node.clone();
            loom::thread::spawn(move || {
                node.latch.lock_shared();
                let _ = node.a.load(Ordering::Relaxed);
                // SAFETY: held by lock_shared above.
                unsafe { node.latch.unlock_shared() };
            })
        };
        // An optimistic read begun before the hold, validated at any point
        // of it (fails only while the hold lasts) ...
        let _ = node.b.load(Ordering::Relaxed);
        let _ = node.latch.validate(v);
        reader.join().unwrap();
        // ... and once the hold is over, the version is the one read.
        assert!(node.latch.validate(v), "a read hold changed the version");
        assert_eq!(node.latch.read_begin(), v);
    });
}
