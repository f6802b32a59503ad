//! Translations between the C interface's values (codes, modes, lock ids,
//! waits, options) and the library's types.

use std::time::Duration;

use heirloom::{ConflictPolicy, FastRows, Inheritance, LockError, LockId, LockManager, Mode, TableId, TableKind, Wait};

use crate::codes::*;
use crate::{heirloom_lock_id, heirloom_options};

pub(crate) fn code_of(e: &LockError) -> i32 {
    match e {
        LockError::Deadlock { .. } => HEIRLOOM_EDEADLOCK,
        LockError::Timeout { .. } => HEIRLOOM_ETIMEOUT,
        LockError::WouldBlock { .. } => HEIRLOOM_EWOULDBLOCK,
        LockError::Died { .. } => HEIRLOOM_EDIED,
        LockError::Wounded { .. } => HEIRLOOM_EWOUNDED,
        LockError::Doomed { .. } => HEIRLOOM_EDOOMED,
        LockError::Busy { .. } => HEIRLOOM_BUSY,
        LockError::NotHeld { .. } | LockError::ChildrenHeld { .. } => HEIRLOOM_ENOTHELD,
        LockError::OutOfLockMemory { .. } => HEIRLOOM_ENOLOCKMEM,
        LockError::ServerFailed { .. } => HEIRLOOM_ESERVER,
        // A wait for a transaction bound to this same thread: misuse.
        LockError::InvalidRequest { reason, .. } if *reason == heirloom::BLOCKED_BY_OWN_THREAD => HEIRLOOM_EMISUSE,
        LockError::InvalidRequest { .. } => HEIRLOOM_EINVAL,
    }
}

pub(crate) fn mode_of(m: u32) -> Option<Mode> {
    Some(match m {
        HEIRLOOM_IS => Mode::IS,
        HEIRLOOM_IX => Mode::IX,
        HEIRLOOM_S => Mode::S,
        HEIRLOOM_SIX => Mode::SIX,
        HEIRLOOM_X => Mode::X,
        HEIRLOOM_U => Mode::U,
        _ => return None,
    })
}

pub(crate) fn mode_code(m: Mode) -> u32 {
    match m {
        Mode::IS => HEIRLOOM_IS,
        Mode::IX => HEIRLOOM_IX,
        Mode::S => HEIRLOOM_S,
        Mode::SIX => HEIRLOOM_SIX,
        Mode::X => HEIRLOOM_X,
        Mode::U => HEIRLOOM_U,
        _ => HEIRLOOM_NL,
    }
}

pub(crate) fn lock_of(id: &heirloom_lock_id) -> Option<LockId> {
    let t = TableId::new(id.db, id.table);
    Some(match id.level {
        HEIRLOOM_DATABASE => LockId::database(id.db),
        HEIRLOOM_TABLE => LockId::table(t),
        HEIRLOOM_PAGE => LockId::page(t, u32::try_from(id.key).ok()?),
        HEIRLOOM_ROW => LockId::row(t, id.key),
        HEIRLOOM_PAGED_ROW => LockId::paged_row(t, (id.key >> 32) as u32, id.key as u32),
        _ => return None,
    })
}

pub(crate) fn wait_of(wait: u32, timeout_us: u64) -> Option<Wait> {
    Some(match wait {
        HEIRLOOM_WAIT_POLICY => Wait::Policy,
        HEIRLOOM_WAIT_NOWAIT => Wait::NoWait,
        HEIRLOOM_WAIT_TIMEOUT => Wait::Timeout(Duration::from_micros(timeout_us)),
        HEIRLOOM_WAIT_SKIP => Wait::Skip,
        _ => return None,
    })
}

