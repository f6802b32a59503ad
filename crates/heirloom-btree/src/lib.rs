//! heirloom-btree: an in-memory B+tree whose latching protocol is a type
//! parameter.
//!
//! ```
//! use heirloom_btree::{BTree, Optimistic};
//!
//! let tree = BTree::<Optimistic>::new();
//! assert!(tree.insert(7, 700));
//! assert!(!tree.insert(7, 701), "primary-key semantics: no duplicates");
//! assert_eq!(tree.get(7), Some(700));
//! assert_eq!(tree.update(7, 701), Some(700));
//! tree.insert(3, 300);
//! assert_eq!(tree.range(..), vec![(3, 300), (7, 701)]);
//! assert_eq!(tree.first(4..), Some((7, 701)));
//! assert_eq!(tree.remove(3), Some(300));
//! ```
//!
//! The protocols (the TSX lock-elision paper's comparison, with optimistic
//! lock coupling as the software form of elision):
//!
//! | protocol       | readers                                    | writers |
//! |----------------|--------------------------------------------|---------|
//! | [`GlobalRw`]   | one tree-wide reader/writer lock, shared    | the same lock, exclusive |
//! | [`Coupling`]   | shared node latches, coupled top-down       | shared coupling, exclusive leaf; exclusive coupling from the root to split |
//! | [`Spin`]       | as `Coupling`, every latch a TTAS spin latch (exclusive) | as `Coupling` |
//! | [`Optimistic`] | version checks only: no shared writes       | version checks, then CAS on the nodes changed |
//! | [`ElidedSpin`] | a hardware transaction that reads the tree-wide spin lock; the lock after aborts | the same |
//! | [`ElidedRw`]   | a hardware transaction that reads the tree-wide RW lock; the lock shared after aborts | the same; the lock exclusive |
//!
//! The maintainers' notes and measured figures are in the crate README.

#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

pub mod hash;
pub mod latch;
pub mod machine;
// The workspace's one loom shim: atomics, fences, parking and the spin-wait.
use heirloom_latch::sync;

#[cfg(not(heirloom_loom))]
mod node;
#[cfg(not(heirloom_loom))]
mod optimistic;
#[cfg(not(heirloom_loom))]
pub mod transform;
#[cfg(not(heirloom_loom))]
mod tree;

#[cfg(not(heirloom_loom))]
pub use optimistic::OPTIMISTIC_ATTEMPTS;
#[cfg(not(heirloom_loom))]
pub use tree::{BTree, Frozen, Shape, TreeStats};

pub use hash::HashIndex;
pub use heirloom_rtm::{self as rtm, ElisionStats, Retry};

#[cfg(not(heirloom_loom))]
pub use protocols::*;

#[cfg(not(heirloom_loom))]
mod protocols {
    use crate::BTree;
    use crate::latch::{NoLatch, NodeLatch, RwLatch, SpinLatch, VersionLatch};
    use parking_lot::lock_api::RawRwLock as _;

    mod sealed {
        pub trait Sealed {}
    }

