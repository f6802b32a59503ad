//! [`HandleLatch`]: the try-only latch of an object whose handles outlive
//! it, as the C interface's agent handles outlive a freed agent whose
//! memory a new one reuses.

use crate::sync::{AtomicU32, Ordering};

/// A try-only latch whose word is a *generation* and a *held* bit, for an
/// object reached through handles that may be stale: each handle carries
/// the generation it was given out in, a caller takes the latch only with
/// the current one, and the holder may end the generation
/// ([`HandleLatch::retire`]), after which every handle given out so far is
/// refused. The check and the taking are one compare-and-swap on one word,
/// so a stale handle never holds the latch, not even for a moment. (With a
/// separate held flag, a caller that looked at the generation, took the
/// flag and then looked again could hold, between its two looks, the flag
/// of an object reused meanwhile, and the new owner's own call would be
/// refused as if two threads were inside.)
///
/// There is no waiting `lock`: a caller that finds the latch held is told
/// so ([`Refused::Held`]) and decides (the C interface refuses the call).
///
/// The generation has 31 bits and wraps; a caller that keeps fewer bits
/// of it in its handles passes their mask, and a stale handle is then
/// refused until the generation has come round to its bits again.
#[derive(Debug, Default)]
pub struct HandleLatch {
    /// `generation << 1 | held`.
    word: AtomicU32,
}

/// Why [`HandleLatch::try_lock`] did not take the latch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The handle's generation is not the current one.
    Stale,
    /// The generation is current and the latch is held.
    Held,
}

impl HandleLatch {
    const HELD: u32 = 1;

    crate::const_unless_loom! {
        /// A free latch in generation 0.
        pub fn new() -> Self {
            HandleLatch {
                word: AtomicU32::new(0),
            }
        }
    }

    /// The current generation (a snapshot; exact for the holder, and for
    /// the owner of an object nobody else has a handle to yet).
    #[inline]
    pub fn generation(&self) -> u32 {
        self.word.load(Ordering::Relaxed) >> 1
    }

    /// Takes the latch if the current generation's bits under `mask`
    /// are `generation`'s and the latch is free.
    #[inline]
    pub fn try_lock(&self, generation: u32, mask: u32) -> Result<(), Refused> {
        // Relaxed: the compare-and-swap below decides.
        let w = self.word.load(Ordering::Relaxed);
        let current = |w: u32| (w >> 1) & mask == generation & mask;
        if !current(w) {
            return Err(Refused::Stale);
        }
        // Acquire: the previous holder's writes happen before ours.
        match self
            .word
            .compare_exchange(w & !Self::HELD, w | Self::HELD, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Ok(()),
            Err(now) if current(now) => Err(Refused::Held),
            Err(_) => Err(Refused::Stale),
        }
    }

    /// Gives the latch back, in the same generation.
    ///
    /// # Safety
    /// The caller holds the latch.
    #[inline]
    pub unsafe fn unlock(&self) {
        // Relaxed: only the holder writes the word (every other caller's
        // compare-and-swap fails on the held bit without a write).
        let w = self.word.load(Ordering::Relaxed);
        // Release: pairs with the next holder's Acquire.
        self.word.store(w & !Self::HELD, Ordering::Release);
    }

    /// Ends the generation and gives the latch back: from now on every
    /// handle of the generation that ends is refused ([`Refused::Stale`]),
    /// and the next holder is a caller of the new one.
    ///
    /// # Safety
    /// The caller holds the latch.
    #[inline]
    pub unsafe fn retire(&self) {
        // Relaxed: as in `unlock`.
        let w = self.word.load(Ordering::Relaxed);
        // Release: as in `unlock`; wraps after 2^31 generations.
        self.word.store(w.wrapping_add(2) & !Self::HELD, Ordering::Release);
    }

    /// Whether the latch is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & Self::HELD != 0
    }
}

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    use super::{HandleLatch, Refused};

    const MASK: u32 = (1 << 23) - 1;

    #[test]
    fn a_handle_of_the_current_generation_takes_it_once_and_a_retired_one_never() {
        let l = HandleLatch::new();
        assert_eq!(l.generation(), 0);
        assert_eq!(l.try_lock(0, MASK), Ok(()));
        assert!(l.is_locked());
        assert_eq!(l.try_lock(0, MASK), Err(Refused::Held));
        assert_eq!(l.try_lock(1, MASK), Err(Refused::Stale));
        // SAFETY: held (taken above).
        unsafe { l.unlock() };
        assert!(!l.is_locked());
        assert_eq!(l.try_lock(0, MASK), Ok(()));
        // SAFETY: held.
        unsafe { l.retire() };
        assert!(!l.is_locked());
        assert_eq!(l.generation(), 1);
        assert_eq!(l.try_lock(0, MASK), Err(Refused::Stale));
        assert_eq!(l.try_lock(1, MASK), Ok(()));
        // A stale handle is refused even while the latch is held.
        assert_eq!(l.try_lock(0, MASK), Err(Refused::Stale));
        // SAFETY: held.
        unsafe { l.unlock() };
    }

    /// A handle keeps only the generation's bits under its mask: it is
    /// refused until the generation comes round to them again, and the
    /// generation itself wraps after 2^31.
    #[test]
    fn generations_wrap_under_the_mask_and_the_word() {
        let l = HandleLatch::new();
        for _ in 0..4 {
            assert_eq!(l.try_lock(l.generation(), 3), Ok(()));
            // SAFETY: held.
            unsafe { l.retire() };
        }
        assert_eq!(l.generation(), 4);
        // Generation 0's handle, 2 bits kept: current again.
        assert_eq!(l.try_lock(0, 3), Ok(()));
        // SAFETY: held.
        unsafe { l.unlock() };
        let top = HandleLatch {
            word: crate::sync::AtomicU32::new(!1),
        };
        assert_eq!(top.generation(), (1 << 31) - 1);
        assert_eq!(top.try_lock((1 << 31) - 1, u32::MAX), Ok(()));
        // SAFETY: held.
        unsafe { top.retire() };
        assert_eq!(top.generation(), 0);
        assert!(!top.is_locked());
    }
}