pub(crate) fn builder_of(o: &heirloom_options) -> Result<heirloom::Builder, String> {
    let table = match o.table {
        HEIRLOOM_TABLE_GLOBAL => TableKind::Global,
        HEIRLOOM_TABLE_LATCHED => TableKind::Latched,
        HEIRLOOM_TABLE_LATCHFREE => TableKind::LatchFree,
        HEIRLOOM_TABLE_LATCHFREE_SWAP => TableKind::LatchFreeSwap,
        HEIRLOOM_TABLE_SERVER => {
            let n = u16::try_from(o.partitions)
                .ok()
                .filter(|n| (1..=TableKind::MAX_PARTITIONS).contains(n))
                .ok_or_else(|| format!("partitions {} out of 1..={}", o.partitions, TableKind::MAX_PARTITIONS))?;
            TableKind::Server { partitions: n }
        }
        HEIRLOOM_TABLE_GLOBAL_HTM => TableKind::GlobalHtm,
        HEIRLOOM_TABLE_LATCHED_HTM => TableKind::LatchedHtm,
        HEIRLOOM_TABLE_NONE => TableKind::NoLocking,
        HEIRLOOM_TABLE_LATCHED_SPARES => TableKind::LatchedSpares,
        t => return Err(format!("unknown table kind {t}")),
    };
    let policy = match o.policy {
        HEIRLOOM_POLICY_DETECT => ConflictPolicy::Detect,
        HEIRLOOM_POLICY_TIMEOUT => ConflictPolicy::Timeout(Duration::from_micros(o.policy_timeout_us)),
        HEIRLOOM_POLICY_NOWAIT => ConflictPolicy::NoWait,
        HEIRLOOM_POLICY_WAITDIE => ConflictPolicy::WaitDie,
        HEIRLOOM_POLICY_WOUNDWAIT => ConflictPolicy::WoundWait,
        p => return Err(format!("unknown conflict policy {p}")),
    };
    let inheritance = match o.inheritance {
        0 => Inheritance::Off,
        1 => Inheritance::On,
        2 => Inheritance::Always,
        i => return Err(format!("inheritance {i} is not 0, 1 or 2")),
    };
    if o.fast_path > 1 {
        return Err(format!("fast_path {} is not 0 or 1", o.fast_path));
    }
    let fast_rows = match o.fast_rows {
        0 => FastRows::Off,
        1 => FastRows::On,
        2 => FastRows::Auto,
        i => return Err(format!("fast_rows {i} is not 0, 1 or 2")),
    };
    if o.restart_backoff > 1 {
        return Err(format!("restart_backoff {} is not 0 or 1", o.restart_backoff));
    }
    if o.intention_locks > 1 {
        return Err(format!("intention_locks {} is not 0 or 1", o.intention_locks));
    }
    if o.intention_locks == 0 && o.escalate_after > 0 {
        return Err("escalate_after needs intention locks (a table lock covers no row without them)".into());
    }
    // 0: the table kind's own default.
    let buckets = usize::try_from(o.buckets)
        .ok()
        .filter(|&b| b <= heirloom::MAX_BUCKETS)
        .ok_or_else(|| format!("buckets {} out of 0..=2^24", o.buckets))?;
    if o.spin_before_park_us > MAX_SPIN_US {
        return Err(format!(
            "spin_before_park_us {} out of 0..={MAX_SPIN_US}",
            o.spin_before_park_us
        ));
    }
    let max_locks = usize::try_from(o.max_locks).map_err(|_| format!("max_locks {} too large", o.max_locks))?;
    let mut b = LockManager::builder().table(table);
    if buckets > 0 {
        b = b.buckets(buckets);
    }
    // 0: the machine's.
    if o.cores > 0 {
        b = b.cores(usize::try_from(o.cores).unwrap_or(usize::MAX));
    }
    Ok(b.conflicts(policy)
        .inheritance(inheritance)
        .keep_inherited(o.keep_inherited)
        .fast_path(o.fast_path == 1)
        .fast_rows(fast_rows)
        .deadlock_timeout(Duration::from_micros(o.deadlock_timeout_us))
        .escalate_after(o.escalate_after)
        .max_locks(max_locks)
        .intention_locks(o.intention_locks == 1)
        .max_restarts(o.max_restarts)
        .restart_backoff(o.restart_backoff == 1)
        .spin_before_park(Duration::from_micros(o.spin_before_park_us)))
}

/// The longest spin before a park the interface accepts: a second (a
/// spin is meant to outlast a short hold, not to replace the park).
const MAX_SPIN_US: u64 = 1_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        HEIRLOOM_TABLE_LATCHED, HEIRLOOM_TABLE_LATCHED_SPARES, HEIRLOOM_TABLE_LATCHFREE, heirloom_options_init,
    };

    /// `cores`: 0 takes the machine's, any other count is the manager's;
    /// the default size of the latch-free table and of the latched table
    /// with spare heads follows it, the latched table's does not.
    #[test]
    fn the_cores_option_reaches_the_manager() {
        let mut o = std::mem::MaybeUninit::<heirloom_options>::uninit();
        // SAFETY: `o` is writable memory for one `heirloom_options`.
        let mut o = unsafe {
            heirloom_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        assert_eq!(o.cores, 0);
        let machine = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(builder_of(&o).unwrap().build().cores(), machine);
        o.table = HEIRLOOM_TABLE_LATCHFREE;
        o.cores = 16;
        let lm = builder_of(&o).unwrap().build();
        assert_eq!((lm.cores(), lm.buckets()), (16, Some(65536)));
        o.table = HEIRLOOM_TABLE_LATCHED_SPARES;
        assert_eq!(builder_of(&o).unwrap().build().buckets(), Some(65536));
        o.table = HEIRLOOM_TABLE_LATCHED;
        assert_eq!(
            builder_of(&o).unwrap().build().buckets(),
            Some(heirloom::DEFAULT_BUCKETS)
        );
    }
}
