//! Node layout and the steps that read or change one node.
//!
//! Both node kinds are `#[repr(C, align(64))]` and 512 bytes: eight cache
//! lines, with the latch, the entry count and the kind in the first 16
//! bytes. Keys are searched by binary search (the TSX paper's footprint
//! lesson: a linear scan touches every line of the node; `transform` can
//! switch to it for the experiment).
//!
//! Every field a reader may look at while a writer changes the node is an
//! atomic, read and written with `Relaxed` ordering: an optimistic reader
//! may see any mix of old and new values, never undefined behaviour, and its
//! validation then fails. The latch (or the version check) provides the
//! ordering. Pointers are the exception: a child or `next` pointer is stored
//! with `Release` after the node it points to is initialised and loaded with
//! `Acquire`, so whoever follows a pointer, even one it will later find
//! stale, sees an initialised node.
//!
//! Invariants, true of every node whenever no writer holds its latch:
//! - keys `0..count` are strictly increasing;
//! - an inner node with `count` keys has children `0..=count`, all non-null;
//!   child `i` holds keys `k` with `keys[i-1] <= k < keys[i]`;
//! - nodes are never freed while the tree lives and never merged, and a
//!   split keeps the lower half in place: a node's lower bound never
//!   changes, so a stale pointer still leads to a node left of (or holding)
//!   every key it once held.

use crate::sync::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// Entries per leaf.
pub(crate) const LEAF_CAP: usize = 30;
/// Separator keys per inner node (children: one more).
pub(crate) const INNER_CAP: usize = 30;

/// The first 16 bytes of every node.
#[repr(C)]
pub(crate) struct Header<L> {
    pub(crate) latch: L,
    /// Entries (leaf) or separator keys (inner). Written under the latch.
    count: AtomicU32,
    /// Set at creation, never changed: readers may look at it without the latch.
    leaf: bool,
}

/// A pointer to either node kind, through its header.
pub(crate) type NodePtr<L> = *mut Header<L>;

#[repr(C, align(64))]
pub(crate) struct Leaf<L> {
    pub(crate) h: Header<L>,
    keys: [AtomicU64; LEAF_CAP],
    values: [AtomicU64; LEAF_CAP],
    /// The right neighbour (null for the last leaf); for range scans.
    next: AtomicPtr<Leaf<L>>,
}

#[repr(C, align(64))]
pub(crate) struct Inner<L> {
    pub(crate) h: Header<L>,
    keys: [AtomicU64; INNER_CAP],
    children: [AtomicPtr<Header<L>>; INNER_CAP + 1],
}

/// What a leaf read produced: up to a leaf's worth of entries.
pub(crate) type Batch = [(u64, u64); LEAF_CAP];

impl<L> Header<L> {
    /// Entry count, clamped to capacity: an optimistic reader may see a
    /// count from a half-finished write and must still index in bounds.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        let cap = if self.leaf { LEAF_CAP } else { INNER_CAP };
        (self.count.load(Ordering::Relaxed) as usize).min(cap)
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.leaf
    }

    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.len() == if self.leaf { LEAF_CAP } else { INNER_CAP }
    }

    #[inline]
    fn set_len(&self, n: usize) {
        self.count.store(n as u32, Ordering::Relaxed);
    }

    /// # Safety
    /// `self` is the header of a live leaf (`is_leaf()`).
    #[inline]
    pub(crate) unsafe fn as_leaf(&self) -> &Leaf<L> {
        debug_assert!(self.leaf);
        // SAFETY: the caller guarantees this header starts a `Leaf<L>`
        // (`#[repr(C)]`, header first), so the cast stays in the allocation.
        unsafe { &*(self as *const Header<L> as *const Leaf<L>) }
    }

    /// # Safety
    /// `self` is the header of a live inner node (`!is_leaf()`).
    #[inline]
    pub(crate) unsafe fn as_inner(&self) -> &Inner<L> {
        debug_assert!(!self.leaf);
        // SAFETY: as in `as_leaf`, for `Inner<L>`.
        unsafe { &*(self as *const Header<L> as *const Inner<L>) }
    }
}

