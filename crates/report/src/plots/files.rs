//! The file family's figure: the time of each operation by file size, reads above, writes
//! below, both axes logarithmic (a 0-byte file has no place on them and is left out).

use super::figure::{Figure, Panel, Scale, Series, Stroke};
use crate::units::{format_bytes, format_ns_axis};
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::names::{key, result as name};

/// One line of the figure: the results whose names start with `prefix` and end with
/// `suffix`, by file size, with their label, stroke and colour.
struct Line {
    prefix: &'static str,
    suffix: &'static str,
    label: &'static str,
    style: Stroke,
    color: usize,
}

/// The read panel's lines.
const READS: [Line; 2] = [
    Line {
        prefix: "file.read/open-read-close/",
        suffix: "",
        label: "open + read + close",
        style: Stroke::Line,
        color: 0,
    },
    Line {
        prefix: "file.read/pread/",
        suffix: "",
        label: "pread, descriptor kept open",
        style: Stroke::Line,
        color: 1,
    },
];

/// The write panel's lines.
const WRITES: [Line; 4] = [
    Line {
        prefix: "file.write/no-fsync/",
        suffix: "/create-write-close",
        label: "create + write + close",
        style: Stroke::Line,
        color: 2,
    },
    Line {
        prefix: "file.write/fsync/",
        suffix: "/create-write-fsync-close",
        label: "… + fsync",
        style: Stroke::Line,
        color: 3,
    },
    Line {
        prefix: "file.write/no-fsync/",
        suffix: "/unlink",
        label: "unlink",
        style: Stroke::Dashed,
        color: 2,
    },
    Line {
        prefix: "file.write/fsync/",
        suffix: "/unlink",
        label: "unlink after fsync",
        style: Stroke::Dashed,
        color: 3,
    },
];

/// `line`'s series from `results`: each matching result's median by its file size (a
/// 0-byte file left off a log axis); `None` when no result matches.
fn series(results: &[&BenchResult], line: &Line) -> Option<Series> {
    let points: Vec<(f64, f64)> = (results.iter())
        .filter(|r| r.name.starts_with(line.prefix) && r.name.ends_with(line.suffix))
        .filter_map(|r| {
            let size = r.parameter(key::SIZE_BYTES)?.as_f64()?;
            (size > 0.0).then_some((size, r.summary.median))
        })
        .collect();
    (!points.is_empty()).then(|| Series {
        label: line.label.to_string(),
        points,
        style: line.style,
        color: line.color,
    })
}

/// `(stem, figure)` when the run measured file sizes.
pub(crate) fn figures(run: &RunRecord) -> Vec<(&'static str, Figure)> {
    let results: Vec<&BenchResult> = run
        .results()
        .filter(|r| {
            r.name.starts_with(name::FILE_READ_PREFIX)
                || r.name.starts_with(name::FILE_WRITE_PREFIX)
        })
        .collect();
    let lines = |lines: &[Line]| -> Vec<Series> {
        (lines.iter())
            .filter_map(|line| series(&results, line))
            .collect()
    };
    let (reads, writes) = (lines(&READS), lines(&WRITES));
    let panel = |y_label: &str, series: Vec<Series>| Panel {
        y_label: y_label.into(),
        y_scale: Scale::Log,
        y_format: format_ns_axis,
        series,
        marks: Vec::new(),
    };
    let mut panels = Vec::new();
    if !reads.is_empty() {
        panels.push(panel("time per read (median)", reads));
    }
    if !writes.is_empty() {
        panels.push(panel("time per file (median)", writes));
    }
    if panels.is_empty() {
        return Vec::new();
    }
    vec![(
        "file-sizes",
        Figure {
            title: "file.read and file.write: time by file size".into(),
            caption: "file.read and file.write: the median time of each operation by file \
                      size, reads (top) and whole-file writes with and without fsync (bottom; \
                      dashed: the unlink that follows); both axes logarithmic, a 0-byte file \
                      left off."
                .into(),
            x_label: "file size".into(),
            x_format: format_bytes,
            panels,
        },
    )]
}
