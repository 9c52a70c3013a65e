//! OpenMetrics: a run's figures, or a fleet's, as gauges a Prometheus can take, through
//! node_exporter's textfile collector or `promtool tsdb create-blocks-from openmetrics`.
//!
//! One family per kind of figure, each in base units:
//! - `latlab_latency_seconds{probe,result,host,cpu_model}`: a result's median time per
//!   operation;
//! - `latlab_bandwidth_bytes_per_second{probe,result,host,cpu_model}`: the same result's
//!   rate, for results that move data;
//! - `latlab_headline_seconds{operation,host,cpu_model}`: the latency-numbers table's rows;
//! - `latlab_run_start_time_seconds{host,cpu_model}`: when the run started, so that an alert
//!   can tell a stale host.
//! - a history's changes (`latlab history`, and a fleet's hosts that changed lately):
//!   `latlab_change_ratio` and `latlab_change_start_time_seconds`, written by
//!   `history/metrics.rs` through `gauge_family`.
//!
//! Labels are bounded: the probe and result names are the suite's, the host and CPU model
//! the fleet's; no sample, run id or time is a label. A run exports its primary results (not
//! the points of its sweeps, hundreds per run); a fleet each host's headline rows and the
//! results they are read from. Label values are escaped as the format says (`\\`, `\"`,
//! `\n`); every value is finite (a figure that is not is left out). The backfill variant
//! stamps each sample with its run's start time, which `promtool tsdb
//! create-blocks-from openmetrics` needs and a scrape or the textfile collector refuses.

use crate::formats::FileFormat;
use crate::headline::headline_rows;
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use std::collections::BTreeSet;
use std::fmt::Write;

/// A result's figure as the export takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultFigure {
    /// `probe.id/variant`.
    pub name: String,
    /// Nanoseconds per operation.
    pub median_ns: f64,
    pub bytes_per_operation: Option<u64>,
}

/// One run's figures, as a host's labels name them.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMetrics {
    pub host: String,
    pub cpu_model: String,
    /// RFC 3339, as the results file has it.
    pub started_at: String,
    /// The headline rows: operation and figure, in nanoseconds.
    pub headline: Vec<(String, f64)>,
    pub results: Vec<ResultFigure>,
}

/// Whether samples carry their run's start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamps {
    /// For a scrape or node_exporter's textfile collector, which refuse timestamps.
    None,
    /// For backfilling with promtool.
    RunStart,
}

/// The run's start in seconds since 1970; or why it has none (its start time does not read
/// as RFC 3339, or is before 1970).
fn start_seconds(run: &RunMetrics) -> Result<u64, String> {
    let time = humantime::parse_rfc3339_weak(&run.started_at).map_err(|e| {
        format!(
            "{}'s start time {:?} is not an RFC 3339 time ({e})",
            run.host, run.started_at
        )
    })?;
    let since_epoch = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| format!("{}'s start time is before 1970", run.host))?;
    Ok(since_epoch.as_secs())
}

/// A family: its name (base unit last), its unit and its help.
struct Family {
    name: &'static str,
    unit: &'static str,
    help: &'static str,
}

const LATENCY: Family = Family {
    name: "latlab_latency_seconds",
    unit: "seconds",
    help: "Median time per operation of a latlab result.",
};
const BANDWIDTH: Family = Family {
    name: "latlab_bandwidth_bytes_per_second",
    unit: "bytes_per_second",
    help: "Bytes per second at the median of a latlab result that moves data.",
};
const HEADLINE: Family = Family {
    name: "latlab_headline_seconds",
    unit: "seconds",
    help: "This machine's figure for a row of the latency numbers table.",
};
const START: Family = Family {
    name: "latlab_run_start_time_seconds",
    unit: "seconds",
    help: "When the run these figures are from started, in seconds since 1970.",
};

