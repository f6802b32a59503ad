//! A benchmark's own options: declared by the benchmark ([`Opt`]), given on
//! the command line as `--opt key=value` (the habit of pgbench's `-D
//! name=value`), checked against the declaration and read back typed
//! ([`Options`]). The runner, the report and the command know no option by
//! name; a benchmark lists its own in [`Benchmark::options`](crate::Benchmark::options).

use std::fmt;

/// The type and range of an option's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// `true`/`false` (also `on`/`off`, `1`/`0`); `key` alone means true.
    Flag,
    /// A whole number in `min..=max`.
    Int {
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// A finite number from `min` (included) to `max` (included when
    /// `max_included`).
    Real {
        /// Smallest allowed.
        min: f64,
        /// Upper bound.
        max: f64,
        /// Whether `max` itself is allowed.
        max_included: bool,
    },
    /// One of these words.
    Choice(&'static [&'static str]),
}

/// One option a benchmark declares.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// Key in `--opt key=value`.
    pub name: &'static str,
    /// One line for `heirloom list`.
    pub help: &'static str,
    /// Type and range.
    pub kind: Kind,
    /// Value when not given (parsed like a given one).
    pub default: &'static str,
    /// An older command-line flag that means `--opt name=value`
    /// (`--theta 0.9`, `--nurand`); kept so that scripts keep working.
    pub alias: Option<&'static str>,
}

/// A parsed, checked value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A [`Kind::Flag`].
    Flag(bool),
    /// A [`Kind::Int`].
    Int(u64),
    /// A [`Kind::Real`].
    Real(f64),
    /// A [`Kind::Choice`].
    Choice(&'static str),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Flag(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(x) => write!(f, "{x}"),
            Value::Choice(w) => write!(f, "{w}"),
        }
    }
}

impl Opt {
    /// Parses and range-checks `text` as this option's value.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        match self.kind {
            Kind::Flag => match t {
                "" | "true" | "on" | "1" | "yes" => Ok(Value::Flag(true)),
                "false" | "off" | "0" | "no" => Ok(Value::Flag(false)),
                _ => Err(format!("{}={t}: not true or false", self.name)),
            },
            Kind::Int { min, max } => match t.replace('_', "").parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(Value::Int(v)),
                Ok(v) => Err(format!("{}={v}: not between {min} and {max}", self.name)),
                Err(_) => Err(format!("{}={t}: not a whole number", self.name)),
            },
            Kind::Real { min, max, max_included } => match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= min && (v < max || (max_included && v == max)) => Ok(Value::Real(v)),
                Ok(v) => Err(format!(
                    "{}={v}: not in [{min}, {max}{}",
                    self.name,
                    if max_included { "]" } else { ")" }
                )),
                Err(_) => Err(format!("{}={t}: not a number", self.name)),
            },
            Kind::Choice(words) => match words.iter().find(|w| **w == t) {
                Some(w) => Ok(Value::Choice(w)),
                None => Err(format!("{}={t}: not one of {}", self.name, words.join(", "))),
            },
        }
    }
}

/// The options of one benchmark, every declared one with a value (given or
/// default).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    values: Vec<(&'static str, Value)>,
}

impl Options {
    /// Checks `given` (`key=value` pairs in command-line order; a later one
    /// wins) against `declared` for benchmark `bench` and fills in defaults.
    pub fn parse(bench: &str, declared: &[Opt], given: &[(String, String)]) -> Result<Options, String> {
        let mut values = Vec::with_capacity(declared.len());
        for o in declared {
            let v = o
                .parse(o.default)
                .map_err(|e| format!("{bench}: default of option {e} (a bug)"))?;
            values.push((o.name, v));
        }
        for (k, text) in given {
            let k = k.trim();
            let Some(i) = declared.iter().position(|o| o.name == k) else {
                let known: Vec<_> = declared.iter().map(|o| o.name).collect();
                return Err(format!(
                    "{bench} has no option {k:?} ({})",
                    if known.is_empty() {
                        "it has none".to_string()
                    } else {
                        format!("its options: {}", known.join(", "))
                    }
                ));
            };
            values[i].1 = declared[i].parse(text).map_err(|e| format!("{bench}: {e}"))?;
        }
        Ok(Options { values })
    }

