//! The tree, and the traversals every latching protocol shares: lock
//! coupling top-down with shared or exclusive node latches.
//!
//! Latch order: always parent before child, and a thread holds at most two
//! node latches (a parent and one child) at a time. Leaves are read one at a
//! time by scans with no latch held in between, which needs no order at all.
//! Hence no deadlock between any mix of operations.

use crate::Protocol;
use crate::latch::NodeLatch;
use crate::node::{Batch, Header, Inner, LEAF_CAP, Leaf, NodePtr, free_tree, split};
use crate::sync::{AtomicPtr, Ordering};
use heirloom_rtm::{Elision, ElisionStats, Retry, SpinLock, Striped};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// An in-memory B+tree from `u64` keys to `u64` values, latched by protocol
/// `P` ([`GlobalRw`](crate::GlobalRw), [`Coupling`](crate::Coupling),
/// [`Spin`](crate::Spin) or [`Optimistic`](crate::Optimistic)).
///
/// Composite keys encode into the `u64` (most significant part first, so
/// their order is the tuple order); values are typically row slots.
///
/// All operations take `&self` and may run from any number of threads.
/// Nodes are never merged: leaves may underflow (even to empty) after
/// removes, and the space comes back only when the tree is dropped. This is
/// what lets readers follow stale pointers safely without epoch reclamation
/// (see `node.rs`).
pub struct BTree<P: Protocol> {
    /// The root; replaced only by a root split, while the old root's latch
    /// is held exclusively.
    pub(crate) root: AtomicPtr<Header<P::Latch>>,
    /// The one tree-wide reader/writer lock of [`GlobalRw`](crate::GlobalRw)
    /// (unused by the other protocols).
    pub(crate) global: parking_lot::RawRwLock,
    /// Optimistic attempts that failed validation (Optimistic only; written
    /// on failures, never on the fast path; striped per thread, since
    /// failures come in bursts on many threads at once).
    pub(crate) restarts: Striped,
    /// Operations that gave up on optimism and took latches.
    pub(crate) fallbacks: Striped,
    /// The tree-wide spin lock of [`ElidedSpin`](crate::ElidedSpin).
    pub(crate) spin: SpinLock,
    /// How the elided protocols elide their tree-wide lock: the retry
    /// policy and the counters.
    pub(crate) elision: Elision,
    _p: PhantomData<P>,
}

// SAFETY: the tree owns its nodes (raw pointers), which hold only atomics and
// latches that are `Send + Sync`; all access goes through the latching
// protocol.
unsafe impl<P: Protocol> Send for BTree<P> {}
// SAFETY: as above; `&BTree` operations synchronise through latches.
unsafe impl<P: Protocol> Sync for BTree<P> {}

/// Counters of the optimistic and the elided protocols (zero for the
/// others).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Optimistic attempts that failed validation and were retried.
    pub restarts: u64,
    /// Operations that exhausted the optimistic retry budget and took
    /// latches.
    pub fallbacks: u64,
    /// The elided protocols' hardware transactions: commits, aborts by
    /// cause, sections run under the lock, and whether RTM was in use.
    pub elision: ElisionStats,
}

/// The shape of a tree, from [`BTree::check`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Entries.
    pub keys: usize,
    /// Leaves.
    pub leaves: usize,
    /// Inner nodes.
    pub inner: usize,
    /// Levels (1: the root is a leaf).
    pub height: usize,
}

/// A tree that nobody can change while this view lives; see
/// [`BTree::freeze`].
pub struct Frozen<'a, P: Protocol> {
    tree: &'a BTree<P>,
}

impl<P: Protocol> std::fmt::Debug for Frozen<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frozen")
            .field("protocol", &P::NAME)
            .finish_non_exhaustive()
    }
}

impl<P: Protocol> Frozen<'_, P> {
    /// The value stored under `key`, found without latches: the view's
    /// mutable borrow keeps every writer out.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        let mut n = self.tree.root.load(Ordering::Acquire);
        while !BTree::<P>::node(n).is_leaf() {
            let inner = BTree::<P>::inner(n);
            n = inner.child(inner.child_index(key));
        }
        let leaf = BTree::<P>::leaf(n);
        leaf.search(key).ok().map(|i| leaf.value(i))
    }
}

impl<P: Protocol> Default for BTree<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Protocol> std::fmt::Debug for BTree<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BTree")
            .field("protocol", &P::NAME)
            .finish_non_exhaustive()
    }
}

impl<P: Protocol> Drop for BTree<P> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no other thread can reach the nodes.
        unsafe { free_tree(*self.root.get_mut()) }
    }
}

