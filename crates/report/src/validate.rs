//! What a results file read back must satisfy before anything renders it: every figure
//! finite and not subnormal, every time at most a day per operation and every measured one
//! at least a millionth of a nanosecond, every size between zero and a pebibyte, every summary counting the
//! samples it summarises. A file that breaks one is refused, naming the first bad field;
//! the renderers can then assume figures a real run could have produced.

use latlab_engine::model::{BenchResult, ResultKind, RunRecord};
use latlab_engine::names::key;
use latlab_engine::stats::Summary;
use std::fmt::Display;

pub use latlab_doors::rules::{MAX_TIME_NS, MIN_TIME_NS};
use latlab_doors::rules::{Rule, check};

/// [`check`], its value dropped.
fn check_rule(at: impl Display + Copy, value: f64, rule: Rule) -> Result<(), String> {
    check(at, value, rule).map(drop)
}
/// The largest size a parameter or an operation can name: a pebibyte.
pub const MAX_BYTES: f64 = 1_125_899_906_842_624.0;

/// Checks a run read from a file; the error names the first field that no run could have
/// written, and why.
pub fn validate(run: &RunRecord) -> Result<(), String> {
    validate_as(run, Samples::Kept)
}

/// As [`validate`], for a run read without its samples
/// ([`latlab_engine::model::without_samples`]): every check but those of the samples.
pub fn validate_figures(run: &RunRecord) -> Result<(), String> {
    validate_as(run, Samples::Skipped)
}

/// Whether the results' samples were read.
#[derive(Clone, Copy, PartialEq)]
enum Samples {
    Kept,
    Skipped,
}

fn validate_as(run: &RunRecord, samples: Samples) -> Result<(), String> {
    started_at(&run.started_at)?;
    let clock = &run.clock;
    within("clock.frequency_hz", clock.frequency_hz, 1.0, 1e13)?;
    check(
        "clock.resolution_ns",
        clock.resolution_ns,
        Rule::PositiveTime,
    )?;
    within(
        "clock.region_overhead_ns",
        clock.region_overhead_ns,
        0.0,
        MAX_TIME_NS,
    )?;
    settings(&run.settings)?;
    environment(&run.environment)?;
    if let Some(load) = run.load_avg_after {
        for value in load {
            within("load_avg_after", value, 0.0, MAX_LOAD)?;
        }
    }
    for (i, check) in run.stability.iter().enumerate() {
        let at = format!("stability[{i}] ({})", check.name);
        // The share past which a check counts as moved: a share of its figure.
        let share = check.moved_share;
        if !(share > 0.0 && share <= 1.0) || share.is_subnormal() {
            return Err(format!(
                "{at}.moved_share is {share:e}: a check moves past a share from 0 to 1: the \
                 file is damaged"
            ));
        }
        // A check reads a chase or a hand-off: every figure of it is a time positive.
        for (which, reading) in [("start", Some(&check.start)), ("end", check.end.as_ref())] {
            let Some(reading) = reading else { continue };
            summary(&format!("{at}.{which}"), reading, None)?;
            check_rule(
                &format!("{at}.{which}.min"),
                reading.min,
                Rule::PositiveTime,
            )?;
        }
    }
    // A probe id may repeat (the harness writes a probe per set of benchmarks measured
    // side by side, and a group can have several); a result name may not.
    let mut result_names = std::collections::HashSet::new();
    for (p, probe) in run.probes.iter().enumerate() {
        within(
            &format!("probes[{p}].duration_ns"),
            probe.duration_ns as f64,
            0.0,
            MAX_RUN_NS,
        )?;
        name_length(&format!("probes[{p}].id"), &probe.id)?;
        for (r, result) in probe.results.iter().enumerate() {
            name_length(&format!("probes[{p}].results[{r}].name"), &result.name)?;
            let at = format!("probes[{p}].results[{r}] ({})", result.name);
            if !result_names.insert(result.name.as_str()) {
                return Err(format!(
                    "{at}.name names a result already in the run: the file was edited or \
                     damaged"
                ));
            }
            one_result(&at, result, samples)?;
        }
    }
    Ok(())
}

