//! The TSX paper's transformations, as process-wide switches so that their
//! effect can be measured (`index` bench `--search`, `--alloc`; `heirloom
//! figures tsx-index`): they matter where a hardware transaction's
//! footprint and its conflicts decide whether it commits.
//!
//! - **Node search** ([`set_linear_search`]): binary (the default: about
//!   five of a node's keys read, O(log n) lines) or linear (every key up to
//!   the one sought: more lines in the transaction's read set, the paper's
//!   cause of capacity aborts).
//! - **Node allocation** ([`set_node_pools`]): the global allocator (the
//!   default) or a pool per thread. A split inside a transaction that calls
//!   the allocator touches the allocator's shared state (and may make a
//!   system call, which aborts); a thread's own pool of preallocated nodes
//!   is memory no other thread writes. Pooled nodes are ordinary 512-byte,
//!   64-aligned allocations, freed with the tree like any other node; a
//!   thread's unused pool is freed when the thread exits.
//!
//! Both are read on every search or allocation (a relaxed load of a line
//! nobody writes while a measurement runs); set them before building the
//! trees an experiment compares, not while operations run (a change is
//! safe at any time, but the operations in flight may use either setting).

use std::alloc::Layout;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

static LINEAR: AtomicBool = AtomicBool::new(false);
static POOLS: AtomicBool = AtomicBool::new(false);

/// Searches nodes linearly (`true`) or by binary search (`false`, the
/// default).
pub fn set_linear_search(on: bool) {
    LINEAR.store(on, Ordering::Relaxed);
}

/// Whether nodes are searched linearly.
#[inline]
pub fn linear_search() -> bool {
    LINEAR.load(Ordering::Relaxed)
}

/// Allocates new nodes from a pool per thread (`true`) or from the global
/// allocator (`false`, the default).
pub fn set_node_pools(on: bool) {
    POOLS.store(on, Ordering::Relaxed);
}

/// Whether new nodes come from per-thread pools.
#[inline]
pub fn node_pools() -> bool {
    POOLS.load(Ordering::Relaxed)
}

/// Every node's layout (both kinds are 512 bytes, 64-aligned; `node.rs`
/// checks it).
pub(crate) const NODE: Layout = match Layout::from_size_align(512, 64) {
    Ok(l) => l,
    Err(_) => panic!("node layout"),
};

/// Nodes a pool fetches from the allocator at a time.
const REFILL: usize = 32;

/// A thread's pool: blocks of [`NODE`] layout, freed at thread exit.
struct Pool(Vec<*mut u8>);

impl Drop for Pool {
    fn drop(&mut self) {
        for &p in &self.0 {
            // SAFETY: allocated by `alloc_pooled` with `NODE`, never handed out.
            unsafe { std::alloc::dealloc(p, NODE) };
        }
    }
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool(Vec::new())) };
}

/// Memory for one node from the calling thread's pool (refilled from the
/// allocator when empty); null if the allocator fails or the thread is
/// being torn down (the caller then allocates as usual).
pub(crate) fn alloc_pooled() -> *mut u8 {
    POOL.try_with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.0.is_empty() {
            for _ in 0..REFILL {
                // SAFETY: `NODE` has a non-zero size.
                let p = unsafe { std::alloc::alloc(NODE) };
                if p.is_null() {
                    break;
                }
                pool.0.push(p);
            }
        }
        pool.0.pop().unwrap_or(std::ptr::null_mut())
    })
    .unwrap_or(std::ptr::null_mut())
}

#[cfg(test)]
mod tests {
    #[test]
    fn pooled_blocks_have_the_node_layout_and_are_distinct() {
        let a = super::alloc_pooled();
        let b = super::alloc_pooled();
        assert!(!a.is_null() && !b.is_null() && a != b);
        assert_eq!(a as usize % 64, 0);
        // SAFETY: handed out by the pool with `NODE`, used by nobody.
        unsafe {
            std::alloc::dealloc(a, super::NODE);
            std::alloc::dealloc(b, super::NODE);
        }
    }
}
