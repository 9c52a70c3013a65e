//! A figure: panels stacked vertically sharing a logarithmic x axis, written as SVG through
//! the one builder (`svg.rs`), from which the PNG is rasterised, so both files come from one
//! description. Each panel's legend sits under its plot, never over the data, its swatches
//! drawn in the series' own stroke; text is sized to stay readable when the page scales the
//! figure down to a phone's width.

use super::svg::{Svg, px};

/// What to draw: a title, an x axis (logarithmic with powers of two, or linear from zero)
/// and panels under each other.
pub(crate) struct Figure {
    pub title: String,
    /// What the figure shows and how to read it, for the page's caption.
    pub caption: String,
    pub x_label: String,
    pub x_scale: Scale,
    pub x_format: fn(f64) -> String,
    pub panels: Vec<Panel>,
}

pub(crate) struct Panel {
    pub y_label: String,
    pub y_scale: Scale,
    pub y_format: fn(f64) -> String,
    pub series: Vec<Series>,
    /// Vertical lines at an x value, labelled at the top.
    pub marks: Vec<(f64, String)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Log,
    Linear,
}

pub(crate) struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Each point's 95% confidence interval where it has one, `(low, high)`, in the order of
    /// `points` (or empty: none has one): shaded under the line in its colour.
    pub intervals: Vec<Option<(f64, f64)>>,
    pub style: Stroke,
    /// Index into the palette; series that belong together share it.
    pub color: usize,
    /// Drawn pale behind the others: a baseline run's line under a later run's. A faded
    /// series has no legend entry of its own (the caption says which run is faded).
    pub faded: bool,
}

impl Series {
    /// The series' colour, its palette entry.
    fn colour(&self) -> &'static str {
        PALETTE[self.color % PALETTE.len()]
    }

    /// How opaque its strokes and marks are: pale when faded.
    fn opacity(&self) -> f64 {
        if self.faded { 0.4 } else { 1.0 }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Stroke {
    Line,
    Dashed,
    Dotted,
    /// A wide translucent line: a level drawn over the curve it was found on.
    Band,
    Dots,
}

impl Stroke {
    /// The SVG dash pattern, where the stroke has one.
    fn dashes(self) -> Option<&'static str> {
        match self {
            Stroke::Dashed => Some("9 6"),
            Stroke::Dotted => Some("2 4"),
            _ => None,
        }
    }
}

/// Width of a figure and height of each panel's plot, in pixels.
pub(crate) const WIDTH: u32 = 720;
const PLOT_HEIGHT: u32 = 380;
const TITLE_HEIGHT: u32 = 34;
const FONT: &str = "sans-serif";
/// Sizes of the tick labels, axis names, legend and title.
const TICK_SIZE: u32 = 17;
const AXIS_SIZE: u32 = 18;
const LEGEND_SIZE: u32 = 17;
const TITLE_SIZE: u32 = 20;
/// The bundled font is monospaced: each character is this share of the size wide.
const CHAR_WIDTH: f64 = 0.61;
const LEGEND_ROW: u32 = 24;
const SWATCH: f64 = 30.0;
/// The plot area within a panel: a margin all round, more on the right for the last tick
/// label ("16MiB") centred on the edge, and room for the tick labels and axis names.
const MARGIN: f64 = 12.0;
const MARGIN_RIGHT: f64 = 30.0;
const X_LABEL_AREA: f64 = 52.0;
const Y_LABEL_AREA: f64 = 104.0;
/// At most this many labelled ticks on an axis.
const MOST_TICKS: usize = 8;
/// Where text sits against its `y`: the share of its size from the baseline to its middle,
/// and to its top.
const MIDDLE: f64 = 0.35;
const TOP: f64 = 0.8;

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const GRID: &str = "#d2d2d2";
const MARK_GREY: &str = "#6e6e6e";

/// The font the figures' text is laid out with, and the PNG's set in, bundled so that a
/// machine without fonts draws the same plots.
pub(crate) const FONT_FILE: &[u8] = include_bytes!("../../fonts/DejaVuSansMono.ttf");

impl Figure {
    pub(crate) fn height(&self) -> u32 {
        TITLE_HEIGHT + self.panels.iter().map(Panel::height).sum::<u32>()
    }