/// The longest name of a probe or result read back: far past any a probe or a benchmark
/// (its group, arguments and types) is given, short enough that a file of many cannot take
/// the memory of a fleet.
pub(crate) const MAX_NAME_BYTES: usize = 1024;

/// A name no longer than [`MAX_NAME_BYTES`], refused by its field (never quoted whole).
pub(crate) fn name_length(field: &str, name: &str) -> Result<(), String> {
    if name.len() <= MAX_NAME_BYTES {
        return Ok(());
    }
    Err(format!(
        "{field} is {} bytes long, more than a name latlab writes ({MAX_NAME_BYTES} at most)",
        name.len()
    ))
}

/// The longest text of any kind a file read back may hold (a method, a note, a reason, a
/// key): far past any latlab writes, short enough that quoting one in every line of a
/// fleet's report stays small.
pub(crate) const MAX_TEXT_BYTES: usize = 16 * 1024;

/// Refuses a JSON document that holds a string longer than [`MAX_TEXT_BYTES`] (as written,
/// escapes included), before it is read into anything: one pass over its bytes, which
/// names where the string starts and never quotes it.
pub(crate) fn strings_bounded(json: &[u8]) -> Result<(), String> {
    let mut at = 0;
    while let Some(open) = memchr::memchr(b'"', &json[at..]) {
        let start = at + open + 1;
        let mut end = start;
        loop {
            match memchr::memchr2(b'"', b'\\', &json[end..]) {
                Some(k) if json[end + k] == b'\\' => end += k + 2,
                Some(k) => {
                    end += k;
                    break;
                }
                None => return Ok(()),
            }
        }
        if end - start > MAX_TEXT_BYTES {
            return Err(format!(
                "a string at byte {start} is {} bytes long, more than any text latlab writes \
                 ({MAX_TEXT_BYTES} at most): the file was edited or damaged",
                end - start
            ));
        }
        at = end + 1;
    }
    Ok(())
}

/// The most iterations a sample times, or events (switches, faults) a result counts: far
/// past what a run of thirty days at a millionth of a nanosecond an event would make.
const MAX_EVENTS: f64 = 1e18;
/// The largest coefficient of variation a summary holds: a derived figure's mean can lie
/// near zero, its spread not.
pub(crate) const MAX_CV: f64 = 1e12;
/// The longest a run or a probe takes: thirty days.
const MAX_RUN_NS: f64 = 30.0 * 86_400e9;
/// The largest load average a machine reports.
const MAX_LOAD: f64 = 1e6;
/// The most CPUs, or memory nodes, a machine has: far past any made.
const MAX_CPUS: f64 = (1u64 << 20) as f64;

/// How the run sampled: samples and rounds at least one, times within a run's length.
fn settings(settings: &latlab_engine::model::RunSettings) -> Result<(), String> {
    within("settings.samples", settings.samples as f64, 1.0, 1e9)?;
    within("settings.rounds", settings.rounds as f64, 1.0, 1000.0)?;
    let target = settings.target_sample_time_ns as f64;
    within("settings.target_sample_time_ns", target, 1.0, MAX_TIME_NS)?;
    let budget = settings.budget_per_benchmark_ns as f64;
    within("settings.budget_per_benchmark_ns", budget, 1.0, MAX_RUN_NS)
}

/// Whether `text` is a time as a run's start is written: RFC 3339 in UTC to the second
/// (`2026-12-07T13:08:50Z`), a real date and time. Held to that one form, starts order as
/// text exactly as in time: a fraction of a second (`…50.5Z`) would sort before the
/// second it follows.
pub fn is_start_time(text: &str) -> bool {
    text.len() == "2026-12-07T13:08:50Z".len() && humantime::parse_rfc3339(text).is_ok()
}

