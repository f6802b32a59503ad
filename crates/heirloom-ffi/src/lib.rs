//! heirloom-ffi: heirloom's C interface.
//!
//! Built as a static library (`libheirloom_ffi.a`) and a shared one
//! (`libheirloom_ffi.so`); the declarations are `include/heirloom.h`,
//! generated from this file by cbindgen and checked against it by
//! `tests/header.rs` (so the two cannot drift). The crate README has an
//! example; the header says who owns what and which calls are per thread.
//!
//! ## Handles
//!
//! A manager (`heirloom_manager`) is shared by every thread; an agent
//! (`heirloom_agent`) belongs to one worker at a time and holds at most one
//! open transaction. Every call checks its handle: a null handle, or one
//! already freed, is refused with `HEIRLOOM_EINVAL`. A freed manager's few
//! bytes are kept, marked dead, and never reused. A freed agent's shell is
//! reused by a later `heirloom_agent_new` (so churning agents runs in
//! constant memory), and an agent handle carries its shell's generation in
//! the pointer's bits that the shell's address leaves free (the low 7 of
//! its 128-byte alignment and, on 64-bit targets, the top 16): a freed
//! handle is refused until its shell has been reused 2^23 times, and the
//! handle is opaque (never dereference it). An agent entered by two
//! threads at once is refused with `HEIRLOOM_EMISUSE`, and nothing
//! changes. Between calls an open transaction may move to another thread
//! (a thread pool's engine): the agent's binding to a thread
//! (`Agent::bind_to_thread`) follows it, so a thread that would block on
//! a transaction whose last call it ran is refused, not parked for ever
//! (unless a thread pool's worker put the session down:
//! `heirloom_agent_unbind`, `threads.rs`).
//!
//! ## Panics
//!
//! No panic crosses the interface. A panic inside a call (a bug) is caught;
//! the agent's transaction is then aborted (its locks released) and the
//! agent is unusable: every later call on it returns `HEIRLOOM_EPANIC`
//! except `heirloom_agent_free` and `heirloom_message`, whose message says
//! what the panic said and where. Nothing is printed on the host's stderr
//! unless it asks (`panics.rs`).

#![warn(missing_docs)]
// The C names (`heirloom_agent`, ...) are the interface.
#![allow(non_camel_case_types)]

use std::cell::UnsafeCell;
use std::ffi::{CString, c_char};
use std::sync::atomic::{AtomicU32, Ordering};

use heirloom::{Agent, LockError, LockManager, Transaction, TxnId};

mod begin;
mod codes;
mod convert;
mod json;
mod panics;
mod pending;
mod shells;
mod threads;
pub use begin::*;
pub use codes::*;
use convert::{builder_of, code_of, lock_of, mode_code, mode_of, wait_of};
use heirloom_latch::{HandleLatch, Refused};
pub use json::*;
pub use pending::*;
use shells::{GENERATION_MASK, agent_handle, shell};
pub use threads::*;

/// A lock: a level and where it is. Locking a row or page also takes the
/// intention locks on its ancestors (unless the manager's
/// `intention_locks` is 0).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct heirloom_lock_id {
    /// `HEIRLOOM_DATABASE` ... `HEIRLOOM_PAGED_ROW`.
    pub level: u32,
    /// Database number.
    pub db: u16,
    /// Table number (ignored for a database).
    pub table: u32,
    /// Page or row key (see the levels).
    pub key: u64,
}