    /// The figure as an SVG document.
    pub(crate) fn svg(&self) -> String {
        let (width, height) = (f64::from(WIDTH), f64::from(self.height()));
        let mut svg = Svg::sized(width, height, &[("font-family", &FONT)]);
        (svg.element("rect").attr("width", width))
            .attr("height", height)
            .attr("fill", "#fff")
            .add();
        (svg.element("text").attr("x", 12))
            .attr("y", px(8.0 + f64::from(TITLE_SIZE) * TOP))
            .attr("font-size", TITLE_SIZE)
            .text(&self.title)
            .add();
        let (x_min, x_max) = self.x_range();
        let mut top = f64::from(TITLE_HEIGHT);
        for panel in &self.panels {
            let plot = Plot::of(panel, top, (self.x_scale, x_min, x_max));
            plot.draw(&mut svg, self, panel);
            draw_legend(&mut svg, panel, top + f64::from(PLOT_HEIGHT));
            top += f64::from(panel.height());
        }
        svg.finish()
    }

    /// The x range of every panel's points, widened a little: on a log scale by a factor,
    /// on a linear one from zero to a twentieth past the largest.
    fn x_range(&self) -> (f64, f64) {
        let xs = self
            .panels
            .iter()
            .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
        match self.x_scale {
            Scale::Log => {
                let (low, high) = bounds(xs.filter(|x| on_log_scale(*x))).unwrap_or((1.0, 2.0));
                (low / 1.15, high * 1.15)
            }
            Scale::Linear => {
                let (low, high) = bounds(xs).unwrap_or((0.0, 1.0));
                let high = high.max(low.abs()).max(f64::MIN_POSITIVE);
                (low.min(0.0), high * 1.05)
            }
        }
    }
}

impl Panel {
    /// The plot and the legend rows under it.
    fn height(&self) -> u32 {
        PLOT_HEIGHT + legend_rows(self).len() as u32 * LEGEND_ROW + 8
    }

    fn y_range(&self) -> (f64, f64) {
        let ys = self.series.iter().flat_map(|s| {
            (s.points.iter().map(|p| p.1)).chain(
                s.intervals
                    .iter()
                    .flatten()
                    .flat_map(|&(low, high)| [low, high]),
            )
        });
        match self.y_scale {
            Scale::Log => {
                let (low, high) = bounds(ys.filter(|y| on_log_scale(*y))).unwrap_or((1.0, 10.0));
                (low / 1.5, high * 1.5)
            }
            Scale::Linear => {
                let (low, high) = bounds(ys).unwrap_or((0.0, 1.0));
                let pad = ((high - low) * 0.05).max(1e-9);
                (low.min(0.0) - pad, high + pad)
            }
        }
    }
}

/// Whether a value can be placed on a log axis: positive, and within 30 decades of one.
/// Outside them (a subnormal, 1e308) the axis would need thousands of ticks; points there
/// are left off the plot rather than drawn into an axis that takes for ever to lay out.
fn on_log_scale(value: f64) -> bool {
    (1e-15..=1e15).contains(&value)
}

fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((low, high)) => Some((low.min(v), high.max(v))),
        })
}

/// An axis: its range, its scale and where it lies in pixels (`from` at `low`).
struct Axis {
    low: f64,
    high: f64,
    scale: Scale,
    from: f64,
    to: f64,
}

impl Axis {
    /// Where `value` lies in pixels; `None` where the scale cannot place it.
    fn at(&self, value: f64) -> Option<f64> {
        let share = match self.scale {
            Scale::Log if on_log_scale(value) => {
                (value / self.low).ln() / (self.high / self.low).ln()
            }
            Scale::Log => return None,
            Scale::Linear if value.is_finite() => (value - self.low) / (self.high - self.low),
            Scale::Linear => return None,
        };
        Some(self.from + share * (self.to - self.from))
    }

    /// The values ticked and labelled: powers of two on the x axis (`base_two`), else 1, 2
    /// and 5 times powers of ten, at most [`MOST_TICKS`].
    fn ticks(&self, base_two: bool) -> Vec<f64> {
        match self.scale {
            Scale::Log if base_two => powers_of_two(self.low, self.high),
            Scale::Log => {
                let ticks = decades(self.low, self.high);
                if ticks.len() >= 2 {
                    ticks
                } else {
                    linear_ticks(self.low, self.high)
                }
            }
            Scale::Linear => linear_ticks(self.low, self.high),
        }
    }
}