impl<P: Protocol> BTree<P> {
    /// An empty tree (one empty leaf).
    pub fn new() -> Self {
        Self::with_retry(Retry::default())
    }

    /// An empty tree whose elided protocols retry aborted transactions as
    /// `retry` says (the other protocols ignore it).
    pub fn with_retry(retry: Retry) -> Self {
        BTree {
            root: AtomicPtr::new(Leaf::<P::Latch>::new_boxed()),
            global: <parking_lot::RawRwLock as parking_lot::lock_api::RawRwLock>::INIT,
            restarts: Striped::new(),
            fallbacks: Striped::new(),
            spin: SpinLock::new(),
            elision: Elision::new(retry),
            _p: PhantomData,
        }
    }

    /// The retry policy of the elided protocols.
    pub fn retry(&self) -> Retry {
        self.elision.retry()
    }

    /// Aborts the next `n` hardware transactions of an elided protocol on
    /// purpose, so tests reach the retry and fallback paths on a CPU with
    /// RTM (no effect without it).
    pub fn inject_aborts(&self, n: u32) {
        self.elision.inject_aborts(n);
    }

    /// The protocol's name (`"global-rw"`, `"coupling"`, `"spin"`,
    /// `"optimistic"`, `"elided-spin"`, `"elided-rw"`).
    pub fn protocol(&self) -> &'static str {
        P::NAME
    }

    /// The value stored under `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        P::get(self, key)
    }

    /// Inserts `key -> value` if `key` is absent (primary-key semantics);
    /// returns false and changes nothing if it is present.
    #[inline]
    pub fn insert(&self, key: u64, value: u64) -> bool {
        P::insert(self, key, value)
    }

    /// Replaces the value of an existing `key`; returns the old value, or
    /// `None` (and changes nothing) if `key` is absent.
    #[inline]
    pub fn update(&self, key: u64, value: u64) -> Option<u64> {
        P::update(self, key, value)
    }

    /// Removes `key`; returns its value if it was present.
    #[inline]
    pub fn remove(&self, key: u64) -> Option<u64> {
        P::remove(self, key)
    }

    /// Calls `f(key, value)` for the entries in `range`, in key order, until
    /// `f` returns false.
    ///
    /// A scan is not a snapshot: an entry present for the whole scan is
    /// reported exactly once; entries inserted or removed while it runs may
    /// or may not be. (Phantom protection is the lock manager's job.) No
    /// latch is held while `f` runs, so `f` may use the tree.
    pub fn scan<F: FnMut(u64, u64) -> bool>(&self, range: impl RangeBounds<u64>, mut f: F) {
        let lo = match range.start_bound() {
            Bound::Included(&k) => k,
            Bound::Excluded(&k) => match k.checked_add(1) {
                Some(k) => k,
                None => return,
            },
            Bound::Unbounded => 0,
        };
        let hi = match range.end_bound() {
            Bound::Included(&k) => k,
            Bound::Excluded(&k) => match k.checked_sub(1) {
                Some(k) => k,
                None => return,
            },
            Bound::Unbounded => u64::MAX,
        };
        if lo > hi {
            return;
        }
        P::scan(self, lo, hi, &mut f);
    }

    /// The entries in `range`, in key order.
    pub fn range(&self, range: impl RangeBounds<u64>) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.scan(range, |k, v| {
            out.push((k, v));
            true
        });
        out
    }

    /// The first entry in `range` (oldest-first queues: TPC-C NEW_ORDER).
    pub fn first(&self, range: impl RangeBounds<u64>) -> Option<(u64, u64)> {
        let mut first = None;
        self.scan(range, |k, v| {
            first = Some((k, v));
            false
        });
        first
    }

    /// Number of entries (a full scan: O(n), for tests and reports).
    pub fn count(&self) -> usize {
        let mut n = 0;
        self.scan(.., |_, _| {
            n += 1;
            true
        });
        n
    }

    /// A read-only view for as long as it lives: it borrows the tree
    /// mutably, so no thread can change the tree meanwhile, and its lookups
    /// take no latch and check no version. This is the "no concurrency
    /// control" ceiling that the index bench measures read-only runs
    /// against; share `&Frozen` between threads (e.g. with
    /// `std::thread::scope`).
    ///
    /// ```
    /// use heirloom_btree::{BTree, Coupling};
    /// let mut tree = BTree::<Coupling>::new();
    /// tree.insert(1, 10);
    /// let frozen = tree.freeze();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert_eq!(frozen.get(1), Some(10)));
    ///     s.spawn(|| assert_eq!(frozen.get(2), None));
    /// });
    /// ```
    pub fn freeze(&mut self) -> Frozen<'_, P> {
        Frozen { tree: self }
    }

    /// Optimistic restarts and fallbacks so far.
    pub fn stats(&self) -> TreeStats {
        TreeStats {
            restarts: self.restarts.sum(),
            fallbacks: self.fallbacks.sum(),
            elision: self.elision.stats(),
        }
    }

    /// Checks every structural invariant (keys sorted in every node,
    /// separators bound their subtrees, all leaves at one depth, the leaf
    /// chain visits the leaves in key order) and returns the shape, or a
    /// description of the first violation. Takes `&mut self`: the tree must
    /// be quiescent.
    pub fn check(&mut self) -> Result<Shape, String> {
        let root = *self.root.get_mut();
        let mut shape = Shape::default();
        let mut leaves = Vec::new();
        // SAFETY: `&mut self`: quiescent, every node live.
        unsafe { check_node(root, 0, u64::MIN, None, &mut shape, &mut leaves)? };
        shape.height = {
            let mut h = 1;
            let mut p = root;
            // SAFETY: as above.
            unsafe {
                while !(*p).is_leaf() {
                    p = (*p).as_inner().child(0);
                    h += 1;
                }
            }
            h
        };
        // The chain from the leftmost leaf must be exactly the in-order leaves.
        let mut p = leaves.first().copied().unwrap_or(std::ptr::null_mut());
        for (i, &expected) in leaves.iter().enumerate() {
            if p != expected {
                return Err(format!("leaf chain diverges from the tree at leaf {i}"));
            }
            // SAFETY: as above; `p` is a leaf of this tree.
            p = unsafe { (*p).as_leaf().next() } as NodePtr<P::Latch>;
        }
        if !p.is_null() {
            return Err("leaf chain continues past the last leaf".into());
        }
        Ok(shape)
    }

    // ---- shared traversals (lock coupling), used by every protocol ----

    #[inline]
    pub(crate) fn latch<'a>(p: NodePtr<P::Latch>) -> &'a P::Latch {
        &Self::node(p).latch
    }

    #[inline]
    pub(crate) fn node<'a>(p: NodePtr<P::Latch>) -> &'a Header<P::Latch> {
        // SAFETY: every pointer handed around is non-null and points at a
        // node of this tree, which lives until the tree is dropped.
        unsafe { &*p }
    }

    #[inline]
    pub(crate) fn inner<'a>(p: NodePtr<P::Latch>) -> &'a Inner<P::Latch> {
        // SAFETY: callers pass a node they found not to be a leaf.
        unsafe { Self::node(p).as_inner() }
    }

    #[inline]
    pub(crate) fn leaf<'a>(p: NodePtr<P::Latch>) -> &'a Leaf<P::Latch> {
        // SAFETY: callers pass a node they found to be a leaf.
        unsafe { Self::node(p).as_leaf() }
    }

    #[inline]
    fn lock(p: NodePtr<P::Latch>, exclusive: bool) {
        if exclusive {
            Self::latch(p).lock_exclusive()
        } else {
            Self::latch(p).lock_shared()
        }
    }

    /// # Safety
    /// The caller holds `p`'s latch in the given mode.
    #[inline]
    unsafe fn unlock(p: NodePtr<P::Latch>, exclusive: bool) {
        // SAFETY: forwarded from the caller.
        unsafe {
            if exclusive {
                Self::latch(p).unlock_exclusive()
            } else {
                Self::latch(p).unlock_shared()
            }
        }
    }

    /// Latches the root in the given mode, or exclusively if `leaf_exclusive`
    /// and the root is a leaf. Returns the root and the mode taken.
    #[inline]
    fn lock_root(&self, exclusive: bool, leaf_exclusive: bool) -> (NodePtr<P::Latch>, bool) {
        loop {
            let r = self.root.load(Ordering::Acquire);
            let ex = exclusive || (leaf_exclusive && Self::node(r).is_leaf());
            Self::lock(r, ex);
            // The root changes only under the old root's exclusive latch, so
            // once we hold `r` and it is still the root, it stays the root.
            if self.root.load(Ordering::Acquire) == r {
                return (r, ex);
            }
            // SAFETY: locked just above in mode `ex`.
            unsafe { Self::unlock(r, ex) };
        }
    }

    /// Lock coupling with shared latches down to the leaf for `key`, which is
    /// latched exclusively if `leaf_exclusive`, else shared. Returns the
    /// leaf, latched.
    #[inline]
    pub(crate) fn leaf_latched(&self, key: u64, leaf_exclusive: bool) -> NodePtr<P::Latch> {
        let (mut n, _) = self.lock_root(false, leaf_exclusive);
        while !Self::node(n).is_leaf() {
            let c = Self::inner(n).child(Self::inner(n).child_index(key));
            let ex = leaf_exclusive && Self::node(c).is_leaf();
            Self::lock(c, ex);
            // SAFETY: `n` was latched shared (inner nodes on this path are).
            unsafe { Self::unlock(n, false) };
            n = c;
        }
        n
    }

    /// Point lookup with shared lock coupling.
    pub(crate) fn get_latched(&self, key: u64) -> Option<u64> {
        let l = self.leaf_latched(key, false);
        let leaf = Self::leaf(l);
        let r = leaf.search(key).ok().map(|i| leaf.value(i));
        // SAFETY: latched shared by `leaf_latched`.
        unsafe { Self::unlock(l, false) };
        r
    }

    /// Insert into the leaf with shared coupling and an exclusive leaf
    /// latch; `None` if the leaf is full (the caller then splits with
    /// [`insert_pessimistic`](Self::insert_pessimistic)).
    pub(crate) fn insert_leaf(&self, key: u64, value: u64) -> Option<bool> {
        let l = self.leaf_latched(key, true);
        let leaf = Self::leaf(l);
        let r = match leaf.search(key) {
            Ok(_) => Some(false),
            Err(_) if leaf.h.is_full() => None,
            Err(i) => {
                leaf.insert_at(i, key, value);
                Some(true)
            }
        };
        // SAFETY: latched exclusively by `leaf_latched`.
        unsafe { Self::unlock(l, true) };
        r
    }

    /// Insert with exclusive lock coupling from the root, splitting every
    /// full node on the way down (so a split never has to go back up: the
    /// parent has room). After a split it starts over; splits are rare.
    pub(crate) fn insert_pessimistic(&self, key: u64, value: u64) -> bool {
        'restart: loop {
            let (r, _) = self.lock_root(true, true);
            if Self::node(r).is_full() {
                if Self::node(r).is_leaf() && Self::leaf(r).search(key).is_ok() {
                    // SAFETY: latched exclusively by `lock_root`.
                    unsafe { Self::unlock(r, true) };
                    return false;
                }
                // SAFETY: `r` is latched exclusively.
                let (sep, right) = unsafe { split(r) };
                let new_root = Inner::new_root(r, sep, right);
                // Release: the new root is initialised before it is found.
                self.root.store(new_root, Ordering::Release);
                // SAFETY: latched exclusively by `lock_root`.
                unsafe { Self::unlock(r, true) };
                continue 'restart;
            }
            let mut n = r;
            loop {
                if Self::node(n).is_leaf() {
                    let leaf = Self::leaf(n);
                    let r = match leaf.search(key) {
                        Ok(_) => false,
                        Err(i) => {
                            leaf.insert_at(i, key, value);
                            true
                        }
                    };
                    // SAFETY: `n` is latched exclusively on this path.
                    unsafe { Self::unlock(n, true) };
                    return r;
                }
                let inner = Self::inner(n);
                let i = inner.child_index(key);
                let c = inner.child(i);
                Self::lock(c, true);
                if Self::node(c).is_full() {
                    let present = Self::node(c).is_leaf() && Self::leaf(c).search(key).is_ok();
                    if !present {
                        // SAFETY: `c` is latched exclusively.
                        let (sep, right) = unsafe { split(c) };
                        // `n` is not full: it was split on the way if it was.
                        inner.insert_child(i, sep, right);
                    }
                    // SAFETY: both latched exclusively on this path.
                    unsafe {
                        Self::unlock(c, true);
                        Self::unlock(n, true);
                    }
                    if present {
                        return false;
                    }
                    continue 'restart;
                }
                // SAFETY: `n` is latched exclusively on this path.
                unsafe { Self::unlock(n, true) };
                n = c;
            }
        }
    }

    /// Runs `f` on the leaf for `key` latched exclusively (shared coupling
    /// above it).
    #[inline]
    pub(crate) fn with_leaf_exclusive<R>(&self, key: u64, f: impl FnOnce(&Leaf<P::Latch>) -> R) -> R {
        let l = self.leaf_latched(key, true);
        let r = f(Self::leaf(l));
        // SAFETY: latched exclusively by `leaf_latched`.
        unsafe { Self::unlock(l, true) };
        r
    }

    /// Range scan reading one leaf at a time under its shared latch; `latch_global`
    /// wraps every step in the tree-wide read lock instead ([`GlobalRw`](crate::GlobalRw)).
    /// A scan that reads one leaf at a time, each step (the descent to the
    /// first leaf, or the move to the next) run through `global` (which
    /// runs it under the tree-wide lock, elided or not, or as it is). A
    /// step may run more than once (an aborted transaction); it has no
    /// effect but its outputs.
    pub(crate) fn scan_latched(
        &self,
        lo: u64,
        hi: u64,
        f: &mut dyn FnMut(u64, u64) -> bool,
        global: &dyn Fn(&mut dyn FnMut()),
    ) {
        let mut buf: Batch = [(0, 0); LEAF_CAP];
        let (mut n, mut past, mut next) = (0, false, std::ptr::null_mut());
        global(&mut || {
            let l = self.leaf_latched(lo, false);
            (n, past, next) = Self::leaf(l).collect(lo, hi, &mut buf);
            // SAFETY: latched shared by `leaf_latched`. `next` stays valid
            // after unlocking: nodes are never freed while the tree lives.
            unsafe { Self::unlock(l, false) };
        });
        loop {
            if !emit(&buf[..n], f) {
                return;
            }
            let from = match buf[..n].last() {
                Some(&(k, _)) if k >= hi => return,
                Some(&(k, _)) => k + 1,
                None => lo,
            };
            if past || next.is_null() {
                return;
            }
            let p = next as NodePtr<P::Latch>;
            global(&mut || {
                Self::lock(p, false);
                (n, past, next) = Self::leaf(p).collect(from.max(lo), hi, &mut buf);
                // SAFETY: latched shared just above.
                unsafe { Self::unlock(p, false) };
            });
        }
    }
}

