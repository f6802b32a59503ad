//! Statistics and the lock table's snapshot as JSON text, and the call
//! that frees the strings.

use std::ffi::{CString, c_char};

use super::{HEIRLOOM_EINVAL, HEIRLOOM_OK, heirloom_agent, heirloom_manager, manager, with_agent};

fn json_string(v: serde_json::Value) -> *mut c_char {
    CString::new(v.to_string()).map_or(std::ptr::null_mut(), CString::into_raw)
}

fn stats_json(s: &heirloom::Stats) -> serde_json::Value {
    serde_json::Value::Object(s.fields().into_iter().map(|(k, v)| (k.to_string(), v.into())).collect())
}

/// Statistics of every agent of `m`, merged now, as a JSON object of
/// counters (`{"table_ops": ..., "committed": ..., ...}`); free it with
/// `heirloom_string_free`. Null for a null or freed handle.
///
/// # Safety
/// `m` is null or a manager handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_manager_stats_json(m: *const heirloom_manager) -> *mut c_char {
    // SAFETY: the caller's promise.
    let Some(lm) = (unsafe { manager(m) }) else {
        return std::ptr::null_mut();
    };
    crate::panics::catch(|| json_string(stats_json(&lm.stats()))).unwrap_or(std::ptr::null_mut())
}

/// Every lock with live requests now, as JSON: `{"locks": [{"lock":
/// "db0.t1.r7", "group": "X", "holders": [{"txn": "...", "mode": "X",
/// "inherited": false}], "waiters": [{"txn": "...", "mode": "S",
/// "converting_from": null, "waited_us": 12}]}]}`; free it with
/// `heirloom_string_free`. Null for a null or freed handle.
///
/// # Safety
/// `m` is null or a manager handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_manager_snapshot_json(m: *const heirloom_manager) -> *mut c_char {
    // SAFETY: the caller's promise.
    let Some(lm) = (unsafe { manager(m) }) else {
        return std::ptr::null_mut();
    };
    crate::panics::catch(|| {
        let locks: Vec<serde_json::Value> = lm
            .snapshot()
            .locks
            .iter()
            .map(|l| {
                serde_json::json!({
                    "lock": l.lock.to_string(),
                    "group": l.group.to_string(),
                    "holders": l.holders.iter().map(|h| serde_json::json!({
                        "txn": h.txn.to_string(), "mode": h.mode.to_string(), "inherited": h.inherited,
                    })).collect::<Vec<_>>(),
                    "waiters": l.waiters.iter().map(|w| serde_json::json!({
                        "txn": w.txn.to_string(), "mode": w.mode.to_string(),
                        "converting_from": w.converting_from.map(|m| m.to_string()),
                        "waited_us": w.waited.as_micros() as u64,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json_string(serde_json::json!({ "locks": locks }))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// The agent's own statistics, as `heirloom_manager_stats_json`'s; null if
/// the call is refused (as `heirloom_begin` would refuse it).
///
/// # Safety
/// `a` is null or an agent handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_agent_stats_json(a: *mut heirloom_agent) -> *mut c_char {
    let mut out = std::ptr::null_mut();
    // SAFETY: the caller's promise.
    unsafe {
        with_agent(a, |st| {
            let stats = match st.txn.as_ref() {
                Some(t) => t.agent_stats(),
                // The pending request's future holds the transaction.
                None if st.pending.is_some() => return crate::no_txn(st),
                // SAFETY: no transaction borrows the agent; live (non-null
                // until freed, and the handle was checked live).
                None if !st.agent.is_null() => (*st.agent).stats(),
                None => return HEIRLOOM_EINVAL,
            };
            out = json_string(stats_json(&stats));
            HEIRLOOM_OK
        });
    }
    out
}

/// Frees a string this library returned. Null: nothing happens.
///
/// # Safety
/// `s` is null or a string from a `heirloom_*_json` call, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn heirloom_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: made by `CString::into_raw` (the caller's promise).
        drop(unsafe { CString::from_raw(s) });
    }
}
