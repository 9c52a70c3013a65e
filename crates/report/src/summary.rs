//! The compact summary of a run: each result's median, the 95% interval of that median, how
//! far it moved between the run's rounds and an id of its method, with the environment and
//! the headline figures, in a few percent of the full file's bytes (the samples are most of
//! those). A run writes it beside its results (`summary.json`; `--summary FILE` anywhere);
//! `latlab fleet` reads it in place of the full file, and `latlab export` makes one from a
//! full file written before.
//!
//! The document's first key is [`SUMMARY_KEY`], so a reader tells a summary from a full
//! results file by its first bytes, without reading the rest.
//!
//! A summary read back is held to the results file's rules ([`crate::validate`]): every
//! figure a time, every measured one at least a millionth of a nanosecond, each result named
//! once, and ([`check_headline`]) each headline row the figure of the result it names.

use crate::formats::FileFormat;
use crate::headline::headline_rows;
use crate::validate::{self, MAX_BYTES};
use crate::{ExportError, Exporter};
use latlab_engine::environment::Environment;
use latlab_engine::model::{BenchResult, ResultKind, RunRecord};
use latlab_engine::presentation::Presentations;
use latlab_engine::stats::Summary;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::hash::Hasher;

/// The version of the summary's schema; raised on incompatible changes.
pub const SUMMARY_SCHEMA_VERSION: u32 = 1;
/// The key that makes a document a summary, written first.
pub const SUMMARY_KEY: &str = "latlab_summary_version";

/// A run in brief: what a fleet reads of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSummary<'a> {
    pub latlab_summary_version: u32,
    pub latlab_version: String,
    /// RFC 3339, UTC, as in the results file.
    pub started_at: String,
    pub suite: String,
    /// False when the run was interrupted (its summary has what it measured).
    pub complete: bool,
    pub environment: Environment,
    /// The headline rows this run has a figure for, in the table's order.
    #[serde(borrow)]
    pub headline: Vec<HeadlineFigure<'a>>,
    /// Every result, in run order.
    #[serde(borrow)]
    pub results: Vec<ResultSummary<'a>>,
}

/// A headline row's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadlineFigure<'a> {
    /// The row, as the table names it (`Main memory reference`).
    #[serde(borrow)]
    pub operation: Cow<'a, str>,
    /// The result it is read from (`mem.latency/level/DRAM`).
    #[serde(borrow)]
    pub result: Cow<'a, str>,
    pub median_ns: f64,
    pub p5_ns: f64,
    pub p95_ns: f64,
    pub samples: usize,
}

/// One result, in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultSummary<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// A stable 64-bit hash of its method's text, in hex: two results with one id were
    /// measured the same way.
    #[serde(borrow)]
    pub method_id: Cow<'a, str>,
    pub kind: ResultKind,
    /// Nanoseconds per operation.
    pub median_ns: f64,
    /// The distribution-free 95% interval of the median.
    pub median_ci95_ns: [f64; 2],
    /// The coefficient of variation of its rounds' medians: how far it moved within the
    /// run. Absent when it was measured in one round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_rounds_cv: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_operation: Option<u64>,
    /// A point of a sweep ([`BenchResult::is_sweep_point`]), not a primary figure.
    pub sweep_point: bool,
    /// Its verdict was suspect (the compiler may have deleted the work): its median need
    /// not be a time an operation could take. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspect: bool,
}

impl RunSummary<'_> {
    /// The summary of `run`, its headline read as `declared` says.
    pub fn of(run: &RunRecord, declared: &Presentations) -> RunSummary<'static> {
        let headline = (headline_rows(run, declared).into_iter())
            .filter_map(|row| {
                let measured = row.measured?;
                Some(HeadlineFigure {
                    operation: row.operation.into(),
                    result: measured.result.into(),
                    median_ns: measured.median_ns,
                    p5_ns: measured.p5_ns,
                    p95_ns: measured.p95_ns,
                    samples: measured.samples,
                })
            })
            .collect();
        RunSummary {
            latlab_summary_version: SUMMARY_SCHEMA_VERSION,
            latlab_version: run.latlab_version.clone(),
            started_at: run.started_at.clone(),
            suite: run.settings.suite.clone(),
            complete: run.complete,
            environment: run.environment.clone(),
            headline,
            results: run.results().map(ResultSummary::of).collect(),
        }
    }

    /// The result named `name`.
    pub fn result(&self, name: &str) -> Option<&ResultSummary<'_>> {
        self.results.iter().find(|r| r.name == name)
    }
}