/// A manager's options; fill with `heirloom_options_init`, then change
/// what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct heirloom_options {
    /// `HEIRLOOM_TABLE_*` (default latched).
    pub table: u32,
    /// Server table: partitions, one thread each (1-64; default 1).
    pub partitions: u32,
    /// Hash buckets of the latched and latch-free tables, rounded up to a
    /// power of two (1 to 2^24), or 0 (the default) for the table kind's
    /// own: the latched table starts with 256 and grows, the latch-free
    /// tables (CAS and swap append) have 4,096 for every core beyond the
    /// first (at least 4,096, at most 131,072: 65,536 on sixteen cores)
    /// and split a long list below its bucket, and the latched table with
    /// spare heads starts with as many as the latch-free tables and grows.
    pub buckets: u64,
    /// `HEIRLOOM_POLICY_*` (default detect).
    pub policy: u32,
    /// `HEIRLOOM_POLICY_TIMEOUT`: how long a request may wait, in µs
    /// (default 1000).
    pub policy_timeout_us: u64,
    /// Speculative lock inheritance: 0 off (default), 1 on, 2 always.
    pub inheritance: u32,
    /// Transactions an inherited lock may stay unused (default 0).
    pub keep_inherited: u32,
    /// The intention-lock fast path: 1 on (default), 0 off.
    pub fast_path: u32,
    /// Detect: how long a request waits before the first search, in µs
    /// (default 0: at once).
    pub deadlock_timeout_us: u64,
    /// Row locks per table after which they escalate (0: never, default).
    pub escalate_after: u32,
    /// Cap on lock requests held at once (0: none, default). A request
    /// that would pass it first escalates its transaction's largest group
    /// of row locks under one table; if that frees nothing it fails with
    /// `HEIRLOOM_ENOLOCKMEM`.
    pub max_locks: u64,
    /// Intention locks: 1 (default) a request takes IS or IX on the
    /// lock's ancestors first; 0 every lock stands alone, for an engine
    /// that locks at one granularity (no covering ancestor, no escalation;
    /// `escalate_after` must then be 0).
    pub intention_locks: u32,
    /// Row S locks as fast holds (with the fast path, on the latched and
    /// latch-free tables): 1 on, an S row lock then writes only the
    /// agent's own memory while the row's stripe sees no writer; 0 every
    /// row lock goes through the table; 2 (default) on or off by what the
    /// row requests meet (off where rows are updated about as often as
    /// read).
    pub fast_rows: u32,
    /// `heirloom_restart`: restarts in a row after which a transaction runs
    /// in exclusive mode (default 10; 0: every restart).
    pub max_restarts: u32,
    /// `heirloom_restart` backs off before it begins again: 1 (default)
    /// or 0 (at once).
    pub restart_backoff: u32,
    /// The most a blocked request spins before its thread parks, in µs
    /// (default: the library's, as Rust's `Builder::spin_before_park`; 0:
    /// park at once; at most 1,000,000). The spin adapts per agent below
    /// this bound, and no request spins while agents outnumber the
    /// cores (`cores`).
    pub spin_before_park_us: u64,
    /// The cores the engine's threads run on (0, the default: the
    /// machine's, as the process's affinity and CPU quota allow). Whether
    /// a blocked request spins (not while agents outnumber them) and the
    /// latch-free tables' default size are read from it (Rust's
    /// `Builder::cores`).
    pub cores: u32,
}

const MAGIC_LIVE: u32 = 0x4845_4952; // "HEIR"
const MAGIC_DEAD: u32 = 0xDEAD_0001;

/// A lock manager. Opaque; shared by every thread.
pub struct heirloom_manager {
    magic: AtomicU32,
    lm: UnsafeCell<Option<LockManager>>,
}

/// An agent: one worker's access to a manager, with at most one open
/// transaction. Opaque; used by one thread at a time.
// Aligned to two cache lines (the adjacent-line prefetch's pair): every
// call writes its entry latch and the state, and agents an engine makes
// one after another on one thread (312 bytes each unaligned) would
// otherwise share lines between its workers.
#[repr(align(128))]
pub struct heirloom_agent {
    magic: AtomicU32,
    /// Held by the thread inside a call; its generation ends when the
    /// agent is freed, and the handles given out before then carry the
    /// old one (`shell`), so the latch refuses them.
    entry: HandleLatch,
    state: UnsafeCell<AgentState>,
}

// SAFETY: the manager's state is only read through `&` while live (its
// `LockManager` is `Sync`); freeing it is the caller's last call on it
// (the header's rule).
unsafe impl Sync for heirloom_manager {}
// SAFETY: an agent's state is reached only by the thread that holds its
// `entry` latch (taken with a compare-and-swap at every entry).
unsafe impl Sync for heirloom_agent {}

struct AgentState {
    /// The open transaction; borrows `*agent`.
    txn: Option<Transaction<'static>>,
    /// The agent, from `Box::into_raw` (a raw pointer, so that the
    /// transaction's borrow of it is the only reference while it is open);
    /// null once freed.
    agent: *mut Agent,
    /// The thread of the open transaction's last call.
    thread: Option<std::thread::ThreadId>,
    poisoned: bool,
    /// The last call's message (none after a success).
    message: Message,
    /// The next call panics (`heirloom_agent_inject_panic`).
    inject_panic: bool,
    /// Restarts in a row (`heirloom_restart`; `heirloom_begin` resets).
    restarts: u32,
    /// A lock request left pending by `heirloom_lock_start`, holding the
    /// open transaction (`txn` is `None` meanwhile).
    pending: Option<pending::Pending>,
}

