//! Lock modes, their compatibility matrix and their supremum (join) table.
//!
//! Hierarchical locking (Gray et al.): intention modes IS and IX announce
//! S or X locks further down the hierarchy; SIX is S on the whole subtree plus
//! the intention to X-lock parts of it. U (update) is the SQL Server and DB2
//! mode for read-then-write: it reads like S and admits other readers, but
//! only one U (or X) holder at a time, so two transactions that read a row
//! before updating it queue at the read instead of deadlocking at the
//! write (the S-to-X conversion deadlock).

use std::fmt;

/// A lock mode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Mode {
    /// No lock. Never granted; the identity of [`Mode::join`].
    NL = 0,
    /// Intention shared: S locks will be taken below.
    IS = 1,
    /// Intention exclusive: X (or S) locks will be taken below.
    IX = 2,
    /// Shared.
    S = 3,
    /// Shared with intention exclusive: S on the subtree, X below.
    SIX = 4,
    /// Exclusive.
    X = 5,
    /// Update: S now and X later. Compatible with IS and S only; one holder
    /// at a time; converts to X. Between S and X in strength
    /// (S < U < SIX < X).
    U = 6,
}

/// Number of modes, the side of the tables below.
pub const MODE_COUNT: usize = 7;

use Mode::*;

/// `COMPATIBLE[a][b]`: may one transaction hold `a` while another holds `b`?
/// Symmetric (tested).
#[rustfmt::skip]
pub const COMPATIBLE: [[bool; MODE_COUNT]; MODE_COUNT] = [
    //          NL     IS     IX     S      SIX    X      U
    /* NL  */ [true,  true,  true,  true,  true,  true,  true ], // NL conflicts with nothing
    /* IS  */ [true,  true,  true,  true,  true,  false, true ], // IS conflicts only with X
    /* IX  */ [true,  true,  true,  false, false, false, false], // IX: readers of the whole subtree block it
    /* S   */ [true,  true,  false, true,  false, false, true ], // S: any writer below blocks it
    /* SIX */ [true,  true,  false, false, false, false, false], // SIX: only IS may join it
    /* X   */ [true,  false, false, false, false, false, false], // X: nothing but NL
    /* U   */ [true,  true,  false, true,  false, false, false], // U: readers only, one updater
];

/// `SUPREMUM[a][b]`: the weakest mode at least as strong as both (the join in
/// the mode lattice NL < IS < {IX, S}, S < U, {IX, U} < SIX < X). Used for
/// conversions: holding IX and asking for S yields SIX; holding S and
/// asking for U yields U. (U + IX = SIX: SIX admits exactly the modes both
/// admit, IS.)
#[rustfmt::skip]
pub const SUPREMUM: [[Mode; MODE_COUNT]; MODE_COUNT] = [
    //          NL   IS   IX   S    SIX  X  U
    /* NL  */ [NL,  IS,  IX,  S,   SIX, X, U  ],
    /* IS  */ [IS,  IS,  IX,  S,   SIX, X, U  ],
    /* IX  */ [IX,  IX,  IX,  SIX, SIX, X, SIX],
    /* S   */ [S,   S,   SIX, S,   SIX, X, U  ],
    /* SIX */ [SIX, SIX, SIX, SIX, SIX, X, SIX],
    /* X   */ [X,   X,   X,   X,   X,   X, X  ],
    /* U   */ [U,   U,   SIX, U,   SIX, X, U  ],
];

/// Every mode, in declaration order.
pub const ALL_MODES: [Mode; MODE_COUNT] = [NL, IS, IX, S, SIX, X, U];

/// `COMPATIBLE` as one byte per mode (bit `b` of `COMPAT_BITS[a]`: `a`
/// and `b` are compatible), padded to 8 entries: a test is a load, a shift
/// and a mask, with no multiply by the row length.
const COMPAT_BITS: [u8; 8] = {
    let mut t = [0u8; 8];
    let mut a = 0;
    while a < MODE_COUNT {
        let mut b = 0;
        while b < MODE_COUNT {
            if COMPATIBLE[a][b] {
                t[a] |= 1 << b;
            }
            b += 1;
        }
        a += 1;
    }
    t
};

