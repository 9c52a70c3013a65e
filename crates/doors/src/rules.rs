//! The rules every number read back obeys: one set, the same for a time, a count, a
//! deviation and a run number, whichever reader found it (a results file, a summary, a
//! baseline's run, a noise table, a callgrind dump). A number that breaks its rule is one
//! no latlab writes: the file was edited or damaged, and is refused naming the field.

use std::fmt::Display;

/// The smallest time per operation a measured figure can have: a millionth of a nanosecond.
pub const MIN_TIME_NS: f64 = 1e-6;
/// The largest time per operation any figure can have: a day.
pub const MAX_TIME_NS: f64 = 86_400e9;
/// One more than the largest count: 2^64, past which a 64-bit counter wraps.
pub const COUNT_LIMIT: f64 = 18_446_744_073_709_551_616.0;
/// The largest deviation of a logarithm `latlab noise` writes: a figure that moves tenfold
/// per standard deviation between runs of one machine is no noise a comparison can take as
/// a prior (the noisiest result of the tables shipped moves 3.7-fold).
pub const MAX_DEVIATION: f64 = std::f64::consts::LN_10;
/// The widest move between two runs (the range of a logarithm) `latlab noise` writes:
/// ten-thousandfold (the widest shipped is 1,200-fold: a thread's start on a shared guest).
pub const MAX_LOG_RANGE: f64 = 4.0 * std::f64::consts::LN_10;
/// The largest run number a baseline or a runs directory holds: a baseline added to a
/// thousand times a day for two thousand years, and far from where a count of runs wraps.
pub const MAX_RUN_NUMBER: u64 = 1_000_000_000;

/// What a number is, and so the rule it obeys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// A time that may be zero or negative (a difference of two figures, noise under a
    /// subtracted empty loop): finite, not subnormal, at most a day in size.
    Time,
    /// A time a run can only write positive (a measured median, a headline figure): a
    /// [`Rule::Time`] of at least [`MIN_TIME_NS`].
    PositiveTime,
    /// A count of events, calls or turns: whole, at least one, below 2^64.
    Count,
    /// Events per call over `calls` calls: positive, and the events in all the calls
    /// between one and 2^64 (a count, spread over the calls).
    PerCall { calls: u64 },
    /// A standard deviation of a logarithm: from 0 to [`MAX_DEVIATION`].
    Deviation,
    /// The range of a logarithm: from 0 to [`MAX_LOG_RANGE`].
    LogRange,
    /// A run's number: whole, from 1 to [`MAX_RUN_NUMBER`].
    RunNumber,
}

/// Checks `value`, read at `field`, against `rule`: the value, or one line naming the field,
/// the value and the rule it breaks.
pub fn check(field: impl Display + Copy, value: f64, rule: Rule) -> Result<f64, String> {
    let broken = |why: &str| Err(format!("{field} is {value:e}: {why}"));
    if !value.is_finite() {
        return broken("a number latlab writes is finite");
    }
    if value.is_subnormal() {
        return broken("a subnormal number, which no measurement produces");
    }
    match rule {
        Rule::Time if value.abs() > MAX_TIME_NS => broken("more than a day per operation"),
        Rule::Time => Ok(value),
        Rule::PositiveTime if value < MIN_TIME_NS => broken(&format!(
            "below {MIN_TIME_NS:e} ns, for a figure a run only writes positive"
        )),
        Rule::PositiveTime => check(field, value, Rule::Time),
        Rule::Count if value.fract() != 0.0 || value < 1.0 => {
            broken("a count is a whole number of at least one")
        }
        Rule::Count if value >= COUNT_LIMIT => broken("a count is below 2^64"),
        Rule::Count => Ok(value),
        Rule::PerCall { calls } => match per_call(value, calls) {
            Ok(()) => Ok(value),
            Err(why) => broken(&why),
        },
        Rule::Deviation if !(0.0..=MAX_DEVIATION).contains(&value) => broken(&format!(
            "a deviation latlab noise writes lies from 0 to {MAX_DEVIATION:.3} (tenfold)"
        )),
        Rule::LogRange if !(0.0..=MAX_LOG_RANGE).contains(&value) => broken(&format!(
            "a range latlab noise writes lies from 0 to {MAX_LOG_RANGE:.3} \
             (ten-thousandfold)"
        )),
        Rule::Deviation | Rule::LogRange => Ok(value),
        Rule::RunNumber
            if value.fract() != 0.0 || !(1.0..=MAX_RUN_NUMBER as f64).contains(&value) =>
        {
            broken(&format!(
                "a run's number is whole, from 1 to {MAX_RUN_NUMBER}"
            ))
        }
        Rule::RunNumber => Ok(value),
    }
}