/// What `heirloom_message` says about an agent's last call.
enum Message {
    /// The call succeeded.
    None,
    /// The interface's own refusal (misuse, bad input, a caught panic), or
    /// a library error once `heirloom_message` has formatted it.
    Text(CString),
    /// The library's error, formatted only when `heirloom_message` asks: a
    /// refused request is an ordinary outcome under no-wait (and
    /// `HEIRLOOM_BUSY` under skip), and formatting its message at once cost
    /// a large share of a committed short transaction on every refusal
    /// (the kit's MEASUREMENTS.md, "heirloom inside DBx1000: a refusal's
    /// message formatted only when asked").
    Error(LockError),
}

fn text_of(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

/// Forgets the last call's message (out of line: most calls have none to
/// forget, and the drop of either kind is not the hot call's business).
#[cold]
#[inline(never)]
fn clear_message(st: &mut AgentState) {
    st.message = Message::None;
}

fn set_message(st: &mut AgentState, text: &str) {
    st.message = Message::Text(text_of(text));
}

thread_local! {
    /// The calling thread's id (`thread::current()` would touch a
    /// reference count on every call).
    static THREAD: std::thread::ThreadId = std::thread::current().id();
}

/// The calling thread's id (`None` while the thread is being torn down).
fn this_thread() -> Option<std::thread::ThreadId> {
    THREAD.try_with(|t| *t).ok()
}

#[inline]
fn result(st: &mut AgentState, r: Result<(), LockError>) -> i32 {
    match r {
        Ok(()) => HEIRLOOM_OK,
        Err(e) => failure(st, e),
    }
}

/// An error's code, the error kept for `heirloom_message` to format (out of
/// the hot call's line).
#[cold]
fn failure(st: &mut AgentState, e: LockError) -> i32 {
    let code = code_of(&e);
    st.message = Message::Error(e);
    code
}

/// The manager behind a live handle.
///
/// # Safety
/// `m` is null or was returned by `heirloom_manager_new` (freed or not).
unsafe fn manager<'a>(m: *const heirloom_manager) -> Option<&'a LockManager> {
    if m.is_null() {
        return None;
    }
    // SAFETY: a manager handle's memory is never returned (freed handles
    // stay allocated, marked dead), so reading it is sound.
    let h = unsafe { &*m };
    if h.magic.load(Ordering::Acquire) != MAGIC_LIVE {
        return None;
    }
    // SAFETY: live: the manager is there until `heirloom_manager_free`,
    // which the header says must be the last call on it.
    unsafe { (*h.lm.get()).as_ref() }
}

/// The live agent behind `a`, its `entry` latch now held by this thread
/// (given back by the caller when it is done), or the code that refuses
/// the call: `HEIRLOOM_EINVAL` for a null or freed handle,
/// `HEIRLOOM_EMISUSE` while another thread is inside a call on it.
///
/// The handle's generation is checked by the compare-and-swap that takes
/// the latch (`HandleLatch`), so a freed handle never holds the latch of
/// the agent that reuses its shell, not even for a moment: a call racing
/// with the free of its agent cannot turn the new agent's own call away.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new` (freed or not).
#[inline(always)]
unsafe fn claim(a: *const heirloom_agent) -> Result<&'static heirloom_agent, i32> {
    let (p, g) = shell(a);
    if p.is_null() {
        return Err(HEIRLOOM_EINVAL);
    }
    // SAFETY: an agent shell's memory is never returned: a freed one waits
    // in `FREE_SHELLS` for reuse.
    let h = unsafe { &*p };
    // Not an agent's shell, or a freed one not reused yet. (The latch
    // alone refuses every freed handle: the free ends the generation before
    // it gives the latch back. The magic catches what is no agent's shell.)
    if h.magic.load(Ordering::Acquire) != MAGIC_LIVE {
        return Err(HEIRLOOM_EINVAL);
    }
    // Acquire (the latch's): the previous holder's changes to the state
    // are visible.
    match h.entry.try_lock(g, GENERATION_MASK) {
        Ok(()) => Ok(h),
        Err(Refused::Stale) => Err(HEIRLOOM_EINVAL),
        Err(Refused::Held) => Err(HEIRLOOM_EMISUSE),
    }
}

