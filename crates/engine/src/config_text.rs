//! The text forms of a configuration that every front end accepts (`--samples 30`,
//! `--target-time 500us`, `--pin 0`), parsed and bounded in one place so that the latlab
//! command and the benchmark harness refuse the same values with the same words.

use std::time::Duration;

pub const SAMPLES_RANGE: std::ops::RangeInclusive<usize> = 5..=100_000;
pub const TARGET_TIME_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_micros(10)..=Duration::from_secs(10);

/// A whole number in `range` (bounded above or not); the refusal names the range and, when
/// given, the unit.
pub fn whole_number_in(
    text: &str,
    range: impl std::ops::RangeBounds<usize>,
    unit: &str,
) -> Result<usize, String> {
    use std::ops::Bound;
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" of {unit}")
    };
    let bounds = match (range.start_bound(), range.end_bound()) {
        (Bound::Included(low), Bound::Included(high)) => format!(" from {low} to {high}"),
        (Bound::Included(low), Bound::Unbounded) => format!(", at least {low}"),
        _ => " in the allowed range".to_string(),
    };
    text.parse::<usize>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| format!("must be a whole number{unit}{bounds}"))
}

/// A duration in `range`, written with a unit such as `example`.
pub fn duration_in(
    text: &str,
    range: &std::ops::RangeInclusive<Duration>,
    example: &str,
) -> Result<Duration, String> {
    let range_words = || {
        format!(
            "must be from {} to {}",
            humantime::format_duration(*range.start()),
            humantime::format_duration(*range.end())
        )
    };
    if text.trim_start().starts_with('-') {
        return Err(range_words());
    }
    let duration = humantime::parse_duration(text).map_err(|e| {
        format!("not a duration ({e}); write a number and a unit, such as {example} or 500us")
    })?;
    if range.contains(&duration) {
        Ok(duration)
    } else {
        Err(range_words())
    }
}

pub fn parse_samples(text: &str) -> Result<usize, String> {
    whole_number_in(text, SAMPLES_RANGE, "")
}

pub fn parse_target_time(text: &str) -> Result<Duration, String> {
    duration_in(text, &TARGET_TIME_RANGE, "2ms")
}

/// Rounds a run measures each result in unless told otherwise: three, the fewest whose
/// spread says anything, each taking a third of the samples.
pub const DEFAULT_ROUNDS: usize = 3;

pub fn parse_rounds(text: &str) -> Result<usize, String> {
    whole_number_in(text, 1..=10, "rounds")
}

/// The most runs one command makes (`--runs`): twenty runs of the main job take ten
/// minutes, more than anyone waits at a prompt; a longer series is a loop in a script.
pub const MAX_RUNS: usize = 20;

pub fn parse_runs(text: &str) -> Result<usize, String> {
    whole_number_in(text, 1..=MAX_RUNS, "runs")
}

pub fn parse_cpu(text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| "must be a CPU number such as 0 (see `latlab env`)".to_string())
}

/// The longest baseline name: with `.json` after it, well within a file name's 255 bytes.
pub const MAX_BASELINE_NAME: usize = 200;

/// A baseline's name, which names a file or directory: letters, digits, `-`, `_` and `.`,
/// not starting with `.` (so that it cannot leave its directory), at most
/// [`MAX_BASELINE_NAME`] characters.
pub fn parse_baseline_name(text: &str) -> Result<String, String> {
    if text.len() > MAX_BASELINE_NAME {
        return Err(format!(
            "a baseline name is at most {MAX_BASELINE_NAME} characters (it names a file)"
        ));
    }
    let valid = !text.is_empty()
        && !text.starts_with('.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if valid {
        Ok(text.to_string())
    } else {
        Err("a baseline name is letters, digits, '-', '_' and '.', such as main or v1.2".into())
    }
}

/// The runs a baseline keeps unless told otherwise (`--baseline-history`): a CI that adds
/// each main-branch run to its baseline keeps the last ten, enough to know how far each
/// figure moves between runs.
pub const DEFAULT_BASELINE_HISTORY: usize = 10;

/// The most runs a baseline keeps: a thousand runs of the main job are 4 GB of results.
pub const MAX_BASELINE_HISTORY: usize = 1000;

pub fn parse_baseline_history(text: &str) -> Result<usize, String> {
    whole_number_in(text, 1..=MAX_BASELINE_HISTORY, "runs")
}

/// A percentage as given on a command line (`2`, `0.5%`), from 0 to 1000.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(pct) if (0.0..=1000.0).contains(&pct) => Ok(pct),
        _ => Err("must be a percentage from 0 to 1000, such as 2 or 0.5".to_string()),
    }
}

/// The most standard deviations a step can be asked to stand beyond: past ten, no step a
/// machine's runs show is one.
pub const MAX_SCATTERS: f64 = 10.0;

/// A number of standard deviations as given on a command line (`2`, `1.5`), from 0 to
/// [`MAX_SCATTERS`].
pub fn parse_scatters(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(scatters) if (0.0..=MAX_SCATTERS).contains(&scatters) => Ok(scatters),
        _ => Err(format!(
            "must be a number of standard deviations from 0 to {MAX_SCATTERS}, such as 2 or 1.5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatters_are_a_number_from_zero_to_ten() {
        assert_eq!(parse_scatters("2"), Ok(2.0));
        assert_eq!(parse_scatters("1.5"), Ok(1.5));
        for bad in ["-1", "11", "NaN", "inf", "two", ""] {
            assert!(parse_scatters(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn percentages_are_read_with_or_without_their_sign() {
        assert_eq!(parse_percent("2"), Ok(2.0));
        assert_eq!(parse_percent("0.5%"), Ok(0.5));
        assert!(parse_percent("-1").is_err());
        assert!(parse_percent("NaN").is_err());
        assert!(parse_percent("1e9").is_err());
        assert!(parse_percent("five").is_err());
    }

    #[test]
    fn baseline_names_cannot_leave_their_directory() {
        assert_eq!(parse_baseline_name("main"), Ok("main".into()));
        assert_eq!(parse_baseline_name("v1.2_rc-1"), Ok("v1.2_rc-1".into()));
        for bad in ["", "../x", "a/b", ".hidden", "a b"] {
            assert!(parse_baseline_name(bad).is_err(), "{bad:?}");
        }
        // A name too long for a file is refused when parsed, not after measuring.
        let longest = "a".repeat(MAX_BASELINE_NAME);
        assert!(parse_baseline_name(&longest).is_ok());
        let refused = parse_baseline_name(&format!("{longest}a")).unwrap_err();
        assert!(refused.contains("at most 200"), "{refused}");
    }
}
