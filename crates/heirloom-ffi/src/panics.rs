//! Panics inside a call: caught, reported through the agent's message, and
//! not printed to the host's standard error unless asked.
//!
//! Rust prints every panic through the process's panic hook before it
//! unwinds, even one that is caught, so a C host would see a message (and
//! with `RUST_BACKTRACE` a backtrace) on its stderr for a bug the interface
//! already reports as `HEIRLOOM_EPANIC`. The first `heirloom_manager_new`
//! installs a hook that keeps quiet about panics on a thread that is inside
//! a call ([`catch`] counts them) and records their message and place for
//! the call to report instead; every other panic, and every panic when
//! `HEIRLOOM_PRINT_PANICS` is set in the environment (to anything but `0`),
//! goes on to the hook that was there before.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, PanicHookInfo, catch_unwind};
use std::sync::Once;

thread_local! {
    /// How many [`catch`]es this thread is inside.
    static INSIDE: Cell<u32> = const { Cell::new(0) };
    /// What the hook recorded of the last panic it kept quiet.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs the quiet hook once per process (chained to the hook before).
pub(crate) fn install_hook() {
    HOOK.call_once(|| {
        let print = std::env::var_os("HEIRLOOM_PRINT_PANICS").is_some_and(|v| v != "0");
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if INSIDE.with(Cell::get) == 0 {
                return previous(info);
            }
            let what = said(info.payload());
            let place = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            // `try_with`: a panic while the thread's locals are being torn
            // down has nowhere to go but the previous hook.
            let recorded = LAST.try_with(|last| *last.borrow_mut() = Some(format!("{what}{place}")));
            if print || recorded.is_err() {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, catching a panic: `Err` carries what the panic said and where
/// (when the quiet hook recorded it).
///
/// Inlined into every call, with `with_txn` and `end_txn`: as functions of
/// their own, with the closure's captures and the `Result` passed through
/// memory, the two layers cost a `heirloom_lock` about 60 instructions,
/// more than a quarter of the whole call under the `none` table
/// (heirloom's MEASUREMENTS.md, "The C call's layers inlined").
#[inline(always)]
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    INSIDE.with(|n| n.set(n.get() + 1));
    let out = catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|n| n.set(n.get() - 1));
    out.map_err(|payload| {
        LAST.with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| said(&*payload))
    })
}

/// What a panic said: its message, where it is a string.
fn said(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}
