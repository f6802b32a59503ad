//! Optimistic lock coupling (Leis et al., "The ART of Practical
//! Synchronization", DaMoN 2016): the software form of the TSX paper's lock
//! elision.
//!
//! A reader walks root to leaf noting each node's version
//! ([`VersionLatch::read_begin`]), reads what it needs with relaxed loads,
//! and validates the version of the parent after it has read the child's,
//! so a split between reading a child pointer and arriving at the child is
//! always seen. It writes no shared memory. A writer does the same and then
//! upgrades (CAS at the version it read) only the nodes it changes: the
//! leaf, or for a split the full node and its parent. Full nodes met on the
//! way down are split eagerly, so a split never propagates upwards.
//!
//! Retries: a failed attempt first waits until the latch that defeated it
//! is free (never retries into a held latch: the lemming-effect fix), then
//! tries again; after [`OPTIMISTIC_ATTEMPTS`] failures the operation takes
//! the latches pessimistically (exclusive lock coupling), which always
//! completes. Each latch's version word is then taken like a spin latch.

use crate::latch::VersionLatch;
use crate::node::{Batch, Inner, LEAF_CAP, NodePtr, split};
use crate::sync::Ordering;
use crate::tree::emit;
use crate::{BTree, Optimistic};

/// Optimistic attempts per operation before it takes latches.
pub const OPTIMISTIC_ATTEMPTS: u32 = 8;

type Ptr = NodePtr<VersionLatch>;
type Tree = BTree<Optimistic>;

/// Why an attempt failed: the node whose latch to wait for (`None`: just retry).
type Retry = Option<Ptr>;

impl Tree {
    /// Runs `attempt` until it succeeds or the budget is spent, then `fallback`.
    #[inline]
    fn optimistically<R>(&self, mut attempt: impl FnMut() -> Result<R, Retry>, fallback: impl FnOnce() -> R) -> R {
        let mut failures = 0;
        loop {
            match attempt() {
                Ok(r) => return r,
                Err(blocker) => {
                    failures += 1;
                    self.restarts.add(1);
                    if failures >= OPTIMISTIC_ATTEMPTS {
                        self.fallbacks.add(1);
                        return fallback();
                    }
                    if let Some(p) = blocker {
                        // Wait until the writer that defeated us is out.
                        Self::latch(p).read_begin();
                    }
                }
            }
        }
    }

    /// Optimistic descent to the leaf for `key`: the leaf and its version,
    /// validated against its parent. Always inlined: since the node search
    /// reads the `transform` switch, the compiler left it a call of its
    /// own, which showed in the instructions per transaction of YCSB and
    /// TPC-C (the kit's MEASUREMENTS.md, "Where TM1's extra instructions
    /// went").
    #[inline(always)]
    fn find_leaf(&self, key: u64) -> Result<(Ptr, u64), Retry> {
        let r = self.root.load(Ordering::Acquire);
        let mut v = Self::latch(r).read_begin();
        if self.root.load(Ordering::Acquire) != r {
            return Err(None);
        }
        let mut n = r;
        while !Self::node(n).is_leaf() {
            (n, v) = Self::step(n, v, key)?;
        }
        Ok((n, v))
    }

    /// One step down from inner node `n` (read at version `v`): the child
    /// for `key` and its version, with `n` validated after the child's
    /// version was read, so a split of the child before that read (which
    /// changed `n` too) is always seen.
    #[inline]
    fn step(n: Ptr, v: u64, key: u64) -> Result<(Ptr, u64), Retry> {
        let inner = Self::inner(n);
        let c = inner.child(inner.child_index(key));
        if c.is_null() {
            return Err(Some(n));
        }
        let cv = Self::latch(c).read_begin();
        if !Self::latch(n).validate(v) {
            return Err(Some(n));
        }
        Ok((c, cv))
    }

    pub(crate) fn get_optimistic(&self, key: u64) -> Option<u64> {
        self.optimistically(
            || {
                let (l, v) = self.find_leaf(key)?;
                let leaf = Self::leaf(l);
                let r = leaf.search(key).ok().map(|i| leaf.value(i));
                if Self::latch(l).validate(v) {
                    Ok(r)
                } else {
                    Err(Some(l))
                }
            },
            || self.get_latched(key),
        )
    }

    /// Changes one entry of the leaf for `key`: `f` gets the leaf's search
    /// result and runs with the leaf latched exclusively (if it returns
    /// `Some`), or `None` means nothing to change (validated read).
    fn modify_leaf<R: Copy>(
        &self,
        key: u64,
        absent: R,
        f: impl Fn(&crate::node::Leaf<VersionLatch>, usize) -> R + Copy,
    ) -> R {
        self.optimistically(
            || {
                let (l, v) = self.find_leaf(key)?;
                let leaf = Self::leaf(l);
                match leaf.search(key) {
                    Err(_) => {
                        if Self::latch(l).validate(v) {
                            Ok(absent)
                        } else {
                            Err(Some(l))
                        }
                    }
                    Ok(i) => {
                        // The upgrade succeeds only if the leaf is exactly as
                        // read at `v`, so `i` is still the entry.
                        if !Self::latch(l).try_upgrade(v) {
                            return Err(Some(l));
                        }
                        let r = f(leaf, i);
                        // SAFETY: taken by the successful try_upgrade.
                        unsafe { crate::latch::NodeLatch::unlock_exclusive(Self::latch(l)) };
                        Ok(r)
                    }
                }
            },
            || {
                self.with_leaf_exclusive(key, |leaf| match leaf.search(key) {
                    Ok(i) => f(leaf, i),
                    Err(_) => absent,
                })
            },
        )
    }