impl ResultSummary<'_> {
    /// Measured, as the results file's rules say: neither derived from others nor suspect.
    pub fn is_measured(&self) -> bool {
        self.kind != ResultKind::Derived && !self.suspect
    }

    fn of(result: &BenchResult) -> ResultSummary<'static> {
        let between_rounds_cv = (result.round_medians_ns.len() > 1)
            .then(|| Summary::of(&result.round_medians_ns)?.cv)
            .flatten();
        ResultSummary {
            name: result.name.clone().into(),
            method_id: method_id(&result.method).into(),
            kind: result.kind,
            median_ns: result.summary.median,
            median_ci95_ns: result.summary.median_ci95,
            between_rounds_cv,
            bytes_per_operation: result.bytes_per_operation,
            sweep_point: result.is_sweep_point(),
            suspect: result.verdict.is_suspect(),
        }
    }
}

/// The id of a method's text: FNV-1a, 64 bits, in hex (stable across builds and
/// platforms, unlike the standard library's hasher).
pub fn method_id(method: &str) -> String {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(method.as_bytes());
    format!("{:016x}", hasher.finish())
}

/// Whether `bytes` begin as a summary does: an object whose first key is [`SUMMARY_KEY`]
/// (after a byte-order mark and white space). The key elsewhere (a host of that name, a
/// nested object) does not make a summary.
pub fn is_summary(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let skip_space =
        |b: &[u8]| -> usize { b.iter().take_while(|c| c.is_ascii_whitespace()).count() };
    let rest = &bytes[skip_space(bytes)..];
    let Some(rest) = rest.strip_prefix(b"{") else {
        return false;
    };
    let rest = &rest[skip_space(rest)..];
    let key = format!("\"{SUMMARY_KEY}\"");
    rest.starts_with(key.as_bytes())
}

/// Reads a summary; the error says what is wrong with it, and its names are made one line
/// each ([`crate::printable::one_line`]).
pub fn parse_summary(bytes: &[u8]) -> Result<RunSummary<'_>, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // Read once into the current schema; only a document that does not read is read again
    // for its version alone, so that a newer schema is refused by name.
    // UTF-8 checked once for the whole text, not string by string.
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("not a latlab summary this latlab reads (not UTF-8: {e})"))?;
    let mut summary = match serde_json::from_str::<RunSummary<'_>>(text) {
        Ok(summary) => summary,
        Err(e) => {
            return Err(match serde_json::from_str::<Version>(text) {
                Ok(version) if version.latlab_summary_version != SUMMARY_SCHEMA_VERSION => {
                    other_schema(version.latlab_summary_version)
                }
                Ok(_) => format!("a latlab summary, but damaged ({e}); write it again"),
                Err(e) if e.is_eof() => {
                    format!("a latlab summary, but damaged: it is truncated ({e}); write it again")
                }
                Err(e) => format!("not a latlab summary this latlab reads ({e})"),
            });
        }
    };
    if summary.latlab_summary_version != SUMMARY_SCHEMA_VERSION {
        return Err(other_schema(summary.latlab_summary_version));
    }
    check_figures(&summary).map_err(|why| format!("{why}; write the summary again"))?;
    one_line_fields(&mut summary);
    Ok(summary)
}

/// The refusal of a summary of another schema than this latlab's.
fn other_schema(version: u32) -> String {
    format!(
        "a summary of schema {version}, which this latlab (schema {SUMMARY_SCHEMA_VERSION}) \
         does not read; read it with the latlab that wrote it"
    )
}

/// The version alone, read first so a newer schema is refused by name.
#[derive(Deserialize)]
struct Version {
    latlab_summary_version: u32,
}