/// Gives back the latch of an agent claimed by [`claim`].
///
/// # Safety
/// This thread claimed `h` and has not given it back.
#[inline(always)]
unsafe fn release(h: &heirloom_agent) {
    // SAFETY: the caller's promise. (Release, the latch's: this call's
    // changes are visible to the next holder.)
    unsafe { h.entry.unlock() };
}

/// Runs `f` on the agent's state: checks the handle, the thread and the
/// poison, catches a panic (which poisons the agent and aborts its
/// transaction).
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new` (freed or not).
unsafe fn with_agent(a: *const heirloom_agent, f: impl FnOnce(&mut AgentState) -> i32) -> i32 {
    // SAFETY: the caller's promise.
    let h = match unsafe { claim(a) } {
        Ok(h) => h,
        Err(code) => return code,
    };
    // SAFETY: the entry latch makes this thread the state's only user
    // until it is given back below.
    let st = unsafe { &mut *h.state.get() };
    let code = if st.poisoned {
        HEIRLOOM_EPANIC
    } else {
        if st.thread != this_thread() {
            // The transaction moves to this thread (between calls: the
            // latch keeps out a second thread during one); its binding follows,
            // so the check against a thread blocking its own agents' work
            // now looks at this thread.
            if let Some(txn) = st.txn.as_ref() {
                txn.bind_to_thread(true);
                st.thread = this_thread();
            } else if let Some(p) = st.pending.as_ref() {
                p.bind_to_thread(true);
                st.thread = this_thread();
            }
        }
        if !matches!(st.message, Message::None) {
            clear_message(st);
        }
        let inject = std::mem::take(&mut st.inject_panic);
        match panics::catch(|| {
            if inject {
                panic!("heirloom: panic injected by heirloom_agent_inject_panic");
            }
            f(st)
        }) {
            Ok(code) => code,
            Err(what) => {
                st.poisoned = true;
                // Abort the transaction (its locks go back; a pending
                // request is withdrawn first); a second panic here leaves
                // them to the agent's drop.
                let (txn, pending) = (st.txn.take(), st.pending.take());
                let _ = panics::catch(move || {
                    drop(pending);
                    drop(txn);
                });
                let text = format!(
                    "heirloom: a panic inside the library was caught ({what}); the transaction was aborted and the agent is unusable"
                );
                set_message(st, &text);
                HEIRLOOM_EPANIC
            }
        }
    };
    // SAFETY: claimed above.
    unsafe { release(h) };
    code
}

/// Runs `f` on the open transaction, or refuses if there is none.
/// Inlined, as `panics::catch` is: every call goes through both.
#[inline(always)]
fn with_txn(st: &mut AgentState, f: impl FnOnce(&mut Transaction<'static>) -> Result<(), LockError>) -> i32 {
    let r = match st.txn.as_mut() {
        Some(t) => f(t),
        None => return no_txn(st),
    };
    result(st, r)
}

/// Refuses a call that needs an open transaction (or one whose transaction
/// has a lock request pending).
#[cold]
fn no_txn(st: &mut AgentState) -> i32 {
    let text = if st.pending.is_some() {
        "heirloom: a lock request is pending on this agent (heirloom_lock_poll until it is decided, or heirloom_lock_cancel)"
    } else {
        "heirloom: no transaction is open on this agent (heirloom_begin first)"
    };
    set_message(st, text);
    HEIRLOOM_EMISUSE
}

/// Ends the open transaction with `f` (commit or abort), or refuses if
/// there is none.
#[inline(always)]
fn end_txn(st: &mut AgentState, f: impl FnOnce(Transaction<'static>) -> Result<(), LockError>) -> i32 {
    match st.txn.take() {
        Some(t) => {
            st.thread = None;
            let r = f(t);
            result(st, r)
        }
        None => no_txn(st),
    }
}

/// Fills `opts` with the defaults: the latched table, deadlock detection,
/// no inheritance, the fast path on, the default deadlock timeout, no
/// escalation, no lock-memory cap.
///
/// # Safety
/// `opts` is null (then nothing happens) or points to writable memory for
/// one `heirloom_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_options_init(opts: *mut heirloom_options) {
    if opts.is_null() {
        return;
    }
    let d = heirloom_options {
        table: HEIRLOOM_TABLE_LATCHED,
        partitions: 1,
        buckets: 0,
        policy: HEIRLOOM_POLICY_DETECT,
        policy_timeout_us: 1000,
        inheritance: 0,
        keep_inherited: 0,
        fast_path: 1,
        deadlock_timeout_us: heirloom::DEFAULT_DEADLOCK_TIMEOUT.as_micros() as u64,
        escalate_after: 0,
        max_locks: 0,
        intention_locks: 1,
        fast_rows: 2,
        max_restarts: heirloom::DEFAULT_MAX_RESTARTS,
        restart_backoff: 1,
        spin_before_park_us: heirloom::DEFAULT_SPIN_BEFORE_PARK.as_micros() as u64,
        cores: 0,
    };
    // SAFETY: the caller's promise.
    unsafe { opts.write(d) };
}