    fn get(&self, name: &str) -> Value {
        match self.values.iter().find(|(k, _)| *k == name) {
            Some(&(_, v)) => v,
            // Reading an undeclared option is a bug in the benchmark, not bad input.
            None => panic!("option {name:?} is not declared"),
        }
    }

    /// A [`Kind::Flag`] option's value.
    pub fn flag(&self, name: &str) -> bool {
        match self.get(name) {
            Value::Flag(b) => b,
            v => panic!("option {name:?} is {v:?}, not a flag"),
        }
    }

    /// A [`Kind::Int`] option's value.
    pub fn int(&self, name: &str) -> u64 {
        match self.get(name) {
            Value::Int(i) => i,
            v => panic!("option {name:?} is {v:?}, not a whole number"),
        }
    }

    /// A [`Kind::Real`] option's value.
    pub fn real(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Real(x) => x,
            v => panic!("option {name:?} is {v:?}, not a number"),
        }
    }

    /// A [`Kind::Choice`] option's value.
    pub fn choice(&self, name: &str) -> &'static str {
        match self.get(name) {
            Value::Choice(w) => w,
            v => panic!("option {name:?} is {v:?}, not a choice"),
        }
    }

    /// `key=value` for every option, in declaration order (the report's header).
    pub fn describe(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Splits `key=value`; a bare `key` has an empty value (true, for a flag).
pub fn split(pair: &str) -> (String, String) {
    match pair.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
        None => (pair.trim().to_string(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARED: &[Opt] = &[
        Opt {
            name: "theta",
            help: "",
            kind: Kind::Real {
                min: 0.0,
                max: 10.0,
                max_included: false,
            },
            default: "0",
            alias: None,
        },
        Opt {
            name: "n",
            help: "",
            kind: Kind::Int { min: 1, max: 100 },
            default: "1",
            alias: None,
        },
        Opt {
            name: "on",
            help: "",
            kind: Kind::Flag,
            default: "false",
            alias: None,
        },
        Opt {
            name: "index",
            help: "",
            kind: Kind::Choice(&["btree", "hash"]),
            default: "btree",
            alias: None,
        },
    ];

    fn given(pairs: &[&str]) -> Vec<(String, String)> {
        pairs.iter().map(|p| split(p)).collect()
    }

    #[test]
    fn defaults_then_given_values_later_ones_win() {
        let o = Options::parse("b", DECLARED, &given(&["n=5", "theta=0.9", "on", "n=7"])).unwrap();
        assert_eq!(o.real("theta"), 0.9);
        assert_eq!(o.int("n"), 7);
        assert!(o.flag("on"));
        assert_eq!(o.describe(), "theta=0.9 n=7 on=true index=btree");
        let d = Options::parse("b", DECLARED, &given(&["index=hash"])).unwrap();
        assert_eq!((d.real("theta"), d.int("n"), d.flag("on")), (0.0, 1, false));
        assert_eq!(d.choice("index"), "hash");
    }

    #[test]
    fn bad_values_and_unknown_keys_are_one_line_errors() {
        for bad in [
            "theta=10",
            "theta=-1",
            "theta=nan",
            "theta=x",
            "n=0",
            "n=101",
            "n=1.5",
            "on=maybe",
            "index=skiplist",
            "zeta=1",
        ] {
            let e = Options::parse("b", DECLARED, &given(&[bad])).unwrap_err();
            assert!(!e.contains('\n') && e.starts_with("b"), "{bad}: {e}");
        }
        assert!(
            Options::parse("b", &[], &given(&["x=1"]))
                .unwrap_err()
                .contains("it has none")
        );
        assert_eq!(
            Options::parse("b", DECLARED, &given(&["theta=9.99"]))
                .unwrap()
                .real("theta"),
            9.99
        );
    }
}