/// Every figure a time a run could have written (a measured one at least
/// [`validate::MIN_TIME_NS`], a headline figure positive), every size within bounds, each result and headline row named once and
/// each row read from a result of the summary.
fn check_figures(summary: &RunSummary<'_>) -> Result<(), String> {
    validate::started_at(&summary.started_at)?;
    validate::environment(&summary.environment)?;
    let hasher = fnv::FnvBuildHasher::default();
    let mut names =
        std::collections::HashSet::with_capacity_and_hasher(summary.results.len(), hasher);
    for result in &summary.results {
        validate::name_length("a result's name", &result.name)?;
        validate::name_length("a result's method id", &result.method_id)?;
        // The field's name is written out only for a refusal: a fleet checks millions.
        let at = |field: &'static str| Field("results", &result.name, field);
        if !names.insert(result.name.as_ref()) {
            return Err(format!(
                "{}.name names a result already in the summary",
                at("")
            ));
        }
        validate::time(at("median_ns"), result.median_ns)?;
        if result.is_measured() {
            validate::measured_median(at("median_ns"), result.kind, result.median_ns)?;
        }
        let [low, high] = result.median_ci95_ns;
        for bound in [low, high] {
            validate::time(at("median_ci95_ns"), bound)?;
        }
        if low > result.median_ns || result.median_ns > high {
            return Err(format!(
                "{}.median_ci95_ns ({low} to {high} ns) does not hold its median ({} ns): \
                 write the summary again",
                at(""),
                result.median_ns
            ));
        }
        if let Some(cv) = result.between_rounds_cv {
            validate::within(at("between_rounds_cv"), cv, 0.0, validate::MAX_CV)?;
        }
        if let Some(bytes) = result.bytes_per_operation
            && !(1.0..=MAX_BYTES).contains(&(bytes as f64))
        {
            return Err(format!(
                "{}.bytes_per_operation is {bytes}: outside 1 byte to a pebibyte",
                at("")
            ));
        }
    }
    let mut operations = std::collections::HashSet::new();
    for row in &summary.headline {
        validate::name_length("a headline row's operation", &row.operation)?;
        let at = |field: &'static str| Field("headline", &row.operation, field);
        if !operations.insert(row.operation.as_ref()) {
            return Err(format!("{} is a row already in the headline", at("")));
        }
        for (field, value) in [
            ("median_ns", row.median_ns),
            ("p5_ns", row.p5_ns),
            ("p95_ns", row.p95_ns),
        ] {
            validate::time(at(field), value)?;
        }
        if !names.contains(row.result.as_ref()) {
            return Err(format!(
                "{}.result names {}, which is not among the summary's results",
                at(""),
                row.result
            ));
        }
        // A headline figure is a time an operation took, whatever its result was flagged:
        // a run writes none that is not positive.
        let positive = latlab_doors::rules::Rule::PositiveTime;
        latlab_doors::rules::check(at("median_ns"), row.median_ns, positive)?;
        // A figure of no samples is none: a run writes a headline row only for a result
        // it measured.
        let count = latlab_doors::rules::Rule::Count;
        latlab_doors::rules::check(at("samples"), row.samples as f64, count)?;
    }
    Ok(())
}

/// A field as a refusal names it, `results (NAME).FIELD` or `headline (ROW).FIELD`, written
/// out only when it is shown.
#[derive(Clone, Copy)]
struct Field<'a>(&'static str, &'a str, &'static str);

impl std::fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Field(list, name, field) = self;
        match field {
            &"" => write!(f, "{list} ({name})"),
            field => write!(f, "{list} ({name}).{field}"),
        }
    }
}

/// Each headline row is the figure of the result it names, read as the row `declared` reads
/// it (scaled, for a row of bytes): a row edited apart from its result is refused. Rows
/// this latlab does not declare are left as they are.
pub fn check_headline(summary: &RunSummary<'_>, declared: &Presentations) -> Result<(), String> {
    for row in &summary.headline {
        let Some(declaration) = (declared.headline.iter()).find(|d| d.operation == row.operation)
        else {
            continue;
        };
        let Some(result) = summary.result(&row.result) else {
            continue;
        };
        let scale = crate::headline::scale(declaration.source, result.bytes_per_operation);
        let expected = result.median_ns * scale;
        if (row.median_ns - expected).abs() > 1e-9 * expected.abs().max(row.median_ns.abs()) {
            return Err(format!(
                "headline ({}).median_ns is {} ns, but the result it names ({}) makes it {} \
                 ns; write the summary again",
                row.operation, row.median_ns, row.result, expected
            ));
        }
    }
    Ok(())
}

/// The names printed from a summary, each made one line.
fn one_line_fields(summary: &mut RunSummary<'_>) {
    use crate::printable::{make_environment_one_line, make_short_line};
    make_environment_one_line(&mut summary.environment);
    make_short_line(&mut summary.latlab_version);
    make_short_line(&mut summary.suite);
    for row in &mut summary.headline {
        fix_name(&mut row.operation);
        fix_name(&mut row.result);
    }
    for result in &mut summary.results {
        fix_name(&mut result.name);
    }
}