/// When a run started, as latlab writes it: an RFC 3339 time in UTC
/// (`2026-12-07T13:08:50Z`). Runs are ordered by it, so a start that is not one (empty,
/// "garbage", another offset) is refused rather than sorted as text.
pub(crate) fn started_at(text: &str) -> Result<(), String> {
    if is_start_time(text) {
        return Ok(());
    }
    let shown: String = crate::printable::one_line(text).chars().take(40).collect();
    Err(format!(
        "started_at \"{shown}\" is not a time in UTC as latlab writes one \
         (2026-12-07T13:08:50Z)"
    ))
}

/// The host's name and CPU model, which say which machine a run is of, refused past
/// [`crate::printable::MAX_MACHINE_FIELD_CHARS`] rather than cut: two hosts whose names share
/// their first characters would otherwise be read as one.
fn identity(environment: &latlab_engine::environment::Environment) -> Result<(), String> {
    use crate::printable::MAX_MACHINE_FIELD_CHARS as LONGEST;
    for (field, text) in [
        ("environment.host_name", &environment.host_name),
        ("environment.cpu.model", &environment.cpu.model),
    ] {
        let length = text.chars().count();
        if length > LONGEST {
            return Err(format!(
                "{field} is {length} characters long, more than any machine's ({LONGEST} at \
                 most)"
            ));
        }
    }
    Ok(())
}

/// The machine as the run recorded it, each figure one a machine reports: what a
/// comparison decides by (the caches that say which stability checks speak for a result,
/// the CPUs that say which machine it was) cannot be made to decide otherwise.
pub(crate) fn environment(
    environment: &latlab_engine::environment::Environment,
) -> Result<(), String> {
    identity(environment)?;
    let cpu = &environment.cpu;
    within(
        "environment.cpu.logical_cpus",
        cpu.logical_cpus as f64,
        1.0,
        MAX_CPUS,
    )?;
    if let Some(cores) = cpu.physical_cores {
        within(
            "environment.cpu.physical_cores",
            cores as f64,
            1.0,
            MAX_CPUS,
        )?;
    }
    for (field, mhz) in [("mhz", cpu.mhz), ("max_mhz", cpu.max_mhz)] {
        if let Some(mhz) = mhz {
            within(&format!("environment.cpu.{field}"), mhz, 0.0, 1e7)?;
        }
    }
    for (i, cache) in environment.caches.iter().enumerate() {
        let at = format!("environment.caches[{i}]");
        within(&format!("{at}.level"), f64::from(cache.level), 1.0, 8.0)?;
        within(
            &format!("{at}.size_bytes"),
            cache.size_bytes as f64,
            0.0,
            MAX_BYTES,
        )?;
        let line = cache.line_bytes.unwrap_or(0) as f64;
        within(&format!("{at}.line_bytes"), line, 0.0, 1048576.0)?;
        within(
            &format!("{at}.shared_by_cpus"),
            cache.shared_by_cpus as f64,
            0.0,
            MAX_CPUS,
        )?;
    }
    for (i, class) in environment.core_classes.iter().enumerate() {
        let khz = class.max_frequency_khz.unwrap_or(0) as f64;
        within(
            &format!("environment.core_classes[{i}].max_frequency_khz"),
            khz,
            0.0,
            1e10,
        )?;
        cpus(&format!("environment.core_classes[{i}].cpus"), &class.cpus)?;
    }
    for (i, node) in environment.memory_nodes.iter().enumerate() {
        let at = format!("environment.memory_nodes[{i}]");
        within(&format!("{at}.node"), node.node as f64, 0.0, MAX_CPUS)?;
        cpus(&format!("{at}.cpus"), &node.cpus)?;
        let bytes = node.memory_bytes.unwrap_or(0) as f64;
        within(&format!("{at}.memory_bytes"), bytes, 0.0, MAX_BYTES)?;
    }
    if let Some(allowed) = &environment.allowed_cpus {
        cpus("environment.allowed_cpus", allowed)?;
    }
    if let Some(load) = environment.load_avg {
        for value in load {
            within("environment.load_avg", value, 0.0, MAX_LOAD)?;
        }
    }
    if let Some(quota) = environment.cpu_quota
        && !(quota > 0.0 && quota <= MAX_CPUS)
    {
        return Err(format!(
            "environment.cpu_quota is {quota:e}: a share of CPUs, more than none: the file \
             is damaged"
        ));
    }
    Ok(())
}