/// Builds a manager from `opts` (null: the defaults) into `*out`.
/// `HEIRLOOM_EINVAL` for an option out of range (`*out` untouched).
///
/// # Safety
/// `opts` is null or points to a `heirloom_options`; `out` points to
/// writable memory for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_manager_new(opts: *const heirloom_options, out: *mut *mut heirloom_manager) -> i32 {
    if out.is_null() {
        return HEIRLOOM_EINVAL;
    }
    let mut o = std::mem::MaybeUninit::uninit();
    let o = if opts.is_null() {
        // SAFETY: writes one whole `heirloom_options`.
        unsafe {
            heirloom_options_init(o.as_mut_ptr());
            o.assume_init()
        }
    } else {
        // SAFETY: the caller's promise.
        unsafe { *opts }
    };
    panics::install_hook();
    let built = panics::catch(|| builder_of(&o).map(heirloom::Builder::build));
    match built {
        Ok(Ok(lm)) => {
            let h = Box::new(heirloom_manager {
                magic: AtomicU32::new(MAGIC_LIVE),
                lm: UnsafeCell::new(Some(lm)),
            });
            // SAFETY: the caller's promise.
            unsafe { out.write(Box::into_raw(h)) };
            HEIRLOOM_OK
        }
        Ok(Err(_)) => HEIRLOOM_EINVAL,
        Err(_) => HEIRLOOM_EPANIC,
    }
}

/// Frees a manager. Agents made from it stay usable until freed (they
/// share its state); call this last, after every other call on `m` has
/// returned. Null, or a handle already freed: nothing happens.
///
/// # Safety
/// `m` is null or was returned by `heirloom_manager_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_manager_free(m: *mut heirloom_manager) {
    if m.is_null() {
        return;
    }
    // SAFETY: handles are never deallocated (see `manager`).
    let h = unsafe { &*m };
    if h.magic
        .compare_exchange(MAGIC_LIVE, MAGIC_DEAD, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
    {
        // SAFETY: the last call on `m` (the header's rule); the magic is
        // dead, so no later call reaches the manager.
        let lm = unsafe { (*h.lm.get()).take() };
        let _ = panics::catch(move || drop(lm));
        shells::retire(m);
    }
}

/// A new agent of `m` into `*out`: one per worker thread.
///
/// # Safety
/// `m` is null or a manager handle; `out` points to writable memory for one
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_agent_new(m: *const heirloom_manager, out: *mut *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    let Some(lm) = (unsafe { manager(m) }) else {
        return HEIRLOOM_EINVAL;
    };
    if out.is_null() {
        return HEIRLOOM_EINVAL;
    }
    match panics::catch(|| Box::new(lm.agent())) {
        Ok(agent) => {
            let state = AgentState {
                txn: None,
                agent: Box::into_raw(agent),
                thread: None,
                poisoned: false,
                message: Message::None,
                inject_panic: false,
                restarts: 0,
                pending: None,
            };
            let Some(h) = shells::live(state) else {
                return HEIRLOOM_EPANIC;
            };
            // SAFETY: the shell is ours (just made live).
            let g = unsafe { &*h }.entry.generation();
            // SAFETY: the caller's promise.
            unsafe { out.write(agent_handle(h, g)) };
            HEIRLOOM_OK
        }
        Err(_) => HEIRLOOM_EPANIC,
    }
}