/// The powers of two within `low..=high`, every k-th of them so that at most
/// [`MOST_TICKS`] are left.
fn powers_of_two(low: f64, high: f64) -> Vec<f64> {
    let (first, last) = (low.log2().ceil() as i32, high.log2().floor() as i32);
    if last < first {
        return Vec::new();
    }
    let count = (last - first + 1) as usize;
    let every = count.div_ceil(MOST_TICKS).max(1);
    (first..=last)
        .step_by(every)
        .map(|e| 2f64.powi(e))
        .collect()
}

/// 1, 2 and 5 times the powers of ten within `low..=high`; the powers alone where that is
/// too many; every k-th power where that still is.
fn decades(low: f64, high: f64) -> Vec<f64> {
    let (first, last) = (low.log10().floor() as i32, high.log10().ceil() as i32);
    let within = |steps: &[f64]| -> Vec<f64> {
        (first..=last)
            .flat_map(|e| steps.iter().map(move |s| s * 10f64.powi(e)))
            .filter(|v| (low..=high).contains(v))
            .collect()
    };
    let fine = within(&[1.0, 2.0, 5.0]);
    if fine.len() <= MOST_TICKS {
        return fine;
    }
    let powers = within(&[1.0]);
    let every = powers.len().div_ceil(MOST_TICKS).max(1);
    powers.into_iter().step_by(every).collect()
}

/// Round values within `low..=high` a step of 1, 2 or 5 times a power of ten apart, the
/// smallest step that leaves at most [`MOST_TICKS`].
fn linear_ticks(low: f64, high: f64) -> Vec<f64> {
    let span = high - low;
    if !(span > 0.0 && span.is_finite()) {
        return vec![low];
    }
    let magnitude = 10f64.powf((span / MOST_TICKS as f64).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|step| span / step <= MOST_TICKS as f64)
        .unwrap_or(10.0 * magnitude);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    // A step under one as a division by its inverse, so that 3 × 0.1 is 0.3, not
    // 0.30000000000000004; -0 as 0.
    let per_unit = (1.0 / step).round();
    (first..=last)
        .map(|k| {
            let value = if step < 1.0 {
                k as f64 / per_unit
            } else {
                k as f64 * step
            };
            value + 0.0
        })
        .collect()
}

/// A panel's plot area, spanned by its axes (the x axis from left to right, the y axis
/// from bottom to top).
struct Plot {
    x: Axis,
    y: Axis,
}

impl Plot {
    fn of(panel: &Panel, top: f64, (x_scale, x_min, x_max): (Scale, f64, f64)) -> Plot {
        let left = MARGIN + Y_LABEL_AREA;
        let right = f64::from(WIDTH) - MARGIN_RIGHT;
        let (top, bottom) = (
            top + MARGIN,
            top + f64::from(PLOT_HEIGHT) - MARGIN - X_LABEL_AREA,
        );
        let (y_min, y_max) = panel.y_range();
        Plot {
            x: Axis {
                low: x_min,
                high: x_max,
                scale: x_scale,
                from: left,
                to: right,
            },
            y: Axis {
                low: y_min,
                high: y_max,
                scale: panel.y_scale,
                from: bottom,
                to: top,
            },
        }
    }

    fn left(&self) -> f64 {
        self.x.from
    }

    fn right(&self) -> f64 {
        self.x.to
    }

    fn top(&self) -> f64 {
        self.y.to
    }

    fn bottom(&self) -> f64 {
        self.y.from
    }

    /// A point in pixels, where both axes can place it.
    fn point(&self, (x, y): (f64, f64)) -> Option<(f64, f64)> {
        Some((self.x.at(x)?, self.y.at(y)?))
    }

    fn draw(&self, svg: &mut Svg, figure: &Figure, panel: &Panel) {
        self.draw_mesh(svg, figure, panel);
        draw_marks(svg, self, &panel.marks);
        for series in &panel.series {
            draw_intervals(svg, self, series);
        }
        for series in &panel.series {
            draw_series(svg, self, series);
        }
    }

