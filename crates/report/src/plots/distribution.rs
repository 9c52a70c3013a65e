//! A distribution figure as inline SVG: a histogram of a result's samples on a time axis
//! (logarithmic when they span a factor of four or more, as wake-up and round-trip latencies
//! with their long tails do), the median, p90 and p99 marked with their values above the
//! bars, so that the tail is read off the figure rather than guessed from a mean.

use super::svg::{Element, Svg, px};
use crate::units::format_ns_axis;
use latlab_engine::stats::percentile_sorted;
use std::fmt::Display;

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 250.0;
const LEFT: f64 = 46.0;
const RIGHT: f64 = 16.0;
/// Room above the bars for the percentile labels, one row each.
const TOP: f64 = 62.0;
const BOTTOM: f64 = 40.0;
const BINS: usize = 40;
const FONT_SIZE: u32 = 14;

/// The marked percentiles: label, quantile, dash pattern.
const MARKS: [(&str, f64, Option<&str>); 3] = [
    ("median", 0.5, None),
    ("p90", 0.9, Some("6 4")),
    ("p99", 0.99, Some("2 3")),
];

/// The plot area's width and height, and its bottom edge.
const PLOT_WIDTH: f64 = WIDTH - LEFT - RIGHT;
const PLOT_HEIGHT: f64 = HEIGHT - TOP - BOTTOM;
const PLOT_BOTTOM: f64 = HEIGHT - BOTTOM;

/// The figure, or `None` with fewer than five samples or any that is not finite. A sample
/// may be negative (a calibrated loop's, less its empty loop); the axis is then linear.
pub(crate) fn svg(samples_ns: &[f64], title: &str) -> Option<String> {
    if samples_ns.len() < 5 || samples_ns.iter().any(|s| !s.is_finite()) {
        return None;
    }
    let mut sorted = samples_ns.to_vec();
    sorted.sort_by(f64::total_cmp);
    let axis = Axis::for_range(sorted[0], sorted[sorted.len() - 1]);
    let mut svg = Svg::sized(WIDTH, HEIGHT, &[("role", &"img")]);
    svg.title(title);
    let most = bars(&mut svg, &sorted, &axis);
    axes(&mut svg, &axis, most);
    percentiles(&mut svg, &sorted, &axis);
    Some(svg.finish())
}

/// Text in the figure's font, anchored at `anchor`.
fn text<'a>(svg: &'a mut Svg, x: impl Display, y: impl Display, anchor: &str) -> Element<'a> {
    (svg.element("text").attr("x", x))
        .attr("y", y)
        .attr("font-family", "sans-serif")
        .attr("font-size", FONT_SIZE)
        .attr("text-anchor", anchor)
}

/// A vertical or horizontal line.
fn line(
    svg: &mut Svg,
    (x1, x2): (impl Display, impl Display),
    (y1, y2): (f64, f64),
) -> Element<'_> {
    (svg.element("line").attr("x1", x1))
        .attr("x2", x2)
        .attr("y1", y1)
        .attr("y2", y2)
}

/// The histogram's bars, each titled with its range and count; returns the tallest count.
fn bars(svg: &mut Svg, sorted: &[f64], axis: &Axis) -> usize {
    let mut counts = [0usize; BINS];
    for &sample in sorted {
        let bin = (axis.fraction(sample) * BINS as f64) as usize;
        counts[bin.min(BINS - 1)] += 1;
    }
    let most = counts.iter().copied().max().unwrap_or(1);
    let bar = PLOT_WIDTH / BINS as f64;
    for (i, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let h = (count as f64 / most as f64 * PLOT_HEIGHT).max(1.0);
        let (from, to) = (
            axis.value(i as f64 / BINS as f64),
            axis.value((i + 1) as f64 / BINS as f64),
        );
        (svg.element("rect").attr("x", px(LEFT + i as f64 * bar)))
            .attr("y", px(PLOT_BOTTOM - h))
            .attr("width", px((bar - 1.0).max(0.5)))
            .attr("height", px(h))
            .attr("fill", "#9db9d8")
            .title(format_args!(
                "{} … {}: {count} samples",
                format_ns_axis(from),
                format_ns_axis(to)
            ))
            .add();
    }
    most
}

/// The axes: the count at the top of the tallest bar, time ticks and the axis name below.
fn axes(svg: &mut Svg, axis: &Axis, most: usize) {
    let bottom = PLOT_BOTTOM;
    line(svg, (LEFT, WIDTH - RIGHT), (bottom, bottom))
        .attr("stroke", "#555")
        .add();
    (text(svg, LEFT - 6.0, bottom - PLOT_HEIGHT + 5.0, "end"))
        .text(most)
        .add();
    text(svg, LEFT - 6.0, bottom, "end").text(0).add();
    for tick in axis.ticks() {
        let at = px(axis.x(tick));
        line(svg, (&at, &at), (bottom, bottom + 5.0))
            .attr("stroke", "#555")
            .add();
        (text(svg, &at, bottom + 21.0, "middle"))
            .text(format_ns_axis(tick))
            .add();
    }
    let scale = if axis.log { " (log scale)" } else { "" };
    (text(svg, LEFT + PLOT_WIDTH / 2.0, HEIGHT - 3.0, "middle"))
        .text(format_args!("time per event{scale}"))
        .add();
}