    /// A latching protocol: the latch in every node and the traversals that
    /// use it. Implemented by [`GlobalRw`], [`Coupling`], [`Spin`],
    /// [`Optimistic`], [`ElidedSpin`] and [`ElidedRw`] only.
    pub trait Protocol: sealed::Sealed + Sized + Send + Sync + 'static {
        /// The latch every node carries.
        type Latch: NodeLatch;
        /// Short name for reports.
        const NAME: &'static str;
        #[doc(hidden)]
        fn get(t: &BTree<Self>, key: u64) -> Option<u64>;
        #[doc(hidden)]
        fn insert(t: &BTree<Self>, key: u64, value: u64) -> bool;
        #[doc(hidden)]
        fn update(t: &BTree<Self>, key: u64, value: u64) -> Option<u64>;
        #[doc(hidden)]
        fn remove(t: &BTree<Self>, key: u64) -> Option<u64>;
        #[doc(hidden)]
        fn scan(t: &BTree<Self>, lo: u64, hi: u64, f: &mut dyn FnMut(u64, u64) -> bool);
    }

    /// One reader/writer lock for the whole tree (the TSX paper's baseline):
    /// every reader writes the lock word twice.
    #[derive(Debug)]
    pub enum GlobalRw {}

    /// Per-node reader/writer latches with lock coupling (crabbing).
    #[derive(Debug)]
    pub enum Coupling {}

    /// Per-node test-and-test-and-set spin latches, exclusive for readers
    /// and writers, with lock coupling.
    #[derive(Debug)]
    pub enum Spin {}

    /// Optimistic lock coupling: readers validate versions and write no
    /// shared memory; lemming-safe retries, then pessimistic latching after
    /// [`OPTIMISTIC_ATTEMPTS`](crate::OPTIMISTIC_ATTEMPTS).
    #[derive(Debug)]
    pub enum Optimistic {}

    /// One tree-wide test-and-test-and-set spin lock, elided by Intel RTM
    /// (the TSX paper's "spin lock w/ Intel TSX"): an operation runs as a
    /// hardware transaction that reads the lock word, and takes the lock
    /// after aborts as the tree's [`Retry`](crate::Retry) policy says
    /// ([`BTree::with_retry`]). Where the CPU has no RTM every operation
    /// takes the lock.
    #[derive(Debug)]
    pub enum ElidedSpin {}

    /// The tree-wide reader/writer lock of [`GlobalRw`], elided by Intel
    /// RTM: as [`ElidedSpin`], and a fallback reader takes the lock shared,
    /// so elided readers run beside it.
    #[derive(Debug)]
    pub enum ElidedRw {}

    impl sealed::Sealed for ElidedSpin {}
    impl sealed::Sealed for ElidedRw {}
    impl sealed::Sealed for GlobalRw {}
    impl sealed::Sealed for Coupling {}
    impl sealed::Sealed for Spin {}
    impl sealed::Sealed for Optimistic {}

    impl Protocol for GlobalRw {
        type Latch = NoLatch;
        const NAME: &'static str = "global-rw";
        fn get(t: &BTree<Self>, key: u64) -> Option<u64> {
            t.global.lock_shared();
            let r = t.get_latched(key);
            // SAFETY: taken just above.
            unsafe { t.global.unlock_shared(crate::latch::STATELESS) };
            r
        }
        fn insert(t: &BTree<Self>, key: u64, value: u64) -> bool {
            t.global.lock_exclusive();
            let r = t.insert_pessimistic(key, value);
            // SAFETY: taken just above.
            unsafe { t.global.unlock_exclusive(crate::latch::STATELESS) };
            r
        }
        fn update(t: &BTree<Self>, key: u64, value: u64) -> Option<u64> {
            t.global.lock_exclusive();
            let r = update_latched(t, key, value);
            // SAFETY: taken just above.
            unsafe { t.global.unlock_exclusive(crate::latch::STATELESS) };
            r
        }
        fn remove(t: &BTree<Self>, key: u64) -> Option<u64> {
            t.global.lock_exclusive();
            let r = remove_latched(t, key);
            // SAFETY: taken just above.
            unsafe { t.global.unlock_exclusive(crate::latch::STATELESS) };
            r
        }
        fn scan(t: &BTree<Self>, lo: u64, hi: u64, f: &mut dyn FnMut(u64, u64) -> bool) {
            t.scan_latched(lo, hi, f, &|step| {
                t.global.lock_shared();
                step();
                // SAFETY: taken just above.
                unsafe { t.global.unlock_shared(crate::latch::STATELESS) };
            });
        }
    }

    /// `ElidedSpin` and `ElidedRw` share their traversals (those of
    /// `GlobalRw`, whose nodes carry no latch); only the elided lock
    /// differs.
    macro_rules! elided {
        ($p:ty, $name:literal, $lock:ident) => {
            impl Protocol for $p {
                type Latch = NoLatch;
                const NAME: &'static str = $name;
                fn get(t: &BTree<Self>, key: u64) -> Option<u64> {
                    t.elision.run(&t.$lock, true, || t.get_latched(key))
                }
                fn insert(t: &BTree<Self>, key: u64, value: u64) -> bool {
                    t.elision
                        .run(&t.$lock, false, || t.insert_pessimistic(key, value))
                }
                fn update(t: &BTree<Self>, key: u64, value: u64) -> Option<u64> {
                    t.elision.run(&t.$lock, false, || update_latched(t, key, value))
                }
                fn remove(t: &BTree<Self>, key: u64) -> Option<u64> {
                    t.elision.run(&t.$lock, false, || remove_latched(t, key))
                }
                fn scan(t: &BTree<Self>, lo: u64, hi: u64, f: &mut dyn FnMut(u64, u64) -> bool) {
                    // One leaf per section: a long scan would outgrow the
                    // transaction's capacity.
                    t.scan_latched(lo, hi, f, &|step| t.elision.run(&t.$lock, true, || step()));
                }
            }
        };
    }
    elided!(ElidedSpin, "elided-spin", spin);
    elided!(ElidedRw, "elided-rw", global);

    fn update_latched<P: Protocol>(t: &BTree<P>, key: u64, value: u64) -> Option<u64> {
        t.with_leaf_exclusive(key, |leaf| {
            leaf.search(key).ok().map(|i| {
                let old = leaf.value(i);
                leaf.set_value(i, value);
                old
            })
        })
    }

    fn remove_latched<P: Protocol>(t: &BTree<P>, key: u64) -> Option<u64> {
        t.with_leaf_exclusive(key, |leaf| {
            leaf.search(key).ok().map(|i| {
                let old = leaf.value(i);
                leaf.remove_at(i);
                old
            })
        })
    }

    /// `Coupling` and `Spin` share their traversals; only the latch differs.
    macro_rules! coupled {
        ($p:ty, $latch:ty, $name:literal) => {
            impl Protocol for $p {
                type Latch = $latch;
                const NAME: &'static str = $name;
                fn get(t: &BTree<Self>, key: u64) -> Option<u64> {
                    t.get_latched(key)
                }
                fn insert(t: &BTree<Self>, key: u64, value: u64) -> bool {
                    // Leaf first; only a full leaf takes the exclusive path from the root.
                    match t.insert_leaf(key, value) {
                        Some(r) => r,
                        None => t.insert_pessimistic(key, value),
                    }
                }
                fn update(t: &BTree<Self>, key: u64, value: u64) -> Option<u64> {
                    update_latched(t, key, value)
                }
                fn remove(t: &BTree<Self>, key: u64) -> Option<u64> {
                    remove_latched(t, key)
                }
                fn scan(t: &BTree<Self>, lo: u64, hi: u64, f: &mut dyn FnMut(u64, u64) -> bool) {
                    t.scan_latched(lo, hi, f, &|step| step());
                }
            }
        };
    }
    coupled!(Coupling, RwLatch, "coupling");
    coupled!(Spin, SpinLatch, "spin");

    impl Protocol for Optimistic {
        type Latch = VersionLatch;
        const NAME: &'static str = "optimistic";
        #[inline]
        fn get(t: &BTree<Self>, key: u64) -> Option<u64> {
            t.get_optimistic(key)
        }
        fn insert(t: &BTree<Self>, key: u64, value: u64) -> bool {
            t.insert_optimistic(key, value)
        }
        fn update(t: &BTree<Self>, key: u64, value: u64) -> Option<u64> {
            t.update_optimistic(key, value)
        }
        fn remove(t: &BTree<Self>, key: u64) -> Option<u64> {
            t.remove_optimistic(key)
        }
        fn scan(t: &BTree<Self>, lo: u64, hi: u64, f: &mut dyn FnMut(u64, u64) -> bool) {
            t.scan_optimistic(lo, hi, f);
        }
    }

    const _: () = {
        use crate::node::{Inner, Leaf};
        use std::mem::size_of;
        assert!(size_of::<Leaf<RwLatch>>() == 512 && size_of::<Inner<RwLatch>>() == 512);
        assert!(size_of::<Leaf<SpinLatch>>() == 512 && size_of::<Inner<SpinLatch>>() == 512);
        assert!(size_of::<Leaf<VersionLatch>>() == 512 && size_of::<Inner<VersionLatch>>() == 512);
        assert!(size_of::<Leaf<NoLatch>>() == 512 && size_of::<Inner<NoLatch>>() == 512);
    };
}
