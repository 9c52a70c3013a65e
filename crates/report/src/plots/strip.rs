//! A strip plot as plain SVG: a lane per group, a dot per member on a logarithmic time
//! axis; a highlighted dot is red and named, and every dot's title names it and its figure.
//! A strip of dots needs no plotting library.

use super::svg::{Svg, px, range};
use crate::units::{format_ns, format_ns_axis};

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
    let (low, high) = range(values)?;
    // A decade either side of a single value; else the range, widened by a tenth.
    let (low, high) = if high / low < 1.5 {
        (low / 1.5, high * 1.5)
    } else {
        (low / 1.1, high * 1.1)
    };
    let x = |v: f64| LEFT + (v / low).ln() / (high / low).ln() * (WIDTH - LEFT - RIGHT);
    let height = AXIS + LANE * strip.lanes.len() as f64 + 10.0;
    let label = format!("{} across the hosts", strip.title);
    let mut svg = Svg::headed(WIDTH, height, &label, strip.title);
    for t in ticks(low, high) {
        (svg.element("line").attr("x1", px(x(t))))
            .attr("x2", px(x(t)))
            .attr("y1", AXIS - 8.0)
            .attr("y2", height - 10.0)
            .attr("stroke", "#ddd")
            .add();
        (svg.element("text").attr("x", px(x(t))))
            .attr("y", height)
            .attr("font-size", 11)
            .attr("text-anchor", "middle")
            .text(format_ns_axis(t))
            .add();
    }
    for (i, lane) in strip.lanes.iter().enumerate() {
        draw_lane(&mut svg, lane, AXIS + LANE * i as f64 + LANE / 2.0, &x);
    }
    Some(svg.finish())
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
fn draw_lane(svg: &mut Svg, lane: &Lane, y: f64, x: &dyn Fn(f64) -> f64) {
    (svg.element("text").attr("x", 4))
        .attr("y", px(y + 4.0))
        .attr("font-size", 12)
        .title(lane.tooltip)
        .text(&lane.name)
        .add();
    for dot in &lane.dots {
        let colour = if dot.highlighted {
            "#c62828"
        } else {
            "#1f77b4"
        };
        (svg.element("circle").attr("cx", px(x(dot.ns))))
            .attr("cy", px(y))
            .attr("r", if dot.highlighted { 4.5 } else { 3.5 })
            .attr("fill", colour)
            .attr("fill-opacity", 0.6)
            .title(format_args!("{}: {}", dot.label, format_ns(dot.ns)))
            .add();
        if dot.highlighted {
            (svg.element("text").attr("x", px(x(dot.ns) + 6.0)))
                .attr("y", px(y - 5.0))
                .attr("font-size", 10)
                .attr("fill", colour)
                .text(dot.label)
                .add();
        }
    }
}