/// The exposition of `runs` (one per host: a label set appears once), ending `# EOF`.
pub fn exposition(runs: &[RunMetrics], stamps: Stamps) -> Result<String, ExportError> {
    // Each run's start, read once: the start family's value, and each sample's stamp
    // where asked (a start that is not a time is then refused).
    let starts: Vec<Result<u64, String>> = runs.iter().map(start_seconds).collect();
    let stamped: Vec<Option<u64>> = match stamps {
        Stamps::None => vec![None; runs.len()],
        Stamps::RunStart => (starts.iter())
            .map(|start| match start {
                Ok(seconds) => Ok(Some(*seconds)),
                Err(why) => Err(ExportError::Encode {
                    format: "OpenMetrics",
                    detail: why.clone(),
                }),
            })
            .collect::<Result<_, _>>()?,
    };
    let mut text = String::new();
    let mut family = |family: &Family, samples: &mut dyn FnMut(&mut Samples)| {
        let mut lines = Samples::default();
        samples(&mut lines);
        if !lines.text.is_empty() {
            let Family { name, unit, help } = family;
            let _ = write!(
                text,
                "# TYPE {name} gauge\n# UNIT {name} {unit}\n# HELP {name} {help}\n{}",
                lines.text
            );
        }
    };
    family(&LATENCY, &mut |out| {
        for (run, stamp) in runs.iter().zip(&stamped) {
            for result in distinct(&run.results) {
                let (probe, variant) = split_name(&result.name);
                let labels = [("probe", probe), ("result", variant)];
                out.sample(LATENCY.name, &labels, run, result.median_ns / 1e9, *stamp);
            }
        }
    });
    family(&BANDWIDTH, &mut |out| {
        for (run, stamp) in runs.iter().zip(&stamped) {
            for result in distinct(&run.results) {
                let Some(bytes) = result.bytes_per_operation else {
                    continue;
                };
                if result.median_ns > 0.0 {
                    let (probe, variant) = split_name(&result.name);
                    let labels = [("probe", probe), ("result", variant)];
                    let rate = bytes as f64 * 1e9 / result.median_ns;
                    out.sample(BANDWIDTH.name, &labels, run, rate, *stamp);
                }
            }
        }
    });
    family(&HEADLINE, &mut |out| {
        for (run, stamp) in runs.iter().zip(&stamped) {
            for (operation, ns) in &run.headline {
                let labels = [("operation", operation.as_str())];
                out.sample(HEADLINE.name, &labels, run, ns / 1e9, *stamp);
            }
        }
    });
    family(&START, &mut |out| {
        for ((run, stamp), start) in runs.iter().zip(&stamped).zip(&starts) {
            if let Ok(start) = start {
                out.sample(START.name, &[], run, *start as f64, *stamp);
            }
        }
    });
    text.push_str("# EOF\n");
    Ok(text)
}

/// A sample of a gauge: its labels, its value, and its time stamp where it has one.
pub(crate) type GaugeSample<'a> = (Vec<(&'a str, &'a str)>, f64, Option<u64>);

/// One gauge family: its TYPE, UNIT and HELP lines, then a sample per labelled value (a
/// value that is not finite left out); nothing where no sample is left. The history's
/// changes are written so; a run's and a fleet's figures go through [`exposition`].
pub(crate) fn gauge_family(
    (name, unit, help): (&str, &str, &str),
    samples: &[GaugeSample],
) -> String {
    let mut lines = String::new();
    for (labels, value, stamp) in samples {
        sample_line(&mut lines, name, labels.iter(), *value, *stamp);
    }
    match lines.is_empty() {
        true => lines,
        false => {
            format!("# TYPE {name} gauge\n# UNIT {name} {unit}\n# HELP {name} {help}\n{lines}")
        }
    }
}

/// Seconds since 1970 of an RFC 3339 time, where it is one and not before 1970.
pub(crate) fn seconds_since_epoch(time: &str) -> Option<u64> {
    let time = humantime::parse_rfc3339_weak(time).ok()?;
    Some(time.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs())
}

/// A run's results, each name once (two headline rows may read one result).
fn distinct(results: &[ResultFigure]) -> impl Iterator<Item = &ResultFigure> {
    let mut seen = BTreeSet::new();
    results
        .iter()
        .filter(move |result| seen.insert(result.name.as_str()))
}

