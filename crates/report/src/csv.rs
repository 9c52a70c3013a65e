//! CSV: one row per result, every figure in full precision, every row naming its unit.

use crate::formats::FileFormat;
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;

pub struct CsvExporter;

/// `--csv FILE`: a row per result.
pub(crate) const FORMAT: FileFormat<RunRecord> = FileFormat {
    name: "csv",
    help: "Also write CSV here; '-' for standard output",
    exporter: |_| Box::new(CsvExporter),
};

const HEADER: [&str; 27] = [
    "name",
    "probe",
    "kind",
    "verdict",
    "unit",
    "median",
    "median_ci95_low",
    "median_ci95_high",
    "min",
    "p5",
    "p95",
    "max",
    "mean",
    "stddev",
    "mad",
    "cv",
    "round_spread",
    "samples",
    "iterations_per_sample",
    "loop_overhead",
    "cold",
    "outliers",
    "bytes_per_operation",
    "gigabytes_per_second",
    "items_per_operation",
    "items_per_second",
    "warnings",
];

impl Exporter for CsvExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let encode = |e: &dyn std::fmt::Display| ExportError::Encode {
            format: "CSV",
            detail: e.to_string(),
        };
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        writer.write_record(HEADER).map_err(|e| encode(&e))?;
        for probe in &run.probes {
            for r in &probe.results {
                let s = &r.summary;
                let optional = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
                let warnings: Vec<String> = r.warnings.iter().map(crate::advice::warning).collect();
                let record = [
                    text_cell(&r.name),
                    text_cell(&probe.id),
                    to_snake(&r.kind),
                    to_snake(&r.verdict),
                    "ns".to_string(),
                    s.median.to_string(),
                    // No interval is claimed for an extrapolated figure.
                    interval(r, 0),
                    interval(r, 1),
                    s.min.to_string(),
                    s.p5.to_string(),
                    s.p95.to_string(),
                    s.max.to_string(),
                    s.mean.to_string(),
                    s.stddev.to_string(),
                    s.mad.to_string(),
                    optional(s.cv),
                    optional(r.round_spread()),
                    s.n.to_string(),
                    r.iterations.to_string(),
                    optional(r.loop_overhead_ns),
                    optional(r.cold_ns),
                    (s.outliers_low + s.outliers_high).to_string(),
                    r.bytes_per_operation
                        .map_or_else(String::new, |b| b.to_string()),
                    optional(r.gigabytes_per_second()),
                    r.items_per_operation
                        .map_or_else(String::new, |i| i.to_string()),
                    optional(r.items_per_second()),
                    text_cell(&warnings.join("; ")),
                ];
                writer.write_record(&record).map_err(|e| encode(&e))?;
            }
        }
        let bytes = writer.into_inner().map_err(|e| encode(&e))?;
        String::from_utf8(bytes).map_err(|e| encode(&e))
    }
}

/// A text cell (a name, a warning) as a spreadsheet shows it literally: one that starts as a
/// formula would (`=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, as
/// OWASP advises against CSV injection, and control characters are escaped.
pub(crate) fn text_cell(text: &str) -> String {
    let text = crate::printable(text);
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.into_owned()
    }
}

/// The serde name of a unit enum variant (`timed_loop`, `optimised_away`).
/// One end of the median's 95% interval; empty for an extrapolated figure, which claims
/// none.
fn interval(result: &latlab_engine::BenchResult, end: usize) -> String {
    if result.is_extrapolated() {
        String::new()
    } else {
        result.summary.median_ci95[end].to_string()
    }
}

fn to_snake<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::text_cell;

    #[test]
    fn a_cell_that_would_be_a_formula_is_kept_as_text() {
        assert_eq!(text_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(text_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(text_cell("-1+2"), "'-1+2");
        assert_eq!(text_cell("cpu.call/empty"), "cpu.call/empty");
        assert_eq!(text_cell("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
    }
}