    pub(crate) fn update_optimistic(&self, key: u64, value: u64) -> Option<u64> {
        self.modify_leaf(key, None, |leaf, i| {
            let old = leaf.value(i);
            leaf.set_value(i, value);
            Some(old)
        })
    }

    pub(crate) fn remove_optimistic(&self, key: u64) -> Option<u64> {
        self.modify_leaf(key, None, |leaf, i| {
            let old = leaf.value(i);
            leaf.remove_at(i);
            Some(old)
        })
    }

    pub(crate) fn insert_optimistic(&self, key: u64, value: u64) -> bool {
        self.optimistically(|| self.try_insert(key, value), || self.insert_pessimistic(key, value))
    }

    fn try_insert(&self, key: u64, value: u64) -> Result<bool, Retry> {
        use crate::latch::NodeLatch as _;
        'split: loop {
            let r = self.root.load(Ordering::Acquire);
            let mut v = Self::latch(r).read_begin();
            if self.root.load(Ordering::Acquire) != r {
                return Err(None);
            }
            let mut n = r;
            let mut parent: Option<(Ptr, u64)> = None;
            loop {
                let node = Self::node(n);
                if node.is_full() {
                    // Split now, with the parent (which has room: it was checked
                    // at `pv` and is unchanged if the upgrade succeeds), then
                    // start over.
                    if let Some((p, pv)) = parent
                        && !Self::latch(p).try_upgrade(pv)
                    {
                        return Err(Some(p));
                    }
                    if !Self::latch(n).try_upgrade(v) {
                        if let Some((p, _)) = parent {
                            // SAFETY: upgraded just above.
                            unsafe { Self::latch(p).unlock_exclusive() };
                        }
                        return Err(Some(n));
                    }
                    // Unchanged since `v`; with no parent it was the root at `v`
                    // and a root is replaced only by splitting it.
                    debug_assert!(parent.is_some() || self.root.load(Ordering::Relaxed) == n);
                    let present = node.is_leaf() && Self::leaf(n).search(key).is_ok();
                    if !present {
                        // SAFETY: `n` is latched exclusively (upgraded above).
                        let (sep, right) = unsafe { split(n) };
                        match parent {
                            Some((p, _)) => {
                                let pi = Self::inner(p);
                                pi.insert_child(pi.child_index(key), sep, right);
                            }
                            // Release: the new root is initialised before it is found.
                            None => self.root.store(Inner::new_root(n, sep, right), Ordering::Release),
                        }
                    }
                    // SAFETY: both upgraded above.
                    unsafe {
                        Self::latch(n).unlock_exclusive();
                        if let Some((p, _)) = parent {
                            Self::latch(p).unlock_exclusive();
                        }
                    }
                    if present {
                        return Ok(false);
                    }
                    // A split is progress, not a failure: go again at once.
                    continue 'split;
                }
                if node.is_leaf() {
                    let leaf = Self::leaf(n);
                    return match leaf.search(key) {
                        Ok(_) if Self::latch(n).validate(v) => Ok(false),
                        Ok(_) => Err(Some(n)),
                        Err(i) => {
                            if !Self::latch(n).try_upgrade(v) {
                                return Err(Some(n));
                            }
                            leaf.insert_at(i, key, value);
                            // SAFETY: upgraded just above.
                            unsafe { Self::latch(n).unlock_exclusive() };
                            Ok(true)
                        }
                    };
                }
                let (c, cv) = Self::step(n, v, key)?;
                parent = Some((n, v));
                n = c;
                v = cv;
            }
        }
    }

    /// Reads one leaf optimistically (after the budget: under its latch).
    fn collect_leaf(&self, l: Ptr, from: u64, hi: u64, buf: &mut Batch) -> (usize, bool, Ptr) {
        let latch = Self::latch(l);
        let leaf = Self::leaf(l);
        for _ in 0..OPTIMISTIC_ATTEMPTS {
            // read_begin waits while a writer holds the leaf (lemming-safe).
            let v = latch.read_begin();
            let (n, past, next) = leaf.collect(from, hi, buf);
            if latch.validate(v) {
                return (n, past, next as Ptr);
            }
            self.restarts.add(1);
        }
        self.fallbacks.add(1);
        use crate::latch::NodeLatch as _;
        latch.lock_shared();
        let (n, past, next) = leaf.collect(from, hi, buf);
        // SAFETY: taken just above.
        unsafe { latch.unlock_shared() };
        (n, past, next as Ptr)
    }

    /// Range scan: one optimistic read per leaf; a leaf whose read fails is
    /// read again (its lower bound never moves, so it is still the place to
    /// continue from).
    pub(crate) fn scan_optimistic(&self, lo: u64, hi: u64, f: &mut dyn FnMut(u64, u64) -> bool) {
        let mut buf: Batch = [(0, 0); LEAF_CAP];
        let mut l = self.optimistically(
            || self.find_leaf(lo).map(|(l, _)| l),
            || {
                let l = self.leaf_latched(lo, false);
                // SAFETY: latched shared by `leaf_latched`; only the pointer is kept.
                unsafe { crate::latch::NodeLatch::unlock_shared(Self::latch(l)) };
                l
            },
        );
        let mut from = lo;
        loop {
            let (n, past, next) = self.collect_leaf(l, from, hi, &mut buf);
            if !emit(&buf[..n], f) {
                return;
            }
            if let Some(&(k, _)) = buf[..n].last() {
                if k >= hi {
                    return;
                }
                from = k + 1;
            }
            if past || next.is_null() {
                return;
            }
            l = next;
        }
    }
}
