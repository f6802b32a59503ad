//! Agent shells: how a freed agent's memory is reused and how its handle
//! tells a freed agent from the live one that reuses the memory (a
//! generation in the pointer bits the shell's address leaves free; the
//! crate docs, "Handles").

use super::heirloom_agent;

/// Bits of a shell's generation an agent handle carries: the low bits its
/// 128-byte alignment leaves zero, and on 64-bit targets the top 16 bits of
/// a user-space address (below 2^48).
pub(crate) const LOW_BITS: u32 = 7;
const HIGH_SHIFT: u32 = if usize::BITS == 64 { 48 } else { usize::BITS };
const HIGH_BITS: u32 = usize::BITS - HIGH_SHIFT;
const GENERATION_BITS: u32 = LOW_BITS + HIGH_BITS;
const LOW_MASK: usize = (1 << LOW_BITS) - 1;
const _: () = assert!(std::mem::align_of::<heirloom_agent>() == 1 << LOW_BITS);

/// The address bits of a shell handle: neither tag part.
pub(crate) const fn address_mask() -> usize {
    if HIGH_BITS == 0 {
        !LOW_MASK
    } else {
        !LOW_MASK & ((1 << HIGH_SHIFT) - 1)
    }
}

/// A shell's generation as a handle carries it.
pub(crate) fn generation_bits(g: u32) -> usize {
    (g as usize) & ((1usize << GENERATION_BITS) - 1)
}

/// The handle of the shell at `shell` in generation `g`.
pub(crate) fn agent_handle(shell: *mut heirloom_agent, g: u32) -> *mut heirloom_agent {
    let g = generation_bits(g);
    let high = if HIGH_BITS == 0 {
        0
    } else {
        (g >> LOW_BITS) << HIGH_SHIFT
    };
    (shell as usize | (g & LOW_MASK) | high) as *mut heirloom_agent
}

/// The shell a handle names, and the generation it carries.
pub(crate) fn shell(a: *const heirloom_agent) -> (*const heirloom_agent, usize) {
    let v = a as usize;
    let high = if HIGH_BITS == 0 {
        0
    } else {
        (v >> HIGH_SHIFT) << LOW_BITS
    };
    ((v & address_mask()) as *const heirloom_agent, (v & LOW_MASK) | high)
}

/// Freed agent shells, oldest first, for `heirloom_agent_new` to reuse.
pub(crate) static FREE_SHELLS: std::sync::Mutex<std::collections::VecDeque<Shell>> =
    std::sync::Mutex::new(std::collections::VecDeque::new());

/// A freed shell's address, kept for reuse.
pub(crate) struct Shell(pub(crate) *mut heirloom_agent);
// SAFETY: a dead shell, owned by the free list until it is reused.
unsafe impl Send for Shell {}
