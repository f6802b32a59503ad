//! A transaction mix: which transaction a worker runs next, drawn by
//! weight.

use rand::RngExt;
use rand::rngs::SmallRng;

/// A transaction mix: transaction types with weights.
#[derive(Debug, Clone)]
pub struct Mix {
    /// Name as given on the command line.
    pub name: String,
    /// (transaction type, weight); weights need not add up to anything.
    pub weights: Vec<(usize, u32)>,
    total: u32,
}

impl Mix {
    /// The mix called `name` of a benchmark: one of `named` (name, weights),
    /// or a single transaction of `transactions` by its name.
    pub fn choose(
        bench: &str,
        name: &str,
        named: &[(&str, &[(usize, u32)])],
        transactions: &[&str],
    ) -> Result<Mix, String> {
        let weights = match named.iter().find(|(n, _)| *n == name) {
            Some((_, w)) => w.to_vec(),
            None => match transactions.iter().position(|t| *t == name) {
                Some(k) => vec![(k, 1)],
                None => {
                    let mut known: Vec<&str> = named.iter().map(|(n, _)| *n).collect();
                    known.extend(transactions.iter().filter(|t| !named.iter().any(|(n, _)| n == *t)));
                    return Err(format!("unknown {bench} mix {name:?} (known: {})", known.join(", ")));
                }
            },
        };
        Mix::new(name, weights).ok_or_else(|| format!("{bench} mix {name:?} has only zero weights"))
    }

    /// A mix from weights; `None` if they are all zero.
    pub fn new(name: &str, weights: Vec<(usize, u32)>) -> Option<Mix> {
        let total = weights.iter().map(|w| w.1).sum();
        (total > 0).then(|| Mix {
            name: name.to_string(),
            weights,
            total,
        })
    }

    /// Draws a transaction type.
    #[inline]
    pub fn pick(&self, rng: &mut SmallRng) -> usize {
        let mut x = rng.random_range(0..self.total);
        for &(t, w) in &self.weights {
            if x < w {
                return t;
            }
            x -= w;
        }
        self.weights[self.weights.len() - 1].0
    }
}
