//! A figure: panels stacked vertically sharing a logarithmic x axis, drawn with plotters on
//! any backend (SVG text or an RGB bitmap), so both files come from one description. Each
//! panel's legend sits under its plot, never over the data, its swatches drawn in the
//! series' own stroke; text is sized to stay readable when the page scales the figure down
//! to a phone's width.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::Once;

/// What to draw: a title, an x axis (always logarithmic, base 2) and panels under each other.
pub(crate) struct Figure {
    pub title: String,
    /// What the figure shows and how to read it, for the page's caption.
    pub caption: String,
    pub x_label: String,
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
    /// The series' colour: its palette entry, pale when faded.
    fn colour(&self) -> RGBAColor {
        let colour = PALETTE[self.color % PALETTE.len()];
        colour.mix(if self.faded { 0.4 } else { 1.0 })
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
const SWATCH: i32 = 30;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// The font the figures' text is laid out with, and the PNG's set in, bundled so that a
/// machine without fonts draws the same plots.
pub(crate) const FONT_FILE: &[u8] = include_bytes!("../../fonts/DejaVuSansMono.ttf");

/// Makes [`FONT_FILE`] the font plotters measures text with.
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled font is a valid TrueType file; a failure here is a build defect.
        assert!(
            plotters::style::register_font(FONT, FontStyle::Normal, FONT_FILE).is_ok(),
            "the bundled font does not load"
        );
    });
}

impl Figure {
    pub(crate) fn height(&self) -> u32 {
        TITLE_HEIGHT + self.panels.iter().map(Panel::height).sum::<u32>()
    }

    /// Draws the figure on `root`.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        register_font();
        root.fill(&WHITE)?;
        let (_, mut rest) = root.split_vertically(TITLE_HEIGHT);
        root.draw_text(
            &self.title,
            &(FONT, TITLE_SIZE).into_font().into_text_style(root),
            (12, 8),
        )?;
        let (x_min, x_max) = self.x_range();
        for panel in &self.panels {
            let (area, below) = rest.split_vertically(panel.height());
            rest = below;
            let (plot, legend) = area.split_vertically(PLOT_HEIGHT);
            let (y_min, y_max) = panel.y_range();
            let x = (x_min..x_max).log_scale().base(2.0);
            match panel.y_scale {
                Scale::Log => draw_panel(self, panel, &plot, x, (y_min..y_max).log_scale())?,
                Scale::Linear => {
                    let y: RangedCoordf64 = (y_min..y_max).into();
                    draw_panel(self, panel, &plot, x, y)?
                }
            }
            draw_legend(panel, &legend)?;
        }
        root.present()
    }

    /// The x range of every panel's points, widened a little on a log scale.
    fn x_range(&self) -> (f64, f64) {
        let xs = self
            .panels
            .iter()
            .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
        let (low, high) = bounds(xs.filter(|x| on_log_scale(*x))).unwrap_or((1.0, 2.0));
        (low / 1.15, high * 1.15)
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

fn draw_panel<DB, X, Y>(
    figure: &Figure,
    panel: &Panel,
    area: &DrawingArea<DB, Shift>,
    x: X,
    y: Y,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        // Room for the last tick label ("16MiB") centred on the right edge.
        .margin_right(30)
        .x_label_area_size(52)
        .y_label_area_size(104)
        .build_cartesian_2d(x, y)?;
    let x_format = figure.x_format;
    let y_format = panel.y_format;
    chart
        .configure_mesh()
        .x_desc(figure.x_label.as_str())
        .y_desc(panel.y_label.as_str())
        .x_label_formatter(&|v| x_format(*v))
        .y_label_formatter(&|v| y_format(*v))
        .x_labels(8)
        .y_labels(8)
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, AXIS_SIZE))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .draw()?;

    draw_marks(&mut chart, &panel.marks)?;
    for series in &panel.series {
        draw_intervals(&mut chart, series)?;
    }
    for series in &panel.series {
        draw_series(&mut chart, series)?;
    }
    Ok(())
}

