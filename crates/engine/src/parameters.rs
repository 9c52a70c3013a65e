//! A result's parameters, typed: numbers stay numbers, lists stay lists, a histogram is a
//! histogram. They serialise as plain JSON values (`"working_set_bytes": 65536`,
//! `"cpus": [0, 1]`), so any tool reads them without parsing text.

use std::fmt;

/// A parameter's key: its name in results files, and how a result measured in rounds
/// combines the rounds' values. Probes and renderers share keys as constants
/// ([`crate::names::key`], or a probe's own for what only it writes), so that renaming one
/// changes writer and reader together, and a literal cannot stand for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    name: &'static str,
    over_rounds: OverRounds,
}

/// How a result measured in several rounds combines the rounds' values of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverRounds {
    /// The first round's value stands (sizes, CPUs, settings).
    First,
    /// The rounds' whole numbers are added: counts of events (wake-ups, jobs, misses).
    Summed,
    /// The first round's figure is scaled by the merged median over the first round's: a
    /// figure that is the median in other units (cycles).
    ScaledWithMedian,
}

impl Key {
    /// A key whose first round's value stands.
    pub const fn new(name: &'static str) -> Key {
        Key {
            name,
            over_rounds: OverRounds::First,
        }
    }

    /// A count of events, added over the rounds.
    pub const fn summed(name: &'static str) -> Key {
        Key {
            name,
            over_rounds: OverRounds::Summed,
        }
    }

    /// The median in other units, scaled with the merged median.
    pub const fn scaled_with_median(name: &'static str) -> Key {
        Key {
            name,
            over_rounds: OverRounds::ScaledWithMedian,
        }
    }

    /// Its name in results files.
    pub const fn name(self) -> &'static str {
        self.name
    }

    pub const fn over_rounds(self) -> OverRounds {
        self.over_rounds
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// One parameter's value.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum Value {
    Flag(bool),
    /// A count, a size in bytes, a CPU number.
    Integer(i64),
    /// A measured or derived figure; its key names its unit.
    Number(f64),
    Text(String),
    /// A set of CPUs, or any list of whole numbers.
    Integers(Vec<i64>),
    /// A list of figures (shares, rates), in the order of a list beside it.
    Numbers(Vec<f64>),
    Histogram(Histogram),
}

impl Value {
    /// The value as a float, when it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Integer(n) => Some(n as f64),
            Value::Number(x) => Some(x),
            _ => None,
        }
    }

    /// The value as a whole number, when it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Integer(n) => u64::try_from(n).ok(),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_histogram(&self) -> Option<&Histogram> {
        match self {
            Value::Histogram(histogram) => Some(histogram),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// Plain text for tables and CSV: numbers with up to four significant decimals, lists
    /// comma-separated, a histogram as `<1:3 1-2:40`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Flag(flag) => write!(f, "{flag}"),
            Value::Integer(n) => write!(f, "{n}"),
            Value::Number(x) => write!(f, "{}", short_number(*x)),
            Value::Text(text) => f.write_str(text),
            Value::Integers(list) => {
                let items: Vec<String> = list.iter().map(i64::to_string).collect();
                f.write_str(&items.join(","))
            }
            Value::Numbers(list) => {
                let items: Vec<String> = list.iter().map(|&x| short_number(x)).collect();
                f.write_str(&items.join(","))
            }
            Value::Histogram(histogram) => write!(f, "{histogram}"),
        }
    }
}

/// Four significant digits, trailing zeros dropped.
fn short_number(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let decimals = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

macro_rules! integer_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))
            }
        }
    )*};
}
integer_from!(u8, u16, u32, u64, usize, i32, i64);

macro_rules! value_from {
    ($($t:ty => $make:expr),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(value: $t) -> Value {
                $make(value)
            }
        }
    )*};
}
value_from! {
    f64 => Value::Number,
    bool => Value::Flag,
    &str => |text: &str| Value::Text(text.to_string()),
    String => Value::Text,
    &String => |text: &String| Value::Text(text.clone()),
    Histogram => Value::Histogram,
    Vec<f64> => Value::Numbers,
}

impl From<&[usize]> for Value {
    fn from(list: &[usize]) -> Value {
        Value::Integers(list.iter().map(|&n| n as i64).collect())
    }
}

impl From<Vec<usize>> for Value {
    fn from(list: Vec<usize>) -> Value {
        Value::from(list.as_slice())
    }
}

/// Counts of latencies per power-of-two microsecond bucket, as the latency tests of this
/// field print them: the first bucket is below 1 µs, then 1–2, 2–4, 4–8 µs …
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Histogram {
    /// Each bucket's upper bound in microseconds (1, 2, 4 …), increasing; buckets without a
    /// sample are left out.
    pub upper_us: Vec<u64>,
    /// Samples per bucket.
    pub counts: Vec<u64>,
}

impl Histogram {
    /// The histogram of samples in nanoseconds, sorted or not.
    pub fn of_ns(samples_ns: &[f64]) -> Histogram {
        let mut buckets = std::collections::BTreeMap::<u64, u64>::new();
        for &ns in samples_ns {
            let us = (ns / 1e3).max(0.0);
            let upper = if us < 1.0 {
                1
            } else {
                (us.floor() as u64 + 1).next_power_of_two()
            };
            *buckets.entry(upper).or_default() += 1;
        }
        Histogram {
            upper_us: buckets.keys().copied().collect(),
            counts: buckets.values().copied().collect(),
        }
    }

    /// `(label, count)` per bucket: `<1`, `1-2`, `2-4` …
    pub fn buckets(&self) -> impl Iterator<Item = (String, u64)> + '_ {
        self.upper_us
            .iter()
            .zip(&self.counts)
            .map(|(&upper, &count)| {
                let label = if upper <= 1 {
                    "<1".to_string()
                } else {
                    format!("{}-{upper}", upper / 2)
                };
                (label, count)
            })
    }
}

impl fmt::Display for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let buckets: Vec<String> = self
            .buckets()
            .map(|(label, count)| format!("{label}:{count}"))
            .collect();
        f.write_str(&buckets.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_counts_power_of_two_buckets() {
        let ns = [500.0, 1_500.0, 40_000.0, 1_900.0, 3_000.0];
        let histogram = Histogram::of_ns(&ns);
        assert_eq!(histogram.to_string(), "<1:1 1-2:2 2-4:1 32-64:1");
        assert_eq!(histogram.counts.iter().sum::<u64>(), 5);
    }

    #[test]
    #[cfg(feature = "serde")]
    fn values_keep_their_type_through_json() {
        let values = [
            Value::from(65536u64),
            Value::from(0.25),
            Value::from("random"),
            Value::from(vec![0usize, 3]),
            Value::Numbers(vec![0.67, 0.33]),
            Value::Numbers(vec![1.0, 0.0]),
            Value::from(true),
            Value::from(Histogram::of_ns(&[500.0, 2_500.0])),
        ];
        for value in values {
            let text = serde_json::to_string(&value).unwrap();
            let back: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value, "{text}");
        }
        assert_eq!(
            serde_json::to_string(&Value::from(65536u64)).unwrap(),
            "65536"
        );
    }

    #[test]
    fn numbers_print_short() {
        assert_eq!(Value::from(0.99951).to_string(), "0.9995");
        assert_eq!(Value::from(3.2).to_string(), "3.2");
        assert_eq!(Value::from(1234.5678).to_string(), "1235");
        assert_eq!(Value::from(vec![0usize, 1]).to_string(), "0,1");
    }
}