/// `mem.latency/level/L2` as probe `mem.latency` and result `level/L2`.
pub(crate) fn split_name(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or((name, ""))
}

/// The sample lines of a family.
#[derive(Default)]
struct Samples {
    text: String,
}

impl Samples {
    /// `name{labels,host,cpu_model} value [stamp]`; a value that is not finite is left out.
    fn sample(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        run: &RunMetrics,
        value: f64,
        stamp: Option<u64>,
    ) {
        let host = [("host", run.host.as_str()), ("cpu_model", &run.cpu_model)];
        sample_line(
            &mut self.text,
            name,
            labels.iter().chain(&host),
            value,
            stamp,
        );
    }
}

/// `name{labels} value [stamp]` and a line feed; a value that is not finite is left out.
fn sample_line<'a>(
    out: &mut String,
    name: &str,
    labels: impl Iterator<Item = &'a (&'a str, &'a str)>,
    value: f64,
    stamp: Option<u64>,
) {
    if !value.is_finite() {
        return;
    }
    out.push_str(name);
    let mut opened = false;
    for (label, value) in labels {
        let opening = if opened { ',' } else { '{' };
        opened = true;
        let _ = write!(out, "{opening}{label}=\"{}\"", escaped(value));
    }
    let _ = write!(out, "{} {}", if opened { "}" } else { "" }, number(value));
    if let Some(stamp) = stamp {
        let _ = write!(out, " {stamp}");
    }
    out.push('\n');
}

/// A value to twelve significant digits, far past any figure's precision, so that the
/// binary rounding of a unit's conversion (`4.970000000000001e-8`) does not show.
fn number(value: f64) -> String {
    let text = format!("{value:.11e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => {
            let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{mantissa}e{exponent}")
        }
        _ => text,
    }
}

/// A label value as the format writes it: backslash, double quote and line feed escaped.
pub fn escaped(value: &str) -> std::borrow::Cow<'_, str> {
    if !value.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
        return std::borrow::Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() + 2);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

impl RunMetrics {
    /// A run's headline and its primary results (not its sweeps' points).
    pub fn of_run(run: &RunRecord, declared: &Presentations) -> RunMetrics {
        let headline = (headline_rows(run, declared).into_iter())
            .filter_map(|row| Some((row.operation, row.measured?.median_ns)))
            .collect();
        let results = (run.results())
            .filter(|result| !result.is_sweep_point())
            .map(|result| ResultFigure {
                name: result.name.clone(),
                median_ns: result.summary.median,
                bytes_per_operation: result.bytes_per_operation,
            })
            .collect();
        RunMetrics {
            host: run.environment.host_name.clone(),
            cpu_model: run.environment.cpu.model.clone(),
            started_at: run.started_at.clone(),
            headline,
            results,
        }
    }
}

/// Writes a run's figures as OpenMetrics.
pub struct OpenMetricsExporter {
    pub declared: Presentations,
    pub stamps: Stamps,
}

impl Exporter for OpenMetricsExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        exposition(&[RunMetrics::of_run(run, &self.declared)], self.stamps)
    }
}

/// `--openmetrics FILE`: for node_exporter's textfile collector or a scrape.
pub(crate) const FORMAT: FileFormat<RunRecord> = FileFormat {
    name: "openmetrics",
    help: "Also write the run's headline and primary results here as OpenMetrics gauges \
        (for node_exporter's textfile collector); '-' for standard output",
    exporter: |declared| {
        Box::new(OpenMetricsExporter {
            declared: declared.clone(),
            stamps: Stamps::None,
        })
    },
};