/// The marks: dashed grey lines, their labels alternating between two rows at the top so
/// that close marks do not write over each other.
fn draw_marks<DB, X, Y>(
    chart: &mut ChartContext<DB, Cartesian2d<X, Y>>,
    marks: &[(f64, String)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let y_top = chart.y_range().end;
    let y_bottom = chart.y_range().start;
    let (x_start, x_end) = (chart.x_range().start, chart.x_range().end);
    let right_edge = chart.backend_coord(&(x_end, y_top)).0;
    let grey = RGBColor(110, 110, 110);
    // Left to right, each label in the first row where it overlaps no label placed before
    // it; a label that would run past the figure's right edge ends at its line instead.
    // A mark beyond the axis (a cache larger than the largest size measured) is not drawn.
    let mut marks: Vec<&(f64, String)> = (marks.iter())
        .filter(|(x, _)| (x_start..=x_end).contains(x))
        .collect();
    marks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rows_end: Vec<i32> = Vec::new();
    for (x, label) in marks {
        chart.draw_series(DashedLineSeries::new(
            [(*x, y_bottom), (*x, y_top)],
            4,
            4,
            grey.stroke_width(1),
        ))?;
        let at = chart.backend_coord(&(*x, y_top)).0;
        let width = (label.chars().count() as f64 * CHAR_WIDTH * LEGEND_SIZE as f64) as i32;
        let (row, anchor) = place_label(&mut rows_end, at, width, right_edge);
        let text = match anchor {
            HPos::Right => format!("{} ", label.trim_start()),
            _ => label.clone(),
        };
        let font = (FONT, LEGEND_SIZE)
            .into_font()
            .color(&grey)
            .pos(Pos::new(anchor, VPos::Top));
        let offset = (0, row as i32 * (LEGEND_SIZE as i32 + 4));
        chart.draw_series(std::iter::once(
            EmptyElement::at((*x, y_top)) + Text::new(text, offset, font),
        ))?;
    }
    Ok(())
}

/// Where a mark's label of `width` pixels goes, its line at `at`: the first row whose
/// labels so far end before it starts (`rows_end`, updated), and whether it starts at its
/// line or, where it would run past `right_edge`, ends there.
fn place_label(rows_end: &mut Vec<i32>, at: i32, width: i32, right_edge: i32) -> (usize, HPos) {
    let (anchor, from) = if at + width > right_edge {
        (HPos::Right, at - width)
    } else {
        (HPos::Left, at)
    };
    let row = match rows_end.iter().position(|&end| end < from) {
        Some(row) => row,
        None => {
            rows_end.push(i32::MIN);
            rows_end.len() - 1
        }
    };
    rows_end[row] = from + width;
    (row, anchor)
}

/// A series' confidence intervals as a shaded band, one polygon per run of neighbouring
/// points that have one (a point without an interval breaks the band).
fn draw_intervals<DB, X, Y>(
    chart: &mut ChartContext<DB, Cartesian2d<X, Y>>,
    series: &Series,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let color = PALETTE[series.color % PALETTE.len()].mix(if series.faded { 0.12 } else { 0.22 });
    let mut runs: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new()];
    for (&(x, _), interval) in series.points.iter().zip(&series.intervals) {
        match interval {
            Some((low, high)) => runs.last_mut().expect("a run").push((x, *low, *high)),
            None => runs.push(Vec::new()),
        }
    }
    for run in runs.iter().filter(|run| run.len() > 1) {
        let outline: Vec<(f64, f64)> = (run.iter().map(|&(x, low, _)| (x, low)))
            .chain(run.iter().rev().map(|&(x, _, high)| (x, high)))
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(outline, color.filled())))?;
    }
    Ok(())
}

/// One series in its colour and stroke.
fn draw_series<DB, X, Y>(
    chart: &mut ChartContext<DB, Cartesian2d<X, Y>>,
    series: &Series,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let color = series.colour();
    let points = series.points.iter().copied();
    match series.style {
        // A line of one point (a figure measured at one size only) is its marker.
        _ if series.points.len() == 1 => {
            chart.draw_series(points.map(|p| lone_marker(p, series.style, color)))?;
        }
        Stroke::Line => {
            chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
        }
        Stroke::Dashed => {
            chart.draw_series(DashedLineSeries::new(points, 9, 6, color.stroke_width(2)))?;
        }
        Stroke::Dotted => {
            chart.draw_series(DashedLineSeries::new(points, 2, 4, color.stroke_width(2)))?;
        }
        Stroke::Band => {
            chart.draw_series(LineSeries::new(points, color.mix(0.55).stroke_width(6)))?;
        }
        Stroke::Dots => {
            chart.draw_series(points.map(|p| Circle::new(p, 3, color.filled())))?;
        }
    }
    Ok(())
}

/// The marker of a series of one point: a filled disc for a solid line or dots, a ring for
/// a dashed or dotted line, so that the two stay apart as their lines do.
fn lone_marker<C>(at: C, style: Stroke, color: RGBAColor) -> Circle<C, i32> {
    match style {
        Stroke::Dashed | Stroke::Dotted => Circle::new(at, 5, color.stroke_width(2)),
        _ => Circle::new(at, 5, color.filled()),
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

/// The legend under a panel: each series' swatch, drawn as the series is, and its label.
fn draw_legend<DB: DrawingBackend>(
    panel: &Panel,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let text = (FONT, LEGEND_SIZE)
        .into_font()
        .into_text_style(area)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (row, entries) in legend_rows(panel).iter().enumerate() {
        let y = (row as u32 * LEGEND_ROW + LEGEND_ROW / 2) as i32;
        let mut x = 116.0; // under the plot, right of the y axis's labels
        for &i in entries {
            let series = &panel.series[i];
            let color = series.colour();
            let left = x as i32;
            let segment = |from: i32, to: i32, width: u32| {
                PathElement::new(
                    vec![(left + from, y), (left + to, y)],
                    color.stroke_width(width),
                )
            };
            match series.style {
                _ if series.points.len() == 1 => {
                    area.draw(&lone_marker((left + SWATCH / 2, y), series.style, color))?;
                }
                Stroke::Line => area.draw(&segment(0, SWATCH, 2))?,
                Stroke::Dashed => {
                    for (from, to) in [(0, 9), (15, 24), (30, SWATCH)] {
                        area.draw(&segment(from, to.min(SWATCH), 2))?;
                    }
                }
                Stroke::Dotted => {
                    for from in (0..SWATCH).step_by(6) {
                        area.draw(&segment(from, from + 2, 2))?;
                    }
                }
                Stroke::Band => area.draw(&PathElement::new(
                    vec![(left, y), (left + SWATCH, y)],
                    color.mix(0.55).stroke_width(6),
                ))?,
                Stroke::Dots => {
                    for at in [6, 15, 24] {
                        area.draw(&Circle::new((left + at, y), 3, color.filled()))?;
                    }
                }
            }
            area.draw(&Text::new(
                series.label.clone(),
                (left + SWATCH + 8, y),
                text.clone(),
            ))?;
            x += entry_width(&series.label);
        }
    }
    Ok(())
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
        let (row, anchor) = place_label(&mut rows, 690, 150, 700);
        assert!(matches!(anchor, HPos::Right));
        assert_eq!(row, 0, "it ends at 690, clear of the label ending at 450");
    }
}
