//! The specifications' non-uniform random numbers: NURand with its
//! run-time constant C (TPC-C clause 2.1.6), the constants TPC-C draws for
//! loading and for running, and TATP's choice of A.

use rand::RngExt;
use rand::rngs::SmallRng;

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
/// (TPC-C clause 2.1.6; TATP draws s_id with the same form, x = 1, y = P).
/// The OR makes values with many one bits likely; C shifts which ones.
#[inline]
pub fn nurand(rng: &mut SmallRng, a: u64, c: u64, x: u64, y: u64) -> u64 {
    (((rng.random_range(0..=a) | rng.random_range(x..=y)) + c) % (y - x + 1)) + x
}

/// TPC-C's constants C (clause 2.1.6.1): one per NURand use, drawn once per
/// database. C_LAST has one value for the load and another for the run,
/// their difference in [65, 119] and neither 96 nor 112, so that the names
/// the run asks for are not exactly the popular names of the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpccConstants {
    /// C for C_LAST while loading (A = 255).
    pub c_last_load: u64,
    /// C for C_LAST while running.
    pub c_last_run: u64,
    /// C for C_ID (A = 1023).
    pub c_id: u64,
    /// C for OL_I_ID (A = 8191).
    pub ol_i_id: u64,
}

impl TpccConstants {
    /// Draws the four constants.
    pub fn draw(rng: &mut SmallRng) -> TpccConstants {
        let c_last_load = rng.random_range(0..=255u64);
        let c_last_run = loop {
            let c = rng.random_range(0..=255u64);
            if Self::valid_delta(c.abs_diff(c_last_load)) {
                break c;
            }
        };
        TpccConstants {
            c_last_load,
            c_last_run,
            c_id: rng.random_range(0..=1023),
            ol_i_id: rng.random_range(0..=8191),
        }
    }

    /// Clause 2.1.6.1's rule for |C_run - C_load| of C_LAST.
    pub fn valid_delta(delta: u64) -> bool {
        (65..=119).contains(&delta) && delta != 96 && delta != 112
    }
}

/// TATP's A for P subscribers: 65535 up to a million, 1048575 up to ten
/// million, 2097151 above.
pub fn tatp_a(subscribers: u64) -> u64 {
    match subscribers {
        0..=1_000_000 => 65_535,
        1_000_001..=10_000_000 => 1_048_575,
        _ => 2_097_151,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The exact distribution of NURand(a, c, x, y): every (r1, r2) pair
    /// counted once.
    fn exact(a: u64, c: u64, x: u64, y: u64) -> Vec<f64> {
        let n = (y - x + 1) as usize;
        let mut count = vec![0u64; n];
        for r1 in 0..=a {
            for r2 in x..=y {
                count[(((r1 | r2) + c) % (y - x + 1)) as usize] += 1;
            }
        }
        let total = ((a + 1) * (y - x + 1)) as f64;
        count.into_iter().map(|k| k as f64 / total).collect()
    }

    const DRAWS: usize = 400_000;

    /// Values expected at least 5 times in `DRAWS` (where the chi-square
    /// approximation holds).
    fn binned(p: &[f64]) -> usize {
        p.iter().filter(|&&q| q * DRAWS as f64 >= 5.0).count()
    }

    /// Pearson's chi-square of `DRAWS` samples of `f` against `p`, over
    /// the values of [`binned`].
    fn chi_square(p: &[f64], x: u64, mut f: impl FnMut() -> u64) -> f64 {
        let mut seen = vec![0u64; p.len()];
        for _ in 0..DRAWS {
            seen[(f() - x) as usize] += 1;
        }
        p.iter()
            .zip(&seen)
            .filter(|(p, _)| **p * DRAWS as f64 >= 5.0)
            .map(|(p, &o)| {
                let e = p * DRAWS as f64;
                (o as f64 - e).powi(2) / e
            })
            .sum()
    }

    /// The draws follow the exact distribution (chi-square within six
    /// standard deviations of its mean, the number of values), which is far
    /// from uniform and depends on C.
    fn check_shape(a: u64, c: u64, x: u64, y: u64) {
        let p = exact(a, c, x, y);
        let k = binned(&p) as f64;
        let bound = k + 6.0 * (2.0 * k).sqrt();
        let mut rng = SmallRng::seed_from_u64(a ^ c);
        let chi = chi_square(&p, x, || nurand(&mut rng, a, c, x, y));
        assert!(
            chi < bound,
            "NURand({a}, {c}, {x}, {y}): chi-square {chi:.0} >= {bound:.0}"
        );
        // Drawn uniformly, or without C, the same test fails by far.
        let mut rng = SmallRng::seed_from_u64(1);
        let uniform = chi_square(&p, x, || rng.random_range(x..=y));
        assert!(uniform > 4.0 * bound, "uniform draws pass as NURand: {uniform:.0}");
        let c_other = (c + (y - x + 1) / 3) % (a + 1);
        let mut rng = SmallRng::seed_from_u64(2);
        let other = chi_square(&p, x, || nurand(&mut rng, a, c_other, x, y));
        assert!(other > 4.0 * bound, "C = {c_other} passes as C = {c}: {other:.0}");
    }

    #[test]
    fn tpcc_nurand_has_the_specified_shape() {
        let mut rng = SmallRng::seed_from_u64(42);
        let c = TpccConstants::draw(&mut rng);
        check_shape(255, c.c_last_run, 0, 999); // C_LAST
        check_shape(1023, c.c_id, 1, 3000); // C_ID
        check_shape(8191, c.ol_i_id, 1, 10_000); // OL_I_ID, items shrunk 10x
    }

    #[test]
    fn tpcc_load_and_run_constants_keep_the_specified_distance() {
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..1000 {
            let c = TpccConstants::draw(&mut rng);
            assert!(
                TpccConstants::valid_delta(c.c_last_run.abs_diff(c.c_last_load)),
                "{c:?}"
            );
            assert!(c.c_id <= 1023 && c.ol_i_id <= 8191 && c.c_last_run <= 255);
        }
        assert!(!TpccConstants::valid_delta(96) && !TpccConstants::valid_delta(112));
        assert!(!TpccConstants::valid_delta(64) && !TpccConstants::valid_delta(120));
    }

    #[test]
    fn tatp_nurand_has_the_specified_shape() {
        // P = 2,000 subscribers with TATP's A for it (65535 > P: the OR
        // with A's bits makes most values rare, as the specification intends).
        check_shape(tatp_a(2_000), 777, 1, 2_000);
        assert_eq!(tatp_a(1_000_000), 65_535);
        assert_eq!(tatp_a(1_000_001), 1_048_575);
        assert_eq!(tatp_a(10_000_001), 2_097_151);
    }
}