/// Asks the CPU to fetch the cache lines of `keys` in parallel before a
/// binary search touches them one after another (the footprint lesson of
/// the TSX paper; pB+-trees). A hint only: no effect on correctness.
#[inline(always)]
fn prefetch_keys(keys: &[AtomicU64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let base = keys.as_ptr() as *const i8;
        let bytes = std::mem::size_of_val(keys);
        let mut off = 0;
        while off < bytes {
            // SAFETY: a prefetch of an address inside `keys` (it never
            // faults and reads nothing architecturally visible).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(off)) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = keys;
}

fn atomic_keys<const N: usize>() -> [AtomicU64; N] {
    std::array::from_fn(|_| AtomicU64::new(0))
}

/// Places `node` in memory the tree frees with `Box::from_raw`: a block of
/// the calling thread's pool when pools are on (`transform`), else a new
/// `Box`.
fn place<T>(node: T) -> *mut T {
    const { assert!(std::mem::size_of::<T>() == 512 && std::mem::align_of::<T>() == 64) };
    if crate::transform::node_pools() {
        let p = crate::transform::alloc_pooled() as *mut T;
        if !p.is_null() {
            // SAFETY: a fresh block of `T`'s layout (512 bytes, 64-aligned,
            // checked above), owned by nobody else; `Box::from_raw` frees it
            // with the same layout.
            unsafe { p.write(node) };
            return p;
        }
    }
    Box::into_raw(Box::new(node))
}

impl<L: Default> Leaf<L> {
    pub(crate) fn new_boxed() -> NodePtr<L> {
        place(Leaf {
            h: Header {
                latch: L::default(),
                count: AtomicU32::new(0),
                leaf: true,
            },
            keys: atomic_keys(),
            values: atomic_keys(),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }) as NodePtr<L>
    }
}

impl<L> Leaf<L> {
    #[inline]
    pub(crate) fn key(&self, i: usize) -> u64 {
        self.keys[i].load(Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn value(&self, i: usize) -> u64 {
        self.values[i].load(Ordering::Relaxed)
    }

    /// Replaces the value at `i` (caller holds the latch exclusively).
    #[inline]
    pub(crate) fn set_value(&self, i: usize, v: u64) {
        self.values[i].store(v, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn next(&self) -> *mut Leaf<L> {
        // Acquire pairs with the Release in `split`: the neighbour is initialised.
        self.next.load(Ordering::Acquire)
    }

    /// `Ok(i)` if `key` is entry `i`, else `Err(i)` where it would go.
    #[inline]
    pub(crate) fn search(&self, key: u64) -> Result<usize, usize> {
        if crate::transform::linear_search() {
            return self.search_linear(key);
        }
        prefetch_keys(&self.keys);
        let (mut lo, mut hi) = (0, self.h.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let k = self.key(mid);
            if k < key {
                lo = mid + 1;
            } else if k > key {
                hi = mid;
            } else {
                return Ok(mid);
            }
        }
        Err(lo)
    }

    /// `search` by a linear scan (`transform::set_linear_search`).
    #[cold]
    fn search_linear(&self, key: u64) -> Result<usize, usize> {
        let n = self.h.len();
        for i in 0..n {
            let k = self.key(i);
            if k >= key {
                return if k == key { Ok(i) } else { Err(i) };
            }
        }
        Err(n)
    }

    /// Inserts at position `i` (from `search`); latch held exclusively, not full.
    pub(crate) fn insert_at(&self, i: usize, key: u64, value: u64) {
        let n = self.h.len();
        debug_assert!(n < LEAF_CAP && i <= n);
        for j in (i..n).rev() {
            self.keys[j + 1].store(self.key(j), Ordering::Relaxed);
            self.values[j + 1].store(self.value(j), Ordering::Relaxed);
        }
        self.keys[i].store(key, Ordering::Relaxed);
        self.values[i].store(value, Ordering::Relaxed);
        self.h.set_len(n + 1);
    }

    /// Removes entry `i`; latch held exclusively. Leaves are not merged.
    pub(crate) fn remove_at(&self, i: usize) {
        let n = self.h.len();
        debug_assert!(i < n);
        for j in i..n - 1 {
            self.keys[j].store(self.key(j + 1), Ordering::Relaxed);
            self.values[j].store(self.value(j + 1), Ordering::Relaxed);
        }
        self.h.set_len(n - 1);
    }

    /// Copies the entries with `from <= key <= hi` into `out`; returns how
    /// many, whether a key above `hi` was seen (the scan can stop), and the
    /// right neighbour.
    #[inline]
    pub(crate) fn collect(&self, from: u64, hi: u64, out: &mut Batch) -> (usize, bool, *mut Leaf<L>) {
        let start = match self.search(from) {
            Ok(i) | Err(i) => i,
        };
        let n = self.h.len();
        let mut m = 0;
        let mut past = false;
        for i in start..n {
            let k = self.key(i);
            if k > hi {
                past = true;
                break;
            }
            out[m] = (k, self.value(i));
            m += 1;
        }
        (m, past, self.next())
    }
}

impl<L: Default> Leaf<L> {
    /// Moves the upper half into a new right neighbour and links it in.
    /// Latch held exclusively; the leaf is full. Returns the separator (the
    /// new leaf's first key) and the new leaf.
    pub(crate) fn split(&self) -> (u64, NodePtr<L>) {
        let n = self.h.len();
        let mid = n / 2;
        let right_ptr = Leaf::<L>::new_boxed();
        // SAFETY: just allocated, not yet reachable by anybody else.
        let right = unsafe { (*right_ptr).as_leaf() };
        for j in mid..n {
            right.keys[j - mid].store(self.key(j), Ordering::Relaxed);
            right.values[j - mid].store(self.value(j), Ordering::Relaxed);
        }
        right.h.set_len(n - mid);
        right.next.store(self.next.load(Ordering::Relaxed), Ordering::Relaxed);
        self.h.set_len(mid);
        // Release pairs with the Acquire in `next()`: a scanner that finds
        // the new leaf finds it initialised.
        self.next.store(right_ptr as *mut Leaf<L>, Ordering::Release);
        (right.key(0), right_ptr)
    }
}

impl<L: Default> Inner<L> {
    /// A new root above a split old root: `[left] sep [right]`.
    pub(crate) fn new_root(left: NodePtr<L>, sep: u64, right: NodePtr<L>) -> NodePtr<L> {
        let node = Self::empty();
        // SAFETY: just allocated, not yet reachable by anybody else.
        let inner = unsafe { (*node).as_inner() };
        inner.keys[0].store(sep, Ordering::Relaxed);
        inner.children[0].store(left, Ordering::Relaxed);
        inner.children[1].store(right, Ordering::Relaxed);
        inner.h.set_len(1);
        node
    }

    fn empty() -> NodePtr<L> {
        place(Inner {
            h: Header {
                latch: L::default(),
                count: AtomicU32::new(0),
                leaf: false,
            },
            keys: atomic_keys(),
            children: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
        }) as NodePtr<L>
    }

    /// Moves the upper half into a new inner node; the middle key moves up.
    /// Latch held exclusively; the node is full.
    pub(crate) fn split(&self) -> (u64, NodePtr<L>) {
        let n = self.h.len();
        let mid = n / 2;
        let right_ptr = Self::empty();
        // SAFETY: just allocated, not yet reachable by anybody else.
        let right = unsafe { (*right_ptr).as_inner() };
        for j in mid + 1..n {
            right.keys[j - mid - 1].store(self.key(j), Ordering::Relaxed);
        }
        for j in mid + 1..=n {
            right.children[j - mid - 1].store(self.children[j].load(Ordering::Relaxed), Ordering::Relaxed);
        }
        right.h.set_len(n - mid - 1);
        let sep = self.key(mid);
        self.h.set_len(mid);
        (sep, right_ptr)
    }
}

impl<L> Inner<L> {
    #[inline]
    pub(crate) fn key(&self, i: usize) -> u64 {
        self.keys[i].load(Ordering::Relaxed)
    }

    /// Index of the child whose range holds `key`: the number of separators
    /// `<= key` (binary search).
    #[inline]
    pub(crate) fn child_index(&self, key: u64) -> usize {
        if crate::transform::linear_search() {
            return self.child_index_linear(key);
        }
        prefetch_keys(&self.keys);
        let (mut lo, mut hi) = (0, self.h.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// `child_index` by a linear scan (`transform::set_linear_search`).
    #[cold]
    fn child_index_linear(&self, key: u64) -> usize {
        let n = self.h.len();
        (0..n).find(|&i| self.key(i) > key).unwrap_or(n)
    }

    /// Child `i`; null only in a torn optimistic read.
    #[inline]
    pub(crate) fn child(&self, i: usize) -> NodePtr<L> {
        // Acquire pairs with the Release in `insert_child`/`new_root`'s
        // publication: the child is initialised.
        self.children[i].load(Ordering::Acquire)
    }

    /// After child `i` split into itself and `right` at `sep`: inserts `sep`
    /// at `i` and `right` at `i + 1`. Latch held exclusively, not full.
    pub(crate) fn insert_child(&self, i: usize, sep: u64, right: NodePtr<L>) {
        let n = self.h.len();
        debug_assert!(n < INNER_CAP && i <= n);
        for j in (i..n).rev() {
            self.keys[j + 1].store(self.key(j), Ordering::Relaxed);
        }
        for j in (i + 1..=n).rev() {
            self.children[j + 1].store(self.children[j].load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.keys[i].store(sep, Ordering::Relaxed);
        // Release: `right` is initialised before anybody can load it here.
        self.children[i + 1].store(right, Ordering::Release);
        self.h.set_len(n + 1);
    }
}

/// Splits a full node of either kind.
///
/// # Safety
/// `node` is live and its latch is held exclusively by the caller.
pub(crate) unsafe fn split<L: Default>(node: NodePtr<L>) -> (u64, NodePtr<L>) {
    // SAFETY: live (caller); the kind decides the cast.
    unsafe {
        let h = &*node;
        if h.is_leaf() {
            h.as_leaf().split()
        } else {
            h.as_inner().split()
        }
    }
}

/// Frees `root` and everything below it.
///
/// # Safety
/// Nobody else can reach these nodes any more (the tree is being dropped).
pub(crate) unsafe fn free_tree<L>(root: NodePtr<L>) {
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        // SAFETY: each node is reachable from exactly one parent slot, so it
        // is visited and freed once; its kind decides the layout to free.
        unsafe {
            if (*p).is_leaf() {
                drop(Box::from_raw(p as *mut Leaf<L>));
            } else {
                let inner = (*p).as_inner();
                for i in 0..=inner.h.len() {
                    stack.push(inner.child(i));
                }
                drop(Box::from_raw(p as *mut Inner<L>));
            }
        }
    }
}

const _: () = {
    assert!(std::mem::size_of::<Leaf<u64>>() == 512);
    assert!(std::mem::size_of::<Inner<u64>>() == 512);
};
