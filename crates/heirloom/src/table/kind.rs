//! [`TableKind`]: the lock tables a manager can be built with, by name.

use super::server;

/// Which lock table a [`LockManager`](crate::LockManager) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TableKind {
    /// One latch over the whole table (the pre-sharding MySQL baseline).
    Global,
    /// Hash buckets of lock heads, one latch per head (Shore-MT).
    #[default]
    Latched,
    /// `Latched` whose heads follow the agents that use them: the release
    /// that empties a head's queue takes the head out of its bucket into
    /// the releasing agent's spares, and that agent's next miss binds it
    /// again, instead of rebinding an empty head of the bucket that
    /// another agent wrote last. About half the shared-line writes of
    /// `Latched` on TPC-C at sixteen threads, for a bucket latch tried at
    /// each such release (MEASUREMENTS.md, "Spare heads"); since its
    /// buckets keep only live locks' heads, it starts at the latch-free
    /// tables' size for the cores ([`default_buckets`](crate::default_buckets)),
    /// where a tenth of `Latched`'s shared lines are ones another thread
    /// wrote recently (MEASUREMENTS.md, "Spare heads by the core").
    LatchedSpares,
    /// Hash buckets of request lists appended with a compare-and-swap, no
    /// latch anywhere (read-after-write lock lists, epoch reclamation).
    LatchFree,
    /// The latch-free table with the multicore slides' append: one swap of
    /// the bucket's tail, the request linked ACTIVE and then deciding
    /// whether it is granted or waits. The same lists otherwise; slower
    /// than `LatchFree` on a hot lock (MEASUREMENTS.md, "The slides' append
    /// as a table of its own").
    LatchFreeSwap,
    /// `Global` with its latch elided by Intel RTM (`heirloom_rtm`): each
    /// section a hardware transaction that reads the latch's word, the
    /// latch taken after aborts (`Retry::default()`). Where the CPU has no
    /// RTM, every section takes the latch.
    GlobalHtm,
    /// `Latched` with its lock heads' latches elided by Intel RTM on the
    /// paths every transaction takes (acquire, release, conversion,
    /// cancel); binding a head to a lock and the rarer paths take the
    /// latch. Where the CPU has no RTM, every section takes the latch.
    LatchedHtm,
    /// Lock-server threads, each the only owner of one partition of the
    /// lock space; clients send requests through their own slots in shared
    /// memory (message-passing locking). At most
    /// [`MAX_PARTITIONS`](TableKind::MAX_PARTITIONS) partitions.
    Server {
        /// Partitions, one server thread each.
        partitions: u16,
    },
    /// No lock table and no locking at all: `lock` and `lock_all` return at
    /// once and nothing is held, so transactions are not isolated. Not a
    /// lock manager but the ceiling one is measured against ("no
    /// concurrency control" in the TSX paper): use it only where
    /// transactions cannot conflict (one thread, or work that only reads).
    /// Begin and commit still run (the exclusive-mode gate, statistics).
    NoLocking,
}

impl TableKind {
    /// Every kind, for sweeps and tests (the server with two partitions, so
    /// that requests and deadlocks cross partitions).
    pub const ALL: [TableKind; 8] = [
        TableKind::Global,
        TableKind::Latched,
        TableKind::LatchedSpares,
        TableKind::LatchFree,
        TableKind::LatchFreeSwap,
        TableKind::Server { partitions: 2 },
        TableKind::GlobalHtm,
        TableKind::LatchedHtm,
    ];

    /// The latch-free lists, with either append (`LatchFree`,
    /// `LatchFreeSwap`).
    pub fn is_latch_free(&self) -> bool {
        matches!(self, TableKind::LatchFree | TableKind::LatchFreeSwap)
    }

    /// Takes intention locks on the fast path when
    /// [`Builder::fast_path`](crate::Builder::fast_path) is on (the default):
    /// the latched and the latch-free tables.
    pub fn has_fast_path(&self) -> bool {
        self.base() == TableKind::Latched || self.is_latch_free()
    }

    /// Elides its latches with Intel RTM where the CPU has it (`GlobalHtm`,
    /// `LatchedHtm`).
    pub fn is_elided(&self) -> bool {
        matches!(self, TableKind::GlobalHtm | TableKind::LatchedHtm)
    }

    /// The table this kind is built on: `Global` for `GlobalHtm`, `Latched`
    /// for `LatchedHtm` and `LatchedSpares`, itself otherwise (the elided
    /// kinds behave as their base in everything but the latch, and
    /// `LatchedSpares` in everything but where an emptied head goes).
    pub fn base(&self) -> TableKind {
        match self {
            TableKind::GlobalHtm => TableKind::Global,
            TableKind::LatchedHtm | TableKind::LatchedSpares => TableKind::Latched,
            k => *k,
        }
    }

    /// The most partitions of [`TableKind::Server`].
    pub const MAX_PARTITIONS: u16 = server::MAX_PARTITIONS;

    /// The name of the design (the server's partitions not included; see
    /// the `Display` form for that).
    pub fn name(&self) -> &'static str {
        match self {
            TableKind::Global => "global",
            TableKind::Latched => "latched",
            TableKind::LatchedSpares => "latched-spares",
            TableKind::LatchFree => "latchfree",
            TableKind::LatchFreeSwap => "latchfree-swap",
            TableKind::GlobalHtm => "global-htm",
            TableKind::LatchedHtm => "latched-htm",
            TableKind::Server { .. } => "server",
            TableKind::NoLocking => "none",
        }
    }
}

/// The name used on command lines and in reports: the design's name, and
/// for a server with more than one partition `server:N`.
impl std::fmt::Display for TableKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableKind::Server { partitions } if *partitions != 1 => write!(f, "server:{partitions}"),
            k => f.write_str(k.name()),
        }
    }
}

impl std::str::FromStr for TableKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown lock table `{s}` (expected global, latched, latched-spares, latchfree, latchfree-swap, global-htm, latched-htm, server, server:N with N from 1 to {}, or none)",
                server::MAX_PARTITIONS
            )
        };
        match s {
            "global" => Ok(TableKind::Global),
            "latched" => Ok(TableKind::Latched),
            "latched-spares" => Ok(TableKind::LatchedSpares),
            "latchfree" => Ok(TableKind::LatchFree),
            "latchfree-swap" => Ok(TableKind::LatchFreeSwap),
            "global-htm" => Ok(TableKind::GlobalHtm),
            "latched-htm" => Ok(TableKind::LatchedHtm),
            "server" => Ok(TableKind::Server { partitions: 1 }),
            "none" => Ok(TableKind::NoLocking),
            _ => match s.strip_prefix("server:").map(str::parse::<u16>) {
                Some(Ok(n)) if (1..=server::MAX_PARTITIONS).contains(&n) => Ok(TableKind::Server { partitions: n }),
                _ => Err(bad()),
            },
        }
    }
}