/// CPU numbers, each one a machine could have.
fn cpus(at: &str, cpus: &[usize]) -> Result<(), String> {
    match cpus.iter().find(|&&cpu| cpu as f64 >= MAX_CPUS) {
        Some(cpu) => Err(format!(
            "{at} holds CPU {cpu}, past any machine's: the file is damaged"
        )),
        None => Ok(()),
    }
}

fn one_result(at: &str, result: &BenchResult, samples: Samples) -> Result<(), String> {
    if samples == Samples::Kept {
        the_samples(at, result)?;
    } else {
        summary(&format!("{at}.summary"), &result.summary, None)?;
    }
    measured(at, result)?;
    if let Some(overhead) = result.loop_overhead_ns {
        time(&format!("{at}.loop_overhead_ns"), overhead)?;
    }
    if let Some(cold) = result.cold_ns {
        time(&format!("{at}.cold_ns"), cold)?;
    }
    if let Some(bytes) = result.bytes_per_operation {
        within(
            &format!("{at}.bytes_per_operation"),
            bytes as f64,
            1.0,
            MAX_BYTES,
        )?;
    }
    if let Some(items) = result.items_per_operation {
        within(
            &format!("{at}.items_per_operation"),
            items as f64,
            1.0,
            MAX_BYTES,
        )?;
    }
    for size_key in [
        key::WORKING_SET_BYTES,
        key::SIZE_BYTES,
        key::COPY_BYTES,
        key::STRIDE_BYTES,
    ] {
        if let Some(size) = result.parameter(size_key).and_then(|v| v.as_f64()) {
            // A zero size is real: a file probe writes empty files too.
            within(&format!("{at}.parameters.{size_key}"), size, 0.0, MAX_BYTES)?;
        }
    }
    if let Some(counted) = &result.counted {
        counts(&format!("{at}.counted"), counted)?;
    }
    times(at, "round_medians_ns", &result.round_medians_ns)?;
    if result.iterations == 0 {
        return Err(format!(
            "{at}.iterations is 0: every sample times at least one"
        ));
    }
    within(
        &format!("{at}.iterations"),
        result.iterations as f64,
        1.0,
        MAX_EVENTS,
    )?;
    {
        let integrity = &result.integrity;
        for (field, count) in [
            ("voluntary_switches", integrity.voluntary_switches),
            ("involuntary_switches", integrity.involuntary_switches),
            ("minor_page_faults", integrity.minor_page_faults),
            ("major_page_faults", integrity.major_page_faults),
        ] {
            within(
                &format!("{at}.integrity.{field}"),
                count as f64,
                0.0,
                MAX_EVENTS,
            )?;
        }
    }
    Ok(())
}

/// A result's counts: by a counter latlab counts with, over a whole number of calls, each
/// figure a count spread over them ([`Rule::PerCall`]): never zero, negative, subnormal or
/// more than a 64-bit counter holds.
fn counts(at: &str, counted: &latlab_engine::model::Counted) -> Result<(), String> {
    if !matches!(counted.via.as_str(), "callgrind" | "perf") {
        return Err(format!(
            "{at}.via is {:?}: latlab counts with callgrind or perf",
            counted.via
        ));
    }
    let calls = counted.calls;
    check(&format!("{at}.calls"), calls as f64, Rule::Count)?;
    check(
        &format!("{at}.instructions"),
        counted.instructions,
        Rule::PerCall { calls },
    )?;
    if let Some(cache) = &counted.cache {
        for (field, misses) in [
            ("l1_misses", cache.l1_misses),
            ("last_level_misses", cache.last_level_misses),
        ] {
            // None missed is a count too.
            if misses != 0.0 {
                check(
                    &format!("{at}.cache.{field}"),
                    misses,
                    Rule::PerCall { calls },
                )?;
            }
        }
        let cycles = cache.estimated_cycles;
        check(
            &format!("{at}.cache.estimated_cycles"),
            cycles,
            Rule::PerCall { calls },
        )?;
    }
    Ok(())
}