/// `SUPREMUM` with rows padded to 8 entries (index `a << 3 | b`).
const JOIN_FLAT: [Mode; 64] = {
    let mut t = [NL; 64];
    let mut a = 0;
    while a < MODE_COUNT {
        let mut b = 0;
        while b < MODE_COUNT {
            t[a << 3 | b] = SUPREMUM[a][b];
            b += 1;
        }
        a += 1;
    }
    t
};

impl Mode {
    /// May this mode be held by one transaction while another holds `other`?
    #[inline]
    pub const fn compatible(self, other: Mode) -> bool {
        COMPAT_BITS[self as usize] >> (other as u8) & 1 != 0
    }

    /// The weakest mode that is at least as strong as both.
    #[inline]
    pub const fn join(self, other: Mode) -> Mode {
        JOIN_FLAT[(self as usize) << 3 | other as usize]
    }

    /// Does holding `self` already give everything `other` asks for?
    #[inline]
    pub const fn covers(self, other: Mode) -> bool {
        self.join(other) as u8 == self as u8
    }

    /// The intention mode a parent must hold before a child is locked in `self`.
    /// U announces a write, so its parents hold IX (SQL Server takes IX
    /// above a U row too): the conversion to X then needs nothing above.
    #[inline]
    pub const fn intention(self) -> Mode {
        match self {
            NL => NL,
            IS | S => IS,
            IX | SIX | X | U => IX,
        }
    }

    /// Does holding `self` on a lock implicitly grant `child` on every
    /// descendant (so no descendant lock need be taken)? S covers shared
    /// descendants; SIX and U cover shared and update descendants (nobody
    /// else can write or update below them); X covers all.
    #[inline]
    pub const fn covers_descendants(self, child: Mode) -> bool {
        match self {
            X => true,
            S => matches!(child, IS | S),
            SIX | U => matches!(child, IS | S | U),
            _ => false,
        }
    }

    /// Is this a shared mode (IS, IX, S): the modes speculative lock
    /// inheritance may pass on (not U: one holder at a time).
    #[inline]
    pub const fn is_shared(self) -> bool {
        matches!(self, IS | IX | S)
    }

    #[inline]
    pub(crate) const fn from_u8(v: u8) -> Mode {
        match v {
            1 => IS,
            2 => IX,
            3 => S,
            4 => SIX,
            5 => X,
            6 => U,
            _ => NL,
        }
    }

    /// The name as the literature writes it.
    pub const fn name(self) -> &'static str {
        match self {
            NL => "NL",
            IS => "IS",
            IX => "IX",
            S => "S",
            SIX => "SIX",
            X => "X",
            U => "U",
        }
    }
}

impl fmt::Debug for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `JOIN_OF_SET[mask]`: the join of the modes whose bits are set in `mask`
/// (bit `m` for mode `m`).
const JOIN_OF_SET: [Mode; 1 << MODE_COUNT] = {
    let mut t = [NL; 1 << MODE_COUNT];
    let mut mask = 0;
    while mask < (1 << MODE_COUNT) {
        let mut j = NL;
        let mut m = 0;
        while m < MODE_COUNT {
            if mask & (1 << m) != 0 {
                j = j.join(ALL_MODES[m]);
            }
            m += 1;
        }
        t[mask] = j;
        mask += 1;
    }
    t
};

/// Per-mode counts of granted requests on one lock, with the set of modes
/// present kept as a bit mask so that the group mode is one table lookup.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ModeCounts {
    n: [u32; MODE_COUNT],
    present: u8,
}

impl ModeCounts {
    #[inline]
    pub(crate) fn add(&mut self, m: Mode) {
        self.n[m as usize] += 1;
        self.present |= 1 << m as u8;
    }

    #[inline]
    pub(crate) fn remove(&mut self, m: Mode) {
        debug_assert!(self.n[m as usize] > 0, "granted count underflow for {m}");
        self.n[m as usize] -= 1;
        if self.n[m as usize] == 0 {
            self.present &= !(1 << m as u8);
        }
    }

    /// Join of all granted modes.
    #[inline]
    pub(crate) fn group(&self) -> Mode {
        JOIN_OF_SET[self.present as usize]
    }

