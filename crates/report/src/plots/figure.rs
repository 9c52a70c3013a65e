//! A figure: panels stacked vertically sharing a logarithmic x axis, drawn with plotters on
//! any backend (SVG text or an RGB bitmap), so both files come from one description.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::sync::Once;

/// What to draw: a title, an x axis (always logarithmic, base 2) and panels under each other.
pub(crate) struct Figure {
    pub title: String,
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
    /// The corner where the data leaves room for the legend.
    pub legend: Corner,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Corner {
    UpperLeft,
    UpperRight,
    LowerLeft,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Log,
    Linear,
}

pub(crate) struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub style: Stroke,
    /// Index into the palette; series that belong together share it.
    pub color: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stroke {
    Line,
    Dashed,
    Dots,
}

/// Width of a figure and height of each panel, in pixels.
pub(crate) const WIDTH: u32 = 1100;
pub(crate) const PANEL_HEIGHT: u32 = 480;
const FONT: &str = "sans-serif";

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

/// The font every piece of text is drawn with, bundled so that a machine without fonts draws
/// the same plots.
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let bytes = include_bytes!("../../fonts/DejaVuSansMono.ttf");
        // The bundled font is a valid TrueType file; a failure here is a build defect.
        assert!(
            plotters::style::register_font(FONT, FontStyle::Normal, bytes).is_ok(),
            "the bundled font does not load"
        );
    });
}

impl Figure {
    pub(crate) fn height(&self) -> u32 {
        PANEL_HEIGHT * self.panels.len().max(1) as u32 + 40
    }

    /// Draws the figure on `root`.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        register_font();
        root.fill(&WHITE)?;
        let body = root.titled(&self.title, (FONT, 22))?;
        let areas = body.split_evenly((self.panels.len().max(1), 1));
        let (x_min, x_max) = self.x_range();
        for (panel, area) in self.panels.iter().zip(&areas) {
            let (y_min, y_max) = panel.y_range();
            let x = (x_min..x_max).log_scale().base(2.0);
            match panel.y_scale {
                Scale::Log => draw_panel(self, panel, area, x, (y_min..y_max).log_scale())?,
                Scale::Linear => {
                    let y: RangedCoordf64 = (y_min..y_max).into();
                    draw_panel(self, panel, area, x, y)?
                }
            }
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
    fn y_range(&self) -> (f64, f64) {
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
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
        .x_label_area_size(42)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)?;
    let x_format = figure.x_format;
    let y_format = panel.y_format;
    chart
        .configure_mesh()
        .x_desc(figure.x_label.as_str())
        .y_desc(panel.y_label.as_str())
        .x_label_formatter(&|v| x_format(*v))
        .y_label_formatter(&|v| y_format(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .draw()?;

    let y_top = chart.y_range().end;
    let y_bottom = chart.y_range().start;
    for (x, label) in &panel.marks {
        let grey = RGBColor(120, 120, 120);
        chart.draw_series(DashedLineSeries::new(
            [(*x, y_bottom), (*x, y_top)],
            4,
            4,
            grey.stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            label.clone(),
            (*x, y_top),
            (FONT, 12).into_font().color(&grey),
        )))?;
    }

    for series in &panel.series {
        let color = PALETTE[series.color % PALETTE.len()];
        let points = series.points.iter().copied();
        let line = move |(x, y): (i32, i32)| {
            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
        };
        match series.style {
            Stroke::Line => chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))?
                .label(series.label.as_str())
                .legend(line),
            Stroke::Dashed => chart
                .draw_series(DashedLineSeries::new(points, 8, 5, color.stroke_width(2)))?
                .label(series.label.as_str())
                .legend(line),
            Stroke::Dots => chart
                .draw_series(points.map(|p| Circle::new(p, 3, color.filled())))?
                .label(series.label.as_str())
                .legend(move |(x, y)| Circle::new((x + 9, y), 3, color.filled())),
        };
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .position(match panel.legend {
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
            Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
        })
        .draw()?;
    Ok(())
}