/// The samples are times, there are some, and the summary counts and summarises them.
fn the_samples(at: &str, result: &BenchResult) -> Result<(), String> {
    times(at, "samples_ns", &result.samples_ns)?;
    times(at, "cpu_samples_ns", &result.cpu_samples_ns)?;
    if result.samples_ns.is_empty() {
        return Err(format!(
            "{at}.samples_ns is empty, but its summary counts {}: every result keeps the \
             samples it summarises",
            result.summary.n
        ));
    }
    // Held to its samples first: an edited figure is named as one outside them.
    summarises(at, result)?;
    summary(
        &format!("{at}.summary"),
        &result.summary,
        Some(result.samples_ns.len()),
    )
}

/// A summary's figures are times; its count matches the samples it summarises.
fn summary(at: &str, s: &Summary, samples: Option<usize>) -> Result<(), String> {
    within(&format!("{at}.n"), s.n as f64, 1.0, MAX_EVENTS)?;
    for (field, outliers) in [
        ("outliers_low", s.outliers_low),
        ("outliers_high", s.outliers_high),
    ] {
        if outliers > s.n {
            return Err(format!(
                "{at}.{field} is {outliers}, more than the {} samples: the file is damaged",
                s.n
            ));
        }
    }
    if let Some(count) = samples
        && s.n != count
    {
        return Err(format!(
            "{at}.n is {} but there are {count} samples: the file is inconsistent",
            s.n
        ));
    }
    for (field, value) in [
        ("min", s.min),
        ("p5", s.p5),
        ("median", s.median),
        ("p95", s.p95),
        ("max", s.max),
        ("mean", s.mean),
        ("median_ci95[0]", s.median_ci95[0]),
        ("median_ci95[1]", s.median_ci95[1]),
    ] {
        time(format_args!("{at}.{field}"), value)?;
    }
    ordered(at, s)?;
    for (field, value) in [("stddev", s.stddev), ("mad", s.mad)] {
        within(format_args!("{at}.{field}"), value, 0.0, MAX_TIME_NS)?;
    }
    if let Some(cv) = s.cv {
        within(&format!("{at}.cv"), cv, 0.0, MAX_CV)?;
    }
    Ok(())
}

/// A summary's figures in their order: the least at most its fifth percentile and the
/// lower end of its median's interval, both at most the median, which is at most the upper
/// end and the 95th percentile, both at most the most; the mean between the least and the
/// most. A figure edited out of its place is refused.
fn ordered(at: &str, s: &Summary) -> Result<(), String> {
    let slack = 1e-9 * s.min.abs().max(s.max.abs());
    let pairs = [
        ("min", s.min, "p5", s.p5),
        ("min", s.min, "median_ci95[0]", s.median_ci95[0]),
        ("p5", s.p5, "median", s.median),
        ("median_ci95[0]", s.median_ci95[0], "median", s.median),
        ("median", s.median, "median_ci95[1]", s.median_ci95[1]),
        ("median", s.median, "p95", s.p95),
        ("p95", s.p95, "max", s.max),
        ("median_ci95[1]", s.median_ci95[1], "max", s.max),
        ("min", s.min, "mean", s.mean),
        ("mean", s.mean, "max", s.max),
    ];
    match pairs.iter().find(|(_, low, _, high)| *low > *high + slack) {
        Some((low_name, low, high_name, high)) => Err(format!(
            "{at}.{low_name} is {low} ns, more than its {high_name} ({high} ns): a summary's \
             figures are in order; the file was edited or damaged"
        )),
        None => Ok(()),
    }
}