    /// The gridlines at the ticks, their labels, the axes and their names.
    fn draw_mesh(&self, svg: &mut Svg, figure: &Figure, panel: &Panel) {
        for tick in self.x.ticks(true) {
            let Some(x) = self.x.at(tick) else { continue };
            line(svg, (x, self.top()), (x, self.bottom()))
                .attr("stroke", GRID)
                .add();
            (svg.element("text").attr("x", px(x)))
                .attr("y", px(self.bottom() + 6.0 + f64::from(TICK_SIZE) * TOP))
                .attr("font-size", TICK_SIZE)
                .attr("text-anchor", "middle")
                .text((figure.x_format)(tick))
                .add();
        }
        for tick in self.y.ticks(false) {
            let Some(y) = self.y.at(tick) else { continue };
            line(svg, (self.left(), y), (self.right(), y))
                .attr("stroke", GRID)
                .add();
            (svg.element("text").attr("x", px(self.left() - 8.0)))
                .attr("y", px(y + f64::from(TICK_SIZE) * MIDDLE))
                .attr("font-size", TICK_SIZE)
                .attr("text-anchor", "end")
                .text((panel.y_format)(tick))
                .add();
        }
        line(
            svg,
            (self.left(), self.bottom()),
            (self.right(), self.bottom()),
        )
        .attr("stroke", "#000")
        .add();
        line(svg, (self.left(), self.top()), (self.left(), self.bottom()))
            .attr("stroke", "#000")
            .add();
        (svg.element("text")
            .attr("x", px((self.left() + self.right()) / 2.0)))
        .attr("y", px(self.bottom() + X_LABEL_AREA - 4.0))
        .attr("font-size", AXIS_SIZE)
        .attr("text-anchor", "middle")
        .text(&figure.x_label)
        .add();
        let (x, y) = (
            MARGIN + f64::from(AXIS_SIZE) * TOP,
            (self.top() + self.bottom()) / 2.0,
        );
        (svg.element("text").attr("x", px(x)))
            .attr("y", px(y))
            .attr("font-size", AXIS_SIZE)
            .attr("text-anchor", "middle")
            .attr("transform", format_args!("rotate(-90 {} {})", px(x), px(y)))
            .text(&panel.y_label)
            .add();
    }
}

/// A straight line between two points, to be styled.
fn line(svg: &mut Svg, (x1, y1): (f64, f64), (x2, y2): (f64, f64)) -> super::svg::Element<'_> {
    (svg.element("line").attr("x1", px(x1)))
        .attr("y1", px(y1))
        .attr("x2", px(x2))
        .attr("y2", px(y2))
}

/// Points as an SVG `points` list.
fn points(at: impl Iterator<Item = (f64, f64)>) -> String {
    let pairs: Vec<String> = at.map(|(x, y)| format!("{},{}", px(x), px(y))).collect();
    pairs.join(" ")
}

/// The marks: dashed grey lines, their labels in rows at the top so that close marks do not
/// write over each other. A mark beyond the axis (a cache larger than the largest size
/// measured) is not drawn.
fn draw_marks(svg: &mut Svg, plot: &Plot, marks: &[(f64, String)]) {
    let mut marks: Vec<&(f64, String)> = (marks.iter())
        .filter(|(x, _)| (plot.x.low..=plot.x.high).contains(x))
        .collect();
    marks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rows_end: Vec<i32> = Vec::new();
    for (x, label) in marks {
        let Some(at) = plot.x.at(*x) else { continue };
        line(svg, (at, plot.top()), (at, plot.bottom()))
            .attr("stroke", MARK_GREY)
            .attr("stroke-dasharray", "4 4")
            .add();
        let width = (label.chars().count() as f64 * CHAR_WIDTH * f64::from(LEGEND_SIZE)) as i32;
        let (row, ends_at_line) = place_label(&mut rows_end, at as i32, width, plot.right() as i32);
        let y = plot.top() + row as f64 * f64::from(LEGEND_SIZE + 4) + f64::from(LEGEND_SIZE) * TOP;
        // A label that ends at its line keeps a gap from it.
        let (x, anchor) = if ends_at_line {
            (at - 4.0, "end")
        } else {
            (at, "start")
        };
        (svg.element("text").attr("x", px(x)))
            .attr("y", px(y))
            .attr("font-size", LEGEND_SIZE)
            .attr("text-anchor", anchor)
            .attr("fill", MARK_GREY)
            .text(label.trim_start())
            .add();
    }
}