/// Each percentile: a line through the bars and its label in its own row above them (the
/// lines start below the last row), so that close percentiles never write over each other,
/// a line or the data.
fn percentiles(svg: &mut Svg, sorted: &[f64], axis: &Axis) {
    for (row, (label, q, dash)) in MARKS.iter().enumerate() {
        let value = percentile_sorted(sorted, *q);
        let at = axis.x(value);
        let label_y = 16.0 + row as f64 * 17.0;
        let anchor = if at > WIDTH * 0.7 { "end" } else { "start" };
        line(svg, (px(at), px(at)), (TOP - 8.0, PLOT_BOTTOM))
            .attr("stroke", "#b03a2e")
            .attr("stroke-width", 2)
            .attr_if("stroke-dasharray", *dash)
            .add();
        (text(svg, px(at), label_y, anchor))
            .attr("fill", "#b03a2e")
            .text(format_args!("{label} {}", format_ns_axis(value)))
            .add();
    }
}

/// The time axis: from the fastest sample to the slowest, logarithmic or linear.
struct Axis {
    low: f64,
    high: f64,
    log: bool,
}

impl Axis {
    /// Where `value` lies across the plot area, in pixels from the figure's left.
    fn x(&self, value: f64) -> f64 {
        LEFT + self.fraction(value) * PLOT_WIDTH
    }

    fn for_range(low: f64, high: f64) -> Axis {
        let log = low > 0.0 && high / low >= 4.0;
        let high = if high > low {
            high
        } else {
            low + low.max(1.0) * 0.01
        };
        Axis { low, high, log }
    }

    /// Where `value` lies, 0 at the fastest sample and 1 at the slowest.
    fn fraction(&self, value: f64) -> f64 {
        let f = if self.log {
            (value / self.low).ln() / (self.high / self.low).ln()
        } else {
            (value - self.low) / (self.high - self.low)
        };
        f.clamp(0.0, 1.0)
    }

    fn value(&self, fraction: f64) -> f64 {
        if self.log {
            self.low * (self.high / self.low).powf(fraction)
        } else {
            self.low + (self.high - self.low) * fraction
        }
    }

    /// Round values within the range: 1, 2 and 5 times a power of ten, as few as keep the
    /// labels apart (at most six).
    fn ticks(&self) -> Vec<f64> {
        let mut steps: Vec<f64> = Vec::new();
        if self.log {
            for multiples in [&[1.0, 2.0, 5.0][..], &[1.0][..]] {
                steps = round_values(self.low, self.high, multiples);
                if steps.len() <= 6 {
                    break;
                }
            }
            if steps.len() > 6 {
                let keep = steps.len().div_ceil(6);
                steps = steps.into_iter().step_by(keep).collect();
            }
        } else {
            let step = nice_step((self.high - self.low) / 4.0);
            let mut tick = (self.low / step).ceil() * step;
            while tick <= self.high {
                steps.push(tick);
                tick += step;
            }
        }
        if steps.len() < 2 {
            steps = vec![self.low, self.high];
        }
        steps
    }
}

/// `multiples` of each power of ten that lie within `low..=high`.
fn round_values(low: f64, high: f64, multiples: &[f64]) -> Vec<f64> {
    let mut values = Vec::new();
    let mut power = 10f64.powi(low.log10().floor() as i32);
    while power <= high {
        for m in multiples {
            let v = m * power;
            if (low..=high).contains(&v) {
                values.push(v);
            }
        }
        power *= 10.0;
    }
    values
}

/// The smallest of 1, 2 and 5 times a power of ten at least `rough`.
fn nice_step(rough: f64) -> f64 {
    let power = 10f64.powi(rough.log10().floor() as i32);
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&step| step >= rough)
        .unwrap_or(10.0 * power)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wake-up latency shape: most near 30 µs, a tail to 2 ms.
    fn long_tail() -> Vec<f64> {
        let mut samples: Vec<f64> = (0..190).map(|i| 30_000.0 + 50.0 * i as f64).collect();
        samples.extend((0..10).map(|i| 200_000.0 * (i + 1) as f64));
        samples
    }

    #[test]
    fn a_long_tail_is_drawn_on_a_log_axis_with_its_percentiles() {
        let svg = svg(&long_tail(), "sched.wakeup/alone/nice0").unwrap();
        assert!(svg.contains("(log scale)"));
        for label in ["median 35 µs", "p90 39 µs", "p99 1.6 ms"] {
            assert!(svg.contains(label), "{label} missing: {svg}");
        }
        // Round ticks in SI units, never raw nanoseconds.
        assert!(svg.contains(">100 µs<") && svg.contains(">1 ms<"), "{svg}");
        assert!(!svg.contains(">100000<"));
    }

    #[test]
    fn a_narrow_spread_keeps_a_linear_axis() {
        let samples: Vec<f64> = (0..50).map(|i| 100.0 + i as f64).collect();
        let svg = svg(&samples, "x").unwrap();
        assert!(!svg.contains("log scale"));
        assert!(svg.contains(">120 ns<"), "{svg}");
    }

    #[test]
    fn too_few_or_broken_samples_draw_nothing() {
        assert!(svg(&[1.0, 2.0], "x").is_none());
        assert!(svg(&[1.0, 2.0, f64::NAN, 3.0, 4.0], "x").is_none());
        let straddling = svg(&[-2.0, -1.0, 0.5, 1.0, 3.0], "x").unwrap();
        assert!(!straddling.contains("log scale") && !straddling.contains("NaN"));
        let equal = svg(&[5.0; 9], "x").unwrap();
        assert!(equal.contains("median 5 ns"));
    }

    #[test]
    fn ticks_are_round_and_few() {
        let axis = Axis::for_range(3_000.0, 4_000_000.0);
        let ticks = axis.ticks();
        assert!(ticks.len() >= 2 && ticks.len() <= 6, "{ticks:?}");
        assert!(ticks.iter().all(|t| (3_000.0..=4_000_000.0).contains(t)));
        assert_eq!(nice_step(23.0), 50.0);
        assert_eq!(nice_step(0.3), 0.5);
    }
}
