//! A probe's declared plot ([`latlab_engine::presentation::Plot`]) made a figure from a
//! run's results: each line the results its template covers, by their x parameter, a median
//! shaded by its 95% confidence interval; each
//! panel's levels as bands over the points they were derived from, with a mark where each
//! ends, and where declared the kernel's own cache sizes beside them. Lines without a point,
//! and panels without a line, are left out.

use super::figure::{Figure, Panel, Scale, Series, Stroke};
use crate::units::{format_bytes, format_ns, format_ns_axis, format_rate_axis, has_interval};
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{self as declared, Measure, Template, Unit, XAxis};
use std::collections::HashMap;

/// The figure of `plot` for `run`, `None` when the run has no point of it.
pub(crate) fn figure(run: &RunRecord, plot: &declared::Plot) -> Option<Figure> {
    let panels: Vec<Panel> = (plot.panels.iter())
        .filter_map(|panel| drawn_panel(run, plot, panel))
        .collect();
    let shaded =
        (panels.iter().flat_map(|p| &p.series)).any(|s| s.intervals.iter().any(Option::is_some));
    (!panels.is_empty()).then(|| Figure {
        title: plot.title.into(),
        caption: if shaded {
            format!(
                "{} Shaded about a line: the 95% confidence interval of each median.",
                plot.caption
            )
        } else {
            plot.caption.into()
        },
        x_label: plot.x_label.into(),
        x_scale: x_scale(plot.x_axis),
        x_format: x_format(plot.x_axis),
        panels,
    })
}

fn x_scale(axis: XAxis) -> Scale {
    match axis {
        XAxis::SizeLog => Scale::Log,
        XAxis::RateLinear => Scale::Linear,
    }
}

fn x_format(axis: XAxis) -> fn(f64) -> String {
    match axis {
        XAxis::SizeLog => format_bytes,
        XAxis::RateLinear => |bytes_per_second| format_rate_axis(bytes_per_second / 1e9),
    }
}

/// The figure of `plot` with two runs overlaid: `baseline`'s lines pale behind `later`'s,
/// each in its declared colour and stroke (the levels and cache marks, which belong to one
/// run, left out); `None` when neither run has a point of it. `labels` name the two runs.
pub(crate) fn overlaid(
    baseline: &RunRecord,
    later: &RunRecord,
    labels: (&str, &str),
    plot: &declared::Plot,
) -> Option<Figure> {
    let panels: Vec<Panel> = (plot.panels.iter())
        .filter_map(|panel| {
            let mut xs = HashMap::new();
            let mut series: Vec<Series> = Vec::new();
            for (run, faded) in [(baseline, true), (later, false)] {
                series.extend(
                    (panel.lines.iter())
                        .filter_map(|line| drawn_line(run, plot, line, &mut xs))
                        .map(|line| Series { faded, ..line }),
                );
            }
            (!series.is_empty()).then(|| Panel {
                series,
                marks: Vec::new(),
                ..axes_of(panel)
            })
        })
        .collect();
    (!panels.is_empty()).then(|| Figure {
        title: format!("{}: {} over {}", plot.title, labels.1, labels.0),
        caption: format!(
            "{} Pale: {}, the baseline; in full colour: {}. Shaded about a line: the 95% \
             confidence interval of each median, where it has one.",
            plot.caption, labels.0, labels.1
        ),
        x_label: plot.x_label.into(),
        x_scale: x_scale(plot.x_axis),
        x_format: x_format(plot.x_axis),
        panels,
    })
}

/// A declared panel's axes, with no series or marks yet.
fn axes_of(panel: &declared::Panel) -> Panel {
    let y_format: fn(f64) -> String = match panel.y_unit {
        Unit::Nanoseconds => format_ns_axis,
        Unit::BytesPerSecond => format_rate_axis,
    };
    Panel {
        y_label: panel.y_label.into(),
        y_scale: match panel.y_scale {
            declared::Scale::Log => Scale::Log,
            declared::Scale::Linear => Scale::Linear,
        },
        y_format,
        series: Vec::new(),
        marks: Vec::new(),
    }
}

fn drawn_panel(run: &RunRecord, plot: &declared::Plot, panel: &declared::Panel) -> Option<Panel> {
    // Each point's x by result name, for placing the levels over their plateaus.
    let mut xs: HashMap<&str, f64> = HashMap::new();
    let mut series: Vec<Series> = (panel.lines.iter())
        .filter_map(|line| drawn_line(run, plot, line, &mut xs))
        .collect();
    if series.is_empty() {
        return None;
    }
    if let Some(reference) = panel.reference {
        series.extend(reference_line(run, reference, &xs));
    }
    let mut marks = Vec::new();
    if let Some(levels) = panel.levels {
        let (bands, ends) = drawn_levels(run, levels, &xs);
        series.extend(bands);
        marks = ends;
    }
    if panel.host_caches {
        marks.extend(kernel_cache_ends(run));
    }
    Some(Panel {
        series,
        marks,
        ..axes_of(panel)
    })
}

