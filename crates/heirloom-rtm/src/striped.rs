//! A counter for a path that many threads take rarely but at the same time.
//!
//! Optimistic lock coupling counts its failed attempts and fallbacks, and
//! elision its commits and aborts; failures
//! come exactly when threads collide, and commits on every operation, so one shared counter
//! would add a contended cache line to every collision. Each thread instead
//! adds to its own stripe (one cache line each; threads beyond
//! [`STRIPES`] share stripes round-robin) and a read sums the stripes.
//! crossbeam has no such counter; it is a dozen lines.

use crossbeam_utils::CachePadded;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stripes per counter: one per thread up to this many threads.
pub const STRIPES: usize = 32;

static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's stripe, handed out round-robin at its first use.
    static STRIPE: usize = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
}

/// A striped `u64` counter: [`add`](Self::add) touches only the caller's
/// stripe, [`sum`](Self::sum) reads them all.
pub struct Striped {
    stripes: Box<[CachePadded<AtomicU64>; STRIPES]>,
}

impl Default for Striped {
    fn default() -> Self {
        Self::new()
    }
}

impl Striped {
    /// A counter at zero.
    pub fn new() -> Self {
        Striped {
            stripes: Box::new(std::array::from_fn(|_| CachePadded::new(AtomicU64::new(0)))),
        }
    }

    /// Adds `n` to the calling thread's stripe.
    #[inline]
    pub fn add(&self, n: u64) {
        // A thread being torn down (no thread-locals left) uses stripe 0.
        let i = STRIPE.try_with(|s| *s).unwrap_or(0);
        self.stripes[i].fetch_add(n, Ordering::Relaxed);
    }

    /// The total over all stripes (not a snapshot: adds running meanwhile
    /// may or may not be counted).
    pub fn sum(&self) -> u64 {
        self.stripes.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

impl std::fmt::Debug for Striped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Striped").field(&self.sum()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_from_many_threads_all_count() {
        let c = Striped::new();
        std::thread::scope(|s| {
            for _ in 0..(STRIPES + 3) {
                s.spawn(|| {
                    for _ in 0..1000 {
                        c.add(1);
                    }
                });
            }
        });
        assert_eq!(c.sum(), (STRIPES as u64 + 3) * 1000);
    }
}
