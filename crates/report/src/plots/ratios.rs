//! A comparison's figure for one probe, as inline SVG: a row per result, each run's median
//! as a dot on a logarithmic axis of the ratio to the baseline's median (the baseline at
//! ×1), with a whisker over that run's 95% confidence interval of the median (or, for a side
//! of several runs, the range of their medians), and the band of medians called the same
//! by the threshold shaded about ×1. Results that span nanoseconds to milliseconds share
//! one axis, and the runs' intervals overlapping or not is read at a glance.

use super::svg::{Element, Svg, px};
use crate::units::format_ratio;

/// One run's figure of one result, relative to the baseline's median.
pub(crate) struct Mark {
    pub ratio: f64,
    /// The interval's bounds, as ratios to the baseline's median, where there is one.
    pub interval: Option<(f64, f64)>,
}

/// One result: its name, each run's mark (the baseline first; `None` where a run lacks
/// it), and the later run's verdict as a word.
pub(crate) struct Row {
    pub name: String,
    pub marks: Vec<Option<Mark>>,
    pub verdict: &'static str,
}

const WIDTH: f64 = 720.0;
const LABEL_WIDTH: f64 = 300.0;
const VERDICT_WIDTH: f64 = 112.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 8.0;
const AXIS_HEIGHT: f64 = 40.0;
const PER_RUN: f64 = 11.0;
const ROW_GAP: f64 = 9.0;
const FONT_SIZE: u32 = 13;
/// The baseline's colour and the later runs', in order.
const COLOURS: [&str; 4] = ["#7f9fbf", "#d62728", "#2ca02c", "#9467bd"];
/// The least distance between two ticks' labels, in pixels.
const TICK_SPACING: f64 = 44.0;
/// The round ratios the axis may be ticked at.
const TICKS: [f64; 15] = [
    0.1, 0.2, 0.5, 0.67, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25, 1.5, 2.0, 5.0, 10.0,
];

/// The figure, `None` for no rows. `threshold` is the share within which medians are the
/// same; `title` names the probe.
pub(crate) fn svg(rows: &[Row], threshold: f64, title: &str) -> Option<String> {
    let runs = rows.iter().map(|r| r.marks.len()).max()?;
    let row_height = PER_RUN * runs as f64 + ROW_GAP;
    let height = TOP + row_height * rows.len() as f64 + AXIS_HEIGHT;
    let axis = Axis::spanning(rows, threshold);
    let mut svg = Svg::sized(WIDTH, height, &[("role", &"img")]);
    svg.title(title);
    (svg.element("rect").attr("width", WIDTH))
        .attr("height", height)
        .attr("fill", "#fff")
        .add();
    let bottom = height - AXIS_HEIGHT;
    let (same_from, same_to) = (axis.x(1.0 / (1.0 + threshold)), axis.x(1.0 + threshold));
    (svg.element("rect").attr("x", px(same_from)))
        .attr("y", TOP)
        .attr("width", px(same_to - same_from))
        .attr("height", px(bottom - TOP))
        .attr("fill", "#eee")
        .title("within the threshold: the same")
        .add();
    ticks(&mut svg, &axis, bottom);
    for (i, row) in rows.iter().enumerate() {
        draw_row(
            &mut svg,
            &axis,
            row,
            TOP + i as f64 * row_height,
            row_height,
        );
    }
    Some(svg.finish())
}

/// Text in the figure's font.
fn text(svg: &mut Svg, x: impl std::fmt::Display, y: f64) -> Element<'_> {
    (svg.element("text").attr("x", x))
        .attr("y", px(y))
        .attr("font-family", "sans-serif")
        .attr("font-size", FONT_SIZE)
}

/// A result's row: its name, each run's whisker and dot, the verdict at the right.
fn draw_row(svg: &mut Svg, axis: &Axis, row: &Row, top: f64, height: f64) {
    let middle = top + height / 2.0;
    (text(svg, 4, middle + 4.0))
        .text(shortened(&row.name, 38))
        .title(&row.name)
        .add();
    let colour = match row.verdict {
        "slower" => "#b00020",
        "faster" => "#1a7f37",
        _ => "#666",
    };
    (text(svg, px(WIDTH - VERDICT_WIDTH + 6.0), middle + 4.0))
        .attr("fill", colour)
        .text(row.verdict)
        .add();
    for (run, mark) in row.marks.iter().enumerate() {
        let Some(mark) = mark else { continue };
        let y = px(top + ROW_GAP / 2.0 + PER_RUN * (run as f64 + 0.5));
        let colour = COLOURS[run.min(COLOURS.len() - 1)];
        if let Some((low, high)) = mark.interval {
            (svg.element("line").attr("x1", px(axis.x(low))))
                .attr("x2", px(axis.x(high)))
                .attr("y1", &y)
                .attr("y2", &y)
                .attr("stroke", colour)
                .attr("stroke-width", 2)
                .add();
        }
        (svg.element("circle").attr("cx", px(axis.x(mark.ratio))))
            .attr("cy", &y)
            .attr("r", 4)
            .attr("fill", colour)
            .title(format_ratio(mark.ratio))
            .add();
    }
}

