//! Agent shells: how a freed agent's memory is reused and how its handle
//! tells a freed agent from the live one that reuses the memory (a
//! generation in the pointer bits the shell's address leaves free; the
//! crate docs, "Handles"); and where freed managers' handles are kept.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use heirloom_latch::HandleLatch;

use super::{AgentState, MAGIC_LIVE, heirloom_agent, heirloom_manager};

/// Bits of a shell's generation an agent handle carries: the low bits its
/// 128-byte alignment leaves zero, and on 64-bit targets the top 16 bits of
/// a user-space address (below 2^48; `high`).
const LOW_BITS: u32 = 7;
const GENERATION_BITS: u32 = LOW_BITS + high::BITS;
const LOW_MASK: usize = (1 << LOW_BITS) - 1;
const _: () = assert!(std::mem::align_of::<heirloom_agent>() == 1 << LOW_BITS);

/// The top bits of a 64-bit handle: the generation's bits above the low
/// ones.
#[cfg(target_pointer_width = "64")]
mod high {
    use super::LOW_BITS;

    pub(super) const BITS: u32 = 16;
    const SHIFT: u32 = 64 - BITS;
    /// The address bits a handle's top bits leave.
    pub(super) const ADDRESS: usize = (1 << SHIFT) - 1;

    pub(super) fn put(g: usize) -> usize {
        (g >> LOW_BITS) << SHIFT
    }

    pub(super) fn take(v: usize) -> usize {
        (v >> SHIFT) << LOW_BITS
    }
}

/// Elsewhere an address has no bits to spare at the top.
#[cfg(not(target_pointer_width = "64"))]
mod high {
    pub(super) const BITS: u32 = 0;
    pub(super) const ADDRESS: usize = usize::MAX;

    pub(super) fn put(_: usize) -> usize {
        0
    }

    pub(super) fn take(_: usize) -> usize {
        0
    }
}

/// The address bits of a shell handle: neither tag part.
const fn address_mask() -> usize {
    !LOW_MASK & high::ADDRESS
}

/// The bits of a shell's generation that its handles carry.
pub(crate) const GENERATION_MASK: u32 = (1 << GENERATION_BITS) - 1;

/// A shell's generation as a handle carries it.
fn generation_bits(g: u32) -> usize {
    (g & GENERATION_MASK) as usize
}

/// The handle of the shell at `shell` in generation `g`.
pub(crate) fn agent_handle(shell: *mut heirloom_agent, g: u32) -> *mut heirloom_agent {
    let g = generation_bits(g);
    (shell as usize | (g & LOW_MASK) | high::put(g)) as *mut heirloom_agent
}

/// The shell a handle names, and the generation it carries.
#[inline(always)]
pub(crate) fn shell(a: *const heirloom_agent) -> (*const heirloom_agent, u32) {
    let v = a as usize;
    (
        (v & address_mask()) as *const heirloom_agent,
        // At most GENERATION_BITS (23) bits: no truncation.
        ((v & LOW_MASK) | high::take(v)) as u32,
    )
}

/// Freed agent shells, oldest first, for `heirloom_agent_new` to reuse.
static FREE_SHELLS: Mutex<VecDeque<Shell>> = Mutex::new(VecDeque::new());

/// A freed shell's address, kept for reuse.
struct Shell(*mut heirloom_agent);
// SAFETY: a dead shell, owned by the free list until it is reused.
unsafe impl Send for Shell {}

/// A live shell holding `state`: the oldest freed one, or a new one.
/// `None` (and `state`'s agent freed) if a new shell's address has bits
/// its handle needs for the generation (above 2^48).
pub(crate) fn live(state: AgentState) -> Option<*mut heirloom_agent> {
    let reused = FREE_SHELLS.lock().map_or(None, |mut f| f.pop_front());
    if let Some(Shell(p)) = reused {
        // SAFETY: a dead shell from the free list: no call uses its state
        // (its generation has ended, so a stale handle's claim is refused
        // by the entry latch without taking it; nobody has a handle of
        // the new generation yet).
        unsafe {
            *(*p).state.get() = state;
            // Release: the state is written before anybody can see the
            // shell live.
            (*p).magic.store(MAGIC_LIVE, Ordering::Release);
        }
        return Some(p);
    }
    let b = Box::new(heirloom_agent {
        magic: AtomicU32::new(MAGIC_LIVE),
        entry: HandleLatch::new(),
        state: UnsafeCell::new(state),
    });
    if std::ptr::from_ref(&*b) as usize & !address_mask() != 0 {
        let st = b.state.into_inner();
        // SAFETY: from `Box::into_raw` in `heirloom_agent_new`; never shared.
        drop(unsafe { Box::from_raw(st.agent) });
        return None;
    }
    Some(Box::into_raw(b))
}

/// Keeps the freed (dead, generation bumped) shell `h` for reuse.
pub(crate) fn free(h: &heirloom_agent) {
    if let Ok(mut f) = FREE_SHELLS.lock() {
        f.push_back(Shell(std::ptr::from_ref(h).cast_mut()));
    }
}

/// A freed manager's handle, kept (never reused: see `manager`).
struct Retired(#[allow(dead_code)] *mut heirloom_manager);

// SAFETY: only kept, never dereferenced through the list.
unsafe impl Send for Retired {}

/// The freed managers' handles. Their memory stays allocated so that a
/// freed handle is recognised; keeping their addresses here keeps them
/// reachable, so leak checkers (LeakSanitizer, valgrind) see memory the
/// library still holds, not memory lost.
static RETIRED: Mutex<Vec<Retired>> = Mutex::new(Vec::new());

pub(crate) fn retire(m: *mut heirloom_manager) {
    // A poisoned list (a panic while pushing) still takes the handle.
    let mut r = RETIRED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    r.push(Retired(m));
}
