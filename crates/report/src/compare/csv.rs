//! A comparison as CSV.

use super::{Against, Compared, Comparison};
use crate::formats::FileFormat;
use crate::{ExportError, Exporter};

/// The CSV rendering: one row per result and later run, with the verdict and its p-value;
/// a result a run lacks has an empty median and the verdict `missing`, one the first lacks
/// the verdict `new`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareCsv;

impl Exporter<Compared> for CompareCsv {
    fn render(&self, compared: &Compared) -> Result<String, ExportError> {
        csv_text(&compared.comparison)
    }
}

/// `latlab compare --csv FILE`.
pub(crate) const FORMAT: FileFormat<Compared> = FileFormat {
    name: "csv",
    help: "Also write the comparison as CSV here, a row per result and later run; '-' \
        for standard output",
    exporter: |_| Box::new(CompareCsv),
};

fn csv_text(comparison: &Comparison) -> Result<String, ExportError> {
    let encode = |detail: String| ExportError::Encode {
        format: "CSV",
        detail,
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header = [
        "benchmark",
        "baseline",
        "run",
        "baseline_median_ns",
        "median_ns",
        "ratio",
        "p",
        "difference",
        "detectable",
        "tested_within",
        "noise_from",
    ];
    writer
        .write_record(header)
        .map_err(|e| encode(e.to_string()))?;
    let first = &comparison.labels[0];
    for result in &comparison.results {
        for (against, label) in result.later.iter().zip(&comparison.labels[1..]) {
            let record = csv_record(result, against.as_ref(), first, label);
            writer
                .write_record(&record)
                .map_err(|e| encode(e.to_string()))?;
        }
    }
    for (tally, label) in comparison.tallies.iter().zip(&comparison.labels[1..]) {
        for name in &tally.new {
            let cell = crate::csv::text_cell;
            let none = String::new;
            let record = [
                cell(name),
                cell(first),
                cell(label),
                none(),
                none(),
                none(),
                none(),
                "new".to_string(),
                none(),
                none(),
                none(),
            ];
            writer
                .write_record(record)
                .map_err(|e| encode(e.to_string()))?;
        }
    }
    let bytes = writer.into_inner().map_err(|e| encode(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| encode(e.to_string()))
}

/// One CSV row: `result` in the later run `label` (`against`, `None` where it lacks it)
/// beside the first run `first`.
fn csv_record(
    result: &super::ComparedResult,
    against: Option<&Against>,
    first: &str,
    label: &str,
) -> [String; 11] {
    let first_median = result.first_median_ns.to_string();
    match against {
        Some(a) => [
            crate::csv::text_cell(&result.name),
            crate::csv::text_cell(first),
            crate::csv::text_cell(label),
            first_median,
            a.median_ns.to_string(),
            (if a.ratio.is_finite() {
                a.ratio.to_string()
            } else {
                String::new()
            }),
            a.verdict
                .p()
                .map_or_else(String::new, |p| format!("{p:.3e}")),
            a.verdict.word().to_string(),
            a.detectable.map_or_else(String::new, |d| d.to_string()),
            a.tested_within
                .map_or_else(|| "alone".to_string(), |w| w.to_string()),
            a.noise_from
                .map_or_else(String::new, |from| from.word().to_string()),
        ],
        None => [
            crate::csv::text_cell(&result.name),
            crate::csv::text_cell(first),
            crate::csv::text_cell(label),
            first_median,
            String::new(),
            String::new(),
            String::new(),
            "missing".to_string(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}