/// Every time of `values`, at `at.field[i]` ([`Rule::Time`]); the field named only for
/// the first that breaks the rule (a results file holds millions of samples).
fn times(at: &str, field: &str, values: &[f64]) -> Result<(), String> {
    match (values.iter()).position(|&x| check("", x, Rule::Time).is_err()) {
        Some(i) => time(&format!("{at}.{field}[{i}]"), values[i]),
        None => Ok(()),
    }
}

/// A time ([`Rule::Time`]): finite, not subnormal, and at most [`MAX_TIME_NS`] in size.
/// Zero and negative times are allowed: a difference of two figures, noise under a
/// subtracted empty loop, or an empty loop the compiler removed can read so.
pub(crate) fn time(at: impl Display + Copy, ns: f64) -> Result<(), String> {
    check(at, ns, Rule::Time).map(drop)
}

/// The summary's median lies among the samples it summarises (within a part in a million,
/// for the rounding of a file's decimals): an edited median is refused.
fn summarises(at: &str, result: &BenchResult) -> Result<(), String> {
    let (least, most) = (result.samples_ns.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    let slack = 1e-6 * least.abs().max(most.abs());
    let median = result.summary.median;
    if median < least - slack || median > most + slack {
        return Err(format!(
            "{at}.summary.median is {median} ns, outside its samples ({least} to {most} ns): \
             the file was edited or damaged"
        ));
    }
    // Its least and most are the samples' own.
    let summary = &result.summary;
    for (field, value, of_samples) in [("min", summary.min, least), ("max", summary.max, most)] {
        if (value - of_samples).abs() > slack {
            return Err(format!(
                "{at}.summary.{field} is {value} ns, but its samples' is {of_samples} ns: the \
                 file was edited or damaged"
            ));
        }
    }
    Ok(())
}

/// A measured figure (not derived, not suspect) is at least [`MIN_TIME_NS`] in size: below
/// a millionth of a nanosecond per operation no clock and loop can resolve it. Its samples
/// may dip below zero (noise under the subtracted empty loop), but not all of them: no
/// operation takes less than no time every time (checked where the samples were read).
/// Observed events are the exception ([`only_positive`]).
fn measured(at: &str, result: &BenchResult) -> Result<(), String> {
    let median = result.summary.median;
    let is_measured = result.kind != ResultKind::Derived && !result.verdict.is_suspect();
    if !is_measured {
        return Ok(());
    }
    if only_positive(result.kind)
        && !result.samples_ns.is_empty()
        && result.samples_ns.iter().all(|&x| x <= 0.0)
    {
        return Err(format!(
            "{at}.samples_ns are all zero or negative, for a figure said to be measured: \
             the file is damaged"
        ));
    }
    measured_median(&format!("{at}.summary.median"), result.kind, median)
}

/// The median of a measured figure, at `field`, is a positive time of at least
/// [`MIN_TIME_NS`] ([`Rule::PositiveTime`]) where its kind is [`only_positive`], any time
/// ([`Rule::Time`]) where not: the rule of a results file and of a summary alike. (A loop
/// whose work read no time more than its empty twin is judged optimised away, never
/// measured.)
pub(crate) fn measured_median(
    field: impl Display + Copy,
    kind: ResultKind,
    median: f64,
) -> Result<(), String> {
    let rule = if only_positive(kind) {
        Rule::PositiveTime
    } else {
        Rule::Time
    };
    check_rule(field, median, rule)
}

/// Whether a measured figure of this kind is only ever positive, its median and some of its
/// samples. Not an observed event's: it is a span between two timestamps, which may be taken
/// on two CPUs and run backwards, in some events or all (`Runner::observe_phases`: a thread
/// that ran before the call creating it returned, as a 2-vCPU guest's
/// `thread.lifecycle/start` does in most events of some runs). Readers of a figure that must
/// be positive (a ratio, a logarithm) pass over one that is not.
fn only_positive(kind: ResultKind) -> bool {
    kind != ResultKind::Observations
}

/// A figure that must lie between `least` and `most` (and so be finite).
pub(crate) fn within(
    at: impl Display + Copy,
    value: f64,
    least: f64,
    most: f64,
) -> Result<(), String> {
    if !(least..=most).contains(&value) || value.is_subnormal() {
        return Err(format!(
            "{at} is {value:e}; it must be between {least:e} and {most:e}: the file is damaged"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string past the bound is refused by where it starts, escapes and all; strings
    /// within it, keys among them, and escaped quotes inside them are read through.
    #[test]
    fn a_string_longer_than_any_text_latlab_writes_is_refused() {
        let within = format!(
            r#"{{"a\"b": "{}", "c": ["\\", "x"]}}"#,
            "y".repeat(MAX_TEXT_BYTES)
        );
        assert_eq!(strings_bounded(within.as_bytes()), Ok(()));
        let past = format!(r#"{{"k": "{}\"{}"}}"#, "y".repeat(MAX_TEXT_BYTES), "z");
        let refused = strings_bounded(past.as_bytes()).unwrap_err();
        assert!(
            refused.starts_with("a string at byte 7 is 16387 bytes long"),
            "{refused}"
        );
        let key = format!(r#"{{"{}": 1}}"#, "k".repeat(MAX_TEXT_BYTES + 1));
        assert!(strings_bounded(key.as_bytes()).is_err());
        assert_eq!(
            strings_bounded(r#"{"open": "never closed"#.as_bytes()),
            Ok(())
        );
    }
    use crate::test_records::{probe, record, result};

    fn with_median(median: f64) -> RunRecord {
        let mut r = result("mem.latency/x", 1.0, &[]);
        r.kind = ResultKind::TimedLoop;
        r.samples_ns = vec![median; 5];
        r.summary = Summary::of(&r.samples_ns).unwrap();
        record(vec![probe("mem.latency", vec![r])])
    }

    #[test]
    fn a_real_shape_passes_and_extreme_figures_are_named() {
        assert_eq!(validate(&with_median(1.5)), Ok(()));
        let mut difference = with_median(-0.2);
        difference.probes[0].results[0].kind = ResultKind::Derived;
        assert_eq!(
            validate(&difference),
            Ok(()),
            "a negative difference is allowed"
        );
        let negative = validate(&with_median(-0.2)).unwrap_err();
        assert!(negative.contains("all zero or negative"), "{negative}");
        let zero = validate(&with_median(0.0)).unwrap_err();
        assert!(zero.contains("said to be measured"), "{zero}");
        let subnormal = validate(&with_median(5e-324)).unwrap_err();
        assert!(
            subnormal.starts_with("probes[0].results[0] (mem.latency/x).samples_ns[0] is 5e-324"),
            "{subnormal}"
        );
        let huge = validate(&with_median(1e308)).unwrap_err();
        assert!(huge.contains("more than a day"), "{huge}");
        let tiny = validate(&with_median(1e-9)).unwrap_err();
        assert!(tiny.contains("a run only writes positive"), "{tiny}");
    }

    /// A span between timestamps on two CPUs runs backwards when the later event came first:
    /// a new thread's first instruction before the call that created it returned, in most
    /// events of a 2-vCPU guest's run (`thread.lifecycle/start`). Such a run's own
    /// file is read back; the same figure from a calibrated loop is not.
    #[test]
    fn an_observed_span_may_run_backwards_and_a_loop_may_not() {
        let backwards = |kind: ResultKind| {
            let mut r = result("thread.lifecycle/start", 1.0, &[]);
            r.kind = kind;
            r.samples_ns = vec![-15_800.0, -16_100.0, 2_400.0, -15_500.0, -14_900.0];
            r.summary = Summary::of(&r.samples_ns).unwrap();
            record(vec![probe("thread.lifecycle", vec![r])])
        };
        assert_eq!(validate(&backwards(ResultKind::Observations)), Ok(()));
        let error = validate(&backwards(ResultKind::TimedLoop)).unwrap_err();
        assert!(error.contains("a run only writes positive"), "{error}");
        // In every event, on a machine where the new thread always runs first: still read.
        let mut always = backwards(ResultKind::Observations);
        let result = &mut always.probes[0].results[0];
        result.samples_ns = vec![-15_800.0, -16_100.0, -15_500.0, -14_900.0, -15_200.0];
        result.summary = Summary::of(&result.samples_ns).unwrap();
        assert_eq!(validate(&always), Ok(()));
    }

    /// An edited median (outside its samples), a summary without its samples, and a result
    /// named twice are refused, naming the field.
    #[test]
    fn a_summary_must_match_its_samples_and_names_must_be_unique() {
        let mut run = with_median(2.0);
        run.probes[0].results[0].summary.median = -5.0;
        let error = validate(&run).unwrap_err();
        assert!(
            error.contains("(mem.latency/x).summary.median is -5 ns, outside its samples"),
            "{error}"
        );
        let mut run = with_median(2.0);
        run.probes[0].results[0].samples_ns.clear();
        let error = validate(&run).unwrap_err();
        assert!(error.contains("samples_ns is empty"), "{error}");
        let mut run = with_median(2.0);
        let twice = run.probes[0].results[0].clone();
        run.probes[0].results.push(twice);
        let error = validate(&run).unwrap_err();
        assert!(
            error.starts_with("probes[0].results[1] (mem.latency/x).name names a result already"),
            "{error}"
        );
        let mut run = with_median(2.0);
        let mut again = run.probes[0].clone();
        run.probes.push(again.clone());
        let error = validate(&run).unwrap_err();
        assert!(error.starts_with("probes[1].results[0]"), "{error}");
        // One probe id twice, with results of their own, is a harness's run.
        again.results[0].name = "mem.latency/y".into();
        run.probes[1] = again;
        assert_eq!(validate(&run), Ok(()));
    }

    #[test]
    fn a_summary_must_count_its_samples_and_sizes_must_be_within() {
        let mut run = with_median(2.0);
        run.probes[0].results[0].summary.n = 7;
        let error = validate(&run).unwrap_err();
        assert!(
            error.contains("summary.n is 7 but there are 5 samples"),
            "{error}"
        );

        let mut run = with_median(2.0);
        let r = run.probes[0].results.remove(0);
        run.probes[0]
            .results
            .push(r.with_parameter(key::WORKING_SET_BYTES, -4096.0));
        let error = validate(&run).unwrap_err();
        assert!(
            error.contains("parameters.working_set_bytes is -4.096e3"),
            "{error}"
        );
    }

    /// Hand-edited counts are refused: none, negative, subnormal or past what a 64-bit
    /// counter holds over the calls counted, over no calls, or by a counter latlab does not
    /// count with.
    #[test]
    fn counts_no_counter_writes_are_refused() {
        let counted = |instructions: f64, calls: u64, via: &str| {
            let mut run = with_median(2.0);
            run.probes[0].results[0].counted = Some(latlab_engine::model::Counted {
                via: via.into(),
                instructions,
                cache: None,
                calls,
            });
            validate(&run)
        };
        assert_eq!(counted(200.25, 300, "callgrind"), Ok(()));
        assert_eq!(counted(3.0, 12, "perf"), Ok(()));
        for (instructions, calls) in [
            (-100.0, 300),
            (0.0, 300),
            (1e-310, 300),
            (1e300, 300),
            (f64::NAN, 300),
            (200.0, 0),
        ] {
            let refused = counted(instructions, calls, "callgrind").unwrap_err();
            assert!(
                refused.contains(".counted."),
                "{instructions} {calls}: {refused}"
            );
        }
        assert!(
            counted(200.0, 300, "stopwatch")
                .unwrap_err()
                .contains("callgrind or perf")
        );
    }
}