/// `--openmetrics-backfill FILE`: each sample stamped, for promtool.
pub(crate) const BACKFILL_FORMAT: FileFormat<RunRecord> = FileFormat {
    name: "openmetrics-backfill",
    help: "Also write them as OpenMetrics with each sample stamped with the run's start \
        time, for promtool tsdb create-blocks-from openmetrics; '-' for standard output",
    exporter: |declared| {
        Box::new(OpenMetricsExporter {
            declared: declared.clone(),
            stamps: Stamps::RunStart,
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn run(host: &str) -> RunMetrics {
        RunMetrics {
            host: host.into(),
            cpu_model: "Model \"X\" 9".into(),
            started_at: "2026-11-26T10:00:00Z".into(),
            headline: vec![("L2 cache reference".into(), 4.2)],
            results: vec![
                ResultFigure {
                    name: "mem.latency/level/L2".into(),
                    median_ns: 4.2,
                    bytes_per_operation: None,
                },
                ResultFigure {
                    name: "mem.bandwidth/read/64MiB".into(),
                    median_ns: 2.0,
                    bytes_per_operation: Some(64),
                },
                ResultFigure {
                    name: "cpu.weird/nan".into(),
                    median_ns: f64::NAN,
                    bytes_per_operation: None,
                },
            ],
        }
    }

    /// Each family has its type, unit and help before its samples, values are in base
    /// units, a figure that is not finite is left out, and the text ends `# EOF`.
    #[test]
    fn families_come_whole_in_base_units() {
        let text = exposition(&[run("a")], Stamps::None).unwrap();
        let expected_l2 = "latlab_latency_seconds{probe=\"mem.latency\",result=\"level/L2\",\
                           host=\"a\",cpu_model=\"Model \\\"X\\\" 9\"} 4.2e-9\n";
        assert!(text.contains(expected_l2), "{text}");
        assert!(text.contains("latlab_bandwidth_bytes_per_second{probe=\"mem.bandwidth\",result=\"read/64MiB\",host=\"a\",cpu_model=\"Model \\\"X\\\" 9\"} 3.2e10\n"), "{text}");
        assert!(text.contains("latlab_headline_seconds{operation=\"L2 cache reference\""));
        assert!(text.contains("latlab_run_start_time_seconds{host=\"a\",cpu_model=\"Model \\\"X\\\" 9\"} 1.7956872e9\n"), "{text}");
        assert!(!text.contains("nan"), "{text}");
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(text.matches("# EOF").count(), 1);
        for name in [LATENCY.name, BANDWIDTH.name, HEADLINE.name, START.name] {
            let type_line = text.find(&format!("# TYPE {name} gauge\n")).unwrap();
            let first_sample = text.find(&format!("\n{name}{{")).unwrap();
            assert!(type_line < first_sample, "{name}");
        }
    }

    #[test]
    fn numbers_drop_the_rounding_of_the_conversion() {
        assert_eq!(number(49.7 / 1e9), "4.97e-8");
        assert_eq!(number(3.2e10), "3.2e10");
        assert_eq!(number(1.0), "1e0");
        assert_eq!(number(-0.125), "-1.25e-1");
        assert_eq!(number(1795687200.0), "1.7956872e9");
    }

    /// Backslashes, quotes and line breaks in a label value are escaped: no value ends a
    /// label or a line early.
    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escaped("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        let text = exposition(&[run("evil\"} 1\n# EOF\nx{y=\"")], Stamps::None).unwrap();
        assert_eq!(text.lines().filter(|l| *l == "# EOF").count(), 1, "{text}");
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            assert!(
                line.contains("host=\"evil\\\"} 1\\n# EOF\\nx{y=\\\"\""),
                "{line}"
            );
        }
    }

    /// Stamped samples carry the run's start in seconds; a start that is not a time is
    /// refused, naming the host.
    #[test]
    fn backfill_samples_carry_the_start_time() {
        let text = exposition(&[run("a")], Stamps::RunStart).unwrap();
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            assert!(line.ends_with(" 1795687200"), "{line}");
        }
        let mut bad = run("b");
        bad.started_at = "yesterday".into();
        let error = exposition(&[bad], Stamps::RunStart)
            .unwrap_err()
            .to_string();
        assert!(error.contains("b's start time \"yesterday\""), "{error}");
    }
}
