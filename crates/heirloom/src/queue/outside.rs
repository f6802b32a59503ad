//! Holds of a lock granted outside its queue: the fast paths' holds
//! (`table/fast.rs`), which a queue counts as granted to their
//! transactions. The queue reaches them through [`Outside`], a pointer to
//! the table's [`OutsideHolds`] and the lock's slot there.

use super::Blocker;
use crate::mode::Mode;

/// Holds of a lock granted outside its queue, which the queue's grant rules
/// count as granted to the transactions holding them: the latched table's
/// intention-lock fast path (`table/fast.rs`, which says why the protocol
/// is sound). `slot` and `words` name the lock.
pub(crate) trait OutsideHolds: Sync {
    /// Closes the lock's word to fast acquisitions (under the queue's latch)
    /// for a strong request of `agent`.
    fn close(&self, slot: usize, agent: u32) -> Strong;
    /// Opens it again (`how`: what `close` returned to `agent`).
    fn open(&self, slot: usize, agent: u32, how: Strong);
    /// Are holds of other agents than `agent`'s in the way of `mode`?
    /// Meaningful while the word is closed.
    fn in_way(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32) -> bool;
    /// Appends the transactions (other than `agent`'s) holding in a mode in
    /// the way of `mode`.
    fn holders(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32, out: &mut Vec<Blocker>);
    /// One of them, if there is one now.
    fn blocker(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32) -> Option<Blocker>;
    /// One of them whose transaction is older than `age`, if there is one
    /// now (wait-die).
    fn older(&self, slot: usize, words: (u64, u64), mode: Mode, agent: u32, age: u64) -> Option<Blocker>;
}

/// How a strong request (one that conflicts with fast holds) is known to
/// the fast path: counted in its lock's word, or registered in its
/// agent's own record (a row's drained stripe: `table/fast/rows.rs`), or
/// not at all, because the row side's switch was off when it came (no
/// fast hold exists, and none is granted before its transaction ends:
/// `rows.rs`, "The switch").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Strong {
    Counted,
    Registered,
    Uncounted,
}

/// Where a queue's lock has holds outside it (see [`OutsideHolds`]). The
/// lock's words come from the request asked about (each request the
/// latched table links carries them), which keeps `Queue` within its
/// bytes.
#[derive(Clone, Copy)]
pub(crate) struct Outside {
    holds: *const dyn OutsideHolds,
    slot: u32,
    /// While the queue keeps the word closed: how the strong request that
    /// closed it is known to the fast path, and its agent if it registered
    /// in that agent's record.
    closer: u16,
    how: Strong,
    /// The strongest mode held outside: requests that conflict with it
    /// close the word.
    pub(super) top: Mode,
}

impl std::fmt::Debug for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Outside(slot {})", self.slot)
    }
}

// SAFETY: an `Outside` is a shared reference to an `OutsideHolds`, which is
// `Sync`, and outlives it (the contract of `Outside::new`).
unsafe impl Send for Outside {}
// SAFETY: as above.
unsafe impl Sync for Outside {}

impl Outside {
    /// The holds of lock `slot` of `holds`, in modes up to `top`.
    ///
    /// The holds' type has no borrowed parts (`+ 'static`), so the pointer
    /// drops only the borrow's lifetime, which the contract stands in for.
    ///
    /// # Safety
    /// `holds` outlives every copy of the result (the latched table owns
    /// its `Fast` and frees its heads, whose queues keep these, first).
    #[inline]
    pub(crate) unsafe fn new(holds: &(dyn OutsideHolds + 'static), slot: usize, top: Mode) -> Self {
        Outside {
            holds: std::ptr::from_ref(holds),
            slot: u32::try_from(slot).expect("a fast-path slot fits 32 bits"),
            closer: 0,
            how: Strong::Counted,
            top,
        }
    }

    #[inline]
    fn holds(&self) -> &dyn OutsideHolds {
        // SAFETY: alive while `self` is (the contract of `new`).
        unsafe { &*self.holds }
    }

    /// Closes the word for a strong request of `agent`, keeping how;
    /// `false` if the request was not counted ([`Strong::Uncounted`]: the
    /// word stays as it was, and the queue open, so that its next strong
    /// request asks again).
    #[inline]
    pub(super) fn close(&mut self, agent: u32) -> bool {
        self.how = self.holds().close(self.slot as usize, agent);
        if self.how == Strong::Registered {
            // An agent with a record (`fast::AGENTS`) fits.
            self.closer = u16::try_from(agent).expect("agents with a fast-path record fit 16 bits");
        }
        self.how != Strong::Uncounted
    }

    #[inline]
    pub(super) fn open(&self) {
        self.holds().open(self.slot as usize, u32::from(self.closer), self.how);
    }

    /// A word closed by a registration has no fast hold to be in the way:
    /// a strong request registers only on a drained stripe, which stays
    /// drained while it is registered (`table/fast/rows.rs`).
    #[inline]
    pub(super) fn in_way(&self, words: (u64, u64), mode: Mode, agent: u32) -> bool {
        self.how == Strong::Counted && self.holds().in_way(self.slot as usize, words, mode, agent)
    }

    pub(super) fn holders(&self, words: (u64, u64), mode: Mode, agent: u32, out: &mut Vec<Blocker>) {
        self.holds().holders(self.slot as usize, words, mode, agent, out);
    }

    pub(super) fn blocker(&self, words: (u64, u64), mode: Mode, agent: u32) -> Option<Blocker> {
        self.holds().blocker(self.slot as usize, words, mode, agent)
    }

    pub(super) fn older(&self, words: (u64, u64), mode: Mode, agent: u32, age: u64) -> Option<Blocker> {
        self.holds().older(self.slot as usize, words, mode, agent, age)
    }
}
