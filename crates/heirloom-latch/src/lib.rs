//! heirloom-latch: the workspace's mutex-shaped latches, one family behind
//! one trait, and the one loom shim every crate of the workspace builds on.
//!
//! A latch guards shared memory for the nanoseconds of one step (a lock
//! queue's update, an index node's read or split); it is not a lock, which
//! guards data until commit and lives in the `heirloom` crate. Three
//! latches, three trade-offs:
//!
//! | latch        | taken by          | given back by               | a waiter                       | used by |
//! |--------------|-------------------|-----------------------------|--------------------------------|---------|
//! | [`RawLatch`] | one CAS           | one store, then a look at a separate `parked` word (asymmetric fence) | spins briefly, then parks | the latched lock table's heads and buckets |
//! | [`SpinLatch`]| one CAS           | one CAS (a second if somebody parked) | spins, yields, then parks | the B+tree's spin-latch protocol |
//! | [`SpinLock`] | one CAS           | one store                   | spins and yields, never parks  | elided sections' fallback (the TSX paper's spin lock) |
//!
//! Each implements [`RawMutex`], which is `lock_api`'s trait: its rules
//! (mutual exclusion, Acquire on taking, Release on giving back) are
//! written once there, a latch can back a `lock_api::Mutex`, and the tests
//! in this crate run every latch through the same checks. Each also has
//! the same operations as inherent methods (`lock`, `try_lock`, `unlock`,
//! `is_locked`), which the other crates call: under loom, `RawMutex` is a
//! stand-in without `lock_api`'s `const INIT` (loom's atomics have no
//! `const` constructor), so only code written against the inherent
//! methods builds both ways.
//!
//! A fourth latch is not mutex-shaped: [`HandleLatch`], taken only by a
//! caller holding the current generation of the object it guards and
//! never waited for (one CAS of a word that is the generation and the held
//! bit; one store gives it back or ends the generation). The C interface's
//! agent handles use it, since they outlive the agent they name.
//!
//! The B+tree's version latch (optimistic readers, a version word) and
//! reader/writer latch (parking_lot's) are not mutex-shaped and stay with
//! the tree; they park through [`sync`] as these do.
//!
//! [`sync`] names every atomic, fence, parking call and spin-wait the
//! workspace uses, from `std` and `parking_lot_core` normally and from
//! loom under `--cfg heirloom_loom`; `heirloom` and `heirloom-btree`
//! import it instead of writing their own.

#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

mod handle;
mod raw;
mod spin;
pub mod sync;

pub use handle::{HandleLatch, Refused};
pub use raw::RawLatch;
pub use spin::{SpinLatch, SpinLock};

/// The family's trait: `lock_api::RawMutex` (its safety rules are the
/// latches' contract).
#[cfg(not(heirloom_loom))]
pub use lock_api::RawMutex;

/// The family's guard state: none (any thread may give a latch back).
#[cfg(not(heirloom_loom))]
pub use lock_api::GuardSend;

/// Under loom: `lock_api::RawMutex` without `INIT` (loom's atomics cannot
/// be built in a `const`), so that the tests written against the trait run
/// as models too.
///
/// # Safety
/// As `lock_api::RawMutex`: mutual exclusion, Acquire on a successful
/// lock, Release on unlock.
#[cfg(heirloom_loom)]
pub unsafe trait RawMutex {
    /// Per-acquisition state.
    type Guard;
    /// Takes the latch, waiting while it is held.
    fn lock(&self) -> Self::Guard;
    /// Takes the latch if it is free.
    fn try_lock(&self) -> Option<Self::Guard>;
    /// Gives the latch back.
    ///
    /// # Safety
    /// The caller holds it, by `guard`.
    unsafe fn unlock(&self, guard: Self::Guard);
    /// Whether the latch is held (a snapshot).
    fn is_locked(&self) -> bool;
}

/// Under loom: the guard state, a marker.
#[cfg(heirloom_loom)]
#[derive(Debug, Default)]
pub struct GuardSend(());

#[cfg(heirloom_loom)]
impl GuardSend {
    /// The marker.
    pub const fn new() -> Self {
        GuardSend(())
    }
}

/// Implements [`RawMutex`] for a latch by its inherent `lock`, `try_lock`,
/// `unlock` and `is_locked` (and `INIT` by `$init`, outside loom).
macro_rules! raw_mutex {
    ($t:ty, $init:expr) => {
        // SAFETY: forwards to the latch's own operations, whose module
        // argues mutual exclusion and the Acquire/Release pairing.
        unsafe impl $crate::RawMutex for $t {
            #[cfg(not(heirloom_loom))]
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = $init;
            type Guard = $crate::GuardSend;
            #[inline]
            fn lock(&self) -> $crate::GuardSend {
                <$t>::lock(self);
                $crate::GuardSend::new()
            }
            #[inline]
            fn try_lock(&self) -> Option<$crate::GuardSend> {
                <$t>::try_lock(self).then($crate::GuardSend::new)
            }
            #[inline]
            unsafe fn unlock(&self, _guard: $crate::GuardSend) {
                // SAFETY: the caller holds the latch (the trait's contract).
                unsafe { <$t>::unlock(self) }
            }
            #[inline]
            fn is_locked(&self) -> bool {
                <$t>::is_locked(self)
            }
        }
    };
}
pub(crate) use raw_mutex;

/// A constructor that is `const` in normal builds and a plain `fn` under
/// loom (whose atomics have no `const` constructor), from one body.
macro_rules! const_unless_loom {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$m])*
        #[cfg(not(heirloom_loom))]
        $vis const fn $name($($arg: $ty),*) -> $ret $body

        $(#[$m])*
        #[cfg(heirloom_loom)]
        $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_unless_loom;

#[cfg(test)]
mod tests;