/// Frees an agent: aborts its open transaction (releasing its locks) and
/// gives its resources back. `HEIRLOOM_EMISUSE` if another thread is inside
/// a call on it (nothing happens); null or already freed: `HEIRLOOM_EINVAL`.
/// Any thread may free an agent, as any thread may make the next call on
/// it.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_agent_free(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    let h = match unsafe { claim(a) } {
        Ok(h) => h,
        Err(code) => return code,
    };
    h.magic.store(MAGIC_DEAD, Ordering::Release);
    // SAFETY: the entry latch is held and the handle is dead: nobody else
    // reaches the state again.
    let st = unsafe { &mut *h.state.get() };
    let (txn, agent) = (st.txn.take(), std::mem::replace(&mut st.agent, std::ptr::null_mut()));
    let pending = st.pending.take();
    // The transaction first (a pending request's first of all): it borrows
    // the agent.
    let _ = panics::catch(move || {
        drop(pending);
        drop(txn);
        if !agent.is_null() {
            // SAFETY: from `Box::into_raw` in `heirloom_agent_new`, freed
            // only here (the handle is dead now), and no transaction
            // borrows it any more.
            let agent = unsafe { Box::from_raw(agent) };
            agent.bind_to_thread(false);
            drop(agent);
        }
    });
    st.message = Message::None;
    // Every handle given out so far is stale from now on.
    // SAFETY: claimed above.
    unsafe { h.entry.retire() };
    shells::free(h);
    HEIRLOOM_OK
}

/// The last call's message on `a` (a deadlock's cycle, a timeout's lock,
/// what was misused): empty after a success. Valid until the next call on
/// `a`; never null. A library error's message is formatted here, not when
/// the error happened, so an engine that never asks never pays for it.
///
/// # Safety
/// `a` is null or was returned by `heirloom_agent_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_message(a: *const heirloom_agent) -> *const c_char {
    static NONE: &[u8] = b"heirloom: null or freed agent handle\0";
    static INSIDE: &[u8] = b"heirloom: another thread is inside a call on this agent\0";
    static EMPTY: &[u8] = b"\0";
    // SAFETY: the caller's promise. Claimed like any call, because
    // formatting writes the agent's state.
    let h = match unsafe { claim(a) } {
        Ok(h) => h,
        Err(HEIRLOOM_EMISUSE) => return INSIDE.as_ptr().cast(),
        Err(_) => return NONE.as_ptr().cast(),
    };
    // SAFETY: the entry latch makes this thread the state's only user
    // until it is given back below.
    let st = unsafe { &mut *h.state.get() };
    if let Message::Error(e) = &st.message {
        // Formatting allocates; no panic may leave this call.
        st.message = Message::Text(panics::catch(|| text_of(&e.to_string())).unwrap_or_default());
    }
    let p = match &st.message {
        Message::Text(m) => m.as_ptr(),
        _ => EMPTY.as_ptr().cast(),
    };
    // SAFETY: claimed above.
    unsafe { release(h) };
    p
}

/// A short name of a result code (`"ok"`, `"deadlock"`, ...); never null.
#[unsafe(no_mangle)]
pub extern "C" fn heirloom_code_name(code: i32) -> *const c_char {
    let s: &'static [u8] = match code {
        HEIRLOOM_OK => b"ok\0",
        HEIRLOOM_BUSY => b"busy\0",
        HEIRLOOM_EDEADLOCK => b"deadlock\0",
        HEIRLOOM_ETIMEOUT => b"timeout\0",
        HEIRLOOM_EWOULDBLOCK => b"would-block\0",
        HEIRLOOM_EDIED => b"died\0",
        HEIRLOOM_EWOUNDED => b"wounded\0",
        HEIRLOOM_EDOOMED => b"doomed\0",
        HEIRLOOM_ENOTHELD => b"not-held\0",
        HEIRLOOM_ENOLOCKMEM => b"out-of-lock-memory\0",
        HEIRLOOM_ESERVER => b"server-failed\0",
        HEIRLOOM_EINVAL => b"invalid\0",
        HEIRLOOM_EMISUSE => b"misuse\0",
        HEIRLOOM_EPANIC => b"panic\0",
        HEIRLOOM_PENDING => b"pending\0",
        _ => b"unknown\0",
    };
    s.as_ptr().cast()
}

/// Whether a transaction that failed with `code` may succeed if retried
/// (deadlock, timeout, would-block, died, wounded, doomed).
#[unsafe(no_mangle)]
pub extern "C" fn heirloom_is_restartable(code: i32) -> bool {
    matches!(
        code,
        HEIRLOOM_EDEADLOCK
            | HEIRLOOM_ETIMEOUT
            | HEIRLOOM_EWOULDBLOCK
            | HEIRLOOM_EDIED
            | HEIRLOOM_EWOUNDED
            | HEIRLOOM_EDOOMED
    )
}