/// Where a mark's label of `width` pixels goes, its line at `at`: the first row whose
/// labels so far end before it starts (`rows_end`, updated), and whether, where it would
/// run past `right_edge`, it ends at its line instead of starting there.
fn place_label(rows_end: &mut Vec<i32>, at: i32, width: i32, right_edge: i32) -> (usize, bool) {
    let ends_at_line = at + width > right_edge;
    let from = if ends_at_line { at - width } else { at };
    let row = match rows_end.iter().position(|&end| end < from) {
        Some(row) => row,
        None => {
            rows_end.push(i32::MIN);
            rows_end.len() - 1
        }
    };
    rows_end[row] = from + width;
    (row, ends_at_line)
}

/// A series' confidence intervals as a shaded band, one polygon per run of neighbouring
/// points that have one (a point without an interval breaks the band).
fn draw_intervals(svg: &mut Svg, plot: &Plot, series: &Series) {
    let opacity = if series.faded { 0.12 } else { 0.22 };
    let mut runs: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new()];
    for (&(x, _), interval) in series.points.iter().zip(&series.intervals) {
        match interval {
            Some((low, high)) => runs.last_mut().expect("a run").push((x, *low, *high)),
            None => runs.push(Vec::new()),
        }
    }
    for run in runs.iter().filter(|run| run.len() > 1) {
        let outline = (run.iter().map(|&(x, low, _)| (x, low)))
            .chain(run.iter().rev().map(|&(x, _, high)| (x, high)))
            .filter_map(|p| plot.point(p));
        (svg.element("polygon").attr("points", points(outline)))
            .attr("fill", series.colour())
            .attr("fill-opacity", opacity)
            .add();
    }
}

/// One series in its colour and stroke.
fn draw_series(svg: &mut Svg, plot: &Plot, series: &Series) {
    let at: Vec<(f64, f64)> = (series.points.iter())
        .filter_map(|&p| plot.point(p))
        .collect();
    match series.style {
        // A line of one point (a figure measured at one size only) is its marker.
        _ if series.points.len() == 1 => {
            if let Some(&point) = at.first() {
                lone_marker(svg, point, series);
            }
        }
        Stroke::Dots => {
            for &(x, y) in &at {
                dot(svg, (x, y), 3.0, series);
            }
        }
        style => {
            let (width, opacity) = match style {
                Stroke::Band => (6, 0.55 * series.opacity()),
                _ => (2, series.opacity()),
            };
            (svg.element("polyline")
                .attr("points", points(at.into_iter())))
            .attr("fill", "none")
            .attr("stroke", series.colour())
            .attr("stroke-width", width)
            .attr("stroke-opacity", opacity)
            .attr_if("stroke-dasharray", style.dashes())
            .attr("stroke-linejoin", "round")
            .add();
        }
    }
}

/// A filled disc of `radius` at `at`, in the series' colour.
fn dot(svg: &mut Svg, (x, y): (f64, f64), radius: f64, series: &Series) {
    (svg.element("circle").attr("cx", px(x)))
        .attr("cy", px(y))
        .attr("r", radius)
        .attr("fill", series.colour())
        .attr("fill-opacity", series.opacity())
        .add();
}

/// The marker of a series of one point: a filled disc for a solid line or dots, a ring for
/// a dashed or dotted line, so that the two stay apart as their lines do.
fn lone_marker(svg: &mut Svg, (x, y): (f64, f64), series: &Series) {
    match series.style {
        Stroke::Dashed | Stroke::Dotted => (svg.element("circle").attr("cx", px(x)))
            .attr("cy", px(y))
            .attr("r", 5)
            .attr("fill", "none")
            .attr("stroke", series.colour())
            .attr("stroke-width", 2)
            .attr("stroke-opacity", series.opacity())
            .add(),
        _ => dot(svg, (x, y), 5.0, series),
    }
}

