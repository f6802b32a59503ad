//! The C interface's own unit tests (the C side's are `tests/c/`).

use super::*;
use std::ffi::CStr;

/// `heirloom_message` writes the agent's state (it formats the error
/// there), so it is refused, with a message of its own, while another
/// thread is inside a call; once the agent is free it formats.
#[test]
fn the_message_is_not_formatted_under_another_call() {
    let (mut m, mut a) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: handles from these calls only; each used as the header says.
    unsafe {
        assert_eq!(heirloom_manager_new(std::ptr::null(), &mut m), HEIRLOOM_OK);
        assert_eq!(heirloom_agent_new(m, &mut a), HEIRLOOM_OK);
        // Its own pair of cache lines (see `heirloom_agent`).
        let (p, _) = shell(a);
        assert_eq!(p as usize % 128, 0, "agent at {p:p}");
        assert_eq!(heirloom_commit(a), HEIRLOOM_EMISUSE);
        let g = (*p).entry.generation();
        assert_eq!((*p).entry.try_lock(g, GENERATION_MASK), Ok(())); // a call under way elsewhere
        let text = CStr::from_ptr(heirloom_message(a)).to_str().unwrap().to_owned();
        assert!(text.contains("another thread is inside a call"), "{text}");
        (*p).entry.unlock();
        let text = CStr::from_ptr(heirloom_message(a)).to_str().unwrap().to_owned();
        assert!(text.contains("no transaction"), "{text}");
        assert_eq!(heirloom_agent_free(a), HEIRLOOM_OK);
        heirloom_manager_free(m);
    }
}

/// An agent freed and made again while another thread keeps calling with
/// its handles, the live one and the freed ones (a call racing with a
/// free is refused or runs before it): the new agent's own first calls
/// are never refused as if another thread were inside, which a freed
/// handle's call holding the reused shell's latch for a moment would do
/// (`heirloom_latch`'s loom model `a_stale_handle_never_holds_the_next_generation`
/// checks every interleaving; this runs real threads).
#[test]
fn a_freed_handle_never_turns_the_new_agents_call_away() {
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    const CHURNS: usize = 20_000;
    let mut m = std::ptr::null_mut();
    // SAFETY: handles from these calls only; each used as the header says
    // (freed ones included: the interface refuses them).
    unsafe {
        assert_eq!(heirloom_manager_new(std::ptr::null(), &mut m), HEIRLOOM_OK);
        let mut a = std::ptr::null_mut();
        assert_eq!(heirloom_agent_new(m, &mut a), HEIRLOOM_OK);
        let published = AtomicUsize::new(a as usize);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut calls = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let h = published.load(Ordering::Acquire) as *mut heirloom_agent;
                    // Any outcome: in before the free, refused inside it,
                    // or refused as freed.
                    heirloom_message(h);
                    calls += 1;
                }
                assert!(calls > 0);
            });
            // The other thread stops when this one does, also when an
            // assertion below fails (a failure, not a hang).
            struct Stop<'a>(&'a AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Relaxed);
                }
            }
            let _stop = Stop(&stop);
            for _ in 0..CHURNS {
                // The other thread may be inside a call on `a`: then the
                // free is refused and nothing changes.
                loop {
                    match heirloom_agent_free(a) {
                        HEIRLOOM_OK => break,
                        HEIRLOOM_EMISUSE => std::thread::yield_now(),
                        code => panic!("free: {code}"),
                    }
                }
                let mut b = std::ptr::null_mut();
                assert_eq!(heirloom_agent_new(m, &mut b), HEIRLOOM_OK);
                // Nobody else has `b` yet.
                assert_eq!(heirloom_begin(b), HEIRLOOM_OK);
                assert_eq!(heirloom_commit(b), HEIRLOOM_OK);
                published.store(b as usize, Ordering::Release);
                a = b;
            }
        });
        assert_eq!(heirloom_agent_free(a), HEIRLOOM_OK);
        heirloom_manager_free(m);
    }
}
