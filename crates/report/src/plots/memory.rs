//! The memory family's figures: latency by working set with the detected cache levels,
//! bandwidth by working set, and the memcpy sweep with its derivative.

use super::figure::{Corner, Figure, Panel, Scale, Series, Stroke};
use crate::units::{format_bytes, format_ns};
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

fn number(result: &BenchResult, key: &str) -> Option<f64> {
    result.parameter(key)?.as_f64()
}

fn text<'a>(result: &'a BenchResult, key: &str) -> Option<&'a str> {
    result.parameter(key)?.as_str()
}

/// Up to three significant digits, no unit: the axis names it.
fn plain(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude < 1e-12 {
        "0".into()
    } else if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

fn latency(results: &[BenchResult]) -> Option<Figure> {
    let mut series: Vec<Series> = Vec::new();
    let mut sizes: HashMap<&str, f64> = HashMap::new();
    // The stride sweep is one working set: its points belong in the table, not on the curve.
    let curve = results
        .iter()
        .filter(|r| !r.name.starts_with(name::STRIDE_PREFIX));
    for result in curve {
        let (Some(size), Some(layout)) = (
            number(result, key::WORKING_SET_BYTES),
            text(result, key::LAYOUT),
        ) else {
            continue;
        };
        sizes.insert(&result.name, size);
        let point = (size, result.summary.median);
        match series.iter_mut().find(|s| s.label == layout) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                label: layout.to_string(),
                points: vec![point],
                style: Stroke::Line,
                color: series.len(),
            }),
        }
    }
    if series.is_empty() {
        return None;
    }
    let mut marks = Vec::new();
    let levels = results
        .iter()
        .filter(|r| r.name.starts_with(name::LEVEL_PREFIX));
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
                style: Stroke::Dashed,
                color: 3 + i,
            });
        }
        if let Some(end) = number(level, key::SIZE_ESTIMATE_BYTES) {
            marks.push((end, format!(" {name} ends ≈ {}", format_bytes(end))));
        }
    }
    Some(Figure {
        title: "mem.latency: load-to-use latency by working set".into(),
        x_label: "working set".into(),
        x_format: format_bytes,
        panels: vec![Panel {
            y_label: "ns per dependent load (median)".into(),
            y_scale: Scale::Log,
            y_format: plain,
            series,
            marks,
            legend: Corner::UpperLeft,
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
            (true, _) => Stroke::Dots,
            (false, "all") => Stroke::Line,
            (false, _) => Stroke::Dashed,
        };
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((size, rate)),
            None => series.push(Series {
                label,
                points: vec![(size, rate)],
                style,
                color,
            }),
        }
    }
    (!series.is_empty()).then(|| Figure {
        title: "mem.bandwidth: bytes read plus bytes written per second, by working set".into(),
        x_label: "working set".into(),
        x_format: format_bytes,
        panels: vec![Panel {
            y_label: "GB/s (10^9 bytes/s, median)".into(),
            y_scale: Scale::Log,
            y_format: plain,
            series,
            marks: Vec::new(),
            legend: Corner::LowerLeft,
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
        style: Stroke::Line,
        color,
    };
    let per_copy = Panel {
        y_label: "ns per copy".into(),
        y_scale: Scale::Log,
        y_format: plain,
        series: vec![
            series("minimum", 0, &|_, r| Some(r.summary.min)),
            series("median", 1, &|_, r| Some(r.summary.median)),
        ],
        marks: Vec::new(),
        legend: Corner::UpperLeft,
    };
    let per_byte = Panel {
        y_label: "ns per byte".into(),
        y_scale: Scale::Log,
        y_format: plain,
        series: vec![
            series("minimum", 0, &|size, r| Some(r.summary.min / size)),
            series("median", 1, &|size, r| Some(r.summary.median / size)),
        ],
        marks: Vec::new(),
        legend: Corner::UpperRight,
    };
    let derivative = Panel {
        y_label: "d(min ns)/d(bytes)".into(),
        y_scale: Scale::Linear,
        y_format: plain,
        series: vec![series("derivative of the minimum", 2, &|_, r| {
            number(r, key::DERIVATIVE_NS_PER_BYTE)
        })],
        marks: Vec::new(),
        legend: Corner::UpperLeft,
    };
    Some(Figure {
        title: "mem.memcpy: one copy by size (a copy of n bytes touches 2n)".into(),
        x_label: "bytes copied".into(),
        x_format: format_bytes,
        panels: vec![per_copy, per_byte, derivative],
    })
}