/// Locks `id` in `mode` (`HEIRLOOM_IS` ... `HEIRLOOM_U`), taking intention
/// locks on its ancestors first (unless the manager's `intention_locks` is
/// 0), waiting as the manager's policy says.
///
/// # Safety
/// `a` is null or an agent handle; `id` is null or points to a lock id.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_lock(a: *mut heirloom_agent, id: *const heirloom_lock_id, mode: u32) -> i32 {
    // SAFETY: the caller's promise. (`Transaction::lock` rather than
    // `heirloom_lock_with`'s `lock_with`: the hot call need not save and
    // restore the per-call wait.)
    unsafe {
        with_agent(a, |st| {
            // SAFETY: the caller's promise (null checked).
            let (Some(id), Some(mode)) = (id.as_ref().and_then(lock_of), mode_of(mode)) else {
                set_message(st, "heirloom: a null or invalid lock id or mode");
                return HEIRLOOM_EINVAL;
            };
            with_txn(st, |t| t.lock(id, mode))
        })
    }
}

/// Locks `id` in `mode`, waiting as `wait` says (`HEIRLOOM_WAIT_*`;
/// `timeout_us` for `HEIRLOOM_WAIT_TIMEOUT`). `HEIRLOOM_BUSY` under
/// `HEIRLOOM_WAIT_SKIP` when the lock is held by others.
///
/// # Safety
/// As `heirloom_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_lock_with(
    a: *mut heirloom_agent,
    id: *const heirloom_lock_id,
    mode: u32,
    wait: u32,
    timeout_us: u64,
) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            // SAFETY: the caller's promise (null checked).
            let (Some(id), Some(mode), Some(wait)) =
                (id.as_ref().and_then(lock_of), mode_of(mode), wait_of(wait, timeout_us))
            else {
                set_message(st, "heirloom: a null or invalid lock id, mode or wait");
                return HEIRLOOM_EINVAL;
            };
            with_txn(st, |t| t.lock_with(id, mode, wait))
        })
    }
}

/// Takes every `(ids[i], modes[i])`, `n` of them, as one batch (sorted and
/// deduplicated, intention locks included, one table visit per lock);
/// all or, on an error, the transaction is doomed.
///
/// # Safety
/// `a` is null or an agent handle; `ids` and `modes` point to `n` elements
/// each (or are null with `n == 0`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_lock_all(
    a: *mut heirloom_agent,
    ids: *const heirloom_lock_id,
    modes: *const u32,
    n: usize,
) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            if n > 0 && (ids.is_null() || modes.is_null()) {
                set_message(st, "heirloom: null arrays");
                return HEIRLOOM_EINVAL;
            }
            let mut reqs = Vec::with_capacity(n);
            for i in 0..n {
                // SAFETY: `n` elements each (the caller's promise).
                let (id, m) = (&*ids.add(i), *modes.add(i));
                match (lock_of(id), mode_of(m)) {
                    (Some(id), Some(m)) => reqs.push((id, m)),
                    _ => {
                        set_message(
                            st,
                            &format!("heirloom: lock {i} of the batch has an invalid id or mode"),
                        );
                        return HEIRLOOM_EINVAL;
                    }
                }
            }
            with_txn(st, |t| t.lock_all(&reqs))
        })
    }
}

/// Releases `id` before commit (early release). A lock with a descendant
/// still held is refused with `HEIRLOOM_ENOTHELD`: release the descendants
/// first.
///
/// # Safety
/// As `heirloom_lock`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_unlock(a: *mut heirloom_agent, id: *const heirloom_lock_id) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            // SAFETY: the caller's promise (null checked).
            let Some(id) = id.as_ref().and_then(lock_of) else {
                set_message(st, "heirloom: a null or invalid lock id");
                return HEIRLOOM_EINVAL;
            };
            with_txn(st, |t| t.unlock(id))
        })
    }
}