/// The panel's legend entries laid out in rows that fit the figure's width: each row the
/// indices of its series.
fn legend_rows(panel: &Panel) -> Vec<Vec<usize>> {
    let available = f64::from(WIDTH) - 128.0;
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = f64::INFINITY;
    for (i, series) in panel.series.iter().enumerate().filter(|(_, s)| !s.faded) {
        let width = entry_width(&series.label);
        if used + width > available {
            rows.push(Vec::new());
            used = 0.0;
        }
        rows.last_mut().expect("a row was pushed").push(i);
        used += width;
    }
    rows
}

/// Swatch, gap, label and the space before the next entry.
fn entry_width(label: &str) -> f64 {
    f64::from(SWATCH as u32 + 8 + 22)
        + label.chars().count() as f64 * CHAR_WIDTH * f64::from(LEGEND_SIZE)
}

/// The legend under a panel (whose plot ends at `top`): each series' swatch, drawn as the
/// series is, and its label.
fn draw_legend(svg: &mut Svg, panel: &Panel, top: f64) {
    for (row, entries) in legend_rows(panel).iter().enumerate() {
        let y = top + f64::from(row as u32 * LEGEND_ROW + LEGEND_ROW / 2);
        let mut x = MARGIN + Y_LABEL_AREA; // under the plot, right of the y axis's labels
        for &i in entries {
            let series = &panel.series[i];
            match series.style {
                _ if series.points.len() == 1 => lone_marker(svg, (x + SWATCH / 2.0, y), series),
                Stroke::Dots => {
                    for at in [6.0, 15.0, 24.0] {
                        dot(svg, (x + at, y), 3.0, series);
                    }
                }
                style => {
                    let (width, opacity) = match style {
                        Stroke::Band => (6, 0.55 * series.opacity()),
                        _ => (2, series.opacity()),
                    };
                    line(svg, (x, y), (x + SWATCH, y))
                        .attr("stroke", series.colour())
                        .attr("stroke-width", width)
                        .attr("stroke-opacity", opacity)
                        .attr_if("stroke-dasharray", style.dashes())
                        .add();
                }
            }
            (svg.element("text").attr("x", px(x + SWATCH + 8.0)))
                .attr("y", px(y + f64::from(LEGEND_SIZE) * MIDDLE))
                .attr("font-size", LEGEND_SIZE)
                .text(&series.label)
                .add();
            x += entry_width(&series.label);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels of marks close together go to rows of their own; one that would run past the
    /// right edge ends at its line; one clear of the others shares the first row.
    #[test]
    fn mark_labels_neither_overlap_nor_leave_the_figure() {
        let mut rows = Vec::new();
        assert_eq!(place_label(&mut rows, 100, 150, 700).0, 0);
        assert_eq!(place_label(&mut rows, 120, 150, 700).0, 1);
        assert_eq!(place_label(&mut rows, 140, 150, 700).0, 2);
        assert_eq!(place_label(&mut rows, 300, 150, 700).0, 0);
        let (row, ends_at_line) = place_label(&mut rows, 690, 150, 700);
        assert!(ends_at_line);
        assert_eq!(row, 0, "it ends at 690, clear of the label ending at 450");
    }

    /// Ticks are round values within the axis, never more than eight: powers of two on the
    /// x axis, 1-2-5 steps of ten on a log y axis, round steps on a linear one.
    #[test]
    fn ticks_are_round_and_few() {
        assert_eq!(powers_of_two(900.0, 5000.0), [1024.0, 2048.0, 4096.0]);
        let wide = powers_of_two(1.0, 2f64.powi(30));
        assert!(wide.len() <= MOST_TICKS && wide[0] == 1.0, "{wide:?}");
        assert_eq!(decades(0.9, 60.0), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        let many = decades(1e-3, 1e9);
        assert!(many.len() <= MOST_TICKS && many.len() >= 4, "{many:?}");
        assert!(
            many.iter().all(|t| t.log10().fract().abs() < 1e-9),
            "{many:?}"
        );
        assert_eq!(
            linear_ticks(-0.3, 7.4),
            [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
        );
        assert_eq!(linear_ticks(0.0, 0.5), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]);
    }
}
