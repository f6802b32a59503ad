//! Monitoring: a snapshot of every lock with its holders and waiters, the
//! way PostgreSQL's pg_locks view shows them.

use std::fmt;
use std::time::Duration;

use crate::error::TxnId;
use crate::id::LockId;
use crate::mode::Mode;

/// A transaction holding a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The transaction.
    pub txn: TxnId,
    /// The mode it holds.
    pub mode: Mode,
    /// Held for the agent's next transaction (speculative lock inheritance):
    /// `txn` is the transaction that passed it on; a conflicting request
    /// invalidates it instead of waiting.
    pub inherited: bool,
}

/// A transaction waiting for a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// The transaction.
    pub txn: TxnId,
    /// The mode it waits for (a conversion's target mode).
    pub mode: Mode,
    /// For a conversion, the mode it already holds (it is also listed among
    /// the holders).
    pub converting_from: Option<Mode>,
    /// How long it has been waiting.
    pub waited: Duration,
}

/// One lock with live requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    /// The lock.
    pub lock: LockId,
    /// The join of the granted modes.
    pub group: Mode,
    /// Granted requests, in queue order.
    pub holders: Vec<Holder>,
    /// Waiting requests, in queue order.
    pub waiters: Vec<Waiter>,
}

/// Every lock with live requests, consistent per lock (not across locks):
/// the holders listed for one lock held it together at one instant during
/// the call, so they are always compatible, and the waiters listed waited
/// then.
///
/// How each table kind keeps that promise: `Global` reads everything under
/// its one latch; `Latched` reads each lock's queue, and the lock's fast
/// holds with it, under the lock's head latch; `Server` has each lock
/// server read its own queues. The latch-free tables read every list
/// twice, the fast holds in between, and list only the requests read alike
/// both times, so a request whose state changed while the snapshot was
/// taken may be missing there. A fast hold's bit that conflicts with a
/// listed holder is an intention request backing off from the lock's fast
/// path, not a hold, and is left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The locks, sorted by id.
    pub locks: Vec<LockInfo>,
}

impl Snapshot {
    /// The entry of `lock`, if it has live requests.
    pub fn lock(&self, lock: LockId) -> Option<&LockInfo> {
        self.locks.iter().find(|l| l.lock == lock)
    }

    /// No lock has a live request.
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty()
    }
}

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<24} {:<5} {:<6} {:<10} {:<5} {:>12}",
            "lock", "group", "state", "txn", "mode", "waited"
        )?;
        for l in &self.locks {
            for h in &l.holders {
                writeln!(
                    f,
                    "{:<24} {:<5} {:<6} {:<10} {:<5} {:>12}",
                    l.lock.to_string(),
                    l.group.name(),
                    if h.inherited { "inher" } else { "held" },
                    h.txn.to_string(),
                    h.mode.name(),
                    ""
                )?;
            }
            for w in &l.waiters {
                writeln!(
                    f,
                    "{:<24} {:<5} {:<6} {:<10} {:<5} {:>12}",
                    l.lock.to_string(),
                    l.group.name(),
                    "wait",
                    w.txn.to_string(),
                    w.mode.name(),
                    format!("{:?}", w.waited)
                )?;
            }
        }
        Ok(())
    }
}

/// Builds a [`LockInfo`] from a queue (called under the queue's latch).
pub(crate) fn describe(q: &crate::queue::Queue, id: LockId, now_ns: u64) -> LockInfo {
    use crate::request::{CONVERTING, GRANTED, INHERITED, WAITING};
    use crate::sync::Ordering;
    let mut info = LockInfo {
        lock: id,
        group: q.group(),
        holders: Vec::new(),
        waiters: Vec::new(),
    };
    q.for_each(|r| {
        let status = r.status.load(Ordering::Relaxed);
        let waited = || Duration::from_nanos(now_ns.saturating_sub(r.since.load(Ordering::Relaxed)));
        match status {
            // An INHERITED request shows with the transaction that passed it on.
            GRANTED | INHERITED => info.holders.push(Holder {
                txn: r.txn(),
                mode: r.mode(),
                inherited: status == INHERITED,
            }),
            CONVERTING => {
                // NL: a fast hold's conversion, whose hold is folded in by
                // the table (`table/fast.rs`).
                if r.mode() != Mode::NL {
                    info.holders.push(Holder {
                        txn: r.txn(),
                        mode: r.mode(),
                        inherited: false,
                    });
                }
                info.waiters.push(Waiter {
                    txn: r.txn(),
                    mode: r.want(),
                    converting_from: Some(r.mode()),
                    waited: waited(),
                });
            }
            WAITING => info.waiters.push(Waiter {
                txn: r.txn(),
                mode: r.want(),
                converting_from: None,
                waited: waited(),
            }),
            _ => {}
        }
    });
    info
}

/// The index of `lock`'s entry in `out[from..]`, added if missing.
pub(crate) fn info_of(out: &mut Vec<LockInfo>, from: usize, lock: LockId) -> usize {
    match out[from..].iter().position(|l| l.lock == lock) {
        Some(i) => from + i,
        None => {
            out.push(LockInfo {
                lock,
                group: Mode::NL,
                holders: Vec::new(),
                waiters: Vec::new(),
            });
            out.len() - 1
        }
    }
}

/// Adds `txn` holding `mode` to `info`'s holders, joined with what it
/// already holds there (a conversion's older request, a fast hold).
pub(crate) fn add_holder(info: &mut LockInfo, txn: TxnId, mode: Mode, inherited: bool) {
    match info
        .holders
        .iter_mut()
        .find(|h| h.txn == txn && h.inherited == inherited)
    {
        Some(h) => h.mode = h.mode.join(mode),
        None => info.holders.push(Holder { txn, mode, inherited }),
    }
}

#[cfg(all(test, not(heirloom_loom)))]
mod tests {
    mod consistent;
}
