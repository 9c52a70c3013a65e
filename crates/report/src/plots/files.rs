//! The file family's figure: the time of each operation by file size, reads above, writes
//! below, both axes logarithmic (a 0-byte file has no place on them and is left out).

use super::figure::{Figure, Panel, Scale, Series, Stroke};
use crate::units::{format_bytes, format_ns_axis};
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::names::{key, result as name};

/// `(stem, figure)` when the run measured file sizes.
pub(crate) fn figures(run: &RunRecord) -> Vec<(&'static str, Figure)> {
    let results: Vec<&BenchResult> = run
        .results()
        .filter(|r| {
            r.name.starts_with(name::FILE_READ_PREFIX)
                || r.name.starts_with(name::FILE_WRITE_PREFIX)
        })
        .collect();
    let series = |prefix: &str, suffix: &str, label: &str, style: Stroke, color: usize| {
        let points: Vec<(f64, f64)> = results
            .iter()
            .filter(|r| r.name.starts_with(prefix) && r.name.ends_with(suffix))
            .filter_map(|r| {
                let size = r.parameter(key::SIZE_BYTES)?.as_f64()?;
                (size > 0.0).then_some((size, r.summary.median))
            })
            .collect();
        (!points.is_empty()).then(|| Series {
            label: label.to_string(),
            points,
            style,
            color,
        })
    };
    let reads: Vec<Series> = [
        series(
            "file.read/open-read-close/",
            "",
            "open + read + close",
            Stroke::Line,
            0,
        ),
        series(
            "file.read/pread/",
            "",
            "pread, descriptor kept open",
            Stroke::Line,
            1,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    let writes: Vec<Series> = [
        series(
            "file.write/no-fsync/",
            "/create-write-close",
            "create + write + close",
            Stroke::Line,
            2,
        ),
        series(
            "file.write/fsync/",
            "/create-write-fsync-close",
            "… + fsync",
            Stroke::Line,
            3,
        ),
        series(
            "file.write/no-fsync/",
            "/unlink",
            "unlink",
            Stroke::Dashed,
            2,
        ),
        series(
            "file.write/fsync/",
            "/unlink",
            "unlink after fsync",
            Stroke::Dashed,
            3,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
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