/// Why `value` events a call over `calls` calls is no count, if it is not.
fn per_call(value: f64, calls: u64) -> Result<(), String> {
    if calls == 0 {
        return Err("counted over no calls".into());
    }
    let total = value * calls as f64;
    if value <= 0.0 || total < 1.0 {
        return Err(format!(
            "fewer than one event in all its {calls} calls; a count is at least one"
        ));
    }
    if total >= COUNT_LIMIT {
        return Err(format!(
            "more than 2^64 events in its {calls} calls, past where a counter wraps"
        ));
    }
    Ok(())
}

/// A run's number in decimal text (`run-K` names), under [`Rule::RunNumber`]: `None` for
/// text that is no number at all, `Some(Err)` for a number no latlab writes.
pub fn run_number(text: &str) -> Option<Result<u64, String>> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fits = text
        .parse::<u64>()
        .ok()
        .filter(|n| (1..=MAX_RUN_NUMBER).contains(n));
    Some(fits.ok_or_else(|| {
        format!("run number {text}: a run's number is whole, from 1 to {MAX_RUN_NUMBER}")
    }))
}

/// The next run number after `last`, refused where it would pass [`MAX_RUN_NUMBER`].
pub fn next_run_number(last: u64) -> Result<u64, String> {
    last.checked_add(1)
        .filter(|next| *next <= MAX_RUN_NUMBER)
        .ok_or_else(|| {
            format!(
                "run number {last} is the last a run may have ({MAX_RUN_NUMBER}); save the \
                 baseline anew (--save-baseline) to number its runs from 1"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hostile numbers of every numeric field: NaN, the infinities, -1, 0, a subnormal,
    /// 1e300 and 2^64 - 1 (as a float, 2^64). Each rule refuses what no run writes of it.
    #[test]
    fn every_rule_refuses_what_no_run_writes() {
        let hostile = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            0.0,
            f64::MIN_POSITIVE / 2.0,
            1e300,
            u64::MAX as f64,
        ];
        let refused = |rule: Rule| -> Vec<f64> {
            hostile
                .iter()
                .copied()
                .filter(|&x| check("f", x, rule).is_err())
                .collect()
        };
        let all_but = |kept: &[f64]| -> usize { hostile.len() - kept.len() };
        assert_eq!(refused(Rule::Time).len(), all_but(&[-1.0, 0.0]));
        assert_eq!(refused(Rule::PositiveTime).len(), hostile.len());
        assert_eq!(refused(Rule::Count).len(), hostile.len());
        assert_eq!(refused(Rule::PerCall { calls: 300 }).len(), hostile.len());
        assert_eq!(refused(Rule::Deviation).len(), all_but(&[0.0]));
        assert_eq!(refused(Rule::LogRange).len(), all_but(&[0.0]));
        assert_eq!(refused(Rule::RunNumber).len(), hostile.len());
        for (value, rule) in [
            (12.5, Rule::PositiveTime),
            (-3.0, Rule::Time),
            (4096.0, Rule::Count),
            (200.25, Rule::PerCall { calls: 300 }),
            (1.305, Rule::Deviation),
            (7.1, Rule::LogRange),
            (7.0, Rule::RunNumber),
        ] {
            assert_eq!(check("f", value, rule), Ok(value), "{rule:?}");
        }
        let why = check("counted.instructions", -100.0, Rule::PerCall { calls: 3 }).unwrap_err();
        assert!(
            why.starts_with("counted.instructions is -1e2: fewer than one"),
            "{why}"
        );
        assert!(check("sd", 5.0, Rule::Deviation).is_err());
    }

    #[test]
    fn run_numbers_cannot_wrap() {
        assert_eq!(run_number("7"), Some(Ok(7)));
        assert_eq!(run_number("x"), None);
        assert_eq!(run_number(""), None);
        assert!(run_number("18446744073709551615").unwrap().is_err());
        assert!(run_number("99999999999999999999999").unwrap().is_err());
        assert!(run_number("0").unwrap().is_err());
        assert_eq!(next_run_number(4), Ok(5));
        assert!(next_run_number(MAX_RUN_NUMBER).is_err());
        assert!(next_run_number(u64::MAX).is_err());
    }
}