/// Makes a name read from the summary's text one line, copied only where it changes.
fn fix_name(name: &mut Cow<'_, str>) {
    if let Cow::Owned(fixed) = crate::printable::one_line(name) {
        *name = Cow::Owned(fixed);
    }
}

/// Writes a run's summary (compact JSON, one line).
pub struct SummaryExporter {
    pub declared: Presentations,
}

impl Exporter for SummaryExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let summary = RunSummary::of(run, &self.declared);
        let mut text = serde_json::to_string(&summary).map_err(|e| ExportError::Encode {
            format: "JSON",
            detail: e.to_string(),
        })?;
        text.push('\n');
        Ok(text)
    }
}

/// `--summary FILE`: the run in brief.
pub(crate) const FORMAT: FileFormat<RunRecord> = FileFormat {
    name: "summary",
    help: "Also write the run's compact summary here (each result's median, interval, \
        spread between rounds and method id, the environment and the headline): what \
        'latlab fleet' reads in place of the full results; '-' for standard output",
    exporter: |declared| {
        Box::new(SummaryExporter {
            declared: declared.clone(),
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record, result};

    /// Only a document's first key makes it a summary, after a byte-order mark and white
    /// space: not the key's name anywhere else in its first bytes.
    #[test]
    fn a_summary_is_known_by_its_first_key_alone() {
        assert!(is_summary(b"{\"latlab_summary_version\":1}"));
        assert!(is_summary(
            b"\xEF\xBB\xBF \n{ \"latlab_summary_version\": 1}"
        ));
        for not_one in [
            &b"{\"latlab_schema_version\":2,\"host\":\"latlab_summary_version\"}"[..],
            b"[\"latlab_summary_version\"]",
            b"\"latlab_summary_version\"",
            b"",
        ] {
            assert!(!is_summary(not_one), "{}", String::from_utf8_lossy(not_one));
        }
    }

    /// The results file's rules hold for a summary: measured figures of at least a
    /// millionth of a nanosecond, each result named once, each headline row from a result
    /// it holds and equal to that result's figure as its row reads it.
    #[test]
    fn a_summary_is_held_to_the_results_files_rules() {
        let declared = latlab_probes::presentations();
        let good = RunSummary::of(&run(), &declared);
        assert_eq!(check_figures(&good), Ok(()));
        assert_eq!(check_headline(&good, &declared), Ok(()));
        let refused = |edit: &dyn Fn(&mut RunSummary), why: &str| {
            let mut bad = good.clone();
            edit(&mut bad);
            let found = check_figures(&bad).and_then(|()| check_headline(&bad, &declared));
            assert!(found.as_ref().unwrap_err().contains(why), "{found:?}");
        };
        refused(&|s| s.headline[0].median_ns = -118.0, "below 1e-6 ns");
        refused(&|s| s.headline[0].median_ns = 1e-300, "below 1e-6 ns");
        refused(&|s| s.headline[0].median_ns = 5.0, "makes it 4.1 ns");
        refused(&|s| s.results[0].median_ns = 1e-9, "below 1e-6 ns");
        // A derived figure (a difference of two) may be small or negative, as in a results
        // file; no headline row reads a time that is not positive from it (a run writes
        // none), whatever its result is flagged.
        let mut derived = good.clone();
        derived.results[0].kind = ResultKind::Derived;
        derived.results[0].median_ns = -2.0;
        derived.results[0].median_ci95_ns = [-2.0, -2.0];
        derived.headline.clear();
        assert_eq!(check_figures(&derived), Ok(()));
        // So may an observed span between two CPUs' timestamps, which runs backwards when the
        // later event came first; a calibrated loop's may not.
        let mut backwards = derived.clone();
        backwards.results[0].kind = ResultKind::Observations;
        assert_eq!(check_figures(&backwards), Ok(()));
        backwards.results[0].kind = ResultKind::TimedLoop;
        assert!(
            check_figures(&backwards)
                .unwrap_err()
                .contains("a run only writes positive")
        );
        refused(
            &|s| {
                s.results[0].suspect = true;
                s.headline[0].median_ns = -5.0;
            },
            "a run only writes positive",
        );
        refused(
            &|s| s.results.push(s.results[0].clone()),
            "already in the summary",
        );
        refused(
            &|s| s.headline.push(s.headline[0].clone()),
            "already in the headline",
        );
        refused(
            &|s| s.headline[0].result = "mem.latency/level/L9".into(),
            "not among the summary's results",
        );
        // A suspect result may read nothing: the compiler deleted its work.
        let mut suspect = good.clone();
        suspect.results[1].median_ns = 1e-9;
        suspect.results[1].median_ci95_ns = [1e-9, 1e-9];
        suspect.results[1].suspect = true;
        assert_eq!(check_figures(&suspect), Ok(()));
    }

    fn run() -> RunRecord {
        let mut l2 = result("mem.latency/level/L2", 4.1, &[]);
        l2.kind = ResultKind::TimedLoop;
        l2.round_medians_ns = vec![4.0, 4.2, 4.1];
        let mut point = result("mem.latency/sequential/64KiB", 1.1, &[]);
        point.kind = ResultKind::TimedLoop;
        point = point.with_parameter(latlab_engine::names::key::WORKING_SET_BYTES, 65536u64);
        record(vec![probe("mem.latency", vec![l2, point])])
    }

    /// A summary starts with its key, reads back equal, keeps each result's median,
    /// interval, spread between rounds and method id, and names its headline row's source.
    #[test]
    fn a_summary_reads_back_as_written() {
        let declared = latlab_probes::presentations();
        let text = SummaryExporter {
            declared: declared.clone(),
        }
        .render(&run())
        .unwrap();
        assert!(
            text.starts_with(&format!("{{\"{SUMMARY_KEY}\":1,")),
            "{text}"
        );
        assert!(is_summary(text.as_bytes()));
        let summary = parse_summary(text.as_bytes()).unwrap();
        assert_eq!(summary, RunSummary::of(&run(), &declared));
        let l2 = summary.result("mem.latency/level/L2").unwrap();
        assert!(!l2.sweep_point);
        assert!((l2.between_rounds_cv.unwrap() - 0.0243).abs() < 1e-3);
        assert_eq!(l2.method_id, method_id(&run().probes[0].results[0].method));
        assert_eq!(l2.method_id.len(), 16);
        assert!(
            summary
                .result("mem.latency/sequential/64KiB")
                .unwrap()
                .sweep_point
        );
        let row = (summary.headline.iter())
            .find(|row| row.result == "mem.latency/level/L2")
            .expect("the L2 row");
        assert!((row.median_ns - 4.1).abs() < 1e-9);
    }

    /// A full results file is not a summary; a newer schema, a damaged figure and another
    /// key are refused with why.
    #[test]
    fn what_is_not_a_summary_is_refused() {
        let full = crate::JsonExporter.render(&run()).unwrap();
        assert!(!is_summary(full.as_bytes()));
        let text = SummaryExporter {
            declared: latlab_probes::presentations(),
        }
        .render(&run())
        .unwrap();
        let newer = text.replacen(
            &format!("\"{SUMMARY_KEY}\":1"),
            &format!("\"{SUMMARY_KEY}\":9"),
            1,
        );
        assert!(
            parse_summary(newer.as_bytes())
                .unwrap_err()
                .contains("schema 9")
        );
        // A newer schema is refused by name even where its fields are not this one's.
        let newer_fields = newer.replacen("\"suite\":", "\"extra\":1,\"suite\":", 1);
        let refused = parse_summary(newer_fields.as_bytes()).unwrap_err();
        assert!(refused.contains("schema 9"), "{refused}");
        // Names written with escapes read as the names they spell.
        let escaped = text.replace("mem.latency/level/L2", "mem.latency/level/L\\u0032");
        assert_ne!(escaped, text);
        let read = parse_summary(escaped.as_bytes()).unwrap();
        assert!(read.result("mem.latency/level/L2").is_some());
        let damaged = text.replacen("\"median_ns\":4.1", "\"median_ns\":1e300", 1);
        assert!(
            parse_summary(damaged.as_bytes())
                .unwrap_err()
                .contains("more than a day"),
            "{damaged}"
        );
        let truncated = &text[..text.len() / 2];
        assert!(is_summary(truncated.as_bytes()));
        assert!(
            parse_summary(truncated.as_bytes())
                .unwrap_err()
                .contains("damaged: it is truncated")
        );
        let extra = text.replacen("\"suite\":", "\"extra\":1,\"suite\":", 1);
        assert!(
            parse_summary(extra.as_bytes())
                .unwrap_err()
                .contains("unknown field")
        );
    }
}