/// The axis's ticks, gridlines through the rows, and its name.
fn ticks(svg: &mut Svg, axis: &Axis, bottom: f64) {
    for tick in axis.ticks() {
        let x = axis.x(tick);
        let stroke = if tick == 1.0 { "#555" } else { "#ddd" };
        (svg.element("line").attr("x1", px(x)))
            .attr("x2", px(x))
            .attr("y1", TOP)
            .attr("y2", bottom)
            .attr("stroke", stroke)
            .add();
        (text(svg, px(x), bottom + 16.0))
            .attr("text-anchor", "middle")
            .text(format_args!("×{tick}"))
            .add();
    }
    (text(svg, px((axis.left + axis.right) / 2.0), bottom + 34.0))
        .attr("text-anchor", "middle")
        .text("median over the baseline's (log scale)")
        .add();
}

/// `name` cut to `most` characters, its start replaced by "…" where longer.
fn shortened(name: &str, most: usize) -> String {
    let count = name.chars().count();
    if count <= most {
        return name.to_string();
    }
    let tail: String = name.chars().skip(count - (most - 1)).collect();
    format!("…{tail}")
}

/// A logarithmic ratio axis, symmetric about ×1.
struct Axis {
    /// The largest |ln ratio| shown.
    reach: f64,
    left: f64,
    right: f64,
}

impl Axis {
    /// An axis wide enough for every mark and whisker and for the threshold's band, at most
    /// a factor of 100 either way (a mark beyond sits at the edge).
    fn spanning(rows: &[Row], threshold: f64) -> Axis {
        let values = (rows.iter().flat_map(|r| r.marks.iter().flatten())).flat_map(|m| {
            let (low, high) = m.interval.unwrap_or((m.ratio, m.ratio));
            [m.ratio, low, high]
        });
        let reach = (values.filter(|v| *v > 0.0 && v.is_finite()))
            .map(|v| v.ln().abs())
            .fold((1.0 + threshold).ln() * 1.6, f64::max)
            .min(100f64.ln());
        Axis {
            reach: reach * 1.05,
            left: LABEL_WIDTH,
            right: WIDTH - VERDICT_WIDTH - RIGHT,
        }
    }

    fn x(&self, ratio: f64) -> f64 {
        let at = (ratio.max(1e-300).ln() / self.reach).clamp(-1.0, 1.0);
        self.left + (at + 1.0) / 2.0 * (self.right - self.left)
    }

    /// The round ratios within the axis, ×1 first, then outwards on each side each one at
    /// least [`TICK_SPACING`] pixels from the last kept, so that labels never touch.
    fn ticks(&self) -> Vec<f64> {
        let within: Vec<f64> = (TICKS.iter().copied())
            .filter(|t| t.ln().abs() <= self.reach)
            .collect();
        let mut kept = vec![1.0];
        for side in [
            within
                .iter()
                .copied()
                .filter(|&t| t > 1.0)
                .collect::<Vec<_>>(),
            within.iter().rev().copied().filter(|&t| t < 1.0).collect(),
        ] {
            let mut last = self.x(1.0);
            for tick in side {
                if (self.x(tick) - last).abs() >= TICK_SPACING {
                    last = self.x(tick);
                    kept.push(tick);
                }
            }
        }
        kept.sort_by(f64::total_cmp);
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, later: f64, verdict: &'static str) -> Row {
        Row {
            name: name.into(),
            marks: vec![
                Some(Mark {
                    ratio: 1.0,
                    interval: Some((0.98, 1.02)),
                }),
                Some(Mark {
                    ratio: later,
                    interval: Some((later * 0.97, later * 1.03)),
                }),
            ],
            verdict,
        }
    }

    /// A run twice as slow sits to the right of ×1 by as much as one twice as fast sits to
    /// its left; every row is drawn with both runs; the axis holds both.
    #[test]
    fn ratios_lie_symmetric_about_one_on_a_log_axis() {
        let rows = [row("a/slow", 2.0, "slower"), row("a/fast", 0.5, "faster")];
        let axis = Axis::spanning(&rows, 0.02);
        let one = axis.x(1.0);
        assert!(((axis.x(2.0) - one) - (one - axis.x(0.5))).abs() < 1e-9);
        assert!(axis.x(2.0 * 1.03) < axis.right && axis.x(0.5 * 0.97) > axis.left);
        let ticks = axis.ticks();
        assert!(ticks.contains(&1.0) && ticks.contains(&2.0) && ticks.contains(&0.5));
        for pair in ticks.windows(2) {
            assert!(
                axis.x(pair[1]) - axis.x(pair[0]) >= TICK_SPACING,
                "{ticks:?}"
            );
        }
        let svg = svg(&rows, 0.02, "a").unwrap();
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(svg.contains("fill=\"#b00020\">slower"));
    }

    #[test]
    fn long_names_keep_their_end() {
        assert_eq!(shortened("abcdef", 4), "…def");
        assert_eq!(shortened("abc", 4), "abc");
    }
}
