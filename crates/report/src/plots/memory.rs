//! The memory family's figures: latency by working set with the detected cache levels,
//! bandwidth by working set, and the memcpy sweep with its derivative.

use super::figure::{Figure, Panel, Scale, Series, Stroke};
use crate::units::{format_bytes, format_ns, format_ns_axis, format_rate_axis};
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::names::{key, result as name};
use std::collections::HashMap;

/// The figures this run has data for, with their file stems.
pub(crate) fn figures(run: &RunRecord) -> Vec<(&'static str, Figure)> {
    let results = |id: &str| {
        run.probes
            .iter()
            .find(|p| p.id == id)
            .map_or(&[][..], |p| p.results.as_slice())
    };
    [
        ("mem-latency", latency(results("mem.latency"))),
        ("mem-bandwidth", bandwidth(results("mem.bandwidth"))),
        ("mem-memcpy", memcpy(results("mem.memcpy"))),
    ]
    .into_iter()
    .filter_map(|(stem, figure)| Some((stem, figure?)))
    .collect()
}

pub(super) fn number(result: &BenchResult, key: &str) -> Option<f64> {
    result.parameter(key)?.as_f64()
}

fn text<'a>(result: &'a BenchResult, key: &str) -> Option<&'a str> {
    result.parameter(key)?.as_str()
}

fn latency(results: &[BenchResult]) -> Option<Figure> {
    latency_figure(LatencyCurve {
        results,
        // The stride sweep is by stride, each at its own span: its points belong in the
        // table, not on the curve by working set.
        layout: |r| {
            if r.name.starts_with(name::STRIDE_PREFIX) {
                None
            } else {
                text(r, key::LAYOUT)
            }
        },
        level_prefix: name::LEVEL_PREFIX,
        title: "mem.latency: load-to-use latency by working set".into(),
        caption: "mem.latency: the time of one dependent load (median) as the working set \
                  grows, one line per chase layout. Each plateau is a level of the memory \
                  hierarchy; the wide bands are the levels found, at their latency over their \
                  plateau, and the grey lines where each level ends."
            .into(),
    })
}

/// A latency-by-working-set sweep to draw.
pub(super) struct LatencyCurve<'a> {
    pub results: &'a [BenchResult],
    /// The line a result belongs on, `None` for a result that is not a point of the curve.
    pub layout: fn(&BenchResult) -> Option<&str>,
    /// The names of the level results start so.
    pub level_prefix: &'a str,
    pub title: String,
    pub caption: String,
}

/// The latency by working set, one line per layout, with the levels found as bands at
/// their latency over their plateau and marks where each ends.
pub(super) fn latency_figure(curve: LatencyCurve) -> Option<Figure> {
    let LatencyCurve {
        results,
        layout,
        level_prefix,
        title,
        caption,
    } = curve;
    let mut series: Vec<Series> = Vec::new();
    let mut sizes: HashMap<&str, f64> = HashMap::new();
    for result in results {
        let (Some(size), Some(layout)) = (number(result, key::WORKING_SET_BYTES), layout(result))
        else {
            continue;
        };
        sizes.insert(&result.name, size);
        let (style, color) = (
            Stroke::CYCLE[series.len() % Stroke::CYCLE.len()],
            series.len(),
        );
        Series::add_point(
            &mut series,
            layout,
            (size, result.summary.median),
            style,
            color,
        );
    }
    if series.is_empty() {
        return None;
    }
    let mut marks = Vec::new();
    let levels = results.iter().filter(|r| r.name.starts_with(level_prefix));
    for (i, level) in levels.enumerate() {
        let name = level.name.rsplit('/').next().unwrap_or("?");
        let plateau: Vec<f64> = level
            .derived_from
            .iter()
            .filter_map(|n| sizes.get(n.as_str()).copied())
            .collect();
        if let (Some(&first), Some(&last)) = (plateau.first(), plateau.last()) {
            series.push(Series {
                label: format!("{name}: {}", format_ns(level.summary.median)),
                points: vec![(first, level.summary.median), (last, level.summary.median)],
                style: Stroke::Band,
                color: 3 + i,
            });
        }
        if let Some(end) = number(level, key::SIZE_ESTIMATE_BYTES) {
            marks.push((end, format!(" {name} ends ≈ {}", format_bytes(end))));
        }
    }
    Some(Figure {
        title,
        caption,
        x_label: "working set".into(),
        x_format: format_bytes,
        panels: vec![Panel {
            y_label: "time per load (median)".into(),
            y_scale: Scale::Log,
            y_format: format_ns_axis,
            series,
            marks,
        }],
    })
}

