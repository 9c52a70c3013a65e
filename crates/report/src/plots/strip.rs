//! A strip plot as plain SVG: a lane per group, a dot per member on a logarithmic time
//! axis; a highlighted dot is red and named, and every dot's title names it and its figure.
//! A strip of dots needs no plotting library.

use super::escape;
use crate::units::{format_ns, format_ns_axis};
use std::fmt::Write;

/// The plot's size and margins, in pixels.
const WIDTH: f64 = 720.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const LANE: f64 = 26.0;
const AXIS: f64 = 30.0;

/// What to draw: a title over lanes of dots.
pub struct Strip<'a> {
    pub title: &'a str,
    pub lanes: Vec<Lane<'a>>,
}

pub struct Lane<'a> {
    /// The lane's short name, at its left.
    pub name: String,
    /// What it stands for, in its tooltip.
    pub tooltip: &'a str,
    pub dots: Vec<Dot<'a>>,
}

pub struct Dot<'a> {
    /// The figure, in ns: above zero.
    pub ns: f64,
    pub label: &'a str,
    /// Drawn red and named beside the dot.
    pub highlighted: bool,
}

/// The strip as an `<svg>` element, `None` when it has no dot.
pub fn strip_svg(strip: &Strip) -> Option<String> {
    let values = strip.lanes.iter().flat_map(|l| &l.dots).map(|d| d.ns);
    let (low, high) = values.fold(None, |range: Option<(f64, f64)>, v| {
        Some(range.map_or((v, v), |(l, h)| (l.min(v), h.max(v))))
    })?;
    // A decade either side of a single value; else the range, widened by a tenth.
    let (low, high) = if high / low < 1.5 {
        (low / 1.5, high * 1.5)
    } else {
        (low / 1.1, high * 1.1)
    };
    let x = |v: f64| LEFT + (v / low).ln() / (high / low).ln() * (WIDTH - LEFT - RIGHT);
    let height = AXIS + LANE * strip.lanes.len() as f64 + 10.0;
    let title = escape(strip.title);
    let mut svg = format!(
        "<svg viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" role=\"img\" \
         aria-label=\"{title} across the hosts\" style=\"max-width:100%;height:auto\">\
         <text x=\"0\" y=\"14\" font-size=\"13\" font-weight=\"bold\">{title}</text>"
    );
    for t in ticks(low, high) {
        let _ = write!(
            svg,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>\
             <text x=\"{0:.1}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">{4}</text>",
            x(t),
            AXIS - 8.0,
            height - 10.0,
            height,
            escape(&format_ns_axis(t))
        );
    }
    for (i, lane) in strip.lanes.iter().enumerate() {
        draw_lane(&mut svg, lane, AXIS + LANE * i as f64 + LANE / 2.0, &x);
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// Ticks at 1, 2 and 5 of each decade in range, at most eight of them.
fn ticks(low: f64, high: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(low.log10().floor());
    while decade <= high && ticks.len() < 40 {
        for step in [1.0, 2.0, 5.0] {
            let t = decade * step;
            if (low..=high).contains(&t) {
                ticks.push(t);
            }
        }
        decade *= 10.0;
    }
    let every = ticks.len().div_ceil(8).max(1);
    ticks.into_iter().step_by(every).collect()
}

/// A lane's name and its dots at height `y`.
fn draw_lane(svg: &mut String, lane: &Lane, y: f64, x: &dyn Fn(f64) -> f64) {
    let _ = write!(
        svg,
        "<text x=\"4\" y=\"{:.1}\" font-size=\"12\"><title>{}</title>{}</text>",
        y + 4.0,
        escape(lane.tooltip),
        lane.name
    );
    for dot in &lane.dots {
        let label = escape(dot.label);
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.6\">\
             <title>{label}: {}</title></circle>",
            x(dot.ns),
            if dot.highlighted { 4.5 } else { 3.5 },
            if dot.highlighted {
                "#c62828"
            } else {
                "#1f77b4"
            },
            format_ns(dot.ns)
        );
        if dot.highlighted {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#c62828\">{label}</text>",
                x(dot.ns) + 6.0,
                y - 5.0
            );
        }
    }
}