/// The mode the open transaction holds `id` in (`HEIRLOOM_NL` if none)
/// into `*out`: the lock on `id` itself, so a row whose lock went in an
/// escalation reports `HEIRLOOM_NL` though the table's S or X covers it.
///
/// # Safety
/// As `heirloom_lock`; `out` points to a writable `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_held_mode(a: *mut heirloom_agent, id: *const heirloom_lock_id, out: *mut u32) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            // SAFETY: the caller's promise (null checked).
            let Some(id) = id.as_ref().and_then(lock_of) else {
                set_message(st, "heirloom: heirloom_held_mode with a null or invalid lock id");
                return HEIRLOOM_EINVAL;
            };
            if out.is_null() {
                set_message(st, "heirloom: heirloom_held_mode with a null out pointer");
                return HEIRLOOM_EINVAL;
            }
            let mut m = HEIRLOOM_NL;
            let code = with_txn(st, |t| {
                m = t.held_mode(id).map_or(HEIRLOOM_NL, mode_code);
                Ok(())
            });
            out.write(m);
            code
        })
    }
}

/// Commits the open transaction: releases every lock. On an error (the
/// transaction was doomed) it is aborted instead. Either way it is over.
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_commit(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { with_agent(a, |st| end_txn(st, Transaction::commit)) }
}

/// Aborts the open transaction: releases every lock.
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_abort(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            // A pending request is withdrawn first.
            pending::settle(st);
            end_txn(st, |t| {
                t.abort();
                Ok(())
            })
        })
    }
}

/// The open transaction's id into `*out` (what others pass to
/// `heirloom_wait_for_txn`). Messages and snapshots write it `T<a>.<s>`:
/// `a` is `(id >> 40) - 1`, the agent's index, and `s` is `id & (2^40 - 1)`,
/// the transaction's sequence number on its agent.
///
/// # Safety
/// `a` is null or an agent handle; `out` points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_txn_id(a: *mut heirloom_agent, out: *mut u64) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { txn_number(a, out, "heirloom_txn_id", |t| t.id().as_u64()) }
}

/// The open transaction's age into `*out`: the order wait-die and
/// wound-wait decide by (smaller is older, equal ages by a fixed order of
/// the agents; 0 under the other policies): the nanoseconds from the
/// manager's creation to the transaction's begin. A transaction begun by
/// `heirloom_retry` has its predecessor's.
///
/// # Safety
/// `a` is null or an agent handle; `out` points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_txn_age(a: *mut heirloom_agent, out: *mut u64) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { txn_number(a, out, "heirloom_txn_age", |t| t.age()) }
}

/// `heirloom_txn_id` and `heirloom_txn_age`: `of` the open transaction
/// into `*out` (0 with the error code when there is none).
///
/// # Safety
/// `a` is null or an agent handle; `out` is null or points to a writable
/// `uint64_t`.
unsafe fn txn_number(
    a: *mut heirloom_agent,
    out: *mut u64,
    call: &str,
    of: impl FnOnce(&Transaction<'_>) -> u64,
) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            if out.is_null() {
                set_message(st, &format!("heirloom: {call} with a null out pointer"));
                return HEIRLOOM_EINVAL;
            }
            let mut v = 0;
            let code = with_txn(st, |t| {
                v = of(t);
                Ok(())
            });
            out.write(v);
            code
        })
    }
}

/// Publishes the open transaction's own lock (X on its id), so that others
/// can wait for it to end (`heirloom_wait_for_txn`).
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_publish_id(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { with_agent(a, |st| with_txn(st, |t| t.publish_id())) }
}

/// Waits (as `wait` and `timeout_us` say) until transaction `other` has
/// ended, through its published lock; deadlocks through it are detected
/// like any other. `HEIRLOOM_BUSY` under `HEIRLOOM_WAIT_SKIP` if it runs.
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_wait_for_txn(a: *mut heirloom_agent, other: u64, wait: u32, timeout_us: u64) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            let Some(wait) = wait_of(wait, timeout_us) else {
                set_message(
                    st,
                    &format!("heirloom: heirloom_wait_for_txn with an invalid wait {wait}"),
                );
                return HEIRLOOM_EINVAL;
            };
            with_txn(st, |t| t.wait_for_txn(TxnId::from_u64(other), wait))
        })
    }
}

/// For tests of an engine's error paths: the next call on `a` panics inside
/// the library (caught: it returns `HEIRLOOM_EPANIC` and the agent is
/// unusable from then on).
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_agent_inject_panic(a: *mut heirloom_agent) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            st.inject_panic = true;
            HEIRLOOM_OK
        })
    }
}

#[cfg(test)]
mod tests;