    /// Join of all granted modes with one grant of `own` left out (the group
    /// a converting holder must be compatible with).
    #[inline]
    pub(crate) fn group_without(&self, own: Mode) -> Mode {
        let mut mask = self.present;
        if own != NL && self.n[own as usize] == 1 {
            mask &= !(1 << own as u8);
        }
        JOIN_OF_SET[mask as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_is_symmetric() {
        for a in ALL_MODES {
            for b in ALL_MODES {
                assert_eq!(a.compatible(b), b.compatible(a), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn supremum_is_a_join() {
        for a in ALL_MODES {
            assert_eq!(a.join(a), a);
            assert_eq!(a.join(NL), a);
            for b in ALL_MODES {
                let j = a.join(b);
                assert_eq!(j, b.join(a), "commutative {a} {b}");
                assert!(j.covers(a) && j.covers(b), "{j} covers {a} and {b}");
                for c in ALL_MODES {
                    assert_eq!(a.join(b).join(c), a.join(b.join(c)), "associative");
                }
            }
        }
    }

    /// The two tables agree: the join conflicts with exactly what either
    /// operand conflicts with (PostgreSQL checks its LockConflicts[] alike).
    #[test]
    fn supremum_agrees_with_matrix() {
        for a in ALL_MODES {
            for b in ALL_MODES {
                let j = a.join(b);
                for c in ALL_MODES {
                    assert_eq!(
                        j.compatible(c),
                        a.compatible(c) && b.compatible(c),
                        "{a}+{b}={j} vs {c}"
                    );
                }
            }
        }
        assert_eq!(IX.join(S), SIX);
    }

    #[test]
    fn stronger_modes_conflict_with_more() {
        for a in ALL_MODES {
            for b in ALL_MODES {
                if a.covers(b) {
                    for c in ALL_MODES {
                        assert!(!a.compatible(c) || b.compatible(c), "{a} covers {b} but {c}");
                    }
                }
            }
        }
    }

    /// A covering ancestor must shut out every request that could conflict
    /// with the lock it stands in for: each such request of another
    /// transaction needs an intention on the ancestor, and that intention
    /// must conflict with the ancestor's mode.
    #[test]
    fn covering_ancestors_exclude_what_the_child_would() {
        for p in ALL_MODES {
            for c in ALL_MODES {
                if !p.covers_descendants(c) {
                    continue;
                }
                for d in ALL_MODES {
                    if d != NL && !c.compatible(d) {
                        assert!(
                            !p.compatible(d.intention()),
                            "{p} covers {c} below, yet admits {d} below"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn fast_forms_agree_with_the_tables() {
        for a in ALL_MODES {
            for b in ALL_MODES {
                assert_eq!(a.compatible(b), COMPATIBLE[a as usize][b as usize], "{a} {b}");
                assert_eq!(a.join(b), SUPREMUM[a as usize][b as usize], "{a} {b}");
            }
        }
    }

    #[test]
    fn update_mode() {
        assert!(U.compatible(S) && S.compatible(U) && U.compatible(IS));
        assert!(!U.compatible(U) && !U.compatible(X) && !U.compatible(IX) && !U.compatible(SIX));
        assert_eq!(S.join(U), U, "S then U converts to U");
        assert_eq!(U.join(X), X);
        assert_eq!(U.join(IX), SIX);
        assert!(U.covers(S) && !U.covers(X) && X.covers(U) && SIX.covers(U));
        assert_eq!(U.intention(), IX);
        assert!(!U.is_shared());
        assert_eq!(Mode::from_u8(U as u8), U);
        assert_eq!(U.to_string(), "U");
    }

    #[test]
    fn counts_give_group_mode() {
        let mut c = ModeCounts::default();
        assert_eq!(c.group(), NL);
        c.add(IS);
        c.add(IX);
        assert_eq!(c.group(), IX);
        assert_eq!(c.group_without(IX), IS);
        c.add(S);
        assert_eq!(c.group(), SIX);
        c.remove(IX);
        assert_eq!(c.group(), S);
        assert_eq!(Mode::from_u8(X as u8), X);
    }
}
