//! The heat window of a bucket (`Bucket::heat`): acquisitions note
//! whether they found their lock contended (`acquire.rs`), and speculative
//! lock inheritance reads it at commit (`inheritance.rs`). Below both.

use super::*;

/// A tag of `id` for the bucket's heat word (see `Bucket::heat`).
#[inline]
pub(super) fn heat_tag(id: LockId) -> u64 {
    id.hash64() >> 32
}

impl<const SWAP: bool> LatchFree<SWAP> {
    /// The heat window of `q`'s lock: the bucket's, if it is that lock's,
    /// else cold.
    #[inline]
    pub(super) fn heat_window(b: &Bucket, q: &Request) -> u16 {
        let id = LockId::from_words(q.key.load(Ordering::Relaxed), q.hi.load(Ordering::Relaxed));
        let h = b.heat.load(Ordering::Relaxed);
        if h >> 32 == heat_tag(id) { h as u16 } else { 0 }
    }

    /// Notes an acquisition of `id` in the heat window of its bucket (only
    /// for locks above row level: see the module docs).
    #[inline]
    pub(super) fn note_heat(&self, b: &Bucket, id: LockId, hot: bool) {
        if id.level() == Level::Row {
            return;
        }
        // Relaxed and racy: a lost update only blurs a heuristic. Written
        // only when it changes, so a steadily hot or cold lock costs no
        // shared write.
        let tag = heat_tag(id);
        let h = b.heat.load(Ordering::Relaxed);
        let window = if h >> 32 == tag { h as u16 } else { 0 };
        let n = tag << 32 | inherit::note_heat(window, hot) as u64;
        if n != h {
            b.heat.store(n, Ordering::Relaxed);
        }
    }
}