/// The line's points, in the run's order: every result the template covers with an x
/// (above zero on a logarithmic axis, from zero on a linear one) and a y.
fn drawn_line<'a>(
    run: &'a RunRecord,
    plot: &declared::Plot,
    line: &declared::Line,
    xs: &mut HashMap<&'a str, f64>,
) -> Option<Series> {
    let mut label = None;
    let (mut points, mut intervals) = (Vec::new(), Vec::new());
    let placed = |x: &f64| match plot.x_axis {
        XAxis::SizeLog => *x > 0.0,
        XAxis::RateLinear => *x >= 0.0,
    };
    for result in run.results().filter(|r| line.results.matches(&r.name)) {
        let Some(x) = number(result, plot.x_parameter).filter(placed) else {
            continue;
        };
        xs.insert(&result.name, x);
        if let Some(y) = measure(result, line.y, x) {
            label.get_or_insert_with(|| filled_label(line.label, result));
            points.push((x, y));
            intervals.push(interval(result, line.y, x));
        }
    }
    Some(Series {
        label: label?,
        points,
        intervals,
        style: match line.stroke {
            declared::Stroke::Line => Stroke::Line,
            declared::Stroke::Dashed => Stroke::Dashed,
            declared::Stroke::Dotted => Stroke::Dotted,
            declared::Stroke::Dots => Stroke::Dots,
        },
        color: line.color.into(),
        faded: false,
    })
}

/// A dashed line at the median of the first result `reference` names, across the x range of
/// the panel's points (`xs`); none where the run lacks it or the panel has no range.
fn reference_line(
    run: &RunRecord,
    reference: declared::ReferenceLine,
    xs: &HashMap<&str, f64>,
) -> Option<Series> {
    let result = run.results().find(|r| reference.result.matches(&r.name))?;
    let low = xs.values().copied().fold(f64::INFINITY, f64::min);
    let high = xs.values().copied().fold(f64::NEG_INFINITY, f64::max);
    let median = result.summary.median;
    (low < high).then(|| Series {
        label: format!("{}: {}", reference.label, format_ns(median)),
        points: vec![(low, median), (high, median)],
        intervals: Vec::new(),
        style: Stroke::Dashed,
        color: 7,
        faded: false,
    })
}

/// The levels `template` covers: each a band at its figure across the points it was derived
/// from, and a mark where it ends.
fn drawn_levels(
    run: &RunRecord,
    template: Template,
    xs: &HashMap<&str, f64>,
) -> (Vec<Series>, Vec<(f64, String)>) {
    let (mut bands, mut ends) = (Vec::new(), Vec::new());
    let levels = run.results().filter(|r| template.matches(&r.name));
    for (i, level) in levels.enumerate() {
        let name = level.name.rsplit('/').next().unwrap_or("?");
        let median = level.summary.median;
        let plateau: Vec<f64> = (level.derived_from.iter())
            .filter_map(|n| xs.get(n.as_str()).copied())
            .collect();
        if let (Some(&first), Some(&last)) = (plateau.first(), plateau.last()) {
            bands.push(Series {
                label: format!("{name}: {}", format_ns(median)),
                points: vec![(first, median), (last, median)],
                intervals: Vec::new(),
                style: Stroke::Band,
                color: 3 + i,
                faded: false,
            });
        }
        if let Some(end) = number(level, key::SIZE_ESTIMATE_BYTES) {
            ends.push((end, format!(" {name} ends ≈ {}", format_bytes(end))));
        }
    }
    (bands, ends)
}

/// Where the kernel says each data cache ends (`kernel: L2 1MiB`), to read beside the ends
/// the curve found.
fn kernel_cache_ends(run: &RunRecord) -> Vec<(f64, String)> {
    (run.environment.caches.iter())
        .filter(|cache| cache.kind != "Instruction")
        .map(|cache| {
            let size = cache.size_bytes as f64;
            (
                size,
                format!(" kernel: L{} {}", cache.level, format_bytes(size)),
            )
        })
        .collect()
}

fn number(result: &BenchResult, key: Key) -> Option<f64> {
    result.parameter(key)?.as_f64()
}

fn measure(result: &BenchResult, y: Measure, x: f64) -> Option<f64> {
    let summary = &result.summary;
    match y {
        Measure::Median => Some(summary.median),
        Measure::Minimum => Some(summary.min),
        Measure::MedianPerX => Some(summary.median / x),
        Measure::MinimumPerX => Some(summary.min / x),
        Measure::Rate => result.gigabytes_per_second(),
        Measure::Parameter(key) => number(result, key),
    }
}

/// The 95% confidence interval of the median in `y`'s terms, where the result has one and
/// `y` is a median (a minimum or a parameter has none).
fn interval(result: &BenchResult, y: Measure, x: f64) -> Option<(f64, f64)> {
    if !has_interval(result) {
        return None;
    }
    let [low, high] = result.summary.median_ci95;
    match y {
        Measure::Median => Some((low, high)),
        Measure::MedianPerX => Some((low / x, high / x)),
        // A longer time is a lower rate.
        Measure::Rate => {
            let bytes = result.bytes_per_operation? as f64;
            (low > 0.0).then(|| (bytes / high, bytes / low))
        }
        Measure::Minimum | Measure::MinimumPerX | Measure::Parameter(_) => None,
    }
}

/// `label` with each `{key}` replaced by `result`'s parameter `key`.
fn filled_label(label: &str, result: &BenchResult) -> String {
    let mut filled = String::new();
    let mut rest = label;
    while let Some((before, after)) = rest.split_once('{') {
        let Some((key, after)) = after.split_once('}') else {
            break;
        };
        filled.push_str(before);
        match result.parameters.get(key) {
            Some(value) => filled.push_str(&value.to_string()),
            None => filled.push_str(&format!("{{{key}}}")),
        }
        rest = after;
    }
    filled.push_str(rest);
    filled
}