/// Hands a batch to the scan callback; false if it asked to stop.
#[inline]
pub(crate) fn emit(batch: &[(u64, u64)], f: &mut dyn FnMut(u64, u64) -> bool) -> bool {
    batch.iter().all(|&(k, v)| f(k, v))
}

/// Recursive part of [`BTree::check`]: keys of the subtree at `p` must lie
/// in `[lo, hi)` (`hi = None`: unbounded).
///
/// # Safety
/// The tree is quiescent and `p` is one of its nodes.
unsafe fn check_node<L>(
    p: NodePtr<L>,
    depth: usize,
    lo: u64,
    hi: Option<u64>,
    shape: &mut Shape,
    leaves: &mut Vec<NodePtr<L>>,
) -> Result<usize, String> {
    // SAFETY: forwarded from the caller.
    let h = unsafe { &*p };
    let in_range = |k: u64| k >= lo && hi.is_none_or(|hi| k < hi);
    if h.is_leaf() {
        // SAFETY: checked to be a leaf.
        let leaf = unsafe { h.as_leaf() };
        for i in 0..h.len() {
            let k = leaf.key(i);
            if !in_range(k) {
                return Err(format!("leaf key {k} outside its parent's range [{lo}, {hi:?})"));
            }
            if i > 0 && leaf.key(i - 1) >= k {
                return Err(format!("leaf keys out of order: {} then {k}", leaf.key(i - 1)));
            }
        }
        shape.keys += h.len();
        shape.leaves += 1;
        leaves.push(p);
        return Ok(depth);
    }
    // SAFETY: checked not to be a leaf.
    let inner = unsafe { h.as_inner() };
    shape.inner += 1;
    let n = h.len();
    for i in 0..n {
        let k = inner.key(i);
        if !in_range(k) {
            return Err(format!("separator {k} outside its parent's range [{lo}, {hi:?})"));
        }
        if i > 0 && inner.key(i - 1) >= k {
            return Err(format!("separators out of order: {} then {k}", inner.key(i - 1)));
        }
    }
    let mut leaf_depth = None;
    for i in 0..=n {
        let c = inner.child(i);
        if c.is_null() {
            return Err(format!("inner node with {n} keys lacks child {i}"));
        }
        let clo = if i == 0 { lo } else { inner.key(i - 1) };
        let chi = if i == n { hi } else { Some(inner.key(i)) };
        // SAFETY: a child of a node of this quiescent tree.
        let d = unsafe { check_node(c, depth + 1, clo, chi, shape, leaves)? };
        if *leaf_depth.get_or_insert(d) != d {
            return Err(format!("leaves at depths {} and {d}", leaf_depth.unwrap_or(0)));
        }
    }
    Ok(leaf_depth.unwrap_or(depth))
}