fn bandwidth(results: &[BenchResult]) -> Option<Figure> {
    let mut series: Vec<Series> = Vec::new();
    for result in results {
        let (Some(size), Some(rate), Some(access), Some(pattern), Some(threads)) = (
            number(result, key::WORKING_SET_BYTES),
            result.gigabytes_per_second(),
            text(result, key::ACCESS),
            text(result, key::PATTERN),
            number(result, key::THREADS),
        ) else {
            continue;
        };
        let all_cpus = result.name.ends_with(name::ALL_CPUS_SUFFIX);
        let label = if all_cpus {
            format!("{access} {pattern}, {threads} threads")
        } else {
            format!("{access} {pattern}")
        };
        let color = match access {
            "read" => 0,
            "write" => 1,
            _ => 2,
        };
        let style = match (all_cpus, pattern) {
            (true, "all") => Stroke::Dots,
            (true, _) => Stroke::Dotted,
            (false, "all") => Stroke::Line,
            (false, _) => Stroke::Dashed,
        };
        Series::add_point(&mut series, &label, (size, rate), style, color);
    }
    (!series.is_empty()).then(|| Figure {
        title: "mem.bandwidth: bytes moved per second by working set".into(),
        caption: "mem.bandwidth: bytes read plus bytes written per second (median, decimal \
                  units) as the working set grows; colour is the access (read, write, \
                  read-modify-write), a solid line touches every element and a dashed one \
                  every fourth, dots and dotted lines every CPU at \
                  once. Each step down is a cache level running out."
            .into(),
        x_label: "working set".into(),
        x_format: format_bytes,
        panels: vec![Panel {
            y_label: "rate (median)".into(),
            y_scale: Scale::Log,
            y_format: format_rate_axis,
            series,
            marks: Vec::new(),
        }],
    })
}

fn memcpy(results: &[BenchResult]) -> Option<Figure> {
    let points: Vec<(f64, &BenchResult)> = results
        .iter()
        .filter_map(|r| Some((number(r, key::COPY_BYTES)?, r)))
        .collect();
    if points.is_empty() {
        return None;
    }
    let series = |label: &str, color: usize, y: &dyn Fn(f64, &BenchResult) -> Option<f64>| Series {
        label: label.into(),
        points: points
            .iter()
            .filter_map(|&(size, r)| Some((size, y(size, r)?)))
            .collect(),
        style: Stroke::CYCLE[color % Stroke::CYCLE.len()],
        color,
    };
    let per_copy = Panel {
        y_label: "time per copy".into(),
        y_scale: Scale::Log,
        y_format: format_ns_axis,
        series: vec![
            series("minimum", 0, &|_, r| Some(r.summary.min)),
            series("median", 1, &|_, r| Some(r.summary.median)),
        ],
        marks: Vec::new(),
    };
    let per_byte = Panel {
        y_label: "time per byte".into(),
        y_scale: Scale::Log,
        y_format: format_ns_axis,
        series: vec![
            series("minimum", 0, &|size, r| Some(r.summary.min / size)),
            series("median", 1, &|size, r| Some(r.summary.median / size)),
        ],
        marks: Vec::new(),
    };
    let derivative = Panel {
        y_label: "time per added byte".into(),
        y_scale: Scale::Linear,
        y_format: format_ns_axis,
        series: vec![series("derivative of the minimum", 2, &|_, r| {
            number(r, key::DERIVATIVE_NS_PER_BYTE)
        })],
        marks: Vec::new(),
    };
    Some(Figure {
        title: "mem.memcpy: one copy by size (a copy of n bytes touches 2n)".into(),
        caption: "mem.memcpy: the time of one memcpy by the number of bytes copied, its \
                  minimum and median (top); the same per byte (middle); and the derivative of \
                  the minimum, what each added byte costs (bottom). Where the derivative steps \
                  up, source and destination together have outgrown a cache: Rubini's way of \
                  finding cache sizes from copies."
            .into(),
        x_label: "bytes copied".into(),
        x_format: format_bytes,
        panels: vec![per_copy, per_byte, derivative],
    })
}
