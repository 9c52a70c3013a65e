//! A timeline as plain SVG: one result's figure run by run on a logarithmic time axis, each
//! run a dot with its 95% interval as a bar, each change a dashed line between the old
//! level's last run and the new level's first, with the levels drawn either side of it.

use super::svg::{Svg, px, range};
use crate::units::{format_ns, format_ns_axis, format_ratio};

/// The plot's size and margins, in pixels.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 200.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 30.0;

/// What to draw.
pub struct Timeline<'a> {
    pub title: &'a str,
    /// How many runs the axis spans.
    pub runs: usize,
    pub points: Vec<Point<'a>>,
    /// The changes, oldest first.
    pub changes: Vec<Mark>,
}

/// One run's figure.
pub struct Point<'a> {
    /// The run's index on the axis.
    pub run: usize,
    pub median_ns: f64,
    pub interval_ns: [f64; 2],
    /// The run's start, in its tooltip.
    pub label: &'a str,
}

/// A change: the index of the new level's first run, and the levels before and after.
pub struct Mark {
    pub at: usize,
    pub before_ns: f64,
    pub after_ns: f64,
}

/// The timeline as an `<svg>` element, `None` when it has no point above zero.
pub fn timeline_svg(timeline: &Timeline) -> Option<String> {
    let values = (timeline.points.iter())
        .flat_map(|p| [p.median_ns, p.interval_ns[0], p.interval_ns[1]])
        .chain(
            timeline
                .changes
                .iter()
                .flat_map(|m| [m.before_ns, m.after_ns]),
        )
        .filter(|v| *v > 0.0 && v.is_finite());
    let (low, high) = range(values)?;
    let (low, high) = (low / 1.05, high.max(low * 1.2) * 1.05);
    let span = timeline.runs.max(2) as f64 - 1.0;
    let x = |run: f64| LEFT + run / span * (WIDTH - LEFT - RIGHT);
    let y = |ns: f64| {
        let ns = ns.clamp(low, high);
        HEIGHT - BOTTOM - (ns / low).ln() / (high / low).ln() * (HEIGHT - TOP - BOTTOM)
    };
    let label = format!("{}, run by run", timeline.title);
    let mut svg = Svg::headed(WIDTH, HEIGHT, &label, timeline.title);
    for tick in [low * 1.05, (low * high).sqrt(), high / 1.05] {
        (svg.element("text").attr("x", LEFT - 6.0))
            .attr("y", px(y(tick) + 4.0))
            .attr("font-size", 11)
            .attr("text-anchor", "end")
            .text(format_ns_axis(tick))
            .add();
    }
    (svg.element("text").attr("x", px(x(span / 2.0))))
        .attr("y", HEIGHT - 6.0)
        .attr("font-size", 11)
        .attr("text-anchor", "middle")
        .text(format_args!("run, oldest to newest ({})", timeline.runs))
        .add();
    draw_changes(&mut svg, timeline, &x, &y);
    for point in &timeline.points {
        let cx = px(x(point.run as f64));
        (svg.element("line").attr("x1", &cx))
            .attr("x2", &cx)
            .attr("y1", px(y(point.interval_ns[0])))
            .attr("y2", px(y(point.interval_ns[1])))
            .attr("stroke", "#1f77b4")
            .attr("stroke-opacity", 0.5)
            .add();
        (svg.element("circle").attr("cx", &cx))
            .attr("cy", px(y(point.median_ns)))
            .attr("r", 3)
            .attr("fill", "#1f77b4")
            .title(format_args!(
                "{}: {} (95%: {}–{})",
                point.label,
                format_ns(point.median_ns),
                format_ns(point.interval_ns[0]),
                format_ns(point.interval_ns[1])
            ))
            .add();
    }
    Some(svg.finish())
}

/// Each change's dashed line and the levels either side, each level from the change before
/// (or the first run) to the change after (or the last run).
fn draw_changes(
    svg: &mut Svg,
    timeline: &Timeline,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) {
    let last = timeline.runs.saturating_sub(1) as f64;
    for (i, mark) in timeline.changes.iter().enumerate() {
        let line = x(mark.at as f64 - 0.5);
        let from = i
            .checked_sub(1)
            .map_or(0.0, |p| timeline.changes[p].at as f64 - 0.5);
        let to = (timeline.changes.get(i + 1)).map_or(last, |next| next.at as f64 - 0.5);
        (svg.element("line").attr("x1", px(line)))
            .attr("x2", px(line))
            .attr("y1", TOP)
            .attr("y2", HEIGHT - BOTTOM)
            .attr("stroke", "#c62828")
            .attr("stroke-dasharray", "4 3")
            .title(format_args!(
                "change: {} → {}, {}",
                format_ns(mark.before_ns),
                format_ns(mark.after_ns),
                format_ratio(mark.after_ns / mark.before_ns)
            ))
            .add();
        for (start, end, level) in [
            (from, mark.at as f64 - 0.5, mark.before_ns),
            (mark.at as f64 - 0.5, to, mark.after_ns),
        ] {
            (svg.element("line").attr("x1", px(x(start.max(0.0)))))
                .attr("x2", px(x(end.min(last))))
                .attr("y1", px(y(level)))
                .attr("y2", px(y(level)))
                .attr("stroke", "#c62828")
                .attr("stroke-opacity", 0.7)
                .add();
        }
    }
}
